// SPDX-License-Identifier: MIT
/*
 * fdl_lex.c - the cursor, values and tuning attributes both FDL readers
 * use (see fdl_i.h). Unknown names are errors, not warnings: a misspelt
 * keyword silently ignored would defeat the point of the file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fdl_i.h"
#include "tuning.h"

int fdl_fail(struct fdl_cur *c, size_t at, const char *fmt, ...)
{
	va_list ap;

	c->err->line = c->line;
	c->err->col = (unsigned int)(at - c->line_start + 1);
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool fdl_at_eol(const struct fdl_cur *c)
{
	return c->pos >= c->len || c->s[c->pos] == '\n';
}

void fdl_skip_blank(struct fdl_cur *c)
{
	while (c->pos < c->len &&
	       (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' || c->s[c->pos] == '\r'))
		c->pos++;
}

bool fdl_key_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '-';
}

int fdl_expect_eol(struct fdl_cur *c, const char *after)
{
	fdl_skip_blank(c);
	if (fdl_at_eol(c) || c->s[c->pos] == c->comment)
		return 0;
	return fdl_fail(c, c->pos, "unexpected text after %s", after);
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Unescape one backslash sequence at c->pos (just after '\'); returns byte or -EINVAL. */
static int unescape(struct fdl_cur *c)
{
	size_t at = c->pos - 1;
	int hi, lo;

	if (fdl_at_eol(c))
		return fdl_fail(c, at, "unterminated escape sequence");
	switch (c->s[c->pos++]) {
	case '\\':
		return '\\';
	case '"':
		return '"';
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'x':
		hi = c->pos < c->len ? hexval(c->s[c->pos]) : -1;
		lo = c->pos + 1 < c->len ? hexval(c->s[c->pos + 1]) : -1;
		if (hi < 0 || lo < 0)
			return fdl_fail(c, at, "\\x needs two hexadecimal digits");
		c->pos += 2;
		return hi * 16 + lo;
	default:
		return fdl_fail(c, at, "unknown escape sequence '\\%c'", c->s[c->pos - 1]);
	}
}

static int lex_quoted(struct fdl_cur *c, struct fdl_val *v)
{
	int ch;

	c->pos++; /* opening quote */
	v->quoted = true;
	for (;;) {
		if (fdl_at_eol(c))
			return fdl_fail(c, v->at, "unterminated string");
		ch = (unsigned char)c->s[c->pos++];
		if (ch == '"')
			return 0;
		if (ch == '\\') {
			ch = unescape(c);
			if (ch < 0)
				return ch;
		}
		v->buf[v->len++] = (char)ch;
	}
}

int fdl_lex_value(struct fdl_cur *c, struct fdl_val *v, const char *what)
{
	size_t end = c->pos;
	int ret = 0;

	while (end < c->len && c->s[end] != '\n')
		end++;
	v->buf = malloc(end - c->pos + 1);
	if (!v->buf)
		return -ENOMEM;
	v->len = 0;
	v->at = c->pos;
	v->quoted = false;
	if (c->pos < c->len && c->s[c->pos] == '"') {
		ret = lex_quoted(c, v);
	} else {
		while (!fdl_at_eol(c) && !strchr(" \t\r", c->s[c->pos]) &&
		       c->s[c->pos] != c->comment)
			v->buf[v->len++] = c->s[c->pos++];
	}
	v->buf[v->len] = '\0';
	if (ret == 0 && v->len == 0 && !v->quoted)
		ret = fdl_fail(c, v->at, "missing value for %s", what);
	return ret ? ret : fdl_expect_eol(c, "the value");
}

int fdl_parse_uint(struct fdl_cur *c, const struct fdl_val *v, int base, uint64_t max,
		   uint64_t *out, const char *what)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v->buf, &end, base);
	if (v->buf[0] < '0' || v->buf[0] > '9' || *end)
		return fdl_fail(c, v->at, "%s: '%s' is not a%s number", what, v->buf,
				base == 8 ? "n octal" : " decimal");
	if (errno == ERANGE || n > max)
		return fdl_fail(c, v->at, "%s: %s is out of range (at most %llu%s)", what, v->buf,
				(unsigned long long)max, base == 8 ? " in decimal" : "");
	*out = n;
	return 0;
}

