/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile SDK client, for the control plane's trust boundary (control.py, case hostile).
 * It attaches to a running dataplane like any application, opens the connections it is
 * given, and for a fixed time, from a seed, does everything a client can do wrong: writes
 * random values at random offsets of everything it can map (its segment's header, call area,
 * queue indices and entries, arena), pushes requests with random and near-valid fields,
 * makes synchronous calls with random arguments, rings doorbells for nothing, goes away and
 * comes back. Meanwhile the dataplane must keep serving the others.
 *
 *   hostile_client INSTANCE SECONDS SEED CONN...
 *   hostile_client --targeted INSTANCE CONN [PEER-CONN]
 *   hostile_client --creates INSTANCE N NAME QPN-BASE [WORDS]
 *   hostile_client --handover INSTANCE
 *
 * --targeted runs the attacks the review found, one at a time, each with the outcome it must
 * have, and prints one JSON object of what each got (control.py asserts them).
 * With two connections joined to each other (CONN1 sends to CONN2), some of what it does is
 * valid: a receive posted on the second and a send of the same length on the first, so the
 * dataplane also places real payload into the arena the client scribbles on.
 * Prints one JSON line: what it did and what it saw (completions per status, how often the
 * dataplane dropped it). Exit status 0 when the dataplane served it to the end (it was still
 * there and answering), 1 when not, 2 on bad arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdr_shm.h"

#define MAX_CONNS 8

struct rng {
	uint64_t s;
};

