/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two endpoints joined by an in-memory link that loses, duplicates and reorders real
 * frames (parsed with the real parser): every scheme delivers every byte of every message
 * and the user immediates; completions arrive on both sides.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ec_codec.h"
#include "link_emu.h"
#include "rel_rx.h"
#include "roce_build.h"
#include "rel_tx.h"
#include "roce_parse.h"
#include "sdr_ctrl.h"
#include "sdr_keys.h"
#include "sdr_peer.h"
#include "sdr_tx.h"
#include "sdr_endpoint.h"
#include "sdr_sim.h"

#define QPN_A 0x100
#define QPN_B 0x900
#define FRAME 4400
#define INFLIGHT_FRAMES 20000

struct wire_frame {
	uint64_t t;
	uint16_t len;
	uint8_t to_b;
	uint8_t b[FRAME];
};

struct wire {
	struct wire_frame *f;
	uint32_t n;
	struct sdr_rng rng;
	double loss;
	double dup;
	double reorder;
	uint64_t delay;
	uint64_t lost;
};

/* A path A's frames to B never cross (-1: none), of dead_npaths: the network hashes their
 * UDP source port as the link emulator does */
static int dead_path = -1;
static unsigned int dead_npaths;
static uint64_t dead_frames;

/* The next this many data-sized frames to B are lost (a loss placed by the test). */
static unsigned int drop_to_b;
/* Every frame to A is lost while set. */
static int drop_to_a;

static void
wire_put(struct wire *w, const uint8_t *b, uint16_t len, int to_b, uint64_t now)
{
	int copies = sdr_rng_unit(&w->rng) < w->loss ? 0 : 1;

	if (to_b && drop_to_b && len > 1000) {
		drop_to_b--;
		copies = 0;
	}
	if (!to_b && drop_to_a)
		copies = 0;

	if (to_b && dead_path >= 0 &&
	    link_emu_path_of((uint16_t)(b[34] << 8 | b[35]), dead_npaths) == (unsigned)dead_path) {
		dead_frames++;		/* (IPv4: the UDP source port at 14 + 20) */
		copies = 0;
	}

	if (copies && sdr_rng_unit(&w->rng) < w->dup)
		copies = 2;
	if (!copies)
		w->lost++;
	for (int c = 0; c < copies && w->n < INFLIGHT_FRAMES; c++) {
		struct wire_frame *f = &w->f[w->n++];

		f->t = now + w->delay;
		if (to_b && dead_npaths)	/* paths of different lengths: +100 us each */
			f->t += 100000ull * link_emu_path_of((uint16_t)(b[34] << 8 | b[35]),
							    dead_npaths);
		if (sdr_rng_unit(&w->rng) < w->reorder)
			f->t += (uint64_t)(sdr_rng_unit(&w->rng) * 50000);
		f->len = len;
		f->to_b = (uint8_t)to_b;
		memcpy(f->b, b, len);
	}
}

/* Steering (cfg.steer_*): both ends steer to queue STEER_QUEUE of steer_queues (0: off). */
#define STEER_QUEUE 3
static unsigned int steer_queues;
static unsigned int slot_bits, slot_inflight;	/* message id bits and inflight; 0: defaults */
static unsigned int gens, ack_chunks;		/* generations, ack_every_chunks; 0: defaults */
static int expect_late;		/* run_transfer: late packets must have been answered */
static uint64_t late_previous[5];	/* late_packet_previous seen, by generations (1, 2, 4) */
static int auto_report;		/* scheme auto's loss REPORTs on both sides */
static double wire_dup = 0.02;	/* run_transfer's duplication */
/* scheme changes in run_transfer: a's scheme goes through plan[] every few messages */
static const struct sdr_scheme *switch_plan;
static unsigned int switch_n, switch_every;
static int switch_peer_fixed;	/* b is not set up for changes: it refuses them */
static int switch_peer_chunk;	/* b may change its code but not its chunk: it refuses */
static uint64_t steered_frames;

/*
 * deliver() as the dataplane's own lcore does: the frame parsed without its ICRC and
 * handed to sdr_ep_input_unchecked(); one frame in @c corrupt_every (when set) with a byte
 * of its payload (or, without one, of its PSN) flipped first, which must be refused.
 */
static int unchecked_input;
static uint32_t corrupt_every, corrupt_n, corrupt_refused;

static void
deliver(struct sdr_ep *ep, uint32_t base, const struct sdr_conn_attr *a, const uint8_t *b,
	uint16_t len, uint64_t now)
{
	static uint8_t cb[FRAME];
	struct roce_view v;
	uint32_t ch, gen;
	enum sdr_qpn_kind kind;
	int bad = 0;

	if (unchecked_input) {
		assert_true(len <= sizeof(cb));
		memcpy(cb, b, len);
		assert_int_equal(roce_parse_rw(cb, len, 0, &v), ROCE_V_OK);
		if (corrupt_every && ++corrupt_n % corrupt_every == 0) {
			cb[v.payload_len ? v.payload_off + v.payload_len / 2 : v.bth_off + 11u] ^= 0x40;
			bad = 1;
		}
		kind = sdr_conn_qpn_decode(base, a, v.dqpn, &ch, &gen);
		assert_int_not_equal(kind, SDR_QPN_FOREIGN);
		assert_int_equal(sdr_ep_input_unchecked(ep, &v, kind, gen, now), !bad);
		corrupt_refused += (uint32_t)bad;
		return;
	}
	assert_int_equal(roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	if (steer_queues) {
		/* the receiver's RSS: every frame, data, parity or control, on the owner's queue */
		assert_int_equal(rss_hash_udp(rss_default_key, 4, b + v.l3_off + 12,
					      b + v.l3_off + 16, v.udp_sport, v.udp_dport) %
				 steer_queues, STEER_QUEUE);
		steered_frames++;
	}
	kind = sdr_conn_qpn_decode(base, a, v.dqpn, &ch, &gen);
	assert_int_not_equal(kind, SDR_QPN_FOREIGN);
	sdr_ep_input(ep, &v, kind, gen, now);
}

static void
pattern(uint8_t *p, uint64_t len, uint64_t seq)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seq * 7919) ^ (i >> 8));
}

struct side_cfg {
	struct sdr_ep_cfg a;
	struct sdr_ep_cfg b;
};

static void
make_cfgs(struct side_cfg *c, struct sdr_scheme scheme, uint64_t rtt)
{
	struct sdr_ep_cfg *e[2] = { &c->a, &c->b };

	for (int i = 0; i < 2; i++) {
		memset(e[i], 0, sizeof(*e[i]));
		sdr_conn_attr_default(&e[i]->attr);
		e[i]->attr.mtu = 1024;
		e[i]->attr.chunk_size = 4096;
		e[i]->attr.max_msg_size = 64 * 1024;
		e[i]->attr.max_inflight = 4;
		if (slot_bits) {
			e[i]->attr.split.id_bits = (uint8_t)slot_bits;
			e[i]->attr.split.off_bits = (uint8_t)(28 - slot_bits);
			e[i]->attr.max_inflight = slot_inflight;
		}
		e[i]->attr.channels = 2;
		e[i]->attr.generations = 2;
		if (gens)
			e[i]->attr.generations = (uint8_t)gens;
		e[i]->attr.local_qpn = i == 0 ? QPN_A : QPN_B;
		e[i]->attr.remote_qpn = i == 0 ? QPN_B : QPN_A;
		/* R_Keys per receive, derived from the tags; fixed tags so failures repeat */
		e[i]->tag = i == 0 ? 0xA1A1A1A1A1A1A1A1ull : 0xB2B2B2B2B2B2B2B2ull;
		if (sdr_scheme_is_ec(&scheme)) {
			e[i]->attr.ec_k = scheme.k;
			e[i]->attr.ec_m = scheme.m;
		}
		sdr_rel_cfg_default(&e[i]->rel, rtt);
		e[i]->rel.scheme = scheme;
		e[i]->rel.rate_bps = 10e9;
		e[i]->rel.bucket_bytes = 16384;
		e[i]->rel.ack_every_chunks = ack_chunks ? ack_chunks : 2;
		e[i]->rel.ack_every_ns = 20000;
		e[i]->rel.nack_allowance_ns = 60000;
		e[i]->rel.global_timeout_ns = 0;
		e[i]->path.ip_version = 4;
		e[i]->path.src_ip[0] = 10;
		e[i]->path.src_ip[3] = (uint8_t)(1 + i);
		e[i]->path.dst_ip[0] = 10;
		e[i]->path.dst_ip[3] = (uint8_t)(2 - i);
		e[i]->steer_queues = (uint8_t)steer_queues;
		e[i]->auto_report = (uint8_t)auto_report;
		if (switch_plan != NULL) {
			/* one direction; a parity region and buffers for every code of the plan */
			e[i]->attr.dir = i == 0 ? SDR_DIR_SEND : SDR_DIR_RECV;
			e[i]->rel.scheme_may_change = i == 0 || !switch_peer_fixed;
			for (unsigned int p = 0; p < switch_n; p++) {
				const struct sdr_scheme *x = &switch_plan[p];
				struct sdr_conn_geom g;

				if (!sdr_scheme_is_ec(x))
					continue;
				if (e[i]->attr.ec_k == 0) {
					e[i]->attr.ec_k = (uint16_t)x->k;
					e[i]->attr.ec_m = (uint16_t)x->m;
				}
				sdr_conn_geometry(&e[i]->attr, &g);
				if (sdr_conn_parity_chunks(g.max_data_chunks, x->k, x->m) >
				    e[i]->attr.parity_cap_chunks)
					e[i]->attr.parity_cap_chunks =
						sdr_conn_parity_chunks(g.max_data_chunks, x->k, x->m);
				if (x->m > e[i]->switch_max_m)
					e[i]->switch_max_m = (uint16_t)x->m;
			}
			for (unsigned int p = 0; p < switch_n && !(i == 1 && switch_peer_chunk); p++)
				if (switch_plan[p].chunk_shift > e[i]->attr.max_chunk_shift)
					e[i]->attr.max_chunk_shift = switch_plan[p].chunk_shift;
		}
		e[i]->steer_queue = STEER_QUEUE;
		memcpy(e[i]->steer_key, rss_default_key, RSS_KEY_LEN);
	}
}

static void
teardown(struct wire *w, uint8_t **fr, struct sdr_ep *a, struct sdr_ep *b)
{
	for (int i = 0; i < 32; i++)
		free(fr[i]);
	free(w->f);
	sdr_ep_destroy(a);
	sdr_ep_destroy(b);
}

/* Everything both endpoints have to send now, onto the wire. */
static void
outputs(struct wire *w, struct sdr_ep *a, struct sdr_ep *b, uint8_t *const *fr, uint64_t now)
{
	uint16_t fl[32];
	uint32_t n;

	while ((n = sdr_ep_output(a, now, fr, FRAME, fl, 32)) > 0)
		for (uint32_t i = 0; i < n; i++)
			wire_put(w, fr[i], fl[i], 1, now);
	while ((n = sdr_ep_output(b, now, fr, FRAME, fl, 32)) > 0)
		for (uint32_t i = 0; i < n; i++)
			wire_put(w, fr[i], fl[i], 0, now);
}

/* The frames due by @p now, to their endpoints. */
static void
arrivals(struct wire *w, struct sdr_ep *a, struct sdr_ep *b, const struct side_cfg *c,
	 uint64_t now)
{
	for (uint32_t i = 0; i < w->n;) {
		if (w->f[i].t <= now) {
			struct wire_frame f = w->f[i];

			w->f[i] = w->f[--w->n];
			if (f.to_b)
				deliver(b, QPN_B, &c->b.attr, f.b, f.len, now);
			else
				deliver(a, QPN_A, &c->a.attr, f.b, f.len, now);
		} else {
			i++;
		}
	}
}

/* The next event of the virtual clock: a timer of either endpoint, or a frame arriving. */
static uint64_t
next_event(struct sdr_ep *a, struct sdr_ep *b, const struct wire *w, uint64_t now)
{
	uint64_t t = sdr_ep_next_time(a, now), tb = sdr_ep_next_time(b, now);

	if (tb < t)
		t = tb;
	for (uint32_t i = 0; i < w->n; i++)
		if (w->f[i].t < t)
			t = w->f[i].t;
	return t;
}

/*
 * Streamed sends: the application writes a message chunk by chunk in a random order and
 * declares each chunk ready as it writes it, sometimes declaring a chunk again (a resend).
 * Bytes not yet written are garbage: any chunk sent before it was declared ready would
 * arrive wrong.
 */
struct streamer {
	struct sdr_ep_stream st[64];
	uint8_t *ref[64];		/* what the message must contain */
	uint32_t left[64];		/* chunks not declared yet */
	uint32_t *order[64];		/* declaration order of the chunks */
	uint32_t open;			/* streams started and not ended */
	uint64_t resends;
};

static void
stream_step(struct streamer *s, struct sdr_ep *a, uint8_t *const *src, const uint64_t *lens,
	    uint32_t sent, struct sdr_rng *rng)
{
	for (uint32_t i = 0; i < sent; i++) {
		uint32_t chunk = s->st[i].chunk, n = lens[i] ? (uint32_t)((lens[i] + chunk - 1) / chunk) : 0;
		uint32_t c;
		uint64_t off, len;

		if (s->left[i] == 0 || s->ref[i] == NULL)
			continue;
		c = s->order[i][n - s->left[i]];
		off = (uint64_t)c * chunk;
		len = lens[i] - off < chunk ? lens[i] - off : chunk;
		memcpy(src[i] + off, s->ref[i] + off, len);
		assert_int_equal(sdr_ep_stream_add(a, &s->st[i], off, len), 0);
		if (--s->left[i] == 0) {
			assert_int_equal(sdr_ep_stream_end(a, &s->st[i]), 0);
			s->open--;
		} else if (sdr_rng_unit(rng) < 0.1) {
			/* declare an earlier chunk again: it goes out again if it went out already */
			uint32_t e = s->order[i][sdr_rng_next(rng) % (n - s->left[i])];

			off = (uint64_t)e * chunk;
			len = lens[i] - off < chunk ? lens[i] - off : chunk;
			assert_int_equal(sdr_ep_stream_add(a, &s->st[i], off, len), 0);
			s->resends++;
		}
	}
}

/*
 * Offloaded erasure coding (fec_jobs > 0): a FEC "thread" that takes the jobs of both
 * endpoints and gives each back after a random latency, mostly short, sometimes longer
 * than the RTT (a busy worker), so results come back out of order and some after their
 * message completed by retransmission.
 */
struct fec_pending {
	struct sdr_fec_job *job;
	uint64_t due;
};

struct fec_thread {
	struct fec_pending q[512];
	uint32_t n;
	uint64_t late;			/* results back later than one RTT */
};

static void
fec_take(struct fec_thread *f, struct sdr_ep *ep, struct sdr_rng *rng, uint64_t now,
	 uint64_t rtt)
{
	struct sdr_fec_job *jobs[16];
	uint32_t n;

	while ((n = sdr_ep_fec_take(ep, jobs, 16)) > 0) {
		for (uint32_t i = 0; i < n; i++) {
			uint64_t lat = sdr_rng_unit(rng) < 0.1 ? rtt + sdr_rng_next(rng) % (4 * rtt) :
				       sdr_rng_next(rng) % (rtt / 4);

			assert_true(f->n < 512);
			assert_ptr_equal(sdr_fec_job_ep(jobs[i]), ep);
			f->q[f->n++] = (struct fec_pending){ jobs[i], now + lat };
			f->late += lat > rtt;
		}
	}
}

/* Run and return the jobs due by @p now; @return the next due time (@p now again when a
 * job came back: the endpoints have something new to say). */
static uint64_t
fec_step(struct fec_thread *f, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	int ran = 0;

	for (uint32_t i = 0; i < f->n;) {
		if (f->q[i].due <= now) {
			struct sdr_fec_job *j = f->q[i].job;

			f->q[i] = f->q[--f->n];
			sdr_fec_job_run(j);
			sdr_ep_fec_done(sdr_fec_job_ep(j), j, now);
			ran = 1;
			continue;
		}
		if (f->q[i].due < next)
			next = f->q[i].due;
		i++;
	}
	return ran ? now : next;
}

/*
 * Payload copies on another "thread" (receive workers, sdr_ep_input_claim): B's data
 * packets are claimed on arrival and each copy runs after a random latency, mostly short,
 * sometimes longer than the RTT, so commits come back out of order, some after decoding
 * rebuilt their chunk.
 */
struct copy_pending {
	uint64_t due;
	struct sdr_rx_claim cl;
	uint8_t b[FRAME];		/* the packet, alive until the copy */
};

struct copy_thread {
	struct copy_pending *q;
	uint32_t n;
	uint64_t claimed, late;
};

#define COPIES_MAX 8192

