/* SPDX-License-Identifier: BSD-3-Clause */
/* The frame builder: round trip through the parser for every size and both IP versions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "roce_build.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_parse.h"

static struct roce_path
mkpath(int ipv, int vlan)
{
	struct roce_path p = {
		.dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
		.ip_version = (uint8_t)ipv, .tclass = 0x6A, .ttl = 9, .flow_label = 0xABCDE,
	};

	if (ipv == 4) {
		memcpy(p.src_ip, (uint8_t[]){ 192, 168, 1, 1 }, 4);
		memcpy(p.dst_ip, (uint8_t[]){ 192, 168, 1, 2 }, 4);
	} else {
		for (int i = 0; i < 16; i++) {
			p.src_ip[i] = (uint8_t)(0xFD + i);
			p.dst_ip[i] = (uint8_t)(0xFD + 2 * i);
		}
	}
	if (vlan) {
		p.has_vlan = 1;
		p.vlan_tci = (uint16_t)(0x6000 | vlan);
	}
	return p;
}

/* roce_build_sg(): headers + the payload where it lies + tail are the bytes roce_build() writes. */
static void
test_scatter_gather(void **state)
{
	static uint8_t payload[4096], frame[4096 + 128], sg[4096 + 128];

	(void)state;
	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 37 + 11);
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		for (int vlan = 0; vlan <= 1; vlan++) {
			struct roce_path path = mkpath(ipv, vlan ? 7 : 0);

			for (uint32_t n = 0; n <= 4096; n += n < 16 ? 1 : 251) {
				struct roce_pkt pkt = {
					.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, .dqpn = 0x300 + n,
					.psn = n, .va = n, .rkey = 5, .dma_len = n, .imm = n,
				};
				uint8_t hdr[128], tail[ROCE_BUILD_TAIL_MAX];
				unsigned int tl;
				int len = roce_build(frame, sizeof(frame), &path, &pkt, payload, n);
				int h = roce_build_sg(hdr, roce_build_hdr_len(&path, pkt.opcode), &path,
						      &pkt, payload, n, tail, &tl);

				assert_int_equal(h, roce_build_hdr_len(&path, pkt.opcode));
				memcpy(sg, hdr, (size_t)h);
				memcpy(sg + h, payload, n);
				memcpy(sg + h + n, tail, tl);
				assert_int_equal(h + (int)n + (int)tl, len);
				assert_memory_equal(sg, frame, (size_t)len);
				/* the same from the path's template */
				{
					struct roce_tmpl t;
					uint8_t h2[128], tail2[ROCE_BUILD_TAIL_MAX];
					unsigned int tl2;

					assert_int_equal(roce_tmpl_init(&t, &path, pkt.opcode), 0);
					for (int v = 0; v < 3; v++) {	/* flags and fields vary */
						pkt.se = v & 1;
						pkt.ackreq = v == 2;
						pkt.psn = n * 7 + (uint32_t)v;
						len = roce_build(frame, sizeof(frame), &path, &pkt,
								 payload, n);
						assert_int_equal(roce_tmpl_build_sg(&t, h2, sizeof(h2), &pkt,
										    payload, n, tail2,
										    &tl2), h);
						memcpy(sg, h2, (size_t)h);
						memcpy(sg + h, payload, n);
						memcpy(sg + h + n, tail2, tl2);
						assert_int_equal(h + (int)n + (int)tl2, len);
						assert_memory_equal(sg, frame, (size_t)len);
					}
					assert_int_equal(roce_tmpl_build_sg(&t, h2, (size_t)h - 1, &pkt,
									    payload, n, tail2, &tl2),
							 -ENOSPC);
				}
				/* one byte short of the headers: no room */
				assert_int_equal(roce_build_sg(hdr, (size_t)h - 1, &path, &pkt, payload,
							       n, tail, &tl), -ENOSPC);
			}
		}
	}
}

