/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-sim: discrete-event simulation of the SDR reliability schemes, running the real
 * sender and receiver state machines (lib/rel_tx, lib/rel_rx) over a modelled long-haul
 * link on a virtual clock (lib/sdr_sim). Same flags as sdr-model plus the trial count,
 * seed and link options; prints the simulated mean and tail beside the model's mean.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "point_cli.h"
#include "quantile.h"
#include "sdr_model.h"
#include "sdr_sim.h"
#include "units.h"

struct sim_opts {
	uint32_t trials;
	uint64_t seed;
	uint32_t messages;
	uint32_t ack_every;
	double ctrl_loss;
	int gilbert;
	double ge[4];
	double reorder_p;
	double reorder_s;
	double nack_allowance_s;	/* < 0: default */
	int fallback_whole;
};

struct scheme_res {
	struct sdr_scheme scheme;
	double mean, p50, p99, p999, max;
	double model;			/* model mean, NAN if it cannot be evaluated */
	double retrans, decoded, fallback, ctrl;	/* per message */
	uint32_t ok, total;
};

/* Completion times kept per scheme and point (trials x messages): 800 MB of them. */
#define SIM_TIMES_MAX 100000000u

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-sim [options]\n"
"Simulate the SDR reliability schemes over a long-haul link: the real sender\n"
"and receiver state machines on a virtual clock, many trials per point. Prints\n"
"the simulated mean, p50, p99 and p99.9 completion times beside the analytic\n"
"model's mean (sdr-model).\n"
"\n"
"Operating point (as sdr-model):\n"
POINT_CLI_HELP
"                             default sr, sr-nack, ec-xor:32,8, ec-mds:32,8)\n"
"Simulation:\n"
"      --trials N             trials per scheme and point (default 100)\n"
"      --seed N               seed of trial 1; trial i uses seed + i - 1 (default 1)\n"
"      --messages N           messages per trial, back to back (default 1;\n"
"                             trials x messages at most 1e8)\n"
"      --ack-every N          receiver ACKs every N chunks (default 1)\n"
"      --nack-allowance TIME  sr-nack reordering allowance (default RTT/100,\n"
"                             at least 20us)\n"
"      --ctrl-loss P          loss probability of control packets (default 0,\n"
"                             as the model assumes)\n"
"      --gilbert PGB,PBG,LG,LB  Gilbert-Elliott burst loss per packet instead of\n"
"                             --drop (not with it): good->bad, bad->good, loss in\n"
"                             good, in bad; rows show drop 0\n"
"      --reorder P,TIME       hold a chunk back by up to TIME with probability P\n"
"      --fallback MODE        EC fallback repeats the missing chunks of an\n"
"                             undecodable submessage (holes, default, as the\n"
"                             model assumes) or the whole submessage (whole)\n"
"Output:\n"
"      --json                 one JSON object\n"
"      --csv                  one CSV row per size, drop and scheme\n"
"  -h, --help                 this text\n"
"\n"
"Completion time is from submitting the message to the sender receiving the\n"
"final ACK (the receive is posted beforehand). The link serializes at the\n"
"bandwidth and the sender paces at it; control packets are not paced.\n"
"\n"
"Exit status: 0 on success, 1 when a trial cannot finish, 2 on bad options.\n");
}

