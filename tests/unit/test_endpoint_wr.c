/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One engine, two transports: the endpoint driven through frames (what the dataplane does)
 * and through work requests and completions (what sdr-verbs-peer does on an RDMA NIC).
 *
 * Two connections run side by side on one virtual clock with the same seeds. In both, A is
 * driven through frames. B is driven through frames in the first and through
 * sdr_ep_output_wr() / sdr_ep_input_write() / sdr_ep_input_ctrl() in the second, behind a
 * fake NIC: it turns each work request into the frame an RDMA NIC would put on the wire (its
 * own PSN per queue pair, its own headers and ICRC) and each frame that arrives into what the
 * NIC does with it (ICRC and R_Key checks, the write into the registered receive region, a
 * completion with the immediate and the byte count). The wire between A and B loses,
 * duplicates and reorders frames with a fixed seed.
 *
 * Checked: every message of both directions arrives intact; the frames on the wire are the
 * same bytes in the same order in both connections, both ways; and every counter of every
 * layer of A and of B is the same in both — for SR, SR-NACK and both codes, and then for a
 * sequence of control messages of every type, and malformed ones, injected into both.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rng.h"
#include "roce_build.h"
#include "roce_opcode.h"
#include "rel_tx.h"
#include "roce_parse.h"
#include "sdr_ctrl.h"
#include "sdr_endpoint.h"

#define QPN_A 0x100
#define QPN_B 0x900
#define RKEY_B 0x5EED0001u	/* the R_Key of B's receive region (a verbs MR's) */
#define FRAME 4400
#define MAXF 20000
#define NMSG 24
#define MAX_MSG (64 * 1024)
#define TAG_A 0xA1A1A1A1A1A1A1A1ull
#define TAG_B 0xB2B2B2B2B2B2B2B2ull

struct wf {
	uint64_t t;
	uint16_t len;
	uint8_t to_b;
	uint8_t b[FRAME];
};

/* One connection: A (frames) and B (frames, or work requests through the fake NIC). */
struct conn {
	int wr;
	struct sdr_ep_cfg ca, cb;
	struct sdr_ep *a, *b;
	struct wf *f;
	uint32_t n;
	struct sdr_rng rng;
	double loss, dup, reorder;
	/* the fake NIC of B: its receive region and the PSNs of its queue pairs */
	uint8_t *region;
	uint64_t region_len;
	uint32_t nic_psn[8], nic_ctrl_psn;
	uint64_t nic_drops;
	/* the frames each way: how many, and a running hash of their bytes */
	uint64_t frames[2], hash[2];
	/* the application on each side: message buffers, what it sent and received */
	uint8_t *sbuf[2], *rbuf[2];
	uint32_t sent[2], posted[2], verified[2], rslot[2][NMSG];
};

static uint64_t
msg_len(uint32_t i)
{
	return 1 + (uint64_t)i * 7919 % MAX_MSG;
}

static void
pattern(uint8_t *p, uint64_t len, uint64_t seq, int side)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seq * 7919 + (uint64_t)side * 31) ^ (i >> 8));
}

static int
pattern_ok(const uint8_t *p, uint64_t len, uint64_t seq, int side)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)((i * 131 + seq * 7919 + (uint64_t)side * 31) ^ (i >> 8)))
			return 0;
	return 1;
}

static uint64_t
fnv(uint64_t h, const uint8_t *b, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001B3ull;
	return h;
}

static void
side_cfg(struct sdr_ep_cfg *e, int i, struct sdr_scheme scheme)
{
	memset(e, 0, sizeof(*e));
	sdr_conn_attr_default(&e->attr);
	e->attr.mtu = 1024;
	e->attr.chunk_size = 4096;
	e->attr.max_msg_size = MAX_MSG;
	e->attr.max_inflight = 4;
	/* what a verbs peer can have: the NIC chooses one QPN per queue pair */
	e->attr.channels = 1;
	e->attr.generations = 1;
	e->attr.local_qpn = i == 0 ? QPN_A : QPN_B;
	e->attr.remote_qpn = i == 0 ? QPN_B : QPN_A;
	/* B receives into one registered region: one R_Key, which A's writes carry */
	if (i == 0)
		e->attr.remote_rkey = RKEY_B;
	else
		e->attr.local_rkey = RKEY_B;
	e->tag = i == 0 ? TAG_A : TAG_B;
	if (sdr_scheme_is_ec(&scheme)) {
		e->attr.ec_k = (uint16_t)scheme.k;
		e->attr.ec_m = (uint16_t)scheme.m;
	}
	sdr_rel_cfg_default(&e->rel, 200000);
	e->rel.scheme = scheme;
	e->rel.rate_bps = 10e9;
	e->rel.bucket_bytes = 16384;
	e->rel.ack_every_chunks = 2;
	e->rel.ack_every_ns = 20000;
	e->rel.nack_allowance_ns = 60000;
	e->rel.global_timeout_ns = 0;
	e->path.ip_version = 4;
	e->path.src_ip[0] = 10;
	e->path.src_ip[3] = (uint8_t)(1 + i);
	e->path.dst_ip[0] = 10;
	e->path.dst_ip[3] = (uint8_t)(2 - i);
}

