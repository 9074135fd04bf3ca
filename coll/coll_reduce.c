/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction kernels (coll_reduce.h). The half-precision conversions are written out bit by
 * bit rather than with _Float16 or F16C intrinsics: they must give the same bytes on every
 * architecture the dataplane runs on (arm64 included), and a reduction's cost is small
 * beside the long-haul link's.
 */
#include <math.h>
#include <string.h>

#include "coll_reduce.h"

float
coll_f16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, x;
	float f;

	if (exp == 0x1F) {
		x = sign | 0x7F800000 | (man << 13);
	} else if (exp == 0) {
		if (man == 0) {
			x = sign;
		} else {	/* subnormal: normalise */
			uint32_t k = 0;

			while (!(man & 0x400)) {
				man <<= 1;
				k++;
			}
			x = sign | ((113 - k) << 23) | ((man & 0x3FF) << 13);
		}
	} else {
		x = sign | ((exp + 112) << 23) | (man << 13);
	}
	memcpy(&f, &x, sizeof(f));
	return f;
}

uint16_t
coll_float_to_f16(float f)
{
	uint32_t x, sign, exp, man, h, rem, half, shift;
	int e;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xFF;
	man = x & 0x7FFFFF;
	if (exp == 0xFF)	/* infinity, or NaN kept quiet */
		return (uint16_t)(sign | 0x7C00 | (man ? 0x200 | (man >> 13) : 0));
	e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7C00);
	if (e <= 0) {		/* a subnormal half, or zero */
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		shift = (uint32_t)(14 - e);
		h = man >> shift;
		rem = man & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	h = ((uint32_t)e << 10) | (man >> 13);
	rem = man & 0x1FFF;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;		/* a carry into the exponent is right, up to infinity */
	return (uint16_t)(sign | h);
}

float
coll_bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

uint16_t
coll_float_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7F800000) == 0x7F800000 && (x & 0x7FFFFF))
		return (uint16_t)((x >> 16) | 0x40);	/* NaN stays NaN (quiet) */
	x += 0x7FFF + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

#define SUM(a, b) ((a) + (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
/* floats: a NaN on either side is the result (a diverged rank's NaN is never lost to a
 * max or min, whichever rank or algorithm it meets first) */
#define FMAX(a, b) (isnan(b) ? (b) : isnan(a) ? (a) : MAX(a, b))
#define FMIN(a, b) (isnan(b) ? (b) : isnan(a) ? (a) : MIN(a, b))
/* the same with the operands swapped: src op dst (MAX and MIN pick by order between +0 and
 * -0, and which NaN when both are) */
#define SUM_SWAPPED(a, b) SUM(b, a)
#define MAX_SWAPPED(a, b) MAX(b, a)
#define MIN_SWAPPED(a, b) MIN(b, a)
#define FMAX_SWAPPED(a, b) FMAX(b, a)
#define FMIN_SWAPPED(a, b) FMIN(b, a)

/* dst op= src for a native type; memcpy-free: the buffers are the type's alignment */
#define NATIVE(T, OP)							\
	do {								\
		T *d = dst;						\
		const T *s = src;					\
		for (size_t i = 0; i < n; i++)				\
			d[i] = OP(d[i], s[i]);				\
	} while (0)

#define HALF(TO, FROM, OP)						\
	do {								\
		uint16_t *d = dst;					\
		const uint16_t *s = src;				\
		for (size_t i = 0; i < n; i++)				\
			d[i] = FROM(OP(TO(d[i]), TO(s[i])));		\
	} while (0)

/* M over the elements with op (P##MAX, P##MIN: the float forms when P is F) */
#define BY_OP_(P, M, ...)						\
	do {								\
		switch (op) {						\
		case SDR_COLL_SUM:					\
			if (src_first)					\
				M(__VA_ARGS__, SUM_SWAPPED);		\
			else						\
				M(__VA_ARGS__, SUM);			\
			break;						\
		case SDR_COLL_MAX:					\
			if (src_first)					\
				M(__VA_ARGS__, P##MAX_SWAPPED);		\
			else						\
				M(__VA_ARGS__, P##MAX);			\
			break;						\
		case SDR_COLL_MIN:					\
			if (src_first)					\
				M(__VA_ARGS__, P##MIN_SWAPPED);		\
			else						\
				M(__VA_ARGS__, P##MIN);			\
			break;						\
		default: return -1;					\
		}							\
	} while (0)
#define BY_OP(M, ...) BY_OP_(, M, __VA_ARGS__)
#define BY_FOP(M, ...) BY_OP_(F, M, __VA_ARGS__)

int
coll_reduce(void *dst, const void *src, size_t n, enum sdr_coll_type type, enum sdr_coll_op op)
{
	return coll_reduce_ordered(dst, src, n, type, op, 0);
}

int
coll_reduce_ordered(void *dst, const void *src, size_t n, enum sdr_coll_type type,
		    enum sdr_coll_op op, int src_first)
{
	switch (type) {
	case SDR_COLL_F32:
		BY_FOP(NATIVE, float);
		return 0;
	case SDR_COLL_I32:
		/* wrap around on overflow, as two's complement hardware does (no UB: unsigned) */
		if (op == SDR_COLL_SUM) {
			NATIVE(uint32_t, SUM);
			return 0;
		}
		BY_OP(NATIVE, int32_t);
		return 0;
	case SDR_COLL_I64:
		if (op == SDR_COLL_SUM) {
			NATIVE(uint64_t, SUM);
			return 0;
		}
		BY_OP(NATIVE, int64_t);
		return 0;
	case SDR_COLL_F16:
		BY_FOP(HALF, coll_f16_to_float, coll_float_to_f16);
		return 0;
	case SDR_COLL_BF16:
		BY_FOP(HALF, coll_bf16_to_float, coll_float_to_bf16);
		return 0;
	default:
		return -1;
	}
}
