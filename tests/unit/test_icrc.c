/* SPDX-License-Identifier: BSD-3-Clause */
/* ICRC against independently computed vectors (Scapy for IPv4, a spec derivation for IPv6). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <isa-l/crc.h>

#include "icrc.h"
#include "roce_hdr.h"
#include "test_vectors.h"

static const char *vec_path;

struct layout {
	uint32_t l3, ip_len, bth, roce_len;
};

/* Locate the headers of a vector without our parser, so this test stands alone. */
static struct layout
locate(const struct vec *v)
{
	struct layout l;

	l.l3 = roce_get16(v->frame + 12) == ROCE_ETHER_TYPE_VLAN ? 18 : 14;
	l.ip_len = v->ip_version == 4 ? (v->frame[l.l3] & 0xF) * 4u : 40u;
	l.bth = l.l3 + l.ip_len + 8;
	l.roce_len = v->len - l.bth - 4;
	return l;
}

static void
test_vectors_match(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		const struct vec *v = &vectors[i];
		struct layout l = locate(v);
		uint32_t got = icrc_compute(v->frame + l.l3, (unsigned int)v->ip_version, l.ip_len,
					    l.roce_len);
		uint32_t want = roce_get_icrc(v->frame + v->len - 4);

		if (got != want)
			fail_msg("%s: icrc 0x%08x, vector says 0x%08x", v->name, got, want);
	}
}

/* Variant fields are masked: changing them must not change the ICRC. */
static void
test_variant_fields_ignored(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		struct vec v = vectors[i];
		struct layout l = locate(&v);
		uint32_t want = roce_get_icrc(v.frame + v.len - 4);
		uint8_t *ip = v.frame + l.l3;

		if (v.ip_version == 4) {
			ip[1] ^= 0xFF;	/* TOS */
			ip[8] ^= 0x3C;	/* TTL */
			ip[10] ^= 0x11;	/* header checksum */
		} else {
			ip[0] ^= 0x0F;	/* traffic class */
			ip[1] ^= 0xFF;	/* traffic class + flow label */
			ip[3] ^= 0x55;	/* flow label */
			ip[7] ^= 0x40;	/* hop limit */
		}
		v.frame[l.bth - 2] ^= 0x77;	/* UDP checksum */
		v.frame[l.bth + 4] ^= 0xC0;	/* FECN, BECN */
		assert_int_equal(icrc_compute(ip, (unsigned int)v.ip_version, l.ip_len, l.roce_len),
				 want);
	}
}

/* Every invariant byte counts: flipping any one of them changes the ICRC. */
static void
test_invariant_fields_covered(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		const struct vec *v = &vectors[i];
		struct layout l = locate(v);
		uint32_t want = roce_get_icrc(v->frame + v->len - 4);
		uint32_t stride = l.roce_len > 512 ? 61 : 1;

		/* UDP ports and length, BTH opcode..PSN except byte 4, all that follows */
		for (uint32_t off = l.bth - 8; off < l.bth + l.roce_len; off += stride) {
			struct vec w = *v;

			if (off == l.bth + 4 || off == l.bth - 2 || off == l.bth - 1)
				continue;	/* masked: FECN/BECN byte, UDP checksum */
			w.frame[off] ^= 0x01;
			if (icrc_compute(w.frame + l.l3, (unsigned int)w.ip_version, l.ip_len,
					 l.roce_len) == want)
				fail_msg("%s: byte %u not covered by the ICRC", v->name, off);
		}
	}
}

/* Chaining over pieces gives the one-shot result, wherever the payload is split. */
static void
test_chained_pieces(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		const struct vec *v = &vectors[i];
		struct layout l = locate(v);
		uint32_t want = roce_get_icrc(v->frame + v->len - 4);
		uint32_t rest = l.roce_len - 12;
		const uint8_t *p = v->frame + l.bth + 12;

		for (uint32_t cut = 0; cut <= rest; cut += rest / 7 + 1) {
			uint32_t c = icrc_begin(v->frame + l.l3, (unsigned int)v->ip_version, l.ip_len);

			c = icrc_update(c, p, cut);
			c = icrc_update(c, p + cut, rest - cut);
			assert_int_equal(c, want);
		}
	}
}

