/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion-time model: SR tail sum against an exact piecewise integral and a Monte Carlo
 * run, EC decode probabilities against enumeration of every loss pattern, monotonicity,
 * the advisor's ordering, errors, scheme names and the published qualitative findings.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "quantile.h"
#include "sdr_conn.h"
#include "sdr_model.h"
#include "sdr_rel.h"
#include "sdr_sim.h"

#define KIB	1024ull
#define MIB	(1024ull * KIB)
#define GIB	(1024ull * MIB)

/* 64 KiB chunks at 400 Gbit/s */
#define T_400G	(65536.0 * 8 / 400e9)
#define RTT	25e-3

static void
assert_rel(double got, double want, double tol)
{
	double rel = fabs(got - want) / fabs(want);

	if (!(rel <= tol))
		fail_msg("got %.12g, want %.12g: relative error %.3g > %.3g", got, want, rel, tol);
}

static struct sdr_scheme
scheme(const char *name)
{
	struct sdr_scheme s;

	assert_int_equal(sdr_scheme_parse(name, &s), 0);
	return s;
}

/* The published setting: 400 Gbit/s, 25 ms, 64 KiB chunks, 4 KiB MTU, alpha 2. */
static struct sdr_model_params
paper_point(uint64_t bytes, double drop, enum sdr_model_drop_unit unit)
{
	struct sdr_model_params p;

	sdr_model_params_init(&p);
	p.msg_bytes = bytes;
	p.drop = drop;
	p.drop_unit = unit;
	return p;
}

static struct sdr_model_choice
eval(const struct sdr_model_params *p, const char *name)
{
	struct sdr_scheme s = scheme(name);
	struct sdr_model_choice c;
	int rc = sdr_model_eval(p, &s, &c);

	if (rc != 0)
		fail_msg("%s: %s", name, sdr_model_strerror(rc));
	return c;
}

/* ---------------------------------------------------------------- references */

/*
 * Exact E[max_i X_i]: F is constant between the lattice points i T + j O, so integrate
 * 1 - F interval by interval, evaluating F directly in each.
 */
static double
sr_exact(unsigned int m, double t, double o, double p)
{
	unsigned int rounds = 1, n = 0;
	double *b, sum = m * t;

	while (m * pow(p, rounds) > 1e-18)
		rounds++;
	b = malloc(sizeof(*b) * m * (rounds + 1));
	assert_non_null(b);
	for (unsigned int i = 1; i <= m; i++)
		for (unsigned int j = 0; j <= rounds; j++)
			b[n++] = i * t + j * o;
	sdr_sort_doubles(b, n);
	for (unsigned int a = 0; a + 1 < n; a++) {
		double lo = fmax(b[a], m * t), hi = b[a + 1], mid, f = 1;

		if (hi <= lo)
			continue;
		mid = (lo + hi) / 2;
		for (unsigned int i = 1; i <= m; i++)
			f *= 1 - pow(p, floor((mid - i * t) / o) + 1);
		sum += (1 - f) * (hi - lo);
	}
	free(b);
	return sum;
}

/* xorshift64*: a fixed, portable stream */
static uint64_t rng_state;

static double
rng_uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-53 + 0x1p-54;
}

/* Monte Carlo of T_SR: chunk i done at i T + O (Y_i - 1), Y_i geometric. */
static double
sr_monte_carlo(unsigned int m, double t, double rto, double p, unsigned int trials)
{
	double o = rto + t, ln_p = log(p), sum = 0;

	for (unsigned int k = 0; k < trials; k++) {
		double max = 0;

		for (unsigned int i = 1; i <= m; i++) {
			double x = i * t + o * floor(log(rng_uniform()) / ln_p);

			if (x > max)
				max = x;
		}
		sum += max + RTT;
	}
	return sum / trials;
}

/* Decode probability by enumerating every loss pattern of k + m chunks. */
static void
decode_enumerate(const struct sdr_scheme *s, double p, double *ok, double *fail)
{
	unsigned int n = s->k + s->m;

	*ok = *fail = 0;
	for (uint32_t pat = 0; pat < (1u << n); pat++) {
		unsigned int lost = (unsigned int)__builtin_popcount(pat), decodes = 1;
		double w = pow(p, lost) * pow(1 - p, n - lost);

		if (s->kind == SDR_SCHEME_EC_MDS) {
			decodes = lost <= s->m;
		} else {
			/* data chunk j in group j mod m; parity chunk k + i closes group i */
			for (unsigned int g = 0; g < s->m; g++) {
				unsigned int in_group = (pat >> (s->k + g)) & 1;

				for (unsigned int j = g; j < s->k; j += s->m)
					in_group += (pat >> j) & 1;
				if (in_group > 1)
					decodes = 0;
			}
		}
		if (decodes)
			*ok += w;
		else
			*fail += w;
	}
}

/* ---------------------------------------------------------------- SR */

static void
test_chunk_drop(void **state)
{
	(void)state;
	assert_float_equal(sdr_model_chunk_drop(0.25, 1), 0.25, 1e-15);
	assert_rel(sdr_model_chunk_drop(1e-4, 16), 1 - pow(1 - 1e-4, 16), 1e-12);
	assert_rel(sdr_model_chunk_drop(1e-13, 16), 1.6e-12, 1e-9);
	assert_true(sdr_model_chunk_drop(0, 16) == 0);
}

static void
test_sr_lossless_exact(void **state)
{
	static const double chunks[] = { 1, 16, 1000, 1 << 20 };
	double got;

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(sdr_model_sr_mean(chunks[i], T_400G, RTT, 3 * RTT, 0, &got), 0);
		assert_true(got == chunks[i] * T_400G + RTT);
	}
	assert_int_equal(sdr_model_sr_mean(0, T_400G, RTT, 3 * RTT, 0.2, &got), 0);
	assert_true(got == RTT);
}

