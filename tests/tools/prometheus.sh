#!/bin/bash
# SPDX-License-Identifier: MIT
# prometheus.sh - accel stat --prometheus: after a known workload every
# accelfs_pool_*_total and accelfs_file_*_total sample equals the pool's
# counter (as stat --json gives it, and as the workload must have counted);
# --file keeps one file; --textfile DIR writes DIR/accelfs.prom through a
# temporary (a symbolic link there is refused, its target untouched), once
# or every --interval until SIGTERM; a missing pool gives accelfs_pool_up 0;
# and `promtool check metrics` finds nothing to say about the output
# (skipped, with the reason, where promtool is not installed).
#
# Workload as in stat.sh: 4 KiB buckets, A (8 buckets) read twice with no
# local buffers and twice with 16, B (4 buckets) read once with 2 buckets
# rewritten; the streams are held open.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

newpool prom
head -c 32768 /dev/urandom >"$T/A"
head -c 16384 /dev/urandom >"$T/B"
hold "$POOL" 64 4096 "$T/A:0:2:0" "$T/A:16:2:0" "$T/B:0:1:2"

# value NAME LABEL-SUBSTRING FILE: the sample of NAME whose labels contain the substring
value() {
	awk -v n="$1" -v l="$2" '$1 ~ "^" n "[{ ]" && index($1, l) { print $2; exit }' "$3"
}

expect_rc 0 "$ACCEL" stat --prometheus --pool "$POOL"
echo "$OUT" >"$T/p"
expect_rc 0 "$ACCEL" stat --json --pool "$POOL"
echo "$OUT" >"$T/j"
expect_eq "pool up" "$(value accelfs_pool_up "pool=\"$POOL\"" "$T/p")" 1
n=0
for key in $(jget "$T/j" '" ".join(j["pool"]["counters"])'); do
	expect_eq "accelfs_pool_${key}_total" "$(value "accelfs_pool_${key}_total" "pool=\"$POOL\"" "$T/p")" \
		"$(jget "$T/j" "j['pool']['counters']['$key']")"
	n=$((n + 1))
done
[ "$n" -ge 27 ] || fail "only $n pool counters compared"
# what the workload must have counted (stat.sh derives these)
for kv in local_attempts=16 local_hits=8 global_attempts=28 global_hits=16 backend_reads=12 \
	backend_read_bytes=49152 backend_writes=2 backend_write_bytes=8192; do
	expect_eq "${kv%=*}" "$(value "accelfs_pool_${kv%=*}_total" "pool=\"$POOL\"" "$T/p")" "${kv#*=}"
done
for kv in bucket_size_bytes=4096 buffers=64 file_slots_used=2 active_streams=3 resident_buffers=10; do
	expect_eq "${kv%=*}" "$(value "accelfs_pool_${kv%=*}" "pool=\"$POOL\"" "$T/p")" "${kv#*=}"
done
ok "pool samples equal the pool's counters ($n counters)"

ia=$(stat -c %i "$T/A")
for kv in local_attempts_total=16 local_hits_total=8 global_attempts_total=24 global_hits_total=16 \
	backend_reads_total=8 backend_read_bytes_total=32768 active_streams=2 resident_buffers=8; do
	expect_eq "A ${kv%=*}" "$(value "accelfs_file_${kv%=*}" "ino=\"$ia\",path=\"$T/A\"" "$T/p")" "${kv#*=}"
done
ib=$(stat -c %i "$T/B")
for kv in backend_writes_total=2 global_buf_write_ios_total=2 active_streams=1 dirty_buffers=0; do
	expect_eq "B ${kv%=*}" "$(value "accelfs_file_${kv%=*}" "ino=\"$ib\",path=\"$T/B\"" "$T/p")" "${kv#*=}"
done
grep -q "^# HELP accelfs_file_backend_reads_total " "$T/p" &&
	grep -q "^# TYPE accelfs_file_backend_reads_total counter$" "$T/p" &&
	grep -q "^# TYPE accelfs_pool_resident_buffers gauge$" "$T/p" &&
	grep -q "^# TYPE accelfs_mount_info gauge$" "$T/p" || fail "HELP/TYPE lines: $(head "$T/p")"
ok "file samples, HELP and TYPE lines"

expect_rc 0 "$ACCEL" stat --prometheus --pool "$POOL" --file "$T/A"
[ "$(grep -c '^accelfs_file_backend_reads_total{' <<<"$OUT")" = 1 ] &&
	grep -q "^accelfs_file_backend_reads_total{.*path=\"$T/A\"} 8$" <<<"$OUT" || fail "--file: $OUT"
echo other >"$T/C"
expect_rc 1 "$ACCEL" stat --prometheus --pool "$POOL" --file "$T/C"
expect_eq "--file not in pool" "$OUT" "accel stat: $T/C: not in pool $POOL (not opened through accelfs since the pool was created, or its slot was reused)"
ok "--file: that file's samples only"

for args in "--json --prometheus" "--textfile $T" "--prometheus --interval 1" \
	"--prometheus --textfile $T --interval 0"; do
	# shellcheck disable=SC2086 # the words are the options
	expect_rc 2 "$ACCEL" stat $args --pool "$POOL"
done
ok "usage errors"

# --textfile: once, through a temporary beside it
mkdir "$T/tf"
expect_rc 0 "$ACCEL" stat --prometheus --textfile "$T/tf" --pool "$POOL"
[ -z "$OUT" ] || fail "--textfile printed: $OUT"
[ "$(ls -A "$T/tf")" = accelfs.prom ] || fail "textfile dir: $(ls -A "$T/tf")"
expect_eq "textfile value" "$(value accelfs_pool_global_hits_total "pool=\"$POOL\"" "$T/tf/accelfs.prom")" 16
echo secret >"$T/target"
chmod 600 "$T/target"
rm "$T/tf/accelfs.prom"
ln -s "$T/target" "$T/tf/accelfs.prom"
expect_rc 1 "$ACCEL" stat --prometheus --textfile "$T/tf" --pool "$POOL"
expect_eq "symlink refused" "$OUT" "accel stat: $T/tf/accelfs.prom: is a symbolic link, not written"
expect_eq "link target" "$(cat "$T/target")" secret
rm "$T/tf/accelfs.prom"
ok "--textfile: DIR/accelfs.prom written once; a symbolic link there is refused"

