#!/bin/bash
# SPDX-License-Identifier: MIT
# deb.sh SRCDIR - the Debian package, as an admin gets it: built by
# dpkg-buildpackage from what is committed in SRCDIR (git archive HEAD, plus
# the libfuse source in subprojects/libfuse when present), checked by lintian
# (no errors; warnings printed), installed with dpkg -i, mounted through
# mount -t fuse.accelfs, read back, `accel stat`, bash completion and the
# logrotate file exercised, unmounted, the accelfs@ unit started and stopped
# when systemd is PID 1, then purged: no file of the package may be left.
#
# It installs into the system, so one run at a time (a lock), an accelfs
# package already installed is purged first (refused while a daemon runs
# from it), and the EXIT trap unmounts, stops the unit, purges the package
# and removes the pool even when a check fails.
set -u
. "$(dirname "$0")/../lib/mount.sh"
src=${1:?usage: deb.sh SRCDIR}
ACCEL_POOL=/accel-t-deb-$$
pool=${ACCEL_POOL#/}
sys_path=/usr/sbin:/usr/bin:/sbin:/bin
installed=0 unit=""

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i, mount)"
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage is missing (package dpkg-dev; scripts/install-deps)"
command -v lintian >/dev/null || skip "lintian is missing (scripts/install-deps)"
command -v git >/dev/null && git -C "$src" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
	skip "$src is not a git checkout: nothing committed to build"
[ -c /dev/fuse ] && { : </dev/fuse; } 2>/dev/null || skip "/dev/fuse is missing or cannot be opened"
# mount.fuse3 runs "accelfs" from sh's default PATH, which puts /usr/local first
shadow=$(env -i /bin/sh -c 'command -v accelfs' || true)
case $shadow in
/usr/local/*) skip "$shadow (a meson install?) comes before /usr/bin/accelfs in mount.fuse3's PATH" ;;
esac

deb_cleanup() {
	local rc=$? m
	if [ -n "$unit" ]; then
		systemctl stop "$unit" 2>/dev/null
		rm -f "/etc/accelfs/${unit#accelfs@}.conf"
	fi
	for m in $ACCEL_MNTS; do
		accel_umount "$m" || echo "cleanup: could not unmount $m" >&2
	done
	for p in $ACCEL_PIDS; do # gone before their binary is
		kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
		accel_wait_exit "$p" 10 || kill -KILL "$p" 2>/dev/null
	done
	if [ "$installed" = 1 ]; then
		dpkg --purge accelfs >/dev/null || echo "cleanup: dpkg --purge accelfs failed" >&2
	fi
	if [ -n "$unit" ]; then
		systemctl daemon-reload
		systemctl reset-failed "$unit" 2>/dev/null
	fi
	(exit $rc)
	accel_cleanup # waits for the daemons, removes the pool and the temporary directory
}
trap deb_cleanup EXIT

mkdir -p /run/lock
exec 9>/run/lock/accelfs-deb-test.lock
flock -w 120 9 || skip "another run of this test holds /run/lock/accelfs-deb-test.lock"

accel_tmpdir
tmp=$ACCEL_TMP
mkdir "$tmp/accelfs"
git -C "$src" archive HEAD | tar -x -C "$tmp/accelfs" || fail "git archive HEAD of $src"
libfuse=""
if [ -f "$src/subprojects/libfuse/meson.build" ]; then
	mkdir -p "$tmp/accelfs/subprojects"
	cp -a "$src/subprojects/libfuse" "$tmp/accelfs/subprojects/" || fail "copying subprojects/libfuse"
	# its Debian version, [epoch:]upstream-revision: accelfs --version names the upstream one
	libfuse=$(sed -n 's/^[0-9]*://; s/-[^-]*$//p' "$src/subprojects/libfuse/.accelfs-version" 2>/dev/null)
fi
if ! unmet=$(cd "$tmp/accelfs" && dpkg-checkbuilddeps 2>&1); then
	skip "build dependencies missing (scripts/install-deps): ${unmet##*: }"
fi

# --- build --------------------------------------------------------------
start=$SECONDS
if ! (cd "$tmp/accelfs" && DEB_BUILD_OPTIONS="parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	fail "dpkg-buildpackage -us -uc -b failed (the end of its log above)"
fi
deb=$(ls "$tmp"/accelfs_*_"$(dpkg --print-architecture)".deb 2>/dev/null)
[ -f "$deb" ] || fail "no accelfs .deb in $tmp: $(ls "$tmp")"
ok "built ${deb##*/} in $((SECONDS - start)) s"
if dpkg-deb -c "$deb" | grep -E 'fuse3\.pc|libfuse3|/include/'; then
	fail "the package carries libfuse's own files (listed above)"
