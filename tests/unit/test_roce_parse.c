/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCEv2 parser: fields, every verdict, every truncation, random and mutated bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "icrc.h"
#include "roce_build.h"
#include "roce_format.h"
#include "roce_hdr.h"
#include "roce_parse.h"
#include "test_vectors.h"

static struct roce_path path4 = {
	.dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
	.ip_version = 4, .src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 0, 2 },
};

static int
build_write(uint8_t *buf, size_t cap, const struct roce_path *path, uint32_t plen)
{
	static uint8_t payload[4096];
	struct roce_pkt pkt = { .opcode = 0x2B, .dqpn = 0x123456, .psn = 0xABCDEF,
				.va = 0x1122334455667788ull, .rkey = 0xCAFEBABE,
				.dma_len = plen, .imm = 0x89ABCDEF };

	for (uint32_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(i ^ 0x5A);
	return roce_build(buf, cap, path, &pkt, payload, plen);
}

/* Recompute the IPv4 header checksum and the ICRC after a test edited a header. */
static void
refresh(uint8_t *f, uint32_t len, uint32_t l3, int fix_icrc)
{
	uint32_t sum = 0;

	if ((f[l3] >> 4) == 4) {
		unsigned int ihl = (f[l3] & 0xF) * 4u;

		f[l3 + 10] = f[l3 + 11] = 0;
		for (unsigned int i = 0; i < ihl; i += 2)
			sum += roce_get16(f + l3 + i);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		roce_put16(f + l3 + 10, (uint16_t)~sum);
	}
	if (fix_icrc) {
		unsigned int iplen = (f[l3] >> 4) == 4 ? (f[l3] & 0xF) * 4u : 40u;
		uint32_t roce_len = len - (l3 + iplen + 8) - 4;

		roce_put_icrc(f + len - 4, icrc_compute(f + l3, f[l3] >> 4, iplen, roce_len));
	}
}

static void
test_vectors_parse(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		struct roce_view v;
		enum roce_verdict r = roce_parse(vectors[i].frame, vectors[i].len,
						 ROCE_PARSE_VERIFY_ICRC, &v);

		if (r != ROCE_V_OK)
			fail_msg("%s: %s", vectors[i].name, roce_verdict_name(r));
		assert_int_equal(v.ip_version, vectors[i].ip_version);
		assert_true(v.icrc_checked && v.icrc_ok);
		assert_true(v.payload + v.payload_len + v.pad + 4 <=
			    vectors[i].frame + vectors[i].len);
	}
}

/* roce_icrc_check() and roce_icrc_copy() of frame @p f as parsed, then with byte @p at
 * flipped (ICRC-covered, not masked): 1 and 0, the copy the payload's bytes either way */
static void
check_after_parse(uint8_t *f, uint32_t len, const char *name)
{
	static uint8_t dst[4096 + 64];
	struct roce_view v;
	uint32_t at[2];

	if (roce_parse(f, len, 0, &v) != ROCE_V_OK)
		fail_msg("%s: does not parse", name);
	assert_true(roce_view_in_one(&v));
	assert_int_equal(roce_icrc_check(&v), 1);
	memset(dst, 0xEE, sizeof(dst));
	assert_int_equal(roce_icrc_copy(&v, dst), 1);
	assert_memory_equal(dst, v.payload, v.payload_len);
	assert_int_equal(dst[v.payload_len], 0xEE);
	/* the PSN's low byte, and the last payload byte (without one, the PSN's middle byte) */
	at[0] = v.bth_off + 11;
	at[1] = v.payload_len ? v.payload_off + v.payload_len - 1 : v.bth_off + 10u;
	for (int k = 0; k < 2; k++) {
		f[at[k]] ^= 0x01;
		assert_int_equal(roce_parse(f, len, 0, &v), ROCE_V_OK);
		if (roce_icrc_check(&v) != 0 || roce_icrc_copy(&v, dst) != 0)
			fail_msg("%s: byte %u flipped, the ICRC still passes", name, at[k]);
		assert_memory_equal(dst, v.payload, v.payload_len);
		f[at[k]] ^= 0x01;
	}
}

