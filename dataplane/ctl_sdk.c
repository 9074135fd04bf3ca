/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK service: applications' requests and completions on the engine, their synchronous
 * calls on the management thread (handed to the engine as jobs where they touch what it
 * owns). See ctl.h.
 *
 * Everything a client writes is a value to check: a request is copied out of its queue
 * (sdr_spsc.h) and then checked field by field against this side's private state — the
 * client's arena bounds, the connections it has open, the operations it has in flight. An
 * operation is named by a generation-tagged handle, so a completion or a RECV_DONE for an
 * operation that has ended never reaches a newer one. A receive given up while a copy or a
 * decode still writes its buffer is held until they are done: only then does the client
 * hear of it, and only then may its memory go.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_random.h>
#include <rte_ring.h>

#include "config_keys.h"
#include "ctl.h"
#include "units.h"

#define REQ_BUDGET 64		/* requests of one client per poll: no client starves packets */
/* A search through a client's operations or its waiting requests by cookie costs this many
 * requests of its budget: a client that sends only such requests (a cookie that matches
 * nothing) must not hold an engine for thousands of steps per request. */
#define SCAN_COST 16
/* The work of a call's flush (ctl_sdk_client_flush()): a full queue and waiting list */
#define FLUSH_BUDGET (2 * SDR_SHM_QUEUE_DEPTH)
#define MAX_WORDS 96

const char *
ctl_sdk_counter_name(int c)
{
	return sdr_counter_name(&sdk_client_counter_table, (unsigned int)c);
}

/* Engine @p e's shard of the SDK service. */
static struct sdk_service *
svc(struct dp_ctx *ctx, unsigned int e)
{
	return &ctx->ctl->sdk[e];
}

/* ---- operations ---- */

static uint64_t
op_handle(unsigned int ci, uint32_t k, const struct sdk_op *op)
{
	return (uint64_t)op->gen << 32 | (ci * CTL_OPS_PER_CLIENT + k);
}

/* The operation @p h names, if it is still that one (and client @p ci's); else NULL. */
static struct sdk_op *
op_of(struct sdk_service *s, uint64_t h, unsigned int *ci, uint32_t *k)
{
	uint32_t idx = (uint32_t)h;
	struct sdk_op *op;

	if (idx >= SDR_SHM_SDK_CLIENTS * CTL_OPS_PER_CLIENT)
		return NULL;
	*ci = idx / CTL_OPS_PER_CLIENT;
	*k = idx % CTL_OPS_PER_CLIENT;
	op = &s->clients[*ci].ops[*k];
	return op->used && op->gen == (uint32_t)(h >> 32) ? op : NULL;
}

static int
op_alloc(struct sdk_service *s, struct sdk_client *c, uint16_t conn, uint32_t *k)
{
	struct sdk_op *op;

	if (c->nfree == 0)
		return -1;
	*k = c->free_ops[--c->nfree];
	op = &c->ops[*k];
	*op = (struct sdk_op){ .gen = op->gen, .used = 1, .conn = conn };
	c->nops++;
	s->conn_ops[conn]++;
	return 0;
}

static void
op_free(struct sdk_service *s, struct sdk_client *c, uint32_t k)
{
	struct sdk_op *op = &c->ops[k];

	s->conn_ops[op->conn]--;
	op->used = 0;
	op->gen = op->gen + 1 ? op->gen + 1 : 1;	/* every handle of it is stale now */
	c->free_ops[c->nfree++] = k;
	c->nops--;
}

/* Client @p c's receive on @p conn that it calls @p cookie (not released). */
static int
find_recv(struct sdk_client *c, uint16_t conn, uint64_t cookie)
{
	c->work += SCAN_COST;
	for (uint32_t k = 0; k < CTL_OPS_PER_CLIENT; k++) {
		const struct sdk_op *op = &c->ops[k];

		if (op->used && op->op == SDR_SDK_RECV && !op->released && op->conn == conn &&
		    op->cookie == cookie)
			return (int)k;
	}
	return -1;
}

static int
find_stream(struct sdk_client *c, uint16_t conn, uint64_t cookie)
{
	c->work += SCAN_COST;
	for (uint32_t k = 0; k < CTL_OPS_PER_CLIENT; k++) {
		const struct sdk_op *op = &c->ops[k];

		if (op->used && op->stream && !op->orphan && op->conn == conn &&
		    op->cookie == cookie)
			return (int)k;
	}
	return -1;
}

/* A completion to the client; a client that does not take them (its queue full) loses it,
 * counted; one that broke its queue's index is dropped. */
static void
post_cqe(struct sdk_client *c, const struct sdr_sdk_cqe *e)
{
	int rc;

	if (c->state != SDK_ACTIVE)
		return;
	rc = sdr_spsc_push(&c->cq, e);
	if (rc == -ENOBUFS)
		c->counters[SDK_C_LOST]++;
	if (rc == -EPROTO) {
		c->counters[SDK_C_PROTOCOL]++;
		c->kick = 1;
	}
}

static void
complete_now(struct sdk_client *c, const struct sdr_sdk_req *r, int32_t status)
{
	struct sdr_sdk_cqe e = { .op = r->op == SDR_SDK_STREAM ? SDR_SDK_SEND : r->op,
				 .conn = r->conn, .status = status, .cookie = r->cookie };

	post_cqe(c, &e);
}

/* ---- receives given up: held while a copy or decode still writes their buffer ---- */

