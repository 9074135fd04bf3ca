/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The InfiniBand transport opcodes that may appear in a RoCEv2 packet (RC, UC, UD and the
 * RoCEv2 CNP), and for each one which extension headers follow the BTH, how long they are,
 * and whether a payload may follow. Parsers and builders consult this table instead of
 * branching on opcodes.
 */
#ifndef SDR_ROCE_OPCODE_H
#define SDR_ROCE_OPCODE_H

#include <stdint.h>

/* Opcodes the SDR dataplane itself sends. */
#define ROCE_OP_RC_SEND_ONLY			0x04
#define ROCE_OP_RC_ACK				0x11
#define ROCE_OP_UC_SEND_ONLY			0x24
#define ROCE_OP_UC_SEND_ONLY_IMM		0x25
#define ROCE_OP_UC_RDMA_WRITE_ONLY		0x2A
#define ROCE_OP_UC_RDMA_WRITE_ONLY_IMM		0x2B
#define ROCE_OP_UD_SEND_ONLY			0x64
#define ROCE_OP_CNP				0x81

/** Extension headers by bit number, in the order they follow the BTH on the wire (IBA 9.2). */
enum roce_ext_bit {
	ROCE_EXT_BIT_DETH,
	ROCE_EXT_BIT_RETH,
	ROCE_EXT_BIT_ATOMICETH,
	ROCE_EXT_BIT_AETH,
	ROCE_EXT_BIT_ATOMICACKETH,
	ROCE_EXT_BIT_IMMDT,
	ROCE_EXT_BIT_IETH,
	ROCE_EXT_BIT_CNP_PAD,	/**< 16 reserved bytes of a CNP */
};

/** Extension header masks. */
enum roce_ext {
	ROCE_EXT_DETH		= 1u << ROCE_EXT_BIT_DETH,
	ROCE_EXT_RETH		= 1u << ROCE_EXT_BIT_RETH,
	ROCE_EXT_ATOMICETH	= 1u << ROCE_EXT_BIT_ATOMICETH,
	ROCE_EXT_AETH		= 1u << ROCE_EXT_BIT_AETH,
	ROCE_EXT_ATOMICACKETH	= 1u << ROCE_EXT_BIT_ATOMICACKETH,
	ROCE_EXT_IMMDT		= 1u << ROCE_EXT_BIT_IMMDT,
	ROCE_EXT_IETH		= 1u << ROCE_EXT_BIT_IETH,
	ROCE_EXT_CNP_PAD	= 1u << ROCE_EXT_BIT_CNP_PAD,
};
#define ROCE_EXT_COUNT 8

enum roce_transport {
	ROCE_TRANSPORT_RC,
	ROCE_TRANSPORT_UC,
	ROCE_TRANSPORT_UD,
	ROCE_TRANSPORT_CNP,
};

/** What the table knows about one opcode. */
struct roce_opcode_info {
	const char *name;	/**< e.g. "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"; NULL: unknown */
	uint8_t transport;	/**< enum roce_transport */
	uint8_t ext;		/**< mask of enum roce_ext */
	uint8_t ext_len;	/**< bytes of extension headers after the BTH */
	uint8_t payload;	/**< 1 if a payload may follow the headers */
	/** offset of each extension header from the end of the BTH, by bit number of
	 *  enum roce_ext; meaningful only for headers present in @c ext */
	uint8_t ext_off[ROCE_EXT_COUNT];
};

/**
 * Look an opcode up.
 *
 * @return the table entry; never NULL. For an opcode the table does not know,
 *   the entry's name is NULL.
 */
const struct roce_opcode_info *roce_opcode_info(uint8_t opcode);

/** Name of an opcode, or "UNKNOWN" for one outside the table. */
const char *roce_opcode_name(uint8_t opcode);

/**
 * Byte offset of one extension header from the end of the BTH, for an opcode carrying it.
 *
 * @return the offset, or -1 if the opcode does not carry @p ext.
 */
int roce_ext_offset(const struct roce_opcode_info *info, enum roce_ext ext);

/** Length in bytes of one extension header. */
unsigned int roce_ext_len(enum roce_ext ext);

/** Lower-case name of one extension header ("reth", "immdt", ...). */
const char *roce_ext_name(enum roce_ext ext);

#endif /* SDR_ROCE_OPCODE_H */
