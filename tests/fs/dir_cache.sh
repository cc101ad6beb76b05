#!/bin/bash
# SPDX-License-Identifier: MIT
# dir_cache.sh: without a SOURCE watcher (watch=off; with one the watch
# tests cover listings), with entry_timeout >= 10 s the kernel keeps a
# directory's listing across opens (FOPEN_CACHE_DIR + FOPEN_KEEP_CACHE) while SOURCE's
# directory is unchanged: a second `ls` sends no READDIR. A change made in
# SOURCE (create, unlink, rename) shows at the next opendir; a change made
# through the mount shows at once. With the default 1 s entry_timeout, and
# with kernel_cache=never, every listing is read from the daemon. Requests
# are counted in the -d trace.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt" "$base/src/d"
for i in $(seq 50); do : >"$base/src/d/f$i"; done

readdirs() { grep -ac 'opcode: READDIR' "$ACCEL_LOG"; }
listing() { ls "$base/mnt/d" | tr '\n' ' '; }
# the mount's listing equals SOURCE's, read with a fresh opendir each time
same_as_source() {
	[ "$(listing)" = "$(ls "$base/src/d" | tr '\n' ' ')" ] ||
		fail "$1: mount lists '$(listing)', SOURCE has '$(ls "$base/src/d" | tr '\n' ' ')'"
}
# readdir requests caused by one more listing of the unchanged directory
again() {
	local before=$(readdirs)
	listing >/dev/null
	echo $(($(readdirs) - before))
}

accel_mount "$base/src" "$base/mnt" -d -o watch=off,entry_timeout=3600,attr_timeout=3600
listing >/dev/null
n=$(again)
[ "$n" -eq 0 ] || fail "unchanged directory listed again: $n READDIR requests, want 0 (kernel cache)"
echo "ok: the second listing of an unchanged directory is served by the kernel"

: >"$base/src/d/outside-new"
same_as_source "create in SOURCE"
rm "$base/src/d/f1"
same_as_source "unlink in SOURCE"
mv "$base/src/d/f2" "$base/src/d/f2-renamed"
same_as_source "rename in SOURCE"
echo "ok: creates, unlinks and renames made in SOURCE show at the next opendir"

: >"$base/mnt/d/through-mount"
ls "$base/mnt/d" | grep -qx through-mount || fail "a file created through the mount is not listed"
rm "$base/mnt/d/f3"
ls "$base/mnt/d" | grep -qx f3 && fail "a file removed through the mount is still listed"
same_as_source "changes through the mount"
n=$(again)
[ "$n" -eq 0 ] || fail "after the changes settled: $n READDIR requests, want 0"
echo "ok: changes through the mount show at once; the listing is cached again after"
accel_umount "$base/mnt" || fail "unmount failed"

for opts in watch=off "kernel_cache=never,entry_timeout=3600"; do
	accel_mount "$base/src" "$base/mnt" -d -o "$opts"
	listing >/dev/null
	n=$(again)
	[ "$n" -gt 0 ] || fail "-o '$opts': a listing came from the kernel's cache"
	accel_umount "$base/mnt" || fail "unmount failed"
	echo "ok: -o '$opts': every listing is read from the daemon ($n requests)"
done
echo "PASS: directory listings cached by the kernel only while SOURCE is unchanged"
