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
 * What the connections on connection @p i's port (its link's paths) send on each path, into
 * @p load: each one's paced rate (or path_rate), spread as its channels are; i itself and
 * the @p n connections of @p skip not counted. @return how many were counted.
 */
static unsigned int
port_load(const struct dp_ctx *ctx, unsigned int i, const unsigned int *skip, unsigned int n,
	  double *load)
{
	const struct dp_conn *c = &ctx->conns[i];
	const struct path_sel *s = sdr_ep_paths(c->ep);
	unsigned int counted = 0;

	memset(load, 0, PATH_SEL_MAX_PATHS * sizeof(*load));
	for (unsigned int j = 0; j < ctx->nconns; j++) {
		const struct dp_conn *o = &ctx->conns[j];
		const struct path_sel *os;
		unsigned int k, skipped = 0;
		double rate;

		for (k = 0; k < n; k++)
			skipped |= skip[k] == j;
		if (j == i || skipped || o->ep == NULL || o->port != c->port ||
		    (os = sdr_ep_paths(o->ep)) == NULL || os->cfg.npaths != s->cfg.npaths)
			continue;
		rate = o->cfg->ep.rel.rate_bps > 0 ? o->cfg->ep.rel.rate_bps : s->cfg.path_rate_bps;
		for (k = 0; k < s->cfg.npaths && k < PATH_SEL_MAX_PATHS; k++)
			load[k] += rate * os->path[k].nqp / os->cfg.nqp;
		counted++;
	}
	return counted;
}

/*
 * The connections that share connection @p i's port take a share of each path: what the
 * others send there (port_load()) is taken off path_rate, so they spread instead of all
 * crowding onto the same best path. Nothing when path_rate is unlimited or no other
 * connection has paths.
 */
static void
others_load(const struct dp_ctx *ctx, unsigned int i, struct path_sel *s)
{
	double load[PATH_SEL_MAX_PATHS];

	if (s->cfg.path_rate_bps <= 0 || port_load(ctx, i, NULL, 0, load) == 0)
		return;
	s->have_avail = 1;
	for (unsigned int k = 0; k < PATH_SEL_MAX_PATHS; k++)
		s->avail_bps[k] = s->cfg.path_rate_bps - load[k] > 0 ?
				  s->cfg.path_rate_bps - load[k] : 0;
}

/* The management thread's copy of one connection's selector (one thread: static storage,
 * not its stack), brought up to the engine's clock. */
struct view {
	struct path_sel_qp qp[PATH_SEL_MAX_QPS];
	uint32_t psn[PATH_SEL_MAX_QPS];
	struct path_sel s;
	struct sdr_model_params p;
	struct sdr_scheme scheme;
	uint64_t t;			/* the engine's clock when copied */
};

static struct view views[PATH_SEL_JOINT_MAX];

/* A new or rebuilt connection @p i starts a fresh record. */
static void
fresh(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_conn *c = &ctx->conns[i];
	struct dp_paths *d = &c->pathd;

	if (d->epoch != c->epoch) {	/* a new or rebuilt connection: a fresh record */
		rte_spinlock_lock(&d->lock);
		memset(&d->last, 0, sizeof(d->last));
		memset(d->path, 0, sizeof(d->path));
		d->moves = 0;
		d->decisions = 0;
		d->prev_ns = 0;
		d->epoch = c->epoch;
		d->next_ns = 0;
		rte_spinlock_unlock(&d->lock);
	}
}

/* Whether connection @p i's decision is due at @p now; if so, the next one is set. */
static int
due(struct dp_ctx *ctx, unsigned int i, uint64_t now)
{
	struct dp_conn *c = &ctx->conns[i];
	struct dp_paths *d = &c->pathd;

	fresh(ctx, i);
	if (now < d->next_ns)
		return 0;
	d->next_ns = now + c->cfg->path_period_ns;
	return 1;
}

/* A copy of connection @p i's selector, read as it is (a torn count only moves one decision
 * of many), brought up to the engine's clock, with its model point and scheme. */
static void
take_view(struct dp_ctx *ctx, unsigned int i, struct view *v)
{
	struct dp_conn *c = &ctx->conns[i];
	const struct path_sel *live = sdr_ep_paths(c->ep);
	struct sdr_auto_path used;
	int changing;

	v->s = *live;
	memcpy(v->qp, live->qp, v->s.cfg.nqp * sizeof(v->qp[0]));
	memcpy(v->psn, sdr_ep_tx_psns(c->ep), v->s.cfg.nqp * sizeof(v->psn[0]));
	v->s.qp = v->qp;
	v->t = dp_now_ns(ctx);
	path_sel_update(&v->s, v->psn, v->t);
	v->scheme = sdr_ep_scheme(c->ep, &changing);
	ctl_auto_params(ctx, c, &v->p, &used);
}

/* Carry out decision @p dec of connection @p i (a move is an engine job) and keep it for
 * sdrctl path show. */
static void
record(struct dp_ctx *ctx, unsigned int i, uint64_t now, struct view *v,
       struct path_sel_decision *dec)
{
	struct dp_conn *c = &ctx->conns[i];
	struct dp_paths *d = &c->pathd;
	struct path_sel *s = &v->s;

