/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr-coll (sdr_coll.h): the communicator and a ring-schedule executor on libsdr.
 *
 * Every operation is a list of steps. A step sends one message to the next rank and/or
 * receives one from the previous rank (order-based matching pairs the k-th send of a rank
 * with the k-th receive of its neighbour, so both follow the same list). A receive lands in
 * the working buffer (place) or in scratch space whose chunks are then reduced into the
 * working buffer (reduce); a send either has its bytes ready at once or is fed by a step's
 * receive: a stream whose ready prefix grows as that receive's chunks arrive and are
 * reduced (sdr_send_stream_continue), which is how a ring's steps overlap. The executor
 * polls the receives' bitmaps (the dataplane's partial-completion view), the completion
 * queues and the clock, with an idle backoff so a waiting rank leaves the CPU to the
 * dataplane.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_reduce.h"
#include "libsdr.h"
#include "sdr_coll.h"

#define MAX_STEPS_INFLIGHT 64u
#define NAME_MAX_LEN 64

struct sdr_comm {
	int rank, size;
	int prev, next;			/* ring neighbours */
	struct sdr_context *ctx;
	struct sdr_qp *tx, *rx;		/* to next, from prev */
	uint32_t tx_chunk, rx_chunk;
	uint64_t tx_max_msg, rx_max_msg;
	uint32_t window;		/* steps in flight: the smaller max_inflight */
	struct sdr_mr *mr;
	uint8_t *mem;
	size_t mem_len;
	double timeout_s;
	uint32_t op_seq;
	int broken;			/* a failed operation leaves the ring out of step */
	struct sdr_coll_stats st;
	char err[320];
};

/* ---- one operation: its steps and their progress ---- */

enum { KIND_ALLREDUCE = 0, KIND_REDUCE_SCATTER = 1, KIND_ALLGATHER = 2, KIND_BROADCAST = 3 };

struct step {
	uint64_t send_off, send_len;	/* in the working buffer; len 0: no send */
	uint64_t recv_off, recv_len;	/* len 0: no receive */
	uint64_t scratch_off;		/* reduce: where the receive lands */
	int reduce;
	int fed_by;			/* the step whose receive feeds this send; -1: ready */
	/* receive progress */
	struct sdr_recv *rh;
	uint8_t *seen;			/* per chunk: reduced / placed */
	uint32_t nchunks, prefix;	/* chunks [0, prefix) are all done */
	int posted, recv_done;
	/* send progress */
	struct sdr_send_stream ss;
	uint64_t declared;		/* stream bytes declared ready */
	int started, ended, send_done;
};

struct op {
	struct sdr_comm *c;
	struct step *s;
	int n;
	enum sdr_coll_type type;
	enum sdr_coll_op rop;
	int kind;
	size_t esz;
	uint8_t *work, *scratch;
	uint32_t imm_base;
	int next_recv, next_send;	/* the next step to post a receive / start a send for */
};

