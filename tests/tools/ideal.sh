#!/bin/bash
# SPDX-License-Identifier: MIT
# ideal.sh - "ideal" is the fewest extents the file system can give a file:
# on ext4 with 4 KiB blocks a 260 MiB file spans at least three 128 MiB
# block groups, so analyze counts 3 as its ideal (read from the superblock)
# and defrag leaves a file of 3 extents alone, saying why, instead of
# copying it to find it "not better". (The old tools called 1 extent ideal.)
# The file is allocated with fallocate on a sparse loop image: no data is
# written.
. "$(dirname "$0")/lib.sh"
mkext4 600
cd "$MNT" || fail "cd"

fallocate -l 260M big || fail "fallocate"
expect_rc 0 "$ACCEL" analyze --json big
echo "$OUT" >"$T/j"
n=$(jget "$T/j" 'j[0]["extents"]')
expect_eq "ideal_extents" "$(jget "$T/j" 'j[0]["ideal_extents"]')" 3
[ "$n" -le 3 ] || skip "this kernel's allocator gave the fresh 260 MiB file $n extents, more than 3"
expect_eq "fragmentation" "$(jget "$T/j" 'j[0]["fragmentation"]')" 0.0
expect_rc 0 "$ACCEL" analyze big
grep -qx "  ideal          3 extents (ext4 block groups of 128.0 MiB), already ideal" <<<"$OUT" ||
	fail "analyze text: $OUT"
ok "260 MiB on ext4: ideal 3 extents (block groups of 128 MiB), $n extents is already ideal"

for args in "" "-n"; do
	# shellcheck disable=SC2086 # no argument, or one
	expect_rc 0 "$ACCEL" defrag $args big
	grep -qx "big: $n extents, the fewest the file system can give it (ext4 block groups of 128.0 MiB): left alone" <<<"$OUT" ||
		fail "defrag $args: $OUT"
	grep -q "0 defragmented\|0 to defragment" <<<"$OUT" && grep -q "1 left alone" <<<"$OUT" ||
		fail "defrag $args total: $OUT"
done
no_temps .
ok "defrag leaves it alone with the reason in one line"

# a small file is still held to one extent per data run
head -c 1M /dev/urandom >small
expect_rc 0 "$ACCEL" analyze --json small
expect_eq "small ideal" "$(jget <(echo "$OUT") 'j[0]["ideal_extents"]')" 1
ok "a file within one group: ideal 1"
cd /