/* A frame for B through the claim path; a claim waits in @p ct for its copy. */
static void
claim_or_input(struct copy_thread *ct, struct sdr_ep *ep, const struct sdr_conn_attr *a,
	       const uint8_t *b, uint16_t len, struct sdr_rng *rng, uint64_t now, uint64_t rtt)
{
	struct copy_pending *p;
	struct roce_view v;
	uint32_t ch, gen;
	enum sdr_qpn_kind kind;
	uint64_t lat;

	assert_true(ct->n < COPIES_MAX);
	p = &ct->q[ct->n];
	memcpy(p->b, b, len);
	assert_int_equal(roce_parse(p->b, len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
	kind = sdr_conn_qpn_decode(QPN_B, a, v.dqpn, &ch, &gen);
	if (!sdr_ep_input_claim(ep, &v, kind, gen, now, &p->cl))
		return;
	assert_ptr_equal(p->cl.src, v.payload);
	lat = sdr_rng_unit(rng) < 0.05 ? rtt + sdr_rng_next(rng) % (2 * rtt) :
	      sdr_rng_next(rng) % (rtt / 8);
	p->due = now + lat;
	ct->late += lat > rtt;
	ct->claimed++;
	ct->n++;
}

/* Copy and commit the claims due by @p now; @return the next due time (@p now when one
 * was committed). */
static uint64_t
copy_step(struct copy_thread *ct, struct sdr_ep *ep, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	int ran = 0;

	for (uint32_t i = 0; i < ct->n;) {
		if (ct->q[i].due <= now) {
			memcpy(ct->q[i].cl.dst, ct->q[i].cl.src, ct->q[i].cl.len);
			sdr_ep_input_commit(ep, &ct->q[i].cl, now);
			/* the last entry moves here; its claim's src moves with its frame */
			if (i != --ct->n) {
				ct->q[i] = ct->q[ct->n];
				ct->q[i].cl.src = ct->q[i].b + (ct->q[ct->n].cl.src - ct->q[ct->n].b);
			}
			ran = 1;
			continue;
		}
		if (ct->q[i].due < next)
			next = ct->q[i].due;
		i++;
	}
	return ran ? now : next;
}

/* No copy still to land in [p, p + len): the application owns that buffer now. */
static void
assert_no_copy_into(const struct copy_thread *ct, const uint8_t *p, uint64_t len)
{
	for (uint32_t i = 0; i < ct->n; i++)
		assert_false(ct->q[i].cl.dst >= p && ct->q[i].cl.dst < p + len);
}

/* A sends @p nmsg messages to B over a lossy wire; every byte and immediate arrives. */
static void
run_transfer_full(struct sdr_scheme scheme, double loss, uint32_t nmsg, uint64_t seed, int stream,
		  uint32_t fec_jobs, int copies)
{
	struct fec_thread *fec = calloc(1, sizeof(*fec));
	struct copy_thread ct = { .q = copies ? malloc(COPIES_MAX * sizeof(*ct.q)) : NULL };
	struct streamer sm = { 0 };
	struct side_cfg c;
	struct sdr_ep *a, *b;
	struct wire w = { .loss = loss, .dup = wire_dup, .reorder = 0.05, .delay = 200000 };
	uint8_t *src[64], *dst[64], *fr[32];
	uint8_t mirror[64][17];		/* the published view: a byte per configured chunk */
	uint64_t lens[64], now = 0;
	uint32_t sent = 0, posted = 0, send_done = 0, recv_done = 0, recv_was, slots[64];
	char name[32];

	assert_true(nmsg <= 64);
	make_cfgs(&c, scheme, 2 * w.delay);
	c.a.fec_jobs = c.b.fec_jobs = fec_jobs;
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, seed);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (uint32_t i = 0; i < nmsg; i++) {
		lens[i] = sdr_rng_next(&w.rng) % (64 * 1024 + 1);
		src[i] = malloc(lens[i] + 1);
		dst[i] = malloc(lens[i] + 1);
		pattern(src[i], lens[i], i);
		memset(dst[i], 0xEE, lens[i] + 1);	/* and a byte past it, never written */
		if (stream) {
			uint32_t n = (uint32_t)((lens[i] + 4095) / 4096);

			sm.ref[i] = src[i];
			src[i] = malloc(lens[i] + 1);
			memset(src[i], 0xA5, lens[i]);
			sm.order[i] = malloc((n + 1) * sizeof(uint32_t));
			for (uint32_t k = 0; k < n; k++)
				sm.order[i][k] = k;
			for (uint32_t k = n; k > 1; k--) {	/* shuffle */
				uint32_t r = (uint32_t)(sdr_rng_next(&w.rng) % k), t = sm.order[i][k - 1];

				sm.order[i][k - 1] = sm.order[i][r];
				sm.order[i][r] = t;
			}
			sm.left[i] = n;
		}
	}
	while ((send_done < nmsg || recv_done < nmsg) && now < 60ull * 1000000000) {
		struct sdr_ep_done d;
		uint64_t t, tb;

		while (posted < nmsg && sdr_ep_recv(b, dst[posted], lens[posted], mirror[posted],
						    posted, now, &slots[posted]) == 0)
			posted++;
		if (stream) {
			while (sent < nmsg && sdr_ep_send_stream(a, src[sent], lens[sent],
								 0xC0DE0000u + sent, sent, now,
								 &sm.st[sent]) == 0) {
				if (sm.left[sent] == 0)	/* an empty message: only its end */
					assert_int_equal(sdr_ep_stream_end(a, &sm.st[sent]), 0);
				else
					sm.open++;
				sent++;
			}
			stream_step(&sm, a, src, lens, sent, &w.rng);
		} else {
			while (sent < nmsg && sdr_ep_send(a, src[sent], lens[sent],
							  0xC0DE0000u + sent, sent, now) == 0) {
				sent++;
				if (switch_plan != NULL && sent % switch_every == 0)
					assert_int_equal(sdr_ep_change_scheme(a, &switch_plan[
						(sent / switch_every - 1) % switch_n], NULL, now), 0);
			}
		}
		outputs(&w, a, b, fr, now);
		if (fec_jobs) {
			fec_take(fec, a, &w.rng, now, 2 * w.delay);
			fec_take(fec, b, &w.rng, now, 2 * w.delay);
		}
		while (sdr_ep_poll(a, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			assert_false(d.is_recv);
			send_done++;
		}
		recv_was = recv_done;
		while (sdr_ep_poll(b, &d)) {
			uint32_t imm = 0;

			assert_int_equal(d.status, SDR_DONE_OK);
			assert_true(d.is_recv);
			assert_no_copy_into(&ct, dst[d.cookie], lens[d.cookie]);
			/* (a zero-length message compares no byte: both buffers' first bytes were
			 * never written) */
			if (lens[d.cookie])
				assert_memory_equal(dst[d.cookie], stream ? sm.ref[d.cookie] :
						    src[d.cookie], lens[d.cookie]);
			assert_int_equal(dst[d.cookie][lens[d.cookie]], 0xEE);
			/* every configured chunk marked, whatever chunk the scheme ran on */
			for (uint64_t k = 0; k < (lens[d.cookie] + 4095) / 4096 || k == 0; k++)
				assert_int_equal(mirror[d.cookie][k], 1);
			/*
			 * 8 packets carry the whole immediate. A fragment whose every packet was
			 * rebuilt by decoding never arrives: EC may answer "retry", never wrong.
			 */
			if (lens[d.cookie] >= 8 * 1024) {
				int rc = sdr_rx_imm_get(sdr_ep_rx(b), d.slot, &imm);

				if (rc == 0)
					assert_int_equal(imm, 0xC0DE0000u + d.cookie);
				else
					assert_true(rc == -EAGAIN && d.decoded > 0 &&
						    (sdr_scheme_is_ec(&scheme) || switch_plan));
			}
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
			recv_done++;
		}
		/* next event: a frame arriving, a timer, an offloaded job or a copy back */
		t = next_event(a, b, &w, now);
		tb = fec_step(fec, now);
		if (tb < t)
			t = tb;
		tb = copies ? copy_step(&ct, b, now) : UINT64_MAX;
		if (tb < t)
			t = tb;
		if (stream && sm.open > 0 && now + 5000 < t)
			t = now + 5000;		/* the application writes the next chunks */
		/* receives released just now: the next ones are posted before the clock moves
		 * (an application posts when it can; no event of the endpoints' waits for it) */
		if (posted < nmsg && recv_done != recv_was)
			t = now;
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		if (copies) {
			/* B's frames through the claim path, A's as usual */
			for (uint32_t i = 0; i < w.n;) {
				struct wire_frame *f = &w.f[i];

				if (f->t > now) {
					i++;
				} else {
					if (f->to_b)
						claim_or_input(&ct, b, &c.b.attr, f->b, f->len, &w.rng,
							       now, 2 * w.delay);
					else
						deliver(a, QPN_A, &c.a.attr, f->b, f->len, now);
					*f = w.f[--w.n];
				}
			}
		}
		arrivals(&w, a, b, &c, now);
	}
	if (send_done != nmsg || recv_done != nmsg)
		fail_msg("%s loss %g seed %" PRIu64 " (%u slots, %u in flight, %u generations, "
			 "ACK every %u chunks): %u/%u sends, %u/%u receives done at %.3f s",
			 sdr_scheme_format(&scheme, name, sizeof(name)), loss, seed,
			 1u << c.a.attr.split.id_bits, c.a.attr.max_inflight, c.a.attr.generations,
			 c.a.rel.ack_every_chunks, send_done, nmsg, recv_done, nmsg,
			 (double)now * 1e-9);
	/* nothing was ever written outside the posted buffers (checked by ASan builds too) */
	assert_int_equal(sdr_ep_counters(b)[SDR_EP_DECODE_FAILED], 0);
	/* slots reused under loss: the old messages' late packets were answered */
	if (c.b.attr.generations < 5)
		late_previous[c.b.attr.generations] += sdr_ep_rx_counters(b)[SDR_RX_LATE_PREVIOUS];
	if (expect_late)
		assert_true(sdr_ep_rx_counters(b)[SDR_RX_LATE_PACKET] +
			    sdr_ep_rx_counters(b)[SDR_RX_LATE_PREVIOUS] > 0 &&
			    sdr_ep_rel_rx_counters(b)[REL_RX_REACKS] > 0);
	if (sdr_scheme_is_ec(&scheme) && loss > 0)
		assert_true(sdr_ep_counters(b)[SDR_EP_DECODES] > 0);
	if (stream)
		assert_true(sm.resends > 0);
	if (copies) {
		assert_int_equal(ct.n, 0);
		assert_true(ct.claimed > 0 && ct.late > 0);
		assert_int_equal(sdr_ep_rx_counters(b)[SDR_RX_PLACED], ct.claimed);
		assert_false(sdr_ep_busy(b));
		print_message("claims %s: %" PRIu64 " copies, %" PRIu64 " later than the RTT, %"
			      PRIu64 " chunks recovered\n", sdr_scheme_format(&scheme, name,
									    sizeof(name)),
			      ct.claimed, ct.late, sdr_ep_rx_counters(b)[SDR_RX_CHUNKS_RECOVERED]);
	}
	free(ct.q);
	if (fec_jobs) {
		/* every job came back; the code was exercised both ways */
		while (fec->n)
			fec_step(fec, UINT64_MAX);
		assert_int_equal(sdr_ep_fec_outstanding(a), 0);
		assert_int_equal(sdr_ep_fec_outstanding(b), 0);
		assert_true(sdr_ep_counters(a)[SDR_EP_FEC_JOBS] > 0);
		assert_int_equal(sdr_ep_counters(a)[SDR_EP_ENCODES] +
				 sdr_ep_counters(a)[SDR_EP_FEC_STALE],
				 sdr_ep_counters(a)[SDR_EP_FEC_JOBS]);
		assert_int_equal(sdr_ep_counters(b)[SDR_EP_DECODES] +
				 sdr_ep_counters(b)[SDR_EP_FEC_STALE],
				 sdr_ep_counters(b)[SDR_EP_FEC_JOBS]);
		assert_true(fec->late > 0);
		print_message("offload %s: jobs %" PRIu64 " + %" PRIu64 ", results discarded %"
			      PRIu64 " + %" PRIu64 ", %" PRIu64 " back later than the RTT\n",
			      sdr_scheme_format(&scheme, name, sizeof(name)),
			      sdr_ep_counters(a)[SDR_EP_FEC_JOBS], sdr_ep_counters(b)[SDR_EP_FEC_JOBS],
			      sdr_ep_counters(a)[SDR_EP_FEC_STALE],
			      sdr_ep_counters(b)[SDR_EP_FEC_STALE], fec->late);
		assert_false(sdr_ep_busy(a));
		assert_false(sdr_ep_busy(b));
	}
	free(fec);
	if (auto_report) {
		const uint64_t *rc = sdr_ep_counters(b);
		struct sdr_auto_estimate e;

		/* the receiver reported what its PSNs say the wire lost; the sender's estimate is
		 * the loss the wire applied to frames on the data QPNs (data, parity, resends),
		 * reordering and duplication on */
		sdr_auto_estimate(sdr_ep_auto(a), &e);
		print_message("reports %s: %" PRIu64 " sent, %" PRIu64 " received; %" PRIu64
			      " of %" PRIu64 " packets lost (%" PRIu64 " twice, %" PRIu64 " too "
			      "late); estimate %.4f [%.4f, %.4f] from %" PRIu64 " packets, wire "
			      "loss %.2f\n", sdr_scheme_format(&scheme, name, sizeof(name)),
			      sdr_ep_counters(b)[SDR_EP_REPORTS_OUT], sdr_ep_counters(a)[SDR_EP_REPORTS_IN],
			      rc[SDR_EP_WIRE_LOST], rc[SDR_EP_WIRE_PKTS], rc[SDR_EP_WIRE_DUPS],
			      rc[SDR_EP_WIRE_TOO_LATE], e.p, e.lo, e.hi, e.total_pkts, loss);
		assert_true(sdr_ep_counters(b)[SDR_EP_REPORTS_OUT] > 1);
		assert_int_equal(sdr_ep_counters(a)[SDR_EP_REPORTS_IMPLAUSIBLE], 0);
		assert_true(e.total_pkts <= rc[SDR_EP_WIRE_PKTS] &&
			    e.total_pkts * 2 > rc[SDR_EP_WIRE_PKTS]);
		assert_true(e.lo <= loss && loss <= e.hi);
		assert_true(wire_dup == 0 || rc[SDR_EP_WIRE_DUPS] > 0);
		/* the other direction carried no data: no sample, nothing reported */
		sdr_auto_estimate(sdr_ep_auto(b), &e);
		assert_true(e.total_pkts == 0 && sdr_ep_counters(a)[SDR_EP_REPORTS_OUT] == 0);
	}
	if (switch_plan != NULL) {
		const uint64_t *ca = sdr_ep_counters(a), *cb = sdr_ep_counters(b);
		int changing;
		struct sdr_scheme now_s = sdr_ep_scheme(a, &changing);

		print_message("scheme changes %s: asked %" PRIu64 ", made %" PRIu64 " and %" PRIu64
			      ", refused %" PRIu64 " (peer %" PRIu64 "); now %s\n",
			      switch_peer_fixed ? "(peer fixed)" : "", ca[SDR_EP_SCHEME_ASKS],
			      ca[SDR_EP_SCHEME_CHANGES], cb[SDR_EP_SCHEME_CHANGES],
			      ca[SDR_EP_SCHEME_REFUSED], cb[SDR_EP_SCHEME_REFUSALS],
			      sdr_scheme_format(&now_s, name, sizeof(name)));
		if (switch_peer_fixed || switch_peer_chunk) {
			assert_true(ca[SDR_EP_SCHEME_REFUSED] > 0 && ca[SDR_EP_SCHEME_CHANGES] == 0);
			/* each question refused; a question repeated because its answer was lost
			 * is refused again */
			assert_true(cb[SDR_EP_SCHEME_REFUSALS] >= ca[SDR_EP_SCHEME_REFUSED]);
			assert_int_equal(ca[SDR_EP_SCHEME_REFUSED], ca[SDR_EP_SCHEME_ASKS]);
			assert_int_equal(now_s.kind, scheme.kind);
		} else {
			/* every change asked was made on both sides, none refused */
			assert_true(ca[SDR_EP_SCHEME_CHANGES] >= 4);
			assert_int_equal(ca[SDR_EP_SCHEME_CHANGES], ca[SDR_EP_SCHEME_ASKS]);
			assert_int_equal(cb[SDR_EP_SCHEME_CHANGES], ca[SDR_EP_SCHEME_CHANGES]);
			assert_int_equal(ca[SDR_EP_SCHEME_REFUSED], 0);
			/* the codes ran: parity was made and sent, and lost data rebuilt */
			assert_true(ca[SDR_EP_ENCODES] > 0 && ca[SDR_EP_PARITY_PKTS_OUT] > 0);
		}
		assert_false(changing);
	}
	for (uint32_t i = 0; i < nmsg; i++) {
		free(src[i]);
		free(dst[i]);
		free(sm.ref[i]);
		free(sm.order[i]);
	}
	teardown(&w, fr, a, b);
}

static void
run_transfer_mode(struct sdr_scheme scheme, double loss, uint32_t nmsg, uint64_t seed, int stream)
{
	run_transfer_full(scheme, loss, nmsg, seed, stream, 0, 0);
}

static void
run_transfer(struct sdr_scheme scheme, double loss, uint32_t nmsg, uint64_t seed)
{
	run_transfer_mode(scheme, loss, nmsg, seed, 0);
}

/*
 * Zero-copy output (sdr_ep_output_sg()): A's data frames travel as headers + a pointer into
 * the application's buffer + tail, and are put together only when they arrive, as a NIC
 * reads the buffer when it sends. The wire keeps some frames (duplicates, late reorders)
 * for several RTTs. The moment a send completes the application scribbles over its buffer
 * and starts the next message in it. With the hold (cfg.held) every frame still reads
 * the bytes it was built from; without it, frames that arrive after the completion carry
 * other bytes than their ICRC covers: the test counts them, to show it would notice.
 */
struct zc_frame {
	uint64_t t;
	uint16_t len;			/* header bytes (ext) or the whole frame */
	uint8_t to_b, tail_len;
	const uint8_t *ext;
	uint32_t ext_len, hold;
	uint8_t tail[ROCE_BUILD_TAIL_MAX];
	uint8_t b[FRAME];
};

struct zc_wire {
	struct zc_frame *f;
	uint32_t n;
	uint32_t refs[64];		/* per send context of A: frames that point into it */
	struct sdr_rng rng;
	uint64_t bad_icrc, held_polls;
};

static int
zc_held(void *arg, uint32_t ctx)
{
	struct zc_wire *w = arg;

	w->held_polls += w->refs[ctx] != 0;
	return w->refs[ctx] != 0;
}

static void
zc_put(struct zc_wire *w, const uint8_t *b, const struct sdr_ep_frame *e, uint16_t len, int to_b,
       uint64_t now)
{
	double u = sdr_rng_unit(&w->rng);
	int copies = u < 0.02 ? 0 : u < 0.10 ? 2 : 1;	/* 2 % lost, 8 % duplicated */

	for (int c = 0; c < copies && w->n < INFLIGHT_FRAMES; c++) {
		struct zc_frame *f = &w->f[w->n++];

		f->t = now + 100000;
		if (sdr_rng_unit(&w->rng) < 0.05)	/* late: up to 5 RTTs */
			f->t += sdr_rng_next(&w->rng) % 1000000;
		f->len = len;
		f->to_b = (uint8_t)to_b;
		memcpy(f->b, b, len);
		f->ext = e ? e->ext : NULL;
		if (f->ext) {
			f->ext_len = e->ext_len;
			f->hold = e->hold;
			f->tail_len = e->tail_len;
			/* the tail: made when the frame was built (sdr_ep_output_sg()), or over
			 * the bytes as they are now, when it leaves (_deferred()) */
			sdr_ep_frame_tail(e, f->tail);
			w->refs[e->hold]++;
		}
	}
}

static void
run_zero_copy(struct sdr_scheme scheme, int hold, uint64_t seed)
{
	/* (a last frame of 547 B: a pad before its ICRC, in the tail) */
	enum { NMSG = 40, LEN = 20003 };
	struct zc_wire w = { .f = malloc(INFLIGHT_FRAMES * sizeof(struct zc_frame)) };
	uint8_t *fr[32], *src[4], *dst[NMSG], ref[LEN];
	uint32_t sent = 0, posted = 0, sdone = 0, rdone = 0, slot, in_use[4] = { 0 };
	struct sdr_ep_frame e[32];
	struct side_cfg c;
	struct sdr_ep *a, *b;
	uint64_t now = 0, by_mode[2] = { 0 }, padded = 0;
	uint32_t calls = 0;

	make_cfgs(&c, scheme, 200000);
	c.a.attr.max_inflight = 4;
	if (hold) {
		c.a.held = zc_held;
		c.a.held_arg = &w;
	}
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	sdr_rng_seed(&w.rng, seed);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (int i = 0; i < 4; i++)
		src[i] = malloc(LEN);
	for (int i = 0; i < NMSG; i++)
		dst[i] = malloc(LEN);
	while ((sdone < NMSG || rdone < NMSG) && now < 10ull * 1000000000) {
		struct sdr_ep_done d;
		uint16_t fl[32];
		uint64_t t;
		uint32_t n;

		while (posted < NMSG && sdr_ep_recv(b, dst[posted], LEN, NULL, posted, now,
						    &slot) == 0)
			posted++;
		/* the next message in a free buffer of the four (cookie: message << 2 | buffer) */
		for (uint32_t k = 0; k < 4 && sent < NMSG; k++) {
			if (in_use[k])
				continue;
			pattern(src[k], LEN, sent);
			if (sdr_ep_send(a, src[k], LEN, 0, (uint64_t)sent << 2 | k, now) != 0)
				break;
			in_use[k] = 1;
			sent++;
		}
		/* the ICRC as each frame is built, but every third call: in a pass of its own
		 * when the frame is put on the wire (as the dataplane's sampled bursts) */
		while ((n = calls++ % 3 ? sdr_ep_output_sg(a, now, fr, FRAME, e, 32) :
			    sdr_ep_output_sg_deferred(a, now, fr, FRAME, e, 32)) > 0) {
			for (uint32_t i = 0; i < n; i++) {
				if (e[i].ext != NULL) {
					by_mode[e[i].tail_ready]++;
					padded += e[i].tail_ready && e[i].tail_len > ROCE_ICRC_LEN;
				}
				zc_put(&w, fr[i], &e[i], e[i].len, 1, now);
			}
		}
		while ((n = sdr_ep_output(b, now, fr, FRAME, fl, 32)) > 0)
			for (uint32_t i = 0; i < n; i++)
				zc_put(&w, fr[i], NULL, fl[i], 0, now);
		while (sdr_ep_poll(a, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			memset(src[d.cookie & 3], 0x5A, LEN);	/* the application's again */
			in_use[d.cookie & 3] = 0;
			sdone++;
		}
		while (sdr_ep_poll(b, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			pattern(ref, LEN, d.cookie);
			assert_memory_equal(dst[d.cookie], ref, LEN);
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
			rdone++;
		}
		t = sdr_ep_next_time(a, now);
		if (sdr_ep_next_time(b, now) < t)
			t = sdr_ep_next_time(b, now);
		for (uint32_t i = 0; i < w.n; i++)
			if (w.f[i].t < t)
				t = w.f[i].t;
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		for (uint32_t i = 0; i < w.n;) {
			struct zc_frame *f = &w.f[i];
			struct roce_view v;
			enum sdr_qpn_kind kind;
			uint32_t ch, gen, len = f->len;
			struct sdr_ep *to = f->to_b ? b : a;
			const struct sdr_conn_attr *at = f->to_b ? &c.b.attr : &c.a.attr;

			if (f->t > now) {
				i++;
				continue;
			}
			if (f->ext) {	/* the "NIC" reads the buffer now */
				memcpy(f->b + len, f->ext, f->ext_len);
				memcpy(f->b + len + f->ext_len, f->tail, f->tail_len);
				len += f->ext_len + f->tail_len;
				w.refs[f->hold]--;
			}
			if (roce_parse(f->b, len, ROCE_PARSE_VERIFY_ICRC, &v) == ROCE_V_OK) {
				kind = sdr_conn_qpn_decode(f->to_b ? QPN_B : QPN_A, at, v.dqpn, &ch,
							   &gen);
				sdr_ep_input(to, &v, kind, gen, now);
			} else {
				w.bad_icrc++;
			}
			*f = w.f[--w.n];
		}
	}
	print_message("zero-copy, hold %s: %u sends, %" PRIu64 " frames arrived with other bytes "
		      "than they were built from, %" PRIu64 " completion checks held\n",
		      hold ? "on" : "off", sdone, w.bad_icrc, w.held_polls);
	if (hold) {
		assert_int_equal(sdone, NMSG);
		assert_int_equal(rdone, NMSG);
		assert_int_equal(w.bad_icrc, 0);
		assert_true(w.held_polls > 0);	/* the hold was needed, not idle */
		assert_true(sdr_ep_counters(a)[SDR_EP_DATA_PKTS_OUT] > 0);
		/* both ways of computing the ICRC made frames, and every one verified */
		assert_true(by_mode[0] > 0 && by_mode[1] > 0);
		assert_true(padded > 0);	/* a ready tail with a pad, verified too */
	} else {
		assert_true(w.bad_icrc > 0);	/* frames read a buffer given back */
	}
	for (int i = 0; i < 32; i++)
		free(fr[i]);
	for (int i = 0; i < 4; i++)
		free(src[i]);
	for (int i = 0; i < NMSG; i++)
		free(dst[i]);
	free(w.f);
	sdr_ep_destroy(a);
	sdr_ep_destroy(b);
}

static void
test_zero_copy(void **state)
{
	(void)state;
	run_zero_copy((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 1, 51);
	run_zero_copy((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 1, 52);
	run_zero_copy((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 1, 53);
	run_zero_copy((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 1, 54);
	run_zero_copy((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0, 51);
}

/*
 * A send whose deadline passes in the output call that builds the last frames of its
 * chunk: those frames point into its buffer, and the caller counts them in the send's hold
 * only after the call. The frames before them are gone already (hold 0 during the call).
 * The timeout must not complete the send inside that call, or the application takes its
 * buffer back while the new frames still read it.
 */
static void
test_zero_copy_deadline_in_call(void **state)
{
	enum { LEN = 8192 };
	struct zc_wire w = { 0 };
	uint8_t src[LEN], dst[LEN], *fr[8];
	struct sdr_ep_frame e[8];
	struct sdr_ep_done d;
	struct side_cfg c;
	struct sdr_ep *a, *b;
	uint32_t n, slot, data = 0, last = 0, ctx = 0;
	uint64_t now = 0;
	uint16_t fl[8];

	(void)state;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 200000);
	c.a.rel.global_timeout_ns = 1000000;
	c.a.held = zc_held;
	c.a.held_arg = &w;
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	for (int i = 0; i < 8; i++)
		fr[i] = malloc(FRAME);
	pattern(src, LEN, 1);
	assert_int_equal(sdr_ep_recv(b, dst, LEN, NULL, 0, now, &slot), 0);
	assert_int_equal(sdr_ep_send(a, src, LEN, 0, 7, now), 0);
	/* the handshake and the CTS, frame by frame, until a has built 2 data frames (of the
	 * 4 of its first chunk); those the "NIC" keeps */
	for (int step = 0; step < 1000 && data < 2; step++, now += 1000) {
		while (data < 2 && (n = sdr_ep_output_sg(a, now, fr, FRAME, e, 1)) > 0) {
			if (e[0].ext != NULL) {
				w.refs[e[0].hold]++;
				ctx = e[0].hold;
				data++;
			} else {
				deliver(b, QPN_B, &c.b.attr, fr[0], e[0].len, now);
			}
		}
		while ((n = sdr_ep_output(b, now, fr, FRAME, fl, 1)) > 0)
			deliver(a, QPN_A, &c.a.attr, fr[0], fl[0], now);
	}
	assert_int_equal(data, 2);
	assert_int_equal(w.refs[ctx], 2);
	/* they leave and are freed; the deadline passes */
	w.refs[ctx] = 0;
	now = 1000000 + 1;
	n = sdr_ep_output_sg(a, now, fr, FRAME, e, 8);
	for (uint32_t i = 0; i < n; i++) {
		if (e[i].ext != NULL) {
			assert_int_equal(e[i].hold, ctx);
			w.refs[ctx]++;		/* counted once the call is back, as the dataplane does */
			last++;
		}
	}
	assert_int_equal(last, 2);		/* the rest of the chunk, then the deadline */
	assert_int_equal(sdr_ep_rel_tx_counters(a)[REL_TX_TIMEOUTS], 1);
	/* while they are out the send does not complete: not by the call, not by a poll */
	assert_int_equal(sdr_ep_poll(a, &d), 0);
	n = sdr_ep_output_sg(a, now, fr, FRAME, e, 8);	/* (a SKIP, perhaps; no data) */
	for (uint32_t i = 0; i < n; i++)
		assert_null(e[i].ext);
	assert_int_equal(sdr_ep_poll(a, &d), 0);
	/* the last of them freed: it completes, timed out */
	w.refs[ctx] = 0;
	assert_int_equal(sdr_ep_poll(a, &d), 1);
	assert_int_equal(d.cookie, 7);
	assert_int_equal(d.status, SDR_DONE_TIMEOUT);
	for (int i = 0; i < 8; i++)
		free(fr[i]);
	sdr_ep_destroy(a);
	sdr_ep_destroy(b);
}

/*
 * A send that comes after the sender's reliability layer finished a message (the ACK was
 * taken in) but before the application polled: the finished message's context is free for
 * the new one, and the old completion must not retire the new message.
 */
static void
test_send_between_ack_and_poll(void **state)
{
	struct side_cfg c;
	struct wire w = { .delay = 100000 };
	struct sdr_ep *a, *b;
	uint8_t src[2][8192], dst[2][8192], *fr[32];
	uint64_t now = 0;
	uint32_t slot, sent_ok = 0, recv_ok = 0;
	struct sdr_ep_done d;
	int second = 0;

	(void)state;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 2 * w.delay);
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, 31);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (int i = 0; i < 2; i++) {
		pattern(src[i], sizeof(src[i]), (uint64_t)i);
		assert_int_equal(sdr_ep_recv(b, dst[i], sizeof(dst[i]), NULL, (uint64_t)i, now,
					     &slot), 0);
	}
	assert_int_equal(sdr_ep_send(a, src[0], sizeof(src[0]), 0, 0, now), 0);
	for (int step = 0; step < 100000 && (sent_ok < 2 || recv_ok < 2); step++) {
		uint64_t t = UINT64_MAX;

		/* the first message done inside a, not polled: send the second right now */
		if (!second && sdr_ep_rel_tx_counters(a)[REL_TX_COMPLETED] == 1) {
			assert_int_equal(sdr_ep_send(a, src[1], sizeof(src[1]), 1, 1, now), 0);
			second = 1;
		}
		outputs(&w, a, b, fr, now);
		if (second) {
			while (sdr_ep_poll(a, &d)) {
				assert_int_equal(d.status, SDR_DONE_OK);
				assert_int_equal(d.cookie, sent_ok);
				sent_ok++;
			}
		}
		while (sdr_ep_poll(b, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			assert_memory_equal(dst[d.cookie], src[d.cookie], sizeof(src[0]));
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
			recv_ok++;
		}
		t = sdr_ep_next_time(a, now) < sdr_ep_next_time(b, now) ?
			    sdr_ep_next_time(a, now) : sdr_ep_next_time(b, now);
		for (uint32_t i = 0; i < w.n; i++)
			if (w.f[i].t < t)
				t = w.f[i].t;
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		arrivals(&w, a, b, &c, now);
	}
	assert_int_equal(sent_ok, 2);
	assert_int_equal(recv_ok, 2);
	/* each message retired once, by its own completion: none left holding its message id
	 * (a stuck id stalls the connection when the ids wrap around) */
	assert_int_equal(sdr_ep_tx_counters(a)[SDR_TX_MSGS_STARTED], 2);
	assert_int_equal(sdr_ep_tx_counters(a)[SDR_TX_MSGS_RETIRED], 2);
	teardown(&w, fr, a, b);
}

/*
 * A message of another length than its receive, where the sender never heard that receive's
 * CTS (lost; a later one's cumulative credit let the message go): the receiver sees it in
 * the first packet past its receive (@p len longer) or of a length its offset cannot have
 * (shorter), fails the receive and says so with a FAILED final ACK. Delivered, the longer
 * one would complete OK on both sides cut short. The next message lands in the next receive.
 */
static void
wrong_length(uint64_t len)
{
	struct side_cfg c;
	struct wire w = { .delay = 100000 };
	struct sdr_ep *a, *b;
	uint8_t src[2][12288], dst[2][8192], *fr[32];
	uint64_t now = 0;
	uint32_t slot;
	struct sdr_ep_done d;
	int sent[2] = { -1, -1 }, recvd[2] = { -1, -1 };

	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 2 * w.delay);
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, 37);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (int i = 0; i < 2; i++)
		pattern(src[i], sizeof(src[i]), (uint64_t)i);
	/* the two ends know each other first (HELLO) */
	for (int step = 0; step < 1000 && now < 1000000; step++) {
		outputs(&w, a, b, fr, now);
		now = next_event(a, b, &w, now) < 1000000 ? next_event(a, b, &w, now) : 1000000;
		arrivals(&w, a, b, &c, now);
	}
	assert_int_equal(sdr_ep_send(a, src[0], len, 0, 0, now), 0);
	/* receive 0's CTS is lost, receive 1's is not */
	assert_int_equal(sdr_ep_recv(b, dst[0], sizeof(dst[0]), NULL, 0, now, &slot), 0);
	drop_to_a = 1;
	outputs(&w, a, b, fr, now);
	drop_to_a = 0;
	assert_int_equal(sdr_ep_recv(b, dst[1], sizeof(dst[1]), NULL, 1, now, &slot), 0);
	for (int step = 0; step < 100000 && (sent[1] < 0 || recvd[1] < 0); step++) {
		uint64_t t;

		outputs(&w, a, b, fr, now);
		while (sdr_ep_poll(a, &d)) {
			sent[d.cookie] = (int)d.status;
			if (d.cookie == 0)	/* the next message, of the receive's length */
				assert_int_equal(sdr_ep_send(a, src[1], sizeof(dst[1]), 0, 1, now), 0);
		}
		while (sdr_ep_poll(b, &d)) {
			recvd[d.cookie] = (int)d.status;
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
		}
		t = next_event(a, b, &w, now);
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		arrivals(&w, a, b, &c, now);
	}
	assert_int_equal(recvd[0], SDR_DONE_FAILED);
	assert_int_equal(sent[0], SDR_DONE_FAILED);
	assert_int_equal(sdr_ep_rel_rx_counters(b)[REL_RX_WRONG_LENGTH], 1);
	assert_int_equal(sdr_ep_rel_tx_counters(a)[REL_TX_CTS_LEN_MISMATCH], 0);
	assert_int_equal(recvd[1], SDR_DONE_OK);
	assert_int_equal(sent[1], SDR_DONE_OK);
	assert_memory_equal(dst[1], src[1], sizeof(dst[1]));
	teardown(&w, fr, a, b);
}

static void
test_wrong_length(void **state)
{
	(void)state;
	wrong_length(12288);		/* longer: packets past the receive */
	wrong_length(7000);		/* shorter: its last packet where a full one belongs */
}

/* The same transfers with erasure coding offloaded to a (simulated) FEC thread. */
static void
test_fec_offload(void **state)
{
	(void)state;
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 40, 21, 0, 4, 0);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.02, 40, 22, 0, 2, 0);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 8, 4, 0 }, 0.10, 30, 23, 0, 1, 0);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.02, 24, 24, 1, 3, 0);
}

