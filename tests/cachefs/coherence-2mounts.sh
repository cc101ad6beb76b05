#!/bin/bash
# SPDX-License-Identifier: MIT
# coherence-2mounts.sh: two daemons on one SOURCE and one pool
# (kernel_cache=never, so only the daemons and the pool hold data).
#  1. sequential: write or truncate through A, then read through B, which had
#     the old bytes in its local and global buffers: B returns exactly what
#     the acknowledged write left, every time (cfsio seq, random offsets and
#     lengths across buckets, growing and shrinking the file);
#  2. concurrent: writers through A and B on versioned records, readers through
#     both: no byte older than the last write acknowledged before the read
#     began (cfsio conc; reads torn across versions are allowed and counted).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool coh
opts="kernel_cache=never,attr_timeout=0,entry_timeout=0,pool=$POOL,global_cache=8M"
opts="$opts,bucket_size=16K,local_buffers=4"
mkdir mA mB
"$CFSIO" gen src/F $((1 << 20)) || fail "cannot create src/F"
accel_mount "$PWD/src" "$PWD/mA" -o "$opts"
accel_mount "$PWD/src" "$PWD/mB" -o "$opts"

seed=${CFS_SEED:-$(date +%s)}
echo "seed $seed (replay with CFS_SEED=$seed)"
pstat >p0
"$CFSIO" seq mA/F mB/F src/F "${CFS_ITERS:-1500}" "$seed" || fail "sequential coherence"
pstat >p1
cmp mB/F src/F || fail "mB/F differs from SOURCE after the sequential phase"
# the reads must really have been served by the pool, or nothing was tested
[ "$(delta p0 p1 global_hits)" -gt 1000 ] ||
	fail "only $(delta p0 p1 global_hits) global hits: B's buffers were never tested"
echo "sequential: $(delta p0 p1 global_hits) global hits, $(delta p0 p1 local_hits) local hits," \
	"$(delta p0 p1 invalidations) invalidations"

"$CFSIO" conc mA/R mB/R "${CFS_SECS:-8}" || fail "concurrent coherence"
cmp mA/R src/R && cmp mB/R src/R || fail "mounts and SOURCE disagree after the concurrent phase"
pstat >p2
echo "concurrent: $(delta p1 p2 global_hits) global hits, $(delta p1 p2 fill_drops) fill drops"
echo "PASS: every acknowledged write was visible through the other mount"
