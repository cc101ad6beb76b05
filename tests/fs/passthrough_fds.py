# SPDX-License-Identifier: MIT
# passthrough_fds.py ACTION DIR [ARGS]: helper of passthrough-fds.sh.
#   hold FILE N SECS  open FILE N times (every third read-only), print
#                     "opened N", hold them SECS seconds
#   ops DIR           open DIR/f through five handles and use them: write,
#                     fsync, fallocate, ftruncate, copy_file_range,
#                     SEEK_DATA, flock, fcntl, OFD and another process's
#                     POSIX locks; print every answer (errno names), which
#                     must be those of a local directory
#   share DIR N SECS  as one user: N opens of DIR/same, LOCK_SH flocks on 20
#                     of them, opens of DIR/d1..d40, flocks on 20 more, all
#                     held; print the counts and errors
import ctypes
import errno
import fcntl
import os
import struct
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
libc.copy_file_range.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                 ctypes.c_size_t, ctypes.c_uint]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2
SEEK_DATA, SEEK_HOLE = 3, 4
out = []


def say(what, fn):
    """Run fn; record its result or its errno's name."""
    try:
        r = fn()
        out.append("%s: %s" % (what, "ok" if r is None else r))
    except OSError as e:
        out.append("%s: %s" % (what, errno.errorcode.get(e.errno, e.errno)))


def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def falloc(fd, mode, off, n):
    return lambda: check(libc.fallocate(fd, mode, off, n)) and None


def ofd(fd, cmd, typ, start, n):
    """An OFD lock request (struct flock: short, short, off_t, off_t, pid_t)."""
    fl = struct.pack("hhqqi4x", typ, os.SEEK_SET, start, n, 0)
    r = fcntl.fcntl(fd, cmd, fl)
    t, _, s, l, pid = struct.unpack("hhqqi4x", r)
    return None if cmd != fcntl.F_OFD_GETLK else "type %d start %d len %d" % (t, s, l)