static uint64_t
next(struct rng *r)
{
	/* splitmix64: reproducible from the seed */
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t
below(struct rng *r, uint64_t n)
{
	return n ? next(r) % n : 0;
}

/* A value of the kinds that find bugs: small, near a bound, all ones, random. */
static uint64_t
edgy(struct rng *r, uint64_t bound)
{
	switch (below(r, 8)) {
	case 0: return 0;
	case 1: return bound;
	case 2: return bound - 1;
	case 3: return bound + 1 + below(r, 4096);
	case 4: return UINT64_MAX - below(r, 16);
	case 5: return (uint64_t)1 << below(r, 64);
	case 6: return below(r, bound + 1);
	default: return next(r);
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct stats {
	uint64_t attaches, refused_attach, dropped, writes, requests, calls, calls_failed, bells;
	uint64_t cqes, cqe_ok, cqe_efault, cqe_ebadf, cqe_einval, cqe_other;
};

/* Other names a call may carry; not the connections the honest clients use (any application
 * may open a connection nobody has open: that is the SDK's model, not an attack). */
static const char *const names_extra[] = { "nosuch", "", "x/y", "a b", "\x01\x7f" };

/* Fill a synchronous call with random, sometimes sensible, arguments. */
static void
random_call(struct rng *r, struct sdr_rpc_req *q, char **conns, int nconns,
	    const int *conn_idx)
{
	uint32_t len;

	q->op = (uint32_t)below(r, 10);
	q->flags = (uint32_t)next(r);
	q->conn = below(r, 2) ? (uint32_t)conn_idx[below(r, (uint64_t)nconns)] :
		  (uint32_t)edgy(r, 64);
	q->cookie = next(r);
	q->chunk = (uint32_t)edgy(r, 64);
	snprintf(q->name, sizeof(q->name), "%s", below(r, 2) ? conns[below(r, (uint64_t)nconns)] :
		 names_extra[below(r, sizeof(names_extra) / sizeof(names_extra[0]))]);
	len = (uint32_t)below(r, 64);
	for (uint32_t i = 0; i < len; i++)
		q->text[i] = (char)(below(r, 4) ? 'a' + below(r, 26) : next(r) & 0xFF);
	q->text[len] = '\0';
	if (below(r, 3) == 0)
		snprintf(q->text, sizeof(q->text), "%s", below(r, 2) ? "scheme ec-mds:8,2" :
			 "port a peer-ip 10.0.0.2 local-qpn 0x700 remote-qpn 0x701 dir both");
	q->len = below(r, 8) ? (uint32_t)strlen(q->text) : (uint32_t)edgy(r, SDR_RPC_TEXT_MAX);
}

static void
random_request(struct rng *r, struct sdr_sdk_req *q, uint64_t arena, const int *conn_idx,
	       int nconns, const uint64_t *handles, unsigned int nh)
{
	q->op = (uint16_t)below(r, 9);
	if (below(r, 4) != 0)
		q->op = (uint16_t)(1 + below(r, 3));	/* mostly sends, receives, RECV_DONE */
	q->conn = below(r, 8) ? (uint16_t)conn_idx[below(r, (uint64_t)nconns)] :
		  (uint16_t)edgy(r, 64);
	q->imm = (uint32_t)next(r);
	q->len = below(r, 2) ? below(r, 256 * 1024) : edgy(r, arena);
	q->off = below(r, 2) ? below(r, arena - (q->len < arena ? q->len : 0) + 1) : edgy(r, arena);
	q->bm_off = below(r, 2) ? below(r, arena) : edgy(r, arena);
	q->cookie = next(r);
	q->handle = nh && below(r, 2) ? handles[below(r, nh < 64 ? nh : 64)] : next(r);
}

/* The next completion within @p ms, or status INT32_MIN when none comes. */
static int32_t
next_cqe(struct sdr_client *c, int ms, struct sdr_sdk_cqe *e)
{
	for (int t = 0; t < ms * 10; t++) {
		if (sdr_spsc_pop(&c->cq[0], e) == 0)
			return e->status;
		usleep(100);
	}
	return INT32_MIN;
}

/* One request; the status of its completion (INT32_MIN: none came in 200 ms). */
static int32_t
request(struct sdr_client *c, const struct sdr_sdk_req *q)
{
	struct sdr_sdk_cqe e;

	if (sdr_spsc_push(&c->sq[0], q) != 0)
		return INT32_MAX;
	return next_cqe(c, 200, &e);
}

/* Attach as an SDK client and open @p conn (its info in c->rep). @return 0 or 1. */
static int
attach_open(const char *instance, const char *conn, struct sdr_client *c)
{
	struct sdr_rpc_req *q;
	char err[256];

	if (sdr_client_attach(instance, SDR_CLIENT_SDK, c, err, sizeof(err)) != 0) {
		fprintf(stderr, "hostile_client: %s\n", err);
		return 1;
	}
	q = &c->rpc->req;
	memset(q, 0, sizeof(*q));
	q->op = SDR_RPC_OPEN;
	snprintf(q->name, sizeof(q->name), "%s", conn);
	if (sdr_client_call(c, 5000, err, sizeof(err)) != SDR_CTL_OK) {
		fprintf(stderr, "hostile_client: open %s: %s\n", conn, c->rep->u.text);
		return 1;
	}
	return 0;
}

/*
 * Call @p op with connection @p name or @p ci and @p words. @return the reply code; *said:
 * its text.
 */
static int
conn_call(struct sdr_client *c, uint32_t op, const char *name, uint16_t ci, const char *words,
	  const char **said)
{
	struct sdr_rpc_req *q = &c->rpc->req;
	char err[256];
	int rc;

	memset(q, 0, sizeof(*q));
	q->op = op;
	q->conn = ci;
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->len = (uint32_t)snprintf(q->text, sizeof(q->text), "%s", words);
	rc = sdr_client_call(c, 5000, err, sizeof(err));
	*said = rc < 0 ? "no answer" : c->rep->u.text;
	return rc;
}

/* SET on connection @p ci with @p words. @return the reply code; *said: its text. */
static int
set_words(struct sdr_client *c, uint16_t ci, const char *words, const char **said)
{
	return conn_call(c, SDR_RPC_SET, "", ci, words, said);
}

/* IMM or EXPAND (@p chunk) of receive @p cookie on @p ci. @return the reply code; *said:
 * its text. */
static int
query(struct sdr_client *c, uint32_t op, uint16_t ci, uint64_t cookie, uint32_t chunk,
      const char **said)
{
	struct sdr_rpc_req *q = &c->rpc->req;
	char err[256];
	int rc;

	memset(q, 0, sizeof(*q));
	q->op = op;
	q->conn = ci;
	q->cookie = cookie;
	q->chunk = chunk;
	rc = sdr_client_call(c, 5000, err, sizeof(err));
	*said = c->rep->u.text;
	return rc;
}

/* CREATE connection @p name with @p words. @return the reply code; *said: its text. */
static int
create_words(struct sdr_client *c, const char *name, const char *words, const char **said)
{
	return conn_call(c, SDR_RPC_CREATE, name, 0, words, said);
}

/*
 * Connections of its own: 16 made (the most one application may have), the 17th refused;
 * on one it made, where it sends is its to change. @return how many were made, -1 if the
 * 17th was not refused as the limit, -2 if SET was refused on its own connection.
 */
static int
creates(struct sdr_client *c)
{
	const char *said;
	int made = 0;
	uint16_t last = 0;

	for (int i = 0; i < 17; i++) {
		char name[16], words[160];

		snprintf(name, sizeof(name), "hq%d", i);
		snprintf(words, sizeof(words), "port a peer-ip 10.0.0.2 peer-mac 02:00:5d:00:00:0b "
			 "local-qpn 0x%x remote-qpn 0x%x dir both", 0x10000 + 0x100 * i,
			 0x20000 + 0x100 * i);
		if (create_words(c, name, words, &said) == SDR_CTL_OK) {
			made++;
			last = (uint16_t)c->rep->u.info.conn;
		} else if (i < 16 || strstr(said, "the most one may have") == NULL)
			return -1;
	}
	if (set_words(c, last, "peer-ip 10.0.0.2 remote-qpn 0x30000",
		      &said) != SDR_CTL_OK)
		return -2;
	return made;
}

/*
 * --creates: attach, create up to @p n connections NAME0, NAME1, ... (local QPNs from
 * @p base, with the connection keys @p more after the address), say how many were made and the first refusal, in one line, then hold them until
 * stdin closes. @return 0, or 1 if it could not attach.
 */
static int
creates_held(const char *instance, unsigned int n, const char *name, unsigned int base,
	     const char *more)
{
	struct sdr_client c;
	const char *said = "";
	char err[256], refusal[256] = "";
	unsigned int made = 0;

	if (sdr_client_attach(instance, SDR_CLIENT_SDK, &c, err, sizeof(err)) != 0) {
		fprintf(stderr, "hostile_client: %s\n", err);
		return 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		char cn[32], words[320];

		snprintf(cn, sizeof(cn), "%s%u", name, i);
		snprintf(words, sizeof(words), "port a peer-ip 10.0.0.2 peer-mac 02:00:5d:00:00:0b "
			 "local-qpn 0x%x remote-qpn 0x%x dir both %.100s", base + 0x100 * i,
			 base + 0x80000 + 0x100 * i, more);
		if (create_words(&c, cn, words, &said) == SDR_CTL_OK)
			made++;
		else if (refusal[0] == '\0')
			snprintf(refusal, sizeof(refusal), "%s", said);
	}
	printf("made %u refused: %s\n", made, refusal);
	fflush(stdout);
	while (getchar() != EOF)
		;
	sdr_client_detach(&c);
	return 0;
}

/*
 * Another application's receive, named by its real handle: @p c (which has @p ci open, a
 * connection that sends to @p peer) sends 4 KiB into a receive that a second application
 * posts on @p peer, takes the handle from that application's completion, and sends
 * RECV_DONE with it, on its own connection and on the other's. The receive must stay the
 * other application's: still there for its EXPAND afterwards, gone after its own RECV_DONE.
 * @return 1 when it stayed, 0 when the RECV_DONE released it, -1 when the set-up failed.
 */
static int
foreign_recv_done(const char *instance, struct sdr_client *c, uint16_t ci, const char *peer,
		  int32_t *other_conn)
{
	struct sdr_client v;
	struct sdr_sdk_cqe e, s;
	const char *said;
	uint16_t vi;
	int kept, gone;

	if (attach_open(instance, peer, &v) != 0)
		return -1;
	vi = (uint16_t)v.rep->u.info.conn;
	if (sdr_spsc_push(&v.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_RECV, .conn = vi,
		.off = 0, .len = 4096, .bm_off = UINT64_MAX, .cookie = 500 }) != 0 ||
	    sdr_spsc_push(&c->sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_SEND, .conn = ci,
		.off = 0, .len = 4096, .cookie = 501 }) != 0 ||
	    next_cqe(&v, 2000, &e) != 0 || e.cookie != 500 || e.handle == 0 ||
	    next_cqe(c, 2000, &s) != 0 || s.cookie != 501) {
		sdr_client_detach(&v);
		return -1;
	}
	/* on its own connection (ignored: not its receive) and on the other's (not open) */
	(void)request(c, &(struct sdr_sdk_req){ .op = SDR_SDK_RECV_DONE, .conn = ci,
		.handle = e.handle, .cookie = 500 });
	*other_conn = request(c, &(struct sdr_sdk_req){ .op = SDR_SDK_RECV_DONE, .conn = vi,
		.handle = e.handle, .cookie = 500 });
	kept = query(&v, SDR_RPC_EXPAND, vi, 500, 0, &said) == SDR_CTL_OK;
	(void)sdr_spsc_push(&v.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_RECV_DONE,
		.conn = vi, .handle = e.handle, .cookie = 500 });
	usleep(100000);
	gone = query(&v, SDR_RPC_EXPAND, vi, 500, 0, &said) != SDR_CTL_OK &&
	       strstr(said, "no such receive") != NULL;
	sdr_client_detach(&v);
	return kept && gone;
}

