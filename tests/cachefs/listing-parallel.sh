#!/bin/bash
# SPDX-License-Identifier: MIT
# listing-parallel.sh: in shared mode, a READDIRPLUS asks SOURCE for its
# entries' stats at once, not one after the other. SOURCE is slowfs
# (scripts/bench/slowfs.c) making every stat wait 300 ms and counting how
# many were ever in that wait at once (stat_max); its listings carry no
# attributes, so each entry's stat reaches it. `ls -l` of 16 files through
# a `shared=on` mount must have 4 or more in flight together (8 here, the
# io_uring workers of 2 CPUs); the old daemon stat'ed them one at a time
# (stat_max 1: 16 × 300 ms for one listing, where git status's walk waited
# for every directory's entries so, one hop into GlusterFS's client each).
# Skipped where the daemon's backend is not io_uring (the stats then go
# one at a time, as before).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool plisting

mkdir m
for i in $(seq 16); do echo "$i" >"src/f$i"; done
cfs_slowfs stat_delay_ms=300
stat_max() { sed -n 's/.*stat_max=\([0-9]*\).*/\1/p' "$PWD/slow/.slowfs-stats"; }

accel_mount "$PWD/slow" "$PWD/m" -o "pool=$POOL,shared=on"
grep -q "backend uring" "$ACCEL_LOG" ||
	skip "the daemon's backend is not io_uring: $(grep -o 'backend [a-z]*' "$ACCEL_LOG" | head -1)"
before=$(stat_max)
n=$(ls -l m | grep -c ' f[0-9]*$')
[ "$n" = 16 ] || fail "ls -l through the mount listed $n of the 16 files"
for i in 1 16; do
	[ "$(cat "m/f$i")" = "$i" ] || fail "m/f$i does not hold $i"
done
got=$(stat_max)
echo "stats in flight at once: $got (before the listing: $before)"
[ "$got" -ge 4 ] ||
	fail "ls -l of 16 files stat'ed them on SOURCE $got at a time, want 4 or more at once"
echo "PASS: a listing's entries are stat'ed on SOURCE together ($got at once)"
