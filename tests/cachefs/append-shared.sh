#!/bin/bash
# SPDX-License-Identifier: MIT
# append-shared.sh: deferred appends (fuse/wb_append.c, issue 26). In shared
# mode (here shared=on over a local SOURCE) the kernel has no writeback cache
# and leaves O_APPEND writes for SOURCE to place; they used to go to SOURCE
# one by one. Now they are gathered and written at SOURCE's end, so that
# another writer's appends in between (another host's) are never
# overwritten. 16 KiB buckets, so that records cross bucket ends.
#  1. 1,000 appends of 120 B: deferred (>= 900), <= 60 backend writes, SOURCE
#     short of them while the file is open, the mount's fstat and a reader on
#     the mount see them all, SOURCE has them all at close;
#  2. another writer appends to SOURCE between two of ours: no record
#     overwritten, ours in order after it; after fsync a reader that held
#     the file open through the mount reads what SOURCE has;
#  3. an update at an offset by another handle between appends: both kept;
#  4. 300 appends of another writer on SOURCE during 1,000 of ours: every
#     record intact, each writer's in order, none lost.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool app
cfs_python
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,shared=on,bucket_size=16K,flush_interval=60"
accel_log_wait "shared mode: on" 30 || fail "shared=on is not in force: $(cat "$ACCEL_LOG")"

app() {
	"$PY" - "$@" <<'PY'
import os, sys, threading, time
R = 120
def rec(i, tag=b"a"): return tag + b"%0118d\n" % i
def records(data):
    assert len(data) % R == 0, f"{len(data)} bytes: not whole records"
    return [data[k:k + R] for k in range(0, len(data), R)]
def appender(path): return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
cmd, m, src = sys.argv[1], sys.argv[2], sys.argv[3]
if cmd == "many":
    fd = appender(m + "/A")
    want = b"".join(rec(i) for i in range(1000))
    for i in range(1000): os.write(fd, rec(i))
    assert os.fstat(fd).st_size == len(want), f"fstat while open: {os.fstat(fd).st_size}"
    held = os.stat(src + "/A").st_size
    assert held < len(want), f"SOURCE has all {held} bytes before close: nothing was deferred"
    got = open(m + "/A", "rb").read()
    assert got == want, f"a reader on the mount: {len(got)} bytes, not the {len(want)} written"
    os.close(fd)
    assert open(src + "/A", "rb").read() == want, "SOURCE differs after close"
elif cmd == "between":
    fd = appender(m + "/B")
    rfd = os.open(m + "/B", os.O_RDONLY)
    for i in range(10): os.write(fd, rec(i))
    o = appender(src + "/B"); os.write(o, rec(0, b"X")); os.close(o)
    for i in range(10, 20): os.write(fd, rec(i))
    os.fsync(fd)
    on_src = open(src + "/B", "rb").read()
    recs = records(on_src)
    assert len(recs) == 21, f"SOURCE holds {len(recs)} records, not 21: one was overwritten"
    assert [r for r in recs if r[:1] == b"a"] == [rec(i) for i in range(20)], "ours not in order"
    assert recs.count(rec(0, b"X")) == 1, "the other writer's record is gone"
    got = os.pread(rfd, 4096, 0)
    assert got == on_src, f"a reader open through the mount reads {len(got)} bytes " \
        f"differing from SOURCE's {len(on_src)} after the fsync"
    assert os.fstat(fd).st_size == len(on_src), "the mount's size is not SOURCE's"
    os.close(fd); os.close(rfd)
elif cmd == "update":
    fd = appender(m + "/C")
    for i in range(5): os.write(fd, rec(i))
    u = os.open(m + "/C", os.O_RDWR)
    os.pwrite(u, rec(99, b"u"), 0)
    for i in range(5, 10): os.write(fd, rec(i))
    os.close(u); os.close(fd)
    want = [rec(99, b"u")] + [rec(i) for i in range(1, 10)]
    for p in (src + "/C", m + "/C"):
        got = records(open(p, "rb").read())
        assert got == want, f"{p}: {len(got)} records, update or appends lost"
elif cmd == "race":
    stop = []
    def other():
        o = appender(src + "/D")
        for i in range(300):
            os.write(o, rec(i, b"Y")); time.sleep(0.0005)
        os.close(o)
    t = threading.Thread(target=other); t.start()
    fd = appender(m + "/D")
    for i in range(1000):
        os.write(fd, rec(i))
        if i % 50 == 0: time.sleep(0.002)
    os.close(fd); t.join()
    for p in (src + "/D", m + "/D"):
        recs = records(open(p, "rb").read())
        ours = [r for r in recs if r[:1] == b"a"]
        theirs = [r for r in recs if r[:1] == b"Y"]
        assert len(recs) == 1300, f"{p}: {len(recs)} records, not 1,300"
        assert ours == [rec(i) for i in range(1000)], f"{p}: ours torn, lost or out of order"
        assert theirs == [rec(i, b"Y") for i in range(300)], f"{p}: the other writer's torn or lost"
PY
}

pstat >p0
app many m src || fail "1: appends lost, or not deferred"
pstat >p1
w=$(delta p0 p1 backend_writes) d=$(delta p0 p1 deferred_writes)
echo "1: 1000 appends of 120 B -> $d deferred, $w backend writes"
[ "$d" -ge 900 ] || fail "1: only $d of 1000 appends were deferred"
[ "$w" -le 60 ] || fail "1: $w backend writes for 1000 appends (want <= 60)"
app between m src || fail "2: another writer's append between ours"
echo "2: an append on SOURCE between ours kept, the mount's reader follows"
app update m src || fail "3: an offset write between appends"
echo "3: an update between appends kept"
app race m src || fail "4: concurrent appender on SOURCE"
echo "4: 1,000 appends against 300 on SOURCE at once: all intact, each in order"
accel_umount "$PWD/m"
echo "PASS: appends deferred in shared mode, never over another writer's"
