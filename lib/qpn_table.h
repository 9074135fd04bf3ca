/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPN directory: which connection owns a destination QPN. Each connection registers one
 * contiguous range (its data QPNs and control QPN); lookup is a binary search over the
 * sorted ranges. Fixed capacity, allocated at create time; lookup never allocates.
 */
#ifndef SDR_QPN_TABLE_H
#define SDR_QPN_TABLE_H

#include <stdint.h>

struct qpn_table;

/** Create a table for up to @p capacity ranges. NULL when out of memory. */
struct qpn_table *qpn_table_create(uint32_t capacity);
void qpn_table_destroy(struct qpn_table *t);

/**
 * Register [base, base + count) for connection @p conn.
 * @return 0, -EINVAL (empty or past 0xFFFFFF), -EEXIST (overlaps a range), -ENOSPC.
 */
int qpn_table_add(struct qpn_table *t, uint32_t base, uint32_t count, uint32_t conn);

/** Remove the range of @p conn. @return 0 or -ENOENT. */
int qpn_table_del(struct qpn_table *t, uint32_t conn);

/**
 * Find the connection owning @p qpn.
 * @param[out] base first QPN of the range (the caller decodes channel/generation from it).
 * @return 0 or -ENOENT.
 */
int qpn_table_lookup(const struct qpn_table *t, uint32_t qpn, uint32_t *conn, uint32_t *base);

/** Number of registered ranges. */
uint32_t qpn_table_count(const struct qpn_table *t);

#endif /* SDR_QPN_TABLE_H */
