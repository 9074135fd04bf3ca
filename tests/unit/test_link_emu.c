/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link emulator: exact delivery times under delay and rate, ordering, loss and
 * Gilbert-Elliott statistics against their closed forms, reordering, duplication,
 * corruption, the queue limit, run-time changes, drain, the parser, validator and format.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "link_emu.h"

#define H(i)	((void *)(uintptr_t)((i) + 1))	/* handle of packet i (never NULL) */
#define IDX(p)	((uintptr_t)(p) - 1)
#define Z	5.0				/* statistical bounds: mean +- Z sigma */

static const uint64_t *ctr;

static struct link_emu *
make(const struct link_emu_config *c, uint32_t capacity)
{
	struct link_emu *le = link_emu_create(c, capacity);

	assert_non_null(le);
	ctr = link_emu_counters(le);
	return le;
}

/* Admit one packet that must pass as one copy, and enqueue it. */
static void
send_one(struct link_emu *le, uint64_t now, uint64_t i, uint32_t len)
{
	assert_int_equal(link_emu_admit(le, len), 1);
	assert_int_equal(link_emu_enqueue(le, now, H(i), len, NULL), 0);
}

/* Take the earliest copy: nothing is due a nanosecond before its time. @return the time. */
static uint64_t
pop_one(struct link_emu *le, void **pkt)
{
	uint64_t t = link_emu_next_time(le);

	assert_true(t != UINT64_MAX);
	if (t > 0)
		assert_int_equal(link_emu_dequeue(le, t - 1, pkt, 1), 0);
	assert_int_equal(link_emu_dequeue(le, t, pkt, 1), 1);
	return t;
}

static void
expect_binomial(uint64_t k, uint64_t n, double p)
{
	double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));

	assert_true((double)k >= mean - Z * sd);
	assert_true((double)k <= mean + Z * sd);
}

/* ---------------------------------------------------------------- timing */

static void
test_delay_and_rate_exact(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	/* 10 Gbit/s, 24 bytes overhead: 1000 B -> 8192 bits = 819.2 ns; 476 B -> 400 ns;
	 * 76 B -> 80 ns. Due = end of serialization rounded up + 1 ms. */
	static const struct {
		uint64_t now;
		uint32_t len;
		uint64_t due;
	} s[] = {
		{ 0,		1000,	1000000 + 820 },	/* 819.2 */
		{ 0,		1000,	1000000 + 1639 },	/* 1638.4: waited */
		{ 0,		476,	1000000 + 2039 },	/* 2038.4: waited */
		{ 10000,	1000,	1000000 + 10820 },	/* idle link: 10819.2 */
		{ 10819,	76,	1000000 + 10900 },	/* busy till 10819.2: 10899.2 */
		{ 20000,	0,	1000000 + 20020 },	/* overhead only: 19.2 ns */
	};
	void *p;

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 1000000;
	c.rate_bps = 10000000000ull;
	le = make(&c, 16);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		send_one(le, s[i].now, i, s[i].len);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		assert_int_equal(pop_one(le, &p), s[i].due);
		assert_int_equal(IDX(p), i);
	}
	assert_int_equal(link_emu_next_time(le), UINT64_MAX);
	assert_int_equal(ctr[LINK_EMU_C_RATE_WAITS], 3);
	assert_int_equal(ctr[LINK_EMU_C_DELIVERED], 6);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_IN], 3552);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_OUT], 3552);
	link_emu_destroy(le);
}

/* 1000 bits at 3 Gbit/s is 333.33.. ns: the link clock is exact, so no drift. */
static void
test_rate_no_drift(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *p;

	(void)state;
	link_emu_config_default(&c);
	c.rate_bps = 3000000000ull;
	c.overhead = 0;
	le = make(&c, 3000);
	for (uint64_t i = 0; i < 3000; i++)
		send_one(le, 0, i, 125);
	for (uint64_t i = 0; i < 3000; i++) {
		assert_int_equal(pop_one(le, &p), ((i + 1) * 1000 + 2) / 3);
		assert_int_equal(IDX(p), i);
	}
	link_emu_destroy(le);
}

static void
test_fifo_order_and_ties(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *out[64];
	uint64_t next = 0;

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 5000;
	le = make(&c, 256);
	for (uint64_t i = 0; i < 200; i++)
		send_one(le, (i / 10) * 100, i, 100);	/* ten at a time share a due time */
	assert_int_equal(link_emu_dequeue(le, 4999, out, 64), 0);
	assert_int_equal(link_emu_next_time(le), 5000);
	/* at most n per call, in enqueue order */
	assert_int_equal(link_emu_dequeue(le, 5000, out, 4), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(IDX(out[i]), next++);
	assert_int_equal(link_emu_dequeue(le, 5000, out, 64), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(IDX(out[i]), next++);
	for (;;) {
		unsigned int n = link_emu_dequeue(le, 7000, out, 64);

		if (n == 0)
			break;
		for (unsigned int i = 0; i < n; i++)
			assert_int_equal(IDX(out[i]), next++);
	}
	assert_int_equal(next, 200);
	assert_int_equal(link_emu_count(le), 0);
	assert_int_equal(ctr[LINK_EMU_C_QUEUE_PEAK], 200);
	link_emu_destroy(le);
}

/* Copies with equal times leave in enqueue order, whether they sit in the FIFO or heap. */
static void
test_heap_ties_in_enqueue_order(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *out[1000];

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 1000;
	c.reorder = 0.5;	/* half go to the heap, with a zero extra delay */
	c.reorder_ns = 0;
	le = make(&c, 1000);
	for (uint64_t i = 0; i < 1000; i++)
		send_one(le, 0, i, 64);
	expect_binomial(ctr[LINK_EMU_C_REORDERED], 1000, 0.5);
	assert_int_equal(link_emu_dequeue(le, 1000, out, 1000), 1000);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(IDX(out[i]), i);
	link_emu_destroy(le);
}

/* ---------------------------------------------------------------- loss */

static void
test_iid_loss_rate(void **state)
{
	const uint64_t n = 200000;
	struct link_emu_config c;
	struct link_emu *le;
	uint64_t lost = 0;

	(void)state;
	link_emu_config_default(&c);
	c.loss = 0.01;
	le = make(&c, 1);
	for (uint64_t i = 0; i < n; i++)
		lost += link_emu_admit(le, 1000) == 0;
	assert_int_equal(lost, ctr[LINK_EMU_C_DROPPED_LOSS]);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], n);
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_BURST], 0);
	/* 2000 expected, sigma 44.5 */
	expect_binomial(lost, n, 0.01);
	/* nothing was enqueued: each admit counts the previous packet's copy */
	link_emu_admit(le, 1000);
	assert_int_equal(ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED], n - lost);
	link_emu_destroy(le);

	c.loss = 1;
	le = make(&c, 1);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(link_emu_admit(le, 1), 0);
	link_emu_destroy(le);
}

