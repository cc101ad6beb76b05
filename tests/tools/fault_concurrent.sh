#!/bin/bash
# SPDX-License-Identifier: MIT
# fault_concurrent.sh - a file appended to or rewritten while the copy path
# defragments it: the defrag of that file aborts, the new data is kept, no
# temporary remains. Detected by the read lease (the writer's open breaks
# it) and, with leases disabled (ACCEL_TEST_NO_LEASE=1), by the size/mtime/
# ctime check right before the rename. ACCEL_TEST_PAUSE_BEFORE_SWAP holds
# accel between the verified copy and the swap so the write lands there;
# ACCEL_TEST_PAUSE_BEFORE_VERIFY between the copy and its verification.
. "$(dirname "$0")/lib.sh"
mkext4 128
cd "$MNT" || fail "cd"

# run_case NAME EXPECTED-MESSAGE WRITER-COMMAND [env...]: the writer runs
# once the temporary exists, while accel copies, verifies or waits to swap
# (ACCEL_TEST_PAUSE_BEFORE_SWAP, or an env given here)
run_case() {
	local name=$1 want=$2 writer=$3 pid rc
	shift 3
	rm -f f
	fragment 16 65536 f g
	cp f "$T/expect"
	env ACCEL_TEST_PAUSE_BEFORE_SWAP=10 "$@" "$ACCEL" defrag --method copy f >"$T/log" 2>&1 &
	pid=$!
	wait_temp .
	eval "$writer"
	wait $pid
	rc=$?
	[ $rc -eq 1 ] || fail "$name: exit $rc: $(cat "$T/log")"
	grep -q "$want" "$T/log" || fail "$name: $(cat "$T/log")"
	cmp -s f "$T/expect" || fail "$name: the new data was lost"
	no_temps .
	ok "$name"
}

run_case "append, lease" "opened for writing while being defragmented; stopped, its data is kept" \
	'echo appended >>f; echo appended >>"$T/expect"'
run_case "rewrite, lease" "opened for writing while being defragmented" \
	'printf XXXX | dd of=f conv=notrunc status=none; printf XXXX | dd of="$T/expect" conv=notrunc status=none'
run_case "append, no lease" "changed while being defragmented; stopped, its data is kept" \
	'echo appended >>f; echo appended >>"$T/expect"' ACCEL_TEST_NO_LEASE=1
run_case "rewrite, no lease" "changed while being defragmented" \
	'printf XXXX | dd of=f conv=notrunc status=none; printf XXXX | dd of="$T/expect" conv=notrunc status=none' \
	ACCEL_TEST_NO_LEASE=1
# The rewrite lands before the copy is verified: the checksums differ because
# the file changed, and that is what is said (it was "cannot verify the copy:
# Input/output error", and the case above said so when its write came early).
run_case "rewrite before the verify, no lease" "changed while being defragmented" \
	'printf XXXX | dd of=f conv=notrunc status=none; printf XXXX | dd of="$T/expect" conv=notrunc status=none' \
	ACCEL_TEST_NO_LEASE=1 ACCEL_TEST_PAUSE_BEFORE_VERIFY=2 ACCEL_TEST_PAUSE_BEFORE_SWAP=0

# A writer that holds the file open before we start: skipped at once.
exec 9>>f
expect_rc 1 "$ACCEL" defrag --method copy f
grep -q "is open for writing by another process; skipped" <<<"$OUT" || fail "$OUT"
exec 9>&-
no_temps .
ok "open writer: skipped"
cd /
