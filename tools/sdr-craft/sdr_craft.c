/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-craft: write a pcap file of SDR traffic built with the project's own frame builder.
 * Each message becomes one UC RDMA WRITE Only with Immediate per MTU (the SDR data path)
 * and is followed by a UC SEND Only carrying a control payload. With --mix, foreign
 * RoCEv2 traffic (RC and UD opcodes, an ACK, a CNP), a frame with a bad ICRC, a truncated
 * frame and a non-RoCE UDP frame are added, so a decoder sees every verdict class.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_build.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "sdr_imm.h"
#include "units.h"

#define FRAME_MAX 16384

struct craft_opts {
	const char *out;
	int ipv6;
	int vlan;		/* -1: none */
	uint32_t mtu;
	uint64_t size;
	uint64_t max_msg;
	uint32_t messages;
	uint32_t qpn;
	uint32_t channels;
	uint32_t user_imm;
	uint32_t seed;
	int mix;
	struct sdr_imm_split split;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-craft [options] -o FILE\n"
"Write a pcap file of SDR RoCEv2 traffic built with the project's frame builder.\n"
"\n"
"  -o, --out FILE         pcap file to write (required)\n"
"      --ipv6             use IPv6 (default IPv4)\n"
"      --vlan VID         add an 802.1Q tag with this VLAN id (0-4095)\n"
"      --mtu BYTES        payload bytes per packet, 256..4096 (default 4096)\n"
"      --size BYTES       message size, e.g. 64KiB (default 64KiB)\n"
"      --max-msg BYTES    receive slot size: VA = slot * max-msg + offset (default 1MiB)\n"
"      --messages N       number of messages (default 2)\n"
"      --qpn N            first data QPN (default 0x100)\n"
"      --channels N       data QPNs used round-robin (default 1)\n"
"      --user-imm X       the user's 32-bit immediate (default 0xC0FFEE42)\n"
"      --imm-split A,B,C  message id / packet offset / fragment widths (default 10,18,4)\n"
"      --seed N           payload bytes are a function of this seed (default 1)\n"
"      --mix              add foreign traffic and malformed frames\n"
"  -h, --help             this text\n");
}

static int
die(const char *msg, const char *arg)
{
	fprintf(stderr, "sdr-craft: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return 2;
}

static void
path_init(struct roce_path *p, const struct craft_opts *o, int reverse)
{
	static const uint8_t mac_a[6] = { 0x02, 0x00, 0x5d, 0x00, 0x00, 0x01 };
	static const uint8_t mac_b[6] = { 0x02, 0x00, 0x5d, 0x00, 0x00, 0x02 };

	memset(p, 0, sizeof(*p));
	memcpy(p->src_mac, reverse ? mac_b : mac_a, 6);
	memcpy(p->dst_mac, reverse ? mac_a : mac_b, 6);
	if (o->vlan >= 0) {
		p->has_vlan = 1;
		p->vlan_tci = (uint16_t)o->vlan;
	}
	p->ip_version = o->ipv6 ? 6 : 4;
	if (o->ipv6) {
		inet_pton(AF_INET6, "fd00:5d::1", reverse ? p->dst_ip : p->src_ip);
		inet_pton(AF_INET6, "fd00:5d::2", reverse ? p->src_ip : p->dst_ip);
	} else {
		inet_pton(AF_INET, "10.0.0.1", reverse ? p->dst_ip : p->src_ip);
		inet_pton(AF_INET, "10.0.0.2", reverse ? p->src_ip : p->dst_ip);
	}
	p->tclass = 0x68;	/* DSCP 26 (a common RoCE class), ECN not-ECT */
}

static void
write_frame(pcap_dumper_t *d, const uint8_t *frame, unsigned int len, unsigned int *n)
{
	struct pcap_pkthdr h;

	memset(&h, 0, sizeof(h));
	/* a microsecond apart: past a million frames the seconds go on */
	h.ts.tv_sec = 1700000000 + *n / 1000000;
	h.ts.tv_usec = *n % 1000000;
	(*n)++;
	h.caplen = len;
	h.len = len;
	pcap_dump((u_char *)d, &h, frame);
}

/* Deterministic payload: byte i of message m is a function of seed, m and i. */
static void
fill_payload(uint8_t *buf, uint32_t len, uint32_t seed, uint32_t msg, uint64_t off)
{
	for (uint32_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32) ^ msg;

		x ^= x >> 29;
		buf[i] = (uint8_t)(x * 0xBF58476D1CE4E5B9ull >> 56);
	}
}

static int
emit(pcap_dumper_t *d, const struct roce_path *path, const struct roce_pkt *pkt,
     const uint8_t *payload, uint32_t plen, unsigned int *n, int corrupt_icrc, int truncate)
{
	static uint8_t frame[FRAME_MAX];
	int len = roce_build(frame, sizeof(frame), path, pkt, payload, plen);

	if (len < 0) {
		fprintf(stderr, "sdr-craft: cannot build opcode 0x%02x: %s\n", pkt->opcode,
			strerror(-len));
		return -1;
	}
	if (corrupt_icrc)
		frame[len - 1] ^= 0x5A;
	if (truncate)
		len = truncate;
	write_frame(d, frame, (unsigned int)len, n);
	return 0;
}

