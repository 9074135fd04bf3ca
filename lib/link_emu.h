/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator core: one direction of a link with a one-way delay, a bottleneck
 * rate, i.i.d. or Gilbert-Elliott loss, reordering, duplication and bit corruption.
 *
 * The dataplane puts one on a port's egress: every packet it would transmit goes through
 * link_emu_admit() and link_emu_enqueue(), and link_emu_dequeue() later hands back the
 * packets that are due. Packets are opaque handles (the dataplane's mbufs); the emulator
 * never looks inside them except to flip a bit in the bytes it is given. Time is passed in
 * as nanoseconds, randomness comes from the configured seed, and nothing allocates after
 * link_emu_create(): the same code runs in unit tests and simulators. docs/link-emulator.md
 * describes the model, the order of effects and the counters.
 *
 * Sending one packet (duplication needs a clone, which only the caller can make):
 *
 *	if (link_emu_pass(le, len))
 *		send(m);			// a transparent link, nothing queued
 *	else if ((n = link_emu_admit(le, len)) <= 0)	// loss, then duplication: 0, 1, 2
 *		free(m);			// lost on the link (or len too large)
 *	else {
 *		if (n == 2 && (c = clone(m)) != NULL &&
 *		    link_emu_enqueue(le, now, c, len, data_of(c)) != 0)
 *			free(c);		// queue full
 *		if (link_emu_enqueue(le, now, m, len, data_of(m)) != 0)
 *			free(m);		// queue full
 *	}
 *
 * Each copy is corrupted, serialized and delayed on its own. The clone is made before
 * either copy is enqueued, so it never carries the original's flipped bit.
 */
#ifndef SDR_LINK_EMU_H
#define SDR_LINK_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

/** Largest one-way delay and largest reordering delay (10 s). */
#define LINK_EMU_MAX_DELAY_NS	10000000000ull
/** Rate limits in bit/s, besides 0 (unlimited). */
#define LINK_EMU_MIN_RATE	1000ull
#define LINK_EMU_MAX_RATE	100000000000000ull	/**< 100 Tbit/s */
/** Largest per-packet wire overhead, bytes. */
#define LINK_EMU_MAX_OVERHEAD	4096u
/** Default wire overhead: preamble and SFD 8 + inter-frame gap 12 + FCS 4 bytes. */
#define LINK_EMU_DEFAULT_OVERHEAD 24u
#define LINK_EMU_DEFAULT_SEED	1ull
/** Largest packet length accepted by link_emu_admit() and link_emu_enqueue(). */
#define LINK_EMU_MAX_LEN	(1u << 20)
/** Largest queue capacity link_emu_create() accepts. */
#define LINK_EMU_MAX_CAPACITY	(1u << 26)
/** Buffer size that holds link_emu_format() of any valid configuration and its NUL. */
#define LINK_EMU_FMT_MAX	320

/**
 * Counters: symbol, name (stats output), meaning. QUEUE_PEAK is a high-water mark, the
 * others only grow. Every packet offered is accounted for once the last admitted packet's
 * copies are enqueued: packets_in + duplicated = delivered + dropped_loss + dropped_burst
 * + dropped_queue_full + copies_not_enqueued + drained + link_emu_count().
 */
#define LINK_EMU_COUNTERS(X) \
	X(PACKETS_IN,	"packets_in", OK,	"packets offered to the emulated link") \
	X(BYTES_IN,	"bytes_in", OK,	"bytes of the packets offered") \
	X(DELIVERED,	"delivered", OK, \
	  "copies that came out of the far end of the link, after their delay") \
	X(BYTES_OUT,	"bytes_out", OK,	"bytes of the copies delivered") \
	X(DROPPED_LOSS,	"dropped_loss", DROP,	"packets lost to the i.i.d. loss") \
	X(DROPPED_BURST, "dropped_burst", DROP, "packets lost to the Gilbert-Elliott model") \
	X(DROPPED_QUEUE_FULL, "dropped_queue_full", DROP, \
	  "copies refused: the emulator was at capacity, or the wait for the link would have " \
	  "passed `queue` (the bottleneck's buffer)") \
	X(DROPPED_TOO_LONG, "dropped_too_long", DROP, \
	  "packets refused: longer than 1 MiB (no frame of a 9 KiB MTU is)") \
	X(DUPLICATED,	"duplicated", INFO,	"packets admitted as two copies") \
	X(CORRUPTED,	"corrupted", INFO,	"copies with one bit flipped") \
	X(REORDERED,	"reordered", INFO,	"copies given an extra reordering delay") \
	X(QUEUE_PEAK,	"queue_peak", INFO,	"most copies held at once") \
	X(BURSTS,	"ge_bursts", INFO,	"Gilbert-Elliott transitions into the bad state") \
	X(RATE_WAITS,	"rate_waits", INFO,	"copies that waited for the previous one's serialization") \
	X(COPIES_NOT_ENQUEUED, "copies_not_enqueued", ERROR, \
	  "admitted copies never enqueued (a clone the caller could not make)") \
	X(DRAINED,	"drained", INFO, \
	  "copies still on the link when it was taken down (the dataplane stopping)")

enum link_emu_counter {
#define X(sym, name, kind, doc) LINK_EMU_C_##sym,
	LINK_EMU_COUNTERS(X)
#undef X
	LINK_EMU_NCOUNTERS
};

/** The counters as a table (counters.h). */
extern const struct sdr_counter_table link_emu_counter_table;

/** Name of a counter ("dropped_loss"), or "invalid". */
const char *link_emu_counter_name(enum link_emu_counter c);

/**
 * Errors of the validator and the parser: symbol, name, one-line message. Functions return
 * 0 or the negated value (-LINK_EMU_E_DELAY, ...).
 */
#define LINK_EMU_ERRORS(X) \
	X(OK,		"ok",		"no error") \
	X(DELAY,	"bad_delay",	"delay must be a time from 0 to 10s (25ms, 100us)") \
	X(RATE,		"bad_rate", \
	  "rate must be 0 (unlimited) or 1Kbit/s to 100Tbit/s (10G, 400Mbit)") \
	X(OVERHEAD,	"bad_overhead",	"overhead must be 0 to 4096 bytes per packet") \
	X(LOSS,		"bad_loss",	"loss must be a probability in [0, 1] (1e-3, 0.1%)") \
	X(BURST,	"bad_burst", \
	  "burst must be PGB,PBG[,LG,LB] with each a probability in [0, 1], or off") \
	X(LOSS_AND_BURST, "loss_and_burst", \
	  "loss and burst are alternative loss models: set one of them") \
	X(REORDER,	"bad_reorder", \
	  "reorder must be P[,TIME]: a probability in [0, 1] and a delay up to 10s, more " \
	  "than 0 where P is") \
	X(DUP,		"bad_dup",	"dup must be a probability in [0, 1]") \
	X(CORRUPT,	"bad_corrupt",	"corrupt must be a probability in [0, 1]") \
	X(SEED,		"bad_seed",	"seed must be an unsigned 64-bit integer") \
	X(QUEUE,	"bad_queue", \
	  "queue must be a time from 0 (no limit) to 10s: the bottleneck's buffer") \
	X(UNKNOWN,	"unknown_word", \
	  "unknown word: expected delay, rate, queue, loss, burst, reorder, dup, corrupt, " \
	  "seed, overhead or off") \
	X(MISSING,	"missing_value", "the last keyword has no value")

enum link_emu_err {
#define X(sym, name, doc) LINK_EMU_E_##sym,
	LINK_EMU_ERRORS(X)
#undef X
	LINK_EMU_E_COUNT
};

/** Name of an error ("bad_delay"); accepts the error or its negation. */
const char *link_emu_err_name(int err);

/** One-line message for an error; accepts the error or its negation. */
const char *link_emu_strerror(int err);

/** What the link does. link_emu_config_default() gives a transparent link. */
struct link_emu_config {
	uint64_t delay_ns;	/**< one-way delay, 0 .. LINK_EMU_MAX_DELAY_NS */
	uint64_t rate_bps;	/**< bottleneck rate in bit/s; 0: unlimited */
	uint32_t overhead;	/**< wire bytes per packet besides @c len, for the rate */
	/**
	 * The bottleneck's buffer, as time at its rate: a copy that would wait longer than
	 * this for the link is dropped (dropped_queue_full), as a router with that much buffer
	 * drops it. 0: no limit but the emulator's capacity. No effect without a rate.
	 */
	uint64_t queue_ns;
	int burst;		/**< 1: Gilbert-Elliott loss instead of @c loss */
	double loss;		/**< i.i.d. loss probability per packet */
	double ge_p_gb;		/**< per packet: good -> bad */
	double ge_p_bg;		/**< per packet: bad -> good */
	double ge_loss_good;	/**< loss probability in the good state */
	double ge_loss_bad;	/**< loss probability in the bad state */
	double reorder;		/**< probability a copy gets an extra delay */
	uint64_t reorder_ns;	/**< the extra delay is uniform in [0, reorder_ns] */
	double dup;		/**< probability a packet is delivered twice */
	double corrupt;		/**< probability a copy gets one bit flipped */
	uint64_t seed;		/**< seeds every random choice */
	/**
	 * Mixed into @c seed (0: nothing): where one configuration makes several emulators
	 * (the dataplane: each port, engine and path), each draws streams of its own from the
	 * one seed. Not a word: never parsed or printed.
	 */
	uint64_t salt;
};

/** Fill @p cfg with the defaults: no delay, no rate limit, no impairment, overhead 24, seed 1. */
void link_emu_config_default(struct link_emu_config *cfg);

/**
 * Check a configuration; nothing is clamped.
 * @return 0, or -enum link_emu_err naming the first bad field.
 */
int link_emu_config_check(const struct link_emu_config *cfg);

/**
 * Apply key/value words to @p cfg, in order, starting from its current values (so the CLI
 * can change one parameter): "delay 25ms", "rate 10G" (or "unlimited", 0), "loss 1e-3",
 * "burst PGB,PBG[,LG,LB]" (LG, LB default 0, 1) or "burst off", "reorder P[,TIME]",
 * "dup P", "corrupt P", "seed N", "overhead BYTES", and "off" (every impairment off, the
 * delay and rate to zero; overhead and seed kept). "loss" turns burst off and "burst"
 * sets loss to 0, but naming both in one call is an error. Quantities use lib/units.h.
 *
 * @param argc  number of words
 * @param argv  the words; not kept (an array of const char * passes as is, a char ** needs
 *   a cast, as C does not add const two levels down)
 * @param bad   if not NULL, set on failure to the index of the offending word (the value
 *   for a bad value, the keyword for an unknown or incomplete one; -1 when @p cfg was
 *   already invalid in a field the words did not set)
 * @return 0 with @p cfg updated, or -enum link_emu_err with @p cfg untouched.
 */
int link_emu_parse(struct link_emu_config *cfg, int argc, const char *const argv[], int *bad);

/**
 * Print @p cfg as one line of words link_emu_parse() accepts, e.g.
 * "delay 25ms rate 10Gbit/s loss 0.001 reorder 0.01,100us dup 0 corrupt 0".
 * Delay, rate, loss (or burst), reorder, dup and corrupt are always printed; overhead and
 * seed only when they differ from their defaults.
 * @param len  at least LINK_EMU_FMT_MAX guarantees no truncation
 * @return buf
 */
const char *link_emu_format(const struct link_emu_config *cfg, char *buf, size_t len);

/**
 * Queue capacity that holds everything in flight for @p cfg when the link runs at its rate
 * with packets of @p pkt_len bytes: (delay + reorder delay) x rate / wire bits per packet,
 * rounded up, plus one. @return 0 when the rate is unlimited (the caller must choose).
 */
uint64_t link_emu_capacity_hint(const struct link_emu_config *cfg, uint32_t pkt_len);

/** Most paths one link may have (link_emu_path_of()). */
#define LINK_EMU_MAX_PATHS 8

/**
 * Which of @p npaths parallel paths a frame with UDP source port @p sport takes, as an
 * ECMP router picks a next hop: a hash of the port, so a port always takes the same path
 * and the ports of a connection's channels spread over the paths as if at random. The
 * hash, for an operator who wants to place a port on a path, is MurmurHash3's 32-bit
 * finalizer: h = sport; h ^= h >> 16; h *= 0x85EBCA6B; h ^= h >> 13; h *= 0xC2B2AE35;
 * h ^= h >> 16 (32-bit arithmetic); path = h mod npaths. Frames without a UDP port take
 * path 0 (the caller's choice).
 */
static inline unsigned int
link_emu_path_of(uint16_t sport, unsigned int npaths)
{
	uint32_t h = sport;

	if (npaths < 2)
		return 0;
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	return h % npaths;
}

struct link_emu;

/**
 * Create an emulator. All memory is allocated here.
 * @param capacity  most copies held at once, 1 .. LINK_EMU_MAX_CAPACITY; see
 *   link_emu_capacity_hint()
 * @return the emulator, or NULL for a bad configuration (link_emu_config_check() says
 *   which), a bad capacity, or no memory.
 */
struct link_emu *link_emu_create(const struct link_emu_config *cfg, uint32_t capacity);

/** Free the emulator. Packets still queued are not freed: link_emu_drain() first. */
void link_emu_destroy(struct link_emu *le);

/**
 * Change the parameters at run time. Copies already queued keep their delivery times; the
 * serialization of the link continues (the new rate applies to the next copy). A changed
 * seed reseeds every random choice; an unchanged one keeps the sequences going. Turning
 * burst on starts the Gilbert-Elliott chain in the good state; tuning it keeps its state.
 * @return 0, or -enum link_emu_err with nothing changed.
 */
int link_emu_set_config(struct link_emu *le, const struct link_emu_config *cfg);

/** The current configuration. */
const struct link_emu_config *link_emu_get_config(const struct link_emu *le);

/**
 * 1: the configuration changes nothing (no delay, no rate limit, no loss, burst loss,
 * reordering, duplication or corruption: link_emu_config_default(), or "off"), so
 * link_emu_pass() hands packets straight back whenever nothing is queued.
 */
int link_emu_transparent(const struct link_emu *le);

/**
 * Step 0, the short cut of a transparent link: when link_emu_transparent() and no copy is
 * queued, a packet of @p len bytes would come out the moment it went in. It is counted as
 * offered and delivered (the counters' identity holds) and 1 is returned: the caller sends
 * it on at once, as link_emu_dequeue() would have at the same time, and neither admits nor
 * enqueues it. Otherwise nothing is counted and 0 is returned: link_emu_admit() as usual.
 * A queued copy (left from before a change to a transparent configuration) makes every
 * packet take the queue until it is empty, so the short cut never lets a packet overtake
 * one still queued (the queue itself may: a copy due now goes before one due later).
 */
int link_emu_pass(struct link_emu *le, uint32_t len);

/**
 * link_emu_pass() for a burst of @p n packets of @p bytes in all, the longest @p max_len
 * bytes: all of them pass (counted, 1) or none does (nothing counted, 0: each takes the
 * usual way, link_emu_pass() first).
 */
int link_emu_pass_burst(struct link_emu *le, uint32_t n, uint64_t bytes, uint32_t max_len);

/**
 * Step 1 for one packet of @p len bytes: count it, then decide loss (i.i.d. or burst) and
 * duplication. The caller then enqueues as many copies as returned (fewer if it cannot
 * clone: counted as copies_not_enqueued at the next admit) and frees the packet when 0.
 * @return 0 (lost), 1, 2 (duplicated), or -EMSGSIZE (@p len > LINK_EMU_MAX_LEN: counted
 *   as dropped_too_long only; the caller frees the packet).
 */
int link_emu_admit(struct link_emu *le, uint32_t len);

/**
 * Step 2: put one admitted copy on the link at time @p now (nanoseconds, never going back).
 * With probability corrupt one uniformly chosen bit of @p data[0 .. len) is flipped; then
 * the copy is serialized at the rate after the previous one, and due at the end of its
 * serialization (rounded up to the nanosecond) plus the delay, plus with probability
 * reorder a uniform extra delay in [0, reorder_ns].
 *
 * @param pkt   opaque handle, returned by link_emu_dequeue() or link_emu_drain()
 * @param data  the packet's bytes, written in place when corrupted; NULL: never corrupted
 * @return 0 (the emulator holds @p pkt until it hands it back), -ENOBUFS (queue full:
 *   counted, the caller keeps and frees @p pkt), -EMSGSIZE (@p len too large), -EINVAL
 *   (no admitted copy is outstanding: link_emu_admit() first). Only 0 keeps @p pkt.
 */
int link_emu_enqueue(struct link_emu *le, uint64_t now, void *pkt, uint32_t len, uint8_t *data);

/**
 * Take up to @p n copies due at @p now (delivery time <= now), in delivery-time order,
 * equal times in enqueue order. Ownership of each handle goes back to the caller.
 * @return the number written to @p out.
 */
unsigned int link_emu_dequeue(struct link_emu *le, uint64_t now, void **out, unsigned int n);

/** Earliest delivery time of a queued copy, or UINT64_MAX when the queue is empty. */
uint64_t link_emu_next_time(const struct link_emu *le);

/**
 * Take up to @p n queued copies whatever their time, in delivery order (for shutdown, so the
 * caller can free them). Call until it returns 0.
 * @return the number written to @p out.
 */
unsigned int link_emu_drain(struct link_emu *le, void **out, unsigned int n);

/** Copies queued now. */
uint32_t link_emu_count(const struct link_emu *le);

/** The counters, indexed by enum link_emu_counter. */
const uint64_t *link_emu_counters(const struct link_emu *le);

#endif /* SDR_LINK_EMU_H */
