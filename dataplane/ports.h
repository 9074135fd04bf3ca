/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports: the devices, their queues, pools, emulators and capture files (ports.c). */
#ifndef SDR_DP_PORTS_H
#define SDR_DP_PORTS_H

#include "dp.h"

/** Write one frame to the port's capture file (slow path: debugging only). */
void dp_capture(struct dp_port *p, const struct rte_mbuf *m, uint64_t now_ns);
int dp_ports_init(struct dp_ctx *ctx, char *err, size_t errlen);

/**
 * The salt of port @p pc's emulator copy for engine @p engine, path @p path (0-based): from
 * the port's name and addresses, so that two ports (or the two ends of a pair, in two
 * processes) on one [link] seed draw different losses, as do the engines and the paths.
 * Never 0.
 */
uint64_t dp_port_link_salt(const struct dp_port_cfg *pc, unsigned int engine, unsigned int path);
/**
 * Stop every device and free the frames the dataplane still holds (the link emulators'
 * queues, the TX backlogs): from then on nothing reads an application's buffer, a NIC by
 * DMA included, so the buffers may be unmapped (dma.h).
 */
void dp_ports_stop(struct dp_ctx *ctx);
/** dp_ports_stop() where not done yet, then close every device and free the ports' state. */
void dp_ports_close(struct dp_ctx *ctx);

#endif /* SDR_DP_PORTS_H */
