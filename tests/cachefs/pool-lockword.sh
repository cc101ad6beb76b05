#!/bin/bash
# SPDX-License-Identifier: MIT
# pool-lockword.sh: a pool whose lock words were overwritten (as root can:
# the segment is root's, mode 0600) does not hang the daemon, and SIGTERM
# still stops it (issue 27, item 6). For each damaged word -- a live foreign
# owner (thread 1, init), 0xffffffff, the owner-died bit alone, the
# daemon's own pid, a waiter bit with owner 1 -- poolhold writes it into
# the files lock and every shard lock of the mount's pool; then a read and
# an append through the mount finish within 10 s (bounded lock waits), and
# SIGTERM unmounts and ends the daemon within 15 s.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
[ -x "${POOLHOLD:-}" ] || fail "POOLHOLD not set (run through meson test)"
mkdir m
echo data >src/f
for word in 1 0xffffffff 0x40000000 self 0x80000001; do
	cfs_pool "lockword"
	accel_mount "$PWD/src" "$PWD/m" -o "writeback=off,pool=$POOL"
	w=$word
	[ "$w" = self ] && w=$ACCEL_PID
	cat m/f >/dev/null || fail "read before the damage"
	POOLHOLD_WORD=$w "$POOLHOLD" "$POOL" ready corrupt || fail "poolhold could not damage $POOL"
	t0=$(date +%s%N)
	timeout 10 cat m/f >/dev/null || fail "lock word $word: a read did not finish within 10 s"
	timeout 10 sh -c 'echo more >>m/f' || fail "lock word $word: an append did not finish"
	echo "lock word $word: read and append took $((($(date +%s%N) - t0) / 1000000)) ms"
	kill -TERM "$ACCEL_PID"
	accel_wait_exit "$ACCEL_PID" 15 || fail "lock word $word: SIGTERM did not stop the daemon"
	! accel_is_mounted "$PWD/m" || fail "lock word $word: still mounted after SIGTERM"
	ACCEL_MNTS=""
	rm -f "/dev/shm$POOL"
done
grep -c more src/f | grep -qx 5 || fail "the appends are not all on SOURCE: $(cat src/f)"
echo "PASS: damaged lock words: bounded waits, SIGTERM ends the daemon"