static void
test_sr_one_chunk_closed_form(void **state)
{
	static const double ps[] = { 1e-9, 1e-3, 0.1, 0.5, 0.9 };
	double got, o = 3 * RTT + T_400G;

	(void)state;
	/* M = 1: E = T + O P / (1 - P) + RTT */
	for (unsigned int i = 0; i < 5; i++) {
		assert_int_equal(sdr_model_sr_mean(1, T_400G, RTT, 3 * RTT, ps[i], &got), 0);
		assert_rel(got, T_400G + o * ps[i] / (1 - ps[i]) + RTT, 1e-9);
	}
}

static void
test_sr_vs_exact_integral(void **state)
{
	static const unsigned int ms[] = { 2, 5, 16, 64 };
	static const double ps[] = { 1e-3, 0.05, 0.3 };
	static const double ts[] = { T_400G, 0.01, 0.03, 0.2 };

	(void)state;
	for (unsigned int a = 0; a < 4; a++)
		for (unsigned int b = 0; b < 3; b++)
			for (unsigned int c = 0; c < 4; c++) {
				double got, want;

				assert_int_equal(sdr_model_sr_mean(ms[a], ts[c], RTT, 3 * RTT,
								   ps[b], &got), 0);
				want = sr_exact(ms[a], ts[c], 3 * RTT + ts[c], ps[b]) + RTT;
				assert_rel(got, want, 5e-4);
			}
}

static void
test_sr_vs_monte_carlo(void **state)
{
	static const unsigned int ms[] = { 1, 16, 256 };
	static const double ps[] = { 1e-3, 1e-2, 0.1, 0.3 };

	(void)state;
	rng_state = 20250505;
	for (unsigned int a = 0; a < 3; a++)
		for (unsigned int b = 0; b < 4; b++) {
			double got, mc;

			assert_int_equal(sdr_model_sr_mean(ms[a], T_400G, RTT, 3 * RTT, ps[b],
							   &got), 0);
			mc = sr_monte_carlo(ms[a], T_400G, 3 * RTT, ps[b], 20000);
			assert_rel(got, mc, 0.02);
			/* NACK stand-in: RTO = RTT */
			assert_int_equal(sdr_model_sr_mean(ms[a], T_400G, RTT, RTT, ps[b], &got), 0);
			mc = sr_monte_carlo(ms[a], T_400G, RTT, ps[b], 20000);
			assert_rel(got, mc, 0.02);
		}
}

static void
test_sr_large_and_fractional(void **state)
{
	double a, b, mid, big, prev = 0;

	(void)state;
	/* 2^20 chunks: finite, above the lossless time, growing with P */
	for (double p = 1e-9; p < 0.5; p *= 10) {
		assert_int_equal(sdr_model_sr_mean(1 << 20, T_400G, RTT, 3 * RTT, p, &big), 0);
		assert_true(big > (1 << 20) * T_400G + RTT);
		assert_true(big > prev);
		prev = big;
	}
	/* non-integer counts interpolate; 0 is RTT */
	assert_int_equal(sdr_model_sr_mean(2, T_400G, RTT, 3 * RTT, 0.1, &a), 0);
	assert_int_equal(sdr_model_sr_mean(3, T_400G, RTT, 3 * RTT, 0.1, &b), 0);
	assert_int_equal(sdr_model_sr_mean(2.25, T_400G, RTT, 3 * RTT, 0.1, &mid), 0);
	assert_rel(mid, a + 0.25 * (b - a), 1e-12);
	assert_int_equal(sdr_model_sr_mean(1, T_400G, RTT, 3 * RTT, 0.1, &b), 0);
	assert_int_equal(sdr_model_sr_mean(0.5, T_400G, RTT, 3 * RTT, 0.1, &mid), 0);
	assert_rel(mid, (RTT + b) / 2, 1e-12);
	/* so close to 1 that the tail cannot be summed */
	assert_int_equal(sdr_model_sr_mean(1000, T_400G, RTT, 3 * RTT, 1 - 1e-9, &a),
			 -SDR_MODEL_E_TOO_LOSSY);
	/* an RTO of zero: every chunk its own group at every step; refused, not summed for
	 * minutes (the dataplane asks the model on its poll loop) */
	assert_int_equal(sdr_model_sr_mean(1e6, T_400G, 0, 0, 0.99, &a),
			 -SDR_MODEL_E_TOO_COSTLY);
}

/* ---------------------------------------------------------------- EC */

static void
test_decode_vs_enumeration(void **state)
{
	static const char *const names[] = { "ec-mds:4,2", "ec-xor:4,2", "ec-xor:6,3",
					     "ec-mds:6,3", "ec-xor:8,1" };
	static const double ps[] = { 1e-6, 1e-3, 0.05, 0.3, 0.8 };

	(void)state;
	for (unsigned int a = 0; a < 5; a++)
		for (unsigned int b = 0; b < 5; b++) {
			struct sdr_scheme s = scheme(names[a]);
			struct sdr_model_decode d;
			double ok, fail;

			assert_int_equal(sdr_model_ec_decode(&s, ps[b], &d), 0);
			decode_enumerate(&s, ps[b], &ok, &fail);
			assert_rel(d.ok, ok, 1e-11);
			assert_rel(d.fail, fail, 1e-11);
		}
}

static void
test_decode_tiny_and_closed_forms(void **state)
{
	struct sdr_scheme mds = scheme("ec-mds:32,8"), xor = scheme("ec-xor:32,8");
	struct sdr_model_decode d;
	double p = 1e-9, q = 0.01;

	(void)state;
	/* MDS 32,8 fails with 9 of 40 lost: ~C(40,9) p^9, far below double epsilon */
	assert_int_equal(sdr_model_ec_decode(&mds, p, &d), 0);
	assert_rel(d.fail, 273438880.0 * pow(p, 9), 1e-6);
	assert_true(d.ok == 1);
	/* XOR 32,8: eight groups of five, each fails with two losses: ~8 C(5,2) p^2 */
	assert_int_equal(sdr_model_ec_decode(&xor, p, &d), 0);
	assert_rel(d.fail, 80 * p * p, 1e-6);
	/* the closed forms of the reference at a moderate p */
	assert_int_equal(sdr_model_ec_decode(&xor, q, &d), 0);
	assert_rel(d.ok, pow(pow(1 - q, 5) + 5 * q * pow(1 - q, 4), 8), 1e-12);
	assert_int_equal(sdr_model_ec_decode(&mds, 0, &d), 0);
	assert_true(d.ok == 1 && d.fail == 0);
}

