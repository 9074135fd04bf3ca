/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FEC codec rates per core. Encode: ec_encode() against raw ISA-L on the same buffers
 * (ec_encode_data for mds; xor_gen per parity group for xor) and against Jerasure
 * (cauchy_original_coding_matrix + jerasure_matrix_encode, w = 8; jerasure_do_parity per
 * group for xor). Decode: ec_decode() with a cold table cache (a new erasure pattern every
 * call) and a warm one (the same pattern), against raw ISA-L rebuilding from prebuilt
 * tables, and the cold case against Jerasure's jerasure_matrix_decode. Rates are data
 * bytes (k x chunk length per block) per second, so encode and decode figures compare.
 * Variants are timed in interleaved rounds and the best round counts.
 *
 * usage: bench-fec [scale]   (scale multiplies the iteration counts; default 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#ifdef SDR_HAVE_JERASURE
#include <jerasure.h>
#include <jerasure/cauchy.h>
#endif

#include "bench_util.h"
#include "ec_codec.h"

#define ROUNDS		9
#define MAX_VARIANTS	4
#define COLD_PATTERNS	512	/* distinct erasure patterns, well above the cache size */
/* Data bytes per round at scale 1. */
#define ENCODE_BUDGET	(128.0 * 1048576)
#define DECODE_BUDGET	(64.0 * 1048576)
/* 400 Gbit/s of data, in bytes per second. */
#define TARGET_BPS	(400e9 / 8)

#define GROUP		"fec"
#define PUBLISHED	"published: about 4 cores for XOR and 8 for MDS 32,8 on a 4 GHz Xeon"

/* One block of k data and m parity chunks, plus pointer arrays in every shape needed. */
struct block {
	unsigned int k;
	unsigned int m;
	uint32_t len;
	uint8_t *mem;
	uint8_t *chunk[EC_MAX_CHUNKS];		/* data then parity */
	unsigned char *data[EC_MAX_CHUNKS];	/* chunk[0 .. k-1] */
	unsigned char *parity[EC_MAX_CHUNKS];	/* chunk[k .. k+m-1] */
	void *xor_vec[EC_MAX_CHUNKS][EC_MAX_CHUNKS + 1];	/* xor_gen array per group */
};

static void
block_init(struct block *b, unsigned int k, unsigned int m, uint32_t len)
{
	size_t stride = ((size_t)len + 63) & ~(size_t)63;
	unsigned int per = k / m;

	b->k = k;
	b->m = m;
	b->len = len;
	if (posix_memalign((void **)&b->mem, 64, stride * (k + m)) != 0)
		abort();
	for (unsigned int i = 0; i < k + m; i++) {
		b->chunk[i] = b->mem + stride * i;
		for (uint32_t j = 0; j < len; j++)
			b->chunk[i][j] = (uint8_t)(i * 131 + j * 7 + (j >> 8));
	}
	for (unsigned int i = 0; i < k; i++)
		b->data[i] = b->chunk[i];
	for (unsigned int i = 0; i < m; i++)
		b->parity[i] = b->chunk[k + i];
	for (unsigned int g = 0; g < m && k % m == 0; g++) {
		for (unsigned int t = 0; t < per; t++)
			b->xor_vec[g][t] = b->data[g + t * m];
		b->xor_vec[g][per] = b->parity[g];
	}
}

/* A variant under test: called iters times per round with its context. */
struct variant {
	void (*run)(void *ctx);
	void *ctx;
	double best;	/* seconds per call */
};

/* Time every variant in interleaved rounds, so load from other processes hits all alike. */
static void
time_variants(struct variant *v, int nv, long iters)
{
	for (int i = 0; i < nv; i++) {
		v[i].run(v[i].ctx);	/* warm caches and lazy initialisation */
		v[i].best = 1e30;
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < nv; i++) {
			double t0 = bench_now(), t;

			for (long it = 0; it < iters; it++)
				v[i].run(v[i].ctx);
			t = (bench_now() - t0) / (double)iters;
			if (t < v[i].best)
				v[i].best = t;
		}
	}
}

