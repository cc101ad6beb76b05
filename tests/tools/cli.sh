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
# bad_fdl WANT TEXT: convert --fdl refuses TEXT with exactly the message WANT, creating nothing
bad_fdl() {
	printf "$2" >"$T/bad.fdl"
	expect_rc 2 "$ACCEL" convert --fdl "$T/bad.fdl" "$T/in" "$T/out"
	expect_eq "FDL $2" "$OUT" "accel convert: $T/bad.fdl:$1"
	[ ! -e "$T/out" ] || fail "convert with a bad FDL created OUT"
}
bad_fdl "4:2: FILE BEST_TRY_CONTIGOUS: not an attribute accelfs reads (see docs/defrag.md)" \
	'IDENT "x"\nFILE\n\tALLOCATION 8\n\tBEST_TRY_CONTIGOUS yes\n'
bad_fdl "2:22: FILE ORGANIZATION indexed: accelfs converts sequential files only (a Linux file is a stream of bytes; indexed files need RMS)" \
	'FILE\n\tORGANIZATION        indexed\n'
bad_fdl "2:15: FILE ORGANIZATION relative: accelfs converts sequential files only (a Linux file is a stream of bytes; relative files need RMS)" \
	'FILE\n\tORGANIZATION relative\n'
bad_fdl "3:1: KEY describes an index of an indexed file; accelfs converts sequential files only" \
	'FILE\n\tORGANIZATION sequential\nKEY 0\n'
bad_fdl "3:18: ACCELFS GLOBAL_BUFFERS: 'lots' is not a valid value (N (0..268435456), all or default)" \
	'FILE\nACCELFS\n\tGLOBAL_BUFFERS  lots\n'
bad_fdl "2:7: LINUX MODE: '0999' is not an octal number" 'LINUX\n\tMODE 0999\n'
# the older INI form is read as before, its errors named the same way
bad_fdl "4:1: unknown key 'best_try_contigous' in section [allocation]" \
	'[file]\nsize = 5\n[allocation]\nbest_try_contigous = yes\n'
bad_fdl "2:8: mode: '0999' is not an octal number" '[ownership]\nmode = 0999\n'
ok "malformed FDL reported as FILE:LINE:COL with the keyword, nothing created"
