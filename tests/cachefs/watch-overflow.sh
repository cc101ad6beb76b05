#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-overflow.sh: a full event queue (FAN_Q_OVERFLOW) makes the watcher
# invalidate everything it cannot know about, and is counted. Deterministic:
# the queue is created small (fs.fanotify.max_queued_events lowered to 16
# for the mount, restored at once), the daemon is stopped (SIGSTOP: none of
# its threads reads), 200 changes are made in SOURCE, then it continues.
# Changes made in that burst must still become visible (an attribute, a
# missing name the kernel caches for an hour, and a directory's default ACL
# the daemon knew absent, which it would trust for the hour), and
# watch_overflows must have grown.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}
Q=/proc/sys/fs/fanotify/max_queued_events
cfs_init
cfs_pool wovf
[ -w "$Q" ] && old=$(cat "$Q") && echo 16 2>/dev/null >"$Q" ||
	{ echo "SKIP: cannot lower $Q here"; exit 77; }
restore() { echo "$old" >"$Q"; }
trap 'rc=$?; exec 9<&-; restore; (exit $rc); cfs_cleanup' EXIT
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=auto,negative_timeout=3600"
restore
watch_require "$PWD/m"
echo data >src/f
stat -c %a m/f >/dev/null
mkdir src/d
acl=no
command -v setfacl >/dev/null && setfacl -d -m u:nobody:rx src/d 2>/dev/null && setfacl -k src/d && acl=yes
dacl() { getfacl -cp m/d 2>/dev/null | grep -c '^default:user:nobody:r-x$'; }
[ $acl = no ] || [ "$(dacl)" = 0 ] || fail "m/d shows a default ACL it does not have"
# Hold m/d open across the overflow: its inode stays in the kernel and its
# node in the daemon, with what the node knows absent. Without the hold the
# kernel could forget the inode after the overflow's invalidation, and a new
# node knows nothing: a daemon without the overflow hook then passed about
# every other run.
exec 9<m/d
stat m/burst200 2>/dev/null && fail "burst200 exists before the burst"
# SOURCE's file system may be busy elsewhere: such a small queue can
# overflow before the burst too, so count from here
o0=$(wcount "$PWD/m" watch_overflows)

kill -STOP "$ACCEL_PID"
for i in $(seq 1 200); do
	: >"src/burst$i"
done
chmod 600 src/f
[ $acl = no ] || setfacl -d -m u:nobody:rx src/d
kill -CONT "$ACCEL_PID"
wait_for "$BOUND" 600 stat -c %a m/f || fail "the change lost in the overflow stayed invisible"
if [ $acl = yes ]; then
	wait_for "$BOUND" 1 dacl || fail "a default ACL set in the overflow stayed hidden behind what the daemon knew absent"
else
	echo "note: no POSIX ACLs here (setfacl missing or refused): the ACL case is skipped"
fi
exec 9<&-
grew() { [ "$(wcount "$PWD/m" watch_overflows)" -gt "$o0" ] && echo yes; }
wait_for "$BOUND" yes grew ||
	fail "overflows: $o0 before the burst, $(wcount "$PWD/m" watch_overflows) after"
# a missing name cached for an hour: forgotten too (the connection's epoch;
# libfuse < 3.18 or kernel < 6.16 cannot, docs/design.md)
if "$ACCELFS" --version | grep -q 'libfuse 3\.1[89]'; then
	wait_for "$BOUND" there sh -c "[ -e m/burst200 ] && echo there" ||
		fail "a name created in the burst stays cached as missing"
fi
echo "PASS: queue overflow counted and everything invalidated (chmod seen in ${WAITED_MS} ms)"
