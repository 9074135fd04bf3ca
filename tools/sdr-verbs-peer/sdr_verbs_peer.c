/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-verbs-peer: the far end of an sdr-dataplane connection on a host that has an RDMA NIC
 * (RoCEv2) and no DPDK. It speaks the dataplane's wire protocol through libibverbs with the
 * dataplane's own connection engine (lib/sdr_endpoint.h): the handshake, every control
 * message, the reliability state machines, erasure coding and the completions are the code
 * the dataplane runs. This file is the engine's verbs adapter: the engine's work requests
 * (sdr_ep_output_wr()) go to the NIC's queue pairs, the NIC's completions go back into the
 * engine (sdr_ep_input_write(), sdr_ep_input_ctrl()). Roles as sdr-perf: --server receives
 * and checks every message, the client sends.
 *
 * Queue pairs. Verbs cannot choose QPNs, so the connection has channels = 1 and
 * generations = 1: one UC data QP and one UC control QP, whose NIC-chosen numbers the
 * dataplane learns as remote_qpn and remote_ctrl_qpn. The data QP is connected to the
 * dataplane's local_qpn (--peer-qpn), the control QP to the QPN after it. Every packet is
 * a one-packet UC message, so the UC responder accepts it whatever its PSN.
 *
 * Memory regions.
 *   server: the receive region — 2^id_bits slots of slot_span bytes — registered with
 *           ibv_reg_mr_iova() at iova 0, so the RETH VA the dataplane sends
 *           (msg_id * slot_span + pkt_off * mtu, zero-based per connection) is an offset in
 *           it; its R_Key is the dataplane's remote_rkey. The NIC writes every packet there.
 *           Control messages go out of a small registered ring of send buffers.
 *   client: the message buffers (window x size), registered for local reads, and with a
 *           code one MTU per data send queue entry for parity; control messages arrive
 *           in a ring of MTU-sized receive buffers.
 *
 * The handshake. Before anything else both ends learn each other's tag with HELLO
 * (lib/sdr_peer.h, in the engine): every control message carries both tags, and the
 * dataplane drops one without its tag. A dataplane whose side restarts (a new tag) ends the
 * run: what was in flight is lost.
 *
 * Send side (client). The engine numbers the messages and decides which chunk goes out
 * when (CTS credit, pacing, retransmissions, parity). Each packet is one
 * IBV_WR_RDMA_WRITE_WITH_IMM: SGE = the packet's bytes in the message buffer (read in place
 * by the NIC), remote address = sdr_conn_va(), R_Key = --peer-rkey if set, else the
 * dataplane's per-receive R_Key derived from both tags, immediate = sdr_imm_pack(). A parity
 * packet's bytes are in the engine's parity buffers, which it recycles once their work
 * requests are made: they are copied into a registered buffer of the send queue entry.
 * Writes are posted in chains of up to 64 with the last one signalled; the engine holds a
 * send's completion (cfg.held) until the writes that read its buffer have completed, so a
 * buffer, and the message slot, is reused only then.
 *
 * Receive side (server). Each Write with Immediate consumes one receive WQE (no scatter
 * entries) and yields a completion with the immediate and the byte count; the data is
 * already in the region. sdr_ep_input_write() reads it where its immediate says and places
 * it as the dataplane places a parsed packet — message table, length and duplicate checks,
 * packet and chunk bitmaps, user-immediate fragments, parity into the decode region —
 * copying the accepted payload into the posted message buffer. CTS, ACKs, NACKs and re-ACKs
 * go out as UC SENDs on the control QP. Receives are posted in order, checked on completion
 * (sdr-perf's byte pattern and --seed, and the user immediate), then released.
 *
 * Because the NIC writes into the region and the engine copies into the message buffer,
 * a late, duplicate or stale packet can only touch the region, never a message buffer: the
 * dataplane's rule "a packet for a completed slot never writes a byte" holds here as well.
 * What verbs do not tell: the RETH of a packet (a completion has no VA), so the peer reads
 * a packet where its immediate says it is and cannot count va_mismatch; and its PSN, so
 * scheme auto (whose loss reports count PSNs) is refused.
 *
 * One generation. With generations = 1 the destination QPN cannot tell a retransmission of
 * message k - 2^id_bits, still on its way after the sender missed an ACK, from a packet of
 * message k in the same slot. The server therefore quarantines a released slot: it is not
 * posted again until RTO + RTT after its release or after the last late packet addressed to
 * it (by then the sender has the final ACK and its last retransmission has arrived). The
 * dataplane receiving from the client needs no quarantine with per-receive R_Keys (the
 * default: a late packet carries its own receive's key); with a fixed --peer-rkey, keep
 * 2^id_bits well above the messages in flight (the tool warns below 8x).
 *
 * The loop polls one completion queue with a bounded idle backoff (usleep, 1 to 50 us,
 * never past the next timer of the state machines) and every run is bounded by --timeout.
 * Nothing is allocated after setup.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "msg_pattern.h"
#include "perf_report.h"
#include "roce_opcode.h"
#include "sdr_conn.h"
#include "sdr_endpoint.h"
#include "sdr_imm.h"
#include "sdr_keys.h"
#include "sdr_rel.h"
#include "sdr_rx.h"
#include "units.h"

#define PROG		"sdr-verbs-peer"

#define DATA_SQ_DEPTH	512	/* client: Writes with Immediate queued on the NIC (2 MiB at
				 * 4 KiB: time there counts against the RTO) */
#define DATA_RQ_DEPTH	8192	/* server: receive WQEs, one per arriving packet */
#define CTRL_SQ_DEPTH	256	/* server: control messages queued on the NIC */
#define CTRL_RQ_DEPTH	256	/* client: control receive buffers */
#define CTRL_HS_DEPTH	16	/* the other direction: the handshake (HELLO) and its answers */
#define CTRL_TX_LEN	256	/* a send buffer: >= SDR_CTRL_MAX_LEN */
#define WR_BATCH	64	/* work requests per post call */
#define CQ_BATCH	32	/* completions per poll call */
#define TX_ROUND	256	/* data work requests per loop round, then poll again */
#define IDLE_SPIN	16	/* empty rounds before the first sleep */
#define IDLE_MAX_US	50	/* longest idle sleep (the dataplane's idle_sleep_us) */

/*
 * The peer's own counters: what the NIC's queue pairs did (symbol, name, kind, meaning;
 * counters.h). The connection's — control messages, placement, reliability, coding — are
 * the endpoint's, in its own tables, as on the dataplane.
 */
#define PEER_COUNTERS(X) \
	X(DATA_WRS, "data_wrs_posted", OK, \
	  "RDMA Write with Immediate work requests posted on the data QP, one per packet") \
	X(DATA_SENT, "data_send_completions", OK, \
	  "signalled send completions of the data QP (each covers the work requests before it)") \
	X(PARITY_COPIES, "parity_wrs_copied", INFO, \
	  "parity writes whose bytes were copied into a registered send buffer (the endpoint " \
	  "recycles its parity buffers once their work requests are made)") \
	X(DATA_BAD_OPCODE, "data_bad_opcode", DROP, \
	  "receive completions on the data QP that are not a Write with Immediate") \
	X(CTRL_WRS, "ctrl_sends_posted", OK, \
	  "control messages posted as SENDs on the control QP") \
	X(IMM_MISMATCH, "user_imm_mismatch", ERROR, \
	  "messages whose user immediate is not the one the sender's pattern gives") \
	X(CORRUPT, "payload_mismatch", ERROR, \
	  "messages whose bytes are not the sender's pattern (--seed)")

enum peer_counter {
#define X(sym, name, kind, doc) PEER_##sym,
	PEER_COUNTERS(X)
#undef X
	PEER_NCOUNTERS
};

static const struct sdr_counter_def peer_counter_defs[PEER_NCOUNTERS] = {
	PEER_COUNTERS(SDR_COUNTER_DEF)
};

static const struct sdr_counter_table peer_counter_table = {
	.group = "verbs_peer",
	.doc = "sdr-verbs-peer, the SDR end on a hardware RNIC",
	.n = PEER_NCOUNTERS,
	.defs = peer_counter_defs,
};

struct opts {
	const char *dev;
	const char *peer_ip;
	int server;
	int lat;
	int json;
	int busy_poll;
	int imm_traffic;	/* user immediate as sdr-dataplane --traffic, else as sdr-perf */
	int gid_index;		/* -1: the first RoCEv2 GID of the peer's family */
	uint8_t port;
	uint32_t peer_qpn;
	uint32_t peer_rkey;
	uint64_t size;
	uint64_t max_msg;	/* 0: --size */
	uint32_t iters;
	uint32_t inflight;
	uint32_t mtu;
	uint64_t chunk;
	struct sdr_imm_split split;
	struct sdr_scheme scheme;
	uint64_t rtt_ns;
	double rate_bps;
	uint64_t seed;
	double timeout_s;
	int auth;		/* --auth-key-file: control messages carry a MAC */
	uint8_t auth_key[16];
	const char *auth_file;
	/* as typed, for messages */
	const char *mtu_s, *chunk_s, *split_s, *max_msg_s, *scheme_s;
};

struct peer {
	const struct opts *o;
	/* the connection: the engine every transport runs (lib/sdr_endpoint.h), driven with
	 * work requests and completions */
	struct sdr_ep *ep;
	struct sdr_ep_cfg cfg;
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	struct sdr_rel_cfg rel;
	uint32_t window;	/* messages in flight: --inflight, or 1 for write_lat */

	/* verbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *data_qp;
	struct ibv_qp *ctrl_qp;
	struct ibv_mr *region_mr;	/* server: receive region at iova 0 */
	struct ibv_mr *buf_mr;		/* client: message buffers */
	struct ibv_mr *par_mr;		/* client with a code: parity send buffers */
	struct ibv_mr *ctrl_mr;		/* control buffers */
	char dev_name[IBV_SYSFS_NAME_MAX];
	int gid_index;
	int gid_tbl_len;
	union ibv_gid gid;
	uint32_t ndev_ifindex;
	uint32_t data_sq_depth, data_rq_depth, ctrl_sq_depth, ctrl_rq_depth;

	/* memory */
	uint8_t *region;		/* server: 2^id_bits x slot_span */
	uint64_t region_len;
	uint8_t *bufs;			/* window x stride */
	uint64_t bufs_len;
	uint64_t stride;
	uint8_t *par_bufs;		/* client with a code: one MTU per data SQ entry */
	uint64_t par_bufs_len;
	uint8_t *ctrl_bufs;
	uint64_t ctrl_bufs_len;
	uint32_t ctrl_buf_len;

	/* work requests, filled in place for every post: nothing allocated in the loop */
	struct sdr_ep_wr ewr[WR_BATCH];
	struct ibv_send_wr swr[WR_BATCH], cwr[WR_BATCH];
	struct ibv_sge ssge[WR_BATCH], csge[WR_BATCH];
	struct ibv_recv_wr rwr[WR_BATCH];
	struct ibv_sge rsge[WR_BATCH];
	uint64_t data_sq_posted, data_sq_done;
	uint64_t ctrl_sq_posted, ctrl_sq_done;
	uint32_t data_rq_missing;	/* server: receive WQEs consumed, not yet reposted */
	uint32_t *ctrl_repost;		/* control buffers to post again */
	uint32_t n_ctrl_repost;
	/* client: by send context, the data SQ position after the last write reading its
	 * buffer (the endpoint holds the send's completion until it has completed) */
	uint64_t *ctx_last_wr;
	/* server, by slot: not posted again before this time. One generation: a late packet of
	 * a slot's previous message cannot be told from one of its next, so slot reuse is made
	 * safe by time instead of by the destination QPN */
	uint64_t *slot_quiet;
	uint64_t quarantine_ns;

	/* the window */
	uint32_t *free_buf;
	uint32_t nfree;
	uint32_t *buf_of_msg;		/* by message number */

	/* results */
	uint32_t posted, completed, verified, failed, retx, dec;
	double *lat;
	double *done_at;
	uint64_t t0_ns;
	uint64_t counters[PEER_NCOUNTERS];
};

static volatile sig_atomic_t stop;

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-verbs-peer [options] --peer-ip IP [write_bw|write_lat]\n"
"Be the far end of an sdr-dataplane connection on a host with an RDMA NIC and no\n"
"DPDK: SDR messages as UC RDMA Writes with Immediate, one per packet, and SDR\n"
"control messages as UC SENDs, through libibverbs (RoCEv2). Start it first: it\n"
"prints the [conn] lines the dataplane needs, then waits for the dataplane.\n"
"\n"
"  -d, --dev NAME         RDMA device (default: the first one)\n"
"      --port N           port of the device (default 1)\n"
"      --gid-index N      GID to send from (default: the first RoCEv2 GID of the\n"
"                         peer's address family)\n"
"      --peer-ip IP       the dataplane port's IPv4 or IPv6 address (required)\n"
"      --peer-qpn N       the dataplane connection's local_qpn (default 0x100);\n"
"                         its control QPN is the next one\n"
"      --peer-rkey N      R_Key of the RETHs we send: the dataplane connection's\n"
"                         local_rkey (default 0: per-receive keys, derived)\n"
"      --server           receive and check every message (default: send)\n"
"  -s, --size SIZE        message size (default 1MiB)\n"
"      --iters N          messages (default 100)\n"
"      --inflight N       messages in flight (default 8; write_lat: 1)\n"
"      --max-msg SIZE     the connection's max_msg (default: the message size)\n"
"      --mtu SIZE         payload bytes per packet: 256 ... 4096 (default 4096)\n"
"      --chunk SIZE       chunk size, a multiple of the mtu (default 64KiB)\n"
"      --imm-split A,B,C  message id / packet offset / fragment widths of the\n"
"                         immediate (default 10,18,4)\n"
"      --channels N       must be 1: one data QP (the NIC picks QPNs)\n"
"      --generations N    must be 1\n"
"      --scheme NAME      sr, sr-nack, ec-xor:K,M or ec-mds:K,M (default sr)\n"
"      --rtt TIME         round-trip time of the path (default 1ms)\n"
"      --rate RATE        injection rate, e.g. 10G (default 0: unpaced)\n"
"      --user-imm KIND    the user immediate of message n: perf (n, as sdr-perf\n"
"                         sends) or traffic (as sdr-dataplane --traffic)\n"
"                         (default perf)\n"
"      --seed N           message contents seed (default 1; both sides the same)\n"
"      --auth-key-file FILE  the connection's auth_key (32 hex digits on the\n"
"                         first line; keep the file private): every control\n"
"                         message carries its AES-128-CMAC, the R_Keys derive\n"
"                         from it (default: none)\n"
"      --timeout TIME     give up after this long, 1ms .. 1e6s (default 120s)\n"
"      --busy-poll        never sleep when idle (for benchmarks)\n"
"      --json             one JSON object\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 when every message completed (and, on the server, verified),\n"
"1 when not or when the RDMA device cannot be used, 2 on bad options.\n");
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- message contents: the pattern of sdr-perf and sdr-dataplane --traffic ---- */

