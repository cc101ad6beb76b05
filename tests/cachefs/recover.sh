#!/bin/bash
# SPDX-License-Identifier: MIT
# recover.sh CASE: a SIGKILLed daemon's deferred bytes (issue 15 item 7, I9 in
# cache/pool_layout.h). A writer rewrites the 1,000 records of 128 bytes of
# a file (8 buckets of 16 KiB) through a mount with deferred write and
# flush_interval=60 (nothing reaches SOURCE), keeps it open, and the daemon
# is killed with -9. Then:
#   remount   a new daemon on the pool writes every record back to SOURCE
#             (dirty_recovered, one log line naming the file), dirty_lost 0;
#   tool      no mount: `accel pool --recover POOL` does it, one line per file;
#   replaced  the file is replaced in SOURCE (a new file renamed over its
#             name) before the remount: the buffers are dropped (dirty_lost,
#             a log line with the reason), the new file is untouched;
#   reused    the file is deleted and its inode number handed to a new file
#             before `accel pool --recover`: dropped, the new file untouched
#             (SOURCE on a journaled ext4 of its own, which hands the number
#             out again; skipped if the file system gives out no old number);
#   shared    a pool with pool_mode=0660: its handles are not trusted, so
#             the buffers are dropped with that reason (docs/security.md);
#   open, truncate  a live peer mounted before the kill (its flusher would
#             take 4 minutes), SOURCE's file touched meanwhile: the peer's
#             open of the file, or its truncate(2) by path (as nobody, in a
#             directory nobody may write: recovery runs with the daemon's
#             rights), writes the records back first;
#   append    shared=on: 40 records appended (O_APPEND) and deferred, the
#             daemon killed, another writer appends one record to SOURCE
#             (another host): the remount appends ours after it, in order,
#             where the old recovery wrote them at their offsets, over it;
#   append-cut  the same, but the writer's fsync sends the 40 and SOURCE
#             takes only 20 (the daemon's RLIMIT_FSIZE, set with prlimit):
#             fsync fails, the daemon is killed, and the remount appends
#             the 20 left once, after the other writer's record; the old
#             daemon died of SIGXFSZ and its recovery appended all 40 again.
set -u
. "$(dirname "$0")/lib.sh"
case=${1:?usage: recover.sh remount|tool|replaced|reused|shared|open|truncate|append|append-cut}
cfs_init
cfs_pool rec
command -v python3 >/dev/null || skip "python3 is needed to drive record I/O"
[ -x "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
opts="kernel_cache=never,attr_timeout=0,entry_timeout=0,pool=$POOL,bucket_size=16K"
opts="$opts,flush_interval=60"
N=1000
mkdir mA mB

rec() { # old PATH N | hold PATH N READY: rewrite them, stay open until ./stop | check PATH N
	python3 - "$@" <<'PY'
import os, sys, time
def r(i, v=0): return b"%0127d\n" % (i + v * 10**9)  # 128 bytes: none crosses a bucket
cmd, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if cmd == "old":
    open(path, "wb").write(b"".join(r(i, 1) for i in range(n)))
elif cmd in ("append", "append-fsync"):  # @n records appended, held open until ./stop
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    for i in range(n): os.write(fd, r(i, 2))
    res = "no fsync"
    if cmd == "append-fsync":
        try:
            os.fsync(fd); res = "fsync succeeded"
        except OSError as e:
            res = "fsync failed: " + os.strerror(e.errno)
    open(sys.argv[4], "w").write(res)
    for _ in range(400):
        if os.path.exists("stop"): break
        time.sleep(0.05)
elif cmd == "appended":  # 3 old, [@cut of ours,] 1 of another host, then the rest of @n
    cut = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    ours = [r(i, 2) for i in range(n)]
    want = b"".join(r(i, 1) for i in range(3)) + b"".join(ours[:cut]) + r(7, 3) + \
        b"".join(ours[cut:])
    got = open(path, "rb").read()
    assert got == want, f"{path}: {len(got)} bytes, want {len(want)}; the other " \
        f"writer's record {'kept' if r(7, 3) in got else 'overwritten'}"
elif cmd == "hold":  # every record rewritten in place, backwards (a sequential
    fd = os.open(path, os.O_WRONLY)  # writer's full buckets are flushed at once)
    for i in reversed(range(n)): os.pwrite(fd, r(i), i * 128)
    open(sys.argv[4], "w").close()
    for _ in range(400):
        if os.path.exists("stop"): break
        time.sleep(0.05)
else:
    got, want = open(path, "rb").read(), b"".join(r(i) for i in range(n))
    assert got == want, f"{path}: {len(got)} bytes, want {len(want)}; first diff at " + \
        str(next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), None))
PY
}

