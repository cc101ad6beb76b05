// SPDX-License-Identifier: MIT
/*
 * test_cli.c - the option loop every accel command shares (tools/cli.c):
 * each kind of option, --help, bad options, refused values with and without
 * keep_going, the operand checks with their exact messages, and a second
 * parse starting afresh.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cunit_main.h"
#include "util.h"

/* What the options and callbacks below saw; cleared by parse(). */
static struct {
	bool json, verbose;
	const char *file, *pool, *level;
	int helps, bad_options, takes;
} seen;

static char err[2048]; /* stderr of the last parse() */

/* @s is @want (and not NULL, which CU_ASSERT_STRING_EQUAL would crash on). */
static bool is(const char *s, const char *want)
{
	return s && strcmp(s, want) == 0;
}

static void help(void)
{
	seen.helps++;
}

static void bad_option(void)
{
	seen.bad_options++;
}

/* Keeps any value but "bad", which it refuses with a message. */
static int take_level(const struct cli_opt *opt, const char *arg)
{
	seen.takes++;
	if (strcmp(arg, "bad") == 0) {
		util_err("t", NULL, "--%s: '%s' refused", opt->name, arg);
		return -EINVAL;
	}
	*(const char **)opt->to = arg;
	return 0;
}

static const struct cli_opt opts[] = {
	{ .name = "json", .flag = &seen.json },
	{ .name = "verbose", .letter = 'v', .flag = &seen.verbose },
	{ .name = "file", .string = &seen.file },
	{ .name = "pool", .letter = 'p', .string = &seen.pool },
	{ .name = "level", .take = take_level, .to = &seen.level },
	{ NULL },
};

/* Command "t", taking no operands; each test changes what it needs. */
static struct cli_cmd command(void)
{
	return (struct cli_cmd){ .name = "t", .help = help, .bad_option = bad_option };
}

/* cli_parse() of @argv (NULL-terminated, argv[0] "t") with its stderr in err[]. */
static int parse(const struct cli_cmd *cmd, char **argv)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), argc = 0, ret;
	size_t n;

	while (argv[argc])
		argc++;
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	ret = cli_parse(cmd, opts, argc, argv);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, sizeof(err) - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

static void test_kinds(void)
{
	struct cli_cmd cmd = command();
	char *argv[] = { "t", "--json", "--file", "a", "-v", "--pool=p", "--level", "3", NULL };
	char *abbrev[] = { "t", "--fi", "x", "--file=y", "-vpq", "--lev=4", NULL };

	CU_ASSERT_EQUAL(parse(&cmd, argv), CLI_GO_ON);
	CU_ASSERT_TRUE(seen.json && seen.verbose);
	CU_ASSERT_TRUE(is(seen.file, "a"));
	CU_ASSERT_TRUE(is(seen.pool, "p"));
	CU_ASSERT_TRUE(is(seen.level, "3"));
	CU_ASSERT_EQUAL(seen.takes, 1);
	CU_ASSERT_EQUAL(optind, 8);
	CU_ASSERT_STRING_EQUAL(err, "");

	/* Abbreviations, the last --file wins, a letter's argument glued on. */
	CU_ASSERT_EQUAL(parse(&cmd, abbrev), CLI_GO_ON);
	CU_ASSERT_FALSE(seen.json);
	CU_ASSERT_TRUE(seen.verbose);
	CU_ASSERT_TRUE(is(seen.file, "y"));
	CU_ASSERT_TRUE(is(seen.pool, "q"));
	CU_ASSERT_TRUE(is(seen.level, "4"));
}

static void test_help(void)
{
	struct cli_cmd cmd = command();
	char *later[] = { "t", "--json", "--help", "--bogus", "--level", "bad", NULL };
	char *letter[] = { "t", "-vh", NULL };
	char *after_bad[] = { "t", "--bogus", "--help", NULL };

	/* --help ends the parse with 0, even without the FILE operand. */
	cmd.operands = "FILE";
	CU_ASSERT_EQUAL(parse(&cmd, later), 0);
	CU_ASSERT_EQUAL(seen.helps, 1);
	CU_ASSERT_TRUE(seen.json);
	CU_ASSERT_EQUAL(seen.takes, 0);
	CU_ASSERT_EQUAL(seen.bad_options, 0);
	CU_ASSERT_STRING_EQUAL(err, "");

	CU_ASSERT_EQUAL(parse(&cmd, letter), 0);
	CU_ASSERT_EQUAL(seen.helps, 1);
	CU_ASSERT_TRUE(seen.verbose);

	/* A bad option before --help wins. */
	CU_ASSERT_EQUAL(parse(&cmd, after_bad), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.helps, 0);
	CU_ASSERT_EQUAL(seen.bad_options, 1);
}

