/* SPDX-License-Identifier: BSD-3-Clause */
/* Discrete-event simulation of one connection over a modelled link, payload-free. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_bitmap.h"
#include "sdr_sim.h"

/* ---- in-flight chunks (min-heap on arrival time) and control messages (FIFO) ---- */

#define ALL_PKTS UINT32_MAX

struct dlv {
	uint64_t t;
	uint64_t order;		/* ties resolve in send order: the run is deterministic */
	uint64_t seq;
	uint32_t slot;
	uint32_t chunk;		/* data index, or nchunks + parity index */
	uint32_t npkts;		/* packets of the transmission */
	uint32_t mask;		/* ALL_PKTS, or the mask pool entry of the packets that arrive */
};

struct cdlv {
	uint64_t t;
	struct sdr_ctrl c;
};

struct sim {
	const struct sdr_sim_cfg *cfg;
	const struct sdr_sim_hooks *hooks;
	struct sdr_rng rng;
	struct rel_tx *tx;
	struct rel_rx *rx;
	struct sdr_conn_geom geom;
	struct dlv *heap;
	uint32_t nheap;
	uint32_t heap_cap;
	uint64_t order;
	struct cdlv *cq;
	uint32_t cq_head;
	uint32_t ncq;
	uint32_t cq_cap;
	uint64_t link_free;	/* data direction busy until */
	int ge_bad;		/* Gilbert-Elliott state */
	uint64_t until_loss;	/* i.i.d. loss: packets before the next lost one */
	uint32_t pkt_words;	/* words of one chunk's packet bitmap */
	uint32_t nch;		/* chunks per message the receiver tracks: data, then parity */
	uint64_t **pk;		/* per slot: the packets that arrived, nch bitmaps of pkt_words */
	uint64_t *pool;		/* masks of transmissions that lost some of their packets */
	uint32_t *pool_free;
	uint32_t npool_free;
	uint32_t pool_cap;
	uint64_t *rx_seq_of_slot;	/* which message the receiver has posted in a slot */
	uint8_t *rx_posted;
	uint64_t next_post;	/* next receive sequence to post */
	uint64_t next_submit;
	uint64_t *submit_ns;	/* per message */
	uint32_t *attempts;	/* per (message, chunk) send count, only with hooks */
	uint32_t max_chunks;
	struct sdr_sim_result *res;
	double *times;
};

static int
heap_push(struct sim *s, const struct dlv *d)
{
	uint32_t i;

	if (s->nheap == s->heap_cap) {
		uint32_t cap = s->heap_cap ? s->heap_cap * 2 : 4096;
		struct dlv *h = realloc(s->heap, cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		s->heap = h;
		s->heap_cap = cap;
	}
	i = s->nheap++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (s->heap[p].t < d->t || (s->heap[p].t == d->t && s->heap[p].order < d->order))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = *d;
	return 0;
}

static void
heap_pop(struct sim *s, struct dlv *out)
{
	struct dlv last;
	uint32_t i = 0;

	*out = s->heap[0];
	last = s->heap[--s->nheap];
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && (s->heap[c + 1].t < s->heap[c].t ||
		    (s->heap[c + 1].t == s->heap[c].t && s->heap[c + 1].order < s->heap[c].order)))
			c++;
		if (last.t < s->heap[c].t || (last.t == s->heap[c].t && last.order < s->heap[c].order))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
}

static int
cq_push(struct sim *s, uint64_t t, const struct sdr_ctrl *c)
{
	if (s->ncq == s->cq_cap) {
		uint32_t cap = s->cq_cap ? s->cq_cap * 2 : 256;
		struct cdlv *q = malloc(cap * sizeof(*q));

		if (q == NULL)
			return -ENOMEM;
		for (uint32_t i = 0; i < s->ncq; i++)
			q[i] = s->cq[(s->cq_head + i) % s->cq_cap];
		free(s->cq);
		s->cq = q;
		s->cq_head = 0;
		s->cq_cap = cap;
	}
	s->cq[(s->cq_head + s->ncq) % s->cq_cap] = (struct cdlv){ .t = t, .c = *c };
	s->ncq++;
	return 0;
}

static void
trace(struct sim *s, const struct sdr_sim_event *ev)
{
	if (s->hooks && s->hooks->trace)
		s->hooks->trace(s->hooks->arg, ev);
}

