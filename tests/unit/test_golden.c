/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The same bytes on every architecture: frames with their ICRC (built whole, built from a
 * template with the payload left in place, and checked again), CRCs over buffers at every
 * alignment, erasure-code parity and decodes (mds and xor, ISA-L's own code for the CPU it
 * runs on), RSS hashes and the test pattern, all from seeded inputs, each category reduced
 * to a SHA-256. The digests are compared with tests/data/golden-digests.txt, written on
 * x86-64; the arm64 build (make test-arm64) compares with the same file, so a pass on both
 * means byte-identical results. --print writes the digests instead (to regenerate the file
 * after a deliberate change of an output).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ec_codec.h"
#include "icrc.h"
#include "msg_pattern.h"
#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "rss.h"
#include "sdr_sim.h"

#define NCAT 8

struct digest {
	const char *name;
	EVP_MD_CTX *ctx;
	uint64_t items;
};

static struct digest cats[NCAT] = {
	{ .name = "frame_icrc" }, { .name = "frame_icrc_sg" }, { .name = "crc_aligned" },
	{ .name = "ec_mds_parity" }, { .name = "ec_mds_decode" }, { .name = "ec_xor" },
	{ .name = "rss" }, { .name = "pattern" },
};

static void
add(int c, const void *p, size_t n)
{
	EVP_DigestUpdate(cats[c].ctx, p, n);
	cats[c].items++;
}

static void
add32(int c, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	add(c, b, 4);
}

static void
fill(struct sdr_rng *r, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)sdr_rng_next(r);
}

static int failures;

static void
fail(const char *what)
{
	fprintf(stderr, "test_golden: %s\n", what);
	failures++;
}

static void
random_path(struct sdr_rng *r, struct roce_path *path)
{
	memset(path, 0, sizeof(*path));
	fill(r, path->dst_mac, 6);
	fill(r, path->src_mac, 6);
	path->has_vlan = sdr_rng_next(r) & 1;
	path->vlan_tci = (uint16_t)sdr_rng_next(r);
	path->ip_version = sdr_rng_next(r) & 1 ? 6 : 4;
	fill(r, path->src_ip, 16);
	fill(r, path->dst_ip, 16);
	path->tclass = (uint8_t)sdr_rng_next(r);
	path->ttl = (uint8_t)sdr_rng_next(r);
	path->flow_label = (uint32_t)sdr_rng_next(r) & 0xFFFFF;
	path->udp_sport = (uint16_t)(sdr_rng_next(r) & 1 ? 0 : 0xC000 | sdr_rng_next(r));
	path->pkey = (uint16_t)sdr_rng_next(r);
}

static void
random_pkt(struct sdr_rng *r, struct roce_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
	pkt->se = sdr_rng_next(r) & 1;
	pkt->dqpn = (uint32_t)sdr_rng_next(r) & 0xFFFFFF;
	pkt->psn = (uint32_t)sdr_rng_next(r) & 0xFFFFFF;
	pkt->va = sdr_rng_next(r);
	pkt->rkey = (uint32_t)sdr_rng_next(r);
	pkt->imm = (uint32_t)sdr_rng_next(r);
}

