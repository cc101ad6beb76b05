// SPDX-License-Identifier: MIT
/*
 * fdl.c - read and write FDL (see fdl.h; the syntax is in docs/defrag.md).
 *
 * A line holds a primary attribute (TITLE "x", IDENT "x", SYSTEM, FILE,
 * RECORD, AREA 0, LINUX, ACCELFS) or a secondary of the last primary
 * ("ALLOCATION 2048"); keywords are in any case, '!' starts a comment, a
 * string is double-quoted. What RMS has and a Linux file does not (relative
 * and indexed files, keys, run-time options) is refused naming the keyword,
 * and so is anything unknown: a misspelt BEST_TRY_CONTIGUOUS silently
 * ignored would defeat the point of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdl_i.h"
#include "tuning.h"

#define FDL_MAX_BYTES (1 << 20)
#define KEYWORD_MAX 40

enum prim { P_NONE, P_TITLE, P_IDENT, P_SYSTEM, P_FILE, P_RECORD, P_AREA, P_LINUX, P_ACCELFS, P_N };

static const char *const prim_name[P_N] = { "",	      "TITLE", "IDENT", "SYSTEM", "FILE",
					    "RECORD", "AREA",  "LINUX", "ACCELFS" };

/* RMS primaries that describe nothing a Linux file has. */
static const struct {
	const char *name, *why;
} refused[] = {
	{ "KEY", "describes an index of an indexed file; accelfs converts sequential files only" },
	{ "ANALYSIS_OF_KEY", "describes an index of an indexed file; remove the section" },
	{ "ANALYSIS_OF_AREA", "is ANALYZE/RMS statistics, not a definition; remove the section" },
	{ "ACCESS", "holds RMS run-time options, which accelfs does not use; remove the section" },
	{ "CONNECT", "holds RMS run-time options, which accelfs does not use; remove the section" },
	{ "SHARING", "holds RMS run-time options, which accelfs does not use; remove the section" },
	{ "DATE", "is kept by the file system (accel convert keeps IN's times); remove it" },
};

enum key {
	K_SOURCE,
	K_TARGET,
	K_NAME,
	K_ORGANIZATION,
	K_ALLOCATION,
	K_BEST_TRY,
	K_CONTIGUOUS,
	K_EXTENSION,
	K_FORMAT,
	K_SIZE,
	K_OWNER,
	K_GROUP,
	K_MODE,
	K_HOLES,
};

