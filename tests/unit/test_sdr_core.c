/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SDR core end to end in memory: packetizer -> (drop, duplicate, reorder) -> parser ->
 * receive table. Property tests with a fixed seed, then every hostile case by name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "icrc.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "sdr_bitmap.h"
#include "sdr_rx.h"
#include "sdr_tx.h"

#define GUARD 64
#define RX_QPN 0x300
#define RX_RKEY 0xABCD1234u
#define FRAME_CAP 4200

static uint64_t rng = 0x5DEECE66Dull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t
rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

struct frame {
	uint8_t b[FRAME_CAP];
	uint16_t len;
	uint32_t msg;		/* index of the message in the test */
	uint32_t pkt;		/* packet offset */
};

struct side {
	struct sdr_conn_attr attr;
	struct sdr_tx *tx;
	struct sdr_rx *rx;
};

/* A receive buffer with poisoned guard zones on both sides. */
struct rbuf {
	uint8_t *mem;
	uint64_t len;
};

static uint8_t *
rbuf_alloc(struct rbuf *r, uint64_t len)
{
	r->len = len;
	r->mem = malloc(len + 2 * GUARD);
	memset(r->mem, 0xA5, GUARD);
	memset(r->mem + GUARD, 0xEE, len);
	memset(r->mem + GUARD + len, 0xA5, GUARD);
	return r->mem + GUARD;
}

static void
rbuf_check_guards(const struct rbuf *r)
{
	for (int i = 0; i < GUARD; i++) {
		assert_int_equal(r->mem[i], 0xA5);
		assert_int_equal(r->mem[GUARD + r->len + i], 0xA5);
	}
}

static void
side_init(struct side *s, const struct sdr_conn_attr *a)
{
	struct roce_path path = {
		.dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
		.ip_version = 4, .src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 0, 2 },
	};

	s->attr = *a;
	s->attr.local_qpn = RX_QPN;
	s->attr.remote_qpn = RX_QPN;
	s->attr.local_rkey = RX_RKEY;
	s->attr.remote_rkey = RX_RKEY;
	s->tx = sdr_tx_create(&s->attr, &path);
	s->rx = sdr_rx_create(&s->attr);
	assert_non_null(s->tx);
	assert_non_null(s->rx);
}

static void
side_fini(struct side *s)
{
	sdr_tx_destroy(s->tx);
	sdr_rx_destroy(s->rx);
}

