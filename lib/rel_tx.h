/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sender state machine of the reliability layer (one per connection).
 *
 * It decides which chunk goes out next and when: new data chunks in order, parity chunks
 * after the data of their submessage (EC), retransmissions (SR timers, NACKs, EC-NACKs, the
 * EC silence timeout) before the new chunks of their priority, all paced at the configured
 * rate. A message starts
 * only when the receiver has posted a receive for it (CTS credit), and ends when the
 * receiver acknowledges it complete, or when the global timeout fires.
 *
 * EC sending order (docs/architecture.md, "Reliability"): for each data submessage s, its k
 * data chunks, then a request to encode s, then its m parity chunks as soon as the caller
 * reports them ready — meanwhile the data of s+1 keeps flowing, so encoding never stalls
 * injection.
 *
 * Time is an argument; nothing here reads a clock or allocates after rel_tx_create().
 */
#ifndef SDR_REL_TX_H
#define SDR_REL_TX_H

#include <stdint.h>

#include "counters.h"
#include "path_est.h"
#include "sdr_conn.h"
#include "sdr_ctrl.h"
#include "sdr_rel.h"

#define REL_TX_COUNTERS(X) \
	X(SUBMITTED, "msgs_submitted", OK, \
	  "messages accepted for sending (submit or stream submit), each then waits for its CTS") \
	X(COMPLETED, "msgs_completed", OK, \
	  "messages that ended OK: the receiver's final ACK said COMPLETE") \
	X(FAILED, "msgs_failed", ERROR, \
	  "messages that ended failed: receiver FAILED ACK, CTS length mismatch, WITHDRAW, peer " \
	  "restart") \
	X(TIMEOUTS, "msgs_timed_out", ERROR, \
	  "messages that hit the global timeout, incl. those behind one that never got a receive") \
	X(DATA_SENT, "data_chunks_sent", OK, \
	  "data chunks handed out to be sent for the first time") \
	X(PARITY_SENT, "parity_chunks_sent", OK, \
	  "EC parity chunks handed out; parity goes out once and is never retransmitted") \
	X(RETRANSMITS, "chunks_retransmitted", INFO, \
	  "data chunks sent again, whatever the cause: RTO, NACK, EC fallback, silence probe, " \
	  "stream resend") \
	X(RTO_FIRED, "rto_expired", INFO, \
	  "timer expiries of data chunks whose latest send is unacked (per chunk per expiry); " \
	  "each is queued to resend") \
	X(RTO_BACKOFFS, "rto_backoffs", INFO, \
	  "RTO doublings after a timer expiry; only with a measured RTO, at most once per RTO, " \
	  "capped") \
	X(NACKED, "chunks_nacked", INFO, \
	  "data chunks named in a received NACK and not sent within the last RTT, so queued for " \
	  "resend") \
	X(EC_NACKS, "ec_nacks_received", INFO, \
	  "EC-NACK control messages received for a message in flight (each may name many " \
	  "submessages)") \
	X(FALLBACK_SUBS, "submessages_fallen_back", INFO, \
	  "EC submessages switched to SR retransmission by an EC-NACK, once per submessage") \
	X(SILENCE_PROBES, "silence_fallbacks", INFO, \
	  "EC messages injected whole that heard nothing for the silence gap (fallback slack " \
	  "+ RTO, doubling per probe): the first unacknowledged chunk is resent under SR") \
	X(ACKS, "acks_received", OK, \
	  "plausible ACKs received for a message in flight, final COMPLETE and FAILED ACKs " \
	  "included") \
	X(CTS, "cts_received", OK, \
	  "plausible CTS received, repeats included (a CTS is counted even if it grants no new " \
	  "credit)") \
	X(CTS_LEN_MISMATCH, "cts_length_mismatch", ERROR, \
	  "messages failed because the CTS for them announced a receive length other than theirs") \
	X(CTRL_UNKNOWN_MSG, "ctrl_for_unknown_message", DROP, \
	  "ACK, NACK or EC-NACK ignored: no message in flight with its slot and gen, or it still " \
	  "awaits CTS") \
	X(TIMER_FULL, "timer_ring_full", ERROR, \
	  "chunks denied a retransmission timer or retransmit queue entry because that ring was " \
	  "full (timer_slots)") \
	X(STREAM_RESENDS, "stream_chunks_resent", INFO, \
	  "streamed chunks already sent and unacked that the application marked ready again, " \
	  "queued for resend") \
	X(NO_RECEIVE, "no_receive_timeouts", ERROR, \
	  "times a message waiting for CTS hit the global timeout: it and all later ones time " \
	  "out, SKIP follows") \
	X(SKIPS_SENT, "skips_sent", INFO, \
	  "SKIP control messages sent for given-up messages, repeats included (backoff doubles " \
	  "up to 64 RTO)") \
	X(SKIPS_ANSWERED, "skips_answered", OK, \
	  "SKIP answers received from the receiver that cover no more than the SKIPs this end " \
	  "sent") \
	X(CANCELLED, "msgs_cancelled", ERROR, \
	  "messages in flight ended as cancelled because the application aborted the connection") \
	X(WITHDRAWN, "msgs_withdrawn_by_receiver", ERROR, \
	  "messages in flight failed because the receiver withdrew their receives (also counted " \
	  "in msgs_failed)") \
	X(WITHDRAW_ANSWERS, "withdraw_answers_sent", OK, \
	  "answers sent to plausible WITHDRAWs; WITHDRAWs arriving before it goes out share one " \
	  "answer") \
	X(PACED_WAITS, "paced_waits", INFO, \
	  "sender polls that returned nothing while the pacer was out of tokens (per poll, not " \
	  "per chunk)") \
	X(PEER_RESTART, "msgs_failed_peer_restart", ERROR, \
	  "messages in flight failed because the peer restarted (also in msgs_failed; kept " \
	  "messages not counted)") \
	X(DELIVERED_AT_RESTART, "msgs_delivered_at_restart", OK, \
	  "messages in flight when the peer rebuilt its connection that its previous endpoint " \
	  "had delivered (HELLO's window): completed OK, not failed") \
	X(ACK_IMPLAUSIBLE, "acks_implausible", DROP, \
	  "aCKs ignored because they acknowledge a chunk not yet sent, or say COMPLETE before " \
	  "all chunks went out") \
	X(CTS_IMPLAUSIBLE, "cts_implausible", DROP, \
	  "CTS ignored: its range is empty or wider than the slots, or its count runs a window " \
	  "past this end's messages") \
	X(WITHDRAW_IMPLAUSIBLE, "withdraws_implausible", DROP, \
	  "wITHDRAWs ignored: the range is wider than the window or ends more than a window past " \
	  "this end's messages") \
	X(SKIP_ANSWER_IMPLAUSIBLE, "skip_answers_implausible", DROP, \
	  "SKIP answers ignored because they reach past the highest SKIP this end sent") \
	X(SKIP_RANGES_MERGED, "skip_ranges_merged", ERROR, \
	  "runs of given-up messages joined to another run's SKIP over the messages between " \
	  "because 8 runs were owed already: the receives of those messages fail too")

