/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roce_parse on arbitrary bytes, with and without ICRC verification,
 * and roce_parse_rw (the ICRC in place) on a writable copy: the same verdict and view, and
 * the copy's bytes as they were. Built with AddressSanitizer and UBSan, so any access
 * outside the input is a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_view v, w;
	enum roce_verdict r;
	uint8_t *copy;

	if (size > 65535 + 64)
		return 0;
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	for (unsigned int flags = 0; flags <= ROCE_PARSE_VERIFY_ICRC; flags++) {
		r = roce_parse(data, (uint32_t)size, flags, &v);
		if ((unsigned int)r >= ROCE_V_COUNT)
			abort();
		if (r == ROCE_V_OK &&
		    (v.payload < data || v.payload + v.payload_len + v.pad + 4 > data + size))
			abort();
		if (roce_parse_rw(copy, (uint32_t)size, flags, &w) != r || memcmp(copy, data, size))
			abort();
		/* the same view, but for the pointer into the other buffer */
		w.payload = v.payload;
		if (memcmp(&v, &w, sizeof(v)) != 0)
			abort();
	}
	free(copy);
	return 0;
}
