/* SPDX-License-Identifier: BSD-3-Clause */
/* Sender state machine: SR, SR-NACK, EC with SR fallback; CTS credits; pacing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pacer.h"
#include "rel_tx.h"
#include "sdr_bitmap.h"
#include "sdr_zero.h"

static const struct sdr_counter_def counter_defs[REL_TX_NCOUNTERS] = {
	REL_TX_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table rel_tx_counter_table = {
	.group = "reliability_tx",
	.doc = "the send side of the reliability layer (SR, SR-NACK, EC with fallback): messages, chunks, timers, control messages received",
	.n = REL_TX_NCOUNTERS,
	.defs = counter_defs,
};

const char *
rel_tx_counter_name(enum rel_tx_counter c)
{
	return sdr_counter_name(&rel_tx_counter_table, (unsigned int)c);
}

enum txm_state {
	TXM_FREE,
	TXM_WAIT_CTS,
	TXM_ACTIVE,
};

/* A message in flight. Arrays are sized for the largest message at create time. */
struct txm {
	uint8_t state;
	uint8_t prio;			/* 0 .. REL_TX_PRIO_MAX: higher goes out first */
	uint64_t seq;
	uint32_t slot;
	uint32_t gen;
	uint64_t len;
	uint64_t cookie;
	uint32_t nchunks;
	uint32_t nsub;			/* EC data submessages */
	uint32_t last_bytes;		/* bytes of the last data chunk */
	uint32_t nacked;		/* data chunks acknowledged */
	uint32_t cum;			/* every chunk below is acknowledged */
	/* initial pass */
	uint32_t data_next;		/* next data chunk to send */
	uint32_t ready_upto;		/* chunks below are ready to send (streams grow it) */
	uint32_t enc_next;		/* next submessage to request encoding of */
	uint32_t par_sub;		/* submessage whose parity goes out next */
	uint32_t par_j;
	uint64_t inject_done_ns;	/* 0 until every chunk went out once */
	uint64_t silence_ns;		/* EC: probe if nothing heard by then */
	uint64_t silence_gap_ns;	/* ... this long after the last word heard (0: not
					 * injected yet); doubles with each probe */
	uint64_t submit_ns;
	uint64_t first_ns;
	uint64_t last_tx_ns;		/* the latest send of any of its chunks */
	uint64_t delivered0;		/* the path's delivered bytes at its first send */
	uint64_t acked_bytes;		/* of its data chunks, acknowledged */
	uint64_t deadline_ns;		/* global timeout */
	uint32_t retransmitted;
	uint32_t fallback_subs;
	uint64_t *acked;		/* per data chunk */
	uint64_t *queued;		/* per data chunk: waiting in the retransmit queue */
	uint64_t *sr;			/* per data chunk: under SR timers (EC after fallback) */
	uint64_t *fell_back;		/* per submessage */
	uint64_t *par_ready;		/* per submessage */
	uint64_t *last_sent;		/* per data chunk, ns; 0: never */
	uint64_t *ready;		/* per data chunk, streams: given by the application */
};

/* A retransmission timer or queue entry; stale entries are skipped when popped. */
struct tx_ent {
	uint32_t ctx;
	uint32_t chunk;
	uint64_t seq;
	uint64_t sent_ns;
};

/* The last CTS seen for a slot: the receive it announces and that receive's length. */
struct cts_seen {
	uint64_t len;
	uint32_t seq;			/* low 32 bits of the receive's sequence number */
	uint32_t valid;
};

struct ent_ring {
	struct tx_ent *e;
	uint32_t cap;
	uint32_t head;
	uint32_t n;
};

/*
 * Messages [lo, hi) given up, every one of them: one SKIP names them. Messages given up at
 * different times need not touch (a message failed for its receive's length while those
 * around it go on): each run of them is a range of its own, or one SKIP would fail good
 * messages between them at the receiver.
 */
struct skip_range {
	uint64_t lo, hi;
	uint64_t next_ns;		/* when its SKIP goes out (again) */
	uint64_t gap_ns;		/* then the next one: RTO, doubling up to 64 RTO */
	uint8_t need_answer;		/* some had receives: only an answer ends it */
};

#define SKIP_RANGES 8	/* ranges owed at once; more merge (rel_tx.h, skip_ranges_merged) */

struct rel_tx {
	struct sdr_rel_cfg cfg;
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	uint64_t rto;
	uint64_t trtt;			/* the RTT the timers derive from (rel_tx_rto()) */
	uint64_t backoff_ns;		/* no further doubling of the RTO before then */
	uint32_t max_chunks;
	uint32_t max_sub;
	uint64_t next_seq;
	uint64_t credit;		/* receives the peer has posted */
	uint64_t epoch_seq;		/* the first sequence number of the current epoch */
	struct skip_range skips[SKIP_RANGES];	/* messages given up that the receiver must
						 * learn of: disjoint, in sequence order */
	uint32_t nskips;
	uint64_t skip_sent_hi;		/* the highest end of a SKIP sent (an answer's bound) */
	uint8_t wd_answer;		/* a WITHDRAW to answer: [wd_lo, wd_hi) */
	uint64_t wd_lo, wd_hi;
	uint32_t inflight;
	struct txm *msgs;
	uint32_t *order;		/* the in-flight contexts in sequence order: order[0, inflight) */
	uint32_t sent_out;		/* order[0, sent_out) have no new unit left (sent_all()):
					 * pick() starts after them */
	uint64_t wake_ns;		/* no in-flight message's deadline or silence timer is
					 * before this: run_timers() looks at them from then on */
	uint32_t *free_ctx;
	uint32_t nfree;
	uint32_t *slot_ctx;		/* per slot: the ctx + 1 of the message in it (0: free) */
	struct cts_seen *cts;		/* per slot: a CTS may come before its message is
					 * submitted; its length is checked then */
	struct ent_ring timers;		/* in send order: expiry order, RTO is constant */
	struct ent_ring rexmit[REL_TX_PRIO_MAX + 1];	/* chunks due for retransmission, by
							 * their message's priority */
	struct sdr_rel_done_fifo done;
	struct pacer pacer;
	struct path_est path;		/* RTT and delivery rate from the acknowledgements */
	uint32_t nprio[REL_TX_PRIO_MAX + 1];	/* messages in flight per priority */
	uint64_t counters[REL_TX_NCOUNTERS];
};

static int
ring_push(struct ent_ring *r, const struct tx_ent *e)
{
	if (r->n == r->cap)
		return -1;
	r->e[(r->head + r->n) % r->cap] = *e;
	r->n++;
	return 0;
}

static struct tx_ent *
ring_front(struct ent_ring *r)
{
	return r->n ? &r->e[r->head] : NULL;
}