/* Parse a frame and hand it to the receive side the way the dataplane does. */
static sdr_rx_verdict
deliver(struct side *s, const uint8_t *b, uint16_t len, struct sdr_rx_event *ev)
{
	struct roce_view v;
	uint32_t ch, gen;

	assert_int_equal(roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	assert_int_equal(sdr_conn_qpn_decode(RX_QPN, &s->attr, v.dqpn, &ch, &gen), SDR_QPN_DATA);
	return sdr_rx_place(s->rx, &v, gen, ev);
}

/* Build every packet of a job into frames[*n...]. */
static void
build_job(struct side *s, struct sdr_tx_job *job, struct frame *frames, uint32_t *n,
	  uint32_t msg_index)
{
	while (sdr_tx_job_left(job)) {
		uint8_t *bufs[8];
		uint16_t lens[8];
		uint32_t base = *n, got, first = job->first_pkt + job->next;

		for (int i = 0; i < 8; i++)
			bufs[i] = frames[base + i].b;
		got = sdr_tx_build(s->tx, job, bufs, FRAME_CAP, lens, 1 + rnd_below(8));
		assert_true(got > 0);
		for (uint32_t i = 0; i < got; i++) {
			frames[base + i].len = lens[i];
			frames[base + i].msg = msg_index;
			frames[base + i].pkt = first + i;
		}
		*n += got;
	}
}

/* Rewrite a frame's ICRC after a test edited it. */
static void
fix_icrc(uint8_t *b, uint16_t len)
{
	struct roce_view v;

	roce_parse(b, len, 0, &v);
	roce_put_icrc(b + len - 4, icrc_compute(b + v.l3_off, v.ip_version, v.ip_hdr_len,
						v.roce_len - 4));
}

static void
fill_random(uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

struct tmsg {
	uint8_t *src;
	uint8_t *dst;
	struct rbuf rb;
	uint64_t len;
	uint32_t user_imm;
	uint32_t slot;
	struct sdr_tx_msg tm;
	uint8_t *got;		/* per packet: delivered at least once */
	uint32_t done_events;
};

/*
 * Random connections and messages, random drop, duplication and reordering: the chunk
 * bitmap equals the ground truth and every byte matches the source or is untouched.
 */
static void
test_property_random_loss_reorder_dup(void **state)
{
	static const struct sdr_imm_split splits[] = { { 10, 18, 4 }, { 4, 24, 4 }, { 8, 22, 2 },
						       { 6, 26, 0 } };
	static struct frame frames[6000];

	(void)state;
	for (int trial = 0; trial < 250; trial++) {
		struct sdr_conn_attr a;
		struct side s;
		struct tmsg msgs[6];
		uint32_t nmsg, nframes = 0, delivered = 0, distinct = 0;
		double p_drop = (double)rnd_below(300) / 1000.0, p_dup = (double)rnd_below(200) / 1000.0;
		uint64_t placed0;

		sdr_conn_attr_default(&a);
		a.mtu = 256u << rnd_below(5);
		a.chunk_size = a.mtu * (1 + rnd_below(8));
		a.split = splits[rnd_below(4)];
		a.channels = (uint16_t)(1 + rnd_below(4));
		a.generations = (uint16_t)(1 + rnd_below(3));
		a.max_msg_size = 1 + rnd_below(96 * 1024);
		a.max_inflight = 1 + rnd_below(6);
		side_init(&s, &a);
		/* advance both sides by a random number of empty rounds so ids wrap */
		for (uint32_t k = rnd_below(40); k > 0; k--) {
			uint32_t slot;
			struct sdr_tx_msg tm;

			assert_int_equal(sdr_rx_post(s.rx, NULL, 0, NULL, NULL, &slot), 0);
			assert_int_equal(sdr_rx_complete(s.rx, slot), 0);
			assert_int_equal(sdr_tx_msg_start(s.tx, NULL, 0, 0, &tm), 0);
			sdr_tx_msg_retire(s.tx, &tm);
		}
		nmsg = 1 + rnd_below(a.max_inflight);
		for (uint32_t i = 0; i < nmsg; i++) {
			struct tmsg *m = &msgs[i];
			struct sdr_tx_job job;

			m->len = rnd_below(4) == 0 ? a.max_msg_size : rnd_below((uint32_t)a.max_msg_size + 1);
			m->src = malloc(m->len + 1);
			fill_random(m->src, m->len);
			m->dst = rbuf_alloc(&m->rb, m->len);
			m->user_imm = (uint32_t)rnd();
			m->done_events = 0;
			assert_int_equal(sdr_rx_post(s.rx, m->dst, m->len, NULL, NULL, &m->slot), 0);
			assert_int_equal(sdr_tx_msg_start(s.tx, m->src, m->len, m->user_imm, &m->tm), 0);
			assert_int_equal(m->tm.msg_id, m->slot);
			m->got = calloc(m->tm.npkts, 1);
			assert_int_equal(sdr_tx_job_data(&job, &m->tm, 0, m->tm.npkts), 0);
			build_job(&s, &job, frames, &nframes, i);
		}
		/* reorder: random swaps within a window of 16 */
		for (uint32_t i = 0; i + 1 < nframes; i++) {
			uint32_t j = i + rnd_below(nframes - i < 16 ? nframes - i : 16);
			struct frame *tmp = malloc(sizeof(*tmp));

			*tmp = frames[i];
			frames[i] = frames[j];
			frames[j] = *tmp;
			free(tmp);
		}
		placed0 = sdr_rx_counters(s.rx)[SDR_RX_PLACED];
		for (uint32_t i = 0; i < nframes; i++) {
			int copies = (double)(rnd() % 1000) / 1000.0 < p_drop ? 0 : 1;

			if (copies && (double)(rnd() % 1000) / 1000.0 < p_dup)
				copies = 2;
			for (int c = 0; c < copies; c++) {
				struct sdr_rx_event ev;
				struct tmsg *m = &msgs[frames[i].msg];
				sdr_rx_verdict r = deliver(&s, frames[i].b, frames[i].len, &ev);

				delivered++;
				if (!m->got[frames[i].pkt]) {
					assert_int_equal(r, SDR_RX_PLACED);
					m->got[frames[i].pkt] = 1;
					distinct++;
				} else {
					/* a duplicate, or a packet after the message completed */
					assert_true(r == SDR_RX_DUPLICATE || r == SDR_RX_MSG_COMPLETE);
				}
				if (ev.flags & SDR_RX_EV_DONE)
					m->done_events++;
			}
		}
		assert_int_equal(sdr_rx_counters(s.rx)[SDR_RX_PLACED] - placed0, distinct);

		for (uint32_t i = 0; i < nmsg; i++) {
			struct tmsg *m = &msgs[i];
			const struct sdr_conn_geom *g = sdr_rx_geom(s.rx);
			const uint8_t *bytes = sdr_rx_chunk_bytes(s.rx, m->slot);
			const uint64_t *bits = sdr_rx_chunk_bits(s.rx, m->slot);
			struct sdr_rx_msg_info info;
			uint32_t all = 1, chunks_in = 0, imm;
			uint32_t nfr = sdr_imm_nfrags(&a.split), need = nfr < m->tm.npkts ? nfr : m->tm.npkts;
			uint32_t frag_have = 0;

			assert_int_equal(sdr_rx_msg_info(s.rx, m->slot, &info), 0);
			for (uint32_t c = 0; c < m->tm.nchunks; c++) {
				uint32_t in = 1;

				for (uint32_t p = c * g->pkts_per_chunk;
				     p < (c + 1) * g->pkts_per_chunk && p < m->tm.npkts; p++)
					in &= m->got[p];
				assert_int_equal(bytes[c], in);
				assert_int_equal(sdr_bit_test(bits, c), in);
				chunks_in += in;
				all &= in;
			}
			assert_int_equal(info.chunks_done, chunks_in);
			assert_int_equal(info.state, all ? SDR_SLOT_DONE : SDR_SLOT_POSTED);
			assert_int_equal(m->done_events, all);
			for (uint32_t p = 0; p < m->tm.npkts; p++) {
				uint64_t off = (uint64_t)p * a.mtu;
				uint64_t n = m->len - off < a.mtu ? m->len - off : a.mtu;

				if (m->len == 0)
					break;
				if (m->got[p]) {
					assert_memory_equal(m->dst + off, m->src + off, n);
				} else {
					for (uint64_t b = 0; b < n; b++)
						assert_int_equal(m->dst[off + b], 0xEE);
				}
				if (m->got[p])
					frag_have |= nfr ? 1u << (p % nfr) : 0;
			}
			rbuf_check_guards(&m->rb);
			if ((uint32_t)__builtin_popcount(frag_have) >= need && m->len > 0) {
				uint32_t mask = need * a.split.frag_bits >= 32 ? 0xFFFFFFFFu :
						(1u << (need * a.split.frag_bits)) - 1;

				assert_int_equal(sdr_rx_imm_get(s.rx, m->slot, &imm), 0);
				assert_int_equal(imm, m->user_imm & mask);
			} else if (m->len > 0) {
				assert_int_equal(sdr_rx_imm_get(s.rx, m->slot, &imm), -EAGAIN);
			}
		}
		(void)delivered;

		/* complete and retire; every frame replayed afterwards is a late packet */
		for (uint32_t i = 0; i < nmsg; i++) {
			assert_int_equal(sdr_rx_complete(s.rx, msgs[i].slot), 0);
			sdr_tx_msg_retire(s.tx, &msgs[i].tm);
		}
		for (uint32_t i = 0; i < nframes && i < 20; i++) {
			struct sdr_rx_event ev;
			uint64_t late = sdr_rx_counters(s.rx)[SDR_RX_LATE_PACKET];

			assert_int_equal(deliver(&s, frames[i].b, frames[i].len, &ev), SDR_RX_LATE_PACKET);
			assert_int_equal(sdr_rx_counters(s.rx)[SDR_RX_LATE_PACKET], late + 1);
		}
		for (uint32_t i = 0; i < nmsg; i++) {
			for (uint64_t b = 0; b < msgs[i].len; b++)
				if (!msgs[i].got[b / a.mtu])
					assert_int_equal(msgs[i].dst[b], 0xEE);
			rbuf_check_guards(&msgs[i].rb);
			free(msgs[i].src);
			free(msgs[i].rb.mem);
			free(msgs[i].got);
		}
		side_fini(&s);
	}
}

/* One message of @p len through a fresh connection; frames kept for hostile edits. */
struct one {
	struct side s;
	struct tmsg m;
	struct frame f[64];
	uint32_t n;
};

static void
one_setup(struct one *o, struct sdr_conn_attr *a, uint64_t len)
{
	struct sdr_tx_job job;

	side_init(&o->s, a);
	o->m.len = len;
	o->m.src = malloc(len + 1);
	fill_random(o->m.src, len);
	o->m.dst = rbuf_alloc(&o->m.rb, len);
	o->m.user_imm = 0xC0FFEE42;
	assert_int_equal(sdr_rx_post(o->s.rx, o->m.dst, len, NULL, NULL, &o->m.slot), 0);
	assert_int_equal(sdr_tx_msg_start(o->s.tx, o->m.src, len, o->m.user_imm, &o->m.tm), 0);
	assert_int_equal(sdr_tx_job_data(&job, &o->m.tm, 0, o->m.tm.npkts), 0);
	o->n = 0;
	build_job(&o->s, &job, o->f, &o->n, 0);
}

static void
one_teardown(struct one *o)
{
	rbuf_check_guards(&o->m.rb);
	free(o->m.src);
	free(o->m.rb.mem);
	side_fini(&o->s);
}

static struct sdr_conn_attr
small_attr(void)
{
	struct sdr_conn_attr a;

	sdr_conn_attr_default(&a);
	a.mtu = 1024;
	a.chunk_size = 4096;
	a.channels = 2;
	a.generations = 2;
	a.max_msg_size = 32768;
	a.max_inflight = 4;
	return a;
}

/* @p n empty receives posted and completed: the slots move on */
static void
empty_receives(struct sdr_rx *rx, int n)
{
	uint32_t slot;

	for (int i = 0; i < n; i++) {
		assert_int_equal(sdr_rx_post(rx, NULL, 0, NULL, NULL, &slot), 0);
		assert_int_equal(sdr_rx_complete(rx, slot), 0);
	}
}

static void
test_stale_generation_and_wrapped_ids(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct one o;
	struct sdr_rx_event ev;
	uint8_t *buf2, *buf3;
	struct rbuf rb2, rb3;
	uint32_t slot;

	(void)state;
	a.split = (struct sdr_imm_split){ 2, 26, 4 };	/* 4 slots: ids wrap quickly */
	a.generations = 4;
	one_setup(&o, &a, 5000);
	assert_int_equal(deliver(&o.s, o.f[0].b, o.f[0].len, &ev), SDR_RX_PLACED);
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	/* three more messages, then slot 0 again: generation 1 */
	empty_receives(o.s.rx, 3);
	buf2 = rbuf_alloc(&rb2, 5000);
	assert_int_equal(sdr_rx_post(o.s.rx, buf2, 5000, NULL, NULL, &slot), 0);
	assert_int_equal(slot, o.m.slot);
	/*
	 * The frames of generation 0 are the slot's previous receive's, with its key: late (the
	 * receiver ACKs that receive again: its sender may not have heard the final ACK).
	 * Nothing written.
	 */
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_LATE_PREVIOUS);
	/* a peer restart forgets the previous receives: the old epoch's packets are stale */
	sdr_rx_forget_previous(o.s.rx);
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_STALE_GENERATION);
	/* generation 1 done, three more, slot 0 again: generation 0 is two receives back */
	assert_int_equal(sdr_rx_complete(o.s.rx, slot), 0);
	empty_receives(o.s.rx, 3);
	buf3 = rbuf_alloc(&rb3, 5000);
	assert_int_equal(sdr_rx_post(o.s.rx, buf3, 5000, NULL, NULL, &slot), 0);
	assert_int_equal(slot, o.m.slot);
	/* every frame of generation 0 is now stale: nothing written */
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_STALE_GENERATION);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_STALE_GENERATION], 2 * o.n);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_LATE_PREVIOUS], o.n);
	for (int i = 0; i < 5000; i++)
		assert_true(buf2[i] == 0xEE && buf3[i] == 0xEE);
	rbuf_check_guards(&rb2);
	rbuf_check_guards(&rb3);
	free(rb2.mem);
	free(rb3.mem);
	one_teardown(&o);

	/* the previous receive had another key than its packets carry: stale, not late */
	one_setup(&o, &a, 5000);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, o.m.slot, RX_RKEY ^ 0x100), 0);
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	empty_receives(o.s.rx, 3);
	assert_int_equal(sdr_rx_post(o.s.rx, NULL, 0, NULL, NULL, &slot), 0);
	assert_int_equal(slot, o.m.slot);
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_STALE_GENERATION);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_LATE_PREVIOUS], 0);
	one_teardown(&o);
}

