# SPDX-License-Identifier: MIT
# pool_lib.sh - helpers for the pool statistics tests (accel stat, accel
# monitor), sourced after lib.sh: $2 is the pool_workload helper. Pools are
# named after the test and its pid, and removed (with any held workload
# stopped) when the script exits, however it exits.
WORKLOAD=$(realpath "${2:?usage: $0 path/to/accel path/to/pool_workload}")
HOLDPID=

# the held workload first: it keeps the pool attached
pool_cleanup() {
	exec 8>&- 2>/dev/null
	[ -n "$HOLDPID" ] && kill "$HOLDPID" 2>/dev/null && wait "$HOLDPID" 2>/dev/null
	cleanup
}
trap pool_cleanup EXIT

# newpool TAG: set POOL to a fresh unique pool name, removed on exit
newpool() {
	POOL="/accelfs-t-$1-$$"
	SEGMENTS+=("$POOL")
	rm -f "/dev/shm$POOL"
}

# hold POOL NBUFS BSIZE OP...: run the workload keeping its streams open
hold() {
	local pool=$1 nbufs=$2 bsize=$3 i
	shift 3
	rm -f "$T/ctl" "$T/ready"
	mkfifo "$T/ctl"
	"$WORKLOAD" "$pool" "$nbufs" "$bsize" --hold "$@" <"$T/ctl" >"$T/ready" &
	HOLDPID=$!
	exec 8>"$T/ctl"
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$T/ready" 2>/dev/null && return 0
		kill -0 "$HOLDPID" 2>/dev/null || fail "pool_workload failed"
		sleep 0.1
	done
	fail "pool_workload not ready after 10 s"
}

# release: let the held workload close its streams and exit
release() {
	exec 8>&-
	wait "$HOLDPID" || fail "pool_workload exited $?"
	HOLDPID=
}