static long
iters_for(double budget, double scale, double bytes_per_call)
{
	long n = (long)(budget * scale / bytes_per_call);

	return n > 0 ? n : 1;
}

static double
gbps(const struct block *b, double seconds)
{
	return (double)b->k * b->len / seconds / 1e9;
}

/* ---- encode variants ---- */

struct enc_ctx {
	struct block *b;
	struct ec_codec *codec;
	uint8_t *tables;	/* raw ISA-L encode tables */
	int *jmatrix;		/* Jerasure coding matrix */
	int **jschedule;	/* Jerasure smart bitmatrix schedule */
	int jpacket;		/* its packet size */
	int is_xor;
};

static void
run_ec_encode(void *p)
{
	struct enc_ctx *e = p;

	if (ec_encode(e->codec, (const uint8_t *const *)e->b->data, e->b->parity, e->b->len) != 0)
		abort();
}

static void
run_ec_incremental(void *p)
{
	struct enc_ctx *e = p;

	ec_encode_begin(e->codec, e->b->parity, e->b->len);
	for (unsigned int i = 0; i < e->b->k; i++)
		ec_encode_update(e->codec, i, e->b->data[i], e->b->parity, e->b->len);
}

static void
run_isal_encode(void *p)
{
	struct enc_ctx *e = p;

	ec_encode_data((int)e->b->len, (int)e->b->k, (int)e->b->m, e->tables, e->b->data,
		       e->b->parity);
}

static void
run_isal_xor(void *p)
{
	struct enc_ctx *e = p;

	for (unsigned int g = 0; g < e->b->m; g++)
		xor_gen((int)(e->b->k / e->b->m + 1), (int)e->b->len, e->b->xor_vec[g]);
}

/*
 * The incremental encode in raw ISA-L: the parity zeroed, then each data chunk folded in
 * as it comes (ec_encode_data_update; for XOR, xor_gen of the chunk into its group's
 * parity), the same work as ec_encode_begin() and ec_encode_update() per chunk.
 */
static void
run_isal_incremental(void *p)
{
	struct enc_ctx *e = p;
	const struct block *b = e->b;

	for (unsigned int i = 0; i < b->m; i++)
		memset(b->parity[i], 0, b->len);
	for (unsigned int i = 0; i < b->k; i++) {
		if (e->is_xor) {
			void *v[3] = { b->parity[i % b->m], b->data[i], b->parity[i % b->m] };

			xor_gen(3, (int)b->len, v);
		} else {
			ec_encode_data_update((int)b->len, (int)b->k, (int)b->m, (int)i, e->tables,
					      b->data[i], (unsigned char **)b->parity);
		}
	}
}

#ifdef SDR_HAVE_JERASURE
static void
run_jerasure_encode(void *p)
{
	struct enc_ctx *e = p;

	jerasure_matrix_encode((int)e->b->k, (int)e->b->m, 8, e->jmatrix, (char **)e->b->data,
			       (char **)e->b->parity, (int)e->b->len);
}

/* Jerasure's fastest Cauchy encode: a bitmatrix of the good Cauchy matrix, turned into a
 * schedule of XORs that reuses earlier results (jerasure_smart_bitmatrix_to_schedule). */
static void
run_jerasure_schedule(void *p)
{
	struct enc_ctx *e = p;

	jerasure_schedule_encode((int)e->b->k, (int)e->b->m, 8, e->jschedule, (char **)e->b->data,
				 (char **)e->b->parity, (int)e->b->len, e->jpacket);
}

static void
run_jerasure_xor(void *p)
{
	struct enc_ctx *e = p;
	unsigned int per = e->b->k / e->b->m;

	for (unsigned int g = 0; g < e->b->m; g++)
		jerasure_do_parity((int)per, (char **)e->b->xor_vec[g], (char *)e->b->parity[g],
				   (int)e->b->len);
}
#endif

