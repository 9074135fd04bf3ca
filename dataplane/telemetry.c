/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands under /sdr/, readable with dpdk-telemetry.py:
 *   /sdr/ports            every port with its counters and verdicts that moved
 *   /sdr/ports,NAME       one port, every counter and verdict
 *   /sdr/conns            connection names and schemes
 *   /sdr/conn,NAME        one connection in detail: every counter of its parts
 *   /sdr/stages           per-stage calls, packets, cycles and cycles per packet
 *   /sdr/stages,E         the same for engine E alone ([pipeline] mode = engines)
 *   /sdr/drops            every drop counter that moved, by its reason name
 *   /sdr/hist,NAME        message completion-time histogram (power-of-two microseconds)
 * They run on the telemetry thread and read counters the poll loops write (64-bit loads).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "ctl.h"
#include "dp.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_ctrl.h"
#include "sdr_tx.h"
#include "stats.h"
#include "telemetry.h"

/*
 * The dataplane the commands read. rte_telemetry (DPDK 22.11) calls its commands with no
 * argument of the caller's, so the context it was registered for is kept here.
 */
static struct dp_ctx *tctx;

static const char *const stage_names[DP_NSTAGES] = {
#define X(sym, name) [DP_STAGE_##sym] = name,
	DP_STAGES(X)
#undef X
};

const char *
dp_stage_name(enum dp_stage s)
{
	return (unsigned int)s < DP_NSTAGES ? stage_names[s] : "invalid";
}

/*
 * A port's or connection's name as a telemetry key: rte_telemetry refuses keys with other
 * characters than letters, digits, '_' and '/', and names may have '-' and '.' (shown as
 * '_'). A key refused would drop the entry silently.
 */
static const char *
tel_key(const char *name, char *key, size_t len)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		key[i] = isalnum((unsigned char)name[i]) || name[i] == '/' ? name[i] : '_';
	key[i] = '\0';
	return key;
}

/* Put @p c under @p name's key in @p d; freed if refused (the library keeps it otherwise). */
static void
add_named(struct rte_tel_data *d, const char *name, struct rte_tel_data *c)
{
	char key[RTE_TEL_MAX_STRING_LEN];

	if (rte_tel_data_add_dict_container(d, tel_key(name, key, sizeof(key)), c, 0) != 0)
		rte_tel_data_free(c);
}

/* Port @p p's counters and parser verdicts into @p d: every one, or (@p all 0) those that
 * moved, with its frames in and out always. */
static void
port_fill(struct rte_tel_data *d, const struct dp_port *p, int all)
{
	rte_tel_data_add_dict_u64(d, "port_id", p->port_id);
	for (int c = 0; c < DP_PORT_NCOUNTERS; c++) {
		uint64_t v = dp_port_counter(p, c);

		if (all || v || c == DP_PORT_RX_PKTS || c == DP_PORT_TX_PKTS)
			rte_tel_data_add_dict_u64(d, dp_port_counter_name((enum dp_port_counter)c),
						  v);
	}
	for (int v = 0; v < ROCE_V_COUNT; v++)
		if (all || dp_port_verdict(p, v))
			rte_tel_data_add_dict_u64(d, roce_verdict_name((enum roce_verdict)v),
						  dp_port_verdict(p, v));
}

/*
 * /sdr/ports: each port with the counters that moved (every counter of a dozen ports would
 * pass the 16 KiB a telemetry reply holds, and the library drops what does not fit without
 * a word); /sdr/ports,NAME: one port, every counter.
 */
static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	if (params != NULL && *params != '\0') {
		for (unsigned int i = 0; i < tctx->nports; i++)
			if (strcmp(tctx->ports[i].cfg->name, params) == 0) {
				port_fill(d, &tctx->ports[i], 1);
				return 0;
			}
		return -EINVAL;
	}
	for (unsigned int i = 0; i < tctx->nports; i++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (pd == NULL)
			continue;
		rte_tel_data_start_dict(pd);
		port_fill(pd, &tctx->ports[i], 0);
		add_named(d, tctx->ports[i].cfg->name, pd);
	}
	return 0;
}

