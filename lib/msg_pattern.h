/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contents every test message carries, so that any receiver can check every byte: 8-byte
 * words that depend on a seed, the message number and the position. sdr-dataplane --traffic,
 * sdr-perf and sdr-verbs-peer all send and check this pattern, so any of them can talk to
 * any other.
 */
#ifndef SDR_MSG_PATTERN_H
#define SDR_MSG_PATTERN_H

#include <stdint.h>

/** Word @p i (bytes 8i .. 8i+7) of message @p msg. */
static inline uint64_t
sdr_pattern_word(uint64_t seed, uint64_t msg, uint64_t i)
{
	return (seed * 0xD6E8FEB86659FD93ull) ^ (msg << 40) ^ (i * 0x9E3779B97F4A7C15ull);
}

/** Write bytes [@p off, @p off + @p len) of message @p msg into @p p (@p off a multiple of 8). */
void sdr_pattern_fill(uint8_t *p, uint64_t off, uint64_t len, uint64_t seed, uint64_t msg);

/** 1 if the @p len bytes at @p p are message @p msg, else 0. */
int sdr_pattern_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t msg);

/** The user immediate sdr-dataplane --traffic sends with message @p msg. */
static inline uint32_t
sdr_pattern_imm(uint64_t seed, uint64_t msg)
{
	return (uint32_t)(sdr_pattern_word(seed, msg, 0xFFFFFFFF) >> 16);
}

#endif /* SDR_MSG_PATTERN_H */