/* The loss pattern depends on the seed only, not on the other effects. */
static void
test_loss_pattern_independent(void **state)
{
	struct link_emu_config c;
	struct link_emu *a, *b;

	(void)state;
	link_emu_config_default(&c);
	c.loss = 0.1;
	c.seed = 99;
	a = link_emu_create(&c, 1);
	c.dup = 0.5;
	c.reorder = 0.3;
	c.reorder_ns = 1000;
	c.corrupt = 0.2;
	b = link_emu_create(&c, 1 << 14);
	assert_non_null(a);
	assert_non_null(b);
	for (uint64_t i = 0; i < 10000; i++) {
		int ka = link_emu_admit(a, 100), kb = link_emu_admit(b, 100);

		assert_int_equal(ka == 0, kb == 0);
		for (int k = 0; k < kb; k++)
			assert_int_equal(link_emu_enqueue(b, i, H(i), 100, NULL), 0);
	}
	link_emu_destroy(a);
	link_emu_destroy(b);
}

struct ge_run {
	uint64_t lost;
	uint64_t runs;		/* maximal runs of consecutive losses */
};

static struct ge_run
run_ge(double pgb, double pbg, double lg, double lb, uint64_t n, uint64_t *bursts)
{
	struct link_emu_config c;
	struct link_emu *le;
	struct ge_run r = { 0, 0 };
	int prev = 0;

	link_emu_config_default(&c);
	c.burst = 1;
	c.ge_p_gb = pgb;
	c.ge_p_bg = pbg;
	c.ge_loss_good = lg;
	c.ge_loss_bad = lb;
	c.seed = 7;
	le = make(&c, 1);
	for (uint64_t i = 0; i < n; i++) {
		int l = link_emu_admit(le, 100) == 0;

		r.lost += l;
		r.runs += l && !prev;
		prev = l;
	}
	assert_int_equal(r.lost, ctr[LINK_EMU_C_DROPPED_BURST]);
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_LOSS], 0);
	*bursts = ctr[LINK_EMU_C_BURSTS];
	link_emu_destroy(le);
	return r;
}

/*
 * Gilbert model (loss only in the bad state): the loss rate is pi_B = pgb / (pgb + pbg)
 * and the loss runs are the bad sojourns, geometric with mean 1 / pbg. The chain is
 * correlated (lambda = 1 - pgb - pbg), so the variance of the loss count is
 * n pi_B pi_G (1 + lambda) / (1 - lambda).
 */
static void
test_gilbert_closed_form(void **state)
{
	const double a = 0.01, b = 0.25, lambda = 1 - a - b;
	const double pib = a / (a + b);
	const uint64_t n = 200000;
	double sd, mean_run, sd_run;
	uint64_t bursts;
	struct ge_run r;

	(void)state;
	r = run_ge(a, b, 0, 1, n, &bursts);
	sd = sqrt((double)n * pib * (1 - pib) * (1 + lambda) / (1 - lambda));
	assert_true(fabs((double)r.lost - (double)n * pib) <= Z * sd);
	/* every entry into the bad state starts exactly one run of losses */
	assert_int_equal(r.runs, bursts);
	mean_run = (double)r.lost / (double)r.runs;
	sd_run = sqrt(1 - b) / b / sqrt((double)r.runs);
	assert_true(fabs(mean_run - 1 / b) <= Z * sd_run);
}

/*
 * Full Gilbert-Elliott: mean loss m = pi_G lg + pi_B lb; the variance of the loss count is
 * n [m (1 - m) + 2 (lb - lg)^2 pi_G pi_B lambda / (1 - lambda)].
 */
static void
test_gilbert_elliott_mean(void **state)
{
	const double a = 0.005, b = 0.1, lg = 0.001, lb = 0.5, lambda = 1 - a - b;
	const double pib = a / (a + b), pig = 1 - pib, m = pig * lg + pib * lb;
	const uint64_t n = 200000;
	uint64_t bursts;
	struct ge_run r;
	double sd;

	(void)state;
	r = run_ge(a, b, lg, lb, n, &bursts);
	sd = sqrt((double)n * (m * (1 - m) +
			       2 * (lb - lg) * (lb - lg) * pig * pib * lambda / (1 - lambda)));
	assert_true(fabs((double)r.lost - (double)n * m) <= Z * sd);
	assert_true(bursts > 0);
}

/* ---------------------------------------------------------------- reorder, dup, corrupt */

static void
test_reorder(void **state)
{
	const uint64_t n = 10000, delay = 1000000, jitter = 50000;
	struct link_emu_config c;
	struct link_emu *le;
	uint8_t *seen = calloc(n, 1);
	uint64_t prev_t = 0, max_idx = 0, overtaken = 0, late = 0;

	(void)state;
	assert_non_null(seen);
	link_emu_config_default(&c);
	c.delay_ns = delay;
	c.reorder = 0.2;
	c.reorder_ns = jitter;
	le = make(&c, (uint32_t)n);
	for (uint64_t i = 0; i < n; i++)
		send_one(le, i * 1000, i, 1000);	/* one packet per microsecond */
	expect_binomial(ctr[LINK_EMU_C_REORDERED], n, 0.2);
	for (uint64_t k = 0; k < n; k++) {
		void *p;
		uint64_t t = pop_one(le, &p), i = IDX(p), base = i * 1000 + delay;

		assert_true(i < n);
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
		assert_true(t >= prev_t);
		assert_true(t >= base && t <= base + jitter);
		late += t > base;
		if (k > 0 && i < max_idx)
			overtaken++;
		if (i > max_idx)
			max_idx = i;
		prev_t = t;
	}
	assert_int_equal(link_emu_count(le), 0);
	assert_true(overtaken > 0);
	/* a jittered packet is late unless it drew exactly 0 */
	assert_true(late <= ctr[LINK_EMU_C_REORDERED]);
	assert_true(late + 10 >= ctr[LINK_EMU_C_REORDERED]);
	assert_int_equal(ctr[LINK_EMU_C_DELIVERED], n);
	free(seen);
	link_emu_destroy(le);
}

