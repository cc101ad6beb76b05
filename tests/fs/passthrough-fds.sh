#!/bin/bash
# SPDX-License-Identifier: MIT
# passthrough-fds.sh CASE: kernel passthrough handles keep no descriptor of
# their own in the daemon (issue 27; fuse/passthrough.c): the kernel holds
# the backing file, and the inode's passthrough handles share one daemon
# descriptor per access mode for what still reaches the daemon.
#   count   one process opens the same file 200 times through a
#           passthrough=always mount: the daemon's descriptors grow by a
#           constant (they grew by 200 before), and fall back after close
#   ops     five handles of one file (read-write twice, read-only,
#           write-only, O_APPEND): write, fsync, fallocate, ftruncate,
#           copy_file_range, SEEK_DATA/SEEK_HOLE, flock, OFD and POSIX locks,
#           each answer (a read-only handle's EBADF and EINVAL included) and
#           the final file as on a local directory
#   share   the daemon runs with RLIMIT_NOFILE 256 (a user's share: 32
#           descriptors); while root holds 10 handles of a file, nobody's
#           100 passthrough opens of it all succeed (32 before) on 2
#           descriptors of her own, and what does cost descriptors still
#           counts: flocks (a descriptor each: ENOLCK past the share) and
#           opens of other files (one descriptor per file: EMFILE past it)
# Skips (77) without root, /dev/fuse, or a kernel/libfuse with passthrough.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap 'rc=$?; pkill -f "passthrough-fds-$$" 2>/dev/null; (exit $rc); accel_cleanup' EXIT
accel_require_fuse
case=${1:?usage: passthrough-fds.sh count|ops|share}
# the system python3: nobody cannot run a python of root's (pyenv shims)
PY=/usr/bin/python3
[ -x $PY ] || skip "$PY is needed"
HELPER=$(dirname "$(readlink -f "$0")")/passthrough_fds.py
"$ACCELFS" --version | grep -q -- '+passthrough' ||
	skip "built without passthrough: $("$ACCELFS" --version)"

accel_tmpdir
base=$ACCEL_TMP
src=$base/src
mnt=$base/mnt
mkdir "$src" "$mnt"

# pt_mount OPTIONS: mount with passthrough=always; skip unless the kernel took it
pt_mount() {
	accel_mount "$src" "$mnt" -o "passthrough=always$1"
	# (ASan pass in CI: a skip while "passthrough on" was on its way)
	accel_wait_init "$mnt"
	grep -q "passthrough on" "$ACCEL_LOG" ||
		skip "the kernel does not offer passthrough: $(grep mounted "$ACCEL_LOG")"
}

# no_fallback: every open went passthrough (the kernel refused no backing file)
no_fallback() {
	! grep -q "refused a backing file" "$ACCEL_LOG" || fail "opens fell back: $(cat "$ACCEL_LOG")"
}

# daemon_fds: the daemon's descriptors on files of SOURCE (not counted: its
# /dev/fuse clones, one per worker thread libfuse starts under load)
daemon_fds() {
	ls -l "/proc/$ACCEL_PID/fd" | grep -c -- " -> $src/"
}

case_count() {
	local n0 n1 n2 out
	echo data >"$src/f"
	pt_mount ""
	cat "$mnt/f" >/dev/null # the node and its descriptor exist
	n0=$(daemon_fds)
	$PY "$HELPER" hold "$mnt/f" 200 3 "passthrough-fds-$$" >"$base/hold.out" &
	local holder=$!
	for _ in $(seq 50); do grep -q opened "$base/hold.out" && break; sleep 0.1; done
	grep -q "opened 200" "$base/hold.out" || fail "200 opens: $(cat "$base/hold.out")"
	n1=$(daemon_fds)
	wait $holder
	sleep 0.3 # RELEASE is asynchronous
	n2=$(daemon_fds)
	echo "daemon descriptors: $n0 before, $n1 with 200 passthrough handles open, $n2 after"
	[ $((n1 - n0)) -le 4 ] || fail "200 passthrough opens cost the daemon $((n1 - n0)) descriptors"
	[ "$n2" -le "$n0" ] || fail "$((n2 - n0)) descriptors left after the handles closed"
	echo "PASS: 200 passthrough handles of one file cost $((n1 - n0)) daemon descriptors"
}

