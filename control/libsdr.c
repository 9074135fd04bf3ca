/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr: the application SDK over the control plane (sdr_shm.h). The context's own segment
 * holds its queues and its arena; everything else — which requests are out, the receives'
 * state, the free extents of the arena — lives here, in the application's private memory.
 * What comes back from the dataplane is checked against it: a completion names its request
 * by a generation-tagged index into this side's tables, never by a pointer.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#include "libsdr.h"
#include "sdr_shm.h"

#define SWQ 2048		/* per-QP software completion queue (power of two) */
/*
 * Sends and receives a context may have in the dataplane at once (posted, not yet completed
 * or released). Half the queue depth: whatever waits for room in the dataplane then never
 * blocks the "recv complete" that would make room.
 */
#define MAX_REQUESTS (SDR_SHM_QUEUE_DEPTH / 2)
/* free ranges of the arena: a hole between any two live regions, and every receive has
 * one (its bitmap), so room for all of those and the application's own regions */
#define MAX_EXTENTS (2 * MAX_REQUESTS + 64)
#define CALL_MS 5000
#define ID_RECV (1ull << 63)	/* request ids: kind, generation, index */

struct extent {
	uint64_t off;
	uint64_t len;
};

struct sdr_mr {
	struct sdr_context *ctx;
	uint64_t off;		/* from the start of the arena */
	uint64_t len;
};

struct swq {
	struct sdr_completion e[SWQ];
	uint32_t gen[SWQ];	/* receives: the generation of e[].recv when it completed */
	uint32_t head;
	uint32_t n;
};

struct sdr_qp {
	struct sdr_context *ctx;
	char name[32];
	int conn;
	uint32_t queue;		/* the queue pair of its requests and completions (its engine) */
	/*
	 * A striped connection ([conn] stripes = N): message n goes on stripe n mod N, a
	 * connection of its own ("NAME/s") with its own engine, at both ends alike, so the
	 * n-th message still lands in the n-th receive. Stripe 0 is conn and queue.
	 */
	uint32_t nstripes;
	int sconn[SDR_SHM_MAX_QUEUES];
	uint32_t squeue[SDR_SHM_MAX_QUEUES];
	uint64_t nsent, nposted;	/* sends and receives posted: the next one's stripe */
	uint32_t sends_out;	/* its sends in the dataplane: with sends.n, at most SWQ */
	unsigned int prio;	/* of the sends posted from now on (sdr_send_priority()) */
	int created;		/* sdr_qp_create() made the connection */
	struct sdr_qp_info info;
	struct swq sends;
	struct swq recvs;
	struct sdr_qp *next;
};

/* A receive: an entry of the context's table, named to the dataplane by its id. */
struct sdr_recv {
	struct sdr_context *ctx;	/* (set once: a stale handle still finds its context) */
	uint32_t gen;
	uint8_t used;
	uint8_t done;
	uint8_t abandoned;	/* completed by the application before the dataplane did */
	struct sdr_qp *qp;
	uint64_t user_cookie;
	struct sdr_mr *bitmap;
	uint32_t nchunks;
	uint32_t imm;
	uint32_t imm_bits;
	uint64_t handle;	/* the dataplane's, from the completion */
	uint32_t stripe;	/* the QP's stripe it was posted on */
};

/* A send in the dataplane. */
struct send_ent {
	uint32_t gen;
	uint8_t used;
	struct sdr_qp *qp;
	uint64_t user_cookie;
};

struct sdr_context {
	struct sdr_client cl;
	struct extent free[MAX_EXTENTS];
	unsigned int nfree;
	struct sdr_qp *qps;
	uint32_t requests;	/* sends and receives in the dataplane (MAX_REQUESTS at most) */
	struct sdr_recv recvs[MAX_REQUESTS];
	struct send_ent sends[MAX_REQUESTS];
	/* free receive slots, first in first out: a handle's slot is reused as late as can be */
	uint32_t recv_free[MAX_REQUESTS], recv_free_head, nrecv_free;
	uint32_t send_free[MAX_REQUESTS], nsend_free;
	uint64_t alive_at;	/* when the dataplane was last seen serving us */
	int dead;
	char err[512];
};

static int __attribute__((format(printf, 2, 3)))
fail(struct sdr_context *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return SDR_ERROR;
}

const char *
sdr_last_error(const struct sdr_context *ctx)
{
	return ctx->err;
}

/* The dataplane still serves us (looked at once a millisecond at most). */
static int
alive(struct sdr_context *ctx)
{
	uint64_t now = sdr_shm_mono_ns();
	char why[256];

	if (ctx->dead)
		return 0;
	if (now - ctx->alive_at < 1000000)
		return 1;
	if (sdr_client_alive(&ctx->cl)) {
		ctx->alive_at = now;
		return 1;
	}
	sdr_client_gone_reason(&ctx->cl, why, sizeof(why));
	fail(ctx, "%s: destroy the context and create a new one", why);
	ctx->dead = 1;
	return 0;
}

