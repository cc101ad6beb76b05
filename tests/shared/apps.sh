#!/bin/bash
# SPDX-License-Identifier: MIT
# apps.sh: real programs with writers on two hosts at once, on the bare
# gluster mounts (the reference), then on the accelfs mounts in each write
# mode (default, writeback=off, deferred_write=on, sync=relaxed,
# kernel_cache=never), one after the other on the same cluster; fails where
# accelfs is weaker in any:
#   sqlite    200 inserts from each host into one database, each its own
#             transaction, retried while busy; then PRAGMA integrity_check is
#             ok and every committed row is there, read through A, through B
#             and from the server's brick. Rollback journal (DELETE mode);
#             WAL only where bare gluster keeps it intact (its -shm file
#             must be one shared mapping for all hosts: the output says why
#             when it is skipped)
#   counter   a record-locking program on each host (fcntl lock on a 120-byte
#             record, read it, add one to its counter, write it, unlock; 10
#             records, 100 rounds): no update lost
# Gluster runs with its settings for databases (sh_cluster_up db): with its
# defaults, bare gluster itself loses committed rows and counter updates
# (each client serves reads from its caches) and SQLite's journal, deleted
# and created again by the other host, gives ESTALE.
. "$(dirname "$0")/lib.sh"

SQL=$(dirname "$0")/sqlhosts.py
INSERTS=200
COUNTERS=10
ROUNDS=100

[ -x "${RECORDS:-}" ] || fail "RECORDS is not set (run through meson test)"
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

# sqlite SIDE A B STORED MODE: results to SIDE.out; 1 if a step failed
sqlite() {
	local side=$1 a=$2 b=$3 stored=$4 mode=$5 start pa name=sqlite.${5,,}
	python3 "$SQL" create "$a/$mode.db" $mode 2>&1 || return 1
	sh_until 15 test -s "$b/$mode.db" || return 1
	start=$(($(date +%s%3N) + 500))
	python3 "$SQL" write $name "$a/$mode.db" A $INSERTS $mode $start rows-$side-A >>$side.out &
	pa=$!
	python3 "$SQL" write $name "$b/$mode.db" B $INSERTS $mode $start rows-$side-B >>$side.out
	wait $pa
	set -- A="rows-$side-A" B="rows-$side-B"
	python3 "$SQL" check $name.read-A "$a/$mode.db" "$@" >>$side.out &&
		python3 "$SQL" check $name.read-B "$b/$mode.db" "$@" >>$side.out &&
		python3 "$SQL" check $name.stored "file:$stored/$mode.db" "$@" >>$side.out
}

# counter SIDE A B STORED
counter() {
	local side=$1 a=$2 b=$3 stored=$4 pa rc x
	"$RECORDS" init "$a/counters" $COUNTERS 120 || return 1
	sh_until 15 sh_has_size "$b/counters" $((COUNTERS * 120)) || return 1
	"$RECORDS" count "$a/counters" $COUNTERS 120 $ROUNDS 2>$side.err &
	pa=$!
	"$RECORDS" count "$b/counters" $COUNTERS 120 $ROUNDS 2>>$side.err
	rc=$?
	wait $pa || rc=1
	echo "yes counter.programs $((rc == 0)) $(head -c 200 $side.err | tr '\n' ' ')" >>$side.out
	for x in stored:"$stored" read-A:"$a" read-B:"$b"; do
		"$RECORDS" counters-check counter.${x%%:*} "${x#*:}/counters" $COUNTERS 120 \
			$((2 * ROUNDS)) >>$side.out || return 1
	done
}

# must SIDE WHAT: a program that did not run: the harness's fault on bare
# gluster; on accelfs its checks have no result and fail in sh_compare
must() {
	[ "$1" = bare ] && fail "bare gluster: $2 did not run"
	echo "accelfs: $2 did not run"
}

# wal_supported A B STORED: runs WAL on bare gluster; its results join bare's,
# or WAL says why accelfs is not asked for it
wal_supported() {
	if ! sqlite wal "$@" WAL >wal.err 2>&1; then
		WAL="bare gluster fails it: $(tail -1 wal.err)"
	elif awk '($1 == "yes" && $3 != 1) || ($1 == "count" && $3 < $4) { bad = 1 }
		END { exit !bad }' wal.out; then
		WAL="bare gluster does not keep it: $(awk '$1 == "yes" && $3 != 1' wal.out | head -1)"
	else
		cat wal.out >>bare.out
	fi
}

# apps SIDE A B STORED
apps() {
	local side=$1 t=$SECONDS
	shift
	sqlite $side "$@" DELETE || must $side "sqlite (DELETE)"
	[ $side != bare ] || wal_supported "$@"
	[ -n "${WAL:-}" ] || [ $side = bare ] || sqlite $side "$@" WAL || must $side "sqlite (WAL)"
	counter $side "$@" || must $side "the counter programs"
	echo "$side: $(grep -c . $side.out) results in $((SECONDS - t)) s"
}

sh_init gluster
sh_cluster_up db
# accelfs with the names timeout its SOURCE's clients have (docs/shared.md,
# GlusterFS recipe): SQLite's journal, deleted and made again by the other
# host at every transaction, is looked up afresh at each open, as on the
# bare clients (--entry-timeout=0); with 1 s an open now and then met the
# other host's previous journal (ESTALE: "disk I/O error")
sh_shared_dir "$GA" "$GB" bare
apps bare "$GA/bare" "$GB/bare" "$SH_BRICK/bare"
[ -z "${WAL:-}" ] || echo "sqlite WAL: skipped: $WAL"
for m in default: nowb:writeback=off deferred:deferred_write=on relaxed:sync=relaxed \
	never:kernel_cache=never; do
	name=${m%%:*} opts=${m#*:}
	sh_accel_up -o entry_timeout=0${opts:+,$opts}
	sh_shared_dir "$XA" "$XB" $name
	apps $name "$XA/$name" "$XB/$name" "$SH_BRICK/$name"
	sh_compare bare.out $name.out bare "accelfs-$name"
	sh_accel_down
done
sh_finish
