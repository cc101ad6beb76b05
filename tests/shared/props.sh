#!/bin/bash
# SPDX-License-Identifier: MIT
# props.sh MODE [ACCELFS-ARGS...]: the properties of issue 25 across two
# hosts, each check run on the bare gluster mounts (the reference), then on
# the accelfs mounts in write mode MODE (ACCELFS-ARGS appended to both hosts'
# accelfs). Fails where accelfs is weaker than bare gluster:
#   appends   A appends the even, B the odd 128-byte records to one log
#             (O_APPEND, one write each), interleaved in time: every record
#             intact and each host's in order, on the brick and through A and B
#   records   A writes the even, B the odd 120-byte records of one file with
#             pwrite, interleaved in time, with and without fcntl locks, into
#             an empty file and into a pre-allocated one both hosts have
#             read: every record intact on the server's brick and read
#             through A and B (within 2.5 s)
#   locks     fcntl, OFD and flock: A's lock refuses B's non-blocking request
#             and shows in B's F_GETLK; B's blocking request waits until A
#             unlocks; a holder killed with SIGKILL frees the lock
#   visible   create, a name in a listing, delete, rename, size, mtime and
#             data (at B's next open) seen on B within max(bare + 1.5 s, 2.5 s)
#   growth    through a descriptor B holds (fstat and read, as tail -f does)
#             and by name, growth A appended and closed, and growth A wrote
#             but neither closed nor synced, within the same bound
#   estale    B reads a file it holds open after A deleted it; B opens and
#             reads a name A replaces 200 times by write-temp-then-rename
#   lookups   (accelfs only) a stat through A of a name its kernel has not
#             looked up makes the daemon's statx on SOURCE without
#             AT_STATX_FORCE_SYNC: GlusterFS's client answers a forced one
#             from its md-cache too, so the force was one request more
#             through it per LOOKUP (shared.c); the log says so
. "$(dirname "$0")/lib.sh"

NREC=300
RECSIZE=120
PACE_US=2000
CAP_MS=12000
ROUNDS=200

