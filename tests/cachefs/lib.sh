# SPDX-License-Identifier: MIT
# tests/cachefs/lib.sh: what the cachefs tests share, on top of tests/lib/mount.sh.
#
# cfs_init      requires root and a working /dev/fuse (else exit 77), installs
#               the cleanup trap, makes a test directory and cd's into it
#               (mount with absolute paths: "$PWD/src" "$PWD/m");
# cfs_pool TAG  sets POOL to a pool name of this test and pid, removed on exit;
# cfs_bg CMD... runs CMD in the background, killed on exit, pid in CFS_BG;
# cfs_below FUNC  FUNC takes down at exit what SOURCE sits on (a loop
#               device, another FUSE daemon), once no daemon holds SOURCE;
# cfs_ext4_src SIZE [MKFS-OPTION...]  SOURCE (src) on a journaled ext4 of
#               SIZE of its own, on a loop device taken down at exit; 1 with
#               the reason in CFS_WHY when mkfs.ext4 or a loop device is missing;
#               mounted with the options in CFS_EXT4_MOUNT_OPTS, if set (1
#               and CFS_WHY when ext4 refuses them);
# cfs_python   PY: the system's python3 (skips without it);
# cfs_fill_verdict MODE OUT FILE ERROR  after err_writer.py's "fill" (its
#               output in OUT) of FILE on SOURCE: it saw ERROR (strerror
#               text), and every byte write() accepted is in FILE, or write,
#               fsync or close reported the error; fails otherwise;
# cfs_cut_disk SIZE  an ext4 image of SIZE on cutfs (tests/lib/cutfs.c, in
#               cut/), taken down at exit; cfs_cut_up puts it on a loop
#               device (direct I/O) mounted on src, cfs_cut_down takes it
#               off; cfs_cut_ctl WORD tells cutfs "cut", "live" or "eio";
# cfs_eventually SECS CMD...  runs CMD (quietly) every 0.1 s until it
#               succeeds, up to SECS; then once more aloud, its status
#               returned (for what a background thread does "soon": a loaded
#               machine may be slow, never wrong);
# cfs_kill9 MNT PID...  SIGKILLs MNT's daemon and detaches its dead mount;
# refused WHAT REGEX [PREFIX-COMMAND...] -- ACCELFS-OPTIONS
#               mounting src on m must fail cleanly: exit 1, one stderr line
#               matching REGEX, nothing mounted, no daemon left;
# pstat ...     the poolstat helper on $POOL (key=value lines);
# kv FILE KEY   a value from a saved snapshot.
# cfs_strace OUT CALLS  traces system calls CALLS (strace -e trace=) of every
#               thread of the daemon $ACCEL_PID into OUT, returning once
#               strace is attached to all of them (exit 77 without strace);
# cfs_strace_stop  stops that trace and waits for it.
# cfs_wait_init  waits for the daemon's "mounted" log line: INIT is answered
#               after mount(2) returns, and the line says what it settled;
# cfs_pt_mount OPTIONS  mounts src on m with OPTIONS, which ask for kernel
#               passthrough, and skips (77) unless the daemon got it.
#
# Environment (set by meson): ACCELFS, POOLSTAT, CFSIO, and FSX/CONC for fsx-cache.

. "$(dirname "$0")/../lib/mount.sh"

CFS_POOLS=""
CFS_JOBS=""
CFS_BELOW=""

# Background jobs first (they hold files open on the mounts); with cfs_below,
# the mounts and their daemons next (a daemon holds SOURCE open until it has
# exited), then what SOURCE sits on; then the pools (removing a segment does
# not disturb a daemon still attached), then accel_cleanup unmounts, stops
# the daemons and exits with the test's status.
cfs_cleanup() {
	local rc=$? p m
	for p in $CFS_JOBS; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $CFS_JOBS; do
		wait "$p" 2>/dev/null
	done
	if [ -n "$CFS_BELOW" ]; then
		for m in $ACCEL_MNTS; do
			accel_umount "$m"
		done
		for p in $ACCEL_PIDS; do
			accel_wait_exit "$p" 15 || kill -KILL "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		done
		"$CFS_BELOW"
	fi
	for p in $CFS_POOLS; do
		rm -f "/dev/shm$p"
	done
	(exit $rc)
	accel_cleanup
}

