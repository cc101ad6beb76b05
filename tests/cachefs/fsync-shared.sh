#!/bin/bash
# SPDX-License-Identifier: MIT
# fsync-shared.sh: a write-back error reaches every open file's next fsync,
# through kernel passthrough handles that share their inode's daemon
# descriptor (fuse/passthrough.c; issue 27) as on a local file system.
# SOURCE is an ext4 (commit=300, so no journal commit falls in the failing
# moment) on a loop device whose image lives on cutfs (tests/lib/cutfs.c).
# fsync_handles.py opens a file three times, overwrites a block through one
# handle while the disk fails and fdatasyncs it (EIO), then fdatasyncs the
# others and the first again: first directly on SOURCE (the reference, which
# must show each open file reporting the error once), then through a
# passthrough=always mount. A descriptor reports an error once: shared by
# the handles, it would have told only the first.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool fsh
cfs_python
cfs_cut_disk 64M
cfs_cut_up
mount -o remount,commit=300,errors=continue src || skip "cannot remount SOURCE with commit=300"
mkdir m
HELPER=$(dirname "$(readlink -f "$0")")/fsync_handles.py

ref=$($PY "$HELPER" src/ref cut/.cutfs-ctl 2>&1)
echo "directly on SOURCE:" $ref
want="A EIO B EIO R EIO A ok B ok R ok"
[ "$(echo $ref)" = "$want" ] || skip "SOURCE's ext4 does not report the error once per open file here: $ref"

cfs_pt_mount "passthrough=always,pool=$POOL"
got=$($PY "$HELPER" m/f cut/.cutfs-ctl 2>&1)
echo "through the mount:" $got
! grep -q "refused a backing file" "$ACCEL_LOG" || fail "the opens were not passthrough"
[ "$(echo $got)" = "$want" ] ||
	fail "through passthrough handles: $(echo $got), want $want (as directly on SOURCE)"
echo "PASS: each passthrough handle's fdatasync reports the write-back error once"
