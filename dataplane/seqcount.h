/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A sequence count: one writer at a time, readers that never block it and read again when
 * it wrote meanwhile. DPDK 22.11 has this as rte_seqcount, but experimental: its header
 * cannot be included without allowing experimental APIs in every file that includes
 * dp.h. This is the same protocol (odd while a write is under way).
 */
#ifndef SDR_DP_SEQCOUNT_H
#define SDR_DP_SEQCOUNT_H

#include <stdint.h>

#include <rte_pause.h>

/* Before reading: the count, once no write is under way. */
static inline uint32_t
seqcount_read_begin(const uint32_t *sn)
{
	uint32_t s;

	while ((s = __atomic_load_n(sn, __ATOMIC_ACQUIRE)) & 1)
		rte_pause();
	return s;
}

/* After reading: whether a write came meanwhile (the reads are to be done again). */
static inline int
seqcount_read_retry(const uint32_t *sn, uint32_t begin)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(sn, __ATOMIC_RELAXED) != begin;
}

/* Around a write (the caller's writers take turns). */
static inline void
seqcount_write_begin(uint32_t *sn)
{
	__atomic_store_n(sn, *sn + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
seqcount_write_end(uint32_t *sn)
{
	__atomic_store_n(sn, *sn + 1, __ATOMIC_RELEASE);
}

#endif /* SDR_DP_SEQCOUNT_H */