static void
test_ec_lossless(void **state)
{
	struct sdr_model_params p = paper_point(1000 * 65536 + 1, 0, SDR_MODEL_DROP_PACKET);
	struct sdr_model_choice c;

	(void)state;
	/*
	 * M = 1001, parity ceil(1001 * 8 / 32) = 251; the last submessage (9 chunks, 3
	 * parity) loses nothing, so the message is done before its parity goes out
	 */
	c = eval(&p, "ec-mds:32,8");
	assert_rel(c.mean_s, (1001 + 251 - 3) * T_400G + RTT, 1e-12);
	assert_true(c.p_fallback == 0 && c.exp_failures == 0);
	assert_rel(c.parity_share, 0.2, 1e-15);
	/* XOR 16,4: 62 full submessages with 4 parity each, and a last one of 9 chunks, which
	 * has data in all 4 groups and so needs all 4 parity chunks (sdr_rel_sub_parity) */
	c = eval(&p, "ec-xor:16,4");
	assert_rel(c.mean_s, (1001 + 62 * 4) * T_400G + RTT, 1e-12);
	/* SR: the last chunk holds one packet, 1/16 of a chunk's injection */
	c = eval(&p, "sr");
	assert_rel(c.mean_s, (1000 + 1.0 / 16) * T_400G + RTT, 1e-15);
}

/* sum_{i > j} (i - j) C(n, i) p^i (1 - p)^(n - i), term by term */
static double
excess(unsigned int n, unsigned int j, double p)
{
	double sum = 0, c = 1;

	for (unsigned int i = 0; i <= n; i++) {
		if (i > j)
			sum += (i - j) * c * pow(p, i) * pow(1 - p, n - i);
		c = c * (n - i) / (i + 1);
	}
	return sum;
}

/*
 * E[T_EC] = (M + parity - m_last + wait) T + P_fb (RTT + beta RTT) + P^(M + parity) RTO
 *	     + E[fallback]: the base written out here; the fallback, an SR over the failed
 *	     submessages each needing any e of its D resent chunks, lies between one RTT (every
 *	     resend arrives at once) and SR over the needed chunks one by one, each lost again
 *	     with P (needing particular chunks, not any e of D, is slower).
 */
static void
test_ec_formula(void **state)
{
	struct sdr_model_params p = paper_point(128 * MIB, 0.05, SDR_MODEL_DROP_CHUNK);
	struct sdr_scheme s = scheme("ec-mds:32,8");
	struct sdr_model_decode d;
	struct sdr_model_choice c;
	double l = 2048 / 32, sr, wait = 0, need = l * excess(40, 8, 0.05), base, fallback;
	struct sdr_model_sr a = { .t_inj_s = T_400G, .rtt_s = RTT, .first_s = 3 * RTT + T_400G,
				  .last_s = 3 * RTT + T_400G, .repeat_s = 3 * RTT + T_400G,
				  .drop = 0.05, .lost_before = 1 };

	(void)state;
	p.beta = 0.5;
	assert_int_equal(sdr_model_ec_decode(&s, 0.05, &d), 0);
	/* per chunk, a chunk lost once is lost again with P: plain SR over the chunks */
	assert_int_equal(sdr_model_sr_mean(need, T_400G, RTT, 3 * RTT, 0.05, &sr), 0);
	a.chunks = need;
	assert_int_equal(sdr_model_sr_mean_ex(&a, &wait), 0);
	assert_rel(wait, sr, 1e-12);
	/* the last submessage waits for one parity chunk per data chunk lost, up to 8 */
	wait = 0;
	for (unsigned int j = 1; j <= 8; j++)	/* P(D >= j) = excess beyond j - 1 - beyond j */
		wait += excess(32, j - 1, 0.05) - excess(32, j, 0.05);
	c = eval(&p, "ec-mds:32,8");
	assert_rel(c.exp_failures, l * d.fail, 1e-12);
	assert_rel(c.p_fallback, 1 - pow(d.ok, l), 1e-9);
	base = (2048 + 512 - 8 + wait) * T_400G + c.p_fallback * 1.5 * RTT +
	       pow(0.05, 2048 + 512) * 3 * RTT;
	fallback = c.mean_s - base;
	if (!(fallback > RTT && fallback < sr))
		fail_msg("fallback %.4g s: not between RTT %.4g and SR over the needed chunks %.4g",
			 fallback, RTT, sr);
}

static void
test_monotonic(void **state)
{
	static const char *const names[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8",
					     "ec-mds:8,2" };
	static const uint64_t sizes[] = { 128 * KIB, MIB, 8 * MIB, 128 * MIB, GIB, 8 * GIB };

	(void)state;
	for (unsigned int a = 0; a < 5; a++) {
		for (unsigned int b = 0; b < 6; b++) {
			double prev = 0;

			for (double d = 1e-8; d < 0.05; d *= 2) {
				struct sdr_model_params p = paper_point(sizes[b], d,
									SDR_MODEL_DROP_PACKET);
				double t = eval(&p, names[a]).mean_s;

				assert_true(t >= prev);
				prev = t;
			}
		}
		for (double d = 1e-7; d < 0.05; d *= 10) {
			double prev = 0;

			/*
			 * Growing with size, except EC below one submessage: a 2-chunk message gets
			 * one parity chunk (its share of m), a 16-chunk one four, and at 1e-3 the
			 * first falls back a little more often than the second.
			 */
			for (unsigned int b = a >= 2 ? 1 : 0; b < 6; b++) {
				struct sdr_model_params p = paper_point(sizes[b], d,
									SDR_MODEL_DROP_PACKET);
				double t = eval(&p, names[a]).mean_s;

				assert_true(t > prev);
				prev = t;
			}
		}
	}
	/* SR-NACK is SR with a shorter RTO: never slower */
	for (double d = 1e-7; d < 0.05; d *= 10) {
		struct sdr_model_params p = paper_point(GIB, d, SDR_MODEL_DROP_PACKET);

		assert_true(eval(&p, "sr-nack").mean_s <= eval(&p, "sr").mean_s);
	}
}

