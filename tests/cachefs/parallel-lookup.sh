#!/bin/bash
# SPDX-License-Identifier: MIT
# parallel-lookup.sh: lookups of names in one directory reach SOURCE in
# parallel. SOURCE is slowfs (scripts/bench/slowfs.c) making every stat
# wait 300 ms and counting how many were ever in that wait at once
# (stat_max). Eight processes stat eight names of one directory through
# the mount, names the kernel has not looked up yet: more than one of the
# daemon's stats must be in flight together. Before, the daemon did not ask
# for FUSE_CAP_PARALLEL_DIROPS and the kernel sent the lookups of a
# directory one at a time (stat_max=1), so 20 threads of git's index
# preload waited one network round trip after another. Both daemons start
# their workers as requests come: where the first eight met them still
# starting (seen once under ThreadSanitizer, stat_max 1), eight more names
# of the same directory are looked up once the workers are there; the old
# daemon's lookups stay one at a time however many workers wait.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool plookup

mkdir m
for i in 1 2 3 4 5 6 7 8; do
	echo "$i" >"src/f$i" && echo "$i" >"src/h$i" && echo "$i" >"src/g$i"
done
cfs_slowfs stat_delay_ms=300
stat_max() { sed -n 's/.*stat_max=\([0-9]*\).*/\1/p' "$PWD/slow/.slowfs-stats"; }
# eight stats at once of names nobody looked up yet, in one directory
stats8() {
	local i p pids=""
	for i in 1 2 3 4 5 6 7 8; do stat -c %s "$1$i" >/dev/null & pids="$pids $!"; done
	for p in $pids; do wait "$p" || fail "a stat of one of $1[1-8] failed"; done
}

accel_mount "$PWD/slow" "$PWD/m" -o "pool=$POOL"
stats8 m/f
got=$(stat_max)
if [ "$got" -lt 2 ]; then # the workers may have been starting: once more
	stats8 m/h
	got=$(stat_max)
	[ "$got" -lt 2 ] || echo "note: the first eight lookups went one at a time, the next $got at once"
fi
if [ "$got" -lt 2 ]; then
	stats8 slow/g # slowfs itself (stat_max only grows): can it overlap at all?
	[ "$(stat_max)" -ge 2 ] ||
		skip "this kernel sends slowfs's own lookups one at a time: nothing to see"
	fail "eight lookups of one directory through the mount reached SOURCE one at a time (stat_max $got; slowfs alone: $(stat_max))"
fi
echo "PASS: lookups of one directory reach SOURCE in parallel (at most $got at once)"