static struct ec_codec *
codec_new(const char *code, unsigned int cache)
{
	struct ec_codec *c;
	struct ec_spec s;
	int rc = ec_spec_parse(code, &s);

	if (rc == 0)
		rc = ec_codec_create(&s, cache, &c);
	if (rc != 0) {
		fprintf(stderr, "bench-fec: %s: %s\n", code, ec_strerror(rc));
		exit(1);
	}
	return c;
}

/* Encode k x len with one code; returns our rate in GB/s. */
static double
bench_encode(const char *code, uint32_t len, double scale, int incremental)
{
	struct ec_codec *codec = codec_new(code, 1);
	const struct ec_spec *s = ec_codec_spec(codec);
	int is_xor = s->kind == EC_KIND_XOR;
	struct block b;
	struct enc_ctx e = { .b = &b, .codec = codec, .is_xor = is_xor };
	struct variant v[MAX_VARIANTS];
	uint8_t *matrix;
	char name[128];
	int nv = 0;

	block_init(&b, s->k, s->m, len);
	matrix = malloc((size_t)(s->k + s->m) * s->k);
	e.tables = malloc((size_t)32 * s->k * s->m);
	if (matrix == NULL || e.tables == NULL)
		abort();
	gf_gen_cauchy1_matrix(matrix, (int)(s->k + s->m), (int)s->k);
	ec_init_tables((int)s->k, (int)s->m, matrix + (size_t)s->k * s->k, e.tables);
	v[nv++] = (struct variant){ incremental ? run_ec_incremental : run_ec_encode, &e, 0 };
	v[nv++] = (struct variant){ incremental ? run_isal_incremental :
				    is_xor ? run_isal_xor : run_isal_encode, &e, 0 };
#ifdef SDR_HAVE_JERASURE
	int *good = NULL, *bits = NULL;

	if (!incremental) {
		if (!is_xor)
			e.jmatrix = cauchy_original_coding_matrix((int)s->k, (int)s->m, 8);
		v[nv++] = (struct variant){ is_xor ? run_jerasure_xor : run_jerasure_encode, &e, 0 };
		if (!is_xor) {
			/* w = 8 packets per chunk: a packet of len / 8, at most 2 KiB (cache) */
			e.jpacket = (int)(len / 8 > 2048 ? 2048 : len / 8);
			good = cauchy_good_general_coding_matrix((int)s->k, (int)s->m, 8);
			bits = jerasure_matrix_to_bitmatrix((int)s->k, (int)s->m, 8, good);
			e.jschedule = jerasure_smart_bitmatrix_to_schedule((int)s->k, (int)s->m, 8,
									   bits);
			v[nv++] = (struct variant){ run_jerasure_schedule, &e, 0 };
		}
	}
#endif
	time_variants(v, nv, iters_for(ENCODE_BUDGET, scale, (double)s->k * len));

	snprintf(name, sizeof(name), "%s encode%s, %u KiB chunks", code,
		 incremental ? " (incremental, chunk by chunk)" : "", len / 1024);
	bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
		     incremental ? (is_xor ? "ISA-L xor_gen of each chunk into its group's "
					     "parity, parity zeroed first, same buffers" :
				    "ISA-L ec_encode_data_update chunk by chunk, parity zeroed "
				    "first, same buffers") :
		     is_xor ? "ISA-L xor_gen per parity group, same buffers" :
			      "ISA-L ec_encode_data, same buffers",
		     gbps(&b, v[1].best), "higher");
#ifdef SDR_HAVE_JERASURE
	if (!incremental) {
		snprintf(name, sizeof(name), "%s encode vs Jerasure, %u KiB chunks", code,
			 len / 1024);
		bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
			     is_xor ? "Jerasure jerasure_do_parity per group" :
				      "Jerasure cauchy_original + jerasure_matrix_encode, w=8",
			     gbps(&b, v[2].best), "higher");
		if (!is_xor) {
			snprintf(name, sizeof(name), "%s encode vs Jerasure schedule, %u KiB chunks",
				 code, len / 1024);
			bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
				     "Jerasure cauchy_good + smart bitmatrix schedule, w=8",
				     gbps(&b, v[3].best), "higher");
		}
	}
	free(e.jmatrix);
	free(good);
	free(bits);
	if (e.jschedule != NULL)
		jerasure_free_schedule(e.jschedule);
