// SPDX-License-Identifier: MIT
/*
 * pool_name.c - the one parser of pool names (see pool_name.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pool_name.h"

int pool_name_parse(const char *arg, char out[POOL_NAME_LEN], char *why, size_t len)
{
	const char *base = arg[0] == '/' ? arg + 1 : arg;
	size_t n = strlen(base);

	if (n == 0 || n + 2 > POOL_NAME_LEN || strchr(base, '/')) {
		if (why && len)
			snprintf(why, len,
				 "pool name \"%s\": need \"name\" or \"/name\" without another "
				 "'/', up to %d bytes",
				 arg, POOL_NAME_LEN - 2);
		return -EINVAL;
	}
	out[0] = '/';
	memcpy(out + 1, base, n + 1);
	return 0;
}
