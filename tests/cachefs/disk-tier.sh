#!/bin/bash
# SPDX-License-Identifier: MIT
# disk-tier.sh CASE: the disk tier below the pool (-o disk_cache=DIR,
# cache/disk.h). Every mount here removes its pool at unmount
# (pool_keep=no), so a remount starts with no RAM cache of its own, as after
# a reboot; kernel_cache=never sends every read to the daemon.
#   restart  a file read once is read again after a remount with 0 SOURCE
#            reads, all from DIR; accel stat counts the hits; a file set
#            out of the tier (accel set --disk-cache=off) is not kept
#   change   a file changed in SOURCE (same size, new bytes), while
#            unmounted or while mounted between two opens, is read as it
#            now is: its old entries are never served
#   torn     damaged buckets (a flipped data or header byte, one cut
#            short as a power cut while writing leaves it) are detected,
#            punched out, counted, never served, and kept again whole; the
#            old layout's directory (accelfs-disk-v1) is removed
#   evict    DIR stays within disk_cache_size, the daemon in the background
#            as without -f; entries read again outlive entries read once
#   write    bytes written through the mount are what every later read
#            sees, in this mount and after a remount
#   full     DIR on a file system too small for the file: every read is
#            still right, the entries that did not fit are counted
#            (put_errors), and the tier makes room as if over its bound
#   trust    DIR open to other users, owned by another, or a symlink:
#            refused with one line; disk_cache= without the pool: refused
#   auto     disk_cache=auto: off on a local SOURCE; on a shared one
#            (shared=on) in /var/cache/accelfs, made 0700, sized a tenth of
#            its file system unless disk_cache_size is given; an unsafe
#            directory there costs the tier, never the mount, and so do a
#            /var/cache too small for the tier's least size and none at all
#            (never made: it is the system's). Runs in a
#            mount namespace of its own with a tmpfs on /var/cache, so the
#            host's /var/cache is never touched
#   auto-user  the same for a daemon that is not root (nobody, in a mount
#            namespace with a /dev/fuse it may open): with neither HOME nor
#            XDG_CACHE_HOME the mount works without the tier and says why in
#            one line; with HOME, ~/.cache/accelfs is made 0700 and used;
#            XDG_CACHE_HOME/accelfs before it
set -u
if [[ ${1:-} = auto* ]] && [ -z "${DISK_AUTO_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: auto needs root (a mount namespace, /var/cache)"; exit 77; }
	unshare -m true 2>/dev/null || { echo "SKIP: no mount namespaces here (unshare -m)"; exit 77; }
	DISK_AUTO_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool disk
case=${1:?usage: disk-tier.sh restart|change|torn|evict|write|full|trust|auto|auto-user}
DC=$PWD/dc
ENTRIES=$DC/accelfs-disk-v2
opts="kernel_cache=never,pool=$POOL,global_cache=16M,bucket_size=64K,local_buffers=0,pool_keep=no,disk_cache=$DC"
mkdir m

up() {
	accel_mount "$PWD/src" "$PWD/m" -o "$opts${1:+,$1}"
}

# up_daemon: as up, the daemon forked into the background as without -f
up_daemon() {
	accel_mount_daemon "$PWD/src" "$PWD/m" -o "$opts"
}

down() {
	cfs_umount_exit "$PWD/m"
	[ ! -e "/dev/shm$POOL" ] || fail "pool_keep=no left the pool behind"
}

# first_read SIZE: src/F of SIZE bytes, mounted, read once, all of it kept
first_read() {
	"$CFSIO" gen src/F "$1" || fail "cannot create src/F"
	up
	cmp m/F src/F || fail "first read of F differs"
	dreach puts "$(nb "$1")"
}

# dstat KEY: the mount's disk tier counter KEY from accel stat --json
dstat() {
	"$ACCEL" stat --pool "$POOL" --json 2>/dev/null |
		sed -n "s/.*\"disk_$1\": \([0-9]*\).*/\1/p"
}

# dreach KEY MIN: wait up to 5 s for counter KEY to reach MIN
dreach() {
	local _ v
	for _ in $(seq 500); do
		v=$(dstat "$1")
		[ "${v:-0}" -ge "$2" ] && return 0
		sleep 0.01
	done
	fail "disk_$1 is ${v:-missing} after 5 s, want >= $2"
}

