/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared options of sdr-model and sdr-sim. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "point_cli.h"
#include "units.h"

static const uint64_t default_sizes[] = {
	128ull << 10, 1ull << 20, 8ull << 20, 128ull << 20, 1ull << 30, 8ull << 30, 32ull << 30,
};
static const double default_drops[] = { 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2 };
static const char *const grid_schemes[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8" };

void
point_cli_init(struct point_cli *c, const char *prog)
{
	memset(c, 0, sizeof(*c));
	c->prog = prog;
	sdr_model_params_init(&c->base);
}

int
point_cli_bad(const struct point_cli *c, const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "%s: bad --%s '%s' (%s)\n", c->prog, flag, value, why);
	return 2;
}

int
point_cli_number(const char *s, double *out)
{
	return units_parse_number(s, out);
}

static int
parse_u32_size(struct point_cli *c, const char *flag, const char *s, uint32_t *out)
{
	uint64_t v;

	if (units_parse_size(s, &v) != 0 || v == 0 || v > UINT32_MAX)
		return point_cli_bad(c, flag, s, "a size such as 4096 or 64KiB, not zero");
	*out = (uint32_t)v;
	return 0;
}

/* --size and --drop: comma lists, appended to what earlier flags gave. */
static int
parse_list(struct point_cli *c, const char *flag, const char *arg)
{
	const char *item = arg;

	for (;;) {
		const char *comma = strchr(item, ',');
		size_t len = comma ? (size_t)(comma - item) : strlen(item);
		char buf[64];

		if (len == 0 || len >= sizeof(buf))
			return point_cli_bad(c, flag, arg, "empty or overlong list item");
		memcpy(buf, item, len);
		buf[len] = '\0';
		if (flag[0] == 's') {
			uint64_t v;

			if (units_parse_size(buf, &v) != 0 || v == 0)
				return point_cli_bad(c, flag, buf, "a size such as 128KiB, 8MiB or 1GiB, "
								   "not zero");
			if (c->n_sizes == POINT_CLI_MAX_LIST)
				return point_cli_bad(c, flag, buf, "more than 64 sizes");
			c->sizes[c->n_sizes++] = v;
		} else {
			double v;

			if (units_parse_prob(buf, &v) != 0 || v >= 1)
				return point_cli_bad(c, flag, buf, "a probability in [0, 1), e.g. 1e-4");
			if (c->n_drops == POINT_CLI_MAX_LIST)
				return point_cli_bad(c, flag, buf, "more than 64 drop rates");
			c->drops[c->n_drops++] = v;
		}
		if (comma == NULL)
			return 0;
		item = comma + 1;
	}
}

int
point_cli_add_scheme(struct point_cli *c, const char *name)
{
	struct sdr_scheme s;
	int rc = sdr_scheme_parse(name, &s);

	if (rc != 0)
		return point_cli_bad(c, "scheme", name, sdr_scheme_strerror(rc));
	for (unsigned int i = 0; i < c->n_schemes; i++)
		if (sdr_scheme_eq(&c->schemes[i], &s))
			return 0;
	if (c->n_schemes == SDR_MODEL_MAX_CANDIDATES)
		return point_cli_bad(c, "scheme", name, "more than 64 schemes");
	c->schemes[c->n_schemes++] = s;
	return 0;
}

void
point_cli_default_grid_schemes(struct point_cli *c)
{
	for (unsigned int i = 0; i < sizeof(grid_schemes) / sizeof(grid_schemes[0]); i++)
		point_cli_add_scheme(c, grid_schemes[i]);
}

const char *
point_cli_fmt_rate(double bps, char *buf, size_t len)
{
	static const struct {
		double m;
		const char *u;
	} t[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "K" }, { 1, "" } };

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (bps >= t[i].m || i + 1 == sizeof(t) / sizeof(t[0])) {
			snprintf(buf, len, "%g%sbit/s", bps / t[i].m, t[i].u);
			break;
		}
	}
	return buf;
}

const char *
point_cli_drop_unit(enum sdr_model_drop_unit u)
{
	return u == SDR_MODEL_DROP_CHUNK ? "chunk" : "packet";
}