static int
fail(struct sdr_comm *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return code;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t
sdr_coll_type_size(enum sdr_coll_type type)
{
	static const size_t sz[SDR_COLL_NTYPES] = { 4, 2, 2, 4, 8 };

	return (unsigned int)type < SDR_COLL_NTYPES ? sz[type] : 0;
}

const char *
sdr_coll_type_name(enum sdr_coll_type type)
{
	static const char *const n[SDR_COLL_NTYPES] = { "float32", "float16", "bfloat16", "int32",
							 "int64" };

	return (unsigned int)type < SDR_COLL_NTYPES ? n[type] : "unknown";
}

const char *
sdr_coll_op_name(enum sdr_coll_op op)
{
	static const char *const n[SDR_COLL_NOPS] = { "sum", "max", "min" };

	return (unsigned int)op < SDR_COLL_NOPS ? n[op] : "unknown";
}

/* ---- communicator ---- */

struct rank_line {
	int seen;
	char instance[NAME_MAX_LEN], send[NAME_MAX_LEN], recv[NAME_MAX_LEN];
};

/* Read the rank file: every rank 0 .. N-1 exactly once. @return N, or an error code. */
static int
read_rankfile(const char *path, struct rank_line **out, char *err, size_t errlen)
{
	struct rank_line *l = NULL;
	char line[512];
	int n = 0, lineno = 0, maxr = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		snprintf(err, errlen, "rank file %s: %s", path, strerror(errno));
		return SDR_COLL_E_RANKFILE;
	}
	while (fgets(line, sizeof(line), f)) {
		char inst[NAME_MAX_LEN], snd[NAME_MAX_LEN], rcv[NAME_MAX_LEN], extra[2];
		char *hash = strchr(line, '#');
		int r, k;

		lineno++;
		if (hash)
			*hash = '\0';
		k = sscanf(line, "%d %63s %63s %63s %1s", &r, inst, snd, rcv, extra);
		if (k <= 0)
			continue;	/* blank or a comment */
		if (k != 4 || r < 0 || r >= 4096) {	/* (the count is checked below) */
			snprintf(err, errlen, "rank file %s:%d: expected 'RANK INSTANCE "
				 "SEND-CONNECTION RECEIVE-CONNECTION'", path, lineno);
			goto bad;
		}
		if (r > maxr) {
			struct rank_line *m = realloc(l, (size_t)(r + 1) * sizeof(*l));

			if (m == NULL) {
				snprintf(err, errlen, "rank file %s: out of memory", path);
				goto bad;
			}
			memset(m + maxr + 1, 0, (size_t)(r - maxr) * sizeof(*l));
			l = m;
			maxr = r;
		}
		if (l[r].seen) {
			snprintf(err, errlen, "rank file %s:%d: rank %d appears twice", path, lineno,
				 r);
			goto bad;
		}
		l[r].seen = 1;
		snprintf(l[r].instance, NAME_MAX_LEN, "%s", inst);
		snprintf(l[r].send, NAME_MAX_LEN, "%s", snd);
		snprintf(l[r].recv, NAME_MAX_LEN, "%s", rcv);
		n++;
	}
	fclose(f);
	f = NULL;
	if (n > SDR_COLL_MAX_RANKS) {
		snprintf(err, errlen, "rank file %s: %d ranks; at most %d (a step is numbered in 8 "
			 "bits)", path, n, SDR_COLL_MAX_RANKS);
		goto bad;
	}
	if (n < 2 || maxr != n - 1) {
		for (int r = 0; r <= maxr; r++)
			if (!l[r].seen) {
				snprintf(err, errlen, "rank file %s: rank %d is missing", path, r);
				goto bad;
			}
		snprintf(err, errlen, "rank file %s: %d rank%s; a communicator needs at least 2",
			 path, n, n == 1 ? "" : "s");
		goto bad;
	}
	*out = l;
	return n;
bad:
	if (f)
		fclose(f);
	free(l);
	return SDR_COLL_E_RANKFILE;
}

int
sdr_comm_create(const char *rankfile, int rank, const struct sdr_comm_cfg *cfg,
		struct sdr_comm **comm, char *err, size_t errlen)
{
	struct rank_line *l = NULL;
	struct sdr_qp_info ti, ri;
	struct sdr_comm *c;
	char e[256];
	int n;

