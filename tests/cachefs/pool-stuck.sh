#!/bin/bash
# SPDX-License-Identifier: MIT
# pool-stuck.sh: a peer stopped while it holds the pool's locks does not stop
# this daemon (issue #12, item 3). poolhold attaches to the mount's pool,
# takes every shard lock, marks every buffer as half-written and stops itself
# (what a peer daemon frozen by SIGSTOP or a cgroup mid-write looks like):
#  - reads through the mount still return SOURCE's bytes, all of them within
#    a few seconds (one bounded wait, then short tries);
#  - a write through the mount, whose cached buckets cannot be dropped under
#    the held locks, still leaves no stale copy: read back now, and from the
#    pool after SIGCONT, it is the new bytes;
#  - `accel stat` (text and --json) shows lock_timeouts > 0, the daemon logs it;
#  - SIGTERM stops the daemon cleanly while the peer is still stopped;
#  - after SIGCONT the peer releases everything and a new mount on the same
#    pool is served from it again, with the right bytes.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
[ -x "${ACCEL:-}" ] && [ -x "${POOLHOLD:-}" ] || fail "ACCEL/POOLHOLD not set (run through meson test)"
mkdir m
for i in 1 2 3 4; do
	head -c $((512 * 1024 + i * 1000)) /dev/urandom >"src/f$i"
done
(cd src && sha256sum f?) >want
cfs_pool stuck
opts="pool=$POOL,global_cache=4M,kernel_cache=never,readahead_max=0"

accel_mount "$PWD/src" "$PWD/m" -o "$opts"
(cd m && sha256sum f?) | cmp -s - want || fail "first read: wrong bytes"

rm -f ready
cfs_bg "$POOLHOLD" "$POOL" "$PWD/ready"
hold=$CFS_BG
for _ in $(seq 100); do
	[ -e ready ] && [ "$(awk '{print $3}' "/proc/$hold/stat" 2>/dev/null)" = T ] && break
	sleep 0.1
done
[ "$(awk '{print $3}' "/proc/$hold/stat" 2>/dev/null)" = T ] || fail "poolhold did not stop holding the locks"

start=$(date +%s%N)
(cd m && timeout 30 sha256sum f?) >got || fail "reads through the mount failed or hung (exit $?)"
took=$((($(date +%s%N) - start) / 1000000))
cmp -s got want || { diff got want; fail "reads with the locks held: wrong bytes"; }
echo "ok: reads with every shard lock held by a stopped peer: right bytes in ${took} ms"

head -c 100000 /dev/urandom >patch
timeout 30 dd if=patch of=m/f1 bs=100000 seek=1 oflag=seek_bytes conv=notrunc status=none ||
	fail "a write with the locks held failed (exit $?)"
(cd src && sha256sum f?) >want
(cd m && timeout 30 sha256sum f?) | cmp -s - want || fail "read back after the write: wrong bytes"
echo "ok: a write with the locks held: read back right"
# one 2 s wait per shard lock (this pool has 2), then 10 ms tries: 4-5 s here
[ "$took" -lt 12000 ] || fail "reads took ${took} ms with the locks held (bound: 2 s)"

"$ACCEL" stat --pool "$POOL" --json >stat.json || fail "accel stat --json"
n=$(sed -n 's/.*"lock_timeouts": \([0-9]*\).*/\1/p' stat.json | head -1)
[ -n "$n" ] && [ "$n" -gt 0 ] || { cat stat.json; fail "accel stat --json: lock_timeouts=${n:-missing}"; }
"$ACCEL" stat --pool "$POOL" | grep -Eq "lock timeouts [1-9]" || fail "accel stat: no lock timeouts"
grep -q "lock wait(s) gave up after 2 s" "$ACCEL_LOG" || { cat "$ACCEL_LOG"; fail "the daemon did not log the timeouts"; }
echo "ok: accel stat shows lock_timeouts=$n, the daemon logged it"

kill -TERM "$ACCEL_PID"
accel_wait_exit "$ACCEL_PID" 15 || fail "SIGTERM did not stop the daemon within 15 s"
wait "$ACCEL_PID" || fail "the daemon exited with status $? after SIGTERM"
! accel_is_mounted "$PWD/m" || fail "still mounted after SIGTERM"
echo "ok: SIGTERM stops the daemon while the peer still holds the locks"

kill -CONT "$hold"
wait "$hold" || fail "poolhold exited $? after SIGCONT"
accel_mount "$PWD/src" "$PWD/m" -o "$opts"
"$POOLSTAT" "$POOL" >s1 || fail poolstat
(cd m && timeout 30 sha256sum f?) | cmp -s - want || fail "after SIGCONT: wrong bytes"
"$POOLSTAT" "$POOL" >s2 || fail poolstat
[ "$(delta s1 s2 global_hits)" -gt 0 ] || fail "after SIGCONT the pool serves nothing"
accel_umount "$PWD/m"
echo "PASS: a stopped lock holder costs a bounded wait, never the mount"
