#!/bin/bash
# SPDX-License-Identifier: MIT
# passthrough.sh CASE: per-file kernel passthrough (fuse/passthrough.c).
#   bypass  an open that needs nothing of the daemon goes to the kernel: 16 MiB
#           read and written through the mount, yet the daemon neither replies
#           with the data (its wchar) nor reads or writes SOURCE for it (pool
#           counters); the data is right; accel stat counts the opens
#   mmap    shared mappings of a passthrough file read and write SOURCE
#   mixed   one mount, two files: an untuned one (passthrough) and one whose
#           attribute asks for deferred write (daemon path, writes deferred);
#           both right on SOURCE
#   inode   one inode, one mode: with a passthrough handle open, an open the
#           file's attributes send to the daemon joins passthrough (the kernel
#           would fail it with EIO), and with a daemon-path handle open an
#           open the attributes send to the kernel stays on the daemon path
#           (counted as a fallback)
#   nocap   a daemon without CAP_SYS_ADMIN (root of a user namespace): the kernel refuses
#           the backing file; opens work, are served by the daemon, and count
#           as fallbacks; one warning
#   watch   with the fanotify watcher: a program's own writes through its
#           passthrough handle cost no invalidation (the kernel updated the
#           size itself; at most a few for 200 writes), sizes through the
#           mount stay right, and a write made in SOURCE by another process
#           while the handle is open is still seen through the mount
#   create  files created through the mount cost no flistxattr (a new file has
#           no tuning attributes) and no capget per passthrough open (read
#           once per worker thread); the files are right on SOURCE
#   fsx     the fsx exerciser on a passthrough=always mount, and opens counted
#   learn   passthrough=auto by observed use, on a mount whose deferred write
#           keeps files off passthrough by their attributes: after a bulk
#           sequential read served by the daemon, the next read-only open is
#           passed through (the daemon sends none of its bytes), and accel
#           stat --mount lists the file, why, and the count (text and JSON;
#           the list file is mode 0600, another user sees the count only);
#           a write through the daemon ends the verdict; of 16 opens on a
#           verdict the daemon serves one (a bulk read there: then one of 32),
#           and random 4 KiB reads there end it
#   learn_mix  the same mount, 24 rounds of writes (deferred, some while a
#           passed-through reader is open) and bulk reads of one file: every
#           read gives the bytes written so far, with opens passed through
#   learn_dirty  the guard of observed use: while another mount of the pool
#           holds deferred bytes of the file (its daemon stopped, so they stay
#           deferred), a read-only open that the verdict would pass through
#           is served by the daemon (passed through, it would read SOURCE
#           without them); once they are on SOURCE the next open is passed
#           through
#   probe   the USDT probes of those decisions (docs/probes.md), with
#           bpftrace: a bulk read's release fires passthrough_verdict bulk
#           with the bytes read, the next open passthrough_open by use with
#           its reason, a write's release passthrough_verdict not bulk
# Skips (77) without root, /dev/fuse, or a kernel/libfuse with passthrough.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
case=${1:?case}
cfs_init
cfs_pool pt
[ -x "${ACCEL:-}" ] || fail "ACCEL is not set (run through meson test)"
command -v python3 >/dev/null || skip "python3 is needed"
"$ACCELFS" --version | grep -q -- '+passthrough' ||
	skip "built without passthrough: $("$ACCELFS" --version)"
mkdir m
NOPT="writeback=off,deferred_write=off,pool=$POOL"

# pcount KEY: a pool-wide counter
pcount() { pstat "$1"; }

# wchar: bytes the daemon has written (to /dev/fuse: the replies).
wchar() { awk '/^wchar:/ { print $2 }' "/proc/$ACCEL_PID/io"; }

