/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-coll-perf: collective operations on libsdr-coll, measured the way NCCL's tests
 * (all_reduce_perf and friends) measure them: a size sweep, per size the mean time of an
 * operation, algorithm and bus bandwidth, the percentiles of its completion time, and
 * #wrong, the elements that differ from a result computed here (every iteration's result is
 * checked; the inputs are small integers, so every type's sum is exact and a result is
 * right or wrong, never close). Run once per rank, with SDR_COLL_RANKFILE and SDR_COLL_RANK
 * (or OMPI_COMM_WORLD_RANK / PMI_RANK) set; rank 0 prints.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_reduce.h"
#include "perf_report.h"
#include "sdr_coll.h"
#include "units.h"

enum coll { C_ALLREDUCE, C_REDUCE_SCATTER, C_ALLGATHER, C_BROADCAST };

static const char *const coll_names[] = { "allreduce", "reduce_scatter", "allgather",
					   "broadcast" };
static const char *const type_names[] = { "float", "half", "bfloat16", "int32", "int64" };
static const char *const op_names[] = { "sum", "max", "min" };

struct opts {
	uint64_t min_bytes, max_bytes;
	double factor;
	uint32_t iters, warmup;
	enum coll coll;
	enum sdr_coll_type type;
	enum sdr_coll_op op;
	int root, inplace, json;
	double timeout_s;
	unsigned int prio;	/* of the timed operations */
	int barrier;		/* line the ranks up before each operation */
	uint64_t behind;	/* bytes of the Allreduce issued in front of each (0: none) */
	enum sdr_coll_algo algo;	/* of Allreduce; auto: the library's default or the
					 * environment's SDR_COLL_ALGO */
	uint64_t gather_max;	/* auto: gather up to this (0: default / SDR_COLL_GATHER_MAX) */
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-coll-perf [options]\n"
"Collective operations on libsdr-coll across the ranks of a rank file, measured like\n"
"NCCL's tests. Run it once per rank with SDR_COLL_RANKFILE and SDR_COLL_RANK set\n"
"(docs/collectives.md); rank 0 prints the table.\n"
"\n"
"  -c, --coll NAME        allreduce (default), reduce_scatter, allgather, broadcast\n"
"  -b, --minbytes SIZE    smallest size (default 8)\n"
"  -e, --maxbytes SIZE    largest size (default 32M)\n"
"  -f, --stepfactor N     multiply the size by N each row (default 2)\n"
"  -n, --iters N          timed operations per size (default 20)\n"
"  -w, --warmup_iters N   untimed operations first (default 2)\n"
"  -d, --datatype TYPE    float (default), half, bfloat16, int32, int64\n"
"  -o, --op OP            sum (default), max, min\n"
"  -r, --root N           broadcast's root rank (default 0)\n"
"      --inplace          the result over the input (default: separate buffers)\n"
"      --behind SIZE      issue a float sum Allreduce of SIZE at priority 0 right before\n"
"                         each timed operation (both checked; the time is the timed one's)\n"
"      --priority N       the timed operations' priority, 0 (default) .. 3: with --behind,\n"
"                         whether they overtake the one in front\n"
"      --barrier          line the ranks up before each operation (a 4-byte Allreduce by\n"
"                         the automatic choice, not timed): each time is then the\n"
"                         operation's own, not the wait for a rank still busy with the one\n"
"                         before\n"
"      --algo NAME        Allreduce algorithm: auto (default: up to --gather-max doubling\n"
"                         where the rank file has the peer lines for it, else gather;\n"
"                         ring above), ring (Reduce-Scatter + Allgather), gather\n"
"                         (Allgather of the whole vectors, then a local reduction) or\n"
"                         doubling (recursive doubling over the rank file's peer lines)\n"
"      --gather-max SIZE  auto's threshold (default 256K; docs/collectives.md)\n"
"      --timeout TIME     an operation fails if a neighbour delivers nothing this long\n"
"                         (default 10s)\n"
"      --json             one JSON object instead of the table\n"
"  -h, --help             this text\n"
"\n"
"Sizes as NCCL counts them: the buffer of one rank (allreduce, broadcast), all ranks'\n"
"blocks (allgather: the output; reduce_scatter: the input). algbw = size / time;\n"
"busbw = algbw x 2(N-1)/N (allreduce), x (N-1)/N (allgather, reduce_scatter), x 1\n"
"(broadcast). Exit status: 0 when every result was right, 1 when one was wrong or an\n"
"operation failed, 2 on bad options.\n");
}

