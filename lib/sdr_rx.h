/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive side of an SDR connection: the message table, packet and chunk bitmaps, and
 * bounds-checked placement of data packets ("partial completion").
 *
 * The table has 2^id_bits slots. recv_post() binds the next slot, in order, to a buffer:
 * the k-th message the peer sends lands in the k-th receive posted here. The slot's
 * generation is (k >> id_bits) mod generations; the peer sends to the data QPNs of that
 * generation. A packet is written to buffer + offset only after every check passes; each
 * failed check is its own counter and the packet is discarded. After recv_complete() the
 * slot discards everything addressed to it until it is posted again with a new generation.
 *
 * Bitmaps: one bit per packet, a per-chunk packet count, and one bit (and one byte, the
 * published SDK's view) per chunk, set when the chunk's last missing packet arrives or when
 * the chunk is recovered by erasure decoding.
 *
 * Not thread-safe: one lcore owns a connection's receive side. Nothing here allocates
 * after sdr_rx_create().
 */
#ifndef SDR_RX_H
#define SDR_RX_H

#include <stdint.h>

#include "counters.h"
#include "roce_parse.h"
#include "sdr_conn.h"

/*
 * Counters of the receive side: symbol, name, kind, meaning. Every packet handed to
 * sdr_rx_place() moves exactly one of the counters up to and including "placed": a drop
 * reason, "duplicate" or "placed".
 */
#define SDR_RX_COUNTERS(X) \
	X(BAD_OPCODE, "bad_opcode", DROP, \
	  "per data packet dropped because its opcode is not UC RDMA WRITE ONLY with immediate") \
	X(SLOT_NOT_POSTED, "slot_not_posted", DROP, \
	  "per data packet dropped because its message id names a slot never posted") \
	X(LATE_PACKET, "late_packet", DROP, \
	  "per data packet dropped because its receive was already released or failed (same " \
	  "generation, the receive's R_Key)") \
	X(LATE_PREVIOUS, "late_packet_previous", DROP, \
	  "per data packet dropped because it is of its slot's previous receive (that one's " \
	  "generation and R_Key), the slot posted again since: the receiver ACKs that one again") \
	X(STALE_GENERATION, "stale_generation", DROP, \
	  "per data packet dropped because its QPN generation is not that of the message in its " \
	  "slot (nor, with its R_Key, of the slot's previous message)") \
	X(MSG_COMPLETE, "msg_already_complete", DROP, \
	  "per data packet dropped because its message already has every data chunk (with the " \
	  "receive's R_Key)") \
	X(BAD_RKEY, "bad_rkey", DROP, \
	  "per data packet dropped because its R_Key is not the receive's (or the released " \
	  "receive's, for a late packet), or the receive has no key yet") \
	X(VA_MISMATCH, "va_mismatch", DROP, \
	  "per data packet dropped because its RETH address disagrees with the immediate's " \
	  "message and offset") \
	X(DMA_LEN_MISMATCH, "dma_len_mismatch", DROP, \
	  "per data packet dropped because its RETH DMA length differs from its payload length") \
	X(BAD_LENGTH, "bad_payload_length", DROP, \
	  "per data or parity packet dropped because its payload length is not the one its " \
	  "offset needs") \
	X(OUT_OF_RANGE, "offset_out_of_range", DROP, \
	  "per packet dropped because its offset lies past the message's data and parity packets") \
	X(NO_PARITY, "parity_not_expected", DROP, \
	  "per parity packet dropped because its receive was posted without a parity buffer") \
	X(DUPLICATE, "duplicate", INFO, \
	  "per data or parity packet not placed because its offset was already received or " \
	  "rebuilt: resends and the path make them, so not counted among the drops") \
	X(PLACED, "placed", OK, \
	  "per data or parity packet that passed every check and is copied into the posted " \
	  "buffer") \
	X(BYTES_PLACED, "bytes_placed", OK, \
	  "payload bytes of placed packets, per byte") \
	X(CHUNKS_DONE, "chunks_done", OK, \
	  "per data chunk that became complete, by its packets arriving or by decoding") \
	X(CHUNKS_RECOVERED, "chunks_recovered", OK, \
	  "per data chunk rebuilt by erasure decoding instead of received") \
	X(MSGS_DONE, "msgs_done", OK, \
	  "per posted receive whose data chunks are all in, received or rebuilt") \
	X(POSTS, "posts", INFO, \
	  "per receive posted into a message slot") \
	X(COMPLETES, "completes", INFO, \
	  "per posted receive released (complete or given up): its slot discards packets until " \
	  "posted again") \
	X(COMMIT_LATE, "placed_after_release", ERROR, \
	  "per placed packet whose receive was released while its payload was being copied " \
	  "(the caller broke sdr_rx_claim()'s contract; never expected): nothing is counted " \
	  "in its chunk")

enum sdr_rx_counter {
#define X(sym, name, kind, doc) SDR_RX_##sym,
	SDR_RX_COUNTERS(X)
#undef X
	SDR_RX_NCOUNTERS
};

/** Verdict of one packet: SDR_RX_PLACED or the drop counter it moved. */
typedef enum sdr_rx_counter sdr_rx_verdict;

/**
 * Whether a packet of verdict @p r carried its receive's R_Key (its slot, generation and
 * key checked before any other verdict), so that what it says of itself, its PSN, may be
 * believed: a key is known to the two ends alone and changes with every receive.
 */
static inline int
sdr_rx_keyed(sdr_rx_verdict r)
{
	return r != SDR_RX_BAD_OPCODE && r != SDR_RX_SLOT_NOT_POSTED &&
	       r != SDR_RX_STALE_GENERATION && r != SDR_RX_BAD_RKEY;
}

/** The counters as a table (counters.h): name, kind, meaning. */
extern const struct sdr_counter_table sdr_rx_counter_table;

/** Counter name ("placed", "stale_generation", ...). */
const char *sdr_rx_counter_name(enum sdr_rx_counter c);

/** Events a placed packet (or a recovered chunk) caused; several may be set at once. */
#define SDR_RX_EV_FIRST		0x01u	/**< first packet of the message */
#define SDR_RX_EV_LAST		0x02u	/**< the message's last data packet (highest offset) */
#define SDR_RX_EV_CHUNK		0x04u	/**< a data chunk became complete */
#define SDR_RX_EV_PARITY_CHUNK	0x08u	/**< a parity chunk became complete */
#define SDR_RX_EV_DONE		0x10u	/**< every data chunk is in: the message is complete */

struct sdr_rx_event {
	uint32_t flags;		/**< SDR_RX_EV_* */
	uint32_t slot;		/**< message id */
	uint32_t chunk;		/**< chunk index (data, or parity index for PARITY_CHUNK) */
	uint64_t seq;		/**< receive sequence number of the message */
};

enum sdr_slot_state {
	SDR_SLOT_FREE,		/**< never posted */
	SDR_SLOT_POSTED,	/**< receiving */
	SDR_SLOT_DONE,		/**< every data chunk in; waiting for recv_complete */
	SDR_SLOT_RELEASED,	/**< completed; discards until posted again */
};

/** What a caller may read about a posted message. */
struct sdr_rx_msg_info {
	enum sdr_slot_state state;
	uint32_t gen;
	uint64_t seq;
	uint64_t len;
	uint32_t npkts;
	uint32_t nchunks;
	uint32_t nparity_chunks;
	uint32_t pkts_received;
	uint32_t chunks_done;		/**< data chunks complete (received or recovered) */
	uint32_t parity_chunks_done;
};

struct sdr_rx;

/**
 * Create the receive side of a connection.
 * @return NULL on bad attributes (see sdr_conn_geometry()) or out of memory.
 */
struct sdr_rx *sdr_rx_create(const struct sdr_conn_attr *attr);
void sdr_rx_destroy(struct sdr_rx *rx);

/**
 * The code of the messages posted from now on and of those posted but with no packet in
 * yet: @p k data and @p m parity chunks per submessage, k = 0 for none, on chunks of the
 * configured chunk size >> @p shift (at most attr.max_chunk_shift). Only messages posted
 * with a parity buffer take parity. Chunk numbers (events, bitmaps, spans, info) count
 * chunks of a message's own chunk size; the mirror (sdr_rx_post()'s chunk_bytes) stays one
 * byte per configured chunk, set once all of its smaller chunks are in.
 * @return 0, -EBUSY while a posted message has packets in, -EINVAL when the shift is too
 *   large or the parity of the largest message would not fit the geometry.
 */
int sdr_rx_set_code(struct sdr_rx *rx, uint32_t k, uint32_t m, uint32_t shift);

/** The geometry the receive side works with. */
const struct sdr_conn_geom *sdr_rx_geom(const struct sdr_rx *rx);

/**
 * Post the next receive.
 *
 * @param buf     where the message lands; the caller keeps ownership.
 * @param len     the message length in bytes, <= max_msg_size (0 allowed).
 * @param parity  where parity chunks land (nparity_chunks * chunk_size bytes), or NULL
 *                when the connection has no parity region.
 * @param chunk_bytes optional array of one byte per configured chunk (ceil(len /
 *                chunk_size)) that mirrors the chunk bitmap (0/1 per chunk, e.g. in memory
 *                shared with an application); NULL: internal.
 * @param[out] slot the message id the message will carry.
 * @return 0; -EAGAIN when max_inflight receives are posted or the next slot in order is
 *   still posted (retry after recv_complete); -EMSGSIZE when len > max_msg_size.
 */
int sdr_rx_post(struct sdr_rx *rx, uint8_t *buf, uint64_t len, uint8_t *parity,
		uint8_t *chunk_bytes, uint32_t *slot);

/**
 * Release a posted message (complete or not): its bitmaps reset, and packets still
 * addressed to it are discarded (late_packet) until the slot is posted again.
 * @return 0, or -EINVAL if the slot is not posted.
 */
int sdr_rx_complete(struct sdr_rx *rx, uint32_t slot);

/**
 * The receive in @p slot failed (the reliability layer gave it up: a timeout, a SKIP): from
 * now on it takes no packet (each is dropped as late_packet, as after a release), though it
 * stays posted, its bitmaps and immediate readable, until sdr_rx_complete(). Claims made
 * before still commit. @return 0, or -EINVAL if the slot is not posted.
 */
int sdr_rx_close(struct sdr_rx *rx, uint32_t slot);

/**
 * Check and place one parsed data packet.
 *
 * @param v    a packet the parser accepted (ROCE_V_OK), addressed to a data QPN of this
 *             connection.
 * @param gen  the generation its destination QPN encodes (sdr_conn_qpn_decode()).
 * @param ev   events the packet caused (flags 0 if none).
 * @return SDR_RX_PLACED, or the drop counter the packet moved.
 */
sdr_rx_verdict sdr_rx_place(struct sdr_rx *rx, const struct roce_view *v, uint32_t gen,
			    struct sdr_rx_event *ev);

/**
 * A data packet that passed every check and whose packet bit is now set: where its payload
 * goes. Made by sdr_rx_claim(), for a caller that copies the payload elsewhere (another
 * lcore) and then calls sdr_rx_commit().
 */
struct sdr_rx_claim {
	uint8_t *dst;		/**< in the posted buffer (or its parity region) */
	const uint8_t *src;	/**< the packet's payload */
	uint32_t len;		/**< bytes to copy */
	uint32_t slot;		/**< message slot */
	uint32_t chunk;		/**< data chunks, then parity chunks numbered after them */
	uint32_t pkt_off;	/**< the immediate's packet offset */
	uint64_t seq;		/**< the message's sequence number */
};

/**
 * First half of sdr_rx_place(): check the packet and set its packet bit, so a duplicate is
 * dropped from now on; the payload is not copied and no chunk counts it yet. The claim stays
 * valid while the slot stays posted: the caller must not complete (recv_complete) the
 * message before every claim of it is committed.
 * @return SDR_RX_PLACED (the claim in @p cl), or the drop counter the packet moved.
 */
sdr_rx_verdict sdr_rx_claim(struct sdr_rx *rx, const struct roce_view *v, uint32_t gen,
			    struct sdr_rx_claim *cl);

/**
 * sdr_rx_claim()'s checks alone, changing nothing (no counter, no bit): what it would
 * return, and for SDR_RX_PLACED where the payload would go (@p cl). For a caller that
 * copies a payload before it knows the packet good (its ICRC checked as it copies), then
 * claims it, or drops it: nothing here has counted it.
 */
sdr_rx_verdict sdr_rx_peek(const struct sdr_rx *rx, const struct roce_view *v, uint32_t gen,
			   struct sdr_rx_claim *cl);

/**
 * Second half: the payload of @p cl has been copied to cl->dst; count it in its chunk.
 * A chunk already complete (recovered by decoding meanwhile) is not completed twice. A
 * claim whose receive was released meanwhile (against sdr_rx_claim()'s contract) counts
 * for nothing but placed_after_release.
 * @param ev events the packet caused (flags 0 if none).
 */
void sdr_rx_commit(struct sdr_rx *rx, const struct sdr_rx_claim *cl, struct sdr_rx_event *ev);

/**
 * Mark a data chunk as recovered (its bytes were rebuilt in the buffer by the caller,
 * e.g. by erasure decoding). Sets its packet and chunk bits.
 * @return 0 (events in @p ev), -EINVAL for a slot not posted or a chunk out of range,
 *   -EALREADY if the chunk was complete.
 */
int sdr_rx_chunk_recovered(struct sdr_rx *rx, uint32_t slot, uint32_t chunk,
			   struct sdr_rx_event *ev);

/** Information about the message in @p slot. @return 0 or -EINVAL (never posted). */
int sdr_rx_msg_info(const struct sdr_rx *rx, uint32_t slot, struct sdr_rx_msg_info *info);

/** Chunk bitmap of a posted message, one byte (0 or 1) per configured data chunk; NULL if
 * not posted. */
const uint8_t *sdr_rx_chunk_bytes(const struct sdr_rx *rx, uint32_t slot);

/**
 * Chunk bitmap as bits: data chunks at [0, nchunks), then parity chunks at
 * [nchunks, nchunks + nparity_chunks). NULL if not posted.
 */
const uint64_t *sdr_rx_chunk_bits(const struct sdr_rx *rx, uint32_t slot);

/**
 * Per-packet view of one chunk ("chunk expand"): bit i of @p out is packet i of the chunk.
 * @p chunk counts data chunks then parity chunks, as sdr_rx_chunk_bits().
 * @return the number of packets in the chunk, or -EINVAL.
 */
int sdr_rx_chunk_expand(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk,
			uint64_t *out);

/**
 * The same for data chunk @p chunk of the configured chunk size (the application's view,
 * as the mirror), whatever chunk the message's code runs on.
 * @return the number of packets in it, or -EINVAL.
 */
int sdr_rx_view_expand(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk, uint64_t *out);

/**
 * The user immediate, reassembled from the fragments of the packets received so far.
 * A message of fewer packets than fragments carries only its packets' fragments; the
 * missing high bits read as zero.
 * @return 0, -EAGAIN while fragments are missing (retry), -EINVAL if not posted.
 */
int sdr_rx_imm_get(const struct sdr_rx *rx, uint32_t slot, uint32_t *imm);

/** Byte range of data chunk @p chunk in the posted buffer (for decoding in place). */
int sdr_rx_chunk_span(const struct sdr_rx *rx, uint32_t slot, uint32_t chunk,
		      uint8_t **p, uint32_t *len);

/** Parity chunk @p pchunk in the posted parity buffer. */
int sdr_rx_parity_span(const struct sdr_rx *rx, uint32_t slot, uint32_t pchunk,
		       uint8_t **p, uint32_t *len);

/** Counter array (SDR_RX_NCOUNTERS entries). */
const uint64_t *sdr_rx_counters(const struct sdr_rx *rx);

/** Number of receives currently posted (not yet completed). */
uint32_t sdr_rx_posted(const struct sdr_rx *rx);

/**
 * The R_Key packets of posted receive @p slot must carry (non-zero). A receive posted on a
 * connection without a fixed local_rkey has none, and takes no packet, until this is set.
 * 0 takes the key away, from a posted receive or from a slot that ended (done or released:
 * its late packets are then bad_rkey, not late ones, as after a peer restart).
 * @return 0, -EINVAL (not posted, or never posted for 0).
 */
int sdr_rx_set_rkey(struct sdr_rx *rx, uint32_t slot, uint32_t rkey);

/**
 * Forget every slot's previous receive (a peer restart): its packets, of the old epoch, are
 * stale from now on, not late ones that would count in the new peer's loss record.
 */
void sdr_rx_forget_previous(struct sdr_rx *rx);

/** Sequence number the next sdr_rx_post() will use. */
uint64_t sdr_rx_next_seq(const struct sdr_rx *rx);

/** The sender gave up the messages below @p seq: the next receive posted gets @p seq. */
void sdr_rx_skip_to(struct sdr_rx *rx, uint64_t seq);

#endif /* SDR_RX_H */
