/* SPDX-License-Identifier: BSD-3-Clause */
/* The periodic stats line and the end-of-run summary (text or one JSON object). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "dp.h"
#include "pools.h"
#include "rel_tx.h"
#include "stats.h"
#include "units.h"

uint64_t
dp_port_counter(const struct dp_port *p, enum dp_port_counter c)
{
	uint64_t n = 0;

	for (unsigned int s = 0; s < DP_NSLOTS; s++)
		n += p->stats[s].counters[c];
	return n;
}

uint64_t
dp_port_verdict(const struct dp_port *p, enum roce_verdict v)
{
	uint64_t n = 0;

	for (unsigned int s = 0; s < DP_NSLOTS; s++)
		n += p->stats[s].verdicts[v];
	return n;
}

struct dp_stage_stats
dp_stage_sum(const struct dp_ctx *ctx, enum dp_stage st, int slot)
{
	struct dp_stage_stats t = { 0 };

	for (unsigned int s = 0; s < DP_NSLOTS; s++) {
		const struct dp_stage_stats *x = &ctx->stages[s].s[st];

		if (slot >= 0 && (unsigned int)slot != s)
			continue;
		t.calls += x->calls;
		t.pkts += x->pkts;
		t.cycles += x->cycles;
		t.busy_cycles += x->busy_cycles;
	}
	return t;
}

static uint64_t
sum_verdict_drops(const struct dp_port *p)
{
	uint64_t n = 0;

	for (int v = 0; v < ROCE_V_COUNT; v++)
		if (sdr_counter_is_drop(&roce_verdict_table, (unsigned int)v))
			n += dp_port_verdict(p, v);
	return n;
}

void
dp_port_path_counters(const struct dp_port *p, int path, uint64_t *out)
{
	memset(out, 0, LINK_EMU_NCOUNTERS * sizeof(out[0]));
	for (unsigned int e = 0; e < DP_MAX_ENGINES; e++)
		for (unsigned int k = 0; k < LINK_EMU_MAX_PATHS; k++) {
			const struct link_emu *le = p->elink[e][k];
			const uint64_t *lc;

			if (le == NULL || (path >= 0 && k != (unsigned int)path))
				continue;
			lc = link_emu_counters(le);
			for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
				out[c] = c == LINK_EMU_C_QUEUE_PEAK ?
					 (lc[c] > out[c] ? lc[c] : out[c]) : out[c] + lc[c];
		}
}

void
dp_port_link_counters(const struct dp_port *p, uint64_t *out)
{
	dp_port_path_counters(p, -1, out);
}

unsigned int
dp_port_link_queued(const struct dp_port *p)
{
	unsigned int n = 0;

	for (unsigned int e = 0; e < DP_MAX_ENGINES; e++)
		for (unsigned int k = 0; k < LINK_EMU_MAX_PATHS; k++)
			if (p->elink[e][k] != NULL)
				n += link_emu_count(p->elink[e][k]);
	return n;
}

void
dp_engines_json(const struct dp_ctx *ctx)
{
	printf(",\"engines\":[");
	for (unsigned int e = 0; e < ctx->cfg.engines; e++) {
		struct dp_stage_stats rx = dp_stage_sum(ctx, DP_STAGE_RX, (int)e);
		struct dp_stage_stats out = dp_stage_sum(ctx, DP_STAGE_OUTPUT, (int)e);
		int first = 1;

		printf("%s{\"engine\":%u,\"lcore\":%u,\"rx_packets\":%" PRIu64 ",\"tx_packets\":%"
		       PRIu64 ",\"conns\":[", e ? "," : "", e, ctx->engine_lcore[e], rx.pkts,
		       out.pkts);
		for (unsigned int i = 0; i < ctx->nconns; i++) {
			if (ctx->conns[i].ep == NULL || ctx->conns[i].engine != e)
				continue;
			printf("%s\"%s\"", first ? "" : ",", ctx->conns[i].cfg->name);
			first = 0;
		}
		/* cycles per packet of each stage on this engine */
		printf("],\"cycles_per_packet\":{");
		for (int st = 0; st < DP_NSTAGES; st++) {
			struct dp_stage_stats t = dp_stage_sum(ctx, (enum dp_stage)st, (int)e);

			printf("%s\"%s\":%.1f", st ? "," : "", dp_stage_name((enum dp_stage)st),
			       t.pkts ? (double)t.busy_cycles / (double)t.pkts : 0.0);
		}
		printf("}}");
	}
	printf("]");
}

