/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection secrets: random tags and per-receive R_Keys (OpenSSL libcrypto). */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
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
sdr_rkeys_set(struct sdr_rkeys *k, uint64_t recv_tag, uint64_t send_tag)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t key[16];

	if (c == NULL)
		return -ENOMEM;
	roce_put64(key, recv_tag);
	roce_put64(key + 8, send_tag);
	if (EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(c, 0) != 1) {
		EVP_CIPHER_CTX_free(c);
		return -ENOMEM;
	}
	EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)k->aes);
	k->aes = (struct sdr_aes *)c;
	k->recv_tag = recv_tag;
	k->send_tag = send_tag;
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
	/* ECB on a keyed context, one block, no padding: no allocation, cannot fail */
	if (EVP_EncryptUpdate((EVP_CIPHER_CTX *)k->aes, out, &n, in, 16) != 1 || n != 16)
		return 0;
	for (int i = 0; i < 16; i += 4)
		if (roce_get32(out + i) != 0)
			return roce_get32(out + i);
	return 1;	/* 128 zero bits: never seen, but a key is never 0 */
}
