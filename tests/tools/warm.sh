#!/bin/bash
# SPDX-License-Identifier: MIT
# warm.sh - accel warm loads fragmented files into the pool of a mount in
# disk order: every bucket read once from disk, a second warm reads nothing,
# and the mount then reads the files with zero backend reads. Through the
# mount's own paths (issue #29, item 1) the same holds, into the pool that
# mount uses when no --pool is given; -r warms the regular files below a
# directory and never follows a symlink; a mount without a pool, or paths of
# two pools, are refused. Only a mount creates a pool: a misspelt --pool
# fails naming the pools that exist and leaves /dev/shm as it was. Bad paths
# give one line each and exit 1; no path is a usage error.
# $1: accel; ACCELFS: the daemon (set by meson).
. "$(dirname "$0")/lib.sh"

fuse_setup warm

# interleaved pieces, so the files' extents alternate on disk
for i in $(seq 0 15); do
	for f in a b c d; do head -c 65536 /dev/urandom >>"$SRC/$f"; done
	sync "$SRC/a" "$SRC/b" "$SRC/c" "$SRC/d" 2>/dev/null || sync
done
nb=16 # 1 MiB each, 64 KiB buckets
mkdir -p "$SRC/dir/sub"
for f in x y; do head -c 200000 /dev/urandom >"$SRC/dir/sub/$f"; done # 4 buckets each
head -c 100000 /dev/urandom >"$T/outside"
ln -s "$T/outside" "$SRC/dir/link"
mkfifo "$SRC/dir/fifo"

# counter NAME: the pool's counter NAME now
counter() {
	"$ACCEL" stat --pool "$POOL" --json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["pool"]["counters"][sys.argv[1]])' "$1"
}
# through_mount FILE...: read FILEs through the mount; fail unless the pool served every
# bucket (no backend read, a global hit for each of @nbuckets)
through_mount() {
	local want=$1 r0 h0 r1 h1 f
	shift
	r0=$(counter backend_reads) h0=$(counter global_hits)
	for f in "$@"; do cmp "$FMNT/$f" "$SRC/$f" || fail "$f through the mount differs"; done
	r1=$(counter backend_reads) h1=$(counter global_hits)
	[ "$r1" = "$r0" ] || fail "the mount read $((r1 - r0)) buckets of $* from disk after a warm, want 0"
	[ $((h1 - h0)) -ge "$want" ] || fail "$* gave $((h1 - h0)) global hits, want $want"
}

"$ACCELFS" "$SRC" "$FMNT" -o "pool=$POOL,kernel_cache=never" || fail "mount failed"

out=$("$ACCEL" warm --pool "$POOL" "$SRC/a" "$SRC/b") || fail "accel warm exited $?: $out"
grep -q "^$SRC/a: $nb buckets read from disk" <<<"$out" || fail "first warm of a: $out"
grep -q "^$SRC/b: $nb buckets read from disk" <<<"$out" || fail "first warm of b: $out"
grep -q "^warmed 2 of 2 file(s)" <<<"$out" || fail "summary: $out"
out=$("$ACCEL" warm --pool "${POOL#/}" "$SRC/a" "$SRC/b") || fail "second accel warm: $out"
grep -q "^$SRC/a: 0 buckets read from disk" <<<"$out" || fail "second warm read a again: $out"
ok "warm: every bucket read once; a second warm reads nothing"
through_mount $((2 * nb)) a b
ok "warm: the mount reads warmed files with zero backend reads"

# through the mount: its backing file's buckets, where the daemon looks them up; never
# a pool entry under the mount's own device (no daemon looks there), nor a read through it
# no_fuse_slot: no file of the pool is known by the mount's device
no_fuse_slot() {
	"$ACCEL" stat --pool "$POOL" --json >"$T/j" || fail "stat --json"
	expect_eq "files under the mount's device" \
		"$(jget "$T/j" "[f['path'] for f in j['files'] if f['dev'] == $(stat -c %d "$FMNT")]")" "[]"
}
out=$("$ACCEL" warm --pool "$POOL" "$FMNT/c") || fail "warm through the mount: $out"
grep -q "^$FMNT/c: $nb buckets read from disk" <<<"$out" || fail "warm of $FMNT/c: $out"
no_fuse_slot
expect_eq "c's buffers after the warm" \
	"$(jget "$T/j" "[f['resident_buffers'] for f in j['files'] if f['path'].endswith('/c')]")" "[$nb]"
