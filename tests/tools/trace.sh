#!/bin/bash
# SPDX-License-Identifier: MIT
# trace.sh - accel trace and the bpftrace scripts (docs/probes.md).
#
# Without root: the error messages (unknown script, bpftrace missing, no
# daemon) and which daemon --dry-run picks, on a fake /proc. With root:
# without a mounted tracefs, trace mounts it (in a private mount namespace)
# or says in one line why it cannot. With root,
# bpftrace and working USDT: cache-stats against a known workload on a fresh
# pool (kernel_cache=never, local_buffers=0, a file of N buckets read twice:
# N misses then N global hits) must print Global Cache Hit Percent AVE 50.00
# and 2N attempts, as the pool's own counters say; backend-latency must show
# a read histogram; hot-files the file as a read candidate.
# $1 the accel binary, $2 the accelfs daemon.
ACCEL=$(realpath "${1:?usage: $0 path/to/accel path/to/accelfs}")
ACCELFS=$(realpath "${2:?usage: $0 path/to/accel path/to/accelfs}")
. "$(dirname "$0")/../lib/mount.sh"

N=8
BS=65536
POOL=/accel-bt-$$
TRACER=

trace_cleanup() {
	local rc=$?
	if [ -n "$TRACER" ] && kill -0 "$TRACER" 2>/dev/null; then
		kill -INT "$TRACER" 2>/dev/null
		accel_wait_exit "$TRACER" 5 || kill -KILL "$TRACER" 2>/dev/null
	fi
	rm -f "/dev/shm$POOL"
	(exit $rc)
	accel_cleanup
}
trap trace_cleanup EXIT


# expect RC WANT_OUTPUT CMD...: exit status and the one-line message
expect() {
	local rc=$1 want=$2 out got=0
	shift 2
	out=$("$@" 2>&1) || got=$?
	[ "$got" = "$rc" ] || fail "$*: exit $got, not $rc: $out"
	[ "$out" = "$want" ] || fail "$*: said '$out', not '$want'"
}

accel_tmpdir
T=$ACCEL_TMP

# --- errors, and the choice of daemon (no root needed) ---
expect 2 "accel trace: unknown script 'nope' (cache-stats, backend-latency, hot-files)" \
	"$ACCEL" trace nope
expect 2 "accel trace: which SCRIPT? (see 'accel trace --help')" "$ACCEL" trace
expect 2 "accel trace: hot-files needs --interval of at least 1 s" \
	"$ACCEL" trace hot-files --interval 0
expect 1 "accel trace: bpftrace not found: install bpftrace (Debian: apt-get install bpftrace)" \
	env PATH=/nonexistent "$ACCEL" trace cache-stats
mkdir "$T/proc"
expect 1 "accel trace: no accelfs daemon running" \
	env ACCEL_TEST_PROC="$T/proc" "$ACCEL" trace --dry-run cache-stats
mkdir -p "$T/proc/4242" "$T/proc/4343" "$T/proc/77" "$T/bin"
ln -s "$T/bin/accelfs" "$T/proc/4242/exe"
ln -s /usr/bin/true "$T/proc/77/exe"
out=$(ACCEL_TEST_PROC="$T/proc" "$ACCEL" trace -n cache-stats --interval 2 --duration 4) ||
	fail "dry run: $out"
[[ "$out" == *"bpftrace -p 4242 "*"/cache-stats.bt $T/bin/accelfs 2 4 0 all "* ]] ||
	fail "one daemon: $out"
ln -s "$T/bin/accelfs" "$T/proc/4343/exe"
out=$(ACCEL_TEST_PROC="$T/proc" "$ACCEL" trace -n hot-files) || fail "dry run: $out"
[[ "$out" == *"bpftrace "*"/hot-files.bt $T/bin/accelfs 6 0 0 all "* && "$out" != *" -p "* ]] ||
	fail "two daemons of one binary: $out"
