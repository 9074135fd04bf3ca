/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SDR control messages: the payload of a UC SEND Only packet to a connection's control QPN.
 * The receiver of data sends the first four to the sender of data:
 *
 *   ACK      cumulative chunk + selective window of received chunks; flag COMPLETE when
 *            every data chunk of the message is in (the sender retires the message)
 *   NACK     chunks the receiver is sure are lost (sr-nack)
 *   EC_NACK  data submessages that could not be decoded before the fallback timeout
 *   CTS      a receive was posted (clear to send): its sequence number, length and the
 *            number of receives posted so far (a cumulative credit)
 *
 * the sender of data sends SKIP to the receiver:
 *
 *   SKIP     the sender gave up messages [window start, cumulative): they timed out waiting
 *            for a receive the peer never posted, or the application that sent them went
 *            away (cancelled). The receiver fails the receives it has for them that are not
 *            complete and numbers its next receives from the cumulative point, so the next
 *            message lands in the next receive posted. Repeated until answered;
 *
 * and the receiver of data sends WITHDRAW to the sender:
 *
 *   WITHDRAW the receives for messages [window start, cumulative) were withdrawn (the
 *            application that posted them went away): the sender fails its messages for
 *            them and numbers its next messages from the cumulative point. Repeated until
 *            answered.
 *
 * The side that acts on a SKIP or a WITHDRAW answers with the same type, flag ANSWER and the
 * same points, so the other side stops repeating it. And either side sends
 *
 *   SYNC     a new application opened the connection here: value = a nonce. Repeated until
 *            the peer answers (SYNC, flag ANSWER, the same value), which it does once no SKIP
 *            or WITHDRAW of its own waits for an answer: every reset the peer started has then
 *            been acted on here, so the new application's messages and receives are numbered
 *            after everything that went before.
 *
 * For a connection with scheme auto, the receiver of data also sends
 *
 *   REPORT   what it saw of the path: value = the data packets of the messages whose last
 *            data packet has arrived (high half: those of them missing when it first did,
 *            lost on their first send; low half: all of them), each a running count modulo
 *            2^32 since the connection started. The sender's estimate of the loss rate
 *            (sdr_auto.h) takes the differences; a lost REPORT costs nothing. Sent when the
 *            counts moved, at most every quarter RTT (at least 1 ms apart).
 *
 * For a connection over several paths ([conn] paths), the receiver of data also sends
 *
 *   PATHS    per data QPN, what arrived on it: window start = the first QPN's index (its
 *            offset from the connection's first data QPN), two window words per QPN: word 0
 *            = SEEN (bit 31, a frame arrived on it) | hold code (bits 30..24: how long ago
 *            its highest PSN arrived, sdr_ctrl_hold_code()) | the highest PSN seen; word 1 =
 *            lost << 16 | packets, its PSN-judged running counts modulo 2^16 (psn_loss.h).
 *            Up to 16 QPNs a message; sent when something arrived, at most every quarter
 *            RTT. The sender times a path's round trip from them, less the hold.
 *
 * and the sender of data, to change the scheme between messages (sdr_ep_change_scheme()):
 *
 *   SCHEME   "from message cumulative on (low 32 bits), scheme value": value = kind << 32 |
 *            k << 16 | m (enum sdr_scheme_kind). Sent once no message is in flight,
 *            repeated until answered. The receiver changes (its receives posted ahead take
 *            the new code) and answers with SCHEME + ANSWER and the same value and point, or
 *            refuses with flags ANSWER | REFUSED and both keep the current scheme.
 *
 * Before any of these, each side learns the other's tag (a random 64-bit value it draws when
 * the connection starts, and again when it learns that the peer restarted):
 *
 *   HELLO    "my tag is src tag; yours, as far as I know, is dst tag (0: unknown)". Repeated
 *            until the handshake is done; a HELLO without flag ANSWER is answered with one
 *            (see sdr_peer.h). Its value names the scheme of the sender's data (bit 63 set,
 *            then SCHEME's value; 0 from a side that sends no data), which the receiver
 *            takes, or refuses, before it takes any of that data. From an endpoint that
 *            took over a rebuilt connection (sdr_ep_take_over()), to the peer of the one
 *            before it: window words 0 and 1 = the tag of that one (high word first),
 *            then bit i = it delivered the peer's message window start + i (low 32
 *            bits, modulo 2^32: no range check); at least one word of bits.
 *
 * Every control message carries both tags: dst tag = the receiver's own tag (the token: a
 * blind sender must guess 64 bits), src tag = the sender's (its epoch: a new one means the
 * peer restarted).
 *
 * Layout (network byte order), 40 bytes + 4 bytes per window word:
 *
 *   0  version (4)      1  type           2  generation     3  window words (0..32)
 *   4  message id (16)  6  flags (16)
 *   8  cumulative (32)                    12 window start (32)
 *   16 value (64): CTS: posted length; SYNC: nonce; REPORT: lost << 32 | packets; SCHEME:
 *      chunk shift << 40 | kind << 32 | k << 16 | m; HELLO: 1 << 63 | that, or 0; ACK,
 *      NACK, EC-NACK: the message's sequence number (low 32 bits: with message id and
 *      generation, which come round again every slots x generations messages, it names
 *      that one message, not a later one in its slot); SKIP, WITHDRAW: the era of the
 *      cumulative point; others 0
 *   24 dst tag (64): the receiver's tag (0 only in a HELLO that does not know it yet)
 *   32 src tag (64): the sender's tag, never 0
 *   40 window: bit i of the window (MSB first in each word) = chunk/submessage start + i
 *
 * CTS uses cumulative = receives posted so far (low 32 bits) and window start = the posted
 * receive's sequence number (low 32 bits). SKIP and WITHDRAW use cumulative = the first
 * sequence number still wanted and window start = the first given up (low 32 bits), value
 * = the era of that first one still wanted: its block of 2^32 messages since the numbering
 * of the current peer began (sdr_seq_era()), which a message replayed 2^32 messages later,
 * its low bits naming current messages again, does not have; no window.
 */
