/* SPDX-License-Identifier: MIT */
/*
 * cache_test.h - helpers shared by the cache/ suites: unique pool names (so
 * parallel runs never meet), a registry that unlinks every pool a test made
 * even when an assertion fails, the main() every suite shares (ct_suite,
 * ct_run), and bucket contents that are a function of (file, bucket, version)
 * so any reader can verify what it got.
 */
#ifndef ACCELFS_TESTS_CACHE_TEST_H
#define ACCELFS_TESTS_CACHE_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "pool.h"

#define CT_MAX_POOLS 64

static char ct_names[CT_MAX_POOLS][POOL_NAME_LEN];
static int ct_nnames;

/* A pool name unique to this process and @tag, registered for cleanup. */
static inline const char *ct_name(const char *tag)
{
	char *n = ct_names[ct_nnames % CT_MAX_POOLS];

	snprintf(n, POOL_NAME_LEN, "/accelfs-t-%s-%d", tag, (int)getpid());
	ct_nnames++;
	return n;
}

static inline void ct_cleanup(void)
{
	for (int i = 0; i < ct_nnames && i < CT_MAX_POOLS; i++)
		pool_unlink(ct_names[i]);
}

/* main(): a fresh registry with suite @name to add the tests to; NULL if CUnit fails. */
static inline CU_pSuite ct_suite(const char *name)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return NULL;
	return CU_add_suite(name, NULL, NULL);
}

/*
 * main(): run the suite, then unlink every pool its tests made (after failed
 * assertions too, so /dev/shm stays clean); the exit status for meson.
 */
static inline int ct_run(void)
{
	int ret = cunit_run();

	ct_cleanup();
	return ret;
}

/* Create (or attach to) pool @name of @nbufs buckets of @bsize bytes. */
static inline struct pool *ct_open(const char *name, uint32_t bsize, uint32_t nbufs)
{
	char err[256];
	struct pool_config cfg = { .name = name,
				   .bucket_size = bsize,
				   .nbufs = nbufs,
				   .err = err,
				   .errlen = sizeof(err) };
	struct pool *pool = NULL;
	int ret = pool_open(&cfg, &pool);

	if (ret)
		fprintf(stderr, "pool_open(%s): %d: %s\n", name, ret, err);
	return ret ? NULL : pool;
}

static inline struct pool_file_id ct_id(uint64_t ino, uint64_t size)
{
	struct pool_file_id id = {
		.dev = 42, .ino = ino, .size = size, .mtime_ns = 1000, .ctime_ns = 2000
	};
	return id;
}

/* Header of every generated bucket: who it is, so a reader can check. */
struct ct_hdr {
	uint32_t file;
	uint32_t version;
	uint64_t bucket;
};

static inline uint8_t ct_byte(uint32_t file, uint64_t bucket, uint32_t version, size_t i)
{
	uint64_t x = (file * 0x9e3779b97f4a7c15ULL) ^ (bucket * 0xc2b2ae3d27d4eb4fULL) ^
		     ((uint64_t)version << 17) ^ (i * 0x165667b19e3779f9ULL);

	return (uint8_t)((x ^ (x >> 29) ^ (x >> 41)) & 0xff);
}

static inline void ct_gen(void *buf, size_t len, uint32_t file, uint64_t bucket, uint32_t version)
{
	struct ct_hdr h = { file, version, bucket };
	uint8_t *p = buf;

	for (size_t i = sizeof(h); i < len; i++)
		p[i] = ct_byte(file, bucket, version, i);
	memcpy(p, &h, len < sizeof(h) ? len : sizeof(h));
}

/* Is @buf a whole generated bucket for (file, bucket)? Sets *version. */
static inline bool ct_verify(const void *buf, size_t len, uint32_t file, uint64_t bucket,
			     uint32_t *version)
{
	struct ct_hdr h;
	const uint8_t *p = buf;

	if (len < sizeof(h))
		return false;
	memcpy(&h, p, sizeof(h));
	if (h.file != file || h.bucket != bucket)
		return false;
	for (size_t i = sizeof(h); i < len; i++)
		if (p[i] != ct_byte(file, bucket, h.version, i))
			return false;
	*version = h.version;
	return true;
}

/* Fill bucket @b of @pf with version @v content of @len bytes; returns pool_buf_fill's result. */
static inline int ct_fill(struct pool_file *pf, uint32_t file, uint64_t b, uint32_t v, size_t len)
{
	struct pool_ticket t;
	void *buf = malloc(len ? len : 1);
	int ret = pool_file_ticket_get(pf, &t);

	if (!ret) {
		ct_gen(buf, len, file, b, v);
		ret = pool_buf_fill(pf, &t, b, buf, len);
	}
	free(buf);
	return ret;
}

#endif
