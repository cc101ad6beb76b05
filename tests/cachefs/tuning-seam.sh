#!/bin/bash
# SPDX-License-Identifier: MIT
# tuning-seam.sh: the per-file tuning contract (cache/tuning.h) across the
# seam between the tools and the daemon: each attribute set with `accel set`
# on a file changes what a mount does with that file, next to an untuned
# twin read or written the same way (per-file pool counters):
#   --readahead-max=0    no read-ahead for a sequential reader;
#   --local-buffers=0    no local buffer attempts;
#   --deferred-write=off no deferred writes for small writes;
#   --sync=relaxed       the open is logged and marked relaxed;
#   --global-buffers=N   the file's slot carries the quota.
# Each check fails if the daemon ignores the attribute.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool seam
[ -x "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
command -v python3 >/dev/null || skip "python3 is needed to drive the readers"
mkdir m
for f in RA RA0 L L0; do head -c $((8 << 20)) /dev/urandom >"src/$f"; done
: >src/DW
: >src/DW0
: >src/SR
echo data >src/Q
"$ACCEL" set -q src/RA0 --readahead-max=0 &&
	"$ACCEL" set -q src/L0 --local-buffers=0 &&
	"$ACCEL" set -q src/DW0 --deferred-write=off &&
	"$ACCEL" set -q src/SR --sync=relaxed &&
	"$ACCEL" set -q src/Q --global-buffers=7 ||
	skip "SOURCE's file system has no user extended attributes"
accel_mount "$PWD/src" "$PWD/m" -o "kernel_cache=never,pool=$POOL,bucket_size=64K,global_cache=16M"

# fcount FILE KEY: a per-file pool counter of FILE
fcount() { pstat -i "$(file_id "src/$1")" "$2"; }

seq_read() { python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
while os.read(fd, 4096): pass' "$1"; }
small_writes() { python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(200): os.write(fd, b"r%05d\n" % i)
os.close(fd)' "$1"; }

for f in RA RA0 L L0; do seq_read "m/$f" || fail "reading m/$f"; done
# read-ahead completes asynchronously: give the untuned twin's time to land
for _ in $(seq 50); do
	[ "$(fcount RA readahead_issued)" -gt 0 ] && break
	sleep 0.1
done
[ "$(fcount RA readahead_issued)" -gt 0 ] || fail "untuned RA: no read-ahead (test is void)"
[ "$(fcount RA0 readahead_issued)" = 0 ] ||
	fail "readahead_max=0: $(fcount RA0 readahead_issued) read-aheads issued"
[ "$(fcount L local_attempts)" -gt 0 ] || fail "untuned L: no local buffer attempts"
[ "$(fcount L0 local_attempts)" = 0 ] ||
	fail "local_buffers=0: $(fcount L0 local_attempts) local buffer attempts"

small_writes m/DW && small_writes m/DW0 || fail "small writes failed"
[ "$(fcount DW deferred_writes)" -gt 0 ] || fail "untuned DW: no deferred writes"
[ "$(fcount DW0 deferred_writes)" = 0 ] ||
	fail "deferred_write=off: $(fcount DW0 deferred_writes) deferred writes"
cmp <(python3 -c 'import sys
sys.stdout.buffer.write(b"".join(b"r%05d\n" % i for i in range(200)))') src/DW0 ||
	fail "DW0 on SOURCE differs"

small_writes m/SR || fail "writing m/SR"
grep -q "inode $(stat -c %i src/SR) opened with sync=relaxed" "$ACCEL_LOG" ||
	fail "sync=relaxed: the open was not relaxed: $(cat "$ACCEL_LOG")"

exec 3<m/Q
"$ACCEL" stat --pool "$POOL" --json | python3 -c 'import json,sys
files = json.load(sys.stdin)["files"]
q = [f["quota"] for f in files if f["path"].endswith("/src/Q")]
sys.exit(0 if q == [7] else "global_buffers=7: quota %s" % q)' || fail "global_buffers not applied"
exec 3<&-
echo "PASS: every tuning attribute set by accel changes what the daemon does"
