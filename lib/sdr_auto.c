/* SPDX-License-Identifier: BSD-3-Clause */
/* Online auto: loss estimate and scheme decision (see sdr_auto.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sdr_auto.h"
#include "sdr_rel.h"

#define FAST_SHARE	16.0	/* the fast estimator's half-life: the slow one's / 16 */
#define Z_INTERVAL	1.96	/* the interval shown and decided on: 95 % */
#define Z_CHANGE	3.0	/* the change test: intervals this wide must stop overlapping */

void
sdr_auto_cfg_default(struct sdr_auto_cfg *c)
{
	c->halflife_pkts = 1048576.0;
	c->min_pkts = 20000;
	c->hysteresis = 0.1;
	c->dwell_ns = 2000000000ull;
	c->max_chunk_shift = 0;
}

void
sdr_auto_init(struct sdr_auto *a, const struct sdr_auto_cfg *cfg)
{
	memset(a, 0, sizeof(*a));
	if (cfg != NULL)
		a->cfg = *cfg;
	else
		sdr_auto_cfg_default(&a->cfg);
	if (!(a->cfg.halflife_pkts >= 16.0))
		a->cfg.halflife_pkts = 16.0;
}

void
sdr_auto_wilson(double lost, double pkts, double z, double *lo, double *hi)
{
	double p, z2 = z * z, den, mid, half;

	if (!(pkts > 0)) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = lost / pkts;
	den = 1 + z2 / pkts;
	mid = (p + z2 / (2 * pkts)) / den;
	half = z * sqrt(p * (1 - p) / pkts + z2 / (4 * pkts * pkts)) / den;
	*lo = mid - half > 0 ? mid - half : 0;
	*hi = mid + half < 1 ? mid + half : 1;
	if (lost <= 0)
		*lo = 0;
}

static void
add(struct sdr_auto_counts *c, double halflife, uint64_t pkts, uint64_t lost)
{
	double f = exp2(-(double)pkts / halflife);

	c->pkts = c->pkts * f + (double)pkts;
	c->lost = c->lost * f + (double)lost;
}

void
sdr_auto_message(struct sdr_auto *a, uint64_t len)
{
	a->msg_bytes = a->msg_bytes > 0 ? a->msg_bytes + ((double)len - a->msg_bytes) / 16 :
		       (double)len;
}

void
sdr_auto_observe(struct sdr_auto *a, uint64_t pkts, uint64_t lost)
{
	double slo, shi, flo, fhi;

	if (pkts == 0)
		return;
	if (lost > pkts)
		lost = pkts;	/* a sample is never more lost than sent */
	a->total_pkts += pkts;
	a->total_lost += lost;
	add(&a->slow, a->cfg.halflife_pkts, pkts, lost);
	add(&a->fast, a->cfg.halflife_pkts / FAST_SHARE, pkts, lost);
	sdr_auto_wilson(a->slow.lost, a->slow.pkts, Z_CHANGE, &slo, &shi);
	sdr_auto_wilson(a->fast.lost, a->fast.pkts, Z_CHANGE, &flo, &fhi);
	if (flo > shi || fhi < slo) {
		/* the recent packets cannot come from the link the slow estimate describes */
		a->slow = a->fast;
		a->link_changes++;
	}
}

void
sdr_auto_estimate(const struct sdr_auto *a, struct sdr_auto_estimate *e)
{
	memset(e, 0, sizeof(*e));
	e->pkts = a->slow.pkts;
	e->lost = a->slow.lost;
	e->p = a->slow.pkts > 0 ? a->slow.lost / a->slow.pkts : 0;
	sdr_auto_wilson(a->slow.lost, a->slow.pkts, Z_INTERVAL, &e->lo, &e->hi);
	e->total_pkts = a->total_pkts;
	e->total_lost = a->total_lost;
	e->changes = a->link_changes;
}

void
sdr_auto_changed(struct sdr_auto *a, uint64_t now)
{
	a->last_switch_ns = now ? now : 1;
}