static void
conn_init(struct conn *c, int wr, struct sdr_scheme scheme, double loss, uint64_t seed)
{
	struct sdr_conn_geom g;

	memset(c, 0, sizeof(*c));
	c->wr = wr;
	side_cfg(&c->ca, 0, scheme);
	side_cfg(&c->cb, 1, scheme);
	c->a = sdr_ep_create(&c->ca);
	c->b = sdr_ep_create(&c->cb);
	assert_non_null(c->a);
	assert_non_null(c->b);
	c->f = calloc(MAXF, sizeof(*c->f));
	assert_non_null(c->f);
	sdr_rng_seed(&c->rng, seed);
	c->loss = loss;
	c->dup = 0.01;
	c->reorder = 0.05;
	assert_int_equal(sdr_conn_geometry(&c->cb.attr, &g), 0);
	c->region_len = (uint64_t)g.nslots * g.slot_span;
	c->region = calloc(1, c->region_len);
	assert_non_null(c->region);
	for (int s = 0; s < 2; s++) {
		c->sbuf[s] = malloc((uint64_t)NMSG * MAX_MSG);
		c->rbuf[s] = calloc(NMSG, MAX_MSG);
		assert_non_null(c->sbuf[s]);
		assert_non_null(c->rbuf[s]);
	}
}

static void
conn_fini(struct conn *c)
{
	sdr_ep_destroy(c->a);
	sdr_ep_destroy(c->b);
	free(c->f);
	free(c->region);
	for (int s = 0; s < 2; s++) {
		free(c->sbuf[s]);
		free(c->rbuf[s]);
	}
}

static void
wire_put(struct conn *c, const uint8_t *b, uint16_t len, int to_b, uint64_t now)
{
	int copies = sdr_rng_unit(&c->rng) < c->loss ? 0 : 1;

	c->frames[to_b]++;
	c->hash[to_b] = fnv(c->hash[to_b] ^ len, b, len);
	if (copies && sdr_rng_unit(&c->rng) < c->dup)
		copies = 2;
	for (int k = 0; k < copies && c->n < MAXF; k++) {
		struct wf *f = &c->f[c->n++];

		f->t = now + 100000;
		if (sdr_rng_unit(&c->rng) < c->reorder)
			f->t += (uint64_t)(sdr_rng_unit(&c->rng) * 50000);
		f->len = len;
		f->to_b = (uint8_t)to_b;
		memcpy(f->b, b, len);
	}
}

/* The fake NIC sends a work request of B: the frame an RDMA NIC builds for it. */
static void
nic_send(struct conn *c, const struct sdr_ep_wr *w, uint64_t now)
{
	uint8_t frame[FRAME];
	struct roce_pkt pkt;
	int l;

	memset(&pkt, 0, sizeof(pkt));
	pkt.dqpn = w->dqpn;
	if (w->kind == SDR_EP_WR_SEND) {
		assert_int_equal(w->dqpn, QPN_A + 1);	/* A's control QPN */
		assert_ptr_equal(w->addr, w->msg);
		pkt.opcode = ROCE_OP_UC_SEND_ONLY;
		pkt.psn = c->nic_ctrl_psn++ & 0xFFFFFF;
	} else {
		uint32_t q = w->dqpn - QPN_A;

		assert_int_equal(w->kind, SDR_EP_WR_WRITE_IMM);
		assert_true(q < 8);
		/* a write that is not copied reads the message's own buffer, in place */
		if (!w->copy)
			assert_true(w->addr >= c->sbuf[1] &&
				    w->addr + w->len <= c->sbuf[1] + (uint64_t)NMSG * MAX_MSG);
		pkt.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
		pkt.psn = c->nic_psn[q]++ & 0xFFFFFF;
		pkt.va = w->va;
		pkt.rkey = w->rkey;
		pkt.dma_len = w->len;
		pkt.imm = w->imm;
	}
	l = roce_build(frame, sizeof(frame), &c->cb.path, &pkt, w->addr, w->len);
	assert_true(l > 0);
	wire_put(c, frame, (uint16_t)l, 0, now);
}

