/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction kernels of libsdr-coll: dst[i] = dst[i] op src[i] for each element type, and the
 * float16 / bfloat16 conversions they go through. Plain loops the compiler vectorises; no
 * state, no allocation.
 */
#ifndef SDR_COLL_REDUCE_H
#define SDR_COLL_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_coll.h"

/** dst = dst op src over @p n elements of @p type (max and min of floating types: a NaN on
 * either side is the result). @return 0, or -1 for a bad type or op. */
int coll_reduce(void *dst, const void *src, size_t n, enum sdr_coll_type type,
		enum sdr_coll_op op);

/**
 * dst = dst op src, or with @p src_first dst = src op dst: the same sum, maximum or minimum
 * but for the bits a tie or a NaN leaves (+0 against -0, which NaN's payload), so two
 * ranks that reduce the same pair of vectors with the lower rank's as the first operand
 * get the same bits. @return 0, or -1 for a bad type or op.
 */
int coll_reduce_ordered(void *dst, const void *src, size_t n, enum sdr_coll_type type,
			enum sdr_coll_op op, int src_first);

/** IEEE binary16 <-> float (round to nearest even; NaN stays NaN, overflow is infinity). */
float coll_f16_to_float(uint16_t h);
uint16_t coll_float_to_f16(float f);

/** bfloat16 <-> float (round to nearest even; NaN stays NaN). */
float coll_bf16_to_float(uint16_t b);
uint16_t coll_float_to_bf16(float f);

#endif /* SDR_COLL_REDUCE_H */