static void
test_duplicate(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *out[256];
	uint8_t count[100] = { 0 };
	uint64_t copies = 0, lost = 0;

	(void)state;
	link_emu_config_default(&c);
	c.dup = 1;
	c.loss = 0.5;
	le = make(&c, 256);
	/* nothing admitted yet */
	assert_int_equal(link_emu_enqueue(le, 0, H(0), 10, NULL), -EINVAL);
	for (uint64_t i = 0; i < 100; i++) {
		int k = link_emu_admit(le, 10);

		if (k == 0) {
			lost++;
			continue;
		}
		assert_int_equal(k, 2);
		/* the clone is not subjected to loss or duplication again */
		assert_int_equal(link_emu_enqueue(le, i, H(i), 10, NULL), 0);
		assert_int_equal(link_emu_enqueue(le, i, H(i), 10, NULL), 0);
		assert_int_equal(link_emu_enqueue(le, i, H(i), 10, NULL), -EINVAL);
		copies += 2;
	}
	assert_int_equal(ctr[LINK_EMU_C_DUPLICATED], 100 - lost);
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_LOSS], lost);
	assert_int_equal(link_emu_dequeue(le, UINT64_MAX, out, 256), copies);
	for (uint64_t i = 0; i < copies; i++)
		count[IDX(out[i])]++;
	for (int i = 0; i < 100; i++)
		assert_true(count[i] == 0 || count[i] == 2);
	/* a clone the caller could not make is counted at the next admit */
	assert_int_equal(ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED], 0);
	while (link_emu_admit(le, 10) == 0)
		;
	assert_int_equal(link_emu_enqueue(le, 0, H(0), 10, NULL), 0);
	link_emu_admit(le, 10);
	assert_int_equal(ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED], 1);
	link_emu_drain(le, out, 256);
	link_emu_destroy(le);

	/* a duplication probability */
	c.loss = 0;
	c.dup = 0.3;
	le = make(&c, 1);
	for (int i = 0; i < 100000; i++) {
		int k = link_emu_admit(le, 10);

		assert_true(k == 1 || k == 2);
	}
	expect_binomial(ctr[LINK_EMU_C_DUPLICATED], 100000, 0.3);
	link_emu_destroy(le);
}

static int
popcount_buf(const uint8_t *b, size_t n, size_t *where)
{
	int bits = 0;

	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 8; j++)
			if (b[i] & (1u << j)) {
				bits++;
				*where = i * 8 + (size_t)j;
			}
	return bits;
}

static void
test_corrupt_one_bit(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	uint8_t buf[64];
	uint32_t hits[512] = { 0 };
	void *out[1];

	(void)state;
	link_emu_config_default(&c);
	c.corrupt = 1;
	le = make(&c, 4);
	for (int i = 0; i < 20000; i++) {
		size_t bit = 0;

		memset(buf, 0, sizeof(buf));
		send_one(le, 0, 0, 0);		/* len 0: nothing to flip */
		assert_int_equal(link_emu_admit(le, sizeof(buf)), 1);
		assert_int_equal(link_emu_enqueue(le, 0, H(1), sizeof(buf), buf), 0);
		assert_int_equal(popcount_buf(buf, sizeof(buf), &bit), 1);
		hits[bit]++;
		assert_int_equal(link_emu_dequeue(le, 0, out, 1), 1);
		assert_int_equal(link_emu_dequeue(le, 0, out, 1), 1);
	}
	/* uniform over the 512 bits: each expected 39 times */
	for (int i = 0; i < 512; i++)
		assert_true(hits[i] > 0);
	assert_int_equal(ctr[LINK_EMU_C_CORRUPTED], 20000);
	/* no bytes given: not corrupted, not counted */
	assert_int_equal(link_emu_admit(le, 64), 1);
	assert_int_equal(link_emu_enqueue(le, 0, H(0), 64, NULL), 0);
	assert_int_equal(ctr[LINK_EMU_C_CORRUPTED], 20000);
	link_emu_destroy(le);

	c.corrupt = 0;
	le = make(&c, 4);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(link_emu_admit(le, sizeof(buf)), 1);
	assert_int_equal(link_emu_enqueue(le, 0, H(0), sizeof(buf), buf), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	link_emu_destroy(le);
}

/* ---------------------------------------------------------------- queue, run time, drain */

static void
test_queue_full(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *p;

	(void)state;
	link_emu_config_default(&c);
	c.rate_bps = 1000000000ull;	/* 125 bytes = 1000 ns */
	c.overhead = 0;
	le = make(&c, 4);
	for (uint64_t i = 0; i < 4; i++)
		send_one(le, 0, i, 125);
	for (uint64_t i = 4; i < 6; i++) {
		assert_int_equal(link_emu_admit(le, 125), 1);
		assert_int_equal(link_emu_enqueue(le, 0, H(i), 125, NULL), -ENOBUFS);
	}
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_QUEUE_FULL], 2);
	assert_int_equal(ctr[LINK_EMU_C_QUEUE_PEAK], 4);
	assert_int_equal(link_emu_count(le), 4);
	assert_int_equal(pop_one(le, &p), 1000);
	/* the refused copies took no time on the link */
	send_one(le, 1000, 6, 125);
	for (uint64_t i = 1; i < 4; i++) {
		assert_int_equal(pop_one(le, &p), (i + 1) * 1000);
		assert_int_equal(IDX(p), i);
	}
	assert_int_equal(pop_one(le, &p), 5000);
	assert_int_equal(IDX(p), 6);
	assert_int_equal(ctr[LINK_EMU_C_QUEUE_PEAK], 4);
	link_emu_destroy(le);

	/* a buffer of 2.5 us at the rate (queue): a copy that would wait longer for the
	 * link than that is refused, however much room the emulator has */
	c.queue_ns = 2500;
	le = make(&c, 64);
	for (uint64_t i = 0; i < 3; i++)	/* waits 0, 1000, 2000; a fourth would wait 3000 */
		send_one(le, 0, i, 125);
	assert_int_equal(link_emu_admit(le, 125), 1);
	assert_int_equal(link_emu_enqueue(le, 0, H(3), 125, NULL), -ENOBUFS);
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_QUEUE_FULL], 1);
	/* 500 ns later the wait is 2500: taken */
	send_one(le, 500, 4, 125);
	assert_int_equal(link_emu_count(le), 4);
	link_emu_destroy(le);
}

