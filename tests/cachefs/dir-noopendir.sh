#!/bin/bash
# SPDX-License-Identifier: MIT
# dir-noopendir.sh: while a watcher runs and the kernel checks permissions
# (a root daemon with allow_other: default_permissions with POSIX ACLs), the
# kernel opens directories itself (ops_dir.c): hot `find -ls` runs send no
# OPENDIR and no RELEASEDIR (the first OPENDIR is answered ENOSYS), and what
# they list equals SOURCE. An outside create and unlink in a listed directory
# show within BOUND ms. As nobody, opening directories gives the answers
# SOURCE gives: a 0700 one, a 0711 one, one an ACL denies, and one chmod'ed
# 0700 in SOURCE behind the mount after nobody listed it. Control: with
# watch=off every directory is opened through the daemon. Requests are
# counted in the -d trace.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
BOUND=${WATCH_BOUND_MS:-5000}
command -v setpriv >/dev/null || skip "setpriv is missing (util-linux)"
cfs_init
cfs_pool noopd
mkdir m
mkdir -p src/t/a/b src/t/c src/t/later
for d in a a/b c later; do
	for i in $(seq 20); do echo "$i" >"src/t/$d/f$i"; done
done
mkdir -m 700 src/t/private && : >src/t/private/x
mkdir -m 711 src/t/execonly && : >src/t/execonly/x
mkdir -m 755 src/t/acl && : >src/t/acl/x
acl=no
command -v setfacl >/dev/null && setfacl -m u:nobody:--- src/t/acl 2>/dev/null && acl=yes
[ $acl = yes ] || echo "note: no POSIX ACLs here (setfacl missing or refused): ACL case skipped"

opendirs() { grep -ac 'opcode: OPENDIR' "$ACCEL_LOG"; }
releasedirs() { grep -ac 'opcode: RELEASEDIR' "$ACCEL_LOG"; }
tree() { (cd "$1" && find . -printf '%p %y %s %m\n' | sort); }
as_nobody_ls() { # the answer nobody gets listing DIR: its names or the error
	setpriv --reuid=65534 --regid=65534 --clear-groups ls "$1" 2>&1 | sed "s|$1|DIR|g"
}

accel_mount "$PWD/src" "$PWD/m" -d -o "pool=$POOL,allow_other"
watch_require "$PWD/m"
tree m/t >/dev/null # cold: names, attributes and listings into the kernel
o0=$(opendirs) r0=$(releasedirs)
for _ in 1 2 3; do find m/t -ls >/dev/null; done
o=$(($(opendirs) - o0)) r=$(($(releasedirs) - r0))
echo "3 hot find -ls runs: $o OPENDIR, $r RELEASEDIR requests (first OPENDIR ever: $o0)"
[ "$o0" -le 1 ] || fail "the cold walk sent $o0 OPENDIR requests, want at most 1"
[ "$o" -eq 0 ] && [ "$r" -eq 0 ] || fail "hot walks sent $o OPENDIR and $r RELEASEDIR"
grep -aq 'opcode: OPENDIR' "$ACCEL_LOG" || fail "no OPENDIR at all: the kernel was never told"
[ "$(tree m/t)" = "$(tree src/t)" ] || fail "the mount's listing differs from SOURCE's"
echo "ok: directories opened by the kernel, listings equal SOURCE's"

: >src/t/a/outside
wait_for "$BOUND" yes sh -c "ls m/t/a | grep -qx outside && echo yes" ||
	fail "a file created in SOURCE is not listed within ${BOUND} ms"
rm src/t/a/outside
wait_for "$BOUND" no sh -c "ls m/t/a | grep -qx outside && echo yes || echo no" ||
	fail "a file removed in SOURCE is still listed after ${BOUND} ms"
[ "$(tree m/t)" = "$(tree src/t)" ] || fail "after outside changes the listings differ"
echo "ok: outside create and unlink listed within ${BOUND} ms"

cases="private execonly later"
[ $acl = yes ] && cases="$cases acl"
as_nobody_ls m/t/later >/dev/null # nobody's listing is cached before the chmod
chmod 700 src/t/later
wait_for "$BOUND" 700 stat -c %a m/t/later || fail "chmod in SOURCE not seen within ${BOUND} ms"
for d in $cases; do
	got=$(as_nobody_ls "m/t/$d") want=$(as_nobody_ls "src/t/$d")
	[ "$got" = "$want" ] || fail "nobody lists $d: mount says '$got', SOURCE says '$want'"
	echo "ok: nobody lists $d: $want"
done
accel_umount "$PWD/m" || fail "unmount failed"

accel_mount "$PWD/src" "$PWD/m" -d -o "pool=$POOL,allow_other,watch=off"
find m/t >/dev/null
o0=$(opendirs)
find m/t -ls >/dev/null
o=$(($(opendirs) - o0))
[ "$o" -gt 0 ] || fail "watch=off: a walk sent no OPENDIR"
echo "ok: watch=off: $o OPENDIR requests for one walk"
echo "PASS: directories opened without a request while the watcher runs"