fi

# --- lintian: errors fail, warnings are shown ----------------------------
lintian --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1
sed 's/^/lintian: /' "$tmp/lintian.log"
if grep -q '^E: ' "$tmp/lintian.log"; then
	fail "lintian reports errors"
fi
ok "lintian: no errors ($(grep -c '^W: ' "$tmp/lintian.log") warnings)"

# --- install ---------------------------------------------------------------
if dpkg-query -W -f='${db:Status-Status}' accelfs 2>/dev/null | grep -qv '^not-installed$'; then
	for e in /proc/[0-9]*/exe; do
		[ "$(readlink "$e" 2>/dev/null)" = /usr/bin/accelfs ] &&
			skip "accelfs daemon ${e//[^0-9]/} runs from the installed accelfs package; not purging it"
	done
	echo "purging the accelfs package of an earlier run"
	dpkg --purge accelfs >/dev/null || fail "dpkg --purge of the installed accelfs failed"
fi
installed=1
dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i ${deb##*/} failed"; }
[ "$(dpkg-query -W -f='${db:Status-Status}' accelfs)" = installed ] || fail "accelfs is not installed after dpkg -i"
for prog in accelfs accel; do
	[ "$(PATH=$sys_path command -v $prog)" = /usr/bin/$prog ] || fail "$prog is not /usr/bin/$prog in PATH"
done
version=$(/usr/bin/accelfs --version) || fail "the installed accelfs does not run"
echo "$version"
if [ -n "$libfuse" ]; then
	grep -qF "libfuse $libfuse" <<<"$version" || fail "not built with the bundled libfuse $libfuse"
fi
if ldd /usr/bin/accelfs /usr/bin/accel | grep 'not found'; then
	fail "a library the binaries need is missing"
fi
dpkg -L accelfs >"$tmp/files"
for page in "$tmp"/accelfs/docs/man/*.[18]; do
	p=${page##*/}
	grep -qx "/usr/share/man/man${p##*.}/$p.gz" "$tmp/files" || fail "man page $p is not in the package"
done
for f in /lib/systemd/system/accelfs@.service /etc/logrotate.d/accelfs \
	/usr/share/bash-completion/completions/accel /usr/share/bash-completion/completions/accelfs; do
	[ -e "$f" ] || fail "$f is missing"
done
man -w accelfs >/dev/null 2>&1 || fail "man -w accelfs finds no page"
ok "installed: /usr/bin/accelfs, /usr/bin/accel, $(grep -c '^/usr/share/man/' "$tmp/files") man paths, unit, completion, logrotate"

if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify /lib/systemd/system/accelfs@.service 2>&1)
	[ -z "$out" ] || echo "$out"
	if grep -q 'accelfs@' <<<"$out"; then
		fail "systemd-analyze verify finds fault with accelfs@.service"
	fi
	ok "systemd-analyze verify accelfs@.service"
fi

# --- mount -t fuse.accelfs ------------------------------------------------------
mkdir "$tmp/src" "$tmp/mnt"
head -c 3000000 /dev/urandom >"$tmp/src/data"
echo "first line" >"$tmp/src/log.txt"
ACCEL_MNTS="$tmp/mnt"
# log=: not the system's /var/log/accelfs.log; the file is the one rotated below
if ! PATH=$sys_path timeout 30 mount -t fuse.accelfs "$tmp/src" "$tmp/mnt" \
	-o "pool=$pool,log=$tmp/accelfs.log" 2>"$tmp/mount.err"; then
	cat "$tmp/mount.err"
	fail "mount -t fuse.accelfs failed"
