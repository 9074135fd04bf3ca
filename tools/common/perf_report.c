/* SPDX-License-Identifier: BSD-3-Clause */
/* Printing a perftest-style result (see perf_report.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_report.h"
#include "quantile.h"

#define RULE "---------------------------------------------------------------------------------------\n"

/* The q-quantile of @p n sorted values (nearest rank). */
static double
pct(const double *v, uint32_t n, double q)
{
	return sdr_quantile_sorted(v, n, q);
}

void
perf_summarize(const double *v, uint32_t n, double *s, struct perf_summary *out)
{
	double sum = 0;

	memcpy(s, v, n * sizeof(double));
	sdr_sort_doubles(s, n);
	for (uint32_t i = 0; i < n; i++)
		sum += v[i];
	*out = (struct perf_summary){ .mean = n ? sum / n : 0, .p50 = pct(s, n, .5),
				 .p99 = pct(s, n, .99), .p999 = pct(s, n, .999),
				 .min = n ? s[0] : 0, .max = n ? s[n - 1] : 0 };
}

int
perf_report_print(FILE *f, const struct perf_result *r, int json)
{
	struct perf_summary app = { 0 };
	/* the first r->warmup completions count as delivered, not in the times and rates */
	uint32_t first = r->warmup < r->completed ? r->warmup : r->completed;
	uint32_t n = r->completed - first, win = r->window > 1 ? r->window : 1;
	const double *lat = r->lat_s + first, *done = r->done_s + first;
	double start = first ? r->done_s[first - 1] : 0, elapsed, avg, peak, mean = 0, rate;
	double *s = malloc((n ? n : 1) * sizeof(double));

	if (s == NULL)
		return -1;
	/*
	 * The server's clock starts with the first packet in, not when it started waiting;
	 * after a warm-up, either side's with the first measured message (a client's: its
	 * post), not at the last warm-up completion, when measured messages in flight may
	 * have much of their bytes delivered already.
	 */
	for (uint32_t i = 0; (r->server || first) && i < n; i++)
		if (i == 0 || done[i] - lat[i] < start)
			start = done[i] - lat[i];
	elapsed = n ? done[n - 1] - start : r->elapsed_s;
	avg = elapsed > 0 ? (double)n * (double)r->size * 8e-9 / elapsed : 0;
	rate = elapsed > 0 ? n / elapsed * 1e-6 : 0;
	/* peak: the best rate over any window of `inflight` consecutive completions */
	peak = avg;
	for (uint32_t i = win; i < n; i++) {
		double dt = done[i] - done[i - win];

		if (dt > 0 && (double)win * (double)r->size * 8e-9 / dt > peak)
			peak = (double)win * (double)r->size * 8e-9 / dt;
	}
	if (r->app_s != NULL)
		perf_summarize(r->app_s + first, n, s, &app);
	memcpy(s, lat, n * sizeof(double));
	sdr_sort_doubles(s, n);
	for (uint32_t i = 0; i < n; i++)
		mean += lat[i];
	mean = n ? mean / n : 0;
	if (json) {
		fprintf(f, "{\"test\":\"%s\",\"role\":\"%s\",\"bytes\":%" PRIu64 ",\"iterations\":%u,"
			"\"completed\":%u,\"verified\":%u,\"failed\":%u,\"bw_peak_gbps\":%.6g,"
			"\"bw_avg_gbps\":%.6g,\"msg_rate_mpps\":%.6g,\"mean_s\":%.9g,\"p50_s\":%.9g,"
			"\"p99_s\":%.9g,\"p999_s\":%.9g,\"max_s\":%.9g,\"retransmitted_chunks\":%u,"
			"\"decoded_submessages\":%u", r->lat ? "write_lat" : "write_bw",
			r->server ? "server" : "client", r->size, r->iters, r->completed, r->verified,
			r->failed,
			peak, avg, rate, mean, pct(s, n, .5), pct(s, n, .99), pct(s, n, .999),
			n ? s[n - 1] : 0, r->retransmitted, r->decoded);
		if (first)
			fprintf(f, ",\"warmup\":%u,\"measured\":%u", first, n);
		if (r->app_s != NULL)
			fprintf(f, ",\"fresh\":%s,\"app_mean_s\":%.9g,\"app_p50_s\":%.9g,"
				"\"app_p99_s\":%.9g,\"app_p999_s\":%.9g,\"app_max_s\":%.9g",
				r->fresh ? "true" : "false", app.mean, app.p50, app.p99, app.p999,
				app.max);
		fprintf(f, "}\n");
	} else if (r->lat) {
		char vbuf[32] = "-";

		/* (verified counts the warm-up's messages too: of all completed) */
		if (r->server)
			snprintf(vbuf, sizeof(vbuf), "%u/%u", r->verified, r->completed);
		fprintf(f, RULE);
		fprintf(f, " %-10s %-12s %-10s %-10s %-12s %-10s %-10s %-10s %-10s\n", "#bytes",
			"#iterations", "t_min[us]", "t_max[us]", "t_typical[us]", "t_avg[us]",
			"99%[us]", "99.9%[us]", "verified");
		fprintf(f, " %-10" PRIu64 " %-12u %-10.1f %-10.1f %-12.1f %-10.1f %-10.1f %-10.1f "
			"%-10s\n", r->size, n, n ? s[0] * 1e6 : 0, n ? s[n - 1] * 1e6 : 0,
			pct(s, n, .5) * 1e6, mean * 1e6, pct(s, n, .99) * 1e6, pct(s, n, .999) * 1e6,
			vbuf);
		if (r->app_s != NULL)
			fprintf(f, " %-10s %-12s %-10.1f %-10.1f %-12.1f %-10.1f %-10.1f %-10.1f "
				"%-10s\n", "", r->fresh ? "(post,fresh)" : "(post)", app.min * 1e6,
				app.max * 1e6, app.p50 * 1e6, app.mean * 1e6, app.p99 * 1e6,
				app.p999 * 1e6, "");
		fprintf(f, RULE);
	} else {
		fprintf(f, RULE);
		fprintf(f, " %-10s %-12s %-16s %-19s %-14s %-9s %-9s %-9s\n", "#bytes", "#iterations",
			"BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]", "p50[ms]", "p99[ms]",
			"p99.9[ms]");
		fprintf(f, " %-10" PRIu64 " %-12u %-16.3f %-19.3f %-14.6f %-9.2f %-9.2f %-9.2f\n",
			r->size, n, peak, avg, rate, pct(s, n, .5) * 1e3, pct(s, n, .99) * 1e3,
			pct(s, n, .999) * 1e3);
		fprintf(f, RULE);
		if (r->server)
			fprintf(f, " verified %u of %u messages\n", r->verified, r->completed);
	}
	free(s);
	return 0;
}

double
perf_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