# backend_reads CMD...: SOURCE reads of the whole pool while CMD runs (one
# file in play at a time; a fresh pool after each remount)
backend_reads() {
	pstat >ba
	"$@" || fail "$* failed"
	pstat >bb
	delta ba bb backend_reads
}

SLOT=$((4096 + 65536)) # a bucket's place in an entry: its header page, its data

# entries: buckets kept in the tier (slots with a header), every file's
entries() {
	find "$ENTRIES" -type f -print0 2>/dev/null | python3 -c '
import sys
n = 0
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        with open(p, "rb") as f:
            data = f.read()
        n += sum(data[o:o + 8] == b"ACCDISK2" for o in range(0, len(data), '$SLOT'))
print(n)'
}

file_bytes() {
	find "$ENTRIES" -type f -printf '%b\n' | awk '{ s += $1 * 512 } END { print s + 0 }'
}

within_bound() {
	[ "$(file_bytes)" -le $((1 << 20)) ]
}

nb() { # buckets of a file of $1 bytes
	echo $((($1 + 65535) / 65536))
}

case $case in
restart)
	size=$(((2 << 20) + 99))
	"$CFSIO" gen src/F $size || fail "cannot create src/F"
	"$CFSIO" gen src/P $size || fail "cannot create src/P"
	"$ACCEL" set -q src/P --disk-cache=off || fail "accel set --disk-cache=off failed"
	up
	cmp m/F src/F || fail "first read of F differs"
	dreach puts "$(nb $size)"
	cmp m/P src/P || fail "first read of P differs"
	sleep 0.3
	[ "$(entries)" = "$(nb $size)" ] ||
		fail "$(entries) entries in $DC, want $(nb $size): P (disk_cache=off) was kept too"
	[ "$(stat -c %a "$DC")" = 700 ] || fail "disk_cache created $DC with mode $(stat -c %a "$DC")"
	down
	[ "$(entries)" -ge "$(nb $size)" ] || fail "$(entries) entries in $DC, want $(nb $size)"
	up
	n=$(backend_reads cmp m/F src/F)
	[ "$n" = 0 ] || fail "F after the remount: $n SOURCE reads, want 0 (all from the disk tier)"
	dreach hits "$(nb $size)"
	"$ACCEL" stat --mount "$PWD/m" | grep -q "disk tier .*$DC: [0-9]* hits" ||
		fail "accel stat does not show the disk tier: $("$ACCEL" stat --mount "$PWD/m")"
	echo "PASS: after a remount with no pool left, F came from the disk tier, 0 SOURCE reads"
	;;
change)
	size=$((1 << 20))
	first_read $size
	down
	# behind the mount (another host, the bare mount): same size, new bytes
	"$CFSIO" gen src/F.new $size || fail "cannot create the new F"
	cmp -s src/F src/F.new && fail "the new F is the old one"
	cat src/F.new >src/F
	up
	cmp m/F src/F || fail "F changed while unmounted: old entries were served"
	dreach puts "$(nb $size)"
	# and while mounted, between two opens
	"$CFSIO" gen src/F.third $size || fail "cannot create the third F"
	cat src/F.third >src/F
	cmp m/F src/F || fail "F changed while mounted: old entries were served"
	# (hits there are the new state's: a miss's run and the read-ahead keep
	# buckets the reader then finds on disk; cmp is what proves no old byte)
	echo "PASS: a file changed behind the mount is read as it now is, never from old entries"
	;;
