/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roce_parse on arbitrary bytes, with and without ICRC verification,
 * and roce_parse_rw (the ICRC in place) on a writable copy: the same verdict and view, and
 * the copy's bytes as they were; and roce_parse_sg on the input cut in three pieces (at
 * the headers' end and the payload's, as a zero-copy sender chains a frame, and at two
 * points the input's length picks), each in a buffer of its own: it declines, or gives
 * roce_parse's verdict and view, and with ROCE_PARSE_ICRC_LATER an ICRC that
 * roce_icrc_check() finds as roce_parse does where it was left. Built with AddressSanitizer and UBSan, so any access
 * outside the input, or outside a piece, is a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * roce_parse_sg() of @p data cut at @p a <= @p b, against roce_parse()'s @p r and @p v;
 * @p must: the cuts are the headers' end and the payload's, which it must take.
 */
static void
check_pieces(const uint8_t *data, size_t size, size_t a, size_t b, unsigned int flags,
	     enum roce_verdict r, const struct roce_view *v, int must)
{
	int took;

	size_t at[4] = { 0, a, b, size };
	struct roce_seg seg[3];
	uint8_t *piece[3];
	struct roce_view w;
	enum roce_verdict rs;

	for (unsigned int i = 0; i < 3; i++) {
		size_t n = at[i + 1] - at[i];

		piece[i] = malloc(n ? n : 1);
		if (piece[i] == NULL)
			abort();
		memcpy(piece[i], data + at[i], n);
		seg[i] = (struct roce_seg){ .data = piece[i], .len = (uint32_t)n };
	}
	took = roce_parse_sg(seg, 3, flags, &w, &rs);
	if (must && !took)
		abort();
	if (took) {
		if (rs != r || (r != ROCE_V_OK && r != ROCE_V_BAD_ICRC) ||
		    memcmp(w.payload, v->payload, v->payload_len) != 0)
			abort();
		w.frame = v->frame;
		w.payload = v->payload;
		if (memcmp(&w, v, sizeof(w)) != 0)
			abort();
		/* the ICRC left for later: then found as roce_parse() finds it */
		if (flags == 0) {
			struct roce_view x;
			enum roce_verdict rx = roce_parse(data, (uint32_t)size,
							  ROCE_PARSE_VERIFY_ICRC, &x);

			if (!roce_parse_sg(seg, 3, ROCE_PARSE_ICRC_LATER, &w, &rs))
				abort();
			if (w.icrc_checked ? rs != rx :
					     rs != ROCE_V_OK || roce_icrc_check(&w) != (rx == ROCE_V_OK))
				abort();
		}
	}
	for (unsigned int i = 0; i < 3; i++)
		free(piece[i]);
}

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
		/* the same view, but for the pointers into the other buffer */
		w.frame = v.frame;
		w.payload = v.payload;
		if (memcmp(&v, &w, sizeof(v)) != 0)
			abort();
		if (r == ROCE_V_OK || r == ROCE_V_BAD_ICRC) {
			size_t a = v.payload_off, b = a + v.payload_len;

			check_pieces(data, size, a, b, flags, r, &v, 1);
		}
		check_pieces(data, size, size / 3, size - size / 4, flags, r, &v, 0);
	}
	free(copy);
	return 0;
}
