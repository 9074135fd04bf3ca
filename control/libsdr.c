/* SPDX-License-Identifier: BSD-3-Clause */
/* libsdr: the application SDK over the control segment. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_ring_elem.h>

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
#define MAX_EXTENTS 256

struct extent {
	uint64_t off;
	uint64_t len;
};

struct sdr_mr {
	struct sdr_context *ctx;
	uint64_t off;		/* from the start of the segment */
	uint64_t len;
};

struct swq {
	struct sdr_sdk_cqe e[SWQ];
	uint32_t head;
	uint32_t n;
};

struct sdr_qp {
	struct sdr_context *ctx;
	char name[32];
	int conn;
	int created;		/* sdr_qp_create() made the connection */
	struct sdr_qp_info info;
	struct swq sends;
	struct swq recvs;
	struct sdr_qp *next;
};

struct sdr_recv {
	struct sdr_qp *qp;
	void *buf;
	uint64_t len;
	uint64_t user_cookie;
	struct sdr_mr *bitmap;
	uint32_t nchunks;
	uint32_t imm;
	int imm_ok;
	uint32_t imm_bits;
	int done;
	int abandoned;		/* completed by the application before the dataplane did */
	uint32_t handle;	/* the dataplane's, from the completion */
	struct sdr_recv *prev, *next;	/* the context's live receive handles */
};

