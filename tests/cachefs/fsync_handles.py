# SPDX-License-Identifier: MIT
"""fsync_handles.py FILE CTL: a write-back error is reported to every open file.

Opens FILE three times (A and B read-write, R read-only), writes 64 KiB
through A and fdatasyncs it; then tells the disk under FILE to fail (CTL,
cutfs's control file: "eio"), overwrites 4 KiB through A (allocated
blocks: no metadata to commit) and fdatasyncs A, and makes the disk live
again. Then fdatasync of B, R, A, B and R, each printed with its outcome.
On a local file system each open file reports the error once (the
kernel's errseq): A at its first fdatasync, B and R at theirs after.
"""
import errno
import os
import sys

path, ctl = sys.argv[1], sys.argv[2]
a = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
b = os.open(path, os.O_RDWR)
r = os.open(path, os.O_RDONLY)
os.pwrite(a, b"a" * 65536, 0)
os.fsync(a)
os.fsync(b)
os.fsync(r)


def ctl_say(word):
    with open(ctl, "w") as f:
        f.write(word)


def sync(name, fd):
    try:
        os.fdatasync(fd)
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))


ctl_say("eio")
try:
    os.pwrite(a, b"b" * 4096, 0)
    sync("A", a)
finally:
    ctl_say("live")
for name, fd in (("B", b), ("R", r), ("A", a), ("B", b), ("R", r)):
    sync(name, fd)
