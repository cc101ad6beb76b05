#!/bin/bash
# SPDX-License-Identifier: MIT
# source-calls.sh: how many system calls the daemon makes on SOURCE per
# file while tar extracts 100 small files through a default mount (issue
# 26). On a network SOURCE each is a round trip, so the count is the cost;
# strace counts them (a count, not a time: the same on a busy machine).
# Fails above 17.5 per file; the daemon before issue 26's second cut made
# 20 (a stat again for a SETATTR's reply the SETATTR had just taken, the
# times set again at close although SOURCE had them, a second fstat at
# release, a getxattr of security.capability for a file it had just made).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool calls
N=100
LIMIT=17.5
CALLS=newfstatat,statx,openat,close,utimensat,chmod,fchmod,fchownat,pwrite64,pwritev,getxattr,fgetxattr,lgetxattr,flistxattr,listxattr,readlink,name_to_handle_at,open_by_handle_at,fsync,fdatasync,ftruncate,copy_file_range
mkdir m tree
for i in $(seq $N); do echo "record $i" >"tree/f$i"; done
tar -C tree -cf files.tar . || fail "cannot make the archive"
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL"
cfs_strace calls.txt "$CALLS"
(cd m && tar -xf ../files.tar) || fail "tar -x through the mount failed"
sleep 0.5 # the asynchronous RELEASEs
cfs_strace_stop
diff -r tree m >/dev/null || fail "the extracted files differ from the archive's"
n=$(grep -vc 'resumed>' calls.txt)
per=$(awk -v n="$n" -v f=$N 'BEGIN { printf "%.1f", n / f }')
echo "SOURCE calls per file: $per ($n for $N files; limit $LIMIT); by call:"
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' calls.txt | sort | uniq -c | sort -rn | head -12
awk -v p="$per" -v l="$LIMIT" 'BEGIN { exit !(p <= l) }' ||
	fail "tar -x made $per SOURCE calls per file, more than $LIMIT"
echo "PASS: tar -x of $N files: $per SOURCE calls per file (at most $LIMIT)"