/*
 * Erasure codes at high loss (4 % to 12 % per packet, 16 packets a chunk): when the likeliest
 * number of chunks a submessage loses is well past m + 1, the fallback's repair is still
 * counted whole, and the time only grows with the loss. (ec-mds:64,8's first term past m
 * falls below 1e-15 of the failures at 5.3 % per packet: the sum stopped there, and the
 * time fell from 150 to 78 ms.)
 */
static void
test_monotonic_high_loss(void **state)
{
	static const char *const names[] = { "ec-mds:64,8", "ec-mds:32,8", "ec-xor:32,8" };

	(void)state;
	for (unsigned int a = 0; a < 3; a++) {
		double prev = 0;

		for (double d = 0.04; d < 0.12; d += 0.005) {
			struct sdr_model_params p = paper_point(128 * MIB, d, SDR_MODEL_DROP_PACKET);
			double t;

			p.bandwidth_bps = 400e9;
			p.rtt_s = 0.025;
			t = eval(&p, names[a]).mean_s;
			if (t < prev)
				fail_msg("%s at %.3f per packet: %.1f ms, less than %.1f ms before",
					 names[a], d, t * 1e3, prev * 1e3);
			prev = t;
		}
	}
}

static void
test_allreduce(void **state)
{
	double t;

	(void)state;
	assert_int_equal(sdr_model_allreduce(4, 0.1, 0.05, &t), 0);
	assert_rel(t, 6 * 0.15, 1e-15);
	assert_int_equal(sdr_model_allreduce(1, 0.1, 0.05, &t), 0);
	assert_true(t == 0);
	assert_int_equal(sdr_model_allreduce(0, 0.1, 0.05, &t), -SDR_MODEL_E_BAD_DC_COUNT);
	assert_int_equal(sdr_model_allreduce(2, -1, 0.05, &t), -SDR_MODEL_E_BAD_TIME);
	assert_int_equal(sdr_model_allreduce(2, 1, NAN, &t), -SDR_MODEL_E_BAD_TIME);
}

/* ---------------------------------------------------------------- advisor */

static void
test_encode_cores(void **state)
{
	struct sdr_model_rates r;
	struct sdr_scheme s;
	double c;

	(void)state;
	/* 400 Gbit/s, 80 % data: 40 GB/s over 6.5 GB/s per core */
	s = scheme("ec-mds:32,8");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_rel(c, 40e9 / 6.5e9, 1e-12);
	s = scheme("ec-xor:32,8");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_rel(c, 40e9 / 50e9, 1e-12);
	/* m = 2 and 4 hit the table; m = 16 scales from m = 8 */
	s = scheme("ec-mds:8,2");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_rel(c, 40e9 / 28e9, 1e-12);
	s = scheme("ec-mds:64,16");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_rel(c, 40e9 / 3.25e9, 1e-12);
	/* m = 6: time per byte halfway between m = 4 and m = 8 */
	s = scheme("ec-mds:24,6");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_rel(c, 40e9 * (0.5 / 15e9 + 0.5 / 6.5e9), 1e-12);
	s = scheme("sr");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, NULL, &c), 0);
	assert_true(c == 0);
	/* measured rates from the caller */
	sdr_model_rates_default(&r);
	r.mds[2].bytes_per_s = 10e9;
	s = scheme("ec-mds:32,8");
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, &r, &c), 0);
	assert_rel(c, 4, 1e-12);
	r.mds[2].m = 3;
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, &r, &c), -SDR_MODEL_E_BAD_RATES);
	sdr_model_rates_default(&r);
	r.xor_bytes_per_s = 0;
	assert_int_equal(sdr_model_encode_cores(&s, 400e9, &r, &c), -SDR_MODEL_E_BAD_RATES);
}

static struct sdr_model_choice
choice(const char *name, double mean, double cores)
{
	struct sdr_model_choice c = { .scheme = scheme(name), .mean_s = mean,
				      .encode_cores = cores };

	c.parity_share = sdr_scheme_parity_share(&c.scheme);
	return c;
}

static void
test_rank_rule(void **state)
{
	struct sdr_model_choice c[5];
	char buf[SDR_SCHEME_NAME_MAX];

	(void)state;
	/* within 1 %: lower parity share wins over a lower mean */
	c[0] = choice("ec-mds:32,8", 1.000, 6);
	c[1] = choice("ec-mds:64,8", 1.009, 7);
	c[2] = choice("sr", 1.2, 0);
	c[3] = choice("ec-mds:8,2", 1.005, 1.8);
	sdr_model_rank(c, 4);
	assert_string_equal(sdr_scheme_format(&c[0].scheme, buf, sizeof(buf)), "ec-mds:64,8");
	assert_string_equal(sdr_scheme_format(&c[1].scheme, buf, sizeof(buf)), "ec-mds:32,8");
	assert_string_equal(sdr_scheme_format(&c[2].scheme, buf, sizeof(buf)), "ec-mds:8,2");
	assert_string_equal(sdr_scheme_format(&c[3].scheme, buf, sizeof(buf)), "sr");
	/* same share: fewer cores; outside 1 %: the mean decides */
	c[0] = choice("ec-mds:32,8", 1.000, 6);
	c[1] = choice("ec-xor:32,8", 1.004, 0.8);
	c[2] = choice("sr-nack", 1.011, 0);
	sdr_model_rank(c, 3);
	assert_string_equal(sdr_scheme_format(&c[0].scheme, buf, sizeof(buf)), "ec-xor:32,8");
	assert_string_equal(sdr_scheme_format(&c[1].scheme, buf, sizeof(buf)), "ec-mds:32,8");
	assert_string_equal(sdr_scheme_format(&c[2].scheme, buf, sizeof(buf)), "sr-nack");
	/* equal means keep the input order (stable) */
	c[0] = choice("sr", 1, 0);
	c[1] = choice("sr-nack", 1, 0);
	sdr_model_rank(c, 2);
	assert_int_equal(c[0].scheme.kind, SDR_SCHEME_SR);
	sdr_model_rank(c, 0);
}

