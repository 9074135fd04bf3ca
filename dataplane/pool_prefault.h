/* SPDX-License-Identifier: BSD-3-Clause */
/* Every page of an mbuf pool written once at start, where EAL runs without hugepages. */
#ifndef SDR_POOL_PREFAULT_H
#define SDR_POOL_PREFAULT_H

#include <rte_mempool.h>

/**
 * Without hugepages (EAL's --no-huge, as on a machine where none are reserved) a pool is
 * ordinary memory, and each page of it comes into being on its first write: the mbuf
 * headers when the pool is made, but the frames' bytes only when a frame is first written
 * there. That is a page fault (a microsecond or more) per page in the middle of the send
 * path, until every mbuf has been used once. Hugepage memory is all present when EAL
 * starts. So write every page of @p mp once, here, where EAL has no hugepages (a no-op
 * where it has them, or @p mp is NULL): a run without hugepages then measures the
 * program, not the kernel's first touch. About 1 ms per 2 MiB of pool.
 */
void sdr_pool_prefault(struct rte_mempool *mp);

#endif /* SDR_POOL_PREFAULT_H */