torn)
	size=$((1 << 20))
	first_read $size
	down
	set -- $(find "$ENTRIES" -type f)
	[ $# = 1 ] || fail "$# entries for one file in $ENTRIES, want 1"
	e=$1
	printf 'X' | dd of="$e" bs=1 seek=$((0 * SLOT + 4096 + 4000)) conv=notrunc status=none # a bad block
	printf 'X' | dd of="$e" bs=1 seek=$((5 * SLOT + 40)) conv=notrunc status=none # in a header
	truncate -s $((15 * SLOT + 4096 + 30000)) "$e" # the last, cut short
	# the layout before this one, left by an older daemon
	mkdir -p "$DC/accelfs-disk-v1/ab"
	: >"$DC/accelfs-disk-v1/ab/0123456789abcdef0123456789abcdef.3"
	up
	n=$(backend_reads cmp m/F src/F)
	[ "$n" -ge 3 ] || fail "3 damaged buckets cost $n SOURCE reads, want >= 3"
	dreach corrupt 3
	dreach hits $(($(nb $size) - 3))
	for b in 0 5 15; do
		# punched out when found, then kept again from SOURCE: whole now
		cmp -s <(dd if="$e" bs=4096 skip=$((b * SLOT / 4096 + 1)) count=16 status=none) \
			<(dd if=src/F bs=64K count=1 skip=$b status=none) ||
			fail "bucket $b in $e was not replaced by a whole one"
	done
	cfs_eventually 5 test ! -e "$DC/accelfs-disk-v1" ||
		fail "the old layout's directory was left in $DC"
	echo "PASS: damaged buckets were detected, punched out and never served"
	;;
evict)
	opts="$opts,disk_cache_size=1M"
	"$CFSIO" gen src/A $((512 << 10)) || fail "cannot create src/A"
	for f in B C; do
		"$CFSIO" gen src/$f $((1 << 20)) || fail "cannot create src/$f"
	done
	up_daemon
	cmp m/A src/A || fail "first read of A differs"
	dreach puts 8
	down
	sleep 1.1 # a hit within a second of its entry's writing is the same reading
	up_daemon
	cmp m/A src/A || fail "second read of A differs"
	dreach hits 8 # A's entries now count as read again
	cmp m/B src/B || fail "read of B differs"
	cmp m/C src/C || fail "read of C differs"
	dreach evicted 1
	cfs_eventually 10 within_bound ||
		fail "$ENTRIES holds $(file_bytes) bytes, over disk_cache_size=1M"
	down
	up_daemon
	n=$(backend_reads cmp m/A src/A)
	[ "$n" = 0 ] || fail "A, read again, lost $n entries to B and C, read once"
	echo "PASS: the tier stayed within 1M ($(file_bytes) bytes); A, read again, outlived B and C"
	;;
write)
	size=$((1 << 20))
	first_read $size
	printf 'written-through-the-mount' | dd of=m/F bs=1 seek=70000 conv=notrunc status=none ||
		fail "cannot write m/F"
	cmp m/F src/F || fail "after a write, m/F differs from SOURCE"
	down
	grep -q 'written-through-the-mount' src/F || fail "the write did not reach SOURCE"
	up
	cmp m/F src/F || fail "after a write and a remount, m/F differs from SOURCE"
	echo "PASS: a write through the mount is what every later read sees"
	;;
full)
	mkdir tiny
	mount -t tmpfs -o size=512k,mode=0700 accel-disk-full "$PWD/tiny" ||
		{ echo "SKIP: cannot mount a tmpfs here"; exit 77; }
	tiny_down() { umount "$ACCEL_TMP/tiny"; }
	cfs_below tiny_down
	opts=${opts/disk_cache=$DC/disk_cache=$PWD/tiny/dc}
	ENTRIES=$PWD/tiny/dc/accelfs-disk-v2
	"$CFSIO" gen src/F $((4 << 20)) || fail "cannot create src/F"
	up
	cmp m/F src/F || fail "read of F with a full disk tier differs"
	dreach put_errors 1
	dreach evicted 1 # a full file system below DIR makes room, as the bound would
	lost=$(dstat put_errors)
	[ "$(entries)" -gt 0 ] || fail "no entry was kept before the tier was full"
	down
	up
	cmp m/F src/F || fail "read of F after a remount with a full disk tier differs"
	echo "PASS: a full disk tier costs entries ($lost not kept), never a read"
	;;
trust)
	mkdir -m 0755 "$DC"
	refused "a disk_cache directory others may read" "disk_cache=$DC: mode 0755 .*chmod 0700" -- \
		-o "$opts"
	chmod 0700 "$DC"
	chown nobody "$DC"
	refused "a disk_cache directory of another user" "disk_cache=$DC: owned by another user" -- \
		-o "$opts"
	chown root "$DC"
	ln -s "$DC" "$PWD/dclink"
	refused "a disk_cache directory given as a symlink" \
		"disk_cache=$PWD/dclink: not a directory \(or a symlink\)" -- \
		-o "${opts/disk_cache=$DC/disk_cache=$PWD/dclink}"
	refused "disk_cache= with cache=off" "disk_cache=$DC: needs the pool \(cache=off\)" -- \
		-o "$opts,cache=off"
	rc=0
	"$ACCELFS" "$PWD/src" "$PWD/m" -o "disk_cache=dc" 2>err || rc=$?
	[ $rc = 2 ] && grep -q "disk_cache" err || fail "a relative disk_cache=: exit $rc, $(cat err)"
	echo "PASS: an unsafe disk_cache directory is refused with one line"
	;;
