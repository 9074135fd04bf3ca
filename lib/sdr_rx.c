/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive side of an SDR connection: message table, bitmaps, checked placement. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_opcode.h"
#include "sdr_bitmap.h"
#include "sdr_rel.h"
#include "sdr_rx.h"

static const struct sdr_counter_def counter_defs[SDR_RX_NCOUNTERS] = {
	SDR_RX_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table sdr_rx_counter_table = {
	.group = "receive",
	.doc = "the receive path of a connection: every data packet it is handed is placed or dropped for exactly one reason, then its chunk and message progress",
	.n = SDR_RX_NCOUNTERS,
	.defs = counter_defs,
};

const char *
sdr_rx_counter_name(enum sdr_rx_counter c)
{
	return sdr_counter_name(&sdr_rx_counter_table, (unsigned int)c);
}

/* State of one posted receive; a pool of max_inflight of them is made at create time. */
struct rx_msg {
	uint64_t seq;
	uint8_t *buf;
	uint64_t len;
	uint8_t *parity;
	uint8_t *par_buf;		/* the parity buffer posted with it (even while unused) */
	uint8_t *chunk_bytes;		/* the caller's mirror or own_bytes: per configured chunk */
	uint32_t npkts;
	uint32_t ppc;			/* packets per chunk (the code's chunk shift) */
	uint32_t shift;			/* its chunk shift: 2^shift chunks per mirror byte */
	uint32_t nchunks;
	uint32_t npar_chunks;
	uint32_t npar_pkts;
	uint32_t last_len;		/* payload bytes of the last data packet */
	uint32_t pkts_received;
	uint32_t chunks_done;
	uint32_t par_chunks_done;
	uint32_t imm;
	uint32_t imm_mask;		/* fragments received, bit per fragment index */
	uint32_t imm_need;		/* fragments this message carries */
	uint64_t *pkt_bits;		/* data packets, then parity packets */
	uint16_t *chunk_cnt;		/* packets in per chunk: data, then parity */
	uint64_t *chunk_bits;
	uint8_t *own_bytes;
};

struct rx_slot {
	uint8_t state;			/* enum sdr_slot_state */
	uint8_t gen;
	uint8_t closed;			/* POSTED, but failed: takes no packet (sdr_rx_close()) */
	uint16_t ctx;			/* index into msgs, valid when POSTED or DONE */
	uint32_t rkey;			/* the R_Key its packets must carry; 0: none yet */
	/* the receive released from the slot before this one: its generation and R_Key (0:
	 * none), so that its late packets still make the receiver ACK it again */
	uint8_t prev_gen;
	uint32_t prev_rkey;
};

struct sdr_rx {
	struct sdr_conn_attr attr;
	struct sdr_conn_geom geom;
	uint32_t max_pkts;		/* data + parity packets of the largest message */
	uint32_t max_chunks;
	uint16_t code_k, code_m;	/* the code of messages posted now (0: none) */
	uint32_t code_shift;		/* ... and its chunk shift */
	uint64_t next_seq;
	uint32_t posted;
	uint32_t nfree;
	uint16_t *free_ctx;
	struct rx_slot *slots;
	struct rx_msg *msgs;
	uint64_t counters[SDR_RX_NCOUNTERS];
};

static void
free_msgs(struct sdr_rx *rx)
{
	if (rx->msgs == NULL)
		return;
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		free(rx->msgs[i].pkt_bits);
		free(rx->msgs[i].chunk_cnt);
		free(rx->msgs[i].chunk_bits);
		free(rx->msgs[i].own_bytes);
	}
	free(rx->msgs);
}

void
sdr_rx_destroy(struct sdr_rx *rx)
{
	if (rx == NULL)
		return;
	free_msgs(rx);
	free(rx->slots);
	free(rx->free_ctx);
	free(rx);
}

