/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-gen: a testpmd-style traffic generator and counter for SDR data packets on any DPDK
 * port. txonly builds UC RDMA Write with Immediate frames (real headers, real ICRC) at a
 * target rate, walking destination QPNs, message ids and packet offsets in a fixed pattern
 * (64-byte writes for stress, 4 KiB for bandwidth); rxonly receives, parses every frame
 * with the dataplane's parser and counts verdicts. Interactive mode takes testpmd's verbs:
 * start, stop, show port stats, set rate, quit.
 *
 * Threads: with two lcores the worker lcore moves packets and the main lcore runs the
 * prompt or the stats line; with one lcore the main lcore moves packets and prints stats
 * between bursts.
 *
 * Packet i of a run: QPN = base + i mod nqpn; message id = (i / pkts_per_msg) mod msgs;
 * packet offset = i mod pkts_per_msg; PSN = i per QPN; RETH VA = msg * va_stride +
 * offset * size. Every --bad-icrc-every'th packet carries a wrong ICRC.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "eal_exit.h"
#include "pools.h"
#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "sdr_imm.h"
#include "units.h"

#define MAX_BURST 256
#define FRAME_ROOM 4352
#define WIRE_OVERHEAD 24	/* preamble, start delimiter, FCS and gap: bytes a frame costs */

enum gen_mode { MODE_TXONLY, MODE_RXONLY };

struct gen_opts {
	enum gen_mode mode;
	uint16_t port;
	uint64_t count;			/* txonly: packets to send, rxonly: to receive (0: no end) */
	double rate_pps;		/* 0: line rate */
	double rate_bps;		/* set instead of rate_pps: converted once the size is known */
	uint32_t size;
	uint32_t qpn_base;
	uint32_t nqpn;
	uint32_t msgs;
	uint32_t pkts_per_msg;
	uint64_t va_stride;
	uint32_t rkey;
	uint32_t user_imm;
	struct sdr_imm_split split;
	struct roce_path path;
	uint64_t bad_icrc_every;
	uint32_t burst;
	uint64_t payload_span;	/* bytes of payloads cycled through (0: one payload) */
	double stats_period;
	double duration;
	int interactive;
	int json;
};

/* Written by the packet lcore, read by the main lcore. */
struct gen_stats {
	volatile uint64_t tx_pkts, tx_bytes, tx_bad_icrc, tx_full;
	volatile uint64_t rx_pkts, rx_bytes;
	volatile uint64_t verdicts[ROCE_V_COUNT];
	volatile uint64_t start_tsc, end_tsc;
};

static struct gen_opts opts;
static struct gen_stats st;
static struct rte_mempool *pool;
static volatile int running;		/* the packet loop moves packets while set */
static volatile int quit;
static volatile int failed;
static volatile double live_rate_pps;	/* set rate changes it while running */
static uint64_t next_pkt;		/* txonly: index of the next packet of the pattern */
static uint32_t *psn;			/* per QPN */
static uint8_t *span_buf;		/* --payload-span's payloads (NULL: one payload) */
static uint64_t span_slots;		/* payloads in span_buf */

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-gen [EAL options] -- [options]\n"
"Generate (txonly) or count (rxonly) SDR data packets on a DPDK port, testpmd style.\n"
"\n"
"      --mode txonly|rxonly  (default txonly)\n"
"      --port N              DPDK port id (default 0)\n"
"      --count N             packets to send / to receive, then stop (0: no limit)\n"
"      --rate RATE           txonly: packets per second with pps (1.5Mpps, 200kpps) or\n"
"                            bits per second on the wire (10G, 400M); default: no limit\n"
"      --size BYTES          payload per packet, 1..4096 (default 4096; 64 for stress)\n"
"      --qpn BASE[,N]        destination QPNs BASE..BASE+N-1, round robin (default 0x100,1)\n"
"      --msgs N              message ids cycled through (default 1)\n"
"      --pkts-per-msg N      packet offsets per message id (default 16)\n"
"      --va-stride BYTES     RETH VA step per message id (default pkts-per-msg * size)\n"
"      --rkey N              RETH R_Key (default 0)\n"
"      --imm N               user immediate whose fragments ride in the packets (default 0)\n"
"      --imm-split A,B,C     immediate layout (default 10,18,4)\n"
"      --src-mac MAC --dst-mac MAC --src-ip IP --dst-ip IP\n"
"                            addresses (default 02:00:5d:00:00:0a -> 02:00:5d:00:00:0b,\n"
"                            10.0.0.1 -> 10.0.0.2; IPv6 addresses work too)\n"
"      --pkey N              BTH partition key (default 0xffff)\n"
"      --udp-sport N         UDP source port (default: derived from the QPN)\n"
"      --payload-span BYTES  txonly: take the payloads one after the other from a\n"
"                            buffer of this size, wrapping around, as a sender reads\n"
"                            its application's buffers (default: every packet sends\n"
"                            the same payload, which stays in the L1 cache)\n"
"      --bad-icrc-every N    every Nth packet carries a wrong ICRC (default 0: none)\n"
"      --burst N             packets per burst, 1..256 (default 32)\n"
"      --stats-period TIME   print the counters this often (e.g. 1s; default off)\n"
"      --duration TIME       stop after this long\n"
"  -i, --interactive         prompt: start, stop, show port stats, set rate RATE, quit\n"
"      --json                the final summary as one JSON object\n"
"  -h, --help                this text\n"
"\n"
"Exit status: 0 when the run ended as asked (txonly: every packet sent), 1 when a device\n"
"failed or the run fell short, 2 on bad options.\n");
}

