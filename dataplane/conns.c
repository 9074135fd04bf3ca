/* SPDX-License-Identifier: BSD-3-Clause */
/* Static connections: an endpoint per [conn NAME], its QPNs registered on its port. */
#include <stdio.h>
#include <string.h>

#include "conns.h"
#include "dp.h"
#include "holds.h"
#include "rss.h"
#include "seqcount.h"
#include "units.h"

/* The largest RoCE MTU (256 ... 4096, a power of two) of at most @p room payload bytes. */
static unsigned int
mtu_fitting(unsigned int room)
{
	unsigned int m = 4096;

	while (m > 256 && m > room)
		m /= 2;
	return m;
}

int
dp_conn_prepare(const struct dp_ctx *ctx, struct dp_conn_cfg *cc, struct sdr_ep **ep,
		char *err, size_t errlen)
{
	const struct dp_cfg *cfg = &ctx->cfg;
	struct roce_path *path = &cc->ep.path;
	int pi = dp_config_port(cfg, cc->port);
	const struct roce_path ipv = { .ip_version = cc->peer_ip_version };
	unsigned int ip_len, around;
	const struct dp_port *p;
	uint64_t need;

	if (pi < 0 || (unsigned int)pi >= ctx->nports) {
		snprintf(err, errlen, "[conn %s] no port '%s'", cc->name, cc->port);
		return -1;
	}
	p = &ctx->ports[pi];
	/* a data packet: IP, UDP, BTH, RETH, ImmDt, payload, ICRC */
	ip_len = roce_build_ip_len(&ipv, ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, cc->ep.attr.mtu);
	around = ip_len - cc->ep.attr.mtu;
	if (ip_len > p->l3_mtu) {
		snprintf(err, errlen, "[conn %s] mtu %u makes %u-byte IP packets; port %s carries at "
			 "most %u (set the connection's mtu to %u or less)", cc->name,
			 cc->ep.attr.mtu, ip_len, cc->port, p->l3_mtu,
			 mtu_fitting(p->l3_mtu > around ? p->l3_mtu - around : 0));
		return -1;
	}
	memcpy(path->src_mac, p->mac.addr_bytes, 6);
	memcpy(path->dst_mac, cc->peer_mac, 6);
	path->ip_version = cc->peer_ip_version;
	memcpy(path->dst_ip, cc->peer_ip, 16);
	if (cc->peer_ip_version == 4 && p->cfg->has_ipv4) {
		memcpy(path->src_ip, p->cfg->ipv4, 4);
	} else if (cc->peer_ip_version == 6 && p->cfg->has_ipv6) {
		memcpy(path->src_ip, p->cfg->ipv6, 16);
	} else {
		snprintf(err, errlen, "[conn %s] peer_ip is IPv%u but [port %s] has no ipv%u "
			 "address", cc->name, cc->peer_ip_version, p->cfg->name,
			 cc->peer_ip_version);
		return -1;
	}
	/* steering = rss: every frame leaves with a source port that the peer's RSS (configured
	 * as ours: our key, entry i -> queue i mod engines) puts on the engine that owns the
	 * connection there — the one both ends compute for it */
	cc->ep.steer_queues = 0;
	if (p->cfg->steering == DP_STEER_RSS) {
		cc->ep.steer_queues = (uint8_t)cfg->engines;
		cc->ep.steer_queue = (uint8_t)dp_conn_engine(cfg, cc);
		memcpy(cc->ep.steer_key, rss_default_key, RSS_KEY_LEN);
	}
	/* a scheme change's codes are made by the management thread (ctl_auto.c), never on
	 * the engine that runs the endpoint */
	cc->ep.codes_outside = cc->ep.rel.scheme_may_change;
	/* [pipeline] fec = lcore: the endpoint hands its encodes and decodes out as jobs */
	cc->ep.fec_jobs = cfg->fec_lcore ? cfg->fec_jobs : 0;
	/* zero-copy send: a send completes once no frame reads its buffer (holds.h) */
	cc->ep.held = NULL;
	cc->ep.held_arg = NULL;
	if (p->zero_copy) {
		cc->ep.held_arg = dp_holds_create(cc->ep.attr.max_inflight);
		cc->ep.held = cc->ep.held_arg ? dp_holds_held : NULL;
	}
	need = sdr_ep_buffer_bytes(&cc->ep);
	if (need != UINT64_MAX && need > cfg->conn_memory) {
		char a[32], b[32], c[32], d[32], sch[SDR_SCHEME_NAME_MAX];

		dp_holds_put(cc->ep.held_arg);
		cc->ep.held = NULL;
		cc->ep.held_arg = NULL;
		snprintf(err, errlen, "[conn %s] would need %s of buffers (%u messages of up to %s "
			 "in flight, %s chunks, %s): more than [dataplane] conn_memory %s", cc->name,
			 units_fmt_size(need, a, sizeof(a)), cc->ep.attr.max_inflight,
			 units_fmt_size(cc->ep.attr.max_msg_size, b, sizeof(b)),
			 units_fmt_size(cc->ep.attr.chunk_size, c, sizeof(c)),
			 sdr_scheme_format(&cc->ep.rel.scheme, sch, sizeof(sch)),
			 units_fmt_size(cfg->conn_memory, d, sizeof(d)));
		return -1;
	}
	*ep = cc->ep.held || !p->zero_copy ? sdr_ep_create(&cc->ep) : NULL;
	if (*ep == NULL) {
		dp_holds_put(cc->ep.held_arg);
		cc->ep.held = NULL;
		cc->ep.held_arg = NULL;
		snprintf(err, errlen, "[conn %s] cannot create the endpoint (out of memory for "
			 "%u messages of %llu bytes?)", cc->name, cc->ep.attr.max_inflight,
			 (unsigned long long)cc->ep.attr.max_msg_size);
		return -ENOMEM;
	}
	return 0;
}

