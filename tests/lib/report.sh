# SPDX-License-Identifier: MIT
# tests/lib/report.sh: how every shell test reports, defined once (sourced by
# tests/lib/mount.sh and tests/tools/lib.sh).
#   skip REASON   the test cannot run here: prints why, exits 77 (meson: skipped)
#   fail MESSAGE  the test found a problem: prints it, exits 1
#   ok MESSAGE    one passed step, for the log

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

ok() {
	echo "ok - $*"
}
