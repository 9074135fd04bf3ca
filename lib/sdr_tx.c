/* SPDX-License-Identifier: BSD-3-Clause */
/* Send side of an SDR connection: message ids, generations, packetizer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crc_copy.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "sdr_tx.h"

static const struct sdr_counter_def counter_defs[SDR_TX_NCOUNTERS] = {
	SDR_TX_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table sdr_tx_counter_table = {
	.group = "send",
	.doc = "the packetizer of a connection: messages started and frames built",
	.n = SDR_TX_NCOUNTERS,
	.defs = counter_defs,
};

const char *
sdr_tx_counter_name(enum sdr_tx_counter c)
{
	return sdr_counter_name(&sdr_tx_counter_table, (unsigned int)c);
}

struct sdr_tx {
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	struct roce_path path;
	struct roce_tmpl tmpl;		/* the headers every data frame shares */
	uint64_t next_seq;
	uint32_t inflight;
	uint32_t next_ch;
	uint32_t chunk_shift;	/* the chunks of the messages started now (sdr_tx_set_chunk_shift) */
	uint8_t *busy;		/* per slot: 1 while its message is in flight */
	uint32_t *psn;		/* per data QPN (generation * channels + channel) */
	uint16_t *sport;	/* per data QPN: its UDP source port (sdr_tx_steer), or NULL */
	int crc_copy;		/* sdr_tx_build() copies a payload as it takes its CRC */
	uint64_t counters[SDR_TX_NCOUNTERS];
};

struct sdr_tx *
sdr_tx_create(const struct sdr_conn_attr *attr, const struct roce_path *path)
{
	struct sdr_tx *tx = calloc(1, sizeof(*tx));

	if (tx == NULL)
		return NULL;
	tx->attr = *attr;
	tx->path = *path;
	if (sdr_conn_geometry(attr, &tx->geom) != 0 ||
	    roce_tmpl_init(&tx->tmpl, path, ROCE_OP_UC_RDMA_WRITE_ONLY_IMM) != 0)
		goto fail;
	/* every data and parity frame but a message's last carries one MTU: its ICRC in two
	 * independent parts where the CPU gains by it (else chained, the same bytes) */
	(void)roce_tmpl_set_payload_len(&tx->tmpl, attr->mtu);
	tx->crc_copy = crc_copy_fused();
	tx->busy = calloc(tx->geom.nslots, 1);
	tx->psn = calloc(tx->geom.ndata_qpns, sizeof(uint32_t));
	if (tx->busy == NULL || tx->psn == NULL)
		goto fail;
	return tx;
fail:
	sdr_tx_destroy(tx);
	return NULL;
}

void
sdr_tx_destroy(struct sdr_tx *tx)
{
	if (tx == NULL)
		return;
	free(tx->busy);
	free(tx->psn);
	free(tx->sport);
	free(tx);
}

int
sdr_tx_steer(struct sdr_tx *tx, const uint8_t key[RSS_KEY_LEN], unsigned int queues,
	     unsigned int queue)
{
	uint16_t *sp = calloc(tx->geom.ndata_qpns, sizeof(uint16_t));

	if (sp == NULL)
		return -ENOMEM;
	for (uint32_t q = 0; q < tx->geom.ndata_qpns; q++) {
		sp[q] = rss_pick_sport(key, tx->path.ip_version, tx->path.src_ip, tx->path.dst_ip,
				       ROCE_UDP_PORT, roce_qpn_sport(tx->attr.remote_qpn + q),
				       queues, queue);
		if (sp[q] == 0) {
			free(sp);
			return -EINVAL;
		}
	}
	free(tx->sport);
	tx->sport = sp;
	return 0;
}

int
sdr_tx_set_sport(struct sdr_tx *tx, uint32_t q, uint16_t sport)
{
	if (q >= tx->geom.ndata_qpns)
		return -EINVAL;
	if (tx->sport == NULL && (tx->sport = calloc(tx->geom.ndata_qpns, sizeof(uint16_t))) == NULL)
		return -ENOMEM;
	tx->sport[q] = sport;
	return 0;
}

uint16_t
sdr_tx_sport(const struct sdr_tx *tx, uint32_t q)
{
	if (tx->sport != NULL && q < tx->geom.ndata_qpns && tx->sport[q] != 0)
		return tx->sport[q];
	return tx->path.udp_sport ? tx->path.udp_sport : roce_qpn_sport(tx->attr.remote_qpn + q);
}

