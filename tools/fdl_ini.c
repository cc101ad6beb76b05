// SPDX-License-Identifier: MIT
/*
 * fdl_ini.c - the older accelfs file-definition form, still read so that
 * files written by earlier versions of `accel analyze --fdl` keep working:
 * "[section]" headers and "key = value" lines, '#' comments, sizes in
 * bytes. Its meaning maps onto struct fdl field by field (docs/defrag.md,
 * "The older INI form"); the [accelfs] values are checked as in FDL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdl_i.h"

enum section { SEC_NONE, SEC_FILE, SEC_ALLOCATION, SEC_OWNERSHIP, SEC_ACCELFS, SEC_COUNT };

static const char *const section_name[SEC_COUNT] = { "", "file", "allocation", "ownership",
						     "accelfs" };

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

static int set_key(struct fdl_cur *c, enum key_id id, struct fdl_val *v, struct fdl *fdl)
{
	const char *key = key_table[id].name;
	uint64_t n = 0;
	int ret;

	switch (id) {
	case K_NAME:
		free(fdl->name);
		fdl->name = v->buf;
		v->buf = NULL;
		return 0;
	case K_SIZE:
		return fdl_parse_size(c, v, &n, key); /* informational */
	case K_PREALLOC:
		fdl->has_preallocate = true;
		return fdl_parse_size(c, v, &fdl->preallocate, key);
	case K_CONTIG:
		return fdl_parse_bool(c, v, &fdl->contiguous, key);
	case K_HOLES:
		if (strcmp(v->buf, "keep") && strcmp(v->buf, "allocate"))
			return fdl_fail(c, v->at, "holes must be 'keep' or 'allocate', not '%s'",
					v->buf);
		fdl->holes = strcmp(v->buf, "keep") ? FDL_HOLES_ALLOCATE : FDL_HOLES_KEEP;
		return 0;
	case K_UID:
	case K_GID:
		ret = fdl_parse_uint(c, v, 10, UINT32_MAX - 1, &n, key);
		if (id == K_UID)
			fdl->has_uid = true, fdl->uid = (uid_t)n;
		else
			fdl->has_gid = true, fdl->gid = (gid_t)n;
		return ret;
	default:
		ret = fdl_parse_uint(c, v, 8, 07777, &n, key);
		fdl->mode = (mode_t)n;
		fdl->has_mode = true;
		return ret;
	}
}

static int do_key(struct fdl_cur *c, const char *key, size_t key_at, struct fdl_val *v,
		  struct fdl *fdl)
{
	unsigned int id;

	if (c->sec == SEC_ACCELFS)
		return fdl_tuning_set(c, "[accelfs]", key, key_at, v, fdl);
	for (id = 0; id < K_COUNT; id++) {
		if (key_table[id].sec == (enum section)c->sec &&
		    strcmp(key_table[id].name, key) == 0)
			break;
	}
	if (id == K_COUNT)
		return fdl_fail(c, key_at, "unknown key '%s' in section [%s]", key,
				section_name[c->sec]);
	if (c->seen_key & (1U << id))
		return fdl_fail(c, key_at, "key '%s' appears twice", key);
	c->seen_key |= 1U << id;
	if (memchr(v->buf, '\0', v->len))
		return fdl_fail(c, v->at, "%s: a NUL byte is not allowed here", key);
	return set_key(c, (enum key_id)id, v, fdl);
}

static int do_section(struct fdl_cur *c)
{
	size_t at = ++c->pos, end;
	unsigned int i;

	while (!fdl_at_eol(c) && fdl_key_char(c->s[c->pos]))
		c->pos++;
	end = c->pos;
	if (fdl_at_eol(c) || c->s[c->pos] != ']')
		return fdl_fail(c, c->pos, "expected ']' to close the section name");
	c->pos++;
	for (i = 1; i < SEC_COUNT; i++) {
		if (strlen(section_name[i]) == end - at &&
		    !memcmp(c->s + at, section_name[i], end - at))
			break;
	}
	if (i == SEC_COUNT)
		return fdl_fail(c, at,
				"unknown section [%.*s] (known: file, allocation, ownership, "
				"accelfs)",
				(int)(end - at), c->s + at);
	if (c->seen_sec & (1U << i))
		return fdl_fail(c, at, "section [%s] appears twice", section_name[i]);
	c->seen_sec |= 1U << i;
	c->sec = (int)i;
	return fdl_expect_eol(c, "section header");
}

static int do_assignment(struct fdl_cur *c, struct fdl *fdl)
{
	size_t key_at = c->pos;
	struct fdl_val v = { 0 };
	char key[128];
	int ret;

	while (!fdl_at_eol(c) && fdl_key_char(c->s[c->pos]))
		c->pos++;
	if (c->pos == key_at)
		return fdl_fail(c, key_at, "expected a key, a [section] or a # comment");
	if (c->pos - key_at >= sizeof(key))
		return fdl_fail(c, key_at, "key is longer than %zu bytes", sizeof(key) - 1);
	memcpy(key, c->s + key_at, c->pos - key_at);
	key[c->pos - key_at] = '\0';
	fdl_skip_blank(c);
	if (fdl_at_eol(c) || c->s[c->pos] != '=')
		return fdl_fail(c, c->pos, "expected '=' after key '%s'", key);
	c->pos++;
	fdl_skip_blank(c);
	if (c->sec == SEC_NONE)
		return fdl_fail(c, key_at, "key '%s' before any [section]", key);
	ret = fdl_lex_value(c, &v, key);
	if (ret == 0)
		ret = do_key(c, key, key_at, &v, fdl);
	free(v.buf);
	return ret;
}

static int do_line(struct fdl_cur *c, struct fdl *fdl)
{
	fdl_skip_blank(c);
	if (fdl_at_eol(c) || c->s[c->pos] == '#')
		return 0;
	if (c->s[c->pos] == '[')
		return do_section(c);
	return do_assignment(c, fdl);
}

int fdl_ini_parse(struct fdl_cur *c, struct fdl *fdl)
{
	int ret;

	c->comment = '#';
	fdl->legacy = true;
	ret = fdl_each_line(c, fdl, do_line);
	fdl->has_accelfs = c->seen_sec & (1U << SEC_ACCELFS);
	return ret;
}
