#!/bin/bash
# SPDX-License-Identifier: MIT
# mount_helper.sh type|fstab: mounts through mount(8) and Debian's
# mount.fuse3, with the daemon found in PATH:
#   type   mount -t fuse.accelfs SOURCE DIR -o default_permissions
#   fstab  mount --fstab FILE DIR with the line "SOURCE DIR fuse.accelfs defaults 0 0"
# then checks the mount table entry, that data written through DIR lands in
# SOURCE and SOURCE's data is visible, and that umount(8) stops the daemon.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
how=${1:?usage: mount_helper.sh type|fstab}
command -v mount.fuse3 >/dev/null || [ -x /sbin/mount.fuse3 ] ||
	skip "mount.fuse3 (package fuse3) is not installed"

base=$(accel_tmpdir)
mkdir "$base/src" "$base/mnt"
echo "from source" >"$base/src/old"
ACCEL_MNTS="$base/mnt"
export PATH="$(dirname "$ACCELFS"):$PATH"
[ "$(command -v accelfs)" = "$ACCELFS" ] || fail "accelfs in PATH is not $ACCELFS"

rc=0
case $how in
type)
	timeout 20 mount -t fuse.accelfs "$base/src" "$base/mnt" -o default_permissions \
		2>"$base/err" || rc=$?
	;;
fstab)
	printf '%s %s fuse.accelfs defaults 0 0\n' "$base/src" "$base/mnt" >"$base/fstab"
	timeout 20 mount --fstab "$base/fstab" "$base/mnt" 2>"$base/err" || rc=$?
	;;
*) fail "unknown variant $how" ;;
esac
cat "$base/err"
[ $rc = 0 ] || fail "mount exited $rc"
accel_is_mounted "$base/mnt" || fail "mount returned but $base/mnt is not mounted"
ACCEL_PIDS=$(accel_daemon_pids "$base/mnt")
[ -n "$ACCEL_PIDS" ] || fail "no accelfs process serves $base/mnt"
fstype=$(awk -v m="$base/mnt" '$2 == m { print $3 }' /proc/self/mounts)
[ "$fstype" = fuse.accelfs ] || fail "file system type is '$fstype', expected fuse.accelfs"
src=$(awk -v m="$base/mnt" '$2 == m { print $1 }' /proc/self/mounts)
[ "$src" = "$base/src" ] || fail "mount source is '$src', expected $base/src"

[ "$(cat "$base/mnt/old")" = "from source" ] || fail "SOURCE's file is not visible"
echo "through the mount" >"$base/mnt/new"
sync "$base/mnt/new"
[ "$(cat "$base/src/new")" = "through the mount" ] || fail "written data is not in SOURCE"

umount "$base/mnt" || fail "umount failed"
for p in $ACCEL_PIDS; do
	accel_wait_exit "$p" 10 || fail "daemon $p still running after umount"
done
! accel_is_mounted "$base/mnt" || fail "still mounted after umount"
echo "PASS: mount via $how"
