#!/bin/bash
# SPDX-License-Identifier: MIT
# report.sh - accel report end to end: a private pool of 128 buffers, a hot
# file of 48 buckets re-read after 128 buckets of a scan each pass (so it is
# evicted every time: near 0 % global hits), then accel report --json must
# see the hot file's loop in its curve (knee ~48), suggest ~48 global
# buffers for it and none for the scan; --apply must write exactly the
# attribute shown (and never through a symbolic link planted at the file's
# name), and the same workload afterwards must hit in the pool.
# $1: accel; ACCELFS: the daemon (set by meson).
. "$(dirname "$0")/lib.sh"

fuse_setup report
command -v python3 >/dev/null || skip "python3 is not installed (JSON checks)"

head -c $((48 * 65536)) /dev/urandom >"$SRC/hot.dat"
head -c $((512 * 65536)) /dev/urandom >"$SRC/scan.dat"
# An attribute the report does not suggest: --apply must leave it alone.
for f in hot.dat scan.dat; do
	setfattr -n user.accelfs.readahead_max -v 0 "$SRC/$f" 2>/dev/null ||
		skip "$T has no user extended attributes"
done
attrs() { getfattr --absolute-names -d -m user.accelfs "$1" 2>/dev/null | grep =; }
HOT0=$(attrs "$SRC/hot.dat")
SCAN0=$(attrs "$SRC/scan.dat")

mount_it() {
	# read-ahead off: the hot file's hits come from reuse alone
	"$ACCELFS" "$SRC" "$FMNT" \
		-o "pool=$POOL,global_cache=8M,bucket_size=64K,kernel_cache=never,readahead_max=0" ||
		fail "mount"
}

# 12 passes: the hot file whole, then the next 128 buckets of the scan.
workload() {
	local p
	for ((p = 0; p < 12; p++)); do
		dd if="$FMNT/hot.dat" of=/dev/null bs=64K status=none || fail "read hot"
		dd if="$FMNT/scan.dat" of=/dev/null bs=64K skip=$((p % 4 * 128)) count=128 \
			status=none || fail "read scan"
	done
}

mount_it
workload
"$ACCEL" report --json --pool "$POOL" >"$T/r1" || fail "report --json: $(cat "$T/r1")"
H='[f for f in j["files"] if f["path"].endswith("hot.dat")][0]'
S='[f for f in j["files"] if f["path"].endswith("scan.dat")][0]'
expect_eq "schema" "$(jget "$T/r1" 'j["schema"]')" "accelfs-report/1"
expect_eq "pool buffers" "$(jget "$T/r1" 'j["pool"]["buffers"]')" 128
expect_eq "budget" "$(jget "$T/r1" 'j["pool"]["budget_buffers"]')" 112
expect_eq "hot: reads" "$(jget "$T/r1" "$H[\"reads\"] >= 12 * 48")" True
expect_eq "hot: read share" "$(jget "$T/r1" "$H[\"read_share_pct\"]")" 100.0
expect_eq "hot: candidate" "$(jget "$T/r1" "$H[\"global_buffer_candidate\"]")" True
expect_eq "hot: evicted each pass" "$(jget "$T/r1" "$H[\"global_hit_pct\"] < 20")" True
expect_eq "hot: curve" "$(jget "$T/r1" "$H[\"curve\"] is not None")" True
expect_eq "hot: lookups" "$(jget "$T/r1" "$H[\"curve\"][\"lookups\"] >= 12 * 48")" True
ws=$(jget "$T/r1" "$H[\"curve\"][\"working_set_buckets\"]")
[ "$ws" -ge 30 ] && [ "$ws" -le 70 ] || fail "hot: working set $ws, want about 48"
knee=$(jget "$T/r1" "$H[\"knee_buffers\"]")
[ "$knee" -ge 36 ] && [ "$knee" -le 64 ] || fail "hot: knee $knee, want about 48"
g=$(jget "$T/r1" "$H[\"suggested_global_buffers\"]")
expect_eq "hot: global buffers at the knee" "$g" "$knee"
expect_eq "hot: predicted" "$(jget "$T/r1" "$H[\"predicted_hit_pct\"] > 80")" True
expect_eq "scan: knee beyond the budget" "$(jget "$T/r1" "$S[\"suggested_global_buffers\"]")" 0
expect_eq "pool counters by name" "$(jget "$T/r1" '"evictions" in j["pool"]["counters"]')" True
expect_eq "changes" "$(jget "$T/r1" '[(c["path"].split("/")[-1], c["attribute"], c["to"]) for c in j["changes"]]')" \
	"[('hot.dat', 'global_buffers', '$g')]"