unsigned int
dp_conn_engine(const struct dp_cfg *cfg, const struct dp_conn_cfg *cc)
{
	/* a stripe: its connection's first pair of QPNs (stripe 0's), then the stripe */
	uint32_t skip = cc->stripe * ((uint32_t)cc->ep.attr.channels * cc->ep.attr.generations + 1);
	uint32_t lo = cc->ep.attr.local_qpn - skip, hi = cc->ep.attr.remote_qpn - skip, t;
	uint64_t h;

	if (cfg->mode != DP_PIPE_ENGINES || cfg->engines < 2)
		return 0;
	if (cc->engine >= 0)
		return ((unsigned int)cc->engine + cc->stripe) % cfg->engines;
	/* both ends compute the same from the pair of QPNs, whichever side they are on */
	if (lo > hi) {
		t = lo;
		lo = hi;
		hi = t;
	}
	/* splitmix64's finalizer: every bit of both QPNs moves the result */
	h = (uint64_t)lo << 32 | hi;
	h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
	h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
	h ^= h >> 31;
	return (unsigned int)((h % cfg->engines + cc->stripe) % cfg->engines);
}

void
dp_ep_free(struct sdr_ep *ep)
{
	struct dp_holds *h;

	if (ep == NULL)
		return;
	h = sdr_ep_config(ep)->held == dp_holds_held ? sdr_ep_config(ep)->held_arg : NULL;
	sdr_ep_destroy(ep);
	if (h != NULL)
		dp_holds_put(h);
}

/*
 * Engine @p e's QPN table of port @p p: [@p base, + @p n) to connection @p i, or (@p n 0)
 * connection @p i's range out. Under the table's sequence count: the other engines read it
 * when a packet's QPN is not theirs (pipeline.c). Jobs run one at a time: one writer.
 */
static int
qpns_change(struct dp_port *p, unsigned int e, uint32_t base, uint32_t n, unsigned int i)
{
	int rc;

	seqcount_write_begin(&p->eqpns_seq[e]);
	rc = n ? qpn_table_add(p->eqpns[e], base, n, i) : qpn_table_del(p->eqpns[e], i);
	seqcount_write_end(&p->eqpns_seq[e]);
	return rc;
}

/*
 * The connection's QPNs on its port, to index @p i, in the table of its engine (the only
 * one that engine looks up). A range another engine's table has is refused too: jobs run
 * one at a time, so those tables do not change meanwhile.
 */
static int
qpns_add(struct dp_ctx *ctx, const struct dp_conn_cfg *cc, unsigned int i, char *err,
	 size_t errlen)
{
	uint32_t nqpn = (uint32_t)cc->ep.attr.channels * cc->ep.attr.generations + 1, ci, b;
	struct dp_port *p = &ctx->ports[dp_config_port(&ctx->cfg, cc->port)];
	unsigned int own = dp_conn_engine(&ctx->cfg, cc);
	int rc = 0;

	for (unsigned int e = 0; e < ctx->cfg.engines && rc == 0; e++)
		for (uint32_t q = 0; e != own && q < nqpn && rc == 0; q++)
			if (qpn_table_lookup(p->eqpns[e], cc->ep.attr.local_qpn + q, &ci, &b) == 0 &&
			    ci != i)
				rc = -EEXIST;
	if (rc == 0)
		rc = qpns_change(p, own, cc->ep.attr.local_qpn, nqpn, i);

	if (rc != 0)
		snprintf(err, errlen, "[conn %s] QPNs 0x%x..0x%x: %s", cc->name,
			 cc->ep.attr.local_qpn, cc->ep.attr.local_qpn + nqpn - 1,
			 rc == -EEXIST ? "overlap another connection" : "invalid range");
	return rc;
}