case_ops() {
	local d out_mnt out_ref
	mkdir "$base/ref"
	for d in "$src" "$base/ref"; do : >"$d/f"; done
	pt_mount ""
	out_ref=$($PY "$HELPER" ops "$base/ref") || fail "on the local directory: $out_ref"
	out_mnt=$($PY "$HELPER" ops "$mnt") || fail "through the mount: $out_mnt"
	echo "$out_mnt"
	[ "$out_mnt" = "$out_ref" ] ||
		fail "answers differ: local vs mount:$(diff <(echo "$out_ref") <(echo "$out_mnt"))"
	grep -q "^fallocate r: EBADF" <<<"$out_ref" && grep -q "^ftruncate r: EINVAL" <<<"$out_ref" &&
		grep -q "^flock b ex: EWOULDBLOCK\|^flock b ex: EAGAIN" <<<"$out_ref" ||
		fail "the local answers are not the expected ones: a bad test"
	cmp "$src/f" "$base/ref/f" || fail "the file on SOURCE differs from the local one"
	no_fallback
	echo "PASS: fsync, fallocate, ftruncate, copy, seek, flock and fcntl locks through passthrough handles as locally"
}

case_share() {
	local i n out
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	mkdir -m 755 "$src/her"
	echo same >"$src/her/same"
	for i in $(seq 40); do echo "$i" >"$src/her/d$i"; done
	chown -R 65534:65534 "$src/her"
	ulimit -n 256 || skip "cannot set RLIMIT_NOFILE"
	pt_mount ",allow_other"
	# root's handles of the same file first: shared among root's, not with hers
	$PY "$HELPER" hold "$mnt/her/same" 10 5 "passthrough-fds-$$" >"$base/root.out" &
	local root=$!
	for _ in $(seq 50); do grep -q opened "$base/root.out" && break; sleep 0.1; done
	grep -q "opened 10" "$base/root.out" || fail "root's opens: $(cat "$base/root.out")"
	setpriv --reuid=65534 --regid=65534 --clear-groups $PY "$HELPER" share "$mnt/her" 100 3 \
		"passthrough-fds-$$" >"$base/share.out" &
	local holder=$!
	for _ in $(seq 100); do grep -q same "$base/share.out" && break; sleep 0.1; done
	out=$(cat "$base/share.out")
	echo "nobody (share 32): $out"
	n=$(ls -l "/proc/$ACCEL_PID/fd" | grep -c -- " -> $src/her/same$")
	wait $holder
	wait $root
	# 100 opens: 2 descriptors (her readers', her writers'); 20 flocks: 22;
	# then 10 of the 40 other files (one each) fill the share; 20 more
	# flocks fail. Her opens never use root's descriptors (nor count them).
	[ "$out" = "same 100 other 10 flock 20 [('flock ENOLCK', 20), ('other EMFILE', 30)]" ] ||
		fail "nobody's opens and locks: $out"
	# (and the node's O_PATH one, unless the inode descriptor cache closed it)
	[ "$n" -ge 24 ] && [ "$n" -le 25 ] ||
		fail "$n descriptors of the file: want root's 2, nobody's 2 and 20 flocks'"
	no_fallback
	grep -q "uid 65534 holds 32 of the daemon's descriptors" "$ACCEL_LOG" ||
		fail "no log line for the share: $(cat "$ACCEL_LOG")"
	echo "PASS: passthrough opens of one file take no share; flocks and other files still do"
}

"case_$case"
