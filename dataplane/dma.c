/* SPDX-License-Identifier: BSD-3-Clause */
/* The application's buffers, registered with EAL and mapped for the DMA of the ports that
 * send them zero-copy (dma.h). */

/* rte_dev_dma_map() and _unmap() are experimental in DPDK 22.11, and they are the only way
 * to map memory that EAL did not allocate for a device */
#define ALLOW_EXPERIMENTAL_API 1

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memory.h>

#include "dma.h"
#include "dp.h"

/* The port's device (ring: ports too: a net_ring vdev), or NULL where it is closed. */
static struct rte_device *
port_device(const struct dp_port *p)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(p->port_id, &info) == 0 ? info.device : NULL;
}

/* The IOVA of @p va as the frames' attached mbufs give it (pipeline.c). */
static uint64_t
area_iova(const struct dp_ctx *ctx, const void *va)
{
	return ctx->iova_va ? (uint64_t)(uintptr_t)va : RTE_BAD_IOVA;
}

int
dp_dma_port(const struct dp_ctx *ctx, unsigned int i)
{
	return ctx->ports[i].dma && __atomic_load_n(&ctx->ports[i].zero_copy, __ATOMIC_RELAXED);
}

unsigned int
dp_dma_ports(const struct dp_ctx *ctx)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ctx->nports; i++)
		n += dp_dma_port(ctx, i) != 0;
	return n;
}

int
dp_dma_active(const struct dp_ctx *ctx)
{
	return dp_dma_ports(ctx) || ctx->dma.nareas || ctx->dma.map_failures;
}

/* One external memory list of EAL's (rte_extmem_register()): counted. */
static int
count_external(const struct rte_memseg_list *msl, void *arg)
{
	*(unsigned int *)arg += msl->external != 0;
	return 0;
}

void
dp_dma_json(const struct dp_ctx *ctx, char *buf, size_t cap)
{
	const struct dp_dma *d = &ctx->dma;
	unsigned int lists = 0;
	size_t n = 0;

	rte_memseg_list_walk(count_external, &lists);
	n += (size_t)snprintf(buf, cap, "{\"ports\":[");
	for (unsigned int i = 0; i < ctx->nports && n < cap; i++)
		if (dp_dma_port(ctx, i))
			n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", buf[n - 1] == '[' ? "" : ",",
					      ctx->ports[i].cfg->name);
	if (n < cap)
		snprintf(buf + n, cap - n, "],\"areas\":%u,\"bytes\":%" PRIu64 ",\"eal_external_lists\":%u,"
			 "\"maps\":%" PRIu64 ",\"map_failures\":%" PRIu64 "}", d->nareas, d->bytes,
			 lists, d->maps, d->map_failures);
}

/*
 * Map @p a for port @p i's device, unless a port before it is on the same device (two
 * ports of one mlx5 device, representors): one mapping serves them, and a second of the
 * same range would be one more memory region, or in a vfio container a duplicate whose
 * unmap fails. @return 0, or -1 (rte_errno set).
 */
static int
map_port(struct dp_ctx *ctx, struct dp_dma_area *a, unsigned int i)
{
	struct rte_device *dev = port_device(&ctx->ports[i]);

	if (dev == NULL)
		return 0;	/* (closed) */
	for (unsigned int j = 0; j < i; j++)
		if ((a->ports & 1u << j) && port_device(&ctx->ports[j]) == dev)
			return 0;
	if (rte_dev_dma_map(dev, a->va, area_iova(ctx, a->va), a->len) != 0)
		return -1;
	a->ports |= 1u << i;
	ctx->dma.maps++;
	return 0;
}

/*
 * The page size EAL is told an area has: the largest power of two from 4 KiB to 1 GiB that
 * both its start and its length are multiples of. EAL keeps a descriptor per such page (a
 * file in its runtime directory) and uses the size for nothing else here (the IOVAs are
 * not given): fewer where the area allows, and 4 KiB where the kernel's pages are larger
 * (an SDK arena starts on a 4 KiB boundary of its segment). 0: not whole 4 KiB pages.
 */
static size_t
extmem_page(const void *va, size_t len)
{
	uint64_t both = (uint64_t)(uintptr_t)va | len;
	size_t pg = 4096;

	if (len == 0 || both % pg != 0)
		return 0;
	while (pg < (1ull << 30) && both % (2 * pg) == 0)
		pg *= 2;
	return pg;
}

int
dp_dma_add(struct dp_ctx *ctx, void *va, size_t len, char *err, size_t errlen)
{
	size_t pg = extmem_page(va, len);
	struct dp_dma *d = &ctx->dma;
	struct dp_dma_area *a;

	if (dp_dma_ports(ctx) == 0)
		return 0;
	if (pg == 0) {
		snprintf(err, errlen, "buffers for DMA at %p, %zu bytes: not whole 4 KiB pages",
			 va, len);
		return -1;
	}
	if (d->nareas == DP_DMA_AREAS) {
		snprintf(err, errlen, "more than %u areas of buffers mapped for DMA", DP_DMA_AREAS);
		return -1;
	}
	if (rte_extmem_register(va, len, NULL, 0, pg) != 0) {
		snprintf(err, errlen, "cannot register %zu bytes of buffers with DPDK for DMA: %s",
			 len, rte_strerror(rte_errno));
		return -1;
	}
	a = &d->area[d->nareas++];
	*a = (struct dp_dma_area){ .va = va, .len = len };
	d->bytes += len;
	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct dp_port *p = &ctx->ports[i];

		if (!dp_dma_port(ctx, i) || map_port(ctx, a, i) == 0)
			continue;
		/* the device cannot read this area: the port's frames carry copies from now
		 * on (those already built point into areas it has mapped) */
		d->map_failures++;
		p->copy_why = "the device refused to map the application's buffers for its DMA";
		__atomic_store_n(&p->zero_copy, 0, __ATOMIC_RELAXED);
		fprintf(stderr, "sdr-dataplane: port %s: the device cannot map the application's "
			"buffers for its DMA (%s): its data frames carry copies from now on\n",
			p->cfg->name, rte_strerror(rte_errno));
	}
	return 0;
}

void
dp_dma_del(struct dp_ctx *ctx, void *va)
{
	struct dp_dma *d = &ctx->dma;
	struct dp_dma_area *a = NULL;

	for (uint32_t k = 0; k < d->nareas && a == NULL; k++)
		if (d->area[k].va == va)
			a = &d->area[k];
	if (a == NULL)
		return;
	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct rte_device *dev;

		if (!(a->ports & 1u << i) || (dev = port_device(&ctx->ports[i])) == NULL)
			continue;	/* (closed: at exit, dp_dma_del_all() came before) */
		if (rte_dev_dma_unmap(dev, a->va, area_iova(ctx, a->va), a->len) != 0)
			fprintf(stderr, "sdr-dataplane: port %s: cannot unmap %zu bytes of "
				"buffers from its device: %s\n", ctx->ports[i].cfg->name, a->len,
				rte_strerror(rte_errno));
	}
	if (rte_extmem_unregister(a->va, a->len) != 0)
		fprintf(stderr, "sdr-dataplane: cannot unregister %zu bytes of buffers from "
			"DPDK: %s\n", a->len, rte_strerror(rte_errno));
	d->bytes -= a->len;
	*a = d->area[--d->nareas];
}

void
dp_dma_del_all(struct dp_ctx *ctx)
{
	while (ctx->dma.nareas > 0)
		dp_dma_del(ctx, ctx->dma.area[ctx->dma.nareas - 1].va);
}
