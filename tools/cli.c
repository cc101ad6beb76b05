// SPDX-License-Identifier: MIT
/*
 * cli.c - the one getopt_long() loop of the accel subcommands, so that
 * --help, bad options and stray operands get the same handling, messages
 * and exit codes everywhere; see cli.h for the option table.
 */
#include <assert.h>
#include <getopt.h>
#include <stddef.h>

#include "cli.h"
#include "cmd.h"
#include "util.h"

#define CLI_LONG 0x100 /* getopt_long() value of long-only entry i: CLI_LONG + i */

/* What getopt_long() returns for entry @i: its letter, so -x and --long are one. */
static int opt_value(const struct cli_opt *opt, size_t i)
{
	return opt->letter ? opt->letter : CLI_LONG + (int)i;
}

/* getopt_long()'s tables for @opts, with --help (-h) last. */
static void build(const struct cli_opt *opts, struct option *longopts, char *shortopts)
{
	size_t i;

	*shortopts++ = 'h';
	for (i = 0; opts[i].name; i++) {
		assert(i < CLI_MAX_OPTS);
		longopts[i] =
		    (struct option){ opts[i].name, opts[i].flag ? no_argument : required_argument,
				     NULL, opt_value(&opts[i], i) };
		if (opts[i].letter)
			*shortopts++ = opts[i].letter;
		if (opts[i].letter && !opts[i].flag)
			*shortopts++ = ':';
	}
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i] = (struct option){ NULL, 0, NULL, 0 };
	*shortopts = '\0';
}

/* The entry getopt_long() returned @ch for, or NULL ('?': a bad option). */
static const struct cli_opt *find(const struct cli_opt *opts, int ch)
{
	for (size_t i = 0; opts[i].name; i++) {
		if (opt_value(&opts[i], i) == ch)
			return &opts[i];
	}
	return NULL;
}

/* 0, or -errno when take() refused @arg (and said why). */
static int take(const struct cli_opt *opt, const char *arg)
{
	if (opt->flag) {
		*opt->flag = true;
		return 0;
	}
	if (opt->string) {
		*opt->string = arg;
		return 0;
	}
	return opt->take(opt, arg);
}

static int check_operands(const struct cli_cmd *cmd, int argc, char **argv)
{
	if (cmd->own_operands)
		return CLI_GO_ON;
	if (!cmd->operands && optind < argc) {
		util_err(cmd->name, NULL, "unexpected argument '%s' (see 'accel %s --help')",
			 argv[optind], cmd->name);
		return EXIT_USAGE;
	}
	if (cmd->operands && optind >= argc) {
		util_err(cmd->name, NULL, "no %s given (see 'accel %s --help')", cmd->operands,
			 cmd->name);
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

int cli_parse(const struct cli_cmd *cmd, const struct cli_opt *opts, int argc, char **argv)
{
	struct option longopts[CLI_MAX_OPTS + 2];
	char shortopts[1 + 2 * CLI_MAX_OPTS + 1];
	const struct cli_opt *opt;
	bool refused = false;
	int ch;

	build(opts, longopts, shortopts);
	optind = 0; /* a fresh scan, also when called again (the unit tests) */
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (ch == 'h') {
			cmd->help();
			return 0;
		}
		opt = find(opts, ch);
		if (!opt) {
			if (cmd->bad_option)
				cmd->bad_option();
			return EXIT_USAGE;
		}
		if (take(opt, optarg)) {
			if (!cmd->keep_going)
				return EXIT_USAGE;
			refused = true;
		}
	}
	return refused ? EXIT_USAGE : check_operands(cmd, argc, argv);
}