#endif
	free(matrix);
	free(e.tables);
	free(b.mem);
	ec_codec_destroy(codec);
	return gbps(&b, v[0].best);
}

/* ---- encode with buffers beyond the last-level cache ---- */

/* Bytes of blocks to cycle through: twice the last-level cache (at least 64 MiB). */
static size_t
cold_bytes(void)
{
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);

	return 2 * (size_t)(llc > (32l << 20) ? llc : (32l << 20));
}

struct cold_ctx {
	struct ec_codec *codec;
	uint8_t *tables;
	int is_xor;
	unsigned int k, m;
	uint32_t len;
	uint8_t *mem;
	size_t nblk, next;
};

/* The next block's data and parity pointers: blocks are visited in turn, so each is out of
 * the cache again by the time it comes back. */
static void
cold_next(struct cold_ctx *c, unsigned char **data, unsigned char **parity)
{
	uint8_t *blk = c->mem + c->next * (size_t)(c->k + c->m) * c->len;

	c->next = c->next + 1 == c->nblk ? 0 : c->next + 1;
	for (unsigned int i = 0; i < c->k; i++)
		data[i] = blk + (size_t)i * c->len;
	for (unsigned int i = 0; i < c->m; i++)
		parity[i] = blk + (size_t)(c->k + i) * c->len;
}

static void
run_ec_encode_cold(void *p)
{
	struct cold_ctx *c = p;
	unsigned char *data[EC_MAX_CHUNKS], *parity[EC_MAX_CHUNKS];

	cold_next(c, data, parity);
	if (ec_encode(c->codec, (const uint8_t *const *)data, parity, c->len) != 0)
		abort();
}

static void
run_isal_encode_cold(void *p)
{
	struct cold_ctx *c = p;
	unsigned char *data[EC_MAX_CHUNKS], *parity[EC_MAX_CHUNKS];

	cold_next(c, data, parity);
	if (c->is_xor) {
		unsigned int per = c->k / c->m;

		/* xor_gen per group: data g, g + m, ... into parity g */
		for (unsigned int g = 0; g < c->m; g++) {
			void *v[EC_MAX_CHUNKS + 1];

			for (unsigned int t = 0; t < per; t++)
				v[t] = data[g + t * c->m];
			v[per] = parity[g];
			xor_gen((int)per + 1, (int)c->len, v);
		}
		return;
	}
	ec_encode_data((int)c->len, (int)c->k, (int)c->m, c->tables, data, parity);
}

/* Encode over blocks that fill twice the last-level cache, against raw ISA-L on the same
 * blocks: what a sender pays when the message is not in the cache (at 400 Gbit/s it is
 * not). @return our rate, in GB/s. */
static double
bench_encode_cold(const char *code, uint32_t len, double scale)
{
	struct ec_codec *codec = codec_new(code, 1);
	const struct ec_spec *s = ec_codec_spec(codec);
	size_t blk = (size_t)(s->k + s->m) * len, total = cold_bytes();
	struct cold_ctx c = { .codec = codec, .k = s->k, .m = s->m, .len = len,
			      .nblk = total / blk, .is_xor = s->kind == EC_KIND_XOR };
	struct variant v[2] = { { run_ec_encode_cold, &c, 0 }, { run_isal_encode_cold, &c, 0 } };
	struct block b = { .k = s->k, .len = len };
	uint8_t *matrix = malloc((size_t)(s->k + s->m) * s->k);
	char name[160];

	c.tables = malloc((size_t)32 * s->k * s->m);
	if (matrix == NULL || c.tables == NULL || posix_memalign((void **)&c.mem, 64, c.nblk * blk))
		abort();
	for (size_t i = 0; i < c.nblk * blk; i++)
		c.mem[i] = (uint8_t)(i * 7 + (i >> 12));
	gf_gen_cauchy1_matrix(matrix, (int)(s->k + s->m), (int)s->k);
	ec_init_tables((int)s->k, (int)s->m, matrix + (size_t)s->k * s->k, c.tables);
	/* every round goes through all the blocks at least once */
	time_variants(v, 2, (long)c.nblk * (scale < 1 ? 1 : (long)scale));
	snprintf(name, sizeof(name), "%s encode, %u KiB chunks, %zu MiB of blocks (2 x the "
		 "last-level cache%s: cold)", code, len / 1024, (c.nblk * blk) >> 20,
		 sysconf(_SC_LEVEL3_CACHE_SIZE) > 0 ? "" : ", its size unknown: taken as 32 MiB");
	bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
		     c.is_xor ? "ISA-L xor_gen per parity group, the same cold blocks" :
				"ISA-L ec_encode_data, the same cold blocks",
		     gbps(&b, v[1].best), "higher");
	free(matrix);
	free(c.tables);
	free(c.mem);
	ec_codec_destroy(codec);
	return gbps(&b, v[0].best);
}

