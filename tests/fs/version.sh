#!/bin/bash
# SPDX-License-Identifier: MIT
# version.sh: accelfs --version names the libfuse it was built with (the
# version meson found, LIBFUSE_VERSION) and which optional features that
# libfuse let it compile in: "+killpriv_v2" from 3.18 on, "-killpriv_v2"
# against Debian 12's 3.14. Needs no mount.
set -u
. "$(dirname "$0")/../lib/mount.sh"
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
echo "PASS: --version names libfuse $LIBFUSE_VERSION and its features"
