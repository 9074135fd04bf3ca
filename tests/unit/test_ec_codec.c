/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FEC codec: encode against naive references (a GF(2^8) matrix-vector product with
 * ISA-L's scalar gf_mul on a Cauchy matrix built here, a byte loop for xor), every erasure
 * pattern of small codes, random patterns of mds:32,8 / xor:32,8, incremental encode,
 * the decode-table cache, and every error.
 */
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <isa-l/erasure_code.h>

#include "ec_codec.h"

#define SENTINEL 0xA5

static uint64_t rng_state = 0x5EED0FEC0DEC0DE5ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned int
rng_below(unsigned int n)
{
	return (unsigned int)(rng() % n);
}

/* Byte-compare two chunks (memcmp: cmocka's byte-by-byte compare is slow on megabytes). */
static void
check_chunk(const uint8_t *got, const uint8_t *want, uint32_t len, unsigned int idx)
{
	if (memcmp(got, want, len) != 0)
		fail_msg("chunk %u differs from the original", idx);
}

/* Chunks of one code: orig holds the data and the reference parity, work is decoded. */
struct chunks {
	struct ec_spec spec;
	unsigned int n;
	uint32_t len;
	uint8_t *mem;
	uint8_t *orig[EC_MAX_CHUNKS];
	uint8_t *work[EC_MAX_CHUNKS];
};

static struct ec_spec
spec_of(const char *s)
{
	struct ec_spec spec;

	assert_int_equal(ec_spec_parse(s, &spec), 0);
	return spec;
}

/* Reference parity: a byte loop for xor, a GF(2^8) matrix-vector product for mds. */
static void
reference_parity(const struct ec_spec *s, uint8_t *const *data, uint8_t **parity,
		 uint32_t len)
{
	for (unsigned int i = 0; i < s->m; i++) {
		memset(parity[i], 0, len);
		for (unsigned int j = 0; j < s->k; j++) {
			/* Cauchy: 1 / (x_i + y_j) with x_i = k + i, y_j = j; + is XOR in GF(2^8) */
			uint8_t coef = s->kind == EC_KIND_XOR ? (j % s->m == i) :
				       gf_inv((uint8_t)((s->k + i) ^ j));

			if (coef == 0)
				continue;
			for (uint32_t b = 0; b < len; b++)
				parity[i][b] ^= s->kind == EC_KIND_XOR ? data[j][b] :
						gf_mul(coef, data[j][b]);
		}
	}
}

/*
 * Random data, parity from the codec, checked against the reference. @p misalign shifts
 * every buffer off 64-byte alignment (8 keeps the xor code off ISA-L's aligned path).
 */
static void
chunks_init(struct chunks *ch, const struct ec_codec *c, uint32_t len, unsigned int misalign)
{
	uint8_t *ref[EC_MAX_CHUNKS];
	size_t stride = ((size_t)len + 127) & ~(size_t)63;

	ch->spec = *ec_codec_spec(c);
	ch->n = ch->spec.k + ch->spec.m;
	ch->len = len;
	assert_int_equal(posix_memalign((void **)&ch->mem, 64, stride * ch->n * 3), 0);
	for (unsigned int i = 0; i < ch->n; i++) {
		ch->orig[i] = ch->mem + stride * i + misalign;
		ch->work[i] = ch->mem + stride * (ch->n + i) + misalign;
		ref[i] = ch->mem + stride * (2 * ch->n + i) + misalign;
	}
	for (unsigned int i = 0; i < ch->spec.k; i++)
		for (uint32_t b = 0; b < len; b++)
			ch->orig[i][b] = (uint8_t)rng();
	assert_int_equal(ec_encode(c, (const uint8_t *const *)ch->orig, ch->orig + ch->spec.k,
				   len), 0);
	reference_parity(&ch->spec, ch->orig, ref, len);
	for (unsigned int i = 0; i < ch->spec.m; i++)
		check_chunk(ch->orig[ch->spec.k + i], ref[i], len, ch->spec.k + i);
	for (unsigned int i = 0; i < ch->n; i++)
		memcpy(ch->work[i], ch->orig[i], len);
}

/* Present chunks were never written by any decode. */
static void
chunks_fini(struct chunks *ch, const struct ec_mask *untouched)
{
	for (unsigned int i = 0; i < ch->n; i++)
		if (untouched == NULL || ec_mask_test(untouched, i))
			check_chunk(ch->work[i], ch->orig[i], ch->len, i);
	free(ch->mem);
}

/* Independent capacity rule: mds <= m lost in all; xor <= 1 lost per group. */
static int
expect_decodable(const struct ec_spec *s, const struct ec_mask *present)
{
	unsigned int lost = 0;

	if (s->kind == EC_KIND_MDS) {
		for (unsigned int i = 0; i < s->k + s->m; i++)
			lost += !ec_mask_test(present, i);
		return lost <= s->m;
	}
	for (unsigned int g = 0; g < s->m; g++) {
		lost = !ec_mask_test(present, s->k + g);
		for (unsigned int j = g; j < s->k; j += s->m)
			lost += !ec_mask_test(present, j);
		if (lost >= 2)
			return 0;
	}
	return 1;
}

/*
 * One erasure pattern: missing chunks are overwritten with a sentinel, then decoded. A
 * decodable pattern must rebuild exactly the missing data chunks; any other must be
 * refused with every missing buffer left as it was. Restores work[] afterwards.
 * @return 1 if the pattern was decodable.
 */
static int
check_pattern(struct ec_codec *c, struct chunks *ch, const struct ec_mask *present)
{
	uint8_t *ptr[EC_MAX_CHUNKS];
	int expect = expect_decodable(&ch->spec, present);
	int lost_data = 0, rc;

	for (unsigned int i = 0; i < ch->n; i++) {
		ptr[i] = ch->work[i];
		if (ec_mask_test(present, i))
			continue;
		memset(ch->work[i], SENTINEL, ch->len);
		if (i < ch->spec.k)
			lost_data++;
		else if (i & 1)
			ptr[i] = NULL;	/* missing parity buffers are not needed */
	}
	assert_int_equal(ec_decodable(c, present), expect);
	rc = ec_decode(c, present, ptr, ch->len);
	if (expect) {
		assert_int_equal(rc, lost_data);
		for (unsigned int i = 0; i < ch->spec.k; i++)
			check_chunk(ch->work[i], ch->orig[i], ch->len, i);
	} else {
		assert_int_equal(rc, -EC_E_NOT_DECODABLE);
		for (unsigned int i = 0; i < ch->n; i++) {
			if (ec_mask_test(present, i))
				continue;
			for (uint32_t b = 0; b < ch->len; b++)
				if (ch->work[i][b] != SENTINEL)
					fail_msg("chunk %u byte %u written by a refused decode", i, b);
		}
	}
	for (unsigned int i = 0; i < ch->n; i++)
		if (!ec_mask_test(present, i))
			memcpy(ch->work[i], ch->orig[i], ch->len);
	return expect;
}

static void
test_parse_format(void **state)
{
	static const struct {
		const char *s;
		int rc;
	} bad[] = {
		{ "", -EC_E_SPEC_SYNTAX }, { "mds", -EC_E_SPEC_SYNTAX },
		{ "mds32,8", -EC_E_SPEC_SYNTAX }, { "rs:4,2", -EC_E_SPEC_KIND },
		{ "MDS:4,2", -EC_E_SPEC_KIND }, { "xorr:4,2", -EC_E_SPEC_KIND },
		{ "mds:4", -EC_E_SPEC_SYNTAX }, { "mds:4,", -EC_E_SPEC_SYNTAX },
		{ "mds:,2", -EC_E_SPEC_SYNTAX }, { "mds:4,2x", -EC_E_SPEC_SYNTAX },
		{ "mds:4,2,1", -EC_E_SPEC_SYNTAX }, { "mds: 4,2", -EC_E_SPEC_SYNTAX },
		{ "mds:-4,2", -EC_E_SPEC_SYNTAX }, { "mds:+4,2", -EC_E_SPEC_SYNTAX },
		{ "mds:4;2", -EC_E_SPEC_SYNTAX }, { "mds:4,2 ", -EC_E_SPEC_SYNTAX },
		{ "mds:0,2", -EC_E_K_ZERO }, { "mds:4,0", -EC_E_M_ZERO },
		{ "xor:0,0", -EC_E_K_ZERO }, { "mds:250,6", -EC_E_TOO_MANY_CHUNKS },
		{ "mds:256,1", -EC_E_TOO_MANY_CHUNKS },
		{ "mds:99999999999999999999,1", -EC_E_TOO_MANY_CHUNKS },
		{ "mds:1,4294967297", -EC_E_TOO_MANY_CHUNKS },
		{ "xor:6,4", -EC_E_XOR_K_NOT_MULTIPLE }, { "xor:2,4", -EC_E_XOR_K_NOT_MULTIPLE },
	};
	static const char *const good[] = {
		"mds:32,8", "mds:10,4", "mds:8,2", "mds:1,1", "mds:200,55", "mds:1,254",
		"xor:32,8", "xor:4,2", "xor:170,85", "xor:5,1", "mds:6,3",
	};
	struct ec_spec s = { EC_KIND_XOR, 7, 7 };
	char buf[EC_SPEC_STRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ec_spec_parse(bad[i].s, &s) != bad[i].rc)
			fail_msg("\"%s\": got %s, want %s", bad[i].s,
				 ec_error_name(ec_spec_parse(bad[i].s, &s)), ec_error_name(bad[i].rc));
	}
	assert_int_equal(ec_spec_parse(NULL, &s), -EC_E_SPEC_SYNTAX);
	/* failures leave the output alone */
	assert_int_equal(s.kind, EC_KIND_XOR);
	assert_int_equal(s.k, 7);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(ec_spec_parse(good[i], &s), 0);
		assert_string_equal(ec_spec_format(&s, buf, sizeof(buf)), good[i]);
	}
	assert_int_equal(ec_spec_parse(EC_SPEC_DEFAULT, &s), 0);
	assert_int_equal(s.kind, EC_KIND_MDS);
	assert_int_equal(s.k, 32);
	assert_int_equal(s.m, 8);
	assert_int_equal(ec_spec_parse("mds:007,03", &s), 0);
	assert_string_equal(ec_spec_format(&s, buf, sizeof(buf)), "mds:7,3");
	s.k = 255;
	s.m = 255;
	assert_string_equal(ec_spec_format(&s, buf, sizeof(buf)), "mds:255,255");
}

