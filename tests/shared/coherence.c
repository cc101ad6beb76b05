// SPDX-License-Identifier: MIT
/*
 * coherence.c - what host B sees of host A's changes to a shared directory,
 * for the shared-storage harness (tests/shared). A_DIR and B_DIR are one
 * directory as the two hosts mount it (bare gluster, or accelfs over it);
 * this process acts for both, so every interval is measured on one clock.
 *
 *   coherence visible A_DIR B_DIR CAP_MS
 *       Twelve changes made on A at once (create, a new name in a listing,
 *       delete, rename, size, mtime, data read at the next open, growth seen
 *       through a descriptor B holds open, and writes A has neither closed
 *       nor synced), after B has looked at (so cached) each file's state;
 *       then B polls every 10 ms until it sees each change, for at most
 *       CAP_MS ms after it was made.
 *   coherence estale A_DIR B_DIR ROUNDS
 *       B holds a file open and A deletes it: B reads the old bytes at once
 *       and after 1.5 s. A replaces a file ROUNDS times by write-temp-then-
 *       rename while B opens and reads it in a loop: every open errno and
 *       every torn content counted.
 *
 * Output, one line per check, compared by lib.sh between bare and accelfs:
 *   ms NAME MS|never        milliseconds until B saw the change
 *   yes NAME 1|0 [DETAIL]   the property held (1) or not (0)
 *   rate NAME BAD TOTAL [DETAIL]   BAD of TOTAL attempts went wrong
 * Exit 0 unless the harness itself failed (a setup step on A, bad usage).
 */
#include "shutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BASE 100 /* bytes a file has before the change */
#define GROW 50	 /* bytes A appends */
#define MTIME1 1500000000
#define MTIME2 1000000000
#define PRIME_MS 15000 /* how long B may take to see the initial state */

/* what A does */
enum change { CREATE, MKENTRY, UNLINK, RENAME, APPEND, APPEND_OPEN, UTIME, OVERWRITE };
/* how B looks */
enum look { EXISTS, LISTED, GONE, RENAMED, SIZE, MTIME, REOPEN, FSTAT, PREAD };

/* one change and how B looks for it */
struct probe_spec {
	const char *name;
	const char *file; /* below A_DIR and B_DIR */
	enum change change;
	enum look look;
};

static const struct probe_spec specs[] = {
	{ "visible.create", "c", CREATE, EXISTS },
	{ "visible.listing", "ldir", MKENTRY, LISTED },
	{ "visible.delete", "d", UNLINK, GONE },
	{ "visible.rename", "r", RENAME, RENAMED },
	{ "visible.size", "s", APPEND, SIZE },
	{ "visible.mtime", "m", UTIME, MTIME },
	{ "visible.data", "x", OVERWRITE, REOPEN },
	{ "growth.fstat", "g1", APPEND, FSTAT },
	{ "growth.read", "g2", APPEND, PREAD },
	{ "growth.unsynced-fstat", "u1", APPEND_OPEN, FSTAT },
	{ "growth.unsynced-stat", "u2", APPEND_OPEN, SIZE },
	{ "growth.unsynced-read", "u3", APPEND_OPEN, PREAD },
};
#define NPROBES (sizeof(specs) / sizeof(specs[0]))

/* a probe while it runs */
struct probe {
	const struct probe_spec *spec;
	char a[PATH_MAX], b[PATH_MAX]; /* the file through A and through B */
	int afd, bfd;		       /* A's unclosed descriptor, B's held one */
	double changed;		       /* mono_ms() when A's change returned */
	long ms;		       /* until B saw it, -1: not yet */
};

static struct probe probes[NPROBES];

/* 0 if @path exists, else -errno */
static int stat_err(const char *path, struct stat *st)
{
	struct stat tmp;

	return stat(path, st ? st : &tmp) < 0 ? -errno : 0;
}

static char *sibling(char *buf, const char *path, const char *suffix)
{
	if (snprintf(buf, PATH_MAX, "%s%s", path, suffix) >= PATH_MAX)
		die("path too long: %s%s", path, suffix);
	return buf;
}

/* 1 if directory @dir lists @name */
static int listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d)))
		found = !strcmp(de->d_name, name);
	closedir(d);
	return found;
}