/* The user immediate message @p n carries. */
static uint32_t
user_imm(const struct opts *o, uint64_t n)
{
	return o->imm_traffic ? sdr_pattern_imm(o->seed, n) : (uint32_t)n;
}

/* What the receiver can reassemble of it: a message of fewer packets than fragments
 * carries only its packets' fragments. */
static uint32_t
user_imm_received(const struct peer *p, uint64_t n)
{
	uint32_t nfr = sdr_imm_nfrags(&p->attr.split);
	uint32_t npkts = sdr_conn_msg_pkts(&p->geom, p->o->size);

	if (nfr == 0)
		return 0;
	if (npkts < nfr)
		return user_imm(p->o, n) &
		       (uint32_t)((1ull << (npkts * p->attr.split.frag_bits)) - 1);
	return user_imm(p->o, n);
}

/* ---- results, as sdr-perf prints them ---- */

static void
print_counter(FILE *f, const char *name, uint64_t v, int *any)
{
	fprintf(f, "%s %s %" PRIu64, *any ? "," : " counters:", name, v);
	*any = 1;
}

/* The NIC's counters that moved, and every drop and error of the connection's layers (with
 * the receive side's duplicates), as sdr-perf prints them. */
static void
print_counters(const struct peer *p, FILE *f)
{
	struct sdr_ep_counter_group g[SDR_EP_NGROUPS];
	unsigned int ng = p->ep ? sdr_ep_counter_groups(p->ep, g) : 0;
	int any = 0;

	for (unsigned int i = 0; i < PEER_NCOUNTERS; i++)
		if (p->counters[i])
			print_counter(f, peer_counter_table.defs[i].name, p->counters[i], &any);
	for (unsigned int k = 0; k < ng; k++)
		for (unsigned int i = 0; i < g[k].table->n; i++) {
			uint8_t kind = g[k].table->defs[i].kind;

			if (g[k].v[i] && (kind == SDR_CK_DROP || kind == SDR_CK_ERROR ||
					  (g[k].table == &sdr_rx_counter_table &&
					   i == SDR_RX_DUPLICATE)))
				print_counter(f, g[k].table->defs[i].name, g[k].v[i], &any);
		}
	if (any)
		fprintf(f, "\n");
}