int
dp_conn_install(struct dp_ctx *ctx, unsigned int i, const struct dp_conn_cfg *cc,
		struct sdr_ep *ep, char *err, size_t errlen)
{
	struct dp_conn *c = &ctx->conns[i];
	struct dp_conn_cfg old = ctx->cfg.conns[i];
	struct sdr_ep *old_ep = c->ep;

	/* a rebuild runs on the connection's engine, and stays there */
	if (old_ep != NULL && dp_conn_engine(&ctx->cfg, cc) != c->engine) {
		snprintf(err, errlen, "[conn %s] cannot move from engine %u to %u while it runs "
			 "(delete it and add it again)", cc->name, c->engine,
			 dp_conn_engine(&ctx->cfg, cc));
		return -1;
	}
	/* a rebuild: the old QPNs go first (the new ones may overlap them) */
	if (old_ep != NULL)
		qpns_change(&ctx->ports[c->port], c->engine, 0, 0, i);
	if (qpns_add(ctx, cc, i, err, errlen) != 0) {
		if (old_ep != NULL)
			qpns_add(ctx, &old, i, err, 0);	/* they fitted before */
		return -1;
	}
	ctx->cfg.conns[i] = *cc;
	if (i >= ctx->cfg.nconns)
		ctx->cfg.nconns = i + 1;
	c->cfg = &ctx->cfg.conns[i];
	c->port = (unsigned int)dp_config_port(&ctx->cfg, cc->port);
	c->engine = dp_conn_engine(&ctx->cfg, cc);
	c->epoch++;
	/* published last: an engine that sees the endpoint sees the rest (mine(), pipeline.c) */
	__atomic_store_n(&c->ep, ep, __ATOMIC_RELEASE);
	if (old_ep == NULL) {
		c->owner = -1;
		c->creator = -1;
	}
	if (i >= ctx->nconns)
		ctx->nconns = i + 1;
	return 0;
}

struct sdr_ep *
dp_conn_remove(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_conn *c = &ctx->conns[i];
	struct sdr_ep *ep = c->ep;

	if (ep == NULL)
		return NULL;
	__atomic_store_n(&c->ep, NULL, __ATOMIC_RELEASE);
	qpns_change(&ctx->ports[c->port], c->engine, 0, 0, i);
	c->owner = -1;
	c->creator = -1;
	return ep;
}

int
dp_conn_start(struct dp_ctx *ctx, unsigned int i, char *err, size_t errlen)
{
	struct dp_conn_cfg cc = ctx->cfg.conns[i];
	struct sdr_ep *ep;

	if (dp_conn_prepare(ctx, &cc, &ep, err, errlen) != 0)
		return -1;
	if (dp_conn_install(ctx, i, &cc, ep, err, errlen) != 0) {
		dp_ep_free(ep);
		return -1;
	}
	return 0;
}

/* Take connection @p i down: its QPNs stop resolving, its endpoint is freed. */
void
dp_conn_stop(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_conn *c = &ctx->conns[i];
	size_t len;
	void *va;

	/* its messages have ended: no frame points into its send buffers (dma.h) */
	if (traffic_send_area(c->traffic, &va, &len) == 0)
		dp_dma_del(ctx, va);
	traffic_destroy(c->traffic);
	c->traffic = NULL;
	dp_ep_free(dp_conn_remove(ctx, i));
}

int
dp_conns_init(struct dp_ctx *ctx, char *err, size_t errlen)
{
	char e[256];

	for (unsigned int i = 0; i < ctx->cfg.nconns; i++)
		if (dp_conn_start(ctx, i, e, sizeof(e)) != 0) {
			snprintf(err, errlen, "%s: %s", ctx->cfg.file, e);	/* name the file */
			return -1;
		}
	return 0;
}

void
dp_conns_free(struct dp_ctx *ctx)
{
	unsigned int n;

	/* the telemetry thread lives on, and reads the connections under this lock: there
	 * are none left for it to read before they are freed */
	rte_spinlock_lock(&ctx->conns_lock);
	n = ctx->nconns;
	ctx->nconns = 0;
	rte_spinlock_unlock(&ctx->conns_lock);
	for (unsigned int i = 0; i < n; i++)
		dp_conn_stop(ctx, i);
}
