/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frame parser: Ethernet [802.1Q] IPv4|IPv6 UDP/4791 BTH [extension headers]
 * payload pad ICRC. Returns a view of the frame (header offsets, decoded fields, payload)
 * and a verdict. It reads only inside [frame, frame + len) whatever the bytes say.
 */
#ifndef SDR_ROCE_PARSE_H
#define SDR_ROCE_PARSE_H

#include <stdint.h>

#include "counters.h"

#include "roce_opcode.h"

/*
 * Every verdict: symbol, name used in counters and JSON, meaning. One list, so the enum,
 * the names in statistics and the documentation cannot drift apart.
 */
#define ROCE_VERDICTS(X) \
	X(OK,			"ok", OK,			"well-formed RoCEv2 packet") \
	X(TRUNC_ETH,		"trunc_eth", DROP,		"frame shorter than an Ethernet header") \
	X(TRUNC_VLAN,		"trunc_vlan", DROP,		"frame ends inside the 802.1Q tag") \
	X(NOT_IP,		"not_ip", DROP,		"EtherType is neither IPv4 nor IPv6") \
	X(TRUNC_IP,		"trunc_ip", DROP,		"frame ends inside the IP header") \
	X(BAD_IP_VERSION,	"bad_ip_version", DROP,	"IP version field disagrees with EtherType") \
	X(BAD_IP_HDR_LEN,	"bad_ip_hdr_len", DROP,	"IPv4 IHL below 5 or past the frame") \
	X(BAD_IP_LEN,		"bad_ip_len", DROP,		"IPv4 total length below the header length") \
	X(BAD_IP_CSUM,		"bad_ip_csum", DROP,		"IPv4 header checksum wrong") \
	X(IP_FRAGMENT,		"ip_fragment", DROP,		"IPv4 fragment (RoCEv2 is never fragmented)") \
	X(NOT_UDP,		"not_udp", DROP,		"IP protocol / next header is not UDP") \
	X(TRUNC_UDP,		"trunc_udp", DROP,		"IP payload ends inside the UDP header") \
	X(BAD_UDP_LEN,		"bad_udp_len", DROP,		"UDP length disagrees with the IP length") \
	X(NOT_ROCE_PORT,	"not_roce_port", DROP,	"UDP destination port is not 4791") \
	X(TRUNC_BTH,		"trunc_bth", DROP,		"UDP payload ends inside the BTH") \
	X(BAD_BTH_VERSION,	"bad_bth_version", DROP,	"BTH transport version is not 0") \
	X(UNKNOWN_OPCODE,	"unknown_opcode", DROP,	"opcode not in the RC/UC/UD/CNP table") \
	X(TRUNC_DETH,		"trunc_deth", DROP,		"packet ends inside the DETH") \
	X(TRUNC_RETH,		"trunc_reth", DROP,		"packet ends inside the RETH") \
	X(TRUNC_ATOMICETH,	"trunc_atomiceth", DROP,	"packet ends inside the AtomicETH") \
	X(TRUNC_AETH,		"trunc_aeth", DROP,		"packet ends inside the AETH") \
	X(TRUNC_ATOMICACKETH,	"trunc_atomicacketh", DROP,	"packet ends inside the AtomicAckETH") \
	X(TRUNC_IMMDT,		"trunc_immdt", DROP,		"packet ends inside the ImmDt") \
	X(TRUNC_IETH,		"trunc_ieth", DROP,		"packet ends inside the IETH") \
	X(TRUNC_CNP,		"trunc_cnp", DROP,		"CNP shorter than its 16 reserved bytes") \
	X(TRUNC_PAYLOAD,	"trunc_payload", DROP,	"frame ends before the length the IP header gives") \
	X(TRUNC_ICRC,		"trunc_icrc", DROP,		"no room for the 4-byte ICRC") \
	X(BAD_PAD,		"bad_pad", DROP,		"pad count larger than the payload, or length not 4-byte aligned") \
	X(UNEXPECTED_PAYLOAD,	"unexpected_payload", DROP,	"payload after an opcode that carries none") \
	X(BAD_ICRC,		"bad_icrc", DROP,		"ICRC does not match")

enum roce_verdict {
#define X(sym, name, kind, doc) ROCE_V_##sym,
	ROCE_VERDICTS(X)
#undef X
	ROCE_V_COUNT
};

/** The verdicts as a counter table (counters.h): "ok" is OK, every other one a drop. */
extern const struct sdr_counter_table roce_verdict_table;

/** Counter/JSON name of a verdict ("ok", "bad_icrc", ...). */
const char *roce_verdict_name(enum roce_verdict v);

/** One-line description of a verdict. */
const char *roce_verdict_doc(enum roce_verdict v);

/** Parse flags. */
#define ROCE_PARSE_VERIFY_ICRC	0x1u	/**< compute and check the ICRC */
#define ROCE_PARSE_NO_IP_CSUM	0x2u	/**< do not check the IPv4 header checksum */
/**
 * roce_parse_sg() without ROCE_PARSE_VERIFY_ICRC: leave the ICRC to roce_icrc_check() or
 * roce_icrc_copy() where they can take it from the view (the pad, if any, right after
 * the payload in its segment), else check it now. @c icrc_checked says which. A frame in
 * one buffer (roce_parse(), roce_parse_rw()) always leaves it: the flag changes nothing.
 */
#define ROCE_PARSE_ICRC_LATER	0x4u

/**
 * What the parser found. Offsets are from the first byte of the frame; an extension
 * header's offset is 0 when the opcode does not carry it. Fields after a failing header are
 * left as they were initialised (zero).
 */