	if (err == NULL || errlen == 0) {
		err = e;
		errlen = sizeof(e);
	}
	*comm = NULL;
	n = read_rankfile(rankfile, &l, err, errlen);
	if (n < 0)
		return n;
	if (rank < 0 || rank >= n) {
		snprintf(err, errlen, "rank %d is not in %s (ranks 0 to %d)", rank, rankfile, n - 1);
		free(l);
		return SDR_COLL_E_RANKFILE;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return SDR_COLL_E_NOMEM;
	}
	c->rank = rank;
	c->size = n;
	c->prev = (rank + n - 1) % n;
	c->next = (rank + 1) % n;
	c->timeout_s = cfg && cfg->timeout_s > 0 ? cfg->timeout_s : 10.0;
	if (sdr_context_create(l[rank].instance, &c->ctx, e, sizeof(e)) != SDR_SUCCESS) {
		snprintf(err, errlen, "rank %d: %s", rank, e);
		goto bad;
	}
	if (sdr_qp_open(c->ctx, l[rank].send, &c->tx) != SDR_SUCCESS ||
	    sdr_qp_open(c->ctx, l[rank].recv, &c->rx) != SDR_SUCCESS ||
	    sdr_qp_info_get(c->tx, &ti) != SDR_SUCCESS || sdr_qp_info_get(c->rx, &ri) != SDR_SUCCESS) {
		snprintf(err, errlen, "rank %d (instance %s, connections %s and %s): %s", rank,
			 l[rank].instance, l[rank].send, l[rank].recv, sdr_last_error(c->ctx));
		goto bad;
	}
	c->tx_chunk = ti.chunk_size;
	c->rx_chunk = ri.chunk_size;
	c->tx_max_msg = ti.max_msg_size;
	c->rx_max_msg = ri.max_msg_size;
	c->window = ti.max_inflight < ri.max_inflight ? ti.max_inflight : ri.max_inflight;
	if (c->window > MAX_STEPS_INFLIGHT)
		c->window = MAX_STEPS_INFLIGHT;
	if (c->window == 0 || c->tx_chunk == 0 || c->rx_chunk == 0) {
		snprintf(err, errlen, "rank %d: connections %s / %s report no chunk size or window",
			 rank, l[rank].send, l[rank].recv);
		goto bad;
	}
	free(l);
	*comm = c;
	return SDR_COLL_OK;
bad:
	free(l);
	sdr_comm_destroy(c);
	return SDR_COLL_E_SDK;
}

int
sdr_comm_from_env(const struct sdr_comm_cfg *cfg, struct sdr_comm **comm, char *err,
		  size_t errlen)
{
	static const char *const rank_vars[] = { "SDR_COLL_RANK", "OMPI_COMM_WORLD_RANK",
						  "PMI_RANK" };
	const char *file = getenv("SDR_COLL_RANKFILE"), *v = NULL, *var = NULL;
	char *end;
	long r;

	*comm = NULL;
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]) && v == NULL; i++)
		if ((v = getenv(rank_vars[i])) != NULL)
			var = rank_vars[i];
	if (file == NULL || v == NULL) {
		if (err)
			snprintf(err, errlen, "set SDR_COLL_RANKFILE (the rank file) and "
				 "SDR_COLL_RANK (this rank; or OMPI_COMM_WORLD_RANK, PMI_RANK)");
		return SDR_COLL_E_RANKFILE;
	}
	errno = 0;
	r = strtol(v, &end, 10);
	if (errno || end == v || *end || r < 0 || r > 4095) {
		if (err)
			snprintf(err, errlen, "%s='%s' is not a rank number", var, v);
		return SDR_COLL_E_RANKFILE;
	}
	return sdr_comm_create(file, (int)r, cfg, comm, err, errlen);
}

void
sdr_comm_destroy(struct sdr_comm *c)
{
	if (c == NULL)
		return;
	if (c->mr)
		sdr_mr_dereg(c->mr);
	if (c->tx)
		sdr_qp_destroy(c->tx);
	if (c->rx)
		sdr_qp_destroy(c->rx);
	if (c->ctx)
		sdr_context_destroy(c->ctx);
	free(c);
}

int
sdr_comm_rank(const struct sdr_comm *c)
{
	return c->rank;
}

int
sdr_comm_size(const struct sdr_comm *c)
{
	return c->size;
}

const char *
sdr_comm_error(const struct sdr_comm *c)
{
	return c->err;
}

void
sdr_coll_last_stats(const struct sdr_comm *c, struct sdr_coll_stats *s)
{
	*s = c->st;
}

/* Registered memory for an operation: @p len bytes (kept between operations). */
static int
memory(struct sdr_comm *c, size_t len)
{
	void *p;

	if (len <= c->mem_len)
		return SDR_COLL_OK;
	if (c->mr) {
		sdr_mr_dereg(c->mr);
		c->mr = NULL;
		c->mem = NULL;
		c->mem_len = 0;
	}
	if (sdr_mr_reg(c->ctx, len, &p, &c->mr) != SDR_SUCCESS)
		return fail(c, SDR_COLL_E_SDK, "registering %zu bytes: %s", len,
			    sdr_last_error(c->ctx));
	c->mem = p;
	c->mem_len = len;
	return SDR_COLL_OK;
}

/* ---- the executor ---- */

