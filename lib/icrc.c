/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 ICRC with ISA-L's chained CRC-32. */
#include <errno.h>
#include <string.h>
#if defined(__aarch64__) && defined(__GNUC__)
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <isa-l/crc.h>

#include "icrc.h"
#include "roce_hdr.h"
#include "simd_clean.h"

#define LRH_ONES_LEN 8

/* Set the variant fields of the IP, UDP and BTH headers at @p h to ones. */
static void
icrc_mask(uint8_t *h, unsigned int ip_version, unsigned int ip_hdr_len)
{
	if (ip_version == 4) {
		struct roce_ipv4_hdr *v4 = (struct roce_ipv4_hdr *)h;

		v4->tos = 0xFF;
		v4->ttl = 0xFF;
		v4->csum = 0xFFFF;
	} else {
		/* keep the version nibble, set traffic class and flow label to ones */
		h[0] |= 0x0F;
		h[1] = 0xFF;
		h[2] = 0xFF;
		h[3] = 0xFF;
		((struct roce_ipv6_hdr *)h)->hop_limit = 0xFF;
	}
	((struct roce_udp_hdr *)(h + ip_hdr_len))->csum = 0xFFFF;
	/* BTH byte 4: FECN, BECN and six reserved bits */
	h[ip_hdr_len + ROCE_UDP_LEN + 4] = 0xFF;
}

/* Copy the IP, UDP and BTH headers behind the 8 ones bytes and set the variant fields. */
static size_t
icrc_pseudo_header(uint8_t *out, const uint8_t *ip, unsigned int ip_version,
		   unsigned int ip_hdr_len)
{
	size_t hlen = ip_hdr_len + ROCE_UDP_LEN + ROCE_BTH_LEN;

	memset(out, 0xFF, LRH_ONES_LEN);
	/* a length the compiler knows is a few vector moves, not a string copy */
	if (ip_hdr_len == ROCE_IPV4_MIN_LEN)
		memcpy(out + LRH_ONES_LEN, ip, ROCE_IPV4_MIN_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN);
	else if (ip_hdr_len == ROCE_IPV6_LEN)
		memcpy(out + LRH_ONES_LEN, ip, ROCE_IPV6_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN);
	else
		memcpy(out + LRH_ONES_LEN, ip, hlen);
	icrc_mask(out + LRH_ONES_LEN, ip_version, ip_hdr_len);
	return LRH_ONES_LEN + hlen;
}

/* ISA-L's CRC, then the vector state cleaned for the caller's code (simd_clean.h). */
static inline uint32_t
crc(uint32_t seed, const void *buf, size_t len)
{
	uint32_t r = crc32_gzip_refl(seed, buf, len);

	sdr_simd_clean();
	return r;
}

/*
 * ISA-L's CRC has a fixed cost per call of about as much as 100 bytes of data, so a short
 * packet is copied whole behind the masked headers and checked in one call; a long one
 * takes two calls (masked headers, then the rest in place).
 */
#define ICRC_ONE_CALL_MAX 256

uint32_t
icrc_begin(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len)
{
	uint8_t buf[LRH_ONES_LEN + ROCE_IPV4_MAX_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN];
	size_t n;

	if (ip_hdr_len > ROCE_IPV4_MAX_LEN)
		ip_hdr_len = ROCE_IPV4_MAX_LEN;	/* callers validate; never overrun buf */
	n = icrc_pseudo_header(buf, ip, ip_version, ip_hdr_len);
	return crc(0, buf, n);
}

uint32_t
icrc_update(uint32_t seed, const void *buf, size_t len)
{
	return crc(seed, buf, len);
}

uint32_t
icrc_compute(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
	     size_t roce_len)
{
	const uint8_t *bth = ip + ip_hdr_len + ROCE_UDP_LEN;
	uint8_t buf[LRH_ONES_LEN + ROCE_IPV4_MAX_LEN + ROCE_UDP_LEN + ICRC_ONE_CALL_MAX];
	size_t n;

	if (roce_len <= ROCE_BTH_LEN)
		return icrc_begin(ip, ip_version, ip_hdr_len);
	if (roce_len > ICRC_ONE_CALL_MAX || ip_hdr_len > ROCE_IPV4_MAX_LEN)
		return icrc_update(icrc_begin(ip, ip_version, ip_hdr_len), bth + ROCE_BTH_LEN,
				   roce_len - ROCE_BTH_LEN);
	n = icrc_pseudo_header(buf, ip, ip_version, ip_hdr_len);
	memcpy(buf + n, bth + ROCE_BTH_LEN, roce_len - ROCE_BTH_LEN);
	return crc(0, buf, n + roce_len - ROCE_BTH_LEN);
}

