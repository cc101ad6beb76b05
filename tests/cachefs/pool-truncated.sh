#!/bin/bash
# SPDX-License-Identifier: MIT
# pool-truncated.sh: the pool segment truncated under a running mount (issue
# #12, item 3). Anyone who may open the segment can ftruncate it; every access
# past the new end then raises SIGBUS, which used to kill the daemon (a dead
# mount, ENOTCONN). Now:
#  - while readers go through the mount, the segment is cut to 4096 bytes: the
#    daemon stays up and every read returns SOURCE's bytes (checksums);
#  - it logs the break once, and a deferred write it held in the pool is
#    reported at the next fsync as EIO (never lost silently);
#  - SIGTERM unmounts cleanly; the broken segment is left for
#    `accel pool --reset`.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
mkdir m
for i in 1 2 3 4 5 6; do
	head -c $((1024 * 1024 + i * 4097)) /dev/urandom >"src/f$i"
done
echo "0123456789" >src/d
(cd src && sha256sum f?) >want
cfs_pool trunc
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,global_cache=8M,kernel_cache=never,deferred_write=on,flush_interval=3600"
(cd m && sha256sum f?) | cmp -s - want || fail "first read: wrong bytes"

# cut SEGMENT while a deferred write of FILE waits in the pool (flush_interval
# is an hour, the file stays open): its fsync must then fail with EIO
cut() {
	python3 - "$@" <<'EOP'
import errno, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"XY", 1)
os.truncate(sys.argv[2], 4096)
time.sleep(1)  # the readers meet the cut meanwhile
try:
    os.fsync(fd)
    print("fsync: no error")
except OSError as e:
    print("fsync:", os.strerror(e.errno))
EOP
}

# readers, in a loop until told to stop, while the segment is cut
reader() {
	local n=0
	while [ ! -e stop ]; do
		(cd m && sha256sum f?) >"got.$1" 2>&1 && cmp -s "got.$1" want ||
			{ cp "got.$1" "bad.$1"; return 1; }
		n=$((n + 1))
		# renamed into place: a concurrent cat never sees it empty
		echo $n >"rounds.$1.new" && mv "rounds.$1.new" "rounds.$1"
	done
}
rm -f stop rounds.*
cfs_bg reader 1
r1=$CFS_BG
cfs_bg reader 2
r2=$CFS_BG
for _ in $(seq 300); do
	[ -s rounds.1 ] && [ -s rounds.2 ] && break
	sleep 0.1
done
pre1=$(cat rounds.1) pre2=$(cat rounds.2)
cut m/d "/dev/shm$POOL" >fsync.out || fail "cannot truncate the segment"
[ $(($(cat rounds.1) - pre1)) -ge 2 ] && [ $(($(cat rounds.2) - pre2)) -ge 2 ] ||
	fail "the readers did not go on reading across the cut"
before="$pre1 $pre2"
touch stop
wait "$r1" || { cat bad.1; fail "reader 1 got wrong bytes or errors"; }
wait "$r2" || { cat bad.2; fail "reader 2 got wrong bytes or errors"; }
echo "readers: rounds at the cut: $before, at the end: $(cat rounds.1) $(cat rounds.2)"
kill -0 "$ACCEL_PID" 2>/dev/null || fail "the daemon died (SIGBUS?)"
(cd m && sha256sum f?) | cmp -s - want || fail "after the break: wrong bytes"
ls m >/dev/null || fail "the mount does not answer"
echo "ok: the segment cut to 4096 bytes under two readers: right bytes, daemon alive"
grep -q "segment truncated or damaged (SIGBUS): detached" "$ACCEL_LOG" ||
	{ cat "$ACCEL_LOG"; fail "the daemon did not log the break"; }

# the deferred bytes were in the pool: EIO at the next fsync, and a log line
grep -qx "fsync: Input/output error" fsync.out || { cat fsync.out; fail "fsync after the break: want EIO"; }
grep -q "deferred bytes lost with the broken pool" "$ACCEL_LOG" ||
	{ cat "$ACCEL_LOG"; fail "the lost deferred bytes were not logged"; }
echo "ok: the lost deferred write is EIO at fsync and logged"

kill -TERM "$ACCEL_PID"
accel_wait_exit "$ACCEL_PID" 15 || fail "SIGTERM did not stop the daemon"
! accel_is_mounted "$PWD/m" || fail "still mounted after SIGTERM"
[ "$(stat -c %s "/dev/shm$POOL")" = 4096 ] || fail "the broken segment was changed"
echo "PASS: a truncated pool segment detaches the pool, the mount keeps serving"
