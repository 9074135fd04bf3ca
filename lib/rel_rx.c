/* SPDX-License-Identifier: BSD-3-Clause */
/* Receiver state machine: CTS, ACK policy, NACKs, EC decodability, FTO and EC-NACK. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ec_codec.h"
#include "path_est.h"
#include "rel_rx.h"
#include "sdr_bitmap.h"
#include "sdr_zero.h"

static const struct sdr_counter_def counter_defs[REL_RX_NCOUNTERS] = {
	REL_RX_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table rel_rx_counter_table = {
	.group = "reliability_rx",
	.doc = "the receive side of the reliability layer: receives, chunks, the ACKs, NACKs and CTS it sends, control messages received",
	.n = REL_RX_NCOUNTERS,
	.defs = counter_defs,
};

const char *
rel_rx_counter_name(enum rel_rx_counter c)
{
	return sdr_counter_name(&rel_rx_counter_table, (unsigned int)c);
}

enum rxm_state {
	RXM_FREE,
	RXM_POSTED,
	RXM_DONE,	/* complete; waiting for release */
	RXM_FAILED,	/* timed out; waiting for release */
};

/* Control messages a message owes the sender. */
#define DUE_CTS		0x01u
#define DUE_ACK		0x02u
#define DUE_NACK	0x04u
#define DUE_EC_NACK	0x08u
#define DUE_FINAL	0x10u	/* ACK with COMPLETE or FAILED */

/* A receive's CTS repeats until its first chunk comes, spaced RTO, then 2, 4 and at most
 * 2^CTS_BACKOFF_SHIFT RTOs. */
#define CTS_BACKOFF_SHIFT 3

struct rxm {
	uint8_t state;
	uint8_t due;
	uint8_t fallback;		/* EC: FTO expired, SR ACKs from now on */
	uint8_t cts_repeats;		/* CTS repeats so far (their spacing doubles) */
	uint64_t seq;
	uint32_t slot;
	uint32_t gen;
	uint64_t len;
	uint64_t cookie;
	uint32_t nchunks;
	uint32_t nsub;
	uint32_t npar;
	uint32_t have_data;		/* data chunks in (arrived or decoded) */
	uint32_t cum;			/* first data chunk not in */
	uint32_t hi;			/* highest data chunk arrived + 1 */
	uint32_t ack_hint;		/* chunk the next ACK window must cover */
	uint32_t new_since_ack;
	uint32_t decoded;
	uint32_t sure_hi;		/* sr-nack: holes below this are sure losses */
	uint32_t snap_hi;
	uint32_t nack_cursor;		/* holes below it were NACKed in this round */
	uint64_t snap_ns;
	uint64_t nack_round_ns;		/* when the current NACK round started */
	uint64_t post_ns;
	uint64_t cts_ns;		/* when its first CTS went out (0: none yet; UINT64_MAX:
					 * no RTT sample, rel_rx_cts_given()) */
	uint64_t first_ns;
	uint64_t last_arrival_ns;
	uint64_t ack_next_ns;		/* periodic ACK while receiving */
	uint64_t cts_next_ns;
	uint64_t fto_ns;
	uint64_t ecnack_next_ns;
	uint64_t final_ns;		/* last final ACK, for rate limiting */
	uint64_t deadline_ns;
	uint64_t *have;			/* data chunks, then parity chunks */
	uint16_t *sub_data;		/* per submessage: data chunks in */
	uint64_t *sub_ok;		/* per submessage: every data chunk in */
	uint64_t *sub_pending;		/* per submessage: decode requested */
};

struct dec_ent {
	uint32_t ctx;
	uint32_t sub;
	uint64_t seq;
};

/*
 * What a slot remembers of the last receive released from it, to answer its late packets:
 * kept while the slot's next receive is posted, since the sender may not have heard the
 * final ACK when the receiver reposts the slot (the final ACK lost on the way, or the
 * slot reposted before it went out).
 */
struct slot_mem {
	uint8_t valid;
	uint8_t gen;
	uint8_t failed;
	uint8_t queued;
	uint32_t seq;			/* its low 32 bits, for the re-ACK */
	uint64_t reack_ns;
};

/* A final ACK owed for a released receive: what it says, not where to read it, since the
 * slot may be posted again before it goes out. */
struct reack {
	uint32_t slot;
	uint32_t seq;			/* the low 32 bits, as the ACK carries them */
	uint8_t gen;
	uint8_t failed;
};

struct rel_rx {
	struct sdr_rel_cfg cfg;
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	struct ec_codec *codec;		/* decodability queries only */
	uint64_t rto;
	uint64_t trtt;			/* the RTT the timers derive from (rel_rx_rto()) */
	struct path_est path;		/* RTT samples: a CTS to the first chunk it let in */
	uint64_t t_inj_ns_x1000;	/* chunk injection time, in ps */
	uint32_t max_chunks;
	uint32_t max_sub;
	uint64_t next_seq;		/* receives posted so far */
	uint64_t epoch_seq;		/* the first sequence number of the current epoch */
	uint8_t skip_answer;		/* a SKIP to answer: [skip_lo, skip_hi) */
	uint64_t skip_lo, skip_hi;
	uint64_t wd_lo, wd_hi;		/* receives withdrawn: WITHDRAW owed until answered */
	uint64_t wd_answered;
	uint64_t wd_next_ns, wd_gap_ns;
	/*
	 * Receives the application gave up while posted (rel_rx_release() of an open one) keep
	 * their sequence numbers: the sender's message for each fails when it comes. If the
	 * sender never sends them (it went away too), our numbering runs ahead of its own and
	 * its next messages would land in the wrong receives; the WITHDRAW of rel_rx_withdraw()
	 * covers them from heard_hi: 1 + the highest message the sender is known to have
	 * started (a chunk in, a SKIP, a WITHDRAW answer). given_hi: 1 + the highest one given
	 * up before any of its chunks came.
	 */
	uint64_t heard_hi, given_hi;
	struct rxm *msgs;
	uint32_t *ctx_of_slot;		/* slot -> ctx + 1 (0: none) */
	uint32_t *free_ctx;
	uint32_t nfree;
	/*
	 * When the receives are looked at (their timers run, what they owe built): a receive a
	 * call changed goes on the touched list and is looked at on the next call; the others
	 * when their timers next have something to do, next_of[ctx], kept in a min-heap of
	 * ctxs (heap_pos[ctx]: its index + 1, 0 if not in it). So a chunk costs the same with
	 * 16 receives in flight or 16384. (Not rte_timer: lib/ reads no clock and has no EAL.)
	 */
	uint32_t *touched;		/* ctxs of the touched list: a FIFO of max_inflight */
	uint8_t *on_list;		/* per ctx: on the touched list */
	uint32_t thead;			/* its first entry */
	uint32_t ntouched;
	uint64_t *next_of;
	uint32_t *heap;
	uint32_t *heap_pos;
	uint32_t nheap;
	uint32_t open;			/* ctx + 1 of the receive under look, its timers run */
	uint64_t open_ns;		/* at this time */
	struct slot_mem *mem;
	struct reack *reack;		/* ring of final ACKs owed, reack_cap of them */
	uint32_t reack_cap;
	uint32_t reack_head;
	uint32_t nreack;
	struct dec_ent *dec;		/* ring of decode requests */
	uint32_t dec_cap;
	uint32_t dec_head;
	uint32_t ndec;
	struct sdr_rel_done_fifo done;
	uint64_t counters[REL_RX_NCOUNTERS];
};

