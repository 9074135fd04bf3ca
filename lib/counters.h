/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One table per layer for its counters, in the manner of VPP's error tables: each counter
 * has a symbol (its enum), a name (what sdrctl, telemetry, the statistics and every JSON
 * output print), a kind and one line of documentation. A layer's counters are written
 * once, as an X-macro X(SYM, "name", KIND, "doc"); the enum, the name lookup, the table
 * the printers walk and the generated reference (docs/counters.md, `sdr-docgen
 * counters`) all come from it, so none can drift from another.
 *
 * Whether a counter is a drop is its kind, never its place in the enum.
 */
#ifndef SDR_COUNTERS_H
#define SDR_COUNTERS_H

#include <stdint.h>

enum sdr_counter_kind {
	SDR_CK_OK,	/**< work done as intended: packets placed, messages completed */
	SDR_CK_DROP,	/**< something received (or queued to send) was discarded */
	SDR_CK_ERROR,	/**< something failed: a message, an allocation, a decode */
	SDR_CK_INFO,	/**< an event that is neither: resends, waits, timer expiries */
	SDR_CK_COUNT
};

struct sdr_counter_def {
	const char *name;
	uint8_t kind;		/**< enum sdr_counter_kind */
	const char *doc;
};

/** The counters of one layer. */
struct sdr_counter_table {
	const char *group;	/**< the key its counters sit under ("receive", "port", ...) */
	const char *doc;	/**< what the layer is, one sentence */
	unsigned int n;
	const struct sdr_counter_def *defs;
};

/** One table entry from an X(SYM, "name", KIND, "doc") line. */
#define SDR_COUNTER_DEF(sym, name, kind, doc) { name, SDR_CK_##kind, doc },

/** "ok", "drop", "error", "info". */
const char *sdr_counter_kind_name(enum sdr_counter_kind k);

/** Counter @p c's name, or "invalid" out of range. */
const char *sdr_counter_name(const struct sdr_counter_table *t, unsigned int c);

/** 1 when counter @p c is a drop (kind DROP), else 0 (and 0 out of range). */
int sdr_counter_is_drop(const struct sdr_counter_table *t, unsigned int c);

/** Sum of the drop counters among @p v (t->n values). */
uint64_t sdr_counter_drops(const struct sdr_counter_table *t, const uint64_t *v);

/** Every layer's table that lib/ defines, NULL-terminated (for the generated reference). */
extern const struct sdr_counter_table *const sdr_lib_counter_tables[];

#endif /* SDR_COUNTERS_H */
