#!/bin/bash
# SPDX-License-Identifier: MIT
# fair-wait.sh CASE: one user cannot make every other user's requests wait
# (issue 27): what makes a request wait long is finished outside the
# daemon's workers (fuse/slow.c). The mount has 2 workers and allow_other;
# while user nobody holds more waits than that, root's read of another file
# and a create must finish within 1 s (each took the whole wait before).
#   lease   nobody holds a write lease on her own file in SOURCE (ignoring
#           SIGIO, so the break takes fs.lease-break-time, set to 6 s); four
#           opens of it through the mount wait for the break
#   lock    nobody holds an fcntl lock through the mount; four processes of
#           hers wait for it in F_SETLKW; one of them is interrupted by a
#           signal (its wait ends with EINTR at once), one is killed (it
#           goes); when the holder is killed, a waiter gets the lock
#   fifo    four readers open a FIFO through the mount (the kernel opens
#           FIFOs itself; nothing reaches a worker)
#   fds     the daemon runs with RLIMIT_NOFILE 256, so a user's share of its
#           descriptors for open files is 256 / 2 / 4 = 32: nobody's 40
#           opens held at once get 32 descriptors and EMFILE after, with a
#           log line; root still opens and creates
#   stall   a FUSE file system below SOURCE (another accelfs) stops
#           answering (SIGSTOP): nobody's four lookups in it block, one in a
#           worker (her share of 2 workers) and three parked; root's read
#           and create, and another user's read, finish within 1 s; a
#           parked lookup whose process is killed goes at once; after
#           SIGCONT every lookup finishes
#   parked  nobody runs three fsx exercisers at once (2 workers: her share
#           is one), so most of her requests of every kind wait parked, their
#           arguments copied: each exerciser's reads see its model, and
#           accel stat counts the parked requests
#   pool    a pool of 64 file slots (global_cache=4M), so a user may hold 16:
#           nobody's 70 opens held at once all succeed, 16 cached and the
#           rest served from SOURCE, with a log line; root's open of another
#           file still gets a slot (17 active streams in accel pool)
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap 'rc=$?; fair_cleanup; (exit $rc); accel_cleanup' EXIT
accel_require_fuse
command -v setpriv >/dev/null || skip "setpriv is not installed"
# the system python3: nobody cannot run a python of root's (pyenv shims)
PY=/usr/bin/python3
[ -x $PY ] || skip "$PY is needed"
case=${1:?usage: fair-wait.sh lease|lock|fifo|fds|pool|stall|parked}

OLD_LBT=""
INNER_PID=""
fair_cleanup() {
	[ -n "$OLD_LBT" ] && echo "$OLD_LBT" >/proc/sys/fs/lease-break-time
	[ -n "$INNER_PID" ] && kill -CONT "$INNER_PID" 2>/dev/null
	pkill -f "fair-wait-$$" 2>/dev/null
	true
}

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt" "$base/src/her"
chown 65534:65534 "$base/src/her"
echo other >"$base/src/other"
echo "lease" >"$base/src/her/f"
chown 65534:65534 "$base/src/her/f"
mkfifo -m 666 "$base/src/her/fifo"
for i in $(seq 70); do echo "$i" >"$base/src/her/n$i"; done
extra=""
if [ "$case" = fds ]; then
	ulimit -n 256 || skip "cannot set RLIMIT_NOFILE"
