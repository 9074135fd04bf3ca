/* SPDX-License-Identifier: BSD-3-Clause */
/* Nearest-rank quantiles (quantile.h). */
#include <math.h>
#include <stdlib.h>

#include "quantile.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
sdr_sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(double), cmp_double);
}

double
sdr_quantile_sorted(const double *v, size_t n, double q)
{
	double r;

	if (n == 0)
		return 0;
	/* the rank, not pushed up a whole sample by the rounding of q n (0.999 x 1000) */
	r = ceil(q * (double)n - 1e-9);
	if (!(r >= 1))
		return v[0];
	return r >= (double)n ? v[n - 1] : v[(size_t)r - 1];
}
