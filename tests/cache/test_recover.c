// SPDX-License-Identifier: MIT
/*
 * test_recover.c - a dead owner's dirty buffers (I9, cache/recover.c) on
 * real files: written back when the slot's handle opens the very file,
 * exactly once when two recoverers race; dropped (and said why) when the
 * file is gone or the slot was damaged: a handle length beyond the field,
 * a bogus handle type, the handle of another file, a buffer naming a slot
 * out of range, a pool others can write. A live owner's buffers are never
 * touched. Needs root (open_by_handle_at wants CAP_DAC_READ_SEARCH) and a
 * /tmp with file handles; else exit 77.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cache_test.h"
#include "pool_i.h"

#define BS 4096U
#define NBUFS 64U

static char dir[64];

struct handle {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
};

/* A file of @n buckets of @c in the test directory; its identity with handle into @id. */
static void make_file(const char *name, char c, unsigned int n, struct pool_file_id *id,
		      struct handle *fh)
{
	char path[128], buf[BS];
	struct stat st;
	int fd, mnt;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(buf, c, sizeof(buf));
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	for (unsigned int i = 0; i < n; i++)
		CU_ASSERT_FATAL(write(fd, buf, BS) == BS);
	CU_ASSERT_FATAL(fstat(fd, &st) == 0);
	close(fd);
	fh->h.handle_bytes = MAX_HANDLE_SZ;
	CU_ASSERT_FATAL(name_to_handle_at(AT_FDCWD, path, &fh->h, &mnt, 0) == 0);
	*id = (struct pool_file_id){ .dev = st.st_dev,
				     .ino = st.st_ino,
				     .size = (uint64_t)st.st_size,
				     .mtime_ns = st.st_mtim.tv_nsec,
				     .ctime_ns = st.st_ctim.tv_nsec,
				     .fh_type = (uint32_t)fh->h.handle_type,
				     .fh_bytes = fh->h.handle_bytes,
				     .fh = fh->h.f_handle };
}

/* Is every byte of bucket @b of file @name @c? */
static bool bucket_is(const char *name, unsigned int b, char c)
{
	char path[128], buf[BS];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	ok = fd >= 0 && pread(fd, buf, BS, (off_t)b * BS) == BS;
	for (unsigned int i = 0; ok && i < BS; i++)
		ok = buf[i] == c;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Defer whole bucket @b of @pf as @c, owned by @owner. */
static int defer(struct pool_file *pf, unsigned int b, char c, uint32_t owner)
{
	char buf[BS];
	int ret;

	memset(buf, c, sizeof(buf));
	ret = pool_buf_write_begin_mode(pf, (uint64_t)b * BS, BS, true);
	if (!ret)
		ret = pool_dirty_defer(pf, b, 0, buf, BS, NULL, 0, 0, owner);
	pool_buf_write_end(pf);
	return ret;
}

/*
 * A daemon that defers whole buckets [@first, @first + @n) of @id as @c, as
 * appends (pool_file_set_append) if @append, and dies before writing them.
 */
static void defer_and_die_at(struct pool *pool, const struct pool_file_id *id, unsigned int first,
			     unsigned int n, char c, bool append)
{
	pid_t child = fork();
	int status;

	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		struct pool_file *pf;
		int bad = pool_file_get(pool, id, "f", 0, &pf);

		if (!bad && append)
			pool_file_set_append(pf);
		for (unsigned int b = first; b < first + n && !bad; b++)
			bad = defer(pf, b, c, (uint32_t)getpid()) != 1;
		_exit(bad);
	}
	CU_ASSERT_FATAL(waitpid(child, &status, 0) == child);
	CU_ASSERT_FATAL(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A daemon that defers buckets [0, @n) of @id as @c and dies before writing them back. */
static void defer_and_die(struct pool *pool, const struct pool_file_id *id, unsigned int n, char c)
{
	defer_and_die_at(pool, id, 0, n, c, false);
}

/* Append @n buckets of @c to file @name directly, as another host would; its size after. */
static off_t append_direct(const char *name, unsigned int n, char c)
{
	char path[128], buf[BS];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(buf, c, sizeof(buf));
	fd = open(path, O_WRONLY | O_APPEND);
	CU_ASSERT_FATAL(fd >= 0);
	for (unsigned int i = 0; i < n; i++)
		CU_ASSERT_FATAL(write(fd, buf, BS) == BS);
	CU_ASSERT_FATAL(fstat(fd, &st) == 0);
	close(fd);
	return st.st_size;
}

static off_t size_of(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CU_ASSERT_FATAL(stat(path, &st) == 0);
	return st.st_size;
}

struct tally {
	uint32_t recovered, lost, files;
	const char *why;
};

static void note_fn(void *arg, const struct pool_recover_note *n)
{
	struct tally *t = arg;

	t->recovered += n->recovered;
	t->lost += n->lost;
	t->files++;
	if (n->why)
		t->why = n->why;
}

static uint64_t counter(struct pool *pool, enum pool_counter c)
{
	struct pool_stats ps;

	CU_ASSERT_FATAL(pool_stats_get(pool, &ps) == 0);
	return ps.c[c];
}

/* The slot of file @id, by opening and closing a handle on it. */
static struct pool_fslot *slot_of(struct pool *pool, const struct pool_file_id *id)
{
	struct pool_file *pf;
	uint32_t slot, gen;

	CU_ASSERT_FATAL(pool_file_get(pool, id, "f", 0, &pf) == 0);
	pool_stats_fslot(pf, &slot, &gen);
	pool_file_put(pf);
	return &pool->files[slot];
}

static void test_written_back(void)
{
	struct pool *pool = ct_open(ct_name("rc-back"), BS, NBUFS);
	struct tally t = { 0 };
	struct pool_file_id id;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("back", 'O', 4, &id, &fh);
	defer_and_die(pool, &id, 3, 'N');
	CU_ASSERT(bucket_is("back", 0, 'O'));
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 3);
	CU_ASSERT_EQUAL(t.recovered, 3);
	CU_ASSERT_EQUAL(t.lost, 0);
	CU_ASSERT_EQUAL(t.files, 1);
	for (unsigned int b = 0; b < 3; b++)
		CU_ASSERT(bucket_is("back", b, 'N'));
	CU_ASSERT(bucket_is("back", 3, 'O'));
	CU_ASSERT_EQUAL(counter(pool, POOL_C_DIRTY_RECOVERED), 3);
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 0);
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 0); /* nothing left */
	pool_close(pool);
}