static void touch(struct rel_rx *rx, const struct rxm *m);

/*
 * Something that may start a timer or make a control message due happened to every receive
 * (a public call that changes them all makes this call first): the next rel_rx_next_ctrl()
 * or rel_rx_next_time() looks at every receive.
 */
static void
changed(struct rel_rx *rx)
{
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++)
		if (rx->msgs[i].state != RXM_FREE)
			touch(rx, &rx->msgs[i]);
}

/* The same for receive @p m alone (a public call that changes one makes this call first). */
static void
touch(struct rel_rx *rx, const struct rxm *m)
{
	uint32_t ctx = (uint32_t)(m - rx->msgs);

	if (rx->open == ctx + 1)
		rx->open = 0;	/* its timers run again at its next look */
	if (rx->on_list[ctx])
		return;
	rx->on_list[ctx] = 1;
	/* at most one entry per receive, so it never overflows; first in, first looked at,
	 * so a receive touched long ago is not passed over by those touched since */
	rx->touched[(rx->thead + rx->ntouched++) % rx->attr.max_inflight] = ctx;
}

/* Heap entry @p i holds @p ctx. */
static void
heap_put(struct rel_rx *rx, uint32_t i, uint32_t ctx)
{
	rx->heap[i] = ctx;
	rx->heap_pos[ctx] = i + 1;
}

/* Move the entry at @p i up or down to where next_of puts it. */
static void
heap_fix(struct rel_rx *rx, uint32_t i)
{
	uint32_t ctx = rx->heap[i];
	uint64_t t = rx->next_of[ctx];

	while (i > 0 && rx->next_of[rx->heap[(i - 1) / 2]] > t) {
		heap_put(rx, i, rx->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= rx->nheap)
			break;
		if (c + 1 < rx->nheap && rx->next_of[rx->heap[c + 1]] < rx->next_of[rx->heap[c]])
			c++;
		if (rx->next_of[rx->heap[c]] >= t)
			break;
		heap_put(rx, i, rx->heap[c]);
		i = c;
	}
	heap_put(rx, i, ctx);
}

/* Receive @p ctx's timers next have something to do at @p t (UINT64_MAX: never). */
static void
heap_set(struct rel_rx *rx, uint32_t ctx, uint64_t t)
{
	uint32_t p = rx->heap_pos[ctx];

	if (t == UINT64_MAX) {
		if (p == 0)
			return;
		rx->heap_pos[ctx] = 0;
		if (--rx->nheap == p - 1)
			return;	/* it was the last */
		heap_put(rx, p - 1, rx->heap[rx->nheap]);
		heap_fix(rx, p - 1);
		return;
	}
	rx->next_of[ctx] = t;
	if (p == 0) {
		p = ++rx->nheap;
		heap_put(rx, p - 1, ctx);
	}
	heap_fix(rx, p - 1);
}

#define REACK_RING_MIN 256

static void
free_msg(struct rxm *m)
{
	free(m->have);
	free(m->sub_data);
	free(m->sub_ok);
	free(m->sub_pending);
}

void
rel_rx_destroy(struct rel_rx *rx)
{
	if (rx == NULL)
		return;
	if (rx->msgs != NULL)
		for (uint32_t i = 0; i < rx->attr.max_inflight; i++)
			free_msg(&rx->msgs[i]);
	free(rx->msgs);
	free(rx->ctx_of_slot);
	free(rx->free_ctx);
	free(rx->touched);
	free(rx->on_list);
	free(rx->next_of);
	free(rx->heap);
	free(rx->heap_pos);
	free(rx->mem);
	free(rx->reack);
	free(rx->dec);
	free(rx->done.d);
	ec_codec_destroy(rx->codec);
	free(rx);
}

/* A codec for decodability queries of code @p s. */
static int
make_codec(const struct sdr_scheme *s, struct ec_codec **out)
{
	struct ec_spec spec = {
		.kind = s->kind == SDR_SCHEME_EC_XOR ? EC_KIND_XOR : EC_KIND_MDS,
		.k = s->k, .m = s->m,
	};

	return ec_codec_create(&spec, 1, out);
}

struct rel_rx *
rel_rx_create(const struct sdr_rel_cfg *cfg, const struct sdr_conn_attr *attr)
{
	struct rel_rx *rx = calloc(1, sizeof(*rx));
	uint32_t n = attr->max_inflight;

	if (rx == NULL)
		return NULL;
	rx->cfg = *cfg;
	rx->attr = *attr;
	if (sdr_conn_geometry(attr, &rx->geom) != 0)
		goto fail;
	if (cfg->scheme_may_change ? !sdr_rel_code_fits(&rx->geom, &cfg->scheme) :
	    sdr_scheme_is_ec(&cfg->scheme) &&
	    (cfg->scheme.k != attr->ec_k || cfg->scheme.m != attr->ec_m))
		goto fail;
	/* a chunk other than the configured one only where the scheme may change */
	if (cfg->scheme.chunk_shift && (!cfg->scheme_may_change ||
					cfg->scheme.chunk_shift > rx->geom.max_chunk_shift))
		goto fail;
	if (sdr_scheme_is_ec(&cfg->scheme) && make_codec(&cfg->scheme, &rx->codec) != 0)
		goto fail;
	rx->rto = sdr_rel_rto(cfg);
	rx->trtt = cfg->rtt_ns;
	path_est_init(&rx->path, 0);
	rx->t_inj_ns_x1000 = cfg->rate_bps > 0 ?
		(uint64_t)((double)attr->chunk_size * 8e12 / cfg->rate_bps) : 0;
	rx->max_chunks = rx->geom.max_units + rx->geom.max_parity_units;
	/* a scheme that may change to any k: a submessage per chunk at most */
	rx->max_sub = cfg->scheme_may_change ? rx->geom.max_units :
		      cfg->scheme.k ? (rx->geom.max_data_chunks + cfg->scheme.k - 1) / cfg->scheme.k : 1;
	rx->msgs = calloc(n, sizeof(*rx->msgs));
	rx->ctx_of_slot = calloc(rx->geom.nslots, sizeof(uint32_t));
	rx->free_ctx = calloc(n, sizeof(uint32_t));
	rx->touched = calloc(n, sizeof(uint32_t));
	rx->on_list = calloc(n, 1);
	rx->next_of = calloc(n, sizeof(uint64_t));
	rx->heap = calloc(n, sizeof(uint32_t));
	rx->heap_pos = calloc(n, sizeof(uint32_t));
	rx->mem = calloc(rx->geom.nslots, sizeof(*rx->mem));
	/* every receive in flight may be released before its final ACK goes out */
	rx->reack_cap = n > REACK_RING_MIN ? n : REACK_RING_MIN;
	rx->reack = calloc(rx->reack_cap, sizeof(*rx->reack));
	rx->dec_cap = n * rx->max_sub;
	rx->dec = calloc(rx->dec_cap, sizeof(*rx->dec));
	rx->done.d = calloc(n, sizeof(*rx->done.d));
	rx->done.cap = n;
	if (!rx->msgs || !rx->ctx_of_slot || !rx->free_ctx || !rx->touched || !rx->on_list ||
	    !rx->next_of || !rx->heap || !rx->heap_pos || !rx->mem || !rx->reack || !rx->dec ||
	    !rx->done.d)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		struct rxm *m = &rx->msgs[i];

		m->have = calloc(SDR_BITMAP_WORDS(rx->max_chunks), sizeof(uint64_t));
		m->sub_data = calloc(rx->max_sub, sizeof(uint16_t));
		m->sub_ok = calloc(SDR_BITMAP_WORDS(rx->max_sub), sizeof(uint64_t));
		m->sub_pending = calloc(SDR_BITMAP_WORDS(rx->max_sub), sizeof(uint64_t));
		if (!m->have || !m->sub_data || !m->sub_ok || !m->sub_pending)
			goto fail;
		rx->free_ctx[i] = n - 1 - i;
	}
	rx->nfree = n;
	return rx;