static void
test_set_config_runtime(void **state)
{
	struct link_emu_config c, bad;
	struct link_emu *le;
	void *p;

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 10000000;
	le = make(&c, 16);
	send_one(le, 0, 0, 100);
	c.delay_ns = 1000000;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	send_one(le, 100, 1, 100);
	/* the queued packet keeps its 10 ms; the new one overtakes it */
	assert_int_equal(pop_one(le, &p), 1000100);
	assert_int_equal(IDX(p), 1);
	assert_int_equal(pop_one(le, &p), 10000000);
	assert_int_equal(IDX(p), 0);

	/* refused: nothing changes */
	bad = c;
	bad.loss = 2;
	assert_int_equal(link_emu_set_config(le, &bad), -LINK_EMU_E_LOSS);
	assert_int_equal(link_emu_get_config(le)->loss, 0);
	assert_int_equal(link_emu_get_config(le)->delay_ns, 1000000);

	/* rate changes apply to the next copy; the link's clock carries over */
	c.delay_ns = 0;
	c.overhead = 0;
	c.rate_bps = 3000000000ull;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	send_one(le, 20000000, 2, 125);		/* 333.3 ns */
	c.rate_bps = 1000000000ull;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	send_one(le, 20000000, 3, 125);		/* from 334 (rounded up): 1000 ns */
	assert_int_equal(pop_one(le, &p), 20000334);
	assert_int_equal(pop_one(le, &p), 20001334);
	link_emu_destroy(le);
}

/*
 * A transparent link hands packets straight back (link_emu_pass()), counted as offered and
 * delivered; any impairment, or a copy still queued, sends them through the queue.
 */
static void
test_pass(void **state)
{
	static const char *const each[] = { "delay 1us", "rate 10G", "loss 1e-9",
					    "burst 0.1,0.5", "reorder 0.1,1us", "dup 0.1",
					    "corrupt 0.1" };
	struct link_emu_config c;
	struct link_emu *le;
	void *p;

	(void)state;
	link_emu_config_default(&c);
	le = make(&c, 4);
	assert_true(link_emu_transparent(le));
	assert_int_equal(link_emu_pass(le, 100), 1);
	assert_int_equal(link_emu_pass(le, LINK_EMU_MAX_LEN), 1);
	assert_int_equal(link_emu_pass(le, LINK_EMU_MAX_LEN + 1), 0);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 2);
	assert_int_equal(ctr[LINK_EMU_C_DELIVERED], 2);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_IN], 100 + LINK_EMU_MAX_LEN);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_OUT], 100 + LINK_EMU_MAX_LEN);
	assert_int_equal(link_emu_count(le), 0);
	/* a burst passes whole or not at all */
	assert_int_equal(link_emu_pass_burst(le, 3, 300, LINK_EMU_MAX_LEN + 1), 0);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 2);
	assert_int_equal(link_emu_pass_burst(le, 3, 300, 100), 1);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 5);
	assert_int_equal(ctr[LINK_EMU_C_DELIVERED], 5);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_IN], 400 + LINK_EMU_MAX_LEN);
	assert_int_equal(ctr[LINK_EMU_C_BYTES_OUT], 400 + LINK_EMU_MAX_LEN);
	/* an admitted copy never enqueued is counted by the next packet, passed or not */
	assert_int_equal(link_emu_admit(le, 100), 1);
	assert_int_equal(link_emu_pass(le, 100), 1);
	assert_int_equal(ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED], 1);
	assert_int_equal(link_emu_enqueue(le, 0, H(9), 100, NULL), -EINVAL);

	/* every impairment alone makes the link opaque; "off" makes it transparent again */
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		struct link_emu_config d = c;
		const char *argv[2] = { "off", NULL };
		char w[32], *sp;

		snprintf(w, sizeof(w), "%s", each[i]);
		sp = strchr(w, ' ');
		*sp = '\0';
		argv[0] = w;
		argv[1] = sp + 1;
		assert_int_equal(link_emu_parse(&d, 2, argv, NULL), 0);
		assert_int_equal(link_emu_set_config(le, &d), 0);
		assert_false(link_emu_transparent(le));
		assert_int_equal(link_emu_pass(le, 100), 0);
		argv[0] = "off";
		assert_int_equal(link_emu_parse(&d, 1, argv, NULL), 0);
		assert_int_equal(link_emu_set_config(le, &d), 0);
		assert_true(link_emu_transparent(le));
	}
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 7);

	/* a copy queued under a delay keeps later packets in the queue after "off" */
	c.delay_ns = 1000;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	send_one(le, 0, 0, 100);
	c.delay_ns = 0;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	assert_true(link_emu_transparent(le));
	assert_int_equal(link_emu_pass(le, 100), 0);
	assert_int_equal(link_emu_pass_burst(le, 2, 200, 100), 0);
	send_one(le, 10, 1, 100);
	assert_int_equal(link_emu_pass(le, 100), 0);
	assert_int_equal(pop_one(le, &p), 10);
	assert_int_equal(IDX(p), 1);
	assert_int_equal(link_emu_pass(le, 100), 0);
	assert_int_equal(pop_one(le, &p), 1000);
	assert_int_equal(link_emu_pass(le, 100), 1);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 10);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], ctr[LINK_EMU_C_DELIVERED] +
			 ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED]);
	link_emu_destroy(le);
}

/* Loss pattern of @p n admits as a bit string. */
static void
loss_pattern(struct link_emu *le, int n, char *out)
{
	for (int i = 0; i < n; i++)
		out[i] = link_emu_admit(le, 10) == 0 ? 'x' : '.';
	out[n] = '\0';
}

