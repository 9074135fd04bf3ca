/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a DPDK process of this project: EAL cleaned up, nothing left on disk (its
 * runtime directory and its hugepage files). */
/* rte_intr_instance_alloc() and its setters are experimental in DPDK 22.11 (and the
 * only way to make an interrupt handle since 21.11) */
#define ALLOW_EXPERIMENTAL_API
#include <execinfo.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_interrupts.h>

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

static int intr_parked;
/* registered for good (the process is ending), and kept where a leak check sees it */
static struct rte_intr_handle *volatile park_handle;

/* Runs on EAL's interrupt thread, and keeps it until the exit. */
static void
park_intr_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&intr_parked, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

/*
 * EAL's interrupt thread runs the drivers' event handlers, and on Linux DPDK 22.11 never
 * stops it: rte_eal_cleanup() unmaps EAL's memory under it, and a driver's close takes no
 * lock against it. memif handles its peer's hang-up there (memif_disconnect() frees the
 * shared regions and uses the device; a control channel whose handler was running when
 * the port stopped is freed there afterwards), and leaves its listening socket's handler
 * registered after the close, its handle in EAL's memory. Two processes of a memif pair
 * that exit together crashed there, about once in fifty test runs, after their summary.
 * Parked in a handler of its own, the thread runs no other again: the closes and the
 * cleanup that follow are alone. The handler is an eventfd's, not an alarm's:
 * rte_eal_cleanup() waits for a running alarm callback to return.
 */
void
sdr_eal_park_interrupts(void)
{
	static int asked;
	struct rte_intr_handle *h;
	uint64_t one = 1;
	int fd;

	if (asked++)
		return;
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	park_handle = h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (fd < 0 || h == NULL || rte_intr_fd_set(h, fd) != 0 ||
	    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(h, park_intr_thread, NULL) != 0 ||
	    write(fd, &one, sizeof(one)) != sizeof(one)) {
		fprintf(stderr, "cannot park EAL's interrupt thread: closing the ports beside "
			"it\n");
		return;
	}
	for (int ms = 0; ms < 10000 && !__atomic_load_n(&intr_parked, __ATOMIC_ACQUIRE); ms++)
		usleep(1000);
	if (!__atomic_load_n(&intr_parked, __ATOMIC_ACQUIRE))
		fprintf(stderr, "EAL's interrupt thread stayed busy for 10 s: closing the ports "
			"beside it\n");
}

/*
 * EAL keeps the files of its hugepages (<mount>/<prefix>map_*) after rte_eal_cleanup(), for
 * secondary processes; with a new file prefix each run they pin their pages until somebody
 * removes them. A secondary still attached (dpdk-dumpcap) keeps its mappings: a file's
 * pages go when its last mapping does.
 */
static void
remove_hugepage_files(const char *prefix)
{
	char line[PATH_MAX + 256], mnt[PATH_MAX], type[64], pat[PATH_MAX + 128];
	FILE *m = fopen("/proc/mounts", "r");

	if (m == NULL)
		return;
	while (fgets(line, sizeof(line), m) != NULL) {
		glob_t g;

		if (sscanf(line, "%*s %4095s %63s", mnt, type) != 2 ||
		    strcmp(type, "hugetlbfs") != 0)
			continue;
		snprintf(pat, sizeof(pat), "%s/%smap_*", mnt, prefix);
		if (glob(pat, GLOB_NOSORT, NULL, &g) == 0)
			for (size_t i = 0; i < g.gl_pathc; i++)
				unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	fclose(m);
}

void
sdr_eal_exit(void)
{
	char dir[PATH_MAX];
	const char *prefix;
	int huge = rte_eal_has_hugepages();

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	sdr_eal_park_interrupts();
	eal_cleanup_bounded();
	if (dir[0] == '\0' || strstr(dir, "dpdk") == NULL)
		return;		/* not a directory EAL made */
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	/* the runtime directory is named after the file prefix */
	prefix = strrchr(dir, '/');
	if (huge && prefix != NULL && prefix[1] != '\0')
		remove_hugepage_files(prefix + 1);
}

static void
on_crash(int sig)
{
	static const char head[] = "\n*** fatal signal; the stack (addr2line -e BINARY "
				   "-f OFFSET names each frame):\n";
	void *frames[64];
	int n = backtrace(frames, 64);
	ssize_t w;

	w = write(STDERR_FILENO, head, sizeof(head) - 1);
	(void)w;
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	signal(sig, SIG_DFL);
	raise(sig);
}

void
sdr_crash_report_init(void)
{
	void *frame;
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

#ifdef __SANITIZE_ADDRESS__
	(void)frame;
	(void)sigs;
	return;		/* the sanitizer's own report says more */
#endif
	backtrace(&frame, 1);	/* loads libgcc now: backtrace() may allocate the first time */
	for (unsigned int i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_crash);
}
