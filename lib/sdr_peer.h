/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handshake of a connection and the checks every control message passes first: each
 * side's tag (its epoch and the other side's token), learned and proven as an SCTP
 * verification tag is, and a restarted peer told from a forged one.
 *
 * Each side draws a random 64-bit tag when the connection starts. Every control message
 * carries dst tag = the receiver's tag and src tag = the sender's. A message whose dst tag
 * is ours is *proven*: only someone who received one of our packets (on the path to the
 * configured peer) can know our tag. Anything else is dropped, except a HELLO, which only
 * ever teaches us a tag, never moves message state:
 *
 *  - HELLO (no ANSWER) is answered with HELLO + ANSWER carrying our tag and theirs;
 *  - we send HELLO every RTO (doubling to 64 RTO) until the handshake is done: we know the
 *    peer's tag from a proven message, and one of ours carrying it was sent before that
 *    message came (so the peer knows ours as well);
 *  - before that, an unproven HELLO sets the peer's tag tentatively (the latest wins, so a
 *    forged one is replaced by the next genuine one) and gets its answer, one frame for
 *    one (our next HELLO comes within an RTO, not at once); a proven one sets it for good;
 *  - after that, an unproven HELLO (a restarted peer, or a forger) is answered at most once
 *    per RTO and changes nothing; a *proven* message from a tag that is not the peer's
 *    means the peer restarted (it learned our tag from that answer): sdr_peer_input() says
 *    SDR_PEER_RESTART, the caller fails everything in flight, then calls
 *    sdr_peer_restart() with a fresh tag of ours and the handshake runs again. R_Keys are
 *    derived from both tags (sdr_keys.h), so the old epoch's data packets, of either side,
 *    fail the key check;
 *  - our own tag changes at each restart, so a message proven in an earlier epoch proves
 *    nothing in a later one: a recorded message of a peer's tag that we no longer remember,
 *    replayed (MAC and all), is not taken for another restart that would retire the real
 *    peer's tag and lock it out;
 *  - the tags a peer had before, and ours, are remembered (4 each): the late packets of an
 *    earlier epoch are dropped as old (SDR_PEER_OLD_EPOCH), not as forged;
 *  - a message from a tag of ours, now or remembered, is one of our own sent back
 *    (SDR_PEER_REFLECTED): a MAC does not tell it (one key both ways), and an answer to a
 *    HELLO of ours sent back first is even addressed to our tag, so taken it would be a
 *    restart that retires the real peer's tag.
 *
 * Non-HELLO control messages go out only once the handshake is done (sdr_peer_ready()).
 * No clock, no randomness here: the caller gives both.
 */
#ifndef SDR_PEER_H
#define SDR_PEER_H

#include <stdint.h>

#include "sdr_ctrl.h"

#define SDR_PEER_RETIRED	4

struct sdr_peer {
	uint64_t local;			/**< our tag */
	uint64_t peer;			/**< the peer's, 0: unknown */
	uint8_t proven;			/**< peer learned from a proven message */
	uint8_t told;			/**< a message carrying dst = peer went out */
	uint8_t ready;			/**< the handshake is done */
	uint8_t answer_owed;
	uint64_t answer_to;		/**< the tag the owed answer goes to */
	uint64_t retired[SDR_PEER_RETIRED];
	uint32_t nretired;
	uint64_t old_local[SDR_PEER_RETIRED];	/**< tags of ours before the latest restarts */
	uint32_t nold_local;
	uint64_t rto;
	uint64_t hello_next_ns, hello_gap_ns;
	uint64_t challenge_ok_ns;	/**< the next unproven HELLO answered from then */
};

/** What to do with a control message that passed sdr_ctrl_decode(). */
enum sdr_peer_verdict {
	SDR_PEER_ACCEPT = 0,		/**< act on it */
	SDR_PEER_HELLO,			/**< a HELLO: consumed here */
	SDR_PEER_RESTART,		/**< the peer restarted (see above) */
	SDR_PEER_BAD_TAG,		/**< drop: not addressed to our tag */
	SDR_PEER_OLD_EPOCH,		/**< drop: from a tag the peer had before, or (not a
					 *   HELLO) to a tag we had before */
	SDR_PEER_NOT_READY,		/**< drop: proven, but before the handshake */
	SDR_PEER_REFLECTED,		/**< drop: from a tag of ours (now or before a
					 *   restart): our own message, sent back */
};

void sdr_peer_init(struct sdr_peer *p, uint64_t local_tag, uint64_t rto_ns);

/**
 * Before anything went out or came in: the peer's tag is known from an endpoint before this
 * one on the same connection (a rebuild: sdr_ep_take_over()). It is a guess, as a tag from
 * an unproven HELLO is; our HELLOs carry it, so the peer proves us at once (they are proven
 * to it) and its answer proves it to us.
 */
void sdr_peer_expect(struct sdr_peer *p, uint64_t peer_tag);

/** Check a decoded control message. */
enum sdr_peer_verdict sdr_peer_input(struct sdr_peer *p, const struct sdr_ctrl *c,
				     uint64_t now);

/**
 * After SDR_PEER_RESTART: the peer is @p peer_tag (the message's src tag) from now on, and
 * ours is @p local_tag (a fresh one, never 0; the caller draws it).
 */
void sdr_peer_restart(struct sdr_peer *p, uint64_t peer_tag, uint64_t local_tag,
		      uint64_t now);

/** A HELLO (or an answer) that should go out now. @return 1 if @p c was built. */
int sdr_peer_next(struct sdr_peer *p, uint64_t now, struct sdr_ctrl *c);

/** Put our tags on an outgoing control message (every one goes through here). */
void sdr_peer_stamp(struct sdr_peer *p, struct sdr_ctrl *c);

/** The handshake is done: other control messages may go out. */
static inline int
sdr_peer_ready(const struct sdr_peer *p)
{
	return p->ready;
}

/** When sdr_peer_next() has something (UINT64_MAX: nothing). */
uint64_t sdr_peer_next_time(const struct sdr_peer *p, uint64_t now);

#endif /* SDR_PEER_H */