static void
release_done(struct sdk_service *s, struct sdk_client *c, uint32_t k)
{
	struct sdk_op *op = &c->ops[k];

	if (op->cancel_cqe) {
		struct sdr_sdk_cqe e = { .op = SDR_SDK_RECV, .conn = op->conn, .status = -ECANCELED,
					 .cookie = op->cookie };

		post_cqe(c, &e);
	}
	op_free(s, c, k);
}

/* Receive @p k of @p c is given up (@p in_ep: the endpoint still has it posted). */
static void
release_recv(struct dp_ctx *ctx, struct sdk_service *s, struct sdk_client *c, uint32_t k,
	     int in_ep, int notify)
{
	struct sdk_op *op = &c->ops[k];
	struct sdr_ep *ep = ctx->conns[op->conn].ep;

	op->released = 1;
	op->cancel_cqe = (uint8_t)(notify && !op->done);
	if (in_ep && ep != NULL)
		sdr_ep_recv_release(ep, op->slot);
	if (ep == NULL || sdr_ep_recv_writers(ep, op->slot) == 0) {
		release_done(s, c, k);
		return;
	}
	c->rel_ops[c->releasing++] = k;
	s->releasing++;
}

/* Receives whose last copies have landed: the client hears, the operation ends. */
static unsigned int
releases(struct dp_ctx *ctx, struct sdk_service *s)
{
	unsigned int n = 0;

	/* only the receives waiting (a list: not every operation of every client per poll) */
	for (unsigned int ci = 0; ci < SDR_SHM_SDK_CLIENTS && s->releasing > 0; ci++) {
		struct sdk_client *c = &s->clients[ci];

		for (uint32_t i = 0; i < c->releasing;) {
			uint32_t k = c->rel_ops[i];
			const struct sdk_op *op = &c->ops[k];
			struct sdr_ep *ep = ctx->conns[op->conn].ep;

			if (ep != NULL && sdr_ep_recv_writers(ep, op->slot) != 0) {
				i++;
				continue;
			}
			c->rel_ops[i] = c->rel_ops[--c->releasing];
			s->releasing--;
			release_done(s, c, k);
			n++;
		}
	}
	return n;
}

/* ---- requests ---- */

/* [off, off + len) lies inside the client's arena (offsets from its start). */
static uint8_t *
arena_ptr(const struct sdk_client *c, uint64_t off, uint64_t len)
{
	if (len > c->arena_len || off > c->arena_len - len)
		return NULL;
	return c->arena + off;
}

/*
 * Connection @p cn's endpoint where it is engine @p e's, else NULL: the endpoint read first
 * (published last, with release, by dp_conn_install() on the owner's lcore), then whose it
 * is, as the poll loop's mine() does: a slot reused by another engine's connection is seen
 * whole or not at all.
 */
static inline struct sdr_ep *
engine_ep(const struct dp_conn *cn, unsigned int e)
{
	struct sdr_ep *ep = __atomic_load_n(&cn->ep, __ATOMIC_ACQUIRE);

	return ep != NULL && cn->engine == e ? ep : NULL;
}

/* The connection of a request on shard @p s: open by this client, and this engine's (a
 * request on another engine's queue pair is refused: it would touch what that one owns). */
static struct dp_conn *
req_conn(struct dp_ctx *ctx, const struct sdk_service *s, unsigned int ci,
	 const struct sdk_client *c, uint16_t conn)
{
	struct dp_conn *cn = conn < ctx->nconns && conn < DP_MAX_CONNS ? &ctx->conns[conn] : NULL;

	if (cn == NULL || engine_ep(cn, s->engine) == NULL || cn->owner != (int)ci ||
	    !(c->conns & (1ull << conn)))
		return NULL;
	return cn;
}

/* RECV_DONE: by the completion's handle, or (given up before it completed) by cookie. */
static void
recv_done(struct dp_ctx *ctx, struct sdk_service *s, unsigned int ci, struct sdk_client *c,
	  const struct sdr_sdk_req *r)
{
	unsigned int hc;
	uint32_t k;
	struct sdk_op *op = r->handle ? op_of(s, r->handle, &hc, &k) : NULL;
	int i;

	if (op != NULL && hc == ci && op->op == SDR_SDK_RECV && op->conn == r->conn &&
	    !op->released) {
		release_recv(ctx, s, c, k, 1, 1);
		return;
	}
	i = find_recv(c, r->conn, r->cookie);
	if (i < 0) {
		c->counters[SDK_C_STALE_HANDLES]++;	/* nothing of that name: ignored */
		return;
	}
	release_recv(ctx, s, c, (uint32_t)i, 1, 1);
}

/*
 * One request of client @p ci (a private copy). @return 0 when it was handled (done,
 * refused or failed: a completion says so), -EAGAIN when the connection has no room for it
 * now: it waits, in order (the SDK's "retry", as the dataplane sees it).
 */