int
sdr_context_create(const char *instance, struct sdr_context **out, char *err, size_t errlen)
{
	struct sdr_context *ctx = calloc(1, sizeof(*ctx));
	char e[256];

	if (ctx == NULL) {
		snprintf(err, errlen, "out of memory");
		return SDR_ERROR;
	}
	if (sdr_client_attach(instance, SDR_CLIENT_SDK, &ctx->cl, e, sizeof(e)) != 0) {
		if (err)
			snprintf(err, errlen, "%s", e);
		free(ctx);
		return SDR_ERROR;
	}
	ctx->free[0] = (struct extent){ 0, ctx->cl.L.arena_len };
	ctx->nfree = 1;
	for (uint32_t i = MAX_REQUESTS; i > 0; i--) {
		ctx->recv_free[ctx->nrecv_free++] = i - 1;
		ctx->send_free[ctx->nsend_free++] = i - 1;
		ctx->recvs[i - 1].gen = ctx->sends[i - 1].gen = 1;
		ctx->recvs[i - 1].ctx = ctx;
	}
	*out = ctx;
	return SDR_SUCCESS;
}

static void
recv_put(struct sdr_context *ctx, struct sdr_recv *r)
{
	if (r->bitmap != NULL)
		sdr_mr_dereg(r->bitmap);
	r->bitmap = NULL;
	r->used = 0;
	r->gen++;
	ctx->recv_free[(ctx->recv_free_head + ctx->nrecv_free++) % MAX_REQUESTS] =
		(uint32_t)(r - ctx->recvs);
}

static void
send_put(struct sdr_context *ctx, struct send_ent *s)
{
	s->used = 0;
	s->gen++;
	ctx->send_free[ctx->nsend_free++] = (uint32_t)(s - ctx->sends);
}

void
sdr_context_destroy(struct sdr_context *ctx)
{
	if (ctx == NULL)
		return;
	while (ctx->qps)
		sdr_qp_destroy(ctx->qps);
	/* closing the socket is enough: the dataplane releases what the context held */
	sdr_client_detach(&ctx->cl);
	free(ctx);
}

/* ---- synchronous calls ---- */

/* Run the call in the request area. @return SDR_SUCCESS with the reply, or SDR_ERROR. */
static int
call(struct sdr_context *ctx, struct sdr_rpc_req *q, const struct sdr_rpc_rep **rep)
{
	struct sdr_rpc *rpc = ctx->cl.rpc;
	char why[256];
	int rc;

	if (!alive(ctx))
		return SDR_ERROR;
	rpc->req = *q;
	rc = sdr_client_call(&ctx->cl, CALL_MS, why, sizeof(why));
	if (rc < 0) {
		/*
		 * Unanswered: the dataplane may still read the request area, or answer late (a
		 * connection opened for a QP that was never made); nothing more can be asked.
		 */
		ctx->dead = 1;
		return fail(ctx, "%s: destroy the context", why);
	}
	/* (the reply is the client's own copy: read once, len bounded, text terminated) */
	if (rc != SDR_CTL_OK)
		return fail(ctx, "%s", ctx->cl.rep->u.text);
	if (rep)
		*rep = ctx->cl.rep;
	return SDR_SUCCESS;
}

static void
take_info(struct sdr_qp *qp, const struct sdr_rpc_info *in)
{
	struct sdr_qp_info *i = &qp->info;

	qp->conn = (int)in->conn;
	/* a queue the segment does not have: the dataplane refuses what comes on queue 0 */
	qp->queue = in->queue < qp->ctx->cl.L.queues ? in->queue : 0;
	qp->nstripes = 1;
	qp->sconn[0] = qp->conn;
	qp->squeue[0] = qp->queue;
	i->local_qpn = in->local_qpn;
	i->remote_qpn = in->remote_qpn;
	i->mtu = in->mtu;
	i->chunk_size = in->chunk_size ? in->chunk_size : 1;	/* (a divisor here) */
	i->max_msg_size = in->max_msg_size;
	i->max_inflight = in->max_inflight;
	i->channels = in->channels;
	i->generations = in->generations;
	memcpy(i->scheme, in->scheme, sizeof(i->scheme));
	i->scheme[sizeof(i->scheme) - 1] = '\0';
}

static int
name_ok(struct sdr_context *ctx, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= 32 || strpbrk(name, " \t\r\n") != NULL)
		return fail(ctx, "bad connection name '%s'", name ? name : "");
	return SDR_SUCCESS;
}

/* CLOSE the first @p n stripes of @p qp in the dataplane. */
static void
close_stripes(struct sdr_qp *qp, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		struct sdr_rpc_req q = { .op = SDR_RPC_CLOSE, .conn = (uint32_t)qp->sconn[k] };

		call(qp->ctx, &q, NULL);
	}
}

