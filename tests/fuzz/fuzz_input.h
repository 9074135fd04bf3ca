/* SPDX-License-Identifier: BSD-3-Clause */
/* A fuzz input read as a script: big-endian fields taken in turn, zeros past its end. */
#ifndef SDR_FUZZ_INPUT_H
#define SDR_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct input {
	const uint8_t *p;
	size_t n;
};

/* The next @p bytes (at most 4) as a big-endian number; missing bytes read as zero. */
static inline uint32_t
take(struct input *in, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes--) {
		v <<= 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

#endif /* SDR_FUZZ_INPUT_H */