int
dp_port_counter_is_drop(enum dp_port_counter c)
{
	return sdr_counter_is_drop(&dp_port_counter_table, (unsigned int)c);
}

uint64_t
dp_port_drops(const struct dp_port *p)
{
	uint64_t n = sum_verdict_drops(p);

	for (int c = 0; c < DP_PORT_NCOUNTERS; c++)
		if (dp_port_counter_is_drop((enum dp_port_counter)c))
			n += dp_port_counter(p, c);
	return n;
}

void
dp_stats_line(const struct dp_ctx *ctx, double elapsed_s)
{
	static uint64_t last_rx[DP_MAX_PORTS], last_tx[DP_MAX_PORTS];
	static double last_s;
	double dt = elapsed_s - last_s > 0 ? elapsed_s - last_s : 1;
	char *line = NULL;
	size_t len = 0;
	/* written into memory under the lock, printed after it: a stdout that blocks (a pipe
	 * nobody reads) must not hold the lock the engines take to add a connection */
	FILE *f = open_memstream(&line, &len);

	if (f == NULL)
		return;
	fprintf(f, "[%7.1fs]", elapsed_s);
	rte_spinlock_lock((rte_spinlock_t *)&ctx->conns_lock);	/* see dp.h */
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];
		uint64_t rx = dp_port_counter(p, DP_PORT_RX_BYTES);
		uint64_t tx = dp_port_counter(p, DP_PORT_TX_BYTES);

		fprintf(f, " %s rx %.2f tx %.2f Gbit/s drop %" PRIu64, p->cfg->name,
		       (double)(rx - last_rx[i]) * 8e-9 / dt, (double)(tx - last_tx[i]) * 8e-9 / dt,
		       dp_port_drops(p));
		last_rx[i] = rx;
		last_tx[i] = tx;
	}
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct dp_conn *c = &ctx->conns[i];
		const uint64_t *rt;

		if (c->ep == NULL)
			continue;
		rt = sdr_ep_rel_tx_counters(c->ep);

		fprintf(f, " | %s", c->cfg->name);
		if (c->traffic)
			fprintf(f, " msgs %u/%u", traffic_completed(c->traffic), traffic_expected(c->traffic));
		fprintf(f, " retx %" PRIu64 " dec %" PRIu64, rt[REL_TX_RETRANSMITS],
		       sdr_ep_counters(c->ep)[SDR_EP_DECODES]);
	}
	rte_spinlock_unlock((rte_spinlock_t *)&ctx->conns_lock);
	fclose(f);
	puts(line);
	free(line);
	fflush(stdout);
	last_s = elapsed_s;
}

/*
 * The connection whose numbers stand for the run: the first that sends, else the first;
 * a striped one with all its stripes. NULL if none (or no memory); free with
 * traffic_destroy().
 */
static struct traffic *
lead_traffic(const struct dp_ctx *ctx)
{
	struct traffic *parts[DP_MAX_CONNS];
	int lead = -1;
	unsigned int n = 0;

	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct traffic *t = ctx->conns[i].traffic;

		if (t == NULL || ctx->conns[i].cfg->stripe != 0)
			continue;	/* a connection is led by its stripe 0 */
		if (lead < 0)
			lead = (int)i;
		if (traffic_stats(t)->sent || traffic_stats(t)->send_failed) {
			lead = (int)i;
			break;
		}
	}
	for (unsigned int i = 0; lead >= 0 && i < ctx->nconns; i++)
		if (ctx->conns[i].traffic &&
		    dp_config_conn_is(ctx->conns[i].cfg, ctx->conns[lead].cfg->name))
			parts[n++] = ctx->conns[i].traffic;
	return n ? traffic_join(parts, n) : NULL;
}