static void
ring_pop(struct ent_ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

static void
free_msg_arrays(struct txm *m)
{
	free(m->acked);
	free(m->queued);
	free(m->sr);
	free(m->fell_back);
	free(m->par_ready);
	free(m->last_sent);
	free(m->ready);
}

void
rel_tx_destroy(struct rel_tx *tx)
{
	if (tx == NULL)
		return;
	if (tx->msgs != NULL)
		for (uint32_t i = 0; i < tx->attr.max_inflight; i++)
			free_msg_arrays(&tx->msgs[i]);
	free(tx->msgs);
	free(tx->order);
	free(tx->free_ctx);
	free(tx->slot_ctx);
	free(tx->cts);
	free(tx->timers.e);
	for (int l = 0; l <= REL_TX_PRIO_MAX; l++)
		free(tx->rexmit[l].e);
	free(tx->done.d);
	free(tx);
}

/*
 * Entries of the timer ring (and of each retransmission level): every chunk in flight
 * holds one, and one that was resent may hold stale ones until the front reaches them;
 * 4 per chunk of every message in flight (the margin the simulator's long-message tests
 * give one message). A fixed 65536 fills with large messages on small chunks (auto's
 * smaller chunks quadruple the count), and a chunk denied its timer is not resent by it
 * (timer_ring_full).
 */
static uint32_t
timer_slots(const struct sdr_rel_cfg *cfg, uint32_t max_chunks, uint32_t max_inflight)
{
	uint64_t n = 4ull * max_chunks * max_inflight;

	if (cfg->timer_slots)
		return cfg->timer_slots;
	return n < 65536 ? 65536 : n > REL_TX_TIMER_SLOTS_MAX ? REL_TX_TIMER_SLOTS_MAX : (uint32_t)n;
}

struct rel_tx *
rel_tx_create(const struct sdr_rel_cfg *cfg, const struct sdr_conn_attr *attr)
{
	struct rel_tx *tx = calloc(1, sizeof(*tx));
	uint32_t n;

	if (tx == NULL)
		return NULL;
	tx->cfg = *cfg;
	tx->attr = *attr;
	if (sdr_conn_geometry(attr, &tx->geom) != 0)
		goto fail;
	if (sdr_scheme_is_ec(&cfg->scheme) && !cfg->scheme_may_change &&
	    (cfg->scheme.k == 0 || cfg->scheme.m == 0 || cfg->scheme.k != attr->ec_k || cfg->scheme.m != attr->ec_m))
		goto fail;
	if (cfg->scheme_may_change && !sdr_rel_code_fits(&tx->geom, &cfg->scheme))
		goto fail;
	/* a chunk other than the configured one only where the scheme may change */
	if (cfg->scheme.chunk_shift && (!cfg->scheme_may_change ||
					cfg->scheme.chunk_shift > tx->geom.max_chunk_shift))
		goto fail;
	tx->rto = sdr_rel_rto(cfg);
	tx->trtt = cfg->rtt_ns;
	tx->max_chunks = tx->geom.max_units;
	/* a scheme that may change to any k: a submessage per chunk at most */
	tx->max_sub = cfg->scheme_may_change ? tx->max_chunks :
		      cfg->scheme.k ? (tx->max_chunks + cfg->scheme.k - 1) / cfg->scheme.k : 1;
	n = attr->max_inflight;
	tx->msgs = calloc(n, sizeof(*tx->msgs));
	tx->order = calloc(n, sizeof(uint32_t));
	tx->free_ctx = calloc(n, sizeof(uint32_t));
	tx->slot_ctx = calloc(tx->geom.nslots, sizeof(uint32_t));
	tx->cts = calloc(tx->geom.nslots, sizeof(*tx->cts));
	tx->done.d = calloc(n, sizeof(*tx->done.d));
	tx->done.cap = n;
	tx->timers.cap = timer_slots(cfg, tx->max_chunks, n);
	tx->timers.e = calloc(tx->timers.cap, sizeof(struct tx_ent));
	if (!tx->msgs || !tx->order || !tx->free_ctx || !tx->slot_ctx || !tx->cts ||
	    !tx->done.d || !tx->timers.e)
		goto fail;
	/* a chunk is queued once at a time (m->queued), but the entries of messages that ended
	 * stay until the queue's front reaches them: each level as roomy as the timers (the
	 * pages of a level that is never used are never touched) */
	for (int l = 0; l <= REL_TX_PRIO_MAX; l++) {
		tx->rexmit[l].cap = tx->timers.cap;
		tx->rexmit[l].e = calloc(tx->rexmit[l].cap, sizeof(struct tx_ent));
		if (tx->rexmit[l].e == NULL)
			goto fail;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct txm *m = &tx->msgs[i];
		/* (nsub + 1 bits are cleared at submit: room for them at nsub = max_sub) */
		uint32_t cw = SDR_BITMAP_WORDS(tx->max_chunks), sw = SDR_BITMAP_WORDS(tx->max_sub + 1);

		m->acked = calloc(cw, sizeof(uint64_t));
		m->queued = calloc(cw, sizeof(uint64_t));
		m->sr = calloc(cw, sizeof(uint64_t));
		m->fell_back = calloc(sw, sizeof(uint64_t));
		m->par_ready = calloc(sw, sizeof(uint64_t));
		m->last_sent = calloc(tx->max_chunks, sizeof(uint64_t));
		m->ready = calloc(cw, sizeof(uint64_t));
		if (!m->acked || !m->queued || !m->sr || !m->fell_back || !m->par_ready ||
		    !m->last_sent || !m->ready)
			goto fail;
		tx->free_ctx[i] = n - 1 - i;
	}
	tx->nfree = n;
	tx->wake_ns = UINT64_MAX;
	pacer_init(&tx->pacer, cfg->rate_bps, cfg->bucket_bytes, 0);
	path_est_init(&tx->path, 0);
	return tx;
fail:
	rel_tx_destroy(tx);
	return NULL;
}

static int
is_ec(const struct rel_tx *tx)
{
	return sdr_scheme_is_ec(&tx->cfg.scheme);
}

/*
 * Message @p m has no new unit left: every data chunk went out once and, under EC, every
 * encode was asked for and every parity chunk went out. It stays so (only its
 * retransmissions are left, from the rexmit queues): pick_new() has nothing for it.
 */
static int
sent_all(const struct rel_tx *tx, const struct txm *m)
{
	return m->data_next == m->nchunks &&
	       (!is_ec(tx) || (m->enc_next == m->nsub && m->par_sub == m->nsub));
}

/* A message's deadline or silence timer was set to @p t: run_timers() looks by then. */
static void
wake_by(struct rel_tx *tx, uint64_t t)
{
	if (t < tx->wake_ns)
		tx->wake_ns = t;
}

/* Bytes of a full chunk under the current scheme (it changes only with nothing in flight,
 * so every message in flight has the same). */
static uint32_t
chunk_size(const struct rel_tx *tx)
{
	return tx->attr.chunk_size >> tx->cfg.scheme.chunk_shift;
}

static void finish(struct rel_tx *tx, uint32_t ctx, enum sdr_done_status st, uint64_t now);
static void skip_add(struct rel_tx *tx, uint64_t lo, uint64_t hi, int need_answer,
		     uint64_t now);
static int skip_pending(const struct rel_tx *tx);

static int
submit(struct rel_tx *tx, uint64_t len, uint64_t cookie, uint64_t now, int stream)
{
	uint32_t slot = sdr_conn_seq_slot(&tx->attr, tx->next_seq), ctx, cw;
	struct txm *m;

	if (len > tx->attr.max_msg_size)
		return -EMSGSIZE;
	if (tx->nfree == 0 || tx->slot_ctx[slot] != 0)
		return -EAGAIN;
	ctx = tx->free_ctx[--tx->nfree];
	m = &tx->msgs[ctx];
	m->state = TXM_WAIT_CTS;
	m->seq = tx->next_seq++;
	m->slot = slot;
	m->gen = sdr_conn_seq_gen(&tx->attr, m->seq);
	m->len = len;
	m->cookie = cookie;
	m->nchunks = sdr_conn_msg_chunks_at(&tx->geom, len, tx->cfg.scheme.chunk_shift);
	m->nsub = is_ec(tx) ? (m->nchunks + tx->cfg.scheme.k - 1) / tx->cfg.scheme.k : 0;
	m->last_bytes = (uint32_t)(len - (uint64_t)(m->nchunks - 1) * chunk_size(tx));
	m->nacked = 0;
	m->cum = 0;
	m->data_next = m->enc_next = m->par_sub = m->par_j = 0;
	m->ready_upto = stream ? 0 : m->nchunks;
	m->inject_done_ns = 0;
	m->silence_ns = UINT64_MAX;
	m->silence_gap_ns = 0;
	m->submit_ns = now;
	m->first_ns = m->last_tx_ns = m->delivered0 = m->acked_bytes = 0;
	m->deadline_ns = tx->cfg.global_timeout_ns ? now + tx->cfg.global_timeout_ns : UINT64_MAX;
	wake_by(tx, m->deadline_ns);
	m->retransmitted = 0;
	m->fallback_subs = 0;
	cw = SDR_BITMAP_WORDS(m->nchunks);
	memset(m->acked, 0, cw * sizeof(uint64_t));
	memset(m->queued, 0, cw * sizeof(uint64_t));
	memset(m->sr, is_ec(tx) ? 0 : 0xFF, cw * sizeof(uint64_t));
	memset(m->fell_back, 0, SDR_BITMAP_WORDS(m->nsub + 1) * sizeof(uint64_t));
	memset(m->par_ready, 0, SDR_BITMAP_WORDS(m->nsub + 1) * sizeof(uint64_t));
	memset(m->last_sent, 0, m->nchunks * sizeof(uint64_t));
	if (stream)
		memset(m->ready, 0, cw * sizeof(uint64_t));
	m->prio = 0;
	tx->nprio[0]++;
	tx->slot_ctx[slot] = ctx + 1;
	tx->order[tx->inflight] = ctx;
	tx->inflight++;
	tx->counters[REL_TX_SUBMITTED]++;
	/*
	 * Its receive was announced already, with another length: it fails, as on_cts() fails
	 * it when the CTS comes later, and the receiver is told with a SKIP that names it
	 * alone, so that receive fails too and the next message lands in the next one. (Its
	 * completion waits in the FIFO: the endpoint collects completions before it submits
	 * again, so the context is not reused before.)
	 */
	if (tx->cts[slot].valid && tx->cts[slot].seq == (uint32_t)m->seq &&
	    tx->cts[slot].len != len) {
		uint64_t seq = m->seq;

		tx->counters[REL_TX_CTS_LEN_MISMATCH]++;
		finish(tx, ctx, SDR_DONE_FAILED, now);
		skip_add(tx, seq, seq + 1, 1, now);
	}
	return (int)ctx;
}

int
rel_tx_submit(struct rel_tx *tx, uint64_t len, uint64_t cookie, uint64_t now)
{
	return submit(tx, len, cookie, now, 0);
}

int
rel_tx_submit_stream(struct rel_tx *tx, uint64_t len, uint64_t cookie, uint64_t now)
{
	return submit(tx, len, cookie, now, 1);
}

int
rel_tx_set_prio(struct rel_tx *tx, uint32_t ctx, unsigned int prio)
{
	struct txm *m;

	if (prio > REL_TX_PRIO_MAX || ctx >= tx->attr.max_inflight ||
	    tx->msgs[ctx].state == TXM_FREE)
		return -EINVAL;
	m = &tx->msgs[ctx];
	/* its retransmissions queue by its priority: it cannot change once chunks went out */
	if (m->state != TXM_WAIT_CTS || m->data_next != 0)
		return -EBUSY;
	tx->nprio[m->prio]--;
	m->prio = (uint8_t)prio;
	tx->nprio[prio]++;
	return 0;
}

static void queue_rexmit(struct rel_tx *tx, uint32_t ctx, uint32_t chunk);

static struct txm *
stream_msg(struct rel_tx *tx, uint32_t ctx, uint64_t seq)
{
	struct txm *m = ctx < tx->attr.max_inflight ? &tx->msgs[ctx] : NULL;

	return m && m->state != TXM_FREE && m->seq == seq ? m : NULL;
}

static void
grow_ready(struct txm *m)
{
	while (m->ready_upto < m->nchunks && sdr_bit_test(m->ready, m->ready_upto))
		m->ready_upto++;
}

int
rel_tx_stream_add(struct rel_tx *tx, uint32_t ctx, uint64_t seq, uint32_t first, uint32_t n)
{
	struct txm *m = stream_msg(tx, ctx, seq);
	uint32_t done = 0;

	if (m == NULL)
		return -ENOENT;
	if (first >= m->nchunks || n == 0 || n > m->nchunks - first)
		return -ERANGE;
	for (uint32_t c = first; c < first + n; c++) {
		if (c < m->data_next) {
			/* out once already: the application sends it again */
			if (m->state == TXM_ACTIVE && !sdr_bit_test(m->acked, c) &&
			    !sdr_bit_test(m->queued, c)) {
				queue_rexmit(tx, ctx, c);
				tx->counters[REL_TX_STREAM_RESENDS]++;
				done++;
			}
		} else if (sdr_bit_test_and_set(m->ready, c)) {
			done++;
		}
	}
	grow_ready(m);
	return (int)done;
}

int
rel_tx_stream_end(struct rel_tx *tx, uint32_t ctx, uint64_t seq)
{
	struct txm *m = stream_msg(tx, ctx, seq);

	if (m == NULL)
		return -ENOENT;
	m->ready_upto = m->nchunks;
	return 0;
}

/* Record a completion and free the message's context. */
static void
finish(struct rel_tx *tx, uint32_t ctx, enum sdr_done_status st, uint64_t now)
{
	struct txm *m = &tx->msgs[ctx];
	struct sdr_rel_done *d;

	d = sdr_rel_done_add(&tx->done);
	if (d != NULL) {
		*d = (struct sdr_rel_done){
			.cookie = m->cookie, .seq = m->seq, .slot = m->slot, .ctx = ctx, .status = st,
			.start_ns = m->submit_ns, .first_ns = m->first_ns, .end_ns = now,
			.retransmitted = m->retransmitted, .fallback = m->fallback_subs,
		};
	}
	tx->counters[st == SDR_DONE_OK ? REL_TX_COMPLETED : st == SDR_DONE_TIMEOUT ?
		     REL_TX_TIMEOUTS : st == SDR_DONE_CANCELLED ? REL_TX_CANCELLED : REL_TX_FAILED]++;
	m->state = TXM_FREE;
	tx->nprio[m->prio]--;
	tx->slot_ctx[m->slot] = 0;
	tx->free_ctx[tx->nfree++] = ctx;
	/* keep order[] compact: remove ctx, preserving sequence order (messages mostly end in
	 * order: ctx is near the front) */
	for (uint32_t i = 0; i < tx->inflight; i++) {
		if (tx->order[i] != ctx)
			continue;
		memmove(&tx->order[i], &tx->order[i + 1], (tx->inflight - 1 - i) * sizeof(uint32_t));
		if (i < tx->sent_out)
			tx->sent_out--;
		break;
	}
	tx->inflight--;
}

/* The message a control message is about: the in-flight one with that slot, gen and
 * sequence number (low 32 bits: slot and gen come round again, a replayed ACK with them). */
static int
find_msg(const struct rel_tx *tx, uint32_t slot, uint32_t gen, uint32_t seq)
{
	uint32_t c = slot < tx->geom.nslots ? tx->slot_ctx[slot] : 0;
	const struct txm *m;

	if (c == 0)
		return -1;
	m = &tx->msgs[c - 1];
	return (m->gen & 0xFF) == gen && (uint32_t)m->seq == seq ? (int)c - 1 : -1;
}

static void
queue_rexmit(struct rel_tx *tx, uint32_t ctx, uint32_t chunk)
{
	struct txm *m = &tx->msgs[ctx];
	struct tx_ent e = { .ctx = ctx, .chunk = chunk, .seq = m->seq };

	if (sdr_bit_test(m->acked, chunk) || sdr_bit_test(m->queued, chunk))
		return;
	if (ring_push(&tx->rexmit[m->prio], &e) == 0)
		sdr_bit_set(m->queued, chunk);
	else
		tx->counters[REL_TX_TIMER_FULL]++;
}

static uint32_t chunk_bytes(const struct rel_tx *tx, const struct txm *m, uint32_t c);

/* Acknowledge data chunk @p c; @return when it was sent if this is news, else 0. */
static uint64_t
mark_acked(struct rel_tx *tx, struct txm *m, uint32_t c)
{
	uint32_t b;

	if (c >= m->nchunks || !sdr_bit_test_and_set(m->acked, c))
		return 0;
	m->nacked++;
	b = chunk_bytes(tx, m, c);
	m->acked_bytes += b;
	tx->path.delivered += b;
	return m->last_sent[c];
}

/* The timers from the measured RTT (rel_tx_rto()). */
static void
follow_rtt(struct rel_tx *tx, uint64_t now)
{
	uint64_t rtt = path_est_min_rtt(&tx->path, now), floor;

	if (rtt == 0)
		return;
	tx->trtt = rtt;
	tx->rto = rtt + (uint64_t)(tx->cfg.alpha * (double)rtt);
	floor = (uint64_t)(tx->path.srtt_ns + 4 * tx->path.rttvar_ns);
	if (tx->rto < floor)
		tx->rto = floor;
}

/*
 * Path samples from an acknowledgement at @p now: the RTT from the newest chunk it is the
 * first to cover (@p newest, 0: none), only while the message was never resent (Karn); at
 * completion also the rest of the message as delivered and a delivery-rate sample over the
 * message's life.
 */
static void
path_sample(struct rel_tx *tx, struct txm *m, uint64_t newest, int complete, uint64_t now)
{
	if (complete) {
		tx->path.delivered += m->len - m->acked_bytes;
		m->acked_bytes = m->len;
		newest = m->last_tx_ns;
		if (now > m->first_ns)
			path_est_rate(&tx->path, tx->path.delivered - m->delivered0, now - m->first_ns, now);
	}
	if (newest && m->retransmitted == 0 && now > newest) {
		path_est_rtt(&tx->path, now - newest, now);
		if (tx->cfg.rto_measured && tx->path.rtt_samples >= SDR_REL_RTO_MIN_SAMPLES)
			follow_rtt(tx, now);
	}
}

/* Put submessage s (or, for s == UINT32_MAX, all of them) under SR and resend its holes. */
static void
fall_back(struct rel_tx *tx, uint32_t ctx, uint32_t s)
{
	struct txm *m = &tx->msgs[ctx];
	uint32_t k = tx->cfg.scheme.k, first = s * k, last = first + k;

	if (s >= m->nsub || !sdr_bit_test_and_set(m->fell_back, s))
		return;
	m->fallback_subs++;
	tx->counters[REL_TX_FALLBACK_SUBS]++;
	if (last > m->nchunks)
		last = m->nchunks;
	for (uint32_t c = first; c < last; c++) {
		sdr_bit_set(m->sr, c);
		/* chunks not yet sent in the initial pass go out there, then get timers */
		if (c < m->data_next)
			queue_rexmit(tx, ctx, c);
	}
}

/* How long an EC message may hear nothing once injected: the receiver's fallback (its
 * slack after the data's round trip) and an RTO for its EC-NACK. */
static uint64_t
silence_gap(const struct rel_tx *tx)
{
	return tx->trtt + (uint64_t)(tx->cfg.beta * (double)tx->trtt) + tx->rto;
}

/*
 * EC heard nothing about a message for a while after injecting it: the final ACK was lost
 * (a receiver that is done sends nothing more: one whose EC-NACK was lost and that decoded
 * later has nothing to repeat), or the receiver got nothing and never started its fallback
 * timer, or its EC-NACKs keep getting lost. Resending the first data chunk not yet
 * acknowledged under SR answers all three: a receiver that is done re-acknowledges, one that
 * got nothing starts its FTO and sends an EC-NACK, and the chunk itself may be the missing
 * one. The chunk's SR timer repeats it until it is acknowledged; the silence timer probes
 * again after twice the gap if that is not the end. (Every chunk acknowledged and no final
 * ACK does not happen: the ACK that covers the last chunk in is the final one.)
 */
static void
probe(struct rel_tx *tx, uint32_t ctx)
{
	struct txm *m = &tx->msgs[ctx];
	uint32_t c = m->cum < m->nchunks ? m->cum : m->nchunks - 1;

	tx->counters[REL_TX_SILENCE_PROBES]++;
	sdr_bit_set(m->sr, c);
	queue_rexmit(tx, ctx, c);
}

/*
 * A range's SKIP is owed until the receiver answers it, or, for messages that never had a
 * receive (credit), until its CTS show it numbers past them.
 */
static int
skip_owed(const struct rel_tx *tx, const struct skip_range *r)
{
	return r->need_answer || r->hi > tx->credit;
}

static int
skip_pending(const struct rel_tx *tx)
{
	for (uint32_t i = 0; i < tx->nskips; i++)
		if (skip_owed(tx, &tx->skips[i]))
			return 1;
	return 0;
}

/* Range @p i is no longer owed: the others close up, in order. */
static void
skip_remove(struct rel_tx *tx, uint32_t i)
{
	memmove(&tx->skips[i], &tx->skips[i + 1], (tx->nskips - i - 1) * sizeof(tx->skips[0]));
	tx->nskips--;
}

/*
 * Messages [lo, hi) were given up, every one: the receiver is told with a SKIP, sent now.
 * Ranges owed that overlap or touch it join it (each message in the union was given up);
 * the others stay ranges of their own. Only with SKIP_RANGES owed already does it join
 * the nearest of them, over the good messages between: counted, and those fail too.
 */
static void
skip_add(struct rel_tx *tx, uint64_t lo, uint64_t hi, int need_answer, uint64_t now)
{
	struct skip_range r = { .lo = lo, .hi = hi, .need_answer = (uint8_t)need_answer };
	uint32_t i, at;

	for (i = 0; i < tx->nskips;) {
		if (!skip_owed(tx, &tx->skips[i])) {
			skip_remove(tx, i);
			continue;
		}
		i++;
	}
	if (tx->nskips == SKIP_RANGES) {
		/* no room: it joins the nearest range (by the messages between them) */
		uint64_t best = UINT64_MAX;
		uint32_t k = 0;

		for (i = 0; i < tx->nskips; i++) {
			const struct skip_range *o = &tx->skips[i];
			uint64_t gap = o->lo > hi ? o->lo - hi : lo > o->hi ? lo - o->hi : 0;

			if (gap < best) {
				best = gap;
				k = i;
			}
		}
		if (best > 0)
			tx->counters[REL_TX_SKIP_RANGES_MERGED]++;
		r.lo = tx->skips[k].lo < r.lo ? tx->skips[k].lo : r.lo;
		r.hi = tx->skips[k].hi > r.hi ? tx->skips[k].hi : r.hi;
	}
	/* every range it overlaps or touches joins it */
	for (i = 0; i < tx->nskips;) {
		struct skip_range *o = &tx->skips[i];

		if (o->lo <= r.hi && o->hi >= r.lo) {
			r.lo = o->lo < r.lo ? o->lo : r.lo;
			r.hi = o->hi > r.hi ? o->hi : r.hi;
			r.need_answer |= o->need_answer;
			skip_remove(tx, i);
			continue;
		}
		i++;
	}
	for (at = 0; at < tx->nskips && tx->skips[at].lo < r.lo; at++)
		;
	memmove(&tx->skips[at + 1], &tx->skips[at], (tx->nskips - at) * sizeof(tx->skips[0]));
	r.next_ns = now;
	r.gap_ns = tx->rto;
	tx->skips[at] = r;
	tx->nskips++;
}

uint32_t
rel_tx_cancel(struct rel_tx *tx, uint64_t now)
{
	uint32_t n = tx->inflight;
	uint64_t lo;

	if (n == 0)
		return 0;
	lo = tx->msgs[tx->order[0]].seq;	/* in sequence order */
	while (tx->inflight > 0)
		finish(tx, tx->order[tx->inflight - 1], SDR_DONE_CANCELLED, now);
	/* some may have had receives (credit): only the receiver's answer ends the SKIPs */
	skip_add(tx, lo, tx->next_seq, 1, now);
	return n;
}

/*
 * Every message of the epoch is still in flight and none had anything sent: the new peer
 * numbers its receives from 0 as we number these from the epoch's start, so they can stay.
 */
static int
untouched(const struct rel_tx *tx)
{
	if (tx->next_seq - tx->epoch_seq != tx->inflight)
		return 0;
	for (uint32_t i = 0; i < tx->inflight; i++) {
		const struct txm *m = &tx->msgs[tx->order[i]];

		if (m->state != TXM_WAIT_CTS && (m->data_next || m->enc_next || m->retransmitted))
			return 0;
	}
	return 1;
}

uint64_t
rel_tx_reset(struct rel_tx *tx, uint64_t now, int keep)
{
	uint64_t base;

	tx->nskips = 0;
	tx->wd_answer = 0;
	/* the peer numbers its receives afresh: what it announced before says nothing now */
	memset(tx->cts, 0, tx->geom.nslots * sizeof(*tx->cts));
	if (keep && untouched(tx)) {
		for (uint32_t i = 0; i < tx->inflight; i++)
			tx->msgs[tx->order[i]].state = TXM_WAIT_CTS;
		tx->credit = tx->epoch_seq;
		return tx->next_seq;
	}
	while (tx->inflight > 0) {
		tx->counters[REL_TX_PEER_RESTART]++;
		finish(tx, tx->order[tx->inflight - 1], SDR_DONE_FAILED, now);
	}
	base = sdr_seq_epoch_base(tx->next_seq, tx->attr.generations);
	tx->next_seq = tx->credit = tx->epoch_seq = base;
	tx->nskips = 0;
	tx->skip_sent_hi = base;
	tx->wd_answer = 0;
	return base;
}

uint32_t
rel_tx_delivered(struct rel_tx *tx, uint32_t start, const uint32_t *win, uint32_t nwords,
		 uint64_t now)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < tx->inflight;) {
		uint32_t ctx = tx->order[i];
		const struct txm *m = &tx->msgs[ctx];
		uint32_t off = (uint32_t)m->seq - start;	/* (modulo 2^32) */

		/* sent whole, as a COMPLETE ACK must find it (ack_plausible()) */
		if (off < 32u * nwords && (win[off / 32] >> (31 - off % 32) & 1) &&
		    m->state == TXM_ACTIVE && m->data_next >= m->nchunks) {
			finish(tx, ctx, SDR_DONE_OK, now);	/* (out of order[]) */
			tx->counters[REL_TX_DELIVERED_AT_RESTART]++;
			n++;
		} else {
			i++;
		}
	}
	return n;
}

