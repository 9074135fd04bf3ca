/* SPDX-License-Identifier: BSD-3-Clause */
/* Long-haul link emulator core: delay, rate, loss, reordering, duplication, corruption. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link_emu.h"
#include "rng.h"
#include "units.h"

static const struct sdr_counter_def counter_defs[LINK_EMU_NCOUNTERS] = {
	LINK_EMU_COUNTERS(SDR_COUNTER_DEF)
};

const struct sdr_counter_table link_emu_counter_table = {
	.group = "link",
	.doc = "the link emulator of a port (or of one of its paths), per direction it shapes",
	.n = LINK_EMU_NCOUNTERS,
	.defs = counter_defs,
};

static const char *const err_names[LINK_EMU_E_COUNT] = {
#define X(sym, name, doc) [LINK_EMU_E_##sym] = name,
	LINK_EMU_ERRORS(X)
#undef X
};

static const char *const err_docs[LINK_EMU_E_COUNT] = {
#define X(sym, name, doc) [LINK_EMU_E_##sym] = doc,
	LINK_EMU_ERRORS(X)
#undef X
};

/* One random stream per effect, so that e.g. the loss pattern does not depend on dup. */
enum {
	RNG_LOSS,
	RNG_BURST,
	RNG_DUP,
	RNG_CORRUPT,
	RNG_REORDER,
	RNG_COUNT
};

/* A queued copy; ordered by (t, seq). */
struct le_entry {
	uint64_t t;
	uint64_t seq;
	void *pkt;
	uint32_t len;
};

struct link_emu {
	struct link_emu_config cfg;
	struct sdr_rng rng[RNG_COUNT];
	int ge_bad;		/* Gilbert-Elliott state */
	uint32_t owed;		/* copies admitted and not yet enqueued */
	int transparent;	/* the configuration changes nothing (link_emu_pass()) */
	uint64_t free_ns;	/* the link is free at free_ns + free_rem / rate_bps ns */
	uint64_t free_rem;
	uint64_t seq;		/* enqueue order, breaks ties */
	uint32_t capacity;
	uint32_t count;		/* ring_n + heap_n */
	struct le_entry *ring;	/* FIFO of copies whose times do not decrease */
	uint32_t ring_head;
	uint32_t ring_n;
	struct le_entry *heap;	/* min-heap of the others (reordered or overtaking) */
	uint32_t heap_n;
	uint64_t ctr[LINK_EMU_NCOUNTERS];
};

const char *
link_emu_counter_name(enum link_emu_counter c)
{
	return sdr_counter_name(&link_emu_counter_table, (unsigned int)c);
}

static int
err_index(int err)
{
	if (err < 0)
		err = -err;
	return err < LINK_EMU_E_COUNT ? err : -1;
}

const char *
link_emu_err_name(int err)
{
	int e = err_index(err);

	return e >= 0 ? err_names[e] : "invalid";
}

const char *
link_emu_strerror(int err)
{
	int e = err_index(err);

	return e >= 0 ? err_docs[e] : "invalid link emulator error code";
}

/* ---------------------------------------------------------------- configuration */

void
link_emu_config_default(struct link_emu_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->overhead = LINK_EMU_DEFAULT_OVERHEAD;
	cfg->seed = LINK_EMU_DEFAULT_SEED;
}

/* In [0, 1]; false for NaN. */
static int
prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0;
}