static int
targeted(const char *instance, const char *conn, const char *peer)
{
	struct sdr_client c;
	struct sdr_rpc_req *q;
	struct sdr_client_hdr *h;
	uint16_t ci;
	char err[256];
	int32_t r_oob, r_bm, r_conn, r_op, r_hdr, r_stale, r_rpc, r_addr, r_rel, r_made;
	int32_t r_exp1, r_expf, r_exp0, r_imm, r_foreign_conn = 0;
	int alive_after_cq, addr_says, exp1_says, imm_says, foreign;
	const char *said;

	if (attach_open(instance, conn, &c) != 0)
		return 1;
	q = &c.rpc->req;
	ci = (uint16_t)c.rep->u.info.conn;
	/* a buffer that runs past the arena */
	r_oob = request(&c, &(struct sdr_sdk_req){ .op = SDR_SDK_SEND, .conn = ci,
		.off = c.L.arena_len - 10, .len = 4096, .cookie = 1 });
	/* a valid buffer, the bitmap past the arena */
	r_bm = request(&c, &(struct sdr_sdk_req){ .op = SDR_SDK_RECV, .conn = ci, .off = 0,
		.len = 4096, .bm_off = c.L.arena_len, .cookie = 2 });
	/* a connection it has not opened */
	r_conn = request(&c, &(struct sdr_sdk_req){ .op = SDR_SDK_SEND, .conn = 63, .off = 0,
		.len = 4096, .cookie = 3 });
	r_op = request(&c, &(struct sdr_sdk_req){ .op = 99, .conn = ci, .cookie = 4 });
	/* its header says the arena is all of memory: the dataplane does not read it */
	h = (struct sdr_client_hdr *)c.seg;
	h->arena_len = UINT64_MAX;
	h->size = UINT64_MAX;
	r_hdr = request(&c, &(struct sdr_sdk_req){ .op = SDR_SDK_SEND, .conn = ci,
		.off = 1ull << 40, .len = 4096, .cookie = 5 });
	/* RECV_DONE of an operation that never was: ignored, no completion */
	r_stale = request(&c, &(struct sdr_sdk_req){ .op = SDR_SDK_RECV_DONE, .conn = ci,
		.handle = 0x0000000500000003ull, .cookie = 6 });
	/* RECV_DONE of another application's receive, by its handle */
	foreign = peer != NULL ? foreign_recv_done(instance, &c, ci, peer, &r_foreign_conn) : 1;
	/* where the administrator's connection sends: not this application's to change (the
	 * next one to open it would send there); a reliability key is */
	r_addr = set_words(&c, ci, "peer-ip 10.9.9.9 remote_qpn 0x4242", &said);
	addr_says = strstr(said, "peer_ip is the administrator's") != NULL;
	r_rel = set_words(&c, ci, "rtt 20ms", &said);
	/* a real receive of 4 KiB (one chunk), asked for the packets of chunks it has not and
	 * for the immediate of a receive that is not there */
	(void)sdr_spsc_push(&c.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_RECV, .conn = ci,
		.off = 0, .len = 4096, .bm_off = 8192, .cookie = 77 });
	usleep(100000);
	r_exp1 = query(&c, SDR_RPC_EXPAND, ci, 77, 1, &said);
	exp1_says = strstr(said, "the chunk is not in the receive") != NULL;
	r_expf = query(&c, SDR_RPC_EXPAND, ci, 77, UINT32_MAX - 1, &said);
	r_exp0 = query(&c, SDR_RPC_EXPAND, ci, 77, 0, &said) == SDR_CTL_OK ?
		 (int32_t)c.rep->u.expand.n : -1;
	r_imm = query(&c, SDR_RPC_IMM, ci, 9999, 0, &said);
	imm_says = strstr(said, "no such receive") != NULL;
	/* a streamed send of two chunks, and pieces of it that are not its: an offset inside a
	 * chunk, a length that wraps, an offset past its end (ignored, counted: control.py) */
	(void)sdr_spsc_push(&c.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_STREAM, .conn = ci,
		.off = 1 << 20, .len = 2 * 65536, .cookie = 88 });
	(void)sdr_spsc_push(&c.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_STREAM_ADD,
		.conn = ci, .off = 1, .len = 65536, .cookie = 88 });
	(void)sdr_spsc_push(&c.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_STREAM_ADD,
		.conn = ci, .off = 65536, .len = UINT64_MAX - 65535, .cookie = 88 });
	(void)sdr_spsc_push(&c.sq[0], &(struct sdr_sdk_req){ .op = SDR_SDK_STREAM_ADD,
		.conn = ci, .off = 2 * 65536, .len = 65536, .cookie = 88 });
	usleep(200000);
	r_made = creates(&c);
	/* a call whose text length is far past its buffer */
	memset(q, 0, sizeof(*q));
	q->op = SDR_RPC_SET;
	q->conn = ci;
	q->len = UINT32_MAX;
	memset(q->text, 'x', sizeof(q->text));
	r_rpc = sdr_client_call(&c, 5000, err, sizeof(err));
	/* let the counters be read (control.py looks now) */
	printf("{\"outside_arena\":%d,\"bitmap_outside_arena\":%d,\"conn_not_open\":%d,"
	       "\"unknown_op\":%d,\"header_lies\":%d,\"stale_handle\":%d,\"set_address\":%d,"
	       "\"set_address_refused_as_admin\":%s,\"set_rtt\":%d,\"created\":%d,"
	       "\"expand_past_chunks\":%d,\"expand_past_chunks_said\":%s,\"expand_far\":%d,"
	       "\"expand_chunk0_packets\":%d,\"imm_no_receive\":%d,\"imm_no_receive_said\":%s,"
	       "\"long_call\":%d,\"foreign_recv_done_kept\":%d,\"foreign_recv_done_conn\":%d",
	       r_oob, r_bm, r_conn, r_op, r_hdr, r_stale, r_addr, addr_says ? "true" : "false",
	       r_rel, r_made, r_exp1, exp1_says ? "true" : "false", r_expf, r_exp0, r_imm,
	       imm_says ? "true" : "false", r_rpc, foreign, r_foreign_conn);
	fflush(stdout);
	sleep(1);
	/* a completion queue whose consumer index is impossible: the dataplane drops the client */
	c.cq[0].sh->cons = c.cq[0].idx + 100000;
	request(&c, &(struct sdr_sdk_req){ .op = 99, .conn = ci, .cookie = 7 });
	alive_after_cq = 1;
	for (int t = 0; t < 100 && alive_after_cq; t++) {
		usleep(10000);
		alive_after_cq = sdr_client_alive(&c);
	}
	printf(",\"dropped_for_cq_index\":%s}\n", alive_after_cq ? "false" : "true");
	sdr_client_detach(&c);
	return 0;
}

