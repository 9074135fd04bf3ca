/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nearest-rank quantiles of samples (completion times), one definition for every report:
 * sdr-perf and sdr-coll-perf (tools/common/perf_report.c), sdr-sim, the dataplane's
 * built-in traffic. The q-quantile of n sorted values is the ceil(q n)-th smallest (the
 * smallest for q = 0), and 0 when there is none.
 */
#ifndef SDR_QUANTILE_H
#define SDR_QUANTILE_H

#include <stddef.h>

/** Sort @p n values ascending. */
void sdr_sort_doubles(double *v, size_t n);

/** The @p q-quantile (0..1) of @p n values sorted ascending; 0 when @p n is 0. */
double sdr_quantile_sorted(const double *v, size_t n, double q);

#endif /* SDR_QUANTILE_H */
