/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the dataplane's configuration loader, dp_config_load(), on arbitrary
 * file contents (DPDK's rte_cfgfile, then every section and key checked; no EAL). The
 * input is written to a memfd and loaded through its /proc/self/fd path.
 *
 * Checks: a loaded configuration has a port, ports with devices, connections with a valid
 * geometry on an existing port, references that resolve; a refused file has a one-line
 * reason that names the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_log.h>

#include "config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_ini: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

static int fd = -1;
static char path[64];

static void
check_loaded(const struct dp_cfg *c)
{
	CHECK(c->nports >= 1 && c->nports <= DP_MAX_PORTS);
	CHECK(c->nlinks <= DP_MAX_LINKS && c->nconns <= DP_MAX_CONNS);
	CHECK(strnlen(c->name, DP_NAME_LEN) < DP_NAME_LEN);
	for (unsigned int i = 0; i < c->nports; i++) {
		const struct dp_port_cfg *p = &c->ports[i];

		CHECK(p->device[0] != '\0' && strnlen(p->device, DP_DEVICE_LEN) < DP_DEVICE_LEN);
		CHECK(p->link[0] == '\0' || dp_config_link(c, p->link) >= 0);
		CHECK(p->exception[0] == '\0' || dp_config_port(c, p->exception) >= 0);
		CHECK(p->rx_queues >= 1 && p->tx_queues >= 1);
	}
	for (unsigned int i = 0; i < c->nlinks; i++)
		CHECK(link_emu_config_check(&c->links[i].emu) == 0);
	for (unsigned int i = 0; i < c->nconns; i++) {
		const struct dp_conn_cfg *cc = &c->conns[i];
		struct sdr_conn_geom g;

		CHECK(dp_config_port(c, cc->port) >= 0 && cc->peer_ip_version != 0);
		CHECK(sdr_conn_geometry(&cc->ep.attr, &g) == 0 && cc->ep.rel.rtt_ns > 0);
		CHECK(sdr_scheme_check(&cc->ep.rel.scheme) == 0);
	}
}

/* rte_cfgfile logs every malformed line; the verdict is what is fuzzed, not the log. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	rte_log_set_global_level(RTE_LOG_EMERG);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dp_cfg cfg;
	char err[512];
	size_t n;

	if (fd < 0) {
		fd = memfd_create("fuzz_ini", 0);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (size > 65536)
		return 0;
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	err[0] = '\0';
	if (dp_config_load(path, &cfg, err, sizeof(err)) == 0) {
		check_loaded(&cfg);
		return 0;
	}
	n = strnlen(err, sizeof(err));
	CHECK(n > 0 && n < sizeof(err) && strncmp(err, path, strlen(path)) == 0);
	return 0;
}
