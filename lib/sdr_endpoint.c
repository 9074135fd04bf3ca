/* SPDX-License-Identifier: BSD-3-Clause */
/* One end of an SDR connection: sdr_tx/sdr_rx + rel_tx/rel_rx + FEC + control packets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crc_copy.h"
#include "ec_codec.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "roce_build.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "sdr_bitmap.h"
#include "sdr_ctrl.h"
#include "sdr_endpoint.h"
#include "sdr_keys.h"
#include "link_emu.h"
#include "psn_loss.h"
#include "rng.h"
#include "sdr_peer.h"
#include "sdr_tx.h"
#include "sdr_zero.h"

static const struct sdr_counter_def counter_defs[SDR_EP_NCOUNTERS] = {
	SDR_EP_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table sdr_ep_counter_table = {
	.group = "endpoint",
	.doc = "a connection's endpoint: packets in and out, control messages and their checks, FEC work, sends and receives, the handshake, loss and path reports",
	.n = SDR_EP_NCOUNTERS,
	.defs = counter_defs,
};

const char *
sdr_ep_counter_name(enum sdr_ep_counter c)
{
	return sdr_counter_name(&sdr_ep_counter_table, (unsigned int)c);
}

/* A send in flight, by rel_tx context. */
struct ep_send {
	struct sdr_tx_msg msg;
	int16_t *par_buf;		/* per submessage: sender parity buffer, -1 none */
};

/* An encode waiting for a free parity buffer. */
struct enc_wait {
	uint32_t ctx;
	uint32_t sub;
	uint64_t seq;
};

/* An offloaded encode or decode (cfg.fec_jobs > 0); see sdr_endpoint.h. */
enum { FEC_ENCODE = 1, FEC_DECODE };

struct sdr_fec_job {
	struct sdr_ep *ep;
	const struct ec_codec *codec;
	uint8_t kind;
	uint32_t k;			/* data chunks: encode's parity starts at ptr[k] */
	int rc;				/* ec_decode()'s */
	uint32_t len;			/* chunk bytes */
	struct ec_mask mask;		/* decode: the chunks present */
	uint8_t *ptr[EC_MAX_CHUNKS];	/* encode: k data then m parity; decode: k + m */
	uint8_t *stage;			/* m + 1 chunks: rebuilt data, the padded short chunk */
	/* what it is for */
	uint32_t ctx;
	uint64_t seq;
	uint32_t sub;
	int16_t par_buf;		/* encode */
	struct rel_rx_decode d;		/* decode */
	uint64_t rx_seq;		/* decode: the receive's sequence number */
	int32_t region;			/* decode: the parity region read */
	uint32_t nmiss;			/* decode: data chunks rebuilt into the stage */
	uint32_t miss[EC_MAX_CHUNKS];	/* their chunk numbers, stage order */
	uint32_t next_free;
};

/* One direction's code. */
struct ep_code {
	int ec;
	uint32_t k, m;
	uint32_t chunk;		/* bytes of a chunk: the configured chunk >> the scheme's shift */
	uint32_t ppc;		/* packets of a chunk */
	struct ec_codec *codec;
};

enum { SW_NONE, SW_DRAIN, SW_ASK };	/* a scheme change of ours: none, waiting for the
					 * messages in flight, asking the peer */

struct sdr_ep {
	struct sdr_ep_cfg cfg;
	struct sdr_conn_geom geom;
	struct sdr_tx *tx;
	struct sdr_rx *rx;
	struct rel_tx *rtx;
	struct rel_rx *rrx;
	/* the code of each direction: what our sends are encoded with (txc: cfg.rel.scheme)
	 * and what the peer's are decoded with (rxc: rx_scheme); the same but while a change
	 * of one direction is under way with both directions in use (dir = both) */
	struct ep_code txc, rxc;
	struct sdr_scheme rx_scheme;
	uint32_t chunk;
	uint32_t enc_jobs_out, dec_jobs_out;	/* offloaded encodes / decodes out */
	struct ep_send *sends;		/* by rel_tx context */
	uint8_t *tx_par;		/* tx_parity_bufs x m chunks */
	int16_t *tx_par_free;
	uint32_t n_tx_par_free;
	struct enc_wait *enc_wait;
	uint32_t enc_head;
	uint32_t n_enc_wait;
	uint8_t *rx_par;		/* max_inflight regions of max parity chunks */
	int32_t *rx_par_of_slot;
	int32_t *rx_par_free;
	uint32_t n_rx_par_free;
	uint8_t *scratch;		/* one chunk: the short last chunk, zero padded */
	uint8_t *zeros;			/* one chunk of zeros: chunks past the message end */
	/* offloaded erasure coding */
	struct sdr_fec_job *jobs;	/* cfg.fec_jobs */
	uint32_t job_free;		/* free list head (UINT32_MAX: none) */
	struct sdr_fec_job **ready;	/* made, not taken yet: a FIFO */
	uint32_t ready_head, nready;
	uint32_t jobs_out;		/* taken, not back */
	uint8_t *tx_par_busy;		/* per parity buffer: 1 encode out, 2 also orphaned */
	uint32_t *enc_out;		/* per send context: encodes out */
	uint32_t *rx_par_jobs;		/* per parity region: decodes out */
	uint32_t *rx_par_copies;	/* per region: payload copies into it out */
	uint8_t *rx_par_orphan;		/* per region: released while decodes or copies were out */
	struct rel_rx_decode *dec_wait;	/* decodes waiting for a job */
	uint32_t dec_head, n_dec_wait;
	struct sdr_rel_done held_tx;	/* a send completion waiting for its encodes */
	int held;
	int held_frames;		/* ... and for frames that read its buffer (counted once) */
	/* the code's buffers are sized for: max_sub submessages, max_m parity chunks each */
	uint32_t max_sub, max_m;
	/* a scheme change (sdr_ep_change_scheme()): ours until answered, the answer we owe */
	uint8_t sw_state;		/* SW_* */
	struct sdr_scheme sw_want;
	struct ec_codec *sw_codec;	/* its code, made before we ask: once the peer has
					 * switched, ours must not fail to follow */
	uint64_t sw_seq;		/* the first message it is for */
	uint8_t sw_answered;		/* the peer answered a question of ours ... */
	uint64_t sw_answered_seq;	/* ... for the messages from this one on */
	/* cfg.codes_outside: the code wanted (code_value(), 0: none; written here, read by
	 * sdr_ep_code_wanted() on another thread), and the one given, not taken yet */
	uint64_t code_want;
	uint64_t made_value;
	struct ec_codec *made_dec, *made_query;	/* both NULL: it could not be made */
	/* the peer's question that waits for its code (answered at the next output once the
	 * code is in: on_scheme() again) */
	uint8_t code_q;
	struct sdr_ctrl code_qc;
	uint64_t sw_next_ns, sw_gap_ns;
	struct sdr_scheme scheme0;	/* the configured one: what a restarted peer runs */
	/* after a peer restart, a direction still to go back to scheme0 (work of the old
	 * peer was out): our sends wait (tx), the new peer's data finds no receive keyed (rx) */
	uint8_t reset_tx, reset_rx;
	struct sdr_scheme rx_want;	/* reset_rx: the peer's, from its HELLO, or scheme0 */
	uint8_t rx_refused;		/* the peer's HELLO names a code we cannot decode */
	/* the value of the latest HELLO from the peer's tag (tentative or proven): the scheme
	 * of its data; hello_ask: ready without one, we ask with HELLOs of our own */
	uint64_t hello_tag, hello_val;
	uint8_t hello_ask;
	uint64_t hello_ask_ns;
	/* the receives of this epoch (numbered from dlv_floor on) that completed OK: bit
	 * (seq % SDR_CTRL_MAX_BITS) for the SDR_CTRL_MAX_BITS numbers below dlv_hi (for
	 * sdr_ep_take_over()) */
	uint64_t dlv_floor, dlv_hi;
	uint32_t dlv[SDR_CTRL_MAX_WORDS];
	/* taken over from an endpoint before (sdr_ep_take_over()): the peer's tag, and the
	 * HELLO window for it (that endpoint's tag, the peer's messages it delivered) */
	uint64_t ho_peer;
	uint32_t ho_start;
	uint8_t ho_words;
	uint32_t ho_win[SDR_CTRL_MAX_WORDS];
	uint8_t sw_owed, sw_owed_flags;
	uint64_t sw_owed_value;
	uint32_t sw_owed_cum;
	/* the peer's question decided last (this epoch), and the first message it is for */
	uint8_t sw_rx_set;		/* a question of the peer's was decided: */
	uint8_t sw_rx_refused;		/* ... refused, or applied */
	uint64_t sw_rx_seq;		/* ... at this point */
	uint64_t sw_rx_value;		/* ... for this scheme */
	/* per receive slot: jobs out that touch its buffer (decodes, payload copies) */
	uint32_t *rx_out;
	uint32_t copies_out;		/* claimed data packets not committed yet */
	struct sdr_rel_done *held_rx;	/* receive completions waiting for those: a FIFO */
	uint32_t held_rx_head, n_held_rx;
	/* the chunk being packetized */
	struct sdr_tx_job job;
	int job_active;
	uint8_t job_parity;
	uint32_t job_ctx;
	uint32_t job_sub;
	uint64_t job_seq;
	uint32_t ctrl_psn;
	uint16_t ctrl_sport;		/* steered source port of control frames, or 0 */
	int ctrl_tmpl_ok;		/* ctrl_tmpl made: control frames from it */
	struct roce_tmpl ctrl_tmpl;	/* UC SEND Only to the peer's control QPN, on cfg.path */
	uint32_t *abort_slots;		/* max_inflight: sdr_ep_abort()'s list */
	/* SYNC: ours until answered, and the answer we owe the peer */
	uint64_t sync_nonce;
	uint8_t sync_wait;
	uint64_t sync_next_ns, sync_gap_ns;
	uint8_t sync_owed;
	uint64_t sync_owed_nonce;
	/* the handshake, and the R_Keys of the two directions under the current tags */
	struct sdr_peer hs;
	uint8_t tag_fixed;		/* cfg.tag came from the caller: so do the next ones */
	struct sdr_rkeys rk_recv;	/* of our receives */
	struct sdr_rkeys rk_send;	/* of the peer's receives, for our messages */
	struct sdr_mac mac;		/* cfg.auth: of every control message */
	struct sdr_ep_done *done;
	uint32_t done_cap;
	uint32_t done_head;
	uint32_t ndone;
	/* scheme auto: the path's loss from the PSNs that arrive (psn_loss.h) */
	struct psn_loss loss;
	/* the REPORTs this receive side sends, the estimate the send side keeps */
	uint64_t rep_next_ns;
	uint64_t rep_pkts, rep_lost;		/* counts in the last REPORT sent */
	uint32_t peer_rep_pkts, peer_rep_lost;	/* ... and in the last one received */
	uint64_t peer_rep_seen;			/* packets taken from REPORTs so far */
	struct sdr_auto autoe;
	/* several paths (cfg.paths): the send side's selector, the receive side's reports */
	struct path_sel psel;
	uint8_t psel_on;
	uint64_t psel_tick_ns;		/* the next path_sel_update() without a report */
	uint8_t pth_dirty;			/* a data frame arrived since the last round */
	uint32_t pth_cursor;			/* next QPN of the round being sent; 0: none */
	uint64_t *pth_hi_ns;			/* per data QPN: when its highest PSN arrived */
	uint64_t pth_next_ns;
	uint64_t pth_round_pkts;		/* frames judged (WIRE_PKTS) at the last round */
	uint64_t counters[SDR_EP_NCOUNTERS];
	uint64_t ctrl_err[SDR_CTRL_E_COUNT];
};

void
sdr_ep_destroy(struct sdr_ep *ep)
{
	if (ep == NULL)
		return;
	if (ep->sends != NULL)
		for (uint32_t i = 0; i < ep->cfg.attr.max_inflight; i++)
			free(ep->sends[i].par_buf);
	free(ep->sends);
	free(ep->tx_par);
	free(ep->tx_par_free);
	free(ep->enc_wait);
	free(ep->rx_par);
	free(ep->rx_par_of_slot);
	free(ep->rx_par_free);
	free(ep->scratch);
	free(ep->zeros);
	if (ep->jobs != NULL)
		for (uint32_t i = 0; i < ep->cfg.fec_jobs; i++)
			free(ep->jobs[i].stage);
	free(ep->jobs);
	free(ep->ready);
	free(ep->tx_par_busy);
	free(ep->enc_out);
	free(ep->rx_par_jobs);
	free(ep->rx_par_copies);
	free(ep->rx_par_orphan);
	free(ep->dec_wait);
	free(ep->rx_out);
	free(ep->held_rx);
	free(ep->abort_slots);
	psn_loss_free(&ep->loss);
	path_sel_free(&ep->psel);
	free(ep->pth_hi_ns);
	free(ep->done);
	sdr_tx_destroy(ep->tx);
	sdr_rx_destroy(ep->rx);
	rel_tx_destroy(ep->rtx);
	rel_rx_destroy(ep->rrx);
	ec_codec_destroy(ep->txc.codec);
	ec_codec_destroy(ep->rxc.codec);
	ec_codec_destroy(ep->sw_codec);
	ec_codec_destroy(ep->made_dec);
	ec_codec_destroy(ep->made_query);
	sdr_rkeys_fini(&ep->rk_recv);
	sdr_rkeys_fini(&ep->rk_send);
	sdr_mac_fini(&ep->mac);
	free(ep);
}

static int
alloc_jobs(struct sdr_ep *ep, uint32_t nbuf, uint32_t inflight, uint32_t max_sub)
{
	uint32_t n = ep->cfg.fec_jobs;

	ep->jobs = calloc(n, sizeof(*ep->jobs));
	ep->ready = calloc(n, sizeof(*ep->ready));
	ep->tx_par_busy = calloc(nbuf, 1);
	ep->enc_out = calloc(inflight, sizeof(uint32_t));
	ep->rx_par_jobs = calloc(inflight, sizeof(uint32_t));
	ep->dec_wait = calloc((uint64_t)inflight * max_sub, sizeof(*ep->dec_wait));
	if (!ep->jobs || !ep->ready || !ep->tx_par_busy || !ep->enc_out || !ep->rx_par_jobs ||
	    !ep->dec_wait)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		ep->jobs[i].ep = ep;	/* (codec and k: the direction's, when handed out) */
		ep->jobs[i].len = ep->chunk;
		ep->jobs[i].stage = malloc((uint64_t)(ep->max_m + 1) * ep->chunk);
		if (ep->jobs[i].stage == NULL)
			return -1;
		ep->jobs[i].next_free = i + 1 < n ? i + 1 : UINT32_MAX;
	}
	ep->job_free = 0;
	return 0;
}

static int
alloc_ec(struct sdr_ep *ep)
{
	const struct sdr_ep_cfg *c = &ep->cfg;
	uint32_t nbuf = c->tx_parity_bufs ? c->tx_parity_bufs : 4, inflight = c->attr.max_inflight;
	uint64_t region = (uint64_t)ep->geom.max_parity_chunks * ep->chunk;
	uint32_t max_sub;

	/* a scheme that may change: for any k (a submessage per chunk at most) and up to
	 * switch_max_m parity chunks per submessage */
	ep->max_sub = c->rel.scheme_may_change ? ep->geom.max_units :
		      (ep->geom.max_data_chunks + ep->txc.k - 1) / ep->txc.k;
	ep->max_m = c->rel.scheme_may_change && c->switch_max_m > ep->txc.m ? c->switch_max_m :
		    ep->txc.m;
	max_sub = ep->max_sub;
	if (ep->txc.ec && (sdr_ep_code_make(&c->rel.scheme, &ep->txc.codec, NULL) != 0 ||
			   sdr_ep_code_make(&c->rel.scheme, &ep->rxc.codec, NULL) != 0))
		return -1;
	ep->tx_par = malloc((uint64_t)nbuf * ep->max_m * ep->chunk);
	ep->tx_par_free = calloc(nbuf, sizeof(int16_t));
	ep->enc_wait = calloc((uint64_t)inflight * max_sub, sizeof(*ep->enc_wait));
	ep->rx_par = malloc(region * inflight);
	ep->rx_par_free = calloc(inflight, sizeof(int32_t));
	ep->rx_par_copies = calloc(inflight, sizeof(uint32_t));
	ep->rx_par_orphan = calloc(inflight, 1);
	ep->scratch = malloc(ep->chunk);
	ep->zeros = calloc(1, ep->chunk);
	if (!ep->tx_par || !ep->tx_par_free || !ep->enc_wait || !ep->rx_par || !ep->rx_par_free ||
	    !ep->rx_par_copies || !ep->rx_par_orphan || !ep->scratch || !ep->zeros)
		return -1;
	for (uint32_t i = 0; i < nbuf; i++)
		ep->tx_par_free[ep->n_tx_par_free++] = (int16_t)i;
	if (c->fec_jobs && alloc_jobs(ep, nbuf, inflight, max_sub) != 0)
		return -1;
	for (uint32_t i = 0; i < inflight; i++) {
		ep->rx_par_free[ep->n_rx_par_free++] = (int32_t)i;
		ep->sends[i].par_buf = malloc(max_sub * sizeof(int16_t));
		if (ep->sends[i].par_buf == NULL)
			return -1;
		memset(ep->sends[i].par_buf, 0xFF, max_sub * sizeof(int16_t));
	}
	return 0;
}

