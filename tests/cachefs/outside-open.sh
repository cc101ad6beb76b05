#!/bin/bash
# SPDX-License-Identifier: MIT
# outside-open.sh: a file changed in SOURCE and opened through the mount
# before the kernel looked its name up again (inside entry_timeout, with no
# watcher to report the change) is seen as it now is once the name is looked
# up again after that open closed. In writeback mode the kernel keeps its own
# size, so that open cannot tell it the new one: the node must be retired at
# the next lookup (fuse/inode.c, must_retire), which the open's stamp of the
# new state used to prevent for good (the old size stayed until the file
# changed again). And a reader's RELEASE that reaches the daemon only after
# SOURCE changed (the daemon busy, here stopped) must not take that change
# for the state the kernel's pages match: the release used to fstat and
# stamp it, so the next lookup kept the old node (a reader changes nothing).
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
# The reader's close is held: its FLUSH and RELEASE wait while the daemon is
# stopped, SOURCE changes, then the daemon goes on.
sleep 600 <m/F &
holder=$!
for _ in $(seq 500); do
	[ "$(readlink "/proc/$holder/fd/0")" = "$PWD/m/F" ] && break
	sleep 0.01
done
[ "$(readlink "/proc/$holder/fd/0")" = "$PWD/m/F" ] || fail "the holder did not open m/F"
kill -STOP "$ACCEL_PID"
kill "$holder"
printf 'four\n' >>src/F
kill -CONT "$ACCEL_PID"
wait "$holder" 2>/dev/null
sleep 2.5
size=$(stat -c %s m/F)
[ "$size" = 27 ] || fail "m/F has $size bytes after the lookup, SOURCE 27: a late RELEASE took the change for ours"
cmp -s m/F src/F || fail "m/F reads $(od -c m/F | head -2), SOURCE holds 27 bytes"
echo "PASS: a change opened before the name's next lookup is seen after it, a reader open or not, a reader's RELEASE late or not"
