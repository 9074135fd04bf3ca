/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dump: a tcpdump for RoCEv2 / SDR. Reads pcap or pcapng, prints one line (or one
 * JSON object) per frame with the decoded headers, the SDR immediate split into message
 * id / packet offset / fragment, and the ICRC verdict; then a count per verdict.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_format.h"
#include "roce_hdr.h"
#include "roce_parse.h"
#include "sdr_imm.h"
#include "units.h"

struct dump_opts {
	struct sdr_imm_split split;
	int json;
	int quiet;
	int no_icrc;
	uint64_t count;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-dump [options] FILE\n"
"Decode RoCEv2 / SDR packets from a pcap or pcapng capture.\n"
"\n"
"      --imm-split A,B,C  widths of message id / packet offset / user-immediate\n"
"                         fragment in the immediate (default 10,18,4)\n"
"      --json             one JSON object per packet (JSON Lines), then one\n"
"                         object with the key \"summary\"\n"
"      --no-icrc          do not verify the ICRC\n"
"  -c, --count N          stop after N packets\n"
"  -q, --quiet            print only the summary\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 when the file was read to the end, 1 when it cannot be read,\n"
"2 on bad options.\n");
}

/* Has the parser got far enough to know the addresses and ports? */
static int
has_l4(const struct roce_view *v)
{
	return v->l4_off != 0 && v->udp_dport != 0;
}

/* A frame the capture cut short (snaplen): its verdict speaks of the bytes captured. */
struct frame_len {
	uint32_t caplen, len;
};

static void
print_text(uint64_t idx, const uint8_t *frame, const struct roce_view *v, enum roce_verdict r,
	   const struct dump_opts *o, const struct frame_len *fl)
{
	char line[ROCE_FORMAT_MAX];

	printf("%6" PRIu64 " %s", idx, roce_format_view(line, sizeof(line), frame, v, r,
						      &o->split));
	if (fl->caplen < fl->len)
		printf(" [captured %u of %u bytes]", fl->caplen, fl->len);
	else if (fl->caplen > fl->len)
		printf(" [captured %u bytes of a %u-byte frame: the rest ignored]", fl->caplen,
		       fl->len);
	printf("\n");
}

static void
print_json(uint64_t idx, const uint8_t *frame, const struct roce_view *v, enum roce_verdict r,
	   const struct dump_opts *o, const struct frame_len *fl)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	printf("{\"index\":%" PRIu64 ",\"roce\":%s,\"verdict\":\"%s\"", idx,
	       v->op != NULL ? "true" : "false", roce_verdict_name(r));
	if (fl->caplen != fl->len)
		printf(",\"captured\":%u,\"wire_len\":%u", fl->caplen, fl->len);
	if (v->ip_version) {
		roce_format_addr(src, sizeof(src), frame, v, 0);
		roce_format_addr(dst, sizeof(dst), frame, v, 1);
		printf(",\"ip_version\":%u,\"src\":\"%s\",\"dst\":\"%s\"", v->ip_version, src, dst);
	}
	if (v->has_vlan)
		printf(",\"vlan\":%u", v->vlan_tci & 0x0FFF);
	if (has_l4(v))
		printf(",\"sport\":%u,\"dport\":%u", v->udp_sport, v->udp_dport);
	if (v->op != NULL) {
		printf(",\"opcode\":%u,\"opcode_name\":\"%s\",\"dqpn\":%u,\"psn\":%u,\"pkey\":%u,"
		       "\"se\":%s,\"ackreq\":%s,\"pad\":%u",
		       v->opcode, roce_opcode_name(v->opcode), v->dqpn, v->psn, v->pkey,
		       v->se ? "true" : "false", v->ackreq ? "true" : "false", v->pad);
		if (v->reth_off)
			printf(",\"va\":%" PRIu64 ",\"rkey\":%u,\"dma_len\":%u", v->va, v->rkey,
			       v->dma_len);
		if (v->immdt_off) {
			struct sdr_imm_fields f = sdr_imm_unpack(&o->split, v->imm);

			printf(",\"imm\":%u,\"msg_id\":%u,\"pkt_offset\":%u,\"imm_frag\":%u", v->imm,
			       f.msg_id, f.pkt_off, f.frag);
		}
		if (v->deth_off)
			printf(",\"qkey\":%u,\"sqpn\":%u", v->qkey, v->sqpn);
		if (v->aeth_off)
			printf(",\"syndrome\":%u,\"msn\":%u", v->syndrome, v->msn);
		if (v->payload_off)
			printf(",\"payload_len\":%u", v->payload_len);
		if (v->icrc_checked)
			printf(",\"icrc\":%u,\"icrc_ok\":%s", v->icrc, v->icrc_ok ? "true" : "false");
	}
	printf("}\n");
}

