#!/bin/bash
# SPDX-License-Identifier: MIT
# defrag.sh - `accel defrag` on fragmented files built on a loop-mounted ext4
# by interleaved appends with syncs between: extents go down to one (all the
# free space of a fresh image allows), data stays byte-identical, metadata
# identical, the inode kept on the ext4 path; the copy path, -r, --dry-run,
# --min-extents, --hot-first, hard links, and "not better: original kept".
. "$(dirname "$0")/lib.sh"
mkext4 256
cd "$MNT" || fail "cd"
mkdir -p d/sub
fragment 32 65536 a b c d/x d/sub/y
setfattr -n user.accelfs.readahead_max -v 4M a
setfacl -m u:1234:rw a
chown 12:34 b
touch -d '2001-02-03 04:05:06.123456789' a b c
ln c c.link
md5sum a b c d/x d/sub/y >"$T/sums"
for f in a b c; do
	[ "$(extents $f)" -ge 16 ] || fail "$f is not fragmented: $(extents $f)"
done

snap=$(for f in a b c d/x; do meta $f; stat -c '%i %z' $f; done)
expect_rc 0 "$ACCEL" defrag --dry-run -r .
grep -q "would defragment" <<<"$OUT" || fail "$OUT"
[ "$(for f in a b c d/x; do meta $f; stat -c '%i %z' $f; done)" = "$snap" ] ||
	fail "--dry-run changed something"
ok "--dry-run changes nothing"

ma=$(meta a) ia=$(stat -c %i a) mc=$(meta c) ic=$(stat -c %i c)
expect_rc 0 "$ACCEL" defrag a c
grep -q "^a: [0-9]* -> 1 extents, .* (ext4 move)$" <<<"$OUT" || fail "$OUT"
grep -q "^total: 2 files: 2 defragmented" <<<"$OUT" || fail "$OUT"
[ "$(extents a)" -eq 1 ] && [ "$(extents c)" -eq 1 ] || fail "extents after: $(extents a) $(extents c)"
[ "$(stat -c %i a)" = "$ia" ] && [ "$(stat -c %i c)" = "$ic" ] || fail "inode changed"
[ "$(meta a)" = "$ma" ] || fail "metadata of a: $(meta a) vs $ma"
[ "$(meta c)" = "$mc" ] || fail "metadata of c: $(meta c) vs $mc"
[ "$(stat -c %h c)" = 2 ] || fail "hard link lost"
md5sum --quiet -c "$T/sums" || fail "data changed"
ok "ext4 online path: 1 extent, same data, metadata and inode, hard links kept"

mb=$(meta b) ib=$(stat -c %i b)
expect_rc 0 "$ACCEL" defrag --method copy b
grep -q "^b: [0-9]* -> 1 extents, .* (copy)$" <<<"$OUT" || fail "$OUT"
[ "$(extents b)" -eq 1 ] || fail "b: $(extents b) extents"
[ "$(meta b)" = "$mb" ] || fail "metadata of b: $(meta b) vs $mb"
[ "$(stat -c %i b)" != "$ib" ] || fail "copy path should make a new inode"
md5sum --quiet -c "$T/sums" || fail "data changed"
no_temps .
ok "copy path: 1 extent, same data and metadata, no temporaries"

expect_rc 0 "$ACCEL" defrag --min-extents 100000 -r d
grep -q "left alone" <<<"$OUT" && ! grep -q "^d.* -> " <<<"$OUT" || fail "--min-extents: $OUT"
ln d/sub/y d/sub/y.link
expect_rc 1 "$ACCEL" defrag --method copy d/sub/y
grep -q "d/sub/y: has several hard links; skipped" <<<"$OUT" || fail "$OUT"
rm d/sub/y.link
expect_rc 0 "$ACCEL" defrag --hot-first -r d
grep -q "^total: .* 0 failed" <<<"$OUT" || fail "$OUT"
for f in d/x d/sub/y; do [ "$(extents $f)" -eq 1 ] || fail "$f: $(extents $f) extents"; done
md5sum --quiet -c "$T/sums" || fail "data changed"
expect_rc 0 "$ACCEL" defrag --hot-first c b a
[ "$(grep -o '^[abc]:' <<<"$OUT" | tr -d '\n')" = "c:b:a:" ] || fail "hot order: $OUT"
ok "-r, --min-extents, hard links on the copy path, --hot-first (all scores 0: given order)"
cd /
