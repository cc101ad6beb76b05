// SPDX-License-Identifier: MIT
/*
 * test_disk.c - cache/disk*.c, the disk tier: CRC-32C against RFC 3720's
 * vectors; a bucket read back as written, short at the end of a file; none
 * for another state, namespace or bucket; runs of buckets read at once,
 * ending at a hole, a damaged bucket or the file's end; a range dropped; a damaged
 * bucket never served and punched out; an unsafe directory refused; the
 * old layout's directory removed; the size bound kept, entries read again
 * kept longest, a file larger than the bound keeping its end; and through
 * streams (cache/stream.c): a second pool (a restart) served from the tier
 * with no backend read, and a write by another stream of the host stopping
 * the tier for the old state and removing its copy of the written bucket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_test.h"
#include "disk.h"
#include "disk_i.h"
#include "stream.h"

#define BS 4096U

static char top[64];

static struct disk_tier *tier(const char *dir, const char *ns, uint64_t size, uint32_t bsize)
{
	char err[256] = "";
	struct disk_tier *d = NULL;
	int ret = disk_tier_open(&(struct disk_config){ .dir = dir,
							.size = size,
							.bucket_size = bsize,
							.ns = ns,
							.err = err,
							.errlen = sizeof(err) },
				 &d);

	if (ret)
		fprintf(stderr, "disk_tier_open(%s): %d: %s\n", dir, ret, err);
	if (!ret && (ret = disk_tier_start(d)) != 0) {
		fprintf(stderr, "disk_tier_start(%s): %d\n", dir, ret);
		disk_tier_close(d);
	}
	return ret ? NULL : d;
}

static void fresh_dir(char *out, size_t len, const char *tag)
{
	snprintf(out, len, "%s/%s", top, tag);
	CU_ASSERT_EQUAL_FATAL(mkdir(out, 0700), 0);
}

static void test_crc(void)
{
	unsigned char b[32];

	memset(b, 0, sizeof(b));
	CU_ASSERT_EQUAL(disk_crc32c(0, b, sizeof(b)), 0x8A9136AAU);
	memset(b, 0xff, sizeof(b));
	CU_ASSERT_EQUAL(disk_crc32c(0, b, sizeof(b)), 0x62A8AB43U);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	CU_ASSERT_EQUAL(disk_crc32c(0, b, sizeof(b)), 0x46DD794EU);
	CU_ASSERT_EQUAL(disk_crc32c(0, "123456789", 9), 0xE3069283U);
	/* in pieces, unaligned, as in one go */
	CU_ASSERT_EQUAL(disk_crc32c(disk_crc32c(0, "1234", 4), "56789", 5), 0xE3069283U);
	CU_ASSERT_EQUAL(disk_crc32c_sw(0, "123456789", 9), 0xE3069283U);
}

/* The instruction (where the CPU has it) and the tables agree at every
 * alignment and length, whole and in pieces. */
static void test_crc_paths(void)
{
	static unsigned char b[70000];
	unsigned int seed = 26;

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)rand_r(&seed);
	for (int k = 0; k < 2000; k++) {
		size_t off = (size_t)rand_r(&seed) % 64, len = (size_t)rand_r(&seed) % 65600;
		size_t cut = len ? (size_t)rand_r(&seed) % len : 0;
		uint32_t sw = disk_crc32c_sw(0, b + off, len);

		CU_ASSERT_EQUAL(disk_crc32c(0, b + off, len), sw);
		CU_ASSERT_EQUAL(disk_crc32c(disk_crc32c(0, b + off, cut), b + off + cut, len - cut),
				sw);
	}
}

