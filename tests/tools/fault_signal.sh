#!/bin/bash
# SPDX-License-Identifier: MIT
# fault_signal.sh - SIGINT in the middle: exit 130, original intact,
# temporary removed. SIGKILL in the middle: original intact, the temporary
# stays, and the next run removes it because its pid is dead, while a
# temporary of a live process is left alone.
. "$(dirname "$0")/lib.sh"
mkext4 128
cd "$MNT" || fail "cd"
fragment 16 65536 f g
sum=$(md5sum <f) ino=$(stat -c %i f)

ACCEL_TEST_PAUSE_BEFORE_SWAP=30 "$ACCEL" defrag --method copy f >"$T/log" 2>&1 &
pid=$!
wait_temp .
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc: $(cat "$T/log")"
grep -q "f: interrupted; the file is intact, temporary removed" "$T/log" || fail "$(cat "$T/log")"
[ "$(md5sum <f)" = "$sum" ] && [ "$(stat -c %i f)" = "$ino" ] || fail "SIGINT: f changed"
no_temps .
ok "SIGINT: exit 130, original intact, temporary removed"

ACCEL_TEST_PAUSE_BEFORE_SWAP=30 "$ACCEL" defrag --method copy f >"$T/log" 2>&1 &
pid=$!
wait_temp .
kill -KILL $pid
wait $pid
[ -e ".accel-defrag.f.$pid.tmp" ] || fail "expected the killed run's temporary"
[ "$(md5sum <f)" = "$sum" ] && [ "$(stat -c %i f)" = "$ino" ] || fail "SIGKILL: f changed"
touch ".accel-defrag.f.$$.tmp" # ours: a live process
expect_rc 0 "$ACCEL" defrag f
grep -q "removed stale temporary .accel-defrag.f.$pid.tmp" <<<"$OUT" || fail "$OUT"
[ ! -e ".accel-defrag.f.$pid.tmp" ] || fail "stale temporary not removed"
[ -e ".accel-defrag.f.$$.tmp" ] || fail "a live process's temporary was removed"
rm ".accel-defrag.f.$$.tmp"
[ "$(md5sum <f)" = "$sum" ] && [ "$(extents f)" -eq 1 ] || fail "later run"
no_temps .
ok "SIGKILL: original intact; the next run removes the stale temporary"
cd /
