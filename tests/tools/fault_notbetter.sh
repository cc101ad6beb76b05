#!/bin/bash
# SPDX-License-Identifier: MIT
# fault_notbetter.sh - when free space is so fragmented that the new layout
# would not have fewer extents, both paths keep the original untouched, and
# convert with an FDL that says CONTIGUOUS yes fails without creating OUT.
. "$(dirname "$0")/lib.sh"
mkext4 16
cd "$MNT" || fail "cd"
fragment 3 65536 f g
rm g
# fill the rest (root may use the reserved blocks too), then free every
# other block: only 4 KiB holes remain
dd if=/dev/zero of=filler bs=64k 2>/dev/null
sync
size=$(stat -c %s filler)
for ((o = 0; o < size; o += 8192)); do fallocate -p -o $o -l 4096 filler; done
sync
sum=$(md5sum <f) n=$(extents f) ino=$(stat -c %i f)
[ "$n" -ge 2 ] || skip "could not fragment f"
for m in move copy; do
	expect_rc 0 "$ACCEL" defrag --method $m f
	grep -q "not better, original kept" <<<"$OUT" || fail "$m: $OUT"
	[ "$(md5sum <f)" = "$sum" ] && [ "$(extents f)" = "$n" ] && [ "$(stat -c %i f)" = "$ino" ] ||
		fail "$m: original not kept"
	no_temps .
done
ok "not better: original kept ($n extents)"

printf 'FILE\n\tCONTIGUOUS yes\n' >"$T/contig.fdl"
for args in "f out" "--replace f"; do
	# shellcheck disable=SC2086 # the words are the arguments
	expect_rc 1 "$ACCEL" convert --fdl "$T/contig.fdl" $args
	grep -Eq "^accel convert: f: FDL CONTIGUOUS yes: the copy has [0-9]+ extents, the fewest the file system can give is 1 \(one per data run\); nothing was (created|replaced) \(IN is intact\)$" <<<"$OUT" ||
		fail "CONTIGUOUS yes: $OUT"
	[ ! -e out ] && [ "$(md5sum <f)" = "$sum" ] && [ "$(stat -c %i f)" = "$ino" ] ||
		fail "CONTIGUOUS yes: something changed"
	no_temps .
done
ok "FDL CONTIGUOUS yes: refused where the copy cannot be contiguous"
cd /
