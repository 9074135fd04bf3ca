/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Built-in message source and sink for static connections, like testpmd's txonly/rxonly
 * but at message level: `--traffic size=1MiB,count=50,inflight=8,scheme=ec-mds:32,8`.
 * The sender fills every message with a pattern that is a function of (seed, message
 * number, offset); the receiver checks every byte and the user immediate on arrival.
 * Completion times — from the first chunk on the wire to the final ACK on the sender, from
 * the first chunk in to the last on a receive-only side — go into a histogram and a list
 * for percentiles. No DPDK here: time is passed in.
 */
#ifndef SDR_DP_TRAFFIC_H
#define SDR_DP_TRAFFIC_H

#include <stdint.h>
#include <stdio.h>

#include "sdr_endpoint.h"
#include "sdr_model.h"

enum traffic_role {
	TRAFFIC_ROLE_AUTO,	/**< from the connection's direction */
	TRAFFIC_ROLE_SEND,
	TRAFFIC_ROLE_RECV,
	TRAFFIC_ROLE_BOTH,
};

struct traffic_cfg {
	uint64_t size;			/**< bytes per message */
	uint32_t count;			/**< messages (0: until stopped) */
	uint32_t inflight;		/**< messages in flight (default 8) */
	uint64_t seed;
	enum traffic_role role;
	uint8_t has_scheme;
	uint8_t no_verify;		/**< verify=no: payloads written once, received unchecked */
	struct sdr_scheme scheme;	/**< overrides the connection's scheme */
	char conn[32];			/**< only this connection (empty: every connection) */
	char log[256];			/**< write every completion time here at the end */
	/** start=T: no send before CLOCK_MONOTONIC reads T seconds (0: at once), so that runs
	 * of several processes start together */
	double start_mono_s;
	uint64_t start_ns;		/**< that time on the dataplane's clock (set by the caller) */
	/*
	 * Stripe @c stripe of a connection striped over @c stripes endpoints (0 and 0: not
	 * striped): of the connection's messages 0 .. count - 1 this one carries those with
	 * n % stripes == stripe, and an equal share of inflight (at least 1). Not parsed:
	 * set from the connection.
	 */
	uint32_t stripe, stripes;
};

/**
 * Parse "size=1MiB,count=50,inflight=8,scheme=ec-mds:32,8,role=send,seed=1,conn=c0".
 * Keys: size, count, inflight, scheme, role (send|recv|both|auto), seed, conn, log,
 * verify (yes|no), start (CLOCK_MONOTONIC seconds).
 * @return 0, or -1 with a one-line reason in @p err naming the bad word.
 */
int traffic_parse(const char *spec, struct traffic_cfg *cfg, char *err, size_t errlen);

/** Histogram of completion times: bucket i holds times in [2^i, 2^(i+1)) microseconds. */
#define TRAFFIC_HIST_BUCKETS 32

struct traffic_stats {
	uint32_t sent;			/**< sends completed OK */
	uint32_t send_failed;
	uint32_t received;		/**< receives completed */
	uint32_t verified;		/**< received and every byte and the immediate right */
	uint32_t unchecked;		/**< received, not checked (verify=no) */
	uint32_t corrupt;		/**< received with wrong bytes */
	uint32_t recv_failed;		/**< timed out */
	uint64_t bytes;			/**< payload bytes completed (sent, or else received) */
	uint64_t retransmitted;
	uint64_t decoded;
	uint64_t fallback;
	uint64_t first_ns;		/**< first message started */
	uint64_t last_ns;		/**< last completion */
	uint64_t hist[TRAFFIC_HIST_BUCKETS];
};

struct traffic;

/**
 * Create the source/sink of one connection.
 * @param send, recv which halves run (from the role and the connection's direction).
 * @return NULL when out of memory.
 */
struct traffic *traffic_create(const struct traffic_cfg *cfg, struct sdr_ep *ep, int send,
			       int recv);
void traffic_destroy(struct traffic *t);

/**
 * The area of @p t's send buffers, whole pages, which its data frames may point into
 * (zero-copy): mapped for a device's DMA (dma.h) while @p t lives.
 * @return 0, or -1 where @p t sends nothing.
 */
int traffic_send_area(const struct traffic *t, void **va, size_t *len);

/**
 * One connection's view of its stripes' sources and sinks (@p n >= 1): counts and times
 * added up, first start to last completion. Read-only; free with traffic_destroy().
 * @return NULL when out of memory.
 */
struct traffic *traffic_join(struct traffic *const *parts, unsigned int n);

/** Post receives, submit sends, collect and check completions. @return work done (0: idle). */
unsigned int traffic_step(struct traffic *t, uint64_t now);

/** Every message of the run is complete on the halves that run. */
int traffic_done(const struct traffic *t);

/** Every completed message verified (or received, with verify=no) and none failed (the
 * exit status of a run). */
int traffic_ok(const struct traffic *t);

const struct traffic_stats *traffic_stats(const struct traffic *t);

/** 0 when the run was asked with verify=no: nothing it received is checked. */
int traffic_verifies(const struct traffic *t);

/** Completion time percentile (q in [0, 1]) over completed messages, seconds; 0 if none. */
double traffic_percentile(const struct traffic *t, double q);

/** Mean completion time, seconds. */
double traffic_mean(const struct traffic *t);

/** Goodput in Gbit/s from the first start to the last completion. */
double traffic_goodput_gbps(const struct traffic *t);

/** Messages expected on the halves that run (for progress lines). */
uint32_t traffic_expected(const struct traffic *t);

/** Messages completed so far. */
uint32_t traffic_completed(const struct traffic *t);

/**
 * Every completion recorded, one line each, "end_s completion_s": when it completed
 * (seconds since the first message started) and its completion time. @return 0 or -1.
 */
int traffic_write_log(const struct traffic *t, const char *path);

#endif /* SDR_DP_TRAFFIC_H */