/* A striped connection: OPEN its stripes 1 .. @p n - 1 ("NAME/s") too. */
static int
open_stripes(struct sdr_qp *qp, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++) {
		struct sdr_rpc_req q = { .op = SDR_RPC_OPEN };
		const struct sdr_rpc_rep *rep;

		if ((size_t)snprintf(q.name, sizeof(q.name), "%s/%u", qp->name, k) >= sizeof(q.name) ||
		    call(qp->ctx, &q, &rep) != SDR_SUCCESS) {
			close_stripes(qp, k);
			return SDR_ERROR;
		}
		qp->sconn[k] = (int)rep->u.info.conn;
		qp->squeue[k] = rep->u.info.queue < qp->ctx->cl.L.queues ? rep->u.info.queue : 0;
		qp->nstripes = k + 1;
	}
	return SDR_SUCCESS;
}

/* OPEN or CREATE of @p name; @p words for CREATE. */
static int
open_conn(struct sdr_context *ctx, const char *name, const char *words, struct sdr_qp **out)
{
	struct sdr_rpc_req q = { .op = words ? SDR_RPC_CREATE : SDR_RPC_OPEN };
	const struct sdr_rpc_rep *rep;
	struct sdr_qp *qp;
	uint32_t stripe, stripes;

	if (name_ok(ctx, name) != SDR_SUCCESS)
		return SDR_ERROR;
	snprintf(q.name, sizeof(q.name), "%s", name);
	if (words) {
		size_t n = strlen(words);

		if (n >= sizeof(q.text))
			return fail(ctx, "sdr_qp_create: attributes too long");
		memcpy(q.text, words, n + 1);
		q.len = (uint32_t)n;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return fail(ctx, "out of memory");
	if (call(ctx, &q, &rep) != SDR_SUCCESS) {
		free(qp);
		return SDR_ERROR;
	}
	qp->ctx = ctx;
	qp->created = words != NULL;
	snprintf(qp->name, sizeof(qp->name), "%s", name);
	take_info(qp, &rep->u.info);
	stripe = rep->u.info.stripe;
	stripes = rep->u.info.stripes;
	if (stripe != 0 || stripes > SDR_SHM_MAX_QUEUES) {
		close_stripes(qp, 1);
		free(qp);
		return fail(ctx, "'%s' is stripe %u of a striped connection: open the connection "
			    "itself", name, stripe);
	}
	if (open_stripes(qp, stripes) != SDR_SUCCESS) {
		free(qp);
		return SDR_ERROR;
	}
	qp->next = ctx->qps;
	ctx->qps = qp;
	*out = qp;
	return SDR_SUCCESS;
}

int
sdr_qp_open(struct sdr_context *ctx, const char *name, struct sdr_qp **qp)
{
	return open_conn(ctx, name, NULL, qp);
}

int
sdr_qp_create(struct sdr_context *ctx, const struct sdr_qp_attr *a, struct sdr_qp **qp)
{
	char w[SDR_RPC_TEXT_MAX];
	size_t o = 0;

	if (a->name == NULL || a->port == NULL || a->local_qpn == 0)
		return fail(ctx, "sdr_qp_create: name, port and local_qpn are required");
#define ADD(...) o += (size_t)snprintf(w + o, o < sizeof(w) ? sizeof(w) - o : 0, __VA_ARGS__)
	ADD("port %s peer-ip %s local-qpn %u remote-qpn %u dir both", a->port,
	    a->peer_ip ? a->peer_ip : "0.0.0.0", a->local_qpn, a->remote_qpn ? a->remote_qpn : 1);
	if (a->mtu)
		ADD(" mtu %u", a->mtu);
	if (a->chunk_size)
		ADD(" chunk %u", a->chunk_size);
	if (a->max_msg_size)
		ADD(" max-msg %" PRIu64, a->max_msg_size);
	if (a->max_inflight)
		ADD(" inflight %u", a->max_inflight);
	if (a->channels)
		ADD(" channels %u", a->channels);
	if (a->scheme)
		ADD(" scheme %s", a->scheme);
	if (a->rtt_s > 0)
		ADD(" rtt %.9fs", a->rtt_s);
	if (a->rate_bps > 0)
		ADD(" rate %.0f", a->rate_bps);
#undef ADD
	if (o >= sizeof(w))
		return fail(ctx, "sdr_qp_create: attributes too long");
	return open_conn(ctx, a->name, w, qp);
}

int
sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info)
{
	*info = qp->info;
	return SDR_SUCCESS;
}

/* SET on an open QP: its words, then the new info. */
static int
set_conn(struct sdr_qp *qp, const char *words)
{
	struct sdr_rpc_req q = { .op = SDR_RPC_SET, .conn = (uint32_t)qp->conn };
	const struct sdr_rpc_rep *rep;
	size_t n = strlen(words);

	if (n >= sizeof(q.text))
		return fail(qp->ctx, "settings too long");
	if (qp->nstripes > 1)
		return fail(qp->ctx, "'%s' is striped over %u engines: its settings come from the "
			    "dataplane's configuration file", qp->name, qp->nstripes);
	memcpy(q.text, words, n + 1);
	q.len = (uint32_t)n;
	if (call(qp->ctx, &q, &rep) != SDR_SUCCESS)
		return SDR_ERROR;
	take_info(qp, &rep->u.info);
	return SDR_SUCCESS;
}

