/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: control messages and the reliability state machines.
 *
 * sdr_ctrl_decode() on arbitrary bytes (an allocation of exactly their length, so any
 * read past it is an ASan report); a payload it accepts must encode back to the same
 * bytes. Accepted messages go to rel_tx_on_ctrl() of a sender with messages in flight,
 * while a receiver (rel_rx) and the sender exchange real chunks and control messages on a
 * clock the input advances, and the input also hands the receiver hostile events (chunks,
 * late packets, decodes, releases). Whatever arrives, neither side may crash, and what
 * each side produces must stay consistent: units inside their message, control messages
 * that validate, completions of messages in flight.
 *
 * Input: byte 0: bits 0-1 scheme (sr, sr-nack, ec-xor:2,1, ec-mds:3,2), bit 2 whole-
 * submessage fallback, bit 3 a tiny timer ring. Then operations:
 *   0 DECODE  len bytes...      raw control payload
 *   1 FIELDS  sel type flags cum16 ws16 nw words...  a message about in-flight message sel
 *   2 STEP    dt drop           advance the clock by dt * 20 us; exchange chunks (bit i of
 *                               drop loses the i-th unit) and control messages
 *   3 CHUNK   slot chunk16      rel_rx_on_chunk
 *   4 LATE    slot gen          rel_rx_on_late
 *   5 DECODED ctx seq sub       rel_rx_decoded
 *   6 RELEASE slot              rel_rx_release
 *   7 TX      what a b c        submit, stream add / end, parity ready, post
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_ctrl.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MTU		256
#define CHUNK		256
#define MAX_MSG		(64 * CHUNK)	/* 64 chunks: windows of several words */
#define INFLIGHT	4
#define MAX_OPS		256

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_ctrl: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

/* What the harness knows of a message the sender has in flight, by context. */
struct sent {
	int live;
	uint64_t seq;
	uint64_t len;
	uint32_t slot;
	uint32_t gen;
	int stream;
};

struct state {
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	struct sdr_rel_cfg cfg;
	struct rel_tx *tx;
	struct rel_rx *rx;
	uint64_t now;
	uint64_t tx_seq;		/* the sequence number after the last message submitted */
	uint64_t rx_seq;		/* receives posted */
	struct sent sent[INFLIGHT];
	uint32_t k, m;
};

static const uint64_t lens[INFLIGHT] = { MAX_MSG, 1000, 0, 5000 };

static uint32_t
nchunks(uint64_t len)
{
	return len == 0 ? 1 : (uint32_t)((len + CHUNK - 1) / CHUNK);
}

static void
submit(struct state *s, uint64_t len, int stream)
{
	/* the sender numbers messages in the order they are submitted, from where an accepted
	 * WITHDRAW may have moved it (rel_tx.h): never backwards */
	uint64_t seq = rel_tx_next_seq(s->tx);
	int ctx = stream ? rel_tx_submit_stream(s->tx, len, len, s->now) :
			   rel_tx_submit(s->tx, len, len, s->now);

	CHECK(seq >= s->tx_seq);
	if (ctx < 0) {
		CHECK(ctx == -EAGAIN || (ctx == -EMSGSIZE && len > MAX_MSG));
		return;
	}
	CHECK(ctx < INFLIGHT && !s->sent[ctx].live);
	s->sent[ctx] = (struct sent){ .live = 1, .len = len, .stream = stream, .seq = seq,
				      .slot = sdr_conn_seq_slot(&s->attr, seq),
				      .gen = sdr_conn_seq_gen(&s->attr, seq) };
	s->tx_seq = seq + 1;
}

static void
post(struct state *s, uint64_t len)
{
	uint32_t slot = sdr_conn_seq_slot(&s->attr, s->rx_seq);
	int rc = rel_rx_post(s->rx, s->rx_seq, slot, len, len, s->now);

	if (rc >= 0)
		s->rx_seq++;
	else
		CHECK(rc == -EAGAIN || (rc == -EMSGSIZE && len > MAX_MSG));
}

/* The sender's view of a control message: decode, round trip, hand over. */
static void
to_sender(struct state *s, const uint8_t *buf, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1), again[SDR_CTRL_MAX_LEN];
	struct sdr_ctrl c;
	int rc, n;

	CHECK(copy != NULL);
	memcpy(copy, buf, len);
	rc = sdr_ctrl_decode(copy, len, &c);
	CHECK(rc <= 0 && rc > -SDR_CTRL_E_COUNT);
	if (rc == 0) {
		n = sdr_ctrl_encode(&c, again, sizeof(again));
		CHECK(n >= 0 && (size_t)n == len && memcmp(again, copy, len) == 0);
		rel_tx_on_ctrl(s->tx, &c, s->now);
		CHECK(rel_tx_inflight(s->tx) <= INFLIGHT);
	}
	free(copy);
}