through_mount $nb c
# and without --pool: the pool the mount uses (its daemon's, not the default)
wait_state "$FMNT"
shm0=$(ls /dev/shm)
out=$("$ACCEL" warm "$FMNT/d") || fail "warm through the mount without --pool: $out"
grep -q "^$FMNT/d: $nb buckets read from disk" <<<"$out" || fail "warm of $FMNT/d: $out"
[ "$(ls /dev/shm)" = "$shm0" ] || fail "warm made a pool: $(diff <(echo "$shm0") <(ls /dev/shm))"
no_fuse_slot
through_mount $nb d
ok "warm through the mount: the mount's reads hit, with or without --pool"

# -r: the regular files below a directory, never a symlink's target nor a FIFO
out=$(timeout 20 "$ACCEL" warm -r "$FMNT/dir") || fail "warm -r: exit $?: $out"
grep -q "^$FMNT/dir/sub/x: 4 buckets read from disk" <<<"$out" || fail "warm -r x: $out"
grep -q "^$FMNT/dir/sub/y: 4 buckets read from disk" <<<"$out" || fail "warm -r y: $out"
grep -q "^warmed 2 of 2 file(s)" <<<"$out" || fail "warm -r summary: $out"
expect_rc 1 "$ACCEL" stat --pool "$POOL" --file "$T/outside"
grep -q "not in pool" <<<"$OUT" || fail "warm -r followed the symlink: $OUT"
through_mount 8 dir/sub/x dir/sub/y
expect_rc 1 "$ACCEL" warm "$FMNT/dir"
grep -qx "accel warm: $FMNT/dir: Is a directory (use -r to warm the files below it)" <<<"$OUT" ||
	fail "a directory without -r: $OUT"
ok "warm -r: regular files only, symlinks and FIFOs left alone"

# only a mount creates a pool: a typo is an error naming the pools there are
shm0=$(ls /dev/shm)
expect_rc 1 "$ACCEL" warm --pool "nmae-$$" "$SRC/a"
grep -Eq "^accel warm: pool nmae-$$: no such pool \(pools: (.*, )?${POOL#/}(, .*)?\)$" <<<"$OUT" ||
	fail "unknown pool: $OUT"
[ "$(ls /dev/shm)" = "$shm0" ] || fail "a segment appeared: $(diff <(echo "$shm0") <(ls /dev/shm))"
expect_rc 2 "$ACCEL" warm --pool "a/b" "$SRC/a"
grep -q '^accel warm: pool name "a/b": need "name" or "/name"' <<<"$OUT" || fail "bad name: $OUT"
[ "$(ls /dev/shm)" = "$shm0" ] || fail "a segment appeared for a bad name"
ok "warm never creates a pool"

# paths of two pools in one run: the mount's and (outside any mount) the default
expect_rc 1 "$ACCEL" warm "$FMNT/a" "$T/outside"
grep -Eqx "accel warm: $FMNT/a is for pool ${POOL#/}, $T/outside for pool accelfs-default(-[0-9]+)?: warm them in separate runs, or name one with --pool" <<<"$OUT" ||
	fail "two pools: $OUT"
# a mount without a pool
mkdir -p "$T/src2" "$T/m2"
echo data >"$T/src2/f"
MOUNTS=("$T/m2" "${MOUNTS[@]}")
SEGMENTS+=("$POOL-2")
"$ACCELFS" "$T/src2" "$T/m2" -o "cache=off,pool=$POOL-2" || fail "mount with cache=off"
wait_state "$T/m2"
expect_rc 1 "$ACCEL" warm "$T/m2/f"
grep -qx "accel warm: the accelfs mount $T/m2 uses no global buffer pool (cache=off, or its pool was refused); name one with --pool" <<<"$OUT" ||
	fail "cache=off mount: $OUT"
ok "warm: a mount without a pool, or paths of two pools, are said, not warmed elsewhere"

expect_rc 1 "$ACCEL" warm --pool "$POOL" "$T/nonexistent"
grep -qx "accel warm: $T/nonexistent: No such file or directory" <<<"$OUT" || fail "nonexistent: $OUT"
expect_rc 1 "$ACCEL" warm --pool "$POOL" "$SRC"
grep -q "^accel warm: $SRC: Is a directory" <<<"$OUT" || fail "directory: $OUT"
expect_rc 2 "$ACCEL" warm --pool "$POOL"
ok "warm: bad paths and usage errors"
