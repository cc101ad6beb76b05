#!/bin/bash
# SPDX-License-Identifier: MIT
# mount-stats.sh: per-mount statistics (issue 29): two daemons on one pool,
# a known set of requests made through the first.
#  1. accel stat --mount A --json counts exactly what was asked of A: with
#     kernel_cache=never every read(2) and write(2) is one READ or WRITE, a
#     new name's open(O_CREAT) one CREATE, a setxattr(XATTR_REPLACE) of an
#     absent attribute one SETXATTR answered with an error; the bytes read
#     and written are the requests'; A's share of the pool's counters moved,
#     B's did not, and B served none of those requests;
#  2. the text view and the list in plain accel stat show the same numbers;
#  3. --mount on a path no daemon serves: one line, exit 1; with --file: 2;
#  4. --prometheus: the request counters by op with the mountpoint label,
#     and promtool check metrics is clean (skipped without promtool);
#  5. accel monitor --mount A shows A's requests by kind, and its mount
#     picker lists both mounts (in tmux: 77 without it, after the rest).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/tmux.sh"
cfs_init
cfs_pool mstat
mkdir a b
OPTS="pool=$POOL,kernel_cache=never,entry_timeout=0,attr_timeout=0,negative_timeout=0"
accel_mount "$PWD/src" "$PWD/a" -o "$OPTS"
PID_A=$ACCEL_PID
accel_mount "$PWD/src" "$PWD/b" -o "$OPTS"
A=$PWD/a B=$PWD/b
NC=5 NR=7 NX=3 SZ=4096

# snap MNT FILE: MNT's JSON once its daemon has published (its state file exists)
snap() {
	cfs_eventually 5 "$ACCEL" stat --mount "$1" --json >/dev/null &&
		"$ACCEL" stat --mount "$1" --json >"$2" || fail "accel stat --mount $1 --json failed"
}
# field FILE PY-EXPR: a value of the mount object m of FILE
field() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["mounts"][0]
k = m["request_kinds"]
def n(kind, key="count"): return k.get(kind, {}).get(key, 0)
print(eval(sys.argv[2]))' "$1" "$2"
}

