/* SPDX-License-Identifier: BSD-3-Clause */
/* ICRC against independently computed vectors (Scapy for IPv4, a spec derivation for IPv6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_match),
		cmocka_unit_test(test_variant_fields_ignored),
		cmocka_unit_test(test_invariant_fields_covered),
		cmocka_unit_test(test_chained_pieces),
		cmocka_unit_test(test_inplace),
	};

	vec_path = argc > 1 ? argv[1] : "tests/data/icrc_vectors.txt";
	if (load_vectors(vec_path) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
