#!/bin/bash
# SPDX-License-Identifier: MIT
# convert.sh - `accel convert` builds OUT as the FDL says (contiguous,
# preallocated, holes kept, mode and accelfs attributes from the FDL, the
# rest of the metadata from IN), never touches IN, refuses to overwrite OUT,
# and `--replace` swaps a verified copy in with nothing left behind. FDL:
# what analyze --fdl writes converts back to the same layout and the same
# FDL; EXTENSION reserves past the end; RECORD FORMAT fixed wants whole
# records; the older INI form still works, with a one-line note.
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
grep -q '^	GLOBAL_BUFFERS ' f.fdl && grep -q '^	MODE ' f.fdl && grep -q '^	ALLOCATION ' f.fdl &&
	[ "$(tail -n 2 f.fdl | head -n 1)" = ACCELFS ] || fail "analyze --fdl: $(cat f.fdl)"
sed -i -e 's/^\tGLOBAL_BUFFERS .*/\tGLOBAL_BUFFERS 128/' -e 's/^\tMODE .*/\tMODE 0600/' \
	-e 's/^\tALLOCATION .*/\tALLOCATION 8192/' f.fdl
printf '\treadahead_max "1M"   ! added by hand\n' >>f.fdl
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
rm g.link

# Round trip: the FDL of a fragmented file with space reserved past its end
# builds a file of the same layout, whose own FDL says the same.
fragment 16 65536 h i
fallocate -n -o 1M -l 1M h
setfattr -n user.accelfs.deferred_write -v on h
chown 12:34 h
"$ACCEL" analyze --fdl h >/dev/null || fail "analyze --fdl h"
expect_rc 0 "$ACCEL" convert --fdl h.fdl h h2
"$ACCEL" analyze --fdl h2 >/dev/null || fail "analyze --fdl h2"
# all but the comments, TITLE, IDENT and NAME (the file's name)
same() { grep -v '^!\|^TITLE\|^IDENT\|^	NAME ' "$1"; }
[ "$(same h.fdl)" = "$(same h2.fdl)" ] || fail "round trip: $(diff <(same h.fdl) <(same h2.fdl))"
grep -q "^	ALLOCATION              4096$" h2.fdl || fail "2 MiB reserved: $(cat h2.fdl)"
# (h's block count also holds its extent tree's block)
[ "$(stat -c '%s %u %g' h2)" = "$(stat -c '%s %u %g' h)" ] && [ "$(stat -c %b h2)" = 4096 ] ||
	fail "layout: $(stat -c '%s %b %u %g' h h2)"
[ "$(extents h2)" = 1 ] || fail "h2 has $(extents h2) extents"
cmp h h2 || fail "h2's data"
ok "round trip: analyze --fdl, convert --fdl, analyze --fdl: same FDL, same layout"

# EXTENSION: one extension reserved past the end; RECORD FORMAT fixed: whole records
printf 'FILE\n\tEXTENSION 2048 ! 1 MiB\nRECORD\n\tFORMAT fixed\n\tSIZE 4096\n' >ext.fdl
expect_rc 0 "$ACCEL" convert --fdl ext.fdl h ext
[ "$(stat -c %s ext)" = "$(stat -c %s h)" ] && [ "$(stat -c %b ext)" -ge $((2048 + 2048)) ] ||
	fail "EXTENSION: $(stat -c '%s %b' ext)"
head -c 1000 /dev/urandom >odd
printf 'RECORD\n\tFORMAT fixed\n\tSIZE 120\n' >rec.fdl
expect_rc 1 "$ACCEL" convert --fdl rec.fdl odd odd2
expect_eq "fixed records" "$OUT" "accel convert: odd: has 1000 bytes, not a whole number of the FDL's fixed records of 120 bytes (RECORD FORMAT fixed, SIZE 120); nothing was done"
[ ! -e odd2 ] || fail "odd2 created"
ok "EXTENSION reserves past the end; RECORD FORMAT fixed checks whole records"

# the older INI form: still read, with a one-line note
printf '# old\n[allocation]\npreallocate = 2M\n[ownership]\nmode = 0604\n[accelfs]\nsync = relaxed\n' >old.fdl
expect_rc 0 "$ACCEL" convert --fdl old.fdl odd odd3
grep -qx "accel convert: old.fdl: note: the older \[section\] form, read as before; 'accel analyze --fdl' writes OpenVMS FDL now (docs/defrag.md)" <<<"$OUT" ||
	fail "no note: $OUT"
[ "$(stat -c %a odd3)" = 604 ] && [ "$(stat -c %b odd3)" -ge 4096 ] &&
	[ "$(getfattr --only-values -n user.accelfs.sync odd3)" = relaxed ] || fail "old form not applied"
ok "the older INI form still works, with a one-line note"
cd /
