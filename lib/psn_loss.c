/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet loss from the PSNs that arrive (psn_loss.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "psn_loss.h"

#define PSN_MASK 0xFFFFFFu

int
psn_loss_init(struct psn_loss *l, uint32_t nqp)
{
	memset(l, 0, sizeof(*l));
	if (nqp == 0)
		return -EINVAL;
	l->qp = calloc(nqp, sizeof(*l->qp));
	if (l->qp == NULL)
		return -ENOMEM;
	l->nqp = nqp;
	return 0;
}

void
psn_loss_free(struct psn_loss *l)
{
	free(l->qp);
	l->qp = NULL;
	l->nqp = 0;
}

void
psn_loss_reset(struct psn_loss *l)
{
	if (l->qp != NULL)
		memset(l->qp, 0, (size_t)l->nqp * sizeof(*l->qp));
}

static inline int
test_bit(const struct psn_loss_qp *q, uint32_t psn)
{
	uint32_t b = psn % PSN_LOSS_WINDOW;

	return (int)(q->seen[b / 64] >> (b % 64) & 1);
}

static inline void
set_bit(struct psn_loss_qp *q, uint32_t psn)
{
	uint32_t b = psn % PSN_LOSS_WINDOW;

	q->seen[b / 64] |= 1ull << (b % 64);
}

static inline void
clear_bit(struct psn_loss_qp *q, uint32_t psn)
{
	uint32_t b = psn % PSN_LOSS_WINDOW;

	q->seen[b / 64] &= ~(1ull << (b % 64));
}

/*
 * The highest PSN moves @p d ahead: the PSNs that leave the window are judged. They sit in
 * the slots the new PSNs take (PSN_LOSS_WINDOW divides 2^24, so slot = psn % WINDOW stays
 * consistent across the wrap).
 */
static void
advance(struct psn_loss *l, struct psn_loss_qp *q, uint32_t d)
{
	uint32_t judge = d < PSN_LOSS_WINDOW ? d : PSN_LOSS_WINDOW;

	for (uint32_t i = 1; i <= judge; i++) {
		uint32_t old = (q->hi + i - PSN_LOSS_WINDOW) & PSN_MASK;

		if (q->skip) {
			q->skip--;
		} else {
			uint32_t gone = !test_bit(q, old);

			l->pkts++;
			l->lost += gone;
			q->pkts++;
			q->lost += gone;
		}
		clear_bit(q, old);
	}
	/* a gap wider than the window: the PSNs between were never seen */
	if (d > PSN_LOSS_WINDOW) {
		l->pkts += d - PSN_LOSS_WINDOW;
		l->lost += d - PSN_LOSS_WINDOW;
		q->pkts += d - PSN_LOSS_WINDOW;
		q->lost += d - PSN_LOSS_WINDOW;
	}
	q->hi = (q->hi + d) & PSN_MASK;
}

/*
 * A jump @p d ahead past PSN_LOSS_MAX_GAP: a blackout of the path (a restarted peer's
 * endpoint calls psn_loss_reset() first). The totals judge what the window held and count
 * the PSNs between lost; the QPN's own counts stay as they were, since the caller starts
 * it afresh (PATHS carries them modulo 2^16, which no such jump would survive).
 */
static void
blackout(struct psn_loss *l, const struct psn_loss_qp *q, uint32_t d)
{
	for (uint32_t i = q->skip; i < PSN_LOSS_WINDOW; i++) {
		uint32_t old = (q->hi + 1 + i - PSN_LOSS_WINDOW) & PSN_MASK;

		l->pkts++;
		l->lost += !test_bit(q, old);
	}
	l->pkts += d - 1;
	l->lost += d - 1;
	l->resyncs++;
}

void
psn_loss_seen(struct psn_loss *l, uint32_t qp, uint32_t psn)
{
	struct psn_loss_qp *q;
	uint32_t d;

	if (qp >= l->nqp)
		return;
	q = &l->qp[qp];
	psn &= PSN_MASK;
	if (!q->started) {
		/* the first frame: what a sender sent before it (before this receiver listened,
		 * or lost) is not judged */
		memset(q->seen, 0, sizeof(q->seen));
		q->hi = psn;
		q->skip = PSN_LOSS_WINDOW - 1;
		q->started = 1;
		set_bit(q, psn);
		return;
	}
	d = (psn - q->hi) & PSN_MASK;
	if (d == 0) {
		l->dups++;
		return;
	}
	if (d < (PSN_MASK + 1) / 2) {		/* ahead */
		if (d > PSN_LOSS_MAX_GAP) {
			blackout(l, q, d);
			q->started = 0;
			psn_loss_seen(l, qp, psn);
			return;
		}
		advance(l, q, d);
		set_bit(q, psn);
		return;
	}
	/* behind the highest: late (reordered) or a second copy */
	d = (q->hi - psn) & PSN_MASK;
	if (d >= PSN_LOSS_WINDOW) {
		l->too_late++;
		return;
	}
	if (test_bit(q, psn))
		l->dups++;
	else
		set_bit(q, psn);
}