/*
 * The UDP source port of data QPN index @p q on @p path: the operator's for that path
 * (cfg.paths.sport), or the first from the QPN's default on that the network hashes to it
 * (as link_emu_path_of()); steered, one the peer's RSS puts on its queue. 0 if there is none.
 */
static uint16_t
path_sport(const struct sdr_ep *ep, uint32_t q, unsigned int path)
{
	const struct sdr_ep_cfg *c = &ep->cfg;
	uint32_t s = c->path.udp_sport ? c->path.udp_sport :
		     roce_qpn_sport(c->attr.remote_qpn + q);

	if (c->paths.sport[path] != 0) {	/* the operator's port for it */
		s = c->paths.sport[path];
		if (c->steer_queues &&
		    (rss_hash_udp(c->steer_key, c->path.ip_version, c->path.src_ip,
				  c->path.dst_ip, (uint16_t)s, ROCE_UDP_PORT) &
		     (c->steer_queues - 1u)) != c->steer_queue)
			return 0;	/* it would land on another engine of the peer */
		return (uint16_t)s;
	}
	for (uint32_t n = 0; n < 0x4000; n++, s = s >= 0xFFFF ? 0xC000 : s + 1) {
		if (s < 0xC000)
			s = 0xC000;
		if (c->steer_queues &&
		    (rss_hash_udp(c->steer_key, c->path.ip_version, c->path.src_ip,
				  c->path.dst_ip, (uint16_t)s, ROCE_UDP_PORT) &
		     (c->steer_queues - 1u)) != c->steer_queue)
			continue;
		if (link_emu_path_of((uint16_t)s, c->paths.npaths) == path)
			return (uint16_t)s;
	}
	return 0;
}

int
sdr_ep_set_paths(struct sdr_ep *ep, const uint8_t *want, uint64_t now)
{
	const uint32_t *psn = sdr_tx_psns(ep->tx);
	int rc = 0;

	if (!ep->psel_on)
		return -EINVAL;
	for (uint32_t q = 0; q < ep->psel.cfg.nqp; q++)
		if (want[q] >= ep->psel.cfg.npaths)
			return -EINVAL;
	for (uint32_t q = 0; q < ep->psel.cfg.nqp; q++) {
		uint16_t sp;
		int r;

		if (ep->psel.qp[q].path == want[q] && ep->psel.qp[q].moved_ns != 0)
			continue;
		sp = path_sport(ep, q, want[q]);
		r = sp ? sdr_tx_set_sport(ep->tx, q, sp) : -EADDRNOTAVAIL;
		if (r != 0) {
			rc = r;
			continue;
		}
		path_sel_place(&ep->psel, q, want[q], psn[q], now);
		ep->counters[SDR_EP_PATH_MOVES]++;
	}
	return rc;
}

/* The paths of a new endpoint: hash leaves each QPN on its port's path, the others spray. */
static int
paths_init(struct sdr_ep *ep, const struct sdr_ep_cfg *cfg)
{
	struct path_sel_cfg pc = cfg->paths;
	uint8_t want[PATH_SEL_MAX_QPS];

	pc.channels = cfg->attr.channels;
	pc.nqp = ep->geom.ndata_qpns;
	if (pc.rtt_ns == 0)
		pc.rtt_ns = cfg->rel.rtt_ns;
	if (path_sel_init(&ep->psel, &pc) != 0 ||
	    (ep->pth_hi_ns = calloc(pc.nqp, sizeof(uint64_t))) == NULL)
		return -1;
	ep->psel_on = 1;
	for (uint32_t q = 0; q < pc.nqp; q++) {
		if (pc.policy == PATH_POLICY_HASH) {
			path_sel_place(&ep->psel, q, link_emu_path_of(sdr_tx_sport(ep->tx, q),
								      pc.npaths),
				       sdr_tx_psns(ep->tx)[q], 0);
			continue;
		}
		want[q] = (uint8_t)path_sel_spray(&pc, q % pc.channels);
	}
	if (pc.policy != PATH_POLICY_HASH && sdr_ep_set_paths(ep, want, 0) != 0)
		return -1;
	ep->counters[SDR_EP_PATH_MOVES] = 0;	/* the first placement is no move */
	return 0;
}

uint64_t
sdr_ep_buffer_bytes(const struct sdr_ep_cfg *cfg)
{
	const struct sdr_conn_attr *a = &cfg->attr;
	uint64_t inflight = a->max_inflight, chunk = a->chunk_size, pkts, chunks, bytes;
	uint32_t m = cfg->rel.scheme.m, nbuf = cfg->tx_parity_bufs ? cfg->tx_parity_bufs : 4;
	struct sdr_conn_geom g;

	if (sdr_conn_geometry(a, &g) != 0)
		return UINT64_MAX;
	/* sdr_rx_create(): per message, the packet and chunk bitmaps, counts, own bytes */
	pkts = (uint64_t)g.max_data_pkts + g.max_parity_pkts;
	chunks = (uint64_t)g.max_units + g.max_parity_units;
	bytes = inflight * ((pkts + 63) / 64 * 8 + chunks * 2 + (chunks + 63) / 64 * 8 +
			    g.max_data_chunks);
	if (!sdr_scheme_is_ec(&cfg->rel.scheme) && !cfg->rel.scheme_may_change)
		return bytes;
	/* alloc_ec(): the sender's parity buffers, the receiver's parity region per message */
	if (cfg->rel.scheme_may_change && cfg->switch_max_m > m)
		m = cfg->switch_max_m;
	bytes += (uint64_t)nbuf * m * chunk + (uint64_t)g.max_parity_chunks * chunk * inflight +
		 2 * chunk;
	/* alloc_jobs(): a staging area per FEC job */
	bytes += (uint64_t)cfg->fec_jobs * (m + 1) * chunk;
	/* the codecs: each direction's, and one made before asking for a change. One that may
	 * change runs whatever code fits here (the peer's asks too): the largest k with m */
	{
		struct ec_spec spec = { .kind = cfg->rel.scheme.kind == SDR_SCHEME_EC_XOR ?
						EC_KIND_XOR : EC_KIND_MDS,
					.k = cfg->rel.scheme.k, .m = m };

		if (cfg->rel.scheme_may_change) {
			spec.kind = EC_KIND_MDS;
			spec.k = EC_MAX_CHUNKS - m;
		}
		bytes += (cfg->rel.scheme_may_change ? 3 : 2) *
			 ec_codec_bytes(&spec, EC_CACHE_DEFAULT);
	}
	return bytes;
}

struct sdr_ep *
sdr_ep_create(const struct sdr_ep_cfg *cfg)
{
	struct sdr_ep *ep = calloc(1, sizeof(*ep));

	if (ep == NULL)
		return NULL;
	ep->cfg = *cfg;
	if (sdr_conn_geometry(&cfg->attr, &ep->geom) != 0)
		goto fail;
	ep->txc.ec = sdr_scheme_is_ec(&cfg->rel.scheme);
	ep->txc.k = cfg->rel.scheme.k;
	ep->txc.m = cfg->rel.scheme.m;
	ep->txc.chunk = cfg->attr.chunk_size >> cfg->rel.scheme.chunk_shift;
	ep->txc.ppc = sdr_conn_shift_ppc(&ep->geom, cfg->rel.scheme.chunk_shift);
	ep->rxc = ep->txc;		/* (its codec made apart: alloc_ec()) */
	ep->rx_scheme = cfg->rel.scheme;
	ep->chunk = cfg->attr.chunk_size;
	/* a chunk other than the configured one only where the scheme may change */
	if (cfg->rel.scheme.chunk_shift && !cfg->rel.scheme_may_change)
		goto fail;
	ep->scheme0 = cfg->rel.scheme;
	ep->tx = sdr_tx_create(&cfg->attr, &cfg->path);
	if (ep->tx != NULL && sdr_tx_set_chunk_shift(ep->tx, cfg->rel.scheme.chunk_shift) != 0)
		goto fail;
	ep->rx = sdr_rx_create(&cfg->attr);
	ep->rtx = rel_tx_create(&cfg->rel, &cfg->attr);
	ep->rrx = rel_rx_create(&cfg->rel, &cfg->attr);
	ep->sends = calloc(cfg->attr.max_inflight, sizeof(*ep->sends));
	ep->rx_par_of_slot = malloc(ep->geom.nslots * sizeof(int32_t));
	ep->done_cap = 2 * cfg->attr.max_inflight;
	ep->done = calloc(ep->done_cap, sizeof(*ep->done));
	ep->rx_out = calloc(ep->geom.nslots, sizeof(uint32_t));
	ep->held_rx = calloc(cfg->attr.max_inflight, sizeof(*ep->held_rx));
	ep->abort_slots = calloc(cfg->attr.max_inflight, sizeof(uint32_t));
	if (!ep->tx || !ep->rx || !ep->rtx || !ep->rrx || !ep->sends || !ep->rx_par_of_slot ||
	    !ep->done || !ep->rx_out || !ep->held_rx || !ep->abort_slots)
		goto fail;
	memset(ep->rx_par_of_slot, 0xFF, ep->geom.nslots * sizeof(int32_t));
	if ((ep->txc.ec || cfg->rel.scheme_may_change) && alloc_ec(ep) != 0)
		goto fail;
	/* a connection that may change to a code starts with its parity region unused */
	if (cfg->rel.scheme_may_change &&
	    sdr_rx_set_code(ep->rx, ep->rxc.ec ? ep->rxc.k : 0, ep->rxc.ec ? ep->rxc.m : 0,
			    cfg->rel.scheme.chunk_shift) != 0)
		goto fail;
	if (cfg->steer_queues) {
		uint32_t cq = sdr_conn_remote_ctrl_qpn(&cfg->attr);

		if (sdr_tx_steer(ep->tx, cfg->steer_key, cfg->steer_queues, cfg->steer_queue) != 0)
			goto fail;
		ep->ctrl_sport = rss_pick_sport(cfg->steer_key, cfg->path.ip_version,
						cfg->path.src_ip, cfg->path.dst_ip, ROCE_UDP_PORT,
						roce_qpn_sport(cq), cfg->steer_queues,
						cfg->steer_queue);
	}
	/* control frames from a template, as the data frames are (sdr_tx): only their
	 * fields and their ICRC are worked out per frame (else roce_build() builds them) */
	ep->ctrl_tmpl_ok = roce_tmpl_init(&ep->ctrl_tmpl, &cfg->path, ROCE_OP_UC_SEND_ONLY) == 0;
	ep->tag_fixed = cfg->tag != 0;
	ep->cfg.tag = cfg->tag ? cfg->tag : sdr_tag_random();
	if (ep->cfg.tag == 0)
		goto fail;	/* no entropy */
	sdr_peer_init(&ep->hs, ep->cfg.tag, sdr_rel_rto(&cfg->rel));
	if ((cfg->auto_report || cfg->paths.npaths > 1) &&
	    psn_loss_init(&ep->loss, ep->geom.ndata_qpns) != 0)
		goto fail;
	if (cfg->paths.npaths > 1 && paths_init(ep, cfg) != 0)
		goto fail;
	if (cfg->auto_report) {
		struct sdr_auto_cfg ac;

		sdr_auto_cfg_default(&ac);
		if (cfg->auto_cfg.halflife_pkts > 0)
			ac.halflife_pkts = cfg->auto_cfg.halflife_pkts;
		if (cfg->auto_cfg.min_pkts)
			ac.min_pkts = cfg->auto_cfg.min_pkts;
		if (cfg->auto_cfg.hysteresis > 0)
			ac.hysteresis = cfg->auto_cfg.hysteresis;
		if (cfg->auto_cfg.dwell_ns)
			ac.dwell_ns = cfg->auto_cfg.dwell_ns;
		/* the chunks it may choose: those the connection can run */
		ac.max_chunk_shift = cfg->rel.scheme_may_change ? cfg->attr.max_chunk_shift : 0;
		sdr_auto_init(&ep->autoe, &ac);
	} else {
		sdr_auto_init(&ep->autoe, NULL);
	}
	if (cfg->auth && sdr_mac_init(&ep->mac, cfg->auth_key) != 0)
		goto fail;
	return ep;
fail:
	sdr_ep_destroy(ep);
	return NULL;
}

static void collect_done(struct sdr_ep *ep);
static int reset_settle(struct sdr_ep *ep, uint64_t now);
static int hello_scheme(struct sdr_ep *ep);
static void rekey(struct sdr_ep *ep, uint64_t now);

_Static_assert(SDR_EP_PRIO_MAX == REL_TX_PRIO_MAX, "the endpoint's priorities are rel_tx's");

static int
send_common(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
	    uint64_t cookie, uint64_t now, unsigned int prio, struct sdr_ep_stream *st)
{
	struct sdr_tx_msg msg;
	int rc, ctx;

	if (len > ep->cfg.attr.max_msg_size)
		return -EMSGSIZE;
	if (prio > SDR_EP_PRIO_MAX)
		return -EINVAL;
	/* completions first: a context the sender freed may be reused below */
	collect_done(ep);
	if (ep->held)
		return -EAGAIN;	/* a completion waits for its encodes (next_tx_done()) */
	if (!reset_settle(ep, now) && ep->reset_tx)
		return -EAGAIN;	/* back to the configured scheme after a restart first */
	if (ep->sw_state != SW_NONE)
		return -EAGAIN;	/* a scheme change waits for the messages in flight */
	if (ep->ndone >= ep->done_cap - ep->cfg.attr.max_inflight)
		return -EAGAIN;	/* unread completions: keep room for every message in flight */
	/* both halves apply the same rules (in-flight limit, slot reuse), so they agree */
	rc = sdr_tx_msg_start(ep->tx, buf, len, user_imm, &msg);
	if (rc != 0)
		return rc;
	ctx = st ? rel_tx_submit_stream(ep->rtx, len, cookie, now) :
		   rel_tx_submit(ep->rtx, len, cookie, now);
	if (ctx < 0) {
		sdr_tx_msg_retire(ep->tx, &msg);
		return ctx;
	}
	ep->sends[ctx].msg = msg;
	if (prio)
		rel_tx_set_prio(ep->rtx, (uint32_t)ctx, prio);	/* in range, not started */
	if (ep->cfg.auto_report)
		sdr_auto_message(&ep->autoe, len);
	if (st)
		*st = (struct sdr_ep_stream){ .ctx = (uint32_t)ctx, .seq = msg.seq, .len = len,
					      .chunk = ep->txc.chunk };
	return 0;
}

int
sdr_ep_send(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
	    uint64_t cookie, uint64_t now)
{
	return send_common(ep, buf, len, user_imm, cookie, now, 0, NULL);
}

int
sdr_ep_send_prio(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		 uint64_t cookie, uint64_t now, unsigned int prio, struct sdr_ep_stream *st)
{
	return send_common(ep, buf, len, user_imm, cookie, now, prio, st);
}

int
sdr_ep_send_stream(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		   uint64_t cookie, uint64_t now, struct sdr_ep_stream *st)
{
	return send_common(ep, buf, len, user_imm, cookie, now, 0, st);
}

int
sdr_ep_stream_add(struct sdr_ep *ep, const struct sdr_ep_stream *st, uint64_t off, uint64_t len)
{
	int rc;

	if (len == 0 || off % st->chunk != 0 || off >= st->len || len > st->len - off ||
	    (len % st->chunk != 0 && off + len != st->len))
		return -EINVAL;
	rc = rel_tx_stream_add(ep->rtx, st->ctx, st->seq, (uint32_t)(off / st->chunk),
			       (uint32_t)((len + st->chunk - 1) / st->chunk));
	if (rc == -ERANGE)
		return -EINVAL;
	return rc < 0 ? rc : 0;
}

int
sdr_ep_stream_end(struct sdr_ep *ep, const struct sdr_ep_stream *st)
{
	return rel_tx_stream_end(ep->rtx, st->ctx, st->seq);
}

int
sdr_ep_recv(struct sdr_ep *ep, uint8_t *buf, uint64_t len, uint8_t *chunk_bytes,
	    uint64_t cookie, uint64_t now, uint32_t *slot)
{
	uint64_t seq = sdr_rx_next_seq(ep->rx);
	uint8_t *par = NULL;
	int32_t region = -1;
	int rc;

	if (len > ep->cfg.attr.max_msg_size)
		return -EMSGSIZE;
	if (ep->ndone >= ep->done_cap - ep->cfg.attr.max_inflight)
		return -EAGAIN;
	if (ep->rx_par != NULL) {	/* a code, or one that may come: a parity region */
		if (ep->n_rx_par_free == 0)
			return -EAGAIN;
		region = ep->rx_par_free[ep->n_rx_par_free - 1];
		par = ep->rx_par + (uint64_t)region * ep->geom.max_parity_chunks * ep->chunk;
	}
	rc = sdr_rx_post(ep->rx, buf, len, par, chunk_bytes, slot);
	if (rc != 0)
		return rc;
	if (rel_rx_post(ep->rrx, seq, *slot, len, cookie, now) < 0) {
		/* cannot happen: both halves have max_inflight contexts and free them together */
		sdr_rx_complete(ep->rx, *slot);
		return -EAGAIN;
	}
	if (region >= 0) {
		ep->n_rx_par_free--;
		ep->rx_par_of_slot[*slot] = region;
	}
	if (ep->rk_recv.recv_tag == 0)
		sdr_rx_set_rkey(ep->rx, *slot, 0);	/* rekey() keys it (a fixed key too) */
	else if (ep->cfg.attr.local_rkey == 0)
		sdr_rx_set_rkey(ep->rx, *slot, sdr_rkeys_get(&ep->rk_recv, seq));
	return 0;
}