auto)
	mount -t tmpfs -o size=64M,mode=0755 accel-var-cache /var/cache ||
		fail "cannot mount a tmpfs on /var/cache in this namespace"
	ADIR=/var/cache/accelfs
	ENTRIES=$ADIR/accelfs-disk-v2
	opts=${opts/disk_cache=$DC/disk_cache=auto}
	size=$((1 << 20))
	"$CFSIO" gen src/F $size || fail "cannot create src/F"
	up
	cmp m/F src/F || fail "read of F differs (local SOURCE)"
	"$ACCEL" stat --pool "$POOL" --json | grep -q '"disk": null' ||
		fail "disk_cache=auto on a local SOURCE: a disk tier: $("$ACCEL" stat --pool "$POOL" --json)"
	[ ! -e "$ADIR" ] || fail "disk_cache=auto on a local SOURCE made $ADIR"
	down
	up shared=on
	cmp m/F src/F || fail "read of F differs (shared=on)"
	dreach puts "$(nb $size)"
	[ "$(stat -c %a "$ADIR")" = 700 ] || fail "$ADIR has mode $(stat -c %a "$ADIR"), want 700"
	[ "$(entries)" = "$(nb $size)" ] || fail "$(entries) entries in $ENTRIES, want $(nb $size)"
	want=$((64 * 1048576 / 10))
	[ "$(dstat limit)" = $want ] ||
		fail "the tier's bound is $(dstat limit), want $want (a tenth of a 64M /var/cache)"
	grep -q "disk_cache=auto: $ADIR, $want bytes" "$ACCEL_LOG" ||
		fail "no log line for the tier chosen: $(cat "$ACCEL_LOG")"
	down
	up shared=on,disk_cache_size=2M
	n=$(backend_reads cmp m/F src/F)
	[ "$n" = 0 ] || fail "F after the remount: $n SOURCE reads, want 0 (all from $ADIR)"
	[ "$(dstat limit)" = $((2 << 20)) ] || fail "disk_cache_size=2M gave a bound of $(dstat limit)"
	down
	# auto_off WHAT WHY: mounted with shared=on, F read right, no tier, and
	# the one warning line ends with WHY
	auto_off() {
		up shared=on
		cmp m/F src/F || fail "read of F differs ($1)"
		"$ACCEL" stat --pool "$POOL" --json | grep -q '"disk": null' ||
			fail "disk_cache=auto kept a tier: $1"
		grep -qF "disk_cache=auto: running without the disk tier: $2" "$ACCEL_LOG" ||
			fail "no one-line warning ($1): $(cat "$ACCEL_LOG")"
		down
	}
	chmod 0755 "$ADIR"
	auto_off "$ADIR of mode 0755" "disk_cache=$ADIR: mode 0755"
	# a /var/cache of 8M: a tenth is under the tier's least size
	umount /var/cache
	mount -t tmpfs -o size=8M,mode=0755 accel-var-small /var/cache ||
		fail "cannot mount a small tmpfs on /var/cache"
	auto_off "a /var/cache of 8M" "$ADIR: a tenth of its file system is under 1M"
	# no /var/cache at all: it is the system's, never made by the daemon
	umount /var/cache
	mount -t tmpfs -o size=1M,mode=0755 accel-var /var || fail "cannot mount a tmpfs on /var"
	auto_off "no /var/cache" "/var/cache: No such file or directory"
	[ ! -e /var/cache ] || fail "disk_cache=auto made /var/cache (mode $(stat -c %a /var/cache))"
	echo "PASS: disk_cache=auto is off on a local SOURCE, on in $ADIR on a shared one, sized to fit, off with a warning where /var/cache is too small or missing"
	;;