int
sdr_qp_connect(struct sdr_qp *qp, uint32_t remote_qpn, const char *peer_ip)
{
	char w[128];

	if (peer_ip == NULL || strpbrk(peer_ip, " \t\r\n") != NULL ||
	    (size_t)snprintf(w, sizeof(w), "remote-qpn %u peer-ip %s", remote_qpn, peer_ip) >=
	    sizeof(w))
		return fail(qp->ctx, "sdr_qp_connect: bad peer address");
	return set_conn(qp, w);
}

int
sdr_conn_set(struct sdr_context *ctx, const char *conn, const char *settings)
{
	struct sdr_qp *qp;

	for (qp = ctx->qps; qp && strcmp(qp->name, conn) != 0; qp = qp->next)
		;
	if (qp == NULL)
		return fail(ctx, "connection '%s' is not open in this context: sdr_qp_open() it "
			    "first", conn);
	return set_conn(qp, settings);
}

/*
 * DESTROY of connection q->conn. Refused with operations still ending (SDR_CTL_FAILED), they
 * may still write the context's memory: nothing of it may be given back, so the context can
 * no longer be used.
 */
static int
destroy_call(struct sdr_context *ctx, struct sdr_rpc_req *q)
{
	if (call(ctx, q, NULL) == SDR_SUCCESS)
		return SDR_SUCCESS;
	if (!ctx->dead && ctx->cl.rep->rc == SDR_CTL_FAILED) {
		size_t n = strlen(ctx->err);

		snprintf(ctx->err + n, sizeof(ctx->err) - n, ": the dataplane may still write "
			 "this context's memory; destroy the context");
		ctx->dead = 1;
	}
	return SDR_ERROR;
}