static int
sdk_request(struct dp_ctx *ctx, struct sdk_service *s, unsigned int ci, struct sdk_client *c,
	    const struct sdr_sdk_req *r, uint64_t now)
{
	struct dp_conn *cn;
	uint8_t *buf, *bm = NULL;
	uint32_t slot, k;
	int rc;

	if (r->op < SDR_SDK_SEND || r->op > SDR_SDK_STREAM_END) {
		c->counters[SDK_C_REFUSED]++;
		complete_now(c, r, -EINVAL);
		return 0;
	}
	cn = req_conn(ctx, s, ci, c, r->conn);
	if (cn == NULL) {
		c->counters[SDK_C_REFUSED]++;
		complete_now(c, r, -EBADF);
		return 0;
	}
	if (r->op == SDR_SDK_RECV_DONE) {
		recv_done(ctx, s, ci, c, r);
		return 0;
	}
	if (r->op == SDR_SDK_STREAM_ADD || r->op == SDR_SDK_STREAM_END) {
		/* a stream that is over already (completed, failed) ignores late additions */
		int i = find_stream(c, r->conn, r->cookie);

		if (i < 0) {
			c->counters[SDK_C_STALE_HANDLES]++;
		} else if (r->op == SDR_SDK_STREAM_ADD) {
			if (sdr_ep_stream_add(cn->ep, &c->ops[i].st, r->off, r->len) == -EINVAL)
				c->counters[SDK_C_STREAM_REFUSED]++;
		} else {
			sdr_ep_stream_end(cn->ep, &c->ops[i].st);
		}
		return 0;
	}
	buf = arena_ptr(c, r->off, r->len);
	if (r->op == SDR_SDK_RECV && r->bm_off != UINT64_MAX) {
		uint64_t chunk = cn->cfg->ep.attr.chunk_size;

		bm = arena_ptr(c, r->bm_off, r->len ? (r->len + chunk - 1) / chunk : 1);
		if (bm == NULL)
			buf = NULL;
	}
	if (buf == NULL) {
		c->counters[SDK_C_REFUSED]++;
		complete_now(c, r, -EFAULT);	/* outside the client's memory: refused */
		return 0;
	}
	if (!sdr_ep_synced(cn->ep) || op_alloc(s, c, r->conn, &k) != 0)
		return -EAGAIN;	/* the peer has not answered our SYNC yet; or no room */
	c->ops[k].op = (uint8_t)(r->op == SDR_SDK_RECV ? SDR_SDK_RECV : SDR_SDK_SEND);
	c->ops[k].cookie = r->cookie;
	if (r->op == SDR_SDK_SEND) {
		/* a priority out of range is refused there (-EINVAL), below */
		rc = sdr_ep_send_prio(cn->ep, buf, r->len, r->imm, op_handle(ci, k, &c->ops[k]), now,
				      r->handle > SDR_EP_PRIO_MAX ? UINT32_MAX : (unsigned int)r->handle,
				      NULL);
	} else if (r->op == SDR_SDK_STREAM) {
		c->ops[k].stream = 1;
		rc = sdr_ep_send_prio(cn->ep, buf, r->len, r->imm, op_handle(ci, k, &c->ops[k]), now,
				      r->handle > SDR_EP_PRIO_MAX ? UINT32_MAX : (unsigned int)r->handle,
				      &c->ops[k].st);
	} else {
		rc = sdr_ep_recv(cn->ep, buf, r->len, bm, op_handle(ci, k, &c->ops[k]), now, &slot);
		c->ops[k].slot = slot;
	}
	if (rc != 0) {
		op_free(s, c, k);
		if (rc == -EAGAIN)
			return rc;	/* in-flight limit or slot still busy: later */
		c->counters[SDK_C_REFUSED]++;
		complete_now(c, r, rc);
	}
	return 0;
}

/* Bits of the user immediate a message carries: a fragment per packet, up to all 32. */
static uint32_t
imm_bits(const struct dp_conn *conn, uint32_t slot)
{
	const struct sdr_imm_split *sp = &conn->cfg->ep.attr.split;
	struct sdr_rx_msg_info info;
	uint32_t frags = sdr_imm_nfrags(sp), bits;

	if (sdr_ep_recv_info(conn->ep, slot, &info) == 0 && info.npkts < frags)
		frags = info.npkts;
	bits = frags * sp->frag_bits;
	return bits > 32 ? 32 : bits;
}

/* Completions of connection @p i (if this engine's), each to the client that asked. */
static unsigned int
conn_completions(struct dp_ctx *ctx, struct sdk_service *s, unsigned int i)
{
	struct dp_conn *conn = &ctx->conns[i];
	struct sdr_ep *ep = engine_ep(conn, s->engine);
	struct sdr_ep_done d;
	unsigned int n = 0;

	if (ep == NULL)
		return 0;
	while (sdr_ep_poll(ep, &d)) {
		unsigned int ci;
		uint32_t k;
		struct sdk_op *op = op_of(s, d.cookie, &ci, &k);
		struct sdk_client *c;
		struct sdr_sdk_cqe e;

		n++;
		if (op == NULL || op->conn != i) {
			s->counters[SDK_S_STALE_COMPLETIONS]++;	/* its operation has ended */
			continue;
		}
		c = &s->clients[ci];
		e = (struct sdr_sdk_cqe){
			.op = op->op, .conn = op->conn, .status = d.status,
			.handle = d.cookie, .decoded = d.decoded,
			.retransmitted = d.retransmitted, .cookie = op->cookie,
			.start_ns = d.first_ns ? d.first_ns : d.start_ns, .end_ns = d.end_ns,
		};
		if (d.is_recv) {
			if (op->released)
				continue;	/* given up: the release ends it */
			op->done = 1;
			if (op->orphan) {
				release_recv(ctx, s, c, k, 1, 0);
				continue;
			}
			e.imm_ok = sdr_ep_recv_imm(ep, d.slot, &e.imm) == 0 ?
				   imm_bits(conn, d.slot) : 0;
		} else {
			int orphan = op->orphan;

			op_free(s, c, k);
			if (orphan)
				continue;
		}
		post_cqe(c, &e);
	}
	return n;
}