static int
bad(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "sdr-gen: bad %s '%s' (%s)\n", opt, val, want);
	return -1;
}

/* "1.5Mpps" / "200kpps" / "10G" (bits on the wire): decimal, finite, more than 0 and at
 * most 1 Gpps or 100 Tbit/s (nan, inf, hex and leading spaces are not rates) */
static int
parse_rate(const char *s, struct gen_opts *o)
{
	size_t n = strlen(s);

	if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.') || strpbrk(s, "xXnN") != NULL)
		return -1;
	if (n > 3 && strcmp(s + n - 3, "pps") == 0) {
		char num[64], *end;
		double v, mult = 1;

		if (n - 3 >= sizeof(num))
			return -1;
		memcpy(num, s, n - 3);
		num[n - 3] = '\0';
		v = strtod(num, &end);
		if (*end == 'k' || *end == 'K')
			mult = 1e3, end++;
		else if (*end == 'M')
			mult = 1e6, end++;
		else if (*end == 'G')
			mult = 1e9, end++;
		if (end == num || *end != '\0' || !(v > 0) || !(v * mult <= 1e9))
			return -1;
		o->rate_pps = v * mult;
		o->rate_bps = 0;
		return 0;
	}
	if (units_parse_rate(s, &o->rate_bps) != 0 || !(o->rate_bps > 0) || !(o->rate_bps <= 1e14))
		return -1;
	o->rate_pps = 0;
	return 0;
}

static int
parse_ip(const char *s, uint8_t *ip, uint8_t *version)
{
	uint8_t v4[4];

	if (inet_pton(AF_INET, s, v4) == 1) {
		memset(ip, 0, 16);
		memcpy(ip, v4, 4);
		*version = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip) == 1) {
		*version = 6;
		return 0;
	}
	return -1;
}