int
link_emu_config_check(const struct link_emu_config *c)
{
	if (c->delay_ns > LINK_EMU_MAX_DELAY_NS)
		return -LINK_EMU_E_DELAY;
	if (c->rate_bps != 0 &&
	    (c->rate_bps < LINK_EMU_MIN_RATE || c->rate_bps > LINK_EMU_MAX_RATE))
		return -LINK_EMU_E_RATE;
	if (c->overhead > LINK_EMU_MAX_OVERHEAD)
		return -LINK_EMU_E_OVERHEAD;
	if (c->queue_ns > LINK_EMU_MAX_DELAY_NS)
		return -LINK_EMU_E_QUEUE;
	if (!prob_ok(c->loss))
		return -LINK_EMU_E_LOSS;
	if (!prob_ok(c->ge_p_gb) || !prob_ok(c->ge_p_bg) || !prob_ok(c->ge_loss_good) ||
	    !prob_ok(c->ge_loss_bad))
		return -LINK_EMU_E_BURST;
	if (c->burst && c->loss > 0)
		return -LINK_EMU_E_LOSS_AND_BURST;
	if (!prob_ok(c->reorder) || c->reorder_ns > LINK_EMU_MAX_DELAY_NS)
		return -LINK_EMU_E_REORDER;
	if (!prob_ok(c->dup))
		return -LINK_EMU_E_DUP;
	if (!prob_ok(c->corrupt))
		return -LINK_EMU_E_CORRUPT;
	return 0;
}

uint64_t
link_emu_capacity_hint(const struct link_emu_config *cfg, uint32_t pkt_len)
{
	double bits = ((double)pkt_len + cfg->overhead) * 8.0;
	double t_ns = (double)cfg->delay_ns + (double)cfg->reorder_ns;

	if (cfg->rate_bps == 0 || bits == 0)
		return 0;
	return (uint64_t)ceil(t_ns * (double)cfg->rate_bps / 1e9 / bits) + 1;
}

/* ---------------------------------------------------------------- parser */

#define FIELDS_MAX 4

/* Split a comma-separated word into at most FIELDS_MAX fields. @return count or -1. */
static int
split_commas(const char *s, char *buf, size_t len, const char *field[FIELDS_MAX])
{
	int n = 0;
	char *p;

	if (strlen(s) >= len)
		return -1;
	strcpy(buf, s);
	p = buf;
	for (;;) {
		char *comma = strchr(p, ',');

		if (n == FIELDS_MAX)
			return -1;
		field[n++] = p;
		if (comma == NULL)
			return n;
		*comma = '\0';
		p = comma + 1;
	}
}

/* A time in [0, max] seconds as nanoseconds. */
static int
parse_ns(const char *s, uint64_t *ns)
{
	double sec;

	if (units_parse_time(s, &sec) != 0 || !(sec * 1e9 <= (double)LINK_EMU_MAX_DELAY_NS))
		return -EINVAL;
	*ns = (uint64_t)llround(sec * 1e9);
	return 0;
}

static int
key_delay(struct link_emu_config *c, const char *v)
{
	return parse_ns(v, &c->delay_ns) == 0 ? 0 : -LINK_EMU_E_DELAY;
}

static int
key_queue(struct link_emu_config *c, const char *v)
{
	return parse_ns(v, &c->queue_ns) == 0 ? 0 : -LINK_EMU_E_QUEUE;
}

static int
key_rate(struct link_emu_config *c, const char *v)
{
	double r;

	if (strcmp(v, "unlimited") == 0) {
		c->rate_bps = 0;
		return 0;
	}
	if (units_parse_rate(v, &r) != 0 ||
	    (r != 0 && !(r >= LINK_EMU_MIN_RATE && r <= LINK_EMU_MAX_RATE)))
		return -LINK_EMU_E_RATE;
	c->rate_bps = (uint64_t)llround(r);
	return 0;
}

static int
key_overhead(struct link_emu_config *c, const char *v)
{
	uint64_t b;

	if (units_parse_size(v, &b) != 0 || b > LINK_EMU_MAX_OVERHEAD)
		return -LINK_EMU_E_OVERHEAD;
	c->overhead = (uint32_t)b;
	return 0;
}

static int
key_loss(struct link_emu_config *c, const char *v)
{
	if (units_parse_prob(v, &c->loss) != 0)
		return -LINK_EMU_E_LOSS;
	c->burst = 0;
	return 0;
}

