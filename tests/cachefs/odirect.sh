#!/bin/bash
# SPDX-License-Identifier: MIT
# odirect.sh: application O_DIRECT writes (issue 15, 4). Aligned writes of
# 512 B, 4 KiB, 64 KiB and 1 MiB through an O_DIRECT descriptor, then reads
# through another O_DIRECT descriptor, under the default options,
# bucket_size=4K, deferred_write=off, cache=off and writeback=off: every
# write returns its size (as on ext4, checked first on SOURCE itself),
# close returns 0, the reads see the bytes and SOURCE has them. SOURCE is an
# ext4 image on a loop device, which accepts O_DIRECT; without loop devices
# SOURCE is a plain directory of the test's, and the test then checks only
# that nothing is lost (it may be tmpfs, which refuses O_DIRECT itself).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
command -v python3 >/dev/null || skip "python3 is needed to drive O_DIRECT I/O"

kind=plain
cfs_ext4_src 64M && kind=ext4
[ $kind = ext4 ] || echo "NOTE: $CFS_WHY: SOURCE is a plain directory; checking that nothing is lost"

odirect() { # odirect DIR: the writes and reads, in DIR
	python3 - "$1" <<'PY'
import mmap, os, sys
d = sys.argv[1]
for size in (512, 4096, 65536, 1 << 20):
    buf = mmap.mmap(-1, size)            # page-aligned, as O_DIRECT wants
    pat = bytes((size + i) % 251 for i in range(size))
    buf.write(pat)
    p = f"{d}/d{size}"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_DIRECT, 0o644)
    for k in range(3):                    # three aligned writes back to back
        n = os.pwrite(fd, buf, k * size)
        assert n == size, f"{p}: write {k} returned {n}"
    os.close(fd)                          # raises on a failed close
    fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
    rb = mmap.mmap(-1, size)
    for k in range(3):
        n = os.preadv(fd, [rb], k * size)
        assert n == size and rb[:] == pat, f"{p}: O_DIRECT read {k} differs ({n} bytes)"
    os.close(fd)
PY
}
check_src() { # check_src TAG: SOURCE has what odirect wrote
	python3 - src "$1" <<'PY'
import sys
d, tag = sys.argv[1], sys.argv[2]
for size in (512, 4096, 65536, 1 << 20):
    pat = bytes((size + i) % 251 for i in range(size))
    got = open(f"{d}/d{size}", "rb").read()
    assert got == pat * 3, f"{tag}: SOURCE d{size} has {len(got)} bytes, want {3 * size}"
PY
}

if [ $kind = ext4 ]; then
	odirect src || fail "O_DIRECT I/O failed on ext4 itself"
fi
mkdir m
n=0
for opts in "" bucket_size=4K deferred_write=off cache=off writeback=off; do
	n=$((n + 1))
	cfs_pool "od$n"
	rm -f src/d*
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL${opts:+,$opts}"
	odirect m || fail "O_DIRECT I/O through the mount failed (${opts:-default})"
	check_src "${opts:-default}" || fail "SOURCE lacks O_DIRECT writes (${opts:-default})"
	accel_umount "$PWD/m" || fail "unmount"
	accel_wait_exit "$ACCEL_PID" 10 || fail "daemon did not exit"
	check_src "${opts:-default}, after unmount" || fail "SOURCE changed at unmount"
	echo "ok: ${opts:-default} ($kind)"
done
echo "PASS: O_DIRECT writes and reads on $kind"
