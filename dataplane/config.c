/* SPDX-License-Identifier: BSD-3-Clause */
/* INI configuration of the dataplane, read with rte_cfgfile; no EAL needed. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "config_keys.h"
#include "sdr_keys.h"
#include "sdr_model.h"
#include "units.h"

#define MAX_ENTRIES 64

/* Where a value is being parsed, for error lines. */
struct where {
	const char *file;
	const char *section;
	char *err;
	size_t errlen;
};

static int
fail(const struct where *w, const char *key, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* no file (a command): "[conn x] key: why" */
	if (key)
		snprintf(w->err, w->errlen, "%s%s[%s] %s: %s", w->file, *w->file ? ": " : "",
			 w->section, key, why);
	else
		snprintf(w->err, w->errlen, "%s%s[%s]: %s", w->file, *w->file ? ": " : "",
			 w->section, why);
	return -1;
}

int
dp_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int n = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n) != 6 ||
	    s[n] != '\0')
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int
copy_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n == 0 || n >= DP_NAME_LEN)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!((src[i] >= 'a' && src[i] <= 'z') || (src[i] >= 'A' && src[i] <= 'Z') ||
		      (src[i] >= '0' && src[i] <= '9') || src[i] == '-' || src[i] == '_' ||
		      src[i] == '.'))
			return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static int
get_size(const struct where *w, const char *key, const char *v, uint64_t lo, uint64_t hi,
	 uint64_t *out)
{
	if (units_parse_size(v, out) != 0 || *out < lo || *out > hi)
		return fail(w, key, "'%s' is not a size in %" PRIu64 "..%" PRIu64 " bytes (e.g. 64KiB)",
			    v, lo, hi);
	return 0;
}

int
dp_config_set_name(struct dp_cfg *cfg, const char *name)
{
	return copy_name(cfg->name, name);
}

static int
get_time_ns(const struct where *w, const char *key, const char *v, uint64_t *ns)
{
	double s;

	if (units_parse_time(v, &s) != 0 || s > 3600)
		return fail(w, key, "'%s' is not a time such as 25ms, 100us or 2s", v);
	/* (a time that rounds to 0 would read as off or never) */
	if (s > 0 && s < 1e-9)
		return fail(w, key, "'%s': less than a nanosecond (0 is off)", v);
	*ns = (uint64_t)(s * 1e9);
	return 0;
}

static int
get_number(const struct where *w, const char *key, const char *v, double hi, double *out)
{
	if (units_parse_number(v, out) != 0 || *out > hi)
		return fail(w, key, "'%s' is not a number in 0..%g", v, hi);
	return 0;
}

static int
get_ip(const char *v, uint8_t *version, uint8_t ip[16])
{
	memset(ip, 0, 16);
	if (inet_pton(AF_INET, v, ip) == 1) {
		*version = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, v, ip) == 1) {
		*version = 6;
		return 0;
	}
	return -1;
}

/*
 * Key @p k of a section of kind @p s (config_keys.h): its index, its value read when the
 * table knows how (integer, size, time or number, within the table's bounds) into @p x or
 * @p d (NULL where the section has no number key). @return the index, or -1 with the
 * error line (an unknown key's names every key).
 */
static int
key_read(const struct dp_key_section *s, const struct where *w, const char *k, const char *v,
	 uint64_t *x, double *d)
{
	int i = dp_key_find(s, k);
	const struct dp_key *key;
	char list[1024];

	if (i < 0)
		return fail(w, k, "unknown key (expected %s)", dp_key_list(s, list, sizeof(list)));
	key = &s->keys[i];
	switch (key->kind) {
	case DP_K_INT:
		if (units_parse_u64(v, key->hi, x) != 0 || *x < key->lo)
			return fail(w, k, "'%s' is not an integer in %" PRIu64 "..%" PRIu64, v,
				    key->lo, key->hi);
		break;
	case DP_K_SIZE:
		if (get_size(w, k, v, key->lo, key->hi, x) != 0)
			return -1;
		break;
	case DP_K_TIME:
		if (get_time_ns(w, k, v, x) != 0)
			return -1;
		break;
	case DP_K_NUMBER: {
		double n;

		if (get_number(w, k, v, (double)key->hi, &n) != 0)
			return -1;
		if (d != NULL)
			*d = n;
		break;
	}
	default:
		break;
	}
	return i;
}

/* ---- [dataplane] ---- */

static int
dataplane_key(struct dp_cfg *c, const struct where *w, const char *k, const char *v)
{
	uint64_t x = 0;

	switch (key_read(&dp_dataplane_keys, w, k, v, &x, NULL)) {
	case DPK_DATAPLANE_NAME:
		if (copy_name(c->name, v) != 0)
			return fail(w, k, "'%s' is not a name (letters, digits, - _ ., up to 31)", v);
		return 0;
	case DPK_DATAPLANE_MBUFS:
		c->mbufs = (uint32_t)x;
		return 0;
	case DPK_DATAPLANE_ZC_MBUFS:
		c->zc_mbufs = (uint32_t)x;
		return 0;
	case DPK_DATAPLANE_BURST:
		c->burst = (uint32_t)x;
		return 0;
	case DPK_DATAPLANE_IDLE_SLEEP_US:
		c->idle_sleep_us = (uint32_t)x;
		return 0;
	case DPK_DATAPLANE_ARENA:
		c->arena_bytes = x;
		return 0;
	case DPK_DATAPLANE_CONN_MEMORY:
		c->conn_memory = x;
		return 0;
	case DPK_DATAPLANE_USER_MEMORY:
		c->user_memory = x;
		return 0;
	case DPK_DATAPLANE_SLOTS_PER_USER:
		c->sdk_slots_per_user = (uint32_t)x;
		return 0;
	case DPK_DATAPLANE_CONTROL_GROUP:
		if (copy_name(c->control_group, v) != 0)
			return fail(w, k, "'%s' is not a group name (letters, digits, - _ ., up to "
				    "31)", v);
		return 0;
	case DPK_DATAPLANE_CONTROL_DIR:
		if (v[0] != '/' || strlen(v) >= sizeof(c->control_dir) || strstr(v, "..") ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.-")
		    != strlen(v))
			return fail(w, k, "'%s' is not an absolute directory path (letters, digits, "
				    "/ _ . -, up to %zu characters)", v, sizeof(c->control_dir) - 1);
		snprintf(c->control_dir, sizeof(c->control_dir), "%s", v);
		return 0;
	case DPK_DATAPLANE_STATS_PERIOD:
		c->stats_period_s = (double)x * 1e-9;
		return 0;
	}
	return -1;
}

/* ---- [pipeline] ---- */

static int
pipeline_key(struct dp_cfg *c, const struct where *w, const char *k, const char *v)
{
	uint64_t x = 0;

	switch (key_read(&dp_pipeline_keys, w, k, v, &x, NULL)) {
	case DPK_PIPELINE_MODE:
		if (strcmp(v, "rtc") == 0)
			c->mode = DP_PIPE_RTC;
		else if (strcmp(v, "split") == 0)
			c->mode = DP_PIPE_SPLIT;
		else if (strcmp(v, "engines") == 0)
			c->mode = DP_PIPE_ENGINES;
		else
			return fail(w, k, "'%s' is not rtc (all stages on one lcore), split or engines",
				    v);
		return 0;
	case DPK_PIPELINE_FEC:
		if (strcmp(v, "inline") == 0)
			c->fec_lcore = 0;
		else if (strcmp(v, "lcore") == 0)
			c->fec_lcore = 1;
		else
			return fail(w, k, "'%s' is not inline (in the packetizer's loop) or lcore "
				    "(a FEC worker lcore, fed through rings)", v);
		return 0;
	case DPK_PIPELINE_FEC_JOBS:
		c->fec_jobs = (uint32_t)x;
		return 0;
	case DPK_PIPELINE_RX_LCORES:
		c->rx_lcores = (uint32_t)x;
		return 0;
	case DPK_PIPELINE_ENGINES:
		c->engines = (uint32_t)x;
		return 0;
	case DPK_PIPELINE_PLACEMENT:
		if (strcmp(v, "main") == 0)
			c->place_workers = 0;
		else if (strcmp(v, "workers") == 0)
			c->place_workers = 1;
		else
			return fail(w, k, "'%s' is not main (payload copies on the main lcore) or "
				    "workers (on the receive workers)", v);
		c->placement_set = 1;
		return 0;
	}
	return -1;
}

