/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the benchmark programs: a monotonic clock, a best-of-N timer, and the
 * record format tools/bench/run.py collects. Every figure is reported beside a baseline
 * measured in the same run; ratio = value / baseline_value.
 */
#ifndef SDR_BENCH_UTIL_H
#define SDR_BENCH_UTIL_H

#include <stdio.h>
#include <stdint.h>
#include <time.h>

static inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** Keep a value alive so the compiler cannot drop the work that made it. */
static inline void
bench_sink(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

/**
 * One benchmark record on stdout (JSON Lines).
 * @param better "lower" for costs (ns, cycles), "higher" for rates (GB/s, Mpps).
 */
static inline void
bench_record(const char *group, const char *name, double value, const char *unit,
	     const char *baseline, double baseline_value, const char *better)
{
	printf("{\"group\":\"%s\",\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
	       "\"baseline\":\"%s\",\"baseline_value\":%.6g,\"ratio\":%.4f,\"better\":\"%s\"}\n",
	       group, name, value, unit, baseline, baseline_value,
	       baseline_value != 0 ? value / baseline_value : 0.0, better);
	fflush(stdout);
}

/** A figure with no baseline of its own (e.g. a derived count); ratio is omitted (0). */
static inline void
bench_note(const char *group, const char *name, double value, const char *unit,
	   const char *what)
{
	printf("{\"group\":\"%s\",\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
	       "\"baseline\":\"%s\",\"baseline_value\":null,\"ratio\":null,\"better\":\"n/a\"}\n",
	       group, name, value, unit, what);
	fflush(stdout);
}

#endif /* SDR_BENCH_UTIL_H */