# --interval: rewritten while the counters move, until SIGTERM (status 0)
"$ACCEL" stat --prometheus --textfile "$T/tf" --interval 0.2 --pool "$POOL" 2>"$T/err" 8>&- &
pid=$!
for ((i = 0; i < 50; i++)); do [ -e "$T/tf/accelfs.prom" ] && break; sleep 0.1; done
expect_eq "streams before" "$(value accelfs_pool_active_streams "pool=\"$POOL\"" "$T/tf/accelfs.prom")" 3
release
for ((i = 0; i < 50; i++)); do
	[ "$(value accelfs_pool_active_streams "pool=\"$POOL\"" "$T/tf/accelfs.prom")" = 0 ] && break
	sleep 0.1
done
expect_eq "streams after release" "$(value accelfs_pool_active_streams "pool=\"$POOL\"" "$T/tf/accelfs.prom")" 0
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] || fail "--interval ended with $rc after SIGTERM: $(cat "$T/err")"
[ "$(ls -A "$T/tf")" = accelfs.prom ] || fail "left behind: $(ls -A "$T/tf")"
ok "--interval: rewritten every interval, SIGTERM ends it with 0 and no temporary"

cp "$T/tf/accelfs.prom" "$T/full.prom"
rm -f "/dev/shm$POOL"
expect_rc 1 "$ACCEL" stat --prometheus --textfile "$T/tf" --pool "$POOL"
grep -q "pool ${POOL#/}: no such pool" <<<"$OUT" || fail "missing pool: $OUT"
expect_eq "pool down" "$(value accelfs_pool_up "pool=\"$POOL\"" "$T/tf/accelfs.prom")" 0
ok "a missing pool: accelfs_pool_up 0 in the textfile, one line, status 1"

command -v promtool >/dev/null ||
	skip "promtool is not installed (Debian package prometheus); the values were checked"
for f in "$T/p" "$T/full.prom" "$T/tf/accelfs.prom"; do
	out=$(promtool check metrics <"$f" 2>&1) || fail "promtool check metrics $f: $out"
	[ -z "$out" ] || fail "promtool check metrics $f: $out"
done
ok "promtool check metrics: clean"