/* ---- [port NAME] ---- */

/* allow = 10.0.0.0/24, 10.1.0.7, fd00::/64: the sources a port takes RoCE packets from. */
static int
parse_allow(const struct where *w, const char *k, const char *v, struct dp_port_cfg *p)
{
	char buf[512], *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return fail(w, k, "list longer than %zu characters", sizeof(buf) - 1);
	strcpy(buf, v);
	p->nallow = 0;
	for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		struct dp_prefix *a = &p->allow[p->nallow];
		char *slash = strchr(t, '/');
		uint64_t len;

		if (p->nallow == DP_MAX_ALLOW)
			return fail(w, k, "more than %d prefixes", DP_MAX_ALLOW);
		if (slash)
			*slash = '\0';
		memset(a, 0, sizeof(*a));
		if (inet_pton(AF_INET, t, a->ip) == 1)
			a->version = 4;
		else if (inet_pton(AF_INET6, t, a->ip) == 1)
			a->version = 6;
		else
			return fail(w, k, "'%s' is not an IPv4 or IPv6 address", t);
		len = a->version == 4 ? 32 : 128;
		if (slash && (units_parse_u64(slash + 1, len, &len) != 0))
			return fail(w, k, "'/%s' is not a prefix length of an IPv%u address", slash + 1,
				    a->version);
		a->len = (uint8_t)len;
		p->nallow++;
	}
	if (p->nallow == 0)
		return fail(w, k, "empty list (addresses or prefixes, comma-separated)");
	return 0;
}

static int
port_key(struct dp_port_cfg *p, const struct where *w, const char *k, const char *v)
{
	uint64_t x = 0;

	switch (key_read(&dp_port_keys, w, k, v, &x, NULL)) {
	case DPK_PORT_DEVICE:
		if (strlen(v) == 0 || strlen(v) >= DP_DEVICE_LEN)
			return fail(w, k, "empty or longer than %d characters", DP_DEVICE_LEN - 1);
		strcpy(p->device, v);
		return 0;
	case DPK_PORT_MAC:
		if (dp_parse_mac(v, p->mac) != 0)
			return fail(w, k, "'%s' is not a MAC address aa:bb:cc:dd:ee:ff", v);
		p->has_mac = 1;
		return 0;
	case DPK_PORT_IPV4:
		if (inet_pton(AF_INET, v, p->ipv4) != 1)
			return fail(w, k, "'%s' is not an IPv4 address", v);
		p->has_ipv4 = 1;
		return 0;
	case DPK_PORT_IPV6:
		if (inet_pton(AF_INET6, v, p->ipv6) != 1)
			return fail(w, k, "'%s' is not an IPv6 address", v);
		p->has_ipv6 = 1;
		return 0;
	case DPK_PORT_MTU:
		p->mtu = (uint32_t)x;
		return 0;
	case DPK_PORT_RX_QUEUES:
		p->rx_queues = (uint16_t)x;
		return 0;
	case DPK_PORT_TX_QUEUES:
		p->tx_queues = (uint16_t)x;
		return 0;
	case DPK_PORT_CAPTURE:
		if (strlen(v) >= sizeof(p->capture))
			return fail(w, k, "path longer than %zu characters", sizeof(p->capture) - 1);
		strcpy(p->capture, v);
		return 0;
	case DPK_PORT_LINK:
	case DPK_PORT_EXCEPTION:
		if (copy_name(k[0] == 'l' ? p->link : p->exception, v) != 0)
			return fail(w, k, "'%s' is not a section name", v);
		return 0;
	case DPK_PORT_ALLOW:
		return parse_allow(w, k, v, p);
	case DPK_PORT_ZERO_COPY:
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return fail(w, k, "'%s' is not yes or no", v);
		p->zero_copy = v[0] == 'y' ? DP_ZC_YES : DP_ZC_NO;
		return 0;
	case DPK_PORT_DMA_MAP:
		if (strcmp(v, "auto") != 0 && strcmp(v, "yes") != 0)
			return fail(w, k, "'%s' is not auto or yes", v);
		p->dma_map = v[0] == 'y' ? DP_DMA_YES : DP_DMA_AUTO;
		return 0;
	case DPK_PORT_STEERING:
		if (strcmp(v, "queue") != 0 && strcmp(v, "rss") != 0)
			return fail(w, k, "'%s' is not queue or rss", v);
		p->steering = v[0] == 'r' ? DP_STEER_RSS : DP_STEER_QUEUE;
		return 0;
	}
	return -1;
}

/* ---- [link NAME]: the keys are the emulator's own words ---- */

/* path_sports = P1,P2,...: a UDP source port per path (0 for none yet: checked against
 * paths in conn_paths()). */
static int
get_path_sports(const struct where *w, const char *k, const char *v, struct dp_conn_cfg *c)
{
	char buf[128], *save = NULL, *tok;
	unsigned int n = 0;
	uint64_t x;

	if (snprintf(buf, sizeof(buf), "%s", v) >= (int)sizeof(buf))
		return fail(w, k, "'%s' is too long", v);
	memset(c->ep.paths.sport, 0, sizeof(c->ep.paths.sport));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == PATH_SEL_MAX_PATHS || units_parse_u64(tok, 65535, &x) != 0 || x == 0)
			return fail(w, k, "'%s' is not a list of up to %d UDP ports (1..65535), one "
				    "per path", v, PATH_SEL_MAX_PATHS);
		c->ep.paths.sport[n++] = (uint16_t)x;
	}
	if (n == 0)
		return fail(w, k, "'%s' is not a list of UDP ports, one per path", v);
	return 0;
}

static int
link_key(struct dp_link_cfg *l, const struct where *w, const char *k, const char *v)
{
	char *words[2] = { (char *)(uintptr_t)k, (char *)(uintptr_t)v };
	int bad = 0, rc;
	uint64_t x = 0;

	/* pathK = WORDS: what path K does besides the section's keys (path1 ... path8) */
	if (strncmp(k, "path", 4) == 0 && k[4] >= '1' && k[4] <= '0' + LINK_EMU_MAX_PATHS &&
	    k[5] == '\0') {
		if (strlen(v) >= sizeof(l->path_words[0]) || v[0] == '\0')
			return fail(w, k, "'%s' is not a list of emulator words (delay 20ms rate 1G "
				    "loss 1e-4)", v);
		strcpy(l->path_words[k[4] - '1'], v);
		return 0;
	}
	switch (key_read(&dp_link_keys, w, k, v, &x, NULL)) {
	case -1:
		return -1;
	case DPK_LINK_PATHS:
		/* parallel paths, picked per frame by its UDP source port */
		l->npaths = (unsigned int)x;
		return 0;
	default:
		/* the emulator's own words; each key alone would let the later of two
		 * alternatives silently win */
		if ((strcmp(k, "loss") == 0 && l->emu.burst) ||
		    (strcmp(k, "burst") == 0 && l->emu.loss > 0))
			return fail(w, k, "%s", link_emu_strerror(-LINK_EMU_E_LOSS_AND_BURST));
		rc = link_emu_parse(&l->emu, 2, (const char *const *)words, &bad);
		if (rc != 0)
			return fail(w, k, "'%s': %s", v, link_emu_strerror(rc));
		return 0;
	}
}

/* ---- [conn NAME] ---- */

static int
conn_scheme(struct dp_conn_cfg *c, const struct where *w, const char *k, const char *v)
{
	struct sdr_scheme s;
	int rc;

	if (strcmp(v, "auto") == 0) {
		c->scheme_auto = 1;
		return 0;
	}
	rc = sdr_scheme_parse(v, &s);
	if (rc != 0)
		return fail(w, k, "'%s': %s (sr, sr-nack, ec-xor:K,M, ec-mds:K,M or auto)", v,
			    sdr_scheme_strerror(rc));
	c->scheme_auto = 0;
	c->ep.rel.scheme = s;
	return 0;
}

/* A connection's secret: 32 hex digits (16 bytes), or "off". Never echoed in an error. */
static int
get_auth_key(const struct where *w, const char *k, const char *v, struct sdr_ep_cfg *ep)
{
	if (strcmp(v, "off") == 0) {
		ep->auth = 0;
		memset(ep->auth_key, 0, sizeof(ep->auth_key));
		return 0;
	}
	if (sdr_key_parse(v, ep->auth_key) != 0)
		return fail(w, k, "must be 32 hex digits (a 128-bit key) or off");
	ep->auth = 1;
	return 0;
}

