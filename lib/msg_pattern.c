/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test message pattern (see msg_pattern.h).
 *
 * The test traffic fills and checks every byte of every message on the dataplane's own
 * lcore, so these loops run beside the packet path and take from its budget. Word i is
 * base ^ i * K: the product advances by K from one word to the next, so the loops carry it
 * as a sum and work 64 bytes at a time in four 16-byte vectors (GCC's vector extensions:
 * SSE2 on x86-64, NEON on arm64; no intrinsics). A mismatch is looked for once per KiB,
 * so a message checks at about the speed of reading it (3x the word-by-word loop).
 */
#include <string.h>

#include "msg_pattern.h"

#define PAT_MUL 0x9E3779B97F4A7C15ull	/* sdr_pattern_word()'s position factor */

typedef uint64_t pat_v2 __attribute__((vector_size(16)));

void
sdr_pattern_fill(uint8_t *p, uint64_t off, uint64_t len, uint64_t seed, uint64_t msg)
{
	const uint64_t base = sdr_pattern_base(seed, msg), end = off + len;
	uint64_t i = off, k = (off / 8) * PAT_MUL, w;
	const pat_v2 b = { base, base }, step = { 8 * PAT_MUL, 8 * PAT_MUL };
	pat_v2 k0 = { k, k + PAT_MUL }, k1 = k0 + 2 * PAT_MUL, k2 = k0 + 4 * PAT_MUL,
	       k3 = k0 + 6 * PAT_MUL, x;

	for (; i + 64 <= end; i += 64) {
		x = b ^ k0;
		memcpy(p + i, &x, 16);
		x = b ^ k1;
		memcpy(p + i + 16, &x, 16);
		x = b ^ k2;
		memcpy(p + i + 32, &x, 16);
		x = b ^ k3;
		memcpy(p + i + 48, &x, 16);
		k0 += step;
		k1 += step;
		k2 += step;
		k3 += step;
	}
	for (k = k0[0]; i + 8 <= end; i += 8, k += PAT_MUL) {
		w = base ^ k;
		memcpy(p + i, &w, 8);
	}
	w = base ^ k;
	memcpy(p + i, &w, end - i);
}

int
sdr_pattern_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t msg)
{
	const uint64_t base = sdr_pattern_base(seed, msg);
	uint64_t i = 0, k, w;
	const pat_v2 b = { base, base }, step = { 8 * PAT_MUL, 8 * PAT_MUL };
	pat_v2 k0 = { 0, PAT_MUL }, k1 = k0 + 2 * PAT_MUL, k2 = k0 + 4 * PAT_MUL,
	       k3 = k0 + 6 * PAT_MUL, d0 = { 0, 0 }, d1 = d0, d2 = d0, d3 = d0, x0, x1, x2, x3;

	for (; i + 64 <= len; i += 64) {
		memcpy(&x0, p + i, 16);
		memcpy(&x1, p + i + 16, 16);
		memcpy(&x2, p + i + 32, 16);
		memcpy(&x3, p + i + 48, 16);
		/* the bits that differ, gathered */
		d0 |= x0 ^ b ^ k0;
		d1 |= x1 ^ b ^ k1;
		d2 |= x2 ^ b ^ k2;
		d3 |= x3 ^ b ^ k3;
		k0 += step;
		k1 += step;
		k2 += step;
		k3 += step;
		if ((i & 1023) == 1024 - 64) {
			d0 |= d1 | d2 | d3;
			if (d0[0] | d0[1])
				return 0;
		}
	}
	d0 |= d1 | d2 | d3;
	if (d0[0] | d0[1])
		return 0;
	for (k = k0[0]; i + 8 <= len; i += 8, k += PAT_MUL) {
		memcpy(&w, p + i, 8);
		if (w != (base ^ k))
			return 0;
	}
	w = base ^ k;
	return memcmp(p + i, &w, len - i) == 0;
}
