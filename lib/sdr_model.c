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

static const char *const kind_names[SDR_SCHEME_COUNT] = {
#define X(sym, name, doc) [SDR_SCHEME_##sym] = name,
	SDR_SCHEME_KINDS(X)
#undef X
};

/* Default advisor candidates: both SR variants, then XOR and MDS for each (k, m). */
static const struct sdr_scheme default_candidates[] = {
	{ SDR_SCHEME_SR, 0, 0 },	{ SDR_SCHEME_SR_NACK, 0, 0 },
	{ SDR_SCHEME_EC_XOR, 8, 2 },	{ SDR_SCHEME_EC_MDS, 8, 2 },
	{ SDR_SCHEME_EC_XOR, 16, 4 },	{ SDR_SCHEME_EC_MDS, 16, 4 },
	{ SDR_SCHEME_EC_XOR, 32, 4 },	{ SDR_SCHEME_EC_MDS, 32, 4 },
	{ SDR_SCHEME_EC_XOR, 32, 8 },	{ SDR_SCHEME_EC_MDS, 32, 8 },
	{ SDR_SCHEME_EC_XOR, 64, 8 },	{ SDR_SCHEME_EC_MDS, 64, 8 },
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

/* ---------------------------------------------------------------- schemes */

static int
scheme_is_ec(const struct sdr_scheme *s)
{
	return s->kind == SDR_SCHEME_EC_XOR || s->kind == SDR_SCHEME_EC_MDS;
}

int
sdr_scheme_check(const struct sdr_scheme *s)
{
	if (s == NULL || (unsigned int)s->kind >= SDR_SCHEME_COUNT)
		return -SDR_MODEL_E_BAD_SCHEME;
	if (!scheme_is_ec(s))
		return 0;
	if (s->k == 0 || s->k > SDR_SCHEME_MAX_KM)
		return -SDR_MODEL_E_BAD_K;
	if (s->m == 0 || s->m > SDR_SCHEME_MAX_KM)
		return -SDR_MODEL_E_BAD_M;
	if (s->kind == SDR_SCHEME_EC_XOR && s->k % s->m != 0)
		return -SDR_MODEL_E_XOR_GROUPS;
	return 0;
}

/* Decimal digits up to @p stop; values above SDR_SCHEME_MAX_KM saturate to MAX + 1. */
static const char *
parse_km(const char *s, char stop, unsigned int *v)
{
	unsigned int x = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned int)(*p - '0');
		if (x > SDR_SCHEME_MAX_KM)
			x = SDR_SCHEME_MAX_KM + 1;
	}
	if (p == s || *p != stop)
		return NULL;
	*v = x;
	return p;
}

int
sdr_scheme_parse(const char *name, struct sdr_scheme *out)
{
	struct sdr_scheme s = { SDR_SCHEME_SR, 0, 0 };
	unsigned int k, m;
	const char *p;
	int rc;

	if (name == NULL)
		return -SDR_MODEL_E_BAD_SCHEME;
	if (strcmp(name, "sr") == 0 || strcmp(name, "sr-nack") == 0) {
		s.kind = name[2] == '\0' ? SDR_SCHEME_SR : SDR_SCHEME_SR_NACK;
		*out = s;
		return 0;
	}
	if (strncmp(name, "ec-xor:", 7) == 0)
		s.kind = SDR_SCHEME_EC_XOR;
	else if (strncmp(name, "ec-mds:", 7) == 0)
		s.kind = SDR_SCHEME_EC_MDS;
	else
		return -SDR_MODEL_E_BAD_SCHEME;
	p = parse_km(name + 7, ',', &k);
	if (p == NULL || parse_km(p + 1, '\0', &m) == NULL)
		return -SDR_MODEL_E_BAD_SCHEME;
	if (k == 0 || k > SDR_SCHEME_MAX_KM)
		return -SDR_MODEL_E_BAD_K;
	if (m == 0 || m > SDR_SCHEME_MAX_KM)
		return -SDR_MODEL_E_BAD_M;
	s.k = (uint16_t)k;
	s.m = (uint16_t)m;
	rc = sdr_scheme_check(&s);
	if (rc == 0)
		*out = s;
	return rc;
}

