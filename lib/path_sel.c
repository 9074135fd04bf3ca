/* SPDX-License-Identifier: BSD-3-Clause */
/* Paths: placement of data QPNs, what the sender learns of each path, the decision. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_sel.h"
#include "psn_loss.h"

#define PSN_MASK 0xFFFFFFu

static const char *const policy_names[] = { "hash", "spray", "optimise" };

const char *
path_policy_name(enum path_policy p)
{
	return (unsigned int)p < 3 ? policy_names[p] : NULL;
}

int
path_policy_parse(const char *name, enum path_policy *out)
{
	for (unsigned int i = 0; i < 3; i++)
		if (strcmp(name, policy_names[i]) == 0) {
			*out = (enum path_policy)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const objective_names[] = { "sum", "own", "max" };
#define NOBJECTIVES (sizeof(objective_names) / sizeof(objective_names[0]))

const char *
path_objective_name(enum path_objective o)
{
	return (unsigned int)o < NOBJECTIVES ? objective_names[o] : NULL;
}

int
path_objective_parse(const char *name, enum path_objective *out)
{
	for (unsigned int i = 0; i < NOBJECTIVES; i++)
		if (strcmp(name, objective_names[i]) == 0) {
			*out = (enum path_objective)i;
			return 0;
		}
	return -EINVAL;
}

const char *
path_sel_verdict_name(enum path_sel_verdict v)
{
	switch (v) {
	case PATH_SEL_MOVE: return "move";
	case PATH_SEL_KEEP_POLICY: return "keep: policy";
	case PATH_SEL_KEEP_BEST: return "keep: best";
	case PATH_SEL_KEEP_MARGIN: return "keep: margin";
	case PATH_SEL_KEEP_MODEL: return "keep: model";
	case PATH_SEL_KEEP_NONE: return "keep: every path failed";
	case PATH_SEL_PROBE: return "probe";
	}
	return "?";
}

void
path_sel_cfg_default(struct path_sel_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->npaths = 1;
	c->channels = 1;
	c->nqp = 1;
	c->policy = PATH_POLICY_OPTIMISE;
	c->hysteresis = 0.1;
	c->fail_ns = 100000000ull;
	c->probe_ns = 10000000000ull;
}

int
path_sel_init(struct path_sel *s, const struct path_sel_cfg *cfg)
{
	struct sdr_auto_cfg ac;

	memset(s, 0, sizeof(*s));
	if (cfg->npaths == 0 || cfg->npaths > PATH_SEL_MAX_PATHS || cfg->channels == 0 ||
	    cfg->nqp == 0 || cfg->nqp > PATH_SEL_MAX_QPS || cfg->nqp % cfg->channels != 0 ||
	    (cfg->policy != PATH_POLICY_HASH && cfg->npaths > cfg->channels) ||
	    path_policy_name(cfg->policy) == NULL || !(cfg->hysteresis >= 0) ||
	    !(cfg->path_rate_bps >= 0) || cfg->fail_ns == 0)
		return -EINVAL;
	s->cfg = *cfg;
	s->qp = calloc(cfg->nqp, sizeof(*s->qp));
	s->sent = calloc((size_t)cfg->nqp * PATH_SEL_SENT_RING, sizeof(*s->sent));
	if (s->qp == NULL || s->sent == NULL) {
		path_sel_free(s);
		return -ENOMEM;
	}
	sdr_auto_cfg_default(&ac);
	ac.halflife_pkts = 65536;	/* a path's changes matter sooner than a scheme's */
	for (unsigned int p = 0; p < cfg->npaths; p++) {
		sdr_auto_init(&s->path[p].est, &ac);
		path_est_init(&s->path[p].rtt, 0);
	}
	s->path[0].nqp = cfg->nqp;
	return 0;
}

void
path_sel_free(struct path_sel *s)
{
	free(s->qp);
	free(s->sent);
	s->qp = NULL;
	s->sent = NULL;
}

unsigned int
path_sel_spray(const struct path_sel_cfg *c, unsigned int ch)
{
	return ch % c->npaths;
}

void
path_sel_place(struct path_sel *s, unsigned int q, unsigned int path, uint32_t psn, uint64_t now)
{
	struct path_sel_qp *e;

	if (q >= s->cfg.nqp || path >= s->cfg.npaths)
		return;
	e = &s->qp[q];
	s->path[e->path].nqp--;	/* every QPN is on a path, path 0 at first */
	if (e->moved_ns != 0)		/* (placed before: its frames since the last look) */
		s->path[e->path].frames += (psn - e->psn_seen) & PSN_MASK;
	*e = (struct path_sel_qp){ .path = (uint8_t)path, .psn_at_move = psn & PSN_MASK,
				   .placed_psn = psn & PSN_MASK,
				   .psn_seen = psn & PSN_MASK, .moved_ns = now ? now : 1,
				   .psn_sent_seen = psn & PSN_MASK,
				   .settling = 1,
				   .settle_psn = (psn + PSN_LOSS_WINDOW) & PSN_MASK };
	/* round trips from here on are the new path's */
	memset(s->sent + (size_t)q * PATH_SEL_SENT_RING, 0, PATH_SEL_SENT_RING * sizeof(*s->sent));
	s->path[path].nqp++;
	if (s->path[path].failed)	/* a probe: is it repaired? */
		s->path[path].probed_ns = now ? now : 1;
}

