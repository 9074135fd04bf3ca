/* SPDX-License-Identifier: BSD-3-Clause */
/* Control segment service: sdrctl commands, SDK queues, stats snapshot, leases. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "control.h"
#include "dp.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_tx.h"
#include "units.h"

#define MAX_WORDS 96
#define MAX_OPS (SDR_SHM_SDK_CLIENTS * SDR_SHM_QUEUE_DEPTH)

/* An SDK request in flight; its index is the endpoint cookie. */
struct sdk_op {
	uint8_t used;
	uint8_t client;
	uint8_t op;		/* SDR_SDK_SEND or SDR_SDK_RECV */
	uint8_t done;		/* receive completed, waiting for RECV_DONE */
	uint8_t orphan;		/* its client is gone: drop the completion */
	uint8_t stream;		/* a streamed send: st is its endpoint handle */
	uint16_t conn;
	uint32_t slot;
	uint64_t cookie;
	struct sdr_ep_stream st;
};

static struct sdk_op ops[MAX_OPS];
static uint32_t free_ops[MAX_OPS];
static uint32_t nfree_ops;
static uint32_t client_ops[SDR_SHM_MAX_CLIENTS];	/* ops in flight per client */
static uint32_t conn_ops[DP_MAX_CONNS];			/* ops in flight per connection */
/*
 * Requests a connection had no room for yet (its in-flight limit), per client, in order:
 * posts must keep their order (the k-th message lands in the k-th receive), but a client's
 * "recv complete" must overtake them, since it is what frees the room.
 */
struct deferred {
	struct sdr_sdk_req r[SDR_SHM_QUEUE_DEPTH];
	uint32_t head;
	uint32_t n;
};
static struct deferred deferred[SDR_SHM_MAX_CLIENTS];
static uint64_t claiming_since[SDR_SHM_MAX_CLIENTS];	/* first sweep that saw it claiming */

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

static int __attribute__((format(printf, 2, 3)))
bad(struct out *o, const char *fmt, ...)
{
	va_list ap;

	o->len = 0;
	va_start(ap, fmt);
	vsnprintf(o->buf, o->cap, fmt, ap);
	va_end(ap);
	o->len = strlen(o->buf);
	return SDR_CTL_BAD_INPUT;
}

/* ---- lookups ---- */

static int
find_conn(const struct dp_ctx *ctx, const char *name)
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
	char scheme[SDR_SCHEME_NAME_MAX + 8], ip[64], rate[32], rtt[32];

	sdr_scheme_format(&cc->ep.rel.scheme, scheme, sizeof(scheme));
	ip_str(cc->peer_ip_version, cc->peer_ip, ip, sizeof(ip));
	if (json) {
		put(o, "%s{\"name\":\"%s\",\"port\":\"%s\",\"scheme\":\"%s\",\"scheme_auto\":%s,"
		    "\"peer_ip\":\"%s\","
		    "\"local_qpn\":%u,\"remote_qpn\":%u,\"mtu\":%u,\"chunk\":%u,\"channels\":%u,"
		    "\"generations\":%u,\"max_msg\":%" PRIu64 ",\"inflight\":%u,\"dir\":\"%s\","
		    "\"rtt_s\":%.9g,\"rate_bps\":%.6g,\"owner\":%d,\"traffic\":%s,\"busy\":%s}",
		    first ? "" : ",", cc->name, cc->port, scheme, cc->scheme_auto ? "true" : "false",
		    ip, cc->ep.attr.local_qpn,
		    cc->ep.attr.remote_qpn, cc->ep.attr.mtu, cc->ep.attr.chunk_size,
		    cc->ep.attr.channels, cc->ep.attr.generations, cc->ep.attr.max_msg_size,
		    cc->ep.attr.max_inflight, dir_name(cc->ep.attr.dir),
		    (double)cc->ep.rel.rtt_ns * 1e-9, cc->ep.rel.rate_bps, c->owner,
		    c->traffic ? "true" : "false", sdr_ep_busy(c->ep) ? "true" : "false");
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
counters(struct out *o, int json, const char *title, const uint64_t *v, int n,
	 const char *(*name)(int), int *first)
{
	if (json) {
		put(o, "%s\"%s\":{", *first ? "" : ",", title);
		for (int i = 0; i < n; i++)
			put(o, "%s\"%s\":%" PRIu64, i ? "," : "", name(i), v[i]);
		put(o, "}");
		*first = 0;
		return;
	}
	put(o, "%s:", title);
	for (int i = 0; i < n; i++)
		if (v[i])
			put(o, " %s %" PRIu64, name(i), v[i]);
	put(o, "\n");
}

static const char *ep_name(int i) { return sdr_ep_counter_name((enum sdr_ep_counter)i); }
static const char *rx_name(int i) { return sdr_rx_counter_name((enum sdr_rx_counter)i); }
static const char *tx_name(int i) { return sdr_tx_counter_name((enum sdr_tx_counter)i); }
static const char *rtx_name(int i) { return rel_tx_counter_name((enum rel_tx_counter)i); }
static const char *rrx_name(int i) { return rel_rx_counter_name((enum rel_rx_counter)i); }

static int
conn_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	char names[256];
	int first = 1;

	if (argc > 3)
		return bad(o, "conn show: unexpected '%s' (expected: conn show [NAME])", argv[3]);
	if (argc == 3) {
		int i = find_conn(ctx, argv[2]);
		const struct dp_conn *c;

		if (i < 0)
			return bad(o, "conn show: no connection '%s' (there are: %s)", argv[2],
				   conn_names(ctx, names, sizeof(names)));
		c = &ctx->conns[i];
		if (json) {
			put(o, "{\"conn\":");
			conn_line(ctx, (unsigned int)i, 1, o, 1);
			put(o, ",\"counters\":{");
		} else {
			put(o, "%-12s %-6s %-18s %-16s %-8s %-8s %5s %6s %4s %8s %6s %s\n", "name",
			    "port", "scheme", "peer", "lqpn", "rqpn", "mtu", "chunkK", "dir", "rtt",
			    "rate", "use");
			conn_line(ctx, (unsigned int)i, 0, o, 1);
		}
		counters(o, json, "endpoint", sdr_ep_counters(c->ep), SDR_EP_NCOUNTERS, ep_name, &first);
		counters(o, json, "receive", sdr_ep_rx_counters(c->ep), SDR_RX_NCOUNTERS, rx_name,
			 &first);
		counters(o, json, "send", sdr_ep_tx_counters(c->ep), SDR_TX_NCOUNTERS, tx_name, &first);
		counters(o, json, "reliability_tx", sdr_ep_rel_tx_counters(c->ep), REL_TX_NCOUNTERS,
			 rtx_name, &first);
		counters(o, json, "reliability_rx", sdr_ep_rel_rx_counters(c->ep), REL_RX_NCOUNTERS,
			 rrx_name, &first);
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

static int
conn_add(struct dp_ctx *ctx, int argc, char **argv, struct out *o)
{
	struct dp_conn_cfg tmp;
	char err[512];
	unsigned int slot = ctx->nconns;

	if (argc < 3)
		return bad(o, "conn add: missing NAME (expected: conn add NAME port P peer-ip IP "
			   "local-qpn N remote-qpn N [key value]...)");
	if (find_conn(ctx, argv[2]) >= 0)
		return bad(o, "conn add: a connection '%s' exists already", argv[2]);
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].ep == NULL) {
			slot = i;
			break;
		}
	if (slot >= DP_MAX_CONNS)
		return bad(o, "conn add: %d connections already", DP_MAX_CONNS);
	if (dp_config_conn_words(&ctx->cfg, &tmp, argv[2], argc - 3, argv + 3, 1, err,
				 sizeof(err)) != 0)
		return bad(o, "%s", err);
	ctx->cfg.conns[slot] = tmp;
	if (slot >= ctx->cfg.nconns)
		ctx->cfg.nconns = slot + 1;
	if (dp_conn_start(ctx, slot, err, sizeof(err)) != 0) {
		memset(&ctx->cfg.conns[slot], 0, sizeof(tmp));
		return bad(o, "%s", err);
	}
	put(o, "conn %s added on port %s\n", argv[2], tmp.port);
	return SDR_CTL_OK;
}

