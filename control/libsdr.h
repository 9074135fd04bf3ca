/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * libsdr: the application SDK of the SDR dataplane, shaped like the published SDR API
 * (SDR-RDMA, SC'25): context, QP, memory registration, send post and poll, receive post,
 * partial-completion bitmap, user immediate, receive complete.
 *
 * An application attaches to a running sdr-dataplane instance through its shared-memory
 * control segment; it never starts EAL. Message buffers are registered memory: regions of
 * the instance's shared arena, so the dataplane places received payload directly where the
 * application reads it (zero copy) and sends straight from where it wrote.
 *
 * Return convention: SDR_SUCCESS, SDR_ERROR (sdr_last_error() says why) or SDR_RETRY
 * (resources temporarily exhausted, or nothing to report yet: call again).
 *
 * One thread per context; contexts are independent.
 */
#ifndef SDR_LIBSDR_H
#define SDR_LIBSDR_H

#include <stddef.h>
#include <stdint.h>

#define SDR_SUCCESS	0
#define SDR_ERROR	(-1)
#define SDR_RETRY	1

struct sdr_context;
struct sdr_qp;
struct sdr_mr;
struct sdr_recv;

/**
 * Attach to an instance (the dataplane's [dataplane] name, default "sdr0").
 * @return SDR_SUCCESS, or SDR_ERROR when there is no such instance, it runs another
 *   control-segment version, it is not alive, all client slots are taken, or this user's
 *   applications hold its [dataplane] sdk_slots_per_user of them (the message is in @p err
 *   if not NULL).
 */
int sdr_context_create(const char *instance, struct sdr_context **ctx, char *err, size_t errlen);

/** Detach: QPs this context opened are closed, connections it created deleted. */
void sdr_context_destroy(struct sdr_context *ctx);

/** The reason of the last SDR_ERROR of this context. */
const char *sdr_last_error(const struct sdr_context *ctx);

/** Attributes of a new QP (a dataplane connection). Zero fields take the dataplane's defaults. */
struct sdr_qp_attr {
	const char *name;		/**< connection name, unique in the instance */
	const char *port;		/**< the dataplane port to use */
	const char *peer_ip;		/**< the peer dataplane's address (may come later: connect) */
	uint32_t local_qpn;		/**< first local data QPN */
	uint32_t remote_qpn;		/**< first remote data QPN (may come later: connect) */
	uint32_t mtu;			/**< bytes per packet */
	uint32_t chunk_size;		/**< bytes per chunk (log-size in the published API) */
	uint64_t max_msg_size;
	uint32_t max_inflight;
	uint16_t channels;
	const char *scheme;		/**< "sr", "sr-nack", "ec-xor:K,M", "ec-mds:K,M", "auto" */
	double rtt_s;			/**< path RTT (SR timeouts) */
	double rate_bps;		/**< injection rate limit, 0: unpaced */
};

/** What a peer needs to connect to a QP. */
struct sdr_qp_info {
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t mtu;
	uint32_t chunk_size;
	uint64_t max_msg_size;
	uint32_t max_inflight;
	uint32_t channels;
	uint32_t generations;
	char scheme[24];
};

/** Create a connection in the dataplane and open it. */
int sdr_qp_create(struct sdr_context *ctx, const struct sdr_qp_attr *attr, struct sdr_qp **qp);

/** Open a connection that exists already (from the configuration file or sdrctl). */
int sdr_qp_open(struct sdr_context *ctx, const char *name, struct sdr_qp **qp);

/** The QP's parameters, to hand to the peer. */
int sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info);

/** Point the QP at its peer: the peer's first QPN and address (the QP must be idle). */
int sdr_qp_connect(struct sdr_qp *qp, uint32_t remote_qpn, const char *peer_ip);

/**
 * Change settings of an idle connection before opening it, with the keys of a [conn]
 * section: e.g. "scheme ec-mds:32,8 chunk 64KiB".
 */
int sdr_conn_set(struct sdr_context *ctx, const char *conn, const char *settings);

/** Close the QP (and delete its connection if sdr_qp_create() made it). */
int sdr_qp_destroy(struct sdr_qp *qp);

/**
 * Register memory: a region of @p len bytes of the shared arena, returned in @p addr.
 * @return SDR_SUCCESS, SDR_RETRY (the context's arena share is full).
 */
int sdr_mr_reg(struct sdr_context *ctx, size_t len, void **addr, struct sdr_mr **mr);

/** Release a region; it must not be in use by a send or a receive. */
int sdr_mr_dereg(struct sdr_mr *mr);

/**
 * Send a message: @p len bytes at @p buf (inside a registered region), with a 32-bit user
 * immediate. The buffer must stay unchanged until the send completes.
 * @return SDR_SUCCESS, SDR_RETRY (too many requests queued: poll and retry), SDR_ERROR.
 */
int sdr_send_post(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm,
		  uint64_t cookie);

/** Send priorities: 0 (the default) .. SDR_PRIO_MAX. */
#define SDR_PRIO_MAX 3

/**
 * The priority of the messages this QP sends from now on (sdr_send_post() and
 * sdr_send_stream_start()): the dataplane sends the new chunks of a message before those of
 * the QP's messages of a lower priority that have not gone out yet, so a small urgent
 * message posted behind a large one overtakes it instead of waiting for it. Messages still
 * land in the peer's receives in the order they were posted (order-based matching).
 * @return SDR_SUCCESS, SDR_ERROR (above SDR_PRIO_MAX).
 */
int sdr_send_priority(struct sdr_qp *qp, unsigned int prio);

/** A streamed send in progress (filled by sdr_send_stream_start()). */
struct sdr_send_stream {
	struct sdr_qp *qp;
	uint64_t cookie;
	uint64_t len;
	uint32_t chunk;
	uint32_t stripe;	/* of a striped connection: the stripe its message went on */
};

