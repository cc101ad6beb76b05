#!/bin/bash
# SPDX-License-Identifier: MIT
# deferred-enospc.sh: a deferred flush that fails is never dropped silently.
# SOURCE is a tiny ext4 on a loop device, nearly full. Records written
# through accelfs are accepted (they wait in the pool); close() returns
# ENOSPC, the daemon logs it and counts flush_errors. Then, with space freed:
# fsync reports an earlier failure once, and data written after it reaches
# SOURCE intact. Part 2: the same at the close of a file that asks for
# deferral (accel set) on the default mount, which defers nothing itself.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool dwnospc
command -v python3 >/dev/null || skip "python3 is needed to drive record I/O"
cfs_ext4_src 8M -m 0 || skip "$CFS_WHY"
# leave ~64 KiB free: 200 KiB of records will not fit
avail=$(($(stat -f -c '%a' src) * 4096))
fallocate -l $((avail - 65536)) src/filler || fail "fallocate filler"
sync

mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "kernel_cache=never,pool=$POOL,flush_interval=60"
pstat >p0
# close_enospc FILE records|pages: write FILE through the mount, each write
# accepted, and expect its close to fail with ENOSPC. records: 1,700 records
# of 120 bytes from the start (204,000 bytes); pages: one 4 KiB page every
# 64 KiB, 64 of them, which the writeback cache sends as 64 small WRITEs.
close_enospc() {
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
path, how = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
if how == "records":
    for i in range(1700):
        assert os.write(fd, b"%0119d\n" % i) == 120
else:
    for i in range(64):
        assert os.pwrite(fd, b"%04095d\n" % i, i * 65536) == 4096
try:
    os.close(fd)
except OSError as e:
    assert e.errno == errno.ENOSPC, f"close failed with {e}, want ENOSPC"
    print(f"close ({how}): ENOSPC, as it must")
    sys.exit(0)
sys.exit("close succeeded although SOURCE had no room")
PY
}
close_enospc m/R records || fail "ENOSPC was not reported at close"
pstat >p1
[ "$(delta p0 p1 flush_errors)" -ge 1 ] || fail "flush_errors was not counted"
grep -q "deferred write failed: No space left on device" "$ACCEL_LOG" ||
	fail "the daemon did not log the failed flush: $(cat "$ACCEL_LOG")"
# nobody is left to retry: at release the bytes that never reached SOURCE
# are dropped (dirty_lost, logged), so no mount serves them
for _ in $(seq 40); do
	[ "$(pstat dirty_lost)" -ge 1 ] && break
	sleep 0.05
done
[ "$(pstat dirty_lost)" -ge 1 ] || fail "the unwritable buffers were not dropped at release"
grep -q "deferred buffers could not be written (No space left on device): dropped" "$ACCEL_LOG" ||
	fail "the drop was not logged: $(cat "$ACCEL_LOG")"
cmp m/R src/R || fail "the mount serves bytes SOURCE does not have"

# with room again, writes go through and a later fsync succeeds
rm -f src/filler src/R
python3 - m/S <<'PY' || fail "after freeing space, data did not reach SOURCE"
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
for i in range(1700):
    os.write(fd, b"%0119d\n" % i)
os.fsync(fd)
os.close(fd)
PY
python3 - src/S <<'PY' || fail "SOURCE has wrong data"
import sys
want = b"".join(b"%0119d\n" % i for i in range(1700))
assert open(sys.argv[1], "rb").read() == want
PY
accel_umount "$PWD/m"

# The default mount under the writeback cache defers nothing
# (deferred_write=auto) and answers the connection's first clean FLUSH
# ENOSYS; a file whose attribute asks for deferral still defers, and its
# failed write-back must still reach close, not be taken for that answer.
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,flush_interval=60"
cfs_wait_init
grep -q "writeback cache on.*deferred write off" "$ACCEL_LOG" || {
	echo "SKIP (part 2): no writeback cache with deferral off here: $(grep mounted "$ACCEL_LOG")"
	echo "PASS (part 1 only): ENOSPC of a deferred flush reported at close, logged, counted"
	exit 0
}
avail=$(($(stat -f -c '%a' src) * 4096))
fallocate -l $((avail - 65536)) src/filler || fail "fallocate filler"
: >src/T
"$ACCEL" set -q src/T --deferred-write=on || fail "accel set --deferred-write=on src/T"
sync
pstat >p2
# each small WRITE is deferred; 64 pages do not fit in 64 KiB. This close
# is the connection's first FLUSH: one clean close through the mount before
# it would have been answered ENOSYS, and no FLUSH would come again.
close_enospc m/T pages || fail "ENOSPC was not reported at close under deferred_write=auto"
pstat >p3
[ "$(delta p2 p3 deferred_writes)" -ge 1 ] || fail "nothing was deferred: the case tests nothing"
[ "$(delta p2 p3 flush_errors)" -ge 1 ] || fail "flush_errors was not counted under auto"
echo "PASS: ENOSPC of a deferred flush reported at close, logged, counted; nothing else lost"
