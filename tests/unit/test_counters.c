/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counter tables (counters.h) of lib/ and of the dataplane: well formed (names a
 * script can use as keys, unique in their layer, a kind, a meaning that fits one cell of
 * the generated reference), the name lookups of every module agree with them, and drops
 * are what the kinds say, never what the enum order says.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "counters.h"
#include "dp_counters.h"
#include "link_emu.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "roce_parse.h"
#include "sdr_endpoint.h"
#include "sdr_rx.h"
#include "sdr_tx.h"

static const struct sdr_counter_table *const *const lists[] = { sdr_lib_counter_tables,
								 dp_counter_tables };

static void
check_table(const struct sdr_counter_table *t)
{
	assert_non_null(t->group);
	assert_true(t->n > 0);
	assert_true(t->doc != NULL && strlen(t->doc) > 10);
	for (unsigned int c = 0; c < t->n; c++) {
		const struct sdr_counter_def *d = &t->defs[c];
		size_t len = strlen(d->doc);

		if (!islower((unsigned char)d->name[0]))
			fail_msg("%s: counter %u \"%s\" does not start with a letter", t->group, c,
				 d->name);
		for (const char *p = d->name; *p; p++)
			if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
				fail_msg("%s.%s: not a key a script can use", t->group, d->name);
		assert_true(d->kind < SDR_CK_COUNT);
		if (len < 10 || len > 200 || d->doc[len - 1] == '.')
			fail_msg("%s.%s: the meaning must be one line, without a final period",
				 t->group, d->name);
		for (const char *p = d->doc; *p; p++)
			if ((unsigned char)*p > 126 || *p == '|' || *p == '\n')
				fail_msg("%s.%s: the meaning breaks the reference's table", t->group,
					 d->name);
		for (unsigned int e = 0; e < c; e++)
			if (strcmp(t->defs[e].name, d->name) == 0)
				fail_msg("%s.%s: twice in its layer", t->group, d->name);
	}
}

static void
test_tables_well_formed(void **state)
{
	unsigned int ntables = 0;
	const char *groups[32];

	(void)state;
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (const struct sdr_counter_table *const *t = lists[l]; *t != NULL; t++) {
			check_table(*t);
			for (unsigned int g = 0; g < ntables; g++)
				if (strcmp(groups[g], (*t)->group) == 0)
					fail_msg("two tables named %s", (*t)->group);
			assert_true(ntables < 32);
			groups[ntables++] = (*t)->group;
		}
	assert_int_equal(ntables, 11);
	assert_string_equal(sdr_counter_kind_name(SDR_CK_DROP), "drop");
	assert_string_equal(sdr_counter_kind_name(SDR_CK_COUNT), "invalid");
}

/* Each module's name lookup is its table's, "invalid" past the end. */
static void
test_names_from_tables(void **state)
{
	(void)state;
	for (unsigned int c = 0; c <= SDR_RX_NCOUNTERS; c++)
		assert_string_equal(sdr_rx_counter_name((enum sdr_rx_counter)c),
				    sdr_counter_name(&sdr_rx_counter_table, c));
	for (unsigned int c = 0; c <= SDR_TX_NCOUNTERS; c++)
		assert_string_equal(sdr_tx_counter_name((enum sdr_tx_counter)c),
				    sdr_counter_name(&sdr_tx_counter_table, c));
	for (unsigned int c = 0; c <= SDR_EP_NCOUNTERS; c++)
		assert_string_equal(sdr_ep_counter_name((enum sdr_ep_counter)c),
				    sdr_counter_name(&sdr_ep_counter_table, c));
	for (unsigned int c = 0; c <= REL_TX_NCOUNTERS; c++)
		assert_string_equal(rel_tx_counter_name((enum rel_tx_counter)c),
				    sdr_counter_name(&rel_tx_counter_table, c));
	for (unsigned int c = 0; c <= REL_RX_NCOUNTERS; c++)
		assert_string_equal(rel_rx_counter_name((enum rel_rx_counter)c),
				    sdr_counter_name(&rel_rx_counter_table, c));
	for (unsigned int c = 0; c <= LINK_EMU_NCOUNTERS; c++)
		assert_string_equal(link_emu_counter_name((enum link_emu_counter)c),
				    sdr_counter_name(&link_emu_counter_table, c));
	for (unsigned int c = 0; c <= ROCE_V_COUNT; c++)
		assert_string_equal(roce_verdict_name((enum roce_verdict)c),
				    sdr_counter_name(&roce_verdict_table, c));
	assert_string_equal(sdr_rx_counter_name(SDR_RX_NCOUNTERS), "invalid");
	assert_string_equal(dp_port_counter_name(DP_PORT_TX_FULL), "tx_ring_full_drops");
	/* the names outputs are keyed by */
	assert_string_equal(sdr_ep_counter_table.group, "endpoint");
	assert_string_equal(sdr_rx_counter_table.group, "receive");
	assert_string_equal(sdr_tx_counter_table.group, "send");
	assert_string_equal(rel_tx_counter_table.group, "reliability_tx");
	assert_string_equal(rel_rx_counter_table.group, "reliability_rx");
}

/*
 * The drops: every parser verdict but "ok"; every receive verdict before "placed" but
 * "duplicate" (a resend's second copy is not a fault); a port's counters that discard a
 * frame, not the ones that count work or events; sdr_counter_drops() sums exactly those.
 */
static void
test_drops_by_kind(void **state)
{
	uint64_t v[64];

	(void)state;
	for (unsigned int c = 0; c < ROCE_V_COUNT; c++)
		assert_int_equal(sdr_counter_is_drop(&roce_verdict_table, c), c != ROCE_V_OK);
	for (unsigned int c = 0; c < SDR_RX_NCOUNTERS; c++)
		assert_int_equal(sdr_counter_is_drop(&sdr_rx_counter_table, c),
				 c < SDR_RX_PLACED && c != SDR_RX_DUPLICATE);
	assert_int_equal(sdr_counter_is_drop(&sdr_rx_counter_table, SDR_RX_NCOUNTERS), 0);
	assert_true(sdr_counter_is_drop(&dp_port_counter_table, DP_PORT_UNKNOWN_QPN));
	assert_true(sdr_counter_is_drop(&dp_port_counter_table, DP_PORT_TX_FULL));
	assert_false(sdr_counter_is_drop(&dp_port_counter_table, DP_PORT_EXCEPTION));
	assert_false(sdr_counter_is_drop(&dp_port_counter_table, DP_PORT_TX_ZERO_COPY));
	for (unsigned int c = DP_PORT_RX_PKTS; c <= DP_PORT_TX_BYTES; c++)
		assert_int_equal(dp_port_counter_table.defs[c].kind, SDR_CK_OK);
	assert_true(SDR_RX_NCOUNTERS <= 64);
	for (unsigned int c = 0; c < SDR_RX_NCOUNTERS; c++)
		v[c] = 1ull << c;
	assert_int_equal(sdr_counter_drops(&sdr_rx_counter_table, v),
			 (1ull << SDR_RX_PLACED) - 1 - (1ull << SDR_RX_DUPLICATE));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_well_formed),
		cmocka_unit_test(test_names_from_tables),
		cmocka_unit_test(test_drops_by_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