/* Completions of every connection that an SDK client holds or has operations on. */
static unsigned int
completions(struct dp_ctx *ctx, struct sdk_service *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ctx->nconns; i++)
		if (ctx->conns[i].owner >= 0 || s->conn_ops[i] != 0)
			n += conn_completions(ctx, s, i);
	return n;
}

static struct sdr_sdk_req *
deferred_at(struct sdk_deferred *d, uint32_t i)
{
	return &d->r[(d->head + i) % SDR_SHM_QUEUE_DEPTH];
}

/* Drop the waiting requests that match (@p all, or a receive @p cookie on @p conn). */
static int
deferred_drop(struct sdk_client *c, uint16_t conn, int all, uint64_t cookie, int notify)
{
	struct sdk_deferred *d = c->deferred;
	uint32_t w = 0, dropped = 0;

	c->work += d->n ? SCAN_COST : 0;
	for (uint32_t i = 0; i < d->n; i++) {
		struct sdr_sdk_req *r = deferred_at(d, i);

		if (r->conn == conn && (all || (r->op == SDR_SDK_RECV && r->cookie == cookie))) {
			if (notify)
				complete_now(c, r, -ECANCELED);
			dropped++;
			continue;
		}
		if (w != i)
			*deferred_at(d, w) = *r;
		w++;
	}
	d->n = w;
	return dropped > 0;
}

/* One client's requests: the waiting ones first, then its queue, @p budget of work (in
 * requests: each request, and each search by cookie more). @return requests handled. */
static unsigned int
client_queue(struct dp_ctx *ctx, struct sdk_service *s, unsigned int ci, struct sdk_client *c,
	     uint64_t now, unsigned int budget)
{
	struct sdk_deferred *d = c->deferred;
	struct sdr_sdk_req r;
	unsigned int n = 0;

	c->work = 0;
	while (c->work < budget && d->n > 0 &&
	       sdk_request(ctx, s, ci, c, deferred_at(d, 0), now) == 0) {
		d->head = (d->head + 1) % SDR_SHM_QUEUE_DEPTH;
		d->n--;
		n++;
		c->work++;
	}
	/* back-pressure: a client with a full set of operations, or of waiting requests,
	 * waits in its queue */
	while (c->work < budget && c->nops < CTL_OPS_PER_CLIENT - 1 &&
	       d->n < SDR_SHM_QUEUE_DEPTH) {
		int rc = sdr_spsc_pop(&c->sq, &r);

		if (rc == -EPROTO) {
			c->counters[SDK_C_PROTOCOL]++;
			c->kick = 1;
		}
		if (rc != 0)
			break;
		n++;
		c->work++;
		c->counters[SDK_C_REQUESTS]++;
		if (r.op == SDR_SDK_RECV_DONE && r.handle == 0 && r.conn < DP_MAX_CONNS &&
		    deferred_drop(c, r.conn, 0, r.cookie, 1))
			continue;	/* given up before it was ever posted */
		if (r.op != SDR_SDK_RECV_DONE && d->n > 0) {
			*deferred_at(d, d->n++) = r;	/* behind the ones already waiting */
			continue;
		}
		if (sdk_request(ctx, s, ci, c, &r, now) != 0)
			*deferred_at(d, d->n++) = r;
	}
	return n;
}

/* ---- a client lets go of a connection: what it has in flight ends on both sides ---- */

static void
conn_reset(struct dp_ctx *ctx, struct sdk_service *s, unsigned int ci, unsigned int conn,
	   uint64_t now)
{
	struct sdk_client *c = &s->clients[ci];
	struct dp_conn *cn = &ctx->conns[conn];

	deferred_drop(c, (uint16_t)conn, 1, 0, 0);
	/* even with nothing in flight: receives it gave up may still hold sequence numbers
	 * that the sender has to hear about */
	if (cn->ep != NULL)
		sdr_ep_abort(cn->ep, now);
	for (uint32_t k = 0; k < CTL_OPS_PER_CLIENT && s->conn_ops[conn] > 0; k++) {
		struct sdk_op *op = &c->ops[k];

		if (!op->used || op->conn != conn)
			continue;
		if (op->op == SDR_SDK_SEND)
			op->orphan = 1;		/* its completion (cancelled) ends it */
		else if (!op->released)
			release_recv(ctx, s, c, k, 0, 0);	/* the abort released it */
	}
	if (cn->owner == (int)ci)
		cn->owner = -1;
	c->conns &= ~(1ull << conn);
	/*
	 * What the abort collected goes now: the cancelled sends end (orphans, no completion),
	 * and a receive that completed in this loop, released above, is dropped as stale. Left
	 * in the endpoint, nobody would poll it once the connection has no operation and no
	 * holder, and the connection would stay busy (no delete, no set) for good.
	 */
	conn_completions(ctx, s, conn);
}

/* ---- the engine's poll ---- */

/* A shard's work: completions, receives whose copies landed, the clients' queue pairs. */
static unsigned int
shard_poll(struct dp_ctx *ctx, struct sdk_service *s, uint64_t now)
{
	unsigned int n = completions(ctx, s);

	if (s->releasing > 0)
		n += releases(ctx, s);
	for (unsigned int ci = 0; ci < SDR_SHM_SDK_CLIENTS; ci++) {
		struct sdk_client *c = &s->clients[ci];

		/* every client's queue pair, even with no connection of this engine open: a
		 * request there is refused, not left to wait */
		if (c->state == SDK_ACTIVE && !c->kick)
			n += client_queue(ctx, s, ci, c, now, REQ_BUDGET);
		else if (c->state == SDK_LEAVING && c->nops == 0)
			c->state = SDK_GONE;	/* nothing of it is left */
	}
	return n;
}

