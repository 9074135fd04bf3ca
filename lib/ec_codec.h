/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FEC codec: systematic erasure codes over k data chunks and m parity chunks of equal
 * length, built on ISA-L.
 *
 *  - "xor:k,m": parity i is the XOR of the data chunks j with j mod m == i (m interleaved
 *    single-parity groups of k/m data chunks each); survives one loss per group.
 *  - "mds:k,m": Reed-Solomon over GF(2^8) with ISA-L's Cauchy matrix
 *    (gf_gen_cauchy1_matrix); survives any m losses among the k + m chunks.
 *
 * Chunk numbering: 0 .. k-1 are the data chunks, k .. k+m-1 the parity chunks (parity i is
 * chunk k + i). Chunk length: > 0, a multiple of EC_LEN_ALIGN and at most EC_LEN_MAX.
 * Buffers need no particular alignment (32-byte aligned ones take ISA-L's xor_gen path for
 * the xor code; others a portable loop).
 *
 * Memory and threads: ec_codec_create() allocates everything the codec will ever use,
 * including the decode-table cache; encode, decode and ec_decodable() never allocate, lock
 * or log. Encoding and ec_decodable() only read the codec, so threads may share one codec
 * for them; ec_decode() updates the cache and counters, so each decoding thread needs its
 * own codec.
 */
#ifndef SDR_EC_CODEC_H
#define SDR_EC_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

/** Largest k + m (GF(2^8) has 256 elements; a Cauchy code needs k + m distinct ones). */
#define EC_MAX_CHUNKS		255
/** Chunk lengths must be a multiple of this (the xor code works in 64-bit words). */
#define EC_LEN_ALIGN		8u
/** Largest chunk length (ISA-L takes lengths as int). */
#define EC_LEN_MAX		0x7FFFFFF8u
/** Default code. */
#define EC_SPEC_DEFAULT		"mds:32,8"
/** Default and largest number of cached decode tables. */
#define EC_CACHE_DEFAULT	64u
#define EC_CACHE_MAX		4096u
/** Buffer size that holds any formatted spec ("mds:255,255" and the NUL). */
#define EC_SPEC_STRLEN		16

/*
 * Every error: symbol, name used in counters and JSON, one-line message. Functions return
 * the negative value, -(EC_E_<symbol>), errno-style; the values start at EC_ERR_BASE so
 * they never collide with real errno values.
 */
#define EC_ERRORS(X) \
	X(SPEC_SYNTAX,		"spec_syntax",		"code string is not of the form xor:K,M or mds:K,M") \
	X(SPEC_KIND,		"spec_kind",		"unknown code kind (expected xor or mds)") \
	X(K_ZERO,		"k_zero",		"k (number of data chunks) is zero") \
	X(M_ZERO,		"m_zero",		"m (number of parity chunks) is zero") \
	X(TOO_MANY_CHUNKS,	"too_many_chunks",	"k + m exceeds 255") \
	X(XOR_K_NOT_MULTIPLE,	"xor_k_not_multiple",	"xor code: k is not a multiple of m") \
	X(CACHE_SIZE,		"cache_size",		"decode cache capacity is zero or above EC_CACHE_MAX") \
	X(LEN_ZERO,		"len_zero",		"chunk length is zero") \
	X(LEN_ALIGN,		"len_align",		"chunk length is not a multiple of 8 bytes") \
	X(LEN_TOO_BIG,		"len_too_big",		"chunk length exceeds EC_LEN_MAX") \
	X(CHUNK_INDEX,		"chunk_index",		"data chunk index is not below k") \
	X(NOMEM,		"nomem",		"out of memory while creating the codec") \
	X(NOT_DECODABLE,	"not_decodable",	"erasure pattern exceeds the capacity of the code") \
	X(SINGULAR,		"singular",		"decode matrix is singular (never expected of a Cauchy code)")

#define EC_ERR_BASE 1000

enum ec_error {
	EC_E__BASE = EC_ERR_BASE - 1,	/* so the first error is EC_ERR_BASE */
#define X(sym, name, msg) EC_E_##sym,
	EC_ERRORS(X)
#undef X
	EC_E_END
};

/** One-line message for 0 or a negative EC error code ("success", "k + m exceeds 255"...). */
const char *ec_strerror(int rc);

/** Counter/JSON name of 0 or a negative EC error code ("ok", "len_align", ...). */
const char *ec_error_name(int rc);

/** Code family. 0 is deliberately not a kind, so a zeroed spec is rejected. */
enum ec_kind {
	EC_KIND_XOR = 1,	/**< interleaved single parity */
	EC_KIND_MDS = 2,	/**< Cauchy Reed-Solomon over GF(2^8) */
};

/** A code: kind, data chunks k, parity chunks m. */
struct ec_spec {
	enum ec_kind kind;
	unsigned int k;
	unsigned int m;
};

