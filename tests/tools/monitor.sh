#!/bin/bash
# SPDX-License-Identifier: MIT
# monitor.sh - accel monitor in a real terminal: a detached tmux session of
# 80x24 runs it against the known workload of stat.sh; the screen must show
# the file and the same totals as accel stat --json for the same state, CUR
# and MAX must move when more reads happen, every key must do its job, a
# resize must redraw for the new size, and q, SIGINT and SIGTERM must leave
# the terminal restored (alternate screen off, shell prompt back).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

. "$(dirname "$0")/../lib/tmux.sh"
trap '"${TM[@]}" kill-server 2>/dev/null; pool_cleanup' EXIT

newpool mon
head -c 32768 /dev/urandom >"$T/A"
head -c 16384 /dev/urandom >"$T/B"
hold "$POOL" 64 4096 "$T/A:0:2:0" "$T/A:16:2:0" "$T/B:0:1:2"

tmux_start 80 24 "env PS1='prompt\$ ' TERM=tmux-256color bash --norc --noprofile"

alt() { "${TM[@]}" display -p -t mon '#{alternate_on}'; }
# wait_exit: until accel monitor ended and the alternate screen is off
wait_exit() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(alt)" = 0 ] && screen | grep -Eq '^prompt\$ ?$' && return 0
		sleep 0.1
	done
	fail "terminal not restored (alternate_on=$(alt)):"$'\n'"$(screen)"
}
# last_rc: the exit status of the last command in the pane
last_rc() {
	keys "r=\$?; clear; echo rc=\$r" Enter
	wait_screen '^rc=[0-9]+$' "rc"
	screen | sed -n 's/^rc=\([0-9]*\)$/\1/p'
}
stat_json() {
	"$ACCEL" stat --json --pool "$POOL" >"$T/j" || fail "accel stat failed"
}
# totals_of PATH: the Totals line monitor must show, from accel stat --json
totals_of() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
f = [f for f in j["files"] if f["path"] == sys.argv[2]][0]
c = f["counters"]
print("local hits %d/%d \\(%s %%\\)   global hits %d/%d \\(%.2f %%\\)" % (c["local_hits"],
      c["local_attempts"], "-" if f["local_hit_pct"] is None else "%.2f" % f["local_hit_pct"],
      c["global_hits"], c["global_attempts"], f["global_hit_pct"]))
print("reads %d  writes %d  read share %.1f %%  backend reads %d" % (f["reads"], f["writes"],
      f["read_share_pct"], c["backend_reads"]))' "$T/j" "$1"
}

wait_screen '^prompt\$ ?$' "shell prompt"
keys "clear; $ACCEL monitor --pool $POOL --file $T/A --interval 0.5" Enter
wait_screen "^\(File\) $T/A +Active Streams: 2$"
[ "$(alt)" = 1 ] || fail "monitor did not switch to the alternate screen"
screen | grep -Eq '^ +accelfs CACHE STATISTICS   on node .+ [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$' ||
	fail "title line:"$'\n'"$(screen)"
screen | grep -q '^                                CUR      AVE      MIN      MAX$' ||
	fail "column header not where MONITOR puts it"
stat_json
mapfile -t want < <(totals_of "$T/A")
wait_screen "^  Totals   ${want[0]}\$" "Totals (from accel stat: ${want[0]})"
wait_screen "^           ${want[1]}\$" "Totals line 2"
# (paths longer than the column keep their tail after "...")
wait_screen "^ +0\.00 +32 +50\.0 +66\.7 +100\.0 +0 +8 +2 G ($T|\.\.\..*)/A\$" "hot row of A"
wait_screen "^ +0\.00 +6 +- +0\.0 +66\.7 +0 +2 +1   ($T|\.\.\..*)/B\$" "hot row of B"
[ "$(screen | wc -l)" -eq 24 ] && screen | tail -1 | grep -q '^q quit' || fail "80x24 layout"
ok "screen agrees with accel stat: file, active streams, totals, hot files"

# 8 more reads of A, all global hits: the intervals must show them.
"$WORKLOAD" "$POOL" 64 4096 "$T/A:0:1:0" >/dev/null || fail "second workload"
wait_screen '^  Global Cache Hit Percent +[0-9.]+ +[0-9.]+ +0\.00 +100\.00$' "MAX 100 % of global hits"
stat_json
mapfile -t want < <(totals_of "$T/A")
wait_screen "^  Totals   ${want[0]}\$" "Totals after more reads (${want[0]})"
[[ ${want[0]} == *"global hits 24/32"* ]] || fail "stat after more reads: ${want[0]}"
wait_screen '^  Global Cache Attempt Rate +0\.00 +[0-9.]*[1-9][0-9.]* +0\.00 +[0-9.]*[1-9]' \
	"AVE and MAX of the attempt rate moving, CUR back to 0"
ok "CUR/AVE/MIN/MAX follow new reads; totals still agree"

"${TM[@]}" resize-window -t mon -x 100 -y 30
wait_screen '^ {20}accelfs CACHE STATISTICS' "title centred for 100 columns"
[ "$(screen | wc -l)" -eq 30 ] && screen | tail -1 | grep -q '^q quit' ||
	fail "no redraw at 100x30:"$'\n'"$(screen)"
"${TM[@]}" resize-window -t mon -x 50 -y 10
wait_screen '^this window is 50x10 \(q quits\)$' "too-small message"
"${TM[@]}" resize-window -t mon -x 80 -y 24
wait_screen '^ {10}accelfs CACHE STATISTICS' "back at 80x24"
ok "resize redraws (100x30, too small, 80x24)"

keys h
wait_screen '^q quit  f pick file  s sort: IO/s IOs GHIT% READ% path  p pause  \+/- interval$' "help line"
keys h s
wait_screen '^Hot files by IOs: ' "sort key IOs"
keys s s s s
wait_screen '^Hot files by IO/s: ' "sort keys cycling back"
keys p
wait_screen '\[PAUSED, every 0\.5 s\]$' "pause"
keys p +
wait_screen '\[sampling every 1 s\]$' "+ to 1 s"
keys -
wait_screen '\[sampling every 0\.5 s\]$' "- back to 0.5 s"
keys f
wait_screen '^Choose what to monitor \(Enter\), Esc to go back: 2 files' "picker"
keys Down Down Enter
wait_screen "^\(File\) $T/B +Active Streams: 1$" "B chosen in the picker"
keys f Enter
wait_screen "^\(Pool\) $POOL +Active Streams: 3$" "the pool chosen in the picker"
ok "keys: help, sort, pause, interval, file picker"

keys q
wait_exit
rc=$(last_rc)
[ "$rc" = 0 ] || fail "q: exit status $rc"
ok "q restores the terminal, exit 0"

keys "clear; $ACCEL monitor --pool $POOL" Enter
wait_screen "^\(Pool\) $POOL"
keys C-c
wait_exit
rc=$(last_rc)
[ "$rc" = 130 ] || fail "SIGINT: exit status $rc"
keys "clear; $ACCEL monitor --pool $POOL" Enter
wait_screen "^\(Pool\) $POOL"
pid=$(ps -o pid= --ppid "$("${TM[@]}" display -p -t mon '#{pane_pid}')" | tr -d ' ')
[ -n "$pid" ] || fail "cannot find the monitor's pid"
kill -TERM "$pid"
wait_exit
rc=$(last_rc)
[ "$rc" = 143 ] || fail "SIGTERM: exit status $rc"
ok "SIGINT and SIGTERM restore the terminal (exit 130, 143)"
