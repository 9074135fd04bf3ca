/* SPDX-License-Identifier: BSD-3-Clause */
/* FEC codec: xor and Cauchy Reed-Solomon on ISA-L, with an LRU cache of decode tables. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "ec_codec.h"
#include "simd_clean.h"

/* ISA-L expands every GF(2^8) coefficient into 32 bytes of multiplication tables. */
#define GF_TBL_BYTES	32u
/* End of a hash chain or of the LRU list. */
#define NIL		0xFFFFu

/* One cached set of decode tables. */
struct cache_entry {
	struct ec_mask key;	/* the k surviving chunks the tables decode from */
	uint32_t hash;
	uint16_t chain;		/* next entry in the same hash bucket */
	uint16_t newer;		/* LRU neighbours */
	uint16_t older;
	uint8_t *tables;	/* 32 * k * (missing data chunks) bytes, in the arena */
};

struct ec_codec {
	struct ec_spec spec;
	unsigned int k;
	unsigned int m;
	unsigned int n;		/* k + m */
	struct ec_mask all;	/* chunks 0 .. n-1 */
	struct ec_mask data;	/* chunks 0 .. k-1 */
	uint8_t group[EC_MAX_CHUNKS];	/* xor: group of each chunk (no division per chunk) */
	/* mds only */
	uint8_t *matrix;	/* n x k encode matrix, identity on top */
	uint8_t *enc_tables;	/* 32 * k * m */
	uint8_t *inv_in;	/* decode scratch: e x e matrix to invert (destroyed by it) */
	uint8_t *inv_out;	/* e x e inverse */
	uint8_t *dec_rows;	/* e x k decode rows; e <= min(k, m) chunks lost */
	size_t entry_bytes;
	unsigned int cap;
	unsigned int used;
	uint32_t bucket_mask;
	uint16_t *buckets;
	uint16_t newest;
	uint16_t oldest;
	struct cache_entry *entries;
	uint8_t *arena;
	struct ec_stats stats;
};

static const char *const error_names[] = {
#define X(sym, name, msg) [EC_E_##sym - EC_ERR_BASE] = name,
	EC_ERRORS(X)
#undef X
};

static const char *const error_msgs[] = {
#define X(sym, name, msg) [EC_E_##sym - EC_ERR_BASE] = msg,
	EC_ERRORS(X)
#undef X
};

/* Index of a negative EC error code in the tables above, or -1. */
static int
error_index(int rc)
{
	if (rc > -EC_ERR_BASE || rc <= -EC_E_END)
		return -1;
	return -rc - EC_ERR_BASE;
}

const char *
ec_strerror(int rc)
{
	int i = error_index(rc);

	if (rc == 0)
		return "success";
	return i < 0 ? "unknown error" : error_msgs[i];
}

const char *
ec_error_name(int rc)
{
	int i = error_index(rc);

	if (rc == 0)
		return "ok";
	return i < 0 ? "unknown" : error_names[i];
}

/* ---- spec ---- */

static const char *
kind_name(enum ec_kind kind)
{
	switch (kind) {
	case EC_KIND_XOR:
		return "xor";
	case EC_KIND_MDS:
		return "mds";
	}
	return "?";
}

int
ec_spec_check(const struct ec_spec *spec)
{
	if (spec->kind != EC_KIND_XOR && spec->kind != EC_KIND_MDS)
		return -EC_E_SPEC_KIND;
	if (spec->k == 0)
		return -EC_E_K_ZERO;
	if (spec->m == 0)
		return -EC_E_M_ZERO;
	if (spec->k > EC_MAX_CHUNKS || spec->m > EC_MAX_CHUNKS ||
	    spec->k + spec->m > EC_MAX_CHUNKS)
		return -EC_E_TOO_MANY_CHUNKS;
	if (spec->kind == EC_KIND_XOR && spec->k % spec->m != 0)
		return -EC_E_XOR_K_NOT_MULTIPLE;
	return 0;
}

/* A decimal count at *p; values past 10^7 saturate there (too large anyway, never wrap). */
static int
parse_count(const char **p, unsigned int *v)
{
	const char *s = *p;
	unsigned int x = 0;

	if (*s < '0' || *s > '9')
		return -EC_E_SPEC_SYNTAX;
	for (; *s >= '0' && *s <= '9'; s++)
		x = x >= 1000000 ? 10000000 : x * 10 + (unsigned int)(*s - '0');
	*v = x;
	*p = s;
	return 0;
}

