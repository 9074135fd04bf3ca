/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiver state machine of the reliability layer (one per connection).
 *
 * Told which chunks of which posted message arrived (data or parity), it decides the
 * control messages to send back and when:
 *
 *   CTS      when a receive is posted, repeated every RTO until its first chunk arrives;
 *   ACK      SR: cumulative chunk + a window of up to 1024 chunk bits, every
 *            ack_every_chunks new chunks and/or every ack_every_ns, and always at
 *            completion (flag COMPLETE). EC: only the positive ACK at completion, plus SR
 *            ACKs for the submessages that fell back;
 *   NACK     sr-nack: holes that are sure losses — behind a chunk that arrived at least the
 *            reordering allowance ago, or at the tail once nothing arrived for the
 *            allowance plus RTT/8 (see docs/architecture.md, "Reliability");
 *   EC-NACK  EC: at the fallback timeout FTO = (M + ceil(M/R)) * T_INJ + beta * RTT after the
 *            first arrival, the data submessages still undecodable; repeated every RTO
 *            while any remain;
 *   WITHDRAW when the application goes away with receives posted (rel_rx_withdraw()), until
 *            the sender answers; and the answer to each SKIP;
 *
 * and which submessages to decode (as soon as one is decodable with data missing).
 * A completed message is re-acknowledged (rate-limited) whenever late packets show the
 * sender has not heard the final ACK.
 *
 * Time is an argument; nothing here reads a clock or allocates after rel_rx_create().
 */
#ifndef SDR_REL_RX_H
#define SDR_REL_RX_H

#include <stdint.h>

#include "counters.h"
#include "path_est.h"
#include "sdr_conn.h"
#include "sdr_ctrl.h"
#include "sdr_rel.h"

struct ec_codec;

#define REL_RX_COUNTERS(X) \
	X(POSTED, "recvs_posted", OK, \
	  "receives accepted by the reliability layer, each then owes the sender a CTS") \
	X(COMPLETED, "recvs_completed", OK, \
	  "receives completed OK: every data chunk is in, arrived or rebuilt by EC decode") \
	X(TIMEOUTS, "recvs_timed_out", ERROR, \
	  "open receives that hit the global timeout; each ends timed out and a FAILED final ACK " \
	  "is sent") \
	X(CHUNKS, "chunks_arrived", OK, \
	  "new data chunks arrived for an open receive (duplicates and decoded chunks not " \
	  "counted)") \
	X(PARITY_CHUNKS, "parity_chunks_arrived", OK, \
	  "new EC parity chunks arrived for an open receive (duplicates not counted)") \
	X(DUP_CHUNKS, "chunks_arrived_twice", INFO, \
	  "data or parity chunks arriving for an open receive that already has them, decoded " \
	  "ones included") \
	X(DECODES, "submessages_decoded", OK, \
	  "EC submessages whose missing data chunks were rebuilt from parity and applied to an " \
	  "open receive") \
	X(ACKS, "acks_sent", OK, \
	  "aCKs sent for receives not yet released: progress ACKs and final COMPLETE or FAILED " \
	  "ACKs, repeats included") \
	X(NACKS, "nacks_sent", INFO, \
	  "SR-NACK control messages sent, each naming up to one window of chunks considered lost") \
	X(EC_NACKS, "ec_nacks_sent", INFO, \
	  "eC-NACKs sent after the fallback timeout, naming undecodable submessages; repeated " \
	  "every RTO") \
	X(CTS, "cts_sent", OK, \
	  "CTS sent for open receives; repeated until the first chunk arrives (after 1, 2, 4, " \
	  "then every 8 RTOs), and after a handshake") \
	X(REACKS, "late_reacks_sent", INFO, \
	  "final ACKs sent for released receives, on a late packet or when released before the " \
	  "final ACK went out") \
	X(FTO_FIRED, "fallback_timeouts", INFO, \
	  "EC receives whose fallback timer expired before completion (once per receive): SR " \
	  "ACKs and EC-NACKs follow") \
	X(WRONG_LENGTH, "recvs_failed_wrong_length", ERROR, \
	  "open receives failed because a data packet under their R_Key has an offset or " \
	  "length only a message of another length has; a FAILED final ACK is sent") \
	X(SKIPPED, "recvs_skipped_by_sender", ERROR, \
	  "open receives failed because a SKIP said the sender gave up their messages") \
	X(SKIP_ANSWERS, "skip_answers_sent", OK, \
	  "answers sent to plausible SKIPs; SKIPs arriving before it goes out share one answer") \
	X(WITHDRAWN, "recvs_withdrawn_incomplete", ERROR, \
	  "open receives given up by a local abort (complete or failed ones not counted); the " \
	  "sender is told") \
	X(WITHDRAWS, "withdraws_sent", INFO, \
	  "WITHDRAW control messages sent, repeats included (gap doubles up to 64 RTO until " \
	  "answered)") \
	X(WITHDRAWS_ANSWERED, "withdraws_answered", OK, \
	  "WITHDRAW answers received from the sender that cover no more than the WITHDRAWs this " \
	  "end sent") \
	X(PEER_RESTART, "recvs_failed_peer_restart", ERROR, \
	  "open receives failed because the peer restarted (receives kept for the new peer not " \
	  "counted)") \
	X(SKIP_IMPLAUSIBLE, "skips_implausible", DROP, \
	  "sKIPs ignored: range reversed or wider than the window, or ending a window past this " \
	  "end's posted receives") \
	X(WITHDRAW_ANSWER_IMPLAUSIBLE, "withdraw_answers_implausible", DROP, \
	  "WITHDRAW answers ignored because they reach past the highest WITHDRAW this end sent")

