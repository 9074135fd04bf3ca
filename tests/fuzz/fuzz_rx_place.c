/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the receive path of a connection, as the dataplane runs it — parse,
 * QPN lookup and decode, sdr_ep_input() (placement by sdr_rx, the reliability receiver),
 * sdr_ep_output() (control messages, erasure decoding into the posted buffer), releases
 * and the bitmap / immediate / chunk-expand getters — driven by a script of operations.
 *
 * Every posted receive buffer (and its chunk-byte mirror) sits between red zones that are
 * poisoned with ASan's manual poisoning, and everything past the posted length up to the
 * next chunk boundary is poisoned too: a write outside the posted message, even inside the
 * allocation, is an ASan report. The guard bytes are also checked after every operation.
 *
 * Input: byte 0 chooses the connection and the parser flags, then operations follow:
 *
 *   byte 0   bit 0 parser verifies the ICRC   bit 1 EC (else sr), bits 6-7 its code:
 *            ec-mds:2,1, ec-xor:2,1, ec-mds:3,2, ec-xor:4,2
 *            bits 2-3 immediate split          bit 4 IPv6   bit 5 802.1Q tag
 *   0 POST    len16                      post a receive of len bytes (guarded buffer)
 *   1 DATA    slot off16 qsel fl aux frag [pos xor]
 *                                        a data packet built by the project's builder
 *   2 RAW     len16 bytes...             a frame as it is
 *   3 OUTPUT  dt                         advance the clock, run sdr_ep_output + poll
 *   4 RELEASE slot                       sdr_ep_recv_release (sdr_rx_complete)
 *   5 QUERY   slot chunk                 every getter, with consistency checks
 *   6 CTRL    type gen id flags cum16 ws16 val16 nwords words...
 *                                        a control packet to the control QPN
 *
 * DATA fields: off16 bit 15 counts from the parity region; qsel bit 7 picks the data QPN
 * of the slot's current generation (else qsel indexes the QPNs around the connection's);
 * fl: 1 wrong R_Key, 2 VA off by a bit, 4 DMA length off, 8 payload length off by aux,
 * 0x10 opcode aux, 0x20 flip frame byte pos by xor, 0x40 deliver twice, 0x80 then OUTPUT.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

#include "qpn_table.h"
#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "sdr_bitmap.h"
#include "sdr_ctrl.h"
#include "sdr_endpoint.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MTU		256
#define CHUNK		512		/* 2 packets per chunk */
#define MAX_MSG		3000		/* 12 packets (the last short), 6 chunks */
#define INFLIGHT	3
#define LOCAL_QPN	0x100
#define OTHER_QPN	0x200		/* another connection's range on the same port */
#define RKEY		0x1234
#define RED_ZONE	64
#define GUARD_BYTE	0xA5
#define MAX_OPS		256
#define FRAME_CAP	1024
#define NOUT		8
#define T_LOCAL		0x10CA1000000001ull	/* the endpoint's tag (fixed: inputs repeat) */
#define T_PEER		0x9EE2000000002ull	/* the peer's, as the script's frames say */

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_rx_place: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

/* An allocation whose bytes outside [p, p + len) are poisoned and filled with GUARD_BYTE. */
struct guarded {
	uint8_t *base;
	size_t total;
	uint8_t *p;
	size_t len;
};

static uint8_t *
guard_alloc(struct guarded *g, size_t len, size_t round)
{
	size_t body = round ? (len + round - 1) / round * round : len;

	g->total = RED_ZONE + body + RED_ZONE;
	g->base = malloc(g->total);
	CHECK(g->base != NULL);
	memset(g->base, GUARD_BYTE, g->total);
	g->p = g->base + RED_ZONE;
	g->len = len;
	memset(g->p, 0, len);
	ASAN_POISON_MEMORY_REGION(g->base, RED_ZONE);
	ASAN_POISON_MEMORY_REGION(g->p + len, g->total - RED_ZONE - len);
	return g->p;
}

static uint8_t guard_pattern[RED_ZONE + CHUNK];

/* [p, p + n) is still GUARD_BYTE (one memcmp per piece: the check runs after every op). */
static int
guard_intact(const uint8_t *p, size_t n)
{
	for (size_t off = 0; off < n; off += sizeof(guard_pattern)) {
		size_t k = n - off < sizeof(guard_pattern) ? n - off : sizeof(guard_pattern);

		if (memcmp(p + off, guard_pattern, k) != 0)
			return 0;
	}
	return 1;
}

