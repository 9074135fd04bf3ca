/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (the gzip/Ethernet polynomial, reflected: ISA-L's crc32_gzip_refl(), the ICRC's)
 * of a buffer computed while copying it: one pass over the source instead of two.
 */
#ifndef SDR_CRC_COPY_H
#define SDR_CRC_COPY_H

#include <stddef.h>
#include <stdint.h>

/** Below this length crc_copy() is the two calls (the vector kernel's first step is 256 B). */
#define CRC_COPY_MIN 256

/**
 * Copy @p len bytes from @p src to @p dst (not overlapping) and return
 * crc32_gzip_refl(@p seed, @p src, @p len): @p seed is the CRC of the bytes before, 0 for
 * none. On a CPU without the vector carry-less multiply (or for short buffers) it is the
 * two calls one after the other.
 */
uint32_t crc_copy(uint32_t seed, void *dst, const void *src, size_t len);

/** Whether crc_copy() takes one pass on this CPU (else it is a CRC and a memcpy). */
int crc_copy_fused(void);

#endif