case_bypass() {
	head -c $((16 << 20)) /dev/urandom >src/r
	cfs_pt_mount "$NOPT"
	local w0 sum
	w0=$(wchar)
	sum=$(md5sum <m/r) || fail "read m/r"
	[ "$sum" = "$(md5sum <src/r)" ] || fail "m/r reads other bytes than SOURCE"
	[ $(($(wchar) - w0)) -lt $((1 << 20)) ] ||
		fail "reading 16 MiB made the daemon write $(($(wchar) - w0)) bytes: not passthrough"
	head -c $((16 << 20)) /dev/urandom >data
	dd if=data of=m/w bs=1M status=none conv=fsync || fail "write m/w"
	cmp data src/w || fail "SOURCE has other bytes than were written"
	[ "$(pcount backend_reads)" = 0 ] && [ "$(pcount backend_writes)" = 0 ] ||
		fail "the daemon did backend I/O: $(pstat | grep backend_)"
	[ "$(pcount opens_passthrough)" -ge 2 ] ||
		fail "opens_passthrough $(pcount opens_passthrough), want >= 2"
	[ "$(pcount passthrough_fallbacks)" = 0 ] || fail "fallbacks counted"
	"$ACCEL" stat --pool "${POOL#/}" | grep -Eq "passthrough +[0-9]+ opens, 0 fallbacks" ||
		fail "accel stat: $("$ACCEL" stat --pool "${POOL#/}" | grep passthrough)"
	"$ACCEL" stat --json --pool "${POOL#/}" | python3 -c '
import json, sys
c = json.load(sys.stdin)["pool"]["counters"]
assert c["opens_passthrough"] >= 2 and c["passthrough_fallbacks"] == 0, c' ||
		fail "accel stat --json lacks the passthrough counters"
	"$ACCEL" show m/w | grep -Eq "kernel passthrough +yes" || fail "accel show: $("$ACCEL" show m/w)"
	echo "PASS: 16 MiB read and written with the daemon out of the data path"
}

case_mmap() {
	head -c $((4 << 20)) /dev/urandom >src/f
	cfs_pt_mount "$NOPT"
	python3 - m/f <<'EOF' || fail "mmap through the mount"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[4096:4096 + 11] = b"hello world"
m[(4 << 20) - 3:] = b"end"
m.flush()
m.close()
os.close(fd)
EOF
	[ "$(dd if=src/f bs=1 skip=4096 count=11 status=none)" = "hello world" ] ||
		fail "a write through the mapping is not in SOURCE"
	[ "$(tail -c 3 src/f)" = end ] || fail "the last bytes written through the mapping"
	python3 -c 'import mmap,os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ)
assert m[4096:4107] == b"hello world", m[4096:4107]' m/f || fail "read through a mapping"
	[ "$(pcount opens_passthrough)" -ge 2 ] || fail "the mapped opens were not passthrough"
	[ "$(pcount backend_reads)" = 0 ] || fail "the daemon read SOURCE for a mapping"
	echo "PASS: shared mappings of a passthrough file read and write SOURCE"
}

small_writes() { python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
for i in range(300): os.write(fd, b"r%05d\n" % i)
os.close(fd)' "$1"; }

case_mixed() {
	: >src/P
	: >src/D
	"$ACCEL" set -q src/D --deferred-write=on || skip "SOURCE has no user extended attributes"
	cfs_pt_mount "$NOPT"
	"$ACCEL" show m/D | grep -q "no under passthrough=auto (deferred_write" ||
		fail "accel show D: $("$ACCEL" show m/D)"
	small_writes m/P && small_writes m/D || fail "small writes"
	[ "$(pstat -i "$(file_id src/D)" deferred_writes)" -gt 0 ] ||
		fail "D (deferred_write=on) deferred nothing"
	! "$POOLSTAT" "$POOL" -i "$(file_id src/P)" >/dev/null 2>&1 ||
		fail "P (passthrough) has a pool slot"
	[ "$(pcount opens_passthrough)" = 1 ] || fail "opens_passthrough $(pcount opens_passthrough)"
	python3 -c 'import sys
want = b"".join(b"r%05d\n" % i for i in range(300))
for f in sys.argv[1:]:
    assert open(f, "rb").read() == want, f' src/P src/D || fail "contents on SOURCE"
	echo "PASS: a passthrough file and a deferred-write file on one mount"
}

case_inode() {
	: >src/A
	: >src/B
	"$ACCEL" set -q src/B --passthrough=never || skip "SOURCE has no user extended attributes"
	cfs_pt_mount "$NOPT"
	exec 5<>m/A # passthrough
	"$ACCEL" set -q src/A --passthrough=never || fail "accel set A"
	echo one >m/A || fail "a second open of A, now passthrough=never, failed (EIO: modes mixed)"
	[ "$(pcount opens_passthrough)" = 2 ] || fail "the second open of A did not join passthrough"
	exec 5>&-
	exec 6<>m/B # daemon path
	"$ACCEL" set -q src/B --passthrough=always || fail "accel set B"
	echo two >m/B || fail "a second open of B, now passthrough=always, failed"
	[ "$(pcount passthrough_fallbacks)" = 1 ] ||
		fail "the second open of B: fallbacks $(pcount passthrough_fallbacks), want 1"
	[ "$(pcount opens_passthrough)" = 2 ] || fail "B went passthrough beside a daemon handle"
	exec 6>&-
	sleep 0.2 # the kernel's RELEASE of B is asynchronous
	echo three >m/B || fail "B alone"
	[ "$(pcount opens_passthrough)" = 3 ] || fail "B, no longer open, did not go passthrough"
	[ "$(cat src/A)" = one ] && [ "$(cat src/B)" = three ] || fail "contents"
	echo "PASS: each inode's handles stay on one path"
}

# A daemon that is root only in its own user namespace, as in an unprivileged
# container: it mounts (FUSE allows that) but lacks CAP_SYS_ADMIN where the
# kernel checks it for a backing file. The case re-runs itself inside.
case_nocap() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare --user --map-root-user --mount --propagation private true 2>/dev/null ||
		skip "cannot make a user namespace (kernel.unprivileged_userns_clone?)"
	unshare --user --map-root-user --mount --propagation private bash "$0" nocap_ns
}

case_nocap_ns() {
	head -c $((1 << 20)) /dev/urandom >src/f
	cfs_pt_mount "$NOPT"
	grep -q "lacks CAP_SYS_ADMIN" "$ACCEL_LOG" || fail "no warning: $(cat "$ACCEL_LOG")"
	[ "$(md5sum <m/f)" = "$(md5sum <src/f)" ] || fail "read m/f"
	{ echo appended >>m/f && echo new >m/g; } || fail "writes"
	[ "$(cat src/g)" = new ] && [ "$(tail -c 9 src/f)" = appended ] || fail "contents"
	[ "$(pcount opens_passthrough)" = 0 ] || fail "passthrough without CAP_SYS_ADMIN?"
	[ "$(pcount passthrough_fallbacks)" -ge 3 ] ||
		fail "fallbacks $(pcount passthrough_fallbacks), want >= 3"
	[ "$(grep -c "refused a backing file" "$ACCEL_LOG")" = 1 ] ||
		fail "want one warning of the refusal: $(cat "$ACCEL_LOG")"
	echo "PASS: without CAP_SYS_ADMIN opens fall back to the daemon, counted"
}

# Times set on an open passthrough file: kept when nothing is written after
# them (tar: write, futimens, close), moved by a later write as on a local
# file system (the daemon's re-application of kept times must not undo it).
case_times() {
	cfs_pt_mount "$NOPT"
	python3 - m/t m/u <<'EOF' || fail "times through the mount"
import os, sys
for path, more in ((sys.argv[1], False), (sys.argv[2], True)):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"data")
    os.utime(fd, (1000000000, 1000000000))
    if more:
        os.write(fd, b"more")
    os.close(fd)
EOF
	sleep 0.3 # RELEASE, where kept times would be set again, is asynchronous
	[ "$(stat -c %Y src/t)" = 1000000000 ] || fail "t: mtime $(stat -c %Y src/t), want 1000000000"
	[ "$(stat -c %Y src/u)" -gt 1000000000 ] || fail "u: a write after utime left the old mtime"
	[ "$(pcount opens_passthrough)" = 2 ] || fail "the opens were not passthrough"
	echo "PASS: times on passthrough files as on a local file system"
}