/* Every byte outside the posted range is still GUARD_BYTE. */
static void
guard_check(const struct guarded *g)
{
	size_t tail = g->total - RED_ZONE - g->len;

	ASAN_UNPOISON_MEMORY_REGION(g->base, g->total);
	if (!guard_intact(g->base, RED_ZONE) || !guard_intact(g->p + g->len, tail)) {
		fprintf(stderr, "fuzz_rx_place: a guard byte around a buffer of posted length %zu "
			"was written\n", g->len);
		abort();
	}
	ASAN_POISON_MEMORY_REGION(g->base, RED_ZONE);
	ASAN_POISON_MEMORY_REGION(g->p + g->len, tail);
}

static void
guard_free(struct guarded *g)
{
	if (g->base == NULL)
		return;
	guard_check(g);
	ASAN_UNPOISON_MEMORY_REGION(g->base, g->total);
	free(g->base);
	g->base = NULL;
}

/* One posted receive as the harness sees it. */
struct posted {
	int live;
	uint32_t slot;
	struct guarded buf;
	struct guarded bytes;	/* chunk-byte mirror */
};

struct state {
	struct sdr_ep *ep;
	struct sdr_ep_cfg cfg;
	struct sdr_conn_geom geom;
	struct qpn_table *qpns;
	unsigned int parse_flags;
	uint64_t now;
	struct posted post[INFLIGHT * 2];
	uint8_t frame[FRAME_CAP];
	uint8_t out[NOUT][FRAME_CAP];
};

static const struct sdr_imm_split splits[4] = {
	{ 2, 26, 4 }, { 3, 21, 8 }, { 2, 30, 0 }, { 4, 27, 1 },
};

static const struct sdr_scheme codes[4] = {
	{ .kind = SDR_SCHEME_EC_MDS, .k = 2, .m = 1 },
	{ .kind = SDR_SCHEME_EC_XOR, .k = 2, .m = 1 },
	{ .kind = SDR_SCHEME_EC_MDS, .k = 3, .m = 2 },
	{ .kind = SDR_SCHEME_EC_XOR, .k = 4, .m = 2 },
};

static int
setup(struct state *s, uint8_t mode)
{
	struct sdr_ep_cfg *c = &s->cfg;
	struct sdr_conn_attr *a = &c->attr;

	memset(c, 0, sizeof(*c));
	sdr_conn_attr_default(a);
	a->mtu = MTU;
	a->chunk_size = CHUNK;
	a->split = splits[(mode >> 2) & 3];
	a->channels = 2;
	a->generations = 2;
	a->max_msg_size = MAX_MSG;
	a->max_inflight = INFLIGHT;
	a->local_qpn = LOCAL_QPN;
	a->remote_qpn = 0x300;
	a->local_rkey = RKEY;
	a->remote_rkey = 0x4321;
	sdr_rel_cfg_default(&c->rel, 100000);
	c->rel.timer_slots = 64;
	c->rel.global_timeout_ns = 50000000;
	c->rel.rate_bps = 1e9;
	if (mode & 2) {
		c->rel.scheme = codes[mode >> 6];
		a->ec_k = c->rel.scheme.k;
		a->ec_m = c->rel.scheme.m;
	}
	c->path.ip_version = (mode & 0x10) ? 6 : 4;
	c->path.has_vlan = (mode & 0x20) != 0;
	c->path.vlan_tci = 7;
	memcpy(c->path.src_ip, "\x0a\x00\x00\x01", 4);
	memcpy(c->path.dst_ip, "\x0a\x00\x00\x02", 4);
	if (c->path.ip_version == 6) {
		memset(c->path.src_ip, 0x20, 16);
		memset(c->path.dst_ip, 0x21, 16);
	}
	CHECK(sdr_conn_geometry(a, &s->geom) == 0);
	c->tag = T_LOCAL;
	s->parse_flags = (mode & 1) ? ROCE_PARSE_VERIFY_ICRC : 0;
	s->now = 1000;
	s->ep = sdr_ep_create(c);
	s->qpns = qpn_table_create(4);
	CHECK(s->ep != NULL && s->qpns != NULL);
	CHECK(qpn_table_add(s->qpns, LOCAL_QPN, s->geom.ndata_qpns + 1, 0) == 0);
	CHECK(qpn_table_add(s->qpns, OTHER_QPN, 5, 1) == 0);
	return 0;
}

