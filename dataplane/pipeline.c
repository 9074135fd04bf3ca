/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll loops. Stages are plain functions over bursts:
 *
 *   rx -> parse + ICRC -> (QPN table) -> receive backend / control rx      [receive]
 *   traffic source/sink -> reliability + packetizer -> link emulator -> tx  [send]
 *
 * Run to completion, every stage on one lcore (DP_WORKER_ALL), or split: receive and parse
 * on rx_lcores receive workers, the rest on the main lcore, joined by one SP/SC rte_ring of
 * parsed mbufs per receive worker. Receive worker k polls RX queues k, k + rx_lcores, ... of
 * every port, so the channels that RSS (or the peer's choice of TX queue) spreads over the
 * queues spread over the workers. The main lcore sends each frame on the TX queue of its
 * UDP source port, which encodes the destination QPN: a channel keeps its queue.
 * A loop that found nothing to do sleeps briefly (idle backoff), so several dataplanes
 * share a small machine; idle_sleep_us = 0 polls without pause.
 */
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "control.h"
#include "dp.h"
#include "holds.h"
#include "pipeline.h"
#include "roce_format.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "ports.h"
#include "seqcount.h"
#include "stats.h"

#define RX_BURSTS 8

/*
 * Per-lcore state: a stash of free mbufs for frames with where each one's data starts (taken
 * when it is allocated, and so in the caches, not loaded again for every send call), a
 * scratch frame for chained mbufs.
 */
struct worker {
	enum dp_worker_role role;
	unsigned int rx_index, rx_count;	/* polls RX queues rx_index + i * rx_count */
	struct rte_mbuf *stash[DP_BURST_MAX];
	uint8_t *stash_data[DP_BURST_MAX];	/* rte_pktmbuf_mtod(stash[i]) */
	unsigned int nstash;
	unsigned int icrc_sample_in;	/* zero-copy bursts with data until the next sample */
	uint32_t icrc_rng;		/* icrc_sample_gap() */
	uint8_t scratch[DP_FRAME_SCRATCH];
	uint8_t port_of_id[RTE_MAX_ETHPORTS];
} __rte_cache_aligned;	/* (one per lcore, side by side: no line shared between lcores) */

/* The counter slot of the calling lcore (dp.h: DP_SLOT_MAIN, 1 + receive worker, DP_SLOT_FEC;
 * engine e: slot e). */
static RTE_DEFINE_PER_LCORE(unsigned int, slot);
/* mode = engines: the calling lcore's engine, which owns TX queue e and link emulator e of
 * every port and the connections of engine e; -1: the lcore owns every queue and emulator */
static RTE_DEFINE_PER_LCORE(int, engine) = -1;

/*
 * The link emulator paths on port @p p's egress for the calling lcore (NULL: no link). A
 * link added at run time is published (p->link) once every engine has its copy.
 */
static inline struct link_emu *const *
link_of(const struct dp_port *p)
{
	int e = RTE_PER_LCORE(engine);

	return __atomic_load_n(&p->link, __ATOMIC_ACQUIRE) == NULL ? NULL :
	       p->elink[e > 0 ? e : 0];
}

/* The calling lcore's pool of frames: its engine's (mode = engines), else the only one. */
static inline struct rte_mempool *
frame_pool(const struct dp_ctx *ctx)
{
	int e = RTE_PER_LCORE(engine);

	return ctx->pool[e > 0 ? e : 0];
}

/* The calling lcore's pool of zero-copy attach mbufs, as frame_pool(). */
static inline struct rte_mempool *
zc_pool(const struct dp_ctx *ctx)
{
	int e = RTE_PER_LCORE(engine);

	return ctx->zc_pool[e > 0 ? e : 0];
}

/* The calling lcore's counters of port @p p. */
#define PS(p) (&(p)->stats[RTE_PER_LCORE(slot)])

uint64_t
dp_now_ns(const struct dp_ctx *ctx)
{
	uint64_t t = rte_get_tsc_cycles() - ctx->start_tsc;

	return (uint64_t)((double)t * 1e9 / (double)ctx->tsc_hz);
}

/*
 * Cycles since @p t0 to stage @p s: @p calls calls, @p pkts packets, busy if @p busy.
 * @return the time read, where the next stage starts.
 */
static inline uint64_t
stage_account(struct dp_ctx *ctx, enum dp_stage s, uint64_t t0, uint64_t calls, uint64_t pkts, int busy)
{
	uint64_t t = rte_get_tsc_cycles(), dt = t - t0;
	struct dp_stage_stats *st = &ctx->stages[RTE_PER_LCORE(slot)].s[s];

	st->calls += calls;
	st->pkts += pkts;
	st->cycles += dt;
	if (busy)
		st->busy_cycles += dt;
	return t;
}

/* One call of stage @p s that handled @p pkts packets (0: an empty poll). */
static inline uint64_t
stage_add(struct dp_ctx *ctx, enum dp_stage s, uint64_t t0, uint64_t pkts)
{
	return stage_account(ctx, s, t0, 1, pkts, pkts != 0);
}

/* The port's allowlist takes this source address. */
static int
source_allowed(const struct dp_port_cfg *pc, uint8_t version, const uint8_t *src)
{
	for (unsigned int i = 0; i < pc->nallow; i++) {
		const struct dp_prefix *a = &pc->allow[i];
		unsigned int full = a->len / 8, rest = a->len % 8;

		if (a->version != version || memcmp(src, a->ip, full) != 0)
			continue;
		if (rest == 0 || ((src[full] ^ a->ip[full]) & (0xFF00 >> rest)) == 0)
			return 1;
	}
	return 0;
}

/* Verdicts that mean "some other protocol", not "broken RoCE". */
static int
not_roce(enum roce_verdict r)
{
	return r == ROCE_V_NOT_IP || r == ROCE_V_NOT_UDP || r == ROCE_V_NOT_ROCE_PORT ||
	       r == ROCE_V_IP_FRAGMENT;
}

/* Hand frames to TX queue @p q of the device; @return how many it took. Counts what went out. */
static uint16_t
tx_burst(struct dp_port *p, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	uint64_t bytes = 0;
	uint16_t sent;

	/* the bytes are counted before the device has the frames: those it takes are no
	 * longer ours to read (another lcore or process may have received and freed them) */
	for (uint16_t i = 0; i < n; i++)
		bytes += m[i]->pkt_len;
	sent = rte_eth_tx_burst(p->port_id, q, m, n);
	for (uint16_t i = sent; i < n; i++)
		bytes -= m[i]->pkt_len;
	PS(p)->counters[DP_PORT_TX_PKTS] += sent;
	PS(p)->counters[DP_PORT_TX_BYTES] += bytes;
	return sent;
}

/* Frames of queue @p q held back by a full TX ring go first, in order. @return frames sent. */
static unsigned int
txq_flush(struct dp_port *p, uint16_t q)
{
	struct dp_txq *t = &p->txq[q];
	uint16_t sent;

	if (t->n == 0)
		return 0;
	sent = tx_burst(p, q, t->pending, t->n);
	if (sent) {
		memmove(t->pending, t->pending + sent, (t->n - sent) * sizeof(t->pending[0]));
		t->n = (uint16_t)(t->n - sent);
		t->since = rte_get_tsc_cycles();
	} else if (rte_get_tsc_cycles() - t->since > rte_get_tsc_hz() / 1000 * DP_TX_STALL_MS) {
		PS(p)->counters[DP_PORT_TX_STALLED] += t->n;
		rte_pktmbuf_free_bulk(t->pending, t->n);
		t->n = 0;
		t->stalled = 1;
	}
	return sent;
}

/* The TX queues the calling lcore sends on: its engine's, or all of them. */
static inline void
my_queues(const struct dp_port *p, uint16_t *lo, uint16_t *hi)
{
	int e = RTE_PER_LCORE(engine);

	*lo = e >= 0 ? (uint16_t)e : 0;
	*hi = e >= 0 ? (uint16_t)(e + 1) : p->cfg->tx_queues;
}

/*
 * An idle lcore's zero-copy ports: a NIC's PMD frees the frames it has sent only in a later
 * rte_eth_tx_burst(), and a frame not freed keeps its send from completing (holds.h). With
 * nothing more to send, nothing would free them: the device is asked to, at most every
 * 20 us per queue. (Ring, memif and AF_PACKET ports free a frame as they take it, and say
 * they cannot: not asked again.)
 */
static void
tx_reclaim(struct dp_ctx *ctx)
{
	uint64_t now = rte_get_tsc_cycles(), gap = rte_get_tsc_hz() / 50000;

	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct dp_port *p = &ctx->ports[i];
		uint16_t lo, hi;

		if (!p->zero_copy || p->stopped)
			continue;
		my_queues(p, &lo, &hi);
		for (uint16_t q = lo; q < hi; q++) {
			struct dp_txq *t = &p->txq[q];

			if (t->no_cleanup || now - t->cleaned < gap)
				continue;
			t->cleaned = now;
			if (rte_eth_tx_done_cleanup(p->port_id, q, 0) == -ENOTSUP)
				t->no_cleanup = 1;
		}
	}
}