static int
conn_key(struct dp_conn_cfg *c, const struct where *w, const char *k, const char *v)
{
	struct sdr_conn_attr *a = &c->ep.attr;
	struct sdr_rel_cfg *r = &c->ep.rel;
	uint64_t x = 0;
	double d = 0;

	switch (key_read(&dp_conn_keys, w, k, v, &x, &d)) {
	case DPK_CONN_PORT:
		if (copy_name(c->port, v) != 0)
			return fail(w, k, "'%s' is not a section name", v);
		return 0;
	case DPK_CONN_ENGINE:
		c->engine = (int16_t)x;
		return 0;
	case DPK_CONN_STRIPES:
		c->stripes = (uint8_t)x;
		return 0;
	case DPK_CONN_PEER_MAC:
		if (dp_parse_mac(v, c->peer_mac) != 0)
			return fail(w, k, "'%s' is not a MAC address aa:bb:cc:dd:ee:ff", v);
		return 0;
	case DPK_CONN_PEER_IP:
		if (get_ip(v, &c->peer_ip_version, c->peer_ip) != 0)
			return fail(w, k, "'%s' is not an IPv4 or IPv6 address", v);
		return 0;
	case DPK_CONN_LOCAL_QPN:
		a->local_qpn = (uint32_t)x;
		return 0;
	case DPK_CONN_REMOTE_QPN:
		a->remote_qpn = (uint32_t)x;
		return 0;
	case DPK_CONN_LOCAL_RKEY:
		a->local_rkey = (uint32_t)x;
		return 0;
	case DPK_CONN_REMOTE_CTRL_QPN:
		a->remote_ctrl_qpn = (uint32_t)x;
		return 0;
	case DPK_CONN_REMOTE_RKEY:
		a->remote_rkey = (uint32_t)x;
		return 0;
	case DPK_CONN_AUTH_KEY:
		return get_auth_key(w, k, v, &c->ep);
	case DPK_CONN_MTU:
		a->mtu = (uint32_t)x;
		return 0;
	case DPK_CONN_CHUNK:
		a->chunk_size = (uint32_t)x;
		return 0;
	case DPK_CONN_IMM_SPLIT:
		if (sdr_imm_split_parse(v, &a->split) != 0)
			return fail(w, k, "'%s' is not three widths summing to 32, e.g. 10,18,4", v);
		return 0;
	case DPK_CONN_CHANNELS:
		a->channels = (uint16_t)x;
		return 0;
	case DPK_CONN_GENERATIONS:
		a->generations = (uint16_t)x;
		return 0;
	case DPK_CONN_MAX_MSG:
		a->max_msg_size = x;
		return 0;
	case DPK_CONN_INFLIGHT:
		a->max_inflight = (uint32_t)x;
		return 0;
	case DPK_CONN_DIR:
		if (strcmp(v, "send") == 0)
			a->dir = SDR_DIR_SEND;
		else if (strcmp(v, "recv") == 0)
			a->dir = SDR_DIR_RECV;
		else if (strcmp(v, "both") == 0)
			a->dir = SDR_DIR_BOTH;
		else
			return fail(w, k, "'%s' is not send, recv or both", v);
		return 0;
	case DPK_CONN_SCHEME:
		return conn_scheme(c, w, k, v);
	case DPK_CONN_RTT:
		r->rtt_ns = x;
		return 0;
	case DPK_CONN_ALPHA:
		r->alpha = d;
		return 0;
	case DPK_CONN_BETA:
		r->beta = d;
		return 0;
	case DPK_CONN_RATE:
		if (units_parse_rate(v, &d) != 0 || d > 10e12 || (d != 0 && d < 1e3))
			return fail(w, k, "'%s' is not a rate such as 10G or 400Gbit, 1K to 10T (0: "
				    "unpaced)", v);
		r->rate_bps = d;
		return 0;
	case DPK_CONN_BUCKET:
		r->bucket_bytes = (uint32_t)x;
		return 0;
	case DPK_CONN_ACK_EVERY:
		r->ack_every_chunks = (uint32_t)x;
		return 0;
	case DPK_CONN_ACK_INTERVAL:
		r->ack_every_ns = x;
		return 0;
	case DPK_CONN_NACK_ALLOWANCE:
		c->nack_allowance_set = 1;
		r->nack_allowance_ns = x;
		return 0;
	case DPK_CONN_GLOBAL_TIMEOUT:
		r->global_timeout_ns = x;
		return 0;
	case DPK_CONN_PEER_CHECK:
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return fail(w, k, "'%s' is not yes or no", v);
		c->peer_check = v[0] == 'y';
		return 0;
	case DPK_CONN_PEER_UDP_SPORT: {
		uint64_t lo, hi;
		char los[16], his[16];
		int end = -1;

		if (strcmp(v, "any") == 0) {
			c->sport_lo = 0;
			c->sport_hi = 65535;
			return 0;
		}
		if (sscanf(v, "%15[^-]-%15s%n", los, his, &end) != 2 || end < 0 || v[end] != '\0' ||
		    units_parse_u64(los, 65535, &lo) != 0 ||
		    units_parse_u64(his, 65535, &hi) != 0 || lo > hi)
			return fail(w, k, "'%s' is not a range LO-HI of UDP ports, or any", v);
		c->sport_lo = (uint16_t)lo;
		c->sport_hi = (uint16_t)hi;
		return 0;
	}
	case DPK_CONN_FALLBACK:
		if (strcmp(v, "holes") != 0 && strcmp(v, "whole") != 0)
			return fail(w, k, "'%s' is not holes or whole", v);
		r->ec_fallback_whole = v[0] == 'w';
		return 0;
	case DPK_CONN_RTO:
		if (strcmp(v, "configured") != 0 && strcmp(v, "measured") != 0)
			return fail(w, k, "'%s' is not configured or measured", v);
		r->rto_measured = v[0] == 'm';
		return 0;
	case DPK_CONN_PATHS:
		c->ep.paths.npaths = (unsigned int)x;
		return 0;
	case DPK_CONN_PATH_POLICY:
		if (path_policy_parse(v, &c->ep.paths.policy) != 0)
			return fail(w, k, "'%s' is not hash (each channel where its source port "
				    "hashes), spray (channels evenly over the paths) or optimise", v);
		return 0;
	case DPK_CONN_PATH_RATE:
		if (units_parse_rate(v, &d) != 0 || d > 10e12 || (d != 0 && d < 1e3))
			return fail(w, k, "'%s' is not a rate such as 10G, 1K to 10T (0: a path "
				    "carries the connection's whole rate)", v);
		c->ep.paths.path_rate_bps = d;
		return 0;
	case DPK_CONN_PATH_FAIL:
		c->path_fail_set = x != 0;
		c->ep.paths.fail_ns = x;
		return 0;
	case DPK_CONN_PATH_PERIOD:
		c->path_period_ns = x;
		return 0;
	case DPK_CONN_PATH_PROBE:
		c->ep.paths.probe_ns = x;
		return 0;
	case DPK_CONN_PATH_OBJECTIVE:
		if (path_objective_parse(v, &c->ep.paths.objective) != 0)
			return fail(w, k, "'%s' is not sum (the connections sharing the paths "
				    "decide together, for the sum of their times), max (together, "
				    "for the slowest) or own (each for its own time)", v);
		return 0;
	case DPK_CONN_PATH_SPORTS:
		return get_path_sports(w, k, v, c);
	case DPK_CONN_EXPECTED_DROP:
		if (units_parse_prob(v, &d) != 0 || d >= 1)
			return fail(w, k, "'%s' is not a probability in [0, 1)", v);
		c->expected_drop = d;
		return 0;
	case DPK_CONN_AUTO_MIN_CHUNK:
		c->auto_min_chunk = (uint32_t)x;
		return 0;
	case DPK_CONN_TCLASS:
		c->ep.path.tclass = (uint8_t)x;
		return 0;
	case DPK_CONN_PKEY:
		c->ep.path.pkey = (uint16_t)x;
		return 0;
	}
	return -1;
}