/**
 * Parse "xor:K,M" or "mds:K,M" (lower case, decimal, no spaces) and check the result with
 * ec_spec_check().
 *
 * @param s     the string.
 * @param spec  filled on success, untouched on failure.
 * @return 0, -EC_E_SPEC_SYNTAX, -EC_E_SPEC_KIND, or an ec_spec_check() error.
 */
int ec_spec_parse(const char *s, struct ec_spec *spec);

/**
 * Check a spec: k > 0, m > 0, k + m <= EC_MAX_CHUNKS and, for xor, k a multiple of m.
 * @return 0 or the first failing rule: -EC_E_SPEC_KIND, -EC_E_K_ZERO, -EC_E_M_ZERO,
 *         -EC_E_TOO_MANY_CHUNKS, -EC_E_XOR_K_NOT_MULTIPLE.
 */
int ec_spec_check(const struct ec_spec *spec);

/** Print a spec as "mds:32,8" into @p buf (EC_SPEC_STRLEN bytes suffice). @return buf. */
const char *ec_spec_format(const struct ec_spec *spec, char *buf, size_t len);

/**
 * Which of the k + m chunks are present: bit i set means chunk i arrived. Bits at or
 * above k + m are ignored.
 */
struct ec_mask {
	uint64_t w[4];
};

/** Clear every bit. */
static inline void
ec_mask_zero(struct ec_mask *mask)
{
	mask->w[0] = mask->w[1] = mask->w[2] = mask->w[3] = 0;
}

/** Set bits 0 .. n-1 (n <= 256) and clear the rest. */
static inline void
ec_mask_fill(struct ec_mask *mask, unsigned int n)
{
	for (unsigned int i = 0; i < 4; i++) {
		unsigned int lo = i * 64;

		mask->w[i] = n >= lo + 64 ? ~(uint64_t)0 :
			     n <= lo ? 0 : (((uint64_t)1 << (n - lo)) - 1);
	}
}

/** Mark chunk @p i present (i < 256). */
static inline void
ec_mask_set(struct ec_mask *mask, unsigned int i)
{
	mask->w[i >> 6] |= (uint64_t)1 << (i & 63);
}

