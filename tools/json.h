/* SPDX-License-Identifier: MIT */
/*
 * json.h - the one JSON writer of accel's --json outputs.
 *
 * A command prints its document on stdout as it walks its data, with no tree
 * in memory. These functions write the pieces whose form must be the same in
 * every command: a string with its escapes, a missing value as null, a
 * counter, a percentage with two decimals. The shape (braces, brackets,
 * newlines) stays with the command; @sep is what comes before a member: ""
 * for the first, ", " for the others.
 */
#ifndef ACCELFS_TOOLS_JSON_H
#define ACCELFS_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>

/* @s as a JSON string literal: quotes, backslashes and control bytes escaped. */
void json_string(const char *s);

/* @s as json_string(), or null when @s is NULL. */
void json_string_or_null(const char *s);

/* @sep, then "@key": (a member's name; keys are the program's own names). */
void json_key(const char *sep, const char *key);

/* The member "@key": @v. */
void json_u64(const char *sep, const char *key, uint64_t v);

/* The member "@key": @pct with two decimals, or null unless @known. */
void json_percent(const char *sep, const char *key, double pct, bool known);

#endif
