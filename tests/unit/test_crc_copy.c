/* SPDX-License-Identifier: BSD-3-Clause */
/* crc_copy(): ISA-L's CRC of the source and a copy of it, for every length, alignment, seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <isa-l/crc.h>

#include "crc_copy.h"
#include "rng.h"

#define GUARD 64
#define MAXLEN (64 * 1024 + 300)

/* One case: the result is ISA-L's, the copy exact, no byte around it written. */
static void
check(const uint8_t *src, uint8_t *buf, size_t len, uint32_t seed, size_t dst_off)
{
	uint8_t *dst = buf + GUARD + dst_off;
	uint32_t want = crc32_gzip_refl(seed, src, len), got;

	memset(buf, 0xA5, GUARD + dst_off + len + GUARD);
	got = crc_copy(seed, dst, src, len);
	if (got != want)
		fail_msg("length %zu, seed %08x, dst +%zu: %08x, ISA-L %08x", len, seed, dst_off,
			 got, want);
	assert_memory_equal(dst, src, len);
	for (size_t i = 0; i < GUARD + dst_off; i++)
		assert_int_equal(buf[i], 0xA5);
	for (size_t i = 0; i < GUARD; i++)
		assert_int_equal(dst[len + i], 0xA5);
}

static void
test_matches_isal(void **state)
{
	uint8_t *src = malloc(MAXLEN + 64), *buf = malloc(MAXLEN + 64 + 2 * GUARD);
	static const size_t big[] = { 4096, 4096 + 4, 8192, 9000, 16384 + 13, 65536, 65536 + 255 };
	struct sdr_rng r;

	(void)state;
	assert_non_null(src);
	assert_non_null(buf);
	sdr_rng_seed(&r, 42);
	for (size_t i = 0; i < MAXLEN + 64; i++)
		src[i] = (uint8_t)sdr_rng_next(&r);
	printf("crc_copy: %s on this CPU\n", crc_copy_fused() ? "one pass" : "CRC then memcpy");
	/* every length through the vector kernel's steps (256, 64, 16 bytes and the rest),
	 * from both sides of its threshold, each with another source and destination offset */
	for (size_t len = 0; len <= 1200; len++)
		check(src + len % 61, buf, len, len % 3 ? (uint32_t)sdr_rng_next(&r) : 0, len % 64);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		for (size_t a = 0; a < 64; a += 7)
			check(src + a, buf, big[i], (uint32_t)sdr_rng_next(&r), 63 - a);
	/* in pieces: the seed carries the CRC of what came before */
	{
		uint8_t *dst = buf + GUARD;
		uint32_t c = 0;

		for (size_t off = 0, n = 1; off < 20000; off += n, n = n * 3 % 701 + 1) {
			if (n > 20000 - off)
				n = 20000 - off;
			c = crc_copy(c, dst + off, src + off, n);
		}
		assert_int_equal(c, crc32_gzip_refl(0, src, 20000));
		assert_memory_equal(dst, src, 20000);
	}
	free(src);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_isal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
