#!/bin/bash
# SPDX-License-Identifier: MIT
# sysgen_cli.sh - accel sysgen as a provisioning gate, on a fake /proc, /sys
# and /dev/shm (--root-* and ACCEL_SYSGEN_ROOT): exit 1 while a minimum is
# not met, --apply prints exactly what it changed and what is left to do by
# hand and writes those values into the fake tree, exit 0 afterwards; usage
# errors exit 2. Never touches the real system.
# $1: accel.
. "$(dirname "$0")/lib.sh"

R=$T/root
put() { mkdir -p "$(dirname "$R/$1")" && printf '%s\n' "$2" >"$R/$1"; }

put proc/self/mountinfo '45 22 0:45 / /mnt/x rw - fuse.accelfs /srv/x rw,user_id=0,group_id=0'
put proc/sys/kernel/io_uring_disabled 0
put proc/sys/fs/fuse/max_pages_limit 128
put proc/sys/vm/dirty_ratio 20
put proc/meminfo 'MemFree: 2097152 kB'
put sys/module/fuse/parameters/max_user_bgreq 1000
put sys/module/fuse/parameters/max_user_congthresh 1000
put sys/fs/fuse/connections/45/max_background 64
put sys/fs/fuse/connections/45/congestion_threshold 10
put sys/class/bdi/0:45/read_ahead_kb 128
put sys/class/bdi/0:45/max_ratio 40
put sys/kernel/tracing/uprobe_events ''
mkdir -p "$R/dev/shm"
# a default pool header: magic "XACCFLB1", version 1, total_size 64 MiB
python3 - "$R/dev/shm/accelfs-default" <<'PY' || skip "python3 is not installed"
import struct, sys
h = struct.pack('<QIIIIQIIII', 0x31424c4643434158, 1, 0, 0, 0x01020304, 64 << 20, 65536, 16, 1024, 1)
open(sys.argv[1], 'wb').write(h + bytes(4096 - len(h)))
PY
chmod 600 "$R/dev/shm/accelfs-default" # ours: a pool another user could write is not read
cp "$R/dev/shm/accelfs-default" "$R/dev/shm/accel-squat" && chmod 666 "$R/dev/shm/accel-squat"

expect_rc 1 env ACCEL_SYSGEN_ROOT="$R" "$ACCEL" sysgen
grep -Eq '^fs\.fuse\.max_pages_limit +128 +>= 256 +LOW ' <<<"$OUT" || fail "no LOW max_pages row: $OUT"
grep -Eq '^pool /accelfs-default +64\.0 MiB +- +info ' <<<"$OUT" || fail "no pool row: $OUT"
grep -Eq '^pool /accel-squat .*untrusted' <<<"$OUT" || fail "no untrusted row: $OUT"
grep -q '^accelfs mount /mnt/x: FUSE connection 45, BDI 0:45, daemon uid 0$' <<<"$OUT" ||
	fail "no mount line: $OUT"
grep -q '^3 parameters LOW$' <<<"$OUT" || fail "summary: $OUT"
ok "LOW parameters fail the gate (exit 1)"

expect_rc 1 "$ACCEL" sysgen --json --root-proc "$R/proc" --root-sys "$R/sys" --root-shm "$R/dev/shm"
python3 -c 'import json, sys; j = json.loads(sys.argv[1]); assert j["schema"] == "accelfs-sysgen/1" and j["low"] == 3 and not j["applied"], j' "$OUT" ||
	fail "--json: $OUT"
ok "--json with --root-* options"

expect_rc 0 env ACCEL_SYSGEN_ROOT="$R" "$ACCEL" sysgen --apply
expect_eq changes "$(grep -E '^(changed|failed|by hand)' <<<"$OUT")" \
"changed fs.fuse.max_pages_limit: 128 -> 256 ($R/proc/sys/fs/fuse/max_pages_limit); lost at reboot: fs.fuse.max_pages_limit = 256 in /etc/sysctl.d/
changed fuse.45.congestion_threshold: 10 -> 48 ($R/sys/fs/fuse/connections/45/congestion_threshold); per mount, lost at remount: run accel sysgen --apply after mounting
changed bdi.0:45.read_ahead_kb: 128 -> 1024 ($R/sys/class/bdi/0:45/read_ahead_kb); per mount, lost at remount: run accel sysgen --apply after mounting"
grep -q '^after --apply: every minimum met$' <<<"$OUT" || fail "summary after apply: $OUT"
expect_eq written "$(cat "$R/proc/sys/fs/fuse/max_pages_limit" "$R/sys/fs/fuse/connections/45/congestion_threshold" \
	"$R/sys/class/bdi/0:45/read_ahead_kb" "$R/sys/fs/fuse/connections/45/max_background" "$R/sys/class/bdi/0:45/max_ratio")" \
	"$(printf '256\n48\n1024\n64\n40')"
expect_rc 0 env ACCEL_SYSGEN_ROOT="$R" "$ACCEL" sysgen
ok "--apply writes the shown values, then the gate passes"

put proc/sys/kernel/io_uring_disabled 2
rm -f "$R/sys/kernel/tracing/uprobe_events"
expect_rc 1 env ACCEL_SYSGEN_ROOT="$R" "$ACCEL" sysgen --apply --probes
grep -q '^by hand kernel.io_uring_disabled: security policy, not changed by --apply' <<<"$OUT" ||
	fail "io_uring policy line: $OUT"
grep -q '^by hand uprobes: mount -t tracefs nodev /sys/kernel/tracing$' <<<"$OUT" || fail "uprobes line: $OUT"
expect_eq "still 2" "$(cat "$R/proc/sys/kernel/io_uring_disabled")" 2
ok "what --apply cannot set is printed as a step by hand, and still fails"

expect_rc 2 "$ACCEL" sysgen --bogus
expect_rc 2 "$ACCEL" sysgen extra
expect_rc 2 "$ACCEL" sysgen --write-burst 0
expect_rc 0 "$ACCEL" sysgen --help
ok "usage errors exit 2"