struct sdr_context {
	struct sdr_shm_hdr *shm;
	int slot;
	uint64_t epoch;
	struct sdr_shm_client *client;
	struct extent free[MAX_EXTENTS];
	unsigned int nfree;
	struct sdr_qp *qps;
	uint32_t requests;	/* sends and receives in the dataplane (MAX_REQUESTS at most) */
	struct sdr_recv *recvs;	/* receive handles not freed yet: freed with the context */
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

/* The dataplane still serves our segment (not stopped, not restarted). */
static int
alive(struct sdr_context *ctx)
{
	const struct sdr_shm_hdr *h = ctx->shm;

	ctx->client->lease_ns = sdr_shm_mono_ns();
	if (sdr_shm_dp_alive(h) && h->epoch == ctx->epoch &&
	    __atomic_load_n(&ctx->client->state, __ATOMIC_ACQUIRE) == SDR_CLIENT_ACTIVE)
		return 1;
	if (!h->alive || !sdr_shm_dp_alive(h)) {
		/* a new dataplane under the same name has a new segment: say which it is */
		char e[128];
		struct sdr_shm_hdr *n = sdr_shm_attach(h->name, e, sizeof(e));

		if (n != NULL && n->epoch != ctx->epoch && sdr_shm_dp_alive(n)) {
			fail(ctx, "dataplane '%s' restarted (pid %d, now pid %d): destroy the context "
			     "and create a new one", h->name, h->dp_pid, n->dp_pid);
			sdr_shm_detach(n);
			return 0;
		}
		if (n != NULL)
			sdr_shm_detach(n);
	}
	fail(ctx, "dataplane '%s' (pid %d) %s: destroy the context and create a new one", h->name,
	     h->dp_pid, !h->alive ? "stopped" : h->epoch != ctx->epoch ? "restarted" :
	     __atomic_load_n(&ctx->client->state, __ATOMIC_ACQUIRE) != SDR_CLIENT_ACTIVE ?
	     "reclaimed this client's slot (no sign of life within the lease)" :
	     sdr_shm_age_ns(&h->heartbeat_ns) >= 2000000000ull ? "stopped answering (no heartbeat "
	     "for 2 s)" : "is gone");
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
	ctx->shm = sdr_shm_attach(instance, e, sizeof(e));
	if (ctx->shm == NULL) {
		if (err)
			snprintf(err, errlen, "%s", e);
		free(ctx);
		return SDR_ERROR;
	}
	if (!sdr_shm_dp_alive(ctx->shm) || (ctx->slot = sdr_shm_claim(ctx->shm, 1)) < 0) {
		if (err)
			snprintf(err, errlen, "instance '%s': %s", instance,
				 sdr_shm_dp_alive(ctx->shm) ? "all client slots are taken" :
				 "the dataplane is not running");
		sdr_shm_detach(ctx->shm);
		free(ctx);
		return SDR_ERROR;
	}
	ctx->epoch = ctx->shm->epoch;
	ctx->client = sdr_shm_client(ctx->shm, (unsigned int)ctx->slot);
	ctx->free[0] = (struct extent){ ctx->client->arena_off, ctx->client->arena_len };
	ctx->nfree = 1;
	*out = ctx;
	return SDR_SUCCESS;
}

static void recv_free(struct sdr_context *ctx, struct sdr_recv *h);

void
sdr_context_destroy(struct sdr_context *ctx)
{
	if (ctx == NULL)
		return;
	while (ctx->qps)
		sdr_qp_destroy(ctx->qps);
	/* receives still out (the application did not complete them, or their last
	 * completion never came because the dataplane went away) go with the context */
	while (ctx->recvs) {
		if (ctx->recvs->bitmap)
			sdr_mr_dereg(ctx->recvs->bitmap);
		recv_free(ctx, ctx->recvs);
	}
	sdr_shm_release(ctx->shm, ctx->slot);
	sdr_shm_detach(ctx->shm);
	free(ctx);
}

/* A command on behalf of this context. @return SDR_SUCCESS with the reply, or SDR_ERROR. */
static int
command(struct sdr_context *ctx, const char **reply, const char *fmt, ...)
{
	char line[SDR_SHM_CMD_LEN];
	const char *r;
	va_list ap;
	int rc;

	if (!alive(ctx))
		return SDR_ERROR;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rc = sdr_shm_command(ctx->shm, ctx->slot, line, SDR_CMD_F_SDK, 5000, &r);
	if (rc != SDR_CTL_OK)
		return fail(ctx, "%s", r);
	if (reply)
		*reply = r;
	return SDR_SUCCESS;
}

static int
parse_open(struct sdr_qp *qp, const char *reply)
{
	struct sdr_qp_info *i = &qp->info;
	unsigned int a, b, c;

	if (sscanf(reply, "ok conn=%d local_qpn=%u remote_qpn=%u mtu=%u chunk=%u max_msg=%" SCNu64
		   " inflight=%u channels=%u generations=%u imm_split=%u,%u,%u scheme=%23s",
		   &qp->conn, &i->local_qpn, &i->remote_qpn, &i->mtu, &i->chunk_size,
		   &i->max_msg_size, &i->max_inflight, &i->channels, &i->generations, &a, &b, &c,
		   i->scheme) != 13)
		return fail(qp->ctx, "unexpected reply from the dataplane: %.80s", reply);
	return SDR_SUCCESS;
}

static int
open_conn(struct sdr_context *ctx, const char *name, int created, struct sdr_qp **out)
{
	struct sdr_qp *qp = calloc(1, sizeof(*qp));
	const char *reply;

	if (qp == NULL)
		return fail(ctx, "out of memory");
	qp->ctx = ctx;
	qp->created = created;
	snprintf(qp->name, sizeof(qp->name), "%s", name);
	if (command(ctx, &reply, "sdk open %s", name) != SDR_SUCCESS ||
	    parse_open(qp, reply) != SDR_SUCCESS) {
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
	if (strlen(name) == 0 || strlen(name) >= 32 || strchr(name, ' '))
		return fail(ctx, "bad connection name '%s'", name);
	return open_conn(ctx, name, 0, qp);
}

int
sdr_qp_create(struct sdr_context *ctx, const struct sdr_qp_attr *a, struct sdr_qp **qp)
{
	char cmd[SDR_SHM_CMD_LEN];
	size_t o = 0;

	if (a->name == NULL || a->port == NULL || a->local_qpn == 0)
		return fail(ctx, "sdr_qp_create: name, port and local_qpn are required");
#define ADD(...) o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, __VA_ARGS__)
	ADD("conn add %s port %s peer-ip %s local-qpn %u remote-qpn %u dir both", a->name, a->port,
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
	if (o >= sizeof(cmd))
		return fail(ctx, "sdr_qp_create: attributes too long");
	if (command(ctx, NULL, "%s", cmd) != SDR_SUCCESS)
		return SDR_ERROR;
	if (open_conn(ctx, a->name, 1, qp) != SDR_SUCCESS) {
		char keep[sizeof(ctx->err)];

		memcpy(keep, ctx->err, sizeof(keep));
		command(ctx, NULL, "conn del %s", a->name);
		memcpy(ctx->err, keep, sizeof(keep));
		return SDR_ERROR;
	}
	return SDR_SUCCESS;
}

int
sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info)
{
	*info = qp->info;
	return SDR_SUCCESS;
}

int
sdr_qp_connect(struct sdr_qp *qp, uint32_t remote_qpn, const char *peer_ip)
{
	const char *reply;

	if (command(qp->ctx, NULL, "sdk close %s", qp->name) != SDR_SUCCESS)
		return SDR_ERROR;
	if (command(qp->ctx, NULL, "conn set %s remote-qpn %u peer-ip %s", qp->name, remote_qpn,
		    peer_ip) != SDR_SUCCESS) {
		command(qp->ctx, &reply, "sdk open %s", qp->name);
		return SDR_ERROR;
	}
	if (command(qp->ctx, &reply, "sdk open %s", qp->name) != SDR_SUCCESS)
		return SDR_ERROR;
	return parse_open(qp, reply);
}

int
sdr_conn_set(struct sdr_context *ctx, const char *conn, const char *settings)
{
	return command(ctx, NULL, "conn set %s %s", conn, settings);
}

int
sdr_qp_destroy(struct sdr_qp *qp)
{
	struct sdr_context *ctx = qp->ctx;
	struct sdr_qp **pp;

	for (pp = &ctx->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = qp->next;
	if (alive(ctx)) {
		command(ctx, NULL, "sdk close %s", qp->name);
		if (qp->created)
			command(ctx, NULL, "conn del %s", qp->name);
	}
	free(qp);
	return SDR_SUCCESS;
}

/* ---- registered memory: first fit over the context's share of the arena ---- */

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
	uint64_t need = (len + 63) & ~(uint64_t)63;
	struct sdr_mr *mr;

	if (len == 0)
		need = 64;
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
		if (e->len == 0)
			ctx->free[i] = ctx->free[--ctx->nfree];
		*addr = sdr_shm_at(ctx->shm, mr->off);
		*out = mr;
		make_resident(*addr, need);
		return SDR_SUCCESS;
	}
	fail(ctx, "no room for %zu bytes in this context's %" PRIu64 "-byte share of the arena",
	     len, ctx->client->arena_len);
	return SDR_RETRY;
}

int
sdr_mr_dereg(struct sdr_mr *mr)
{
	struct sdr_context *ctx = mr->ctx;

	/* give the range back, merged with a neighbour when it touches one */
	for (unsigned int i = 0; i < ctx->nfree; i++) {
		struct extent *e = &ctx->free[i];

		if (e->off + e->len == mr->off) {
			e->len += mr->len;
			free(mr);
			return SDR_SUCCESS;
		}
		if (mr->off + mr->len == e->off) {
			e->off = mr->off;
			e->len += mr->len;
			free(mr);
			return SDR_SUCCESS;
		}
	}
	if (ctx->nfree == MAX_EXTENTS) {
		free(mr);
		return fail(ctx, "arena too fragmented to take the region back");
	}
	ctx->free[ctx->nfree++] = (struct extent){ mr->off, mr->len };
	free(mr);
	return SDR_SUCCESS;
}

/* Offset of a pointer inside this context's arena share, or 0 if it is not inside. */
static uint64_t
arena_off(struct sdr_context *ctx, const void *p, uint64_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - (const uint8_t *)ctx->shm);