/*
 * Payload copies made elsewhere (sdr_ep_input_claim / sdr_ep_input_commit), late and out of
 * order: every byte arrives, and no completion reaches the application while a copy into
 * its buffer is still to come. With SR, and with erasure coding offloaded too (decodes
 * rebuild chunks whose claims are still out).
 */
static void
test_claimed_copies(void **state)
{
	(void)state;
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 40, 41, 0, 0, 1);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.02, 40, 42, 1, 0, 1);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 40, 43, 0, 4, 1);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.05, 40, 44, 0, 0, 1);
}

static void
test_stream(void **state)
{
	(void)state;
	run_transfer_mode((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.02, 24, 11, 1);
	run_transfer_mode((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.02, 24, 12, 1);
}

/*
 * Steering by source port: both ends steer to queue 3 of 4 at the other; every frame that
 * arrives (data, parity, ACK, NACK, hello) hashes there (deliver() asserts it), and every
 * message still arrives intact.
 */
static void
test_steering(void **state)
{
	struct side_cfg c;

	(void)state;
	steer_queues = 4;
	steered_frames = 0;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.03, 20, 21);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 20, 22);
	assert_true(steered_frames > 1000);
	/* a queue count that is not a power of two cannot be steered to */
	steer_queues = 3;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 1000000);
	assert_null(sdr_ep_create(&c.a));
	steer_queues = 0;
}

static void
test_sr(void **state)
{
	(void)state;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0, 20, 1);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 40, 2);
}

/*
 * Few slots, many messages in flight: the receiver posts a slot again while the sender of
 * the slot's last message may not have heard its final ACK (lost on the lossy wire), and the
 * sender repeats it into the slot's next receive. Those packets must make the receiver ACK
 * the old message again; were they dropped as stale, the sender would repeat that message
 * forever and the transfer would stop.
 */
static void
test_slots_reused(void **state)
{
	static const struct { unsigned int bits, inflight; } c[] = { { 3, 3 }, { 3, 8 }, { 2, 4 } };

	(void)state;
	expect_late = 1;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		slot_bits = c[i].bits;
		slot_inflight = c[i].inflight;
		run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.05, 60, 3 + i);
		run_transfer((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.05, 60, 13 + i);
		run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.05, 60, 23 + i);
	}
}

static int
slots_default(void **state)
{
	(void)state;
	slot_bits = gens = ack_chunks = 0;
	expect_late = 0;
	return 0;
}

/*
 * Random geometries from a fixed seed: 4 to 16 slots, 1 to all of them in flight, 1, 2 or
 * 4 generations, every scheme, no loss to 15 % (control packets too), ACKs every 1, 2 or 4
 * chunks. Every message arrives intact and every send completes: a configuration where a
 * message can stall (as a slot posted again before its sender heard the final ACK did)
 * fails here.
 */
static void
test_random_geometries(void **state)
{
	static const struct sdr_scheme sch[] = {
		{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_SR_NACK, 0, 0, 0 },
		{ SDR_SCHEME_EC_XOR, 4, 2, 0 }, { SDR_SCHEME_EC_MDS, 4, 2, 0 },
	};
	static const double loss[] = { 0, 0.03, 0.03, 0.15 };
	static const unsigned int gen_of[] = { 1, 2, 4 }, ack_of[] = { 1, 2, 4 };
	struct sdr_rng r;

	(void)state;
	memset(late_previous, 0, sizeof(late_previous));
	sdr_rng_seed(&r, 20261130);
	for (int i = 0; i < 120; i++) {
		uint64_t seed;
		double l;

		slot_bits = 2 + (unsigned int)(sdr_rng_next(&r) % 3);
		slot_inflight = 1 + (unsigned int)(sdr_rng_next(&r) % (1u << slot_bits));
		gens = gen_of[sdr_rng_next(&r) % 3];
		ack_chunks = ack_of[sdr_rng_next(&r) % 3];
		/* (one draw per line: the order of a call's arguments is unspecified) */
		seed = sdr_rng_next(&r);
		l = loss[sdr_rng_next(&r) % 4];
		run_transfer(sch[sdr_rng_next(&r) % 4], l, 40, seed);
	}
	/* the slots' previous receives were answered, with one generation (by R_Key) too */
	assert_true(late_previous[1] > 0 && late_previous[2] + late_previous[4] > 0);
}

static void
test_sr_nack(void **state)
{
	(void)state;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.03, 40, 3);
}

static void
test_ec_xor(void **state)
{
	(void)state;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.02, 40, 4);
}

/*
 * scheme auto: the receiver REPORTs the frames its PSNs say the wire lost, and the sender's
 * loss estimate is the wire's loss, with SR-NACK (resends are frames like any other: each
 * one lost counts, none arrived counts twice), with EC (decoded chunks do not hide the
 * loss, a frame late behind a decode is not a loss), under reordering and 2 % duplication
 * (a second copy is not a second frame).
 */
static void
test_loss_reports(void **state)
{
	(void)state;
	auto_report = 1;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.05, 60, 21);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.05, 60, 22);
	/* the copies made later, elsewhere: the PSNs are counted as frames arrive */
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.05, 60, 23, 0, 0, 1);
	auto_report = 0;
}

/* The wire as the other tests want it, even after a failure of test_paths. */
static int
paths_off(void **state)
{
	(void)state;
	dead_path = -1;
	dead_npaths = 0;
	return 0;
}

/* Both sides over @p npaths paths with @p channels channels, paced at 500 Mbit/s, a path
 * failed after 20 ms without an arrival, for a wire of one-way @p delay. */
static void
paths_cfgs(struct side_cfg *c, struct sdr_scheme sc, uint64_t delay, uint16_t channels,
	   unsigned int npaths)
{
	make_cfgs(c, sc, 2 * delay);
	for (int i = 0; i < 2; i++) {
		struct sdr_ep_cfg *e = i ? &c->b : &c->a;

		e->attr.channels = channels;
		e->rel.rate_bps = 500e6;
		path_sel_cfg_default(&e->paths);
		e->paths.npaths = npaths;
		e->paths.fail_ns = 20000000;
	}
}

/*
 * Three paths, A's six channels sprayed over them (two each), 1 % loss, reordering and
 * duplication, paced at 500 Mbit/s, each path a third of that and 100 us longer one way than
 * the one before (so the decision keeps all three). After 5 ms every frame A sends on path 2
 * is lost: within the 20 ms fail_ns (and a decision period) of the last arrival there, A's
 * selector sees path 2 failed from B's PATHS reports, the decision (every 2 ms, as the
 * management thread would) moves the two channels off it and no more of A's frames take it;
 * every message arrives intact. Each path's RTT, from its probes, is the wire's.
 */
static void
test_paths(void **state)
{
	enum { N = 64 };
	struct wire w = { .loss = 0.01, .dup = 0.01, .reorder = 0.05, .delay = 200000 };
	uint8_t *src[N], *dst[N], *fr[32];
	uint64_t lens[N], now = 0, moved_at = 0, dead_after_move = 0, next_decide = 0;
	uint32_t sent = 0, posted = 0, sdone = 0, rdone = 0, slots[N];
	struct sdr_model_params mp;
	struct sdr_scheme sc = { SDR_SCHEME_SR_NACK, 0, 0, 0 };
	struct side_cfg c;
	struct sdr_ep *a, *b;
	const struct path_sel *ps;

	(void)state;
	paths_cfgs(&c, sc, w.delay, 6, 3);	/* the transfer lasts about 60 ms */
	c.a.paths.path_rate_bps = c.b.paths.path_rate_bps = 500e6 / 3;	/* it needs all three */
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	ps = sdr_ep_paths(a);
	assert_non_null(ps);
	for (unsigned int p = 0; p < 3; p++)		/* sprayed: 2 channels x 2 generations */
		assert_int_equal(ps->path[p].nqp, 4);
	assert_int_equal(sdr_ep_counters(a)[SDR_EP_PATH_MOVES], 0);
	sdr_model_params_init(&mp);
	mp.msg_bytes = 32 * 1024;
	mp.chunk_bytes = 4096;
	mp.mtu_bytes = 1024;
	mp.bandwidth_bps = 10e9;
	mp.rtt_s = 400e-6;
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, 51);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (uint32_t i = 0; i < N; i++) {
		lens[i] = 16 * 1024 + sdr_rng_next(&w.rng) % (48 * 1024 + 1);
		src[i] = malloc(lens[i]);
		dst[i] = malloc(lens[i]);
		pattern(src[i], lens[i], i);
	}
	dead_npaths = 3;
	while ((sdone < N || rdone < N) && now < 10ull * 1000000000) {
		struct sdr_ep_done d;
		uint64_t t;

		if (now >= 5000000 && dead_path < 0)
			dead_path = 2;
		if (now >= next_decide) {	/* the management thread's round */
			struct path_sel_decision dec;

			next_decide = now + 2000000;
			if (path_sel_decide(ps, &mp, &sc, &dec) == PATH_SEL_MOVE) {
				assert_true(dead_path == 2 && moved_at == 0);
				assert_int_equal(dec.use_mask, 0x3);
				assert_int_equal(sdr_ep_set_paths(a, dec.want, now), 0);
				moved_at = now;
				dead_after_move = dead_frames;
			}
		}
		while (posted < N && sdr_ep_recv(b, dst[posted], lens[posted], NULL, posted, now,
						    &slots[posted]) == 0)
			posted++;
		while (sent < N && sdr_ep_send(a, src[sent], lens[sent], 0, sent, now) == 0)
			sent++;
		outputs(&w, a, b, fr, now);
		while (sdr_ep_poll(a, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			sdone++;
		}
		while (sdr_ep_poll(b, &d)) {
			assert_int_equal(d.status, SDR_DONE_OK);
			assert_memory_equal(dst[d.cookie], src[d.cookie], lens[d.cookie]);
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
			rdone++;
		}
		t = next_event(a, b, &w, now);
		if (next_decide < t)
			t = next_decide;
		now = t > now ? t : now;
		arrivals(&w, a, b, &c, now);
	}
	assert_int_equal(rdone, N);
	assert_int_equal(sdone, N);
	print_message("path 2 dead at 5 ms, failed at %.1f ms, channels moved at %.1f ms; "
		      "the transfer took %.1f ms; frames lost there %llu (%llu after the move)\n",
		      ps->path[2].failed_since_ns / 1e6, moved_at / 1e6, now / 1e6,
		      (unsigned long long)dead_frames,
		      (unsigned long long)(dead_frames - dead_after_move));
	assert_true(moved_at > 5000000 && moved_at <= 5000000 + 20000000 + 6000000);
	assert_int_equal(dead_frames, dead_after_move);	/* nothing took path 2 after */
	assert_true(dead_frames > 0);
	assert_int_equal(ps->path[2].nqp, 0);
	assert_int_equal(ps->path[0].nqp + ps->path[1].nqp, 12);
	assert_true(ps->path[2].failed);
	assert_int_equal(sdr_ep_counters(a)[SDR_EP_PATH_MOVES], 4);	/* 2 channels x 2 gens */
	assert_true(sdr_ep_counters(b)[SDR_EP_PATHS_OUT] > 0);
	assert_true(sdr_ep_counters(a)[SDR_EP_PATHS_IN] > 0);
	/* each path's round trip, 400 us and 100 us more per path: from its probes, longer
	 * by at most a report's wait (1 ms) each, the smallest of them close to it */
	for (unsigned int p = 0; p < 3; p++) {
		uint64_t want = 400000 + 100000ull * p, got = path_est_min_rtt(&ps->path[p].rtt, now);

		print_message("path %u: RTT %.3f ms from %llu samples (the wire's %.3f ms)\n", p + 1,
			      got / 1e6, (unsigned long long)ps->path[p].rtt.rtt_samples, want / 1e6);
		assert_true(ps->path[p].rtt.rtt_samples >= 8);
		assert_true(got >= want && got <= want + 150000);
	}
	for (uint32_t i = 0; i < N; i++) {
		free(src[i]);
		free(dst[i]);
	}
	teardown(&w, fr, a, b);
}