/* 1 if the file holds @len bytes: BASE of 'a', then 'n' */
static int bytes_ok(int fd, off_t len)
{
	char buf[BASE + GROW + 1];
	ssize_t n = pread_all(fd, buf, sizeof(buf), 0);

	if (n != len)
		return 0;
	for (off_t i = 0; i < len; i++) {
		if (buf[i] != (i < BASE ? 'a' : 'n'))
			return 0;
	}
	return 1;
}

static int first_byte(const char *path)
{
	int fd = open(path, O_RDONLY);
	char c = 0;

	if (fd < 0)
		return -1;
	if (pread(fd, &c, 1, 0) != 1)
		c = 0;
	close(fd);
	return c;
}

/* 1 if B sees the state after the change (@after) or before it */
static int look(struct probe *p, int after)
{
	char other[PATH_MAX];
	struct stat st;

	if ((p->spec->look == FSTAT || p->spec->look == PREAD) && p->bfd < 0)
		p->bfd = open(p->b, O_RDONLY);
	switch (p->spec->look) {
	case EXISTS:
		return after ? stat_err(p->b, NULL) == 0 : stat_err(p->b, NULL) == -ENOENT;
	case GONE:
		return after ? stat_err(p->b, NULL) == -ENOENT : stat_err(p->b, NULL) == 0;
	case LISTED:
		return after ? listed(p->b, "l1") : listed(p->b, "l0") && !listed(p->b, "l1");
	case RENAMED:
		sibling(other, p->b, ".new");
		return stat_err(after ? p->b : other, NULL) == -ENOENT &&
		       stat_err(after ? other : p->b, NULL) == 0;
	case SIZE:
		return !stat_err(p->b, &st) && st.st_size == (after ? BASE + GROW : BASE);
	case MTIME:
		return !stat_err(p->b, &st) && st.st_mtime == (after ? MTIME2 : MTIME1);
	case REOPEN:
		return first_byte(p->b) == (after ? 'Z' : 'a');
	case FSTAT:
		return p->bfd >= 0 && !fstat(p->bfd, &st) &&
		       st.st_size == (after ? BASE + GROW : BASE);
	case PREAD:
		return p->bfd >= 0 && bytes_ok(p->bfd, after ? BASE + GROW : BASE);
	}
	return 0;
}

static int set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	return utimensat(AT_FDCWD, path, ts, 0) < 0 ? -errno : 0;
}

/* A: the state B must see before the change */
static void setup(struct probe *p)
{
	char entry[PATH_MAX];
	int ret = 0;

	p->afd = p->bfd = -1;
	p->ms = -1;
	if (p->spec->change == MKENTRY) {
		if (mkdir(p->a, 0755) < 0)
			ret = -errno;
		else
			ret = file_fill(path_in(entry, p->a, "l0"), 1, 'a');
	} else if (p->spec->change != CREATE) {
		ret = file_fill(p->a, BASE, 'a');
		if (!ret && p->spec->change == UTIME)
			ret = set_mtime(p->a, MTIME1);
	}
	if (ret)
		die("setup of %s (%s): %s", p->spec->name, p->a, strerror(-ret));
}

static int append(struct probe *p, int keep_open)
{
	char buf[GROW];
	int fd = open(p->a, O_WRONLY | O_APPEND);

	if (fd < 0)
		return -errno;
	memset(buf, 'n', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != sizeof(buf)) {
		close(fd);
		return -EIO;
	}
	if (keep_open) {
		p->afd = fd;
		return 0;
	}
	return close(fd) < 0 ? -errno : 0;
}