static int
parse_args(int argc, char **argv, struct gen_opts *o)
{
	enum { O_MODE = 256, O_PORT, O_COUNT, O_RATE, O_SIZE, O_QPN, O_MSGS, O_PPM, O_STRIDE,
	       O_RKEY, O_IMM, O_SPLIT, O_SMAC, O_DMAC, O_SIP, O_DIP, O_BAD, O_BURST, O_STATS,
	       O_DURATION, O_JSON, O_PKEY, O_SPORT, O_SPAN };
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, O_MODE },
		{ "port", required_argument, NULL, O_PORT },
		{ "count", required_argument, NULL, O_COUNT },
		{ "rate", required_argument, NULL, O_RATE },
		{ "size", required_argument, NULL, O_SIZE },
		{ "qpn", required_argument, NULL, O_QPN },
		{ "msgs", required_argument, NULL, O_MSGS },
		{ "pkts-per-msg", required_argument, NULL, O_PPM },
		{ "va-stride", required_argument, NULL, O_STRIDE },
		{ "rkey", required_argument, NULL, O_RKEY },
		{ "imm", required_argument, NULL, O_IMM },
		{ "imm-split", required_argument, NULL, O_SPLIT },
		{ "src-mac", required_argument, NULL, O_SMAC },
		{ "dst-mac", required_argument, NULL, O_DMAC },
		{ "src-ip", required_argument, NULL, O_SIP },
		{ "dst-ip", required_argument, NULL, O_DIP },
		{ "bad-icrc-every", required_argument, NULL, O_BAD },
		{ "payload-span", required_argument, NULL, O_SPAN },
		{ "pkey", required_argument, NULL, O_PKEY },
		{ "udp-sport", required_argument, NULL, O_SPORT },
		{ "burst", required_argument, NULL, O_BURST },
		{ "stats-period", required_argument, NULL, O_STATS },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "interactive", no_argument, NULL, 'i' },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const uint8_t smac[6] = { 0x02, 0x00, 0x5d, 0x00, 0x00, 0x0a };
	static const uint8_t dmac[6] = { 0x02, 0x00, 0x5d, 0x00, 0x00, 0x0b };
	struct rte_ether_addr mac;
	uint8_t sv = 4, dv = 4;
	uint64_t v, v2;
	char *comma;
	int c;

	memset(o, 0, sizeof(*o));
	o->size = 4096;
	o->qpn_base = 0x100;
	o->nqpn = 1;
	o->msgs = 1;
	o->pkts_per_msg = 16;
	o->burst = 32;
	o->split = SDR_IMM_SPLIT_DEFAULT;
	memcpy(o->path.src_mac, smac, 6);
	memcpy(o->path.dst_mac, dmac, 6);
	o->path.ip_version = 4;
	o->path.src_ip[0] = 10, o->path.src_ip[3] = 1;
	o->path.dst_ip[0] = 10, o->path.dst_ip[3] = 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ih", lopts, NULL)) != -1) {
		switch (c) {
		case O_MODE:
			if (strcmp(optarg, "txonly") == 0)
				o->mode = MODE_TXONLY;
			else if (strcmp(optarg, "rxonly") == 0)
				o->mode = MODE_RXONLY;
			else
				return bad("--mode", optarg, "txonly or rxonly");
			break;
		case O_PORT:
			if (units_parse_u64(optarg, RTE_MAX_ETHPORTS - 1, &v) != 0)
				return bad("--port", optarg, "a DPDK port id");
			o->port = (uint16_t)v;
			break;
		case O_COUNT:
			if (units_parse_u64(optarg, UINT64_MAX, &o->count) != 0)
				return bad("--count", optarg, "a number of packets");
			break;
		case O_RATE:
			if (parse_rate(optarg, o) != 0)
				return bad("--rate", optarg, "more than 0, up to 1Gpps or 100T: e.g. 1.5Mpps or 10G");
			break;
		case O_SIZE:
			if (units_parse_size(optarg, &v) != 0 || v < 1 || v > 4096)
				return bad("--size", optarg, "1..4096 bytes");
			o->size = (uint32_t)v;
			break;
		case O_QPN:
			comma = strchr(optarg, ',');
			if (comma)
				*comma = '\0';
			if (units_parse_u64(optarg, 0xFFFFFF, &v) != 0 || v == 0)
				return bad("--qpn", optarg, "a QPN in 1..0xFFFFFF");
			v2 = 1;
			if (comma && (units_parse_u64(comma + 1, 4096, &v2) != 0 || v2 == 0 ||
				      v + v2 - 1 > 0xFFFFFF))
				return bad("--qpn", comma + 1, "a count of QPNs, 1..4096, within 0xFFFFFF");
			o->qpn_base = (uint32_t)v;
			o->nqpn = (uint32_t)v2;
			break;
		case O_MSGS:
			if (units_parse_u64(optarg, 1u << 16, &v) != 0 || v == 0)
				return bad("--msgs", optarg, "1..65536");
			o->msgs = (uint32_t)v;
			break;
		case O_PPM:
			if (units_parse_u64(optarg, 1u << 28, &v) != 0 || v == 0)
				return bad("--pkts-per-msg", optarg, "1..2^28");
			o->pkts_per_msg = (uint32_t)v;
			break;
		case O_STRIDE:
			if (units_parse_size(optarg, &o->va_stride) != 0)
				return bad("--va-stride", optarg, "a size in bytes");
			break;
		case O_RKEY:
			if (units_parse_u64(optarg, UINT32_MAX, &v) != 0)
				return bad("--rkey", optarg, "0..0xFFFFFFFF");
			o->rkey = (uint32_t)v;
			break;
		case O_IMM:
			if (units_parse_u64(optarg, UINT32_MAX, &v) != 0)
				return bad("--imm", optarg, "0..0xFFFFFFFF");
			o->user_imm = (uint32_t)v;
			break;
		case O_SPLIT:
			if (sdr_imm_split_parse(optarg, &o->split) != 0)
				return bad("--imm-split", optarg, "three widths summing to 32, e.g. 10,18,4");
			break;
		case O_SMAC:
		case O_DMAC:
			if (rte_ether_unformat_addr(optarg, &mac) != 0)
				return bad(c == O_SMAC ? "--src-mac" : "--dst-mac", optarg,
					   "a MAC such as 02:00:5d:00:00:0a");
			memcpy(c == O_SMAC ? o->path.src_mac : o->path.dst_mac, mac.addr_bytes, 6);
			break;
		case O_SIP:
			if (parse_ip(optarg, o->path.src_ip, &sv) != 0)
				return bad("--src-ip", optarg, "an IPv4 or IPv6 address");
			break;
		case O_DIP:
			if (parse_ip(optarg, o->path.dst_ip, &dv) != 0)
				return bad("--dst-ip", optarg, "an IPv4 or IPv6 address");
			break;
		case O_PKEY:
			if (units_parse_u64(optarg, 0xFFFF, &v) != 0 || v == 0)
				return bad("--pkey", optarg, "1..0xffff");
			o->path.pkey = (uint16_t)v;
			break;
		case O_SPORT:
			if (units_parse_u64(optarg, 0xFFFF, &v) != 0 || v == 0)
				return bad("--udp-sport", optarg, "1..65535");
			o->path.udp_sport = (uint16_t)v;
			break;
		case O_BAD:
			if (units_parse_u64(optarg, UINT64_MAX, &o->bad_icrc_every) != 0)
				return bad("--bad-icrc-every", optarg, "a number of packets");
			break;
		case O_SPAN:
			if (units_parse_size(optarg, &o->payload_span) != 0 ||
			    o->payload_span > (1ull << 30))
				return bad("--payload-span", optarg, "a size up to 1 GiB");
			break;
		case O_BURST:
			if (units_parse_u64(optarg, MAX_BURST, &v) != 0 || v == 0)
				return bad("--burst", optarg, "1..256");
			o->burst = (uint32_t)v;
			break;
		case O_STATS:
			if (units_parse_time(optarg, &o->stats_period) != 0 ||
			    o->stats_period > 3600)
				return bad("--stats-period", optarg, "a time up to an hour, such as 1s");
			break;
		case O_DURATION:
			if (units_parse_time(optarg, &o->duration) != 0 || o->duration <= 0 ||
			    o->duration > 1e6)
				return bad("--duration", optarg, "a time up to 1e6 s, such as 30s");
			break;
		case 'i': o->interactive = 1; break;
		case O_JSON: o->json = 1; break;
		case 'h': usage(stdout); exit(0);
		default:
			fprintf(stderr, "Try 'sdr-gen --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sdr-gen: unexpected '%s'\n", argv[optind]);
		return -1;
	}
	if (o->interactive && o->duration > 0) {
		fprintf(stderr, "sdr-gen: --duration with --interactive: the prompt's quit ends "
			"the run\n");
		return -1;
	}
	if (sv != dv) {
		fprintf(stderr, "sdr-gen: --src-ip and --dst-ip must both be IPv4 or both IPv6\n");
		return -1;
	}
	o->path.ip_version = sv;
	if (o->va_stride == 0)
		o->va_stride = (uint64_t)o->pkts_per_msg * o->size;
	if (o->payload_span && o->payload_span < o->size) {
		fprintf(stderr, "sdr-gen: --payload-span %" PRIu64 " is smaller than one payload "
			"(--size %u)\n", o->payload_span, o->size);
		return -1;
	}
	if (o->msgs > sdr_imm_max_msgs(&o->split) || o->pkts_per_msg > sdr_imm_max_pkts(&o->split)) {
		fprintf(stderr, "sdr-gen: --msgs %u / --pkts-per-msg %u do not fit the immediate "
			"(%u message ids, %u packet offsets with this --imm-split)\n", o->msgs,
			o->pkts_per_msg, sdr_imm_max_msgs(&o->split), sdr_imm_max_pkts(&o->split));
		return -1;
	}
	return 0;
}