struct sdr_rx *
sdr_rx_create(const struct sdr_conn_attr *attr)
{
	struct sdr_rx *rx = calloc(1, sizeof(*rx));

	if (rx == NULL)
		return NULL;
	rx->attr = *attr;
	if (sdr_conn_geometry(attr, &rx->geom) != 0 || attr->max_inflight > 65536)
		goto fail;
	rx->max_pkts = rx->geom.max_data_pkts + rx->geom.max_parity_pkts;
	rx->code_k = attr->ec_k;
	rx->code_m = attr->ec_m;
	rx->max_chunks = rx->geom.max_units + rx->geom.max_parity_units;
	rx->slots = calloc(rx->geom.nslots, sizeof(*rx->slots));
	rx->msgs = calloc(attr->max_inflight, sizeof(*rx->msgs));
	rx->free_ctx = calloc(attr->max_inflight, sizeof(*rx->free_ctx));
	if (rx->slots == NULL || rx->msgs == NULL || rx->free_ctx == NULL)
		goto fail;
	for (uint32_t i = 0; i < attr->max_inflight; i++) {
		struct rx_msg *m = &rx->msgs[i];

		m->pkt_bits = calloc(SDR_BITMAP_WORDS(rx->max_pkts), sizeof(uint64_t));
		m->chunk_cnt = calloc(rx->max_chunks, sizeof(uint16_t));
		m->chunk_bits = calloc(SDR_BITMAP_WORDS(rx->max_chunks), sizeof(uint64_t));
		m->own_bytes = calloc(rx->geom.max_data_chunks, 1);
		if (!m->pkt_bits || !m->chunk_cnt || !m->chunk_bits || !m->own_bytes)
			goto fail;
		/* pop order: context 0 first */
		rx->free_ctx[i] = (uint16_t)(attr->max_inflight - 1 - i);
	}
	rx->nfree = attr->max_inflight;
	return rx;
fail:
	sdr_rx_destroy(rx);
	return NULL;
}

const struct sdr_conn_geom *
sdr_rx_geom(const struct sdr_rx *rx)
{
	return &rx->geom;
}

/* The parity of posted message @p m under the current code, its packet state cleared (only
 * what the message uses: reposting a small message stays cheap). */
static void
code_msg(struct sdr_rx *rx, struct rx_msg *m)
{
	m->shift = rx->code_shift;
	m->ppc = sdr_conn_shift_ppc(&rx->geom, m->shift);
	m->nchunks = sdr_conn_msg_chunks_at(&rx->geom, m->len, m->shift);
	m->npar_chunks = m->par_buf && rx->code_k ?
			 sdr_conn_parity_chunks(m->nchunks, rx->code_k, rx->code_m) : 0;
	if (m->npar_chunks * m->ppc > rx->geom.max_parity_pkts)
		m->npar_chunks = 0;	/* (cannot happen: sdr_rx_set_code() checks the fit) */
	m->npar_pkts = m->npar_chunks * m->ppc;
	m->parity = m->npar_chunks ? m->par_buf : NULL;
	sdr_bitmap_zero(m->pkt_bits, m->npkts + m->npar_pkts);
	memset(m->chunk_cnt, 0, (m->nchunks + m->npar_chunks) * sizeof(uint16_t));
	sdr_bitmap_zero(m->chunk_bits, m->nchunks + m->npar_chunks);
}

int
sdr_rx_set_code(struct sdr_rx *rx, uint32_t k, uint32_t m, uint32_t shift)
{
	struct sdr_scheme code = { .kind = SDR_SCHEME_EC_MDS, .k = (uint16_t)k, .m = (uint16_t)m,
				   .chunk_shift = (uint8_t)shift };

	if (shift > rx->geom.max_chunk_shift)
		return -EINVAL;
	if (k != 0 && (m == 0 || k > 255 || m > 255 || !sdr_rel_code_fits(&rx->geom, &code)))
		return -EINVAL;
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		struct rx_slot *s;

		if (rx->msgs[i].pkts_received == 0)
			continue;
		s = &rx->slots[sdr_conn_seq_slot(&rx->attr, rx->msgs[i].seq)];
		if (s->state == SDR_SLOT_POSTED && s->ctx == i)
			return -EBUSY;	/* a message is arriving under the current code */
	}
	rx->code_k = (uint16_t)k;
	rx->code_m = (uint16_t)(k ? m : 0);
	rx->code_shift = shift;
	for (uint32_t i = 0; i < rx->attr.max_inflight; i++) {
		struct rx_slot *s = &rx->slots[sdr_conn_seq_slot(&rx->attr, rx->msgs[i].seq)];

		if (s->state == SDR_SLOT_POSTED && s->ctx == i)
			code_msg(rx, &rx->msgs[i]);
	}
	return 0;
}

