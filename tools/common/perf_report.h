/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result of a perftest-style run (sdr-perf, sdr-verbs-peer) and how it is printed: one
 * JSON object, or perftest's columns (ib_write_bw / ib_write_lat) with the completion-time
 * percentiles beside them. One printer, so every tool's output reads the same.
 */
#ifndef SDR_PERF_REPORT_H
#define SDR_PERF_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct perf_result {
	int lat;		/**< write_lat (else write_bw) */
	int server;		/**< receiving side: its clock starts at the first packet in */
	uint64_t size;		/**< message bytes */
	uint32_t iters;		/**< messages asked for */
	uint32_t completed;
	uint32_t verified;
	uint32_t failed;
	uint32_t window;	/**< messages in flight: the span of the peak rate */
	uint32_t retransmitted;
	uint32_t decoded;
	const double *lat_s;	/**< per completion: its completion time */
	const double *done_s;	/**< per completion: when it came, from the run's start */
	double elapsed_s;	/**< the run's length when nothing completed */
	const double *app_s;	/**< per completion: the application's post call to the
				 *   completion seen (NULL: not measured) */
	int fresh;		/**< a fresh connection per message (app_s includes its set-up) */
	uint32_t warmup;	/**< the first completions, left out of the times and rates */
};

/** Mean and nearest-rank percentiles of a set of values. */
struct perf_summary {
	double mean, p50, p99, p999, min, max;
};

/** Summarise the @p n values at @p v (copied into @p scratch, n doubles, and sorted there). */
void perf_summarize(const double *v, uint32_t n, double *scratch, struct perf_summary *out);

/** Seconds on the monotonic clock (the times the reports are made of). */
double perf_now_s(void);

/** Print @p r as JSON (@p json) or as perftest's table. @return 0, -1 (no memory). */
int perf_report_print(FILE *f, const struct perf_result *r, int json);

#endif /* SDR_PERF_REPORT_H */