static unsigned int
tx_flush(struct dp_port *p)
{
	unsigned int sent = 0;
	uint16_t lo, hi;

	my_queues(p, &lo, &hi);
	for (uint16_t q = lo; q < hi; q++)
		sent += txq_flush(p, q);
	return sent;
}

/*
 * The TX queue of a frame: its UDP source port (RoCEv2 derives it from the destination
 * QPN, so each channel of a connection has its own) modulo the queues. Frames that are not
 * UDP over IP (ARP, from the exception port) take queue 0.
 */
static uint16_t
tx_queue_of(const struct rte_mbuf *m, uint16_t nq)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t off = RTE_ETHER_HDR_LEN, len = m->data_len;
	uint16_t type;

	if (len < off + 4)
		return 0;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		type = (uint16_t)(f[16] << 8 | f[17]);
		off += 4;
	}
	if (type == RTE_ETHER_TYPE_IPV4 && len >= off + 20 && f[off + 9] == IPPROTO_UDP)
		off += (uint32_t)(f[off] & 0x0F) * 4;
	else if (type == RTE_ETHER_TYPE_IPV6 && len >= off + 40 && f[off + 6] == IPPROTO_UDP)
		off += 40;
	else
		return 0;
	if (len < off + 2)
		return 0;
	return (uint16_t)((f[off] << 8 | f[off + 1]) % nq);
}

/* Room for a burst in the port's TX path (the ring, then the pending frames). */
static inline int
tx_has_room(const struct dp_port *p, unsigned int burst)
{
	unsigned int pending = 0;
	uint16_t lo, hi;

	my_queues(p, &lo, &hi);
	for (uint16_t q = lo; q < hi; q++)
		pending += p->txq[q].n;
	return pending + burst <= DP_TX_PENDING;
}

/* Frames for TX queue @p q: after the ones waiting, in order. */
static void
txq_send(struct dp_port *p, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	struct dp_txq *t = &p->txq[q];
	uint16_t sent = 0, keep;

	txq_flush(p, q);
	if (t->n == 0)
		sent = tx_burst(p, q, m, n);
	if (unlikely(t->stalled)) {
		/* a stalled device: what it does not take now is dropped, until it takes one */
		if (sent == 0) {
			PS(p)->counters[DP_PORT_TX_STALLED] += n;
			rte_pktmbuf_free_bulk(m, n);
			return;
		}
		t->stalled = 0;
	}
	/* what the ring did not take waits in order; beyond that the frames are dropped */
	keep = (uint16_t)(n - sent);
	if (keep > DP_TX_PENDING - t->n)
		keep = (uint16_t)(DP_TX_PENDING - t->n);
	if (t->n == 0 && keep != 0)
		t->since = rte_get_tsc_cycles();	/* (the stall clock starts) */
	memcpy(t->pending + t->n, m + sent, keep * sizeof(m[0]));
	t->n = (uint16_t)(t->n + keep);
	if (sent + keep < n) {
		PS(p)->counters[DP_PORT_TX_FULL] += n - sent - keep;
		rte_pktmbuf_free_bulk(m + sent + keep, n - sent - keep);
	}
}

/* Frames out of port @p p, timed as the TX stage from @p t0. @return the time it ended. */
static uint64_t
tx_port(struct dp_ctx *ctx, struct dp_port *p, struct rte_mbuf **m, uint16_t n, uint64_t t0)
{
	uint16_t nq = p->cfg->tx_queues;

	for (uint16_t i = 0; unlikely(p->capture != NULL) && i < n; i++)
		dp_capture(p, m[i], dp_now_ns(ctx));
	if (RTE_PER_LCORE(engine) >= 0) {
		/* an engine sends on its own queue: the peer's engine of that number owns the
		 * connection (queue-per-queue steering, docs/configuration.md) */
		txq_send(p, (uint16_t)RTE_PER_LCORE(engine), m, n);
	} else if (nq == 1) {
		txq_send(p, 0, m, n);
	} else {
		/* grouped by queue (a counting sort), each queue's frames in their order */
		struct rte_mbuf *byq[DP_BURST_MAX];
		uint16_t qof[DP_BURST_MAX], start[DP_MAX_QUEUES + 1] = { 0 }, at[DP_MAX_QUEUES];

		for (uint16_t i = 0; i < n; i++) {
			qof[i] = tx_queue_of(m[i], nq);
			start[qof[i] + 1]++;
		}
		for (uint16_t q = 0; q < nq; q++) {
			start[q + 1] = (uint16_t)(start[q + 1] + start[q]);
			at[q] = start[q];
		}
		for (uint16_t i = 0; i < n; i++)
			byq[at[qof[i]]++] = m[i];
		for (uint16_t q = 0; q < nq; q++)
			if (start[q + 1] > start[q])
				txq_send(p, q, byq + start[q], (uint16_t)(start[q + 1] - start[q]));
	}
	return stage_add(ctx, DP_STAGE_TX, t0, n);
}

/*
 * A zero-copy frame for a link that corrupts: a copy in one mbuf, so the flipped bit lands
 * in the copy and never in the application's buffer. @return it, or NULL (counted).
 */
static struct rte_mbuf *
linearize(struct dp_ctx *ctx, struct dp_port *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, frame_pool(ctx), 0, UINT32_MAX);

	rte_pktmbuf_free(m);
	if (c == NULL || c->nb_segs != 1) {
		PS(p)->counters[DP_PORT_NO_MBUF]++;
		rte_pktmbuf_free(c);
		return NULL;
	}
	return c;
}

/*
 * The path of a link with @p npaths paths that frame @p m takes: by its UDP source port,
 * as an ECMP router hashes (link_emu_path_of()); a frame that is not UDP over IP in its
 * first segment takes path 0.
 */
static inline unsigned int
path_of(const struct rte_mbuf *m, unsigned int npaths)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned int l3, ihl, len = rte_pktmbuf_data_len(m);

	if (npaths < 2 || len < 18)
		return 0;
	l3 = f[12] == 0x81 && f[13] == 0x00 ? 18 : 14;
	if (len < l3 + 40)
		return 0;
	if (f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && (f[l3] >> 4) == 4 && f[l3 + 9] == 17)
		ihl = (f[l3] & 0xF) * 4u;
	else if (f[l3 - 2] == 0x86 && f[l3 - 1] == 0xDD && (f[l3] >> 4) == 6 && f[l3 + 6] == 17)
		ihl = 40;
	else
		return 0;
	if (len < l3 + ihl + 2)
		return 0;
	return link_emu_path_of((uint16_t)(f[l3 + ihl] << 8 | f[l3 + ihl + 1]), npaths);
}

/* A frame the dataplane built is a data frame (RDMA WRITE), not a control message. */
static inline int
is_data_frame(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned int l3 = f[12] == 0x81 && f[13] == 0x00 ? 18 : 14;
	unsigned int ihl = (f[l3] >> 4) == 6 ? 40 : (f[l3] & 0xF) * 4u;

	/* the headers are in the first segment (our own frames, or zero-copy's header mbuf) */
	return rte_pktmbuf_data_len(m) > l3 + ihl + ROCE_UDP_LEN &&
	       f[l3 + ihl + ROCE_UDP_LEN] == ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
}

/*
 * Port @p p's frames go to its device as they are made: it has no link emulator, or each
 * of its paths is transparent (wan=off), so link_emu_pass() gives them back at once. (A
 * path with copies still queued holds its frames until link_flush() finds room.)
 */