static void
report(struct peer *p)
{
	const struct opts *o = p->o;
	struct perf_result res = {
		.lat = o->lat, .server = o->server, .size = o->size, .iters = o->iters,
		.completed = p->completed, .verified = p->verified, .failed = p->failed,
		.window = p->window, .retransmitted = p->retx, .decoded = p->dec, .lat_s = p->lat,
		.done_s = p->done_at, .elapsed_s = (double)(now_ns() - p->t0_ns) * 1e-9,
	};

	if (perf_report_print(stdout, &res, o->json) != 0) {
		fprintf(stderr, PROG ": out of memory for the report\n");
		return;
	}
	/* (with --json on standard error: standard output holds only the object) */
	print_counters(p, o->json ? stderr : stdout);
}

/* ---- verbs setup ---- */

static enum ibv_mtu
mtu_enum(uint32_t mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

static int
gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

static const char *
gid_addr(const union ibv_gid *g, char *buf, size_t len)
{
	if (gid_is_v4(g))
		return inet_ntop(AF_INET, g->raw + 12, buf, (socklen_t)len);
	return inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len);
}

/* The peer's address as a GID: IPv4 as ::ffff:a.b.c.d. @return 0 or -1. */
static int
ip_to_gid(const char *ip, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (inet_pton(AF_INET, ip, g->raw + 12) == 1) {
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		return 0;
	}
	return inet_pton(AF_INET6, ip, g->raw) == 1 ? 0 : -1;
}

static int
open_device(struct peer *p)
{
	const struct opts *o = p->o;
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	char have[256] = "";
	int n = 0;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (list == NULL) {
		/* ENOSYS: the kernel has no RDMA subsystem (no /sys/class/infiniband_verbs) */
		fprintf(stderr, PROG ": no RDMA device found (ibv_get_device_list: %s)\n",
			errno == ENOSYS ? "no RDMA support in the kernel" :
			strerror(errno ? errno : ENODEV));
		return -1;
	}
	if (n == 0) {
		ibv_free_device_list(list);
		fprintf(stderr, PROG ": no RDMA device found (ibv_get_device_list returned "
			"none)\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (o->dev == NULL || strcmp(name, o->dev) == 0) {
			dev = list[i];
			break;
		}
		snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s",
			 i ? ", " : "", name);
	}
	if (dev == NULL) {
		ibv_free_device_list(list);
		fprintf(stderr, PROG ": no RDMA device '%s' (have: %s)\n", o->dev, have);
		return -1;
	}
	snprintf(p->dev_name, sizeof(p->dev_name), "%s", ibv_get_device_name(dev));
	p->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (p->ctx == NULL) {
		fprintf(stderr, PROG ": cannot open %s: %s\n", p->dev_name, strerror(errno));
		return -1;
	}
	return 0;
}

/* The port must be an active RoCE port whose MTU holds a packet. */
static int
check_port(struct peer *p)
{
	struct ibv_port_attr pa;
	int rc = ibv_query_port(p->ctx, p->o->port, &pa);

	if (rc != 0) {
		fprintf(stderr, PROG ": %s has no port %u: %s\n", p->dev_name, p->o->port,
			strerror(rc));
		return -1;
	}
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
		fprintf(stderr, PROG ": %s port %u is not Ethernet (RoCE): the dataplane speaks "
			"RoCEv2 only\n", p->dev_name, p->o->port);
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, PROG ": %s port %u is not active (%s)\n", p->dev_name, p->o->port,
			ibv_port_state_str(pa.state));
		return -1;
	}
	if (pa.active_mtu < mtu_enum(p->attr.mtu)) {
		fprintf(stderr, PROG ": %s port %u carries at most %d payload bytes per packet, "
			"less than --mtu %u (raise the interface MTU)\n", p->dev_name, p->o->port,
			128 << pa.active_mtu, p->attr.mtu);
		return -1;
	}
	if (p->o->gid_index >= 0 && p->o->gid_index >= pa.gid_tbl_len) {
		fprintf(stderr, PROG ": --gid-index %d: %s port %u has %d GIDs\n", p->o->gid_index,
			p->dev_name, p->o->port, pa.gid_tbl_len);
		return -1;
	}
	p->gid_tbl_len = pa.gid_tbl_len;
	return 0;
}

/* The GID to send from: RoCEv2, of the peer's address family. */
static int
pick_gid(struct peer *p, const union ibv_gid *peer_gid)
{
	int want_v4 = gid_is_v4(peer_gid), first = 0, last = p->gid_tbl_len - 1;
	struct ibv_gid_entry e;

	if (p->o->gid_index >= 0)
		first = last = p->o->gid_index;
	for (int i = first; i <= last; i++) {
		if (ibv_query_gid_ex(p->ctx, p->o->port, (uint32_t)i, &e, 0) != 0)
			continue;	/* an empty entry */
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && gid_is_v4(&e.gid) == want_v4) {
			p->gid_index = i;
			p->gid = e.gid;
			p->ndev_ifindex = e.ndev_ifindex;
			return 0;
		}
		if (p->o->gid_index >= 0) {
			fprintf(stderr, PROG ": --gid-index %d of %s port %u is %s, not a RoCEv2 "
				"%s GID\n", i, p->dev_name, p->o->port,
				e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCEv2" : "RoCEv1/IB",
				want_v4 ? "IPv4" : "IPv6");
			return -1;
		}
	}
	if (p->o->gid_index >= 0)
		fprintf(stderr, PROG ": --gid-index %d of %s port %u is empty\n", p->o->gid_index,
			p->dev_name, p->o->port);
	else
		fprintf(stderr, PROG ": %s port %u has no RoCEv2 GID with an %s address (give "
			"the interface one, or choose --gid-index)\n", p->dev_name, p->o->port,
			want_v4 ? "IPv4" : "IPv6");
	return -1;
}

static uint32_t
clamp_u32(uint32_t v, int max)
{
	return max > 0 && v > (uint32_t)max ? (uint32_t)max : v;
}

static struct ibv_qp *
create_qp(struct peer *p, uint32_t sq, uint32_t rq, uint32_t rq_sge)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.qp_type = IBV_QPT_UC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = sq,
			.max_recv_wr = rq,
			.max_send_sge = 1,
			.max_recv_sge = rq_sge,
		},
	};

	return ibv_create_qp(p->pd, &ia);
}

