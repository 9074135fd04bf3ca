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

#include "point_cli.h"
#include "sdr_model.h"
#include "units.h"

/* One evaluated point: ranked choices and SR's mean for the speedup column. */
struct point {
	struct sdr_model_params p;
	struct sdr_model_derived d;
	struct sdr_model_choice c[SDR_MODEL_MAX_CANDIDATES];
	unsigned int n;
	double sr_mean;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-model [options]\n"
"Expected message completion time of the SDR reliability schemes (analytic\n"
"model): selective repeat (sr, sr-nack) and erasure coding with SR fallback\n"
"(ec-xor:K,M, ec-mds:K,M), and the scheme with the lowest mean.\n"
"\n"
POINT_CLI_HELP
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

/* Evaluate one point: the schemes of @p c (NULL candidates: the advisor's set) and SR. */
static int
point_eval(const struct point_cli *c, uint64_t size, double drop, struct point *pt)
{
	static const struct sdr_scheme sr = { SDR_SCHEME_SR, 0, 0, 0 };
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
	/* a time that overflowed (a huge message on a slow link) is no answer to print */
	for (int i = 0; rc > 0 && i <= rc; i++)
		if (!isfinite(i < rc ? pt->c[i].mean_s : src.mean_s))
			rc = -SDR_MODEL_E_BAD_TIME;
	if (rc < 0) {
		char sb[32];

		fprintf(stderr, "sdr-model: size %s, drop %g per %s: %s (%s)\n",
			units_fmt_size(size, sb, sizeof(sb)), drop, point_cli_drop_unit(pt->p.drop_unit),
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
	       pt->p.rtt_s, pt->p.drop, point_cli_drop_unit(pt->p.drop_unit), pt->p.alpha, pt->d.beta,
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
		       pt->p.drop, point_cli_drop_unit(pt->p.drop_unit),
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
print_point_text(const struct point *pt)
{
	char name[SDR_SCHEME_NAME_MAX], sb[32], tb[32], fb[32];

	printf("%s message: %.0f chunks, drop %g per %s = %.3g per chunk, T_INJ %s, RTO %s\n",
	       units_fmt_size(pt->p.msg_bytes, sb, sizeof(sb)), pt->d.chunks, pt->p.drop,
	       point_cli_drop_unit(pt->p.drop_unit), pt->d.p_chunk,
	       units_fmt_time(pt->d.t_inj_s, tb, sizeof(tb)),
	       units_fmt_time(pt->d.rto_s, fb, sizeof(fb)));
	point_cli_print_settings(&pt->p, pt->d.beta);
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
run_point(struct point_cli *c)
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
run_grid(struct point_cli *c)
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
		point_cli_print_settings(&c->base, isnan(c->base.beta) ? c->base.alpha / 2 : c->base.beta);
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
				/* (the points so far stay readable: JSON closed) */
				printf("%s", c->json ? "]}\n" : c->csv ? "" : "\n");
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

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		POINT_CLI_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct point_cli c;
	int opt, rc;

	point_cli_init(&c, "sdr-model");
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		rc = point_cli_option(&c, opt, optarg);
		if (rc != 0)
			return rc;
	}
	rc = point_cli_finish(&c, argc, argv, optind);
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
		point_cli_default_grid_schemes(&c);
	c.base.candidates = c.schemes;
	c.base.n_candidates = c.n_schemes;
	return run_grid(&c);
}
