/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability layer: what the sender (rel_tx) and receiver (rel_rx) state machines of a
 * connection share — the scheme, its parameters, timeouts and completion records.
 *
 * The state machines work on chunks and control messages, never on packets or bytes, and
 * take the time as an argument (nanoseconds on any monotonic clock). The dataplane drives
 * them with real packets (lib/sdr_endpoint), the simulator with a modelled link.
 */
#ifndef SDR_REL_H
#define SDR_REL_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_conn.h"

/** RTT samples before cfg.rto_measured lets the measured RTT drive the timers. */
#define SDR_REL_RTO_MIN_SAMPLES 16

/*
 * The scheme (sr, sr-nack, ec-xor:k,m, ec-mds:k,m): its kinds, names and parser. The
 * analytic model (sdr_model.h) models these and picks one for "auto"; the reliability
 * layer runs them and needs nothing of the model. The kinds: symbol, name prefix, meaning.
 */
#define SDR_SCHEME_KINDS(X) \
	X(SR,		"sr",		"selective repeat, RTO = RTT + alpha * RTT") \
	X(SR_NACK,	"sr-nack",	"selective repeat, the receiver NACKs sure holes (model: its NACK timing)") \
	X(EC_XOR,	"ec-xor",	"XOR parity, m groups of k/m data chunks, SR fallback") \
	X(EC_MDS,	"ec-mds",	"MDS (Reed-Solomon) code, any m of k + m lost, SR fallback")

enum sdr_scheme_kind {
#define X(sym, name, doc) SDR_SCHEME_##sym,
	SDR_SCHEME_KINDS(X)
#undef X
	SDR_SCHEME_COUNT
};

#define SDR_SCHEME_MAX_KM	1024	/**< largest k and m a scheme may have */
#define SDR_SCHEME_NAME_MAX	24	/**< buffer size that fits every scheme name */

/** A reliability scheme; k and m are 0 for SR and SR-NACK. */
struct sdr_scheme {
	enum sdr_scheme_kind kind;
	uint16_t k;	/**< data chunks per submessage */
	uint16_t m;	/**< parity chunks per submessage */
	uint8_t chunk_shift;	/**< the chunks it runs on: the connection's chunk size >> this
				 *   (online auto's choice, within attr.max_chunk_shift); 0: the
				 *   configured chunk. Not part of the name, the parser or the
				 *   analytic model, which takes the chunk size itself */
};

/** Whether two schemes are the same: kind, k and m of a code, and chunk shift. */
static inline int
sdr_scheme_eq(const struct sdr_scheme *a, const struct sdr_scheme *b)
{
	return a->kind == b->kind && a->k == b->k && a->m == b->m &&
	       a->chunk_shift == b->chunk_shift;
}

/*
 * What a scheme can be wrong in: symbol, name, meaning. The scheme functions return 0 or a
 * negated SDR_SCHEME_E_* value; the analytic model's errors (sdr_model.h) begin with the
 * same ones, so sdr_model_strerror() names them too.
 */
#define SDR_SCHEME_ERRORS(X) \
	X(BAD_SCHEME,		"bad_scheme",		"scheme is not sr, sr-nack, ec-xor:K,M or ec-mds:K,M") \
	X(BAD_K,		"bad_k",		"k is zero or larger than 1024") \
	X(BAD_M,		"bad_m",		"m is zero or larger than 1024") \
	X(XOR_GROUPS,		"xor_groups",		"XOR needs m to divide k: m groups of k/m data chunks")

enum sdr_scheme_err {
	SDR_SCHEME_E_OK,
#define X(sym, name, doc) SDR_SCHEME_E_##sym,
	SDR_SCHEME_ERRORS(X)
#undef X
	SDR_SCHEME_E_COUNT
};

/** One-line description of a scheme error; accepts the error or its negation. */
const char *sdr_scheme_strerror(int err);

static inline int
sdr_scheme_is_ec(const struct sdr_scheme *s)
{
	return s->kind == SDR_SCHEME_EC_XOR || s->kind == SDR_SCHEME_EC_MDS;
}

/** Check a scheme: kind known, 1 <= k, m <= 1024 for EC, m divides k for XOR. */
int sdr_scheme_check(const struct sdr_scheme *s);

/**
 * Parse "sr", "sr-nack", "ec-xor:K,M" or "ec-mds:K,M" (decimal K and M, nothing else).
 * @return 0, -SDR_SCHEME_E_BAD_SCHEME for an unknown or malformed name, -SDR_SCHEME_E_BAD_K,
 *	-SDR_SCHEME_E_BAD_M or -SDR_SCHEME_E_XOR_GROUPS; @p out is untouched on error.
 */
