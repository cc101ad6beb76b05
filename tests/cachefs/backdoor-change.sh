#!/bin/bash
# SPDX-License-Identifier: MIT
# backdoor-change.sh: changes made to SOURCE behind accelfs's back are seen
# (close-to-open, like NFS), although the pool holds the file's old bytes:
#  - same size, new bytes, new mtime: the next open reads the new bytes;
#  - same size, new bytes, mtime put back (only ctime differs): likewise;
#  - the file replaced by rename (new inode, same size and mtime): likewise;
#  - with -o revalidate=1, a handle kept open sees new bytes within ~1 s.
# kernel_cache=never and zero attribute/entry timeouts, so neither the page
# cache nor a cached lookup can hide what the daemon serves.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool backdoor
opts="kernel_cache=never,attr_timeout=0,entry_timeout=0,pool=$POOL,global_cache=8M"
mkdir m mr
size=$(((1 << 20) + 5))
for f in F G; do
	"$CFSIO" gen src/$f $size || fail "cannot create src/$f"
done
accel_mount "$PWD/src" "$PWD/m" -o "$opts"

# cached FILE: read it through the mount and check the pool now holds it
cached() {
	cmp "m/$1" "src/$1" || fail "m/$1 differs from SOURCE before the change"
	pstat -i "$(file_id "src/$1")" >snap
	[ "$(kv snap resident)" -ge $((size / 65536)) ] ||
		fail "the pool holds only $(kv snap resident) buffers of $1"
}

# scribble FILE: new bytes in place, same size (ctime changes with them)
scribble() {
	dd if=/dev/urandom of="src/$1" bs=4096 count=$((size / 4096)) conv=notrunc status=none ||
		fail "cannot change src/$1"
}

cached F
scribble F
touch -d "@$(($(date +%s) + 7))" src/F
cmp m/F src/F || fail "after a change in SOURCE with a new mtime, reopen read stale bytes"
echo "ok: new bytes and mtime seen at open"

cached F
touch -r src/F stamp
scribble F
touch -r stamp src/F
cmp m/F src/F || fail "after a change in SOURCE with the old size and mtime (ctime differs), reopen read stale bytes"
echo "ok: new bytes with size and mtime unchanged seen at open"

cached F
cp src/F src/F.new && scribble F.new
touch -r src/F src/F.new
old_ino=$(stat -c %i src/F)
mv src/F.new src/F
[ "$(stat -c %i src/F)" != "$old_ino" ] || fail "rename did not give a new inode"
cmp m/F src/F || fail "after SOURCE's F was replaced by rename, reopen read stale bytes"
echo "ok: replacement by rename seen at open"

accel_mount "$PWD/src" "$PWD/mr" -o "$opts,revalidate=1"
cached G
"$CFSIO" reval mr/G src/G 1600 || fail "revalidate=1: an open handle kept reading stale bytes"
echo "PASS: changes behind accelfs's back are seen at open and after revalidate=S"