static int
emit_messages(pcap_dumper_t *d, const struct craft_opts *o, unsigned int *n)
{
	static uint8_t payload[4096];
	struct roce_path fwd, rev;
	uint32_t psn[64] = { 0 };
	uint32_t ch = 0;

	path_init(&fwd, o, 0);
	path_init(&rev, o, 1);
	for (uint32_t m = 0; m < o->messages; m++) {
		uint32_t slot = m % sdr_imm_max_msgs(&o->split);
		uint32_t npkts = (uint32_t)((o->size + o->mtu - 1) / o->mtu);
		uint8_t ctrl[16];
		struct roce_pkt c;

		if (o->size == 0)
			npkts = 1;
		for (uint32_t i = 0; i < npkts; i++) {
			uint64_t off = (uint64_t)i * o->mtu;
			uint32_t plen = (uint32_t)(o->size - off < o->mtu ? o->size - off : o->mtu);
			struct roce_pkt p = {
				.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM,
				.dqpn = o->qpn + ch,
				.psn = psn[ch]++ & ROCE_PSN_MASK,
				.va = (uint64_t)slot * o->max_msg + off,
				.rkey = 0x5d000001,
				.dma_len = plen,
				.imm = sdr_imm_pack(&o->split, slot, i,
						    sdr_imm_frag_of(&o->split, o->user_imm, i)),
			};

			if (o->size == 0)
				plen = 0;
			fill_payload(payload, plen, o->seed, m, off);
			if (emit(d, &fwd, &p, payload, plen, n, 0, 0) != 0)
				return -1;
			ch = (ch + 1) % o->channels;
		}
		/* an acknowledgement back to the sender's control QPN */
		memset(ctrl, 0, sizeof(ctrl));
		ctrl[0] = 1;			/* version */
		ctrl[1] = 1;			/* type */
		roce_put16(ctrl + 2, (uint16_t)slot);
		memset(&c, 0, sizeof(c));
		c.opcode = ROCE_OP_UC_SEND_ONLY;
		c.dqpn = o->qpn - 1;
		c.psn = m;
		if (emit(d, &rev, &c, ctrl, sizeof(ctrl), n, 0, 0) != 0)
			return -1;
	}
	return 0;
}