/*
 * The immediate of a step's message: what the receiver checks it against (the operation,
 * its type and reduction, a hash of its size, the step), so that ranks that call different
 * operations, types or sizes fail instead of mixing their data.
 */
static uint32_t
imm_of(const struct op *o, int t)
{
	return o->imm_base | ((uint32_t)t & 0xFF);
}

static uint32_t
imm_mask(uint32_t bits)
{
	return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
}

/* Chunks of step @p t's receive that arrived since the last look: reduce or keep them. */
static void
take_chunks(struct op *o, struct step *s, int all)
{
	const volatile uint8_t *bm = NULL;
	uint32_t n = 0, chunk = o->c->rx_chunk;

	if (!all) {
		bm = sdr_recv_bitmap_get(s->rh, &n);
		if (bm == NULL || n < s->nchunks)
			return;
		/* the bitmap says a chunk is in; its bytes were written before: read them
		 * after it (arm64 needs the barrier, x86 gets it for free) */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	}
	for (uint32_t k = s->prefix; k < s->nchunks; k++) {
		uint64_t off = (uint64_t)k * chunk, len;

		if (s->seen[k] || (!all && !bm[k]))
			continue;
		len = s->recv_len - off < chunk ? s->recv_len - off : chunk;
		if (s->reduce)
			coll_reduce(o->work + s->recv_off + off, o->scratch + s->scratch_off + off,
				    len / o->esz, o->type, o->rop);
		s->seen[k] = 1;
		o->c->st.chunks++;
		if (!all)
			o->c->st.chunks_early++;
	}
	while (s->prefix < s->nchunks && s->seen[s->prefix])
		s->prefix++;
}

/* Declare to a fed send what its feeding receive has ready. @return 0 or an error. */
static int
feed(struct op *o, struct step *s)
{
	const struct step *src = &o->s[s->fed_by];
	uint64_t ready = src->prefix == src->nchunks ? s->send_len :
			 (uint64_t)src->prefix * o->c->rx_chunk, add;
	int rc;

	if (ready > s->send_len)
		ready = s->send_len;
	if (ready < s->send_len)	/* stream pieces are whole chunks but the last */
		ready -= ready % o->c->tx_chunk;
	if (!s->started)
		return 0;
	if (ready > s->declared) {
		add = ready - s->declared;
		rc = sdr_send_stream_continue(&s->ss, s->declared, add);
		if (rc == SDR_RETRY)
			return 0;
		if (rc != SDR_SUCCESS)
			return fail(o->c, SDR_COLL_E_SDK, "send to rank %d: %s", o->c->next,
				    sdr_last_error(o->c->ctx));
		s->declared = ready;
	}
	if (s->declared == s->send_len && !s->ended) {	/* the stream is whole */
		rc = sdr_send_stream_end(&s->ss);
		if (rc == SDR_RETRY)
			return 0;
		if (rc != SDR_SUCCESS)
			return fail(o->c, SDR_COLL_E_SDK, "send to rank %d: %s", o->c->next,
				    sdr_last_error(o->c->ctx));
		s->ended = 1;
	}
	return 0;
}

/* Whether step @p next may begin its receive (or send): fewer than a window of steps since
 * the oldest one still open (steps with nothing to do are marked done as they are passed). */
static int
in_window(const struct op *o, int next, int sends)
{
	int oldest = 0;

	while (oldest < next && (sends ? o->s[oldest].send_done : o->s[oldest].recv_done))
		oldest++;
	return (uint32_t)(next - oldest) < o->c->window;
}