/*
 * A call of client @p ci comes by the management socket, its requests by its queue pairs:
 * before the call's job acts on engine @p e, the requests the client queued there first are
 * handled (a receive it released before asking for a rebuild is released, so the rebuild
 * does not find the connection in use). Once, with the work of a queue and a waiting list
 * of plain requests (FLUSH_BUDGET): a client that keeps its queue full of searches by
 * cookie while it calls holds the engine no longer than that; what is left waits for the
 * polls, and the call may find the connection in use (-EBUSY, the client asks again).
 */
void
ctl_sdk_client_flush(struct dp_ctx *ctx, unsigned int e, unsigned int ci, uint64_t now)
{
	struct sdk_service *s;
	struct sdk_client *c;

	if (ctx->ctl == NULL || e >= ctx->ctl->engines || ci >= SDR_SHM_SDK_CLIENTS)
		return;
	s = svc(ctx, e);
	c = &s->clients[ci];
	if (c->state == SDK_ACTIVE && !c->kick)
		client_queue(ctx, s, ci, c, now, FLUSH_BUDGET);
	if (s->releasing > 0)
		releases(ctx, s);
}

unsigned int
ctl_sdk_poll(struct dp_ctx *ctx, uint64_t now)
{
	struct ctl_job *j;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(ctx->ctl->jobs, (void **)&j) == 0) {
		j->rc = j->fn(ctx, j);
		__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
		n++;
	}
	return n + shard_poll(ctx, svc(ctx, 0), now);
}

unsigned int
ctl_sdk_shard_poll(struct dp_ctx *ctx, unsigned int e, uint64_t now)
{
	return e < ctx->ctl->engines ? shard_poll(ctx, svc(ctx, e), now) : 0;
}

/* ---- jobs of the management thread ---- */

/* Engine j->engine: its queue pair of client j->slot, segment j->p laid out as j->q. */
static int
job_attach(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct sdk_client *c = &svc(ctx, j->engine)->clients[j->slot];
	const struct sdr_client_layout *L = j->q;
	uint8_t *seg = j->p;
	unsigned int e = j->engine;

	if (c->state != SDK_FREE && c->state != SDK_GONE)
		return -EBUSY;
	c->arena = seg + L->arena_off;
	c->arena_len = L->arena_len;
	sdr_spsc_bind(&c->sq, seg + L->sq_off[e], SDR_SHM_QUEUE_DEPTH, sizeof(struct sdr_sdk_req));
	sdr_spsc_bind(&c->cq, seg + L->cq_off[e], SDR_SHM_QUEUE_DEPTH, sizeof(struct sdr_sdk_cqe));
	c->conns = 0;
	c->nops = 0;
	c->releasing = 0;
	c->nfree = 0;
	for (uint32_t k = CTL_OPS_PER_CLIENT; k > 0; k--) {
		c->ops[k - 1].used = 0;	/* generations go on: old handles stay stale */
		if (c->ops[k - 1].gen == 0)
			c->ops[k - 1].gen = 1;
		c->free_ops[c->nfree++] = k - 1;
	}
	c->deferred->head = c->deferred->n = 0;
	memset(c->counters, 0, sizeof(c->counters));
	c->kick = 0;
	c->state = SDK_ACTIVE;
	return 0;
}

int
ctl_sdk_attach(struct dp_ctx *ctx, unsigned int slot, uint8_t *seg,
	       const struct sdr_client_layout *L)
{
	struct ctl_job j = { .fn = job_attach, .slot = slot, .p = seg, .q = (void *)(uintptr_t)L };
	int rc = 0;

	/* every engine serves its own queue pair of the client */
	for (j.engine = 0; j.engine < ctx->ctl->engines && rc == 0; j.engine++)
		rc = ctl_engine_call(ctx, &j);
	return rc;
}

/* Engine j->engine: client j->slot is gone; what it had in flight there ends. */
static int
job_detach(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct sdk_service *s = svc(ctx, j->engine);
	struct sdk_client *c = &s->clients[j->slot];
	uint64_t now = dp_now_ns(ctx);

	if (c->state == SDK_FREE)
		return 0;	/* never attached here */
	c->state = SDK_LEAVING;
	for (unsigned int i = 0; i < DP_MAX_CONNS; i++)
		if (c->conns & (1ull << i))
			conn_reset(ctx, s, j->slot, i, now);
	c->deferred->n = 0;
	if (c->nops == 0)
		c->state = SDK_GONE;
	return 0;
}

void
ctl_sdk_detach(struct dp_ctx *ctx, unsigned int slot)
{
	struct ctl_job j = { .fn = job_detach, .slot = slot };

	/* a dataplane that is stopping keeps the client's memory until its lcores have stopped
	 * (dp_control_fini()) */
	for (j.engine = 0; j.engine < ctx->ctl->engines; j.engine++)
		ctl_engine_call(ctx, &j);
}

int
ctl_sdk_gone(struct dp_ctx *ctx, unsigned int slot)
{
	for (unsigned int e = 0; e < ctx->ctl->engines; e++) {
		uint8_t st = svc(ctx, e)->clients[slot].state;

		if (st != SDK_GONE && st != SDK_FREE)
			return 0;
	}
	return 1;
}

int
ctl_sdk_kicked(struct dp_ctx *ctx, unsigned int slot)
{
	for (unsigned int e = 0; e < ctx->ctl->engines; e++)
		if (svc(ctx, e)->clients[slot].kick)
			return 1;
	return 0;
}