static double
tsc_s(uint64_t cycles)
{
	return (double)cycles / (double)rte_get_tsc_hz();
}

/* The frame of pattern packet @p i, into @p m. */
static int
build(struct rte_mbuf *m, uint64_t i, const uint8_t *payload)
{
	const struct gen_opts *o = &opts;
	uint32_t q = (uint32_t)(i % o->nqpn), msg = (uint32_t)((i / o->pkts_per_msg) % o->msgs);
	uint32_t off = (uint32_t)(i % o->pkts_per_msg);
	struct roce_pkt pkt = {
		.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM,
		.dqpn = o->qpn_base + q,
		.psn = psn[q]++ & 0xFFFFFF,
		.va = (uint64_t)msg * o->va_stride + (uint64_t)off * o->size,
		.rkey = o->rkey,
		.dma_len = o->size,
		.imm = sdr_imm_pack(&o->split, msg, off, sdr_imm_frag_of(&o->split, o->user_imm, off)),
	};
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	int len;

	if (span_buf)
		payload = span_buf + (i % span_slots) * o->size;
	len = roce_build(p, rte_pktmbuf_tailroom(m), &o->path, &pkt, payload, o->size);

	if (len < 0)
		return len;
	if (o->bad_icrc_every && (i + 1) % o->bad_icrc_every == 0) {
		p[len - 1] ^= 0x5a;	/* the last ICRC byte */
		st.tx_bad_icrc++;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	return len;
}

/* txonly, until @p until (TSC) or quit. The pacing budget survives between calls. */
static void
tx_loop(uint64_t until)
{
	const struct gen_opts *o = &opts;
	static uint8_t payload[4096];
	static uint64_t t0, sent_since;
	static double rate = -1;
	struct rte_mbuf *m[MAX_BURST];

	if (payload[1] == 0)
		for (unsigned int i = 0; i < sizeof(payload); i++)
			payload[i] = (uint8_t)(i * 7 + 1);
	while (!quit && rte_rdtsc() < until) {
		uint64_t now = rte_rdtsc(), left;
		uint32_t n = o->burst;
		uint16_t done;
		int len = 0;

		if (!running) {
			t0 = 0;
			usleep(1000);
			continue;
		}
		if (o->count && next_pkt >= o->count) {
			running = 0;
			st.end_tsc = now;
			if (!o->interactive)
				quit = 1;
			continue;
		}
		if (rate != live_rate_pps || t0 == 0) {
			rate = live_rate_pps;	/* a new rate restarts the budget */
			t0 = now;
			sent_since = 0;
		}
		if (rate > 0) {
			double allowed = tsc_s(now - t0) * rate - (double)sent_since;

			if (allowed < 1) {
				uint64_t wait_us = (uint64_t)((1 - allowed) / rate * 1e6);

				if (wait_us > 50)
					usleep((useconds_t)(wait_us > 1000 ? 1000 : wait_us));
				continue;
			}
			if (allowed < n)
				n = (uint32_t)allowed;
		}
		left = o->count ? o->count - next_pkt : UINT64_MAX;
		if (left < n)
			n = (uint32_t)left;
		if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0) {
			usleep(10);
			continue;
		}
		for (uint32_t k = 0; k < n; k++) {
			len = build(m[k], next_pkt + k, payload);
			if (len < 0) {
				fprintf(stderr, "sdr-gen: cannot build a frame: %s\n", strerror(-len));
				failed = 1;
				rte_pktmbuf_free_bulk(m, n);
				quit = 1;
				return;
			}
		}
		done = rte_eth_tx_burst(o->port, 0, m, (uint16_t)n);
		if (done < n) {
			/* what the device did not take is not sent: it goes out again next burst */
			uint64_t keep = next_pkt + done;

			rte_pktmbuf_free_bulk(m + done, n - done);
			for (uint32_t k = done; k < n; k++) {
				uint32_t q = (uint32_t)((next_pkt + k) % o->nqpn);

				psn[q]--;
				if (o->bad_icrc_every && (next_pkt + k + 1) % o->bad_icrc_every == 0)
					st.tx_bad_icrc--;
			}
			next_pkt = keep;
			st.tx_full++;
		} else {
			next_pkt += n;
		}
		sent_since += done;
		st.tx_pkts += done;
		st.tx_bytes += (uint64_t)done * (uint64_t)len;
		if (done == 0)
			usleep(20);	/* the device is full: let the other side drain it */
	}
}