/*
 * The ICRC of a frame parsed without it: the vectors (IPv4 by Scapy, IPv6, VLAN), and
 * writes of every payload length around crc_copy()'s vector steps, IPv4 and IPv6.
 */
static void
test_icrc_after_parse(void **state)
{
	static const uint32_t lens[] = { 0, 1, 4, 63, 255, 256, 257, 300, 1024, 1027, 4096 };
	struct roce_path path6 = path4;
	uint8_t f[8192];

	(void)state;
	path6.ip_version = 6;
	for (int i = 0; i < nvectors; i++) {
		memcpy(f, vectors[i].frame, vectors[i].len);
		check_after_parse(f, vectors[i].len, vectors[i].name);
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		int n = build_write(f, sizeof(f), &path4, lens[i]);

		assert_true(n > 0);
		check_after_parse(f, (uint32_t)n, "v4 write");
		n = build_write(f, sizeof(f), &path6, lens[i]);
		assert_true(n > 0);
		check_after_parse(f, (uint32_t)n, "v6 write");
	}
}

static void
test_fields(void **state)
{
	uint8_t f[8192];
	struct roce_view v;
	int len = build_write(f, sizeof(f), &path4, 1001);

	(void)state;
	assert_true(len > 0);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	assert_int_equal(v.opcode, 0x2B);
	assert_int_equal(v.dqpn, 0x123456);
	assert_int_equal(v.psn, 0xABCDEF);
	assert_int_equal(v.va, 0x1122334455667788ull);
	assert_int_equal(v.rkey, 0xCAFEBABE);
	assert_int_equal(v.dma_len, 1001);
	assert_int_equal(v.imm, 0x89ABCDEF);
	assert_int_equal(v.payload_len, 1001);
	assert_int_equal(v.pad, 3);
	assert_int_equal(v.pkey, 0xFFFF);
	assert_int_equal(v.l3_off, 14);
	assert_int_equal(v.bth_off, 14 + 20 + 8);
	assert_int_equal(v.reth_off, v.bth_off + 12);
	assert_int_equal(v.immdt_off, v.bth_off + 28);
	assert_int_equal(v.payload_off, v.bth_off + 32);
	assert_int_equal(v.udp_dport, 4791);
	assert_int_equal(v.payload[0], 0x5A);
	/* Ethernet padding after the packet is ignored */
	memset(f + len, 0xEE, 20);
	assert_int_equal(roce_parse(f, (uint32_t)len + 20, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
}

/* Expected verdict for a valid 0x2B frame cut to @p cut bytes. */
static enum roce_verdict
cut_verdict(uint32_t cut, uint32_t l3, unsigned int iplen)
{
	uint32_t bth = l3 + iplen + 8;

	if (cut < 14)
		return ROCE_V_TRUNC_ETH;
	if (l3 == 18 && cut < 18)
		return ROCE_V_TRUNC_VLAN;
	if (cut < l3 + iplen)
		return iplen == 40 || cut < l3 + 20 ? ROCE_V_TRUNC_IP : ROCE_V_BAD_IP_HDR_LEN;
	if (cut < bth)
		return ROCE_V_TRUNC_UDP;
	if (cut < bth + 12)
		return ROCE_V_TRUNC_BTH;
	if (cut < bth + 28)
		return ROCE_V_TRUNC_RETH;
	if (cut < bth + 32)
		return ROCE_V_TRUNC_IMMDT;
	return ROCE_V_TRUNC_PAYLOAD;
}

static void
test_every_truncation(void **state)
{
	struct roce_path paths[3] = { path4, path4, path4 };

	(void)state;
	paths[1].has_vlan = 1;
	paths[1].vlan_tci = 7;
	paths[2].ip_version = 6;
	for (int p = 0; p < 3; p++) {
		uint8_t f[8192];
		int len = build_write(f, sizeof(f), &paths[p], 300);
		uint32_t l3 = paths[p].has_vlan ? 18 : 14;
		unsigned int iplen = paths[p].ip_version == 6 ? 40 : 20;

		for (uint32_t cut = 0; cut < (uint32_t)len; cut++) {
			/* an exact-size heap copy, so an over-read is caught by ASan/valgrind */
			uint8_t *copy = malloc(cut ? cut : 1);
			struct roce_view v;
			enum roce_verdict r;

			memcpy(copy, f, cut);
			r = roce_parse(copy, cut, ROCE_PARSE_VERIFY_ICRC, &v);
			free(copy);
			if (r != cut_verdict(cut, l3, iplen))
				fail_msg("path %d cut %u: %s, expected %s", p, cut, roce_verdict_name(r),
					 roce_verdict_name(cut_verdict(cut, l3, iplen)));
		}
	}
}

struct edit_case {
	const char *what;
	uint32_t off;		/* from l3 */
	uint8_t val;
	uint8_t mask;		/* bits to replace; 0: XOR val instead */
	int fix_csum;
	int fix_icrc;
	enum roce_verdict want;
};

static void
test_named_verdicts(void **state)
{
	/* offsets relative to the IPv4 header; UDP at 20, BTH at 28 */
	static const struct edit_case cases[] = {
		{ "ip version 5", 0, 0x50, 0xF0, 1, 1, ROCE_V_BAD_IP_VERSION },
		{ "ihl 4", 0, 0x04, 0x0F, 0, 0, ROCE_V_BAD_IP_HDR_LEN },
		{ "total len 10", 2, 0, 0xFF, 1, 1, ROCE_V_BAD_IP_LEN },
		{ "bad ip csum", 10, 0x01, 0x00, 0, 0, ROCE_V_BAD_IP_CSUM },
		{ "more fragments", 6, 0x20, 0x20, 1, 1, ROCE_V_IP_FRAGMENT },
		{ "tcp", 9, 6, 0xFF, 1, 1, ROCE_V_NOT_UDP },
		{ "udp len", 25, 0x01, 0x00, 1, 1, ROCE_V_BAD_UDP_LEN },
		{ "udp port", 23, 0xB8, 0xFF, 1, 1, ROCE_V_NOT_ROCE_PORT },
		{ "tver 1", 29, 0x01, 0x0F, 1, 1, ROCE_V_BAD_BTH_VERSION },
		{ "opcode 0x15", 28, 0x15, 0xFF, 1, 1, ROCE_V_UNKNOWN_OPCODE },
		{ "payload flip", 100, 0x80, 0x00, 1, 0, ROCE_V_BAD_ICRC },
		{ "icrc flip", 0xFFFF, 0x01, 0x00, 1, 0, ROCE_V_BAD_ICRC },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct edit_case *c = &cases[i];
		uint8_t f[8192];
		int len = build_write(f, sizeof(f), &path4, 256);
		uint32_t off = c->off == 0xFFFF ? (uint32_t)len - 1 : 14 + c->off;
		struct roce_view v;
		enum roce_verdict r;

		if (c->off == 2)	/* total length: a 16-bit field */
			roce_put16(f + 16, 10);
		else
			f[off] = (uint8_t)((f[off] & ~c->mask) | (c->val & c->mask));
		if (c->mask == 0)
			f[off] ^= c->val;
		if (c->fix_csum)
			refresh(f, (uint32_t)len, 14, c->fix_icrc);
		r = roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v);
		if (r != c->want)
			fail_msg("%s: %s, expected %s", c->what, roce_verdict_name(r),
				 roce_verdict_name(c->want));
	}
}

static void
test_not_ip_and_pad(void **state)
{
	uint8_t f[8192];
	struct roce_view v;
	int len;

	(void)state;
	len = build_write(f, sizeof(f), &path4, 64);
	roce_put16(f + 12, 0x0806);	/* ARP */
	assert_int_equal(roce_parse(f, (uint32_t)len, 0, &v), ROCE_V_NOT_IP);
	/* EtherType IPv6 on an IPv4 header */
	roce_put16(f + 12, ROCE_ETHER_TYPE_IPV6);
	assert_int_equal(roce_parse(f, (uint32_t)len, 0, &v), ROCE_V_BAD_IP_VERSION);

	/* an ACK (no payload allowed) carrying 4 payload bytes */
	{
		struct roce_pkt ack = { .opcode = 0x11, .dqpn = 5 };
		uint8_t g[256];
		int n = roce_build(g, sizeof(g), &path4, &ack, NULL, 0);

		assert_int_equal(roce_parse(g, (uint32_t)n, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
		/* grow IP and UDP lengths by 4 and insert 4 bytes before the ICRC */
		memmove(g + n, g + n - 4, 4);
		memset(g + n - 4, 0xAB, 4);
		roce_put16(g + 16, (uint16_t)(roce_get16(g + 16) + 4));
		roce_put16(g + 38, (uint16_t)(roce_get16(g + 38) + 4));
		refresh(g, (uint32_t)n + 4, 14, 1);
		assert_int_equal(roce_parse(g, (uint32_t)n + 4, ROCE_PARSE_VERIFY_ICRC, &v),
				 ROCE_V_UNEXPECTED_PAYLOAD);
	}
	/* pad count 3 on an empty payload */
	len = build_write(f, sizeof(f), &path4, 0);
	f[14 + 28 + 1] |= 0x30;
	refresh(f, (uint32_t)len, 14, 1);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_BAD_PAD);
	/* UDP payload not a multiple of 4: drop two bytes of the ICRC region */
	len = build_write(f, sizeof(f), &path4, 8);
	roce_put16(f + 16, (uint16_t)(roce_get16(f + 16) - 2));
	roce_put16(f + 38, (uint16_t)(roce_get16(f + 38) - 2));
	refresh(f, (uint32_t)len - 2, 14, 0);
	assert_int_equal(roce_parse(f, (uint32_t)len - 2, 0, &v), ROCE_V_BAD_PAD);
	/* UDP length leaves no room for the ICRC after the ImmDt */
	len = build_write(f, sizeof(f), &path4, 0);
	roce_put16(f + 16, (uint16_t)(roce_get16(f + 16) - 4));
	roce_put16(f + 38, (uint16_t)(roce_get16(f + 38) - 4));
	refresh(f, (uint32_t)len - 4, 14, 0);
	assert_int_equal(roce_parse(f, (uint32_t)len - 4, 0, &v), ROCE_V_TRUNC_ICRC);
	/* the IPv4 checksum check can be turned off */
	len = build_write(f, sizeof(f), &path4, 64);
	f[14 + 10] ^= 0xFF;
	assert_int_equal(roce_parse(f, (uint32_t)len, 0, &v), ROCE_V_BAD_IP_CSUM);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_NO_IP_CSUM, &v), ROCE_V_OK);
}