static void
test_bad_params(void **state)
{
	static const struct ec_spec bad[] = {
		{ 0, 4, 2 }, { 3, 4, 2 }, { EC_KIND_MDS, 0, 2 }, { EC_KIND_MDS, 4, 0 },
		{ EC_KIND_MDS, 250, 6 }, { EC_KIND_XOR, 254, 2 }, { EC_KIND_MDS, UINT_MAX, 2 },
		{ EC_KIND_MDS, 2, UINT_MAX }, { EC_KIND_XOR, 9, 4 },
	};
	static const int want[] = {
		-EC_E_SPEC_KIND, -EC_E_SPEC_KIND, -EC_E_K_ZERO, -EC_E_M_ZERO,
		-EC_E_TOO_MANY_CHUNKS, -EC_E_TOO_MANY_CHUNKS, -EC_E_TOO_MANY_CHUNKS,
		-EC_E_TOO_MANY_CHUNKS, -EC_E_XOR_K_NOT_MULTIPLE,
	};
	static const char *const codes[] = { "mds:4,2", "xor:4,2" };
	struct ec_codec *c = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ec_spec_check(&bad[i]), want[i]);
		assert_int_equal(ec_codec_create(&bad[i], EC_CACHE_DEFAULT, &c), want[i]);
		assert_null(c);
	}
	for (size_t t = 0; t < 2; t++) {
		struct ec_spec s = spec_of(codes[t]);
		uint8_t buf[6][64], *p[6], *par[2], zero[64] = { 0 };
		struct ec_mask all;

		assert_int_equal(ec_codec_create(&s, 0, &c), -EC_E_CACHE_SIZE);
		assert_int_equal(ec_codec_create(&s, EC_CACHE_MAX + 1, &c), -EC_E_CACHE_SIZE);
		assert_null(c);
		assert_int_equal(ec_codec_create(&s, 1, &c), 0);
		memset(buf, 0, sizeof(buf));
		for (int i = 0; i < 6; i++)
			p[i] = buf[i];
		par[0] = p[4];
		par[1] = p[5];
		buf[0][0] = 1;
		/* every rejected call writes nothing */
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, 0), -EC_E_LEN_ZERO);
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, 12), -EC_E_LEN_ALIGN);
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, 1), -EC_E_LEN_ALIGN);
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, 0x80000000u),
				 -EC_E_LEN_TOO_BIG);
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, UINT32_MAX - 7),
				 -EC_E_LEN_TOO_BIG);
		assert_memory_equal(buf[4], zero, 64);
		assert_int_equal(ec_encode_begin(c, par, 60), -EC_E_LEN_ALIGN);
		assert_int_equal(ec_encode_begin(c, par, 0), -EC_E_LEN_ZERO);
		assert_int_equal(ec_encode_update(c, 4, p[0], par, 64), -EC_E_CHUNK_INDEX);
		assert_int_equal(ec_encode_update(c, UINT_MAX, p[0], par, 64), -EC_E_CHUNK_INDEX);
		assert_int_equal(ec_encode_update(c, 0, p[0], par, 4), -EC_E_LEN_ALIGN);
		assert_int_equal(ec_encode_update(c, 0, p[0], par, 0), -EC_E_LEN_ZERO);
		assert_memory_equal(buf[4], zero, 64);
		ec_mask_fill(&all, 6);
		ec_mask_clear(&all, 0);
		assert_int_equal(ec_decode(c, &all, p, 0), -EC_E_LEN_ZERO);
		assert_int_equal(ec_decode(c, &all, p, 20), -EC_E_LEN_ALIGN);
		assert_int_equal(ec_decode(c, &all, p, 0x80000000u), -EC_E_LEN_TOO_BIG);
		assert_int_equal(buf[0][0], 1);
		assert_int_equal(ec_encode(c, (const uint8_t *const *)p, par, 8), 0);
		ec_codec_destroy(c);
		c = NULL;
	}
	ec_codec_destroy(NULL);
}

