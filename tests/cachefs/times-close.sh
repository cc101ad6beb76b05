#!/bin/bash
# SPDX-License-Identifier: MIT
# times-close.sh [OPTIONS]: times set on an open file survive its write-back
# and close (issue 15, 5). For 200 files: write, futimens(fd, fixed times),
# close -- what GNU tar does for every file it extracts. SOURCE must show
# exactly those atimes and mtimes, and so must the mount after a remount.
# Then a tree with old mtimes goes through tar: `tar x` into the mount, then
# `tar --diff` through it and, after unmounting, on SOURCE find 0 differences.
set -u
. "$(dirname "$0")/lib.sh"
cfs_init
cfs_pool times
command -v python3 >/dev/null || skip "python3 is needed for the write+futimens+close helper"
mkdir m

times() { # times write|check DIR: 200 files with fixed times, or check them
	python3 - "$@" <<'PY'
import os, sys
cmd, d = sys.argv[1], sys.argv[2]
bad = []
for i in range(200):
    p = f"{d}/t{i}"
    at, mt = (1000000000 + i) * 10**9 + 123456789, (1200000000 + i) * 10**9 + 987654321
    if cmd == "write":
        fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, b"%05d\n" % i * (1 + i % 50))
        os.utime(fd, ns=(at, mt))
        os.close(fd)
    else:
        st = os.stat(p)
        if (st.st_atime_ns, st.st_mtime_ns) != (at, mt):
            bad.append(f"{p}: atime {st.st_atime_ns} mtime {st.st_mtime_ns}, want {at} {mt}")
print(f"{cmd} {d}: {len(bad)} of 200 wrong", *bad[:5], sep="\n")
sys.exit(1 if bad else 0)
PY
}

accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,flush_interval=60" "$@"
times write m || fail "write+futimens+close failed"
times check src || fail "SOURCE lost times set before close ($*)"
accel_umount "$PWD/m"
accel_wait_exit "$ACCEL_PID" 10 || fail "daemon did not exit"
times check src || fail "SOURCE lost times at unmount ($*)"
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,flush_interval=60" "$@"
times check m || fail "the mount shows other times after a remount ($*)"

if command -v tar >/dev/null; then
	mkdir tree
	for i in $(seq 300); do
		printf '%0*d\n' $((i * 37 % 5000 + 1)) "$i" >"tree/f$i"
		touch -d "@$((1100000000 + i * 7919))" "tree/f$i"
	done
	tar -cf t.tar -C tree . || fail "tar c"
	mkdir m/x
	tar -xf t.tar -C m/x || fail "tar x into the mount"
	for d in m/x unmount src/x; do
		if [ $d = unmount ]; then # SOURCE, not what the kernel caches
			accel_umount "$PWD/m"
			accel_wait_exit "$ACCEL_PID" 10 || fail "daemon did not exit"
			continue
		fi
		diffs=$(tar --diff -f t.tar -C $d 2>&1 | wc -l)
		[ "$diffs" = 0 ] || {
			tar --diff -f t.tar -C $d 2>&1 | head
			fail "tar --diff in $d: $diffs differences ($*)"
		}
	done
	echo "tar: 300 files, 0 differences through the mount and on SOURCE"
fi
echo "PASS: times set before close survive ($*)"
