/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin commands of sdrctl (one-shot and interactive, the same grammar), run on the
 * control service's management thread: the show commands read under the connections lock,
 * the ones that change what the engine owns prepare here (whatever allocates) and hand the
 * change to the engine as a job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "ctl.h"
#include "pools.h"
#include "ports.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_tx.h"
#include "units.h"

#define MAX_WORDS 96

/* ---- output buffer ---- */

struct out {
	char *buf;
	size_t cap;
	size_t len;
};

static void __attribute__((format(printf, 2, 3)))
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= o->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < o->cap - o->len ? (size_t)n : o->cap - o->len - 1;
}

/* The reply is one line, @p fmt, instead of what was put so far. @return @p rc */
static int __attribute__((format(printf, 3, 4)))
one_line(struct out *o, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->buf, o->cap, fmt, ap);
	va_end(ap);
	o->len = strlen(o->buf);
	return rc;
}

/* A command refused: bad input, nothing changed (exit status 2). */
#define bad(o, ...)	one_line((o), SDR_CTL_BAD_INPUT, __VA_ARGS__)

/* A command the dataplane could not carry out (exit status 1). */
#define failed(o, ...)	one_line((o), SDR_CTL_FAILED, __VA_ARGS__)

/* ---- lookups ---- */

int
ctl_find_conn(const struct dp_ctx *ctx, const char *name)
{
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].ep != NULL && strcmp(ctx->conns[i].cfg->name, name) == 0)
			return (int)i;
	return -1;
}

static int
find_port(const struct dp_ctx *ctx, const char *name)
{
	for (unsigned int i = 0; i < ctx->nports; i++)
		if (strcmp(ctx->ports[i].cfg->name, name) == 0)
			return (int)i;
	return -1;
}

static const char *
conn_names(const struct dp_ctx *ctx, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < ctx->nconns && o + 2 < len; i++)
		if (ctx->conns[i].ep != NULL)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
					      ctx->conns[i].cfg->name);
	return o ? buf : "none";
}

static const char *
port_names(const struct dp_ctx *ctx, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < ctx->nports && o + 2 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
				      ctx->ports[i].cfg->name);
	return buf;
}

static const char *
dir_name(uint8_t d)
{
	return d == SDR_DIR_SEND ? "send" : d == SDR_DIR_RECV ? "recv" : "both";
}

static const char *
ip_str(uint8_t version, const uint8_t *ip, char *buf, size_t len)
{
	return inet_ntop(version == 6 ? AF_INET6 : AF_INET, ip, buf, (socklen_t)len);
}

/* ---- conn ---- */

static void
conn_line(const struct dp_ctx *ctx, unsigned int i, int json, struct out *o, int first)
{
	const struct dp_conn *c = &ctx->conns[i];
	const struct dp_conn_cfg *cc = c->cfg;
	char scheme[SDR_SCHEME_CHUNK_NAME_MAX], ip[64], rate[32], rtt[32];

	{
		/* the scheme in force: auto's changes it as the link changes */
		struct sdr_scheme now = c->ep ? sdr_ep_scheme(c->ep, NULL) : cc->ep.rel.scheme;

		sdr_scheme_format_chunk(&now, cc->ep.attr.chunk_size, scheme, sizeof(scheme));
	}
	ip_str(cc->peer_ip_version, cc->peer_ip, ip, sizeof(ip));
	if (json) {
		put(o, "%s{\"name\":\"%s\",\"port\":\"%s\",\"scheme\":\"%s\",\"scheme_auto\":%s,"
		    "\"peer_ip\":\"%s\","
		    "\"local_qpn\":%u,\"remote_qpn\":%u,\"mtu\":%u,\"chunk\":%u,\"channels\":%u,"
		    "\"generations\":%u,\"max_msg\":%" PRIu64 ",\"inflight\":%u,\"dir\":\"%s\","
		    "\"rtt_s\":%.9g,\"rate_bps\":%.6g,\"owner\":%d,\"traffic\":%s,\"busy\":%s,"
		    "\"handshake\":\"%s\",\"auth\":%s}",
		    first ? "" : ",", cc->name, cc->port, scheme, cc->scheme_auto ? "true" : "false",
		    ip, cc->ep.attr.local_qpn,
		    cc->ep.attr.remote_qpn, cc->ep.attr.mtu, cc->ep.attr.chunk_size,
		    cc->ep.attr.channels, cc->ep.attr.generations, cc->ep.attr.max_msg_size,
		    cc->ep.attr.max_inflight, dir_name(cc->ep.attr.dir),
		    (double)cc->ep.rel.rtt_ns * 1e-9, cc->ep.rel.rate_bps, c->owner,
		    c->traffic ? "true" : "false", sdr_ep_busy(c->ep) ? "true" : "false",
		    sdr_ep_ready(c->ep) ? "done" : "waiting", cc->ep.auth ? "true" : "false");
		return;
	}
	if (cc->scheme_auto) {	/* the model's pick, marked */
		memmove(scheme + 5, scheme, strlen(scheme) + 1);
		memcpy(scheme, "auto:", 5);
	}
	if (cc->ep.rel.rate_bps > 0)
		snprintf(rate, sizeof(rate), "%.3gG", cc->ep.rel.rate_bps * 1e-9);
	else
		snprintf(rate, sizeof(rate), "-");
	put(o, "%-12s %-6s %-18s %-16s 0x%06x 0x%06x %5u %6u %4s %8s %6s %s\n", cc->name,
	    cc->port, scheme, ip, cc->ep.attr.local_qpn, cc->ep.attr.remote_qpn,
	    cc->ep.attr.mtu, cc->ep.attr.chunk_size / 1024, dir_name(cc->ep.attr.dir),
	    units_fmt_time((double)cc->ep.rel.rtt_ns * 1e-9, rtt, sizeof(rtt)), rate,
	    c->traffic ? "traffic" : c->owner >= 0 ? "sdk" : "-");
}

static void
counters(struct out *o, int json, const struct sdr_counter_table *t, const uint64_t *v, int *first)
{
	const char *title = t->group;

	if (json) {
		put(o, "%s\"%s\":{", *first ? "" : ",", title);
		for (unsigned int i = 0; i < t->n; i++)
			put(o, "%s\"%s\":%" PRIu64, i ? "," : "", t->defs[i].name, v[i]);
		put(o, "}");
		*first = 0;
		return;
	}
	put(o, "%s:", title);
	for (unsigned int i = 0; i < t->n; i++)
		if (v[i])
			put(o, " %s %" PRIu64, t->defs[i].name, v[i]);
	put(o, "\n");
}

/*
 * scheme auto: the send side's loss estimate from the peer's REPORTs, the latest decision
 * and the changes asked (online auto, ctl_auto.c); a connection that cannot change (two
 * ways, or no room for the codes) gets the model's advice, decided here from a copy of the
 * engine's estimator.
 */
