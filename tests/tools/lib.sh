# SPDX-License-Identifier: MIT
# lib.sh - helpers for the accel integration tests: a loop-mounted ext4
# image that is always unmounted and detached, an accelfs mount on a pool of
# the test's own (both gone on exit), fragmented files, metadata snapshots,
# checks of values and of JSON. Sourced by the tests/tools/*.sh scripts; $1
# is the accel binary.
set -u
ACCEL=$(realpath "${1:?usage: $0 path/to/accel}")
T=$(mktemp -d /tmp/accel-test.XXXXXX)
MNT=$T/mnt
LOOP=
MOUNTS=()   # unmounted on exit, first to last
SEGMENTS=() # pools (/dev/shm names) removed on exit, once nothing is mounted

. "$(dirname "${BASH_SOURCE[0]}")/../lib/report.sh"

cleanup() {
	local m
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	for m in "${SEGMENTS[@]}"; do rm -f "/dev/shm$m"; done
	rm -rf "$T"
}
trap cleanup EXIT

# need_fuse: skip unless accelfs can be mounted here; fail without the daemon
need_fuse() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount FUSE"
	[ -c /dev/fuse ] && { : </dev/fuse; } 2>/dev/null || skip "/dev/fuse is not usable"
	command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
	[ -x "${ACCELFS:-}" ] || fail "ACCELFS is not set to the daemon (run through meson test)"
}

# fuse_setup TAG: need_fuse, then POOL (a pool name of this test and pid),
# SRC (a SOURCE directory) and FMNT (its mount point); on exit FMNT is
# unmounted before $T goes, then the pool is removed
fuse_setup() {
	need_fuse
	POOL=/accel-test-$1-$$
	SEGMENTS+=("$POOL")
	SRC=$T/src
	FMNT=$T/fmnt
	mkdir -p "$SRC" "$FMNT"
	MOUNTS=("$FMNT" "${MOUNTS[@]}")
}

# wait_state MNT: wait (up to 10 s) until the daemon serving MNT publishes its state
# file (cache/mstate.h), by which the tools find the pool a mount uses
wait_state() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -qsx "mountpoint $1" /run/accelfs/mount-* "${XDG_RUNTIME_DIR:-/nonexistent}"/accelfs/mount-* &&
			return 0
		sleep 0.1
	done
	fail "no daemon state file names $1"
}

need_loop() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for loop devices and mounts"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
	command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control"
}

# mkext4 SIZE_MIB [mount options]: fresh ext4 (4 KiB blocks) mounted on $MNT
mkext4() {
	need_loop
	truncate -s "${1}M" "$T/img"
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$T/img" ||
		fail "mkfs.ext4"
	LOOP=$(losetup -f --show "$T/img") || skip "no free loop device"
	mkdir -p "$MNT"
	mount ${2:+-o "$2"} "$LOOP" "$MNT" || fail "mount $LOOP"
	MOUNTS=("$MNT" "${MOUNTS[@]}")
}

# fragment ROUNDS CHUNK FILE...: interleaved appends with a sync between rounds
fragment() {
	local rounds=$1 chunk=$2 i f
	shift 2
	for ((i = 0; i < rounds; i++)); do
		for f in "$@"; do
			head -c "$chunk" /dev/urandom >>"$f"
		done
		sync
	done
}

# extents FILE: accel's merged extent count (from --json)
extents() {
	"$ACCEL" analyze --json "$1" | sed -n 's/.*"extents": \([0-9]*\).*/\1/p'
}

# meta FILE: everything that must survive a defrag (not inode, not ctime)
meta() {
	stat -c 'mode=%a uid=%u gid=%g size=%s atime=%x mtime=%y' "$1"
	getfattr -h -d -m - --absolute-names "$1" 2>/dev/null | sed 1d
}

# no_temps DIR: fail if accel left a temporary behind
no_temps() {
	local left
	left=$(find "$1" -name '.accel-*' 2>/dev/null)
	[ -z "$left" ] || fail "temporaries left behind: $left"
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# jget FILE EXPR: evaluate the Python expression EXPR on the JSON in FILE (as j)
jget() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2" || fail "cannot evaluate $2 on $1: $(cat "$1")"
}

# expect_rc WANT CMD...: run, keep output in $OUT, check the exit code
expect_rc() {
	local want=$1 rc
	shift
	OUT=$("$@" 2>&1)
	rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want: $OUT"
}

# wait_temp DIR: wait (up to 20 s) until accel's temporary appears in DIR
wait_temp() {
	local i
	for ((i = 0; i < 200; i++)); do
		ls -a "$1" | grep -q '^\.accel-defrag\..*\.tmp$' && return 0
		sleep 0.1
	done
	fail "no temporary appeared in $1"
}
