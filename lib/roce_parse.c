/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 frame parser. Every read is preceded by a bound check against the frame end. */
#include <string.h>

#include "crc_copy.h"
#include "icrc.h"
#include "roce_hdr.h"
#include "roce_parse.h"
#include "sdr_zero.h"

static const struct sdr_counter_def verdict_defs[ROCE_V_COUNT] = {
	ROCE_VERDICTS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table roce_verdict_table = {
	.group = "verdicts",
	.doc = "what the RoCEv2 parser says of each frame a port receives, one verdict per frame",
	.n = ROCE_V_COUNT,
	.defs = verdict_defs,
};

const char *
roce_verdict_name(enum roce_verdict v)
{
	return sdr_counter_name(&roce_verdict_table, (unsigned int)v);
}

const char *
roce_verdict_doc(enum roce_verdict v)
{
	return (unsigned int)v < ROCE_V_COUNT ? verdict_defs[v].doc : "invalid verdict";
}

/* Truncation verdict per extension header, in roce_ext bit order. */
static const uint8_t ext_trunc_verdict[ROCE_EXT_COUNT] = {
	ROCE_V_TRUNC_DETH, ROCE_V_TRUNC_RETH, ROCE_V_TRUNC_ATOMICETH, ROCE_V_TRUNC_AETH,
	ROCE_V_TRUNC_ATOMICACKETH, ROCE_V_TRUNC_IMMDT, ROCE_V_TRUNC_IETH, ROCE_V_TRUNC_CNP,
};

/* One's-complement sum of an IPv4 header (len is a multiple of 4), in 32-bit steps. */
static uint16_t
ipv4_header_sum(const uint8_t *h, unsigned int len)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < len; i += 4) {
		uint32_t w;

		memcpy(&w, h + i, 4);
		sum += w;
	}
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)sum;	/* byte order does not matter for the all-ones test */
}

/*
 * Parse IPv4 at frame[off]; on success *ip_end is where the IP header says the packet
 * ends, which may lie past the frame (the caller reports that after the headers).
 */
static enum roce_verdict
parse_ipv4(const uint8_t *frame, uint32_t len, uint32_t off, unsigned int flags,
	   struct roce_view *v, uint32_t *ip_end)
{
	const struct roce_ipv4_hdr *h = (const void *)(frame + off);
	unsigned int ihl, total;

	if (len - off < ROCE_IPV4_MIN_LEN)
		return ROCE_V_TRUNC_IP;
	if ((h->ver_ihl >> 4) != 4)
		return ROCE_V_BAD_IP_VERSION;
	ihl = (h->ver_ihl & 0x0F) * 4u;
	if (ihl < ROCE_IPV4_MIN_LEN || ihl > len - off)
		return ROCE_V_BAD_IP_HDR_LEN;
	v->ip_version = 4;
	v->ip_hdr_len = (uint8_t)ihl;
	v->ecn = h->tos & 0x3;
	total = roce_get16(&h->total_len);
	if (total < ihl)
		return ROCE_V_BAD_IP_LEN;
	if (!(flags & ROCE_PARSE_NO_IP_CSUM) && ipv4_header_sum(frame + off, ihl) != 0xFFFF)
		return ROCE_V_BAD_IP_CSUM;
	if (roce_get16(&h->frag) & (ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF))
		return ROCE_V_IP_FRAGMENT;
	if (h->proto != ROCE_IPPROTO_UDP)
		return ROCE_V_NOT_UDP;
	*ip_end = off + total;
	return ROCE_V_OK;
}

static enum roce_verdict
parse_ipv6(const uint8_t *frame, uint32_t len, uint32_t off, struct roce_view *v,
	   uint32_t *ip_end)
{
	const struct roce_ipv6_hdr *h = (const void *)(frame + off);
	unsigned int plen;

	if (len - off < ROCE_IPV6_LEN)
		return ROCE_V_TRUNC_IP;
	if ((frame[off] >> 4) != 6)
		return ROCE_V_BAD_IP_VERSION;
	v->ip_version = 6;
	v->ip_hdr_len = ROCE_IPV6_LEN;
	v->ecn = (uint8_t)((roce_get32(&h->vtc_flow) >> 20) & 0x3);
	plen = roce_get16(&h->payload_len);
	/* RoCEv2 endpoints send no IPv6 extension headers: UDP follows directly */
	if (h->next_hdr != ROCE_IPPROTO_UDP)
		return ROCE_V_NOT_UDP;
	*ip_end = off + ROCE_IPV6_LEN + plen;
	return ROCE_V_OK;
}