/*
 * In place: the same ICRC as the vectors (IPv4, IPv4 with options, VLAN, IPv6), the
 * variant fields still ignored, and every byte of the frame as it was afterwards.
 */
static void
test_inplace(void **state)
{
	(void)state;
	for (int i = 0; i < nvectors; i++) {
		struct vec v = vectors[i];
		struct layout l = locate(&v);
		uint32_t want = roce_get_icrc(v.frame + v.len - 4);
		uint8_t *ip = v.frame + l.l3;
		struct vec before;

		for (int variant = 0; variant < 2; variant++) {
			if (variant) {	/* variant fields and the Ethernet bytes under the LRH */
				ip[v.ip_version == 4 ? 8 : 7] ^= 0x21;
				v.frame[l.bth + 4] ^= 0xC0;
				v.frame[l.l3 - 3] ^= 0x5A;
			}
			before = v;
			if (icrc_compute_inplace(ip, (unsigned int)v.ip_version, l.ip_len,
						 l.roce_len) != want)
				fail_msg("%s: in-place icrc differs (variant %d)", v.name, variant);
			assert_memory_equal(v.frame, before.frame, v.len);
		}
	}
}

/*
 * In place at every length the CRC kernels treat differently (under 64 bytes, under 256,
 * longer) and at every alignment of the frame: equal to the copying icrc_compute(), blind
 * to each variant field and to the 8 bytes under the LRH taken one at a time, changed by
 * an invariant byte next to them, and the buffer as it was afterwards.
 */
static void
test_inplace_lengths(void **state)
{
	static const struct { unsigned int ver, ip_len; } hdrs[] = { { 4, 20 }, { 4, 24 }, { 6, 40 } };
	static uint8_t buf[64 + 1024], before[sizeof(buf)];
	static const uint8_t zero_crc[] = { 0xe9, 0x62, 0xb3, 0x50, 0x00, 0x00 };
	uint32_t x = 12345;

	(void)state;
	/* icrc.c starts an IPv4 ICRC 6 bytes early, over these: their CRC-32 must be 0 */
	assert_int_equal(crc32_gzip_refl(0, zero_crc, sizeof(zero_crc)), 0);
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (unsigned int h = 0; h < sizeof(hdrs) / sizeof(hdrs[0]); h++) {
		unsigned int ver = hdrs[h].ver, ipl = hdrs[h].ip_len;
		/* offsets from the IP header of the variant bytes, and one invariant byte */
		unsigned int var4[] = { 1, 8, 10, 11 }, var6[] = { 0, 1, 2, 3, 7 };
		unsigned int *var = ver == 4 ? var4 : var6, nvar = ver == 4 ? 4 : 5;

		for (size_t roce_len = 12; roce_len < 700; roce_len += roce_len < 300 ? 1 : 37) {
			unsigned int align = (unsigned int)(roce_len % 61);
			uint8_t *ip = buf + 14 + align;
			uint8_t *udp = ip + ipl;
			uint32_t want = icrc_compute(ip, ver, ipl, roce_len), got;

			memcpy(before, buf, sizeof(buf));
			got = icrc_compute_inplace(ip, ver, ipl, roce_len);
			if (got != want)
				fail_msg("v%u/%u, %zu B: in place %08x, copying %08x", ver, ipl,
					 roce_len, got, want);
			assert_memory_equal(buf, before, sizeof(buf));
			for (unsigned int k = 0; k < nvar + 8 + 3; k++) {
				uint8_t *b = k < nvar ? ip + var[k] :
					     k < nvar + 8 ? ip - 8 + (k - nvar) :
					     k == nvar + 8 ? udp + 6 : k == nvar + 9 ? udp + 7 :
					     udp + ROCE_UDP_LEN + 4;
				/* IPv6 keeps the version nibble of byte 0 */
				uint8_t flip = ver == 6 && b == ip ? 0x0F : 0xA5;

				*b ^= flip;
				got = icrc_compute_inplace(ip, ver, ipl, roce_len);
				*b ^= flip;
				if (got != want)
					fail_msg("v%u/%u, %zu B: byte %td not ignored", ver, ipl,
						 roce_len, b - ip);
			}
			for (unsigned int k = 0; k < 14; k++) {	/* the Ethernet header does not */
				ip[(ptrdiff_t)k - 14] ^= 0x3C;
				got = icrc_compute_inplace(ip, ver, ipl, roce_len);
				ip[(ptrdiff_t)k - 14] ^= 0x3C;
				if (got != want)
					fail_msg("v%u/%u, %zu B: Ethernet byte %u counted", ver, ipl,
						 roce_len, k);
			}
			ip[ver == 4 ? 12 : 8] ^= 0x01;	/* the source address counts */
			got = icrc_compute_inplace(ip, ver, ipl, roce_len);
			ip[ver == 4 ? 12 : 8] ^= 0x01;
			assert_int_not_equal(got, want);
			udp[ROCE_UDP_LEN + 5] ^= 0x01;	/* so does the QPN after the masked byte */
			got = icrc_compute_inplace(ip, ver, ipl, roce_len);
			udp[ROCE_UDP_LEN + 5] ^= 0x01;
			assert_int_not_equal(got, want);
		}
	}
}

