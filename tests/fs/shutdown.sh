#!/bin/bash
# SPDX-License-Identifier: MIT
# shutdown.sh sigterm|sigint|fusermount: stops the daemon while a writer is
# writing, fdatasync-ing and logging numbered records through the mount, then
# checks: daemon exit status 0, no mount left, and every record the writer
# saw acknowledged is intact in SOURCE.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${RECWRITER:-}" ] || fail "RECWRITER is not set"
how=${1:?usage: shutdown.sh sigterm|sigint|fusermount}

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
accel_mount "$base/src" "$base/mnt"
daemon=$ACCEL_PID
: >"$base/mnt/records"
"$RECWRITER" "$base/mnt/records" "$base/acks" &
writer=$!
ACCEL_PIDS="$ACCEL_PIDS $writer"

# Let the writer get going, so the stop lands in the middle of its stream.
for _ in $(seq 200); do
	[ "$(wc -l <"$base/acks" 2>/dev/null || echo 0)" -ge 200 ] && break
	sleep 0.05
done
kill -0 $writer 2>/dev/null || fail "the writer stopped before the test began"

case $how in
sigterm) kill -TERM $daemon ;;
sigint) kill -INT $daemon ;;
fusermount)
	# The writer closes the file after each record, so the unmount wins
	# within some tries; EBUSY in between is normal kernel behaviour. The
	# file is open for most of each record (write, fdatasync, and close's
	# FLUSH), so under a sanitizer this can take seconds: try for 15 s.
	ok=0
	for _ in $(seq 750); do
		fusermount3 -u "$base/mnt" 2>/dev/null && { ok=1; break; }
		sleep 0.02
	done
	[ $ok = 1 ] || fail "fusermount3 -u kept failing"
	;;
*) fail "unknown variant $how" ;;
esac

accel_wait_exit $daemon 20 || fail "daemon still running 20s after the stop"
rc=0
wait $daemon || rc=$?
accel_wait_exit $writer 10 || fail "writer hung after the daemon exited"
wait $writer
wrc=$?
acks=$(wc -l <"$base/acks")
echo "daemon exit $rc, writer exit $wrc, $acks records acknowledged"
[ $rc = 0 ] || { cat "$ACCEL_LOG"; fail "daemon exit status $rc, expected 0"; }
! accel_is_mounted "$base/mnt" || fail "$base/mnt is still mounted"
[ "$wrc" = 0 ] || fail "writer exit status $wrc (3: it never noticed the mount going away)"
[ "$acks" -ge 200 ] || fail "only $acks records acknowledged"
"$RECWRITER" -c "$base/src/records" "$acks" || fail "acknowledged records are missing in SOURCE"
[ ! -s "$ACCEL_LOG" ] || { cat "$ACCEL_LOG"; echo "NOTE: the daemon wrote the above on stderr"; }
echo "PASS: $how with writes in flight"
