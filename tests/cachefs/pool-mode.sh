#!/bin/bash
# SPDX-License-Identifier: MIT
# pool-mode.sh: pool segments and their failure modes, as a user meets them.
#  - a new pool is 0600 whatever the umask; pool_mode=0660 gives 0660;
#  - a pool larger than memory (global_cache=1T), or than /dev/shm (a 16 MiB
#    /dev/shm in a private mount namespace): exit 1, one line naming the
#    limit, nothing mounted, no segment left behind;
#  - an explicitly named pool that is garbage, all zeros, or empty: exit 1,
#    one clear line, nothing mounted, within the timeout.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
mkdir m

# mode_of TAG OPTS: mount with OPTS on a new pool; MODE: the segment's mode
umask 077
mode_of() {
	cfs_pool "$1"
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,global_cache=1M$2"
	accel_umount "$PWD/m"
	# gone before the next step looks for daemons on m (refused() below)
	accel_wait_exit "$ACCEL_PID" 10 || fail "daemon still running after unmount"
	MODE=$(stat -c %a "/dev/shm$POOL")
}
mode_of mode ""
[ "$MODE" = 600 ] || fail "a new pool is $MODE, not 0600"
mode_of wide ,pool_mode=0660
[ "$MODE" = 660 ] || fail "pool_mode=0660 gave $MODE"
echo "ok: new pools are 0600, pool_mode=0660 gives 0660"

cfs_pool big
refused "pool larger than memory" 'physical memory.*[0-9]+ bytes' -- -o "pool=$POOL,global_cache=1T"
[ ! -e "/dev/shm$POOL" ] || fail "the refused 1T pool left /dev/shm$POOL behind"

cfs_pool shmfull
if unshare -m true 2>/dev/null; then
	refused "pool larger than /dev/shm" '/dev/shm.*[0-9]+ bytes.*size=' \
		unshare -m sh -c 'mount -t tmpfs -o size=16m tmpfs /dev/shm && exec "$@"' sh -- \
		-o "pool=$POOL,global_cache=64M"
else
	echo "NOTE: no private mount namespace (unshare -m); /dev/shm limit not tested"
fi

cfs_pool garbage
head -c $((1 << 20)) /dev/urandom >"/dev/shm$POOL"
sum=$(sha256sum <"/dev/shm$POOL")
refused "garbage pool" "$POOL" -- -o "pool=$POOL"
[ "$(sha256sum <"/dev/shm$POOL")" = "$sum" ] || fail "the daemon wrote into a foreign segment"

cfs_pool zeros
head -c $((1 << 20)) /dev/zero >"/dev/shm$POOL"
refused "all-zero pool" "$POOL" -- -o "pool=$POOL"

cfs_pool empty
: >"/dev/shm$POOL"
refused "empty pool segment" "$POOL" -- -o "pool=$POOL"
echo "PASS: pool modes, size limits and bad segments"
