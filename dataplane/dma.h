/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy send on a device that reads memory by DMA (a NIC): the application's buffers
 * made known to it.
 *
 * A data frame sent zero-copy points into the application's buffer (holds.h). A virtual
 * device copies it in software from wherever it lies; a NIC reads it by DMA, and only
 * from memory that EAL knows (rte_extmem_register()) and that is mapped for the device
 * (rte_dev_dma_map(): mlx5 makes its memory region of it, a vfio device its IOMMU entry).
 * Each area a frame may point into (an SDK application's buffers, a --traffic generator's
 * send buffers) is registered and mapped before any frame points into it, and unmapped
 * and unregistered once none does. A port whose device refuses a mapping stops sending
 * zero-copy (its frames carry copies from then on) and the start or the log says so once.
 *
 * The control service and the main thread call these, never two at once; the lcores
 * only read a port's zero_copy.
 */
#ifndef SDR_DP_DMA_H
#define SDR_DP_DMA_H

#include <stddef.h>
#include <stdint.h>

struct dp_ctx;

/** Areas mapped at once: every SDK application slot and every connection's generator. */
#define DP_DMA_AREAS 96

struct dp_dma_area {
	void *va;
	size_t len;
	uint32_t ports;			/* bit i: mapped for port i's device (one port of each
					 * device: the others share its mapping) */
};

/** What is registered and mapped (dp_ctx.dma). */
struct dp_dma {
	struct dp_dma_area area[DP_DMA_AREAS];
	uint32_t nareas;
	uint64_t bytes;			/* of the areas registered now */
	uint64_t maps;			/* rte_dev_dma_map() calls that succeeded, ever */
	uint64_t map_failures;		/* ... that failed (the port then copies) */
};

/** @return whether port @p i maps the zero-copy buffers (dma_map, and still zero-copy). */
int dp_dma_port(const struct dp_ctx *ctx, unsigned int i);

/** @return how many ports need their zero-copy buffers mapped. */
unsigned int dp_dma_ports(const struct dp_ctx *ctx);

/** Whether anything is to show: a port needs mapping, or something was mapped or refused. */
int dp_dma_active(const struct dp_ctx *ctx);

/**
 * What is mapped, as JSON: {"ports":[names],"areas":N,"bytes":N,"eal_external_lists":N,
 * "maps":N,"map_failures":N}; eal_external_lists is what EAL itself holds of external
 * memory (rte_memseg_list_walk()), beside this dataplane's own count of areas. Truncated to
 * @p cap bytes.
 */
void dp_dma_json(const struct dp_ctx *ctx, char *buf, size_t cap);

/**
 * Register @p len bytes at @p va (page aligned, a whole number of pages) with EAL and map
 * them for the device of every port that needs it. Nothing is done where no port does.
 * @return 0, or -1 with a one-line reason in @p err (nothing is registered then).
 */
int dp_dma_add(struct dp_ctx *ctx, void *va, size_t len, char *err, size_t errlen);

/**
 * Unmap and unregister the area dp_dma_add() registered at @p va; nothing if it did not.
 * No frame may point into it any more, and no device may still read it (a port stopped).
 */
void dp_dma_del(struct dp_ctx *ctx, void *va);

/** dp_dma_del() of every area: at exit, once the devices have stopped (dp_ports_stop()). */
void dp_dma_del_all(struct dp_ctx *ctx);

#endif