int
ec_spec_parse(const char *s, struct ec_spec *spec)
{
	struct ec_spec r;
	const char *p;
	int rc;

	if (s == NULL || strchr(s, ':') == NULL)
		return -EC_E_SPEC_SYNTAX;
	if (strncmp(s, "xor:", 4) == 0)
		r.kind = EC_KIND_XOR;
	else if (strncmp(s, "mds:", 4) == 0)
		r.kind = EC_KIND_MDS;
	else
		return -EC_E_SPEC_KIND;
	p = s + 4;
	if (parse_count(&p, &r.k) != 0 || *p++ != ',' || parse_count(&p, &r.m) != 0 ||
	    *p != '\0')
		return -EC_E_SPEC_SYNTAX;
	rc = ec_spec_check(&r);
	if (rc == 0)
		*spec = r;
	return rc;
}

const char *
ec_spec_format(const struct ec_spec *spec, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u,%u", kind_name(spec->kind), spec->k, spec->m);
	return buf;
}

/* ---- counters ---- */

static const struct {
	const char *name;
	size_t off;
} counter_fields[] = {
#define X(sym, name, kind, doc) { name, offsetof(struct ec_stats, sym) },
	EC_COUNTERS(X)
#undef X
};

static const struct sdr_counter_def counter_defs[] = {
	EC_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table ec_counter_table = {
	.group = "fec",
	.doc = "an erasure codec's decodes and its decode-table cache (ec_codec_stats(); "
	       "bench-fec prints them)",
	.n = sizeof(counter_defs) / sizeof(counter_defs[0]),
	.defs = counter_defs,
};

double
ec_stats_hit_rate(const struct ec_stats *stats)
{
	uint64_t lookups = stats->cache_hits + stats->cache_misses;

	return lookups ? (double)stats->cache_hits / (double)lookups : 0.0;
}

const char *
ec_stats_format(const struct ec_stats *stats, char *buf, size_t len)
{
	size_t pos = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(counter_fields) / sizeof(counter_fields[0]); i++) {
		uint64_t v;
		int w;

		memcpy(&v, (const char *)stats + counter_fields[i].off, sizeof(v));
		w = snprintf(buf + pos, len - pos, "%s=%" PRIu64 " ", counter_fields[i].name, v);
		if (w < 0 || (size_t)w >= len - pos)
			return buf;
		pos += (size_t)w;
	}
	snprintf(buf + pos, len - pos, "hit_rate=%.4f", ec_stats_hit_rate(stats));
	return buf;
}

/* ---- creation ---- */

static void *
alloc_aligned(size_t size)
{
	void *p;

	if (posix_memalign(&p, 64, size ? size : 64) != 0)
		return NULL;
	return p;
}

/* Encode matrix and tables, decode scratch and the table cache of an mds codec. */
static int
mds_setup(struct ec_codec *c, unsigned int cap)
{
	unsigned int k = c->k, m = c->m, max_lost = k < m ? k : m;
	uint32_t nb = 1;

	c->entry_bytes = ((size_t)GF_TBL_BYTES * k * max_lost + 63) & ~(size_t)63;
	while (nb < cap)
		nb <<= 1;
	c->matrix = malloc((size_t)c->n * k);
	c->enc_tables = alloc_aligned((size_t)GF_TBL_BYTES * k * m);
	c->inv_in = malloc((size_t)max_lost * max_lost);
	c->inv_out = malloc((size_t)max_lost * max_lost);
	c->dec_rows = malloc((size_t)max_lost * k);
	c->arena = alloc_aligned(c->entry_bytes * cap);
	c->entries = calloc(cap, sizeof(*c->entries));
	c->buckets = malloc(nb * sizeof(*c->buckets));
	if (c->matrix == NULL || c->enc_tables == NULL || c->inv_in == NULL ||
	    c->inv_out == NULL || c->dec_rows == NULL || c->arena == NULL ||
	    c->entries == NULL || c->buckets == NULL)
		return -EC_E_NOMEM;
	/* touch the arena now so the decode path takes no page faults */
	memset(c->arena, 0, c->entry_bytes * cap);
	for (unsigned int i = 0; i < cap; i++)
		c->entries[i].tables = c->arena + c->entry_bytes * i;
	for (uint32_t i = 0; i < nb; i++)
		c->buckets[i] = NIL;
	c->bucket_mask = nb - 1;
	c->cap = cap;
	c->newest = c->oldest = NIL;
	gf_gen_cauchy1_matrix(c->matrix, (int)c->n, (int)k);
	ec_init_tables((int)k, (int)m, c->matrix + (size_t)k * k, c->enc_tables);
	return 0;
}

