/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send side of an SDR connection: message-id allocation and the packetizer.
 *
 * A message gets the next send sequence number; its message id (slot) and generation
 * follow from it exactly as on the receive side, so the k-th message sent lands in the
 * k-th receive posted. A slot is never reused while the message in it is in flight: the
 * next message waits (-EAGAIN) until the reliability layer retires the old one.
 *
 * The packetizer turns a job — a range of packet offsets of a message, backed by the
 * message buffer (data, retransmissions) or by a parity buffer (parity submessages) — into
 * UC RDMA WRITE Only with Immediate frames, round-robin over the channels, each with its
 * own PSN sequence, written into caller-supplied frame buffers in bursts.
 *
 * Not thread-safe: one lcore owns a connection's send side. Nothing here allocates after
 * sdr_tx_create().
 */
#ifndef SDR_TX_H
#define SDR_TX_H

#include <stdint.h>

#include "counters.h"
#include "roce_build.h"
#include "rss.h"
#include "sdr_conn.h"

#define SDR_TX_COUNTERS(X) \
	X(MSGS_STARTED, "msgs_started", OK, \
	  "per message accepted for sending: a message slot and an in-flight place taken") \
	X(MSGS_RETIRED, "msgs_retired", INFO, \
	  "per started message retired, freeing its slot: after its completion, or at once if " \
	  "the sender refused it") \
	X(PKTS_BUILT, "pkts_built", OK, \
	  "per data or parity frame built (first sends and resends alike)") \
	X(BYTES_BUILT, "payload_bytes_built", OK, \
	  "payload bytes of built data and parity frames, per byte") \
	X(SLOT_BUSY, "slot_busy", INFO, \
	  "per message start refused for now (retried): in-flight limit reached or its slot " \
	  "still busy") \
	X(BUILD_ERRORS, "build_errors", ERROR, \
	  "per frame that could not be built (too large for the frame buffer or UDP length); " \
	  "building stops")

enum sdr_tx_counter {
#define X(sym, name, kind, doc) SDR_TX_##sym,
	SDR_TX_COUNTERS(X)
#undef X
	SDR_TX_NCOUNTERS
};

/** The counters as a table (counters.h): name, kind, meaning. */
extern const struct sdr_counter_table sdr_tx_counter_table;

const char *sdr_tx_counter_name(enum sdr_tx_counter c);

/** A message being sent. Filled by sdr_tx_msg_start(); read-only for callers. */
struct sdr_tx_msg {
	uint64_t seq;
	uint32_t msg_id;
	uint32_t gen;
	const uint8_t *buf;
	uint64_t len;
	uint32_t npkts;
	uint32_t nchunks;	/**< at the chunk shift in force when it started */
	uint32_t user_imm;
	uint32_t rkey;		/**< the R_Key of the peer's receive for it (set before building) */
};

/** A range of packets to send. */
struct sdr_tx_job {
	const struct sdr_tx_msg *msg;
	const uint8_t *src;	/**< parity bytes of the job's first packet; NULL for data */
	uint32_t first_pkt;	/**< packet offset in the slot's offset space */
	uint32_t npkts;
	uint32_t next;		/**< packets already built */
};

struct sdr_tx;

/**
 * Create the send side of a connection.
 * @param path addresses and L2/L3 fields of the peer (copied).
 * @return NULL on bad attributes or out of memory.
 */
struct sdr_tx *sdr_tx_create(const struct sdr_conn_attr *attr, const struct roce_path *path);

/**
 * Steer the frames to the peer's RSS: each data QPN of the peer gets the first UDP source
 * port from its default (roce_qpn_sport()) on whose hash under @p key the peer's RSS puts
 * it on queue @p queue of @p queues (rss.h). Allocates; call before sending.
 * @return 0, -EINVAL (@p queues not a power of two, or @p queue not below it), -ENOMEM.
 */
int sdr_tx_steer(struct sdr_tx *tx, const uint8_t key[RSS_KEY_LEN], unsigned int queues,
		 unsigned int queue);
void sdr_tx_destroy(struct sdr_tx *tx);

/**
 * Data QPN index @p q (generation * channels + channel) leaves with UDP source port
 * @p sport from its next frame on (0: its default again). Allocates the table the first
 * time. @return 0, -EINVAL (@p q out of range), -ENOMEM.
 */
int sdr_tx_set_sport(struct sdr_tx *tx, uint32_t q, uint16_t sport);

/** The source port data QPN index @p q leaves with now (its default: roce_qpn_sport()). */
uint16_t sdr_tx_sport(const struct sdr_tx *tx, uint32_t q);

/** Each data QPN index's next PSN (geom.ndata_qpns entries). */
const uint32_t *sdr_tx_psns(const struct sdr_tx *tx);

const struct sdr_conn_geom *sdr_tx_geom(const struct sdr_tx *tx);

/**
 * Start the next message.
 * @return 0; -EAGAIN when max_inflight messages are in flight or the next slot in order is
 *   still in flight; -EMSGSIZE when @p len exceeds max_msg_size.
 */
