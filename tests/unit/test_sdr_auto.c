/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Online auto: the loss estimator on seeded loss sequences (rates, bursts, steps) and the
 * decision (its reasons to keep a scheme, the hysteresis on a steady link at a boundary).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sdr_auto.h"
#include "sdr_sim.h"

#define MSG_PKTS 256	/* a 1 MiB message of 4 KiB packets: one sample */

/* A sample of @p n packets, each lost with @p p. */
static uint64_t
bernoulli(struct sdr_rng *r, uint64_t n, double p)
{
	uint64_t lost = 0;

	for (uint64_t i = 0; i < n; i++)
		lost += sdr_rng_unit(r) < p;
	return lost;
}

/* Feed @p pkts packets at loss @p p in message-sized samples. */
static void
feed(struct sdr_auto *a, struct sdr_rng *r, uint64_t pkts, double p)
{
	for (uint64_t i = 0; i < pkts; i += MSG_PKTS)
		sdr_auto_observe(a, MSG_PKTS, bernoulli(r, MSG_PKTS, p));
}

static void
test_wilson(void **state)
{
	double lo, hi;

	(void)state;
	/* none seen in 100: the upper end is z^2 / (n + z^2) */
	sdr_auto_wilson(0, 100, 1.96, &lo, &hi);
	assert_true(lo == 0);
	assert_true(fabs(hi - 3.8416 / 103.8416) < 1e-9);
	/* 10 in 1000: [0.0054, 0.0183] (the textbook values) */
	sdr_auto_wilson(10, 1000, 1.96, &lo, &hi);
	assert_true(fabs(lo - 0.00544) < 5e-5 && fabs(hi - 0.01831) < 5e-5);
	sdr_auto_wilson(0, 0, 1.96, &lo, &hi);
	assert_true(lo == 0 && hi == 1);
}

/* Steady links of known rates: the interval holds the rate, the estimate is close to it. */
static void
test_estimate_known_rates(void **state)
{
	const double rates[] = { 1e-4, 1e-3, 1e-2 };

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		struct sdr_auto a;
		struct sdr_auto_estimate e;
		struct sdr_rng r;

		sdr_rng_seed(&r, 11 + i);
		sdr_auto_init(&a, NULL);
		feed(&a, &r, 4u << 20, rates[i]);
		sdr_auto_estimate(&a, &e);
		print_message("rate %.0e: estimate %.3e [%.3e, %.3e] over %.0f packets, %u changes\n",
			      rates[i], e.p, e.lo, e.hi, e.pkts, e.changes);
		assert_true(e.lo <= rates[i] && rates[i] <= e.hi);
		assert_true(fabs(e.p / rates[i] - 1) < 0.25);
		assert_true(e.total_pkts == 4u << 20);
	}
}

/*
 * Gilbert-Elliott bursts (good state: no loss; bad: half the packets) with a stationary
 * loss of 1e-3: the estimate follows the long-run rate, though the interval, which assumes
 * independent losses, is too narrow for bursts.
 */
static void
test_estimate_bursts(void **state)
{
	struct sdr_auto a;
	struct sdr_auto_estimate e;
	struct sdr_rng r;
	const double p_gb = 2e-4, p_bg = 0.098;	/* bad 1/500 of the time: 1e-3 lost */
	int bad = 0;

	(void)state;
	sdr_rng_seed(&r, 5);
	sdr_auto_init(&a, NULL);
	for (uint64_t i = 0; i < (8u << 20); i += MSG_PKTS) {
		uint64_t lost = 0;

		for (unsigned int k = 0; k < MSG_PKTS; k++) {
			bad = bad ? sdr_rng_unit(&r) >= p_bg : sdr_rng_unit(&r) < p_gb;
			lost += bad && sdr_rng_unit(&r) < 0.5;
		}
		sdr_auto_observe(&a, MSG_PKTS, lost);
	}
	sdr_auto_estimate(&a, &e);
	print_message("bursts, 1e-3 stationary: estimate %.3e [%.3e, %.3e], %u changes\n", e.p,
		      e.lo, e.hi, e.changes);
	assert_true(fabs(e.p / 1e-3 - 1) < 0.5);
	assert_true(fabs((double)e.total_lost / (double)e.total_pkts / 1e-3 - 1) < 0.2);
}

