#!/bin/bash
# SPDX-License-Identifier: MIT
# watch-inotify-auto.sh: a daemon that cannot have fanotify (root of a user
# namespace: no CAP_SYS_ADMIN, and no CAP_DAC_READ_SEARCH for file handles,
# so nodes keep their descriptors) gets the inotify watcher from
# watch=auto, says why in its log, caches for 10 s, and outside changes
# (create, write, chmod, rename over, unlink, in the root and in a
# subdirectory looked up after mounting) are visible within BOUND ms. On the
# old code watch=auto fell back to off (the log line fails).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}

if [ "${1:-}" != ns ]; then
	accel_require_fuse # root and /dev/fuse; the test proper runs in the namespace
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare --user --map-root-user --mount --propagation private true 2>/dev/null ||
		skip "cannot make a user namespace (kernel.unprivileged_userns_clone?)"
	exec unshare --user --map-root-user --mount --propagation private bash "$0" ns
fi

cfs_init
cfs_pool wiauto
mkdir m
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=auto"
wait_for 5000 1 grep -c 'watch: inotify: no fanotify' "$ACCEL_LOG" ||
	fail "watch=auto did not fall back to inotify: $(grep watch: "$ACCEL_LOG")"
grep -q 'entry_timeout 10s, attr_timeout 10s' "$ACCEL_LOG" ||
	fail "not the inotify timeouts: $(grep watch: "$ACCEL_LOG")"
grep 'watch:' "$ACCEL_LOG"

check() { # WHAT EXPECT CMD...
	local what=$1
	shift
	wait_for "$BOUND" "$@" || fail "$what: not visible within ${BOUND} ms"
	echo "$what: ${WAITED_MS} ms"
}
for d in . sub; do
	[ "$d" = sub ] && mkdir src/sub
	stat "m/$d/new" 2>/dev/null && fail "$d/new exists before it was made"
	ls "m/$d" >/dev/null
	echo hi >"src/$d/new"
	check "$d: create" hi cat "m/$d/new"
	echo more >>"src/$d/new"
	check "$d: append" 8 stat -c %s "m/$d/new"
	chmod 600 "src/$d/new"
	check "$d: chmod" 600 stat -c %a "m/$d/new"
	echo replaced >"src/$d/t"
	mv "src/$d/t" "src/$d/new"
	check "$d: rename over" replaced cat "m/$d/new"
	rm "src/$d/new"
	check "$d: unlink" gone sh -c "[ -e 'm/$d/new' ] && echo there || echo gone"
done
echo "PASS: watch=auto without CAP_SYS_ADMIN runs the inotify watcher; outside changes seen"