expect 1 "accel trace: pid 77 is not an accelfs daemon" \
	env ACCEL_TEST_PROC="$T/proc" "$ACCEL" trace -n backend-latency --pid 77
ok "errors and the choice of daemon"

# --- tracefs: mounted where it is missing, else one line why (root; a private mount
# namespace, so the host's tracefs is never touched; a stand-in bpftrace says what it found) ---
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	mkdir "$T/fakebin"
	printf '#!/bin/sh\necho "bpftrace ran on $(stat -f -c %%T /sys/kernel/tracing)"\n' >"$T/fakebin/bpftrace"
	chmod 755 "$T/fakebin/bpftrace"
	out=$(unshare -m --propagation private sh -c '
		umount /sys/kernel/debug/tracing 2>/dev/null
		if [ "$(stat -f -c %T /sys/kernel/tracing)" = tracefs ]; then
			umount /sys/kernel/tracing || exit 99
		fi
		[ "$(stat -f -c %T /sys/kernel/tracing)" != tracefs ] || exit 98
		exec "$@"' sh env PATH="$T/fakebin:$PATH" ACCEL_TEST_PROC="$T/proc" "$ACCEL" trace cache-stats 2>&1)
	rc=$?
	if [ $rc = 99 ]; then # the scripts below are still run
		echo "# tracefs mounted when missing: left out, cannot unmount tracefs in a private mount namespace here"
	else
		[ $rc = 0 ] && [ "$out" = "bpftrace ran on tracefs" ] ||
			fail "tracefs not mounted first (exit $rc): $out"
		ok "tracefs mounted when missing"
	fi
	expect 1 "accel trace: tracefs is not mounted at $T/nowhere and mounting it failed: No such file or directory (bpftrace needs it: mount -t tracefs nodev $T/nowhere)" \
		unshare -m --propagation private env PATH="$T/fakebin:$PATH" ACCEL_TEST_PROC="$T/proc" \
		ACCEL_TEST_TRACEFS="$T/nowhere" "$ACCEL" trace cache-stats
	ok "one line when tracefs cannot be mounted"
else
	echo "# tracefs part left out: needs root and unshare"
fi

# --- the scripts against a live daemon ---
accel_require_fuse
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
readelf -n "$ACCELFS" 2>/dev/null | grep -q 'Name: cache_lookup' ||
	skip "$ACCELFS has no USDT probes (built with -Dprobes=disabled)"
timeout 60 bpftrace -e "usdt:$ACCELFS:accelfs:cache_lookup { } BEGIN { exit(); }" \
	>"$T/probe.log" 2>&1 || skip "bpftrace cannot attach here: $(tail -n1 "$T/probe.log")"

mkdir "$T/src" "$T/mnt"
head -c $((N * BS)) /dev/urandom >"$T/src/f"
head -c $((4 * BS)) /dev/urandom >"$T/src/g"
# readahead_max=0: the MONITOR numbers checked below assume one backend read per miss
accel_mount "$T/src" "$T/mnt" -o "pool=$POOL,kernel_cache=never,local_buffers=0,bucket_size=$BS,global_buffers=64,readahead_max=0"

# trace_start OUT SCRIPT ARGS...: accel trace in the background, once attached
trace_start() {
	local out=$1 i=0
	shift
	"$ACCEL" trace "$@" --pid "$ACCEL_PID" >"$out" 2>&1 &
	TRACER=$!
	until grep -q '^Tracing' "$out"; do
		kill -0 "$TRACER" 2>/dev/null || fail "accel trace $*: $(cat "$out")"
		i=$((i + 1))
		[ $i -le 1200 ] || fail "accel trace $* did not attach within 60 s"
		sleep 0.05
	done
}

trace_wait() {
	accel_wait_exit "$TRACER" 60 || fail "accel trace did not stop after --duration"
	TRACER=
}

# read_file F: every bucket once, one read per bucket, never past the end
read_file() {
	dd if="$1" of=/dev/null bs=$BS count=$(($(stat -c %s "$1") / BS)) status=none || fail "read $1"
}

trace_start "$T/cs" cache-stats --file "$T/mnt/f" --interval 1 --duration 4
read_file "$T/mnt/f"
read_file "$T/mnt/f"
trace_wait
grep -q "^(File) $T/src/f " "$T/cs" || fail "cache-stats header: $(cat "$T/cs")"
row() { awk -v r="$1" 'index($0, "  " r " ") == 1 { print }' "$T/cs" | tail -n1; }
ave=$(row "Global Cache Hit Percent" | awk '{ print $(NF - 2) }')
[ "$ave" = 50.00 ] || fail "Global Cache Hit Percent AVE $ave, not 50.00: $(cat "$T/cs")"
# interval 1 s: each table's CUR rate is that second's count
sum() { awk -v r="$1" 'index($0, "  " r " ") == 1 { s += $(NF - 3) } END { printf "%.2f", s }' "$T/cs"; }
[ "$(sum "Global Cache Attempt Rate")" = "$((2 * N)).00" ] ||
	fail "attempts $(sum "Global Cache Attempt Rate"), not $((2 * N)): $(cat "$T/cs")"
[ "$(sum "Global Buf Read I/O Rate")" = "$N.00" ] || fail "buffer reads: $(cat "$T/cs")"
[ "$(sum "Local Cache Attempt Rate")" = 0.00 ] || fail "local attempts: $(cat "$T/cs")"
stat_json=$("$ACCEL" stat --json --pool "$POOL") || fail "accel stat: $stat_json"
counters=$(python3 -c 'import json, sys; c = json.load(sys.stdin)["pool"]["counters"]
print(c["global_attempts"], c["global_hits"], c["global_buf_read_ios"])' <<<"$stat_json")
[ "$counters" = "$((2 * N)) $N $N" ] || fail "pool counters '$counters', not '$((2 * N)) $N $N'"
ok "cache-stats: hit percent AVE 50.00, $((2 * N)) attempts, as the pool counts"


trace_start "$T/bl" backend-latency --duration 2
read_file "$T/mnt/g"
trace_wait
grep -q '^@us\[read\]:' "$T/bl" && grep -q '^\[[0-9]' "$T/bl" ||
	fail "backend-latency: no read histogram: $(cat "$T/bl")"
ok "backend-latency: read histogram"

trace_start "$T/hf" hot-files --interval 1 --duration 2
read_file "$T/mnt/f"
trace_wait
grep -Eq "^@top\[$T/src/f, 100, \*\]: [0-9]+\$" "$T/hf" || fail "hot-files: $(cat "$T/hf")"
ok "hot-files: the file, 100 % reads, a candidate"

# without --file: one table per file, each with its own counts
trace_start "$T/pf" cache-stats --interval 1 --duration 3
head -c $((4 * BS)) /dev/urandom >"$T/src/h" # cold: never read through the mount
read_file "$T/mnt/f"
read_file "$T/mnt/h"
read_file "$T/mnt/h"
trace_wait
grep -q "^(File) $T/src/f " "$T/pf" && grep -q "^(File) $T/src/h " "$T/pf" ||
	fail "cache-stats without --file: not one table per file: $(cat "$T/pf")"
ave_of() { # file: the last Global Cache Hit Percent AVE in that file's table
	awk -v f="(File) $T/src/$1 " 'index($0, f) == 1 { on = 1; next }
		/^\(File\)/ { on = 0 }
		on && index($0, "  Global Cache Hit Percent ") == 1 { v = $(NF - 2) } END { print v }' "$T/pf"
}
[ "$(ave_of f)" = 100.00 ] || fail "f was cached: AVE $(ave_of f), not 100.00: $(cat "$T/pf")"
[ "$(ave_of h)" = 50.00 ] || fail "h read twice from cold: AVE $(ave_of h), not 50.00: $(cat "$T/pf")"
ok "cache-stats: one table per file without --file"
