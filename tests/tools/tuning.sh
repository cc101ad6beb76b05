#!/bin/bash
# SPDX-License-Identifier: MIT
# tuning.sh - accel set / accel show without a mount: the attributes round
# trip, 'default' removes, bad values change nothing and exit 2, -q is
# quiet, each failing file gets one line (no such file, not a regular file,
# permission denied, no user xattrs on /proc) while the others are set, and a
# path inside an accelfs mount (a fake mount table) lands on the backing file.
. "$(dirname "$0")/lib.sh"

attr() { getfattr --only-values -n "user.accelfs.$2" "$1" 2>/dev/null; }

F=$T/f
echo data >"$F"
setfattr -n user.accelfs.probe -v 1 "$F" 2>/dev/null ||
	skip "$T does not support user extended attributes"
setfattr -x user.accelfs.probe "$F"

expect_rc 0 "$ACCEL" set "$F" --global-buffers=30 --local-buffers=8 --stats=on \
	--deferred-write=off --sync=relaxed --readahead-max=4M
expect_eq "changes" "$OUT" "$F: global_buffers default -> 30
$F: local_buffers default -> 8
$F: stats default -> on
$F: deferred_write default -> off
$F: sync default -> relaxed
$F: readahead_max default -> 4194304"
for kv in global_buffers=30 local_buffers=8 stats=on deferred_write=off sync=relaxed \
	readahead_max=4194304; do
	expect_eq "${kv%%=*}" "$(attr "$F" "${kv%%=*}")" "${kv#*=}"
done
expect_rc 0 "$ACCEL" set "$F" --global-buffers=30
expect_eq "no change, no output" "$OUT" ""
expect_rc 0 "$ACCEL" show "$F" # with or without a default pool on this host
grep -q "^  global_buffers    30$" <<<"$OUT" || fail "show text: $OUT"
grep -q "^  readahead_max     4194304 (4.0 MiB)$" <<<"$OUT" ||
	fail "show readahead: $OUT"
# a pool named on the command line that cannot be read is an error, after the attributes
expect_rc 1 "$ACCEL" show --pool "/accel-test-none-$$" "$F"
grep -q "^accel show: pool accel-test-none-$$: no such pool (" <<<"$OUT" || fail "no pool: $OUT"
grep -q "^  local_buffers     8$" <<<"$OUT" || fail "attributes without a pool: $OUT"
ok "set and show round trip"

"$ACCEL" show --json "$F" >"$T/j" || fail "show --json"
python3 - "$T/j" "$F" <<'EOF' || fail "show --json content: $(cat "$T/j")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "accelfs-show/1"
f = j["files"][0]
assert f["path"] == sys.argv[2] and f["xattrs"] == "ok"
t = f["tuning"]
assert t["global_buffers"] == {"value": "30", "valid": True, "used": True}, t
assert t["sync"]["value"] == "relaxed" and t["sync"]["used"] is True
assert t["stats"]["used"] is True  # stats=on keeps the file off passthrough=auto
# deferred_write=off, sync=relaxed: relaxed sync needs the daemon
assert f["passthrough"] == {"verdict": "no", "auto_needs": "sync=relaxed"}, f["passthrough"]
assert "pool_entry" in f
EOF
ok "show --json"

# passthrough: on and off are stored as always and never; accel show's verdict
expect_rc 0 "$ACCEL" set -q "$F" --passthrough=on
expect_eq "passthrough=on" "$(attr "$F" passthrough)" always
expect_rc 0 "$ACCEL" set -q "$F" --passthrough=off
expect_eq "passthrough=off" "$(attr "$F" passthrough)" never
expect_rc 2 "$ACCEL" set -q "$F" --passthrough=maybe
expect_eq "passthrough=maybe changes nothing" "$(attr "$F" passthrough)" never
expect_rc 0 "$ACCEL" show "$F"
echo "$OUT" | grep -q "kernel passthrough never: every open is served by the daemon" ||
	fail "show: $OUT"
G=$T/g
echo data >"$G"
expect_rc 0 "$ACCEL" show "$G"
echo "$OUT" | grep -q "kernel passthrough yes on mounts with passthrough=always" ||
	fail "show of an untuned file: $OUT"
expect_rc 0 "$ACCEL" set -q "$F" --passthrough=default
ok "passthrough attribute"

