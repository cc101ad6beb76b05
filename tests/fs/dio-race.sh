#!/bin/bash
# SPDX-License-Identifier: MIT
# dio-race.sh [MOUNT-OPTIONS]: a buffered read after a direct write has
# completed sees the write, while another thread reads the range through the
# page cache all along (issue 28; xfstests generic/451): asynchronous
# O_DIRECT writes (Linux AIO), plain ones, and asynchronous ones through a
# descriptor given O_DIRECT by fcntl (tests/fs/dio_race.c). Before the fix,
# the default mount served about a third of the reads after an AIO write
# from stale pages.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${DIO_RACE:-}" ] || fail "DIO_RACE is not set (run through meson test)"
accel_tmpdir
base=$ACCEL_TMP
mkdir -p "$base/src" "$base/mnt"
accel_mount "$base/src" "$base/mnt" ${1:+-o "$1"}
rc=0
for how in aio sync setfl; do
	"$DIO_RACE" "$how" "$base/mnt/$how" "${DIO_RACE_ITERS:-1000}" || rc=$?
	[ $rc = 77 ] && skip "$how: no O_DIRECT or AIO through the mount"
	[ $rc = 1 ] && fail "${1:-default}: $how: a buffered read after a direct write was stale"
	[ $rc = 0 ] || fail "${1:-default}: $how: dio_race exited $rc"
done
echo "PASS: ${1:-default}: no stale buffered read after a direct write"
