/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SP/SC ring of the control plane (control/sdr_spsc.h) with a peer that lies: whatever
 * index the other side writes into the shared memory, this side never reads or writes past
 * the ring, and says -EPROTO when the index is impossible.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sdr_spsc.h"

#define DEPTH 8

struct ent {
	uint64_t a, b;
};

/* A ring in memory between two guard areas that must stay untouched. */
struct mem {
	uint8_t guard0[64];
	uint8_t ring[SDR_SPSC_BYTES(DEPTH, sizeof(struct ent))];
	uint8_t guard1[64];
};

static void
check_guards(const struct mem *m)
{
	for (size_t i = 0; i < sizeof(m->guard0); i++) {
		assert_int_equal(m->guard0[i], 0xA5);
		assert_int_equal(m->guard1[i], 0xA5);
	}
}

static struct mem *
mem_new(struct sdr_spsc_end *prod, struct sdr_spsc_end *cons)
{
	struct mem *m = calloc(1, sizeof(*m));

	memset(m->guard0, 0xA5, sizeof(m->guard0));
	memset(m->guard1, 0xA5, sizeof(m->guard1));
	sdr_spsc_bind(prod, m->ring, DEPTH, sizeof(struct ent));
	sdr_spsc_bind(cons, m->ring, DEPTH, sizeof(struct ent));
	return m;
}

/* In order, through many wraparounds; full and empty said as such. */
static void
test_fifo(void **state)
{
	struct sdr_spsc_end p, c;
	struct mem *m = mem_new(&p, &c);
	struct ent e = { 0 }, got;
	uint64_t in = 0, out = 0;

	(void)state;
	assert_int_equal(sdr_spsc_pop(&c, &got), -EAGAIN);
	for (int round = 0; round < 1000; round++) {
		int n = round % (DEPTH + 3);

		for (int i = 0; i < n; i++) {
			e.a = in;
			e.b = ~in;
			if (in - out == DEPTH) {
				assert_int_equal(sdr_spsc_push(&p, &e), -ENOBUFS);
				break;
			}
			assert_int_equal(sdr_spsc_push(&p, &e), 0);
			in++;
		}
		while (out < in) {
			assert_int_equal(sdr_spsc_pop(&c, &got), 0);
			assert_int_equal(got.a, out);
			assert_int_equal(got.b, ~out);
			out++;
		}
		assert_int_equal(sdr_spsc_pop(&c, &got), -EAGAIN);
	}
	check_guards(m);
	free(m);
}

/* A producer that lies about its index: more than the ring holds, or behind the consumer. */
static void
test_lying_producer(void **state)
{
	static const uint32_t lies[] = { DEPTH + 1, 0x80000000u, UINT32_MAX, 1000 };
	struct sdr_spsc_end p, c;
	struct mem *m = mem_new(&p, &c);
	struct ent e = { 1, 2 }, got;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(sdr_spsc_push(&p, &e), 0);
	assert_int_equal(sdr_spsc_pop(&c, &got), 0);
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		c.sh->prod = c.idx + lies[i];
		assert_int_equal(sdr_spsc_pop(&c, &got), -EPROTO);
		assert_int_equal(c.idx, 1);	/* nothing taken */
	}
	c.sh->prod = c.idx - 1;			/* behind what was taken already */
	assert_int_equal(sdr_spsc_pop(&c, &got), -EPROTO);
	/* up to the ring's size ahead is possible: entries are read, inside the ring */
	c.sh->prod = c.idx + DEPTH;
	for (int i = 0; i < DEPTH; i++)
		assert_int_equal(sdr_spsc_pop(&c, &got), 0);
	assert_int_equal(sdr_spsc_pop(&c, &got), -EAGAIN);
	check_guards(m);
	free(m);
}

/* A consumer that lies: claims to have taken what was never put in. */
static void
test_lying_consumer(void **state)
{
	struct sdr_spsc_end p, c;
	struct mem *m = mem_new(&p, &c);
	struct ent e = { 3, 4 };

	(void)state;
	assert_int_equal(sdr_spsc_push(&p, &e), 0);
	p.sh->cons = p.idx + 5;			/* ahead of the producer */
	assert_int_equal(sdr_spsc_push(&p, &e), -EPROTO);
	p.sh->cons = p.idx - DEPTH - 1;		/* more outstanding than the ring holds */
	assert_int_equal(sdr_spsc_push(&p, &e), -EPROTO);
	p.sh->cons = p.idx - DEPTH;		/* full */
	assert_int_equal(sdr_spsc_push(&p, &e), -ENOBUFS);
	assert_int_equal(p.idx, 1);
	check_guards(m);
	free(m);
}

/* Random indices and entries from the peer, a million times: never outside the ring. */
static void
test_random_peer(void **state)
{
	struct sdr_spsc_end p, c;
	struct mem *m = mem_new(&p, &c);
	struct ent e = { 5, 6 }, got;
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x & 1)
			c.sh->prod = (uint32_t)(x >> 8) & ((x & 2) ? 0xF : UINT32_MAX);
		else
			p.sh->cons = (uint32_t)(x >> 8) & ((x & 2) ? 0xF : UINT32_MAX);
		uint32_t pi = p.idx, ci = c.idx;
		int pushed = sdr_spsc_push(&p, &e) == 0, popped = sdr_spsc_pop(&c, &got) == 0;

		/* an index moves by one, and only when an entry went through */
		assert_int_equal(p.idx, pi + (uint32_t)pushed);
		assert_int_equal(c.idx, ci + (uint32_t)popped);
	}
	check_guards(m);
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_lying_producer),
		cmocka_unit_test(test_lying_consumer),
		cmocka_unit_test(test_random_peer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