/*
 * WITHDRAW: the receives for [lo, hi) are gone. Our messages for them fail, the next message
 * is numbered from hi, and the receiver hears that we did (the answer).
 */
static void
on_withdraw(struct rel_tx *tx, const struct sdr_ctrl *c, uint64_t now)
{
	uint64_t hi = sdr_seq_near(tx->next_seq, c->cum);
	uint64_t lo = hi - (uint32_t)(c->cum - c->win_start);

	/* receives the peer posted: never more than the window beyond our messages, nor for
	 * messages numbered more than the window ago or in another era (a WITHDRAW replayed
	 * 2^32 messages later) */
	if (hi - lo > SDR_SEQ_WINDOW || hi > tx->next_seq + SDR_SEQ_WINDOW ||
	    hi + SDR_SEQ_WINDOW < tx->next_seq || sdr_seq_era(hi, tx->epoch_seq) != c->value) {
		tx->counters[REL_TX_WITHDRAW_IMPLAUSIBLE]++;
		return;
	}
	for (uint32_t i = 0; i < tx->inflight;) {
		uint32_t ctx = tx->order[i];
		const struct txm *m = &tx->msgs[ctx];

		if (m->seq >= lo && m->seq < hi) {
			tx->counters[REL_TX_WITHDRAWN]++;
			finish(tx, ctx, SDR_DONE_FAILED, now);	/* order[] closes up */
			continue;
		}
		i++;
	}
	if (hi > tx->next_seq)
		tx->next_seq = hi;
	tx->wd_answer = 1;
	tx->wd_lo = lo;
	tx->wd_hi = hi;
}