/* Random frames and random mutations of valid frames: a verdict, and bounds respected. */
static void
test_random_bytes(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	uint8_t base[3][8192];
	int blen[3];
	struct roce_path p6 = path4;

	(void)state;
	p6.ip_version = 6;
	blen[0] = build_write(base[0], sizeof(base[0]), &path4, 512);
	blen[1] = build_write(base[1], sizeof(base[1]), &p6, 100);
	blen[2] = build_write(base[2], sizeof(base[2]), &path4, 0);
	for (int it = 0; it < 200000; it++) {
		uint8_t *buf;
		uint32_t len;
		struct roce_view v;
		enum roce_verdict r;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		if (it & 1) {
			len = (uint32_t)(x % 200);
			buf = malloc(len ? len : 1);
			for (uint32_t i = 0; i < len; i++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				buf[i] = (uint8_t)x;
			}
			if (len > 14 && (x & 2))
				roce_put16(buf + 12, (x & 4) ? 0x0800 : 0x86DD);
		} else {
			int b = (int)(x % 3);

			len = (uint32_t)blen[b];
			buf = malloc(len);
			memcpy(buf, base[b], len);
			for (int k = 0; k < 1 + (int)(x >> 60); k++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				buf[(x >> 8) % len] = (uint8_t)x;	/* flip bytes inside the frame */
			}
		}
		r = roce_parse(buf, len, ROCE_PARSE_VERIFY_ICRC, &v);
		assert_true((unsigned int)r < ROCE_V_COUNT);
		if (r == ROCE_V_OK)
			assert_true(v.payload + v.payload_len + v.pad + 4 <= buf + len);
		free(buf);
	}
}

