#!/bin/bash
# SPDX-License-Identifier: MIT
# share-zero-reads.sh: two daemons naming the same pool share its data. A file
# read through mount A is then read through mount B (same SOURCE) with zero
# backend reads, every bucket a global hit; likewise through mount C of a
# subdirectory of SOURCE (an overlapping mount). kernel_cache=never, so every
# read reaches a daemon and nothing is served from a page cache.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool share
# readahead_max=0: the first read must cost exactly one backend read per bucket
opts="kernel_cache=never,pool=$POOL,global_cache=16M,bucket_size=64K,readahead_max=0"
mkdir src/sub mA mB mC
size=$(((3 << 20) + 1234))
"$CFSIO" gen src/F $size || fail "cannot create src/F"
"$CFSIO" gen src/sub/G $(((1 << 20) + 77)) || fail "cannot create src/sub/G"
accel_mount "$PWD/src" "$PWD/mA" -o "$opts"
accel_mount "$PWD/src" "$PWD/mB" -o "$opts"
accel_mount "$PWD/src/sub" "$PWD/mC" -o "$opts"

# bucket_read PATH BUCKETS: read PATH one bucket per read(2), no probe past
# its end, so each bucket is exactly one lookup whatever the local buffers do
bucket_read() {
	dd if="$1" bs=64K count="$2" status=none
}

# check_shared FILE-IN-SOURCE FIRST-MOUNT-PATH SECOND-MOUNT-PATH
check_shared() {
	local f=$1 first=$2 second=$3 id nb
	id=$(file_id "$f")
	nb=$((($(stat -c %s "$f") + 65535) / 65536))
	bucket_read "$first" $nb | cmp - "$f" || fail "$first differs from $f"
	pstat -i "$id" >f0
	pstat >p0
	[ "$(kv f0 backend_reads)" = "$nb" ] ||
		fail "first read of $f through $first: $(kv f0 backend_reads) backend reads, want $nb"
	bucket_read "$second" $nb | cmp - "$f" || fail "$second differs from $f"
	pstat -i "$id" >f1
	pstat >p1
	[ "$(delta f0 f1 backend_reads)" = 0 ] ||
		fail "$second read $f with $(delta f0 f1 backend_reads) backend reads, want 0"
	[ "$(delta p0 p1 backend_reads)" = 0 ] ||
		fail "pool-wide backend reads rose by $(delta p0 p1 backend_reads), want 0"
	[ "$(delta f0 f1 global_hits)" = "$nb" ] ||
		fail "$second: global hits rose by $(delta f0 f1 global_hits), want $nb (buckets)"
	[ "$(delta f0 f1 global_attempts)" = "$nb" ] ||
		fail "$second: $(delta f0 f1 global_attempts) global lookups, want $nb"
	# any other reader (cmp's own I/O sizes, up to end of file) needs no backend either
	cmp "$second" "$f" || fail "$second differs from $f on a second read"
	pstat -i "$id" >f2
	[ "$(delta f1 f2 backend_reads)" = 0 ] ||
		fail "cmp through $second made $(delta f1 f2 backend_reads) backend reads, want 0"
	echo "ok: $second served $nb buckets from the pool, 0 backend reads"
}

check_shared src/F mA/F mB/F
check_shared src/sub/G mA/sub/G mC/G
# and back: what B and C read stays shared with A
pstat -i "$(file_id src/F)" >f2
cmp mA/F src/F || fail "mA/F differs on the second read"
pstat -i "$(file_id src/F)" >f3
[ "$(delta f2 f3 backend_reads)" = 0 ] || fail "A's second read went to the backend"
echo "PASS: mounts sharing pool $POOL read each other's buckets with no backend I/O"
