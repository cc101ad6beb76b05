#!/bin/bash
# SPDX-License-Identifier: MIT
# version.sh: accelfs --version names the libfuse it was built with (the
# version meson found, LIBFUSE_VERSION) and which optional features that
# libfuse let it compile in: "+killpriv_v2" from 3.18 on, "-killpriv_v2"
# against Debian 12's 3.14. Needs no mount.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
[ -n "${LIBFUSE_VERSION:-}" ] || fail "LIBFUSE_VERSION is not set"

out=$("$ACCELFS" --version) || fail "--version exited $?"
echo "$out"
re='^accelfs [0-9]+\.[0-9]+\.[0-9]+ \(libfuse ([0-9.]+): ([+-][a-z0-9_]+( [+-][a-z0-9_]+)*)\)$'
[[ $out =~ $re ]] || fail "--version is not 'accelfs X.Y.Z (libfuse V: +feature -feature ...)': $out"
[ "${BASH_REMATCH[1]}" = "$LIBFUSE_VERSION" ] ||
	fail "--version says libfuse ${BASH_REMATCH[1]}, meson built with $LIBFUSE_VERSION"
features=" ${BASH_REMATCH[2]} "
if dpkg --compare-versions "$LIBFUSE_VERSION" ge 3.18; then
	want=+killpriv_v2
else
	want=-killpriv_v2
fi
[[ $features == *" $want "* ]] || fail "libfuse $LIBFUSE_VERSION: expected $want in '$out'"
# Kernel passthrough came with libfuse 3.16; without it passthrough=auto (the
# default) is accepted and does nothing, passthrough=always refuses to start.
if dpkg --compare-versions "$LIBFUSE_VERSION" ge 3.16; then
	[[ $features == *" +passthrough "* ]] || fail "libfuse $LIBFUSE_VERSION: no +passthrough"
else
	[[ $features == *" -passthrough "* ]] || fail "libfuse $LIBFUSE_VERSION: no -passthrough"
	accel_tmpdir
	mkdir "$ACCEL_TMP/s" "$ACCEL_TMP/m"
	rc=0
	"$ACCELFS" "$ACCEL_TMP/s" "$ACCEL_TMP/m" -o passthrough=always 2>"$ACCEL_TMP/err" || rc=$?
	[ $rc = 1 ] && [ "$(grep -c . "$ACCEL_TMP/err")" = 1 ] &&
		grep -q "passthrough=always needs libfuse >= 3.16" "$ACCEL_TMP/err" ||
		fail "passthrough=always against $LIBFUSE_VERSION: exit $rc, $(cat "$ACCEL_TMP/err")"
	! accel_is_mounted "$ACCEL_TMP/m" || fail "mounted anyway"
fi
echo "PASS: --version names libfuse $LIBFUSE_VERSION and its features"
