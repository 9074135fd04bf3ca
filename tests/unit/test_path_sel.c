/* SPDX-License-Identifier: BSD-3-Clause */
/* Paths (lib/path_sel.h): placement, the per-path estimates from seeded reports, failure
 * detection and the decision on synthetic paths. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "path_sel.h"
#include "sdr_sim.h"

#define CH 8
#define GENS 2
#define NQP (CH * GENS)
#define MS 1000000ull

static struct sdr_rng rng;

/* The sender and the receiver of one connection over paths with the given loss rates. */
struct sim {
	struct path_sel s;
	double loss[PATH_SEL_MAX_PATHS];
	uint32_t psn[NQP];		/* the sender's next PSN per QPN */
	uint32_t hi[NQP];		/* the receiver's highest PSN seen */
	int seen[NQP];
	uint16_t pkts[NQP], lost[NQP];	/* its judged counts */
	uint64_t now;
	unsigned int rtt_ms[PATH_SEL_MAX_PATHS];	/* 0: reports see frames at once */
	uint32_t last[NQP][64];		/* clean paths with an RTT: each ms's last frame */
};

static void
sim_init(struct sim *m, unsigned int npaths, enum path_policy pol, const double *loss)
{
	struct path_sel_cfg c;

	memset(m, 0, sizeof(*m));
	path_sel_cfg_default(&c);
	c.npaths = npaths;
	c.channels = CH;
	c.nqp = NQP;
	c.policy = pol;
	c.rtt_ns = 16 * MS;	/* a frame kept for round trips every ms */
	assert_int_equal(path_sel_init(&m->s, &c), 0);
	sdr_rng_seed(&rng, 7);
	memcpy(m->loss, loss, npaths * sizeof(double));
	m->now = 1000 * MS;
	for (unsigned int q = 0; q < NQP; q++) {
		m->psn[q] = 0xFFFF00u + q * 1000;	/* some wrap past 2^24 */
		path_sel_place(&m->s, q, path_sel_spray(&c, q % CH), m->psn[q], m->now);
	}
}

/*
 * @p ms milliseconds of traffic: every QPN sends 10 frames per ms on its path, each lost
 * with the path's rate (judged at once here: the window's delay does not matter to the
 * selector); a report per QPN every ms; path_sel_update() every ms. A clean path with an
 * RTT of r ms: the report (sent at once) has the last frame sent r ms before.
 */
static void
sim_run(struct sim *m, unsigned int ms)
{
	for (unsigned int t = 0; t < ms; t++) {
		m->now += MS;
		for (unsigned int q = 0; q < NQP; q++) {
			unsigned int p = m->s.qp[q].path, r = m->rtt_ms[p];
			uint64_t ms_now = m->now / MS;

			if (r) {
				m->psn[q] = (m->psn[q] + 10) & 0xFFFFFF;
				m->last[q][ms_now % 64] = (m->psn[q] - 1) & 0xFFFFFF;
				path_sel_report(&m->s, q, 1, m->last[q][(ms_now - r) % 64], 0,
						(uint16_t)(ms_now * 10), 0, m->psn[q], m->now);
				continue;
			}
			for (int f = 0; f < 10; f++) {
				int gone = sdr_rng_unit(&rng) < m->loss[p];

				if (!gone) {
					m->hi[q] = m->psn[q];
					m->seen[q] = 1;
				}
				m->psn[q] = (m->psn[q] + 1) & 0xFFFFFF;
				if (m->loss[p] < 1) {	/* a dead path judges nothing */
					m->pkts[q]++;
					m->lost[q] += (uint16_t)gone;
				}
			}
			path_sel_report(&m->s, q, m->seen[q], m->hi[q], 0, m->pkts[q], m->lost[q],
					m->psn[q], m->now);
		}
		path_sel_sent(&m->s, m->psn, m->now);	/* the burst of this ms */
		path_sel_update(&m->s, m->psn, m->now);
	}
}

