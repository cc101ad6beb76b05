#!/bin/bash
# SPDX-License-Identifier: MIT
# close-to-open.sh [ACCELFS-OPTIONS...]: with the kernel page cache in front
# (default kernel_cache=auto), the promise is close-to-open, like NFS: once a
# change is complete (in SOURCE behind accelfs's back, or through another
# mount and closed), a later open sees it, its size included. Each change is
# followed by a pause longer than the default attr_timeout (1 s), so cached
# attributes cannot excuse a stale answer. Two mounts share one pool.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool c2o
mkdir mA mB
accel_mount "$PWD/src" "$PWD/mA" -o "pool=$POOL,global_cache=8M" "$@"
accel_mount "$PWD/src" "$PWD/mB" -o "pool=$POOL,global_cache=8M" "$@"
"$CFSIO" gen src/F 300000 || fail "cannot create src/F"
bad=""

# seen WHAT: after a pause, a new open through mB reads what SOURCE holds
seen() {
	sleep 1.2
	if cmp -s mB/F src/F; then
		echo "ok: $1"
	else
		echo "STALE: $1: mB/F has $(stat -c %s mB/F) bytes, SOURCE $(stat -c %s src/F)" \
			"($(cmp mB/F src/F 2>&1 | head -n1))"
		bad="$bad; $1"
	fi
	cat mB/F mA/F >/dev/null # both kernels cache the file again
}

# changes WHO DIR AT APPEND SIZE: WHO changes DIR/F in place (10,000 bytes
# from AT thousand), appends APPEND bytes, truncates it to SIZE; mB sees each
changes() {
	dd if=/dev/urandom of="$2/F" bs=1000 count=10 seek="$3" conv=notrunc status=none
	seen "$1 changed in place"
	head -c "$4" /dev/urandom >>"$2/F"
	seen "$1 appended to"
	truncate -s "$5" "$2/F"
	seen "$1 truncated"
}

cat mB/F mA/F >/dev/null
changes SOURCE src 7 3000 200000
changes mA mA 30 5000 100000
[ -z "$bad" ] || fail "stale after a completed change${bad}"
echo "PASS: close-to-open across SOURCE and two mounts"