static void
test_error_messages(void **state)
{
	const char *names[EC_E_END - EC_ERR_BASE];
	int n = 0;

	(void)state;
	assert_string_equal(ec_strerror(0), "success");
	assert_string_equal(ec_error_name(0), "ok");
	assert_string_equal(ec_strerror(-EC_E_TOO_MANY_CHUNKS), "k + m exceeds 255");
	assert_string_equal(ec_error_name(-EC_E_LEN_ALIGN), "len_align");
	for (int e = EC_ERR_BASE; e < EC_E_END; e++) {
		const char *msg = ec_strerror(-e);

		assert_true(e > 133);	/* clear of every errno value */
		assert_non_null(msg);
		assert_true(strlen(msg) > 10);
		assert_null(strchr(msg, '\n'));
		assert_string_not_equal(msg, "unknown error");
		for (int j = 0; j < n; j++)
			assert_string_not_equal(names[j], ec_error_name(-e));
		names[n++] = ec_error_name(-e);
	}
	assert_int_equal(n, EC_E_END - EC_ERR_BASE);
	assert_string_equal(ec_strerror(-EC_E_END), "unknown error");
	assert_string_equal(ec_strerror(-(EC_ERR_BASE - 1)), "unknown error");
	assert_string_equal(ec_strerror(-22), "unknown error");
	assert_string_equal(ec_strerror(5), "unknown error");
	assert_string_equal(ec_error_name(-EC_E_END), "unknown");
}