/* Three clean paths of 10, 13 and 17 ms round trip, each carrying @p path_rate. */
static void
sim_lengths(struct sim *m, double path_rate)
{
	static const double clean[3] = { 0, 0, 0 };

	sim_init(m, 3, PATH_POLICY_OPTIMISE, clean);
	m->rtt_ms[0] = 10;
	m->rtt_ms[1] = 13;
	m->rtt_ms[2] = 17;
	m->s.cfg.path_rate_bps = path_rate;
	/* the ring of each ms's last frame fills before the first report reads it */
	for (unsigned int q = 0; q < NQP; q++)
		for (int k = 0; k < 64; k++)
			m->last[q][k] = (m->psn[q] - 1) & 0xFFFFFF;
}

static void
model_point(struct sdr_model_params *p, struct sdr_scheme *sc)
{
	sdr_model_params_init(p);
	p->msg_bytes = 1 << 20;
	p->chunk_bytes = 65536;
	p->bandwidth_bps = 10e9;
	p->rtt_s = 0.01;
	assert_int_equal(sdr_scheme_parse("sr", sc), 0);
}

/* A run under @p pol over paths of the given loss rates for @p ms, then the decision. */
static enum path_sel_verdict
run_decide(struct sim *m, unsigned int npaths, enum path_policy pol, const double *loss,
	   unsigned int ms, struct path_sel_decision *d)
{
	struct sdr_model_params p;
	struct sdr_scheme sc;

	model_point(&p, &sc);
	sim_init(m, npaths, pol, loss);
	sim_run(m, ms);
	return path_sel_decide(&m->s, &p, &sc, d);
}

static void
apply(struct sim *m, const struct path_sel_decision *d)
{
	for (unsigned int q = 0; q < NQP; q++)
		if (m->s.qp[q].path != d->want[q])
			path_sel_place(&m->s, q, d->want[q], m->psn[q], m->now);
}

static void
test_config(void **state)
{
	struct path_sel_cfg c;
	struct path_sel s;
	enum path_policy p;

	(void)state;
	path_sel_cfg_default(&c);
	c.channels = 4;
	c.nqp = 8;
	c.npaths = 5;		/* more paths than channels reach */
	assert_int_equal(path_sel_init(&s, &c), -EINVAL);
	c.policy = PATH_POLICY_HASH;	/* ... but hashing needs no spread */
	assert_int_equal(path_sel_init(&s, &c), 0);
	path_sel_free(&s);
	c.npaths = PATH_SEL_MAX_PATHS + 1;
	assert_int_equal(path_sel_init(&s, &c), -EINVAL);
	c.npaths = 2;
	c.nqp = 7;		/* not whole generations */
	assert_int_equal(path_sel_init(&s, &c), -EINVAL);
	c.nqp = 8;
	c.npaths = 0;
	assert_int_equal(path_sel_init(&s, &c), -EINVAL);
	assert_int_equal(path_policy_parse("spray", &p), 0);
	assert_int_equal(p, PATH_POLICY_SPRAY);
	assert_int_equal(path_policy_parse("ecmp", &p), -EINVAL);
	assert_string_equal(path_policy_name(PATH_POLICY_OPTIMISE), "optimise");
	{
		enum path_objective o;

		assert_int_equal(path_objective_parse("own", &o), 0);
		assert_int_equal(o, PATH_OBJECTIVE_OWN);
		assert_int_equal(path_objective_parse("maxmin", &o), -EINVAL);
		assert_int_equal(path_objective_parse("max", &o), 0);
		assert_int_equal(o, PATH_OBJECTIVE_MAX);
		assert_string_equal(path_objective_name(PATH_OBJECTIVE_SUM), "sum");
		assert_null(path_objective_name((enum path_objective)7));
	}
	c.npaths = 2;
	assert_int_equal(path_sel_spray(&c, 5), 1);
}

/* Three clean paths under spray: every path gets its share of frames, nothing fails, the
 * decision keeps the spread; hash and spray never move. */