static void
auto_show(struct dp_ctx *ctx, struct dp_conn *c, int json, struct out *o, int *first)
{
	const struct dp_conn_cfg *cc = c->cfg;
	struct dp_auto_rec h[DP_AUTO_HIST];
	struct sdr_auto_decision d;
	struct sdr_auto_path pa;
	char cur[SDR_SCHEME_CHUNK_NAME_MAX], cho[SDR_SCHEME_CHUNK_NAME_MAX],
	     a[SDR_SCHEME_CHUNK_NAME_MAX], b[SDR_SCHEME_CHUNK_NAME_MAX], path[320];
	uint32_t cb = cc->ep.attr.chunk_size;
	const uint64_t *ec = sdr_ep_counters(c->ep);
	int online = dp_conn_auto_changes(cc), changing;
	struct sdr_scheme now = sdr_ep_scheme(c->ep, &changing);
	unsigned int n = ctl_auto_history(c, h, DP_AUTO_HIST, &d, &pa);

	if (!online || d.why[0] == '\0') {
		struct sdr_model_params p;
		struct sdr_auto est;

		memcpy(&est, sdr_ep_auto(c->ep), sizeof(est));
		ctl_auto_params(ctx, c, &p, &pa);
		sdr_auto_decide(&est, &p, &now, 0, &d);
	}
	sdr_auto_path_format(&pa, path, sizeof(path));
	sdr_scheme_format_chunk(&now, cb, cur, sizeof(cur));
	sdr_scheme_format_chunk(&d.choice, cb, cho, sizeof(cho));
	if (json) {
		put(o, "%s\"auto\":{\"online\":%s,\"scheme\":\"%s\",\"changing\":%s,"
		    "\"changes\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"loss\":%.6g,"
		    "\"loss_lo\":%.6g,\"loss_hi\":%.6g,\"pkts\":%.0f,\"total_pkts\":%" PRIu64
		    ",\"total_lost\":%" PRIu64 ",\"link_changes\":%u,\"verdict\":\"%s\","
		    "\"choice\":\"%s\",\"why\":\"%s\"",
		    *first ? "" : ",", online ? "true" : "false", cur, changing ? "true" : "false",
		    ec[SDR_EP_SCHEME_CHANGES], ec[SDR_EP_SCHEME_REFUSED], d.est.p, d.est.lo,
		    d.est.hi, d.est.pkts, d.est.total_pkts, d.est.total_lost, d.est.changes,
		    sdr_auto_verdict_name(d.verdict), cho, d.why);
		put(o, ",\"path\":{\"rtt_s\":%.6g,\"rtt_measured\":%s,\"rtt_min_s\":%.6g,"
		    "\"srtt_s\":%.6g,\"rttvar_s\":%.6g,\"rtt_samples\":%" PRIu64 ",\"rate_bps\":%.6g,"
		    "\"rate_measured\":%s,\"paced\":%s,\"rate_max_bps\":%.6g,\"rate_samples\":%"
		    PRIu64 ",\"rto_s\":%.6g},\"history\":[", pa.rtt_s,
		    pa.rtt_measured ? "true" : "false", pa.rtt_min_s, pa.srtt_s, pa.rttvar_s,
		    pa.rtt_samples, pa.bandwidth_bps, pa.rate_measured ? "true" : "false",
		    pa.paced ? "true" : "false", pa.rate_max_bps, pa.rate_samples, pa.rto_s);
		for (unsigned int k = 0; k < n; k++)
			put(o, "%s{\"t_s\":%.3f,\"from\":\"%s\",\"to\":\"%s\",\"why\":\"%s\"}",
			    k ? "," : "", (double)h[k].t_ns * 1e-9,
			    sdr_scheme_format_chunk(&h[k].from, cb, a, sizeof(a)),
			    sdr_scheme_format_chunk(&h[k].to, cb, b, sizeof(b)), h[k].why);
		put(o, "]}");
		*first = 0;
		return;
	}
	if (!online) {
		put(o, "auto (advice only: %s): %s\n  path: %s\n", cc->ep.attr.dir == SDR_DIR_RECV ?
		    "this end only receives; the sending end chooses" :
		    "the connection has no room for other codes", d.why, path);
		return;
	}
	put(o, "auto: %s%s, %" PRIu64 " changes (%" PRIu64 " refused by the peer); %s\n", cur,
	    changing ? " (changing)" : "", ec[SDR_EP_SCHEME_CHANGES], ec[SDR_EP_SCHEME_REFUSED],
	    d.why);
	put(o, "  path: %s\n", path);
	for (unsigned int k = 0; k < n; k++)
		put(o, "  at %.1f s: %s -> %s\n", (double)h[k].t_ns * 1e-9,
		    sdr_scheme_format_chunk(&h[k].from, cb, a, sizeof(a)),
		    sdr_scheme_format_chunk(&h[k].to, cb, b, sizeof(b)));
}

static int
conn_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256];
	int first = 1;

	if (argc > 3)
		return bad(o, "conn show: unexpected '%s' (expected: conn show [NAME])", argv[3]);
	if (argc == 3) {
		int i = ctl_find_conn(ctx, argv[2]);
		const struct dp_conn *c;
		uint64_t rto, trtt, rx_rto, rx_rtt;

		if (i < 0)
			return bad(o, "conn show: no connection '%s' (there are: %s)", argv[2],
				   conn_names(ctx, names, sizeof(names)));
		c = &ctx->conns[i];
		rto = sdr_ep_rto(c->ep, &trtt);
		rx_rto = sdr_ep_rx_rto(c->ep, &rx_rtt);
		if (json) {
			put(o, "{\"conn\":");
			conn_line(ctx, (unsigned int)i, 1, o, 1);
			put(o, ",\"timers\":{\"rto\":\"%s\",\"rto_s\":%.6g,\"rtt_s\":%.6g,"
			    "\"rx_rto_s\":%.6g,\"rx_rtt_s\":%.6g}",
			    c->cfg->ep.rel.rto_measured ? "measured" : "configured",
			    (double)rto * 1e-9, (double)trtt * 1e-9, (double)rx_rto * 1e-9,
			    (double)rx_rtt * 1e-9);
			put(o, ",\"counters\":{");
		} else {
			put(o, "%-12s %-6s %-18s %-16s %-8s %-8s %5s %6s %4s %8s %6s %s\n", "name",
			    "port", "scheme", "peer", "lqpn", "rqpn", "mtu", "chunkK", "dir", "rtt",
			    "rate", "use");
			conn_line(ctx, (unsigned int)i, 0, o, 1);
			put(o, "handshake: %s%s%s\n", sdr_ep_ready(c->ep) ? "done" :
			    sdr_ep_ctrl_err_count(c->ep, SDR_CTRL_E_VERSION) ?
			    "waiting for the peer: control messages of another version came "
			    "(ctrl_bad_version); both ends must run the same control version" :
			    "waiting for the peer (HELLO every RTO, backing off to 64 RTO)",
			    c->cfg->ep.auth ? "; control messages authenticated (auth_key)" : "",
			    sdr_ep_rx_held(c->ep) == 1 ? "; the peer's data is refused: its "
			    "scheme is not one this end can decode (hello_scheme_refused)" :
			    sdr_ep_rx_held(c->ep) == 2 ? "; the peer's data waits: back to the "
			    "configured scheme once the old peer's work is in" : "");
			put(o, "timers: rto %.3g ms, from the %s rtt %.3g ms; receiver's rto %.3g ms, "
			    "from the %s rtt %.3g ms%s\n", (double)rto * 1e-6,
			    trtt != c->cfg->ep.rel.rtt_ns ? "measured" : "configured",
			    (double)trtt * 1e-6, (double)rx_rto * 1e-6,
			    rx_rtt != c->cfg->ep.rel.rtt_ns ? "measured" : "configured",
			    (double)rx_rtt * 1e-6, c->cfg->ep.rel.rto_measured ?
			    " (rto = measured: the smallest RTT of the last 10-20 s once 16 are "
			    "sampled)" : "");
		}
		if (c->cfg->scheme_auto)
			auto_show(ctx, &ctx->conns[i], json, o, &first);
		{
			struct sdr_ep_counter_group g[SDR_EP_NGROUPS];
			unsigned int ng = sdr_ep_counter_groups(c->ep, g);

			for (unsigned int k = 0; k < ng; k++)
				counters(o, json, g[k].table, g[k].v, &first);
		}
		if (json)
			put(o, "}}\n");
		return SDR_CTL_OK;
	}
	if (json) {
		put(o, "{\"conns\":[");
	} else {
		put(o, "%-12s %-6s %-18s %-16s %-8s %-8s %5s %6s %4s %8s %6s %s\n", "name", "port",
		    "scheme", "peer", "lqpn", "rqpn", "mtu", "chunkK", "dir", "rtt", "rate", "use");
	}
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		if (ctx->conns[i].ep == NULL)
			continue;
		conn_line(ctx, i, json, o, first);
		first = 0;
	}
	if (json)
		put(o, "]}\n");
	return SDR_CTL_OK;
}