	if ((const uint8_t *)p < (const uint8_t *)ctx->shm || off < ctx->client->arena_off ||
	    len > ctx->client->arena_len || off - ctx->client->arena_off > ctx->client->arena_len - len)
		return 0;
	return off;
}

static void pump(struct sdr_context *ctx);

static int
submit(struct sdr_qp *qp, const struct sdr_sdk_req *r)
{
	struct rte_ring *sq = sdr_shm_at(qp->ctx->shm, qp->ctx->client->sq_off);

	if (!alive(qp->ctx))
		return SDR_ERROR;
	if (rte_ring_sp_enqueue_elem(sq, (void *)(uintptr_t)r, sizeof(*r)) != 0)
		return SDR_RETRY;
	return SDR_SUCCESS;
}

/* A send: counted against MAX_REQUESTS until its completion comes. */
static int
submit_request(struct sdr_qp *qp, const struct sdr_sdk_req *r)
{
	int rc;

	if (qp->ctx->requests >= MAX_REQUESTS)
		pump(qp->ctx);
	if (qp->ctx->requests >= MAX_REQUESTS)
		return SDR_RETRY;	/* poll send completions (or complete receives) first */
	rc = submit(qp, r);
	if (rc == SDR_SUCCESS)
		qp->ctx->requests++;
	return rc;
}

