#!/bin/bash
# SPDX-License-Identifier: MIT
# convert.sh - `accel convert` builds OUT as the FDL says (contiguous,
# preallocated, holes kept, mode and accelfs attributes from the FDL, the
# rest of the metadata from IN), never touches IN, refuses to overwrite OUT,
# and `--replace` swaps a verified copy in with nothing left behind.
. "$(dirname "$0")/lib.sh"
mkext4 128
cd "$MNT" || fail "cd"

fragment 24 65536 f g
setfattr -n user.accelfs.global_buffers -v 64 f
setfattr -n user.note -v kept f
setfacl -m u:1234:r f
touch -d '2001-02-03 04:05:06.123456789' f
before_in=$(stat -c '%i %s %x %y %z' f; md5sum <f)
before_in=$(stat -c '%i %s %x %y %z' f; md5sum <f) # now that atime is updated
"$ACCEL" analyze --fdl f >/dev/null || fail "analyze --fdl"
sed -i -e 's/^global_buffers = .*/global_buffers = "128"/' -e 's/^mode = .*/mode = 0600/' \
	-e 's/^preallocate = .*/preallocate = 4M/' f.fdl
echo 'readahead_max = 1M' >>f.fdl
expect_rc 0 "$ACCEL" convert --fdl f.fdl f out
# (md5sum reads f after stat, so its atime update does not hide one of ours)
[ "$before_in" = "$(stat -c '%i %s %x %y %z' f; md5sum <f)" ] || fail "IN was touched"
cmp f out || fail "data differs"
[ "$(extents out)" -eq 1 ] || fail "out has $(extents out) extents"
[ "$(stat -c %a out)" = 600 ] || fail "mode not from FDL"
[ "$(getfattr --only-values -n user.accelfs.global_buffers out)" = 128 ] || fail "attr"
[ "$(getfattr --only-values -n user.accelfs.readahead_max out)" = 1M ] || fail "new attr"
[ "$(getfattr --only-values -n user.note out)" = kept ] || fail "other xattr lost"
getfacl -p out 2>/dev/null | grep -q '^user:1234:r--' || fail "ACL lost"
[ "$(stat -c %y out)" = "$(stat -c %y f)" ] || fail "mtime"
[ "$(stat -c %b out)" -ge $((4 * 1024 * 1024 / 512)) ] || fail "preallocation: $(stat -c %b out)"
[ "$(stat -c %s out)" = "$(stat -c %s f)" ] || fail "size changed by preallocation"
ok "convert --fdl: contiguous, preallocated, FDL metadata applied, IN untouched"

echo other >exists
expect_rc 1 "$ACCEL" convert f exists
grep -q "exists: already exists; not overwritten" <<<"$OUT" || fail "$OUT"
[ "$(cat exists)" = other ] || fail "OUT overwritten"
ok "existing OUT is not overwritten"

dd if=/dev/urandom of=sparse bs=64k count=2 seek=10 status=none
truncate -s 8M sparse
expect_rc 0 "$ACCEL" convert sparse sparse.out
cmp sparse sparse.out || fail "sparse data"
[ "$(stat -c %b sparse.out)" -le 512 ] || fail "holes filled: $(stat -c %b sparse.out) blocks"
ok "holes preserved"

sum=$(md5sum <g) # first: reading may update atime (relatime)
ino=$(stat -c %i g)
want=$(meta g)
expect_rc 0 "$ACCEL" convert --replace g
# metadata first: the new inode's ctime is recent, so under relatime any read
# (md5sum) updates its atime
[ "$(meta g)" = "$want" ] || fail "--replace metadata: $(meta g) vs $want"
[ "$(md5sum <g)" = "$sum" ] || fail "--replace data"
[ "$(stat -c %i g)" != "$ino" ] || fail "--replace kept the inode?"
[ "$(extents g)" -eq 1 ] || fail "--replace: $(extents g) extents"
no_temps .
ok "convert --replace"

ln g g.link
expect_rc 1 "$ACCEL" convert --replace g
grep -q "hard links" <<<"$OUT" || fail "$OUT"
no_temps .
ok "convert --replace refuses hard-linked files"
cd /