static int overwrite(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	if (pwrite(fd, "Z", 1, 0) != 1) {
		close(fd);
		return -EIO;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* A: the change */
static void change(struct probe *p)
{
	char other[PATH_MAX];
	int ret = 0;

	switch (p->spec->change) {
	case CREATE:
		ret = file_fill(p->a, 0, 0);
		break;
	case MKENTRY:
		ret = file_fill(path_in(other, p->a, "l1"), 1, 'a');
		break;
	case UNLINK:
		ret = unlink(p->a) < 0 ? -errno : 0;
		break;
	case RENAME:
		ret = rename(p->a, sibling(other, p->a, ".new")) < 0 ? -errno : 0;
		break;
	case APPEND:
	case APPEND_OPEN:
		ret = append(p, p->spec->change == APPEND_OPEN);
		break;
	case UTIME:
		ret = set_mtime(p->a, MTIME2);
		break;
	case OVERWRITE:
		ret = overwrite(p->a);
		break;
	}
	if (ret)
		die("change of %s (%s): %s", p->spec->name, p->a, strerror(-ret));
	p->changed = mono_ms();
}

/* B: sees (and so caches) every initial state, or dies */
static void prime(void)
{
	double end = mono_ms() + PRIME_MS;
	size_t i, left;

	do {
		for (i = 0, left = 0; i < NPROBES; i++)
			left += !look(&probes[i], 0);
		if (!left)
			return;
		sleep_ms(10);
	} while (mono_ms() < end);
	for (i = 0; i < NPROBES; i++) {
		if (!look(&probes[i], 0))
			die("B never saw the initial state of %s (%s)", probes[i].spec->name,
			    probes[i].b);
	}
}

static int cmd_visible(const char *adir, const char *bdir, long cap)
{
	size_t i, left;
	double now;

	for (i = 0; i < NPROBES; i++) {
		probes[i].spec = &specs[i];
		path_in(probes[i].a, adir, probes[i].spec->file);
		path_in(probes[i].b, bdir, probes[i].spec->file);
		setup(&probes[i]);
	}
	prime();
	for (i = 0; i < NPROBES; i++)
		change(&probes[i]);
	do {
		sleep_ms(10);
		now = mono_ms();
		for (i = 0, left = 0; i < NPROBES; i++) {
			struct probe *p = &probes[i];

			if (p->ms < 0 && look(p, 1))
				p->ms = (long)(now - p->changed);
			left += p->ms < 0;
		}
	} while (left && now - probes[NPROBES - 1].changed < cap);
	for (i = 0; i < NPROBES; i++) {
		if (probes[i].ms < 0)
			printf("ms %s never\n", probes[i].spec->name);
		else
			printf("ms %s %ld\n", probes[i].spec->name, probes[i].ms);
		if (probes[i].afd >= 0)
			close(probes[i].afd);
		if (probes[i].bfd >= 0)
			close(probes[i].bfd);
	}
	return 0;
}

#define HELD_LEN 65536
#define VERSION_LEN 4096

/* "yes NAME 1" if @fd still reads the deleted file's HELD_LEN bytes of 'o' */
static void held_read(int fd, const char *name)
{
	static char buf[HELD_LEN + 1];
	ssize_t n = pread_all(fd, buf, sizeof(buf), 0);
	ssize_t i = 0;

	while (i < n && buf[i] == 'o')
		i++;
	if (n < 0)
		printf("yes %s 0 %s\n", name, err_name(n));
	else if (n != HELD_LEN || i != n)
		printf("yes %s 0 read %zd bytes, %zd right\n", name, n, i);
	else
		printf("yes %s 1\n", name);
	fflush(stdout);
}

/* B holds the file open, A deletes it; B reads at once and after 1.5 s */
static void estale_held(const char *adir, const char *bdir)
{
	char a[PATH_MAX], b[PATH_MAX];
	static char buf[HELD_LEN];
	double end = mono_ms() + PRIME_MS;
	struct stat st;
	int fd, ret;

	ret = file_fill(path_in(a, adir, "held"), HELD_LEN, 'o');
	if (ret)
		die("%s: %s", a, strerror(-ret));
	path_in(b, bdir, "held");
	while ((stat(b, &st) < 0 || st.st_size != HELD_LEN) && mono_ms() < end)
		sleep_ms(10);
	fd = open(b, O_RDONLY);
	if (fd < 0 || pread_all(fd, buf, HELD_LEN, 0) != HELD_LEN)
		die("B cannot read %s", b);
	if (unlink(a) < 0)
		die("unlink %s: %s", a, strerror(errno));
	held_read(fd, "estale.held-now");
	sleep_ms(1500);
	held_read(fd, "estale.held-later");
	close(fd);
}

/* version @v of the replaced file: a header line, then one letter */
static void version_fill(char *buf, long v)
{
	int n = snprintf(buf, VERSION_LEN, "version %06ld\n", v);

	memset(buf + n, 'a' + v % 26, VERSION_LEN - n);
}

/* A: a new file holding version @v; 0 or -errno */
static int version_write(const char *path, long v)
{
	char buf[VERSION_LEN];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	version_fill(buf, v);
	n = pwrite_all(fd, buf, VERSION_LEN, 0);
	if (close(fd) < 0 && n >= 0)
		n = -errno;
	return n < 0 ? (int)n : 0;
}

/* A: ROUNDS times write a temporary file, then rename it over "target" */
static _Noreturn void replacer(const char *adir, long rounds)
{
	char tmp[PATH_MAX], target[PATH_MAX], name[64];
	int ret;

	path_in(target, adir, "target");
	for (long v = 1; v <= rounds; v++) {
		snprintf(name, sizeof(name), "target.tmp%ld", v);
		ret = version_write(path_in(tmp, adir, name), v);
		if (ret)
			die("A: writing %s: %s", tmp, strerror(-ret));
		if (rename(tmp, target) < 0)
			die("A: rename %s: %s", tmp, strerror(errno));
		sleep_ms(5);
	}
	exit(0);
}

/* what B's opens of the replaced file met: errors by call and errno */
enum { AT_OPEN, AT_READ, AT_CLOSE, NCALLS };
static const char *const call_names[NCALLS] = { "open", "read", "close" };

struct tally {
	long total, torn, failed;
	long estale[NCALLS], enoent[NCALLS], other[NCALLS];
};

static void tally_err(struct tally *t, int call, int err)
{
	t->failed++;
	if (err == -ESTALE)
		t->estale[call]++;
	else if (err == -ENOENT)
		t->enoent[call]++;
	else
		t->other[call]++;
}

/* B: one open, read and close of the target, counted in @t */
static void read_version(const char *path, struct tally *t)
{
	char buf[VERSION_LEN + 1], want[VERSION_LEN];
	int fd = open(path, O_RDONLY);
	ssize_t n;
	long v;

	t->total++;
	if (fd < 0)
		return tally_err(t, AT_OPEN, -errno);
	n = pread_all(fd, buf, sizeof(buf), 0);
	if (close(fd) < 0 && n >= 0)
		return tally_err(t, AT_CLOSE, -errno);
	if (n < 0)
		return tally_err(t, AT_READ, n);
	if (n != VERSION_LEN || sscanf(buf, "version %ld", &v) != 1) {
		t->torn++;
		return;
	}
	version_fill(want, v);
	t->torn += memcmp(buf, want, VERSION_LEN) != 0;
}

static void tally_print(const struct tally *t)
{
	printf("rate estale.rename-open %ld %ld", t->failed, t->total);
	for (int c = 0; c < NCALLS; c++) {
		if (t->estale[c])
			printf(" %s:ESTALE=%ld", call_names[c], t->estale[c]);
		if (t->enoent[c])
			printf(" %s:ENOENT=%ld", call_names[c], t->enoent[c]);
		if (t->other[c])
			printf(" %s:other=%ld", call_names[c], t->other[c]);
	}
	printf("\nrate estale.rename-torn %ld %ld\n", t->torn, t->total);
}

static void estale_rename(const char *adir, const char *bdir, long rounds)
{
	char a[PATH_MAX], b[PATH_MAX];
	double end = mono_ms() + PRIME_MS;
	struct tally t = { 0 };
	pid_t pid;
	int ret, status;

	ret = version_write(path_in(a, adir, "target"), 0);
	if (ret)
		die("%s: %s", a, strerror(-ret));
	path_in(b, bdir, "target");
	while (stat_err(b, NULL) && mono_ms() < end)
		sleep_ms(10);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		replacer(adir, rounds);
	do {
		read_version(b, &t);
	} while (waitpid(pid, &status, WNOHANG) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("the replacing process on A failed");
	tally_print(&t);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "visible"))
		return cmd_visible(argv[2], argv[3], arg_long(argv[4], "CAP_MS"));
	if (argc == 5 && !strcmp(argv[1], "estale")) {
		estale_held(argv[2], argv[3]);
		estale_rename(argv[2], argv[3], arg_long(argv[4], "ROUNDS"));
		return 0;
	}
	fprintf(stderr, "usage: coherence visible A_DIR B_DIR CAP_MS\n"
			"       coherence estale A_DIR B_DIR ROUNDS\n");
	return 2;
}