fail:
	rel_rx_destroy(rx);
	return NULL;
}

static int
is_ec(const struct rel_rx *rx)
{
	return sdr_scheme_is_ec(&rx->cfg.scheme);
}

/* The submessages and parity of a posted message under the current scheme, state cleared. */
static void
code_msg(struct rel_rx *rx, struct rxm *m)
{
	m->nchunks = sdr_conn_msg_chunks_at(&rx->geom, m->len, rx->cfg.scheme.chunk_shift);
	m->nsub = is_ec(rx) ? (m->nchunks + rx->cfg.scheme.k - 1) / rx->cfg.scheme.k : 0;
	m->npar = m->nsub * rx->cfg.scheme.m;
	sdr_bitmap_zero(m->have, m->nchunks + m->npar);
	if (m->nsub) {
		memset(m->sub_data, 0, m->nsub * sizeof(uint16_t));
		sdr_bitmap_zero(m->sub_ok, m->nsub);
		sdr_bitmap_zero(m->sub_pending, m->nsub);
	}
}

int
rel_rx_set_scheme(struct rel_rx *rx, const struct sdr_scheme *s, struct ec_codec **made)
{
	struct ec_codec *codec = NULL;

	changed(rx);
	if (!rx->cfg.scheme_may_change || !sdr_rel_code_fits(&rx->geom, s))
		return -EINVAL;
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		const struct rxm *m = &rx->msgs[i];

		if (m->state == RXM_POSTED && (m->first_ns != 0 || m->have_data != 0))
			return -EBUSY;	/* a message is arriving under the current scheme */
	}
	if (sdr_scheme_is_ec(s) && made != NULL && *made != NULL) {
		codec = *made;
		*made = NULL;
	} else if (sdr_scheme_is_ec(s) && make_codec(s, &codec) != 0) {
		return -ENOMEM;
	}
	ec_codec_destroy(rx->codec);
	rx->codec = codec;
	rx->cfg.scheme = *s;
	/* the receives posted ahead: nothing of them arrived yet, they take the new code */
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++)
		if (rx->msgs[i].state == RXM_POSTED)
			code_msg(rx, &rx->msgs[i]);
	return 0;
}

int
rel_rx_post(struct rel_rx *rx, uint64_t seq, uint32_t slot, uint64_t len, uint64_t cookie,
	    uint64_t now)
{
	struct rxm *m;
	uint32_t ctx;

	if (len > rx->attr.max_msg_size)
		return -EMSGSIZE;	/* its chunks would not fit the bitmaps */
	if (rx->nfree == 0 || rx->done.n >= rx->done.cap || slot >= rx->geom.nslots ||
	    rx->ctx_of_slot[slot] != 0)
		return -EAGAIN;
	ctx = rx->free_ctx[--rx->nfree];
	m = &rx->msgs[ctx];
	touch(rx, m);
	sdr_zero(m, offsetof(struct rxm, have));
	m->state = RXM_POSTED;
	m->seq = seq;
	m->slot = slot;
	m->gen = sdr_conn_seq_gen(&rx->attr, seq);
	m->len = len;
	m->cookie = cookie;
	m->post_ns = now;
	m->ack_next_ns = UINT64_MAX;
	m->fto_ns = UINT64_MAX;
	m->ecnack_next_ns = UINT64_MAX;
	m->cts_next_ns = now + rx->rto;
	m->deadline_ns = rx->cfg.global_timeout_ns ? now + rx->cfg.global_timeout_ns : UINT64_MAX;
	m->due = DUE_CTS;
	code_msg(rx, m);
	rx->ctx_of_slot[slot] = ctx + 1;
	if (seq + 1 > rx->next_seq)
		rx->next_seq = seq + 1;
	rx->counters[REL_RX_POSTED]++;
	return (int)ctx;
}

static struct rxm *
msg_of_slot(struct rel_rx *rx, uint32_t slot)
{
	uint32_t c = slot < rx->geom.nslots ? rx->ctx_of_slot[slot] : 0;

	return c ? &rx->msgs[c - 1] : NULL;
}

static void
push_done(struct rel_rx *rx, struct rxm *m, enum sdr_done_status st, uint64_t now)
{
	struct sdr_rel_done *d;

	d = sdr_rel_done_add(&rx->done);
	if (d == NULL)
		return;	/* cannot happen: post refuses while completions are unread */
	*d = (struct sdr_rel_done){
		.cookie = m->cookie, .seq = m->seq, .slot = m->slot,
		.ctx = (uint32_t)(m - rx->msgs), .status = st,
		.start_ns = m->post_ns, .first_ns = m->first_ns, .end_ns = now,
		.decoded = m->decoded,
	};
}

static void
check_complete(struct rel_rx *rx, struct rxm *m, uint64_t now)
{
	if (m->state != RXM_POSTED || m->have_data < m->nchunks)
		return;
	m->state = RXM_DONE;
	m->due = DUE_FINAL;
	rx->counters[REL_RX_COMPLETED]++;
	push_done(rx, m, SDR_DONE_OK, now);
}