static void
test_clean_paths_stay(void **state)
{
	static const double loss[3] = { 0, 0, 0 };
	struct path_sel_decision d;
	struct sim m;

	(void)state;
	assert_int_equal(run_decide(&m, 3, PATH_POLICY_OPTIMISE, loss, 200, &d), PATH_SEL_KEEP_BEST);
	/* channels 0,3,6 / 1,4,7 / 2,5 of 8, two generations each, 10 frames a ms */
	assert_int_equal(m.s.path[0].nqp, 6);
	assert_int_equal(m.s.path[2].nqp, 4);
	assert_int_equal(m.s.path[0].frames, 6 * 10 * 200);
	assert_int_equal(m.s.path[2].frames, 4 * 10 * 200);
	/* counted once the frames sent before the placement are judged: the receiver's
	 * highest PSN a window (256) past it, at the 26th report, which sets the base */
	assert_int_equal(m.s.path[1].reported, 6 * 10 * (200 - 26));
	for (int i = 0; i < 3; i++)
		assert_int_equal(m.s.path[i].failed, 0);
	assert_int_equal(d.use_mask, 0x7);
	assert_int_equal(d.cur_mask, 0x7);
	path_sel_free(&m.s);

	assert_int_equal(run_decide(&m, 3, PATH_POLICY_SPRAY, loss, 10, &d), PATH_SEL_KEEP_POLICY);
	path_sel_free(&m.s);
}

/*
 * A path that stops delivering: failed once its QPNs sent for longer than fail_ns (100 ms)
 * with no arrival, not before; the decision moves its channels, and only those, to the
 * others, evenly; after the move nothing fails any more.
 */
static void
test_dead_path_is_left(void **state)
{
	static const double loss[3] = { 0, 0, 0 };
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim m;
	uint8_t before[NQP];

	(void)state;
	model_point(&p, &sc);
	sim_init(&m, 3, PATH_POLICY_OPTIMISE, loss);
	sim_run(&m, 50);
	m.loss[2] = 1;		/* path 2 dies */
	sim_run(&m, 95);
	assert_int_equal(m.s.path[2].failed, 0);	/* 95 ms: not yet */
	sim_run(&m, 10);
	assert_int_equal(m.s.path[2].failed, 1);
	assert_int_equal(m.s.path[0].failed, 0);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x3);
	assert_int_equal(d.moved, 2);			/* channels 2 and 5 */
	for (unsigned int q = 0; q < NQP; q++) {
		before[q] = m.s.qp[q].path;
		assert_true(d.want[q] < 2);
		assert_int_equal(d.want[q], d.want[q % CH]);	/* generations alike */
		if (before[q] != 2)
			assert_int_equal(d.want[q], before[q]);
	}
	assert_non_null(strstr(d.why, "(3 failed;"));
	apply(&m, &d);
	assert_int_equal(m.s.path[0].nqp, 8);
	assert_int_equal(m.s.path[1].nqp, 8);
	assert_int_equal(m.s.path[2].nqp, 0);
	sim_run(&m, 300);
	assert_int_equal(m.s.path[0].failed + m.s.path[1].failed, 0);
	assert_int_equal(m.s.path[2].failed, 1);	/* as last known: no traffic there */
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_KEEP_BEST);
	path_sel_free(&m.s);
}

/*
 * Seeded loss 1e-3, 1e-3, 5e-2: each path's estimate within 25 % of its rate (or, for the
 * clean ones, under 3e-3) after 2 s; the decision leaves the lossy path. A path only a
 * little lossier is left or kept as the paths' capacity makes it worth.
 */
static void
test_lossy_path(void **state)
{
	static const double loss[3] = { 1e-3, 1e-3, 5e-2 };
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim m;

	(void)state;
	assert_int_equal(run_decide(&m, 3, PATH_POLICY_OPTIMISE, loss, 2000, &d), PATH_SEL_MOVE);
	assert_true(fabs(d.loss[2] - 5e-2) < 0.25 * 5e-2);
	assert_true(d.loss[0] < 3e-3 && d.loss[1] < 3e-3);
	assert_int_equal(d.use_mask, 0x3);
	assert_true(d.best_s < d.cur_s);
	path_sel_free(&m.s);

	model_point(&p, &sc);
	/* 64 MiB messages, the third path at 6e-3: leaving it is modelled a little faster
	 * with paths that carry the whole rate (not by the hysteresis: kept), and slower when
	 * each path carries a third of it (the placement is the best) */
	p.msg_bytes = 64u << 20;
	for (int lim = 0; lim < 2; lim++) {
		sim_init(&m, 3, PATH_POLICY_OPTIMISE, (const double[]){ 1e-3, 1e-3, 6e-3 });
		m.s.cfg.path_rate_bps = lim ? 10e9 / 3 : 0;
		sim_run(&m, 2000);
		assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d),
				 lim ? PATH_SEL_KEEP_BEST : PATH_SEL_KEEP_MARGIN);
		assert_int_equal(d.use_mask, lim ? 0x7 : 0x3);
		assert_int_equal(d.loss[0], d.loss[1]);		/* pooled: told apart from none */
		assert_true(d.loss[2] > 4e-3 && d.loss[2] < 8e-3);
		path_sel_free(&m.s);
	}
}