static void
test_mask(void **state)
{
	struct ec_mask m;

	(void)state;
	ec_mask_fill(&m, 0);
	assert_int_equal(ec_mask_count(&m), 0);
	ec_mask_fill(&m, 64);
	assert_int_equal(m.w[0], UINT64_MAX);
	assert_int_equal(m.w[1], 0);
	ec_mask_fill(&m, 65);
	assert_int_equal(ec_mask_count(&m), 65);
	assert_true(ec_mask_test(&m, 64));
	assert_false(ec_mask_test(&m, 65));
	ec_mask_fill(&m, 255);
	assert_int_equal(ec_mask_count(&m), 255);
	assert_false(ec_mask_test(&m, 255));
	ec_mask_clear(&m, 200);
	assert_false(ec_mask_test(&m, 200));
	assert_int_equal(ec_mask_count(&m), 254);
	ec_mask_set(&m, 200);
	assert_true(ec_mask_test(&m, 200));
	ec_mask_zero(&m);
	assert_int_equal(ec_mask_count(&m), 0);
	ec_mask_fill(&m, 256);
	assert_int_equal(ec_mask_count(&m), 256);
}

/* Encode equals the references for many codes, lengths and alignments. */
static void
test_encode_reference(void **state)
{
	static const char *const codes[] = {
		"mds:4,2", "mds:6,3", "mds:10,4", "mds:8,2", "mds:32,8", "mds:1,1", "mds:3,7",
		"mds:20,13", "xor:4,2", "xor:6,3", "xor:32,8", "xor:5,1", "xor:4,4", "xor:12,3",
	};
	static const uint32_t lens[] = { 8, 24, 1000, 4096, 4104 };

	(void)state;
	for (size_t t = 0; t < sizeof(codes) / sizeof(codes[0]); t++) {
		struct ec_spec s = spec_of(codes[t]);
		struct ec_codec *c;

		assert_int_equal(ec_codec_create(&s, 4, &c), 0);
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			for (unsigned int mis = 0; mis <= 8; mis += 8) {
				struct chunks ch;

				chunks_init(&ch, c, lens[l], mis);	/* checks the parity */
				chunks_fini(&ch, NULL);
			}
		}
		ec_codec_destroy(c);
	}
}

