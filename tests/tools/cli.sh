#!/bin/bash
# SPDX-License-Identifier: MIT
# cli.sh - the dispatcher: help, version, per-command help, usage errors and
# their exit codes; bad input that needs no file system (nonexistent paths,
# a directory without -r, a malformed FDL with line and column).
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$ACCEL" --help
for c in analyze convert defrag; do
	grep -q "^  $c " <<<"$OUT" || fail "--help does not list $c"
done
expect_rc 0 "$ACCEL" --version
grep -q '^accel (accelfs) [0-9]' <<<"$OUT" || fail "--version: $OUT"
expect_rc 0 "$ACCEL" help defrag
grep -q -- '--hot-first' <<<"$OUT" || fail "help defrag lacks --hot-first"
grep -q 'global buffer pool' <<<"$OUT" || fail "help defrag must say --hot-first uses the pool statistics"
expect_rc 0 "$ACCEL" convert --help
expect_rc 2 "$ACCEL"
expect_rc 2 "$ACCEL" frobnicate
expect_rc 2 "$ACCEL" help frobnicate
expect_rc 2 "$ACCEL" analyze
expect_rc 2 "$ACCEL" defrag --bogus x
expect_rc 2 "$ACCEL" defrag --min-extents x y
expect_rc 2 "$ACCEL" convert onlyone
expect_rc 2 "$ACCEL" convert --replace a b
ok "usage"

expect_rc 1 "$ACCEL" analyze "$T/nope"
grep -q "^accel analyze: $T/nope: No such file or directory$" <<<"$OUT" || fail "$OUT"
expect_rc 1 "$ACCEL" defrag "$T/nope"
grep -q "^accel defrag: $T/nope: No such file or directory$" <<<"$OUT" || fail "$OUT"
expect_rc 1 "$ACCEL" convert "$T/nope" "$T/out"
[ ! -e "$T/out" ] || fail "convert of a missing file created OUT"
mkdir "$T/dir"
expect_rc 1 "$ACCEL" defrag "$T/dir"
grep -q "is a directory (use -r" <<<"$OUT" || fail "$OUT"
expect_rc 1 "$ACCEL" analyze "$T/dir"
ok "nonexistent path and directory without -r"

echo data >"$T/in"
printf '[file]\nsize = 5\n[allocation]\nbest_try_contigous = yes\n' >"$T/bad.fdl"
expect_rc 2 "$ACCEL" convert --fdl "$T/bad.fdl" "$T/in" "$T/out"
grep -q "bad.fdl:4:1: unknown key 'best_try_contigous' in section \[allocation\]" <<<"$OUT" ||
	fail "malformed FDL message: $OUT"
printf '[ownership]\nmode = 0999\n' >"$T/bad.fdl"
expect_rc 2 "$ACCEL" convert --fdl "$T/bad.fdl" "$T/in" "$T/out"
grep -q "bad.fdl:2:8: '0999' is not an octal number" <<<"$OUT" || fail "$OUT"
[ ! -e "$T/out" ] || fail "convert with a bad FDL created OUT"
ok "malformed FDL reported with line and column, nothing created"
