#!/bin/bash
# SPDX-License-Identifier: MIT
# ops.sh [ACCELFS-OPTIONS...]: mounts a temporary SOURCE with the given
# options (plus allow_other,default_permissions, which the permission case
# needs), runs ops_compare on the mount against a plain reference directory,
# then checks that SOURCE ended up holding exactly what the reference holds.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${OPS_COMPARE:-}" ] || fail "OPS_COMPARE is not set"

for o in "$@"; do
	case "$o" in
	*backend=uring*)
		[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] ||
			skip "io_uring is disabled by kernel.io_uring_disabled"
		;;
	esac
done

accel_tmpdir
base=$ACCEL_TMP
mkdir -m 755 "$base/src" "$base/mnt" "$base/ref"
accel_mount "$base/src" "$base/mnt" -o allow_other,default_permissions "$@"

rc=0
"$OPS_COMPARE" "$base/mnt" "$base/ref" || rc=1

# What the mount did must be in SOURCE: same names, types, modes, owners,
# file contents (files below 64 MiB; bigfile checks its own data) and xattrs.
tree() {
	(cd "$1" && find . -printf '%p %y %m %U:%G\n' | LC_ALL=C sort &&
		find . -type f -size -64M -print0 | LC_ALL=C sort -z | xargs -0r sha256sum &&
		getfattr -R -h -d -m - -e hex . 2>/dev/null)
}
accel_umount "$base/mnt" || fail "unmount failed"
accel_wait_exit "$ACCEL_PID" 10 || fail "daemon still running after unmount"
if ! diff <(tree "$base/ref") <(tree "$base/src") >"$base/tree.diff"; then
	head -40 "$base/tree.diff"
	fail "SOURCE differs from the reference directory (ref <, src >)"
fi
[ $rc = 0 ] || fail "ops_compare found differences"
echo "PASS: ops_compare and SOURCE match the reference ($*)"