/*
 * Every path dies at once, 2 ms in: no data frame reaches B, so B sends no PATHS report any
 * more. A, retransmitting, still sees both paths failed within fail_ns (20 ms) and a tick
 * (8 channels x 2 generations: one report carries every QPN, none is left half-judged).
 */
static void
test_paths_all_dead(void **state)
{
	enum { N = 16 };
	struct wire w = { .delay = 200000 };
	uint8_t *src[N], *dst[N], *fr[32];
	uint64_t now = 0, len = 64 * 1024;
	uint32_t sent = 0, posted = 0, slots[N];
	struct sdr_scheme sc = { SDR_SCHEME_SR, 0, 0, 0 };
	struct side_cfg c;
	struct sdr_ep *a, *b;
	const struct path_sel *ps;

	(void)state;
	paths_cfgs(&c, sc, w.delay, 8, 2);
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	ps = sdr_ep_paths(a);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, 52);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (uint32_t i = 0; i < N; i++) {
		src[i] = malloc(len);
		dst[i] = malloc(len);
		pattern(src[i], len, i);
	}
	while (now < 100000000) {
		struct sdr_ep_done d;
		uint64_t t;

		if (now >= 2000000)
			drop_to_b = UINT32_MAX;	/* every data frame from now on */
		while (posted < N && sdr_ep_recv(b, dst[posted], len, NULL, posted, now,
						    &slots[posted]) == 0)
			posted++;
		while (sent < N && sdr_ep_send(a, src[sent], len, 0, sent, now) == 0)
			sent++;
		outputs(&w, a, b, fr, now);
		while (sdr_ep_poll(a, &d) || sdr_ep_poll(b, &d))
			;
		t = next_event(a, b, &w, now);
		if (t > now + 1000000)
			t = now + 1000000;
		now = t > now ? t : now;
		arrivals(&w, a, b, &c, now);
	}
	drop_to_b = 0;
	assert_true(sdr_ep_counters(a)[SDR_EP_PATHS_IN] > 0);
	print_message("every path dead at 2 ms: failed at %.1f / %.1f ms\n",
		      ps->path[0].failed_since_ns / 1e6, ps->path[1].failed_since_ns / 1e6);
	for (unsigned int p = 0; p < 2; p++) {
		assert_true(ps->path[p].failed);
		assert_true(ps->path[p].failed_since_ns < 2000000 + 2 * 20000000);
	}
	for (uint32_t i = 0; i < N; i++) {
		free(src[i]);
		free(dst[i]);
	}
	teardown(&w, fr, a, b);
}

/*
 * Scheme changes between messages under loss, reordering and duplication: the sender goes
 * through ec-mds:4,2, sr, ec-xor:4,2 and sr-nack every 6 messages, each change agreed with
 * the receiver while nothing is in flight; every message arrives intact. A receiver not
 * set up for changes refuses them: the sender keeps its scheme, every message arrives.
 */
static void
test_scheme_change(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_EC_MDS, 4, 2, 0 }, { SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_EC_XOR, 4, 2, 0 },
		{ SDR_SCHEME_SR_NACK, 0, 0, 0 },
	};

	(void)state;
	switch_plan = plan;
	switch_n = 4;
	switch_every = 6;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 50, 31);
	switch_peer_fixed = 1;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 20, 32);
	switch_peer_fixed = 0;
	switch_plan = NULL;
}

/*
 * sdr_ep_buffer_bytes(), what [dataplane] conn_memory and user_memory bound, counts what
 * grows with the settings: with FEC jobs handed out (fec = lcore) a staging area of m + 1
 * chunks a job, and the codecs of a code (each direction's decode-table cache, and for a
 * scheme that may change one more, made before asking; it may run any k that fits).
 */
static void
test_buffer_bytes(void **state)
{
	struct ec_spec mds = { .kind = EC_KIND_MDS, .k = 32, .m = 8 };
	struct side_cfg c;
	uint64_t b0, b8, sr;

	(void)state;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 200000);
	sr = sdr_ep_buffer_bytes(&c.a);
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 32, 8, 0 }, 200000);
	c.a.fec_jobs = 0;
	b0 = sdr_ep_buffer_bytes(&c.a);
	c.a.fec_jobs = 8;
	b8 = sdr_ep_buffer_bytes(&c.a);
	assert_int_equal(b8 - b0, 8ull * (8 + 1) * c.a.attr.chunk_size);
	assert_true(b0 > sr + 2 * ec_codec_bytes(&mds, EC_CACHE_DEFAULT));
	c.a.fec_jobs = 0;
	c.a.rel.scheme_may_change = 1;
	c.a.switch_max_m = 8;
	mds.k = EC_MAX_CHUNKS - 8;
	assert_true(sdr_ep_buffer_bytes(&c.a) >= sr + 3 * ec_codec_bytes(&mds, EC_CACHE_DEFAULT));
}

/*
 * The same with the chunk changing too (online auto's chunk choice): the sender goes
 * through ec-mds:4,2 on 1 KiB chunks, sr on 2 KiB, ec-xor:4,2 on the configured 4 KiB,
 * sr-nack on 1 KiB and ec-mds:4,2 on 2 KiB, every 5 messages, under 3 % loss, reordering
 * and duplication, with the FEC work offloaded for a second run; every message arrives
 * intact, and the receiver's view stays one byte per configured chunk. A receiver built
 * for smaller chunks than the sender asks for refuses the change.
 */
static void
test_scheme_change_chunks(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_EC_MDS, 4, 2, 2 }, { SDR_SCHEME_SR, 0, 0, 1 },
		{ SDR_SCHEME_EC_XOR, 4, 2, 0 }, { SDR_SCHEME_SR_NACK, 0, 0, 2 },
		{ SDR_SCHEME_EC_MDS, 4, 2, 1 },
	};
	struct sdr_scheme sr2 = { SDR_SCHEME_SR, 0, 0, 2 }, sr3 = { SDR_SCHEME_SR, 0, 0, 3 };
	static struct sdr_scheme plan_small[2];
	struct side_cfg c;
	struct sdr_ep *a;

	(void)state;
	switch_plan = plan;
	switch_n = 5;
	switch_every = 5;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 52, 33);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 42, 34, 0, 4, 0);
	switch_n = 2;				/* sr and sr-nack, on smaller chunks */
	plan_small[0] = plan[1];
	plan_small[1] = plan[3];
	switch_plan = plan_small;
	switch_peer_chunk = 1;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 22, 35);
	switch_peer_chunk = 0;
	/* a shift past the connection's (2 here) or a chunk below one packet: not started */
	switch_plan = plan;
	switch_n = 5;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 400000);
	a = sdr_ep_create(&c.a);
	assert_non_null(a);
	assert_int_equal(sdr_ep_change_scheme(a, &sr3, NULL, 0), -EINVAL);
	assert_int_equal(sdr_ep_change_scheme(a, &sr2, NULL, 0), 0);
	sdr_ep_destroy(a);
	c.a.attr.max_chunk_shift = 3;		/* 4 KiB >> 3 is half a packet */
	assert_null(sdr_ep_create(&c.a));
	switch_plan = NULL;
}

/*
 * scheme auto with data both ways (dir = both): each side changes the scheme of its own
 * sends, on its own schedule and plan, while the other direction keeps running (A every 5
 * of its messages through ec-mds:4,2, sr, ec-xor:4,2, sr-nack; B every 7 through sr-nack,
 * ec-xor:4,2, ec-mds:4,2, sr), under 3 % loss, reordering and duplication, with the FEC
 * work offloaded and late. Every message both ways arrives intact; each side made and
 * answered its changes (nothing in flight ever saw two schemes: a wrong code would corrupt
 * a decode or stall a message).
 */
static void
test_scheme_change_both(void **state)
{
	static const struct sdr_scheme plan[2][4] = {
		{ { SDR_SCHEME_EC_MDS, 4, 2, 0 }, { SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_EC_XOR, 4, 2, 0 },
		  { SDR_SCHEME_SR_NACK, 0, 0, 0 } },
		{ { SDR_SCHEME_SR_NACK, 0, 0, 0 }, { SDR_SCHEME_EC_XOR, 4, 2, 0 },
		  { SDR_SCHEME_EC_MDS, 4, 2, 0 }, { SDR_SCHEME_SR, 0, 0, 0 } },
	};
	static const uint32_t every[2] = { 5, 7 };
	enum { N = 40 };
	struct fec_thread *fec = calloc(1, sizeof(*fec));
	struct wire w = { .loss = 0.03, .dup = 0.02, .reorder = 0.05, .delay = 200000 };
	uint8_t *src[2][N], *dst[2][N], *fr[32];
	uint64_t lens[2][N], now = 0;
	uint32_t sent[2] = { 0 }, posted[2] = { 0 }, sdone[2] = { 0 }, rdone[2] = { 0 };
	uint32_t slots[2][N], asks[2] = { 0 };
	struct sdr_ep *ep[2];
	struct side_cfg c;

	(void)state;
	switch_plan = plan[0];
	switch_n = 4;
	make_cfgs(&c, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 2 * w.delay);
	switch_plan = NULL;
	for (int i = 0; i < 2; i++) {
		struct sdr_ep_cfg *e = i ? &c.b : &c.a;

		e->attr.dir = SDR_DIR_BOTH;
		e->rel.scheme_may_change = 1;
		e->fec_jobs = 4;
	}
	ep[0] = sdr_ep_create(&c.a);
	ep[1] = sdr_ep_create(&c.b);
	assert_non_null(ep[0]);
	assert_non_null(ep[1]);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, 41);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (int d = 0; d < 2; d++)
		for (uint32_t i = 0; i < N; i++) {
			lens[d][i] = sdr_rng_next(&w.rng) % (48 * 1024 + 1);
			src[d][i] = malloc(lens[d][i] + 1);
			dst[d][i] = malloc(lens[d][i] + 1);
			pattern(src[d][i], lens[d][i], (uint64_t)d * 1000 + i);
			memset(dst[d][i], 0xEE, lens[d][i]);
		}
	for (;;) {
		struct sdr_ep_done dd;
		uint64_t t, tb;
		int ch0, ch1;

		/* until every message is in and the last changes asked are answered */
		sdr_ep_scheme(ep[0], &ch0);
		sdr_ep_scheme(ep[1], &ch1);
		if ((sdone[0] == N && sdone[1] == N && rdone[0] == N && rdone[1] == N && !ch0 &&
		     !ch1) || now >= 60ull * 1000000000)
			break;

		for (int d = 0; d < 2; d++) {
			struct sdr_ep *me = ep[d], *peer = ep[!d];

			/* d sends src[d] to !d, which posts dst[d] */
			while (posted[d] < N && sdr_ep_recv(peer, dst[d][posted[d]], lens[d][posted[d]],
							    NULL, posted[d], now,
							    &slots[d][posted[d]]) == 0)
				posted[d]++;
			while (sent[d] < N && sdr_ep_send(me, src[d][sent[d]], lens[d][sent[d]],
							  0xC0DE0000u + sent[d], sent[d], now) == 0) {
				sent[d]++;
				if (sent[d] % every[d] == 0 &&
				    sdr_ep_change_scheme(me, &plan[d][asks[d] % 4], NULL, now) == 0)
					asks[d]++;
			}
		}
		outputs(&w, ep[0], ep[1], fr, now);
		fec_take(fec, ep[0], &w.rng, now, 2 * w.delay);
		fec_take(fec, ep[1], &w.rng, now, 2 * w.delay);
		for (int d = 0; d < 2; d++)
			while (sdr_ep_poll(ep[d], &dd)) {
				assert_int_equal(dd.status, SDR_DONE_OK);
				if (!dd.is_recv) {
					sdone[d]++;
					continue;
				}
				/* ep[d] received a message of !d */
				assert_memory_equal(dst[!d][dd.cookie], src[!d][dd.cookie],
						    lens[!d][dd.cookie] ? lens[!d][dd.cookie] : 1);
				assert_int_equal(sdr_ep_recv_release(ep[d], dd.slot), 0);
				rdone[d]++;
			}
		t = next_event(ep[0], ep[1], &w, now);
		tb = fec_step(fec, now);
		if (tb < t)
			t = tb;
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		arrivals(&w, ep[0], ep[1], &c, now);
	}
	for (int d = 0; d < 2; d++) {
		const uint64_t *cn = sdr_ep_counters(ep[d]);
		char nm[SDR_SCHEME_NAME_MAX];
		struct sdr_scheme now_s = sdr_ep_scheme(ep[d], NULL);

		print_message("both ways, side %c: %u/%u sent, %u/%u received; asked %u, changes %"
			      PRIu64 " (made and answered), refused by the peer %" PRIu64 ", decodes %"
			      PRIu64 "; now sending %s\n", d ? 'B' : 'A', sdone[d], N, rdone[d], N,
			      asks[d], cn[SDR_EP_SCHEME_CHANGES], cn[SDR_EP_SCHEME_REFUSED],
			      cn[SDR_EP_DECODES], sdr_scheme_format(&now_s, nm, sizeof(nm)));
		assert_int_equal(sdone[d], N);
		assert_int_equal(rdone[d], N);
		assert_int_equal(cn[SDR_EP_DECODE_FAILED], 0);
		assert_true(asks[d] >= 4);
	}
	/* each side's changes: its own asks that went through, and the peer's it answered */
	assert_int_equal(sdr_ep_counters(ep[0])[SDR_EP_SCHEME_CHANGES] +
			 sdr_ep_counters(ep[1])[SDR_EP_SCHEME_CHANGES],
			 2 * (asks[0] + asks[1]) - 2 * (sdr_ep_counters(ep[0])[SDR_EP_SCHEME_REFUSED] +
							sdr_ep_counters(ep[1])[SDR_EP_SCHEME_REFUSED]));
	assert_true(sdr_ep_counters(ep[0])[SDR_EP_DECODES] > 0 &&
		    sdr_ep_counters(ep[1])[SDR_EP_DECODES] > 0);
	while (fec->n)
		fec_step(fec, UINT64_MAX);
	for (int d = 0; d < 2; d++) {
		for (uint32_t i = 0; i < N; i++) {
			free(src[d][i]);
			free(dst[d][i]);
		}
		sdr_ep_destroy(ep[d]);
	}
	for (int i = 0; i < 32; i++)
		free(fr[i]);
	free(w.f);
	free(fec);
}

static void
test_ec_mds(void **state)
{
	(void)state;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0, 10, 5);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 40, 6);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 8, 4, 0 }, 0.10, 30, 7);
}

/*
 * The ICRC checked as a payload is placed (sdr_ep_input_unchecked(), what the dataplane
 * does on the lcore that received a frame): under loss, reordering and duplication, with
 * one frame in 7 corrupted (data, parity and control alike), each scheme, the FEC work
 * offloaded too (then the check goes first while a decode is out): every corrupted frame
 * is refused, those whose bytes were copied before the check leave nothing the message
 * keeps, and every message arrives whole.
 */
static int
unchecked_off(void **state)
{
	(void)state;
	unchecked_input = 0;
	corrupt_every = 0;
	return 0;
}