static int
create_queues(struct peer *p)
{
	struct ibv_device_attr da;
	int rc = ibv_query_device(p->ctx, &da);
	uint32_t cqe;

	if (rc != 0) {
		fprintf(stderr, PROG ": cannot query %s: %s\n", p->dev_name, strerror(rc));
		return -1;
	}
	/* only the queues of the role are deep; the others hold one entry */
	p->data_sq_depth = p->o->server ? 1 : clamp_u32(DATA_SQ_DEPTH, da.max_qp_wr);
	p->data_rq_depth = p->o->server ? clamp_u32(DATA_RQ_DEPTH, da.max_qp_wr) : 1;
	p->ctrl_sq_depth = clamp_u32(p->o->server ? CTRL_SQ_DEPTH : CTRL_HS_DEPTH, da.max_qp_wr);
	p->ctrl_rq_depth = clamp_u32(p->o->server ? CTRL_HS_DEPTH : CTRL_RQ_DEPTH, da.max_qp_wr);
	/* every work request that can complete has a CQE in reserve */
	cqe = p->data_sq_depth + p->data_rq_depth + p->ctrl_sq_depth + p->ctrl_rq_depth;
	if (da.max_cqe > 0 && cqe > (uint32_t)da.max_cqe) {
		fprintf(stderr, PROG ": %s completion queues hold at most %d entries, %u needed\n",
			p->dev_name, da.max_cqe, cqe);
		return -1;
	}
	p->pd = ibv_alloc_pd(p->ctx);
	if (p->pd == NULL) {
		fprintf(stderr, PROG ": cannot allocate a protection domain on %s: %s\n",
			p->dev_name, strerror(errno));
		return -1;
	}
	p->cq = ibv_create_cq(p->ctx, (int)cqe, NULL, NULL, 0);
	if (p->cq == NULL) {
		fprintf(stderr, PROG ": cannot create a completion queue of %u entries on %s: %s\n",
			cqe, p->dev_name, strerror(errno));
		return -1;
	}
	p->data_qp = create_qp(p, p->data_sq_depth, p->data_rq_depth, 1);
	if (p->data_qp == NULL) {
		fprintf(stderr, PROG ": cannot create the UC data QP on %s: %s\n", p->dev_name,
			strerror(errno));
		return -1;
	}
	p->ctrl_qp = create_qp(p, p->ctrl_sq_depth, p->ctrl_rq_depth, 1);
	if (p->ctrl_qp == NULL) {
		fprintf(stderr, PROG ": cannot create the UC control QP on %s: %s\n", p->dev_name,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void *
map_zeroed(uint64_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

static int
register_memory(struct peer *p)
{
	char sz[32];

	if (p->o->server) {
		p->region_len = (uint64_t)p->geom.nslots * p->geom.slot_span;
		units_fmt_size(p->region_len, sz, sizeof(sz));
		p->region = map_zeroed(p->region_len);
		if (p->region == NULL) {
			fprintf(stderr, PROG ": cannot map the receive region of %s (2^%u slots of "
				"max_msg): %s; lower --max-msg or the id bits of --imm-split\n", sz,
				p->attr.split.id_bits, strerror(errno));
			return -1;
		}
		p->region_mr = ibv_reg_mr_iova(p->pd, p->region, p->region_len, 0,
					       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (p->region_mr == NULL) {
			fprintf(stderr, PROG ": cannot register the receive region of %s at iova 0: "
				"%s (check ulimit -l; it is 2^%u slots of max_msg: lower --max-msg "
				"or the id bits of --imm-split)\n", sz, strerror(errno),
				p->attr.split.id_bits);
			return -1;
		}
		p->attr.local_rkey = p->region_mr->rkey;
	} else {
		units_fmt_size(p->bufs_len, sz, sizeof(sz));
		p->buf_mr = ibv_reg_mr(p->pd, p->bufs, p->bufs_len, 0);
		if (p->buf_mr == NULL) {
			fprintf(stderr, PROG ": cannot register %s of message buffers: %s (check "
				"ulimit -l)\n", sz, strerror(errno));
			return -1;
		}
		if (p->par_bufs != NULL) {
			p->par_mr = ibv_reg_mr(p->pd, p->par_bufs, p->par_bufs_len, 0);
			if (p->par_mr == NULL) {
				fprintf(stderr, PROG ": cannot register the parity send buffers: %s "
					"(check ulimit -l)\n", strerror(errno));
				return -1;
			}
		}
	}
	p->ctrl_mr = ibv_reg_mr(p->pd, p->ctrl_bufs, p->ctrl_bufs_len, IBV_ACCESS_LOCAL_WRITE);
	if (p->ctrl_mr == NULL) {
		fprintf(stderr, PROG ": cannot register the control buffers: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* RESET -> INIT -> RTR (towards @p dqpn) -> RTS. */
static int
connect_qp(struct peer *p, struct ibv_qp *qp, const char *what, uint32_t dqpn, int access,
	   const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;
	char ip[INET6_ADDRSTRLEN], ndev[IF_NAMESIZE];
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = p->o->port;
	a.qp_access_flags = (unsigned int)access;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		fprintf(stderr, PROG ": cannot bring the %s QP to INIT: %s\n", what, strerror(rc));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu_enum(p->attr.mtu);
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = p->o->port;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN);
	if (rc != 0) {
		/* the kernel resolves the peer's MAC from its neighbour table for RoCE */
		if (p->ndev_ifindex == 0 || if_indextoname(p->ndev_ifindex, ndev) == NULL)
			snprintf(ndev, sizeof(ndev), "DEV");
		fprintf(stderr, PROG ": cannot connect the %s QP to %s QPN 0x%x: %s (the kernel "
			"must resolve the address and the dataplane answers no ARP: ip neigh "
			"replace %s lladdr MAC dev %s)\n", what, p->o->peer_ip, dqpn, strerror(rc),
			gid_addr(dgid, ip, sizeof(ip)), ndev);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (rc != 0) {
		fprintf(stderr, PROG ": cannot bring the %s QP to RTS: %s\n", what, strerror(rc));
		return -1;
	}
	return 0;
}

/* ---- work requests ---- */

static int
post_data_recvs(struct peer *p)
{
	struct ibv_recv_wr *bad;

	while (p->data_rq_missing > 0) {
		uint32_t n = p->data_rq_missing < WR_BATCH ? p->data_rq_missing : WR_BATCH;
		int rc;

		/* no scatter entry: a Write with Immediate places its data by its RETH */
		for (uint32_t i = 0; i < n; i++)
			p->rwr[i] = (struct ibv_recv_wr){
				.wr_id = 0, .next = i + 1 < n ? &p->rwr[i + 1] : NULL,
				.sg_list = NULL, .num_sge = 0,
			};
		rc = ibv_post_recv(p->data_qp, p->rwr, &bad);
		if (rc != 0) {
			fprintf(stderr, PROG ": cannot post receives on the data QP: %s\n",
				strerror(rc));
			return -1;
		}
		p->data_rq_missing -= n;
	}
	return 0;
}

static int
post_ctrl_recvs(struct peer *p)
{
	struct ibv_recv_wr *bad;
	uint32_t done = 0;

	while (done < p->n_ctrl_repost) {
		uint32_t n = p->n_ctrl_repost - done < WR_BATCH ? p->n_ctrl_repost - done : WR_BATCH;
		int rc;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = p->ctrl_repost[done + i];

			p->rsge[i] = (struct ibv_sge){
				.addr = (uintptr_t)(p->ctrl_bufs + (uint64_t)b * p->ctrl_buf_len),
				.length = p->ctrl_buf_len, .lkey = p->ctrl_mr->lkey,
			};
			p->rwr[i] = (struct ibv_recv_wr){
				.wr_id = b, .next = i + 1 < n ? &p->rwr[i + 1] : NULL,
				.sg_list = &p->rsge[i], .num_sge = 1,
			};
		}
		rc = ibv_post_recv(p->ctrl_qp, p->rwr, &bad);
		if (rc != 0) {
			fprintf(stderr, PROG ": cannot post receives on the control QP: %s\n",
				strerror(rc));
			return -1;
		}
		done += n;
	}
	p->n_ctrl_repost = 0;
	return 0;
}

/* Room in a send queue. */
static uint32_t
sq_room(uint64_t posted, uint64_t done, uint32_t depth)
{
	return depth - (uint32_t)(posted - done);
}

/* A send context's buffer is still read by a write in the data send queue (cfg.held). */
static int
ctx_held(void *arg, uint32_t ctx)
{
	const struct peer *p = arg;

	return p->ctx_last_wr[ctx] > p->data_sq_done;
}

/*
 * Post the endpoint's work requests: writes as one chain on the data QP (the last one
 * signalled, so each completion covers the chain), control messages on the control QP
 * (each signalled: its buffer is free again once it completes). The caller made room for
 * all of them in both queues. @return 0, -1.
 */
static int
post_wrs(struct peer *p, const struct sdr_ep_wr *w, uint32_t n)
{
	uint32_t nd = 0, nc = 0;
	struct ibv_send_wr *bad;
	int rc;

	for (uint32_t i = 0; i < n; i++) {
		if (w[i].kind == SDR_EP_WR_SEND) {
			uint64_t pos = p->ctrl_sq_posted + nc;
			uint8_t *buf = p->ctrl_bufs + (pos % p->ctrl_sq_depth) * p->ctrl_buf_len;

			memcpy(buf, w[i].addr, w[i].len);	/* <= SDR_EP_CTRL_MAX */
			p->csge[nc] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = w[i].len,
							.lkey = p->ctrl_mr->lkey };
			p->cwr[nc] = (struct ibv_send_wr){
				.wr_id = pos + 1, .sg_list = &p->csge[nc], .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			};
			if (nc > 0)
				p->cwr[nc - 1].next = &p->cwr[nc];
			nc++;
			continue;
		}
		{
			uint64_t pos = p->data_sq_posted + nd;
			uintptr_t addr = (uintptr_t)w[i].addr;
			uint32_t lkey = p->buf_mr->lkey;

			if (w[i].copy) {
				/* a parity buffer of the endpoint: into this SQ entry's own buffer,
				 * free since the entry is (the queue had room) */
				uint8_t *b = p->par_bufs + (pos % p->data_sq_depth) * p->attr.mtu;

				memcpy(b, w[i].addr, w[i].len);
				addr = (uintptr_t)b;
				lkey = p->par_mr->lkey;
				p->counters[PEER_PARITY_COPIES]++;
			} else {
				p->ctx_last_wr[w[i].hold] = pos + 1;
			}
			p->ssge[nd] = (struct ibv_sge){ .addr = addr, .length = w[i].len, .lkey = lkey };
			p->swr[nd] = (struct ibv_send_wr){
				.wr_id = pos + 1,
				.sg_list = w[i].len ? &p->ssge[nd] : NULL,
				.num_sge = w[i].len ? 1 : 0,
				.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				.imm_data = htobe32(w[i].imm),
			};
			p->swr[nd].wr.rdma.remote_addr = w[i].va;
			p->swr[nd].wr.rdma.rkey = w[i].rkey;
			if (nd > 0)
				p->swr[nd - 1].next = &p->swr[nd];
			nd++;
		}
	}
	if (nd > 0) {
		p->swr[nd - 1].send_flags = IBV_SEND_SIGNALED;
		rc = ibv_post_send(p->data_qp, p->swr, &bad);
		if (rc != 0) {
			fprintf(stderr, PROG ": cannot post RDMA writes on the data QP: %s\n",
				strerror(rc));
			return -1;
		}
		p->data_sq_posted += nd;
		p->counters[PEER_DATA_WRS] += nd;
	}
	if (nc > 0) {
		rc = ibv_post_send(p->ctrl_qp, p->cwr, &bad);
		if (rc != 0) {
			fprintf(stderr, PROG ": cannot post a control message: %s\n", strerror(rc));
			return -1;
		}
		p->ctrl_sq_posted += nc;
		p->counters[PEER_CTRL_WRS] += nc;
	}
	return 0;
}

/* What the endpoint has to send now, as far as both send queues have room (at most
 * TX_ROUND work requests, then the completions are polled again). @return posted, -1. */
static int
flush_out(struct peer *p, uint64_t now)
{
	uint32_t total = 0;

	while (total < TX_ROUND) {
		uint32_t room = sq_room(p->ctrl_sq_posted, p->ctrl_sq_done, p->ctrl_sq_depth), n;
		uint32_t droom = p->o->server ? WR_BATCH :
				 sq_room(p->data_sq_posted, p->data_sq_done, p->data_sq_depth);

		/* (a receive-only connection makes no writes: the server's data SQ is tiny) */
		if (droom < room)
			room = droom;
		if (room > WR_BATCH)
			room = WR_BATCH;
		if (room == 0)
			break;
		n = sdr_ep_output_wr(p->ep, now, p->ewr, room);
		if (n == 0)
			break;
		if (post_wrs(p, p->ewr, n) != 0)
			return -1;
		total += n;
	}
	return (int)total;
}

/* ---- completions ---- */

/* A Write with Immediate arrived: the NIC placed it in the region; the endpoint takes it. */
static void
data_in(struct peer *p, uint32_t imm, uint32_t len, uint64_t now)
{
	int r = sdr_ep_input_write(p->ep, 0, imm, p->region, p->region_len, len, now);

	/* the sender is still sending into a slot we released: it must not take a new
	 * message until that has stopped */
	if (r == SDR_RX_LATE_PACKET)
		p->slot_quiet[sdr_imm_unpack(&p->attr.split, imm).msg_id] = now + p->quarantine_ns;
}

/* A message arrived on the control QP: as the RoCE opcode it came in, to the endpoint. */
static void
ctrl_in(struct peer *p, const struct ibv_wc *wc, uint64_t now)
{
	uint8_t op = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ? ROCE_OP_UC_RDMA_WRITE_ONLY_IMM :
		     (wc->wc_flags & IBV_WC_WITH_IMM) ? ROCE_OP_UC_SEND_ONLY_IMM :
		     ROCE_OP_UC_SEND_ONLY;

	sdr_ep_input_ctrl(p->ep, op, p->ctrl_bufs + wc->wr_id * p->ctrl_buf_len,
			  wc->byte_len < p->ctrl_buf_len ? wc->byte_len : p->ctrl_buf_len, now);
}

/* @return completions handled, or -1 on a completion error (the QP is then unusable). */
static int
poll_cq(struct peer *p, uint64_t now)
{
	struct ibv_wc wc[CQ_BATCH];
	int n = ibv_poll_cq(p->cq, CQ_BATCH, wc);

	if (n < 0) {
		fprintf(stderr, PROG ": cannot poll the completion queue\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct ibv_wc *w = &wc[i];
		int data = w->qp_num == p->data_qp->qp_num;

		if (w->status != IBV_WC_SUCCESS) {
			fprintf(stderr, PROG ": %s QP completion error: %s (vendor error 0x%x)\n",
				data ? "data" : "control", ibv_wc_status_str(w->status), w->vendor_err);
			return -1;
		}
		if (w->opcode & IBV_WC_RECV) {
			if (data) {
				p->data_rq_missing++;
				if (w->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
					data_in(p, be32toh(w->imm_data), w->byte_len, now);
				else
					p->counters[PEER_DATA_BAD_OPCODE]++;
			} else {
				ctrl_in(p, w, now);
				p->ctrl_repost[p->n_ctrl_repost++] = (uint32_t)w->wr_id;
			}
		} else if (data) {
			p->data_sq_done = w->wr_id;	/* and every work request before it */
			p->counters[PEER_DATA_SENT]++;
		} else {
			p->ctrl_sq_done = w->wr_id;
		}
	}
	if (p->data_rq_missing && post_data_recvs(p) != 0)
		return -1;
	if (p->n_ctrl_repost && post_ctrl_recvs(p) != 0)
		return -1;
	return n;
}

/* ---- the two roles ---- */

static void
record(struct peer *p, const struct sdr_ep_done *d, uint64_t now)
{
	uint64_t start = d->first_ns ? d->first_ns : d->start_ns;

	p->lat[p->completed] = d->end_ns > start ? (double)(d->end_ns - start) * 1e-9 : 0;
	p->done_at[p->completed] = (double)(now - p->t0_ns) * 1e-9;
	p->completed++;
}

/* Server: a receive completed. Check it, release its slot, free its buffer. */
static void
recv_done(struct peer *p, const struct sdr_ep_done *d, uint64_t now)
{
	uint32_t b, imm;

	if (!d->is_recv || d->cookie >= p->posted)
		return;		/* cannot happen: cookies are message numbers */
	b = p->buf_of_msg[d->cookie];
	record(p, d, now);
	p->dec += d->decoded;
	if (d->status != SDR_DONE_OK) {
		p->failed++;
	} else if (!sdr_pattern_check(p->bufs + b * p->stride, p->o->size, p->o->seed, d->cookie)) {
		p->counters[PEER_CORRUPT]++;
		p->failed++;
	} else if (sdr_ep_recv_imm(p->ep, d->slot, &imm) == 0 &&
		   imm != user_imm_received(p, d->cookie)) {
		p->counters[PEER_IMM_MISMATCH]++;
		p->failed++;
	} else {
		p->verified++;
	}
	/* from now on the slot discards late packets */
	sdr_ep_recv_release(p->ep, d->slot);
	p->slot_quiet[d->slot] = now + p->quarantine_ns;
	p->free_buf[p->nfree++] = b;
}

/* Client: a message was acknowledged complete (or failed), and no write reads it any more. */
static void
send_done(struct peer *p, const struct sdr_ep_done *d, uint64_t now)
{
	uint32_t b;

	if (d->is_recv || d->cookie >= p->posted)
		return;		/* cannot happen: cookies are message numbers */
	b = p->buf_of_msg[d->cookie];
	record(p, d, now);
	p->retx += d->retransmitted;
	if (d->status != SDR_DONE_OK)
		p->failed++;
	p->free_buf[p->nfree++] = b;
}

/* Keep the window full: receives posted in order (server), messages sent (client). */
static int
fill_window(struct peer *p, uint64_t now)
{
	int work = 0, rc;

	while (p->posted < p->o->iters && p->nfree > 0) {
		uint32_t b = p->free_buf[p->nfree - 1], slot;
		uint8_t *buf = p->bufs + b * p->stride;

		if (p->o->server) {
			uint64_t seq = sdr_ep_next_recv_seq(p->ep);

			if (now < p->slot_quiet[sdr_conn_seq_slot(&p->attr, seq)])
				break;	/* its last message may still have packets on the way */
			rc = sdr_ep_recv(p->ep, buf, p->o->size, NULL, p->posted, now, &slot);
		} else {
			/* message n carries pattern n: the server checks message n against it */
			sdr_pattern_fill(buf, 0, p->o->size, p->o->seed, p->posted);
			rc = sdr_ep_send(p->ep, buf, p->o->size, user_imm(p->o, p->posted), p->posted,
					 now);
		}
		if (rc == -EAGAIN)
			break;
		if (rc != 0) {
			fprintf(stderr, PROG ": internal: message %u refused (%s)\n", p->posted,
				strerror(-rc));
			return -1;
		}
		p->buf_of_msg[p->posted++] = b;
		p->nfree--;
		work++;
	}
	return work;
}

/* One round of either role. @return work done, -1. */
static int
peer_step(struct peer *p, uint64_t now)
{
	struct sdr_ep_done d;
	int work, rc;

	/* control first: a message's final ACK then leaves before its receive is released */
	work = flush_out(p, now);
	if (work < 0)
		return -1;
	while (sdr_ep_poll(p->ep, &d)) {
		if (p->o->server)
			recv_done(p, &d, now);
		else
			send_done(p, &d, now);
		work++;
	}
	rc = fill_window(p, now);
	if (rc < 0)
		return -1;
	work += rc;
	/* the CTS of the receives just posted, the data of the messages just sent */
	rc = flush_out(p, now);
	if (rc < 0)
		return -1;
	return work + rc;
}

/* ---- the [conn] section for the dataplane ---- */

static void
print_conn(struct peer *p, FILE *f)
{
	const struct sdr_conn_attr *a = &p->attr;
	char ip[INET6_ADDRSTRLEN], ndev[IF_NAMESIZE] = "", mac[32] = "", scheme[SDR_SCHEME_NAME_MAX];
	char region[32] = "";
	FILE *m;

	gid_addr(&p->gid, ip, sizeof(ip));
	if (p->ndev_ifindex && if_indextoname(p->ndev_ifindex, ndev) != NULL) {
		char path[64 + IF_NAMESIZE];

		snprintf(path, sizeof(path), "/sys/class/net/%s/address", ndev);
		m = fopen(path, "r");
		if (m != NULL) {
			if (fgets(mac, sizeof(mac), m) == NULL)
				mac[0] = '\0';
			mac[strcspn(mac, "\n")] = '\0';
			fclose(m);
		}
	}
	if (p->o->server)
		units_fmt_size(p->region_len, region, sizeof(region));
	fprintf(f, "; %s: %s port %u, GID %d (%s%s%s), data QPN 0x%x, control QPN 0x%x%s%s%s\n",
		PROG, p->dev_name, p->o->port, p->gid_index, ip, ndev[0] ? " on " : "", ndev,
		p->data_qp->qp_num, p->ctrl_qp->qp_num, p->o->server ? ", receive region " : "",
		region, p->o->server ? " at iova 0" : "");
	fprintf(f, "; the dataplane's connection to it (set port to the [port] facing this host):\n");
	fprintf(f, "[conn verbs]\n");
	fprintf(f, "peer_ip = %s\n", ip);
	if (mac[0])
		fprintf(f, "peer_mac = %s\n", mac);
	else
		fprintf(f, "; peer_mac = (not known here: the MAC of %s, or of the next hop)\n", ip);
	fprintf(f, "local_qpn = 0x%x\n", a->remote_qpn);
	fprintf(f, "remote_qpn = 0x%x\n", p->data_qp->qp_num);
	fprintf(f, "remote_ctrl_qpn = 0x%x\n", p->ctrl_qp->qp_num);
	if (p->o->server)
		fprintf(f, "remote_rkey = 0x%x\n", a->local_rkey);
	else
		fprintf(f, "local_rkey = 0x%x\n", a->remote_rkey);
	fprintf(f, "mtu = %u\n", a->mtu);
	fprintf(f, "chunk = %u\n", a->chunk_size);
	fprintf(f, "imm_split = %u,%u,%u\n", a->split.id_bits, a->split.off_bits,
		a->split.frag_bits);
	fprintf(f, "channels = 1\n");
	fprintf(f, "generations = 1\n");
	fprintf(f, "max_msg = %" PRIu64 "\n", a->max_msg_size);
	fprintf(f, "inflight = %u\n", a->max_inflight);
	fprintf(f, "dir = %s\n", p->o->server ? "send" : "recv");
	fprintf(f, "scheme = %s\n", sdr_scheme_format(&p->rel.scheme, scheme, sizeof(scheme)));
	fprintf(f, "rtt = %" PRIu64 "ns\n", p->rel.rtt_ns);
	if (p->rel.rate_bps > 0)
		fprintf(f, "rate = %.0f\n", p->rel.rate_bps);
	if (p->rel.scheme.kind == SDR_SCHEME_SR_NACK)
		fprintf(f, "nack_allowance = %" PRIu64 "ns\n", p->rel.nack_allowance_ns);
	if (p->o->auth)		/* (the secret itself is never printed) */
		fprintf(f, "; auth_key = the 32 hex digits of %s (the same key on both ends)\n",
			p->o->auth_file);
	fflush(f);
}

/* ---- setup, loop, teardown ---- */

static void
peer_destroy(struct peer *p)
{
	if (p->ctrl_qp)
		ibv_destroy_qp(p->ctrl_qp);
	if (p->data_qp)
		ibv_destroy_qp(p->data_qp);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->region_mr)
		ibv_dereg_mr(p->region_mr);
	if (p->buf_mr)
		ibv_dereg_mr(p->buf_mr);
	if (p->par_mr)
		ibv_dereg_mr(p->par_mr);
	if (p->ctrl_mr)
		ibv_dereg_mr(p->ctrl_mr);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	if (p->region)
		munmap(p->region, p->region_len);
	if (p->bufs)
		munmap(p->bufs, p->bufs_len);
	if (p->par_bufs)
		munmap(p->par_bufs, p->par_bufs_len);
	if (p->ctrl_bufs)
		munmap(p->ctrl_bufs, p->ctrl_bufs_len);
	sdr_ep_destroy(p->ep);
	free(p->free_buf);
	free(p->buf_of_msg);
	free(p->ctrl_repost);
	free(p->slot_quiet);
	free(p->ctx_last_wr);
	free(p->lat);
	free(p->done_at);
}

/* Everything the loop needs, allocated once. */
static int
peer_alloc(struct peer *p)
{
	const struct opts *o = p->o;
	/* send buffers [0, sq depth), then receive buffers */
	uint32_t nctrl = p->ctrl_sq_depth + p->ctrl_rq_depth;

	p->stride = (o->size + 4095) / 4096 * 4096;
	if (p->stride == 0)
		p->stride = 4096;
	p->bufs_len = p->stride * p->window;
	p->bufs = map_zeroed(p->bufs_len);
	p->ctrl_buf_len = CTRL_TX_LEN > p->attr.mtu ? CTRL_TX_LEN : p->attr.mtu;
	p->ctrl_bufs_len = (uint64_t)nctrl * p->ctrl_buf_len;
	p->ctrl_bufs = map_zeroed(p->ctrl_bufs_len);
	if (!o->server && sdr_scheme_is_ec(&p->rel.scheme)) {
		p->par_bufs_len = (uint64_t)p->data_sq_depth * p->attr.mtu;
		p->par_bufs = map_zeroed(p->par_bufs_len);
	}
	p->free_buf = calloc(p->window, sizeof(uint32_t));
	p->buf_of_msg = calloc(o->iters, sizeof(uint32_t));
	p->ctrl_repost = calloc(nctrl, sizeof(uint32_t));
	p->lat = calloc(o->iters, sizeof(double));
	p->done_at = calloc(o->iters, sizeof(double));
	p->ctx_last_wr = calloc(p->attr.max_inflight, sizeof(uint64_t));
	p->slot_quiet = calloc(p->geom.nslots, sizeof(uint64_t));
	if (!p->bufs || !p->ctrl_bufs || (p->par_bufs_len && !p->par_bufs) ||
	    !p->free_buf || !p->buf_of_msg || !p->ctrl_repost || !p->lat || !p->done_at ||
	    !p->ctx_last_wr || !p->slot_quiet) {
		fprintf(stderr, PROG ": out of memory for %u message buffers of %" PRIu64 " bytes\n",
			p->window, o->size);
		return -1;
	}
	for (p->nfree = 0; p->nfree < p->window; p->nfree++)
		p->free_buf[p->nfree] = p->window - 1 - p->nfree;
	return 0;
}

/* The connection's engine, once the QPs (and so the QPNs) and the region's R_Key exist. */
static int
sdr_state_create(struct peer *p)
{
	struct sdr_ep_cfg *c = &p->cfg;

	memset(c, 0, sizeof(*c));
	c->attr = p->attr;
	c->rel = p->rel;
	c->attr.remote_ctrl_qpn = sdr_conn_ctrl_qpn(p->attr.remote_qpn, &p->attr);
	/* frames are never built (the NIC does): the path only names the addresses */
	c->path.ip_version = gid_is_v4(&p->gid) ? 4 : 6;
	c->held = p->o->server ? NULL : ctx_held;
	c->auth = (uint8_t)p->o->auth;
	memcpy(c->auth_key, p->o->auth_key, sizeof(c->auth_key));
	c->held_arg = p;
	p->ep = sdr_ep_create(c);
	if (p->ep == NULL) {
		fprintf(stderr, PROG ": cannot create the connection state (out of memory, or no "
			"entropy for its tag)\n");
		return -1;
	}
	return 0;
}

static int
peer_setup(struct peer *p)
{
	union ibv_gid dgid;

	if (ip_to_gid(p->o->peer_ip, &dgid) != 0)
		return -1;	/* checked with the options */
	if (open_device(p) != 0 || check_port(p) != 0 || pick_gid(p, &dgid) != 0 ||
	    create_queues(p) != 0 || peer_alloc(p) != 0 || register_memory(p) != 0)
		return -1;
	p->attr.local_qpn = p->data_qp->qp_num;
	if (connect_qp(p, p->data_qp, "data", sdr_conn_data_qpn(p->attr.remote_qpn, &p->attr, 0, 0),
		       p->o->server ? IBV_ACCESS_REMOTE_WRITE : 0, &dgid) != 0 ||
	    connect_qp(p, p->ctrl_qp, "control", sdr_conn_ctrl_qpn(p->attr.remote_qpn, &p->attr),
		       0, &dgid) != 0)
		return -1;
	if (sdr_state_create(p) != 0)
		return -1;
	/* receives before anything can arrive */
	if (p->o->server) {
		p->data_rq_missing = p->data_rq_depth;
		if (post_data_recvs(p) != 0)
			return -1;
	}
	for (uint32_t i = 0; i < p->ctrl_rq_depth; i++)
		p->ctrl_repost[p->n_ctrl_repost++] = p->ctrl_sq_depth + i;
	if (post_ctrl_recvs(p) != 0)
		return -1;
	return 0;
}

/* Sleep when idle, never past the next timer of the connection. */
static void
idle_wait(struct peer *p, uint64_t now, uint32_t *sleep_us)
{
	uint64_t next = sdr_ep_next_time(p->ep, now), us = *sleep_us;

	if (p->o->server && p->posted < p->o->iters && p->nfree > 0) {
		uint64_t seq = sdr_ep_next_recv_seq(p->ep);
		uint64_t q = p->slot_quiet[sdr_conn_seq_slot(&p->attr, seq)];

		if (q < next)
			next = q;
	}
	if (next <= now)
		return;
	if (next != UINT64_MAX && (next - now) / 1000 < us)
		us = (next - now) / 1000;
	if (us > 0)
		usleep((useconds_t)us);
	*sleep_us = *sleep_us * 2 > IDLE_MAX_US ? IDLE_MAX_US : *sleep_us * 2;
}

/* The dataplane's side restarted (a proven message from a new tag): the endpoint failed
 * what was in flight; this run's message numbers no longer line up, so it ends. */
static int
peer_restarted(const struct peer *p)
{
	return sdr_ep_counters(p->ep)[SDR_EP_PEER_RESTARTS] != 0;
}

static int
peer_loop(struct peer *p)
{
	const struct opts *o = p->o;
	uint64_t deadline, linger_end = UINT64_MAX, now;
	/* the server stays a while after its last message to re-acknowledge late packets
	 * (its final ACK may be lost): four retransmission timeouts, at least 20 ms */
	uint64_t linger = 4 * sdr_rel_rto(&p->rel) > 20000000 ? 4 * sdr_rel_rto(&p->rel) : 20000000;
	uint32_t idle = 0, sleep_us = 1;

	p->t0_ns = now_ns();
	deadline = p->t0_ns + (uint64_t)(o->timeout_s * 1e9);
	for (;;) {
		int work, step;

		now = now_ns();
		if (stop || now >= deadline)
			break;
		if (peer_restarted(p)) {
			fprintf(stderr, PROG ": the dataplane's side of the connection restarted (a "
				"new tag): what was in flight is lost; start again\n");
			break;
		}
		if (p->completed >= o->iters) {
			if (!o->server)
				break;
			if (linger_end == UINT64_MAX)
				linger_end = now + linger;
			if (now >= linger_end && p->ctrl_sq_done == p->ctrl_sq_posted)
				break;
		}
		work = poll_cq(p, now);
		if (work < 0)
			return -1;
		step = peer_step(p, now);
		if (step < 0)
			return -1;
		work += step;
		if (work > 0) {
			idle = 0;
			sleep_us = 1;
		} else if (!o->busy_poll && ++idle >= IDLE_SPIN) {
			idle_wait(p, now, &sleep_us);
		}
	}
	return 0;
}

static int
run(const struct opts *o, const struct sdr_conn_attr *attr, const struct sdr_rel_cfg *rel)
{
	struct peer p;
	int rc = 1;

	memset(&p, 0, sizeof(p));
	p.o = o;
	p.attr = *attr;
	p.rel = *rel;
	p.window = o->lat ? 1 : o->inflight;
	/* a stale retransmission can come until the sender has the final ACK and its last
	 * retransmission has arrived: a retransmission timeout and a round trip */
	p.quarantine_ns = sdr_rel_rto(&p.rel) + p.rel.rtt_ns;
	sdr_conn_geometry(&p.attr, &p.geom);	/* checked with the options */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (peer_setup(&p) != 0)
		goto out;
	print_conn(&p, o->json ? stderr : stdout);
	if (!o->server && p.geom.nslots < 8 * p.window && p.attr.remote_rkey != 0)
		fprintf(stderr, PROG ": warning: %u message ids for %u in flight and one generation: "
			"a late retransmission can land in a slot the dataplane has reused (more id "
			"bits in --imm-split make room)\n", p.geom.nslots, p.window);
	if (peer_loop(&p) != 0)
		goto out;
	report(&p);
	if (stop)
		fprintf(stderr, PROG ": interrupted after %u of %u messages\n", p.completed, o->iters);
	else if (p.completed < o->iters)
		fprintf(stderr, PROG ": only %u of %u messages completed\n", p.completed, o->iters);
	rc = p.completed == o->iters && p.failed == 0 && (!o->server || p.verified == p.completed) ?
	     0 : 1;
out:
	peer_destroy(&p);
	return rc;
}

/* ---- options ---- */

static int
bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, PROG ": bad --%s '%s'%s%s\n", opt, val, why ? ": " : "", why ? why : "");
	return 2;
}

/* Which option a geometry error is about, for the message. */
static int
geometry_error(const struct opts *o, int err)
{
	const char *opt = NULL, *val = NULL;
	char num[32];

	switch (-err) {
	case SDR_CONN_E_MTU: opt = "mtu"; val = o->mtu_s; break;
	case SDR_CONN_E_CHUNK: opt = "chunk"; val = o->chunk_s; break;
	case SDR_CONN_E_SPLIT: opt = "imm-split"; val = o->split_s; break;
	case SDR_CONN_E_MAX_MSG: opt = "max-msg"; val = o->max_msg_s; break;
	case SDR_CONN_E_EC:
	case SDR_CONN_E_PARITY_FIT: opt = "scheme"; val = o->scheme_s; break;
	case SDR_CONN_E_INFLIGHT:
		opt = "inflight";
		snprintf(num, sizeof(num), "%u", o->inflight);
		val = num;
		break;
	case SDR_CONN_E_QPN:
		opt = "peer-qpn";
		snprintf(num, sizeof(num), "0x%x", o->peer_qpn);
		val = num;
		break;
	default: break;
	}
	if (opt == NULL) {
		fprintf(stderr, PROG ": %s\n", sdr_conn_strerror(err));
		return 2;
	}
	return bad(opt, val ? val : "(default)", sdr_conn_strerror(err));
}

/* Check the options together and derive the connection. @return 0 or an exit status. */
static int
build_conn(const struct opts *o, struct sdr_conn_attr *a, struct sdr_rel_cfg *rel)
{
	struct sdr_conn_geom g;
	union ibv_gid gid;
	int rc;

	if (o->peer_ip == NULL) {
		fprintf(stderr, PROG ": missing --peer-ip IP (the dataplane port's address)\n");
		return 2;
	}
	if (ip_to_gid(o->peer_ip, &gid) != 0)
		return bad("peer-ip", o->peer_ip, "not an IPv4 or IPv6 address");
	sdr_conn_attr_default(a);
	a->mtu = o->mtu;
	if (o->chunk > UINT32_MAX)
		return bad("chunk", o->chunk_s, "chunk size must be a non-zero multiple of the mtu, "
			   "at most 1024 packets");
	a->chunk_size = (uint32_t)o->chunk;
	a->split = o->split;
	a->channels = 1;
	a->generations = 1;
	a->max_msg_size = o->max_msg ? o->max_msg : (o->size ? o->size : 1);
	a->max_inflight = o->inflight;
	a->dir = o->server ? SDR_DIR_RECV : SDR_DIR_SEND;
	a->local_qpn = 1;		/* the NIC's choice, known once the QP exists */
	a->remote_qpn = o->peer_qpn;
	a->remote_rkey = o->peer_rkey;
	if (sdr_scheme_is_ec(&o->scheme)) {	/* as the dataplane derives its [conn] */
		a->ec_k = (uint16_t)o->scheme.k;
		a->ec_m = (uint16_t)o->scheme.m;
	}
	if (o->size > a->max_msg_size) {
		fprintf(stderr, PROG ": --size %" PRIu64 " is larger than --max-msg %" PRIu64 "\n",
			o->size, a->max_msg_size);
		return 2;
	}
	rc = sdr_conn_geometry(a, &g);
	if (rc != 0)
		return geometry_error(o, rc);
	sdr_rel_cfg_default(rel, o->rtt_ns);
	rel->scheme = o->scheme;
	rel->rate_bps = o->rate_bps;
	rel->global_timeout_ns = 0;	/* --timeout bounds the run */
	return 0;
}

/* --auth-key-file: the first line of FILE, 32 hex digits (never echoed). @return 0 or 2. */
static int
read_auth_key(const char *path, struct opts *o)
{
	char line[128];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, PROG ": cannot read --auth-key-file %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (sdr_key_parse(line, o->auth_key) != 0) {
		memset(line, 0, sizeof(line));
		fprintf(stderr, PROG ": bad --auth-key-file %s: its first line must be 32 hex "
			"digits (a 128-bit key)\n", path);
		return 2;
	}
	memset(line, 0, sizeof(line));
	o->auth = 1;
	o->auth_file = path;
	return 0;
}

static int
parse_u32(const char *opt, const char *v, uint64_t min, uint64_t max, uint32_t *out)
{
	char why[64];
	uint64_t x;

	if (units_parse_u64(v, max, &x) != 0 || x < min) {
		/* QPNs and R_Keys read best in hexadecimal */
		snprintf(why, sizeof(why), strncmp(opt, "peer-", 5) == 0 ?
			 "an integer 0x%" PRIx64 "..0x%" PRIx64 : "an integer %" PRIu64 "..%" PRIu64,
			 min, max);
		return bad(opt, v, why);
	}
	*out = (uint32_t)x;
	return 0;
}

int
main(int argc, char **argv)
{
	enum { O_PORT = 256, O_GID, O_PEER_IP, O_PEER_QPN, O_PEER_RKEY, O_SERVER, O_ITERS,
	       O_INFLIGHT, O_MAX_MSG, O_MTU, O_CHUNK, O_SPLIT, O_CHANNELS, O_GENERATIONS,
	       O_SCHEME, O_RTT, O_RATE, O_USER_IMM, O_SEED, O_TIMEOUT, O_BUSY_POLL, O_JSON,
	       O_AUTH_FILE };
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, O_PORT },
		{ "gid-index", required_argument, NULL, O_GID },
		{ "peer-ip", required_argument, NULL, O_PEER_IP },
		{ "peer-qpn", required_argument, NULL, O_PEER_QPN },
		{ "peer-rkey", required_argument, NULL, O_PEER_RKEY },
		{ "server", no_argument, NULL, O_SERVER },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, O_ITERS },
		{ "inflight", required_argument, NULL, O_INFLIGHT },
		{ "max-msg", required_argument, NULL, O_MAX_MSG },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "imm-split", required_argument, NULL, O_SPLIT },
		{ "channels", required_argument, NULL, O_CHANNELS },
		{ "generations", required_argument, NULL, O_GENERATIONS },
		{ "scheme", required_argument, NULL, O_SCHEME },
		{ "rtt", required_argument, NULL, O_RTT },
		{ "rate", required_argument, NULL, O_RATE },
		{ "user-imm", required_argument, NULL, O_USER_IMM },
		{ "seed", required_argument, NULL, O_SEED },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "busy-poll", no_argument, NULL, O_BUSY_POLL },
		{ "json", no_argument, NULL, O_JSON },
		{ "auth-key-file", required_argument, NULL, O_AUTH_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.gid_index = -1, .port = 1, .peer_qpn = 0x100, .size = 1 << 20, .iters = 100,
		.inflight = 8, .mtu = 4096, .chunk = 65536, .split = SDR_IMM_SPLIT_DEFAULT,
		.scheme = { .kind = SDR_SCHEME_SR }, .rtt_ns = 1000000, .seed = 1,
		.timeout_s = 120,
	};
	struct sdr_conn_attr attr;
	struct sdr_rel_cfg rel;
	uint32_t u;
	uint64_t v;
	double d;
	int c, rc;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, ":d:s:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case O_PORT:
			if ((rc = parse_u32("port", optarg, 1, 255, &u)) != 0)
				return rc;
			o.port = (uint8_t)u;
			break;
		case O_GID:
			if ((rc = parse_u32("gid-index", optarg, 0, 255, &u)) != 0)
				return rc;
			o.gid_index = (int)u;
			break;
		case O_PEER_IP: o.peer_ip = optarg; break;
		case O_PEER_QPN:
			/* its control QPN, the next one, must be a QPN too */
			if ((rc = parse_u32("peer-qpn", optarg, 1, 0xFFFFFE, &o.peer_qpn)) != 0)
				return rc;
			break;
		case O_PEER_RKEY:
			if ((rc = parse_u32("peer-rkey", optarg, 0, UINT32_MAX, &o.peer_rkey)) != 0)
				return rc;
			break;
		case O_SERVER: o.server = 1; break;
		case 's':
			if (units_parse_size(optarg, &o.size) != 0 || o.size > (1ull << 32))
				return bad("size", optarg, NULL);
			break;
		case O_ITERS:
			if ((rc = parse_u32("iters", optarg, 1, 10000000, &o.iters)) != 0)
				return rc;
			break;
		case O_INFLIGHT:
			if ((rc = parse_u32("inflight", optarg, 1, 65536, &o.inflight)) != 0)
				return rc;
			break;
		case O_MAX_MSG:
			o.max_msg_s = optarg;
			if (units_parse_size(optarg, &o.max_msg) != 0 || o.max_msg == 0)
				return bad("max-msg", optarg, NULL);
			break;
		case O_MTU:
			o.mtu_s = optarg;
			if (units_parse_size(optarg, &v) != 0 || v > UINT32_MAX)
				return bad("mtu", optarg, NULL);
			o.mtu = (uint32_t)v;
			break;
		case O_CHUNK:
			o.chunk_s = optarg;
			if (units_parse_size(optarg, &o.chunk) != 0)
				return bad("chunk", optarg, NULL);
			break;
		case O_SPLIT:
			o.split_s = optarg;
			if (sdr_imm_split_parse(optarg, &o.split) != 0)
				return bad("imm-split", optarg, "three widths A,B,C summing to 32");
			break;
		case O_CHANNELS:
		case O_GENERATIONS:
			if (units_parse_u64(optarg, 64, &v) != 0 || v != 1) {
				fprintf(stderr, PROG ": --%s %s: a verbs peer has one data QP and one "
					"control QP (the NIC picks QPNs), so %s must be 1\n",
					c == O_CHANNELS ? "channels" : "generations", optarg,
					c == O_CHANNELS ? "channels" : "generations");
				return 2;
			}
			break;
		case O_SCHEME:
			/* (auto: its loss reports count PSNs, which a completion does not
			 * carry) */
			rc = sdr_scheme_parse(optarg, &o.scheme);
			if (rc != 0)
				return bad("scheme", optarg, sdr_scheme_strerror(rc));
			o.scheme_s = optarg;
			break;
		case O_RTT:
			if (units_parse_time(optarg, &d) != 0 || d <= 0 || d > 3600)
				return bad("rtt", optarg,
					   "a time such as 25ms, above 0 and at most 3600s");
			o.rtt_ns = (uint64_t)(d * 1e9 + 0.5);
			if (o.rtt_ns == 0)
				return bad("rtt", optarg, "below a nanosecond");
			break;
		case O_RATE:
			if (units_parse_rate(optarg, &o.rate_bps) != 0 || o.rate_bps > 10e12)
				return bad("rate", optarg, "a rate such as 10G, at most 10T");
			break;
		case O_USER_IMM:
			if (strcmp(optarg, "perf") == 0)
				o.imm_traffic = 0;
			else if (strcmp(optarg, "traffic") == 0)
				o.imm_traffic = 1;
			else
				return bad("user-imm", optarg, "perf or traffic");
			break;
		case O_SEED:
			if (units_parse_u64(optarg, UINT64_MAX, &o.seed) != 0)
				return bad("seed", optarg, NULL);
			break;
		case O_TIMEOUT:
			if (units_parse_time(optarg, &o.timeout_s) != 0 || o.timeout_s <= 0)
				return bad("timeout", optarg, NULL);
			/* (in ns it must neither round to 0 nor overflow 64 bits) */
			if (o.timeout_s < 1e-3 || o.timeout_s > 1e6)
				return bad("timeout", optarg, "1 ms to 1e6 s");
			break;
		case O_BUSY_POLL: o.busy_poll = 1; break;
		case O_AUTH_FILE:
			if ((rc = read_auth_key(optarg, &o)) != 0)
				return rc;
			break;
		case O_JSON: o.json = 1; break;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, PROG ": option '%s' needs a value (see --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, PROG ": unknown option '-%c' (see --help)\n", optopt);
			else
				fprintf(stderr, PROG ": unknown option '%s' (see --help)\n",
					argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		if (optind + 1 != argc || (strcmp(argv[optind], "write_bw") != 0 &&
					   strcmp(argv[optind], "write_lat") != 0)) {
			fprintf(stderr, PROG ": expected at most one test: write_bw or write_lat\n");
			return 2;
		}
		o.lat = strcmp(argv[optind], "write_lat") == 0;
	}
	rc = build_conn(&o, &attr, &rel);
	if (rc != 0)
		return rc;
	return run(&o, &attr, &rel);
}