/*
 * One generation, a key per receive: only the R_Key tells the slot's previous receive from
 * its current one. The previous one's packets are late_packet_previous (the receiver ACKs
 * that receive again), the current one's are placed, any other key is bad_rkey, and so are
 * the previous one's once the slot is released (its previous receive is two back then) or
 * posted again.
 */
static void
test_previous_receive_one_generation(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct roce_view v, cur;
	uint32_t ch, gen, slot;
	uint8_t *buf2;
	struct rbuf rb2;
	struct one o;

	(void)state;
	a.split = (struct sdr_imm_split){ 2, 26, 4 };	/* 4 slots */
	a.generations = 1;
	one_setup(&o, &a, 5000);
	assert_int_equal(roce_parse(o.f[0].b, o.f[0].len, 0, &v), ROCE_V_OK);
	assert_int_equal(sdr_conn_qpn_decode(RX_QPN, &o.s.attr, v.dqpn, &ch, &gen), SDR_QPN_DATA);
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_PLACED);
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	empty_receives(o.s.rx, 3);
	buf2 = rbuf_alloc(&rb2, 5000);
	assert_int_equal(sdr_rx_post(o.s.rx, buf2, 5000, NULL, NULL, &slot), 0);
	assert_int_equal(slot, o.m.slot);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, slot, RX_RKEY ^ 0x55), 0);
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_LATE_PREVIOUS);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(buf2[i], 0xEE);
	cur = v;
	cur.rkey = RX_RKEY ^ 0x55;
	assert_int_equal(sdr_rx_place(o.s.rx, &cur, gen, &ev), SDR_RX_PLACED);
	cur.rkey ^= 0x1234;
	assert_int_equal(sdr_rx_place(o.s.rx, &cur, gen, &ev), SDR_RX_BAD_RKEY);
	/* released: the slot's previous receive is two back */
	assert_int_equal(sdr_rx_complete(o.s.rx, slot), 0);
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_BAD_RKEY);
	/* posted again: two back still */
	empty_receives(o.s.rx, 3);
	assert_int_equal(sdr_rx_post(o.s.rx, NULL, 0, NULL, NULL, &slot), 0);
	assert_int_equal(slot, o.m.slot);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, slot, RX_RKEY ^ 0xAA), 0);
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_BAD_RKEY);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_LATE_PREVIOUS], 1);
	rbuf_check_guards(&rb2);
	free(rb2.mem);
	one_teardown(&o);
}