/* Every subset of missing chunks of small codes. */
static void
test_exhaustive_small(void **state)
{
	static const char *const codes[] = { "mds:4,2", "mds:6,3", "xor:4,2", "xor:6,3" };
	static const struct {
		uint32_t len;
		unsigned int misalign;
	} shapes[] = { { 8, 0 }, { 24, 8 }, { 4096, 0 }, { 1000, 0 }, { 4096, 8 } };

	(void)state;
	for (size_t t = 0; t < sizeof(codes) / sizeof(codes[0]); t++) {
		struct ec_spec s = spec_of(codes[t]);

		for (size_t l = 0; l < sizeof(shapes) / sizeof(shapes[0]); l++) {
			unsigned int n = s.k + s.m, ok = 0, refused = 0;
			struct ec_codec *c;
			struct chunks ch;

			/* a cache smaller than the pattern count, so evictions happen too */
			assert_int_equal(ec_codec_create(&s, 16, &c), 0);
			chunks_init(&ch, c, shapes[l].len, shapes[l].misalign);
			for (uint32_t bits = 0; bits < (1u << n); bits++) {
				struct ec_mask present = { { bits, 0, 0, 0 } };

				if (check_pattern(c, &ch, &present))
					ok++;
				else
					refused++;
			}
			/* the whole pattern space, and both outcomes occur */
			assert_int_equal(ok + refused, 1u << n);
			assert_true(ok > 0 && refused > 0);
			if (s.kind == EC_KIND_MDS) {
				unsigned int want = 0;

				for (uint32_t bits = 0; bits < (1u << n); bits++)
					want += n - (unsigned int)__builtin_popcount(bits) <= s.m;
				assert_int_equal(ok, want);
			}
			/* bits above k + m are ignored */
			{
				struct ec_mask present = { { UINT64_MAX, UINT64_MAX, 0, 1 } };

				ec_mask_clear(&present, 0);
				assert_int_equal(check_pattern(c, &ch, &present), 1);
			}
			chunks_fini(&ch, NULL);
			ec_codec_destroy(c);
		}
	}
}