/*
 * roce_parse_sg() with ROCE_PARSE_ICRC_LATER of the pieces @p seg of a frame that
 * roce_parse() with the ICRC gives @p r and @p v for: the ICRC left unchecked exactly when
 * the pad (if any) follows the payload in its piece, and then roce_icrc_check() and
 * roce_icrc_copy() find what the parser would have (the copy made either way); else
 * checked as it is parsed.
 */
static void
check_sg_later(const struct roce_seg *seg, unsigned int n, const struct roce_view *v,
	       enum roce_verdict r)
{
	static uint8_t dst[8192 + 1];
	uint32_t end = v->payload_off + v->payload_len, pos = 0, room = seg[0].len;
	struct roce_view w;
	enum roce_verdict rl;
	int left;

	/* the end of the piece the payload lies in (an empty one: the first) */
	for (unsigned int i = 0; v->payload_len && i < n; pos += seg[i++].len)
		if (v->payload_off < pos + seg[i].len) {
			room = pos + seg[i].len;
			break;
		}
	left = end + v->pad <= room;
	assert_int_equal(roce_parse_sg(seg, n, ROCE_PARSE_ICRC_LATER, &w, &rl), 1);
	assert_int_equal(w.icrc_checked, !left);
	if (!left) {
		assert_int_equal(rl, r);
		return;
	}
	assert_int_equal(rl, ROCE_V_OK);
	assert_int_equal(roce_icrc_check(&w), r == ROCE_V_OK);
	memset(dst, 0xEE, sizeof(dst));
	assert_int_equal(roce_icrc_copy(&w, dst), r == ROCE_V_OK);
	assert_memory_equal(dst, v->payload, v->payload_len);
	assert_int_equal(dst[v->payload_len], 0xEE);
}

