/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCEv2 opcode table (IBA 1.4 table 38, and the RoCEv2 CNP of annex A17). */
#include <stddef.h>

#include "roce_opcode.h"
#include "roce_hdr.h"

#define D	ROCE_EXT_DETH
#define R	ROCE_EXT_RETH
#define AT	ROCE_EXT_ATOMICETH
#define A	ROCE_EXT_AETH
#define AA	ROCE_EXT_ATOMICACKETH
#define I	ROCE_EXT_IMMDT
#define IE	ROCE_EXT_IETH
#define CP	ROCE_EXT_CNP_PAD

/* Lengths derived from the extension mask at compile time. */
#define LEN(m) ((((m) & D) ? ROCE_DETH_LEN : 0) + (((m) & R) ? ROCE_RETH_LEN : 0) + \
	(((m) & AT) ? ROCE_ATOMICETH_LEN : 0) + (((m) & A) ? ROCE_AETH_LEN : 0) + \
	(((m) & AA) ? ROCE_ATOMICACKETH_LEN : 0) + (((m) & I) ? ROCE_IMMDT_LEN : 0) + \
	(((m) & IE) ? ROCE_IETH_LEN : 0) + (((m) & CP) ? ROCE_CNP_PAD_LEN : 0))

/* Headers follow the BTH in bit order, so a header's offset is the length of those below it. */
#define OFFS(m) { LEN((m) & 0x00), LEN((m) & 0x01), LEN((m) & 0x03), LEN((m) & 0x07), \
		  LEN((m) & 0x0F), LEN((m) & 0x1F), LEN((m) & 0x3F), LEN((m) & 0x7F) }

#define OP(code, tr, nm, m, pay) \
	[code] = { .name = #tr "_" nm, .transport = ROCE_TRANSPORT_##tr, .ext = (m), \
		   .ext_len = LEN(m), .payload = (pay), .ext_off = OFFS(m) }

#define RC_UC_COMMON(base, tr) \
	OP(base + 0x00, tr, "SEND_FIRST", 0, 1), \
	OP(base + 0x01, tr, "SEND_MIDDLE", 0, 1), \
	OP(base + 0x02, tr, "SEND_LAST", 0, 1), \
	OP(base + 0x03, tr, "SEND_LAST_WITH_IMMEDIATE", I, 1), \
	OP(base + 0x04, tr, "SEND_ONLY", 0, 1), \
	OP(base + 0x05, tr, "SEND_ONLY_WITH_IMMEDIATE", I, 1), \
	OP(base + 0x06, tr, "RDMA_WRITE_FIRST", R, 1), \
	OP(base + 0x07, tr, "RDMA_WRITE_MIDDLE", 0, 1), \
	OP(base + 0x08, tr, "RDMA_WRITE_LAST", 0, 1), \
	OP(base + 0x09, tr, "RDMA_WRITE_LAST_WITH_IMMEDIATE", I, 1), \
	OP(base + 0x0A, tr, "RDMA_WRITE_ONLY", R, 1), \
	OP(base + 0x0B, tr, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", R | I, 1)

static const struct roce_opcode_info opcode_table[256] = {
	RC_UC_COMMON(0x00, RC),
	OP(0x0C, RC, "RDMA_READ_REQUEST", R, 0),
	OP(0x0D, RC, "RDMA_READ_RESPONSE_FIRST", A, 1),
	OP(0x0E, RC, "RDMA_READ_RESPONSE_MIDDLE", 0, 1),
	OP(0x0F, RC, "RDMA_READ_RESPONSE_LAST", A, 1),
	OP(0x10, RC, "RDMA_READ_RESPONSE_ONLY", A, 1),
	OP(0x11, RC, "ACKNOWLEDGE", A, 0),
	OP(0x12, RC, "ATOMIC_ACKNOWLEDGE", A | AA, 0),
	OP(0x13, RC, "COMPARE_SWAP", AT, 0),
	OP(0x14, RC, "FETCH_ADD", AT, 0),
	OP(0x16, RC, "SEND_LAST_WITH_INVALIDATE", IE, 1),
	OP(0x17, RC, "SEND_ONLY_WITH_INVALIDATE", IE, 1),
	RC_UC_COMMON(0x20, UC),
	OP(0x64, UD, "SEND_ONLY", D, 1),
	OP(0x65, UD, "SEND_ONLY_WITH_IMMEDIATE", D | I, 1),
	[ROCE_OP_CNP] = { .name = "CNP", .transport = ROCE_TRANSPORT_CNP, .ext = CP,
			  .ext_len = LEN(CP), .payload = 0, .ext_off = OFFS(CP) },
};

/* Extension headers by bit number of enum roce_ext (= wire order). */
static const struct {
	uint8_t len;
	const char *name;
} ext_info[ROCE_EXT_COUNT] = {
	{ ROCE_DETH_LEN, "deth" },
	{ ROCE_RETH_LEN, "reth" },
	{ ROCE_ATOMICETH_LEN, "atomiceth" },
	{ ROCE_AETH_LEN, "aeth" },
	{ ROCE_ATOMICACKETH_LEN, "atomicacketh" },
	{ ROCE_IMMDT_LEN, "immdt" },
	{ ROCE_IETH_LEN, "ieth" },
	{ ROCE_CNP_PAD_LEN, "cnp_pad" },
};

const struct roce_opcode_info *
roce_opcode_info(uint8_t opcode)
{
	return &opcode_table[opcode];
}

const char *
roce_opcode_name(uint8_t opcode)
{
	const char *n = opcode_table[opcode].name;

	return n != NULL ? n : "UNKNOWN";
}

static unsigned int ext_index(enum roce_ext ext);

int
roce_ext_offset(const struct roce_opcode_info *info, enum roce_ext ext)
{
	if (!(info->ext & ext))
		return -1;
	return info->ext_off[ext_index(ext)];
}

/* One bit of enum roce_ext to its index; anything else to an invalid index. */
static unsigned int
ext_index(enum roce_ext ext)
{
	unsigned int e = (unsigned int)ext;

	return e != 0 && (e & (e - 1)) == 0 ? (unsigned int)__builtin_ctz(e) : ROCE_EXT_COUNT;
}

unsigned int
roce_ext_len(enum roce_ext ext)
{
	unsigned int i = ext_index(ext);

	return i < ROCE_EXT_COUNT ? ext_info[i].len : 0;
}

const char *
roce_ext_name(enum roce_ext ext)
{
	unsigned int i = ext_index(ext);

	return i < ROCE_EXT_COUNT ? ext_info[i].name : "?";
}