static void
test_set_config_seed(void **state)
{
	struct link_emu_config c;
	struct link_emu *a, *b;
	char pa[1001], pb[1001];

	(void)state;
	link_emu_config_default(&c);
	c.loss = 0.3;
	a = link_emu_create(&c, 1);
	b = link_emu_create(&c, 1);
	assert_non_null(a);
	assert_non_null(b);
	/* the same seed: set_config keeps the streams going */
	loss_pattern(a, 500, pa);
	assert_int_equal(link_emu_set_config(a, &c), 0);
	loss_pattern(a, 500, pa + 500);
	loss_pattern(b, 1000, pb);
	assert_string_equal(pa, pb);
	/* a new seed: as a fresh emulator with that seed */
	c.seed = 12345;
	assert_int_equal(link_emu_set_config(a, &c), 0);
	link_emu_destroy(b);
	b = link_emu_create(&c, 1);
	assert_non_null(b);
	loss_pattern(a, 1000, pa);
	loss_pattern(b, 1000, pb);
	assert_string_equal(pa, pb);
	/* one seed, two salts (the dataplane's two ports, engines or paths): streams of their
	 * own, each as a fresh emulator with its seed and salt; the salt kept: going on */
	link_emu_destroy(b);
	c.salt = 77;
	b = link_emu_create(&c, 1);
	assert_non_null(b);
	loss_pattern(b, 1000, pb);
	assert_true(strcmp(pa, pb) != 0);
	assert_int_equal(link_emu_set_config(a, &c), 0);	/* a takes the salt: restarts */
	loss_pattern(a, 500, pa);
	assert_int_equal(link_emu_set_config(a, &c), 0);	/* unchanged: goes on */
	loss_pattern(a, 500, pa + 500);
	assert_string_equal(pa, pb);
	link_emu_destroy(a);
	link_emu_destroy(b);
}

/*
 * A rate turned unlimited with a backlog queued at the old rate: new copies go behind it,
 * not past it (only a shorter delay or reordering lets a copy overtake).
 */
static void
test_rate_unlimited_keeps_order(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;
	void *p;

	(void)state;
	link_emu_config_default(&c);
	c.overhead = 0;
	c.rate_bps = 1000000000ull;		/* 125 B: 1000 ns */
	le = make(&c, 16);
	send_one(le, 0, 0, 125);
	send_one(le, 0, 1, 125);		/* leaves at 2000 */
	c.rate_bps = 0;
	assert_int_equal(link_emu_set_config(le, &c), 0);
	send_one(le, 10, 2, 125);
	assert_int_equal(pop_one(le, &p), 1000);
	assert_int_equal(IDX(p), 0);
	assert_int_equal(pop_one(le, &p), 2000);
	assert_int_equal(IDX(p), 1);
	assert_int_equal(pop_one(le, &p), 2000);
	assert_int_equal(IDX(p), 2);
	/* idle since: unlimited again means at once */
	send_one(le, 5000, 3, 125);
	assert_int_equal(pop_one(le, &p), 5000);
	link_emu_destroy(le);
}

static void
test_drain(void **state)
{
	struct link_emu_config c;
	struct link_emu *a, *b;
	void *da[200], *db[200];
	uint8_t seen[100] = { 0 };
	unsigned int na = 0, k;

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 1000;
	c.reorder = 0.5;
	c.reorder_ns = 5000;
	c.dup = 0.2;
	a = link_emu_create(&c, 200);
	b = link_emu_create(&c, 200);
	assert_non_null(a);
	assert_non_null(b);
	for (uint64_t i = 0; i < 100; i++) {
		int n = link_emu_admit(a, 10);

		assert_int_equal(link_emu_admit(b, 10), n);
		for (int j = 0; j < n; j++) {
			assert_int_equal(link_emu_enqueue(a, i * 10, H(i), 10, NULL), 0);
			assert_int_equal(link_emu_enqueue(b, i * 10, H(i), 10, NULL), 0);
		}
	}
	while ((k = link_emu_drain(a, da + na, 3)) > 0) {
		assert_true(k <= 3);
		na += k;
	}
	/* everything, in the order it would have been delivered */
	assert_int_equal(link_emu_dequeue(b, UINT64_MAX, db, 200), na);
	for (unsigned int i = 0; i < na; i++) {
		assert_ptr_equal(da[i], db[i]);
		seen[IDX(da[i])]++;
	}
	for (int i = 0; i < 100; i++)
		assert_true(seen[i] == 1 || seen[i] == 2);
	ctr = link_emu_counters(a);
	assert_int_equal(na, 100 + ctr[LINK_EMU_C_DUPLICATED]);
	assert_int_equal(ctr[LINK_EMU_C_DRAINED], na);
	assert_int_equal(ctr[LINK_EMU_C_DELIVERED], 0);
	assert_int_equal(link_emu_count(a), 0);
	assert_int_equal(link_emu_next_time(a), UINT64_MAX);
	assert_int_equal(link_emu_drain(a, da, 3), 0);
	link_emu_destroy(a);
	link_emu_destroy(b);
}

/* Everything at once, with a small queue and failed clones: every copy is accounted for. */
static void
test_conservation(void **state)
{
	enum { N = 20000 };
	struct link_emu_config c;
	struct link_emu *le;
	uint8_t *accepted = calloc(2 * N, 1), *out_seen = calloc(2 * N, 1);
	uint8_t buf[256];
	void *out[32];
	uint64_t now = 0, in_q = 0, clone_fail = 0;
	const uint64_t *k;
	unsigned int n;

	(void)state;
	assert_non_null(accepted);
	assert_non_null(out_seen);
	link_emu_config_default(&c);
	c.delay_ns = 100000;
	c.rate_bps = 10000000000ull;
	c.loss = 0.05;
	c.dup = 0.1;
	c.reorder = 0.1;
	c.reorder_ns = 20000;
	c.corrupt = 0.01;
	c.seed = 2024;
	le = make(&c, 64);
	k = ctr;
	memset(buf, 0, sizeof(buf));
	for (uint64_t i = 0; i < N; i++) {
		uint32_t len = 64 + (uint32_t)(i * 37 % 192);
		int copies = link_emu_admit(le, len);

		now += 50 + i % 200;
		for (int j = 0; j < copies; j++) {
			uint64_t h = 2 * i + (uint64_t)j;

			if (j == 1 && i % 3 == 0) {	/* the clone could not be made */
				clone_fail++;
				continue;
			}
			if (link_emu_enqueue(le, now, H(h), len, buf) == 0)
				accepted[h] = 1;
		}
		while ((n = link_emu_dequeue(le, now, out, 32)) > 0)
			for (unsigned int m = 0; m < n; m++) {
				assert_int_equal(out_seen[IDX(out[m])]++, 0);
				assert_true(accepted[IDX(out[m])]);
			}
	}
	/* the last packet (N - 1 is not a multiple of 3) left no copy outstanding */
	in_q = link_emu_count(le);
	while ((n = link_emu_drain(le, out, 32)) > 0)
		for (unsigned int m = 0; m < n; m++)
			assert_int_equal(out_seen[IDX(out[m])]++, 0);
	for (uint64_t h = 0; h < 2 * N; h++)
		assert_int_equal(out_seen[h], accepted[h]);
	assert_true(k[LINK_EMU_C_DROPPED_QUEUE_FULL] > 0);
	assert_true(k[LINK_EMU_C_DROPPED_LOSS] > 0);
	assert_true(k[LINK_EMU_C_CORRUPTED] > 0);
	assert_true(clone_fail > 0);
	assert_true(in_q > 0);
	assert_int_equal(k[LINK_EMU_C_DRAINED], in_q);
	assert_int_equal(k[LINK_EMU_C_COPIES_NOT_ENQUEUED], clone_fail);
	assert_int_equal(k[LINK_EMU_C_PACKETS_IN] + k[LINK_EMU_C_DUPLICATED],
			 k[LINK_EMU_C_DELIVERED] + k[LINK_EMU_C_DROPPED_LOSS] +
			 k[LINK_EMU_C_DROPPED_BURST] + k[LINK_EMU_C_DROPPED_QUEUE_FULL] +
			 k[LINK_EMU_C_COPIES_NOT_ENQUEUED] + k[LINK_EMU_C_DRAINED] +
			 link_emu_count(le));
	assert_true(k[LINK_EMU_C_QUEUE_PEAK] == 64);
	free(accepted);
	free(out_seen);
	link_emu_destroy(le);
}