static void
on_cts(struct rel_tx *tx, const struct sdr_ctrl *c, uint64_t now)
{
	struct txm *m;
	uint32_t ctx;
	uint64_t posted = (tx->credit & ~0xFFFFFFFFull) | c->cum;

	if (posted + 0x80000000ull < tx->credit)
		posted += 0x100000000ull;
	/* the receive it announces is among the last nslots posted (a slot is reused only once
	 * free), and the count runs at most the window ahead of our messages */
	if ((uint32_t)(c->cum - c->win_start) - 1u >= tx->geom.nslots ||
	    posted > tx->next_seq + SDR_SEQ_WINDOW) {
		tx->counters[REL_TX_CTS_IMPLAUSIBLE]++;
		return;
	}
	tx->counters[REL_TX_CTS]++;
	if (posted > tx->credit)
		tx->credit = posted;
	/* the length the receiver posted must be the length we send: kept for a message not
	 * submitted yet (submit() checks it), checked now for one that is */
	if (c->msg_id >= tx->geom.nslots)
		return;
	/* (a repeat of an older receive's CTS, late, does not replace a newer one's) */
	if (!tx->cts[c->msg_id].valid || (int32_t)(c->win_start - tx->cts[c->msg_id].seq) >= 0)
		tx->cts[c->msg_id] = (struct cts_seen){ .len = c->value, .seq = c->win_start,
							.valid = 1 };
	ctx = tx->slot_ctx[c->msg_id];
	if (ctx == 0)
		return;
	m = &tx->msgs[ctx - 1];
	/* it fails, and the receiver hears with a SKIP that names it alone (those around it
	 * go on), so its receive fails too rather than at its timeout */
	if ((uint32_t)m->seq == c->win_start && m->len != c->value) {
		uint64_t seq = m->seq;

		tx->counters[REL_TX_CTS_LEN_MISMATCH]++;
		finish(tx, ctx - 1, SDR_DONE_FAILED, m->submit_ns);
		skip_add(tx, seq, seq + 1, 1, now);
	}
}