struct roce_view {
	/* layer 2 and 3 */
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t bth_off;
	uint16_t payload_off;
	uint8_t ip_version;	/**< 4 or 6, 0 if not IP */
	uint8_t ip_hdr_len;
	uint8_t has_vlan;
	uint8_t ecn;		/**< the 2 ECN bits of the IP header */
	uint16_t vlan_tci;
	uint16_t udp_sport;
	uint16_t udp_dport;
	uint16_t roce_len;	/**< UDP payload: BTH through ICRC */
	/* BTH */
	uint8_t opcode;
	uint8_t se;
	uint8_t mig;
	uint8_t pad;
	uint8_t tver;
	uint8_t fecn;
	uint8_t becn;
	uint8_t ackreq;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	/* extension headers present (mask of enum roce_ext) and their offsets */
	uint8_t ext;
	uint16_t reth_off;
	uint16_t immdt_off;
	uint16_t deth_off;
	uint16_t aeth_off;
	uint64_t va;		/**< RETH */
	uint32_t rkey;		/**< RETH */
	uint32_t dma_len;	/**< RETH */
	uint32_t imm;		/**< ImmDt, host order */
	uint32_t qkey;		/**< DETH */
	uint32_t sqpn;		/**< DETH */
	uint8_t syndrome;	/**< AETH */
	uint32_t msn;		/**< AETH */
	/* payload and trailer */
	const uint8_t *frame;	/**< first byte of the frame: the headers, at the offsets above */
	const uint8_t *payload;	/**< first payload byte (valid pointer even if length 0); in a
				 *   frame in segments (roce_parse_sg()) not always frame +
				 *   payload_off */
	uint32_t payload_len;	/**< without pad */
	uint32_t icrc;		/**< as received */
	uint8_t icrc_checked;	/**< 1 if ROCE_PARSE_VERIFY_ICRC ran */
	uint8_t icrc_ok;
	const struct roce_opcode_info *op;
};

/**
 * Parse one frame.
 *
 * @param frame  first byte of the Ethernet header.
 * @param len    bytes available at @p frame (the frame may carry Ethernet padding; the IP
 *               length decides where the packet ends).
 * @param flags  ROCE_PARSE_* flags.
 * @param v      filled with what was decoded, even when the verdict is not OK.
 * @return ROCE_V_OK or the first problem found.
 */
enum roce_verdict roce_parse(const uint8_t *frame, uint32_t len, unsigned int flags,
			     struct roce_view *v);

/**
 * roce_parse() of a frame the caller owns and may write: the ICRC is checked in one pass
 * over the frame (icrc_compute_inplace()), which is faster. The frame's bytes are the
 * same on return; nobody else may read them during the call.
 */
enum roce_verdict roce_parse_rw(uint8_t *frame, uint32_t len, unsigned int flags,
				struct roce_view *v);

/** The frame of @p v lies in one buffer (roce_parse(), roce_parse_rw()): its payload too. */
static inline int
roce_view_in_one(const struct roce_view *v)
{
	return v->payload == v->frame + v->payload_off;
}

/**
 * The ICRC of a frame parsed without ROCE_PARSE_VERIFY_ICRC (and ROCE_V_OK), left
 * unchecked: in one buffer, or in segments by roce_parse_sg() with ROCE_PARSE_ICRC_LATER
 * (@c icrc_checked 0). 1 when it is the frame's.
 */
int roce_icrc_check(const struct roce_view *v);

/**
 * roce_icrc_check() taken while the payload is copied to @p dst (payload_len bytes, never
 * overlapping the frame): one pass over it where the CPU allows (crc_copy()). The copy is
 * made whatever the result.
 */
int roce_icrc_copy(const struct roce_view *v, void *dst);

/**
 * Frames from this long (bytes) on are worth roce_icrc_copy(), where roce_icrc_one_pass():
 * their payload reaches crc_copy()'s vector kernel (CRC_COPY_MIN) whatever the headers.
 * A shorter one is checked as it is parsed (roce_parse_rw()): one CRC call, not three.
 */
#define ROCE_ICRC_COPY_MIN_FRAME 384

/** Whether roce_icrc_copy() is one pass on this CPU (else a CRC and a copy: check first). */
int roce_icrc_one_pass(void);

/** One piece of a frame held in several buffers (an mbuf chain's segments, in order). */
struct roce_seg {
	const uint8_t *data;
	uint32_t len;
};

/**
 * roce_parse() of a frame held in @p nseg segments, without copying it, where its layout
 * allows: every header (through the extension headers) in the first segment, and the
 * payload within one segment; pad and ICRC anywhere after it. That is a zero-copy
 * sender's chain (headers, the application's bytes, tail) or a NIC's header split. The
 * ICRC is computed over the segments in place (or, with ROCE_PARSE_ICRC_LATER, left for
 * roce_icrc_copy() to take as it copies the payload, where the view allows).
 *
 * @return 1 when it parsed the frame: *r is then ROCE_V_OK or ROCE_V_BAD_ICRC, and *v what
 * roce_parse() gives for the segments' bytes laid end to end, but for the pointers frame
 * (the first segment) and payload (into its segment). 0 for any other frame (another
 * layout, or one roce_parse() finds fault with before the ICRC): the caller copies it into
 * one buffer and parses that, which gives the exact verdict. *v is then undefined.
 */
int roce_parse_sg(const struct roce_seg *seg, unsigned int nseg, unsigned int flags,
		  struct roce_view *v, enum roce_verdict *r);

#endif /* SDR_ROCE_PARSE_H */