static void
test_advise_points(void **state)
{
	struct sdr_model_choice out[SDR_MODEL_MAX_CANDIDATES];
	struct sdr_model_params p;
	char buf[SDR_SCHEME_NAME_MAX];
	unsigned int n_def;
	int n;

	(void)state;
	sdr_model_default_candidates(&n_def);
	assert_int_equal(n_def, 12);

	/* lossless 8 MiB: every scheme within 1 % (parity costs < 0.2 ms of 25 ms) -> sr */
	p = paper_point(8 * MIB, 0, SDR_MODEL_DROP_PACKET);
	n = sdr_model_advise(&p, out, SDR_MODEL_MAX_CANDIDATES);
	assert_int_equal(n, 12);
	assert_string_equal(sdr_scheme_format(&out[0].scheme, buf, sizeof(buf)), "sr");
	assert_string_equal(sdr_scheme_format(&out[1].scheme, buf, sizeof(buf)), "sr-nack");
	for (int i = 2; i < n; i++)
		assert_true(out[i].mean_s >= out[i - 1].mean_s);

	/*
	 * 128 MiB at 1e-3 per packet (P = 1.6 %): SR pays whole RTOs; XOR fails often (a group
	 * of 9 loses two with ~1 %); MDS 64,8 rarely loses 9 of 72 and sends the least
	 * parity: (2048 + 256) T + RTT = 28.0 ms.
	 */
	p = paper_point(128 * MIB, 1e-3, SDR_MODEL_DROP_PACKET);
	n = sdr_model_advise(&p, out, 3);
	assert_int_equal(n, 3);
	assert_string_equal(sdr_scheme_format(&out[0].scheme, buf, sizeof(buf)), "ec-mds:64,8");
	assert_rel(out[0].mean_s, 2304 * T_400G + RTT, 1e-3);

	/* 32 GiB at 1e-7: injection-bound, parity is pure cost -> an SR variant */
	p = paper_point(32 * GIB, 1e-7, SDR_MODEL_DROP_PACKET);
	n = sdr_model_advise(&p, out, 1);
	assert_int_equal(n, 1);
	assert_true(out[0].scheme.kind == SDR_SCHEME_SR || out[0].scheme.kind == SDR_SCHEME_SR_NACK);

	/* a caller's candidate list */
	{
		static const struct sdr_scheme two[] = {
			{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_EC_MDS, 32, 8, 0 },
		};

		p = paper_point(128 * MIB, 1e-4, SDR_MODEL_DROP_PACKET);
		p.candidates = two;
		p.n_candidates = 2;
		n = sdr_model_advise(&p, out, 8);
		assert_int_equal(n, 2);
		assert_int_equal(out[0].scheme.kind, SDR_SCHEME_EC_MDS);
		p.n_candidates = 0;
		assert_int_equal(sdr_model_advise(&p, out, 8), -SDR_MODEL_E_BAD_CANDIDATES);
		p.n_candidates = SDR_MODEL_MAX_CANDIDATES + 1;
		assert_int_equal(sdr_model_advise(&p, out, 8), -SDR_MODEL_E_BAD_CANDIDATES);
	}
}

/* ---------------------------------------------------------------- published findings */

static void
test_finding_mds_beats_sr_128m(void **state)
{
	static const double drops[] = { 1e-4, 1e-3, 1e-2 };

	(void)state;
	/* holds under both readings of the drop rate (per packet at 1e-2 only by ~10 %) */
	for (unsigned int u = 0; u < 2; u++)
		for (unsigned int i = 0; i < 3; i++) {
			struct sdr_model_params p = paper_point(128 * MIB, drops[i],
								(enum sdr_model_drop_unit)u);

			assert_true(eval(&p, "ec-mds:32,8").mean_s < eval(&p, "sr").mean_s);
		}
}

static void
test_finding_sr_wins_large_clean(void **state)
{
	static const uint64_t sizes[] = { 2 * GIB, 8 * GIB, 32 * GIB };
	static const double drops[] = { 1e-9, 1e-8, 1e-7 };

	(void)state;
	for (unsigned int u = 0; u < 2; u++)
		for (unsigned int i = 0; i < 3; i++)
			for (unsigned int j = 0; j < 3; j++) {
				struct sdr_model_params p = paper_point(sizes[i], drops[j],
									(enum sdr_model_drop_unit)u);
				double sr = eval(&p, "sr").mean_s;

				assert_true(sr < eval(&p, "ec-mds:32,8").mean_s);
				assert_true(sr < eval(&p, "ec-xor:32,8").mean_s);
			}
}

static void
test_finding_fallback(void **state)
{
	struct sdr_model_params p;

	(void)state;
	/* per packet, 128 MiB: XOR 32,8 crosses P_fallback = 0.5 between 1e-4 and 1e-3 */
	p = paper_point(128 * MIB, 1e-4, SDR_MODEL_DROP_PACKET);
	assert_true(eval(&p, "ec-xor:32,8").p_fallback < 0.5);
	p.drop = 1e-3;
	assert_true(eval(&p, "ec-xor:32,8").p_fallback > 0.5);
	assert_true(eval(&p, "ec-mds:32,8").p_fallback < 1e-5);
	/* per chunk, 128 MiB: MDS 32,8 stays decodable at 1e-2 */
	p = paper_point(128 * MIB, 1e-2, SDR_MODEL_DROP_CHUNK);
	assert_true(eval(&p, "ec-mds:32,8").p_fallback < 1e-6);
	/*
	 * Not reproduced (docs/model.md): per packet at 1e-2 a 64 KiB chunk is lost with
	 * 14.9 %, and MDS 32,8 falls back almost surely; per chunk, XOR 32,8 is still below
	 * 0.5 at 1e-3 (and at 1e-2) for 128 MiB.
	 */
	p = paper_point(128 * MIB, 1e-2, SDR_MODEL_DROP_PACKET);
	assert_true(eval(&p, "ec-mds:32,8").p_fallback > 0.5);
	p = paper_point(128 * MIB, 1e-3, SDR_MODEL_DROP_CHUNK);
	assert_true(eval(&p, "ec-xor:32,8").p_fallback < 0.5);
}