static int
conn_idle(struct dp_ctx *ctx, int i, const char *verb, struct out *o)
{
	const struct dp_conn *c = &ctx->conns[i];

	if (c->traffic != NULL || c->owner >= 0 || sdr_ep_busy(c->ep))
		return bad(o, "conn %s: '%s' is in use (%s): stop its traffic first", verb,
			   c->cfg->name, c->traffic ? "built-in traffic" : c->owner >= 0 ?
			   "an SDK application" : "messages in flight");
	return 0;
}

static int
conn_del(struct dp_ctx *ctx, int argc, char **argv, struct out *o)
{
	char names[256];
	int i, rc;

	if (argc != 3)
		return bad(o, "conn del: expected exactly one NAME");
	i = find_conn(ctx, argv[2]);
	if (i < 0)
		return bad(o, "conn del: no connection '%s' (there are: %s)", argv[2],
			   conn_names(ctx, names, sizeof(names)));
	if ((rc = conn_idle(ctx, i, "del", o)) != 0)
		return rc;
	dp_conn_stop(ctx, (unsigned int)i);
	put(o, "conn %s deleted\n", argv[2]);
	return SDR_CTL_OK;
}

static int
conn_set(struct dp_ctx *ctx, int argc, char **argv, struct out *o)
{
	struct dp_conn_cfg tmp, old;
	char err[512], names[256];
	int i, rc;

	if (argc < 5)
		return bad(o, "conn set: expected: conn set NAME key value [key value]...");
	i = find_conn(ctx, argv[2]);
	if (i < 0)
		return bad(o, "conn set: no connection '%s' (there are: %s)", argv[2],
			   conn_names(ctx, names, sizeof(names)));
	if ((rc = conn_idle(ctx, i, "set", o)) != 0)
		return rc;
	tmp = ctx->cfg.conns[i];
	if (dp_config_conn_words(&ctx->cfg, &tmp, argv[2], argc - 3, argv + 3, 0, err,
				 sizeof(err)) != 0)
		return bad(o, "%s", err);
	/* the endpoint is rebuilt from the new settings; the old one comes back on failure */
	old = ctx->cfg.conns[i];
	dp_conn_stop(ctx, (unsigned int)i);
	ctx->cfg.conns[i] = tmp;
	if (dp_conn_start(ctx, (unsigned int)i, err, sizeof(err)) != 0) {
		ctx->cfg.conns[i] = old;
		dp_conn_start(ctx, (unsigned int)i, err, sizeof(err));
		return bad(o, "%s", err);
	}
	put(o, "conn %s updated\n", argv[2]);
	return SDR_CTL_OK;
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
			put(o, "%s{\"name\":\"%s\",\"device\":\"%s\",\"port_id\":%u,\"mac\":\"%02x:%02x:"
			    "%02x:%02x:%02x:%02x\"", first ? "" : ",", p->cfg->name, p->cfg->device,
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
		const uint64_t *lc;

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
		lc = link_emu_counters(p->link);
		if (json) {
			put(o, "%s{\"port\":\"%s\",\"emulator\":\"%s\",\"queued\":%u", first ? "" : ",",
			    p->cfg->name, fmt, link_emu_count(p->link));
			for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
				put(o, ",\"%s\":%" PRIu64, link_emu_counter_name((enum link_emu_counter)c),
				    lc[c]);
			put(o, "}");
		} else {
			put(o, "port %s: %s\n ", p->cfg->name, fmt);
			for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
				put(o, " %s %" PRIu64, link_emu_counter_name((enum link_emu_counter)c),
				    lc[c]);
			put(o, "\n");
		}
		first = 0;
	}
	if (json)
		put(o, "]}\n");
	return SDR_CTL_OK;
}