/*
 * Goodput of every sending connection together: their bytes over the time from the first
 * start to the last completion (several connections: engines, or several pairs). @p n is
 * set to how many connections send.
 */
static double
goodput_all(const struct dp_ctx *ctx, unsigned int *n, uint64_t *first_ns, uint64_t *last_ns)
{
	uint64_t bytes = 0, first = UINT64_MAX, last = 0;

	*n = 0;
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct traffic *t = ctx->conns[i].traffic;
		const struct traffic_stats *s;

		if (t == NULL || (s = traffic_stats(t))->sent == 0)
			continue;
		*n += ctx->conns[i].cfg->stripe == 0;	/* connections, not stripes */
		bytes += s->bytes;
		first = s->first_ns < first ? s->first_ns : first;
		last = s->last_ns > last ? s->last_ns : last;
	}
	*first_ns = first;
	*last_ns = last;
	return last > first ? (double)bytes * 8 / (double)(last - first) : 0;
}

int
dp_traffic_done(const struct dp_ctx *ctx)
{
	int any = 0;

	for (unsigned int i = 0; i < ctx->nconns; i++) {
		if (ctx->conns[i].traffic == NULL)
			continue;
		any = 1;
		if (!traffic_done(ctx->conns[i].traffic))
			return 0;
	}
	return any;
}

int
dp_traffic_ok(const struct dp_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct traffic *t = ctx->conns[i].traffic;

		/* an endless run (count=0) only fails by failed messages */
		if (t && (!traffic_ok(t) || (traffic_expected(t) && !traffic_done(t))))
			return 0;
	}
	return 1;
}

static void
json_drops(const struct dp_ctx *ctx)
{
	int first = 1;

	printf("\"drops\":{");
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];

		for (int v = 0; v < ROCE_V_COUNT; v++) {
			if (!dp_port_verdict(p, v) ||
			    !sdr_counter_is_drop(&roce_verdict_table, (unsigned int)v))
				continue;
			printf("%s\"%s.%s\":%" PRIu64, first ? "" : ",", p->cfg->name,
			       roce_verdict_name((enum roce_verdict)v), dp_port_verdict(p, v));
			first = 0;
		}
		for (int c = 0; c < DP_PORT_NCOUNTERS; c++) {
			if (!dp_port_counter(p, c) ||
			    !dp_port_counter_is_drop((enum dp_port_counter)c))
				continue;
			printf("%s\"%s.%s\":%" PRIu64, first ? "" : ",", p->cfg->name,
			       dp_port_counter_name((enum dp_port_counter)c), dp_port_counter(p, c));
			first = 0;
		}
	}
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		struct sdr_ep_counter_group g[SDR_EP_NGROUPS];
		unsigned int ng;

		if (ctx->conns[i].ep == NULL)
			continue;
		/* the drop counters of every part of the connection */
		ng = sdr_ep_counter_groups(ctx->conns[i].ep, g);
		for (unsigned int k = 0; k < ng; k++) {
			for (unsigned int c = 0; c < g[k].table->n; c++) {
				if (!g[k].v[c] || !sdr_counter_is_drop(g[k].table, c))
					continue;
				printf("%s\"%s.%s\":%" PRIu64, first ? "" : ",",
				       ctx->conns[i].cfg->name, g[k].table->defs[c].name, g[k].v[c]);
				first = 0;
			}
		}
	}
	/* the SDK service's, which belong to no connection */
	for (unsigned int c = 0; c < SDK_S_NCOUNTERS; c++) {
		uint64_t v = ctl_sdk_service_counter(ctx, (enum sdk_service_counter)c);

		if (!v || !sdr_counter_is_drop(&sdk_service_counter_table, c))
			continue;
		printf("%s\"sdk_service.%s\":%" PRIu64, first ? "" : ",",
		       sdk_service_counter_table.defs[c].name, v);
		first = 0;
	}
	printf("}");
}

