/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire headers of RoCEv2 (InfiniBand transport over UDP/IP over Ethernet), as the
 * dataplane sends and receives them. DPDK 22.11 has no rte_ib.h, so the InfiniBand
 * transport headers (BTH and its extension headers) are defined here; the Ethernet, IP
 * and UDP headers are defined alongside so that lib/ needs no DPDK header at all.
 *
 * All multi-byte fields are in network byte order. Structures are packed and carry no
 * alignment assumption: a frame may start at any address.
 */
#ifndef SDR_ROCE_HDR_H
#define SDR_ROCE_HDR_H

#include <stdint.h>
#include <endian.h>

#define ROCE_ETHER_TYPE_IPV4	0x0800
#define ROCE_ETHER_TYPE_IPV6	0x86DD
#define ROCE_ETHER_TYPE_VLAN	0x8100
#define ROCE_IPPROTO_UDP	17
#define ROCE_UDP_PORT		4791	/**< IANA port of RoCEv2 */

#define ROCE_ETH_LEN		14
#define ROCE_VLAN_LEN		4
#define ROCE_IPV4_MIN_LEN	20
#define ROCE_IPV4_MAX_LEN	60
#define ROCE_IPV6_LEN		40
#define ROCE_UDP_LEN		8
#define ROCE_BTH_LEN		12
#define ROCE_RETH_LEN		16
#define ROCE_IMMDT_LEN		4
#define ROCE_DETH_LEN		8
#define ROCE_AETH_LEN		4
#define ROCE_ATOMICETH_LEN	28
#define ROCE_ATOMICACKETH_LEN	8
#define ROCE_IETH_LEN		4
#define ROCE_CNP_PAD_LEN	16	/**< reserved bytes after the BTH of a CNP */
#define ROCE_ICRC_LEN		4

#define ROCE_QPN_MASK		0x00FFFFFFu
#define ROCE_PSN_MASK		0x00FFFFFFu
#define ROCE_PKEY_DEFAULT	0xFFFF

struct roce_eth_hdr {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t type;
} __attribute__((packed));

struct roce_vlan_hdr {
	uint16_t tci;		/**< PCP(3) DEI(1) VID(12) */
	uint16_t type;		/**< inner EtherType */
} __attribute__((packed));

struct roce_ipv4_hdr {
	uint8_t ver_ihl;	/**< version(4) IHL(4), IHL in 32-bit words */
	uint8_t tos;		/**< DSCP(6) ECN(2) */
	uint16_t total_len;
	uint16_t id;
	uint16_t frag;		/**< flags(3) fragment offset(13) */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint8_t src[4];
	uint8_t dst[4];
} __attribute__((packed));

#define ROCE_IPV4_DF		0x4000
#define ROCE_IPV4_MF		0x2000
#define ROCE_IPV4_FRAG_OFF	0x1FFF

struct roce_ipv6_hdr {
	uint32_t vtc_flow;	/**< version(4) traffic class(8) flow label(20) */
	uint16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));

struct roce_udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t csum;
} __attribute__((packed));

/** Base Transport Header (IBA 9.2). */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags;		/**< SE(1) M(1) PadCnt(2) TVer(4) */
	uint16_t pkey;
	uint32_t qpn;		/**< FECN(1) BECN(1) resv6(6) DestQP(24) */
	uint32_t apsn;		/**< AckReq(1) resv7(7) PSN(24) */
} __attribute__((packed));

#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIG		0x40
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30
#define ROCE_BTH_TVER_MASK	0x0F
#define ROCE_BTH_FECN		0x80000000u
#define ROCE_BTH_BECN		0x40000000u
#define ROCE_BTH_ACKREQ		0x80000000u

/** RDMA Extended Transport Header (IBA 9.3.3). */
struct roce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
} __attribute__((packed));

/** Immediate Data Extended Transport Header. */
struct roce_immdt {
	uint32_t imm;
} __attribute__((packed));

/** Datagram Extended Transport Header (UD). */
struct roce_deth {
	uint32_t qkey;
	uint32_t sqpn;		/**< resv8(8) SrcQP(24) */
} __attribute__((packed));

/** ACK Extended Transport Header. */
struct roce_aeth {
	uint32_t smsn;		/**< Syndrome(8) MSN(24) */
} __attribute__((packed));

/** Atomic Extended Transport Header. */
struct roce_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
} __attribute__((packed));

/** Atomic Acknowledge Extended Transport Header. */
struct roce_atomicacketh {
	uint64_t orig;
} __attribute__((packed));

/** Invalidate Extended Transport Header. */
struct roce_ieth {
	uint32_t rkey;
} __attribute__((packed));

_Static_assert(sizeof(struct roce_eth_hdr) == ROCE_ETH_LEN, "eth");
_Static_assert(sizeof(struct roce_vlan_hdr) == ROCE_VLAN_LEN, "vlan");
_Static_assert(sizeof(struct roce_ipv4_hdr) == ROCE_IPV4_MIN_LEN, "ipv4");
_Static_assert(sizeof(struct roce_ipv6_hdr) == ROCE_IPV6_LEN, "ipv6");
_Static_assert(sizeof(struct roce_udp_hdr) == ROCE_UDP_LEN, "udp");
_Static_assert(sizeof(struct roce_bth) == ROCE_BTH_LEN, "bth");
_Static_assert(sizeof(struct roce_reth) == ROCE_RETH_LEN, "reth");
_Static_assert(sizeof(struct roce_deth) == ROCE_DETH_LEN, "deth");
_Static_assert(sizeof(struct roce_atomiceth) == ROCE_ATOMICETH_LEN, "atomiceth");
_Static_assert(sizeof(struct roce_atomicacketh) == ROCE_ATOMICACKETH_LEN, "atomicacketh");

/* Unaligned big-endian loads and stores: frames carry no alignment promise. */
static inline uint16_t
roce_get16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)((b[0] << 8) | b[1]);
}

static inline uint32_t
roce_get24(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static inline uint32_t
roce_get32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static inline uint64_t
roce_get64(const void *p)
{
	const uint8_t *b = p;
	return ((uint64_t)roce_get32(b) << 32) | roce_get32(b + 4);
}

static inline void
roce_put16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void
roce_put32(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline void
roce_put64(void *p, uint64_t v)
{
	uint8_t *b = p;
	roce_put32(b, (uint32_t)(v >> 32));
	roce_put32(b + 4, (uint32_t)v);
}

/* The ICRC travels least-significant byte first (as Ethernet's FCS does). */
static inline uint32_t
roce_get_icrc(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
		((uint32_t)b[3] << 24);
}

static inline void
roce_put_icrc(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

#endif /* SDR_ROCE_HDR_H */