const char *
sdr_auto_verdict_name(enum sdr_auto_verdict v)
{
	switch (v) {
	case SDR_AUTO_CHANGE: return "change";
	case SDR_AUTO_KEEP_FEW: return "keep: too few packets";
	case SDR_AUTO_KEEP_DWELL: return "keep: changed recently";
	case SDR_AUTO_KEEP_BEST: return "keep: the model's choice";
	case SDR_AUTO_KEEP_MARGIN: return "keep: gain below the hysteresis";
	case SDR_AUTO_KEEP_UNSURE: return "keep: gain not certain";
	case SDR_AUTO_KEEP_MODEL: return "keep: no model here";
	case SDR_AUTO_KEEP_REFUSED: return "keep: the choice was refused";
	}
	return "?";
}

/* The decision's one line (truncated to fit, as a line on a screen is). */
static void __attribute__((format(printf, 2, 3)))
say(struct sdr_auto_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
}

static int
same_scheme(const struct sdr_scheme *a, const struct sdr_scheme *b)
{
	if (a->kind != b->kind || a->chunk_shift != b->chunk_shift)
		return 0;
	return !sdr_scheme_is_ec(a) || (a->k == b->k && a->m == b->m);
}

void
sdr_auto_refused(struct sdr_auto *a, const struct sdr_scheme *s, uint64_t now)
{
	uint32_t shift;

	if (a->refused_until_ns != 0 && same_scheme(&a->refused, s))
		a->refusals++;
	else
		a->refusals = 1;
	a->refused = *s;
	shift = a->refusals - 1 < 4 ? a->refusals - 1 : 4;
	a->refused_until_ns = now + (a->cfg.dwell_ns << 4 << shift);
}

/* Modelled mean of @p s at loss @p drop; NAN when the model cannot say. */
static double
mean_at(const struct sdr_model_params *base, const struct sdr_scheme *s, double drop)
{
	struct sdr_model_params p = *base;
	struct sdr_model_choice c;

	p.drop = drop;
	p.drop_unit = SDR_MODEL_DROP_PACKET;
	p.chunk_bytes = base->chunk_bytes >> s->chunk_shift;
	return sdr_model_eval(&p, s, &c) == 0 ? c.mean_s : NAN;
}

/* "1.2e-04 [8.0e-05, 1.9e-04] in 52000 packets", or the zero-loss form. */
static void
format_est(const struct sdr_auto_estimate *e, char *buf, size_t len)
{
	if (e->lost <= 0)
		snprintf(buf, len, "no loss in %.0f packets (loss < %.1e)", e->pkts, e->hi);
	else
		snprintf(buf, len, "loss %.1e [%.1e, %.1e] in %.0f packets", e->p, e->lo, e->hi,
			 e->pkts);
}

int
sdr_auto_best(const struct sdr_model_params *p, uint32_t max_chunk_shift,
	      struct sdr_model_choice *best)
{
	struct sdr_model_choice ch[SDR_MODEL_MAX_CANDIDATES];
	int n = 0;

	/*
	 * The best of every chunk allowed: the configured one, then halves of it, while a chunk
	 * stays a whole number of packets. A smaller chunk must be more than 1 % faster, or as
	 * fast with less parity (the model's own tie rule): the same time and parity with fewer
	 * chunks costs less per byte.
	 */
	memset(best, 0, sizeof(*best));
	for (uint32_t shift = 0; shift <= max_chunk_shift; shift++) {
		struct sdr_model_params q = *p;
		int got;

		q.chunk_bytes = p->chunk_bytes >> shift;
		if (shift > 0 && (q.mtu_bytes == 0 || q.chunk_bytes < q.mtu_bytes ||
				  q.chunk_bytes % q.mtu_bytes != 0))
			break;
		got = sdr_model_advise(&q, ch, SDR_MODEL_MAX_CANDIDATES);
		if (got <= 0) {
			if (shift == 0)
				n = got;
			continue;
		}
		ch[0].scheme.chunk_shift = (uint8_t)shift;
		if (n <= 0 || ch[0].mean_s < best->mean_s * 0.99 ||
		    (ch[0].mean_s <= best->mean_s * 1.01 &&
		     sdr_scheme_parity_share(&ch[0].scheme) < sdr_scheme_parity_share(&best->scheme)))
			*best = ch[0];
		n = got;
	}
	return n;
}

