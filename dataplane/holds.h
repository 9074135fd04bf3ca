/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy send: what keeps an application's buffer from going back to it while a frame
 * still points into it.
 *
 * A data frame built without copying its payload (sdr_ep_output_sg()) leaves as a chain of
 * three mbufs: the headers, an mbuf attached to the message's own bytes
 * (rte_pktmbuf_attach_extbuf()), and the pad and ICRC. Every attached mbuf of one send
 * context shares that context's rte_mbuf_ext_shared_info: its reference count is one more
 * than the frames still alive, wherever they are (a TX ring, the link emulator, a ring
 * port's peer), and DPDK drops it as each frame is freed, on whichever lcore frees it.
 * The endpoint asks dp_holds_held() before it completes a send, so the buffer (and the
 * context) is reused only once no frame reads it.
 *
 * The base reference is the table's own: the count never reaches zero, DPDK never calls
 * the free callback, and a hold serves message after message. A table whose connection
 * goes while frames are still queued is parked, not freed (dp_holds_put()).
 */
#ifndef SDR_DP_HOLDS_H
#define SDR_DP_HOLDS_H

#include <stdint.h>

#include <rte_mbuf.h>

struct dp_holds;

/** A table of @p n holds (one per send context). @return NULL when out of memory. */
struct dp_holds *dp_holds_create(uint32_t n);

/** The hold of send context @p ctx, to attach a frame's payload with. */
struct rte_mbuf_ext_shared_info *dp_holds_get(struct dp_holds *h, uint32_t ctx);

/** sdr_ep_cfg.held: whether a frame of context @p ctx of table @p h may be alive. */
int dp_holds_held(void *h, uint32_t ctx);

/**
 * Done with a table (its endpoint is gone): freed now if no frame uses it, else parked
 * until none does. Tables parked earlier whose frames are gone are freed too.
 */
void dp_holds_put(struct dp_holds *h);

/** Free the parked tables (every one with @p force: at exit, once the ports are closed
 * and no frame is left). @return how many are still parked. */
unsigned int dp_holds_reap(int force);

#endif /* SDR_DP_HOLDS_H */