/* The parity region a claim's copy writes into, or -1 (the receive's own buffer). */
static int32_t
par_region_of(const struct sdr_ep *ep, const uint8_t *dst)
{
	uint64_t size = (uint64_t)ep->geom.max_parity_chunks * ep->chunk;
	uintptr_t base = (uintptr_t)ep->rx_par, at = (uintptr_t)dst;

	if (ep->rx_par == NULL || at < base || at - base >= size * ep->cfg.attr.max_inflight)
		return -1;
	return (int32_t)((at - base) / size);
}

/* Parity region @p r, released while decodes or copies were out: free once none is. */
static void
par_region_settle(struct sdr_ep *ep, int32_t r)
{
	if (ep->rx_par_orphan[r] && ep->rx_par_copies[r] == 0 &&
	    (ep->rx_par_jobs == NULL || ep->rx_par_jobs[r] == 0)) {
		ep->rx_par_orphan[r] = 0;
		ep->rx_par_free[ep->n_rx_par_free++] = r;
	}
}

/*
 * A receive released before its held completion went out (the application gave it up, or
 * went away): the completion is dropped, so the FIFO never holds more than the receives
 * posted.
 */
static void
drop_held_rx(struct sdr_ep *ep, uint32_t slot)
{
	uint32_t cap = ep->cfg.attr.max_inflight, w = 0;

	for (uint32_t i = 0; i < ep->n_held_rx; i++) {
		const struct sdr_rel_done *d = &ep->held_rx[(ep->held_rx_head + i) % cap];

		if (d->slot != slot)
			ep->held_rx[(ep->held_rx_head + w++) % cap] = *d;
	}
	ep->n_held_rx = w;
}

int
sdr_ep_recv_release(struct sdr_ep *ep, uint32_t slot)
{
	int rc = sdr_rx_complete(ep->rx, slot);

	if (rc != 0)
		return rc;
	drop_held_rx(ep, slot);
	rel_rx_release(ep->rrx, slot);
	if (ep->rx_par_of_slot[slot] >= 0) {
		int32_t r = ep->rx_par_of_slot[slot];

		ep->rx_par_of_slot[slot] = -1;
		/* a decode reads it or a copy writes it: freed when the last is back, not
		 * handed to the next receive meanwhile */
		ep->rx_par_orphan[r] = 1;
		par_region_settle(ep, r);
	}
	return 0;
}

uint32_t
sdr_ep_recv_writers(const struct sdr_ep *ep, uint32_t slot)
{
	return slot < ep->geom.nslots ? ep->rx_out[slot] : 0;
}

void
sdr_ep_sync(struct sdr_ep *ep, uint64_t nonce, uint64_t now)
{
	ep->sync_nonce = nonce;
	ep->sync_wait = 1;
	ep->sync_next_ns = now;
	ep->sync_gap_ns = sdr_rel_rto(&ep->cfg.rel);
}

int
sdr_ep_synced(const struct sdr_ep *ep)
{
	return !ep->sync_wait;
}

/* The SYNC we send, or the answer we owe once no reset of ours waits. @return 1 if built. */
static int
next_sync(struct sdr_ep *ep, uint64_t now, struct sdr_ctrl *c)
{
	if (ep->sync_owed && !rel_tx_resetting(ep->rtx) && !rel_rx_resetting(ep->rrx)) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_SYNC;
		c->flags = SDR_CTRL_F_ANSWER;
		c->value = ep->sync_owed_nonce;
		ep->sync_owed = 0;
		return 1;
	}
	if (ep->sync_wait && ep->sync_next_ns <= now) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_SYNC;
		c->value = ep->sync_nonce;
		/* a peer that is not there yet hears less and less of it */
		ep->sync_next_ns = now + ep->sync_gap_ns;
		if (ep->sync_gap_ns < 64 * sdr_rel_rto(&ep->cfg.rel))
			ep->sync_gap_ns *= 2;
		return 1;
	}
	return 0;
}

void
sdr_ep_abort(struct sdr_ep *ep, uint64_t now)
{
	uint32_t n;

	collect_done(ep);	/* what finished before keeps its status */
	rel_tx_cancel(ep->rtx, now);
	collect_done(ep);	/* retired, each once no encode reads its buffer */
	n = rel_rx_withdraw(ep->rrx, now, ep->abort_slots);
	for (uint32_t i = 0; i < n; i++)
		sdr_ep_recv_release(ep, ep->abort_slots[i]);
}

/*
 * scheme auto, receive side: a REPORT of the wire's loss counts when they moved, at
 * most every quarter RTT (at least 1 ms apart). @return 1 if built.
 */
static int
next_report(struct sdr_ep *ep, uint64_t now, struct sdr_ctrl *c)
{
	const uint64_t *rc = ep->counters;
	uint64_t gap = ep->cfg.rel.rtt_ns / 4 > 1000000 ? ep->cfg.rel.rtt_ns / 4 : 1000000;

	if (!ep->cfg.auto_report || now < ep->rep_next_ns ||
	    rc[SDR_EP_WIRE_PKTS] == ep->rep_pkts)
		return 0;
	ep->rep_pkts = rc[SDR_EP_WIRE_PKTS];
	ep->rep_lost = rc[SDR_EP_WIRE_LOST];
	ep->rep_next_ns = now + gap;
	sdr_zero(c, sizeof(*c));
	c->type = SDR_CTRL_REPORT;
	c->value = (ep->rep_lost & 0xFFFFFFFFull) << 32 | (ep->rep_pkts & 0xFFFFFFFFull);
	ep->counters[SDR_EP_REPORTS_OUT]++;
	return 1;
}

/*
 * PATHS carries each QPN's judged counts modulo 2^16, which the sender takes as moved by
 * at most 2^15 between rounds: a round goes early once this many frames were judged since
 * the last (on all QPNs: at 12 Mpps and a 100 ms RTT a QPN judges far more in a quarter
 * RTT), so that a PATHS message or two lost still leave a QPN's counts within that.
 */
#define PATHS_ROUND_PKTS 8192

/*
 * Several paths, receive side: a round of PATHS (every data QPN's highest PSN and judged
 * counts, 16 QPNs a message) when a data frame arrived since the last round, rounds at
 * most every quarter RTT (at least 1 ms apart) but after PATHS_ROUND_PKTS frames judged.
 * @return 1 if one was built.
 */
static int
next_paths(struct sdr_ep *ep, uint64_t now, struct sdr_ctrl *c)
{
	uint64_t gap = ep->cfg.rel.rtt_ns / 4 > 1000000 ? ep->cfg.rel.rtt_ns / 4 : 1000000;
	uint32_t nqp = ep->geom.ndata_qpns, n;

	if (!ep->psel_on)
		return 0;
	if (ep->pth_cursor == 0) {
		uint64_t judged = ep->counters[SDR_EP_WIRE_PKTS] - ep->pth_round_pkts;

		if (!ep->pth_dirty || (now < ep->pth_next_ns && judged < PATHS_ROUND_PKTS))
			return 0;
		ep->pth_dirty = 0;
		ep->pth_next_ns = now + gap;
		ep->pth_round_pkts = ep->counters[SDR_EP_WIRE_PKTS];
	}
	n = nqp - ep->pth_cursor < SDR_CTRL_PATHS_PER_MSG ? nqp - ep->pth_cursor :
							     SDR_CTRL_PATHS_PER_MSG;
	sdr_zero(c, sizeof(*c));
	c->type = SDR_CTRL_PATHS;
	c->win_start = ep->pth_cursor;
	c->nwords = (uint8_t)(2 * n);
	for (uint32_t i = 0; i < n; i++) {
		const struct psn_loss_qp *q = &ep->loss.qp[ep->pth_cursor + i];
		uint64_t at = ep->pth_hi_ns[ep->pth_cursor + i];

		c->win[2 * i] = (q->started ? SDR_CTRL_PATHS_SEEN : 0) | (q->hi & 0xFFFFFFu) |
				(uint32_t)sdr_ctrl_hold_code(now > at ? now - at : 0)
					<< SDR_CTRL_PATHS_HOLD_SHIFT;
		c->win[2 * i + 1] = (q->lost & 0xFFFFu) << 16 | (q->pkts & 0xFFFFu);
	}
	ep->pth_cursor = ep->pth_cursor + n == nqp ? 0 : ep->pth_cursor + n;
	ep->counters[SDR_EP_PATHS_OUT]++;
	return 1;
}

/* Several paths, send side: the receiver's view of each data QPN, to the selector. */
static void
on_paths(struct sdr_ep *ep, const struct sdr_ctrl *c, uint64_t now)
{
	const uint32_t *psn = sdr_tx_psns(ep->tx);

	ep->counters[SDR_EP_PATHS_IN]++;
	if (!ep->psel_on)
		return;
	for (uint32_t i = 0; i < c->nwords / 2u; i++) {
		uint64_t q = (uint64_t)c->win_start + i;
		uint32_t w0 = c->win[2 * i], w1 = c->win[2 * i + 1];

		if (q >= ep->psel.cfg.nqp) {
			ep->counters[SDR_EP_CTRL_STALE]++;
			break;
		}
		path_sel_report(&ep->psel, (unsigned int)q, (w0 & SDR_CTRL_PATHS_SEEN) != 0,
				w0 & 0xFFFFFFu,
				sdr_ctrl_hold_ns(w0 >> SDR_CTRL_PATHS_HOLD_SHIFT & 0x7F),
				(uint16_t)w1, (uint16_t)(w1 >> 16), psn[q], now);
	}
	path_sel_update(&ep->psel, psn, now);
}

/*
 * scheme auto, send side: the receiver's running counts; what moved since its last REPORT
 * is a sample for the estimate. Counts that go back, lose more than they carry, or report
 * more packets than this side ever sent (a peer that restarted, or a forger with the right
 * tags) only move the baseline (counted).
 */
static void
on_report(struct sdr_ep *ep, const struct sdr_ctrl *c)
{
	uint32_t pkts = (uint32_t)c->value, lost = (uint32_t)(c->value >> 32);
	uint32_t dp = pkts - ep->peer_rep_pkts, dl = lost - ep->peer_rep_lost;

	ep->counters[SDR_EP_REPORTS_IN]++;
	if (!ep->cfg.auto_report)
		return;
	/* (every frame on a data QPN counts: data, resends, parity) */
	if (dl > dp || dp > 0x80000000u ||
	    ep->peer_rep_seen + dp > ep->counters[SDR_EP_DATA_PKTS_OUT] +
				     ep->counters[SDR_EP_PARITY_PKTS_OUT]) {
		ep->counters[SDR_EP_REPORTS_IMPLAUSIBLE]++;
	} else {
		ep->peer_rep_seen += dp;
		sdr_auto_observe(&ep->autoe, dp, dl);
	}
	ep->peer_rep_pkts = pkts;
	ep->peer_rep_lost = lost;
}

/* ---- scheme changes (sdr_ep_change_scheme()) ---- */

static uint64_t
scheme_value(const struct sdr_scheme *s)
{
	return (uint64_t)s->chunk_shift << 40 | (uint64_t)s->kind << 32 |
	       (uint64_t)(sdr_scheme_is_ec(s) ? s->k : 0) << 16 | (sdr_scheme_is_ec(s) ? s->m : 0);
}

/* An EC scheme's code alone (kind, k, m; not the chunk): never 0. */
static uint64_t
code_value(const struct sdr_scheme *s)
{
	return 1ull << 63 | (uint64_t)s->kind << 32 | (uint64_t)s->k << 16 | s->m;
}

int
sdr_ep_code_make(const struct sdr_scheme *s, struct ec_codec **dec, struct ec_codec **query)
{
	struct ec_spec spec = { .kind = s->kind == SDR_SCHEME_EC_XOR ? EC_KIND_XOR : EC_KIND_MDS,
				.k = s->k, .m = s->m };

	*dec = NULL;
	if (query != NULL)
		*query = NULL;
	if (!sdr_scheme_is_ec(s))
		return -EINVAL;
	/* (the reliability layer's queries keep one decode table: rel_rx's own make) */
	if (ec_codec_create(&spec, EC_CACHE_DEFAULT, dec) != 0 ||
	    (query != NULL && ec_codec_create(&spec, 1, query) != 0)) {
		ec_codec_destroy(*dec);
		*dec = NULL;
		return -ENOMEM;
	}
	return 0;
}

int
sdr_ep_code_wanted(const struct sdr_ep *ep, struct sdr_scheme *s)
{
	uint64_t v = __atomic_load_n(&ep->code_want, __ATOMIC_ACQUIRE);

	if (v == 0)
		return 0;
	*s = (struct sdr_scheme){ .kind = (enum sdr_scheme_kind)((v >> 32) & 0xFF),
				  .k = (uint32_t)(v >> 16) & 0xFFFF, .m = (uint32_t)v & 0xFFFF };
	return 1;
}