/* Is submessage s of m decodable with what is in now? */
static int
sub_decodable(const struct rel_rx *rx, const struct rxm *m, uint32_t s)
{
	uint32_t k = rx->cfg.scheme.k, mm = rx->cfg.scheme.m, first = s * k;
	struct ec_mask mask;

	ec_mask_zero(&mask);
	for (uint32_t j = 0; j < k; j++)
		if (first + j >= m->nchunks || sdr_bit_test(m->have, first + j))
			ec_mask_set(&mask, j);	/* past the end: a zero chunk, known */
	for (uint32_t i = 0; i < mm; i++)
		if (sdr_bit_test(m->have, m->nchunks + s * mm + i))
			ec_mask_set(&mask, k + i);
	return ec_decodable(rx->codec, &mask);
}

static uint32_t
sub_count(const struct rel_rx *rx, const struct rxm *m, uint32_t s)
{
	uint32_t first = s * rx->cfg.scheme.k;

	return m->nchunks - first < rx->cfg.scheme.k ? m->nchunks - first : rx->cfg.scheme.k;
}

static void
check_sub(struct rel_rx *rx, uint32_t ctx, uint32_t s)
{
	struct rxm *m = &rx->msgs[ctx];

	if (sdr_bit_test(m->sub_ok, s))
		return;
	/* (every data chunk came, even while a decode was asked for: done, not decoded) */
	if (m->sub_data[s] == sub_count(rx, m, s)) {
		sdr_bit_set(m->sub_ok, s);
		return;
	}
	if (sdr_bit_test(m->sub_pending, s))
		return;
	if (sub_decodable(rx, m, s) && rx->ndec < rx->dec_cap) {
		sdr_bit_set(m->sub_pending, s);
		rx->dec[(rx->dec_head + rx->ndec) % rx->dec_cap] =
			(struct dec_ent){ .ctx = ctx, .sub = s, .seq = m->seq };
		rx->ndec++;
	}
}

/* Mark data chunk c in; move the cumulative point. */
static void
data_in(struct rxm *m, uint32_t c)
{
	m->have_data++;
	if (c == m->cum)
		m->cum = sdr_bitmap_next_zero(m->have, c + 1, m->nchunks);
}

static uint64_t
fto_len(const struct rel_rx *rx, const struct rxm *m)
{
	uint64_t par = ((uint64_t)m->nchunks * rx->cfg.scheme.m + rx->cfg.scheme.k - 1) / rx->cfg.scheme.k;

	return ((uint64_t)m->nchunks + par) * (rx->t_inj_ns_x1000 >> rx->cfg.scheme.chunk_shift) /
	       1000 +
	       (uint64_t)(rx->cfg.beta * (double)rx->trtt);
}

/*
 * An RTT sample from a receive's first chunk: the time since its first CTS went out. The
 * sender had no credit for the message before that CTS (or a later one) reached it, so no
 * sample is below the path's round trip; a sender with nothing to send yet, or a paced
 * queue, only adds to it. The smallest of the last 10-20 s is the path's RTT (path_est.h).
 * With cfg.rto_measured and SDR_REL_RTO_MIN_SAMPLES of them the receiver's timers follow
 * it (rel_rx_rto()). Unlike the sender's, the RTO has no floor from the smoothed RTT: these
 * samples include the sender's wait for its application, which a mean would take for the
 * path.
 */
static void
rtt_sample(struct rel_rx *rx, const struct rxm *m, uint64_t now)
{
	uint64_t rtt;

	if (m->cts_ns == 0 || m->cts_ns == UINT64_MAX || now <= m->cts_ns)
		return;
	path_est_rtt(&rx->path, now - m->cts_ns, now);
	if (!rx->cfg.rto_measured || rx->path.rtt_samples < SDR_REL_RTO_MIN_SAMPLES)
		return;
	rtt = path_est_min_rtt(&rx->path, now);
	if (rtt == 0 || rtt == rx->trtt)
		return;
	changed(rx);	/* every receive's NACK timing follows it */
	rx->trtt = rtt;
	rx->rto = rtt + (uint64_t)(rx->cfg.alpha * (double)rtt);
}

int
rel_rx_on_chunk(struct rel_rx *rx, uint32_t slot, uint32_t chunk, uint64_t now)
{
	struct rxm *m = msg_of_slot(rx, slot);
	uint32_t ctx;

	if (m == NULL || m->state != RXM_POSTED || chunk >= m->nchunks + m->npar)
		return m != NULL && m->state != RXM_POSTED ? 0 : -1;
	touch(rx, m);
	ctx = (uint32_t)(m - rx->msgs);
	if (!sdr_bit_test_and_set(m->have, chunk)) {
		rx->counters[REL_RX_DUP_CHUNKS]++;
		return 0;
	}
	if (m->first_ns == 0) {
		m->first_ns = now ? now : 1;
		if (m->seq + 1 > rx->heard_hi)
			rx->heard_hi = m->seq + 1;
		m->due &= (uint8_t)~DUE_CTS;
		m->cts_next_ns = UINT64_MAX;
		rtt_sample(rx, m, now);
		m->snap_ns = now;
		if (is_ec(rx))
			m->fto_ns = now + fto_len(rx, m);
		if (rx->cfg.ack_every_ns)
			m->ack_next_ns = now + rx->cfg.ack_every_ns;
	}
	m->last_arrival_ns = now;
	if (chunk >= m->nchunks) {
		rx->counters[REL_RX_PARITY_CHUNKS]++;
		check_sub(rx, ctx, (chunk - m->nchunks) / rx->cfg.scheme.m);
		return 1;
	}
	rx->counters[REL_RX_CHUNKS]++;
	data_in(m, chunk);
	if (chunk + 1 > m->hi)
		m->hi = chunk + 1;
	m->ack_hint = chunk;
	m->new_since_ack++;
	if (is_ec(rx)) {
		uint32_t s = chunk / rx->cfg.scheme.k;

		m->sub_data[s]++;
		check_sub(rx, ctx, s);
	}
	if ((!is_ec(rx) || m->fallback) && rx->cfg.ack_every_chunks &&
	    m->new_since_ack >= rx->cfg.ack_every_chunks)
		m->due |= DUE_ACK;
	check_complete(rx, m, now);
	return 1;
}

int
rel_rx_decode_wanted(const struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub)
{
	const struct rxm *m;

	if (ctx >= rx->attr.max_inflight)
		return 0;
	m = &rx->msgs[ctx];
	return m->state == RXM_POSTED && m->seq == seq && sub < m->nsub &&
	       !sdr_bit_test(m->sub_ok, sub);
}

void
rel_rx_decoded(struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub, uint64_t now)
{
	struct rxm *m;
	uint32_t first, n;

	if (ctx >= rx->attr.max_inflight)
		return;
	m = &rx->msgs[ctx];
	if (m->state != RXM_POSTED || m->seq != seq || sub >= m->nsub)
		return;
	touch(rx, m);
	sdr_bit_clear(m->sub_pending, sub);
	if (sdr_bit_test(m->sub_ok, sub))
		return;
	first = sub * rx->cfg.scheme.k;
	n = sub_count(rx, m, sub);
	for (uint32_t c = first; c < first + n; c++)
		if (sdr_bit_test_and_set(m->have, c))
			data_in(m, c);
	m->sub_data[sub] = (uint16_t)n;
	sdr_bit_set(m->sub_ok, sub);
	m->decoded++;
	rx->counters[REL_RX_DECODES]++;
	check_complete(rx, m, now);
}