static int
post_and_start(struct op *o)
{
	struct sdr_comm *c = o->c;
	int rc;

	/* receives in step order, a window ahead of the oldest unfinished one */
	while (o->next_recv < o->n) {
		struct step *s = &o->s[o->next_recv];

		if (s->recv_len == 0) {
			s->recv_done = 1;
			o->next_recv++;
			continue;
		}
		if (!in_window(o, o->next_recv, 0))
			break;
		rc = sdr_recv_post(c->rx, (s->reduce ? o->scratch + s->scratch_off :
				    o->work + s->recv_off), s->recv_len, (uint64_t)o->next_recv, &s->rh);
		if (rc == SDR_RETRY)
			break;
		if (rc != SDR_SUCCESS)
			return fail(c, SDR_COLL_E_SDK, "receive from rank %d: %s", c->prev,
				    sdr_last_error(c->ctx));
		s->posted = 1;
		o->next_recv++;
	}
	/* sends in step order, the same way */
	while (o->next_send < o->n) {
		struct step *s = &o->s[o->next_send];
		uint64_t cookie = ((uint64_t)c->op_seq << 8) | (uint64_t)o->next_send;

		if (s->send_len == 0) {
			s->send_done = 1;
			o->next_send++;
			continue;
		}
		if (!in_window(o, o->next_send, 1))
			break;
		if (s->fed_by < 0)
			rc = sdr_send_post(c->tx, o->work + s->send_off, s->send_len,
					   imm_of(o, o->next_send), cookie);
		else
			rc = sdr_send_stream_start(c->tx, o->work + s->send_off, s->send_len,
						   imm_of(o, o->next_send), cookie, &s->ss);
		if (rc == SDR_RETRY)
			break;
		if (rc != SDR_SUCCESS)
			return fail(c, SDR_COLL_E_SDK, "send to rank %d: %s", c->next,
				    sdr_last_error(c->ctx));
		s->started = 1;
		c->st.messages_sent++;
		o->next_send++;
	}
	return 0;
}

static int
run(struct op *o)
{
	struct sdr_comm *c = o->c;
	double last = now_s();
	uint32_t idle = 0;
	int rc = 0;

	for (;;) {
		struct sdr_completion cp;
		int progress = 0, done = 1;

		if ((rc = post_and_start(o)) != 0)
			break;
		for (int t = 0; t < o->n; t++) {
			struct step *s = &o->s[t];

			if (s->posted && !s->recv_done) {
				uint32_t before = s->prefix;
				uint64_t had = c->st.chunks;

				take_chunks(o, s, 0);
				progress |= s->prefix != before || c->st.chunks != had;
			}
			if (s->fed_by >= 0 && s->started && !s->ended) {
				uint64_t before = s->declared;

				if ((rc = feed(o, s)) != 0)
					goto out;
				progress |= s->declared != before || s->ended;
			}
			done &= s->recv_done && s->send_done;
		}
		if (done)
			break;
		while ((rc = sdr_recv_poll(c->rx, &cp)) == SDR_SUCCESS) {
			int t = (int)cp.cookie;
			struct step *s;

			if (t < 0 || t >= o->n || !o->s[t].posted || o->s[t].recv_done) {
				rc = fail(c, SDR_COLL_E_PEER, "a receive completion this operation "
					  "never posted (%" PRIu64 ")", cp.cookie);
				goto out;
			}
			s = &o->s[t];
			progress = 1;
			if (cp.status != 0) {
				rc = fail(c, SDR_COLL_E_FAILED, "the message from rank %d (step %d) "
					  "failed in the dataplane (status %d)", c->prev, t, cp.status);
				goto out;
			}
			if (cp.imm_ok && ((cp.imm ^ imm_of(o, t)) & imm_mask(cp.imm_bits))) {
				rc = fail(c, SDR_COLL_E_PEER, "rank %d sent step %d of another "
					  "operation (immediate 0x%08x, expected 0x%08x in the low %u "
					  "bits): do all ranks call the same operation with the same "
					  "type, reduction and size?", c->prev, t, cp.imm, imm_of(o, t),
					  cp.imm_bits);
				goto out;
			}
			take_chunks(o, s, 1);
			s->recv_done = 1;
			c->st.messages_received++;
			c->st.decoded += cp.decoded;
			while ((rc = sdr_recv_complete(cp.recv)) == SDR_RETRY)
				;
			if (rc != SDR_SUCCESS) {
				rc = fail(c, SDR_COLL_E_SDK, "%s", sdr_last_error(c->ctx));
				goto out;
			}
		}
		if (rc == SDR_ERROR) {
			rc = fail(c, SDR_COLL_E_SDK, "receive from rank %d: %s", c->prev,
				  sdr_last_error(c->ctx));
			goto out;
		}
		while ((rc = sdr_send_poll(c->tx, &cp)) == SDR_SUCCESS) {
			int t = (int)(cp.cookie & 0xFF);

			if ((cp.cookie >> 8) != c->op_seq || t >= o->n || !o->s[t].started ||
			    o->s[t].send_done) {
				rc = fail(c, SDR_COLL_E_PEER, "a send completion this operation never "
					  "started (%" PRIu64 ")", cp.cookie);
				goto out;
			}
			progress = 1;
			if (cp.status != 0) {
				rc = fail(c, SDR_COLL_E_FAILED, "the message to rank %d (step %d) failed "
					  "in the dataplane (status %d: no answer from it?)", c->next, t,
					  cp.status);
				goto out;
			}
			o->s[t].send_done = 1;
			c->st.retransmitted += cp.retransmitted;
		}
		if (rc == SDR_ERROR) {
			rc = fail(c, SDR_COLL_E_SDK, "send to rank %d: %s", c->next,
				  sdr_last_error(c->ctx));
			goto out;
		}
		rc = 0;
		if (progress) {
			last = now_s();
			idle = 0;
			continue;
		}
		if (now_s() - last > c->timeout_s) {
			int waiting_recv = 0;

			for (int t = 0; t < o->n; t++)
				if (!o->s[t].recv_done) {
					waiting_recv = 1;
					break;
				}
			rc = fail(c, SDR_COLL_E_TIMEOUT, "rank %d delivered nothing for %.1f s "
				  "(waiting for its %s)", waiting_recv ? c->prev : c->next,
				  c->timeout_s, waiting_recv ? "data" : "acknowledgements");
			goto out;
		}
		/* idle backoff: the chunks arrive through the dataplane, which needs the CPU */
		if (++idle > 256)
			usleep(idle > 16384 ? 200 : 20);
	}
out:
	/* receives still open are handed back; a failed operation leaves the ring out of
	 * step, so the communicator refuses further operations */
	for (int t = 0; t < o->n; t++)
		if (o->s[t].posted && !o->s[t].recv_done) {
			for (int k = 0; k < 1000 && sdr_recv_complete(o->s[t].rh) == SDR_RETRY; k++)
				;
		}
	if (rc != 0)
		c->broken = 1;
	return rc;
}