static int
key_burst(struct link_emu_config *c, const char *v)
{
	const char *f[FIELDS_MAX];
	double p[FIELDS_MAX] = { 0, 0, 0, 1 };
	char buf[128];
	int n;

	if (strcmp(v, "off") == 0) {
		c->burst = 0;
		return 0;
	}
	n = split_commas(v, buf, sizeof(buf), f);
	if (n != 2 && n != 4)
		return -LINK_EMU_E_BURST;
	for (int i = 0; i < n; i++)
		if (units_parse_prob(f[i], &p[i]) != 0)
			return -LINK_EMU_E_BURST;
	c->burst = 1;
	c->loss = 0;
	c->ge_p_gb = p[0];
	c->ge_p_bg = p[1];
	c->ge_loss_good = p[2];
	c->ge_loss_bad = p[3];
	return 0;
}

static int
key_reorder(struct link_emu_config *c, const char *v)
{
	const char *f[FIELDS_MAX];
	char buf[128];
	uint64_t ns = c->reorder_ns;
	double p;
	int n;

	if (strcmp(v, "off") == 0) {
		c->reorder = 0;
		return 0;
	}
	n = split_commas(v, buf, sizeof(buf), f);
	/* a probability with no extra delay to give would count copies as reordered and
	 * reorder none */
	if (n < 1 || n > 2 || units_parse_prob(f[0], &p) != 0 ||
	    (n == 2 && parse_ns(f[1], &ns) != 0) || (p > 0 && ns == 0))
		return -LINK_EMU_E_REORDER;
	c->reorder = p;
	c->reorder_ns = ns;
	return 0;
}

static int
key_dup(struct link_emu_config *c, const char *v)
{
	return units_parse_prob(v, &c->dup) == 0 ? 0 : -LINK_EMU_E_DUP;
}

static int
key_corrupt(struct link_emu_config *c, const char *v)
{
	return units_parse_prob(v, &c->corrupt) == 0 ? 0 : -LINK_EMU_E_CORRUPT;
}

static int
key_seed(struct link_emu_config *c, const char *v)
{
	return units_parse_u64(v, UINT64_MAX, &c->seed) == 0 ? 0 : -LINK_EMU_E_SEED;
}

/* "off": a transparent link; overhead and seed are properties of the setup, kept. */
static int
key_off(struct link_emu_config *c, const char *v)
{
	struct link_emu_config d;

	(void)v;
	link_emu_config_default(&d);
	d.overhead = c->overhead;
	d.seed = c->seed;
	d.salt = c->salt;
	*c = d;
	return 0;
}

enum { KEY_PLAIN, KEY_LOSS, KEY_BURST };

static const struct le_key {
	const char *word;
	int has_value;
	int model;		/* KEY_LOSS / KEY_BURST: which loss model it names */
	int (*apply)(struct link_emu_config *c, const char *v);
} keys[] = {
	{ "delay",	1, KEY_PLAIN,	key_delay },
	{ "rate",	1, KEY_PLAIN,	key_rate },
	{ "queue",	1, KEY_PLAIN,	key_queue },
	{ "loss",	1, KEY_LOSS,	key_loss },
	{ "burst",	1, KEY_BURST,	key_burst },
	{ "reorder",	1, KEY_PLAIN,	key_reorder },
	{ "dup",	1, KEY_PLAIN,	key_dup },
	{ "corrupt",	1, KEY_PLAIN,	key_corrupt },
	{ "seed",	1, KEY_PLAIN,	key_seed },
	{ "overhead",	1, KEY_PLAIN,	key_overhead },
	{ "off",	0, KEY_PLAIN,	key_off },
};

static const struct le_key *
key_find(const char *word)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(word, keys[i].word) == 0)
			return &keys[i];
	return NULL;
}