static void test_roundtrip(void)
{
	char dir[128];
	uint8_t in[BS], out[BS];
	struct pool_file_id id = ct_id(7, BS + 100), other = id;
	struct disk_key k, ko;
	struct disk_stats s;
	struct disk_tier *d, *d2;

	fresh_dir(dir, sizeof(dir), "rt");
	d = tier(dir, "/src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	disk_key_of(d, &id, &k);
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 0, out), -ENOENT);
	ct_gen(in, BS, 7, 0, 1);
	disk_tier_put(d, &k, 0, in, BS);
	ct_gen(in + 0, 100, 7, 1, 1);
	disk_tier_put(d, &k, 1, in, 100);
	CU_ASSERT(disk_tier_has(d, &k, 1));
	CU_ASSERT(disk_tier_prefetch(d, &k, 1));
	CU_ASSERT_FALSE(disk_tier_prefetch(d, &k, 5));
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 1, out), 100);
	CU_ASSERT_EQUAL(memcmp(in, out, 100), 0);
	ct_gen(in, BS, 7, 0, 1);
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 0, out), (ssize_t)BS);
	CU_ASSERT_EQUAL(memcmp(in, out, BS), 0);
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 2, out), -ENOENT);
	/* another state of the file: nothing */
	other.mtime_ns++;
	disk_key_of(d, &other, &ko);
	CU_ASSERT_EQUAL(disk_tier_get(d, &ko, 0, out), -ENOENT);
	other = id;
	other.ctime_ns++;
	disk_key_of(d, &other, &ko);
	CU_ASSERT_EQUAL(disk_tier_get(d, &ko, 0, out), -ENOENT);
	/* the same file under another handle (a FUSE SOURCE's node, renewed
	 * after the kernel forgot it): the same entries */
	{
		unsigned char h1[8] = "handle-1";

		other = id;
		other.fh_type = 1;
		other.fh_bytes = sizeof(h1);
		other.fh = h1;
		disk_key_of(d, &other, &ko);
		CU_ASSERT_EQUAL(disk_tier_get(d, &ko, 0, out), (ssize_t)BS);
	}
	disk_tier_stats(d, &s);
	CU_ASSERT_EQUAL(s.hits, 3);
	CU_ASSERT_EQUAL(s.puts, 2);
	CU_ASSERT_EQUAL(s.corrupt, 0);
	/* another SOURCE sharing the directory: its own entries */
	d2 = tier(dir, "/other-src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d2);
	disk_key_of(d2, &id, &ko);
	CU_ASSERT_EQUAL(disk_tier_get(d2, &ko, 0, out), -ENOENT);
	disk_tier_close(d2);
	/* a drop removes the buckets it names, and no other */
	disk_tier_drop(d, &k, 0, 0);
	CU_ASSERT_FALSE(disk_tier_has(d, &k, 0));
	CU_ASSERT(disk_tier_has(d, &k, 1));
	CU_ASSERT_FALSE(disk_tier_prefetch(d, &k, 0)); /* a hole before a bucket kept */
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 0, out), -ENOENT);
	disk_tier_drop(d, &k, 0, UINT64_MAX);
	CU_ASSERT_FALSE(disk_tier_has(d, &k, 1));
	disk_tier_stats(d, &s);
	CU_ASSERT_EQUAL(s.corrupt, 0); /* holes are misses, not damage */
	disk_tier_close(d);
}