/* ---- changing connections: prepared here, installed by the engine ---- */

/*
 * Why a connection cannot change (@p del: be deleted) now, or NULL. Engine state: read by
 * the engine's jobs. A scheme change waiting for the peer's answer stops a rebuild (both
 * sides must agree on the scheme), not a delete: with the peer away it may wait for good.
 */
static const char *
conn_in_use(const struct dp_ctx *ctx, unsigned int i, int owner, int del)
{
	const struct dp_conn *c = &ctx->conns[i];

	if (c->traffic != NULL)
		return "built-in traffic";
	if (c->owner != owner)
		return c->owner >= 0 ? "an SDK application" : "not open by this application";
	if (sdr_ep_in_flight(c->ep) || ctx->ctl->sdk[c->engine].conn_ops[i] > 0)
		return "messages in flight";
	if (!del && sdr_ep_busy(c->ep))
		return "a scheme change waiting for the peer's answer; conn del works";
	return NULL;
}

/* Engine: put j->cfg and its endpoint j->p in place as connection j->conn (a new one, or a
 * rebuild of an idle one still open by j->owner); the old endpoint comes back in j->q. */
static int
job_install(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct dp_conn *c = &ctx->conns[j->conn];
	const char *why;
	int rc;

	/* what the application released before asking (its own connection only) */
	if (j->owner >= 0 && c->ep != NULL && c->owner == j->owner)
		ctl_sdk_client_flush(ctx, c->engine, (unsigned int)j->owner, dp_now_ns(ctx));
	why = c->ep != NULL ? conn_in_use(ctx, j->conn, j->owner, 0) : NULL;
	if (why != NULL) {
		snprintf(j->err, j->errlen, "'%s' is in use (%s)", c->cfg->name, why);
		return -EBUSY;
	}
	/* a rebuild toward the same peer: the peer hears of it at once, and what the old
	 * endpoint delivered completes there even if its last ACK was lost (otherwise the new
	 * endpoint starts as any other: -EINVAL, -EBUSY) */
	if (c->ep != NULL)
		(void)sdr_ep_take_over(j->p, c->ep);
	rte_spinlock_lock(&ctx->conns_lock);
	j->q = c->ep;
	rc = dp_conn_install(ctx, j->conn, j->cfg, j->p, j->err, j->errlen);
	if (rc == 0 && j->q == NULL) {
		c->owner = j->owner;
		c->creator = j->creator;
	}
	rte_spinlock_unlock(&ctx->conns_lock);
	return rc;
}

int
ctl_conn_install(struct dp_ctx *ctx, int i, const struct dp_conn_cfg *tmp, int owner,
		 int creator, char *err, size_t errlen)
{
	struct dp_conn_cfg cc = *tmp;
	struct ctl_job j = { .fn = job_install, .cfg = &cc, .owner = owner, .creator = creator,
			     .err = err, .errlen = errlen };
	struct sdr_ep *ep;
	int rc, pi;

	if (ctx->cfg.mode == DP_PIPE_ENGINES && cc.engine >= (int)ctx->cfg.engines) {
		snprintf(err, errlen, "[conn %s] engine: %d, but there are %u engines (0 ... %u)",
			 cc.name, cc.engine, ctx->cfg.engines, ctx->cfg.engines - 1);
		return -1;
	}
	pi = dp_config_port(&ctx->cfg, cc.port);
	if (ctx->cfg.engines > 1 && pi >= 0 && ctx->cfg.ports[pi].steering == DP_STEER_QUEUE &&
	    dp_config_nic_device(ctx->cfg.ports[pi].device)) {
		snprintf(err, errlen, "[conn %s] port %s: %u engines with steering = queue on a NIC: "
			 "its RSS, not the peer's TX queue, picks the RX queue (set steering = rss)",
			 cc.name, cc.port, ctx->cfg.engines);
		return -1;
	}
	if (ctx->cfg.engines > 1 && cc.ep.attr.remote_ctrl_qpn != 0) {
		snprintf(err, errlen, "[conn %s] remote_ctrl_qpn with %u engines: %s", cc.name,
			 ctx->cfg.engines, DP_VERBS_PEER_ENGINES);
		return -1;
	}
	if (i < 0) {
		for (i = 0; i < DP_MAX_CONNS && ctx->conns[i].ep != NULL; i++)
			;
		if (i == DP_MAX_CONNS) {
			snprintf(err, errlen, "%d connections already", DP_MAX_CONNS);
			return -ENOSPC;
		}
	}
	rc = dp_conn_prepare(ctx, &cc, &ep, err, errlen);
	if (rc != 0)
		return rc == -ENOMEM ? -ENOMEM : -1;
	j.conn = (unsigned int)i;
	j.p = ep;
	/* mode = engines: the engine that owns it puts it in place (a rebuild: where it is);
	 * the others go on meanwhile */
	j.engine = ctx->conns[i].ep != NULL ? ctx->conns[i].engine : dp_conn_engine(&ctx->cfg, &cc);
	rc = ctl_engine_call(ctx, &j);
	if (rc != 0) {
		dp_ep_free(ep);
		if (rc == -ESHUTDOWN) {
			snprintf(err, errlen, "the dataplane is stopping");
			return -ESHUTDOWN;
		}
		return -1;
	}
	dp_ep_free(j.q);
	return i;
}

/*
 * A command the dataplane could not carry out (no memory, no room, stopping): exit status
 * 1, as docs/cli.md says, not 2 (bad input: the command asks for something not possible).
 */
static int
ctl_failed(int rc)
{
	return rc == -ENOMEM || rc == -ENOSPC || rc == -ESHUTDOWN;
}

/* Engine: take connection j->conn out, if nobody uses it; its endpoint comes back in j->q. */
static int
job_remove(struct dp_ctx *ctx, struct ctl_job *j)
{
	const char *why;

	if (ctx->conns[j->conn].ep == NULL)
		return -ENOENT;
	why = conn_in_use(ctx, j->conn, -1, 1);
	if (why != NULL) {
		snprintf(j->err, j->errlen, "'%s' is in use (%s): stop its traffic first",
			 ctx->conns[j->conn].cfg->name, why);
		return -EBUSY;
	}
	rte_spinlock_lock(&ctx->conns_lock);
	j->q = dp_conn_remove(ctx, j->conn);
	rte_spinlock_unlock(&ctx->conns_lock);
	return 0;
}

int
ctl_conn_delete(struct dp_ctx *ctx, unsigned int i, char *err, size_t errlen)
{
	struct ctl_job j = { .fn = job_remove, .conn = i, .err = err, .errlen = errlen };
	int rc;

	j.engine = ctx->conns[i].engine;	/* its engine takes it out */
	rc = ctl_engine_call(ctx, &j);

	if (rc == -ESHUTDOWN)
		snprintf(err, errlen, "the dataplane is stopping");
	if (rc != 0)
		return rc;
	dp_ep_free(j.q);
	return 0;
}

static int
conn_add(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	struct dp_conn_cfg tmp;
	char err[512];
	int rc;

	if (argc < 3)
		return bad(o, "conn add: missing NAME (expected: conn add NAME port P peer-ip IP "
			   "local-qpn N remote-qpn N [key value]...)");
	if (ctl_find_conn(ctx, argv[2]) >= 0)
		return bad(o, "conn add: a connection '%s' exists already", argv[2]);
	if (dp_config_conn_words(&ctx->cfg, &tmp, argv[2], argc - 3, argv + 3, 1, err,
				 sizeof(err)) != 0)
		return bad(o, "%s", err);
	rc = ctl_conn_install(ctx, -1, &tmp, -1, -1, err, sizeof(err));
	if (rc < 0)
		return ctl_failed(rc) ? failed(o, "conn add: %s", err) : bad(o, "conn add: %s", err);
	put(o, "conn %s added on port %s\n", argv[2], tmp.port);
	return SDR_CTL_OK;
}