/*
 * An ACK can only speak of data chunks that went out: no chunk arrives, or is decoded (its
 * submessage's parity follows its data), before it was sent once. So the cumulative point
 * and the window stop at the first chunk not yet sent, and COMPLETE needs every chunk sent.
 * (Bits past the data chunks are the parity's: not acknowledged, not checked.)
 */
static int
ack_plausible(const struct txm *m, const struct sdr_ctrl *c)
{
	if (c->flags & SDR_CTRL_F_FAILED)
		return 1;	/* the receiver may give up at any time */
	if ((c->flags & SDR_CTRL_F_COMPLETE) && m->data_next < m->nchunks)
		return 0;
	if (c->cum > m->data_next)
		return 0;
	for (uint32_t w = 0; w < c->nwords; w++) {
		uint32_t bits = c->win[w];

		while (bits) {
			uint32_t b = 31 - (uint32_t)__builtin_clz(bits), ch = c->win_start + 32 * w + (31 - b);

			if (ch >= m->data_next && ch < m->nchunks)
				return 0;
			bits &= ~(1u << b);
		}
	}
	return 1;
}

void
rel_tx_on_ctrl(struct rel_tx *tx, const struct sdr_ctrl *c, uint64_t now)
{
	uint64_t newest = 0;
	struct txm *m;
	int ctx;

	if (c->type == SDR_CTRL_CTS) {
		on_cts(tx, c, now);
		return;
	}
	if (c->type == SDR_CTRL_WITHDRAW && !(c->flags & SDR_CTRL_F_ANSWER)) {
		on_withdraw(tx, c, now);
		return;
	}
	if (c->type == SDR_CTRL_SKIP && (c->flags & SDR_CTRL_F_ANSWER)) {
		uint64_t hi = sdr_seq_near(tx->next_seq, c->cum);
		uint64_t lo = hi - (uint32_t)(c->cum - c->win_start);

		/* an answer to a SKIP we never sent, or of another era (replayed) */
		if (hi > tx->skip_sent_hi || sdr_seq_era(hi, tx->epoch_seq) != c->value) {
			tx->counters[REL_TX_SKIP_ANSWER_IMPLAUSIBLE]++;
			return;
		}
		tx->counters[REL_TX_SKIPS_ANSWERED]++;
		/* the range it answers ends (one that grew since is owed as it is now) */
		for (uint32_t i = 0; i < tx->nskips; i++)
			if (tx->skips[i].lo == lo && tx->skips[i].hi == hi) {
				skip_remove(tx, i);
				break;
			}
		return;
	}
	if (c->type == SDR_CTRL_SKIP || c->type == SDR_CTRL_WITHDRAW) {
		tx->counters[REL_TX_CTRL_UNKNOWN_MSG]++;	/* one for the receive side */
		return;
	}
	ctx = find_msg(tx, c->msg_id, c->gen, (uint32_t)c->value);
	if (ctx < 0 || tx->msgs[ctx].state != TXM_ACTIVE) {
		tx->counters[REL_TX_CTRL_UNKNOWN_MSG]++;
		return;
	}
	m = &tx->msgs[ctx];
	if (c->type == SDR_CTRL_ACK && !ack_plausible(m, c)) {
		tx->counters[REL_TX_ACK_IMPLAUSIBLE]++;
		return;
	}
	if (m->silence_gap_ns) {	/* silence counts from the last word heard */
		m->silence_ns = now + m->silence_gap_ns;
		wake_by(tx, m->silence_ns);
	}
	switch (c->type) {
	case SDR_CTRL_ACK:
		tx->counters[REL_TX_ACKS]++;
		if (c->flags & SDR_CTRL_F_FAILED) {
			finish(tx, (uint32_t)ctx, SDR_DONE_FAILED, now);
			return;
		}
		if (c->flags & SDR_CTRL_F_COMPLETE) {
			path_sample(tx, m, 0, 1, now);
			finish(tx, (uint32_t)ctx, SDR_DONE_OK, now);
			return;
		}
		/* the cumulative point only ever moves forward: O(new) per ACK */
		for (; m->cum < c->cum && m->cum < m->nchunks; m->cum++) {
			uint64_t t = mark_acked(tx, m, m->cum);

			newest = t > newest ? t : newest;
		}
		for (uint32_t w = 0; w < c->nwords; w++) {
			uint32_t bits = c->win[w];

			while (bits) {
				uint32_t b = 31 - (uint32_t)__builtin_clz(bits);
				uint64_t t = mark_acked(tx, m, c->win_start + 32 * w + (31 - b));

				newest = t > newest ? t : newest;
				bits &= ~(1u << b);
			}
		}
		path_sample(tx, m, newest, 0, now);
		break;
	case SDR_CTRL_NACK:
		for (uint32_t i = 0; i < 32u * c->nwords; i++) {
			uint32_t ch = c->win_start + i;

			if (!sdr_ctrl_win_bit(c, i) || ch >= m->nchunks || ch >= m->data_next)
				continue;
			/* one retransmission per RTT for a chunk, however often it is NACKed */
			if (m->last_sent[ch] + tx->trtt <= now) {
				tx->counters[REL_TX_NACKED]++;
				queue_rexmit(tx, (uint32_t)ctx, ch);
			}
		}
		break;
	case SDR_CTRL_EC_NACK:
		tx->counters[REL_TX_EC_NACKS]++;
		for (uint32_t i = 0; i < 32u * c->nwords; i++) {
			uint32_t sub = c->win_start + i;

			/* (a submessage none of whose chunks went out yet is not lost: it goes
			 * out with its parity, as wire-format.md says) */
			if (sdr_ctrl_win_bit(c, i) && sub < m->nsub &&
			    (uint64_t)sub * tx->cfg.scheme.k < m->data_next)
				fall_back(tx, (uint32_t)ctx, sub);
		}
		break;
	default:
		break;
	}
}