static void
conn_defaults(struct dp_conn_cfg *c)
{
	memset(c, 0, sizeof(*c));
	sdr_conn_attr_default(&c->ep.attr);
	c->ep.attr.max_inflight = 16;
	sdr_rel_cfg_default(&c->ep.rel, 1000000);	/* 1 ms until the file says otherwise */
	c->ep.rel.global_timeout_ns = 60ull * 1000000000;
	memset(c->peer_mac, 0xFF, 6);
	c->peer_check = 1;
	path_sel_cfg_default(&c->ep.paths);
	c->ep.paths.fail_ns = 0;		/* conn_finish(): from the RTT */
	c->expected_drop = NAN;
	c->path_period_ns = 1000000000ull;
	c->sport_hi = 65535;
	c->engine = -1;
	c->stripes = 1;
}

void
dp_conn_model_params(const struct dp_conn_cfg *c, struct sdr_model_params *p)
{
	sdr_model_params_init(p);
	p->msg_bytes = c->ep.attr.max_msg_size;
	p->chunk_bytes = c->ep.attr.chunk_size;
	p->mtu_bytes = c->ep.attr.mtu;
	p->bandwidth_bps = c->ep.rel.rate_bps > 0 ? c->ep.rel.rate_bps : 100e9;
	p->rtt_s = (double)c->ep.rel.rtt_ns * 1e-9;
	p->alpha = c->ep.rel.alpha;
	p->beta = c->ep.rel.beta;
	p->nack_allowance_s = (double)c->ep.rel.nack_allowance_ns * 1e-9;
}

/* scheme = auto: the analytic model ranks the candidates for this connection's path. */
static int
conn_pick_scheme(struct dp_conn_cfg *c, const struct where *w, double expected_drop,
		 uint32_t max_chunk_shift)
{
	struct sdr_model_params p;
	struct sdr_model_choice best;
	int n;

	dp_conn_model_params(c, &p);
	p.drop = expected_drop;
	n = sdr_auto_best(&p, max_chunk_shift, &best);
	if (n <= 0)
		return fail(w, "scheme", "auto: the model cannot rank schemes here: %s",
			    sdr_model_strerror(n));
	c->ep.rel.scheme = best.scheme;
	return 0;
}

/*
 * scheme = auto in one direction: room for every candidate code (a parity region for the
 * largest message under any of them, buffers for the most parity chunks), set in @p c's
 * attributes. @return 1, or 0 (nothing set) when that room does not fit the immediate's
 * offset field: the connection then keeps the scheme auto picks at the start.
 */
static int
auto_can_change(struct dp_conn_cfg *c)
{
	struct sdr_conn_attr a = c->ep.attr;
	const struct sdr_scheme *cand;
	struct sdr_conn_geom g;
	uint32_t cap = 0, max_m = 0, n;

	cand = sdr_model_default_candidates(&n);
	for (uint32_t i = 0; i < n; i++) {
		if (!sdr_scheme_is_ec(&cand[i]))
			continue;
		if (a.ec_k == 0) {
			a.ec_k = (uint16_t)cand[i].k;
			a.ec_m = (uint16_t)cand[i].m;
		}
		if (sdr_conn_geometry(&a, &g) != 0)
			return 0;
		if (sdr_conn_parity_chunks(g.max_data_chunks, cand[i].k, cand[i].m) > cap)
			cap = sdr_conn_parity_chunks(g.max_data_chunks, cand[i].k, cand[i].m);
		if (cand[i].m > max_m)
			max_m = cand[i].m;
	}
	a.parity_cap_chunks = cap;
	if (sdr_conn_geometry(&a, &g) != 0)
		return 0;
	c->ep.attr = a;
	c->ep.switch_max_m = (uint16_t)max_m;
	return 1;
}

/*
 * scheme = auto: the smallest chunk it may change to (auto_min_chunk, by default a quarter
 * of the chunk and at least one packet) as a shift of the chunk, into @p c's attributes.
 * @return 0, or -1 (said) for a size that is not the chunk halved into whole packets.
 */
static int
auto_chunk_shift(struct dp_conn_cfg *c, const struct where *w)
{
	struct sdr_conn_attr *a = &c->ep.attr;
	uint32_t want = c->auto_min_chunk, shift = 0;

	if (a->mtu == 0 || a->chunk_size == 0 || a->chunk_size % a->mtu != 0)
		return 0;		/* the geometry check says what is wrong */
	if (want == 0) {
		while (shift < 2 && (a->chunk_size >> (shift + 1)) >= a->mtu &&
		       (a->chunk_size >> (shift + 1)) % a->mtu == 0)
			shift++;
		a->max_chunk_shift = (uint8_t)shift;
		return 0;
	}
	while (shift <= 10 && (a->chunk_size >> shift) > want)
		shift++;
	if (shift > 10 || (a->chunk_size >> shift) != want || want % a->mtu != 0 ||
	    (uint64_t)want << shift != a->chunk_size)
		return fail(w, "auto_min_chunk", "%u: must be chunk (%u) halved 0 to 10 times, "
			    "a multiple of mtu (%u)", want, a->chunk_size, a->mtu);
	a->max_chunk_shift = (uint8_t)shift;
	return 0;
}

/* The key a refused attribute set is about, so the error line names it. */
static const char *
geometry_key(int rc, const struct sdr_conn_attr *a)
{
	uint64_t n = (uint64_t)a->channels * a->generations;

	switch (rc < 0 ? -rc : rc) {
	case SDR_CONN_E_MTU: return "mtu";
	case SDR_CONN_E_CHUNK: return "chunk";
	case SDR_CONN_E_CHUNK_SHIFT: return "auto_min_chunk";
	case SDR_CONN_E_SPLIT: return "imm_split";
	case SDR_CONN_E_CHANNELS: return "channels";
	case SDR_CONN_E_GENERATIONS: return "generations";
	case SDR_CONN_E_MAX_MSG: return "max_msg";
	case SDR_CONN_E_INFLIGHT: return "inflight";
	case SDR_CONN_E_EC: case SDR_CONN_E_PARITY_FIT: return "scheme";
	case SDR_CONN_E_DIR: return "dir";
	case SDR_CONN_E_QPN:	/* the one whose range runs past 0xffffff */
		return a->local_qpn != 0 && a->local_qpn + n <= ROCE_QPN_MASK ? "remote_qpn" :
										 "local_qpn";
	default: return NULL;
	}
}

/* The values behind a refused attribute set, for the error line. */
static const char *
geometry_values(const struct dp_conn_cfg *c, int rc)
{
	static char buf[128];
	const struct sdr_conn_attr *a = &c->ep.attr;

	switch (rc < 0 ? -rc : rc) {
	case SDR_CONN_E_CHUNK:
		snprintf(buf, sizeof(buf), "chunk %u, mtu %u", a->chunk_size, a->mtu);
		break;
	case SDR_CONN_E_EC:
		snprintf(buf, sizeof(buf), "k %u, m %u", a->ec_k, a->ec_m);
		break;
	case SDR_CONN_E_INFLIGHT:
	case SDR_CONN_E_MAX_MSG:
	case SDR_CONN_E_PARITY_FIT:
		snprintf(buf, sizeof(buf), "max_msg %" PRIu64 ", inflight %u, imm_split %u,%u,%u",
			 a->max_msg_size, a->max_inflight, a->split.id_bits, a->split.off_bits,
			 a->split.frag_bits);
		break;
	default:
		snprintf(buf, sizeof(buf), "mtu %u, chunk %u, channels %u, generations %u",
			 a->mtu, a->chunk_size, a->channels, a->generations);
	}
	return buf;
}

