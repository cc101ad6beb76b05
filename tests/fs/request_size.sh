#!/bin/bash
# SPDX-License-Identifier: MIT
# request_size.sh: the kernel sends 1 MiB WRITE and READ requests (accel_init
# asks max_write = 1 MiB; libfuse answers FUSE_MAX_PAGES with 256 pages, the
# default fs.fuse.max_pages_limit), on either libfuse. Seen in the -d trace:
# a 1 MiB WRITE has insize 1 MiB + its 80-byte header, a 1 MiB READ reply
# outsize 1 MiB + 16. kernel_cache=never: every read(2) and write(2) of 4 MiB
# reaches the daemon, split only by the request size.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
limit=$(cat /proc/sys/fs/fuse/max_pages_limit 2>/dev/null || echo 256)
[ "$limit" -ge 256 ] || skip "fs.fuse.max_pages_limit is $limit (< 256 pages)"

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
accel_mount "$base/src" "$base/mnt" -d -o kernel_cache=never
dd if=/dev/zero of="$base/mnt/f" bs=4M count=2 status=none || fail "write failed"
dd if="$base/mnt/f" of=/dev/null bs=4M status=none || fail "read failed"
accel_umount "$base/mnt" || fail "unmount failed"

# biggest N in "opcode: OP ... insize: N" / the reply lines that follow READs
wmax=$(grep -a 'opcode: WRITE' "$ACCEL_LOG" | sed -n 's/.*insize: \([0-9]*\).*/\1/p' | sort -n | tail -1)
# (over /dev/fuse the reply line says "success, outsize: N" with the 16-byte
# header; over FUSE over io_uring, the default when the fuse module offers
# it, "result=N")
rmax=$(grep -a -A1 'opcode: READ ' "$ACCEL_LOG" |
	sed -n -e 's/.*success, outsize: \([0-9]*\).*/\1/p' -e 's/.*result=\([0-9]*\).*/\1/p' |
	sort -n | tail -1)
echo "largest WRITE request ${wmax:-none} bytes, largest READ reply ${rmax:-none} bytes"
[ "${wmax:-0}" -ge 1048576 ] || fail "no 1 MiB WRITE request (largest: ${wmax:-none})"
[ "${rmax:-0}" -ge 1048576 ] || fail "no 1 MiB READ reply (largest: ${rmax:-none})"
echo "PASS: 1 MiB WRITE and READ requests"
