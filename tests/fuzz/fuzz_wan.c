/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the WAN side of a live pair of endpoints.
 *
 * Endpoint A sends messages to endpoint B over an in-memory wire (real frames, built and
 * parsed, a fixed delay). The input interleaves the genuine traffic with forged frames to
 * either side: well-formed control messages of every type with windows, points, flags and
 * values from the input, and data packets that name a slot, generation and offset with a
 * guessed R_Key. The forger is blind (it never learns a tag) unless byte 0 bit 0 lets it
 * use the right tags, as an attacker on the path could.
 *
 * Invariants, whatever arrives:
 *  - a receive that completes OK holds exactly the bytes of the genuine message of its
 *    sequence number (every message carries a pattern of its sequence number);
 *  - nothing crashes or reads out of bounds;
 *  - a blind forger cannot stop the connection: once the forgeries end, every message sent
 *    and every receive posted completes OK within a few seconds of simulated time.
 *
 * Input: byte 0: bit 0 the forger knows the tags, bits 1-2 the scheme (sr, sr-nack,
 * ec-xor:2,1, ec-mds:3,2). Then operations (byte: op % 4):
 *   0 STEP     dt                   advance the clock by dt * 10 us, exchange frames
 *   1 CTRL     to_b type flags gen id cum32 ws32 value32 nw words...   a forged control message
 *   2 DATA     gen ch id off rkey32 len16                               a forged data packet to B
 *   3 APP      what                 post a receive at B or send a message from A
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "sdr_ctrl.h"
#include "sdr_endpoint.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QPN_A		0x100
#define QPN_B		0x900
#define MTU		256
#define LEN		(8 * MTU + 77)	/* 9 packets, 3 chunks, a short last one */
#define MSGS		12
#define FRAME		512
#define WIRE		4096
#define DELAY		50000ull	/* one way, ns */
#define MAX_OPS		200

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_wan: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

struct frame {
	uint64_t t;
	uint8_t to_b;
	uint16_t len;
	uint8_t b[FRAME];
};

struct pair {
	struct sdr_ep_cfg cfg[2];
	struct sdr_ep *ep[2];		/* A, B */
	struct frame *wire;
	uint32_t nwire;
	uint64_t now;
	uint8_t *src[MSGS], *dst[MSGS];
	int sst[MSGS], rst[MSGS];
	uint32_t nsent, nposted;
	uint8_t frames[32][FRAME];
};

static void
pattern(uint8_t *p, uint64_t len, uint32_t seq32)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 29 + seq32 * 131 + (i >> 7));
}

static void
cfg_init(struct pair *x, int scheme)
{
	static const struct sdr_scheme schemes[4] = {
		{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_SR_NACK, 0, 0, 0 },
		{ SDR_SCHEME_EC_XOR, 2, 1, 0 }, { SDR_SCHEME_EC_MDS, 3, 2, 0 },
	};

	for (int i = 0; i < 2; i++) {
		struct sdr_ep_cfg *c = &x->cfg[i];

		memset(c, 0, sizeof(*c));
		sdr_conn_attr_default(&c->attr);
		c->attr.mtu = MTU;
		c->attr.chunk_size = 3 * MTU;
		c->attr.split = (struct sdr_imm_split){ 4, 24, 4 };
		c->attr.channels = 2;
		c->attr.generations = 2;
		c->attr.max_msg_size = LEN;
		c->attr.max_inflight = 4;
		c->attr.local_qpn = i == 0 ? QPN_A : QPN_B;
		c->attr.remote_qpn = i == 0 ? QPN_B : QPN_A;
		c->rel.scheme = schemes[scheme];
		if (sdr_scheme_is_ec(&c->rel.scheme)) {
			c->attr.ec_k = c->rel.scheme.k;
			c->attr.ec_m = c->rel.scheme.m;
		}
		sdr_rel_cfg_default(&c->rel, 2 * DELAY);
		c->rel.scheme = schemes[scheme];
		c->rel.global_timeout_ns = 0;
		c->path.ip_version = 4;
		c->path.src_ip[0] = c->path.dst_ip[0] = 10;
		c->path.src_ip[3] = (uint8_t)(1 + i);
		c->path.dst_ip[3] = (uint8_t)(2 - i);
		c->tag = i == 0 ? 0x1111222233334444ull : 0x5555666677778888ull;
	}
}

static void
to_wire(struct pair *x, const uint8_t *b, uint16_t len, int to_b, uint64_t t)
{
	struct frame *f;

	if (x->nwire == WIRE || len > FRAME)
		return;		/* lost */
	f = &x->wire[x->nwire++];
	f->t = t;
	f->to_b = (uint8_t)to_b;
	f->len = len;
	memcpy(f->b, b, len);
}

