#!/bin/bash
# SPDX-License-Identifier: MIT
# log.sh: where a running daemon's messages go (-o log=).
#   - log=FILE: a daemonised mount writes its "mounted" and "unmounting"
#     lines to FILE, one timestamped line each;
#   - log=auto on a host without /dev/log (a container): a daemonised mount
#     falls back to /var/log/accelfs.log instead of losing every message (run
#     in a private mount namespace with a tmpfs over /var/log and /dev/log
#     hidden, so the host's files are untouched);
#   - a log file that cannot be opened is a start-up error naming the file,
#     and nothing is mounted.
set -u
. "$(dirname "$0")/../lib/mount.sh"
accel_require_fuse
if [ -z "${ACCEL_IN_NS:-}" ]; then
	unshare -m --propagation private true 2>/dev/null ||
		skip "unshare -m is not permitted (needed for a private /var/log)"
	ACCEL_IN_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
trap accel_cleanup EXIT

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt" "$base/mnt2" "$base/mnt3"
echo hello >"$base/src/f"

# An explicit file.
accel_mount_daemon "$base/src" "$base/mnt" -o "log=$base/daemon.log"
cat "$base/mnt/f" >/dev/null || fail "read through the mount failed"
pids=$(accel_daemon_pids "$base/mnt")
fusermount3 -u "$base/mnt" || fail "fusermount3 -u failed"
for p in $pids; do accel_wait_exit "$p" 10 || fail "daemon $p did not exit"; done
cat "$base/daemon.log"
grep -Eq '^[0-9-]{10}T[0-9:]{8}Z accelfs\[[0-9]+\]: info: mounted '"$base/src" "$base/daemon.log" ||
	fail "log=FILE: no timestamped 'mounted' line in $base/daemon.log"
grep -q 'info: unmounting' "$base/daemon.log" || fail "log=FILE: no 'unmounting' line"

# auto without a syslog daemon: the fallback file.
[ ! -e /dev/log ] || mount --bind /dev/null /dev/log || fail "cannot hide /dev/log"
mount -t tmpfs tmpfs /var/log || fail "cannot mount a private /var/log"
accel_mount_daemon "$base/src" "$base/mnt2"
pids=$(accel_daemon_pids "$base/mnt2")
fusermount3 -u "$base/mnt2" || fail "fusermount3 -u failed"
for p in $pids; do accel_wait_exit "$p" 10 || fail "daemon $p did not exit"; done
grep -q "info: mounted $base/src" /var/log/accelfs.log ||
	fail "log=auto without /dev/log: nothing in /var/log/accelfs.log"

# A log file that cannot be opened: one line, exit 1, nothing mounted.
rc=0
"$ACCELFS" "$base/src" "$base/mnt3" -o "log=$base/missing-dir/x.log,pool=$ACCEL_POOL" \
	2>"$base/err" || rc=$?
cat "$base/err"
[ $rc = 1 ] || fail "unopenable log file: exit $rc, expected 1"
[ "$(wc -l <"$base/err")" = 1 ] && grep -q "$base/missing-dir/x.log" "$base/err" ||
	fail "unopenable log file: expected one line naming the file"
! accel_is_mounted "$base/mnt3" || fail "mounted despite the log error"
echo "PASS: log=FILE, log=auto fallback, bad log file"