/* A step up (1e-5 -> 1e-2) and a step down (-> 1e-4): the estimate follows within a small
 * share of the slow half-life (2^20 packets), not a half-life. */
static void
test_estimate_steps(void **state)
{
	struct sdr_auto a;
	struct sdr_auto_estimate e;
	struct sdr_rng r;

	(void)state;
	sdr_rng_seed(&r, 7);
	sdr_auto_init(&a, NULL);
	feed(&a, &r, 2u << 20, 1e-5);
	sdr_auto_estimate(&a, &e);
	assert_true(e.p < 1e-4);
	feed(&a, &r, 20000, 1e-2);
	sdr_auto_estimate(&a, &e);
	print_message("1e-5 -> 1e-2, 20000 packets later: %.3e [%.3e, %.3e], %u changes\n", e.p,
		      e.lo, e.hi, e.changes);
	assert_true(e.changes >= 1 && e.p > 1e-3);
	feed(&a, &r, 280000, 1e-2);
	sdr_auto_estimate(&a, &e);
	print_message("1e-2, 300000 packets after the step: %.3e [%.3e, %.3e]\n", e.p, e.lo, e.hi);
	assert_true(fabs(e.p / 1e-2 - 1) < 0.2);
	feed(&a, &r, 600000, 1e-4);
	sdr_auto_estimate(&a, &e);
	print_message("1e-2 -> 1e-4, 600000 packets later: %.3e [%.3e, %.3e], %u changes\n", e.p,
		      e.lo, e.hi, e.changes);
	assert_true(e.p < 3e-4 && e.p > 3e-5);
}

/* An 8 MiB message over 400 Gbit/s and 25 ms: the model point of the decisions below. */
static void
point(struct sdr_model_params *p)
{
	sdr_model_params_init(p);
	p->msg_bytes = 8u << 20;
}

static void
test_keep_reasons(void **state)
{
	struct sdr_model_params p;
	struct sdr_auto_decision d;
	struct sdr_auto a;
	struct sdr_scheme nack = { .kind = SDR_SCHEME_SR_NACK }, mds = { .kind = SDR_SCHEME_EC_MDS,
									 .k = 32, .m = 8 };
	struct sdr_rng r;

	(void)state;
	point(&p);
	sdr_rng_seed(&r, 3);
	sdr_auto_init(&a, NULL);
	sdr_auto_observe(&a, 1000, 0);
	assert_int_equal(sdr_auto_decide(&a, &p, &nack, 1, &d), SDR_AUTO_KEEP_FEW);
	assert_non_null(strstr(d.why, "1000 of 20000 packets seen"));
	/* no loss in 4 M packets: from a pessimistic start back to sr-nack */
	sdr_auto_observe(&a, 4u << 20, 0);
	assert_int_equal(sdr_auto_decide(&a, &p, &mds, 1, &d), SDR_AUTO_CHANGE);
	assert_int_equal(d.choice.kind, SDR_SCHEME_SR_NACK);
	assert_non_null(strstr(d.why, "no loss in"));
	print_message("%s\n", d.why);
	assert_int_equal(sdr_auto_decide(&a, &p, &nack, 1, &d), SDR_AUTO_KEEP_BEST);
	print_message("%s\n", d.why);
	/* 1e-2: erasure coding; not within the dwell time of the last change */
	feed(&a, &r, 1u << 20, 1e-2);
	sdr_auto_changed(&a, 1000000000ull);
	assert_int_equal(sdr_auto_decide(&a, &p, &nack, 2000000000ull, &d), SDR_AUTO_KEEP_DWELL);
	print_message("%s\n", d.why);
	assert_int_equal(sdr_auto_decide(&a, &p, &nack, 4000000000ull, &d), SDR_AUTO_CHANGE);
	assert_true(sdr_scheme_is_ec(&d.choice));
	assert_true(d.choice_s < 0.9 * d.current_s);
	print_message("%s\n", d.why);
	/* the peer refuses it: not asked again for 16 dwell times (32 s), then twice as long */
	{
		struct sdr_scheme want = d.choice;

		sdr_auto_refused(&a, &want, 5000000000ull);
		assert_int_equal(sdr_auto_decide(&a, &p, &nack, 30000000000ull, &d),
				 SDR_AUTO_KEEP_REFUSED);
		print_message("%s\n", d.why);
		assert_int_equal(sdr_auto_decide(&a, &p, &nack, 38000000000ull, &d),
				 SDR_AUTO_CHANGE);
		sdr_auto_refused(&a, &want, 38000000000ull);
		assert_int_equal(a.refusals, 2);
		assert_int_equal(sdr_auto_decide(&a, &p, &nack, 38000000000ull + 63000000000ull,
						 &d), SDR_AUTO_KEEP_REFUSED);
		assert_int_equal(sdr_auto_decide(&a, &p, &nack, 38000000000ull + 65000000000ull,
						 &d), SDR_AUTO_CHANGE);
	}
}

