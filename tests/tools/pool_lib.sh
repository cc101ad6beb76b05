# SPDX-License-Identifier: MIT
# pool_lib.sh - helpers for the pool statistics tests (accel stat, accel
# monitor), sourced after lib.sh: $2 is the pool_workload helper. Pools are
# named after the test and its pid, and removed (with any held workload
# stopped) when the script exits, however it exits.
WORKLOAD=$(realpath "${2:?usage: $0 path/to/accel path/to/pool_workload}")
POOLS=()
HOLDPID=

pool_cleanup() {
	local p
	exec 8>&- 2>/dev/null
	[ -n "$HOLDPID" ] && kill "$HOLDPID" 2>/dev/null && wait "$HOLDPID" 2>/dev/null
	for p in "${POOLS[@]}"; do rm -f "/dev/shm$p"; done
	cleanup
}
trap pool_cleanup EXIT

# newpool TAG: set POOL to a fresh unique pool name, removed on exit
newpool() {
	POOL="/accelfs-t-$1-$$"
	POOLS+=("$POOL")
	rm -f "/dev/shm$POOL"
}

# jget FILE EXPR: evaluate the Python expression EXPR on the JSON in FILE (as j)
jget() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2" || fail "cannot evaluate $2 on $1: $(cat "$1")"
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
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
