/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frame builder. Writes a complete frame (Ethernet [802.1Q] IPv4|IPv6 UDP BTH
 * extension headers payload pad ICRC) for any opcode of the opcode table; the SDR
 * dataplane sends UC RDMA WRITE Only with Immediate (0x2B) for data and UC SEND Only
 * (0x24) for control.
 *
 * Lengths, the BTH pad count, the IPv4 header checksum and the ICRC are computed here.
 * The UDP checksum is sent as zero, as RoCEv2 NICs do.
 */
#ifndef SDR_ROCE_BUILD_H
#define SDR_ROCE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "icrc.h"
#include "roce_hdr.h"

/** Addresses and per-path header fields: fixed for a connection. */
struct roce_path {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t has_vlan;
	uint16_t vlan_tci;
	uint8_t ip_version;	/**< 4 or 6 */
	uint8_t src_ip[16];	/**< IPv4 uses the first 4 bytes */
	uint8_t dst_ip[16];
	uint8_t tclass;		/**< IPv4 TOS / IPv6 traffic class (DSCP and ECN) */
	uint8_t ttl;		/**< IPv4 TTL / IPv6 hop limit; 0 means 64 */
	uint32_t flow_label;	/**< IPv6 only, 20 bits */
	uint16_t udp_sport;	/**< entropy for ECMP; 0 means derived from the QPN */
	uint16_t pkey;		/**< 0 means the default partition 0xFFFF */
};

/** Per-packet transport fields. Extension-header fields are used when the opcode has them. */
struct roce_pkt {
	uint8_t opcode;
	uint8_t se;
	uint8_t ackreq;
	uint8_t becn;
	uint32_t dqpn;
	uint32_t psn;
	uint64_t va;		/**< RETH */
	uint32_t rkey;		/**< RETH */
	uint32_t dma_len;	/**< RETH */
	uint32_t imm;		/**< ImmDt, host order */
	uint32_t qkey;		/**< DETH */
	uint32_t sqpn;		/**< DETH */
	uint8_t syndrome;	/**< AETH */
	uint32_t msn;		/**< AETH */
	uint16_t udp_sport;	/**< this packet's UDP source port (steering, rss.h); 0: the
				 *   path's, or roce_qpn_sport(dqpn) */
};

/** The UDP source port a packet to @p dqpn gets by default (RoCEv2's range 0xC000-0xFFFF). */
static inline uint16_t
roce_qpn_sport(uint32_t dqpn)
{
	return (uint16_t)(0xC000 | ((dqpn ^ (dqpn >> 14)) & 0x3FFF));
}

/** Bytes of headers (Ethernet through the last extension header) for this path and opcode. */
unsigned int roce_build_hdr_len(const struct roce_path *path, uint8_t opcode);

/** Total frame length for a payload of @p payload_len bytes (headers, payload, pad, ICRC). */
unsigned int roce_build_frame_len(const struct roce_path *path, uint8_t opcode,
				  uint32_t payload_len);

/** The IP packet of such a frame: its length without the Ethernet header and VLAN tag. */
unsigned int roce_build_ip_len(const struct roce_path *path, uint8_t opcode, uint32_t payload_len);

/**
 * Write the headers of a frame whose payload will be @p payload_len bytes.
 * The payload goes at the returned offset; call roce_build_finish() after it is in place.
 *
 * @return header length, or -ENOSPC (buffer too small for the whole frame), -EINVAL
 *   (unknown opcode or bad path), -EPROTO (payload on an opcode that carries none),
 *   -EMSGSIZE (frame longer than IP allows).
 */
int roce_build_headers(uint8_t *buf, size_t cap, const struct roce_path *path,
		       const struct roce_pkt *pkt, uint32_t payload_len);

/**
 * Write the pad bytes and the ICRC after a payload placed by the caller.
 *
 * @return total frame length.
 */
unsigned int roce_build_finish(uint8_t *frame, const struct roce_path *path,
			       unsigned int hdr_len, uint32_t payload_len);