#ifndef SDR_CTRL_H
#define SDR_CTRL_H

#include <stddef.h>
#include <stdint.h>

#define SDR_CTRL_VERSION	4
#define SDR_CTRL_HDR_LEN	40
#define SDR_CTRL_MAX_WORDS	32
#define SDR_CTRL_MAX_BITS	(SDR_CTRL_MAX_WORDS * 32)
#define SDR_CTRL_MAX_LEN	(SDR_CTRL_HDR_LEN + 4 * SDR_CTRL_MAX_WORDS)

enum sdr_ctrl_type {
	SDR_CTRL_ACK = 1,
	SDR_CTRL_NACK = 2,
	SDR_CTRL_EC_NACK = 3,
	SDR_CTRL_CTS = 4,
	SDR_CTRL_SKIP = 5,
	SDR_CTRL_WITHDRAW = 6,
	SDR_CTRL_SYNC = 7,
	SDR_CTRL_HELLO = 8,
	SDR_CTRL_REPORT = 9,
	SDR_CTRL_SCHEME = 10,
	SDR_CTRL_PATHS = 11,
};

/* HELLO of an endpoint that took over: the tag of the one before leads its window */
#define SDR_CTRL_HELLO_TAG_WORDS 2

/* PATHS: per data QPN two window words, from QPN index window start on */
#define SDR_CTRL_PATHS_PER_MSG	(SDR_CTRL_MAX_WORDS / 2)
#define SDR_CTRL_PATHS_SEEN	0x80000000u	/**< word 0: a frame arrived on the QPN */
#define SDR_CTRL_PATHS_HOLD_SHIFT 24		/**< word 0: bits 30..24, the hold code */

/** PATHS hold code of @p ns (how long the highest PSN waited for the report): 0 under 1 us,
 * else 1 + floor(8 log2(us)), at most 127 (about 55 ms and more). */
unsigned int sdr_ctrl_hold_code(uint64_t ns);

/** The least hold a code stands for, in ns (0 for code 0): never more than the real one. */
uint64_t sdr_ctrl_hold_ns(unsigned int code);

#define SDR_CTRL_F_COMPLETE	0x0001u	/**< ACK: every data chunk is in */
#define SDR_CTRL_F_FAILED	0x0002u	/**< ACK: the receiver gave the message up */
#define SDR_CTRL_F_ANSWER	0x0004u	/**< SKIP, WITHDRAW, SYNC, HELLO, SCHEME: the peer acted
					 *   on ours */
#define SDR_CTRL_F_REFUSED	0x0008u	/**< SCHEME + ANSWER: the peer keeps the current scheme */
#define SDR_CTRL_F_KNOWN	(SDR_CTRL_F_COMPLETE | SDR_CTRL_F_FAILED | SDR_CTRL_F_ANSWER | \
				 SDR_CTRL_F_REFUSED)

struct sdr_ctrl {
	uint8_t type;
	uint8_t gen;
	uint8_t nwords;
	uint16_t msg_id;
	uint16_t flags;
	uint32_t cum;
	uint32_t win_start;
	uint64_t value;
	uint64_t dst_tag;
	uint64_t src_tag;
	uint32_t win[SDR_CTRL_MAX_WORDS];
};

