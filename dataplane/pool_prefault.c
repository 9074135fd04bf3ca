/* SPDX-License-Identifier: BSD-3-Clause */
#include <unistd.h>

#include <rte_eal.h>

#include "pool_prefault.h"

static void
touch_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr,
	    unsigned int idx)
{
	volatile uint8_t *b = memhdr->addr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	(void)mp;
	(void)opaque;
	(void)idx;
	if (memhdr->len == 0)
		return;
	/* from the chunk's first byte a page at a time, and its last byte: a chunk that does
	 * not start on a page boundary ends in a page the steps may miss */
	for (size_t o = 0; o < memhdr->len; o += page)
		b[o] = b[o];	/* the same byte back: the page is present from here on */
	b[memhdr->len - 1] = b[memhdr->len - 1];
}

void
sdr_pool_prefault(struct rte_mempool *mp)
{
	if (mp != NULL && !rte_eal_has_hugepages())
		rte_mempool_mem_iter(mp, touch_chunk, NULL);
}
