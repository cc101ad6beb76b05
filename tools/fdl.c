// SPDX-License-Identifier: MIT
/*
 * fdl.c - parse and write FDL files (format in docs/defrag.md).
 *
 * The parser works line by line with a cursor that knows its line and
 * column, so every message can point at the exact byte a person must fix.
 * Unknown sections and keys are errors, not warnings: a misspelt
 * best_try_contiguous silently ignored would defeat the point of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdl.h"
#include "tuning.h"

#define FDL_MAX_BYTES (1 << 20)

enum section { SEC_NONE, SEC_FILE, SEC_ALLOCATION, SEC_OWNERSHIP, SEC_ACCELFS, SEC_COUNT };

static const char *const section_name[SEC_COUNT] = { "", "file", "allocation", "ownership",
						     "accelfs" };

struct cur {
	const char *s;
	size_t len;
	size_t pos;
	size_t line_start;
	unsigned int line;
	enum section sec;
	unsigned int seen_sec; /* bit per section */
	unsigned int seen_key; /* bit per fixed key, see key_table */
	struct fdl_error *err;
};

/* A value as found in the text: bytes already unescaped, and where it began. */
struct val {
	char *buf;
	size_t len;
	size_t at;
};

static int fail(struct cur *c, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct cur *c, size_t at, const char *fmt, ...)
{
	va_list ap;

	c->err->line = c->line;
	c->err->col = (unsigned int)(at - c->line_start + 1);
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void fdl_init(struct fdl *fdl)
{
	memset(fdl, 0, sizeof(*fdl));
	fdl->contiguous = true;
}

void fdl_free(struct fdl *fdl)
{
	size_t i;

	for (i = 0; i < fdl->nattrs; i++) {
		free(fdl->attrs[i].name);
		free(fdl->attrs[i].value);
	}
	free(fdl->attrs);
	free(fdl->name);
	fdl_init(fdl);
}

static bool key_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '-';
}

bool fdl_key_valid(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++) {
		if (!key_char(*name))
			return false;
	}
	return true;
}

int fdl_attr_set(struct fdl *fdl, const char *name, const void *value, size_t len)
{
	struct fdl_attr *a = NULL, *attrs;
	char *copy;
	size_t i;

	if (!fdl_key_valid(name))
		return -EINVAL;
	for (i = 0; i < fdl->nattrs && !a; i++) {
		if (strcmp(fdl->attrs[i].name, name) == 0)
			a = &fdl->attrs[i];
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, value, len);
	copy[len] = '\0';
	if (!a) {
		attrs = realloc(fdl->attrs, (fdl->nattrs + 1) * sizeof(*attrs));
		if (!attrs || !(attrs[fdl->nattrs].name = strdup(name))) {
			fdl->attrs = attrs ? attrs : fdl->attrs;
			free(copy);
			return -ENOMEM;
		}
		fdl->attrs = attrs;
		a = &attrs[fdl->nattrs++];
		a->value = NULL;
	}
	free(a->value);
	a->value = copy;
	a->len = len;
	return 0;
}

/* ---- lexing ---- */

static int at_eol(const struct cur *c)
{
	return c->pos >= c->len || c->s[c->pos] == '\n';
}