static int
tx_direct(const struct dp_port *p)
{
	struct link_emu *const *paths = link_of(p);

	for (unsigned int k = 0; paths != NULL && k < p->npaths; k++)
		if (!link_emu_transparent(paths[k]))
			return 0;
	return 1;
}

/*
 * Send through the port's link emulator if it has one: each frame on its path, or, where
 * every path is transparent (tx_direct()), straight to the device while its path is empty.
 * Timed as the link_emulator and TX stages from @p t0 (the clock the caller read last).
 * @return the time it ended.
 */
static uint64_t
egress(struct dp_ctx *ctx, struct dp_port *p, struct rte_mbuf **m, uint16_t n, uint64_t now,
       uint64_t t0)
{
	struct link_emu *const *paths = link_of(p);
	struct rte_mbuf *direct[DP_BURST_MAX];
	uint16_t nd = 0;
	int tight = -1, pass;

	if (paths == NULL)
		return tx_port(ctx, p, m, n, t0);
	/* only where every path is transparent does output_stage() wait for the device */
	pass = tx_direct(p);
	if (pass && p->npaths == 1) {
		/* one transparent path (wan=off): the whole burst straight on, counted once */
		uint32_t max_len = 0;
		uint64_t bytes = 0;

		for (uint16_t i = 0; i < n; i++) {
			bytes += m[i]->pkt_len;
			max_len = RTE_MAX(max_len, m[i]->pkt_len);
		}
		if (link_emu_pass_burst(paths[0], n, bytes, max_len))
			return tx_port(ctx, p, m, n, stage_add(ctx, DP_STAGE_LINK, t0, n));
	}
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *copy[2] = { m[i], NULL };
		struct link_emu *le = paths[path_of(m[i], p->npaths)];
		int k;

		/* a transparent link with nothing queued (wan=off): straight to the device */
		if (pass && link_emu_pass(le, m[i]->pkt_len)) {
			direct[nd++] = m[i];
			continue;
		}
		/*
		 * An emulated link holds its frames in the dataplane's own mbufs. Were it let
		 * take the last of them, the far end's ACKs would find none, every chunk would
		 * time out and be sent again into the full link: a collapse that lasts as long
		 * as the sender keeps retransmitting. Below the reserve, data frames are dropped
		 * as a full router queue drops them (counted), and control frames still go.
		 * (Looked at once per burst, and only for a burst that meets the queue.)
		 */
		if (tight < 0)
			tight = rte_mempool_avail_count(frame_pool(ctx)) < ctx->link_reserve;
		if (unlikely(tight) && is_data_frame(m[i])) {
			PS(p)->counters[DP_PORT_LINK_RESERVE]++;
			rte_pktmbuf_free(m[i]);
			continue;
		}
		if (unlikely(m[i]->nb_segs > 1 && link_emu_get_config(le)->corrupt > 0) &&
		    (copy[0] = linearize(ctx, p, m[i])) == NULL)
			continue;
		k = link_emu_admit(le, copy[0]->pkt_len);
		if (k == 2)
			copy[1] = rte_pktmbuf_copy(copy[0], frame_pool(ctx), 0, UINT32_MAX);
		if (k <= 0) {
			rte_pktmbuf_free(copy[0]);
			continue;
		}
		for (int c = 0; c < k; c++) {
			/* a clone that could not be made is counted by the emulator; only a frame
			 * in one piece is given to it to corrupt (a chain: only where it cannot) */
			if (copy[c] != NULL &&
			    link_emu_enqueue(le, now, copy[c], copy[c]->pkt_len,
					     copy[c]->nb_segs == 1 ?
					     rte_pktmbuf_mtod(copy[c], uint8_t *) : NULL) != 0)
				rte_pktmbuf_free(copy[c]);
		}
	}
	t0 = stage_add(ctx, DP_STAGE_LINK, t0, n);
	return nd != 0 ? tx_port(ctx, p, direct, nd, t0) : t0;
}

/*
 * Frames that are not RoCEv2, out of exception port @p x. One that came in several
 * segments (a receive buffer smaller than the frame) goes in one piece where @p x cannot
 * send chains (a copy); one too big for a single mbuf is dropped then (counted).
 */
static void
to_exception(struct dp_ctx *ctx, struct dp_port *x, struct rte_mbuf **m, uint16_t n, uint64_t now)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (unlikely(m[i]->nb_segs > 1 && !x->multi_seg)) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m[i], frame_pool(ctx), 0, UINT32_MAX);

			rte_pktmbuf_free(m[i]);
			if (c == NULL || c->nb_segs != 1) {
				PS(x)->counters[DP_PORT_EXC_CHAIN]++;
				rte_pktmbuf_free(c);
				continue;
			}
			m[i] = c;
		}
		m[k++] = m[i];
	}
	if (k != 0)
		egress(ctx, x, m, k, now, rte_get_tsc_cycles());
}

/* Packets whose time on the emulated link is over. */
static unsigned int
link_flush(struct dp_ctx *ctx, struct dp_port *p, uint64_t now, unsigned int burst)
{
	struct link_emu *const *paths = link_of(p);
	void *out[DP_BURST_MAX];
	unsigned int n, total = 0;

	if (paths == NULL)
		return 0;
	/* a full device holds the frames in the emulator's queue, where they wait their turn;
	 * each path's frames in their own order (paths do not wait for each other) */
	for (unsigned int k = 0; k < p->npaths; k++)
		while (tx_has_room(p, burst) &&
		       (n = link_emu_dequeue(paths[k], now, out, burst)) > 0) {
			tx_port(ctx, p, (struct rte_mbuf **)out, (uint16_t)n, rte_get_tsc_cycles());
			total += n;
			if (n < burst)
				break;
		}
	return total;
}

/*
 * --log-drops: one line on standard error for each of the first cfg.log_drops frames the
 * ports drop, with the reason (a port counter's name, or the parser's verdict) and the frame
 * as sdr-dump shows it (roce_format_view()). Off (0), a drop costs one predicted branch.
 */
static void
log_drop(struct dp_ctx *ctx, const struct dp_port *p, const uint8_t *frame,
	 const struct roce_view *v, enum roce_verdict r, const char *reason)
{
	char line[ROCE_FORMAT_MAX];

	if (__atomic_load_n(&ctx->drops_logged, __ATOMIC_RELAXED) >= ctx->cfg.log_drops ||
	    __atomic_fetch_add(&ctx->drops_logged, 1, __ATOMIC_RELAXED) >= ctx->cfg.log_drops)
		return;
	fprintf(stderr, "sdr-dataplane: port %s dropped a frame (%s): %s\n", p->cfg->name, reason,
		frame != NULL ? roce_format_view(line, sizeof(line), frame, v, r, NULL) :
		"(no data)");
}

/* A parsed packet the port drops (counter @p c). @return NULL */
static struct dp_conn *
port_drop(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v,
	  enum dp_port_counter c)
{
	PS(p)->counters[c]++;
	if (unlikely(ctx->cfg.log_drops))
		log_drop(ctx, p, v->frame, v, ROCE_V_OK, dp_port_counter_name(c));
	return NULL;
}

/* port_drop() where @p count, else no connection for @p v and nothing counted */
static struct dp_conn *
refuse(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v, int count,
       enum dp_port_counter c)
{
	return count ? port_drop(ctx, p, v, c) : NULL;
}

/*
 * mode = engines: another engine's table of port @p p has QPN @p qpn (a packet steered to
 * the wrong queue, not one nobody owns). That engine may be changing its table meanwhile
 * (a connection added or deleted): read under its sequence count. Only for packets dropped
 * anyway.
 */
static __rte_noinline int
others_qpn(const struct dp_ctx *ctx, const struct dp_port *p, uint32_t qpn)
{
	int me = RTE_PER_LCORE(engine);

	for (unsigned int e = 0; me >= 0 && e < ctx->cfg.engines; e++) {
		uint32_t ci, base, sn;
		int found;

		if ((int)e == me)
			continue;
		do {
			sn = seqcount_read_begin(&p->eqpns_seq[e]);
			found = qpn_table_lookup(p->eqpns[e], qpn, &ci, &base) == 0;
		} while (seqcount_read_retry(&p->eqpns_seq[e], sn));
		if (found)
			return 1;
	}
	return 0;
}

/*
 * The connection a parsed packet is for, once the port's and the connection's checks pass
 * (each failure counted). @return it, with the packet's kind and generation, or NULL.
 */
