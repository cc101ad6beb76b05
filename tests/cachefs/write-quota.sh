#!/bin/bash
# SPDX-License-Identifier: MIT
# write-quota.sh MODE: a user's disk quota on SOURCE holds through the mount,
# and its EDQUOT reaches her program (issue 27). SOURCE is an ext4 with
# quotas (mkfs -O quota, mounted usrquota) where nobody may use 16 MiB. As
# nobody, first directly on SOURCE (the reference: her write must end in
# EDQUOT there), then through an allow_other mount in write mode MODE (mount
# options), a writer fills a file with 4 KiB writes, fsync'ing every MiB,
# until write() fails: she gets no more than her quota, and every byte
# write() accepted is on SOURCE, or the fsync or close after it reports the
# error (tests/cachefs/err_writer.py).
set -u
mode=${1:?usage: write-quota.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool wquota
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
cfs_python
grep -qw quota /proc/filesystems 2>/dev/null || [ -d /proc/sys/fs/quota ] ||
	skip "the kernel has no disk quotas (CONFIG_QUOTA)"
CFS_EXT4_MOUNT_OPTS=usrquota cfs_ext4_src 64M -O quota || skip "$CFS_WHY"
chmod 777 src
# nobody's block hard limit: 16 MiB (quotactl Q_SETQUOTA, limits in KiB)
$PY - "$CFS_LOOP" <<'PYEOF' || skip "cannot set a user quota on $CFS_LOOP"
import ctypes, os, sys
class Dqblk(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("bhard", "bsoft", "curspace", "ihard",
                "isoft", "curinodes", "btime", "itime")] + [("valid", ctypes.c_uint32)]
libc = ctypes.CDLL(None, use_errno=True)
Q_SETQUOTA, USRQUOTA, QIF_BLIMITS = 0x800008, 0, 1
q = Dqblk(bhard=16 * 1024, bsoft=16 * 1024, valid=QIF_BLIMITS)
if libc.quotactl(ctypes.c_int((Q_SETQUOTA << 8) | USRQUOTA), sys.argv[1].encode(), 65534,
                 ctypes.byref(q)):
    e = ctypes.get_errno()
    sys.exit("quotactl: " + os.strerror(e))
PYEOF
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
as_nobody dd if=/dev/zero of=src/direct bs=1M count=32 conv=fsync 2>err
grep -q "Disk quota exceeded" err || skip "the quota is not enforced on SOURCE: $(cat err)"
quota=$(du -k src/direct | cut -f1)
rm -f src/direct
echo "directly on SOURCE nobody got $quota KiB before EDQUOT"

mkdir m
if [ "$mode" = passthrough=always ]; then
	cfs_pt_mount "$mode,allow_other,pool=$POOL"
else
	accel_mount "$PWD/src" "$PWD/m" -o "$mode,allow_other,pool=$POOL"
fi
as_nobody $PY "$(dirname "$0")/err_writer.py" m/big fill >out
cat out
accel_umount "$PWD/m"
cfs_fill_verdict "$mode" out src/big "Disk quota exceeded"
used=$(du -k src/big | cut -f1)
[ "$used" -le $((quota + 256)) ] ||
	fail "$mode: nobody got $used KiB through the mount, $quota KiB directly"
echo "PASS: $mode: the user's quota holds through the mount; every accepted byte is on SOURCE, or EDQUOT was reported"