/* Fire expired retransmission timers, silence timeouts and global timeouts. */
/*
 * The message at order position @p from timed out waiting for its receive, which the peer
 * never posted. It and every message behind it (all waiting for later receives) end, and
 * their sequence numbers are given back: none went out, so the next message submitted lands
 * in the next receive the peer posts, as order-based matching promises.
 */
static void
give_back(struct rel_tx *tx, uint32_t from, uint64_t now)
{
	uint64_t seq = tx->msgs[tx->order[from]].seq;

	while (tx->inflight > from) {
		uint32_t ctx = tx->order[tx->inflight - 1];

		finish(tx, ctx, SDR_DONE_TIMEOUT, now);
	}
	/* the receiver learns with SKIP: it numbers its next receives from next_seq */
	skip_add(tx, seq, tx->next_seq, 0, now);
	tx->counters[REL_TX_NO_RECEIVE]++;
}

/* An RTO expired with the timers on the measured RTT: the RTO doubles, once per RTO. */
static void
back_off(struct rel_tx *tx, uint64_t now)
{
	uint64_t cap = 64 * sdr_rel_rto(&tx->cfg);

	if (cap < 1000000000ull)
		cap = 1000000000ull;
	if (now < tx->backoff_ns || tx->rto >= cap)
		return;
	tx->rto = 2 * tx->rto < cap ? 2 * tx->rto : cap;
	tx->backoff_ns = now + tx->rto;
	tx->counters[REL_TX_RTO_BACKOFFS]++;
}