static void
test_icrc_as_placed(void **state)
{
	(void)state;
	unchecked_input = 1;
	corrupt_every = 7;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.03, 30, 41);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.03, 30, 42);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.02, 30, 43);
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 30, 44);
	run_transfer_full((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 30, 45, 0, 2, 0);
	assert_true(corrupt_refused > 100);
	printf("icrc as placed: %u corrupted frames refused\n", corrupt_refused);
	/* and without corruption, every frame is taken */
	corrupt_every = 0;
	run_transfer((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.02, 20, 46);
}

/*
 * An application goes away mid-transfer (sdr_ep_abort): the sender's, the receiver's, or
 * both. Its messages and receives in flight end on both sides (CANCELLED at the aborting
 * sender, FAILED at the peer; no hang), and the next messages land in the next receives:
 * every receive that completes holds exactly the bytes of the message with its sequence
 * number, and every message sent after the abort completes. B's payload copies run late
 * (the claim path), so the receiver aborts with copies into released buffers still out.
 */
#define AB_OLD 6
#define AB_NEW 3
#define AB_RECVS (AB_OLD + AB_NEW + 4)	/* the receiver keeps posting: messages the sender
					 * still had in flight may come first */

struct ab_msg {
	uint8_t *buf;
	uint64_t len;
	uint64_t seq;		/* from its completion */
	int status;		/* -1: not done */
};

/* A receive has some chunks in, and packets missing (not even claimed: a copy to come). */
static int
part_in(const struct sdr_ep *b, const uint32_t *slots, const struct ab_msg *rcv, uint32_t posted,
	const struct copy_thread *ct)
{
	struct sdr_rx_msg_info info;

	for (uint32_t r = 0; r < posted; r++) {
		uint32_t claims = 0;

		if (rcv[r].status >= 0 || sdr_rx_msg_info(sdr_ep_rx(b), slots[r], &info) != 0 ||
		    info.state != SDR_SLOT_POSTED || info.chunks_done == 0)
			continue;
		for (uint32_t i = 0; i < ct->n; i++)
			claims += ct->q[i].cl.slot == slots[r] && ct->q[i].cl.seq == info.seq;
		if (info.pkts_received + claims < info.npkts)
			return 1;
	}
	return 0;
}

/* Every message sent after the abort is in the receive of its sequence number. */
static int
received_all(const struct ab_msg *snd, const struct ab_msg *rcv)
{
	for (uint32_t m = AB_OLD; m < AB_OLD + AB_NEW; m++) {
		uint32_t r;

		for (r = AB_OLD; r < AB_RECVS && !(rcv[r].status == SDR_DONE_OK &&
						     rcv[r].seq == snd[m].seq); r++)
			;
		if (snd[m].status != SDR_DONE_OK || r == AB_RECVS)
			return 0;
	}
	return 1;
}

static void
run_abort(struct sdr_scheme scheme, double loss, uint64_t seed, int abort_a, int abort_b,
	  uint32_t old_sends, uint64_t *withdrawn)
{
	struct copy_thread ct = { .q = malloc(COPIES_MAX * sizeof(*ct.q)) };
	struct ab_msg snd[AB_OLD + AB_NEW], rcv[AB_RECVS];
	struct wire w = { .loss = loss, .dup = wire_dup, .reorder = 0.05, .delay = 200000 };
	struct side_cfg c;
	struct sdr_ep *a, *b;
	uint8_t *fr[32];
	uint64_t now = 0, aborted_at = 0;
	uint32_t sent = 0, posted = 0, slots[AB_RECVS], old_ok = 0, new_sends = 0,
		 released_slot = UINT32_MAX, polled, posted_old = 0;
	int phase = 0;		/* 0: before the abort, 1: after */
	char name[32];

	make_cfgs(&c, scheme, 2 * w.delay);
	a = sdr_ep_create(&c.a);
	b = sdr_ep_create(&c.b);
	assert_non_null(a);
	assert_non_null(b);
	w.f = malloc(INFLIGHT_FRAMES * sizeof(*w.f));
	sdr_rng_seed(&w.rng, seed);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	for (uint32_t i = 0; i < AB_RECVS; i++) {
		rcv[i].len = 32 * 1024;
		rcv[i].buf = malloc(rcv[i].len);
		memset(rcv[i].buf, 0xEE, rcv[i].len);
		rcv[i].status = -1;
		if (i >= AB_OLD + AB_NEW)
			continue;
		snd[i].len = 32 * 1024;
		snd[i].buf = malloc(snd[i].len);
		pattern(snd[i].buf, snd[i].len, 1000 + i);
		snd[i].status = -1;
	}
	while (now < 20ull * 1000000000) {
		uint32_t send_hi = phase ? AB_OLD + AB_NEW : old_sends;
		uint32_t recv_hi = phase ? AB_RECVS : AB_OLD;
		struct sdr_ep_done d;
		uint64_t t, tb;

		/* after the abort, the application of each side starts on the new messages */
		if (phase && sent < AB_OLD)
			sent = AB_OLD;
		if (phase && posted < AB_OLD)
			posted = AB_OLD;
		while (posted < recv_hi && sdr_ep_recv(b, rcv[posted].buf, rcv[posted].len, NULL,
						       posted, now, &slots[posted]) == 0)
			posted++;
		/*
		 * A receiver that withdrew receives: messages sent before the sender heard of it
		 * may be matched to them and fail. The new stream starts once it has.
		 */
		if (phase && abort_b && sdr_ep_rel_rx_counters(b)[REL_RX_WITHDRAWN] > 0 &&
		    sdr_ep_rel_tx_counters(a)[REL_TX_WITHDRAW_ANSWERS] == 0)
			send_hi = sent;
		while (sent < send_hi && sdr_ep_send(a, snd[sent].buf, snd[sent].len, 0, sent,
						     now) == 0)
			sent++;
		outputs(&w, a, b, fr, now);
		polled = 0;
		while (sdr_ep_poll(a, &d)) {
			polled++;
			assert_false(d.is_recv);
			snd[d.cookie].status = d.status;
			snd[d.cookie].seq = d.seq;
			if (d.cookie >= AB_OLD) {
				assert_int_equal(d.status, SDR_DONE_OK);
				new_sends++;
			} else if (phase && abort_a) {
				assert_int_equal(d.status, SDR_DONE_CANCELLED);
			} else if (phase) {
				/* withdrawn by the receiver, or complete there before it went */
				assert_true(d.status == SDR_DONE_FAILED || d.status == SDR_DONE_OK);
			}
			old_ok += d.status == SDR_DONE_OK && d.cookie < AB_OLD && !phase;
		}
		while (sdr_ep_poll(b, &d)) {
			polled++;
			assert_true(d.is_recv);
			if (d.cookie < AB_OLD && phase && abort_b)
				continue;	/* released by the abort: to be ignored */
			assert_no_copy_into(&ct, rcv[d.cookie].buf, rcv[d.cookie].len);
			rcv[d.cookie].status = d.status;
			rcv[d.cookie].seq = d.seq;
			assert_int_equal(sdr_ep_recv_release(b, d.slot), 0);
		}
		/* the sender goes while a receive is partly in: it must still end */
		if (!phase && (old_ok >= 3 || (abort_a ? part_in(b, slots, rcv, posted, &ct) :
				       old_ok >= 2))) {
			/* the application(s) go away with messages in flight */
			phase = 1;
			aborted_at = now;
			posted_old = posted;
			if (abort_a) {
				/* and what it had on the wire is lost: the partial receive stays so */
				w.n = 0;
				sdr_ep_abort(a, now);
			}
			if (abort_b) {
				for (uint32_t i = 0; i < posted; i++)
					if (rcv[i].status < 0 && sdr_ep_recv_writers(b, slots[i]) > 0)
						released_slot = slots[i];
				sdr_ep_abort(b, now);
				/* released at once, but copies already claimed still land */
				if (released_slot != UINT32_MAX)
					assert_true(sdr_ep_recv_writers(b, released_slot) > 0);
			}
			continue;
		}
		if (phase && new_sends == AB_NEW && ct.n == 0 && received_all(snd, rcv))
			break;
		if (polled)
			continue;	/* room for more sends and receives now */
		t = next_event(a, b, &w, now);
		tb = copy_step(&ct, b, now);
		if (tb < t)
			t = tb;
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		for (uint32_t i = 0; i < w.n;) {
			struct wire_frame *f = &w.f[i];

			if (f->t > now) {
				i++;
				continue;
			}
			if (f->to_b)
				claim_or_input(&ct, b, &c.b.attr, f->b, f->len, &w.rng, now, 2 * w.delay);
			else
				deliver(a, QPN_A, &c.a.attr, f->b, f->len, now);
			*f = w.f[--w.n];
		}
	}
	if (new_sends != AB_NEW || !received_all(snd, rcv))
		fail_msg("%s abort%s%s: %u/%u new sends, not every one received, at %.3f s",
			 sdr_scheme_format(&scheme, name, sizeof(name)), abort_a ? " a" : "",
			 abort_b ? " b" : "", new_sends, AB_NEW, (double)now * 1e-9);
	if (released_slot != UINT32_MAX)
		assert_int_equal(sdr_ep_recv_writers(b, released_slot), 0);
	/* a receiver that stayed saw each of its receives end: none waits for nothing */
	for (uint32_t r = 0; r < posted_old && !abort_b; r++)
		if (rcv[r].status < 0)
			fail_msg("receive %u (posted before the abort) never ended", r);
	/* a receive that completed holds the message of its sequence number, whole */
	for (uint32_t r = 0; r < AB_RECVS; r++) {
		uint32_t m;

		if (rcv[r].status != SDR_DONE_OK)
			continue;
		for (m = 0; m < AB_OLD + AB_NEW && !(snd[m].status >= 0 && snd[m].seq == rcv[r].seq);
		     m++)
			;
		if (m == AB_OLD + AB_NEW)
			fail_msg("receive %u (seq %" PRIu64 ") completed but no message had its "
				 "sequence number", r, rcv[r].seq);
		assert_memory_equal(rcv[r].buf, snd[m].buf, snd[m].len);
		if (r >= AB_OLD)
			assert_true(m >= AB_OLD || !abort_a);
	}
	if (abort_a) {
		assert_true(sdr_ep_rel_tx_counters(a)[REL_TX_CANCELLED] > 0);
		assert_true(sdr_ep_rel_tx_counters(a)[REL_TX_SKIPS_ANSWERED] > 0);
		if (!abort_b) {
			/* a receive for a cancelled message failed, or it was whole; that may be
			 * one the application posted after the abort, before the SKIP came */
			uint64_t failed = 0;

			for (uint32_t r = 0; r < AB_RECVS; r++)
				failed += rcv[r].status == SDR_DONE_FAILED;
			assert_int_equal(sdr_ep_rel_rx_counters(b)[REL_RX_SKIPPED], failed);
		}
	}
	/* receives that were not complete were withdrawn, and the sender answered */
	if (sdr_ep_rel_rx_counters(b)[REL_RX_WITHDRAWN] > 0)
		assert_true(sdr_ep_rel_rx_counters(b)[REL_RX_WITHDRAWS_ANSWERED] > 0);
	*withdrawn += sdr_ep_rel_rx_counters(b)[REL_RX_WITHDRAWN];
	print_message("abort %s%s%s: at %.1f ms; %" PRIu64 " cancelled, %" PRIu64 " skipped, %"
		      PRIu64 " withdrawn, %" PRIu64 " failed at the sender; new messages verified\n",
		      sdr_scheme_format(&scheme, name, sizeof(name)), abort_a ? " a" : "",
		      abort_b ? " b" : "", (double)aborted_at * 1e-6,
		      sdr_ep_rel_tx_counters(a)[REL_TX_CANCELLED],
		      sdr_ep_rel_rx_counters(b)[REL_RX_SKIPPED],
		      sdr_ep_rel_rx_counters(b)[REL_RX_WITHDRAWN],
		      sdr_ep_rel_tx_counters(a)[REL_TX_WITHDRAWN]);
	for (uint32_t i = 0; i < AB_RECVS; i++) {
		if (i < AB_OLD + AB_NEW)
			free(snd[i].buf);
		free(rcv[i].buf);
	}
	free(ct.q);
	teardown(&w, fr, a, b);
}

static void
test_abort(void **state)
{
	uint64_t withdrawn = 0;

	(void)state;
	run_abort((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.02, 51, 1, 0, AB_OLD, &withdrawn);
	assert_int_equal(withdrawn, 0);
	run_abort((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.02, 52, 0, 1, AB_OLD, &withdrawn);
	run_abort((struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 }, 0.05, 53, 1, 1, AB_OLD,
		  &withdrawn);
	run_abort((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 54, 1, 0, AB_OLD,
		  &withdrawn);
	run_abort((struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 }, 0.03, 55, 0, 1, AB_OLD,
		  &withdrawn);
	run_abort((struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 2, 0 }, 0.02, 56, 1, 1, AB_OLD,
		  &withdrawn);
	/* the receiver had posted ahead of the sender: the sender numbers past its receives */
	run_abort((struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 }, 0.02, 57, 0, 1, 2, &withdrawn);
	assert_true(withdrawn > 0);	/* some receiver went with receives half in */
}

/* ---- the WAN side: forged control messages and data, a peer that restarts ---- */

#define WAN_MSGS	24
#define WAN_LEN		(16 * 1024)

/* Two endpoints on a clean wire, A sending to B, and the messages of the run. */
struct wan {
	struct side_cfg c;
	struct wire w;
	struct sdr_ep *a, *b;
	uint8_t *fr[32];
	uint64_t now;
	uint8_t *src[WAN_MSGS], *dst[WAN_MSGS];
	int sst[WAN_MSGS], rst[WAN_MSGS];	/* completion status; -1: none yet */
	uint64_t rseq[WAN_MSGS];
	uint32_t nsent, nposted;
	uint32_t rbase;				/* receives of the current B start here */
	int fec;				/* run both sides' FEC jobs at once ... */
	int fec_hold;				/* ... or take them and keep them out */
	struct sdr_fec_job *held[64];
	struct sdr_ep *held_ep[64];
	uint32_t nheld;
};

static void
wan_init(struct wan *x, struct sdr_scheme scheme)
{
	memset(x, 0, sizeof(*x));
	make_cfgs(&x->c, scheme, 200000);
	x->w.delay = 100000;
	x->w.f = malloc(INFLIGHT_FRAMES * sizeof(*x->w.f));
	sdr_rng_seed(&x->w.rng, 7);
	for (int i = 0; i < 32; i++)
		x->fr[i] = malloc(FRAME);
	for (int i = 0; i < WAN_MSGS; i++) {
		x->src[i] = malloc(WAN_LEN);
		x->dst[i] = malloc(WAN_LEN);
		pattern(x->src[i], WAN_LEN, 500 + (uint64_t)i);
		memset(x->dst[i], 0xEE, WAN_LEN);
		x->sst[i] = x->rst[i] = -1;
	}
	x->a = sdr_ep_create(&x->c.a);
	x->b = sdr_ep_create(&x->c.b);
	assert_non_null(x->a);
	assert_non_null(x->b);
}

static void
wan_fini(struct wan *x)
{
	for (int i = 0; i < WAN_MSGS; i++) {
		free(x->src[i]);
		free(x->dst[i]);
	}
	teardown(&x->w, x->fr, x->a, x->b);
}

static void
wan_post(struct wan *x, uint32_t n)
{
	for (; n > 0 && x->nposted < WAN_MSGS; n--) {
		uint32_t slot;

		assert_int_equal(sdr_ep_recv(x->b, x->dst[x->nposted], WAN_LEN, NULL, x->nposted,
					     x->now, &slot), 0);
		x->nposted++;
	}
}

static void
wan_send(struct wan *x, uint32_t n)
{
	for (; n > 0 && x->nsent < WAN_MSGS; n--) {
		assert_int_equal(sdr_ep_send(x->a, x->src[x->nsent], WAN_LEN, 0, x->nsent, x->now), 0);
		x->nsent++;
	}
}

static void
wan_poll(struct wan *x)
{
	struct sdr_ep_done d;

	while (sdr_ep_poll(x->a, &d))
		x->sst[d.cookie] = d.status;
	while (sdr_ep_poll(x->b, &d)) {
		x->rst[d.cookie] = d.status;
		x->rseq[d.cookie] = d.seq;
		assert_int_equal(sdr_ep_recv_release(x->b, d.slot), 0);
	}
}

/* The FEC jobs both sides made: run and returned now, or taken and kept out (fec_hold). */
static void
wan_fec(struct wan *x)
{
	struct sdr_ep *eps[2] = { x->a, x->b };
	struct sdr_fec_job *j[16];
	uint32_t n;

	for (int e = 0; e < 2; e++)
		while ((n = sdr_ep_fec_take(eps[e], j, 16)) > 0)
			for (uint32_t i = 0; i < n; i++) {
				if (x->fec_hold) {
					assert_true(x->nheld < 64);
					x->held_ep[x->nheld] = eps[e];
					x->held[x->nheld++] = j[i];
					continue;
				}
				sdr_fec_job_run(j[i]);
				sdr_ep_fec_done(eps[e], j[i], x->now);
			}
}

/* The jobs kept out come back. */
static void
wan_fec_release(struct wan *x)
{
	x->fec_hold = 0;
	for (uint32_t i = 0; i < x->nheld; i++) {
		sdr_fec_job_run(x->held[i]);
		sdr_ep_fec_done(x->held_ep[i], x->held[i], x->now);
	}
	x->nheld = 0;
}

/* Run for up to @p limit ns, or until sends [0, @p sends) have ended, and with @p all the
 * receives posted as well. */
static void
wan_run_until(struct wan *x, uint64_t limit, uint32_t sends, int all)
{
	uint64_t end = x->now + limit;

	while (x->now < end) {
		uint64_t t, tb;
		uint32_t left = 0;

		outputs(&x->w, x->a, x->b, x->fr, x->now);
		arrivals(&x->w, x->a, x->b, &x->c, x->now);
		if (x->fec)
			wan_fec(x);
		wan_poll(x);
		for (uint32_t i = 0; i < sends; i++)
			left += x->sst[i] < 0;
		for (uint32_t i = x->rbase; all && i < x->nposted; i++)
			left += x->rst[i] < 0;
		if (sends && left == 0)
			return;
		t = sdr_ep_next_time(x->a, x->now);
		tb = sdr_ep_next_time(x->b, x->now);
		t = tb < t ? tb : t;
		for (uint32_t i = 0; i < x->w.n; i++)
			t = x->w.f[i].t < t ? x->w.f[i].t : t;
		x->now = t == UINT64_MAX ? end : t > x->now ? t : x->now + 1000;
	}
}

static void
wan_run(struct wan *x, uint64_t limit, uint32_t sends)
{
	wan_run_until(x, limit, sends, 1);
}

/* Side B (@p side_b) or A restarts: a new endpoint with a new tag, the old one gone. */
static void
wan_restart(struct wan *x, int side_b, uint64_t tag)
{
	struct sdr_ep **ep = side_b ? &x->b : &x->a;
	struct sdr_ep_cfg *c = side_b ? &x->c.b : &x->c.a;

	sdr_ep_destroy(*ep);
	c->tag = tag;
	*ep = sdr_ep_create(c);
	assert_non_null(*ep);
}

/* Receive @p r completed OK with the bytes of send @p s. */
static void
wan_check(const struct wan *x, uint32_t r, uint32_t s)
{
	if (x->rst[r] != SDR_DONE_OK)
		fail_msg("receive %u ended with status %d", r, x->rst[r]);
	assert_int_equal(x->sst[s], SDR_DONE_OK);
	assert_memory_equal(x->dst[r], x->src[s], WAN_LEN);
}

/*
 * Two messages more, sent and received, both verified: the first two of the run (@p more 0),
 * or the next two after the receives B has posted so far (of its current endpoint).
 */
static void
wan_two(struct wan *x, int more)
{
	uint32_t s = x->nsent;

	if (more)
		x->rbase = x->nposted;
	wan_post(x, 2);
	wan_send(x, 2);
	wan_run(x, more ? 200000000 : 100000000, s + 2);
	wan_check(x, x->nposted - 2, s);
	wan_check(x, x->nposted - 1, s + 1);
}

/*
 * A control message as if from A (to B) or from B (to A), built and parsed for real; with
 * @p mac_key, an AES-CMAC under it follows.
 */
static void
forge_ctrl_mac(struct wan *x, int to_b, const struct sdr_ctrl *c, const uint8_t *mac_key)
{
	const struct sdr_ep_cfg *from = to_b ? &x->c.a : &x->c.b;
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_SEND_ONLY,
				.dqpn = sdr_conn_remote_ctrl_qpn(&from->attr) };
	uint8_t payload[SDR_CTRL_MAX_LEN + SDR_MAC_LEN];
	int n = sdr_ctrl_encode(c, payload, SDR_CTRL_MAX_LEN), l;

	assert_true(n > 0);
	if (mac_key != NULL) {
		struct sdr_mac m;

		assert_int_equal(sdr_mac_init(&m, mac_key), 0);
		assert_int_equal(sdr_mac_compute(&m, payload, (size_t)n, payload + n), 0);
		sdr_mac_fini(&m);
		n += SDR_MAC_LEN;
	}
	l = roce_build(x->fr[0], FRAME, &from->path, &pkt, payload, (uint32_t)n);
	assert_true(l > 0);
	if (to_b)
		deliver(x->b, QPN_B, &x->c.b.attr, x->fr[0], (uint16_t)l, x->now);
	else
		deliver(x->a, QPN_A, &x->c.a.attr, x->fr[0], (uint16_t)l, x->now);
}

static void
forge_ctrl(struct wan *x, int to_b, const struct sdr_ctrl *c)
{
	forge_ctrl_mac(x, to_b, c, NULL);
}

/*
 * A data frame to B as if from A, for message @p seq's slot and generation, with PSN @p psn
 * and R_Key @p rkey (an attacker off the path does not know the receive's).
 */
static void
forge_data(struct wan *x, uint64_t seq, uint32_t psn, uint32_t rkey)
{
	const struct sdr_conn_attr *a = &x->c.b.attr;
	uint32_t slot = (uint32_t)(seq & ((1u << a->split.id_bits) - 1));
	struct roce_pkt pkt = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM,
				.dqpn = sdr_conn_data_qpn(QPN_B, a, 0, sdr_conn_seq_gen(a, seq)),
				.psn = psn, .rkey = rkey, .dma_len = 64,
				.imm = sdr_imm_pack(&a->split, slot, 0, 0) };
	uint8_t payload[64] = { 0 };
	int l = roce_build(x->fr[0], FRAME, &x->c.a.path, &pkt, payload, sizeof(payload));

	assert_true(l > 0);
	deliver(x->b, QPN_B, a, x->fr[0], (uint16_t)l, x->now);
}

static uint64_t
ep_count(const struct sdr_ep *ep, enum sdr_ep_counter k)
{
	return sdr_ep_counters(ep)[k];
}

/* The handshake: each side learns and proves the other's tag; nothing else goes before. */
static void
test_handshake(void **state)
{
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	assert_false(sdr_ep_ready(x.a));
	wan_two(&x, 0);
	assert_true(sdr_ep_ready(x.a) && sdr_ep_ready(x.b));
	assert_true(sdr_ep_peer_tag(x.a) == sdr_ep_tag(x.b));
	assert_true(sdr_ep_peer_tag(x.b) == sdr_ep_tag(x.a));
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_BAD_TOKEN) + ep_count(x.b, SDR_EP_CTRL_BAD_TOKEN), 0);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS) + ep_count(x.b, SDR_EP_PEER_RESTARTS), 0);
	/* the CTS posted before the handshake waited for it: no receive took a packet early */
	assert_true(ep_count(x.b, SDR_EP_CTRL_HELD) > 0);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_BAD_RKEY], 0);
	wan_fini(&x);
}

/*
 * Forged control messages: without the receiver's tag each is dropped as ctrl_bad_token;
 * with it (an attacker on the path), one that reaches outside the open window is dropped
 * and counted under its own reason. Either way the connection goes on with verified
 * messages.
 */
/*
 * scheme auto's control messages forged with the right tags (an on-path attacker): a REPORT
 * of more packets than were ever sent, or of more lost than carried, moves no estimate; an
 * answer to a SCHEME question never asked changes nothing; a question for a scheme that
 * does not exist or does not fit is refused; the transfers after them complete intact.
 */
static void
test_forged_auto(void **state)
{
	static const struct sdr_scheme plan[] = { { SDR_SCHEME_EC_MDS, 4, 2, 0 } };
	struct sdr_auto_estimate e0, e1;
	struct sdr_scheme s;
	struct sdr_ctrl c;
	struct wan x;
	uint64_t ta, tb;
	int changing;

	(void)state;
	auto_report = 1;
	switch_plan = plan;
	switch_n = 1;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	auto_report = 0;
	switch_plan = NULL;
	wan_post(&x, 2);
	wan_send(&x, 2);
	wan_run(&x, 100000000, 2);
	wan_check(&x, 0, 0);
	ta = sdr_ep_tag(x.a);
	tb = sdr_ep_tag(x.b);
	sdr_auto_estimate(sdr_ep_auto(x.a), &e0);
	/* REPORTs to the sender: a million packets, then more lost than carried */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_REPORT, .value = 1000000, .dst_tag = ta,
			       .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	c.value = 5ull << 32 | 4;
	forge_ctrl(&x, 0, &c);
	assert_int_equal(ep_count(x.a, SDR_EP_REPORTS_IMPLAUSIBLE), 2);
	sdr_auto_estimate(sdr_ep_auto(x.a), &e1);
	assert_true(e1.total_pkts == e0.total_pkts && e1.total_lost == e0.total_lost);
	/* an answer to a question the sender never asked */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SCHEME, .flags = SDR_CTRL_F_ANSWER,
			       .value = (uint64_t)SDR_SCHEME_EC_MDS << 32 | 4 << 16 | 2, .cum = 2,
			       .dst_tag = ta, .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	s = sdr_ep_scheme(x.a, &changing);
	assert_true(s.kind == SDR_SCHEME_SR && !changing);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 0);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_STALE), 1);	/* counted where it stops */
	/* a SYNC answer to no SYNC of ours: ignored, counted */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SYNC, .flags = SDR_CTRL_F_ANSWER, .value = 12345,
			       .dst_tag = ta, .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_STALE), 2);
	/* questions to the receiver: a kind that does not exist, a code too big to fit */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SCHEME, .value = 7ull << 32, .cum = 2,
			       .dst_tag = tb, .src_tag = ta };
	forge_ctrl(&x, 1, &c);
	c.value = (uint64_t)SDR_SCHEME_EC_MDS << 32 | 200 << 16 | 100;
	forge_ctrl(&x, 1, &c);
	c.value = (uint64_t)SDR_SCHEME_EC_MDS << 32 | 1 << 16 | 8;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_REFUSALS), 3);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 0);
	s = sdr_ep_scheme(x.b, NULL);
	assert_int_equal(s.kind, SDR_SCHEME_SR);
	/* a valid one at the point decided (refused) already: refused as well, as a late
	 * repeat of a question refused then (which the sender no longer asks) cannot be told
	 * from a new one */
	c.value = (uint64_t)SDR_SCHEME_SR_NACK << 32;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_REFUSALS), 4);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 0);
	/* a valid question from message 3 on (applied), then one from message 1 on (a late
	 * duplicate of an older change: it must not take the code back), the same question
	 * again (our answer may have been lost: answered, nothing changes), another scheme at
	 * the same point (refused: the decision there stands), one from 2^24 + 1 messages
	 * ahead (ignored: it would make every genuine question look late), then back to SR
	 * from message 4 on */
	c.cum = 3;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	c.value = (uint64_t)SDR_SCHEME_SR << 32;
	c.cum = 1;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_CTRL_STALE), 1);
	c.value = (uint64_t)SDR_SCHEME_SR_NACK << 32;
	c.cum = 3;
	forge_ctrl(&x, 1, &c);
	c.value = (uint64_t)SDR_SCHEME_SR << 32;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_REFUSALS), 5);
	c.cum = 2 + (uint32_t)SDR_SEQ_WINDOW + 1;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_CTRL_STALE), 2);
	c.cum = 4;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 2);
	/* data frames for the last message, 60 000 PSNs ahead, without the receive's R_Key:
	 * each is a bad_rkey, and its PSN counts nowhere (else the PSNs before it would be
	 * counted lost, and the real frames after it too late) */
	{
		uint64_t pkts = ep_count(x.b, SDR_EP_WIRE_PKTS), lost = ep_count(x.b, SDR_EP_WIRE_LOST);
		uint64_t bad = sdr_ep_rx_counters(x.b)[SDR_RX_BAD_RKEY];

		forge_data(&x, 1, 60000, 0x5EC0DE);
		forge_data(&x, 1, 120000, 0);
		assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_BAD_RKEY], bad + 2);
		assert_int_equal(ep_count(x.b, SDR_EP_WIRE_PKTS), pkts);
		assert_int_equal(ep_count(x.b, SDR_EP_WIRE_LOST), lost);
		assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_LATE_PACKET], 0);
	}
	/* and the connection goes on */
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 200000000, 3);
	wan_check(&x, 2, 2);
	wan_fini(&x);
}

