#!/bin/bash
# SPDX-License-Identifier: MIT
# fdlimit.sh CASE: the daemon's descriptor limit is not a limit on the tree.
# The daemon runs with RLIMIT_NOFILE 1024 (soft and hard, so it cannot raise
# it) while the kernel caches far more names than that:
#   create    6,000 files in one directory, all listed and stat'ed
#   rsync     rsync -aHAX of a 20,000-entry tree in, a --checksum pass finds
#             nothing to do, diff -r is clean, rm -rf takes it all out
#   deleted   a file deleted in SOURCE while the kernel caches its name is
#             freed (no "(deleted)" descriptor left in the daemon)
#   reuse     a file whose inode number is reused by a new file in SOURCE:
#             the mount shows the new file, never the old node (skipped if
#             the file system does not hand the number out again)
#   fallback  without CAP_DAC_READ_SEARCH: one descriptor per inode, a
#             warning at mount, and everything still works
#   creds     allow_other, a 64-descriptor cache: as nobody, touch more files
#             than the cache holds, then stat, read, write and chmod the
#             first ones again (their descriptors were closed and are
#             reopened by handle with the daemon's rights): every answer and
#             the final state equal those of a local directory, as nobody
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
case=${1:?usage: fdlimit.sh create|rsync|deleted|reuse|fallback|creds}
NOFILE=1024

accel_tmpdir
base=$ACCEL_TMP
src=$base/src
mnt=$base/mnt
mkdir "$src" "$mnt"
# Names stay cached in the kernel (and so the daemon's nodes) for the whole test.
opts=entry_timeout=600,attr_timeout=600,pool_keep=no

# daemon_fds: descriptors the daemon has open now.
daemon_fds() {
	ls "/proc/$ACCEL_PID/fd" | wc -l
}

mount_limited() {
	ulimit -n $NOFILE || skip "cannot set RLIMIT_NOFILE"
	accel_mount "$src" "$mnt" -o "$opts" "$@"
	accel_wait_init "$mnt"
	! grep -q "one descriptor per name" "$ACCEL_LOG" || skip "no file handles here: $(cat "$ACCEL_LOG")"
}

case_create() {
	local i n
	mount_limited
	for ((i = 0; i < 6000; i++)); do
		: >"$mnt/f$i" || fail "create $i of 6000 failed with $(daemon_fds) descriptors open"
	done
	n=$(find "$mnt" -type f -ls | wc -l)
	[ "$n" = 6000 ] || fail "find -ls listed $n of 6000 files"
	n=$(ls -l "$mnt" | grep -c ' f[0-9]*$')
	[ "$n" = 6000 ] || fail "ls -l listed $n of 6000 files"
	n=$(ls "$src" | wc -l)
	[ "$n" = 6000 ] || fail "SOURCE has $n of 6000 files"
	[ "$(daemon_fds)" -lt $NOFILE ] || fail "the daemon holds $(daemon_fds) descriptors"
	echo "PASS: 6,000 files created and stat'ed with RLIMIT_NOFILE $NOFILE ($(daemon_fds) open)"
}

case_rsync() {
	local out n
	command -v rsync >/dev/null || skip "rsync is not installed (scripts/install-deps)"
	mkdir "$base/tree"
	"$TREEGEN" "$base/tree" 20000 || fail "treegen"
	mount_limited
	rsync -aHAX "$base/tree/" "$mnt/tree/" || fail "rsync -aHAX into the mount failed"
	out=$(rsync -aHAXn --checksum --itemize-changes "$base/tree/" "$mnt/tree/") ||
		fail "rsync --checksum pass failed"
	[ -z "$out" ] || fail "rsync --checksum found changes: $(echo "$out" | head -5)"
	diff -r --no-dereference "$base/tree" "$mnt/tree" >/dev/null || fail "diff -r differs"
	[ "$(stat -c %h "$mnt/tree/d000/e00009")" = 2 ] || fail "hard link lost"
	n=$(find "$mnt/tree" | wc -l)
	rm -rf "$mnt/tree" || fail "rm -rf through the mount failed"
	[ ! -e "$src/tree" ] || fail "rm -rf left $(find "$src/tree" | wc -l) entries in SOURCE"
	echo "PASS: rsync -aHAX of $n entries, 0 changes on --checksum, rm -rf, NOFILE $NOFILE"
}

case_deleted() {
	local i
	mount_limited
	dd if=/dev/zero of="$src/big" bs=1M count=32 status=none
	stat "$mnt/big" >/dev/null || fail "stat through the mount"
	cat "$mnt/big" >/dev/null
	rm "$src/big"
	for ((i = 0; i < 50; i++)); do
		ls -l "/proc/$ACCEL_PID/fd" | grep -q '(deleted)' || break
		sleep 0.1
	done
	ls -l "/proc/$ACCEL_PID/fd" | grep '(deleted)' &&
		fail "the daemon still holds a file deleted in SOURCE after 5 s"
	stat "$mnt/big" 2>/dev/null && fail "the deleted file is still seen"
	echo "PASS: a file deleted in SOURCE is freed while the kernel still caches its name"
}