/*
 * A dead daemon's deferred appends go to SOURCE's end, not to the offsets it
 * believed: another host appended meanwhile, and its record is kept, ours
 * after it, in order. The flag lasts only as long as the dirty bytes: the
 * same buffer made dirty again by an offset write is written at its offset.
 */
static void test_appends_at_end(void)
{
	struct pool *pool = ct_open(ct_name("rc-append"), BS, NBUFS);
	struct tally t = { 0 };
	struct pool_file_id id;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("app", 'O', 1, &id, &fh);
	/* ours: buckets 1 and 2, appended after the file's one bucket */
	defer_and_die_at(pool, &id, 1, 2, 'N', true);
	/* another host's, meanwhile: where ours would have gone */
	CU_ASSERT_FATAL(append_direct("app", 1, 'X') == 2 * BS);
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 2);
	CU_ASSERT_EQUAL(t.recovered, 2);
	CU_ASSERT_EQUAL(t.lost, 0);
	CU_ASSERT_EQUAL(size_of("app"), 4 * BS);
	CU_ASSERT(bucket_is("app", 0, 'O'));
	CU_ASSERT(bucket_is("app", 1, 'X')); /* the other host's record kept */
	CU_ASSERT(bucket_is("app", 2, 'N'));
	CU_ASSERT(bucket_is("app", 3, 'N'));
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 0);

	/* bucket 1's buffer again, dirty from an offset write this time */
	memset(&t, 0, sizeof(t));
	defer_and_die_at(pool, &id, 1, 1, 'Z', false);
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 1);
	CU_ASSERT_EQUAL(size_of("app"), 4 * BS);
	CU_ASSERT(bucket_is("app", 1, 'Z'));
	CU_ASSERT(bucket_is("app", 3, 'N'));
	pool_close(pool);
}

/* pool_recover_all() with files limited to @limit bytes (EFBIG past it). */
static int recover_capped(struct pool *pool, rlim_t limit, struct tally *t)
{
	struct rlimit old, low;
	int ret;

	CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
	low = old;
	low.rlim_cur = limit;
	signal(SIGXFSZ, SIG_IGN);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &low) == 0);
	ret = pool_recover_all(pool, note_fn, t);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_DFL);
	return ret;
}

/* An append run SOURCE takes only part of (EFBIG past RLIMIT_FSIZE): the next
 * pass appends the rest alone, nothing twice. */
static void test_appends_cut(void)
{
	struct pool *pool = ct_open(ct_name("rc-appcut"), BS, NBUFS);
	struct tally t = { 0 };
	struct pool_file_id id;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("appcut", 'O', 1, &id, &fh);
	defer_and_die_at(pool, &id, 1, 2, 'N', true);
	/* room for one of the two buckets */
	CU_ASSERT_EQUAL(recover_capped(pool, 2 * BS, &t), 0);
	CU_ASSERT(t.why && strstr(t.why, "kept for the next pass"));
	CU_ASSERT_EQUAL(size_of("appcut"), 2 * BS);
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 1);
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 1);
	CU_ASSERT_EQUAL(size_of("appcut"), 3 * BS);
	CU_ASSERT(bucket_is("appcut", 1, 'N') && bucket_is("appcut", 2, 'N'));
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 0);
	pool_close(pool);
}