enum rel_rx_counter {
#define X(sym, name, kind, doc) REL_RX_##sym,
	REL_RX_COUNTERS(X)
#undef X
	REL_RX_NCOUNTERS
};

/** The counters as a table (counters.h): name, kind, meaning. */
extern const struct sdr_counter_table rel_rx_counter_table;

const char *rel_rx_counter_name(enum rel_rx_counter c);

/** A submessage to decode: its data chunks [first, first + count) have holes. */
struct rel_rx_decode {
	uint32_t ctx;
	uint64_t seq;
	uint32_t slot;
	uint32_t sub;
	uint32_t first;		/**< first data chunk of the submessage */
	uint32_t count;		/**< data chunks in it (k, or fewer for the last one) */
	uint64_t cookie;
};

struct rel_rx;

/** @return NULL on bad attributes/configuration or no memory. */
struct rel_rx *rel_rx_create(const struct sdr_rel_cfg *cfg, const struct sdr_conn_attr *attr);
void rel_rx_destroy(struct rel_rx *rx);

/**
 * A receive was posted (sdr_rx_post() gave the slot of sequence number @p seq).
 * @return context index (>= 0), -EAGAIN (no context free) or -EMSGSIZE (@p len above
 *   the connection's max_msg_size).
 */
int rel_rx_post(struct rel_rx *rx, uint64_t seq, uint32_t slot, uint64_t len, uint64_t cookie,
		uint64_t now);

/**
 * Chunk @p chunk of the message in @p slot is complete: a data chunk index, or for parity
 * nchunks + parity index (the numbering of sdr_rx_chunk_bits()).
 * @return 1 if it was new, 0 if the chunk was already in (a duplicate: call
 *   rel_rx_on_late()), -1 if no posted message matches (also rel_rx_on_late()).
 */
int rel_rx_on_chunk(struct rel_rx *rx, uint32_t slot, uint32_t chunk, uint64_t now);

/**
 * A packet arrived for a message already complete or released (late_packet,
 * msg_already_complete, duplicate): the sender may have missed an ACK.
 */
void rel_rx_on_late(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now);

/**
 * A packet of the receive released from @p slot before the one posted there now
 * (late_packet_previous: its generation and R_Key): the sender may have missed its final
 * ACK, which goes again (at most once a quarter RTT).
 */
void rel_rx_on_late_previous(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now);

/**
 * A data packet under the receive's R_Key in @p slot (generation @p gen) whose offset or
 * payload length only a message of another length has (offset_out_of_range,
 * bad_payload_length): the sender's message is not the receive's length. The receive fails
 * now, and the sender is told with a FAILED final ACK, rather than completing cut short or
 * waiting for bytes that never come.
 */
void rel_rx_on_wrong_length(struct rel_rx *rx, uint32_t slot, uint32_t gen, uint64_t now);

/**
 * Is the decode of submessage @p sub of message @p seq (in context @p ctx) still wanted:
 * the receive still open and the submessage not done? A decode that ran elsewhere asks
 * before its result goes into the buffer.
 */
int rel_rx_decode_wanted(const struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub);

/** The data chunks of a submessage were rebuilt (after a rel_rx_next_decode() request). */
void rel_rx_decoded(struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub, uint64_t now);

/**
 * A decode asked for (rel_rx_next_decode()) will not run: it failed, or the caller could not
 * keep the request. The submessage is no longer pending: the next arrival asks again, and
 * the EC-NACKs list it until then.
 */
void rel_rx_decode_dropped(struct rel_rx *rx, uint32_t ctx, uint64_t seq, uint32_t sub);

/** The application released the message in @p slot (recv_complete). */
void rel_rx_release(struct rel_rx *rx, uint32_t slot);

/** The next control message to send at @p now. @return 1 with @p c filled, or 0. */
int rel_rx_next_ctrl(struct rel_rx *rx, uint64_t now, struct sdr_ctrl *c);

