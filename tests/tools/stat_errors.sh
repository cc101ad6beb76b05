#!/bin/bash
# SPDX-License-Identifier: MIT
# stat_errors.sh - accel stat and accel monitor when they cannot do their job:
# a missing pool, a garbage shared-memory segment, a pool with a corrupt
# header, a pool the user may not read, bad options and names, a file that
# does not exist, and accel monitor without a terminal. One line each, and
# the exit status of accel(1): 1 unavailable, 2 usage.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

newpool missing
expect_rc 1 "$ACCEL" stat --pool "$POOL"
grep -Eqx "accel stat: pool ${POOL#/}: no such pool \((pools: .*|none exists yet: a mount creates its pool)\)" <<<"$OUT" ||
	fail "missing: $OUT"
expect_rc 1 "$ACCEL" stat --json --pool "$POOL"
grep -Eqx "accel stat: pool ${POOL#/}: no such pool \(.*\)" <<<"$OUT" || fail "missing, --json: $OUT"
[ ! -e "/dev/shm$POOL" ] || fail "accel stat created the missing pool"
ok "missing pool"

newpool garbage
(umask 077 && head -c 65536 /dev/urandom >"/dev/shm$POOL") # ours: only its content is wrong
expect_rc 1 "$ACCEL" stat --pool "$POOL"
# The reason is pool_open_readonly()'s; check its gist, on one line.
one_line() { [ "$(wc -l <<<"$OUT")" -eq 1 ] || fail "more than one line: $OUT"; }
one_line
grep -q "^accel stat: pool $POOL: not an accelfs pool" <<<"$OUT" || fail "garbage: $OUT"
newpool empty
(umask 077 && : >"/dev/shm$POOL")
expect_rc 1 "$ACCEL" stat --pool "$POOL"
one_line
grep -q "^accel stat: pool $POOL: ." <<<"$OUT" || fail "empty segment: $OUT"
ok "garbage and empty segments"

newpool good
echo data >"$T/f"
"$WORKLOAD" "$POOL" 64 4096 "$T/f:0:1:0" >/dev/null || fail "workload"
good=$POOL
newpool corrupt
cp "/dev/shm$good" "/dev/shm$POOL"
# bucket_size is at byte 32 of the header: change it and the checksum no longer holds
printf '\x00\x20' | dd of="/dev/shm$POOL" bs=1 seek=32 conv=notrunc status=none
expect_rc 1 "$ACCEL" stat --pool "$POOL"
one_line
grep -q "^accel stat: pool $POOL: .*corrupt" <<<"$OUT" || fail "corrupt: $OUT"
ok "corrupt header"

expect_rc 2 "$ACCEL" stat --pool a/b
grep -q '^accel stat: pool name "a/b": need "name" or "/name"' <<<"$OUT" || fail "bad name: $OUT"
expect_rc 2 "$ACCEL" stat extra
expect_rc 2 "$ACCEL" stat --bogus
expect_rc 2 "$ACCEL" stat --pool
expect_rc 1 "$ACCEL" stat --pool "$good" --file "$T/nope"
expect_eq "no such file" "$OUT" "accel stat: $T/nope: No such file or directory"
ok "usage errors and a missing --file"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	expect_rc 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$ACCEL" stat --pool "$good"
	expect_eq "permission" "$OUT" "accel stat: pool $good: permission denied (owner uid 0, mode 0600; run as the owner or root)"
	ok "permission denied"
else
	echo "# permission case skipped: needs root and setpriv to become another user"
fi

OUT=$("$ACCEL" monitor --pool "$good" </dev/null 2>&1 >"$T/out")
rc=$?
expect_eq "monitor, not a tty: exit" "$rc" 2
expect_eq "monitor, not a tty" "$OUT" "accel monitor: not a terminal; use 'accel stat' (or 'accel stat --json') instead"
[ ! -s "$T/out" ] || fail "monitor wrote to a non-terminal: $(cat "$T/out")"
ok "monitor on a non-terminal"
