#!/bin/bash
# SPDX-License-Identifier: MIT
# pool_names.sh - one pool name grammar in every command (issue #29, items 2
# and 3): "name" and "/name" name the same pool in stat, show, report, warm
# and pool; a name with a '/' inside, or too long, is a usage error (exit 2)
# with the same line everywhere; a pool that does not exist is an error
# (exit 1) naming the pools there are, and no command creates a segment.
# (monitor takes the same path through poolsnap_target() but needs a
# terminal; stat_errors.sh covers what it does without one.)
# $1: accel; $2: the pool_workload helper.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool_lib.sh"

newpool names
echo data >"$T/f"
"$WORKLOAD" "$POOL" 64 4096 "$T/f:0:1:0" >/dev/null || fail "workload"
bare=${POOL#/}

# run_all SPELLING RC: each command with --pool SPELLING must exit RC; what they said goes
# to $T/all, each line after "CMD: "
run_all() {
	local spelling=$1 rc=$2
	said() { sed "s/^/$1: /" <<<"$OUT" >>"$T/all"; }
	expect_rc "$rc" "$ACCEL" stat --pool "$spelling" && said stat
	expect_rc "$rc" "$ACCEL" show "$T/f" --pool "$spelling" && said show
	expect_rc "$rc" "$ACCEL" report --dry-run --pool "$spelling" && said report
	expect_rc "$rc" "$ACCEL" warm -q "$T/f" --pool "$spelling" && said warm
	expect_rc "$rc" "$ACCEL" pool "$spelling" && said pool
}

for spelling in "$bare" "$POOL"; do
	run_all "$spelling" 0
	"$ACCEL" stat --json --pool "$spelling" >"$T/j" || fail "stat --json --pool $spelling"
	expect_eq "stat --pool $spelling" "$(jget "$T/j" 'j["pool"]["name"]')" "$POOL"
	"$ACCEL" show --json --pool "$spelling" "$T/f" >"$T/j" || fail "show --json --pool $spelling"
	expect_eq "show --pool $spelling" "$(jget "$T/j" 'j["files"][0]["pool"]')" "$POOL"
	expect_eq "show --pool $spelling: entry" \
		"$(jget "$T/j" 'j["files"][0]["pool_entry"] is not None')" True
	"$ACCEL" pool --json "$spelling" >"$T/j" || fail "pool --json $spelling"
	expect_eq "pool $spelling" "$(jget "$T/j" 'j["name"]')" "$POOL"
done
ok "\"name\" and \"/name\" are the same pool in stat, show, report, warm and pool"

# bad_name NAME: every command refuses it with exit 2 and the same line
bad_name() {
	local cmd line
	: >"$T/all"
	run_all "$1" 2
	line="pool name \"$1\": need \"name\" or \"/name\" without another '/', up to 62 bytes"
	for cmd in stat show report warm pool; do
		grep -qxF "$cmd: accel $cmd: $line" "$T/all" || fail "$cmd --pool $1: $(cat "$T/all")"
	done
	# (not a listing of /dev/shm before and after: tests running beside
	# this one make and remove their own pools meanwhile)
	local base=${1#/}
	[ -z "$base" ] || [ ! -e "/dev/shm/${base%%/*}" ] || fail "a segment appeared for $1"
}
bad_name "a/b"
bad_name "/a/b"
bad_name "/"
bad_name "$(printf 'x%.0s' $(seq 63))"
ok "a bad pool name is a usage error, with one line, in every command"

# a misspelt pool: exit 1, the pools that exist, and nothing made
: >"$T/all"
run_all "nmae-$$" 1
for cmd in stat show report warm pool; do
	grep -Eq "^$cmd: accel $cmd: pool nmae-$$: no such pool \(pools: (.*, )?$bare(, .*)?\)$" "$T/all" ||
		fail "$cmd --pool nmae-$$: $(cat "$T/all")"
done
expect_rc 1 "$ACCEL" pool --reset "nmae-$$"
grep -q "^accel pool: pool nmae-$$: no such pool (pools: " <<<"$OUT" || fail "pool --reset: $OUT"
expect_rc 1 "$ACCEL" pool --recover "nmae-$$"
grep -q "^accel pool: pool nmae-$$: no such pool (pools: " <<<"$OUT" || fail "pool --recover: $OUT"
[ ! -e "/dev/shm/nmae-$$" ] || fail "a segment appeared: /dev/shm/nmae-$$"
ok "a pool that does not exist is named with those that do; no command creates one"
