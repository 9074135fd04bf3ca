/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing and printing of the quantities users type on command lines and in INI files:
 * sizes ("4096", "64KiB", "8MiB", "1GiB", "4k"), times ("25ms", "100us", "1.5s", "250ns"),
 * rates ("10G", "400Gbit", "2.5Mbit", bits per second) and plain integers.
 * Every parser rejects trailing garbage, negative values and overflow.
 */
#ifndef SDR_UNITS_H
#define SDR_UNITS_H

#include <stddef.h>
#include <stdint.h>

/** Parse a size in bytes; suffixes K/KiB/k (1024), M/MiB, G/GiB, and B. @return 0 or -EINVAL. */
int units_parse_size(const char *s, uint64_t *bytes);

/** Parse a time; suffixes s, ms, us, ns (no suffix: seconds). @return 0 or -EINVAL. */
int units_parse_time(const char *s, double *seconds);

/** Parse a rate in bit/s; suffixes K, M, G, T with optional "bit", "bps" or "b/s". */
int units_parse_rate(const char *s, double *bits_per_s);

/** Parse an unsigned integer (decimal or 0x hex) no larger than @p max. */
int units_parse_u64(const char *s, uint64_t max, uint64_t *out);

/**
 * Parse a plain number: decimal digits, an optional fraction and exponent, not negative,
 * finite (no sign, hexadecimal, inf or nan, as strtod() would take). @return 0 or -EINVAL.
 */
int units_parse_number(const char *s, double *v);

/** Parse a probability or fraction: "1e-3", "0.001", "0.1%". Must be in [0, 1]. */
int units_parse_prob(const char *s, double *p);

/** Print a size as "64KiB", "8MiB", "1.5GiB" or "1000B" into @p buf. @return buf. */
const char *units_fmt_size(uint64_t bytes, char *buf, size_t len);

/** Print a time with an adapted unit ("25.00ms", "3.1s", "812us"). @return buf. */
const char *units_fmt_time(double seconds, char *buf, size_t len);

/**
 * printf() onto the text in @p buf (@p len bytes) at *@p off, moving *@p off on: a line
 * built field by field, cut at the buffer's end (always terminated) and never overrun.
 */
__attribute__((format(printf, 4, 5)))
void units_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...);

#endif /* SDR_UNITS_H */
