/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero-copy send holds: a shared info per send context, tables parked until their frames go. */
#include <pthread.h>
#include <stdlib.h>

#include "holds.h"

struct dp_holds {
	struct dp_holds *next;		/* parked */
	uint32_t n;
	struct rte_mbuf_ext_shared_info sh[];
};

/* Tables whose connection is gone and whose frames were not all freed yet. The management
 * thread and the main thread park and free them; the packet path never takes the lock. */
static struct dp_holds *parked;
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;

/* Never called: the table keeps a reference of its own (DPDK wants a callback all the same). */
static void
hold_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

struct dp_holds *
dp_holds_create(uint32_t n)
{
	struct dp_holds *h = calloc(1, sizeof(*h) + (size_t)n * sizeof(h->sh[0]));

	if (h == NULL)
		return NULL;
	h->n = n;
	for (uint32_t i = 0; i < n; i++) {
		h->sh[i].free_cb = hold_free_cb;
		rte_mbuf_ext_refcnt_set(&h->sh[i], 1);
	}
	return h;
}

struct rte_mbuf_ext_shared_info *
dp_holds_get(struct dp_holds *h, uint32_t ctx)
{
	return &h->sh[ctx];
}

int
dp_holds_held(void *arg, uint32_t ctx)
{
	const struct dp_holds *h = arg;

	return ctx < h->n && rte_mbuf_ext_refcnt_read(&h->sh[ctx]) != 1;
}

static int
in_use(const struct dp_holds *h)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (rte_mbuf_ext_refcnt_read(&h->sh[i]) != 1)
			return 1;
	return 0;
}

unsigned int
dp_holds_reap(int force)
{
	struct dp_holds **pp, *h;
	unsigned int left = 0;

	pthread_mutex_lock(&parked_lock);
	for (pp = &parked; (h = *pp) != NULL;) {
		if (!force && in_use(h)) {
			pp = &h->next;
			left++;
			continue;
		}
		*pp = h->next;
		free(h);
	}
	pthread_mutex_unlock(&parked_lock);
	return left;
}

void
dp_holds_put(struct dp_holds *h)
{
	if (h != NULL) {
		pthread_mutex_lock(&parked_lock);
		h->next = parked;
		parked = h;
		pthread_mutex_unlock(&parked_lock);
	}
	dp_holds_reap(0);
}
