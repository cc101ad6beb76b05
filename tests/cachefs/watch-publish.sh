#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-publish.sh [inotify]: what the watcher costs per event (issue 16);
# fanotify by default, the inotify watcher with "inotify".
# N files are created and written in SOURCE beside the mount (another
# process: every change is an event the watcher applies), the daemon traced
# with strace:
#  1. the mount's state file (/run/accelfs/mount-PID, read by accel stat) is
#     rewritten at most every 200 ms, not at each wake-up of the watcher: at
#     most one rename per 200 ms of the trace, plus two;
#  2. after a read that left room in its buffer the watcher goes back to
#     poll(): no read of the event queue ends in EAGAIN;
#  3. the counters still reach accel stat: every event is counted there
#     within a second of the burst.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
N=${WATCH_N:-300}
kind=${1:-fanotify}
cfs_init
cfs_pool wpub
mkdir m src/d
if [ "$kind" = inotify ]; then
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=inotify"
	wait_for 5000 inotify wcount "$PWD/m" watch ||
		fail "accel stat shows watch '$(wcount "$PWD/m" watch)', not inotify"
else
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=auto"
	watch_require "$PWD/m"
fi
ls -l m/d >/dev/null # the directory is known to the kernel: its events apply
fan=$(find /proc/"$ACCEL_PID"/fd -lname "anon_inode:*$kind*" -printf '%f\n' | head -1)
[ -n "$fan" ] || fail "the daemon holds no $kind descriptor"
state=/run/accelfs/mount-$ACCEL_PID
[ -f "$state" ] || fail "no state file $state"
e0=$(wcount "$PWD/m" watch_events)

# The trace goes to another file system than SOURCE's: strace's own writes
# would be events of the watcher's filesystem mark, which never drain.
trace=$(mktemp /dev/shm/watch-publish.XXXXXX) || fail "mktemp in /dev/shm"
trap 'rc=$?; rm -f "$trace"; (exit $rc); cfs_cleanup' EXIT
ts=$(date +%s%N) # the trace covers at most ts..te: the bound is on that
cfs_strace "$trace" rename,read
t0=$(date +%s%N)
for i in $(seq "$N"); do
	echo "$i" >"src/d/f$i"
	echo more >>"src/d/f$i"
	# pauses: the watcher wakes many times (a burst of a few ms is one read)
	[ $((i % 10)) != 0 ] || sleep 0.01
done
t1=$(date +%s%N)
sleep 0.5
cfs_strace_stop
te=$(date +%s%N)
[ -z "${KEEP_TRACE:-}" ] || cp "$trace" "$KEEP_TRACE"
burst=$(((t1 - t0) / 1000000)) traced=$(((te - ts) / 1000000))
# strace splits a call that another thread interrupts ("<unfinished ...>",
# then "<... read resumed>"): count by the watcher's thread id
renames=$(grep -c "rename(\"[^\"]*\", \"$state\"" "$trace")
reads=$(grep -c "read($fan, " "$trace")
wtid=$(grep -m1 "read($fan, " "$trace" | awk '{ print $1 }')
again=$(awk -v t="${wtid:-none}" '$1 == t && /EAGAIN/' "$trace" | wc -l)
echo "$N files created and written beside the mount in $burst ms, $traced ms traced:" \
	"$renames state-file renames, $reads reads of the $kind queue, $again of them EAGAIN"
[ "$reads" -gt 0 ] || fail "the watcher read no event (descriptor $fan)"
[ "$renames" -le $((traced / 200 + 2)) ] ||
	fail "$renames state-file renames in $traced ms: more than one per 200 ms"
[ "$again" -le 1 ] || fail "$again reads of the $kind queue ended in EAGAIN"

# every create of the burst reaches accel stat (the kernel may merge the
# writes into one event per file, never the creates of different names)
want=$((e0 + N))
wcount_reach "$PWD/m" watch_events "$want"
got=$WCOUNT
echo "watch_events $e0 -> $got (at least $want wanted)"
[ "$got" -ge "$want" ] || fail "accel stat shows $got events, want at least $want"
echo "PASS: state file at most every 200 ms ($renames renames in $traced ms), no EAGAIN read"