/* How far apart a QPN's kept frames are at first: 1/16 of the configured rtt, so that the
 * ring of 32 reaches back two of them. */
static uint64_t
sent_gap(const struct path_sel *s)
{
	return (s->cfg.rtt_ns ? s->cfg.rtt_ns : 1000000) / 16;
}

/* PSN @p hi of QPN @p q arrived @p hold_ns before a report we have at @p now: a round trip
 * from the newest kept frame at or below it (built no later than it). */
static void
rtt_sample(struct path_sel *s, unsigned int q, uint32_t hi, uint64_t hold_ns, uint64_t now)
{
	const struct path_sel_sent *r = s->sent + (size_t)q * PATH_SEL_SENT_RING, *best = NULL;
	struct path_sel_qp *e = &s->qp[q];
	unsigned int kept = 0;
	uint32_t dist = 0;

	for (unsigned int k = 0; k < PATH_SEL_SENT_RING; k++) {
		uint32_t d = (hi - r[k].psn) & PSN_MASK;	/* how far below hi */

		kept += r[k].ns != 0;
		if (r[k].ns != 0 && d < 0x800000u && (best == NULL || d < dist)) {
			best = &r[k];
			dist = d;
		}
	}
	/*
	 * Every kept frame is newer than hi: the ring reaches back less than this path's
	 * round trip (a path longer than twice the configured rtt). Keep them further apart.
	 */
	if (best == NULL && kept == PATH_SEL_SENT_RING && e->gap_ns < PATH_SEL_GAP_MAX_NS)
		e->gap_ns = 2 * (e->gap_ns ? e->gap_ns : sent_gap(s));
	if (best != NULL && now > best->ns + hold_ns)
		path_est_rtt(&s->path[s->qp[q].path].rtt, now - best->ns - hold_ns, now);
}

void
path_sel_report(struct path_sel *s, unsigned int q, int seen, uint32_t hi, uint64_t hold_ns,
		uint16_t pkts, uint16_t lost, uint32_t psn, uint64_t now)
{
	uint32_t ref, ahead, sent;
	struct path_sel_qp *e;

	if (q >= s->cfg.nqp)
		return;
	e = &s->qp[q];
	s->reports++;
	/*
	 * Its highest PSN moved, to a frame sent since it was placed (or since the last that
	 * moved it: a QPN that sends 2^23 frames on one path stays comparable) and not beyond
	 * the last we sent: it is alive there. A PSN never sent moves nothing, and times
	 * nothing (it would pick the newest kept frame, a round trip of a burst's length).
	 */
	ref = e->have_hi ? e->peer_hi : e->placed_psn;
	ahead = (hi - ref) & PSN_MASK;
	sent = (psn - ref) & PSN_MASK;
	if (seen && ((psn - 1 - hi) & PSN_MASK) < 0x800000u)
		rtt_sample(s, q, hi & PSN_MASK, hold_ns, now);
	if (seen && ahead < sent && ahead < 0x800000u && (ahead != 0 || !e->have_hi)) {
		e->have_hi = 1;
		e->peer_hi = hi & PSN_MASK;
		e->moved_ns = now ? now : 1;
		e->psn_at_move = psn & PSN_MASK;
		e->sent_ns = 0;
	}
	if (e->settling && seen && ((hi - e->settle_psn) & PSN_MASK) < 0x800000u)
		e->settling = 0;	/* this report's counts are the baseline */
	else if (!e->settling && e->have_base) {
		uint16_t dp = (uint16_t)(pkts - e->peer_pkts), dl = (uint16_t)(lost - e->peer_lost);

		if (dl > dp || dp > 0x8000u) {
			s->reports_bad++;
		} else if (dp) {
			sdr_auto_observe(&s->path[e->path].est, dp, dl);
			s->path[e->path].reported += dp;
		}
	}
	e->have_base = !e->settling;
	e->peer_pkts = pkts;
	e->peer_lost = lost;
}

void
path_sel_peer_restart(struct path_sel *s)
{
	for (unsigned int q = 0; q < s->cfg.nqp; q++)
		s->qp[q].have_base = 0;
}

void
path_sel_sent(struct path_sel *s, const uint32_t *psn, uint64_t now)
{
	uint64_t gap = sent_gap(s);

	for (unsigned int q = 0; q < s->cfg.nqp; q++) {
		struct path_sel_qp *e = &s->qp[q];
		uint32_t cur = psn[q] & PSN_MASK;

		struct path_sel_sent *r = s->sent + (size_t)q * PATH_SEL_SENT_RING;

		if (cur == e->psn_sent_seen)
			continue;
		e->psn_sent_seen = cur;
		if (e->sent_last_ns != 0 && now - e->sent_last_ns < (e->gap_ns ? e->gap_ns : gap))
			continue;
		r[e->sent_head] = (struct path_sel_sent){ .psn = (cur - 1) & PSN_MASK,
							  .ns = now ? now : 1 };
		e->sent_head = (uint8_t)((e->sent_head + 1) % PATH_SEL_SENT_RING);
		e->sent_last_ns = now ? now : 1;
	}
}