void
ctl_sdk_client_stats(const struct dp_ctx *ctx, unsigned int slot, uint32_t *ops,
		     uint32_t *waiting, uint64_t counters[SDK_C_NCOUNTERS])
{
	*ops = 0;
	*waiting = 0;
	memset(counters, 0, SDK_C_NCOUNTERS * sizeof(uint64_t));
	for (unsigned int e = 0; e < ctx->ctl->engines; e++) {
		const struct sdk_client *c = &ctx->ctl->sdk[e].clients[slot];

		*ops += c->nops;
		*waiting += c->deferred->n;
		for (int k = 0; k < SDK_C_NCOUNTERS; k++)
			counters[k] += c->counters[k];
	}
}

uint64_t
ctl_sdk_service_counter(const struct dp_ctx *ctx, enum sdk_service_counter c)
{
	uint64_t n = 0;

	for (unsigned int e = 0; ctx->ctl != NULL && e < ctx->ctl->engines; e++)
		n += ctx->ctl->sdk[e].counters[c];
	return n;
}

/* ---- synchronous calls ---- */

static void
fill_info(const struct dp_conn *c, unsigned int i, struct sdr_rpc_info *info)
{
	const struct sdr_conn_attr *a = &c->cfg->ep.attr;

	*info = (struct sdr_rpc_info){
		.conn = i, .local_qpn = a->local_qpn, .remote_qpn = a->remote_qpn, .mtu = a->mtu,
		.chunk_size = a->chunk_size, .max_inflight = a->max_inflight,
		.max_msg_size = a->max_msg_size, .channels = a->channels,
		.generations = a->generations, .id_bits = a->split.id_bits,
		.off_bits = a->split.off_bits, .frag_bits = a->split.frag_bits,
		.queue = c->engine, .stripes = c->cfg->stripes, .stripe = c->cfg->stripe,
	};
	{
		struct sdr_scheme now = sdr_ep_scheme(c->ep, NULL);	/* in force (auto) */

		sdr_scheme_format(&now, info->scheme, sizeof(info->scheme));
	}
}

/* Engine: client j->slot opens connection j->conn; its info goes to j->rep. */
static int
job_open(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct sdk_client *c = &svc(ctx, j->engine)->clients[j->slot];
	struct dp_conn *cn = &ctx->conns[j->conn];

	if (cn->ep == NULL || cn->engine != j->engine)
		return -ENOENT;	/* gone, or another one in its place since */
	if (cn->traffic != NULL || (cn->owner >= 0 && cn->owner != (int)j->slot)) {
		snprintf(j->err, j->errlen, "'%s' is in use by %s", cn->cfg->name,
			 cn->traffic ? "the built-in traffic" : "another application");
		return -EBUSY;
	}
	cn->owner = (int)j->slot;
	c->conns |= 1ull << j->conn;
	/* its requests wait until the peer has acted on every reset it started */
	sdr_ep_sync(cn->ep, rte_rand(), dp_now_ns(ctx));
	fill_info(cn, j->conn, &j->rep->u.info);
	return 0;
}

/* Engine: client j->slot lets go of connection j->conn (what is in flight ends). */
static int
job_close(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct sdk_service *s = svc(ctx, j->engine);
	struct sdk_client *c = &s->clients[j->slot];

	if (!(c->conns & (1ull << j->conn)))
		return -ENOENT;
	conn_reset(ctx, s, j->slot, j->conn, dp_now_ns(ctx));
	return 0;
}

/* Engine: how many operations client j->slot still has on connection j->conn. */
static int
job_conn_ops(struct dp_ctx *ctx, struct ctl_job *j)
{
	const struct sdk_client *c = &svc(ctx, j->engine)->clients[j->slot];
	int n = 0;

	for (uint32_t k = 0; k < CTL_OPS_PER_CLIENT; k++)
		n += c->ops[k].used && c->ops[k].conn == j->conn;
	return n;
}

/* Engine: the immediate (j->u32 == 0) or chunk j->u32 - 1's packets of receive j->u64. */
static int
job_query(struct dp_ctx *ctx, struct ctl_job *j)
{
	struct sdk_service *s = svc(ctx, j->engine);
	struct sdk_client *c = &s->clients[j->slot];
	struct dp_conn *cn = req_conn(ctx, s, j->slot, c, (uint16_t)j->conn);
	int k, n;

	if (cn == NULL)
		return -EBADF;
	k = find_recv(c, (uint16_t)j->conn, j->u64);
	if (k < 0)
		return -ENOENT;
	if (j->u32 == 0) {
		j->rep->u.imm.ok = sdr_ep_recv_imm(cn->ep, c->ops[k].slot, &j->rep->u.imm.imm) == 0;
		return 0;
	}
	/* the reply holds 1024 packets of a chunk; the geometry allows more */
	if (sdr_ep_geom(cn->ep)->pkts_per_chunk > 64 * 16)
		return -E2BIG;
	n = sdr_ep_recv_chunk_pkts(cn->ep, c->ops[k].slot, j->u32 - 1, j->rep->u.expand.bits);
	if (n < 0)
		return -ERANGE;
	j->rep->u.expand.n = (uint32_t)n;
	return 0;
}

static int __attribute__((format(printf, 2, 3)))
refuse(struct sdr_rpc_rep *rep, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rep->u.text, sizeof(rep->u.text), fmt, ap);
	va_end(ap);
	rep->len = n > 0 ? (uint32_t)n : 0;
	rep->rc = SDR_CTL_BAD_INPUT;
	return -1;
}