	if (dec->verdict == PATH_SEL_MOVE || dec->verdict == PATH_SEL_PROBE) {
		struct ctl_job j = { .fn = move_job, .conn = i, .engine = c->engine, .p = c->ep,
				     .q = dec->want };
		const struct path_sel *live = sdr_ep_paths(c->ep);
		int rc = ctl_engine_call(ctx, &j);

		if (rc == 0) {
			struct dp_paths_rec *r;

			rte_spinlock_lock(&d->lock);
			r = &d->hist[d->moves++ % DP_PATHS_HIST];
			r->t_ns = now - ctx->ctl->start_ns;
			r->from_mask = dec->cur_mask;
			r->to_mask = dec->use_mask;
			snprintf(r->why, sizeof(r->why), "%s", dec->why);
			rte_spinlock_unlock(&d->lock);
		} else {
			/* (some QPNs may have moved: a port that reaches no path, a rebuilt conn) */
			size_t n = strlen(dec->why);

			snprintf(dec->why + n, sizeof(dec->why) - n, "; not carried out: %s",
				 strerror(-rc));
		}
		for (unsigned int k = 0; k < s->cfg.npaths; k++) {	/* where they are now */
			s->path[k].nqp = 0;
			for (unsigned int q = 0; rc != -ESTALE && q < s->cfg.nqp; q++)
				s->path[k].nqp += live->qp[q].path == k;
		}
	}
	rte_spinlock_lock(&d->lock);
	for (unsigned int k = 0; k < s->cfg.npaths; k++)	/* the load since the last look */
		d->fps[k] = d->prev_ns && v->t > d->prev_ns ?
			    (double)(s->path[k].frames - d->path[k].frames) * 1e9 /
			    (double)(v->t - d->prev_ns) : 0;
	d->prev_ns = v->t;
	memcpy(d->path, s->path, sizeof(d->path));
	d->last = *dec;
	d->decisions++;
	rte_spinlock_unlock(&d->lock);
}

/* Connection @p i decides alone (objective own, or no other connection decides with it). */
static void
decide(struct dp_ctx *ctx, unsigned int i, uint64_t now)
{
	static struct path_sel_decision dec;
	struct view *v = &views[0];

	take_view(ctx, i, v);
	others_load(ctx, i, &v->s);
	path_sel_decide(&v->s, &v->p, &v->scheme, &dec);
	record(ctx, i, now, v, &dec);
}

/* Whether connections @p a and @p b decide together: the same objective, sum or max, the
 * same port, number of paths and path_rate (> 0). */
static int
joint_with(const struct dp_ctx *ctx, unsigned int a, unsigned int b)
{
	const struct dp_conn *ca = &ctx->conns[a], *cb = &ctx->conns[b];
	const struct path_sel *sa, *sb;

	if (ca->ep == NULL || cb->ep == NULL || ca->port != cb->port ||
	    (sa = sdr_ep_paths(ca->ep)) == NULL || (sb = sdr_ep_paths(cb->ep)) == NULL)
		return 0;
	return sa->cfg.objective != PATH_OBJECTIVE_OWN && sa->cfg.objective == sb->cfg.objective &&
	       sa->cfg.npaths == sb->cfg.npaths && sa->cfg.path_rate_bps > 0 &&
	       sa->cfg.path_rate_bps == sb->cfg.path_rate_bps;
}

/*
 * Connection @p i is due and decides with the others that share its paths (joint_with(),
 * at most PATH_SEL_JOINT_MAX): all decide now, together (path_sel_decide_joint()). Each
 * one's own record, and its next decision a period from now. @return 0, or -1 when it
 * decides alone (no other, or the joint decision refused them).
 */
static int
decide_joint(struct dp_ctx *ctx, unsigned int i, uint64_t now)
{
	static struct path_sel_member m[PATH_SEL_JOINT_MAX];
	unsigned int who[PATH_SEL_JOINT_MAX], n = 0;
	double outside[PATH_SEL_MAX_PATHS];

	for (unsigned int k = 0; k < ctx->nconns && n < PATH_SEL_JOINT_MAX; k++)
		if (k == i || joint_with(ctx, i, k))
			who[n++] = k;
	if (n < 2)
		return -1;
	port_load(ctx, i, who, n, outside);	/* the port's connections not in it */
	for (unsigned int k = 0; k < n; k++) {
		const struct dp_conn *c = &ctx->conns[who[k]];

		take_view(ctx, who[k], &views[k]);
		m[k] = (struct path_sel_member){ .s = &views[k].s, .p = &views[k].p,
						 .scheme = &views[k].scheme,
						 .rate_bps = c->cfg->ep.rel.rate_bps };
		/* (a connection that decides alone in there sees the others' load) */
		others_load(ctx, who[k], &views[k].s);
	}
	if (path_sel_decide_joint(m, n, outside) < 0)
		return -1;
	for (unsigned int k = 0; k < n; k++) {
		struct dp_conn *c = &ctx->conns[who[k]];

		fresh(ctx, who[k]);
		if (who[k] != i)
			c->pathd.next_ns = now + c->cfg->path_period_ns;
		record(ctx, who[k], now, &views[k], &m[k].d);
	}
	return 0;
}

void
ctl_paths_sweep(struct dp_ctx *ctx, uint64_t now)
{
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].ep != NULL && sdr_ep_paths(ctx->conns[i].ep) != NULL &&
		    due(ctx, i, now) && decide_joint(ctx, i, now) != 0)
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
	if (d->epoch == c->epoch) {
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