/**
 * Start a streamed send: a message of @p len bytes at @p buf whose contents the application
 * produces piece by piece. Nothing goes out until pieces are declared ready with
 * sdr_send_stream_continue(); the send completes through sdr_send_poll() like a one-shot
 * send. @p cookie names the stream: unique among the QP's sends in flight.
 * @return SDR_SUCCESS, SDR_RETRY, SDR_ERROR.
 */
int sdr_send_stream_start(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm,
			  uint64_t cookie, struct sdr_send_stream *s);

/**
 * Bytes [@p offset, @p offset + @p len) of the message are written and may go out. Pieces
 * may come in any order (they are sent in order as the ready prefix grows); a piece that
 * went out already is sent again, for an application that drives its own retransmission.
 * Declared bytes stay as they are until the send completes, as a one-shot send's: on an
 * erasure-coded connection a submessage's parity is computed from them when its last chunk
 * goes out, and a retransmission reads them again.
 * @p offset must be a multiple of the chunk size, and @p len too unless the piece reaches
 * the end of the message.
 * @return SDR_SUCCESS, SDR_RETRY (queue full: poll and retry), SDR_ERROR.
 */
int sdr_send_stream_continue(struct sdr_send_stream *s, uint64_t offset, uint64_t len);

/** The end of a stream: every byte not declared yet is ready as it is in the buffer. */
int sdr_send_stream_end(struct sdr_send_stream *s);

/** A completed send or receive. */
struct sdr_completion {
	uint64_t cookie;
	int status;			/**< 0: done; else failed (timeout, refused) */
	struct sdr_recv *recv;		/**< receives: the handle to read and complete */
	uint32_t imm;			/**< receives: the user immediate, if imm_ok */
	int imm_ok;
	/**
	 * receives: how many low bits of imm the message carried. The immediate travels as a
	 * fragment per packet (4 bits with the default split), so a message of fewer packets
	 * than fragments (8) carries only its packets' fragments; the high bits read as 0.
	 */
	uint32_t imm_bits;
	double time_s;			/**< first chunk on the wire (or in) to done */
	uint32_t retransmitted;		/**< sends: chunks sent more than once */
	uint32_t decoded;		/**< receives: submessages rebuilt by erasure decoding */
};

/** Take a send completion. @return SDR_SUCCESS (filled), SDR_RETRY (none yet), SDR_ERROR. */
int sdr_send_poll(struct sdr_qp *qp, struct sdr_completion *c);

/**
 * Post a receive of exactly @p len bytes into @p buf (registered memory). The k-th message
 * the peer sends lands in the k-th receive posted.
 * @param handle set to the receive's handle: its bitmap can be polled at once.
 */
int sdr_recv_post(struct sdr_qp *qp, void *buf, uint64_t len, uint64_t cookie,
		  struct sdr_recv **handle);

/** Take a receive completion. @return SDR_SUCCESS, SDR_RETRY, SDR_ERROR. */
int sdr_recv_poll(struct sdr_qp *qp, struct sdr_completion *c);

/**
 * The receive's chunk bitmap, one byte per chunk (1: the chunk is in), updated live by the
 * dataplane — the partial completion view. @p nchunks receives the number of chunks. The
 * dataplane sets a chunk's byte after its bytes are in the buffer (a release store): to read
 * a chunk before the receive completes, load its byte with acquire order
 * (`__atomic_load_n(&bm[k], __ATOMIC_ACQUIRE)`, or a fence after the plain load and before
 * the reads), or an arm64 CPU may read the buffer before the byte.
 * @return the bitmap, or NULL for a handle no longer valid (sdr_recv_complete()).
 */
const volatile uint8_t *sdr_recv_bitmap_get(const struct sdr_recv *r, uint32_t *nchunks);

/**
 * The user immediate of a receive, complete or still arriving (it travels in fragments in
 * the data packets' immediates; a round trip to the dataplane while the receive is open).
 * @return SDR_SUCCESS, SDR_RETRY (not every fragment has arrived yet, or, complete, every
 *   packet carrying a fragment was rebuilt by erasure decoding), SDR_ERROR.
 */
int sdr_recv_imm_get(struct sdr_recv *r, uint32_t *imm);

/** Low bits of the receive's immediate that are valid (see sdr_completion::imm_bits). */
uint32_t sdr_recv_imm_bits(const struct sdr_recv *r);

/** Packets in a chunk at most (chunk / MTU): sdr_recv_bitmap_chunk_expand()'s bound. */
#define SDR_EXPAND_PACKETS_MAX 1024

/**
 * Per-packet view of one chunk: bit i of @p bits is packet i of the chunk. @p bits must hold
 * (chunk_size / mtu + 63) / 64 words (SDR_EXPAND_PACKETS_MAX / 64 always does).
 * @return the number of packets in the chunk, or SDR_ERROR.
 */
int sdr_recv_bitmap_chunk_expand(struct sdr_recv *r, uint32_t chunk, uint64_t *bits);

/**
 * Done with a receive (complete or not): the dataplane stops placing into it and discards
 * late packets for it. Must be called once for every receive posted; the handle is not
 * valid after it (nor after sdr_qp_destroy() of its QP). A handle used again is refused
 * with SDR_ERROR (sdr_recv_bitmap_get(): NULL) as long as its slot has not been reused,
 * which takes all the context's other free slots first (up to 511 receives posted).
 * @return SDR_SUCCESS, SDR_RETRY (the request queue is full for a moment), SDR_ERROR.
 */
int sdr_recv_complete(struct sdr_recv *r);

#endif /* SDR_LIBSDR_H */
