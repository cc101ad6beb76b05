# SPDX-License-Identifier: MIT
# tests/lib/mount.sh: shell helpers shared by the accelfs integration tests.
#
# Source it, then `trap accel_cleanup EXIT`.  Everything a test creates is
# registered here (temporary directories, mount points, daemon pids) so that
# accel_cleanup can unmount and stop the daemon even when the test fails half
# way.  Temporary directories are removed only when nothing is mounted below
# them, so a failed unmount can never turn into rm -rf through a live mount.
#
# Environment: ACCELFS  the daemon binary (set by meson),
#              ACCEL_TIMEOUT  seconds to wait for a mount (default 15).

ACCEL_TMPS=""
ACCEL_MNTS=""
ACCEL_PIDS=""
ACCEL_PID=""
ACCEL_TIMEOUT=${ACCEL_TIMEOUT:-15}
# The test's own buffer pool, for mounts that name none: the host's default
# /dev/shm/accelfs-default would carry cached state from test to test (and
# from or to a real accelfs on the machine) and outlive the run. Removed by
# accel_cleanup. accel_mount and accel_mount_daemon add "-o pool=$ACCEL_POOL"
# unless their arguments name a pool.
ACCEL_POOL=/accel-t-$$

# meson stops a test that runs too long with SIGTERM; bash would die without
# running the EXIT trap, so turn the signals into an exit (and the cleanup).
trap 'exit 143' TERM
trap 'exit 130' INT

. "$(dirname "${BASH_SOURCE[0]}")/report.sh"

accel_require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (mounting, chown, setuid to nobody)"
}

# accel_require_fuse: root, a usable /dev/fuse, fusermount3 and the daemon.
accel_require_fuse() {
	accel_require_root
	[ -c /dev/fuse ] || skip "/dev/fuse is missing"
	{ : </dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
	command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
	[ -n "${ACCELFS:-}" ] || fail "ACCELFS is not set (run through meson test)"
	[ -x "$ACCELFS" ] || fail "daemon $ACCELFS is not built"
}

# accel_tmpdir: makes a new directory (mode 0755, so nobody can traverse it),
# registers it for removal and leaves its name in ACCEL_TMP.  (Not "$(...)":
# the registration would be lost in the subshell.)
accel_tmpdir() {
	ACCEL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/accelfs-test.XXXXXX") || fail "mktemp"
	chmod 755 "$ACCEL_TMP"
	ACCEL_TMPS="$ACCEL_TMPS $ACCEL_TMP"
}

# accel_is_mounted DIR: true if DIR is a mount point in this namespace.
accel_is_mounted() {
	awk -v m="$1" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# accel_wait_mounted DIR PID: waits until DIR is mounted; fails if PID dies first.
accel_wait_mounted() {
	local i=0
	while ! accel_is_mounted "$1"; do
		if [ -n "$2" ] && ! kill -0 "$2" 2>/dev/null; then
			return 1
		fi
		i=$((i + 1))
		[ $i -le $((ACCEL_TIMEOUT * 20)) ] || return 1
		sleep 0.05
	done
}

# accel_mount SRC MNT [ARGS...]: starts the daemon in the foreground (-f) in
# the background of this shell, sets ACCEL_PID, waits for the mount.  The
# daemon's stderr goes to the file ACCEL_LOG.  A non-interactive shell starts
# background jobs with SIGINT ignored and libfuse keeps an ignored signal
# ignored, so the default disposition is restored for the SIGINT test.
accel_mount() {
	local src=$1 mnt=$2
	shift 2
	case " $* " in *pool=*) ;; *) set -- "$@" -o "pool=$ACCEL_POOL" ;; esac
	ACCEL_LOG=$(mktemp "${TMPDIR:-/tmp}/accelfs-log.XXXXXX")
	ACCEL_TMPS="$ACCEL_TMPS $ACCEL_LOG"
	ACCEL_MNTS="$ACCEL_MNTS $mnt"
	env --default-signal=INT,QUIT "$ACCELFS" -f "$src" "$mnt" "$@" 2>"$ACCEL_LOG" &
	ACCEL_PID=$!
	ACCEL_PIDS="$ACCEL_PIDS $ACCEL_PID"
	if ! accel_wait_mounted "$mnt" "$ACCEL_PID"; then
		cat "$ACCEL_LOG" >&2
		fail "accelfs $src $mnt $* did not mount within ${ACCEL_TIMEOUT}s"
	fi
}

# accel_wait_init MNT: return once the daemon has answered FUSE INIT, so
# every line it logs there (the "mounted" summary, the descriptor mode) is
# in the log: the kernel holds a request on the mount until that answer,
# which the daemon sends after logging. The mount shows in mountinfo before.
accel_wait_init() {
	stat "$1" >/dev/null
}

# accel_log_wait PATTERN [SECONDS]: wait up to SECONDS (default 5) for the
# last mount's log to hold a line matching PATTERN (grep -E). Lines the
# daemon writes at FUSE INIT may come after the mount shows in mountinfo.
accel_log_wait() {
	local i
	for i in $(seq $((${2:-5} * 20))); do
		grep -qE "$1" "$ACCEL_LOG" && return 0
		sleep 0.05
	done
	grep -qE "$1" "$ACCEL_LOG"
}

