// SPDX-License-Identifier: MIT
/*
 * bdi.c - tune the mount's backing-device info, which the FUSE protocol
 * cannot: the kernel gives a FUSE mount 128 KiB of read-ahead (INIT can
 * only lower it) and, with strictlimit, 1 % of the dirty limit, which
 * throttles a large write after a few tens of MiB. A root daemon raises both
 * for its own mount through /sys/class/bdi/MAJ:MIN (what `accel sysgen
 * --apply` would do by hand); others keep the kernel's values.
 *
 * The device number comes from /proc/self/mountinfo, not stat(): stat()ing
 * the new mount would ask this daemon for the root's attributes before its
 * session loop runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* "MAJ:MIN" of the newest mount at @mnt; 0 or -errno. */
static int mount_devno(const char *mnt, char *devno, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, dev[32], point[4096];
	size_t cap = 0;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%*u %*u %31s %*s %4095s", dev, point) != 2)
			continue;
		unescape(point);
		if (!strcmp(point, mnt)) {
			snprintf(devno, len, "%s", dev);
			ret = 0; /* keep going: a later line is a mount on top */
		}
	}
	free(line);
	fclose(f);
	return ret;
}

static int write_knob(const char *devno, const char *knob, unsigned int value)
{
	char path[128], buf[16];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), "/sys/class/bdi/%s/%s", devno, knob);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%u\n", value);
	if (write(fd, buf, (size_t)n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

void bdi_tune(void)
{
	const struct accelfs_opts *o = &accelfs.opts;
	char devno[32];
	int ra = 0, ratio = 0;

	if (geteuid() != 0 || (!o->readahead_kb && !o->bdi_max_ratio))
		return;
	if (mount_devno(accelfs.mountpoint_real, devno, sizeof(devno))) {
		log_msg(LOG_DEBUG, "%s: not in mountinfo; bdi left as is", accelfs.mountpoint_real);
		return;
	}
	if (o->readahead_kb)
		ra = write_knob(devno, "read_ahead_kb", o->readahead_kb);
	if (o->bdi_max_ratio)
		ratio = write_knob(devno, "max_ratio", o->bdi_max_ratio);
	if (ra || ratio)
		log_msg(LOG_INFO, "bdi %s: read_ahead_kb %s, max_ratio %s", devno,
			ra ? strerror(-ra) : "set", ratio ? strerror(-ratio) : "set");
}