int
sdr_send_post(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm, uint64_t cookie)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_SEND, .conn = (uint16_t)qp->conn, .imm = imm,
				 .len = len, .cookie = cookie };

	if (len > qp->info.max_msg_size)
		return fail(qp->ctx, "message of %" PRIu64 " bytes is larger than the QP's %" PRIu64,
			    len, qp->info.max_msg_size);
	r.off = arena_off(qp->ctx, buf, len);
	if (r.off == 0)
		return fail(qp->ctx, "the send buffer is not registered memory (sdr_mr_reg)");
	return submit_request(qp, &r);
}

int
sdr_send_stream_start(struct sdr_qp *qp, const void *buf, uint64_t len, uint32_t imm,
		      uint64_t cookie, struct sdr_send_stream *s)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_STREAM, .conn = (uint16_t)qp->conn, .imm = imm,
				 .len = len, .cookie = cookie };
	int rc;

	if (len > qp->info.max_msg_size)
		return fail(qp->ctx, "message of %" PRIu64 " bytes is larger than the QP's %" PRIu64,
			    len, qp->info.max_msg_size);
	r.off = arena_off(qp->ctx, buf, len);
	if (r.off == 0)
		return fail(qp->ctx, "the send buffer is not registered memory (sdr_mr_reg)");
	rc = submit_request(qp, &r);
	if (rc == SDR_SUCCESS)
		*s = (struct sdr_send_stream){ .qp = qp, .cookie = cookie, .len = len,
					       .chunk = qp->info.chunk_size };
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
	return submit(s->qp, &r);
}

int
sdr_send_stream_end(struct sdr_send_stream *s)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_STREAM_END, .conn = (uint16_t)s->qp->conn,
				 .cookie = s->cookie };

	return submit(s->qp, &r);
}

int
sdr_recv_post(struct sdr_qp *qp, void *buf, uint64_t len, uint64_t cookie,
	      struct sdr_recv **handle)
{
	struct sdr_sdk_req r = { .op = SDR_SDK_RECV, .conn = (uint16_t)qp->conn, .len = len };
	struct sdr_recv *h;
	void *bm;
	int rc;