/* conn del refused with @p rc after @p gone of the connection's stripes were deleted. */
static int
del_refused(struct out *o, int rc, const char *err, unsigned int gone)
{
	if (gone)
		return failed(o, "conn del: %s (%u of its stripes deleted)", err, gone);
	return ctl_failed(rc) ? failed(o, "conn del: %s", err) : bad(o, "conn del: %s", err);
}

static int
conn_del(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256], err[256];
	unsigned int gone = 0;
	int i, rc;

	if (argc != 3)
		return bad(o, "conn del: expected exactly one NAME");
	i = ctl_find_conn(ctx, argv[2]);
	if (i < 0)
		return bad(o, "conn del: no connection '%s' (there are: %s)", argv[2],
			   conn_names(ctx, names, sizeof(names)));
	if (ctx->cfg.conns[i].stripe != 0)
		return bad(o, "conn del: '%s' is a stripe of a connection: delete the connection",
			   argv[2]);
	/* a striped connection: its other stripes first, so that one still busy leaves the
	 * connection there by its name, to be deleted again; once a stripe is gone the
	 * command has changed something, and a refusal after it is a failure (exit 1) */
	for (unsigned int k = 0; k < ctx->nconns; k++) {
		if (ctx->conns[k].ep == NULL || ctx->cfg.conns[k].stripe == 0 ||
		    !dp_config_conn_is(&ctx->cfg.conns[k], argv[2]))
			continue;
		rc = ctl_conn_delete(ctx, k, err, sizeof(err));
		if (rc != 0)
			return del_refused(o, rc, err, gone);
		gone++;
	}
	rc = ctl_conn_delete(ctx, (unsigned int)i, err, sizeof(err));
	if (rc != 0)
		return del_refused(o, rc, err, gone);
	put(o, "conn %s deleted\n", argv[2]);
	return SDR_CTL_OK;
}

static int
conn_set(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	struct dp_conn_cfg tmp;
	char err[512], names[256];
	int i, rc;

	if (argc < 5)
		return bad(o, "conn set: expected: conn set NAME key value [key value]...");
	i = ctl_find_conn(ctx, argv[2]);
	if (i < 0)
		return bad(o, "conn set: no connection '%s' (there are: %s)", argv[2],
			   conn_names(ctx, names, sizeof(names)));
	tmp = ctx->cfg.conns[i];
	if (dp_config_conn_words(&ctx->cfg, &tmp, argv[2], argc - 3, argv + 3, 0, err,
				 sizeof(err)) != 0)
		return bad(o, "%s", err);
	/* the endpoint is rebuilt from the new settings; on failure the old one stays */
	rc = ctl_conn_install(ctx, i, &tmp, -1, -1, err, sizeof(err));
	if (rc < 0)
		return ctl_failed(rc) ? failed(o, "conn set: %s", err) : bad(o, "conn set: %s", err);
	put(o, "conn %s updated\n", argv[2]);
	return SDR_CTL_OK;
}

/* @p s inside a JSON string: '"' and '\\' escaped (a device string is the operator's text;
 * control characters never get past the configuration's checks). */
static const char *
json_escape(const char *s, char *buf, size_t n)
{
	size_t o = 0;

	for (; *s != '\0' && o + 2 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\';
		buf[o++] = *s;
	}
	buf[o] = '\0';
	return buf;
}

/* ---- port, link, pipeline, stats ---- */

static int
port_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256];
	int only = -1, first = 1;

	if (argc > 3)
		return bad(o, "port show: unexpected '%s' (expected: port show [NAME])", argv[3]);
	if (argc == 3 && (only = find_port(ctx, argv[2])) < 0)
		return bad(o, "port show: no port '%s' (there are: %s)", argv[2],
			   port_names(ctx, names, sizeof(names)));
	if (json)
		put(o, "{\"ports\":[");
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];

		if (only >= 0 && (int)i != only)
			continue;
		if (json) {
			char dev[2 * sizeof(p->cfg->device)];

			put(o, "%s{\"name\":\"%s\",\"device\":\"%s\",\"port_id\":%u,\"mac\":\"%02x:%02x:"
			    "%02x:%02x:%02x:%02x\"", first ? "" : ",", p->cfg->name,
			    json_escape(p->cfg->device, dev, sizeof(dev)),
			    p->port_id, p->mac.addr_bytes[0], p->mac.addr_bytes[1],
			    p->mac.addr_bytes[2], p->mac.addr_bytes[3], p->mac.addr_bytes[4],
			    p->mac.addr_bytes[5]);
			for (int c = 0; c < DP_PORT_NCOUNTERS; c++)
				put(o, ",\"%s\":%" PRIu64, dp_port_counter_name((enum dp_port_counter)c),
				    dp_port_counter(p, c));
			for (int v = 0; v < ROCE_V_COUNT; v++)
				put(o, ",\"%s\":%" PRIu64, roce_verdict_name((enum roce_verdict)v),
				    dp_port_verdict(p, v));
			put(o, "}");
		} else {
			put(o, "port %s (%s, id %u, %02x:%02x:%02x:%02x:%02x:%02x)\n", p->cfg->name,
			    p->cfg->device, p->port_id, p->mac.addr_bytes[0], p->mac.addr_bytes[1],
			    p->mac.addr_bytes[2], p->mac.addr_bytes[3], p->mac.addr_bytes[4],
			    p->mac.addr_bytes[5]);
			put(o, " ");
			for (int c = 0; c < DP_PORT_NCOUNTERS; c++)
				put(o, " %s %" PRIu64, dp_port_counter_name((enum dp_port_counter)c),
				    dp_port_counter(p, c));
			put(o, "\n  verdicts:");
			for (int v = 0; v < ROCE_V_COUNT; v++)
				if (dp_port_verdict(p, v))
					put(o, " %s %" PRIu64, roce_verdict_name((enum roce_verdict)v),
					    dp_port_verdict(p, v));
			put(o, "\n");
		}
		first = 0;
	}
	if (json)
		put(o, "]}\n");
	return SDR_CTL_OK;
}

/* The counters of @p lc, as JSON members or text words. */
static void
link_counters(struct out *o, int json, const uint64_t *lc)
{
	for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
		put(o, json ? ",\"%s\":%" PRIu64 : " %s %" PRIu64,
		    link_emu_counter_name((enum link_emu_counter)c), lc[c]);
}

static int
link_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256], fmt[LINK_EMU_FMT_MAX];
	int only = -1, first = 1;

	if (argc > 3)
		return bad(o, "link show: unexpected '%s' (expected: link show [PORT])", argv[3]);
	if (argc == 3 && (only = find_port(ctx, argv[2])) < 0)
		return bad(o, "link show: no port '%s' (there are: %s)", argv[2],
			   port_names(ctx, names, sizeof(names)));
	if (json)
		put(o, "{\"links\":[");
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];
		uint64_t lc[LINK_EMU_NCOUNTERS];

		if (only >= 0 && (int)i != only)
			continue;
		if (p->link == NULL) {
			if (json)
				put(o, "%s{\"port\":\"%s\",\"emulator\":null}", first ? "" : ",",
				    p->cfg->name);
			else
				put(o, "port %s: no link emulator\n", p->cfg->name);
			first = 0;
			continue;
		}
		link_emu_format(link_emu_get_config(p->link), fmt, sizeof(fmt));
		dp_port_link_counters(p, lc);
		if (json) {
			put(o, "%s{\"port\":\"%s\",\"emulator\":\"%s\",\"queued\":%u", first ? "" : ",",
			    p->cfg->name, fmt, dp_port_link_queued(p));
			link_counters(o, 1, lc);
		} else {
			if (p->npaths > 1)	/* each path's words follow */
				put(o, "port %s: %u paths, by UDP source port\n ", p->cfg->name,
				    p->npaths);
			else
				put(o, "port %s: %s\n ", p->cfg->name, fmt);
			link_counters(o, 0, lc);
			put(o, "\n");
		}
		/* a link with paths: each path's words and counters */
		if (p->npaths > 1) {
			if (json)
				put(o, ",\"paths\":[");
			for (unsigned int k = 0; k < p->npaths; k++) {
				link_emu_format(link_emu_get_config(p->elink[0][k]), fmt, sizeof(fmt));
				dp_port_path_counters(p, (int)k, lc);
				if (json) {
					put(o, "%s{\"path\":%u,\"emulator\":\"%s\"", k ? "," : "", k + 1,
					    fmt);
					link_counters(o, 1, lc);
					put(o, "}");
				} else {
					put(o, "  path %u: %s\n   ", k + 1, fmt);
					link_counters(o, 0, lc);
					put(o, "\n");
				}
			}
			if (json)
				put(o, "]");
		}
		if (json)
			put(o, "}");
		first = 0;
	}
	if (json)
		put(o, "]}\n");
	return SDR_CTL_OK;
}