fi
accel_is_mounted "$tmp/mnt" || fail "mount returned but $tmp/mnt is not mounted"
ACCEL_PIDS=$(accel_daemon_pids "$tmp/mnt")
[ -n "$ACCEL_PIDS" ] || fail "no accelfs process serves $tmp/mnt"
for p in $ACCEL_PIDS; do
	[ "$(readlink "/proc/$p/exe")" = /usr/bin/accelfs ] ||
		fail "the daemon is $(readlink "/proc/$p/exe"), not the package's /usr/bin/accelfs"
done
fstype=$(awk -v m="$tmp/mnt" '$2 == m { print $3 }' /proc/self/mounts)
[ "$fstype" = fuse.accelfs ] || fail "file system type is '$fstype', expected fuse.accelfs"
cmp "$tmp/src/data" "$tmp/mnt/data" || fail "a file does not read back the same through the mount"
echo "through the mount" >>"$tmp/mnt/log.txt"
ok "mount -t fuse.accelfs: /usr/bin/accelfs serves $tmp/mnt; a 3 MB file reads back"

/usr/bin/accel stat --pool "$pool" >"$tmp/stat.out" 2>&1 || { cat "$tmp/stat.out"; fail "accel stat --pool $pool failed"; }
head -n 12 "$tmp/stat.out"
grep -q "/$pool" "$tmp/stat.out" || fail "accel stat does not name pool /$pool"
ok "accel stat --pool $pool"