void
rel_rx_decode_dropped(struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub)
{
	struct rxm *m;

	if (ctx >= rx->attr.max_inflight)
		return;
	m = &rx->msgs[ctx];
	if (m->state == RXM_POSTED && m->seq == seq && sub < m->nsub) {
		touch(rx, m);
		sdr_bit_clear(m->sub_pending, sub);
		/* the EC-NACKs list it: after the FTO they stopped if every submessage not in
		 * was waiting for its decode; they start again at the next look */
		if (m->fallback && m->ecnack_next_ns == UINT64_MAX)
			m->ecnack_next_ns = 0;
	}
}

/* The final ACK of the receive @p slot remembers, owed; not when the ring is full (a late
 * packet asks again). */
static void
owe_reack(struct rel_rx *rx, uint32_t slot)
{
	struct slot_mem *sm = &rx->mem[slot];

	if (rx->nreack == rx->reack_cap)
		return;
	rx->reack[(rx->reack_head + rx->nreack) % rx->reack_cap] = (struct reack){
		.slot = slot, .seq = sm->seq, .gen = sm->gen, .failed = sm->failed };
	rx->nreack++;
	sm->queued = 1;
}

/* A late packet of the receive released from @p slot last, the slot posted again or not:
 * its final ACK again, at most once a quarter RTT. */
static void
reack_released(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now)
{
	struct slot_mem *sm = &rx->mem[slot];

	if (sm->valid && sm->gen == gen && !sm->queued && now >= sm->reack_ns + rx->trtt / 4)
		owe_reack(rx, slot);
}

void
rel_rx_on_late(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now)
{
	struct rxm *m = msg_of_slot(rx, slot);

	if (m != NULL && m->gen == gen) {
		touch(rx, m);
		if (m->state == RXM_DONE || m->state == RXM_FAILED) {
			if (now >= m->final_ns + rx->trtt / 4)
				m->due |= DUE_FINAL;
		} else if (m->state == RXM_POSTED && (!is_ec(rx) || m->fallback)) {
			m->due |= DUE_ACK;	/* a duplicate: our ACK may have been lost */
		}
		return;
	}
	if (slot >= rx->geom.nslots)
		return;
	reack_released(rx, slot, gen, now);
}

void
rel_rx_on_late_previous(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now)
{
	if (slot < rx->geom.nslots)
		reack_released(rx, slot, gen, now);
}

void
rel_rx_on_wrong_length(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now)
{
	struct rxm *m = msg_of_slot(rx, slot);

	if (m == NULL || m->gen != gen || m->state != RXM_POSTED)
		return;
	m->state = RXM_FAILED;
	m->due = DUE_FINAL;
	touch(rx, m);
	rx->counters[REL_RX_WRONG_LENGTH]++;
	push_done(rx, m, SDR_DONE_FAILED, now);
}

void
rel_rx_release(struct rel_rx *rx, uint32_t slot)
{
	struct rxm *m = msg_of_slot(rx, slot);

	if (m == NULL)
		return;
	rx->mem[slot] = (struct slot_mem){ .valid = 1, .gen = (uint8_t)m->gen,
					   .failed = m->state != RXM_DONE, .seq = (uint32_t)m->seq,
					   .reack_ns = m->final_ns };
	/* released before its final ACK went out: the ACK is still owed */
	if (m->due & DUE_FINAL)
		owe_reack(rx, slot);
	if (m->state == RXM_POSTED && m->first_ns == 0 && m->seq + 1 > rx->given_hi)
		rx->given_hi = m->seq + 1;
	m->state = RXM_FREE;
	m->due = 0;	/* (what it owed is the re-ACK's now) */
	heap_set(rx, (uint32_t)(m - rx->msgs), UINT64_MAX);
	rx->ctx_of_slot[slot] = 0;
	rx->free_ctx[rx->nfree++] = (uint32_t)(m - rx->msgs);
}

static uint64_t
nack_repeat(const struct rel_rx *rx)
{
	uint64_t margin = rx->cfg.nack_allowance_ns > rx->trtt / 8 ?
			  rx->cfg.nack_allowance_ns : rx->trtt / 8;

	return rx->trtt + margin;
}

/* Holes below this limit are sure losses: behind a chunk that arrived at least the
 * allowance ago, or anywhere once nothing arrived for the allowance + RTT/8 (the tail). */
static uint32_t
nack_limit(const struct rel_rx *rx, const struct rxm *m, uint64_t now)
{
	if (now >= m->last_arrival_ns + rx->cfg.nack_allowance_ns + rx->trtt / 8)
		return m->nchunks;
	return m->sure_hi;
}

/* First hole at or after the NACK cursor. */
static uint32_t
next_hole(const struct rxm *m, uint32_t limit)
{
	return sdr_bitmap_next_zero(m->have, m->cum > m->nack_cursor ? m->cum : m->nack_cursor,
				    limit);
}

uint64_t
rel_rx_on_skip(struct rel_rx *rx, uint64_t lo, uint64_t hi, uint64_t era, uint64_t now)
{
	/* the sender cannot have given up more than the window, nor beyond it, nor messages
	 * numbered more than the window ago, nor in another era (a SKIP replayed 2^32
	 * messages later) */
	if (hi < lo || hi - lo > SDR_SEQ_WINDOW || hi > rx->next_seq + SDR_SEQ_WINDOW ||
	    hi + SDR_SEQ_WINDOW < rx->next_seq || sdr_seq_era(hi, rx->epoch_seq) != era) {
		rx->counters[REL_RX_SKIP_IMPLAUSIBLE]++;
		return rx->next_seq;
	}
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		struct rxm *m = &rx->msgs[i];

		/* the sender stopped sending them: no final ACK owed either */
		if (m->state == RXM_POSTED && m->seq >= lo && m->seq < hi) {
			touch(rx, m);
			m->state = RXM_FAILED;
			m->due = 0;
			rx->counters[REL_RX_SKIPPED]++;
			push_done(rx, m, SDR_DONE_FAILED, now);
		}
	}
	if (hi > rx->next_seq)
		rx->next_seq = hi;
	if (hi > rx->heard_hi)
		rx->heard_hi = hi;
	rx->skip_answer = 1;
	rx->skip_lo = lo;
	rx->skip_hi = hi;
	return rx->next_seq;
}

int
rel_rx_slot_open(const struct rel_rx *rx, uint32_t slot)
{
	uint32_t c = slot < rx->geom.nslots ? rx->ctx_of_slot[slot] : 0;

	return c != 0 && rx->msgs[c - 1].state == RXM_POSTED;
}

void
rel_rx_cts_now(struct rel_rx *rx, uint64_t now)
{
	changed(rx);
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		struct rxm *m = &rx->msgs[i];

		if (m->state == RXM_POSTED && m->first_ns == 0) {
			m->due |= DUE_CTS;
			m->cts_next_ns = now + rx->rto;
			m->cts_repeats = 0;
		}
	}
}