/* ---- decode variants ---- */

struct dec_ctx {
	struct block *b;
	struct ec_codec *codec;
	struct ec_mask present[COLD_PATTERNS];
	unsigned int npat;
	unsigned int next;
	/* raw ISA-L rebuild of pattern 0 from prebuilt tables */
	uint8_t *tables;
	unsigned char *src[EC_MAX_CHUNKS];
	unsigned char *dst[EC_MAX_CHUNKS];
	unsigned int nlost;
	/* Jerasure: its own parity and data copy, and the erasure lists */
	struct block *jb;
	int *jmatrix;
	int erasures[COLD_PATTERNS][EC_MAX_CHUNKS + 1];
};

static void
run_ec_decode(void *p)
{
	struct dec_ctx *d = p;
	unsigned int i = d->next;

	d->next = i + 1 == d->npat ? 0 : i + 1;
	if (ec_decode(d->codec, &d->present[i], d->b->chunk, d->b->len) < 0)
		abort();
}

static void
run_isal_rebuild(void *p)
{
	struct dec_ctx *d = p;

	ec_encode_data((int)d->b->len, (int)d->b->k, (int)d->nlost, d->tables, d->src, d->dst);
}

static void
run_isal_xor_rebuild(void *p)
{
	struct dec_ctx *d = p;
	unsigned int per = d->b->k / d->b->m;

	/* rebuild data chunk g of each group from the others and the parity */
	for (unsigned int g = 0; g < d->b->m; g++) {
		void *v[EC_MAX_CHUNKS + 1];

		for (unsigned int t = 1; t < per; t++)
			v[t - 1] = d->b->data[g + t * d->b->m];
		v[per - 1] = d->b->parity[g];
		v[per] = d->b->data[g];
		xor_gen((int)per + 1, (int)d->b->len, v);
	}
}

#ifdef SDR_HAVE_JERASURE
static void
run_jerasure_decode(void *p)
{
	struct dec_ctx *d = p;
	unsigned int i = d->next;

	d->next = i + 1 == d->npat ? 0 : i + 1;
	if (jerasure_matrix_decode((int)d->jb->k, (int)d->jb->m, 8, d->jmatrix, 0,
				   d->erasures[i], (char **)d->jb->data, (char **)d->jb->parity,
				   (int)d->jb->len) != 0)
		abort();
}
#endif

/* Lost data chunks of mds pattern @p i: m random distinct ones; xor: chunk g of group g. */
static void
make_patterns(struct dec_ctx *d, unsigned int npat, int is_xor)
{
	unsigned int k = d->b->k, m = d->b->m;
	uint64_t rng = 0x9E3779B97F4A7C15ull;

	d->npat = npat;
	for (unsigned int p = 0; p < npat; p++) {
		struct ec_mask *pr = &d->present[p];
		unsigned int lost = 0;

	again:
		ec_mask_fill(pr, k + m);
		lost = 0;
		while (lost < m) {
			unsigned int i;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			i = is_xor ? lost : (unsigned int)(rng % k);
			if (ec_mask_test(pr, i)) {
				ec_mask_clear(pr, i);
				d->erasures[p][lost++] = (int)i;
			}
		}
		d->erasures[p][lost] = -1;
		for (unsigned int q = 0; q < p; q++)
			if (memcmp(&d->present[q], pr, sizeof(*pr)) == 0)
				goto again;
	}
}

