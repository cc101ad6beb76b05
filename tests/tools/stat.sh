#!/bin/bash
# SPDX-License-Identifier: MIT
# stat.sh - accel stat against a known workload: every pool and file counter
# of --json equals what the stream front must have counted, --file matches by
# (dev, ino) (hard link, fake accelfs mount), and the text tables agree.
#
# Workload, 4 KiB buckets, 64 buffers: A (8 buckets) read twice with no local
# buffers, then twice with 16 local buffers; B (4 buckets) read once and its
# first 2 buckets rewritten. All three streams are held open.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

newpool stat
head -c 32768 /dev/urandom >"$T/A"
head -c 16384 /dev/urandom >"$T/B"
hold "$POOL" 64 4096 "$T/A:0:2:0" "$T/A:16:2:0" "$T/B:0:1:2"

expect_rc 0 "$ACCEL" stat --json --pool "$POOL"
echo "$OUT" >"$T/j"
expect_eq schema "$(jget "$T/j" 'j["schema"]')" accelfs-stat/1
expect_eq geometry "$(jget "$T/j" '[j["pool"][k] for k in ("name", "bucket_size", "buffers", "file_slots_used")]')" \
	"['$POOL', 4096, 64, 2]"
# A: pass 1+2 global only (8 misses, 8 hits); pass 3 local misses served by
# the pool (8 global hits), pass 4 all local hits. B: 4 misses, 2 writes.
want_pool="{'local_attempts': 16, 'local_hits': 8, 'global_attempts': 28, 'global_hits': 16, 'backend_reads': 12, 'backend_read_bytes': 49152, 'backend_writes': 2, 'backend_write_bytes': 8192, 'global_buf_read_ios': 12, 'global_buf_write_ios': 2, 'local_buf_read_ios': 0, 'local_buf_write_ios': 0, 'evictions': 0, 'fill_drops': 0, 'invalidations': 0, 'recoveries': 0, 'deferred_writes': 0, 'flush_writes': 0, 'flush_errors': 0, 'readahead_issued': 0, 'readahead_used': 0, 'readahead_wasted': 0, 'dirty_lost': 0, 'dirty_recovered': 0, 'lock_timeouts': 0, 'opens_passthrough': 0, 'passthrough_fallbacks': 0}"
expect_eq "pool counters" "$(jget "$T/j" 'j["pool"]["counters"]')" "$want_pool"
expect_eq "pool derived" "$(jget "$T/j" '[j["pool"][k] for k in ("local_hit_pct", "global_hit_pct", "reads", "writes", "read_share_pct", "active_streams", "resident_buffers")]')" \
	"[50.0, 57.14, 36, 2, 94.74, 3, 10]"
expect_eq "file count" "$(jget "$T/j" 'len(j["files"])')" 2
ok "pool counters exact"

fa='[f for f in j["files"] if f["path"].endswith("/A")][0]'
fb='[f for f in j["files"] if f["path"].endswith("/B")][0]'
expect_eq "A counters" "$(jget "$T/j" "[$fa['counters'][k] for k in ('local_attempts', 'local_hits', 'global_attempts', 'global_hits', 'backend_reads', 'backend_read_bytes', 'global_buf_read_ios', 'backend_writes')]")" \
	"[16, 8, 24, 16, 8, 32768, 8, 0]"
expect_eq "A derived" "$(jget "$T/j" "[$fa[k] for k in ('path', 'ino', 'active_streams', 'quota', 'resident_buffers', 'local_hit_pct', 'global_hit_pct', 'reads', 'writes', 'read_share_pct', 'global_buffer_candidate')]")" \
	"['$T/A', $(stat -c %i "$T/A"), 2, 0, 8, 50.0, 66.67, 32, 0, 100.0, True]"
expect_eq "B" "$(jget "$T/j" "[$fb[k] for k in ('active_streams', 'resident_buffers', 'local_hit_pct', 'global_hit_pct', 'reads', 'writes', 'read_share_pct', 'global_buffer_candidate')] + [$fb['counters']['global_buf_write_ios']]")" \
	"[1, 2, None, 0.0, 4, 2, 66.67, False, 2]"
expect_eq "dev" "$(jget "$T/j" "$fa['dev']")" "$(stat -c %d "$T/A")"
ok "per-file counters, read share and candidate exact"

ln "$T/A" "$T/A-link"
expect_rc 0 "$ACCEL" stat --json --pool "$POOL" --file "$T/A-link"
echo "$OUT" >"$T/j"
expect_eq "--file by hard link" "$(jget "$T/j" '[f["path"] for f in j["files"]]')" "['$T/A']"
printf '1 0 8:1 / /fake/accel rw - fuse.accelfs %s rw\n' "$T" >"$T/mountinfo"
OUT=$(ACCEL_TEST_MOUNTINFO="$T/mountinfo" "$ACCEL" stat --json --pool "$POOL" --file /fake/accel/B) ||
	fail "--file through a fake accelfs mount: $OUT"
echo "$OUT" >"$T/j"
expect_eq "--file via mount" "$(jget "$T/j" '[f["path"] for f in j["files"]]')" "['$T/B']"
echo other >"$T/C"
expect_rc 1 "$ACCEL" stat --pool "$POOL" --file "$T/C"
expect_eq "not in pool" "$OUT" "accel stat: $T/C: not in pool $POOL (not opened through accelfs since the pool was created, or its slot was reused)"
ok "--file matches by dev/ino, through a mount, and says when a file is not cached"

expect_rc 0 "$ACCEL" stat --pool "$POOL"
grep -q "^Pool $POOL\$" <<<"$OUT" || fail "text: no pool line: $OUT"
grep -Eq '^  local +16 +8 +50\.00$' <<<"$OUT" || fail "text: local line: $OUT"
grep -Eq '^  global +28 +16 +57\.14$' <<<"$OUT" || fail "text: global line: $OUT"
grep -Eq '^  write-back +0 deferred writes, 0 flush writes, 0 flush errors, 0 buffers recovered, 0 buffers lost$' \
	<<<"$OUT" || fail "text: no write-back line: $OUT"
grep -Eq "^ +[0-9]+ [0-9]+:[0-9]+/[0-9]+ +2 +0 +8 +100\.0 \* $T/A\$" <<<"$OUT" || fail "text: A: $OUT"
grep -Eq "^ +[0-9]+ [0-9]+:[0-9]+/[0-9]+ +1 +0 +2 +66\.7 +$T/B\$" <<<"$OUT" || fail "text: B: $OUT"
ok "text tables"

expect_rc 0 "$ACCEL" stat --json --pool "${POOL#/}"
echo "$OUT" >"$T/j"
expect_eq "--pool without /" "$(jget "$T/j" 'j["pool"]["name"]')" "$POOL"

release
expect_rc 0 "$ACCEL" stat --json --pool "$POOL"
echo "$OUT" >"$T/j"
expect_eq "after close" "$(jget "$T/j" '[j["pool"]["active_streams"], j["pool"]["resident_buffers"], j["pool"]["counters"]["global_hits"]]')" \
	"[0, 10, 16]"
ok "streams closed: 0 active, data and counters stay"