/* The fake NIC receives a frame for B: what an RDMA NIC's UC queue pairs do with it. */
static void
nic_receive(struct conn *c, const uint8_t *b, uint16_t len, uint64_t now)
{
	struct roce_view v;

	if (roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v) != ROCE_V_OK) {
		c->nic_drops++;
		return;
	}
	if (v.dqpn == QPN_B + 1) {	/* the control QP: a receive completion */
		sdr_ep_input_ctrl(c->b, v.opcode, v.payload, v.payload_len, now);
		return;
	}
	if (v.dqpn != QPN_B || v.opcode != ROCE_OP_UC_RDMA_WRITE_ONLY_IMM || v.rkey != RKEY_B ||
	    v.va > c->region_len || v.payload_len > c->region_len - v.va) {
		c->nic_drops++;		/* a UC responder drops it without a word */
		return;
	}
	memcpy(c->region + v.va, v.payload, v.payload_len);
	sdr_ep_input_write(c->b, v.dqpn - QPN_B, v.imm, c->region, c->region_len, v.payload_len,
			   now);
}

static void
deliver(struct conn *c, struct sdr_ep *ep, uint32_t base, const struct sdr_conn_attr *a,
	const uint8_t *b, uint16_t len, uint64_t now)
{
	struct roce_view v;
	enum sdr_qpn_kind kind;
	uint32_t ch, gen;

	if (roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v) != ROCE_V_OK) {
		c->nic_drops++;		/* (the same frames are dropped on both transports) */
		return;
	}
	kind = sdr_conn_qpn_decode(base, a, v.dqpn, &ch, &gen);
	assert_int_not_equal(kind, SDR_QPN_FOREIGN);
	sdr_ep_input(ep, &v, kind, gen, now);
}

static void
outputs(struct conn *c, uint64_t now)
{
	static uint8_t store[32][FRAME];
	uint8_t *fr[32];
	uint16_t fl[32];
	uint32_t n;

	for (int i = 0; i < 32; i++)
		fr[i] = store[i];
	while ((n = sdr_ep_output(c->a, now, fr, FRAME, fl, 32)) > 0)
		for (uint32_t i = 0; i < n; i++)
			wire_put(c, fr[i], fl[i], 1, now);
	if (c->wr) {
		static struct sdr_ep_wr w[32];

		while ((n = sdr_ep_output_wr(c->b, now, w, 32)) > 0)
			for (uint32_t i = 0; i < n; i++)
				nic_send(c, &w[i], now);
	} else {
		while ((n = sdr_ep_output(c->b, now, fr, FRAME, fl, 32)) > 0)
			for (uint32_t i = 0; i < n; i++)
				wire_put(c, fr[i], fl[i], 0, now);
	}
}

static void
arrivals(struct conn *c, uint64_t now)
{
	for (uint32_t i = 0; i < c->n;) {
		if (c->f[i].t > now) {
			i++;
			continue;
		}
		static struct wf f;	/* (a frame is big for the stack) */

		f = c->f[i];
		c->f[i] = c->f[--c->n];
		if (!f.to_b)
			deliver(c, c->a, QPN_A, &c->ca.attr, f.b, f.len, now);
		else if (c->wr)
			nic_receive(c, f.b, f.len, now);
		else
			deliver(c, c->b, QPN_B, &c->cb.attr, f.b, f.len, now);
	}
}