static void
run_timers(struct rel_tx *tx, uint64_t now)
{
	struct tx_ent *e;

	while ((e = ring_front(&tx->timers)) != NULL && e->sent_ns + tx->rto <= now) {
		struct txm *m = &tx->msgs[e->ctx];

		if (m->state == TXM_ACTIVE && m->seq == e->seq && m->last_sent[e->chunk] == e->sent_ns &&
		    !sdr_bit_test(m->acked, e->chunk)) {
			tx->counters[REL_TX_RTO_FIRED]++;
			if (tx->cfg.rto_measured)
				back_off(tx, now);
			queue_rexmit(tx, e->ctx, e->chunk);
		}
		ring_pop(&tx->timers);
	}
	if (now < tx->wake_ns)
		return;
	for (uint32_t i = 0; i < tx->inflight; i++) {
		uint32_t ctx = tx->order[i];
		struct txm *m = &tx->msgs[ctx];

		if (m->deadline_ns <= now && m->state == TXM_WAIT_CTS) {
			give_back(tx, i, now);
			break;
		}
		if (m->deadline_ns <= now) {
			finish(tx, ctx, SDR_DONE_TIMEOUT, now);
			i--;
			continue;
		}
		if (m->silence_ns <= now) {
			probe(tx, ctx);
			if (m->silence_gap_ns < 64 * silence_gap(tx))
				m->silence_gap_ns *= 2;
			m->silence_ns = now + m->silence_gap_ns;
		}
	}
	/* the earliest of those left */
	tx->wake_ns = UINT64_MAX;
	for (uint32_t i = 0; i < tx->inflight; i++) {
		const struct txm *m = &tx->msgs[tx->order[i]];

		wake_by(tx, m->deadline_ns);
		wake_by(tx, m->silence_ns);
	}
}

/* Parity chunks of submessage s: fewer for a short last submessage. */
static uint32_t
sub_parity(const struct rel_tx *tx, const struct txm *m, uint32_t s)
{
	uint32_t first = s * tx->cfg.scheme.k, kk = m->nchunks - first;

	return sdr_rel_sub_parity(&tx->cfg.scheme, kk);
}

static uint32_t
chunk_bytes(const struct rel_tx *tx, const struct txm *m, uint32_t c)
{
	return c == m->nchunks - 1 ? m->last_bytes : chunk_size(tx);
}

/* Wire bytes the pacer charges for a chunk. */
static uint32_t
paced_bytes(const struct rel_tx *tx, uint32_t bytes)
{
	uint32_t pkts = bytes ? (bytes + tx->attr.mtu - 1) / tx->attr.mtu : 1;

	return bytes + pkts * tx->cfg.pkt_overhead;
}

/* Mark a data chunk sent; arm its timer when it is under SR. */
static void
sent_data(struct rel_tx *tx, uint32_t ctx, uint32_t c, uint64_t now, int again)
{
	struct txm *m = &tx->msgs[ctx];
	struct tx_ent e = { .ctx = ctx, .chunk = c, .seq = m->seq, .sent_ns = now };

	if (again) {
		m->retransmitted++;
		tx->counters[REL_TX_RETRANSMITS]++;
	} else {
		tx->counters[REL_TX_DATA_SENT]++;
	}
	m->last_sent[c] = now ? now : 1;
	e.sent_ns = m->last_sent[c];
	m->last_tx_ns = e.sent_ns;
	if (m->first_ns == 0) {
		m->first_ns = e.sent_ns;	/* as last_sent: 1 for 0, 0 means "not yet" */
		m->delivered0 = tx->path.delivered;
	}
	if (sdr_bit_test(m->sr, c) && ring_push(&tx->timers, &e) != 0)
		tx->counters[REL_TX_TIMER_FULL]++;
}

static void
fill_unit(struct rel_tx_unit *u, uint32_t ctx, const struct txm *m, uint8_t kind, uint32_t index,
	  uint32_t bytes, uint8_t retransmit)
{
	u->ctx = ctx;
	u->seq = m->seq;
	u->slot = m->slot;
	u->gen = m->gen;
	u->kind = kind;
	u->retransmit = retransmit;
	u->index = index;
	u->bytes = bytes;
	u->cookie = m->cookie;
}

/* Note the end of the initial pass. */
static void
check_injected(struct rel_tx *tx, struct txm *m, uint64_t now)
{
	if (m->inject_done_ns || m->data_next < m->nchunks || (is_ec(tx) && m->par_sub < m->nsub))
		return;
	m->inject_done_ns = now ? now : 1;
	if (is_ec(tx)) {
		m->silence_gap_ns = silence_gap(tx);
		m->silence_ns = now + m->silence_gap_ns;
		wake_by(tx, m->silence_ns);
	}
}

/*
 * The next new unit of message @p m (context @p ctx): an encode request, parity of a
 * submessage whose data went out, or new data. @return 1 when one was picked, 0 when the
 * message has none now, -1 when nothing may go out (the pacer).
 */
static int
pick_new(struct rel_tx *tx, uint64_t now, struct rel_tx_unit *u, int commit, uint32_t ctx,
	 struct txm *m)
{
	uint32_t subs_out;

	if (m->state == TXM_WAIT_CTS) {
		if (tx->credit <= m->seq)
			return 0;	/* waits for its CTS (so do the messages after it) */
		if (commit)
			m->state = TXM_ACTIVE;
	}
	if (is_ec(tx)) {
		subs_out = m->data_next == m->nchunks ? m->nsub : m->data_next / tx->cfg.scheme.k;
		if (m->enc_next < subs_out) {
			fill_unit(u, ctx, m, REL_UNIT_ENCODE, m->enc_next, 0, 0);
			if (commit)
				m->enc_next++;
			return 1;
		}
		if (m->par_sub < m->enc_next && sdr_bit_test(m->par_ready, m->par_sub)) {
			if (!pacer_ready(&tx->pacer, now))
				return -1;
			fill_unit(u, ctx, m, REL_UNIT_PARITY, m->par_sub * tx->cfg.scheme.m + m->par_j,
				  chunk_size(tx), 0);
			if (commit) {
				pacer_consume(&tx->pacer, paced_bytes(tx, u->bytes));
				tx->counters[REL_TX_PARITY_SENT]++;
				m->last_tx_ns = now ? now : 1;
				if (++m->par_j == sub_parity(tx, m, m->par_sub)) {
					m->par_j = 0;
					m->par_sub++;
				}
				check_injected(tx, m, now);
			}
			return 1;
		}
	}
	if (m->data_next < m->ready_upto) {
		if (!pacer_ready(&tx->pacer, now))
			return -1;
		fill_unit(u, ctx, m, REL_UNIT_DATA, m->data_next, chunk_bytes(tx, m, m->data_next), 0);
		if (commit) {
			pacer_consume(&tx->pacer, paced_bytes(tx, u->bytes));
			sent_data(tx, ctx, m->data_next, now, 0);
			m->data_next++;
			check_injected(tx, m, now);
		}
		return 1;
	}
	return 0;
}

