/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-model: expected message completion time of the SDR reliability schemes from the
 * analytic model (lib/sdr_model.h). One size and one drop rate: every scheme in detail and
 * the advisor's pick; otherwise a grid of sizes x drop rates with the best scheme and its
 * speedup over SR. Text, JSON or CSV.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_model.h"
#include "units.h"

#define MAX_LIST	64

struct cli {
	struct sdr_model_params base;
	uint64_t sizes[MAX_LIST];
	unsigned int n_sizes;
	double drops[MAX_LIST];
	unsigned int n_drops;
	struct sdr_scheme schemes[SDR_MODEL_MAX_CANDIDATES];
	unsigned int n_schemes;
	int json;
	int csv;
	const char *chunk_arg;
	const char *mtu_arg;
};

/* One evaluated point: ranked choices and SR's mean for the speedup column. */
struct point {
	struct sdr_model_params p;
	struct sdr_model_derived d;
	struct sdr_model_choice c[SDR_MODEL_MAX_CANDIDATES];
	unsigned int n;
	double sr_mean;
};

static const uint64_t default_sizes[] = {
	128ull << 10, 1ull << 20, 8ull << 20, 128ull << 20, 1ull << 30, 8ull << 30, 32ull << 30,
};
static const double default_drops[] = { 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2 };
static const char *const grid_schemes[] = { "sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8" };

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-model [options]\n"
"Expected message completion time of the SDR reliability schemes (analytic\n"
"model): selective repeat (sr, sr-nack) and erasure coding with SR fallback\n"
"(ec-xor:K,M, ec-mds:K,M), and the scheme with the lowest mean.\n"
"\n"
"      --size SIZE[,SIZE...]  message size, e.g. 8MiB (repeatable)\n"
"      --drop P[,P...]        drop probability, e.g. 1e-4 (repeatable; default\n"
"                             1e-4 when --size is given)\n"
"      --drop-unit UNIT       what --drop counts: packet (default) or chunk\n"
"      --chunk SIZE           chunk size, a multiple of the MTU (default 64KiB)\n"
"      --mtu SIZE             packet payload size (default 4096)\n"
"      --bandwidth RATE       link rate in bit/s (default 400G)\n"
"      --rtt TIME             round-trip time (default 25ms)\n"
"      --alpha A              SR timeout RTO = RTT + A * RTT (default 2)\n"
"      --beta B               EC fallback slack B * RTT (default alpha / 2)\n"
"      --scheme NAME          sr, sr-nack, ec-xor:K,M or ec-mds:K,M (repeatable;\n"
"                             default: every advisor candidate for one point,\n"
"                             sr, sr-nack, ec-xor:32,8, ec-mds:32,8 for a grid)\n"
"      --json                 one JSON object\n"
"      --csv                  one CSV row per size, drop and scheme\n"
"  -h, --help                 this text\n"
"\n"
"One size and one drop: every scheme with its mean time, speedup over sr,\n"
"parity share, encode cores and fallback probability, then the best. Otherwise\n"
"a grid of sizes x drops with the best scheme and its speedup over sr; without\n"
"--size and --drop: 128KiB..32GiB x 1e-7..1e-2.\n"
"\n"
"Exit status: 0 on success, 1 when the model cannot be evaluated, 2 on bad\n"
"options.\n");
}

static int
bad_value(const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "sdr-model: bad --%s '%s' (%s)\n", flag, value, why);
	return 2;
}