uint64_t
ec_codec_bytes(const struct ec_spec *spec, unsigned int cache_entries)
{
	uint64_t k = spec->k, m = spec->m, e = k < m ? k : m, nb = 1;

	if (ec_spec_check(spec) != 0)
		return 0;
	if (spec->kind == EC_KIND_XOR)
		return sizeof(struct ec_codec);
	while (nb < cache_entries)
		nb <<= 1;
	/* as mds_setup() allocates: matrix, encode tables, decode scratch, the cache */
	return sizeof(struct ec_codec) + (k + m) * k + GF_TBL_BYTES * k * m + 2 * e * e + e * k +
	       (((uint64_t)GF_TBL_BYTES * k * e + 63) & ~63ull) * cache_entries +
	       cache_entries * sizeof(struct cache_entry) + nb * sizeof(uint16_t);
}

int
ec_codec_create(const struct ec_spec *spec, unsigned int cache_entries,
		struct ec_codec **codec)
{
	struct ec_codec *c;
	int rc = ec_spec_check(spec);

	if (rc != 0)
		return rc;
	if (cache_entries == 0 || cache_entries > EC_CACHE_MAX)
		return -EC_E_CACHE_SIZE;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -EC_E_NOMEM;
	c->spec = *spec;
	c->k = spec->k;
	c->m = spec->m;
	c->n = spec->k + spec->m;
	ec_mask_fill(&c->all, c->n);
	ec_mask_fill(&c->data, c->k);
	if (spec->kind == EC_KIND_XOR) {
		for (unsigned int i = 0; i < c->n; i++)
			c->group[i] = (uint8_t)(i < c->k ? i % c->m : i - c->k);
	} else {
		rc = mds_setup(c, cache_entries);
		if (rc != 0) {
			ec_codec_destroy(c);
			return rc;
		}
	}
	*codec = c;
	return 0;
}

void
ec_codec_destroy(struct ec_codec *c)
{
	if (c == NULL)
		return;
	free(c->matrix);
	free(c->enc_tables);
	free(c->inv_in);
	free(c->inv_out);
	free(c->dec_rows);
	free(c->arena);
	free(c->entries);
	free(c->buckets);
	free(c);
}

const struct ec_spec *
ec_codec_spec(const struct ec_codec *c)
{
	return &c->spec;
}

void
ec_codec_stats(const struct ec_codec *c, struct ec_stats *stats)
{
	*stats = c->stats;
}

/* ---- xor kernels ---- */

static inline uint64_t
load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void
store64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * dst ^= src over len bytes (a multiple of 8), in 64-bit words. Hand-written because
 * ISA-L's xor_gen overwrites its destination: it has no accumulate form for folding one
 * chunk into a parity that already holds others. memcpy keeps unaligned buffers legal and
 * compiles to plain loads and stores.
 */
static void
xor_into(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t len)
{
	uint32_t off = 0;

	for (; off + 32 <= len; off += 32) {
		store64(dst + off, load64(dst + off) ^ load64(src + off));
		store64(dst + off + 8, load64(dst + off + 8) ^ load64(src + off + 8));
		store64(dst + off + 16, load64(dst + off + 16) ^ load64(src + off + 16));
		store64(dst + off + 24, load64(dst + off + 24) ^ load64(src + off + 24));
	}
	for (; off < len; off += 8)
		store64(dst + off, load64(dst + off) ^ load64(src + off));
}

/*
 * dst = XOR of n >= 2 sources in 64-bit words: the fallback for buffers that ISA-L's
 * xor_gen may not take (its AVX kernel uses aligned loads and faults on others).
 */
static void
xor_sum_words(uint8_t *dst, const uint8_t *const *src, unsigned int n, uint32_t len)
{
	uint32_t off = 0;

	for (; off + 32 <= len; off += 32) {
		uint64_t a0 = load64(src[0] + off), a1 = load64(src[0] + off + 8);
		uint64_t a2 = load64(src[0] + off + 16), a3 = load64(src[0] + off + 24);

		for (unsigned int i = 1; i < n; i++) {
			a0 ^= load64(src[i] + off);
			a1 ^= load64(src[i] + off + 8);
			a2 ^= load64(src[i] + off + 16);
			a3 ^= load64(src[i] + off + 24);
		}
		store64(dst + off, a0);
		store64(dst + off + 8, a1);
		store64(dst + off + 16, a2);
		store64(dst + off + 24, a3);
	}
	for (; off < len; off += 8) {
		uint64_t a = load64(src[0] + off);

		for (unsigned int i = 1; i < n; i++)
			a ^= load64(src[i] + off);
		store64(dst + off, a);
	}
}

