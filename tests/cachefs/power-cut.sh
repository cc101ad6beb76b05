#!/bin/bash
# SPDX-License-Identifier: MIT
# power-cut.sh MODE: power cuts under a loop ext4 under accelfs (issue 27).
# SOURCE is an ext4 on a loop device (direct I/O) whose image lives on cutfs
# (tests/lib/cutfs.c), which holds every write until a flush reaches it, as
# a disk's volatile cache does. An appender writes 120-byte records through
# the mount, fsync'ing each, and notes each acknowledged record with the
# time its fsync returned. At a random moment the power is cut (cutfs drops
# every held write and every later one), the appender and the daemon die
# (SIGKILL; the pool, in RAM, is lost too), and the image is mounted again
# (journal replay). Three cuts per mode.
#   strict modes (MODE = writeback=on, writeback=off, kernel_cache=never,
#   deferred_write=on): every acknowledged record is there
#   sync=relaxed: every record acknowledged more than flush_interval (1 s)
#   + MARGIN (0.5 s) before the cut is there; the oldest lost one's age is
#   printed (the measured bound, docs/daemon-death.md)
set -u
mode=${1:?usage: power-cut.sh MOUNT-OPTIONS}
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool cut
cfs_python
MARGIN_MS=500
ROUNDS=3

cfs_cut_disk 96M
mkdir m

cat >append.py <<'EOF'
# append.py FILE ACKS: records "seq" to FILE, fsync after each; ACKS gets
# "seq ack_ns" once each fsync returned (CLOCK_REALTIME)
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
acks = open(sys.argv[2], "w", buffering=1)
seq = 0
while True:
    seq += 1
    os.write(fd, (b"%08d" % seq).ljust(119, b".") + b"\n")
    os.fsync(fd)
    acks.write("%d %d\n" % (seq, time.time_ns()))
EOF

# check ACKS CUT_NS: compares the records on the replayed disk with the acks
check() {
	$PY - "$1" "$2" "$mode" "$MARGIN_MS" src/log <<'EOF'
import sys
acks_path, cut_ns, mode, margin_ms, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
acks = [tuple(map(int, l.split())) for l in open(acks_path) if l.count(" ") == 1 and l.endswith("\n")]
try:
    data = open(log, "rb").read()
except FileNotFoundError:
    data = b""
have = set()
for line in data.split(b"\n"):
    if len(line) == 119 and line[:8].isdigit():
        have.add(int(line[:8]))
relaxed = "sync=relaxed" in mode
bound = cut_ns - (1000 + margin_ms) * 1000000 if relaxed else cut_ns
lost = [(s, t) for s, t in acks if t < bound and s not in have]
lost_any = [(s, t) for s, t in acks if t < cut_ns and s not in have]
oldest = max(((cut_ns - t) / 1e6 for s, t in lost_any), default=0)
print("acked before the cut %d, on disk %d, lost %d (oldest lost acked %.0f ms before the cut)"
      % (sum(1 for s, t in acks if t < cut_ns), len(have), len(lost_any), oldest))
if lost:
    print("LOST within the promise: %d, e.g. %s" % (len(lost), lost[:3]))
    sys.exit(1)
EOF
}

for round in $(seq $ROUNDS); do
	cfs_cut_up
	: >acks
	accel_mount "$PWD/src" "$PWD/m" -o "$mode,pool=$POOL"
	$PY append.py m/log acks &
	app=$!
	sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 1.5 + (r % 150) / 100 }')"
	cut_ns=$(date +%s%N)
	cfs_cut_ctl cut
	kill -KILL "$app"
	wait "$app" 2>/dev/null
	cfs_kill9 "$PWD/m" "$ACCEL_PID"
	ACCEL_MNTS=""
	rm -f "/dev/shm$POOL" # RAM is gone too
	cfs_cut_down
	cfs_cut_ctl live
	cfs_cut_up
	echo "round $round ($mode):"
	check acks "$cut_ns" || fail "round $round: acknowledged records lost"
	rm -f src/log
	sync -f src/.
	cfs_cut_down
done
echo "PASS: $mode: $ROUNDS power cuts"
