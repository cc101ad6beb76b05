#!/bin/bash
# SPDX-License-Identifier: MIT
# fault_enospc.sh - running out of space: on a tiny ext4 with room for less
# than a second copy, defrag (both paths) and convert (space reserved up
# front, and not reserved so that ENOSPC strikes in the middle of the copy)
# fail with a clear message, the original is intact, no temporary remains.
. "$(dirname "$0")/lib.sh"
mkext4 16
cd "$MNT" || fail "cd"
fragment 24 131072 f g
rm g
avail=$(( $(stat -f -c '%a' .) * 4096 ))
fallocate -l $(( avail - 1024 * 1024 )) filler || fail "fallocate filler"
sum=$(md5sum <f) meta0=$(meta f)

for m in move copy; do
	expect_rc 1 "$ACCEL" defrag --method $m f
	grep -q "^accel defrag: f: cannot .*: No space left on device (the file is intact" <<<"$OUT" ||
		fail "$m: $OUT"
	[ "$(md5sum <f)" = "$sum" ] && [ "$(meta f)" = "$meta0" ] || fail "$m: f changed"
	no_temps .
done
ok "defrag: ENOSPC reported, original intact, no temporary"

expect_rc 1 "$ACCEL" convert f out
grep -q "No space left on device (IN is intact; nothing was created)" <<<"$OUT" || fail "$OUT"
# the FDL lives outside the full file system: writing it there may itself fail
printf 'FILE\n\tBEST_TRY_CONTIGUOUS no\n' >"$T/nopre.fdl" || fail "write $T/nopre.fdl"
expect_rc 1 "$ACCEL" convert --fdl "$T/nopre.fdl" f out
grep -q "cannot copy the data: No space left on device" <<<"$OUT" || fail "mid-copy: $OUT"
[ ! -e out ] || fail "OUT exists after failure"
expect_rc 1 "$ACCEL" convert --replace --fdl "$T/nopre.fdl" f
grep -q "cannot copy the data: No space left on device (IN is intact, temporary removed)" \
	<<<"$OUT" || fail "$OUT"
[ "$(md5sum <f)" = "$sum" ] || fail "f changed"
no_temps .
ok "convert: ENOSPC up front and in the middle of the copy, nothing left behind"
cd /