int
sdr_rx_post(struct sdr_rx *rx, uint8_t *buf, uint64_t len, uint8_t *parity,
	    uint8_t *chunk_bytes, uint32_t *slot_out)
{
	uint32_t id = sdr_conn_seq_slot(&rx->attr, rx->next_seq);
	struct rx_slot *s = &rx->slots[id];
	struct rx_msg *m;
	uint16_t ctx;

	if (len > rx->attr.max_msg_size)
		return -EMSGSIZE;
	if (rx->nfree == 0 || s->state == SDR_SLOT_POSTED || s->state == SDR_SLOT_DONE)
		return -EAGAIN;
	ctx = rx->free_ctx[--rx->nfree];
	m = &rx->msgs[ctx];
	m->seq = rx->next_seq;
	m->buf = buf;
	m->len = len;
	m->npkts = sdr_conn_msg_pkts(&rx->geom, len);
	m->par_buf = parity;
	code_msg(rx, m);
	m->last_len = (uint32_t)(len - ((uint64_t)(m->npkts - 1) << rx->geom.mtu_shift));
	m->pkts_received = 0;
	m->chunks_done = 0;
	m->par_chunks_done = 0;
	m->imm = 0;
	m->imm_mask = 0;
	m->imm_need = sdr_imm_nfrags(&rx->attr.split);
	if (m->imm_need > m->npkts)
		m->imm_need = m->npkts;
	m->chunk_bytes = chunk_bytes ? chunk_bytes : m->own_bytes;
	memset(m->chunk_bytes, 0, sdr_conn_msg_chunks(&rx->geom, len));

	s->prev_gen = s->gen;
	s->prev_rkey = s->state == SDR_SLOT_RELEASED ? s->rkey : 0;
	s->ctx = ctx;
	s->gen = (uint8_t)sdr_conn_seq_gen(&rx->attr, rx->next_seq);
	s->rkey = rx->attr.local_rkey;	/* a fixed key, or 0 until sdr_rx_set_rkey() */
	s->closed = 0;
	s->state = SDR_SLOT_POSTED;
	rx->next_seq++;
	rx->posted++;
	rx->counters[SDR_RX_POSTS]++;
	*slot_out = id;
	return 0;
}

int
sdr_rx_complete(struct sdr_rx *rx, uint32_t slot)
{
	struct rx_slot *s;

	if (slot >= rx->geom.nslots)
		return -EINVAL;
	s = &rx->slots[slot];
	if (s->state != SDR_SLOT_POSTED && s->state != SDR_SLOT_DONE)
		return -EINVAL;
	s->state = SDR_SLOT_RELEASED;
	rx->free_ctx[rx->nfree++] = s->ctx;
	rx->posted--;
	rx->counters[SDR_RX_COMPLETES]++;
	return 0;
}

int
sdr_rx_close(struct sdr_rx *rx, uint32_t slot)
{
	if (slot >= rx->geom.nslots || rx->slots[slot].state != SDR_SLOT_POSTED)
		return -EINVAL;
	rx->slots[slot].closed = 1;
	return 0;
}

/* Packets in chunk c (data chunks may be short at the end; parity chunks are full). */
static uint32_t
chunk_pkts(const struct rx_msg *m, uint32_t c)
{
	if (c < m->nchunks && c == m->nchunks - 1)
		return m->npkts - c * m->ppc;
	return m->ppc;
}

/*
 * Byte @p i of the mirror: the chunk is in. An application may read the chunk's bytes as soon
 * as it sees the byte (an acquire load of it: libsdr.h), so the byte is stored after them
 * with release order: on arm64 a plain store may become visible before the payload's.
 */
static inline void
publish_chunk(struct rx_msg *m, uint32_t i)
{
	__atomic_store_n(&m->chunk_bytes[i], 1, __ATOMIC_RELEASE);
}