static int
pick(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/*
 * The inputs' bound: |input| <= input_max, so that every partial sum of the ranks' inputs
 * is an integer the type holds exactly. 4, but for bfloat16 (integers exact up to 256:
 * 8 bits of significand) 256 / ranks where that is less (at most 128 ranks: 2).
 */
static int input_max = 4;

/*
 * The input of rank @p r, element @p i in iteration @p seed: a small integer (-input_max ..
 * input_max), exact in every type, from a hash of the three (splitmix64's mixer). A formula
 * linear in them repeats: blocks shifted by a period, or a rank's block in another's place,
 * would check.
 */
static int
value(int r, size_t i, int seed)
{
	uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)r << 40 ^
		     (uint64_t)(uint32_t)seed << 20;

	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 31;
	return (int)(x % (uint64_t)(2 * input_max + 1)) - input_max;
}

static void
store(void *buf, size_t i, enum sdr_coll_type t, double v)
{
	switch (t) {
	case SDR_COLL_F32: ((float *)buf)[i] = (float)v; break;
	case SDR_COLL_F16: ((uint16_t *)buf)[i] = coll_float_to_f16((float)v); break;
	case SDR_COLL_BF16: ((uint16_t *)buf)[i] = coll_float_to_bf16((float)v); break;
	case SDR_COLL_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
	default: ((int64_t *)buf)[i] = (int64_t)v; break;
	}
}

static double
load(const void *buf, size_t i, enum sdr_coll_type t)
{
	switch (t) {
	case SDR_COLL_F32: return ((const float *)buf)[i];
	case SDR_COLL_F16: return coll_f16_to_float(((const uint16_t *)buf)[i]);
	case SDR_COLL_BF16: return coll_bf16_to_float(((const uint16_t *)buf)[i]);
	case SDR_COLL_I32: return ((const int32_t *)buf)[i];
	default: return (double)((const int64_t *)buf)[i];
	}
}

/* What element @p i of the reduction of every rank's input is. */
static double
reduced(int n, size_t i, enum sdr_coll_op op, int seed)
{
	double acc = value(0, i, seed);

	for (int r = 1; r < n; r++) {
		double v = value(r, i, seed);

		acc = op == SDR_COLL_SUM ? acc + v : op == SDR_COLL_MAX ? (v > acc ? v : acc) :
		      (v < acc ? v : acc);
	}
	return acc;
}

struct row {
	int64_t mine;		/* wrong elements this rank saw (wrong: every rank's) */
	uint64_t size, count;
	double time_us, algbw, busbw, p50, p99, p999;
	int64_t wrong;
	uint64_t chunks, chunks_early;	/* this rank's, over the timed operations */
	uint64_t registrations;		/* this rank's, over the timed operations and the
					 * --behind ones issued with them */
	enum sdr_coll_algo algo;	/* Allreduce: the algorithm the operations took */
};

