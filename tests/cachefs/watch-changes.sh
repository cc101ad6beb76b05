#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-changes.sh [MODE]: changes made straight in SOURCE, behind the mount,
# are visible through it within BOUND ms (5,000: the watcher takes
# milliseconds, the bound only absorbs a loaded CI machine's stalls)
# although names, attributes and missing names are cached for an hour
# (entry/attr/negative_timeout=3600), and listings while the watcher runs:
# create, append, same-size rewrite within the same mtime second (no stale
# read), truncate, chmod, chown, utime, rename over, unlink, mkdir, rmdir,
# hard link, xattr. Each is primed through the mount first, so the kernel
# holds the old state, then checked in a loop of ITERS rounds.
# MODE fanotify (default) needs the watcher (else exit 77); MODE off is the
# control: with watch=off the same first change (chmod) must stay invisible,
# which shows the checks can fail. MODE inotify (the test watch-inotify)
# forces the inotify watcher with its default timeouts (10 s, unlike the
# hour set for the others): the daemon must report mode inotify and those
# timeouts (the old code reported off), and a change missed would show only
# after 10 s, past BOUND.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
MODE=${1:-fanotify}
BOUND=${WATCH_BOUND_MS:-5000}
ITERS=${WATCH_ITERS:-3}
cfs_init
cfs_pool wch
mkdir m
if [ "$MODE" = inotify ]; then
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=inotify"
else
	accel_mount "$PWD/src" "$PWD/m" -o \
		"pool=$POOL,watch=$MODE,entry_timeout=3600,attr_timeout=3600,negative_timeout=3600"
fi
M=$PWD/m
S=$PWD/src

if [ "$MODE" = off ]; then
	# the line comes at INIT, which may follow the mount by a moment
	wait_for 5000 1 grep -c 'watch: off (watch=off)' "$ACCEL_LOG" ||
		fail "no 'watch: off' log line"
	wait_for 5000 off wcount "$M" watch || fail "accel stat does not show watch off"
	echo data >src/f
	stat -c %a m/f >/dev/null
	chmod 600 src/f
	sleep 0.5
	[ "$(stat -c %a m/f)" = 644 ] || fail "watch=off: the chmod was seen: the control is void"
	echo "PASS: watch=off keeps the kernel's cached attributes (the checks discriminate)"
	exit 0
fi
if [ "$MODE" = inotify ]; then
	wait_for 5000 inotify wcount "$M" watch ||
		fail "accel stat shows watch '$(wcount "$M" watch)', not inotify: $(grep watch: "$ACCEL_LOG")"
	grep -q 'watch: inotify: watch=inotify; entry_timeout 10s, attr_timeout 10s' "$ACCEL_LOG" ||
		fail "no inotify log line with its timeouts: $(grep watch: "$ACCEL_LOG")"
else
	watch_require "$M"
fi

MAXMS=0
check() { # WHAT EXPECT CMD...
	local what=$1
	shift
	wait_for "$BOUND" "$@" || fail "$what: not visible through the mount within ${BOUND} ms"
	[ "$WAITED_MS" -le "$MAXMS" ] || MAXMS=$WAITED_MS
}

round() {
	local r=$1 t
	# create: a missing name the kernel cached as missing
	stat m/new$r 2>/dev/null && fail "new$r exists before it was created"
	ls m >/dev/null # the listing too (cached while a watcher runs)
	echo hi >src/new$r
	check create hi cat m/new$r
	check "create, listing" "new$r" sh -c "ls m | grep -x new$r"
	# append
	stat -c %s m/new$r >/dev/null
	echo more >>src/new$r
	check append 8 stat -c %s m/new$r
	# rewrite the same size within the same mtime second: no stale read
	printf AAAA >src/s$r
	cat m/s$r >/dev/null
	t=$(stat -c %Y src/s$r)
	printf BBBB | dd of=src/s$r conv=notrunc status=none
	touch -m -d "@$t" src/s$r
	check "same-size rewrite" BBBB cat m/s$r
	# truncate
	truncate -s 1 src/new$r
	check truncate 1 stat -c %s m/new$r
	# chmod, chown, utime
	chmod 600 src/new$r
	check chmod 600 stat -c %a m/new$r
	chown 1234:4321 src/new$r
	check chown 1234:4321 stat -c %u:%g m/new$r
	touch -m -d @1000000000 src/new$r
	check utime 1000000000 stat -c %Y m/new$r
	# rename over a name the kernel holds
	echo old >src/t$r
	cat m/t$r >/dev/null
	echo replaced >src/t$r.tmp
	mv src/t$r.tmp src/t$r
	check "rename over" replaced cat m/t$r
	# unlink
	ls m >/dev/null
	rm src/t$r
	check unlink gone sh -c "[ -e m/t$r ] && echo there || echo gone"
	check "unlink, listing" 0 sh -c "ls m | grep -cx t$r"
	# mkdir, rmdir
	stat m/d$r 2>/dev/null && fail "d$r exists before mkdir"
	mkdir src/d$r
	check mkdir directory stat -c %F m/d$r
	rmdir src/d$r
	check rmdir gone sh -c "[ -e m/d$r ] && echo there || echo gone"
	# hard link: the new name and the link count
	stat -c %h m/s$r >/dev/null
	ln src/s$r src/h$r
	check "hard link" 2 stat -c %h m/h$r
	check "link count" 2 stat -c %h m/s$r
	# xattr: the value, and ctime (an attribute the kernel caches)
	t=$(stat -c %Z m/s$r)
	sleep 1.1 # ctime has a second's resolution in stat -c %Z
	setfattr -n user.w -v v$r src/s$r
	check "xattr value" "v$r" getfattr --only-values -n user.w m/s$r
	check "xattr ctime" "$(stat -c %Z src/s$r)" stat -c %Z m/s$r
	[ "$(stat -c %Z m/s$r)" != "$t" ] || fail "ctime did not move"
	# a subdirectory first looked up now (inotify watches it from then on)
	mkdir src/sub$r
	echo a >src/sub$r/f
	check "subdirectory lookup" a cat m/sub$r/f
	ls m/sub$r >/dev/null
	echo bb >src/sub$r/f
	check "write in a subdirectory" bb cat m/sub$r/f
	echo c >src/sub$r/g
	check "create in a subdirectory" c cat m/sub$r/g
	chmod 600 src/sub$r/g
	check "chmod in a subdirectory" 600 stat -c %a m/sub$r/g
	rm src/sub$r/f
	check "unlink in a subdirectory" gone sh -c "[ -e m/sub$r/f ] && echo there || echo gone"
}

for r in $(seq 1 "$ITERS"); do
	round "$r"
done
[ "$(wcount "$M" watch_overflows)" = 0 ] || fail "overflows in a quiet test"
echo "events $(wcount "$M" watch_events), invalidations $(wcount "$M" watch_invalidations)"
echo "PASS ($MODE): $ITERS rounds of 20 outside changes (22 checks) visible, slowest ${MAXMS} ms (bound ${BOUND} ms)"
