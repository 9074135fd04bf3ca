/* SPDX-License-Identifier: BSD-3-Clause */
/* The test message pattern: fill and check against sdr_pattern_word(), word by word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "msg_pattern.h"

#define AREA 4096

/* The pattern as msg_pattern.h defines it, one word at a time. */
static void
slow_fill(uint8_t *p, uint64_t off, uint64_t len, uint64_t seed, uint64_t msg)
{
	for (uint64_t i = off; i < off + len; i++) {
		uint64_t w = sdr_pattern_word(seed, msg, i / 8);

		memcpy(p + i, (const uint8_t *)&w + i % 8, 1);
	}
}

/* Every length up to 2 KiB (both loops and the tail), every word offset up to 256: the same
 * bytes as the definition, and nothing written outside [off, off + len). */
static void
test_fill_is_the_definition(void **state)
{
	static uint8_t a[AREA], b[AREA];

	(void)state;
	for (uint64_t seed = 0; seed < 3; seed++)
		for (uint64_t off = 0; off <= 256; off += 8)
			for (uint64_t len = 0; len <= 2048; len += off % 16 ? 13 : 1) {
				memset(a, 0xA5, sizeof(a));
				memset(b, 0xA5, sizeof(b));
				sdr_pattern_fill(a, off, len, seed, 1000 + len);
				slow_fill(b, off, len, seed, 1000 + len);
				assert_memory_equal(a, b, sizeof(a));
			}
}

/* A filled message checks; one flipped bit anywhere, or another message's bytes, does not. */
static void
test_check_finds_every_flip(void **state)
{
	static uint8_t a[AREA];
	const uint64_t lens[] = { 0, 1, 7, 8, 63, 64, 65, 1023, 1024, 1025, 2047, 4096 };

	(void)state;
	for (unsigned int l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		uint64_t len = lens[l];

		sdr_pattern_fill(a, 0, len, 7, 42);
		assert_true(sdr_pattern_check(a, len, 7, 42));
		if (len == 0)
			continue;
		/* (every byte depends on the message number: one byte matches 1 time in 256) */
		if (len >= 2)
			assert_false(sdr_pattern_check(a, len, 7, 43));
		assert_false(sdr_pattern_check(a, len, 8, 42));
		for (uint64_t i = 0; i < len; i++) {
			uint8_t bit = (uint8_t)(1u << (i % 8));

			a[i] ^= bit;
			assert_false(sdr_pattern_check(a, len, 7, 42));
			a[i] ^= bit;
		}
		assert_true(sdr_pattern_check(a, len, 7, 42));
	}
}

/* A message filled in pieces (as a resend or a partial write would) is the whole message. */
static void
test_fill_in_pieces(void **state)
{
	static uint8_t a[AREA], b[AREA];

	(void)state;
	sdr_pattern_fill(a, 0, AREA, 3, 9);
	memset(b, 0, sizeof(b));
	sdr_pattern_fill(b, 0, 1000, 3, 9);
	sdr_pattern_fill(b, 1000, 24, 3, 9);
	sdr_pattern_fill(b, 1024, AREA - 1024, 3, 9);
	assert_memory_equal(a, b, sizeof(a));
	assert_true(sdr_pattern_check(b, AREA, 3, 9));
}

/*
 * Another message's bytes never pass for a message's, whatever its distance in number (slot
 * reuse: 1024, the old 2^24 period, a 32-bit wrap), even over a 5-byte tail: a buffer that
 * kept a stale message's bytes, or got another's, fails. The immediates differ as widely,
 * also in the 4 low bits a one-packet message carries.
 */
static void
test_other_messages_differ(void **state)
{
	static const uint64_t dist[] = { 1, 2, 255, 256, 1024, 1ull << 24, 1ull << 32,
					 1ull << 40 };
	uint8_t a[13];
	unsigned int low = 0;

	(void)state;
	for (uint64_t n = 0; n < 64; n++) {
		sdr_pattern_fill(a, 0, sizeof(a), 1, n);
		for (unsigned int d = 0; d < sizeof(dist) / sizeof(dist[0]); d++) {
			/* the whole of it, and its 5-byte tail (a partial word) alone */
			assert_false(sdr_pattern_check(a, sizeof(a), 1, n + dist[d]));
			{
				uint8_t b[13];

				sdr_pattern_fill(b, 0, sizeof(b), 1, n + dist[d]);
				assert_memory_not_equal(a + 8, b + 8, 5);
			}
			assert_int_not_equal(sdr_pattern_imm(1, n), sdr_pattern_imm(1, n + dist[d]));
		}
		low |= 1u << (sdr_pattern_imm(1, n) & 0xF);
	}
	assert_true(__builtin_popcount(low) >= 8);	/* the low 4 bits vary with n */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_is_the_definition),
		cmocka_unit_test(test_check_finds_every_flip),
		cmocka_unit_test(test_fill_in_pieces),
		cmocka_unit_test(test_other_messages_differ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