/* Does the link drop this control packet? */
static int
ctrl_lost(struct sim *s, const struct sdr_sim_event *ev)
{
	const struct sdr_sim_link *l = &s->cfg->link;
	int verdict = -1;

	if (s->hooks && s->hooks->drop)
		verdict = s->hooks->drop(s->hooks->arg, ev);
	if (verdict >= 0)
		return verdict;
	return sdr_rng_unit(&s->rng) < (l->ctrl_loss < 0 ? l->p_loss : l->ctrl_loss);
}

/* Packets before the next i.i.d. loss: geometric, one draw per loss rather than per packet. */
static uint64_t
gap_to_loss(struct sim *s)
{
	double u = 1.0 - sdr_rng_unit(&s->rng);	/* (0, 1] */
	double g = floor(log(u) / log1p(-s->cfg->link.p_loss));

	return g >= 1e18 ? UINT64_MAX : (uint64_t)g;
}

static int
pool_get(struct sim *s, uint32_t *idx)
{
	if (s->npool_free == 0) {
		uint32_t cap = s->pool_cap ? s->pool_cap * 2 : 64;
		uint64_t *p = realloc(s->pool, (size_t)cap * s->pkt_words * sizeof(*p));
		uint32_t *f;

		if (p == NULL)
			return -ENOMEM;
		s->pool = p;
		f = realloc(s->pool_free, cap * sizeof(*f));
		if (f == NULL)
			return -ENOMEM;
		s->pool_free = f;
		for (uint32_t i = s->pool_cap; i < cap; i++)
			s->pool_free[s->npool_free++] = cap - 1 - (i - s->pool_cap);
		s->pool_cap = cap;
	}
	*idx = s->pool_free[--s->npool_free];
	return 0;
}

/*
 * Which of the @p npkts packets of one transmission the link drops: the number lost, and,
 * when that is some but not all, *mask = a pool entry with a bit set for each packet that
 * arrives. A drop hook decides for the whole transmission.
 */
static int
data_lost(struct sim *s, const struct sdr_sim_event *ev, uint32_t npkts, uint32_t *mask)
{
	const struct sdr_sim_link *l = &s->cfg->link;
	uint64_t *m = NULL;
	uint32_t nlost = 0;
	int verdict = -1;

	*mask = ALL_PKTS;
	if (s->hooks && s->hooks->drop)
		verdict = s->hooks->drop(s->hooks->arg, ev);
	if (verdict >= 0)
		return verdict ? (int)npkts : 0;
	if (!l->gilbert && (l->p_loss <= 0 || s->until_loss >= npkts)) {
		if (l->p_loss > 0)
			s->until_loss -= npkts;
		return 0;
	}
	if (pool_get(s, mask) != 0)
		return -ENOMEM;
	m = s->pool + (size_t)*mask * s->pkt_words;
	memset(m, 0xFF, s->pkt_words * sizeof(*m));
	for (uint32_t i = 0; i < npkts; i++) {
		int drop;

		if (l->gilbert) {
			const struct sdr_ge ge = { l->ge_p_gb, l->ge_p_bg, l->ge_loss_good,
						   l->ge_loss_bad };

			drop = sdr_ge_step(&s->rng, &ge, &s->ge_bad) & 1;
		} else if (s->until_loss >= npkts - i) {
			s->until_loss -= npkts - i;
			break;
		} else {
			i += (uint32_t)s->until_loss;
			s->until_loss = gap_to_loss(s);
			drop = 1;
		}
		if (drop) {
			sdr_bit_clear(m, i);
			nlost++;
		}
	}
	if (nlost == 0 || nlost == npkts) {
		s->pool_free[s->npool_free++] = *mask;
		*mask = ALL_PKTS;
	}
	return (int)nlost;
}

static uint32_t
chunk_pkts(const struct sim *s, uint32_t bytes)
{
	return bytes ? (bytes + s->cfg->attr.mtu - 1) / s->cfg->attr.mtu : 1;
}

