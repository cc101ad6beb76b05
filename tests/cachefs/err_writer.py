# SPDX-License-Identifier: MIT
"""err_writer.py FILE fill | FILE eio READY GO: the writer of the write-error tests.

fill: 4 KiB writes to FILE, fsync'ing every MiB, until write() fails
(write-errors.sh: SOURCE fills up).
eio: 1 MiB in 4 KiB writes and an fsync, which must succeed; then READY is
created, and once GO exists 1 MiB more (write-eio.sh: SOURCE's disk fails
in between).
Then fsync, fsync again 2.5 s later (sync=relaxed reports from its
background sync) and close, each printed with its outcome; the last line
is "accepted BYTES reported 0|1": bytes write() accepted, and whether
write, fsync or close reported an error.
"""
import os
import sys
import time

path, how = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
buf, acc, reported = b"z" * 4096, 0, False
if how == "eio":
    for _ in range(256):
        acc += os.write(fd, buf)
    os.fsync(fd)
    print("first MiB fsync ok", flush=True)
    open(sys.argv[3], "w").close()
    while not os.path.exists(sys.argv[4]):
        time.sleep(0.01)
try:
    while how == "fill" or acc < 2 << 20:
        acc += os.write(fd, buf)
        if how == "fill" and acc % (1 << 20) == 0:
            os.fsync(fd)
except OSError as e:
    reported = how == "eio"  # filling up is expected to end in an error
    print("write error after", acc, "bytes:", e.strerror)
for what, f in (("fsync", os.fsync), ("fsync 2.5 s later", os.fsync), ("close", os.close)):
    if what.endswith("later"):
        time.sleep(2.5)
    try:
        f(fd)
        print(what, "ok")
    except OSError as e:
        reported = True
        print(what, "error:", e.strerror)
print("accepted", acc, "reported", int(reported))