enum rel_tx_counter {
#define X(sym, name, kind, doc) REL_TX_##sym,
	REL_TX_COUNTERS(X)
#undef X
	REL_TX_NCOUNTERS
};

/** The counters as a table (counters.h): name, kind, meaning. */
extern const struct sdr_counter_table rel_tx_counter_table;

const char *rel_tx_counter_name(enum rel_tx_counter c);

enum rel_unit_kind {
	REL_UNIT_DATA,		/**< send data chunk @c index */
	REL_UNIT_PARITY,	/**< send parity chunk @c index (submessage index * m + j) */
	REL_UNIT_ENCODE,	/**< compute the parity of submessage @c index, then call
				 *   rel_tx_parity_ready() */
};

/** One thing to do now. */
struct rel_tx_unit {
	uint32_t ctx;		/**< the message's context (stable while it is in flight) */
	uint64_t seq;
	uint32_t slot;
	uint32_t gen;
	uint8_t kind;		/**< enum rel_unit_kind */
	uint8_t retransmit;	/**< this chunk was sent before */
	uint32_t index;
	uint32_t bytes;		/**< payload bytes of the chunk (0 for ENCODE) */
	uint64_t cookie;
};

struct rel_tx;

/**
 * @return NULL on bad attributes or configuration (EC without k, m matching the
 *   connection's parity region; k, m of the connection ignored for SR), or no memory.
 */