/* dst = XOR of src[0 .. n-1] (n >= 1; dst overlaps none of them). */
static void
xor_sum(uint8_t *dst, const uint8_t *const *src, unsigned int n, uint32_t len)
{
	void *v[EC_MAX_CHUNKS + 1];
	uintptr_t bits = (uintptr_t)dst;

	if (n == 1) {
		memcpy(dst, src[0], len);
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		v[i] = (void *)(uintptr_t)src[i];	/* xor_gen only reads the sources */
		bits |= (uintptr_t)src[i];
	}
	v[n] = dst;
	if ((bits & 31) == 0 && xor_gen((int)n + 1, (int)len, v) == 0) {
		sdr_simd_clean();
		return;
	}
	xor_sum_words(dst, src, n, len);
}

/* ---- encode ---- */

static int
check_len(uint32_t len)
{
	if (len == 0)
		return -EC_E_LEN_ZERO;
	if (len % EC_LEN_ALIGN != 0)
		return -EC_E_LEN_ALIGN;
	if (len > EC_LEN_MAX)
		return -EC_E_LEN_TOO_BIG;
	return 0;
}

static void
xor_encode(const struct ec_codec *c, const uint8_t *const *data, uint8_t *const *parity,
	   uint32_t len)
{
	const uint8_t *src[EC_MAX_CHUNKS];
	unsigned int per_group = c->k / c->m;

	for (unsigned int g = 0; g < c->m; g++) {
		for (unsigned int t = 0; t < per_group; t++)
			src[t] = data[g + t * c->m];
		xor_sum(parity[g], src, per_group, len);
	}
}

int
ec_encode(const struct ec_codec *c, const uint8_t *const *data, uint8_t *const *parity,
	  uint32_t len)
{
	int rc = check_len(len);

	if (rc != 0)
		return rc;
	if (c->spec.kind == EC_KIND_XOR)
		xor_encode(c, data, parity, len);
	else	/* ISA-L's prototypes lack const; it only reads the data */
		ec_encode_data((int)len, (int)c->k, (int)c->m, c->enc_tables,
			       (unsigned char **)data, (unsigned char **)parity);
	sdr_simd_clean();
	return 0;
}

int
ec_encode_begin(const struct ec_codec *c, uint8_t *const *parity, uint32_t len)
{
	int rc = check_len(len);

	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < c->m; i++)
		memset(parity[i], 0, len);
	return 0;
}

int
ec_encode_update(const struct ec_codec *c, unsigned int index, const uint8_t *data,
		 uint8_t *const *parity, uint32_t len)
{
	int rc = check_len(len);

	if (rc != 0)
		return rc;
	if (index >= c->k)
		return -EC_E_CHUNK_INDEX;
	if (c->spec.kind == EC_KIND_XOR)
		xor_into(parity[c->group[index]], data, len);
	else
		ec_encode_data_update((int)len, (int)c->k, (int)c->m, (int)index, c->enc_tables,
				      (unsigned char *)data,
				      (unsigned char **)parity);
	sdr_simd_clean();
	return 0;
}

/* ---- decodability ---- */

/* At most one missing chunk per group (data j is in group j % m, parity i in group i). */
static int
xor_decodable(const struct ec_codec *c, const struct ec_mask *present)
{
	uint64_t seen[2] = { 0, 0 };	/* xor needs k >= m, so m <= 127 groups */

	for (unsigned int w = 0; w < 4; w++) {
		uint64_t miss = ~present->w[w] & c->all.w[w];

		while (miss != 0) {
			unsigned int idx = w * 64 + (unsigned int)__builtin_ctzll(miss);
			unsigned int g = c->group[idx];
			uint64_t bit = (uint64_t)1 << (g & 63);

			if (seen[g >> 6] & bit)
				return 0;
			seen[g >> 6] |= bit;
			miss &= miss - 1;
		}
	}
	return 1;
}

