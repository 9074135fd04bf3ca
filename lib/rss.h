/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive-side scaling as a NIC computes it: the Toeplitz hash of a packet's addresses and
 * ports under a 40-byte key, and the choice of a UDP source port that makes the receiver's
 * RSS put a packet on a given queue. Steering by source port is how a sender lands each of
 * a connection's packets on the engine lcore that owns it at the far end, with no flow
 * rule there: the far end only programs the key and its redirection table (entry i ->
 * queue i mod engines).
 *
 * Hand-written because lib/ has no DPDK (rte_softrss() is the same function); tested on
 * the published verification vectors of the Toeplitz hash.
 */
#ifndef SDR_RSS_H
#define SDR_RSS_H

#include <stddef.h>
#include <stdint.h>

#define RSS_KEY_LEN 40

/** The key the dataplane programs into its ports (the widely used verification key). */
extern const uint8_t rss_default_key[RSS_KEY_LEN];

/** Toeplitz hash of @p len bytes (at most RSS_KEY_LEN - 4) under @p key. */
uint32_t rss_toeplitz(const uint8_t key[RSS_KEY_LEN], const uint8_t *data, size_t len);

/**
 * The hash a receiver computes over an IPv4 or IPv6 UDP packet (source address,
 * destination address, source port, destination port: network order, as on the wire).
 */
uint32_t rss_hash_udp(const uint8_t key[RSS_KEY_LEN], uint8_t ip_version, const uint8_t *src_ip,
		      const uint8_t *dst_ip, uint16_t sport, uint16_t dport);

/**
 * The UDP source port, from @p start on (in the RoCEv2 range 0xC000 ... 0xFFFF, wrapping),
 * whose hash lands on queue @p queue of @p queues at the receiver (hash mod queues: its
 * redirection table maps entry i to queue i mod queues, and @p queues divides the table's
 * size — a power of two).
 * @return the port, or 0 if @p queue >= @p queues or @p queues is not a power of two.
 */
uint16_t rss_pick_sport(const uint8_t key[RSS_KEY_LEN], uint8_t ip_version, const uint8_t *src_ip,
			const uint8_t *dst_ip, uint16_t dport, uint16_t start, unsigned int queues,
			unsigned int queue);

#endif /* SDR_RSS_H */