/** Mark chunk @p i missing (i < 256). */
static inline void
ec_mask_clear(struct ec_mask *mask, unsigned int i)
{
	mask->w[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/** @return 1 if chunk @p i (i < 256) is marked present, else 0. */
static inline int
ec_mask_test(const struct ec_mask *mask, unsigned int i)
{
	return (int)((mask->w[i >> 6] >> (i & 63)) & 1);
}

/** @return the number of bits set. */
static inline unsigned int
ec_mask_count(const struct ec_mask *mask)
{
	return (unsigned int)(__builtin_popcountll(mask->w[0]) + __builtin_popcountll(mask->w[1]) +
			      __builtin_popcountll(mask->w[2]) + __builtin_popcountll(mask->w[3]));
}

/*
 * Decode counters: field name, meaning. The cache counters move only for mds decodes that
 * rebuild at least one data chunk (the xor code needs no tables). Hit rate =
 * cache_hits / (cache_hits + cache_misses), see ec_stats_hit_rate().
 */
#define EC_COUNTERS(X) \
	X(decodes, "decodes", OK, \
	  "ec_decode calls that succeeded, including those with nothing to rebuild") \
	X(not_decodable, "not_decodable", ERROR, \
	  "ec_decode calls refused because the pattern exceeds the code") \
	X(rebuilt, "rebuilt", OK, \
	  "data chunks rebuilt") \
	X(cache_hits, "cache_hits", INFO, \
	  "mds decodes whose tables were found in the cache") \
	X(cache_misses, "cache_misses", INFO, \
	  "mds decodes that inverted a matrix and built tables") \
	X(cache_evictions, "cache_evictions", INFO, \
	  "cache entries replaced, least recently used first")

/** Counters of one codec (see EC_COUNTERS). */
struct ec_stats {
#define X(sym, name, kind, doc) uint64_t sym;
	EC_COUNTERS(X)
#undef X
};

/** The counters of struct ec_stats, in its field order, as a table (counters.h). */
extern const struct sdr_counter_table ec_counter_table;

/** cache_hits / (cache_hits + cache_misses), 0 when there was no lookup. */
double ec_stats_hit_rate(const struct ec_stats *stats);

/** Print the counters and the hit rate as "decodes=.. not_decodable=.. ... hit_rate=0.98". */
const char *ec_stats_format(const struct ec_stats *stats, char *buf, size_t len);

/** A codec: the encode tables of one code and its decode-table cache. Opaque. */
struct ec_codec;

/**
 * Create a codec: validate @p spec, build the encode matrix and tables, and allocate the
 * decode-table cache and the scratch space decoding needs.
 *
 * @param spec           the code (copied).
 * @param cache_entries  decode tables to keep, 1 .. EC_CACHE_MAX (EC_CACHE_DEFAULT is a
 *                       good choice); the mds cache takes 32 * k * min(k, m) bytes per
 *                       entry; the xor code allocates none but checks the value all the same.
 * @param codec          set to the new codec on success; the caller frees it with
 *                       ec_codec_destroy().
 * @return 0, an ec_spec_check() error, -EC_E_CACHE_SIZE or -EC_E_NOMEM.
 */
int ec_codec_create(const struct ec_spec *spec, unsigned int cache_entries,
		    struct ec_codec **codec);

/**
 * The bytes ec_codec_create() allocates for @p spec with @p cache_entries decode tables
 * (for an mds code mostly its cache, 32 * k * min(k, m) bytes an entry), for a caller that
 * bounds its memory. 0 for a spec ec_spec_check() refuses.
 */
uint64_t ec_codec_bytes(const struct ec_spec *spec, unsigned int cache_entries);

/** Free a codec and everything it allocated. NULL is allowed. */
void ec_codec_destroy(struct ec_codec *codec);

/** The code of a codec. */
const struct ec_spec *ec_codec_spec(const struct ec_codec *codec);

/**
 * Encode: compute the m parity chunks of k data chunks (ISA-L ec_encode_data for mds,
 * xor_gen or a 64-bit word loop for xor).
 *
 * @param codec   the codec.
 * @param data    k pointers to data chunks of @p len bytes (read only).
 * @param parity  m pointers to parity chunks of @p len bytes, overwritten; they must not
 *                overlap the data.
 * @param len     chunk length: > 0, a multiple of EC_LEN_ALIGN, <= EC_LEN_MAX.
 * @return 0, -EC_E_LEN_ZERO, -EC_E_LEN_ALIGN or -EC_E_LEN_TOO_BIG (then nothing is written).
 */
int ec_encode(const struct ec_codec *codec, const uint8_t *const *data,
	      uint8_t *const *parity, uint32_t len);

/**
 * Start an incremental encode: zero the m parity chunks. Then fold each data chunk in
 * with ec_encode_update() as it becomes available, in any order; once all k are folded
 * the parity equals what ec_encode() gives.
 *
 * @return 0 or a chunk length error, as ec_encode().
 */
int ec_encode_begin(const struct ec_codec *codec, uint8_t *const *parity, uint32_t len);

/**
 * Fold data chunk @p index into the parity (ISA-L ec_encode_data_update for mds; an XOR
 * into parity index % m for xor). Each data chunk must be folded exactly once.
 *
 * @param codec   the codec.
 * @param index   which data chunk, 0 .. k-1.
 * @param data    the chunk, @p len bytes.
 * @param parity  the m parity chunks given to ec_encode_begin().
 * @param len     chunk length, as ec_encode().
 * @return 0, -EC_E_CHUNK_INDEX or a chunk length error (then nothing is written).
 */
int ec_encode_update(const struct ec_codec *codec, unsigned int index, const uint8_t *data,
		     uint8_t *const *parity, uint32_t len);

/**
 * Can the missing data chunks be rebuilt from the chunks marked present? Costs a few
 * popcounts (mds: at most m chunks missing) or one pass over the missing chunks (xor: at
 * most one missing per group of data + parity members); builds no tables.
 *
 * @return 1 if ec_decode() would succeed with @p present, 0 if it would return
 *         -EC_E_NOT_DECODABLE.
 */
int ec_decodable(const struct ec_codec *codec, const struct ec_mask *present);

/**
 * Rebuild the missing data chunks in place. Missing parity chunks are not rebuilt.
 *
 * For mds the k surviving chunks used are the lowest-numbered present ones; the decode
 * tables for that choice are taken from the cache or built into it (gf_invert_matrix of
 * the e x e block of the surviving parity rows at the e lost columns, then
 * ec_init_tables), evicting the least recently used entry when full.
 *
 * @param codec    the codec (its cache and counters are updated).
 * @param present  which chunks are present.
 * @param chunks   k + m pointers: present chunks are read; missing data chunks are
 *                 written; missing parity pointers are not used (may be NULL).
 * @param len      chunk length, as ec_encode().
 * @return the number of data chunks rebuilt (0 when none was missing);
 *         -EC_E_NOT_DECODABLE when the pattern exceeds the code (no buffer is written, and
 *         ec_decodable() returns 0 for exactly these patterns); a chunk length error;
 *         -EC_E_SINGULAR if a decode matrix cannot be inverted (nothing written).
 */
int ec_decode(struct ec_codec *codec, const struct ec_mask *present, uint8_t *const *chunks,
	      uint32_t len);

/** Copy the counters of @p codec into @p stats. */
void ec_codec_stats(const struct ec_codec *codec, struct ec_stats *stats);

#endif /* SDR_EC_CODEC_H */