#define RX_SEGS 8
#define RX_SCRATCH 16384

/*
 * The verdict on received frame @p m, ICRC checked as sdr-dataplane checks it: one segment
 * where it lies (the ICRC in place where nobody else holds the mbuf), a chain where it lies
 * when its layout allows (roce_parse_sg()), any other chain read into one piece first.
 */
static enum roce_verdict
rx_verdict(struct rte_mbuf *m)
{
	static uint8_t scratch[RX_SCRATCH];
	struct roce_seg seg[RX_SEGS];
	struct roce_view v;
	enum roce_verdict r;
	unsigned int n = 0;
	const void *data;

	if (m->nb_segs == 1)
		return RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 ?
		       roce_parse_rw(rte_pktmbuf_mtod(m, uint8_t *), m->data_len,
				     ROCE_PARSE_VERIFY_ICRC, &v) :
		       roce_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
				  ROCE_PARSE_VERIFY_ICRC, &v);
	for (const struct rte_mbuf *s = m; s != NULL && n < RX_SEGS; s = s->next)
		seg[n++] = (struct roce_seg){ .data = rte_pktmbuf_mtod(s, const uint8_t *),
					      .len = s->data_len };
	if (m->nb_segs <= RX_SEGS && roce_parse_sg(seg, n, ROCE_PARSE_VERIFY_ICRC, &v, &r))
		return r;
	if (m->pkt_len > sizeof(scratch))
		return ROCE_V_TRUNC_PAYLOAD;	/* (sdr-dataplane drops it: rx_too_big) */
	data = rte_pktmbuf_read(m, 0, m->pkt_len, scratch);
	return roce_parse(data, m->pkt_len, ROCE_PARSE_VERIFY_ICRC, &v);
}

/* rxonly, until @p until (TSC) or quit. */
static void
rx_loop(uint64_t until)
{
	const struct gen_opts *o = &opts;
	struct rte_mbuf *m[MAX_BURST];
	unsigned int idle = 0;

	while (!quit && rte_rdtsc() < until) {
		uint16_t n;

		if (!running) {
			usleep(1000);
			continue;
		}
		n = rte_eth_rx_burst(o->port, 0, m, (uint16_t)o->burst);
		if (n == 0) {
			/* idle backoff: this box has two cores and the sender needs one */
			if (++idle > 64)
				usleep(idle > 1024 ? 200 : 20);
			continue;
		}
		idle = 0;
		if (st.rx_pkts == 0)
			st.start_tsc = rte_rdtsc();
		for (uint16_t k = 0; k < n; k++) {
			st.verdicts[rx_verdict(m[k])]++;
			st.rx_bytes += rte_pktmbuf_pkt_len(m[k]);
		}
		st.rx_pkts += n;
		st.end_tsc = rte_rdtsc();
		rte_pktmbuf_free_bulk(m, n);
		if (o->count && st.rx_pkts >= o->count) {
			running = 0;
			if (!o->interactive)
				quit = 1;
		}
	}
}