/* Edit one field of a valid frame and expect a named drop, with nothing written. */
static void
test_reth_imm_mismatch_and_bounds(void **state)
{
	enum { VA, RKEY, DMALEN, OFFSET_PAST, SHORT, OPCODE, NOT_POSTED, NCASES };
	static const sdr_rx_verdict want[NCASES] = {
		SDR_RX_VA_MISMATCH, SDR_RX_BAD_RKEY, SDR_RX_DMA_LEN_MISMATCH, SDR_RX_OUT_OF_RANGE,
		SDR_RX_BAD_LENGTH, SDR_RX_BAD_OPCODE, SDR_RX_SLOT_NOT_POSTED,
	};

	(void)state;
	for (int c = 0; c < NCASES; c++) {
		struct sdr_conn_attr a = small_attr();
		struct one o;
		struct roce_view v;
		struct sdr_rx_event ev;
		uint8_t *b;
		uint16_t len;
		struct sdr_imm_fields f;

		one_setup(&o, &a, 5000);	/* 5 packets: 4 x 1024 + 904 */
		b = o.f[1].b;
		len = o.f[1].len;
		roce_parse(b, len, 0, &v);
		f = sdr_imm_unpack(&a.split, v.imm);
		switch (c) {
		case VA:
			roce_put64(b + v.reth_off, v.va + 1024);
			break;
		case RKEY:
			roce_put32(b + v.reth_off + 8, v.rkey ^ 1);
			break;
		case DMALEN:
			roce_put32(b + v.reth_off + 12, v.dma_len - 4);
			break;
		case OFFSET_PAST:	/* offset 5 (past the 5-packet message), RETH consistent */
			roce_put32(b + v.immdt_off, sdr_imm_pack(&a.split, f.msg_id, 5, f.frag));
			roce_put64(b + v.reth_off, sdr_conn_va(sdr_rx_geom(o.s.rx), f.msg_id, 5));
			break;
		case SHORT:		/* a full-size packet in place of the short last one */
			roce_put32(b + v.immdt_off, sdr_imm_pack(&a.split, f.msg_id, 4, f.frag));
			roce_put64(b + v.reth_off, sdr_conn_va(sdr_rx_geom(o.s.rx), f.msg_id, 4));
			break;
		case OPCODE:		/* RC WRITE Only with Immediate: same headers, wrong QP type */
			b[v.bth_off] = 0x0B;
			break;
		case NOT_POSTED:
			roce_put32(b + v.immdt_off, sdr_imm_pack(&a.split, f.msg_id + 1, f.pkt_off,
								 f.frag));
			roce_put64(b + v.reth_off, sdr_conn_va(sdr_rx_geom(o.s.rx), f.msg_id + 1,
							       f.pkt_off));
			break;
		}
		fix_icrc(b, len);
		assert_int_equal(deliver(&o.s, b, len, &ev), want[c]);
		assert_int_equal(sdr_rx_counters(o.s.rx)[want[c]], 1);
		assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_PLACED], 0);
		for (int i = 0; i < 5000; i++)
			assert_int_equal(o.m.dst[i], 0xEE);
		one_teardown(&o);
	}
}

static void
test_zero_length_and_maximal(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct one o;
	uint32_t imm = 0;

	(void)state;
	one_setup(&o, &a, 0);
	assert_int_equal(o.n, 1);
	assert_int_equal(deliver(&o.s, o.f[0].b, o.f[0].len, &ev), SDR_RX_PLACED);
	assert_int_equal(ev.flags, SDR_RX_EV_FIRST | SDR_RX_EV_LAST | SDR_RX_EV_CHUNK | SDR_RX_EV_DONE);
	/* one packet carries one 4-bit fragment: the low nibble */
	assert_int_equal(sdr_rx_imm_get(o.s.rx, o.m.slot, &imm), 0);
	assert_int_equal(imm, 0x2);
	one_teardown(&o);

	one_setup(&o, &a, a.max_msg_size);
	assert_int_equal(o.n, 32);
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	assert_true(ev.flags & SDR_RX_EV_DONE);
	assert_memory_equal(o.m.dst, o.m.src, a.max_msg_size);
	assert_int_equal(sdr_rx_imm_get(o.s.rx, o.m.slot, &imm), 0);
	assert_int_equal(imm, 0xC0FFEE42);
	/* a message one byte too long is refused on both sides */
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	{
		uint32_t slot;
		struct sdr_tx_msg tm;

		assert_int_equal(sdr_rx_post(o.s.rx, o.m.dst, a.max_msg_size + 1, NULL, NULL, &slot),
				 -EMSGSIZE);
		assert_int_equal(sdr_tx_msg_start(o.s.tx, o.m.src, a.max_msg_size + 1, 0, &tm),
				 -EMSGSIZE);
	}
	one_teardown(&o);
}

/*
 * A receive posted, then given chunks of half the configured size (a scheme change with
 * nothing in yet): chunk numbers, events and recovery count the 2-packet chunks, the
 * application's view (the mirror, the view's expand) stays per 4-packet chunk.
 */