static void
decode_bth(const uint8_t *b, struct roce_view *v)
{
	uint32_t qpn = roce_get32(b + 4), apsn = roce_get32(b + 8);

	v->opcode = b[0];
	v->se = !!(b[1] & ROCE_BTH_SE);
	v->mig = !!(b[1] & ROCE_BTH_MIG);
	v->pad = (b[1] & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	v->tver = b[1] & ROCE_BTH_TVER_MASK;
	v->pkey = roce_get16(b + 2);
	v->fecn = !!(qpn & ROCE_BTH_FECN);
	v->becn = !!(qpn & ROCE_BTH_BECN);
	v->dqpn = qpn & ROCE_QPN_MASK;
	v->ackreq = !!(apsn & ROCE_BTH_ACKREQ);
	v->psn = apsn & ROCE_PSN_MASK;
}

/*
 * Decode the extension headers at frame[off], whose offsets the opcode table gives.
 * The whole block is bound-checked once; only a short packet walks the headers to name
 * the one it was cut in.
 */
static enum roce_verdict
decode_ext(const uint8_t *frame, uint32_t off, uint32_t avail, struct roce_view *v)
{
	const struct roce_opcode_info *op = v->op;
	const uint8_t *p = frame + off;

	if (avail - off < op->ext_len) {
		for (unsigned int i = 0; i < ROCE_EXT_COUNT; i++) {
			if ((op->ext & (1u << i)) &&
			    avail - off < (uint32_t)op->ext_off[i] + roce_ext_len((enum roce_ext)(1u << i)))
				return (enum roce_verdict)ext_trunc_verdict[i];
		}
	}
	v->ext = op->ext;
	if (op->ext & ROCE_EXT_RETH) {
		const uint8_t *r = p + op->ext_off[ROCE_EXT_BIT_RETH];

		v->reth_off = (uint16_t)(off + op->ext_off[ROCE_EXT_BIT_RETH]);
		v->va = roce_get64(r);
		v->rkey = roce_get32(r + 8);
		v->dma_len = roce_get32(r + 12);
	}
	if (op->ext & ROCE_EXT_IMMDT) {
		v->immdt_off = (uint16_t)(off + op->ext_off[ROCE_EXT_BIT_IMMDT]);
		v->imm = roce_get32(p + op->ext_off[ROCE_EXT_BIT_IMMDT]);
	}
	if (op->ext & ROCE_EXT_DETH) {
		v->deth_off = (uint16_t)off;
		v->qkey = roce_get32(p);
		v->sqpn = roce_get32(p + 4) & ROCE_QPN_MASK;
	}
	if (op->ext & ROCE_EXT_AETH) {
		const uint8_t *a = p + op->ext_off[ROCE_EXT_BIT_AETH];

		v->aeth_off = (uint16_t)(off + op->ext_off[ROCE_EXT_BIT_AETH]);
		v->syndrome = a[0];
		v->msn = roce_get24(a + 1);
	}
	v->payload_off = (uint16_t)(off + op->ext_len);
	return ROCE_V_OK;
}

/*
 * The headers of a frame of @p len bytes whose first @p head of them (head <= len) lie at
 * @p frame: every read is checked against @p head, the lengths against @p len. A frame in
 * one buffer has head == len. On ROCE_V_OK, *endp is where the IP header says the packet
 * ends (at most len) and payload_len, pad are known; the ICRC is read where it lies in the
 * head, but not checked.
 */
static enum roce_verdict
parse_headers(const uint8_t *frame, uint32_t head, uint32_t len, unsigned int flags,
	      struct roce_view *v, uint32_t *endp)
{
	uint32_t off = ROCE_ETH_LEN, ip_end = 0, udp_len, end, avail, area;
	uint16_t type;
	enum roce_verdict r;

	sdr_zero(v, sizeof(*v));
	v->frame = frame;
	v->payload = frame;
	if (head < ROCE_ETH_LEN)
		return ROCE_V_TRUNC_ETH;
	type = roce_get16(frame + 12);
	if (type == ROCE_ETHER_TYPE_VLAN) {
		if (head < ROCE_ETH_LEN + ROCE_VLAN_LEN)
			return ROCE_V_TRUNC_VLAN;
		v->has_vlan = 1;
		v->vlan_tci = roce_get16(frame + ROCE_ETH_LEN);
		type = roce_get16(frame + ROCE_ETH_LEN + 2);
		off += ROCE_VLAN_LEN;
	}
	v->l3_off = (uint16_t)off;
	if (type == ROCE_ETHER_TYPE_IPV4)
		r = parse_ipv4(frame, head, off, flags, v, &ip_end);
	else if (type == ROCE_ETHER_TYPE_IPV6)
		r = parse_ipv6(frame, head, off, v, &ip_end);
	else
		return ROCE_V_NOT_IP;
	if (r != ROCE_V_OK)
		return r;

	/*
	 * Headers are checked against what is really there (avail), so a cut frame reports
	 * the header it was cut in; the payload is then checked against the IP length (end).
	 */
	off += v->ip_hdr_len;
	end = ip_end;
	avail = ip_end < head ? ip_end : head;
	v->l4_off = (uint16_t)off;
	if (avail - off < ROCE_UDP_LEN)
		return ROCE_V_TRUNC_UDP;
	udp_len = roce_get16(frame + off + 4);
	if (udp_len != ip_end - off)
		return ROCE_V_BAD_UDP_LEN;
	v->udp_sport = roce_get16(frame + off);
	v->udp_dport = roce_get16(frame + off + 2);
	if (v->udp_dport != ROCE_UDP_PORT)
		return ROCE_V_NOT_ROCE_PORT;
	off += ROCE_UDP_LEN;
	v->roce_len = (uint16_t)(end - off);

	/* BTH */
	v->bth_off = (uint16_t)off;
	if (avail - off < ROCE_BTH_LEN)
		return ROCE_V_TRUNC_BTH;
	decode_bth(frame + off, v);
	if (v->tver != 0)
		return ROCE_V_BAD_BTH_VERSION;
	v->op = roce_opcode_info(v->opcode);
	if (v->op->name == NULL)
		return ROCE_V_UNKNOWN_OPCODE;
	off += ROCE_BTH_LEN;

	r = decode_ext(frame, off, avail, v);
	if (r != ROCE_V_OK)
		return r;
	off = v->payload_off;
	v->payload = frame + off;
	if (end > len)
		return ROCE_V_TRUNC_PAYLOAD;

	/* payload, pad, ICRC */
	if (end - off < ROCE_ICRC_LEN)
		return ROCE_V_TRUNC_ICRC;
	area = end - off - ROCE_ICRC_LEN;
	if (end <= head)
		v->icrc = roce_get_icrc(frame + end - ROCE_ICRC_LEN);
	if (v->pad > area || (v->roce_len & 3) != 0)
		return ROCE_V_BAD_PAD;
	v->payload_len = area - v->pad;
	if (!v->op->payload && area != 0)
		return ROCE_V_UNEXPECTED_PAYLOAD;
	*endp = end;
	return ROCE_V_OK;
}

/* roce_parse(); @p rw is NULL or @p frame, writable: then the ICRC is computed in place */
static enum roce_verdict
parse(const uint8_t *frame, uint8_t *rw, uint32_t len, unsigned int flags, struct roce_view *v)
{
	enum roce_verdict r;
	uint32_t end;

	r = parse_headers(frame, len, len, flags, v, &end);
	if (r != ROCE_V_OK)
		return r;
	if (flags & ROCE_PARSE_VERIFY_ICRC) {
		uint32_t crc = rw ? icrc_compute_inplace(rw + v->l3_off, v->ip_version,
							 v->ip_hdr_len, v->roce_len - ROCE_ICRC_LEN) :
				    icrc_compute(frame + v->l3_off, v->ip_version, v->ip_hdr_len,
						 v->roce_len - ROCE_ICRC_LEN);

		v->icrc_checked = 1;
		v->icrc_ok = crc == v->icrc;
		if (!v->icrc_ok)
			return ROCE_V_BAD_ICRC;
	}
	return ROCE_V_OK;
}

int
roce_icrc_check(const struct roce_view *v)
{
	uint32_t crc;

	if (roce_view_in_one(v))
		return icrc_compute(v->frame + v->l3_off, v->ip_version, v->ip_hdr_len,
				    v->roce_len - ROCE_ICRC_LEN) == v->icrc;
	/* in segments (ROCE_PARSE_ICRC_LATER): the headers, then the payload and its pad */
	crc = icrc_compute(v->frame + v->l3_off, v->ip_version, v->ip_hdr_len,
			   v->payload_off - v->bth_off);
	return icrc_update(crc, v->payload, v->payload_len + v->pad) == v->icrc;
}

int
roce_icrc_one_pass(void)
{
	return crc_copy_fused();
}

int
roce_icrc_copy(const struct roce_view *v, void *dst)
{
	/* the headers from the BTH on, the payload as it is copied, the pad */
	uint32_t crc = icrc_compute(v->frame + v->l3_off, v->ip_version, v->ip_hdr_len,
				    v->payload_off - v->bth_off);

	crc = crc_copy(crc, dst, v->payload, v->payload_len);
	if (v->pad)
		crc = icrc_update(crc, v->payload + v->payload_len, v->pad);
	return crc == v->icrc;
}

enum roce_verdict
roce_parse(const uint8_t *frame, uint32_t len, unsigned int flags, struct roce_view *v)
{
	return parse(frame, NULL, len, flags, v);
}

enum roce_verdict
roce_parse_rw(uint8_t *frame, uint32_t len, unsigned int flags, struct roce_view *v)
{
	return parse(frame, frame, len, flags, v);
}

/*
 * Bytes [@p from, @p to) of a frame in segments, one piece per segment they touch:
 * copied to @p out (when not NULL), or continued into the CRC *crc (when not NULL).
 */
static void
seg_walk(const struct roce_seg *seg, unsigned int nseg, uint32_t from, uint32_t to,
	 uint8_t *out, uint32_t *crc)
{
	uint32_t pos = 0;

	for (unsigned int i = 0; i < nseg && pos < to; pos += seg[i++].len) {
		uint32_t a = from > pos ? from : pos;
		uint32_t b = to < pos + seg[i].len ? to : pos + seg[i].len;

		if (a >= b)
			continue;
		if (out != NULL)
			memcpy(out + (a - from), seg[i].data + (a - pos), b - a);
		if (crc != NULL)
			*crc = icrc_update(*crc, seg[i].data + (a - pos), b - a);
	}
}

int
roce_parse_sg(const struct roce_seg *seg, unsigned int nseg, unsigned int flags,
	      struct roce_view *v, enum roce_verdict *r)
{
	uint32_t end, first, stop, head, pos = 0, room;
	uint8_t icrc[ROCE_ICRC_LEN];
	uint64_t len = 0;
	unsigned int i;

	for (i = 0; i < nseg; i++)
		len += seg[i].len;
	if (nseg == 0 || len > UINT32_MAX)
		return 0;
	head = seg[0].len;
	if (parse_headers(seg[0].data, head, (uint32_t)len, flags, v, &end) != ROCE_V_OK)
		return 0;	/* a fault, or headers past the first segment */
	/* the payload in one segment (an empty one stays at the headers' end, in the first) */
	first = v->payload_off;
	room = head - first;	/* what follows the payload in its segment */
	for (i = 0; v->payload_len != 0; pos += seg[i++].len) {
		if (i == nseg)
			return 0;
		if (first >= pos + seg[i].len)
			continue;
		if (first + v->payload_len > pos + seg[i].len)
			return 0;
		v->payload = seg[i].data + (first - pos);
		room = pos + seg[i].len - first;
		break;
	}
	room -= v->payload_len;
	seg_walk(seg, nseg, end - ROCE_ICRC_LEN, end, icrc, NULL);
	v->icrc = roce_get_icrc(icrc);
	*r = ROCE_V_OK;
	/* later, where roce_icrc_check() finds the pad: after the payload, in its segment */
	if ((flags & ROCE_PARSE_ICRC_LATER) && v->pad > room)
		flags |= ROCE_PARSE_VERIFY_ICRC;
	if (flags & ROCE_PARSE_VERIFY_ICRC) {
		uint32_t crc;

		/* the headers and what follows them in the first segment, then the rest */
		stop = end - ROCE_ICRC_LEN;
		if (head > stop)
			head = stop;
		crc = icrc_compute(seg[0].data + v->l3_off, v->ip_version, v->ip_hdr_len,
				   head - v->bth_off);
		seg_walk(seg, nseg, head, stop, NULL, &crc);
		v->icrc_checked = 1;
		v->icrc_ok = crc == v->icrc;
		if (!v->icrc_ok)
			*r = ROCE_V_BAD_ICRC;
	}
	return 1;
}