/* paths = N: a policy the channels can follow, a failure time from the RTT. */
static int
conn_paths(struct dp_conn_cfg *c, const struct where *w)
{
	struct path_sel_cfg *p = &c->ep.paths;

	if (p->npaths <= 1)
		return 0;
	if (p->policy != PATH_POLICY_HASH && p->npaths > c->ep.attr.channels)
		return fail(w, "paths", "%u paths but %u channels: each channel takes one path, "
			    "so at most %u are reachable (raise channels, or path_policy = hash)",
			    p->npaths, c->ep.attr.channels, c->ep.attr.channels);
	if (c->ep.attr.remote_ctrl_qpn != 0)
		return fail(w, "paths", "%u with remote_ctrl_qpn: a verbs peer sends no path "
			    "reports", p->npaths);
	if ((uint32_t)c->ep.attr.channels * c->ep.attr.generations > PATH_SEL_MAX_QPS)
		return fail(w, "paths", "%u with %u channels x %u generations: a connection on "
			    "several paths has at most %u data QPNs", p->npaths, c->ep.attr.channels,
			    c->ep.attr.generations, PATH_SEL_MAX_QPS);
	if (c->path_period_ns < 1000000)
		return fail(w, "path_period", "must be 1 ms or more (a decision takes "
			    "milliseconds)");
	if (!c->path_fail_set)	/* derived again on each conn set: the RTT may have changed */
		p->fail_ns = 0;
	if (p->fail_ns != 0 && p->fail_ns <= c->ep.rel.rtt_ns)
		return fail(w, "path_fail", "must be longer than the rtt (%.3f ms): a path would "
			    "fail before its frames could be reported", c->ep.rel.rtt_ns * 1e-6);
	if (p->sport[0] != 0) {		/* the operator's ports: one per path, all different */
		unsigned int n = 0;

		while (n < PATH_SEL_MAX_PATHS && p->sport[n] != 0)
			n++;
		if (n != p->npaths)
			return fail(w, "path_sports", "%u ports for %u paths: give one per path", n,
				    p->npaths);
		for (unsigned int i = 0; i < n; i++)
			for (unsigned int j = 0; j < i; j++)
				if (p->sport[i] == p->sport[j])
					return fail(w, "path_sports", "port %u given for paths %u "
						    "and %u: a port takes one path", p->sport[i],
						    j + 1, i + 1);
		if (p->policy == PATH_POLICY_HASH)
			return fail(w, "path_sports", "with path_policy = hash: hashing uses each "
				    "channel's own port (spray or optimise use these)");
	}
	if (p->fail_ns == 0)	/* three round trips without an arrival, at least 10 ms */
		p->fail_ns = 3 * c->ep.rel.rtt_ns > 10000000 ? 3 * c->ep.rel.rtt_ns : 10000000;
	return 0;
}

static int
conn_finish(struct dp_cfg *cfg, struct dp_conn_cfg *c, const struct where *w)
{
	double drop = c->expected_drop;
	struct sdr_conn_geom g;
	int rc;

	if (c->port[0] == '\0')
		return fail(w, "port", "missing");
	if (dp_config_port(cfg, c->port) < 0)
		return fail(w, "port", "no [port %s] section", c->port);
	if (c->peer_ip_version == 0)
		return fail(w, "peer_ip", "missing");
	if (strncmp(cfg->ports[dp_config_port(cfg, c->port)].device, "net_af_xdp", 10) == 0 &&
	    c->ep.attr.mtu > 2048)
		return fail(w, "mtu", "%u: port %s is AF_XDP, whose frames must fit a 4 KiB page: "
			    "at most 2048", c->ep.attr.mtu, c->port);
	if (c->ep.rel.rtt_ns == 0)	/* before the model sees it */
		return fail(w, "rtt", "must be more than 0");
	if (!c->nack_allowance_set)	/* RTT/100, at least 20 us; the model reads it too */
		c->ep.rel.nack_allowance_ns = c->ep.rel.rtt_ns / 100 > 20000 ?
					      c->ep.rel.rtt_ns / 100 : 20000;
	if (conn_paths(c, w) != 0)
		return -1;
	/* auto on both ends: the receive side reports its loss, the send side estimates it */
	c->ep.auto_report = c->scheme_auto;
	c->ep.rel.scheme_may_change = 0;
	c->ep.attr.parity_cap_chunks = 0;
	c->ep.attr.max_chunk_shift = 0;
	c->ep.switch_max_m = 0;
	/* the code is the scheme's, or auto's room for one, never the one before a conn set */
	c->ep.attr.ec_k = 0;
	c->ep.attr.ec_m = 0;
	if (c->scheme_auto && auto_chunk_shift(c, w) != 0)
		return -1;
	if (c->scheme_auto && auto_can_change(c)) {
		/* online auto: the scheme changes with the link; with no hint it starts from
		 * SR-NACK, the best on a clean link */
		c->ep.rel.scheme_may_change = 1;
		if (isnan(drop))
			c->ep.rel.scheme = (struct sdr_scheme){ .kind = SDR_SCHEME_SR_NACK };
		else if (conn_pick_scheme(c, w, drop, c->ep.attr.max_chunk_shift) != 0)
			return -1;
	} else if (c->scheme_auto && conn_pick_scheme(c, w, isnan(drop) ? 1e-4 : drop, 0) != 0) {
		return -1;
	}
	if (!c->ep.rel.scheme_may_change)
		c->ep.attr.max_chunk_shift = 0;		/* the chunk never changes */
	if (sdr_scheme_is_ec(&c->ep.rel.scheme)) {
		c->ep.attr.ec_k = c->ep.rel.scheme.k;
		c->ep.attr.ec_m = c->ep.rel.scheme.m;
	}
	rc = sdr_conn_geometry(&c->ep.attr, &g);
	if (rc != 0)
		return fail(w, geometry_key(rc, &c->ep.attr), "%s (%s)", sdr_conn_strerror(rc),
			    geometry_values(c, rc));
	/* with one key for every receive, only the generation tells a late packet of a slot's
	 * previous message from one of its current message */
	if (c->ep.attr.generations < 2 && c->ep.attr.local_rkey != 0)
		return fail(w, "generations", "1 with a fixed local_rkey: a late packet would be "
			    "placed in a later message; use 2 or more, or per-receive R_Keys "
			    "(local_rkey = 0)");
	return 0;
}

/*
 * stripes = N: entries "NAME/1" ... "NAME/N-1" after [conn NAME] (stripe 0), each with
 * the next range of QPNs on both sides and an Nth of the rate. Both ends derive the same
 * ranges, so a striped connection needs nothing more on either side than stripes = N.
 */
static int
conn_stripes(struct dp_cfg *cfg, struct dp_conn_cfg *c, const struct where *w)
{
	uint32_t nqpn = (uint32_t)c->ep.attr.channels * c->ep.attr.generations + 1;
	unsigned int n = c->stripes;

	if (n <= 1)
		return 0;
	if (c->ep.attr.remote_ctrl_qpn != 0)
		return fail(w, "stripes", "%u with remote_ctrl_qpn: a striped connection's peer "
			    "has its QPNs in consecutive ranges (a verbs peer has not)", n);
	if (strlen(c->name) + 3 > DP_NAME_LEN)
		return fail(w, "stripes", "%u: the name is too long for the stripes' names "
			    "(\"%s/1\"...)", n, c->name);
	if ((uint64_t)c->ep.attr.local_qpn + (uint64_t)n * nqpn > 0x1000000 ||
	    (uint64_t)c->ep.attr.remote_qpn + (uint64_t)n * nqpn > 0x1000000)
		return fail(w, "stripes", "%u stripes of %u QPNs each run past QPN 0xffffff", n,
			    nqpn);
	if (cfg->nconns + n - 1 > DP_MAX_CONNS)
		return fail(w, "stripes", "%u stripes make more than %d connections", n,
			    DP_MAX_CONNS);
	c->ep.rel.rate_bps /= n;	/* pacing: the connection's rate, shared */
	for (unsigned int s = 1; s < n; s++) {
		struct dp_conn_cfg *x = &cfg->conns[cfg->nconns++];

		*x = *c;
		snprintf(x->name, sizeof(x->name), "%s/%u", c->name, s);
		x->stripe = (uint8_t)s;
		x->ep.attr.local_qpn += s * nqpn;
		x->ep.attr.remote_qpn += s * nqpn;
	}
	return 0;
}

/* Section header "kind name" -> kind, name. */
static int
split_section(const char *sec, char *kind, size_t klen, const char **name)
{
	const char *sp = strchr(sec, ' ');
	size_t n = sp ? (size_t)(sp - sec) : strlen(sec);

	if (n >= klen)
		return -1;
	memcpy(kind, sec, n);
	kind[n] = '\0';
	*name = sp ? sp + 1 : "";
	while (**name == ' ')
		(*name)++;
	return 0;
}