const char *
sdr_scheme_format(const struct sdr_scheme *s, char *buf, size_t len)
{
	if (s == NULL || (unsigned int)s->kind >= SDR_SCHEME_COUNT)
		snprintf(buf, len, "invalid");
	else if (scheme_is_ec(s))
		snprintf(buf, len, "%s:%u,%u", kind_names[s->kind], s->k, s->m);
	else
		snprintf(buf, len, "%s", kind_names[s->kind]);
	return buf;
}

double
sdr_scheme_parity_share(const struct sdr_scheme *s)
{
	if (!scheme_is_ec(s) || s->k + s->m == 0)
		return 0;
	return (double)s->m / (double)(s->k + s->m);
}

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
	if (!scheme_is_ec(s)) {
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
	chunks = p->msg_bytes / p->chunk_bytes + (p->msg_bytes % p->chunk_bytes != 0);
	d->chunks = (double)chunks;
	d->pkts_per_chunk = (double)(p->chunk_bytes / p->mtu_bytes);
	d->t_inj_s = (double)p->chunk_bytes * 8 / p->bandwidth_bps;
	d->p_chunk = p->drop_unit == SDR_MODEL_DROP_CHUNK ?
			     p->drop : sdr_model_chunk_drop(p->drop, d->pkts_per_chunk);
	d->rto_s = p->rtt_s + p->alpha * p->rtt_s;
	d->penalty_s = d->rto_s + d->t_inj_s;
	d->beta = isnan(p->beta) ? p->alpha / 2 : p->beta;
	return 0;
}

/* ---------------------------------------------------------------- SR tail sum */

/*
 * Chunk i = M - d (lag d = 0..M-1 behind the last) is done at time M T + s when it has
 * needed at most r_d = floor((s + d T) / O) retransmissions: probability 1 - P^(r_d + 1).
 * Lags with the same r_d form a contiguous range, so -log F(M T + s) is a short sum over
 * groups: sum_q count_q * -log1p(-P^(q + 1)).
 */
struct sr_tail {
	double m;		/* chunks */
	double t;		/* T_INJ */
	double o;		/* O = RTO + T_INJ */
	double p;		/* P */
	double ln_p;
	uint64_t work;		/* groups summed so far, against SR_WORK_BUDGET */
	double lg[SR_LOG_TABLE];	/* -log1p(-P^(q + 1)) */
};

static void
sr_tail_init(struct sr_tail *c, double m, double t, double o, double p)
{
	c->m = m;
	c->t = t;
	c->o = o;
	c->p = p;
	c->ln_p = log(p);
	c->work = 0;
	for (int q = 0; q < SR_LOG_TABLE; q++)
		c->lg[q] = -log1p(-exp((q + 1) * c->ln_p));
}

/* -log(1 - P^(q + 1)) */
static double
sr_neg_log_ok(const struct sr_tail *c, double q)
{
	if (q < SR_LOG_TABLE)
		return c->lg[(int)q];
	return -log1p(-exp((q + 1) * c->ln_p));
}

/* -log P(max_i X_i <= M T + s) for s >= 0. Counts its groups in c->work. */
static double
sr_neg_log_cdf(struct sr_tail *c, double s)
{
	double q = floor(s / c->o), lo = 0, acc = 0;

	while (lo < c->m) {
		c->work++;
		double hi = ceil(((q + 1) * c->o - s) / c->t);

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
		q = fmax(q + 1, floor((s + lo * c->t) / c->o));
	}
	return acc;
}

/* Rounds of O after M T until the tail is below tolerance (an estimate for the step size). */
static double
sr_rounds_estimate(const struct sr_tail *c, double rtt)
{
	double e = c->m * c->t + rtt;
	double r = log(SR_TAIL_TOL * e * (1 - c->p) / (c->o * c->m)) / c->ln_p;

	return r > 1 ? ceil(r) + 1 : 2;
}

/*
 * E[max_i X_i] - M T = integral over s >= 0 of 1 - F(M T + s), by the midpoint rule with
 * a step of O / K. It stops once the rest, bounded by O * lambda / (1 - P) with lambda =
 * -log F (lambda drops at least by P per round), is below SR_TAIL_TOL of the total.
 */
