/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A single-producer, single-consumer ring of fixed-size entries in memory shared with a
 * process the other side does not trust: an SDK client's request and completion queues.
 *
 * Not rte_ring, on purpose: rte_ring keeps its size, mask, capacity and both head/tail pairs
 * in the shared header, and reads them there on every call, so a client that rewrites them
 * makes the dataplane index past the ring (it did: issue "control segment"). Here the
 * geometry and each side's own index live in private memory (struct sdr_spsc_end); the only
 * thing read from the segment is the other side's index, and it is checked against the
 * private one before anything is used. Entries are copied out before they are looked at, so
 * a producer that rewrites an entry while it is read can only make it fail validation.
 *
 * Header-only: the dataplane, libsdr and sdrctl use it; no EAL, no DPDK.
 */
#ifndef SDR_SPSC_H
#define SDR_SPSC_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* What lies in the shared memory: the two indices, each on its own cache line, then the
 * entries. */
struct sdr_spsc_shared {
	volatile uint32_t prod;		/* written by the producer only */
	uint8_t pad0[60];
	volatile uint32_t cons;		/* written by the consumer only */
	uint8_t pad1[60];
};

/** Bytes of shared memory a ring of @p depth entries of @p esize bytes takes. */
#define SDR_SPSC_BYTES(depth, esize) \
	(sizeof(struct sdr_spsc_shared) + (uint64_t)(depth) * (uint64_t)(esize))

/** One side's private view of a ring. */
struct sdr_spsc_end {
	struct sdr_spsc_shared *sh;
	uint8_t *ent;
	uint32_t depth;			/* a power of two */
	uint32_t esize;
	uint32_t idx;			/* this side's own index (prod or cons) */
};

/**
 * Bind a view to a ring at @p mem. Both sides start at index 0: the creator of the memory
 * zeroes it (a fresh segment is zero).
 */
static inline void
sdr_spsc_bind(struct sdr_spsc_end *e, void *mem, uint32_t depth, uint32_t esize)
{
	e->sh = (struct sdr_spsc_shared *)mem;
	e->ent = (uint8_t *)mem + sizeof(struct sdr_spsc_shared);
	e->depth = depth;
	e->esize = esize;
	e->idx = 0;
}

/**
 * Producer: copy one entry in.
 * @return 0, -ENOBUFS (full), -EPROTO (the consumer's index is impossible: it claims to
 *   have taken entries that were never put in).
 */
static inline int
sdr_spsc_push(struct sdr_spsc_end *e, const void *v)
{
	uint32_t cons = __atomic_load_n(&e->sh->cons, __ATOMIC_ACQUIRE);
	uint32_t used = e->idx - cons;

	if (used > e->depth)
		return -EPROTO;
	if (used == e->depth)
		return -ENOBUFS;
	memcpy(e->ent + (uint64_t)(e->idx & (e->depth - 1)) * e->esize, v, e->esize);
	e->idx++;
	__atomic_store_n(&e->sh->prod, e->idx, __ATOMIC_RELEASE);
	return 0;
}

/**
 * Consumer: copy one entry out into @p v (private memory; validate it there).
 * @return 0, -EAGAIN (empty), -EPROTO (the producer's index is impossible: more entries
 *   than the ring holds).
 */
static inline int
sdr_spsc_pop(struct sdr_spsc_end *e, void *v)
{
	uint32_t prod = __atomic_load_n(&e->sh->prod, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - e->idx;

	if (avail > e->depth)
		return -EPROTO;
	if (avail == 0)
		return -EAGAIN;
	memcpy(v, e->ent + (uint64_t)(e->idx & (e->depth - 1)) * e->esize, e->esize);
	e->idx++;
	__atomic_store_n(&e->sh->cons, e->idx, __ATOMIC_RELEASE);
	return 0;
}

#endif /* SDR_SPSC_H */
