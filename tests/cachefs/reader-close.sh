#!/bin/bash
# SPDX-License-Identifier: MIT
# reader-close.sh [OPTIONS]: a reader closing or fsync'ing while a writer in
# the same process has deferred (unflushed) bytes (issue 15, 3). 100 rounds
# of: write a record, `with open(f) as r: r.read()` (sees it), fsync of a
# read-only descriptor (the record is on SOURCE when it returns). Deferred
# bytes go back through the daemon's own writable descriptor, never the
# caller's read-only one: no EBADF, and nothing lost at the writer's close.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool rdclose
command -v python3 >/dev/null || skip "python3 is needed to drive the reader and writer"
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,flush_interval=60,deferred_write=on" "$@"
python3 - m/F src/F <<'PY' || fail "a reader's close or fsync failed, or data is missing"
import os, sys
path, src = sys.argv[1], sys.argv[2]
w = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
want = b""
for i in range(100):
    rec = b"%0119d\n" % i
    assert os.write(w, rec) == len(rec)
    want += rec
    with open(path, "rb") as r:          # close of a reader: no EBADF
        assert r.read() == want, f"round {i}: reader did not see the deferred bytes"
    r = os.open(path, os.O_RDONLY)
    os.fsync(r)                          # fsync of a reader: the file's bytes reach SOURCE
    os.close(r)
    with open(src, "rb") as s:
        got = s.read()
    assert got == want, f"round {i}: SOURCE has {len(got)} bytes after fsync, want {len(want)}"
os.close(w)
with open(src, "rb") as s:
    assert s.read() == want, "SOURCE differs after the writer's close"
print("100 of 100 rounds")
PY
! grep -q "Bad file descriptor" "$ACCEL_LOG" || { cat "$ACCEL_LOG"; fail "the daemon logged EBADF"; }
# Once every handle is released the daemon holds F open for writing no more
# (exec of it in SOURCE would fail with ETXTBSY). RELEASE is asynchronous.
writable_fds() {
	local f flags
	for f in /proc/"$ACCEL_PID"/fd/*; do
		[ "$(readlink "$f")" = "$PWD/src/F" ] || continue
		# flags are octal; the access mode is the last digit's low bits
		flags=$(sed -n 's/^flags:[[:space:]]*//p' /proc/"$ACCEL_PID"/fdinfo/"${f##*/}")
		[ $((0$flags & 3)) != 0 ] && echo "${f##*/}"
	done
}
for _ in $(seq 50); do
	[ -z "$(writable_fds)" ] && break
	sleep 0.1
done
[ -z "$(writable_fds)" ] || fail "the daemon still holds SOURCE's F open for writing after the last close"
echo "PASS: readers close and fsync while a writer has deferred bytes ($*)"
