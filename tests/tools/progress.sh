#!/bin/bash
# SPDX-License-Identifier: MIT
# progress.sh - the progress line of the long operations (tools/progress.c):
# convert, warm, report, pool --recover and defrag draw "WHAT [###  ] N%..."
# on standard error, rewritten in place with \r, when it is a terminal (run
# here on a pseudo-terminal, python's pty module), and print not a byte of
# it when standard error is a pipe; the line is wiped before the command's
# own output, which is the same either way. defrag's part needs root and a
# loop device (said, and left out, without them).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

command -v python3 >/dev/null || skip "python3 is not installed (the pseudo-terminal)"

# onpty CMD...: run CMD with stdin, stdout and stderr on a new pseudo-terminal;
# its output (both streams) on stdout, its exit status as ours
onpty() {
	python3 -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st))' "$@"
}

# check WHAT PATTERN CMD...: on a terminal the line of WHAT is drawn and wiped,
# and the output matches PATTERN; piped, the same output without any of it
check() {
	local what=$1 pattern=$2 tty piped
	shift 2
	tty=$(onpty "$@") || fail "$* on a terminal: exit $?: $tty"
	grep -q $'\r\e\\[K'"$what " <<<"$tty" || fail "$what: no progress line on a terminal: $(cat -A <<<"$tty")"
	grep -q $'\r\e\\[K'"$what .*"$'\r\e\\[K' <<<"$tty" ||
		fail "$what: the line is not wiped: $(cat -A <<<"$tty")"
	grep -q "$pattern" <<<"$tty" || fail "$what: output on a terminal: $(cat -A <<<"$tty")"
	piped=$("$@" 2>&1 | cat) || fail "$* piped: $piped"
	grep -q $'\r' <<<"$piped" && fail "$what: progress written to a pipe: $(cat -A <<<"$piped")"
	grep -q "$pattern" <<<"$piped" || fail "$what: output piped: $piped"
}

head -c $((6 << 20)) /dev/urandom >"$T/f"
check convert "$T/f -> $T/f: 6.0 MiB copied and verified" "$ACCEL" convert --replace "$T/f"
tty=$(onpty "$ACCEL" convert "$T/f" "$T/out")
grep -Eq 'convert \[[# ]{20}\] +[0-9]+%  [0-9.]+ (B|KiB|MiB)/6\.0 MiB' <<<"$tty" ||
	fail "convert's line: $(cat -A <<<"$tty")"
ok "convert: a progress line on a terminal only"

newpool progress
head -c 65536 /dev/urandom >"$T/A"
"$WORKLOAD" "$POOL" 64 4096 "$T/A:0:1:0" >/dev/null || fail "pool_workload"
check warm "warmed 2 of 2 file(s)" "$ACCEL" warm --pool "$POOL" "$T/f" "$T/A"
check report "$T/A" "$ACCEL" report --pool "$POOL"
check "pool --recover" "pool $POOL: 0 deferred buffers written back, 0 dropped" \
	"$ACCEL" pool --recover "$POOL"
ok "warm, report, pool --recover: a progress line on a terminal only"

if [ "$(id -u)" -ne 0 ] || ! command -v mkfs.ext4 >/dev/null || [ ! -e /dev/loop-control ]; then
	echo "# defrag left out: needs root, mkfs.ext4 and loop devices"
	exit 0
fi
mkext4 64
fragment 16 65536 "$MNT/a" "$MNT/b"
check defrag "total: 1 file: " "$ACCEL" defrag "$MNT/a"
ok "defrag: the same line, on a terminal only"