static void
test_smaller_chunks_view(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_msg_info info;
	struct sdr_rx_event ev;
	const uint8_t *view;
	struct one o;
	uint64_t bits[1];

	(void)state;
	a.max_chunk_shift = 1;
	one_setup(&o, &a, 10000);	/* 10 packets: chunks of 2 (view: 4, 4, 2) */
	assert_int_equal(sdr_rx_set_code(o.s.rx, 0, 0, 2), -EINVAL);	/* past the shift */
	assert_int_equal(sdr_rx_set_code(o.s.rx, 0, 0, 1), 0);
	for (uint32_t i = 0; i < o.n; i++)
		if (o.f[i].pkt != 1 && o.f[i].pkt != 9)
			assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	assert_int_equal(sdr_rx_set_code(o.s.rx, 0, 0, 0), -EBUSY);	/* packets are in */
	assert_int_equal(sdr_rx_msg_info(o.s.rx, o.m.slot, &info), 0);
	assert_int_equal(info.nchunks, 5);
	assert_int_equal(info.chunks_done, 3);		/* 2-3, 4-5, 6-7 */
	view = sdr_rx_chunk_bytes(o.s.rx, o.m.slot);
	assert_int_equal(view[0], 0);			/* packet 1 missing */
	assert_int_equal(view[1], 1);
	assert_int_equal(view[2], 0);			/* packet 9 missing */
	assert_int_equal(sdr_rx_chunk_expand(o.s.rx, o.m.slot, 0, bits), 2);
	assert_int_equal(bits[0], 0x1);
	assert_int_equal(sdr_rx_view_expand(o.s.rx, o.m.slot, 0, bits), 4);
	assert_int_equal(bits[0], 0xD);
	assert_int_equal(sdr_rx_view_expand(o.s.rx, o.m.slot, 2, bits), 2);
	assert_int_equal(bits[0], 0x1);
	assert_int_equal(sdr_rx_view_expand(o.s.rx, o.m.slot, 3, bits), -EINVAL);
	/* the 2-packet chunk 0 rebuilt: the view's chunk 0 is whole */
	memcpy(o.m.dst + 1024, o.m.src + 1024, 1024);
	assert_int_equal(sdr_rx_chunk_recovered(o.s.rx, o.m.slot, 0, &ev), 0);
	assert_true((ev.flags & SDR_RX_EV_CHUNK) && ev.chunk == 0);
	assert_int_equal(view[0], 1);
	for (uint32_t i = 0; i < o.n; i++)
		if (o.f[i].pkt == 9)
			assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	assert_true(ev.flags & SDR_RX_EV_DONE);
	assert_int_equal(view[2], 1);
	assert_memory_equal(o.m.dst, o.m.src, 10000);
	one_teardown(&o);
}

static void
test_expand_recover_events(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct one o;
	uint64_t bits[1];
	uint32_t imm;

	(void)state;
	one_setup(&o, &a, 10000);	/* 10 packets: chunks of 4, 4, 2 */
	/* deliver all but packets 1 and 9 */
	for (uint32_t i = 0; i < o.n; i++) {
		if (o.f[i].pkt == 1 || o.f[i].pkt == 9)
			continue;
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
		if (o.f[i].pkt == 0)
			assert_true(ev.flags & SDR_RX_EV_FIRST);
	}
	assert_int_equal(sdr_rx_chunk_expand(o.s.rx, o.m.slot, 0, bits), 4);
	assert_int_equal(bits[0], 0xD);		/* packets 0, 2, 3 */
	assert_int_equal(sdr_rx_chunk_expand(o.s.rx, o.m.slot, 2, bits), 2);
	assert_int_equal(bits[0], 0x1);
	assert_int_equal(sdr_rx_chunk_expand(o.s.rx, o.m.slot, 3, bits), -EINVAL);
	assert_int_equal(sdr_rx_imm_get(o.s.rx, o.m.slot, &imm), -EAGAIN);	/* fragment 1 */
	/* chunk 0 "recovered" by the caller, the last packet arrives */
	memcpy(o.m.dst + 1024, o.m.src + 1024, 1024);
	assert_int_equal(sdr_rx_chunk_recovered(o.s.rx, o.m.slot, 0, &ev), 0);
	assert_true(ev.flags & SDR_RX_EV_CHUNK);
	assert_int_equal(sdr_rx_chunk_recovered(o.s.rx, o.m.slot, 0, &ev), -EALREADY);
	for (uint32_t i = 0; i < o.n; i++) {
		if (o.f[i].pkt == 9) {
			assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
			assert_int_equal(ev.flags, SDR_RX_EV_LAST | SDR_RX_EV_CHUNK | SDR_RX_EV_DONE);
		}
	}
	assert_memory_equal(o.m.dst, o.m.src, 10000);
	/* the recovered packet arriving late is a packet of a complete message */
	for (uint32_t i = 0; i < o.n; i++)
		if (o.f[i].pkt == 1)
			assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_MSG_COMPLETE);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_CHUNKS_RECOVERED], 1);
	one_teardown(&o);
}

/*
 * The receive's R_Key is checked before the slot's state says anything: a frame without it
 * is a bad_rkey for a complete message and for a released one alike, and only the
 * verdicts of keyed frames are believed (sdr_rx_keyed()).
 */
static void
test_late_needs_key(void **state)
{
	static const sdr_rx_verdict keyed[] = { SDR_RX_PLACED, SDR_RX_DUPLICATE,
		SDR_RX_MSG_COMPLETE, SDR_RX_LATE_PACKET, SDR_RX_LATE_PREVIOUS, SDR_RX_VA_MISMATCH,
		SDR_RX_BAD_LENGTH,
		SDR_RX_OUT_OF_RANGE, SDR_RX_NO_PARITY, SDR_RX_DMA_LEN_MISMATCH };
	static const sdr_rx_verdict unkeyed[] = { SDR_RX_BAD_RKEY, SDR_RX_STALE_GENERATION,
		SDR_RX_SLOT_NOT_POSTED, SDR_RX_BAD_OPCODE };
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct roce_view v;
	uint32_t ch, gen;
	struct one o;

	(void)state;
	one_setup(&o, &a, 5000);
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	assert_int_equal(roce_parse(o.f[0].b, o.f[0].len, 0, &v), ROCE_V_OK);
	assert_int_equal(sdr_conn_qpn_decode(RX_QPN, &o.s.attr, v.dqpn, &ch, &gen), SDR_QPN_DATA);
	/* complete, not released */
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_MSG_COMPLETE);
	v.rkey ^= 1;
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_BAD_RKEY);
	v.rkey ^= 1;
	/* released: the slot keeps its key */
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_LATE_PACKET);
	v.rkey ^= 0x80000000u;
	assert_int_equal(sdr_rx_place(o.s.rx, &v, gen, &ev), SDR_RX_BAD_RKEY);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_BAD_RKEY], 2);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_LATE_PACKET], 1);
	assert_int_equal(sdr_rx_counters(o.s.rx)[SDR_RX_MSG_COMPLETE], 1);
	for (size_t i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++)
		assert_true(sdr_rx_keyed(keyed[i]));
	for (size_t i = 0; i < sizeof(unkeyed) / sizeof(unkeyed[0]); i++)
		assert_false(sdr_rx_keyed(unkeyed[i]));
	one_teardown(&o);
}