/* A write-back that fails (here: EFBIG past RLIMIT_FSIZE) keeps the buffers
 * dirty for the next pass, which writes them once the cause is gone. */
static void test_write_fails_kept(void)
{
	struct pool *pool = ct_open(ct_name("rc-efbig"), BS, NBUFS);
	struct tally t = { 0 };
	struct pool_file_id id;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("efbig", 'O', 4, &id, &fh);
	defer_and_die(pool, &id, 3, 'N');
	CU_ASSERT_EQUAL(recover_capped(pool, BS / 2, &t), 0);
	CU_ASSERT_EQUAL(t.recovered, 0);
	CU_ASSERT_EQUAL(t.lost, 0);
	CU_ASSERT(t.why && strstr(t.why, "kept for the next pass"));
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 3);
	CU_ASSERT_EQUAL(counter(pool, POOL_C_DIRTY_LOST), 0);
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 3);
	for (unsigned int b = 0; b < 3; b++)
		CU_ASSERT(bucket_is("efbig", b, 'N'));
	CU_ASSERT(bucket_is("efbig", 3, 'O'));
	CU_ASSERT_EQUAL(pool_fslot_ndirty(slot_of(pool, &id)), 0);
	pool_close(pool);
}

/* Damage slot @id's handle with @damage, then recovery must drop, not write. */
static void dropped_when(const char *tag, void (*damage)(struct pool *, struct pool_fslot *),
			 const char *why)
{
	struct pool *pool = ct_open(ct_name(tag), BS, NBUFS);
	struct tally t = { 0 };
	struct pool_file_id id, other;
	struct handle fh, fh2;

	CU_ASSERT_FATAL(pool != NULL);
	make_file(tag, 'O', 2, &id, &fh);
	make_file("other", 'X', 2, &other, &fh2);
	defer_and_die(pool, &id, 2, 'N');
	damage(pool, slot_of(pool, &id));
	CU_ASSERT_EQUAL(pool_recover_all(pool, note_fn, &t), 0);
	CU_ASSERT_EQUAL(t.lost, 2);
	CU_ASSERT_EQUAL(t.recovered, 0);
	CU_ASSERT(t.why && (!why || strstr(t.why, why)));
	if (why && (!t.why || !strstr(t.why, why)))
		fprintf(stderr, "%s: why \"%s\", want \"%s\"\n", tag, t.why ? t.why : "", why);
	CU_ASSERT(bucket_is(tag, 0, 'O') && bucket_is(tag, 1, 'O'));
	CU_ASSERT(bucket_is("other", 0, 'X') && bucket_is("other", 1, 'X'));
	CU_ASSERT_EQUAL(counter(pool, POOL_C_DIRTY_LOST), 2);
	pool_close(pool);
}

static void long_handle(struct pool *pool, struct pool_fslot *fs)
{
	(void)pool;
	fs->fh_bytes = POOL_FH_MAX + 1000; /* a bound read from shared memory */
}

static void bogus_type(struct pool *pool, struct pool_fslot *fs)
{
	(void)pool;
	fs->fh_type = 0x7fff;
}

static void other_file(struct pool *pool, struct pool_fslot *fs)
{
	char path[128];
	struct handle fh;
	int mnt;

	(void)pool;
	snprintf(path, sizeof(path), "%s/other", dir);
	fh.h.handle_bytes = MAX_HANDLE_SZ;
	CU_ASSERT_FATAL(name_to_handle_at(AT_FDCWD, path, &fh.h, &mnt, 0) == 0);
	CU_ASSERT_FATAL(fh.h.handle_bytes <= POOL_FH_MAX);
	fs->fh_type = (uint32_t)fh.h.handle_type;
	fs->fh_bytes = fh.h.handle_bytes;
	memcpy(fs->fh, fh.h.f_handle, fh.h.handle_bytes);
}

static void shared_pool(struct pool *pool, struct pool_fslot *fs)
{
	(void)fs;
	pool->seg_private = false; /* as attached to a pool_mode=0660 segment */
}

/* The file deleted and a new one made under its name (perhaps on its inode number). */
static void deleted(struct pool *pool, struct pool_fslot *fs)
{
	struct pool_file_id id;
	struct handle fh;
	char path[128];

	(void)pool;
	(void)fs;
	snprintf(path, sizeof(path), "%s/rc-gone", dir);
	CU_ASSERT_FATAL(unlink(path) == 0);
	make_file("rc-gone", 'O', 2, &id, &fh);
}

static void test_long_handle(void)
{
	dropped_when("rc-long", long_handle, "no file handle");
}

static void test_bogus_type(void)
{
	dropped_when("rc-type", bogus_type, NULL); /* ext4 says ESTALE, others EINVAL */
}