/**
 * Build a whole frame: headers, a copy of @p payload, pad and ICRC.
 *
 * @return frame length, or a negative errno as roce_build_headers().
 */
int roce_build(uint8_t *buf, size_t cap, const struct roce_path *path,
	       const struct roce_pkt *pkt, const void *payload, uint32_t payload_len);

/** Most bytes of headers a template holds: Ethernet + VLAN + IPv6 + UDP + BTH + 28 of
 * extension headers, rounded up. */
#define ROCE_BUILD_TMPL_MAX 128

/** Most bytes roce_build_sg() writes after the payload: pad (3) and ICRC (4). */
#define ROCE_BUILD_TAIL_MAX 8

/**
 * Build a frame whose payload stays where it is (a scatter-gather send): the headers go
 * into @p hdr, the pad and the ICRC into @p tail, and the frame on the wire is the
 * headers, then the @p payload_len bytes at @p payload, then the tail. The ICRC is
 * computed over the payload in place; nothing is copied. @p hdr need hold only the
 * headers (roce_build_hdr_len()); it is written to while the ICRC is computed, as
 * icrc_compute_inplace() says.
 *
 * @param tail      ROCE_BUILD_TAIL_MAX bytes.
 * @param tail_len  set to the bytes of @p tail used.
 * @return header length, or a negative errno as roce_build_headers().
 */
int roce_build_sg(uint8_t *hdr, size_t cap, const struct roce_path *path,
		  const struct roce_pkt *pkt, const void *payload, uint32_t payload_len,
		  uint8_t *tail, unsigned int *tail_len);

/**
 * The headers of one path and opcode, built once: what every frame of a connection has in
 * common. roce_tmpl_build_sg() then writes a frame's headers from it and patches the
 * fields that differ (lengths, the IPv4 checksum, UDP source port, BTH, extension
 * headers), and computes the ICRC over a masked copy of them, about a third of the cost
 * of roce_build_sg() per packet for the same bytes.
 */
struct roce_tmpl {
	uint8_t opcode;
	uint8_t ip_version;
	uint8_t l3;		/**< offset of the IP header */
	uint8_t hdr_len;	/**< headers, Ethernet through the last extension header */
	uint8_t ext;		/**< the opcode's extension headers (roce_opcode_info()) */
	uint8_t ext_len;	/**< and their length */
	uint16_t fixed_sport;	/**< path->udp_sport (0: from the destination QPN) */
	uint32_t csum_base;	/**< IPv4: header sum without the total length and checksum */
	uint8_t hdr[ROCE_BUILD_TMPL_MAX];
	/** 8 bytes of ones, then the IP header on with its variant fields masked, as the
	 * ICRC sees them (icrc.h), with the bytes each frame writes zero; as icrc_short_words()
	 * takes them */
	uint64_t masked_w[(8 + ROCE_BUILD_TMPL_MAX + 7) / 8];
	struct icrc_short masked_crc;	/**< the ICRC over the masked headers' length */
	uint32_t full_len;	/**< roce_tmpl_set_payload_len(): 0 none */
	struct icrc_short masked_before;	/**< the masked headers before full_len bytes */
	/** roce_tmpl_set_payload_len()'s length where the frame is the hot path's (UC RDMA
	 * WRITE Only with Immediate over IPv4), 0 otherwise; the two below are for it */
	uint32_t fast_len;
	/** the headers of a frame of fast_len bytes of payload: lengths and checksum set */
	uint8_t fast_hdr[ROCE_BUILD_TMPL_MAX];
	/** icrc_short_words() of their ICRC view (as masked_w, with the lengths; only the
	 * per-frame fields zero), by masked_before where full_len is fast_len, else by
	 * masked_crc: what a frame's fields add to (icrc_short_words_from()) */
	uint32_t fast_share;
};

/** Build the template of @p path for frames of @p opcode. @return 0, or -EINVAL. */
int roce_tmpl_init(struct roce_tmpl *t, const struct roce_path *path, uint8_t opcode);

