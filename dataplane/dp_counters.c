/* SPDX-License-Identifier: BSD-3-Clause */
/* The dataplane's counter tables (dp_counters.h). */
#include <stddef.h>

#include "dp_counters.h"

static const struct sdr_counter_def port_defs[DP_PORT_NCOUNTERS] = {
	DP_PORT_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table dp_port_counter_table = {
	.group = "port",
	.doc = "a port of the dataplane: frames and bytes each way, and every reason a frame "
	       "was dropped between the device and a connection (the parser's verdicts are "
	       "their own table)",
	.n = DP_PORT_NCOUNTERS,
	.defs = port_defs,
};

const char *
dp_port_counter_name(enum dp_port_counter c)
{
	return sdr_counter_name(&dp_port_counter_table, (unsigned int)c);
}

static const struct sdr_counter_def sdk_defs[SDK_C_NCOUNTERS] = {
	SDK_CLIENT_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table sdk_client_counter_table = {
	.group = "sdk_client",
	.doc = "an application attached to the dataplane through the SDK (libsdr): its "
	       "requests and completions",
	.n = SDK_C_NCOUNTERS,
	.defs = sdk_defs,
};

static const struct sdr_counter_def sdk_service_defs[SDK_S_NCOUNTERS] = {
	SDK_SERVICE_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table sdk_service_counter_table = {
	.group = "sdk_service",
	.doc = "the SDK service of the dataplane as a whole, every engine's share of it added: "
	       "what belongs to no one application",
	.n = SDK_S_NCOUNTERS,
	.defs = sdk_service_defs,
};

const struct sdr_counter_table *const dp_counter_tables[] = {
	&dp_port_counter_table,
	&sdk_client_counter_table,
	&sdk_service_counter_table,
	NULL,
};