def child(fn):
    """fn's answer in another process (a POSIX lock owner of its own)."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        try:
            fn()
            msg = b"ok"
        except OSError as e:
            msg = errno.errorcode.get(e.errno, str(e.errno)).encode()
        os.write(wr, msg)
        os._exit(0)
    os.close(wr)
    msg = os.read(rd, 64).decode()
    os.waitpid(pid, 0)
    os.close(rd)
    if msg != "ok":
        raise OSError(getattr(errno, msg, 0), msg)


def ops(d):
    f = d + "/f"
    a = os.open(f, os.O_RDWR)
    b = os.open(f, os.O_RDWR)
    r = os.open(f, os.O_RDONLY)
    w = os.open(f, os.O_WRONLY)
    p = os.open(f, os.O_WRONLY | os.O_APPEND)
    say("write a", lambda: os.pwrite(a, b"x" * 20000, 0))
    say("write p", lambda: os.write(p, b"tail"))
    say("fsync a", lambda: os.fsync(a))
    say("fsync r", lambda: os.fsync(r))
    say("fdatasync w", lambda: os.fdatasync(w))
    say("fallocate a", falloc(a, 0, 0, 65536))
    say("fallocate r", falloc(r, 0, 0, 65536))
    say("fallocate p keep", falloc(p, FALLOC_FL_KEEP_SIZE, 0, 131072))
    say("punch w", falloc(w, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8192, 8192))
    say("punch r", falloc(r, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096))
    say("size", lambda: os.fstat(r).st_size)
    say("seek data r", lambda: os.lseek(r, 8192, SEEK_DATA))
    say("seek hole r", lambda: os.lseek(r, 0, SEEK_HOLE))
    say("ftruncate r", lambda: os.ftruncate(r, 10))
    say("ftruncate a", lambda: os.ftruncate(a, 30000))
    say("ftruncate w", lambda: os.ftruncate(w, 25000))
    say("ftruncate p", lambda: os.ftruncate(p, 24000))
    say("size", lambda: os.fstat(b).st_size)
    say("copy r->a", lambda: check(libc.copy_file_range(r, None, a, None, 100, 0)))
    say("copy a->r", lambda: check(libc.copy_file_range(a, None, r, None, 100, 0)))
    say("copy r->p", lambda: check(libc.copy_file_range(r, None, p, None, 100, 0)))
    # flock: one lock per open file description
    say("flock a ex", lambda: fcntl.flock(a, fcntl.LOCK_EX | fcntl.LOCK_NB))
    say("flock b ex", lambda: fcntl.flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB))
    say("flock r sh", lambda: fcntl.flock(r, fcntl.LOCK_SH | fcntl.LOCK_NB))
    dup = os.dup(a)
    say("flock dup(a) un", lambda: fcntl.flock(dup, fcntl.LOCK_UN))
    os.close(dup)
    say("flock r sh", lambda: fcntl.flock(r, fcntl.LOCK_SH | fcntl.LOCK_NB))
    say("flock w sh", lambda: fcntl.flock(w, fcntl.LOCK_SH | fcntl.LOCK_NB))
    say("flock a ex", lambda: fcntl.flock(a, fcntl.LOCK_EX | fcntl.LOCK_NB))
    say("flock b un", lambda: fcntl.flock(b, fcntl.LOCK_UN))
    say("flock r un", lambda: fcntl.flock(r, fcntl.LOCK_UN))
    say("flock w un", lambda: fcntl.flock(w, fcntl.LOCK_UN))
    say("flock b ex", lambda: fcntl.flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB))
    say("child flock p ex", lambda: child(lambda: fcntl.flock(p, fcntl.LOCK_EX | fcntl.LOCK_NB)))
    # OFD locks: per open file description too
    say("ofd a wr 0+100", lambda: ofd(a, fcntl.F_OFD_SETLK, fcntl.F_WRLCK, 0, 100))
    say("ofd b wr 50+10", lambda: ofd(b, fcntl.F_OFD_SETLK, fcntl.F_WRLCK, 50, 10))
    say("ofd r rd 200+10", lambda: ofd(r, fcntl.F_OFD_SETLK, fcntl.F_RDLCK, 200, 10))
    say("ofd getlk b 0+300", lambda: ofd(b, fcntl.F_OFD_GETLK, fcntl.F_WRLCK, 0, 300))
    say("ofd getlk a 0+100", lambda: ofd(a, fcntl.F_OFD_GETLK, fcntl.F_WRLCK, 0, 100))
    say("posix r rd 0+10", lambda: fcntl.lockf(r, fcntl.LOCK_SH | fcntl.LOCK_NB, 10, 0))
    say("posix w wr 1000+10", lambda: fcntl.lockf(w, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 1000))
    say("posix r wr 2000+1", lambda: fcntl.lockf(r, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2000))
    say("child posix b wr 1000+10",
        lambda: child(lambda: fcntl.lockf(b, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 1000)))
    say("child posix b wr 3000+10",
        lambda: child(lambda: fcntl.lockf(b, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 3000)))
    say("ofd a un", lambda: ofd(a, fcntl.F_OFD_SETLK, fcntl.F_UNLCK, 0, 100))
    say("ofd b wr 50+10", lambda: ofd(b, fcntl.F_OFD_SETLK, fcntl.F_WRLCK, 50, 10))
    os.close(w)  # POSIX: a close drops the process's locks on the file
    say("child posix b wr 1000+10",
        lambda: child(lambda: fcntl.lockf(b, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 1000)))
    for fd in (a, b, r, p):
        os.close(fd)
    with open(f, "rb") as g:
        data = g.read()
    out.append("final size %d, %d non-zero bytes" % (len(data), len(data) - data.count(0)))
    print("\n".join(out))


def hold(path, n, secs):
    fds = [os.open(path, os.O_RDONLY if i % 3 == 0 else os.O_RDWR) for i in range(n)]
    print("opened %d" % len(fds), flush=True)
    time.sleep(secs)


def share(d, n, secs):
    fds = {"same": [], "other": [], "flock": []}
    errs = {}

    def count(what, fn):
        try:
            fds[what].append(fn())
        except OSError as e:
            key = "%s %s" % (what, errno.errorcode.get(e.errno, e.errno))
            errs[key] = errs.get(key, 0) + 1

    for i in range(n):
        count("same", lambda: os.open(d + "/same", os.O_RDONLY if i % 2 else os.O_RDWR))
    for fd in fds["same"][:20]:
        count("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
    for i in range(1, 41):
        count("other", lambda: os.open("%s/d%d" % (d, i), os.O_RDONLY))
    for fd in fds["same"][20:40]:
        count("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
    print("same %d other %d flock %d %s" % (len(fds["same"]), len(fds["other"]),
                                            len(fds["flock"]), sorted(errs.items())), flush=True)
    time.sleep(secs)


action, d = sys.argv[1], sys.argv[2]  # d: a directory, or hold's file
if action == "ops":
    ops(d)
elif action == "hold":
    hold(d, int(sys.argv[3]), float(sys.argv[4]))
elif action == "share":
    share(d, int(sys.argv[3]), float(sys.argv[4]))
else:
    sys.exit("unknown action " + action)
