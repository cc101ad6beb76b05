// SPDX-License-Identifier: MIT
/* caps.c - the daemon's capabilities (caps.h). */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

int caps_set(const struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int caps_drop_sysres(void)
{
	struct __user_cap_data_struct d[2];
	unsigned int i = CAP_TO_INDEX(CAP_SYS_RESOURCE);
	int ret = caps_get(d);

	if (ret || !(d[i].effective & CAP_TO_MASK(CAP_SYS_RESOURCE)))
		return ret;
	d[i].effective &= ~CAP_TO_MASK(CAP_SYS_RESOURCE);
	return caps_set(d);
}
