/* SPDX-License-Identifier: BSD-3-Clause */
/* Analytic completion-time model of SR and EC reliability, and the scheme advisor. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sdr_model.h"
#include "sdr_rel.h"

static const char *const err_names[SDR_MODEL_E_COUNT] = {
#define X(sym, name, doc) [SDR_MODEL_E_##sym] = name,
	SDR_MODEL_ERRORS(X)
#undef X
};

static const char *const err_docs[SDR_MODEL_E_COUNT] = {
#define X(sym, name, doc) [SDR_MODEL_E_##sym] = doc,
	SDR_MODEL_ERRORS(X)
#undef X
};

/* Default advisor candidates: both SR variants, then XOR and MDS for each (k, m). */
static const struct sdr_scheme default_candidates[] = {
	{ SDR_SCHEME_SR, 0, 0, 0 },	{ SDR_SCHEME_SR_NACK, 0, 0, 0 },
	{ SDR_SCHEME_EC_XOR, 8, 2, 0 },	{ SDR_SCHEME_EC_MDS, 8, 2, 0 },
	{ SDR_SCHEME_EC_XOR, 16, 4, 0 },	{ SDR_SCHEME_EC_MDS, 16, 4, 0 },
	{ SDR_SCHEME_EC_XOR, 32, 4, 0 },	{ SDR_SCHEME_EC_MDS, 32, 4, 0 },
	{ SDR_SCHEME_EC_XOR, 32, 8, 0 },	{ SDR_SCHEME_EC_MDS, 32, 8, 0 },
	{ SDR_SCHEME_EC_XOR, 64, 8, 0 },	{ SDR_SCHEME_EC_MDS, 64, 8, 0 },
};

#define N_DEFAULT_CANDIDATES (sizeof(default_candidates) / sizeof(default_candidates[0]))

/* Tail sum: steps per RTO round (at most), total step budget, relative stop tolerance. */
#define SR_STEPS_PER_ROUND	1024
#define SR_MIN_STEPS_PER_ROUND	32
#define SR_STEP_BUDGET		(1u << 22)
#define SR_TAIL_TOL		1e-13
#define SR_WORK_BUDGET		(1u << 22)	/* groups summed in all: ~0.1 s on one core */
#define SR_LOG_TABLE		512
#define SR_MAX_CHUNKS		9007199254740992.0	/* 2^53: counts stay exact */

/* Recommendation window: entries within this factor of the lowest mean tie. */
#define ADVISE_TIE		1.01

static int
is_err(int err)
{
	if (err < 0)
		err = -err;
	return err < SDR_MODEL_E_COUNT ? err : -1;
}

const char *
sdr_model_err_name(int err)
{
	int e = is_err(err);

	return e >= 0 ? err_names[e] : "invalid";
}

const char *
sdr_model_strerror(int err)
{
	int e = is_err(err);

	return e >= 0 ? err_docs[e] : "invalid error code";
}