expect_eq "not applied" "$(jget "$T/r1" 'j["applied"]')" False
expect_eq "--json without --apply writes nothing" "$(attrs "$SRC/hot.dat")" "$HOT0"
ok "report --json: usage, curve, knee $knee, global buffers $g for the hot file only"

"$ACCEL" report --pool "$POOL" >"$T/t1" </dev/null || fail "report (text): $(cat "$T/t1")"
grep -q "^Suggested changes: 1$" "$T/t1" || fail "text: $(cat "$T/t1")"
grep -q "^$SRC/hot.dat: global_buffers default -> $g$" "$T/t1" || fail "text change: $(cat "$T/t1")"
grep -q "^(dry run: " "$T/t1" || fail "not a terminal: not a dry run: $(cat "$T/t1")"
expect_eq "the dry run writes nothing" "$(attrs "$SRC/hot.dat")" "$HOT0"
ok "text report off a terminal is a dry run listing the same change"

if command -v script >/dev/null; then # on a terminal: it asks, and "n" writes nothing
	echo n | script -qec "'$ACCEL' report --pool '$POOL'" /dev/null >"$T/t2" || fail "tty report"
	grep -q "Apply this change? \[y/N\]" "$T/t2" || fail "no question on a terminal: $(cat "$T/t2")"
	expect_eq "answered no" "$(attrs "$SRC/hot.dat")" "$HOT0"
	ok "on a terminal it asks first; no means no"
fi

# --apply writes to the file the pool knows, never through the name the pool recorded (a
# name the mount's users control): hot.dat's name made a symbolic link to that very file,
# renamed and made root's 0600, is refused, and the file keeps its attributes (issue #27)
mv "$SRC/hot.dat" "$SRC/hot.real" && chmod 600 "$SRC/hot.real" &&
	ln -s "$SRC/hot.real" "$SRC/hot.dat" || fail "cannot plant the link"
expect_rc 1 "$ACCEL" report --pool "$POOL" --apply
grep -qx "accel report: $SRC/hot.dat: is a symbolic link, not written" <<<"$OUT" ||
	fail "--apply through a link: $OUT"
expect_eq "the link's target" "$(attrs "$SRC/hot.real")" "$HOT0"
rm "$SRC/hot.dat" && mv "$SRC/hot.real" "$SRC/hot.dat" && chmod 644 "$SRC/hot.dat" ||
	fail "cannot restore hot.dat"
ok "--apply refuses a symbolic link at the recorded name; its target is untouched"

before=$(jget "$T/r1" "$H[\"counters\"][\"backend_reads\"]")
expect_rc 0 "$ACCEL" report --pool "$POOL" --apply
grep -q "^Applied:$" <<<"$OUT" || fail "apply: $OUT"
grep -q "^$SRC/hot.dat: global_buffers default -> $g$" <<<"$OUT" || fail "apply: $OUT"
expect_eq "written" "$(attrs "$SRC/hot.dat")" "user.accelfs.global_buffers=\"$g\"
$HOT0"
expect_eq "scan untouched" "$(attrs "$SRC/scan.dat")" "$SCAN0"
"$ACCEL" report --json --pool "$POOL" >"$T/r2" || fail "report after apply"
expect_eq "nothing left to change" "$(jget "$T/r2" 'len(j["changes"])')" 0
ok "--apply wrote exactly global_buffers=$g, and the next report has nothing to change"

workload
"$ACCEL" report --json --pool "$POOL" >"$T/r3" || fail "report after"
after=$(jget "$T/r3" "$H[\"counters\"][\"backend_reads\"]")
att=$(($(jget "$T/r3" "$H[\"counters\"][\"global_attempts\"]") - $(jget "$T/r1" "$H[\"counters\"][\"global_attempts\"]")))
hits=$(($(jget "$T/r3" "$H[\"counters\"][\"global_hits\"]") - $(jget "$T/r1" "$H[\"counters\"][\"global_hits\"]")))
echo "# hot file, second run: $hits of $att global lookups hit, backend reads $((after - before))" \
	"(first run: $before)"
[ $((100 * hits)) -ge $((80 * att)) ] || fail "hot: $hits of $att hits after --apply"
[ $((after - before)) -le $((before / 4)) ] || fail "hot: backend reads $before -> $((after - before))"
ok "after --apply the hot file hits in the pool ($hits of $att)"

expect_rc 2 "$ACCEL" report --apply --dry-run
expect_rc 2 "$ACCEL" report --budget=lots
expect_rc 2 "$ACCEL" report extra
expect_rc 1 "$ACCEL" report --pool "/accel-test-none-$$"
expect_rc 1 "$ACCEL" report --pool "$POOL" --file /etc/hostname
ok "usage and missing pool or file"