static int
sim_config(const struct point_cli *c, const struct sim_opts *o, uint64_t size, double drop,
	   const struct sdr_scheme *s, struct sdr_sim_cfg *cfg)
{
	const struct sdr_model_params *p = &c->base;
	double n = (double)p->chunk_bytes / p->mtu_bytes, beta = isnan(p->beta) ? p->alpha / 2 : p->beta;
	uint64_t rtt = (uint64_t)(p->rtt_s * 1e9);
	struct sdr_conn_geom g;

	memset(cfg, 0, sizeof(*cfg));
	sdr_conn_attr_default(&cfg->attr);
	cfg->attr.mtu = p->mtu_bytes;
	cfg->attr.chunk_size = p->chunk_bytes;
	cfg->attr.split = (struct sdr_imm_split){ 4, 28, 0 };	/* large messages, few slots */
	cfg->attr.channels = 1;
	cfg->attr.generations = 1;
	cfg->attr.max_msg_size = size;
	cfg->attr.max_inflight = 1;
	if (s->kind == SDR_SCHEME_EC_XOR || s->kind == SDR_SCHEME_EC_MDS) {
		cfg->attr.ec_k = s->k;
		cfg->attr.ec_m = s->m;
	}
	if (sdr_conn_geometry(&cfg->attr, &g) != 0)
		return -EINVAL;
	sdr_rel_cfg_default(&cfg->rel, rtt);
	cfg->rel.scheme = *s;
	cfg->rel.alpha = p->alpha;
	cfg->rel.beta = beta;
	cfg->rel.rate_bps = p->bandwidth_bps;
	cfg->rel.bucket_bytes = 0;
	cfg->rel.pkt_overhead = 0;
	cfg->rel.ack_every_chunks = o->ack_every;
	cfg->rel.ack_every_ns = 0;
	if (o->nack_allowance_s >= 0)
		cfg->rel.nack_allowance_ns = (uint64_t)(o->nack_allowance_s * 1e9);
	cfg->rel.timer_slots = 4 * g.max_data_chunks + 4096;
	cfg->rel.ec_fallback_whole = (uint8_t)o->fallback_whole;
	cfg->link.bandwidth_bps = p->bandwidth_bps;
	cfg->link.delay_ns = rtt / 2;
	/* the link drops packets: a per-chunk rate becomes the per-packet rate that gives it */
	cfg->link.p_loss = p->drop_unit == SDR_MODEL_DROP_CHUNK ? -expm1(log1p(-drop) / n) : drop;
	cfg->link.ctrl_loss = o->ctrl_loss;
	cfg->link.gilbert = o->gilbert;
	cfg->link.ge_p_gb = o->ge[0];
	cfg->link.ge_p_bg = o->ge[1];
	cfg->link.ge_loss_good = o->ge[2];
	cfg->link.ge_loss_bad = o->ge[3];
	cfg->link.reorder_p = o->reorder_p;
	cfg->link.reorder_ns = (uint64_t)(o->reorder_s * 1e9);
	cfg->msg_len = size;
	cfg->messages = o->messages;
	return 0;
}

static int
run_scheme(const struct point_cli *c, const struct sim_opts *o, uint64_t size, double drop,
	   const struct sdr_scheme *s, struct scheme_res *r)
{
	struct sdr_model_params mp = c->base;
	struct sdr_model_choice mc;
	struct sdr_sim_cfg cfg;
	uint32_t n = o->trials * o->messages, k = 0;	/* (main() bounds the product) */
	double *t = malloc(n * sizeof(double)), sum = 0;
	char name[SDR_SCHEME_NAME_MAX];

	memset(r, 0, sizeof(*r));
	r->scheme = *s;
	if (t == NULL) {
		fprintf(stderr, "sdr-sim: out of memory for %" PRIu32 " completion times\n", n);
		return 1;
	}
	if (sim_config(c, o, size, drop, s, &cfg) != 0) {
		fprintf(stderr, "sdr-sim: %s: a %" PRIu64 "-byte message does not fit the "
			"simulated connection\n", sdr_scheme_format(s, name, sizeof(name)), size);
		free(t);
		return 1;
	}
	for (uint32_t i = 0; i < o->trials; i++) {
		struct sdr_sim_result res;
		int rc = sdr_sim_run(&cfg, o->seed + i, NULL, &res, t + k);

		if (rc != 0) {
			fprintf(stderr, "sdr-sim: %s, trial %u (seed %" PRIu64 "): %s\n",
				sdr_scheme_format(s, name, sizeof(name)), i + 1, o->seed + i,
				rc == -ETIMEDOUT ? "did not finish in 1000 s of virtual time" :
				strerror(-rc));
			free(t);
			return 1;
		}
		k += res.messages;
		r->ok += res.ok;
		r->retrans += (double)res.retransmitted;
		r->decoded += (double)res.decoded;
		r->fallback += (double)res.fallback;
		r->ctrl += (double)res.ctrl_sent;
	}
	r->total = k;
	sdr_sort_doubles(t, k);
	for (uint32_t i = 0; i < k; i++)
		sum += t[i];
	r->mean = sum / k;
	r->p50 = sdr_quantile_sorted(t, k, 0.50);
	r->p99 = sdr_quantile_sorted(t, k, 0.99);
	r->p999 = sdr_quantile_sorted(t, k, 0.999);
	r->max = t[k - 1];
	r->retrans /= k;
	r->decoded /= k;
	r->fallback /= k;
	r->ctrl /= k;
	mp.msg_bytes = size;
	/* the model at the link's own per-packet rate (sim_config()) and NACK allowance */
	mp.drop = cfg.link.p_loss;
	mp.drop_unit = SDR_MODEL_DROP_PACKET;
	mp.nack_allowance_s = (double)cfg.rel.nack_allowance_ns * 1e-9;
	r->model = (o->gilbert || sdr_model_eval(&mp, s, &mc) != 0) ? NAN : mc.mean_s;
	free(t);
	return 0;
}