/**
 * Frames of roce_tmpl_build_sg() with @p len bytes of payload (the MTU: every frame but a
 * message's last) take their ICRC in two independent parts, the headers' and the
 * payload's, XORed (icrc_short_init_before()), instead of the payload's chained after the
 * headers'; and where the template is UC RDMA WRITE Only with Immediate over IPv4, their
 * headers come from a copy with the lengths already set (fast_len), even where the ICRC
 * chains. The frames are the same. @return 0; -EINVAL (@p len 0, above 65535, or not a
 * multiple of 4, which would need a pad); -ENOTSUP (this CPU gains nothing: chained).
 */
int roce_tmpl_set_payload_len(struct roce_tmpl *t, uint32_t len);

/**
 * roce_build_headers() from a template (then the payload, then roce_build_finish()).
 * @return header length, or -ENOSPC (@p cap below the whole frame), -EMSGSIZE.
 */
int roce_tmpl_headers(const struct roce_tmpl *t, uint8_t *buf, size_t cap,
		      const struct roce_pkt *pkt, uint32_t payload_len);

/**
 * roce_build_sg() from a template: the same bytes, for a frame of @p pkt (whose opcode
 * must be the template's) with @p payload_len bytes at @p payload.
 * @return header length, or -ENOSPC (@p cap below it), -EMSGSIZE (payload too long).
 */
int roce_tmpl_build_sg(const struct roce_tmpl *t, uint8_t *hdr, size_t cap,
		       const struct roce_pkt *pkt, const void *payload, uint32_t payload_len,
		       uint8_t *tail, unsigned int *tail_len);

/**
 * roce_tmpl_build_sg()'s frame in one buffer: the headers at @p frame, the @p payload_len
 * bytes at @p payload copied behind them while their CRC is taken (crc_copy(): one pass
 * over the payload where the CPU allows), the pad and the ICRC. The bytes roce_build()
 * writes. @return the frame's length, or -ENOSPC (@p cap below it), -EMSGSIZE.
 */
int roce_tmpl_build_copy(const struct roce_tmpl *t, uint8_t *frame, size_t cap,
			 const struct roce_pkt *pkt, const void *payload, uint32_t payload_len);

/**
 * What a frame's ICRC still needs once its headers are written (roce_tmpl_headers_sg()):
 * the CRC over the payload and the pad, seeded with @c seed, XORed with @c share.
 */
struct roce_icrc_rest {
	uint32_t seed;	/**< the headers' CRC, where the payload's chains on it; else 0 */
	uint32_t share;	/**< the headers' share, where the two are independent; else 0 */
	uint8_t pad;	/**< zero bytes between the payload and the ICRC */
};

/**
 * roce_tmpl_build_sg() in two steps, so that the pass over the payload can be done (and
 * timed) apart: the headers and their share of the ICRC now, into @p rest; the tail with
 * roce_icrc_rest_tail() later, from the same payload.
 * @return header length, or a negative errno as roce_tmpl_build_sg().
 */
int roce_tmpl_headers_sg(const struct roce_tmpl *t, uint8_t *hdr, size_t cap,
			 const struct roce_pkt *pkt, uint32_t payload_len,
			 struct roce_icrc_rest *rest);

/** Bytes roce_icrc_rest_tail() writes: the pad and the ICRC. */
static inline unsigned int
roce_icrc_rest_len(const struct roce_icrc_rest *rest)
{
	return rest->pad + ROCE_ICRC_LEN;
}

/**
 * The ICRC of roce_tmpl_headers_sg()'s frame over its @p payload_len bytes at @p payload:
 * the pad and the ICRC into @p tail (ROCE_BUILD_TAIL_MAX bytes).
 * @return the bytes written, roce_icrc_rest_len().
 */
unsigned int roce_icrc_rest_tail(const struct roce_icrc_rest *rest, const void *payload,
				 uint32_t payload_len, uint8_t *tail);

#endif /* SDR_ROCE_BUILD_H */