/* Set an operation up: @p n steps, @p work_bytes of working and @p scratch_bytes of
 * scratch memory. */
static int
op_init(struct op *o, struct sdr_comm *c, int kind, int n, size_t work_bytes,
	size_t scratch_bytes, enum sdr_coll_type type, enum sdr_coll_op rop, size_t count)
{
	int rc;

	memset(o, 0, sizeof(*o));
	o->c = c;
	o->kind = kind;
	o->type = type;
	o->rop = rop;
	o->esz = sdr_coll_type_size(type);
	if (c->broken)
		return fail(c, SDR_COLL_E_ARG, "an earlier operation failed: the ranks are out of "
			    "step; create the communicator again");
	if (o->esz == 0 || (unsigned int)rop >= SDR_COLL_NOPS)
		return fail(c, SDR_COLL_E_ARG, "unknown type %d or reduction %d", (int)type,
			    (int)rop);
	c->op_seq = (c->op_seq + 1) & 0xFFFFFF;
	memset(&c->st, 0, sizeof(c->st));
	/* 0xKK TT SS tt: kind and reduction, type and size hash, operation number, step */
	o->imm_base = ((uint32_t)kind << 30) | ((uint32_t)rop << 28) | ((uint32_t)type << 25) |
		      ((uint32_t)((count * 2654435761u) >> 7) & 0x1FF) << 16 |
		      ((c->op_seq & 0xFF) << 8);
	rc = memory(c, work_bytes + scratch_bytes + 64);
	if (rc)
		return rc;
	o->work = c->mem;
	o->scratch = c->mem + ((work_bytes + 63) & ~(size_t)63);
	o->s = calloc((size_t)n, sizeof(*o->s));
	if (o->s == NULL && n)
		return fail(c, SDR_COLL_E_NOMEM, "out of memory");
	o->n = n;
	return 0;
}

static void
op_free(struct op *o)
{
	for (int t = 0; t < o->n; t++)
		free(o->s[t].seen);
	free(o->s);
}

