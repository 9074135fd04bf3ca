/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A parsed frame as text: what the parser found (roce_parse()) written as one line, the SDR
 * immediate split into message id, packet offset and fragment. sdr-dump prints it after
 * each frame's index; anything that shows a frame to a person uses the same words.
 */
#ifndef SDR_ROCE_FORMAT_H
#define SDR_ROCE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "roce_parse.h"
#include "sdr_imm.h"

/** Longest line roce_format_view() writes (IPv6 addresses and every header). */
#define ROCE_FORMAT_MAX 320

/**
 * One line, no newline, for @p frame as @p v and its verdict @p r describe it:
 * "10.0.0.1.49408 > 10.0.0.2.4791 UC_RDMA_WRITE_ONLY_IMM qpn 0x000100 psn 7 va 0x... rkey
 * 0x... len 4096 imm 0x... [msg 3 off 5 frag 0x0] payload 4096 icrc ok", or "not RoCEv2:
 * VERDICT" (with the UDP endpoints when the parser got that far). @p split NULL: the
 * immediate as a number only (the connection is not known). @return @p buf
 */
const char *roce_format_view(char *buf, size_t len, const uint8_t *frame,
			     const struct roce_view *v, enum roce_verdict r,
			     const struct sdr_imm_split *split);

/** The source (@p dst 0) or destination address of a parsed frame, or "-". @return @p buf */
const char *roce_format_addr(char *buf, size_t len, const uint8_t *frame,
			     const struct roce_view *v, int dst);

#endif /* SDR_ROCE_FORMAT_H */
