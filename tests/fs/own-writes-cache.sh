#!/bin/bash
# SPDX-License-Identifier: MIT
# own-writes-cache.sh: a file written through the mount keeps its page cache
# after close. The daemon's own writes (and the times it sets after them, as
# tar does) are not a change made behind its back, so the next open keeps
# the kernel's pages (FOPEN_KEEP_CACHE) and a read after the write costs no
# SOURCE read; on a network SOURCE it would be a full re-download. A change
# made in SOURCE behind the mount still drops them. Pages are counted with
# fincore(1); its open is the "next open".
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v fincore >/dev/null || {
	echo "SKIP: fincore (util-linux) is not installed"
	exit 77
}

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
mib=8

resident() { fincore -nb -o RES "$1" | tr -d ' '; }
# An open without FOPEN_KEEP_CACHE drops every page of the file
# (invalidate_inode_pages2), so the bug this guards against leaves none.
# Memory reclaim on a busy machine may take a few pages of a file just
# written (seen in CI: 3 of 2,048 gone while another test ran): up to an
# eighth missing is reclaim, not the mount.
want_resident() {
	local res
	res=$(resident "$1")
	[ "$res" -ge $((mib << 20)) ] && return
	[ "$res" -ge $(((mib << 20) * 7 / 8)) ] && {
		echo "note: ${*:2}: $(((mib << 20) - res)) bytes of $1 reclaimed after close"
		return
	}
	fail "${*:2}: $res bytes of $1 in the page cache after close, want $((mib << 20))"
}
# write @1 through the mount as tar does: data, then its mtime, then close
tar_like() {
	python3 - "$1" <<-'EOF'
		import os, sys
		fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
		os.write(fd, os.urandom(8 << 20))
		os.utime(fd, (1000000000, 1000000000))
		os.close(fd)
	EOF
}

for opts in "" watch=off deferred_write=on; do
	what="mount ${opts:-default}"
	accel_mount "$base/src" "$base/mnt" ${opts:+-o "$opts"}
	dd if=/dev/urandom of="$base/mnt/plain" bs=1M count=$mib status=none
	want_resident "$base/mnt/plain" "$what: dd"
	dd if=/dev/urandom of="$base/mnt/synced" bs=1M count=$mib conv=fsync status=none
	want_resident "$base/mnt/synced" "$what: dd conv=fsync"
	tar_like "$base/mnt/tar"
	want_resident "$base/mnt/tar" "$what: write, futimens, close"
	[ "$(stat -c %Y "$base/mnt/tar")" = 1000000000 ] ||
		fail "$what: the mtime set before close is $(stat -c %Y "$base/mnt/tar") through the mount"
	[ "$(stat -c %Y "$base/src/tar")" = 1000000000 ] ||
		fail "$what: the mtime set before close is $(stat -c %Y "$base/src/tar") on SOURCE"
	cmp -s "$base/mnt/synced" "$base/src/synced" || fail "$what: SOURCE differs from the mount"
	echo "ok: $what: written files keep their pages after close"

	# a change in SOURCE behind the mount still shows (and drops the pages)
	printf 'changed behind the mount' |
		dd of="$base/src/synced" conv=notrunc status=none
	sleep 1.2 # attr_timeout: the kernel asks again
	cmp -s "$base/mnt/synced" "$base/src/synced" ||
		fail "$what: a change made in SOURCE after close does not show through the mount"
	echo "ok: $what: a change made in SOURCE after close shows"
	accel_umount "$base/mnt" || fail "unmount failed"
	rm -f "$base/src"/*
done