/*
 * A scheme change asked of a peer that is gone once the messages before it are through: the
 * endpoint keeps asking (busy: sdr_ep_busy(), no rebuild over it) but has nothing in flight
 * (sdr_ep_in_flight(): it may be deleted), however long the peer stays away.
 */
static void
test_scheme_ask_unanswered(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_SR_NACK, 0, 0, 0 },
	};
	struct wan x;

	(void)state;
	switch_plan = plan;	/* (the schemes both sides may change to) */
	switch_n = 2;
	wan_init(&x, plan[0]);
	switch_plan = NULL;
	wan_post(&x, 2);
	wan_send(&x, 2);
	wan_run(&x, 2000000000ull, 2);
	wan_check(&x, 0, 0);
	wan_check(&x, 1, 1);
	assert_false(sdr_ep_busy(x.a));
	assert_false(sdr_ep_in_flight(x.a));
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[1], NULL, x.now), 0);
	assert_true(sdr_ep_busy(x.a));
	x.w.loss = 1.0;		/* the peer is gone */
	wan_run_until(&x, 10000000000ull, 0, 0);
	assert_true(ep_count(x.a, SDR_EP_SCHEME_ASKS) > 0);
	assert_true(sdr_ep_busy(x.a));
	assert_false(sdr_ep_in_flight(x.a));
	assert_false(sdr_ep_in_flight(x.b));
	wan_fini(&x);
}

/*
 * The receiver decides one question per point (wire-format.md, SCHEME), so the sender asks
 * one: a change asked right after an answered one, no message between, waits (-EBUSY: asked
 * again later) instead of being refused by the peer; after a message it is asked and made.
 */
static void
test_scheme_point_answered(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_SR_NACK, 0, 0, 0 },
	};
	struct wan x;

	(void)state;
	switch_plan = plan;
	switch_n = 2;
	wan_init(&x, plan[0]);
	switch_plan = NULL;
	wan_two(&x, 0);
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[1], NULL, x.now), 0);
	wan_run_until(&x, 100000000ull, 0, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(sdr_ep_scheme(x.a, NULL).kind, SDR_SCHEME_SR_NACK);
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[0], NULL, x.now), -EBUSY);
	wan_two(&x, 1);				/* under sr-nack */
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[0], NULL, x.now), 0);
	wan_run_until(&x, 100000000ull, 0, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 2);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_REFUSED), 0);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_REFUSALS), 0);
	assert_int_equal(sdr_ep_scheme(x.a, NULL).kind, SDR_SCHEME_SR);
	wan_fini(&x);
}

/*
 * cfg.codes_outside: no code is made on the endpoint's thread. A change asked without its
 * code waits for it (asked for, not asked of the peer); the peer's question waits,
 * unanswered, for the receiver's codes; codes for another scheme are refused. Once given,
 * the change is made at both ends and the next message is delivered under it.
 */
static void
test_scheme_codes_outside(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_SR, 0, 0, 0 }, { SDR_SCHEME_EC_MDS, 4, 2, 0 },
		{ SDR_SCHEME_EC_XOR, 4, 2, 0 },
	};
	struct sdr_scheme s, other = { SDR_SCHEME_EC_MDS, 4, 1, 0 };
	struct ec_codec *dec, *query;
	struct wan x;

	(void)state;
	switch_plan = plan;
	switch_n = 3;
	wan_init(&x, plan[0]);
	switch_plan = NULL;
	sdr_ep_destroy(x.a);
	sdr_ep_destroy(x.b);
	x.c.a.codes_outside = x.c.b.codes_outside = 1;
	x.a = sdr_ep_create(&x.c.a);
	x.b = sdr_ep_create(&x.c.b);
	assert_non_null(x.a);
	assert_non_null(x.b);
	wan_post(&x, 2);
	wan_send(&x, 1);
	wan_run(&x, 1000000000ull, 1);
	wan_check(&x, 0, 0);
	assert_false(sdr_ep_code_wanted(x.a, &s));
	/* the sender's code, not brought: wanted, and the peer not asked meanwhile */
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[1], NULL, x.now), 0);
	wan_run_until(&x, 100000000ull, 0, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_ASKS), 0);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CODE_WAITS), 1);
	assert_true(sdr_ep_code_wanted(x.a, &s));
	assert_true(s.kind == SDR_SCHEME_EC_MDS && s.k == 4 && s.m == 2);
	assert_int_equal(sdr_ep_code_make(&other, &dec, &query), 0);
	assert_int_equal(sdr_ep_code_give(x.a, &other, &dec, &query), -ESTALE);
	ec_codec_destroy(dec);
	ec_codec_destroy(query);
	assert_int_equal(sdr_ep_code_make(&s, &dec, &query), 0);
	assert_int_equal(sdr_ep_code_give(x.a, &s, &dec, &query), 0);
	assert_null(dec);
	assert_null(query);
	assert_false(sdr_ep_code_wanted(x.a, &s));
	/* asked now; the receiver waits for its codes, and does not answer */
	wan_run_until(&x, 100000000ull, 0, 0);
	assert_true(ep_count(x.a, SDR_EP_SCHEME_ASKS) > 0);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CODE_WAITS), 1);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 0);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 0);
	assert_true(sdr_ep_code_wanted(x.b, &s));
	assert_true(s.kind == SDR_SCHEME_EC_MDS && s.k == 4 && s.m == 2);
	assert_int_equal(sdr_ep_code_make(&s, &dec, &query), 0);
	assert_int_equal(sdr_ep_code_give(x.b, &s, &dec, &query), 0);
	/* the question is answered at once (not at the sender's next ask, RTOs away by now):
	 * both change, and message 1 goes under it */
	wan_run_until(&x, 1000000ull, 0, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CODE_WAITS), 1);
	assert_true(sdr_ep_scheme(x.a, NULL).kind == SDR_SCHEME_EC_MDS);
	wan_send(&x, 1);
	wan_run(&x, 1000000000ull, 2);
	wan_check(&x, 1, 1);
	/* a code the receiver's side could not make: the question is refused, not left */
	assert_int_equal(sdr_ep_code_make(&plan[2], &dec, NULL), 0);
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[2], &dec, x.now), 0);
	assert_null(dec);
	wan_run_until(&x, 100000000ull, 0, 0);
	assert_true(sdr_ep_code_wanted(x.b, &s));
	assert_true(s.kind == SDR_SCHEME_EC_XOR && s.k == 4 && s.m == 2);
	dec = query = NULL;
	assert_int_equal(sdr_ep_code_give(x.b, &s, &dec, &query), 0);
	wan_run_until(&x, 1000000ull, 0, 0);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_REFUSALS), 1);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_REFUSED), 1);
	assert_true(sdr_ep_scheme(x.a, NULL).kind == SDR_SCHEME_EC_MDS);
	wan_send(&x, 1);
	wan_post(&x, 1);
	wan_run(&x, 1000000000ull, 3);
	wan_check(&x, 2, 2);
	wan_fini(&x);
}

/*
 * A question to change the scheme, while a data packet of the peer's is claimed and its copy
 * not committed (a receive worker still copies it): deferred, not made (the packet would
 * count in a chunk of the other code); the same question once the copy is in and the message
 * done is answered with the change.
 */
static void
test_scheme_waits_for_copies(void **state)
{
	static const struct sdr_scheme plan[] = { { SDR_SCHEME_EC_MDS, 4, 2, 0 } };
	uint8_t *fr[32];
	uint16_t lens[32];
	struct sdr_rx_claim cl;
	struct roce_view v;
	struct sdr_ctrl c;
	struct wan x;
	uint32_t n, ch, gen, held = UINT32_MAX;
	enum sdr_qpn_kind kind;

	(void)state;
	switch_plan = plan;
	switch_n = 1;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	switch_plan = NULL;
	wan_post(&x, 2);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 1);
	wan_check(&x, 0, 0);
	/* message 1's frames, straight from A; the first data frame claimed, not committed */
	wan_send(&x, 1);
	for (int i = 0; i < 32; i++)
		fr[i] = malloc(FRAME);
	n = sdr_ep_output(x.a, x.now, fr, FRAME, lens, 32);
	for (uint32_t i = 0; i < n && held == UINT32_MAX; i++) {
		assert_int_equal(roce_parse(fr[i], lens[i], ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
		kind = sdr_conn_qpn_decode(QPN_B, &x.c.b.attr, v.dqpn, &ch, &gen);
		if (kind == SDR_QPN_DATA) {
			assert_int_equal(sdr_ep_input_claim(x.b, &v, kind, gen, x.now, &cl), 1);
			held = i;
		}
	}
	assert_true(held != UINT32_MAX);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SCHEME,
			       .value = (uint64_t)SDR_SCHEME_EC_MDS << 32 | 4 << 16 | 2, .cum = 1,
			       .dst_tag = sdr_ep_tag(x.b), .src_tag = sdr_ep_tag(x.a) };
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_DEFERRED), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 0);
	/* the copy is made and committed; the rest of the message arrives */
	memcpy(cl.dst, cl.src, cl.len);
	sdr_ep_input_commit(x.b, &cl, x.now);
	for (uint32_t i = 0; i < n; i++)
		if (i != held)
			deliver(x.b, QPN_B, &x.c.b.attr, fr[i], lens[i], x.now);
	wan_run(&x, 100000000, 2);
	wan_check(&x, 1, 1);
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	for (int i = 0; i < 32; i++)
		free(fr[i]);
	wan_fini(&x);
}

static void
test_forged_control(void **state)
{
	uint64_t ta, tb, next_rx, credit_hi;
	struct sdr_ctrl c;
	struct wan x;
	uint8_t buf[SDR_CTRL_MAX_LEN];

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_post(&x, 2);
	wan_send(&x, 2);
	wan_run(&x, 100000000, 2);
	wan_check(&x, 0, 0);
	ta = sdr_ep_tag(x.a);
	tb = sdr_ep_tag(x.b);
	next_rx = 2;

	/* SKIP far ahead: once blind, once with the tags */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SKIP, .cum = (uint32_t)(next_rx + 0x40000123u),
			       .win_start = (uint32_t)next_rx, .dst_tag = tb ^ 1, .src_tag = ta };
	forge_ctrl(&x, 1, &c);
	assert_int_equal(ep_count(x.b, SDR_EP_CTRL_BAD_TOKEN), 1);
	c.dst_tag = tb;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_SKIP_IMPLAUSIBLE], 1);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_SKIPPED], 0);

	/* a message in flight whose first packets only have gone out */
	wan_post(&x, 1);
	wan_send(&x, 1);
	while (sdr_ep_rel_tx_counters(x.a)[REL_TX_CTS] < 3) {
		uint32_t n;
		uint16_t fl[32];

		x.now += 10000;
		while ((n = sdr_ep_output(x.b, x.now, x.fr, FRAME, fl, 32)) > 0)
			for (uint32_t i = 0; i < n; i++)
				wire_put(&x.w, x.fr[i], fl[i], 0, x.now);
		arrivals(&x.w, x.a, x.b, &x.c, x.now);
	}
	{
		uint16_t fl[1];

		assert_int_equal(sdr_ep_output(x.a, x.now, x.fr, FRAME, fl, 1), 1);
		wire_put(&x.w, x.fr[0], fl[0], 1, x.now);
	}
	/* ACK COMPLETE of message 2 (slot 2, generation 0): blind, then too early */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_ACK, .msg_id = 2, .gen = 0, .value = 2,
			       .flags = SDR_CTRL_F_COMPLETE, .cum = 4, .dst_tag = ta ^ 0x100,
			       .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_BAD_TOKEN), 1);
	c.dst_tag = ta;
	forge_ctrl(&x, 0, &c);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_ACK_IMPLAUSIBLE], 1);
	/* its slot and generation with another message's number: an ACK of the message that
	 * had them slots x generations messages before, replayed, is not this one's */
	{
		uint64_t unknown = sdr_ep_rel_tx_counters(x.a)[REL_TX_CTRL_UNKNOWN_MSG];

		c.value = 2 + 4096;
		forge_ctrl(&x, 0, &c);
		assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_CTRL_UNKNOWN_MSG], unknown + 1);
		assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_ACK_IMPLAUSIBLE], 1);
		c.value = 2;
	}
	/* a window bit of a chunk not sent yet */
	c.flags = 0;
	c.cum = 0;
	c.nwords = 1;
	c.win_start = 0;
	c.win[0] = 0x20000000u;		/* chunk 2 */
	forge_ctrl(&x, 0, &c);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_ACK_IMPLAUSIBLE], 2);
	wan_poll(&x);
	assert_int_equal(x.sst[2], -1);		/* not completed by any of them */

	/* CTS: credit 2^30 ahead; a receive number outside the slots */
	credit_hi = 3 + (1u << 30);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_CTS, .cum = (uint32_t)credit_hi,
			       .win_start = (uint32_t)credit_hi - 1, .value = WAN_LEN,
			       .dst_tag = ta, .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	c.cum = 3;
	c.win_start = 3 + 5000;
	forge_ctrl(&x, 0, &c);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_CTS_IMPLAUSIBLE], 2);
	/* answers to a SKIP and a WITHDRAW nobody sent */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SKIP, .flags = SDR_CTRL_F_ANSWER, .cum = 1000,
			       .win_start = 2, .dst_tag = ta, .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_SKIP_ANSWER_IMPLAUSIBLE], 1);
	c.type = SDR_CTRL_WITHDRAW;
	c.dst_tag = tb;
	c.src_tag = ta;
	forge_ctrl(&x, 1, &c);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_WITHDRAW_ANSWER_IMPLAUSIBLE], 1);
	/* WITHDRAW far ahead */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_WITHDRAW, .cum = 0x20000000u, .win_start = 2,
			       .dst_tag = ta, .src_tag = tb };
	forge_ctrl(&x, 0, &c);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_WITHDRAW_IMPLAUSIBLE], 1);
	/* a HELLO from a stranger changes nothing */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_HELLO, .src_tag = 0x5EEDull };
	forge_ctrl(&x, 0, &c);
	assert_true(sdr_ep_peer_tag(x.a) == tb && sdr_ep_ready(x.a));
	/* a version 1 (tagless) message is refused by the decoder */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SKIP, .cum = 99, .src_tag = 1 };
	assert_true(sdr_ctrl_encode(&c, buf, sizeof(buf)) > 0);

	/* the connection goes on: message 2 and two more, every byte verified */
	wan_post(&x, 2);
	wan_send(&x, 2);
	wan_run(&x, 200000000, 5);
	for (uint32_t i = 0; i < 5; i++) {
		wan_check(&x, i, i);
		assert_true(x.rseq[i] == i);
	}
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 0);
	wan_fini(&x);
}

/*
 * Forged data: packets that name the right slot, generation, address and length, with a
 * correct ICRC, but a guessed R_Key, arrive before the genuine ones. They are dropped
 * (bad_rkey); the receive completes with the genuine bytes.
 */
static void
test_forged_data(void **state)
{
	struct sdr_tx *atk;
	struct sdr_tx_msg m;
	struct sdr_tx_job job;
	uint8_t *evil = malloc(WAN_LEN);
	uint16_t fl[32];
	uint32_t n, forged = 0;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 });
	memset(evil, 0x66, WAN_LEN);
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 1);
	wan_check(&x, 0, 0);
	/* message 1: the attacker knows the slot and generation, and guesses keys */
	wan_post(&x, 1);
	for (uint32_t guess = 0; guess < 4; guess++) {
		struct sdr_conn_attr a = x.c.a.attr;

		a.remote_rkey = guess == 0 ? 0 : guess == 1 ? 0xBBBB : 0x5d000000u + guess;
		atk = sdr_tx_create(&a, &x.c.a.path);
		assert_non_null(atk);
		sdr_tx_skip_to(atk, 1);
		assert_int_equal(sdr_tx_msg_start(atk, evil, WAN_LEN, 0, &m), 0);
		assert_int_equal(sdr_tx_job_data(&job, &m, 0, m.npkts), 0);
		while ((n = sdr_tx_build(atk, &job, x.fr, FRAME, fl, 32)) > 0)
			for (uint32_t i = 0; i < n; i++, forged++)
				deliver(x.b, QPN_B, &x.c.b.attr, x.fr[i], fl[i], x.now);
		sdr_tx_destroy(atk);
	}
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_BAD_RKEY], forged);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_PLACED] > 0, 1);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 2);
	wan_check(&x, 1, 1);
	free(evil);
	wan_fini(&x);
}

/*
 * The receiving side restarts under a live connection (a new endpoint, a new tag), with
 * packets of the old one still on the wire. The sender learns it from the handshake, fails
 * what it had in flight, and the new receiver gets the next messages, every byte verified;
 * the old epoch's late packets are dropped on both sides.
 */
static void
test_peer_restart(void **state)
{
	uint8_t old_ctrl[FRAME];
	uint16_t old_len = 0;
	uint32_t before;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 });
	wan_post(&x, 2);
	wan_send(&x, 4);
	wan_run_until(&x, 100000000, 2, 0);	/* two messages are done, two wait for receives */
	for (uint32_t i = 0; i < x.w.n && old_len == 0; i++)
		if (!x.w.f[i].to_b && x.w.f[i].len < 200) {	/* a control packet of the old B */
			memcpy(old_ctrl, x.w.f[i].b, x.w.f[i].len);
			old_len = x.w.f[i].len;
		}
	before = 0;
	for (uint32_t i = 0; i < 4; i++)
		before += x.sst[i] == SDR_DONE_OK;
	assert_int_equal(before, 2);
	/* B restarts: what it had posted is gone with it */
	wan_restart(&x, 1, 0xB3B3B3B3B3B3B3B3ull);
	x.rbase = x.nposted = 2;
	wan_post(&x, 3);
	wan_run(&x, 200000000, 4);
	/* A failed the messages the old B never finished, once it knew */
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(x.sst[2], SDR_DONE_FAILED);
	assert_int_equal(x.sst[3], SDR_DONE_FAILED);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_PEER_RESTART], 2);
	assert_true(sdr_ep_peer_tag(x.a) == 0xB3B3B3B3B3B3B3B3ull);
	/* the new B's receives take the next messages */
	x.nsent = 4;
	wan_send(&x, 3);
	wan_run(&x, 200000000, 7);
	for (uint32_t i = 0; i < 3; i++)
		wan_check(&x, 2 + i, 4 + i);
	/* a late control packet of the old B: from a tag A has retired */
	if (old_len) {
		uint64_t old = ep_count(x.a, SDR_EP_CTRL_OLD_EPOCH);

		deliver(x.a, QPN_A, &x.c.a.attr, old_ctrl, old_len, x.now);
		assert_int_equal(ep_count(x.a, SDR_EP_CTRL_OLD_EPOCH), old + 1);
	}
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_PEER_RESTARTS), 0);
	wan_fini(&x);
}

/*
 * B's connection rebuilt (a new endpoint for new settings, as `conn set` makes) right after
 * a receive completed, its final ACK lost on the way to A. With the new endpoint taking over
 * from the old one (sdr_ep_take_over()), A learns from its HELLO that the message was
 * delivered and completes it OK; without, A can only fail it (data delivered, reported
 * failed). Either way the new endpoint's receives take the next messages.
 */
enum { TO_RESTART, TO_TAKE_OVER, TO_FORGED_PEER, TO_FORGED_OTHER };

