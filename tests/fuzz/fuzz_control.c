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
#include <string.h>

#include "fuzz_dp.h"
#include "sdr_shm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz_control", cond)

static char reply[SDR_RPC_REPLY_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_dp_init("fuzzctl", 16 << 20, 0, 0);
	return 0;
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
	fuzz_dp_reset("fuzz_control");
	return 0;
}