/*
 * Probing a failed path every 200 ms: path 3 dies and is left; no probe before 200 ms, then
 * one channel goes back. Still dead: failed again and left at the next decision after
 * fail_ns. Repaired before the next probe: it works again, and the channels spread over
 * all three paths again (each carries a third of the rate: all are worth having).
 */
static void
test_probe(void **state)
{
	static const double loss[3] = { 0, 0, 0 };
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim m;

	(void)state;
	model_point(&p, &sc);
	sim_init(&m, 3, PATH_POLICY_OPTIMISE, loss);
	m.s.cfg.probe_ns = 200 * MS;
	m.s.cfg.path_rate_bps = 10e9 / 3;	/* all three are worth having */
	sim_run(&m, 50);
	m.loss[2] = 1;
	sim_run(&m, 150);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
	apply(&m, &d);
	sim_run(&m, 150);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_KEEP_BEST);	/* not yet */
	sim_run(&m, 60);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_PROBE);
	assert_int_equal(d.moved, 1);
	assert_non_null(strstr(d.why, "probe: a channel to path 3"));
	apply(&m, &d);
	assert_int_equal(m.s.path[2].nqp, GENS);		/* one channel, every generation */
	assert_int_equal(m.s.path[0].nqp + m.s.path[1].nqp, NQP - GENS);
	/* a decision while the probe has its fail_ns leaves it alone */
	sim_run(&m, 20);
	assert_int_not_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
	sim_run(&m, 90);		/* still dead: failed again, left */
	assert_int_equal(m.s.path[2].failed, 1);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_non_null(strstr(d.why, "(3 failed;"));
	apply(&m, &d);
	m.loss[2] = 0;		/* repaired */
	sim_run(&m, 210);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_PROBE);
	apply(&m, &d);
	sim_run(&m, 30);
	assert_int_equal(m.s.path[2].failed, 0);
	assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x7);
	apply(&m, &d);
	assert_int_equal(m.s.path[2].nqp, 4);		/* 8 channels over 3: 3, 3, 2 */
	path_sel_free(&m.s);
}

/*
 * Clean paths of 10, 13 and 17 ms round trip: each path's RTT from the reports is exact;
 * for 8 MiB messages at 10 Gbit/s the longest path costs more than its capacity gives
 * when every path carries the whole rate (all go to the shortest), and less when each
 * carries half of it (the two shortest).
 */
static void
test_path_rtt(void **state)
{
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim m;

	(void)state;
	model_point(&p, &sc);
	p.msg_bytes = 8u << 20;
	for (int lim = 0; lim < 2; lim++) {
		sim_lengths(&m, lim ? 5e9 : 0);
		sim_run(&m, 200);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(m.s.path[i].rtt_min_ns, m.rtt_ms[i] * MS);
			assert_true(m.s.path[i].rtt.rtt_samples >= PATH_SEL_MIN_RTT_SAMPLES);
		}
		assert_int_equal(path_sel_decide(&m.s, &p, &sc, &d), PATH_SEL_MOVE);
		assert_int_equal(d.use_mask, lim ? 0x3 : 0x1);
		path_sel_free(&m.s);
	}
}

/* Two connections sprayed over the same clean paths of 10, 13 and 17 ms (or @p rtt_ms),
 * 5 Gbit/s each, 100 ms of traffic each; the model point: 8 MiB messages at 5 Gbit/s. */
static void
two_sharing(struct sim *a, struct sim *b, struct sdr_model_params *p, struct sdr_scheme *sc,
	    const unsigned int *rtt_ms)
{
	model_point(p, sc);
	p->msg_bytes = 8u << 20;
	p->bandwidth_bps = 5e9;
	sim_lengths(a, 5e9);
	sim_lengths(b, 5e9);
	if (rtt_ms != NULL) {
		memcpy(a->rtt_ms, rtt_ms, 3 * sizeof(*rtt_ms));
		memcpy(b->rtt_ms, rtt_ms, 3 * sizeof(*rtt_ms));
	}
	sim_run(a, 100);
	sim_run(b, 100);
}