static struct posted *
posted_of(struct state *s, uint32_t slot)
{
	for (unsigned int i = 0; i < INFLIGHT * 2; i++)
		if (s->post[i].live && s->post[i].slot == slot)
			return &s->post[i];
	return NULL;
}

static void
check_guards(struct state *s)
{
	for (unsigned int i = 0; i < INFLIGHT * 2; i++) {
		if (!s->post[i].live)
			continue;
		guard_check(&s->post[i].buf);
		guard_check(&s->post[i].bytes);
	}
}

static void
op_post(struct state *s, struct input *in)
{
	uint64_t len = take(in, 2);
	struct posted *p = NULL;
	uint32_t slot = 0, nchunks;
	int rc;

	if (len > MAX_MSG + 16)
		len %= MAX_MSG + 1;
	for (unsigned int i = 0; i < INFLIGHT * 2 && p == NULL; i++)
		if (!s->post[i].live)
			p = &s->post[i];
	if (p == NULL)
		return;
	nchunks = sdr_conn_msg_chunks(&s->geom, len);
	guard_alloc(&p->buf, len, CHUNK);
	guard_alloc(&p->bytes, nchunks, 0);
	rc = sdr_ep_recv(s->ep, p->buf.p, len, p->bytes.p, len, s->now, &slot);
	if (rc != 0) {
		CHECK(rc == -EAGAIN || (rc == -EMSGSIZE && len > MAX_MSG));
		guard_free(&p->buf);
		guard_free(&p->bytes);
		return;
	}
	CHECK(len <= MAX_MSG && slot < s->geom.nslots && posted_of(s, slot) == NULL);
	p->live = 1;
	p->slot = slot;
}

static void
release(struct state *s, uint32_t slot)
{
	struct posted *p = posted_of(s, slot);
	int rc = sdr_ep_recv_release(s->ep, slot);

	CHECK((rc == 0) == (p != NULL));
	if (p == NULL)
		return;
	guard_free(&p->buf);
	guard_free(&p->bytes);
	p->live = 0;
}

/* What the dataplane does with one frame (dataplane/pipeline.c rx_stage and deliver). */
static void
deliver(struct state *s, const uint8_t *frame, uint32_t len)
{
	const uint64_t *rxc = sdr_ep_rx_counters(s->ep);
	uint64_t placed = rxc[SDR_RX_PLACED];
	struct roce_view v;
	uint32_t ci, base, ch, gen = 0;
	enum sdr_qpn_kind kind;
	struct sdr_imm_fields f;
	struct sdr_rx_msg_info info;
	struct posted *p;

	memset(&v, 0, sizeof(v));
	if (roce_parse(frame, len, s->parse_flags, &v) != ROCE_V_OK)
		return;
	CHECK(v.payload >= frame && v.payload + v.payload_len <= frame + len);
	if (qpn_table_lookup(s->qpns, v.dqpn, &ci, &base) != 0 || ci != 0)
		return;
	kind = sdr_conn_qpn_decode(base, &s->cfg.attr, v.dqpn, &ch, &gen);
	CHECK(kind != SDR_QPN_FOREIGN);
	sdr_ep_input(s->ep, &v, kind, gen, s->now);
	if (rxc[SDR_RX_PLACED] == placed)
		return;
	/* placed: the payload is in the posted buffer at its offset */
	CHECK(kind == SDR_QPN_DATA && rxc[SDR_RX_PLACED] == placed + 1);
	f = sdr_imm_unpack(&s->cfg.attr.split, v.imm);
	p = posted_of(s, f.msg_id);
	CHECK(p != NULL && sdr_rx_msg_info(sdr_ep_rx(s->ep), f.msg_id, &info) == 0);
	if (f.pkt_off < info.npkts) {
		uint64_t off = (uint64_t)f.pkt_off * MTU;

		CHECK(off + v.payload_len <= p->buf.len);
		CHECK(memcmp(p->buf.p + off, v.payload, v.payload_len) == 0);
	} else {
		CHECK(s->geom.parity_pkt_off != 0 && f.pkt_off >= s->geom.parity_pkt_off);
	}
}