static int
link_set(struct dp_ctx *ctx, int argc, char **argv, struct out *o)
{
	struct link_emu_config c;
	char names[256], fmt[LINK_EMU_FMT_MAX];
	struct dp_port *p;
	int i, rc, badw = -1;

	if (argc < 4)
		return bad(o, "link set: expected: link set PORT delay T|rate R|loss P|burst ...");
	i = find_port(ctx, argv[2]);
	if (i < 0)
		return bad(o, "link set: no port '%s' (there are: %s)", argv[2],
			   port_names(ctx, names, sizeof(names)));
	p = &ctx->ports[i];
	if (p->link)
		c = *link_emu_get_config(p->link);
	else
		link_emu_config_default(&c);
	rc = link_emu_parse(&c, argc - 3, (const char *const *)(argv + 3), &badw);
	if (rc != 0)
		return bad(o, "link set: '%s': %s", badw >= 0 && badw < argc - 3 ? argv[3 + badw] :
			   argv[3], link_emu_strerror(rc));
	if (p->link == NULL) {
		p->link = link_emu_create(&c, ctx->cfg.mbufs);
		if (p->link == NULL) {
			o->len = 0;
			put(o, "link set: cannot create an emulator on port %s", p->cfg->name);
			return SDR_CTL_FAILED;
		}
	} else if (link_emu_set_config(p->link, &c) != 0) {
		return bad(o, "link set: refused by the emulator");
	}
	put(o, "port %s: %s\n", p->cfg->name, link_emu_format(&c, fmt, sizeof(fmt)));
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

static int
pipeline_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	if (argc > 2)
		return bad(o, "pipeline show: unexpected '%s'", argv[2]);
	if (json) {
		put(o, "{\"mode\":\"%s\",\"lcores\":%u,\"rx_lcores\":%u,\"fec\":\"%s\","
		    "\"fec_jobs_out\":%" PRIu64 ",\"loops\":%" PRIu64 ",\"idle_sleeps\":%" PRIu64,
		    ctx->cfg.mode == DP_PIPE_SPLIT ? "split" : "rtc", rte_lcore_count(),
		    ctx->cfg.mode == DP_PIPE_SPLIT ? ctx->cfg.rx_lcores : 0,
		    ctx->cfg.fec_lcore ? "lcore" : "inline", ctx->fec_out_jobs, ctx->loops,
		    ctx->idle_sleeps);
		rx_workers_show(ctx, json, o);
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
	put(o, "pipeline %s on %u lcores", ctx->cfg.mode == DP_PIPE_SPLIT ? "split" : "rtc",
	    rte_lcore_count());
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
	rx_workers_show(ctx, json, o);
	return SDR_CTL_OK;
}

/* ---- clients ---- */

static int
client_show(struct dp_ctx *ctx, int argc, char **argv, int json, struct out *o)
{
	int n = 0;

	if (argc > 2)
		return bad(o, "client show: unexpected '%s'", argv[2]);
	if (json)
		put(o, "[");
	else
		put(o, "%-5s %-8s %-8s %-6s %10s %6s %7s %10s  %s\n", "slot", "pid", "state", "alive",
		    "lease_age", "ops", "waiting", "arena", "connections");
	for (unsigned int ci = 0; ci < SDR_SHM_MAX_CLIENTS; ci++) {
		const struct sdr_shm_client *c = sdr_shm_client(ctx->shm, ci);
		uint32_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		char conns[256] = "", age[32], arena[32];
		double age_s = (double)sdr_shm_age_ns(&c->lease_ns) * 1e-9;
		size_t cl = 0;
		int alive;

		if (st != SDR_CLIENT_ACTIVE && st != SDR_CLIENT_CLOSING && st != SDR_CLIENT_CLAIMING)
			continue;
		for (unsigned int i = 0; i < ctx->nconns && cl + 2 < sizeof(conns); i++)
			if (ctx->conns[i].ep && ctx->conns[i].owner == (int)ci)
				cl += (size_t)snprintf(conns + cl, sizeof(conns) - cl, "%s%s",
						       cl ? "," : "", ctx->conns[i].cfg->name);
		alive = sdr_shm_client_alive(c);
		if (json) {
			put(o, "%s{\"slot\":%u,\"pid\":%d,\"state\":\"%s\",\"alive\":%s,"
			    "\"lease_age_s\":%.3f,\"ops\":%u,\"waiting\":%u,\"arena_bytes\":%" PRIu64
			    ",\"conns\":\"%s\"}", n ? "," : "", ci, c->pid,
			    st == SDR_CLIENT_ACTIVE ? "active" : st == SDR_CLIENT_CLOSING ? "closing" : "claiming", alive ? "true" : "false",
			    age_s, client_ops[ci], deferred[ci].n, c->arena_len, conns);
		} else {
			put(o, "%-5u %-8d %-8s %-6s %10s %6u %7u %10s  %s\n", ci, c->pid,
			    st == SDR_CLIENT_ACTIVE ? "active" : st == SDR_CLIENT_CLOSING ? "closing" : "claiming", alive ? "yes" : "no",
			    units_fmt_time(age_s, age, sizeof(age)), client_ops[ci], deferred[ci].n,
			    units_fmt_size(c->arena_len, arena, sizeof(arena)), conns[0] ? conns : "-");
		}
		n++;
	}
	if (json)
		put(o, "]\n");
	return SDR_CTL_OK;
}

/* ---- SDK: open/close a connection for a client, per-packet view of a chunk ---- */

static int find_recv(unsigned int ci, uint16_t conn, uint64_t cookie);
static void release_conn(struct dp_ctx *ctx, unsigned int ci, unsigned int conn);

static int
sdk_expand(struct dp_ctx *ctx, int client, char **argv, struct out *o)
{
	uint64_t cookie, chunk, bits[16];
	int i = find_conn(ctx, argv[2]), op, n;

	if (i < 0 || ctx->conns[i].owner != client)
		return bad(o, "sdk expand: '%s' is not open here", argv[2]);
	if (units_parse_u64(argv[3], UINT64_MAX, &cookie) != 0 ||
	    units_parse_u64(argv[4], UINT32_MAX, &chunk) != 0)
		return bad(o, "sdk expand: expected CONN COOKIE CHUNK");
	op = find_recv((unsigned int)client, (uint16_t)i, cookie);
	if (op < 0)
		return bad(o, "sdk expand: no such receive");
	n = sdr_rx_chunk_expand(sdr_ep_rx(ctx->conns[i].ep), ops[op].slot, (uint32_t)chunk, bits);
	if (n < 0)
		return bad(o, "sdk expand: chunk %" PRIu64 " is not in the receive", chunk);
	put(o, "ok n=%d", n);
	for (int w = 0; w < (n + 63) / 64; w++)
		put(o, " %" PRIx64, bits[w]);
	put(o, "\n");
	return SDR_CTL_OK;
}

/* The user immediate of a receive still in progress, once enough fragments are in. */
static int
sdk_imm(struct dp_ctx *ctx, int client, char **argv, struct out *o)
{
	uint64_t cookie;
	uint32_t imm;
	int i = find_conn(ctx, argv[2]), op;

	if (i < 0 || ctx->conns[i].owner != client)
		return bad(o, "sdk imm: '%s' is not open here", argv[2]);
	if (units_parse_u64(argv[3], UINT64_MAX, &cookie) != 0)
		return bad(o, "sdk imm: expected CONN COOKIE");
	op = find_recv((unsigned int)client, (uint16_t)i, cookie);
	if (op < 0)
		return bad(o, "sdk imm: no such receive");
	if (sdr_rx_imm_get(sdr_ep_rx(ctx->conns[i].ep), ops[op].slot, &imm) != 0)
		put(o, "retry\n");
	else
		put(o, "ok imm=%u\n", imm);
	return SDR_CTL_OK;
}

static int
sdk_cmd(struct dp_ctx *ctx, int client, int argc, char **argv, struct out *o)
{
	char names[256];
	struct dp_conn *c;
	int i;

	if (client < 0)
		return bad(o, "sdk: only applications attached with libsdr may use 'sdk'");
	if (argc == 5 && strcmp(argv[1], "expand") == 0)
		return sdk_expand(ctx, client, argv, o);
	if (argc == 4 && strcmp(argv[1], "imm") == 0)
		return sdk_imm(ctx, client, argv, o);
	if (argc != 3 || (strcmp(argv[1], "open") != 0 && strcmp(argv[1], "close") != 0))
		return bad(o, "sdk: expected: sdk open|close CONN");
	i = find_conn(ctx, argv[2]);
	if (i < 0)
		return bad(o, "sdk %s: no connection '%s' (there are: %s)", argv[1], argv[2],
			   conn_names(ctx, names, sizeof(names)));
	c = &ctx->conns[i];
	if (strcmp(argv[1], "close") == 0) {
		if (c->owner != client)
			return bad(o, "sdk close: '%s' is not open here", argv[2]);
		release_conn(ctx, (unsigned int)client, (unsigned int)i);
		put(o, "ok\n");
		return SDR_CTL_OK;
	}
	if (c->traffic != NULL || (c->owner >= 0 && c->owner != client))
		return bad(o, "sdk open: '%s' is in use by %s", argv[2],
			   c->traffic ? "the built-in traffic" : "another application");
	c->owner = client;
	__atomic_fetch_or(&sdr_shm_client(ctx->shm, (unsigned int)client)->sdk_conns, 1ull << i,
			  __ATOMIC_RELAXED);
	put(o, "ok conn=%d local_qpn=%u remote_qpn=%u mtu=%u chunk=%u max_msg=%" PRIu64
	    " inflight=%u channels=%u generations=%u imm_split=%u,%u,%u scheme=%s\n", i,
	    c->cfg->ep.attr.local_qpn, c->cfg->ep.attr.remote_qpn, c->cfg->ep.attr.mtu,
	    c->cfg->ep.attr.chunk_size, c->cfg->ep.attr.max_msg_size, c->cfg->ep.attr.max_inflight,
	    c->cfg->ep.attr.channels, c->cfg->ep.attr.generations, c->cfg->ep.attr.split.id_bits,
	    c->cfg->ep.attr.split.off_bits, c->cfg->ep.attr.split.frag_bits,
	    sdr_scheme_format(&c->cfg->ep.rel.scheme, names, sizeof(names)));
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
	       "  link set PORT WORDS                  delay T rate R loss P burst ... reorder\n"
	       "                                       P,T dup P corrupt P seed N off\n"
	       "  pipeline show                        stages, lcores, cycles per packet\n"
	       "  client show                          attached sdrctl and SDK clients\n"
	       "  stats [--watch [SECONDS]]            counters (read from shared memory)\n"
	       "  help, quit\n");
	return SDR_CTL_OK;
}

