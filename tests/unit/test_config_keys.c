/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's key table (dataplane/config_keys.c): every section's keys are
 * unique, found by name, listed for an unknown key's error, and each one's reference cells
 * fit the generated table; an integer key's documented range is the range the parser
 * enforces (the same two numbers, in decimal or hex).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config_keys.h"

static void
check_cell(const char *section, const char *key, const char *what, const char *cell)
{
	if (cell == NULL || cell[0] == '\0')
		fail_msg("[%s] %s: no %s", section, key, what);
	for (const char *p = cell; *p; p++)
		if (*p == '\n' || (*p == '|' && (p == cell || p[-1] != '\\')))
			fail_msg("[%s] %s: the %s breaks the reference's table", section, key, what);
}

/* "LO … HI" in the value, each number in decimal or in upper-case hex. */
static int
range_documented(const struct dp_key *k)
{
	char forms[4][64];

	snprintf(forms[0], sizeof(forms[0]), "%" PRIu64 " … %" PRIu64, k->lo, k->hi);
	snprintf(forms[1], sizeof(forms[1]), "%" PRIu64 " … 0x%" PRIX64, k->lo, k->hi);
	snprintf(forms[2], sizeof(forms[2]), "0x%" PRIX64 " … 0x%" PRIX64, k->lo, k->hi);
	snprintf(forms[3], sizeof(forms[3]), "0x%" PRIX64 " … %" PRIu64, k->lo, k->hi);
	for (int i = 0; i < 4; i++)
		if (strstr(k->value, forms[i]) != NULL)
			return 1;
	return 0;
}

static void
test_sections(void **state)
{
	unsigned int nsec = 0;

	(void)state;
	for (const struct dp_key_section *const *s = dp_key_sections; *s != NULL; s++, nsec++) {
		assert_true((*s)->n > 0);
		for (unsigned int i = 0; i < (*s)->n; i++) {
			const struct dp_key *k = &(*s)->keys[i];

			assert_non_null(k->name);
			assert_int_equal(dp_key_find(*s, k->name), (int)i);
			check_cell((*s)->name, k->name, "value", k->value);
			check_cell((*s)->name, k->name, "default", k->dflt);
			check_cell((*s)->name, k->name, "meaning", k->doc);
			if (k->kind == DP_K_INT && !range_documented(k))
				fail_msg("[%s] %s: the parser takes %" PRIu64 " … %" PRIu64
					 ", the reference says '%s'", (*s)->name, k->name, k->lo,
					 k->hi, k->value);
			if ((k->kind == DP_K_INT || k->kind == DP_K_SIZE) && k->lo > k->hi)
				fail_msg("[%s] %s: an empty range", (*s)->name, k->name);
		}
	}
	assert_int_equal(nsec, 5);
}

static void
test_find_and_list(void **state)
{
	char buf[2048], small[16];

	(void)state;
	assert_int_equal(dp_key_find(&dp_conn_keys, "port"), DPK_CONN_PORT);
	assert_int_equal(dp_key_find(&dp_conn_keys, "path_probe"), DPK_CONN_PATH_PROBE);
	assert_int_equal(dp_key_find(&dp_conn_keys, "peer-ip"), -1);	/* the file's spelling */
	assert_int_equal(dp_key_find(&dp_conn_keys, ""), -1);
	assert_int_equal(dp_key_find(&dp_pipeline_keys, "rx_lcore"), -1);
	assert_string_equal(dp_key_list(&dp_pipeline_keys, buf, sizeof(buf)),
			    "mode, engines, rx_lcores, placement, fec, fec_jobs");
	/* a short buffer is cut, never overrun */
	dp_key_list(&dp_conn_keys, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	assert_int_equal(dp_conn_keys.keys[DPK_CONN_STRIPES].hi, 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_find_and_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