static void
send_ctrl(struct state *s, const struct sdr_ctrl *c)
{
	uint8_t buf[SDR_CTRL_MAX_LEN];
	struct sdr_ctrl t = *c;
	int n;

	t.src_tag = 1;		/* the tags are the endpoint's (fuzz_wan); any non-zero one */
	n = sdr_ctrl_encode(&t, buf, sizeof(buf));

	if (n > 0)
		to_sender(s, buf, (size_t)n);
}

static void
collect(struct state *s)
{
	struct sdr_rel_done d;

	while (rel_tx_poll_done(s->tx, &d)) {
		CHECK(d.ctx < INFLIGHT && s->sent[d.ctx].live);
		CHECK(s->sent[d.ctx].seq == d.seq && s->sent[d.ctx].slot == d.slot);
		CHECK(d.status <= SDR_DONE_FAILED);
		s->sent[d.ctx].live = 0;
	}
	while (rel_rx_poll_done(s->rx, &d)) {
		CHECK(d.ctx < INFLIGHT && d.slot < s->geom.nslots);
		rel_rx_release(s->rx, d.slot);
	}
}

/* One unit the sender chose: check it against the message, deliver it unless dropped. */
static void
unit(struct state *s, const struct rel_tx_unit *u, int drop)
{
	struct sent *m;
	uint32_t nc, nsub;

	CHECK(u->ctx < INFLIGHT && s->sent[u->ctx].live);
	m = &s->sent[u->ctx];
	CHECK(m->seq == u->seq && m->slot == u->slot && m->gen == u->gen);
	CHECK(u->slot == sdr_conn_seq_slot(&s->attr, u->seq));
	CHECK(u->gen == sdr_conn_seq_gen(&s->attr, u->seq));
	nc = nchunks(m->len);
	nsub = s->k ? (nc + s->k - 1) / s->k : 0;
	switch (u->kind) {
	case REL_UNIT_DATA:
		CHECK(u->index < nc);
		CHECK(u->bytes == (u->index == nc - 1 ? m->len - (uint64_t)(nc - 1) * CHUNK : CHUNK));
		if (!drop)
			rel_rx_on_chunk(s->rx, u->slot, u->index, s->now);
		break;
	case REL_UNIT_PARITY:
		CHECK(s->k && u->index < nsub * s->m && u->bytes == CHUNK);
		if (!drop)
			rel_rx_on_chunk(s->rx, u->slot, nc + u->index, s->now);
		break;
	case REL_UNIT_ENCODE:
		CHECK(s->k && u->index < nsub && u->bytes == 0);
		rel_tx_parity_ready(s->tx, u->ctx, u->seq, u->index);
		break;
	default:
		CHECK(0);
	}
}

/* Both sides do what is due at the current time. */
static void
exchange(struct state *s, uint32_t drop)
{
	struct rel_tx_unit u;
	struct rel_rx_decode d;
	struct sdr_ctrl c;
	int i;

	for (i = 0; i < 512 && rel_tx_next(s->tx, s->now, &u); i++)
		unit(s, &u, i < 32 && ((drop >> i) & 1));
	for (i = 0; i < 4096 && rel_rx_next_ctrl(s->rx, s->now, &c); i++) {
		uint8_t buf[SDR_CTRL_MAX_LEN];
		struct sdr_ctrl back;
		int n;

		c.src_tag = 1;	/* as the endpoint stamps every message */
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));

		/* what the receiver sends must pass the sender's validation */
		CHECK(n > 0 && sdr_ctrl_decode(buf, (size_t)n, &back) == 0);
		to_sender(s, buf, (size_t)n);
	}
	CHECK(i < 4096);	/* a bounded number of messages at one instant */
	while (rel_rx_next_decode(s->rx, &d)) {
		CHECK(d.ctx < INFLIGHT && d.slot < s->geom.nslots && s->k);
		CHECK(d.count >= 1 && d.count <= s->k && d.first == d.sub * s->k);
		rel_rx_decoded(s->rx, d.ctx, d.seq, d.sub, s->now);
	}
	collect(s);
	(void)rel_tx_next_time(s->tx, s->now);
	(void)rel_rx_next_time(s->rx, s->now);
}