/*
 * icrc_short() at every length it takes and every alignment: ISA-L's value over the same
 * bytes, on the multiplying path and on ISA-L's own; blind to the bytes past the region
 * it reads; changed by every single bit inside it (one bit per byte, walking the bit).
 */
static void
test_short(void **state)
{
	static uint8_t buf[8 + ICRC_SHORT_MAX + 8];
	struct icrc_short s;
	uint32_t x = 777;

	(void)state;
	assert_int_equal(icrc_short_init(&s, 0), -EINVAL);
	assert_int_equal(icrc_short_init(&s, ICRC_SHORT_MAX + 1), -EINVAL);
	assert_int_equal(icrc_short_init(&s, 68), 0);
	if (!s.clmul)
		print_message("no PCLMULQDQ or CRC-32 instructions here: icrc_short() is ISA-L's "
			      "CRC only\n");
	for (size_t len = 1; len <= ICRC_SHORT_MAX; len++) {
		assert_int_equal(icrc_short_init(&s, len), 0);
		for (unsigned int align = 0; align < 8; align++) {
			uint8_t *b = buf + align;
			uint32_t want, got;

			for (size_t i = 0; i < sizeof(buf); i++) {
				x = x * 1103515245u + 12345u;
				buf[i] = (uint8_t)(x >> 16);
			}
			want = crc32_gzip_refl(0, b, len);
			got = icrc_short(&s, b);
			if (got != want)
				fail_msg("%zu B at +%u: %08x, ISA-L %08x", len, align, got, want);
			for (size_t i = len; i < len + 8 && align + i < sizeof(buf); i++) {
				b[i] ^= 0x5A;
				assert_int_equal(icrc_short(&s, b), want);
				b[i] ^= 0x5A;
			}
			for (size_t i = 0; i < len; i++) {
				b[i] ^= (uint8_t)(1u << (i % 8));
				got = icrc_short(&s, b);
				b[i] ^= (uint8_t)(1u << (i % 8));
				if (got == want)
					fail_msg("%zu B: byte %zu not counted", len, i);
			}
			s.clmul = 0;
			assert_int_equal(icrc_short(&s, b), want);
			assert_int_equal(icrc_short_init(&s, len), 0);
		}
	}
}

/* Whether this CPU takes the multiplying path of icrc_short_init_before(). */
static int
have_clmul(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#else
	return 0;
#endif
}

/*
 * icrc_short_init_before(): the region's share XORed with ISA-L's CRC of the bytes after
 * it is ISA-L's CRC of the whole, for lengths after it up to 64 KiB + 4 (several CRC
 * blocks of zeros in the constants) on both the multiplying path and the chained one.
 */
