/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection handshake: tags, proof, restart detection (see sdr_peer.h). */
#include <string.h>

#include "sdr_peer.h"
#include "sdr_zero.h"

void
sdr_peer_init(struct sdr_peer *p, uint64_t local_tag, uint64_t rto_ns)
{
	memset(p, 0, sizeof(*p));
	p->local = local_tag;
	p->rto = rto_ns ? rto_ns : 1;
	p->hello_gap_ns = p->rto;
}

void
sdr_peer_expect(struct sdr_peer *p, uint64_t peer_tag)
{
	p->peer = peer_tag;
	p->proven = 0;
}

static int
is_in(const uint64_t *tags, uint32_t n, uint64_t tag)
{
	for (uint32_t i = 0; i < n && i < SDR_PEER_RETIRED; i++)
		if (tags[i] == tag)
			return 1;
	return 0;
}

/* A tag the peer had before. */
static int
is_retired(const struct sdr_peer *p, uint64_t tag)
{
	return is_in(p->retired, p->nretired, tag);
}

/* One of our own tags, now or before a restart. */
static int
is_ours(const struct sdr_peer *p, uint64_t tag)
{
	return tag == p->local || is_in(p->old_local, p->nold_local, tag);
}

/*
 * The peer's tag is now @p tag: the old one is remembered, the handshake starts over. A
 * proven tag is told at once (a HELLO carrying it, whose backoff starts again). A tentative
 * one hears the answer its HELLO is owed, which carries it too; our next HELLO comes within
 * an RTO (should that answer be lost), not at once, so a flood of HELLOs from forged tags
 * gets one frame each and at most one HELLO per RTO more.
 */
static void
set_peer(struct sdr_peer *p, uint64_t tag, int proven, uint64_t now)
{
	if (p->peer != 0 && p->peer != tag && p->proven)
		p->retired[p->nretired++ % SDR_PEER_RETIRED] = p->peer;
	if (p->peer != tag) {
		p->told = 0;
		p->ready = 0;
		p->hello_gap_ns = p->rto;
		if (proven)
			p->hello_next_ns = now;		/* tell it at once */
		else if (p->hello_next_ns > now + p->rto)
			p->hello_next_ns = now + p->rto;
	}
	p->peer = tag;
	p->proven = (uint8_t)proven;
}

static void
owe_answer(struct sdr_peer *p, const struct sdr_ctrl *c)
{
	if (c->type == SDR_CTRL_HELLO && !(c->flags & SDR_CTRL_F_ANSWER)) {
		p->answer_owed = 1;
		p->answer_to = c->src_tag;
	}
}

enum sdr_peer_verdict
sdr_peer_input(struct sdr_peer *p, const struct sdr_ctrl *c, uint64_t now)
{
	int hello = c->type == SDR_CTRL_HELLO;

	/*
	 * From a tag of ours: one of our own messages sent back to us. Its MAC is good (the
	 * key is the same both ways) and, an answer to a HELLO of ours sent back first, it
	 * can even be addressed to our tag: taken, it would be a restart of a "peer" with our
	 * tag, which retires the real peer's and locks it out. Nothing of ours is news.
	 */
	if (is_ours(p, c->src_tag))
		return SDR_PEER_REFLECTED;
	if (c->dst_tag == p->local) {
		/* proven: the sender has seen one of our packets */
		if (c->src_tag != p->peer) {
			if (is_retired(p, c->src_tag))
				return SDR_PEER_OLD_EPOCH;
			if (p->ready)
				return SDR_PEER_RESTART;
			set_peer(p, c->src_tag, 1, now);
		}
		p->proven = 1;
		if (p->told && !p->ready)
			p->ready = 1;
		owe_answer(p, c);
		if (hello)
			return SDR_PEER_HELLO;
		return p->ready ? SDR_PEER_ACCEPT : SDR_PEER_NOT_READY;
	}
	if (!hello)	/* (to a tag of ours before the peer restarted: a late one) */
		return is_in(p->old_local, p->nold_local, c->dst_tag) ? SDR_PEER_OLD_EPOCH :
									 SDR_PEER_BAD_TAG;
	if (is_retired(p, c->src_tag))
		return SDR_PEER_OLD_EPOCH;
	if (!p->proven) {
		/* tentative: the latest HELLO wins until one proves itself */
		set_peer(p, c->src_tag, 0, now);
		owe_answer(p, c);
		return SDR_PEER_HELLO;
	}
	/* a restarted peer, or a forger: answer (rate-limited), change nothing */
	if (!(c->flags & SDR_CTRL_F_ANSWER) && now >= p->challenge_ok_ns) {
		p->challenge_ok_ns = now + p->rto;
		p->answer_owed = 1;
		p->answer_to = c->src_tag;
	}
	return SDR_PEER_HELLO;
}

void
sdr_peer_restart(struct sdr_peer *p, uint64_t peer_tag, uint64_t local_tag, uint64_t now)
{
	if (local_tag != 0 && local_tag != p->local) {
		p->old_local[p->nold_local++ % SDR_PEER_RETIRED] = p->local;
		p->local = local_tag;
	}
	p->answer_owed = 0;
	set_peer(p, peer_tag, 1, now);
}

void
sdr_peer_stamp(struct sdr_peer *p, struct sdr_ctrl *c)
{
	c->src_tag = p->local;
	if (c->type != SDR_CTRL_HELLO || !(c->flags & SDR_CTRL_F_ANSWER))
		c->dst_tag = p->peer;
	if (c->dst_tag != 0 && c->dst_tag == p->peer)
		p->told = 1;
}

int
sdr_peer_next(struct sdr_peer *p, uint64_t now, struct sdr_ctrl *c)
{
	sdr_zero(c, sizeof(*c));
	c->type = SDR_CTRL_HELLO;
	if (p->answer_owed) {
		p->answer_owed = 0;
		c->flags = SDR_CTRL_F_ANSWER;
		c->dst_tag = p->answer_to;
		sdr_peer_stamp(p, c);
		return 1;
	}
	if (p->ready || p->hello_next_ns > now)
		return 0;
	/* a peer that is not there yet hears less and less of it */
	p->hello_next_ns = now + p->hello_gap_ns;
	if (p->hello_gap_ns < 64 * p->rto)
		p->hello_gap_ns *= 2;
	sdr_peer_stamp(p, c);
	return 1;
}

uint64_t
sdr_peer_next_time(const struct sdr_peer *p, uint64_t now)
{
	if (p->answer_owed)
		return now;
	if (p->ready)
		return UINT64_MAX;
	return p->hello_next_ns > now ? p->hello_next_ns : now;
}
