#!/bin/bash
# SPDX-License-Identifier: MIT
# fsx.sh [ACCELFS-OPTIONS...]: runs the fsx exerciser (FSX_OPS operations,
# default 20000; FSX_SEED to replay; FSX_DIRECT=1 adds O_DIRECT I/O) on a
# mount, then checks that the file the mount saw is the file SOURCE holds.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
[ -n "${FSX:-}" ] || fail "FSX is not set"

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/mnt"
flags=()
# fsx exercises what SOURCE's file system can do; say so when it cannot.
if ! fallocate -p -o 0 -l 4096 "$(mktemp -p "$base/src")" 2>/dev/null; then
	echo "NOTE: SOURCE's file system cannot punch holes; fsx runs without fallocate"
	flags+=(-F)
fi
rm -f "$base/src"/tmp.*
# FSX_DIRECT=1: O_DIRECT reads and writes up to 1 MiB beside the buffered
# ones; first on SOURCE itself where it takes O_DIRECT, to show the
# exerciser's expectations are a local file system's.
if [ "${FSX_DIRECT:-0}" = 1 ]; then
	flags+=(-D)
	if (: >"$base/src/probe" && dd if=/dev/zero of="$base/src/probe" bs=4k count=1 \
		oflag=direct status=none) 2>/dev/null; then
		"$FSX" -N 1000 -S 4242 "${flags[@]}" "$base/src" >/dev/null ||
			fail "fsx -D fails on SOURCE's own file system"
	else
		echo "NOTE: SOURCE's file system refuses O_DIRECT; fsx -D runs only on the mount"
	fi
	rm -f "$base/src/probe"
fi
accel_mount "$base/src" "$base/mnt" "$@"

# a seed that once found a bug (a deferred write racing a write-through) stays
"$FSX" -N 2500 -S 97368703923381 "${flags[@]}" "$base/mnt" ||
	fail "fsx regression seed 97368703923381 failed"
"$FSX" -N "${FSX_OPS:-20000}" ${FSX_SEED:+-S "$FSX_SEED"} "${flags[@]}" "$base/mnt" ||
	fail "fsx failed (seed above; replay with FSX_SEED=N)"
[ -z "$(ls -A "$base/mnt")" ] || fail "fsx left files behind on the mount"
echo "PASS: fsx ${FSX_OPS:-20000} operations"
