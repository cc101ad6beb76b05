#!/bin/bash
# SPDX-License-Identifier: MIT
# noflush.sh CASE: a close costs a FLUSH round trip only where the daemon has
# something to do at that close (fuse/ops_file.c, handle_new). With
# locks=forward (the default) every close has: it drops the closing
# process's locks on SOURCE, so FLUSH is never spared; these cases run with
# locks=local, where the kernel keeps the locks.
#   deferred     writeback=off mount, deferred write on: 20 writers' closes
#                each send FLUSH, and each file's bytes are on SOURCE as soon
#                as its close returns (close-to-open); 50 readers' closes
#                send none
#   passthrough  passthrough=always mount: 50 files created and written send
#                no FLUSH (the kernel does their I/O; nothing of the daemon's
#                waits for their close)
#   auto         default mount (writeback cache): deferred_write=auto is off,
#                so 20 writers' closes send at most the one FLUSH that turns
#                FLUSH off, defer nothing, and their bytes are on SOURCE when
#                close returns; with deferred_write=on each close sends FLUSH
#                and writes are deferred; with sync=relaxed auto stays on
# FUSE requests are counted from the kernel's fuse:fuse_request_send
# tracepoint with bpftrace (scripts/bench/fuse-reqcount). Skips (77) without
# root, /dev/fuse, bpftrace or the tracepoint (Linux >= 6.13); the
# passthrough case also where the build or the kernel has no passthrough.
set -u
case=${1:?case}
. "$(dirname "$0")/lib.sh"
REQCOUNT=$(realpath "$(dirname "$0")/../../scripts/bench/fuse-reqcount")
cfs_init
cfs_pool noflush
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
command -v python3 >/dev/null || skip "python3 is needed"
tp=fuse/fuse_request_send
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		skip "tracefs is not mounted and cannot be: no tracepoints"
fi
[ -d "/sys/kernel/tracing/events/$tp" ] || [ -d "/sys/kernel/debug/tracing/events/$tp" ] ||
	skip "the kernel has no $tp tracepoint (Linux >= 6.13)"
mkdir m

# flushes OUT CMD...: runs CMD on the mount m, writes its FUSE request counts
# to OUT and prints its FLUSH count.
# A command still running after 40 s (meson stops the test at 90) is a hang:
# where the daemon is goes to stderr first. A bpftrace that hung at its end
# (fuse-reqcount's status 3) is counted again once: every command here may
# run twice.
flushes() {
	local out=$1 rc=0
	shift
	timeout 40 "$REQCOUNT" "$PWD/m" "$@" >"$out" || rc=$?
	if [ $rc = 3 ]; then
		echo "note: bpftrace hung at its end; counting again" >&2
		rc=0
		timeout 40 "$REQCOUNT" "$PWD/m" "$@" >"$out" || rc=$?
	fi
	if [ $rc = 124 ]; then
		accel_dump_daemons
		fail "fuse-reqcount $* still ran after 40 s: $(cat "$out")"
	fi
	[ $rc = 0 ] || fail "fuse-reqcount $*: $(cat "$out")"
	awk '$2 == "FLUSH" { n = $1 } END { print n + 0 }' "$out"
}

# every close of a writer checks SOURCE at once
cat >writers.py <<'PY'
import os, sys
m, s = sys.argv[1], sys.argv[2]
for i in range(20):
    data = b"record %d\n" % i * 10
    fd = os.open(f"{m}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
    with open(f"{s}/f{i}", "rb") as f:
        got = f.read()
    if got != data:
        sys.exit(f"{s}/f{i}: {len(got)} bytes on SOURCE after close, not {len(data)}")
PY

# mounted_with WORD: the daemon's "mounted" line says "deferred write WORD"
mounted_with() {
	cfs_wait_init
	grep -q "deferred write $1" "$ACCEL_LOG" ||
		fail "want deferred write $1: $(grep mounted "$ACCEL_LOG")"
}

case_deferred() {
	accel_mount "$PWD/src" "$PWD/m" -o "writeback=off,deferred_write=on,locks=local,pool=$POOL"
	w=$(flushes writers.cnt python3 writers.py "$PWD/m" "$PWD/src") || exit
	echo "20 writers' closes: $w FLUSH"
	[ "$w" -ge 20 ] || { cat writers.cnt; fail "$w FLUSH for 20 deferring writers' closes"; }
	[ "$(pstat deferred_writes)" -ge 1 ] ||
		fail "no write was deferred: the case tests nothing"
	r=$(flushes readers.cnt sh -c 'exec >/dev/null; for i in $(seq 0 19); do cat m/f$i; done
		for i in $(seq 30); do cat m/f0; done') || exit
	echo "50 readers' closes: $r FLUSH"
	[ "$r" = 0 ] || { cat readers.cnt; fail "$r FLUSH for 50 readers' closes"; }
	accel_umount "$PWD/m"
	for i in $(seq 0 19); do
		[ "$(grep -c "^record $i$" "src/f$i")" = 10 ] || fail "src/f$i: not what was written"
	done
	echo "PASS: deferring writers flush at close, readers send no FLUSH"
}

case_passthrough() {
	cfs_pt_mount "passthrough=always,locks=local,pool=$POOL"
	p=$(flushes pt.cnt sh -c 'for i in $(seq 50); do echo "file $i" >m/p$i; done') || exit
	echo "50 passthrough creates: $p FLUSH"
	[ "$p" = 0 ] || { cat pt.cnt; fail "$p FLUSH for 50 passthrough handles' closes"; }
	[ "$(pstat opens_passthrough)" -ge 50 ] || fail "the creates were not passthrough"
	for i in $(seq 50); do
		[ "$(cat "src/p$i")" = "file $i" ] || fail "src/p$i: not what was written"
	done
	echo "PASS: passthrough handles send no FLUSH"
}

case_auto() {
	local d0
	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,locks=local"
	cfs_wait_init
	grep -q "writeback cache on" "$ACCEL_LOG" ||
		skip "no writeback cache here: $(grep mounted "$ACCEL_LOG")"
	mounted_with off
	d0=$(pstat deferred_writes)
	w=$(flushes auto.cnt python3 writers.py "$PWD/m" "$PWD/src") || exit
	echo "default mount, 20 writers' closes: $w FLUSH, $(($(pstat deferred_writes) - d0)) deferred writes"
	[ "$w" -le 1 ] || { cat auto.cnt; fail "$w FLUSH for 20 closes under deferred_write=auto"; }
	[ "$(pstat deferred_writes)" = "$d0" ] || fail "writes deferred under deferred_write=auto"
	accel_umount "$PWD/m"

	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,deferred_write=on,locks=local"
	mounted_with on
	d0=$(pstat deferred_writes)
	w=$(flushes on.cnt python3 writers.py "$PWD/m" "$PWD/src") || exit
	echo "deferred_write=on, 20 writers' closes: $w FLUSH, $(($(pstat deferred_writes) - d0)) deferred writes"
	[ "$w" -ge 20 ] || { cat on.cnt; fail "$w FLUSH for 20 closes under deferred_write=on"; }
	[ "$(pstat deferred_writes)" -gt "$d0" ] || fail "no write deferred under deferred_write=on"
	accel_umount "$PWD/m"

	accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,sync=relaxed,locks=local"
	mounted_with on
	accel_umount "$PWD/m"
	echo "PASS: deferred_write=auto is off under the writeback cache, on under sync=relaxed"
}

"case_$case"