/* The secondaries of each primary (ACCELFS's are cache/tuning.h's). */
static const struct {
	enum prim prim;
	enum key key;
	const char *name;
} keys[] = {
	{ P_SYSTEM, K_SOURCE, "SOURCE" },
	{ P_SYSTEM, K_TARGET, "TARGET" },
	{ P_FILE, K_NAME, "NAME" },
	{ P_FILE, K_ORGANIZATION, "ORGANIZATION" },
	{ P_FILE, K_ALLOCATION, "ALLOCATION" },
	{ P_FILE, K_BEST_TRY, "BEST_TRY_CONTIGUOUS" },
	{ P_FILE, K_CONTIGUOUS, "CONTIGUOUS" },
	{ P_FILE, K_EXTENSION, "EXTENSION" },
	{ P_RECORD, K_FORMAT, "FORMAT" },
	{ P_RECORD, K_SIZE, "SIZE" },
	{ P_AREA, K_ALLOCATION, "ALLOCATION" },
	{ P_AREA, K_BEST_TRY, "BEST_TRY_CONTIGUOUS" },
	{ P_AREA, K_CONTIGUOUS, "CONTIGUOUS" },
	{ P_AREA, K_EXTENSION, "EXTENSION" },
	{ P_LINUX, K_OWNER, "OWNER" },
	{ P_LINUX, K_GROUP, "GROUP" },
	{ P_LINUX, K_MODE, "MODE" },
	{ P_LINUX, K_HOLES, "HOLES" },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

/* The four allocation attributes FILE and AREA 0 share; either may give each. */
enum { A_ALLOCATION, A_BEST_TRY, A_CONTIGUOUS, A_EXTENSION, A_N };

/* The parse beyond the cursor: who gave the shared attributes, where FORMAT was. */
struct fdl_parse {
	struct fdl_cur c;
	enum prim given[A_N]; /* P_NONE, P_FILE or P_AREA */
	uint64_t value[A_N];
	unsigned int format_line, format_col;
};

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

bool fdl_key_valid(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++) {
		if (!fdl_key_char(*name))
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

/* ---- values of the secondaries ---- */

/* @v must be one of the NULL-terminated @words (any case): its index, or -EINVAL. */
static int word(struct fdl_parse *p, const struct fdl_val *v, const char *what,
		const char *const *words)
{
	char known[96] = "";

	for (int i = 0; words[i]; i++) {
		if (!strcasecmp(v->buf, words[i]))
			return i;
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 i ? ", " : "", words[i]);
	}
	return fdl_fail(&p->c, v->at, "%s: '%s' is not one of %s", what, v->buf, known);
}

static int set_organization(struct fdl_parse *p, const struct fdl_val *v)
{
	static const char *const org[] = { "sequential", "relative", "indexed", NULL };
	int i = word(p, v, "FILE ORGANIZATION", org);

	if (i > 0)
		return fdl_fail(&p->c, v->at,
				"FILE ORGANIZATION %s: accelfs converts sequential files only (a "
				"Linux file is a stream of bytes; %s files need RMS)",
				org[i], org[i]);
	return i < 0 ? i : 0;
}

static int set_format(struct fdl_parse *p, struct fdl *fdl, const struct fdl_val *v)
{
	static const char *const fmt[] = { "stream_lf", "variable", "fixed", NULL };
	static const char *const rms_only[] = { "stream", "stream_cr", "undefined", "vfc", NULL };
	int i;

	for (i = 0; rms_only[i]; i++)
		if (!strcasecmp(v->buf, rms_only[i]))
			return fdl_fail(&p->c, v->at,
					"RECORD FORMAT %s: not a format accelfs checks (use "
					"stream_lf, variable or fixed)",
					rms_only[i]);
	i = word(p, v, "RECORD FORMAT", fmt);
	if (i < 0)
		return i;
	fdl->format = (enum fdl_format)i;
	p->format_line = p->c.line;
	p->format_col = (unsigned int)(v->at - p->c.line_start + 1);
	return 0;
}

/*
 * ALLOCATION, BEST_TRY_CONTIGUOUS, CONTIGUOUS, EXTENSION from FILE or AREA 0:
 * a sequential file has one area, so the two must agree where both say.
 */
static int set_alloc(struct fdl_parse *p, struct fdl *fdl, int a, const char *what,
		     const struct fdl_val *v)
{
	static const char *const shared[A_N] = { "ALLOCATION", "BEST_TRY_CONTIGUOUS", "CONTIGUOUS",
						 "EXTENSION" };
	uint64_t n = 0;
	bool b = false;
	int ret;

	if (a == A_ALLOCATION || a == A_EXTENSION)
		ret = fdl_parse_uint(&p->c, v, 10,
				     a == A_ALLOCATION ? FDL_ALLOCATION_MAX : FDL_EXTENSION_MAX, &n,
				     what);
	else
		ret = fdl_parse_bool(&p->c, v, &b, what);
	if (ret)
		return ret;
	if (a == A_BEST_TRY || a == A_CONTIGUOUS)
		n = b;
	if (p->given[a] && p->given[a] != (enum prim)p->c.sec && p->value[a] != n)
		return fdl_fail(&p->c, v->at,
				"%s %s disagrees with %s %s: a sequential file has one area; give "
				"it once",
				what, v->buf, p->c.sec == P_AREA ? "FILE" : "AREA 0", shared[a]);
	p->given[a] = (enum prim)p->c.sec;
	p->value[a] = n;
	if (a == A_ALLOCATION)
		fdl->has_preallocate = true, fdl->preallocate = n * FDL_BLOCK;
	else if (a == A_EXTENSION)
		fdl->extension = n * FDL_BLOCK;
	else if (a == A_BEST_TRY)
		fdl->contiguous = b;
	else
		fdl->contiguous_required = b;
	return 0;
}

static int set_linux(struct fdl_parse *p, struct fdl *fdl, enum key k, const char *what,
		     const struct fdl_val *v)
{
	static const char *const holes[] = { "keep", "allocate", NULL };
	uint64_t n;
	int ret;

	if (k == K_HOLES) {
		ret = word(p, v, what, holes);
		fdl->holes = ret == 1 ? FDL_HOLES_ALLOCATE : FDL_HOLES_KEEP;
		return ret < 0 ? ret : 0;
	}
	ret = fdl_parse_uint(&p->c, v, k == K_MODE ? 8 : 10, k == K_MODE ? 07777 : UINT32_MAX - 1,
			     &n, what);
	if (k == K_OWNER)
		fdl->has_uid = true, fdl->uid = (uid_t)n;
	else if (k == K_GROUP)
		fdl->has_gid = true, fdl->gid = (gid_t)n;
	else
		fdl->has_mode = true, fdl->mode = (mode_t)n;
	return ret;
}

static int set_key(struct fdl_parse *p, struct fdl *fdl, enum key k, const char *what,
		   struct fdl_val *v)
{
	uint64_t n;
	int ret;

	if (k != K_NAME && memchr(v->buf, '\0', v->len))
		return fdl_fail(&p->c, v->at, "%s: a NUL byte is not allowed here", what);
	switch (k) {
	case K_SOURCE:
	case K_TARGET:
		return 0; /* informational */
	case K_NAME:
		free(fdl->name);
		fdl->name = v->buf;
		v->buf = NULL;
		return 0;
	case K_ORGANIZATION:
		return set_organization(p, v);
	case K_ALLOCATION:
	case K_BEST_TRY:
	case K_CONTIGUOUS:
	case K_EXTENSION:
		return set_alloc(p, fdl, (int)(k - K_ALLOCATION), what, v);
	case K_FORMAT:
		return set_format(p, fdl, v);
	case K_SIZE:
		ret = fdl_parse_uint(&p->c, v, 10, FDL_RECORD_MAX, &n, what);
		fdl->record_size = (unsigned int)n;
		return ret;
	default:
		return set_linux(p, fdl, k, what, v);
	}
}

/* ---- lines ---- */

/* The keyword at c->pos in upper case into @kw (KEYWORD_MAX bytes), from *@at. */
static int keyword(struct fdl_cur *c, char *kw, size_t *at_out)
{
	size_t at = c->pos;

	while (!fdl_at_eol(c) && (fdl_key_char(c->s[c->pos]) || c->s[c->pos] == '$'))
		c->pos++;
	if (c->pos == at)
		return fdl_fail(c, at, "expected an FDL keyword or a ! comment");
	if (c->pos - at >= KEYWORD_MAX)
		return fdl_fail(c, at, "'%.*s...' is no FDL keyword", KEYWORD_MAX, c->s + at);
	for (size_t i = at; i < c->pos; i++)
		kw[i - at] = c->s[i] >= 'a' && c->s[i] <= 'z' ? c->s[i] - 32 : c->s[i];
	kw[c->pos - at] = '\0';
	*at_out = at;
	return 0;
}

/* A value after @what: blanks, an optional '=', blanks, the value. */
static int value(struct fdl_cur *c, struct fdl_val *v, const char *what)
{
	fdl_skip_blank(c);
	if (!fdl_at_eol(c) && c->s[c->pos] == '=') {
		c->pos++;
		fdl_skip_blank(c);
	}
	return fdl_lex_value(c, v, what);
}

static enum prim prim_find(const char *kw)
{
	int i;

	for (i = 1; i < P_N; i++)
		if (!strcmp(prim_name[i], kw))
			break;
	return (enum prim)i;
}

/* TITLE "..." and IDENT "...": informational strings. AREA n: n must be 0. */
static int prim_value(struct fdl_parse *p, enum prim pr)
{
	struct fdl_val v = { 0 };
	uint64_t n;
	int ret = value(&p->c, &v, prim_name[pr]);

	if (ret == 0 && pr == P_AREA) {
		ret = fdl_parse_uint(&p->c, &v, 10, UINT32_MAX, &n, "AREA");
		if (ret == 0 && n)
			ret = fdl_fail(&p->c, v.at,
				       "AREA %s: a sequential file has one area, AREA 0", v.buf);
	}
	free(v.buf);
	return ret;
}

static int do_primary(struct fdl_parse *p, enum prim pr, size_t at)
{
	struct fdl_cur *c = &p->c;

	if (c->seen_sec & (1U << pr))
		return fdl_fail(c, at, "%s appears twice", prim_name[pr]);
	c->seen_sec |= 1U << pr;
	c->sec = pr;
	if (pr == P_TITLE || pr == P_IDENT || pr == P_AREA)
		return prim_value(p, pr);
	return fdl_expect_eol(c, prim_name[pr]);
}

static int do_secondary(struct fdl_parse *p, struct fdl *fdl, const char *kw, size_t at)
{
	struct fdl_cur *c = &p->c;
	const char *sec = c->sec == P_AREA ? "AREA 0" : prim_name[c->sec];
	struct fdl_val v = { 0 };
	char what[KEYWORD_MAX + 16];
	size_t i;
	int ret;

	snprintf(what, sizeof(what), "%s %s", sec, kw);
	for (i = 0; i < N_KEYS; i++)
		if (keys[i].prim == (enum prim)c->sec && !strcmp(keys[i].name, kw))
			break;
	if (c->sec == P_NONE || c->sec == P_TITLE || c->sec == P_IDENT)
		return fdl_fail(c, at,
				"%s before any section (FILE, RECORD, AREA 0, LINUX, "
				"ACCELFS)",
				kw);
	if (c->sec != P_ACCELFS && i == N_KEYS)
		return fdl_fail(c, at, "%s: not an attribute accelfs reads (see docs/defrag.md)",
				what);
	if (c->sec != P_ACCELFS && (c->seen_key & (1ULL << i)))
		return fdl_fail(c, at, "%s appears twice", what);
	c->seen_key |= c->sec != P_ACCELFS ? 1ULL << i : 0;
	ret = value(c, &v, what);
	if (ret == 0 && c->sec == P_ACCELFS)
		ret = fdl_tuning_set(c, "ACCELFS", kw, at, &v, fdl);
	else if (ret == 0)
		ret = set_key(p, fdl, keys[i].key, what, &v);
	free(v.buf);
	return ret;
}

static int do_line(struct fdl_cur *c, struct fdl *fdl)
{
	struct fdl_parse *p = (struct fdl_parse *)c; /* c is p's first member */
	char kw[KEYWORD_MAX];
	enum prim pr;
	size_t at = 0;
	int ret;

	fdl_skip_blank(c);
	if (fdl_at_eol(c) || c->s[c->pos] == '!')
		return 0;
	ret = keyword(c, kw, &at);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(kw, refused[i].name))
			return fdl_fail(c, at, "%s %s", kw, refused[i].why);
	pr = prim_find(kw);
	if (pr < P_N)
		return do_primary(p, pr, at);
	return do_secondary(p, fdl, kw, at);
}