void
path_sel_update(struct path_sel *s, const uint32_t *psn, uint64_t now)
{
	unsigned int stalled[PATH_SEL_MAX_PATHS] = { 0 }, alive[PATH_SEL_MAX_PATHS] = { 0 };

	s->now = now;

	for (unsigned int q = 0; q < s->cfg.nqp; q++) {
		struct path_sel_qp *e = &s->qp[q];
		uint32_t cur = psn[q] & PSN_MASK;

		s->path[e->path].frames += (cur - e->psn_seen) & PSN_MASK;
		e->psn_seen = cur;
		if (cur != e->psn_at_move && e->sent_ns == 0)
			e->sent_ns = now ? now : 1;
		if (e->sent_ns != 0 && now > e->sent_ns && now - e->sent_ns > s->cfg.fail_ns)
			stalled[e->path]++;
		else if (e->have_hi && now >= e->moved_ns && now - e->moved_ns <= s->cfg.fail_ns)
			alive[e->path]++;
	}
	for (unsigned int p = 0; p < s->cfg.npaths; p++) {
		struct path_sel_path *pp = &s->path[p];

		uint64_t m = pp->rtt.rtt_samples >= PATH_SEL_MIN_RTT_SAMPLES ?
			     path_est_min_rtt(&pp->rtt, now) : 0;

		/* a path timed once keeps its last round trip while it carries nothing to
		 * time (its samples expire): a long path the decisions left is still long */
		if (m != 0)
			pp->rtt_min_ns = m;
	}
	for (unsigned int p = 0; p < s->cfg.npaths; p++) {
		struct path_sel_path *pp = &s->path[p];
		/* (a peer that never reported — not set up for paths — fails no path); a path
		 * neither stalled nor alive (no QPN there, or a probe not judged yet) keeps what
		 * was last known of it */
		if (stalled[p] > 0 && alive[p] == 0 && s->reports > 0) {
			if (!pp->failed)
				pp->failed_since_ns = now;
			pp->failed = 1;
		} else if (alive[p] > 0) {
			pp->failed = 0;
		}
	}
}

/* What path @p i can carry for this connection: what others leave of it, or path_rate
 * (0: unlimited); nothing left counts as 1 Mbit/s, so the model still ranks it (last). */
static double
cap_of(const struct path_sel *s, unsigned int i)
{
	if (!s->have_avail)
		return s->cfg.path_rate_bps;
	return s->avail_bps[i] > 1e6 ? s->avail_bps[i] : 1e6;
}

/* cap_of(), or (@p avail given: a joint decision's combination) what @p avail leaves */
static double
cap_in(const struct path_sel *s, const double *avail, unsigned int i)
{
	if (avail == NULL)
		return cap_of(s, i);
	return avail[i] > 1e6 ? avail[i] : 1e6;
}

/* The RTT a decision takes for path @p i: its own once timed enough, else the base's. */
static double
rtt_of(const struct path_sel *s, unsigned int i, double base)
{
	return s->path[i].rtt_min_ns ? (double)s->path[i].rtt_min_ns * 1e-9 : base;
}

/* Whether path @p a is a better candidate than @p b: less loss; then more capacity left
 * for this connection (others' load taken off: full paths last); then shorter; then the
 * lower number. */
static int
before(const struct path_sel *s, const double *loss, unsigned int a, unsigned int b)
{
	double ca = cap_of(s, a), cb = cap_of(s, b);
	/* (a path not timed yet counts at the connection's rtt, as the model takes it) */
	double ra = rtt_of(s, a, (double)s->cfg.rtt_ns * 1e-9);
	double rb = rtt_of(s, b, (double)s->cfg.rtt_ns * 1e-9);

	if (loss[a] != loss[b])
		return loss[a] < loss[b];
	if (s->have_avail && (ca <= 1e6) != (cb <= 1e6))
		return cb <= 1e6;
	if (ra != rb)
		return ra < rb;
	return a < b;
}

/* Modelled mean time with a share of the channels on each path (shares sum to 1), each
 * path's capacity cap_in(@p avail). */
static double
modelled(const struct path_sel *s, const double *avail, const struct sdr_model_params *base,
	 const struct sdr_scheme *scheme, const double *share, const double *loss)
{
	struct sdr_model_params p = *base;
	struct sdr_model_choice ch;
	double drop = 0, bw = base->bandwidth_bps, rtt = 0, rto = base->rtt_s * (1 + base->alpha);

	for (unsigned int i = 0; i < s->cfg.npaths; i++) {
		double r = rtt_of(s, i, base->rtt_s), cap = cap_in(s, avail, i);

		if (share[i] <= 0)
			continue;
		drop += share[i] * loss[i];
		if (cap > 0 && cap / share[i] < bw)	/* the path that fills first */
			bw = cap / share[i];
		if (r > rtt)	/* a message waits for its chunks on the longest path */
			rtt = r;
	}
	if (rtt > 0) {		/* the timers stay what they are: RTO, the receiver's slack */
		double slack = (isnan(base->beta) ? base->alpha / 2 : base->beta) * base->rtt_s;

		p.rtt_s = rtt;
		p.alpha = rto / rtt - 1 > 0 ? rto / rtt - 1 : 0;
		p.beta = slack / rtt;
	}
	p.drop = drop;
	p.drop_unit = SDR_MODEL_DROP_PACKET;
	p.bandwidth_bps = bw;
	p.candidates = NULL;
	p.n_candidates = 0;
	if (sdr_model_eval(&p, scheme, &ch) != 0 || !isfinite(ch.mean_s))
		return INFINITY;
	return ch.mean_s;
}