[ $# -ge 1 ] || fail "usage: props.sh MODE [ACCELFS-ARGS...]"
MODE=$1
shift
for h in RECORDS LOCKS COHERENCE; do
	[ -x "${!h:-}" ] || fail "$h is not set (run through meson test)"
done

# part SIDE CMD...: CMD's results go to SIDE.out. A failing helper is the
# harness's fault on bare gluster; on accelfs its checks have no result and
# fail in sh_compare.
part() {
	local side=$1 err
	shift
	err=$("$@" 2>&1 >>"$side.out") && return 0
	[ "$side" = bare ] && fail "on bare gluster: $(basename "$1") ${*:2}: $err"
	echo "accelfs: $(basename "$1") ${*:2}: $err"
}

# records SIDE A B STORED: the interleaved writers
records() {
	local side=$1 a=$2 b=$3 stored=$4 how lock f name start pa rc
	for how in new prealloc; do
		for lock in 0 1; do
			f=rec-$how-$lock
			name=records.$how$([ $lock = 0 ] || echo -locked)
			# A makes the file (two O_CREATs of one new name race on
			# gluster: one gets EEXIST), B sees it, both read it
			if [ $how = prealloc ]; then
				part "$side" "$RECORDS" init "$a/$f" $NREC $RECSIZE
			else
				: >"$a/$f"
			fi
			sh_until 15 sh_has_size "$b/$f" $(stat -c %s "$a/$f") || echo "$side: B does not see $f"
			cat "$a/$f" "$b/$f" >/dev/null
			start=$(($(date +%s%3N) + 500))
			"$RECORDS" write "$a/$f" 0 $NREC $RECSIZE $start $PACE_US $lock 2>"$side.err" &
			pa=$!
			"$RECORDS" write "$b/$f" 1 $NREC $RECSIZE $start $PACE_US $lock 2>>"$side.err"
			rc=$?
			wait $pa || rc=1
			echo "yes $name.writes $((rc == 0)) $(head -c 200 "$side.err" | tr '\n' ' ')" >>"$side.out"
			part "$side" "$RECORDS" verify "$name.stored" "$stored/$f" $NREC $RECSIZE 0
			part "$side" "$RECORDS" verify "$name.read-A" "$a/$f" $NREC $RECSIZE 2500
			part "$side" "$RECORDS" verify "$name.read-B" "$b/$f" $NREC $RECSIZE 2500
		done
	done
}

# appends SIDE A B STORED: the two hosts append to one log (O_APPEND), interleaved.
# Records of 128 bytes: a FUSE client (glusterfs's, accelfs's) sends a write
# that starts inside a page it does not hold as two requests, each appended
# on its own, so another host's record can land inside one that crosses a
# page, on the bare mount as through accelfs (docs/shared.md); records that
# divide the page never cross one.
APPSIZE=128
appends() {
	local side=$1 a=$2 b=$3 stored=$4 start pa rc
	: >"$a/log"
	sh_until 15 test -e "$b/log" || echo "$side: B does not see log"
	start=$(($(date +%s%3N) + 500))
	"$RECORDS" append "$a/log" 0 $NREC $APPSIZE $start $PACE_US 2>"$side.err" &
	pa=$!
	"$RECORDS" append "$b/log" 1 $NREC $APPSIZE $start $PACE_US 2>>"$side.err"
	rc=$?
	wait $pa || rc=1
	echo "yes appends.writes $((rc == 0)) $(head -c 200 "$side.err" | tr '\n' ' ')" >>"$side.out"
	part "$side" "$RECORDS" verify-appends appends.stored "$stored/log" $NREC $APPSIZE 0
	part "$side" "$RECORDS" verify-appends appends.read-A "$a/log" $NREC $APPSIZE 2500
	part "$side" "$RECORDS" verify-appends appends.read-B "$b/log" $NREC $APPSIZE 2500
}

# props SIDE A B STORED: every check through A and B (STORED: the brick's
# copy of their directory)
props() {
	local side=$1 a=$2 b=$3 stored=$4 k t=$SECONDS
	records "$@"
	appends "$@"
	for k in fcntl ofd flock; do
		echo "lock file" >"$a/lock-$k"
		sh_until 15 sh_has_size "$b/lock-$k" 10 || echo "$side: B does not see lock-$k"
		part "$side" "$LOCKS" cross $k "$a/lock-$k" "$b/lock-$k"
	done
	sh_shared_dir "$a" "$b" vis
	part "$side" "$COHERENCE" visible "$a/vis" "$b/vis" $CAP_MS
	sh_shared_dir "$a" "$b" estale
	part "$side" "$COHERENCE" estale "$a/estale" "$b/estale" $ROUNDS
	echo "$side: $(grep -c . "$side.out") results in $((SECONDS - t)) s"
}

# lookups: see above; one ok/FAILED line, counted by sh_finish
lookups() {
	local pid sp forced listed
	pid=$(accel_daemon_pids "$XA" | head -1)
	echo x >"$XA/accel/lookup-me" || fail "cannot create lookup-me through A"
	sleep 1.5 # past entry_timeout: the next stat is a LOOKUP
	strace -f -qq -e trace=statx -o lookups.txt -p "$pid" &
	sp=$!
	accel_trace_wait "$pid" || echo "lookups: strace has not attached to every thread of $pid in 10 s"
	stat "$XA/accel/lookup-me" >/dev/null
	kill -INT $sp
	wait $sp
	forced=$(grep -v 'resumed>' lookups.txt | grep '"lookup-me"' | grep -c FORCE_SYNC)
	listed=$(grep -v 'resumed>' lookups.txt | grep -c '"lookup-me"')
	SH_CHECKS=$((SH_CHECKS + 1))
	if [ "$listed" -ge 1 ] && [ "$forced" = 0 ] &&
		grep -q "lookups as SOURCE's client answers them" "$SH_LOG_A"; then
		echo "ok lookups: $listed statx of the name on SOURCE, none forced"
	else
		echo "FAILED lookups: $listed statx of the name on SOURCE, $forced forced (want >= 1, 0)"
		SH_FAILS=$((SH_FAILS + 1))
	fi
}

sh_init gluster
sh_cluster_up
sh_accel_up "$@"
echo "write mode $MODE: accelfs -o allow_other,pool=$ACCEL_POOL-a|b $*"
sh_shared_dir "$GA" "$GB" bare
sh_shared_dir "$XA" "$XB" accel
props bare "$GA/bare" "$GB/bare" "$SH_BRICK/bare"
props accel "$XA/accel" "$XB/accel" "$SH_BRICK/accel"
sh_compare bare.out accel.out bare accelfs
command -v strace >/dev/null && lookups || echo "lookups: skipped (no strace)"
sh_finish