	if (len > qp->info.max_msg_size)
		return fail(qp->ctx, "receive of %" PRIu64 " bytes is larger than the QP's %" PRIu64,
			    len, qp->info.max_msg_size);
	r.off = arena_off(qp->ctx, buf, len);
	if (r.off == 0)
		return fail(qp->ctx, "the receive buffer is not registered memory (sdr_mr_reg)");
	if (qp->ctx->requests >= MAX_REQUESTS)
		pump(qp->ctx);
	if (qp->ctx->requests >= MAX_REQUESTS)
		return SDR_RETRY;	/* complete some receives (or poll sends) first */
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return fail(qp->ctx, "out of memory");
	h->qp = qp;
	h->buf = buf;
	h->len = len;
	h->user_cookie = cookie;
	h->nchunks = len ? (uint32_t)((len + qp->info.chunk_size - 1) / qp->info.chunk_size) : 1;
	h->handle = UINT32_MAX;
	/* the bitmap lives in shared memory: the dataplane sets a byte as each chunk lands */
	rc = sdr_mr_reg(qp->ctx, h->nchunks, &bm, &h->bitmap);
	if (rc != SDR_SUCCESS) {
		uint32_t nchunks = h->nchunks;

		free(h);
		/* nothing in flight could give memory back: waiting would be forever */
		if (rc == SDR_RETRY && qp->ctx->requests == 0)
			return fail(qp->ctx, "no room for the receive's %u-byte chunk bitmap: the "
				    "context's %" PRIu64 "-byte share of the arena is all registered",
				    nchunks, qp->ctx->client->arena_len);
		return rc;
	}
	memset(bm, 0, h->nchunks);
	r.bm_off = h->bitmap->off;
	r.cookie = (uint64_t)(uintptr_t)h;
	rc = submit(qp, &r);
	if (rc != SDR_SUCCESS) {
		sdr_mr_dereg(h->bitmap);
		free(h);
		return rc;
	}
	qp->ctx->requests++;
	h->next = qp->ctx->recvs;
	if (h->next)
		h->next->prev = h;
	qp->ctx->recvs = h;
	*handle = h;
	return SDR_SUCCESS;
}

static void
recv_free(struct sdr_context *ctx, struct sdr_recv *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		ctx->recvs = h->next;
	if (h->next)
		h->next->prev = h->prev;
	free(h);
}

/* Move the context's completions into the queues of their QPs. */
static void
pump(struct sdr_context *ctx)
{
	struct rte_ring *cq = sdr_shm_at(ctx->shm, ctx->client->cq_off);
	struct sdr_sdk_cqe e;

	ctx->client->lease_ns = sdr_shm_mono_ns();
	while (rte_ring_sc_dequeue_elem(cq, &e, sizeof(e)) == 0) {
		struct sdr_qp *qp;

		for (qp = ctx->qps; qp && qp->conn != e.conn; qp = qp->next)
			;
		if (e.op == SDR_SDK_SEND && ctx->requests > 0)
			ctx->requests--;	/* the dataplane is done with it */
		if (e.op == SDR_SDK_RECV) {
			struct sdr_recv *h = (struct sdr_recv *)(uintptr_t)e.cookie;

			/* the last word about a receive the application already let go of */
			if (h->abandoned) {
				recv_free(ctx, h);
				continue;
			}
		}
		if (qp == NULL)
			continue;	/* a QP destroyed in the meantime */
		{
			struct swq *q = e.op == SDR_SDK_RECV ? &qp->recvs : &qp->sends;

			if (q->n < SWQ) {
				q->e[(q->head + q->n) % SWQ] = e;
				q->n++;
			}
		}
	}
}

