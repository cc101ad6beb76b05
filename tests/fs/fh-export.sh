#!/bin/bash
# SPDX-License-Identifier: MIT
# fh-export.sh [MOUNT-OPTIONS]: handles exported from the mount
# (name_to_handle_at, as NFS export uses them) open the same objects after
# the kernel dropped its caches and forgot the nodes (issue 28; xfstests
# generic/426), a deleted file's handle is ESTALE, and looking the names up
# between the drop and the open changes nothing (tests/fs/fh_export.c). The
# same program runs first on a local directory, the reference. Before the
# fix every open after the drop failed with ESTALE: node ids were addresses
# and the daemon did not offer export support.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${FH_EXPORT:-}" ] || fail "FH_EXPORT is not set (run through meson test)"
[ -w /proc/sys/vm/drop_caches ] || skip "cannot drop the kernel's caches (/proc/sys/vm/drop_caches)"
accel_tmpdir
base=$ACCEL_TMP
mkdir -p "$base/src" "$base/mnt" "$base/ref"
rc=0
"$FH_EXPORT" "$base/ref" || rc=$?
[ $rc = 77 ] && skip "the local directory $base/ref has no file handles"
[ $rc = 0 ] || skip "the reference, a local directory, fails it (exit $rc)"
accel_mount "$base/src" "$base/mnt" ${1:+-o "$1"}
# written at INIT, which may come after the mount shows
accel_log_wait "inodes kept by file handle|descriptor" ||
	fail "no line on how inodes are kept in $ACCEL_LOG: $(cat "$ACCEL_LOG")"
grep -q "inodes kept by file handle" "$ACCEL_LOG" ||
	skip "the daemon keeps no nodes by file handle here: $(grep -m1 descriptor "$ACCEL_LOG")"
rc=0
"$FH_EXPORT" "$base/mnt" || rc=$?
[ $rc = 77 ] && fail "${1:-default}: no file handles through the mount"
[ $rc = 1 ] && fail "${1:-default}: a handle did not survive the kernel forgetting its node"
[ $rc = 0 ] || fail "${1:-default}: fh_export exited $rc"
echo "PASS: ${1:-default}: exported handles open their objects after a cache drop"