enum sdr_auto_verdict
sdr_auto_decide(const struct sdr_auto *a, const struct sdr_model_params *params,
		const struct sdr_scheme *current, uint64_t now, struct sdr_auto_decision *d)
{
	struct sdr_model_choice best;
	char cur[SDR_SCHEME_CHUNK_NAME_MAX], cho[SDR_SCHEME_CHUNK_NAME_MAX], est[96];
	struct sdr_model_params p = *params;
	int n = 0;

	memset(d, 0, sizeof(*d));
	sdr_auto_estimate(a, &d->est);
	d->current = *current;
	d->choice = *current;
	d->current_s = d->choice_s = NAN;
	sdr_scheme_format_chunk(current, (uint32_t)params->chunk_bytes, cur, sizeof(cur));
	format_est(&d->est, est, sizeof(est));
	if (a->total_pkts < a->cfg.min_pkts) {
		d->verdict = SDR_AUTO_KEEP_FEW;
		say(d, "keep %s: %" PRIu64 " of %" PRIu64 " packets seen, "
			 "too few to estimate the loss", cur, a->total_pkts, a->cfg.min_pkts);
		return d->verdict;
	}
	/* with no loss seen, the most loss that is still likely */
	d->p_used = d->est.lost > 0 ? d->est.p : d->est.hi;
	if (a->last_switch_ns && now < a->last_switch_ns + a->cfg.dwell_ns) {
		d->verdict = SDR_AUTO_KEEP_DWELL;
		say(d, "keep %s: changed %.1f s ago (at least %.1f s "
			 "between changes); %s", cur, (double)(now - a->last_switch_ns) * 1e-9,
			 (double)a->cfg.dwell_ns * 1e-9, est);
		return d->verdict;
	}
	p.drop = d->p_used;
	p.drop_unit = SDR_MODEL_DROP_PACKET;
	if (a->msg_bytes >= 1)
		p.msg_bytes = (uint64_t)(a->msg_bytes + 0.5);
	n = sdr_auto_best(&p, a->cfg.max_chunk_shift, &best);
	d->current_s = mean_at(&p, current, d->p_used);
	if (n <= 0 || isnan(d->current_s)) {
		d->verdict = SDR_AUTO_KEEP_MODEL;
		say(d, "keep %s: the model cannot rank schemes here (%s); "
			 "%s", cur, sdr_model_strerror(n <= 0 ? n : -SDR_MODEL_E_BAD_SCHEME), est);
		return d->verdict;
	}
	d->choice = best.scheme;
	d->choice_s = best.mean_s;
	sdr_scheme_format_chunk(&d->choice, (uint32_t)params->chunk_bytes, cho, sizeof(cho));
	if (same_scheme(&d->choice, current)) {
		d->verdict = SDR_AUTO_KEEP_BEST;
		say(d, "keep %s: the model's choice (%.3g ms) at %s", cur,
			 d->current_s * 1e3, est);
		return d->verdict;
	}
	if (a->refused_until_ns > now && same_scheme(&d->choice, &a->refused)) {
		d->verdict = SDR_AUTO_KEEP_REFUSED;
		say(d, "keep %s: %s was refused (%u time%s in a row), not asked again for %.0f s; "
		    "%s", cur, cho, a->refusals, a->refusals == 1 ? "" : "s",
		    (double)(a->refused_until_ns - now) * 1e-9, est);
		return d->verdict;
	}
	/* the model's own tie rule: as fast (within 1 %) with less parity is better */
	if (d->choice_s <= d->current_s * 1.01 &&
	    sdr_scheme_parity_share(&d->choice) < sdr_scheme_parity_share(current)) {
		d->verdict = SDR_AUTO_CHANGE;
		say(d, "change %s -> %s: as fast (%.3g vs %.3g ms) with less parity (%.0f %% vs "
		    "%.0f %%) at %s", cur, cho, d->choice_s * 1e3, d->current_s * 1e3,
		    100 * sdr_scheme_parity_share(&d->choice), 100 * sdr_scheme_parity_share(current),
		    est);
		return d->verdict;
	}
	if (d->choice_s > d->current_s * (1 - a->cfg.hysteresis)) {
		d->verdict = SDR_AUTO_KEEP_MARGIN;
		say(d, "keep %s: %s only %.0f %% faster (%.3g vs %.3g ms, "
			 "needs %.0f %%) at %s", cur, cho,
			 100 * (1 - d->choice_s / d->current_s), d->choice_s * 1e3,
			 d->current_s * 1e3, 100 * a->cfg.hysteresis, est);
		return d->verdict;
	}
	/* the change must pay wherever in its interval the loss really is */
	{
		double ends[2] = { d->est.lo, d->est.hi };

		for (int i = 0; i < 2; i++) {
			double c = mean_at(&p, &d->choice, ends[i]), o = mean_at(&p, current, ends[i]);

			if (isnan(c) || isnan(o) || c >= o) {
				d->verdict = SDR_AUTO_KEEP_UNSURE;
				say(d, "keep %s: %s faster at %.1e but not at "
					 "%.1e, the other end of the interval; %s", cur, cho,
					 d->p_used, ends[i], est);
				return d->verdict;
			}
		}
	}
	d->verdict = SDR_AUTO_CHANGE;
	say(d, "change %s -> %s: %.3g vs %.3g ms (-%.0f %%) at %s", cur,
		 cho, d->choice_s * 1e3, d->current_s * 1e3, 100 * (1 - d->choice_s / d->current_s),
		 est);
	return d->verdict;
}

