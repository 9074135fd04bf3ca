/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RTT and delivery-rate estimates (see path_est.h). The windowed extremes keep two buckets,
 * the current window's and the previous one's, as Linux's minmax filter does with three: a
 * sample older than two windows is forgotten, and the estimate never jumps to nothing at a
 * window's edge.
 */
#include <string.h>

#include "path_est.h"

void
path_est_init(struct path_est *e, uint64_t window_ns)
{
	memset(e, 0, sizeof(*e));
	e->window_ns = window_ns ? window_ns : PATH_EST_WINDOW_NS;
	e->rtt_min_cur = e->rtt_min_prev = UINT64_MAX;
}

/* Start a new window at @p now when the current one is over; @return 1 when it did. */
static int
roll(const struct path_est *e, uint64_t *start, uint64_t now, int *both_old)
{
	*both_old = 0;
	if (now - *start < e->window_ns)
		return 0;
	*both_old = now - *start >= 2 * e->window_ns;
	*start = now;
	return 1;
}

void
path_est_rtt(struct path_est *e, uint64_t rtt_ns, uint64_t now)
{
	double r = (double)rtt_ns;
	int old;

	if (rtt_ns == 0)
		return;
	if (e->rtt_samples == 0) {
		e->srtt_ns = r;
		e->rttvar_ns = r / 2;
		e->rtt_win_start = now;
	} else {
		e->rttvar_ns += ((e->srtt_ns > r ? e->srtt_ns - r : r - e->srtt_ns) - e->rttvar_ns) / 4;
		e->srtt_ns += (r - e->srtt_ns) / 8;
	}
	e->rtt_samples++;
	e->rtt_last_ns = rtt_ns;
	if (roll(e, &e->rtt_win_start, now, &old)) {
		e->rtt_min_prev = old ? UINT64_MAX : e->rtt_min_cur;
		e->rtt_min_cur = UINT64_MAX;
	}
	if (rtt_ns < e->rtt_min_cur)
		e->rtt_min_cur = rtt_ns;
}

void
path_est_rate(struct path_est *e, uint64_t bytes, uint64_t dt_ns, uint64_t now)
{
	double bps;
	int old;

	if (dt_ns == 0 || bytes == 0)
		return;
	bps = (double)bytes * 8e9 / (double)dt_ns;
	if (e->rate_samples == 0)
		e->rate_win_start = now;
	e->rate_samples++;
	e->rate_last_bps = bps;
	if (roll(e, &e->rate_win_start, now, &old)) {
		e->rate_max_prev = old ? 0 : e->rate_max_cur;
		e->rate_max_cur = 0;
	}
	if (bps > e->rate_max_cur)
		e->rate_max_cur = bps;
}

uint64_t
path_est_min_rtt(const struct path_est *e, uint64_t now)
{
	uint64_t age = now - e->rtt_win_start, m;

	if (e->rtt_samples == 0 || age >= 2 * e->window_ns)
		return 0;
	m = e->rtt_min_cur;
	if (age < e->window_ns && e->rtt_min_prev < m)
		m = e->rtt_min_prev;
	return m == UINT64_MAX ? 0 : m;
}

double
path_est_max_rate(const struct path_est *e, uint64_t now)
{
	uint64_t age = now - e->rate_win_start;
	double m;

	if (e->rate_samples == 0 || age >= 2 * e->window_ns)
		return 0;
	m = e->rate_max_cur;
	if (age < e->window_ns && e->rate_max_prev > m)
		m = e->rate_max_prev;
	return m;
}