/* A connection's paths in the JSON summary: each path as its sender saw it at the end,
 * and the moves the management thread made (engines stopped: read as they are). */
static void
summary_paths(const struct dp_conn *c)
{
	const struct path_sel *ps = sdr_ep_paths(c->ep);
	const struct dp_paths *d = &c->pathd;

	printf(",\"paths\":{\"policy\":\"%s\",\"objective\":\"%s\",\"decisions\":%" PRIu64
	       ",\"moves\":%u,\"last\":\"%s\",\"path\":[", path_policy_name(ps->cfg.policy),
	       path_objective_name(ps->cfg.objective), d->decisions, d->moves,
	       d->decisions ? d->last.why : "");
	for (unsigned int k = 0; k < ps->cfg.npaths; k++) {
		struct sdr_auto_estimate e;

		sdr_auto_estimate(&ps->path[k].est, &e);
		printf("%s{\"path\":%u,\"qpns\":%u,\"frames\":%" PRIu64 ",\"judged\":%" PRIu64
		       ",\"loss\":%.6g,\"rtt_s\":%.6g,\"rtt_samples\":%" PRIu64 ",\"failed\":%s}",
		       k ? "," : "", k + 1, ps->path[k].nqp, ps->path[k].frames,
		       ps->path[k].reported, e.p, ps->path[k].rtt_min_ns * 1e-9,
		       ps->path[k].rtt.rtt_samples, ps->path[k].failed ? "true" : "false");
	}
	printf("]}");
}

