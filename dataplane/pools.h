/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet path's mbuf pools: made to hand back warm mbufs, and present from the start. */
#ifndef SDR_POOLS_H
#define SDR_POOLS_H

#include <rte_mempool.h>

/**
 * A pool of @p n mbufs with @p data_room bytes each, as rte_pktmbuf_pool_create() makes
 * one, but whose handler gives back the mbufs freed last first.
 *
 * rte_pktmbuf_pool_create()'s default handler (ring_mp_mc) is a FIFO. Once more mbufs are
 * out than the lcore caches hold (frames queued at a device, in a ring port or on an
 * emulated link: thousands at line rate), a freed mbuf comes back only after every other
 * has been used, its header and its data long out of the CPU's caches. Every allocation
 * then misses on the header, and the copying packetizer's write of 4 KiB into the frame
 * goes to memory. A LIFO handler gives back the mbuf freed last, still in the cache: on
 * the loopback benchmark the copying send path went from about 2150 to 1060 cycles per
 * 4 KiB packet, and goodput on one engine from 16 to 26 Gbit/s.
 *
 * The handler is "lf_stack" (DPDK's lock-free stack), else "stack" (a spinlock taken once
 * per bulk move between an lcore cache and the pool), else the default. An EAL
 * --mbuf-pool-ops-name, or a platform's hardware pool (rte_mbuf_platform_mempool_ops()),
 * is used as given. sdr_pool_handler() says which one a pool has.
 *
 * @return the pool, or NULL with rte_errno set (ENOMEM: not enough memory).
 */
struct rte_mempool *sdr_pool_create(const char *name, unsigned int n, unsigned int cache,
				    uint16_t data_room, int socket);

/** The name of the handler of @p mp ("lf_stack", "ring_mp_mc", ...). */
const char *sdr_pool_handler(const struct rte_mempool *mp);

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

#endif /* SDR_POOLS_H */