static struct dp_conn *
resolve(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v, enum sdr_qpn_kind *kind, uint32_t *gen,
	int count)
{
	const uint8_t *src = v->frame + v->l3_off + (v->ip_version == 4 ? 12 : 8);
	const struct dp_conn_cfg *cc;
	uint32_t ci, base, ch;
	struct dp_conn *c;

	if (unlikely(p->cfg->nallow) && !source_allowed(p->cfg, v->ip_version, src))
		return refuse(ctx, p, v, count, DP_PORT_NOT_ALLOWED);
	if (qpn_table_lookup(RTE_PER_LCORE(engine) > 0 ? p->eqpns[RTE_PER_LCORE(engine)] : p->qpns,
			     v->dqpn, &ci, &base) != 0)
		return refuse(ctx, p, v, count, others_qpn(ctx, p, v->dqpn) ? DP_PORT_WRONG_ENGINE :
					    DP_PORT_UNKNOWN_QPN);
	c = &ctx->conns[ci];
	if (unlikely(RTE_PER_LCORE(engine) >= 0 && c->engine != (unsigned int)RTE_PER_LCORE(engine))) {
		/* steered to another engine's queue: its state is not ours to touch */
		return refuse(ctx, p, v, count, DP_PORT_WRONG_ENGINE);
	}
	cc = c->cfg;
	/* the connection's peer, and nobody else, may address its QPNs */
	if (cc->peer_check) {
		if (v->ip_version != cc->peer_ip_version ||
		    memcmp(src, cc->peer_ip, v->ip_version == 4 ? 4 : 16) != 0)
			return refuse(ctx, p, v, count, DP_PORT_WRONG_PEER);
		if ((v->pkey & 0x7FFF) != ((cc->ep.path.pkey ? cc->ep.path.pkey : 0xFFFF) & 0x7FFF))
			return refuse(ctx, p, v, count, DP_PORT_WRONG_PKEY);
	}
	if (v->udp_sport < cc->sport_lo || v->udp_sport > cc->sport_hi)
		return refuse(ctx, p, v, count, DP_PORT_WRONG_SPORT);
	*kind = sdr_conn_qpn_decode(base, &c->cfg->ep.attr, v->dqpn, &ch, gen);
	return c;
}

/* Hand one parsed packet to its connection. */
static void
deliver(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v, uint64_t now)
{
	enum sdr_qpn_kind kind;
	struct dp_conn *c;
	uint32_t gen;

	c = resolve(ctx, p, v, &kind, &gen, 1);
	if (c != NULL)
		sdr_ep_input(c->ep, v, kind, gen, now);
}

/*
 * deliver() of a frame parsed without its ICRC (in one buffer, or a chain whose parse left
 * it: ROCE_PARSE_ICRC_LATER): a data packet's is checked as its payload is placed
 * (sdr_ep_input_unchecked(): one pass over the bytes). A frame that finds no connection
 * has it checked before the reason counts, so that a corrupted frame counts as bad_icrc
 * whatever its bits now say, as when the parser checks it.
 * @return ROCE_V_OK, or ROCE_V_BAD_ICRC (nothing else counted).
 */
static enum roce_verdict
deliver_unchecked(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v, uint64_t now)
{
	enum sdr_qpn_kind kind;
	struct dp_conn *c;
	uint32_t gen;

	c = resolve(ctx, p, v, &kind, &gen, 0);
	if (c == NULL) {
		if (!roce_icrc_check(v))
			return ROCE_V_BAD_ICRC;
		(void)resolve(ctx, p, v, &kind, &gen, 1);	/* why, counted */
		return ROCE_V_OK;
	}
	return sdr_ep_input_unchecked(c->ep, v, kind, gen, now) ? ROCE_V_OK : ROCE_V_BAD_ICRC;
}

/*
 * Split pipeline: one parsed packet from receive worker @p k to its connection. With
 * placement = workers a data packet that passes its connection's checks is claimed and its
 * payload copy handed back to the worker, which received it (the frame is in its cache);
 * the rest is delivered here. @p in_place: @p v points into @p m (one segment, or a chain
 * parsed where it lies), not into this lcore's scratch, so the worker can copy from it.
 * @return 1 if @p m went to the worker.
 */
static int
deliver_or_offer(struct dp_ctx *ctx, struct dp_port *p, const struct roce_view *v, struct rte_mbuf *m,
		 int in_place, unsigned int k, uint64_t now)
{
	struct dp_copies *cp = &ctx->copies[k];
	enum sdr_qpn_kind kind;
	struct dp_copy *j;
	struct dp_conn *c;
	uint32_t gen;

	c = resolve(ctx, p, v, &kind, &gen, 1);
	if (c == NULL)
		return 0;
	/* a chain copied into this lcore's scratch is placed here, as is a packet that finds
	 * every job of its worker out */
	if (!ctx->cfg.place_workers || kind != SDR_QPN_DATA || !in_place || cp->nfree == 0) {
		sdr_ep_input(c->ep, v, kind, gen, now);
		return 0;
	}
	j = &cp->jobs[cp->free[cp->nfree - 1]];
	if (!sdr_ep_input_claim(c->ep, v, kind, gen, now, &j->cl))
		return 0;
	cp->nfree--;
	j->m = m;
	j->ep = c->ep;
	rte_ring_sp_enqueue(cp->todo, j);	/* (it holds every job) */
	ctx->copies_out++;
	return 1;
}

/* Receive worker @p k: the payload copies the main lcore handed it, then back to it. */
static unsigned int
copy_run(struct dp_ctx *ctx, unsigned int k)
{
	struct dp_copies *cp = &ctx->copies[k];
	struct dp_copy *j[DP_BURST_MAX];
	unsigned int n = rte_ring_sc_dequeue_burst(cp->todo, (void **)j, DP_BURST_MAX, NULL);
	uint64_t t0 = rte_get_tsc_cycles();

	if (n == 0)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		rte_memcpy(j[i]->cl.dst, j[i]->cl.src, j[i]->cl.len);
		rte_pktmbuf_free(j[i]->m);
	}
	rte_ring_sp_enqueue_burst(cp->done, (void **)j, n, NULL);	/* (it holds every job) */
	stage_add(ctx, DP_STAGE_COPY, t0, n);
	return n;
}

/* Main lcore: copies the receive workers made, committed to their endpoints. */
static unsigned int
copies_commit(struct dp_ctx *ctx, uint64_t now)
{
	unsigned int total = 0;

	for (unsigned int k = 0; ctx->copies_out && k < ctx->cfg.rx_lcores; k++) {
		struct dp_copies *cp = &ctx->copies[k];
		struct dp_copy *j[DP_BURST_MAX];
		unsigned int n = rte_ring_sc_dequeue_burst(cp->done, (void **)j, DP_BURST_MAX,
							   NULL);
		uint64_t t0;

		if (n == 0)
			continue;
		t0 = rte_get_tsc_cycles();
		for (unsigned int i = 0; i < n; i++) {
			sdr_ep_input_commit(j[i]->ep, &j[i]->cl, now);
			cp->free[cp->nfree++] = j[i]->idx;
		}
		ctx->copies_out -= n;
		/* the second half of packets the stage counted already */
		stage_account(ctx, DP_STAGE_DELIVER, t0, 0, 0, 1);
		total += n;
	}
	return total;
}

/* A received chain of more segments than this is copied to be parsed (a NIC that splits
 * headers or scatters a frame makes a few; the receive pools hold a whole frame, and the
 * memif PMD joins a frame its small buffers carry into one of them). */
#define DP_RX_SEGS 8

/*
 * frame_parse() of a chain: in place where roce_parse_sg() can (the headers in the first
 * segment, the payload in one: a zero-copy sender's frame, a NIC's header split), else
 * copied whole into this lcore's scratch, which roce_parse_rw() may write.
 */
static enum roce_verdict
chain_parse(struct worker *w, struct dp_port *p, const struct rte_mbuf *m, unsigned int flags,
	    struct roce_view *v, const uint8_t **data)
{
	struct roce_seg seg[DP_RX_SEGS];
	unsigned int n = 0, count = w->role != DP_WORKER_TX;	/* (else the receive worker
								 * counted it) */
	enum roce_verdict r;
	const void *copy;

