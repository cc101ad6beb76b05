#!/bin/bash
# SPDX-License-Identifier: MIT
# readahead-delay.sh: read-ahead sized by SOURCE's delay (issue 26). SOURCE
# is slowfs (scripts/bench/slowfs.c), every read held 20 ms, counting the
# most bytes its reads had in that delay at once (read_max). A 24 MiB file
# read sequentially through the mount:
#  1. with readahead_latency_max=0 the window stays at readahead_max (1M);
#  2. by default the daemon measures the delay (accel stat: readahead_delay_us,
#     15 ms or more: every read waits 20 ms), and the window grows by it:
#     5 MiB or more in flight on SOURCE at once (7 MiB here), more than with 1.;
#  3. the bytes are right both times.
# Before, the window never passed readahead_max and the kernel's reads,
# reaching the daemon two at a time in either order, restarted it at two
# buckets (3.5 MiB in flight at most; there was no delay to show). Each
# read starts on an empty pool.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool radelay
command -v python3 >/dev/null || skip "python3 is needed to read accel stat's JSON"

head -c $((24 << 20)) /dev/urandom >src/F || fail "cannot make src/F"
mkdir m
cfs_slowfs delay_ms=20
read_max() { sed -n 's/.*read_max=\([0-9]*\).*/\1/p' "$PWD/slow/.slowfs-stats"; }
read_bytes() { sed -n 's/.* read_bytes=\([0-9]*\).*/\1/p' "$PWD/slow/.slowfs-stats"; }

# seq_read OPTS: mount with OPTS on an empty pool and read src/F through it
# (slowfs keeps the most ever in flight: the read expected larger goes second)
seq_read() {
	accel_umount "$PWD/m"
	rm -f "/dev/shm$POOL"
	accel_mount "$PWD/slow" "$PWD/m" -o "pool=$POOL,$1"
	cmp m/F src/F || fail "$1: the bytes read through the mount differ from SOURCE's"
}

seq_read readahead_latency_max=0
fixed=$(read_max) once=$(read_bytes)
echo "readahead_latency_max=0: at most $fixed bytes in flight on SOURCE"

seq_read readahead_latency_max=8M
grown=$(read_max) twice=$(read_bytes)
echo "SOURCE read $once bytes for the first read of 24 MiB, $((twice - once)) for the second"
if [ "$grown" -lt $((5 << 20)) ]; then # a busy machine issues late: once more
	seq_read readahead_latency_max=8M
	grown=$(read_max)
fi
echo "readahead_latency_max=8M: at most $grown bytes in flight on SOURCE"
[ "$grown" -ge $((5 << 20)) ] ||
	fail "the window did not grow with SOURCE's delay: at most $grown bytes in flight (want >= 5 MiB)"
[ "$grown" -gt "$fixed" ] || fail "in flight: $grown with the delay, $fixed without"

delay=""
for i in $(seq 50); do
	delay=$("$ACCEL" stat --json --mount m |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["mounts"][0]["readahead_delay_us"])')
	[ "${delay:-0}" -gt 0 ] && break
	sleep 0.1
done
echo "accel stat: SOURCE's delay ${delay} us a read"
[ "${delay:-0}" -ge 15000 ] || fail "readahead_delay_us ${delay:-none}, want >= 15000 (20 ms a read)"
"$ACCEL" stat --mount m | grep -Eq "read-ahead .*SOURCE's delay [0-9.]+ ms a read" ||
	fail "accel stat's text does not show the delay: $("$ACCEL" stat --mount m | grep read-ahead)"
echo "PASS: the read-ahead window grows with SOURCE's delay, the bytes are right"
