/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 ICRC with ISA-L's chained CRC-32. */
#include <string.h>

#include <isa-l/crc.h>

#include "icrc.h"
#include "roce_hdr.h"
#include "simd_clean.h"

#define LRH_ONES_LEN 8

/* Set the variant fields of the IP, UDP and BTH headers at @p h to ones. */
static void
icrc_mask(uint8_t *h, unsigned int ip_version, unsigned int ip_hdr_len)
{
	if (ip_version == 4) {
		struct roce_ipv4_hdr *v4 = (struct roce_ipv4_hdr *)h;

		v4->tos = 0xFF;
		v4->ttl = 0xFF;
		v4->csum = 0xFFFF;
	} else {
		/* keep the version nibble, set traffic class and flow label to ones */
		h[0] |= 0x0F;
		h[1] = 0xFF;
		h[2] = 0xFF;
		h[3] = 0xFF;
		((struct roce_ipv6_hdr *)h)->hop_limit = 0xFF;
	}
	((struct roce_udp_hdr *)(h + ip_hdr_len))->csum = 0xFFFF;
	/* BTH byte 4: FECN, BECN and six reserved bits */
	h[ip_hdr_len + ROCE_UDP_LEN + 4] = 0xFF;
}

/* Copy the IP, UDP and BTH headers behind the 8 ones bytes and set the variant fields. */
static size_t
icrc_pseudo_header(uint8_t *out, const uint8_t *ip, unsigned int ip_version,
		   unsigned int ip_hdr_len)
{
	size_t hlen = ip_hdr_len + ROCE_UDP_LEN + ROCE_BTH_LEN;

	memset(out, 0xFF, LRH_ONES_LEN);
	memcpy(out + LRH_ONES_LEN, ip, hlen);
	icrc_mask(out + LRH_ONES_LEN, ip_version, ip_hdr_len);
	return LRH_ONES_LEN + hlen;
}

/* ISA-L's CRC, then the vector state cleaned for the caller's code (simd_clean.h). */
static inline uint32_t
crc(uint32_t seed, const void *buf, size_t len)
{
	uint32_t r = crc32_gzip_refl(seed, buf, len);

	sdr_simd_clean();
	return r;
}

/*
 * ISA-L's CRC has a fixed cost per call of about as much as 100 bytes of data, so a short
 * packet is copied whole behind the masked headers and checked in one call; a long one
 * takes two calls (masked headers, then the rest in place).
 */
#define ICRC_ONE_CALL_MAX 256

uint32_t
icrc_begin(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len)
{
	uint8_t buf[LRH_ONES_LEN + ROCE_IPV4_MAX_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN];
	size_t n;

	if (ip_hdr_len > ROCE_IPV4_MAX_LEN)
		ip_hdr_len = ROCE_IPV4_MAX_LEN;	/* callers validate; never overrun buf */
	n = icrc_pseudo_header(buf, ip, ip_version, ip_hdr_len);
	return crc(0, buf, n);
}

uint32_t
icrc_update(uint32_t seed, const void *buf, size_t len)
{
	return crc(seed, buf, len);
}

uint32_t
icrc_compute(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
	     size_t roce_len)
{
	const uint8_t *bth = ip + ip_hdr_len + ROCE_UDP_LEN;
	uint8_t buf[LRH_ONES_LEN + ROCE_IPV4_MAX_LEN + ROCE_UDP_LEN + ICRC_ONE_CALL_MAX];
	size_t n;

	if (roce_len <= ROCE_BTH_LEN)
		return icrc_begin(ip, ip_version, ip_hdr_len);
	if (roce_len > ICRC_ONE_CALL_MAX || ip_hdr_len > ROCE_IPV4_MAX_LEN)
		return icrc_update(icrc_begin(ip, ip_version, ip_hdr_len), bth + ROCE_BTH_LEN,
				   roce_len - ROCE_BTH_LEN);
	n = icrc_pseudo_header(buf, ip, ip_version, ip_hdr_len);
	memcpy(buf + n, bth + ROCE_BTH_LEN, roce_len - ROCE_BTH_LEN);
	return crc(0, buf, n + roce_len - ROCE_BTH_LEN);
}

/*
 * One CRC call over the frame itself: ISA-L's CRC costs about as much as 100 bytes of data
 * per call, and its tail handling for a length that is not a multiple of its fold width
 * about as much again, so two calls (masked headers, then the rest) cost 15 to 20 ns more
 * per packet than one. The bytes the pseudo-header changes (the 8 before the IP header,
 * the variant fields) are saved, set, and put back before returning.
 */
uint32_t
icrc_compute_inplace(uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
		     size_t roce_len)
{
	uint8_t *start = ip - LRH_ONES_LEN, *udp = ip + ip_hdr_len;
	uint8_t lrh[LRH_ONES_LEN], iph[12], udp_csum[2], bth4;
	uint32_t r;

	memcpy(lrh, start, sizeof(lrh));
	memcpy(iph, ip, sizeof(iph));
	memcpy(udp_csum, udp + 6, sizeof(udp_csum));
	bth4 = udp[ROCE_UDP_LEN + 4];
	memset(start, 0xFF, LRH_ONES_LEN);
	icrc_mask(ip, ip_version, ip_hdr_len);
	r = crc(0, start, LRH_ONES_LEN + ip_hdr_len + ROCE_UDP_LEN + roce_len);
	memcpy(start, lrh, sizeof(lrh));
	memcpy(ip, iph, sizeof(iph));
	memcpy(udp + 6, udp_csum, sizeof(udp_csum));
	udp[ROCE_UDP_LEN + 4] = bth4;
	return r;
}
