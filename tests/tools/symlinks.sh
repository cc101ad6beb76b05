#!/bin/bash
# SPDX-License-Identifier: MIT
# symlinks.sh - no accel command, and not the daemon's log, writes through a
# name someone else controls (issue #27, item 3). Root runs each documented
# command on a file in a directory anyone can write, where a user planted a
# symbolic link (or a hard link) under the name the command writes: the
# link's target is root's 0600 file in a root-only directory. Each is
# refused with one line naming the file and the cause, and the target keeps
# its bytes, mode, owner, times, links and attributes:
#   analyze --fdl's FILE.fdl (a link, a dangling link into the root-only
#   directory, a hard link, the name of its temporary), convert's OUT and
#   temporary, convert --replace of a link, defrag's temporary and guard
#   link and a file it listed made a link meanwhile, sysgen --apply's knob, and the daemon's -o log=FILE (a link, a hard
#   link, someone else's file). report --apply's is in report.sh (it needs
#   that test's workload).
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
# planted NAME CMD...: a symlink to $V at NAME, where PID stands for the pid
# CMD will run as (bash execs it), then CMD
planted() {
	local name=$1
	shift
	bash -c 'ln -s "$1" "${2//PID/$$}" && shift 2 && exec "$@"' _ "$V" "$name" "$@"
}
is_link_to_v() { [ "$(readlink "$1")" = "$V" ] || fail "$1 is no longer the planted link"; }

D=$T/pub # a directory every user may write
mkdir -m 1777 "$D"
head -c 300000 /dev/urandom >"$D/data"

# analyze --fdl: FILE.fdl
ln -s "$V" "$D/data.fdl"
expect_rc 1 "$ACCEL" analyze --fdl "$D/data"
expect_eq "analyze --fdl, symlink" "$OUT" "accel analyze: $D/data.fdl: is a symbolic link, not written"
untouched "analyze --fdl, symlink"
is_link_to_v "$D/data.fdl"
rm "$D/data.fdl"
ln -s "$T/secret/new" "$D/data.fdl"
expect_rc 1 "$ACCEL" analyze --fdl "$D/data"
expect_eq "analyze --fdl, dangling" "$OUT" "accel analyze: $D/data.fdl: is a symbolic link, not written"
untouched "analyze --fdl, dangling symlink into a root-only directory"
rm "$D/data.fdl"
ln "$V" "$D/data.fdl" # a hard link (possible for users where protected_hardlinks=0)
expect_rc 0 "$ACCEL" analyze --fdl "$D/data"
[ "$(stat -c %h "$V")" = 1 ] || fail "analyze --fdl, hard link: the name still links $V"
grep -qx 'FILE' "$D/data.fdl" || fail "analyze --fdl, hard link: no FDL written: $(cat "$D/data.fdl")"
untouched "analyze --fdl, hard link"
expect_rc 1 planted "$D/.accel-fdl.data.fdl.PID.tmp" "$ACCEL" analyze --fdl "$D/data"
grep -Eqx "accel analyze: $D/data.fdl: the temporary name \.accel-fdl\.data\.fdl\.[0-9]+\.tmp beside it is taken, not written" <<<"$OUT" ||
	fail "analyze --fdl, planted temporary: $OUT"
untouched "analyze --fdl, planted temporary"
rm "$D"/.accel-fdl.*
grep -qx 'FILE' "$D/data.fdl" || fail "analyze --fdl: the older FDL was lost"
no_temps "$D"
ok "analyze --fdl never writes through a planted link"

# convert IN OUT: OUT, and the temporary built beside it
ln -s "$V" "$D/out"
expect_rc 1 "$ACCEL" convert "$D/data" "$D/out"
expect_eq "convert OUT, symlink" "$OUT" "accel convert: $D/out: is a symbolic link, not written"
untouched "convert OUT, symlink"
is_link_to_v "$D/out"
expect_rc 1 planted "$D/.accel-convert.out2.PID.tmp" "$ACCEL" convert "$D/data" "$D/out2"
grep -Eqx "accel convert: $D/data: cannot create the temporary file: the name \.accel-convert\.out2\.[0-9]+\.tmp beside the target is taken, not written \(IN is intact; nothing was created\)" <<<"$OUT" ||
	fail "convert, planted temporary: $OUT"