/*
 * A steady link at the loss where the model's choice for the point flips between two
 * schemes: fed for 40 M packets and asked every 100 000, auto changes at most once (to one
 * side of the boundary) and never back and forth.
 */
static void
test_no_flapping_at_boundary(void **state)
{
	struct sdr_model_params p;
	struct sdr_model_choice ch[SDR_MODEL_MAX_CANDIDATES];
	struct sdr_scheme cur, first;
	struct sdr_auto_decision d;
	struct sdr_auto a;
	struct sdr_rng r;
	double lo = 1e-6, hi = 1e-2, b;
	unsigned int changes = 0;
	uint64_t now = 0;

	(void)state;
	point(&p);
	/* bisect (in log space) for the loss where the choice stops being the one at 1e-6 */
	p.drop = lo;
	assert_true(sdr_model_advise(&p, ch, SDR_MODEL_MAX_CANDIDATES) > 0);
	first = ch[0].scheme;
	for (int i = 0; i < 40; i++) {
		b = sqrt(lo * hi);
		p.drop = b;
		assert_true(sdr_model_advise(&p, ch, SDR_MODEL_MAX_CANDIDATES) > 0);
		if (ch[0].scheme.kind == first.kind && ch[0].scheme.k == first.k &&
		    ch[0].scheme.m == first.m)
			lo = b;
		else
			hi = b;
	}
	b = sqrt(lo * hi);
	print_message("the choice at 8 MiB changes at loss %.3e\n", b);
	cur = first;
	sdr_rng_seed(&r, 9);
	sdr_auto_init(&a, NULL);
	for (int i = 0; i < 400; i++) {
		feed(&a, &r, 100000, b);
		now += 200000000ull;	/* 0.2 s per 100 000 packets: 2 Gbit/s of 4 KiB */
		if (sdr_auto_decide(&a, &p, &cur, now, &d) == SDR_AUTO_CHANGE) {
			print_message("change %d at %.1f s: %s\n", changes + 1, now * 1e-9, d.why);
			cur = d.choice;
			sdr_auto_changed(&a, now);
			changes++;
		}
	}
	assert_true(changes <= 1);
}

/*
 * The chunk: 1 MiB messages at 2 Gbit/s and 25 ms. At 1e-2 with chunks down to a quarter
 * allowed, auto takes a code on smaller chunks, faster in the model than the best on the
 * configured chunk; with the chunk fixed it keeps to it. At 1e-5 the configured chunk
 * stays (a smaller one is not more than 1 % faster), and a connection running on smaller
 * chunks goes back to it.
 */
