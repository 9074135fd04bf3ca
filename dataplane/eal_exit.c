/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a DPDK process of this project: EAL cleaned up, nothing left on disk. */
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void *
cleanup_thread(void *arg)
{
	(void)arg;
	rte_eal_cleanup();
	return NULL;
}

/*
 * rte_eal_cleanup() takes the shared memory configuration's lock. A secondary process
 * (dpdk-dumpcap) that died holding it, e.g. after failing to map the primary's memory,
 * would keep this process from ever exiting: the cleanup gets 10 s on its own thread.
 */
static void
eal_cleanup_bounded(void)
{
	struct timespec deadline;
	pthread_t t;

	if (pthread_create(&t, NULL, cleanup_thread, NULL) != 0) {
		rte_eal_cleanup();
		return;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	if (pthread_timedjoin_np(t, NULL, &deadline) != 0)
		fprintf(stderr, "EAL cleanup blocked for 10 s (a secondary process such as "
			"dpdk-dumpcap died holding EAL's lock?): exiting without it\n");
}

void
sdr_eal_exit(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	eal_cleanup_bounded();
	if (dir[0] == '\0' || strstr(dir, "dpdk") == NULL)
		return;		/* not a directory EAL made */
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