/* A plain non-negative decimal number. */
static int
parse_number(const char *s, double *out)
{
	char *end;
	double v;

	if (*s == '\0' || *s == ' ' || *s == '+' || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
parse_u32_size(const char *flag, const char *s, uint32_t *out)
{
	uint64_t v;

	if (units_parse_size(s, &v) != 0 || v == 0 || v > UINT32_MAX)
		return bad_value(flag, s, "a size such as 4096 or 64KiB, not zero");
	*out = (uint32_t)v;
	return 0;
}

/* --size and --drop: comma lists, appended to what earlier flags gave. */
static int
parse_list(struct cli *c, const char *flag, const char *arg)
{
	const char *item = arg;

	for (;;) {
		const char *comma = strchr(item, ',');
		size_t len = comma ? (size_t)(comma - item) : strlen(item);
		char buf[64];

		if (len == 0 || len >= sizeof(buf))
			return bad_value(flag, arg, "empty or overlong list item");
		memcpy(buf, item, len);
		buf[len] = '\0';
		if (flag[0] == 's') {
			uint64_t v;

			if (units_parse_size(buf, &v) != 0 || v == 0)
				return bad_value(flag, buf, "a size such as 128KiB, 8MiB or 1GiB, "
							    "not zero");
			if (c->n_sizes == MAX_LIST)
				return bad_value(flag, buf, "more than 64 sizes");
			c->sizes[c->n_sizes++] = v;
		} else {
			double v;

			if (units_parse_prob(buf, &v) != 0 || v >= 1)
				return bad_value(flag, buf, "a probability in [0, 1), e.g. 1e-4");
			if (c->n_drops == MAX_LIST)
				return bad_value(flag, buf, "more than 64 drop rates");
			c->drops[c->n_drops++] = v;
		}
		if (comma == NULL)
			return 0;
		item = comma + 1;
	}
}

static int
add_scheme(struct cli *c, const char *name)
{
	struct sdr_scheme s;
	int rc = sdr_scheme_parse(name, &s);

	if (rc != 0)
		return bad_value("scheme", name, sdr_model_strerror(rc));
	for (unsigned int i = 0; i < c->n_schemes; i++)
		if (memcmp(&c->schemes[i], &s, sizeof(s)) == 0)
			return 0;
	if (c->n_schemes == SDR_MODEL_MAX_CANDIDATES)
		return bad_value("scheme", name, "more than 64 schemes");
	c->schemes[c->n_schemes++] = s;
	return 0;
}

static const char *
fmt_rate(double bps, char *buf, size_t len)
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

static const char *
drop_unit_name(enum sdr_model_drop_unit u)
{
	return u == SDR_MODEL_DROP_CHUNK ? "chunk" : "packet";
}

/* Evaluate one point: the schemes of @p c (NULL candidates: the advisor's set) and SR. */
static int
point_eval(const struct cli *c, uint64_t size, double drop, struct point *pt)
{
	static const struct sdr_scheme sr = { SDR_SCHEME_SR, 0, 0 };
	struct sdr_model_choice src;
	int rc;

	pt->p = c->base;
	pt->p.msg_bytes = size;
	pt->p.drop = drop;
	rc = sdr_model_derive(&pt->p, &pt->d);
	if (rc == 0)
		rc = sdr_model_eval(&pt->p, &sr, &src);
	if (rc == 0)
		rc = sdr_model_advise(&pt->p, pt->c, SDR_MODEL_MAX_CANDIDATES);
	if (rc < 0) {
		char sb[32];

		fprintf(stderr, "sdr-model: size %s, drop %g per %s: %s (%s)\n",
			units_fmt_size(size, sb, sizeof(sb)), drop, drop_unit_name(pt->p.drop_unit),
			sdr_model_strerror(rc), sdr_model_err_name(rc));
		return 1;
	}
	pt->n = (unsigned int)rc;
	pt->sr_mean = src.mean_s;
	return 0;
}

static void
print_point_json(const struct point *pt)
{
	char name[SDR_SCHEME_NAME_MAX];

	printf("{\"size_bytes\":%" PRIu64 ",\"chunk_bytes\":%" PRIu32 ",\"mtu_bytes\":%" PRIu32
	       ",\"bandwidth_bps\":%.10g,\"rtt_s\":%.10g,\"drop\":%.10g,\"drop_unit\":\"%s\","
	       "\"alpha\":%.10g,\"beta\":%.10g,\"chunks\":%.0f,\"chunk_drop\":%.10g,"
	       "\"t_inj_s\":%.10g,\"rto_s\":%.10g,\"schemes\":[",
	       pt->p.msg_bytes, pt->p.chunk_bytes, pt->p.mtu_bytes, pt->p.bandwidth_bps,
	       pt->p.rtt_s, pt->p.drop, drop_unit_name(pt->p.drop_unit), pt->p.alpha, pt->d.beta,
	       pt->d.chunks, pt->d.p_chunk, pt->d.t_inj_s, pt->d.rto_s);
	for (unsigned int i = 0; i < pt->n; i++) {
		const struct sdr_model_choice *ch = &pt->c[i];

		printf("%s{\"scheme\":\"%s\",\"mean_s\":%.10g,\"speedup_vs_sr\":%.6g,"
		       "\"parity_share\":%.6g,\"encode_cores\":%.6g,\"p_fallback\":%.6g,"
		       "\"expected_failures\":%.6g}",
		       i ? "," : "", sdr_scheme_format(&ch->scheme, name, sizeof(name)),
		       ch->mean_s, pt->sr_mean / ch->mean_s, ch->parity_share, ch->encode_cores,
		       ch->p_fallback, ch->exp_failures);
	}
	printf("],\"best\":\"%s\"}", sdr_scheme_format(&pt->c[0].scheme, name, sizeof(name)));
}

static void
print_point_csv(const struct point *pt)
{
	char name[SDR_SCHEME_NAME_MAX];

	for (unsigned int i = 0; i < pt->n; i++) {
		const struct sdr_model_choice *ch = &pt->c[i];

		/* scheme names hold a comma: always quoted */
		printf("%" PRIu64 ",%.10g,%s,\"%s\",%.10g,%.6g,%.6g,%.6g,%.6g,%d\n", pt->p.msg_bytes,
		       pt->p.drop, drop_unit_name(pt->p.drop_unit),
		       sdr_scheme_format(&ch->scheme, name, sizeof(name)), ch->mean_s,
		       pt->sr_mean / ch->mean_s, ch->parity_share, ch->encode_cores,
		       ch->p_fallback, i == 0);
	}
}

static void
print_csv_header(void)
{
	printf("size_bytes,drop,drop_unit,scheme,mean_s,speedup_vs_sr,parity_share,"
	       "encode_cores,p_fallback,best\n");
}

static void
print_settings(const struct sdr_model_params *p, double beta)
{
	char cb[32], rb[32], tb[32];

	printf("%s chunks of %" PRIu32 "B packets, %s, RTT %s, alpha %g, beta %g, "
	       "drop per %s\n",
	       units_fmt_size(p->chunk_bytes, cb, sizeof(cb)), p->mtu_bytes,
	       fmt_rate(p->bandwidth_bps, rb, sizeof(rb)), units_fmt_time(p->rtt_s, tb, sizeof(tb)),
	       p->alpha, beta, drop_unit_name(p->drop_unit));
}

static void
print_point_text(const struct point *pt)
{
	char name[SDR_SCHEME_NAME_MAX], sb[32], tb[32], fb[32];

	printf("%s message: %.0f chunks, drop %g per %s = %.3g per chunk, T_INJ %s, RTO %s\n",
	       units_fmt_size(pt->p.msg_bytes, sb, sizeof(sb)), pt->d.chunks, pt->p.drop,
	       drop_unit_name(pt->p.drop_unit), pt->d.p_chunk,
	       units_fmt_time(pt->d.t_inj_s, tb, sizeof(tb)),
	       units_fmt_time(pt->d.rto_s, fb, sizeof(fb)));
	print_settings(&pt->p, pt->d.beta);
	printf("\n%-18s %10s %7s %7s %6s %10s\n", "scheme", "mean", "vs sr", "parity", "cores",
	       "P_fallback");
	for (unsigned int i = 0; i < pt->n; i++) {
		const struct sdr_model_choice *ch = &pt->c[i];

		if (ch->scheme.kind == SDR_SCHEME_SR || ch->scheme.kind == SDR_SCHEME_SR_NACK)
			snprintf(fb, sizeof(fb), "-");
		else
			snprintf(fb, sizeof(fb), "%.3g", ch->p_fallback);
		printf("%-18s %10s %6.2fx %6.1f%% %6.1f %10s\n",
		       sdr_scheme_format(&ch->scheme, name, sizeof(name)),
		       units_fmt_time(ch->mean_s, tb, sizeof(tb)), pt->sr_mean / ch->mean_s,
		       100 * ch->parity_share, ch->encode_cores, fb);
	}
	printf("\nbest: %s\n", sdr_scheme_format(&pt->c[0].scheme, name, sizeof(name)));
}

static int
run_point(struct cli *c)
{
	static struct point pt;
	int rc = point_eval(c, c->sizes[0], c->drops[0], &pt);

	if (rc != 0)
		return rc;
	if (c->json) {
		print_point_json(&pt);
		printf("\n");
	} else if (c->csv) {
		print_csv_header();
		print_point_csv(&pt);
	} else {
		print_point_text(&pt);
	}
	return 0;
}

static int
run_grid(struct cli *c)
{
	static struct point pt;
	char name[SDR_SCHEME_NAME_MAX], cell[64], sb[32];
	int width = 0, first = 1;

	for (unsigned int i = 0; i < c->n_schemes; i++) {
		int w = (int)strlen(sdr_scheme_format(&c->schemes[i], name, sizeof(name)));

		if (w > width)
			width = w;
	}
	width += 9;	/* " 123.45x" and a space */
	if (c->json)
		printf("{\"points\":[");
	else if (c->csv)
		print_csv_header();
	else {
		printf("best scheme and its speedup over sr; ");
		print_settings(&c->base, isnan(c->base.beta) ? c->base.alpha / 2 : c->base.beta);
		printf("\n%-8s", "size");
		for (unsigned int j = 0; j < c->n_drops; j++) {
			snprintf(cell, sizeof(cell), "%g", c->drops[j]);
			printf(" %-*s", j + 1 < c->n_drops ? width : 0, cell);
		}
		printf("\n");
	}
	for (unsigned int i = 0; i < c->n_sizes; i++) {
		if (!c->json && !c->csv)
			printf("%-8s", units_fmt_size(c->sizes[i], sb, sizeof(sb)));
		for (unsigned int j = 0; j < c->n_drops; j++) {
			if (point_eval(c, c->sizes[i], c->drops[j], &pt) != 0) {
				if (!c->json && !c->csv)
					printf("\n");
				return 1;
			}
			if (c->json) {
				printf("%s", first ? "" : ",");
				print_point_json(&pt);
			} else if (c->csv) {
				print_point_csv(&pt);
			} else {
				snprintf(cell, sizeof(cell), "%s %.2fx",
					 sdr_scheme_format(&pt.c[0].scheme, name, sizeof(name)),
					 pt.sr_mean / pt.c[0].mean_s);
				printf(" %-*s", j + 1 < c->n_drops ? width : 0, cell);
			}
			first = 0;
		}
		if (!c->json && !c->csv)
			printf("\n");
	}
	if (c->json)
		printf("]}\n");
	return 0;
}

/* Check the settings shared by every point; name the flag that is wrong. */
static int
check_settings(const struct cli *c)
{
	struct sdr_model_params p = c->base;
	struct sdr_model_derived d;
	int rc;

	p.msg_bytes = c->sizes[0];
	p.drop = c->drops[0];
	rc = sdr_model_derive(&p, &d);
	if (rc == -SDR_MODEL_E_CHUNK_NOT_MTU) {
		fprintf(stderr, "sdr-model: --chunk %s is not a multiple of --mtu %s\n",
			c->chunk_arg ? c->chunk_arg : "64KiB", c->mtu_arg ? c->mtu_arg : "4096");
		return 2;
	}
	if (rc != 0) {
		fprintf(stderr, "sdr-model: %s\n", sdr_model_strerror(rc));
		return 2;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	enum {
		O_SIZE = 256, O_DROP, O_DROP_UNIT, O_CHUNK, O_MTU, O_BW, O_RTT, O_ALPHA, O_BETA,
		O_SCHEME, O_JSON, O_CSV,
	};
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, O_SIZE },
		{ "drop", required_argument, NULL, O_DROP },
		{ "drop-unit", required_argument, NULL, O_DROP_UNIT },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "bandwidth", required_argument, NULL, O_BW },
		{ "rtt", required_argument, NULL, O_RTT },
		{ "alpha", required_argument, NULL, O_ALPHA },
		{ "beta", required_argument, NULL, O_BETA },
		{ "scheme", required_argument, NULL, O_SCHEME },
		{ "json", no_argument, NULL, O_JSON },
		{ "csv", no_argument, NULL, O_CSV },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct cli c;
	int opt, rc;

	sdr_model_params_init(&c.base);
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		rc = 0;
		switch (opt) {
		case O_SIZE:
		case O_DROP:
			rc = parse_list(&c, opt == O_SIZE ? "size" : "drop", optarg);
			break;
		case O_DROP_UNIT:
			if (strcmp(optarg, "packet") == 0)
				c.base.drop_unit = SDR_MODEL_DROP_PACKET;
			else if (strcmp(optarg, "chunk") == 0)
				c.base.drop_unit = SDR_MODEL_DROP_CHUNK;
			else
				rc = bad_value("drop-unit", optarg, "packet or chunk");
			break;
		case O_CHUNK:
			c.chunk_arg = optarg;
			rc = parse_u32_size("chunk", optarg, &c.base.chunk_bytes);
			break;
		case O_MTU:
			c.mtu_arg = optarg;
			rc = parse_u32_size("mtu", optarg, &c.base.mtu_bytes);
			break;
		case O_BW:
			if (units_parse_rate(optarg, &c.base.bandwidth_bps) != 0 ||
			    !(c.base.bandwidth_bps > 0) || !isfinite(c.base.bandwidth_bps))
				rc = bad_value("bandwidth", optarg, "a rate such as 400G or 100Gbit");
			break;
		case O_RTT:
			if (units_parse_time(optarg, &c.base.rtt_s) != 0)
				rc = bad_value("rtt", optarg, "a time such as 25ms or 500us");
			break;
		case O_ALPHA:
			if (parse_number(optarg, &c.base.alpha) != 0)
				rc = bad_value("alpha", optarg, "a number >= 0");
			break;
		case O_BETA:
			if (parse_number(optarg, &c.base.beta) != 0)
				rc = bad_value("beta", optarg, "a number >= 0");
			break;
		case O_SCHEME:
			rc = add_scheme(&c, optarg);
			break;
		case O_JSON: c.json = 1; break;
		case O_CSV: c.csv = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "sdr-model: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	if (c.json && c.csv) {
		fprintf(stderr, "sdr-model: --json and --csv exclude each other\n");
		return 2;
	}
	if (c.n_sizes == 0) {
		memcpy(c.sizes, default_sizes, sizeof(default_sizes));
		c.n_sizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
		if (c.n_drops == 0) {
			memcpy(c.drops, default_drops, sizeof(default_drops));
			c.n_drops = sizeof(default_drops) / sizeof(default_drops[0]);
		}
	}
	if (c.n_drops == 0)
		c.drops[c.n_drops++] = 1e-4;
	rc = check_settings(&c);
	if (rc != 0)
		return rc;
	if (c.n_sizes == 1 && c.n_drops == 1) {
		if (c.n_schemes > 0) {
			c.base.candidates = c.schemes;
			c.base.n_candidates = c.n_schemes;
		}
		return run_point(&c);
	}
	if (c.n_schemes == 0)
		for (unsigned int i = 0; i < sizeof(grid_schemes) / sizeof(grid_schemes[0]); i++)
			add_scheme(&c, grid_schemes[i]);
	c.base.candidates = c.schemes;
	c.base.n_candidates = c.n_schemes;
	return run_grid(&c);
}
