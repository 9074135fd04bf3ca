/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One end of an SDR connection over real packets: the send side (message ids, packetizer),
 * the receive side (message table, placement), the reliability state machines, the FEC
 * codec and the control messages, joined together. The dataplane hands it parsed packets
 * addressed to the connection and asks it for frames to send; applications give it
 * messages to send and buffers to receive into, and poll completions.
 *
 * Time is an argument (nanoseconds, any monotonic clock); no EAL, no locks. Memory is
 * allocated at creation: the parity buffers of the sender (a small pool, recycled once a
 * submessage's parity went out) and of the receiver (one region per receive in flight).
 */
#ifndef SDR_ENDPOINT_H
#define SDR_ENDPOINT_H

#include <stdint.h>
#include <string.h>

#include "counters.h"
#include "roce_build.h"
#include "roce_parse.h"
#include "path_sel.h"
#include "rss.h"
#include "sdr_auto.h"
#include "sdr_conn.h"
#include "sdr_ctrl.h"
#include "sdr_keys.h"
#include "sdr_rel.h"
#include "sdr_rx.h"

struct ec_codec;
struct rel_rx;

struct sdr_ep_cfg {
	struct sdr_conn_attr attr;	/**< geometry, QPNs, R_Keys (ec_k/m set for EC) */
	struct sdr_rel_cfg rel;		/**< scheme and timing */
	struct roce_path path;		/**< addresses towards the peer */
	uint32_t tx_parity_bufs;	/**< sender parity buffers (m chunks each); 0: 4 */
	/**
	 * 0: sdr_ep_output() encodes and decodes itself. Else erasure coding is offloaded: the
	 * endpoint hands out up to this many jobs at a time (sdr_ep_fec_take()) for another
	 * thread to run (sdr_fec_job_run()) and takes each back with sdr_ep_fec_done(), so
	 * injection never waits on a decode.
	 */
	uint32_t fec_jobs;
	/**
	 * This side's tag for the handshake and the R_Keys (sdr_peer.h, sdr_keys.h); 0: a
	 * random one from the OS CSPRNG (what a deployment wants; tests may fix it).
	 */
	uint64_t tag;
	/**
	 * A secret both sides share (auth_key): every control message carries its AES-128-CMAC
	 * and the R_Keys are derived from it (sdr_keys.h). 0: none.
	 */
	uint8_t auth;
	uint8_t auth_key[16];
	/**
	 * Zero-copy output (sdr_ep_output_sg()): data frames point into the message's buffer
	 * until the caller is done with them. @c held(held_arg, ctx) says whether a frame of
	 * send context @p ctx (sdr_ep_frame.hold) may still read it; the send's completion
	 * waits until none may, so the buffer goes back to the application, and the context
	 * to a new message, only once no frame reads it. NULL: no frame outlives output.
	 */
	int (*held)(void *held_arg, uint32_t ctx);
	void *held_arg;
	/**
	 * Steering by source port (rss.h): 0, or the number of queues the peer's RSS spreads
	 * this connection's port over (a power of two). Every frame to the peer, data and
	 * control, then leaves with a UDP source port whose hash under @c steer_key puts it on
	 * the peer's queue @c steer_queue — the engine that owns the connection there.
	 */
	uint8_t steer_queues;
	uint8_t steer_queue;
	uint8_t steer_key[RSS_KEY_LEN];
	/**
	 * scheme = auto on both ends: the receive side sends REPORTs of its first-pass loss
	 * counts (sdr_ctrl.h), the send side estimates the path's loss from them
	 * (sdr_ep_auto()). The estimator's settings; zero fields take sdr_auto's defaults.
	 */
	uint8_t auto_report;
	struct sdr_auto_cfg auto_cfg;
	/**
	 * With rel.scheme_may_change (and attr.parity_cap_chunks): the most parity chunks per
	 * submessage a code this connection changes to may have; its buffers are made for
	 * them at the start (sdr_ep_change_scheme()).
	 */
	uint16_t switch_max_m;
	/**
	 * The codes of a scheme change are made by the caller, off the thread that runs the
	 * endpoint (an MDS code's tables take from a hundred microseconds to milliseconds to
	 * make, a stall of every connection of a dataplane's engine): a change asked brings
	 * its code (sdr_ep_change_scheme()), and a code the peer's change or a return to the
	 * configured scheme needs is asked for (sdr_ep_code_wanted()) and waited for until
	 * given (sdr_ep_code_give()). 0: made here, when needed.
	 */
	uint8_t codes_outside;
	/**
	 * Several paths (path_sel.h): with paths.npaths > 1 the receive side reports per data
	 * QPN what arrived (PATHS, sdr_ctrl.h) and the send side places its data QPNs on
	 * paths by their UDP source port — the network taken to hash the port as the link
	 * emulator does (link_emu_path_of()) — keeps per-path estimates (sdr_ep_paths()) and
	 * moves QPNs when told (sdr_ep_set_paths()). channels and nqp are the connection's
	 * (filled in here); npaths 0 or 1: none of it.
	 */
	struct path_sel_cfg paths;
};

#define SDR_EP_COUNTERS(X) \
	X(DATA_PKTS_OUT, "data_pkts_out", OK, \
	  "per data frame (first send or resend) the endpoint built for its data QPNs") \
	X(PARITY_PKTS_OUT, "parity_pkts_out", OK, \
	  "per parity frame the endpoint built for its data QPNs") \
	X(CTRL_PKTS_OUT, "ctrl_pkts_out", OK, \
	  "per control frame the endpoint built (HELLO, ACK, NACK, CTS, SKIP, REPORT, PATHS, " \
	  "SCHEME, ...)") \
	X(DATA_PKTS_IN, "data_pkts_in", OK, \
	  "per packet received on a data QPN of the connection, before the placement checks") \
	X(CTRL_PKTS_IN, "ctrl_pkts_in", OK, \
	  "per packet received on the connection's control QPN, before the endpoint's checks") \
	X(CTRL_BAD, "ctrl_rejected", DROP, \
	  "per received control message dropped because it did not decode (bad length, version, " \
	  "type, flags, ...)") \
	X(CTRL_BAD_OPCODE, "ctrl_bad_opcode", DROP, \
	  "per packet on the control QPN dropped because its opcode is not UC SEND ONLY") \
	X(ENCODES, "submessages_encoded", OK, \
	  "per submessage whose parity chunks were computed, inline or by an offloaded job") \
	X(DECODES, "submessages_decoded", OK, \
	  "per submessage whose missing data chunks were rebuilt from parity, inline or by an " \
	  "offloaded job") \
	X(DECODE_FAILED, "decode_failed", ERROR, \
	  "per submessage decode that failed: a codec error, or more chunks missing than its " \
	  "parity rebuilds") \
	X(PARITY_WAITS, "parity_buffer_waits", INFO, \
	  "per parity encode of a submessage that had to wait because no parity buffer was free") \
	X(SEND_OK, "sends_ok", OK, \
	  "per send completion handed to the application with status OK") \
	X(SEND_FAILED, "sends_failed", ERROR, \
	  "per send completion handed to the application that failed (timeout, given up by peer, " \
	  "cancelled)") \
	X(RECV_OK, "recvs_ok", OK, \
	  "per receive completion handed to the application with status OK") \
	X(RECV_FAILED, "recvs_failed", ERROR, \
	  "per receive completion handed to the application that failed (timeout, given up by " \
	  "peer, cancelled)") \
	X(FEC_JOBS, "fec_jobs_offloaded", INFO, \
	  "per encode or decode of a submessage queued as a job for the FEC lcore") \
	X(FEC_JOB_WAITS, "fec_job_waits", INFO, \
	  "per encode or decode that had to wait because every offload job was in use") \
	X(FEC_WAIT_FULL, "fec_requests_dropped", ERROR, \
	  "per encode or decode not kept: its wait queue was full of live requests (a decode's " \
	  "submessage is then asked for by EC-NACK)") \
	X(FEC_STALE, "fec_results_discarded", INFO, \
	  "per offloaded encode or decode whose result was discarded: its message or receive " \
	  "ended meanwhile") \
	X(HELLOS_IN, "hellos_received", INFO, \
	  "per HELLO control message received that passed the MAC and decode checks and is not " \
	  "from an old epoch") \
	X(HELLO_SCHEME_REFUSED, "hello_scheme_refused", DROP, \
	  "per peer whose HELLO names a code or chunk for its data that this end cannot decode: " \
	  "none of that peer's data is taken (two ends configured apart)") \
	X(HELLO_ASKS, "hellos_asking", INFO, \
	  "per HELLO sent after the handshake to ask a peer whose HELLO never arrived for the " \
	  "scheme of its data (its receives wait for the answer)") \
	X(CTRL_BAD_TOKEN, "ctrl_bad_token", DROP, \
	  "per received non-HELLO control message dropped because its destination tag is not " \
	  "this end's") \
	X(CTRL_BAD_MAC, "ctrl_bad_mac", DROP, \
	  "per received control message dropped because its MAC is missing or wrong (auth on)") \
	X(CTRL_OLD_EPOCH, "ctrl_old_epoch", DROP, \
	  "per received control message dropped because it comes from a tag the peer had before " \
	  "a restart, or is addressed to one this end had") \
	X(CTRL_REFLECTED, "ctrl_reflected", DROP, \
	  "per received control message dropped because its source tag is this end's own, now " \
	  "or before a restart: one of its own messages sent back to it") \
	X(CTRL_EARLY, "ctrl_before_handshake", DROP, \
	  "per received proven non-HELLO control message dropped because the handshake is not " \
	  "done yet") \
	X(CTRL_HELD, "ctrl_not_sent_before_handshake", INFO, \
	  "per control message (CTS, ACK, ...) due before the handshake, discarded unsent; it is " \
	  "repeated later") \
	X(PEER_RESTARTS, "peer_restarts", INFO, \
	  "per peer restart detected (a proven message from a new tag): everything in flight " \
	  "fails") \
	X(SEND_HELD, "sends_held_for_frames", INFO, \
	  "per send completion held back because zero-copy frames still read its buffer (once " \
	  "per completion)") \
	X(WIRE_PKTS, "wire_pkts_judged", INFO, \
	  "data QPN PSNs judged once out of the 256-PSN window (tracked only with scheme auto or " \
	  "several paths)") \
	X(WIRE_LOST, "wire_pkts_lost", INFO, \
	  "judged data QPN PSNs that never arrived: frames the path lost (scheme auto or several " \
	  "paths)") \
	X(WIRE_DUPS, "wire_pkts_twice", INFO, \
	  "per data frame that arrived with a PSN already seen: duplicated on the path (scheme " \
	  "auto or paths)") \
	X(WIRE_TOO_LATE, "wire_pkts_too_late", INFO, \
	  "per data frame older than the 256-PSN window, already judged lost (scheme auto or " \
	  "several paths)") \
	X(WIRE_BLACKOUTS, "wire_blackouts", INFO, \
	  "per jump of a data QPN's PSNs past 65536 (auto or paths): a blackout, the PSNs " \
	  "between counted lost (the path selector's own counts leave them out)") \
	X(SCHEME_ASKS, "scheme_changes_asked", INFO, \
	  "per scheme change this side starts asking the peer for, once its sends have drained") \
	X(SCHEME_CHANGES, "scheme_changes", INFO, \
	  "per scheme change applied: this end's agreed by the peer, the peer's asked of this " \
	  "end, or a reset after a restart") \
	X(SCHEME_REFUSED, "scheme_changes_refused_by_peer", INFO, \
	  "per scheme change this end asked for that the peer refused") \
	X(SCHEME_NO_MEMORY, "scheme_changes_without_memory", ERROR, \
	  "per scheme change this end gave up before asking: no memory for the new code's " \
	  "encoder (made before asking, so that once the peer agrees this end always follows)") \
	X(SCHEME_REFUSALS, "scheme_changes_refused", INFO, \
	  "per scheme change the peer asked for that this side refused (unknown, not receiving, " \
	  "cannot run here)") \
	X(SCHEME_DEFERRED, "scheme_changes_deferred", INFO, \
	  "per scheme change the peer asked for while an offloaded decode was out or this side " \
	  "was going back to the configured scheme: not answered, the peer asks again") \
	X(SCHEME_CODE_WAITS, "scheme_codes_waited", INFO, \
	  "per code a scheme change or a return to the configured scheme waited for, made off " \
	  "the engine (codes_outside): the peer's question goes unanswered until it is there") \
	X(SCHEME_RESET_WAITS, "scheme_resets_waited", INFO, \
	  "per peer restart with work of the old peer out: back to the configured scheme once " \
	  "it is in; meanwhile sends wait and no receive takes the new peer's data") \
	X(REPORTS_OUT, "loss_reports_sent", INFO, \
	  "per REPORT control message built with the wire loss counts (scheme auto, receive " \
	  "side)") \
	X(REPORTS_IN, "loss_reports_received", INFO, \
	  "per REPORT control message received from the peer that passed the handshake checks") \
	X(REPORTS_IMPLAUSIBLE, "loss_reports_implausible", DROP, \
	  "per REPORT not used as a sample: counts that go back, lose more than they carry, or " \
	  "exceed frames this end sent") \
	X(PATHS_OUT, "path_reports_sent", INFO, \
	  "per PATHS control message built (one per 16 data QPNs per round; several paths, " \
	  "receive side)") \
	X(PATHS_IN, "path_reports_received", INFO, \
	  "per PATHS control message received from the peer that passed the handshake checks") \
	X(PATH_MOVES, "path_qpn_moves", INFO, \
	  "per data QPN moved onto a path by a path decision (the first placement is not counted)") \
	X(WRITE_OUTSIDE, "write_outside_region", DROP, \
	  "per write with immediate a NIC placed (sdr_ep_input_write()) whose immediate names " \
	  "bytes outside the receive region") \
	X(CTRL_STALE, "ctrl_stale", DROP, \
	  "per peer's control message about nothing this end knows: a SCHEME or SYNC answer to " \
	  "no question of ours, a SCHEME question older than the one applied, and the like")

enum sdr_ep_counter {
#define X(sym, name, kind, doc) SDR_EP_##sym,
	SDR_EP_COUNTERS(X)
#undef X
	SDR_EP_NCOUNTERS
};

/** The counters as a table (counters.h): name, kind, meaning. */
extern const struct sdr_counter_table sdr_ep_counter_table;

const char *sdr_ep_counter_name(enum sdr_ep_counter c);

/** A completed send or receive. */
struct sdr_ep_done {
	uint8_t is_recv;
	uint8_t status;		/**< enum sdr_done_status */
	uint32_t slot;		/**< receive: the slot to read bitmaps of before releasing */
	uint64_t cookie;
	uint64_t seq;
	uint64_t start_ns;	/**< send: submitted; receive: posted */
	uint64_t first_ns;	/**< send: first chunk out; receive: first chunk in (0: none) */
	uint64_t end_ns;
	uint32_t retransmitted;
	uint32_t decoded;
	uint32_t fallback;
};

struct sdr_ep;

/** @return NULL on a bad configuration (see sdr_conn_geometry()) or no memory. */
struct sdr_ep *sdr_ep_create(const struct sdr_ep_cfg *cfg);

/**
 * The bytes of buffers sdr_ep_create() would take for @p cfg that grow with its settings:
 * the receive side's bitmaps and counts of every message in flight, and with a code (or a
 * scheme that may change to one) the parity buffers of both sides. A caller that takes
 * settings from others bounds this before it creates the endpoint (a few settings within
 * their own ranges can ask for gigabytes: ec-mds:3,82 on 32 KiB chunks, 16 messages in
 * flight of 8 MiB, about 3.7 GB). @return the bytes, or UINT64_MAX for a configuration
 * sdr_conn_geometry() refuses.
 */
uint64_t sdr_ep_buffer_bytes(const struct sdr_ep_cfg *cfg);
void sdr_ep_destroy(struct sdr_ep *ep);

/**
 * Send a message. The buffer must stay valid and unchanged until its completion.
 * @return 0, -EAGAIN (too many in flight, a scheme change under way, or the return to the
 * configured scheme after a peer restart: poll completions and retry), -EMSGSIZE.
 */
int sdr_ep_send(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		uint64_t cookie, uint64_t now);

/** A streamed send in progress. */
struct sdr_ep_stream {
	uint32_t ctx;
	uint64_t seq;
	uint64_t len;
	uint32_t chunk;		/**< the connection's chunk size */
};

/**
 * Start a streamed send of @p len bytes at @p buf: nothing goes out until parts of the
 * buffer are declared ready with sdr_ep_stream_add(). Completion as for sdr_ep_send().
 * @return 0, -EAGAIN, -EMSGSIZE.
 */
int sdr_ep_send_stream(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		       uint64_t cookie, uint64_t now, struct sdr_ep_stream *st);

/**
 * Bytes [@p off, @p off + @p len) of a streamed send are ready (@p off a multiple of the
 * chunk size; @p len too, unless it reaches the end of the message). Ready bytes go out in
 * order; a range that went out already is sent again.
 * @return 0, -EINVAL (misaligned or out of range), -ENOENT (the message is over).
 */
int sdr_ep_stream_add(struct sdr_ep *ep, const struct sdr_ep_stream *st, uint64_t off,
		      uint64_t len);

/** Message priorities: 0 (the default) .. SDR_EP_PRIO_MAX (rel_tx.h). */
#define SDR_EP_PRIO_MAX 3

/**
 * sdr_ep_send() (@p st NULL) or sdr_ep_send_stream() (@p st not NULL) of a message with
 * priority @p prio: its new chunks go out before those of the connection's messages of a
 * lower priority (rel_tx_set_prio()). @return as they do, or -EINVAL for a priority above
 * SDR_EP_PRIO_MAX.
 */
int sdr_ep_send_prio(struct sdr_ep *ep, const uint8_t *buf, uint64_t len, uint32_t user_imm,
		     uint64_t cookie, uint64_t now, unsigned int prio, struct sdr_ep_stream *st);

/** The end of a streamed send: whatever was not added yet is ready. @return 0, -ENOENT. */
int sdr_ep_stream_end(struct sdr_ep *ep, const struct sdr_ep_stream *st);

/**
 * Post a receive of exactly @p len bytes into @p buf (order-based matching).
 * @param chunk_bytes optional mirror of the chunk bitmap, one byte per chunk.
 * @return 0, -EAGAIN, -EMSGSIZE.
 */
int sdr_ep_recv(struct sdr_ep *ep, uint8_t *buf, uint64_t len, uint8_t *chunk_bytes,
		uint64_t cookie, uint64_t now, uint32_t *slot);

/**
 * Release a completed (or abandoned) receive: from then on its slot discards late packets.
 * Every posted receive must be released exactly once.
 */
int sdr_ep_recv_release(struct sdr_ep *ep, uint32_t slot);

/**
 * Copies and decodes still writing (or reading) the buffer of receive @p slot. A receive
 * released while some are out (sdr_ep_recv_release() stops new ones at once) gets no more
 * bytes once this is 0: only then is its buffer the application's again.
 */
uint32_t sdr_ep_recv_writers(const struct sdr_ep *ep, uint32_t slot);

/**
 * A new application starts on the connection: ask the peer (SYNC, with @p nonce) to answer
 * once every reset it started (SKIP, WITHDRAW) has been acted on here. Until it has
 * (sdr_ep_synced()), the caller holds the application's sends and receives back, so they
 * are numbered after everything that went before.
 */
void sdr_ep_sync(struct sdr_ep *ep, uint64_t nonce, uint64_t now);

/** No SYNC of ours waits for the peer's answer. */
int sdr_ep_synced(const struct sdr_ep *ep);

/**
 * The application using the endpoint went away: end what it has in flight, on both sides of
 * the connection, so the next application starts from a clean stream.
 *  - Every send in flight completes with SDR_DONE_CANCELLED (once no encode reads its
 *    buffer); the peer is told with SKIP, so the receives it posted for them fail and its
 *    next receive gets the next message sent.
 *  - Every receive posted is released here (the caller must not release it again; its
 *    buffer is quiet once sdr_ep_recv_writers() is 0); completions of receives may still
 *    come out of sdr_ep_poll() and are to be ignored. The peer is told with WITHDRAW, so it
 *    fails its messages for the receives that were not complete and numbers its next
 *    message after them.
 */
void sdr_ep_abort(struct sdr_ep *ep, uint64_t now);

/**
 * Hand a packet to the endpoint: a data packet to one of its data QPNs, or a control
 * packet to its control QPN (as sdr_conn_qpn_decode() classified it).
 */
void sdr_ep_input(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind,
		  uint32_t gen, uint64_t now);

/**
 * sdr_ep_input() of a frame parsed without its ICRC checked (roce_parse_rw() without
 * ROCE_PARSE_VERIFY_ICRC, or roce_parse_sg() with ROCE_PARSE_ICRC_LATER that left it,
 * @c icrc_checked 0): a data packet its receive would place has the ICRC checked as its
 * payload is copied there, one pass over the bytes (roce_icrc_copy()); any other packet
 * has it checked first. A packet whose ICRC is wrong is not handed over and counts
 * nowhere here (the caller counts it as the parser would have: bad_icrc). Its bytes may
 * have been written into the range of the buffer its receive has not received yet, which
 * stays undefined until a good packet or a decode fills it; so the copy goes first only
 * where nothing else writes that buffer now (no decode or payload copy of the endpoint's
 * out), and for payloads of CRC_COPY_MIN bytes or more (a shorter one gains nothing):
 * else the check does.
 * @return 1 if the packet was handed over, 0 if its ICRC was wrong.
 */
int sdr_ep_input_unchecked(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind,
			   uint32_t gen, uint64_t now);

/**
 * sdr_ep_input() for a caller that copies data payloads on another thread: a control
 * packet, or a data packet that fails a check, is handled here as by sdr_ep_input(); a
 * data packet that passes is claimed (sdr_rx_claim()) and left to the caller.
 * @return 1 if @p cl is a claim: copy cl->len bytes from cl->src to cl->dst (the packet
 *   must stay alive until then), then call sdr_ep_input_commit() on this thread. Until
 *   every claim of a message is committed its receive completion is held back, so the
 *   buffer stays the endpoint's. 0 if the packet is done with.
 */
int sdr_ep_input_claim(struct sdr_ep *ep, const struct roce_view *v, enum sdr_qpn_kind kind,
		       uint32_t gen, uint64_t now, struct sdr_rx_claim *cl);

/** The payload of claim @p cl has been copied: count it (chunk and message events). */
void sdr_ep_input_commit(struct sdr_ep *ep, const struct sdr_rx_claim *cl, uint64_t now);

/**
 * Build up to @p n frames that should go out now (control first, then data, parity and
 * retransmissions as the pacer allows); runs due timers, encodes and decodes.
 * @param frames n buffers of @p cap bytes.
 * @return frames built.
 */
uint32_t sdr_ep_output(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames, uint32_t cap,
		       uint16_t *lens, uint32_t n);

/** A frame of sdr_ep_output_sg() or sdr_ep_output_sg_deferred(). */
struct sdr_ep_frame {
	/** NULL: the frame is whole in the caller's buffer (@c len bytes). Else @c len bytes
	 * of headers there, then @c ext_len bytes at @c ext (a send's buffer, not copied),
	 * then @c tail_len bytes that sdr_ep_frame_tail() writes. */
	const uint8_t *ext;
	uint32_t ext_len;
	uint32_t hold;		/**< ext: the send context whose buffer it points into */
	uint16_t len;
	uint8_t tail_len;
	uint8_t tail_ready;	/**< ext: @c tail holds the tail (sdr_ep_output_sg()) */
	uint8_t tail[ROCE_BUILD_TAIL_MAX];	/**< ext and tail_ready: pad and ICRC */
	struct roce_icrc_rest icrc;	/**< ext, not tail_ready: what the ICRC still needs */
};

/**
 * sdr_ep_output() with data packets built without copying their payload (sdr_tx_build_sg()):
 * the caller sends each as headers + the send's own bytes + tail, and tells the endpoint
 * through cfg.held when no frame of a send reads its buffer any more: each frame with
 * @c ext counts in the hold of its send (@c hold) from before the caller's next call into
 * the endpoint, for the call that made it delivers no completion. Control and parity
 * frames come whole, as from sdr_ep_output() (parity buffers are the endpoint's, recycled
 * once their frames are built). @p frames as for sdr_ep_output().
 *
 * A data frame's ICRC is computed as the frame is built, over its payload where it lies
 * (the one read of the payload that no zero-copy sender can skip): the building of the
 * next frame's headers overlaps that read. sdr_ep_frame_tail() copies the tail out.
 */
uint32_t sdr_ep_output_sg(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames,
			  uint32_t cap, struct sdr_ep_frame *out, uint32_t n);

/**
 * sdr_ep_output_sg() with the pass over each data frame's payload left to the caller
 * (sdr_tx_headers_sg()): sdr_ep_frame_tail() computes the ICRC from the bytes the frame
 * points to, before the frame leaves. A sender that times that pass apart, on a sample of
 * its frames, measures the floor of its send path in the cache state the send path meets.
 */
uint32_t sdr_ep_output_sg_deferred(struct sdr_ep *ep, uint64_t now, uint8_t *const *frames,
				   uint32_t cap, struct sdr_ep_frame *out, uint32_t n);

/** The most frames one sdr_ep_output_sg() call makes (@p n beyond it is taken as it). */
#define SDR_EP_SG_MAX 256

/**
 * The pad and the ICRC of a frame of sdr_ep_output_sg() or _deferred() with @c ext set
 * into @p tail (@c tail_len bytes, at most ROCE_BUILD_TAIL_MAX): copied where the frame
 * has it already, else computed over the payload where it lies.
 */
static inline void
sdr_ep_frame_tail(const struct sdr_ep_frame *e, uint8_t *tail)
{
	if (!e->tail_ready)
		roce_icrc_rest_tail(&e->icrc, e->ext, e->ext_len, tail);
	else if (e->tail_len == ROCE_ICRC_LEN)	/* a full frame: no pad */
		memcpy(tail, e->tail, ROCE_ICRC_LEN);
	else
		memcpy(tail, e->tail, e->tail_len);
}

/*
 * The same connection over a transport that builds its own packets: an RDMA NIC's queue
 * pairs (sdr-verbs-peer). Out of the endpoint come work requests instead of frames; into it
 * go the NIC's receive completions instead of parsed frames. Everything between — the
 * handshake, control messages, reliability, erasure coding, completions — is the code the
 * frame path runs, so both transports behave alike for every message (tests/unit/
 * test_endpoint_wr.c drives both with the same traffic).
 */

/** Bytes of the largest control message with its MAC (a SEND's payload). */
#define SDR_EP_CTRL_MAX (SDR_CTRL_MAX_LEN + SDR_MAC_LEN)

enum sdr_ep_wr_kind {
	SDR_EP_WR_WRITE_IMM,	/**< RDMA WRITE with Immediate on a data QP */
	SDR_EP_WR_SEND,		/**< SEND on the control QP */
};

/** A work request of sdr_ep_output_wr(). */
struct sdr_ep_wr {
	uint8_t kind;		/**< enum sdr_ep_wr_kind */
	/**
	 * write: @c addr is in the endpoint's own memory (a parity buffer, recycled once its
	 * work requests are made): the caller copies the bytes before it calls the endpoint
	 * again. 0: @c addr is in a send's buffer, read by the NIC in place until the work
	 * request completes (cfg.held with @c hold).
	 */
	uint8_t copy;
	uint32_t hold;		/**< write, copy 0: the send context whose buffer it reads */
	uint32_t dqpn;		/**< write: the peer's data QPN; send: its control QPN */
	uint32_t imm;		/**< write: the immediate (host order) */
	uint32_t rkey;		/**< write: the R_Key of the peer's receive */
	uint64_t va;		/**< write: the offset in the peer's receive region */
	const uint8_t *addr;	/**< write: the payload; send: @c msg */
	uint32_t len;		/**< bytes at @c addr */
	uint8_t msg[SDR_EP_CTRL_MAX];	/**< send: the control message (with its MAC) */
};

/**
 * sdr_ep_output() as work requests: control messages first, then data, parity and
 * retransmissions as the pacer allows, at most @p n. @return work requests made.
 */
uint32_t sdr_ep_output_wr(struct sdr_ep *ep, uint64_t now, struct sdr_ep_wr *wr, uint32_t n);

/**
 * A write with immediate arrived: the NIC checked its R_Key and placed its bytes in the
 * receive region (@p region, @p region_len: the 2^id_bits slots of slot_span bytes,
 * registered at offset 0) at the offset its RETH named, and completed it with @p imm and
 * @p len on data QPN index @p q (generation * channels + channel). A completion carries no
 * RETH, so the packet is read where its immediate says it is (sdr_conn_va()), and as if it
 * carried the connection's fixed R_Key (attr.local_rkey: the region's; a connection with
 * per-receive R_Keys takes no writes this way). A completion carries no PSN either: scheme
 * auto's loss reports and the path estimates need the frame path. Then what sdr_ep_input()
 * does with a data packet.
 * @return the placement's verdict (sdr_rx.h), or -1 for an immediate that names bytes
 *   outside the region (counted: write_outside_region).
 */
int sdr_ep_input_write(struct sdr_ep *ep, uint32_t q, uint32_t imm, const uint8_t *region,
		       uint64_t region_len, uint32_t len, uint64_t now);

/**
 * A message arrived on the control QP: @p len bytes, received as RoCE @p opcode (UC SEND
 * ONLY for a SEND; anything else is counted as ctrl_bad_opcode, as on the frame path).
 * What sdr_ep_input() does with a control packet.
 */
void sdr_ep_input_ctrl(struct sdr_ep *ep, uint8_t opcode, const uint8_t *msg, uint32_t len,
		       uint64_t now);

/** Earliest time sdr_ep_output() has something to do (UINT64_MAX: idle). */
uint64_t sdr_ep_next_time(struct sdr_ep *ep, uint64_t now);

/** Take one completion. @return 1 or 0. */
int sdr_ep_poll(struct sdr_ep *ep, struct sdr_ep_done *d);

/*
 * Offloaded erasure coding (cfg.fec_jobs > 0). The thread that drives the endpoint takes
 * jobs after sdr_ep_output() and passes them (a ring) to a FEC thread, which runs them and
 * passes them back; the driving thread then calls sdr_ep_fec_done(). Meanwhile the endpoint
 * keeps sending and receiving:
 *  - an encode reads the message and writes a parity buffer the endpoint holds back until
 *    the job returns; the message's send completion waits for its encodes;
 *  - a decode writes only into the job's own staging chunks; sdr_ep_fec_done() copies the
 *    recovered chunks into the receive buffer if the receive still wants them (a result for
 *    a receive completed, failed or released meanwhile is discarded and counted); the
 *    receive's completion waits for its decodes (they read its buffer), and the parity
 *    region a decode reads stays reserved until it returns.
 * Jobs of one endpoint must not run concurrently with each other (the codec's decode-table
 * cache): give each endpoint one FEC thread.
 */
struct sdr_fec_job;

/** Take up to @p n jobs ready to run. @return how many. */
uint32_t sdr_ep_fec_take(struct sdr_ep *ep, struct sdr_fec_job **jobs, uint32_t n);

/** Run a job: ISA-L encode or decode, on any thread. Touches no endpoint state. */
void sdr_fec_job_run(struct sdr_fec_job *job);

/** The endpoint a job belongs to. */
struct sdr_ep *sdr_fec_job_ep(const struct sdr_fec_job *job);

/** A job that ran comes back (on the endpoint's thread). */
void sdr_ep_fec_done(struct sdr_ep *ep, struct sdr_fec_job *job, uint64_t now);

/** Jobs taken and not yet back. */
uint32_t sdr_ep_fec_outstanding(const struct sdr_ep *ep);

/**
 * Anything in flight: messages being sent, receives posted, completions not yet polled,
 * FEC jobs or payload copies out, sends held for their frames. What deleting the endpoint
 * would lose.
 */
int sdr_ep_in_flight(const struct sdr_ep *ep);

/**
 * sdr_ep_in_flight(), or a scheme change (sdr_ep_change_scheme()) or a restart's return to
 * the configured scheme under way: both sides must agree on it before the endpoint is
 * replaced (sdr_ep_take_over()). Such a change may wait for the peer for as long as it is
 * away, with nothing in flight.
 */
int sdr_ep_busy(const struct sdr_ep *ep);

/**
 * @p ep, new and not run yet, replaces @p old on the same connection (the same QPNs and
 * addresses; a change of its settings, as `conn set` makes): the peer sees a restart, as
 * for any new endpoint, but learns it at once (our HELLOs carry the peer's tag, known from
 * @p old) and learns which of its messages @p old delivered (HELLO's window: @p old's tag,
 * then which of the peer's last 960 message numbers of the epoch @p old received OK). A
 * message whose final ACK was lost before the rebuild then completes OK at the peer instead
 * of failing.
 * @return 0; -EBUSY if @p old has work in flight or no peer proven; -EINVAL if they are
 *   not the same connection or @p ep has started.
 */
int sdr_ep_take_over(struct sdr_ep *ep, const struct sdr_ep *old);

/*
 * What an application may read of its receives, through the engine (the receive side's
 * own view, sdr_rx.h): a posted message's state and counts, its user immediate as far as
 * its fragments arrived (sdr_rx_imm_get(): -EAGAIN while some are missing), the packets of
 * one of its chunks of the configured size (sdr_rx_view_expand()), and the sequence number
 * of the next receive.
 */
int sdr_ep_recv_info(const struct sdr_ep *ep, uint32_t slot, struct sdr_rx_msg_info *info);
int sdr_ep_recv_imm(const struct sdr_ep *ep, uint32_t slot, uint32_t *imm);
int sdr_ep_recv_chunk_pkts(const struct sdr_ep *ep, uint32_t slot, uint32_t chunk,
			   uint64_t *out);
uint64_t sdr_ep_next_recv_seq(const struct sdr_ep *ep);

/** The geometry of the connection (sdr_conn_geometry()). */
const struct sdr_conn_geom *sdr_ep_geom(const struct sdr_ep *ep);

/** The receive side itself, for tests and fuzzers that check its state. */
const struct sdr_rx *sdr_ep_rx(const struct sdr_ep *ep);

/** Counters: the endpoint's, and those of its parts. */
const uint64_t *sdr_ep_counters(const struct sdr_ep *ep);

/**
 * Change the scheme of this side's sends to @p s for the messages sent from now on
 * (rel.scheme_may_change; the side that sends data asks; with data both ways each side
 * changes its own direction, the other direction running on).
 * New sends wait (-EAGAIN) while the messages in flight finish under the current scheme;
 * then a SCHEME control message asks the peer, repeated every RTO (doubling to 64 RTO)
 * until it answers; the peer changes too (its receives posted ahead take the new code)
 * and says so, or refuses (it is not set up for changes, or a message is arriving there),
 * and both keep the current scheme (counted: scheme_changes_refused_by_peer). Nothing in
 * flight ever sees two schemes. @return 0 (asked, or the scheme already), -EINVAL for a
 * scheme this connection cannot run (its parity region, switch_max_m, a receive-only
 * connection), -EBUSY while another change is under way (or the return to the configured
 * scheme after a peer restart, which waits for the old peer's work still out), or when the
 * peer answered a question of ours for the next message already (it decides one per point:
 * ask again once a message has gone out).
 * @p code: NULL, or s's code made by the caller (sdr_ep_code_make(), @p dec only): taken
 * (set to NULL) when the change is asked of an EC scheme; otherwise still the caller's.
 * Without it an EC code is made here, or with cfg.codes_outside asked for.
 */
int sdr_ep_change_scheme(struct sdr_ep *ep, const struct sdr_scheme *s,
			 struct ec_codec **code, uint64_t now);

/**
 * The codes of EC scheme @p s as the endpoint makes them: @p dec for its encodes and
 * decodes, @p query (may be NULL) for the reliability layer's decodability queries. For
 * cfg.codes_outside, on any thread. @return 0, -ENOMEM, -EINVAL (not an EC scheme).
 */
int sdr_ep_code_make(const struct sdr_scheme *s, struct ec_codec **dec,
		     struct ec_codec **query);

/**
 * cfg.codes_outside: the code (kind, k, m in @p s) the endpoint waits for, to follow a
 * change the peer asked for or to go back to the configured scheme after a peer restart
 * (until given, the peer's question goes unanswered: it asks again). A snapshot, safe to
 * read from another thread. @return 1 and *@p s, or 0 when none is wanted.
 */
int sdr_ep_code_wanted(const struct sdr_ep *ep, struct sdr_scheme *s);

/**
 * Give the endpoint the codes of @p s (sdr_ep_code_make(), both) that sdr_ep_code_wanted()
 * asked for; on the endpoint's thread. *@p dec NULL: they could not be made, and what
 * waits for them gives up (a change the peer asked for is refused). @return 0 (both taken,
 * *dec and *query NULL), or -ESTALE when it no longer wants them (still the caller's).
 */
int sdr_ep_code_give(struct sdr_ep *ep, const struct sdr_scheme *s, struct ec_codec **dec,
		     struct ec_codec **query);

/** The scheme of this side's sends now; *@p changing set while a change is under way. */
struct sdr_scheme sdr_ep_scheme(const struct sdr_ep *ep, int *changing);

/** A scheme change was asked at @p now (on the estimator's clock): its dwell time starts. */
void sdr_ep_auto_changed(struct sdr_ep *ep, uint64_t now);

/** A change to @p s could not be asked here at @p now (sdr_ep_change_scheme() refused it):
 * the estimator does not choose it again soon (sdr_auto_refused()). */
void sdr_ep_auto_refused(struct sdr_ep *ep, const struct sdr_scheme *s, uint64_t now);

/** The send side's loss estimator (cfg.auto_report; empty otherwise). */
const struct sdr_auto *sdr_ep_auto(const struct sdr_ep *ep);

/** The send side's paths (cfg.paths), or NULL for a connection on one path or one that
 * only receives (dir = recv: it reports, its peer chooses). */
const struct path_sel *sdr_ep_paths(const struct sdr_ep *ep);

/** Each data QPN index's next PSN on the send side (geom.ndata_qpns entries). */
const uint32_t *sdr_ep_tx_psns(const struct sdr_ep *ep);

/**
 * Place every data QPN index q on path @p want[q] (cfg.paths; a decision of
 * path_sel_decide()) from its next frame on, at @p now: each QPN that moves gets the first
 * UDP source port from its default on that hashes to its path (and, when steered, still
 * lands on the peer's queue). @return 0, -EINVAL (no paths, or a path out of range; nothing
 * moved), -EADDRNOTAVAIL (no port reaches a path: that QPN stays), -ENOMEM.
 */
int sdr_ep_set_paths(struct sdr_ep *ep, const uint8_t *want, uint64_t now);

/** The send side's RTT and delivery rate from its acknowledgements (path_est.h). */
const struct path_est *sdr_ep_path(const struct sdr_ep *ep);
/** The sender's RTO in force, and the RTT its timers derive from (rel_tx_rto()). */
uint64_t sdr_ep_rto(const struct sdr_ep *ep, uint64_t *rtt);
/** The receiver's RTO in force, and the RTT its timers derive from (rel_rx_rto()). */
uint64_t sdr_ep_rx_rto(const struct sdr_ep *ep, uint64_t *rtt);

/** A layer's counters: its table (counters.h) and the values, table->n of them. */
struct sdr_ep_counter_group {
	const struct sdr_counter_table *table;
	const uint64_t *v;
};

#define SDR_EP_NGROUPS 5

/**
 * Every counter of the connection, layer by layer: endpoint, receive, send, reliability_tx,
 * reliability_rx (what `sdrctl conn show`, telemetry and the statistics print, in that
 * order). @return SDR_EP_NGROUPS
 */
unsigned int sdr_ep_counter_groups(const struct sdr_ep *ep,
				   struct sdr_ep_counter_group g[SDR_EP_NGROUPS]);

const uint64_t *sdr_ep_rx_counters(const struct sdr_ep *ep);
const uint64_t *sdr_ep_tx_counters(const struct sdr_ep *ep);
const uint64_t *sdr_ep_rel_tx_counters(const struct sdr_ep *ep);
const uint64_t *sdr_ep_rel_rx_counters(const struct sdr_ep *ep);

/** Counter of a control message that failed validation, by enum sdr_ctrl_err. */
uint64_t sdr_ep_ctrl_err_count(const struct sdr_ep *ep, int err);

/** The handshake is done: the peer's tag is known and proven, data may flow. */
int sdr_ep_ready(const struct sdr_ep *ep);

/**
 * Whether the peer's data is refused: its HELLO names a code or chunk this side cannot
 * decode (two ends configured apart; counted in hello_scheme_refused), or it is still
 * going back to the configured scheme after a restart (scheme_resets_waited): 1 refused,
 * 2 waiting, 0 neither.
 */
int sdr_ep_rx_held(const struct sdr_ep *ep);

/** This side's tag and the peer's (0: not known yet). */
uint64_t sdr_ep_tag(const struct sdr_ep *ep);
uint64_t sdr_ep_peer_tag(const struct sdr_ep *ep);

/** The configuration the endpoint runs with. */
const struct sdr_ep_cfg *sdr_ep_config(const struct sdr_ep *ep);

#endif /* SDR_ENDPOINT_H */
