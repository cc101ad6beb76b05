#!/bin/bash
# SPDX-License-Identifier: MIT
# tuning_noxattr.sh - accel set on a file system without user extended
# attributes (a loop-mounted vfat image, or ramfs where the kernel has no
# vfat): one clear line and exit 1; accel show still works and says the
# mount defaults apply.
. "$(dirname "$0")/lib.sh"

# mount_vfat: a loop-mounted vfat image on $MNT, or false
mount_vfat() {
	grep -qw vfat /proc/filesystems || modprobe -q vfat 2>/dev/null || return 1
	command -v mkfs.vfat >/dev/null || return 1
	truncate -s 8M "$T/img" && mkfs.vfat "$T/img" >/dev/null || return 1
	LOOP=$(losetup -f --show "$T/img") || return 1
	mount -t vfat "$LOOP" "$MNT" 2>/dev/null
}

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a file system without user xattrs"
mkdir -p "$MNT"
if mount_vfat; then
	echo "# vfat loop image"
elif mount -t ramfs accel-test "$MNT" 2>/dev/null; then
	echo "# vfat unavailable (no module or no mkfs.vfat): using ramfs"
else
	skip "cannot mount vfat or ramfs"
fi
MOUNTS=("$MNT")
echo data >"$MNT/f"

expect_rc 1 "$ACCEL" set "$MNT/f" --global-buffers=30
[ "$OUT" = "accel set: $MNT/f: the file system does not support user extended attributes (mount it with user_xattr?)" ] ||
	fail "message: $OUT"
expect_rc 0 "$ACCEL" show "$MNT/f"
grep -q "no user extended attributes: mount defaults" <<<"$OUT" || fail "show: $OUT"
grep -q "^  global_buffers    (mount default)$" <<<"$OUT" || fail "show default: $OUT"
"$ACCEL" show --json "$MNT/f" | grep -q '"xattrs": "unsupported"' || fail "show --json"
ok "no user xattrs: one clear line from accel set, accel show still works"