static int
load_section(struct dp_cfg *cfg, struct rte_cfgfile *f, const char *sec, struct where *w)
{
	struct rte_cfgfile_entry ents[MAX_ENTRIES];
	char kind[16];
	const char *name;
	int n;
	void *obj = NULL;

	w->section = sec;
	if (split_section(sec, kind, sizeof(kind), &name) != 0)
		return fail(w, NULL, "unknown section (expected dataplane, pipeline, port NAME, "
			    "link NAME, conn NAME)");
	if (strcmp(kind, "dataplane") == 0 || strcmp(kind, "pipeline") == 0) {
		if (*name)
			return fail(w, NULL, "[%s] takes no name", kind);
	} else if (strcmp(kind, "port") == 0 || strcmp(kind, "link") == 0 ||
		   strcmp(kind, "conn") == 0) {
		char nm[DP_NAME_LEN];

		if (copy_name(nm, name) != 0)
			return fail(w, NULL, "[%s NAME] needs a name of letters, digits, - _ .", kind);
		if ((kind[0] == 'p' && dp_config_port(cfg, nm) >= 0) ||
		    (kind[0] == 'l' && dp_config_link(cfg, nm) >= 0) ||
		    (kind[0] == 'c' && dp_config_conn(cfg, nm) >= 0))
			return fail(w, NULL, "defined twice");
		if (kind[0] == 'p') {
			struct dp_port_cfg *p;

			if (cfg->nports == DP_MAX_PORTS)
				return fail(w, NULL, "more than %d ports", DP_MAX_PORTS);
			p = &cfg->ports[cfg->nports++];
			memset(p, 0, sizeof(*p));
			strcpy(p->name, nm);
			p->mtu = 4200;
			p->rx_queues = p->tx_queues = 1;
			obj = p;
		} else if (kind[0] == 'l') {
			struct dp_link_cfg *l;

			if (cfg->nlinks == DP_MAX_LINKS)
				return fail(w, NULL, "more than %d links", DP_MAX_LINKS);
			l = &cfg->links[cfg->nlinks++];
			memset(l, 0, sizeof(*l));
			strcpy(l->name, nm);
			link_emu_config_default(&l->emu);
			l->npaths = 1;
			obj = l;
		} else {
			struct dp_conn_cfg *c;

			if (cfg->nconns == DP_MAX_CONNS)
				return fail(w, NULL, "more than %d connections", DP_MAX_CONNS);
			c = &cfg->conns[cfg->nconns++];
			conn_defaults(c);
			strcpy(c->name, nm);
			obj = c;
		}
	} else {
		return fail(w, NULL, "unknown section (expected dataplane, pipeline, port NAME, "
			    "link NAME, conn NAME)");
	}
	n = rte_cfgfile_section_entries(f, sec, ents, MAX_ENTRIES);
	if (n < 0)
		return fail(w, NULL, "cannot read entries");
	if (n == MAX_ENTRIES && rte_cfgfile_section_num_entries(f, sec) > MAX_ENTRIES)
		return fail(w, NULL, "more than %d keys", MAX_ENTRIES);
	for (int i = 0; i < n; i++) {
		const char *k = ents[i].name, *v = ents[i].value;
		int rc;

		if (v[0] == '\0')
			return fail(w, k, "no value");
		switch (kind[0]) {
		case 'd': rc = dataplane_key(cfg, w, k, v); break;
		case 'p':
			rc = kind[1] == 'i' ? pipeline_key(cfg, w, k, v) :
					      port_key(obj, w, k, v);
			break;
		case 'l': rc = link_key(obj, w, k, v); break;
		default: rc = conn_key(obj, w, k, v); break;
		}
		if (rc != 0)
			return -1;
	}
	if (kind[0] == 'p' && kind[1] == 'o' && ((struct dp_port_cfg *)obj)->device[0] == '\0')
		return fail(w, "device", "missing");
	if (kind[0] == 'c')
		return conn_finish(cfg, obj, w) != 0 ? -1 : conn_stripes(cfg, obj, w);
	return 0;
}

/* Each path of each link: the link's own words, then the path's. */
static int
link_paths(struct dp_cfg *cfg, struct where *w)
{
	for (unsigned int i = 0; i < cfg->nlinks; i++) {
		struct dp_link_cfg *l = &cfg->links[i];
		char sec[64];

		snprintf(sec, sizeof(sec), "link %s", l->name);
		w->section = sec;
		for (unsigned int k = 0; k < LINK_EMU_MAX_PATHS; k++) {
			char buf[LINK_EMU_FMT_MAX], *words[LINK_EMU_FMT_MAX / 2], *save = NULL, key[8];
			int n = 0, bad = -1, rc;

			snprintf(key, sizeof(key), "path%u", k + 1);
			l->path[k] = l->emu;
			if (l->path_words[k][0] == '\0')
				continue;
			if (k >= l->npaths)
				return fail(w, key, "given, but paths = %u", l->npaths);
			strcpy(buf, l->path_words[k]);
			for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
				words[n++] = t;
			rc = link_emu_parse(&l->path[k], n, (const char *const *)words, &bad);
			if (rc != 0)
				return fail(w, key, "'%s': %s", bad >= 0 && bad < n ? words[bad] :
					    l->path_words[k], link_emu_strerror(rc));
		}
	}
	return 0;
}

/* Cross-section checks: references resolve, QPN ranges on a port do not overlap. */
static int
check_refs(struct dp_cfg *cfg, struct where *w)
{
	for (unsigned int i = 0; i < cfg->nports; i++) {
		struct dp_port_cfg *p = &cfg->ports[i];
		char sec[64];

		snprintf(sec, sizeof(sec), "port %s", p->name);
		w->section = sec;
		if (p->link[0] && dp_config_link(cfg, p->link) < 0)
			return fail(w, "link", "no [link %s] section", p->link);
		if (p->exception[0] && (dp_config_port(cfg, p->exception) < 0 ||
					strcmp(p->exception, p->name) == 0))
			return fail(w, "exception", "no other [port %s] section", p->exception);
		for (unsigned int j = 0; j < i; j++)
			if (strcmp(cfg->ports[j].device, p->device) == 0)
				return fail(w, "device", "'%s' is also the device of [port %s]",
					    p->device, cfg->ports[j].name);
		if (p->zero_copy == DP_ZC_YES && strncmp(p->device, "net_memif", 9) == 0 &&
		    !dp_config_copying_device(p->device))
			return fail(w, "zero_copy", "yes with memif's own zero-copy=yes: memif then "
				    "sends only buffers of its own mempool, not the application's");
	}
	for (unsigned int i = 0; i < cfg->nconns; i++) {
		const struct dp_conn_cfg *a = &cfg->conns[i];
		uint64_t a0 = a->ep.attr.local_qpn;
		uint64_t a1 = a0 + (uint64_t)a->ep.attr.channels * a->ep.attr.generations;
		char sec[64];

		for (unsigned int j = 0; j < i; j++) {
			const struct dp_conn_cfg *b = &cfg->conns[j];
			uint64_t b0 = b->ep.attr.local_qpn;
			uint64_t b1 = b0 + (uint64_t)b->ep.attr.channels * b->ep.attr.generations;

			if (strcmp(a->port, b->port) == 0 && a0 <= b1 && b0 <= a1) {
				snprintf(sec, sizeof(sec), "conn %s", a->name);
				w->section = sec;
				return fail(w, "local_qpn", "QPNs 0x%" PRIx64 "-0x%" PRIx64 " overlap "
					    "[conn %s] on port %s", a0, a1, b->name, a->port);
			}
		}
	}
	return 0;
}

/* Settings of [pipeline] that depend on the rest of the file. */
/* Whether a connection sends and receives on port @p name. */
static int
port_has_conns(const struct dp_cfg *cfg, const char *name)
{
	for (unsigned int i = 0; i < cfg->nconns; i++)
		if (strcmp(cfg->conns[i].port, name) == 0)
			return 1;
	return 0;
}

