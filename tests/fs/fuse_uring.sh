#!/bin/bash
# SPDX-License-Identifier: MIT
# fuse_uring.sh: -o io_uring=on|auto|off. Against a libfuse without FUSE over
# io_uring (accelfs --version says -io_uring), io_uring=on fails with one
# line and mounts nothing, and auto serves over /dev/fuse. With it: while
# the fuse module's enable_uring is N, on fails the same way and auto falls
# back to /dev/fuse; with enable_uring=Y (set here, restored on exit), the
# io_uring=on serves over it, the daemon runs libfuse's ring threads, logs "FUSE over io_uring", and
# ops_compare gives the answers of a plain directory. auto takes it only
# with locks=local: libfuse delivers no FUSE INTERRUPT for ring requests, so
# a signal could not end a lock wait the daemon finishes (locks=forward).
set -u
. "$(dirname "$0")/../lib/mount.sh"
accel_require_fuse
[ -n "${OPS_COMPARE:-}" ] || fail "OPS_COMPARE is not set"
param=/sys/module/fuse/parameters/enable_uring
# The parameter is global: serialise with any other run of this test.
exec 9>/run/lock/accelfs-enable_uring.lock
flock -w 300 9 || skip "another run holds the enable_uring lock"
old=$(cat $param 2>/dev/null || echo none)
restore() {
	local rc=$? # the test's status, not the restore's
	[ "$old" = none ] || echo "$old" >$param 2>/dev/null
	(exit $rc)
	accel_cleanup
}
trap restore EXIT

accel_tmpdir
base=$ACCEL_TMP
mkdir -m 755 "$base/src" "$base/mnt" "$base/ref"

# refused CASE: io_uring=on exits 1 with one "accelfs: ... io_uring ..." line, nothing mounted
refused() {
	local rc=0 out
	ACCEL_MNTS="$ACCEL_MNTS $base/mnt" # unmounted on exit should it mount after all
	out=$("$ACCELFS" "$base/src" "$base/mnt" -o io_uring=on,pool=/accel-t-$$ 2>&1) || rc=$?
	[ $rc = 1 ] || fail "$1: io_uring=on exited $rc, want 1 ($out)"
	[ "$(echo "$out" | wc -l)" = 1 ] && [[ $out == "accelfs: "*io_uring* ]] ||
		fail "$1: want one 'accelfs: ... io_uring ...' line, got: $out"
	! mountpoint -q "$base/mnt" || fail "$1: something is mounted"
	echo "ok: $1: $out"
}

# transport [OPT]: mount with io_uring=OPT (none: the default), leave the
# transport its log names in TRANSPORT. Not run in "$(...)": the mount's
# log and pid would be registered in a subshell, and the log left behind.
transport() {
	accel_mount "$base/src" "$base/mnt" ${1:+-o io_uring=$1}
	echo x >"$base/mnt/probe" && [ "$(cat "$base/mnt/probe")" = x ] || fail "io_uring=$1: I/O failed"
	accel_umount "$base/mnt" || fail "unmount failed"
	accel_wait_exit "$ACCEL_PID" 10 || fail "daemon still running after unmount"
	TRANSPORT=$(sed -n 's/.*requests through \(.*\), backend.*/\1/p' "$ACCEL_LOG")
}

if "$ACCELFS" --version | grep -q -- '-io_uring'; then
	refused "libfuse without io_uring"
	transport auto
	[ "$TRANSPORT" = /dev/fuse ] || fail "io_uring=auto does not serve over /dev/fuse"
	echo "PASS: io_uring=on refused, auto on /dev/fuse ($("$ACCELFS" --version))"
	exit 0
