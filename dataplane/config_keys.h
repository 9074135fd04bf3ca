/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file's keys, section by section, as one table: the parser looks a key
 * up here (an unknown one gets an error naming every key of its section), reads integers,
 * sizes, times and numbers with the bounds given here, and `sdr-docgen config` prints the
 * key reference of docs/configuration.md from the same entries (the test docs_generated
 * fails when that page is stale). No DPDK here, so sdr-docgen can print it.
 */
#ifndef SDR_CONFIG_KEYS_H
#define SDR_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>

/** How a key's value is read before the section's own code stores it. */
enum dp_key_kind {
	DP_K_OTHER,	/**< by the section's code (names, addresses, choices, lists) */
	DP_K_INT,	/**< an integer in lo ... hi (decimal, or hexadecimal after 0x) */
	DP_K_SIZE,	/**< a size in bytes in lo ... hi (64KiB, 1MiB, ...) */
	DP_K_TIME,	/**< a time up to an hour (25ms, 100us, 2s) */
	DP_K_NUMBER,	/**< a decimal number in 0 ... hi */
};

struct dp_key {
	const char *name;
	uint8_t kind;		/**< enum dp_key_kind */
	uint64_t lo, hi;	/**< DP_K_INT, DP_K_SIZE; hi for DP_K_NUMBER */
	/* the reference's columns */
	const char *value;	/**< what a value looks like */
	const char *dflt;	/**< the default */
	const char *doc;	/**< what it does */
	uint8_t admin;		/**< [conn]: where the connection's frames go and what it
				 *   trusts; an application changes it only on a connection it
				 *   created (the administrator, sdrctl, on any) */
};

/** The keys of one section kind. */
struct dp_key_section {
	const char *name;	/**< "dataplane", "pipeline", "port", "link", "conn" */
	const char *title;	/**< as docs/configuration.md heads it: "[conn NAME]" */
	unsigned int n;
	const struct dp_key *keys;
};

enum dp_dataplane_key {
	DPK_DATAPLANE_NAME,
	DPK_DATAPLANE_MBUFS,
	DPK_DATAPLANE_ZC_MBUFS,
	DPK_DATAPLANE_BURST,
	DPK_DATAPLANE_IDLE_SLEEP_US,
	DPK_DATAPLANE_ARENA,
	DPK_DATAPLANE_CONN_MEMORY,
	DPK_DATAPLANE_USER_MEMORY,
	DPK_DATAPLANE_CONTROL_DIR,
	DPK_DATAPLANE_CONTROL_GROUP,
	DPK_DATAPLANE_SLOTS_PER_USER,
	DPK_DATAPLANE_STATS_PERIOD,
	DPK_DATAPLANE_COUNT
};

enum dp_pipeline_key {
	DPK_PIPELINE_MODE,
	DPK_PIPELINE_ENGINES,
	DPK_PIPELINE_RX_LCORES,
	DPK_PIPELINE_PLACEMENT,
	DPK_PIPELINE_FEC,
	DPK_PIPELINE_FEC_JOBS,
	DPK_PIPELINE_COUNT
};

enum dp_port_key {
	DPK_PORT_DEVICE,
	DPK_PORT_MAC,
	DPK_PORT_IPV4,
	DPK_PORT_IPV6,
	DPK_PORT_MTU,
	DPK_PORT_RX_QUEUES,
	DPK_PORT_TX_QUEUES,
	DPK_PORT_LINK,
	DPK_PORT_EXCEPTION,
	DPK_PORT_CAPTURE,
	DPK_PORT_ALLOW,
	DPK_PORT_STEERING,
	DPK_PORT_ZERO_COPY,
	DPK_PORT_DMA_MAP,
	DPK_PORT_COUNT
};

enum dp_link_key {
	DPK_LINK_DELAY,
	DPK_LINK_RATE,
	DPK_LINK_QUEUE,
	DPK_LINK_OVERHEAD,
	DPK_LINK_LOSS,
	DPK_LINK_BURST,
	DPK_LINK_REORDER,
	DPK_LINK_DUP,
	DPK_LINK_CORRUPT,
	DPK_LINK_SEED,
	DPK_LINK_PATHS,
	DPK_LINK_PATHK,
	DPK_LINK_COUNT
};

enum dp_conn_key {
	DPK_CONN_PORT,
	DPK_CONN_ENGINE,
	DPK_CONN_STRIPES,
	DPK_CONN_PEER_IP,
	DPK_CONN_PEER_MAC,
	DPK_CONN_LOCAL_QPN,
	DPK_CONN_REMOTE_QPN,
	DPK_CONN_REMOTE_CTRL_QPN,
	DPK_CONN_LOCAL_RKEY,
	DPK_CONN_AUTH_KEY,
	DPK_CONN_REMOTE_RKEY,
	DPK_CONN_MTU,
	DPK_CONN_CHUNK,
	DPK_CONN_IMM_SPLIT,
	DPK_CONN_CHANNELS,
	DPK_CONN_GENERATIONS,
	DPK_CONN_MAX_MSG,
	DPK_CONN_INFLIGHT,
	DPK_CONN_DIR,
	DPK_CONN_SCHEME,
	DPK_CONN_RTT,
	DPK_CONN_ALPHA,
	DPK_CONN_RTO,
	DPK_CONN_BETA,
	DPK_CONN_RATE,
	DPK_CONN_BUCKET,
	DPK_CONN_ACK_EVERY,
	DPK_CONN_ACK_INTERVAL,
	DPK_CONN_NACK_ALLOWANCE,
	DPK_CONN_GLOBAL_TIMEOUT,
	DPK_CONN_FALLBACK,
	DPK_CONN_EXPECTED_DROP,
	DPK_CONN_AUTO_MIN_CHUNK,
	DPK_CONN_TCLASS,
	DPK_CONN_PKEY,
	DPK_CONN_PEER_CHECK,
	DPK_CONN_PEER_UDP_SPORT,
	DPK_CONN_PATHS,
	DPK_CONN_PATH_POLICY,
	DPK_CONN_PATH_RATE,
	DPK_CONN_PATH_FAIL,
	DPK_CONN_PATH_PERIOD,
	DPK_CONN_PATH_SPORTS,
	DPK_CONN_PATH_PROBE,
	DPK_CONN_PATH_OBJECTIVE,
	DPK_CONN_COUNT
};

extern const struct dp_key_section dp_dataplane_keys, dp_pipeline_keys, dp_port_keys,
	dp_link_keys, dp_conn_keys;

/** Every section kind, NULL-terminated, in the order of docs/configuration.md. */
extern const struct dp_key_section *const dp_key_sections[];

/** The index of key @p name in @p s, or -1. */
int dp_key_find(const struct dp_key_section *s, const char *name);

/** "a, b, c": every key of @p s into @p buf, for an error line. @return @p buf */
const char *dp_key_list(const struct dp_key_section *s, char *buf, size_t len);

#endif /* SDR_CONFIG_KEYS_H */