static int
setup(struct state *s, uint32_t mode)
{
	static const struct sdr_scheme schemes[4] = {
		{ .kind = SDR_SCHEME_SR },
		{ .kind = SDR_SCHEME_SR_NACK },
		{ .kind = SDR_SCHEME_EC_XOR, .k = 2, .m = 1 },
		{ .kind = SDR_SCHEME_EC_MDS, .k = 3, .m = 2 },
	};

	memset(s, 0, sizeof(*s));
	sdr_conn_attr_default(&s->attr);
	s->attr.mtu = MTU;
	s->attr.chunk_size = CHUNK;
	s->attr.split = (struct sdr_imm_split){ 3, 25, 4 };
	s->attr.channels = 1;
	s->attr.generations = 2;
	s->attr.max_msg_size = MAX_MSG;
	s->attr.max_inflight = INFLIGHT;
	sdr_rel_cfg_default(&s->cfg, 1000000);
	s->cfg.scheme = schemes[mode & 3];
	s->cfg.ec_fallback_whole = (mode >> 2) & 1;
	s->cfg.timer_slots = (mode & 8) ? 4 : 256;
	s->cfg.rate_bps = 10e9;
	s->cfg.bucket_bytes = 16 * CHUNK;
	s->cfg.global_timeout_ns = 200000000;
	s->k = s->cfg.scheme.k;
	s->m = s->cfg.scheme.m;
	s->attr.ec_k = (uint16_t)s->k;
	s->attr.ec_m = (uint16_t)s->m;
	CHECK(sdr_conn_geometry(&s->attr, &s->geom) == 0);
	s->tx = rel_tx_create(&s->cfg, &s->attr);
	s->rx = rel_rx_create(&s->cfg, &s->attr);
	CHECK(s->tx != NULL && s->rx != NULL);
	s->now = 1000;
	/* messages in flight: CTS given, some chunks out */
	for (int i = 0; i < INFLIGHT; i++) {
		submit(s, lens[i], 0);
		post(s, lens[i]);
	}
	exchange(s, 0xAAAA5555u);
	return 0;
}

static void
op_fields(struct state *s, struct input *in)
{
	uint32_t sel = take(in, 1);
	struct sent *m = &s->sent[sel % INFLIGHT];
	struct sdr_ctrl c;

	memset(&c, 0, sizeof(c));
	c.type = (uint8_t)(take(in, 1) % 6);
	c.flags = (uint16_t)(take(in, 1) & 7);
	c.cum = take(in, 2);
	c.win_start = take(in, 2);
	c.nwords = (uint8_t)(take(in, 1) % 34);
	for (unsigned int i = 0; i < c.nwords && i < SDR_CTRL_MAX_WORDS; i++)
		c.win[i] = take(in, 4);
	if (sel & 0x80) {		/* about a message the sender does not have */
		c.msg_id = (uint16_t)take(in, 2);
		c.gen = (uint8_t)take(in, 1);
	} else {
		c.msg_id = (uint16_t)m->slot;
		c.gen = (uint8_t)m->gen;
	}
	if (c.type == SDR_CTRL_CTS) {
		c.nwords = 0;
		c.value = (sel & 0x40) ? take(in, 2) : m->len;
		if (sel & 0x20)
			c.win_start = (uint32_t)m->seq;
	}
	send_ctrl(s, &c);
}

static void
op_tx(struct state *s, struct input *in)
{
	uint32_t what = take(in, 1), a = take(in, 1), b = take(in, 1), c = take(in, 1);
	struct sent *m = &s->sent[a % INFLIGHT];
	uint64_t seq = (a & 0x80) ? b : m->seq;

	switch (what % 6) {
	case 0:
		submit(s, (uint64_t)b * 64 + c, 0);
		break;
	case 1:
		submit(s, (uint64_t)b * 64 + c, 1);
		break;
	case 2:
		(void)rel_tx_stream_add(s->tx, a % (INFLIGHT + 1), seq, b, c);
		break;
	case 3:
		(void)rel_tx_stream_end(s->tx, a % (INFLIGHT + 1), seq);
		break;
	case 4:
		rel_tx_parity_ready(s->tx, a % (INFLIGHT + 1), seq, b);
		break;
	default:
		post(s, (uint64_t)b * 64 + c);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct input in = { data, size };

	setup(&s, take(&in, 1));
	for (int ops = 0; in.n && ops < MAX_OPS; ops++) {
		switch (take(&in, 1) % 8) {
		case 0: {
			uint32_t len = take(&in, 1);

			if (len > in.n)
				len = (uint32_t)in.n;
			to_sender(&s, in.p, len);
			in.p += len;
			in.n -= len;
			break;
		}
		case 1: op_fields(&s, &in); break;
		case 2: {
			uint32_t dt = take(&in, 1), drop = take(&in, 4);

			s.now += (uint64_t)dt * 20000;
			exchange(&s, drop);
			break;
		}
		case 3: {
			uint32_t slot = take(&in, 1), chunk = take(&in, 2);

			(void)rel_rx_on_chunk(s.rx, slot, chunk, s.now);
			break;
		}
		case 4: {
			uint32_t slot = take(&in, 1), gen = take(&in, 1);

			rel_rx_on_late(s.rx, slot, gen, s.now);
			break;
		}
		case 5: {
			uint32_t ctx = take(&in, 1), seq = take(&in, 1), sub = take(&in, 1);

			rel_rx_decoded(s.rx, ctx, seq, sub, s.now);
			break;
		}
		case 6:
			rel_rx_release(s.rx, take(&in, 1));
			break;
		default:
			op_tx(&s, &in);
			break;
		}
		collect(&s);
	}
	/* run both sides to the end: every message completes or times out */
	for (int i = 0; i < 64 && rel_tx_inflight(s.tx); i++) {
		s.now += 5000000;
		exchange(&s, 0);
	}
	CHECK(rel_tx_inflight(s.tx) == 0);
	rel_tx_destroy(s.tx);
	rel_rx_destroy(s.rx);
	return 0;
}
