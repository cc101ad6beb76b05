/* SPDX-License-Identifier: MIT */
/*
 * pool_name.h - how people spell a pool: the one parser of pool names, for
 * the daemon's -o pool= and every `accel --pool`, so that a name one of them
 * accepts every other accepts too and means the same segment.
 */
#ifndef ACCELFS_CACHE_POOL_NAME_H
#define ACCELFS_CACHE_POOL_NAME_H

#include <stddef.h>

#include "pool_layout.h"

/*
 * pool_name_parse - the shared-memory name ("/name", /dev/shm/name) of the
 * pool a person wrote as @arg: "name" or "/name". Writes it to @out
 * (POOL_NAME_LEN bytes). Returns 0, or -EINVAL for an empty name, a '/'
 * inside it, or a name too long for the pool header; then @why (if not NULL)
 * receives one line saying what a name must be.
 */
int pool_name_parse(const char *arg, char out[POOL_NAME_LEN], char *why, size_t len);

#endif