/* One connection's paths ([conn] paths), as text or a JSON object. */
static void
path_conn(struct dp_conn *c, int json, int first, struct out *o)
{
	static struct path_sel_decision last;	/* (one management thread) */
	const struct path_sel_cfg *pc = &sdr_ep_paths(c->ep)->cfg;
	struct path_sel_path ps[PATH_SEL_MAX_PATHS];
	struct dp_paths_rec rec[DP_PATHS_HIST];
	double fps[PATH_SEL_MAX_PATHS];
	uint64_t decisions;
	int n = ctl_paths_state(c, ps, fps, &last, &decisions, rec, DP_PATHS_HIST);
	char use[32], from[32], to[32];

	path_sel_mask_str(last.use_mask, use, sizeof(use));
	if (json)
		put(o, "%s{\"name\":\"%s\",\"paths\":%u,\"policy\":\"%s\",\"objective\":\"%s\","
		    "\"channels\":%u,\"qpns\":%u,\"period_s\":%.3f,\"fail_s\":%.3f,\"path_rate_bps\":%.0f,"
		    "\"decisions\":%" PRIu64 ",\"path\":[", first ? "" : ",", c->cfg->name,
		    pc->npaths, path_policy_name(pc->policy), path_objective_name(pc->objective),
		    pc->channels, pc->nqp, c->cfg->path_period_ns / 1e9, pc->fail_ns / 1e9,
		    pc->path_rate_bps, decisions);
	else
		put(o, "conn %s: %u paths, policy %s, objective %s, %u channels (%u data QPNs), "
		    "decided every "
		    "%.3g s (%" PRIu64 " so far), failed after %.3g s without an arrival\n"
		    "  path   qpns        frames  frames/s   rtt ms    judged      loss  (95 %% "
		    "interval)      state\n",
		    c->cfg->name, pc->npaths, path_policy_name(pc->policy),
		    path_objective_name(pc->objective), pc->channels, pc->nqp,
		    c->cfg->path_period_ns / 1e9, decisions, pc->fail_ns / 1e9);
	for (unsigned int k = 0; k < pc->npaths; k++) {
		struct sdr_auto_estimate e;
		const char *state = ps[k].failed ? "failed" : ps[k].nqp == 0 ? "unused" : "ok";

		sdr_auto_estimate(&ps[k].est, &e);
		if (json)
			put(o, "%s{\"path\":%u,\"qpns\":%u,\"frames\":%" PRIu64 ",\"frames_per_s\":"
			    "%.0f,\"rtt_s\":%.6g,\"rtt_samples\":%" PRIu64 ",\"judged\":%" PRIu64
			    ",\"loss\":%.6g,\"loss_lo\":%.6g,\"loss_hi\":%.6g,\"state\":\"%s\"}",
			    k ? "," : "", k + 1, ps[k].nqp, ps[k].frames, fps[k],
			    ps[k].rtt_min_ns * 1e-9, ps[k].rtt.rtt_samples, ps[k].reported, e.p, e.lo,
			    e.hi, state);
		else if (ps[k].rtt_min_ns)
			put(o, "  %4u %6u %13" PRIu64 " %9.0f %8.2f %9" PRIu64 " %9.2e  [%.1e, %.1e]  "
			    "%s\n", k + 1, ps[k].nqp, ps[k].frames, fps[k], ps[k].rtt_min_ns * 1e-6,
			    ps[k].reported, e.p, e.lo, e.hi, state);
		else		/* too few round trips timed yet */
			put(o, "  %4u %6u %13" PRIu64 " %9.0f %8s %9" PRIu64 " %9.2e  [%.1e, %.1e]  "
			    "%s\n", k + 1, ps[k].nqp, ps[k].frames, fps[k], "-", ps[k].reported, e.p,
			    e.lo, e.hi, state);
	}
	if (json)
		put(o, "],\"last\":{\"verdict\":\"%s\",\"use\":\"%s\",\"current_ms\":%.4f,"
		    "\"best_ms\":%.4f,\"why\":\"%s\"},\"moves_total\":%u,\"moves\":[",
		    decisions ? path_sel_verdict_name(last.verdict) : "none", use, last.cur_s * 1e3,
		    last.best_s * 1e3, last.why, c->pathd.moves);
	else
		put(o, "  last decision: %s\n  moves: %u%s\n", decisions ? last.why : "none yet",
		    c->pathd.moves, c->pathd.moves > (uint32_t)n ? " (the last ones below)" : "");
	for (int i = 0; i < n; i++) {
		path_sel_mask_str(rec[i].from_mask, from, sizeof(from));
		path_sel_mask_str(rec[i].to_mask, to, sizeof(to));
		if (json)
			put(o, "%s{\"t_s\":%.3f,\"from\":\"%s\",\"to\":\"%s\",\"why\":\"%s\"}",
			    i ? "," : "", rec[i].t_ns / 1e9, from, to, rec[i].why);
		else
			put(o, "    at %.3f s: paths %s -> %s: %s\n", rec[i].t_ns / 1e9, from, to,
			    rec[i].why);
	}
	if (json)
		put(o, "]}");
}

static int
path_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256];
	int only = -1, first = 1;

	if (argc > 3)
		return bad(o, "path show: unexpected '%s' (expected: path show [CONN])", argv[3]);
	if (argc == 3 && (only = ctl_find_conn(ctx, argv[2])) < 0)
		return bad(o, "path show: no connection '%s' (there are: %s)", argv[2],
			   conn_names(ctx, names, sizeof(names)));
	if (only >= 0 && sdr_ep_paths(ctx->conns[only].ep) == NULL)
		return bad(o, "path show: connection '%s' chooses no paths (one path, or it only "
			   "receives: its peer chooses)", argv[2]);
	if (json)
		put(o, "{\"conns\":[");
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		struct dp_conn *c = &ctx->conns[i];

		if ((only >= 0 && (int)i != only) || c->ep == NULL || sdr_ep_paths(c->ep) == NULL)
			continue;
		path_conn(c, json, first, o);
		first = 0;
	}
	if (json)
		put(o, "]}\n");
	else if (first)
		put(o, "no connection has several paths ([conn] paths)\n");
	return SDR_CTL_OK;
}

/*
 * Engine (j->engine, on its lcore): its emulator of port j->conn, path j->u32, gets config
 * j->p, or becomes emulator j->q. A port's first link is put in place on engine 0 last
 * (link_set()): p->link published means every engine has its copy (pipeline.c link_of()).
 */
static int
job_link_set(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct dp_port *p = &ctx->ports[j->conn];
	struct link_emu **le = &p->elink[j->engine][j->u32];

	if (*le == NULL) {
		*le = j->q;
		if (j->engine == 0 && j->u32 == 0) {
			p->npaths = 1;
			__atomic_store_n(&p->link, j->q, __ATOMIC_RELEASE);
		}
		j->q = NULL;
		return 0;
	}
	return link_emu_set_config(*le, j->p);
}

