#!/bin/bash
# SPDX-License-Identifier: MIT
# write-erofs.sh MODE: SOURCE turning read-only under a writer reaches the
# program (issue 27: EROFS). SOURCE is an ext4 mounted errors=remount-ro on a
# loop device. A writer writes 1 MiB through the mount in 4 KiB writes and
# fsyncs it (which must succeed); then ext4 is told it found an error
# (/sys/fs/ext4/DEV/trigger_fs_error) and remounts itself read-only, the
# writer writes 1 MiB more, fsyncs, fsyncs again 2.5 s later (sync=relaxed
# reports from its background sync) and closes. Those bytes cannot reach
# SOURCE, so write(), fsync or close must report an error, EROFS, in every
# write mode (MODE: mount options).
set -u
mode=${1:?usage: write-erofs.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool werofs
cfs_python
CFS_EXT4_MOUNT_OPTS=errors=remount-ro cfs_ext4_src 64M || skip "$CFS_WHY"
trigger=/sys/fs/ext4/$(basename "$CFS_LOOP")/trigger_fs_error
[ -w "$trigger" ] || skip "this kernel's ext4 has no $trigger"
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "$mode,pool=$POOL,flush_interval=1"

$PY "$(dirname "$0")/err_writer.py" m/f eio ready go >out 2>&1 &
writer=$!
# the writer waits for "go": it must not outlive a failure here
cfs_eventually 20 test -e ready ||
	{ kill "$writer"; fail "the writer's first MiB did not get through: $(cat out)"; }
echo 1 >"$trigger"
# newer kernels keep "rw" and add "emergency_ro"
cfs_eventually 10 grep -E -q " $PWD/src ext4 (ro,|.*emergency_ro)" /proc/mounts ||
	{ kill "$writer"; fail "ext4 did not remount itself read-only: $(grep " $PWD/src " /proc/mounts)"; }
: >go
wait "$writer"
cat out
accel_umount "$PWD/m"
grep -q " reported 1$" out ||
	fail "$mode: 1 MiB written after SOURCE turned read-only, and neither write, fsync nor close said so"
grep -q "Read-only file system" out || fail "$mode: the error reported was not EROFS: $(cat out)"
echo "PASS: $mode: SOURCE turning read-only reached the program as EROFS"