int
sdr_qp_destroy(struct sdr_qp *qp)
{
	struct sdr_context *ctx = qp->ctx;
	struct sdr_rpc_req q = { .op = SDR_RPC_DESTROY, .conn = (uint32_t)qp->conn };
	struct sdr_qp **pp;
	int rc = SDR_SUCCESS;

	for (pp = &ctx->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = qp->next;
	/* what it had in flight ends in the dataplane; when the call returns, nothing of it
	 * writes the context's memory any more */
	if (alive(ctx))
		rc = destroy_call(ctx, &q);
	for (uint32_t k = 1; k < qp->nstripes && alive(ctx); k++) {
		q.conn = (uint32_t)qp->sconn[k];
		if (destroy_call(ctx, &q) != SDR_SUCCESS)
			rc = SDR_ERROR;
	}
	for (uint32_t i = 0; i < MAX_REQUESTS; i++) {
		if (ctx->recvs[i].used && ctx->recvs[i].qp == qp) {
			if (!ctx->recvs[i].abandoned)	/* (one was counted out already) */
				ctx->requests--;
			recv_put(ctx, &ctx->recvs[i]);
		}
		if (ctx->sends[i].used && ctx->sends[i].qp == qp) {
			send_put(ctx, &ctx->sends[i]);
			ctx->requests--;
		}
	}
	free(qp);
	return rc;
}

/* ---- registered memory: first fit over the context's arena ---- */

/*
 * Registration makes the region's pages resident, as ibv_reg_mr pins them: otherwise the
 * dataplane's first write into each page of a fresh buffer pays for allocating and zeroing
 * it (about 30 000 cycles, ten times the cost of the packet).
 */
static void
make_resident(void *addr, uint64_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(page - 1), e = (uintptr_t)addr + len;

	if (madvise((void *)a, e - a, MADV_POPULATE_WRITE) == 0)
		return;
	for (; a < e; a += page) {	/* older kernels: touch every page */
		volatile uint8_t *p = (volatile uint8_t *)a;

		*p = *p;
	}
}

int
sdr_mr_reg(struct sdr_context *ctx, size_t len, void **addr, struct sdr_mr **out)
{
	uint64_t need = len == 0 ? 64 : ((uint64_t)len + 63) & ~(uint64_t)63;
	struct sdr_mr *mr;

	if (!alive(ctx))
		return SDR_ERROR;
	if (len > ctx->cl.L.arena_len || need > ctx->cl.L.arena_len)	/* (need: no wrap) */
		return fail(ctx, "%zu bytes do not fit in this context's %" PRIu64 "-byte arena",
			    len, ctx->cl.L.arena_len);
	for (unsigned int i = 0; i < ctx->nfree; i++) {
		struct extent *e = &ctx->free[i];

		if (e->len < need)
			continue;
		mr = malloc(sizeof(*mr));
		if (mr == NULL)
			return fail(ctx, "out of memory");
		mr->ctx = ctx;
		mr->off = e->off;
		mr->len = need;
		e->off += need;
		e->len -= need;
		if (e->len == 0) {
			memmove(e, e + 1, (ctx->nfree - i - 1) * sizeof(*e));
			ctx->nfree--;
		}
		*addr = ctx->cl.arena + mr->off;
		*out = mr;
		make_resident(*addr, need);
		return SDR_SUCCESS;
	}
	fail(ctx, "no room for %zu bytes in this context's %" PRIu64 "-byte arena", len,
	     ctx->cl.L.arena_len);
	return SDR_RETRY;
}

/*
 * The free ranges are kept in address order, so a range given back merges with the free
 * ranges on both sides of it and the arena never stays cut into pieces that touch.
 */
int
sdr_mr_dereg(struct sdr_mr *mr)
{
	struct sdr_context *ctx = mr->ctx;
	struct extent *f = ctx->free;
	unsigned int i = 0;

	while (i < ctx->nfree && f[i].off < mr->off)
		i++;
	if (i > 0 && f[i - 1].off + f[i - 1].len == mr->off) {
		f[i - 1].len += mr->len;
		if (i < ctx->nfree && f[i - 1].off + f[i - 1].len == f[i].off) {
			f[i - 1].len += f[i].len;
			memmove(&f[i], &f[i + 1], (ctx->nfree - i - 1) * sizeof(*f));
			ctx->nfree--;
		}
	} else if (i < ctx->nfree && mr->off + mr->len == f[i].off) {
		f[i].off = mr->off;
		f[i].len += mr->len;
	} else if (ctx->nfree == MAX_EXTENTS) {
		free(mr);
		return fail(ctx, "arena too fragmented to take the region back");
	} else {
		memmove(&f[i + 1], &f[i], (ctx->nfree - i) * sizeof(*f));
		f[i] = (struct extent){ mr->off, mr->len };
		ctx->nfree++;
	}
	free(mr);
	return SDR_SUCCESS;
}

/* Offset of [p, p + len) in the arena, or UINT64_MAX if it is not all inside. */
static uint64_t
arena_off(const struct sdr_context *ctx, const void *p, uint64_t len)
{
	const uint8_t *a = ctx->cl.arena, *q = p;

	if (a == NULL || q < a || len > ctx->cl.L.arena_len ||
	    (uint64_t)(q - a) > ctx->cl.L.arena_len - len)
		return UINT64_MAX;
	return (uint64_t)(q - a);
}

/* ---- requests and completions ---- */

/* A request for stripe @p k of @p qp (0: not striped), on that stripe's connection and
 * queue pair. */
static int
submit(struct sdr_context *ctx, const struct sdr_qp *qp, uint32_t k, struct sdr_sdk_req *r)
{
	int rc;

	if (!alive(ctx))
		return SDR_ERROR;
	r->conn = (uint16_t)qp->sconn[k];
	rc = sdr_spsc_push(&ctx->cl.sq[qp->squeue[k]], r);
	if (rc == -ENOBUFS)
		return SDR_RETRY;
	if (rc != 0)
		return fail(ctx, "the request queue is broken");
	return SDR_SUCCESS;
}

/* (never full: a QP's completions to poll and requests out stay within SWQ) */
static void
swq_put(struct swq *q, const struct sdr_completion *c, uint32_t gen)
{
	if (q->n < SWQ) {
		q->e[(q->head + q->n) % SWQ] = *c;
		q->gen[(q->head + q->n) % SWQ] = gen;
		q->n++;
	}
}

/* One completion from the dataplane, checked against our tables. */
static void
on_cqe(struct sdr_context *ctx, const struct sdr_sdk_cqe *e)
{
	uint32_t idx = (uint32_t)e->cookie, gen = (uint32_t)(e->cookie >> 32) & 0x7FFFFFFFu;
	struct sdr_completion c = { .status = e->status, .retransmitted = e->retransmitted,
				    .decoded = e->decoded };

	c.time_s = e->end_ns > e->start_ns ? (double)(e->end_ns - e->start_ns) * 1e-9 : 0;
	if (idx >= MAX_REQUESTS)
		return;
	if (e->cookie & ID_RECV) {
		struct sdr_recv *r = &ctx->recvs[idx];

		if (e->op != SDR_SDK_RECV || !r->used || (r->gen & 0x7FFFFFFFu) != gen || r->done)
			return;
		if (r->abandoned) {	/* the last word about it: its buffer is quiet */
			recv_put(ctx, r);
			return;
		}
		r->done = 1;
		r->handle = e->handle;
		r->imm = e->imm;
		r->imm_bits = e->imm_ok > 32 ? 32 : e->imm_ok;
		c.recv = r;
		c.cookie = r->user_cookie;
		c.imm = e->imm;
		c.imm_ok = e->imm_ok != 0;
		c.imm_bits = r->imm_bits;
		swq_put(&r->qp->recvs, &c, r->gen);
	} else {
		struct send_ent *s = &ctx->sends[idx];

		if (e->op != SDR_SDK_SEND || !s->used || (s->gen & 0x7FFFFFFFu) != gen)
			return;
		c.cookie = s->user_cookie;
		swq_put(&s->qp->sends, &c, 0);
		s->qp->sends_out--;
		send_put(ctx, s);
		if (ctx->requests > 0)
			ctx->requests--;	/* the dataplane is done with it */
	}
}

/* Move the context's completions into the queues of their QPs. */
static void
pump(struct sdr_context *ctx)
{
	struct sdr_sdk_cqe e;
	int rc = 0;

	for (uint32_t q = 0; q < ctx->cl.L.queues; q++) {
		while ((rc = sdr_spsc_pop(&ctx->cl.cq[q], &e)) == 0)
			on_cqe(ctx, &e);
		if (rc == -EPROTO)
			break;
	}
	if (rc == -EPROTO && !ctx->dead) {
		fail(ctx, "the completion queue is broken: destroy the context");
		ctx->dead = 1;
	}
}

static uint64_t
send_id(const struct sdr_context *ctx, const struct send_ent *s)
{
	return (uint64_t)(s->gen & 0x7FFFFFFFu) << 32 | (uint64_t)(s - ctx->sends);
}

static uint64_t
recv_id(const struct sdr_context *ctx, const struct sdr_recv *r)
{
	return ID_RECV | (uint64_t)(r->gen & 0x7FFFFFFFu) << 32 | (uint64_t)(r - ctx->recvs);
}

/* Room for one more request (a send or a receive) in the dataplane. */
static int
room(struct sdr_context *ctx)
{
	if (ctx->requests >= MAX_REQUESTS)
		pump(ctx);
	return ctx->requests < MAX_REQUESTS;
}

/* A message buffer of a QP's send or receive: its size, and where it lies in the arena.
 * @return SDR_SUCCESS with the offset in @p off, or SDR_ERROR. */
static int
check_buf(struct sdr_qp *qp, int recv, const void *buf, uint64_t len, uint64_t *off)
{
	if (len > qp->info.max_msg_size)
		return fail(qp->ctx, "%s of %" PRIu64 " bytes is larger than the QP's %" PRIu64,
			    recv ? "receive" : "message", len, qp->info.max_msg_size);
	*off = arena_off(qp->ctx, buf, len);
	if (*off == UINT64_MAX)
		return fail(qp->ctx, "the %s buffer is not registered memory (sdr_mr_reg)",
			    recv ? "receive" : "send");
	return SDR_SUCCESS;
}

/* SEND and STREAM: checked, given an id (into *@p id: a stream is named by it), submitted. */
static int
post_send(struct sdr_qp *qp, uint16_t op, const void *buf, uint64_t len, uint32_t imm,
	  uint64_t cookie, uint64_t *id)
{
	struct sdr_context *ctx = qp->ctx;
	struct sdr_sdk_req r = { .op = op, .conn = (uint16_t)qp->conn, .imm = imm, .len = len,
				 .handle = qp->prio };
	struct send_ent *s;
	int rc;

	if (!alive(ctx) || check_buf(qp, 0, buf, len, &r.off) != SDR_SUCCESS)
		return SDR_ERROR;
	if (!room(ctx) || ctx->nsend_free == 0 || qp->sends.n + qp->sends_out >= SWQ)
		return SDR_RETRY;	/* poll send completions (or complete receives) first */
	s = &ctx->sends[ctx->send_free[ctx->nsend_free - 1]];
	r.cookie = send_id(ctx, s);
	rc = submit(ctx, qp, (uint32_t)(qp->nsent % qp->nstripes), &r);
	if (rc != SDR_SUCCESS)
		return rc;
	qp->nsent++;
	qp->sends_out++;
	ctx->nsend_free--;
	s->used = 1;
	s->qp = qp;
	s->user_cookie = cookie;
	ctx->requests++;
	*id = r.cookie;
	return SDR_SUCCESS;
}

int
sdr_send_priority(struct sdr_qp *qp, unsigned int prio)
{
	if (prio > SDR_PRIO_MAX)
		return fail(qp->ctx, "send priority %u: 0 .. %d", prio, SDR_PRIO_MAX);
	qp->prio = prio;
	return SDR_SUCCESS;
}

int
sdr_send_post(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm, uint64_t cookie)
{
	uint64_t id;

	return post_send(qp, SDR_SDK_SEND, buf, len, imm, cookie, &id);
}

/*
 * A stream is named to the dataplane by its send id; the application's struct carries it
 * in cookie's place (the application's cookie comes back in the completion).
 */
int
sdr_send_stream_start(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm,
		      uint64_t cookie, struct sdr_send_stream *s)
{
	uint32_t k = (uint32_t)(qp->nsent % qp->nstripes);
	uint64_t id;
	int rc;

	/* (the id is the one post_send() took: making room may free others first) */
	rc = post_send(qp, SDR_SDK_STREAM, buf, len, imm, cookie, &id);
	if (rc == SDR_SUCCESS)
		*s = (struct sdr_send_stream){ .qp = qp, .cookie = id, .len = len,
					       .chunk = qp->info.chunk_size, .stripe = k };
	return rc;
}

int
sdr_send_stream_continue(struct sdr_send_stream *s, uint64_t offset, uint64_t len)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_STREAM_ADD, .conn = (uint16_t)s->qp->conn,
				 .off = offset, .len = len, .cookie = s->cookie };

	if (len == 0 || offset % s->chunk != 0 || offset >= s->len || len > s->len - offset ||
	    (len % s->chunk != 0 && offset + len != s->len))
		return fail(s->qp->ctx, "stream continue: bytes %" PRIu64 "+%" PRIu64 " of a %" PRIu64
			    "-byte message: the offset must be a multiple of the chunk size (%u), "
			    "and the length too unless it reaches the end", offset, len, s->len,
			    s->chunk);
	return submit(s->qp->ctx, s->qp, s->stripe < s->qp->nstripes ? s->stripe : 0, &r);
}