static void
test_round_trip_all_sizes(void **state)
{
	static uint8_t payload[4096], frame[4096 + 128];
	static const uint8_t opcodes[] = { ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, ROCE_OP_UC_SEND_ONLY };

	(void)state;
	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		for (int vlan = 0; vlan <= 1; vlan++) {
			struct roce_path path = mkpath(ipv, vlan ? 42 : 0);

			for (size_t o = 0; o < sizeof(opcodes); o++) {
				for (uint32_t n = 0; n <= 4096; n++) {
					struct roce_pkt pkt = {
						.opcode = opcodes[o], .dqpn = 0x10000 + n,
						.psn = n * 977, .va = (uint64_t)n << 20,
						.rkey = ~n, .dma_len = n, .imm = n * 0x01010101u,
						.ackreq = n & 1, .se = (n >> 1) & 1,
					};
					struct roce_view v;
					int len = roce_build(frame, sizeof(frame), &path, &pkt, payload, n);
					enum roce_verdict r;

					assert_int_equal(len, roce_build_frame_len(&path, pkt.opcode, n));
					r = roce_parse(frame, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v);
					if (r != ROCE_V_OK)
						fail_msg("ipv%d vlan %d op 0x%x size %u: %s", ipv, vlan,
							 pkt.opcode, n, roce_verdict_name(r));
					assert_int_equal(v.payload_len, n);
					assert_int_equal(v.pad, (4 - n % 4) % 4);
					if (n)
						assert_memory_equal(v.payload, payload, n);
					assert_int_equal(v.opcode, pkt.opcode);
					assert_int_equal(v.dqpn, pkt.dqpn);
					assert_int_equal(v.psn, pkt.psn & ROCE_PSN_MASK);
					assert_int_equal(v.ackreq, pkt.ackreq);
					assert_int_equal(v.se, pkt.se);
					assert_int_equal(v.has_vlan, vlan);
					assert_int_equal(v.ip_version, ipv);
					if (pkt.opcode == ROCE_OP_UC_RDMA_WRITE_ONLY_IMM) {
						assert_int_equal(v.va, pkt.va);
						assert_int_equal(v.rkey, pkt.rkey);
						assert_int_equal(v.dma_len, n);
						assert_int_equal(v.imm, pkt.imm);
					} else {
						assert_int_equal(v.reth_off, 0);
						assert_int_equal(v.immdt_off, 0);
					}
				}
			}
		}
	}
}

static void
test_headers_then_finish(void **state)
{
	uint8_t a[512], b[512];
	struct roce_path path = mkpath(6, 0);
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, .dqpn = 77, .psn = 3,
				.dma_len = 61, .imm = 5 };
	uint8_t payload[61];
	int hdr, len;

	(void)state;
	memset(payload, 0xC3, sizeof(payload));
	memset(a, 0x11, sizeof(a));
	memset(b, 0x11, sizeof(b));
	len = roce_build(a, sizeof(a), &path, &pkt, payload, sizeof(payload));
	hdr = roce_build_headers(b, sizeof(b), &path, &pkt, sizeof(payload));
	assert_int_equal(hdr, (int)roce_build_hdr_len(&path, pkt.opcode));
	memcpy(b + hdr, payload, sizeof(payload));
	assert_int_equal(roce_build_finish(b, &path, (unsigned int)hdr, sizeof(payload)),
			 (unsigned int)len);
	assert_memory_equal(a, b, (size_t)len);
}

static void
test_defaults_and_fields(void **state)
{
	uint8_t f[256];
	struct roce_path path = mkpath(4, 0);
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_SEND_ONLY, .dqpn = 0xABCDE, .becn = 1 };
	struct roce_view v;
	int len;

	(void)state;
	path.ttl = 0;
	len = roce_build(f, sizeof(f), &path, &pkt, "ctrl", 4);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	assert_int_equal(v.pkey, 0xFFFF);		/* default partition */
	assert_int_equal(f[14 + 8], 64);		/* default TTL */
	assert_true(v.udp_sport >= 0xC000);		/* RoCEv2 entropy range */
	assert_int_equal(v.becn, 1);
	assert_int_equal(v.ecn, 0x6A & 3);
	assert_int_equal(roce_get16(f + 14 + 6), ROCE_IPV4_DF);
	path.udp_sport = 1234;
	path.pkey = 0x8001;
	len = roce_build(f, sizeof(f), &path, &pkt, "ctrl", 4);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	assert_int_equal(v.udp_sport, 1234);
	assert_int_equal(v.pkey, 0x8001);
}

static void
test_errors(void **state)
{
	uint8_t f[8192];
	struct roce_path path = mkpath(4, 0);
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM };
	static uint8_t big[70000];

	(void)state;
	assert_int_equal(roce_build(f, 60, &path, &pkt, big, 100), -ENOSPC);
	assert_int_equal(roce_build(f, sizeof(f), &path, &pkt, big, 70000), -EMSGSIZE);
	pkt.opcode = 0x15;
	assert_int_equal(roce_build(f, sizeof(f), &path, &pkt, big, 4), -EINVAL);
	pkt.opcode = ROCE_OP_RC_ACK;
	assert_int_equal(roce_build(f, sizeof(f), &path, &pkt, big, 4), -EPROTO);
	assert_true(roce_build(f, sizeof(f), &path, &pkt, NULL, 0) > 0);
	path.ip_version = 5;
	assert_int_equal(roce_build(f, sizeof(f), &path, &pkt, NULL, 0), -EINVAL);
}