# write_and_kill [OPTS]: the writer's records are in the pool only; kill -9.
write_and_kill() {
	accel_mount "$PWD/src" "$PWD/mA" -o "$opts${1:+,$1}"
	local victim=$ACCEL_PID
	rec old src/F $N
	cfs_bg rec hold mA/F $N ready
	for _ in $(seq 200); do [ -e ready ] && break; sleep 0.05; done
	[ -e ready ] || fail "the writer did not get through its records"
	[ "$(pstat flush_writes)" = 0 ] || fail "$(pstat flush_writes) flushes: SOURCE has some"
	[ "$(pstat dirty_lost)" = 0 ] || fail "dirty_lost before any daemon died"
	cfs_kill9 "$PWD/mA" "$victim"
	touch stop
	wait "$CFS_BG" 2>/dev/null
	rec check src/F $N 2>/dev/null && fail "SOURCE has every record before any recovery"
	return 0
}

# remount_b [OPTS]: a new daemon on the pool; its first answer comes after its recovery.
remount_b() {
	accel_mount "$PWD/src" "$PWD/mB" -o "$opts${1:+,$1}"
	ls mB >/dev/null || fail "the new mount does not answer"
}

case_remount() {
	write_and_kill
	remount_b
	rec check src/F $N || fail "a dead daemon's deferred records are not on SOURCE"
	rec check mB/F $N || fail "the new mount reads the records wrong"
	[ "$(pstat dirty_lost)" = 0 ] || fail "dirty_lost $(pstat dirty_lost): buffers were dropped"
	[ "$(pstat dirty_recovered)" -ge 1 ] || fail "dirty_recovered not counted"
	grep -q "src/F (dev .*deferred buffers of a daemon that died written back" "$ACCEL_LOG" ||
		fail "no log line naming the file: $(cat "$ACCEL_LOG")"
	"$ACCEL" stat --pool "$POOL" | grep -q "[1-9][0-9]* buffers recovered, 0 buffers lost" ||
		fail "accel stat does not show the recovery: $("$ACCEL" stat --pool "$POOL")"
	echo "PASS: $(pstat dirty_recovered) buffers of a SIGKILLed daemon written back at remount"
}

case_tool() {
	local out
	write_and_kill
	out=$("$ACCEL" pool --recover "$POOL") || fail "accel pool --recover failed: $out"
	echo "$out"
	rec check src/F $N || fail "accel pool --recover did not put the records on SOURCE"
	grep -q "src/F (dev .*): [0-9]* buffers written back" <<<"$out" ||
		fail "no line naming the file"
	[ "$(pstat dirty_lost)" = 0 ] || fail "buffers were dropped"
	out=$("$ACCEL" pool --recover "$POOL") || fail "a second --recover failed: $out"
	grep -q ": 0 deferred buffers written back, 0 dropped" <<<"$out" ||
		fail "a second --recover found something: $out"
	echo "PASS: accel pool --recover wrote $(pstat dirty_recovered) buffers back, no mount"
}

# check_dropped CONTENT WHY LOG: the new file untouched, buffers dropped and said so.
check_dropped() {
	[ "$(cat src/F)" = "$1" ] || fail "the new file was changed: $(head -c 80 src/F)"
	[ "$(pstat dirty_lost)" -ge 1 ] || fail "dirty_lost not counted"
	[ "$(pstat dirty_recovered)" = 0 ] || fail "buffers were written back to another file"
	grep -q "src/F (dev .*buffers.* dropped: $2" "$3" ||
		fail "no log line naming the file and the reason: $(cat "$3")"
}

case_replaced() {
	write_and_kill
	echo "a new file" >src/F.new
	mv src/F.new src/F
	remount_b
	sleep 0.5
	check_dropped "a new file" "the file is gone" "$ACCEL_LOG"
	[ "$(cat mB/F)" = "a new file" ] || fail "the new mount serves the dead daemon's bytes"
	echo "PASS: file replaced in SOURCE: $(pstat dirty_lost) buffers dropped, new file untouched"
}

case_reused() {
	local ino i out
	# ext4 without a journal (this machine's root) skips the numbers freed in
	# the last minute (recently_deleted()); with one, a freed number is handed
	# out again, and no other test's files compete for it
	cfs_ext4_src 32M || echo "$CFS_WHY: SOURCE on $(df -T src | awk 'NR==2{print $2}')"
	write_and_kill
	ino=$(stat -c %i src/F)
	rm src/F
	# ext4 hands out the lowest free number of the group: make files until
	# one gets it
	i=$(python3 - "$ino" <<'PY'
import os, sys
want, made = int(sys.argv[1]), []
for i in range(3000):
    p = f"src/n{i}"
    open(p, "w").write(f"new {i}\n")
    if os.stat(p).st_ino == want:
        print(i)
        break
    made.append(p)
for p in made: os.unlink(p)
PY
)
	[ -n "$i" ] || skip "$(df -T src | awk 'NR==2{print $2}') did not reuse inode $ino"
	mv "src/n$i" src/F
	out=$("$ACCEL" pool --recover "$POOL") || fail "accel pool --recover failed: $out"
	echo "$out" >tool.out
	check_dropped "new $i" "the file is gone" tool.out
	echo "PASS: inode $ino reused by a new file: $(pstat dirty_lost) buffers dropped, untouched"
}

