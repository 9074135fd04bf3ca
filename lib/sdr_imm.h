/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDR immediate: the 32-bit ImmDt of every data packet carries
 *   message id (top bits) | packet offset within the message | fragment of the user immediate
 * with a split chosen per connection (default 10/18/4: 1024 message slots, 2^18 packets of
 * up to 4 KiB = 1 GiB messages, and the user's 32-bit immediate spread over 8 packets as
 * 4-bit fragments). The widths must sum to 32.
 */
#ifndef SDR_SDR_IMM_H
#define SDR_SDR_IMM_H

#include <stdint.h>

struct sdr_imm_split {
	uint8_t id_bits;	/**< message id width, 1..30 */
	uint8_t off_bits;	/**< packet offset width, 1..30 */
	uint8_t frag_bits;	/**< user-immediate fragment width, 0..30 (0: no user immediate) */
};

#define SDR_IMM_SPLIT_DEFAULT ((struct sdr_imm_split){ 10, 18, 4 })

/** Fields of one immediate. */
struct sdr_imm_fields {
	uint32_t msg_id;
	uint32_t pkt_off;
	uint32_t frag;
};

/**
 * Check a split.
 * @return 0, or -EINVAL when the widths do not sum to 32 or a width is out of range.
 */
int sdr_imm_split_check(const struct sdr_imm_split *s);

/**
 * Parse "A,B,C" (message id, offset and fragment widths) and check it.
 * @return 0, or -EINVAL with @p out untouched.
 */
int sdr_imm_split_parse(const char *str, struct sdr_imm_split *out);

/** Pack the fields; values wider than their field are truncated to it. */
static inline uint32_t
sdr_imm_pack(const struct sdr_imm_split *s, uint32_t msg_id, uint32_t pkt_off, uint32_t frag)
{
	uint32_t fmask = s->frag_bits ? (1u << s->frag_bits) - 1 : 0;
	uint32_t omask = (1u << s->off_bits) - 1;

	return (msg_id << (s->off_bits + s->frag_bits)) | ((pkt_off & omask) << s->frag_bits) |
	       (frag & fmask);
}

/** Unpack an immediate. */
static inline struct sdr_imm_fields
sdr_imm_unpack(const struct sdr_imm_split *s, uint32_t imm)
{
	struct sdr_imm_fields f;

	f.frag = s->frag_bits ? imm & ((1u << s->frag_bits) - 1) : 0;
	f.pkt_off = (imm >> s->frag_bits) & ((1u << s->off_bits) - 1);
	f.msg_id = imm >> (s->off_bits + s->frag_bits);
	return f;
}

/** Number of message ids (slots) the split can name. */
static inline uint32_t
sdr_imm_max_msgs(const struct sdr_imm_split *s)
{
	return 1u << s->id_bits;
}

/** Number of packets a message can have. */
static inline uint32_t
sdr_imm_max_pkts(const struct sdr_imm_split *s)
{
	return 1u << s->off_bits;
}

/** How many packets carry distinct fragments of the user immediate (0 if frag_bits is 0). */
static inline unsigned int
sdr_imm_nfrags(const struct sdr_imm_split *s)
{
	return s->frag_bits ? (32u + s->frag_bits - 1) / s->frag_bits : 0;
}

/** The fragment of @p user_imm that the packet at offset @p pkt_off carries. */
static inline uint32_t
sdr_imm_frag_of(const struct sdr_imm_split *s, uint32_t user_imm, uint32_t pkt_off)
{
	unsigned int n = sdr_imm_nfrags(s);

	if (n == 0)
		return 0;
	return (uint32_t)(((uint64_t)user_imm >> ((pkt_off % n) * s->frag_bits)) &
			  ((1u << s->frag_bits) - 1));
}

#endif /* SDR_SDR_IMM_H */