/* Checks that need the whole file: a fixed record has a size. */
static int check_whole(struct fdl_parse *p, struct fdl *fdl)
{
	if (fdl->format != FDL_FORMAT_FIXED || fdl->record_size)
		return 0;
	p->c.err->line = p->format_line;
	p->c.err->col = p->format_col;
	snprintf(p->c.err->msg, sizeof(p->c.err->msg),
		 "RECORD FORMAT fixed needs RECORD SIZE, the bytes of a record (1 to %u)",
		 FDL_RECORD_MAX);
	return -EINVAL;
}

/* Is the first line that says anything an INI "[section]"? */
static bool is_ini(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		while (i < len && strchr(" \t\r\n", text[i]))
			i++;
		if (i < len && text[i] != '#')
			return text[i] == '[';
		while (i < len && text[i] != '\n')
			i++;
	}
	return false;
}

int fdl_parse(const char *text, size_t len, struct fdl *fdl, struct fdl_error *err)
{
	struct fdl_parse p = { .c = {
				   .s = text, .len = len, .line = 1, .comment = '!', .err = err } };
	int ret;

	memset(err, 0, sizeof(*err));
	if (is_ini(text, len))
		ret = fdl_ini_parse(&p.c, fdl);
	else
		ret = fdl_each_line(&p.c, fdl, do_line);
	if (ret == 0 && !fdl->legacy) {
		fdl->has_accelfs = p.c.seen_sec & (1U << P_ACCELFS);
		ret = check_whole(&p, fdl);
	}
	if (ret == -ENOMEM)
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	return ret;
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
	fputc('"', f);
}