static void skip_blank(struct cur *c)
{
	while (c->pos < c->len &&
	       (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' || c->s[c->pos] == '\r'))
		c->pos++;
}

/* After a complete item only blanks and a comment may follow. */
static int expect_eol(struct cur *c, const char *after)
{
	skip_blank(c);
	if (at_eol(c) || c->s[c->pos] == '#')
		return 0;
	return fail(c, c->pos, "unexpected text after %s", after);
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
static int unescape(struct cur *c)
{
	size_t at = c->pos - 1;
	int hi, lo;

	if (at_eol(c))
		return fail(c, at, "unterminated escape sequence");
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
			return fail(c, at, "\\x needs two hexadecimal digits");
		c->pos += 2;
		return hi * 16 + lo;
	default:
		return fail(c, at, "unknown escape sequence '\\%c'", c->s[c->pos - 1]);
	}
}

static int lex_quoted(struct cur *c, struct val *v)
{
	int ch;

	c->pos++; /* opening quote */
	for (;;) {
		if (at_eol(c))
			return fail(c, v->at, "unterminated string");
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

/* Read a value (quoted or bare) at c->pos into @v; v->buf is freed by the caller. */
static int lex_value(struct cur *c, struct val *v)
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
	if (c->s[c->pos] == '"') {
		ret = lex_quoted(c, v);
	} else {
		while (!at_eol(c) && !strchr(" \t\r#", c->s[c->pos]))
			v->buf[v->len++] = c->s[c->pos++];
	}
	v->buf[v->len] = '\0';
	if (ret == 0 && v->len == 0 && c->s[v->at] != '"')
		ret = fail(c, v->at, "missing value");
	return ret ? ret : expect_eol(c, "value");
}

/* ---- typed values ---- */

static int parse_size(struct cur *c, const struct val *v, uint64_t *out)
{
	int ret = tuning_parse_size(v->buf, out); /* the one size grammar (cache/tuning.h) */
	size_t digits = strspn(v->buf, "0123456789");

	if (ret == -ERANGE)
		return fail(c, v->at, "size '%s' is too large", v->buf);
	if (ret && digits)
		return fail(c, v->at + digits, "unknown size suffix '%s'", v->buf + digits);
	if (ret)
		return fail(c, v->at, "'%s' is not a size (bytes, or a number with K/M/G/T)",
			    v->buf);
	return 0;
}

static int parse_uint(struct cur *c, const struct val *v, int base, uint64_t max, uint64_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v->buf, &end, base);
	if (v->buf[0] < '0' || v->buf[0] > '9' || *end)
		return fail(c, v->at, "'%s' is not a%s number", v->buf,
			    base == 8 ? "n octal" : " decimal");
	if (errno == ERANGE || n > max)
		return fail(c, v->at, "%s is out of range (at most %llu)", v->buf,
			    (unsigned long long)max);
	*out = n;
	return 0;
}

static int parse_bool(struct cur *c, const struct val *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		if (strcmp(v->buf, yes[i]) == 0 || strcmp(v->buf, no[i]) == 0) {
			*out = strcmp(v->buf, yes[i]) == 0;
			return 0;
		}
	}
	return fail(c, v->at, "'%s' is not a boolean (yes or no)", v->buf);
}

/* ---- keys ---- */

enum key_id { K_NAME, K_SIZE, K_PREALLOC, K_CONTIG, K_HOLES, K_UID, K_GID, K_MODE, K_COUNT };

static const struct {
	enum section sec;
	const char *name;
} key_table[K_COUNT] = {
	[K_NAME] = { SEC_FILE, "name" },
	[K_SIZE] = { SEC_FILE, "size" },
	[K_PREALLOC] = { SEC_ALLOCATION, "preallocate" },
	[K_CONTIG] = { SEC_ALLOCATION, "best_try_contiguous" },
	[K_HOLES] = { SEC_ALLOCATION, "holes" },
	[K_UID] = { SEC_OWNERSHIP, "uid" },
	[K_GID] = { SEC_OWNERSHIP, "gid" },
	[K_MODE] = { SEC_OWNERSHIP, "mode" },
};

static int set_key(struct cur *c, enum key_id id, struct val *v, struct fdl *fdl)
{
	uint64_t n = 0;
	int ret = 0;

	switch (id) {
	case K_NAME:
		free(fdl->name);
		fdl->name = v->buf;
		v->buf = NULL;
		return 0;
	case K_SIZE:
		fdl->has_size = true;
		return parse_size(c, v, &fdl->size);
	case K_PREALLOC:
		fdl->has_preallocate = true;
		return parse_size(c, v, &fdl->preallocate);
	case K_CONTIG:
		return parse_bool(c, v, &fdl->contiguous);
	case K_HOLES:
		if (strcmp(v->buf, "keep") && strcmp(v->buf, "allocate"))
			return fail(c, v->at, "holes must be 'keep' or 'allocate', not '%s'",
				    v->buf);
		fdl->holes = strcmp(v->buf, "keep") ? FDL_HOLES_ALLOCATE : FDL_HOLES_KEEP;
		return 0;
	case K_UID:
		fdl->has_uid = true;
		ret = parse_uint(c, v, 10, UINT32_MAX - 1, &n);
		fdl->uid = (uid_t)n;
		return ret;
	case K_GID:
		fdl->has_gid = true;
		ret = parse_uint(c, v, 10, UINT32_MAX - 1, &n);
		fdl->gid = (gid_t)n;
		return ret;
	default:
		ret = parse_uint(c, v, 8, 07777, &n);
		fdl->mode = (mode_t)n;
		fdl->has_mode = true;
		return ret;
	}
}

static int do_key(struct cur *c, const char *key, size_t key_at, struct val *v, struct fdl *fdl)
{
	unsigned int id;

	if (c->sec == SEC_ACCELFS) {
		for (id = 0; id < fdl->nattrs; id++) {
			if (strcmp(fdl->attrs[id].name, key) == 0)
				return fail(c, key_at, "key '%s' appears twice in [accelfs]", key);
		}
		return fdl_attr_set(fdl, key, v->buf, v->len);
	}
	for (id = 0; id < K_COUNT; id++) {
		if (key_table[id].sec == c->sec && strcmp(key_table[id].name, key) == 0)
			break;
	}
	if (id == K_COUNT)
		return fail(c, key_at, "unknown key '%s' in section [%s]", key,
			    section_name[c->sec]);
	if (c->seen_key & (1U << id))
		return fail(c, key_at, "key '%s' appears twice", key);
	c->seen_key |= 1U << id;
	if (memchr(v->buf, '\0', v->len))
		return fail(c, v->at, "a NUL byte is only allowed in [accelfs] values");
	return set_key(c, (enum key_id)id, v, fdl);
}

/* ---- lines ---- */

static int do_section(struct cur *c)
{
	size_t at = ++c->pos, end;
	unsigned int i;

	while (!at_eol(c) && key_char(c->s[c->pos]))
		c->pos++;
	end = c->pos;
	if (at_eol(c) || c->s[c->pos] != ']')
		return fail(c, c->pos, "expected ']' to close the section name");
	c->pos++;
	for (i = 1; i < SEC_COUNT; i++) {
		if (strlen(section_name[i]) == end - at &&
		    !memcmp(c->s + at, section_name[i], end - at))
			break;
	}
	if (i == SEC_COUNT)
		return fail(c, at,
			    "unknown section [%.*s] (known: file, allocation, ownership, "
			    "accelfs)",
			    (int)(end - at), c->s + at);
	if (c->seen_sec & (1U << i))
		return fail(c, at, "section [%s] appears twice", section_name[i]);
	c->seen_sec |= 1U << i;
	c->sec = (enum section)i;
	return expect_eol(c, "section header");
}

static int do_assignment(struct cur *c, struct fdl *fdl)
{
	size_t key_at = c->pos;
	struct val v = { 0 };
	char key[128];
	int ret;

	while (!at_eol(c) && key_char(c->s[c->pos]))
		c->pos++;
	if (c->pos == key_at)
		return fail(c, key_at, "expected a key, a [section] or a # comment");
	if (c->pos - key_at >= sizeof(key))
		return fail(c, key_at, "key is longer than %zu bytes", sizeof(key) - 1);
	memcpy(key, c->s + key_at, c->pos - key_at);
	key[c->pos - key_at] = '\0';
	skip_blank(c);
	if (at_eol(c) || c->s[c->pos] != '=')
		return fail(c, c->pos, "expected '=' after key '%s'", key);
	c->pos++;
	skip_blank(c);
	if (c->sec == SEC_NONE)
		return fail(c, key_at, "key '%s' before any [section]", key);
	ret = lex_value(c, &v);
	if (ret == 0)
		ret = do_key(c, key, key_at, &v, fdl);
	free(v.buf);
	return ret;
}

static int do_line(struct cur *c, struct fdl *fdl)
{
	skip_blank(c);
	if (at_eol(c) || c->s[c->pos] == '#')
		return 0;
	if (c->s[c->pos] == '[')
		return do_section(c);
	return do_assignment(c, fdl);
}

int fdl_parse(const char *text, size_t len, struct fdl *fdl, struct fdl_error *err)
{
	struct cur c = { .s = text, .len = len, .line = 1, .err = err };
	int ret;

	memset(err, 0, sizeof(*err));
	while (c.pos < c.len) {
		ret = do_line(&c, fdl);
		if (ret < 0) {
			if (ret == -ENOMEM)
				snprintf(err->msg, sizeof(err->msg), "out of memory");
			return ret;
		}
		while (c.pos < c.len && c.s[c.pos] != '\n')
			c.pos++;
		c.pos++;
		c.line++;
		c.line_start = c.pos;
	}
	fdl->has_accelfs = c.seen_sec & (1U << SEC_ACCELFS);
	return 0;
}

int fdl_load(const char *path, struct fdl *fdl, struct fdl_error *err)
{
	char *buf = malloc(FDL_MAX_BYTES + 1);
	ssize_t n, len = 0;
	struct stat st;
	int fd, ret;

	if (!buf)
		return -ENOMEM;
	/* an FDL named by mistake as a FIFO or device must not block or stream forever */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		ret = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		close(fd);
		fd = -1;
		errno = ret;
	}
	if (fd < 0) {
		ret = errno == ENXIO ? -EINVAL : -errno;
		free(buf);
		return ret;
	}
	while ((n = read(fd, buf + len, FDL_MAX_BYTES + 1 - len)) > 0)
		len += n;
	ret = n < 0 ? -errno : len > FDL_MAX_BYTES ? -EFBIG : 0;
	close(fd);
	if (ret == 0)
		ret = fdl_parse(buf, (size_t)len, fdl, err);
	free(buf);
	return ret;
}

