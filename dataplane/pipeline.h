/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll loops: run to completion, split, engines; and the FEC worker (pipeline.c). */
#ifndef SDR_DP_PIPELINE_H
#define SDR_DP_PIPELINE_H

#include "dp.h"

enum dp_worker_role {
	DP_WORKER_ALL,		/* run to completion */
	DP_WORKER_TX,		/* split: everything after parse */
	DP_WORKER_RX,		/* split: rx + parse; receive worker k runs DP_WORKER_RX + k */
	/* mode = engines: engine e runs DP_WORKER_ENGINE + e: everything, for its queues and
	 * its connections */
	DP_WORKER_ENGINE = DP_WORKER_RX + DP_MAX_RX_LCORES,
};

/** What a worker lcore runs: a role, on a dataplane. */
struct dp_worker_launch {
	struct dp_ctx *ctx;
	enum dp_worker_role role;
};

/** lcore entry: run @p arg (a struct dp_worker_launch, alive until it returns) until
 * ctx->quit. */
int dp_pipeline_worker(void *arg);

/** Run a role on the calling lcore until ctx->quit or the TSC reaches @p until_tsc (0: never). */
void dp_pipeline_run(struct dp_ctx *ctx, enum dp_worker_role role, uint64_t until_tsc);

/** Return the calling lcore's spare mbufs to the pool. */
void dp_pipeline_release(void);

/** The FEC worker ([pipeline] fec = lcore): run jobs from ctx->fec_in until ctx->quit or
 * the TSC reaches @p until_tsc (0: never). */
void dp_fec_run(struct dp_ctx *ctx, uint64_t until_tsc);

/** lcore entry of the FEC worker: @p arg is the struct dp_ctx. */
int dp_fec_worker(void *arg);

#endif /* SDR_DP_PIPELINE_H */