/* Random losses for the default-size codes, with a fixed seed. */
static void
run_random(const char *code, uint32_t len, unsigned int misalign, unsigned int patterns)
{
	struct ec_spec s = spec_of(code);
	unsigned int n = s.k + s.m, ok = 0, refused = 0, max_lost_ok = 0;
	struct ec_codec *c;
	struct chunks ch;

	assert_int_equal(ec_codec_create(&s, EC_CACHE_DEFAULT, &c), 0);
	chunks_init(&ch, c, len, misalign);
	for (unsigned int p = 0; p < patterns; p++) {
		struct ec_mask present;
		unsigned int lost = 0;

		ec_mask_fill(&present, n);
		if (s.kind == EC_KIND_XOR && (p & 1)) {
			/* up to one loss per group: decodable with as many as m losses */
			for (unsigned int g = 0; g < s.m; g++) {
				unsigned int member = rng_below(s.k / s.m + 2);

				if (member <= s.k / s.m) {
					ec_mask_clear(&present, member == s.k / s.m ? s.k + g :
							       g + member * s.m);
					lost++;
				}
			}
		} else {
			unsigned int want = rng_below(s.m + 3);	/* includes m+1, m+2 */

			while (lost < want) {
				unsigned int i = rng_below(n);

				if (ec_mask_test(&present, i)) {
					ec_mask_clear(&present, i);
					lost++;
				}
			}
		}
		if (check_pattern(c, &ch, &present)) {
			ok++;
			if (lost > max_lost_ok)
				max_lost_ok = lost;
		} else {
			refused++;
		}
	}
	assert_true(ok > patterns / 4);
	assert_true(refused > patterns / 20);
	assert_int_equal(max_lost_ok, s.m);
	chunks_fini(&ch, NULL);
	ec_codec_destroy(c);
}

static void
test_random_mds(void **state)
{
	(void)state;
	run_random("mds:32,8", 4096, 0, 2500);
	run_random("mds:32,8", 1048, 8, 500);
}

static void
test_random_xor(void **state)
{
	(void)state;
	run_random("xor:32,8", 4096, 0, 2500);
	run_random("xor:32,8", 1048, 8, 500);
}

/* The largest codes (k + m = 255) encode and decode at full capacity. */
static void
test_largest_codes(void **state)
{
	static const char *const codes[] = { "mds:200,55", "xor:170,85" };

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		struct ec_spec s = spec_of(codes[t]);
		struct ec_mask present;
		struct ec_codec *c;
		struct chunks ch;

		assert_int_equal(ec_codec_create(&s, 1, &c), 0);
		chunks_init(&ch, c, 64, 0);
		ec_mask_fill(&present, s.k + s.m);
		for (unsigned int i = 0; i < s.m; i++)	/* m lost, one per xor group */
			ec_mask_clear(&present, s.kind == EC_KIND_MDS ? 3 * i : i + s.m);
		assert_int_equal(check_pattern(c, &ch, &present), 1);
		ec_mask_clear(&present, s.k + 1);	/* one more: beyond either code */
		assert_int_equal(check_pattern(c, &ch, &present), 0);
		chunks_fini(&ch, NULL);
		ec_codec_destroy(c);
	}
}

/* Folding data chunks in random order gives the one-shot parity. */
static void
test_incremental(void **state)
{
	static const char *const codes[] = {
		"mds:4,2", "mds:32,8", "mds:10,4", "mds:1,1", "mds:20,13",
		"xor:6,3", "xor:32,8", "xor:4,4", "xor:5,1",
	};
	static const uint32_t lens[] = { 8, 1000, 4096 };

	(void)state;
	for (size_t t = 0; t < sizeof(codes) / sizeof(codes[0]); t++) {
		struct ec_spec s = spec_of(codes[t]);
		struct ec_codec *c;

		assert_int_equal(ec_codec_create(&s, 1, &c), 0);
		for (size_t l = 0; l < 3; l++) {
			for (unsigned int mis = 0; mis <= 8; mis += 8) {
				unsigned int order[EC_MAX_CHUNKS];
				struct chunks ch;

				chunks_init(&ch, c, lens[l], mis);
				for (unsigned int i = 0; i < s.k; i++)
					order[i] = i;
				for (unsigned int i = s.k; i > 1; i--) {
					unsigned int j = rng_below(i), tmp = order[i - 1];

					order[i - 1] = order[j];
					order[j] = tmp;
				}
				/* work parity starts as garbage: begin must clear it */
				for (unsigned int i = 0; i < s.m; i++)
					memset(ch.work[s.k + i], SENTINEL, lens[l]);
				assert_int_equal(ec_encode_begin(c, ch.work + s.k, lens[l]), 0);
				for (unsigned int i = 0; i < s.k; i++)
					assert_int_equal(ec_encode_update(c, order[i], ch.orig[order[i]],
									  ch.work + s.k, lens[l]), 0);
				chunks_fini(&ch, NULL);	/* compares work parity with orig */
			}
		}
		ec_codec_destroy(c);
	}
}