int
sdr_ep_code_give(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec **dec,
		 struct ec_codec **query)
{
	if (!sdr_scheme_is_ec(s) || ep->code_want != code_value(s))
		return -ESTALE;
	ec_codec_destroy(ep->made_dec);
	ec_codec_destroy(ep->made_query);
	/* (none: it could not be made, and what waits for it gives up: take_code()) */
	ep->made_dec = *dec != NULL && *query != NULL ? *dec : NULL;
	ep->made_query = *dec != NULL && *query != NULL ? *query : NULL;
	if (ep->made_dec != NULL)
		*dec = *query = NULL;
	ep->made_value = code_value(s);
	__atomic_store_n(&ep->code_want, 0, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The code of EC scheme @p s for this end (and with @p query, the reliability layer's):
 * the one given for it (cfg.codes_outside), else made here, or, when only made outside,
 * asked for (sdr_ep_code_wanted(); counted once per code). @return 0, -EAGAIN (asked
 * for: try again once given), -ENOMEM.
 */
static int
take_code(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec **dec,
	  struct ec_codec **query)
{
	uint64_t v = code_value(s);

	if (ep->made_value == v && ep->made_dec == NULL && ep->made_query == NULL) {
		ep->made_value = 0;
		return -ENOMEM;		/* the maker could not: refused, not waited for */
	}
	if (ep->made_value == v && ep->made_dec != NULL &&
	    (query == NULL || ep->made_query != NULL)) {
		*dec = ep->made_dec;
		ep->made_dec = NULL;
		if (query != NULL)
			*query = ep->made_query;
		else
			ec_codec_destroy(ep->made_query);	/* (a send side's: not kept) */
		ep->made_query = NULL;
		ep->made_value = 0;
		return 0;
	}
	if (!ep->cfg.codes_outside)
		return sdr_ep_code_make(s, dec, query);
	if (ep->code_want != v) {
		ep->counters[SDR_EP_SCHEME_CODE_WAITS]++;
		__atomic_store_n(&ep->code_want, v, __ATOMIC_RELEASE);
	}
	return -EAGAIN;
}

/* Codes taken for @p s and not used after all: kept for the next try. */
static void
keep_code(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec *dec,
	  struct ec_codec *query)
{
	ec_codec_destroy(ep->made_dec);
	ec_codec_destroy(ep->made_query);
	ep->made_dec = dec;
	ep->made_query = query;
	ep->made_value = code_value(s);
}

/* The scheme of a SCHEME message's value. @return 0, or -1 for none we know. */
static int
scheme_of_value(uint64_t v, struct sdr_scheme *s)
{
	if ((v >> 48) != 0 || ((v >> 32) & 0xFF) >= SDR_SCHEME_COUNT)
		return -1;
	*s = (struct sdr_scheme){ .kind = (enum sdr_scheme_kind)((v >> 32) & 0xFF),
				  .chunk_shift = (uint8_t)(v >> 40) };
	if (sdr_scheme_is_ec(s)) {
		s->k = (uint32_t)(v >> 16) & 0xFFFF;
		s->m = (uint32_t)v & 0xFFFF;
	} else if ((v & 0xFFFFFFFFull) != 0) {
		return -1;
	}
	return 0;
}

/* Whether this side can run scheme @p s: its parity region and buffers hold the code. */
static int
scheme_runs_here(const struct sdr_ep *ep, const struct sdr_scheme *s)
{
	return ep->cfg.rel.scheme_may_change && sdr_rel_code_fits(&ep->geom, s) &&
	       (!sdr_scheme_is_ec(s) || s->m <= ep->max_m);
}

/* A direction's code to scheme @p s, its old codec freed. */
static void
set_code(struct sdr_ep *ep, struct ep_code *c, const struct sdr_scheme *s,
	 struct ec_codec *codec)
{
	ec_codec_destroy(c->codec);
	c->codec = codec;
	c->ec = sdr_scheme_is_ec(s);
	c->k = c->ec ? s->k : 0;
	c->m = c->ec ? s->m : 0;
	c->chunk = ep->cfg.attr.chunk_size >> s->chunk_shift;
	c->ppc = sdr_conn_shift_ppc(&ep->geom, s->chunk_shift);
}

/*
 * Our sends to scheme @p s, here and now: only between messages (none in flight, no encode
 * out or waiting). The receive half is apply_rx_scheme()'s: with data both ways each
 * direction changes on its own, when its sender asks. @p made: NULL, or s's code made
 * already (taken on success). @return 0, -EBUSY (nothing changed), -ENOMEM.
 */
static int
apply_tx_scheme(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec **made)
{
	struct ec_codec *codec = NULL;
	int rc;

	if (ep->enc_jobs_out || ep->n_enc_wait || ep->held || ep->job_active)
		return -EBUSY;
	if (sdr_scheme_is_ec(s) && made != NULL && *made != NULL) {
		codec = *made;
		*made = NULL;
	} else if (sdr_scheme_is_ec(s) && (rc = take_code(ep, s, &codec, NULL)) != 0) {
		return rc;
	}
	rc = rel_tx_set_scheme(ep->rtx, s);
	if (rc == 0 && (rc = sdr_tx_set_chunk_shift(ep->tx, s->chunk_shift)) != 0)
		rel_tx_set_scheme(ep->rtx, &ep->cfg.rel.scheme);
	if (rc != 0) {
		if (made != NULL && codec != NULL)
			*made = codec;	/* (still the caller's) */
		else if (codec != NULL)
			keep_code(ep, s, codec, NULL);
		return rc;
	}
	set_code(ep, &ep->txc, s, codec);
	ep->cfg.rel.scheme = *s;
	return 0;
}

/* Work of the peer's last messages still out: a decode, or a claimed packet whose payload
 * copy is not committed (it counts in its chunk, of the current code, only then). */
static int
rx_work_out(const struct sdr_ep *ep)
{
	return ep->dec_jobs_out || ep->n_dec_wait || ep->copies_out;
}

/*
 * The peer's sends to us to scheme @p s: only while nothing is arriving (no message in
 * progress, no decode or payload copy out, no decode waiting); the receives posted ahead
 * take the new code. @return 0, -EBUSY (nothing changed), -ENOMEM.
 */
static int
apply_rx_scheme(struct sdr_ep *ep, const struct sdr_scheme *s)
{
	struct ec_codec *codec = NULL, *query = NULL;
	int rc;

	if (rx_work_out(ep))
		return -EBUSY;
	if (sdr_scheme_is_ec(s) && (rc = take_code(ep, s, &codec, &query)) != 0)
		return rc;
	/* the placement's code first: it makes nothing, so going back makes nothing either */
	rc = sdr_rx_set_code(ep->rx, sdr_scheme_is_ec(s) ? s->k : 0,
			     sdr_scheme_is_ec(s) ? s->m : 0, s->chunk_shift);
	if (rc == 0 && (rc = rel_rx_set_scheme(ep->rrx, s, &query)) != 0)
		(void)sdr_rx_set_code(ep->rx, sdr_scheme_is_ec(&ep->rx_scheme) ? ep->rx_scheme.k : 0,
				      sdr_scheme_is_ec(&ep->rx_scheme) ? ep->rx_scheme.m : 0,
				      ep->rx_scheme.chunk_shift);
	if (rc != 0) {
		if (codec != NULL && query != NULL)
			keep_code(ep, s, codec, query);	/* (-EBUSY: the next try's) */
		else
			ec_codec_destroy(codec);
		return rc;
	}
	set_code(ep, &ep->rxc, s, codec);
	ep->rx_scheme = *s;
	return 0;
}

int
sdr_ep_change_scheme(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec **code,
		     uint64_t now)
{
	if (!(ep->cfg.attr.dir & SDR_DIR_SEND) || !scheme_runs_here(ep, s))
		return -EINVAL;
	if (ep->sw_state != SW_NONE || ep->reset_tx)
		return -EBUSY;
	if (scheme_value(s) == scheme_value(&ep->cfg.rel.scheme))
		return 0;
	/* the peer decided a question of ours for the next message already, and decides no
	 * other for it (a late repeat of the first could not be told from it there): this one
	 * waits until a message has gone out */
	if (ep->sw_answered && ep->sw_answered_seq == rel_tx_next_seq(ep->rtx))
		return -EBUSY;
	if (code != NULL && *code != NULL && sdr_scheme_is_ec(s)) {
		ec_codec_destroy(ep->sw_codec);
		ep->sw_codec = *code;	/* (made by the caller for s) */
		*code = NULL;
	}
	ep->sw_want = *s;
	ep->sw_state = SW_DRAIN;
	ep->sw_next_ns = now;
	ep->sw_gap_ns = sdr_rel_rto(&ep->cfg.rel);
	return 0;
}

struct sdr_scheme
sdr_ep_scheme(const struct sdr_ep *ep, int *changing)
{
	if (changing != NULL)
		*changing = ep->sw_state != SW_NONE || ep->reset_tx;
	return ep->cfg.rel.scheme;
}

static void on_scheme(struct sdr_ep *ep, const struct sdr_ctrl *c, uint64_t now);

/* Our SCHEME once nothing is in flight (repeated until answered), or the answer we owe. */
static int
next_scheme(struct sdr_ep *ep, uint64_t now, struct sdr_ctrl *c)
{
	if (ep->code_q && ep->made_value != 0 && !ep->sw_owed) {
		struct sdr_ctrl q = ep->code_qc;
		struct sdr_scheme qs;

		if (scheme_of_value(q.value, &qs) == 0 && sdr_scheme_is_ec(&qs) &&
		    ep->made_value == code_value(&qs)) {
			ep->code_q = 0;
			on_scheme(ep, &q, now);		/* its code is in: the question again */
		}
	}
	if (ep->sw_owed) {
		sdr_zero(c, sizeof(*c));
		c->type = SDR_CTRL_SCHEME;
		c->flags = ep->sw_owed_flags;
		c->value = ep->sw_owed_value;
		c->cum = ep->sw_owed_cum;
		ep->sw_owed = 0;
		return 1;
	}
	if (ep->sw_state == SW_DRAIN && rel_tx_inflight(ep->rtx) == 0 && !ep->enc_jobs_out &&
	    !ep->n_enc_wait && !ep->held && !ep->job_active) {
		/* the code first: the peer switches when it agrees, and then ours must follow */
		int rc = sdr_scheme_is_ec(&ep->sw_want) && ep->sw_codec == NULL ?
			 take_code(ep, &ep->sw_want, &ep->sw_codec, NULL) : 0;

		if (rc == -EAGAIN)
			return 0;	/* until its code is given */
		if (rc != 0) {
			ep->sw_state = SW_NONE;
			ep->counters[SDR_EP_SCHEME_NO_MEMORY]++;
			sdr_auto_refused(&ep->autoe, &ep->sw_want, now);	/* not soon again */
			return 0;
		}
		ep->sw_state = SW_ASK;
		ep->sw_seq = rel_tx_next_seq(ep->rtx);
		ep->counters[SDR_EP_SCHEME_ASKS]++;
	}
	if (ep->sw_state != SW_ASK || now < ep->sw_next_ns)
		return 0;
	sdr_zero(c, sizeof(*c));
	c->type = SDR_CTRL_SCHEME;
	c->value = scheme_value(&ep->sw_want);
	c->cum = (uint32_t)ep->sw_seq;
	ep->sw_next_ns = now + ep->sw_gap_ns;
	if (ep->sw_gap_ns < 64 * sdr_rel_rto(&ep->cfg.rel))
		ep->sw_gap_ns *= 2;
	return 1;
}

/* The peer's question at point @p q for scheme @p value got its answer. */
static void
decided(struct sdr_ep *ep, uint64_t q, uint64_t value, int refused)
{
	ep->sw_rx_set = 1;
	ep->sw_rx_seq = q;
	ep->sw_rx_value = value;
	ep->sw_rx_refused = (uint8_t)refused;
}

/*
 * SCHEME from the peer: its question (we receive its data: change, or refuse, and say
 * which), or its answer to ours.
 */
static void
on_scheme(struct sdr_ep *ep, const struct sdr_ctrl *c, uint64_t now)
{
	struct sdr_scheme s;
	uint64_t q;

	if (c->flags & SDR_CTRL_F_ANSWER) {
		if (ep->sw_state != SW_ASK || c->value != scheme_value(&ep->sw_want) ||
		    c->cum != (uint32_t)ep->sw_seq) {
			ep->counters[SDR_EP_CTRL_STALE]++;	/* not about our question */
			return;
		}
		ep->sw_answered = 1;
		ep->sw_answered_seq = ep->sw_seq;
		if ((c->flags & SDR_CTRL_F_REFUSED) ||
		    apply_tx_scheme(ep, &ep->sw_want, &ep->sw_codec) != 0) {
			ep->counters[SDR_EP_SCHEME_REFUSED]++;
			/* (scheme auto: not asked for again soon, each ask drains the sends) */
			sdr_auto_refused(&ep->autoe, &ep->sw_want, now);
		} else {
			ep->counters[SDR_EP_SCHEME_CHANGES]++;
		}
		/* (nothing was in flight since we asked: apply_tx_scheme() cannot find it busy,
		 * and its code is made) */
		ep->sw_state = SW_NONE;
		ec_codec_destroy(ep->sw_codec);		/* (a refused one's) */
		ep->sw_codec = NULL;
		return;
	}
	if (ep->reset_rx) {
		/* still going back to the configured scheme after a restart (reset_settle()):
		 * no answer yet; the sender asks again after an RTO */
		ep->counters[SDR_EP_SCHEME_DEFERRED]++;
		return;
	}
	/*
	 * A question for messages before those of the one decided last (applied or refused):
	 * a late duplicate (or forged), which must not take the code back; one for messages
	 * further ahead than a peer reaches (SDR_SEQ_WINDOW): forged, it would make every
	 * genuine question after it look late. Ignored, unanswered.
	 */
	q = sdr_seq_near(sdr_rx_next_seq(ep->rx), c->cum);
	if ((ep->sw_rx_set && q < ep->sw_rx_seq) ||
	    q > sdr_rx_next_seq(ep->rx) + SDR_SEQ_WINDOW) {
		ep->counters[SDR_EP_CTRL_STALE]++;
		return;
	}
	ep->sw_owed = 1;
	ep->sw_owed_value = c->value;
	ep->sw_owed_cum = c->cum;
	ep->sw_owed_flags = SDR_CTRL_F_ANSWER;
	if (ep->sw_rx_set && q == ep->sw_rx_seq) {
		/*
		 * Decided at this point already: the same question gets the same answer (ours
		 * may have been lost), never a new decision. A late repeat of a question refused
		 * then could otherwise be applied now, after the sender went back to its
		 * scheme; and another scheme at the same point is refused, as a late repeat of
		 * an earlier question cannot be told from a new one (the sender asks again
		 * once a message has gone out).
		 */
		if (c->value != ep->sw_rx_value) {
			ep->sw_owed_flags |= SDR_CTRL_F_REFUSED;
			ep->counters[SDR_EP_SCHEME_REFUSALS]++;
		} else if (ep->sw_rx_refused) {
			ep->sw_owed_flags |= SDR_CTRL_F_REFUSED;	/* (counted once) */
		}
		return;
	}
	if (scheme_of_value(c->value, &s) == 0 && (ep->cfg.attr.dir & SDR_DIR_RECV) &&
	    scheme_runs_here(ep, &s)) {
		int same = scheme_value(&s) == scheme_value(&ep->rx_scheme);
		int rc = same ? 0 : apply_rx_scheme(ep, &s);

		if (rc == 0) {
			decided(ep, q, c->value, 0);
			if (!same)
				ep->counters[SDR_EP_SCHEME_CHANGES]++;
			if (ep->rx_refused) {
				/* the sender comes to a scheme we run: its data is taken now */
				ep->rx_refused = 0;
				rekey(ep, now);
			}
			return;
		}
		if (rc == -EAGAIN) {
			/* its code is being made off this thread (cfg.codes_outside): no
			 * answer yet; once the code is in, the next output answers it (the
			 * sender also asks again after an RTO) */
			ep->sw_owed = 0;
			ep->code_q = 1;
			ep->code_qc = *c;
			return;
		}
		if (rc == -EBUSY && rx_work_out(ep)) {
			/* the last message's work is still out (an offloaded decode that lost
			 * its race, a payload copy on a receive worker): no answer yet; the
			 * sender asks again after an RTO */
			ep->sw_owed = 0;
			ep->counters[SDR_EP_SCHEME_DEFERRED]++;
			return;
		}
	}
	ep->sw_owed_flags |= SDR_CTRL_F_REFUSED;
	ep->counters[SDR_EP_SCHEME_REFUSALS]++;
	decided(ep, q, c->value, 1);
}

/*
 * A SKIP from the sender (messages it gave up: no receive came, or cancelled): the
 * reliability state fails them and the placement moves past them. The message's 32-bit
 * points are taken nearest to the receive side's own count, as CTS credits are; its era
 * (the value) must be theirs, so one replayed 2^32 messages later is refused.
 */
static void
skip_apply(struct sdr_rx *rx, struct rel_rx *rrx, const struct sdr_ctrl *c, uint64_t now)
{
	uint64_t hi = sdr_seq_near(sdr_rx_next_seq(rx), c->cum);
	uint64_t lo = hi - (uint32_t)(c->cum - c->win_start);

	sdr_rx_skip_to(rx, rel_rx_on_skip(rrx, lo, hi, c->value, now));
}

/*
 * The handshake is done with a peer whose tags we have not keyed yet: key the R_Keys of
 * both directions, give the receives posted meanwhile theirs, and send their CTS now.
 */
static void
rekey(struct sdr_ep *ep, uint64_t now)
{
	uint64_t local = ep->hs.local, peer = ep->hs.peer;
	const uint8_t *auth = ep->cfg.auth ? ep->cfg.auth_key : NULL;

	if (!sdr_peer_ready(&ep->hs))
		return;
	/* our sends' keys, whatever becomes of our receives (data both ways) */
	if (!(ep->rk_send.recv_tag == peer && ep->rk_send.send_tag == local) &&
	    sdr_rkeys_set(&ep->rk_send, peer, local, auth) != 0)
		return;	/* no memory: packets fail the key check; retried at the next input */
	/* the receives': once the scheme of the peer's data is settled (hello_scheme()), not
	 * while it is refused or this end goes back to it (reset_settle()) */
	if (ep->rk_recv.recv_tag == local && ep->rk_recv.send_tag == peer)
		return;
	if (!hello_scheme(ep) || ep->reset_rx || ep->rx_refused)
		return;
	if (sdr_rkeys_set(&ep->rk_recv, local, peer, auth) != 0)
		return;
	for (uint32_t s = 0; s < ep->geom.nslots; s++) {
		struct sdr_rx_msg_info info;

		/* (not one that ended at a restart and waits for its release) */
		if (rel_rx_slot_open(ep->rrx, s) && sdr_rx_msg_info(ep->rx, s, &info) == 0 &&
		    info.state == SDR_SLOT_POSTED)
			sdr_rx_set_rkey(ep->rx, s, ep->cfg.attr.local_rkey ? ep->cfg.attr.local_rkey :
					sdr_rkeys_get(&ep->rk_recv, info.seq));
	}
	rel_rx_cts_now(ep->rrx, now);
}

static void run_decodes(struct sdr_ep *ep, uint64_t now);

/*
 * After a peer restart, each direction back on the configured scheme (scheme0) once the
 * old peer's work is no longer out: apply_tx_scheme() and apply_rx_scheme() refuse while
 * an encode or decode is out, a completion is held, or a receive that was arriving is not
 * released yet. Until then our sends wait (send_common()) and no receive is keyed for the
 * new peer (rekey()), so neither end runs the new peer's messages on another code or
 * chunk than the other (the wire would not tell). @return whether both are back.
 */
static int
reset_settle(struct sdr_ep *ep, uint64_t now)
{
	if (!ep->reset_tx && !ep->reset_rx)
		return 1;
	if (ep->reset_tx && apply_tx_scheme(ep, &ep->scheme0, NULL) == 0)
		ep->reset_tx = 0;
	if (ep->reset_rx) {
		if (ep->n_dec_wait && ep->cfg.fec_jobs)
			run_decodes(ep, now);	/* the old peer's: none is wanted any more */
		if (apply_rx_scheme(ep, &ep->rx_want) == 0) {
			ep->reset_rx = 0;
			rekey(ep, now);
		}
	}
	if (ep->reset_tx || ep->reset_rx)
		return 0;
	ep->counters[SDR_EP_SCHEME_CHANGES]++;
	return 1;
}

/* A HELLO's value: the scheme of its sender's data, marked as said (SR's value is 0). */
#define HELLO_SCHEME_SAID (1ull << 63)

/* For a HELLO to @p dst: the scheme our data runs on for it; a tag that is not our peer's
 * (a restarted peer's, answered before the restart is proven) gets the configured one,
 * which we go back to once it is. */
static uint64_t
hello_value(const struct sdr_ep *ep, uint64_t dst)
{
	if (!(ep->cfg.attr.dir & SDR_DIR_SEND))
		return 0;
	return HELLO_SCHEME_SAID | scheme_value(ep->reset_tx || dst != ep->hs.peer ?
						&ep->scheme0 : &ep->cfg.rel.scheme);
}

/* A HELLO's value, and to the peer an endpoint before us had, until the handshake is
 * done, what that one delivered. */
static void
hello_fill(const struct sdr_ep *ep, struct sdr_ctrl *c)
{
	c->value = hello_value(ep, c->dst_tag);
	if (ep->ho_peer != 0 && c->dst_tag == ep->ho_peer && !sdr_peer_ready(&ep->hs)) {
		c->win_start = ep->ho_start;
		c->nwords = ep->ho_words;
		memcpy(c->win, ep->ho_win, sizeof(uint32_t) * ep->ho_words);
	}
}

/* Whether data sent on @p a is decoded as data on @p b is: the same code and chunk (the
 * kinds without a code differ only in when the receiver acknowledges). */
static int
same_code(const struct sdr_scheme *a, const struct sdr_scheme *b)
{
	return a->chunk_shift == b->chunk_shift && sdr_scheme_is_ec(a) == sdr_scheme_is_ec(b) &&
	       (!sdr_scheme_is_ec(a) || (a->kind == b->kind && a->k == b->k && a->m == b->m));
}

/* No posted receive takes a packet (until rekey() keys them). */
static void
unkey_receives(struct sdr_ep *ep)
{
	struct sdr_rx_msg_info info;

	for (uint32_t s = 0; s < ep->geom.nslots; s++)
		if (sdr_rx_msg_info(ep->rx, s, &info) == 0 && info.state == SDR_SLOT_POSTED)
			sdr_rx_set_rkey(ep->rx, s, 0);
}

/*
 * The scheme of the peer's data, from its HELLO, settled before rekey() keys a receive
 * for it (two ends configured apart, or auto's start picks from each end's own
 * estimate): taken where this end can run it, kept where only when the receiver
 * acknowledges differs, otherwise refused (rx_refused: no receive is keyed, so no message
 * is decoded on another code than it was encoded with). A peer ready without a HELLO of
 * its tag having arrived (both lost) is asked with HELLOs of ours until it answers.
 * Once the receives are keyed, changes go by SCHEME only. @return 0 while not known yet.
 */
static int
hello_scheme(struct sdr_ep *ep)
{
	const struct sdr_scheme *cur = ep->reset_rx ? &ep->rx_want : &ep->rx_scheme;
	struct sdr_scheme s;
	int rc;

	if (!(ep->cfg.attr.dir & SDR_DIR_RECV) || ep->rx_refused)
		return 1;
	if (ep->hello_tag != ep->hs.peer || ep->hs.peer == 0) {
		if (!ep->hello_ask)
			ep->hello_ask_ns = 0;	/* at the next output */
		ep->hello_ask = 1;
		return 0;
	}
	ep->hello_ask = 0;
	if (!(ep->hello_val & HELLO_SCHEME_SAID))
		return 1;		/* a peer that sends no data */
	if (scheme_of_value(ep->hello_val & ~HELLO_SCHEME_SAID, &s) != 0) {
		ep->rx_refused = 1;
	} else if (scheme_value(&s) == scheme_value(cur)) {
		return 1;
	} else if (scheme_runs_here(ep, &s)) {
		ep->rx_want = s;
		ep->reset_rx = 1;
		rc = apply_rx_scheme(ep, &s);
		if (rc == 0) {
			ep->reset_rx = 0;
			ep->counters[SDR_EP_SCHEME_CHANGES]++;
		} else if (rc == -EBUSY || rc == -EAGAIN) {
			unkey_receives(ep);	/* reset_settle() keys them once it has */
		} else {
			ep->reset_rx = 0;
			ep->rx_refused = 1;
		}
		return 1;
	} else if (!same_code(&s, cur)) {
		ep->rx_refused = 1;
	}
	if (ep->rx_refused) {
		ep->counters[SDR_EP_HELLO_SCHEME_REFUSED]++;
		unkey_receives(ep);
	}
	return 1;
}

/*
 * Our tag for the epoch that starts when the peer restarted: a fresh random one, or, where
 * the first was the caller's (tests) or the OS has no entropy to give, one derived from the
 * tags before (splitmix64 through sdr_rng: never 0, and not ours before).
 */
static uint64_t
next_local_tag(const struct sdr_ep *ep, uint64_t peer_tag)
{
	uint64_t t = ep->tag_fixed ? 0 : sdr_tag_random();
	struct sdr_rng r;

	sdr_rng_seed(&r, ep->hs.local ^ peer_tag);
	while (t == 0 || t == ep->hs.local)
		t = sdr_rng_next(&r);
	return t;
}

/*
 * The peer restarted (@p c: a proven message from a new tag): everything in flight fails on
 * both halves, nothing is owed to the old peer, and numbering continues where a fresh peer's
 * count lines up with ours. We take a fresh tag as well, so the old epoch's packets fail the
 * tag and key checks from now on, ours and the peer's, and a message proven in it, replayed
 * later, proves nothing (sdr_peer.h). Messages that the peer's endpoint before delivered
 * (a HELLO's window, from an endpoint that took over the connection there) complete OK.
 */
static void
peer_restarted(struct sdr_ep *ep, const struct sdr_ctrl *c, uint64_t now)
{
	uint64_t base;
	int keep = 1;

	ep->counters[SDR_EP_PEER_RESTARTS]++;
	psn_loss_reset(&ep->loss);	/* the new peer's PSNs start elsewhere */
	ep->sw_rx_set = 0;		/* (its questions are numbered anew, ours too) */
	ep->sw_answered = 0;
	collect_done(ep);	/* what finished before keeps its status */
	/* (of the endpoint that was our peer: not one before it, replayed) */
	if (c->type == SDR_CTRL_HELLO && c->nwords > SDR_CTRL_HELLO_TAG_WORDS) {
		if (((uint64_t)c->win[0] << 32 | c->win[1]) == ep->hs.peer)
			rel_tx_delivered(ep->rtx, c->win_start, c->win + SDR_CTRL_HELLO_TAG_WORDS,
					 c->nwords - SDR_CTRL_HELLO_TAG_WORDS, now);
		else	/* what it delivered of another peer's sends: not ours to complete */
			ep->counters[SDR_EP_CTRL_STALE]++;
	}
	ep->ho_peer = 0;	/* (a peer we know no more) */
	/* sends that did not start stay for the new peer, unless on another scheme than the
	 * configured one it starts from (they could not be re-coded: nothing may be in flight) */
	sdr_tx_skip_to(ep->tx, rel_tx_reset(ep->rtx, now, scheme_value(&ep->scheme0) ==
					    scheme_value(&ep->cfg.rel.scheme)));
	collect_done(ep);
	/* receives may stay for the new peer only if no packet of the old one is in them, or on
	 * its way into them (a payload copy out) */
	for (uint32_t s = 0; s < ep->geom.nslots && keep; s++) {
		struct sdr_rx_msg_info info;

		if (sdr_rx_msg_info(ep->rx, s, &info) == 0 && info.state == SDR_SLOT_POSTED &&
		    (info.pkts_received != 0 || ep->rx_out[s] != 0))
			keep = 0;
	}
	base = rel_rx_reset(ep->rrx, now, keep);
	sdr_rx_skip_to(ep->rx, base);
	/* what this end delivered was of the old peer's numbering: the record starts again
	 * with the new peer's (receives of the old one that end later are not in it), from
	 * the first receive that stayed for it where some did: those it may fill, and an
	 * endpoint that takes over must be able to say it did */
	ep->dlv_floor = ep->dlv_hi = rel_rx_epoch(ep->rrx);
	memset(ep->dlv, 0, sizeof(ep->dlv));
	/* no posted receive takes a packet until the new peer's tags key it (rekey(): the ones
	 * that stay); one that failed stays the application's until released, and takes none.
	 * Slots that ended lose the old epoch's keys too: its late packets are bad_rkey, not
	 * late ones that would count in the new peer's loss record or re-arm a final ACK */
	for (uint32_t s = 0; s < ep->geom.nslots; s++)
		sdr_rx_set_rkey(ep->rx, s, 0);
	sdr_rx_forget_previous(ep->rx);	/* and a posted slot's previous receive */
	/* receives posted from now on take no packet until the new peer's tags key them */
	sdr_rkeys_fini(&ep->rk_recv);
	sdr_rkeys_fini(&ep->rk_send);
	ep->sync_owed = 0;	/* an old application's; ours is asked again below */
	/* a new peer counts its REPORTs from 0 (the estimate itself is of the path: it stays) */
	ep->peer_rep_pkts = ep->peer_rep_lost = 0;
	if (ep->psel_on)
		path_sel_peer_restart(&ep->psel);	/* and its PATHS counts too */
	/* and starts from the configured scheme: so do we, now or once the old peer's work
	 * that is still out is back (reset_settle()) */
	ep->sw_state = SW_NONE;
	ec_codec_destroy(ep->sw_codec);
	ep->sw_codec = NULL;
	ep->sw_owed = 0;
	ep->code_q = 0;		/* (the old peer's question; a code wanted for it is not) */
	__atomic_store_n(&ep->code_want, 0, __ATOMIC_RELEASE);
	ep->reset_tx = scheme_value(&ep->scheme0) != scheme_value(&ep->cfg.rel.scheme);
	ep->reset_rx = scheme_value(&ep->scheme0) != scheme_value(&ep->rx_scheme);
	ep->rx_want = ep->scheme0;	/* until the new peer's HELLO says (hello_scheme()) */
	ep->rx_refused = 0;
	ep->hello_ask = 0;
	if (ep->reset_tx || ep->reset_rx) {
		reset_settle(ep, now);
		if (ep->reset_tx || ep->reset_rx)
			ep->counters[SDR_EP_SCHEME_RESET_WAITS]++;
	}
	if (ep->sync_wait)
		ep->sync_next_ns = now;
	sdr_peer_restart(&ep->hs, c->src_tag, next_local_tag(ep, c->src_tag), now);
}

static void
input_ctrl(struct sdr_ep *ep, const struct roce_view *v, uint64_t now)
{
	uint32_t len = v->payload_len;
	struct sdr_ctrl c;
	int rc;

	ep->counters[SDR_EP_CTRL_PKTS_IN]++;
	if (v->opcode != ROCE_OP_UC_SEND_ONLY) {
		ep->counters[SDR_EP_CTRL_BAD_OPCODE]++;
		return;
	}
	if (ep->cfg.auth) {	/* the MAC first: nothing else is read of a message without it */
		if (len < SDR_MAC_LEN ||
		    !sdr_mac_verify(&ep->mac, v->payload, len - SDR_MAC_LEN,
				    v->payload + len - SDR_MAC_LEN)) {
			ep->counters[SDR_EP_CTRL_BAD_MAC]++;
			return;
		}
		len -= SDR_MAC_LEN;
	}
	rc = sdr_ctrl_decode(v->payload, len, &c);
	if (rc != 0) {
		ep->counters[SDR_EP_CTRL_BAD]++;
		ep->ctrl_err[-rc]++;
		return;
	}
	switch (sdr_peer_input(&ep->hs, &c, now)) {
	case SDR_PEER_ACCEPT:
		break;
	case SDR_PEER_RESTART:
		peer_restarted(ep, &c, now);
		if (sdr_peer_input(&ep->hs, &c, now) != SDR_PEER_HELLO)
			return;	/* (not ready yet: a message other than a HELLO waits) */
		/* fall through */
	case SDR_PEER_HELLO:
		ep->counters[SDR_EP_HELLOS_IN]++;
		if (c.src_tag == ep->hs.peer) {	/* (not a stranger's, answered only) */
			ep->hello_tag = c.src_tag;
			ep->hello_val = c.value;
		}
		rekey(ep, now);
		return;
	case SDR_PEER_BAD_TAG:
		ep->counters[SDR_EP_CTRL_BAD_TOKEN]++;
		return;
	case SDR_PEER_OLD_EPOCH:
		ep->counters[SDR_EP_CTRL_OLD_EPOCH]++;
		return;
	case SDR_PEER_REFLECTED:
		ep->counters[SDR_EP_CTRL_REFLECTED]++;
		return;
	case SDR_PEER_NOT_READY:
		ep->counters[SDR_EP_CTRL_EARLY]++;
		rekey(ep, now);
		return;
	}
	rekey(ep, now);
	switch (sdr_ctrl_route(&c)) {
	case SDR_ROUTE_SKIP:
		skip_apply(ep->rx, ep->rrx, &c, now);
		return;
	case SDR_ROUTE_WITHDRAWN:
		rel_rx_on_withdraw_answer(ep->rrx, c.cum, c.value);
		return;
	case SDR_ROUTE_REPORT:
		on_report(ep, &c);
		return;
	case SDR_ROUTE_PATHS:
		on_paths(ep, &c, now);
		return;
	case SDR_ROUTE_SCHEME:
		on_scheme(ep, &c, now);
		return;
	case SDR_ROUTE_SYNC:
		ep->sync_owed = 1;	/* answered once our own resets are */
		ep->sync_owed_nonce = c.value;
		return;
	case SDR_ROUTE_SYNC_ANSWER:
		if (ep->sync_wait && c.value == ep->sync_nonce)
			ep->sync_wait = 0;
		else
			ep->counters[SDR_EP_CTRL_STALE]++;
		return;
	case SDR_ROUTE_HELLO:	/* the handshake took it above */
		return;
	default:
		rel_tx_on_ctrl(ep->rtx, &c, now);
		if (c.type == SDR_CTRL_WITHDRAW)	/* the next message is numbered after them */
			sdr_tx_skip_to(ep->tx, rel_tx_next_seq(ep->rtx));
		return;
	}
}

/*
 * scheme auto, receive side: every frame on a data QPN (first send, resend or parity) took
 * that QPN's next PSN at the sender, so the PSNs that never come are the path's losses,
 * whatever the scheme made of them (psn_loss.h: late frames within a window and second
 * copies are not losses). The counts go to the sender in REPORTs. Only frames that
 * carried their receive's R_Key count (sdr_rx_keyed()): anyone can write a PSN, and one
 * forged far ahead would count the PSNs before it lost and the real frames too late, ones
 * forged behind would fill the holes of real losses. A genuine frame left out (a resend
 * that comes after its slot moved two receives on) counts as lost: the estimate errs
 * towards more loss, the safe side for the scheme it picks.
 */
static void
count_psn(struct sdr_ep *ep, const struct roce_view *v, uint64_t now)
{
	uint32_t q = v->dqpn - ep->cfg.attr.local_qpn;

	if (ep->psel_on && q < ep->loss.nqp) {	/* its highest PSN: when it arrived */
		uint32_t hi = ep->loss.qp[q].hi;
		uint8_t started = ep->loss.qp[q].started;

		psn_loss_seen(&ep->loss, q, v->psn);
		if (!started || ep->loss.qp[q].hi != hi)
			ep->pth_hi_ns[q] = now;
		ep->pth_dirty = 1;
	} else {
		psn_loss_seen(&ep->loss, q, v->psn);
	}
	ep->counters[SDR_EP_WIRE_PKTS] = ep->loss.pkts;
	ep->counters[SDR_EP_WIRE_LOST] = ep->loss.lost;
	ep->counters[SDR_EP_WIRE_DUPS] = ep->loss.dups;
	ep->counters[SDR_EP_WIRE_TOO_LATE] = ep->loss.too_late;
	ep->counters[SDR_EP_WIRE_BLACKOUTS] = ep->loss.resyncs;
}

/* A data packet placed: the chunk events it caused, to the reliability layer. */
static void
on_placed(struct sdr_ep *ep, const struct sdr_rx_event *ev, uint64_t now)
{
	/* data chunks, then parity chunks numbered after them: as rel_rx counts */
	if (ev->flags & SDR_RX_EV_CHUNK)
		rel_rx_on_chunk(ep->rrx, ev->slot, ev->chunk, now);
	if (ev->flags & SDR_RX_EV_PARITY_CHUNK) {
		struct sdr_rx_msg_info info;

		sdr_rx_msg_info(ep->rx, ev->slot, &info);
		rel_rx_on_chunk(ep->rrx, ev->slot, info.nchunks + ev->chunk, now);
	}
}

static void
on_not_placed(struct sdr_ep *ep, const struct roce_view *v, uint32_t gen, sdr_rx_verdict r,
	      uint64_t now)
{
	/* the sender is still sending what we have: it may have missed an ACK */
	if (r == SDR_RX_LATE_PACKET || r == SDR_RX_MSG_COMPLETE || r == SDR_RX_DUPLICATE)
		rel_rx_on_late(ep->rrx, sdr_imm_unpack(&ep->cfg.attr.split, v->imm).msg_id, gen, now);
	else if (r == SDR_RX_LATE_PREVIOUS)	/* of the receive before the slot's current one */
		rel_rx_on_late_previous(ep->rrx, sdr_imm_unpack(&ep->cfg.attr.split, v->imm).msg_id,
					gen, now);
	else if (r == SDR_RX_OUT_OF_RANGE || r == SDR_RX_BAD_LENGTH) {
		/* under the receive's key (the claim checked it first), at a data offset: the
		 * sender's message has another length than the receive */
		struct sdr_imm_fields f = sdr_imm_unpack(&ep->cfg.attr.split, v->imm);

		if (ep->geom.parity_pkt_off == 0 || f.pkt_off < ep->geom.parity_pkt_off)
			rel_rx_on_wrong_length(ep->rrx, f.msg_id, gen, now);
	}
}

int
sdr_ep_input_claim(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind,
		   uint32_t gen, uint64_t now, struct sdr_rx_claim *cl)
{
	sdr_rx_verdict r;
	int32_t r32;

	if (kind == SDR_QPN_CTRL) {
		input_ctrl(ep, v, now);
		return 0;
	}
	ep->counters[SDR_EP_DATA_PKTS_IN]++;
	r = sdr_rx_claim(ep->rx, v, gen, cl);
	if ((ep->cfg.auto_report || ep->psel_on) && sdr_rx_keyed(r))
		count_psn(ep, v, now);
	if (r != SDR_RX_PLACED) {
		on_not_placed(ep, v, gen, r, now);
		return 0;
	}
	ep->rx_out[cl->slot]++;		/* its completion waits: the copy writes its buffer */
	ep->copies_out++;
	r32 = par_region_of(ep, cl->dst);
	if (r32 >= 0)
		ep->rx_par_copies[r32]++;
	return 1;
}

void
sdr_ep_input_commit(struct sdr_ep *ep, const struct sdr_rx_claim *cl, uint64_t now)
{
	struct sdr_rx_event ev;
	int32_t r = par_region_of(ep, cl->dst);

	ep->rx_out[cl->slot]--;
	ep->copies_out--;
	if (r >= 0) {
		ep->rx_par_copies[r]--;
		par_region_settle(ep, r);
	}
	sdr_rx_commit(ep->rx, cl, &ev);
	on_placed(ep, &ev, now);
	/* a completion that waited for this copy goes out at the next sdr_ep_poll() (and
	 * sdr_ep_next_time() says it is due now) */
}

/* A data packet whose payload is placed on this thread (sdr_rx_place()): what
 * sdr_ep_input_write() does. @return the verdict. */
static sdr_rx_verdict
input_data(struct sdr_ep *ep, const struct roce_view *v, uint32_t gen, uint64_t now)
{
	struct sdr_rx_event ev;
	sdr_rx_verdict r;

	ep->counters[SDR_EP_DATA_PKTS_IN]++;
	r = sdr_rx_place(ep->rx, v, gen, &ev);
	if (r == SDR_RX_PLACED)
		on_placed(ep, &ev, now);
	else
		on_not_placed(ep, v, gen, r, now);
	return r;
}

/* The two halves of sdr_ep_input_claim() with the copy between them, on this thread. */
void
sdr_ep_input(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind, uint32_t gen,
	     uint64_t now)
{
	struct sdr_rx_claim cl;

	if (sdr_ep_input_claim(ep, v, kind, gen, now, &cl)) {
		memcpy(cl.dst, cl.src, cl.len);
		sdr_ep_input_commit(ep, &cl, now);
	}
}

int
sdr_ep_input_unchecked(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind,
		       uint32_t gen, uint64_t now)
{
	struct sdr_rx_claim cl;

	if (kind != SDR_QPN_DATA || rx_work_out(ep) || v->payload_len < CRC_COPY_MIN ||
	    sdr_rx_peek(ep->rx, v, gen, &cl) != SDR_RX_PLACED) {
		if (!roce_icrc_check(v))
			return 0;
		sdr_ep_input(ep, v, kind, gen, now);
		return 1;
	}
	if (!roce_icrc_copy(v, cl.dst))
		return 0;
	/* good, and in place: claimed and committed as sdr_ep_input() does, less the copy */
	if (sdr_ep_input_claim(ep, v, kind, gen, now, &cl))
		sdr_ep_input_commit(ep, &cl, now);
	return 1;
}

int
sdr_ep_input_write(struct sdr_ep *ep, uint32_t q, uint32_t imm, const uint8_t *region,
		   uint64_t region_len, uint32_t len, uint64_t now)
{
	struct sdr_imm_fields f = sdr_imm_unpack(&ep->cfg.attr.split, imm);
	uint64_t va = sdr_conn_va(&ep->geom, f.msg_id, f.pkt_off);
	struct roce_view v;

	if (va > region_len || len > region_len - va || q >= ep->geom.ndata_qpns) {
		/* the NIC kept the write inside the region; the immediate points elsewhere */
		ep->counters[SDR_EP_WRITE_OUTSIDE]++;
		return -1;
	}
	sdr_zero(&v, sizeof(v));
	v.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
	v.dqpn = ep->cfg.attr.local_qpn + q;
	v.imm = imm;
	v.va = va;
	v.rkey = ep->cfg.attr.local_rkey;	/* the region's, which the NIC checked */
	v.dma_len = len;
	v.payload = region + va;
	v.payload_len = len;
	return (int)input_data(ep, &v, q / ep->cfg.attr.channels, now);
}

void
sdr_ep_input_ctrl(struct sdr_ep *ep, uint8_t opcode, const uint8_t *msg, uint32_t len,
		  uint64_t now)
{
	struct roce_view v;

	sdr_zero(&v, sizeof(v));
	v.opcode = opcode;
	v.dqpn = sdr_conn_ctrl_qpn(ep->cfg.attr.local_qpn, &ep->cfg.attr);
	v.payload = msg;
	v.payload_len = len;
	input_ctrl(ep, &v, now);
}

/* Data chunk c of a message: where its bytes are, padded into @p pad when short. */
static uint8_t *
chunk_ptr(struct sdr_ep *ep, const uint8_t *base, uint64_t len, uint32_t c, uint8_t *pad)
{
	uint32_t cb = ep->txc.chunk;
	uint64_t off = (uint64_t)c * cb;

	if (off >= len && !(len == 0 && c == 0))
		return ep->zeros;		/* past the end of a short last submessage */
	if (len - off >= cb)
		return (uint8_t *)(uintptr_t)(base + off);
	memcpy(pad, base + off, len - off);
	memset(pad + (len - off), 0, cb - (len - off));
	return pad;
}

static uint8_t *
tx_par_chunk(struct sdr_ep *ep, int16_t buf, uint32_t j)
{
	return ep->tx_par + ((uint64_t)buf * ep->txc.m + j) * ep->chunk;
}

static struct sdr_fec_job *
job_get(struct sdr_ep *ep)
{
	struct sdr_fec_job *j;

	if (ep->job_free == UINT32_MAX)
		return NULL;
	j = &ep->jobs[ep->job_free];
	ep->job_free = j->next_free;
	return j;
}

static void
job_put(struct sdr_ep *ep, struct sdr_fec_job *j)
{
	j->next_free = ep->job_free;
	ep->job_free = (uint32_t)(j - ep->jobs);
}

static void
job_ready(struct sdr_ep *ep, struct sdr_fec_job *j)
{
	ep->ready[(ep->ready_head + ep->nready) % ep->cfg.fec_jobs] = j;
	ep->nready++;
	ep->counters[SDR_EP_FEC_JOBS]++;
}

/* Compute the parity of submessage @p sub (or hand it out as a job); 0 when done or handed
 * out, -1 when no parity buffer (or no job) is free. */
static int
encode(struct sdr_ep *ep, uint32_t ctx, uint64_t seq, uint32_t sub)
{
	struct ep_send *s = &ep->sends[ctx];
	const uint8_t *data[EC_MAX_CHUNKS];
	uint8_t *par[EC_MAX_CHUNKS];
	struct sdr_fec_job *job = NULL;
	int16_t b;

	if (ep->n_tx_par_free == 0)
		return -1;
	if (ep->cfg.fec_jobs && (job = job_get(ep)) == NULL)
		return -1;
	b = ep->tx_par_free[--ep->n_tx_par_free];
	s->par_buf[sub] = b;
	if (job != NULL) {
		for (uint32_t j = 0; j < ep->txc.k; j++)
			job->ptr[j] = chunk_ptr(ep, s->msg.buf, s->msg.len, sub * ep->txc.k + j,
						job->stage);
		for (uint32_t j = 0; j < ep->txc.m; j++)
			job->ptr[ep->txc.k + j] = tx_par_chunk(ep, b, j);
		job->kind = FEC_ENCODE;
		job->codec = ep->txc.codec;
		job->k = ep->txc.k;
		job->len = ep->txc.chunk;
		ep->enc_jobs_out++;
		job->ctx = ctx;
		job->seq = seq;
		job->sub = sub;
		job->par_buf = b;
		ep->tx_par_busy[b] = 1;
		ep->enc_out[ctx]++;
		job_ready(ep, job);
		return 0;
	}
	for (uint32_t j = 0; j < ep->txc.k; j++)
		data[j] = chunk_ptr(ep, s->msg.buf, s->msg.len, sub * ep->txc.k + j, ep->scratch);
	for (uint32_t j = 0; j < ep->txc.m; j++)
		par[j] = tx_par_chunk(ep, b, j);
	ec_encode(ep->txc.codec, data, par, ep->txc.chunk);
	ep->counters[SDR_EP_ENCODES]++;
	rel_tx_parity_ready(ep->rtx, ctx, seq, sub);
	return 0;
}

static void
release_par(struct sdr_ep *ep, uint32_t ctx, uint32_t sub)
{
	struct ep_send *s = &ep->sends[ctx];
	int16_t b = s->par_buf[sub];

	if (b < 0)
		return;
	s->par_buf[sub] = -1;
	if (ep->tx_par_busy != NULL && ep->tx_par_busy[b]) {
		ep->tx_par_busy[b] = 2;		/* its encode is out: freed when it returns */
		return;
	}
	ep->tx_par_free[ep->n_tx_par_free++] = b;
}

/* A waiting encode still to do: not for a message already finished (its completion held
 * for other encodes). */
static int
enc_wanted(const struct sdr_ep *ep, const struct enc_wait *w)
{
	return ep->sends[w->ctx].msg.seq == w->seq &&
	       !(ep->held && ep->held_tx.ctx == w->ctx && ep->held_tx.seq == w->seq);
}

/* Encodes that waited for a parity buffer, in order. */
static void
retry_encodes(struct sdr_ep *ep)
{
	uint32_t cap = ep->cfg.attr.max_inflight * ep->max_sub;

	while (ep->n_enc_wait) {
		struct enc_wait *w = &ep->enc_wait[ep->enc_head];

		if (enc_wanted(ep, w) && encode(ep, w->ctx, w->seq, w->sub) != 0)
			return;
		ep->enc_head = (ep->enc_head + 1) % cap;
		ep->n_enc_wait--;
	}
}

static void
request_encode(struct sdr_ep *ep, uint32_t ctx, uint64_t seq, uint32_t sub)
{
	uint32_t cap = ep->cfg.attr.max_inflight * ep->max_sub;

	if (ep->n_enc_wait == 0 && encode(ep, ctx, seq, sub) == 0)
		return;
	/* what it waits for: a parity buffer, or (offload) a job */
	ep->counters[ep->n_tx_par_free ? SDR_EP_FEC_JOB_WAITS : SDR_EP_PARITY_WAITS]++;
	if (ep->n_enc_wait == cap) {	/* finished messages' requests out, order kept */
		uint32_t n = 0;

		for (uint32_t i = 0; i < cap; i++) {
			const struct enc_wait *w = &ep->enc_wait[(ep->enc_head + i) % cap];

			if (enc_wanted(ep, w))
				ep->enc_wait[(ep->enc_head + n++) % cap] = *w;
		}
		ep->n_enc_wait = n;
	}
	if (ep->n_enc_wait < cap) {
		ep->enc_wait[(ep->enc_head + ep->n_enc_wait) % cap] =
			(struct enc_wait){ .ctx = ctx, .sub = sub, .seq = seq };
		ep->n_enc_wait++;
	} else {
		ep->counters[SDR_EP_FEC_WAIT_FULL]++;
	}
}

/*
 * The k + m chunk pointers and presence mask for decoding submessage @p d. Data chunks point
 * into the receive buffer, except the short last chunk, which is worked on padded in
 * @p pad; with @p stage (offload) every missing data chunk points into the stage instead
 * and *nmiss/miss[] say which. @return 0 with the slot's message info, -1 when the
 * receive is gone, -2 when more data chunks are missing than the stage holds.
 */
static int
decode_setup(struct sdr_ep *ep, const struct rel_rx_decode *d, uint8_t **ptr,
	     struct ec_mask *mask, uint8_t *pad, uint8_t *stage, uint32_t *nmiss, uint32_t *miss,
	     struct sdr_rx_msg_info *info)
{
	const uint64_t *bits = sdr_rx_chunk_bits(ep->rx, d->slot);

	if (bits == NULL || sdr_rx_msg_info(ep->rx, d->slot, info) != 0)
		return -1;
	ec_mask_zero(mask);
	*nmiss = 0;
	for (uint32_t j = 0; j < ep->rxc.k; j++) {
		uint32_t c = d->first + j, len;
		uint8_t *p;
		int have;

		if (c >= info->nchunks) {
			ptr[j] = ep->zeros;
			ec_mask_set(mask, j);
			continue;
		}
		have = sdr_bit_test(bits, c);
		sdr_rx_chunk_span(ep->rx, d->slot, c, &p, &len);
		ptr[j] = p;
		if (len < ep->rxc.chunk) {	/* the short last chunk: work on a padded copy */
			ptr[j] = pad;
			memset(pad, 0, ep->rxc.chunk);
			if (have)
				memcpy(pad, p, len);
		} else if (!have && stage != NULL) {
			if (*nmiss == ep->rxc.m)
				return -2;	/* more lost than any code of m parity rebuilds */
			ptr[j] = stage + (uint64_t)*nmiss * ep->chunk;
			miss[(*nmiss)++] = c;
		}
		if (have)
			ec_mask_set(mask, j);
	}
	for (uint32_t i = 0; i < ep->rxc.m; i++) {
		uint32_t pc = d->sub * ep->rxc.m + i, len;

		ptr[ep->rxc.k + i] = NULL;
		if (sdr_bit_test(bits, info->nchunks + pc)) {
			sdr_rx_parity_span(ep->rx, d->slot, pc, &ptr[ep->rxc.k + i], &len);
			ec_mask_set(mask, ep->rxc.k + i);
		}
	}
	return 0;
}

/* Rebuilt chunk @p c from @p src into the receive buffer, unless it arrived meanwhile. */
static void
recovered(struct sdr_ep *ep, uint32_t slot, uint32_t c, const uint8_t *src)
{
	const uint64_t *bits = sdr_rx_chunk_bits(ep->rx, slot);
	struct sdr_rx_event ev;
	uint32_t len;
	uint8_t *p;

	if (bits == NULL || sdr_bit_test(bits, c))
		return;
	sdr_rx_chunk_span(ep->rx, slot, c, &p, &len);
	if (src != p)
		memcpy(p, src, len);
	/* the receive state machine learns of these from rel_rx_decoded() */
	sdr_rx_chunk_recovered(ep->rx, slot, c, &ev);
}

/* Rebuild the missing data chunks of a submessage in the receive buffer. */
static void
decode(struct sdr_ep *ep, const struct rel_rx_decode *d, uint64_t now)
{
	uint8_t *ptr[EC_MAX_CHUNKS];
	struct sdr_rx_msg_info info;
	struct ec_mask mask;
	uint32_t nmiss;
	int rc = decode_setup(ep, d, ptr, &mask, ep->scratch, NULL, &nmiss, NULL, &info);

	if (rc == 0 && ec_decode(ep->rxc.codec, &mask, ptr, ep->rxc.chunk) < 0)
		rc = -2;
	if (rc != 0) {
		/* (-1: the receive is gone) */
		if (rc == -2) {
			ep->counters[SDR_EP_DECODE_FAILED]++;
			rel_rx_decode_dropped(ep->rrx, d->ctx, d->seq, d->sub);
		}
		return;
	}
	for (uint32_t j = 0; j < ep->rxc.k && d->first + j < info.nchunks; j++)
		recovered(ep, d->slot, d->first + j, ptr[j]);
	ep->counters[SDR_EP_DECODES]++;
	rel_rx_decoded(ep->rrx, d->ctx, d->seq, d->sub, now);
}

/* The same as a job: 0 handed out (or nothing to do), -1 no job free. */
static int
decode_job(struct sdr_ep *ep, const struct rel_rx_decode *d)
{
	struct sdr_fec_job *job;
	struct sdr_rx_msg_info info;
	int rc;

	/* a request that waited may be for a receive that has ended since */
	if (!rel_rx_decode_wanted(ep->rrx, d->ctx, d->seq, d->sub))
		return 0;
	job = job_get(ep);
	if (job == NULL)
		return -1;
	/* the short chunk's padded copy sits after the m staging chunks */
	rc = decode_setup(ep, d, job->ptr, &job->mask, job->stage + (uint64_t)ep->rxc.m * ep->chunk,
			  job->stage, &job->nmiss, job->miss, &info);
	if (rc != 0) {
		/* the receive is gone (as decode() ignores it), or the loss is beyond the code */
		job_put(ep, job);
		if (rc == -2) {
			ep->counters[SDR_EP_DECODE_FAILED]++;
			rel_rx_decode_dropped(ep->rrx, d->ctx, d->seq, d->sub);
		}
		return 0;
	}
	job->kind = FEC_DECODE;
	job->codec = ep->rxc.codec;
	job->k = ep->rxc.k;
	job->len = ep->rxc.chunk;
	ep->dec_jobs_out++;
	job->d = *d;
	job->rx_seq = info.seq;
	job->region = ep->rx_par_of_slot[d->slot];
	if (job->region >= 0)
		ep->rx_par_jobs[job->region]++;
	ep->rx_out[d->slot]++;		/* its completion waits: the job reads its buffer */
	job_ready(ep, job);
	return 0;
}

/*
 * The waiting decodes still wanted, in order: requests of receives that ended since stay in
 * the queue until they reach its head, and behind a head that waits for a job they could
 * fill it. Live requests are at most one per pending submessage, which the queue holds.
 */
static void
dec_wait_compact(struct sdr_ep *ep, uint32_t cap)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ep->n_dec_wait; i++) {
		const struct rel_rx_decode *d = &ep->dec_wait[(ep->dec_head + i) % cap];

		if (rel_rx_decode_wanted(ep->rrx, d->ctx, d->seq, d->sub))
			ep->dec_wait[(ep->dec_head + n++) % cap] = *d;
	}
	ep->n_dec_wait = n;
}

/* Decodes the receive state machine asks for: run now, or hand out (in order). */
static void
run_decodes(struct sdr_ep *ep, uint64_t now)
{
	uint32_t cap = ep->cfg.attr.max_inflight * ep->max_sub;
	struct rel_rx_decode d;

	if (!ep->cfg.fec_jobs) {
		while (rel_rx_next_decode(ep->rrx, &d))
			decode(ep, &d, now);
		return;
	}
	while (ep->n_dec_wait && decode_job(ep, &ep->dec_wait[ep->dec_head]) == 0) {
		ep->dec_head = (ep->dec_head + 1) % cap;
		ep->n_dec_wait--;
	}
	while (rel_rx_next_decode(ep->rrx, &d)) {
		if (ep->n_dec_wait == 0 && decode_job(ep, &d) == 0)
			continue;
		ep->counters[SDR_EP_FEC_JOB_WAITS]++;
		if (ep->n_dec_wait == cap)
			dec_wait_compact(ep, cap);
		if (ep->n_dec_wait < cap) {
			ep->dec_wait[(ep->dec_head + ep->n_dec_wait++) % cap] = d;
		} else {
			ep->counters[SDR_EP_FEC_WAIT_FULL]++;
			rel_rx_decode_dropped(ep->rrx, d.ctx, d.seq, d.sub);
		}
	}
}

uint32_t
sdr_ep_fec_take(struct sdr_ep *ep, struct sdr_fec_job **jobs, uint32_t n)
{
	uint32_t got = 0;

	while (got < n && ep->nready) {
		jobs[got++] = ep->ready[ep->ready_head];
		ep->ready_head = (ep->ready_head + 1) % ep->cfg.fec_jobs;
		ep->nready--;
	}
	ep->jobs_out += got;
	return got;
}

void
sdr_fec_job_run(struct sdr_fec_job *job)
{
	if (job->kind == FEC_ENCODE)
		job->rc = ec_encode(job->codec, (const uint8_t *const *)job->ptr,
				    job->ptr + job->k, job->len);
	else
		job->rc = ec_decode((struct ec_codec *)(uintptr_t)job->codec, &job->mask, job->ptr,
				    job->len);
}

struct sdr_ep *
sdr_fec_job_ep(const struct sdr_fec_job *job)
{
	return job->ep;
}

uint32_t
sdr_ep_fec_outstanding(const struct sdr_ep *ep)
{
	return ep->jobs_out;
}

static void
encode_done(struct sdr_ep *ep, struct sdr_fec_job *job)
{
	struct ep_send *s = &ep->sends[job->ctx];
	int16_t b = job->par_buf;

	ep->enc_out[job->ctx]--;
	ep->enc_jobs_out--;
	if (ep->tx_par_busy[b] == 2) {		/* the message ended meanwhile */
		ep->tx_par_busy[b] = 0;
		ep->tx_par_free[ep->n_tx_par_free++] = b;
		ep->counters[SDR_EP_FEC_STALE]++;
		return;
	}
	ep->tx_par_busy[b] = 0;
	if (s->msg.seq != job->seq || s->par_buf[job->sub] != b) {
		ep->counters[SDR_EP_FEC_STALE]++;	/* cannot happen: the buffer is held */
		return;
	}
	ep->counters[SDR_EP_ENCODES]++;
	rel_tx_parity_ready(ep->rtx, job->ctx, job->seq, job->sub);
}

static void
decode_done(struct sdr_ep *ep, struct sdr_fec_job *job, uint64_t now)
{
	const struct rel_rx_decode *d = &job->d;
	struct sdr_rx_msg_info info;
	int32_t r = job->region;

	if (r >= 0) {
		ep->rx_par_jobs[r]--;
		par_region_settle(ep, r);
	}
	ep->rx_out[d->slot]--;
	ep->dec_jobs_out--;
	/* the receive may have completed, failed or been released meanwhile */
	if (!rel_rx_decode_wanted(ep->rrx, d->ctx, d->seq, d->sub) ||
	    sdr_rx_msg_info(ep->rx, d->slot, &info) != 0 || info.seq != job->rx_seq ||
	    ep->rx_par_of_slot[d->slot] != r) {
		ep->counters[SDR_EP_FEC_STALE]++;
		return;
	}
	if (job->rc < 0) {
		ep->counters[SDR_EP_DECODE_FAILED]++;
		rel_rx_decode_dropped(ep->rrx, d->ctx, d->seq, d->sub);
		return;
	}
	for (uint32_t i = 0; i < job->nmiss; i++)
		recovered(ep, d->slot, job->miss[i], job->stage + (uint64_t)i * ep->chunk);
	/* the short last chunk, when it was the one missing */
	for (uint32_t j = 0; j < ep->rxc.k && d->first + j < info.nchunks; j++)
		if (job->ptr[j] == job->stage + (uint64_t)ep->rxc.m * ep->chunk)
			recovered(ep, d->slot, d->first + j, job->ptr[j]);
	ep->counters[SDR_EP_DECODES]++;
	rel_rx_decoded(ep->rrx, d->ctx, d->seq, d->sub, now);
}

void
sdr_ep_fec_done(struct sdr_ep *ep, struct sdr_fec_job *job, uint64_t now)
{
	ep->jobs_out--;
	if (job->kind == FEC_ENCODE)
		encode_done(ep, job);
	else
		decode_done(ep, job, now);
	job_put(ep, job);
	collect_done(ep);	/* a decode may have completed its message */
	reset_settle(ep, now);	/* the old peer's last work may be back */
}

/* Bit @p seq of the delivered record (dlv): 1 << (seq mod 32) of its word. */
static uint32_t *
dlv_word(struct sdr_ep *ep, uint64_t seq, uint32_t *bit)
{
	*bit = 1u << (seq % 32);
	return &ep->dlv[seq / 32 % SDR_CTRL_MAX_WORDS];
}

/* Whether the record says message @p seq was delivered. */
static int
dlv_has(const struct sdr_ep *ep, uint64_t seq)
{
	return ep->dlv[seq / 32 % SDR_CTRL_MAX_WORDS] >> (seq % 32) & 1;
}

/* The receive of message @p seq ended (@p ok: delivered): into the record. */
static void
note_delivered(struct sdr_ep *ep, uint64_t seq, int ok)
{
	uint32_t bit, *w;

	if (seq < ep->dlv_floor || seq + SDR_CTRL_MAX_BITS <= ep->dlv_hi)
		return;		/* of a peer before, or older than the record keeps */
	if (seq >= ep->dlv_hi + SDR_CTRL_MAX_BITS) {
		memset(ep->dlv, 0, sizeof(ep->dlv));
		ep->dlv_hi = seq;
	}
	for (; ep->dlv_hi <= seq; ep->dlv_hi++) {	/* numbers skipped: not delivered */
		w = dlv_word(ep, ep->dlv_hi, &bit);
		*w &= ~bit;
	}
	w = dlv_word(ep, seq, &bit);
	*w = ok ? *w | bit : *w & ~bit;
}

static void
push_done(struct sdr_ep *ep, const struct sdr_rel_done *d, int is_recv)
{
	struct sdr_ep_done *e;

	if (ep->ndone == ep->done_cap)
		return;	/* cannot happen: send and recv keep room for every message in flight */
	e = &ep->done[(ep->done_head + ep->ndone) % ep->done_cap];
	ep->ndone++;
	*e = (struct sdr_ep_done){
		.is_recv = (uint8_t)is_recv, .status = (uint8_t)d->status, .slot = d->slot,
		.cookie = d->cookie, .seq = d->seq, .start_ns = d->start_ns, .first_ns = d->first_ns,
		.end_ns = d->end_ns,
		.retransmitted = d->retransmitted, .decoded = d->decoded, .fallback = d->fallback,
	};
	if (is_recv) {
		ep->counters[d->status == SDR_DONE_OK ? SDR_EP_RECV_OK : SDR_EP_RECV_FAILED]++;
		note_delivered(ep, d->seq, d->status == SDR_DONE_OK);
	} else
		ep->counters[d->status == SDR_DONE_OK ? SDR_EP_SEND_OK : SDR_EP_SEND_FAILED]++;
}

/*
 * The next send completion, held back while encodes of its message are out or frames of
 * it may still be read (zero-copy output): they read the message's buffer, which is the
 * application's again after its completion. No new send starts while one is held: its
 * context would be reused.
 */
static int
next_tx_done(struct sdr_ep *ep, struct sdr_rel_done *d)
{
	if (!ep->held) {
		if (!rel_tx_poll_done(ep->rtx, &ep->held_tx))
			return 0;
		/* nothing more of it needs to go out, even while its completion waits */
		if (ep->job_active && ep->job_seq == ep->held_tx.seq)
			ep->job_active = 0;
	}
	ep->held = 1;
	if (ep->enc_out != NULL && ep->enc_out[ep->held_tx.ctx] != 0)
		return 0;
	if (ep->cfg.held != NULL && ep->cfg.held(ep->cfg.held_arg, ep->held_tx.ctx)) {
		/* a frame still reads its buffer (zero-copy output) */
		if (!ep->held_frames)
			ep->counters[SDR_EP_SEND_HELD]++;
		ep->held_frames = 1;
		return 0;
	}
	ep->held = 0;
	ep->held_frames = 0;
	*d = ep->held_tx;
	return 1;
}

static void
collect_done(struct sdr_ep *ep)
{
	struct sdr_rx_msg_info info;
	struct sdr_rel_done d;

	while (next_tx_done(ep, &d)) {
		struct ep_send *s = &ep->sends[d.ctx];

		if (ep->txc.ec)
			for (uint32_t sub = 0; sub * ep->txc.k < s->msg.nchunks; sub++)
				release_par(ep, d.ctx, sub);
		sdr_tx_msg_retire(ep->tx, &s->msg);
		s->msg.seq = UINT64_MAX;
		push_done(ep, &d, 0);
	}
	/* receive completions, in order, each once no decode reads its buffer any more */
	while (ep->n_held_rx && ep->rx_out[ep->held_rx[ep->held_rx_head].slot] == 0) {
		push_done(ep, &ep->held_rx[ep->held_rx_head], 1);
		ep->held_rx_head = (ep->held_rx_head + 1) % ep->cfg.attr.max_inflight;
		ep->n_held_rx--;
	}
	while (rel_rx_poll_done(ep->rrx, &d)) {
		/* a failed receive takes no packet from now on: no copy starts into a buffer
		 * the application holds as failed (the ones out are waited for, below) */
		if (d.status != SDR_DONE_OK && sdr_rx_msg_info(ep->rx, d.slot, &info) == 0 &&
		    info.seq == d.seq)
			sdr_rx_close(ep->rx, d.slot);
		if ((ep->n_held_rx || ep->rx_out[d.slot] != 0) &&
		    ep->n_held_rx < ep->cfg.attr.max_inflight) {
			ep->held_rx[(ep->held_rx_head + ep->n_held_rx++) %
				    ep->cfg.attr.max_inflight] = d;
			continue;
		}
		push_done(ep, &d, 1);
	}
}

/* A control message as it goes out: stamped with both tags, encoded, with its MAC.
 * @return its length, or -1. */
static int
ctrl_bytes(struct sdr_ep *ep, const struct sdr_ctrl *c, uint8_t payload[SDR_EP_CTRL_MAX])
{
	struct sdr_ctrl t = *c;
	int n;

	sdr_peer_stamp(&ep->hs, &t);
	n = sdr_ctrl_encode(&t, payload, SDR_CTRL_MAX_LEN);
	if (n < 0)
		return -1;
	if (ep->cfg.auth) {
		if (sdr_mac_compute(&ep->mac, payload, (size_t)n, payload + n) != 0)
			return -1;
		n += SDR_MAC_LEN;
	}
	return n;
}

/*
 * Where output() puts what it makes: whole frames (sdr_ep_output()), frames whose data
 * payloads stay in the send's buffer (sdr_ep_output_sg(): sg set) or work requests
 * (sdr_ep_output_wr(): wr set, no frames).
 */
struct ep_sink {
	uint8_t *const *frames;
	uint32_t cap;
	uint16_t *lens;
	struct sdr_ep_frame *sg;
	int sg_deferred;	/* sg: data frames' ICRC left to sdr_ep_frame_tail() */
	struct sdr_ep_wr *wr;
};

/* Control message @p c as output @p i of the sink. @return 1, or 0 if it cannot be made. */
static uint32_t
emit_ctrl(struct sdr_ep *ep, const struct ep_sink *k, uint32_t i, const struct sdr_ctrl *c)
{
	uint8_t payload[SDR_EP_CTRL_MAX];
	int n, l;

	if (k->wr != NULL) {
		struct sdr_ep_wr *w = &k->wr[i];

		n = ctrl_bytes(ep, c, w->msg);
		if (n < 0)
			return 0;
		w->kind = SDR_EP_WR_SEND;
		w->copy = 0;
		w->dqpn = sdr_conn_remote_ctrl_qpn(&ep->cfg.attr);
		w->addr = w->msg;
		w->len = (uint32_t)n;
	} else {
		struct roce_pkt pkt = {
			.opcode = ROCE_OP_UC_SEND_ONLY,
			.dqpn = sdr_conn_remote_ctrl_qpn(&ep->cfg.attr),
			.psn = ep->ctrl_psn & 0xFFFFFF,
			.udp_sport = ep->ctrl_sport,
		};

		uint8_t *f = k->frames[i];
		struct roce_icrc_rest rest;

		n = ctrl_bytes(ep, c, payload);
		if (n < 0)
			return 0;
		if (ep->ctrl_tmpl_ok &&
		    k->cap >= ep->ctrl_tmpl.hdr_len + (unsigned int)n + 3 + ROCE_ICRC_LEN) {
			/* the headers (their writes may run past them: the message goes after),
			 * the message, then the ICRC over it */
			l = roce_tmpl_headers_sg(&ep->ctrl_tmpl, f, k->cap, &pkt, (uint32_t)n, &rest);
			if (l < 0)
				return 0;
			memcpy(f + l, payload, (size_t)n);
			l += n + (int)roce_icrc_rest_tail(&rest, f + l, (uint32_t)n, f + l + n);
		} else {
			l = roce_build(f, k->cap, &ep->cfg.path, &pkt, payload, (uint32_t)n);
			if (l < 0)
				return 0;
		}
		k->lens[i] = (uint16_t)l;
		ep->ctrl_psn++;
		if (k->sg != NULL)
			k->sg[i].ext = NULL;
	}
	ep->counters[SDR_EP_CTRL_PKTS_OUT]++;
	return 1;
}

/* Parity chunk index of the job being packetized. */
static uint32_t
job_parity_index(const struct sdr_ep *ep)
{
	return (ep->job.first_pkt - ep->geom.parity_pkt_off) / ep->txc.ppc;
}

/* Data chunks of the submessage whose parity the job carries. */
static uint32_t
sub_data_chunks(const struct sdr_ep *ep)
{
	uint32_t first = ep->job_sub * ep->txc.k, n = ep->sends[ep->job_ctx].msg.nchunks;

	return n - first < ep->txc.k ? n - first : ep->txc.k;
}

/* Start packetizing a unit the sender state machine chose. */
static void
start_unit(struct sdr_ep *ep, const struct rel_tx_unit *u)
{
	struct ep_send *s = &ep->sends[u->ctx];
	uint32_t ppc = ep->txc.ppc;

	if (u->kind == REL_UNIT_ENCODE) {
		request_encode(ep, u->ctx, u->seq, u->index);
		return;
	}
	/* the R_Key of the peer's receive for it: fixed (set at the start), or derived from both
	 * tags once, before its first unit (a derived key is never 0) */
	if (s->msg.rkey == 0)
		s->msg.rkey = sdr_rkeys_get(&ep->rk_send, s->msg.seq);
	ep->job_ctx = u->ctx;
	ep->job_seq = u->seq;
	ep->job_parity = u->kind == REL_UNIT_PARITY;
	if (ep->job_parity) {
		uint32_t sub = u->index / ep->txc.m, j = u->index % ep->txc.m;

		ep->job_sub = sub;
		if (s->par_buf[sub] < 0 ||
		    sdr_tx_job_parity(ep->tx, &ep->job, &s->msg, tx_par_chunk(ep, s->par_buf[sub], j),
				      u->index * ppc, ppc) != 0)
			return;	/* cannot happen: parity goes out only after its encode */
	} else {
		uint32_t first = u->index * ppc, n = s->msg.npkts - first < ppc ?
						   s->msg.npkts - first : ppc;

		if (sdr_tx_job_data(&ep->job, &s->msg, first, n) != 0)
			return;
	}
	ep->job_active = 1;
}

/* Outputs [out, n) from the job being packetized, into the sink. @return how many. */
static uint32_t
emit_job(struct sdr_ep *ep, const struct ep_sink *k, uint32_t out, uint32_t n)
{
	uint32_t want = n - out < 64 ? n - out : 64, got;

	if (k->wr != NULL) {
		struct sdr_tx_wr t[64];

		got = sdr_tx_build_wr(ep->tx, &ep->job, t, want);
		for (uint32_t i = 0; i < got; i++) {
			struct sdr_ep_wr *w = &k->wr[out + i];

			w->kind = SDR_EP_WR_WRITE_IMM;
			w->copy = ep->job_parity;
			w->hold = ep->job_ctx;
			w->dqpn = t[i].pkt.dqpn;
			w->imm = t[i].pkt.imm;
			w->rkey = t[i].pkt.rkey;
			w->va = t[i].pkt.va;
			w->addr = t[i].payload;
			w->len = t[i].payload_len;
		}
	} else if (k->sg != NULL && !ep->job_parity) {
		struct sdr_tx_frag f[64];

		if (k->sg_deferred)
			got = sdr_tx_headers_sg(ep->tx, &ep->job, k->frames + out, k->cap, f, want);
		else
			got = sdr_tx_build_sg(ep->tx, &ep->job, k->frames + out, k->cap, f, want);
		for (uint32_t i = 0; i < got; i++) {
			struct sdr_ep_frame *e = &k->sg[out + i];

			e->ext = f[i].payload;
			e->ext_len = f[i].payload_len;
			e->hold = ep->job_ctx;
			k->lens[out + i] = f[i].hdr_len;
			e->tail_len = f[i].tail_len;
			e->tail_ready = !k->sg_deferred;
			if (k->sg_deferred)
				e->icrc = f[i].icrc;
			else
				memcpy(e->tail, f[i].tail, sizeof(e->tail));
		}
	} else {
		got = sdr_tx_build(ep->tx, &ep->job, k->frames + out, k->cap, k->lens + out,
				   n - out);
		for (uint32_t i = 0; k->sg != NULL && i < got; i++)
			k->sg[out + i].ext = NULL;
	}
	return got;
}

/* What sdr_ep_output(), _sg() and _wr() make, into the sink. */
static uint32_t
output(struct sdr_ep *ep, uint64_t now, const struct ep_sink *k, uint32_t n)
{
	struct rel_tx_unit u;
	struct sdr_ctrl c;
	uint32_t out = 0;

	while (out < n && sdr_peer_next(&ep->hs, now, &c)) {
		hello_fill(ep, &c);
		out += emit_ctrl(ep, k, out, &c);
	}
	if (out < n && ep->hello_ask && sdr_peer_ready(&ep->hs) && now >= ep->hello_ask_ns) {
		/* ready, but no HELLO of the peer's came (hello_scheme()): ours asks for one */
		sdr_zero(&c, sizeof(c));
		c.type = SDR_CTRL_HELLO;
		sdr_peer_stamp(&ep->hs, &c);
		hello_fill(ep, &c);
		out += emit_ctrl(ep, k, out, &c);
		ep->hello_ask_ns = now + sdr_rel_rto(&ep->cfg.rel);
		ep->counters[SDR_EP_HELLO_ASKS]++;
	}
	if (!sdr_peer_ready(&ep->hs)) {
		/* nobody to tell yet: CTS repeat, and rekey() sends them again at once */
		while (rel_rx_next_ctrl(ep->rrx, now, &c) || rel_tx_next_ctrl(ep->rtx, now, &c))
			ep->counters[SDR_EP_CTRL_HELD]++;
	}
	while (out < n && rel_rx_next_ctrl(ep->rrx, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	while (out < n && rel_tx_next_ctrl(ep->rtx, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	while (out < n && sdr_peer_ready(&ep->hs) && next_sync(ep, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	if (out < n && sdr_peer_ready(&ep->hs) && next_report(ep, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	while (out < n && sdr_peer_ready(&ep->hs) && next_paths(ep, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	if (out < n && sdr_peer_ready(&ep->hs) && next_scheme(ep, now, &c))
		out += emit_ctrl(ep, k, out, &c);
	if (ep->rxc.ec)
		run_decodes(ep, now);
	collect_done(ep);
	if (ep->txc.ec)
		retry_encodes(ep);
	while (out < n) {
		if (ep->job_active) {
			uint32_t got = emit_job(ep, k, out, n);

			ep->counters[ep->job_parity ? SDR_EP_PARITY_PKTS_OUT : SDR_EP_DATA_PKTS_OUT] += got;
			out += got;
			if (sdr_tx_job_left(&ep->job) == 0 || got == 0) {
				ep->job_active = 0;
				/* the last parity chunk of a submessage is out: recycle its buffer */
				if (ep->job_parity && job_parity_index(ep) % ep->txc.m + 1 ==
				    sdr_rel_sub_parity(&ep->cfg.rel.scheme, sub_data_chunks(ep))) {
					release_par(ep, ep->job_ctx, ep->job_sub);
					/* work requests read it still: the caller copies it
					 * before the next encode may write it (the next call) */
					if (k->wr != NULL)
						break;
				}
			}
			continue;
		}
		if (!rel_tx_next(ep->rtx, now, &u))
			break;
		start_unit(ep, &u);
	}
	if (ep->psel_on && out)	/* round-trip probes of the paths: frames built now */
		path_sel_sent(&ep->psel, sdr_tx_psns(ep->tx), now);
	/*
	 * Stall clocks run on the live selector between reports too: when every path is dead
	 * no PATHS report comes, and a decision's copy alone would restart them each time.
	 */
	if (ep->psel_on && now >= ep->psel_tick_ns) {
		path_sel_update(&ep->psel, sdr_tx_psns(ep->tx), now);
		ep->psel_tick_ns = now + ep->psel.cfg.fail_ns / 4;
	}
	/*
	 * Completions that came of this call (a deadline that passed), at once, unless frames
	 * of this call may point into a send's buffer: those count in its hold (cfg.held) only
	 * once the caller has them, so the next call (or sdr_ep_poll()) delivers them.
	 */
	if (k->sg == NULL && k->wr == NULL)
		collect_done(ep);
	reset_settle(ep, now);
	return out;
}

uint32_t
sdr_ep_output(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames, uint32_t cap,
	      uint16_t *lens, uint32_t n)
{
	const struct ep_sink k = { .frames = frames, .cap = cap, .lens = lens };

	return output(ep, now, &k, n);
}

/* sdr_ep_output_sg() and _deferred(). */
static uint32_t
output_sg(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames, uint32_t cap,
	  struct sdr_ep_frame *out, uint32_t n, int deferred)
{
	uint16_t lens[SDR_EP_SG_MAX];
	const struct ep_sink k = { .frames = frames, .cap = cap, .lens = lens, .sg = out,
				   .sg_deferred = deferred };
	uint32_t got;

	/* one output() only: a second would look at the holds before the caller has counted
	 * the first one's frames in them */
	got = output(ep, now, &k, n < SDR_EP_SG_MAX ? n : SDR_EP_SG_MAX);
	for (uint32_t i = 0; i < got; i++)
		out[i].len = lens[i];
	return got;
}

uint32_t
sdr_ep_output_sg(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames, uint32_t cap,
		 struct sdr_ep_frame *out, uint32_t n)
{
	return output_sg(ep, now, frames, cap, out, n, 0);
}

uint32_t
sdr_ep_output_sg_deferred(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames, uint32_t cap,
			  struct sdr_ep_frame *out, uint32_t n)
{
	return output_sg(ep, now, frames, cap, out, n, 1);
}

uint32_t
sdr_ep_output_wr(struct sdr_ep *ep, uint64_t now, struct sdr_ep_wr *wr, uint32_t n)
{
	const struct ep_sink k = { .wr = wr };

	return output(ep, now, &k, n);
}

uint64_t
sdr_ep_next_time(struct sdr_ep *ep, uint64_t now)
{
	int job_free = !ep->cfg.fec_jobs || ep->job_free != UINT32_MAX;
	uint64_t t, r;

	if (ep->job_active || ep->nready)
		return now;
	/* back on the configured scheme after a restart, just now: CTS to send, or sends */
	if ((ep->reset_tx || ep->reset_rx) && reset_settle(ep, now))
		return now;
	/* a completion held for a FEC job that has come back: collect_done() delivers it */
	if ((ep->held && (ep->enc_out == NULL || ep->enc_out[ep->held_tx.ctx] == 0) &&
	     (ep->cfg.held == NULL || !ep->cfg.held(ep->cfg.held_arg, ep->held_tx.ctx))) ||
	    (ep->n_held_rx && ep->rx_out[ep->held_rx[ep->held_rx_head].slot] == 0))
		return now;
	/* waits that only a returning FEC job or a freed parity buffer ends are not due now:
	 * the one ends with sdr_ep_fec_done(), the other with output or input */
	if ((ep->n_enc_wait && ep->n_tx_par_free && job_free) || (ep->n_dec_wait && job_free))
		return now;
	t = rel_tx_next_time(ep->rtx, now);
	r = rel_rx_next_time(ep->rrx, now);
	if (r < t)
		t = r;
	r = sdr_peer_next_time(&ep->hs, now);
	if (r < t)
		t = r;
	if (ep->hello_ask && sdr_peer_ready(&ep->hs) && ep->hello_ask_ns < t)
		t = ep->hello_ask_ns > now ? ep->hello_ask_ns : now;
	if (!sdr_peer_ready(&ep->hs))
		return t;	/* SYNC waits for the handshake */
	if (ep->sync_owed && !rel_tx_resetting(ep->rtx) && !rel_rx_resetting(ep->rrx))
		return now;
	if (ep->sync_wait && ep->sync_next_ns < t)
		t = ep->sync_next_ns > now ? ep->sync_next_ns : now;
	/* a scheme change: the answer we owe, our question once nothing is in flight */
	if (ep->sw_owed || (ep->sw_state == SW_DRAIN && rel_tx_inflight(ep->rtx) == 0 &&
			    !ep->jobs_out && !ep->n_enc_wait && !ep->held))
		return now;
	if (ep->sw_state == SW_ASK && ep->sw_next_ns < t)
		t = ep->sw_next_ns > now ? ep->sw_next_ns : now;
	return t;
}

int
sdr_ep_poll(struct sdr_ep *ep, struct sdr_ep_done *d)
{
	collect_done(ep);
	if (ep->ndone == 0)
		return 0;
	*d = ep->done[ep->done_head];
	ep->done_head = (ep->done_head + 1) % ep->done_cap;
	ep->ndone--;
	return 1;
}

int
sdr_ep_in_flight(const struct sdr_ep *ep)
{
	return rel_tx_inflight(ep->rtx) != 0 || sdr_rx_posted(ep->rx) != 0 || ep->ndone != 0 ||
	       ep->held || ep->n_held_rx != 0 || ep->nready != 0 || ep->jobs_out != 0 ||
	       ep->copies_out != 0;
}

int
sdr_ep_busy(const struct sdr_ep *ep)
{
	return sdr_ep_in_flight(ep) || ep->sw_state != SW_NONE || ep->reset_tx || ep->reset_rx;
}

/* The message numbers a HELLO's window can say delivered (after the tag it leads with). */
#define HO_BITS	((SDR_CTRL_MAX_WORDS - SDR_CTRL_HELLO_TAG_WORDS) * 32)

int
sdr_ep_take_over(struct sdr_ep *ep, const struct sdr_ep *old)
{
	const struct roce_path *a = &ep->cfg.path, *b = &old->cfg.path;
	uint64_t lo, hi = old->dlv_hi;

	if (a->ip_version != b->ip_version || memcmp(a->src_ip, b->src_ip, 16) != 0 ||
	    memcmp(a->dst_ip, b->dst_ip, 16) != 0 ||
	    ep->cfg.attr.local_qpn != old->cfg.attr.local_qpn ||
	    ep->cfg.attr.remote_qpn != old->cfg.attr.remote_qpn)
		return -EINVAL;	/* another connection: its peer must not learn this one's tag */
	if (ep->hs.peer != 0 || ep->counters[SDR_EP_CTRL_PKTS_OUT] != 0 ||
	    ep->counters[SDR_EP_CTRL_PKTS_IN] != 0)
		return -EINVAL;
	if (!sdr_peer_ready(&old->hs) || sdr_ep_busy(old))
		return -EBUSY;
	sdr_peer_expect(&ep->hs, old->hs.peer);
	ep->ho_peer = old->hs.peer;
	/* the window: old's tag, then from the oldest delivered message the record keeps
	 * and the window can say, up to dlv_hi */
	lo = hi - old->dlv_floor > HO_BITS ? hi - HO_BITS : old->dlv_floor;
	while (lo < hi && !dlv_has(old, lo))
		lo++;
	if (lo == hi)
		return 0;	/* nothing delivered to tell of */
	memset(ep->ho_win, 0, sizeof(ep->ho_win));
	ep->ho_win[0] = (uint32_t)(old->hs.local >> 32);
	ep->ho_win[1] = (uint32_t)old->hs.local;
	ep->ho_start = (uint32_t)lo;
	ep->ho_words = (uint8_t)(SDR_CTRL_HELLO_TAG_WORDS + (hi - lo + 31) / 32);
	for (uint64_t q = lo; q < hi; q++)
		if (dlv_has(old, q))
			ep->ho_win[SDR_CTRL_HELLO_TAG_WORDS + (q - lo) / 32] |=
				1u << (31 - (q - lo) % 32);
	return 0;
}

int
sdr_ep_recv_info(const struct sdr_ep *ep, uint32_t slot, struct sdr_rx_msg_info *info)
{
	return sdr_rx_msg_info(ep->rx, slot, info);
}

int
sdr_ep_recv_imm(const struct sdr_ep *ep, uint32_t slot, uint32_t *imm)
{
	return sdr_rx_imm_get(ep->rx, slot, imm);
}

int
sdr_ep_recv_chunk_pkts(const struct sdr_ep *ep, uint32_t slot, uint32_t chunk, uint64_t *out)
{
	return sdr_rx_view_expand(ep->rx, slot, chunk, out);
}

uint64_t
sdr_ep_next_recv_seq(const struct sdr_ep *ep)
{
	return sdr_rx_next_seq(ep->rx);
}

const struct sdr_conn_geom *
sdr_ep_geom(const struct sdr_ep *ep)
{
	return &ep->geom;
}

const struct sdr_rx *
sdr_ep_rx(const struct sdr_ep *ep)
{
	return ep->rx;
}

const uint64_t *
sdr_ep_counters(const struct sdr_ep *ep)
{
	return ep->counters;
}

void
sdr_ep_auto_changed(struct sdr_ep *ep, uint64_t now)
{
	sdr_auto_changed(&ep->autoe, now);
}

void
sdr_ep_auto_refused(struct sdr_ep *ep, const struct sdr_scheme *s, uint64_t now)
{
	sdr_auto_refused(&ep->autoe, s, now);
}

const struct sdr_auto *
sdr_ep_auto(const struct sdr_ep *ep)
{
	return &ep->autoe;
}

uint64_t
sdr_ep_rto(const struct sdr_ep *ep, uint64_t *rtt)
{
	return rel_tx_rto(ep->rtx, rtt);
}

uint64_t
sdr_ep_rx_rto(const struct sdr_ep *ep, uint64_t *rtt)
{
	return rel_rx_rto(ep->rrx, rtt);
}

const struct path_sel *
sdr_ep_paths(const struct sdr_ep *ep)
{
	/* a connection that only receives reports what arrives; its peer chooses */
	return ep->psel_on && ep->cfg.attr.dir != SDR_DIR_RECV ? &ep->psel : NULL;
}

const uint32_t *
sdr_ep_tx_psns(const struct sdr_ep *ep)
{
	return sdr_tx_psns(ep->tx);
}

const struct path_est *
sdr_ep_path(const struct sdr_ep *ep)
{
	return rel_tx_path(ep->rtx);
}

const uint64_t *
sdr_ep_rx_counters(const struct sdr_ep *ep)
{
	return sdr_rx_counters(ep->rx);
}

const uint64_t *
sdr_ep_tx_counters(const struct sdr_ep *ep)
{
	return sdr_tx_counters(ep->tx);
}

const uint64_t *
sdr_ep_rel_tx_counters(const struct sdr_ep *ep)
{
	return rel_tx_counters(ep->rtx);
}

const uint64_t *
sdr_ep_rel_rx_counters(const struct sdr_ep *ep)
{
	return rel_rx_counters(ep->rrx);
}

unsigned int
sdr_ep_counter_groups(const struct sdr_ep *ep, struct sdr_ep_counter_group g[SDR_EP_NGROUPS])
{
	g[0] = (struct sdr_ep_counter_group){ &sdr_ep_counter_table, ep->counters };
	g[1] = (struct sdr_ep_counter_group){ &sdr_rx_counter_table, sdr_rx_counters(ep->rx) };
	g[2] = (struct sdr_ep_counter_group){ &sdr_tx_counter_table, sdr_tx_counters(ep->tx) };
	g[3] = (struct sdr_ep_counter_group){ &rel_tx_counter_table, rel_tx_counters(ep->rtx) };
	g[4] = (struct sdr_ep_counter_group){ &rel_rx_counter_table, rel_rx_counters(ep->rrx) };
	return SDR_EP_NGROUPS;
}

uint64_t
sdr_ep_ctrl_err_count(const struct sdr_ep *ep, int err)
{
	err = err < 0 ? -err : err;
	return err < SDR_CTRL_E_COUNT ? ep->ctrl_err[err] : 0;
}

int
sdr_ep_ready(const struct sdr_ep *ep)
{
	return sdr_peer_ready(&ep->hs);
}

int
sdr_ep_rx_held(const struct sdr_ep *ep)
{
	return ep->rx_refused ? 1 : ep->reset_rx ? 2 : 0;
}

uint64_t
sdr_ep_tag(const struct sdr_ep *ep)
{
	return ep->hs.local;
}

uint64_t
sdr_ep_peer_tag(const struct sdr_ep *ep)
{
	return ep->hs.peer;
}

const struct sdr_ep_cfg *
sdr_ep_config(const struct sdr_ep *ep)
{
	return &ep->cfg;
}