static int
link_set(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256], fmt[LINK_EMU_FMT_MAX];
	struct ctl_job j = { .fn = job_link_set };
	unsigned int k0 = 0, k1, w0 = 3;
	struct link_emu_config c[LINK_EMU_MAX_PATHS];
	struct dp_port *p;
	int i, rc = 0, badw = -1;

	if (argc < 4)
		return bad(o, "link set: expected: link set PORT [path N] delay T|rate R|loss P|burst ...");
	i = find_port(ctx, argv[2]);
	if (i < 0)
		return bad(o, "link set: no port '%s' (there are: %s)", argv[2],
			   port_names(ctx, names, sizeof(names)));
	p = &ctx->ports[i];
	k1 = p->link ? p->npaths : 1;
	if (strcmp(argv[3], "path") == 0) {
		char *end;
		unsigned long n = argc > 4 ? strtoul(argv[4], &end, 10) : 0;

		if (argc < 6 || *end || n < 1 || n > k1)
			return bad(o, "link set: path '%s': the link of port %s has paths 1 .. %u, "
				   "and words must follow", argc > 4 ? argv[4] : "", p->cfg->name, k1);
		k0 = (unsigned int)n - 1;
		k1 = k0 + 1;
		w0 = 5;
	}
	/* the words on each path they are for, as it is now */
	for (unsigned int k = k0; k < k1; k++) {
		if (p->link)
			c[k] = *link_emu_get_config(p->elink[0][k]);
		else
			link_emu_config_default(&c[k]);
		rc = link_emu_parse(&c[k], argc - (int)w0, (const char *const *)(argv + w0), &badw);
		if (rc != 0)
			return bad(o, "link set: '%s': %s", badw >= 0 && badw < argc - (int)w0 ?
				   argv[w0 + badw] : argv[w0], link_emu_strerror(rc));
	}
	j.conn = (unsigned int)i;
	/* each engine's copy on its own lcore, its streams its own as at start (ports.c);
	 * engine 0's last, as it publishes a new link */
	for (unsigned int k = k0; k < k1 && rc == 0; k++)
		for (unsigned int t = 0, make = p->link == NULL; t < ctx->cfg.engines; t++) {
			unsigned int e = (t + 1) % ctx->cfg.engines;
			struct link_emu_config ce = c[k];

			ce.salt = dp_port_link_salt(p->cfg, e, k);
			j.p = &ce;
			j.engine = e;
			j.u32 = k;
			j.q = NULL;
			if (make) {
				/* made here: the engine only puts it in place */
				j.q = link_emu_create(&ce, ctx->pool_mbufs);
				if (j.q == NULL)
					return failed(o, "link set: cannot create an emulator on "
						      "port %s", p->cfg->name);
			}
			rc = ctl_engine_call(ctx, &j);
			link_emu_destroy(j.q);
			if (rc != 0)
				break;
		}
	if (rc == -ESHUTDOWN)
		return failed(o, "link set: the dataplane is stopping");
	if (rc != 0)
		return bad(o, "link set: refused by the emulator");
	if (w0 == 5)
		put(o, "port %s path %u: %s\n", p->cfg->name, k0 + 1,
		    link_emu_format(&c[k0], fmt, sizeof(fmt)));
	else
		put(o, "port %s: %s\n", p->cfg->name, link_emu_format(&c[k0], fmt, sizeof(fmt)));
	return SDR_CTL_OK;
}

/*
 * Split pipeline: what each receive worker did — its lcore, packets received and the cost
 * of each in rx + parse/ICRC (its own slot of the stage table).
 */
static void
rx_workers_show(struct dp_ctx *ctx, int json, struct out *o)
{
	if (ctx->cfg.mode != DP_PIPE_SPLIT)
		return;
	put(o, json ? ",\"rx_workers\":[" : "%-9s %6s %14s %16s\n", "rx_worker", "lcore",
	    "packets", "cycles/pkt");
	for (unsigned int k = 0; k < ctx->cfg.rx_lcores; k++) {
		struct dp_stage_stats rx = dp_stage_sum(ctx, DP_STAGE_RX, (int)(1 + k));
		struct dp_stage_stats pa = dp_stage_sum(ctx, DP_STAGE_PARSE, (int)(1 + k));
		double cpp = rx.pkts ? (double)(rx.busy_cycles + pa.busy_cycles) /
				       (double)rx.pkts : 0.0;

		if (json)
			put(o, "%s{\"worker\":%u,\"lcore\":%u,\"packets\":%" PRIu64
			    ",\"cycles_per_packet\":%.1f}", k ? "," : "", k, ctx->rx_lcore_id[k],
			    rx.pkts, cpp);
		else
			put(o, "%-9u %6u %14" PRIu64 " %16.1f\n", k, ctx->rx_lcore_id[k], rx.pkts,
			    cpp);
	}
	if (json)
		put(o, "]");
}

/* How each port sends data frames: zero-copy (and how often it had to copy), or why not. */
static void
send_paths_show(struct dp_ctx *ctx, int json, struct out *o)
{
	if (json)
		put(o, ",\"send\":[");
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];
		char buf[160];
		const char *why = p->zero_copy ? "zero-copy" :
				  p->cfg->zero_copy == DP_ZC_NO ? "by copy: zero_copy = no" :
				  !p->multi_seg ? "by copy: the device cannot send multi-segment frames" :
				  "by copy: zero_copy not set (off on ring: ports and PCI devices)";

		if (!p->zero_copy && p->copy_why != NULL) {
			snprintf(buf, sizeof(buf), "by copy: %s", p->copy_why);
			why = buf;
		}

		if (json)
			put(o, "%s{\"port\":\"%s\",\"zero_copy\":%s,\"how\":\"%s\","
			    "\"zero_copy_frames\":%" PRIu64 ",\"fallback_copies\":%" PRIu64
			    ",\"steering\":\"%s\"}",
			    i ? "," : "", p->cfg->name, p->zero_copy ? "true" : "false", why,
			    dp_port_counter(p, DP_PORT_TX_ZERO_COPY),
			    dp_port_counter(p, DP_PORT_TX_ZC_COPIED),
			    p->cfg->steering == DP_STEER_RSS ? "rss" : "queue");
		else
			put(o, "port %s sends data frames %s (%" PRIu64 " frames zero-copy, %" PRIu64
			    " copied for want of mbufs)%s\n", p->cfg->name, why,
			    dp_port_counter(p, DP_PORT_TX_ZERO_COPY),
			    dp_port_counter(p, DP_PORT_TX_ZC_COPIED),
			    p->cfg->steering == DP_STEER_RSS ?
			    ", source ports steered for the peer's RSS" : "");
	}
	if (json)
		put(o, "]");
}

/*
 * The buffers mapped for the DMA of the ports that send zero-copy (dma.h): the areas and
 * bytes registered now (and EAL's own count of its external memory), the mappings made
 * and refused. Nothing where no port needs them.
 */
static void
dma_show(struct dp_ctx *ctx, int json, struct out *o)
{
	char js[1024];

	if (!dp_dma_active(ctx))
		return;
	dp_dma_json(ctx, js, sizeof(js));
	if (json) {
		put(o, ",\"dma\":%s", js);
		return;
	}
	put(o, "buffers mapped for DMA (ports");
	for (unsigned int i = 0; i < ctx->nports; i++)
		if (dp_dma_port(ctx, i))
			put(o, " %s", ctx->ports[i].cfg->name);
	put(o, "): %u area%s, %" PRIu64 " bytes, %" PRIu64 " mappings made, %" PRIu64
	    " refused\n", ctx->dma.nareas, ctx->dma.nareas == 1 ? "" : "s", ctx->dma.bytes,
	    ctx->dma.maps, ctx->dma.map_failures);
}

/*
 * The mbuf pools: how many mbufs, how many free now, and the handler that hands them out;
 * with engines, added up over their pools (one per engine).
 */