const uint32_t *
sdr_tx_psns(const struct sdr_tx *tx)
{
	return tx->psn;
}

const struct sdr_conn_geom *
sdr_tx_geom(const struct sdr_tx *tx)
{
	return &tx->geom;
}

int
sdr_tx_msg_start(struct sdr_tx *tx, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		 struct sdr_tx_msg *msg)
{
	uint32_t id = sdr_conn_seq_slot(&tx->attr, tx->next_seq);

	if (len > tx->attr.max_msg_size)
		return -EMSGSIZE;
	if (tx->inflight >= tx->attr.max_inflight || tx->busy[id]) {
		tx->counters[SDR_TX_SLOT_BUSY]++;
		return -EAGAIN;
	}
	msg->seq = tx->next_seq++;
	msg->msg_id = id;
	msg->gen = sdr_conn_seq_gen(&tx->attr, msg->seq);
	msg->buf = buf;
	msg->len = len;
	msg->npkts = sdr_conn_msg_pkts(&tx->geom, len);
	msg->nchunks = sdr_conn_msg_chunks_at(&tx->geom, len, tx->chunk_shift);
	msg->user_imm = user_imm;
	msg->rkey = tx->attr.remote_rkey;	/* a fixed key; the endpoint derives it otherwise */
	tx->busy[id] = 1;
	tx->inflight++;
	tx->counters[SDR_TX_MSGS_STARTED]++;
	return 0;
}

int
sdr_tx_set_chunk_shift(struct sdr_tx *tx, uint32_t shift)
{
	if (shift > tx->geom.max_chunk_shift)
		return -EINVAL;
	tx->chunk_shift = shift;
	return 0;
}

void
sdr_tx_msg_retire(struct sdr_tx *tx, const struct sdr_tx_msg *msg)
{
	if (!tx->busy[msg->msg_id])
		return;
	tx->busy[msg->msg_id] = 0;
	tx->inflight--;
	tx->counters[SDR_TX_MSGS_RETIRED]++;
}

uint32_t
sdr_tx_inflight(const struct sdr_tx *tx)
{
	return tx->inflight;
}

void
sdr_tx_skip_to(struct sdr_tx *tx, uint64_t seq)
{
	if (seq > tx->next_seq)
		tx->next_seq = seq;
}

int
sdr_tx_job_data(struct sdr_tx_job *job, const struct sdr_tx_msg *msg, uint32_t first_pkt,
		uint32_t npkts)
{
	if (npkts == 0 || first_pkt >= msg->npkts || npkts > msg->npkts - first_pkt)
		return -EINVAL;
	job->msg = msg;
	job->first_pkt = first_pkt;
	job->npkts = npkts;
	job->next = 0;
	job->src = NULL;	/* resolved per packet from msg->buf by sdr_tx_build() */
	return 0;
}

int
sdr_tx_job_parity(const struct sdr_tx *tx, struct sdr_tx_job *job, const struct sdr_tx_msg *msg,
		  const uint8_t *parity, uint32_t first_ppkt, uint32_t npkts)
{
	if (tx->geom.max_parity_pkts == 0 || npkts == 0 ||
	    first_ppkt >= tx->geom.max_parity_pkts || npkts > tx->geom.max_parity_pkts - first_ppkt)
		return -EINVAL;
	job->msg = msg;
	job->src = parity;
	job->first_pkt = tx->geom.parity_pkt_off + first_ppkt;
	job->npkts = npkts;
	job->next = 0;
	return 0;
}

uint32_t
sdr_tx_max_frame(const struct sdr_tx *tx)
{
	return roce_build_frame_len(&tx->path, ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, tx->attr.mtu);
}

/*
 * Where a burst of a job stands: what its packets share, worked out once per burst (the
 * channel's QPN base, the message's address and immediate, the payload's base), so that a
 * packet costs a few additions; the counters are added once at the end (cursor_done()).
 */
