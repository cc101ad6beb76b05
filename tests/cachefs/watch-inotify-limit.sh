#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-inotify-limit.sh: a directory the inotify watcher cannot watch
# (fs.inotify.max_user_watches reached) is counted (watch_unwatched, one log
# line), and what the daemon gives out under it carries the short timeouts
# (1 s), not inotify mode's 10 s: changes made in SOURCE inside it (a
# rewrite, a chmod, a new name) are visible within BOUND ms (3,000: the
# short timeout with room for a loaded machine, well below 10 s), while the
# directory beside it, watched, still caches (its attribute timeout is long).
# The limit is per user and system-wide: it is lowered to 1 for the one
# lookup that must be refused, under a lock, and restored at once (and in
# the exit trap). On the old code watch=inotify meant off: no
# watch_unwatched counter, mode off.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-3000}
W=/proc/sys/fs/inotify/max_user_watches
LOCK=/run/lock/accelfs-inotify.lock
cfs_init
cfs_pool wilim
[ -w "$W" ] || { echo "SKIP: cannot write $W here"; exit 77; }
exec 9>"$LOCK" || { echo "SKIP: cannot open $LOCK"; exit 77; }
flock -w 60 9 || fail "$LOCK held for a minute"
old=$(cat "$W")
restore() { [ "$(cat "$W")" = "$old" ] || echo "$old" >"$W"; }
trap 'rc=$?; restore; (exit $rc); cfs_cleanup' EXIT
mkdir m src/deep src/ok
echo v1 >src/deep/f
echo w1 >src/ok/f
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=inotify"
M=$PWD/m
wait_for 5000 inotify wcount "$M" watch ||
	fail "accel stat shows watch '$(wcount "$M" watch)', not inotify: $(grep watch: "$ACCEL_LOG")"
[ "$(wcount "$M" watch_unwatched)" = 0 ] || fail "directories unwatched before the test"
stat m/ok >/dev/null # watched
echo 1 >"$W"
stat m/deep >/dev/null # refused: ENOSPC
restore
wait_for 5000 1 wcount "$M" watch_unwatched || fail "watch_unwatched is '$(wcount "$M" watch_unwatched)', not 1"
grep -q 'cannot watch a directory (No space left on device: raise fs.inotify.max_user_watches)' \
	"$ACCEL_LOG" || fail "no log line for the refused watch: $(grep watch: "$ACCEL_LOG")"

# prime the kernel's caches under both directories
cat m/deep/f m/ok/f >/dev/null
stat -c %a m/deep/f m/ok/f >/dev/null
ls m/deep m/ok >/dev/null
stat m/deep/new 2>/dev/null && fail "new exists before it was made"
echo v2-longer >src/deep/f
# by its size first: an open inside the timeout would learn the new state
# (stamp_set) without the kernel giving up its old size (writeback cache):
# a stale size until the file changes again, as with watch=off (not ours)
wait_for "$BOUND" 10 stat -c %s m/deep/f || fail "rewrite under the unwatched directory not seen"
t1=$WAITED_MS
[ "$(cat m/deep/f)" = v2-longer ] || fail "stale read after the rewrite: $(cat m/deep/f)"
chmod 600 src/deep/f
wait_for "$BOUND" 600 stat -c %a m/deep/f || fail "chmod under the unwatched directory not seen"
t2=$WAITED_MS
echo n >src/deep/new
wait_for "$BOUND" n cat m/deep/new || fail "a new name under the unwatched directory not seen"
t3=$WAITED_MS
wait_for "$BOUND" 1 sh -c "ls m/deep | grep -cx new" || fail "the listing of the unwatched directory is stale"
echo "unwatched directory: rewrite ${t1} ms, chmod ${t2} ms, new name ${t3} ms, listing ${WAITED_MS} ms"
# the watched one beside it is still reported at once
chmod 600 src/ok/f
wait_for "$BOUND" 600 stat -c %a m/ok/f || fail "chmod under the watched directory not seen"
echo "watched directory: chmod ${WAITED_MS} ms"
echo "PASS: a directory beyond max_user_watches is counted and cached only for the short timeouts"