/*
 * roce_parse_sg() of frame @p f cut at @p ncut offsets (ascending), each piece in a buffer
 * of its own (so a read past a piece is a sanitizer error): it parses or declines exactly
 * as the layout says, and what it parses matches roce_parse() of the whole.
 */
static void
check_sg(const uint8_t *f, uint32_t len, const uint32_t *cut, unsigned int ncut)
{
	struct roce_seg seg[4];
	uint8_t *piece[4];
	struct roce_view v, w;
	enum roce_verdict r, rs = ROCE_V_COUNT;
	uint32_t from = 0;
	unsigned int n = ncut + 1;
	int ret, want;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t to = i < ncut ? cut[i] : len;

		piece[i] = malloc(to - from ? to - from : 1);
		memcpy(piece[i], f + from, to - from);
		seg[i] = (struct roce_seg){ .data = piece[i], .len = to - from };
		from = to;
	}
	r = roce_parse(f, len, ROCE_PARSE_VERIFY_ICRC, &v);
	ret = roce_parse_sg(seg, n, ROCE_PARSE_VERIFY_ICRC, &w, &rs);
	want = r == ROCE_V_OK || r == ROCE_V_BAD_ICRC;
	if (want) {
		/* the headers in the first piece, the payload in one piece */
		uint32_t a = v.payload_off, b = a + v.payload_len, pos = 0;

		want = seg[0].len >= a;
		for (unsigned int i = 0; want && v.payload_len && i < n; pos += seg[i++].len)
			if (a < pos + seg[i].len) {
				want = b <= pos + seg[i].len;
				break;
			}
	}
	assert_int_equal(ret, want);
	if (ret) {
		assert_int_equal(rs, r);
		assert_ptr_equal(w.frame, piece[0]);
		assert_memory_equal(w.payload, v.payload, v.payload_len);
		w.frame = v.frame;
		w.payload = v.payload;
		assert_memory_equal(&w, &v, sizeof(v));
		check_sg_later(seg, n, &v, r);
	}
	for (unsigned int i = 0; i < n; i++)
		free(piece[i]);
}