/* Close connection @p i for client @p ci, and wait (bounded) until nothing of it is left:
 * its buffers are the application's again. */
static int
close_conn(struct dp_ctx *ctx, unsigned int ci, unsigned int i, struct sdr_rpc_rep *rep)
{
	struct ctl_job j = { .fn = job_close, .slot = ci, .conn = i,
			     .engine = ctx->conns[i].engine };

	if (ctl_engine_call(ctx, &j) != 0)
		return refuse(rep, "connection %u is not open here", i);
	j.fn = job_conn_ops;
	for (int t = 0; t < 2000 && ctl_engine_call(ctx, &j) > 0; t++)
		usleep(1000);
	if (j.rc < 0)
		return refuse(rep, "connection %u: the dataplane is stopping", i);
	if (j.rc != 0) {
		refuse(rep, "connection %u: %d operations still ending after 2 s", i, j.rc);
		rep->rc = SDR_CTL_FAILED;	/* (libsdr: they may still write its memory) */
		return -1;
	}
	return 0;
}

/* Client j->slot opens connection @p i (its requests wait for the peer's SYNC answer). */
static void
open_conn(struct dp_ctx *ctx, struct ctl_job *j, int i)
{
	j->fn = job_open;
	j->conn = (unsigned int)i;
	j->engine = ctx->conns[i].engine;	/* the engine that owns it serves its requests */
	if (ctl_engine_call(ctx, j) != 0)
		refuse(j->rep, "%s", j->err[0] ? j->err : "connection gone");
}

/* The connection's key/value words from a call's text. */
static int
call_words(struct sdr_rpc_req *q, char **argv, struct sdr_rpc_rep *rep)
{
	char err[128];
	int argc = ctl_cli_words(q->text, argv, MAX_WORDS, err, sizeof(err));

	if (argc < 0)
		return refuse(rep, "%s", err);
	return argc;
}

/*
 * Whether client @p ci may create one more connection: at most CTL_CREATES_PER_CLIENT of
 * its own, CTL_CREATES_PER_USER of its user's applications (the dataplane's own user is not
 * limited), CTL_CREATES_APPS of all applications together, so that one user's 16 slots
 * cannot fill the table before the administrator's `conn add`. @return 0, or -1 (refused in
 * @p rep).
 */
static int
may_create(const struct dp_ctx *ctx, unsigned int ci, struct sdr_rpc_rep *rep)
{
	const struct ctl_slot *slots = ctx->ctl->slots;
	uid_t uid = slots[ci].uid;
	unsigned int mine = 0, user = 0, apps = 0;

	for (unsigned int i = 0; i < ctx->nconns; i++) {
		int k = ctx->conns[i].creator;

		if (ctx->conns[i].ep == NULL || k < 0)
			continue;
		apps++;
		mine += k == (int)ci;
		user += slots[k].uid == uid;
	}
	if (mine >= CTL_CREATES_PER_CLIENT) {
		refuse(rep, "this application has created %u connections, the most one may have "
		       "at once (the table of %u is shared)", CTL_CREATES_PER_CLIENT, DP_MAX_CONNS);
		return -1;
	}
	if (uid != geteuid() && user >= CTL_CREATES_PER_USER) {
		refuse(rep, "the applications of user %u have created %u connections, the most "
		       "one user may have at once", (unsigned int)uid, CTL_CREATES_PER_USER);
		return -1;
	}
	if (apps >= CTL_CREATES_APPS) {
		refuse(rep, "applications have created %u connections: the other %u of the "
		       "table's %u are kept for the configuration and sdrctl", CTL_CREATES_APPS,
		       DP_MAX_CONNS - CTL_CREATES_APPS, DP_MAX_CONNS);
		return -1;
	}
	return 0;
}

/*
 * Whether the connections of client @p ci's user (those its applications created and those
 * they have open, each once) stay within [dataplane] user_memory of buffers with @p cc in
 * place of connection @p conn (-1: a new one). The dataplane's own user is not limited.
 * @return 0, or -1 (refused in @p rep).
 */
static int
user_memory_ok(const struct dp_ctx *ctx, unsigned int ci, int conn, const struct dp_conn_cfg *cc,
	       struct sdr_rpc_rep *rep)
{
	const struct ctl_slot *slots = ctx->ctl->slots;
	uint64_t need = sdr_ep_buffer_bytes(&cc->ep), sum = need;
	uid_t uid = slots[ci].uid;
	char a[32], b[32];
	unsigned int n = 1;

	/* (a geometry it cannot have: the install refuses it, saying why) */
	if (uid == geteuid() || need == UINT64_MAX)
		return 0;
	for (unsigned int i = 0; i < ctx->nconns; i++) {
		const struct dp_conn *cn = &ctx->conns[i];
		uint64_t x;

		if (cn->ep == NULL || (int)i == conn ||
		    !((cn->creator >= 0 && slots[cn->creator].uid == uid) ||
		      (cn->owner >= 0 && slots[cn->owner].uid == uid)))
			continue;
		x = sdr_ep_buffer_bytes(&cn->cfg->ep);
		sum += x != UINT64_MAX ? x : 0;
		n++;
	}
	if (sum <= ctx->cfg.user_memory)
		return 0;
	return refuse(rep, "[conn %s] the %u connections of user %u's applications would need %s "
		      "of buffers with it: more than [dataplane] user_memory %s", cc->name, n,
		      (unsigned int)uid, units_fmt_size(sum, a, sizeof(a)),
		      units_fmt_size(ctx->cfg.user_memory, b, sizeof(b)));
}