int sdr_scheme_parse(const char *name, struct sdr_scheme *out);

/**
 * Print a scheme's name ("sr", "ec-mds:32,8") into @p buf; a buffer of SDR_SCHEME_NAME_MAX
 * fits every name. @return buf.
 */
const char *sdr_scheme_format(const struct sdr_scheme *s, char *buf, size_t len);

#define SDR_SCHEME_CHUNK_NAME_MAX 40	/**< buffer size that fits every sdr_scheme_format_chunk() */

/**
 * A scheme's name with its chunk when that is not the configured one: "ec-mds:64,8/16KiB"
 * for ec-mds:64,8 on chunks of 16 KiB (@p chunk_bytes, the configured chunk, >> the shift);
 * the plain name at shift 0. @return buf.
 */
const char *sdr_scheme_format_chunk(const struct sdr_scheme *s, uint32_t chunk_bytes, char *buf,
				    size_t len);

/** Fraction of the bytes on the wire that are parity: m / (k + m); 0 for SR. */
double sdr_scheme_parity_share(const struct sdr_scheme *s);

/**
 * Parity chunks sent for a submessage of @p kk data chunks (kk <= k). A full submessage gets
 * m. A short one (the message's last) counts its missing data chunks as known zeros, so it
 * needs fewer: an MDS code still repairs any losses up to the parity sent, so it gets
 * ceil(kk * m / k), the same share as a full one; XOR needs the parity of each group that
 * holds data, min(kk, m).
 */
static inline uint32_t
sdr_rel_sub_parity(const struct sdr_scheme *s, uint32_t kk)
{
	if (kk >= s->k)
		return s->m;
	if (s->kind == SDR_SCHEME_EC_XOR)
		return kk < s->m ? kk : s->m;
	return (kk * s->m + s->k - 1) / s->k;
}

/** Configuration of a connection's reliability; both sides must agree on it. */
struct sdr_rel_cfg {
	struct sdr_scheme scheme;	/**< kind, and k, m for EC */
	uint64_t rtt_ns;		/**< round-trip time of the path */
	double alpha;			/**< RTO = RTT + alpha * RTT (2: "SR RTO" = 3 RTT) */
	double beta;			/**< FTO slack = beta * RTT (default alpha / 2) */
	double rate_bps;		/**< injection rate in bit/s (0: unpaced) */
	uint32_t bucket_bytes;		/**< largest burst above the rate */
	uint32_t pkt_overhead;		/**< wire bytes per packet besides payload, for pacing */
	uint32_t ack_every_chunks;	/**< receiver ACKs after this many new chunks (0: off) */
	uint64_t ack_every_ns;		/**< ... and at least this often while receiving (0: off) */
	uint64_t nack_allowance_ns;	/**< sr-nack: reordering allowance before a hole is sure */
	uint64_t global_timeout_ns;	/**< a message not done by then fails (0: never) */
	uint8_t rto_measured;		/**< the timers follow the measured RTT once it has
					 *   SDR_REL_RTO_MIN_SAMPLES samples: the sender's
					 *   (rel_tx_rto()) and the receiver's (rel_rx_rto()) */
	uint32_t timer_slots;		/**< sender retransmission-timer capacity (chunks); 0
					 *   (the default): 4 per chunk of max_inflight messages
					 *   of max_msg_size on the smallest chunk, at least
					 *   65536, at most REL_TX_TIMER_SLOTS_MAX */
	uint8_t scheme_may_change;	/**< the scheme may change between messages
					 *   (rel_tx_set_scheme(), rel_rx_set_scheme()): state is
					 *   sized for any code that fits the connection's parity
					 *   region, not only this one */
	uint8_t ec_fallback_whole;	/**< EC-NACK repeats whole submessages, as the published
					 *   design and model assume; 0 (default): the receiver's
					 *   ACK bitmap goes along and only the holes are repeated */
};

/**
 * Whether scheme @p s can run on a connection of geometry @p g: its chunk shift within the
 * connection's (g->max_chunk_shift); then SR always; a code when it is valid
 * (sdr_scheme_check()) and the parity packets of the largest message at its chunk fit the
 * parity region.
 */