static void
deliver(struct pair *x, const uint8_t *b, uint16_t len, int to_b)
{
	struct sdr_ep *ep = x->ep[to_b];
	const struct sdr_conn_attr *a = &x->cfg[to_b].attr;
	struct roce_view v;
	uint32_t ch, gen;
	enum sdr_qpn_kind kind;

	if (roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v) != ROCE_V_OK)
		return;
	kind = sdr_conn_qpn_decode(a->local_qpn, a, v.dqpn, &ch, &gen);
	if (kind != SDR_QPN_FOREIGN)
		sdr_ep_input(ep, &v, kind, gen, x->now);
}

static void
poll_all(struct pair *x)
{
	struct sdr_ep_done d;

	while (sdr_ep_poll(x->ep[0], &d)) {
		CHECK(!d.is_recv && d.cookie < MSGS);
		x->sst[d.cookie] = d.status;
	}
	while (sdr_ep_poll(x->ep[1], &d)) {
		uint8_t *want = malloc(LEN);

		CHECK(d.is_recv && d.cookie < MSGS && want != NULL);
		x->rst[d.cookie] = d.status;
		if (d.status == SDR_DONE_OK) {
			/* the invariant: every byte from the genuine message of this number */
			pattern(want, LEN, (uint32_t)d.seq);
			CHECK(memcmp(x->dst[d.cookie], want, LEN) == 0);
		}
		free(want);
		CHECK(sdr_ep_recv_release(x->ep[1], d.slot) == 0);
	}
}

/* Advance to @p until, moving genuine frames both ways. */
static void
run_to(struct pair *x, uint64_t until)
{
	while (x->now <= until) {
		uint64_t next = until + 1;
		uint16_t lens[32];
		uint8_t *fr[32];

		for (int i = 0; i < 32; i++)
			fr[i] = x->frames[i];
		for (int s = 0; s < 2; s++) {
			uint32_t n;

			while ((n = sdr_ep_output(x->ep[s], x->now, fr, FRAME, lens, 32)) > 0)
				for (uint32_t i = 0; i < n; i++)
					to_wire(x, fr[i], lens[i], s == 0, x->now + DELAY);
		}
		for (uint32_t i = 0; i < x->nwire;) {
			if (x->wire[i].t <= x->now) {
				struct frame f = x->wire[i];

				x->wire[i] = x->wire[--x->nwire];
				deliver(x, f.b, f.len, f.to_b);
				continue;
			}
			if (x->wire[i].t < next)
				next = x->wire[i].t;
			i++;
		}
		poll_all(x);
		for (int s = 0; s < 2; s++) {
			uint64_t t = sdr_ep_next_time(x->ep[s], x->now);

			if (t < next)
				next = t;
		}
		x->now = next > x->now ? next : x->now + 1000;
	}
}

static void
app(struct pair *x, uint32_t what)
{
	if ((what & 1) && x->nposted < MSGS) {
		uint32_t slot;

		if (sdr_ep_recv(x->ep[1], x->dst[x->nposted], LEN, NULL, x->nposted, x->now,
				&slot) == 0)
			x->nposted++;
	} else if (x->nsent < MSGS) {
		struct sdr_ep_stream st;

		/* streamed, so the bytes can carry the sequence number the message got (a
		 * forged WITHDRAW an attacker on the path sends moves it) */
		if (sdr_ep_send_stream(x->ep[0], x->src[x->nsent], LEN, 0, x->nsent, x->now,
				       &st) == 0) {
			pattern(x->src[x->nsent], LEN, (uint32_t)st.seq);
			CHECK(sdr_ep_stream_end(x->ep[0], &st) == 0);
			x->nsent++;
		}
	}
}

static void
forge_ctrl(struct pair *x, struct input *in, int knows_tags)
{
	int to_b = (int)(take(in, 1) & 1);
	const struct sdr_ep_cfg *from = &x->cfg[!to_b];
	struct sdr_ctrl c = { 0 };
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_SEND_ONLY,
				.dqpn = sdr_conn_remote_ctrl_qpn(&from->attr) };
	uint8_t payload[SDR_CTRL_MAX_LEN];
	uint8_t frame[FRAME];
	uint32_t tagsel;
	int n, l;

	c.type = (uint8_t)(1 + take(in, 1) % SDR_CTRL_PATHS);
	c.flags = (uint16_t)(take(in, 1) & SDR_CTRL_F_KNOWN);
	c.gen = (uint8_t)(take(in, 1) % 3);
	c.msg_id = (uint16_t)(take(in, 1) % 17);
	c.cum = take(in, 4);
	c.win_start = take(in, 4);
	c.value = take(in, 4);
	c.nwords = (uint8_t)(take(in, 1) % 3);
	for (uint32_t i = 0; i < c.nwords; i++)
		c.win[i] = take(in, 4);
	tagsel = take(in, 1);
	if (knows_tags && (tagsel & 1)) {
		c.dst_tag = sdr_ep_tag(x->ep[to_b]);
		c.src_tag = (tagsel & 2) ? sdr_ep_tag(x->ep[!to_b]) : 0x9999000000000000ull | tagsel;
	} else {
		/* blind: a guess, never the receiver's own tag */
		c.dst_tag = (uint64_t)take(in, 4) << 8 | tagsel;
		if (c.dst_tag == sdr_ep_tag(x->ep[to_b]))
			c.dst_tag ^= 1;
		c.src_tag = (tagsel & 2) ? sdr_ep_tag(x->ep[!to_b]) : 0x7777000000000000ull | tagsel;
	}
	n = sdr_ctrl_encode(&c, payload, sizeof(payload));
	if (n < 0)
		return;
	l = roce_build(frame, sizeof(frame), &from->path, &pkt, payload, (uint32_t)n);
	if (l > 0)
		deliver(x, frame, (uint16_t)l, to_b);
}