snap "$A" a0.json
snap "$B" b0.json
python3 - "$A" "$NC" "$NR" "$NX" "$SZ" <<'EOF' || fail "the requests through $A failed"
import errno, os, sys
mnt, nc, nr, nx, sz = sys.argv[1], *map(int, sys.argv[2:])
for i in range(nc):
    fd = os.open(f"{mnt}/new{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    assert os.write(fd, b"x" * sz) == sz
    os.close(fd)
fd = os.open(f"{mnt}/new0", os.O_RDONLY)
for _ in range(nr):
    assert len(os.pread(fd, sz, 0)) == sz
os.close(fd)
for _ in range(nx):
    try:
        os.setxattr(f"{mnt}/new0", "user.accelfs-absent", b"v", os.XATTR_REPLACE)
        sys.exit("setxattr XATTR_REPLACE of an absent attribute succeeded")
    except OSError as e:
        assert e.errno in (errno.ENODATA, errno.EOPNOTSUPP), e
EOF

# the daemon publishes every 200 ms: wait until A shows the reads
want_reads=$(($(field a0.json 'n("read")') + NR))
reads_reached() {
	"$ACCEL" stat --mount "$A" --json >now.json && [ "$(field now.json 'n("read")')" -ge "$1" ]
}
cfs_eventually 3 reads_reached "$want_reads" || fail "A never showed $want_reads reads"
sleep 0.5 # one more publication: nothing of the requests above is still in flight
snap "$A" a1.json
snap "$B" b1.json

# check WHAT EXPR-BEFORE-AFTER EXPECTED: the change of a field of A, exactly
check() {
	local before after
	before=$(field a0.json "$2") after=$(field a1.json "$2")
	[ $((after - before)) = "$3" ] || fail "A's $1 went $before -> $after, want +$3"
	echo "ok: A's $1 +$3"
}
check creates 'n("create")' "$NC"
check writes 'n("write")' "$NC"
check reads 'n("read")' "$NR"
check setxattrs 'n("setxattr")' "$NX"
check "setxattr errors" 'n("setxattr", "errors")' "$NX"
check "bytes written" 'm["write_bytes"]' $((NC * SZ))
check "bytes read" 'm["read_bytes"]' $((NR * SZ))
[ "$(field a1.json 'm["errors"] - sum(v["errors"] for v in k.values())')" = 0 ] ||
	fail "A's errors are not the sum of its kinds' errors"
[ "$(field a1.json 'm["pid"]')" = "$PID_A" ] || fail "A's JSON names another daemon"
[ "$(field a1.json 'm["pool"]')" = "$POOL" ] || fail "A's JSON names another pool"
# the pool counters A's requests moved are A's, not B's
[ "$(field a1.json 'm["counters"]["local_attempts"] + m["counters"]["global_attempts"]')" -gt \
	"$(field a0.json 'm["counters"]["local_attempts"] + m["counters"]["global_attempts"]')" ] ||
	fail "A's share of the pool's cache attempts did not move"
[ "$(field a1.json 'm["counters"]["backend_write_bytes"] + m["counters"]["deferred_writes"]')" -gt 0 ] ||
	fail "A's write-back counters did not move"
for k in create write read setxattr; do
	[ "$(field b1.json "n(\"$k\")")" = 0 ] || fail "B counts $k requests it never got"
done
[ "$(field b1.json 'sum(m["counters"].values())')" = 0 ] ||
	fail "B shows pool counters it never moved: $(field b1.json 'm["counters"]')"
[ "$(field b1.json 'm["read_bytes"] + m["write_bytes"]')" = 0 ] || fail "B shows bytes"
p99=$(field a1.json 'k["read"]["p99_us"]')
[ "$p99" -ge 1 ] && [ $((p99 & (p99 - 1))) = 0 ] ||
	fail "A's read p99 $p99 us is not a histogram bucket's bound"
echo "ok: accel stat --mount --json counts what was asked of A; B saw none of it"

# 2. the text views
"$ACCEL" stat --mount "$A" >a.txt || fail "accel stat --mount $A: exit $?"
grep -q "^Mount $A (daemon pid $PID_A)\$" a.txt || fail "text view title: $(head -1 a.txt)"
reads=$(field a1.json 'n("read")')
grep -Eq "^  read +$reads +0 " a.txt || fail "text view has no 'read $reads' row: $(cat a.txt)"
grep -Eq "^  setxattr +[0-9]+ +[1-9]" a.txt || fail "text view shows no setxattr errors"
"$ACCEL" stat --pool "$POOL" >all.txt || fail "accel stat: exit $?"
grep -Eq "^ +$PID_A +[a-z]+ .* $A\$" all.txt || fail "accel stat lists no line for $A"
grep -Eq "^ +[0-9]+ +[a-z]+ .* $B\$" all.txt || fail "accel stat lists no line for $B"
echo "ok: the text view and the mount list"

# 3. not a mount
for p in "$PWD/src" "$PWD/nonexistent"; do
	rc=0
	"$ACCEL" stat --mount "$p" >out 2>err || rc=$?
	[ $rc = 1 ] && [ "$(wc -l <err)" = 1 ] && [ ! -s out ] ||
		fail "accel stat --mount $p: exit $rc, want 1 with one line: $(cat err out)"
	echo "ok: --mount $p: $(cat err)"
done
rc=0
"$ACCEL" stat --mount "$A" --file "$A/new0" 2>err || rc=$?
[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] || fail "--mount with --file: exit $rc: $(cat err)"

# 4. Prometheus
"$ACCEL" stat --mount "$A" --prometheus >a.prom || fail "--prometheus: exit $?"
grep -qx "accelfs_mount_requests_total{pid=\"$PID_A\",mountpoint=\"$A\",op=\"read\"} $reads" a.prom ||
	fail "no read counter for $A: $(grep requests_total a.prom)"
grep -q "^accelfs_mount_request_duration_seconds_bucket{.*op=\"read\",le=\"+Inf\"} $reads\$" a.prom ||
	fail "the read histogram's +Inf bucket is not $reads"
if command -v promtool >/dev/null; then
	promtool check metrics <a.prom || fail "promtool check metrics: --mount $A"
	"$ACCEL" stat --pool "$POOL" --prometheus >all.prom || fail "--prometheus: exit $?"
	promtool check metrics <all.prom || fail "promtool check metrics: the pool and both mounts"
	echo "ok: --prometheus, promtool clean"
else
	echo "SKIP part: promtool is not installed (Debian's prometheus package)"
fi

# 5. accel monitor's mount view
trap 'rc=$?; "${TM[@]}" kill-server 2>/dev/null; (exit $rc); cfs_cleanup' EXIT
tmux_start 80 24 "TERM=tmux-256color $ACCEL monitor --mount $A --interval 0.5; sleep 60"
wait_screen "^\(Mount\) $A +pid $PID_A +pool $POOL\$" "mount view title"
wait_screen "accelfs MOUNT STATISTICS" "title"
wait_screen "^ +[0-9.]+ read +$reads +0 " "read row"
wait_screen "^ +[0-9.]+ create +$(field a1.json 'n("create")') " "create row"
"${TM[@]}" capture-pane -p -t mon >monitor-mount.txt
keys m
wait_screen "^Choose a mount \(Enter\)" "mount picker"
wait_screen "^ $B +[0-9]+ " "B in the picker"
wait_screen "^ $A +$PID_A " "A in the picker"
keys Escape
wait_screen "^\(Mount\) $A " "the mount view again after Esc"
keys q
for ((i = 0; i < 100; i++)); do
	[ "$("${TM[@]}" display -p -t mon '#{alternate_on}')" = 0 ] && break
	sleep 0.1
done
[ "$i" -lt 100 ] || fail "accel monitor did not end on q:"$'\n'"$(screen)"
cat monitor-mount.txt
echo "PASS: per-mount statistics count what the mount served"
