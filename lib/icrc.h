/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 invariant CRC (ICRC, IBA annex A17.3.3): CRC-32 (IEEE 802.3, reflected) over
 *   8 bytes of ones standing in for the InfiniBand LRH,
 *   the IP header with its variant fields set to ones (IPv4: TOS, TTL, header checksum;
 *   IPv6: traffic class, flow label, hop limit),
 *   the UDP header with its checksum set to ones,
 *   the BTH with its FECN/BECN/reserved byte set to ones,
 *   and everything after the BTH up to the ICRC (extension headers, payload, pad).
 * The result travels least-significant byte first.
 *
 * Computed with ISA-L crc32_gzip_refl, which takes a seed, so the CRC chains over pieces:
 * a payload scattered over several buffers needs no copy.
 */
#ifndef SDR_ICRC_H
#define SDR_ICRC_H

#include <stddef.h>
#include <stdint.h>

/**
 * Start an ICRC: CRC over the masked pseudo-header, up to and including the BTH.
 *
 * @param ip          first byte of the IPv4 or IPv6 header; the UDP header and the BTH
 *                    must follow it contiguously.
 * @param ip_version  4 or 6.
 * @param ip_hdr_len  length of the IP header in bytes (IPv4 with options: 20..60; IPv6: 40).
 * @return the running CRC, to be continued with icrc_update().
 */
uint32_t icrc_begin(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len);

/** Continue an ICRC over the next @p len bytes at @p buf. */
uint32_t icrc_update(uint32_t crc, const void *buf, size_t len);

/**
 * ICRC of a packet held in one buffer.
 *
 * @param roce_len bytes from the first byte of the BTH to the last byte of pad, i.e. the
 *                 UDP payload without the ICRC.
 * @return the ICRC value; store it with roce_put_icrc().
 */
uint32_t icrc_compute(const uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
		      size_t roce_len);

/**
 * icrc_compute() in one pass over the frame itself, which is faster: the 14 bytes before
 * @p ip (an Ethernet header: every Ethernet frame has them, a VLAN tag adds 4 more) and
 * the variant fields are overwritten for the duration of the call and restored before it
 * returns. The buffer must be writable and read by nobody else meanwhile (a frame this
 * thread owns, not one shared with another reader); the result equals icrc_compute().
 */
uint32_t icrc_compute_inplace(uint8_t *ip, unsigned int ip_version, unsigned int ip_hdr_len,
			      size_t roce_len);

/*
 * The CRC of a short region whose length is fixed (a template's masked headers, 50 to 100
 * bytes), by carry-less multiplication where the CPU has it (x86 PCLMULQDQ), or by the
 * CRC-32 instructions (arm64).
 *
 * ISA-L folds a buffer 16 bytes after 16 bytes, each step waiting for the one before; on a
 * 68-byte header that chain costs as much as 300 bytes of payload (about 20 ns here). A
 * CRC is linear: the register after a message is the XOR of what each 8-byte word would
 * leave alone, and a word m bytes before the end leaves W(x) x^(8m+32) mod P. Every word
 * is multiplied by its own constant at once (none waits for another), and the sum is
 * reduced to 32 bits once (a fold and a Barrett reduction, three more multiplications).
 * The constants depend only on the length, so they are computed once, here.
 */
#define ICRC_SHORT_MAX 128

struct icrc_short {
	uint32_t zeros;		/**< icrc_update(0, ...) of len zero bytes (of len + after, less
				 *   that of after): the affine part */
	uint16_t len;		/**< the region's length, bytes */
	uint8_t nwords;		/**< 8-byte words that cover it, the last one partial */
	uint8_t clmul;		/**< the CPU multiplies (x86) or has CRC-32 instructions
				 *   (arm64, and no bytes after): 1; else ISA-L does the work */
	uint64_t last_mask;	/**< the bytes of the last word that belong to the region */
	uint32_t k[ICRC_SHORT_MAX / 8];	/**< x^(8m - 33) mod P, bit-reflected, per word */
	uint32_t after;		/**< icrc_short_init_before(): bytes after the region */
};

/** Prepare icrc_short() for regions of @p len bytes (1..ICRC_SHORT_MAX). @return 0, -EINVAL */
int icrc_short_init(struct icrc_short *s, size_t len);

/**
 * Prepare for a region of @p len bytes (1..ICRC_SHORT_MAX) that @p after more bytes
 * follow (a template's headers before a payload of a known length): icrc_short() and
 * icrc_short_words() then give the region's share of the CRC over both, which XORed with
 * icrc_update(0, those bytes, @p after) is the CRC of the whole. The two no longer chain,
 * so the payload's CRC need not wait for the headers'. The constants take a few hundred
 * multiplications of 32-bit polynomials: once per template, not per frame.
 * @return 0; -EINVAL (@p len out of range, @p after 0 or above 1 MiB); -ENOTSUP where the
 * CPU has no carry-less multiply (the result is still right, by chaining over @p after
 * zero bytes, but slower than chaining on).
 */
int icrc_short_init_before(struct icrc_short *s, size_t len, size_t after);

/**
 * icrc_update(0, @p buf, s->len), the same value: the start of a CRC that icrc_update()
 * continues (for icrc_short_init_before(), the region's share instead; without clmul that
 * costs two CRCs over the bytes after it, zeros, per call: chain there). @p buf must have 8 readable bytes from each multiple of 8 below s->len (up
 * to 7 bytes past the region, which do not count).
 */
uint32_t icrc_short(const struct icrc_short *s, const uint8_t *buf);

/**
 * icrc_short() of the bytes held in @p w: s->nwords words, word j the bytes 8j..8j+7 read
 * little-endian, the bytes of the last one past s->len zero. For a caller that composes
 * the region in registers (a template's words with a frame's fields XORed in).
 */
uint32_t icrc_short_words(const struct icrc_short *s, const uint64_t *w);

/**
 * The linear part of icrc_short_words(), over words @p first to s->nwords - 1 of @p w
 * (the words before them count as zero): for words a, and d zero before @p first,
 * icrc_short_words(s, a ^ d) == icrc_short_words(s, a) ^ icrc_short_words_from(s, d,
 * first). For a region that is the same in every frame but for a few fields: the share of
 * the constant words a is computed once, and a frame multiplies only the words d its
 * fields fall in.
 */
uint32_t icrc_short_words_from(const struct icrc_short *s, const uint64_t *w, unsigned int first);

#endif /* SDR_ICRC_H */