/* Claim a parsed frame (the first half of placement), without copying. */
static sdr_rx_verdict
claim(struct side *s, const struct frame *f, struct sdr_rx_claim *cl)
{
	struct roce_view v;
	uint32_t ch, gen;

	assert_int_equal(roce_parse(f->b, f->len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	assert_int_equal(sdr_conn_qpn_decode(RX_QPN, &s->attr, v.dqpn, &ch, &gen), SDR_QPN_DATA);
	return sdr_rx_claim(s->rx, &v, gen, cl);
}

/*
 * Placement in two halves, as receive workers copy payloads: a claim sets the packet bit
 * (a duplicate is dropped before any copy), the chunk counts it only at commit, commits may
 * come in any order, and a chunk recovered while a claim of it is out completes once.
 */
static void
test_claim_commit(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_claim cl[10], dup;
	struct sdr_rx_event ev;
	const uint64_t *rc;
	struct one o;
	uint32_t done = 0;

	(void)state;
	one_setup(&o, &a, 10000);	/* 10 packets: chunks of 4, 4, 2 */
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(claim(&o.s, &o.f[i], &cl[o.f[i].pkt]), SDR_RX_PLACED);
	assert_int_equal(claim(&o.s, &o.f[0], &dup), SDR_RX_DUPLICATE);
	assert_int_equal(cl[9].len, 10000 - 9 * 1024);
	assert_ptr_equal(cl[9].dst, o.m.dst + 9 * 1024);
	assert_int_equal(cl[5].chunk, 1);
	/* nothing is complete before its commits */
	assert_int_equal(sdr_rx_chunk_bits(o.s.rx, o.m.slot)[0], 0);
	/* commits of chunks 2 and 0, last packet first; chunk 1 stays claimed */
	for (int p = 9; p >= 0; p--) {
		if (p >= 4 && p < 8)
			continue;
		memcpy(cl[p].dst, cl[p].src, cl[p].len);
		sdr_rx_commit(o.s.rx, &cl[p], &ev);
		if (ev.flags & SDR_RX_EV_CHUNK)
			done++;
		assert_false(ev.flags & SDR_RX_EV_DONE);
		assert_int_equal(!!(ev.flags & SDR_RX_EV_LAST), p == 9);
	}
	assert_int_equal(done, 2);
	assert_int_equal(sdr_rx_chunk_bits(o.s.rx, o.m.slot)[0], 0x5);	/* chunks 0 and 2 */
	/* chunk 1 recovered by decoding while its four claims are out: the message is done */
	memcpy(o.m.dst + 4096, o.m.src + 4096, 4096);
	assert_int_equal(sdr_rx_chunk_recovered(o.s.rx, o.m.slot, 1, &ev), 0);
	assert_true(ev.flags & SDR_RX_EV_DONE);
	/* its claims committed afterwards (the same bytes) complete nothing again */
	for (int p = 4; p < 8; p++) {
		memcpy(cl[p].dst, cl[p].src, cl[p].len);
		sdr_rx_commit(o.s.rx, &cl[p], &ev);
		assert_false(ev.flags & (SDR_RX_EV_CHUNK | SDR_RX_EV_DONE));
	}
	assert_memory_equal(o.m.dst, o.m.src, 10000);
	rc = sdr_rx_counters(o.s.rx);
	assert_int_equal(rc[SDR_RX_PLACED], 10);
	assert_int_equal(rc[SDR_RX_DUPLICATE], 1);
	assert_int_equal(rc[SDR_RX_CHUNKS_DONE], 3);
	assert_int_equal(rc[SDR_RX_MSGS_DONE], 1);
	/* a commit for a slot released and posted again is ignored, and counted */
	assert_int_equal(rc[SDR_RX_COMMIT_LATE], 0);
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	sdr_rx_commit(o.s.rx, &cl[0], &ev);
	assert_int_equal(ev.flags, 0);
	assert_int_equal(rc[SDR_RX_COMMIT_LATE], 1);
	assert_int_equal(rc[SDR_RX_CHUNKS_DONE], 3);
	one_teardown(&o);
}

/* A message of @p len bytes on a 4,2 code: posted with a parity region of 2 chunks (@p pdst,
 * guarded in @p prb), started with @p user_imm; @p parity_src random parity to send. */
static void
ec_one_setup(struct one *o, struct sdr_conn_attr *a, uint64_t len, uint32_t user_imm,
	     uint8_t parity_src[2 * 4096], struct rbuf *prb, uint8_t **pdst)
{
	a->ec_k = 4;
	a->ec_m = 2;
	side_init(&o->s, a);
	o->m.len = len;
	o->m.src = malloc(len);
	fill_random(o->m.src, len);
	fill_random(parity_src, 2 * 4096);
	o->m.dst = rbuf_alloc(&o->m.rb, len);
	*pdst = rbuf_alloc(prb, 2 * 4096);
	assert_int_equal(sdr_rx_post(o->s.rx, o->m.dst, len, *pdst, NULL, &o->m.slot), 0);
	assert_int_equal(sdr_tx_msg_start(o->s.tx, o->m.src, len, user_imm, &o->m.tm), 0);
	o->n = 0;
}

static void
test_parity_region(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct one o;
	struct sdr_tx_job job;
	uint8_t parity_src[2 * 4096], *pdst;
	struct rbuf prb;
	uint32_t n0;

	(void)state;
	/* 4 chunks: one submessage, 2 parity chunks */
	ec_one_setup(&o, &a, 16384, 7, parity_src, &prb, &pdst);
	assert_int_equal(sdr_tx_job_parity(o.s.tx, &job, &o.m.tm, parity_src, 0, 8), 0);
	build_job(&o.s, &job, o.f, &o.n, 0);
	n0 = o.n;
	for (uint32_t i = 0; i < n0; i++) {
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
		assert_false(ev.flags & (SDR_RX_EV_CHUNK | SDR_RX_EV_DONE));
	}
	assert_true(ev.flags & SDR_RX_EV_PARITY_CHUNK);
	assert_int_equal(ev.chunk, 1);
	assert_memory_equal(pdst, parity_src, sizeof(parity_src));
	rbuf_check_guards(&prb);
	/* a parity packet past the message's parity chunks: out of range, nothing written */
	assert_int_equal(sdr_tx_job_parity(o.s.tx, &job, &o.m.tm, parity_src, 8, 1), 0);
	build_job(&o.s, &job, o.f, &o.n, 0);
	assert_int_equal(deliver(&o.s, o.f[n0].b, o.f[n0].len, &ev), SDR_RX_OUT_OF_RANGE);
	rbuf_check_guards(&prb);
	free(prb.mem);
	one_teardown(&o);
}

/*
 * A message of fewer packets than the immediate has fragments (3 packets, 8 fragments of 4
 * bits) carries fragments 0, 1 and 2 in its data packets; its parity packets carry
 * fragments of their own offsets. With every packet of fragment 0 lost, the immediate is
 * not whole however many others came (it was taken as whole from any 3 fragments, fragment
 * 0 read as 0); once fragment 0 is in, it is the low 12 bits, the higher ones 0 as
 * sdr_rx.h says.
 */
static void
test_imm_short_message(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct one o;
	struct sdr_tx_job job;
	uint8_t parity_src[2 * 4096], *pdst;
	struct rbuf prb;
	uint32_t imm, first = UINT32_MAX;

	(void)state;
	ec_one_setup(&o, &a, 3000, 0xC0FFEE42, parity_src, &prb, &pdst);	/* 3 packets */
	assert_int_equal(sdr_tx_job_data(&job, &o.m.tm, 0, o.m.tm.npkts), 0);
	build_job(&o.s, &job, o.f, &o.n, 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(sdr_tx_job_parity(o.s.tx, &job, &o.m.tm, parity_src, 0, 8), 0);
	build_job(&o.s, &job, o.f, &o.n, 0);
	for (uint32_t i = 0; i < o.n; i++) {
		struct roce_view v;

		/* every packet that carries fragment 0 is lost but data packet 0, kept back */
		assert_int_equal(roce_parse(o.f[i].b, o.f[i].len, 0, &v), ROCE_V_OK);
		if (sdr_imm_unpack(&a.split, v.imm).pkt_off % sdr_imm_nfrags(&a.split) == 0) {
			if (i == 0)
				first = i;
			continue;
		}
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	}
	assert_true(first == 0 && o.n > 6);
	assert_int_equal(sdr_rx_imm_get(o.s.rx, o.m.slot, &imm), -EAGAIN);
	assert_int_equal(deliver(&o.s, o.f[first].b, o.f[first].len, &ev), SDR_RX_PLACED);
	assert_int_equal(sdr_rx_imm_get(o.s.rx, o.m.slot, &imm), 0);
	assert_int_equal(imm, 0xE42);
	rbuf_check_guards(&prb);
	free(prb.mem);
	one_teardown(&o);
}

/*
 * A slot that ended keeps its key (its late packets are late_packet, and re-ACK), until the
 * key is taken away (a peer restart): then they are bad_rkey. A key is given to a posted
 * receive only.
 */
static void
test_released_slot_unkeyed(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx_event ev;
	struct one o;

	(void)state;
	a.local_rkey = 0x5d0a;
	one_setup(&o, &a, 3000);
	for (uint32_t i = 0; i < o.n; i++)
		assert_int_equal(deliver(&o.s, o.f[i].b, o.f[i].len, &ev), SDR_RX_PLACED);
	assert_int_equal(sdr_rx_complete(o.s.rx, o.m.slot), 0);
	assert_int_equal(deliver(&o.s, o.f[0].b, o.f[0].len, &ev), SDR_RX_LATE_PACKET);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, o.m.slot, 0x77), -EINVAL);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, o.m.slot, 0), 0);
	assert_int_equal(deliver(&o.s, o.f[0].b, o.f[0].len, &ev), SDR_RX_BAD_RKEY);
	assert_int_equal(sdr_rx_set_rkey(o.s.rx, o.m.slot + 1, 0), -EINVAL);	/* never posted */
	one_teardown(&o);
}