static int
tel_conns(const char *cmd, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < tctx->nconns; i++) {
		char name[SDR_SCHEME_NAME_MAX], key[RTE_TEL_MAX_STRING_LEN];
		struct sdr_scheme now;

		if (tctx->conns[i].ep == NULL)
			continue;
		now = sdr_ep_scheme(tctx->conns[i].ep, NULL);	/* in force: auto's changes it */
		rte_tel_data_add_dict_string(d, tel_key(tctx->conns[i].cfg->name, key, sizeof(key)),
					     sdr_scheme_format(&now, name, sizeof(name)));
	}
	return 0;
}

static const struct dp_conn *
find_conn(const char *params)
{
	for (unsigned int i = 0; params && i < tctx->nconns; i++)
		if (tctx->conns[i].ep != NULL && strcmp(tctx->conns[i].cfg->name, params) == 0)
			return &tctx->conns[i];
	return NULL;
}

/* Add a layer's counters as a nested dictionary under its group name. */
static void
add_counters(struct rte_tel_data *d, const struct sdr_counter_table *t, const uint64_t *v)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	for (unsigned int i = 0; i < t->n; i++)
		rte_tel_data_add_dict_u64(c, t->defs[i].name, v[i]);
	add_named(d, t->group, c);
}

/* scheme auto: the loss estimate, the latest decision and the history of changes asked. */
static void
add_auto(struct rte_tel_data *d, struct dp_conn *c)
{
	struct rte_tel_data *ad = rte_tel_data_alloc(), *hd = rte_tel_data_alloc();
	struct dp_auto_rec h[DP_AUTO_HIST];
	struct sdr_auto_decision last;
	struct sdr_auto_estimate e;
	struct sdr_auto_path pa;
	char line[RTE_TEL_MAX_STRING_LEN], a[SDR_SCHEME_CHUNK_NAME_MAX],
	     b[SDR_SCHEME_CHUNK_NAME_MAX];
	uint32_t cb = c->cfg->ep.attr.chunk_size;
	unsigned int n = ctl_auto_history(c, h, DP_AUTO_HIST, &last, &pa);

	if (ad == NULL || hd == NULL) {
		rte_tel_data_free(ad);
		rte_tel_data_free(hd);
		return;
	}
	sdr_auto_estimate(sdr_ep_auto(c->ep), &e);
	rte_tel_data_start_dict(ad);
	snprintf(line, sizeof(line), "%.3g", e.p);
	rte_tel_data_add_dict_string(ad, "loss", line);
	snprintf(line, sizeof(line), "%.3g", e.lo);
	rte_tel_data_add_dict_string(ad, "loss_lo", line);
	snprintf(line, sizeof(line), "%.3g", e.hi);
	rte_tel_data_add_dict_string(ad, "loss_hi", line);
	rte_tel_data_add_dict_u64(ad, "total_pkts", e.total_pkts);
	rte_tel_data_add_dict_u64(ad, "total_lost", e.total_lost);
	rte_tel_data_add_dict_u64(ad, "changes", sdr_ep_counters(c->ep)[SDR_EP_SCHEME_CHANGES]);
	rte_tel_data_add_dict_string(ad, "verdict", sdr_auto_verdict_name(last.verdict));
	snprintf(line, sizeof(line), "%.*s", (int)sizeof(line) - 1, last.why);
	rte_tel_data_add_dict_string(ad, "why", line);
	/* the path the latest decision was made for (advice only: the path now) */
	if (pa.rtt_s <= 0) {
		struct sdr_model_params p;

		ctl_auto_params(tctx, c, &p, &pa);
	}
	snprintf(line, sizeof(line), "%.6g", pa.rtt_s);
	rte_tel_data_add_dict_string(ad, "rtt_s", line);
	rte_tel_data_add_dict_string(ad, "rtt_from", pa.rtt_measured ? "measured" : "configured");
	rte_tel_data_add_dict_u64(ad, "rtt_samples", pa.rtt_samples);
	snprintf(line, sizeof(line), "%.6g", pa.bandwidth_bps);
	rte_tel_data_add_dict_string(ad, "rate_bps", line);
	rte_tel_data_add_dict_string(ad, "rate_from", pa.rate_measured ? "measured" :
				     pa.paced ? "paced" : "assumed");
	rte_tel_data_add_dict_u64(ad, "rate_samples", pa.rate_samples);
	rte_tel_data_start_array(hd, RTE_TEL_STRING_VAL);
	for (unsigned int k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "%.3f s: %s -> %s", (double)h[k].t_ns * 1e-9,
			 sdr_scheme_format_chunk(&h[k].from, cb, a, sizeof(a)),
			 sdr_scheme_format_chunk(&h[k].to, cb, b, sizeof(b)));
		rte_tel_data_add_array_string(hd, line);
	}
	rte_tel_data_add_dict_container(ad, "history", hd, 0);
	rte_tel_data_add_dict_container(d, "auto", ad, 0);
}

