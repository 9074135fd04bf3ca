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

#endif /* SDR_ICRC_H */
