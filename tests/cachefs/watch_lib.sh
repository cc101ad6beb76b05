# SPDX-License-Identifier: MIT
# tests/cachefs/watch_lib.sh: what the watch-* tests share (sourced after lib.sh).
#
# watch_require MNT   exit 77 unless MNT's daemon (just mounted, its log in
#                     ACCEL_LOG) runs a fanotify watcher (root, kernel >= 5.9,
#                     a local SOURCE with file handles);
# wcount MNT KEY      a counter of MNT's watcher from `accel stat --json`
#                     (watch_events, watch_invalidations, watch_overflows) or
#                     its mode (watch);
# wcount_reach MNT KEY MIN   waits up to 1 s (the watcher publishes its
#                     counters at most every 200 ms) for counter KEY of MNT
#                     to reach MIN; sets WCOUNT to its last value; status 1
#                     if it did not;
# wait_for BOUND_MS EXPECT CMD...  runs CMD every 10 ms until its output is
#                     EXPECT; fails after BOUND_MS; sets WAITED_MS.

watch_require() {
	local mode
	wait_for 5000 fanotify wcount "$1" watch
	mode=$(wcount "$1" watch)
	if [ "$mode" != fanotify ]; then
		echo "SKIP: no fanotify watcher here (mode '$mode'):"
		grep -F 'watch:' "$ACCEL_LOG"
		exit 77
	fi
}

wcount() {
	"$ACCEL" stat --pool "$POOL" --json 2>/dev/null |
		grep -F "\"mountpoint\": \"$1\"" |
		sed -n "s/.*\"$2\": \"\{0,1\}\([^,\"}]*\).*/\1/p"
}

wcount_reach() {
	local _
	for _ in $(seq 100); do
		WCOUNT=$(wcount "$1" "$2")
		[ "${WCOUNT:-0}" -ge "$3" ] && return 0
		sleep 0.01
	done
	return 1
}

wait_for() {
	local bound=$1 expect=$2 got t0 now
	shift 2
	t0=$(date +%s%N)
	while :; do
		got=$("$@" 2>/dev/null)
		now=$(date +%s%N)
		WAITED_MS=$(((now - t0) / 1000000))
		[ "$got" = "$expect" ] && return 0
		[ "$WAITED_MS" -lt "$bound" ] || return 1
		sleep 0.01
	done
}