/* One size: warm-up and timed operations, each result checked. @return 0 or an error. */
static int
one_size(struct sdr_comm *c, const struct opts *o, uint64_t size, struct row *row,
	 double *times)
{
	int n = sdr_comm_size(c), r = sdr_comm_rank(c), rc = 0;
	size_t esz = sdr_coll_type_size(o->type), in_n, out_n, count;
	uint8_t *in, *out;
	int64_t wrong = 0;
	size_t in_end;
	struct perf_summary sum_of;
	struct sdr_coll_req *req = NULL, *bg_req = NULL;
	size_t bg_n = o->behind / sizeof(float);
	float *bg = bg_n ? malloc(bg_n * sizeof(float)) : NULL;

	/* elements per rank as NCCL counts sizes */
	count = o->coll == C_ALLREDUCE || o->coll == C_BROADCAST ? size / esz :
		size / esz / (size_t)n;
	in_n = o->coll == C_REDUCE_SCATTER ? count * (size_t)n : count;
	out_n = o->coll == C_ALLGATHER ? count * (size_t)n : o->coll == C_REDUCE_SCATTER ? count :
		count;
	in = malloc(in_n * esz + 1);
	out = o->inplace ? NULL : malloc(out_n * esz + 1);
	if (in == NULL || (!o->inplace && out == NULL) || (bg_n && bg == NULL)) {
		free(in);
		free(out);
		free(bg);
		fprintf(stderr, "sdr-coll-perf: out of memory for %" PRIu64 " bytes\n", size);
		return -1;
	}
	if (o->inplace) {
		/* in place: one buffer large enough for both */
		size_t big = (in_n > out_n ? in_n : out_n) * esz + 1;
		uint8_t *b = realloc(in, big);

		if (b == NULL) {
			free(in);
			return -1;
		}
		in = out = b;
	}
	/* a byte past each buffer: an operation that writes beyond its result is wrong too */
	in_end = (o->inplace && out_n > in_n ? out_n : in_n) * esz;
	for (uint32_t it = 0; it < o->warmup + o->iters && rc == 0; it++) {
		int seed = (int)it;
		double t0, dt;
		struct sdr_coll_stats st = { 0 };
		uint32_t bg_registrations = 0;

		/* the inputs, and garbage where the results go */
		if (!o->inplace)
			memset(out, 0xEE, out_n * esz);
		for (size_t i = 0; i < in_n; i++) {
			if (o->coll == C_BROADCAST && r != o->root)
				store(in, i, o->type, 99);	/* the root's bytes must arrive */
			else	/* an allgather block is elements [r x count, ...) of the whole */
				store(in, i, o->type, value(r, o->coll == C_ALLGATHER ?
							    i + (size_t)r * count : i, seed));
		}
		in[in_end] = 0xA5;
		if (!o->inplace)
			out[out_n * esz] = 0x5A;
		for (size_t i = 0; i < bg_n; i++)	/* --behind's input, before the barrier */
			bg[i] = (float)value(r, i, seed + 1);
		if (o->barrier) {
			/* a 4-byte Allreduce, not timed, by the automatic choice whatever --algo
			 * says: a ring's ranks leave it up to 2(N - 1) one-way trips apart (the
			 * last to enter, first out), which the timed operation would then wait for */
			enum sdr_coll_algo was = sdr_coll_set_algo(c, SDR_COLL_ALGO_AUTO);
			int32_t x = 1, y;

			rc = sdr_allreduce(c, &x, &y, 1, SDR_COLL_I32, SDR_COLL_SUM);
			sdr_coll_set_algo(c, was);
			if (rc != 0) {
				fprintf(stderr, "sdr-coll-perf: rank %d: barrier: %s\n", r,
					sdr_comm_error(c));
				break;
			}
		}
		/* --behind: a large Allreduce at priority 0 goes first, the timed operation
		 * is issued right behind it at --priority */
		if (bg_n) {
			sdr_coll_set_priority(c, 0);
			rc = sdr_iallreduce(c, bg, bg, bg_n, SDR_COLL_F32, SDR_COLL_SUM, &bg_req);
			if (rc != 0) {
				fprintf(stderr, "sdr-coll-perf: rank %d: the operation in front: %s\n", r,
					sdr_comm_error(c));
				break;
			}
		}
		sdr_coll_set_priority(c, o->prio);
		t0 = perf_now_s();
		switch (o->coll) {
		case C_ALLREDUCE:
			rc = sdr_iallreduce(c, in, o->inplace ? in : out, count, o->type, o->op, &req);
			break;
		case C_REDUCE_SCATTER:
			rc = sdr_ireduce_scatter(c, in, o->inplace ? in : out, count, o->type, o->op,
						 &req);
			break;
		case C_ALLGATHER:
			rc = sdr_iallgather(c, in, o->inplace ? in : out, count, o->type, &req);
			break;
		case C_BROADCAST:
			rc = sdr_ibroadcast(c, in, count, o->type, o->root, &req);
			break;
		}
		if (rc == 0)
			rc = sdr_coll_wait(req);
		dt = perf_now_s() - t0;
		sdr_coll_last_stats(c, &st);	/* the timed operation's */
		if (bg_req) {
			int brc = sdr_coll_wait(bg_req);
			struct sdr_coll_stats bst;

			sdr_coll_last_stats(c, &bst);
			bg_registrations = bst.registrations;

			bg_req = NULL;
			for (size_t i = 0; brc == 0 && i < bg_n; i++)
				if (bg[i] != (float)reduced(n, i, SDR_COLL_SUM, seed + 1))
					wrong++;
			if (rc == 0 && brc != 0)
				rc = brc;
		}
		if (rc != 0) {
			fprintf(stderr, "sdr-coll-perf: rank %d: %s of %" PRIu64 " bytes: %s\n", r,
				coll_names[o->coll], size, sdr_comm_error(c));
			break;
		}
		/* check every element against the result computed here */
		int64_t had = wrong;
		size_t first_bad = 0, last_bad = 0;
		double got_bad = 0, want_bad = 0;

		for (size_t i = 0; i < out_n; i++) {
			const void *res = o->coll == C_BROADCAST || o->inplace ? in : out;
			double want;

			switch (o->coll) {
			case C_ALLREDUCE: want = reduced(n, i, o->op, seed); break;
			case C_REDUCE_SCATTER: want = reduced(n, i + (size_t)r * count, o->op, seed); break;
			case C_ALLGATHER: want = value((int)(i / count), i, seed); break;
			default: want = value(o->root, i, seed); break;
			}
			if (load(res, i, o->type) != want) {
				if (wrong++ == had) {
					first_bad = i;
					got_bad = load(res, i, o->type);
					want_bad = want;
				}
				last_bad = i;
			}
		}
		if (in[in_end] != 0xA5 || (!o->inplace && out[out_n * esz] != 0x5A)) {
			fprintf(stderr, "sdr-coll-perf: rank %d: %s of %" PRIu64 " bytes, iteration "
				"%u: a byte past the %s buffer was written\n", r,
				coll_names[o->coll], size, it, in[in_end] != 0xA5 ? "input" : "result");
			wrong++;
		}
		if (wrong > had)	/* where, so a failure can be told from another */
			fprintf(stderr, "sdr-coll-perf: rank %d: %s of %" PRIu64 " bytes, iteration "
				"%u: %" PRId64 " wrong elements in [%zu, %zu]; element %zu is %g, "
				"not %g\n", r, coll_names[o->coll], size, it, wrong - had, first_bad,
				last_bad, first_bad, got_bad, want_bad);
		if (it >= o->warmup) {
			times[it - o->warmup] = dt;
			row->algo = st.algo;
			row->chunks += st.chunks;
			row->chunks_early += st.chunks_early;
			row->registrations += st.registrations + bg_registrations;
		}
	}
	free(in);
	if (!o->inplace)
		free(out);
	free(bg);
	if (rc != 0)
		return -1;
	/* every rank's count of wrong elements, summed with the library itself */
	{
		int64_t w = wrong, total;

		if (sdr_allreduce(c, &w, &total, 1, SDR_COLL_I64, SDR_COLL_SUM) != 0) {
			fprintf(stderr, "sdr-coll-perf: rank %d: summing #wrong: %s\n", r,
				sdr_comm_error(c));
			return -1;
		}
		row->wrong = total;
		row->mine = wrong;
	}
	perf_summarize(times, o->iters, times + o->iters, &sum_of);
	row->size = size;
	row->count = count;
	row->time_us = sum_of.mean * 1e6;
	row->algbw = row->time_us > 0 ? (double)size / (row->time_us * 1e-6) * 1e-9 : 0;
	row->busbw = row->algbw * (o->coll == C_ALLREDUCE ? 2.0 * (n - 1) / n :
				  o->coll == C_BROADCAST ? 1.0 : (double)(n - 1) / n);
	row->p50 = sum_of.p50 * 1e6;
	row->p99 = sum_of.p99 * 1e6;
	row->p999 = sum_of.p999 * 1e6;
	return 0;
}