# accel_mount_daemon SRC MNT [ARGS...]: the default daemonising mode; the
# command must return 0 only once the mount is in place.
accel_mount_daemon() {
	local src=$1 mnt=$2 rc=0
	shift 2
	case " $* " in *pool=*) ;; *) set -- "$@" -o "pool=$ACCEL_POOL" ;; esac
	ACCEL_MNTS="$ACCEL_MNTS $mnt"
	timeout "$ACCEL_TIMEOUT" "$ACCELFS" "$src" "$mnt" "$@" || rc=$?
	[ $rc = 0 ] || fail "accelfs $src $mnt $* exited $rc"
	accel_is_mounted "$mnt" || fail "accelfs returned before $mnt was mounted"
	ACCEL_PIDS="$ACCEL_PIDS $(accel_daemon_pids "$mnt")"
}

# accel_daemon_pids MNT: pids of accelfs processes with MNT as an argument.
accel_daemon_pids() {
	local f
	for f in $(grep -lzxF -- "$1" /proc/[0-9]*/cmdline 2>/dev/null); do
		head -z -n1 "$f" 2>/dev/null | tr -d '\0' | grep -q accelfs || continue
		f=${f#/proc/}
		echo "${f%/cmdline}"
	done
}

# accel_traced PID: is every thread of PID traced (strace -p has attached)?
accel_traced() {
	local t
	for t in /proc/"$1"/task/*/status; do
		[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "$t" 2>/dev/null)" != 0 ] || return 1
	done
}

# accel_trace_wait PID: wait up to 10 s for strace -f -p PID to have every
# thread; false if it did not (calls made before then would be missed).
accel_trace_wait() {
	local i
	for i in $(seq 100); do
		accel_traced "$1" && return 0
		sleep 0.1
	done
	return 1
}

# accel_dump_daemons: where each daemon of the test is, on stderr: every
# thread's state, wait channel and kernel stack, its user stacks if gdb is
# there, and the tail of the last mount's log. For a test whose command
# hung under a bound of its own (the daemon still alive to be looked at).
accel_dump_daemons() {
	local p t
	for p in $ACCEL_PIDS; do
		[ -d "/proc/$p" ] || continue
		echo "--- daemon $p: $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-300)"
		for t in /proc/"$p"/task/*; do
			echo "thread ${t##*/} $(cat "$t/comm") $(cut -d' ' -f3 "$t/stat") wchan $(cat "$t/wchan" 2>/dev/null)"
			sed 's/^/    /' "$t/stack" 2>/dev/null
		done
		command -v gdb >/dev/null &&
			timeout 30 gdb -p "$p" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(Thread|#)'
	done >&2
	[ -z "${ACCEL_LOG:-}" ] || [ ! -f "$ACCEL_LOG" ] || { echo "--- log" && tail -30 "$ACCEL_LOG"; } >&2
}

# accel_umount MNT: fusermount3 -u, then umount, then a lazy umount.
accel_umount() {
	accel_is_mounted "$1" || return 0
	fusermount3 -u "$1" 2>/dev/null || umount "$1" 2>/dev/null || umount -l "$1"
}

# accel_wait_exit PID SECONDS: waits for PID to disappear; false on timeout.
accel_wait_exit() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($2 * 20)) ] || return 1
		sleep 0.05
	done
}

accel_cleanup() {
	local rc=$? m p t
	for m in $ACCEL_MNTS; do
		accel_umount "$m" || echo "cleanup: could not unmount $m" >&2
	done
	for p in $ACCEL_PIDS; do
		kill -0 "$p" 2>/dev/null || continue
		kill -TERM "$p" 2>/dev/null
		accel_wait_exit "$p" 5 || kill -KILL "$p" 2>/dev/null
	done
	rm -f "/dev/shm$ACCEL_POOL"
	for t in $ACCEL_TMPS; do
		if grep -qF " $t" /proc/self/mountinfo; then
			echo "cleanup: something is still mounted below $t; not removing it" >&2
			continue
		fi
		rm -rf "$t"
	done
	exit $rc
}

# accel_tree_sum DIR: one line per entry below DIR with type, mode, owner,
# size, link target, xattrs and the checksum of every file below 64 MiB (big
# sparse files would take minutes); for before/after checks.
accel_tree_sum() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s %T@ %l\n' | LC_ALL=C sort &&
		find . -type f -size -64M -print0 | LC_ALL=C sort -z | xargs -0r sha256sum &&
		getfattr -R -d -m - --absolute-names . 2>/dev/null)
}

# accel_check_untouched DIR BEFORE_FILE: DIR still matches the saved listing.
accel_check_untouched() {
	accel_tree_sum "$1" | cmp -s - "$2" || {
		accel_tree_sum "$1" | diff "$2" - >&2
		fail "$1 was modified"
	}
}
