#!/bin/bash
# SPDX-License-Identifier: MIT
# conc.sh [ACCELFS-OPTIONS...]: runs the concurrency test on a mount and
# verifies every file both through the mount and directly in SOURCE.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${CONC:-}" ] || fail "CONC is not set"

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
accel_mount "$base/src" "$base/mnt" "$@"
"$CONC" -t "${CONC_THREADS:-8}" -n "${CONC_ITERS:-2000}" "$base/mnt" "$base/src" ||
	fail "conc found a mismatch"
echo "PASS: concurrent readers and writers verified"
