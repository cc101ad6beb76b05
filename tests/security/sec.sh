#!/bin/bash
# SPDX-License-Identifier: MIT
# sec.sh [ACCELFS-OPTIONS...]: what an unprivileged user can do through a
# root daemon's allow_other mount must be exactly what the same user can do
# on a local directory. A SOURCE and a plain reference directory are laid out
# identically by root; each operation runs as nobody (uid 65534) on the
# mount and on the reference, and the answers (secop's one line: "ok ..." or
# the errno) and the resulting state must be equal. Covers issue #12 items 1
# and 4: symlinks and FIFOs planted behind a cached negative entry, symlinks
# out of SOURCE, ".." at the root, root's files and directories, sticky and
# set-group-ID directories, trusted.* xattrs, devices, hard links, and
# set-ID bits cleared by a write (direct_io and O_DIRECT modes, and kernel
# passthrough with SEC_PASSTHROUGH=1).
#
# negative_timeout=30 makes the kernel keep the negative entries the attacks
# start from for the whole test, whatever the other options.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v setpriv >/dev/null || skip "setpriv is missing (util-linux)"
command -v setfattr >/dev/null || skip "setfattr is missing (attr)"
[ -n "${SECOP:-}" ] || fail "SECOP is not set"
USERS_GID=100 # a group nobody is not in: supplementary groups are added with setpriv
if [ "${SEC_PASSTHROUGH:-0}" = 1 ]; then
	"$ACCELFS" --version | grep -q -- +passthrough ||
		skip "built without kernel passthrough: $("$ACCELFS" --version)"
fi

accel_tmpdir
BASE=$ACCEL_TMP SRC=$ACCEL_TMP/src MNT=$ACCEL_TMP/mnt REF=$ACCEL_TMP/ref
mkdir -m 755 "$SRC" "$MNT" "$REF"
echo secret >"$BASE/secret" && chmod 600 "$BASE/secret"
echo public >"$BASE/public" && chmod 644 "$BASE/public"
mkdir -m 700 "$BASE/rootonly"

# layout DIR: the tree both SOURCE and the reference start from (as root).
layout() {
	local t=$1 f
	mkdir -m 1777 "$t/pub" && chmod 1777 "$t/pub"
	echo "root's" >"$t/pub/rootsfile" && chmod 644 "$t/pub/rootsfile"
	mkdir -m 755 "$t/rodir"
	echo "root data" >"$t/rootfile" && chmod 600 "$t/rootfile"
	echo "root pub" >"$t/rootpub" && chmod 644 "$t/rootpub"
	mkdir "$t/sgid" && chgrp $USERS_GID "$t/sgid" && chmod 2777 "$t/sgid"
	mkdir "$t/grpdir" && chgrp $USERS_GID "$t/grpdir" && chmod 770 "$t/grpdir"
	for f in setuid setuid_direct setuid_trunc setuid_truncate setuid_ftruncate; do
		printf 'set-ID file\n' >"$t/$f" && chmod 6777 "$t/$f"
	done
	echo x >"$t/xfile" && chmod 644 "$t/xfile"
	setfattr -n trusted.t -v 1 "$t/xfile" && setfattr -n user.u -v 2 "$t/xfile"
	echo mine >"$t/nobodyfile" && chown 65534:0 "$t/nobodyfile" && chmod 644 "$t/nobodyfile"
	ln -s ../secret "$t/up" && ln -s ../public "$t/up2"
}
layout "$SRC"
layout "$REF"
accel_tree_sum "$BASE/rootonly" >"$BASE/rootonly.sum"
accel_mount "$SRC" "$MNT" -o allow_other,negative_timeout=30 "$@"

