#!/bin/bash
# SPDX-License-Identifier: MIT
# fault.sh CASE: runs accelfs with one bad input and checks the contract for
# errors: the expected exit status (2 usage, 1 everything else), exactly one
# line on stderr starting "accelfs: " that names the offending path or
# option, nothing mounted, no daemon left and SOURCE untouched.
set -u
. "$(dirname "$0")/../lib/mount.sh"
trap accel_cleanup EXIT
accel_require_fuse
case=${1:?usage: fault.sh CASE}

accel_tmpdir
base=$ACCEL_TMP
src=$base/src
mnt=$base/mnt
mkdir "$src" "$mnt" "$src/sub"
printf 'keep me\n' >"$src/file"
setfattr -n user.k -v v "$src/file" 2>/dev/null || true
ln -s file "$src/link"
ACCEL_MNTS="$mnt $src/sub"

# Each case sets: args (the command line), want (exit status), name (a string
# the message must contain; an alternative may follow after '|'), pre (a
# command prefix, optional).
pre=()
lock_src=0
keep_pids="" # daemons the case started itself, still running at the end
o() { args=("$src" "$mnt" -o "$1"); want=2; name=${2:-$1}; }
case $case in
no-args) args=(); want=2; name="accelfs: " ;;
one-arg) args=("$src"); want=2; name="accelfs: " ;;
three-args) args=("$src" "$mnt" "$base/extra"); want=2; name="$base/extra" ;;
unknown-option) o bogus_option ;;
unknown-flag) args=(--bogus-flag "$src" "$mnt"); want=2; name=--bogus-flag ;;
backend-bad) o backend=turbo backend ;;
threads-zero) o threads=0 threads ;;
threads-too-many) o threads=65 threads ;;
threads-junk) o threads=4x threads ;;
threads-empty) o threads= threads ;;
attr-timeout-junk) o attr_timeout=soon attr_timeout ;;
attr-timeout-negative) o attr_timeout=-1 attr_timeout ;;
entry-timeout-junk) o entry_timeout=1.5.2 entry_timeout ;;
kernel-cache-bad) o kernel_cache=sometimes kernel_cache ;;
writeback-bad) o writeback=maybe writeback ;;
source-missing) args=("$base/nonexistent" "$mnt"); want=1; name="$base/nonexistent" ;;
source-file) args=("$src/file" "$mnt"); want=1; name="$src/file" ;;
source-unreadable)
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	lock_src=1
	# Root reads anything; drop the capabilities that let it.
	pre=(setpriv --inh-caps=-dac_override,-dac_read_search
		--bounding-set=-dac_override,-dac_read_search)
	args=("$src" "$mnt"); want=1; name="$src" ;;
mountpoint-missing) args=("$src" "$base/nomnt"); want=1; name="$base/nomnt" ;;
mountpoint-file) args=("$src" "$src/file"); want=1; name="$src/file" ;;
mountpoint-is-source) args=("$src" "$src"); want=1; name="$src" ;;
mountpoint-inside-source) args=("$src" "$src/sub"); want=1; name="$src/sub" ;;
mountpoint-inside-via-alias)
	# The same directory under another spelling: a symlink into SOURCE.
	ln -s "$src/sub" "$base/alias"
	args=("$src/." "$base/alias"); want=1; name="$base/alias|$src/sub" ;;
mountpoint-busy)
	# An accelfs already there: refused, not stacked on top.
	accel_mount "$src" "$mnt"
	keep_pids=$ACCEL_PID
	args=("$src" "$mnt" -o "pool=$ACCEL_POOL"); want=1; name="$mnt" ;;
log-relative) o log=daemon.log log ;;
*) fail "unknown case $case" ;;
esac

accel_tree_sum "$src" >"$base/before"
[ $lock_src = 0 ] || chmod 000 "$src"
grep -v "^$" /proc/self/mounts >"$base/mounts.before"

rc=0
timeout 20 "${pre[@]}" "$ACCELFS" "${args[@]}" >"$base/out" 2>"$base/err" || rc=$?
chmod 755 "$src"

echo "accelfs ${args[*]} -> exit $rc"
cat "$base/err"
[ $rc != 124 ] || fail "accelfs did not return within 20s"
[ $rc = "$want" ] || fail "exit status $rc, expected $want"
[ "$(wc -l <"$base/err")" = 1 ] || fail "stderr has $(wc -l <"$base/err") lines, expected 1"
grep -q '^accelfs: ' "$base/err" || fail "message does not start with 'accelfs: '"
found=0
IFS='|' read -ra names <<<"$name"
for n in "${names[@]}"; do
	grep -qF -- "$n" "$base/err" && found=1
done
[ $found = 1 ] || fail "message does not name '$name'"
[ ! -s "$base/out" ] || fail "unexpected output on stdout: $(head -c 200 "$base/out")"
# Only our own paths: other runs on this host may mount meanwhile.
new=$(grep -v "^$" /proc/self/mounts | diff "$base/mounts.before" - | grep '^>' |
	grep -F "$base")
[ -z "$new" ] || fail "something was mounted: $new"
[ "$(accel_daemon_pids "$mnt")$(accel_daemon_pids "$src/sub")" = "$keep_pids" ] ||
	fail "a daemon is still running"
accel_check_untouched "$src" "$base/before"
echo "PASS: $case"