/* Every receive of the epoch is still posted and none took a chunk (see rel_tx_reset()). */
static int
untouched(const struct rel_rx *rx)
{
	uint64_t posted = 0;

	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		const struct rxm *m = &rx->msgs[i];

		if (m->state == RXM_FREE)
			continue;
		if (m->state != RXM_POSTED || m->first_ns != 0 || m->seq < rx->epoch_seq)
			return 0;
		posted++;
	}
	return rx->next_seq - rx->epoch_seq == posted;
}

uint64_t
rel_rx_reset(struct rel_rx *rx, uint64_t now, int may_keep)
{
	int keep = may_keep && untouched(rx);

	changed(rx);
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		struct rxm *m = &rx->msgs[i];

		m->due = keep ? m->due & DUE_CTS : 0;
		if (!keep && m->state == RXM_POSTED) {
			m->state = RXM_FAILED;
			rx->counters[REL_RX_PEER_RESTART]++;
			push_done(rx, m, SDR_DONE_FAILED, now);
		}
	}
	memset(rx->mem, 0, rx->geom.nslots * sizeof(*rx->mem));
	rx->nreack = 0;
	rx->skip_answer = 0;
	if (!keep)	/* they stay, for the new peer; or numbering starts a new epoch */
		rx->next_seq = rx->epoch_seq = sdr_seq_epoch_base(rx->next_seq,
								   rx->attr.generations);
	rx->wd_lo = rx->wd_hi = rx->wd_answered = rx->next_seq;
	rx->heard_hi = rx->given_hi = rx->next_seq;
	return rx->next_seq;
}

uint64_t
rel_rx_epoch(const struct rel_rx *rx)
{
	return rx->epoch_seq;
}

static int
withdraw_pending(const struct rel_rx *rx)
{
	return rx->wd_hi > rx->wd_answered;
}

uint32_t
rel_rx_withdraw(struct rel_rx *rx, uint64_t now, uint32_t *slots)
{
	uint64_t lo = UINT64_MAX;
	uint32_t n = 0;

	changed(rx);
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		const struct rxm *m = &rx->msgs[i];

		if (m->state == RXM_FREE)
			continue;
		slots[n++] = m->slot;
		/* a complete one is the sender's final ACK's business; a failed one had its own */
		if (m->state != RXM_POSTED)
			continue;
		rx->counters[REL_RX_WITHDRAWN]++;
		if (m->seq < lo)
			lo = m->seq;
	}
	/* receives given up earlier whose messages the sender has not started */
	if (rx->given_hi > rx->heard_hi && rx->heard_hi < lo)
		lo = rx->next_seq - rx->heard_hi > SDR_SEQ_WINDOW ? rx->next_seq - SDR_SEQ_WINDOW :
		     rx->heard_hi;
	rx->given_hi = 0;
	if (lo == UINT64_MAX)
		return n;
	if (!withdraw_pending(rx) || lo < rx->wd_lo)
		rx->wd_lo = lo;
	rx->wd_hi = rx->next_seq;
	rx->wd_next_ns = now;
	rx->wd_gap_ns = rx->rto;
	return n;
}

int
rel_rx_resetting(const struct rel_rx *rx)
{
	return withdraw_pending(rx);
}

void
rel_rx_on_withdraw_answer(struct rel_rx *rx, uint32_t hi, uint64_t era)
{
	uint64_t h = sdr_seq_near(rx->next_seq, hi);

	/* an answer to a WITHDRAW we never sent, or of another era (replayed) */
	if (h > rx->wd_hi || sdr_seq_era(h, rx->epoch_seq) != era) {
		rx->counters[REL_RX_WITHDRAW_ANSWER_IMPLAUSIBLE]++;
		return;
	}
	rx->counters[REL_RX_WITHDRAWS_ANSWERED]++;
	if (h > rx->wd_answered)
		rx->wd_answered = h;
	if (h > rx->heard_hi)
		rx->heard_hi = h;
}

/* Fire the timers of one message. */
static void
run_timers(struct rel_rx *rx, struct rxm *m, uint64_t now)
{
	if (m->state != RXM_POSTED)
		return;
	if (m->deadline_ns <= now) {
		m->state = RXM_FAILED;
		m->due = DUE_FINAL;
		rx->counters[REL_RX_TIMEOUTS]++;
		push_done(rx, m, SDR_DONE_TIMEOUT, now);
		return;
	}
	if (m->cts_next_ns <= now) {
		/* after RTO, 2, 4, then every 8 RTOs: a sender with nothing to send is not sent
		 * one per RTO per receive for as long as it stays idle */
		unsigned int shift = m->cts_repeats + 1u < CTS_BACKOFF_SHIFT ?
				     m->cts_repeats + 1u : CTS_BACKOFF_SHIFT;

		m->due |= DUE_CTS;
		m->cts_next_ns = now + (rx->rto << shift);
		if (m->cts_repeats < UINT8_MAX)
			m->cts_repeats++;
	}
	if (m->ack_next_ns <= now) {
		if (m->new_since_ack && (!is_ec(rx) || m->fallback))
			m->due |= DUE_ACK;
		m->ack_next_ns = now + rx->cfg.ack_every_ns;
	}
	if (m->fto_ns <= now) {
		m->fto_ns = UINT64_MAX;
		m->fallback = 1;
		rx->counters[REL_RX_FTO_FIRED]++;
		/* the ACK bitmap tells the sender which chunks of the submessages are in */
		m->due |= DUE_EC_NACK | (rx->cfg.ec_fallback_whole ? 0 : DUE_ACK);
		m->ecnack_next_ns = now + rx->rto;
	} else if (m->ecnack_next_ns <= now) {
		m->due |= DUE_EC_NACK;
		m->ecnack_next_ns = now + rx->rto;
	}
	if (rx->cfg.scheme.kind == SDR_SCHEME_SR_NACK && m->first_ns) {
		uint64_t allow = rx->cfg.nack_allowance_ns;
		uint32_t limit;

		if (now >= m->snap_ns + allow) {
			if (m->snap_hi > m->sure_hi)
				m->sure_hi = m->snap_hi;
			m->snap_hi = m->hi;
			m->snap_ns = now;
		}
		limit = nack_limit(rx, m, now);
		/*
		 * A round NACKs every sure hole once, in windows of up to 1024 chunks, as holes
		 * become sure. A new round starts from the cumulative point once the last one
		 * had time for its retransmissions to arrive (an RTT plus margin).
		 */
		if (m->cum < limit && now >= m->nack_round_ns + nack_repeat(rx)) {
			m->nack_cursor = m->cum;
			m->nack_round_ns = now;
		}
		if (m->cum < limit && next_hole(m, limit) < limit)
			m->due |= DUE_NACK;
	}
}

