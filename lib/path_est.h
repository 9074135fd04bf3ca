/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a sender learns of its path from the acknowledgements: the round-trip time and the
 * rate at which the path delivers.
 *
 * RTT. A sample is the time from a chunk's send to the acknowledgement that first covers it,
 * taken only from messages with no retransmission so far (Karn's rule: an acknowledgement of
 * a resent chunk cannot say which copy it answers). Kept three ways: the smallest sample in
 * the last one to two windows (the propagation delay: queueing and acknowledgement delay only
 * ever add to a sample; the window lets a longer route replace a shorter one), the smoothed
 * RTT and its mean deviation with RFC 6298's gains (1/8, 1/4), and the last sample.
 *
 * Delivery rate. When a message completes, the bytes the path delivered (acknowledged, of
 * every message) since the message's first chunk went out, divided by the time since: the
 * rate over at least one round trip. A sender with too little to send (application-limited)
 * delivers less than the path could, so the estimate is the largest sample in the last one to
 * two windows: a lower bound of the path's rate that reaches it whenever the connection
 * filled the path once in that time.
 *
 * Both come with their sample counts, the confidence the reader weighs them by. No clock:
 * the caller passes the time.
 */
#ifndef PATH_EST_H
#define PATH_EST_H

#include <stdint.h>

#define PATH_EST_WINDOW_NS 10000000000ull	/**< default window: 10 s */

struct path_est {
	uint64_t window_ns;
	/* RTT */
	uint64_t rtt_samples;
	uint64_t rtt_last_ns;
	double srtt_ns;
	double rttvar_ns;
	uint64_t rtt_min_cur, rtt_min_prev;	/* UINT64_MAX: no sample in that window */
	uint64_t rtt_win_start;
	/* delivery rate */
	uint64_t rate_samples;
	double rate_last_bps;
	double rate_max_cur, rate_max_prev;	/* 0: no sample in that window */
	uint64_t rate_win_start;
	uint64_t delivered;			/* bytes acknowledged, all messages */
};

/** No samples yet; @p window_ns 0 takes PATH_EST_WINDOW_NS. */
void path_est_init(struct path_est *e, uint64_t window_ns);

/** An RTT sample of @p rtt_ns taken at @p now (0 is ignored). */
void path_est_rtt(struct path_est *e, uint64_t rtt_ns, uint64_t now);

/** A delivery-rate sample: @p bytes delivered in @p dt_ns, taken at @p now. */
void path_est_rate(struct path_est *e, uint64_t bytes, uint64_t dt_ns, uint64_t now);

/** Smallest RTT of the last one to two windows at @p now; 0 with no sample there. */
uint64_t path_est_min_rtt(const struct path_est *e, uint64_t now);

/** Largest delivery rate (bit/s) of the last one to two windows at @p now; 0 with none. */
double path_est_max_rate(const struct path_est *e, uint64_t now);

#endif /* PATH_EST_H */