/* The generic in-place ICRC: the changed bytes saved, set one field at a time, restored. */
static uint32_t
inplace_fields(uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len, size_t len)
{
	uint8_t *start = ip - LRH_ONES_LEN, *udp = ip + ip_hdr_len;
	uint8_t lrh[LRH_ONES_LEN], iph[12], udp_csum[2], bth4;
	uint32_t r;

	memcpy(lrh, start, sizeof(lrh));
	memcpy(iph, ip, sizeof(iph));
	memcpy(udp_csum, udp + 6, sizeof(udp_csum));
	bth4 = udp[ROCE_UDP_LEN + 4];
	memset(start, 0xFF, LRH_ONES_LEN);
	icrc_mask(ip, ip_version, ip_hdr_len);
	r = crc(0, start, len);
	memcpy(start, lrh, sizeof(lrh));
	memcpy(ip, iph, sizeof(iph));
	memcpy(udp + 6, udp_csum, sizeof(udp_csum));
	udp[ROCE_UDP_LEN + 4] = bth4;
	return r;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/*
 * Masking the headers with one vector store per vector load of ISA-L's kernel.
 *
 * ISA-L's first loads read the bytes that were just changed. Stored one field at a time,
 * they cannot be forwarded from the store buffer into one wide load, so the load waits
 * for the stores to reach the cache: 15 to 20 ns per packet on this project's Xeon, a
 * third of the CRC of a 4 KiB payload (the budget for the whole verify is a tenth). A
 * store the load can be forwarded from must cover it: the first 64 bytes are rewritten
 * with stores as wide as the kernel's loads. ISA-L's AVX-512 kernel (chosen when the CPU
 * has AVX-512 and VPCLMULQDQ) reads 64-byte vectors from 256 bytes on, and 16-byte ones
 * below that, as do its older kernels at any length; a mismatch costs as much as the byte
 * stores (measured: 22 against 9 ns per 64-byte payload with a 64-byte store before
 * 16-byte loads).
 *
 * IPv4 starts the CRC at the first byte of the Ethernet header, not 8 bytes before the
 * IP header: a frame in an mbuf starts on a cache line, so every 64-byte load then
 * stays within one line (from 6 bytes further on, each one straddles two: about 3 ns per
 * 4 KiB frame). The 6 bytes in front of the ones are a constant whose CRC-32 is 0, so
 * the register leaves them as it entered them and the result is the ICRC. IPv6 puts the
 * BTH's masked byte past the 64 bytes that way, so it starts at the ones.
 */
#define ICRC_VEC_LEN 64
#define ICRC_ZMM_MIN 256
#define ICRC_V4_BACK (LRH_ONES_LEN + 6)	/* = the Ethernet header */

struct icrc_vec_mask {
	uint8_t keep[ICRC_VEC_LEN];	/* AND-ed with the frame */
	uint8_t set[ICRC_VEC_LEN];	/* then OR-ed in */
	unsigned int back;		/* the bytes in front of the IP header */
};

/* CRC-32(e9 62 b3 50 00 00) = 0 (tests/unit/test_icrc.c checks it) */
#define ICRC_V4_ZERO 0xe9, 0x62, 0xb3, 0x50, 0x00, 0x00
#define V4 ICRC_V4_BACK
#define V6 LRH_ONES_LEN
static const struct icrc_vec_mask mask_v4 __attribute__((aligned(64))) = {
	.keep = { [0 ... V4 - 1] = 0x00, [V4 ... ICRC_VEC_LEN - 1] = 0xFF },
	.set = {
		ICRC_V4_ZERO, [6 ... V4 - 1] = 0xFF,
		[V4 + 1] = 0xFF,				/* TOS */
		[V4 + 8] = 0xFF,				/* TTL */
		[V4 + 10] = 0xFF, [V4 + 11] = 0xFF,		/* header checksum */
		[V4 + ROCE_IPV4_MIN_LEN + 6] = 0xFF,		/* UDP checksum */
		[V4 + ROCE_IPV4_MIN_LEN + 7] = 0xFF,
		[V4 + ROCE_IPV4_MIN_LEN + ROCE_UDP_LEN + 4] = 0xFF,	/* FECN, BECN, rsvd */
	},
	.back = V4,
};
static const struct icrc_vec_mask mask_v6 __attribute__((aligned(64))) = {
	.keep = { [0 ... ICRC_VEC_LEN - 1] = 0xFF },
	.set = {
		[0 ... V6 - 1] = 0xFF,
		[V6] = 0x0F,					/* traffic class, */
		[V6 + 1 ... V6 + 3] = 0xFF,			/* flow label */
		[V6 + 7] = 0xFF,				/* hop limit */
		[V6 + ROCE_IPV6_LEN + 6] = 0xFF,		/* UDP checksum */
		[V6 + ROCE_IPV6_LEN + 7] = 0xFF,
		[V6 + ROCE_IPV6_LEN + ROCE_UDP_LEN + 4] = 0xFF,	/* FECN, BECN, rsvd */
	},
	.back = V6,
};
#undef V4
#undef V6

__attribute__((target("avx512f")))
static uint32_t
inplace_zmm(uint8_t *s, const struct icrc_vec_mask *m, size_t len)
{
	__m512i old = _mm512_loadu_si512(s);
	uint32_t r;

	_mm512_storeu_si512(s, _mm512_or_si512(_mm512_and_si512(old, _mm512_load_si512(m->keep)),
					       _mm512_load_si512(m->set)));
	r = crc32_gzip_refl(0, s, len);
	_mm512_storeu_si512(s, old);
	sdr_simd_clean();
	return r;
}

static uint32_t
inplace_xmm(uint8_t *s, const struct icrc_vec_mask *m, size_t len)
{
	__m128i old[ICRC_VEC_LEN / 16];
	uint32_t r;

	for (unsigned int i = 0; i < ICRC_VEC_LEN / 16; i++) {
		__m128i keep = _mm_load_si128((const __m128i *)(m->keep + 16 * i));
		__m128i set = _mm_load_si128((const __m128i *)(m->set + 16 * i));

		old[i] = _mm_loadu_si128((const __m128i *)(s + 16 * i));
		_mm_storeu_si128((__m128i *)(s + 16 * i), _mm_or_si128(_mm_and_si128(old[i], keep), set));
	}
	r = crc(0, s, len);
	for (unsigned int i = 0; i < ICRC_VEC_LEN / 16; i++)
		_mm_storeu_si128((__m128i *)(s + 16 * i), old[i]);
	return r;
}

/* Whether ISA-L 2.30 dispatches crc32_gzip_refl to its AVX-512 kernel on this CPU. */
static inline int
isal_crc_zmm(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
}

static uint32_t
inplace(uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len, size_t len)
{
	const struct icrc_vec_mask *m = ip_version == 6 ? &mask_v6 :
					ip_hdr_len == ROCE_IPV4_MIN_LEN ? &mask_v4 : NULL;

	/* IPv4 options move the fields; a region shorter than the vector is not all ours */
	if (!m || len - LRH_ONES_LEN + m->back < ICRC_VEC_LEN)
		return inplace_fields(ip, ip_version, ip_hdr_len, len);
	len += m->back - LRH_ONES_LEN;
	if (len >= ICRC_ZMM_MIN && isal_crc_zmm())
		return inplace_zmm(ip - m->back, m, len);
	return inplace_xmm(ip - m->back, m, len);
}
#else
#define inplace inplace_fields
#endif

/*
 * One CRC call over the frame itself: ISA-L's CRC costs about as much as 100 bytes of data
 * per call, and its tail handling for a length that is not a multiple of its fold width
 * about as much again, so two calls (masked headers, then the rest) cost 15 to 20 ns more
 * per packet than one. The bytes the pseudo-header changes (up to 14 before the IP
 * header, the variant fields) are saved, set, and put back before returning.
 */
uint32_t
icrc_compute_inplace(uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
		     size_t roce_len)
{
	return inplace(ip, ip_version, ip_hdr_len,
		       LRH_ONES_LEN + ip_hdr_len + ROCE_UDP_LEN + roce_len);
}

/*
 * icrc_short(): polynomial arithmetic modulo P(x) = 0x104C11DB7 (CRC-32, bit 32 set), in
 * the normal bit order, for the constants; the kernel works bit-reflected.
 */
#define CRC32_P 0x104C11DB7ull

static uint32_t
poly_mulmod(uint32_t a, uint32_t b)
{
	uint64_t r = 0;

	for (int i = 0; i < 32; i++)
		if (b >> i & 1)
			r ^= (uint64_t)a << i;
	for (int i = 63; i >= 32; i--)
		if (r >> i & 1)
			r ^= CRC32_P << (i - 32);
	return (uint32_t)r;
}

/*
 * x^n mod P for any n, by squaring (n reaches 8 times a 64 KiB payload): P has a
 * constant term, so x has an inverse, (P - 1) / x.
 */
static uint32_t
poly_xpow(long n)
{
	uint32_t r = 1, b = n >= 0 ? 2u : (uint32_t)((CRC32_P ^ 1) >> 1);

	for (unsigned long e = n >= 0 ? (unsigned long)n : (unsigned long)-n; e; e >>= 1) {
		if (e & 1)
			r = poly_mulmod(r, b);
		b = poly_mulmod(b, b);
	}
	return r;
}

static uint32_t
bitrev32(uint32_t v)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++)
		r |= (v >> i & 1) << (31 - i);
	return r;
}

