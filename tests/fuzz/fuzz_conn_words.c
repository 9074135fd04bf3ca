/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the word parsers behind the control ring's commands —
 * dp_config_conn_words() ("sdrctl conn add NAME key value..." and "conn set"),
 * link_emu_parse() ("sdrctl link set PORT delay 25ms loss 1e-3 ..."), sdr_scheme_parse()
 * and the unit parsers they use. Each word is its own allocation of its exact size, so a
 * read past its end is an ASan report.
 *
 * Input: byte 0: bit 0 "conn add" (fresh) instead of "conn set" on an existing connection;
 * then words separated by spaces, tabs, newlines or NULs (at most 64). For conn add the
 * first word is the connection's name.
 *
 * Checks: an accepted connection has a valid geometry, an existing port and an RTT; a
 * refused one has a one-line reason. An accepted link configuration validates, and its
 * printed form parses back to the same printed form; a refused one leaves the
 * configuration untouched and names a word in range. A scheme prints and parses back to
 * itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "link_emu.h"
#include "sdr_model.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 64

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_conn_words: check failed: %s (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

static struct dp_cfg cfg;
static struct dp_conn_cfg existing;

static void
add_port(const char *name, const char *device)
{
	struct dp_port_cfg *p = &cfg.ports[cfg.nports++];

	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->device, sizeof(p->device), "%s", device);
	p->mtu = 4200;
	p->rx_queues = p->tx_queues = 1;
	p->has_ipv4 = 1;
}

static void
init_once(void)
{
	static int done;
	char *words[] = { "port", "p0", "peer-ip", "10.0.0.2", "local-qpn", "0x100",
			  "remote-qpn", "0x100", "scheme", "ec-mds:4,2", "max_msg", "1MiB" };
	char err[512];

	if (done)
		return;
	done = 1;
	strcpy(cfg.name, "fuzz");
	add_port("p0", "net_ring0");
	add_port("x1", "net_af_xdp0,iface=veth0");
	strcpy(cfg.links[0].name, "wan");
	link_emu_config_default(&cfg.links[0].emu);
	cfg.nlinks = 1;
	CHECK(dp_config_conn_words(&cfg, &existing, "c0", 12, words, 1, err, sizeof(err)) == 0);
	cfg.conns[0] = existing;
	cfg.nconns = 1;
}

static int
is_sep(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\0';
}

/* Split into words, each a NUL-terminated allocation of its exact size. */
static int
split_words(const uint8_t *d, size_t n, char **w)
{
	int argc = 0;
	size_t i = 0;

	while (i < n && argc < MAX_WORDS) {
		size_t s;

		while (i < n && is_sep(d[i]))
			i++;
		if (i == n)
			break;
		s = i;
		while (i < n && !is_sep(d[i]))
			i++;
		w[argc] = malloc(i - s + 1);
		CHECK(w[argc] != NULL);
		memcpy(w[argc], d + s, i - s);
		w[argc][i - s] = '\0';
		argc++;
	}
	return argc;
}

static void
check_err(const char *err, size_t cap)
{
	size_t n = strnlen(err, cap);

	CHECK(n > 0 && n < cap && strchr(err, '\n') == NULL);
}

static void
fuzz_conn(int fresh, int argc, char **w)
{
	struct dp_conn_cfg c = existing;
	char err[512];
	const char *name = fresh && argc > 0 ? w[0] : "c0";
	int skip = fresh && argc > 0 ? 1 : 0, rc;
	struct sdr_conn_geom g;

	err[0] = '\0';
	rc = dp_config_conn_words(&cfg, &c, name, argc - skip, w + skip, fresh, err, sizeof(err));
	if (rc != 0) {
		CHECK(rc == -1);
		check_err(err, sizeof(err));
		return;
	}
	CHECK(sdr_conn_geometry(&c.ep.attr, &g) == 0);
	CHECK(dp_config_port(&cfg, c.port) >= 0 && c.peer_ip_version != 0);
	CHECK(c.ep.rel.rtt_ns > 0 && sdr_scheme_check(&c.ep.rel.scheme) == 0);
	if (sdr_scheme_is_ec(&c.ep.rel.scheme))
		CHECK(c.ep.attr.ec_k == c.ep.rel.scheme.k && c.ep.attr.ec_m == c.ep.rel.scheme.m);
}

static void
fuzz_link(int argc, char **w)
{
	struct link_emu_config c, before, again;
	char fmt[LINK_EMU_FMT_MAX], fmt2[LINK_EMU_FMT_MAX], copy[LINK_EMU_FMT_MAX];
	char *fw[MAX_WORDS];
	int bad = -2, rc, n = 0;

	link_emu_config_default(&c);
	before = c;
	rc = link_emu_parse(&c, argc, (const char *const *)w, &bad);
	if (rc != 0) {
		CHECK(rc < 0 && rc > -LINK_EMU_E_COUNT);
		CHECK(bad >= -1 && bad < argc);
		CHECK(memcmp(&c, &before, sizeof(c)) == 0);
		return;
	}
	CHECK(link_emu_config_check(&c) == 0);
	/* what "link show" prints, "link set" takes back */
	link_emu_format(&c, fmt, sizeof(fmt));
	CHECK(strlen(fmt) < sizeof(fmt) - 1);
	strcpy(copy, fmt);
	for (char *t = strtok(copy, " "); t != NULL && n < MAX_WORDS; t = strtok(NULL, " "))
		fw[n++] = t;
	link_emu_config_default(&again);
	rc = link_emu_parse(&again, n, (const char *const *)fw, &bad);
	if (rc != 0) {
		fprintf(stderr, "fuzz_conn_words: link_emu_format printed '%s', which "
			"link_emu_parse refuses at word %d: %s\n", fmt, bad, link_emu_strerror(rc));
		abort();
	}
	link_emu_format(&again, fmt2, sizeof(fmt2));
	if (strcmp(fmt, fmt2) != 0) {
		fprintf(stderr, "fuzz_conn_words: '%s' parses back as '%s'\n", fmt, fmt2);
		abort();
	}
}

static void
fuzz_word(const char *w)
{
	struct sdr_scheme s, s2;
	char buf[SDR_SCHEME_NAME_MAX];
	struct sdr_imm_split split;
	uint64_t u;
	double d;

	if (sdr_scheme_parse(w, &s) == 0) {
		CHECK(sdr_scheme_check(&s) == 0);
		sdr_scheme_format(&s, buf, sizeof(buf));
		CHECK(strlen(buf) < sizeof(buf) - 1);
		CHECK(sdr_scheme_parse(buf, &s2) == 0);
		CHECK(s.kind == s2.kind && s.k == s2.k && s.m == s2.m);
	}
	if (sdr_imm_split_parse(w, &split) == 0)
		CHECK(sdr_imm_split_check(&split) == 0);
	(void)units_parse_size(w, &u);
	(void)units_parse_u64(w, UINT64_MAX, &u);
	if (units_parse_time(w, &d) == 0)
		CHECK(d == d && d >= 0);
	if (units_parse_rate(w, &d) == 0)
		CHECK(d == d && d >= 0);
	if (units_parse_prob(w, &d) == 0)
		CHECK(d >= 0 && d <= 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *w[MAX_WORDS];
	int argc;

	if (size == 0)
		return 0;
	init_once();
	argc = split_words(data + 1, size - 1, w);
	fuzz_conn(data[0] & 1, argc, w);
	fuzz_link(argc, w);
	for (int i = 0; i < argc; i++)
		fuzz_word(w[i]);
	for (int i = 0; i < argc; i++)
		free(w[i]);
	return 0;
}
