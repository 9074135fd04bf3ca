/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command-line options shared by sdr-model and sdr-sim: the operating point (sizes, drop
 * rates, chunk, MTU, bandwidth, RTT, alpha, beta), the schemes, and the output format.
 * Both tools take exactly the same flags for these, parsed here once.
 */
#ifndef SDR_POINT_CLI_H
#define SDR_POINT_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "sdr_model.h"

#define POINT_CLI_MAX_LIST 64

struct point_cli {
	const char *prog;
	struct sdr_model_params base;
	uint64_t sizes[POINT_CLI_MAX_LIST];
	unsigned int n_sizes;
	double drops[POINT_CLI_MAX_LIST];
	unsigned int n_drops;
	struct sdr_scheme schemes[SDR_MODEL_MAX_CANDIDATES];
	unsigned int n_schemes;
	int json;
	int csv;
	const char *chunk_arg;
	const char *mtu_arg;
};

/* getopt_long values of the shared options; a tool's own options start at POINT_OPT_END. */
enum {
	POINT_OPT_SIZE = 256, POINT_OPT_DROP, POINT_OPT_DROP_UNIT, POINT_OPT_CHUNK, POINT_OPT_MTU,
	POINT_OPT_BW, POINT_OPT_RTT, POINT_OPT_ALPHA, POINT_OPT_BETA, POINT_OPT_SCHEME,
	POINT_OPT_JSON, POINT_OPT_CSV, POINT_OPT_END,
};

#define POINT_CLI_LONG_OPTIONS \
	{ "size", required_argument, NULL, POINT_OPT_SIZE }, \
	{ "drop", required_argument, NULL, POINT_OPT_DROP }, \
	{ "drop-unit", required_argument, NULL, POINT_OPT_DROP_UNIT }, \
	{ "chunk", required_argument, NULL, POINT_OPT_CHUNK }, \
	{ "mtu", required_argument, NULL, POINT_OPT_MTU }, \
	{ "bandwidth", required_argument, NULL, POINT_OPT_BW }, \
	{ "rtt", required_argument, NULL, POINT_OPT_RTT }, \
	{ "alpha", required_argument, NULL, POINT_OPT_ALPHA }, \
	{ "beta", required_argument, NULL, POINT_OPT_BETA }, \
	{ "scheme", required_argument, NULL, POINT_OPT_SCHEME }, \
	{ "json", no_argument, NULL, POINT_OPT_JSON }, \
	{ "csv", no_argument, NULL, POINT_OPT_CSV }

/**
 * The --help lines of the options point_cli_option() takes, up to the first line of
 * --scheme, whose default each tool completes (its next help line).
 */
#define POINT_CLI_HELP \
"      --size SIZE[,SIZE...]  message size, e.g. 8MiB (repeatable)\n" \
"      --drop P[,P...]        drop probability, e.g. 1e-4 (repeatable; default\n" \
"                             1e-4 when --size is given)\n" \
"      --drop-unit UNIT       what --drop counts: packet (default) or chunk\n" \
"      --chunk SIZE           chunk size, a multiple of the MTU (default 64KiB)\n" \
"      --mtu SIZE             packet payload size (default 4096)\n" \
"      --bandwidth RATE       link rate in bit/s (default 400G)\n" \
"      --rtt TIME             round-trip time (default 25ms)\n" \
"      --alpha A              SR timeout RTO = RTT + A * RTT (default 2)\n" \
"      --beta B               EC fallback slack B * RTT (default alpha / 2)\n" \
"      --scheme NAME          sr, sr-nack, ec-xor:K,M or ec-mds:K,M (repeatable;\n"

/** Defaults of the model (sdr_model_params_init()). */
void point_cli_init(struct point_cli *c, const char *prog);

/**
 * Handle one shared option (the caller handles its own first).
 * @return 0 when handled, 2 after printing a one-line error or, for an option that is not
 *   shared (getopt's '?' or ':', having said why), where to look.
 */
int point_cli_option(struct point_cli *c, int opt, const char *arg);

/**
 * After the options: check leftovers and exclusive flags, fill default sizes and drops
 * (a grid when nothing was given), check the shared settings.
 * @return 0 or 2 after a one-line error.
 */
int point_cli_finish(struct point_cli *c, int argc, char **argv, int optind_now);

/** Add a scheme by name (duplicates ignored). @return 0 or 2 after an error. */
int point_cli_add_scheme(struct point_cli *c, const char *name);

/** Print "<prog>: bad --flag 'value' (why)". @return 2. */
int point_cli_bad(const struct point_cli *c, const char *flag, const char *value, const char *why);

/** A plain non-negative decimal number. @return 0 or -EINVAL. */
int point_cli_number(const char *s, double *out);

/** "400Gbit/s". */
const char *point_cli_fmt_rate(double bps, char *buf, size_t len);

/** "packet" or "chunk". */
const char *point_cli_drop_unit(enum sdr_model_drop_unit u);

/** "64KiB chunks of 4096B packets, 400Gbit/s, RTT 25ms, alpha 2, beta 1, drop per packet". */
void point_cli_print_settings(const struct sdr_model_params *p, double beta);

/** Default grid: sizes 128KiB..32GiB, drops 1e-7..1e-2, schemes sr, sr-nack, ec-xor:32,8, ec-mds:32,8. */
void point_cli_default_grid_schemes(struct point_cli *c);

#endif /* SDR_POINT_CLI_H */
