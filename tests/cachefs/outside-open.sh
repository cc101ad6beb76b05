#!/bin/bash
# SPDX-License-Identifier: MIT
# outside-open.sh: a file changed in SOURCE and opened through the mount
# before the kernel looked its name up again (inside entry_timeout, with no
# watcher to report the change) is seen as it now is once the name is looked
# up again after that open closed. In writeback mode the kernel keeps its own
# size, so that open cannot tell it the new one: the node must be retired at
# the next lookup (fuse/inode.c, must_retire), which the open's stamp of the
# new state used to prevent for good (the old size stayed until the file
# changed again).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool outopen
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=off,entry_timeout=2,attr_timeout=2"
printf 'one\n' >src/F
[ "$(stat -c %s m/F)" = 4 ] || fail "m/F does not have 4 bytes to begin with"
cat m/F >/dev/null
printf 'two-two-two\n' >>src/F
# inside entry_timeout: the kernel's name and size are the old ones
cat m/F >/dev/null || fail "cannot read m/F"
sleep 2.5
size=$(stat -c %s m/F)
[ "$size" = 16 ] || fail "m/F has $size bytes after the lookup, SOURCE 16: the old size stayed"
cmp -s m/F src/F || fail "m/F reads $(od -c m/F | head -2), SOURCE holds 16 bytes"
# The same while a reader of the mount still has the file open (as when
# the kernel has not yet sent the RELEASE of the last reader): a reader
# cannot have changed the data, so the change was made outside.
exec 3<m/F
printf 'three\n' >>src/F
cat m/F >/dev/null || fail "cannot read m/F"
exec 3<&-
sleep 2.5
size=$(stat -c %s m/F)
[ "$size" = 22 ] || fail "m/F has $size bytes after the lookup, SOURCE 22: the old size stayed (a reader was open)"
cmp -s m/F src/F || fail "m/F reads $(od -c m/F | head -2), SOURCE holds 22 bytes"
echo "PASS: a change opened before the name's next lookup is seen after it, a reader open or not"