struct cursor {
	const uint8_t *src;	/* the job's payloads: the message buffer or the parity */
	uint32_t off0;		/* the packet at src: 0, or the parity's first */
	uint64_t va;		/* the message slot's address */
	uint32_t qi0;		/* its generation's first data QPN, less attr.remote_qpn */
	uint32_t imm;		/* the immediate's message id part */
	uint32_t omask;		/* the immediate's packet offset field */
	uint32_t frag_sh;	/* where the next packet's fragment of the user immediate is */
	uint32_t frag_end;	/* frag_bits x the fragments: frag_sh wraps there; 0 none */
	uint32_t frag_mask;
	uint32_t last;		/* the message's last packet: the only short one; else ~0 */
	uint32_t pkts;
	uint64_t bytes;
};

static void
cursor_init(const struct sdr_tx *tx, const struct sdr_tx_job *job, struct cursor *c,
	    struct roce_pkt *pkt)
{
	const struct sdr_tx_msg *msg = job->msg;
	const struct sdr_imm_split *sp = &tx->attr.split;

	c->src = job->src != NULL ? job->src : msg->buf;
	c->off0 = job->src != NULL ? job->first_pkt : 0;
	c->va = sdr_conn_va(&tx->geom, msg->msg_id, 0);
	c->qi0 = msg->gen * tx->attr.channels;
	c->imm = sdr_imm_pack(sp, msg->msg_id, 0, 0);
	c->omask = (1u << sp->off_bits) - 1;
	/* sdr_imm_frag_of() of the first packet, then one fragment on per packet: no
	 * division per packet */
	c->frag_end = sdr_imm_nfrags(sp) * sp->frag_bits;
	c->frag_sh = c->frag_end ? ((job->first_pkt + job->next) % sdr_imm_nfrags(sp)) *
				    sp->frag_bits : 0;
	c->frag_mask = (1u << sp->frag_bits) - 1;
	c->last = job->src == NULL ? msg->npkts - 1 : ~0u;
	c->pkts = 0;
	c->bytes = 0;
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
	pkt->rkey = msg->rkey;
}

/* The next packet of a job: its transport fields (those cursor_init() did not set) and
 * where its payload is; then the channel's PSN and the job move on. */
static inline __attribute__((always_inline)) void
next_pkt(struct sdr_tx *tx, struct sdr_tx_job *job, struct cursor *c, struct roce_pkt *pkt,
	 const uint8_t **payload, uint32_t *plen)
{
	const struct sdr_conn_geom *g = &tx->geom;
	const struct sdr_imm_split *sp = &tx->attr.split;
	uint32_t off = job->first_pkt + job->next, qi = c->qi0 + tx->next_ch;
	uint64_t boff = (uint64_t)off << g->mtu_shift;

	*payload = c->src + ((uint64_t)(off - c->off0) << g->mtu_shift);
	*plen = off == c->last ? (uint32_t)(job->msg->len - boff) : 1u << g->mtu_shift;
	pkt->dqpn = tx->attr.remote_qpn + qi;
	pkt->udp_sport = tx->sport != NULL ? tx->sport[qi] : 0;
	pkt->psn = tx->psn[qi];
	pkt->va = c->va + boff;
	pkt->dma_len = *plen;
	pkt->imm = c->imm | (off & c->omask) << sp->frag_bits |
		   (uint32_t)((uint64_t)job->msg->user_imm >> c->frag_sh & c->frag_mask);
	if (c->frag_end != 0) {
		c->frag_sh += sp->frag_bits;
		if (c->frag_sh == c->frag_end)
			c->frag_sh = 0;
	}
	tx->psn[qi] = (tx->psn[qi] + 1) & 0xFFFFFF;
	tx->next_ch = tx->next_ch + 1 == tx->attr.channels ? 0 : tx->next_ch + 1;
	c->pkts++;
	c->bytes += *plen;
	job->next++;
}

static void
cursor_done(struct sdr_tx *tx, const struct cursor *c)
{
	tx->counters[SDR_TX_PKTS_BUILT] += c->pkts;
	tx->counters[SDR_TX_BYTES_BUILT] += c->bytes;
}

/* A frame could not be built: the packet next_pkt() took is given back. */
static void
pkt_unbuilt(struct sdr_tx *tx, struct sdr_tx_job *job, struct cursor *c, uint32_t plen)
{
	uint32_t qi;

	tx->next_ch = (tx->next_ch == 0 ? tx->attr.channels : tx->next_ch) - 1;
	qi = c->qi0 + tx->next_ch;
	tx->psn[qi] = (tx->psn[qi] - 1) & 0xFFFFFF;
	c->pkts--;
	c->bytes -= plen;
	job->next--;
	tx->counters[SDR_TX_BUILD_ERRORS]++;
}