static void test_bad_option(void)
{
	static const struct {
		const char *arg, *says; /* getopt_long()'s message */
	} bad[] = {
		{ "--bogus", "t: unrecognized option '--bogus'" },
		{ "-Z", "t: invalid option -- 'Z'" },
		{ "--file", "t: option '--file' requires an argument" },
		{ "--json=1", "t: option '--json' doesn't allow an argument" },
	};
	struct cli_cmd cmd = command();
	char *unknown[] = { "t", "--bogus", NULL };

	cmd.own_operands = true;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "t", (char *)bad[i].arg, NULL };

		CU_ASSERT_EQUAL(parse(&cmd, argv), EXIT_USAGE);
		CU_ASSERT_EQUAL(seen.bad_options, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].says));
	}

	/* Without bad_option the exit status is the same. */
	cmd.bad_option = NULL;
	CU_ASSERT_EQUAL(parse(&cmd, unknown), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.bad_options, 0);
}

static void test_refused(void)
{
	struct cli_cmd cmd = command();
	char *twice[] = { "t", "--level", "bad", "--level", "bad", NULL };
	char *then_help[] = { "t", "--level=bad", "--help", NULL };
	char *then_good[] = { "t", "--level", "bad", "--level", "2", NULL };

	/* By default the first refusal ends the parse. */
	CU_ASSERT_EQUAL(parse(&cmd, twice), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.takes, 1);
	CU_ASSERT_STRING_EQUAL(err, "accel t: --level: 'bad' refused\n");
	CU_ASSERT_EQUAL(parse(&cmd, then_help), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.helps, 0);

	/* keep_going: every value is looked at; --help still ends it with 0. */
	cmd.keep_going = true;
	CU_ASSERT_EQUAL(parse(&cmd, twice), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.takes, 2);
	CU_ASSERT_STRING_EQUAL(err, "accel t: --level: 'bad' refused\n"
				    "accel t: --level: 'bad' refused\n");
	CU_ASSERT_EQUAL(parse(&cmd, then_help), 0);
	CU_ASSERT_EQUAL(seen.helps, 1);
	CU_ASSERT_EQUAL(parse(&cmd, then_good), EXIT_USAGE);
	CU_ASSERT_EQUAL(seen.takes, 2);
	CU_ASSERT_TRUE(is(seen.level, "2"));
}

static void test_operands(void)
{
	struct cli_cmd none = command(), some = command(), own = command();
	char *stray[] = { "t", "--json", "x", "y", NULL };
	char *empty[] = { "t", "--json", NULL };
	char *mixed[] = { "t", "a", "--json", "b", "--", "--verbose", NULL };

	some.operands = "FILE";
	own.own_operands = true;
	CU_ASSERT_EQUAL(parse(&none, stray), EXIT_USAGE);
	CU_ASSERT_STRING_EQUAL(err, "accel t: unexpected argument 'x' (see 'accel t --help')\n");
	CU_ASSERT_EQUAL(parse(&none, empty), CLI_GO_ON);
	CU_ASSERT_EQUAL(parse(&some, empty), EXIT_USAGE);
	CU_ASSERT_STRING_EQUAL(err, "accel t: no FILE given (see 'accel t --help')\n");

	/* Operands between options come after them; "--" ends the options. */
	CU_ASSERT_EQUAL(parse(&some, mixed), CLI_GO_ON);
	CU_ASSERT_TRUE(seen.json);
	CU_ASSERT_FALSE(seen.verbose);
	CU_ASSERT_EQUAL_FATAL(optind, 3);
	CU_ASSERT_STRING_EQUAL(mixed[3], "a");
	CU_ASSERT_STRING_EQUAL(mixed[4], "b");
	CU_ASSERT_STRING_EQUAL(mixed[5], "--verbose");

	CU_ASSERT_EQUAL(parse(&own, stray), CLI_GO_ON);
	CU_ASSERT_EQUAL(optind, 2);
	CU_ASSERT_EQUAL(parse(&own, empty), CLI_GO_ON);
	CU_ASSERT_STRING_EQUAL(err, "");
}

/* A parse that stopped inside "-hv" leaves nothing behind for the next one. */
static void test_fresh_start(void)
{
	struct cli_cmd cmd = command();
	char *first[] = { "t", "-hv", NULL };
	char *second[] = { "t", "--json", NULL };

	CU_ASSERT_EQUAL(parse(&cmd, first), 0);
	CU_ASSERT_FALSE(seen.verbose);
	CU_ASSERT_EQUAL(parse(&cmd, second), CLI_GO_ON);
	CU_ASSERT_TRUE(seen.json);
	CU_ASSERT_FALSE(seen.verbose);
	CU_ASSERT_EQUAL(seen.helps, 0);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("cli", NULL, NULL);
	CU_add_test(s, "flags, strings, take(), letters, abbreviations", test_kinds);
	CU_add_test(s, "--help", test_help);
	CU_add_test(s, "bad options", test_bad_option);
	CU_add_test(s, "refused values, keep_going", test_refused);
	CU_add_test(s, "operands", test_operands);
	CU_add_test(s, "a second parse starts afresh", test_fresh_start);
	return cunit_run();
}