int
link_emu_parse(struct link_emu_config *cfg, int argc, const char *const argv[], int *bad)
{
	struct link_emu_config c = *cfg;
	int seen[3] = { 0, 0, 0 };
	int i = 0, rc;

	while (i < argc) {
		const struct le_key *k = argv[i] ? key_find(argv[i]) : NULL;
		const char *v = NULL;

		if (k == NULL) {
			rc = -LINK_EMU_E_UNKNOWN;
			goto fail;
		}
		seen[k->model] = 1;
		if (seen[KEY_LOSS] && seen[KEY_BURST]) {
			rc = -LINK_EMU_E_LOSS_AND_BURST;
			goto fail;
		}
		if (k->has_value) {
			if (i + 1 >= argc || argv[i + 1] == NULL) {
				rc = -LINK_EMU_E_MISSING;
				goto fail;
			}
			v = argv[++i];
		}
		rc = k->apply(&c, v);
		if (rc != 0)
			goto fail;
		i++;
	}
	rc = link_emu_config_check(&c);
	if (rc != 0) {
		i = -1;		/* bad before the words, in a field they did not set */
		goto fail;
	}
	*cfg = c;
	return 0;
fail:
	if (bad != NULL)
		*bad = i;
	return rc;
}

/* ---------------------------------------------------------------- format */

/* "0", "250ns", "100us", "12.5ms", "1s": the largest unit not above the value. */
static void
append_time(char *buf, size_t len, size_t *off, uint64_t ns)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" } };
	size_t i = 0;

	if (ns == 0) {
		units_appendf(buf, len, off, "0");
		return;
	}
	while ((double)ns < u[i].div)
		i++;
	units_appendf(buf, len, off, "%.15g%s", (double)ns / u[i].div, u[i].unit);
}

static void
append_rate(char *buf, size_t len, size_t *off, uint64_t bps)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "K" }, { 1, "" } };
	size_t i = 0;

	if (bps == 0) {
		units_appendf(buf, len, off, "unlimited");
		return;
	}
	while ((double)bps < u[i].div)
		i++;
	units_appendf(buf, len, off, "%.15g%sbit/s", (double)bps / u[i].div, u[i].unit);
}

const char *
link_emu_format(const struct link_emu_config *c, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	units_appendf(buf, len, &off, "delay ");
	append_time(buf, len, &off, c->delay_ns);
	units_appendf(buf, len, &off, " rate ");
	append_rate(buf, len, &off, c->rate_bps);
	if (c->queue_ns != 0) {
		units_appendf(buf, len, &off, " queue ");
		append_time(buf, len, &off, c->queue_ns);
	}
	if (c->burst)
		units_appendf(buf, len, &off, " burst %.15g,%.15g,%.15g,%.15g", c->ge_p_gb, c->ge_p_bg,
		       c->ge_loss_good, c->ge_loss_bad);
	else
		units_appendf(buf, len, &off, " loss %.15g", c->loss);
	units_appendf(buf, len, &off, " reorder %.15g", c->reorder);
	if (c->reorder > 0) {
		units_appendf(buf, len, &off, ",");
		append_time(buf, len, &off, c->reorder_ns);
	}
	units_appendf(buf, len, &off, " dup %.15g corrupt %.15g", c->dup, c->corrupt);
	if (c->overhead != LINK_EMU_DEFAULT_OVERHEAD)
		units_appendf(buf, len, &off, " overhead %u", c->overhead);
	if (c->seed != LINK_EMU_DEFAULT_SEED)
		units_appendf(buf, len, &off, " seed %llu", (unsigned long long)c->seed);
	return buf;
}

/* ---------------------------------------------------------------- queue */