/* Frames built whole and from a template, parsed back with their ICRC checked. */
static void
frames(struct sdr_rng *r)
{
	static uint8_t payload[9000], frame[9300], hdr[256];

	for (int i = 0; i < 400; i++) {
		struct roce_path path;
		struct roce_pkt pkt;
		struct roce_tmpl t;
		struct roce_view v;
		uint32_t len = (uint32_t)(sdr_rng_next(r) % 8193);
		uint8_t tail[8];
		unsigned int tl;
		int n, h;

		random_path(r, &path);
		random_pkt(r, &pkt);
		pkt.dma_len = len;
		fill(r, payload, len);
		n = roce_build(frame, sizeof(frame), &path, &pkt, payload, len);
		if (n < 0) {
			fail("roce_build refused a frame");
			continue;
		}
		add(0, frame, (size_t)n);
		if (roce_parse(frame, (uint32_t)n, ROCE_PARSE_VERIFY_ICRC, &v) != ROCE_V_OK ||
		    !v.icrc_checked || roce_parse_rw(frame, (uint32_t)n, ROCE_PARSE_VERIFY_ICRC,
						     &v) != ROCE_V_OK)
			fail("a frame built here does not parse with its ICRC");
		/* the zero-copy packetizer's way: headers from a template, the ICRC over the
		 * payload where it lies; the same frame */
		if (roce_tmpl_init(&t, &path, pkt.opcode) != 0) {
			fail("roce_tmpl_init");
			continue;
		}
		h = roce_tmpl_build_sg(&t, hdr, sizeof(hdr), &pkt, payload, len, tail, &tl);
		if (h < 0 || (size_t)h + len + tl != (size_t)n || memcmp(hdr, frame, (size_t)h) != 0 ||
		    memcmp(tail, frame + h + len, tl) != 0)
			fail("a template frame differs from the frame built whole");
		else
			add(1, tail, tl);
	}
}

/* CRCs over every alignment and many lengths (the vector paths and their tails). */
static void
crcs(struct sdr_rng *r)
{
	static uint8_t buf[16384 + 64];

	fill(r, buf, sizeof(buf));
	for (unsigned int off = 0; off < 64; off++)
		for (unsigned int len = 0; len < 600; len += 1 + len / 8) {
			add32(2, icrc_update(0, buf + off, len));
			add32(2, icrc_update(0xFFFFFFFFu, buf + off, len * 27));
		}
}

static void
codes(struct sdr_rng *r)
{
	static const char *specs[] = { "mds:32,8", "mds:10,4", "mds:8,2", "mds:4,4", "xor:32,8",
				       "xor:8,2" };
	static const uint32_t lens[] = { 4096, 1024, 8, 4000, 65536 };

	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			struct ec_spec spec;
			struct ec_codec *c;
			uint32_t len = lens[l];
			uint8_t *buf, *keep, *ptr[64];
			int xor = specs[s][0] == 'x';

			if (ec_spec_parse(specs[s], &spec) != 0 ||
			    ec_codec_create(&spec, EC_CACHE_DEFAULT, &c) != 0) {
				fail("a code the codec refuses");
				continue;
			}
			buf = malloc((size_t)(spec.k + spec.m) * len);
			keep = malloc((size_t)spec.k * len);
			for (unsigned int i = 0; i < spec.k + spec.m; i++)
				ptr[i] = buf + (size_t)i * len;
			fill(r, buf, (size_t)spec.k * len);
			memcpy(keep, buf, (size_t)spec.k * len);
			if (ec_encode(c, (const uint8_t *const *)ptr, ptr + spec.k, len) != 0)
				fail("ec_encode");
			add(xor ? 5 : 3, ptr[spec.k], (size_t)spec.m * len);
			/* lose what the code can repair: up to m chunks (xor: one per group) */
			for (int trial = 0; trial < 4; trial++) {
				struct ec_mask present;
				unsigned int lost = 0;

				ec_mask_fill(&present, spec.k + spec.m);
				if (xor) {
					for (unsigned int g = 0; g < spec.m; g++)
						if (sdr_rng_next(r) & 1) {
							unsigned int members = (spec.k - g + spec.m - 1) / spec.m;
							unsigned int i = g + spec.m *
								(unsigned int)(sdr_rng_next(r) % members);

							ec_mask_clear(&present, i);
							lost++;
						}
				} else {
					unsigned int want = 1 + (unsigned int)(sdr_rng_next(r) % spec.m);

					while (lost < want) {
						unsigned int i = (unsigned int)(sdr_rng_next(r) %
										(spec.k + spec.m));

						if (ec_mask_test(&present, i)) {
							ec_mask_clear(&present, i);
							lost++;
						}
					}
				}
				for (unsigned int i = 0; i < spec.k; i++)
					if (!ec_mask_test(&present, i))
						memset(ptr[i], 0xA5, len);
				if (ec_decode(c, &present, ptr, len) < 0 ||
				    memcmp(buf, keep, (size_t)spec.k * len) != 0)
					fail("a decode that does not give the data back");
				add(xor ? 5 : 4, buf, (size_t)spec.k * len);
			}
			free(buf);
			free(keep);
			ec_codec_destroy(c);
		}
}