# cfs_umount_exit MNT: unmount MNT and wait for its daemons to exit (a pool
# with pool_keep=no is gone then)
cfs_umount_exit() {
	local p pids
	pids=$(accel_daemon_pids "$1")
	accel_umount "$1"
	for p in $pids; do
		accel_wait_exit "$p" 15 || fail "the daemon of $1 did not exit after unmount"
	done
}

cfs_init() {
	trap cfs_cleanup EXIT
	accel_require_fuse
	[ -x "${POOLSTAT:-}" ] || fail "POOLSTAT is not set (run through meson test)"
	[ -x "${CFSIO:-}" ] || fail "CFSIO is not set (run through meson test)"
	accel_tmpdir
	cd "$ACCEL_TMP" || fail "cd $ACCEL_TMP"
	mkdir src
}

cfs_pool() {
	POOL="/accel-t-$1-$$"
	CFS_POOLS="$CFS_POOLS $POOL"
	rm -f "/dev/shm$POOL"
}

cfs_bg() {
	"$@" &
	CFS_BG=$!
	CFS_JOBS="$CFS_JOBS $CFS_BG"
}

cfs_below() {
	CFS_BELOW=$1
}

# cfs_slowfs OPTIONS: slowfs (scripts/bench/slowfs.c) serving src on ./slow
# with -o OPTIONS, taken down by the cleanup before the test directory goes
CFS_SLOW_PID=""
cfs_slow_down() {
	accel_umount "$ACCEL_TMP/slow"
	[ -n "$CFS_SLOW_PID" ] && { kill "$CFS_SLOW_PID" 2>/dev/null; wait "$CFS_SLOW_PID" 2>/dev/null; }
}
cfs_slowfs() {
	[ -x "${SLOWFS:-}" ] || fail "SLOWFS is not set (run through meson test)"
	cfs_below cfs_slow_down
	mkdir -p slow
	"$SLOWFS" "$PWD/src" "$PWD/slow" -f -o "$1" 2>slowfs.log &
	CFS_SLOW_PID=$!
	accel_wait_mounted "$PWD/slow" "$CFS_SLOW_PID" || fail "slowfs did not mount: $(cat slowfs.log)"
}

CFS_LOOP=""
cfs_loop_down() {
	mountpoint -q "$ACCEL_TMP/src" && umount "$ACCEL_TMP/src"
	[ -n "$CFS_LOOP" ] && losetup -d "$CFS_LOOP" 2>/dev/null
}

cfs_ext4_src() {
	local size=$1
	shift
	CFS_WHY="mkfs.ext4 (e2fsprogs) is missing"
	command -v mkfs.ext4 >/dev/null || return 1
	CFS_WHY="no loop devices (/dev/loop-control missing)"
	[ -e /dev/loop-control ] || return 1
	cfs_below cfs_loop_down
	truncate -s "$size" img
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$@" img ||
		fail "mkfs.ext4 of a $size image"
	CFS_WHY="no free loop device"
	CFS_LOOP=$(losetup -f --show img 2>/dev/null) || return 1
	if [ -n "${CFS_EXT4_MOUNT_OPTS:-}" ]; then
		if ! mount -o "$CFS_EXT4_MOUNT_OPTS" "$CFS_LOOP" src 2>/dev/null; then
			CFS_WHY="ext4 refuses -o $CFS_EXT4_MOUNT_OPTS here: $(dmesg 2>/dev/null |
				sed -n 's/.*EXT4-fs ([^)]*): //p' | tail -1)"
			return 1
		fi
	else
		mount "$CFS_LOOP" src || fail "mount $CFS_LOOP on src"
	fi
}

cfs_python() {
	PY=/usr/bin/python3
	[ -x $PY ] || skip "$PY is needed"
}

cfs_fill_verdict() {
	local mode=$1 out=$2 file=$3 err=$4 acc rep have
	acc=$(sed -n 's/^accepted \([0-9]*\) .*/\1/p' "$out")
	rep=$(sed -n 's/.* reported \([01]\)$/\1/p' "$out")
	have=$(stat -c %s "$file")
	echo "$mode: write() accepted $acc bytes, SOURCE has $have, fsync/close reported: $rep"
	[ -n "$acc" ] || fail "the writer did not finish: $(cat "$out")"
	grep -q "$err" "$out" || fail "$mode: the writer never saw \"$err\": $(cat "$out")"
	[ "$have" -ge "$acc" ] || [ "$rep" = 1 ] ||
		fail "$mode: $((acc - have)) accepted bytes are not on SOURCE and nothing reported it"
}

