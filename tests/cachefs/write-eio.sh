#!/bin/bash
# SPDX-License-Identifier: MIT
# write-eio.sh MODE: an I/O error on SOURCE's disk reaches the program. SOURCE
# is an ext4 on a loop device whose image lives on cutfs (tests/lib/cutfs.c).
# A writer writes 1 MiB through the mount in 4 KiB writes and fsyncs it
# (which must succeed); then the disk starts failing every write ("eio"),
# the writer writes 1 MiB more, fsyncs and closes. Those bytes cannot be on
# the disk, so write(), fsync or close must report an error, in every write
# mode (MODE: mount options). With sync=relaxed, fsync acknowledges at once
# by contract: the error is reported by an fsync after the background sync
# (flush_interval, 1 s here) has met it, so the writer fsyncs again 2.5 s later.
set -u
mode=${1:?usage: write-eio.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool weio
cfs_python
cfs_cut_disk 64M
cfs_cut_up
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "$mode,pool=$POOL,flush_interval=1"

$PY "$(dirname "$0")/err_writer.py" m/f eio ready go >out 2>&1 &
writer=$!
cfs_eventually 20 test -e ready || fail "the writer's first MiB did not get through: $(cat out)"
cfs_cut_ctl eio
: >go
wait "$writer"
cfs_cut_ctl live
cat out
accel_umount "$PWD/m"
grep -q " reported 1$" out ||
	fail "$mode: 1 MiB written after the disk failed, and neither write, fsync nor close said so"
echo "PASS: $mode: the disk's I/O error reached the program"
