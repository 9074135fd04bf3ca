/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's side of the control segment (control/sdr_shm.h): it creates the segment,
 * runs the commands sdrctl sends (the same grammar one-shot and interactive), moves SDK
 * requests and completions between applications and endpoints, publishes a stats snapshot
 * and a heartbeat, and reclaims what clients that died left behind.
 *
 * dp_control_poll() runs on the lcore that owns the endpoints, between bursts;
 * dp_control_tick() on the main lcore every 100 ms.
 */
#ifndef SDR_DP_CONTROL_H
#define SDR_DP_CONTROL_H

#include <stddef.h>
#include <stdint.h>

struct dp_ctx;

/** Create the segment /sdr-<name>. @return 0 or -1 with a reason in @p err. */
int dp_control_init(struct dp_ctx *ctx, uint64_t arena_size, char *err, size_t errlen);

/** Mark the segment dead, unlink it. */
void dp_control_fini(struct dp_ctx *ctx);

/** Commands and SDK queues (owner lcore). @return work done. */
unsigned int dp_control_poll(struct dp_ctx *ctx, uint64_t now);

/** Stats snapshot, heartbeat, leases (main lcore, every 100 ms). */
void dp_control_tick(struct dp_ctx *ctx);

/**
 * Run one command line and write the reply (text, or JSON with @p json) into @p out.
 * @return SDR_CTL_OK, SDR_CTL_BAD_INPUT (nothing changed) or SDR_CTL_FAILED.
 */
int dp_control_exec(struct dp_ctx *ctx, const char *line, int json, char *out, size_t outlen,
		    uint64_t now);

#endif /* SDR_DP_CONTROL_H */
