/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a DPDK process of this project: EAL cleaned up, nothing left on disk. */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>

#include "eal_exit.h"

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void
sdr_eal_exit(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (dir[0] == '\0' || strstr(dir, "dpdk") == NULL)
		return;		/* not a directory EAL made */
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