int
main(int argc, char **argv)
{
	enum { O_INPLACE = 256, O_TIMEOUT, O_JSON, O_BEHIND, O_PRIORITY, O_BARRIER, O_ALGO,
	       O_GATHER_MAX };
	static const struct option lo[] = {
		{ "coll", required_argument, NULL, 'c' },
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "datatype", required_argument, NULL, 'd' },
		{ "op", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' },
		{ "inplace", no_argument, NULL, O_INPLACE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "json", no_argument, NULL, O_JSON },
		{ "behind", required_argument, NULL, O_BEHIND },
		{ "priority", required_argument, NULL, O_PRIORITY },
		{ "barrier", no_argument, NULL, O_BARRIER },
		{ "algo", required_argument, NULL, O_ALGO },
		{ "gather-max", required_argument, NULL, O_GATHER_MAX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .min_bytes = 8, .max_bytes = 32u << 20, .factor = 2, .iters = 20,
			  .warmup = 2, .timeout_s = 10 };
	struct sdr_comm_cfg cfg = { 0 };
	struct sdr_comm *c;
	struct row *rows = NULL;
	uint64_t last = UINT64_MAX;	/* the size of the row before */
	double *times;
	int64_t wrong = 0, mine = 0;
	int nrows = 0, ch, k, rc = 0;
	char err[320], *end;
	long lv;

	while ((ch = getopt_long(argc, argv, "c:b:e:f:n:w:d:o:r:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			if ((k = pick(optarg, coll_names, 4)) < 0) {
				fprintf(stderr, "sdr-coll-perf: --coll '%s': allreduce, reduce_scatter, "
					"allgather or broadcast\n", optarg);
				return 2;
			}
			o.coll = (enum coll)k;
			break;
		case 'b':
		case 'e':
			if (units_parse_size(optarg, ch == 'b' ? &o.min_bytes : &o.max_bytes) != 0) {
				fprintf(stderr, "sdr-coll-perf: -%c '%s': a size (8, 64K, 128M)\n", ch,
					optarg);
				return 2;
			}
			break;
		case 'f':
			if (units_parse_number(optarg, &o.factor) != 0 || !(o.factor > 1)) {
				fprintf(stderr, "sdr-coll-perf: -f '%s': a factor above 1\n", optarg);
				return 2;
			}
			break;
		case 'n':
		case 'w':
			{
				uint64_t v;

				if (units_parse_u64(optarg, 1000000, &v) != 0 || (ch == 'n' && v == 0)) {
					fprintf(stderr, "sdr-coll-perf: -%c '%s': a count (%s)\n", ch,
						optarg, ch == 'n' ? "1 .. 1000000" : "0 .. 1000000");
					return 2;
				}
				if (ch == 'n')
					o.iters = (uint32_t)v;
				else
					o.warmup = (uint32_t)v;
			}
			break;
		case 'd':
			if ((k = pick(optarg, type_names, SDR_COLL_NTYPES)) < 0 &&
			    (k = pick(optarg, (const char *const[]){ "float32", "float16", "bf16",
								     "int", "long" }, 5)) < 0) {
				fprintf(stderr, "sdr-coll-perf: -d '%s': float, half, bfloat16, int32 "
					"or int64\n", optarg);
				return 2;
			}
			o.type = (enum sdr_coll_type)k;
			break;
		case 'o':
			if ((k = pick(optarg, op_names, SDR_COLL_NOPS)) < 0) {
				fprintf(stderr, "sdr-coll-perf: -o '%s': sum, max or min\n", optarg);
				return 2;
			}
			o.op = (enum sdr_coll_op)k;
			break;
		case 'r':
			errno = 0;
			lv = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno != 0 || lv < 0 || lv > INT_MAX) {
				fprintf(stderr, "sdr-coll-perf: -r '%s': a rank\n", optarg);
				return 2;
			}
			o.root = (int)lv;
			break;
		case O_INPLACE:
			o.inplace = 1;
			break;
		case O_TIMEOUT:
			if (units_parse_time(optarg, &o.timeout_s) != 0 || !(o.timeout_s > 0)) {
				fprintf(stderr, "sdr-coll-perf: --timeout '%s': a time (10s, 500ms)\n",
					optarg);
				return 2;
			}
			break;
		case O_JSON:
			o.json = 1;
			break;
		case O_BARRIER:
			o.barrier = 1;
			break;
		case O_ALGO:
			if ((k = pick(optarg, (const char *const[]){ "auto", "ring", "gather",
								    "doubling" }, 4)) < 0) {
				fprintf(stderr, "sdr-coll-perf: --algo '%s': auto, ring, gather or "
					"doubling\n", optarg);
				return 2;
			}
			o.algo = (enum sdr_coll_algo)k;
			break;
		case O_GATHER_MAX:
			if (units_parse_size(optarg, &o.gather_max) != 0 || o.gather_max == 0) {
				fprintf(stderr, "sdr-coll-perf: --gather-max '%s': a size (256K)\n",
					optarg);
				return 2;
			}
			break;
		case O_BEHIND:
			if (units_parse_size(optarg, &o.behind) != 0 || o.behind < sizeof(float)) {
				fprintf(stderr, "sdr-coll-perf: --behind '%s': a size (4M)\n", optarg);
				return 2;
			}
			break;
		case O_PRIORITY:
			{
				uint64_t v;

				if (units_parse_u64(optarg, 3, &v) != 0) {
					fprintf(stderr, "sdr-coll-perf: --priority '%s': 0 .. 3\n",
						optarg);
					return 2;
				}
				o.prio = (unsigned int)v;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'sdr-coll-perf --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sdr-coll-perf: unexpected '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) {
		fprintf(stderr, "sdr-coll-perf: sizes: 0 < -b <= -e\n");
		return 2;
	}
	cfg.timeout_s = o.timeout_s;
	cfg.allreduce_algo = o.algo;
	cfg.gather_max = (size_t)o.gather_max;
	if (sdr_comm_from_env(&cfg, &c, err, sizeof(err)) != SDR_COLL_OK) {
		fprintf(stderr, "sdr-coll-perf: %s\n", err);
		return 2;
	}
	if (o.coll == C_BROADCAST && o.root >= sdr_comm_size(c)) {
		fprintf(stderr, "sdr-coll-perf: -r %d: the communicator has ranks 0 .. %d\n", o.root,
			sdr_comm_size(c) - 1);
		sdr_comm_destroy(c);
		return 2;
	}
	if (o.type == SDR_COLL_BF16 && 256 / sdr_comm_size(c) < input_max)
		input_max = 256 / sdr_comm_size(c);
	times = calloc(2 * (size_t)o.iters, sizeof(double));	/* the times, then sorted */
	if (times == NULL) {
		sdr_comm_destroy(c);
		return 1;
	}
	if (sdr_comm_rank(c) == 0 && !o.json) {
		printf("# sdr-coll-perf: %s, %d ranks, %s, %s%s, %u iterations (+%u warm-up)",
		       coll_names[o.coll], sdr_comm_size(c), type_names[o.type],
		       o.coll == C_ALLREDUCE || o.coll == C_REDUCE_SCATTER ? op_names[o.op] : "-",
		       o.inplace ? ", in place" : "", o.iters, o.warmup);
		if (o.behind)
			printf(", each behind a %" PRIu64 "-byte allreduce, at priority %u", o.behind,
			       o.prio);
		printf("\n");
		printf("#%11s %12s %9s %6s %10s %8s %8s %7s %10s %10s %10s %6s\n", "size", "count",
		       "type", "redop", "time", "algbw", "busbw", "#wrong", "p50", "p99", "p99.9",
		       "algo");
		printf("#%11s %12s %9s %6s %10s %8s %8s %7s %10s %10s %10s\n", "(B)", "(elements)", "",
		       "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)");
		fflush(stdout);
	}
	for (double s = (double)o.min_bytes; s <= (double)o.max_bytes * (1 + 1e-9); s *= o.factor) {
		struct row row = { 0 }, *m;
		uint64_t size = (uint64_t)s;
		size_t esz = sdr_coll_type_size(o.type);
		size_t unit = esz * (o.coll == C_ALLGATHER || o.coll == C_REDUCE_SCATTER ?
				     (size_t)sdr_comm_size(c) : 1);

		size -= size % unit;
		if (size == 0 || size == last)	/* (a factor near 1: one row a size) */
			continue;
		last = size;
		if (one_size(c, &o, size, &row, times) != 0) {
			rc = 1;
			break;
		}
		wrong += row.wrong;
		mine += row.mine;
		m = realloc(rows, (size_t)(nrows + 1) * sizeof(*rows));
		if (m == NULL) {
			rc = 1;
			break;
		}
		rows = m;
		rows[nrows++] = row;
		if (sdr_comm_rank(c) == 0 && !o.json) {
			printf(" %11" PRIu64 " %12" PRIu64 " %9s %6s %10.1f %8.3f %8.3f %7" PRId64
			       " %10.1f %10.1f %10.1f %6s\n", row.size, row.count, type_names[o.type],
			       o.coll == C_ALLREDUCE || o.coll == C_REDUCE_SCATTER ? op_names[o.op] :
			       "-", row.time_us, row.algbw, row.busbw, row.wrong, row.p50, row.p99,
			       row.p999, o.coll == C_ALLREDUCE ? sdr_coll_algo_name(row.algo) : "-");
			fflush(stdout);
		}
	}
	if (sdr_comm_rank(c) == 0) {
		if (o.json) {
			printf("{\"coll\":\"%s\",\"ranks\":%d,\"type\":\"%s\",\"redop\":\"%s\","
			       "\"inplace\":%s,\"iters\":%u,\"warmup\":%u,\"behind\":%" PRIu64
			       ",\"priority\":%u,\"results\":[",
			       coll_names[o.coll], sdr_comm_size(c), type_names[o.type], op_names[o.op],
			       o.inplace ? "true" : "false", o.iters, o.warmup, o.behind, o.prio);
			for (int i = 0; i < nrows; i++)
				printf("%s{\"size\":%" PRIu64 ",\"count\":%" PRIu64 ",\"time_us\":%.2f,"
				       "\"algbw_gbs\":%.4f,\"busbw_gbs\":%.4f,\"wrong\":%" PRId64
				       ",\"p50_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"chunks\":%"
				       PRIu64 ",\"chunks_early\":%" PRIu64 ",\"registrations\":%"
				       PRIu64 ",\"algo\":\"%s\"}",
				       i ? "," : "", rows[i].size, rows[i].count, rows[i].time_us,
				       rows[i].algbw, rows[i].busbw, rows[i].wrong, rows[i].p50,
				       rows[i].p99, rows[i].p999, rows[i].chunks, rows[i].chunks_early,
				       rows[i].registrations,
				       o.coll == C_ALLREDUCE ? sdr_coll_algo_name(rows[i].algo) : "-");
			printf("],\"wrong\":%" PRId64 ",\"ok\":%s}\n", wrong,
			       rc == 0 && wrong == 0 ? "true" : "false");
		} else {
			printf("# out of bounds values: %" PRId64 " %s\n", wrong,
			       rc == 0 && wrong == 0 ? "OK" : "FAILED");
		}
	}
	free(rows);
	free(times);
	sdr_comm_destroy(c);
	/* (a rank that saw wrong elements fails whatever the sum said: it is the library's) */
	return rc == 0 && wrong == 0 && mine == 0 ? 0 : 1;
}