static int
check_pipeline(struct dp_cfg *cfg, struct where *w)
{
	char sec[64];

	w->section = "pipeline";
	if (cfg->rx_lcores > 1 && cfg->mode != DP_PIPE_SPLIT)
		return fail(w, "rx_lcores", "%u receive lcores need mode = split", cfg->rx_lcores);
	if (cfg->place_workers && cfg->placement_set && cfg->mode != DP_PIPE_SPLIT)
		return fail(w, "placement", "workers needs mode = split (receive workers)");
	/* the default: copies on the receive workers when there are any */
	if (!cfg->placement_set)
		cfg->place_workers = cfg->mode == DP_PIPE_SPLIT;
	for (unsigned int i = 0; cfg->rx_lcores > 1 && i < cfg->nports; i++)
		if (cfg->ports[i].capture[0])
			return fail(w, "rx_lcores", "%u receive lcores cannot share [port %s]'s "
				    "capture file (use rx_lcores = 1, or dpdk-dumpcap)",
				    cfg->rx_lcores, cfg->ports[i].name);
	if (cfg->engines > 1 && cfg->mode != DP_PIPE_ENGINES)
		return fail(w, "engines", "%u engines need mode = engines", cfg->engines);
	if (cfg->mode != DP_PIPE_ENGINES) {
		/* (the table it programs sends every packet to engine 0's queue, 0: the receive
		 * workers of mode = split would share nothing) */
		for (unsigned int i = 0; i < cfg->nports; i++)
			if (cfg->ports[i].steering == DP_STEER_RSS) {
				snprintf(sec, sizeof(sec), "port %s", cfg->ports[i].name);
				w->section = sec;
				return fail(w, "steering", "rss needs [pipeline] mode = engines (it puts "
					    "each connection on its engine's queue)");
			}
		cfg->engines = 1;
		return 0;
	}
	if (cfg->engines == 0)
		cfg->engines = 1;
	/* each engine has a pool of its own: mbufs / engines, at least what one pool needs */
	if (cfg->mbufs / cfg->engines < DP_MIN_MBUFS)
		return fail(w, "engines", "%u engines share [dataplane] mbufs = %u: %u each, below "
			    "the %u an engine's pool needs (raise mbufs to %u)", cfg->engines,
			    cfg->mbufs, cfg->mbufs / cfg->engines, DP_MIN_MBUFS,
			    DP_MIN_MBUFS * cfg->engines);
	if (cfg->zc_mbufs != 0 && cfg->zc_mbufs / cfg->engines < DP_MIN_MBUFS)
		return fail(w, "engines", "%u engines share [dataplane] zc_mbufs = %u: %u each, "
			    "below the %u an engine's pool needs (raise zc_mbufs to %u)",
			    cfg->engines, cfg->zc_mbufs, cfg->zc_mbufs / cfg->engines,
			    DP_MIN_MBUFS, DP_MIN_MBUFS * cfg->engines);
	if (cfg->fec_lcore)
		return fail(w, "fec", "lcore does not go with mode = engines (each engine codes "
			    "its own connections: fec = inline)");
	for (unsigned int i = 0; i < cfg->nports; i++) {
		const struct dp_port_cfg *pc = &cfg->ports[i];

		/* engine e receives on RX queue e and sends on TX queue e of every port */
		if (pc->rx_queues < cfg->engines || pc->tx_queues < cfg->engines)
			return fail(w, "engines", "%u engines need %u rx_queues and tx_queues on "
				    "[port %s] (it has %u and %u)", cfg->engines, cfg->engines,
				    pc->name, pc->rx_queues, pc->tx_queues);
		/* the receiver's table maps entry i to queue i mod engines: the sender's hash
		 * mod engines then names the queue whatever the table's size (a power of two) */
		if (pc->steering == DP_STEER_RSS && (cfg->engines & (cfg->engines - 1)) != 0)
			return fail(w, "engines", "%u engines with [port %s] steering = rss: RSS "
				    "steering needs 1, 2, 4 or 8 engines", cfg->engines, pc->name);
		/* a NIC's queues are its RSS's choice, not the peer's TX queues one for one
		 * (what only passes through, to an exception port, may come on any) */
		if (cfg->engines > 1 && pc->steering == DP_STEER_QUEUE &&
		    dp_config_nic_device(pc->device) && port_has_conns(cfg, pc->name))
			return fail(w, "engines", "%u engines with [port %s] steering = queue: a "
				    "NIC's RSS, not the peer's TX queue, picks the RX queue (set "
				    "steering = rss)", cfg->engines, pc->name);
	}
	for (unsigned int i = 0; i < cfg->nconns; i++) {
		const struct dp_conn_cfg *c = &cfg->conns[i];
		int pi = dp_config_port(cfg, c->port);

		if (c->engine >= (int)cfg->engines)
			return fail(w, "engines", "[conn %s] engine = %d, but there are %u engines",
				    c->name, c->engine, cfg->engines);
		if (cfg->engines > 1 && c->ep.attr.remote_ctrl_qpn != 0)
			return fail(w, "engines", "%u engines with [conn %s] remote_ctrl_qpn: %s",
				    cfg->engines, c->name, DP_VERBS_PEER_ENGINES);
		/* each stripe's frames must land on its own engine at the far end: one port
		 * per path cannot do that for all of them */
		if (c->stripes > 1 && c->stripe == 0 && c->ep.paths.sport[0] != 0 && pi >= 0 &&
		    cfg->ports[pi].steering == DP_STEER_RSS) {
			snprintf(sec, sizeof(sec), "conn %s", c->name);
			w->section = sec;
			return fail(w, "path_sports", "with stripes = %u and [port %s] steering = rss: "
				    "each stripe's frames must reach its own engine, and one port per "
				    "path reaches one", c->stripes, c->port);
		}
	}
	return 0;
}

/* The longest line rte_cfgfile_load() reads (its buffer: a name, a value, " = " and \n). */
#define CFG_LINE_MAX (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/* Whitespace off both ends of [*s, *s + *n). */
static void
trim(const char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r' ||
			  (*s)[*n - 1] == '\n'))
		(*n)--;
}

/* A name seen before, and on which line (names: @p n of @p seen, each CFG_NAME_LEN). */
static int
seen_before(const char (*seen)[CFG_NAME_LEN], const int *lines, unsigned int n, const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(seen[i], name) == 0)
			return lines[i];
	return 0;
}

/*
 * The file's lines as rte_cfgfile_load() would take them, refused where it would not say
 * so: it skips a line that is neither a [section] nor key = value, reads only the first of
 * two sections of one name, keeps the last of a key given twice and cuts a value of 256
 * characters or more short, all silently; and on a line too long or a value missing it
 * logs a line of its own and fails without saying where. Each is one line here, with the
 * file and line number. (A file that cannot be opened is left to rte_cfgfile_load().)
 */
static int
precheck(const char *file, char *err, size_t errlen)
{
	static char secs[DP_MAX_CONNS + 64][CFG_NAME_LEN], keys[MAX_ENTRIES][CFG_NAME_LEN];
	int sec_line[DP_MAX_CONNS + 64], key_line[MAX_ENTRIES];
	unsigned int nsecs = 0, nkeys = 0;
	char *buf = NULL, sec[CFG_NAME_LEN] = "";
	size_t cap = 0;
	ssize_t got;
	int lineno = 0, rc = 0;
	FILE *f = fopen(file, "r");

#define BAD(...) do { \
		int o_ = snprintf(err, errlen, "%s:%d: ", file, lineno); \
		snprintf(err + o_, errlen > (size_t)o_ ? errlen - (size_t)o_ : 0, __VA_ARGS__); \
		rc = -1; \
		goto out; \
	} while (0)
	if (f == NULL)
		return 0;
	while ((got = getline(&buf, &cap, f)) > 0) {
		const char *s = buf, *eq, *k, *v;
		size_t n = (size_t)got, kn, vn;

		lineno++;
		if (n > CFG_LINE_MAX)
			BAD("line longer than %d characters", CFG_LINE_MAX);
		for (size_t i = 0; i < n; i++)		/* a comment to the end of the line */
			if (s[i] == ';' && (i == 0 || s[i - 1] != '\\')) {
				n = i;
				break;
			}
		trim(&s, &n);
		if (n == 0)
			continue;
		if (s[0] == '[') {
			const char *e = memchr(s, ']', n);

			k = s + 1;
			kn = e != NULL ? (size_t)(e - k) : 0;
			trim(&k, &kn);
			if (e == NULL || e != s + n - 1)
				BAD("'%.*s': a section heading is [NAME] alone on its line", (int)n, s);
			if (kn == 0 || kn >= CFG_NAME_LEN)
				BAD("'%.*s': a section name has 1 to %d characters", (int)n, s,
				    CFG_NAME_LEN - 1);
			memcpy(sec, k, kn);
			sec[kn] = '\0';
			if ((rc = seen_before(secs, sec_line, nsecs, sec)) != 0)
				BAD("[%s] given twice (line %d too): put its keys in one section",
				    sec, rc);
			if (nsecs == (sizeof(secs) / sizeof(secs[0])))
				BAD("more than %u sections", (unsigned int)(sizeof(secs) / sizeof(secs[0])));
			strcpy(secs[nsecs], sec);
			sec_line[nsecs++] = lineno;
			nkeys = 0;
			continue;
		}
		eq = memchr(s, '=', n);
		if (eq == NULL)
			BAD("'%.*s' is not a [section], a key = value or a comment (;)", (int)n, s);
		k = s;
		kn = (size_t)(eq - s);
		v = eq + 1;
		vn = n - kn - 1;
		trim(&k, &kn);
		trim(&v, &vn);
		if (kn == 0 || kn >= CFG_NAME_LEN)
			BAD("'%.*s': a key has 1 to %d characters", (int)n, s, CFG_NAME_LEN - 1);
		if (sec[0] == '\0')
			BAD("%.*s: a key before any [section]", (int)kn, k);
		if (vn == 0)
			BAD("[%s] %.*s: no value", sec, (int)kn, k);
		if (vn >= CFG_VALUE_LEN)
			BAD("[%s] %.*s: a value has at most %d characters", sec, (int)kn, k,
			    CFG_VALUE_LEN - 1);
		if (nkeys == MAX_ENTRIES)
			BAD("[%s]: more than %d keys", sec, MAX_ENTRIES);
		memcpy(keys[nkeys], k, kn);
		keys[nkeys][kn] = '\0';
		if ((rc = seen_before(keys, key_line, nkeys, keys[nkeys])) != 0)
			BAD("[%s] %.*s: given twice (line %d too)", sec, (int)kn, k, rc);
		key_line[nkeys++] = lineno;
	}
