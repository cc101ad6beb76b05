#!/bin/bash
# SPDX-License-Identifier: MIT
# sysgen_mount.sh - accel sysgen on the real system with an accelfs mount:
# the mount is found in mountinfo, its FUSE connection (minor of st_dev) and
# BDI rows carry the values in /sys/fs/fuse/connections/N and
# /sys/class/bdi/0:N, and its pool appears. Reads only: nothing is --applied.
# Runs in a private mount namespace so that mounting fusectl (when the host
# has not) changes nothing outside the test.
# $1: accel; ACCELFS: the daemon (set by meson).
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to mount FUSE"; exit 77; }
if [ -z "${ACCEL_IN_NS:-}" ]; then
	unshare -m --propagation private true 2>/dev/null ||
		{ echo "SKIP: unshare -m is not permitted"; exit 77; }
	ACCEL_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

fuse_setup sg
command -v python3 >/dev/null || skip "python3 is not installed"
# a timeout's SIGTERM (or ^C) runs lib.sh's cleanup: nothing stays mounted
trap 'exit 143' TERM
trap 'exit 130' INT

CONN=/sys/fs/fuse/connections
if [ ! -e "$CONN/README" ] && ! ls "$CONN"/*/max_background >/dev/null 2>&1; then
	mount -t fusectl none "$CONN" 2>/dev/null || skip "fusectl cannot be mounted on $CONN"
fi
echo data >"$SRC/f"
"$ACCELFS" "$SRC" "$FMNT" -o "pool=$POOL" || fail "mount accelfs"
cat "$FMNT/f" >/dev/null || fail "read through the mount"
DEV=$(mountpoint -d "$FMNT") || fail "$FMNT is not a mount point"
N=${DEV#*:}
[ -r "$CONN/$N/max_background" ] || fail "no $CONN/$N for the mount (st_dev $DEV)"

"$ACCEL" sysgen --json >"$T/j"
rc=$?
[ "$rc" -le 1 ] || fail "accel sysgen exited $rc: $(cat "$T/j")"
row() { jget "$T/j" "[r['$2'] for r in j['rows'] if r['parameter'] == '$1'][0]"; }
expect_eq mount "$(jget "$T/j" "[(m['connection'], m['bdi'], m['uid']) for m in j['mounts'] if m['mountpoint'] == '$FMNT']")" \
	"[($N, '$DEV', 0)]"
for k in max_background congestion_threshold; do
	expect_eq "fuse.$N.$k" "$(row "fuse.$N.$k" current)" "$(cat "$CONN/$N/$k")"
	expect_eq "fuse.$N.$k mount" "$(row "fuse.$N.$k" mount)" "$FMNT"
done
for k in read_ahead_kb max_ratio; do
	expect_eq "bdi.$DEV.$k" "$(row "bdi.$DEV.$k" current)" "$(cat "/sys/class/bdi/$DEV/$k")"
done
echo "connection $N: max_background $(cat "$CONN/$N/max_background")," \
	"congestion_threshold $(cat "$CONN/$N/congestion_threshold") (accelfs asks 64/48)"
ok "the mount's connection and BDI rows show the values in sysfs"

[ -e "/dev/shm$POOL" ] || fail "the daemon made no pool $POOL"
expect_eq "pool row" "$(row "pool $POOL" status)" info
expect_eq "low count" "$(jget "$T/j" "j['low']")" \
	"$(jget "$T/j" "len([r for r in j['rows'] if r['status'] == 'LOW'])")"
expect_eq "exit status" "$rc" "$([ "$(jget "$T/j" "j['low']")" -eq 0 ] && echo 0 || echo 1)"
"$ACCEL" sysgen >"$T/t"
grep -q "^accelfs mount $FMNT: FUSE connection $N, BDI $DEV, daemon uid 0\$" "$T/t" ||
	fail "text output lacks the mount line: $(cat "$T/t")"
grep -Eq "^fuse\.$N\.max_background +$(cat "$CONN/$N/max_background") " "$T/t" ||
	fail "text output lacks the connection row: $(cat "$T/t")"
ok "pool row, exit status and text table agree"
