/* SPDX-License-Identifier: BSD-3-Clause */
/* QPN directory: sorted ranges, binary search. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpn_table.h"
#include "roce_hdr.h"

struct qpn_range {
	uint32_t base;
	uint32_t count;
	uint32_t conn;
};

struct qpn_table {
	uint32_t n;
	uint32_t cap;
	struct qpn_range r[];
};

struct qpn_table *
qpn_table_create(uint32_t capacity)
{
	struct qpn_table *t = calloc(1, sizeof(*t) + capacity * sizeof(struct qpn_range));

	if (t != NULL)
		t->cap = capacity;
	return t;
}

void
qpn_table_destroy(struct qpn_table *t)
{
	free(t);
}

/* Index of the first range whose base is greater than qpn. */
static uint32_t
upper_bound(const struct qpn_table *t, uint32_t qpn)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (t->r[mid].base <= qpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
qpn_table_add(struct qpn_table *t, uint32_t base, uint32_t count, uint32_t conn)
{
	uint32_t i;

	if (count == 0 || base == 0 || (uint64_t)base + count - 1 > ROCE_QPN_MASK)
		return -EINVAL;
	i = upper_bound(t, base);
	if (i > 0 && t->r[i - 1].base + t->r[i - 1].count > base)
		return -EEXIST;
	if (i < t->n && base + count > t->r[i].base)
		return -EEXIST;
	if (t->n == t->cap)
		return -ENOSPC;
	memmove(&t->r[i + 1], &t->r[i], (t->n - i) * sizeof(t->r[0]));
	t->r[i] = (struct qpn_range){ base, count, conn };
	t->n++;
	return 0;
}

int
qpn_table_del(struct qpn_table *t, uint32_t conn)
{
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->r[i].conn == conn) {
			memmove(&t->r[i], &t->r[i + 1], (t->n - i - 1) * sizeof(t->r[0]));
			t->n--;
			return 0;
		}
	}
	return -ENOENT;
}

int
qpn_table_lookup(const struct qpn_table *t, uint32_t qpn, uint32_t *conn, uint32_t *base)
{
	uint32_t i = upper_bound(t, qpn);

	if (i == 0 || qpn - t->r[i - 1].base >= t->r[i - 1].count)
		return -ENOENT;
	*conn = t->r[i - 1].conn;
	*base = t->r[i - 1].base;
	return 0;
}

uint32_t
qpn_table_count(const struct qpn_table *t)
{
	return t->n;
}
