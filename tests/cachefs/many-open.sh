#!/bin/bash
# SPDX-License-Identifier: MIT
# many-open.sh [OPTIONS]: more files open at once than the pool has file
# slots (issue 15, 2). 3,000 files are created and written (5 bytes each,
# every tenth of the last 1,000 fsync'ed) before any is closed, on a pool of 1,024 slots: every
# write, fsync and close succeeds and SOURCE has every file's bytes. With
# kernel_cache=never each write reaches the daemon at once and is deferred
# while the pool takes dirty buffers, and written through after that. (Every
# slot holding dirty buffers at once, so that a file finds none: the unit
# test cache-dirty, "more open streams than slots".) A handle whose slot went to
# another file must write through, never fail (EIO at close, ESTALE).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool many
command -v python3 >/dev/null || skip "python3 is needed to hold 3,000 files open"
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,global_cache=64M,flush_interval=60,deferred_write=on" "$@"
python3 - m src <<'PY' || fail "writes or closes failed with more open files than slots"
import os, resource, sys
mnt, src = sys.argv[1], sys.argv[2]
n = 3000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard < n + 64:
    hard = n + 64   # root may raise it
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, hard))
fds, bad = [], []
for i in range(n):
    fds.append(os.open(f"{mnt}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644))
for i, fd in enumerate(fds):
    try:
        assert os.write(fd, b"%04d\n" % i) == 5
        if i >= n - 1000 and i % 10 == 0:  # late: not to clean slots early
            os.fsync(fd)    # was ESTALE once the slot had gone to another file
    except OSError as e:
        bad.append(f"write/fsync f{i}: {e}")
for i, fd in enumerate(fds):
    try:
        os.close(fd)
    except OSError as e:
        bad.append(f"close f{i}: {e}")
for i in range(n):
    with open(f"{src}/f{i}", "rb") as f:
        got = f.read()
    if got != b"%04d\n" % i:
        bad.append(f"SOURCE f{i}: {got!r}")
print(f"{n} files, {len(bad)} failures", *bad[:10], sep="\n")
sys.exit(1 if bad else 0)
PY
echo "PASS: 3,000 files open at once on 1,024 slots ($*)"
