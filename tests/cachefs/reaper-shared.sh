#!/bin/bash
# SPDX-License-Identifier: MIT
# reaper-shared.sh: in shared mode the descriptor reaper does not fstat idle
# descriptors (issue 26). On a network SOURCE each fstat is a round trip to
# the server, and the reaper made them under the cache lock every lookup and
# open needs, once a second for every descriptor idle since the last pass:
# through glusterfs at 1 ms of delay an untar spent most of its time
# waiting for that lock (29 fstats per file). Here SOURCE is local with
# shared=on; strace counts the daemon's fstats while it sits idle for three
# reaper passes after 200 files were looked up (the old daemon: hundreds;
# now only its once-a-second state file). A local mount still closes the
# descriptor of a file deleted in SOURCE (the control).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool reaper
mkdir m
for i in $(seq 200); do echo "$i" >"src/f$i"; done
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,shared=on"
cat m/f* >/dev/null || fail "reading the files through the mount"
cfs_strace idle.txt newfstatat,fstat,statx
sleep 3.5
cfs_strace_stop
n=$(grep -vc 'resumed>' idle.txt)
echo "fstats in 3.5 s idle, shared mode: $n"
[ "$n" -lt 40 ] || fail "the idle daemon made $n fstats in 3.5 s in shared mode (one per idle descriptor per pass)"
accel_umount "$PWD/m"

# the control: without shared mode a deleted file's descriptor still goes
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL"
exec 3<m/f1 || fail "open f1"
exec 3<&-
ls -l /proc/"$ACCEL_PID"/fd | grep -q "src/f1\$" || fail "no descriptor of f1 in the daemon"
rm src/f1
cfs_eventually 5 bash -c "! ls -l /proc/$ACCEL_PID/fd | grep -q 'src/f1 (deleted)'" ||
	fail "the daemon still holds deleted f1 after 5 s"
echo "PASS: no fstat of idle descriptors in shared mode; a deleted file's descriptor still goes on a local mount"
