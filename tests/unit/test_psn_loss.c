/* SPDX-License-Identifier: BSD-3-Clause */
/* Loss counted from the PSNs that arrive (lib/psn_loss.h), against the frames a seeded wire
 * dropped, counted here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "psn_loss.h"

#define NQP 4
#define N 200000u		/* PSNs sent per QPN */

static uint64_t rng = 88172645463325252ull;

static double
uni(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/*
 * Four QPNs, their PSNs starting anywhere (one wraps past 2^24), interleaved; the wire drops
 * 5 %, duplicates 2 % and delays 5 % by up to 300 frames (of all QPNs: within the window).
 * Judged: every PSN from each QPN's first frame up to its highest less the window, each once;
 * lost: exactly the dropped ones among them.
 */
static void
test_counts_the_wire(void **state)
{
	static uint8_t dropped[NQP][N];
	static const uint32_t start[NQP] = { 0, 77, 0xFFFFFF - 5000, 123456 };
	struct { uint32_t qp, psn; int due; } late[4096];
	struct psn_loss l;
	uint32_t first[NQP], hi[NQP], nlate = 0, sent = 0;
	int have_first[NQP] = { 0 };
	uint64_t want_pkts = 0, want_lost = 0;

	(void)state;
	assert_int_equal(psn_loss_init(&l, NQP), 0);
	for (uint32_t k = 0; k < N * NQP; k++, sent++) {
		uint32_t qp = k % NQP, i = k / NQP, psn = (start[qp] + i) & 0xFFFFFF;

		/* the delayed ones whose time came */
		for (uint32_t j = 0; j < nlate; j++)
			if (late[j].due <= (int)sent) {
				psn_loss_seen(&l, late[j].qp, late[j].psn);
				late[j--] = late[--nlate];
			}
		if (uni() < 0.05) {
			dropped[qp][i] = 1;
			continue;
		}
		if (!have_first[qp]) {
			have_first[qp] = 1;
			first[qp] = i;
		}
		hi[qp] = i;
		if (uni() < 0.05 && nlate < 4096) {
			late[nlate++] = (typeof(late[0])){ qp, psn, (int)sent + 1 + (int)(uni() * 300) };
			continue;
		}
		psn_loss_seen(&l, qp, psn);
		if (uni() < 0.02)
			psn_loss_seen(&l, qp, psn);
	}
	for (uint32_t j = 0; j < nlate; j++)
		psn_loss_seen(&l, late[j].qp, late[j].psn);
	for (uint32_t qp = 0; qp < NQP; qp++) {
		uint32_t qp_pkts = 0, qp_lost = 0;	/* and each QPN's own */

		for (uint32_t i = first[qp]; i + PSN_LOSS_WINDOW <= hi[qp]; i++) {
			want_pkts++;
			want_lost += dropped[qp][i];
			qp_pkts++;
			qp_lost += dropped[qp][i];
		}
		assert_int_equal(l.qp[qp].pkts, qp_pkts);
		assert_int_equal(l.qp[qp].lost, qp_lost);
	}
	print_message("judged %llu, lost %llu (%.4f), duplicates %llu, too late %llu\n",
		      (unsigned long long)l.pkts, (unsigned long long)l.lost,
		      (double)l.lost / (double)l.pkts, (unsigned long long)l.dups,
		      (unsigned long long)l.too_late);
	assert_int_equal(l.pkts, want_pkts);
	assert_int_equal(l.lost, want_lost);
	assert_true(l.dups > 0 && l.too_late == 0 && l.resyncs == 0);
	psn_loss_free(&l);
}

/* A gap wider than the window counts every PSN in it; a jump past PSN_LOSS_MAX_GAP (a
 * blackout) counts them in the totals and starts the QPN's own counts afresh; a frame
 * older than the window is too late; a reset forgets the QPNs. */
static void
test_gaps_and_jumps(void **state)
{
	struct psn_loss l;
	uint32_t p = 1000;

	(void)state;
	assert_int_equal(psn_loss_init(&l, 0), -EINVAL);
	assert_int_equal(psn_loss_init(&l, 2), 0);
	for (uint32_t i = 0; i < 3000; i++)
		psn_loss_seen(&l, 0, p++);
	assert_int_equal(l.pkts, 3000 - PSN_LOSS_WINDOW);
	assert_int_equal(l.lost, 0);
	p += 5000;				/* 5000 lost in a row */
	for (uint32_t i = 0; i <= PSN_LOSS_WINDOW; i++)	/* then the window past them */
		psn_loss_seen(&l, 0, p++);
	/* judged: every PSN from the first (1000) to the highest less the window */
	assert_int_equal(l.pkts, (p - 1 - PSN_LOSS_WINDOW) - 1000 + 1);
	assert_int_equal(l.lost, 5000);
	psn_loss_seen(&l, 0, p - 1 - PSN_LOSS_WINDOW);	/* older than the window */
	assert_int_equal(l.too_late, 1);
	{
		/* a blackout: the window's PSNs judged (all seen), the ones between lost; the
		 * QPN's own counts stay */
		uint64_t pkts = l.pkts, qpkts = l.qp[0].pkts, qlost = l.qp[0].lost;

		psn_loss_seen(&l, 0, p + PSN_LOSS_MAX_GAP + 1);
		assert_int_equal(l.resyncs, 1);
		assert_int_equal(l.lost, 5000 + PSN_LOSS_MAX_GAP + 1);
		assert_int_equal(l.pkts, pkts + PSN_LOSS_WINDOW + PSN_LOSS_MAX_GAP + 1);
		assert_int_equal(l.qp[0].pkts, qpkts);
		assert_int_equal(l.qp[0].lost, qlost);
		/* the QPN afresh from there: the next window judges only its own frames */
		p += PSN_LOSS_MAX_GAP + 1;
		pkts = l.pkts;
		for (uint32_t i = 1; i <= PSN_LOSS_WINDOW; i++)
			psn_loss_seen(&l, 0, p + i);
		assert_int_equal(l.pkts, pkts + 1);
		assert_int_equal(l.lost, 5000 + PSN_LOSS_MAX_GAP + 1);
	}
	psn_loss_seen(&l, 5, 1);			/* no such QPN */
	psn_loss_reset(&l);
	{
		uint64_t before = l.pkts;

		psn_loss_seen(&l, 0, 17);		/* afresh: nothing before it judged */
		for (uint32_t i = 18; i < 18 + PSN_LOSS_WINDOW; i++)
			psn_loss_seen(&l, 0, i);
		assert_int_equal(l.pkts, before + 1);	/* 17 itself, now out of the window */
		assert_int_equal(l.lost, 5000 + PSN_LOSS_MAX_GAP + 1);
	}
	psn_loss_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_the_wire),
		cmocka_unit_test(test_gaps_and_jumps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