	for (const struct rte_mbuf *s = m; s != NULL && n < DP_RX_SEGS; s = s->next)
		seg[n++] = (struct roce_seg){ .data = rte_pktmbuf_mtod(s, const uint8_t *),
					      .len = s->data_len };
	*data = seg[0].data;
	if (m->nb_segs <= DP_RX_SEGS && roce_parse_sg(seg, n, flags, v, &r)) {
		PS(p)->counters[DP_PORT_MULTISEG_IN_PLACE] += count;
		return r;
	}
	if (m->pkt_len > sizeof(w->scratch)) {
		PS(p)->counters[DP_PORT_TOO_BIG]++;
		*data = NULL;
		return ROCE_V_TRUNC_ETH;
	}
	PS(p)->counters[DP_PORT_MULTISEG] += count;
	copy = rte_pktmbuf_read(m, 0, m->pkt_len, w->scratch);
	*data = copy;
	/* only the scratch copy is ours to write: a chain whose first segment holds the
	 * whole frame is read in place, and may be shared */
	return copy == w->scratch ? roce_parse_rw(w->scratch, m->pkt_len, flags, v) :
				    roce_parse(copy, m->pkt_len, flags, v);
}

/*
 * Parse received frame @p m, the ICRC with @p flags. One segment is parsed where it lies,
 * the ICRC in place (roce_parse_rw()) where this lcore alone holds it: a direct mbuf
 * nobody else references. *data is the frame's first byte for a drop's log line, NULL
 * when a chain was too big to copy (counted; the verdict then counts nowhere).
 */
static inline enum roce_verdict
frame_parse(struct worker *w, struct dp_port *p, struct rte_mbuf *m, unsigned int flags,
	    struct roce_view *v, const uint8_t **data)
{
	uint8_t *d;

	if (unlikely(m->nb_segs != 1))
		return chain_parse(w, p, m, flags, v, data);
	d = rte_pktmbuf_mtod(m, uint8_t *);
	*data = d;
	if (RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1)
		return roce_parse_rw(d, m->pkt_len, flags, v);
	return roce_parse(d, m->pkt_len, flags, v);
}

/* Receive stage: poll, parse (ICRC with @p flags), deliver or pass on. */
static unsigned int
rx_stage(struct dp_ctx *ctx, struct worker *w, unsigned int pi, uint64_t now, unsigned int flags, struct rte_ring *out)
{
	struct dp_port *p = &ctx->ports[pi];
	struct dp_port_stats *ps = PS(p);
	struct rte_mbuf *m[DP_BURST_MAX], *keep[DP_BURST_MAX], *exc[DP_BURST_MAX];
	struct rte_mbuf *done[DP_BURST_MAX];
	unsigned int total = 0, burst = ctx->cfg.burst, nq;
	int one_pass = out == NULL && (flags & ROCE_PARSE_VERIFY_ICRC) && roce_icrc_one_pass();

	/* this worker's queues of the port: rx_index, rx_index + rx_count, ... */
	if (w->rx_index >= p->cfg->rx_queues)
		return 0;
	nq = (p->cfg->rx_queues - w->rx_index + w->rx_count - 1) / w->rx_count;
	/* a queue is drained up to RX_BURSTS bursts per loop, so receiving keeps pace with
	 * a loop that may send several bursts */
	for (unsigned int it = 0; it < RX_BURSTS * nq; it++) {
		uint16_t q = (uint16_t)(w->rx_index + (it % nq) * w->rx_count);
		uint64_t t0 = rte_get_tsc_cycles();
		uint16_t n = rte_eth_rx_burst(p->port_id, q, m, (uint16_t)burst);
		unsigned int nkeep = 0, nexc = 0, ndone = 0;

		t0 = stage_add(ctx, DP_STAGE_RX, t0, n);
		if (n == 0) {
			if (nq == 1)
				break;
			continue;
		}
		total += n;
		ps->counters[DP_PORT_RX_PKTS] += n;
		for (uint16_t i = 0; i < n; i++) {
			struct roce_view v;
			enum roce_verdict r;
			const uint8_t *data;
			int defer;

			/* one clock read per stage: each starts when the one before it ended (a
			 * dropped frame's count and log line go to the next frame's parse) */
			ps->counters[DP_PORT_RX_BYTES] += m[i]->pkt_len;
			if (unlikely(p->capture != NULL)) {
				dp_capture(p, m[i], now);
				t0 = rte_get_tsc_cycles();
			}
			/* a long frame placed here has its ICRC checked as its payload is copied
			 * (deliver_unchecked()), not before: in one buffer, or a chain whose pad
			 * is where that copy finds it (a zero-copy sender's, ROCE_PARSE_ICRC_LATER;
			 * any other has it checked as it is parsed) */
			defer = one_pass && m[i]->pkt_len >= ROCE_ICRC_COPY_MIN_FRAME;
			r = frame_parse(w, p, m[i], defer ? (flags & ~ROCE_PARSE_VERIFY_ICRC) |
							    ROCE_PARSE_ICRC_LATER : flags,
					&v, &data);
			t0 = stage_add(ctx, DP_STAGE_PARSE, t0, 1);
			if (defer && r == ROCE_V_OK && !v.icrc_checked) {
				r = deliver_unchecked(ctx, p, &v, now);
				t0 = stage_add(ctx, DP_STAGE_DELIVER, t0, 1);
				ps->verdicts[r]++;
				if (r != ROCE_V_OK && unlikely(ctx->cfg.log_drops))
					log_drop(ctx, p, data, &v, r, roce_verdict_name(r));
				done[ndone++] = m[i];
				continue;
			}
			if (data)
				ps->verdicts[r]++;
			if (r != ROCE_V_OK) {
				if (not_roce(r) && p->exception >= 0 && out != NULL) {
					m[i]->port = p->port_id;
					keep[nkeep++] = m[i];	/* the other lcore owns the egress */
					continue;
				}
				if (not_roce(r) && p->exception >= 0) {
					exc[nexc++] = m[i];
					ps->counters[DP_PORT_EXCEPTION]++;
					continue;
				}
				if (not_roce(r))
					ps->counters[DP_PORT_NOT_ROCE]++;
				if (unlikely(ctx->cfg.log_drops))
					log_drop(ctx, p, data, &v, r, roce_verdict_name(r));
				done[ndone++] = m[i];
				continue;
			}
			if (out != NULL) {
				m[i]->port = p->port_id;	/* not every PMD sets it */
				keep[nkeep++] = m[i];
				continue;
			}
			deliver(ctx, p, &v, now);
			t0 = stage_add(ctx, DP_STAGE_DELIVER, t0, 1);
			done[ndone++] = m[i];
		}
		/*
		 * Freed together, once the burst is placed: a zero-copy frame's attached segment
		 * drops its hold with a locked instruction, which waits for every store before
		 * it. One after the last placement copy waits for that copy's stores; the ones
		 * after it find nothing left to wait for.
		 */
		if (ndone) {
			rte_pktmbuf_free_bulk(done, ndone);
			/* the receive path's too: in the cycles of the stage that ended last */
			stage_account(ctx, out != NULL ? DP_STAGE_PARSE : DP_STAGE_DELIVER, t0, 0, 0,
				      1);
		}
		if (nexc)
			to_exception(ctx, &ctx->ports[p->exception], exc, (uint16_t)nexc, now);
		if (nkeep) {
			unsigned int e = rte_ring_sp_enqueue_burst(out, (void **)keep, nkeep, NULL);

			if (e < nkeep) {
				ps->counters[DP_PORT_TX_FULL] += nkeep - e;
				rte_pktmbuf_free_bulk(keep + e, nkeep - e);
			}
		}
	}
	return total;
}