static int
exec_words(struct dp_ctx *ctx, int client, int argc, char **argv, int json, struct out *o)
{
	const char *w0 = argv[0], *w1 = argc > 1 ? argv[1] : "";

	if (strcmp(w0, "help") == 0)
		return help(o);
	if (strcmp(w0, "conn") == 0) {
		if (strcmp(w1, "show") == 0)
			return conn_show(ctx, argc, argv, json, o);
		if (strcmp(w1, "add") == 0 || strcmp(w1, "del") == 0 || strcmp(w1, "set") == 0) {
			int rc;

			/* the connections change: other threads must not be reading them */
			rte_spinlock_lock(&ctx->conns_lock);
			rc = w1[0] == 'a' ? conn_add(ctx, argc, argv, o) :
			     w1[0] == 'd' ? conn_del(ctx, argc, argv, o) : conn_set(ctx, argc, argv, o);
			rte_spinlock_unlock(&ctx->conns_lock);
			return rc;
		}
		return bad(o, "conn: unknown '%s' (expected show, add, set or del)", w1);
	}
	if (strcmp(w0, "port") == 0) {
		if (strcmp(w1, "show") == 0)
			return port_show(ctx, argc, argv, json, o);
		return bad(o, "port: unknown '%s' (expected show)", w1);
	}
	if (strcmp(w0, "link") == 0) {
		if (strcmp(w1, "show") == 0)
			return link_show(ctx, argc, argv, json, o);
		if (strcmp(w1, "set") == 0)
			return link_set(ctx, argc, argv, o);
		return bad(o, "link: unknown '%s' (expected show or set)", w1);
	}
	if (strcmp(w0, "pipeline") == 0) {
		if (strcmp(w1, "show") == 0)
			return pipeline_show(ctx, argc, argv, json, o);
		return bad(o, "pipeline: unknown '%s' (expected show)", w1);
	}
	if (strcmp(w0, "client") == 0) {
		if (strcmp(w1, "show") == 0)
			return client_show(ctx, argc, argv, json, o);
		return bad(o, "client: unknown '%s' (expected show)", w1);
	}
	if (strcmp(w0, "sdk") == 0)
		return sdk_cmd(ctx, client, argc, argv, o);
	return bad(o, "unknown command '%s' (expected conn, port, link, pipeline, client, stats or help)",
		   w0);
}