/* Every reason a control payload is refused. */
#define SDR_CTRL_ERRORS(X) \
	X(SHORT,	"ctrl_short",		"shorter than the 40-byte header") \
	X(VERSION,	"ctrl_bad_version",	"version is not 4 (a peer of another control version: both ends must run the same)") \
	X(TYPE,		"ctrl_bad_type",	"unknown message type") \
	X(WORDS,	"ctrl_bad_window",	"more than 32 window words") \
	X(LENGTH,	"ctrl_bad_length",	"length disagrees with the window size") \
	X(FLAGS,	"ctrl_bad_flags",	"unknown flag bits, or a flag its type does not take") \
	X(RANGE,	"ctrl_bad_range",	"window runs past 2^32 (but HELLO's)") \
	X(VALUE,	"ctrl_bad_value",	"value field set on a type that has none (CTS, SYNC, REPORT, SCHEME, HELLO have one; ACK, NACK, EC-NACK, SKIP, WITHDRAW one of 32 bits), window on a CTS, SKIP, WITHDRAW, SYNC, REPORT or SCHEME, a PATHS window of an odd or zero number of words, or a HELLO window of 1 or 2 words") \
	X(TAG,		"ctrl_bad_tag",		"source tag is 0")

enum sdr_ctrl_err {
	SDR_CTRL_OK = 0,
#define X(sym, name, doc) SDR_CTRL_E_##sym,
	SDR_CTRL_ERRORS(X)
#undef X
	SDR_CTRL_E_COUNT
};

/** Counter name of an error ("ctrl_short", ...). */
const char *sdr_ctrl_err_name(int err);

/** One-line description of an error. */
const char *sdr_ctrl_strerror(int err);

/**
 * Encode a control message.
 * @return bytes written (40 + 4 * nwords), or -ENOSPC / -EINVAL (nwords > 32).
 */
int sdr_ctrl_encode(const struct sdr_ctrl *c, uint8_t *buf, size_t cap);

/**
 * Decode and validate a control payload. Never reads past @p len.
 * @return 0, or -enum sdr_ctrl_err.
 */
int sdr_ctrl_decode(const uint8_t *buf, size_t len, struct sdr_ctrl *c);

/** Bit i of the window. */
static inline int
sdr_ctrl_win_bit(const struct sdr_ctrl *c, uint32_t i)
{
	return (int)((c->win[i / 32] >> (31 - i % 32)) & 1u);
}

static inline void
sdr_ctrl_win_set(struct sdr_ctrl *c, uint32_t i)
{
	c->win[i / 32] |= 1u << (31 - i % 32);
}

/** Name of a type ("ACK", "NACK", "EC-NACK", "CTS", "SKIP", "WITHDRAW", "SYNC", "HELLO",
 * "REPORT", "SCHEME", "PATHS"). */
const char *sdr_ctrl_type_name(uint8_t type);

/*
 * Which part of a connection a control message is for, once the handshake took it
 * (sdr_peer_input() said ACCEPT): symbol, name, what takes it. Every transport's adapter
 * (the dataplane's endpoint, sdr-verbs-peer) routes by this one table, so a message cannot
 * reach the send side in one and the receive side in another.
 */
#define SDR_CTRL_ROUTES(X) \
	X(SEND,		"send",		"the send side's reliability (rel_tx_on_ctrl()): ACK, NACK, " \
					"EC-NACK, CTS, WITHDRAW, the answer to a SKIP; after a " \
					"WITHDRAW the packetizer numbers on from rel_tx_next_seq()") \
	X(SKIP,		"skip",		"the receive side: messages the sender gave up " \
					"(rel_rx_on_skip(), then sdr_rx_skip_to())") \
	X(WITHDRAWN,	"withdrawn",	"the receive side: the sender's answer to its WITHDRAW " \
					"(rel_rx_on_withdraw_answer())") \
	X(REPORT,	"report",	"the loss estimate of scheme auto (the receiver's counts)") \
	X(PATHS,	"paths",	"the path estimates of a connection with several paths") \
	X(SCHEME,	"scheme",	"a scheme change asked by the peer, or its answer to ours") \
	X(SYNC,		"sync",		"a new application at the peer: answer once its resets are done") \
	X(SYNC_ANSWER,	"sync_answer",	"the peer's answer to our SYNC") \
	X(HELLO,	"hello",	"the handshake: sdr_peer_input() takes it, never ACCEPTs it")

enum sdr_ctrl_route {
#define X(sym, name, doc) SDR_ROUTE_##sym,
	SDR_CTRL_ROUTES(X)
#undef X
	SDR_ROUTE_COUNT
};

/** Where decoded message @p c goes (its type and flags decide). */
enum sdr_ctrl_route sdr_ctrl_route(const struct sdr_ctrl *c);

/** Name of a route ("send", "skip", ...), or "invalid". */
const char *sdr_ctrl_route_name(enum sdr_ctrl_route r);

#endif /* SDR_CTRL_H */
