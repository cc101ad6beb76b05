#!/bin/bash
# SPDX-License-Identifier: MIT
# posix-gaps.sh [MOUNT-OPTIONS]: POSIX behaviour of issue 28 through the
# mount, as user nobody, against a local directory as the reference:
#   utimes-now-writer  utimensat(NULL) by a writer who is not the owner
#                      (EPERM under the writeback cache: the kernel sends
#                      "now" as explicit times);
#   opendir-0400       listing one's own directory of mode 0400 (EACCES
#                      where the daemon served OPENDIR: it reopened ".");
#   tmpfile-link       open(O_TMPFILE), write, linkat of /proc/self/fd/N
#                      (no tmpfile operation; -tmpfile builds skip it)
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
command -v setpriv >/dev/null || skip "setpriv is not installed"
PY=/usr/bin/python3
[ -x $PY ] || skip "$PY is needed"
accel_tmpdir
base=$ACCEL_TMP
mkdir -p "$base/src/d" "$base/ref/d" "$base/mnt"
for t in src ref; do
	chmod 777 "$base/$t/d"
	touch "$base/$t/d/owned-by-root"
	chmod 666 "$base/$t/d/owned-by-root"
done
accel_mount "$base/src" "$base/mnt" -o "allow_other${1:+,$1}"
run() {
	setpriv --reuid=65534 --regid=65534 --clear-groups $PY "$(dirname "$0")/posix_gaps.py" "$1"
}
run "$base/ref" >"$base/ref.out" 2>&1 || fail "reference run: $(cat "$base/ref.out")"
run "$base/mnt" >"$base/mnt.out" 2>&1 || fail "mount run: $(cat "$base/mnt.out")"
if "$ACCELFS" --version | grep -q -- -tmpfile; then
	echo "tmpfile-link: this build has no tmpfile operation (libfuse < 3.18): not compared"
	sed -i "/^tmpfile-link /d" "$base/ref.out" "$base/mnt.out"
fi
paste -d"|" "$base/ref.out" "$base/mnt.out" | while IFS='|' read -r r m; do echo "local: $r   mount: $m"; done
cmp -s "$base/ref.out" "$base/mnt.out" || fail "the mount differs from a local directory"
echo "PASS: ${1:-default}: as on a local file system"