static int
exec_line(struct dp_ctx *ctx, int client, const char *line, int json, char *outbuf,
	  size_t outlen)
{
	char buf[SDR_SHM_CMD_LEN], *argv[MAX_WORDS], *save = NULL;
	struct out o = { .buf = outbuf, .cap = outlen, .len = 0 };
	int argc = 0, rc;

	outbuf[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", line);
	/* commands are printable ASCII: a reply that echoes a word must not carry a newline or
	 * a terminal escape to whoever reads it */
	for (const char *c = buf; *c; c++) {
		if ((*c < 0x20 && *c != '\t') || *c >= 0x7f || *c < 0)
			return bad(&o, "byte 0x%02x at column %d: commands are printable ASCII",
				   (unsigned char)*c, (int)(c - buf) + 1);
	}
	for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == MAX_WORDS)
			return bad(&o, "more than %d words", MAX_WORDS);
		argv[argc++] = w;
	}
	if (argc == 0)
		return bad(&o, "empty command (try 'help')");
	rc = exec_words(ctx, client, argc, argv, json, &o);
	if (o.len < o.cap)
		outbuf[o.len] = '\0';
	return rc;
}

int
dp_control_exec(struct dp_ctx *ctx, const char *line, int json, char *out, size_t outlen,
		uint64_t now)
{
	(void)now;
	return exec_line(ctx, -1, line, json, out, outlen);
}

/* ---- SDK queues ---- */

static int
op_alloc(uint8_t client, uint16_t conn)
{
	uint32_t i;

	if (nfree_ops == 0 || client_ops[client] >= SDR_SHM_QUEUE_DEPTH - 1)
		return -1;
	i = free_ops[--nfree_ops];
	memset(&ops[i], 0, sizeof(ops[i]));
	ops[i].used = 1;
	ops[i].client = client;
	ops[i].conn = conn;
	client_ops[client]++;
	conn_ops[conn]++;
	return (int)i;
}

static void
op_free(uint32_t i)
{
	client_ops[ops[i].client]--;
	conn_ops[ops[i].conn]--;
	ops[i].used = 0;
	free_ops[nfree_ops++] = i;
}

/* The receive a client posted with @p cookie on @p conn. @return op index or -1. */
static int
find_recv(unsigned int ci, uint16_t conn, uint64_t cookie)
{
	for (uint32_t i = 0; i < MAX_OPS; i++)
		if (ops[i].used && ops[i].client == ci && ops[i].op == SDR_SDK_RECV &&
		    ops[i].conn == conn && ops[i].cookie == cookie)
			return (int)i;
	return -1;
}

/* The streamed send a client started with @p cookie on @p conn. @return op index or -1. */
static int
find_stream(unsigned int ci, uint16_t conn, uint64_t cookie)
{
	for (uint32_t i = 0; i < MAX_OPS; i++)
		if (ops[i].used && ops[i].client == ci && ops[i].stream && ops[i].conn == conn &&
		    ops[i].cookie == cookie)
			return (int)i;
	return -1;
}

/* The client's buffer [off, off + len) lies inside its share of the arena. */
static uint8_t *
arena_ptr(struct dp_ctx *ctx, const struct sdr_shm_client *c, uint64_t off, uint64_t len)
{
	if (off < c->arena_off || len > c->arena_len || off - c->arena_off > c->arena_len - len)
		return NULL;
	return sdr_shm_at(ctx->shm, off);
}

static void
complete_now(struct dp_ctx *ctx, struct sdr_shm_client *c, const struct sdr_sdk_req *r,
	     int32_t status)
{
	struct sdr_sdk_cqe e = { .op = r->op == SDR_SDK_STREAM ? SDR_SDK_SEND : r->op,
				 .conn = r->conn, .status = status, .cookie = r->cookie,
				 .handle = UINT32_MAX };

	rte_ring_sp_enqueue_elem((struct rte_ring *)sdr_shm_at(ctx->shm, c->cq_off), &e, sizeof(e));
}

/*
 * One request of client @p ci. @return 0 when it was handled (done, refused or failed: a
 * completion says so), -EAGAIN when the connection has no room for it now: it stays at
 * the head of the client's queue (the SDK's "retry", as the dataplane sees it).
 */