struct rel_tx *rel_tx_create(const struct sdr_rel_cfg *cfg, const struct sdr_conn_attr *attr);
void rel_tx_destroy(struct rel_tx *tx);

/**
 * Queue a message of @p len bytes. It gets the next sequence number and waits for CTS.
 * @return the context index (>= 0), -EAGAIN (max in flight, or the next slot still in
 *   flight), -EMSGSIZE.
 */
int rel_tx_submit(struct rel_tx *tx, uint64_t len, uint64_t cookie, uint64_t now);

/**
 * Queue a streamed message: like rel_tx_submit(), but no chunk goes out until the caller
 * says it is ready with rel_tx_stream_add(). Chunks are sent in order as the ready prefix
 * grows; reliability (timers, ACKs, parity) is the same as for a whole message.
 */
int rel_tx_submit_stream(struct rel_tx *tx, uint64_t len, uint64_t cookie, uint64_t now);

/** The most timer entries sdr_rel_cfg.timer_slots 0 sizes a sender for (24 bytes each). */
#define REL_TX_TIMER_SLOTS_MAX (1u << 22)

/** Priorities of a message: 0 (the default) .. REL_TX_PRIO_MAX. */
#define REL_TX_PRIO_MAX 3

/**
 * Give message @p ctx (as submitted) priority @p prio: its chunks, new and resent, go out
 * before those of messages of a lower priority, whatever their order; within a priority
 * retransmissions go first. A large message at 0 and a small one at 1 submitted after it:
 * the small one's chunks overtake the large one's that have not gone out yet and the large
 * one's retransmissions. Before the message starts (before its first chunk, as the SDK
 * sets it at posting). @return 0, -EINVAL, or -EBUSY once it started.
 */
int rel_tx_set_prio(struct rel_tx *tx, uint32_t ctx, unsigned int prio);

/**
 * Chunks [@p first, @p first + @p n) of streamed message (@p ctx, @p seq) are ready. A chunk
 * that went out already is sent again (the application retransmits it).
 * @return chunks newly ready or queued again, -ENOENT (no such message in flight), -ERANGE.
 */
int rel_tx_stream_add(struct rel_tx *tx, uint32_t ctx, uint64_t seq, uint32_t first, uint32_t n);

/** The end of a stream: every chunk not given yet is ready. @return 0, -ENOENT. */
int rel_tx_stream_end(struct rel_tx *tx, uint32_t ctx, uint64_t seq);

/**
 * The application went away: every message in flight ends now with SDR_DONE_CANCELLED, and
 * the receiver is told with SKIP (repeated until it answers) so it fails the receives it
 * posted for them and numbers its next receives after them.
 * @return messages cancelled.
 */
uint32_t rel_tx_cancel(struct rel_tx *tx, uint64_t now);

/**
 * The peer restarted: every message in flight fails (nothing is owed to the old peer: no
 * SKIP), and numbering continues from sdr_seq_epoch_base(), where a fresh peer's count
 * lines up with ours. Unless nothing of this epoch went out yet (every message numbered
 * since its start still waits, none sent) and @p keep: then they stay, numbered as they
 * are, for the new peer (not when they would go out on another scheme than the new peer
 * expects). @return where numbering continues.
 */
uint64_t rel_tx_reset(struct rel_tx *tx, uint64_t now, int keep);