case_create() {
	local n=50 i lx cg
	cfs_pt_mount "$NOPT"
	for i in $(seq 8); do echo warm >"m/w$i"; done # every worker reads its capabilities
	cfs_strace trace flistxattr,capget
	for i in $(seq "$n"); do echo "file $i" >"m/f$i"; done
	cfs_strace_stop
	for i in $(seq "$n"); do
		[ "$(cat "src/f$i")" = "file $i" ] || fail "src/f$i: not what was written"
	done
	lx=$(grep -c 'flistxattr(' trace) cg=$(grep -c 'capget(' trace)
	echo "$n files created: $lx flistxattr, $cg capget"
	[ "$lx" = 0 ] || fail "$lx flistxattr for $n new files"
	[ "$cg" -le 8 ] || fail "$cg capget for $n passthrough opens: one per open"
	[ "$(pcount opens_passthrough)" -ge "$n" ] || fail "the creates were not passthrough"
	echo "PASS: creates read no attributes and no capabilities per open"
}

case_watch() {
	local i0 i1
	cfs_pt_mount "$NOPT,watch=auto"
	watch_require "$PWD/m"
	sleep 0.3 # counters are published at most every 200 ms
	i0=$(wcount "$PWD/m" watch_invalidations)
	python3 - "$PWD/m/w" "$PWD/src/w" <<'PY' || fail "writes through the passthrough handle"
import os, subprocess, sys, time
mnt, src = sys.argv[1], sys.argv[2]
fd = os.open(mnt, os.O_CREAT | os.O_WRONLY, 0o644)
for i in range(200):
    os.write(fd, b"x" * 100)
    time.sleep(0.005)  # one event at a time: none merged in fanotify's queue
    if i % 50 == 49:
        st = os.stat(mnt)
        assert st.st_size == (i + 1) * 100, (i, st.st_size)
# another process writes SOURCE while the handle is open
subprocess.run(["sh", "-c", f"printf outside >>'{src}'"], check=True)
for _ in range(500):
    if os.stat(mnt).st_size == 20007:
        break
    time.sleep(0.01)
else:
    sys.exit(f"outside append not seen through the mount: size {os.stat(mnt).st_size}")
os.close(fd)
PY
	sleep 0.5 # echoes of the own writes would come by now
	# the counters are published every 200 ms; a loaded machine may be later
	for _ in $(seq 50); do
		i1=$(wcount "$PWD/m" watch_invalidations)
		[ $((i1 - i0)) -lt 1 ] || break
		sleep 0.1
	done
	echo "200 writes through a passthrough handle and 1 in SOURCE: $((i1 - i0)) invalidations"
	[ $((i1 - i0)) -ge 1 ] || fail "the write made in SOURCE was not invalidated"
	[ $((i1 - i0)) -le 10 ] || fail "$((i1 - i0)) invalidations: the program's own writes came back"
	[ "$(pcount opens_passthrough)" -ge 1 ] || fail "the open was not passthrough"
	echo "PASS: own passthrough writes not echoed; an outside write still seen"
}

