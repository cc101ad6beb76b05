#!/bin/bash
# SPDX-License-Identifier: MIT
# special.sh - a FIFO, a character device or a socket given to a subcommand
# that reads files: each returns at once (never blocks on the FIFO, never
# streams /dev/zero) with exit 1 and one line naming the path and saying
# "not a regular file" (exit 2 for an FDL, as for any unusable FDL); a
# directory says "Is a directory".
# $1: accel; $2: the pool_workload helper (it makes warm's pool: tools never do).
. "$(dirname "$0")/lib.sh"

POOL=/accel-test-special-$$ # warm's pool, never the host's default
SEGMENTS+=("$POOL")
echo seed >"$T/seed"
"${2:?usage: $0 accel pool_workload}" "$POOL" 16 4096 "$T/seed:0:1:0" >/dev/null ||
	fail "cannot make the pool $POOL"
mkfifo "$T/fifo" || fail "mkfifo"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/sock" ||
	fail "cannot make a socket"
mkdir "$T/dir"
echo "data" >"$T/file"

# run_bounded RC CMD...: like expect_rc, but a hang is a failure, not a stuck suite.
run_bounded() {
	local want=$1 rc=0
	shift
	OUT=$(timeout 10 "$@" 2>&1) || rc=$?
	[ $rc != 124 ] || fail "$* blocked (killed after 10 s)"
	[ $rc = "$want" ] || fail "$*: exit $rc, expected $want: $OUT"
}

for p in "$T/fifo" /dev/zero "$T/sock"; do
	for cmd in analyze defrag; do
		run_bounded 1 "$ACCEL" $cmd "$p"
		grep -q "$p.*not a regular file" <<<"$OUT" || fail "$cmd $p: $OUT"
	done
	run_bounded 1 "$ACCEL" warm --pool "$POOL" "$p"
	grep -q "$p.*not a regular file" <<<"$OUT" || fail "warm $p: $OUT"
	run_bounded 1 "$ACCEL" convert "$p" "$T/out"
	grep -q "$p.*not a regular file" <<<"$OUT" || fail "convert $p: $OUT"
	[ ! -e "$T/out" ] || fail "convert $p left $T/out"
	run_bounded 2 "$ACCEL" convert --fdl "$p" "$T/file" "$T/out"
	grep -q "$p.*not a regular file" <<<"$OUT" || fail "convert --fdl $p: $OUT"
done
run_bounded 1 "$ACCEL" warm --pool "$POOL" "$T/dir"
grep -q "$T/dir.*Is a directory" <<<"$OUT" || fail "warm DIR: $OUT"
ok "special files refused without blocking"