/* Runs of buckets in one read: up to a hole, a damaged bucket or the file's end. */
static void test_run(void)
{
	char dir[128];
	uint8_t in[BS], out[6 * BS];
	struct pool_file_id id = ct_id(13, 5 * BS + 100);
	struct disk_key k;
	struct disk_stats s;
	struct disk_tier *d;

	fresh_dir(dir, sizeof(dir), "run");
	d = tier(dir, "/src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	disk_key_of(d, &id, &k);
	for (unsigned b = 0; b < 6; b++) { /* all but bucket 3; the last is 100 bytes */
		if (b == 3)
			continue;
		ct_gen(in, b == 5 ? 100 : BS, 13, b, 1);
		disk_tier_put(d, &k, b, in, b == 5 ? 100 : BS);
	}
	CU_ASSERT_EQUAL(disk_tier_read(d, &k, 0, 6, out), (ssize_t)(3 * BS)); /* to the hole */
	for (unsigned b = 0; b < 3; b++) {
		ct_gen(in, BS, 13, b, 1);
		CU_ASSERT_EQUAL(memcmp(in, out + b * BS, BS), 0);
	}
	CU_ASSERT_EQUAL(disk_tier_read(d, &k, 3, 3, out), -ENOENT);
	CU_ASSERT_EQUAL(disk_tier_read(d, &k, 4, 6, out), (ssize_t)(BS + 100)); /* to the end */
	ct_gen(in, 100, 13, 5, 1);
	CU_ASSERT_EQUAL(memcmp(in, out + BS, 100), 0);
	disk_tier_stats(d, &s);
	CU_ASSERT_EQUAL(s.hits, 5);
	CU_ASSERT_EQUAL(s.misses, 1);
	/* a damaged bucket ends the run, and is punched out */
	ct_gen(in, BS, 13, 2, 1); /* bucket 2's bytes under bucket 1's header */
	{
		char path[512], cmd[256];
		FILE *p;
		int fd;

		snprintf(cmd, sizeof(cmd), "find %s -type f", dir);
		p = popen(cmd, "r");
		CU_ASSERT_FATAL(p && fgets(path, sizeof(path), p));
		pclose(p);
		path[strcspn(path, "\n")] = '\0';
		fd = open(path, O_WRONLY);
		CU_ASSERT_EQUAL(pwrite(fd, in, BS, (off_t)disk_slot(BS) + DISK_HDR), (ssize_t)BS);
		close(fd);
	}
	CU_ASSERT_EQUAL(disk_tier_read(d, &k, 0, 3, out), (ssize_t)BS);
	disk_tier_stats(d, &s);
	CU_ASSERT_EQUAL(s.corrupt, 1);
	CU_ASSERT_FALSE(disk_tier_has(d, &k, 1));
	disk_tier_close(d);
}

/* The one entry file below @dir. */
static int entry_path(const char *dir, char *out, size_t len)
{
	char cmd[512];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "find %s -type f", dir);
	p = popen(cmd, "r");
	ok = p && fgets(out, (int)len, p);
	if (p)
		pclose(p);
	out[strcspn(out, "\n")] = '\0';
	return ok ? 0 : -1;
}

static void test_damaged(void)
{
	const off_t slot = (off_t)disk_slot(BS);
	char dir[128], path[512];
	uint8_t in[BS], out[BS], copy[DISK_HDR + BS];
	struct pool_file_id id = ct_id(9, 5 * BS);
	struct disk_key k;
	struct disk_stats s;
	struct disk_tier *d;
	int fd;

	fresh_dir(dir, sizeof(dir), "dmg");
	d = tier(dir, "/src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	disk_key_of(d, &id, &k);
	for (unsigned b = 0; b < 5; b++) {
		ct_gen(in, BS, 9, b, 1);
		disk_tier_put(d, &k, b, in, BS);
	}
	CU_ASSERT_EQUAL_FATAL(entry_path(dir, path, sizeof(path)), 0);
	fd = open(path, O_RDWR);
	CU_ASSERT_FATAL(fd >= 0);
	/* a flipped data byte */
	CU_ASSERT_EQUAL(pwrite(fd, "!", 1, 0 * slot + DISK_HDR + 1000), 1);
	/* a flipped header byte (the key) */
	CU_ASSERT_EQUAL(pwrite(fd, "!", 1, 1 * slot + 40), 1);
	/* another bucket's slot in this one's place */
	CU_ASSERT_EQUAL(pread(fd, copy, sizeof(copy), 3 * slot), (ssize_t)sizeof(copy));
	CU_ASSERT_EQUAL(pwrite(fd, copy, sizeof(copy), 2 * slot), (ssize_t)sizeof(copy));
	/* the last one cut short (a power cut while it was written) */
	CU_ASSERT_EQUAL(ftruncate(fd, 4 * slot + DISK_HDR + 2000), 0);
	close(fd);
	for (unsigned b = 0; b < 5; b++)
		CU_ASSERT_EQUAL(disk_tier_get(d, &k, b, out), b == 3 ? (ssize_t)BS : -ENOENT);
	disk_tier_stats(d, &s);
	CU_ASSERT_EQUAL(s.corrupt, 4);
	for (unsigned b = 0; b < 5; b++)
		CU_ASSERT_EQUAL(disk_tier_has(d, &k, b), b == 3);
	/* punched out, so kept again by the next put, and whole */
	ct_gen(in, BS, 9, 1, 1);
	disk_tier_put(d, &k, 1, in, BS);
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 1, out), (ssize_t)BS);
	CU_ASSERT_EQUAL(memcmp(in, out, BS), 0);
	disk_tier_close(d);
}