static void
op_output(struct state *s, uint64_t dt)
{
	uint8_t *frames[NOUT];
	uint16_t lens[NOUT];
	struct sdr_ep_done d;
	uint32_t n;

	s->now += dt;
	for (unsigned int i = 0; i < NOUT; i++)
		frames[i] = s->out[i];
	for (int round = 0; round < 4; round++) {
		n = sdr_ep_output(s->ep, s->now, frames, FRAME_CAP, lens, NOUT);
		CHECK(n <= NOUT);
		for (uint32_t i = 0; i < n; i++) {
			struct roce_view v;
			struct sdr_ctrl c;

			/* only control messages go out: they must be well formed */
			CHECK(roce_parse(frames[i], lens[i], ROCE_PARSE_VERIFY_ICRC, &v) == ROCE_V_OK);
			CHECK(v.opcode == ROCE_OP_UC_SEND_ONLY);
			CHECK(sdr_ctrl_decode(v.payload, v.payload_len, &c) == 0);
		}
		if (n < NOUT)
			break;
	}
	/* nothing is sent: every completion is a receive's (possibly released since) */
	while (sdr_ep_poll(s->ep, &d))
		CHECK(d.is_recv && d.slot < s->geom.nslots);
	(void)sdr_ep_next_time(s->ep, s->now);
}