# state KEY: the daemon's published value of KEY (cache/mstate.h).
state() { awk -v k="$1" '$1 == k { print $2 }' "/run/accelfs/mount-$ACCEL_PID"; }

# reqs KIND: requests of KIND the daemon published it served.
reqs() { awk -v k="$1" '$1 == "req" && $2 == k { n = $3 } END { print n + 0 }' \
	"/run/accelfs/mount-$ACCEL_PID"; }

# wait_released N: until the daemon has published N opens and a RELEASE
# for each (the kernel sends RELEASE after close(2) returns).
wait_released() {
	local i
	for i in $(seq 100); do
		[ -f "/run/accelfs/mount-$ACCEL_PID" ] && [ "$(reqs open)" -ge "$1" ] &&
			[ "$(reqs open)" = "$(reqs release)" ] && return 0
		sleep 0.05
	done
	fail "the daemon did not release every handle: $(reqs open) opens, $(reqs release) releases"
}

# served WHAT CMD...: run CMD; true if the daemon sent >= 4 MiB of data for it.
served() {
	local w0
	w0=$(wchar)
	shift
	"$@" >/dev/null || fail "$*"
	[ $(($(wchar) - w0)) -ge $((4 << 20)) ]
}

md5_3() { md5sum <&3; } # no open of its own