/* Every known opcode builds into a frame the parser accepts with the same headers. */
static void
test_all_opcodes(void **state)
{
	uint8_t f[512];
	struct roce_path path = mkpath(4, 3);

	(void)state;
	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode_info((uint8_t)op);
		struct roce_pkt pkt = { .opcode = (uint8_t)op, .dqpn = 9, .qkey = 0x11111111,
					.sqpn = 0x222, .syndrome = 0x1F, .msn = 0x333, .imm = 0x44 };
		struct roce_view v;
		uint32_t n = info->payload ? 13 : 0;
		int len;

		if (info->name == NULL)
			continue;
		len = roce_build(f, sizeof(f), &path, &pkt, "0123456789abc", n);
		assert_true(len > 0);
		assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
		assert_int_equal(v.ext, info->ext);
		assert_int_equal(v.payload_len, n);
		if (info->ext & ROCE_EXT_DETH)
			assert_int_equal(v.sqpn, 0x222);
		if (info->ext & ROCE_EXT_AETH)
			assert_int_equal(v.msn, 0x333);
		if (info->ext & ROCE_EXT_IMMDT)
			assert_int_equal(v.imm, 0x44);
	}
}

/*
 * roce_build() of @p pkt, and roce_tmpl_build_sg() of it with the room exactly the headers
 * or @p plenty: the header lengths and frame lengths agree. @return 0 when the headers, the
 * payload where it lies and the tail make the same bytes as roce_build(), and
 * roce_tmpl_headers_sg() with roce_icrc_rest_tail() after it writes the same headers and
 * tail.
 */
static int
sg_differs(const struct roce_tmpl *t, const struct roce_path *path, const struct roce_pkt *pkt,
	   const uint8_t *payload, uint32_t n, int plenty)
{
	static uint8_t frame[4096 + 256], sg[4096 + 256], cp[4096 + 256];
	uint8_t h2[128], h3[128], tail[ROCE_BUILD_TAIL_MAX], tail3[ROCE_BUILD_TAIL_MAX];
	unsigned int hl = roce_build_hdr_len(path, pkt->opcode), tl;
	int len = roce_build(frame, sizeof(frame), path, pkt, payload, n);
	int h = roce_tmpl_build_sg(t, h2, plenty ? sizeof(h2) : hl, pkt, payload, n, tail, &tl);
	struct roce_icrc_rest rest;

	assert_true(len > 0);
	assert_int_equal(h, (int)hl);
	memcpy(sg, h2, hl);
	memcpy(sg + hl, payload, n);
	memcpy(sg + hl + n, tail, tl);
	assert_int_equal(hl + n + tl, (unsigned int)len);
	/* in two steps, the pass over the payload apart */
	memset(tail3, 0xEE, sizeof(tail3));
	assert_int_equal(roce_tmpl_headers_sg(t, h3, plenty ? sizeof(h3) : hl, pkt, n, &rest),
			 (int)hl);
	assert_int_equal(roce_icrc_rest_len(&rest), tl);
	assert_int_equal(roce_icrc_rest_tail(&rest, payload, n, tail3), tl);
	assert_memory_equal(h3, h2, hl);
	assert_memory_equal(tail3, tail, tl);
	/* in one buffer, the payload copied in as its CRC is taken: room for it exactly (or
	 * plenty), and one byte short */
	memset(cp, 0xEE, sizeof(cp));
	assert_int_equal(roce_tmpl_build_copy(t, cp, plenty ? sizeof(cp) : (size_t)len, pkt,
					      payload, n), len);
	assert_memory_equal(cp, frame, (size_t)len);
	assert_int_equal(roce_tmpl_build_copy(t, cp, (size_t)len - 1, pkt, payload, n), -ENOSPC);
	return memcmp(sg, frame, (size_t)len) != 0;
}

/*
 * A template of every opcode, IPv4 and IPv6, with every per-frame field set (the source
 * port chosen per frame too) and the room exactly the headers or plenty: the bytes
 * roce_build() writes. The specialised path (UC WRITE Only with Immediate over IPv4) and
 * the general one compute the ICRC over the masked headers from the template's words;
 * at the payload length set with roce_tmpl_set_payload_len(), in two independent parts.
 */