static void
test_finding_sr_growth_128m(void **state)
{
	struct sdr_model_params p = paper_point(128 * MIB, 0, SDR_MODEL_DROP_PACKET);
	double base = eval(&p, "sr").mean_s;

	(void)state;
	/*
	 * Per packet: 3x at 1e-4 holds; 10x at 1e-2 does not once a resend only needs the
	 * packets still missing (a chunk is lost twice with 0.16 %, not 2.2 %): 5x to 8x.
	 */
	p.drop = 1e-4;
	assert_true(eval(&p, "sr").mean_s > 3 * base);
	p.drop = 1e-2;
	assert_true(eval(&p, "sr").mean_s > 5 * base);
	assert_true(eval(&p, "sr").mean_s < 8 * base);
}

/* ---------------------------------------------------------------- against the simulator */

/* The simulator at one point, set up as tools/sdr-sim does: 2 Gbit/s, 25 ms, 64 KiB / 4 KiB. */
static void
sim_point(struct sdr_sim_cfg *c, const char *name, uint64_t bytes, double p_pkt)
{
	struct sdr_scheme s = scheme(name);

	memset(c, 0, sizeof(*c));
	sdr_conn_attr_default(&c->attr);
	c->attr.mtu = 4096;
	c->attr.chunk_size = 65536;
	c->attr.split = (struct sdr_imm_split){ 4, 28, 0 };
	c->attr.channels = 1;
	c->attr.generations = 1;
	c->attr.max_msg_size = bytes;
	c->attr.max_inflight = 1;
	if (s.kind == SDR_SCHEME_EC_XOR || s.kind == SDR_SCHEME_EC_MDS) {
		c->attr.ec_k = s.k;
		c->attr.ec_m = s.m;
	}
	sdr_rel_cfg_default(&c->rel, 25000000);
	c->rel.scheme = s;
	c->rel.rate_bps = 2e9;
	c->rel.bucket_bytes = 0;
	c->rel.pkt_overhead = 0;
	c->rel.ack_every_chunks = 1;
	c->rel.ack_every_ns = 0;
	c->rel.timer_slots = 4 * (uint32_t)(bytes / 65536) + 4096;
	c->link.bandwidth_bps = 2e9;
	c->link.delay_ns = 12500000;
	c->link.p_loss = p_pkt;
	c->link.ctrl_loss = 0;
	c->msg_len = bytes;
	c->messages = 1;
}

/*
 * The simulator loses packets, and a resend only needs the ones still missing: with SR
 * and no control loss, a chunk of N packets is sent again sum_{y >= 1} 1 - (1 - p^y)^N
 * times on average (0.60 at p = 0.05, N = 16), not P / (1 - P) (1.27) as when a resend
 * must carry every packet through again.
 */
static void
test_sim_resend_needs_missing_packets(void **state)
{
	struct sdr_sim_cfg c;
	struct sdr_sim_result r;
	double want = 0, per_chunk = 0, got = 0;
	const unsigned int trials = 200;

	(void)state;
	sim_point(&c, "sr", 64 * 65536, 0.05);
	for (unsigned int t = 0; t < trials; t++) {
		assert_int_equal(sdr_sim_run(&c, 1000 + t, NULL, &r, NULL), 0);
		assert_int_equal(r.ok, 1);
		got += (double)r.retransmitted;
	}
	got /= 64.0 * trials;
	for (int y = 1; y < 20; y++)
		want += -expm1(16 * log1p(-pow(0.05, y)));
	per_chunk = -expm1(16 * log1p(-0.05));
	per_chunk /= 1 - per_chunk;
	assert_true(fabs(want - 0.6012) < 1e-3);
	/* 12800 chunks: the standard error of the mean is about 0.005 */
	if (fabs(got - want) > 0.03)
		fail_msg("resends per chunk %.4f, want %.4f (whole-chunk loss: %.4f)", got, want,
			 per_chunk);
}

/*
 * The model's mean for scheme @p name and a message of @p bytes at 1e-2 per packet and
 * 2 Gbit/s within @p tol of the simulator's over 400 seeded trials.
 */
static void
model_near_sim(const char *name, uint64_t bytes, double tol)
{
	struct sdr_model_params p = paper_point(bytes, 1e-2, SDR_MODEL_DROP_PACKET);
	struct sdr_sim_cfg c;
	struct sdr_sim_result r;
	double sim = 0, model;

	p.bandwidth_bps = 2e9;
	model = eval(&p, name).mean_s;
	sim_point(&c, name, bytes, 1e-2);
	for (unsigned int t = 0; t < 400; t++) {
		assert_int_equal(sdr_sim_run(&c, 1 + t, NULL, &r, NULL), 0);
		assert_int_equal(r.ok, 1);
		sim += r.mean_s;
	}
	sim /= 400;
	if (fabs(sim / model - 1) > tol)
		fail_msg("%s, %llu bytes: simulator %.2f ms, model %.2f ms", name,
			 (unsigned long long)bytes, sim * 1e3, model * 1e3);
}

/*
 * Model v2 against the simulator (the real state machines) at 1e-2 per packet, the
 * highest loss the benchmarks run, for every scheme, 1 and 8 MiB: within 5 % (issue
 * goal). 400 seeded trials each; the simulator's standard error is 1 to 2 %.
 */
static void
test_model_matches_sim_at_1e2(void **state)
{
	static const char *const names[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8" };
	static const uint64_t sizes[] = { MIB, 8 * MIB };

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		for (unsigned int j = 0; j < 2; j++)
			model_near_sim(names[i], sizes[j], 0.05);
	}
}