case_learn() {
	head -c $((8 << 20)) /dev/urandom >src/f
	# deferred_write=on by default: the attribute rule keeps every file here
	cfs_pt_mount "writeback=off,pool=$POOL"
	served first md5sum m/f || fail "the first read was not served by the daemon"
	wait_released 1
	exec 3<m/f
	! served second md5_3 || fail "after a bulk read, the next open was not passed through"
	for i in $(seq 50); do
		[ "$(state passthrough_files)" = 1 ] && break
		sleep 0.05
	done
	[ "$(state passthrough_files)" = 1 ] || fail "passthrough_files $(state passthrough_files), want 1"
	[ "$(state passthrough_learned)" = 1 ] ||
		fail "passthrough_learned $(state passthrough_learned), want 1"
	"$ACCEL" stat --mount m >stat.out || fail "accel stat --mount m"
	grep -Eq "passthrough +1 file now; 1 open passed through by observed use" stat.out ||
		fail "accel stat: $(grep -A2 passthrough stat.out)"
	grep -Fq "auto: bulk sequential reads" stat.out && grep -Fq "$PWD/src/f" stat.out ||
		fail "accel stat does not list the file: $(grep -A2 passthrough stat.out)"
	"$ACCEL" stat --json --mount m | python3 -c '
import json, sys
m = json.load(sys.stdin)["mounts"][0]
assert m["passthrough_files"] == 1 and m["passthrough_learned"] == 1, m
assert m["passthrough"] == [{"why": "auto: bulk sequential reads", "path": sys.argv[1]}], m
' "$PWD/src/f" || fail "accel stat --json lacks the passthrough list"
	[ "$(stat -c %a "/run/accelfs/mount-$ACCEL_PID.passthrough")" = 600 ] ||
		fail "the list of files is not mode 0600"
	if command -v setpriv >/dev/null; then # another user sees the count, not the names
		setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR \
			"$ACCEL" stat --mount m >stat.other || fail "accel stat --mount m as nobody"
		grep -Fq "only the daemon's user may read that list" stat.other &&
			! grep -Fq "src/f" stat.other || fail "another user's accel stat: $(cat stat.other)"
	else
		echo "NOTE: setpriv is missing: the list's privacy is not checked"
	fi
	exec 3<&-
	wait_released 2
	# a write ends the verdict (fsync: nothing left deferred in the pool)
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY); os.pwrite(fd, b"x", 0); os.fsync(fd); os.close(fd)' m/f ||
		fail "write m/f"
	wait_released 3
	served third md5sum m/f || fail "after a write, the next open was passed through"
	wait_released 4
	# that read was bulk again: 15 opens on the verdict, the 16th to the daemon
	for i in $(seq 15); do # one at a time: an open before the last RELEASE joins it
		: <m/f || fail "open $i"
		wait_released $((4 + i))
	done
	[ "$(state passthrough_learned)" = 16 ] ||
		fail "passthrough_learned $(state passthrough_learned), want 16"
	served "16th" md5sum m/f || fail "the 16th open on the verdict was passed through"
	wait_released 20
	# confirmed: the daemon looks again after twice as many
	for i in $(seq 31); do
		: <m/f || fail "open $i"
		wait_released $((20 + i))
	done
	[ "$(state passthrough_learned)" = 47 ] ||
		fail "passthrough_learned $(state passthrough_learned), want 47 (16 + 31)"
	local r0
	r0=$(reqs read)
	python3 -c 'import os,random,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(64): os.pread(fd, 4096, random.randrange(1, 2047) * 4096)
