#!/bin/bash
# SPDX-License-Identifier: MIT
# warm-restart.sh: the pool outlives its daemon (KEEP, as RMS and z/OS LE
# keep storage): unmount, mount again on the same pool, and a file read
# before is served with zero backend reads. A file changed in SOURCE while
# nothing was mounted is read fresh, never from its old buffers. A daemon
# killed with SIGKILL leaves the pool warm too. With pool_keep=no the pool is
# removed at unmount (FREE). Asking an existing pool for another size is
# warned about (the pool keeps its geometry).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool warm
opts="kernel_cache=never,pool=$POOL,global_cache=16M,bucket_size=64K,local_buffers=0"
mkdir m
"$CFSIO" gen src/F $(((2 << 20) + 99)) || fail "cannot create src/F"
"$CFSIO" gen src/G $((1 << 20)) || fail "cannot create src/G"
nbF=$((((2 << 20) + 99 + 65535) / 65536))

# warm_f WHEN: F read through m must come all from the pool, no backend read
# (its counters before and after the read are left in fa and fb)
warm_f() {
	pstat -i "$(file_id src/F)" >fa
	cmp m/F src/F || fail "F $1 differs"
	pstat -i "$(file_id src/F)" >fb
	[ "$(delta fa fb backend_reads)" = 0 ] ||
		fail "F $1: $(delta fa fb backend_reads) backend reads, want 0 (warm pool)"
}

accel_mount "$PWD/src" "$PWD/m" -o "$opts"
cmp m/F src/F || fail "first read of F differs"
cmp m/G src/G || fail "first read of G differs"
accel_umount "$PWD/m"
[ -e "/dev/shm${POOL}" ] || fail "the pool was removed at unmount (pool_keep defaults to yes)"

# G changes while nothing is mounted: same size, new bytes, new mtime
"$CFSIO" gen src/G.new $((1 << 20)) || fail "cannot create the new G"
cat src/G.new >src/G
touch -d '+2 seconds' src/G

accel_mount "$PWD/src" "$PWD/m" -o "$opts"
warm_f "after the remount"
[ "$(delta fa fb global_hits)" -ge "$nbF" ] ||
	fail "F after the remount: $(delta fa fb global_hits) global hits, want >= $nbF"
cmp m/G src/G || fail "G changed while unmounted: the old buffers were served"
echo "ok: remount served F from the pool with 0 backend reads; changed G read fresh"

# a daemon killed outright leaves the pool warm as well
cfs_kill9 "$PWD/m" $(accel_daemon_pids "$PWD/m")
accel_mount "$PWD/src" "$PWD/m" -o "$opts"
warm_f "after SIGKILL and remount"
echo "ok: after SIGKILL the remounted daemon found F in the pool"
accel_umount "$PWD/m"

# another size asked of the existing pool: it keeps its own, and says so
accel_mount "$PWD/src" "$PWD/m" -o "${opts/global_cache=16M/global_cache=32M}"
grep -q "pool $POOL already exists with 256 buffers of 64 KiB (16 MiB).*accel pool --reset" \
	"$ACCEL_LOG" || fail "no warning that global_cache=32M does not resize the pool: $(cat "$ACCEL_LOG")"
accel_umount "$PWD/m"
echo "ok: global_cache= on an existing pool of another size is warned about"

# FREE: pool_keep=no removes the pool at unmount
accel_mount "$PWD/src" "$PWD/m" -o "$opts,pool_keep=no"
cmp m/F src/F || fail "F through the pool_keep=no mount differs"
cfs_umount_exit "$PWD/m"
[ ! -e "/dev/shm${POOL}" ] || fail "pool_keep=no left /dev/shm${POOL} behind"
echo "PASS: warm restart keeps the pool, validates against SOURCE, pool_keep=no frees it"