fi
if [ "$case" = pool ]; then
	[ -n "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
	POOL=/accel-fair-$$
	extra=",pool=$POOL,global_cache=4M,pool_keep=no"
fi
accel_mount "$base/src" "$base/mnt" -o "allow_other,threads=2$extra"

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# other_users_ok WHAT: root reads another file and creates one within 1 s
other_users_ok() {
	local t0 t1 ms
	t0=$(date +%s%N)
	timeout 10 cat "$base/mnt/other" >/dev/null || fail "$1: root's read failed"
	timeout 10 touch "$base/mnt/new-$RANDOM" || fail "$1: root's create failed"
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	echo "$1: root's read and create took $ms ms"
	[ $ms -lt 1000 ] || fail "$1: other users waited $ms ms"
}

cat >"$base/helper.py" <<'EOF'
# helper.py TAG ACTION PATH: hold a lease or a lock, or wait for a lock
import fcntl, os, signal, sys, time
tag, action, path = sys.argv[1:4]
if action == "lease":
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    fd = os.open(path, os.O_RDWR)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    print("held", flush=True)
    time.sleep(60)
elif action == "hold":
    fd = os.open(path, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(60)
elif action in ("many", "many70"):
    fds, errs = [], {}
    for i in range(1, 41 if action == "many" else 71):
        try:
            fds.append(os.open("%s/n%d" % (path, i), os.O_RDONLY))
        except OSError as e:
            errs[e.strerror] = errs.get(e.strerror, 0) + 1
    print("opened %d %s" % (len(fds), errs), flush=True)
    time.sleep(float(sys.argv[4]))
elif action == "wait":
    def interrupted(*a):
        raise InterruptedError("signal")
    signal.signal(signal.SIGUSR1, interrupted)
    fd = os.open(path, os.O_RDWR)
    t = time.time()
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        print("got %.2f" % (time.time() - t), flush=True)
    except InterruptedError:
        print("interrupted %.2f" % (time.time() - t), flush=True)
EOF
py() { # ARGS...: the helper as nobody, named for fair_cleanup; $! is its pid
	exec setpriv --reuid=65534 --regid=65534 --clear-groups $PY "$base/helper.py" \
		"fair-wait-$$" "$@"
}

case_lease() {
	OLD_LBT=$(cat /proc/sys/fs/lease-break-time)
	echo 6 >/proc/sys/fs/lease-break-time
	py lease "$base/src/her/f" >"$base/lease.out" &
	for _ in $(seq 50); do grep -q held "$base/lease.out" && break; sleep 0.1; done
	grep -q held "$base/lease.out" || fail "nobody could not take a lease"
	for i in 1 2 3 4; do
		(as_nobody cat "$base/mnt/her/f" >/dev/null 2>&1 &)
	done
	sleep 0.5
	other_users_ok "4 opens waiting for a lease break"
	echo "PASS: a lease break holds no worker"
}

case_lock() {
	local w1 w2 w3
	py hold "$base/mnt/her/f" >"$base/hold.out" &
	local holder=$!
	for _ in $(seq 50); do grep -q held "$base/hold.out" && break; sleep 0.1; done
	grep -q held "$base/hold.out" || fail "nobody could not take the lock"
	py wait "$base/mnt/her/f" >"$base/w1.out" & w1=$!
	py wait "$base/mnt/her/f" >"$base/w2.out" & w2=$!
	py wait "$base/mnt/her/f" >"$base/w3.out" & w3=$!
	py wait "$base/mnt/her/f" >"$base/w4.out" &
	sleep 0.5
	other_users_ok "4 lock requests waiting"
	kill -USR1 "$w1"
	for _ in $(seq 30); do grep -q . "$base/w1.out" && break; sleep 0.1; done
	grep -q '^interrupted' "$base/w1.out" || fail "a signal did not end a lock wait: $(cat "$base/w1.out")"
	kill -9 "$w2" 2>/dev/null
	sleep 0.3
	for p in $(pgrep -f "fair-wait-$$ wait"); do
		case "$(ps -o stat= -p "$p" 2>/dev/null)" in
		D*) fail "a waiter is stuck in the kernel (D state)" ;;
		esac
	done
	kill -9 "$holder"
	for _ in $(seq 50); do grep -q got "$base/w3.out" "$base/w4.out" && break; sleep 0.1; done
	grep -q got "$base/w3.out" "$base/w4.out" || fail "no waiter got the lock after its holder was killed"
	echo "PASS: lock waits hold no worker; a signal ends one; a killed holder's lock goes"
}

case_fifo() {
	for i in 1 2 3 4; do
		(as_nobody timeout 5 cat "$base/mnt/her/fifo" >/dev/null 2>&1 &)
	done
	sleep 0.5
	other_users_ok "4 FIFO readers waiting"
	echo "PASS: FIFO readers hold no worker"
}

case_fds() {
	py many "$base/mnt/her" 8 >"$base/many.out" &
	for _ in $(seq 50); do grep -q opened "$base/many.out" && break; sleep 0.1; done
	cat "$base/many.out"
	grep -q "^opened 32 {'Too many open files': 8}" "$base/many.out" ||
		fail "nobody's 40 opens: $(cat "$base/many.out"), want 32 and 8 EMFILE"
	other_users_ok "nobody at her share of descriptors"
	grep -q "uid 65534 holds 32 of the daemon's descriptors" "$ACCEL_LOG" ||
		fail "no log line for the share: $(cat "$ACCEL_LOG")"
	echo "PASS: one user's opens stop at her share; root's still work"
}

case_pool() {
	py many70 "$base/mnt/her" 8 >"$base/many.out" &
	for _ in $(seq 50); do grep -q opened "$base/many.out" && break; sleep 0.1; done
	cat "$base/many.out"
	grep -q "^opened 70 {}" "$base/many.out" || fail "nobody's 70 opens: $(cat "$base/many.out")"
	exec 5<"$base/mnt/other"
	cat <&5 >/dev/null
	"$ACCEL" pool "$POOL" >"$base/pool.out" 2>&1 || fail "accel pool: $(cat "$base/pool.out")"
	exec 5<&-
	grep -q "uid 65534 has 16 cached files open" "$ACCEL_LOG" ||
		fail "no log line for the pool share: $(cat "$ACCEL_LOG")"
	# nobody's 16 and root's one (before: nobody's 64 and none for root)
	grep -q " 17 active streams" "$base/pool.out" ||
		fail "want 17 active streams (16 of nobody's, root's): $(cat "$base/pool.out")"
	echo "PASS: one user holds at most her share of the pool's file slots; root's open is cached"
}

case_stall() {
	local outer_log=$ACCEL_LOG i pids="" victim t0 ms
	mkdir "$base/inner" "$base/src/her/stall"
	for i in 1 2 3 4; do echo "$i" >"$base/inner/s$i"; done
	accel_mount "$base/inner" "$base/src/her/stall" -o allow_other,cache=off
	INNER_PID=$ACCEL_PID
	ACCEL_LOG=$outer_log
	stat "$base/mnt/her/stall" >/dev/null || fail "the stalling file system is not reachable"
	kill -STOP "$INNER_PID"
	for i in 1 2 3 4; do
		as_nobody stat -c "s$i ok" "$base/mnt/her/stall/s$i" >"$base/stall$i.out" 2>&1 &
		pids="$pids $!"
		victim=$!
		sleep 0.1
	done
	sleep 0.5
	other_users_ok "4 lookups blocked in a stopped file system below SOURCE"
	t0=$(date +%s%N)
	setpriv --reuid=1 --regid=1 --clear-groups timeout 10 cat "$base/mnt/other" >/dev/null ||
		fail "another user's read failed"
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "another user's read took $ms ms"
	[ $ms -lt 1000 ] || fail "another user waited $ms ms"
	# the last one is parked: killing its process answers it (EINTR) at once
	kill -9 "$victim"
	for _ in $(seq 20); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$victim" 2>/dev/null || fail "a killed process stays stuck in its parked lookup"
	kill -CONT "$INNER_PID"
	for p in $pids; do
		[ "$p" = "$victim" ] && continue
		timeout 10 tail --pid="$p" -f /dev/null || fail "a lookup did not finish after SIGCONT"
	done
	for i in 1 2 3; do
		grep -q "s$i ok" "$base/stall$i.out" || fail "nobody's lookup $i: $(cat "$base/stall$i.out")"
	done
	# published within MSTATE_PUBLISH_MS
	sleep 0.5
	"$ACCEL" stat --mount "$base/mnt" >"$base/stat.out" 2>&1 || fail "accel stat: $(cat "$base/stat.out")"
	grep -E -q "; ([3-9]|[1-9][0-9]+) waited for their user's share" "$base/stat.out" ||
		fail "accel stat does not count the 3 parked lookups: $(grep requests "$base/stat.out")"
	echo "PASS: a stalled file system below SOURCE holds one worker of nobody's; others are served"
}

case_parked() {
	local i pids="" rc=0
	[ -n "${FSX:-}" ] || fail "FSX is not set (run through meson test)"
	for i in 1 2 3; do
		mkdir "$base/src/her/x$i" && chown 65534:65534 "$base/src/her/x$i"
		as_nobody "$FSX" -N 3000 -S $((4200 + i)) "$base/mnt/her/x$i" >"$base/fsx$i.out" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || rc=1; done
	[ $rc = 0 ] || fail "an fsx of nobody's failed with parked requests: $(tail -5 "$base"/fsx*.out)"
	sleep 0.5
	"$ACCEL" stat --mount "$base/mnt" >"$base/stat.out" 2>&1 || fail "accel stat: $(cat "$base/stat.out")"
	grep requests "$base/stat.out"
	grep -E -q "; [1-9][0-9]* waited for their user's share" "$base/stat.out" ||
		fail "no request was parked: the test exercised nothing"
	echo "PASS: three exercisers of one user, her requests parked and run in order, data right"
}

"case_$case"