os.close(fd)' m/f || fail "random reads"
	wait_released 52
	[ $(($(reqs read) - r0)) -ge 32 ] ||
		fail "the 32nd open was not served by the daemon ($(($(reqs read) - r0)) reads)"
	served fourth md5sum m/f || fail "after random reads, the next open was passed through"
	[ "$(md5sum <m/f)" = "$(md5sum <src/f)" ] || fail "m/f reads other bytes than SOURCE"
	echo "PASS: bulk readers passed through by observed use, listed; writes and random reads end it"
}

case_learn_mix() {
	head -c $((2 << 20)) /dev/urandom >src/f
	cp src/f model
	cfs_pt_mount "writeback=off,pool=$POOL"
	local r
	for r in $(seq 24); do
		cmp m/f model || fail "round $r: a read gave other bytes than were written"
		cmp m/f model || fail "round $r: the second read gave other bytes"
		if [ $((r % 3)) = 0 ]; then
			exec 3<m/f # passed through once a read was bulk; the writer joins it
		fi
		python3 -c 'import os,random,sys
off, n = random.randrange(0, 2 << 20), random.randrange(1, 300000)
data = os.urandom(n)
for p in sys.argv[1:]:
	fd = os.open(p, os.O_WRONLY); os.pwrite(fd, data, off); os.close(fd)' m/f model ||
			fail "round $r: write"
		cmp - model <&3 2>/dev/null || [ $((r % 3)) != 0 ] ||
			fail "round $r: the open reader read other bytes than were written"
		exec 3<&-
	done
	cmp src/f model || fail "SOURCE has other bytes than were written"
	for r in $(seq 50); do
		[ "$(state passthrough_learned)" -gt 0 ] && break
		sleep 0.05
	done
	echo "passed through by observed use: $(state passthrough_learned) opens"
	[ "$(state passthrough_learned)" -gt 0 ] || fail "no open was passed through by observed use"
	echo "PASS: 24 rounds of writes and bulk reads, every read right"
}

W_PID="" # learn_dirty's writer daemon, resumed by the EXIT trap
case_learn_dirty() {
	local i
	head -c $((8 << 20)) /dev/urandom >src/f
	mkdir w
	# the writer's mount on the same pool: deferred write (writeback=off), flushed at close
	accel_mount "$PWD/src" "$PWD/w" -o "writeback=off,pool=$POOL,flush_interval=600"
	W_PID=$ACCEL_PID
	# a daemon left stopped would hold every close of its files: resumed on any exit
	trap 'rc=$?; [ -n "$W_PID" ] && kill -CONT "$W_PID" 2>/dev/null; (exit $rc); cfs_cleanup' EXIT
	cfs_pt_mount "writeback=off,pool=$POOL"
	served first md5sum m/f || fail "the first read was not served by the daemon"
	wait_released 1
	# the writer holds w/f open (its close would flush): a process of its own,
	# so that no command here inherits a descriptor of the stopped daemon
	cfs_bg python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"deferred", 0)
open(sys.argv[2], "w").close()
time.sleep(600)' w/f written
	for i in $(seq 100); do [ -e written ] && break; sleep 0.05; done
	[ -e written ] || fail "the write through w did not return"
	kill -STOP "$W_PID"
	[ "$(head -c 8 src/f)" != deferred ] || fail "the write through w was not deferred"
	exec 3<m/f
	served second md5_3 ||
		fail "an open was passed through while another mount held deferred bytes of the file"
	exec 3<&-
	kill -CONT "$W_PID"
	kill "$CFS_BG" && wait "$CFS_BG" 2>/dev/null # its close puts them on SOURCE
	[ "$(head -c 8 src/f)" = deferred ] || fail "w's close did not put its bytes on SOURCE"
	wait_released 2
	exec 3<m/f
	! served third md5_3 || fail "with the deferred bytes on SOURCE, the open was not passed through"
	exec 3<&-
	[ "$(head -c 8 m/f)" = deferred ] || fail "the mount reads other bytes than SOURCE has"
	echo "PASS: no passthrough by use while another mount holds deferred bytes of the file"
}

