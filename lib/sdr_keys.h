/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Secrets of a connection: its tag, and the R_Key of every receive.
 *
 *  - A tag is 64 random bits from the operating system's CSPRNG (OpenSSL RAND_bytes),
 *    drawn when a connection starts; never 0.
 *  - The receive with sequence number s, posted by the side with tag R for messages from the
 *    side with tag S, has R_Key = the first non-zero 32-bit word of
 *    AES-128(key = R || S, block = the low 32 bits of s): random and non-zero for each
 *    receive. Each side learns the other's tag in the connection's handshake (as an RNIC's
 *    peer learns an R_Key at connection setup) and derives the key of each message itself,
 *    so a lost CTS costs nothing; a restart on either side changes a tag, and so every key.
 *
 *  - With a per-connection secret (auth_key, 16 bytes, configured on both sides), the R_Key
 *    is instead the first non-zero word of AES-128(key = the secret, block = the low 32 bits
 *    of s || R || the low 32 bits of S): one who reads the tags on the path cannot derive
 *    it; and every control message carries an AES-128-CMAC (RFC 4493, NIST SP 800-38B)
 *    of its bytes under the secret.
 *
 * OpenSSL's libcrypto is used because DPDK already depends on it (libdpdk-dev pulls in
 * libssl-dev) and its AES uses AES-NI on x86 and the ARMv8 crypto extensions on a
 * BlueField's Cortex-A78: one block per message, tens of nanoseconds.
 */
#ifndef SDR_KEYS_H
#define SDR_KEYS_H

#include <stddef.h>
#include <stdint.h>

/** A fresh random tag (never 0), or 0 if the OS has no entropy to give. */
uint64_t sdr_tag_random(void);

struct sdr_aes;	/* an AES-128 key schedule (an OpenSSL cipher context) */

/** The R_Keys of one direction: receives of the side tagged @p recv_tag. */
struct sdr_rkeys {
	struct sdr_aes *aes;
	uint64_t recv_tag;	/**< 0: not keyed */
	uint64_t send_tag;
	int secret;		/**< keyed with the connection's secret */
};

/** Key them; @p secret: 16 bytes, or NULL. @return 0, -ENOMEM. */
int sdr_rkeys_set(struct sdr_rkeys *k, uint64_t recv_tag, uint64_t send_tag,
		  const uint8_t *secret);
void sdr_rkeys_fini(struct sdr_rkeys *k);

/** R_Key of the receive with sequence number @p seq (non-zero); 0 if not keyed. */
uint32_t sdr_rkeys_get(const struct sdr_rkeys *k, uint64_t seq);

#define SDR_MAC_LEN	16

struct sdr_macctx;	/* an OpenSSL EVP_MAC context, keyed */

/** AES-128-CMAC under one key. */
struct sdr_mac {
	struct sdr_macctx *ctx;
};

/** Key it (16 bytes). @return 0, -ENOMEM. */
int sdr_mac_init(struct sdr_mac *m, const uint8_t *key);

void sdr_mac_fini(struct sdr_mac *m);

/** The MAC of @p len bytes. @return 0, -EIO. */
int sdr_mac_compute(struct sdr_mac *m, const uint8_t *buf, size_t len, uint8_t *out);

/** 1 if @p tag (SDR_MAC_LEN bytes) is the MAC of the @p len bytes (compared in constant time). */
int sdr_mac_verify(struct sdr_mac *m, const uint8_t *buf, size_t len, const uint8_t *tag);

/**
 * A 128-bit secret written as exactly 32 hex digits (either case) into @p key.
 * @return 0, or -EINVAL (@p key untouched). Callers never echo @p s in an error.
 */
int sdr_key_parse(const char *s, uint8_t key[16]);

#endif /* SDR_KEYS_H */
