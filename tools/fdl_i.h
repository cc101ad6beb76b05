/* SPDX-License-Identifier: MIT */
/*
 * fdl_i.h - what the two readers of fdl.h share: a cursor that knows its
 * line and column (so every message points at the byte to fix), the
 * lexing of values, the typed values, and the ACCELFS tuning attributes,
 * checked against cache/tuning.h. fdl.c reads FDL, fdl_ini.c the older INI
 * form.
 */
#ifndef ACCELFS_TOOLS_FDL_I_H
#define ACCELFS_TOOLS_FDL_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fdl.h"

struct fdl_cur {
	const char *s;
	size_t len;
	size_t pos;
	size_t line_start;
	unsigned int line;
	char comment;		  /* '!' in FDL, '#' in the INI form */
	int sec;		  /* the grammar's current section */
	unsigned int seen_sec;	  /* bit per section */
	uint64_t seen_key;	  /* bit per fixed key of the grammar */
	unsigned int seen_tuning; /* bit per tuning attribute (enum tuning_key) */
	struct fdl_error *err;
};

/* A value as found in the text: bytes already unescaped, and where it began. */
struct fdl_val {
	char *buf;
	size_t len;
	size_t at;
	bool quoted;
};

/* Record "LINE:COL: message" for byte @at of the current line; returns -EINVAL. */
int fdl_fail(struct fdl_cur *c, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

bool fdl_at_eol(const struct fdl_cur *c);
void fdl_skip_blank(struct fdl_cur *c);
bool fdl_key_char(char ch);

/* After a complete item only blanks and a comment may follow. */
int fdl_expect_eol(struct fdl_cur *c, const char *after);

/*
 * fdl_lex_value - a bare word (up to a blank or the comment character) or a
 * double-quoted string with the escapes \\ \" \n \t \xHH at c->pos, into @v
 * (v->buf to be freed by the caller), then the end of the line. @what names
 * the keyword for "missing value for WHAT".
 */
int fdl_lex_value(struct fdl_cur *c, struct fdl_val *v, const char *what);

/* A decimal (@base 10) or octal (8) number up to @max; @what names it in messages. */
int fdl_parse_uint(struct fdl_cur *c, const struct fdl_val *v, int base, uint64_t max,
		   uint64_t *out, const char *what);

/* yes/no, true/false (any case; the INI form also on/off, 1/0). */
int fdl_parse_bool(struct fdl_cur *c, const struct fdl_val *v, bool *out, const char *what);

/* A size in cache/tuning.h's grammar (the INI form's). */
int fdl_parse_size(struct fdl_cur *c, const struct fdl_val *v, uint64_t *out, const char *what);

/*
 * fdl_tuning_set - tuning attribute @key (any case; one of cache/tuning.h's)
 * found at @key_at with value @v, into @fdl's attributes in the stored
 * form tuning_parse() gives ("default": none). Unknown names, bad values
 * and a second mention are errors naming @section and the key.
 */
int fdl_tuning_set(struct fdl_cur *c, const char *section, const char *key, size_t key_at,
		   const struct fdl_val *v, struct fdl *fdl);

/* The tuning attribute (enum tuning_key) called @name in any case, or TUNING_N. */
int fdl_tuning_find(const char *name);

/*
 * fdl_each_line - call @line for every line from c->pos on, with c->pos at
 * its first byte and c->line its number; stops at the first error.
 */
int fdl_each_line(struct fdl_cur *c, struct fdl *fdl,
		  int (*line)(struct fdl_cur *c, struct fdl *fdl));

/* The older INI form, from c->pos to the end. 0 or -errno (as fdl_parse). */
int fdl_ini_parse(struct fdl_cur *c, struct fdl *fdl);

#endif
