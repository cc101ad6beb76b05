#!/bin/bash
# SPDX-License-Identifier: MIT
# flush-buffers.sh: writing back a file's deferred bytes costs no allocation
# and no open of its own (issue 16). 200 small files are created, written
# and closed through a mount with deferred write, the daemon traced with
# strace: no anonymous mmap of 1 MiB or more (the flush batch buffer is the
# worker thread's, not one per open file: glibc serves such blocks with
# mmap, and every munmap is a TLB shoot-down on each core), and no write-back
# descriptor opened through /proc/self/fd (a deferring handle's own
# descriptor is read-write and not O_APPEND, and serves). Every file's bytes
# are on SOURCE after its close. Except for O_DSYNC handles deferred under
# sync=relaxed: those write back through a descriptor opened without O_DSYNC.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool flushbuf
N=200
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,deferred_write=on"
# every worker thread takes its buffers at its first flush: warm them all
for i in $(seq 40); do printf 'warm %d\n' "$i" >"m/w$i"; done
cfs_strace trace mmap,openat
for i in $(seq $N); do printf 'file %d of %d\n' "$i" $N >"m/f$i"; done
cfs_strace_stop
for i in $(seq $N); do
	[ "$(cat "src/f$i")" = "file $i of $N" ] || fail "src/f$i: not what was written: $(cat "src/f$i")"
done
big=$(awk '/mmap\(NULL, [0-9]+,.*MAP_ANONYMOUS/ {
	sub(/.*mmap\(NULL, /, ""); if ($0 + 0 >= 1048576) n++ } END { print n + 0 }' trace)
wbfd=$(grep -c 'openat(AT_FDCWD, "/proc/self/fd/[0-9]*", O_WRONLY' trace)
echo "during $N files: $big anonymous mmaps of >= 1 MiB, $wbfd write-back opens"
# a thread that had not flushed before takes its buffer once: a few at most
[ "$big" -le 8 ] || fail "$big anonymous mmaps of >= 1 MiB for $N files: a buffer per file"
[ "$wbfd" = 0 ] || fail "$wbfd write-back descriptors opened for $N files"
echo "ok: write-back of $N files: no per-file buffer, no extra open"

# O_DSYNC handles deferred under sync=relaxed: their write-back must not go
# through their own descriptor, whose every write would wait for the device
# (a write-back descriptor per file, opened without O_DSYNC).
M=20
mkdir src/r mr
accel_mount "$PWD/src/r" "$PWD/mr" -o "pool=$POOL,deferred_write=on,sync=relaxed"
cfs_strace trace.r openat
python3 - mr "$M" <<'PY' || fail "O_DSYNC writes through the relaxed mount failed"
import os, sys
for i in range(int(sys.argv[2])):
    fd = os.open(f"{sys.argv[1]}/s{i}", os.O_CREAT | os.O_WRONLY | os.O_DSYNC, 0o644)
    os.write(fd, b"record %d\n" % i)
    os.close(fd)
PY
cfs_strace_stop
for i in $(seq 0 $((M - 1))); do
	[ "$(cat "src/r/s$i")" = "record $i" ] || fail "src/r/s$i: not what was written"
done
plain=$(grep -c 'openat(AT_FDCWD, "/proc/self/fd/[0-9]*", O_WRONLY|O_CLOEXEC[) ]' trace.r) # also a call strace split ("<unfinished ...>")
echo "O_DSYNC under sync=relaxed: $plain write-back descriptors without O_DSYNC for $M files"
[ "$plain" = "$M" ] || fail "$plain write-back descriptors for $M O_DSYNC files, want $M"
echo "PASS: write-back of $N files: no per-file buffer, no extra open; O_DSYNC ones apart"
