# SPDX-License-Identifier: MIT
# posix_gaps.py DIR: the POSIX cases of issue 28 in DIR/d (a directory all may
# write, holding owned-by-root, mode 0666), run as a user who is not root;
# prints one "case result" line each (result "ok" or the error).
import os, sys, stat
m = sys.argv[1]
res = {}
# 1. utimensat NULL as a writer who is not the owner
p = m + "/d/owned-by-root"
try:
    os.utime(p, None); res["utimes-now-writer"] = "ok"
except OSError as e: res["utimes-now-writer"] = e.strerror
# 2. opendir of own directory mode 0400
q = m + "/d/mine"
os.mkdir(q, 0o755); open(q + "/x", "w").close(); os.chmod(q, 0o400)
try:
    os.listdir(q); res["opendir-0400"] = "ok"
except OSError as e: res["opendir-0400"] = e.strerror
os.chmod(q, 0o755)
# 3. O_TMPFILE + linkat
try:
    fd = os.open(m + "/d", os.O_TMPFILE | os.O_RDWR, 0o600)
    os.write(fd, b"anon")
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100, (m + "/d/named").encode(), 0x400) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    res["tmpfile-link"] = "ok" if open(m + "/d/named").read() == "anon" else "bad content"
except OSError as e: res["tmpfile-link"] = e.strerror
for k, v in res.items():
    print(k, v)