auto-user)
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
	# a /dev/fuse that nobody may open, in this namespace only (detached
	# before the cleanup, which leaves a directory with a mount from it;
	# lazily: nobody's daemon may still hold it open)
	{ mknod -m 0666 fuse c 10 229 && mount --bind fuse /dev/fuse; } 2>/dev/null ||
		skip "cannot give nobody a /dev/fuse in this mount namespace"
	trap 'rc=$?; umount -l /dev/fuse 2>/dev/null; (exit $rc); cfs_cleanup' EXIT
	chmod 0755 "$PWD"
	mkdir mu home xdg
	chown nobody mu home xdg
	UPOOL=/accel-t-disk-user-$$
	CFS_POOLS="$CFS_POOLS $UPOOL"
	uopts="shared=on,disk_cache=auto,pool=$UPOOL,pool_keep=no,kernel_cache=never"
	"$CFSIO" gen src/F $((1 << 20)) || fail "cannot create src/F"
	# user_up [VAR=VALUE...]: the daemon as nobody, in the foreground, with
	# only PATH and the variables given in its environment
	user_up() {
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@" setpriv --reuid=nobody \
			--regid=nogroup --clear-groups "$ACCELFS" -f "$PWD/src" "$PWD/mu" \
			-o "$uopts" 2>ulog &
		UPID=$!
		ACCEL_PIDS="$ACCEL_PIDS $UPID"
		ACCEL_MNTS="$ACCEL_MNTS $PWD/mu"
		for _ in $(seq 200); do
			accel_is_mounted "$PWD/mu" && break
			kill -0 "$UPID" 2>/dev/null || fail "nobody's mount ($*) failed: $(cat ulog)"
			sleep 0.05
		done
		accel_is_mounted "$PWD/mu" || fail "nobody's mount ($*) is not up after 10 s"
		# nobody's mount (no allow_other) answers nobody alone, root included
		setpriv --reuid=nobody --regid=nogroup --clear-groups cmp mu/F src/F ||
			fail "read of F through nobody's mount ($*) differs"
	}
	user_down() {
		umount "$PWD/mu" || fail "cannot unmount nobody's mount"
		accel_wait_exit "$UPID" 15 || fail "nobody's daemon did not exit after unmount"
		[ ! -e "/dev/shm$UPOOL" ] || fail "pool_keep=no left nobody's pool behind"
	}
	# tier DIR: the daemon said it keeps its tier in DIR, and F's read put
	# entries there (the tier's writer is in the background: up to 5 s)
	tier() {
		grep -qF "disk_cache=auto: $1, " ulog || return 1
		for _ in $(seq 100); do
			[ -n "$(find "$1/accelfs-disk-v2" -type f 2>/dev/null)" ] && return 0
			sleep 0.05
		done
		return 1
	}
	user_up
	grep -q "disk_cache=auto: /" ulog && fail "no HOME, no XDG_CACHE_HOME: a disk tier anyway"
	grep -qF "disk_cache=auto: running without the disk tier: no HOME to keep it in" ulog ||
		fail "no one-line reason without HOME: $(cat ulog)"
	user_down
	user_up HOME="$PWD/home"
	tier "$PWD/home/.cache/accelfs" || fail "HOME=$PWD/home: no disk tier there: $(cat ulog)"
	[ "$(stat -c '%a %U' home/.cache/accelfs)" = "700 nobody" ] ||
		fail "home/.cache/accelfs: $(stat -c '%a %U' home/.cache/accelfs 2>&1), want 700 nobody"
	user_down
	user_up HOME="$PWD/home" XDG_CACHE_HOME="$PWD/xdg"
	tier "$PWD/xdg/accelfs" || fail "XDG_CACHE_HOME=$PWD/xdg: no disk tier there: $(cat ulog)"
	[ "$(stat -c '%a %U' xdg/accelfs)" = "700 nobody" ] ||
		fail "xdg/accelfs: $(stat -c '%a %U' xdg/accelfs 2>&1), want 700 nobody"
	user_down
	echo "PASS: disk_cache=auto for nobody: none without HOME (one line), ~/.cache/accelfs, then \$XDG_CACHE_HOME/accelfs, each made 0700"
	;;
*)
	fail "unknown case $case"
	;;
esac
