#!/bin/bash
# SPDX-License-Identifier: MIT
# seek-data.sh [MOUNT-OPTIONS]: SEEK_DATA and SEEK_HOLE through the mount
# give what they give in a local directory of SOURCE's file system (issue
# 28; xfstests generic/436, 539): a sparse file asked while written and not
# synced (the kernel's dirty pages under the writeback cache, the daemon's
# deferred bytes), through a second descriptor, after fsync and reopening;
# ENXIO at and past EOF; cp --sparse=always and plain cp of the unsynced
# file copy its bytes and keep its holes (tests/fs/seek_holes.c).
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${SEEK_HOLES:-}" ] || fail "SEEK_HOLES is not set (run through meson test)"
case "${1:-}" in *passthrough=always*)
	"$ACCELFS" --version | grep -q -- '+passthrough' ||
		skip "built without passthrough: $("$ACCELFS" --version)" ;;
esac
accel_tmpdir
base=$ACCEL_TMP
mkdir -p "$base/src" "$base/ref" "$base/mnt"
accel_mount "$base/src" "$base/mnt" ${1:+-o "$1"}
accel_wait_init "$base/mnt"
case "${1:-}" in *passthrough=always*)
	grep -q "passthrough on" "$ACCEL_LOG" ||
		skip "the kernel does not offer passthrough: $(grep mounted "$ACCEL_LOG")" ;;
esac
"$SEEK_HOLES" "$base/ref" >"$base/ref.out" 2>&1 || fail "reference run: $(cat "$base/ref.out")"
"$SEEK_HOLES" "$base/mnt" >"$base/mnt.out" 2>&1 || fail "mount run: $(cat "$base/mnt.out")"
cat "$base/mnt.out"
grep -q "DIFFERENT" "$base/ref.out" && fail "the reference copy differs: $(cat "$base/ref.out")"
diff -u "$base/ref.out" "$base/mnt.out" || fail "${1:-default}: the mount differs from a local directory"
echo "PASS: ${1:-default}: SEEK_DATA/SEEK_HOLE as in a local directory"