uint32_t
sdr_tx_build(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *frames, uint32_t cap,
	     uint16_t *lens, uint32_t n)
{
	uint32_t built = 0;
	struct roce_pkt pkt;
	struct cursor c;

	cursor_init(tx, job, &c, &pkt);
	while (built < n && job->next < job->npkts) {
		const uint8_t *payload;
		uint32_t plen;
		int hdr;

		next_pkt(tx, job, &c, &pkt, &payload, &plen);
		if (plen >= CRC_COPY_MIN && tx->crc_copy) {
			/* the payload copied in as its CRC is taken: one pass over it */
			int len = roce_tmpl_build_copy(&tx->tmpl, frames[built], cap, &pkt, payload,
						       plen);

			if (len < 0) {
				pkt_unbuilt(tx, job, &c, plen);
				break;
			}
			lens[built++] = (uint16_t)len;
			continue;
		}
		/* a short one: copied, then the frame's ICRC in one call (a CRC call costs
		 * about as much as 100 bytes of data: two would cost more than the pass) */
		hdr = roce_tmpl_headers(&tx->tmpl, frames[built], cap, &pkt, plen);
		if (hdr < 0) {
			pkt_unbuilt(tx, job, &c, plen);
			break;
		}
		memcpy(frames[built] + hdr, payload, plen);
		lens[built] = (uint16_t)roce_build_finish(frames[built], &tx->path,
							  (unsigned int)hdr, plen);
		built++;
	}
	cursor_done(tx, &c);
	return built;
}

/* sdr_tx_build_sg(), and with @p defer sdr_tx_headers_sg(). */
static inline uint32_t
build_sg(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *hdrs, uint32_t cap,
	 struct sdr_tx_frag *out, uint32_t n, int defer)
{
	uint32_t built = 0;
	struct roce_pkt pkt;
	struct cursor c;

	cursor_init(tx, job, &c, &pkt);
	while (built < n && job->next < job->npkts) {
		struct sdr_tx_frag *f = &out[built];
		unsigned int tl;
		int hdr;

		next_pkt(tx, job, &c, &pkt, &f->payload, &f->payload_len);
		if (defer)
			hdr = roce_tmpl_headers_sg(&tx->tmpl, hdrs[built], cap, &pkt,
						   f->payload_len, &f->icrc);
		else
			hdr = roce_tmpl_build_sg(&tx->tmpl, hdrs[built], cap, &pkt, f->payload,
						 f->payload_len, f->tail, &tl);
		if (hdr < 0) {
			pkt_unbuilt(tx, job, &c, f->payload_len);
			break;
		}
		if (defer)
			tl = roce_icrc_rest_len(&f->icrc);
		f->hdr_len = (uint16_t)hdr;
		f->tail_len = (uint8_t)tl;
		built++;
	}
	cursor_done(tx, &c);
	return built;
}

uint32_t
sdr_tx_build_sg(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *hdrs, uint32_t cap,
		struct sdr_tx_frag *out, uint32_t n)
{
	return build_sg(tx, job, hdrs, cap, out, n, 0);
}

uint32_t
sdr_tx_headers_sg(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *hdrs, uint32_t cap,
		  struct sdr_tx_frag *out, uint32_t n)
{
	return build_sg(tx, job, hdrs, cap, out, n, 1);
}

uint32_t
sdr_tx_build_wr(struct sdr_tx *tx, struct sdr_tx_job *job, struct sdr_tx_wr *out, uint32_t n)
{
	uint32_t built = 0;
	struct roce_pkt shared;
	struct cursor c;

	cursor_init(tx, job, &c, &shared);
	while (built < n && job->next < job->npkts) {
		struct sdr_tx_wr *w = &out[built++];

		w->pkt = shared;
		next_pkt(tx, job, &c, &w->pkt, &w->payload, &w->payload_len);
	}
	cursor_done(tx, &c);
	return built;
}

const uint64_t *
sdr_tx_counters(const struct sdr_tx *tx)
{
	return tx->counters;
}