static void
print_json_point(const struct point_cli *c, const struct sim_opts *o, uint64_t size, double drop,
		 const struct scheme_res *r, unsigned int n, unsigned int best)
{
	char name[SDR_SCHEME_NAME_MAX];

	printf("{\"size_bytes\":%" PRIu64 ",\"drop\":%.10g,\"drop_unit\":\"%s\",\"chunk_bytes\":%"
	       PRIu32 ",\"mtu_bytes\":%" PRIu32 ",\"bandwidth_bps\":%.10g,\"rtt_s\":%.10g,"
	       "\"alpha\":%.10g,\"trials\":%u,\"seed\":%" PRIu64 ",\"schemes\":[",
	       size, drop, point_cli_drop_unit(c->base.drop_unit), c->base.chunk_bytes,
	       c->base.mtu_bytes, c->base.bandwidth_bps, c->base.rtt_s, c->base.alpha, o->trials,
	       o->seed);
	for (unsigned int i = 0; i < n; i++) {
		printf("%s{\"scheme\":\"%s\",\"mean_s\":%.9g,\"p50_s\":%.9g,\"p99_s\":%.9g,"
		       "\"p999_s\":%.9g,\"max_s\":%.9g,\"ok\":%u,\"messages\":%u,"
		       "\"retransmitted_per_msg\":%.6g,\"decoded_per_msg\":%.6g,"
		       "\"fallback_per_msg\":%.6g,\"ctrl_per_msg\":%.6g,\"model_mean_s\":",
		       i ? "," : "", sdr_scheme_format(&r[i].scheme, name, sizeof(name)), r[i].mean,
		       r[i].p50, r[i].p99, r[i].p999, r[i].max, r[i].ok, r[i].total, r[i].retrans,
		       r[i].decoded, r[i].fallback, r[i].ctrl);
		if (isnan(r[i].model))
			printf("null}");
		else
			printf("%.9g}", r[i].model);
	}
	printf("],\"best\":\"%s\"}", sdr_scheme_format(&r[best].scheme, name, sizeof(name)));
}

static void
print_text_point(const struct point_cli *c, uint64_t size, double drop, const struct scheme_res *r,
		 unsigned int n, unsigned int best, uint32_t trials)
{
	char name[SDR_SCHEME_NAME_MAX], sb[32], b[6][32];

	printf("%s message, drop %g per %s, %u trials\n", units_fmt_size(size, sb, sizeof(sb)), drop,
	       point_cli_drop_unit(c->base.drop_unit), trials);
	point_cli_print_settings(&c->base, isnan(c->base.beta) ? c->base.alpha / 2 : c->base.beta);
	printf("\n%-14s %9s %9s %9s %9s %9s %7s %8s %8s %8s\n", "scheme", "mean", "p50", "p99",
	       "p99.9", "model", "sim/mdl", "retx/msg", "dec/msg", "fb/msg");
	for (unsigned int i = 0; i < n; i++) {
		char ratio[16];

		if (isnan(r[i].model)) {
			snprintf(b[4], sizeof(b[4]), "-");
			snprintf(ratio, sizeof(ratio), "-");
		} else {
			units_fmt_time(r[i].model, b[4], sizeof(b[4]));
			snprintf(ratio, sizeof(ratio), "%.3f", r[i].mean / r[i].model);
		}
		printf("%-14s %9s %9s %9s %9s %9s %7s %8.2f %8.2f %8.2f%s\n",
		       sdr_scheme_format(&r[i].scheme, name, sizeof(name)),
		       units_fmt_time(r[i].mean, b[0], sizeof(b[0])),
		       units_fmt_time(r[i].p50, b[1], sizeof(b[1])),
		       units_fmt_time(r[i].p99, b[2], sizeof(b[2])),
		       units_fmt_time(r[i].p999, b[3], sizeof(b[3])), b[4], ratio, r[i].retrans,
		       r[i].decoded, r[i].fallback, r[i].ok < r[i].total ? "  (failures)" : "");
	}
	printf("\nbest (simulated mean): %s\n", sdr_scheme_format(&r[best].scheme, name, sizeof(name)));
}