/* Several paths: each path as the last decision saw it, that decision, the moves made. */
static void
add_paths(struct rte_tel_data *d, struct dp_conn *c)
{
	static struct path_sel_decision last;	/* (telemetry runs one request at a time) */
	struct rte_tel_data *pd = rte_tel_data_alloc(), *ld = rte_tel_data_alloc(),
			    *hd = rte_tel_data_alloc();
	struct path_sel_path ps[PATH_SEL_MAX_PATHS];
	struct dp_paths_rec h[DP_PATHS_HIST];
	char line[RTE_TEL_MAX_STRING_LEN], from[32], to[32];
	double fps[PATH_SEL_MAX_PATHS];
	uint64_t decisions;
	int n = ctl_paths_state(c, ps, fps, &last, &decisions, h, DP_PATHS_HIST);

	if (pd == NULL || ld == NULL || hd == NULL || n < 0) {
		rte_tel_data_free(pd);
		rte_tel_data_free(ld);
		rte_tel_data_free(hd);
		return;
	}
	rte_tel_data_start_dict(pd);
	rte_tel_data_add_dict_string(pd, "policy",
				     path_policy_name(sdr_ep_paths(c->ep)->cfg.policy));
	rte_tel_data_add_dict_string(pd, "objective",
				     path_objective_name(sdr_ep_paths(c->ep)->cfg.objective));
	rte_tel_data_add_dict_u64(pd, "decisions", decisions);
	rte_tel_data_add_dict_u64(pd, "moves", c->pathd.moves);
	rte_tel_data_start_array(ld, RTE_TEL_STRING_VAL);
	for (unsigned int k = 0; k < sdr_ep_paths(c->ep)->cfg.npaths; k++) {
		struct sdr_auto_estimate e;

		sdr_auto_estimate(&ps[k].est, &e);
		snprintf(line, sizeof(line), "path %u: %u qpns, %" PRIu64 " frames (%.0f/s), rtt "
			 "%.3g ms, loss %.3g [%.3g, %.3g], %s", k + 1, ps[k].nqp, ps[k].frames, fps[k],
			 ps[k].rtt_min_ns * 1e-6, e.p, e.lo, e.hi,
			 ps[k].failed ? "failed" : ps[k].nqp ? "ok" : "unused");
		rte_tel_data_add_array_string(ld, line);
	}
	rte_tel_data_add_dict_container(pd, "path", ld, 0);
	snprintf(line, sizeof(line), "%.*s", (int)sizeof(line) - 1, last.why);
	rte_tel_data_add_dict_string(pd, "why", line);
	rte_tel_data_start_array(hd, RTE_TEL_STRING_VAL);
	for (int k = 0; k < n; k++) {
		path_sel_mask_str(h[k].from_mask, from, sizeof(from));
		path_sel_mask_str(h[k].to_mask, to, sizeof(to));
		snprintf(line, sizeof(line), "%.3f s: paths %s -> %s", (double)h[k].t_ns * 1e-9,
			 from, to);
		rte_tel_data_add_array_string(hd, line);
	}
	rte_tel_data_add_dict_container(pd, "history", hd, 0);
	rte_tel_data_add_dict_container(d, "paths", pd, 0);
}

