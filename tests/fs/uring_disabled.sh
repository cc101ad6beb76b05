#!/bin/bash
# SPDX-License-Identifier: MIT
# uring_disabled.sh: with sysctl kernel.io_uring_disabled=2 the default
# backend must fall back to synchronous I/O with exactly one warning line
# mentioning io_uring, and do correct I/O (fsx and ops_compare's data cases);
# -o backend=uring must then fail with exit status 1 and mount nothing.
# The sysctl is restored on exit.
set -u
. "$(dirname "$0")/../lib/mount.sh"
accel_require_fuse
knob=/proc/sys/kernel/io_uring_disabled
[ -e $knob ] || skip "kernel has no kernel.io_uring_disabled sysctl"
# The sysctl is global: serialise with any other run of this test, so two
# runs cannot restore each other's setting.
exec 9>/run/lock/accelfs-io_uring_disabled.lock
flock -w 300 9 || skip "another run holds the io_uring sysctl lock"
old=$(cat $knob)
echo 2 >$knob 2>/dev/null || skip "cannot write $knob"
restore() {
	local rc=$? # the test's status, not the restore's
	echo "$old" >$knob
	(exit $rc)
	accel_cleanup
}
trap restore EXIT

accel_tmpdir
base=$ACCEL_TMP
mkdir -m 755 "$base/src" "$base/mnt" "$base/ref" "$base/src2" "$base/mnt2"
echo data >"$base/src2/f"
ACCEL_MNTS="$base/mnt2"
accel_mount "$base/src" "$base/mnt"
"$FSX" -N 3000 "$base/mnt" || fail "fsx failed on the fallback backend"
"$OPS_COMPARE" -t rw,fallocate,copy_range,lseek,bigfile,fsync "$base/mnt" "$base/ref" ||
	fail "ops_compare failed on the fallback backend"
accel_umount "$base/mnt"
accel_wait_exit "$ACCEL_PID" 10 || fail "daemon still running after unmount"
cat "$ACCEL_LOG"
n=$(grep -ci io_uring "$ACCEL_LOG")
[ "$n" = 1 ] || fail "$n lines mention io_uring on stderr, expected exactly 1"

accel_tree_sum "$base/src2" >"$base/before"
rc=0
timeout 20 "$ACCELFS" "$base/src2" "$base/mnt2" -o backend=uring 2>"$base/err" || rc=$?
cat "$base/err"
[ $rc = 1 ] || fail "backend=uring with io_uring disabled exited $rc, expected 1"
[ "$(wc -l <"$base/err")" = 1 ] || fail "expected one line on stderr"
grep -q '^accelfs: .*io_uring' "$base/err" || fail "message does not mention io_uring"
! accel_is_mounted "$base/mnt2" || fail "backend=uring mounted anyway"
accel_check_untouched "$base/src2" "$base/before"
echo "PASS: io_uring disabled: fallback with one warning; backend=uring refused"
