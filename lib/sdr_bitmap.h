/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Plain bit arrays over 64-bit words, for packet and chunk bitmaps. DPDK's rte_bitmap is
 * a two-level structure tuned for scanning sparse sets and needs EAL headers; SDR bitmaps
 * are dense, small (a few thousand bits per message) and read by position, so lib/ keeps
 * this minimal inline set.
 */
#ifndef SDR_BITMAP_H
#define SDR_BITMAP_H

#include <stdint.h>
#include <string.h>

#define SDR_BITMAP_WORDS(nbits) (((nbits) + 63u) / 64u)

static inline int
sdr_bit_test(const uint64_t *w, uint32_t i)
{
	return (int)((w[i >> 6] >> (i & 63)) & 1u);
}

static inline void
sdr_bit_set(uint64_t *w, uint32_t i)
{
	w[i >> 6] |= 1ull << (i & 63);
}

static inline void
sdr_bit_clear(uint64_t *w, uint32_t i)
{
	w[i >> 6] &= ~(1ull << (i & 63));
}

/** Set bit i; return 1 if it was clear before. */
static inline int
sdr_bit_test_and_set(uint64_t *w, uint32_t i)
{
	uint64_t m = 1ull << (i & 63), old = w[i >> 6];

	w[i >> 6] = old | m;
	return !(old & m);
}

static inline void
sdr_bitmap_zero(uint64_t *w, uint32_t nbits)
{
	memset(w, 0, SDR_BITMAP_WORDS(nbits) * sizeof(uint64_t));
}

/** Number of set bits among the first @p nbits. */
static inline uint32_t
sdr_bitmap_count(const uint64_t *w, uint32_t nbits)
{
	uint32_t n = 0, full = nbits / 64;

	for (uint32_t i = 0; i < full; i++)
		n += (uint32_t)__builtin_popcountll(w[i]);
	if (nbits & 63)
		n += (uint32_t)__builtin_popcountll(w[full] & ((1ull << (nbits & 63)) - 1));
	return n;
}

/** Index of the first clear bit at or after @p from, or @p nbits if all are set. */
static inline uint32_t
sdr_bitmap_next_zero(const uint64_t *w, uint32_t from, uint32_t nbits)
{
	uint32_t i = from;

	while (i < nbits) {
		uint64_t inv = ~w[i >> 6] >> (i & 63);

		if (inv != 0) {
			i += (uint32_t)__builtin_ctzll(inv);
			return i < nbits ? i : nbits;
		}
		i = (i | 63) + 1;
	}
	return nbits;
}

/** Index of the first set bit at or after @p from, or @p nbits if none. */
static inline uint32_t
sdr_bitmap_next_set(const uint64_t *w, uint32_t from, uint32_t nbits)
{
	uint32_t i = from;

	while (i < nbits) {
		uint64_t v = w[i >> 6] >> (i & 63);

		if (v != 0) {
			i += (uint32_t)__builtin_ctzll(v);
			return i < nbits ? i : nbits;
		}
		i = (i | 63) + 1;
	}
	return nbits;
}

/** Copy @p nbits bits starting at bit @p from of @p src into @p dst (bit 0 onwards). */
static inline void
sdr_bitmap_extract(uint64_t *dst, const uint64_t *src, uint32_t from, uint32_t nbits)
{
	sdr_bitmap_zero(dst, nbits);
	for (uint32_t i = 0; i < nbits; i++)
		if (sdr_bit_test(src, from + i))
			sdr_bit_set(dst, i);
}

#endif /* SDR_BITMAP_H */