static void
test_tx_slot_reuse(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct side s;
	struct sdr_tx_msg m[5];
	struct sdr_tx_job job;

	(void)state;
	a.split = (struct sdr_imm_split){ 2, 26, 4 };
	side_init(&s, &a);
	for (int i = 0; i < 4; i++)
		assert_int_equal(sdr_tx_msg_start(s.tx, NULL, 0, 0, &m[i]), 0);
	assert_int_equal(sdr_tx_msg_start(s.tx, NULL, 0, 0, &m[4]), -EAGAIN);
	/* retiring a later message does not free slot 0, which is next in order */
	sdr_tx_msg_retire(s.tx, &m[2]);
	assert_int_equal(sdr_tx_msg_start(s.tx, NULL, 0, 0, &m[4]), -EAGAIN);
	sdr_tx_msg_retire(s.tx, &m[0]);
	assert_int_equal(sdr_tx_msg_start(s.tx, NULL, 0, 0, &m[4]), 0);
	assert_int_equal(m[4].msg_id, 0);
	assert_int_equal(m[4].gen, 1);
	assert_int_equal(sdr_tx_inflight(s.tx), 3);
	assert_int_equal(sdr_tx_job_data(&job, &m[4], 1, 1), -EINVAL);
	assert_int_equal(sdr_tx_job_parity(s.tx, &job, &m[4], NULL, 0, 1), -EINVAL);
	assert_int_equal(sdr_tx_counters(s.tx)[SDR_TX_SLOT_BUSY], 2);
	side_fini(&s);
}

/*
 * The three packetizers of one message (copying, zero-copy, work requests) describe the
 * same packets: a zero-copy frame (headers, payload where it lies, tail) is the copying
 * one byte for byte, from the first frame to the short last one, over 2 channels, in
 * bursts of every size; a work request names its fields. A burst whose header room is too
 * small builds nothing, counts build_errors, and takes no PSN: the frames after it are
 * those of a packetizer that never saw it.
 */