/* The scheme errors are the model's first ones (sdr_rel.h): one strerror names both. */
#define X(sym, name, doc) \
	_Static_assert((int)SDR_MODEL_E_##sym == (int)SDR_SCHEME_E_##sym, "scheme error " #sym);
SDR_SCHEME_ERRORS(X)
#undef X

const struct sdr_scheme *
sdr_model_default_candidates(unsigned int *n)
{
	*n = N_DEFAULT_CANDIDATES;
	return default_candidates;
}

/* ---------------------------------------------------------------- encode rates */

void
sdr_model_rates_default(struct sdr_model_rates *r)
{
	memset(r, 0, sizeof(*r));
	r->xor_bytes_per_s = 50e9;
	r->n_mds = 3;
	r->mds[0] = (struct sdr_model_rate_point){ 2, 28e9 };
	r->mds[1] = (struct sdr_model_rate_point){ 4, 15e9 };
	r->mds[2] = (struct sdr_model_rate_point){ 8, 6.5e9 };
}

static int
rate_ok(double v)
{
	return isfinite(v) && v > 0;
}

static int
rates_check(const struct sdr_model_rates *r)
{
	if (!rate_ok(r->xor_bytes_per_s) || r->n_mds == 0 || r->n_mds > SDR_MODEL_RATE_POINTS)
		return -SDR_MODEL_E_BAD_RATES;
	for (unsigned int i = 0; i < r->n_mds; i++) {
		if (!rate_ok(r->mds[i].bytes_per_s) || r->mds[i].m == 0 ||
		    (i > 0 && r->mds[i].m <= r->mds[i - 1].m))
			return -SDR_MODEL_E_BAD_RATES;
	}
	return 0;
}

/* MDS encode rate for m parity chunks: time per byte linear in m between points. */
static double
mds_rate(const struct sdr_model_rates *r, unsigned int m)
{
	const struct sdr_model_rate_point *lo = &r->mds[0], *hi = &r->mds[r->n_mds - 1];

	if (m <= lo->m)
		return lo->bytes_per_s * lo->m / m;
	if (m >= hi->m)
		return hi->bytes_per_s * hi->m / m;
	for (unsigned int i = 1; i < r->n_mds; i++) {
		const struct sdr_model_rate_point *a = &r->mds[i - 1], *b = &r->mds[i];
		double f;

		if (m > b->m)
			continue;
		f = (double)(m - a->m) / (double)(b->m - a->m);
		return 1.0 / ((1 - f) / a->bytes_per_s + f / b->bytes_per_s);
	}
	return hi->bytes_per_s;	/* not reached: m < hi->m */
}

int
sdr_model_encode_cores(const struct sdr_scheme *s, double bandwidth_bps,
		       const struct sdr_model_rates *rates, double *cores)
{
	struct sdr_model_rates def;
	double data_bytes_per_s;
	int rc;

	rc = sdr_scheme_check(s);
	if (rc != 0)
		return rc;
	if (!rate_ok(bandwidth_bps))
		return -SDR_MODEL_E_BAD_BANDWIDTH;
	if (rates == NULL) {
		sdr_model_rates_default(&def);
		rates = &def;
	}
	rc = rates_check(rates);
	if (rc != 0)
		return rc;
	if (!sdr_scheme_is_ec(s)) {
		*cores = 0;
		return 0;
	}
	data_bytes_per_s = bandwidth_bps / 8 * s->k / (double)(s->k + s->m);
	*cores = data_bytes_per_s /
		 (s->kind == SDR_SCHEME_EC_XOR ? rates->xor_bytes_per_s : mds_rate(rates, s->m));
	return 0;
}

/* ---------------------------------------------------------------- parameters */

void
sdr_model_params_init(struct sdr_model_params *p)
{
	memset(p, 0, sizeof(*p));
	p->chunk_bytes = 64 * 1024;
	p->mtu_bytes = 4096;
	p->bandwidth_bps = 400e9;
	p->rtt_s = 25e-3;
	p->drop = 1e-4;
	p->drop_unit = SDR_MODEL_DROP_PACKET;
	p->alpha = 2;
	p->beta = NAN;
	p->nack_allowance_s = NAN;
}

double
sdr_model_chunk_drop(double p_pkt, double n)
{
	if (p_pkt <= 0)
		return 0;
	if (p_pkt >= 1)
		return 1;
	return -expm1(n * log1p(-p_pkt));
}

static int
time_ok(double v)
{
	return isfinite(v) && v >= 0;
}

/*
 * SR-NACK as the receiver (rel_rx.c) runs it, with A the reordering allowance. Every A it
 * notes the highest chunk in; a hole below the chunk noted one period earlier is a sure
 * loss, so a hole with chunks behind it is NACKed between A and 2 A (1.5 A on average)
 * after the next chunk arrives, T_INJ after the lost one would have; the NACK and the
 * resend take an RTT, the resend T_INJ. The last chunk has nothing behind it: it is NACKed
 * once nothing has arrived for A + RTT / 8. A resend lost again is NACKed in the next
 * round, RTT + max(A, RTT / 8) after the last.
 */
static void
nack_timing(double rtt, double t, double allow, struct sdr_model_derived *d)
{
	d->nack_first_s = rtt + 1.5 * allow + 2 * t;
	d->nack_last_s = rtt + allow + rtt / 8 + t;
	d->nack_repeat_s = rtt + fmax(allow, rtt / 8);
}

int
sdr_model_derive(const struct sdr_model_params *p, struct sdr_model_derived *d)
{
	uint64_t chunks;

	if (p->msg_bytes == 0)
		return -SDR_MODEL_E_BAD_SIZE;
	if (p->mtu_bytes == 0)
		return -SDR_MODEL_E_BAD_MTU;
	if (p->chunk_bytes == 0)
		return -SDR_MODEL_E_BAD_CHUNK;
	if (p->chunk_bytes % p->mtu_bytes != 0)
		return -SDR_MODEL_E_CHUNK_NOT_MTU;
	if (!rate_ok(p->bandwidth_bps))
		return -SDR_MODEL_E_BAD_BANDWIDTH;
	if (!time_ok(p->rtt_s))
		return -SDR_MODEL_E_BAD_RTT;
	if (!(p->drop >= 0 && p->drop < 1))
		return -SDR_MODEL_E_BAD_DROP;
	if (p->drop_unit != SDR_MODEL_DROP_PACKET && p->drop_unit != SDR_MODEL_DROP_CHUNK)
		return -SDR_MODEL_E_BAD_DROP_UNIT;
	if (!time_ok(p->alpha))
		return -SDR_MODEL_E_BAD_ALPHA;
	if (!isnan(p->beta) && !time_ok(p->beta))
		return -SDR_MODEL_E_BAD_BETA;
	if (!isnan(p->nack_allowance_s) && !time_ok(p->nack_allowance_s))
		return -SDR_MODEL_E_BAD_RTT;
	chunks = p->msg_bytes / p->chunk_bytes + (p->msg_bytes % p->chunk_bytes != 0);
	d->chunks = (double)chunks;
	d->pkts_per_chunk = (double)(p->chunk_bytes / p->mtu_bytes);
	d->t_inj_s = (double)p->chunk_bytes * 8 / p->bandwidth_bps;
	if (p->msg_bytes < p->chunk_bytes) {
		/* a message shorter than a chunk is one chunk of its own packets (the sender
		 * sends, and the receiver waits for, only those): its loss and injection */
		d->pkts_per_chunk = (double)((p->msg_bytes + p->mtu_bytes - 1) / p->mtu_bytes);
		d->t_inj_s = (double)p->msg_bytes * 8 / p->bandwidth_bps;
	}
	d->p_chunk = p->drop_unit == SDR_MODEL_DROP_CHUNK ?
			     p->drop : sdr_model_chunk_drop(p->drop, d->pkts_per_chunk);
	d->rto_s = p->rtt_s + p->alpha * p->rtt_s;
	d->penalty_s = d->rto_s + d->t_inj_s;
	d->beta = isnan(p->beta) ? p->alpha / 2 : p->beta;
	d->p_pkt = p->drop_unit == SDR_MODEL_DROP_PACKET ? p->drop : 0;
	d->nack_allowance_s = !isnan(p->nack_allowance_s) ? p->nack_allowance_s :
			      fmax(p->rtt_s / 100, 20e-6);
	nack_timing(p->rtt_s, d->t_inj_s, d->nack_allowance_s, d);
	return 0;
}

/* ---------------------------------------------------------------- SR tail sum */

/*
 * Chunk i = M - d (lag d = 0..M-1 behind the last) is done at time M T + s when it has
 * needed at most r_d retransmissions, r_d the rounds that fit in s + d T: none before O1,
 * then one more every O2 (the last chunk, d = 0, has its own O1). It is still missing
 * after r rounds with probability G(r):
 *   per chunk:	G(r) = P^(r + 1);
 *   per packet:	G(r) = Q(r + 1), Q(y) = 1 - (1 - p^y)^N: a resend only needs the packets
 *		still missing, each lost again with p (the receiver's packet bitmap keeps the
 *		rest);
 *   and, for chunks already lost once (the EC fallback), G(r) = Q(r + 2) / Q(1).
 * Lags with the same r_d form a contiguous range, so -log F(M T + s) is a short sum over
 * groups: sum_q count_q * -log(1 - G(q)).
 */
struct sr_tail {
	const struct sdr_model_sr *a;	/* penalties (O1, O1', O2), drop, packets, lost_before */
	double m;		/* chunks, or units */
	double t;		/* T_INJ, or a unit's */
	double ln_p;		/* log of a->drop */
	double q1;		/* Q(1), for lost_before */
	const struct unit_class *cls;	/* units: the kinds, by weight (NULL: chunks) */
	unsigned int ncls;
	double rho;		/* G(r + 1) <= rho G(r) for every r */
	double ln_rho;
	uint64_t work;		/* groups summed so far, against SR_WORK_BUDGET */
	double lg[SR_LOG_TABLE];	/* -log(1 - G(q)) */
};

/* Q(y) = 1 - (1 - p^y)^N */
static double
q_pkt(double ln_p, double n, double y)
{
	return -expm1(n * log1p(-exp(y * ln_p)));
}

static double binom_range(unsigned int n, unsigned int lo, unsigned int hi, double p);

/*
 * A kind of unit the EC fallback repairs: with probability @c w it has @c d data chunks
 * resent, any @c e of which complete it.
 */
struct unit_class {
	double w;
	unsigned int d, e;
};

#define UNIT_CLASSES 32

/* One chunk still missing after q resends */
static double
sr_fail_chunk(const struct sr_tail *c, double q)
{
	if (c->a->pkts == 0)
		return exp((q + 1) * c->ln_p);
	if (c->a->lost_before)
		return q_pkt(c->ln_p, c->a->pkts, q + 2) / c->q1;
	return q_pkt(c->ln_p, c->a->pkts, q + 1);
}

/* G(q): a unit still incomplete after q resends (a unit of D chunks needing any e: more
 * than D - e of them still missing) */
static double
sr_fail(const struct sr_tail *c, double q)
{
	double g = sr_fail_chunk(c, q), f = 0;

	if (c->cls == NULL || g <= 0)
		return g;
	if (g >= 1)
		return 1;
	for (unsigned int i = 0; i < c->ncls; i++)
		f += c->cls[i].w * binom_range(c->cls[i].d, c->cls[i].d - c->cls[i].e + 1,
					       c->cls[i].d, g);
	return f;
}

/* -log(1 - G(q)), exact when G is tiny */
static double
sr_neg_log_ok_calc(const struct sr_tail *c, double q)
{
	if (c->cls)
		return -log1p(-sr_fail(c, q));
	if (c->a->pkts == 0)
		return -log1p(-exp((q + 1) * c->ln_p));
	if (!c->a->lost_before)
		return -c->a->pkts * log1p(-exp((q + 1) * c->ln_p));
	return -log1p(-sr_fail(c, q));
}

static void
sr_tail_init(struct sr_tail *c, const struct sdr_model_sr *a, double m, double t_unit,
	     const struct unit_class *cls, unsigned int ncls)
{
	c->a = a;
	c->m = m;
	c->t = t_unit;
	c->ln_p = log(a->drop);
	c->cls = cls;
	c->ncls = ncls;
	c->q1 = a->pkts > 0 ? q_pkt(c->ln_p, a->pkts, 1) : a->drop;
	c->work = 0;
	/*
	 * The ratio G(r + 1) / G(r) is largest at r = 0: P per chunk; per packet it falls
	 * from Q(2) / Q(1) (or Q(3) / Q(2)) towards p as p^r shrinks, since 1 - (1 - x)^N is
	 * concave in x.
	 */
	c->rho = sr_fail(c, 1) / sr_fail(c, 0);
	if (!(c->rho > 0))
		c->rho = a->drop;
	c->ln_rho = log(c->rho);
	for (int q = 0; q < SR_LOG_TABLE; q++)
		c->lg[q] = sr_neg_log_ok_calc(c, q);
}

/* -log(1 - G(q)) */
static double
sr_neg_log_ok(const struct sr_tail *c, double q)
{
	if (q < SR_LOG_TABLE)
		return c->lg[(int)q];
	return sr_neg_log_ok_calc(c, q);
}

/* Time after its first send by which a chunk has had q resends (o1 for the first). */
static double
sr_round_start(const struct sr_tail *c, double o1, double q)
{
	return q <= 0 ? -INFINITY : o1 + (q - 1) * c->a->repeat_s;
}

/* Resends that fit in @p tau after a chunk's first send. */
static double
sr_rounds(const struct sr_tail *c, double o1, double tau)
{
	return tau < o1 ? 0 : 1 + floor((tau - o1) / c->a->repeat_s);
}

/* -log P(max_i X_i <= M T + s) for s >= 0. Counts its groups in c->work. */
static double
sr_neg_log_cdf(struct sr_tail *c, double s)
{
	double acc = sr_neg_log_ok(c, sr_rounds(c, c->a->last_s, s)), lo = 1;
	double q = sr_rounds(c, c->a->first_s, s + c->t);

	while (lo < c->m) {
		c->work++;
		double hi = ceil((sr_round_start(c, c->a->first_s, q + 1) - s) / c->t);

		if (hi > c->m)
			hi = c->m;
		if (hi > lo) {
			acc += (hi - lo) * sr_neg_log_ok(c, q);
			lo = hi;
		}
		if (lo >= c->m)
			break;
		/* every remaining chunk has had more rounds than q: bound what is left */
		if ((c->m - lo) * sr_neg_log_ok(c, q + 1) <= 1e-17 * acc)
			break;
		q = fmax(q + 1, sr_rounds(c, c->a->first_s, s + lo * c->t));
	}
	return acc;
}

/* Rounds of O2 after M T until the tail is below tolerance (an estimate for the step size). */
static double
sr_rounds_estimate(const struct sr_tail *c, double rtt)
{
	double e = c->m * c->t + rtt;
	double r = log(SR_TAIL_TOL * e * (1 - c->rho) / (c->a->repeat_s * c->m * (c->a->pkts > 0 ? c->a->pkts : 1))) /
		   c->ln_rho;
	double first = fmax(c->a->first_s, c->a->last_s) / c->a->repeat_s;

	return (r > 1 ? ceil(r) + 1 : 2) + ceil(first);
}

/*
 * E[max_i X_i] - M T = integral over s >= 0 of 1 - F(M T + s), by the midpoint rule with
 * a step of O2 / K. It stops, once every chunk has had its first resend, when the rest,
 * bounded by O2 * lambda / (1 - rho) with lambda = -log F (lambda drops at least by rho
 * per round), is below SR_TAIL_TOL of the total.
 */
static int
sr_tail_integral(struct sr_tail *c, double rtt, double *out)
{
	double rounds = sr_rounds_estimate(c, rtt), h, sum = 0;
	double k = SR_STEPS_PER_ROUND, settled = fmax(c->a->first_s, c->a->last_s);
	uint64_t n;

	if (rounds * SR_MIN_STEPS_PER_ROUND > SR_STEP_BUDGET)
		return -SDR_MODEL_E_TOO_LOSSY;
	if (rounds * k > SR_STEP_BUDGET)
		k = floor(SR_STEP_BUDGET / rounds);
	h = c->a->repeat_s / k;
	for (n = 0; n < 2 * (uint64_t)SR_STEP_BUDGET; n++) {
		double s = ((double)n + 0.5) * h, lambda = sr_neg_log_cdf(c, s);

		sum += -expm1(-lambda) * h;
		if (s >= settled &&
		    lambda * c->a->repeat_s / (1 - c->rho) <= SR_TAIL_TOL * (c->m * c->t + rtt + sum)) {
			*out = sum;
			return 0;
		}
		/* many chunks per RTO round (an RTO near zero) make every step long: stop */
		if (c->work > SR_WORK_BUDGET)
			return -SDR_MODEL_E_TOO_COSTLY;
	}
	return -SDR_MODEL_E_TOO_LOSSY;
}

/* Units of the fallback: their mean resent and needed chunks. */
static void
units_mean(const struct unit_class *cls, unsigned int ncls, double *d, double *e)
{
	*d = *e = 0;
	for (unsigned int i = 0; i < ncls; i++) {
		*d += cls[i].w * cls[i].d;
		*e += cls[i].w * cls[i].e;
	}
}

/*
 * E[T_SR] for a whole number @p m of chunks, or of units of @p cls (0 gives RTT). A unit
 * takes its mean resent chunks' injection time, and the last one is complete with its
 * first e chunks in, not its last.
 */
static int
sr_mean_int(const struct sdr_model_sr *a, const struct unit_class *cls, unsigned int ncls,
	    double m, double *mean)
{
	struct sr_tail c;
	double tail, d = 1, e = 1, t;
	int rc;

	if (cls != NULL)
		units_mean(cls, ncls, &d, &e);
	t = a->t_inj_s * d;
	if (m == 0) {
		*mean = a->rtt_s;
		return 0;
	}
	if (a->drop == 0) {
		*mean = m * t + a->rtt_s - (d - e) * a->t_inj_s;
		return 0;
	}
	sr_tail_init(&c, a, m, t, cls, ncls);
	if (!(c.rho < 1))
		return -SDR_MODEL_E_TOO_LOSSY;
	rc = sr_tail_integral(&c, a->rtt_s, &tail);
	if (rc != 0)
		return rc;
	*mean = m * t + tail + a->rtt_s - (d - e) * a->t_inj_s;
	return 0;
}

static int
sr_mean_units(const struct sdr_model_sr *a, const struct unit_class *cls, unsigned int ncls,
	      double *mean_s)
{
	double lo, hi, x, y;
	int rc;

	if (!(a->chunks >= 0 && a->chunks <= SR_MAX_CHUNKS))
		return -SDR_MODEL_E_BAD_CHUNKS;
	if (!rate_ok(a->t_inj_s) || !time_ok(a->rtt_s) || !rate_ok(a->first_s) ||
	    !rate_ok(a->last_s) || !rate_ok(a->repeat_s))
		return -SDR_MODEL_E_BAD_TIME;
	if (!(a->drop >= 0 && a->drop < 1) || !(a->pkts >= 0 && a->pkts <= 1e9) ||
	    a->lost_before > 1)
		return -SDR_MODEL_E_BAD_DROP;
	lo = floor(a->chunks);
	hi = ceil(a->chunks);
	rc = sr_mean_int(a, cls, ncls, lo, &x);
	if (rc != 0 || hi == lo) {
		*mean_s = x;
		return rc;
	}
	rc = sr_mean_int(a, cls, ncls, hi, &y);
	if (rc != 0)
		return rc;
	*mean_s = x + (a->chunks - lo) * (y - x);
	return 0;
}

int
sdr_model_sr_mean_ex(const struct sdr_model_sr *a, double *mean_s)
{
	return sr_mean_units(a, NULL, 0, mean_s);
}

int
sdr_model_sr_mean(double chunks, double t_inj_s, double rtt_s, double rto_s, double p_chunk,
		  double *mean_s)
{
	struct sdr_model_sr a = { .chunks = chunks, .t_inj_s = t_inj_s, .rtt_s = rtt_s,
				  .first_s = rto_s + t_inj_s, .last_s = rto_s + t_inj_s,
				  .repeat_s = rto_s + t_inj_s, .drop = p_chunk };

	if (!(chunks >= 0 && chunks <= SR_MAX_CHUNKS))
		return -SDR_MODEL_E_BAD_CHUNKS;
	if (!rate_ok(t_inj_s) || !time_ok(rtt_s) || !time_ok(rto_s))
		return -SDR_MODEL_E_BAD_TIME;
	if (!(p_chunk >= 0 && p_chunk < 1))
		return -SDR_MODEL_E_BAD_DROP;
	return sdr_model_sr_mean_ex(&a, mean_s);
}

/* SR over @p chunks at the point @p p: per-packet loss when the drop is per packet, RTO. */
static struct sdr_model_sr
sr_of(const struct sdr_model_params *p, const struct sdr_model_derived *d, double chunks)
{
	struct sdr_model_sr a = {
		.chunks = chunks, .t_inj_s = d->t_inj_s, .rtt_s = p->rtt_s,
		.first_s = d->penalty_s, .last_s = d->penalty_s, .repeat_s = d->penalty_s,
		.drop = d->p_pkt > 0 ? d->p_pkt : d->p_chunk,
		.pkts = d->p_pkt > 0 ? d->pkts_per_chunk : 0,
	};

	return a;
}

/*
 * The chunks SR sends for a message of @p p: M, but a last chunk of fewer packets than the
 * others counts as its share of one (the mean between M - 1 and M full chunks, at that
 * share). A message shorter than a chunk is one chunk of its own packets already.
 */
static double
sr_chunks(const struct sdr_model_params *p, const struct sdr_model_derived *d)
{
	uint64_t pkts = (p->msg_bytes + p->mtu_bytes - 1) / p->mtu_bytes;

	if (p->msg_bytes <= p->chunk_bytes)
		return d->chunks;
	return (double)pkts / (double)(p->chunk_bytes / p->mtu_bytes);
}

/*
 * Resends go out before new chunks, so a message whose injection outlasts a chunk's first
 * resend (M T_INJ > O1) has its last new chunks pushed back by every resend sent before
 * them: about G(0) per chunk sent more than O1 before the last one.
 */
static double
resend_competition(const struct sdr_model_sr *a)
{
	double early = a->chunks - a->first_s / a->t_inj_s, g0;

	if (early <= 0 || a->drop == 0)
		return 0;
	g0 = a->pkts > 0 ? -expm1(a->pkts * log1p(-a->drop)) : a->drop;
	return g0 * early * a->t_inj_s;
}

/* ---------------------------------------------------------------- EC */

/* sum_{i = lo..hi} C(n, i) p^i (1 - p)^(n - i), 0 < p < 1, each term from its logarithm. */
static double
binom_range(unsigned int n, unsigned int lo, unsigned int hi, double p)
{
	double ln_odds = log(p) - log1p(-p);
	double lt = n * log1p(-p);	/* log of the i = 0 term */
	double sum = 0;

	for (unsigned int i = 1; i <= lo; i++)
		lt += log((double)(n - i + 1) / i) + ln_odds;
	for (unsigned int i = lo; i <= hi; i++) {
		sum += exp(lt);
		if (i < n)
			lt += log((double)(n - i) / (i + 1)) + ln_odds;
	}
	return sum;
}

/*
 * Decode probabilities of one submessage of @p kk data and @p mm parity chunks, as the
 * reliability layer sends it (sdr_rel_sub_parity(): a short last submessage gets fewer
 * parity chunks). MDS repairs any mm losses; XOR groups data chunk j with parity j mod mm,
 * and each group survives one loss.
 */
static void
sub_decode(const struct sdr_scheme *s, unsigned int kk, unsigned int mm, double p,
	   struct sdr_model_decode *out)
{
	double ln_ok = 0, ln_nofail = 0;

	if (p == 0) {
		out->ok = 1;
		out->fail = 0;
		return;
	}
	if (s->kind == SDR_SCHEME_EC_MDS) {
		out->ok = binom_range(kk + mm, 0, mm, p);
		out->fail = binom_range(kk + mm, mm + 1, kk + mm, p);
		return;
	}
	for (unsigned int i = 0; i < mm; i++) {
		unsigned int g = (kk - i + mm - 1) / mm + 1;	/* data chunks of group i, + parity */

		ln_ok += log(binom_range(g, 0, 1, p));
		ln_nofail += log1p(-binom_range(g, 2, g, p));
	}
	out->ok = exp(ln_ok);
	out->fail = -expm1(ln_nofail);
}

/* Add @p w units that resend @p d chunks and need @p e of them. */
static void
add_units(struct unit_class *cls, unsigned int *n, double w, unsigned int d, unsigned int e)
{
	unsigned int i;

	if (!(w > 0))
		return;
	for (i = 0; i < *n && (cls[i].d != d || cls[i].e != e); i++)
		;
	if (i == *n) {
		if (*n == UNIT_CLASSES)
			i = *n - 1;	/* full: the rarest kinds come last, lump them */
		else
			cls[(*n)++] = (struct unit_class){ 0, d, e };
	}
	cls[i].w += w;
}

/*
 * Whether the binomial terms of @p all trials from @p l on are all negligible against
 * @p fail: this one is, and the terms only shrink from here (l past the mode, (all + 1)p).
 * Below the mode they grow: a tiny first term at high loss says nothing of the rest.
 */
static int
negligible(double w, double fail, unsigned int l, unsigned int all, double p)
{
	return w < 1e-15 * fail && (double)l > (double)(all + 1) * p;
}

/*
 * What the fallback must repair in @p times submessages of @p kk data and @p mm parity
 * chunks, as expected counts of units by kind. MDS: a submessage that lost L > mm chunks,
 * D of them data (kk/(kk + mm) of L on average), needs any min(L - mm, D) of its D data
 * chunks back. XOR: each group of g chunks that lost l >= 2 needs its own chunks back:
 * all l - 1 data lost when its parity was lost too, else any l - 1 of the l.
 */
static void
sub_units(const struct sdr_scheme *s, unsigned int kk, unsigned int mm, double p, double times,
	  struct unit_class *cls, unsigned int *n)
{
	if (p == 0 || times == 0)
		return;
	if (s->kind == SDR_SCHEME_EC_MDS) {
		unsigned int all = kk + mm;
		double fail = binom_range(all, mm + 1, all, p);

		for (unsigned int l = mm + 1; l <= all; l++) {
			double w = binom_range(all, l, l, p);
			unsigned int d = (unsigned int)fmax(1, fmin(kk, round((double)l * kk / all)));

			if (negligible(w, fail, l, all, p))
				break;
			if (w >= 1e-15 * fail)
				add_units(cls, n, times * w, d, l - mm < d ? l - mm : d);
		}
		return;
	}
	for (unsigned int i = 0; i < mm; i++) {
		unsigned int g = (kk - i + mm - 1) / mm + 1;
		double fail = binom_range(g, 2, g, p);

		for (unsigned int l = 2; l <= g; l++) {
			double w = binom_range(g, l, l, p);

			if (negligible(w, fail, l, g, p))
				break;
			if (w < 1e-15 * fail)
				continue;
			add_units(cls, n, times * w * l / g, l - 1, l - 1);
			add_units(cls, n, times * w * (g - l) / g, l, l - 1);
		}
	}
}

int
sdr_model_ec_decode(const struct sdr_scheme *s, double p_chunk, struct sdr_model_decode *out)
{
	int rc;

	rc = sdr_scheme_check(s);
	if (rc != 0)
		return rc;
	if (!sdr_scheme_is_ec(s))
		return -SDR_MODEL_E_BAD_SCHEME;
	if (!(p_chunk >= 0 && p_chunk < 1))
		return -SDR_MODEL_E_BAD_DROP;
	sub_decode(s, s->k, s->m, p_chunk, out);
	return 0;
}

/*
 * Parity chunks of the message's last submessage (kk data, mm parity) the receiver waits
 * for before the submessage decodes, on average: parity goes out right after the data it
 * covers, so every other submessage's parity is on the wire before the last data chunk,
 * and a last submessage that lost nothing is done without its parity. MDS needs one parity
 * chunk per data chunk lost, E[min(D, mm)]; XOR needs parity i for each group i that lost
 * a data chunk, so it waits for the highest such i. (Parity lost on the way, a second-order
 * term, is left out.)
 */
static double
last_sub_parity_wait(const struct sdr_scheme *s, unsigned int kk, unsigned int mm, double p)
{
	double wait = 0, behind = 0;

	if (p == 0)
		return 0;
	if (s->kind == SDR_SCHEME_EC_MDS) {
		for (unsigned int j = 1; j <= mm && j <= kk; j++)
			wait += binom_range(kk, j, kk, p);
		return wait;
	}
	/* groups mm - 1 down to 0: P(a data chunk of group j - 1 or a later one is lost) */
	for (unsigned int j = mm; j >= 1; j--) {
		behind += (double)((kk - (j - 1) + mm - 1) / mm);	/* data chunks of group j - 1 */
		wait += -expm1(behind * log1p(-p));
	}
	return wait;
}

/*
 * EC with SR fallback. The message is L = ceil(M / k) submessages: M div k full ones with m
 * parity chunks each, and a short last one of M mod k chunks with the parity the
 * reliability layer gives it (sdr_rel_sub_parity()). When one does not decode, the
 * receiver's fallback timer (the injection time of the message and its parity, + beta RTT)
 * sends an EC-NACK with its ACK bitmap; the sender resends the missing data chunks of the
 * submessages that failed under SR, and a submessage is done as soon as it decodes: the
 * chunks it still needs are its losses beyond what its code repairs (MDS: beyond m; XOR:
 * beyond one in each group). Those chunks, lost once already, are the fallback's SR
 * transfer.
 */
static int
eval_ec(const struct sdr_model_params *p, const struct sdr_model_derived *d,
	const struct sdr_scheme *s, struct sdr_model_choice *out)
{
	uint64_t m_chunks = (uint64_t)d->chunks;
	double nfull = (double)(m_chunks / s->k);
	unsigned int kk = (unsigned int)(m_chunks % s->k), mm = sdr_rel_sub_parity(s, kk);
	double parity = nfull * s->m + (kk ? mm : 0);
	struct sdr_model_decode full, part = { .ok = 1, .fail = 0 };
	struct unit_class cls[UNIT_CLASSES];
	double fallback, ln_nofail, silent, units = 0;
	unsigned int last_k, last_m, ncls = 0;
	struct sdr_model_sr a;
	int rc;

	rc = sdr_scheme_check(s);
	if (rc != 0)
		return rc;
	sub_decode(s, s->k, s->m, d->p_chunk, &full);
	if (kk)
		sub_decode(s, kk, mm, d->p_chunk, &part);
	out->exp_failures = nfull * full.fail + part.fail;
	ln_nofail = (full.fail >= 1 ? -INFINITY : nfull * log1p(-full.fail)) +
		    (part.fail >= 1 ? -INFINITY : log1p(-part.fail));
	out->p_fallback = -expm1(ln_nofail);
	/*
	 * The fallback as SR over what must be repaired (sub_units()), each unit's chunks
	 * lost once already: a unit is still short after a round while more than d - e of
	 * its d chunks are still missing.
	 */
	sub_units(s, s->k, s->m, d->p_chunk, nfull, cls, &ncls);
	if (kk)
		sub_units(s, kk, mm, d->p_chunk, 1, cls, &ncls);
	for (unsigned int i = 0; i < ncls; i++)
		units += cls[i].w;
	for (unsigned int i = 0; i < ncls; i++)
		cls[i].w /= units;
	a = sr_of(p, d, units);
	a.lost_before = 1;
	rc = sr_mean_units(&a, ncls ? cls : NULL, ncls, &fallback);
	if (rc != 0)
		return rc;
	last_k = kk ? kk : s->k;
	last_m = kk ? mm : s->m;
	/*
	 * A message none of whose chunks arrived starts no fallback timer: the sender probes
	 * after its silence timeout instead, an RTO after the fallback would have begun.
	 */
	silent = exp((d->chunks + parity) * log(d->p_chunk));
	out->mean_s = (d->chunks + parity - last_m +
		       last_sub_parity_wait(s, last_k, last_m, d->p_chunk)) * d->t_inj_s +
		      out->p_fallback * (p->rtt_s + d->beta * p->rtt_s) + silent * d->rto_s +
		      fallback;
	return 0;
}

int
sdr_model_eval(const struct sdr_model_params *p, const struct sdr_scheme *s,
	       struct sdr_model_choice *out)
{
	struct sdr_model_derived d;
	struct sdr_model_choice c;
	int rc;

	rc = sdr_model_derive(p, &d);
	if (rc != 0)
		return rc;
	rc = sdr_scheme_check(s);
	if (rc != 0)
		return rc;
	if (!(d.p_chunk < 1))
		return -SDR_MODEL_E_TOO_LOSSY;
	memset(&c, 0, sizeof(c));
	c.scheme = *s;
	c.parity_share = sdr_scheme_parity_share(s);
	rc = sdr_model_encode_cores(s, p->bandwidth_bps, p->rates, &c.encode_cores);
	if (rc != 0)
		return rc;
	switch (s->kind) {
	case SDR_SCHEME_SR:
	case SDR_SCHEME_SR_NACK: {
		struct sdr_model_sr a = sr_of(p, &d, sr_chunks(p, &d));

		/* a lone chunk lost gets no NACK: the receiver saw nothing, the RTO resends */
		if (s->kind == SDR_SCHEME_SR_NACK && d.chunks > 1) {
			a.first_s = d.nack_first_s;
			a.last_s = d.nack_last_s;
			a.repeat_s = d.nack_repeat_s;
		}
		rc = sdr_model_sr_mean_ex(&a, &c.mean_s);
		if (rc == 0)
			c.mean_s += resend_competition(&a);
		break;
	}
	default:
		rc = eval_ec(p, &d, s, &c);
		break;
	}
	if (rc != 0)
		return rc;
	*out = c;
	return 0;
}

/* ---------------------------------------------------------------- advisor */

/* Strict order: mean, then parity share, then cores. */
static int
choice_before(const struct sdr_model_choice *a, const struct sdr_model_choice *b)
{
	if (a->mean_s != b->mean_s)
		return a->mean_s < b->mean_s;
	if (a->parity_share != b->parity_share)
		return a->parity_share < b->parity_share;
	return a->encode_cores < b->encode_cores;
}

/* Is @p a a better recommendation than @p b, both within the tie window? */
static int
choice_preferred(const struct sdr_model_choice *a, const struct sdr_model_choice *b)
{
	if (a->parity_share != b->parity_share)
		return a->parity_share < b->parity_share;
	if (a->encode_cores != b->encode_cores)
		return a->encode_cores < b->encode_cores;
	return a->mean_s < b->mean_s;
}

void
sdr_model_rank(struct sdr_model_choice *c, unsigned int n)
{
	struct sdr_model_choice tmp;
	unsigned int best = 0;

	/* stable insertion sort: n is small */
	for (unsigned int i = 1; i < n; i++) {
		unsigned int j = i;

		tmp = c[i];
		while (j > 0 && choice_before(&tmp, &c[j - 1])) {
			c[j] = c[j - 1];
			j--;
		}
		c[j] = tmp;
	}
	for (unsigned int i = 1; i < n && c[i].mean_s <= c[0].mean_s * ADVISE_TIE; i++) {
		if (choice_preferred(&c[i], &c[best]))
			best = i;
	}
	if (best == 0)
		return;
	tmp = c[best];
	memmove(&c[1], &c[0], best * sizeof(c[0]));
	c[0] = tmp;
}

int
sdr_model_advise(const struct sdr_model_params *p, struct sdr_model_choice *out,
		 unsigned int max_out)
{
	struct sdr_model_choice all[SDR_MODEL_MAX_CANDIDATES];
	const struct sdr_scheme *cand = p->candidates;
	unsigned int n = p->n_candidates;
	int rc;

	if (cand == NULL) {
		cand = default_candidates;
		n = N_DEFAULT_CANDIDATES;
	}
	if (n == 0 || n > SDR_MODEL_MAX_CANDIDATES)
		return -SDR_MODEL_E_BAD_CANDIDATES;
	for (unsigned int i = 0; i < n; i++) {
		rc = sdr_model_eval(p, &cand[i], &all[i]);
		if (rc != 0)
			return rc;
	}
	sdr_model_rank(all, n);
	if (n > max_out)
		n = max_out;
	memcpy(out, all, n * sizeof(all[0]));
	return (int)n;
}

/* ---------------------------------------------------------------- Ring Allreduce */

int
sdr_model_allreduce(unsigned int n_dc, double step_s, double mu_x, double *mean_s)
{
	if (n_dc == 0)
		return -SDR_MODEL_E_BAD_DC_COUNT;
	if (!time_ok(step_s) || !time_ok(mu_x))
		return -SDR_MODEL_E_BAD_TIME;
	*mean_s = (2.0 * n_dc - 2) * (step_s + mu_x);
	return 0;
}
