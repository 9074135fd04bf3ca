/* SPDX-License-Identifier: BSD-3-Clause */
/* Which lcore runs what, and the rings between them (lcores.h). */
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "lcores.h"
#include "pipeline.h"

/*
 * [pipeline] fec = lcore: the rings to and from the FEC worker, and where it runs — the
 * lcore after the pipeline's, or the main lcore when the pipeline runs on one worker and
 * the main lcore would only tick. @return the FEC lcore, RTE_MAX_LCORE for the main one,
 * or -1 (said why).
 */
static int
fec_setup(struct dp_ctx *ctx, unsigned int after)
{
	unsigned int l = after < RTE_MAX_LCORE ? rte_get_next_lcore(after, 1, 0) : RTE_MAX_LCORE;
	unsigned int size = 2 * DP_MAX_CONNS * DP_MAX_FEC_JOBS;

	if (l >= RTE_MAX_LCORE && (ctx->cfg.mode == DP_PIPE_SPLIT || after >= RTE_MAX_LCORE)) {
		fprintf(stderr, "sdr-dataplane: [pipeline] fec = lcore needs one more lcore than "
			"the pipeline (e.g. -l 0-%u)\n",
			ctx->cfg.mode == DP_PIPE_SPLIT ? 1 + ctx->cfg.rx_lcores : 1);
		return -1;
	}
	ctx->fec_in = rte_ring_create("sdr_fec_in", size, (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	ctx->fec_out = rte_ring_create("sdr_fec_out", size, (int)rte_socket_id(),
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ctx->fec_in == NULL || ctx->fec_out == NULL) {
		fprintf(stderr, "sdr-dataplane: cannot create the FEC rings: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	return (int)l;
}

/*
 * placement = workers: receive worker @p k's copy jobs and the two rings that carry them
 * (each can hold every job, so an enqueue never fails). @return 0 or -1 (said why).
 */
static int
copies_setup(struct dp_ctx *ctx, unsigned int k)
{
	struct dp_copies *c = &ctx->copies[k];
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "sdr_copy%u", k);
	c->todo = rte_ring_create(name, 2 * DP_COPY_JOBS, (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "sdr_placed%u", k);
	c->done = rte_ring_create(name, 2 * DP_COPY_JOBS, (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	c->jobs = calloc(DP_COPY_JOBS, sizeof(*c->jobs));
	c->free = calloc(DP_COPY_JOBS, sizeof(*c->free));
	if (c->todo == NULL || c->done == NULL || c->jobs == NULL || c->free == NULL) {
		fprintf(stderr, "sdr-dataplane: cannot create the placement rings: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	for (uint32_t i = 0; i < DP_COPY_JOBS; i++) {
		c->jobs[i].idx = i;
		c->free[c->nfree++] = DP_COPY_JOBS - 1 - i;
	}
	return 0;
}

void
dp_lcores_free(struct dp_ctx *ctx)
{
	for (unsigned int k = 0; k < DP_MAX_RX_LCORES; k++) {
		struct dp_copies *c = &ctx->copies[k];
		struct dp_copy *j = NULL;
		struct rte_mbuf *m;

		while (c->todo != NULL && rte_ring_sc_dequeue(c->todo, (void **)&j) == 0)
			rte_pktmbuf_free(j->m);
		/* what a receive worker passed on that the main lcore did not take */
		while (ctx->split_rings[k] != NULL &&
		       rte_ring_sc_dequeue(ctx->split_rings[k], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(ctx->split_rings[k]);
		ctx->split_rings[k] = NULL;
		free(c->jobs);
		free(c->free);
		c->jobs = NULL;
		c->free = NULL;
	}
}

/*
 * Split pipeline: one receive worker on each of the rx_lcores lcores after the main one,
 * each with its ring to the main lcore. @return the last receive lcore, or -1 (said why).
 */
static int
split_setup(struct dp_ctx *ctx)
{
	unsigned int l = (unsigned int)-1;

	for (unsigned int k = 0; k < ctx->cfg.rx_lcores; k++) {
		char name[RTE_RING_NAMESIZE];

		l = rte_get_next_lcore(l, 1, 0);
		if (l >= RTE_MAX_LCORE) {
			fprintf(stderr, "sdr-dataplane: [pipeline] mode = split with %u receive "
				"worker%s needs %u lcores (e.g. -l 0-%u)\n", ctx->cfg.rx_lcores,
				ctx->cfg.rx_lcores > 1 ? "s" : "", 1 + ctx->cfg.rx_lcores,
				ctx->cfg.rx_lcores);
			return -1;
		}
		snprintf(name, sizeof(name), "sdr_split%u", k);
		ctx->split_rings[k] = rte_ring_create(name, 4096, (int)rte_socket_id(),
						    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ctx->split_rings[k] == NULL) {
			fprintf(stderr, "sdr-dataplane: cannot create the pipeline ring: %s\n",
				rte_strerror(rte_errno));
			return -1;
		}
		ctx->rx_lcore_id[k] = l;
		if (ctx->cfg.place_workers && copies_setup(ctx, k) != 0)
			return -1;
	}
	return (int)l;
}

int
dp_lcores_setup(struct dp_ctx *ctx, struct dp_lcores *l)
{
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	int last_rx = -1;

	l->main_role = DP_WORKER_ALL;
	l->main_works = 1;
	l->fec = -1;
	if (ctx->cfg.mode == DP_PIPE_SPLIT) {
		last_rx = split_setup(ctx);
		if (last_rx < 0)
			return -1;
		l->main_role = DP_WORKER_TX;
	}
	if (ctx->cfg.mode == DP_PIPE_ENGINES) {
		/* engine 0 on the main lcore (between ticks), engine e on the e-th worker lcore */
		unsigned int lc = (unsigned int)-1;

		if (rte_lcore_count() < ctx->cfg.engines) {
			fprintf(stderr, "sdr-dataplane: [pipeline] engines = %u needs %u lcores, EAL "
				"has %u (e.g. -l 0-%u)\n", ctx->cfg.engines, ctx->cfg.engines,
				rte_lcore_count(), ctx->cfg.engines - 1);
			return -1;
		}
		ctx->engine_lcore[0] = rte_get_main_lcore();
		for (unsigned int e = 1; e < ctx->cfg.engines; e++) {
			lc = rte_get_next_lcore(lc, 1, 0);
			ctx->engine_lcore[e] = lc;
		}
		l->main_role = DP_WORKER_ENGINE;
	}
	/* rtc with a worker lcore: the pipeline runs there, the main lcore only ticks */
	if (ctx->cfg.mode == DP_PIPE_RTC && worker < RTE_MAX_LCORE)
		l->main_works = 0;
	if (ctx->cfg.fec_lcore) {
		l->fec = fec_setup(ctx, last_rx >= 0 ? (unsigned int)last_rx : worker);
		if (l->fec < 0)
			return -1;
	}
	return 0;
}

/* rte_eal_remote_launch()'s result, said in one line if it failed. @return 0 or -1. */
static int
launched(int rc, unsigned int lcore)
{
	if (rc == 0)
		return 0;
	fprintf(stderr, "sdr-dataplane: lcore %u would not start: %s\n", lcore, rte_strerror(-rc));
	return -1;
}

/* Worker @p i of @p l runs @p role on lcore @p lcore. @return 0 or -1. */
static int
run_on(struct dp_ctx *ctx, struct dp_lcores *l, unsigned int i, enum dp_worker_role role,
       unsigned int lcore)
{
	l->run[i] = (struct dp_worker_launch){ .ctx = ctx, .role = role };
	return launched(rte_eal_remote_launch(dp_pipeline_worker, &l->run[i], lcore), lcore);
}

int
dp_lcores_launch(struct dp_ctx *ctx, struct dp_lcores *l)
{
	int rc = 0;

	if (l->fec >= 0 && l->fec < RTE_MAX_LCORE)
		rc |= launched(rte_eal_remote_launch(dp_fec_worker, ctx, (unsigned int)l->fec),
			       (unsigned int)l->fec);
	if (ctx->cfg.mode == DP_PIPE_ENGINES) {
		for (unsigned int e = 1; e < ctx->cfg.engines && rc == 0; e++)
			rc |= run_on(ctx, l, e, DP_WORKER_ENGINE + e, ctx->engine_lcore[e]);
	} else if (ctx->cfg.mode == DP_PIPE_SPLIT) {
		for (unsigned int k = 0; k < ctx->cfg.rx_lcores && rc == 0; k++)
			rc |= run_on(ctx, l, k, DP_WORKER_RX + k, ctx->rx_lcore_id[k]);
	} else if (!l->main_works && rc == 0) {
		rc |= run_on(ctx, l, 0, DP_WORKER_ALL, rte_get_next_lcore(-1, 1, 0));
	}
	return rc;
}
