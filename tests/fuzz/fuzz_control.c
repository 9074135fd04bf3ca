/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the dataplane's command decoder — dp_control_exec(), what runs every
 * command line an sdrctl client sends (tokenizer, dispatcher, every command:
 * conn add/set/del/show, port, link, path, pipeline, client, stats, help) — on a real dataplane:
 * EAL (no hugepages, no PCI), the two net_ring ports and two connections of
 * pmd-configs/loopback.ini, its link emulators and its control service (no engine lcore runs:
 * the changes it would make as jobs are made on the fuzzer's thread).
 *
 * Input: command lines separated by newlines; a line starting with '{' asks for JSON.
 * After each input the connections and link emulators go back to what the file says,
 * so every input starts from the same dataplane.
 *
 * Checks: every reply is a string inside the reply buffer; the code is ok, failed or bad
 * input; a refusal is one line; the connections the dataplane runs are always the valid
 * ones its configuration lists.
 */
#include <stdint.h>
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
#include "sdr_shm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_control: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

struct dp_ctx dp;		/* the dataplane's state, as sdr-dataplane's main.c has it */

static struct dp_cfg pristine;
static struct link_emu_config links[DP_MAX_PORTS];
static char reply[SDR_RPC_REPLY_MAX];

static void
teardown(void)
{
	dp_control_fini(&dp);
	dp_conns_free(&dp);
	sdr_eal_park_interrupts();
	dp_ports_close(&dp);
	sdr_eal_exit();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char prefix[64], name[64], err[512];
	char *eal[] = { "fuzz_control", "--no-huge", "--no-shconf", "-m", "256", "--no-pci", "--no-telemetry",
			"--log-level", "*:emerg", "--file-prefix", prefix };

	(void)argc;
	(void)argv;
	snprintf(prefix, sizeof(prefix), "fuzzctl-%d", (int)getpid());
	snprintf(name, sizeof(name), "fuzzctl-%d", (int)getpid());
	CHECK(dp_config_load(SDR_SOURCE_ROOT "/pmd-configs/loopback.ini", &dp.cfg, err,
			     sizeof(err)) == 0);
	snprintf(dp.cfg.name, sizeof(dp.cfg.name), "%s", name);
	dp.cfg.arena_bytes = 16 << 20;
	dp.cfg.mbufs = 4096;
	CHECK(rte_eal_init(sizeof(eal) / sizeof(eal[0]), eal) >= 0);
	rte_log_set_global_level(RTE_LOG_EMERG);
	dp.tsc_hz = rte_get_tsc_hz();
	dp.start_tsc = rte_get_tsc_cycles();
	if (dp_ports_init(&dp, err, sizeof(err)) != 0 || dp_conns_init(&dp, err, sizeof(err)) != 0 ||
	    dp_control_init(&dp, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_control: %s\n", err);
		abort();
	}
	pristine = dp.cfg;
	for (unsigned int i = 0; i < dp.nports; i++)
		if (dp.ports[i].link)
			links[i] = *link_emu_get_config(dp.ports[i].link);
	atexit(teardown);
	return 0;
}

/* Back to the file's connections and link settings. */
static void
reset(void)
{
	char err[512];

	dp_conns_free(&dp);
	memset(dp.conns, 0, sizeof(dp.conns));
	dp.nconns = 0;
	dp.cfg = pristine;
	CHECK(dp_conns_init(&dp, err, sizeof(err)) == 0);
	for (unsigned int i = 0; i < dp.nports; i++)
		if (dp.ports[i].link)
			CHECK(link_emu_set_config(dp.ports[i].link, &links[i]) == 0);
}

static void
check_conns(void)
{
	CHECK(dp.nconns <= DP_MAX_CONNS && dp.cfg.nconns <= DP_MAX_CONNS);
	for (unsigned int i = 0; i < dp.nconns; i++) {
		const struct dp_conn *c = &dp.conns[i];
		struct sdr_conn_geom g;

		if (c->ep == NULL)
			continue;
		CHECK(c->cfg == &dp.cfg.conns[i] && c->port < dp.nports);
		CHECK(sdr_conn_geometry(&c->cfg->ep.attr, &g) == 0 && c->cfg->ep.rel.rtt_ns > 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[SDR_RPC_TEXT_MAX];
	size_t at = 0;

	if (size > 64 * 1024)
		return 0;
	while (at < size) {
		size_t n = 0;
		int json, rc;

		while (at < size && data[at] != '\n') {
			if (n < sizeof(line) - 1)
				line[n++] = (char)data[at];
			at++;
		}
		at++;
		line[n] = '\0';
		json = line[0] == '{';
		memset(reply, 0x5A, 64);
		rc = dp_control_exec(&dp, json ? line + 1 : line, json, reply, sizeof(reply));
		CHECK(memchr(reply, '\0', sizeof(reply)) != NULL);
		CHECK(rc == SDR_CTL_OK || rc == SDR_CTL_FAILED || rc == SDR_CTL_BAD_INPUT);
		if (rc == SDR_CTL_BAD_INPUT)
			CHECK(reply[0] != '\0' && strchr(reply, '\n') == NULL);
		check_conns();
	}
	reset();
	return 0;
}
