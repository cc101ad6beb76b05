#!/bin/bash
# SPDX-License-Identifier: MIT
# symlinks.sh - nothing accelfs writes goes through a name someone else
# controls (issue #27, item 3). Root starts a daemon with -o log=FILE in a
# directory anyone can write, where a user planted a symbolic link, a hard
# link or a file of their own under FILE: the link's target is root's 0600
# file in a root-only directory. Each is refused with one line naming the
# file and the cause, nothing is mounted, and the target keeps its bytes,
# mode, owner, times, links and attributes.
# $1: accel; ACCELFS: the daemon (set by meson).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root: the target is root's file, the link a user's"

chmod 755 "$T" # users reach the public directory below
mkdir -m 700 "$T/secret"
V=$T/secret/victim
printf 'root only\n' >"$V"
chmod 600 "$V"
setfattr -n user.mark -v 1 "$V" 2>/dev/null || true
snap() {
	stat -c '%s %a %u:%g %Y %h' "$V"
	sha256sum <"$V"
	getfattr -d -m - --absolute-names "$V" 2>/dev/null
}
BEFORE=$(snap)
# untouched WHAT: the target is as it was, and nothing new is in its directory
untouched() {
	[ "$(snap)" = "$BEFORE" ] || fail "$1: $V changed: $(snap)"
	[ "$(ls -A "$T/secret")" = victim ] || fail "$1: created in $T/secret: $(ls -A "$T/secret")"
}
D=$T/pub # a directory every user may write
mkdir -m 1777 "$D"

# the daemon's log file: a link, a hard link, a file someone else owns
if (need_fuse) >/dev/null; then
	fuse_setup symlinks
	# log LOGFILE: start a daemon that must refuse it; one line in $OUT
	log() {
		expect_rc 1 timeout 20 "$ACCELFS" "$SRC" "$FMNT" -o "pool=$POOL,log=$1"
		! grep -qs " $FMNT " /proc/self/mountinfo || fail "mounted with log=$1"
	}
	ln -s "$V" "$D/daemon.log"
	log "$D/daemon.log"
	expect_eq "log, symlink" "$OUT" "accelfs: log file $D/daemon.log: is a symbolic link, not written"
	untouched "log, symlink"
	rm "$D/daemon.log"
	ln "$V" "$D/daemon.log"
	log "$D/daemon.log"
	expect_eq "log, hard link" "$OUT" "accelfs: log file $D/daemon.log: has 2 hard links, not written"
	rm "$D/daemon.log"
	untouched "log, hard link"
	setpriv --reuid=65534 --regid=65534 --clear-groups touch "$D/daemon.log" ||
		fail "nobody cannot create a file in $D"
	log "$D/daemon.log"
	expect_eq "log, nobody's file" "$OUT" \
		"accelfs: log file $D/daemon.log: owned by uid 65534, not by the daemon's uid 0, not written"
	[ ! -s "$D/daemon.log" ] || fail "the daemon wrote to nobody's file: $(cat "$D/daemon.log")"
	ok "the daemon's log file is never a planted link or someone else's file"
else
	echo "# log file cases skipped: accelfs cannot be mounted here"
fi