/* Prebuilt decode tables for pattern 0, for the raw ISA-L rebuild baseline. */
static void
make_rebuild_tables(struct dec_ctx *d)
{
	unsigned int k = d->b->k, m = d->b->m, ns = 0;
	uint8_t *matrix = malloc((size_t)(k + m) * k), *in = malloc((size_t)k * k);
	uint8_t *inv = malloc((size_t)k * k), *rows = malloc((size_t)m * k);

	d->tables = malloc((size_t)32 * k * m);
	if (!matrix || !in || !inv || !rows || !d->tables)
		abort();
	gf_gen_cauchy1_matrix(matrix, (int)(k + m), (int)k);
	d->nlost = 0;
	for (unsigned int i = 0; i < k + m; i++) {
		if (!ec_mask_test(&d->present[0], i)) {
			if (i < k)
				d->dst[d->nlost++] = d->b->chunk[i];
			continue;
		}
		if (ns < k) {
			memcpy(in + (size_t)ns * k, matrix + (size_t)i * k, k);
			d->src[ns++] = d->b->chunk[i];
		}
	}
	if (gf_invert_matrix(in, inv, (int)k) != 0)
		abort();
	for (unsigned int e = 0, r = 0; e < k; e++)
		if (!ec_mask_test(&d->present[0], e))
			memcpy(rows + (size_t)r++ * k, inv + (size_t)e * k, k);
	ec_init_tables((int)k, (int)d->nlost, rows, d->tables);
	free(matrix);
	free(in);
	free(inv);
	free(rows);
}

/* Distinct patterns of m lost among k data chunks, at most COLD_PATTERNS: C(k, m) capped. */
static unsigned int
cold_patterns(unsigned int k, unsigned int m)
{
	double c = 1;

	for (unsigned int i = 0; i < m; i++)
		c = c * (k - i) / (i + 1);
	return c < COLD_PATTERNS ? (unsigned int)(c + 0.5) : COLD_PATTERNS;
}

/*
 * A one-entry table cache: "cold" cycles through distinct patterns (no two calls in a row
 * alike), so every call misses and builds its tables, even for codes with few patterns;
 * "warm" repeats one pattern, so every call hits.
 */
static void
bench_decode(const char *code, uint32_t len, double scale)
{
	struct ec_codec *codec = codec_new(code, 1);
	const struct ec_spec *s = ec_codec_spec(codec);
	int is_xor = s->kind == EC_KIND_XOR;
	struct dec_ctx *d = calloc(1, sizeof(*d));
	struct block b;
	struct variant v[MAX_VARIANTS];
	struct ec_stats st;
	char name[128];
	long iters = iters_for(DECODE_BUDGET, scale, (double)s->k * len);

	if (d == NULL)
		abort();
	block_init(&b, s->k, s->m, len);
	ec_encode(codec, (const uint8_t *const *)b.data, b.parity, len);
	d->b = &b;
	d->codec = codec;
	if (is_xor) {
		make_patterns(d, 1, 1);
		v[0] = (struct variant){ run_ec_decode, d, 0 };
		v[1] = (struct variant){ run_isal_xor_rebuild, d, 0 };
		time_variants(v, 2, iters);
		snprintf(name, sizeof(name), "%s decode, %u lost (one per group), %u KiB chunks",
			 code, s->m, len / 1024);
		bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
			     "ISA-L xor_gen per group, same buffers", gbps(&b, v[1].best),
			     "higher");
		goto out;
	}

	make_patterns(d, cold_patterns(s->k, s->m), 0);
	make_rebuild_tables(d);
	/* cold: a new pattern on every call, more patterns than the cache holds */
	v[0] = (struct variant){ run_ec_decode, d, 0 };
	v[1] = (struct variant){ run_isal_rebuild, d, 0 };
	time_variants(v, 2, iters);
	ec_codec_stats(codec, &st);
	if (st.cache_hits != 0) {
		fprintf(stderr, "bench-fec: cold decode hit the cache\n");
		exit(1);
	}
	snprintf(name, sizeof(name), "%s decode, %u data lost, cold table cache, %u KiB chunks",
		 code, s->m, len / 1024);
	bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
		     "ISA-L ec_encode_data with prebuilt decode tables (rebuild only)",
		     gbps(&b, v[1].best), "higher");