/* One burst of packets parsed (ICRC checked) by receive worker @p k. */
static unsigned int
split_deliver_burst(struct dp_ctx *ctx, struct worker *w, unsigned int k, uint64_t now)
{
	struct rte_mbuf *m[DP_BURST_MAX];
	unsigned int n = rte_ring_sc_dequeue_burst(ctx->split_rings[k], (void **)m, ctx->cfg.burst,
						   NULL);
	uint64_t t0;

	if (n == 0)
		return 0;
	t0 = rte_get_tsc_cycles();
	for (unsigned int i = 0; i < n; i++) {
		struct dp_port *p = &ctx->ports[w->port_of_id[m[i]->port]];
		struct roce_view v;
		const uint8_t *data;

		/* the receive worker checked the ICRC; the headers are parsed again for a view */
		if (frame_parse(w, p, m[i], 0, &v, &data) == ROCE_V_OK) {
			if (deliver_or_offer(ctx, p, &v, m[i], data != w->scratch, k, now))
				m[i] = NULL;	/* the worker frees it after the copy */
		} else if (p->exception >= 0) {
			PS(p)->counters[DP_PORT_EXCEPTION]++;
			t0 = stage_add(ctx, DP_STAGE_DELIVER, t0, 1);
			to_exception(ctx, &ctx->ports[p->exception], &m[i], 1, now); /* (timed) */
			m[i] = NULL;
			t0 = rte_get_tsc_cycles();
			continue;
		}
		t0 = stage_add(ctx, DP_STAGE_DELIVER, t0, 1);
	}
	for (unsigned int i = 0; i < n; i++)
		if (m[i] != NULL)
			rte_pktmbuf_free(m[i]);
	stage_account(ctx, DP_STAGE_DELIVER, t0, 0, 0, 1);	/* (the frees, the backend's too) */
	return n;
}

/*
 * Split pipeline, second half: packets parsed (ICRC checked) by receive worker @p k, up to
 * RX_BURSTS bursts per loop, as the worker receives them.
 */
static unsigned int
split_deliver(struct dp_ctx *ctx, struct worker *w, unsigned int k, uint64_t now)
{
	unsigned int total = 0, n;

	for (int it = 0; it < RX_BURSTS; it++) {
		n = split_deliver_burst(ctx, w, k, now);
		total += n;
		if (n < ctx->cfg.burst)
			break;
	}
	return total;
}

/*
 * At least @p want mbufs in the worker's stash. It is filled to little more than that: the
 * pool hands back the mbufs freed last, still in the caches, and an mbuf taken long before
 * it is built into no longer is (a stash of 256 mbufs of 4 KiB frames is 1 MiB: the
 * copying packetizer took 889 cycles a frame with it, 655 with this). The few more save a
 * pool call per frame where bursts are short (one-packet messages).
 */
static int
refill(struct dp_ctx *ctx, struct worker *w, unsigned int want)
{
	unsigned int top = want + 8 < DP_BURST_MAX ? want + 8 : DP_BURST_MAX;
	struct rte_mempool *mp = frame_pool(ctx);

	if (w->nstash >= want)
		return 0;
	if (rte_pktmbuf_alloc_bulk(mp, w->stash + w->nstash, top - w->nstash) != 0) {
		/* the pool is short: take what it has, one by one */
		while (w->nstash < want) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

			if (m == NULL)
				return -1;
			w->stash_data[w->nstash] = rte_pktmbuf_mtod(m, uint8_t *);
			w->stash[w->nstash++] = m;
		}
		return 0;
	}
	for (unsigned int i = w->nstash; i < top; i++)
		w->stash_data[i] = rte_pktmbuf_mtod(w->stash[i], uint8_t *);
	w->nstash = top;
	return 0;
}

/*
 * [pipeline] fec = lcore: hand the encodes and decodes the endpoint made to the FEC lcore.
 * The rings hold every job of every connection (DP_MAX_FEC_JOBS each), so there is always
 * room; jobs are taken only as far as there is, all the same: a job may run nowhere else
 * (the FEC lcore owns the connection's codec).
 */
static void
fec_hand_out(struct dp_ctx *ctx, struct dp_conn *c)
{
	struct sdr_fec_job *jobs[DP_BURST_MAX];
	unsigned int room;
	uint32_t n;

	while ((room = rte_ring_free_count(ctx->fec_in)) > 0 &&
	       (n = sdr_ep_fec_take(c->ep, jobs, room < DP_BURST_MAX ? room : DP_BURST_MAX)) > 0)
		ctx->fec_out_jobs += rte_ring_sp_enqueue_burst(ctx->fec_in, (void **)jobs, n, NULL);
}

/* Jobs the FEC lcore finished, back to their endpoints. */
static unsigned int
fec_collect(struct dp_ctx *ctx, uint64_t now)
{
	struct sdr_fec_job *jobs[DP_BURST_MAX];
	unsigned int n, total = 0;

	while ((n = rte_ring_sc_dequeue_burst(ctx->fec_out, (void **)jobs, DP_BURST_MAX,
					      NULL)) > 0) {
		for (unsigned int i = 0; i < n; i++)
			sdr_ep_fec_done(sdr_fec_job_ep(jobs[i]), jobs[i], now);
		ctx->fec_out_jobs -= n;
		total += n;
	}
	return total;
}

/*
 * A send context's hold counts its frames alive in 16 bits (rte_mbuf_ext_shared_info): a
 * message of more than this many frames in flight at once (a long emulated link holds
 * tens of ms of them) has its further frames copied, so the count never wraps.
 */
#define DP_HOLD_FRAMES_MAX (UINT16_MAX - 2 * DP_BURST_MAX)

/*
 * Frame @p e into its header mbuf @p m in one piece: the payload copied after the headers.
 * @return where its tail goes.
 */
static uint8_t *
copy_frame(struct dp_port *p, struct rte_mbuf *m, const struct sdr_ep_frame *e)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

	rte_memcpy(f + e->len, e->ext, e->ext_len);
	m->data_len = (uint16_t)(e->len + e->ext_len + e->tail_len);
	m->pkt_len = m->data_len;
	PS(p)->counters[DP_PORT_TX_ZC_COPIED]++;
	return f + e->len + e->ext_len;
}

/*
 * Zero-copy frames of one burst into mbuf chains: the header mbuf, an mbuf attached to the
 * message's bytes under the send's hold (holds.h), an mbuf for the pad and the ICRC. A
 * frame that finds no attach mbufs, or whose hold is full, is copied into its header mbuf
 * instead (counted). A tail the frame has already is written; else tails[i] is set to
 * where frame i's tail goes (NULL: nothing left to do), for icrc_stage().
 * @return the frames with a payload of the send's (zero-copy or copied).
 */
