/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A real dataplane for the fuzz targets that drive one (fuzz_control, fuzz_sdk): EAL (no
 * hugepages, no PCI, no shared config), the two net_ring ports and two connections of
 * pmd-configs/loopback.ini, its link emulators and its control service, in the fuzzer's
 * process. No engine lcore runs: what it would do as jobs is done on the fuzzer's thread.
 * Included by one file of each target (the dataplane's state is the global dp, as in
 * sdr-dataplane's main.c).
 */
#ifndef SDR_FUZZ_DP_H
#define SDR_FUZZ_DP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_log.h>

#include "conns.h"
#include "control.h"
#include "dp.h"
#include "eal_exit.h"
#include "ports.h"

#define FUZZ_CHECK(who, cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: check failed: %s (line %d)\n", who, #cond, __LINE__); \
		abort(); \
	} \
} while (0)

struct dp_ctx dp;		/* the dataplane's state, as sdr-dataplane's main.c has it */

static struct dp_cfg fuzz_dp_pristine;
static struct link_emu_config fuzz_dp_links[DP_MAX_PORTS];

static void
fuzz_dp_teardown(void)
{
	dp_control_fini(&dp);
	dp_conns_free(&dp);
	sdr_eal_park_interrupts();
	dp_ports_close(&dp);
	sdr_eal_exit();
}

/*
 * Bring the dataplane up as instance @p who-PID, its SDK clients' arenas @p arena bytes
 * in all; with @p link_off its links transparent (frames go straight to the ring ports);
 * with @p zero_copy its ports send data frames zero-copy.
 */
static void
fuzz_dp_init(const char *who, uint64_t arena, int link_off, int zero_copy)
{
	char prefix[64], err[512];
	char *eal[] = { (char *)(uintptr_t)who, "--no-huge", "--no-shconf", "-m", "256",
			"--no-pci", "--no-telemetry", "--log-level", "*:emerg", "--file-prefix",
			prefix };

	snprintf(prefix, sizeof(prefix), "%s-%d", who, (int)getpid());
	FUZZ_CHECK(who, dp_config_load(SDR_SOURCE_ROOT "/pmd-configs/loopback.ini", &dp.cfg, err,
				       sizeof(err)) == 0);
	snprintf(dp.cfg.name, sizeof(dp.cfg.name), "%s", prefix);
	dp.cfg.arena_bytes = arena;
	dp.cfg.mbufs = 4096;
	dp.cfg.idle_sleep_us = 0;
	for (unsigned int i = 0; zero_copy && i < dp.cfg.nports; i++)
		dp.cfg.ports[i].zero_copy = DP_ZC_YES;
	FUZZ_CHECK(who, rte_eal_init(sizeof(eal) / sizeof(eal[0]), eal) >= 0);
	rte_log_set_global_level(RTE_LOG_EMERG);
	dp.tsc_hz = rte_get_tsc_hz();
	dp.start_tsc = rte_get_tsc_cycles();
	if (dp_ports_init(&dp, err, sizeof(err)) != 0 || dp_conns_init(&dp, err, sizeof(err)) != 0 ||
	    dp_control_init(&dp, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		abort();
	}
	fuzz_dp_pristine = dp.cfg;
	for (unsigned int i = 0; i < dp.nports; i++) {
		const char *off[] = { "off" };
		int bad;

		if (dp.ports[i].link == NULL)
			continue;
		fuzz_dp_links[i] = *link_emu_get_config(dp.ports[i].link);
		if (link_off) {
			FUZZ_CHECK(who, link_emu_parse(&fuzz_dp_links[i], 1, off, &bad) == 0);
			FUZZ_CHECK(who, link_emu_set_config(dp.ports[i].link,
							    &fuzz_dp_links[i]) == 0);
		}
	}
	atexit(fuzz_dp_teardown);
}

/* Back to the file's connections and the links as fuzz_dp_init() left them. */
static void
fuzz_dp_reset(const char *who)
{
	char err[512];

	dp_conns_free(&dp);
	memset(dp.conns, 0, sizeof(dp.conns));
	dp.nconns = 0;
	dp.cfg = fuzz_dp_pristine;
	FUZZ_CHECK(who, dp_conns_init(&dp, err, sizeof(err)) == 0);
	for (unsigned int i = 0; i < dp.nports; i++)
		if (dp.ports[i].link)
			FUZZ_CHECK(who, link_emu_set_config(dp.ports[i].link,
							    &fuzz_dp_links[i]) == 0);
}

#endif
