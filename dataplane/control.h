/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's control service (control/sdr_shm.h has the protocol): the status segment,
 * the admin and SDK sockets, a segment per client, the commands sdrctl sends (the same
 * grammar one-shot and interactive), the SDK's calls and queues, a stats snapshot and a
 * heartbeat. ctl.h has the inside.
 *
 * dp_control_poll() runs on the lcore that owns the endpoints, between bursts;
 * dp_control_tick() on the main lcore every 100 ms; the rest on a management thread of its
 * own, started by dp_control_start() once that lcore runs.
 */
#ifndef SDR_DP_CONTROL_H
#define SDR_DP_CONTROL_H

#include <stddef.h>
#include <stdint.h>

struct dp_ctx;

/**
 * Create the status segment /sdr-<name> and the sockets <control_dir>/<name>.admin and
 * .sdk (with [dataplane] control_group, if set).
 * @return 0 or -1 with a reason in @p err.
 */
int dp_control_init(struct dp_ctx *ctx, char *err, size_t errlen);

/** Start serving clients (the management thread). @return 0 or -1 with a reason. */
int dp_control_start(struct dp_ctx *ctx, char *err, size_t errlen);

/**
 * Stop serving: the management thread ends and the status says the dataplane stopped.
 * Clients' segments stay mapped (frames queued on a port may still read their buffers).
 */
void dp_control_stop(struct dp_ctx *ctx);

/**
 * Once the ports are closed (no frame reads a client's buffer): stop serving if not done
 * yet, unmap the clients' segments, remove the status segment and the sockets.
 */
void dp_control_fini(struct dp_ctx *ctx);

/** The engine's share: jobs from the management thread, SDK queues. @return work done. */
unsigned int dp_control_poll(struct dp_ctx *ctx, uint64_t now);

/**
 * mode = engines: engine @p engine's (>= 1) share, on its lcore between bursts: its jobs
 * (adding, changing or deleting one of its connections, setting its copy of a link
 * emulator, SDK calls on its connections) and its SDK shard (every client's queue pair
 * @p engine, the completions of its connections). @return work done.
 */
unsigned int dp_control_engine_poll(struct dp_ctx *ctx, unsigned int engine, uint64_t now);

/** Stats snapshot and heartbeat (main lcore, every 100 ms). */
void dp_control_tick(struct dp_ctx *ctx);

/**
 * Run one command line and write the reply (text, or JSON with @p json) into @p out, on
 * the calling thread (which must be the only one changing the dataplane: the fuzzer).
 * @return SDR_CTL_OK, SDR_CTL_BAD_INPUT (nothing changed) or SDR_CTL_FAILED.
 */
int dp_control_exec(struct dp_ctx *ctx, const char *line, int json, char *out, size_t outlen);

#endif /* SDR_DP_CONTROL_H */
