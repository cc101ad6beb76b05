#!/bin/bash
# SPDX-License-Identifier: MIT
# locks-local.sh: locks on one host, where some programs use SOURCE (a plain
# local directory) and others the accelfs mount of it (-o allow_other). The
# reference is SOURCE alone: both processes lock the file through SOURCE.
# Fails where the mount is weaker:
#   mount-holds   a lock taken through the mount refuses, blocks and shows in
#                 F_GETLK for a process locking SOURCE directly, and a holder
#                 killed with SIGKILL frees it (fcntl, OFD, flock)
#   source-holds  the same the other way round
#   waiters       8 processes block in F_SETLKW through the mount (more than
#                 the daemon's 4 workers) while the lock is held, through the
#                 mount or in SOURCE; meanwhile the user nobody stats and reads
#                 another, new file through the mount within 2 s; after the
#                 unlock every waiter is granted
. "$(dirname "$0")/lib.sh"

WAITERS=8

[ -x "${LOCKS:-}" ] || fail "LOCKS is not set (run through meson test)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"

# cross PREFIX HOLDER-DIR ASKER-DIR: the three kinds, checks named PREFIX.*
cross() {
	local k
	for k in fcntl ofd flock; do
		"$LOCKS" cross $k "$2/lock-$k" "$3/lock-$k" | sed "s/^yes lock\./yes $1./" ||
			echo "$1: locks cross $k failed" >&2
	done
}

# other_user VIEW-DIR: nobody stats and reads a new file (made in SOURCE)
# through VIEW-DIR; "ms TOOK" or "never"
other_user() {
	local f=other-$RANDOM t
	echo "another user's data" >src/$f
	t=$(date +%s%3N)
	timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'stat "$1" >/dev/null && cat "$1" >/dev/null' sh "$1/$f" || {
		echo never
		return
	}
	echo $(($(date +%s%3N) - t))
}

all_granted() {
	[ "$(grep -l '^granted' waiter.* | wc -l)" -eq $WAITERS ]
}

# waiters PREFIX HOLD-PATH WAIT-PATH VIEW-DIR
waiters() {
	local name=$1 hold=$2 wait=$3 view=$4 i n ms granted holder
	rm -f ctl held waiter.*
	mkfifo ctl
	"$LOCKS" hold fcntl "$hold" <ctl >held &
	holder=$!
	exec 9>ctl
	sh_until 5 test -s held || fail "$name: the holder did not lock $hold"
	for i in $(seq $WAITERS); do
		"$LOCKS" wait fcntl "$wait" >waiter.$i 2>&1 9>&- &
		sh_state job $!
	done
	sleep 1
	n=$(find . -maxdepth 1 -name 'waiter.*' -empty | wc -l)
	echo "yes $name.blocked $((n == WAITERS)) $n of $WAITERS waiters blocked while the lock is held"
	ms=$(other_user "$view")
	echo "yes $name.other-user $([ "$ms" != never ] && [ "$ms" -lt 2000 ] && echo 1 || echo 0)" \
		"nobody's stat and read took $ms ms"
	exec 9>&-
	wait $holder
	sh_until 10 all_granted
	granted=$(grep -l '^granted' waiter.* | wc -l)
	echo "yes $name.granted $((granted == WAITERS)) $granted of $WAITERS granted within 10 s of the unlock"
}

sh_init
mkdir src m
chmod 755 src
sh_accel_mount "$SH_DIR/src" "$SH_DIR/m" -o allow_other
sed -n 's/^accelfs: /accelfs: /p' "$ACCEL_LOG" | head -2
M=$SH_DIR/m
S=$SH_DIR/src
{
	cross mount-holds "$S" "$S"
	cross source-holds "$S" "$S"
	waiters waiters-mount-holds "$S/w1" "$S/w1" "$S"
	waiters waiters-source-holds "$S/w2" "$S/w2" "$S"
} >ref.out
{
	cross mount-holds "$M" "$S"
	cross source-holds "$S" "$M"
	waiters waiters-mount-holds "$M/w1" "$M/w1" "$M"
	waiters waiters-source-holds "$S/w2" "$M/w2" "$M"
} >accel.out
sh_compare ref.out accel.out SOURCE mount
sh_finish
