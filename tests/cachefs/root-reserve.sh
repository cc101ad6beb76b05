#!/bin/bash
# SPDX-License-Identifier: MIT
# root-reserve.sh MODE: a user writing through the mount gets no more of
# SOURCE than she would get writing SOURCE directly. ext4 keeps blocks back
# for root (mkfs -m; granted to fsuid 0 or CAP_SYS_RESOURCE); a root daemon
# writing a user's data with its own fsuid and capabilities used to hand
# them out: as nobody, 54 MiB of a 64 MiB ext4 with a 50 % reserve through
# the mount, 21 MiB directly. Here nobody fills SOURCE through an
# allow_other mount in write mode MODE (mount options): what she gets is
# within the users' share, her writes end in ENOSPC, and root still finds
# its reserve through the mount (except through a passthrough file, whose
# backing file never writes as root: passthrough.c).
set -u
mode=${1:?usage: root-reserve.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool rres
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
cfs_ext4_src 64M -m 50 || skip "$CFS_WHY"
chmod 777 src
share=$(df -k --output=avail src | tail -1) # KiB a user may take
mkdir m
if [ "$mode" = passthrough=always ]; then
	cfs_pt_mount "$mode,allow_other,pool=$POOL"
else
	accel_mount "$PWD/src" "$PWD/m" -o "$mode,allow_other,pool=$POOL"
fi

setpriv --reuid=65534 --regid=65534 --clear-groups \
	dd if=/dev/zero of=m/user bs=1M count=60 conv=fsync 2>err
rc=$?
used=$(du -k src/user | cut -f1)
echo "$mode: the users' share is $share KiB; nobody got $used KiB through the mount (dd: $rc)"
[ "$rc" -ne 0 ] && grep -q "No space left" err ||
	fail "$mode: nobody's 60 MiB did not end in ENOSPC: $(cat err)"
# a few blocks of metadata (extent tree) may come on top of the data
[ "$used" -le $((share + 256)) ] ||
	fail "$mode: nobody took $((used - share)) KiB of root's reserve through the mount"

if [ "$mode" != passthrough=always ]; then
	dd if=/dev/zero of=m/root bs=1M count=8 conv=fsync 2>err ||
		fail "$mode: root cannot use its reserve through the mount: $(cat err)"
	echo "$mode: root still wrote 8 MiB into its reserve"
fi
echo "PASS: $mode: a user's writes through the mount stay out of root's reserve"