static void
test_limits(void **state)
{
	struct link_emu_config c;
	struct link_emu *le;

	(void)state;
	link_emu_config_default(&c);
	assert_null(link_emu_create(&c, 0));
	assert_null(link_emu_create(&c, LINK_EMU_MAX_CAPACITY + 1));
	c.dup = -1;
	assert_null(link_emu_create(&c, 1));
	c.dup = 0;
	le = make(&c, 1);
	assert_int_equal(link_emu_admit(le, LINK_EMU_MAX_LEN + 1), -EMSGSIZE);
	assert_int_equal(ctr[LINK_EMU_C_PACKETS_IN], 0);
	assert_int_equal(ctr[LINK_EMU_C_DROPPED_TOO_LONG], 1);
	assert_int_equal(link_emu_admit(le, LINK_EMU_MAX_LEN), 1);
	assert_int_equal(link_emu_enqueue(le, 0, H(0), LINK_EMU_MAX_LEN + 1, NULL), -EMSGSIZE);
	assert_int_equal(link_emu_enqueue(le, 0, H(0), LINK_EMU_MAX_LEN, NULL), 0);
	link_emu_destroy(le);
	link_emu_destroy(NULL);

	/* 10 Gbit/s x 100 ms of 4 KiB packets */
	c.delay_ns = 100000000;
	c.rate_bps = 10000000000ull;
	assert_int_equal(link_emu_capacity_hint(&c, 4096), 30341);
	c.reorder_ns = 10000000;
	assert_int_equal(link_emu_capacity_hint(&c, 4096), 33375);
	c.rate_bps = 0;
	assert_int_equal(link_emu_capacity_hint(&c, 4096), 0);
}

/* ---------------------------------------------------------------- config */

static void
test_validator(void **state)
{
	struct link_emu_config d, c;

	(void)state;
	link_emu_config_default(&d);
	assert_int_equal(link_emu_config_check(&d), 0);
#define BAD(field, value, err) do { \
		c = d; \
		c.field = value; \
		assert_int_equal(link_emu_config_check(&c), -LINK_EMU_E_##err); \
	} while (0)
	BAD(delay_ns, LINK_EMU_MAX_DELAY_NS + 1, DELAY);
	BAD(rate_bps, LINK_EMU_MIN_RATE - 1, RATE);
	BAD(rate_bps, LINK_EMU_MAX_RATE + 1, RATE);
	BAD(overhead, LINK_EMU_MAX_OVERHEAD + 1, OVERHEAD);
	BAD(loss, -0.1, LOSS);
	BAD(loss, 1.01, LOSS);
	BAD(loss, NAN, LOSS);
	BAD(ge_p_gb, 1.5, BURST);
	BAD(ge_p_bg, -1, BURST);
	BAD(ge_loss_good, NAN, BURST);
	BAD(ge_loss_bad, 2, BURST);
	BAD(reorder, 1.5, REORDER);
	BAD(reorder_ns, LINK_EMU_MAX_DELAY_NS + 1, REORDER);
	BAD(dup, -0.5, DUP);
	BAD(corrupt, INFINITY, CORRUPT);
#undef BAD
	c = d;
	c.burst = 1;
	c.loss = 0.1;
	assert_int_equal(link_emu_config_check(&c), -LINK_EMU_E_LOSS_AND_BURST);
	c = d;
	c.delay_ns = LINK_EMU_MAX_DELAY_NS;
	c.rate_bps = LINK_EMU_MAX_RATE;
	c.loss = 1;
	c.reorder_ns = LINK_EMU_MAX_DELAY_NS;
	assert_int_equal(link_emu_config_check(&c), 0);

	assert_string_equal(link_emu_err_name(-LINK_EMU_E_DELAY), "bad_delay");
	assert_string_equal(link_emu_err_name(LINK_EMU_E_MISSING), "missing_value");
	assert_string_equal(link_emu_err_name(0), "ok");
	assert_string_equal(link_emu_err_name(LINK_EMU_E_COUNT), "invalid");
	assert_string_equal(link_emu_strerror(-LINK_EMU_E_DUP),
			    "dup must be a probability in [0, 1]");
	assert_string_equal(link_emu_strerror(-1000), "invalid link emulator error code");
	assert_string_equal(link_emu_counter_name(LINK_EMU_C_DROPPED_BURST), "dropped_burst");
	assert_string_equal(link_emu_counter_name(LINK_EMU_C_QUEUE_PEAK), "queue_peak");
	assert_string_equal(link_emu_counter_name(LINK_EMU_NCOUNTERS), "invalid");
}