int
ec_decodable(const struct ec_codec *c, const struct ec_mask *present)
{
	if (c->spec.kind == EC_KIND_XOR)
		return xor_decodable(c, present);
	return c->n - ((unsigned int)__builtin_popcountll(present->w[0] & c->all.w[0]) +
		       (unsigned int)__builtin_popcountll(present->w[1] & c->all.w[1]) +
		       (unsigned int)__builtin_popcountll(present->w[2] & c->all.w[2]) +
		       (unsigned int)__builtin_popcountll(present->w[3] & c->all.w[3])) <= c->m;
}

/* ---- decode-table cache: hash chains for lookup, a doubly linked list for LRU ---- */

static uint32_t
mask_hash(const struct ec_mask *key)
{
	uint64_t h = 0;

	for (unsigned int i = 0; i < 4; i++) {
		h = (h ^ key->w[i]) * 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static int
mask_equal(const struct ec_mask *a, const struct ec_mask *b)
{
	return ((a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]) | (a->w[2] ^ b->w[2]) |
		(a->w[3] ^ b->w[3])) == 0;
}

static uint16_t
cache_find(const struct ec_codec *c, const struct ec_mask *key, uint32_t hash)
{
	uint16_t i = c->buckets[hash & c->bucket_mask];

	while (i != NIL && (c->entries[i].hash != hash || !mask_equal(&c->entries[i].key, key)))
		i = c->entries[i].chain;
	return i;
}

static void
lru_unlink(struct ec_codec *c, uint16_t i)
{
	struct cache_entry *e = &c->entries[i];

	if (e->newer != NIL)
		c->entries[e->newer].older = e->older;
	else
		c->newest = e->older;
	if (e->older != NIL)
		c->entries[e->older].newer = e->newer;
	else
		c->oldest = e->newer;
}

static void
lru_push_newest(struct ec_codec *c, uint16_t i)
{
	struct cache_entry *e = &c->entries[i];

	e->newer = NIL;
	e->older = c->newest;
	if (c->newest != NIL)
		c->entries[c->newest].newer = i;
	else
		c->oldest = i;
	c->newest = i;
}

static void
chain_unlink(struct ec_codec *c, uint16_t i)
{
	uint16_t *link = &c->buckets[c->entries[i].hash & c->bucket_mask];

	while (*link != i)
		link = &c->entries[*link].chain;
	*link = c->entries[i].chain;
}

/* A free entry, or the least recently used one taken out of the cache. */
static uint16_t
cache_take_slot(struct ec_codec *c)
{
	uint16_t i;

	if (c->used < c->cap)
		return (uint16_t)c->used++;
	i = c->oldest;
	lru_unlink(c, i);
	chain_unlink(c, i);
	c->stats.cache_evictions++;
	return i;
}

/*
 * Rows of the decode matrix for the e lost data chunks, over the k survivors (the k - e
 * present data chunks, then e parity chunks P). Writing C for the parity rows of the
 * encode matrix, P = C[P][lost] d_lost + C[P][present] d_present, so with S the e x e
 * matrix C[P][lost]:
 *	d_lost = S^-1 P + (S^-1 C[P][present]) d_present	(+ is - in GF(2^8))
 * Only S is inverted (gf_invert_matrix): e^3 + e^2 (k - e) multiplications instead of the
 * k^3 of inverting all k surviving rows, with the same result, since the decode matrix is
 * unique. Every square submatrix of a Cauchy matrix is invertible, so S always is.
 */
static int
mds_decode_rows(struct ec_codec *c, const uint8_t *surv, const uint8_t *lost, unsigned int e)
{
	unsigned int k = c->k, nd = k - e;
	const uint8_t *par = surv + nd;
	uint8_t *s = c->inv_in, *inv = c->inv_out;

	for (unsigned int r = 0; r < e; r++)
		for (unsigned int col = 0; col < e; col++)
			s[r * e + col] = c->matrix[(size_t)par[r] * k + lost[col]];
	if (gf_invert_matrix(s, inv, (int)e) != 0)
		return -EC_E_SINGULAR;
	for (unsigned int a = 0; a < e; a++) {
		const uint8_t *ia = inv + a * e;
		uint8_t *row = c->dec_rows + (size_t)a * k;

		for (unsigned int q = 0; q < nd; q++) {
			uint8_t acc = 0;

			for (unsigned int r = 0; r < e; r++)
				acc ^= gf_mul(ia[r], c->matrix[(size_t)par[r] * k + surv[q]]);
			row[q] = acc;
		}
		memcpy(row + nd, ia, e);
	}
	return 0;
}

/* Decode tables for survivors @p key, from the cache or built into it. NULL if singular. */
static const uint8_t *
mds_tables(struct ec_codec *c, const struct ec_mask *key, const uint8_t *surv,
	   const uint8_t *lost, unsigned int nlost)
{
	uint32_t hash = mask_hash(key);
	uint16_t i = cache_find(c, key, hash);
	struct cache_entry *e;

	if (i != NIL) {
		c->stats.cache_hits++;
		lru_unlink(c, i);
		lru_push_newest(c, i);
		return c->entries[i].tables;
	}
	if (mds_decode_rows(c, surv, lost, nlost) != 0)
		return NULL;
	c->stats.cache_misses++;
	i = cache_take_slot(c);
	e = &c->entries[i];
	ec_init_tables((int)c->k, (int)nlost, c->dec_rows, e->tables);
	e->key = *key;
	e->hash = hash;
	e->chain = c->buckets[hash & c->bucket_mask];
	c->buckets[hash & c->bucket_mask] = i;
	lru_push_newest(c, i);
	return e->tables;
}

/*
 * The k lowest-numbered present chunks are the survivors: every present data chunk and the
 * first present parity chunks. They fix the missing data set too, so they are the cache
 * key, and patterns that differ only in unused parity share one entry.
 */
static int
mds_decode(struct ec_codec *c, const struct ec_mask *present, uint8_t *const *chunks,
	   uint32_t len)
{
	unsigned char *src[EC_MAX_CHUNKS], *dst[EC_MAX_CHUNKS];
	uint8_t surv[EC_MAX_CHUNKS], lost[EC_MAX_CHUNKS];
	unsigned int nsurv = 0, nlost = 0;
	const uint8_t *tables;
	struct ec_mask key;

	for (unsigned int w = 0; w < 4; w++) {
		uint64_t miss = ~present->w[w] & c->data.w[w];

		for (; miss != 0; miss &= miss - 1) {
			unsigned int idx = w * 64 + (unsigned int)__builtin_ctzll(miss);

			lost[nlost] = (uint8_t)idx;
			dst[nlost++] = chunks[idx];
		}
	}
	if (nlost == 0)
		return 0;
	ec_mask_zero(&key);
	for (unsigned int w = 0; w < 4 && nsurv < c->k; w++) {
		uint64_t have = present->w[w] & c->all.w[w];

		for (; have != 0 && nsurv < c->k; have &= have - 1) {
			unsigned int idx = w * 64 + (unsigned int)__builtin_ctzll(have);

			key.w[w] |= have & -have;
			surv[nsurv] = (uint8_t)idx;
			src[nsurv++] = chunks[idx];
		}
	}
	tables = mds_tables(c, &key, surv, lost, nlost);
	if (tables == NULL)
		return -EC_E_SINGULAR;
	ec_encode_data((int)len, (int)c->k, (int)nlost, (unsigned char *)tables,
		       src, dst);
	sdr_simd_clean();
	return (int)nlost;
}

/* Each lost data chunk is the XOR of the other members of its group, parity included. */
static int
xor_decode(const struct ec_codec *c, const struct ec_mask *present, uint8_t *const *chunks,
	   uint32_t len)
{
	const uint8_t *src[EC_MAX_CHUNKS];
	unsigned int per_group = c->k / c->m;
	int nlost = 0;

	for (unsigned int w = 0; w < 4; w++) {
		uint64_t miss = ~present->w[w] & c->data.w[w];

		for (; miss != 0; miss &= miss - 1) {
			unsigned int d = w * 64 + (unsigned int)__builtin_ctzll(miss);
			unsigned int g = c->group[d], ns = 0;

			for (unsigned int t = 0; t < per_group; t++) {
				if (g + t * c->m != d)
					src[ns++] = chunks[g + t * c->m];
			}
			src[ns++] = chunks[c->k + g];
			xor_sum(chunks[d], src, ns, len);
			nlost++;
		}
	}
	return nlost;
}

int
ec_decode(struct ec_codec *c, const struct ec_mask *present, uint8_t *const *chunks,
	  uint32_t len)
{
	int rc = check_len(len);

	if (rc != 0)
		return rc;
	if (!ec_decodable(c, present)) {
		c->stats.not_decodable++;
		return -EC_E_NOT_DECODABLE;
	}
	if (c->spec.kind == EC_KIND_XOR)
		rc = xor_decode(c, present, chunks, len);
	else
		rc = mds_decode(c, present, chunks, len);
	if (rc >= 0) {
		c->stats.decodes++;
		c->stats.rebuilt += (uint64_t)rc;
	}
	return rc;
}
