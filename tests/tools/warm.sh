#!/bin/bash
# SPDX-License-Identifier: MIT
# warm.sh - accel warm loads a fragmented file into the pool in disk order:
# every bucket read once from disk, a second warm reads nothing, and a mount
# naming the pool then reads the file with zero backend reads. Bad paths give
# one line each and exit 1; no path is a usage error.
# $1: accel; ACCELFS: the daemon (set by meson).
. "$(dirname "$0")/lib.sh"

fuse_setup warm

# two files written in interleaved pieces, so their extents alternate on disk
for i in $(seq 0 15); do
	head -c 65536 /dev/urandom >>"$SRC/a"
	head -c 65536 /dev/urandom >>"$SRC/b"
	sync "$SRC/a" "$SRC/b" 2>/dev/null || sync
done
nb=16 # 1 MiB each, 64 KiB buckets

out=$("$ACCEL" warm --pool "$POOL" "$SRC/a" "$SRC/b") || fail "accel warm exited $?: $out"
grep -q "^$SRC/a: $nb buckets read from disk" <<<"$out" || fail "first warm of a: $out"
grep -q "^$SRC/b: $nb buckets read from disk" <<<"$out" || fail "first warm of b: $out"
grep -q "^warmed 2 of 2 file(s)" <<<"$out" || fail "summary: $out"
out=$("$ACCEL" warm --pool "$POOL" "$SRC/a" "$SRC/b") || fail "second accel warm: $out"
grep -q "^$SRC/a: 0 buckets read from disk" <<<"$out" || fail "second warm read a again: $out"
ok "warm: every bucket read once; a second warm reads nothing"

"$ACCELFS" "$SRC" "$FMNT" -o "pool=$POOL,kernel_cache=never" || fail "mount failed"
before=$("$ACCEL" stat --pool "$POOL" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pool"]["counters"]["backend_reads"])')
cmp "$FMNT/a" "$SRC/a" || fail "a through the mount differs"
cmp "$FMNT/b" "$SRC/b" || fail "b through the mount differs"
after=$("$ACCEL" stat --pool "$POOL" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pool"]["counters"]["backend_reads"])')
[ "$after" = "$before" ] || fail "the mount read $((after - before)) buckets from disk after a warm, want 0"
ok "warm: the mount reads warmed files with zero backend reads"

expect_rc 1 "$ACCEL" warm --pool "$POOL" "$T/nonexistent"
grep -qx "accel warm: $T/nonexistent: No such file or directory" <<<"$OUT" || fail "nonexistent: $OUT"
expect_rc 1 "$ACCEL" warm --pool "$POOL" "$SRC"
grep -q "^accel warm: $SRC: Is a directory" <<<"$OUT" || fail "directory: $OUT"
expect_rc 2 "$ACCEL" warm --pool "$POOL"
ok "warm: bad paths and usage errors"