static void
pools_show(struct dp_ctx *ctx, int json, struct out *o)
{
	struct rte_mempool *const *pools[2] = { ctx->pool, ctx->zc_pool };
	static const char *const what[2] = { "mbufs", "zero-copy attach mbufs" };
	static const char *const key[2] = { "mbufs", "zc_mbufs" };

	for (int i = 0; i < 2; i++) {
		unsigned int count = 0, avail = 0;
		const char *handler;

		if (pools[i][0] == NULL)
			continue;
		handler = sdr_pool_handler(pools[i][0]);
		for (unsigned int e = 0; e < ctx->npools; e++) {
			count += pools[i][e]->size;
			avail += rte_mempool_avail_count(pools[i][e]);
			/* (each pool takes the first handler that works: short of memory, they
			 * may differ) */
			if (strcmp(sdr_pool_handler(pools[i][e]), handler) != 0)
				handler = "mixed";
		}
		if (json && i == 0)	/* (and what a NIC's RX rings may take of each) */
			put(o, ",\"%s\":{\"count\":%u,\"free\":%u,\"handler\":\"%s\","
			    "\"pools\":%u,\"rx_desc\":%u}", key[i], count, avail, handler,
			    ctx->npools, ctx->rx_desc);
		else if (json)
			put(o, ",\"%s\":{\"count\":%u,\"free\":%u,\"handler\":\"%s\","
			    "\"pools\":%u}", key[i], count, avail, handler, ctx->npools);
		else if (ctx->npools > 1)
			put(o, "%s: %u, %u free, in %u pools of one engine each, handed out by "
			    "the %s handler\n", what[i], count, avail, ctx->npools, handler);
		else
			put(o, "%s: %u, %u free, handed out by the %s handler\n", what[i], count,
			    avail, handler);
	}
}

/*
 * mode = engines: a row per engine — its lcore, its connections, packets, cycles per packet,
 * the free mbufs of its pool.
 */
static void
engines_show(struct dp_ctx *ctx, int json, struct out *o)
{
	if (ctx->cfg.mode != DP_PIPE_ENGINES)
		return;
	put(o, json ? ",\"engines\":[" : "%-7s %6s %14s %14s %12s %11s  %s\n", "engine", "lcore",
	    "rx packets", "tx packets", "cycles/pkt", "mbufs free", "connections");
	for (unsigned int e = 0; e < ctx->cfg.engines; e++) {
		struct dp_stage_stats rx = dp_stage_sum(ctx, DP_STAGE_RX, (int)e);
		struct dp_stage_stats out = dp_stage_sum(ctx, DP_STAGE_OUTPUT, (int)e);
		uint64_t busy = 0, pkts = rx.pkts + out.pkts;
		char conns[256] = "";
		size_t cl = 0;

		for (int st = 0; st < DP_NSTAGES; st++)
			busy += dp_stage_sum(ctx, (enum dp_stage)st, (int)e).busy_cycles;
		for (unsigned int i = 0; i < ctx->nconns && cl + 2 < sizeof(conns); i++)
			if (ctx->conns[i].ep && ctx->conns[i].engine == e)
				cl += (size_t)snprintf(conns + cl, sizeof(conns) - cl, "%s%s",
						       cl ? "," : "", ctx->conns[i].cfg->name);
		/* cycles per packet handled, received or sent */
		if (json)
			put(o, "%s{\"engine\":%u,\"lcore\":%u,\"rx_packets\":%" PRIu64
			    ",\"tx_packets\":%" PRIu64 ",\"cycles_per_packet\":%.1f,"
			    "\"mbufs_free\":%u,\"conns\":\"%s\"}", e ? "," : "", e,
			    ctx->engine_lcore[e], rx.pkts, out.pkts,
			    pkts ? (double)busy / (double)pkts : 0.0,
			    rte_mempool_avail_count(ctx->pool[e]), conns);
		else
			put(o, "%-7u %6u %14" PRIu64 " %14" PRIu64 " %12.1f %11u  %s\n", e,
			    ctx->engine_lcore[e], rx.pkts, out.pkts,
			    pkts ? (double)busy / (double)pkts : 0.0,
			    rte_mempool_avail_count(ctx->pool[e]), conns);
	}
	if (json)
		put(o, "]");
}

static int
pipeline_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	if (argc > 2)
		return bad(o, "pipeline show: unexpected '%s'", argv[2]);
	if (json) {
		put(o, "{\"mode\":\"%s\",\"lcores\":%u,\"rx_lcores\":%u,\"fec\":\"%s\","
		    "\"fec_jobs_out\":%" PRIu64 ",\"loops\":%" PRIu64 ",\"idle_sleeps\":%" PRIu64
		    ",\"tsc_hz\":%" PRIu64, ctx->cfg.mode == DP_PIPE_SPLIT ? "split" :
		    ctx->cfg.mode == DP_PIPE_ENGINES ? "engines" : "rtc", rte_lcore_count(),
		    ctx->cfg.mode == DP_PIPE_SPLIT ? ctx->cfg.rx_lcores : 0,
		    ctx->cfg.fec_lcore ? "lcore" : "inline", ctx->fec_out_jobs, ctx->loops,
		    ctx->idle_sleeps, ctx->tsc_hz);
		rx_workers_show(ctx, json, o);
		engines_show(ctx, json, o);
		send_paths_show(ctx, json, o);
		dma_show(ctx, json, o);
		pools_show(ctx, json, o);
		put(o, ",\"stages\":[");
		for (int s = 0; s < DP_NSTAGES; s++) {
			struct dp_stage_stats sum = dp_stage_sum(ctx, (enum dp_stage)s, -1);
			const struct dp_stage_stats *st = &sum;

			put(o, "%s{\"stage\":\"%s\",\"calls\":%" PRIu64 ",\"packets\":%" PRIu64
			    ",\"cycles\":%" PRIu64 ",\"busy_cycles\":%" PRIu64
			    ",\"cycles_per_packet\":%.1f}", s ? "," : "",
			    dp_stage_name((enum dp_stage)s), st->calls, st->pkts, st->cycles,
			    st->busy_cycles,
			    st->pkts ? (double)st->busy_cycles / (double)st->pkts : 0.0);
		}
		put(o, "]}\n");
		return SDR_CTL_OK;
	}
	put(o, "pipeline %s on %u lcores", ctx->cfg.mode == DP_PIPE_SPLIT ? "split" :
	    ctx->cfg.mode == DP_PIPE_ENGINES ? "engines" : "rtc", rte_lcore_count());
	if (ctx->cfg.mode == DP_PIPE_ENGINES)
		put(o, " (%u engine%s)", ctx->cfg.engines, ctx->cfg.engines > 1 ? "s" : "");
	if (ctx->cfg.mode == DP_PIPE_SPLIT)
		put(o, " (%u receive worker%s)", ctx->cfg.rx_lcores,
		    ctx->cfg.rx_lcores > 1 ? "s" : "");
	put(o, ", %" PRIu64 " loops, %" PRIu64 " idle sleeps, fec %s\n", ctx->loops,
	    ctx->idle_sleeps, ctx->cfg.fec_lcore ? "on its own lcore (jobs in the fec_worker "
	    "row)" : "inline");
	put(o, "%-24s %14s %14s %16s %12s %10s %6s\n", "stage", "calls", "packets", "cycles",
	    "cycles/pkt", "pkts/call", "idle%");
	for (int s = 0; s < DP_NSTAGES; s++) {
		struct dp_stage_stats sum = dp_stage_sum(ctx, (enum dp_stage)s, -1);
		const struct dp_stage_stats *st = &sum;

		put(o, "%-24s %14" PRIu64 " %14" PRIu64 " %16" PRIu64 " %12.1f %10.2f %6.1f\n",
		    dp_stage_name((enum dp_stage)s), st->calls, st->pkts, st->cycles,
		    st->pkts ? (double)st->busy_cycles / (double)st->pkts : 0.0,
		    st->calls ? (double)st->pkts / (double)st->calls : 0.0,
		    st->cycles ? 100.0 * (double)(st->cycles - st->busy_cycles) /
				 (double)st->cycles : 0.0);
	}