static int
packet_lcore(void *arg)
{
	(void)arg;
	if (opts.mode == MODE_TXONLY)
		tx_loop(UINT64_MAX);
	else
		rx_loop(UINT64_MAX);
	return 0;
}

static void
show_port_stats(FILE *f)
{
	struct rte_eth_stats es;
	double dt = tsc_s((st.end_tsc ? st.end_tsc : rte_rdtsc()) - st.start_tsc);

	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(opts.port, &es);
	fprintf(f, "  ######################## NIC statistics for port %-2u ########################\n",
		opts.port);
	fprintf(f, "  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes:  %" PRIu64 "\n",
		es.ipackets, es.imissed, es.ibytes);
	fprintf(f, "  RX-errors:  %" PRIu64 "\n  RX-nombuf: %" PRIu64 "\n", es.ierrors, es.rx_nombuf);
	fprintf(f, "  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes:  %" PRIu64 "\n",
		es.opackets, es.oerrors, es.obytes);
	if (opts.mode == MODE_TXONLY) {
		fprintf(f, "  sdr-gen: sent %" PRIu64 " (%" PRIu64 " with a bad ICRC), %.3f Mpps, "
			"%.3f Gbit/s of frames\n", st.tx_pkts, st.tx_bad_icrc,
			dt > 0 ? (double)st.tx_pkts / dt * 1e-6 : 0,
			dt > 0 ? (double)st.tx_bytes * 8e-9 / dt : 0);
	} else {
		fprintf(f, "  sdr-gen: received %" PRIu64 ", %.3f Mpps, verdicts:", st.rx_pkts,
			dt > 0 ? (double)st.rx_pkts / dt * 1e-6 : 0);
		for (int v = 0; v < ROCE_V_COUNT; v++)
			if (st.verdicts[v])
				fprintf(f, " %s %" PRIu64, roce_verdict_name((enum roce_verdict)v),
					st.verdicts[v]);
		fprintf(f, "\n");
	}
	fprintf(f, "  ############################################################################\n");
	fflush(f);
}

static void
summary_json(void)
{
	struct rte_eth_stats es;
	double dt = tsc_s((st.end_tsc ? st.end_tsc : rte_rdtsc()) - st.start_tsc);

	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(opts.port, &es);
	printf("{\"mode\":\"%s\",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
	       ",\"tx_bad_icrc\":%" PRIu64 ",\"tx_ring_full\":%" PRIu64 ",\"rx_pkts\":%" PRIu64
	       ",\"rx_bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,\"mpps\":%.6f,\"gbps\":%.6f,"
	       "\"verdicts\":{", opts.mode == MODE_TXONLY ? "txonly" : "rxonly", st.tx_pkts,
	       st.tx_bytes, st.tx_bad_icrc, st.tx_full, st.rx_pkts, st.rx_bytes, dt,
	       dt > 0 ? (double)(st.tx_pkts + st.rx_pkts) / dt * 1e-6 : 0,
	       dt > 0 ? (double)(st.tx_bytes + st.rx_bytes) * 8e-9 / dt : 0);
	for (int v = 0, first = 1; v < ROCE_V_COUNT; v++)
		if (st.verdicts[v]) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",",
			       roce_verdict_name((enum roce_verdict)v), st.verdicts[v]);
			first = 0;
		}
	printf("},\"port\":{\"ipackets\":%" PRIu64 ",\"opackets\":%" PRIu64 ",\"imissed\":%"
	       PRIu64 ",\"ierrors\":%" PRIu64 ",\"oerrors\":%" PRIu64 "}}\n", es.ipackets,
	       es.opackets, es.imissed, es.ierrors, es.oerrors);
}

/* ---- interactive prompt (DPDK cmdline), testpmd's verbs ---- */

struct cmd_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_fixed_string_t w2;
};

static void
do_start(void)
{
	if (running) {
		printf("already running\n");
		fflush(stdout);
		return;
	}
	if (st.start_tsc == 0 || opts.mode == MODE_TXONLY)
		st.start_tsc = rte_rdtsc();
	st.end_tsc = 0;
	if (opts.mode == MODE_TXONLY && opts.count && next_pkt >= opts.count)
		next_pkt = 0;	/* a finished run starts over */
	running = 1;
	printf("%s started\n", opts.mode == MODE_TXONLY ? "txonly" : "rxonly");
	fflush(stdout);
}

static void
cb_start(void *parsed, struct cmdline *cl, void *data)
{
	(void)parsed, (void)cl, (void)data;
	do_start();
}

static void
cb_stop(void *parsed, struct cmdline *cl, void *data)
{
	(void)parsed, (void)cl, (void)data;
	running = 0;
	st.end_tsc = rte_rdtsc();
	usleep(2000);		/* let the packet lcore finish its burst */
	show_port_stats(stdout);
}

static void
cb_show(void *parsed, struct cmdline *cl, void *data)
{
	(void)parsed, (void)cl, (void)data;
	show_port_stats(stdout);
}

