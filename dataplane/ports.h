/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports: the devices, their queues, pools, emulators and capture files (ports.c). */
#ifndef SDR_DP_PORTS_H
#define SDR_DP_PORTS_H

#include "dp.h"

/** Write one frame to the port's capture file (slow path: debugging only). */
void dp_capture(struct dp_port *p, const struct rte_mbuf *m, uint64_t now_ns);
int dp_ports_init(struct dp_ctx *ctx, char *err, size_t errlen);
void dp_ports_close(struct dp_ctx *ctx);

#endif /* SDR_DP_PORTS_H */