int
sdr_send_stream_end(struct sdr_send_stream *s)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_STREAM_END, .conn = (uint16_t)s->qp->conn,
				 .cookie = s->cookie };

	return submit(s->qp->ctx, s->qp, s->stripe < s->qp->nstripes ? s->stripe : 0, &r);
}

int
sdr_recv_post(struct sdr_qp *qp, void *buf, uint64_t len, uint64_t cookie,
	      struct sdr_recv **handle)
{
	struct sdr_context *ctx = qp->ctx;
	struct sdr_sdk_req r = { .op = SDR_SDK_RECV, .conn = (uint16_t)qp->conn, .len = len };
	struct sdr_recv *h;
	void *bm;
	int rc;

	if (!alive(ctx) || check_buf(qp, 1, buf, len, &r.off) != SDR_SUCCESS)
		return SDR_ERROR;
	if (!room(ctx) || ctx->nrecv_free == 0)
		return SDR_RETRY;	/* complete some receives (or poll sends) first */
	h = &ctx->recvs[ctx->recv_free[ctx->recv_free_head]];
	h->nchunks = len ? (uint32_t)((len + qp->info.chunk_size - 1) / qp->info.chunk_size) : 1;
	/* the bitmap lives in the arena: the dataplane sets a byte as each chunk lands */
	rc = sdr_mr_reg(ctx, h->nchunks, &bm, &h->bitmap);
	if (rc != SDR_SUCCESS) {
		/* nothing in flight could give memory back: waiting would be forever */
		if (rc == SDR_RETRY && ctx->requests == 0)
			return fail(ctx, "no room for the receive's %u-byte chunk bitmap: the "
				    "context's %" PRIu64 "-byte arena is all registered",
				    h->nchunks, ctx->cl.L.arena_len);
		return rc;
	}
	memset(bm, 0, h->nchunks);
	r.bm_off = h->bitmap->off;
	r.cookie = recv_id(ctx, h);
	h->stripe = (uint32_t)(qp->nposted % qp->nstripes);
	rc = submit(ctx, qp, h->stripe, &r);
	if (rc != SDR_SUCCESS) {
		sdr_mr_dereg(h->bitmap);
		h->bitmap = NULL;
		return rc;
	}
	qp->nposted++;
	ctx->recv_free_head = (ctx->recv_free_head + 1) % MAX_REQUESTS;
	ctx->nrecv_free--;
	h->used = 1;
	h->done = h->abandoned = 0;
	h->qp = qp;
	h->user_cookie = cookie;
	h->imm = h->imm_bits = 0;
	h->handle = 0;
	ctx->requests++;
	*handle = h;
	return SDR_SUCCESS;
}