/* A frame in segments: every one and two cuts of short frames, the sender's layouts of long ones. */
static void
test_segments(void **state)
{
	static uint8_t f[8192];
	struct roce_path p6 = path4, pv = path4;
	const struct roce_path *paths[] = { &path4, &p6, &pv };
	const uint32_t plens[] = { 0, 1, 3, 40, 4096 };
	uint64_t x = 0x2545F4914F6CDD1Dull;
	struct roce_view v;

	(void)state;
	p6.ip_version = 6;
	pv.has_vlan = 1;
	pv.vlan_tci = 7;
	for (unsigned int pi = 0; pi < 3; pi++) {
		for (unsigned int li = 0; li < sizeof(plens) / sizeof(plens[0]); li++) {
			uint32_t len = (uint32_t)build_write(f, sizeof(f), paths[pi], plens[li]);
			uint32_t po, pe;

			assert_int_equal(roce_parse(f, len, 0, &v), ROCE_V_OK);
			po = v.payload_off;
			pe = po + v.payload_len;
			/* headers | payload | pad and ICRC, as a zero-copy sender chains them */
			check_sg(f, len, (uint32_t[]){ po, pe }, 2);
			check_sg(f, len, (uint32_t[]){ po, pe, len - 2 }, 3);
			check_sg(f, len, (uint32_t[]){ po }, 1);
			check_sg(f, len, (uint32_t[]){ pe }, 1);
			if (len <= 200) {
				for (uint32_t a = 0; a <= len; a++)
					for (uint32_t b = a; b <= len; b++)
						check_sg(f, len, (uint32_t[]){ a, b }, 2);
				continue;
			}
			for (int it = 0; it < 2000; it++) {
				uint32_t c[3];

				for (int k = 0; k < 3; k++) {
					x ^= x << 13; x ^= x >> 7; x ^= x << 17;
					c[k] = (uint32_t)(x % (len + 1));
				}
				for (int k = 1; k < 3; k++)	/* ascending */
					for (int j = k; j > 0 && c[j] < c[j - 1]; j--) {
						uint32_t t = c[j];

						c[j] = c[j - 1];
						c[j - 1] = t;
					}
				check_sg(f, len, c, 3);
			}
		}
	}
	/* IPv4 options (IHL 6), then 6 bytes of Ethernet trailer past the IP length: every cut */
	{
		uint32_t len = (uint32_t)build_write(f, sizeof(f), &path4, 40);

		memmove(f + 14 + 24, f + 14 + 20, len - 14 - 20);
		memset(f + 14 + 20, 1, 4);	/* four NOPs */
		f[14] = 0x46;
		roce_put16(f + 16, (uint16_t)(roce_get16(f + 16) + 4));
		len += 4;
		refresh(f, len, 14, 1);
		assert_int_equal(roce_parse(f, len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
		assert_int_equal(v.ip_hdr_len, 24);
		memset(f + len, 0xEE, 6);
		for (uint32_t n = len; n <= len + 6; n += 6)
			for (uint32_t a = 0; a <= n; a++)
				for (uint32_t b = a; b <= n; b++)
					check_sg(f, n, (uint32_t[]){ a, b }, 2);
	}
	/* a bad ICRC is found in place; a broken header declines (the caller copies) */
	{
		uint32_t len = (uint32_t)build_write(f, sizeof(f), &path4, 4096);
		uint32_t po = len - 4096 - 4, pe = len - 4;
		struct roce_seg seg[3] = { { f, po }, { f + po, 4096 }, { f + pe, 4 } };
		enum roce_verdict r;

		f[po + 100] ^= 1;
		assert_int_equal(roce_parse_sg(seg, 3, ROCE_PARSE_VERIFY_ICRC, &v, &r), 1);
		assert_int_equal(r, ROCE_V_BAD_ICRC);
		assert_int_equal(roce_parse_sg(seg, 3, 0, &v, &r), 1);
		assert_int_equal(r, ROCE_V_OK);
		assert_int_equal(v.icrc_checked, 0);
		f[14] = 0x55;
		assert_int_equal(roce_parse_sg(seg, 3, ROCE_PARSE_VERIFY_ICRC, &v, &r), 0);
		assert_int_equal(roce_parse_sg(seg, 0, ROCE_PARSE_VERIFY_ICRC, &v, &r), 0);
	}
	/* mutated frames: declined, or the verdict and view of the whole */
	for (int it = 0; it < 20000; it++) {
		uint32_t len = (uint32_t)build_write(f, sizeof(f), paths[it % 3], (uint32_t)(it % 97));
		uint32_t c[2];

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		f[(x >> 8) % len] ^= (uint8_t)(1u << (x & 7));
		c[0] = (uint32_t)((x >> 20) % (len + 1));
		c[1] = c[0] + (uint32_t)((x >> 40) % (len + 1 - c[0]));
		check_sg(f, len, c, 2);
	}
}

static void
test_verdict_names_unique(void **state)
{
	(void)state;
	for (int i = 0; i < ROCE_V_COUNT; i++) {
		assert_non_null(roce_verdict_doc((enum roce_verdict)i));
		for (int j = i + 1; j < ROCE_V_COUNT; j++)
			assert_string_not_equal(roce_verdict_name((enum roce_verdict)i),
						roce_verdict_name((enum roce_verdict)j));
	}
	assert_string_equal(roce_verdict_name(ROCE_V_OK), "ok");
	assert_string_equal(roce_verdict_name(ROCE_V_COUNT), "invalid");
}

/* A frame as one line of text: every field where it belongs, cut short and never overrun. */
static void
test_format(void **state)
{
	const struct sdr_imm_split split = SDR_IMM_SPLIT_DEFAULT;
	struct sdr_imm_fields imm = sdr_imm_unpack(&split, 0x89ABCDEF);
	char line[ROCE_FORMAT_MAX], want[ROCE_FORMAT_MAX], small[24];
	uint8_t f[8192];
	struct roce_view v;
	int len = build_write(f, sizeof(f), &path4, 1001);

	(void)state;
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	snprintf(want, sizeof(want), "10.0.0.1.%u > 10.0.0.2.4791 %s qpn 0x123456 psn 11259375 "
		 "va 0x1122334455667788 rkey 0xcafebabe len 1001 imm 0x89abcdef [msg %u off %u "
		 "frag 0x%x] payload 1001 icrc ok", roce_qpn_sport(0x123456),
		 roce_opcode_name(0x2B), imm.msg_id, imm.pkt_off, imm.frag);
	assert_string_equal(roce_format_view(line, sizeof(line), f, &v, ROCE_V_OK, &split), want);
	/* a broken ICRC is said; a frame cut inside the UDP header has no ports to show */
	f[len - 1] ^= 1;
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_BAD_ICRC);
	assert_non_null(strstr(roce_format_view(line, sizeof(line), f, &v, ROCE_V_BAD_ICRC, &split),
			       " icrc bad"));
	assert_int_equal(roce_parse(f, 14 + 20 + 4, 0, &v), ROCE_V_TRUNC_UDP);
	assert_string_equal(roce_format_view(line, sizeof(line), f, &v, ROCE_V_TRUNC_UDP, &split),
			    "not RoCEv2: trunc_udp");
	memset(small, 'x', sizeof(small));
	assert_int_equal(roce_parse(f, (uint32_t)len, 0, &v), ROCE_V_OK);
	roce_format_view(small, sizeof(small) - 4, f, &v, ROCE_V_OK, &split);
	assert_int_equal(strlen(small), sizeof(small) - 5);
	assert_int_equal(small[sizeof(small) - 3], 'x');
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_parse),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_icrc_after_parse),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_named_verdicts),
		cmocka_unit_test(test_not_ip_and_pad),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_verdict_names_unique),
		cmocka_unit_test(test_format),
	};

	if (load_vectors(argc > 1 ? argv[1] : "tests/data/icrc_vectors.txt") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