/* 32 bits of a bitmap starting at bit @p i (bits past @p end read as 0), LSB = bit i. */
static uint32_t
bits32(const uint64_t *w, uint32_t i, uint32_t end)
{
	uint64_t v = w[i >> 6] >> (i & 63);

	if ((i & 63) > 32 && (i >> 6) + 1 < SDR_BITMAP_WORDS(end))
		v |= w[(i >> 6) + 1] << (64 - (i & 63));
	if (end - i < 32)
		v &= (1ull << (end - i)) - 1;
	return (uint32_t)v;
}

static uint32_t
reverse32(uint32_t x)
{
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
	x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
	return (x >> 16) | (x << 16);
}

/*
 * Fill an ACK (or NACK) window over [start, end) from the have bits: set bits = chunks in
 * (ACK) or missing (NACK). A word at a time; the wire puts chunk start + 0 in the MSB.
 */
static void
fill_window(struct sdr_ctrl *c, const struct rxm *m, uint32_t start, uint32_t end, int missing)
{
	uint32_t n = end > start ? end - start : 0;

	if (n > SDR_CTRL_MAX_BITS)
		n = SDR_CTRL_MAX_BITS;
	c->win_start = start;
	c->nwords = (uint8_t)((n + 31) / 32);
	sdr_zero(c->win, sizeof(c->win));
	for (uint32_t w = 0; w < c->nwords; w++) {
		uint32_t first = start + 32 * w, cnt = n - 32 * w < 32 ? n - 32 * w : 32;
		uint32_t v = bits32(m->have, first, first + cnt);

		if (missing)
			v = ~v & (cnt == 32 ? 0xFFFFFFFFu : (1u << cnt) - 1);
		c->win[w] = reverse32(v);
	}
}

static void
ctrl_head(struct sdr_ctrl *c, uint8_t type, const struct rxm *m)
{
	sdr_zero(c, sizeof(*c));
	c->type = type;
	c->msg_id = (uint16_t)m->slot;
	c->gen = (uint8_t)m->gen;
	c->value = (uint32_t)m->seq;	/* (the message itself, not a later one in its slot) */
}

/* Build the control message m owes, highest priority first. @return 1 if one was built. */
static int
build_ctrl(struct rel_rx *rx, struct rxm *m, uint64_t now, struct sdr_ctrl *c)
{
	if (m->due & DUE_FINAL) {
		ctrl_head(c, SDR_CTRL_ACK, m);
		c->flags = m->state == RXM_DONE ? SDR_CTRL_F_COMPLETE : SDR_CTRL_F_FAILED;
		c->cum = m->cum;
		m->due = 0;
		m->final_ns = now;
		rx->counters[REL_RX_ACKS]++;
		return 1;
	}
	if (m->due & DUE_CTS) {
		ctrl_head(c, SDR_CTRL_CTS, m);
		c->cum = (uint32_t)rx->next_seq;
		c->win_start = (uint32_t)m->seq;
		c->value = m->len;
		m->due &= (uint8_t)~DUE_CTS;
		if (m->cts_ns == 0)
			m->cts_ns = now ? now : 1;
		rx->counters[REL_RX_CTS]++;
		return 1;
	}
	if (m->due & DUE_EC_NACK) {
		uint32_t first = m->nsub, last = 0;

		m->due &= (uint8_t)~DUE_EC_NACK;
		for (uint32_t s = 0; s < m->nsub; s++) {
			if (!sdr_bit_test(m->sub_ok, s) && !sdr_bit_test(m->sub_pending, s)) {
				if (first == m->nsub)
					first = s;
				last = s + 1;
			}
		}
		if (first == m->nsub) {
			m->ecnack_next_ns = UINT64_MAX;	/* everything decodes */
			return 0;
		}
		ctrl_head(c, SDR_CTRL_EC_NACK, m);
		if (last - first > SDR_CTRL_MAX_BITS)
			last = first + SDR_CTRL_MAX_BITS;
		c->win_start = first;
		c->nwords = (uint8_t)((last - first + 31) / 32);
		for (uint32_t s = first; s < last; s++)
			if (!sdr_bit_test(m->sub_ok, s) && !sdr_bit_test(m->sub_pending, s))
				sdr_ctrl_win_set(c, s - first);
		rx->counters[REL_RX_EC_NACKS]++;
		return 1;
	}
	if (m->due & DUE_NACK) {
		uint32_t limit = nack_limit(rx, m, now), start = next_hole(m, limit), end;

		m->due &= (uint8_t)~DUE_NACK;
		if (start >= limit)
			return 0;
		end = limit - start > SDR_CTRL_MAX_BITS ? start + SDR_CTRL_MAX_BITS : limit;
		ctrl_head(c, SDR_CTRL_NACK, m);
		c->cum = m->cum;
		fill_window(c, m, start, end, 1);
		m->nack_cursor = end;
		if (m->nack_round_ns == 0)
			m->nack_round_ns = now;
		/* more sure holes past this window: another NACK right after */
		if (sdr_bitmap_next_zero(m->have, end, limit) < limit)
			m->due |= DUE_NACK;
		rx->counters[REL_RX_NACKS]++;
		return 1;
	}
	if (m->due & DUE_ACK) {
		uint32_t start = m->cum;

		m->due &= (uint8_t)~DUE_ACK;
		if (m->ack_hint >= start + SDR_CTRL_MAX_BITS)
			start = m->ack_hint + 1 - SDR_CTRL_MAX_BITS;
		ctrl_head(c, SDR_CTRL_ACK, m);
		c->cum = m->cum;
		fill_window(c, m, start, m->nchunks, 0);
		m->new_since_ack = 0;
		rx->counters[REL_RX_ACKS]++;
		return 1;
	}
	return 0;
}

/* Keep the earliest of @p t and @p c, ignoring times not after @p now: whatever was due by
 * now has already been handled by run_timers(). */
static uint64_t
later_min(uint64_t t, uint64_t c, uint64_t now)
{
	return c > now && c < t ? c : t;
}

/*
 * Keep the earliest of @p t and timer @p c that run_timers() fires whenever it is not after
 * the time it runs at: one at or before @p now (re-armed to now itself: a zero RTO,
 * ack_interval or nack_allowance) fires again at the next look, @p now + 1.
 */
static uint64_t
armed_min(uint64_t t, uint64_t c, uint64_t now)
{
	c = c > now ? c : now + 1;
	return c < t ? c : t;
}

/*
 * The earliest of @p t and the time after @p now that run_timers() has something to do for
 * receive @p m, its timers just run and nothing due.
 */
