#!/bin/bash
# SPDX-License-Identifier: MIT
# xattr-absent.sh: extended attributes a node remembers as absent (issue 26;
# fuse/ops_xattr.c). ls -l asks for security.selinux and
# system.posix_acl_access of every entry at every listing, and on a network
# SOURCE each question is a round trip through a second FUSE client.
#  1. shared=on, attr_timeout=30: a second ls -l of 40 files makes no
#     getxattr on SOURCE (the daemon before this made 80), and shows what
#     SOURCE has;
#  2. an ACL set or removed through the mount shows at once (also a
#     directory's default ACL), though "absent" was known for 30 s;
#  3. shared=on, default timeouts: an ACL another host sets in SOURCE shows
#     within attr_timeout (1 s), as on the bare network mount;
#  4. a watcher (fanotify, then inotify) with attr_timeout=60: an ACL set in
#     SOURCE beside the mount, on a file and as a directory's default, shows
#     as soon as the watcher has it, not after the 60 s the daemon would
#     otherwise trust its answer (the directory's fails on a daemon that does
#     not forget at the watcher's report).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
command -v setfacl >/dev/null && command -v getfacl >/dev/null ||
	skip "setfacl and getfacl (package acl) are needed"
cfs_init
cfs_pool xabs
mkdir m m2 m3 m4 src/d
for i in $(seq 40); do echo "$i" >"src/d/f$i"; done
setfacl -m u:nobody:r src/d/f1 2>/dev/null || skip "SOURCE's file system takes no ACLs"
setfacl -b src/d/f1

# has_acl FILE: getfacl shows the entry for nobody
has_acl() { getfacl -cp "$1" 2>/dev/null | grep -q '^user:nobody:r--$'; }
has_dacl() { getfacl -cp "$1" 2>/dev/null | grep -q '^default:user:nobody:r-x$'; }
modes() { ls -l "$1" | awk 'NR > 1 { print $1, $NF }'; }

# 1. a second listing asks SOURCE nothing
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,shared=on,attr_timeout=30"
modes m/d >/dev/null || fail "ls -l m/d failed"
ls -ld m/d >/dev/null
cfs_strace calls.txt getxattr,lgetxattr,fgetxattr
modes m/d >got.txt
cfs_strace_stop
n=$(grep -v 'resumed>' calls.txt | grep -c 'getxattr(')
echo "getxattr on SOURCE during the second ls -l of 40 files: $n"
[ "$n" = 0 ] || fail "the second ls -l of 40 files made $n getxattr calls on SOURCE, want 0"
modes src/d >want.txt
cmp -s want.txt got.txt || fail "ls -l through the mount differs from SOURCE's: $(diff want.txt got.txt | head -3)"

# 2. a change through the mount shows at once
setfacl -m u:nobody:r m/d/f1 || fail "setfacl through the mount failed"
has_acl m/d/f1 || fail "an ACL set through the mount does not show there"
has_acl src/d/f1 || fail "an ACL set through the mount is not in SOURCE"
ls -l m/d/f1 | grep -q '^-rw-r--r--+ ' || fail "ls -l shows no ACL mark: $(ls -l m/d/f1)"
setfacl -b m/d/f1 || fail "setfacl -b through the mount failed"
! has_acl m/d/f1 || fail "an ACL removed through the mount still shows"
getfacl -cp m/d >/dev/null
setfacl -d -m u:nobody:rx m/d || fail "setfacl -d through the mount failed"
has_dacl m/d || fail "a default ACL set through the mount does not show there"
setfacl -k m/d
echo "changes through the mount show at once"

# 3. another host's change, in shared mode with its default timeouts
accel_mount "$PWD/src" "$PWD/m2" -o "pool=$POOL,shared=on"
modes m2/d >/dev/null
! has_acl m2/d/f2 || fail "m2/d/f2 shows an ACL it does not have"
setfacl -m u:nobody:r src/d/f2
sleep 1.5 # attr_timeout 1 s, and the time it started has passed
has_acl m2/d/f2 || fail "an ACL set in SOURCE does not show after attr_timeout (1 s)"
echo "another host's ACL shows after attr_timeout"

# 4. the watcher's report forgets what was known absent: of a file (whose
# node a lookup also replaces) and of a directory (whose node stays)
watched() {
	local mnt=$1 dir=$2
	modes "$mnt/$dir" >/dev/null
	! has_acl "$mnt/$dir/f" || fail "$mnt/$dir/f shows an ACL it does not have"
	! has_dacl "$mnt/$dir" || fail "$mnt/$dir shows a default ACL it does not have"
	setfacl -m u:nobody:r "src/$dir/f"
	setfacl -d -m u:nobody:rx "src/$dir"
	cfs_eventually 20 has_acl "$mnt/$dir/f" ||
		fail "$3: an ACL set in SOURCE did not show within 20 s (attr_timeout 60 s)"
	cfs_eventually 20 has_dacl "$mnt/$dir" ||
		fail "$3: a directory's default ACL set in SOURCE did not show within 20 s (attr_timeout 60 s)"
	echo "$3: ACLs set in SOURCE show when the watcher reports them"
}
mkdir src/w3 src/w4
echo x >src/w3/f
echo x >src/w4/f
accel_mount "$PWD/src" "$PWD/m3" -o "pool=$POOL,watch=auto,attr_timeout=60"
if wait_for 5000 fanotify wcount "$PWD/m3" watch; then
	watched m3 w3 fanotify
else
	echo "no fanotify watcher here (mode '$(wcount "$PWD/m3" watch)'): only inotify is checked"
fi
accel_mount "$PWD/src" "$PWD/m4" -o "pool=$POOL,watch=inotify,attr_timeout=60"
wait_for 5000 inotify wcount "$PWD/m4" watch ||
	fail "accel stat shows watch '$(wcount "$PWD/m4" watch)', not inotify"
watched m4 w4 inotify
echo "PASS: names known absent save SOURCE calls and never hide a change"
