#!/bin/bash
# SPDX-License-Identifier: MIT
# bdi.sh: a root daemon raises its own mount's read-ahead and dirty-page
# share (the FUSE protocol cannot), as -o readahead_kb= and dirty_ratio= say,
# and 0 leaves the kernel's values; writes still reach SOURCE intact.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap 'accel_cleanup; rm -f /dev/shm/accel-t-bdi-$$' EXIT
accel_require_fuse
accel_require_root

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/m1" "$base/m2"

knob() { # mountpoint, knob
	local dev
	dev=$(awk -v m="$1" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo)
	[ -n "$dev" ] || fail "$1 is not in mountinfo"
	cat "/sys/class/bdi/$dev/$2"
}

accel_mount_daemon "$base/src" "$base/m1" -o pool=/accel-t-bdi-$$,pool_keep=no
ls "$base/m1" >/dev/null # the INIT reply has been processed once a request is answered
[ "$(knob "$base/m1" read_ahead_kb)" = 1024 ] || fail "default read_ahead_kb is $(knob "$base/m1" read_ahead_kb), want 1024"
[ "$(knob "$base/m1" max_ratio)" = 10 ] || fail "default max_ratio is $(knob "$base/m1" max_ratio), want 10"

accel_mount_daemon "$base/src" "$base/m2" -o pool=/accel-t-bdi-$$,pool_keep=no,readahead_kb=0,dirty_ratio=0
ls "$base/m2" >/dev/null
[ "$(knob "$base/m2" read_ahead_kb)" = 128 ] || fail "readahead_kb=0 gave $(knob "$base/m2" read_ahead_kb), want the kernel's 128"
[ "$(knob "$base/m2" max_ratio)" = 1 ] || fail "dirty_ratio=0 gave $(knob "$base/m2" max_ratio), want the kernel's 1"

head -c 64M /dev/urandom >"$base/data"
cp "$base/data" "$base/m1/data"
cmp "$base/data" "$base/src/data" || fail "a large write through the tuned mount differs in SOURCE"
echo "PASS: bdi read_ahead_kb and max_ratio set per mount"
