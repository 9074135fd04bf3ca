/* SPDX-License-Identifier: BSD-3-Clause */
/* The opcode table: every RC/UC/UD opcode of IBA table 38 with its headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "roce_hdr.h"
#include "roce_opcode.h"

static void
test_known_opcodes(void **state)
{
	static const struct {
		uint8_t op;
		const char *name;
		uint8_t ext_len;
		uint8_t payload;
	} want[] = {
		{ 0x00, "RC_SEND_FIRST", 0, 1 },
		{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", 4, 1 },
		{ 0x06, "RC_RDMA_WRITE_FIRST", 16, 1 },
		{ 0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 20, 1 },
		{ 0x0C, "RC_RDMA_READ_REQUEST", 16, 0 },
		{ 0x0D, "RC_RDMA_READ_RESPONSE_FIRST", 4, 1 },
		{ 0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, 1 },
		{ 0x11, "RC_ACKNOWLEDGE", 4, 0 },
		{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", 12, 0 },
		{ 0x13, "RC_COMPARE_SWAP", 28, 0 },
		{ 0x14, "RC_FETCH_ADD", 28, 0 },
		{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", 4, 1 },
		{ 0x24, "UC_SEND_ONLY", 0, 1 },
		{ 0x2A, "UC_RDMA_WRITE_ONLY", 16, 1 },
		{ 0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 20, 1 },
		{ 0x64, "UD_SEND_ONLY", 8, 1 },
		{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", 12, 1 },
		{ 0x81, "CNP", 16, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct roce_opcode_info *info = roce_opcode_info(want[i].op);

		assert_non_null(info->name);
		assert_string_equal(info->name, want[i].name);
		assert_int_equal(info->ext_len, want[i].ext_len);
		assert_int_equal(info->payload, want[i].payload);
	}
}

static void
test_counts_and_unknown(void **state)
{
	int rc = 0, uc = 0, ud = 0, known = 0;

	(void)state;
	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode_info((uint8_t)op);

		if (info->name == NULL) {
			assert_string_equal(roce_opcode_name((uint8_t)op), "UNKNOWN");
			continue;
		}
		known++;
		rc += info->transport == ROCE_TRANSPORT_RC;
		uc += info->transport == ROCE_TRANSPORT_UC;
		ud += info->transport == ROCE_TRANSPORT_UD;
	}
	assert_int_equal(rc, 23);	/* 0x00-0x14, 0x16, 0x17 */
	assert_int_equal(uc, 12);	/* 0x20-0x2B */
	assert_int_equal(ud, 2);	/* 0x64, 0x65 */
	assert_int_equal(known, 38);	/* plus CNP */
	assert_null(roce_opcode_info(0x15)->name);
	assert_null(roce_opcode_info(0x2C)->name);
	assert_null(roce_opcode_info(0xFF)->name);
}

static void
test_ext_offsets_follow_wire_order(void **state)
{
	(void)state;
	/* RETH then ImmDt */
	assert_int_equal(roce_ext_offset(roce_opcode_info(0x2B), ROCE_EXT_RETH), 0);
	assert_int_equal(roce_ext_offset(roce_opcode_info(0x2B), ROCE_EXT_IMMDT), 16);
	/* DETH then ImmDt */
	assert_int_equal(roce_ext_offset(roce_opcode_info(0x65), ROCE_EXT_IMMDT), 8);
	/* AETH then AtomicAckETH */
	assert_int_equal(roce_ext_offset(roce_opcode_info(0x12), ROCE_EXT_ATOMICACKETH), 4);
	assert_int_equal(roce_ext_offset(roce_opcode_info(0x24), ROCE_EXT_RETH), -1);
	/* every ext_len is the sum of its headers */
	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode_info((uint8_t)op);
		unsigned int sum = 0;

		for (int b = 0; b < ROCE_EXT_COUNT; b++)
			if (info->ext & (1u << b))
				sum += roce_ext_len((enum roce_ext)(1u << b));
		assert_int_equal(sum, info->ext_len);
	}
	assert_string_equal(roce_ext_name(ROCE_EXT_RETH), "reth");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_opcodes),
		cmocka_unit_test(test_counts_and_unknown),
		cmocka_unit_test(test_ext_offsets_follow_wire_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