/* Size the receive of step @p t and check both messages fit the connections. */
static int
step_ready(struct op *o, int t)
{
	struct step *s = &o->s[t];
	struct sdr_comm *c = o->c;

	if (s->send_len > c->tx_max_msg)
		return fail(c, SDR_COLL_E_ARG, "a step sends %" PRIu64 " bytes; the connection to "
			    "rank %d takes messages up to %" PRIu64 " (raise its max_msg)",
			    s->send_len, c->next, c->tx_max_msg);
	if (s->recv_len > c->rx_max_msg)
		return fail(c, SDR_COLL_E_ARG, "a step receives %" PRIu64 " bytes; the connection "
			    "from rank %d takes messages up to %" PRIu64 " (raise its max_msg)",
			    s->recv_len, c->prev, c->rx_max_msg);
	s->nchunks = (uint32_t)((s->recv_len + c->rx_chunk - 1) / c->rx_chunk);
	if (s->recv_len && (s->seen = calloc(s->nchunks, 1)) == NULL)
		return fail(c, SDR_COLL_E_NOMEM, "out of memory");
	return 0;
}

static int
mod(int a, int n)
{
	return ((a % n) + n) % n;
}

/*
 * The ring's Reduce-Scatter (steps [first, first + N - 1)) and/or Allgather (the N - 1 after)
 * over segments (off[j], len[j]) of the working buffer. Reduce-Scatter step s sends segment
 * r - s - 1 and reduces segment r - s - 2 into the working buffer, so rank r ends with
 * segment r reduced; Allgather step s sends segment r - s and places segment r - s - 1.
 * Each send after the first is fed by the previous step's receive: the segment it sends is
 * the one that step was receiving.
 */
static void
ring_steps(struct op *o, const uint64_t *off, const uint64_t *len, int rs, int ag)
{
	int r = o->c->rank, n = o->c->size, t = 0;
	uint64_t scratch = 0;

	for (int s = 0; rs && s < n - 1; s++, t++) {
		int sj = mod(r - s - 1, n), rj = mod(r - s - 2, n);

		o->s[t] = (struct step){ .send_off = off[sj], .send_len = len[sj],
					 .recv_off = off[rj], .recv_len = len[rj],
					 .scratch_off = scratch, .reduce = 1, .fed_by = t - 1 };
		scratch += (len[rj] + 63) & ~(uint64_t)63;
	}
	for (int s = 0; ag && s < n - 1; s++, t++) {
		int sj = mod(r - s, n), rj = mod(r - s - 1, n);

		o->s[t] = (struct step){ .send_off = off[sj], .send_len = len[sj],
					 .recv_off = off[rj], .recv_len = len[rj],
					 .fed_by = t - 1 };
	}
	/* the first step's send has its bytes already: the rank's own data (Allgather alone:
	 * its own block) */
	o->s[0].fed_by = -1;
}

static int
finish(struct op *o)
{
	int rc = 0;

	for (int t = 0; t < o->n && rc == 0; t++)
		rc = step_ready(o, t);
	if (rc == 0)
		rc = run(o);
	return rc;
}

int
sdr_allreduce(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
	      enum sdr_coll_type type, enum sdr_coll_op op)
{
	int n = c->size, rc;
	size_t esz = sdr_coll_type_size(type), bytes = count * esz, scratch = 0;
	uint64_t *off, *len;
	struct op o;