static int
parse(struct link_emu_config *c, const char *line, int *bad)
{
	static char buf[512];
	const char *argv[32];
	int argc = 0;
	char *save = NULL;

	strcpy(buf, line);
	for (char *w = strtok_r(buf, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return link_emu_parse(c, argc, argv, bad);
}

static void
test_parse(void **state)
{
	struct link_emu_config c;
	int bad = 77;

	(void)state;
	link_emu_config_default(&c);
	assert_int_equal(parse(&c, "delay 25ms rate 10G loss 1e-3 reorder 0.01,100us dup 0.5% "
			       "corrupt 1e-6 seed 0x10 overhead 20B", &bad), 0);
	assert_int_equal(bad, 77);
	assert_int_equal(c.delay_ns, 25000000);
	assert_int_equal(c.rate_bps, 10000000000ull);
	assert_float_equal(c.loss, 1e-3, 0);
	assert_float_equal(c.reorder, 0.01, 0);
	assert_int_equal(c.reorder_ns, 100000);
	assert_float_equal(c.dup, 0.005, 1e-15);
	assert_float_equal(c.corrupt, 1e-6, 0);
	assert_int_equal(c.seed, 16);
	assert_int_equal(c.overhead, 20);
	assert_int_equal(c.burst, 0);

	/* one word at a time, on top of what is there */
	assert_int_equal(parse(&c, "reorder 0.05", NULL), 0);
	assert_float_equal(c.reorder, 0.05, 0);
	assert_int_equal(c.reorder_ns, 100000);
	assert_int_equal(parse(&c, "burst 0.01,0.25", NULL), 0);
	assert_int_equal(c.burst, 1);
	assert_float_equal(c.loss, 0, 0);
	assert_float_equal(c.ge_loss_good, 0, 0);
	assert_float_equal(c.ge_loss_bad, 1, 0);
	assert_int_equal(parse(&c, "burst 0.01,0.2,0.001,0.5", NULL), 0);
	assert_float_equal(c.ge_p_bg, 0.2, 0);
	assert_float_equal(c.ge_loss_good, 0.001, 0);
	assert_float_equal(c.ge_loss_bad, 0.5, 0);
	assert_int_equal(parse(&c, "loss 0.02", NULL), 0);
	assert_int_equal(c.burst, 0);
	assert_float_equal(c.loss, 0.02, 0);
	assert_int_equal(parse(&c, "burst 0.1,0.5 burst off", NULL), 0);
	assert_int_equal(c.burst, 0);
	assert_int_equal(parse(&c, "rate unlimited", NULL), 0);
	assert_int_equal(c.rate_bps, 0);
	assert_int_equal(parse(&c, "rate 2.5Mbit delay 1.5s", NULL), 0);
	assert_int_equal(c.rate_bps, 2500000);
	assert_int_equal(c.delay_ns, 1500000000);
	assert_int_equal(parse(&c, "rate 0 reorder off", NULL), 0);
	assert_int_equal(c.rate_bps, 0);
	assert_float_equal(c.reorder, 0, 0);
	assert_int_equal(parse(&c, "", NULL), 0);

	/* off: transparent, overhead and seed kept */
	assert_int_equal(parse(&c, "delay 1ms loss 0.1 dup 0.1 corrupt 0.1 off", NULL), 0);
	assert_int_equal(c.delay_ns, 0);
	assert_float_equal(c.loss, 0, 0);
	assert_float_equal(c.dup, 0, 0);
	assert_float_equal(c.corrupt, 0, 0);
	assert_int_equal(c.overhead, 20);
	assert_int_equal(c.seed, 16);
	assert_int_equal(parse(&c, "off delay 3ms", NULL), 0);
	assert_int_equal(c.delay_ns, 3000000);
}

static void
test_parse_errors(void **state)
{
	static const struct {
		const char *line;
		int err;
		int bad;
	} t[] = {
		{ "delay",				LINK_EMU_E_MISSING,	0 },
		{ "loss 0.1 dup",			LINK_EMU_E_MISSING,	2 },
		{ "delay abc",				LINK_EMU_E_DELAY,	1 },
		{ "delay 11s",				LINK_EMU_E_DELAY,	1 },
		{ "delay -1ms",				LINK_EMU_E_DELAY,	1 },
		{ "delay 5min",				LINK_EMU_E_DELAY,	1 },
		{ "rate 500",				LINK_EMU_E_RATE,	1 },
		{ "rate 200T",				LINK_EMU_E_RATE,	1 },
		{ "rate 10GB",				LINK_EMU_E_RATE,	1 },
		{ "rate fast",				LINK_EMU_E_RATE,	1 },
		{ "loss 1.5",				LINK_EMU_E_LOSS,	1 },
		{ "loss -0.1",				LINK_EMU_E_LOSS,	1 },
		{ "loss nan",				LINK_EMU_E_LOSS,	1 },
		{ "burst 0.1",				LINK_EMU_E_BURST,	1 },
		{ "burst 0.1,0.2,0.3",			LINK_EMU_E_BURST,	1 },
		{ "burst 0.1,0.2,0,1,0",		LINK_EMU_E_BURST,	1 },
		{ "burst 0.1,2",			LINK_EMU_E_BURST,	1 },
		{ "burst 0.1,,0,1",			LINK_EMU_E_BURST,	1 },
		{ "burst on",				LINK_EMU_E_BURST,	1 },
		{ "loss 0.1 burst 0.1,0.2",		LINK_EMU_E_LOSS_AND_BURST, 2 },
		{ "burst off delay 1ms loss 0",		LINK_EMU_E_LOSS_AND_BURST, 4 },
		{ "reorder 2",				LINK_EMU_E_REORDER,	1 },
		{ "reorder 0.1,20s",			LINK_EMU_E_REORDER,	1 },
		{ "reorder 0.1,1ms,3",			LINK_EMU_E_REORDER,	1 },
		{ "reorder ,1ms",			LINK_EMU_E_REORDER,	1 },
		{ "reorder 0.01",			LINK_EMU_E_REORDER,	1 },	/* no TIME */
		{ "queue 11s",				LINK_EMU_E_QUEUE,	1 },
		{ "queue -1ms",				LINK_EMU_E_QUEUE,	1 },
		{ "reorder 0.01,0",			LINK_EMU_E_REORDER,	1 },
		{ "dup x",				LINK_EMU_E_DUP,		1 },
		{ "corrupt 1.01",			LINK_EMU_E_CORRUPT,	1 },
		{ "seed -1",				LINK_EMU_E_SEED,	1 },
		{ "seed 18446744073709551616",		LINK_EMU_E_SEED,	1 },
		{ "seed 1x",				LINK_EMU_E_SEED,	1 },
		{ "overhead 5000",			LINK_EMU_E_OVERHEAD,	1 },
		{ "overhead 1.5",			LINK_EMU_E_OVERHEAD,	1 },
		{ "delay 1ms bogus",			LINK_EMU_E_UNKNOWN,	2 },
		{ "25ms",				LINK_EMU_E_UNKNOWN,	0 },
		{ "Delay 25ms",				LINK_EMU_E_UNKNOWN,	0 },
	};
	struct link_emu_config c, before;
	char longword[200];
	const char *argv[3];
	int bad;

	(void)state;
	link_emu_config_default(&c);
	c.delay_ns = 42;
	before = c;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc;

		bad = -99;
		rc = parse(&c, t[i].line, &bad);
		if (rc != -t[i].err || bad != t[i].bad)
			fail_msg("\"%s\": got %s at %d, want %s at %d", t[i].line,
				 link_emu_err_name(rc), bad, link_emu_err_name(t[i].err), t[i].bad);
		/* refused: nothing changed */
		assert_memory_equal(&c, &before, sizeof(c));
	}
	memset(longword, '1', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = '\0';
	argv[0] = "burst";
	argv[1] = longword;
	assert_int_equal(link_emu_parse(&c, 2, argv, &bad), -LINK_EMU_E_BURST);
	argv[0] = NULL;
	assert_int_equal(link_emu_parse(&c, 1, argv, &bad), -LINK_EMU_E_UNKNOWN);
	assert_int_equal(bad, 0);
	/* the starting configuration is bad in a field the words leave alone */
	c.dup = 3;
	assert_int_equal(parse(&c, "delay 1ms", &bad), -LINK_EMU_E_DUP);
	assert_int_equal(bad, -1);
	assert_int_equal(parse(&c, "dup 0.5", &bad), 0);
}

static void
test_format(void **state)
{
	static const struct {
		const char *words;
		const char *line;
	} t[] = {
		{ "",
		  "delay 0 rate unlimited loss 0 reorder 0 dup 0 corrupt 0" },
		{ "delay 25ms rate 10G loss 1e-3 reorder 0.01,100us",
		  "delay 25ms rate 10Gbit/s loss 0.001 reorder 0.01,100us dup 0 corrupt 0" },
		{ "delay 12.5ms rate 2.5Mbit burst 0.01,0.25 dup 0.001 corrupt 1e-6 "
		  "overhead 20 seed 42",
		  "delay 12.5ms rate 2.5Mbit/s burst 0.01,0.25,0,1 reorder 0 dup 0.001 "
		  "corrupt 1e-06 overhead 20 seed 42" },
		{ "delay 1234567ns rate 1500 reorder 0.5,250ns",
		  "delay 1.234567ms rate 1.5Kbit/s loss 0 reorder 0.5,250ns dup 0 corrupt 0" },
		{ "delay 10s rate 100T loss 1 reorder 1,10s dup 1 corrupt 1 seed 0",
		  "delay 10s rate 100Tbit/s loss 1 reorder 1,10s dup 1 corrupt 1 seed 0" },
		{ "delay 999ns rate 400Gbit reorder 0.25,1ns",
		  "delay 999ns rate 400Gbit/s loss 0 reorder 0.25,1ns dup 0 corrupt 0" },
		{ "delay 5ms rate 10G queue 2ms",
		  "delay 5ms rate 10Gbit/s queue 2ms loss 0 reorder 0 dup 0 corrupt 0" },
	};
	char buf[LINK_EMU_FMT_MAX], small[10];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct link_emu_config c, back;

		link_emu_config_default(&c);
		assert_int_equal(parse(&c, t[i].words, NULL), 0);
		assert_string_equal(link_emu_format(&c, buf, sizeof(buf)), t[i].line);
		/* the line parses back to the same configuration */
		link_emu_config_default(&back);
		assert_int_equal(parse(&back, t[i].line, NULL), 0);
		assert_memory_equal(&back, &c, sizeof(c));
	}
	/* the longest line fits */
	{
		struct link_emu_config c;

		link_emu_config_default(&c);
		c.delay_ns = 9999999999ull;
		c.rate_bps = 99999999999999ull;
		c.burst = 1;
		c.ge_p_gb = c.ge_p_bg = c.ge_loss_good = c.ge_loss_bad = 1.234567890123456e-300;
		c.reorder = c.dup = c.corrupt = 4.9e-324;
		c.reorder_ns = 9999999999ull;
		c.overhead = 4095;
		c.seed = UINT64_MAX;
		link_emu_format(&c, buf, sizeof(buf));
		assert_true(strlen(buf) >= 270 && strlen(buf) < sizeof(buf) - 1);
		assert_non_null(strstr(buf, " seed 18446744073709551615"));
		assert_string_equal(link_emu_format(&c, small, sizeof(small)), "delay 9.9");
	}
}

/*
 * Paths by source port: a port always takes the same path; every port of the RoCEv2 range
 * (0xC000-0xFFFF) spread over 2..8 paths within 5 % of an even share; the hash is the one
 * the header documents (an operator places ports with it).
 */
static void
test_path_of(void **state)
{
	(void)state;
	assert_int_equal(link_emu_path_of(0xC123, 1), 0);
	assert_int_equal(link_emu_path_of(0xC123, 0), 0);
	for (unsigned int n = 2; n <= LINK_EMU_MAX_PATHS; n++) {
		unsigned int count[LINK_EMU_MAX_PATHS] = { 0 };

		for (uint32_t sp = 0xC000; sp <= 0xFFFF; sp++) {
			unsigned int k = link_emu_path_of((uint16_t)sp, n);

			assert_true(k < n);
			assert_int_equal(k, link_emu_path_of((uint16_t)sp, n));
			{
				uint32_t h = sp;	/* the header's words, written out */

				h ^= h >> 16;
				h *= 0x85EBCA6Bu;
				h ^= h >> 13;
				h *= 0xC2B2AE35u;
				h ^= h >> 16;
				assert_int_equal(k, h % n);
			}
			count[k]++;
		}
		for (unsigned int k = 0; k < n; k++)
			assert_true(fabs((double)count[k] * n / 16384.0 - 1) < 0.05);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delay_and_rate_exact),
		cmocka_unit_test(test_rate_no_drift),
		cmocka_unit_test(test_fifo_order_and_ties),
		cmocka_unit_test(test_heap_ties_in_enqueue_order),
		cmocka_unit_test(test_iid_loss_rate),
		cmocka_unit_test(test_loss_pattern_independent),
		cmocka_unit_test(test_gilbert_closed_form),
		cmocka_unit_test(test_gilbert_elliott_mean),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_corrupt_one_bit),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_set_config_runtime),
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_set_config_seed),
		cmocka_unit_test(test_rate_unlimited_keeps_order),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_conservation),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_validator),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_path_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
