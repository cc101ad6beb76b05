#!/bin/bash
# SPDX-License-Identifier: MIT
# mmap_never.sh: with kernel_cache=never (direct I/O), a build whose libfuse
# negotiates FUSE_DIRECT_IO_ALLOW_MMAP (3.18: "+direct_io_allow_mmap" in
# --version) maps shared files like any file system, and a write through the
# mapping reaches SOURCE; a build without it (3.14) gets every MAP_SHARED
# mapping refused, read-only ones too (ENODEV), as accelfs(8) says. Private
# mappings see the file's bytes either way. With the default options all work.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v python3 >/dev/null || skip "python3 is not installed"

accel_tmpdir
base=$ACCEL_TMP
mkdir "$base/src" "$base/never" "$base/auto"
echo hello >"$base/src/f"
accel_mount "$base/src" "$base/never" -o kernel_cache=never
accel_mount "$base/src" "$base/auto"

probe() { # FILE -> "shared-ro shared-rw private" results
	python3 - "$1" <<'PY'
import mmap, os, sys
out = []
for flags, prot, mode in ((mmap.MAP_SHARED, mmap.PROT_READ, os.O_RDONLY),
                          (mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, os.O_RDWR),
                          (mmap.MAP_PRIVATE, mmap.PROT_READ, os.O_RDONLY)):
    fd = os.open(sys.argv[1], mode)
    try:
        m = mmap.mmap(fd, 0, flags=flags, prot=prot)
        out.append("ok" if m[:5] == b"hello" else "wrong-bytes")
        m.close()
    except OSError as e:
        out.append(os.strerror(e.errno).replace(" ", "_"))
    os.close(fd)
print(" ".join(out))
PY
}
got=$(probe "$base/never/f")
if "$ACCELFS" --version | grep -q '+direct_io_allow_mmap'; then
	[ "$got" = "ok ok ok" ] ||
		fail "kernel_cache=never with DIRECT_IO_ALLOW_MMAP: mmap gave '$got', expected 'ok ok ok'"
	python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
m[0:5] = b"HELLO"
m.flush()
m.close()
os.close(fd)' "$base/never/f" || fail "writing through a shared mapping failed"
	[ "$(head -c 5 "$base/src/f")" = HELLO ] || fail "a write through a shared mapping is not on SOURCE"
	printf 'hello\n' >"$base/src/f"
else
	[ "$got" = "No_such_device No_such_device ok" ] ||
		fail "kernel_cache=never: shared-ro shared-rw private gave '$got', documented 'ENODEV ENODEV ok'"
fi
got=$(probe "$base/auto/f")
[ "$got" = "ok ok ok" ] || fail "default options: mmap gave '$got', expected 'ok ok ok'"
echo "PASS: mmap as documented for kernel_cache=never and the default"
