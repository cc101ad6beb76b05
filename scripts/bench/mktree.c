/* mktree: create a deterministic source-like tree for the metadata rows of
 * scripts/bench-basic.  Same arguments => byte-identical tree (names, sizes,
 * contents, modes, mtimes).
 *
 * Layout: TOP top-level dirs, each with SUB subdirs; NFILES regular files
 * spread round-robin over the TOP*SUB leaf dirs; one relative symlink per
 * leaf dir.  Sizes 0..64 KiB, skewed small like a source tree: 3/4 of files
 * are 0..8 KiB, 1/4 are 0..64 KiB, every 50th file is empty.
 *
 * usage: mktree DIR [NFILES [TOP [SUB]]]        (defaults 10000 10 10)
 * Prints: files=N dirs=N symlinks=N bytes=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint64_t next(void)   /* xorshift64*: deterministic across libcs */
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "mktree: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void settime(const char *path)
{
    struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
    if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) != 0) die("utimensat", path);
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: mktree DIR [NFILES [TOP [SUB]]]\n"); return 2; }
    const char *root = argv[1];
    long nfiles = argc > 2 ? atol(argv[2]) : 10000;
    int top = argc > 3 ? atoi(argv[3]) : 10, sub = argc > 4 ? atoi(argv[4]) : 10;
    if (nfiles < 0 || top < 1 || sub < 1) { fprintf(stderr, "mktree: bad arguments\n"); return 2; }
    static char buf[65536 + 64], path[4096], target[4096];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)(' ' + (next() % 95));
    for (size_t i = 63; i < sizeof buf; i += 64) buf[i] = '\n';

    if (mkdir(root, 0755) != 0 && errno != EEXIST) die("mkdir", root);
    long dirs = 0, links = 0, bytes = 0;
    for (int t = 0; t < top; t++) {
        snprintf(path, sizeof path, "%s/d%02d", root, t);
        if (mkdir(path, 0755) != 0) die("mkdir", path);
        dirs++;
        for (int s = 0; s < sub; s++) {
            snprintf(path, sizeof path, "%s/d%02d/s%02d", root, t, s);
            if (mkdir(path, 0755) != 0) die("mkdir", path);
            dirs++;
        }
    }
    long nleaf = (long)top * sub;
    for (long f = 0; f < nfiles; f++) {
        long leaf = f % nleaf;
        uint64_t r = next();
        long size = (f % 50 == 0) ? 0 : (r & 3) == 0 ? (long)((r >> 8) % 65537) : (long)((r >> 8) % 8193);
        static const char *ext[] = { "c", "h", "txt", "md", "json", "o" };
        snprintf(path, sizeof path, "%s/d%02ld/s%02ld/f%05ld.%s", root, leaf / sub, leaf % sub, f,
                 ext[(r >> 40) % 6]);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, (r >> 50) % 8 == 0 ? 0755 : 0644);
        if (fd < 0) die("open", path);
        long off = (long)((r >> 20) % 64);
        if (size > 0 && write(fd, buf + off, (size_t)size) != size) die("write", path);
        if (close(fd) != 0) die("close", path);
        settime(path);
        bytes += size;
    }
    for (long leaf = 0; leaf < nleaf; leaf++) {
        snprintf(path, sizeof path, "%s/d%02ld/s%02ld/link", root, leaf / sub, leaf % sub);
        snprintf(target, sizeof target, "../s%02ld", (leaf + 1) % sub);
        if (symlink(target, path) != 0) die("symlink", path);
        settime(path);
        links++;
    }
    for (int t = 0; t < top; t++) {
        for (int s = 0; s < sub; s++) {
            snprintf(path, sizeof path, "%s/d%02d/s%02d", root, t, s);
            settime(path);
        }
        snprintf(path, sizeof path, "%s/d%02d", root, t);
        settime(path);
    }
    printf("files=%ld dirs=%ld symlinks=%ld bytes=%ld\n", nfiles, dirs, links, bytes);
    return 0;
}
