#!/bin/bash
# SPDX-License-Identifier: MIT
# readme_tour.sh ACCEL README DEMO: the README's "A 60-second tour" runs as
# written (issue 29). Its commands are read from README.md (the first ```sh
# block after the heading) and run in one bash with -e and pipefail, so the
# first one that fails fails the test and is named. Only these substitutions
# are made, so that the tour runs against a scratch mount of its own beside
# other tests:
#   scripts/demo        -> DEMO, with ACCELFS_DEMO_BUILD set to the build
#                          tree of ACCEL (no packages, no build) and
#                          ACCELFS_DEMO_POOL to this test's pool; the demo
#                          directory /tmp/accelfs-demo is given as its DIR
#   /tmp/accelfs-demo   -> a scratch directory
#   $OLDPWD/build       -> the build tree of ACCEL
#   accelfs-demo        -> this test's pool (the demo's pool name)
#   $A monitor ...      -> the same on a pseudo-terminal (script(1)) where
#                          "q" is typed, as the tour's comment says
# Root and FUSE are needed (else 77).
. "$(dirname "$0")/lib.sh"
README=$(realpath "${2:?usage: $0 ACCEL README DEMO}")
DEMO=$(realpath "${3:?usage: $0 ACCEL README DEMO}")
need_fuse
command -v script >/dev/null || skip "script(1) (util-linux) is needed for the monitor's terminal"
BUILD=$(dirname "$(dirname "$ACCEL")")
[ -x "$BUILD/fuse/accelfs" ] || fail "no accelfs beside $ACCEL ($BUILD/fuse/accelfs)"
POOL=accel-tour-$$
SEGMENTS+=("/$POOL")
DIR=$T/demo
MOUNTS+=("$DIR/mnt2" "$DIR/mnt")

# The tour: the lines of the first ```sh block after its heading.
awk '/^## A 60-second tour/ { in_tour = 1; next }
     in_tour && /^```sh$/ { in_block = 1; next }
     in_block && /^```$/ { exit }
     in_block { print }' "$README" >"$T/tour.orig"
[ -s "$T/tour.orig" ] || fail "no tour in $README (heading '## A 60-second tour', then a \`\`\`sh block)"
grep -q '^scripts/demo' "$T/tour.orig" || fail "the tour no longer starts with scripts/demo"

{
	echo 'set -eo pipefail'
	echo 'trap '\''echo "tour: this command failed: $BASH_COMMAND" >&2'\'' ERR'
	# "q" typed on a terminal of its own: the monitor quits
	echo 'on_tty() { printf q | TERM=xterm script -qec "$(printf "%q " "$@")" /dev/null; }'
	sed -e "s|^scripts/demo\\([^#]*[^ #]\\)|ACCELFS_DEMO_BUILD=$BUILD ACCELFS_DEMO_POOL=$POOL $DEMO\\1 $DIR|" \
		-e "s|/tmp/accelfs-demo|$DIR|g" \
		-e "s|\\\$OLDPWD/build|$BUILD|g" \
		-e "s|accelfs-demo|$POOL|g" \
		-e 's|^\$A monitor|on_tty $A monitor|' "$T/tour.orig"
} >"$T/tour.sh"
# nothing of the user's own demo (its directory, its pool) may be touched
! grep -n 'accelfs-demo' "$T/tour.sh" || fail "a path or pool of the real demo is left in the tour"
grep -q "^ACCELFS_DEMO_BUILD=.* $DIR\( \|\$\)" "$T/tour.sh" ||
	fail "the demo's line does not take $DIR: $(grep DEMO_BUILD "$T/tour.sh")"
echo "The tour as run:"
sed -n '4,$p' "$T/tour.sh"
echo

cd "$T" || fail "cd $T"
rc=0
bash "$T/tour.sh" >"$T/tour.out" 2>&1 || rc=$?
if [ $rc != 0 ]; then
	tail -40 "$T/tour.out"
	fail "the README's tour failed (exit $rc): $(grep '^tour: ' "$T/tour.out")"
fi
grep -q "^SALES.DAT\|SALES.DAT" "$T/tour.out" || fail "the tour's output names no SALES.DAT"
grep -q "new record" "$T/tour.out" || fail "the tour's write did not reach data/ (no 'new record')"
grep -q "^Pool /$POOL" "$T/tour.out" || fail "accel stat printed no pool $POOL"
grep -q "accelfs CACHE STATISTICS" "$T/tour.out" || fail "accel monitor drew no screen"
if grep -qs " $DIR/mnt " /proc/mounts; then
	fail "the tour's last line (fusermount3 -u mnt) left $DIR/mnt mounted"
fi
ok "every command of the README's tour ran ($(grep -vc '^\s*$' "$T/tour.orig") lines)"