[ ! -e "$D/out2" ] || fail "convert, planted temporary: OUT was created"
untouched "convert, planted temporary"
rm "$D"/.accel-convert.*
# --replace renames over IN's name: a link there is not replaced by its target's copy
ln -s "$V" "$D/inlink"
expect_rc 1 "$ACCEL" convert --replace "$D/inlink"
expect_eq "convert --replace, symlink" "$OUT" \
	"accel convert: $D/inlink: is a symbolic link, not replaced (name its target)"
untouched "convert --replace, symlink"
is_link_to_v "$D/inlink"
no_temps "$D"
ok "convert never writes through a planted link"

# sysgen --apply on a fake tree whose knob is a link to root's file
R=$T/root
mkdir -p "$R/proc/sys/fs/fuse" "$R/proc/self" "$R/sys" "$R/dev/shm"
: >"$R/proc/self/mountinfo"
V2=$T/secret/knob
printf '128\n' >"$V2" && chmod 600 "$V2"
ln -s "$V2" "$R/proc/sys/fs/fuse/max_pages_limit"
env ACCEL_SYSGEN_ROOT="$R" "$ACCEL" sysgen --apply >"$T/sysgen.out" 2>&1
grep -qx "failed  fs.fuse.max_pages_limit: writing 256 to $R/proc/sys/fs/fuse/max_pages_limit: is a symbolic link, not written" "$T/sysgen.out" ||
	fail "sysgen --apply through a link: $(cat "$T/sysgen.out")"
[ "$(cat "$V2")" = 128 ] || fail "sysgen --apply wrote $(cat "$V2") through the link"
rm "$V2"
untouched "sysgen --apply"
ok "sysgen --apply never writes a knob through a link"

# defrag's copy path: its temporary and the guard link of the swap (ext4 for FIEMAP)
if (need_loop) >/dev/null; then
	mkext4 64
	mkdir -m 1777 "$MNT/pub"
	fragment 16 65536 "$MNT/pub/f" "$MNT/pub/g"
	sum=$(sha256sum <"$MNT/pub/f")
	expect_rc 1 planted "$MNT/pub/.accel-defrag.f.PID.tmp" "$ACCEL" defrag --method copy "$MNT/pub/f"
	grep -Eqx "accel defrag: $MNT/pub/f: cannot create the temporary file: the name \.accel-defrag\.f\.[0-9]+\.tmp beside it is taken, not written \(the file is intact\)" <<<"$OUT" ||
		fail "defrag, planted temporary: $OUT"
	untouched "defrag, planted temporary"
	rm "$MNT"/pub/.accel-defrag.*
	expect_rc 1 planted "$MNT/pub/.accel-defrag-old.f.PID.tmp" "$ACCEL" defrag --method copy "$MNT/pub/f"
	grep -Eqx "accel defrag: $MNT/pub/f: cannot link the file under a guard name: the name \.accel-defrag-old\.f\.[0-9]+\.tmp beside it is taken, not written \(the file is intact\)" <<<"$OUT" ||
		fail "defrag, planted guard link: $OUT"
	untouched "defrag, planted guard link"
	rm "$MNT"/pub/.accel-defrag-old.*
	[ "$(sha256sum <"$MNT/pub/f")" = "$sum" ] || fail "defrag changed f's bytes"
	no_temps "$MNT/pub"
	# g listed as a regular file, then made a link while f is being copied: not followed
	(ACCEL_TEST_PAUSE_BEFORE_SWAP=2 "$ACCEL" defrag --method copy "$MNT/pub/f" "$MNT/pub/g" \
		>"$T/defrag.out" 2>&1
	echo $? >"$T/defrag.rc") &
	wait_temp "$MNT/pub"
	mv "$MNT/pub/g" "$MNT/pub/g.old" && ln -s "$V" "$MNT/pub/g"
	wait
	expect_eq "defrag, swapped for a link: exit" "$(cat "$T/defrag.rc")" 1
	grep -qx "accel defrag: $MNT/pub/g: is no longer a regular file" "$T/defrag.out" ||
		fail "defrag, swapped for a link: $(cat "$T/defrag.out")"
	is_link_to_v "$MNT/pub/g"
	untouched "defrag, a file swapped for a link"
	no_temps "$MNT/pub"
	ok "defrag never writes through a planted link"
else
	echo "# defrag cases skipped: no loop device for an ext4 image"
fi

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
