/* smallwrite: write COUNT fixed-size records to a new file, one write(2) per
 * record, then fsync(2) and close(2).  Used by scripts/bench-basic for the
 * "100,000 writes of 120 bytes" row (the record size of the WEBTEMP2 table in
 * "Database Performance by the Numbers": 10+80+10+10+4+4+2 = 120 bytes), and
 * with -n and 1 MiB records for the buffered sequential-write row, where the
 * close(2) must be inside the time: on a FUSE mount with the writeback cache
 * close() waits until every dirty page has been sent to the daemon, and fio
 * leaves the close out of its bandwidth.
 *
 * The time printed covers open(O_CREAT|O_TRUNC) .. last write .. fsync ..
 * close, measured with CLOCK_MONOTONIC inside the process, so process start-up
 * is not included.  Output (one line, key=value):
 *   seconds=0.123456 records=100000 recsize=120 rps=812345 fsync=1
 *
 * usage: smallwrite [-n] PATH [COUNT [RECSIZE]]    (-n: skip the fsync)
 * Build: cc -O2 -o smallwrite smallwrite.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One deterministic record shaped like WEBTEMP2: REQTYPE(10) REQFILE(80)
 * BROWSER(10) REQTS(10) REQSIZE(4) REQUSER(4) GEOID(2). */
static void fill(unsigned char *rec, size_t len, unsigned long i)
{
    char tmp[128];
    memset(tmp, ' ', sizeof tmp);
    int n = snprintf(tmp, sizeof tmp, "%-10s/docs/page%07lu.html", i % 3 ? "GET" : "POST", i);
    if (n > 0 && n < (int)sizeof tmp) tmp[n] = ' ';
    memcpy(tmp + 90, i % 2 ? "Mozilla/4 " : "MSIE 5.0  ", 10);
    snprintf(tmp + 100, 11, "%010lu", 946684800UL + i * 37);
    unsigned int sz = (unsigned int)(i * 2654435761UL), user = (unsigned int)(i % 977);
    unsigned short geo = (unsigned short)(i % 50);
    memcpy(tmp + 110, &sz, 4);
    memcpy(tmp + 114, &user, 4);
    memcpy(tmp + 118, &geo, 2);
    for (size_t k = 0; k < len; k++) rec[k] = (unsigned char)tmp[k % 120];
}

int main(int argc, char **argv)
{
    int do_fsync = 1, a = 1;
    if (a < argc && strcmp(argv[a], "-n") == 0) { do_fsync = 0; a++; }
    if (a >= argc) {
        fprintf(stderr, "usage: smallwrite [-n] PATH [COUNT [RECSIZE]]\n");
        return 2;
    }
    const char *path = argv[a++];
    long count = a < argc ? strtol(argv[a++], NULL, 10) : 100000;
    long recsize = a < argc ? strtol(argv[a++], NULL, 10) : 120;
    if (count <= 0 || recsize <= 0 || recsize > (64L << 20)) {
        fprintf(stderr, "smallwrite: bad COUNT or RECSIZE\n");
        return 2;
    }
    /* Prepare the records before the clock starts: the benchmark is about the
     * file system, not about snprintf. */
    size_t NPRE = recsize <= 4096 ? 1024 : 1;
    unsigned char *recs = malloc(NPRE * (size_t)recsize);
    if (!recs) { perror("malloc"); return 1; }
    for (size_t i = 0; i < NPRE; i++) fill(recs + i * (size_t)recsize, (size_t)recsize, i);

    double t0 = now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) { fprintf(stderr, "smallwrite: open %s: %s\n", path, strerror(errno)); return 1; }
    for (long i = 0; i < count; i++) {
        const unsigned char *r = recs + (size_t)(i % NPRE) * (size_t)recsize;
        ssize_t w = write(fd, r, (size_t)recsize);
        if (w != recsize) {
            fprintf(stderr, "smallwrite: write #%ld: %s\n", i, w < 0 ? strerror(errno) : "short write");
            return 1;
        }
    }
    if (do_fsync && fsync(fd) != 0) { fprintf(stderr, "smallwrite: fsync: %s\n", strerror(errno)); return 1; }
    if (close(fd) != 0) { fprintf(stderr, "smallwrite: close: %s\n", strerror(errno)); return 1; }
    double dt = now() - t0;
    printf("seconds=%.6f records=%ld recsize=%ld rps=%.0f fsync=%d\n", dt, count, recsize,
           (double)count / dt, do_fsync);
    free(recs);
    return 0;
}
