// SPDX-License-Identifier: MIT
/*
 * fslimit.c - the longest contiguous run a file system can give a file
 * (see fslimit.h): ext2/3/4's block group from the superblock, read through
 * the device that /sys/dev/block names for the file's st_dev, or estimated.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fslimit.h"
#include "util.h"

#define SB_OFFSET 1024	     /* the primary superblock, on every block size */
#define SB_LOG_BLOCK_SIZE 24 /* le32: block size = 1024 << this */
#define SB_BLOCKS_PER_GROUP 32
#define SB_MAGIC 56 /* le16 EXT4_SUPER_MAGIC */

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The block device of @dev, by the name the kernel gives it in /sys. -errno. */
static int open_device(dev_t dev)
{
	char path[112], line[128], name[96] = ""; /* path holds "/dev/" + name */
	struct stat st;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "DEVNAME=%95[^\n]", name) == 1)
			break;
	fclose(f);
	if (!name[0] || strstr(name, ".."))
		return -ENOENT;
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev) {
		close(fd);
		return -ENODEV; /* not the device the file system is on */
	}
	return fd;
}

/* Bytes per block group from @dev's superblock, if it is ext* of block size @bs; else 0. */
static uint64_t sb_group(dev_t dev, uint64_t bs)
{
	unsigned char sb[1024];
	int fd = open_device(dev);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, sb, sizeof(sb), SB_OFFSET);
	close(fd);
	if (n != (ssize_t)sizeof(sb) ||
	    (sb[SB_MAGIC] | sb[SB_MAGIC + 1] << 8) != EXT4_SUPER_MAGIC ||
	    le32(sb + SB_LOG_BLOCK_SIZE) > 6 || (1024ULL << le32(sb + SB_LOG_BLOCK_SIZE)) != bs)
		return 0;
	return (uint64_t)le32(sb + SB_BLOCKS_PER_GROUP) * bs;
}

static void describe(int fd, struct fslimit *l, dev_t dev)
{
	struct statfs sf;
	uint64_t bs;

	memset(l, 0, sizeof(*l));
	l->dev = dev;
	l->valid = true;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != EXT4_SUPER_MAGIC || sf.f_bsize < 1024)
		return;
	bs = (uint64_t)sf.f_bsize;
	snprintf(l->fs, sizeof(l->fs), "ext4");
	l->group = sb_group(dev, bs);
	l->from_sb = l->group != 0;
	if (!l->group)
		l->group = 8 * bs * bs; /* mkfs.ext4: one bitmap block's bits per group */
	l->indirect = bs / 4 * bs;
}

uint64_t fslimit_unit(int fd, struct fslimit *l, char *why, size_t len)
{
	char b[32];
	struct stat st;
	int flags = 0;

	why[0] = '\0';
	if (fstat(fd, &st) < 0)
		return 0;
	if (!l->valid || l->dev != st.st_dev)
		describe(fd, l, st.st_dev);
	if (!l->group)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_EXTENT_FL)) {
		snprintf(why, len, "block-mapped: an indirect block every %s",
			 util_bytes(l->indirect, b, sizeof(b)));
		return l->indirect;
	}
	snprintf(why, len, "%s block groups of %s%s", l->fs, util_bytes(l->group, b, sizeof(b)),
		 l->from_sb ? "" : " (estimated)");
	return l->group;
}
