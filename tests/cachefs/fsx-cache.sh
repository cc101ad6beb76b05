#!/bin/bash
# SPDX-License-Identifier: MIT
# fsx-cache.sh: the fs suite's exercisers with every read going through a
# tiny pool: kernel_cache=never, 4 KiB buckets, 4 local buffers, 8 MiB of
# global buffers, so partial buckets, truncation, hole punching, zero ranges
# and copy_file_range meet cached data all the time. fsx (FSX_OPS operations,
# default 20000; FSX_SEED to replay) checks every byte against its model;
# conc runs concurrent readers and writers. SOURCE must match the mount.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
[ -x "${FSX:-}" ] && [ -x "${CONC:-}" ] || fail "FSX and CONC must be set (run through meson test)"
cfs_pool fsx
opts="kernel_cache=never,pool=$POOL,global_cache=8M,bucket_size=4K,local_buffers=4"
mkdir m
# kernel_cache=never opens files with direct I/O, on which the kernel refuses
# shared writable mmap (ENODEV) unless FUSE_DIRECT_IO_ALLOW_MMAP is negotiated
# (libfuse >= 3.16); mmap goes through the page cache, not the pool, anyway.
flags=(-M)
echo "NOTE: fsx runs without mmap: kernel_cache=never means direct I/O"
if ! fallocate -p -o 0 -l 4096 "$(mktemp -p src)" 2>/dev/null; then
	echo "NOTE: SOURCE's file system cannot punch holes; fsx runs without fallocate"
	flags+=(-F)
fi
rm -f src/tmp.*
accel_mount "$PWD/src" "$PWD/m" -o "$opts"
pstat >p0
"$FSX" -N "${FSX_OPS:-20000}" ${FSX_SEED:+-S "$FSX_SEED"} "${flags[@]}" m ||
	fail "fsx failed on a cached mount (seed above; replay with FSX_SEED=N)"
# seeds that once found a bug stay in the suite
for seed in 120024656408415 129361915311660; do # stale short bucket; stale deferred size
	"$FSX" -N 5000 -S $seed "${flags[@]}" m || fail "fsx regression seed $seed failed"
done
pstat >p1
[ "$(delta p0 p1 global_hits)" -gt 0 ] || fail "fsx never hit the pool: the cache was not tested"
echo "fsx: $(delta p0 p1 global_hits) global hits, $(delta p0 p1 local_hits) local hits," \
	"$(delta p0 p1 invalidations) invalidations, $(delta p0 p1 evictions) evictions"

mkdir m/conc src/conc 2>/dev/null || true
"$CONC" -t "${CONC_THREADS:-8}" -n "${CONC_ITERS:-2000}" m/conc src/conc ||
	fail "conc found a mismatch on a cached mount"
pstat >p2
echo "conc: $(delta p1 p2 global_hits) global hits, $(delta p1 p2 fill_drops) fill drops"
echo "PASS: fsx and conc through a 4 KiB-bucket pool"
