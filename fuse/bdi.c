// SPDX-License-Identifier: MIT
/*
 * bdi.c - tune the mount's backing-device info, which the FUSE protocol
 * cannot: the kernel gives a FUSE mount 128 KiB of read-ahead (INIT can
 * only lower it) and, with strictlimit, 1 % of the dirty limit, which
 * throttles a large write after a few tens of MiB. A root daemon raises both
 * for its own mount through /sys/class/bdi/MAJ:MIN (what `accel sysgen
 * --apply` would do by hand); others keep the kernel's values.
 *
 * The device number comes from /proc/self/mountinfo (cache/mountinfo.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "mountinfo.h"

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

void bdi_tune(struct accelfs *fs)
{
	const struct accelfs_opts *o = &fs->opts;
	struct mountinfo_entry *m;
	const char *devno;
	int ra = 0, ratio = 0;

	if (geteuid() != 0 || (!o->readahead_kb && !o->bdi_max_ratio))
		return;
	m = malloc(sizeof(*m));
	if (!m || mountinfo_find(NULL, fs->mountpoint_real, m)) {
		log_msg(LOG_DEBUG, "%s: not in mountinfo; bdi left as is", fs->mountpoint_real);
		free(m);
		return;
	}
	devno = m->devno;
	if (o->readahead_kb)
		ra = write_knob(devno, "read_ahead_kb", o->readahead_kb);
	if (o->bdi_max_ratio)
		ratio = write_knob(devno, "max_ratio", o->bdi_max_ratio);
	if (ra || ratio)
		log_msg(LOG_INFO, "bdi %s: read_ahead_kb %s, max_ratio %s", devno,
			ra ? strerror(-ra) : "set", ratio ? strerror(-ratio) : "set");
	free(m);
}
