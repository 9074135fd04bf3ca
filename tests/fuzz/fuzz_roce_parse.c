/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roce_parse on arbitrary bytes, with and without ICRC verification.
 * Built with AddressSanitizer and UBSan, so any read outside the input is a crash.
 */
#include <stdint.h>
#include <stdlib.h>

#include "roce_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_view v;
	enum roce_verdict r;

	if (size > 65535 + 64)
		return 0;
	for (unsigned int flags = 0; flags <= ROCE_PARSE_VERIFY_ICRC; flags++) {
		r = roce_parse(data, (uint32_t)size, flags, &v);
		if ((unsigned int)r >= ROCE_V_COUNT)
			abort();
		if (r == ROCE_V_OK &&
		    (v.payload < data || v.payload + v.payload_len + v.pad + 4 > data + size))
			abort();
	}
	return 0;
}