fi
[ "$old" != none ] || skip "this kernel's fuse module has no enable_uring parameter"
echo N >$param 2>/dev/null || skip "cannot write $param"
refused "enable_uring=N"
transport auto
[ "$TRANSPORT" = /dev/fuse ] || fail "io_uring=auto with enable_uring=N is not on /dev/fuse"
transport
[ "$TRANSPORT" = /dev/fuse ] || fail "the default with enable_uring=N is not on /dev/fuse"
echo Y >$param || fail "cannot set $param"
# libfuse routes no INTERRUPT to ring requests: auto keeps /dev/fuse while
# lock waits are the daemon's (locks=forward, the default)
transport auto
[ "$TRANSPORT" = /dev/fuse ] || fail "io_uring=auto with locks=forward: $(cat "$ACCEL_LOG")"
transport
[ "$TRANSPORT" = /dev/fuse ] || fail "the default with locks=forward: $(cat "$ACCEL_LOG")"
transport auto,locks=local
[ "$TRANSPORT" = "FUSE over io_uring" ] ||
	fail "io_uring=auto,locks=local with enable_uring=Y: $(cat "$ACCEL_LOG")"
transport off
[ "$TRANSPORT" = /dev/fuse ] || fail "io_uring=off is not on /dev/fuse"

accel_mount "$base/src" "$base/mnt" -o allow_other,default_permissions,io_uring=on
ls /proc/"$ACCEL_PID"/task/*/comm >/dev/null && grep -qx 'fuse-ring-[0-9]*' /proc/"$ACCEL_PID"/task/*/comm ||
	fail "no fuse-ring thread in the daemon"
# SEEK_DATA/SEEK_HOLE need the kernel's dirty pages written back first, which
# the ring thread cannot wait for (fuse/kinval.c): under the writeback cache
# the kernel answers them itself over io_uring (all data, no hole: design.md),
# so the cases that seek are compared on a mount without the writeback cache.
seeking=lseek,fallocate,bigfile
"$OPS_COMPARE" -x $seeking "$base/mnt" "$base/ref" ||
	fail "ops_compare over io_uring differs from a plain directory"
# Lock waits are answered from the daemon's waiter threads (fuse/slow.c),
# whose reply commits fetch the next requests into their ring entries: two
# record-locking processes contend, and no lock, read or write may fail
# (a waiter thread that exited after one request made the kernel end the
# next request of its entry with ECANCELED) and no update be lost.
PY=/usr/bin/python3
[ -x $PY ] || fail "$PY is needed"
count() {
	$PY - "$base/mnt/counters" <<-'EOF'
		import fcntl, os, sys
		fd = os.open(sys.argv[1], os.O_RDWR)
		for _ in range(150):
		    for i in range(5):
		        fcntl.lockf(fd, fcntl.LOCK_EX, 16, i * 16)
		        v = int(os.pread(fd, 16, i * 16))
		        os.pwrite(fd, b"%015d\n" % (v + 1), i * 16)
		        fcntl.lockf(fd, fcntl.LOCK_UN, 16, i * 16)
	EOF
}
$PY -c 'import sys; open(sys.argv[1], "wb").write(b"%015d\n" % 0 * 5)' "$base/mnt/counters"
count 2>"$base/err1" &
count 2>"$base/err2" || fail "a record-locking process failed over io_uring: $(cat "$base/err2")"
wait $! || fail "a record-locking process failed over io_uring: $(cat "$base/err1")"
want=$(printf '%015d\n' 300 300 300 300 300)
[ "$(cat "$base/mnt/counters")" = "$want" ] ||
	fail "updates lost over io_uring: $(tr '\n' ' ' <"$base/mnt/counters")"
echo "ok: two record-locking processes over io_uring: 1,500 locked updates, none lost"
accel_umount "$base/mnt" || fail "unmount failed"
accel_mount "$base/src" "$base/mnt" -o allow_other,default_permissions,io_uring=on,writeback=off
"$OPS_COMPARE" -t $seeking "$base/mnt" "$base/ref" ||
	fail "ops_compare ($seeking) over io_uring without the writeback cache differs"
echo "PASS: io_uring=on|auto|off, ops_compare and lock waits over FUSE over io_uring"