/*
 * mode = engines: each engine serves its own queue pair of a client, for the connections it
 * owns. A valid send for @p conn on every other queue pair than its own is refused there
 * (-EBADF), never run by an engine that does not own the connection.
 */
static int
wrong_queue(const char *instance, const char *conn)
{
	struct sdr_client c;
	struct sdr_sdk_cqe e;
	uint32_t own;

	if (attach_open(instance, conn, &c) != 0)
		return 1;
	own = c.rep->u.info.queue;
	printf("{\"queues\":%u,\"own\":%u,\"wrong_queue\":[", c.L.queues, own);
	for (uint32_t k = 0, first = 1; k < c.L.queues; k++) {
		struct sdr_sdk_req r = { .op = SDR_SDK_SEND, .conn = (uint16_t)c.rep->u.info.conn,
					 .off = 0, .len = 4096, .cookie = 100 + k };
		int32_t status = INT32_MIN;

		if (k == own)
			continue;
		if (sdr_spsc_push(&c.sq[k], &r) == 0)
			for (int t = 0; t < 2000 && status == INT32_MIN; t++) {
				if (sdr_spsc_pop(&c.cq[k], &e) == 0)
					status = e.status;
				else
					usleep(100);
			}
		printf("%s%d", first ? "" : ",", status);
		first = 0;
	}
	printf("]}\n");
	sdr_client_detach(&c);
	return 0;
}

