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
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap 'rc=$?; fair_cleanup; (exit $rc); accel_cleanup' EXIT
accel_require_fuse
command -v setpriv >/dev/null || skip "setpriv is not installed"
# the system python3: nobody cannot run a python of root's (pyenv shims)
PY=/usr/bin/python3
[ -x $PY ] || skip "$PY is needed"
case=${1:?usage: fair-wait.sh lease|lock|fifo|fds}

OLD_LBT=""
fair_cleanup() {
	[ -n "$OLD_LBT" ] && echo "$OLD_LBT" >/proc/sys/fs/lease-break-time
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
for i in $(seq 40); do echo "$i" >"$base/src/her/n$i"; done
if [ "$case" = fds ]; then
	ulimit -n 256 || skip "cannot set RLIMIT_NOFILE"
fi
accel_mount "$base/src" "$base/mnt" -o allow_other,threads=2

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
elif action == "many":
    fds, errs = [], {}
    for i in range(1, 41):
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

"case_$case"
