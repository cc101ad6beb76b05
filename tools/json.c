// SPDX-License-Identifier: MIT
/*
 * json.c - the one JSON writer of accel's --json outputs (see json.h).
 */
#include <stdio.h>

#include "json.h"

void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

void json_string_or_null(const char *s)
{
	if (s)
		json_string(s);
	else
		fputs("null", stdout);
}

void json_key(const char *sep, const char *key)
{
	printf("%s\"%s\": ", sep, key);
}

void json_u64(const char *sep, const char *key, uint64_t v)
{
	json_key(sep, key);
	printf("%llu", (unsigned long long)v);
}

void json_percent(const char *sep, const char *key, double pct, bool known)
{
	json_key(sep, key);
	if (known)
		printf("%.2f", pct);
	else
		fputs("null", stdout);
}
