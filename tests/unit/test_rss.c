/* SPDX-License-Identifier: BSD-3-Clause */
/* The Toeplitz hash on the published RSS verification vectors, and source-port steering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "rss.h"

struct vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t addrs_only, with_ports;
};

/* Microsoft's RSS verification suite (the default key): destination, source, hashes. */
static const struct vec v4[] = {
	{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
};

static const struct vec v6[] = {
	{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d },
	{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf },
	{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251,
	  0x4b61e985, 0x02d1feef },
};

static void
check(const struct vec *v, int af)
{
	uint8_t src[16], dst[16], t[32];
	size_t a = af == AF_INET6 ? 16 : 4;

	assert_int_equal(inet_pton(af, v->src, src), 1);
	assert_int_equal(inet_pton(af, v->dst, dst), 1);
	memcpy(t, src, a);
	memcpy(t + a, dst, a);
	assert_int_equal(rss_toeplitz(rss_default_key, t, 2 * a), v->addrs_only);
	assert_int_equal(rss_hash_udp(rss_default_key, af == AF_INET6 ? 6 : 4, src, dst,
				      v->sport, v->dport), v->with_ports);
}

static void
test_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++)
		check(&v4[i], AF_INET);
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++)
		check(&v6[i], AF_INET6);
}

/* Every queue of 1, 2, 4, 8 gets a port whose hash lands on it; other counts are refused. */
static void
test_pick_sport(void **state)
{
	uint8_t src[16] = { 10, 0, 0, 1 }, dst[16] = { 10, 0, 0, 2 };

	(void)state;
	for (unsigned int q = 1; q <= 8; q *= 2)
		for (unsigned int e = 0; e < q; e++)
			for (uint16_t start = 0xC000; start < 0xC400; start += 0x77) {
				uint16_t s = rss_pick_sport(rss_default_key, 4, src, dst, 4791,
							    start, q, e);

				assert_true(s >= 0xC000);
				assert_int_equal(rss_hash_udp(rss_default_key, 4, src, dst, s,
							      4791) % q, e);
			}
	/* from the top of the range it wraps to 0xC000 */
	assert_true(rss_pick_sport(rss_default_key, 4, src, dst, 4791, 0xFFFF, 8, 3) >= 0xC000);
	assert_int_equal(rss_pick_sport(rss_default_key, 4, src, dst, 4791, 0xC000, 3, 1), 0);
	assert_int_equal(rss_pick_sport(rss_default_key, 4, src, dst, 4791, 0xC000, 4, 4), 0);
	assert_int_equal(rss_pick_sport(rss_default_key, 4, src, dst, 4791, 0xC000, 0, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_pick_sport),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