case_probe() {
	local bt i
	command -v bpftrace >/dev/null || skip "bpftrace is not installed"
	readelf -n "$ACCELFS" 2>/dev/null | grep -q 'Name: cache_lookup' ||
		skip "$ACCELFS has no USDT probes (built with -Dprobes=disabled)"
	readelf -n "$ACCELFS" | grep -q 'Name: passthrough_verdict' ||
		fail "$ACCELFS has USDT probes but not passthrough_open and passthrough_verdict"
	timeout 60 bpftrace -e "usdt:$ACCELFS:accelfs:cache_lookup { } BEGIN { exit(); }" \
		>probe.log 2>&1 || skip "bpftrace cannot attach here: $(tail -n1 probe.log)"
	head -c $((8 << 20)) /dev/urandom >src/f
	cfs_pt_mount "writeback=off,pool=$POOL"
	bpftrace -p "$ACCEL_PID" -e "
usdt:$ACCELFS:accelfs:passthrough_open { printf(\"open %d %s\\n\", arg2, str(arg1)); }
usdt:$ACCELFS:accelfs:passthrough_verdict { printf(\"verdict %d %d\\n\", arg1, arg3); }" \
		>bt.out 2>&1 &
	bt=$!
	for i in $(seq 600); do
		grep -q '^Attaching' bt.out && break
		kill -0 "$bt" 2>/dev/null || fail "bpftrace: $(cat bt.out)"
		sleep 0.05
	done
	grep -q '^Attaching' bt.out || fail "bpftrace did not attach within 30 s"
	served first md5sum m/f || fail "the first read was not served by the daemon"
	wait_released 1
	! served second md5sum m/f || fail "after a bulk read, the next open was not passed through"
	wait_released 2
	printf x | dd of=m/f bs=1 conv=notrunc status=none || fail "write m/f"
	wait_released 3
	kill -INT "$bt"
	accel_wait_exit "$bt" 10 || kill -KILL "$bt"
	cat bt.out
	grep -Eq "^verdict 1 $((8 << 20))\$" bt.out || fail "no bulk verdict of 8 MiB read"
	grep -q "^open 1 auto: bulk sequential reads\$" bt.out || fail "no passthrough open by use"
	grep -q "^verdict 0 0\$" bt.out || fail "the write did not end the verdict"
	[ "$(grep -n '^verdict 1' bt.out | cut -d: -f1)" -lt "$(grep -n '^open 1' bt.out | cut -d: -f1)" ] &&
		[ "$(grep -n '^open 1' bt.out | cut -d: -f1)" -lt "$(grep -n '^verdict 0' bt.out | cut -d: -f1)" ] ||
		fail "the probes fired out of order"
	echo "PASS: passthrough_verdict and passthrough_open fire for each decision, in order"
}

case_fsx() {
	[ -x "${FSX:-}" ] || fail "FSX is not set"
	cfs_pt_mount "passthrough=always,pool=$POOL"
	"$FSX" -N "${FSX_OPS:-3000}" ${FSX_SEED:+-S "$FSX_SEED"} "$PWD/m" ||
		fail "fsx failed (seed above; replay with FSX_SEED=N)"
	[ "$(pcount opens_passthrough)" -gt 0 ] || fail "fsx's opens were not passthrough"
	[ "$(pcount backend_writes)" = 0 ] || fail "the daemon wrote SOURCE for fsx's writes"
	echo "PASS: fsx ${FSX_OPS:-3000} operations through kernel passthrough"
}

"case_$case"