/*
 * Messages with fewer packets than a chunk: a 4 KiB and a 16 KiB message are one chunk of
 * 1 and 4 packets (a chunk of 16 would be lost with 0.149 at 1e-2, not 0.01: the model
 * said 36 ms for SR at 4 KiB where the simulator takes 26), and 100 KiB ends with a chunk
 * of 9. SR and SR-NACK within 5 % of the simulator; EC within 10 %: its parity chunks are
 * whole chunks, which the model takes to be as short as the message's one data chunk, and
 * so loses less often than they do (16 KiB, ec-xor:32,8: 25.3 ms against 26.6). 100 KiB is
 * checked for SR only, the partial last chunk being SR's (sr_chunks()). 400 seeded trials
 * each.
 */
static void
test_model_matches_sim_short_chunks(void **state)
{
	static const char *const names[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8" };
	static const uint64_t sizes[] = { 4096, 16384, 102400 };
	struct sdr_model_derived d;
	struct sdr_model_params p;

	(void)state;
	p = paper_point(4096, 1e-2, SDR_MODEL_DROP_PACKET);
	assert_int_equal(sdr_model_derive(&p, &d), 0);
	assert_true(d.chunks == 1 && d.pkts_per_chunk == 1);
	assert_rel(d.p_chunk, 1e-2, 1e-12);
	p.drop_unit = SDR_MODEL_DROP_CHUNK;
	assert_int_equal(sdr_model_derive(&p, &d), 0);
	assert_rel(d.p_chunk, 1e-2, 1e-12);
	for (unsigned int i = 0; i < 4; i++) {
		for (unsigned int j = 0; j < 3; j++)
			if (j < 2 || i < 2)
				model_near_sim(names[i], sizes[j], i >= 2 ? 0.10 : 0.05);
	}
}

/*
 * Gilbert-Elliott loss in the simulator: a trial starts where the burst process stands in
 * the long run, so with p_gb = p_bg = 0.01, no loss in the good state and all in the bad,
 * a one-packet message is lost on its first try half of the time (it started in the good
 * state every time and was lost about 1 % of the time before).
 */
static void
test_sim_gilbert_starts_stationary(void **state)
{
	struct sdr_sim_cfg c;
	struct sdr_sim_result r;
	unsigned int lost = 0;
	const unsigned int trials = 2000;

	(void)state;
	sim_point(&c, "sr", 4096, 0);
	c.link.gilbert = 1;
	c.link.ge_p_gb = 0.01;
	c.link.ge_p_bg = 0.01;
	c.link.ge_loss_good = 0;
	c.link.ge_loss_bad = 1;
	for (unsigned int t = 0; t < trials; t++) {
		assert_int_equal(sdr_sim_run(&c, 1 + t, NULL, &r, NULL), 0);
		lost += r.retransmitted > 0;
	}
	/* 2000 trials: the standard error of the share is about 0.011 */
	if (fabs((double)lost / trials - 0.5) > 0.06)
		fail_msg("%u of %u first tries lost, want about half", lost, trials);
}

/* ---------------------------------------------------------------- errors and names */

static void
test_param_errors(void **state)
{
	struct sdr_model_derived d;
	struct sdr_model_params p;
	struct sdr_model_choice c;
	struct sdr_scheme s = { SDR_SCHEME_EC_MDS, 0, 8, 0 };
	struct sdr_model_decode dec;
	double t;

#define EXPECT(field, value, err) \
	do { \
		p = paper_point(MIB, 1e-4, SDR_MODEL_DROP_PACKET); \
		p.field = value; \
		assert_int_equal(sdr_model_derive(&p, &d), -SDR_MODEL_E_##err); \
	} while (0)

	(void)state;
	p = paper_point(MIB, 1e-4, SDR_MODEL_DROP_PACKET);
	assert_int_equal(sdr_model_derive(&p, &d), 0);
	assert_true(d.chunks == 16 && d.pkts_per_chunk == 16 && d.beta == 1);
	assert_rel(d.rto_s, 3 * RTT, 1e-15);
	EXPECT(msg_bytes, 0, BAD_SIZE);
	EXPECT(mtu_bytes, 0, BAD_MTU);
	EXPECT(chunk_bytes, 0, BAD_CHUNK);
	EXPECT(chunk_bytes, 6000, CHUNK_NOT_MTU);
	EXPECT(bandwidth_bps, 0, BAD_BANDWIDTH);
	EXPECT(bandwidth_bps, -1, BAD_BANDWIDTH);
	EXPECT(bandwidth_bps, INFINITY, BAD_BANDWIDTH);
	EXPECT(rtt_s, -1e-3, BAD_RTT);
	EXPECT(drop, 1, BAD_DROP);
	EXPECT(drop, -1e-9, BAD_DROP);
	EXPECT(drop, NAN, BAD_DROP);
	EXPECT(drop_unit, (enum sdr_model_drop_unit)7, BAD_DROP_UNIT);
	EXPECT(alpha, -0.5, BAD_ALPHA);
	EXPECT(beta, -1, BAD_BETA);
	EXPECT(beta, INFINITY, BAD_BETA);
#undef EXPECT
	p = paper_point(MIB, 1e-4, SDR_MODEL_DROP_PACKET);
	assert_int_equal(sdr_model_eval(&p, &s, &c), -SDR_MODEL_E_BAD_K);
	s.k = 32;
	s.m = 0;
	assert_int_equal(sdr_model_eval(&p, &s, &c), -SDR_MODEL_E_BAD_M);
	s = (struct sdr_scheme){ SDR_SCHEME_EC_XOR, 32, 6, 0 };
	assert_int_equal(sdr_model_eval(&p, &s, &c), -SDR_MODEL_E_XOR_GROUPS);
	s = (struct sdr_scheme){ (enum sdr_scheme_kind)9, 0, 0, 0 };
	assert_int_equal(sdr_model_eval(&p, &s, &c), -SDR_MODEL_E_BAD_SCHEME);
	s = scheme("sr");
	assert_int_equal(sdr_model_ec_decode(&s, 0.1, &dec), -SDR_MODEL_E_BAD_SCHEME);
	s = scheme("ec-mds:4,2");
	assert_int_equal(sdr_model_ec_decode(&s, 1, &dec), -SDR_MODEL_E_BAD_DROP);
	assert_int_equal(sdr_model_sr_mean(-1, T_400G, RTT, RTT, 0.1, &t), -SDR_MODEL_E_BAD_CHUNKS);
	assert_int_equal(sdr_model_sr_mean(1, 0, RTT, RTT, 0.1, &t), -SDR_MODEL_E_BAD_TIME);
	assert_int_equal(sdr_model_sr_mean(1, T_400G, RTT, RTT, 1, &t), -SDR_MODEL_E_BAD_DROP);
	/* 0.9 per packet: a 16-packet chunk is lost with 1 - 1e-16 */
	p.drop = 0.9;
	s = scheme("sr");
	assert_int_equal(sdr_model_eval(&p, &s, &c), -SDR_MODEL_E_TOO_LOSSY);

	assert_string_equal(sdr_model_err_name(-SDR_MODEL_E_BAD_DROP), "bad_drop");
	assert_string_equal(sdr_model_err_name(SDR_MODEL_E_CHUNK_NOT_MTU), "chunk_not_mtu");
	assert_string_equal(sdr_model_err_name(-1000), "invalid");
	for (int e = 0; e < SDR_MODEL_E_COUNT; e++)
		assert_true(strlen(sdr_model_strerror(-e)) > 0);
}

static void
test_scheme_names(void **state)
{
	static const char *const good[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8",
					    "ec-mds:10,4", "ec-xor:1024,1024", "ec-mds:1,1" };
	static const struct {
		const char *name;
		int err;
	} bad[] = {
		{ "", SDR_MODEL_E_BAD_SCHEME }, { "SR", SDR_MODEL_E_BAD_SCHEME },
		{ "sr ", SDR_MODEL_E_BAD_SCHEME }, { "sr-ack", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-xor", SDR_MODEL_E_BAD_SCHEME }, { "ec-xor:32", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-mds:32,", SDR_MODEL_E_BAD_SCHEME }, { "ec-mds:,8", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-mds:+32,8", SDR_MODEL_E_BAD_SCHEME }, { "ec-mds:32,8,1", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-mds:32;8", SDR_MODEL_E_BAD_SCHEME }, { "ec-rs:32,8", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-mds:32,8 ", SDR_MODEL_E_BAD_SCHEME },
		{ "ec-mds:0,8", SDR_MODEL_E_BAD_K }, { "ec-mds:1025,8", SDR_MODEL_E_BAD_K },
		{ "ec-mds:99999999999999999999,8", SDR_MODEL_E_BAD_K },
		{ "ec-mds:32,0", SDR_MODEL_E_BAD_M }, { "ec-xor:32,2000", SDR_MODEL_E_BAD_M },
		{ "ec-xor:32,7", SDR_MODEL_E_XOR_GROUPS },
	};
	struct sdr_scheme s, orig = { SDR_SCHEME_EC_MDS, 7, 7, 0 };
	char buf[SDR_SCHEME_NAME_MAX];
	unsigned int n;
	const struct sdr_scheme *def = sdr_model_default_candidates(&n);

	(void)state;
	for (unsigned int i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(sdr_scheme_parse(good[i], &s), 0);
		assert_string_equal(sdr_scheme_format(&s, buf, sizeof(buf)), good[i]);
	}
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(sdr_scheme_parse(sdr_scheme_format(&def[i], buf, sizeof(buf)), &s), 0);
		assert_true(sdr_scheme_eq(&s, &def[i]));
	}
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = orig;
		if (sdr_scheme_parse(bad[i].name, &s) != -bad[i].err)
			fail_msg("'%s' did not give %s", bad[i].name, sdr_model_err_name(bad[i].err));
		assert_memory_equal(&s, &orig, sizeof(s));
	}
	assert_int_equal(sdr_scheme_parse(NULL, &s), -SDR_MODEL_E_BAD_SCHEME);
	s = (struct sdr_scheme){ (enum sdr_scheme_kind)42, 0, 0, 0 };
	assert_string_equal(sdr_scheme_format(&s, buf, sizeof(buf)), "invalid");
	/* every name fits SDR_SCHEME_NAME_MAX */
	s = scheme("ec-xor:1024,1024");
	assert_true(strlen(sdr_scheme_format(&s, buf, sizeof(buf))) < SDR_SCHEME_NAME_MAX - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_drop),
		cmocka_unit_test(test_sr_lossless_exact),
		cmocka_unit_test(test_sr_one_chunk_closed_form),
		cmocka_unit_test(test_sr_vs_exact_integral),
		cmocka_unit_test(test_sr_vs_monte_carlo),
		cmocka_unit_test(test_sr_large_and_fractional),
		cmocka_unit_test(test_decode_vs_enumeration),
		cmocka_unit_test(test_decode_tiny_and_closed_forms),
		cmocka_unit_test(test_ec_lossless),
		cmocka_unit_test(test_ec_formula),
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_monotonic_high_loss),
		cmocka_unit_test(test_allreduce),
		cmocka_unit_test(test_encode_cores),
		cmocka_unit_test(test_rank_rule),
		cmocka_unit_test(test_advise_points),
		cmocka_unit_test(test_finding_mds_beats_sr_128m),
		cmocka_unit_test(test_finding_sr_wins_large_clean),
		cmocka_unit_test(test_finding_fallback),
		cmocka_unit_test(test_finding_sr_growth_128m),
		cmocka_unit_test(test_sim_resend_needs_missing_packets),
		cmocka_unit_test(test_model_matches_sim_at_1e2),
		cmocka_unit_test(test_model_matches_sim_short_chunks),
		cmocka_unit_test(test_sim_gilbert_starts_stationary),
		cmocka_unit_test(test_param_errors),
		cmocka_unit_test(test_scheme_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