static uint32_t
zero_copy_chain(struct dp_ctx *ctx, struct dp_port *p, struct dp_conn *c, struct rte_mbuf **m,
		const struct sdr_ep_frame *e, uint32_t n, uint8_t **tails)
{
	struct rte_mbuf *att[2 * DP_BURST_MAX];
	struct dp_holds *h = sdr_ep_config(c->ep)->held_arg;
	struct rte_mbuf_ext_shared_info *hold = NULL;
	uint32_t nz = 0, k = 0, run = 0, alive = 0, nd, hold_ctx = 0;
	size_t tail_off;

	for (uint32_t i = 0; i < n; i++)
		nz += e[i].ext != NULL;
	nd = nz;
	/* raw: a chain segment needs few of the fields rte_pktmbuf_reset() writes (below) */
	if (nz && rte_mempool_get_bulk(zc_pool(ctx), (void **)att, 2 * nz) != 0)
		nz = 0;
	/* where a tail mbuf's bytes start: its own buffer (a pool's mbufs come direct) */
	tail_off = sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(zc_pool(ctx)) +
		   RTE_PKTMBUF_HEADROOM;
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf_ext_shared_info *hi;
		struct rte_mbuf *x, *t;

		m[i]->data_len = e[i].len;
		m[i]->pkt_len = e[i].len;
		tails[i] = NULL;
		if (e[i].ext == NULL)
			continue;
		if (e[i].ext_len == 0) {
			/* a message of no bytes: no segment of none (a NIC may refuse one) */
			m[i]->data_len = (uint16_t)(e[i].len + e[i].tail_len);
			m[i]->pkt_len = m[i]->data_len;
			tails[i] = rte_pktmbuf_mtod(m[i], uint8_t *) + e[i].len;
			goto copied;
		}
		if (nz == 0) {
			/* no attach mbufs left: the frame carries a copy, as without zero-copy */
			tails[i] = copy_frame(p, m[i], &e[i]);
			goto copied;
		}
		/*
		 * The hold counts this frame until whichever lcore frees it. A burst's frames
		 * mostly share one send context: one atomic add per run of them, made before
		 * any frame leaves (a locked add per frame also waits for every store before it).
		 */
		if (hold == NULL || e[i].hold != hold_ctx) {
			hi = dp_holds_get(h, e[i].hold);
			if (run != 0)
				rte_mbuf_ext_refcnt_update(hold, (int16_t)run);
			hold = hi;
			hold_ctx = e[i].hold;
			run = 0;
			alive = rte_mbuf_ext_refcnt_read(hold);
		}
		if (alive + run >= DP_HOLD_FRAMES_MAX) {
			tails[i] = copy_frame(p, m[i], &e[i]);
			goto copied;
		}
		run++;
		x = att[k++];
		t = att[k++];
		/*
		 * The next frame's segments, on their way while this one's are written: the
		 * lines below are all it writes (both of the attach mbuf's, the tail's first and
		 * its bytes). Freed on another frame's way out, they are seldom in L1 by now,
		 * and every store below would wait for its line in turn (5 to 17 cycles a
		 * frame here, in runs alternating with the same loop without).
		 */
		if (k + 1 < 2 * nz) {
			rte_prefetch0(att[k]);
			rte_prefetch0(RTE_PTR_ADD(att[k], RTE_CACHE_LINE_SIZE));
			rte_prefetch0(att[k + 1]);
			rte_prefetch0(RTE_PTR_ADD(att[k + 1], tail_off));
		}
		/*
		 * An mbuf fresh from its pool has next = NULL, nb_segs = 1 and refcnt = 1 (what
		 * rte_mbuf_raw_alloc() promises). A segment after the first needs only where
		 * its bytes are and how many: what rte_pktmbuf_attach_extbuf() writes, and its
		 * data_len; the tail its data offset and no flags. Packet-wide fields (pkt_len,
		 * offloads, port) are the first segment's.
		 */
		rte_pktmbuf_attach_extbuf(x, (void *)(uintptr_t)e[i].ext,
					  ctx->iova_va ? (rte_iova_t)(uintptr_t)e[i].ext : RTE_BAD_IOVA,
					  (uint16_t)e[i].ext_len, hold);
		x->ol_flags = RTE_MBUF_F_EXTERNAL;
		x->data_len = (uint16_t)e[i].ext_len;
		t->data_off = RTE_PKTMBUF_HEADROOM;
		t->ol_flags = 0;
		tails[i] = rte_pktmbuf_mtod(t, uint8_t *);
		t->data_len = e[i].tail_len;
		m[i]->next = x;
		x->next = t;
		m[i]->nb_segs = 3;
		m[i]->pkt_len = (uint32_t)e[i].len + e[i].ext_len + e[i].tail_len;
		if (e[i].tail_ready) {
			/* the tail mbuf has room for the whole array (ports.c): one store */
			_Static_assert(sizeof(e[i].tail) <= RTE_CACHE_LINE_SIZE, "zc mbuf room");
			memcpy(tails[i], e[i].tail, sizeof(e[i].tail));
			tails[i] = NULL;
		}
		continue;
copied:
		if (e[i].tail_ready) {
			sdr_ep_frame_tail(&e[i], tails[i]);
			tails[i] = NULL;
		}
	}
	if (run != 0)
		rte_mbuf_ext_refcnt_update(hold, (int16_t)run);
	/* attach mbufs of frames that were copied after all */
	if (k < 2 * nz)
		rte_mempool_put_bulk(zc_pool(ctx), (void **)(att + k), 2 * nz - k);
	PS(p)->counters[DP_PORT_TX_ZERO_COPY] += k / 2;
	return nd;
}

/*
 * One zero-copy burst with data frames in about this many has its frames' ICRC computed
 * apart, after their headers and chains, and timed as the payload_icrc stage: the floor of
 * the send path (crc32 over the payload, which no zero-copy sender can skip) measured on
 * the same kind of bytes in the cache state the send path meets them. The other bursts
 * compute each frame's ICRC as its headers are built (sdr_ep_output_sg()), where that read
 * of the payload overlaps the rest of the work; they are timed in reliability_packetizer.
 * The bursts between two samples are 48 to 79, at random: a fixed period would sample the
 * same burst of each message where messages are a whole number of bursts long.
 */
#define DP_ICRC_SAMPLE_EVERY 64

/* Data bursts until the next sample (icrc_sample_in), a xorshift step of the worker's. */
static unsigned int
icrc_sample_gap(struct worker *w)
{
	uint32_t x = w->icrc_rng ? w->icrc_rng : 0x5d0a11u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	w->icrc_rng = x;
	return DP_ICRC_SAMPLE_EVERY - DP_ICRC_SAMPLE_EVERY / 4 + (x % (DP_ICRC_SAMPLE_EVERY / 2));
}

/*
 * The ICRC of a sampled burst's zero-copy frames over their payloads where they lie, into
 * the tails zero_copy_chain() left: timed as a stage of its own. @return the time it ended
 * (@p t0 if there was nothing to do); *nt the frames it did.
 */
static uint64_t
icrc_stage(struct dp_ctx *ctx, const struct sdr_ep_frame *e, uint8_t *const *tails, uint32_t n,
	   uint64_t t0, uint32_t *nt)
{
	*nt = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (tails[i] != NULL) {
			sdr_ep_frame_tail(&e[i], tails[i]);
			(*nt)++;
		}
	}
	return *nt != 0 ? stage_add(ctx, DP_STAGE_ICRC, t0, *nt) : t0;
}

/*
 * Send stage of one connection: frames from the endpoint into mbufs, out of its port. *tp
 * is when the stage starts (the clock read by the stage before it, one read per call saved)
 * and becomes when it ended. The frames' mbufs are taken from the pool inside the stage:
 * they are the send path's cost too.
 */
static unsigned int
output_stage(struct dp_ctx *ctx, struct worker *w, struct dp_conn *c, uint64_t now,
	     uint64_t *tp)
{
	struct dp_port *p = &ctx->ports[c->port];
	unsigned int burst = ctx->cfg.burst, total = 0;
	uint64_t t0 = *tp;

	for (;;) {
		struct rte_mbuf *out[DP_BURST_MAX], **m;
		uint8_t *tails[DP_BURST_MAX], **frames;
		uint16_t lens[DP_BURST_MAX];
		struct sdr_ep_frame e[DP_BURST_MAX];
		uint32_t n;

		/* backpressure: a port whose device is full gets nothing new; the chunks stay
		 * with the reliability layer until there is room (no self-inflicted loss) */
		if (tx_direct(p) && !tx_has_room(p, burst))
			break;
		if (refill(ctx, w, burst) != 0) {
			PS(p)->counters[DP_PORT_NO_MBUF]++;
			break;
		}
		/* build into the last @burst mbufs of the stash */
		m = w->stash + w->nstash - burst;
		frames = w->stash_data + w->nstash - burst;
		/* (the control service turns it off where a device refused a mapping: dma.h) */
		if (__atomic_load_n(&p->zero_copy, __ATOMIC_RELAXED)) {
			if (w->icrc_sample_in == 0) {
				uint32_t nt;

				n = sdr_ep_output_sg_deferred(c->ep, now, frames, DP_FRAME_ROOM, e,
							      burst);
				zero_copy_chain(ctx, p, c, m, e, n, tails);
				t0 = icrc_stage(ctx, e, tails, n,
						stage_add(ctx, DP_STAGE_OUTPUT, t0, n), &nt);
				if (nt != 0)
					w->icrc_sample_in = icrc_sample_gap(w);
			} else {
				n = sdr_ep_output_sg(c->ep, now, frames, DP_FRAME_ROOM, e, burst);
				if (zero_copy_chain(ctx, p, c, m, e, n, tails) != 0)
					w->icrc_sample_in--;
				/* (every tail comes ready from sdr_ep_output_sg(): none is left) */
				for (uint32_t i = 0; i < n; i++)
					if (unlikely(tails[i] != NULL))
						sdr_ep_frame_tail(&e[i], tails[i]);
				t0 = stage_add(ctx, DP_STAGE_OUTPUT, t0, n);
			}
		} else {
			n = sdr_ep_output(c->ep, now, frames, DP_FRAME_ROOM, lens, burst);
			for (uint32_t i = 0; i < n; i++) {
				m[i]->data_len = lens[i];
				m[i]->pkt_len = lens[i];
			}
			t0 = stage_add(ctx, DP_STAGE_OUTPUT, t0, n);
		}
		if (n == 0)
			break;
		memcpy(out, m, n * sizeof(*m));
		/* the built mbufs leave the stash; the unused ones move down over them */
		memmove(m, m + n, (burst - n) * sizeof(*m));
		memmove(frames, frames + n, (burst - n) * sizeof(*frames));
		w->nstash -= n;
		t0 = egress(ctx, p, out, (uint16_t)n, now, t0);	/* (link_emulator and tx) */
		total += n;
		if (n < burst)
			break;
	}
	if (ctx->fec_in != NULL) {
		fec_hand_out(ctx, c);
		t0 = stage_account(ctx, DP_STAGE_OUTPUT, t0, 0, 0, 1);	/* (send work too) */
	}
	*tp = t0;
	return total;
}

