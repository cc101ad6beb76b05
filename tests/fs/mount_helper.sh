#!/bin/bash
# SPDX-License-Identifier: MIT
# mount_helper.sh type|fstab: mounts through mount(8) and Debian's
# mount.fuse3, with the daemon found in PATH:
#   type   mount -t fuse.accelfs SOURCE DIR -o default_permissions
#   fstab  mount --fstab FILE DIR with the line "SOURCE DIR fuse.accelfs defaults 0 0"
# then checks the mount table entry, that data written through DIR lands in
# SOURCE and SOURCE's data is visible, and that umount(8) stops the daemon.
#
# mount(8) runs its helpers without PATH (libmount sanitises the
# environment), so mount.fuse3's "sh -c accelfs ..." searches the shell's
# default PATH.  The test therefore runs in a private mount namespace in which
# a directory holding an accelfs symlink to the build is bound over
# /usr/local/sbin; nothing outside the namespace changes.  The daemon runs
# with its defaults, so a fresh tmpfs over /dev/shm in the namespace holds its
# default pool, which goes with the namespace.
set -u
. "$(dirname "$0")/../lib/mount.sh"
accel_require_fuse
how=${1:?usage: mount_helper.sh type|fstab}
command -v mount.fuse3 >/dev/null || [ -x /sbin/mount.fuse3 ] ||
	skip "mount.fuse3 (package fuse3) is not installed"
if [ -z "${ACCEL_IN_NS:-}" ]; then
	unshare -m --propagation private true 2>/dev/null ||
		skip "unshare -m is not permitted (needed to put accelfs in mount(8)'s PATH)"
	ACCEL_IN_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
trap 'rc=$?; umount /usr/local/sbin 2>/dev/null; (exit $rc); accel_cleanup' EXIT

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt" "$base/bin"
echo "from source" >"$base/src/old"
ACCEL_MNTS="$base/mnt"
ln -s "$ACCELFS" "$base/bin/accelfs"
mkdir -p /usr/local/sbin
mount --bind "$base/bin" /usr/local/sbin || fail "cannot bind $base/bin over /usr/local/sbin"
mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm || fail "cannot mount a private /dev/shm"
[ "$(env -i /bin/sh -c 'command -v accelfs')" = /usr/local/sbin/accelfs ] ||
	fail "accelfs is not first in the default PATH"

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