static void
test_short_before(void **state)
{
	static const size_t afters[] = { 1, 4, 7, 256, 1024, 4096, 4100, 9000, 65536 + 4 };
	static const size_t lens[] = { 1, 8, 13, 68, 75, ICRC_SHORT_MAX };
	static uint8_t buf[ICRC_SHORT_MAX + 8 + 65536 + 4];
	struct icrc_short s;
	uint32_t x = 4242;
	int rc;

	(void)state;
	assert_int_equal(icrc_short_init_before(&s, 0, 64), -EINVAL);
	assert_int_equal(icrc_short_init_before(&s, 68, 0), -EINVAL);
	assert_int_equal(icrc_short_init_before(&s, ICRC_SHORT_MAX + 1, 64), -EINVAL);
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (unsigned int a = 0; a < sizeof(afters) / sizeof(afters[0]); a++) {
		for (unsigned int l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t len = lens[l], after = afters[a];
			uint32_t want = crc32_gzip_refl(0, buf, len + after), part, got;

			rc = icrc_short_init_before(&s, len, after);
			assert_int_equal(rc, have_clmul() ? 0 : -ENOTSUP);
			part = crc32_gzip_refl(0, buf + len, after);
			got = icrc_short(&s, buf) ^ part;
			if (got != want)
				fail_msg("%zu B before %zu: %08x, ISA-L %08x", len, after, got, want);
			s.clmul = 0;	/* the chained path gives the same */
			assert_int_equal(icrc_short(&s, buf) ^ part, want);
			buf[len - 1] ^= 0x10;	/* and the region counts */
			assert_int_not_equal(icrc_short(&s, buf) ^ part, want);
			buf[len - 1] ^= 0x10;
		}
	}
}

/*
 * icrc_short_words_from(): the share of words a with words d XORed in from word "first"
 * on is a's share XORed with d's linear part, at every first word, for a region alone and
 * one before 4 KiB, on the multiplying path and on the other (clmul off); and every word
 * from "first" on counts, none before it does.
 */
static void
test_short_words_from(void **state)
{
	static const size_t lens[] = { 1, 8, 13, 68, 75, ICRC_SHORT_MAX };
	uint32_t x = 31337;

	(void)state;
	for (unsigned int l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (int before = 0; before <= 1; before++) {
			for (int clmul = 1; clmul >= 0; clmul--) {
				struct icrc_short s;

				if (before)
					(void)icrc_short_init_before(&s, lens[l], 4096);
				else
					assert_int_equal(icrc_short_init(&s, lens[l]), 0);
				s.clmul = (uint8_t)(s.clmul && clmul);
				for (unsigned int first = 0; first < s.nwords; first++) {
					uint64_t a[ICRC_SHORT_MAX / 8], d[ICRC_SHORT_MAX / 8];
					uint64_t ad[ICRC_SHORT_MAX / 8];
					uint32_t want, got;

					for (unsigned int j = 0; j < s.nwords; j++) {
						x = x * 1103515245u + 12345u;
						a[j] = (uint64_t)x << 32 | (x * 7u);
						x = x * 1103515245u + 12345u;
						d[j] = j < first ? 0 : (uint64_t)x << 29 ^ x;
					}
					a[s.nwords - 1] &= s.last_mask;
					d[s.nwords - 1] &= s.last_mask;
					for (unsigned int j = 0; j < s.nwords; j++)
						ad[j] = a[j] ^ d[j];
					want = icrc_short_words(&s, ad);
					got = icrc_short_words(&s, a) ^ icrc_short_words_from(&s, d, first);
					if (got != want)
						fail_msg("%zu B%s, clmul %d, from word %u: %08x, want %08x",
							 lens[l], before ? " before 4 KiB" : "", s.clmul,
							 first, got, want);
					/* the words before first do not count; the last one does */
					d[0] ^= first > 0 ? 0x8000000000000001ull : 0;
					assert_int_equal(icrc_short_words_from(&s, d, first) ^
							 icrc_short_words(&s, a), want);
					d[s.nwords - 1] ^= 1;
					assert_int_not_equal(icrc_short_words_from(&s, d, first) ^
							     icrc_short_words(&s, a), want);
				}
			}
		}
	}
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_match),
		cmocka_unit_test(test_variant_fields_ignored),
		cmocka_unit_test(test_invariant_fields_covered),
		cmocka_unit_test(test_chained_pieces),
		cmocka_unit_test(test_inplace),
		cmocka_unit_test(test_inplace_lengths),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_short_before),
		cmocka_unit_test(test_short_words_from),
	};

	vec_path = argc > 1 ? argv[1] : "tests/data/icrc_vectors.txt";
	if (load_vectors(vec_path) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
