/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which lcore runs what ([pipeline] mode, engines, rx_lcores, fec), and the rings between
 * them: set up once EAL runs, launched once the control service is up, freed at exit.
 */
#ifndef SDR_DP_LCORES_H
#define SDR_DP_LCORES_H

#include "dp.h"
#include "pipeline.h"

struct dp_lcores {
	enum dp_worker_role main_role;	/**< what the main lcore runs between its ticks */
	int main_works;			/**< 0: the pipeline runs elsewhere, the main lcore ticks */
	int fec;			/**< the FEC worker's lcore; RTE_MAX_LCORE: the main one;
					 *   -1: none (fec = inline) */
	/* what each worker lcore runs (alive while they run) */
	struct dp_worker_launch run[DP_MAX_ENGINES + DP_MAX_RX_LCORES];
};

/**
 * Pick the lcores and make the rings: receive workers and their rings (split), engine
 * lcores (engines), the FEC worker and its rings (fec = lcore).
 * @return 0, or -1 after one line on stderr (too few lcores, no memory): exit 2.
 */
int dp_lcores_setup(struct dp_ctx *ctx, struct dp_lcores *l);

/**
 * Start the worker lcores (the main lcore's share is the caller's loop).
 * @return 0, or -1 after one line on stderr if an lcore would not start (those started
 * stop once the caller sets quit).
 */
int dp_lcores_launch(struct dp_ctx *ctx, struct dp_lcores *l);

/** The copy jobs, and the packets of copies never made (the run stopped first). */
void dp_lcores_free(struct dp_ctx *ctx);

#endif /* SDR_DP_LCORES_H */
