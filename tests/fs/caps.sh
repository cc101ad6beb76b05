#!/bin/bash
# SPDX-License-Identifier: MIT
# caps.sh: accelfs remembers that a file has no security.capability for
# attr_timeout (the kernel asks before every write), yet never hides a
# capability: one set through the mount is seen at once, and one set or
# removed directly in SOURCE is seen after attr_timeout.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v setcap >/dev/null && command -v getcap >/dev/null ||
	skip "setcap/getcap (libcap2-bin) are not installed"

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
# the test's own pool (accel_mount adds it), which accel_cleanup removes
accel_mount "$base/src" "$base/mnt" -o attr_timeout=1,pool_keep=no

printf 'x%.0s' $(seq 100) >"$base/mnt/f" # writes: the daemon now knows "no caps"
setcap cap_net_raw+ep "$base/mnt/f" || fail "setcap through the mount failed"
getcap "$base/mnt/f" | grep -q cap_net_raw || fail "a capability set through the mount is not seen"
getcap "$base/src/f" | grep -q cap_net_raw || fail "the capability did not reach SOURCE"

setcap -r "$base/src/f"
sleep 1.5
getcap "$base/mnt/f" | grep -q cap_net_raw && fail "a capability removed in SOURCE is still seen after attr_timeout"
setcap cap_net_admin+ep "$base/src/f"
sleep 1.5
getcap "$base/mnt/f" | grep -q cap_net_admin || fail "a capability set in SOURCE is not seen after attr_timeout"
echo "PASS: security.capability cached as absent only for attr_timeout, changes seen"
