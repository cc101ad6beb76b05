#!/bin/bash
# SPDX-License-Identifier: MIT
# source-calls.sh CASE: system calls the daemon makes on SOURCE (issue 26).
# On a network SOURCE each is a round trip, so the count is the cost; strace
# counts them (a count, not a time: the same on a busy machine).
#   untar  per file while tar extracts 100 small files through a default
#          mount: fails above 17.5; the daemon before issue 26's second cut
#          made 20 (a stat again for a SETATTR's reply the SETATTR had just
#          taken, the times set again at close although SOURCE had them, a
#          second fstat at release, a getxattr of security.capability for a
#          file it had just made)
#   open   the tuning attributes (user.accelfs.*) are listed once, not at
#          every open: 50 opens of a file make no flistxattr (the daemon
#          before this made 50); one set straight on SOURCE (its ctime
#          moves) or through the mount is read at the next open and used
#   listing  in shared mode, a READDIRPLUS takes each entry's attributes
#          as SOURCE's client has them from the listing the daemon just
#          read (a statx without AT_STATX_FORCE_SYNC), where a LOOKUP asks
#          the server (forced): ls -l of 40 files makes no forced statx (the
#          daemon before this made 40, one request more per entry, one after
#          the other), a stat of a name not listed makes one; the listing
#          reads the directory with two getdents64, its entries and its end
#          (the daemon before this read the end again for the kernel's
#          READDIR after it: three); then 1,500 names listed whole, also
#          4 KiB at a time
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool calls
case=${1:-untar}
if [ "$case" = listing ]; then
	mkdir m src/d src/e
	for i in $(seq 40); do echo "$i" >"src/d/f$i"; done
	echo x >src/e/g
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,shared=on"
	cfs_strace calls.txt statx,newfstatat,getdents64
	n=$(ls -l m/d | grep -c ' f[0-9]*$')
	stat m/e/g >/dev/null || fail "stat m/e/g failed"
	cfs_strace_stop
	[ "$n" = 40 ] || fail "ls -l m/d listed $n files, want 40"
	grep -v 'resumed>' calls.txt | grep -c '"f[0-9]*", .*AT_STATX_FORCE_SYNC' >forced.txt
	grep -v 'resumed>' calls.txt | grep -c '"f[0-9]*", ' >listed.txt
	echo "statx of listed names: $(cat listed.txt), forced to the server: $(cat forced.txt)"
	[ "$(cat listed.txt)" -ge 40 ] || fail "the listing's entries were not looked up on SOURCE"
	[ "$(cat forced.txt)" = 0 ] ||
		fail "ls -l of 40 files forced $(cat forced.txt) stats to SOURCE's server, want 0"
	grep -v 'resumed>' calls.txt | grep -q '"g", .*AT_STATX_FORCE_SYNC' ||
		fail "a LOOKUP of a name not listed did not force its stat to the server"
	# the kernel's READDIR after the reply that held the end: answered
	# without reading SOURCE again (entries, then the end: two getdents64)
	gd=$(grep -v 'resumed>' calls.txt | grep -c 'getdents64(')
	echo "getdents64 on SOURCE for ls -l of one directory: $gd"
	[ "$gd" -le 2 ] || fail "ls -l of one directory read it $gd times on SOURCE, want 2 at most"
	# A listing of many requests: every name once, each with its own size
	mkdir src/big
	python3 -c 'import sys
for i in range(1, 1501):
    open("src/big/n%0*d" % (i % 60 + 5, i), "wb").write(b"\0" * (i % 97))' || fail "cannot make src/big"
	(cd src/big && find . -mindepth 1 -printf '%s %f\n' | sort) >want.txt
	(cd m/big && find . -mindepth 1 -printf '%s %f\n' | sort) >got.txt || fail "find through the mount failed"
	cmp -s want.txt got.txt || fail "the listing of 1,500 names differs from SOURCE's: $(diff want.txt got.txt | head -5)"
	[ "$(ls -a m/big | wc -l)" = 1502 ] || fail "ls -a listed $(ls -a m/big | wc -l) names, want 1502"
	# in 4 KiB requests (a 4 KiB getdents64): many replies, each ended by a name that did not fit
	"$CFSIO" list m/big 4096 | sort >got4k.txt || fail "cfsio list through the mount failed"
	ls -a src/big | sort >want4k.txt
	cmp -s want4k.txt got4k.txt ||
		fail "listed 4 KiB at a time, the names differ from SOURCE's: $(diff want4k.txt got4k.txt | head -5)"
	echo "PASS: a listing's entries take the attributes of the listing; a LOOKUP asks the server; 1,500 names listed whole"
	exit 0
fi
if [ "$case" = open ]; then
	command -v setfattr >/dev/null || skip "setfattr (package attr) is needed"
	mkdir m
	head -c 100000 /dev/urandom >src/F
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL"
	cat m/F >/dev/null || fail "cannot read m/F"
	# opens: N opens of m/F, flistxattr calls on SOURCE meanwhile
	opens() {
		cfs_strace calls.txt flistxattr,listxattr
		for _ in $(seq "$1"); do cat m/F >/dev/null || fail "cannot read m/F"; done
		sleep 0.3 # the asynchronous RELEASEs
		cfs_strace_stop
		grep -v 'resumed>' calls.txt | grep -c 'listxattr('
	}
	n=$(opens 50)
	[ "$n" = 0 ] || fail "50 opens of an unchanged file listed its attributes $n times, want 0"
	setfattr -n user.accelfs.readahead_max -v 3M src/F || fail "setfattr on SOURCE failed"
	n=$(opens 1)
	[ "$n" = 1 ] || fail "an attribute set on SOURCE: the next open listed $n times, want 1"
	"$ACCEL" set -q m/F --readahead-max=5M || fail "accel set through the mount failed"
	n=$(opens 3)
	[ "$n" = 1 ] || fail "an attribute set through the mount: 3 opens listed $n times, want 1"
	"$ACCEL" show m/F | grep -q "5M\|5242880" || fail "accel show: $("$ACCEL" show m/F)"
	echo "PASS: the tuning attributes are listed once per change of the file, not per open"
	exit 0
fi
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