/* The directory of the layout before (accelfs-disk-v1) goes at start. */
static void test_old_layout(void)
{
	char dir[128], path[256];
	struct disk_tier *d;
	struct stat st;
	int i;

	fresh_dir(dir, sizeof(dir), "old");
	snprintf(path, sizeof(path), "%s/" DISK_OLD_SUBDIR, dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/" DISK_OLD_SUBDIR "/ab", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/" DISK_OLD_SUBDIR "/ab/0123456789abcdef.3", dir);
	CU_ASSERT_EQUAL_FATAL(close(open(path, O_WRONLY | O_CREAT, 0600)), 0);
	d = tier(dir, "/src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	snprintf(path, sizeof(path), "%s/" DISK_OLD_SUBDIR, dir);
	for (i = 0; i < 500 && stat(path, &st) == 0; i++)
		usleep(10000);
	CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/" DISK_SUBDIR, dir);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	disk_tier_close(d);
}

static void test_refused(void)
{
	char dir[128], link_path[160], err[256];
	struct disk_tier *d = NULL;
	struct disk_config cfg = {
		.size = 1 << 20, .bucket_size = BS, .err = err, .errlen = sizeof(err)
	};

	snprintf(dir, sizeof(dir), "%s/open", top);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0755), 0);
	cfg.dir = dir;
	CU_ASSERT_EQUAL(disk_tier_open(&cfg, &d), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mode 0755"));
	snprintf(link_path, sizeof(link_path), "%s/link", top);
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(dir, link_path), 0);
	cfg.dir = link_path;
	CU_ASSERT(disk_tier_open(&cfg, &d) < 0);
	cfg.dir = "relative";
	CU_ASSERT_EQUAL(disk_tier_open(&cfg, &d), -EINVAL);
	cfg.dir = dir;
	cfg.size = 4096;
	CU_ASSERT_EQUAL(disk_tier_open(&cfg, &d), -EINVAL);
	CU_ASSERT_PTR_NULL(d);
}

static uint64_t file_bytes(const char *dir)
{
	char cmd[512];
	unsigned long long n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "find %s -type f -printf '%%b\\n' | awk '{ s += $1 * 512 } END { print s + 0 }'",
		 dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%llu", &n) != 1)
		n = 0;
	if (p)
		pclose(p);
	return n;
}

/* Wait up to 5 s for the tier's thread to bring @dir within 1M; its stats. */
static void bound_wait(struct disk_tier *d, const char *dir, struct disk_stats *s)
{
	for (int i = 0; i < 500; i++) { /* the thread scans at most once a second */
		disk_tier_stats(d, s);
		if (s->evicted && file_bytes(dir) <= (1 << 20))
			return;
		usleep(10000);
	}
}