static void
test_chunk_choice(void **state)
{
	struct sdr_model_params p;
	struct sdr_model_choice ch[SDR_MODEL_MAX_CANDIDATES];
	struct sdr_scheme nack = { .kind = SDR_SCHEME_SR_NACK }, small;
	struct sdr_auto_decision d;
	struct sdr_auto_cfg cfg;
	struct sdr_auto a, fixed;
	struct sdr_rng r;

	(void)state;
	sdr_model_params_init(&p);
	p.msg_bytes = 1u << 20;
	p.bandwidth_bps = 2e9;
	p.rtt_s = 0.025;
	sdr_auto_cfg_default(&cfg);
	cfg.max_chunk_shift = 2;
	sdr_auto_init(&a, &cfg);
	sdr_auto_init(&fixed, NULL);
	sdr_rng_seed(&r, 12);
	for (int i = 0; i < 2; i++) {
		struct sdr_auto *x = i ? &fixed : &a;

		feed(x, &r, 1u << 20, 1e-2);
		sdr_auto_message(x, 1u << 20);
	}
	assert_int_equal(sdr_auto_decide(&a, &p, &nack, 0, &d), SDR_AUTO_CHANGE);
	print_message("%s\n", d.why);
	assert_true(sdr_scheme_is_ec(&d.choice) && d.choice.chunk_shift > 0);
	p.drop = d.p_used;	/* the best on the configured chunk at the same estimate */
	assert_true(sdr_model_advise(&p, ch, SDR_MODEL_MAX_CANDIDATES) > 0);
	assert_true(d.choice_s < 0.99 * ch[0].mean_s);
	assert_non_null(strstr(d.why, "KiB"));
	small = d.choice;
	assert_int_equal(sdr_auto_decide(&fixed, &p, &nack, 0, &d), SDR_AUTO_CHANGE);
	assert_int_equal(d.choice.chunk_shift, 0);
	p.drop = d.p_used;
	assert_true(sdr_model_advise(&p, ch, SDR_MODEL_MAX_CANDIDATES) > 0);
	assert_true(sdr_scheme_eq(&d.choice, &ch[0].scheme) && d.choice_s == ch[0].mean_s);
	print_message("%s\n", d.why);
	/* the link clears: back to the configured chunk */
	sdr_auto_init(&a, &cfg);
	sdr_auto_observe(&a, 4u << 20, 0);
	sdr_auto_message(&a, 1u << 20);
	assert_int_equal(sdr_auto_decide(&a, &p, &small, 0, &d), SDR_AUTO_CHANGE);
	assert_int_equal(d.choice.chunk_shift, 0);
	print_message("%s\n", d.why);
}

#define S 1000000000ull

/* The smallest RTT over the last one to two windows: a shorter sample wins at once, a
 * longer route replaces a shorter one two windows after it was last seen. */
static void
test_path_windows(void **state)
{
	struct path_est e;

	(void)state;
	path_est_init(&e, 10 * S);
	assert_int_equal(path_est_min_rtt(&e, 0), 0);
	assert_true(path_est_max_rate(&e, 0) == 0);
	path_est_rtt(&e, 100, 0);
	path_est_rtt(&e, 80, 1 * S);
	path_est_rtt(&e, 0, 2 * S);			/* ignored */
	assert_int_equal(e.rtt_samples, 2);
	assert_int_equal(path_est_min_rtt(&e, 2 * S), 80);
	path_est_rtt(&e, 90, 12 * S);			/* a new window: 80 is still in the last */
	assert_int_equal(path_est_min_rtt(&e, 12 * S), 80);
	path_est_rtt(&e, 95, 23 * S);			/* 80 is two windows old now */
	assert_int_equal(path_est_min_rtt(&e, 23 * S), 90);
	path_est_rtt(&e, 120, 50 * S);			/* silence for more than two windows */
	assert_int_equal(path_est_min_rtt(&e, 50 * S), 120);
	assert_int_equal(path_est_min_rtt(&e, 75 * S), 0);	/* nothing that recent */
	assert_int_equal(e.rtt_last_ns, 120);

	/* RFC 6298: a constant RTT is the smoothed one, and its deviation decays */
	path_est_init(&e, 0);
	assert_int_equal(e.window_ns, PATH_EST_WINDOW_NS);
	for (int i = 0; i < 100; i++)
		path_est_rtt(&e, 25000000, (uint64_t)i * 1000000);
	assert_true(fabs(e.srtt_ns - 25e6) < 1);
	assert_true(e.rttvar_ns < 25e6 * 1e-6);

	/* the largest rate, windowed the same way */
	path_est_rate(&e, 1000, 1000, 0);		/* 8 Gbit/s */
	path_est_rate(&e, 500, 1000, 5 * S);		/* 4 Gbit/s */
	path_est_rate(&e, 0, 1000, 5 * S);		/* ignored */
	path_est_rate(&e, 10, 0, 5 * S);		/* ignored */
	assert_int_equal(e.rate_samples, 2);
	assert_true(fabs(path_est_max_rate(&e, 5 * S) - 8e9) < 1);
	path_est_rate(&e, 250, 1000, 21 * S);		/* 8 Gbit/s is two windows old */
	assert_true(fabs(path_est_max_rate(&e, 21 * S) - 2e9) < 1);
}

/* What the model is given: the configured path until enough samples, then the measured
 * RTT with the timers kept at their real length, and the measured rate only when unpaced. */
