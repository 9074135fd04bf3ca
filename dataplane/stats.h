/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters added up over the lcores that write them; the stats line and the summary (stats.c). */
#ifndef SDR_DP_STATS_H
#define SDR_DP_STATS_H

#include "dp.h"

uint64_t dp_port_counter(const struct dp_port *p, enum dp_port_counter c);
uint64_t dp_port_verdict(const struct dp_port *p, enum roce_verdict v);
/** Stage @p s over every slot (@p slot < 0), or one slot's. */
struct dp_stage_stats dp_stage_sum(const struct dp_ctx *ctx, enum dp_stage s, int slot);

/** The link emulator counters of port @p p over every engine's copy (queue_peak: the
 * highest). @p out holds LINK_EMU_NCOUNTERS. */
void dp_port_link_counters(const struct dp_port *p, uint64_t *out);
/** Path @p path's counters (every engine's copy summed); -1: every path, as above. */
void dp_port_path_counters(const struct dp_port *p, int path, uint64_t *out);
/** mode = engines: the summary's "engines" list (each engine's lcore, packets in and
 * out, connections, cycles per packet of each stage), to stdout. */
void dp_engines_json(const struct dp_ctx *ctx);
/** Frames in the port's link emulators now. */
unsigned int dp_port_link_queued(const struct dp_port *p);
/** A port counter that counts frames dropped (not mere events such as multi-segment copies). */
int dp_port_counter_is_drop(enum dp_port_counter c);
/** Every frame the port dropped: parser verdicts other than ok and the drop counters. */
uint64_t dp_port_drops(const struct dp_port *p);
void dp_stats_line(const struct dp_ctx *ctx, double elapsed_s);
void dp_summary(const struct dp_ctx *ctx, int json, double elapsed_s);
int dp_traffic_ok(const struct dp_ctx *ctx);
int dp_traffic_done(const struct dp_ctx *ctx);

#endif /* SDR_DP_STATS_H */