/**
 * The sender gave up messages [@p lo, @p hi) (SKIP): receives posted for them that are not
 * complete fail (they would wait for nothing), receives are numbered from @p hi on, and the
 * sender is answered. @p era is the SKIP's (sdr_seq_era() of @p hi: another era's SKIP is
 * implausible). Returns the sequence number the receive side must number from (@p hi or
 * beyond).
 */
uint64_t rel_rx_on_skip(struct rel_rx *rx, uint64_t lo, uint64_t hi, uint64_t era, uint64_t now);

/**
 * The application went away: every receive posted (complete or not) is to be released. Fills
 * @p slots (room for max_inflight) with their slots, for the caller to release each
 * (rel_rx_release() and the receive side), and tells the sender with WITHDRAW, repeated until
 * it answers, that the receives not yet complete are gone: it fails its messages for them and
 * numbers its next messages after them. Receives given up earlier (released while open)
 * whose messages the sender has not started are in that range too.
 * @return the number of slots.
 */
uint32_t rel_rx_withdraw(struct rel_rx *rx, uint64_t now, uint32_t *slots);

/**
 * The peer restarted: every receive posted and not complete fails, nothing is owed to the
 * old peer (ACKs, re-ACKs, answers, WITHDRAW), and receives are numbered from
 * sdr_seq_epoch_base(). Unless none of this epoch's receives took a chunk or ended, and
 * @p may_keep (the caller knows of no packet placed or being placed in any): they stay, for
 * the new peer. @return where numbering continues.
 */
uint64_t rel_rx_reset(struct rel_rx *rx, uint64_t now, int may_keep);

/**
 * Where the current peer's numbering began: the number of the first receive its messages
 * fill (receives kept over its restart by rel_rx_reset() are numbered from here on).
 */
uint64_t rel_rx_epoch(const struct rel_rx *rx);

/** The receive in @p slot is posted and has not ended (complete, failed, timed out). */
int rel_rx_slot_open(const struct rel_rx *rx, uint32_t slot);

/** Send the CTS of every receive still waiting for its first chunk now (a new peer). */
void rel_rx_cts_now(struct rel_rx *rx, uint64_t now);

/** A WITHDRAW of ours waits for the sender's answer. */
int rel_rx_resetting(const struct rel_rx *rx);

/** The sender answered our WITHDRAW up to @p hi (a 32-bit point, as on the wire, in era
 * @p era: sdr_seq_era()). */
void rel_rx_on_withdraw_answer(struct rel_rx *rx, uint32_t hi, uint64_t era);

/** The next submessage to decode. @return 1 with @p d filled, or 0. */
int rel_rx_next_decode(struct rel_rx *rx, struct rel_rx_decode *d);

/** Earliest time something is due (UINT64_MAX: nothing). */
uint64_t rel_rx_next_time(struct rel_rx *rx, uint64_t now);

/** Take one completion (complete, or timed out). @return 1/0. */
int rel_rx_poll_done(struct rel_rx *rx, struct sdr_rel_done *d);

/**
 * Receive the next messages under scheme @p s (cfg.scheme_may_change), on chunks of its
 * chunk shift; the receives posted ahead take it too. @p made: NULL, or s's code for the
 * decodability queries made already (a cache of one decode table; taken on success).
 * @return 0, -EBUSY while a posted message has data in, -EINVAL for a scheme the parity
 * region or chunk shift cannot hold, -ENOMEM.
 */
int rel_rx_set_scheme(struct rel_rx *rx, const struct sdr_scheme *s, struct ec_codec **made);

/**
 * The receiver's timers: the RTO in force (the CTS, EC-NACK and WITHDRAW repeats) and the
 * RTT they derive from (@p rtt, may be NULL; a NACK round lasts it plus a margin, the EC
 * fallback timeout's slack is beta times it). The configured ones, or with cfg.rto_measured
 * and SDR_REL_RTO_MIN_SAMPLES samples, the smallest time from a receive's first CTS to its
 * first chunk in the last 10-20 s (rel_rx_path()) and RTO = (1 + alpha) times it.
 * @return the RTO in ns.
 */
uint64_t rel_rx_rto(const struct rel_rx *rx, uint64_t *rtt);

/** The CTS of every receive posted so far reached the sender before the clock started (a
 * simulation's start, sdr_sim.h): they take no RTT sample. */
void rel_rx_cts_given(struct rel_rx *rx);

/** The RTT samples the receiver took: a receive's first CTS to its first chunk. */
const struct path_est *rel_rx_path(const struct rel_rx *rx);

const uint64_t *rel_rx_counters(const struct rel_rx *rx);

#endif /* SDR_REL_RX_H */
