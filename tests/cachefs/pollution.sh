#!/bin/bash
# SPDX-License-Identifier: MIT
# pollution.sh: a file pinned with a quota keeps its buffers while another
# process streams a cold file four times the pool's size through the same
# pool. Hot file H (a quarter of the pool) carries user.accelfs.global_buffers
# =all; after the cold stream, a second read of H is >= 95 % global hits (per-
# file counters). kernel_cache=never, so every read reaches the pool.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool pollution
pool_size=$((8 << 20))
# readahead_max=0: no read-ahead past what each read asks for (a read of
# several missing buckets still reads them with one backend read)
opts="kernel_cache=never,pool=$POOL,global_cache=8M,bucket_size=64K,readahead_max=0"
mkdir m
"$CFSIO" gen src/H $((pool_size / 4)) || fail "cannot create src/H"
"$CFSIO" gen src/U $((pool_size / 8)) || fail "cannot create src/U"
"$CFSIO" gen src/C $((pool_size * 4)) || fail "cannot create src/C"
setfattr -n user.accelfs.global_buffers -v all src/H 2>/dev/null ||
	skip "SOURCE's file system ($(stat -f -c %T src)) has no user xattrs"
accel_mount "$PWD/src" "$PWD/m" -o "$opts"
nbh=$((pool_size / 4 / 65536))

cmp m/H src/H || fail "first read of H differs"
cmp m/U src/U || fail "first read of U differs"
pstat -i "$(file_id src/H)" >h0
[ "$(kv h0 quota)" != 0 ] || fail "H has no quota after an open with user.accelfs.global_buffers=all"
[ "$(kv h0 resident)" -ge "$nbh" ] || fail "H has $(kv h0 resident) buffers resident, want $nbh"
pstat -i "$(file_id src/U)" >u0
pstat >p0

# The cold stream, by another process, through the same mount and pool.
(cat m/C >/dev/null) || fail "streaming C failed"
pstat -i "$(file_id src/C)" >c1
pstat >p1
[ "$(kv c1 backend_read_bytes)" -ge $((pool_size * 4)) ] ||
	fail "C: $(kv c1 backend_read_bytes) bytes read from the backend; the cold stream did not go through the pool"
[ "$(delta p0 p1 evictions)" -ge $((pool_size / 65536)) ] ||
	fail "only $(delta p0 p1 evictions) evictions: the cold stream did not pressure the pool"

# exactly H's buckets: a read at end of file would probe one bucket more
dd if=m/H bs=64K count=$nbh status=none | cmp - src/H || fail "second read of H differs"
cmp m/U src/U || fail "second read of U differs"
pstat -i "$(file_id src/H)" >h1
pstat -i "$(file_id src/U)" >u1
att=$(delta h0 h1 global_attempts)
hits=$(delta h0 h1 global_hits)
[ "$att" -ge "$nbh" ] || fail "second read of H made $att global lookups, want >= $nbh"
pct=$((hits * 100 / att))
uatt=$(delta u0 u1 global_attempts)
echo "H (pinned): $hits/$att global hits ($pct %), $(delta h0 h1 backend_reads) backend reads"
echo "U (not pinned, for comparison): $(delta u0 u1 global_hits)/$uatt global hits"
echo "cold stream: $(delta p0 p1 evictions) evictions, $(delta p0 p1 fill_drops) fill drops"
[ "$pct" -ge 95 ] || fail "pinned H kept only $pct % hits under a stream of 4x the pool"
echo "PASS: pinned file kept $pct % hits while 4x the pool streamed through"