/* The placement of d->use_mask that moves the fewest channels: even shares, the extra
 * channels to the paths that hold the most already. */
static void
place(const struct path_sel *s, struct path_sel_decision *d)
{
	unsigned int nch = s->cfg.channels, n = (unsigned int)__builtin_popcount(d->use_mask);
	unsigned int have[PATH_SEL_MAX_PATHS] = { 0 }, quota[PATH_SEL_MAX_PATHS] = { 0 };
	unsigned int extra = nch % n, order[PATH_SEL_MAX_PATHS], no = 0;
	uint8_t chp[PATH_SEL_MAX_QPS];
	int8_t kept[PATH_SEL_MAX_QPS];

	for (unsigned int c = 0; c < nch; c++)
		if (d->use_mask >> s->qp[c].path & 1)
			have[s->qp[c].path]++;
	for (unsigned int p = 0; p < s->cfg.npaths; p++)
		if (d->use_mask >> p & 1) {
			unsigned int i = no++;

			while (i > 0 && have[order[i - 1]] < have[p]) {
				order[i] = order[i - 1];
				i--;
			}
			order[i] = p;
		}
	for (unsigned int i = 0; i < no; i++)
		quota[order[i]] = nch / n + (i < extra);
	for (unsigned int c = 0; c < nch; c++) {
		unsigned int p = s->qp[c].path;

		kept[c] = (d->use_mask >> p & 1) && quota[p] > 0;
		if (kept[c]) {
			quota[p]--;
			chp[c] = (uint8_t)p;
		}
	}
	d->moved = 0;
	for (unsigned int c = 0, i = 0; c < nch; c++) {
		if (kept[c])
			continue;
		while (quota[order[i]] == 0)
			i++;
		quota[order[i]]--;
		chp[c] = (uint8_t)order[i];
		d->moved++;
	}
	for (unsigned int q = 0; q < s->cfg.nqp; q++)
		d->want[q] = chp[q % nch];
}

/*
 * A failed path with no channel, probe_ns after it failed or was last probed, while another
 * path has two channels or more: one of them (of the path with the most) goes there.
 * @return 1 with d filled (PATH_SEL_PROBE), 0 for none due.
 */
static int
probe(const struct path_sel *s, struct path_sel_decision *d)
{
	unsigned int nch = s->cfg.channels, have[PATH_SEL_MAX_PATHS] = { 0 }, from = 0;
	char f[32];

	if (s->cfg.probe_ns == 0)
		return 0;
	for (unsigned int c = 0; c < nch; c++)
		have[s->qp[c].path]++;
	for (unsigned int p = 0; p < s->cfg.npaths && p < PATH_SEL_MAX_PATHS; p++)
		if (have[p] > have[from])
			from = p;
	if (have[from] < 2)
		return 0;
	for (unsigned int p = 0; p < s->cfg.npaths && p < PATH_SEL_MAX_PATHS; p++) {
		const struct path_sel_path *pp = &s->path[p];
		uint64_t since = pp->probed_ns > pp->failed_since_ns ? pp->probed_ns :
				 pp->failed_since_ns;
		unsigned int moved = 0;

		if (!pp->failed || have[p] != 0 || s->now < since + s->cfg.probe_ns)
			continue;
		for (unsigned int q = 0; q < s->cfg.nqp; q++)
			d->want[q] = s->qp[q % nch].path;
		for (unsigned int c = nch; c-- > 0 && !moved;)	/* the last channel of it */
			if (s->qp[c].path == from) {
				for (unsigned int q = c; q < s->cfg.nqp; q += nch)
					d->want[q] = (uint8_t)p;
				moved = 1;
			}
		d->verdict = PATH_SEL_PROBE;
		d->moved = 1;
		d->use_mask = d->cur_mask | 1u << p;
		path_sel_mask_str(1u << p, f, sizeof(f));
		snprintf(d->why, sizeof(d->why), "probe: a channel to path %s (failed %.1f s ago): "
			 "is it repaired?", f, (double)(s->now - pp->failed_since_ns) * 1e-9);
		return 1;
	}
	return 0;
}

/*
 * The loss the model is given per path: its estimate, except that the paths that cannot be
 * told apart from the least lossy working one (their 95 % intervals overlap its) all get
 * their pooled rate, so noise between equally good paths never decides a move.
 */
