/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet loss on the wire, counted from the PSNs of the frames that arrive.
 *
 * Every frame a sender puts on one of its data QPNs (first sends, resends and parity alike)
 * takes that QPN's next PSN, so the PSNs that never arrive are the frames the path lost,
 * whatever the reliability scheme did about them. Per QPN the receiver keeps the highest
 * PSN seen and which of the PSN_LOSS_WINDOW below it arrived; a PSN is judged when it leaves
 * that window (the highest moved PSN_LOSS_WINDOW past it): counted, and counted lost if it
 * never arrived. A frame that arrives late but within the window (reordering) is therefore
 * not lost; one that arrives twice (duplication on the path) counts once. Judging only
 * once the window has passed costs nothing but delay: the last PSN_LOSS_WINDOW of a QPN
 * wait for the next frames.
 *
 * A jump ahead of more than PSN_LOSS_MAX_GAP (and less than half the PSN space) is a
 * blackout of the path: a peer that restarted with other PSNs is not one, since its
 * endpoint resets the counts first (psn_loss_reset()). The totals count the PSNs between
 * lost; the QPN starts afresh, its own counts as they were (resyncs). A jump of half the
 * space or more looks like a frame from behind: too late. No clock, no allocation after
 * psn_loss_init().
 */
#ifndef SDR_PSN_LOSS_H
#define SDR_PSN_LOSS_H

#include <stdint.h>

#define PSN_LOSS_WINDOW 256u		/**< PSNs per QPN a frame may arrive late by */
#define PSN_LOSS_MAX_GAP 65536u		/**< a larger jump ahead restarts the QPN's counts */

struct psn_loss_qp {
	uint32_t hi;			/**< highest PSN seen */
	uint16_t skip;			/**< PSNs before the first frame, still in the window:
					 *   not judged */
	uint8_t started;
	uint32_t pkts, lost;		/**< this QPN's judged and lost PSNs (running) */
	uint64_t seen[PSN_LOSS_WINDOW / 64];	/**< bit (psn % WINDOW): arrived */
};

struct psn_loss {
	uint32_t nqp;
	uint64_t pkts;			/**< PSNs judged */
	uint64_t lost;			/**< ... of them never arrived */
	uint64_t dups;			/**< frames whose PSN had arrived already */
	uint64_t too_late;		/**< frames older than the window (judged lost before) */
	uint64_t resyncs;		/**< blackouts: jumps past PSN_LOSS_MAX_GAP */
	struct psn_loss_qp *qp;
};

/** For @p nqp QPNs. @return 0, -ENOMEM, -EINVAL (0 QPNs). */
int psn_loss_init(struct psn_loss *l, uint32_t nqp);

void psn_loss_free(struct psn_loss *l);

/** Every QPN afresh (the peer restarted); the counts stay. */
void psn_loss_reset(struct psn_loss *l);

/** A frame with PSN @p psn (24 bits) arrived on QPN @p qp (< nqp; others are ignored). */
void psn_loss_seen(struct psn_loss *l, uint32_t qp, uint32_t psn);

#endif /* SDR_PSN_LOSS_H */