static int
tel_conn(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_conn *c = find_conn(params);
	const struct sdr_conn_attr *a;
	char name[SDR_SCHEME_CHUNK_NAME_MAX];

	if (c == NULL)
		return -1;
	a = &c->cfg->ep.attr;
	rte_tel_data_start_dict(d);
	{
		struct sdr_scheme now = sdr_ep_scheme(c->ep, NULL);

		rte_tel_data_add_dict_string(d, "scheme",
					     sdr_scheme_format_chunk(&now, c->cfg->ep.attr.chunk_size,
								     name, sizeof(name)));
	}
	if (c->cfg->scheme_auto)
		add_auto(d, (struct dp_conn *)(uintptr_t)c);
	if (sdr_ep_paths(c->ep) != NULL)
		add_paths(d, (struct dp_conn *)(uintptr_t)c);
	rte_tel_data_add_dict_string(d, "port", c->cfg->port);
	rte_tel_data_add_dict_u64(d, "local_qpn", a->local_qpn);
	rte_tel_data_add_dict_u64(d, "remote_qpn", a->remote_qpn);
	rte_tel_data_add_dict_u64(d, "mtu", a->mtu);
	rte_tel_data_add_dict_u64(d, "chunk", a->chunk_size);
	rte_tel_data_add_dict_u64(d, "channels", a->channels);
	rte_tel_data_add_dict_u64(d, "generations", a->generations);
	rte_tel_data_add_dict_u64(d, "rtt_ns", c->cfg->ep.rel.rtt_ns);
	{
		struct sdr_ep_counter_group g[SDR_EP_NGROUPS];
		unsigned int ng = sdr_ep_counter_groups(c->ep, g);

		for (unsigned int k = 0; k < ng; k++)
			add_counters(d, g[k].table, g[k].v);
	}
	return 0;
}

/* /sdr/stages: every lcore's stages added up; /sdr/stages,E: engine E's alone (engines). */
static int
tel_stages(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int slot = -1;

	if (params != NULL && *params) {
		char *end;
		unsigned long e = strtoul(params, &end, 10);

		if (*end || tctx->cfg.mode != DP_PIPE_ENGINES || e >= tctx->cfg.engines)
			return -EINVAL;
		slot = (int)e;
	}
	rte_tel_data_start_dict(d);
	for (int s = 0; s < DP_NSTAGES; s++) {
		struct rte_tel_data *sd = rte_tel_data_alloc();
		struct dp_stage_stats sum = dp_stage_sum(tctx, (enum dp_stage)s, slot);
		const struct dp_stage_stats *st = &sum;

		if (sd == NULL)
			continue;
		rte_tel_data_start_dict(sd);
		rte_tel_data_add_dict_u64(sd, "calls", st->calls);
		rte_tel_data_add_dict_u64(sd, "packets", st->pkts);
		rte_tel_data_add_dict_u64(sd, "cycles", st->cycles);
		rte_tel_data_add_dict_u64(sd, "busy_cycles", st->busy_cycles);
		rte_tel_data_add_dict_u64(sd, "cycles_per_packet",
					  st->pkts ? st->busy_cycles / st->pkts : 0);
		rte_tel_data_add_dict_container(d, dp_stage_name((enum dp_stage)s), sd, 0);
	}
	return 0;
}

/* A counter that moved, into @p d (a reply holds 16 KiB: the ones at 0 would crowd out the
 * rest with a few dozen connections). */
static void
add_moved(struct rte_tel_data *d, const char *name, uint64_t v)
{
	if (v != 0)
		rte_tel_data_add_dict_u64(d, name, v);
}

/* Every drop counter that moved, by reason, one dictionary per port and per connection
 * (telemetry names allow no dots, so the owner is a level of nesting). */
