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

/* splitmix64's finalizer: every bit of the result depends on every bit of @p x. */
static inline uint64_t
sdr_pattern_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/*
 * What every word of message @p msg has but its position: a hash of the seed and the
 * message number, so that each byte of a word differs from message to message (another
 * message's bytes, or a buffer's stale ones, never pass for a few bytes of it) and no
 * period in the message number repeats one.
 */
static inline uint64_t
sdr_pattern_base(uint64_t seed, uint64_t msg)
{
	return sdr_pattern_mix(seed * 0xD6E8FEB86659FD93ull ^ sdr_pattern_mix(msg + 1));
}

/** Word @p i (bytes 8i .. 8i+7) of message @p msg. */
static inline uint64_t
sdr_pattern_word(uint64_t seed, uint64_t msg, uint64_t i)
{
	return sdr_pattern_base(seed, msg) ^ (i * 0x9E3779B97F4A7C15ull);
}

/** Write bytes [@p off, @p off + @p len) of message @p msg into @p p (@p off a multiple of 8). */
void sdr_pattern_fill(uint8_t *p, uint64_t off, uint64_t len, uint64_t seed, uint64_t msg);

/** 1 if the @p len bytes at @p p are message @p msg, else 0. */
int sdr_pattern_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t msg);

/** The user immediate sdr-dataplane --traffic sends with message @p msg: every bit of it,
 * the low ones a short message carries too, depends on the whole message number. */
static inline uint32_t
sdr_pattern_imm(uint64_t seed, uint64_t msg)
{
	return (uint32_t)sdr_pattern_mix(sdr_pattern_base(seed, msg) + 0x632BE59BD9B4E019ull);
}

#endif /* SDR_MSG_PATTERN_H */