/*
 * --handover: application A creates connection "handed" and closes it (it stays, A's);
 * application B opens it; A leaves. The connection passes to B as if B had made it: B may
 * change where it sends (an administrator's key), and B's DESTROY deletes it. Prints "ok"
 * or what went wrong, in one line. @return 0 when it held, 1 when not.
 */
static int
handover(const char *instance)
{
	struct sdr_client a, b;
	const char *said = "";
	char err[256];
	uint16_t ci;
	int rc = -1;

	if (sdr_client_attach(instance, SDR_CLIENT_SDK, &a, err, sizeof(err)) != 0 ||
	    sdr_client_attach(instance, SDR_CLIENT_SDK, &b, err, sizeof(err)) != 0) {
		printf("handover: attach: %s\n", err);
		return 1;
	}
	if (create_words(&a, "handed", "port a peer-ip 10.0.0.2 peer-mac 02:00:5d:00:00:0b "
			 "local-qpn 0x7c000 remote-qpn 0x7d000 dir both", &said) != SDR_CTL_OK) {
		printf("handover: create: %s\n", said);
		return 1;
	}
	ci = (uint16_t)a.rep->u.info.conn;
	if (conn_call(&a, SDR_RPC_CLOSE, "", ci, "", &said) != SDR_CTL_OK ||
	    conn_call(&b, SDR_RPC_OPEN, "handed", 0, "", &said) != SDR_CTL_OK) {
		printf("handover: close by its creator, open by another: %s\n", said);
		return 1;
	}
	sdr_client_detach(&a);
	/* A's leaving is the management loop's: B's SET is refused until it is done */
	for (int t = 0; t < 500 && rc != SDR_CTL_OK; t++) {
		rc = set_words(&b, ci, "remote-qpn 0x7e000", &said);
		if (rc != SDR_CTL_OK)
			usleep(10000);
	}
	if (rc != SDR_CTL_OK) {
		printf("handover: its creator left, the holder still may not set remote-qpn: %s\n",
		       said);
		return 1;
	}
	if (conn_call(&b, SDR_RPC_DESTROY, "", ci, "", &said) != SDR_CTL_OK) {
		printf("handover: destroy by the holder: %s\n", said);
		return 1;
	}
	rc = conn_call(&b, SDR_RPC_OPEN, "handed", 0, "", &said);
	if (rc == SDR_CTL_OK || strcmp(said, "no connection 'handed'") != 0) {
		printf("handover: still there after the holder destroyed it: %d %s\n", rc, said);
		return 1;
	}
	sdr_client_detach(&b);
	printf("handover: ok\n");
	return 0;
}