static void
print_csv_point(uint64_t size, double drop, const struct point_cli *c, const struct scheme_res *r,
		unsigned int n, unsigned int best)
{
	char name[SDR_SCHEME_NAME_MAX];

	for (unsigned int i = 0; i < n; i++)
		printf("%" PRIu64 ",%.10g,%s,\"%s\",%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%d\n", size,
		       drop, point_cli_drop_unit(c->base.drop_unit),
		       sdr_scheme_format(&r[i].scheme, name, sizeof(name)), r[i].mean, r[i].p50,
		       r[i].p99, r[i].p999, r[i].model, r[i].retrans, r[i].decoded, r[i].fallback,
		       i == best);
}

static int
run_all(struct point_cli *c, const struct sim_opts *o)
{
	static struct scheme_res r[SDR_MODEL_MAX_CANDIDATES];
	char name[SDR_SCHEME_NAME_MAX], sb[32], cell[64];
	int single = c->n_sizes == 1 && c->n_drops == 1, first = 1;

	if (c->csv)
		printf("size_bytes,drop,drop_unit,scheme,mean_s,p50_s,p99_s,p999_s,model_mean_s,"
		       "retransmitted_per_msg,decoded_per_msg,fallback_per_msg,best\n");
	else if (c->json && !single)
		printf("{\"points\":[");
	else if (!c->json && !single) {
		printf("best scheme by simulated mean, speedup over sr (mean / p99.9); %u trials; ",
		       o->trials);
		point_cli_print_settings(&c->base, isnan(c->base.beta) ? c->base.alpha / 2 :
						   c->base.beta);
		printf("\n%-8s", "size");
		for (unsigned int j = 0; j < c->n_drops; j++) {
			snprintf(cell, sizeof(cell), "%g", c->drops[j]);
			printf(" %-26s", cell);
		}
		printf("\n");
	}
	for (unsigned int i = 0; i < c->n_sizes; i++) {
		if (!c->json && !c->csv && !single)
			printf("%-8s", units_fmt_size(c->sizes[i], sb, sizeof(sb)));
		for (unsigned int j = 0; j < c->n_drops; j++) {
			unsigned int best = 0, sr = c->n_schemes;

			for (unsigned int s = 0; s < c->n_schemes; s++) {
				if (run_scheme(c, o, c->sizes[i], c->drops[j], &c->schemes[s], &r[s]) != 0)
					return 1;
				if (r[s].mean < r[best].mean)
					best = s;
				if (c->schemes[s].kind == SDR_SCHEME_SR)
					sr = s;
			}
			if (c->csv) {
				print_csv_point(c->sizes[i], c->drops[j], c, r, c->n_schemes, best);
			} else if (c->json) {
				printf("%s", first ? "" : ",");
				print_json_point(c, o, c->sizes[i], c->drops[j], r, c->n_schemes, best);
				if (single)
					printf("\n");
			} else if (single) {
				print_text_point(c, c->sizes[i], c->drops[j], r, c->n_schemes, best,
						 o->trials);
			} else {
				if (sr < c->n_schemes)
					snprintf(cell, sizeof(cell), "%s %.2fx/%.2fx",
						 sdr_scheme_format(&r[best].scheme, name, sizeof(name)),
						 r[sr].mean / r[best].mean, r[sr].p999 / r[best].p999);
				else
					snprintf(cell, sizeof(cell), "%s",
						 sdr_scheme_format(&r[best].scheme, name, sizeof(name)));
				printf(" %-26s", cell);
				fflush(stdout);
			}
			first = 0;
		}
		if (!c->json && !c->csv && !single)
			printf("\n");
	}
	if (c->json && !single)
		printf("]}\n");
	return 0;
}

static int
parse_list_of(const char *s, double *v, unsigned int n)
{
	char buf[128], *save = NULL, *tok;
	unsigned int i = 0;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (i == n)
			return -EINVAL;
		if (i == n - 1 && n == 2) {	/* --reorder P,TIME: the second item is a time */
			if (units_parse_time(tok, &v[i++]) != 0)
				return -EINVAL;
		} else if (units_parse_prob(tok, &v[i++]) != 0) {
			return -EINVAL;
		}
	}
	return i == n ? 0 : -EINVAL;
}