#if !defined(RTE_ARCH_X86)
	/* on x86 rte_get_tsc_cycles() counts CPU cycles; elsewhere (arm64: the generic
	 * timer, cntvct_el0) a fixed-rate timer, often far slower than the core */
	put(o, "cycles: ticks of rte_get_tsc_cycles() at %.1f MHz (the timer DPDK reads on "
	    "this CPU, not its core clock: cycles/pkt x core MHz / %.1f = core cycles/pkt)\n",
	    (double)ctx->tsc_hz * 1e-6, (double)ctx->tsc_hz * 1e-6);
#endif
	rx_workers_show(ctx, json, o);
	engines_show(ctx, json, o);
	send_paths_show(ctx, json, o);
	dma_show(ctx, json, o);
	pools_show(ctx, json, o);
	return SDR_CTL_OK;
}

/* ---- clients ---- */

static int
client_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	const struct dp_ctl *ctl = ctx->ctl;
	int n = 0;

	if (argc > 2)
		return bad(o, "client show: unexpected '%s'", argv[2]);
	if (json)
		put(o, "[");
	else
		put(o, "%-5s %-6s %-8s %-6s %-8s %6s %7s %10s  %s\n", "slot", "kind", "pid", "uid",
		    "state", "ops", "waiting", "arena", "connections");
	for (unsigned int ci = 0; ci < SDR_SHM_MAX_CLIENTS; ci++) {
		const struct ctl_slot *s = &ctl->slots[ci];
		uint64_t counters[SDK_C_NCOUNTERS];
		const uint64_t *cnt = NULL;
		char conns[256] = "", arena[32];
		uint32_t ops = 0, waiting = 0;
		size_t cl = 0;

		if (s->state != CTL_ACTIVE && s->state != CTL_LEAVING)
			continue;
		if (s->kind == SDR_CLIENT_SDK) {
			ctl_sdk_client_stats(ctx, ci, &ops, &waiting, counters);
			cnt = counters;
		}
		for (unsigned int i = 0; i < ctx->nconns && cl + 2 < sizeof(conns); i++)
			if (ctx->conns[i].ep && ctx->conns[i].owner == (int)ci)
				cl += (size_t)snprintf(conns + cl, sizeof(conns) - cl, "%s%s",
						       cl ? "," : "", ctx->conns[i].cfg->name);
		if (json) {
			put(o, "%s{\"slot\":%u,\"kind\":\"%s\",\"pid\":%d,\"uid\":%u,"
			    "\"state\":\"%s\",\"ops\":%u,\"waiting\":%u,\"arena_bytes\":%" PRIu64
			    ",\"conns\":\"%s\"", n ? "," : "", ci,
			    s->kind == SDR_CLIENT_SDK ? "sdk" : "admin", (int)s->pid,
			    (unsigned int)s->uid, s->state == CTL_ACTIVE ? "active" : "leaving", ops,
			    waiting, s->L.arena_len, conns);
			for (int k = 0; cnt != NULL && k < SDK_C_NCOUNTERS; k++)
				put(o, ",\"%s\":%" PRIu64, ctl_sdk_counter_name(k), cnt[k]);
			put(o, "}");
		} else {
			put(o, "%-5u %-6s %-8d %-6u %-8s %6u %7u %10s  %s\n", ci,
			    s->kind == SDR_CLIENT_SDK ? "sdk" : "admin", (int)s->pid,
			    (unsigned int)s->uid, s->state == CTL_ACTIVE ? "active" : "leaving", ops,
			    waiting, s->kind == SDR_CLIENT_SDK ?
			    units_fmt_size(s->L.arena_len, arena, sizeof(arena)) : "-",
			    conns[0] ? conns : "-");
		}
		n++;
	}
	if (json)
		put(o, "]\n");
	return SDR_CTL_OK;
}

static int
help(struct out *o)
{
	put(o, "commands:\n"
	       "  conn show [NAME]                     connections, or one in detail\n"
	       "  conn add NAME key value ...          add a connection (keys of [conn])\n"
	       "  conn set NAME key value ...          change an idle connection\n"
	       "  conn del NAME                        delete an idle connection\n"
	       "  port show [NAME]                     ports, counters, parser verdicts\n"
	       "  link show [PORT]                     link emulators and their counters\n"
	       "  link set PORT [path N] WORDS         delay T rate R loss P burst ... reorder\n"
	       "                                       P,T dup P corrupt P seed N off\n"
	       "  path show [CONN]                     paths of connections: estimates, moves\n"
	       "  pipeline show                        stages, lcores, cycles per packet\n"
	       "  client show                          attached sdrctl and SDK clients\n"
	       "  stats [--watch [SECONDS]]            counters (read from shared memory)\n"
	       "  help, quit\n");
	return SDR_CTL_OK;
}

typedef int (*cmd_fn)(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o);

/* The grammar: a first and a second word, and what runs them. */
static const struct {
	const char *w0, *w1;
	cmd_fn fn;
} cmds[] = {
	{ "conn", "show", conn_show },
	{ "conn", "add", conn_add },
	{ "conn", "set", conn_set },
	{ "conn", "del", conn_del },
	{ "port", "show", port_show },
	{ "link", "show", link_show },
	{ "link", "set", link_set },
	{ "path", "show", path_show },
	{ "pipeline", "show", pipeline_show },
	{ "client", "show", client_show },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static int
exec_words(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	const char *w0 = argv[0], *w1 = argc > 1 ? argv[1] : "";
	char expected[128];
	size_t n = 0, e = 0;

	if (strcmp(w0, "help") == 0)
		return help(o);
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(w0, cmds[i].w0) != 0)
			continue;
		if (strcmp(w1, cmds[i].w1) == 0)
			return cmds[i].fn(ctx, argc, argv, json, o);
		n++;
	}
	if (n == 0)
		return bad(o, "unknown command '%s' (expected conn, port, link, path, pipeline, "
			   "client, stats or help)", w0);
	/* "expected show, add, set or del": the second words of the first */
	for (size_t i = 0, k = 0; i < NCMDS; i++)
		if (strcmp(w0, cmds[i].w0) == 0)
			e += (size_t)snprintf(expected + e, sizeof(expected) - e, "%s%s",
					      k++ == 0 ? "" : k == n ? " or " : ", ", cmds[i].w1);
	return bad(o, "%s: unknown '%s' (expected %s)", w0, w1, expected);
}

int
ctl_cli_words(char *buf, char **argv, int max, char *err, size_t errlen)
{
	char *save = NULL;
	int argc = 0;

	for (const char *c = buf; *c; c++) {
		unsigned char u = (unsigned char)*c;	/* char is unsigned on arm64 */

		if ((u < 0x20 && u != '\t') || u >= 0x7f) {
			snprintf(err, errlen, "byte 0x%02x at column %d: commands are printable ASCII",
				 u, (int)(c - buf) + 1);
			return -1;
		}
	}
	for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == max) {
			snprintf(err, errlen, "more than %d words", max);
			return -1;
		}
		argv[argc++] = w;
	}
	return argc;
}

int
ctl_cli_exec(struct dp_ctx *ctx, const char *line, int json, char *outbuf, size_t outlen)
{
	char buf[SDR_RPC_TEXT_MAX], *argv[MAX_WORDS], err[128];
	struct out o = { .buf = outbuf, .cap = outlen, .len = 0 };
	int argc, rc;

	outbuf[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", line);
	argc = ctl_cli_words(buf, argv, MAX_WORDS, err, sizeof(err));
	if (argc < 0)
		return bad(&o, "%s", err);
	if (argc == 0)
		return bad(&o, "empty command (try 'help')");
	rc = exec_words(ctx, argc, argv, json, &o);
	if (o.len < o.cap)
		outbuf[o.len] = '\0';
	return rc;
}