/*
 * Two connections over the same clean paths of 10, 13 and 17 ms, 5 Gbit/s each, every
 * connection paced at 5 Gbit/s: alone, each would take the shortest path; the second one,
 * shown what the first sends there (its rate on its share of channels), takes the next.
 */
static void
test_shared_paths(void **state)
{
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim a, b;

	(void)state;
	two_sharing(&a, &b, &p, &sc, NULL);
	assert_int_equal(path_sel_decide(&a.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x1);
	apply(&a, &d);
	/* b alone would do the same; shown a's load it goes to path 2 */
	assert_int_equal(path_sel_decide(&b.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x1);
	b.s.have_avail = 1;
	for (unsigned int k = 0; k < 3; k++)
		b.s.avail_bps[k] = 5e9 - 5e9 * a.s.path[k].nqp / NQP;
	assert_true(b.s.avail_bps[0] == 0 && b.s.avail_bps[1] == 5e9);
	assert_int_equal(path_sel_decide(&b.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x2);
	path_sel_free(&a.s);
	path_sel_free(&b.s);
}

/*
 * The network-wide objective: two connections sprayed over the same clean paths of 10, 13
 * and 17 ms, 5 Gbit/s each, both paced at 5 Gbit/s, 8 MiB messages. Each deciding for its
 * own time (seeing the other's load) takes the two shortest paths, half its rate on each;
 * decided together, one takes path 1 and the other path 2 (the sum of their times lower).
 * From both on paths 1 and 2, the joint choice is under 10 % better: they stay.
 */
static void
test_joint_paths(void **state)
{
	struct path_sel_member mb[2];
	struct sdr_model_params p;
	struct path_sel_decision d;
	struct sdr_scheme sc;
	struct sim a, b;

	(void)state;
	two_sharing(&a, &b, &p, &sc, NULL);
	/* each for itself, seeing the other's spray (5 Gbit/s over three paths) */
	a.s.have_avail = 1;
	for (unsigned int k = 0; k < 3; k++)
		a.s.avail_bps[k] = 5e9 - 5e9 * b.s.path[k].nqp / NQP;
	assert_int_equal(path_sel_decide(&a.s, &p, &sc, &d), PATH_SEL_MOVE);
	assert_int_equal(d.use_mask, 0x3);
	a.s.have_avail = 0;
	/* together */
	for (int c = 0; c < 2; c++)
		mb[c] = (struct path_sel_member){ .s = c ? &b.s : &a.s, .p = &p, .scheme = &sc,
						  .rate_bps = 5e9 };
	assert_int_equal(path_sel_decide_joint(mb, 2, NULL), 2);
	for (int c = 0; c < 2; c++) {
		assert_int_equal(mb[c].d.verdict, PATH_SEL_MOVE);
		assert_int_equal(mb[c].d.cur_mask, 0x7);
		assert_true(mb[c].d.best_s > 0 && isfinite(mb[c].d.best_s));
		assert_non_null(strstr(mb[c].d.why, "joint, 2 connections"));
	}
	assert_true((mb[0].d.use_mask == 0x1 && mb[1].d.use_mask == 0x2) ||
		    (mb[0].d.use_mask == 0x2 && mb[1].d.use_mask == 0x1));
	/* the sum: 13.4 ms of data after 10 and after 13 ms, against twice after 17 ms */
	assert_true(mb[0].d.best_s + mb[1].d.best_s < 0.9 * (mb[0].d.cur_s + mb[1].d.cur_s));
	/* both on paths 1 and 2, half and half: the joint choice is about 6 % better: stay */
	for (unsigned int q = 0; q < NQP; q++) {
		path_sel_place(&a.s, q, q % 2, a.psn[q], a.now);
		path_sel_place(&b.s, q, q % 2, b.psn[q], b.now);
	}
	sim_run(&a, 50);
	sim_run(&b, 50);
	assert_int_equal(path_sel_decide_joint(mb, 2, NULL), 0);
	for (int c = 0; c < 2; c++) {
		assert_int_equal(mb[c].d.verdict, PATH_SEL_KEEP_MARGIN);
		assert_int_equal(mb[c].d.cur_mask, 0x3);
	}
	/* a connection that does not optimise is load, not searched: b sprays over the three
	 * paths; a (sprayed too) moves to the two shortest, as it would alone */
	b.s.cfg.policy = PATH_POLICY_SPRAY;
	for (unsigned int q = 0; q < NQP; q++) {
		path_sel_place(&a.s, q, path_sel_spray(&a.s.cfg, q % CH), a.psn[q], a.now);
		path_sel_place(&b.s, q, path_sel_spray(&b.s.cfg, q % CH), b.psn[q], b.now);
	}
	sim_run(&a, 50);
	sim_run(&b, 50);
	assert_int_equal(path_sel_decide_joint(mb, 2, NULL), 1);
	assert_int_equal(mb[1].d.verdict, PATH_SEL_KEEP_POLICY);
	assert_int_equal(mb[0].d.verdict, PATH_SEL_MOVE);
	assert_int_equal(mb[0].d.use_mask, 0x3);
	/* a third connection, outside the decision, fills path 1: both keep off it */
	b.s.cfg.policy = PATH_POLICY_OPTIMISE;
	{
		static const double outside[3] = { 5e9, 0, 0 };

		assert_int_equal(path_sel_decide_joint(mb, 2, outside), 2);
		assert_true((mb[0].d.use_mask | mb[1].d.use_mask) == 0x6 &&
			    mb[0].d.use_mask != mb[1].d.use_mask);
	}
	/* bad input */
	assert_int_equal(path_sel_decide_joint(mb, 1, NULL), -EINVAL);
	a.s.cfg.path_rate_bps = 0;
	assert_int_equal(path_sel_decide_joint(mb, 2, NULL), -EINVAL);
	path_sel_free(&a.s);
	path_sel_free(&b.s);
}

/*
 * Objective max: the slowest connection as fast as it can be. Paths of 10, 13 and 20 ms,
 * 5 Gbit/s each; connection a paced at 2.5 Gbit/s, b at 7.5 Gbit/s; 8 MiB messages (26.8
 * ms on the wire at 2.5 Gbit/s, 8.9 ms at 7.5). For the sum both spread over paths 1 and 2
 * (13 + 26.8 and 13 + 8.9 ms: 61.8 in sum, 39.8 the larger). For the largest, a takes path
 * 1 alone (10 + 26.8 ms) and b path 2 (13 + 13.4 ms at the path's 5 Gbit/s): 36.8 the
 * larger, 63.2 in sum. On 10, 13 and 17 ms paths with both at 5 Gbit/s, one on path 1 and
 * one on path 2 has the same larger time as both on paths 1 and 2 and the lower sum: max
 * takes it too.
 */
static void
test_joint_max(void **state)
{
	static const unsigned int rtt[3] = { 10, 13, 20 };
	struct sdr_model_params p, pa, pb;
	struct path_sel_member mb[2];
	struct sdr_scheme sc;
	struct sim a, b;

	(void)state;
	for (int obj = 0; obj < 3; obj++) {
		two_sharing(&a, &b, &p, &sc, obj < 2 ? rtt : NULL);
		a.s.cfg.objective = b.s.cfg.objective = obj ? PATH_OBJECTIVE_MAX : PATH_OBJECTIVE_SUM;
		pa = pb = p;
		if (obj < 2) {
			pa.bandwidth_bps = 2.5e9;
			pb.bandwidth_bps = 7.5e9;
		}
		mb[0] = (struct path_sel_member){ .s = &a.s, .p = &pa, .scheme = &sc,
						  .rate_bps = pa.bandwidth_bps };
		mb[1] = (struct path_sel_member){ .s = &b.s, .p = &pb, .scheme = &sc,
						  .rate_bps = pb.bandwidth_bps };
		assert_int_equal(path_sel_decide_joint(mb, 2, NULL), 2);
		for (int c = 0; c < 2; c++)
			assert_int_equal(mb[c].d.verdict, PATH_SEL_MOVE);
		if (obj == 0) {
			assert_int_equal(mb[0].d.use_mask, 0x3);
			assert_int_equal(mb[1].d.use_mask, 0x3);
			assert_non_null(strstr(mb[0].d.why, "connections: sum "));
			assert_true(fabs(mb[0].d.best_s - 39.8e-3) < 0.5e-3 &&
				    fabs(mb[1].d.best_s - 22.0e-3) < 0.5e-3);
		} else if (obj == 1) {
			assert_int_equal(mb[0].d.use_mask, 0x1);
			assert_int_equal(mb[1].d.use_mask, 0x2);
			assert_non_null(strstr(mb[0].d.why, "connections: largest "));
			assert_true(fabs(mb[0].d.best_s - 36.8e-3) < 0.5e-3 &&
				    fabs(mb[1].d.best_s - 26.4e-3) < 0.5e-3);
		} else {
			assert_int_equal(mb[0].d.use_mask | mb[1].d.use_mask, 0x3);
			assert_int_not_equal(mb[0].d.use_mask, mb[1].d.use_mask);
		}
		/* members that do not agree on the objective, or that decide on their own */
		b.s.cfg.objective = PATH_OBJECTIVE_OWN;
		assert_int_equal(path_sel_decide_joint(mb, 2, NULL), -EINVAL);
		a.s.cfg.objective = PATH_OBJECTIVE_OWN;
		assert_int_equal(path_sel_decide_joint(mb, 2, NULL), -EINVAL);
		path_sel_free(&a.s);
		path_sel_free(&b.s);
	}
}

/* Every path dead: nowhere to go, the channels stay; counts that go back are ignored. */
static void
test_all_dead_and_bad_reports(void **state)
{
	static const double loss[2] = { 1, 1 };
	struct path_sel_decision d;
	struct sim m;

	(void)state;
	assert_int_equal(run_decide(&m, 2, PATH_POLICY_OPTIMISE, loss, 200, &d), PATH_SEL_KEEP_NONE);
	assert_int_equal(m.s.path[0].failed & m.s.path[1].failed, 1);
	path_sel_free(&m.s);

	/* a peer that never reports: nothing fails, however long we send */
	sim_init(&m, 2, PATH_POLICY_OPTIMISE, (const double[]){ 0, 0 });
	for (unsigned int q = 0; q < NQP; q++)
		m.psn[q] += 1000;
	path_sel_update(&m.s, m.psn, m.now);
	path_sel_update(&m.s, m.psn, m.now + 1000 * MS);
	assert_int_equal(m.s.path[0].failed + m.s.path[1].failed, 0);
	assert_int_equal(m.s.path[0].frames, 8 * 1000);
	path_sel_report(&m.s, 0, 1, 5, 0, 100, 0, 10, m.now);
	path_sel_report(&m.s, 0, 1, 6, 0, 90, 0, 10, m.now);	/* back by 10 */
	path_sel_report(&m.s, 0, 1, 7, 0, 95, 20, 10, m.now);	/* 20 lost of 5 */
	assert_int_equal(m.s.reports_bad, 2);
	assert_int_equal(m.s.path[0].reported, 0);
	path_sel_report(&m.s, 0, 1, 8, 0, 105, 21, 10, m.now);
	assert_int_equal(m.s.path[0].reported, 10);
	/*
	 * The peer restarts: its counts start again from 0. Against the old baseline (here
	 * 40000 judged and 50000 lost, modulo 2^16, as a QPN well past 2^16 frames sends
	 * them) its first report would read as 25636 frames judged, 15537 of them lost.
	 */
	path_sel_report(&m.s, 0, 1, 9, 0, 40000, 50000, 10, m.now);
	assert_int_equal(m.s.reports_bad, 3);	/* (from 105: more than 2^15 at once) */
	path_sel_peer_restart(&m.s);
	path_sel_report(&m.s, 0, 1, 10, 0, 100, 1, 10, m.now);
	assert_int_equal(m.s.reports_bad, 3);
	assert_int_equal(m.s.path[0].reported, 10);	/* a baseline, not a sample */
	path_sel_report(&m.s, 0, 1, 11, 0, 110, 1, 10, m.now);
	assert_int_equal(m.s.path[0].reported, 20);
	path_sel_free(&m.s);
}

/* A QPN that stays on its path for more than 2^23 frames (80 s at 100 Gbit/s over 32
 * QPNs) is still alive there: reports compare with the last highest PSN, not the first. */
static void
test_long_alive(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, 2, PATH_POLICY_OPTIMISE, (const double[]){ 0, 0 });
	for (int i = 0; i < 80; i++) {
		m.now += 10 * MS;
		for (unsigned int q = 0; q < NQP; q++) {
			m.psn[q] = (m.psn[q] + 0x40000u) & 0xFFFFFF;
			path_sel_report(&m.s, q, 1, (m.psn[q] - 1) & 0xFFFFFF, 0,
					(uint16_t)(i * 100), 0, m.psn[q], m.now);
		}
		path_sel_update(&m.s, m.psn, m.now);
		assert_int_equal(m.s.path[0].failed + m.s.path[1].failed, 0);
	}
	path_sel_free(&m.s);
}

/* A highest PSN beyond what was sent (a broken or lying peer) proves nothing alive and
 * times nothing: it would take the newest kept frame, a round trip one burst long. */
static void
test_report_beyond_sent(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, 2, PATH_POLICY_OPTIMISE, (const double[]){ 0, 0 });
	path_sel_place(&m.s, 0, 0, 1000, m.now);
	for (int k = 0; k < 40; k++) {
		uint32_t psn[NQP];

		memcpy(psn, m.psn, sizeof(psn));
		psn[0] = 1000 + (uint32_t)k * 25;
		m.now += MS;
		path_sel_sent(&m.s, psn, m.now);
	}
	path_sel_report(&m.s, 0, 1, 5000, 0, 0, 0, 2000, m.now + 20 * MS);
	assert_int_equal(m.s.qp[0].have_hi, 0);
	assert_int_equal(m.s.path[0].rtt.rtt_samples, 0);
	/* the last frame sent is fine */
	path_sel_report(&m.s, 0, 1, 1999, 0, 0, 0, 2000, m.now + 20 * MS);
	assert_int_equal(m.s.qp[0].have_hi, 1);
	assert_int_equal(m.s.path[0].rtt.rtt_samples, 1);
	path_sel_free(&m.s);
}

/*
 * A path of 17 ms under a connection configured for 4 ms: the ring of kept frames (one per
 * 250 us) reaches back 8 ms only, so it spaces them out until the path's reports find one.
 * Frames every 100 us, a report per QPN every ms with the frame sent 17 ms before.
 */
static void
test_long_path_timed(void **state)
{
	static uint32_t last[NQP][256];
	struct sim m;
	uint64_t rtt;

	(void)state;
	sim_init(&m, 2, PATH_POLICY_OPTIMISE, (const double[]){ 0, 0 });
	m.s.cfg.rtt_ns = 4 * MS;
	for (unsigned int t = 0; t < 20000; t++) {
		m.now += MS / 10;
		for (unsigned int q = 0; q < NQP; q++) {
			m.psn[q] = (m.psn[q] + 1) & 0xFFFFFF;
			last[q][t % 256] = (m.psn[q] - 1) & 0xFFFFFF;
			if (t % 10 == 0 && t >= 170)
				path_sel_report(&m.s, q, 1, last[q][(t - 170) % 256], 0, 0, 0,
						m.psn[q], m.now);
		}
		path_sel_sent(&m.s, m.psn, m.now);
		if (t % 10 == 0)
			path_sel_update(&m.s, m.psn, m.now);
	}
	for (int p = 0; p < 2; p++) {
		rtt = m.s.path[p].rtt_min_ns;
		assert_true(m.s.path[p].rtt.rtt_samples >= PATH_SEL_MIN_RTT_SAMPLES);
		/* never shorter, longer by at most the spacing the ring came to (1 ms) */
		assert_true(rtt >= 17 * MS && rtt <= 18 * MS);
	}
	path_sel_free(&m.s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_clean_paths_stay),
		cmocka_unit_test(test_dead_path_is_left),
		cmocka_unit_test(test_lossy_path),
		cmocka_unit_test(test_path_rtt),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_shared_paths),
		cmocka_unit_test(test_joint_paths),
		cmocka_unit_test(test_joint_max),
		cmocka_unit_test(test_all_dead_and_bad_reports),
		cmocka_unit_test(test_long_alive),
		cmocka_unit_test(test_report_beyond_sent),
		cmocka_unit_test(test_long_path_timed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