/* Foreign and malformed traffic: one frame per verdict class a receiver must survive. */
static int
emit_mix(pcap_dumper_t *d, const struct craft_opts *o, unsigned int *n)
{
	static uint8_t payload[256];
	struct roce_path fwd, rev;
	struct roce_pkt p;
	static uint8_t frame[256];

	path_init(&fwd, o, 0);
	path_init(&rev, o, 1);
	fill_payload(payload, sizeof(payload), o->seed, 999, 0);

	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_OP_RC_SEND_ONLY;	/* RC traffic to another QPN */
	p.dqpn = 0x777;
	p.psn = 42;
	p.ackreq = 1;
	if (emit(d, &fwd, &p, payload, 64, n, 0, 0) != 0)
		return -1;
	p.opcode = ROCE_OP_RC_ACK;
	p.syndrome = 0x1F;
	p.msn = 7;
	if (emit(d, &rev, &p, NULL, 0, n, 0, 0) != 0)
		return -1;
	p.opcode = ROCE_OP_UD_SEND_ONLY;
	p.dqpn = 0x200;
	p.qkey = 0x80010000;
	p.sqpn = 0x123;
	if (emit(d, &fwd, &p, payload, 256, n, 0, 0) != 0)
		return -1;
	p.opcode = ROCE_OP_CNP;
	p.becn = 1;
	p.dqpn = o->qpn;
	if (emit(d, &rev, &p, NULL, 0, n, 0, 0) != 0)
		return -1;
	/* a data packet with a corrupted ICRC, and one cut inside its RETH */
	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
	p.dqpn = o->qpn;
	p.psn = 9999;
	p.dma_len = 128;
	p.imm = sdr_imm_pack(&o->split, 1, 0, 0);
	if (emit(d, &fwd, &p, payload, 128, n, 1, 0) != 0)
		return -1;
	if (emit(d, &fwd, &p, payload, 128,  n, 0,
		 (int)roce_build_hdr_len(&fwd, p.opcode) - 20) != 0)
		return -1;
	/* UDP to the next port up: build a RoCE frame and rewrite its destination port */
	{
		int len = roce_build(frame, sizeof(frame), &fwd, &p, payload, 32);
		unsigned int udp = ROCE_ETH_LEN + (fwd.has_vlan ? ROCE_VLAN_LEN : 0) +
				   (fwd.ip_version == 6 ? ROCE_IPV6_LEN : ROCE_IPV4_MIN_LEN);

		if (len < 0)
			return -1;
		roce_put16(frame + udp + 2, ROCE_UDP_PORT + 1);
		write_frame(d, frame, (unsigned int)len, n);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	enum { O_IPV6 = 256, O_VLAN, O_MTU, O_SIZE, O_MAXMSG, O_MSGS, O_QPN, O_CH, O_UIMM,
	       O_SPLIT, O_SEED, O_MIX };
	static const struct option lopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "ipv6", no_argument, NULL, O_IPV6 },
		{ "vlan", required_argument, NULL, O_VLAN },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "size", required_argument, NULL, O_SIZE },
		{ "max-msg", required_argument, NULL, O_MAXMSG },
		{ "messages", required_argument, NULL, O_MSGS },
		{ "qpn", required_argument, NULL, O_QPN },
		{ "channels", required_argument, NULL, O_CH },
		{ "user-imm", required_argument, NULL, O_UIMM },
		{ "imm-split", required_argument, NULL, O_SPLIT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "mix", no_argument, NULL, O_MIX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct craft_opts o = {
		.vlan = -1, .mtu = 4096, .size = 65536, .max_msg = 1 << 20, .messages = 2,
		.qpn = 0x100, .channels = 1, .user_imm = 0xC0FFEE42, .seed = 1,
		.split = SDR_IMM_SPLIT_DEFAULT,
	};
	unsigned int n = 0;
	pcap_dumper_t *d;
	uint64_t v;
	pcap_t *p;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case O_IPV6: o.ipv6 = 1; break;
		case O_VLAN:
			if (units_parse_u64(optarg, 4095, &v) != 0)
				return die("bad --vlan (expected 0-4095)", optarg);
			o.vlan = (int)v;
			break;
		case O_MTU:
			if (units_parse_size(optarg, &v) != 0 || v < 256 || v > 4096)
				return die("bad --mtu (expected 256..4096)", optarg);
			o.mtu = (uint32_t)v;
			break;
		case O_SIZE:
			if (units_parse_size(optarg, &o.size) != 0)
				return die("bad --size", optarg);
			break;
		case O_MAXMSG:
			if (units_parse_size(optarg, &o.max_msg) != 0 || o.max_msg == 0)
				return die("bad --max-msg", optarg);
			break;
		case O_MSGS:
			if (units_parse_u64(optarg, 1u << 20, &v) != 0)
				return die("bad --messages", optarg);
			o.messages = (uint32_t)v;
			break;
		case O_QPN:
			if (units_parse_u64(optarg, ROCE_QPN_MASK - 64, &v) != 0 || v == 0)
				return die("bad --qpn (expected 1..0xFFFFBF)", optarg);
			o.qpn = (uint32_t)v;
			break;
		case O_CH:
			if (units_parse_u64(optarg, 64, &v) != 0 || v == 0)
				return die("bad --channels (expected 1..64)", optarg);
			o.channels = (uint32_t)v;
			break;
		case O_UIMM:
			if (units_parse_u64(optarg, UINT32_MAX, &v) != 0)
				return die("bad --user-imm", optarg);
			o.user_imm = (uint32_t)v;
			break;
		case O_SPLIT:
			if (sdr_imm_split_parse(optarg, &o.split) != 0)
				return die("bad --imm-split (expected A,B,C summing to 32)", optarg);
			break;
		case O_SEED:
			if (units_parse_u64(optarg, UINT32_MAX, &v) != 0)
				return die("bad --seed", optarg);
			o.seed = (uint32_t)v;
			break;
		case O_MIX: o.mix = 1; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sdr-craft --help'.\n");
			return 2;
		}
	}
	if (optind != argc)
		return die("unexpected argument", argv[optind]);
	if (o.out == NULL)
		return die("missing -o FILE", NULL);
	if (o.size > o.max_msg)
		return die("--size is larger than --max-msg", NULL);
	/* every slot's VA (slot x max-msg + offset) in the RETH's 64 bits, as the dataplane's */
	if (o.max_msg > UINT64_MAX / sdr_imm_max_msgs(&o.split))
		return die("--max-msg too large: slot x max-msg must fit a 64-bit VA", NULL);
	if ((o.size + o.mtu - 1) / o.mtu > sdr_imm_max_pkts(&o.split))
		return die("--size needs more packets than the immediate's offset field holds", NULL);

	p = pcap_open_dead(DLT_EN10MB, FRAME_MAX);
	d = p ? pcap_dump_open(p, o.out) : NULL;
	if (d == NULL) {
		fprintf(stderr, "sdr-craft: cannot write %s: %s\n", o.out,
			p ? pcap_geterr(p) : "pcap_open_dead failed");
		return 1;
	}
	rc = emit_messages(d, &o, &n);
	if (rc == 0 && o.mix)
		rc = emit_mix(d, &o, &n);
	/* libpcap's writes are buffered and unchecked: a full disk shows only here */
	if (rc == 0 && (pcap_dump_flush(d) != 0 || ferror(pcap_dump_file(d)))) {
		fprintf(stderr, "sdr-craft: cannot write %s: %s\n", o.out, strerror(errno));
		rc = 1;
	}
	pcap_dump_close(d);
	pcap_close(p);
	if (rc != 0)
		return 1;
	fprintf(stderr, "sdr-craft: wrote %u frames to %s\n", n, o.out);
	return 0;
}