int
main(int argc, char **argv)
{
	struct stats st = { 0 };
	struct rng r;
	uint64_t handles[64] = { 0 };
	unsigned int nh = 0;
	double deadline;
	int nconns = argc - 4, served = 1;
	char err[256];

	if ((argc == 4 || argc == 5) && strcmp(argv[1], "--targeted") == 0)
		return targeted(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 4 && strcmp(argv[1], "--wrong-queue") == 0)
		return wrong_queue(argv[2], argv[3]);
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "--creates") == 0)
		return creates_held(argv[2], (unsigned int)atoi(argv[3]), argv[4],
				    (unsigned int)strtoul(argv[5], NULL, 0), argc == 7 ? argv[6] : "");
	if (argc == 3 && strcmp(argv[1], "--handover") == 0)
		return handover(argv[2]);
	if (argc < 5 || nconns > MAX_CONNS) {
		fprintf(stderr, "usage: hostile_client INSTANCE SECONDS SEED CONN...\n"
			"       hostile_client --targeted INSTANCE CONN [PEER-CONN]\n"
			"       hostile_client --wrong-queue INSTANCE CONN\n"
			"       hostile_client --creates INSTANCE N NAME QPN-BASE [WORDS]\n"
			"       hostile_client --handover INSTANCE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	r.s = strtoull(argv[3], NULL, 0);
	deadline = now_s() + atof(argv[2]);
	while (now_s() < deadline) {
		struct sdr_client c;
		int conn_idx[MAX_CONNS], calm, broke = 0;
		uint64_t iters;
		double t_end;

		if (sdr_client_attach(argv[1], SDR_CLIENT_SDK, &c, err, sizeof(err)) != 0) {
			st.refused_attach++;
			if (strstr(err, "not running") || strstr(err, "no dataplane")) {
				served = 0;
				break;
			}
			usleep(10000);
			continue;
		}
		st.attaches++;
		/* the connections, opened as an application would */
		for (int i = 0; i < nconns; i++) {
			struct sdr_rpc_req *q = &c.rpc->req;

			memset(q, 0, sizeof(*q));
			q->op = SDR_RPC_OPEN;
			snprintf(q->name, sizeof(q->name), "%s", argv[4 + i]);
			conn_idx[i] = sdr_client_call(&c, 2000, err, sizeof(err)) == SDR_CTL_OK ?
				      (int)c.rep->u.info.conn : 0;
		}
		/*
		 * One session in four is calm for half a second (random requests and valid pairs, no
		 * scribbling): long enough for the SYNC and real transfers into the arena; the
		 * others do everything, for as long as the dataplane keeps them.
		 */
		calm = below(&r, 4) == 0;
		iters = 1 + below(&r, 20000);
		t_end = calm ? now_s() + 0.5 : deadline;
		for (uint64_t k = 0; (calm || k < iters) && now_s() < t_end && now_s() < deadline;
		     k++) {
			uint64_t a = calm ? (below(&r, 2) ? 60 + below(&r, 15) : 87 + below(&r, 10)) :
				     below(&r, 100);

			if (calm)
				usleep(100);

			if (a < 30) {		/* scribble anywhere in the segment */
				uint64_t off = below(&r, 4) == 0 ? below(&r, c.L.sq_off[0] + 4096) :
					       below(&r, c.seg_len - 8);
				uint64_t v = edgy(&r, SDR_SHM_QUEUE_DEPTH);

				memcpy(c.seg + off, &v, 1u << below(&r, 4));
				st.writes++;
			} else if (a < 60) {	/* a request: random, or near valid */
				struct sdr_sdk_req q;

				random_request(&r, &q, c.L.arena_len, conn_idx, nconns, handles, nh);
				if (sdr_spsc_push(&c.sq[0], &q) == 0)
					st.requests++;
			} else if (a < 75) {	/* completions: keep handles to reuse */
				struct sdr_sdk_cqe e;

				while (sdr_spsc_pop(&c.cq[0], &e) == 0) {
					st.cqes++;
					st.cqe_ok += e.status == 0;
					st.cqe_efault += e.status == -EFAULT;
					st.cqe_ebadf += e.status == -EBADF;
					st.cqe_einval += e.status == -EINVAL;
					st.cqe_other += e.status != 0 && e.status != -EFAULT &&
							e.status != -EBADF && e.status != -EINVAL;
					if (e.handle)
						handles[nh++ % 64] = e.handle;
				}
			} else if (a < 80) {	/* a synchronous call with random arguments */
				random_call(&r, &c.rpc->req, argv + 4, nconns, conn_idx);
				st.calls++;
				if (sdr_client_call(&c, 300, err, sizeof(err)) < 0)
					st.calls_failed++;
			} else if (a < 85) {	/* bells for nothing, garbage on the socket */
				uint8_t b[8];

				for (int i = 0; i < 8; i++)
					b[i] = (uint8_t)next(&r);
				send(c.fd, b, 1 + below(&r, 8), MSG_NOSIGNAL | MSG_DONTWAIT);
				st.bells++;
			} else if (a < 86) {	/* an impossible queue index: the dataplane drops us */
				c.sq[0].sh->prod = c.sq[0].idx + SDR_SHM_QUEUE_DEPTH + 1 +
						(uint32_t)below(&r, 1u << 30);
				broke = 1;
			} else if (a < 87) {
				break;		/* go away; come back */
			} else if (a < 97 && nconns >= 2) {	/* a valid pair */
				uint64_t len = 65536, half = c.L.arena_len / 2 - len;
				struct sdr_sdk_req rq = { .op = SDR_SDK_RECV, .len = len,
							  .conn = (uint16_t)conn_idx[1],
							  .off = below(&r, half) & ~63ull,
							  .bm_off = UINT64_MAX, .cookie = next(&r) };
				struct sdr_sdk_req sq = { .op = SDR_SDK_SEND, .len = len,
							  .conn = (uint16_t)conn_idx[0],
							  .off = half + (below(&r, half) & ~63ull),
							  .cookie = next(&r) };

				st.requests += sdr_spsc_push(&c.sq[0], &rq) == 0;
				st.requests += sdr_spsc_push(&c.sq[0], &sq) == 0;
			}
			if (k % 256 == 0 && !sdr_client_alive(&c))
				break;
		}
		/* dropped by the dataplane (it saw an impossible queue index)? It looks every
		 * 50 ms */
		for (int t = 0; t < 200 && broke && sdr_client_alive(&c); t++)
			usleep(1000);
		st.dropped += !sdr_client_alive(&c);
		sdr_client_detach(&c);
	}
	/* still served: a call on a fresh attach is answered */
	if (served) {
		struct sdr_client c;

		served = 0;
		for (int t = 0; t < 100 && !served; t++) {
			if (sdr_client_attach(argv[1], SDR_CLIENT_SDK, &c, err, sizeof(err)) != 0) {
				usleep(20000);
				continue;
			}
			memset(&c.rpc->req, 0, sizeof(c.rpc->req));
			c.rpc->req.op = SDR_RPC_OPEN;
			snprintf(c.rpc->req.name, sizeof(c.rpc->req.name), "%s", argv[4]);
			served = sdr_client_call(&c, 5000, err, sizeof(err)) >= 0;
			sdr_client_detach(&c);
		}
	}
	printf("{\"attaches\":%" PRIu64 ",\"refused_attach\":%" PRIu64 ",\"dropped\":%" PRIu64
	       ",\"writes\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"calls\":%" PRIu64
	       ",\"calls_failed\":%" PRIu64 ",\"bells\":%" PRIu64 ",\"cqes\":%" PRIu64
	       ",\"cqe_ok\":%" PRIu64 ",\"cqe_efault\":%" PRIu64 ",\"cqe_ebadf\":%" PRIu64
	       ",\"cqe_einval\":%" PRIu64 ",\"cqe_other\":%" PRIu64 ",\"served\":%s}\n",
	       st.attaches, st.refused_attach, st.dropped, st.writes, st.requests, st.calls,
	       st.calls_failed, st.bells, st.cqes, st.cqe_ok, st.cqe_efault, st.cqe_ebadf,
	       st.cqe_einval, st.cqe_other, served ? "true" : "false");
	return served ? 0 : 1;
}