static uint64_t
msg_next(const struct rel_rx *rx, const struct rxm *m, uint64_t now, uint64_t t)
{
	if (m->state != RXM_POSTED)
		return t;
	t = armed_min(t, m->deadline_ns, now);
	t = armed_min(t, m->cts_next_ns, now);
	t = armed_min(t, m->ack_next_ns, now);	/* (re-armed even with nothing new) */
	t = armed_min(t, m->fto_ns, now);
	t = armed_min(t, m->ecnack_next_ns, now);
	if (rx->cfg.scheme.kind == SDR_SCHEME_SR_NACK && m->first_ns && m->cum < m->nchunks) {
		uint64_t allow = rx->cfg.nack_allowance_ns;

		/* (the tail and a round, once passed, change nothing until a chunk comes or the
		 * snapshot moves the limit: later_min()) */
		if (m->hi > m->sure_hi)
			t = armed_min(t, m->snap_ns + allow, now);
		t = later_min(t, m->last_arrival_ns + allow + rx->trtt / 8, now);
		if (m->nack_cursor > m->cum)
			t = later_min(t, m->nack_round_ns + nack_repeat(rx), now);
	}
	return t;
}

/* The look at receive @p ctx is over: nothing due; when to look again. */
static void
look_done(struct rel_rx *rx, uint32_t ctx, uint64_t now)
{
	rx->open = 0;
	heap_set(rx, ctx, msg_next(rx, &rx->msgs[ctx], now, UINT64_MAX));
}

/*
 * Receive @p ctx under look: its timers run once per look and time (a caller that stops
 * while it still owes, its burst full, may come back later). @return 1 if it owes something.
 */
static int
look_at(struct rel_rx *rx, uint32_t ctx, uint64_t now)
{
	struct rxm *m = &rx->msgs[ctx];

	if (rx->open != ctx + 1 || rx->open_ns != now) {
		run_timers(rx, m, now);
		rx->open = ctx + 1;
		rx->open_ns = now;
	}
	return m->due != 0;
}

/*
 * The next receive that owes a control message at @p now: the touched ones first, then
 * those whose timers are due. It stays under look until it owes nothing. @return NULL if
 * none does.
 */
static struct rxm *
next_owing(struct rel_rx *rx, uint64_t now)
{
	while (rx->ntouched) {
		uint32_t ctx = rx->touched[rx->thead];

		if (rx->msgs[ctx].state != RXM_FREE && look_at(rx, ctx, now))
			return &rx->msgs[ctx];
		look_done(rx, ctx, now);
		rx->on_list[ctx] = 0;
		rx->thead = rx->thead + 1 == rx->attr.max_inflight ? 0 : rx->thead + 1;
		rx->ntouched--;
	}
	while (rx->nheap && rx->next_of[rx->heap[0]] <= now) {
		uint32_t ctx = rx->heap[0];

		if (rx->msgs[ctx].state != RXM_FREE && look_at(rx, ctx, now))
			return &rx->msgs[ctx];
		look_done(rx, ctx, now);	/* (after now: it goes down the heap) */
	}
	return NULL;
}

int
rel_rx_next_ctrl(struct rel_rx *rx, uint64_t now, struct sdr_ctrl *c)
{
	struct rxm *m;

	if (rx->skip_answer) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_SKIP;
		c->flags = SDR_CTRL_F_ANSWER;
		c->cum = (uint32_t)rx->skip_hi;
		c->win_start = (uint32_t)rx->skip_lo;
		c->value = sdr_seq_era(rx->skip_hi, rx->epoch_seq);
		rx->skip_answer = 0;
		rx->counters[REL_RX_SKIP_ANSWERS]++;
		return 1;
	}
	if (withdraw_pending(rx) && rx->wd_next_ns <= now) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_WITHDRAW;
		c->cum = (uint32_t)rx->wd_hi;
		c->win_start = (uint32_t)rx->wd_lo;
		c->value = sdr_seq_era(rx->wd_hi, rx->epoch_seq);
		/* a sender that is gone hears less and less of it */
		rx->wd_next_ns = now + rx->wd_gap_ns;
		if (rx->wd_gap_ns < 64 * rx->rto)
			rx->wd_gap_ns *= 2;
		rx->counters[REL_RX_WITHDRAWS]++;
		return 1;
	}
	if (rx->nreack) {
		struct reack r = rx->reack[rx->reack_head];
		struct slot_mem *sm = &rx->mem[r.slot];

		rx->reack_head = (rx->reack_head + 1) % rx->reack_cap;
		rx->nreack--;
		/* the slot remembers this receive still (not a later one released since) */
		if (sm->valid && sm->seq == r.seq && sm->gen == r.gen) {
			sm->queued = 0;
			sm->reack_ns = now;
		}
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_ACK;
		c->msg_id = (uint16_t)r.slot;
		c->gen = r.gen;
		c->value = r.seq;
		c->flags = r.failed ? SDR_CTRL_F_FAILED : SDR_CTRL_F_COMPLETE;
		rx->counters[REL_RX_REACKS]++;
		return 1;
	}
	while ((m = next_owing(rx, now)) != NULL) {
		while (m->due) {
			if (build_ctrl(rx, m, now, c))
				return 1;
		}
	}
	return 0;
}

int
rel_rx_next_decode(struct rel_rx *rx, struct rel_rx_decode *d)
{
	while (rx->ndec) {
		struct dec_ent e = rx->dec[rx->dec_head];
		struct rxm *m = &rx->msgs[e.ctx];

		rx->dec_head = (rx->dec_head + 1) % rx->dec_cap;
		rx->ndec--;
		if (m->state != RXM_POSTED || m->seq != e.seq || sdr_bit_test(m->sub_ok, e.sub))
			continue;
		d->ctx = e.ctx;
		d->seq = e.seq;
		d->slot = m->slot;
		d->sub = e.sub;
		d->first = e.sub * rx->cfg.scheme.k;
		d->count = sub_count(rx, m, e.sub);
		d->cookie = m->cookie;
		return 1;
	}
	return 0;
}

uint64_t
rel_rx_next_time(struct rel_rx *rx, uint64_t now)
{
	uint64_t t = UINT64_MAX;

	if (rx->nreack || rx->ndec || rx->skip_answer)
		return now;
	if (withdraw_pending(rx))
		t = rx->wd_next_ns > now ? rx->wd_next_ns : now;
	if (next_owing(rx, now) != NULL)
		return now;	/* (left under look for rel_rx_next_ctrl()) */
	if (rx->nheap && rx->next_of[rx->heap[0]] < t)
		t = rx->next_of[rx->heap[0]];
	return t;
}

int
rel_rx_poll_done(struct rel_rx *rx, struct sdr_rel_done *d)
{
	return sdr_rel_done_take(&rx->done, d);
}

void
rel_rx_cts_given(struct rel_rx *rx)
{
	changed(rx);
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++)
		if (rx->msgs[i].state == RXM_POSTED)
			rx->msgs[i].cts_ns = UINT64_MAX;
}

uint64_t
rel_rx_rto(const struct rel_rx *rx, uint64_t *rtt)
{
	if (rtt != NULL)
		*rtt = rx->trtt;
	return rx->rto;
}

const struct path_est *
rel_rx_path(const struct rel_rx *rx)
{
	return &rx->path;
}

const uint64_t *
rel_rx_counters(const struct rel_rx *rx)
{
	return rx->counters;
}