/*
 * Connection @p c is there and the calling lcore's to drive (mode = engines: its engine's).
 * Its entry is published with its endpoint last (dp_conn_install()), so an engine that
 * sees the endpoint sees the engine it belongs to.
 */
static inline int
mine(const struct dp_conn *c)
{
	return __atomic_load_n(&c->ep, __ATOMIC_ACQUIRE) != NULL &&
	       (RTE_PER_LCORE(engine) < 0 || c->engine == (unsigned int)RTE_PER_LCORE(engine));
}

/*
 * How long an idle loop may sleep: until the next timer, at most idle_sleep_us. Only the
 * lcore that owns the endpoints and emulators may look at their timers; the receive lcore
 * of a split pipeline just sleeps idle_sleep_us.
 */
static void
idle_backoff(struct dp_ctx *ctx, uint64_t now, enum dp_worker_role role)
{
	uint64_t next = now + (uint64_t)ctx->cfg.idle_sleep_us * 1000;
	struct timespec ts;

	if (ctx->cfg.idle_sleep_us == 0 || (role != DP_WORKER_RX && (ctx->fec_out_jobs ||
									ctx->copies_out)))
		return;		/* (a FEC job or a payload copy comes back any moment) */
	for (unsigned int i = 0; role != DP_WORKER_RX && i < ctx->nconns; i++) {
		uint64_t t;

		if (!mine(&ctx->conns[i]))
			continue;
		t = sdr_ep_next_time(ctx->conns[i].ep, now);

		if (t < next)
			next = t;
	}
	for (unsigned int i = 0; role != DP_WORKER_RX && i < ctx->nports; i++) {
		struct link_emu *const *paths = link_of(&ctx->ports[i]);

		for (unsigned int k = 0; paths != NULL && k < ctx->ports[i].npaths; k++) {
			uint64_t t = link_emu_next_time(paths[k]);

			if (t < next)
				next = t;
		}
	}
	if (next <= now + 2000)
		return;
	ts.tv_sec = (time_t)((next - now) / 1000000000);	/* (idle_sleep_us is up to 1 s) */
	ts.tv_nsec = (long)((next - now) % 1000000000);
	/* (every poll loop sleeps: the one counter they share, off the packet path) */
	__atomic_fetch_add(&ctx->idle_sleeps, 1, __ATOMIC_RELAXED);
	nanosleep(&ts, NULL);
}

static struct worker workers[RTE_MAX_LCORE];

void
dp_pipeline_run(struct dp_ctx *ctx, enum dp_worker_role role, uint64_t until_tsc)
{
	struct worker *w = &workers[rte_lcore_id()];
	int eng = role >= DP_WORKER_ENGINE ? (int)(role - DP_WORKER_ENGINE) : -1;
	int rx = eng < 0 && role >= DP_WORKER_RX;
	struct rte_ring *out = rx ? ctx->split_rings[role - DP_WORKER_RX] : NULL;

	if (eng >= 0)
		role = DP_WORKER_ALL;	/* everything, for its own queues and connections */
	w->role = rx ? DP_WORKER_RX : role;
	/* engine e polls RX queues e, e + engines, ... of every port */
	w->rx_index = eng >= 0 ? (unsigned int)eng : rx ? (unsigned int)(role - DP_WORKER_RX) : 0;
	w->rx_count = eng >= 0 ? ctx->cfg.engines : rx ? ctx->cfg.rx_lcores : 1;
	RTE_PER_LCORE(slot) = eng >= 0 ? (unsigned int)eng : rx ? 1 + w->rx_index : DP_SLOT_MAIN;
	RTE_PER_LCORE(engine) = eng;
	for (unsigned int i = 0; i < ctx->nports; i++)
		w->port_of_id[ctx->ports[i].port_id] = (uint8_t)i;
	while (!ctx->quit && (until_tsc == 0 || rte_get_tsc_cycles() < until_tsc)) {
		uint64_t now = dp_now_ns(ctx), t0;
		unsigned int work = 0, app;

		if (role != DP_WORKER_TX)
			for (unsigned int i = 0; i < ctx->nports; i++)
				work += rx_stage(ctx, w, i, now, ROCE_PARSE_VERIFY_ICRC, out);
		if (rx) {
			if (ctx->cfg.place_workers)
				work += copy_run(ctx, w->rx_index);
			if (!work)
				idle_backoff(ctx, now, DP_WORKER_RX);
			continue;
		}
		if (eng <= 0)
			ctx->loops++;
		if (role == DP_WORKER_TX) {
			for (unsigned int k = 0; k < ctx->cfg.rx_lcores; k++)
				work += split_deliver(ctx, w, k, now);
			work += copies_commit(ctx, now);
		}
		t0 = rte_get_tsc_cycles();
		app = 0;
		for (unsigned int i = 0; i < ctx->nconns; i++)
			if (ctx->conns[i].traffic && mine(&ctx->conns[i]))
				app += traffic_step(ctx->conns[i].traffic, now);
		/* no packets of its own: busy when it posted, sent or checked something */
		stage_account(ctx, DP_STAGE_APP, t0, 1, 0, app != 0);
		work += app;
		/* the control service: the lcore of engine 0 (engines), or the only one */
		if (eng <= 0)
			work += dp_control_poll(ctx, now);
		else
			work += dp_control_engine_poll(ctx, (unsigned int)eng, now);
		if (ctx->fec_out != NULL)
			work += fec_collect(ctx, now);
		t0 = rte_get_tsc_cycles();
		for (unsigned int i = 0; i < ctx->nconns; i++)
			if (mine(&ctx->conns[i]))
				work += output_stage(ctx, w, &ctx->conns[i], now, &t0);
		for (unsigned int i = 0; i < ctx->nports; i++) {
			work += tx_flush(&ctx->ports[i]);
			work += link_flush(ctx, &ctx->ports[i], now, ctx->cfg.burst);
		}
		if (!work) {
			tx_reclaim(ctx);
			idle_backoff(ctx, now, role);
		}
	}
}

void
dp_pipeline_release(void)
{
	struct worker *w = &workers[rte_lcore_id()];

	rte_pktmbuf_free_bulk(w->stash, w->nstash);
	w->nstash = 0;
}

int
dp_pipeline_worker(void *arg)
{
	const struct dp_worker_launch *l = arg;

	dp_pipeline_run(l->ctx, l->role, 0);
	dp_pipeline_release();
	return 0;
}

void
dp_fec_run(struct dp_ctx *ctx, uint64_t until_tsc)
{
	struct sdr_fec_job *jobs[DP_BURST_MAX];

	RTE_PER_LCORE(slot) = DP_SLOT_FEC;
	while (!ctx->quit && (until_tsc == 0 || rte_get_tsc_cycles() < until_tsc)) {
		unsigned int n = rte_ring_sc_dequeue_burst(ctx->fec_in, (void **)jobs, DP_BURST_MAX,
							   NULL);
		uint64_t t0 = rte_get_tsc_cycles();

		if (n == 0) {
			stage_add(ctx, DP_STAGE_FEC, t0, 0);
			if (ctx->cfg.idle_sleep_us) {
				/* a short nap: a decode waits behind it */
				struct timespec ts = { 0, 1000L * (ctx->cfg.idle_sleep_us < 10 ?
								   ctx->cfg.idle_sleep_us : 10) };

				nanosleep(&ts, NULL);
			}
			continue;
		}
		for (unsigned int i = 0; i < n; i++)
			sdr_fec_job_run(jobs[i]);
		stage_add(ctx, DP_STAGE_FEC, t0, n);
		/* the rings hold every job: the way back has room */
		while (rte_ring_sp_enqueue_bulk(ctx->fec_out, (void **)jobs, n, NULL) == 0 && !ctx->quit)
			rte_pause();
	}
}

int
dp_fec_worker(void *arg)
{
	dp_fec_run(arg, 0);
	return 0;
}
