/* SPDX-License-Identifier: BSD-3-Clause */
/* The /sdr/... commands of rte_telemetry (telemetry.c). */
#ifndef SDR_DP_TELEMETRY_H
#define SDR_DP_TELEMETRY_H

#include "dp.h"

int dp_telemetry_init(struct dp_ctx *ctx);

#endif /* SDR_DP_TELEMETRY_H */
