#!/bin/bash
# SPDX-License-Identifier: MIT
# check-install.sh BUILDDIR - `meson install` puts the binaries, man pages and
# documentation where a Linux user looks for them (checked in a DESTDIR).
# --skip-subprojects: a bundled libfuse (subprojects/libfuse) is linked into
# accelfs statically; its own headers, static library and fuse3.pc are not
# ours to install (they would shadow the system libfuse for other builds).
set -euo pipefail
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet --skip-subprojects
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
fail=0
for f in bin/accelfs bin/accel share/man/man8/accelfs.8 share/man/man1/accel.1 \
	share/doc/accelfs/README.md share/accelfs/scripts/install-deps share/accelfs/bpftrace/cache-stats.bt; do
	if [ -e "$dest$prefix/$f" ]; then
		echo "ok: $prefix/$f"
	else
		echo "MISSING: $prefix/$f"
		fail=1
	fi
done
"$dest$prefix/bin/accelfs" --version | grep -q '^accelfs ' || { echo "installed accelfs does not run"; fail=1; }
# Only system libraries: none missing, none from the build tree or a prefix of ours.
libs=$(ldd "$dest$prefix/bin/accelfs")
echo "$libs"
if echo "$libs" | grep -E 'not found|/build|/subprojects/|/usr/local/'; then
	echo "installed accelfs needs a library that is not the system's"
	fail=1
fi
if [ -e "$dest$prefix/include/fuse3" ] || find "$dest" -name 'libfuse3*' | grep -q .; then
	echo "libfuse's own files were installed"
	fail=1
fi
exit $fail
