#!/bin/bash
# SPDX-License-Identifier: MIT
# shutdown-open.sh sigterm|sigint [ACCELFS-OPTIONS...]: a writer has 200 MiB
# of acknowledged, never fsync'ed writes in a file it still holds open when
# the daemon is told to stop (issue 15, 1). Three rounds: the daemon exits 0
# and SOURCE holds every byte the writer was told was written, pattern
# included. (syncfs of a FUSE mount returned with the kernel's WRITEs still
# queued, and the session ended under them: 16-174 MiB were missing.)
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v python3 >/dev/null || skip "python3 is needed for the writer"
how=${1:?usage: shutdown-open.sh sigterm|sigint [OPTIONS...]}
shift
case $how in sigterm) sig=TERM ;; sigint) sig=INT ;; *) fail "unknown variant $how" ;; esac
MIB=${SHUTDOWN_MIB:-200}

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"

writer() { # writer FILE ACKS: MIB chunks of 1 MiB, the count after each, then hold it open
	# (exec: the job is python itself, so killing it closes the file)
	exec python3 - "$1" "$2" "$MIB" <<'PY'
import os, sys, time
path, acks, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
a = open(acks, "w", buffering=1)
for i in range(mib):
    chunk = (b"%08d" % i) * (1 << 17)        # 1 MiB that names its place
    assert os.write(fd, chunk) == len(chunk)
    a.write(f"{i + 1}\n")
a.write("done\n")
time.sleep(60)                               # still open when the daemon stops
PY
}

check() { # check FILE MIB: the first MIB chunks are there and right
	python3 - "$1" "$2" <<'PY'
import os, sys
path, n = sys.argv[1], int(sys.argv[2])
size = os.stat(path).st_size
assert size >= n << 20, f"SOURCE has {size >> 20} MiB of {n} MiB acknowledged ({size} bytes)"
with open(path, "rb") as f:
    for i in range(n):
        if f.read(1 << 20) != (b"%08d" % i) * (1 << 17):
            sys.exit(f"SOURCE: MiB {i} of {n} acknowledged differs")
PY
}

for round in 1 2 3; do
	accel_mount "$base/src" "$base/mnt" "$@"
	daemon=$ACCEL_PID
	rm -f "$base/acks"
	writer "$base/mnt/big" "$base/acks" &
	wpid=$!
	ACCEL_PIDS="$ACCEL_PIDS $wpid"
	for _ in $(seq 1200); do
		grep -q done "$base/acks" 2>/dev/null && break
		kill -0 $wpid 2>/dev/null || break
		sleep 0.05
	done
	grep -q done "$base/acks" || fail "round $round: the writer did not finish its writes"
	kill -$sig $daemon
	accel_wait_exit $daemon 40 || fail "round $round: daemon still running 40 s after SIG$sig"
	rc=0
	wait $daemon || rc=$?
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	[ $rc = 0 ] || { cat "$ACCEL_LOG"; fail "round $round: daemon exit status $rc"; }
	! accel_is_mounted "$base/mnt" || fail "round $round: $base/mnt is still mounted"
	! grep -q "not fsync'ed through the mount" "$ACCEL_LOG" ||
		{ cat "$ACCEL_LOG"; fail "round $round: the open file was not fsync'ed by its name"; }
	acked=$(grep -c '^[0-9]' "$base/acks")
	check "$base/src/big" "$acked" || { cat "$ACCEL_LOG"; fail "round $round: acknowledged bytes lost"; }
	echo "round $round: $acked MiB acknowledged, all on SOURCE"
	rm -f "$base/src/big"
done
echo "PASS: SIG$sig with $MIB MiB open and unsynced ($*)"
