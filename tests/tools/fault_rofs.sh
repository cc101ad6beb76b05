#!/bin/bash
# SPDX-License-Identifier: MIT
# fault_rofs.sh - a read-only file system: analyze works, defrag and convert
# --replace fail with "read-only file system" and change nothing.
. "$(dirname "$0")/lib.sh"
mkext4 64
fragment 16 65536 "$MNT/f" "$MNT/g"
mount -o remount,ro "$MNT" || fail "remount ro"
sum=$(md5sum <"$MNT/f")
expect_rc 0 "$ACCEL" analyze "$MNT/f"
for m in auto copy; do
	expect_rc 1 "$ACCEL" defrag --method $m "$MNT/f"
	grep -qi "read-only file system" <<<"$OUT" || fail "$m: $OUT"
done
expect_rc 1 "$ACCEL" convert --replace "$MNT/f"
grep -qi "read-only file system" <<<"$OUT" || fail "$OUT"
[ "$(md5sum <"$MNT/f")" = "$sum" ] || fail "f changed"
ok "read-only file system: clear failure, nothing changed"