static void
take_over_run(int mode)
{
	struct sdr_ctrl c = { .type = SDR_CTRL_HELLO, .src_tag = 0xF0F0F0F0F0F0F0F0ull,
			      .nwords = 3, .win = { 0, 0, 0x80000000u } };
	struct sdr_ep *old;
	struct wan x;
	uint64_t t;
	uint32_t n;

	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR_NACK, 0, 0, 0 });
	wan_post(&x, 1);
	wan_send(&x, 1);
	while (x.rst[0] < 0 && x.now < 100000000)
		wan_run_until(&x, 1000, 0, 0);
	assert_int_equal(x.rst[0], SDR_DONE_OK);
	assert_true(x.sst[0] < 0);
	/* every frame on its way to A is lost: the final ACK with them, if it went out */
	for (uint32_t i = n = 0; i < x.w.n; i++)
		if (x.w.f[i].to_b)
			x.w.f[n++] = x.w.f[i];
	x.w.n = n;
	if (mode == TO_FORGED_PEER || mode == TO_FORGED_OTHER) {
		/* the HELLO a take-over sends, by hand: with B's tag (what a take-over of B
		 * says), or another (of an endpoint before B: a replay) */
		t = sdr_ep_tag(x.b) ^ (mode == TO_FORGED_OTHER);
		c.dst_tag = sdr_ep_tag(x.a);
		c.win[0] = (uint32_t)(t >> 32);
		c.win[1] = (uint32_t)t;
		c.win_start = (uint32_t)x.rseq[0];
		forge_ctrl(&x, 0, &c);
		assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
		wan_poll(&x);
		assert_int_equal(x.sst[0], mode == TO_FORGED_PEER ? SDR_DONE_OK : SDR_DONE_FAILED);
		wan_fini(&x);
		return;
	}
	old = x.b;
	x.c.b.tag = 0xB4B4B4B4B4B4B4B4ull;
	x.b = sdr_ep_create(&x.c.b);
	assert_non_null(x.b);
	if (mode == TO_TAKE_OVER)
		assert_int_equal(sdr_ep_take_over(x.b, old), 0);
	sdr_ep_destroy(old);
	x.rbase = x.nposted = 1;
	wan_post(&x, 2);
	wan_run(&x, 200000000, 1);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(x.sst[0], mode == TO_TAKE_OVER ? SDR_DONE_OK : SDR_DONE_FAILED);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_DELIVERED_AT_RESTART],
			 mode == TO_TAKE_OVER);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_PEER_RESTART], mode == TO_RESTART);
	assert_true(sdr_ep_peer_tag(x.a) == 0xB4B4B4B4B4B4B4B4ull);
	x.nsent = 1;
	wan_send(&x, 2);
	wan_run(&x, 200000000, 3);
	wan_check(&x, 1, 1);
	wan_check(&x, 2, 2);
	wan_fini(&x);
}

/* B's connection rebuilt: a new endpoint that took over the old one, its first receive posted. */
static void
wan_take_over_b(struct wan *x, uint64_t tag)
{
	struct sdr_ep *old = x->b;

	x->c.b.tag = tag;
	x->b = sdr_ep_create(&x->c.b);
	assert_non_null(x->b);
	assert_int_equal(sdr_ep_take_over(x->b, old), 0);
	sdr_ep_destroy(old);
	x->rbase = x->nposted;
	wan_post(x, 1);
}

/*
 * A connection rebuilt before every message on both ends (sdr-perf --fresh): B's new
 * endpoint posts its receive, then A's new endpoint says HELLO (a restart to B: the receive
 * it posted, untouched, stays for the new A) and sends into it. B delivers it, the final ACK
 * is lost, and B is rebuilt once more: the endpoint that takes over must tell A that the
 * message kept over A's restart was delivered, or A fails a message whose bytes arrived.
 */
static void
take_over_kept_receive(void)
{
	struct wan x;
	uint32_t n;

	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 1);
	wan_check(&x, 0, 0);
	wan_take_over_b(&x, 0xB5B5B5B5B5B5B5B5ull);
	wan_run_until(&x, 2000000, 0, 0);	/* B's HELLO and CTS reach the A before */
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	wan_restart(&x, 0, 0xA5A5A5A5A5A5A5A5ull);
	wan_send(&x, 1);
	while (x.rst[1] < 0 && x.now < 100000000)
		wan_run_until(&x, 1000, 0, 0);
	assert_int_equal(ep_count(x.b, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(x.rst[1], SDR_DONE_OK);
	assert_true(x.sst[1] < 0);
	for (uint32_t i = n = 0; i < x.w.n; i++)	/* the final ACK to A is lost */
		if (x.w.f[i].to_b)
			x.w.f[n++] = x.w.f[i];
	x.w.n = n;
	wan_take_over_b(&x, 0xB6B6B6B6B6B6B6B6ull);
	wan_run(&x, 200000000, 2);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_DELIVERED_AT_RESTART], 1);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_PEER_RESTART], 0);
	wan_check(&x, 1, 1);
	x.nsent = 2;	/* and the new B's receive takes the next */
	wan_send(&x, 1);
	wan_run(&x, 200000000, 3);
	wan_check(&x, 2, 2);
	wan_fini(&x);
}

static void
test_take_over(void **state)
{
	struct sdr_ctrl c = { .type = SDR_CTRL_HELLO, .src_tag = 0xF0F0F0F0F0F0F0F0ull,
			      .nwords = SDR_CTRL_MAX_WORDS };
	struct sdr_ep *other;
	struct wan x;
	uint32_t slot;

	(void)state;
	take_over_run(TO_TAKE_OVER);
	take_over_run(TO_RESTART);
	take_over_run(TO_FORGED_PEER);
	take_over_run(TO_FORGED_OTHER);
	take_over_kept_receive();

	/* refused: an old endpoint with a receive posted, or no peer yet; another connection */
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	other = sdr_ep_create(&x.c.b);
	assert_non_null(other);
	assert_int_equal(sdr_ep_take_over(other, x.b), -EBUSY);	/* no handshake yet */
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 1);
	wan_check(&x, 0, 0);
	assert_int_equal(sdr_ep_recv(x.b, x.dst[1], WAN_LEN, NULL, 1, x.now, &slot), 0);
	assert_int_equal(sdr_ep_take_over(other, x.b), -EBUSY);
	sdr_ep_destroy(other);
	x.c.b.attr.remote_qpn += 64;
	other = sdr_ep_create(&x.c.b);
	assert_non_null(other);
	assert_int_equal(sdr_ep_take_over(other, x.a), -EINVAL);
	sdr_ep_destroy(other);
	x.c.b.attr.remote_qpn -= 64;

	/* a take-over's HELLO (B's tag) whose window names a message not sent whole (it waits
	 * for a receive) completes nothing: the restart fails it */
	wan_send(&x, 2);
	wan_run(&x, 100000000, 2);	/* the first takes the receive posted above */
	assert_int_equal(x.sst[1], SDR_DONE_OK);
	assert_true(x.sst[2] < 0);
	c.dst_tag = sdr_ep_tag(x.a);
	memset(c.win, 0xFF, sizeof(c.win));
	c.win[0] = (uint32_t)(sdr_ep_tag(x.b) >> 32);
	c.win[1] = (uint32_t)sdr_ep_tag(x.b);
	forge_ctrl(&x, 0, &c);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	wan_poll(&x);
	assert_int_not_equal(x.sst[2], SDR_DONE_OK);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_DELIVERED_AT_RESTART], 0);
	wan_fini(&x);
}

/*
 * Two ends configured with different schemes: each HELLO names the scheme of its sender's
 * data, and the receiver takes it before any data where it can (set up for changes: every
 * message decodes on the sender's code), keeps its own where only the acknowledgements
 * differ (sr against sr-nack), and otherwise refuses it: no receive takes that sender's
 * data (hello_scheme_refused), where a decode on its own code would have delivered wrong
 * bytes. Data frames are lost so that messages need their decodes.
 */
static int fixed_rkeys;		/* hello_scheme_run(): one R_Key for every receive */

/* A on scheme @p a, B configured on @p b: set up for changes to either (@p may_change), or
 * fixed on its own. */
static void
wan_init_apart(struct wan *x, struct sdr_scheme a, struct sdr_scheme b, int may_change)
{
	static struct sdr_scheme plan[2];

	plan[0] = a;
	plan[1] = b;
	switch_plan = may_change ? plan : NULL;
	switch_n = 2;
	wan_init(x, a);
	switch_plan = NULL;
	sdr_ep_destroy(x->b);
	x->c.b.rel.scheme = b;
	if (!may_change && sdr_scheme_is_ec(&b)) {
		x->c.b.attr.ec_k = b.k;
		x->c.b.attr.ec_m = b.m;
	}
	x->b = sdr_ep_create(&x->c.b);
	assert_non_null(x->b);
}

static void
hello_scheme_run(struct wan *x, struct sdr_scheme a, struct sdr_scheme b, int may_change)
{
	wan_init_apart(x, a, b, may_change);
	if (fixed_rkeys) {
		sdr_ep_destroy(x->a);
		x->c.a.attr.remote_rkey = x->c.b.attr.local_rkey = 0x5d0a;
		x->c.a.attr.generations = x->c.b.attr.generations = 2;
		sdr_ep_destroy(x->b);
		x->a = sdr_ep_create(&x->c.a);
		x->b = sdr_ep_create(&x->c.b);
		assert_non_null(x->a);
		assert_non_null(x->b);
	}
	wan_post(x, 3);
	wan_send(x, 3);
	drop_to_b = 3;
}

static void
hello_scheme_both(struct wan *x, struct sdr_scheme a, struct sdr_scheme b)
{
	struct sdr_ep_done d;
	int got[2] = { -1, -1 }, sent = 0;

	wan_init_apart(x, a, b, 1);
	sdr_ep_destroy(x->a);
	sdr_ep_destroy(x->b);
	x->c.a.attr.dir = x->c.b.attr.dir = SDR_DIR_BOTH;
	x->c.b.rel.scheme_may_change = 0;
	x->c.b.attr.ec_k = b.k;
	x->c.b.attr.ec_m = b.m;
	x->a = sdr_ep_create(&x->c.a);
	x->b = sdr_ep_create(&x->c.b);
	assert_non_null(x->a);
	assert_non_null(x->b);
	for (uint32_t i = 0; i < 2; i++) {
		uint32_t slot;

		assert_int_equal(sdr_ep_recv(x->a, x->dst[i], WAN_LEN, NULL, i, x->now, &slot), 0);
		assert_int_equal(sdr_ep_recv(x->b, x->dst[2 + i], WAN_LEN, NULL, 2 + i, x->now,
					     &slot), 0);
		assert_int_equal(sdr_ep_send(x->a, x->src[2 + i], WAN_LEN, 0, 2 + i, x->now), 0);
		assert_int_equal(sdr_ep_send(x->b, x->src[i], WAN_LEN, 0, i, x->now), 0);
	}
	drop_to_b = 0;
	for (int step = 0; step < 4000; step++, x->now += 25000) {
		outputs(&x->w, x->a, x->b, x->fr, x->now);
		arrivals(&x->w, x->a, x->b, &x->c, x->now);
		while (sdr_ep_poll(x->a, &d)) {
			if (d.is_recv) {
				got[d.cookie] = d.status;
				assert_int_equal(sdr_ep_recv_release(x->a, d.slot), 0);
			}
		}
		while (sdr_ep_poll(x->b, &d)) {
			assert_false(d.is_recv);	/* none of A's data is taken */
			sent += d.status == SDR_DONE_OK;
		}
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(got[i], SDR_DONE_OK);
		assert_memory_equal(x->dst[i], x->src[i], WAN_LEN);
	}
	assert_int_equal(sent, 2);
	assert_true(ep_count(x->b, SDR_EP_HELLO_SCHEME_REFUSED) > 0);
	assert_int_equal(ep_count(x->a, SDR_EP_HELLO_SCHEME_REFUSED), 0);
	assert_int_equal(ep_count(x->a, SDR_EP_SCHEME_CHANGES), 1);
	wan_fini(x);
}

/*
 * A receiver that becomes ready with no HELLO of its peer's tag in hand: it learned the
 * tag from one, a stranger's HELLO came next, then proven control messages of the peer
 * that are not HELLOs (forged here in the peer's name, as its CTS or REPORTs would come).
 * It keys no receive and asks with a HELLO of its own; the peer's answer names its scheme
 * (ec-mds:4,2), which the receiver (configured ec-mds:2,2/2 KiB, set up for changes) takes
 * before the peer's data, which arrives intact.
 */
static void
hello_scheme_ask(struct wan *x, struct sdr_scheme a, struct sdr_scheme b)
{
	struct sdr_ctrl c;
	uint64_t ta, tb;

	wan_init_apart(x, a, b, 1);
	ta = sdr_ep_tag(x->a);
	tb = sdr_ep_tag(x->b);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_HELLO, .src_tag = ta,
			       .value = 1ull << 63 | (uint64_t)a.kind << 32 | a.k << 16 | a.m };
	forge_ctrl(x, 1, &c);				/* the peer's, unproven */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_HELLO, .src_tag = 0x5757575757575757ull };
	forge_ctrl(x, 1, &c);				/* a stranger's */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_REPORT, .src_tag = ta, .dst_tag = tb };
	forge_ctrl(x, 1, &c);				/* proven: the peer's tag again */
	assert_false(sdr_ep_ready(x->b));
	{	/* B tells the peer its tag (lost here), then hears from it once more */
		uint16_t fl[32];

		while (sdr_ep_output(x->b, x->now, x->fr, FRAME, fl, 32) > 0)
			;
	}
	forge_ctrl(x, 1, &c);
	assert_true(sdr_ep_ready(x->b));
	assert_int_equal(ep_count(x->b, SDR_EP_HELLO_SCHEME_REFUSED), 0);
	assert_int_equal(sdr_ep_rx_held(x->b), 0);
	/* the real A hears B's question and answers it; then data */
	wan_post(x, 2);
	wan_send(x, 2);
	drop_to_b = 2;
	wan_run(x, 300000000, 2);
	for (uint32_t i = 0; i < 2; i++)
		wan_check(x, i, i);
	assert_true(ep_count(x->b, SDR_EP_HELLO_ASKS) >= 1);
	assert_int_equal(ep_count(x->b, SDR_EP_SCHEME_CHANGES), 1);
	assert_true(ep_count(x->b, SDR_EP_DECODES) > 0);
	wan_fini(x);
}

static void
test_hello_scheme(void **state)
{
	const struct sdr_scheme mds42 = { SDR_SCHEME_EC_MDS, 4, 2, 0 },
				mds22 = { SDR_SCHEME_EC_MDS, 2, 2, 1 },
				sr = { SDR_SCHEME_SR, 0, 0, 0 }, nack = { SDR_SCHEME_SR_NACK, 0, 0, 0 };
	struct wan x;

	(void)state;
	/* the receiver is set up for changes: it takes the sender's code and chunk */
	hello_scheme_run(&x, mds42, mds22, 1);
	wan_run(&x, 300000000, 3);
	for (uint32_t i = 0; i < 3; i++)
		wan_check(&x, i, i);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_HELLO_SCHEME_REFUSED), 0);
	assert_true(ep_count(x.b, SDR_EP_DECODES) > 0);
	wan_fini(&x);
	/* fixed at both ends, only the acknowledgements differ: kept */
	hello_scheme_run(&x, sr, nack, 0);
	wan_run(&x, 300000000, 3);
	for (uint32_t i = 0; i < 3; i++)
		wan_check(&x, i, i);
	assert_int_equal(ep_count(x.b, SDR_EP_HELLO_SCHEME_REFUSED), 0);
	wan_fini(&x);
	/* fixed at both ends on different codes: refused, nothing taken; with fixed R_Keys
	 * too (the receives posted before the handshake had theirs) */
	for (int fixed_keys = 0; fixed_keys < 2; fixed_keys++) {
		fixed_rkeys = fixed_keys;
		hello_scheme_run(&x, mds42, (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 2, 2, 0 }, 0);
		fixed_rkeys = 0;
		wan_run_until(&x, 50000000, 0, 0);
		assert_true(ep_count(x.b, SDR_EP_HELLO_SCHEME_REFUSED) > 0);
		assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 0);
		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(x.rst[i], -1);
		assert_int_equal(ep_count(x.b, SDR_EP_DECODES), 0);
		wan_fini(&x);
	}
	/* data both ways, B fixed on ec-mds:2,2, A set up for changes: B refuses A's data, A
	 * takes B's scheme, and B's own sends still go out keyed and arrive intact */
	hello_scheme_both(&x, mds42, (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 2, 2, 0 });
	/* ready with no HELLO of the peer's in hand: asked for */
	hello_scheme_ask(&x, mds42, mds22);
}

/*
 * A restart after a scheme change, while work of the old peer is still out: both ends go
 * back to the configured scheme (ec-mds:4,2 on 4 KiB chunks; changed to ec-mds:2,2 on
 * 2 KiB), the one with the work out only once it is back. Until then its sends wait, or
 * no receive takes the new peer's data, so no message of the new peer runs on two codes
 * (the wire would not tell: a decode on the wrong code rebuilds wrong bytes). Data frames
 * are lost where each message needs its decode; every new message arrives intact.
 */
static void
restart_scheme_setup(struct wan *x, const struct sdr_scheme *plan, int side_b)
{
	struct sdr_scheme s;
	int changing;

	switch_plan = plan;
	switch_n = 2;
	wan_init(x, plan[0]);
	switch_plan = NULL;
	/* the side whose work is out offloads its FEC (recreated before anything moved) */
	if (side_b) {
		sdr_ep_destroy(x->b);
		x->c.b.fec_jobs = 4;
		x->b = sdr_ep_create(&x->c.b);
	} else {
		sdr_ep_destroy(x->a);
		x->c.a.fec_jobs = 4;
		x->a = sdr_ep_create(&x->c.a);
	}
	x->fec = 1;
	wan_post(x, 2);
	wan_send(x, 1);
	wan_run_until(x, 100000000, 1, 0);
	wan_check(x, 0, 0);
	assert_int_equal(sdr_ep_change_scheme(x->a, &plan[1], NULL, x->now), 0);
	wan_run_until(x, 20000000, 0, 0);
	s = sdr_ep_scheme(x->a, &changing);
	assert_true(!changing && sdr_scheme_eq(&s, &plan[1]));
	assert_int_equal(ep_count(x->b, SDR_EP_SCHEME_CHANGES), 1);
	/* message 1 loses a data frame; the FEC work it makes stays out */
	x->fec_hold = 1;
	drop_to_b = 1;
	wan_send(x, 1);
	wan_run_until(x, 2000000, 0, 0);
	assert_true(x->nheld > 0);
	for (uint32_t i = 0; i < x->nheld; i++)
		assert_ptr_equal(x->held_ep[i], side_b ? x->b : x->a);
}

static void
test_restart_scheme_reset(void **state)
{
	static const struct sdr_scheme plan[] = {
		{ SDR_SCHEME_EC_MDS, 4, 2, 0 }, { SDR_SCHEME_EC_MDS, 2, 2, 1 },
	};
	struct sdr_scheme s;
	struct wan x;

	(void)state;
	/* the receiver's decode is out when the sender restarts */
	restart_scheme_setup(&x, plan, 1);
	wan_restart(&x, 0, 0xA6A6A6A6A6A6A6A6ull);
	x.sst[1] = SDR_DONE_FAILED;		/* its sender is gone */
	wan_send(&x, 2);
	drop_to_b = 2;
	wan_run_until(&x, 3000000, 0, 0);	/* the handshake; the new A waits for receives */
	assert_int_equal(ep_count(x.b, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_RESET_WAITS), 1);
	/* receive 1's completion (a retransmission may have completed it) is held while the
	 * decode reads its buffer, and with it its slot: no receive can be posted yet */
	assert_int_equal(x.rst[1], -1);
	wan_fec_release(&x);
	wan_run_until(&x, 1000000, 0, 0);
	assert_true(x.rst[1] != -1);
	if (x.rst[1] != SDR_DONE_FAILED)
		assert_memory_equal(x.dst[1], x.src[1], WAN_LEN);
	wan_post(&x, 2);
	wan_run(&x, 300000000, 4);
	for (uint32_t i = 2; i < 4; i++)
		wan_check(&x, i, i);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 2);
	assert_true(ep_count(x.b, SDR_EP_DECODES) > 0);
	wan_fini(&x);

	/* the sender's encode is out when the receiver restarts */
	restart_scheme_setup(&x, plan, 0);
	wan_restart(&x, 1, 0xB7B7B7B7B7B7B7B7ull);
	x.rbase = x.nposted = 2;
	wan_post(&x, 3);
	wan_run_until(&x, 3000000, 0, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_RESET_WAITS), 1);
	assert_int_equal(sdr_ep_send(x.a, x.src[2], WAN_LEN, 0, 2, x.now), -EAGAIN);
	wan_fec_release(&x);
	wan_run_until(&x, 1000000, 0, 0);
	assert_true(x.sst[1] != -1);
	wan_send(&x, 3);
	drop_to_b = 3;
	wan_run(&x, 300000000, 5);
	for (uint32_t i = 0; i < 3; i++)
		wan_check(&x, 2 + i, 2 + i);
	assert_int_equal(ep_count(x.a, SDR_EP_SCHEME_CHANGES), 2);
	assert_true(ep_count(x.b, SDR_EP_DECODES) > 0);
	wan_fini(&x);

	/* the scheme changed before any message, then sends wait for receives (nothing of the
	 * epoch sent) when the receiver restarts: such sends stay for a new receiver, but not
	 * on the changed scheme, since it starts on the configured one: they fail, and the
	 * next ones go on that */
	switch_plan = plan;
	switch_n = 2;
	wan_init(&x, plan[0]);
	switch_plan = NULL;
	assert_int_equal(sdr_ep_change_scheme(x.a, &plan[1], NULL, x.now), 0);
	wan_run_until(&x, 20000000, 0, 0);
	assert_int_equal(ep_count(x.b, SDR_EP_SCHEME_CHANGES), 1);
	wan_send(&x, 2);			/* no receive for them */
	wan_run_until(&x, 2000000, 0, 0);
	wan_restart(&x, 1, 0xB8B8B8B8B8B8B8B8ull);
	wan_post(&x, 2);
	wan_run(&x, 100000000, 2);
	assert_int_equal(x.sst[0], SDR_DONE_FAILED);
	assert_int_equal(x.sst[1], SDR_DONE_FAILED);
	assert_int_equal(sdr_ep_rel_tx_counters(x.a)[REL_TX_PEER_RESTART], 2);
	wan_send(&x, 2);
	drop_to_b = 2;
	wan_run(&x, 300000000, 4);
	for (uint32_t i = 0; i < 2; i++)
		wan_check(&x, i, 2 + i);
	s = sdr_ep_scheme(x.a, NULL);
	assert_true(sdr_scheme_eq(&s, &plan[0]));
	wan_fini(&x);
}