/* Whole entries (files in a state) go: the one read again outlives the rest. */
static void test_bound(void)
{
	const uint32_t bs = 64 << 10;
	char dir[128];
	uint8_t *buf = malloc(bs);
	struct disk_key k[8];
	struct disk_stats s;
	struct disk_tier *d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	fresh_dir(dir, sizeof(dir), "bound");
	d = tier(dir, "/src", 1 << 20, bs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	for (unsigned f = 0; f < 8; f++) {
		struct pool_file_id id = ct_id(20 + f, 4ULL * bs);

		disk_key_of(d, &id, &k[f]);
	}
	/* file 0 is kept, then read again: it outlives the rest */
	for (uint64_t b = 0; b < 4; b++) {
		ct_gen(buf, bs, 20, b, 1);
		disk_tier_put(d, &k[0], b, buf, bs);
	}
	usleep(1100000); /* a hit within a second of the put is the same reading */
	CU_ASSERT_EQUAL(disk_tier_get(d, &k[0], 0, buf), (ssize_t)bs);
	/* seven more files of 4 buckets each, read once: 8 x 272K in a bound of 1M */
	for (unsigned f = 1; f < 8; f++) {
		if (f == 7)
			usleep(50000); /* past the file system's timestamp granularity */
		for (uint64_t b = 0; b < 4; b++) {
			ct_gen(buf, bs, 20 + f, b, 1);
			disk_tier_put(d, &k[f], b, buf, bs);
		}
	}
	bound_wait(d, dir, &s);
	CU_ASSERT(s.evicted > 0);
	CU_ASSERT(file_bytes(dir) <= (1 << 20));
	for (uint64_t b = 0; b < 4; b++)
		CU_ASSERT(disk_tier_has(d, &k[0], b)); /* read again: kept, whole */
	CU_ASSERT_FALSE(disk_tier_has(d, &k[1], 0));   /* the oldest read once: gone */
	CU_ASSERT(disk_tier_has(d, &k[7], 3));	       /* the newest: kept */
	disk_tier_close(d);
	free(buf);
}

/* One file larger than the bound: it loses its first buckets, keeps its end. */
static void test_bound_one_file(void)
{
	const uint32_t bs = 64 << 10;
	char dir[128];
	uint8_t *buf = malloc(bs);
	struct pool_file_id id = ct_id(40, 24ULL * bs);
	struct disk_key k;
	struct disk_stats s;
	struct disk_tier *d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	fresh_dir(dir, sizeof(dir), "bound1");
	d = tier(dir, "/src", 1 << 20, bs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	disk_key_of(d, &id, &k);
	for (uint64_t b = 0; b < 24; b++) { /* 24 x 68K in a bound of 1M */
		ct_gen(buf, bs, 40, b, 1);
		disk_tier_put(d, &k, b, buf, bs);
	}
	bound_wait(d, dir, &s);
	CU_ASSERT(s.evicted > 0);
	CU_ASSERT(file_bytes(dir) <= (1 << 20));
	CU_ASSERT_FALSE(disk_tier_has(d, &k, 0)); /* its first bucket: gone */
	CU_ASSERT(disk_tier_has(d, &k, 23));	  /* its last: kept */
	CU_ASSERT_EQUAL(disk_tier_get(d, &k, 23, buf), (ssize_t)bs);
	disk_tier_close(d);
	free(buf);
}

/* A backend of one file whose every byte is version @version's. */
struct backend {
	uint32_t version;
	uint64_t size;
	int reads;
};

static ssize_t backend_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct backend *b = arg;
	uint8_t *p = buf;

	b->reads++;
	if (off >= b->size)
		return 0;
	if (len > b->size - off)
		len = b->size - off;
	for (size_t done = 0; done < len; done += BS)
		ct_gen(p + done, len - done < BS ? len - done : BS, 3, (off + done) / BS,
		       b->version);
	return (ssize_t)len;
}

static void test_streams(void)
{
	char dir[128];
	struct pool *p1 = ct_open(ct_name("disk1"), BS, 64),
		    *p2 = ct_open(ct_name("disk2"), BS, 64);
	struct pool_file_id id = ct_id(3, 4 * BS);
	struct backend be = { .version = 1, .size = 4 * BS };
	uint8_t want[BS], got[BS];
	struct stream *s1, *s2, *s3;
	struct disk_key k;
	struct disk_tier *d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p2);
	fresh_dir(dir, sizeof(dir), "streams");
	d = tier(dir, "/src", 1 << 20, BS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	disk_key_of(d, &id, &k);
	/* first host boot: read from the backend, kept on disk */
	CU_ASSERT_EQUAL_FATAL(stream_open(p1, &id, "/f", 0, 0, &s1), 0);
	stream_set_disk(s1, d);
	for (uint64_t b = 0; b < 4; b++)
		CU_ASSERT_EQUAL(stream_read(s1, got, BS, b * BS, backend_read, &be), (ssize_t)BS);
	CU_ASSERT_EQUAL(be.reads, 4);
	for (uint64_t b = 0; b < 4; b++)
		CU_ASSERT(disk_tier_has(d, &k, b));
	stream_close(s1);
	/* a new pool (a restart): all from the disk tier, two buckets in one read of it */
	be.reads = 0;
	CU_ASSERT_EQUAL_FATAL(stream_open(p2, &id, "/f", 0, 0, &s2), 0);
	stream_set_disk(s2, d);
	{
		struct disk_stats ds0, ds1;
		struct pool_stats ps0, ps1;
		uint8_t two[2 * BS];

		disk_tier_stats(d, &ds0);
		CU_ASSERT_EQUAL(pool_stats_get(p2, &ps0), 0);
		CU_ASSERT_EQUAL(stream_read(s2, two, 2 * BS, 0, backend_read, &be),
				(ssize_t)(2 * BS));
		disk_tier_stats(d, &ds1);
		CU_ASSERT_EQUAL(pool_stats_get(p2, &ps1), 0);
		/* bucket 1 came with bucket 0's read of the tier, into the pool as
		 * read ahead (one tier read a bucket: none) */
		CU_ASSERT_EQUAL(ps1.c[POOL_C_RA_ISSUED] - ps0.c[POOL_C_RA_ISSUED], 1);
		for (uint64_t b = 0; b < 2; b++) {
			ct_gen(want, BS, 3, b, 1);
			CU_ASSERT_EQUAL(memcmp(want, two + b * BS, BS), 0);
		}
		CU_ASSERT_EQUAL(ds1.hits - ds0.hits, 2);
		CU_ASSERT_EQUAL(ds1.misses - ds0.misses, 0);
	}
	CU_ASSERT_EQUAL(be.reads, 0);
	/* another stream of the host writes bucket 2: the backend now has version 2 */
	CU_ASSERT_EQUAL_FATAL(stream_open(p2, &id, "/f", 0, 0, &s3), 0);
	stream_set_disk(s3, d);
	CU_ASSERT_EQUAL(stream_write_begin(s3, 2 * BS, 10), 0);
	be.version = 2;
	CU_ASSERT_EQUAL(stream_write_end(s3, 2 * BS, 10), 0);
	CU_ASSERT_FALSE(disk_tier_has(d, &k, 2)); /* the old state's entry of it: gone */
	/* s2 still knows the old state: bucket 3 is not taken from the tier either */
	CU_ASSERT_EQUAL(stream_read(s2, got, BS, 3 * BS, backend_read, &be), (ssize_t)BS);
	ct_gen(want, BS, 3, 3, 2);
	CU_ASSERT_EQUAL(memcmp(want, got, BS), 0);
	CU_ASSERT_EQUAL(be.reads, 1);
	CU_ASSERT_EQUAL(stream_read(s2, got, BS, 2 * BS, backend_read, &be), (ssize_t)BS);
	ct_gen(want, BS, 3, 2, 2);
	CU_ASSERT_EQUAL(memcmp(want, got, BS), 0);
	stream_close(s3);
	stream_close(s2);
	/* deferred bytes in the pool: a stream opened now does not take the tier
	 * (their flush will change SOURCE without moving wseq) */
	{
		struct stream *sw, *sr;
		struct stream_disk sd;
		bool foreign;

		CU_ASSERT_EQUAL_FATAL(stream_open(p2, &id, "/f", 0, 0, &sw), 0);
		CU_ASSERT_EQUAL(stream_write_defer(sw, "deferred", 8, BS + 5, backend_read, &be,
						   4242, &foreign),
				8);
		CU_ASSERT_EQUAL_FATAL(stream_open(p2, &id, "/f", 0, 0, &sr), 0);
		stream_set_disk(sr, d);
		CU_ASSERT_FALSE(stream_disk_get(sr, &sd));
		CU_ASSERT(pool_dirty_discard(stream_file(sw), 4242) >= 0);
		stream_close(sr);
		stream_close(sw);
	}
	disk_tier_close(d);
	pool_close(p1);
	pool_close(p2);
}

int main(void)
{
	CU_pSuite s = ct_suite("disk");

	snprintf(top, sizeof(top), "/tmp/accelfs-test-disk.XXXXXX");
	if (!s || !mkdtemp(top))
		return 2;
	CU_add_test(s, "CRC-32C vectors", test_crc);
	CU_add_test(s, "CRC-32C instruction and tables agree", test_crc_paths);
	CU_add_test(s, "a bucket read back; none for another state", test_roundtrip);
	CU_add_test(s, "runs of buckets in one read", test_run);
	CU_add_test(s, "damaged buckets never served", test_damaged);
	CU_add_test(s, "unsafe directories refused", test_refused);
	CU_add_test(s, "the old layout's directory removed", test_old_layout);
	CU_add_test(s, "the size bound; read-again entries kept", test_bound);
	CU_add_test(s, "a file larger than the bound keeps its end", test_bound_one_file);
	CU_add_test(s, "streams: a restart served from disk, a write stops it", test_streams);
	{
		int ret = ct_run();
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd))
			ret = ret ? ret : 1;
		return ret;
	}
}
