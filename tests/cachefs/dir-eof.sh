#!/bin/bash
# SPDX-License-Identifier: MIT
# dir-eof.sh: where the kernel opens directories itself (a watcher, the
# kernel checking permissions: dir-noopendir), its READDIR past the last
# entry of a listing the daemon just sent is answered without reading the
# directory again (ops_dir.c, eof_take). A first `find -ls` of 31 small
# directories opens each once in the daemon (twice before: strace). What is
# listed equals SOURCE, also for a directory of 3,000 names read in several
# requests; a name created through the mount right after a listing, and one
# created in SOURCE, are both in the next listing.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}
cfs_init
cfs_pool direof
mkdir m
for d in $(seq 30); do
	mkdir -p "src/t/d$d"
	for i in $(seq "$d"); do echo "$i" >"src/t/d$d/f$i"; done
done
mkdir src/big
(cd src/big && seq 3000 | sed 's/^/name-with-some-length-/' | xargs touch)
tree() { (cd "$1" && find . -printf '%p %y %s %m\n' | sort); }

accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,allow_other"
watch_require "$PWD/m"
ls m >/dev/null # the first OPENDIR, answered ENOSYS: the kernel opens directories from now on
cfs_strace trace openat
find m/t -ls >/dev/null
cfs_strace_stop
opens=$(grep -c '"\.", O_RDONLY' trace)
echo "first find -ls of 31 directories: the daemon opened directories $opens times"
[ "$opens" -eq 31 ] || fail "$opens opens of a directory for 31 listings, want 31 (one each)"
[ "$(tree m/t)" = "$(tree src/t)" ] || fail "the mount's listing of t differs from SOURCE's"
[ "$(tree m/big)" = "$(tree src/big)" ] || fail "the listing of 3,000 names differs from SOURCE's"
[ "$(ls -f m/big | grep -c name-with)" = 3000 ] || fail "ls -f of big lists not 3,000 names"
echo "ok: listings equal SOURCE's, one directory open per listing"

ls m/t/d5 >/dev/null
: >m/t/d5/through-mount
ls m/t/d5 | grep -qx through-mount || fail "a name created through the mount after a listing is not listed"
ls m/t/d6 >/dev/null
: >src/t/d6/outside
wait_for "$BOUND" yes sh -c "ls m/t/d6 | grep -qx outside && echo yes" ||
	fail "a name created in SOURCE after a listing is not listed within ${BOUND} ms"
[ "$(tree m/t)" = "$(tree src/t)" ] || fail "after the creates the listings differ"
echo "PASS: the end of a listing costs no second read of the directory"
