/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "pools.h"

/* A handler of that name is registered (its driver is linked in or was loaded). */
static int
handler_exists(const char *name)
{
	for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, name) == 0)
			return 1;
	return 0;
}

struct rte_mempool *
sdr_pool_create(const char *name, unsigned int n, unsigned int cache, uint16_t data_room,
		int socket)
{
	static const char *const lifo[] = { "lf_stack", "stack" };

	if (rte_mbuf_user_mempool_ops() == NULL && rte_mbuf_platform_mempool_ops() == NULL)
		for (size_t i = 0; i < sizeof(lifo) / sizeof(lifo[0]); i++) {
			struct rte_mempool *mp;

			if (!handler_exists(lifo[i]))
				continue;
			/* (on failure, ENOMEM included, the next one: "stack" needs less memory
			 * per mbuf than "lf_stack", the default less again) */
			mp = rte_pktmbuf_pool_create_by_ops(name, n, cache, 0, data_room, socket,
							    lifo[i]);
			if (mp != NULL)
				return mp;
		}
	return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket);
}

const char *
sdr_pool_handler(const struct rte_mempool *mp)
{
	return rte_mempool_get_ops(mp->ops_index)->name;
}

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