/* The mirror's byte of data chunk @p c: set once every chunk of its configured chunk is in
 * (the published view is per configured chunk, whatever chunk the code runs on). */
static void
mirror_chunk(struct rx_msg *m, uint32_t c)
{
	uint32_t first = c >> m->shift << m->shift, end = first + (1u << m->shift);

	if (end > m->nchunks)
		end = m->nchunks;
	for (uint32_t i = first; i < end; i++)
		if (!sdr_bit_test(m->chunk_bits, i))
			return;
	publish_chunk(m, c >> m->shift);
}

/* A chunk just became complete: set its bits and raise the events it causes. */
static void
chunk_complete(struct sdr_rx *rx, struct rx_msg *m, struct rx_slot *s, uint32_t c,
	       struct sdr_rx_event *ev)
{
	sdr_bit_set(m->chunk_bits, c);
	if (c >= m->nchunks) {
		m->par_chunks_done++;
		ev->flags |= SDR_RX_EV_PARITY_CHUNK;
		ev->chunk = c - m->nchunks;
		return;
	}
	if (m->shift == 0)
		publish_chunk(m, c);
	else
		mirror_chunk(m, c);
	m->chunks_done++;
	rx->counters[SDR_RX_CHUNKS_DONE]++;
	ev->flags |= SDR_RX_EV_CHUNK;
	ev->chunk = c;
	if (m->chunks_done == m->nchunks) {
		s->state = SDR_SLOT_DONE;
		rx->counters[SDR_RX_MSGS_DONE]++;
		ev->flags |= SDR_RX_EV_DONE;
	}
}

static sdr_rx_verdict
drop(struct sdr_rx *rx, enum sdr_rx_counter c)
{
	rx->counters[c]++;
	return c;
}

/*
 * A packet of slot @p s's previous receive, with its R_Key, the slot posted again since: its
 * sender may not have heard that receive's final ACK (lost, or the slot posted again before
 * it went out) and sends again. The receiver must ACK it again: dropped as stale, unanswered,
 * it would be sent forever. (A released slot's previous receive is two back: not this.)
 */
static inline int
of_previous(const struct rx_slot *s, const struct roce_view *v, uint32_t gen)
{
	return s->state != SDR_SLOT_RELEASED && gen == s->prev_gen && s->prev_rkey != 0 &&
	       v->rkey == s->prev_rkey;
}

/*
 * sdr_rx_claim()'s checks, changing nothing: the verdict (the drop counter the packet would
 * move, not moved), and for SDR_RX_PLACED where it goes (in @p cl) and its packet index.
 */