static void
print_summary(const uint64_t *counts, uint64_t total, uint64_t cut, uint64_t longer, int json)
{
	int first = 1;

	if (json) {
		printf("{\"summary\":{\"packets\":%" PRIu64 ",", total);
		if (cut)
			printf("\"captured_short\":%" PRIu64 ",", cut);
		if (longer)
			printf("\"captured_long\":%" PRIu64 ",", longer);
		printf("\"verdicts\":{");
		for (int i = 0; i < ROCE_V_COUNT; i++) {
			if (!counts[i])
				continue;
			printf("%s\"%s\":%" PRIu64, first ? "" : ",",
			       roce_verdict_name((enum roce_verdict)i), counts[i]);
			first = 0;
		}
		printf("}}}\n");
		return;
	}
	printf("%" PRIu64 " packets%s", total, total ? ":" : "");
	for (int i = 0; i < ROCE_V_COUNT; i++) {
		if (!counts[i])
			continue;
		printf("%s %s %" PRIu64, first ? "" : ",", roce_verdict_name((enum roce_verdict)i),
		       counts[i]);
		first = 0;
	}
	if (cut)
		printf("; %" PRIu64 " captured short of their length (the verdict is of the bytes "
		       "captured)", cut);
	if (longer)
		printf("; %" PRIu64 " with more bytes captured than their length (a broken "
		       "capture: only their length read)", longer);
	printf("\n");
}

int
main(int argc, char **argv)
{
	enum { O_SPLIT = 256, O_JSON, O_NOICRC };
	static const struct option lopts[] = {
		{ "imm-split", required_argument, NULL, O_SPLIT },
		{ "json", no_argument, NULL, O_JSON },
		{ "no-icrc", no_argument, NULL, O_NOICRC },
		{ "count", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_opts o = { .split = SDR_IMM_SPLIT_DEFAULT };
	uint64_t counts[ROCE_V_COUNT] = { 0 }, idx = 0, cut = 0, longer = 0;
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:qh", lopts, NULL)) != -1) {
		switch (c) {
		case O_SPLIT:
			if (sdr_imm_split_parse(optarg, &o.split) != 0) {
				fprintf(stderr, "sdr-dump: bad --imm-split '%s' (expected three "
					"widths summing to 32, e.g. 10,18,4)\n", optarg);
				return 2;
			}
			break;
		case O_JSON: o.json = 1; break;
		case O_NOICRC: o.no_icrc = 1; break;
		case 'c':
			if (units_parse_u64(optarg, UINT64_MAX, &o.count) != 0 || o.count == 0) {
				fprintf(stderr, "sdr-dump: bad --count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sdr-dump --help'.\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "sdr-dump: %s (see --help)\n",
			optind == argc ? "missing capture file" : "more than one capture file");
		return 2;
	}
	p = pcap_open_offline(argv[optind], err);
	if (p == NULL) {
		if (strncmp(err, argv[optind], strlen(argv[optind])) == 0)
			fprintf(stderr, "sdr-dump: %s\n", err);
		else
			fprintf(stderr, "sdr-dump: %s: %s\n", argv[optind], err);
		return 1;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		const char *lt = pcap_datalink_val_to_name(pcap_datalink(p));

		fprintf(stderr, "sdr-dump: %s: link type %d%s%s%s not supported (Ethernet only)\n",
			argv[optind], pcap_datalink(p), lt ? " (" : "", lt ? lt : "", lt ? ")" : "");
		pcap_close(p);
		return 1;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct frame_len fl = { h->caplen, h->len };
		struct roce_view v;
		enum roce_verdict r;

		/* a record claiming more bytes than its frame had: the frame is its length */
		r = roce_parse(data, h->caplen < h->len ? h->caplen : h->len,
			       o.no_icrc ? 0 : ROCE_PARSE_VERIFY_ICRC, &v);
		counts[r]++;
		cut += h->caplen < h->len;
		longer += h->caplen > h->len;
		idx++;
		if (!o.quiet) {
			if (o.json)
				print_json(idx, data, &v, r, &o, &fl);
			else
				print_text(idx, data, &v, r, &o, &fl);
		}
		if (o.count && idx >= o.count)
			break;
	}
	/* a file that ends inside a record: what was read, summed up, then the error */
	print_summary(counts, idx, cut, longer, o.json);
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "sdr-dump: %s: %s\n", argv[optind], pcap_geterr(p));
		pcap_close(p);
		return 1;
	}
	pcap_close(p);
	/* output that could not be written (a full disk, a closed pipe) is a failed run */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sdr-dump: writing the output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
