/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection secrets: random tags and per-receive R_Keys (OpenSSL libcrypto). */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "roce_hdr.h"
#include "sdr_keys.h"

uint64_t
sdr_tag_random(void)
{
	uint8_t b[8];
	uint64_t v = 0;

	while (v == 0) {
		if (RAND_bytes(b, sizeof(b)) != 1)
			return 0;
		v = roce_get64(b);
	}
	return v;
}

int
sdr_rkeys_set(struct sdr_rkeys *k, uint64_t recv_tag, uint64_t send_tag, const uint8_t *secret)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t key[16];

	if (c == NULL)
		return -ENOMEM;
	if (secret != NULL) {
		memcpy(key, secret, sizeof(key));
	} else {
		roce_put64(key, recv_tag);
		roce_put64(key + 8, send_tag);
	}
	if (EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(c, 0) != 1) {
		EVP_CIPHER_CTX_free(c);
		return -ENOMEM;
	}
	EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)k->aes);
	k->aes = (struct sdr_aes *)c;
	k->recv_tag = recv_tag;
	k->send_tag = send_tag;
	k->secret = secret != NULL;
	memset(key, 0, sizeof(key));
	return 0;
}

void
sdr_rkeys_fini(struct sdr_rkeys *k)
{
	EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)k->aes);
	memset(k, 0, sizeof(*k));
}

uint32_t
sdr_rkeys_get(const struct sdr_rkeys *k, uint64_t seq)
{
	uint8_t in[16] = { 0 }, out[16];
	int n = 0;

	if (k->aes == NULL)
		return 0;
	roce_put32(in, (uint32_t)seq);
	if (k->secret) {	/* the tags go in the block: the key is the same for any */
		roce_put64(in + 4, k->recv_tag);
		roce_put32(in + 12, (uint32_t)k->send_tag);
	}
	/* ECB on a keyed context, one block, no padding: no allocation, cannot fail */
	if (EVP_EncryptUpdate((EVP_CIPHER_CTX *)k->aes, out, &n, in, 16) != 1 || n != 16)
		return 0;
	for (int i = 0; i < 16; i += 4)
		if (roce_get32(out + i) != 0)
			return roce_get32(out + i);
	return 1;	/* 128 zero bits: never seen, but a key is never 0 */
}

int
sdr_mac_init(struct sdr_mac *m, const uint8_t *key)
{
	OSSL_PARAM p[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)"AES-128-CBC", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;

	EVP_MAC_free(mac);	/* the context keeps its own reference */
	if (c == NULL || EVP_MAC_init(c, key, 16, p) != 1) {
		EVP_MAC_CTX_free(c);
		m->ctx = NULL;
		return -ENOMEM;
	}
	m->ctx = (struct sdr_macctx *)c;
	return 0;
}

void
sdr_mac_fini(struct sdr_mac *m)
{
	EVP_MAC_CTX_free((EVP_MAC_CTX *)m->ctx);
	m->ctx = NULL;
}

int
sdr_mac_compute(struct sdr_mac *m, const uint8_t *buf, size_t len, uint8_t *out)
{
	EVP_MAC_CTX *c = (EVP_MAC_CTX *)m->ctx;
	size_t n = 0;

	/* a NULL key starts a new message under the key already set: no allocation */
	if (c == NULL || EVP_MAC_init(c, NULL, 0, NULL) != 1 || EVP_MAC_update(c, buf, len) != 1 ||
	    EVP_MAC_final(c, out, &n, SDR_MAC_LEN) != 1 || n != SDR_MAC_LEN)
		return -EIO;
	return 0;
}

int
sdr_mac_verify(struct sdr_mac *m, const uint8_t *buf, size_t len, const uint8_t *tag)
{
	uint8_t want[SDR_MAC_LEN];

	return sdr_mac_compute(m, buf, len, want) == 0 &&
	       CRYPTO_memcmp(want, tag, SDR_MAC_LEN) == 0;
}

int
sdr_key_parse(const char *s, uint8_t key[16])
{
	uint8_t k[16];

	if (strlen(s) != 32)
		return -EINVAL;
	for (int i = 0; i < 32; i++) {
		int c = s[i], d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -EINVAL;
		k[i / 2] = (uint8_t)(i % 2 ? k[i / 2] | d : d << 4);
	}
	memcpy(key, k, sizeof(k));
	return 0;
}