static sdr_rx_verdict
check(const struct sdr_rx *rx, const struct roce_view *v, uint32_t gen, struct sdr_rx_claim *cl,
      uint32_t *idx_out)
{
	const struct sdr_conn_geom *g = &rx->geom;
	struct sdr_imm_fields f;
	const struct rx_slot *s;
	const struct rx_msg *m;
	uint32_t idx, c, ppc;
	uint8_t *dst;

	if (v->opcode != ROCE_OP_UC_RDMA_WRITE_ONLY_IMM)
		return SDR_RX_BAD_OPCODE;
	f = sdr_imm_unpack(&rx->attr.split, v->imm);
	s = &rx->slots[f.msg_id];
	if (s->state == SDR_SLOT_FREE)
		return SDR_RX_SLOT_NOT_POSTED;
	if (gen != s->gen) {
		if (of_previous(s, v, gen))
			return SDR_RX_LATE_PREVIOUS;
		return SDR_RX_STALE_GENERATION;
	}
	/*
	 * The receive's R_Key before anything else is believed, even that the message is over:
	 * a late packet makes the receiver ACK again, and the caller counts the PSNs of keyed
	 * packets only (sdr_rx_keyed()). A released slot keeps its last key.
	 */
	if (v->rkey != s->rkey || s->rkey == 0) {
		if (of_previous(s, v, gen))	/* (one generation: only the key tells) */
			return SDR_RX_LATE_PREVIOUS;
		return SDR_RX_BAD_RKEY;
	}
	if (s->state == SDR_SLOT_RELEASED || s->closed)
		return SDR_RX_LATE_PACKET;
	if (s->state == SDR_SLOT_DONE)
		return SDR_RX_MSG_COMPLETE;
	m = &rx->msgs[s->ctx];
	ppc = m->ppc;

	/* the RETH must say what the immediate says */
	if (v->va != sdr_conn_va(g, f.msg_id, f.pkt_off))
		return SDR_RX_VA_MISMATCH;
	if (v->dma_len != v->payload_len)
		return SDR_RX_DMA_LEN_MISMATCH;

	/* region and exact length: every byte lands inside the posted buffer */
	if (f.pkt_off < m->npkts) {
		uint32_t want = f.pkt_off == m->npkts - 1 ? m->last_len : 1u << g->mtu_shift;

		if (v->payload_len != want)
			return SDR_RX_BAD_LENGTH;
		idx = f.pkt_off;
		c = f.pkt_off / ppc;
		dst = m->buf + ((uint64_t)f.pkt_off << g->mtu_shift);
	} else if (f.pkt_off >= g->parity_pkt_off && g->parity_pkt_off != 0 &&
		   f.pkt_off - g->parity_pkt_off < g->max_parity_pkts) {
		uint32_t poff = f.pkt_off - g->parity_pkt_off;

		if (m->parity == NULL)
			return SDR_RX_NO_PARITY;
		if (poff >= m->npar_pkts)
			return SDR_RX_OUT_OF_RANGE;
		if (v->payload_len != 1u << g->mtu_shift)
			return SDR_RX_BAD_LENGTH;
		idx = m->npkts + poff;
		c = m->nchunks + poff / ppc;
		dst = m->parity + ((uint64_t)poff << g->mtu_shift);
	} else {
		return SDR_RX_OUT_OF_RANGE;
	}

	if (sdr_bit_test(m->pkt_bits, idx))
		return SDR_RX_DUPLICATE;
	*cl = (struct sdr_rx_claim){ .dst = dst, .src = v->payload, .len = v->payload_len,
				     .slot = f.msg_id, .chunk = c, .pkt_off = f.pkt_off,
				     .seq = m->seq };
	*idx_out = idx;
	return SDR_RX_PLACED;
}

sdr_rx_verdict
sdr_rx_peek(const struct sdr_rx *rx, const struct roce_view *v, uint32_t gen,
	    struct sdr_rx_claim *cl)
{
	uint32_t idx;

	return check(rx, v, gen, cl, &idx);
}

sdr_rx_verdict
sdr_rx_claim(struct sdr_rx *rx, const struct roce_view *v, uint32_t gen, struct sdr_rx_claim *cl)
{
	struct rx_msg *m;
	uint32_t idx;
	sdr_rx_verdict r = check(rx, v, gen, cl, &idx);

	if (r != SDR_RX_PLACED)
		return drop(rx, r);
	m = &rx->msgs[rx->slots[cl->slot].ctx];
	sdr_bit_set(m->pkt_bits, idx);
	rx->counters[SDR_RX_PLACED]++;
	rx->counters[SDR_RX_BYTES_PLACED] += v->payload_len;
	if (m->imm_need != 0) {
		struct sdr_imm_fields f = sdr_imm_unpack(&rx->attr.split, v->imm);
		uint32_t fi = f.pkt_off % sdr_imm_nfrags(&rx->attr.split);

		if (!(m->imm_mask & (1u << fi))) {
			m->imm_mask |= 1u << fi;
			m->imm |= (uint32_t)((uint64_t)f.frag << (fi * rx->attr.split.frag_bits));
		}
	}
	return SDR_RX_PLACED;
}


