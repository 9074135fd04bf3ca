/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token-bucket pacer: a sender may send when its credit is non-negative; sending debits
 * the bytes (the credit may go negative), and credit accrues at the rate up to the bucket
 * size. Over time the sender gets exactly the rate, with bursts no larger than the bucket
 * plus one send. Time is passed in (nanoseconds).
 */
#ifndef SDR_PACER_H
#define SDR_PACER_H

#include <stdint.h>

struct pacer {
	double bytes_per_ns;	/**< 0: unpaced */
	double bucket;		/**< bytes */
	double credit;		/**< bytes, may be negative */
	uint64_t last_ns;
};

static inline void
pacer_init(struct pacer *p, double rate_bps, uint32_t bucket_bytes, uint64_t now)
{
	p->bytes_per_ns = rate_bps / 8e9;
	p->bucket = bucket_bytes;
	p->credit = 0;
	p->last_ns = now;
}

static inline void
pacer_refill(struct pacer *p, uint64_t now)
{
	if (now > p->last_ns) {
		p->credit += (double)(now - p->last_ns) * p->bytes_per_ns;
		if (p->credit > p->bucket)
			p->credit = p->bucket;
		p->last_ns = now;
	}
}

/** May a send happen at @p now? */
static inline int
pacer_ready(struct pacer *p, uint64_t now)
{
	if (p->bytes_per_ns == 0)
		return 1;
	pacer_refill(p, now);
	return p->credit >= 0;
}

/** Debit a send of @p bytes (after pacer_ready() said yes). */
static inline void
pacer_consume(struct pacer *p, uint32_t bytes)
{
	if (p->bytes_per_ns != 0)
		p->credit -= bytes;
}

/** Earliest time a send may happen. */
static inline uint64_t
pacer_ready_at(struct pacer *p, uint64_t now)
{
	double wait;

	if (pacer_ready(p, now))
		return now;
	wait = -p->credit / p->bytes_per_ns;
	return now + (uint64_t)__builtin_ceil(wait);
}

#endif /* SDR_PACER_H */
