#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-echo.sh: the watcher filters the mount's own changes and sees a
# second daemon's.
#  1. N files created, written, chmod'ed, renamed and removed through mount A
#     (its daemon's own pid): A's watcher sends (almost) no invalidation —
#     no storm; the count is printed;
#  2. the same through mount B on the same SOURCE: each change is visible
#     through A within BOUND ms although A caches for an hour, and B's own
#     changes did not make B invalidate.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}
N=${WATCH_N:-200}
cfs_init
cfs_pool wecho
mkdir mA mB
accel_mount "$PWD/src" "$PWD/mA" -o "pool=$POOL,watch=auto,negative_timeout=3600"
A=$PWD/mA
watch_require "$A"
accel_mount "$PWD/src" "$PWD/mB" -o "pool=$POOL,watch=auto,negative_timeout=3600"
B=$PWD/mB
wait_for 5000 1 grep -c 'entry_timeout 3600s, attr_timeout 3600s' "$ACCEL_LOG" ||
	fail "no long default timeouts with a watcher: $(grep watch: "$ACCEL_LOG")"

churn() { # MNT: create, write, chmod, rename, remove N files through MNT
	local m=$1 i
	mkdir "$m/churn"
	for i in $(seq 1 "$N"); do
		echo "$i" >"$m/churn/f$i"
		echo more >>"$m/churn/f$i"
		chmod 600 "$m/churn/f$i"
		mv "$m/churn/f$i" "$m/churn/g$i"
	done
	rm -r "$m/churn"
	sync
}

sleep 0.3 # counters are published at most every 200 ms
i0=$(wcount "$A" watch_invalidations)
churn "$A"
sleep 0.5
i1=$(wcount "$A" watch_invalidations)
echo "own changes: $((N * 4 + 2)) operations through A, $((i1 - i0)) invalidations by A"
[ $((i1 - i0)) -le 2 ] || fail "A's own changes came back as $((i1 - i0)) invalidations"

# B's changes, seen by A: prime A's caches first
ls -l "$A" >/dev/null
stat "$A/peer" 2>/dev/null && fail "peer exists already"
echo one >"$B/peer"
wait_for "$BOUND" one cat "$A/peer" || fail "B's create not visible through A"
t1=$WAITED_MS
echo two-two >"$B/peer"
wait_for "$BOUND" two-two cat "$A/peer" || fail "B's rewrite not visible through A"
t2=$WAITED_MS
chmod 640 "$B/peer"
wait_for "$BOUND" 640 stat -c %a "$A/peer" || fail "B's chmod not visible through A"
t3=$WAITED_MS
rm "$B/peer"
wait_for "$BOUND" gone sh -c "[ -e '$A/peer' ] && echo there || echo gone" ||
	fail "B's unlink not visible through A"
echo "B -> A: create ${t1} ms, rewrite ${t2} ms, chmod ${t3} ms, unlink ${WAITED_MS} ms"
wcount_reach "$A" watch_events 1 || fail "A counted no event"
# the text table: pid, mode, counters (the watcher's, then the requests'), mount point
"$ACCEL" stat --pool "$POOL" | grep -Eq "^ +[0-9]+ +fanotify +[0-9]+ +[0-9]+ +0 .*  $A\$" ||
	fail "accel stat shows no fanotify row for $A: $("$ACCEL" stat --pool "$POOL" | grep -A3 Mounts)"
echo "PASS: no echo storm; a second daemon's changes seen within ${BOUND} ms"