void
sdr_rx_commit(struct sdr_rx *rx, const struct sdr_rx_claim *cl, struct sdr_rx_event *ev)
{
	struct rx_slot *s = &rx->slots[cl->slot];
	struct rx_msg *m;

	ev->flags = 0;
	/* (cannot fail while the caller keeps its side of sdr_rx_claim's contract: counted
	 * where it does not) */
	if ((s->state != SDR_SLOT_POSTED && s->state != SDR_SLOT_DONE) ||
	    rx->msgs[s->ctx].seq != cl->seq) {
		rx->counters[SDR_RX_COMMIT_LATE]++;
		return;
	}
	m = &rx->msgs[s->ctx];
	ev->slot = cl->slot;
	ev->seq = m->seq;
	if (m->pkts_received++ == 0)
		ev->flags |= SDR_RX_EV_FIRST;
	if (cl->pkt_off == m->npkts - 1)
		ev->flags |= SDR_RX_EV_LAST;
	/* a chunk recovered meanwhile already holds its full count: it is not done twice */
	if (++m->chunk_cnt[cl->chunk] == chunk_pkts(m, cl->chunk) &&
	    !sdr_bit_test(m->chunk_bits, cl->chunk))
		chunk_complete(rx, m, s, cl->chunk, ev);
}

sdr_rx_verdict
sdr_rx_place(struct sdr_rx *rx, const struct roce_view *v, uint32_t gen,
	     struct sdr_rx_event *ev)
{
	struct sdr_rx_claim cl;
	sdr_rx_verdict r;

	ev->flags = 0;
	r = sdr_rx_claim(rx, v, gen, &cl);
	if (r != SDR_RX_PLACED)
		return r;
	memcpy(cl.dst, cl.src, cl.len);
	sdr_rx_commit(rx, &cl, ev);
	return SDR_RX_PLACED;
}

/* The posted message of a slot, or NULL. */
static struct rx_msg *
posted_msg(const struct sdr_rx *rx, uint32_t slot)
{
	const struct rx_slot *s;

	if (slot >= rx->geom.nslots)
		return NULL;
	s = &rx->slots[slot];
	if (s->state != SDR_SLOT_POSTED && s->state != SDR_SLOT_DONE)
		return NULL;
	return &rx->msgs[s->ctx];
}

int
sdr_rx_chunk_recovered(struct sdr_rx *rx, uint32_t slot, uint32_t chunk,
		       struct sdr_rx_event *ev)
{
	struct rx_msg *m = posted_msg(rx, slot);
	uint32_t first, n;

	ev->flags = 0;
	if (m == NULL || chunk >= m->nchunks)
		return -EINVAL;
	if (sdr_bit_test(m->chunk_bits, chunk))
		return -EALREADY;
	first = chunk * m->ppc;
	n = chunk_pkts(m, chunk);
	for (uint32_t i = 0; i < n; i++)
		sdr_bit_set(m->pkt_bits, first + i);
	m->chunk_cnt[chunk] = (uint16_t)n;
	ev->slot = slot;
	ev->seq = m->seq;
	rx->counters[SDR_RX_CHUNKS_RECOVERED]++;
	chunk_complete(rx, m, &rx->slots[slot], chunk, ev);
	return 0;
}

int
sdr_rx_msg_info(const struct sdr_rx *rx, uint32_t slot, struct sdr_rx_msg_info *info)
{
	const struct rx_slot *s;
	const struct rx_msg *m;

	if (slot >= rx->geom.nslots || rx->slots[slot].state == SDR_SLOT_FREE)
		return -EINVAL;
	s = &rx->slots[slot];
	memset(info, 0, sizeof(*info));
	info->state = (enum sdr_slot_state)s->state;
	info->gen = s->gen;
	if (s->state == SDR_SLOT_RELEASED)
		return 0;
	m = &rx->msgs[s->ctx];
	info->seq = m->seq;
	info->len = m->len;
	info->npkts = m->npkts;
	info->nchunks = m->nchunks;
	info->nparity_chunks = m->npar_chunks;
	info->pkts_received = m->pkts_received;
	info->chunks_done = m->chunks_done;
	info->parity_chunks_done = m->par_chunks_done;
	return 0;
}

const uint8_t *
sdr_rx_chunk_bytes(const struct sdr_rx *rx, uint32_t slot)
{
	const struct rx_msg *m = posted_msg(rx, slot);

	return m ? m->chunk_bytes : NULL;
}

const uint64_t *
sdr_rx_chunk_bits(const struct sdr_rx *rx, uint32_t slot)
{
	const struct rx_msg *m = posted_msg(rx, slot);

	return m ? m->chunk_bits : NULL;
}

