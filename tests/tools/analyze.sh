#!/bin/bash
# SPDX-License-Identifier: MIT
# analyze.sh - `accel analyze` on a loop-mounted ext4: extent counts match
# filefrag's physical picture, holes and unwritten extents are found, --fdl
# writes OpenVMS FDL with the allocation, ownership, mode and every tuning
# attribute (an unknown user.accelfs.* one as a comment), --json parses,
# a file system without FIEMAP (tmpfs, and the ACCEL_TEST_NO_FIEMAP hook)
# fails cleanly, and accelfs mount paths map to the backing file.
. "$(dirname "$0")/lib.sh"
mkext4 128

cd "$MNT" || fail "cd"
fragment 16 65536 a b
n=$(extents a)
[ "$n" -ge 8 ] || fail "a should be fragmented, accel says $n extents"
ff=$(filefrag a | sed -n 's/.*: \([0-9]*\) extents\? found/\1/p')
[ "$n" -le "$ff" ] || fail "accel counts $n extents, filefrag $ff"
expect_rc 0 "$ACCEL" analyze a
grep -q "fragmentation  [0-9]" <<<"$OUT" && grep -q "ideal          1 extent" <<<"$OUT" ||
	fail "text output: $OUT"
ok "fragmented file: $n extents (filefrag: $ff)"

head -c 65536 /dev/urandom | dd of=sparse bs=64k seek=4 conv=notrunc status=none
truncate -s 1M sparse
fallocate -l 128k -o 512k sparse
expect_rc 0 "$ACCEL" analyze --json sparse
grep -q '"holes": 3,' <<<"$OUT" || fail "holes: $OUT"
grep -q '"unwritten": 1,' <<<"$OUT" || fail "unwritten: $OUT"
grep -q '"ideal_extents": 2,' <<<"$OUT" || fail "ideal: $OUT"
if command -v python3 >/dev/null; then
	"$ACCEL" analyze --json a sparse | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d)==2 and d[0]["size"]==16*65536' ||
		fail "--json is not the expected JSON"
fi
ok "holes, unwritten extents, json"

chown 123:45 a
chmod 0640 a
setfattr -n user.accelfs.global_buffers -v 64 a
setfattr -n user.accelfs.deferred_write -v on a
setfattr -n user.accelfs.some_future_knob -v 'x"y' a
setfattr -n user.other -v nope a
expect_rc 0 "$ACCEL" analyze --fdl a
f=a.fdl
# kv KEYWORD VALUE: a secondary attribute's line, laid out as ANALYZE/RMS/FDL does
kv() { printf '\t%-24s%s' "$1" "$2"; }
grep -qx "IDENT	\"[0-9][0-9]-[A-Z][A-Z][A-Z]-20[0-9][0-9] [0-9:]*   accel analyze .*\"" $f &&
	grep -qx FILE $f && grep -qx "$(kv NAME '"a"')" $f &&
	grep -qx "$(kv ORGANIZATION sequential)" $f && grep -qx "$(kv ALLOCATION 2048)" $f &&
	grep -qx "$(kv BEST_TRY_CONTIGUOUS yes)" $f && grep -qx "$(kv CONTIGUOUS no)" $f &&
	grep -qx RECORD $f && grep -qx "$(kv FORMAT stream_lf)" $f &&
	grep -qx LINUX $f && grep -qx "$(kv OWNER 123)" $f && grep -qx "$(kv GROUP 45)" $f &&
	grep -qx "$(kv MODE 0640)" $f && grep -qx ACCELFS $f &&
	grep -qx "$(kv GLOBAL_BUFFERS 64)" $f && grep -qx "$(kv DEFERRED_WRITE on)" $f &&
	grep -qxF '! user.accelfs.some_future_knob "x\"y": not a tuning attribute of this accelfs; accel convert does not set it' $f ||
	fail "FDL content: $(cat $f)"
! grep -q other $f || fail "FDL holds a non-accelfs attribute"
ok "--fdl writes FDL: FILE ALLOCATION in blocks, RECORD, LINUX owner and mode, ACCELFS tuning"

expect_rc 1 env ACCEL_TEST_NO_FIEMAP=1 "$ACCEL" analyze a
grep -q "a: the file system does not report extents (no FIEMAP)" <<<"$OUT" || fail "$OUT"
mkdir "$T/tmpfs"
mount -t tmpfs -o size=8m tmpfs "$T/tmpfs" && MOUNTS=("$T/tmpfs" "${MOUNTS[@]}")
echo hi >"$T/tmpfs/f"
if ! filefrag "$T/tmpfs/f" >/dev/null 2>&1; then
	expect_rc 1 "$ACCEL" analyze "$T/tmpfs/f"
	grep -q "no FIEMAP" <<<"$OUT" || fail "tmpfs: $OUT"
	expect_rc 1 "$ACCEL" defrag "$T/tmpfs/f"
	grep -q "no FIEMAP" <<<"$OUT" || fail "tmpfs defrag: $OUT"
	ok "tmpfs without FIEMAP: clean failure"
else
	echo "# tmpfs supports FIEMAP here; only the ACCEL_TEST_NO_FIEMAP hook was tested"
fi

# An accelfs mount as the mount table shows it: MOUNTPOINT/rel -> SOURCE/rel.
printf '1 0 8:1 / /fake/accel rw - fuse.accelfs %s rw\n' "$MNT" >"$T/mountinfo"
expect_rc 0 env ACCEL_TEST_MOUNTINFO="$T/mountinfo" "$ACCEL" analyze --json /fake/accel/a
grep -q "\"backing\": \"$MNT/a\"" <<<"$OUT" && grep -q '"size": 1048576' <<<"$OUT" ||
	fail "mount resolution: $OUT"
expect_rc 0 env ACCEL_TEST_MOUNTINFO="$T/mountinfo" "$ACCEL" defrag -n /fake/accel/a
grep -q "^/fake/accel/a: .*would defragment" <<<"$OUT" || fail "defrag via mount: $OUT"
ok "paths inside an accelfs mount resolve to the backing file"
cd /