#undef BAD
out:
	free(buf);
	fclose(f);
	return rc;
}

int
dp_config_load(const char *file, struct dp_cfg *cfg, char *err, size_t errlen)
{
	struct where w = { .file = file, .section = "", .err = err, .errlen = errlen };
	struct rte_cfgfile *f;
	char **secs = NULL;
	int n, rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file, sizeof(cfg->file), "%s", file);
	strcpy(cfg->name, "sdr0");
	cfg->mbufs = 16384;
	cfg->burst = 32;
	cfg->idle_sleep_us = 50;
	cfg->arena_bytes = 1ull << 30;
	cfg->conn_memory = 1ull << 30;
	cfg->user_memory = 4ull << 30;
	cfg->sdk_slots_per_user = 4;
	strcpy(cfg->control_dir, "/run/sdr");
	cfg->fec_jobs = 8;
	cfg->rx_lcores = 1;
	if (precheck(file, err, errlen) != 0)
		return -1;
	f = rte_cfgfile_load(file, 0);
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot read or parse (%s)", file,
			 errno ? strerror(errno) : "not an INI file");
		return -1;
	}
	n = rte_cfgfile_num_sections(f, NULL, 0);
	if (n <= 0) {
		snprintf(err, errlen, "%s: no sections", file);
		goto out;
	}
	secs = calloc((size_t)n, sizeof(char *));
	for (int i = 0; secs && i < n; i++)
		secs[i] = malloc(CFG_NAME_LEN);
	if (secs == NULL || rte_cfgfile_sections(f, secs, n) != n) {
		snprintf(err, errlen, "%s: cannot list sections", file);
		goto out;
	}
	/* ports and links first: connections refer to them */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			int is_conn = strncmp(secs[i], "conn", 4) == 0;

			if (is_conn != pass)
				continue;
			if (load_section(cfg, f, secs[i], &w) != 0)
				goto out;
		}
	}
	if (cfg->nports == 0) {
		snprintf(err, errlen, "%s: no [port NAME] section", file);
		goto out;
	}
	rc = link_paths(cfg, &w);
	if (rc == 0)
		rc = check_refs(cfg, &w);
	if (rc == 0)
		rc = check_pipeline(cfg, &w);
out:
	for (int i = 0; secs && i < n; i++)
		free(secs[i]);
	free(secs);
	rte_cfgfile_close(f);
	return rc;
}

void
dp_config_key_name(char *key, size_t len, const char *word)
{
	/* the CLI spells keys with dashes or underscores; the file with underscores */
	snprintf(key, len, "%s", word);
	for (char *k = key; *k; k++)
		if (*k == '-')
			*k = '_';
}

int
dp_config_conn_words(const struct dp_cfg *cfg, struct dp_conn_cfg *c, const char *name,
		     int argc, char *const argv[], int fresh, char *err, size_t errlen)
{
	char sec[64];
	struct where w = { .file = "", .section = sec, .err = err, .errlen = errlen };

	snprintf(sec, sizeof(sec), "conn %s", name);
	if (fresh) {
		conn_defaults(c);
		if (copy_name(c->name, name) != 0)
			return fail(&w, NULL, "'%s' is not a name of letters, digits, - _ .", name);
	}
	if (argc % 2 != 0)
		return fail(&w, argv[argc - 1], "has no value");
	for (int i = 0; i < argc; i += 2) {
		char key[64];

		dp_config_key_name(key, sizeof(key), argv[i]);
		if (conn_key(c, &w, key, argv[i + 1]) != 0)
			return -1;
	}
	if (c->stripes > 1)
		return fail(&w, "stripes", "%u: striped connections are made and changed in the "
			    "configuration file (a connection added at run time has one stripe)",
			    c->stripes);
	return conn_finish((struct dp_cfg *)(uintptr_t)cfg, c, &w);
}

/* Device argument @p key=@p value among the comma-separated words after the driver name. */
static int
devarg_is(const char *device, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	for (const char *a = strchr(device, ','); a != NULL; a = strchr(a + 1, ','))
		if (strncmp(a + 1, key, kl) == 0 && a[1 + kl] == '=' &&
		    strncmp(a + 2 + kl, value, vl) == 0 && (a[2 + kl + vl] == ',' ||
							    a[2 + kl + vl] == '\0'))
			return 1;
	return 0;
}

int
dp_config_copying_device(const char *device)
{
	static const char *const copying[] = { "net_memif", "net_af_packet", "net_af_xdp",
					       "net_pcap", "net_tap", "net_null" };

	for (size_t i = 0; i < sizeof(copying) / sizeof(copying[0]); i++) {
		size_t n = strlen(copying[i]);

		/* the driver's name, then its instance number or its arguments */
		if (strncmp(device, copying[i], n) != 0 ||
		    (device[n] != '\0' && device[n] != ',' && (device[n] < '0' || device[n] > '9')))
			continue;
		return i != 0 || !devarg_is(device, "zero-copy", "yes");
	}
	return 0;
}

int
dp_config_nic_device(const char *device)
{
	const char *d = device;
	unsigned int x = 0;

	/* a PCI address, [DDDD:]BB:DD.F (an mlx5 representor's name starts with one) */
	while (isxdigit((unsigned char)d[x]))
		x++;
	if (x == 4 && d[x] == ':') {
		d += 5;
		for (x = 0; isxdigit((unsigned char)d[x]); x++)
			;
	}
	if (x == 2 && d[2] == ':' && isxdigit((unsigned char)d[3]) &&
	    isxdigit((unsigned char)d[4]) && d[5] == '.' && d[6] >= '0' && d[6] <= '7')
		return 1;
	/* an mlx5 sub-function on the auxiliary bus */
	return strncmp(device, "mlx5_core.sf.", 13) == 0 ||
	       strncmp(device, "auxiliary:", 10) == 0;
}

int
dp_config_port(const struct dp_cfg *cfg, const char *name)
{
	for (unsigned int i = 0; i < cfg->nports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
dp_config_link(const struct dp_cfg *cfg, const char *name)
{
	for (unsigned int i = 0; i < cfg->nlinks; i++)
		if (strcmp(cfg->links[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
dp_config_conn_is(const struct dp_conn_cfg *c, const char *name)
{
	size_t n = strlen(name);

	/* stripes are named NAME/s by conn_stripes(); a user's name cannot hold a '/' */
	return strncmp(c->name, name, n) == 0 && (c->name[n] == '\0' || c->name[n] == '/');
}

int
dp_config_conn(const struct dp_cfg *cfg, const char *name)
{
	for (unsigned int i = 0; i < cfg->nconns; i++)
		if (strcmp(cfg->conns[i].name, name) == 0)
			return (int)i;
	return -1;
}