static int
sdk_request(struct dp_ctx *ctx, unsigned int ci, struct sdr_shm_client *c,
	    const struct sdr_sdk_req *r, uint64_t now)
{
	struct dp_conn *conn = r->conn < ctx->nconns ? &ctx->conns[r->conn] : NULL;
	uint8_t *buf, *bm = NULL;
	uint32_t slot;
	int op, rc;

	if (conn == NULL || conn->ep == NULL || conn->owner != (int)ci) {
		complete_now(ctx, c, r, -EBADF);
		return 0;
	}
	if (r->op == SDR_SDK_STREAM_ADD || r->op == SDR_SDK_STREAM_END) {
		/* a stream that is over already (completed, failed) ignores late additions */
		int i = find_stream(ci, r->conn, r->cookie);

		if (i >= 0 && r->op == SDR_SDK_STREAM_ADD)
			sdr_ep_stream_add(conn->ep, &ops[i].st, r->off, r->len);
		else if (i >= 0)
			sdr_ep_stream_end(conn->ep, &ops[i].st);
		return 0;
	}
	if (r->op == SDR_SDK_RECV_DONE) {
		/* the handle of the receive's completion, else (given up early) a search */
		int i = r->handle < MAX_OPS && ops[r->handle].used && ops[r->handle].client == ci &&
			ops[r->handle].op == SDR_SDK_RECV && ops[r->handle].conn == r->conn &&
			ops[r->handle].cookie == r->cookie ? (int)r->handle :
			find_recv(ci, r->conn, r->cookie);

		if (i >= 0) {
			/* given up before it completed: say so, so the client can let go */
			if (!ops[i].done) {
				struct sdr_sdk_req x = *r;

				x.op = SDR_SDK_RECV;
				complete_now(ctx, c, &x, -ECANCELED);
			}
			sdr_ep_recv_release(conn->ep, ops[i].slot);
			op_free((uint32_t)i);
		}
		return 0;
	}
	buf = arena_ptr(ctx, c, r->off, r->len);
	if (r->bm_off) {
		uint64_t chunk = conn->cfg->ep.attr.chunk_size;

		bm = arena_ptr(ctx, c, r->bm_off, r->len ? (r->len + chunk - 1) / chunk : 1);
	}
	if (buf == NULL || (r->bm_off && bm == NULL)) {
		complete_now(ctx, c, r, -EFAULT);	/* outside the client's memory: refused */
		return 0;
	}
	op = op_alloc((uint8_t)ci, r->conn);
	if (op < 0)
		return -EAGAIN;
	ops[op].op = (uint8_t)(r->op == SDR_SDK_STREAM ? SDR_SDK_SEND : r->op);
	ops[op].cookie = r->cookie;
	if (r->op == SDR_SDK_SEND) {
		rc = sdr_ep_send(conn->ep, buf, r->len, r->imm, (uint64_t)op, now);
	} else if (r->op == SDR_SDK_STREAM) {
		ops[op].stream = 1;
		rc = sdr_ep_send_stream(conn->ep, buf, r->len, r->imm, (uint64_t)op, now,
					&ops[op].st);
	} else if (r->op == SDR_SDK_RECV) {
		rc = sdr_ep_recv(conn->ep, buf, r->len, bm, (uint64_t)op, now, &slot);
	} else {
		rc = -EINVAL;
	}
	if (rc != 0) {
		op_free((uint32_t)op);
		if (rc == -EAGAIN)
			return rc;	/* in-flight limit or slot still busy: later */
		complete_now(ctx, c, r, rc);
		return 0;
	}
	if (r->op == SDR_SDK_RECV)
		ops[op].slot = slot;
	return 0;
}

/* Bits of the user immediate a message carries: a fragment per packet, up to all 32. */
static uint32_t
imm_bits(const struct dp_conn *conn, uint32_t slot)
{
	const struct sdr_imm_split *sp = &conn->cfg->ep.attr.split;
	struct sdr_rx_msg_info info;
	uint32_t frags = sdr_imm_nfrags(sp), bits;

	if (sdr_rx_msg_info(sdr_ep_rx(conn->ep), slot, &info) == 0 && info.npkts < frags)
		frags = info.npkts;
	bits = frags * sp->frag_bits;
	return bits > 32 ? 32 : bits;
}

/* Completions of SDK connections, routed to the client that asked. */
static unsigned int
sdk_completions(struct dp_ctx *ctx)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ctx->nconns; i++) {
		struct dp_conn *conn = &ctx->conns[i];
		struct sdr_ep_done d;

		/* also a connection whose application left with sends still in flight */
		if (conn->ep == NULL || (conn->owner < 0 && conn_ops[i] == 0))
			continue;
		while (sdr_ep_poll(conn->ep, &d)) {
			struct sdk_op *op = &ops[d.cookie];
			struct sdr_shm_client *c = sdr_shm_client(ctx->shm, op->client);
			struct sdr_sdk_cqe e = {
				.op = op->op, .conn = op->conn, .status = d.status, .slot = d.slot,
				.handle = (uint32_t)d.cookie,
				.decoded = d.decoded, .retransmitted = d.retransmitted,
				.cookie = op->cookie, .start_ns = d.first_ns ? d.first_ns : d.start_ns,
				.end_ns = d.end_ns,
			};

			n++;
			if (d.is_recv) {
				e.imm_ok = sdr_rx_imm_get(sdr_ep_rx(conn->ep), d.slot, &e.imm) == 0 ?
					   imm_bits(conn, d.slot) : 0;
				op->done = 1;
				op->slot = d.slot;
				if (op->orphan) {
					sdr_ep_recv_release(conn->ep, d.slot);
					op_free((uint32_t)d.cookie);
					continue;
				}
			} else {
				int orphan = op->orphan;

				op_free((uint32_t)d.cookie);
				if (orphan)
					continue;
			}
			rte_ring_sp_enqueue_elem((struct rte_ring *)sdr_shm_at(ctx->shm, c->cq_off),
						 &e, sizeof(e));
		}
	}
	return n;
}