static void
pool_estimates(const struct path_sel *s, double *loss)
{
	struct sdr_auto_estimate e[PATH_SEL_MAX_PATHS];
	double lost = 0, pkts = 0;
	int b = -1;

	for (unsigned int i = 0; i < s->cfg.npaths; i++) {
		sdr_auto_estimate(&s->path[i].est, &e[i]);
		loss[i] = e[i].p;
		if (!s->path[i].failed && (b < 0 || e[i].p < e[b].p))
			b = (int)i;
	}
	if (b < 0)
		return;
	for (unsigned int i = 0; i < s->cfg.npaths; i++)
		if (!s->path[i].failed && e[i].lo <= e[b].hi && e[b].lo <= e[i].hi) {
			lost += e[i].lost;
			pkts += e[i].pkts;
		}
	for (unsigned int i = 0; i < s->cfg.npaths; i++)
		if (!s->path[i].failed && e[i].lo <= e[b].hi && e[b].lo <= e[i].hi)
			loss[i] = pkts > 0 ? lost / pkts : 0;
}

void
path_sel_mask_str(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int p = 0; p < PATH_SEL_MAX_PATHS && n < len; p++)
		if (mask >> p & 1)
			n += (size_t)snprintf(buf + n, len - n, "%s%u", n ? "," : "", p + 1);
	if (n == 0)
		snprintf(buf, len, "none");
}

/* What a decision starts from: the estimates (d->loss), the current placement (d->cur_mask,
 * @p share), whether it uses a failed path or is uneven, the working paths best first. */
struct survey {
	double share[PATH_SEL_MAX_PATHS];
	unsigned int ok[PATH_SEL_MAX_PATHS], nok;
	int cur_failed, even;
};

static void
survey(const struct path_sel *s, struct path_sel_decision *d, struct survey *v)
{
	unsigned int lo = ~0u, hi = 0;

	memset(d, 0, sizeof(*d));
	memset(v, 0, sizeof(*v));
	pool_estimates(s, d->loss);
	for (unsigned int i = 0; i < s->cfg.npaths; i++) {
		if (s->path[i].nqp > 0) {
			d->cur_mask |= 1u << i;
			v->share[i] = (double)s->path[i].nqp / s->cfg.nqp;
			/* (a probe there has fail_ns to show it works again) */
			v->cur_failed |= s->path[i].failed &&
					 !(s->path[i].probed_ns > s->path[i].failed_since_ns &&
					   s->now < s->path[i].probed_ns + s->cfg.fail_ns);
			lo = s->path[i].nqp < lo ? s->path[i].nqp : lo;
			hi = s->path[i].nqp > hi ? s->path[i].nqp : hi;
		}
		if (!s->path[i].failed) {	/* best first (before()) */
			unsigned int j = v->nok++;

			while (j > 0 && before(s, d->loss, i, v->ok[j - 1])) {
				v->ok[j] = v->ok[j - 1];
				j--;
			}
			v->ok[j] = i;
		}
	}
	/* an even spread differs by at most one channel, in QPNs: one per generation */
	v->even = hi - lo <= s->cfg.nqp / s->cfg.channels;
}

enum path_sel_verdict
path_sel_decide(const struct path_sel *s, const struct sdr_model_params *p,
		const struct sdr_scheme *scheme, struct path_sel_decision *d)
{
	unsigned int best_k = 0, nok, *ok;
	double t[PATH_SEL_MAX_PATHS + 1], best = INFINITY;
	int cur_failed, even;
	struct survey v;
	char u[32], c[32];

	survey(s, d, &v);
	ok = v.ok;
	nok = v.nok;
	cur_failed = v.cur_failed;
	even = v.even;
	d->cur_s = modelled(s, NULL, p, scheme, v.share, d->loss);
	if (s->cfg.policy != PATH_POLICY_OPTIMISE) {
		d->verdict = PATH_SEL_KEEP_POLICY;
		d->use_mask = d->cur_mask;
		snprintf(d->why, sizeof(d->why), "policy %s: the channels stay where they are",
			 path_policy_name(s->cfg.policy));
		return d->verdict;
	}
	if (probe(s, d))
		return d->verdict;
	if (nok == 0) {
		d->verdict = PATH_SEL_KEEP_NONE;
		d->use_mask = d->cur_mask;
		snprintf(d->why, sizeof(d->why), "every path failed: the channels stay");
		return d->verdict;
	}
	for (unsigned int k = 1; k <= nok; k++) {
		double sh[PATH_SEL_MAX_PATHS] = { 0 };

		for (unsigned int i = 0; i < k; i++)
			sh[ok[i]] = 1.0 / k;
		t[k] = modelled(s, NULL, p, scheme, sh, d->loss);
		if (t[k] < best)
			best = t[k];
	}
	if (!isfinite(best)) {
		d->verdict = PATH_SEL_KEEP_MODEL;
		d->use_mask = d->cur_mask;
		snprintf(d->why, sizeof(d->why), "the model cannot evaluate these paths: the "
			 "channels stay");
		return d->verdict;
	}
	for (unsigned int k = 1; k <= nok; k++)	/* the model's own tie rule: 1 % */
		if (t[k] <= best * 1.01)
			best_k = k;
	for (unsigned int i = 0; i < best_k; i++)
		d->use_mask |= 1u << ok[i];
	d->best_s = t[best_k];
	if (!cur_failed && d->use_mask == d->cur_mask && even) {
		d->verdict = PATH_SEL_KEEP_BEST;
		path_sel_mask_str(d->use_mask, u, sizeof(u));
		snprintf(d->why, sizeof(d->why), "keep: the channels are on the best paths "
			 "(%s, %.3f ms modelled)", u, d->best_s * 1e3);
		return d->verdict;
	}
	if (!cur_failed && d->cur_s <= d->best_s * (1 + s->cfg.hysteresis)) {
		d->verdict = PATH_SEL_KEEP_MARGIN;
		path_sel_mask_str(d->use_mask, u, sizeof(u));
		path_sel_mask_str(d->cur_mask, c, sizeof(c));
		snprintf(d->why, sizeof(d->why), "keep: paths %s model %.3f ms, the current %s "
			 "%.3f ms: less than %.0f %% faster", u, d->best_s * 1e3, c, d->cur_s * 1e3,
			 s->cfg.hysteresis * 100);
		return d->verdict;
	}
	place(s, d);
	d->verdict = PATH_SEL_MOVE;
	path_sel_mask_str(d->use_mask, u, sizeof(u));
	path_sel_mask_str(d->cur_mask, c, sizeof(c));
	if (cur_failed) {
		uint32_t fm = 0;
		char f[32];

		for (unsigned int i = 0; i < s->cfg.npaths && i < PATH_SEL_MAX_PATHS; i++)
			fm |= (uint32_t)(s->path[i].failed && s->path[i].nqp > 0) << i;
		path_sel_mask_str(fm, f, sizeof(f));
		snprintf(d->why, sizeof(d->why), "move %u channels: paths %s -> %s (%s failed; "
			 "%.3f ms modelled)", d->moved, c, u, f, d->best_s * 1e3);
	} else {
		snprintf(d->why, sizeof(d->why), "move %u channels: paths %s -> %s (%.3f ms "
			 "modelled against %.3f ms)", d->moved, c, u, d->best_s * 1e3,
			 d->cur_s * 1e3);
	}
	return d->verdict;
}

