/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ISA-L 2.30's AVX-512 kernels (crc32_gzip_refl_by16_10, the erasure-coding dot products,
 * xor_gen) return with the upper halves of the vector registers dirty: they end without
 * vzeroupper. The next SSE instruction of the caller (any compiled C that touches an xmm
 * register: a struct copy, a double) then waits for the register state to be merged —
 * measured on this project's Xeon at about 170 ns per call, three times the CRC of a
 * 4 KiB payload itself (docs/benchmarks.md). Every call into those kernels is followed by
 * sdr_simd_clean(), which clears the upper halves when the CPU has AVX (and does nothing
 * elsewhere: vzeroupper does not exist before AVX, nor on arm64).
 */
#ifndef SDR_SIMD_CLEAN_H
#define SDR_SIMD_CLEAN_H

static inline void
sdr_simd_clean(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroupper" ::: "memory");
#endif
}

#endif /* SDR_SIMD_CLEAN_H */