static void
cb_set_rate(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_res *r = parsed;
	struct gen_opts o = opts;

	(void)cl, (void)data;
	if (parse_rate(r->w2, &o) != 0) {
		printf("bad rate '%s' (e.g. 1.5Mpps or 10G)\n", r->w2);
		fflush(stdout);
		return;
	}
	live_rate_pps = o.rate_pps > 0 ? o.rate_pps :
			o.rate_bps / ((double)(roce_build_frame_len(&opts.path,
				      ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, opts.size) + WIRE_OVERHEAD) * 8);
	printf("rate %.0f packets/s\n", live_rate_pps);
	fflush(stdout);
}

static void
cb_quit(void *parsed, struct cmdline *cl, void *data)
{
	(void)parsed, (void)data;
	cmdline_quit(cl);
}

static cmdline_parse_token_string_t t_start = TOKEN_STRING_INITIALIZER(struct cmd_res, w0, "start");
static cmdline_parse_token_string_t t_stop = TOKEN_STRING_INITIALIZER(struct cmd_res, w0, "stop");
static cmdline_parse_token_string_t t_show = TOKEN_STRING_INITIALIZER(struct cmd_res, w0, "show");
static cmdline_parse_token_string_t t_port = TOKEN_STRING_INITIALIZER(struct cmd_res, w1, "port");
static cmdline_parse_token_string_t t_stats = TOKEN_STRING_INITIALIZER(struct cmd_res, w2, "stats");
static cmdline_parse_token_string_t t_set = TOKEN_STRING_INITIALIZER(struct cmd_res, w0, "set");
static cmdline_parse_token_string_t t_rate = TOKEN_STRING_INITIALIZER(struct cmd_res, w1, "rate");
static cmdline_parse_token_string_t t_value = TOKEN_STRING_INITIALIZER(struct cmd_res, w2, NULL);
static cmdline_parse_token_string_t t_quit = TOKEN_STRING_INITIALIZER(struct cmd_res, w0, "quit#exit");

static cmdline_parse_inst_t i_start = { .f = cb_start, .help_str = "start: start moving packets",
					.tokens = { (void *)&t_start, NULL } };
static cmdline_parse_inst_t i_stop = { .f = cb_stop, .help_str = "stop: stop and show the counters",
				       .tokens = { (void *)&t_stop, NULL } };
static cmdline_parse_inst_t i_show = { .f = cb_show, .help_str = "show port stats",
				       .tokens = { (void *)&t_show, (void *)&t_port, (void *)&t_stats,
						   NULL } };
static cmdline_parse_inst_t i_rate = { .f = cb_set_rate, .help_str = "set rate RATE (1.5Mpps, 10G)",
				       .tokens = { (void *)&t_set, (void *)&t_rate, (void *)&t_value,
						   NULL } };
static cmdline_parse_inst_t i_quit = { .f = cb_quit, .help_str = "quit",
				       .tokens = { (void *)&t_quit, NULL } };
