#!/bin/bash
# SPDX-License-Identifier: MIT
# flusher-unblocked.sh: the flusher writes deferred buckets back without
# holding up anything else. SOURCE is slowfs (scripts/bench/slowfs.c) with
# 5 s per write, so the flusher's write-back of file A is in flight for 5 s;
# slowfs's counters show it (writing=1). Opening and closing file B in the
# meantime must return while that write is still in flight -- before, the
# flusher held the daemon's open-file list lock across the write and every
# open and release waited for it. A's byte reaches SOURCE all the same.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool flushblk
command -v python3 >/dev/null || skip "python3 is needed to hold a file open"

mkdir m
printf 'aaaaaaaaaa' >src/A
printf 'b' >src/B
cfs_slowfs delay_ms=5000
writing() { sed -n 's/.*writing=\([0-9]*\).*/\1/p' "$PWD/slow/.slowfs-stats"; }

accel_mount "$PWD/slow" "$PWD/m" -o "pool=$POOL,writeback=off,flush_interval=0.5"
# A writer that keeps A open (a shell's "printf >&3" closes a dup: FUSE
# flush, which writes deferred bytes back at once); it closes A when fd 4
# closes. A job of cfs_bg, so a failed test does not leave it holding A; fd 4
# is opened after it starts (not inherited) and read-write (never blocks).
mkfifo ctl
cfs_bg python3 -c '
import os
fd = os.open("m/A", os.O_RDWR)
os.pwrite(fd, b"X", 0)
open("written", "w").close()
open("ctl").read()
os.close(fd)
'
WRITER=$CFS_BG
exec 4<>ctl
for _ in $(seq 400); do
	[ -e written ] && break
	sleep 0.05
done
[ -e written ] || fail "the writer did not write (deferred write: one 5 s read of SOURCE)"
[ "$(head -c 1 src/A)" = a ] || fail "the write was not deferred (SOURCE has it already)"

# the flusher picks A up after flush_interval and writes it back (5 s)
for _ in $(seq 200); do
	[ "$(writing)" = 1 ] && break
	sleep 0.05
done
[ "$(writing)" = 1 ] || fail "the flusher did not start writing A back"
: <m/B || fail "cannot open B"
[ "$(writing)" = 1 ] || fail "opening and closing B waited for the flusher's write-back of A"
echo "B opened and closed while A's write-back was in flight"

exec 4>&- # the writer closes A: flush (waits for the write in flight), nothing lost
wait "$WRITER" || fail "the writer failed"
[ "$(head -c 1 src/A)" = X ] || fail "A's deferred byte did not reach SOURCE"
[ "$(cat src/A)" = Xaaaaaaaaa ] || fail "A is $(cat src/A), expected Xaaaaaaaaa"
echo "PASS: the flusher does not hold up opens and releases"