static int
take(struct sdr_qp *qp, struct swq *q, struct sdr_completion *c)
{
	struct sdr_sdk_cqe e;

	pump(qp->ctx);
	if (q->n == 0)
		return alive(qp->ctx) ? SDR_RETRY : SDR_ERROR;
	e = q->e[q->head];
	q->head = (q->head + 1) % SWQ;
	q->n--;
	memset(c, 0, sizeof(*c));
	c->status = e.status;
	c->time_s = e.end_ns > e.start_ns ? (double)(e.end_ns - e.start_ns) * 1e-9 : 0;
	c->retransmitted = e.retransmitted;
	c->decoded = e.decoded;
	if (e.op == SDR_SDK_RECV) {
		struct sdr_recv *h = (struct sdr_recv *)(uintptr_t)e.cookie;

		h->done = 1;
		h->handle = e.handle;
		h->imm = e.imm;
		h->imm_ok = e.imm_ok != 0;
		h->imm_bits = e.imm_ok;
		c->recv = h;
		c->cookie = h->user_cookie;
		c->imm = e.imm;
		c->imm_ok = e.imm_ok != 0;
		c->imm_bits = e.imm_ok;
	} else {
		c->cookie = e.cookie;
	}
	return SDR_SUCCESS;
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

const volatile uint8_t *
sdr_recv_bitmap_get(const struct sdr_recv *r, uint32_t *nchunks)
{
	if (nchunks)
		*nchunks = r->nchunks;
	return sdr_shm_at(r->qp->ctx->shm, r->bitmap->off);
}

int
sdr_recv_imm_get(struct sdr_recv *r, uint32_t *imm)
{
	const char *reply;
	unsigned int v;

	if (r->done) {
		if (!r->imm_ok)
			return SDR_RETRY;	/* rebuilt by decoding: its packets never came */
		*imm = r->imm;
		return SDR_SUCCESS;
	}
	/* still arriving: the dataplane knows once every fragment of the immediate is in */
	if (command(r->qp->ctx, &reply, "sdk imm %s %" PRIu64, r->qp->name,
		    (uint64_t)(uintptr_t)r) != SDR_SUCCESS)
		return SDR_ERROR;
	if (sscanf(reply, "ok imm=%u", &v) != 1)
		return SDR_RETRY;
	*imm = v;
	return SDR_SUCCESS;
}

uint32_t
sdr_recv_imm_bits(const struct sdr_recv *r)
{
	return r->done ? r->imm_bits : 0;
}

int
sdr_recv_bitmap_chunk_expand(struct sdr_recv *r, uint32_t chunk, uint64_t *bits)
{
	const char *reply;
	unsigned int n = 0;
	int used = 0;

	if (chunk >= r->nchunks)
		return fail(r->qp->ctx, "chunk %u of a %u-chunk receive", chunk, r->nchunks);
	if (command(r->qp->ctx, &reply, "sdk expand %s %" PRIu64 " %u", r->qp->name,
		    (uint64_t)(uintptr_t)r, chunk) != SDR_SUCCESS)
		return SDR_ERROR;
	if (sscanf(reply, "ok n=%u%n", &n, &used) != 1)
		return fail(r->qp->ctx, "unexpected reply from the dataplane: %.80s", reply);
	reply += used;
	for (unsigned int w = 0; w < (n + 63) / 64; w++) {
		unsigned long long v;
		int k = 0;

		if (sscanf(reply, " %llx%n", &v, &k) != 1)
			return fail(r->qp->ctx, "unexpected reply from the dataplane");
		bits[w] = v;
		reply += k;
	}
	return (int)n;
}

int
sdr_recv_complete(struct sdr_recv *r)
{
	struct sdr_sdk_req q = { .op = SDR_SDK_RECV_DONE, .conn = (uint16_t)r->qp->conn,
				 .cookie = (uint64_t)(uintptr_t)r, .handle = r->handle };
	int rc = submit(r->qp, &q);

	if (rc != SDR_SUCCESS)
		return rc;
	if (r->qp->ctx->requests > 0)
		r->qp->ctx->requests--;
	sdr_mr_dereg(r->bitmap);
	r->bitmap = NULL;
	/* a receive not yet completed gets one more completion (cancelled): free it then */
	if (r->done)
		recv_free(r->qp->ctx, r);
	else
		r->abandoned = 1;
	return SDR_SUCCESS;
}
