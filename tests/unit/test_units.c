/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit parsing: sizes, times, rates, probabilities; every malformed string rejected. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "units.h"

static void
test_sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(units_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(units_parse_size("64KiB", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(units_parse_size("8MiB", &v), 0);
	assert_int_equal(v, 8u << 20);
	assert_int_equal(units_parse_size("1GiB", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(units_parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(units_parse_size("1.5K", &v), 0);
	assert_int_equal(v, 1536);
	assert_int_equal(units_parse_size("1.3B", &v), -EINVAL);
	assert_int_equal(units_parse_size("-1", &v), -EINVAL);
	assert_int_equal(units_parse_size("12 KiB", &v), -EINVAL);
	assert_int_equal(units_parse_size("KiB", &v), -EINVAL);
	assert_int_equal(units_parse_size("1PiB", &v), -EINVAL);
	assert_int_equal(units_parse_size("", &v), -EINVAL);
	/* whole numbers exactly, past a double's 2^53; up to 2^64 - 1 and no further */
	assert_int_equal(units_parse_size("9007199254740993", &v), 0);
	assert_true(v == 9007199254740993ull);
	assert_int_equal(units_parse_size("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(units_parse_size("18446744073709551616", &v), -EINVAL);
	assert_int_equal(units_parse_size("16777216TiB", &v), -EINVAL);
	assert_int_equal(units_parse_size("16777215TiB", &v), 0);
	assert_true(v == 16777215ull << 40);
	assert_int_equal(units_parse_size("1e3", &v), 0);
	assert_int_equal(v, 1000);
	/* strtod() reads hexadecimal floats and infinity; a size here is decimal */
	assert_int_equal(units_parse_size("0x1p12", &v), -EINVAL);
	assert_int_equal(units_parse_size("0x10", &v), -EINVAL);
	assert_int_equal(units_parse_size("infinity", &v), -EINVAL);
}

static void
test_times_rates_probs(void **state)
{
	double d;
	uint64_t u;

	(void)state;
	assert_int_equal(units_parse_time("25ms", &d), 0);
	assert_float_equal(d, 0.025, 1e-12);
	assert_int_equal(units_parse_time("100us", &d), 0);
	assert_float_equal(d, 1e-4, 1e-15);
	assert_int_equal(units_parse_time("2", &d), 0);
	assert_float_equal(d, 2.0, 0);
	assert_int_equal(units_parse_time("5min", &d), -EINVAL);
	assert_int_equal(units_parse_rate("400G", &d), 0);
	assert_float_equal(d, 400e9, 1);
	assert_int_equal(units_parse_rate("2.5Mbit", &d), 0);
	assert_float_equal(d, 2.5e6, 1e-6);
	assert_int_equal(units_parse_rate("10Gbps", &d), 0);
	assert_float_equal(d, 10e9, 1);
	assert_int_equal(units_parse_rate("10GB", &d), -EINVAL);
	assert_int_equal(units_parse_rate("0x1p30", &d), -EINVAL);
	assert_int_equal(units_parse_time("0x1p-4", &d), -EINVAL);
	assert_int_equal(units_parse_time("1e-3", &d), 0);
	assert_float_equal(d, 1e-3, 1e-15);
	assert_int_equal(units_parse_number("0x1p4", &d), -EINVAL);
	assert_int_equal(units_parse_number("nan", &d), -EINVAL);
	assert_int_equal(units_parse_number("1e400", &d), -EINVAL);
	assert_int_equal(units_parse_number("1.5e+2", &d), 0);
	assert_float_equal(d, 150, 0);
	assert_int_equal(units_parse_number("2e", &d), -EINVAL);
	assert_int_equal(units_parse_prob("1e-3", &d), 0);
	assert_float_equal(d, 1e-3, 1e-15);
	assert_int_equal(units_parse_prob("0.5%", &d), 0);
	assert_float_equal(d, 0.005, 1e-15);
	assert_int_equal(units_parse_prob("1.5", &d), -EINVAL);
	/* white space then a sign, which strtod() would take: -0 printed back as "-0" */
	assert_int_equal(units_parse_prob("\v-0", &d), -EINVAL);
	assert_int_equal(units_parse_time("\t-0", &d), -EINVAL);
	assert_int_equal(units_parse_prob("-0", &d), -EINVAL);
	assert_int_equal(units_parse_u64("0x10", 100, &u), 0);
	assert_int_equal(u, 16);
	assert_int_equal(units_parse_u64("101", 100, &u), -EINVAL);
	/* decimal, whatever the leading zeros; hexadecimal only after 0x */
	assert_int_equal(units_parse_u64("0300", 1000, &u), 0);
	assert_int_equal(u, 300);
	assert_int_equal(units_parse_u64("0900", 1000, &u), 0);
	assert_int_equal(u, 900);
	assert_int_equal(units_parse_u64("0", 1000, &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(units_parse_u64("0X1f", 1000, &u), 0);
	assert_int_equal(u, 31);
	assert_int_equal(units_parse_u64("0x", 1000, &u), -EINVAL);
	assert_int_equal(units_parse_u64("0x-1", 1000, &u), -EINVAL);
	assert_int_equal(units_parse_u64("0x 1", 1000, &u), -EINVAL);
	assert_int_equal(units_parse_u64("1e6", UINT64_MAX, &u), -EINVAL);
	assert_int_equal(units_parse_u64("99999999999999999999999", UINT64_MAX, &u), -EINVAL);
	assert_int_equal(units_parse_u64("-1", UINT64_MAX, &u), -EINVAL);
}

static void
test_format(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(units_fmt_size(65536, b, sizeof(b)), "64KiB");
	assert_string_equal(units_fmt_size(1000, b, sizeof(b)), "1000B");
	assert_string_equal(units_fmt_size(3u << 29, b, sizeof(b)), "1.5GiB");
	assert_string_equal(units_fmt_time(0.025, b, sizeof(b)), "25ms");
	assert_string_equal(units_fmt_time(3e-6, b, sizeof(b)), "3us");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_times_rates_probs),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