/* Each side sends NMSG messages to the other and receives NMSG, checking every byte. */
static void
app_step(struct conn *c, uint64_t now)
{
	for (int s = 0; s < 2; s++) {
		struct sdr_ep *ep = s == 0 ? c->a : c->b;
		struct sdr_ep_done d;

		while (c->sent[s] < NMSG) {
			uint32_t i = c->sent[s];
			uint8_t *buf = c->sbuf[s] + (uint64_t)i * MAX_MSG;

			pattern(buf, msg_len(i), i, s);
			if (sdr_ep_send(ep, buf, msg_len(i), 0x1000 + i, i, now) != 0)
				break;
			c->sent[s]++;
		}
		while (c->posted[s] < NMSG) {
			uint32_t i = c->posted[s];

			if (sdr_ep_recv(ep, c->rbuf[s] + (uint64_t)i * MAX_MSG, msg_len(i), NULL, i,
					now, &c->rslot[s][i]) != 0)
				break;
			c->posted[s]++;
		}
		while (sdr_ep_poll(ep, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			if (!d.is_recv)
				continue;
			assert_true(d.cookie < NMSG);
			assert_true(pattern_ok(c->rbuf[s] + d.cookie * MAX_MSG, msg_len(d.cookie),
					       d.cookie, !s));
			assert_int_equal(sdr_ep_recv_release(ep, d.slot), 0);
			c->verified[s]++;
		}
	}
}

static uint64_t
next_event(const struct conn *c, uint64_t now)
{
	uint64_t t = sdr_ep_next_time(c->a, now), tb = sdr_ep_next_time(c->b, now);

	if (tb < t)
		t = tb;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->f[i].t < t)
			t = c->f[i].t;
	return t;
}

/* Both connections, one clock, until @p until or, with @p until 0, every message is in. */
static uint64_t
run_both(struct conn *c, uint64_t now, uint64_t until)
{
	for (int iter = 0; iter < 2000000; iter++) {
		uint64_t t;

		for (int k = 0; k < 2; k++) {
			app_step(&c[k], now);
			arrivals(&c[k], now);
			app_step(&c[k], now);
			outputs(&c[k], now);
		}
		if (until == 0 && c[0].verified[0] == NMSG && c[0].verified[1] == NMSG &&
		    c[1].verified[0] == NMSG && c[1].verified[1] == NMSG)
			return now;
		t = next_event(&c[0], now);
		if (next_event(&c[1], now) < t)
			t = next_event(&c[1], now);
		if (until != 0 && t > until)
			return until;
		now = t > now ? t : now + 1000;
	}
	fail_msg("the connections did not finish");
	return now;
}

/* The same frames, the same outcome, the same counters, layer by layer. */
static void
assert_same(const struct conn *c)
{
	for (int dir = 0; dir < 2; dir++) {
		assert_int_equal(c[0].frames[dir], c[1].frames[dir]);
		assert_int_equal(c[0].hash[dir], c[1].hash[dir]);
	}
	for (int s = 0; s < 2; s++)
		assert_int_equal(c[0].verified[s], c[1].verified[s]);
	assert_int_equal(c[0].nic_drops, c[1].nic_drops);
	for (int side = 0; side < 2; side++) {
		struct sdr_ep_counter_group g0[SDR_EP_NGROUPS], g1[SDR_EP_NGROUPS];
		unsigned int n = sdr_ep_counter_groups(side ? c[0].b : c[0].a, g0);

		assert_int_equal(sdr_ep_counter_groups(side ? c[1].b : c[1].a, g1), n);
		for (unsigned int i = 0; i < n; i++)
			for (unsigned int k = 0; k < g0[i].table->n; k++)
				/* (per poll of the sender, not per event: the work request
				 * path ends a call early after each parity submessage, so the
				 * caller polls more often) */
				if (g0[i].v[k] != g1[i].v[k] &&
				    strcmp(g0[i].table->defs[k].name, "paced_waits") != 0)
					fail_msg("%s %s %s: %llu over frames, %llu over work requests",
						 side ? "B" : "A", g0[i].table->group,
						 g0[i].table->defs[k].name,
						 (unsigned long long)g0[i].v[k],
						 (unsigned long long)g1[i].v[k]);
		for (int e = 1; e < SDR_CTRL_E_COUNT; e++)
			assert_int_equal(sdr_ep_ctrl_err_count(side ? c[0].b : c[0].a, e),
					 sdr_ep_ctrl_err_count(side ? c[1].b : c[1].a, e));
	}
}

static void
run_traffic(struct sdr_scheme scheme, double loss, uint64_t seed)
{
	struct conn c[2];
	const uint64_t *ec;

	conn_init(&c[0], 0, scheme, loss, seed);
	conn_init(&c[1], 1, scheme, loss, seed);
	run_both(c, 1000, 0);
	assert_same(c);
	/* the lossy wire made both sides resend, and the codes decode */
	ec = sdr_ep_counters(c[1].b);
	assert_true(ec[SDR_EP_DATA_PKTS_IN] > 0);
	if (loss > 0 && sdr_scheme_is_ec(&scheme))
		assert_true(ec[SDR_EP_DECODES] > 0);
	if (loss > 0)
		assert_true(sdr_ep_rel_tx_counters(c[1].b)[REL_TX_RETRANSMITS] +
			    sdr_ep_rel_tx_counters(c[0].a)[REL_TX_RETRANSMITS] > 0);
	assert_int_equal(ec[SDR_EP_WRITE_OUTSIDE], 0);
	conn_fini(&c[0]);
	conn_fini(&c[1]);
}