/* @p seed continued over @p n zero bytes. */
static uint32_t
crc_after_zeros(uint32_t seed, size_t n)
{
	static const uint8_t zeros[4096];

	while (n > 0) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		seed = crc(seed, zeros, k);
		n -= k;
	}
	return seed;
}

static void
short_init(struct icrc_short *s, size_t len, size_t after)
{
	memset(s, 0, sizeof(*s));
	s->len = (uint16_t)len;
	s->after = (uint32_t)after;
	s->nwords = (uint8_t)((len + 7) / 8);
	/* the affine part: what zero bytes leave, less what the bytes after leave alone */
	s->zeros = crc_after_zeros(0, len + after) ^ crc_after_zeros(0, after);
	s->last_mask = len % 8 ? ~0ull >> (64 - 8 * (len % 8)) : ~0ull;
	/*
	 * Word j holds bytes 8j..8j+7, little-endian: bit-reflected, the 64 coefficients of
	 * W(x) from x^63 down. Its carry-less product with a reflected 32-bit K, read as 128
	 * reflected bits, is W K x^33; the reduction below multiplies by x^32. So a word m =
	 * len + after - 8(j + 1) bytes before the end (negative for a partial last word,
	 * whose missing bytes are zeros that must not count) needs K = x^(8m - 33).
	 */
	for (unsigned int j = 0; j < s->nwords; j++)
		s->k[j] = bitrev32(poly_xpow(8 * ((long)len + (long)after - 8 * ((long)j + 1)) -
					     33));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	s->clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#elif defined(__aarch64__) && defined(__GNUC__)
	s->clmul = after == 0 && (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

int
icrc_short_init(struct icrc_short *s, size_t len)
{
	if (len == 0 || len > ICRC_SHORT_MAX)
		return -EINVAL;
	short_init(s, len, 0);
	return 0;
}

int
icrc_short_init_before(struct icrc_short *s, size_t len, size_t after)
{
	if (len == 0 || len > ICRC_SHORT_MAX || after == 0 || after > (1u << 20))
		return -EINVAL;
	short_init(s, len, after);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (s->clmul)
		return 0;
#endif
	/* arm64's CRC instructions chain through the region: no shorter than chaining on */
	return -ENOTSUP;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/*
 * The 128-bit sum to the CRC register: fold the low 64 bits into the high ones, then 32,
 * then Barrett-reduce, as Intel's "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ" (2009) does for the reflected CRC-32; its constants x^96, x^64 mod P and
 * floor(x^64 / P), P, each as the paper writes them (33 bits, reflected, shifted left one).
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
short_clmul(const struct icrc_short *s, const uint64_t *w, unsigned int first)
{
	const __m128i k4 = _mm_set_epi64x(0, 0x00ccaa009eull), k5 = _mm_set_epi64x(0, 0x0163cd6124ull);
	const __m128i pu = _mm_set_epi64x(0x01f7011641ull, 0x01db710641ull);
	const __m128i lo32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i a = _mm_setzero_si128(), b = _mm_setzero_si128(), x, t;
	unsigned int j;

	/* every product at once; two sums, so the XORs do not chain on one register */
	for (j = first; j + 1 < s->nwords; j += 2) {
		a = _mm_xor_si128(a, _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)w[j]),
							   _mm_cvtsi32_si128((int)s->k[j]), 0x00));
		b = _mm_xor_si128(b, _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)w[j + 1]),
							   _mm_cvtsi32_si128((int)s->k[j + 1]), 0x00));
	}
	if (j < s->nwords)
		a = _mm_xor_si128(a, _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)w[j]),
							   _mm_cvtsi32_si128((int)s->k[j]), 0x00));
	x = _mm_xor_si128(a, b);
	/* 128 -> 96 -> 64 bits */
	x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k4, 0x00));
	x = _mm_xor_si128(_mm_srli_si128(x, 4),
			  _mm_clmulepi64_si128(_mm_and_si128(x, lo32), k5, 0x00));
	/* Barrett: q = (x mod x^32) * floor(x^64 / P), then x - q P */
	t = _mm_clmulepi64_si128(_mm_and_si128(x, lo32), pu, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, lo32), pu, 0x00);
	x = _mm_xor_si128(x, t);
	return (uint32_t)_mm_extract_epi32(x, 1);	/* the linear part: no s->zeros */
}
#endif

