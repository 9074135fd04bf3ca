/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Online auto on the management thread: every half second, each connection that sends
 * with scheme = auto has its loss estimate (the engine's, copied) put to the model
 * (sdr_auto_decide(): the model takes milliseconds, so never on an engine); a change it
 * advises is handed to the engine that owns the connection (sdr_ep_change_scheme(), an
 * engine job), which agrees it with the peer between messages. The decisions and the
 * changes asked are kept for sdrctl conn show and telemetry. The model is given the path as
 * the connection measured it (RTT, and the delivery rate when unpaced: sdr_auto_use_path()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "ec_codec.h"

#define AUTO_PERIOD_NS 500000000ull

/* Engine job: ask the connection's endpoint for the change (with its code j->code, made
 * here), start the dwell time. */
static int
change_job(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct dp_conn *c = &ctx->conns[j->conn];
	int rc;

	if (c->ep != j->p)
		return -ESTALE;		/* rebuilt or deleted meanwhile */
	rc = sdr_ep_change_scheme(c->ep, j->q, &j->code, dp_now_ns(ctx));
	if (rc == 0)
		sdr_ep_auto_changed(c->ep, j->u64);
	else if (rc != -EBUSY)	/* (busy: another change under way, asked again later) */
		sdr_ep_auto_refused(c->ep, j->q, j->u64);
	return rc;
}

void
ctl_auto_params(const struct dp_ctx *ctx, const struct dp_conn *c, struct sdr_model_params *p,
		struct sdr_auto_path *u)
{
	struct path_est e;

	/* a copy of the engine's estimates, read as they are (see decide()) */
	memcpy(&e, sdr_ep_path(c->ep), sizeof(e));
	dp_conn_model_params(c->cfg, p);
	/* the peer's receiver: configured alike (rto = measured at both ends or neither) */
	sdr_auto_use_path(p, &e, c->cfg->ep.rel.rate_bps > 0, sdr_ep_rto(c->ep, NULL),
			  c->cfg->ep.rel.rto_measured, dp_now_ns(ctx), u);
}

/* Whether connection @p c changes its scheme with the link (config.c sets it up). */
static int
online(const struct dp_conn *c)
{
	return c->ep != NULL && dp_conn_auto_changes(c->cfg);
}

static void
decide(struct dp_ctx *ctx, unsigned int i, uint64_t now)
{
	struct dp_conn *c = &ctx->conns[i];
	struct dp_auto *d = &c->autod;
	struct sdr_model_params p;
	struct sdr_auto_decision dec;
	struct sdr_auto_path path;
	struct sdr_scheme cur;
	struct sdr_auto a;
	int changing;

	if (d->epoch != c->epoch) {	/* a new or rebuilt connection: a fresh record */
		rte_spinlock_lock(&d->lock);
		memset(&d->last, 0, sizeof(d->last));
		d->asked = 0;
		d->epoch = c->epoch;
		d->next_ns = 0;
		rte_spinlock_unlock(&d->lock);
	}
	if (now < d->next_ns)
		return;
	d->next_ns = now + AUTO_PERIOD_NS;
	/* a copy of the engine's estimator and scheme (read as they are: a torn double
	 * only moves one decision of many) */
	memcpy(&a, sdr_ep_auto(c->ep), sizeof(a));
	cur = sdr_ep_scheme(c->ep, &changing);
	ctl_auto_params(ctx, c, &p, &path);
	sdr_auto_decide(&a, &p, &cur, now, &dec);
	if (dec.verdict == SDR_AUTO_CHANGE && !changing) {
		struct ctl_job j = { .fn = change_job, .conn = i, .engine = c->engine, .p = c->ep,
				     .q = &dec.choice, .u64 = now };
		int rc = 0;

		/* the code here, not on the engine (an MDS code's tables: 0.1 to a few ms) */
		if (sdr_scheme_is_ec(&dec.choice))
			rc = sdr_ep_code_make(&dec.choice, &j.code, NULL);
		if (rc == 0)
			rc = ctl_engine_call(ctx, &j);
		ec_codec_destroy(j.code);	/* (not taken) */
		if (rc == 0) {
			struct dp_auto_rec *r;

			rte_spinlock_lock(&d->lock);
			r = &d->hist[d->asked++ % DP_AUTO_HIST];
			r->t_ns = now - ctx->ctl->start_ns;
			r->from = cur;
			r->to = dec.choice;
			snprintf(r->why, sizeof(r->why), "%s", dec.why);
			rte_spinlock_unlock(&d->lock);
		}
	}
	rte_spinlock_lock(&d->lock);
	d->last = dec;
	d->path = path;
	rte_spinlock_unlock(&d->lock);
}

/* Engine job: the codes the endpoint asked for (j->code, j->code2), if it still wants them. */
static int
code_job(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct dp_conn *c = &ctx->conns[j->conn];

	if (c->ep != j->p)
		return -ESTALE;
	return sdr_ep_code_give(c->ep, j->q, &j->code, &j->code2);
}

/*
 * The code a connection's endpoint waits for (a change the peer asked for, a
 * return to the configured scheme): made here and handed over, so that no engine stalls
 * making it (sdr_ep_cfg.codes_outside).
 */
static void
serve_code(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_conn *c = &ctx->conns[i];
	struct sdr_scheme s;
	struct ctl_job j = { .fn = code_job, .conn = i, .engine = c->engine, .p = c->ep,
			     .q = &s };

	if (!sdr_ep_code_wanted(c->ep, &s))
		return;
	/* (no memory: given as none, and the endpoint refuses what waited for it) */
	(void)sdr_ep_code_make(&s, &j.code, &j.code2);
	(void)ctl_engine_call(ctx, &j);
	ec_codec_destroy(j.code);	/* (not taken: no longer wanted) */
	ec_codec_destroy(j.code2);
}

void
ctl_auto_sweep(struct dp_ctx *ctx, uint64_t now)
{
	/* the codes first: a change waits for them, a decision (the model) takes ms */
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].ep != NULL && ctx->conns[i].cfg->ep.codes_outside)
			serve_code(ctx, i);	/* (a receive side too: it follows changes) */
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (online(&ctx->conns[i]))
			decide(ctx, i, now);
}

unsigned int
ctl_auto_history(struct dp_conn *c, struct dp_auto_rec *out, unsigned int max,
		 struct sdr_auto_decision *last, struct sdr_auto_path *path)
{
	struct dp_auto *d = &c->autod;
	unsigned int n = 0;

	rte_spinlock_lock(&d->lock);
	if (d->epoch == c->epoch && c->ep != NULL) {
		uint32_t first = d->asked > DP_AUTO_HIST ? d->asked - DP_AUTO_HIST : 0;

		for (uint32_t k = first; k < d->asked && n < max; k++)
			out[n++] = d->hist[k % DP_AUTO_HIST];
		if (last != NULL)
			*last = d->last;
		if (path != NULL)
			*path = d->path;
	} else {
		if (last != NULL)
			memset(last, 0, sizeof(*last));
		if (path != NULL)
			memset(path, 0, sizeof(*path));
	}
	rte_spinlock_unlock(&d->lock);
	return n;
}