static void
test_sr(void **state)
{
	(void)state;
	run_traffic((struct sdr_scheme){ .kind = SDR_SCHEME_SR }, 0.02, 11);
}

static void
test_sr_nack(void **state)
{
	(void)state;
	run_traffic((struct sdr_scheme){ .kind = SDR_SCHEME_SR_NACK }, 0.02, 12);
}

static void
test_ec_xor(void **state)
{
	(void)state;
	run_traffic((struct sdr_scheme){ .kind = SDR_SCHEME_EC_XOR, .k = 4, .m = 1 }, 0.02, 13);
}

static void
test_ec_mds(void **state)
{
	(void)state;
	run_traffic((struct sdr_scheme){ .kind = SDR_SCHEME_EC_MDS, .k = 4, .m = 2 }, 0.03, 14);
}

/* A control message from A to B as a frame on both wires; @p mangle changes it on the way. */
enum mangle { M_NONE, M_OPCODE, M_SHORT, M_VERSION, M_TYPE, M_TOKEN, M_FLAGS };

static void
inject(struct conn *c, const struct sdr_ctrl *m, enum mangle how, uint64_t now)
{
	for (int k = 0; k < 2; k++) {
		uint8_t payload[SDR_CTRL_MAX_LEN], frame[FRAME];
		struct sdr_ctrl t = *m;
		struct roce_pkt pkt = { .opcode = ROCE_OP_UC_SEND_ONLY, .dqpn = QPN_B + 1,
					.psn = 0x1234 };
		int n, l;

		t.src_tag = TAG_A;
		t.dst_tag = how == M_TOKEN ? TAG_B ^ 1 : TAG_B;
		if (how == M_FLAGS)
			t.flags = 0x8000;
		n = sdr_ctrl_encode(&t, payload, sizeof(payload));
		if (how == M_FLAGS) {	/* the encoder refuses it: write the bits itself */
			t.flags = 0;
			n = sdr_ctrl_encode(&t, payload, sizeof(payload));
			payload[6] = 0x80;
		}
		assert_true(n > 0);
		if (how == M_OPCODE)
			pkt.opcode = ROCE_OP_UC_SEND_ONLY_IMM;
		if (how == M_SHORT)
			n = 20;
		if (how == M_VERSION)
			payload[0] = 9;
		if (how == M_TYPE)
			payload[1] = 200;
		l = roce_build(frame, sizeof(frame), &c[k].ca.path, &pkt, payload, (uint32_t)n);
		assert_true(l > 0);
		wire_put(&c[k], frame, (uint16_t)l, 1, now);
	}
}

/*
 * Every control message type, as the peer sends it and with its usual mistakes, after a
 * run: both transports must take each the same way (the same counters, the same answers on
 * the wire, the same state for the traffic that follows).
 */