/*
 * SET from client @p ci on connection @p conn: where the connection's frames go and what it
 * trusts (the keys marked admin) it may change only on a connection it created. One that
 * the file or sdrctl made outlives the application, and the next one to open it would
 * send its data wherever this one pointed it. @return 0, or -1 refused.
 */
static int
admin_words(struct dp_ctx *ctx, unsigned int ci, unsigned int conn, int argc, char *const *argv,
	    struct sdr_rpc_rep *rep)
{
	if (ctx->conns[conn].creator == (int)ci)
		return 0;
	for (int i = 0; i < argc; i += 2) {
		char key[64];
		int k;

		dp_config_key_name(key, sizeof(key), argv[i]);	/* as the SET parses it */
		k = dp_key_find(&dp_conn_keys, key);
		if (k >= 0 && dp_conn_keys.keys[k].admin)
			return refuse(rep, "connection '%s': %s is the administrator's (sdrctl conn "
				      "set): an application changes it only on a connection it "
				      "created", ctx->cfg.conns[conn].name, key);
	}
	return 0;
}

void
ctl_sdk_call(struct dp_ctx *ctx, unsigned int ci, const struct sdr_rpc_req *req,
	     struct sdr_rpc_rep *rep)
{
	struct sdr_rpc_req q = *req;
	char err[512], *argv[MAX_WORDS];
	struct ctl_job j = { .slot = ci, .rep = rep, .err = err, .errlen = sizeof(err) };
	struct dp_conn_cfg tmp;
	int i, argc, rc;

	err[0] = '\0';
	rep->rc = SDR_CTL_OK;
	switch (q.op) {
	case SDR_RPC_OPEN:
		i = ctl_find_conn(ctx, q.name);
		if (i < 0)
			refuse(rep, "no connection '%s'", q.name);
		else
			open_conn(ctx, &j, i);
		return;
	case SDR_RPC_CREATE:
		if (ctl_find_conn(ctx, q.name) >= 0) {
			refuse(rep, "a connection '%s' exists already", q.name);
			return;
		}
		if (may_create(ctx, ci, rep) != 0)
			return;
		argc = call_words(&q, argv, rep);
		if (argc < 0)
			return;
		if (dp_config_conn_words(&ctx->cfg, &tmp, q.name, argc, argv, 1, err,
					 sizeof(err)) != 0) {
			refuse(rep, "%s", err);
			return;
		}
		if (user_memory_ok(ctx, ci, -1, &tmp, rep) != 0)
			return;
		i = ctl_conn_install(ctx, -1, &tmp, (int)ci, (int)ci, err, sizeof(err));
		if (i < 0)
			refuse(rep, "%s", err);
		else
			open_conn(ctx, &j, i);
		return;
	case SDR_RPC_SET:
		if (q.conn >= DP_MAX_CONNS || ctx->conns[q.conn].ep == NULL ||
		    ctx->conns[q.conn].owner != (int)ci) {
			refuse(rep, "connection %u is not open here", q.conn);
			return;
		}
		argc = call_words(&q, argv, rep);
		if (argc < 0 || admin_words(ctx, ci, q.conn, argc, argv, rep) != 0)
			return;
		tmp = ctx->cfg.conns[q.conn];
		if (dp_config_conn_words(&ctx->cfg, &tmp, tmp.name, argc, argv, 0, err,
					 sizeof(err)) != 0) {
			refuse(rep, "%s", err);
			return;
		}
		if (user_memory_ok(ctx, ci, (int)q.conn, &tmp, rep) != 0)
			return;
		if (ctl_conn_install(ctx, (int)q.conn, &tmp, (int)ci, -1, err, sizeof(err)) < 0) {
			refuse(rep, "%s", err);
			return;
		}
		open_conn(ctx, &j, (int)q.conn);	/* the new endpoint, still its: SYNC again */
		return;
	case SDR_RPC_CLOSE:
	case SDR_RPC_DESTROY:
		if (q.conn >= DP_MAX_CONNS) {
			refuse(rep, "connection %u is not open here", q.conn);
			return;
		}
		if (close_conn(ctx, ci, q.conn, rep) != 0)
			return;
		if (q.op == SDR_RPC_DESTROY && ctx->conns[q.conn].creator == (int)ci &&
		    ctl_conn_delete(ctx, q.conn, err, sizeof(err)) != 0)
			refuse(rep, "%s", err);
		return;
	case SDR_RPC_IMM:
	case SDR_RPC_EXPAND:
		if (q.conn >= DP_MAX_CONNS || (q.op == SDR_RPC_EXPAND && q.chunk == UINT32_MAX)) {
			refuse(rep, "connection %u is not open here", q.conn);
			return;
		}
		j.fn = job_query;
		j.conn = q.conn;
		j.engine = ctx->conns[q.conn].engine;
		j.u64 = q.cookie;
		j.u32 = q.op == SDR_RPC_IMM ? 0 : q.chunk + 1;
		rc = ctl_engine_call(ctx, &j);
		if (rc != 0)
			refuse(rep, "%s", rc == -EBADF ? "the connection is not open here" :
			       rc == -ENOENT ? "no such receive" : rc == -E2BIG ?
			       "chunks of more than 1024 packets cannot be expanded" :
			       rc == -ERANGE ? "the chunk is not in the receive" : "the dataplane is "
			       "stopping");
		return;
	default:
		refuse(rep, "unknown call %u", q.op);
		return;
	}
}
