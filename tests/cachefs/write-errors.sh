#!/bin/bash
# SPDX-License-Identifier: MIT
# write-errors.sh MODE: a write error on SOURCE reaches the program (issue
# 27). SOURCE is a 48 MiB ext4; a writer fills it through the mount with
# 4 KiB writes, fsync'ing every MiB, until write() fails. Then fsync and
# close. Every byte write() accepted is on SOURCE, or the fsync or the
# close after it reports the error, in every write mode (MODE: mount
# options). Under the writeback cache the kernel writes the pages back
# later; a failed write-back used to be swallowed: fsync and close returned
# 0 with SOURCE 1 MiB short.
set -u
mode=${1:?usage: write-errors.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool werr
cfs_ext4_src 48M || skip "$CFS_WHY"
chmod 777 src
cfs_python
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "$mode,pool=$POOL"
$PY "$(dirname "$0")/err_writer.py" m/big fill >out
cat out
accel_umount "$PWD/m"
cfs_fill_verdict "$mode" out src/big "No space left on device"
echo "PASS: $mode: every accepted byte is on SOURCE, or the error was reported"
