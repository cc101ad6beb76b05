#!/bin/bash
# SPDX-License-Identifier: MIT
# apps.sh CASE [ACCELFS OPTIONS...]: real programs run unchanged through an
# accelfs mount and give the answer they give on a local directory.
#   tar          tar x of a tree with old mtimes, then tar --diff through the
#                mount: 0 differences (times set before close are kept);
#   rsync        rsync -aHAX of a tree with hard links, symlinks, xattrs and
#                ACLs, then a --checksum pass that finds nothing to do;
#   git          init, add, commit, status, fsck, a second commit;
#   sqlite       transactions in WAL and in DELETE journal mode, then
#                integrity_check and the row count, through a remount;
#   reader-close a process with unflushed writes to a file opens, reads and
#                closes it read-only 100 times: no error, data on SOURCE.
# Each case ends with the mount unmounted, and checks SOURCE itself.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
case=${1:?usage: apps.sh CASE [options]}
shift

accel_tmpdir
base=$ACCEL_TMP
src=$base/src
mnt=$base/mnt
mkdir "$src" "$mnt"

need() { command -v "$1" >/dev/null || skip "$1 is not installed (scripts/install-deps)"; }

# mk_tree DIR N: N files in nested directories with old, distinct mtimes,
# a symlink and a hard link per directory, an xattr on some files.
mk_tree() {
	python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%02d" % (i % 20), "e%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "f%05d" % i)
    with open(p, "wb") as f:
        f.write(os.urandom(i % 5000 + 1))
    t = 1000000000 + i * 7919
    os.utime(p, (t + 1, t))
    if i % 10 == 0:
        os.setxattr(p, "user.tag", b"v%d" % i)
    if i % 20 == 0:
        os.symlink("f%05d" % i, p + ".lnk")
        os.link(p, p + ".hard")
for dp, dn, fn in os.walk(root, topdown=False):
    os.utime(dp, (1200000000, 1200000000))
PY
}

case_tar() {
	need tar
	mk_tree "$base/tree" 600
	tar -C "$base/tree" -cf "$base/t.tar" . || fail "tar c"
	accel_mount "$src" "$mnt" "$@"
	tar -C "$mnt" -xf "$base/t.tar" || fail "tar x through the mount failed"
	tar -C "$mnt" --diff -f "$base/t.tar" >"$base/diff" 2>&1 ||
		fail "tar --diff through the mount: $(wc -l <"$base/diff") differences: $(head -5 "$base/diff")"
	accel_umount "$mnt"
	tar -C "$src" --diff -f "$base/t.tar" >"$base/diff" 2>&1 ||
		fail "tar --diff of SOURCE after unmount: $(head -5 "$base/diff")"
}

case_rsync() {
	need rsync
	mk_tree "$base/tree" 1500
	setfacl -m u:nobody:r "$base/tree/d00/e0/f00000" 2>/dev/null || true
	accel_mount "$src" "$mnt" "$@"
	rsync -aHAX "$base/tree/" "$mnt/tree/" || fail "rsync -aHAX into the mount failed"
	rsync -aHAXn --checksum --itemize-changes "$base/tree/" "$mnt/tree/" >"$base/changes" ||
		fail "rsync --checksum pass failed"
	[ ! -s "$base/changes" ] || fail "second rsync pass wants changes: $(head -5 "$base/changes")"
	diff -r "$base/tree" "$mnt/tree" || fail "diff -r differs"
	accel_umount "$mnt"
	rsync -aHAXn --checksum --itemize-changes "$base/tree/" "$src/tree/" >"$base/changes"
	[ ! -s "$base/changes" ] || fail "SOURCE differs: $(head -5 "$base/changes")"
}

case_git() {
	need git
	accel_mount "$src" "$mnt" "$@"
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
	(cd "$mnt" && git init -q repo) || fail "git init"
	mk_tree "$mnt/repo" 300
	(cd "$mnt/repo" && git add -A && git commit -qm one) || fail "git add/commit"
	[ -z "$(cd "$mnt/repo" && git status --porcelain)" ] || fail "git status not clean"
	echo change >>"$mnt/repo/d00/e0/f00000"
	(cd "$mnt/repo" && git commit -qam two) || fail "second commit"
	(cd "$mnt/repo" && git fsck --strict --no-progress) || fail "git fsck through the mount"
	accel_umount "$mnt"
	(cd "$src/repo" && git fsck --strict --no-progress && [ "$(git rev-list --count HEAD)" = 2 ] &&
		[ -z "$(git status --porcelain)" ]) || fail "git fsck/status on SOURCE after unmount"
}

sqlite_run() { # DB MODE: 50 transactions of 100 rows
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=%s" % sys.argv[2])
db.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)")
for i in range(50):
    with db:
        db.executemany("INSERT INTO t (v) VALUES (?)", [("x" * (j % 300),) for j in range(100)])
    if i % 10 == 0:
        with db:
            db.execute("DELETE FROM t WHERE k %% 7 = %d" % (i % 7))
db.close()
PY
}

sqlite_check() { # DB -> "ok ROWS"
	python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]);
print(d.execute("PRAGMA integrity_check").fetchone()[0], d.execute("SELECT count(*) FROM t").fetchone()[0])' "$1"
}

case_sqlite() {
	local mode want got modes="WAL DELETE"
	# WAL maps its -shm file MAP_SHARED, which the kernel refuses on a
	# direct-I/O mount unless libfuse negotiated DIRECT_IO_ALLOW_MMAP
	# (accelfs(8), kernel_cache=never; test mmap-never).
	case " $* " in *kernel_cache=never*)
		if ! "$ACCELFS" --version | grep -q '+direct_io_allow_mmap'; then
			modes=DELETE
			echo "note: kernel_cache=never on this libfuse: WAL mode not run (shared mmap refused)"
		fi ;;
	esac
	accel_mount "$src" "$mnt" "$@"
	for mode in $modes; do
		sqlite_run "$mnt/$mode.db" $mode || fail "sqlite $mode through the mount"
		sqlite_run "$base/$mode.db" $mode || fail "sqlite $mode on a local directory"
		want=$(sqlite_check "$base/$mode.db")
		got=$(sqlite_check "$mnt/$mode.db")
		[ "$got" = "$want" ] || fail "sqlite $mode through the mount: '$got', local '$want'"
	done
	accel_umount "$mnt"
	for mode in $modes; do
		got=$(sqlite_check "$src/$mode.db")
		[ "$got" = "$(sqlite_check "$base/$mode.db")" ] || fail "sqlite $mode on SOURCE: '$got'"
	done
}

case_reader_close() {
	accel_mount "$src" "$mnt" "$@"
	python3 - "$mnt/f" <<'PY' || fail "reader-close through the mount"
import sys
p = sys.argv[1]
w = open(p, "w")
for i in range(100):
    w.write("record %d\n" % i)
    w.flush()                      # a write(2): acknowledged, unsynced
    with open(p) as r:             # a read-only open and close meanwhile
        r.read()
w.close()
PY
	accel_umount "$mnt"
	[ "$(wc -l <"$src/f")" = 100 ] && [ "$(tail -1 "$src/f")" = "record 99" ] ||
		fail "SOURCE has $(wc -l <"$src/f") of 100 records"
}

case $case in
tar) case_tar "$@" ;;
rsync) case_rsync "$@" ;;
git) case_git "$@" ;;
sqlite) case_sqlite "$@" ;;
reader-close) case_reader_close "$@" ;;
*) fail "unknown case $case" ;;
esac
echo "PASS: $case $*"