/* ---- writing ---- */

static void put_string(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputs("\"\n", f);
}

int fdl_write(FILE *f, const struct fdl *fdl, const char *comment)
{
	size_t i;

	fprintf(f, "%s", comment ? comment : "");
	fputs("[file]\n", f);
	if (fdl->name) {
		fputs("name = ", f);
		put_string(f, fdl->name, strlen(fdl->name));
	}
	if (fdl->has_size)
		fprintf(f, "size = %llu\n", (unsigned long long)fdl->size);
	fputs("\n[allocation]\n", f);
	if (fdl->has_preallocate)
		fprintf(f, "preallocate = %llu\n", (unsigned long long)fdl->preallocate);
	fprintf(f, "best_try_contiguous = %s\n", fdl->contiguous ? "yes" : "no");
	fprintf(f, "holes = %s\n", fdl->holes == FDL_HOLES_KEEP ? "keep" : "allocate");
	fputs("\n[ownership]\n", f);
	if (fdl->has_uid)
		fprintf(f, "uid = %u\n", (unsigned int)fdl->uid);
	if (fdl->has_gid)
		fprintf(f, "gid = %u\n", (unsigned int)fdl->gid);
	if (fdl->has_mode)
		fprintf(f, "mode = %04o\n", (unsigned int)fdl->mode);
	fputs("\n[accelfs]\n", f);
	for (i = 0; i < fdl->nattrs; i++) {
		fprintf(f, "%s = ", fdl->attrs[i].name);
		put_string(f, fdl->attrs[i].value, fdl->attrs[i].len);
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