WHO=nobody
# as CMD...: run CMD as nobody (WHO=nobody) or nobody with group 100 (WHO=nobody+users).
as() {
	if [ "$WHO" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		setpriv --reuid=65534 --regid=65534 --groups=$USERS_GID "$@"
	fi
}

# run ROOT OP ARGS...: secop as the user; "@@" in ARGS stands for ROOT. A hang is "exit 124".
run() {
	local root=$1 rc=0 out
	shift
	out=$(as timeout 10 "$SECOP" "${@//@@/$root}" 2>&1) || rc=$?
	[ $rc = 0 ] || out="$out exit $rc"
	echo "$out"
}

FAILS=0
verdict() { # verdict LABEL MOUNT-ANSWER LOCAL-ANSWER
	if [ "$2" = "$3" ]; then
		echo "ok   $1: $3"
	else
		echo "FAIL $1: mount says '$2', local directory says '$3'"
		FAILS=$((FAILS + 1))
	fi
}

# same LABEL OP ARGS...: the operation gives the same answer on both.
same() {
	local label=$1
	shift
	verdict "$label" "$(run "$MNT" "$@")" "$(run "$REF" "$@")"
}

# state REL: mode, owner, size and first line of REL, as seen through the
# mount and in SOURCE, equal to the reference's.
state_of() {
	if [ -e "$1" ] || [ -L "$1" ]; then
		stat -c '%A %u:%g %s' "$1"
	else
		echo missing
	fi
}
state() {
	local r
	r=$(state_of "$REF/$1")
	verdict "state of $1 (mount)" "$(state_of "$MNT/$1")" "$r"
	verdict "state of $1 (SOURCE)" "$(state_of "$SRC/$1")" "$r"
}

# planted LABEL NAME FLAGS PLANT...: the user looks NAME up (the kernel caches
# "no such name"), PLANT (run as the user, "@@" = the tree's directory:
# SOURCE behind the mount's back, or the reference) makes NAME, then the
# user opens NAME with FLAGS.
planted() {
	local label=$1 name=$2 flags=$3 m r
	shift 3
	m=$(run "$MNT" open "@@/$name" rdonly)
	[ "$m" = ENOENT ] || fail "$label: $name exists before the plant ($m)"
	as "${@//@@/$SRC}" || fail "$label: plant failed"
	m=$(run "$MNT" open "@@/$name" "$flags")
	as "${@//@@/$REF}" || fail "$label: plant failed"
	r=$(run "$REF" open "@@/$name" "$flags")
	verdict "$label" "$m" "$r"
}

echo "== names the user plants in SOURCE behind a cached negative entry"
planted "symlink to root's 0600 file, O_CREAT|O_TRUNC" pub/x wronly,creat,trunc \
	ln -s "$BASE/secret" @@/pub/x
verdict "root's file outside SOURCE afterwards" "$(cat "$BASE/secret")" secret
planted "dangling symlink into a root-only dir" pub/y wronly,creat ln -s "$BASE/rootonly/new" @@/pub/y
verdict "root-only dir outside SOURCE afterwards" "$(accel_tree_sum "$BASE/rootonly")" \
	"$(cat "$BASE/rootonly.sum")"
planted "symlink, caller's O_NOFOLLOW" pub/x2 wronly,creat,nofollow ln -s "$BASE/public" @@/pub/x2
planted "FIFO, O_RDWR|O_CREAT (must not hang)" pub/f rdwr,creat mkfifo @@/pub/f
planted "FIFO, O_WRONLY|O_CREAT|O_NONBLOCK" pub/f2 wronly,creat,nonblock mkfifo @@/pub/f2
# shellcheck disable=SC2016 # "$0" is the inner shell's
planted "regular file created meanwhile, O_CREAT" pub/z rdwr,creat sh -c 'echo made >"$0"' @@/pub/z
same "... and its data" read @@/pub/z
# shellcheck disable=SC2016
planted "regular file created meanwhile, O_CREAT|O_EXCL" pub/z2 rdwr,creat,excl \
	sh -c 'echo made >"$0"' @@/pub/z2

echo "== symlinks out of SOURCE, .. at the root"
same "../ symlink to root's 0600 file" read @@/up
same "../ symlink to a public file" read @@/up2
verdict ".. of the root" "$(as sh -c "cd '$MNT/..' && stat -c %i .")" \
	"$(as sh -c "cd '$REF/..' && stat -c %i .")"

echo "== root's files and directories"
same "read root's 0600 file" read @@/rootfile
same "create in root's 0755 dir" open @@/rodir/new wronly,creat
same "mkdir in root's 0755 dir" mkdir @@/rodir/newdir
same "create in a 1777 dir" open @@/pub/mine wronly,creat 0600
state pub/mine
same "hard link to own file" link @@/pub/mine @@/pub/mine2
same "rename own file" rename @@/pub/mine2 @@/pub/mine3
same "unlink own file" unlink @@/pub/mine3
same "symlink in a 1777 dir" symlink @@/pub/sl ../rootfile
state pub/sl
same "mkdir in a 1777 dir" mkdir @@/pub/d
state pub/d
same "rmdir own dir" rmdir @@/pub/d
same "chmod own file" chmod @@/pub/mine 0640
same "utime own file (explicit times)" utime @@/pub/mine
state pub/mine
same "unlink root's file in a sticky dir" unlink @@/pub/rootsfile
same "rename over root's file in a sticky dir" rename @@/pub/mine @@/pub/rootsfile
state pub/rootsfile
same "chmod root's file" chmod @@/rootpub 0666
same "chown root's file" chown @@/rootpub 65534 65534
same "utime root's file (explicit times)" utime @@/rootpub
same "utime root's file (now)" utimenow @@/rootpub
state rootpub
same "hard link to root's 0600 file" link @@/rootfile @@/pub/hl
same "mknod a char device" mknod @@/pub/null c
same "mknod a FIFO" mknod @@/pub/fifo p
state pub/fifo
same "chmod g+s own file, not in its group" chmod @@/nobodyfile 2755
state nobodyfile

echo "== set-group-ID directory, supplementary groups"
same "create in a set-group-ID dir" open @@/sgid/new wronly,creat
state sgid/new
same "mkdir in a set-group-ID dir" mkdir @@/sgid/newdir
state sgid/newdir
same "create in a group dir, not a member" open @@/grpdir/a wronly,creat
WHO=nobody+users
same "create in a group dir, as a member" open @@/grpdir/b wronly,creat
state grpdir/b
same "chown own file to a supplementary group" chown @@/grpdir/b -1 $USERS_GID
state grpdir/b
WHO=nobody

echo "== trusted.* extended attributes"
same "list xattrs of root's file" listxattr @@/xfile
same "get trusted.*" getxattr @@/xfile trusted.t
same "get user.*" getxattr @@/xfile user.u
same "set trusted.* on own file" setxattr @@/pub/mine trusted.n v
same "set user.* on root's file" setxattr @@/xfile user.n v
same "set user.* on own file" setxattr @@/pub/mine user.n v

echo "== set-ID bits and an unprivileged write"
same "write into a root 06777 file" write @@/setuid
state setuid
if [ "$(run "$REF" write @@/setuid_direct direct)" = ok ]; then
	same "O_DIRECT write into a root 06777 file" write @@/setuid_direct direct
	state setuid_direct
else
	echo "skip O_DIRECT write: $(df --output=fstype "$REF" | tail -1) refuses O_DIRECT here"
	# make the trees agree again
	chmod 0777 "$REF/setuid_direct" "$SRC/setuid_direct"
	cp "$REF/setuid_direct" "$SRC/setuid_direct"
fi
same "truncating open of a root 06777 file" open @@/setuid_trunc wronly,trunc
state setuid_trunc
same "truncate(2) of a root 06777 file" truncate @@/setuid_truncate
state setuid_truncate
same "ftruncate(2) of a root 06777 file" ftruncate @@/setuid_ftruncate
state setuid_ftruncate

# File capabilities go at a write, whoever writes (file_remove_privs); with
# FUSE_HANDLE_KILLPRIV_V2 accelfs removes them, without it the kernel asks.
caps_of() { getcap "$1" | sed 's/^[^ ]* //'; }
if command -v setcap >/dev/null && setcap cap_net_raw+ep "$REF/rootpub" 2>/dev/null; then
	setcap -r "$REF/rootpub"
	echo "== file capabilities and writes"
	for t in "$SRC" "$REF"; do
		for f in capfile capfile_root; do
			echo cap >"$t/$f" && chmod 0666 "$t/$f" && setcap cap_net_raw+ep "$t/$f"
		done
	done
	same "write into a root file with a capability" write @@/capfile
	verdict "capability of capfile after the user's write" "$(caps_of "$MNT/capfile")" \
		"$(caps_of "$REF/capfile")"
	for t in "$MNT" "$REF"; do "$SECOP" write "$t/capfile_root"; done >"$BASE/root.out"
	verdict "root writes a file with a capability" "$(head -1 "$BASE/root.out")" \
		"$(tail -1 "$BASE/root.out")"
	verdict "capability of capfile_root after root's write" "$(caps_of "$MNT/capfile_root")" \
		"$(caps_of "$REF/capfile_root")"
	verdict "capability of capfile_root in SOURCE" "$(caps_of "$SRC/capfile_root")" \
		"$(caps_of "$REF/capfile_root")"
else
	echo "skip file capabilities: setcap missing (libcap2-bin) or refused here"
fi

echo "== root after the users' requests (the workers went back to root)"
for t in "$MNT" "$REF"; do "$SECOP" open "$t/rodir/byroot" wronly,creat; done >"$BASE/root.out"
verdict "root creates in its 0755 dir" "$(head -1 "$BASE/root.out")" "$(tail -1 "$BASE/root.out")"
for t in "$MNT" "$REF"; do "$SECOP" chown "$t/rootpub" 65534 65534; done >"$BASE/root.out"
verdict "root chowns its file" "$(head -1 "$BASE/root.out")" "$(tail -1 "$BASE/root.out")"
state rodir/byroot
state rootpub

# SEC_PASSTHROUGH=1: the users' opens above went to kernel passthrough
# (fuse/passthrough.c), so the answers are the kernel's, with the backing
# file registered without CAP_FSETID: set-ID bits cleared as locally.
if [ "${SEC_PASSTHROUGH:-0}" = 1 ]; then
	grep -q "passthrough on" "$ACCEL_LOG" || skip "the kernel gave no passthrough here"
	pt=$("$ACCEL" stat --json --pool "${ACCEL_POOL#/}" | python3 -c 'import json, sys
c = json.load(sys.stdin)["pool"]["counters"]
print(c["opens_passthrough"], c["passthrough_fallbacks"])') || fail "accel stat"
	[ "${pt% *}" -gt 0 ] && [ "${pt#* }" = 0 ] ||
		fail "opens_passthrough and fallbacks: $pt; the test did not cover passthrough"
	echo "ok   ${pt% *} opens went to kernel passthrough"
fi

echo "== SOURCE holds what the reference holds"
accel_umount "$MNT" || fail "unmount failed"
accel_wait_exit "$ACCEL_PID" 10 || fail "daemon still running after unmount"
tree() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum &&
		getfattr -R -h -d -m - -e hex . 2>/dev/null | grep -v '^security\.')
}
if ! diff <(tree "$REF") <(tree "$SRC") >"$BASE/tree.diff"; then
	head -40 "$BASE/tree.diff"
	FAILS=$((FAILS + 1))
	echo "FAIL SOURCE differs from the reference directory (ref <, src >)"
fi
[ "$FAILS" = 0 ] || fail "$FAILS answers differ from a local directory's ($*)"
echo "PASS: every answer equals the local directory's ($*)"