/* "\tKEYWORD                value": the layout ANALYZE/RMS/FDL uses. */
static void secondary(FILE *f, const char *kw)
{
	fprintf(f, "\t%-24s", kw);
}

static void put_file(FILE *f, const struct fdl *fdl)
{
	fputs("FILE\n", f);
	if (fdl->name) {
		secondary(f, "NAME");
		put_string(f, fdl->name, strlen(fdl->name));
		fputc('\n', f);
	}
	secondary(f, "ORGANIZATION");
	fputs("sequential\n", f);
	if (fdl->has_preallocate) {
		secondary(f, "ALLOCATION");
		fprintf(f, "%llu\n",
			(unsigned long long)((fdl->preallocate + FDL_BLOCK - 1) / FDL_BLOCK));
	}
	secondary(f, "BEST_TRY_CONTIGUOUS");
	fprintf(f, "%s\n", fdl->contiguous ? "yes" : "no");
	secondary(f, "CONTIGUOUS");
	fprintf(f, "%s\n", fdl->contiguous_required ? "yes" : "no");
	secondary(f, "EXTENSION");
	fprintf(f, "%llu\n", (unsigned long long)(fdl->extension / FDL_BLOCK));
}

static void put_record_linux(FILE *f, const struct fdl *fdl)
{
	static const char *const fmt[] = { "stream_lf", "variable", "fixed" };

	fputs("\nRECORD\n", f);
	secondary(f, "FORMAT");
	fprintf(f, "%s\n", fmt[fdl->format]);
	secondary(f, "SIZE");
	fprintf(f, "%u\n", fdl->record_size);
	fputs("\nLINUX\n", f);
	if (fdl->has_uid) {
		secondary(f, "OWNER");
		fprintf(f, "%u\n", (unsigned int)fdl->uid);
	}
	if (fdl->has_gid) {
		secondary(f, "GROUP");
		fprintf(f, "%u\n", (unsigned int)fdl->gid);
	}
	if (fdl->has_mode) {
		secondary(f, "MODE");
		fprintf(f, "%04o\n", (unsigned int)fdl->mode);
	}
	secondary(f, "HOLES");
	fprintf(f, "%s\n", fdl->holes == FDL_HOLES_KEEP ? "keep" : "allocate");
}