#ifdef SDR_HAVE_JERASURE
	{
		struct block jb;

		block_init(&jb, s->k, s->m, len);
		d->jb = &jb;
		d->jmatrix = cauchy_original_coding_matrix((int)s->k, (int)s->m, 8);
		jerasure_matrix_encode((int)s->k, (int)s->m, 8, d->jmatrix, (char **)jb.data,
				       (char **)jb.parity, (int)len);
		d->next = 0;
		/* ours and Jerasure in interleaved rounds, as every other pair (Jerasure is
		 * slower: fewer iterations a round for both) */
		v[0] = (struct variant){ run_ec_decode, d, 0 };
		v[1] = (struct variant){ run_jerasure_decode, d, 0 };
		time_variants(v, 2, iters / 4 > 0 ? iters / 4 : 1);
		snprintf(name, sizeof(name), "%s decode, cold, vs Jerasure, %u KiB chunks", code,
			 len / 1024);
		bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
			     "Jerasure jerasure_matrix_decode (inverts on every call)",
			     gbps(&b, v[1].best), "higher");
		free(d->jmatrix);
		free(jb.mem);
	}
#endif
	/* warm: the same pattern every call */
	d->npat = 1;
	d->next = 0;
	v[0] = (struct variant){ run_ec_decode, d, 0 };
	v[1] = (struct variant){ run_isal_rebuild, d, 0 };
	time_variants(v, 2, iters);
	snprintf(name, sizeof(name), "%s decode, %u data lost, warm table cache, %u KiB chunks",
		 code, s->m, len / 1024);
	bench_record(GROUP, name, gbps(&b, v[0].best), "GB/s/core",
		     "ISA-L ec_encode_data with prebuilt decode tables (rebuild only)",
		     gbps(&b, v[1].best), "higher");
	free(d->tables);
out:
	free(b.mem);
	free(d);
	ec_codec_destroy(codec);
}

int
main(int argc, char **argv)
{
	static const char *const codes[] = { "mds:32,8", "mds:10,4", "mds:8,2", "xor:32,8" };
	static const uint32_t lens[] = { 4096, 65536 };
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	double rate[2];

	if (scale <= 0)
		scale = 1.0;
	for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++)
		for (size_t l = 0; l < 2; l++)
			bench_encode(codes[c], lens[l], scale, 0);
	bench_encode("mds:32,8", 4096, scale, 1);
	bench_encode("xor:32,8", 4096, scale, 1);
	/* the cores come from the cold rates: at 400 Gbit/s a sender's messages are not in
	 * its caches (hot, XOR runs at L1 speed and would count a fraction of that) */
	rate[0] = bench_encode_cold("mds:32,8", 4096, scale);
	rate[1] = bench_encode_cold("xor:32,8", 4096, scale);
	for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++) {
		for (size_t l = 0; l < 2; l++)
			bench_decode(codes[c], lens[l], scale);
	}
	bench_note(GROUP, "cores to encode 400 Gbit/s of data, mds:32,8, 4 KiB chunks, cold",
		   TARGET_BPS / (rate[0] * 1e9), "cores", PUBLISHED);
	bench_note(GROUP, "cores to encode 400 Gbit/s of data, xor:32,8, 4 KiB chunks, cold",
		   TARGET_BPS / (rate[1] * 1e9), "cores", PUBLISHED);
	return 0;
}