case_shared() {
	write_and_kill pool_mode=0660
	remount_b pool_mode=0660
	sleep 0.5
	rec check src/F $N 2>/dev/null && fail "buffers of a group-writable pool were written back"
	check_dropped "$(cat src/F)" "the pool is writable by others" "$ACCEL_LOG"
	echo "PASS: a group-writable pool's file handles are not used; buffers dropped and logged"
}

# peer_after_kill: mB mounted first, then write_and_kill on mA, SOURCE touched.
peer_after_kill() {
	accel_mount "$PWD/src" "$PWD/mB" -o "$opts,allow_other"
	peer_log=$ACCEL_LOG
	write_and_kill
	touch src/F # the same file, another mtime: an open must look at the slot
}

case_open() {
	peer_after_kill
	cat mB/F >/dev/null || fail "cannot read through the peer"
	rec check src/F $N || fail "the peer's open did not write the records back"
	grep -q "src/F (dev .*written back" "$peer_log" || fail "no log line: $(cat "$peer_log")"
	echo "PASS: a live peer's open wrote $(pstat dirty_recovered) buffers back"
}

case_append() {
	accel_mount "$PWD/src" "$PWD/mA" -o "$opts,shared=on"
	local victim=$ACCEL_PID
	accel_log_wait "shared mode: on" 30 || fail "shared=on is not in force: $(cat "$ACCEL_LOG")"
	rec old src/F 3
	cfs_bg rec append mA/F 40 ready
	for _ in $(seq 200); do [ -e ready ] && break; sleep 0.05; done
	[ -e ready ] || fail "the appender did not get through its records"
	[ "$(pstat deferred_writes)" -ge 40 ] || fail "$(pstat deferred_writes) appends deferred"
	[ "$(stat -c %s src/F)" = $((3 * 128)) ] || fail "SOURCE has some appends before the kill"
	cfs_kill9 "$PWD/mA" "$victim"
	touch stop
	wait "$CFS_BG" 2>/dev/null
	printf '%0127d\n' 3000000007 >>src/F # another host's record, where ours were to go
	remount_b shared=on
	rec appended src/F 40 || fail "a dead daemon's appends were not put after another host's"
	[ "$(pstat dirty_lost)" = 0 ] || fail "dirty_lost $(pstat dirty_lost): appends dropped"
	echo "PASS: a SIGKILLed daemon's 40 deferred appends went after another writer's record"
}

case_append_cut() {
	command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
	accel_mount "$PWD/src" "$PWD/mA" -o "$opts,shared=on"
	local victim=$ACCEL_PID
	accel_log_wait "shared mode: on" 30 || fail "shared=on is not in force: $(cat "$ACCEL_LOG")"
	rec old src/F 3
	# SOURCE takes 20 of the 40 records the fsync sends, then EFBIG
	prlimit --pid "$victim" --fsize=$(((3 + 20) * 128)) || fail "prlimit on the daemon failed"
	cfs_bg rec append-fsync mA/F 40 ready
	for _ in $(seq 200); do [ -s ready ] && break; sleep 0.05; done
	[ -s ready ] || fail "the appender did not get through its records and fsync"
	grep -q "fsync failed" ready || fail "the writer's fsync: $(cat ready), want it to fail"
	kill -0 "$victim" 2>/dev/null || fail "the daemon died of the limit (SIGXFSZ)"
	[ "$(stat -c %s src/F)" = $(((3 + 20) * 128)) ] ||
		fail "SOURCE has $(stat -c %s src/F) bytes, want the first 20 appends there"
	cfs_kill9 "$PWD/mA" "$victim"
	touch stop
	wait "$CFS_BG" 2>/dev/null
	printf '%0127d\n' 3000000007 >>src/F # another host's record after the 20
	remount_b shared=on
	rec appended src/F 40 20 || fail "the 20 appends left were not put once after another host's"
	[ "$(pstat dirty_lost)" = 0 ] || fail "dirty_lost $(pstat dirty_lost): appends dropped"
	echo "PASS: a flush cut after 20 of 40 appends, then kill -9: the other 20 appended once"
}

case_truncate() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	command -v perl >/dev/null || skip "perl is not installed"
	peer_after_kill
	chmod 666 src/F
	# perl's truncate(NAME) is truncate(2): no open, a SETATTR without a handle
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		perl -e 'truncate($ARGV[0], $ARGV[1]) or die "truncate: $!\n"' mB/F $((N * 128)) ||
		fail "truncate(2) by path through the peer failed"
	rec check src/F $N || fail "the peer's truncate did not write the records back"
	grep -q "src/F (dev .*written back" "$peer_log" || fail "no log line: $(cat "$peer_log")"
	echo "PASS: a live peer's truncate(2), as nobody, wrote $(pstat dirty_recovered) buffers back"
}

"case_${case//-/_}"
