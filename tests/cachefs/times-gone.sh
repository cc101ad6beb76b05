#!/bin/bash
# SPDX-License-Identifier: MIT
# times-gone.sh: a SETATTR of mtime (and ctime) only, with no handle, for a
# file deleted in SOURCE whose descriptor the daemon has reaped, is answered
# done (fuse/ops_entry.c, times_flush_gone). That is the shape of the
# kernel's own write-back of a closed file's times in writeback mode; the
# old ESTALE reached no caller but the next syncfs(2) of the mount. Here the
# same request is made on demand: utimensat() with atime UTIME_OMIT through
# a name the kernel still caches (watch=off, 60 s timeouts). The old daemon
# answered ESTALE (the kernel's retry then says ENOENT). syncfs succeeds
# after it.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"
cfs_init
cfs_pool tgone
mkdir m
echo data >src/f
accel_mount "$PWD/src" "$PWD/m" -o "pool=$POOL,watch=off,entry_timeout=60,attr_timeout=60"
cfs_wait_init
grep -q 'writeback cache on' "$ACCEL_LOG" || skip "no writeback cache here: $(grep mounted "$ACCEL_LOG")"
[ "$(cat m/f)" = data ] || fail "cannot read the file through the mount"
rm src/f
sleep 3.5 # the reaper closes a deleted file's idle descriptor within 2 s
got=$(python3 - "$PWD/m/f" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class TS(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
UTIME_OMIT, AT_FDCWD = (1 << 30) - 2, -100
ts = (TS * 2)(TS(0, UTIME_OMIT), TS(1000000000, 0))
r = libc.utimensat(AT_FDCWD, sys.argv[1].encode(), ts, 0)
print("ok" if r == 0 else os.strerror(ctypes.get_errno()))
PY
)
[ "$got" = ok ] || fail "mtime-only SETATTR of a reaped deleted file: '$got', want ok"
out=$(sync -f m 2>&1) || fail "syncfs after it: $out"
echo "PASS: the times of a file gone from SOURCE are taken, syncfs succeeds"