static void
test_template_all_opcodes(void **state)
{
	static uint8_t payload[300];
	uint32_t x = 99;
	int rc;

	(void)state;
	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 53 + 1);
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		struct roce_path path = mkpath(ipv, ipv == 6 ? 3 : 0);

		for (unsigned int op = 0; op < 256; op++) {
			const struct roce_opcode_info *info = roce_opcode_info((uint8_t)op);
			struct roce_tmpl t;

			if (info->name == NULL)
				continue;
			assert_int_equal(roce_tmpl_init(&t, &path, (uint8_t)op), 0);
			/* frames of 148 B (v = 4) take the ICRC in two parts where the CPU can */
			assert_int_equal(roce_tmpl_set_payload_len(&t, 0), -EINVAL);
			assert_int_equal(roce_tmpl_set_payload_len(&t, 147), -EINVAL);
			rc = roce_tmpl_set_payload_len(&t, 148);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
			if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
				assert_true(rc == 0 && t.full_len == 148);
#endif
			assert_true(rc == 0 || rc == -ENOTSUP);
			for (int v = 0; v < 8; v++) {
				uint32_t n = info->payload ? (uint32_t)(v * 37) : 0;
				struct roce_pkt pkt = { .opcode = (uint8_t)op };

				x = x * 1103515245u + 12345u;
				pkt.dqpn = x & 0xFFFFFF;
				pkt.psn = (x >> 3) & 0xFFFFFF;
				pkt.va = ((uint64_t)x << 32) | (x ^ 0x5A5A5A5Au);
				pkt.rkey = x * 3;
				pkt.dma_len = x >> 5;
				pkt.imm = x * 7;
				pkt.qkey = x ^ 0x80000000u;
				pkt.sqpn = x >> 8;
				pkt.syndrome = (uint8_t)x;
				pkt.msn = x >> 4;
				pkt.se = v & 1;
				pkt.ackreq = (v >> 1) & 1;
				pkt.becn = (v >> 2) & 1;
				pkt.udp_sport = v & 1 ? (uint16_t)(0xC000 | x) : 0;
				if (sg_differs(&t, &path, &pkt, payload, n, v & 1))
					fail_msg("%s v%d, %u B: frames differ", info->name, ipv, n);
			}
		}
	}
}

/*
 * The hot path (a full frame of UC WRITE Only with Immediate over IPv4, its per-frame fields
 * on a precomputed template): the bytes roce_build() writes, with and without a VLAN tag,
 * a fixed source port or one from the QPN or one per frame, every BTH flag, the room
 * exactly the headers or plenty. A frame one byte shorter than the template's length
 * takes the general path and is right too.
 */
static void
test_template_fast(void **state)
{
	static uint8_t payload[4096];
	static const uint32_t lens[] = { 4096, 256 };
	uint32_t x = 4711;

	(void)state;
	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	for (int vlan = 0; vlan <= 1; vlan++) {
		for (int fixed = 0; fixed <= 1; fixed++) {
			for (unsigned int l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				struct roce_path path = mkpath(4, vlan ? 5 : 0);
				struct roce_tmpl t;

				path.udp_sport = fixed ? 0xC123 : 0;
				assert_int_equal(roce_tmpl_init(&t, &path,
								ROCE_OP_UC_RDMA_WRITE_ONLY_IMM), 0);
				assert_true(roce_tmpl_set_payload_len(&t, lens[l]) == 0 ||
					    t.full_len == 0);
				assert_int_equal(t.fast_len, lens[l]);
				for (int v = 0; v < 32; v++) {
					uint32_t n = lens[l] - (v >= 24 ? 4 : 0);
					uint8_t h2[128], tail[ROCE_BUILD_TAIL_MAX];
					struct roce_pkt pkt = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM };
					unsigned int tl;

					x = x * 1103515245u + 12345u;
					pkt.dqpn = x >> 4;	/* bits above the QPN's 24 too */
					pkt.psn = x * 5;
					pkt.va = (uint64_t)x << 31 ^ (x * 11u);
					pkt.rkey = x * 3;
					pkt.dma_len = n;
					pkt.imm = x * 7;
					pkt.se = v & 1;
					pkt.ackreq = (v >> 1) & 1;
					pkt.becn = (v >> 2) & 1;
					pkt.udp_sport = v & 8 ? (uint16_t)(0xC000 | x) : 0;
					if (sg_differs(&t, &path, &pkt, payload, n, v & 16))
						fail_msg("vlan %d fixed %d, %u B, v%d: frames differ", vlan,
							 fixed, n, v);
					assert_int_equal(roce_tmpl_build_sg(&t, h2,
									    roce_build_hdr_len(&path,
											       pkt.opcode) - 1,
									    &pkt, payload, n, tail, &tl),
							 -ENOSPC);
				}
			}
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_all_sizes),
		cmocka_unit_test(test_scatter_gather),
		cmocka_unit_test(test_headers_then_finish),
		cmocka_unit_test(test_defaults_and_fields),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_all_opcodes),
		cmocka_unit_test(test_template_all_opcodes),
		cmocka_unit_test(test_template_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