/* Put a chunk on the wire at @p now. */
static int
send_chunk(struct sim *s, const struct rel_tx_unit *u, uint64_t now)
{
	const struct sdr_sim_link *l = &s->cfg->link;
	uint32_t npkts = chunk_pkts(s, u->bytes), mask;
	uint64_t wire = (uint64_t)u->bytes + (uint64_t)npkts * s->cfg->pkt_overhead;
	uint64_t dep = now > s->link_free ? now : s->link_free, nchunks;
	struct sdr_sim_event ev = {
		.kind = u->kind == REL_UNIT_DATA ? SDR_SIM_EV_DATA : SDR_SIM_EV_PARITY,
		.retransmit = u->retransmit, .time_ns = dep, .seq = u->seq, .index = u->index,
		.pkts = npkts,
	};
	struct dlv d;
	int nlost;

	if (l->bandwidth_bps > 0)
		s->link_free = dep + (uint64_t)((double)wire * 8e9 / l->bandwidth_bps);
	nchunks = sdr_conn_msg_chunks(&s->geom, s->cfg->msg_len);
	if (s->attempts != NULL && u->kind == REL_UNIT_DATA)
		ev.attempt = s->attempts[(u->seq % s->cfg->messages) * s->max_chunks + u->index]++;
	nlost = data_lost(s, &ev, npkts, &mask);
	if (nlost < 0)
		return nlost;
	ev.pkts_lost = (uint32_t)nlost;
	ev.lost = nlost > 0;
	trace(s, &ev);
	if (u->kind == REL_UNIT_DATA)
		s->res->data_sent++;
	else
		s->res->parity_sent++;
	s->res->pkts_sent += npkts;
	s->res->pkts_lost += (uint32_t)nlost;
	if ((uint32_t)nlost == npkts)
		return 0;
	d.t = (l->bandwidth_bps > 0 ? s->link_free : dep) + l->delay_ns;
	if (l->reorder_p > 0 && sdr_rng_unit(&s->rng) < l->reorder_p)
		d.t += (uint64_t)(sdr_rng_unit(&s->rng) * (double)l->reorder_ns);
	if (s->hooks && s->hooks->delay)
		d.t += s->hooks->delay(s->hooks->arg, &ev);
	d.order = s->order++;
	d.seq = u->seq;
	d.slot = u->slot;
	d.chunk = u->kind == REL_UNIT_DATA ? u->index : (uint32_t)nchunks + u->index;
	d.npkts = npkts;
	d.mask = mask;
	return heap_push(s, &d);
}

static int
send_ctrl(struct sim *s, const struct sdr_ctrl *c, uint64_t now, int free_ride)
{
	struct sdr_sim_event ev = { .kind = SDR_SIM_EV_CTRL, .ctrl_type = c->type,
				    .ctrl_flags = c->flags, .time_ns = now, .index = c->msg_id };

	s->res->ctrl_sent++;
	ev.lost = free_ride ? 0 : (uint8_t)ctrl_lost(s, &ev);
	trace(s, &ev);
	if (ev.lost)
		return 0;
	return cq_push(s, free_ride ? now : now + s->cfg->link.delay_ns, c);
}

/* Post receives and submit sends while there is room. */
static void
fill(struct sim *s, uint64_t now)
{
	const struct sdr_sim_cfg *cfg = s->cfg;

	while (s->next_post < cfg->messages) {
		uint32_t slot = sdr_conn_seq_slot(&cfg->attr, s->next_post);

		if (s->rx_posted[slot] ||
		    rel_rx_post(s->rx, s->next_post, slot, cfg->msg_len, s->next_post, now) < 0)
			break;
		s->rx_posted[slot] = 1;
		s->rx_seq_of_slot[slot] = s->next_post;
		if (s->pk[slot] == NULL)
			s->pk[slot] = malloc((size_t)s->nch * s->pkt_words * sizeof(uint64_t));
		if (s->pk[slot] != NULL)	/* NULL: arrive() counts nothing, the run stalls */
			memset(s->pk[slot], 0, (size_t)s->nch * s->pkt_words * sizeof(uint64_t));
		s->next_post++;
	}
	while (s->next_submit < cfg->messages) {
		if (rel_tx_submit(s->tx, cfg->msg_len, s->next_submit, now) < 0)
			break;
		s->submit_ns[s->next_submit] = now;
		s->next_submit++;
	}
}