static int
tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *sd;

	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < tctx->nports; i++) {
		const struct dp_port *p = &tctx->ports[i];
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (pd == NULL)
			continue;
		rte_tel_data_start_dict(pd);
		for (int v = 0; v < ROCE_V_COUNT; v++)
			if (sdr_counter_is_drop(&roce_verdict_table, (unsigned int)v))
				add_moved(pd, roce_verdict_name((enum roce_verdict)v),
					  dp_port_verdict(p, v));
		for (int c = 0; c < DP_PORT_NCOUNTERS; c++)
			if (dp_port_counter_is_drop((enum dp_port_counter)c))
				add_moved(pd, dp_port_counter_name((enum dp_port_counter)c),
					  dp_port_counter(p, c));
		add_named(d, p->cfg->name, pd);
	}
	for (unsigned int i = 0; i < tctx->nconns; i++) {
		const struct dp_conn *c = &tctx->conns[i];
		struct sdr_ep_counter_group g[SDR_EP_NGROUPS];
		struct rte_tel_data *cd;
		unsigned int ng;

		if (c->ep == NULL || (cd = rte_tel_data_alloc()) == NULL)
			continue;
		rte_tel_data_start_dict(cd);
		/* the drop counters of every part of it (no two parts share a name) */
		ng = sdr_ep_counter_groups(c->ep, g);
		for (unsigned int k = 0; k < ng; k++)
			for (unsigned int j = 0; j < g[k].table->n; j++)
				if (sdr_counter_is_drop(g[k].table, j))
					add_moved(cd, g[k].table->defs[j].name, g[k].v[j]);
		/* ctrl_rejected by reason */
		for (int e = 1; e < SDR_CTRL_E_COUNT; e++)
			add_moved(cd, sdr_ctrl_err_name(e), sdr_ep_ctrl_err_count(c->ep, e));
		add_named(d, c->cfg->name, cd);
	}
	/* the SDK service's, which belong to no connection */
	sd = rte_tel_data_alloc();
	if (sd != NULL) {
		rte_tel_data_start_dict(sd);
		for (unsigned int c = 0; c < SDK_S_NCOUNTERS; c++)
			if (sdr_counter_is_drop(&sdk_service_counter_table, c))
				add_moved(sd, sdk_service_counter_table.defs[c].name,
					  ctl_sdk_service_counter(tctx, (enum sdk_service_counter)c));
		add_named(d, "sdk_service", sd);
	}
	return 0;
}

static int
tel_hist(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct dp_conn *c = find_conn(params);
	const struct traffic_stats *s;
	char key[32];

	if (c == NULL || c->traffic == NULL)
		return -1;
	s = traffic_stats(c->traffic);
	rte_tel_data_start_dict(d);
	for (int b = 0; b < TRAFFIC_HIST_BUCKETS; b++) {
		if (!s->hist[b])
			continue;
		snprintf(key, sizeof(key), "lt_%lluus", 2ull << b);
		rte_tel_data_add_dict_u64(d, key, s->hist[b]);
	}
	return 0;
}

/*
 * The telemetry thread reads connections the poll loop may delete or rebuild at any moment
 * (sdrctl conn del / set): every command that looks at them holds the connections' lock.
 */
#define LOCKED(fn) \
static int \
fn##_locked(const char *cmd, const char *params, struct rte_tel_data *d) \
{ \
	int rc; \
	rte_spinlock_lock(&tctx->conns_lock); \
	rc = fn(cmd, params, d); \
	rte_spinlock_unlock(&tctx->conns_lock); \
	return rc; \
}
LOCKED(tel_conns)
LOCKED(tel_conn)
LOCKED(tel_drops)
LOCKED(tel_hist)

int
dp_telemetry_init(struct dp_ctx *ctx)
{
	tctx = ctx;
	return rte_telemetry_register_cmd("/sdr/ports", tel_ports,
					  "Ports with the counters and verdicts that moved; "
					  "param: a port name, for all of its counters") |
	       rte_telemetry_register_cmd("/sdr/conns", tel_conns_locked,
					  "Connections and their schemes") |
	       rte_telemetry_register_cmd("/sdr/conn", tel_conn_locked,
					  "One connection in detail. Parameters: connection name") |
	       rte_telemetry_register_cmd("/sdr/stages", tel_stages,
					  "Per-stage calls, packets, cycles, cycles per packet") |
	       rte_telemetry_register_cmd("/sdr/drops", tel_drops_locked,
					  "Every drop counter by reason") |
	       rte_telemetry_register_cmd("/sdr/hist", tel_hist_locked,
					  "Completion-time histogram. Parameters: connection name");
}
