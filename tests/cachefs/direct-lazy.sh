#!/bin/bash
# SPDX-License-Identifier: MIT
# direct-lazy.sh: with backend_io=direct (the default in shared mode) the
# O_DIRECT descriptor for bucket fills is opened at the first fill, not at
# every open (issue 26): on a network SOURCE each open is a round trip, and
# files being created or written never fill a bucket (an untar opened one
# per file). strace counts the daemon's O_DIRECT opens for fills (the
# read-modify-write reader of deferred writes, O_NOATIME, is another): none
# while 50 files are created and written, then one when a file is read
# through the pool.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool lazy
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,shared=on"
accel_log_wait "shared mode: on" 30 || fail "shared=on is not in force: $(cat "$ACCEL_LOG")"
cfs_strace opens.txt openat,open
for i in $(seq 50); do head -c 100000 /dev/urandom >"m/f$i" || fail "writing m/f$i"; done
fills() { grep -v 'resumed>' opens.txt | grep O_DIRECT | grep -vc O_NOATIME; }
n=$(fills)
[ "$n" = 0 ] || fail "$n O_DIRECT opens while creating and writing 50 files: $(grep O_DIRECT opens.txt | grep -v O_NOATIME | head -3)"
cmp "m/f7" "src/f7" || fail "f7 read through the mount differs from SOURCE"
cfs_strace_stop
n=$(fills)
if grep -q "refuses O_DIRECT" "$ACCEL_LOG"; then
	echo "NOTE: SOURCE refuses O_DIRECT here: $(grep "refuses O_DIRECT" "$ACCEL_LOG")"
	[ "$n" = 1 ] || fail "$n O_DIRECT opens tried for one read, not 1"
else
	[ "$n" = 1 ] || fail "$n O_DIRECT opens for one read through the pool, not 1"
fi
echo "PASS: no O_DIRECT open for 50 files created and written; one at the first fill"
