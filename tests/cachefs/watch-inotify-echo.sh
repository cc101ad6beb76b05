#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-inotify-echo.sh: the inotify watcher, which is not told who made a
# change, does not echo the mount's own changes back as invalidations:
# WRITES appends (each an open, a write and a close: IN_MODIFY and
# IN_CLOSE_WRITE) and CREATES new files through the mount give at most 2 %
# as many invalidations (the count is printed); and the filter does not
# swallow what follows: an outside change made once the echo window
# (100 ms) has passed is visible within BOUND ms, below the 10 s that
# inotify mode caches for. On the old code watch=inotify meant off: it fails
# on the mode (accel stat shows off).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}
WRITES=${WATCH_WRITES:-2000}
CREATES=${WATCH_CREATES:-200}
cfs_init
cfs_pool wiecho
mkdir m src/d
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=inotify"
M=$PWD/m
wait_for 5000 inotify wcount "$M" watch ||
	fail "accel stat shows watch '$(wcount "$M" watch)', not inotify: $(grep watch: "$ACCEL_LOG")"

ls -l m/d >/dev/null
sleep 0.3 # counters are published at most every 200 ms
i0=$(wcount "$M" watch_invalidations)
e0=$(wcount "$M" watch_events)
for i in $(seq 1 "$WRITES"); do
	echo "$i" >>m/d/log
done
for i in $(seq 1 "$CREATES"); do
	echo "$i" >"m/d/c$i"
done
sync
sleep 1 # the watcher has read every event by now
i1=$(wcount "$M" watch_invalidations)
e1=$(wcount "$M" watch_events)
ops=$((WRITES + CREATES))
echo "own changes: $WRITES appends and $CREATES creates through the mount:" \
	"$((e1 - e0)) events, $((i1 - i0)) invalidations"
[ $(((i1 - i0) * 50)) -le "$ops" ] || fail "$((i1 - i0)) invalidations for $ops own changes"
[ "$(wc -l <src/d/log)" = "$WRITES" ] || fail "the appends did not reach SOURCE"

# the filter keeps only what the mount did itself, and only for a moment
sleep 0.6
cat m/d/c1 >/dev/null
echo outside >src/d/c1
wait_for "$BOUND" outside cat m/d/c1 || fail "an outside rewrite after the window was not seen"
t1=$WAITED_MS
chmod 600 src/d/log
wait_for "$BOUND" 600 stat -c %a m/d/log || fail "an outside chmod after the window was not seen"
echo "outside changes after the window: rewrite ${t1} ms, chmod ${WAITED_MS} ms"
echo "PASS: no echo storm from $ops own changes; outside changes still seen"