static int
take(struct sdr_qp *qp, struct swq *q, struct sdr_completion *c)
{
	pump(qp->ctx);
	for (;;) {
		const struct sdr_recv *r;

		if (q->n == 0)
			return alive(qp->ctx) ? SDR_RETRY : SDR_ERROR;
		*c = q->e[q->head];
		r = c->recv;
		q->head = (q->head + 1) % SWQ;
		q->n--;
		/* a receive the application completed before it polled it is gone */
		if (r == NULL || (r->used && r->gen == q->gen[(q->head + SWQ - 1) % SWQ]))
			return SDR_SUCCESS;
	}
}

int
sdr_send_poll(struct sdr_qp *qp, struct sdr_completion *c)
{
	return take(qp, &qp->sends, c);
}

int
sdr_recv_poll(struct sdr_qp *qp, struct sdr_completion *c)
{
	return take(qp, &qp->recvs, c);
}

/*
 * A receive handle the application may use: posted, and not completed by it yet. Handles
 * point into the context's table, so a stale one reads a slot, never freed memory; its
 * slot is reused only after every other free slot (FIFO), so a stale handle is told apart
 * until MAX_REQUESTS - 1 receives later.
 */
static int
recv_live(const struct sdr_recv *r)
{
	return r != NULL && r->used && !r->abandoned;
}

