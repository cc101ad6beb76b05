#!/bin/bash
# SPDX-License-Identifier: MIT
# write-edquot.sh MODE: a quota on SOURCE running out reaches the program as
# EDQUOT (issue 27). SOURCE is quotafs (tests/lib/quotafs.c), a FUSE file
# system over a directory whose writes fail with EDQUOT once 16 MiB are
# written, as a disk quota would (write-quota.sh does the same with a real
# ext4 user quota, where the kernel can). A writer fills a file through the
# mount in write mode MODE (mount options) with 4 KiB writes, fsync'ing
# every MiB, until write() fails: every byte write() accepted is on SOURCE,
# or the fsync or close after it reports the error
# (tests/cachefs/err_writer.py), and EDQUOT is what was reported.
set -u
mode=${1:?usage: write-edquot.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool wedq
cfs_python
[ -n "${QUOTAFS:-}" ] && [ -x "$QUOTAFS" ] || fail "QUOTAFS is not set (run through meson test)"
QPID=""
quotafs_gone() {
	mountpoint -q "$PWD/src" && fusermount3 -u "$PWD/src"
	[ -n "$QPID" ] && wait "$QPID" 2>/dev/null
	true
}
cfs_below quotafs_gone
mkdir disk src m
"$QUOTAFS" "$PWD/disk" "$PWD/src" -s -f 2>quotafs.log &
QPID=$!
accel_wait_mounted "$PWD/src" "$QPID" || fail "quotafs did not mount: $(cat quotafs.log)"
printf 'limit %d' $((16 << 20)) >src/.quotafs-ctl || fail "quotafs refused its limit"
# a FUSE SOURCE would turn shared mode on (shared=auto); the modes under test are local ones
accel_mount "$PWD/src" "$PWD/m" -o "$mode,pool=$POOL,shared=off"
$PY "$(dirname "$0")/err_writer.py" m/big fill >out
cat out
accel_umount "$PWD/m"
cfs_fill_verdict "$mode" out disk/big "Disk quota exceeded"
echo "PASS: $mode: every accepted byte is on SOURCE, or EDQUOT was reported"