	if ((count && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "allreduce: a NULL buffer or an unknown type");
	off = calloc((size_t)n, sizeof(*off));
	len = calloc((size_t)n, sizeof(*len));
	if (off == NULL || len == NULL) {
		free(off);
		free(len);
		return fail(c, SDR_COLL_E_NOMEM, "out of memory");
	}
	for (int j = 0; j < n; j++) {
		size_t e = count / (size_t)n + ((size_t)j < count % (size_t)n);

		len[j] = e * esz;
		off[j] = j ? off[j - 1] + len[j - 1] : 0;
		scratch += (len[j] + 63) & ~(size_t)63;
	}
	rc = op_init(&o, c, KIND_ALLREDUCE, 2 * (n - 1), bytes, scratch, type, op, count);
	if (rc == 0) {
		memcpy(o.work, sendbuf, bytes);
		ring_steps(&o, off, len, 1, 1);
		rc = finish(&o);
		if (rc == 0)
			memcpy(recvbuf, o.work, bytes);
	}
	op_free(&o);
	free(off);
	free(len);
	return rc;
}

/* Equal blocks of @p block bytes: (offsets, lengths) of the N segments. */
static int
blocks(struct sdr_comm *c, size_t block, uint64_t **off, uint64_t **len)
{
	*off = calloc((size_t)c->size, sizeof(**off));
	*len = calloc((size_t)c->size, sizeof(**len));
	if (*off == NULL || *len == NULL) {
		free(*off);
		free(*len);
		return fail(c, SDR_COLL_E_NOMEM, "out of memory");
	}
	for (int j = 0; j < c->size; j++) {
		(*off)[j] = (uint64_t)j * block;
		(*len)[j] = block;
	}
	return 0;
}

int
sdr_reduce_scatter(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t recvcount,
		   enum sdr_coll_type type, enum sdr_coll_op op)
{
	size_t esz = sdr_coll_type_size(type), block = recvcount * esz;
	uint64_t *off, *len;
	struct op o;
	int rc;

	if ((recvcount && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "reduce_scatter: a NULL buffer or an unknown type");
	if ((rc = blocks(c, block, &off, &len)) != 0)
		return rc;
	rc = op_init(&o, c, KIND_REDUCE_SCATTER, c->size - 1, block * (size_t)c->size,
		     ((block + 63) & ~(size_t)63) * (size_t)(c->size - 1), type, op, recvcount);
	if (rc == 0) {
		memcpy(o.work, sendbuf, block * (size_t)c->size);
		ring_steps(&o, off, len, 1, 0);
		rc = finish(&o);
		if (rc == 0)
			memmove(recvbuf, o.work + (size_t)c->rank * block, block);
	}
	op_free(&o);
	free(off);
	free(len);
	return rc;
}

int
sdr_allgather(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t sendcount,
	      enum sdr_coll_type type)
{
	size_t esz = sdr_coll_type_size(type), block = sendcount * esz;
	uint64_t *off, *len;
	struct op o;
	int rc;

	if ((sendcount && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "allgather: a NULL buffer or an unknown type");
	if ((rc = blocks(c, block, &off, &len)) != 0)
		return rc;
	rc = op_init(&o, c, KIND_ALLGATHER, c->size - 1, block * (size_t)c->size, 0, type,
		     SDR_COLL_SUM, sendcount);
	if (rc == 0) {
		memcpy(o.work + (size_t)c->rank * block, sendbuf, block);
		ring_steps(&o, off, len, 0, 1);
		rc = finish(&o);
		if (rc == 0)
			memcpy(recvbuf, o.work, block * (size_t)c->size);
	}
	op_free(&o);
	free(off);
	free(len);
	return rc;
}

int
sdr_broadcast(struct sdr_comm *c, void *buf, size_t count, enum sdr_coll_type type, int root)
{
	size_t esz = sdr_coll_type_size(type), bytes = count * esz;
	int pos, rc;
	struct op o;

	if ((count && buf == NULL) || esz == 0 || root < 0 || root >= c->size)
		return fail(c, SDR_COLL_E_ARG, "broadcast: a NULL buffer, an unknown type or root "
			    "%d outside 0 .. %d", root, c->size - 1);
	rc = op_init(&o, c, KIND_BROADCAST, 1, bytes, 0, type, SDR_COLL_SUM, count);
	if (rc == 0) {
		/* one step: the root sends, the others receive, and forward as the chunks come
		 * (but the rank before the root) */
		pos = mod(c->rank - root, c->size);
		o.s[0] = (struct step){ .send_len = pos == c->size - 1 ? 0 : bytes,
					.recv_len = pos == 0 ? 0 : bytes, .fed_by = pos ? 0 : -1 };
		if (pos == 0)
			memcpy(o.work, buf, bytes);
		rc = finish(&o);
		if (rc == 0 && pos != 0)
			memcpy(buf, o.work, bytes);
	}
	op_free(&o);
	return rc;
}
