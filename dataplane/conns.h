/* SPDX-License-Identifier: BSD-3-Clause */
/* Connections: endpoints from the static and run-time connections, on their ports and engines (conns.c). */
#ifndef SDR_DP_CONNS_H
#define SDR_DP_CONNS_H

#include "dp.h"

int dp_conns_init(struct dp_ctx *ctx, char *err, size_t errlen);
/**
 * mode = engines: the engine that owns connection @p cc — its `engine` key, or one both
 * ends derive alike from its pair of QPNs; stripe s of a striped connection: s engines
 * after stripe 0's. 0 in the other modes.
 */
unsigned int dp_conn_engine(const struct dp_cfg *cfg, const struct dp_conn_cfg *cc);
/** Free an endpoint the dataplane made, and its zero-copy holds (parked while frames live). */
void dp_ep_free(struct sdr_ep *ep);
void dp_conns_free(struct dp_ctx *ctx);
/** Bring up connection @p i from ctx->cfg.conns[i] (prepare and install). */
int dp_conn_start(struct dp_ctx *ctx, unsigned int i, char *err, size_t errlen);
/** Take connection @p i down and free it. */
void dp_conn_stop(struct dp_ctx *ctx, unsigned int i);
/**
 * Make the endpoint of connection @p cc (its path filled in from its port). Allocates: the
 * management thread's work, never the engine's.
 * @return 0, or -1 with one line in @p err.
 */
int dp_conn_prepare(const struct dp_ctx *ctx, struct dp_conn_cfg *cc, struct sdr_ep **ep,
		    char *err, size_t errlen);
/**
 * Put @p cc and its endpoint in place as connection @p i: its QPNs on its port, the entry.
 * A connection there already (a rebuild) keeps its owner; the caller frees its old
 * endpoint. No allocation: the engine runs it (or the caller, while no engine runs).
 * @return 0, or -1 (QPNs overlap another connection) with one line in @p err.
 */
int dp_conn_install(struct dp_ctx *ctx, unsigned int i, const struct dp_conn_cfg *cc,
		    struct sdr_ep *ep, char *err, size_t errlen);
/** Take connection @p i out of place; @return its endpoint, for the caller to free. */
struct sdr_ep *dp_conn_remove(struct dp_ctx *ctx, unsigned int i);

#endif /* SDR_DP_CONNS_H */