/*
 * Both sides are replaced in turn, as when each side's application reconfigures the
 * connection: B restarts and posts receives, then A restarts and sends. Receives B posted
 * before A's restart and still untouched are kept for the new A; with @p data_first, A's old
 * endpoint sends into them first, so they fail with the reset and the new A's messages land
 * in the receives posted after it.
 */
static void
run_both_restart(int data_first)
{
	struct wan x;
	uint32_t ok = 0;

	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 });
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 100000000, 1);
	wan_check(&x, 0, 0);
	/* B restarts and posts receives */
	wan_restart(&x, 1, 0xB4B4B4B4B4B4B4B4ull);
	x.rbase = 1;
	wan_post(&x, data_first ? 2 : 3);
	wan_run(&x, 2000000, 0);	/* the handshake: A's messages so far failed */
	if (data_first) {		/* the old A sends one message into them */
		wan_send(&x, 1);
		wan_run_until(&x, 100000000, 2, 0);
		wan_check(&x, 1, 1);
	}
	assert_true(sdr_ep_ready(x.b));
	/* A restarts: its new endpoint sends three messages */
	wan_restart(&x, 0, 0xA5A5A5A5A5A5A5A5ull);
	x.nsent = 4;
	wan_send(&x, 3);
	if (data_first) {
		wan_run(&x, 3000000, 0);
		x.rbase = 3;
		wan_post(&x, 3);
	}
	wan_run(&x, 300000000, 7);
	assert_int_equal(ep_count(x.b, SDR_EP_PEER_RESTARTS), 1);
	for (uint32_t i = 4; i < 7; i++)
		ok += x.sst[i] == SDR_DONE_OK;
	assert_int_equal(ok, 3);
	if (data_first) {
		assert_int_equal(x.rst[2], SDR_DONE_FAILED);	/* posted, untouched, but the
								 * stream was in use: reset */
		for (uint32_t i = 0; i < 3; i++)
			wan_check(&x, 3 + i, 4 + i);
	} else {
		for (uint32_t i = 0; i < 3; i++)
			wan_check(&x, 1 + i, 4 + i);
		assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_PEER_RESTART], 0);
	}
	wan_fini(&x);
}

static void
test_both_restart(void **state)
{
	(void)state;
	run_both_restart(0);
	run_both_restart(1);
}

/* Both sides recreated with secrets before anything moved. */
static void
wan_auth(struct wan *x, const uint8_t *ka, const uint8_t *kb)
{
	sdr_ep_destroy(x->a);
	sdr_ep_destroy(x->b);
	x->c.a.auth = x->c.b.auth = 1;
	memcpy(x->c.a.auth_key, ka, 16);
	memcpy(x->c.b.auth_key, kb, 16);
	x->a = sdr_ep_create(&x->c.a);
	x->b = sdr_ep_create(&x->c.b);
	assert_non_null(x->a);
	assert_non_null(x->b);
}

/*
 * A shared secret (auth_key): every control message carries its CMAC. The pair moves
 * verified messages; a message with the right tags but no MAC, or a MAC under another key,
 * is dropped before it is read; two sides with different keys never finish the handshake.
 */
static void
test_auth_key(void **state)
{
	static const uint8_t k1[16] = "0123456789abcdef", k2[16] = "0123456789abcdeF";
	struct sdr_ctrl c;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_EC_XOR, 4, 1, 0 });
	wan_auth(&x, k1, k1);
	wan_two(&x, 0);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_BAD_MAC) + ep_count(x.b, SDR_EP_CTRL_BAD_MAC), 0);
	/* an attacker who read the tags, without the key */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SKIP, .cum = 1000, .win_start = 2,
			       .dst_tag = sdr_ep_tag(x.b), .src_tag = sdr_ep_tag(x.a) };
	forge_ctrl(&x, 1, &c);
	forge_ctrl_mac(&x, 1, &c, k2);
	assert_int_equal(ep_count(x.b, SDR_EP_CTRL_BAD_MAC), 2);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_SKIPPED], 0);
	/* the same message under the key is taken (it is plausible) */
	c.cum = 3;
	forge_ctrl_mac(&x, 1, &c, k1);
	assert_int_equal(ep_count(x.b, SDR_EP_CTRL_BAD_MAC), 2);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_SKIP_ANSWERS], 0);
	wan_run(&x, 1000000, 0);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_SKIP_ANSWERS], 1);
	wan_fini(&x);

	/* different keys: nothing is ever proven */
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_auth(&x, k1, k2);
	wan_post(&x, 1);
	wan_send(&x, 1);
	wan_run(&x, 50000000, 1);
	assert_false(sdr_ep_ready(x.a) || sdr_ep_ready(x.b));
	assert_true(ep_count(x.a, SDR_EP_CTRL_BAD_MAC) > 0 && ep_count(x.b, SDR_EP_CTRL_BAD_MAC) > 0);
	assert_int_equal(x.sst[0], -1);
	wan_fini(&x);
}

/*
 * An attacker on the path, without the key, sends A's own messages back to it (their MAC is
 * good: one key both ways): first a HELLO of A's, then the answer A gave it, which is
 * addressed to A's own tag. Taken, that was a restart of a "peer" of A's tag, after which
 * B's every message was dropped as an old epoch's. Now both are dropped as A's own, and
 * the connection carries the next messages, verified.
 */
static void
test_reflected_ctrl(void **state)
{
	static const uint8_t k[16] = "0123456789abcdef";
	struct sdr_ctrl c;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_auth(&x, k, k);
	wan_two(&x, 0);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_HELLO, .dst_tag = sdr_ep_tag(x.b),
			       .src_tag = sdr_ep_tag(x.a) };
	forge_ctrl_mac(&x, 0, &c, k);
	c.flags = SDR_CTRL_F_ANSWER;
	c.dst_tag = sdr_ep_tag(x.a);
	forge_ctrl_mac(&x, 0, &c, k);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_REFLECTED), 2);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), 0);
	wan_two(&x, 1);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS) + ep_count(x.b, SDR_EP_PEER_RESTARTS),
			 0);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_OLD_EPOCH), 0);
	wan_fini(&x);
}

/*
 * Step the pair with every frame arriving at once; the first parity frame to B of offset
 * @p off (any, if UINT32_MAX) is claimed into @p cl (its bytes in @p keep), not input.
 * @return 1 once claimed and receive @p r has ended.
 */
static int
step_claiming_parity(struct wan *x, uint32_t off, uint8_t *keep, struct sdr_rx_claim *cl,
		     uint32_t *claimed_off, int *claimed, uint32_t r)
{
	outputs(&x->w, x->a, x->b, x->fr, x->now);
	for (uint32_t i = 0; i < x->w.n; i++) {
		struct wire_frame *f = &x->w.f[i];
		struct roce_view v;
		uint32_t ch, gen, po;
		enum sdr_qpn_kind kind;

		if (!f->to_b) {
			deliver(x->a, QPN_A, &x->c.a.attr, f->b, f->len, x->now);
			continue;
		}
		memcpy(keep, f->b, f->len);
		assert_int_equal(roce_parse(keep, f->len, ROCE_PARSE_VERIFY_ICRC, &v), ROCE_V_OK);
		kind = sdr_conn_qpn_decode(QPN_B, &x->c.b.attr, v.dqpn, &ch, &gen);
		po = sdr_imm_unpack(&x->c.b.attr.split, v.imm).pkt_off;
		if (!*claimed && kind != SDR_QPN_CTRL && po >= WAN_LEN / x->c.b.attr.mtu &&
		    (off == UINT32_MAX || po == off)) {
			assert_int_equal(sdr_ep_input_claim(x->b, &v, kind, gen, x->now, cl), 1);
			*claimed_off = po;
			*claimed = 1;
			continue;
		}
		sdr_ep_input(x->b, &v, kind, gen, x->now);
	}
	x->w.n = 0;
	while (sdr_ep_poll(x->a, &(struct sdr_ep_done){ 0 }))
		;
	x->now += 10000;
	return *claimed && x->rst[r] >= 0;
}

/*
 * Receive workers: a parity packet of a receive is claimed, its copy still to run when the
 * receive is released. Its parity region is not the next receive's until that copy is in:
 * the next receive's parity packet of the same offset goes elsewhere (it went to the very
 * bytes the late copy then overwrote: a decode would have rebuilt its data from them).
 */
static void
test_parity_copy_after_release(void **state)
{
	static uint8_t keep1[FRAME], keep2[FRAME];
	struct sdr_rx_claim cl1, cl2;
	uint32_t off1 = 0, off2 = 0, slot1;
	int got1 = 0, got2 = 0;
	struct sdr_ep_done d;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_EC_XOR, 2, 1, 0 });
	wan_post(&x, 1);
	wan_send(&x, 1);
	for (uint32_t after = 0; after < 20 && x.now < 100000000;) {
		step_claiming_parity(&x, UINT32_MAX, keep1, &cl1, &off1, &got1, 0);
		after += got1;
		assert_false(sdr_ep_poll(x.b, &d));	/* (its completion waits for the copy) */
	}
	assert_true(got1);
	/* the application gives the receive up (or goes away) */
	slot1 = cl1.slot;
	assert_int_equal(sdr_ep_recv_release(x.b, slot1), 0);
	assert_int_equal(sdr_ep_recv_writers(x.b, slot1), 1);	/* the copy, still out */
	wan_post(&x, 1);
	wan_send(&x, 1);
	while (!got2 && x.now < 200000000) {
		step_claiming_parity(&x, off1, keep2, &cl2, &off2, &got2, 1);
		wan_poll(&x);
	}
	assert_true(got2);
	assert_true(cl2.dst + cl2.len <= cl1.dst || cl1.dst + cl1.len <= cl2.dst);
	memcpy(cl1.dst, cl1.src, cl1.len);	/* the late copy lands */
	sdr_ep_input_commit(x.b, &cl1, x.now);
	memcpy(cl2.dst, cl2.src, cl2.len);
	sdr_ep_input_commit(x.b, &cl2, x.now);
	assert_int_equal(sdr_ep_recv_writers(x.b, slot1), 0);
	x.sst[0] = SDR_DONE_OK;		/* (its receive is gone: A's send ends as it may) */
	wan_run(&x, 100000000, 2);
	wan_check(&x, 1, 1);
	wan_fini(&x);
}

/*
 * A receive that fails (its global timeout: the sender's packets held back on the wire)
 * takes no packet after: the ones that come late are dropped (late_packet) and write not
 * a byte into the buffer the application holds as failed. They were placed.
 */
static void
test_failed_recv_closed(void **state)
{
	struct wire_frame *stash = malloc(256 * sizeof(*stash));
	uint32_t nstash = 0, first = 0, slot = UINT32_MAX;
	uint64_t placed, late;
	struct sdr_ep_done d;
	struct wan x;

	(void)state;
	assert_non_null(stash);
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	sdr_ep_destroy(x.b);
	x.c.b.rel.global_timeout_ns = 3000000;
	x.b = sdr_ep_create(&x.c.b);
	assert_non_null(x.b);
	wan_post(&x, 1);
	wan_send(&x, 1);
	while (x.rst[0] < 0 && x.now < 100000000) {
		outputs(&x.w, x.a, x.b, x.fr, x.now);
		for (uint32_t i = 0; i < x.w.n;)	/* A's data: the first frame goes */
			if (x.w.f[i].to_b && x.w.f[i].len > 1000 && first++ > 0 && nstash < 256) {
				stash[nstash++] = x.w.f[i];
				x.w.f[i] = x.w.f[--x.w.n];
			} else {
				i++;
			}
		arrivals(&x.w, x.a, x.b, &x.c, x.now);
		while (sdr_ep_poll(x.a, &d))
			;
		while (sdr_ep_poll(x.b, &d)) {	/* held, not released yet */
			x.rst[d.cookie] = d.status;
			slot = d.slot;
		}
		x.now += 10000;
	}
	assert_int_equal(x.rst[0], SDR_DONE_TIMEOUT);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_TIMEOUTS], 1);
	assert_true(nstash > 0);
	placed = sdr_ep_rx_counters(x.b)[SDR_RX_PLACED];
	late = sdr_ep_rx_counters(x.b)[SDR_RX_LATE_PACKET];
	/* the application holds it as failed, its buffer as it was then */
	memcpy(x.src[1], x.dst[0], WAN_LEN);
	for (uint32_t i = 0; i < nstash; i++)
		deliver(x.b, QPN_B, &x.c.b.attr, stash[i].b, stash[i].len, x.now);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_PLACED], placed);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_LATE_PACKET], late + nstash);
	assert_memory_equal(x.dst[0], x.src[1], WAN_LEN);
	assert_int_equal(sdr_ep_recv_release(x.b, slot), 0);
	free(stash);
	wan_fini(&x);
}

/*
 * A control packet recorded in the receiver's first epoch (MAC and all: auth_key is on) and
 * replayed after the receiver restarted more times than the tags remembered: the sender
 * does not take it for another restart (our tag changed at each, so it proves nothing), and
 * the real receiver's messages still get through, every byte verified. Without the change
 * of tag, the replay retired the real receiver's tag and locked it out.
 */
static void
test_replayed_epoch(void **state)
{
	static const uint8_t k[16] = "0123456789abcdef";
	uint8_t old_ctrl[FRAME];
	uint16_t old_len = 0;
	uint64_t dropped;
	struct wan x;

	(void)state;
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_auth(&x, k, k);
	wan_post(&x, 2);
	wan_send(&x, 2);
	while (old_len == 0 && x.now < 100000000) {	/* a proven packet of B's, recorded */
		outputs(&x.w, x.a, x.b, x.fr, x.now);
		for (uint32_t i = 0; i < x.w.n && old_len == 0; i++) {
			struct roce_view v;

			/* not a HELLO: a CTS or an ACK */
			if (!x.w.f[i].to_b && x.w.f[i].len < 300 &&
			    roce_parse(x.w.f[i].b, x.w.f[i].len, 0, &v) == ROCE_V_OK &&
			    v.payload[1] != SDR_CTRL_HELLO) {
				memcpy(old_ctrl, x.w.f[i].b, x.w.f[i].len);
				old_len = x.w.f[i].len;
			}
		}
		arrivals(&x.w, x.a, x.b, &x.c, x.now);
		wan_poll(&x);
		x.now += 10000;
	}
	assert_true(old_len > 0);
	wan_run(&x, 100000000, 2);
	wan_check(&x, 0, 0);
	wan_check(&x, 1, 1);
	for (uint32_t i = 0; i <= SDR_PEER_RETIRED; i++) {
		wan_restart(&x, 1, 0xB0B0B0B0B0B0B0B1ull + i);
		wan_run(&x, 20000000, 0);
		assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), i + 1);
		assert_true(sdr_ep_ready(x.a) && sdr_ep_ready(x.b));
	}
	dropped = ep_count(x.a, SDR_EP_CTRL_OLD_EPOCH) + ep_count(x.a, SDR_EP_CTRL_BAD_TOKEN);
	deliver(x.a, QPN_A, &x.c.a.attr, old_ctrl, old_len, x.now);	/* the replay */
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), SDR_PEER_RETIRED + 1);
	assert_int_equal(ep_count(x.a, SDR_EP_CTRL_OLD_EPOCH) +
			 ep_count(x.a, SDR_EP_CTRL_BAD_TOKEN), dropped + 1);
	wan_two(&x, 1);
	assert_int_equal(ep_count(x.a, SDR_EP_PEER_RESTARTS), SDR_PEER_RETIRED + 1);
	wan_fini(&x);
}

/*
 * The sender restarts with its first packets still on the wire: B's receives had nothing
 * yet, so they stay for the new sender; the old sender's packets, arriving after B learned
 * of the restart, are dropped (bad_rkey), and the receives complete with the new sender's
 * messages, every byte verified.
 */
static void
test_restart_stale_packets(void **state)
{
	struct wire_frame *stash = malloc(256 * sizeof(*stash));
	uint32_t nstash = 0;
	struct wan x;

	(void)state;
	assert_non_null(stash);
	wan_init(&x, (struct sdr_scheme){ SDR_SCHEME_SR, 0, 0, 0 });
	wan_post(&x, 2);
	wan_send(&x, 1);
	while (sdr_ep_rel_tx_counters(x.a)[REL_TX_CTS] == 0) {	/* the handshake, a CTS */
		outputs(&x.w, x.a, x.b, x.fr, x.now);
		arrivals(&x.w, x.a, x.b, &x.c, x.now);
		x.now += 10000;
	}
	outputs(&x.w, x.a, x.b, x.fr, x.now);		/* A's data goes out: held back */
	for (uint32_t i = 0; i < x.w.n;)
		if (x.w.f[i].to_b && x.w.f[i].len > 1000 && nstash < 256) {
			stash[nstash++] = x.w.f[i];
			x.w.f[i] = x.w.f[--x.w.n];
		} else {
			i++;
		}
	assert_true(nstash > 0);
	/* A restarts */
	wan_restart(&x, 0, 0xA6A6A6A6A6A6A6A6ull);
	while (ep_count(x.b, SDR_EP_PEER_RESTARTS) == 0 && x.now < 100000000) {
		outputs(&x.w, x.a, x.b, x.fr, x.now);
		arrivals(&x.w, x.a, x.b, &x.c, x.now);
		x.now += 1000;
	}
	assert_int_equal(ep_count(x.b, SDR_EP_PEER_RESTARTS), 1);
	assert_int_equal(sdr_ep_rel_rx_counters(x.b)[REL_RX_PEER_RESTART], 0);	/* kept */
	for (uint32_t i = 0; i < nstash; i++)	/* the old sender's packets come in now */
		deliver(x.b, QPN_B, &x.c.b.attr, stash[i].b, stash[i].len, x.now);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_BAD_RKEY], nstash);
	assert_int_equal(sdr_ep_rx_counters(x.b)[SDR_RX_PLACED], 0);
	/* the new A's messages fill them */
	x.nsent = 1;
	wan_send(&x, 2);
	wan_run(&x, 200000000, 3);
	wan_check(&x, 0, 1);
	wan_check(&x, 1, 2);
	/* and a late packet of the old A, once the new keys are set, fails them too */
	deliver(x.b, QPN_B, &x.c.b.attr, stash[0].b, stash[0].len, x.now);
	assert_true(sdr_ep_rx_counters(x.b)[SDR_RX_PLACED] == 2 * 16);
	free(stash);
	wan_fini(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sr),
		cmocka_unit_test_teardown(test_slots_reused, slots_default),
		cmocka_unit_test_teardown(test_random_geometries, slots_default),
		cmocka_unit_test(test_sr_nack),
		cmocka_unit_test(test_ec_xor),
		cmocka_unit_test(test_ec_mds),
		cmocka_unit_test_teardown(test_icrc_as_placed, unchecked_off),
		cmocka_unit_test(test_loss_reports),
		cmocka_unit_test(test_scheme_change),
		cmocka_unit_test_teardown(test_paths, paths_off),
		cmocka_unit_test(test_paths_all_dead),
		cmocka_unit_test(test_scheme_change_both),
		cmocka_unit_test(test_scheme_change_chunks),
		cmocka_unit_test(test_buffer_bytes),
		cmocka_unit_test(test_forged_auto),
		cmocka_unit_test(test_scheme_waits_for_copies),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_fec_offload),
		cmocka_unit_test(test_claimed_copies),
		cmocka_unit_test(test_zero_copy),
		cmocka_unit_test(test_zero_copy_deadline_in_call),
		cmocka_unit_test(test_steering),
		cmocka_unit_test(test_send_between_ack_and_poll),
		cmocka_unit_test(test_wrong_length),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_forged_control),
		cmocka_unit_test(test_forged_data),
		cmocka_unit_test(test_peer_restart),
		cmocka_unit_test(test_take_over),
		cmocka_unit_test(test_both_restart),
		cmocka_unit_test(test_restart_scheme_reset),
		cmocka_unit_test(test_hello_scheme),
		cmocka_unit_test(test_auth_key),
		cmocka_unit_test(test_reflected_ctrl),
		cmocka_unit_test(test_restart_stale_packets),
		cmocka_unit_test(test_scheme_ask_unanswered),
		cmocka_unit_test(test_scheme_point_answered),
		cmocka_unit_test(test_scheme_codes_outside),
		cmocka_unit_test(test_replayed_epoch),
		cmocka_unit_test(test_failed_recv_closed),
		cmocka_unit_test(test_parity_copy_after_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