void
point_cli_print_settings(const struct sdr_model_params *p, double beta)
{
	char cb[32], rb[32], tb[32];

	printf("%s chunks of %" PRIu32 "B packets, %s, RTT %s, alpha %g, beta %g, "
	       "drop per %s\n",
	       units_fmt_size(p->chunk_bytes, cb, sizeof(cb)), p->mtu_bytes,
	       point_cli_fmt_rate(p->bandwidth_bps, rb, sizeof(rb)),
	       units_fmt_time(p->rtt_s, tb, sizeof(tb)), p->alpha, beta,
	       point_cli_drop_unit(p->drop_unit));
}

int
point_cli_option(struct point_cli *c, int opt, const char *arg)
{
	switch (opt) {
	case POINT_OPT_SIZE:
	case POINT_OPT_DROP:
		return parse_list(c, opt == POINT_OPT_SIZE ? "size" : "drop", arg);
	case POINT_OPT_DROP_UNIT:
		if (strcmp(arg, "packet") == 0)
			c->base.drop_unit = SDR_MODEL_DROP_PACKET;
		else if (strcmp(arg, "chunk") == 0)
			c->base.drop_unit = SDR_MODEL_DROP_CHUNK;
		else
			return point_cli_bad(c, "drop-unit", arg, "packet or chunk");
		return 0;
	case POINT_OPT_CHUNK:
		c->chunk_arg = arg;
		return parse_u32_size(c, "chunk", arg, &c->base.chunk_bytes);
	case POINT_OPT_MTU:
		c->mtu_arg = arg;
		return parse_u32_size(c, "mtu", arg, &c->base.mtu_bytes);
	case POINT_OPT_BW:
	/* the bounds of the configuration file's keys of the same names */
		if (units_parse_rate(arg, &c->base.bandwidth_bps) != 0 ||
		    !(c->base.bandwidth_bps >= 1e3) || c->base.bandwidth_bps > 10e12)
			return point_cli_bad(c, "bandwidth", arg, "a rate such as 400G or 100Gbit, "
					     "1K to 10T");
		return 0;
	case POINT_OPT_RTT:
		if (units_parse_time(arg, &c->base.rtt_s) != 0 || c->base.rtt_s > 3600 ||
		    c->base.rtt_s < 1e-9)
			return point_cli_bad(c, "rtt", arg, "a time from 1 ns to an hour, such as "
					     "25ms");
		return 0;
	case POINT_OPT_ALPHA:
		if (point_cli_number(arg, &c->base.alpha) != 0 || c->base.alpha > 100)
			return point_cli_bad(c, "alpha", arg, "a number from 0 to 100");
		return 0;
	case POINT_OPT_BETA:
		if (point_cli_number(arg, &c->base.beta) != 0 || c->base.beta > 100)
			return point_cli_bad(c, "beta", arg, "a number from 0 to 100");
		return 0;
	case POINT_OPT_SCHEME:
		return point_cli_add_scheme(c, arg);
	case POINT_OPT_JSON:
		c->json = 1;
		return 0;
	case POINT_OPT_CSV:
		c->csv = 1;
		return 0;
	default:	/* not one of the shared options: getopt said what is wrong */
		fprintf(stderr, "Try '%s --help'.\n", c->prog);
		return 2;
	}
}

int
point_cli_finish(struct point_cli *c, int argc, char **argv, int optind_now)
{
	struct sdr_model_params p;
	struct sdr_model_derived d;
	int rc;

	if (optind_now < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", c->prog,
			argv[optind_now]);
		return 2;
	}
	if (c->json && c->csv) {
		fprintf(stderr, "%s: --json and --csv exclude each other\n", c->prog);
		return 2;
	}
	if (c->n_sizes == 0) {
		memcpy(c->sizes, default_sizes, sizeof(default_sizes));
		c->n_sizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
		if (c->n_drops == 0) {
			memcpy(c->drops, default_drops, sizeof(default_drops));
			c->n_drops = sizeof(default_drops) / sizeof(default_drops[0]);
		}
	}
	if (c->n_drops == 0)
		c->drops[c->n_drops++] = 1e-4;
	/* the settings shared by every point; name the flag that is wrong */
	p = c->base;
	p.msg_bytes = c->sizes[0];
	p.drop = c->drops[0];
	rc = sdr_model_derive(&p, &d);
	if (rc == -SDR_MODEL_E_CHUNK_NOT_MTU) {
		fprintf(stderr, "%s: --chunk %s is not a multiple of --mtu %s\n", c->prog,
			c->chunk_arg ? c->chunk_arg : "64KiB", c->mtu_arg ? c->mtu_arg : "4096");
		return 2;
	}
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", c->prog, sdr_model_strerror(rc));
		return 2;
	}
	return 0;
}