/* ---- several connections together (path_sel_decide_joint()) ---- */

/* One connection of a joint decision as the search sees it. */
struct jm {
	struct survey v;
	int fixed;			/* decided alone: @share is load, it is not searched */
	double rate;
	double share[PATH_SEL_MAX_PATHS];	/* fixed: its placement after its decision */
	uint32_t cand[2 * PATH_SEL_MAX_PATHS];
	unsigned int ncand;
};

/* Member @p c's share of path @p i under set @p mask (0: where its channels are now). */
static double
share_in(const struct jm *j, uint32_t mask, unsigned int i)
{
	if (j->fixed)
		return j->share[i];
	if (mask == 0)
		return j->v.share[i];
	return mask >> i & 1 ? 1.0 / __builtin_popcount(mask) : 0;
}

/*
 * What the joint decision minimises over the times @p t of @p n members, those with
 * @p only set (NULL: all): their sum, or for objective max the largest plus a millionth of
 * the sum (placements with exactly the same largest time ranked by the others' times).
 */
static double
joint_score(enum path_objective obj, const double *t, unsigned int n, const int *only)
{
	double sum = 0, most = 0;

	for (unsigned int c = 0; c < n; c++)
		if (only == NULL || only[c]) {
			sum += t[c];
			if (t[c] > most)
				most = t[c];
		}
	return obj == PATH_OBJECTIVE_MAX ? most + 1e-6 * sum : sum;
}

/* The objective (joint_score()) under @p mask (one set each; 0: current), each member's
 * modelled time in @p t. */
static double
joint_sum(const struct path_sel_member *m, const struct jm *j, unsigned int n,
	  const double *outside, const uint32_t *mask, double *t)
{
	unsigned int np = m[0].s->cfg.npaths;
	double cap = m[0].s->cfg.path_rate_bps;

	for (unsigned int c = 0; c < n; c++) {
		double avail[PATH_SEL_MAX_PATHS], share[PATH_SEL_MAX_PATHS] = { 0 };

		for (unsigned int i = 0; i < np; i++) {
			avail[i] = cap - (outside ? outside[i] : 0);
			for (unsigned int o = 0; o < n; o++)
				if (o != c)
					avail[i] -= j[o].rate * share_in(&j[o], mask[o], i);
			if (avail[i] < 0)
				avail[i] = 0;
			share[i] = share_in(&j[c], mask[c], i);
		}
		t[c] = modelled(m[c].s, avail, m[c].p, m[c].scheme, share, m[c].d.loss);
	}
	return joint_score(m[0].s->cfg.objective, t, n, NULL);
}

/* Member @p j's candidate sets of its working paths (j->v.ok, best first): every one up to
 * 4 paths; beyond, the k best and each path alone. */
static void
candidates(struct jm *j, unsigned int npaths)
{
	uint32_t w = 0;

	j->ncand = 0;
	for (unsigned int i = 0; i < j->v.nok; i++)
		w |= 1u << j->v.ok[i];
	if (npaths <= 4) {
		for (uint32_t x = 1; x < 1u << npaths; x++)
			if ((x & w) == x)
				j->cand[j->ncand++] = x;
		return;
	}
	for (unsigned int k = 1, x = 0; k <= j->v.nok; k++) {
		x |= 1u << j->v.ok[k - 1];
		j->cand[j->ncand++] = x;
	}
	for (unsigned int k = 1; k < j->v.nok; k++)
		j->cand[j->ncand++] = 1u << j->v.ok[k];
}

