/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several paths on the management thread: every path_period, each connection with
 * [conn] paths has its selector copied from its engine (path_sel.h: the per-path loss
 * estimates and the QPNs' evidence, kept by the engine from the receiver's PATHS reports),
 * brought up to the engine's clock, given what the other connections on its port take of
 * each path, and put to path_sel_decide() — the model takes milliseconds, so never on an
 * engine. A move it advises is handed to the engine that owns
 * the connection (sdr_ep_set_paths(), an engine job). What was seen and decided is kept for
 * sdrctl path show.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

/* Engine job: move the connection's data QPNs to the paths j->q says. */
static int
move_job(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct dp_conn *c = &ctx->conns[j->conn];

	if (c->ep != j->p)
		return -ESTALE;		/* rebuilt or deleted meanwhile */
	return sdr_ep_set_paths(c->ep, j->q, dp_now_ns(ctx));
}

/*
 * The connections that share connection @p i's port (its link's paths) take a share of
 * each path: what the others' channels there send (each at its paced rate, spread as its
 * channels are) is taken off path_rate, so they spread instead of all crowding onto the
 * same best path. Nothing when path_rate is unlimited or no other connection has paths.
 */
static void
others_load(const struct dp_ctx *ctx, unsigned int i, struct path_sel *s)
{
	const struct dp_conn *c = &ctx->conns[i];
	double cap = s->cfg.path_rate_bps;

	if (cap <= 0)
		return;
	for (unsigned int k = 0; k < PATH_SEL_MAX_PATHS; k++)
		s->avail_bps[k] = cap;
	for (unsigned int j = 0; j < ctx->nconns; j++) {
		const struct dp_conn *o = &ctx->conns[j];
		const struct path_sel *os;
		double rate;

		if (j == i || o->ep == NULL || o->port != c->port ||
		    (os = sdr_ep_paths(o->ep)) == NULL || os->cfg.npaths != s->cfg.npaths)
			continue;
		rate = o->cfg->ep.rel.rate_bps > 0 ? o->cfg->ep.rel.rate_bps : cap;
		for (unsigned int k = 0; k < s->cfg.npaths && k < PATH_SEL_MAX_PATHS; k++)
			s->avail_bps[k] -= rate * os->path[k].nqp / os->cfg.nqp;
		s->have_avail = 1;
	}
	for (unsigned int k = 0; k < PATH_SEL_MAX_PATHS; k++)
		if (s->avail_bps[k] < 0)
			s->avail_bps[k] = 0;
}

static void
decide(struct dp_ctx *ctx, unsigned int i, uint64_t now)
{
	/* the management thread's copies (one thread: static, not on its stack) */
	static struct path_sel_qp qp[PATH_SEL_MAX_QPS];
	static uint32_t psn[PATH_SEL_MAX_QPS];
	static struct path_sel_decision dec;
	struct dp_conn *c = &ctx->conns[i];
	struct dp_paths *d = &c->pathd;
	const struct path_sel *live = sdr_ep_paths(c->ep);
	struct sdr_model_params p;
	struct sdr_auto_path used;
	struct sdr_scheme cur;
	struct path_sel s;
	uint64_t t;
	int changing;

	if (d->ep != c->ep) {		/* a new or rebuilt connection: a fresh record */
		rte_spinlock_lock(&d->lock);
		memset(&d->last, 0, sizeof(d->last));
		memset(d->path, 0, sizeof(d->path));
		d->moves = 0;
		d->decisions = 0;
		d->prev_ns = 0;
		d->ep = c->ep;
		d->next_ns = 0;
		rte_spinlock_unlock(&d->lock);
	}
	if (now < d->next_ns)
		return;
	d->next_ns = now + c->cfg->path_period_ns;
	/* a copy of the engine's selector, read as it is (a torn count only moves one
	 * decision of many), brought up to the engine's clock */
	s = *live;
	memcpy(qp, live->qp, s.cfg.nqp * sizeof(qp[0]));
	memcpy(psn, sdr_ep_tx_psns(c->ep), s.cfg.nqp * sizeof(psn[0]));
	s.qp = qp;
	t = dp_now_ns(ctx);
	path_sel_update(&s, psn, t);
	others_load(ctx, i, &s);
	cur = sdr_ep_scheme(c->ep, &changing);
	ctl_auto_params(ctx, c, &p, &used);
	path_sel_decide(&s, &p, &cur, &dec);
	if (dec.verdict == PATH_SEL_MOVE || dec.verdict == PATH_SEL_PROBE) {
		struct ctl_job j = { .fn = move_job, .conn = i, .engine = c->engine, .p = c->ep,
				     .q = dec.want };

		if (ctl_engine_call(ctx, &j) == 0) {
			struct dp_paths_rec *r;

			rte_spinlock_lock(&d->lock);
			r = &d->hist[d->moves++ % DP_PATHS_HIST];
			r->t_ns = now - ctx->ctl->start_ns;
			r->from_mask = dec.cur_mask;
			r->to_mask = dec.use_mask;
			snprintf(r->why, sizeof(r->why), "%s", dec.why);
			rte_spinlock_unlock(&d->lock);
		}
	}
	if (dec.verdict == PATH_SEL_MOVE || dec.verdict == PATH_SEL_PROBE)	/* where they are now */
		for (unsigned int k = 0; k < s.cfg.npaths; k++) {
			s.path[k].nqp = 0;
			for (unsigned int q = 0; q < s.cfg.nqp; q++)
				s.path[k].nqp += dec.want[q] == k;
		}
	rte_spinlock_lock(&d->lock);
	for (unsigned int k = 0; k < s.cfg.npaths; k++)	/* the load since the last look */
		d->fps[k] = d->prev_ns && t > d->prev_ns ?
			    (double)(s.path[k].frames - d->path[k].frames) * 1e9 /
			    (double)(t - d->prev_ns) : 0;
	d->prev_ns = t;
	memcpy(d->path, s.path, sizeof(d->path));
	d->last = dec;
	d->decisions++;
	rte_spinlock_unlock(&d->lock);
}

void
ctl_paths_sweep(struct dp_ctx *ctx, uint64_t now)
{
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].ep != NULL && sdr_ep_paths(ctx->conns[i].ep) != NULL)
			decide(ctx, i, now);
}

int
ctl_paths_state(struct dp_conn *c, struct path_sel_path *paths, double *fps,
		struct path_sel_decision *last, uint64_t *decisions, struct dp_paths_rec *out,
		unsigned int max)
{
	struct dp_paths *d = &c->pathd;
	int n = 0;

	if (c->ep == NULL || sdr_ep_paths(c->ep) == NULL)
		return -1;
	rte_spinlock_lock(&d->lock);
	if (d->ep == c->ep) {
		uint32_t first = d->moves > DP_PATHS_HIST ? d->moves - DP_PATHS_HIST : 0;

		for (uint32_t k = first; k < d->moves && (unsigned int)n < max; k++)
			out[n++] = d->hist[k % DP_PATHS_HIST];
		memcpy(paths, d->path, sizeof(d->path));
		memcpy(fps, d->fps, sizeof(d->fps));
		*last = d->last;
		*decisions = d->decisions;
	} else {
		memset(paths, 0, PATH_SEL_MAX_PATHS * sizeof(*paths));
		memset(fps, 0, PATH_SEL_MAX_PATHS * sizeof(*fps));
		memset(last, 0, sizeof(*last));
		*decisions = 0;
	}
	rte_spinlock_unlock(&d->lock);
	return n;
}