/* Everything that happens at time @p now, until nothing more does. */
static int
step(struct sim *s, uint64_t now, int first)
{
	struct rel_tx_unit u;
	struct rel_rx_decode dec;
	struct sdr_ctrl c;
	struct sdr_rel_done d;
	int busy = 1;

	while (busy) {
		busy = 0;
		fill(s, now);
		while (rel_rx_next_ctrl(s->rx, now, &c)) {
			/* receives posted before the run: their CTS is already at the sender */
			if (send_ctrl(s, &c, now, first && c.type == SDR_CTRL_CTS) != 0)
				return -ENOMEM;
			busy = 1;
		}
		while (s->ncq && s->cq[s->cq_head].t <= now) {
			rel_tx_on_ctrl(s->tx, &s->cq[s->cq_head].c, now);
			s->cq_head = (s->cq_head + 1) % s->cq_cap;
			s->ncq--;
			busy = 1;
		}
		while (rel_tx_next(s->tx, now, &u)) {
			busy = 1;
			if (u.kind == REL_UNIT_ENCODE) {
				rel_tx_parity_ready(s->tx, u.ctx, u.seq, u.index);
				continue;
			}
			if (send_chunk(s, &u, now) != 0)
				return -ENOMEM;
		}
		while (rel_rx_next_decode(s->rx, &dec)) {
			struct sdr_sim_event ev = { .kind = SDR_SIM_EV_DECODE, .time_ns = now,
						    .seq = dec.seq, .index = dec.sub };

			trace(s, &ev);
			rel_rx_decoded(s->rx, dec.ctx, dec.seq, dec.sub, now);
			s->res->decoded++;
			busy = 1;
		}
		while (rel_rx_poll_done(s->rx, &d)) {
			struct sdr_sim_event ev = { .kind = SDR_SIM_EV_RX_DONE, .time_ns = now,
						    .seq = d.seq, .lost = d.status != SDR_DONE_OK };

			trace(s, &ev);
			s->res->rx_mean_s += (double)(d.end_ns - s->submit_ns[d.seq]) * 1e-9;
			/* the application takes the message at once and releases the slot */
			rel_rx_release(s->rx, d.slot);
			s->rx_posted[d.slot] = 0;
			busy = 1;
		}
		while (rel_tx_poll_done(s->tx, &d)) {
			double t = (double)(d.end_ns - d.start_ns) * 1e-9;
			struct sdr_sim_event ev = { .kind = SDR_SIM_EV_TX_DONE, .time_ns = now,
						    .seq = d.seq, .lost = d.status != SDR_DONE_OK };

			trace(s, &ev);
			s->res->messages++;
			s->res->ok += d.status == SDR_DONE_OK;
			s->res->mean_s += t;
			if (t > s->res->max_s)
				s->res->max_s = t;
			s->res->retransmitted += d.retransmitted;
			s->res->fallback += d.fallback;
			if (s->times)
				s->times[d.seq] = t;
			busy = 1;
		}
	}
	return 0;
}

/*
 * A transmission reaches the receiver: its packets go into the chunk's packet bitmap, as
 * the dataplane's receiver places them, and the chunk counts as in once every packet has
 * arrived, from this transmission or earlier ones. Packets of a chunk already in, or of a
 * message no longer posted, are late.
 */
static void
arrive(struct sim *s, const struct dlv *d, uint64_t now)
{
	uint32_t gen = sdr_conn_seq_gen(&s->cfg->attr, d->seq);
	const uint64_t *m = d->mask == ALL_PKTS ? NULL : s->pool + (size_t)d->mask * s->pkt_words;
	uint64_t *have;
	int was_in;

	if (!s->rx_posted[d->slot] || s->rx_seq_of_slot[d->slot] != d->seq ||
	    s->pk[d->slot] == NULL || d->chunk >= s->nch) {
		rel_rx_on_late(s->rx, d->slot, gen, now);
		return;
	}
	have = s->pk[d->slot] + (size_t)d->chunk * s->pkt_words;
	was_in = sdr_bitmap_count(have, d->npkts) == d->npkts;
	for (uint32_t w = 0; w < s->pkt_words; w++)
		have[w] |= m ? m[w] : ~0ull;
	if (!was_in && sdr_bitmap_count(have, d->npkts) < d->npkts)
		return;		/* placed, the chunk still has holes */
	if (was_in || rel_rx_on_chunk(s->rx, d->slot, d->chunk, now) <= 0)
		rel_rx_on_late(s->rx, d->slot, gen, now);
}

static void
sim_free(struct sim *s)
{
	rel_tx_destroy(s->tx);
	rel_rx_destroy(s->rx);
	free(s->heap);
	free(s->cq);
	free(s->rx_seq_of_slot);
	free(s->rx_posted);
	free(s->submit_ns);
	free(s->attempts);
	if (s->pk != NULL)
		for (uint32_t i = 0; i < s->geom.nslots; i++)
			free(s->pk[i]);
	free(s->pk);
	free(s->pool);
	free(s->pool_free);
}

