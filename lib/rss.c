/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "rss.h"

const uint8_t rss_default_key[RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t
rss_toeplitz(const uint8_t key[RSS_KEY_LEN], const uint8_t *data, size_t len)
{
	/* the 32 key bits at the current input bit: shifted left one bit per input bit */
	uint32_t h = 0, win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
			      (uint32_t)key[2] << 8 | key[3];

	if (len > RSS_KEY_LEN - 4)
		len = RSS_KEY_LEN - 4;
	for (size_t i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (int b = 7; b >= 0; b--) {
			if (data[i] & (1u << b))
				h ^= win;
			win = win << 1 | ((next >> b) & 1u);
		}
	}
	return h;
}

uint32_t
rss_hash_udp(const uint8_t key[RSS_KEY_LEN], uint8_t ip_version, const uint8_t *src_ip,
	     const uint8_t *dst_ip, uint16_t sport, uint16_t dport)
{
	uint8_t t[36];
	size_t a = ip_version == 6 ? 16 : 4;

	memcpy(t, src_ip, a);
	memcpy(t + a, dst_ip, a);
	t[2 * a] = (uint8_t)(sport >> 8);
	t[2 * a + 1] = (uint8_t)sport;
	t[2 * a + 2] = (uint8_t)(dport >> 8);
	t[2 * a + 3] = (uint8_t)dport;
	return rss_toeplitz(key, t, 2 * a + 4);
}

uint16_t
rss_pick_sport(const uint8_t key[RSS_KEY_LEN], uint8_t ip_version, const uint8_t *src_ip,
	       const uint8_t *dst_ip, uint16_t dport, uint16_t start, unsigned int queues,
	       unsigned int queue)
{
	uint32_t s = start < 0xC000 ? 0xC000 : start;

	if (queues == 0 || (queues & (queues - 1)) != 0 || queue >= queues)
		return 0;
	/* one in queues lands right: a few tries (16384 ports, so always found) */
	for (uint32_t n = 0; n < 0x4000; n++, s = s == 0xFFFF ? 0xC000 : s + 1)
		if ((rss_hash_udp(key, ip_version, src_ip, dst_ip, (uint16_t)s, dport) &
		     (queues - 1)) == queue)
			return (uint16_t)s;
	return 0;
}