static cmdline_parse_ctx_t prompt_ctx[] = { &i_start, &i_stop, &i_show, &i_rate, &i_quit, NULL };

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static int
port_init(void)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int rc;

	if (!rte_eth_dev_is_valid_port(opts.port)) {
		fprintf(stderr, "sdr-gen: no DPDK port %u (%u ports; give one with --vdev or -a)\n",
			opts.port, rte_eth_dev_count_avail());
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_eth_dev_info_get(opts.port, &info)) != 0 ||
	    (rc = rte_eth_dev_configure(opts.port, 1, 1, &conf)) != 0 ||
	    (rc = rte_eth_rx_queue_setup(opts.port, 0, 1024, (unsigned int)rte_eth_dev_socket_id(opts.port),
					 NULL, pool)) != 0 ||
	    (rc = rte_eth_tx_queue_setup(opts.port, 0, 1024, (unsigned int)rte_eth_dev_socket_id(opts.port),
					 NULL)) != 0) {
		fprintf(stderr, "sdr-gen: port %u: cannot set up: %s\n", opts.port, rte_strerror(-rc));
		return -1;
	}
	for (int tries = 0; (rc = rte_eth_dev_start(opts.port)) != 0 && tries < 100; tries++)
		rte_delay_us_sleep(100000);	/* a memif client waits for its server */
	if (rc != 0) {
		fprintf(stderr, "sdr-gen: port %u: start failed: %s\n", opts.port, rte_strerror(-rc));
		return -1;
	}
	rte_eth_promiscuous_enable(opts.port);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int worker;
	uint64_t next_stats = 0, deadline = 0;
	int rc, eal;

	sdr_crash_report_init();
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
	{
		/* the options after "--" are checked before EAL starts: a typo costs no start,
		 * and is said even where EAL would fail */
		char **app = calloc((size_t)argc + 1, sizeof(*app));
		int n = 0, bad_opts;

		if (app == NULL)
			return 1;
		app[n++] = argv[0];
		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], "--") == 0) {
				while (++i < argc)
					app[n++] = argv[i];
			}
		bad_opts = parse_args(n, app, &opts) != 0;
		free(app);
		if (bad_opts)
			return 2;
	}
	eal = rte_eal_init(argc, argv);
	if (eal < 0) {
		fprintf(stderr, "sdr-gen: EAL: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	worker = rte_get_next_lcore(-1, 1, 0);
	if (opts.interactive && worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "sdr-gen: --interactive needs two lcores (e.g. -l 0-1)\n");
		sdr_eal_exit();
		return 2;
	}
	/* made and prefaulted as the dataplane's pools are: a baseline on equal terms */
	pool = sdr_pool_create("sdr_gen", 8192, 256, RTE_PKTMBUF_HEADROOM + FRAME_ROOM,
			       (int)rte_socket_id());
	psn = calloc(opts.nqpn, sizeof(*psn));
	if (pool == NULL || psn == NULL) {
		fprintf(stderr, "sdr-gen: cannot create 8192 mbufs: %s (give EAL more memory with -m)\n",
			rte_strerror(rte_errno));
		sdr_eal_exit();
		return 1;
	}
	sdr_pool_prefault(pool);
	if (opts.payload_span && opts.mode == MODE_TXONLY) {
		/* written once here, so the first pass reads resident pages */
		span_slots = opts.payload_span / opts.size;
		span_buf = malloc(span_slots * opts.size);
		if (span_buf == NULL) {
			fprintf(stderr, "sdr-gen: cannot allocate --payload-span %" PRIu64 " bytes\n",
				opts.payload_span);
			free(psn);
			sdr_eal_exit();
			return 1;
		}
		for (uint64_t b = 0; b < span_slots * opts.size; b++)
			span_buf[b] = (uint8_t)(b * 7 + 1);
	}
	if (port_init() != 0) {
		sdr_eal_exit();
		return 1;
	}
	live_rate_pps = opts.rate_pps > 0 ? opts.rate_pps :
			opts.rate_bps > 0 ? opts.rate_bps /
			((double)(roce_build_frame_len(&opts.path, ROCE_OP_UC_RDMA_WRITE_ONLY_IMM,
						       opts.size) + WIRE_OVERHEAD) * 8) : 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!opts.interactive) {
		st.start_tsc = rte_rdtsc();
		running = 1;
	}
	if (opts.duration > 0)
		deadline = rte_rdtsc() + (uint64_t)(opts.duration * (double)rte_get_tsc_hz());
	if (worker < RTE_MAX_LCORE) {
		rte_eal_remote_launch(packet_lcore, NULL, worker);
		if (opts.interactive) {
			struct cmdline *cl = cmdline_stdin_new(prompt_ctx, "sdr-gen> ");

			if (cl == NULL) {
				fprintf(stderr, "sdr-gen: cannot start the prompt\n");
				quit = 1;
			} else {
				cmdline_interact(cl);
				cmdline_stdin_exit(cl);
			}
			quit = 1;
		}
		while (!quit) {
			uint64_t now = rte_rdtsc();

			usleep(50000);
			if (deadline && now >= deadline)
				quit = 1;
			if (opts.stats_period > 0 && now >= next_stats) {
				if (next_stats)
					show_port_stats(stderr);
				next_stats = now + (uint64_t)(opts.stats_period * (double)rte_get_tsc_hz());
			}
		}
		rte_eal_mp_wait_lcore();
	} else {
		/* one lcore: move packets here, in slices, and print between them */
		while (!quit) {
			uint64_t now = rte_rdtsc();

			if (deadline && now >= deadline)
				break;
			if (opts.stats_period > 0 && now >= next_stats) {
				if (next_stats)
					show_port_stats(stderr);
				next_stats = now + (uint64_t)(opts.stats_period * (double)rte_get_tsc_hz());
			}
			if (opts.mode == MODE_TXONLY)
				tx_loop(now + rte_get_tsc_hz() / 20);
			else
				rx_loop(now + rte_get_tsc_hz() / 20);
		}
	}
	if (st.end_tsc == 0)
		st.end_tsc = rte_rdtsc();
	if (opts.json)
		summary_json();
	else if (!opts.interactive)
		show_port_stats(stdout);
	rc = failed ? 1 : opts.mode == MODE_TXONLY && opts.count && st.tx_pkts < opts.count ? 1 :
	     opts.mode == MODE_RXONLY && opts.count && st.rx_pkts < opts.count ? 1 : 0;
	/* frames the device took may still sit in its ring (memif: until the peer reads
	 * them); stopping the port now would drop them, so give the peer a moment */
	if (opts.mode == MODE_TXONLY && st.tx_pkts)
		usleep(200000);
	sdr_eal_park_interrupts();
	rte_eth_dev_stop(opts.port);
	rte_eth_dev_close(opts.port);
	free(psn);
	free(span_buf);
	sdr_eal_exit();
	return rc;
}