/*
 * Pick the next unit: the highest priority first; within a priority, retransmissions
 * first, then per message in sequence order: encode requests, parity of submessages whose
 * data went out, new data. @p commit applies it.
 */
static int
pick(struct rel_tx *tx, uint64_t now, struct rel_tx_unit *u, int commit)
{
	for (int level = REL_TX_PRIO_MAX; level >= 0; level--) {
		struct ent_ring *q = &tx->rexmit[level];
		struct tx_ent *e;

		/* retransmissions: drop stale queue entries as we go */
		while ((e = ring_front(q)) != NULL) {
			struct txm *m = &tx->msgs[e->ctx];

			if (m->state != TXM_ACTIVE || m->seq != e->seq ||
			    sdr_bit_test(m->acked, e->chunk)) {
				if (m->state == TXM_ACTIVE && m->seq == e->seq)
					sdr_bit_clear(m->queued, e->chunk);
				ring_pop(q);
				continue;
			}
			if (!pacer_ready(&tx->pacer, now))
				return 0;
			fill_unit(u, e->ctx, m, REL_UNIT_DATA, e->chunk,
				  chunk_bytes(tx, m, e->chunk), 1);
			if (commit) {
				sdr_bit_clear(m->queued, e->chunk);
				ring_pop(q);
				pacer_consume(&tx->pacer, paced_bytes(tx, u->bytes));
				sent_data(tx, u->ctx, u->index, now, 1);
			}
			return 1;
		}
		if (tx->nprio[level] == 0)
			continue;
		/* new units, in sequence order, after the messages that have none left */
		while (tx->sent_out < tx->inflight &&
		       sent_all(tx, &tx->msgs[tx->order[tx->sent_out]]))
			tx->sent_out++;
		for (uint32_t i = tx->sent_out; i < tx->inflight; i++) {
			uint32_t ctx = tx->order[i];
			struct txm *m = &tx->msgs[ctx];
			int r;

			if (m->state == TXM_WAIT_CTS && tx->credit <= m->seq)
				break;	/* it and every message after it wait for their CTS */
			if (m->prio != level)
				continue;
			r = pick_new(tx, now, u, commit, ctx, m);
			if (r != 0)
				return r > 0;
		}
	}
	return 0;
}

int
rel_tx_next(struct rel_tx *tx, uint64_t now, struct rel_tx_unit *u)
{
	int r;

	run_timers(tx, now);
	r = pick(tx, now, u, 1);
	if (r == 0 && !pacer_ready(&tx->pacer, now))
		tx->counters[REL_TX_PACED_WAITS]++;
	return r;
}

void
rel_tx_parity_ready(struct rel_tx *tx, uint32_t ctx, uint64_t seq, uint32_t sub)
{
	struct txm *m = &tx->msgs[ctx];

	if (ctx < tx->attr.max_inflight && m->state == TXM_ACTIVE && m->seq == seq && sub < m->nsub)
		sdr_bit_set(m->par_ready, sub);
}

uint64_t
rel_tx_next_time(struct rel_tx *tx, uint64_t now)
{
	struct rel_tx_unit u;
	uint64_t t = UINT64_MAX;
	struct tx_ent *e;

	run_timers(tx, now);
	if (pick(tx, now, &u, 0))
		return now;
	/* something is waiting only for the pacer? */
	if (!pacer_ready(&tx->pacer, now)) {
		struct pacer saved = tx->pacer;
		uint64_t at = pacer_ready_at(&tx->pacer, now);

		if (pick(tx, at, &u, 0))
			t = at;
		tx->pacer = saved;
	}
	if ((e = ring_front(&tx->timers)) != NULL && e->sent_ns + tx->rto < t)
		t = e->sent_ns + tx->rto;
	if (tx->wd_answer)
		return now;
	for (uint32_t i = 0; i < tx->nskips; i++)
		if (skip_owed(tx, &tx->skips[i]) && tx->skips[i].next_ns < t)
			t = tx->skips[i].next_ns > now ? tx->skips[i].next_ns : now;
	/* (a bound: a message that ended since run_timers() last looked may leave it early) */
	return tx->wake_ns < t ? tx->wake_ns : t;
}

int
rel_tx_poll_done(struct rel_tx *tx, struct sdr_rel_done *d)
{
	return sdr_rel_done_take(&tx->done, d);
}

uint64_t
rel_tx_next_seq(const struct rel_tx *tx)
{
	return tx->next_seq;
}

int
rel_tx_next_ctrl(struct rel_tx *tx, uint64_t now, struct sdr_ctrl *c)
{
	if (tx->wd_answer) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_WITHDRAW;
		c->flags = SDR_CTRL_F_ANSWER;
		c->cum = (uint32_t)tx->wd_hi;
		c->win_start = (uint32_t)tx->wd_lo;
		c->value = sdr_seq_era(tx->wd_hi, tx->epoch_seq);
		tx->wd_answer = 0;
		tx->counters[REL_TX_WITHDRAW_ANSWERS]++;
		return 1;
	}
	/* the first range owed whose time has come; those no longer owed go */
	for (uint32_t i = 0; i < tx->nskips;) {
		struct skip_range *r = &tx->skips[i];

		if (!skip_owed(tx, r)) {
			skip_remove(tx, i);
			continue;
		}
		if (r->next_ns > now) {
			i++;
			continue;
		}
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_SKIP;
		c->cum = (uint32_t)r->hi;
		c->win_start = (uint32_t)r->lo;
		c->value = sdr_seq_era(r->hi, tx->epoch_seq);
		if (r->hi > tx->skip_sent_hi)
			tx->skip_sent_hi = r->hi;
		/* a peer that is gone hears less and less of it */
		r->next_ns = now + r->gap_ns;
		if (r->gap_ns < 64 * tx->rto)
			r->gap_ns *= 2;
		tx->counters[REL_TX_SKIPS_SENT]++;
		return 1;
	}
	return 0;
}

int
rel_tx_resetting(const struct rel_tx *tx)
{
	return skip_pending(tx);
}

int
rel_tx_set_scheme(struct rel_tx *tx, const struct sdr_scheme *s)
{
	if (!tx->cfg.scheme_may_change || !sdr_rel_code_fits(&tx->geom, s))
		return -EINVAL;
	if (tx->inflight != 0)
		return -EBUSY;
	tx->cfg.scheme = *s;
	return 0;
}

uint32_t
rel_tx_inflight(const struct rel_tx *tx)
{
	return tx->inflight;
}

uint64_t
rel_tx_rto(const struct rel_tx *tx, uint64_t *rtt)
{
	if (rtt != NULL)
		*rtt = tx->trtt;
	return tx->rto;
}

const struct path_est *
rel_tx_path(const struct rel_tx *tx)
{
	return &tx->path;
}

const uint64_t *
rel_tx_counters(const struct rel_tx *tx)
{
	return tx->counters;
}