void
dp_summary(const struct dp_ctx *ctx, int json, double elapsed_s)
{
	struct traffic *lead = lead_traffic(ctx);

	/* --traffic ...,log=FILE: every completion time of the connection reported on */
	if (lead != NULL && ctx->traffic_log[0] && traffic_write_log(lead, ctx->traffic_log) != 0)
		fprintf(stderr, "sdr-dataplane: cannot write %s\n", ctx->traffic_log);
	uint32_t verified = 0, unchecked = 0, received = 0, failed = 0, sent = 0;
	uint32_t send_failed = 0, recv_failed = 0, corrupt = 0;
	uint64_t retx = 0, dec = 0, fb = 0, w0 = 0, w1 = 0;
	unsigned int nsend = 0;
	double all;

	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct traffic *t = ctx->conns[i].traffic;
		const struct traffic_stats *s;

		if (t == NULL)
			continue;
		s = traffic_stats(t);
		verified += s->verified;
		unchecked += s->unchecked;
		received += s->received;
		sent += s->sent;
		failed += s->send_failed + s->recv_failed + s->corrupt;
		send_failed += s->send_failed;
		recv_failed += s->recv_failed;
		corrupt += s->corrupt;
		retx += s->retransmitted;
		dec += s->decoded;
		fb += s->fallback;
	}
	if (json) {
		printf("{\"instance\":\"%s\",\"elapsed_s\":%.3f,\"ok\":%s,", ctx->cfg.name, elapsed_s,
		       dp_traffic_ok(ctx) ? "true" : "false");
		/* which mempool handler the mbufs came from: a LIFO one unless its driver is
		 * missing (pools.c), which a bundle or a static build can lack */
		if (ctx->pool[0] != NULL)
			printf("\"mbuf_handler\":\"%s\",", sdr_pool_handler(ctx->pool[0]));
		/* the buffers mapped for the ports' DMA (dma.h), the generator's still */
		if (dp_dma_active(ctx)) {
			char js[1024];

			dp_dma_json(ctx, js, sizeof(js));
			printf("\"dma\":%s,", js);
		}
		if (lead != NULL) {
			printf("\"messages\":%u,\"sent\":%u,\"received\":%u,\"verified\":%u,"
			       "\"unchecked\":%u,\"failed\":%u,\"send_failed\":%u,\"recv_failed\":%u,\"corrupt\":%u,"
			       "\"mean_s\":%.9g,\"p50_s\":%.9g,\"p99_s\":%.9g,"
			       "\"p999_s\":%.9g,\"max_s\":%.9g,\"goodput_gbps\":%.6g,"
			       "\"retransmitted_chunks\":%" PRIu64 ",\"decoded_submessages\":%" PRIu64
			       ",\"fallback_submessages\":%" PRIu64 ",",
			       sent > received ? sent : received, sent, received, verified,
			       unchecked, failed,
			       send_failed, recv_failed, corrupt, traffic_mean(lead), traffic_percentile(lead, 0.5),
			       traffic_percentile(lead, 0.99), traffic_percentile(lead, 0.999),
			       traffic_percentile(lead, 1.0), traffic_goodput_gbps(lead), retx, dec, fb);
			all = goodput_all(ctx, &nsend, &w0, &w1);
			printf("\"goodput_all_gbps\":%.6g,\"sending_conns\":%u,", all, nsend);
			/* the window goodput_all_gbps is over, on CLOCK_MONOTONIC: the runs of
			 * several processes at once are summed over the union of theirs */
			if (w1 > w0)
				printf("\"window_mono_s\":[%.9f,%.9f],",
				       (double)(ctx->start_mono_ns + w0) * 1e-9,
				       (double)(ctx->start_mono_ns + w1) * 1e-9);
		}
		json_drops(ctx);
		printf(",\"ports\":{");
		for (unsigned int i = 0; i < ctx->nports; i++) {
			const struct dp_port *p = &ctx->ports[i];

			printf("%s\"%s\":{\"rx_pkts\":%" PRIu64 ",\"tx_pkts\":%" PRIu64, i ? "," : "",
			       p->cfg->name, dp_port_counter(p, DP_PORT_RX_PKTS),
			       dp_port_counter(p, DP_PORT_TX_PKTS));
			for (int v = 0; v < ROCE_V_COUNT; v++)
				if (dp_port_verdict(p, v))
					printf(",\"%s\":%" PRIu64, roce_verdict_name((enum roce_verdict)v),
					       dp_port_verdict(p, v));
			/* how its frames went out (zero-copy or not), and events that drop nothing */
			printf(",\"zero_copy\":%s,\"events\":{", p->zero_copy ? "true" : "false");
			for (int c = 0, first = 1; c < DP_PORT_NCOUNTERS; c++) {
				if (dp_port_counter_table.defs[c].kind == SDR_CK_OK ||
				    dp_port_counter_is_drop((enum dp_port_counter)c))
					continue;
				printf("%s\"%s\":%" PRIu64, first ? "" : ",",
				       dp_port_counter_name((enum dp_port_counter)c),
				       dp_port_counter(p, c));
				first = 0;
			}
			printf("}");
			if (p->link) {
				uint64_t lc[LINK_EMU_NCOUNTERS];

				dp_port_link_counters(p, lc);

				printf(",\"link\":{");
				for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
					printf("%s\"%s\":%" PRIu64, c ? "," : "",
					       link_emu_counter_name((enum link_emu_counter)c), lc[c]);
				/* a link with paths: each path's counters */
				for (unsigned int k = 0; p->npaths > 1 && k < p->npaths; k++) {
					dp_port_path_counters(p, (int)k, lc);
					printf("%s{", k ? "," : ",\"paths\":[");
					for (int c = 0; c < LINK_EMU_NCOUNTERS; c++)
						printf("%s\"%s\":%" PRIu64, c ? "," : "",
						       link_emu_counter_name((enum link_emu_counter)c),
						       lc[c]);
					printf("}%s", k + 1 == p->npaths ? "]" : "");
				}
				printf("}");
			}
			printf("}");
		}
		printf("},\"conns\":{");
		for (unsigned int i = 0, first = 1; i < ctx->nconns; i++) {
			const uint64_t *ec;

			if (ctx->conns[i].ep == NULL)
				continue;
			ec = sdr_ep_counters(ctx->conns[i].ep);
			printf("%s\"%s\":{", first ? "" : ",", ctx->conns[i].cfg->name);
			for (int c = 0; c < SDR_EP_NCOUNTERS; c++)
				printf("%s\"%s\":%" PRIu64, c ? "," : "",
				       sdr_ep_counter_name((enum sdr_ep_counter)c), ec[c]);
			{
				/* the timers: what they run on, how often the sender's fired */
				const uint64_t *rc = sdr_ep_rel_tx_counters(ctx->conns[i].ep);
				uint64_t trtt, rto = sdr_ep_rto(ctx->conns[i].ep, &trtt);
				uint64_t rx_rtt, rx_rto = sdr_ep_rx_rto(ctx->conns[i].ep, &rx_rtt);

				printf(",\"rto_s\":%.6g,\"timer_rtt_s\":%.6g,\"rto_expired\":%" PRIu64
				       ",\"rto_backoffs\":%" PRIu64 ",\"rx_rto_s\":%.6g,"
				       "\"rx_timer_rtt_s\":%.6g", (double)rto * 1e-9,
				       (double)trtt * 1e-9, rc[REL_TX_RTO_FIRED], rc[REL_TX_RTO_BACKOFFS],
				       (double)rx_rto * 1e-9, (double)rx_rtt * 1e-9);
			}
			if (ctx->conns[i].traffic != NULL &&
			    traffic_completed(ctx->conns[i].traffic) > 0) {
				/* the completion times of its own built-in traffic */
				const struct traffic *t = ctx->conns[i].traffic;
				const struct traffic_stats *ts = traffic_stats(t);

				printf(",\"traffic\":{\"completed\":%u,\"mean_s\":%.9g,"
				       "\"p99_s\":%.9g", traffic_completed(t), traffic_mean(t),
				       traffic_percentile(t, 0.99));
				/* a sender's own goodput and window (from the run's start), which
				 * goodput_all_gbps takes the union of */
				if (ts->sent > 0 && ts->last_ns > ts->first_ns)
					printf(",\"goodput_gbps\":%.6g,\"window_s\":[%.9f,%.9f]",
					       traffic_goodput_gbps(t), (double)ts->first_ns * 1e-9,
					       (double)ts->last_ns * 1e-9);
				printf("}");
			}
			if (ctx->conns[i].cfg->scheme_auto) {
				/* the send side's loss estimate from the peer's REPORTs */
				struct sdr_auto_estimate e;
				struct sdr_scheme now = sdr_ep_scheme(ctx->conns[i].ep, NULL);
				const struct path_est *pe = sdr_ep_path(ctx->conns[i].ep);
				char sn[SDR_SCHEME_CHUNK_NAME_MAX];
				uint64_t t = dp_now_ns(ctx);

				sdr_auto_estimate(sdr_ep_auto(ctx->conns[i].ep), &e);
				printf(",\"auto\":{\"scheme\":\"%s\",\"loss\":%.6g,\"loss_lo\":%.6g,"
				       "\"loss_hi\":%.6g,\"total_pkts\":%" PRIu64 ",\"total_lost\":%"
				       PRIu64 ",\"rtt_min_s\":%.6g,\"srtt_s\":%.6g,\"rtt_samples\":%"
				       PRIu64 ",\"rate_max_bps\":%.6g,\"rate_samples\":%" PRIu64 "}",
				       sdr_scheme_format_chunk(&now, ctx->conns[i].cfg->ep.attr.chunk_size,
							       sn, sizeof(sn)), e.p, e.lo, e.hi,
				       e.total_pkts, e.total_lost, (double)path_est_min_rtt(pe, t) * 1e-9,
				       pe->srtt_ns * 1e-9, pe->rtt_samples, path_est_max_rate(pe, t),
				       pe->rate_samples);
			}
			if (sdr_ep_paths(ctx->conns[i].ep) != NULL)
				summary_paths(&ctx->conns[i]);
			printf("}");
			first = 0;
		}
		printf("}");
		if (ctx->cfg.mode == DP_PIPE_ENGINES)
			dp_engines_json(ctx);
		if (ctx->cfg.mode == DP_PIPE_SPLIT) {
			/* each receive worker: its lcore and the packets it received */
			printf(",\"rx_workers\":[");
			for (unsigned int k = 0; k < ctx->cfg.rx_lcores; k++)
				printf("%s{\"lcore\":%u,\"packets\":%" PRIu64 "}", k ? "," : "",
				       ctx->rx_lcore_id[k],
				       dp_stage_sum(ctx, DP_STAGE_RX, (int)(1 + k)).pkts);
			printf("]");
		}
		printf(",\"tsc_hz\":%" PRIu64 ",\"stages\":{", ctx->tsc_hz);
		for (int st = 0; st < DP_NSTAGES; st++) {
			struct dp_stage_stats t = dp_stage_sum(ctx, (enum dp_stage)st, -1);

			printf("%s\"%s\":{\"calls\":%" PRIu64 ",\"packets\":%" PRIu64
			       ",\"cycles\":%" PRIu64 ",\"busy_cycles\":%" PRIu64 "}", st ? "," : "",
			       dp_stage_name((enum dp_stage)st), t.calls, t.pkts, t.cycles,
			       t.busy_cycles);
		}
		printf("}}\n");
		fflush(stdout);
		traffic_destroy(lead);
		return;
	}
	printf("\n=== sdr-dataplane %s: %.1f s ===\n", ctx->cfg.name, elapsed_s);
	if (lead != NULL) {
		char b[5][32];

		printf("messages  sent %u  received %u  verified %u  failed %u", sent, received,
		       verified, failed);
		printf(unchecked ? "  unchecked %u (verify=no)\n" : "\n", unchecked);
		if (failed)
			printf("failures  sends %u  receives %u  corrupt %u\n", send_failed,
			       recv_failed, corrupt);
		printf("completion  mean %s  p50 %s  p99 %s  p99.9 %s  max %s\n",
		       units_fmt_time(traffic_mean(lead), b[0], sizeof(b[0])),
		       units_fmt_time(traffic_percentile(lead, 0.5), b[1], sizeof(b[1])),
		       units_fmt_time(traffic_percentile(lead, 0.99), b[2], sizeof(b[2])),
		       units_fmt_time(traffic_percentile(lead, 0.999), b[3], sizeof(b[3])),
		       units_fmt_time(traffic_percentile(lead, 1.0), b[4], sizeof(b[4])));
		printf("goodput %.3f Gbit/s  retransmitted chunks %" PRIu64 "  decoded submessages %"
		       PRIu64 "  fallbacks %" PRIu64 "\n", traffic_goodput_gbps(lead), retx, dec, fb);
		all = goodput_all(ctx, &nsend, &w0, &w1);
		if (nsend > 1)
			printf("goodput of the %u sending connections together %.3f Gbit/s\n", nsend,
			       all);
	}
	for (unsigned int i = 0; i < ctx->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];

		printf("port %s: rx %" PRIu64 " pkts, tx %" PRIu64 " pkts", p->cfg->name,
		       dp_port_counter(p, DP_PORT_RX_PKTS), dp_port_counter(p, DP_PORT_TX_PKTS));
		for (int v = 0; v < ROCE_V_COUNT; v++)
			if (dp_port_verdict(p, v) &&
			    sdr_counter_is_drop(&roce_verdict_table, (unsigned int)v))
				printf(", %s %" PRIu64, roce_verdict_name((enum roce_verdict)v),
				       dp_port_verdict(p, v));
		for (int c = 0; c < DP_PORT_NCOUNTERS; c++)
			if (dp_port_counter(p, c) && dp_port_counter_table.defs[c].kind != SDR_CK_OK)
				printf(", %s %" PRIu64, dp_port_counter_name((enum dp_port_counter)c),
				       dp_port_counter(p, c));
		printf("\n");
	}
	printf("result: %s\n", !dp_traffic_ok(ctx) ? "FAILED" :
	       lead != NULL && !traffic_verifies(lead) ?
	       "every message delivered, not checked (verify=no)" : "every message verified");
	fflush(stdout);
	traffic_destroy(lead);
}