/* A value the daemon takes for tuning attribute @k, as stored: @a's own bytes. */
static bool takes(int k, const struct fdl_attr *a)
{
	return k < TUNING_N && a->len < TUNING_VALUE_LEN && !memchr(a->value, '\0', a->len) &&
	       tuning_stored_valid((enum tuning_key)k, a->value);
}

static void put_accelfs(FILE *f, const struct fdl *fdl)
{
	char kw[KEYWORD_MAX];
	size_t i, j;

	fputs("\nACCELFS\n", f);
	for (i = 0; i < fdl->nattrs; i++) {
		const struct fdl_attr *a = &fdl->attrs[i];
		int k = fdl_tuning_find(a->name);

		if (!takes(k, a)) {
			fprintf(f, "! " TUNING_PREFIX "%s ", a->name);
			put_string(f, a->value, a->len);
			fprintf(f, ": %s; accel convert does not set it\n",
				k < TUNING_N ? "a value the daemon does not take"
					     : "not a tuning attribute of this accelfs");
			continue;
		}
		for (j = 0; a->name[j] && j + 1 < sizeof(kw); j++)
			kw[j] =
			    a->name[j] >= 'a' && a->name[j] <= 'z' ? a->name[j] - 32 : a->name[j];
		kw[j] = '\0';
		secondary(f, kw);
		if (fdl_key_valid(a->value))
			fprintf(f, "%s\n", a->value);
		else
			put_string(f, a->value, a->len), fputc('\n', f);
	}
}

int fdl_write(FILE *f, const struct fdl *fdl, const char *comment, const char *ident)
{
	fprintf(f, "%s", comment ? comment : "");
	if (fdl->name) {
		fputs("TITLE\t", f);
		put_string(f, fdl->name, strlen(fdl->name));
		fputc('\n', f);
	}
	if (ident) {
		fputs("IDENT\t", f);
		put_string(f, ident, strlen(ident));
		fputc('\n', f);
	}
	fputs("\nSYSTEM\n", f);
	secondary(f, "SOURCE");
	fputs("\"Linux\"\n\n", f);
	put_file(f, fdl);
	put_record_linux(f, fdl);
	put_accelfs(f, fdl);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