expect_rc 0 "$ACCEL" set -q "$F" --global-buffers=default --sync=default
expect_eq "-q" "$OUT" ""
getfattr -n user.accelfs.global_buffers "$F" >/dev/null 2>&1 && fail "global_buffers not removed"
getfattr -n user.accelfs.sync "$F" >/dev/null 2>&1 && fail "sync not removed"
expect_rc 0 "$ACCEL" set "$F" --global-buffers=default
expect_eq "removing an absent attribute" "$OUT" ""
expect_rc 0 "$ACCEL" show "$F"
grep -q "^  global_buffers    (mount default)$" <<<"$OUT" || fail "show default: $OUT"
expect_rc 0 "$ACCEL" set "$F" --global-buffers=all
expect_eq "all" "$OUT" "$F: global_buffers default -> all"
ok "default removes"

for bad in --global-buffers=268435457 --global-buffers=-1 --global-buffers=lots \
	--local-buffers=1025 --local-buffers=all --stats=yes --deferred-write=1 --sync=on \
	--readahead-max=2G --readahead-max=4T --readahead-max=M --bogus; do
	expect_rc 2 "$ACCEL" set "$F" --local-buffers=3 "$bad"
	expect_eq "$bad leaves the file alone" "$(attr "$F" local_buffers)" 8
done
expect_rc 2 "$ACCEL" set "$F" --local-buffers=1025
expect_eq "range message" "$OUT" \
	"accel set: --local-buffers=1025: out of range; expected N (0..1024) or default"
expect_rc 2 "$ACCEL" set "$F"
expect_eq "nothing to set" "$OUT" "accel set: nothing to set (see 'accel set --help')"
expect_rc 2 "$ACCEL" set --stats=on
expect_rc 2 "$ACCEL" show
ok "bad values exit 2 and change nothing"

mkdir "$T/d"
echo g >"$T/g"
expect_rc 1 "$ACCEL" set "$T/nope" "$T/d" /proc/version "$T/g" --local-buffers=4
expect_eq "errors" "$OUT" "accel set: $T/nope: no such file
accel set: $T/d: not a regular file
accel set: /proc/version: the file system does not support user extended attributes (mount it with user_xattr?)
$T/g: local_buffers default -> 4"
expect_eq "the good file is set" "$(attr "$T/g" local_buffers)" 4
expect_rc 1 "$ACCEL" show "$T/nope" "$T/g"
grep -q "^accel show: $T/nope: no such file$" <<<"$OUT" || fail "show missing: $OUT"
grep -q "^  local_buffers     4$" <<<"$OUT" || fail "show goes on after a bad file: $OUT"
expect_rc 0 "$ACCEL" show /proc/version
grep -q "no user extended attributes" <<<"$OUT" || fail "show on /proc: $OUT"
ok "one line per failing file, the others set"

setfattr -n user.accelfs.global_buffers -v lots "$T/g"
expect_rc 0 "$ACCEL" show "$T/g"
grep -q "^  global_buffers    lots (invalid: the mount default applies)$" <<<"$OUT" ||
	fail "invalid stored value: $OUT"
ok "an invalid stored value is shown as such"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$T"
	chmod 644 "$T/g"
	expect_rc 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ACCEL" set "$T/g" --local-buffers=5
	expect_eq "permission" "$OUT" "accel set: $T/g: permission denied"
	ok "permission denied"
else
	echo "# permission case skipped: needs root and setpriv to become another user"
fi

# A path inside an accelfs mount is set on SOURCE's file: a fake mount table.
mkdir -p "$T/src/sub" "$T/mnt/sub"
echo s >"$T/src/sub/h"
printf '99 1 0:99 / %s rw,nosuid,nodev - fuse.accelfs %s rw,user_id=0\n' "$T/mnt" "$T/src" \
	>"$T/mountinfo"
export ACCEL_TEST_MOUNTINFO=$T/mountinfo
expect_rc 0 "$ACCEL" set "$T/mnt/sub/h" --global-buffers=7
expect_eq "resolved set" "$OUT" "$T/mnt/sub/h: global_buffers default -> 7"
expect_eq "on the backing file" "$(attr "$T/src/sub/h" global_buffers)" 7
expect_rc 0 "$ACCEL" show "$T/mnt/sub/h"
grep -q "^  backing file      $T/src/sub/h$" <<<"$OUT" || fail "show backing: $OUT"
unset ACCEL_TEST_MOUNTINFO
ok "a path inside an accelfs mount lands on the backing file"