static void
hashes(struct sdr_rng *r)
{
	uint8_t key[RSS_KEY_LEN];

	for (int i = 0; i < 2000; i++) {
		uint8_t src[16], dst[16], ver = i & 1 ? 6 : 4;

		fill(r, src, 16);
		fill(r, dst, 16);
		add32(6, rss_hash_udp(rss_default_key, ver, src, dst, (uint16_t)sdr_rng_next(r),
				      4791));
		if (i % 100 == 0) {
			fill(r, key, sizeof(key));
			add32(6, rss_pick_sport(key, ver, src, dst, 4791, 0xC000, 8,
						(unsigned int)(sdr_rng_next(r) % 8)));
		}
	}
}

static void
patterns(struct sdr_rng *r)
{
	static uint8_t buf[4096 * 8 + 65536];

	for (int i = 0; i < 200; i++) {
		uint64_t off = 8 * (sdr_rng_next(r) % 4096), len = sdr_rng_next(r) % 65536;
		uint64_t seed = sdr_rng_next(r), msg = sdr_rng_next(r) % 1000;

		/* bytes [off, off + len) of the message, where they lie in it */
		sdr_pattern_fill(buf, off, len, seed, msg);
		add(7, buf + off, (size_t)len);
		add32(7, sdr_pattern_imm(seed, msg));
	}
}

int
main(int argc, char **argv)
{
	int print = argc > 1 && strcmp(argv[1], "--print") == 0;
	const char *golden = print ? NULL : argc > 1 ? argv[1] : NULL;
	char want[NCAT][200];
	struct sdr_rng r;
	FILE *f;

	for (int c = 0; c < NCAT; c++) {
		cats[c].ctx = EVP_MD_CTX_new();
		EVP_DigestInit_ex(cats[c].ctx, EVP_sha256(), NULL);
	}
	sdr_rng_seed(&r, 20261127);
	frames(&r);
	crcs(&r);
	codes(&r);
	hashes(&r);
	patterns(&r);
	memset(want, 0, sizeof(want));
	if (golden != NULL) {
		char line[256], name[64], hex[200];

		if ((f = fopen(golden, "r")) == NULL) {
			fprintf(stderr, "test_golden: %s: %s\n", golden, strerror(errno));
			return 1;
		}
		while (fgets(line, sizeof(line), f))
			if (line[0] != '#' && sscanf(line, "%63s %199s", name, hex) == 2)
				for (int c = 0; c < NCAT; c++)
					if (strcmp(name, cats[c].name) == 0)
						snprintf(want[c], sizeof(want[c]), "%s", hex);
		fclose(f);
	}
	if (print)
		printf("# test_golden's digests (tests/unit/test_golden.c): SHA-256 per category\n");
	for (int c = 0; c < NCAT; c++) {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int n;
		char hex[2 * EVP_MAX_MD_SIZE + 1];

		EVP_DigestFinal_ex(cats[c].ctx, md, &n);
		EVP_MD_CTX_free(cats[c].ctx);
		for (unsigned int i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		if (print) {
			printf("%s %s\n", cats[c].name, hex);
		} else if (golden != NULL && strcmp(want[c], hex) != 0) {
			fprintf(stderr, "test_golden: %s: %s, the golden file says %s (%" PRIu64
				" items)\n", cats[c].name, hex, want[c][0] ? want[c] : "nothing",
				cats[c].items);
			failures++;
		} else {
			printf("ok: %s %s (%" PRIu64 " items)\n", cats[c].name, hex, cats[c].items);
		}
	}
	return failures ? 1 : 0;
}