static void
test_use_path(void **state)
{
	struct sdr_model_params p, base;
	struct sdr_auto_path u;
	struct path_est e;
	char line[320];

	(void)state;
	sdr_model_params_init(&base);
	base.msg_bytes = 1 << 20;
	base.rtt_s = 25e-3;
	base.alpha = 2;
	base.beta = NAN;
	base.bandwidth_bps = 2e9;
	path_est_init(&e, 0);
	for (unsigned int i = 0; i < SDR_AUTO_PATH_MIN_SAMPLES - 1; i++) {
		path_est_rtt(&e, 20000000, i);
		path_est_rate(&e, 1000, 1000, i);	/* 8 Gbit/s */
	}
	p = base;
	sdr_auto_use_path(&p, &e, 0, 0, 0, 100, &u);
	assert_true(p.rtt_s == 25e-3 && p.alpha == 2 && isnan(p.beta) && p.bandwidth_bps == 2e9);
	assert_false(u.rtt_measured);
	assert_false(u.rate_measured);
	assert_int_equal(u.rtt_samples, SDR_AUTO_PATH_MIN_SAMPLES - 1);
	sdr_auto_path_format(&u, line, sizeof(line));
	assert_string_equal(line, "rtt 25 ms configured (smallest 20 ms, smoothed 20 +- 0.18 ms, "
			    "15 samples), rate 2 Gbit/s assumed, not paced (delivered up to 8 "
			    "Gbit/s, 15 samples), rto 75 ms");

	path_est_rtt(&e, 20000000, 20);
	path_est_rate(&e, 1000, 1000, 20);
	p = base;
	sdr_auto_use_path(&p, &e, 0, 0, 0, 100, &u);
	assert_true(u.rtt_measured && u.rate_measured && !u.paced);
	assert_true(fabs(p.rtt_s - 20e-3) < 1e-12);
	/* RTO 75 ms and the EC slack 25 ms (beta = alpha / 2) as before, in the new RTT */
	assert_true(fabs(p.rtt_s * (1 + p.alpha) - 75e-3) < 1e-12);
	assert_true(fabs(p.beta * p.rtt_s - 25e-3) < 1e-12);
	assert_true(fabs(p.bandwidth_bps - 8e9) < 1);
	/* timers on the measured RTT (rto = measured: 3 x 20 ms): alpha is the configured one
	 * again, the slack still the receiver's 25 ms */
	p = base;
	sdr_auto_use_path(&p, &e, 0, 60000000, 0, 100, &u);
	assert_true(fabs(p.alpha - 2) < 1e-9 && fabs(p.beta * p.rtt_s - 25e-3) < 1e-12);
	sdr_auto_path_format(&u, line, sizeof(line));
	assert_non_null(strstr(line, ", rto 60 ms"));
	/* ... and the receiver's too (rto = measured at both ends): its slack is beta times
	 * the measured RTT, so beta stays as configured (alpha / 2) */
	p = base;
	sdr_auto_use_path(&p, &e, 0, 60000000, 1, 100, &u);
	assert_true(fabs(p.alpha - 2) < 1e-9 && fabs(p.beta - 1) < 1e-12);
	/* paced: the rate is the pacing rate */
	p = base;
	sdr_auto_use_path(&p, &e, 1, 0, 0, 100, &u);
	assert_true(u.rtt_measured && !u.rate_measured && u.paced);
	assert_true(p.bandwidth_bps == 2e9);
	sdr_auto_path_format(&u, line, sizeof(line));
	assert_non_null(strstr(line, "rate 2 Gbit/s paced"));
	/* a measured RTT longer than the timers: alpha cannot go below 0 */
	path_est_init(&e, 0);
	for (unsigned int i = 0; i < SDR_AUTO_PATH_MIN_SAMPLES; i++)
		path_est_rtt(&e, 100000000, i);
	p = base;
	sdr_auto_use_path(&p, &e, 1, 0, 0, 100, &u);
	assert_true(fabs(p.rtt_s - 0.1) < 1e-12 && p.alpha == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wilson),
		cmocka_unit_test(test_estimate_known_rates),
		cmocka_unit_test(test_estimate_bursts),
		cmocka_unit_test(test_estimate_steps),
		cmocka_unit_test(test_keep_reasons),
		cmocka_unit_test(test_no_flapping_at_boundary),
		cmocka_unit_test(test_chunk_choice),
		cmocka_unit_test(test_path_windows),
		cmocka_unit_test(test_use_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