int fdl_parse_bool(struct fdl_cur *c, const struct fdl_val *v, bool *out, const char *what)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	unsigned int i, n = c->comment == '!' ? 2 : 4; /* FDL: yes/no, true/false */

	for (i = 0; i < n; i++) {
		if (!strcasecmp(v->buf, yes[i]) || !strcasecmp(v->buf, no[i])) {
			*out = !strcasecmp(v->buf, yes[i]);
			return 0;
		}
	}
	return fdl_fail(c, v->at, "%s: '%s' is not yes or no", what, v->buf);
}

int fdl_parse_size(struct fdl_cur *c, const struct fdl_val *v, uint64_t *out, const char *what)
{
	int ret = tuning_parse_size(v->buf, out); /* the one size grammar (cache/tuning.h) */
	size_t digits = strspn(v->buf, "0123456789");

	if (ret == -ERANGE)
		return fdl_fail(c, v->at, "%s: size '%s' is too large", what, v->buf);
	if (ret && digits)
		return fdl_fail(c, v->at + digits, "%s: unknown size suffix '%s'", what,
				v->buf + digits);
	if (ret)
		return fdl_fail(c, v->at,
				"%s: '%s' is not a size (bytes, or a number with K/M/G/T)", what,
				v->buf);
	return 0;
}

int fdl_each_line(struct fdl_cur *c, struct fdl *fdl,
		  int (*line)(struct fdl_cur *c, struct fdl *fdl))
{
	int ret;

	while (c->pos < c->len) {
		ret = line(c, fdl);
		if (ret < 0)
			return ret;
		while (c->pos < c->len && c->s[c->pos] != '\n')
			c->pos++;
		c->pos++;
		c->line++;
		c->line_start = c->pos;
	}
	return 0;
}

int fdl_tuning_find(const char *name)
{
	int k;

	for (k = 0; k < TUNING_N; k++)
		if (!strcasecmp(tuning_attr((enum tuning_key)k)->name, name))
			break;
	return k;
}

/* "GLOBAL_BUFFERS, LOCAL_BUFFERS, ..." (upper case for FDL, as stored for INI). */
static const char *tuning_names(bool upper, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < TUNING_N && n < len; k++) {
		const char *name = tuning_attr((enum tuning_key)k)->name;

		n += (size_t)snprintf(buf + n, len - n, "%s", k ? ", " : "");
		for (size_t i = 0; name[i] && n + 1 < len; i++)
			buf[n++] =
			    upper && name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i];
		buf[n < len ? n : len - 1] = '\0';
	}
	return buf;
}

int fdl_tuning_set(struct fdl_cur *c, const char *section, const char *key, size_t key_at,
		   const struct fdl_val *v, struct fdl *fdl)
{
	enum tuning_key k = (enum tuning_key)fdl_tuning_find(key);
	char stored[TUNING_VALUE_LEN], names[160];
	int ret;

	if (k == TUNING_N)
		return fdl_fail(c, key_at, "%s %s: not a tuning attribute (known: %s)", section,
				key, tuning_names(c->comment == '!', names, sizeof(names)));
	if (c->seen_tuning & (1U << k))
		return fdl_fail(c, key_at, "%s %s appears twice", section, key);
	c->seen_tuning |= 1U << k;
	ret = memchr(v->buf, '\0', v->len) ? -EINVAL : tuning_parse(k, v->buf, stored);
	if (ret)
		return fdl_fail(c, v->at, "%s %s: '%s' %s (%s)", section, key, v->buf,
				ret == -ERANGE ? "is out of range" : "is not a valid value",
				tuning_attr(k)->syntax);
	if (!stored[0])
		return 0; /* "default": the attribute is not set */
	/* kept as written (the daemon reads any form tuning_parse() takes): a round trip
	 * through analyze --fdl and convert leaves the attribute's bytes as they were */
	return fdl_attr_set(fdl, tuning_attr(k)->name, v->buf, v->len);
}
