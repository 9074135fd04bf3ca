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
 * @param kind what the baseline is: "measured" in this run, "derived" (computed from this
 *   run's figures, e.g. Mpps = TSC Hz / cycles) or "published" (a constant from a paper).
 */
static inline void
bench_record_kind(const char *group, const char *name, double value, const char *unit,
		  const char *baseline, double baseline_value, const char *better,
		  const char *kind)
{
	char ratio[32];

	/* a baseline of 0 (a run that measured nothing) has no ratio: null, never a 0 that
	 * would read as a perfect cost */
	if (baseline_value != 0 && baseline_value == baseline_value)
		snprintf(ratio, sizeof(ratio), "%.4f", value / baseline_value);
	else
		snprintf(ratio, sizeof(ratio), "null");
	printf("{\"group\":\"%s\",\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
	       "\"baseline\":\"%s\",\"baseline_value\":%.6g,\"ratio\":%s,\"better\":\"%s\","
	       "\"baseline_kind\":\"%s\"}\n", group, name, value, unit, baseline, baseline_value,
	       ratio, better, kind);
	fflush(stdout);
}

/** bench_record_kind() with a baseline measured in the same run. */
static inline void
bench_record(const char *group, const char *name, double value, const char *unit,
	     const char *baseline, double baseline_value, const char *better)
{
	bench_record_kind(group, name, value, unit, baseline, baseline_value, better, "measured");
}

/** A figure with no baseline value (e.g. a derived count beside published figures, named
 * in @p what); ratio is omitted (null). */
static inline void
bench_note(const char *group, const char *name, double value, const char *unit,
	   const char *what)
{
	printf("{\"group\":\"%s\",\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
	       "\"baseline\":\"%s\",\"baseline_value\":null,\"ratio\":null,\"better\":\"n/a\","
	       "\"baseline_kind\":\"published\"}\n", group, name, value, unit, what);
	fflush(stdout);
}

#endif /* SDR_BENCH_UTIL_H */