#if defined(__aarch64__) && defined(__GNUC__)
/*
 * arm64 has the CRC-32 (IEEE) instructions themselves, 8 bytes each: one chain of 3-cycle
 * steps over the words, which come from registers, so no store has to reach the cache
 * first. (x86's CRC32 instruction is CRC-32C, another polynomial.)
 */
__attribute__((target("+crc")))
static uint32_t
short_crc32(const struct icrc_short *s, const uint64_t *w)
{
	unsigned int full = s->len / 8, rem = s->len % 8;
	uint32_t c = 0xFFFFFFFFu;

	for (unsigned int j = 0; j < full; j++)
		c = __crc32d(c, w[j]);
	if (rem) {
		uint64_t v = w[full];

		if (rem & 4) {
			c = __crc32w(c, (uint32_t)v);
			v >>= 32;
		}
		if (rem & 2) {
			c = __crc32h(c, (uint16_t)v);
			v >>= 16;
		}
		if (rem & 1)
			c = __crc32b(c, (uint8_t)v);
	}
	return ~c;
}
#endif

uint32_t
icrc_short_words(const struct icrc_short *s, const uint64_t *w)
{
	uint8_t buf[ICRC_SHORT_MAX];

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (s->clmul)
		return s->zeros ^ short_clmul(s, w, 0);
#elif defined(__aarch64__) && defined(__GNUC__)
	if (s->clmul)
		return short_crc32(s, w);
#endif
	for (unsigned int i = 0; i < s->len; i++)
		buf[i] = (uint8_t)(w[i / 8] >> (8 * (i % 8)));
	if (s->after)	/* a prepared region that this CPU cannot shift: chained */
		return crc_after_zeros(crc(0, buf, s->len), s->after) ^
		       crc_after_zeros(0, s->after);
	return crc(0, buf, s->len);
}