/* How far @p mask is from the member's current placement: paths gained or left. */
static int
distance(const struct path_sel_member *m, uint32_t mask)
{
	return __builtin_popcount(mask ^ m->d.cur_mask);
}

/*
 * The best combination into @p best (one set per free member; fixed ones 0): every one when
 * there are at most PATH_SEL_JOINT_COMBOS, then the tie rule; else coordinate descent from
 * the current sets. @return its sum (INFINITY: the model evaluated none).
 */
static double
joint_search(const struct path_sel_member *m, struct jm *j, unsigned int n,
	     const double *outside, uint32_t *best)
{
	static const double tie = 1.01;
	uint32_t mask[PATH_SEL_JOINT_MAX] = { 0 };
	unsigned int idx[PATH_SEL_JOINT_MAX] = { 0 }, total = 1;
	double t[PATH_SEL_JOINT_MAX], sums[PATH_SEL_JOINT_COMBOS], lo = INFINITY;
	double plain[PATH_SEL_JOINT_COMBOS], lo_plain = INFINITY;
	int found = -1, paths = -1, dist = 0;

	for (unsigned int c = 0; c < n; c++)
		if (!j[c].fixed) {
			total *= j[c].ncand;
			if (total > PATH_SEL_JOINT_COMBOS)
				break;
		}
	if (total > PATH_SEL_JOINT_COMBOS) {
		/* descent: each in turn takes the set that lowers the sum most, until none does */
		for (unsigned int c = 0; c < n; c++)
			if (!j[c].fixed) {
				mask[c] = j[c].cand[j[c].ncand - 1];
				for (unsigned int k = 0; k < j[c].ncand; k++)
					if (j[c].cand[k] == m[c].d.cur_mask)
						mask[c] = j[c].cand[k];
			}
		lo = joint_sum(m, j, n, outside, mask, t);
		for (int round = 0, moved = 1; round < 8 && moved; round++) {
			moved = 0;
			for (unsigned int c = 0; c < n; c++) {
				uint32_t keep = mask[c];

				for (unsigned int k = 0; k < j[c].ncand && !j[c].fixed; k++) {
					double x;

					mask[c] = j[c].cand[k];
					x = joint_sum(m, j, n, outside, mask, t);
					if (x < lo * (1 - 1e-9)) {
						lo = x;
						keep = mask[c];
						moved = 1;
					}
				}
				mask[c] = keep;
			}
		}
		memcpy(best, mask, n * sizeof(*mask));
		return lo;
	}
	/* every combination, an odometer over the free members' candidates */
	for (unsigned int x = 0; x < total; x++) {
		unsigned int r = x;

		for (unsigned int c = 0; c < n; c++)
			if (!j[c].fixed) {
				idx[c] = r % j[c].ncand;
				r /= j[c].ncand;
				mask[c] = j[c].cand[idx[c]];
			}
		sums[x] = joint_sum(m, j, n, outside, mask, t);
		plain[x] = joint_score(PATH_OBJECTIVE_SUM, t, n, NULL);
		if (sums[x] < lo)
			lo = sums[x];
	}
	if (!isfinite(lo))
		return lo;
	/* within 1 % of the best; for objective max, of those, within 1 % of their lowest
	 * sum (the others' times count once the largest is as low as it gets) */
	for (unsigned int x = 0; x < total; x++)
		if (sums[x] <= lo * tie && plain[x] < lo_plain)
			lo_plain = plain[x];
	for (unsigned int x = 0; x < total; x++) {	/* of those: most paths, then nearest */
		unsigned int r = x;
		int np = 0, d = 0;

		if (!(sums[x] <= lo * tie) || !(plain[x] <= lo_plain * tie))
			continue;
		for (unsigned int c = 0; c < n; c++)
			if (!j[c].fixed) {
				mask[c] = j[c].cand[r % j[c].ncand];
				r /= j[c].ncand;
				np += __builtin_popcount(mask[c]);
				d += distance(&m[c], mask[c]);
			}
		if (found < 0 || np > paths || (np == paths && d < dist)) {
			found = (int)x;
			paths = np;
			dist = d;
			memcpy(best, mask, n * sizeof(*mask));
		}
	}
	return sums[found];
}