void
sdr_auto_use_path(struct sdr_model_params *p, const struct path_est *e, int paced, uint64_t rto_ns,
		  int rx_measured, uint64_t now, struct sdr_auto_path *u)
{
	uint64_t rtt_min = path_est_min_rtt(e, now);
	double rate_max = path_est_max_rate(e, now);

	memset(u, 0, sizeof(*u));
	u->paced = paced != 0;
	u->rtt_samples = e->rtt_samples;
	u->rate_samples = e->rate_samples;
	u->rtt_min_s = (double)rtt_min * 1e-9;
	u->rate_max_bps = rate_max;
	u->rto_s = rto_ns ? (double)rto_ns * 1e-9 : p->rtt_s * (1 + p->alpha);
	if (e->rtt_samples) {
		u->srtt_s = e->srtt_ns * 1e-9;
		u->rttvar_s = e->rttvar_ns * 1e-9;
	}
	if (e->rtt_samples >= SDR_AUTO_PATH_MIN_SAMPLES && rtt_min > 0 && p->rtt_s > 0) {
		double rtt = u->rtt_min_s, beta = isnan(p->beta) ? p->alpha / 2 : p->beta;
		double rto = u->rto_s, slack = beta * (rx_measured ? rtt : p->rtt_s);

		p->alpha = rto / rtt > 1 ? rto / rtt - 1 : 0;
		p->beta = slack / rtt;
		p->rtt_s = rtt;
		u->rtt_measured = 1;
	}
	if (!paced && e->rate_samples >= SDR_AUTO_PATH_MIN_SAMPLES && rate_max > 0) {
		p->bandwidth_bps = rate_max;
		u->rate_measured = 1;
	}
	u->rtt_s = p->rtt_s;
	u->bandwidth_bps = p->bandwidth_bps;
}

void
sdr_auto_path_format(const struct sdr_auto_path *u, char *buf, size_t len)
{
	char rtt[96], rate[96];

	if (u->rtt_samples)
		snprintf(rtt, sizeof(rtt), "(smallest %.3g ms, smoothed %.3g +- %.2g ms, %" PRIu64
			 " samples)", u->rtt_min_s * 1e3, u->srtt_s * 1e3, u->rttvar_s * 1e3,
			 u->rtt_samples);
	else
		snprintf(rtt, sizeof(rtt), "(no samples yet)");
	if (u->rate_samples)
		snprintf(rate, sizeof(rate), "(delivered up to %.3g Gbit/s, %" PRIu64 " samples)",
			 u->rate_max_bps * 1e-9, u->rate_samples);
	else
		snprintf(rate, sizeof(rate), "(no samples yet)");
	snprintf(buf, len, "rtt %.3g ms %s %s, rate %.3g Gbit/s %s %s, rto %.3g ms", u->rtt_s * 1e3,
		 u->rtt_measured ? "measured" : "configured", rtt, u->bandwidth_bps * 1e-9,
		 u->rate_measured ? "measured" : u->paced ? "paced" : "assumed, not paced", rate,
		 u->rto_s * 1e3);
}