/**
 * Before rel_tx_reset(), when the peer's restart is a rebuild of its connection that took
 * over from the endpoint before (sdr_ep_take_over()): that endpoint delivered the messages
 * @p win names (@p nwords words, bit i MSB first: message @p start + i, low 32 bits). Those
 * in flight with every data chunk sent complete OK; only their final ACK was lost. A bit
 * for a message not sent whole is not plausible and is ignored. @return messages completed.
 */
uint32_t rel_tx_delivered(struct rel_tx *tx, uint32_t start, const uint32_t *win,
			  uint32_t nwords, uint64_t now);

/**
 * Handle a control message from the receiver (ACK, NACK, EC-NACK, CTS, WITHDRAW, or the
 * answer to our SKIP). After a WITHDRAW, rel_tx_next_seq() may have moved forward: the
 * packetizer must follow (sdr_tx_skip_to()).
 */
void rel_tx_on_ctrl(struct rel_tx *tx, const struct sdr_ctrl *c, uint64_t now);

/**
 * The next thing to do at @p now, if any; the caller must do it (build and send the
 * chunk's packets, or encode). Call repeatedly until it returns 0.
 * @return 1 with @p u filled, or 0.
 */
int rel_tx_next(struct rel_tx *tx, uint64_t now, struct rel_tx_unit *u);

/** The caller finished encoding submessage @p sub of message context @p ctx. */
void rel_tx_parity_ready(struct rel_tx *tx, uint32_t ctx, uint64_t seq, uint32_t sub);

/** Earliest time rel_tx_next() may have something to do (UINT64_MAX: nothing pending). */
uint64_t rel_tx_next_time(struct rel_tx *tx, uint64_t now);

/** Take one completion (messages acknowledged complete, failed or timed out). @return 1/0. */
int rel_tx_poll_done(struct rel_tx *tx, struct sdr_rel_done *d);

/** A SKIP of ours waits for the receiver's answer. */
int rel_tx_resetting(const struct rel_tx *tx);

/** Messages submitted and not yet completed. */
uint32_t rel_tx_inflight(const struct rel_tx *tx);

/** The path's RTT and delivery rate as the acknowledgements showed them (path_est.h). */
const struct path_est *rel_tx_path(const struct rel_tx *tx);

/**
 * The retransmission timeout in force, and the RTT the sender's timers derive from (@p rtt,
 * may be NULL): the configured ones, or with cfg.rto_measured and enough samples, the
 * smallest RTT measured in the last 10-20 s (path_est.h) and RTO = (1 + alpha) times it,
 * but never under the smoothed RTT + 4 deviations (RFC 6298), so queueing on the path does
 * not make every chunk time out. While no sample comes (every message resent: Karn's rule,
 * as when the configured RTT is far too short), each RTO that expires doubles it, once per
 * RTO, up to 64 times the configured one or 1 s (rto_backoffs); the next sample ends that.
 * @return the RTO in ns.
 */
uint64_t rel_tx_rto(const struct rel_tx *tx, uint64_t *rtt);

/**
 * Send the next messages with scheme @p s (cfg.scheme_may_change), on chunks of its chunk
 * shift. Only between messages:
 * @return 0, -EBUSY while a message is submitted and not done, -EINVAL for a scheme the
 * connection's parity region or chunk shift cannot hold (sdr_rel_code_fits()).
 */
int rel_tx_set_scheme(struct rel_tx *tx, const struct sdr_scheme *s);

/** The sequence number the next message gets. */
uint64_t rel_tx_next_seq(const struct rel_tx *tx);

/**
 * A control message the sender owes the receiver, if any: the answer to a WITHDRAW, or SKIP
 * while messages it gave up (timed out waiting for receives the peer never posted, or
 * cancelled) are not yet known to the receiver (repeated every RTO, doubling, until the
 * receiver answers or, for messages that never had a receive, its CTS count past them).
 * @return 1 with @p c filled, or 0.
 */
int rel_tx_next_ctrl(struct rel_tx *tx, uint64_t now, struct sdr_ctrl *c);

const uint64_t *rel_tx_counters(const struct rel_tx *tx);

#endif /* SDR_REL_TX_H */