/* icrc_short_words_from() without carry-less multiplication: the whole region with the
 * first words zero, less what zeros leave. */
static __attribute__((noinline)) uint32_t
short_words_from(const struct icrc_short *s, const uint64_t *w, unsigned int first)
{
	uint64_t z[ICRC_SHORT_MAX / 8] = { 0 };

	for (unsigned int j = first; j < s->nwords; j++)
		z[j] = w[j];
	return icrc_short_words(s, z) ^ s->zeros;
}

uint32_t
icrc_short_words_from(const struct icrc_short *s, const uint64_t *w, unsigned int first)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (s->clmul)
		return short_clmul(s, w, first);
#endif
	return short_words_from(s, w, first);
}

uint32_t
icrc_short(const struct icrc_short *s, const uint8_t *buf)
{
	uint64_t w[ICRC_SHORT_MAX / 8];

	if (!s->clmul && s->after == 0)
		return crc(0, buf, s->len);
	for (unsigned int j = 0; j < s->nwords; j++) {
		w[j] = 0;
		for (unsigned int i = 0; i < 8; i++)	/* one load where the host is little-endian */
			w[j] |= (uint64_t)buf[8 * j + i] << (8 * i);
	}
	w[s->nwords - 1] &= s->last_mask;
	return icrc_short_words(s, w);
}