static void
test_tx_packetizers_agree(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct side cp, zc, wr;
	struct sdr_tx_msg mc, mz, mw;
	struct sdr_tx_job jc, jz, jw;
	uint64_t len = 10 * 1024 + 300;	/* 11 packets, the last one short */
	uint8_t *src = malloc(len), hdr[8][128];
	uint32_t k = 0;

	(void)state;
	fill_random(src, len);
	side_init(&cp, &a);
	side_init(&zc, &a);
	side_init(&wr, &a);
	assert_int_equal(sdr_tx_msg_start(cp.tx, src, len, 0x1234, &mc), 0);
	assert_int_equal(sdr_tx_msg_start(zc.tx, src, len, 0x1234, &mz), 0);
	assert_int_equal(sdr_tx_msg_start(wr.tx, src, len, 0x1234, &mw), 0);
	mc.rkey = mz.rkey = mw.rkey = RX_RKEY;
	assert_int_equal(sdr_tx_job_data(&jc, &mc, 0, mc.npkts), 0);
	assert_int_equal(sdr_tx_job_data(&jz, &mz, 0, mz.npkts), 0);
	assert_int_equal(sdr_tx_job_data(&jw, &mw, 0, mw.npkts), 0);
	assert_int_equal(mc.npkts, 11);
	for (uint32_t burst = 1; sdr_tx_job_left(&jz) > 0; burst = burst % 4 + 1) {
		uint8_t *hp[8], *fp[8];
		struct sdr_tx_frag fr[8];
		struct sdr_tx_wr w[8];
		struct frame *f = calloc(8, sizeof(*f));
		uint16_t lens[8];
		uint32_t got, gc, gw;

		for (int i = 0; i < 8; i++) {
			hp[i] = hdr[i];
			fp[i] = f[i].b;
		}
		if (k == 3) {	/* headers do not fit: nothing built, nothing taken */
			assert_int_equal(sdr_tx_build_sg(zc.tx, &jz, hp, 20, fr, burst), 0);
			assert_int_equal(sdr_tx_counters(zc.tx)[SDR_TX_BUILD_ERRORS], 1);
		}
		got = sdr_tx_build_sg(zc.tx, &jz, hp, sizeof(hdr[0]), fr, burst);
		gc = sdr_tx_build(cp.tx, &jc, fp, FRAME_CAP, lens, burst);
		gw = sdr_tx_build_wr(wr.tx, &jw, w, burst);
		assert_true(got > 0);
		assert_int_equal(gc, got);
		assert_int_equal(gw, got);
		for (uint32_t i = 0; i < got; i++, k++) {
			uint8_t z[FRAME_CAP];
			uint32_t n = fr[i].hdr_len;
			struct roce_view v;

			memcpy(z, hdr[i], n);
			memcpy(z + n, fr[i].payload, fr[i].payload_len);
			memcpy(z + n + fr[i].payload_len, fr[i].tail, fr[i].tail_len);
			n += fr[i].payload_len + fr[i].tail_len;
			assert_int_equal(n, lens[i]);
			if (memcmp(z, f[i].b, n) != 0)
				fail_msg("packet %u: the zero-copy frame differs", k);
			assert_int_equal(roce_parse(z, (uint16_t)n, ROCE_PARSE_VERIFY_ICRC, &v),
					 ROCE_V_OK);
			assert_int_equal(w[i].pkt.dqpn, v.dqpn);
			assert_int_equal(w[i].pkt.psn, v.psn);
			assert_int_equal(w[i].pkt.va, v.va);
			assert_int_equal(w[i].pkt.imm, v.imm);
			assert_int_equal(w[i].pkt.dma_len, v.dma_len);
			assert_int_equal(w[i].payload_len, fr[i].payload_len);
			assert_ptr_equal(w[i].payload, fr[i].payload);
			assert_ptr_equal(fr[i].payload, src + (uint64_t)k * a.mtu);
			assert_int_equal(fr[i].payload_len, k == 10 ? 300 : a.mtu);
		}
		free(f);
	}
	assert_int_equal(k, 11);
	assert_int_equal(sdr_tx_counters(zc.tx)[SDR_TX_PKTS_BUILT], 11);
	assert_int_equal(sdr_tx_counters(zc.tx)[SDR_TX_BYTES_BUILT], len);
	assert_int_equal(sdr_tx_counters(cp.tx)[SDR_TX_BUILD_ERRORS], 0);
	free(src);
	side_fini(&cp);
	side_fini(&zc);
	side_fini(&wr);
}

static void
test_rx_post_limits(void **state)
{
	struct sdr_conn_attr a = small_attr();
	struct sdr_rx *rx;
	uint32_t slot[5];

	(void)state;
	a.local_rkey = 1;
	rx = sdr_rx_create(&a);
	for (int i = 0; i < 4; i++)
		assert_int_equal(sdr_rx_post(rx, NULL, 0, NULL, NULL, &slot[i]), 0);
	assert_int_equal(sdr_rx_post(rx, NULL, 0, NULL, NULL, &slot[4]), -EAGAIN);
	assert_int_equal(sdr_rx_posted(rx), 4);
	assert_int_equal(sdr_rx_complete(rx, slot[1]), 0);
	assert_int_equal(sdr_rx_complete(rx, slot[1]), -EINVAL);
	assert_int_equal(sdr_rx_post(rx, NULL, 0, NULL, NULL, &slot[4]), 0);
	assert_int_equal(slot[4], 4);
	assert_null(sdr_rx_chunk_bytes(rx, slot[1]));
	assert_int_equal(sdr_rx_next_seq(rx), 5);
	assert_string_equal(sdr_rx_counter_name(SDR_RX_STALE_GENERATION), "stale_generation");
	sdr_rx_destroy(rx);
	a.mtu = 3;
	assert_null(sdr_rx_create(&a));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_property_random_loss_reorder_dup),
		cmocka_unit_test(test_stale_generation_and_wrapped_ids),
		cmocka_unit_test(test_previous_receive_one_generation),
		cmocka_unit_test(test_reth_imm_mismatch_and_bounds),
		cmocka_unit_test(test_zero_length_and_maximal),
		cmocka_unit_test(test_expand_recover_events),
		cmocka_unit_test(test_late_needs_key),
		cmocka_unit_test(test_smaller_chunks_view),
		cmocka_unit_test(test_claim_commit),
		cmocka_unit_test(test_parity_region),
		cmocka_unit_test(test_imm_short_message),
		cmocka_unit_test(test_released_slot_unkeyed),
		cmocka_unit_test(test_tx_packetizers_agree),
		cmocka_unit_test(test_tx_slot_reuse),
		cmocka_unit_test(test_rx_post_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