static void test_other_file(void)
{
	dropped_when("rc-other", other_file, "opens another file");
}

static void test_shared_pool(void)
{
	dropped_when("rc-shared", shared_pool, "writable by others");
}

/* A buffer naming a slot beyond the table, and a slot out of range: ignored, no crash. */
static void test_out_of_range(void)
{
	struct pool *pool = ct_open(ct_name("rc-range"), BS, NBUFS);
	struct pool_file_id id;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("range", 'O', 1, &id, &fh);
	defer_and_die(pool, &id, 1, 'N');
	for (uint32_t i = 0; i < pool->nbufs; i++)
		if (pool->bufs[i].flags & POOL_BUF_F_DIRTY)
			pool->bufs[i].file = pool->nfiles + 3;
	CU_ASSERT_EQUAL(pool_recover_all(pool, NULL, NULL), 0);
	CU_ASSERT_EQUAL(pool_recover_slot(pool, pool->nfiles + 3, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(pool_recover_slot(pool, UINT32_MAX, NULL, NULL), -EINVAL);
	CU_ASSERT(bucket_is("range", 0, 'O'));
	pool_close(pool);
}

/* A live owner's buffers are its own to write: recovery leaves them be. */
static void test_live_owner(void)
{
	struct pool *pool = ct_open(ct_name("rc-live"), BS, NBUFS);
	struct pool_file_id id;
	struct pool_file *pf;
	struct handle fh;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("live", 'O', 1, &id, &fh);
	CU_ASSERT_FATAL(pool_file_get(pool, &id, "f", 0, &pf) == 0);
	CU_ASSERT_EQUAL(defer(pf, 0, 'N', (uint32_t)getppid()), 1);
	CU_ASSERT_EQUAL(pool_recover_all(pool, NULL, NULL), 0);
	CU_ASSERT_EQUAL(pool_dirty_count(pf), 1);
	CU_ASSERT(bucket_is("live", 0, 'O'));
	pool_file_put(pf);
	pool_close(pool);
}

/* Two recoverers at once: every buffer written back exactly once, the file right. */
static void test_two_recoverers(void)
{
	const char *name = ct_name("rc-race");
	struct pool *pool = ct_open(name, BS, NBUFS);
	struct pool_file_id id;
	struct handle fh;
	pid_t kid[2];
	int status;

	CU_ASSERT_FATAL(pool != NULL);
	make_file("race", 'O', 32, &id, &fh);
	defer_and_die(pool, &id, 32, 'N');
	for (int k = 0; k < 2; k++) {
		kid[k] = fork();
		CU_ASSERT_FATAL(kid[k] >= 0);
		if (kid[k] == 0)
			_exit(pool_recover_all(pool, NULL, NULL) < 0);
	}
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_FATAL(waitpid(kid[k], &status, 0) == kid[k]);
		CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (unsigned int b = 0; b < 32; b++)
		CU_ASSERT(bucket_is("race", b, 'N'));
	CU_ASSERT_EQUAL(counter(pool, POOL_C_DIRTY_RECOVERED), 32);
	CU_ASSERT_EQUAL(counter(pool, POOL_C_DIRTY_LOST), 0);
	pool_close(pool);
}

static void test_deleted(void)
{
	dropped_when("rc-gone", deleted, "the file is gone");
}

int main(void)
{
	char rm[128];
	CU_pSuite s;
	int ret;

	if (geteuid() != 0) {
		printf("SKIP: open_by_handle_at needs CAP_DAC_READ_SEARCH (run as root)\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/accelfs-t-recover-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("SKIP: mkdtemp: %s\n", strerror(errno));
		return 77;
	}
	s = ct_suite("recover");
	if (!s)
		return 1;
	CU_add_test(s, "a dead owner's buffers written back", test_written_back);
	CU_add_test(s, "a failed write-back kept for the next pass", test_write_fails_kept);
	CU_add_test(s, "a dead owner's appends go at SOURCE's end", test_appends_at_end);
	CU_add_test(s, "an append run cut short: the rest once", test_appends_cut);
	CU_add_test(s, "handle length beyond the field: dropped", test_long_handle);
	CU_add_test(s, "bogus handle type: dropped", test_bogus_type);
	CU_add_test(s, "the handle of another file: dropped, it untouched", test_other_file);
	CU_add_test(s, "a pool others can write: dropped", test_shared_pool);
	CU_add_test(s, "the file deleted: dropped", test_deleted);
	CU_add_test(s, "slot indexes out of range", test_out_of_range);
	CU_add_test(s, "a live owner's buffers left alone", test_live_owner);
	CU_add_test(s, "two recoverers race", test_two_recoverers);
	ret = ct_run();
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	if (system(rm) != 0)
		ret = ret ? ret : 1;
	return ret;
}