/* Decode one pattern given as a list of lost chunks, and check it. */
static void
decode_lost(struct ec_codec *c, struct chunks *ch, const unsigned int *lost, unsigned int n)
{
	struct ec_mask present;

	ec_mask_fill(&present, ch->n);
	for (unsigned int i = 0; i < n; i++)
		ec_mask_clear(&present, lost[i]);
	assert_int_equal(check_pattern(c, ch, &present), 1);
}

static void
assert_stats(const struct ec_codec *c, uint64_t decodes, uint64_t hits, uint64_t misses,
	     uint64_t evictions)
{
	struct ec_stats st;

	ec_codec_stats(c, &st);
	assert_int_equal(st.decodes, decodes);
	assert_int_equal(st.cache_hits, hits);
	assert_int_equal(st.cache_misses, misses);
	assert_int_equal(st.cache_evictions, evictions);
}

/* Heap bytes in use (glibc's count), for what a creation allocates. */
static uint64_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * ec_codec_bytes() is what ec_codec_create() allocates, to within malloc's own rounding,
 * for small and large codes of both kinds: a caller that bounds memory with it (a
 * connection's conn_memory) counts the decode-table cache, the bulk of an mds codec.
 */
static void
test_codec_bytes(void **state)
{
	static const char *const specs[] = { "mds:32,8", "mds:10,4", "mds:8,2", "mds:200,55",
					      "xor:32,8" };
	struct ec_spec bad = { .kind = EC_KIND_MDS, .k = 250, .m = 10 };
	uint64_t a = heap_in_use(), b;
	void *volatile p = malloc(1 << 20);	/* (volatile: kept, not optimised away) */

	(void)state;
	assert_int_equal(ec_codec_bytes(&bad, EC_CACHE_DEFAULT), 0);
	/* an allocator that keeps its own books (a sanitizer's) is not glibc's to count */
	memset((void *)p, 1, 1 << 20);
	b = heap_in_use();
	free((void *)p);
	if (b < a + (1 << 20)) {
		print_message("heap use not measurable here (a sanitizer's allocator): skipped\n");
		return;
	}
	for (unsigned int i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct ec_spec s = spec_of(specs[i]);
		uint64_t want = ec_codec_bytes(&s, EC_CACHE_DEFAULT), got;
		struct ec_codec *c;

		a = heap_in_use();
		assert_int_equal(ec_codec_create(&s, EC_CACHE_DEFAULT, &c), 0);
		got = heap_in_use() - a;
		ec_codec_destroy(c);
		print_message("%s: %" PRIu64 " bytes allocated, %" PRIu64 " counted\n", specs[i],
			      got, want);
		/* no less than it takes, but for malloc's rounding (16 bytes a block, a page for
		 * a mapped one); and not much more */
		assert_true(got <= want + 8 * 4096 && want <= got + got / 50 + 4096);
	}
}

static void
test_cache(void **state)
{
	struct ec_spec s42 = spec_of("mds:4,2"), s63 = spec_of("mds:6,3");
	struct ec_codec *c;
	struct ec_stats st;
	struct chunks ch;
	char buf[256];

	(void)state;
	assert_int_equal(ec_codec_create(&s42, 4, &c), 0);
	chunks_init(&ch, c, 4096, 0);
	assert_stats(c, 0, 0, 0, 0);
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);
	assert_stats(c, 1, 0, 1, 0);			/* first time: a miss */
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);
	assert_stats(c, 2, 1, 1, 0);			/* same pattern: a hit */
	/* chunk 0 and parity 5 lost: same survivors (1, 2, 3, 4), so the same tables */
	decode_lost(c, &ch, (const unsigned int[]){ 0, 5 }, 2);
	assert_stats(c, 3, 2, 1, 0);
	/* only parity lost, or nothing: no tables needed */
	decode_lost(c, &ch, (const unsigned int[]){ 4, 5 }, 2);
	decode_lost(c, &ch, NULL, 0);
	assert_stats(c, 5, 2, 1, 0);
	/* a refused pattern counts apart and touches no table */
	{
		struct ec_mask present;

		ec_mask_fill(&present, 6);
		ec_mask_clear(&present, 0);
		ec_mask_clear(&present, 1);
		ec_mask_clear(&present, 2);
		assert_int_equal(check_pattern(c, &ch, &present), 0);
	}
	assert_stats(c, 5, 2, 1, 0);
	ec_codec_stats(c, &st);
	assert_int_equal(st.not_decodable, 1);
	assert_int_equal(st.rebuilt, 3);
	assert_float_equal(ec_stats_hit_rate(&st), 2.0 / 3.0, 1e-12);
	ec_stats_format(&st, buf, sizeof(buf));
	assert_string_equal(buf, "decodes=5 not_decodable=1 rebuilt=3 cache_hits=2 "
			    "cache_misses=1 cache_evictions=0 hit_rate=0.6667");
	ec_stats_format(&st, buf, 20);		/* truncates, stays terminated */
	assert_true(strlen(buf) < 20);
	chunks_fini(&ch, NULL);
	ec_codec_destroy(c);

	/* least recently used goes first: capacity 2, patterns A B A C A B */
	assert_int_equal(ec_codec_create(&s63, 2, &c), 0);
	chunks_init(&ch, c, 1000, 8);
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);	/* A: miss */
	decode_lost(c, &ch, (const unsigned int[]){ 1 }, 1);	/* B: miss */
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);	/* A: hit */
	decode_lost(c, &ch, (const unsigned int[]){ 2 }, 1);	/* C: miss, evicts B */
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);	/* A: hit */
	assert_stats(c, 5, 2, 3, 1);
	decode_lost(c, &ch, (const unsigned int[]){ 1 }, 1);	/* B: miss, evicts C */
	decode_lost(c, &ch, (const unsigned int[]){ 0 }, 1);	/* A: hit */
	assert_stats(c, 7, 3, 4, 2);
	chunks_fini(&ch, NULL);
	ec_codec_destroy(c);

	/*
	 * More distinct patterns than capacity: every set of 1..3 lost data chunks of mds:6,3
	 * (41 of them), twice round with a 4-entry cache. Cycling through more keys than LRU
	 * holds misses every time; every decode stays correct.
	 */
	for (unsigned int cap = 1; cap <= 4; cap += 3) {
		unsigned int npat = 0;

		assert_int_equal(ec_codec_create(&s63, cap, &c), 0);
		chunks_init(&ch, c, 4096, 0);
		for (int round = 0; round < 2; round++) {
			for (uint32_t bits = 1; bits < 64; bits++) {
				unsigned int lost[6], n = 0;

				if (__builtin_popcount(bits) > 3)
					continue;
				for (unsigned int i = 0; i < 6; i++)
					if (bits & (1u << i))
						lost[n++] = i;
				decode_lost(c, &ch, lost, n);
				npat++;
			}
		}
		assert_int_equal(npat, 82);
		assert_stats(c, 82, 0, 82, 82 - cap);
		/* and the newest entries are still there */
		decode_lost(c, &ch, (const unsigned int[]){ 3, 4, 5 }, 3);
		assert_stats(c, 83, 1, 82, 82 - cap);
		chunks_fini(&ch, NULL);
		ec_codec_destroy(c);
	}

	/* the xor code never uses the cache */
	{
		struct ec_spec sx = spec_of("xor:6,3");

		assert_int_equal(ec_codec_create(&sx, 1, &c), 0);
		chunks_init(&ch, c, 64, 0);
		decode_lost(c, &ch, (const unsigned int[]){ 0, 4 }, 2);
		decode_lost(c, &ch, (const unsigned int[]){ 0, 4 }, 2);
		assert_stats(c, 2, 0, 0, 0);
		chunks_fini(&ch, NULL);
		ec_codec_destroy(c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_error_messages),
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_encode_reference),
		cmocka_unit_test(test_exhaustive_small),
		cmocka_unit_test(test_random_mds),
		cmocka_unit_test(test_random_xor),
		cmocka_unit_test(test_largest_codes),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_codec_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