int
path_sel_decide_joint(struct path_sel_member *m, unsigned int n, const double *outside)
{
	struct jm j[PATH_SEL_JOINT_MAX];
	uint32_t best[PATH_SEL_JOINT_MAX] = { 0 }, cur[PATH_SEL_JOINT_MAX] = { 0 };
	double t_cur[PATH_SEL_JOINT_MAX], t_best[PATH_SEL_JOINT_MAX], cur_sum, best_sum;
	double cur_moved = 0, best_moved = 0;
	double hyst = m[0].s->cfg.hysteresis;
	enum path_objective obj = m[0].s->cfg.objective;
	const char *oname = obj == PATH_OBJECTIVE_MAX ? "largest" : "sum";
	int cur_failed = 0, same = 1, moving = 0, changes[PATH_SEL_JOINT_MAX] = { 0 };
	unsigned int nfree = 0;
	char u[32], c2[32];

	if (n < 2 || n > PATH_SEL_JOINT_MAX || m[0].s->cfg.path_rate_bps <= 0 ||
	    obj == PATH_OBJECTIVE_OWN)
		return -EINVAL;
	for (unsigned int c = 1; c < n; c++)
		if (m[c].s->cfg.npaths != m[0].s->cfg.npaths || m[c].s->cfg.objective != obj)
			return -EINVAL;
	for (unsigned int c = 0; c < n; c++) {
		const struct path_sel *s = m[c].s;
		struct path_sel_decision pd;

		survey(s, &m[c].d, &j[c].v);
		j[c].rate = m[c].rate_bps > 0 ? m[c].rate_bps : s->cfg.path_rate_bps;
		j[c].fixed = s->cfg.policy != PATH_POLICY_OPTIMISE || j[c].v.nok == 0 ||
			     probe(s, &pd);
		if (!j[c].fixed) {
			candidates(&j[c], s->cfg.npaths);
			nfree++;
			continue;
		}
		path_sel_decide(s, m[c].p, m[c].scheme, &m[c].d);
		memcpy(j[c].share, j[c].v.share, sizeof(j[c].share));
		if (m[c].d.verdict == PATH_SEL_MOVE || m[c].d.verdict == PATH_SEL_PROBE) {
			moving++;
			memset(j[c].share, 0, sizeof(j[c].share));
			for (unsigned int q = 0; q < s->cfg.nqp; q++)
				j[c].share[m[c].d.want[q]] += 1.0 / s->cfg.nqp;
		}
	}
	if (nfree == 0)
		return moving;
	cur_sum = joint_sum(m, j, n, outside, cur, t_cur);
	best_sum = joint_search(m, j, n, outside, best);
	if (isfinite(best_sum))
		joint_sum(m, j, n, outside, best, t_best);
	/* the gain, against the times of the connections that move or whose time it changes
	 * (so that one connection's gain is not diluted by the others that stay as they are) */
	for (unsigned int c = 0; c < n && isfinite(best_sum); c++)
		changes[c] = (!j[c].fixed && best[c] != m[c].d.cur_mask) ||
			     isinf(t_best[c]) != isinf(t_cur[c]) ||
			     fabs(t_best[c] - t_cur[c]) > 1e-9 * t_cur[c];
	if (isfinite(best_sum)) {
		cur_moved = joint_score(obj, t_cur, n, changes);
		best_moved = joint_score(obj, t_best, n, changes);
	}
	for (unsigned int c = 0; c < n; c++)
		if (!j[c].fixed) {
			cur_failed |= j[c].v.cur_failed;
			same &= best[c] == m[c].d.cur_mask && j[c].v.even;
		}
	for (unsigned int c = 0; c < n; c++) {
		struct path_sel_decision *d = &m[c].d;

		if (j[c].fixed)
			continue;
		d->cur_s = t_cur[c];
		if (!isfinite(best_sum)) {
			d->verdict = PATH_SEL_KEEP_MODEL;
			d->use_mask = d->cur_mask;
			snprintf(d->why, sizeof(d->why), "the model cannot evaluate these paths "
				 "(joint, %u connections): the channels stay", n);
			continue;
		}
		d->use_mask = best[c];
		d->best_s = t_best[c];
		path_sel_mask_str(d->use_mask, u, sizeof(u));
		path_sel_mask_str(d->cur_mask, c2, sizeof(c2));
		if (!cur_failed && same) {
			d->verdict = PATH_SEL_KEEP_BEST;
			snprintf(d->why, sizeof(d->why), "keep: the channels are on the best paths "
				 "(%s; joint, %u connections: %s %.3f ms modelled)", u, n, oname,
				 best_sum * 1e3);
		} else if (!cur_failed && cur_moved <= best_moved * (1 + hyst)) {
			d->verdict = PATH_SEL_KEEP_MARGIN;
			snprintf(d->why, sizeof(d->why), "keep: joint, %u connections: the ones "
				 "that would change model %.3f ms, the %s (these on %s), now %.3f ms: "
				 "less than %.0f %% faster", n, best_moved * 1e3, oname, u,
				 cur_moved * 1e3, hyst * 100);
		} else if (best[c] == d->cur_mask && j[c].v.even && !j[c].v.cur_failed) {
			d->verdict = PATH_SEL_KEEP_BEST;
			snprintf(d->why, sizeof(d->why), "keep: paths %s (joint, %u connections: "
				 "the others move; %s %.3f ms modelled against %.3f ms)", u, n, oname,
				 best_sum * 1e3, cur_sum * 1e3);
		} else {
			place(m[c].s, d);
			d->verdict = PATH_SEL_MOVE;
			moving++;
			snprintf(d->why, sizeof(d->why), "move %u channels: paths %s -> %s (joint, "
				 "%u connections: %s %.3f ms modelled against %.3f ms)", d->moved,
				 c2, u, n, oname, best_sum * 1e3, cur_sum * 1e3);
		}
	}
	return moving;
}