int
sdr_rx_chunk_expand(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk, uint64_t *out)
{
	const struct rx_msg *m = posted_msg(rx, slot);
	uint32_t first, n;

	if (m == NULL || chunk >= m->nchunks + m->npar_chunks)
		return -EINVAL;
	n = chunk_pkts(m, chunk);
	if (chunk < m->nchunks)
		first = chunk * m->ppc;
	else
		first = m->npkts + (chunk - m->nchunks) * m->ppc;
	sdr_bitmap_extract(out, m->pkt_bits, first, n);
	return (int)n;
}

int
sdr_rx_view_expand(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk, uint64_t *out)
{
	const struct rx_msg *m = posted_msg(rx, slot);
	uint32_t ppc = rx->geom.pkts_per_chunk, first, n;

	if (m == NULL || chunk >= (m->npkts + ppc - 1) / ppc)
		return -EINVAL;
	first = chunk * ppc;
	n = m->npkts - first < ppc ? m->npkts - first : ppc;
	sdr_bitmap_extract(out, m->pkt_bits, first, n);
	return (int)n;
}

int
sdr_rx_imm_get(const struct sdr_rx *rx, uint32_t slot, uint32_t *imm)
{
	const struct rx_msg *m = posted_msg(rx, slot);
	uint32_t need, bits;

	if (m == NULL)
		return -EINVAL;
	/* fragments 0 .. imm_need - 1, every one: a short message's parity packets carry
	 * higher ones, which neither stand in for a missing low one nor show */
	need = m->imm_need >= 32 ? UINT32_MAX : (1u << m->imm_need) - 1;
	if ((m->imm_mask & need) != need)
		return -EAGAIN;
	bits = m->imm_need * rx->attr.split.frag_bits;
	*imm = bits >= 32 ? m->imm : m->imm & ((1u << bits) - 1);
	return 0;
}

int
sdr_rx_chunk_span(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk, uint8_t **p,
		  uint32_t *len)
{
	const struct rx_msg *m = posted_msg(rx, slot);
	uint64_t off, cb;

	if (m == NULL || chunk >= m->nchunks)
		return -EINVAL;
	cb = (uint64_t)m->ppc << rx->geom.mtu_shift;
	off = (uint64_t)chunk * cb;
	*p = m->buf + off;
	*len = (uint32_t)(m->len - off < cb ? m->len - off : cb);
	return 0;
}

int
sdr_rx_parity_span(const struct sdr_rx *rx, uint32_t slot, uint32_t pchunk, uint8_t **p,
		   uint32_t *len)
{
	const struct rx_msg *m = posted_msg(rx, slot);

	if (m == NULL || pchunk >= m->npar_chunks)
		return -EINVAL;
	*p = m->parity + ((uint64_t)pchunk * m->ppc << rx->geom.mtu_shift);
	*len = m->ppc << rx->geom.mtu_shift;
	return 0;
}

const uint64_t *
sdr_rx_counters(const struct sdr_rx *rx)
{
	return rx->counters;
}

uint32_t
sdr_rx_posted(const struct sdr_rx *rx)
{
	return rx->posted;
}

int
sdr_rx_set_rkey(struct sdr_rx *rx, uint32_t slot, uint32_t rkey)
{
	if (slot >= rx->geom.nslots || rx->slots[slot].state == SDR_SLOT_FREE ||
	    (rx->slots[slot].state != SDR_SLOT_POSTED && rkey != 0))
		return -EINVAL;
	rx->slots[slot].rkey = rkey;
	return 0;
}

void
sdr_rx_forget_previous(struct sdr_rx *rx)
{
	for (uint32_t i = 0; i < rx->geom.nslots; i++)
		rx->slots[i].prev_rkey = 0;
}

uint64_t
sdr_rx_next_seq(const struct sdr_rx *rx)
{
	return rx->next_seq;
}

void
sdr_rx_skip_to(struct sdr_rx *rx, uint64_t seq)
{
	if (seq > rx->next_seq)
		rx->next_seq = seq;
}