# reuse_round R: files aR_* looked up through the mount, deleted in SOURCE;
# once the daemon has let them go, new files bR_* at once (ext4 hands a freed
# inode number out again only right away). Sets reused to the count that
# got an old number.
reuse_round() {
	local r=$1 i j
	declare -A was
	for ((i = 0; i < 20; i++)); do
		echo "old $i" >"$src/a${r}_$i"
		was[$(stat -c %i "$src/a${r}_$i")]=1
		stat "$mnt/a${r}_$i" >/dev/null || fail "stat a${r}_$i through the mount"
	done
	rm "$src"/a"${r}"_*
	for ((i = 0; i < 60; i++)); do
		ls -l "/proc/$ACCEL_PID/fd" | grep -q '(deleted)' || break
		sleep 0.05
	done
	reused=0
	for ((j = 0; j < 20; j++)); do
		printf 'new file %d\n' "$j" >"$src/b${r}_$j"
		[ -n "${was[$(stat -c %i "$src/b${r}_$j")]:-}" ] && reused=$((reused + 1))
	done
	return 0
}

case_reuse() {
	local r j reused=0
	# kernel_cache=always: a node whose file changed is not retired for that
	# reason (inode.c, must_retire), so only the handle tells the files apart.
	mount_limited -o kernel_cache=always
	for ((r = 0; r < 5 && reused == 0; r++)); do
		reuse_round $r
	done
	r=$((r - 1))
	[ $reused -gt 0 ] || skip "$(df -T "$src" | awk 'NR==2{print $2}') handed out no old inode number"
	for ((j = 0; j < 20; j++)); do
		[ "$(cat "$mnt/b${r}_$j" 2>&1)" = "new file $j" ] ||
			fail "b${r}_$j reads '$(cat "$mnt/b${r}_$j" 2>&1)' through the mount"
		[ "$(stat -c %s "$mnt/b${r}_$j")" = "$(stat -c %s "$src/b${r}_$j")" ] ||
			fail "b${r}_$j: wrong size"
	done
	echo "PASS: $reused reused inode numbers (round $r), each seen as the new file"
}

case_fallback() {
	local i n
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	ulimit -n 4096
	# A root daemon without CAP_DAC_READ_SEARCH cannot open handles.
	ACCELFS_REAL=$ACCELFS
	ACCELFS=$base/accelfs-nocap
	printf '#!/bin/sh\nexec setpriv --inh-caps=-dac_read_search --bounding-set=-dac_read_search %s "$@"\n' \
		"$ACCELFS_REAL" >"$ACCELFS"
	chmod 755 "$ACCELFS"
	accel_mount "$src" "$mnt" -o "$opts"
	grep -q "one descriptor per name" "$ACCEL_LOG" || fail "no fallback warning: $(cat "$ACCEL_LOG")"
	for ((i = 0; i < 200; i++)); do
		echo "$i" >"$mnt/f$i" || fail "create f$i"
	done
	n=$(find "$mnt" -type f -ls | wc -l)
	[ "$n" = 200 ] || fail "find -ls listed $n of 200"
	[ "$(cat "$mnt/f150")" = 150 ] || fail "content"
	ACCEL_PID=$(accel_daemon_pids "$mnt")
	[ "$(daemon_fds)" -ge 200 ] || fail "fallback keeps a descriptor per inode, but $(daemon_fds) open"
	echo "PASS: without CAP_DAC_READ_SEARCH the daemon warns and keeps a descriptor per inode"
}

# as_nobody DIR CMD: CMD (sh) as nobody in DIR, every answer on stdout.
as_nobody() {
	(cd "$1" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$2" 2>&1)
}

# creds_touch: what nobody does first, to every file (the touch that evicts).
creds_touch='for i in $(seq 0 199); do echo "n$i" >"n$i"; done; cat r0 r1 >/dev/null'
# creds_again: the first files again, after the cache went round; the
# answers name no directory, so the mount's and the local ones compare.
creds_again='for f in n0 n1 n2 r0 r1 r2; do
	stat -c "%n %s %a %u" "$f"; cat "$f"; echo "more" >>"$f" && echo "append ok"
	chmod 600 "$f" && echo "chmod ok"; stat -c "%n %s %a" "$f"; cat "$f"
done'

case_creds() {
	local d i out_mnt out_ref n
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	mkdir "$base/ref"
	for d in "$src" "$base/ref"; do
		mkdir -m 755 "$d/w" && chown 65534:65534 "$d/w"
		for i in 0 1 2; do echo "root $i" >"$d/w/r$i" && chmod 644 "$d/w/r$i"; done
	done
	ulimit -n 128 || skip "cannot set RLIMIT_NOFILE"
	accel_mount "$src" "$mnt" -o "$opts,allow_other"
	grep -q "at most 64 descriptors cached" "$ACCEL_LOG" ||
		skip "no 64-descriptor cache of file handles here: $(cat "$ACCEL_LOG")"
	as_nobody "$mnt/w" "$creds_touch" >/dev/null
	as_nobody "$base/ref/w" "$creds_touch" >/dev/null
	n=$(daemon_fds)
	[ "$n" -lt 150 ] || fail "$n descriptors open for 203 files: nothing was evicted"
	out_mnt=$(as_nobody "$mnt/w" "$creds_again")
	out_ref=$(as_nobody "$base/ref/w" "$creds_again")
	[ "$out_mnt" = "$out_ref" ] ||
		fail "answers differ: mount vs local:$(diff <(echo "$out_ref") <(echo "$out_mnt"))"
	grep -q "Permission denied" <<<"$out_ref" || fail "nobody was never refused: a bad test"
	for i in n0 n1 r0 r1; do
		[ "$(stat -c '%s %a %u' "$src/w/$i")" = "$(stat -c '%s %a %u' "$base/ref/w/$i")" ] ||
			fail "$i on SOURCE: $(stat -c '%s %a %u' "$src/w/$i")"
	done
	echo "PASS: $n descriptors for 203 files; as nobody, stat/read/write/chmod after eviction as on a local directory"
}

"case_$case"