static struct sdr_sdk_req *
deferred_at(struct deferred *d, uint32_t i)
{
	return &d->r[(d->head + i) % SDR_SHM_QUEUE_DEPTH];
}

/* A receive given up while its post still waits: it never reaches the endpoint. */
static int
deferred_cancel(struct dp_ctx *ctx, struct sdr_shm_client *c, struct deferred *d,
		const struct sdr_sdk_req *done)
{
	for (uint32_t i = 0; i < d->n; i++) {
		struct sdr_sdk_req *r = deferred_at(d, i);

		if (r->op != SDR_SDK_RECV || r->conn != done->conn || r->cookie != done->cookie)
			continue;
		complete_now(ctx, c, r, -ECANCELED);
		for (uint32_t j = i; j + 1 < d->n; j++)
			*deferred_at(d, j) = *deferred_at(d, j + 1);
		d->n--;
		return 1;
	}
	return 0;
}

/* One client's requests: the deferred ones first, then its queue. @return requests handled. */
static unsigned int
sdk_client_queue(struct dp_ctx *ctx, unsigned int ci, struct sdr_shm_client *c,
		 struct rte_ring *sq, uint64_t now)
{
	struct deferred *d = &deferred[ci];
	struct sdr_sdk_req r;
	unsigned int n = 0;

	while (d->n > 0 && sdk_request(ctx, ci, c, deferred_at(d, 0), now) == 0) {
		d->head = (d->head + 1) % SDR_SHM_QUEUE_DEPTH;
		d->n--;
		n++;
	}
	/* back-pressure: a client with a full set of operations, or of deferred requests,
	 * waits in its queue */
	while (client_ops[ci] < SDR_SHM_QUEUE_DEPTH - 1 && d->n < SDR_SHM_QUEUE_DEPTH &&
	       rte_ring_sc_dequeue_elem(sq, &r, sizeof(r)) == 0) {
		n++;
		if (r.op == SDR_SDK_RECV_DONE && deferred_cancel(ctx, c, d, &r))
			continue;
		if (r.op != SDR_SDK_RECV_DONE && d->n > 0) {
			*deferred_at(d, d->n++) = r;	/* behind the ones already waiting */
			continue;
		}
		if (sdk_request(ctx, ci, c, &r, now) != 0)
			*deferred_at(d, d->n++) = r;
	}
	return n;
}

static unsigned int
sdk_poll(struct dp_ctx *ctx, uint64_t now)
{
	unsigned int n = sdk_completions(ctx);

	for (unsigned int ci = 0; ci < SDR_SHM_MAX_CLIENTS; ci++) {
		struct sdr_shm_client *c = sdr_shm_client(ctx->shm, ci);
		struct rte_ring *sq;

		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != SDR_CLIENT_ACTIVE ||
		    c->sdk_conns == 0)
			continue;
		sq = sdr_shm_at(ctx->shm, c->sq_off);
		n += sdk_client_queue(ctx, ci, c, sq, now);
	}
	return n;
}

/*
 * A client stops using a connection (sdk close, or it left): its receives are released
 * (late packets for them are dropped), its sends finish unseen, the connection is free.
 */
static void
release_conn(struct dp_ctx *ctx, unsigned int ci, unsigned int conn)
{
	struct sdr_shm_client *c = sdr_shm_client(ctx->shm, ci);

	for (uint32_t i = 0; i < MAX_OPS && conn_ops[conn] > 0; i++) {
		if (!ops[i].used || ops[i].client != ci || ops[i].conn != conn)
			continue;
		if (ops[i].op == SDR_SDK_RECV && ctx->conns[conn].ep) {
			sdr_ep_recv_release(ctx->conns[conn].ep, ops[i].slot);
			op_free(i);
		} else {
			ops[i].orphan = 1;	/* freed when its completion comes */
		}
	}
	if (ctx->conns[conn].owner == (int)ci)
		ctx->conns[conn].owner = -1;
	__atomic_fetch_and(&c->sdk_conns, ~(1ull << conn), __ATOMIC_RELAXED);
}

/* A client that left or died: release everything it held; free its slot when nothing is
 * left in flight (else the periodic sweep frees it once its last send completes). */
static void
reclaim(struct dp_ctx *ctx, unsigned int ci)
{
	struct sdr_shm_client *c = sdr_shm_client(ctx->shm, ci);

	__atomic_store_n(&c->state, SDR_CLIENT_CLOSING, __ATOMIC_RELEASE);
	deferred[ci].n = 0;
	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].owner == (int)ci || (c->sdk_conns & (1ull << i)))
			release_conn(ctx, ci, i);
	if (client_ops[ci] == 0)
		sdr_shm_free_slot(ctx->shm, ci);
}

/* ---- commands ---- */

static unsigned int
commands(struct dp_ctx *ctx, uint64_t now)
{
	struct rte_ring *r = sdr_shm_cmd_ring(ctx->shm);
	unsigned int n = 0;
	uint32_t id;

	/* a few commands per loop (each may take a while); clients leaving cost nothing */
	while (n < 4 && rte_ring_sc_dequeue_elem(r, &id, sizeof(id)) == 0) {
		struct sdr_shm_client *c;
		uint32_t seq;

		if (id >= SDR_SHM_MAX_CLIENTS)
			continue;
		c = sdr_shm_client(ctx->shm, id);
		switch (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE)) {
		case SDR_CLIENT_CLOSING:
			reclaim(ctx, id);	/* the client left */
			continue;
		case SDR_CLIENT_ACTIVE:
			break;
		default:
			continue;
		}
		n++;
		seq = __atomic_load_n(&c->cmd_seq, __ATOMIC_ACQUIRE);
		c->cmd[SDR_SHM_CMD_LEN - 1] = '\0';
		c->reply_rc = exec_line(ctx, c->cmd_flags & SDR_CMD_F_SDK ? (int)id : -1, c->cmd,
					c->cmd_flags & SDR_CMD_F_JSON, c->reply, SDR_SHM_REPLY_LEN);
		c->reply_len = (uint32_t)strlen(c->reply);
		__atomic_store_n(&c->reply_seq, seq, __ATOMIC_RELEASE);
		(void)now;
	}
	return n;
}

