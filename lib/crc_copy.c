/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 while copying. Why not a library: ISA-L (and zlib, and DPDK's rte_net_crc) compute
 * the CRC of a buffer and nothing else, so a receiver that checks a frame's CRC and copies
 * its payload reads the bytes twice; the receive budget (docs/benchmarks.md) is set against
 * exactly those two passes. This is the folding method of ISA-L's and zlib's kernels
 * (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", Intel
 * 2009) with a store of every block it loads.
 *
 * Every 16 bytes of the state hold a 128-bit remainder of the message so far; a lane is
 * carried D bits further on by two carry-less multiplies with x^(D+32) and x^(D-32) mod P
 * (bit-reflected, as the CRC is), then XORed with the data there. Four 64-byte registers
 * fold 256 bytes per step; what is left folds into one register, its four lanes into one,
 * 16 bytes at a time into that, and the last 128 bits reduce to 32 by Barrett's method.
 */
#include <string.h>

#include <isa-l/crc.h>

#include "crc_copy.h"
#include "simd_clean.h"

/* the two calls (and the tail of the vector kernel, under 16 bytes) */
static uint32_t
crc_then_copy(uint32_t seed, void *dst, const void *src, size_t len)
{
	uint32_t r = crc32_gzip_refl(seed, src, len);

	sdr_simd_clean();
	memcpy(dst, src, len);
	return r;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/*
 * Fold constants, (x^(D+32) mod P, x^(D-32) mod P), each bit-reflected to 32 bits and
 * shifted left by one, P the CRC-32 polynomial 0x104C11DB7: for D = 2048, 512, 384, 256
 * and 128 bits (tests/unit/test_crc_copy.c holds the results to ISA-L's at every length).
 */
#define K2048_LO 0x11542778aull
#define K2048_HI 0x1322d1430ull
#define K512_LO 0x154442bd4ull
#define K512_HI 0x1c6e41596ull
#define K384_LO 0x03db1ecdcull
#define K384_HI 0x174359406ull
#define K256_LO 0x0f1da05aaull
#define K256_HI 0x15a546366ull
#define K128_LO 0x1751997d0ull
#define K128_HI 0x0ccaa009eull
#define K64 0x163cd6124ull	/* x^64 mod P, the same way: 128 to 64 bits */
#define P_REFL 0x1db710641ull	/* P, reflected, for Barrett's reduction */
#define MU_REFL 0x1f7011641ull	/* floor(x^64 / P), reflected */

#define TGT __attribute__((target("avx512f,avx512bw,vpclmulqdq,pclmul,sse4.1")))

TGT static inline __m512i
fold512(__m512i x, __m512i k, __m512i data)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

TGT static inline __m128i
fold128(__m128i x, __m128i k, __m128i data)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), data);
}

TGT static uint32_t
crc_copy_vec(uint32_t seed, uint8_t *dst, const uint8_t *src, size_t len)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K2048_HI, K2048_LO));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K512_HI, K512_LO));
	const __m128i k128 = _mm_set_epi64x(K128_HI, K128_LO);
	const __m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m512i x0, x1, x2, x3;
	__m128i a, b;
	size_t off;

	x0 = _mm512_loadu_si512(src);
	x1 = _mm512_loadu_si512(src + 64);
	x2 = _mm512_loadu_si512(src + 128);
	x3 = _mm512_loadu_si512(src + 192);
	_mm512_storeu_si512(dst, x0);
	_mm512_storeu_si512(dst + 64, x1);
	_mm512_storeu_si512(dst + 128, x2);
	_mm512_storeu_si512(dst + 192, x3);
	/* the register starts as ~seed (ISA-L's convention: seed is the CRC before) */
	x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~seed)));
	for (off = 256; off + 256 <= len; off += 256) {
		__m512i d0 = _mm512_loadu_si512(src + off), d1 = _mm512_loadu_si512(src + off + 64);
		__m512i d2 = _mm512_loadu_si512(src + off + 128);
		__m512i d3 = _mm512_loadu_si512(src + off + 192);

		_mm512_storeu_si512(dst + off, d0);
		_mm512_storeu_si512(dst + off + 64, d1);
		_mm512_storeu_si512(dst + off + 128, d2);
		_mm512_storeu_si512(dst + off + 192, d3);
		x0 = fold512(x0, k2048, d0);
		x1 = fold512(x1, k2048, d1);
		x2 = fold512(x2, k2048, d2);
		x3 = fold512(x3, k2048, d3);
	}
	/* four registers into one: each is 512 bits before the next */
	x1 = fold512(x0, k512, x1);
	x2 = fold512(x1, k512, x2);
	x3 = fold512(x2, k512, x3);
	for (; off + 64 <= len; off += 64) {
		__m512i d = _mm512_loadu_si512(src + off);

		_mm512_storeu_si512(dst + off, d);
		x3 = fold512(x3, k512, d);
	}
	/* its four lanes into one: 384, 256 and 128 bits before the last */
	a = fold128(_mm512_extracti32x4_epi32(x3, 0), _mm_set_epi64x(K384_HI, K384_LO),
		    _mm512_extracti32x4_epi32(x3, 3));
	a = fold128(_mm512_extracti32x4_epi32(x3, 1), _mm_set_epi64x(K256_HI, K256_LO), a);
	a = fold128(_mm512_extracti32x4_epi32(x3, 2), k128, a);
	for (; off + 16 <= len; off += 16) {
		__m128i d = _mm_loadu_si128((const __m128i *)(src + off));

		_mm_storeu_si128((__m128i *)(dst + off), d);
		a = fold128(a, k128, d);
	}
	/* 128 bits to 64, to 32 (Barrett) */
	b = _mm_clmulepi64_si128(a, k128, 0x10);
	a = _mm_xor_si128(_mm_srli_si128(a, 8), b);
	b = _mm_srli_si128(a, 4);
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, mask32),
					       _mm_set_epi64x(0, K64), 0x00), b);
	b = _mm_and_si128(a, mask32);
	b = _mm_clmulepi64_si128(b, _mm_set_epi64x(MU_REFL, P_REFL), 0x10);
	b = _mm_and_si128(b, mask32);
	b = _mm_clmulepi64_si128(b, _mm_set_epi64x(MU_REFL, P_REFL), 0x00);
	a = _mm_xor_si128(a, b);
	seed = ~(uint32_t)_mm_extract_epi32(a, 1);
	if (off < len)	/* under 16 bytes left */
		return crc_then_copy(seed, dst + off, src + off, len - off);
	return seed;
}

static int
vec_ok(void)
{
	static int ok = -1;

	if (ok < 0)
		ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		     __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
		     __builtin_cpu_supports("sse4.1");
	return ok;
}

uint32_t
crc_copy(uint32_t seed, void *dst, const void *src, size_t len)
{
	uint32_t r;

	if (len < CRC_COPY_MIN || !vec_ok())
		return crc_then_copy(seed, dst, src, len);
	r = crc_copy_vec(seed, dst, src, len);
	sdr_simd_clean();
	return r;
}

int
crc_copy_fused(void)
{
	return vec_ok();
}

#else	/* no vector kernel here: the two calls */

uint32_t
crc_copy(uint32_t seed, void *dst, const void *src, size_t len)
{
	return crc_then_copy(seed, dst, src, len);
}

int
crc_copy_fused(void)
{
	return 0;
}

#endif
