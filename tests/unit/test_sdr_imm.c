/* SPDX-License-Identifier: BSD-3-Clause */
/* The SDR immediate: pack/unpack for every valid split, fragments, bad splits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sdr_imm.h"

static void
test_default_layout(void **state)
{
	struct sdr_imm_split s = SDR_IMM_SPLIT_DEFAULT;
	struct sdr_imm_fields f;

	(void)state;
	assert_int_equal(sdr_imm_split_check(&s), 0);
	/* message id in the top 10 bits, offset in the next 18, fragment in the low 4 */
	assert_int_equal(sdr_imm_pack(&s, 0x3FF, 0, 0), 0xFFC00000u);
	assert_int_equal(sdr_imm_pack(&s, 0, 0x3FFFF, 0), 0x003FFFF0u);
	assert_int_equal(sdr_imm_pack(&s, 0, 0, 0xF), 0x0000000Fu);
	assert_int_equal(sdr_imm_pack(&s, 1, 2, 3), (1u << 22) | (2u << 4) | 3u);
	f = sdr_imm_unpack(&s, 0xDEADBEEF);
	assert_int_equal(f.msg_id, 0xDEADBEEF >> 22);
	assert_int_equal(f.pkt_off, (0xDEADBEEF >> 4) & 0x3FFFF);
	assert_int_equal(f.frag, 0xF);
	assert_int_equal(sdr_imm_max_msgs(&s), 1024);
	assert_int_equal(sdr_imm_max_pkts(&s), 262144);
	assert_int_equal(sdr_imm_nfrags(&s), 8);
}

static void
test_every_split_round_trips(void **state)
{
	uint64_t x = 12345;

	(void)state;
	for (int a = 1; a <= 30; a++) {
		for (int b = 1; a + b <= 32 && b <= 30; b++) {
			struct sdr_imm_split s = { (uint8_t)a, (uint8_t)b, (uint8_t)(32 - a - b) };

			if (s.frag_bits > 30)
				continue;
			assert_int_equal(sdr_imm_split_check(&s), 0);
			for (int k = 0; k < 200; k++) {
				uint32_t id, off, fr;
				struct sdr_imm_fields f;

				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				id = (uint32_t)x & (sdr_imm_max_msgs(&s) - 1);
				off = (uint32_t)(x >> 32) & (sdr_imm_max_pkts(&s) - 1);
				fr = s.frag_bits ? (uint32_t)(x >> 20) & ((1u << s.frag_bits) - 1) : 0;
				f = sdr_imm_unpack(&s, sdr_imm_pack(&s, id, off, fr));
				assert_int_equal(f.msg_id, id);
				assert_int_equal(f.pkt_off, off);
				assert_int_equal(f.frag, fr);
			}
		}
	}
}

/* Reassembling the user immediate from the fragments of consecutive packets. */
static void
test_fragments_reassemble(void **state)
{
	static const uint8_t widths[] = { 1, 2, 3, 4, 5, 7, 8, 16 };

	(void)state;
	for (size_t w = 0; w < sizeof(widths); w++) {
		struct sdr_imm_split s = { 8, (uint8_t)(24 - widths[w]), widths[w] };
		uint32_t user = 0xC0FFEE42, got = 0;
		unsigned int n = sdr_imm_nfrags(&s);

		assert_int_equal(sdr_imm_split_check(&s), 0);
		assert_int_equal(n, (32 + widths[w] - 1) / widths[w]);
		for (uint32_t off = 100; off < 100 + n; off++) {
			uint32_t fr = sdr_imm_frag_of(&s, user, off);

			got |= (uint32_t)((uint64_t)fr << ((off % n) * s.frag_bits));
		}
		assert_int_equal(got, user);
	}
}

static void
test_bad_splits(void **state)
{
	struct sdr_imm_split s = SDR_IMM_SPLIT_DEFAULT, out = { 0, 0, 0 };
	static const char *const bad[] = { "10,18,5", "0,28,4", "10,0,22", "31,1,0", "a,b,c",
					   "10,18", "10,18,4,0", "10,18,4x", "-1,29,4", "", "300,0,0" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sdr_imm_split_parse(bad[i], &out), -EINVAL);
	assert_int_equal(out.id_bits, 0);	/* untouched on error */
	assert_int_equal(sdr_imm_split_parse("8,22,2", &out), 0);
	assert_int_equal(out.id_bits, 8);
	assert_int_equal(out.off_bits, 22);
	assert_int_equal(out.frag_bits, 2);
	assert_int_equal(sdr_imm_split_parse("12,20,0", &out), 0);
	assert_int_equal(sdr_imm_nfrags(&out), 0);
	assert_int_equal(sdr_imm_frag_of(&out, 0xFFFFFFFF, 3), 0);
	s.frag_bits = 5;
	assert_int_equal(sdr_imm_split_check(&s), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_layout),
		cmocka_unit_test(test_every_split_round_trips),
		cmocka_unit_test(test_fragments_reassemble),
		cmocka_unit_test(test_bad_splits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