int sdr_tx_msg_start(struct sdr_tx *tx, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		     struct sdr_tx_msg *msg);

/**
 * The chunks of the messages started from now on: the configured chunk size >> @p shift
 * (a scheme change, between messages). @return 0, or -EINVAL above attr.max_chunk_shift.
 */
int sdr_tx_set_chunk_shift(struct sdr_tx *tx, uint32_t shift);

/** Retire a message (acknowledged, or failed for good): its slot may be reused. */
void sdr_tx_msg_retire(struct sdr_tx *tx, const struct sdr_tx_msg *msg);

/** Messages in flight. */
uint32_t sdr_tx_inflight(const struct sdr_tx *tx);

/**
 * Number the next message @p seq or later: the receiver withdrew the receives below it
 * (the reliability layer decided, see rel_tx_next_seq()). Never moves backwards.
 */
void sdr_tx_skip_to(struct sdr_tx *tx, uint64_t seq);

/**
 * Job for data packets [first_pkt, first_pkt + npkts) of a message (a whole message, a
 * chunk to retransmit, ...). @return 0 or -EINVAL when the range is outside the message.
 */
int sdr_tx_job_data(struct sdr_tx_job *job, const struct sdr_tx_msg *msg, uint32_t first_pkt,
		    uint32_t npkts);

/**
 * Job for parity packets: packet i of the job carries bytes [i * mtu, (i + 1) * mtu) of
 * @p parity and lands at packet offset parity_pkt_off + first_ppkt + i of the slot.
 * @return 0 or -EINVAL when the connection has no parity region or the range overflows it.
 */
int sdr_tx_job_parity(const struct sdr_tx *tx, struct sdr_tx_job *job,
		      const struct sdr_tx_msg *msg, const uint8_t *parity, uint32_t first_ppkt,
		      uint32_t npkts);

/** Packets of a job not yet built. */
static inline uint32_t
sdr_tx_job_left(const struct sdr_tx_job *job)
{
	return job->npkts - job->next;
}

/**
 * Build up to @p n frames of a job.
 *
 * @param frames  n buffers of @p cap bytes each.
 * @param lens    set to each frame's length.
 * @return frames built (0 when the job is done or cap is too small).
 */
uint32_t sdr_tx_build(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *frames,
		      uint32_t cap, uint16_t *lens, uint32_t n);

/** A frame of sdr_tx_build_sg(): headers, the payload where it lies, pad and ICRC. */
struct sdr_tx_frag {
	const uint8_t *payload;	/**< in the job's buffer (message or parity), not copied */
	uint32_t payload_len;
	uint16_t hdr_len;	/**< bytes of headers written into the caller's buffer */
	uint8_t tail_len;	/**< bytes of @c tail that follow the payload */
	uint8_t tail[ROCE_BUILD_TAIL_MAX];	/**< sdr_tx_build_sg() only */
	struct roce_icrc_rest icrc;		/**< sdr_tx_headers_sg() only */
};

/**
 * sdr_tx_build() without copying the payload (zero-copy send, roce_build_sg()): the
 * headers go into @p hdrs (n buffers of @p cap bytes, enough for the headers), the rest
 * is described in @p out. The frames read the job's buffer until they are sent: the
 * caller keeps it unchanged until then.
 * @return frames built.
 */
uint32_t sdr_tx_build_sg(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *hdrs,
			 uint32_t cap, struct sdr_tx_frag *out, uint32_t n);

/**
 * sdr_tx_build_sg() without the pass over the payload: each frame's @c icrc says what its
 * ICRC still needs, and roce_icrc_rest_tail() over its payload writes its tail (@c
 * tail_len bytes) before it leaves. @c tail is not written.
 * @return frames built.
 */
uint32_t sdr_tx_headers_sg(struct sdr_tx *tx, struct sdr_tx_job *job, uint8_t *const *hdrs,
			   uint32_t cap, struct sdr_tx_frag *out, uint32_t n);

/**
 * A packet of sdr_tx_build_wr(): what an RDMA NIC is asked to send as one UC RDMA WRITE
 * with Immediate (the NIC builds the frame, its PSN and its ICRC itself).
 */
struct sdr_tx_wr {
	struct roce_pkt pkt;	/**< dqpn, va, rkey, imm, dma_len (psn: the packetizer's) */
	const uint8_t *payload;	/**< in the job's buffer (message or parity), not copied */
	uint32_t payload_len;
};

/**
 * sdr_tx_build() for a transport that builds its own frames (a verbs queue pair): the
 * next packets of the job as work requests, in the same order and over the same data QPNs
 * as frames would go. @return packets described.
 */
uint32_t sdr_tx_build_wr(struct sdr_tx *tx, struct sdr_tx_job *job, struct sdr_tx_wr *out,
			 uint32_t n);

/** Largest frame the connection builds (for sizing buffers). */
uint32_t sdr_tx_max_frame(const struct sdr_tx *tx);

const uint64_t *sdr_tx_counters(const struct sdr_tx *tx);

#endif /* SDR_TX_H */
