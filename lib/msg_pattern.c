/* SPDX-License-Identifier: BSD-3-Clause */
/* The test message pattern (see msg_pattern.h). */
#include <string.h>

#include "msg_pattern.h"

void
sdr_pattern_fill(uint8_t *p, uint64_t off, uint64_t len, uint64_t seed, uint64_t msg)
{
	uint64_t i, w;

	for (i = off; i + 8 <= off + len; i += 8) {
		w = sdr_pattern_word(seed, msg, i / 8);
		memcpy(p + i, &w, 8);
	}
	w = sdr_pattern_word(seed, msg, i / 8);
	memcpy(p + i, &w, off + len - i);
}

int
sdr_pattern_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t msg)
{
	uint64_t i, w;

	for (i = 0; i + 8 <= len; i += 8) {
		w = sdr_pattern_word(seed, msg, i / 8);
		if (memcmp(p + i, &w, 8) != 0)
			return 0;
	}
	w = sdr_pattern_word(seed, msg, i / 8);
	return memcmp(p + i, &w, len - i) == 0;
}