static void
test_every_control_message(void **state)
{
	struct sdr_scheme xor = { .kind = SDR_SCHEME_EC_XOR, .k = 4, .m = 1 };
	static const struct {
		struct sdr_ctrl m;
		enum mangle how;
	} seq[] = {
		{ { .type = SDR_CTRL_HELLO }, M_NONE },
		{ { .type = SDR_CTRL_HELLO, .flags = SDR_CTRL_F_ANSWER }, M_NONE },
		{ { .type = SDR_CTRL_CTS, .cum = 30, .win_start = 26, .value = 100 }, M_NONE },
		{ { .type = SDR_CTRL_ACK, .cum = 3, .msg_id = 1 }, M_NONE },
		{ { .type = SDR_CTRL_ACK, .flags = SDR_CTRL_F_COMPLETE, .msg_id = 2 }, M_NONE },
		{ { .type = SDR_CTRL_NACK, .nwords = 1, .win = { 0x80000000u } }, M_NONE },
		{ { .type = SDR_CTRL_EC_NACK, .nwords = 1, .win = { 0xC0000000u } }, M_NONE },
		{ { .type = SDR_CTRL_SYNC, .value = 77 }, M_NONE },
		{ { .type = SDR_CTRL_SYNC, .flags = SDR_CTRL_F_ANSWER, .value = 78 }, M_NONE },
		{ { .type = SDR_CTRL_REPORT, .value = 5ull << 32 | 100 }, M_NONE },
		{ { .type = SDR_CTRL_PATHS, .nwords = 2, .win = { 0x80000005u, 3 } }, M_NONE },
		{ { .type = SDR_CTRL_SCHEME, .cum = 24,
		    .value = (uint64_t)SDR_SCHEME_SR << 32 }, M_NONE },
		{ { .type = SDR_CTRL_SCHEME, .flags = SDR_CTRL_F_ANSWER, .cum = 24 }, M_NONE },
		{ { .type = SDR_CTRL_WITHDRAW, .flags = SDR_CTRL_F_ANSWER, .cum = 24,
		    .win_start = 24 }, M_NONE },
		{ { .type = SDR_CTRL_SKIP, .flags = SDR_CTRL_F_ANSWER, .cum = 24,
		    .win_start = 24 }, M_NONE },
		{ { .type = SDR_CTRL_ACK }, M_OPCODE },
		{ { .type = SDR_CTRL_ACK }, M_SHORT },
		{ { .type = SDR_CTRL_ACK }, M_VERSION },
		{ { .type = SDR_CTRL_ACK }, M_TYPE },
		{ { .type = SDR_CTRL_ACK }, M_TOKEN },
		{ { .type = SDR_CTRL_ACK }, M_FLAGS },
		/* the peer gives up two messages it never sent, and withdraws two receives */
		{ { .type = SDR_CTRL_SKIP, .cum = 26, .win_start = 24 }, M_NONE },
		{ { .type = SDR_CTRL_WITHDRAW, .cum = 26, .win_start = 24 }, M_NONE },
	};
	struct conn c[2];
	uint64_t now;

	(void)state;
	conn_init(&c[0], 0, xor, 0.0, 21);
	conn_init(&c[1], 1, xor, 0.0, 21);
	c[0].dup = c[1].dup = c[0].reorder = c[1].reorder = 0;
	now = run_both(c, 1000, 0);
	assert_same(c);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		uint64_t before[2] = { c[0].frames[0], c[1].frames[0] };

		inject(c, &seq[i].m, seq[i].how, now);
		now = run_both(c, now + 1000, now + 3000000);
		assert_same(c);
		assert_int_equal(c[0].frames[0] - before[0], c[1].frames[0] - before[1]);
	}
	/* what they must have done: answered the HELLO and the SYNC, taken the SKIP and the
	 * WITHDRAW, counted every malformed message where the frame path does */
	{
		const uint64_t *e = sdr_ep_counters(c[1].b);

		assert_true(e[SDR_EP_HELLOS_IN] >= 2);
		assert_int_equal(e[SDR_EP_CTRL_BAD_OPCODE], 1);
		assert_int_equal(e[SDR_EP_CTRL_BAD_TOKEN], 1);
		assert_int_equal(e[SDR_EP_CTRL_BAD], 4);
		assert_int_equal(e[SDR_EP_REPORTS_IN], 1);
		assert_int_equal(e[SDR_EP_PATHS_IN], 1);
		assert_int_equal(e[SDR_EP_SCHEME_REFUSALS], 1);
	}
	conn_fini(&c[0]);
	conn_fini(&c[1]);
}

/* An immediate that names bytes outside the region is counted and placed nowhere. */
static void
test_write_outside_region(void **state)
{
	struct conn c;
	uint8_t small[64];

	(void)state;
	conn_init(&c, 1, (struct sdr_scheme){ .kind = SDR_SCHEME_SR }, 0, 1);
	memset(small, 0, sizeof(small));
	/* message 0, packet 0 is at offset 0: 65 bytes do not fit a 64-byte region */
	assert_int_equal(sdr_ep_input_write(c.b, 0, 0, small, sizeof(small), 65, 1000), -1);
	assert_int_equal(sdr_ep_input_write(c.b, 7, 0, small, sizeof(small), 8, 1000), -1);
	assert_int_equal(sdr_ep_counters(c.b)[SDR_EP_WRITE_OUTSIDE], 2);
	assert_int_equal(sdr_ep_counters(c.b)[SDR_EP_DATA_PKTS_IN], 0);
	conn_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sr),
		cmocka_unit_test(test_sr_nack),
		cmocka_unit_test(test_ec_xor),
		cmocka_unit_test(test_ec_mds),
		cmocka_unit_test(test_every_control_message),
		cmocka_unit_test(test_write_outside_region),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
