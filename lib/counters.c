/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter tables: lookups over the per-layer tables (counters.h). */
#include <stddef.h>

#include "counters.h"
#include "ec_codec.h"
#include "link_emu.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "roce_parse.h"
#include "sdr_endpoint.h"
#include "sdr_rx.h"
#include "sdr_tx.h"

static const char *const kind_names[SDR_CK_COUNT] = { "ok", "drop", "error", "info" };

const char *
sdr_counter_kind_name(enum sdr_counter_kind k)
{
	return (unsigned int)k < SDR_CK_COUNT ? kind_names[k] : "invalid";
}

const char *
sdr_counter_name(const struct sdr_counter_table *t, unsigned int c)
{
	return c < t->n ? t->defs[c].name : "invalid";
}

int
sdr_counter_is_drop(const struct sdr_counter_table *t, unsigned int c)
{
	return c < t->n && t->defs[c].kind == SDR_CK_DROP;
}

uint64_t
sdr_counter_drops(const struct sdr_counter_table *t, const uint64_t *v)
{
	uint64_t n = 0;

	for (unsigned int c = 0; c < t->n; c++)
		if (t->defs[c].kind == SDR_CK_DROP)
			n += v[c];
	return n;
}

const struct sdr_counter_table *const sdr_lib_counter_tables[] = {
	&roce_verdict_table,
	&sdr_ep_counter_table,
	&sdr_rx_counter_table,
	&sdr_tx_counter_table,
	&rel_tx_counter_table,
	&rel_rx_counter_table,
	&ec_counter_table,
	&link_emu_counter_table,
	NULL,
};