static int
entry_before(const struct le_entry *a, const struct le_entry *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
heap_push(struct link_emu *le, const struct le_entry *e)
{
	struct le_entry *h = le->heap;
	uint32_t i = le->heap_n++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!entry_before(e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = *e;
}

static void
heap_pop(struct link_emu *le)
{
	struct le_entry *h = le->heap;
	uint32_t n = --le->heap_n, i = 0;
	struct le_entry last = h[n];

	for (;;) {
		uint32_t child = 2 * i + 1;

		if (child >= n)
			break;
		if (child + 1 < n && entry_before(&h[child + 1], &h[child]))
			child++;
		if (!entry_before(&h[child], &last))
			break;
		h[i] = h[child];
		i = child;
	}
	h[i] = last;
}

static struct le_entry *
ring_at(const struct link_emu *le, uint32_t k)
{
	uint32_t i = le->ring_head + k;

	if (i >= le->capacity)
		i -= le->capacity;
	return &le->ring[i];
}

/* Copies without a reordering delay go to the FIFO while their times do not decrease. */
static void
queue_put(struct link_emu *le, uint64_t t, void *pkt, uint32_t len, int jittered)
{
	struct le_entry e = { .t = t, .seq = le->seq++, .pkt = pkt, .len = len };

	if (!jittered && (le->ring_n == 0 || t >= ring_at(le, le->ring_n - 1)->t)) {
		*ring_at(le, le->ring_n) = e;
		le->ring_n++;
	} else {
		heap_push(le, &e);
	}
	le->count++;
	if (le->count > le->ctr[LINK_EMU_C_QUEUE_PEAK])
		le->ctr[LINK_EMU_C_QUEUE_PEAK] = le->count;
}

/* The earliest copy, or NULL; *from_heap says where it is. */
static const struct le_entry *
queue_min(const struct link_emu *le, int *from_heap)
{
	const struct le_entry *r = le->ring_n ? ring_at(le, 0) : NULL;
	const struct le_entry *h = le->heap_n ? &le->heap[0] : NULL;

	*from_heap = h != NULL && (r == NULL || entry_before(h, r));
	return *from_heap ? h : r;
}

static void
queue_take(struct link_emu *le, int from_heap)
{
	if (from_heap) {
		heap_pop(le);
	} else {
		le->ring_head = le->ring_head + 1 == le->capacity ? 0 : le->ring_head + 1;
		le->ring_n--;
	}
	le->count--;
}

/* ---------------------------------------------------------------- emulator */

static void
seed_streams(struct link_emu *le)
{
	struct sdr_rng master;

	sdr_rng_seed(&master, le->cfg.seed);
	if (le->cfg.salt != 0)	/* (none: the streams of the seed alone, as ever) */
		sdr_rng_seed(&master, sdr_rng_next(&master) ^ le->cfg.salt);
	for (int i = 0; i < RNG_COUNT; i++)
		sdr_rng_seed(&le->rng[i], sdr_rng_next(&master));
	le->ge_bad = 0;
}

/* No delay, no rate limit and no impairment: a copy would be due the moment it is sent. */
static int
is_transparent(const struct link_emu_config *c)
{
	return c->delay_ns == 0 && c->rate_bps == 0 && !c->burst && c->loss == 0 &&
	       c->reorder == 0 && c->dup == 0 && c->corrupt == 0;
}

struct link_emu *
link_emu_create(const struct link_emu_config *cfg, uint32_t capacity)
{
	struct link_emu *le;

	if (link_emu_config_check(cfg) != 0 || capacity == 0 || capacity > LINK_EMU_MAX_CAPACITY)
		return NULL;
	le = calloc(1, sizeof(*le));
	if (le == NULL)
		return NULL;
	le->ring = calloc(capacity, sizeof(*le->ring));
	le->heap = calloc(capacity, sizeof(*le->heap));
	if (le->ring == NULL || le->heap == NULL) {
		link_emu_destroy(le);
		return NULL;
	}
	le->cfg = *cfg;
	le->transparent = is_transparent(cfg);
	le->capacity = capacity;
	seed_streams(le);
	return le;
}

void
link_emu_destroy(struct link_emu *le)
{
	if (le == NULL)
		return;
	free(le->ring);
	free(le->heap);
	free(le);
}

int
link_emu_set_config(struct link_emu *le, const struct link_emu_config *cfg)
{
	int rc = link_emu_config_check(cfg);
	int reseed;

	if (rc != 0)
		return rc;
	/* the fraction of a nanosecond is in units of the old rate: round it up */
	if (cfg->rate_bps != le->cfg.rate_bps && le->free_rem != 0) {
		le->free_ns++;
		le->free_rem = 0;
	}
	if (cfg->burst && !le->cfg.burst)
		le->ge_bad = 0;
	reseed = cfg->seed != le->cfg.seed || cfg->salt != le->cfg.salt;
	le->cfg = *cfg;
	le->transparent = is_transparent(cfg);
	if (reseed)
		seed_streams(le);
	return 0;
}

const struct link_emu_config *
link_emu_get_config(const struct link_emu *le)
{
	return &le->cfg;
}

/* A draw only when the probability is not zero: a disabled effect costs nothing. */
static int
chance(struct sdr_rng *r, double p)
{
	return p > 0 && sdr_rng_unit(r) < p;
}

/* One step of the Gilbert-Elliott chain, then the loss of the state it is in. */
static int
burst_lost(struct link_emu *le)
{
	const struct link_emu_config *c = &le->cfg;
	const struct sdr_ge ge = { c->ge_p_gb, c->ge_p_bg, c->ge_loss_good, c->ge_loss_bad };
	int v = sdr_ge_step(&le->rng[RNG_BURST], &ge, &le->ge_bad);

	if (v & 2)
		le->ctr[LINK_EMU_C_BURSTS]++;
	return v & 1;
}

int
link_emu_admit(struct link_emu *le, uint32_t len)
{
	const struct link_emu_config *c = &le->cfg;

	if (len > LINK_EMU_MAX_LEN) {
		le->ctr[LINK_EMU_C_DROPPED_TOO_LONG]++;
		return -EMSGSIZE;
	}
	le->ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED] += le->owed;
	le->owed = 0;
	le->ctr[LINK_EMU_C_PACKETS_IN]++;
	le->ctr[LINK_EMU_C_BYTES_IN] += len;
	if (c->burst) {
		if (burst_lost(le)) {
			le->ctr[LINK_EMU_C_DROPPED_BURST]++;
			return 0;
		}
	} else if (chance(&le->rng[RNG_LOSS], c->loss)) {
		le->ctr[LINK_EMU_C_DROPPED_LOSS]++;
		return 0;
	}
	le->owed = 1;
	if (chance(&le->rng[RNG_DUP], c->dup)) {
		le->ctr[LINK_EMU_C_DUPLICATED]++;
		le->owed = 2;
	}
	return (int)le->owed;
}

int
link_emu_transparent(const struct link_emu *le)
{
	return le->transparent;
}

int
link_emu_pass_burst(struct link_emu *le, uint32_t n, uint64_t bytes, uint32_t max_len)
{
	if (!le->transparent || le->count != 0 || max_len > LINK_EMU_MAX_LEN)
		return 0;
	le->ctr[LINK_EMU_C_COPIES_NOT_ENQUEUED] += le->owed;
	le->owed = 0;
	le->ctr[LINK_EMU_C_PACKETS_IN] += n;
	le->ctr[LINK_EMU_C_BYTES_IN] += bytes;
	le->ctr[LINK_EMU_C_DELIVERED] += n;
	le->ctr[LINK_EMU_C_BYTES_OUT] += bytes;
	return 1;
}

int
link_emu_pass(struct link_emu *le, uint32_t len)
{
	return link_emu_pass_burst(le, 1, len, len);
}

static void
corrupt_bit(struct link_emu *le, uint8_t *data, uint32_t len)
{
	uint64_t bit;

	if (!chance(&le->rng[RNG_CORRUPT], le->cfg.corrupt) || data == NULL || len == 0)
		return;
	bit = sdr_rng_next(&le->rng[RNG_CORRUPT]) % ((uint64_t)len * 8);
	data[bit >> 3] ^= (uint8_t)(1u << (bit & 7));
	le->ctr[LINK_EMU_C_CORRUPTED]++;
}

/*
 * Serialize a copy arriving at @p now after the previous one: the link's free time is kept
 * exactly, as free_ns + free_rem / rate ns. @return the end of serialization, rounded up.
 */
static uint64_t
serialize(struct link_emu *le, uint64_t now, uint32_t len)
{
	uint64_t rate = le->cfg.rate_bps, num;

	if (rate == 0)	/* unlimited now, a backlog of a rate before: behind it, in order */
		return now > le->free_ns ? now : le->free_ns + (le->free_rem != 0);
	if (now > le->free_ns || (now == le->free_ns && le->free_rem == 0)) {
		le->free_ns = now;
		le->free_rem = 0;
	} else {
		le->ctr[LINK_EMU_C_RATE_WAITS]++;
	}
	/* < (2^20 + 4096) * 8e9 + 1e14: no overflow */
	num = ((uint64_t)len + le->cfg.overhead) * 8 * 1000000000ull + le->free_rem;
	le->free_ns += num / rate;
	le->free_rem = num % rate;
	return le->free_ns + (le->free_rem != 0);
}

int
link_emu_enqueue(struct link_emu *le, uint64_t now, void *pkt, uint32_t len, uint8_t *data)
{
	const struct link_emu_config *c = &le->cfg;
	int jittered;
	uint64_t t;

	if (len > LINK_EMU_MAX_LEN)
		return -EMSGSIZE;
	if (le->owed == 0)
		return -EINVAL;
	le->owed--;
	/* full: the emulator's capacity, or the bottleneck's buffer (the wait for the link
	 * past queue_ns) */
	if (le->count == le->capacity ||
	    (c->queue_ns != 0 && c->rate_bps != 0 && le->free_ns > now + c->queue_ns)) {
		le->ctr[LINK_EMU_C_DROPPED_QUEUE_FULL]++;
		return -ENOBUFS;
	}
	corrupt_bit(le, data, len);
	t = serialize(le, now, len) + c->delay_ns;
	jittered = chance(&le->rng[RNG_REORDER], c->reorder);
	if (jittered) {
		le->ctr[LINK_EMU_C_REORDERED]++;
		if (c->reorder_ns > 0)
			t += sdr_rng_next(&le->rng[RNG_REORDER]) % (c->reorder_ns + 1);
	}
	queue_put(le, t, pkt, len, jittered);
	return 0;
}

unsigned int
link_emu_dequeue(struct link_emu *le, uint64_t now, void **out, unsigned int n)
{
	unsigned int k = 0;

	while (k < n) {
		int from_heap;
		const struct le_entry *e = queue_min(le, &from_heap);

		if (e == NULL || e->t > now)
			break;
		out[k++] = e->pkt;
		le->ctr[LINK_EMU_C_DELIVERED]++;
		le->ctr[LINK_EMU_C_BYTES_OUT] += e->len;
		queue_take(le, from_heap);
	}
	return k;
}

uint64_t
link_emu_next_time(const struct link_emu *le)
{
	int from_heap;
	const struct le_entry *e = queue_min(le, &from_heap);

	return e != NULL ? e->t : UINT64_MAX;
}

unsigned int
link_emu_drain(struct link_emu *le, void **out, unsigned int n)
{
	unsigned int k = 0;

	while (k < n) {
		int from_heap;
		const struct le_entry *e = queue_min(le, &from_heap);

		if (e == NULL)
			break;
		out[k++] = e->pkt;
		le->ctr[LINK_EMU_C_DRAINED]++;
		queue_take(le, from_heap);
	}
	return k;
}

uint32_t
link_emu_count(const struct link_emu *le)
{
	return le->count;
}

const uint64_t *
link_emu_counters(const struct link_emu *le)
{
	return le->ctr;
}