int
main(int argc, char **argv)
{
	enum { O_TRIALS = POINT_OPT_END, O_SEED, O_MSGS, O_ACK, O_NACK, O_CTRL, O_GE, O_REORDER,
	       O_FALLBACK };
	static const struct option lopts[] = {
		POINT_CLI_LONG_OPTIONS,
		{ "trials", required_argument, NULL, O_TRIALS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "messages", required_argument, NULL, O_MSGS },
		{ "ack-every", required_argument, NULL, O_ACK },
		{ "nack-allowance", required_argument, NULL, O_NACK },
		{ "ctrl-loss", required_argument, NULL, O_CTRL },
		{ "gilbert", required_argument, NULL, O_GE },
		{ "reorder", required_argument, NULL, O_REORDER },
		{ "fallback", required_argument, NULL, O_FALLBACK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct point_cli c;
	struct sim_opts o = { .trials = 100, .seed = 1, .messages = 1, .ack_every = 1,
			      .nack_allowance_s = -1 };
	uint64_t v;
	double rs[2];
	int opt, rc;

	point_cli_init(&c, "sdr-sim");
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		rc = 0;
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case O_TRIALS:
			if (units_parse_u64(optarg, 10000000, &v) != 0 || v == 0)
				return point_cli_bad(&c, "trials", optarg, "1 to 10000000");
			o.trials = (uint32_t)v;
			break;
		case O_SEED:
			if (units_parse_u64(optarg, UINT64_MAX, &o.seed) != 0)
				return point_cli_bad(&c, "seed", optarg, "an unsigned integer");
			break;
		case O_MSGS:
			if (units_parse_u64(optarg, 1000000, &v) != 0 || v == 0)
				return point_cli_bad(&c, "messages", optarg, "1 to 1000000");
			o.messages = (uint32_t)v;
			break;
		case O_ACK:
			if (units_parse_u64(optarg, 1u << 20, &v) != 0 || v == 0)
				return point_cli_bad(&c, "ack-every", optarg, "a chunk count >= 1");
			o.ack_every = (uint32_t)v;
			break;
		case O_NACK:
			if (units_parse_time(optarg, &o.nack_allowance_s) != 0)
				return point_cli_bad(&c, "nack-allowance", optarg, "a time such as 100us");
			break;
		case O_CTRL:
			if (units_parse_prob(optarg, &o.ctrl_loss) != 0 || o.ctrl_loss >= 1)
				return point_cli_bad(&c, "ctrl-loss", optarg, "a probability in [0, 1)");
			break;
		case O_GE:
			if (parse_list_of(optarg, o.ge, 4) != 0)
				return point_cli_bad(&c, "gilbert", optarg,
						     "four probabilities PGB,PBG,LOSS_GOOD,LOSS_BAD");
			o.gilbert = 1;
			break;
		case O_REORDER:
			if (parse_list_of(optarg, rs, 2) != 0)
				return point_cli_bad(&c, "reorder", optarg, "P,TIME such as 0.01,100us");
			o.reorder_p = rs[0];
			o.reorder_s = rs[1];
			break;
		case O_FALLBACK:
			if (strcmp(optarg, "holes") == 0)
				o.fallback_whole = 0;
			else if (strcmp(optarg, "whole") == 0)
				o.fallback_whole = 1;
			else
				return point_cli_bad(&c, "fallback", optarg, "holes or whole");
			break;
		default:
			rc = point_cli_option(&c, opt, optarg);
			if (rc != 0)
				return rc;
		}
	}
	if ((uint64_t)o.trials * o.messages > SIM_TIMES_MAX) {
		fprintf(stderr, "sdr-sim: --trials %" PRIu32 " x --messages %" PRIu32 " is %" PRIu64
			" messages a point; at most %u\n", o.trials, o.messages,
			(uint64_t)o.trials * o.messages, SIM_TIMES_MAX);
		return 2;
	}
	if (o.gilbert && c.n_drops != 0) {
		fprintf(stderr, "sdr-sim: --gilbert and --drop exclude each other (--gilbert is the loss)\n");
		return 2;
	}
	rc = point_cli_finish(&c, argc, argv, optind);
	if (rc != 0)
		return rc;
	if (o.gilbert) {
		/* one loss process, whatever the size grid: one column, drop 0 (its label) */
		c.drops[0] = 0;
		c.n_drops = 1;
	}
	if (c.n_schemes == 0)
		point_cli_default_grid_schemes(&c);
	return run_all(&c, &o);
}