# --- bash completion, through bash-completion's loader -----------------------
# comp LINE: what TAB offers at the end of LINE (words split as readline
# splits them: at blanks, and '=' as a word of its own).
cat >"$tmp/comp.sh" <<'EOF'
. /usr/share/bash-completion/bash_completion
comp() {
	local line=$1 tok f
	COMP_LINE=$line COMP_POINT=${#line} COMP_WORDS=()
	for tok in $line; do
		while [[ $tok == *=* ]]; do
			[[ -n ${tok%%=*} ]] && COMP_WORDS+=("${tok%%=*}")
			COMP_WORDS+=("=")
			tok=${tok#*=}
		done
		[[ -n $tok ]] && COMP_WORDS+=("$tok")
	done
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	_completion_loader "${COMP_WORDS[0]}"
	f=$(complete -p "${COMP_WORDS[0]}" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	COMPREPLY=()
	"$f" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}"
}
EOF
comp_has() { # LINE WORD: TAB at the end of LINE offers WORD
	PATH=$sys_path bash --norc -c '. "$1"; comp "$2"' - "$tmp/comp.sh" "$1" | grep -qxF -- "$2" ||
		fail "completion of '$1' does not offer '$2'"
}
comp_has "accel st" stat
comp_has "accel help mon" monitor
comp_has "accel stat --po" --pool
comp_has "accel stat --pool accel-t-d" "$pool"
comp_has "accel pool --reset " "$pool"
comp_has "accel set --passthrough=al" always
comp_has "accel defrag --method " move
comp_has "accel trace " cache-stats
comp_has "accelfs -" --version
comp_has "accelfs /srv /mnt -o allow_o" allow_other
comp_has "accelfs /srv /mnt -o allow_other,back" allow_other,backend=
comp_has "accelfs /srv /mnt -o ro,backend=ur" uring
comp_has "accelfs /srv /mnt -o pool=" "$pool"
ok "bash completion: accel subcommands, options, values, pools; accelfs -o names, values, pools"

# --- logrotate: the package's stanza, on this daemon's log -----------------------
if command -v logrotate >/dev/null; then
	sed "s|^/var/log/accelfs.log |$tmp/accelfs.log |" /etc/logrotate.d/accelfs >"$tmp/logrotate.conf"
	grep -q "^$tmp/accelfs.log {" "$tmp/logrotate.conf" || fail "no /var/log/accelfs.log stanza in /etc/logrotate.d/accelfs"
	logrotate -f -s "$tmp/logrotate.state" "$tmp/logrotate.conf" 2>&1 || fail "logrotate failed"
	[ -s "$tmp/accelfs.log.1" ] || fail "logrotate made no $tmp/accelfs.log.1"
	[ ! -s "$tmp/accelfs.log" ] || fail "the rotated log is not empty"
	ok "logrotate rotated the daemon's log (copytruncate)"
else
	echo "logrotate is not installed: /etc/logrotate.d/accelfs not exercised"
fi

PATH=$sys_path umount "$tmp/mnt" || fail "umount $tmp/mnt failed"
for p in $ACCEL_PIDS; do
	accel_wait_exit "$p" 20 || fail "daemon $p still runs 20 s after umount"
done
! accel_is_mounted "$tmp/mnt" || fail "$tmp/mnt is still mounted after umount"
[ "$(tail -n 1 "$tmp/src/log.txt")" = "through the mount" ] || fail "the write through the mount is not in SOURCE"
if [ -f "$tmp/accelfs.log.1" ]; then
	grep -q unmounting "$tmp/accelfs.log" ||
		fail "the daemon did not go on logging into the truncated $tmp/accelfs.log"
	ok "after rotation the daemon logged its unmount into the same accelfs.log"
fi
/usr/bin/accel pool --reset "$pool" >/dev/null || fail "accel pool --reset $pool"
ok "umount: daemon gone, the write is in SOURCE, pool removed"

# --- the systemd unit -------------------------------------------------------------
pid1=$(cat /proc/1/comm 2>/dev/null)
if [ "$pid1" = systemd ] && [ -d /run/systemd/system ]; then
	mkdir "$tmp/mnt2"
	inst=$(systemd-escape --path "$tmp/mnt2")
	unit=accelfs@$inst
	ACCEL_MNTS="$ACCEL_MNTS $tmp/mnt2"
	printf 'SOURCE=%s\nOPTIONS=pool=%s\n' "$tmp/src" "$pool" >"/etc/accelfs/$inst.conf"
	systemctl daemon-reload
	systemctl start "$unit" || { systemctl status "$unit" --no-pager; fail "systemctl start $unit failed"; }
	accel_is_mounted "$tmp/mnt2" || fail "$unit is active but $tmp/mnt2 is not mounted"
	ACCEL_PIDS="$ACCEL_PIDS $(accel_daemon_pids "$tmp/mnt2")"
	cmp "$tmp/src/data" "$tmp/mnt2/data" || fail "a file does not read back through $unit's mount"
	echo "through the unit" >>"$tmp/mnt2/log.txt"
	systemctl stop "$unit" || fail "systemctl stop $unit failed"
	! accel_is_mounted "$tmp/mnt2" || fail "$tmp/mnt2 is still mounted after systemctl stop"
	[ "$(tail -n 1 "$tmp/src/log.txt")" = "through the unit" ] || fail "the write through $unit's mount is not in SOURCE"
	rm -f "/etc/accelfs/$inst.conf"
	ok "systemctl start/stop $unit: mounted, read back, unmounted with the write in SOURCE"
else
	echo "systemd is not PID 1 here (PID 1 is '${pid1:-?}'): accelfs@.service not started"
fi

# --- purge: nothing of the package is left ---------------------------------------
dpkg -L accelfs >"$tmp/files"
dpkg --purge accelfs >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge accelfs failed"; }
installed=0
! dpkg-query -W -f='${db:Status-Status}' accelfs 2>/dev/null | grep -qv '^not-installed$' ||
	fail "accelfs is still known to dpkg after --purge"
left=0
while read -r f; do
	[ "$f" = /. ] && continue
	[ -e "$f" ] || [ -L "$f" ] || continue
	# a directory (or /lib, a link to one) stays where another package has files
	[ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
	echo "left after purge: $f"
	left=1
done <"$tmp/files"
[ $left = 0 ] || fail "dpkg --purge left files of the package behind"
ok "dpkg --purge accelfs: none of its $(wc -l <"$tmp/files") paths left"
echo "PASS: Debian package built, lintian-clean, installed, mounted, purged ($SECONDS s)"