static inline int
sdr_rel_code_fits(const struct sdr_conn_geom *g, const struct sdr_scheme *s)
{
	if (s->chunk_shift > g->max_chunk_shift)
		return 0;
	if (!sdr_scheme_is_ec(s))
		return 1;
	return sdr_scheme_check(s) == 0 && s->k + s->m <= 255 && g->max_parity_chunks > 0 &&
	       (uint64_t)sdr_conn_parity_chunks(sdr_conn_msg_chunks_at(g, (uint64_t)g->max_data_pkts
								       << g->mtu_shift,
								       s->chunk_shift),
						s->k, s->m) * sdr_conn_shift_ppc(g, s->chunk_shift) <=
	       g->max_parity_pkts;
}

/** Defaults for a path of @p rtt_ns: sr, alpha 2, beta 1, ACK every 8 chunks or 50 us. */
void sdr_rel_cfg_default(struct sdr_rel_cfg *c, uint64_t rtt_ns);

/** Retransmission timeout. */
static inline uint64_t
sdr_rel_rto(const struct sdr_rel_cfg *c)
{
	return c->rtt_ns + (uint64_t)(c->alpha * (double)c->rtt_ns);
}

enum sdr_done_status {
	SDR_DONE_OK,
	SDR_DONE_TIMEOUT,	/**< global timeout */
	SDR_DONE_FAILED,	/**< the peer gave the message up */
	SDR_DONE_CANCELLED,	/**< this side gave it up: its application went away */
};

/** A completed message, on either side. */
struct sdr_rel_done {
	uint64_t cookie;	/**< the caller's value from submit/post */
	uint64_t seq;
	uint32_t slot;
	uint32_t ctx;		/**< the state machine's context of the message */
	uint32_t status;	/**< enum sdr_done_status */
	uint64_t start_ns;	/**< send: submit; receive: post */
	uint64_t first_ns;	/**< send: first chunk injected; receive: first chunk arrived */
	uint64_t end_ns;
	uint32_t retransmitted;	/**< send: chunks sent more than once */
	uint32_t decoded;	/**< receive: submessages rebuilt by decoding */
	uint32_t fallback;	/**< EC: submessages repeated with SR */
};

/** The completions of a state machine not yet taken: a FIFO of @c cap (max_inflight). */
struct sdr_rel_done_fifo {
	struct sdr_rel_done *d;
	uint32_t cap, head, n;
};

/** The place of the next completion, or NULL when the FIFO is full. */
static inline struct sdr_rel_done *
sdr_rel_done_add(struct sdr_rel_done_fifo *f)
{
	return f->n < f->cap ? &f->d[(f->head + f->n++) % f->cap] : NULL;
}

/** Take the oldest completion. @return 1, or 0 when there is none. */
static inline int
sdr_rel_done_take(struct sdr_rel_done_fifo *f, struct sdr_rel_done *d)
{
	if (f->n == 0)
		return 0;
	*d = f->d[f->head];
	f->head = (f->head + 1) % f->cap;
	f->n--;
	return 1;
}

/**
 * The era of sequence number @p seq: its block of 2^32 messages counted from @p epoch_base,
 * where this end's numbering of the current peer began (sdr_seq_epoch_base(); a fresh peer
 * counts from 0, as many messages). SKIP and WITHDRAW (and their answers) carry their
 * cumulative point's era: the same message replayed 2^32 messages later is of another.
 */
static inline uint64_t
sdr_seq_era(uint64_t seq, uint64_t epoch_base)
{
	return (seq - epoch_base) >> 32;
}

/**
 * A sequence number the peer sent in 32 bits (control messages carry the low half), taken
 * nearest to this side's 64-bit count @p base.
 */
static inline uint64_t
sdr_seq_near(uint64_t base, uint32_t v)
{
	uint64_t s = (base & ~0xFFFFFFFFull) | v;

	if (s + 0x80000000ull < base)
		s += 0x100000000ull;
	else if (s > base + 0x80000000ull && s >= 0x100000000ull)
		s -= 0x100000000ull;
	return s;
}

/*
 * How far a sequence number in a control message may lie from this side's count before the
 * message is implausible: more than 16 M messages given up, withdrawn or posted ahead of
 * the other side is beyond any genuine peer (each needs the global timeout or a round trip),
 * and well inside the 2^31 that 32-bit points can name.
 */
#define SDR_SEQ_WINDOW	(1ull << 24)

/*
 * The first sequence number of a new epoch (the peer restarted) at or after @p seq: a
 * multiple of 2^32 * generations, so the low 32 bits, the slot and the generation of every
 * later number are those of a fresh peer counting from 0.
 */
static inline uint64_t
sdr_seq_epoch_base(uint64_t seq, uint32_t generations)
{
	uint64_t unit = (uint64_t)generations << 32;

	return (seq + unit - 1) / unit * unit;
}

#endif /* SDR_REL_H */
