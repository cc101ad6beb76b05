#!/bin/bash
# SPDX-License-Identifier: MIT
# shared-mode.sh: how a mount settles shared=auto|on|off (issue 25), as the
# log and `accel stat` say:
#   - a local SOURCE: off, "SOURCE is <type>", the writeback cache on;
#   - a FUSE SOURCE (another accelfs mount, as glusterfs or sshfs would be):
#     on by itself, no watcher, no writeback cache, 1 s timeouts, 16
#     worker threads (each request waits for round trips, not the CPU);
#   - shared=on over a local SOURCE: on, "shared=on"; threads= given: kept;
#   - shared=on with watch=inotify: refused with one line (no watcher can
#     see another host's changes), nothing mounted.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -x "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/lower" "$base/upper" "$base/on" "$base/x"
echo data >"$base/src/f"

# stat_says MNT TEXT: accel stat's line under MNT's mount row contains TEXT
stat_says() {
	"$ACCEL" stat --pool "$ACCEL_POOL" | grep -A1 " $1\$" | grep -q "shared mode $2" ||
		fail "accel stat does not say 'shared mode $2' for $1: $("$ACCEL" stat --pool "$ACCEL_POOL" | grep -A1 "$1")"
}
logged() { # WHAT TEXT: the daemon's log (ACCEL_LOG) has TEXT
	for _ in $(seq 50); do grep -q "$2" "$ACCEL_LOG" && return 0; sleep 0.1; done
	fail "$1: the log lacks '$2': $(cat "$ACCEL_LOG")"
}

accel_mount "$base/src" "$base/lower"
logged "local SOURCE" "shared mode: off (SOURCE is "
logged "local SOURCE" "writeback cache on"
stat_says "$base/lower" "off (SOURCE is "
echo "ok: a local SOURCE runs with shared mode off"

accel_mount "$base/lower" "$base/upper"
logged "FUSE SOURCE" "shared mode: on (SOURCE is fuse.accelfs, which other hosts may change)"
logged "FUSE SOURCE" "writeback cache off"
logged "FUSE SOURCE" "watch: off"
logged "FUSE SOURCE" "open files rechecked every 1s, 16 worker threads,"
stat_says "$base/upper" "on (SOURCE is fuse.accelfs"
[ "$(cat "$base/upper/f")" = data ] || fail "a read through the upper mount"
echo "ok: a FUSE SOURCE turns shared mode on by itself"

accel_mount "$base/src" "$base/on" -o shared=on,threads=3
logged "shared=on" "shared mode: on (shared=on, SOURCE is "
logged "shared=on,threads=3" "3 worker threads,"
stat_says "$base/on" "on (shared=on"
echo "ok: shared=on over a local SOURCE"

rc=0
"$ACCELFS" "$base/src" "$base/x" -o shared=on,watch=inotify,pool=$ACCEL_POOL 2>err || rc=$?
[ $rc != 0 ] && [ "$(grep -c . err)" = 1 ] && grep -q "watch=inotify cannot see changes other hosts make" err ||
	{ cat err; fail "shared=on,watch=inotify: exit $rc"; }
echo "ok: shared=on with watch=inotify is refused: $(cat err)"
echo "PASS: shared mode settles as the log and accel stat say"
