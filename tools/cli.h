/* SPDX-License-Identifier: MIT */
/*
 * cli.h - an accel subcommand's options as a table. Every command used to
 * write out the same getopt_long() loop: --help prints the help and exits 0,
 * a bad option exits EXIT_USAGE after getopt_long()'s message, stray
 * operands are refused with "(see 'accel CMD --help')". The loop lives in
 * cli.c once; a command lists its options and what follows them.
 *
 * An option is one of three kinds, by which target is set:
 *   flag    no argument; sets *flag to true
 *   string  an argument, kept as given in *string (the last one wins)
 *   take    an argument that take() checks and stores (in opt->to, usually);
 *           take() returns 0, or -errno (-EINVAL) after saying why (util_err())
 * --help (-h) is added to every table and must not be listed.
 */
#ifndef ACCELFS_TOOLS_CLI_H
#define ACCELFS_TOOLS_CLI_H

#include <stdbool.h>
#include <unistd.h> /* optind */

#define CLI_GO_ON (-1)	/* cli_parse(): options taken, run the command */
#define CLI_MAX_OPTS 16 /* entries in one table, --help not counted */

struct cli_opt {
	const char *name; /* the long option without "--"; NULL ends the table */
	char letter;	  /* the short option, or 0 for none */
	bool *flag;
	const char **string;
	int (*take)(const struct cli_opt *opt, const char *arg);
	void *to; /* for take() */
};

/*
 * A command: its name, its help, and what may follow its options. By
 * default nothing may: "unexpected argument 'X' (see 'accel CMD --help')".
 */
struct cli_cmd {
	const char *name;	  /* "stat": messages start "accel stat: " */
	void (*help)(void);	  /* --help: print the help on stdout */
	void (*bad_option)(void); /* NULL, or called after getopt's message */
	const char *operands;	  /* "FILE": one or more, else "no FILE given (see ...)" */
	bool own_operands;	  /* any number: the command checks them itself */
	bool keep_going;	  /* after a take() refused, go on (and still exit EXIT_USAGE) */
};

/*
 * cli_parse - take the options in argv[1..argc) as @opts (ending with
 * { NULL }) lists them, in the order given, for command @cmd. They are
 * getopt_long()'s: abbreviations, "--opt=value", "--" and operands between
 * options work. Stops at --help or at the first bad option or refused value
 * (unless keep_going), then checks the operands.
 * Returns CLI_GO_ON with the operands at argv[optind..argc), 0 after --help,
 * or EXIT_USAGE after a message on stderr.
 */
int cli_parse(const struct cli_cmd *cmd, const struct cli_opt *opts, int argc, char **argv);

#endif