static void
op_data(struct state *s, struct input *in)
{
	const struct sdr_conn_attr *a = &s->cfg.attr;
	uint32_t slot = take(in, 1), off16 = take(in, 2), qsel = take(in, 1);
	uint32_t fl = take(in, 1), aux = take(in, 1), frag = take(in, 1);
	uint32_t pkt_off = off16 & 0x7FFF, plen = MTU, idx, msg_id;
	struct sdr_rx_msg_info info;
	struct roce_pkt pkt;
	uint8_t payload[MTU + 256];
	int len;

	if (off16 & 0x8000)
		pkt_off += s->geom.parity_pkt_off;
	msg_id = slot & (s->geom.nslots - 1);
	memset(&info, 0, sizeof(info));
	if (sdr_rx_msg_info(sdr_ep_rx(s->ep), msg_id, &info) == 0 && pkt_off < info.npkts &&
	    pkt_off == info.npkts - 1)
		plen = (uint32_t)(info.len - (uint64_t)(info.npkts - 1) * MTU);
	if (fl & 8)
		plen = (uint32_t)((int)plen + (int8_t)aux) % (MTU + 256);
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = (fl & 0x10) ? (uint8_t)aux : ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
	if (qsel & 0x80)
		idx = 1 + info.gen * a->channels + (qsel & 1);
	else
		idx = qsel % (s->geom.ndata_qpns + 3);
	pkt.dqpn = LOCAL_QPN - 1 + idx;
	pkt.psn = off16;
	pkt.imm = sdr_imm_pack(&a->split, msg_id, pkt_off, frag);
	pkt.va = sdr_conn_va(&s->geom, msg_id, pkt_off);
	if (fl & 2)
		pkt.va ^= 1ull << (aux & 63);
	pkt.rkey = (fl & 1) ? RKEY ^ (aux | 1) : RKEY;
	pkt.dma_len = (fl & 4) ? plen ^ (aux + 1) : plen;
	for (uint32_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(slot * 31 + pkt_off * 7 + i);
	len = roce_build(s->frame, sizeof(s->frame), &s->cfg.path, &pkt, payload, plen);
	if (fl & 0x20) {
		uint32_t pos = take(in, 1), x = take(in, 1);

		if (len > 0)
			s->frame[pos % (uint32_t)len] ^= (uint8_t)x;
	}
	if (len <= 0)
		return;
	deliver(s, s->frame, (uint32_t)len);
	if (fl & 0x40)
		deliver(s, s->frame, (uint32_t)len);
	if (fl & 0x80)
		op_output(s, 1000);
}

static void
op_raw(struct state *s, struct input *in)
{
	uint32_t len = take(in, 2);
	uint8_t *f;

	if (len > in->n)
		len = (uint32_t)in->n;
	if (len > sizeof(s->frame))
		len = sizeof(s->frame);
	/* a copy, so that a read past the frame is a read past an allocation of its size */
	f = malloc(len ? len : 1);
	CHECK(f != NULL);
	memcpy(f, in->p, len);
	in->p += len;
	in->n -= len;
	deliver(s, f, len);
	free(f);
}

static void
op_query(struct state *s, struct input *in)
{
	const struct sdr_rx *rx = sdr_ep_rx(s->ep);
	uint32_t slot = take(in, 1), chunk = take(in, 1), imm, plen;
	struct sdr_rx_msg_info info;
	uint64_t exp[SDR_BITMAP_WORDS(1024)];
	const uint64_t *bits;
	const uint8_t *bytes;
	struct posted *p = posted_of(s, slot);
	uint8_t *ptr;
	int rc, n;

	rc = sdr_rx_msg_info(rx, slot, &info);
	bits = sdr_rx_chunk_bits(rx, slot);
	bytes = sdr_rx_chunk_bytes(rx, slot);
	CHECK((bits != NULL) == (p != NULL) && (bytes != NULL) == (p != NULL));
	if (p == NULL) {
		CHECK(sdr_rx_imm_get(rx, slot, &imm) == -EINVAL);
		CHECK(sdr_rx_chunk_expand(rx, slot, chunk, exp) == -EINVAL);
		CHECK(sdr_rx_chunk_span(rx, slot, chunk, &ptr, &plen) == -EINVAL);
		return;
	}
	CHECK(rc == 0 && bytes == p->bytes.p);
	CHECK(info.len == p->buf.len && info.chunks_done <= info.nchunks);
	CHECK(info.npkts == sdr_conn_msg_pkts(&s->geom, info.len));
	CHECK(info.pkts_received <= info.npkts + info.nparity_chunks * (CHUNK / MTU));
	CHECK((info.state == SDR_SLOT_DONE) == (info.chunks_done == info.nchunks));
	CHECK(sdr_bitmap_count(bits, info.nchunks) == info.chunks_done);
	CHECK(sdr_bitmap_count(bits, info.nchunks + info.nparity_chunks) ==
	      info.chunks_done + info.parity_chunks_done);
	for (uint32_t c = 0; c < info.nchunks; c++)
		CHECK(bytes[c] == (uint8_t)sdr_bit_test(bits, c));
	rc = sdr_rx_imm_get(rx, slot, &imm);
	CHECK(rc == 0 || rc == -EAGAIN);
	n = sdr_rx_chunk_expand(rx, slot, chunk, exp);
	if (chunk >= info.nchunks + info.nparity_chunks) {
		CHECK(n == -EINVAL);
	} else {
		CHECK(n >= 1 && n <= CHUNK / MTU);
		/* a complete chunk has every packet bit */
		if (sdr_bit_test(bits, chunk))
			CHECK(sdr_bitmap_count(exp, (uint32_t)n) == (uint32_t)n);
	}
	rc = sdr_rx_chunk_span(rx, slot, chunk, &ptr, &plen);
	if (chunk < info.nchunks) {
		CHECK(rc == 0 && ptr >= p->buf.p && ptr + plen <= p->buf.p + p->buf.len);
		CHECK(plen >= 1 || info.len == 0);
	} else {
		CHECK(rc == -EINVAL);
	}
	rc = sdr_rx_parity_span(rx, slot, chunk, &ptr, &plen);
	CHECK(rc == (chunk < info.nparity_chunks ? 0 : -EINVAL));
}

/* Control message @p c to the connection's control QPN, as a frame through deliver(). */
static void
ctrl_send(struct state *s, const struct sdr_ctrl *c)
{
	uint8_t payload[SDR_CTRL_MAX_LEN];
	struct roce_pkt pkt;
	int n = sdr_ctrl_encode(c, payload, sizeof(payload)), len;

	CHECK(n == SDR_CTRL_HDR_LEN + 4 * c->nwords);
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = ROCE_OP_UC_SEND_ONLY;
	pkt.dqpn = LOCAL_QPN + s->geom.ndata_qpns;
	len = roce_build(s->frame, sizeof(s->frame), &s->cfg.path, &pkt, payload, (uint32_t)n);
	if (len > 0)
		deliver(s, s->frame, (uint32_t)len);
}

/*
 * The handshake with a peer of tag T_PEER, as its HELLOs would make it (sdr_peer.h): an
 * unproven HELLO teaches its tag, our answer carries it, a HELLO to our tag proves it.
 * Then the receives are keyed (RKEY) and the script's data frames can be placed: without
 * it every one is bad_rkey and nothing past the key check is reached.
 */
static void
handshake(struct state *s)
{
	const struct sdr_scheme *sc = &s->cfg.rel.scheme;
	struct sdr_ctrl h = {
		.type = SDR_CTRL_HELLO, .src_tag = T_PEER,
		/* the scheme of the peer's data, marked as said (wire-format.md, HELLO) */
		.value = 1ull << 63 | (sdr_scheme_is_ec(sc) ? (uint64_t)sc->kind << 32 |
							    (uint64_t)sc->k << 16 | sc->m : 0),
	};

	ctrl_send(s, &h);
	op_output(s, 0);
	h.dst_tag = T_LOCAL;
	ctrl_send(s, &h);
	CHECK(sdr_ep_ready(s->ep));
}

static void
op_ctrl(struct state *s, struct input *in)
{
	struct sdr_ctrl c;

	memset(&c, 0, sizeof(c));
	c.type = (uint8_t)take(in, 1);
	c.gen = (uint8_t)take(in, 1);
	c.msg_id = (uint16_t)take(in, 1);
	c.flags = (uint16_t)take(in, 1);
	c.cum = take(in, 2);
	c.win_start = take(in, 2);
	c.value = take(in, 2);
	c.nwords = (uint8_t)(take(in, 1) % (SDR_CTRL_MAX_WORDS + 1));
	for (unsigned int i = 0; i < c.nwords; i++)
		c.win[i] = take(in, 4);
	/* from the peer, to us: past the tag check to the message's handling (gen bit 7: to
	 * a tag that is not ours, dropped there) */
	c.src_tag = T_PEER;
	c.dst_tag = (c.gen & 0x80) ? T_LOCAL ^ 1 : T_LOCAL;
	c.gen &= 0x7F;
	ctrl_send(s, &c);
}

/* Over every input run: packets placed, control messages taken past their checks. */
static uint64_t placed_total, ctrl_total;

/*
 * After a replay of the seeds and regressions (replay.c): they must reach placement and
 * the handling of control messages, or the target tests nothing past the first checks.
 */
int fuzz_replay_check(unsigned long inputs);

int
fuzz_replay_check(unsigned long inputs)
{
	printf("fuzz_rx_place: %lu inputs placed %llu packets, took %llu control messages\n",
	       inputs, (unsigned long long)placed_total, (unsigned long long)ctrl_total);
	return inputs > 0 && (placed_total == 0 || ctrl_total == 0) ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct input in = { data, size };
	uint32_t mode = take(&in, 1);

	if (guard_pattern[0] != GUARD_BYTE)
		memset(guard_pattern, GUARD_BYTE, sizeof(guard_pattern));
	memset(&s.post, 0, sizeof(s.post));
	setup(&s, (uint8_t)mode);
	handshake(&s);
	for (int ops = 0; in.n && ops < MAX_OPS; ops++) {
		switch (take(&in, 1) % 7) {
		case 0: op_post(&s, &in); break;
		case 1: op_data(&s, &in); break;
		case 2: op_raw(&s, &in); break;
		case 3: op_output(&s, (uint64_t)take(&in, 1) * 1000); break;
		case 4: release(&s, take(&in, 1)); break;
		case 5: op_query(&s, &in); break;
		default: op_ctrl(&s, &in); break;
		}
		check_guards(&s);
	}
	/* a final flush with the clock far ahead: timeouts, decodes, completions */
	op_output(&s, 100000000);
	check_guards(&s);
	for (unsigned int i = 0; i < INFLIGHT * 2; i++)
		if (s.post[i].live)
			release(&s, s.post[i].slot);
	CHECK(sdr_rx_posted(sdr_ep_rx(s.ep)) == 0);
	placed_total += sdr_ep_rx_counters(s.ep)[SDR_RX_PLACED];
	{
		const uint64_t *k = sdr_ep_counters(s.ep);

		/* past the opcode, MAC, decode and tag checks, and not a HELLO */
		ctrl_total += k[SDR_EP_CTRL_PKTS_IN] - k[SDR_EP_CTRL_BAD_OPCODE] -
			      k[SDR_EP_CTRL_BAD_MAC] - k[SDR_EP_CTRL_BAD] - k[SDR_EP_HELLOS_IN] -
			      k[SDR_EP_CTRL_BAD_TOKEN] - k[SDR_EP_CTRL_OLD_EPOCH] -
			      k[SDR_EP_CTRL_EARLY];
	}
	sdr_ep_destroy(s.ep);
	qpn_table_destroy(s.qpns);
	return 0;
}