unsigned int
dp_control_poll(struct dp_ctx *ctx, uint64_t now)
{
	static uint64_t next_reap;
	unsigned int n;

	if (ctx->shm == NULL)
		return 0;
	n = commands(ctx, now) + sdk_poll(ctx, now);
	/* leases: a client quiet for a while whose process is gone is reclaimed, and a
	 * client that left is finished off once its last send completed */
	if (now >= next_reap) {
		next_reap = now + 500000000ull;
		for (unsigned int ci = 0; ci < SDR_SHM_MAX_CLIENTS; ci++) {
			struct sdr_shm_client *c = sdr_shm_client(ctx->shm, ci);
			uint32_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);

			if (st == SDR_CLIENT_CLOSING ||
			    (st == SDR_CLIENT_ACTIVE && sdr_shm_age_ns(&c->lease_ns) > SDR_SHM_LEASE_NS &&
			     !sdr_shm_client_alive(c)))
				reclaim(ctx, ci);
			/* a client that died inside its claim (microseconds long): seen claiming on
			 * two sweeps 2 s apart with its process gone, the slot is free again */
			if (st != SDR_CLIENT_CLAIMING) {
				claiming_since[ci] = 0;
			} else if (claiming_since[ci] == 0) {
				claiming_since[ci] = now;
			} else if (now - claiming_since[ci] > 2000000000ull && !sdr_shm_client_alive(c)) {
				uint32_t claiming = SDR_CLIENT_CLAIMING;

				claiming_since[ci] = 0;
				__atomic_compare_exchange_n(&c->state, &claiming, SDR_CLIENT_FREE, 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			}
		}
	}
	return n;
}

void
dp_control_tick(struct dp_ctx *ctx)
{
	struct sdr_shm_stats *s;

	if (ctx->shm == NULL)
		return;
	ctx->shm->heartbeat_ns = sdr_shm_mono_ns();
	rte_spinlock_lock(&ctx->conns_lock);	/* the poll loop may be deleting one */
	s = sdr_shm_stats(ctx->shm);
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);	/* odd: writing */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->time_ns = dp_now_ns();
	s->nports = ctx->nports < SDR_SHM_MAX_PORTS ? ctx->nports : SDR_SHM_MAX_PORTS;
	for (unsigned int i = 0; i < s->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];
		struct sdr_shm_port_stats *ps = &s->ports[i];
		uint64_t drops = dp_port_drops(p);
		snprintf(ps->name, sizeof(ps->name), "%s", p->cfg->name);
		ps->rx_pkts = dp_port_counter(p, DP_PORT_RX_PKTS);
		ps->rx_bytes = dp_port_counter(p, DP_PORT_RX_BYTES);
		ps->tx_pkts = dp_port_counter(p, DP_PORT_TX_PKTS);
		ps->tx_bytes = dp_port_counter(p, DP_PORT_TX_BYTES);
		ps->drops = drops;
	}
	s->nconns = 0;
	for (unsigned int i = 0; i < ctx->nconns && s->nconns < SDR_SHM_MAX_CONNS; i++) {
		const struct dp_conn *c = &ctx->conns[i];
		struct sdr_shm_conn_stats *cs;
		const uint64_t *ec, *rc, *rt;
		uint64_t rxd = 0;

		if (c->ep == NULL)
			continue;
		cs = &s->conns[s->nconns++];
		ec = sdr_ep_counters(c->ep);
		rc = sdr_ep_rx_counters(c->ep);
		rt = sdr_ep_rel_tx_counters(c->ep);
		for (int k = 0; k < SDR_RX_DUPLICATE; k++)
			rxd += rc[k];
		snprintf(cs->name, sizeof(cs->name), "%s", c->cfg->name);
		sdr_scheme_format(&c->cfg->ep.rel.scheme, cs->scheme, sizeof(cs->scheme));
		cs->data_pkts_in = ec[SDR_EP_DATA_PKTS_IN];
		cs->data_pkts_out = ec[SDR_EP_DATA_PKTS_OUT] + ec[SDR_EP_PARITY_PKTS_OUT];
		cs->ctrl_pkts_in = ec[SDR_EP_CTRL_PKTS_IN];
		cs->ctrl_pkts_out = ec[SDR_EP_CTRL_PKTS_OUT];
		cs->sends_ok = ec[SDR_EP_SEND_OK];
		cs->recvs_ok = ec[SDR_EP_RECV_OK];
		cs->failed = ec[SDR_EP_SEND_FAILED] + ec[SDR_EP_RECV_FAILED];
		cs->retransmitted = rt[REL_TX_RETRANSMITS];
		cs->decoded = ec[SDR_EP_DECODES];
		cs->rx_drops = rxd;
	}
	rte_spinlock_unlock(&ctx->conns_lock);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);	/* even: done */
}

int
dp_control_init(struct dp_ctx *ctx, uint64_t arena_size, char *err, size_t errlen)
{
	ctx->shm = sdr_shm_create(ctx->cfg.name, arena_size, err, errlen);
	if (ctx->shm == NULL)
		return -1;
	nfree_ops = 0;
	for (uint32_t i = MAX_OPS; i > 0; i--)
		free_ops[nfree_ops++] = i - 1;
	memset(client_ops, 0, sizeof(client_ops));
	memset(conn_ops, 0, sizeof(conn_ops));
	dp_control_tick(ctx);	/* counters are readable from the first client on */
	return 0;
}

void
dp_control_fini(struct dp_ctx *ctx)
{
	sdr_shm_destroy(ctx->shm);
	ctx->shm = NULL;
}
