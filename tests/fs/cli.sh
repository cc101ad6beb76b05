#!/bin/bash
# SPDX-License-Identifier: MIT
# cli.sh: the daemon's ordinary command line: --version and --help succeed
# and print on stdout, the default (daemonising) mode returns 0 only once the
# mount is in place and its daemon then serves requests, -o ro refuses
# writes, and fusermount3 -u ends the daemon.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt" "$base/mnt2"
echo hello >"$base/src/f"

out=$("$ACCELFS" --version) || fail "--version exited $?"
echo "$out" | grep -q '0\.1\.0' || fail "--version does not print the version: $out"
out=$("$ACCELFS" --help) || fail "--help exited $?"
for w in backend threads allow_other default_permissions ro attr_timeout entry_timeout \
	kernel_cache writeback; do
	echo "$out" | grep -q -- "$w" || fail "--help does not mention $w"
done

accel_mount_daemon "$base/src" "$base/mnt"
[ -n "$ACCEL_PIDS" ] || fail "no daemon process found for $base/mnt"
[ "$(cat "$base/mnt/f")" = hello ] || fail "read through the daemonised mount failed"
echo more >>"$base/mnt/f"
[ "$(tail -1 "$base/src/f")" = more ] || fail "append did not reach SOURCE"

accel_mount_daemon "$base/src" "$base/mnt2" -o ro
if echo x >"$base/mnt2/g" 2>/dev/null; then
	fail "creating a file on a ro mount succeeded"
fi
[ ! -e "$base/src/g" ] || fail "ro mount created a file in SOURCE"
[ "$(head -1 "$base/mnt2/f")" = hello ] || fail "ro mount cannot read"

for m in "$base/mnt" "$base/mnt2"; do
	pids=$(accel_daemon_pids "$m")
	fusermount3 -u "$m" || fail "fusermount3 -u $m failed"
	for p in $pids; do
		accel_wait_exit "$p" 10 || fail "daemon $p still running after fusermount3 -u"
	done
done
# a mount point that is not empty: mounted (as mount(8) does), with one warning
mkdir "$base/full"
touch "$base/full/a" "$base/full/b"
"$ACCELFS" "$base/src" "$base/full" -o "pool=$ACCEL_POOL" 2>"$base/full.err" ||
	fail "mounting over a non-empty directory failed: $(cat "$base/full.err")"
ACCEL_MNTS="$ACCEL_MNTS $base/full"
grep -qx "accelfs: warning: $base/full is not empty: its 2 entries are hidden while the mount is there" \
	"$base/full.err" || fail "no warning for a non-empty mount point: $(cat "$base/full.err")"
fusermount3 -u "$base/full" || fail "fusermount3 -u $base/full"
echo "PASS: command line, daemonising mount, ro, a non-empty mount point"
