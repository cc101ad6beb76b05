#!/bin/bash
# SPDX-License-Identifier: MIT
# pool-squat.sh: a pool segment squatted by another user is not our pool
# (issue #12, item 2). User nobody creates the pool first (accel warm), under
# the name root's mount will use, and makes it 0666: a valid pool, which root's
# daemon used to attach to, so that nobody could read root's cached bytes from
# it and write bytes root's readers would be served:
#  - the mount is refused: exit 1, one line naming the segment, its owner and
#    mode and the fix, nothing mounted, the segment left exactly as it was;
#  - the same for a symlink and a FIFO planted under the pool's name;
#  - `accel pool --list` shows the segment as untrusted without reading it,
#    `accel stat` refuses it with the same line, `accel pool --reset` removes it;
#  - the unnamed default pool squatted the same way: the mount runs without
#    global buffers and warns with that line (in a private /dev/shm, so the
#    host's real default pool is never touched).
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
[ -x "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
command -v setpriv >/dev/null || skip "setpriv is not installed"
mkdir m
echo data >src/f
echo public >pub
# as_nobody CMD...: run CMD as user nobody, with umask 0
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'umask 0; exec "$@"' sh "$@"
}

cfs_pool squat
seg=/dev/shm$POOL
# (the tools never create a pool: nobody makes the segment by hand)
as_nobody dd if=/dev/zero of="$seg" bs=64k count=16 status=none && as_nobody chmod 666 "$seg" ||
	fail "nobody cannot create the pool $seg"
[ "$(stat -c %u:%a "$seg")" = 65534:666 ] || fail "squatted segment is $(stat -c %u:%a "$seg")"
sum=$(sha256sum <"$seg")
refused "segment of nobody, mode 0666" \
	"^accelfs: pool $seg: owned by uid 65534 mode 0666, not by uid 0 with mode within 0600 \(remove it: accel pool --reset ${POOL#/}, or choose -o pool=NAME\)$" \
	-- -o "pool=$POOL"
[ "$(sha256sum <"$seg")" = "$sum" ] || fail "the daemon changed the squatted segment"
[ "$(stat -c %u:%a "$seg")" = 65534:666 ] || fail "the daemon changed the segment's owner or mode"

# the tools apply the same check before they read a segment
"$ACCEL" pool --list >list || fail "accel pool --list failed"
grep -E "^$POOL .*untrusted: pool $seg: owned by uid 65534 mode 0666" list ||
	{ cat list; fail "accel pool --list does not show $POOL as untrusted"; }
rc=0
"$ACCEL" stat --pool "$POOL" >out 2>err || rc=$?
[ $rc != 0 ] && [ "$(grep -c . err)" = 1 ] && grep -q "owned by uid 65534 mode 0666" err ||
	{ cat out err; fail "accel stat on the squatted pool: exit $rc"; }
echo "ok: accel pool --list and accel stat call it untrusted"

# a symlink to it, and a FIFO, under another pool name
cfs_pool link
ln -s "$seg" "/dev/shm$POOL"
refused "symlink in /dev/shm" "pool /dev/shm$POOL: a symbolic link, owned by uid 0 mode 0777" \
	-- -o "pool=$POOL"
[ "$(sha256sum <"$seg")" = "$sum" ] || fail "the daemon wrote through the symlink"
cfs_pool fifo
mkfifo -m 600 "/dev/shm$POOL"
refused "FIFO in /dev/shm" "pool /dev/shm$POOL: a FIFO, owned by uid 0 mode 0600" -- -o "pool=$POOL"

"$ACCEL" pool --reset "${seg#/dev/shm}" >/dev/null || fail "accel pool --reset of the squatted segment"
[ ! -e "$seg" ] || fail "accel pool --reset left $seg"
echo "ok: accel pool --reset removes it"

# the default pool, squatted in a private /dev/shm: no global buffers, one warning
if unshare -m true 2>/dev/null; then
	ACCEL_MNTS="$ACCEL_MNTS $PWD/m"
	cat >squat-default.sh <<'EOS'
mount -t tmpfs -o size=128m tmpfs /dev/shm || exit 3
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	'umask 0; dd if=/dev/zero of=/dev/shm/accelfs-default bs=64k count=16 status=none &&
	 chmod 666 /dev/shm/accelfs-default' || exit 7
sha256sum </dev/shm/accelfs-default >sum.before
"$@" 2>err || exit 4
cat /proc/self/mountinfo | grep -q " $2 " || exit 5
cat "$2/f" >out || exit 6
fusermount3 -u "$2"
stat -c %u:%a /dev/shm/accelfs-default >seg
sha256sum </dev/shm/accelfs-default | cmp -s - sum.before || echo changed >>seg
EOS
	ACCEL="$ACCEL" timeout 30 unshare -m sh squat-default.sh "$ACCELFS" "$PWD/src" "$PWD/m" ||
		{ cat err; fail "default pool squatted: the mount failed (exit $?)"; }
	grep -q "^accelfs: warning: pool /dev/shm/accelfs-default: owned by uid 65534 mode 0666.*running without global buffers" err ||
		{ cat err; fail "default pool squatted: no warning naming it"; }
	[ "$(cat out)" = data ] || fail "default pool squatted: wrong data"
	[ "$(cat seg)" = 65534:666 ] || fail "default pool squatted: segment changed: $(cat seg)"
	echo "ok: a squatted default pool: $(cat err)"
else
	echo "NOTE: no private mount namespace (unshare -m); squatted default pool not tested"
fi
echo "PASS: squatted pool segments are refused"