cfs_cut_disk() {
	[ -n "${CUTFS:-}" ] && [ -x "$CUTFS" ] || fail "CUTFS is not set (run through meson test)"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 (e2fsprogs) is missing"
	[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control missing)"
	mkdir disk cut src
	truncate -s "$1" disk/img
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 disk/img ||
		fail "mkfs.ext4 of a $1 image"
	CFS_CUT_PID=""
	cfs_below cfs_cut_gone
	"$CUTFS" "$PWD/disk" "$PWD/cut" -s -f 2>cutfs.log &
	CFS_CUT_PID=$!
	accel_wait_mounted "$PWD/cut" "$CFS_CUT_PID" || fail "cutfs did not mount"
}

cfs_cut_up() {
	CFS_LOOP=$(losetup -f --show --direct-io=on cut/img) || skip "no free loop device"
	mount "$CFS_LOOP" src || fail "mount $CFS_LOOP (after a cut: journal replay)"
}

cfs_cut_down() {
	umount src || umount -l src
	losetup -d "$CFS_LOOP"
	CFS_LOOP=""
}

cfs_cut_ctl() {
	printf '%s' "$1" >cut/.cutfs-ctl || fail "cutfs refused \"$1\""
}

cfs_cut_gone() {
	cfs_loop_down
	mountpoint -q "$PWD/cut" && fusermount3 -u "$PWD/cut"
	[ -n "$CFS_CUT_PID" ] && wait "$CFS_CUT_PID" 2>/dev/null
	true
}

cfs_eventually() {
	local end=$(($(date +%s) + $1))
	shift
	while [ "$(date +%s)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@"
}

cfs_strace() {
	command -v strace >/dev/null || skip "strace is needed to watch the daemon's system calls"
	strace -f -qq -e trace="$2" -o "$1" -p "$ACCEL_PID" &
	CFS_STRACE=$!
	CFS_JOBS="$CFS_JOBS $CFS_STRACE"
	accel_trace_wait "$ACCEL_PID" || fail "strace did not attach to every thread of the daemon"
}

cfs_strace_stop() {
	kill -INT "$CFS_STRACE"
	wait "$CFS_STRACE" 2>/dev/null
}

cfs_wait_init() {
	accel_log_wait "mounted" || true
}

cfs_pt_mount() {
	"$ACCELFS" --version | grep -q -- '+passthrough' ||
		skip "built without passthrough: $("$ACCELFS" --version)"
	accel_mount "$PWD/src" "$PWD/m" -o "$1"
	cfs_wait_init
	grep -q "passthrough on" "$ACCEL_LOG" ||
		skip "the kernel does not offer passthrough: $(grep mounted "$ACCEL_LOG")"
}

cfs_kill9() {
	local mnt=$1
	shift
	[ $# -gt 0 ] || fail "no daemon to kill on $mnt" # a bare wait would wait for all
	kill -KILL "$@"
	wait "$@" 2>/dev/null
	fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" ||
		fail "cannot detach the dead mount $mnt"
}

refused() {
	local what=$1 re=$2 rc=0 pre=()
	shift 2
	while [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	ACCEL_MNTS="$ACCEL_MNTS $PWD/m"
	timeout 30 "${pre[@]}" "$ACCELFS" "$PWD/src" "$PWD/m" "$@" 2>err || rc=$?
	[ $rc = 1 ] || { cat err; fail "$what: exit $rc, want 1"; }
	[ "$(grep -c . err)" = 1 ] || { cat err; fail "$what: want exactly one line on stderr"; }
	grep -Eq "$re" err || { cat err; fail "$what: the message does not match /$re/"; }
	! accel_is_mounted "$PWD/m" || fail "$what: mounted anyway"
	[ -z "$(accel_daemon_pids "$PWD/m")" ] || fail "$what: a daemon is still running"
	echo "ok: $what: $(cat err)"
}

pstat() {
	"$POOLSTAT" "$POOL" "$@" || fail "poolstat $POOL $* failed"
}

kv() {
	sed -n "s/^$2=//p" "$1"
}

# delta BEFORE AFTER KEY: how much counter KEY grew between two snapshots.
delta() {
	echo $(($(kv "$2" "$3") - $(kv "$1" "$3")))
}

# file_id PATH: DEV:INO of PATH, as poolstat -i takes it.
file_id() {
	stat -c %d:%i "$1"
}
