#!/bin/bash
# SPDX-License-Identifier: MIT
# nodev.sh missing|denied: accelfs without a usable /dev/fuse must exit 1
# with one "accelfs: " line naming the problem, mount nothing, leave SOURCE
# alone.
#   missing  a private mount namespace (unshare -m) with a tmpfs over /dev
#            that holds /dev/null but no /dev/fuse;
#   denied   the daemon runs as nobody with no_new_privs, so neither it nor
#            the setuid fusermount3 fallback may open /dev/fuse (0600 root).
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
how=${1:?usage: nodev.sh missing|denied}

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
echo data >"$base/src/f"
ACCEL_MNTS="$base/mnt"
accel_tree_sum "$base/src" >"$base/before"

case $how in
missing)
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -m --propagation private true 2>/dev/null ||
		skip "unshare -m is not permitted here"
	mkdir "$base/olddev"
	# In the new namespace: keep the old /dev reachable, cover /dev with an
	# empty tmpfs, give it /dev/null back (daemonising needs it), then run.
	rc=0
	unshare -m --propagation private bash -c '
		set -e
		mount --bind /dev "$1/olddev"
		mount -t tmpfs -o mode=755 tmpfs /dev
		touch /dev/null && mount --bind "$1/olddev/null" /dev/null
		[ ! -e /dev/fuse ] || { echo "setup: /dev/fuse still there" >&2; exit 99; }
		grep -v "^$" /proc/self/mounts >"$1/mounts.before"
		rc=0
		timeout 20 "$2" "$1/src" "$1/mnt" 2>"$1/err" || rc=$?
		grep -v "^$" /proc/self/mounts | diff "$1/mounts.before" - | grep "^>" |
			grep -F "$1" >"$1/newmounts" || true
		exit $rc' nodev "$base" "$ACCELFS" || rc=$?
	[ $rc != 99 ] || fail "could not hide /dev/fuse"
	[ ! -s "$base/newmounts" ] || fail "mounted inside the namespace: $(cat "$base/newmounts")"
	want="/dev/fuse"
	;;
denied)
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	chmod 755 "$base/src" "$base/mnt"
	chown nobody "$base/mnt"
	# nobody's default pool: a failed mount must not leave one it created
	nobody_pool=/dev/shm/accelfs-default-$(id -u nobody)
	[ -e "$nobody_pool" ] && pool_existed=1 || pool_existed=0
	rc=0
	timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs \
		"$ACCELFS" "$base/src" "$base/mnt" 2>"$base/err" || rc=$?
	want="fuse"
	[ $pool_existed = 1 ] || [ ! -e "$nobody_pool" ] ||
		fail "the failed mount left the pool it created: $nobody_pool"
	;;
*) fail "unknown variant $how" ;;
esac

cat "$base/err"
[ $rc = 1 ] || fail "exit status $rc, expected 1"
[ "$(wc -l <"$base/err")" = 1 ] || fail "stderr has $(wc -l <"$base/err") lines, expected 1"
grep -q "^accelfs: .*$want" "$base/err" || fail "message does not start 'accelfs: ' and name $want"
! accel_is_mounted "$base/mnt" || fail "$base/mnt is mounted"
[ -z "$(accel_daemon_pids "$base/mnt")" ] || fail "a daemon is still running"
accel_check_untouched "$base/src" "$base/before"
echo "PASS: /dev/fuse $how"