static int
recv_stale(const struct sdr_recv *r)
{
	return r == NULL ? SDR_ERROR :
	       fail(r->ctx, "a receive handle that was completed already (sdr_recv_complete)");
}

const volatile uint8_t *
sdr_recv_bitmap_get(const struct sdr_recv *r, uint32_t *nchunks)
{
	if (!recv_live(r)) {
		recv_stale(r);
		return NULL;
	}
	if (nchunks)
		*nchunks = r->nchunks;
	return r->ctx->cl.arena + r->bitmap->off;
}

int
sdr_recv_imm_get(struct sdr_recv *r, uint32_t *imm)
{
	struct sdr_rpc_req q = { .op = SDR_RPC_IMM };
	const struct sdr_rpc_rep *rep;

	if (!recv_live(r))
		return recv_stale(r);
	q.conn = (uint32_t)r->qp->sconn[r->stripe];
	if (r->done) {
		if (r->imm_bits == 0)
			return SDR_RETRY;	/* rebuilt by decoding: its packets never came */
		*imm = r->imm;
		return SDR_SUCCESS;
	}
	/* still arriving: the dataplane knows once every fragment of the immediate is in */
	q.cookie = recv_id(r->qp->ctx, r);
	if (call(r->qp->ctx, &q, &rep) != SDR_SUCCESS)
		return SDR_ERROR;
	if (!rep->u.imm.ok)
		return SDR_RETRY;
	*imm = rep->u.imm.imm;
	return SDR_SUCCESS;
}

uint32_t
sdr_recv_imm_bits(const struct sdr_recv *r)
{
	return recv_live(r) && r->done ? r->imm_bits : 0;
}

int
sdr_recv_bitmap_chunk_expand(struct sdr_recv *r, uint32_t chunk, uint64_t *bits)
{
	struct sdr_rpc_req q = { .op = SDR_RPC_EXPAND, .chunk = chunk };
	const struct sdr_rpc_rep *rep;
	uint32_t n;

	if (!recv_live(r))
		return recv_stale(r);
	q.conn = (uint32_t)r->qp->sconn[r->stripe];
	if (chunk >= r->nchunks)
		return fail(r->qp->ctx, "chunk %u of a %u-chunk receive", chunk, r->nchunks);
	q.cookie = recv_id(r->qp->ctx, r);
	if (call(r->qp->ctx, &q, &rep) != SDR_SUCCESS)
		return SDR_ERROR;
	/* no more packets than a chunk of this connection has: the caller's @p bits holds
	 * that many (libsdr.h), whatever the reply says */
	n = rep->u.expand.n;
	if (n > SDR_EXPAND_PACKETS_MAX)
		n = SDR_EXPAND_PACKETS_MAX;
	if (r->qp->info.mtu == 0 || n > r->qp->info.chunk_size / r->qp->info.mtu)
		n = r->qp->info.mtu ? r->qp->info.chunk_size / r->qp->info.mtu : 0;
	memcpy(bits, rep->u.expand.bits, (n + 63) / 64 * sizeof(uint64_t));
	return (int)n;
}

int
sdr_recv_complete(struct sdr_recv *r)
{
	struct sdr_context *ctx;
	struct sdr_sdk_req q = { .op = SDR_SDK_RECV_DONE };
	uint32_t gen;
	uint64_t deadline;
	int rc;

	if (!recv_live(r))
		return recv_stale(r);
	ctx = r->ctx;
	q.conn = (uint16_t)r->qp->conn;
	q.cookie = recv_id(ctx, r);
	q.handle = r->done ? r->handle : 0;
	gen = r->gen;
	rc = submit(ctx, r->qp, r->stripe, &q);
	if (rc != SDR_SUCCESS)
		return rc;
	if (ctx->requests > 0)
		ctx->requests--;
	if (r->done) {
		recv_put(ctx, r);
		return SDR_SUCCESS;
	}
	/*
	 * Not complete: a copy into its buffer, or a chunk into its bitmap, may still be on its
	 * way. The dataplane says when none is (a cancelled completion, or the last word about
	 * it): only then are the buffer and the bitmap's bytes the application's again.
	 */
	r->abandoned = 1;
	deadline = sdr_shm_mono_ns() + (uint64_t)CALL_MS * 1000000;
	while (r->used && r->gen == gen) {
		pump(ctx);
		if (!(r->used && r->gen == gen))
			break;
		if (!alive(ctx))
			return SDR_ERROR;
		if (sdr_shm_mono_ns() > deadline) {
			/* its buffer may still be written: nothing of the context is safe to reuse */
			ctx->dead = 1;
			return fail(ctx, "the dataplane did not confirm the receive's release: "
				    "destroy the context");
		}
		usleep(10);
	}
	return SDR_SUCCESS;
}