static int
sr_tail_integral(struct sr_tail *c, double rtt, double *out)
{
	double rounds = sr_rounds_estimate(c, rtt), h, sum = 0;
	double k = SR_STEPS_PER_ROUND;
	uint64_t n;

	if (rounds * SR_MIN_STEPS_PER_ROUND > SR_STEP_BUDGET)
		return -SDR_MODEL_E_TOO_LOSSY;
	if (rounds * k > SR_STEP_BUDGET)
		k = floor(SR_STEP_BUDGET / rounds);
	h = c->o / k;
	for (n = 0; n < 2 * (uint64_t)SR_STEP_BUDGET; n++) {
		double lambda = sr_neg_log_cdf(c, ((double)n + 0.5) * h);

		sum += -expm1(-lambda) * h;
		if (lambda * c->o / (1 - c->p) <= SR_TAIL_TOL * (c->m * c->t + rtt + sum)) {
			*out = sum;
			return 0;
		}
		/* many chunks per RTO round (an RTO near zero) make every step long: stop */
		if (c->work > SR_WORK_BUDGET)
			return -SDR_MODEL_E_TOO_COSTLY;
	}
	return -SDR_MODEL_E_TOO_LOSSY;
}

/* E[T_SR] for a whole number of chunks (0 gives RTT). */
static int
sr_mean_int(double m, double t, double rtt, double rto, double p, double *mean)
{
	struct sr_tail c;
	double tail;
	int rc;

	if (m == 0 || p == 0) {
		*mean = m * t + rtt;
		return 0;
	}
	sr_tail_init(&c, m, t, rto + t, p);
	rc = sr_tail_integral(&c, rtt, &tail);
	if (rc != 0)
		return rc;
	*mean = m * t + tail + rtt;
	return 0;
}

int
sdr_model_sr_mean(double chunks, double t_inj_s, double rtt_s, double rto_s, double p_chunk,
		  double *mean_s)
{
	double lo, hi, a, b;
	int rc;

	if (!(chunks >= 0 && chunks <= SR_MAX_CHUNKS))
		return -SDR_MODEL_E_BAD_CHUNKS;
	if (!rate_ok(t_inj_s) || !time_ok(rtt_s) || !time_ok(rto_s))
		return -SDR_MODEL_E_BAD_TIME;
	if (!(p_chunk >= 0 && p_chunk < 1))
		return -SDR_MODEL_E_BAD_DROP;
	lo = floor(chunks);
	hi = ceil(chunks);
	rc = sr_mean_int(lo, t_inj_s, rtt_s, rto_s, p_chunk, &a);
	if (rc != 0 || hi == lo) {
		*mean_s = a;
		return rc;
	}
	rc = sr_mean_int(hi, t_inj_s, rtt_s, rto_s, p_chunk, &b);
	if (rc != 0)
		return rc;
	*mean_s = a + (chunks - lo) * (b - a);
	return 0;
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

int
sdr_model_ec_decode(const struct sdr_scheme *s, double p_chunk, struct sdr_model_decode *out)
{
	int rc;

	rc = sdr_scheme_check(s);
	if (rc != 0)
		return rc;
	if (!scheme_is_ec(s))
		return -SDR_MODEL_E_BAD_SCHEME;
	if (!(p_chunk >= 0 && p_chunk < 1))
		return -SDR_MODEL_E_BAD_DROP;
	sub_decode(s, s->k, s->m, p_chunk, out);
	return 0;
}

/*
 * EC with SR fallback. The message is L = ceil(M / k) submessages: M div k full ones with m
 * parity chunks each, and a short last one of M mod k chunks with the parity the
 * reliability layer gives it (sdr_rel_sub_parity()). Undecodable submessages are repeated
 * under SR after the fallback timeout.
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
	double fallback, ln_nofail;
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
	/* the fallback repeats the chunks of the submessages that failed */
	rc = sdr_model_sr_mean(nfull * full.fail * s->k + part.fail * kk, d->t_inj_s, p->rtt_s,
			       d->rto_s, d->p_chunk, &fallback);
	if (rc != 0)
		return rc;
	out->mean_s = (d->chunks + parity) * d->t_inj_s +
		      out->p_fallback * (p->rtt_s + d->beta * p->rtt_s) + fallback;
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
		rc = sdr_model_sr_mean(d.chunks, d.t_inj_s, p->rtt_s, d.rto_s, d.p_chunk,
				       &c.mean_s);
		break;
	case SDR_SCHEME_SR_NACK:
		rc = sdr_model_sr_mean(d.chunks, d.t_inj_s, p->rtt_s, p->rtt_s, d.p_chunk,
				       &c.mean_s);
		break;
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