static void
forge_data(struct pair *x, struct input *in)
{
	const struct sdr_ep_cfg *a = &x->cfg[0];
	uint32_t gen = take(in, 1) % 2, ch = take(in, 1) % 2, id = take(in, 1) % 16;
	uint32_t off = take(in, 1) % 16, rkey = take(in, 4), len = take(in, 2) % (MTU + 1);
	struct roce_pkt pkt = {
		.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM,
		.dqpn = sdr_conn_data_qpn(a->attr.remote_qpn, &a->attr, ch, gen),
		.rkey = rkey,
		.dma_len = len,
	};
	struct sdr_conn_geom g;
	uint8_t payload[MTU], frame[FRAME];
	int l;

	sdr_conn_geometry(&a->attr, &g);
	pkt.va = sdr_conn_va(&g, id, off);
	pkt.imm = sdr_imm_pack(&a->attr.split, id, off, 0);
	memset(payload, 0x66, sizeof(payload));
	l = roce_build(frame, sizeof(frame), &a->path, &pkt, payload, len);
	if (l > 0)
		deliver(x, frame, (uint16_t)l, 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint32_t mode = take(&in, 1), ops = 0;
	int knows_tags = (int)(mode & 1);
	struct pair *x = calloc(1, sizeof(*x));

	CHECK(x != NULL);
	x->wire = malloc(WIRE * sizeof(*x->wire));
	CHECK(x->wire != NULL);
	cfg_init(x, (int)((mode >> 1) & 3));
	x->ep[0] = sdr_ep_create(&x->cfg[0]);
	x->ep[1] = sdr_ep_create(&x->cfg[1]);
	CHECK(x->ep[0] != NULL && x->ep[1] != NULL);
	for (int i = 0; i < MSGS; i++) {
		x->src[i] = malloc(LEN);
		x->dst[i] = calloc(1, LEN);
		x->sst[i] = x->rst[i] = -1;
		CHECK(x->src[i] != NULL && x->dst[i] != NULL);
	}
	/* two messages under way from the start */
	app(x, 1);
	app(x, 1);
	app(x, 0);
	app(x, 0);
	while (in.n > 0 && ops++ < MAX_OPS) {
		switch (take(&in, 1) % 4) {
		case 0:
			run_to(x, x->now + 10000ull * take(&in, 1));
			break;
		case 1:
			forge_ctrl(x, &in, knows_tags);
			break;
		case 2:
			forge_data(x, &in);
			break;
		default:
			app(x, take(&in, 1));
			break;
		}
	}
	/* the forgeries end: as many receives as messages (each waits for room, so the clock
	 * runs between tries), then a blind forger must not have stopped the connection */
	for (int tries = 0; tries < 200 && x->nposted != x->nsent; tries++) {
		app(x, x->nposted < x->nsent);
		run_to(x, x->now + 1000000);
	}
	run_to(x, x->now + 3000000000ull);
	if (!knows_tags) {
		CHECK(x->nposted == x->nsent);	/* (they needed room: completions) */
		for (uint32_t i = 0; i < x->nsent; i++) {
			if (x->sst[i] != SDR_DONE_OK || x->rst[i] != SDR_DONE_OK)
				fprintf(stderr, "fuzz_wan: message %u: send %d, receive %d\n", i,
					x->sst[i], x->rst[i]);
			CHECK(x->sst[i] == SDR_DONE_OK && x->rst[i] == SDR_DONE_OK);
		}
	}
	for (int i = 0; i < MSGS; i++) {
		free(x->src[i]);
		free(x->dst[i]);
	}
	sdr_ep_destroy(x->ep[0]);
	sdr_ep_destroy(x->ep[1]);
	free(x->wire);
	free(x);
	return 0;
}
