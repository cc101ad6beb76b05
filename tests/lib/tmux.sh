# SPDX-License-Identifier: MIT
# tests/lib/tmux.sh: a full-screen program in a real terminal, for tests of
# accel monitor: a tmux server of the test's own (TM, the command to reach
# it) with one session "mon". Source it after report.sh (skip, fail); the
# test's EXIT trap must run "${TM[@]}" kill-server.
#
# tmux_start COLS LINES CMD  the session, COLS x LINES, running CMD (77 when
#                            tmux is missing or cannot start a session here)
# screen                     the text on the screen now
# keys KEY...                type KEYs (tmux send-keys names)
# wait_screen ERE [WHAT]     until the screen shows ERE (10 s), else fail

TM=(tmux -L "accel-test-$$" -f /dev/null)

tmux_start() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	"${TM[@]}" new-session -d -s mon -x "$1" -y "$2" "$3" ||
		skip "tmux cannot start a session here"
}

screen() { "${TM[@]}" capture-pane -p -t mon; }
keys() { "${TM[@]}" send-keys -t mon "$@"; }

wait_screen() {
	local i
	for ((i = 0; i < 100; i++)); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	fail "${2:-screen} never showed /$1/:"$'\n'"$(screen)"
}