int
sdr_sim_run(const struct sdr_sim_cfg *cfg, uint64_t seed, const struct sdr_sim_hooks *hooks,
	    struct sdr_sim_result *res, double *times)
{
	uint64_t now = 0, limit = cfg->max_time_ns ? cfg->max_time_ns : 1000000000000ull;
	uint32_t spins = 0;
	struct sim s;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	if (cfg->messages == 0 || sdr_conn_geometry(&cfg->attr, &s.geom) != 0)
		return -EINVAL;
	s.cfg = cfg;
	s.hooks = hooks;
	s.res = res;
	s.times = times;
	sdr_rng_seed(&s.rng, seed);
	s.tx = rel_tx_create(&cfg->rel, &cfg->attr);
	s.rx = rel_rx_create(&cfg->rel, &cfg->attr);
	s.rx_seq_of_slot = calloc(s.geom.nslots, sizeof(uint64_t));
	s.rx_posted = calloc(s.geom.nslots, 1);
	s.submit_ns = calloc(cfg->messages, sizeof(uint64_t));
	s.max_chunks = s.geom.max_data_chunks;
	s.nch = s.geom.max_data_chunks + s.geom.max_parity_chunks;
	s.pkt_words = SDR_BITMAP_WORDS(s.geom.pkts_per_chunk);
	s.pk = calloc(s.geom.nslots, sizeof(*s.pk));
	if (cfg->link.p_loss > 0 && !cfg->link.gilbert)
		s.until_loss = gap_to_loss(&s);
	/* a trial joins the burst process where it stands in the long run, bad with
	 * p_gb / (p_gb + p_bg), not always in the good state */
	if (cfg->link.gilbert && cfg->link.ge_p_gb + cfg->link.ge_p_bg > 0)
		s.ge_bad = sdr_rng_unit(&s.rng) <
			   cfg->link.ge_p_gb / (cfg->link.ge_p_gb + cfg->link.ge_p_bg);
	if (hooks != NULL && (uint64_t)cfg->messages * s.max_chunks < (1u << 24))
		s.attempts = calloc((uint64_t)cfg->messages * s.max_chunks, sizeof(uint32_t));
	if (s.tx == NULL || s.rx == NULL || !s.rx_seq_of_slot || !s.rx_posted || !s.submit_ns ||
	    !s.pk) {
		sim_free(&s);
		return s.tx == NULL || s.rx == NULL ? -EINVAL : -ENOMEM;
	}
	rc = step(&s, now, 1);
	rel_rx_cts_given(s.rx);	/* (their CTS rode free: no RTT sample from them) */
	while (rc == 0 && res->messages < cfg->messages) {
		uint64_t before = now;
		uint64_t t = rel_tx_next_time(s.tx, now), r = rel_rx_next_time(s.rx, now);

		if (r < t)
			t = r;
		if (s.nheap && s.heap[0].t < t)
			t = s.heap[0].t;
		if (s.ncq && s.cq[s.cq_head].t < t)
			t = s.cq[s.cq_head].t;
		if (t == UINT64_MAX || t > limit) {
			rc = -ETIMEDOUT;
			break;
		}
		now = t > now ? t : now;
		while (s.nheap && s.heap[0].t <= now) {
			struct dlv d;

			heap_pop(&s, &d);
			arrive(&s, &d, now);
			if (d.mask != ALL_PKTS)
				s.pool_free[s.npool_free++] = d.mask;
		}
		rc = step(&s, now, 0);
		/* a state machine that keeps asking for "now" without acting is a bug: stop */
		if (now == before && ++spins > 1000000)
			rc = -EDEADLK;
		else if (now != before)
			spins = 0;
	}
	res->end_ns = now;
	{
		const struct path_est *pe = rel_tx_path(s.tx);

		res->rtt_min_ns = path_est_min_rtt(pe, now);
		res->srtt_ns = pe->srtt_ns;
		res->rtt_samples = pe->rtt_samples;
		res->rate_max_bps = path_est_max_rate(pe, now);
		res->rate_samples = pe->rate_samples;
		res->rto_ns = rel_tx_rto(s.tx, NULL);
		res->rto_backoffs = rel_tx_counters(s.tx)[REL_TX_RTO_BACKOFFS];
		res->rx_rtt_min_ns = path_est_min_rtt(rel_rx_path(s.rx), now);
		res->rx_rtt_samples = rel_rx_path(s.rx)->rtt_samples;
		res->rx_rto_ns = rel_rx_rto(s.rx, &res->rx_timer_rtt_ns);
	}
	if (res->messages) {
		res->mean_s /= res->messages;
		res->rx_mean_s /= res->messages;
	}
	sim_free(&s);
	return rc;
}
