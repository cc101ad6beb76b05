#!/bin/bash
# SPDX-License-Identifier: MIT
# trap-status.sh TESTS-DIR: every test script's EXIT trap keeps the test's
# exit status. accel_cleanup and cfs_cleanup end with `exit $rc`, $rc being
# the status of the last command before them: a trap (or a function it
# calls) that runs anything first, without `(exit $rc)` right before the
# cleanup, turns a failing test into a passing one (four scripts did, one of
# them hiding ops_compare's failures over io_uring).
set -u
dir=${1:?usage: trap-status.sh TESTS-DIR}
check() { # FILE WHAT BODY: BODY calls a cleanup after other commands
	local body=$3
	grep -qE '(accel|cfs)_cleanup' <<<"$body" || return 0
	first=$(sed -E 's/^[[:space:]]+//' <<<"$body" | grep -vE '^(local rc=\$\?|rc=\$\?|\{|\}|#.*|)$' | head -1)
	case $first in
	accel_cleanup* | cfs_cleanup*) return 0 ;;
	esac
	grep -qF '(exit $rc)' <<<"$body" && return 0
	echo "$1: $2 runs '$first' before the cleanup without (exit \$rc): a failure would pass"
}
out=$(for f in $(find "$dir" -name '*.sh'); do
	grep -E '^[[:space:]]*trap .* EXIT' "$f" | while IFS= read -r line; do
		body=$(sed -nE "s/^[[:space:]]*trap '(.*)' EXIT.*/\\1/p" <<<"$line" | tr ';' '\n')
		[ -n "$body" ] && check "$f" "its trap" "$body"
		fn=$(sed -nE 's/^[[:space:]]*trap ([a-z_]+) EXIT.*/\1/p' <<<"$line")
		if [ -n "$fn" ] && grep -q "^$fn()" "$f"; then
			check "$f" "trap function $fn" "$(sed -n "/^$fn()/,/^}/p" "$f" | sed '1d;$d')"
		fi
	done
done)
[ -z "$out" ] && echo "ok: every EXIT trap keeps the test's status" && exit 0
echo "$out"
exit 1
