/* SPDX-License-Identifier: BSD-3-Clause */
/* Reliability schemes (names, parser) and configuration defaults. */
#include <stdio.h>
#include <string.h>

#include "sdr_rel.h"
#include "units.h"

static const char *const kind_names[SDR_SCHEME_COUNT] = {
#define X(sym, name, doc) [SDR_SCHEME_##sym] = name,
	SDR_SCHEME_KINDS(X)
#undef X
};

static const char *const scheme_err_docs[SDR_SCHEME_E_COUNT] = {
	[SDR_SCHEME_E_OK] = "no error",
#define X(sym, name, doc) [SDR_SCHEME_E_##sym] = doc,
	SDR_SCHEME_ERRORS(X)
#undef X
};

const char *
sdr_scheme_strerror(int err)
{
	if (err < 0)
		err = -err;
	return err < SDR_SCHEME_E_COUNT ? scheme_err_docs[err] : "invalid error code";
}

/* ---- schemes ---- */

int
sdr_scheme_check(const struct sdr_scheme *s)
{
	if (s == NULL || (unsigned int)s->kind >= SDR_SCHEME_COUNT)
		return -SDR_SCHEME_E_BAD_SCHEME;
	if (!sdr_scheme_is_ec(s))
		return 0;
	if (s->k == 0 || s->k > SDR_SCHEME_MAX_KM)
		return -SDR_SCHEME_E_BAD_K;
	if (s->m == 0 || s->m > SDR_SCHEME_MAX_KM)
		return -SDR_SCHEME_E_BAD_M;
	if (s->kind == SDR_SCHEME_EC_XOR && s->k % s->m != 0)
		return -SDR_SCHEME_E_XOR_GROUPS;
	return 0;
}

/* Decimal digits up to @p stop; values above SDR_SCHEME_MAX_KM saturate to MAX + 1. */
static const char *
parse_km(const char *s, char stop, unsigned int *v)
{
	unsigned int x = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned int)(*p - '0');
		if (x > SDR_SCHEME_MAX_KM)
			x = SDR_SCHEME_MAX_KM + 1;
	}
	if (p == s || *p != stop)
		return NULL;
	*v = x;
	return p;
}

int
sdr_scheme_parse(const char *name, struct sdr_scheme *out)
{
	struct sdr_scheme s = { SDR_SCHEME_SR, 0, 0, 0 };
	unsigned int k, m;
	const char *p;
	int rc;

	if (name == NULL)
		return -SDR_SCHEME_E_BAD_SCHEME;
	if (strcmp(name, "sr") == 0 || strcmp(name, "sr-nack") == 0) {
		s.kind = name[2] == '\0' ? SDR_SCHEME_SR : SDR_SCHEME_SR_NACK;
		*out = s;
		return 0;
	}
	if (strncmp(name, "ec-xor:", 7) == 0)
		s.kind = SDR_SCHEME_EC_XOR;
	else if (strncmp(name, "ec-mds:", 7) == 0)
		s.kind = SDR_SCHEME_EC_MDS;
	else
		return -SDR_SCHEME_E_BAD_SCHEME;
	p = parse_km(name + 7, ',', &k);
	if (p == NULL || parse_km(p + 1, '\0', &m) == NULL)
		return -SDR_SCHEME_E_BAD_SCHEME;
	if (k == 0 || k > SDR_SCHEME_MAX_KM)
		return -SDR_SCHEME_E_BAD_K;
	if (m == 0 || m > SDR_SCHEME_MAX_KM)
		return -SDR_SCHEME_E_BAD_M;
	s.k = (uint16_t)k;
	s.m = (uint16_t)m;
	rc = sdr_scheme_check(&s);
	if (rc == 0)
		*out = s;
	return rc;
}

const char *
sdr_scheme_format(const struct sdr_scheme *s, char *buf, size_t len)
{
	if (s == NULL || (unsigned int)s->kind >= SDR_SCHEME_COUNT)
		snprintf(buf, len, "invalid");
	else if (sdr_scheme_is_ec(s))
		snprintf(buf, len, "%s:%u,%u", kind_names[s->kind], s->k, s->m);
	else
		snprintf(buf, len, "%s", kind_names[s->kind]);
	return buf;
}

const char *
sdr_scheme_format_chunk(const struct sdr_scheme *s, uint32_t chunk_bytes, char *buf, size_t len)
{
	char name[SDR_SCHEME_NAME_MAX], size[16];

	sdr_scheme_format(s, name, sizeof(name));
	if (s == NULL || s->chunk_shift == 0)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s/%s", name,
			 units_fmt_size((uint64_t)chunk_bytes >> s->chunk_shift, size, sizeof(size)));
	return buf;
}

double
sdr_scheme_parity_share(const struct sdr_scheme *s)
{
	if (!sdr_scheme_is_ec(s) || s->k + s->m == 0)
		return 0;
	return (double)s->m / (double)(s->k + s->m);
}


void
sdr_rel_cfg_default(struct sdr_rel_cfg *c, uint64_t rtt_ns)
{
	memset(c, 0, sizeof(*c));
	c->scheme.kind = SDR_SCHEME_SR;
	c->rtt_ns = rtt_ns;
	c->alpha = 2.0;
	c->beta = 1.0;
	c->bucket_bytes = 256 * 1024;
	c->pkt_overhead = 78;	/* Ethernet + IPv4 + UDP + BTH + RETH + ImmDt + ICRC */
	c->ack_every_chunks = 8;
	c->ack_every_ns = 50000;
	c->nack_allowance_ns = rtt_ns / 100 > 20000 ? rtt_ns / 100 : 20000;
	c->timer_slots = 0;	/* sized from the connection (rel_tx_create()) */
}
