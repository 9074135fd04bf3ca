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
#include <ctype.h>
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

/*
 * Where an operation of no elements points its buffers (the caller's may be NULL then):
 * copies of 0 bytes from NULL, and NULL + 0, are undefined behaviour in C.
 */
static uint8_t no_bytes[1];

#define MAX_STEPS_INFLIGHT 64u
#define COMM_MEM 8			/* registered regions a communicator keeps */
#define NAME_MAX_LEN 64

/* A pair of connections a step sends and receives on: the ring's (to the next rank, from
 * the previous one) or a peer's (both ways with one rank: a "peer" line of the rank file). */
struct link {
	int to, from;			/* ranks */
	struct sdr_qp *tx, *rx;
	uint32_t tx_chunk, rx_chunk;
	uint64_t tx_max_msg, rx_max_msg;
	unsigned int tx_prio;		/* the send QP's priority as last set */
};

struct sdr_comm {
	int rank, size;
	int prev, next;			/* ring neighbours */
	struct sdr_context *ctx;
	struct link *links;		/* [0]: the ring; then one per peer line of this rank */
	int nlinks;
	int *peer_link;			/* by rank: the link to it both ways (-1: none) */
	int doubling_ok;		/* every rank has a peer line for each of its recursive-
					 * doubling partners (and N is a power of two) */
	uint32_t window;		/* steps in flight: the smallest max_inflight */
	/*
	 * Registered memory kept between operations (registering makes every page resident:
	 * milliseconds for a few MiB), up to COMM_MEM regions: as many as operations were in
	 * flight at once, so that a steady pattern (a barrier, a large operation and a small
	 * one issued behind it, the one before still waiting for its last acknowledgements)
	 * registers nothing once it has run once.
	 */
	struct comm_mem {
		struct sdr_mr *mr;	/* NULL: an empty place */
		uint8_t *mem;
		size_t len;
		int busy;		/* an operation in flight uses it */
	} mem[COMM_MEM];
	double timeout_s;
	enum sdr_coll_algo algo;	/* of Allreduce */
	size_t gather_max;		/* auto: gather up to this many bytes */
	uint32_t op_seq;
	unsigned int prio;		/* of the operations issued from now on */
	struct sdr_coll_req *head, *tail;	/* operations in flight, in issue order */
	double last_progress;
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
	int link;			/* the connections it sends and receives on (c->links) */
	int fed_by;			/* the step whose receive feeds this send; -1: ready */
	int combine;			/* recursive doubling: the receive lands in scratch and
					 * each chunk is combined with the same bytes of this
					 * step's send (once fed_by has them) into recv_off */
	int src_first;			/* combine: the received bytes are the first operand */
	/* receive progress */
	struct sdr_recv *rh;
	int arrived;			/* the receive completed (chunks may wait to combine) */
	uint8_t *seen;			/* per chunk: reduced / placed */
	uint32_t nchunks, prefix;	/* chunks [0, prefix) are all done */
	int posted, recv_done;
	/* send progress */
	struct sdr_send_stream ss;
	uint64_t declared;		/* stream bytes declared ready */
	int started, ended, send_done;
};

/* An operation (the public request). */
struct sdr_coll_req {
	struct sdr_comm *c;
	struct step *s;
	int n;
	enum sdr_coll_type type;
	enum sdr_coll_op rop;
	int kind;
	int gather;			/* an Allreduce by gather: reduce the N vectors at the end */
	int root;			/* a broadcast's (in its immediates) */
	size_t count;
	size_t esz;
	uint8_t *work, *scratch;
	struct sdr_mr *mr;		/* its own memory (NULL: the communicator's) */
	int mem_slot;			/* which of the communicator's (-1: its own) */
	uint32_t seq;			/* the operation's number, in cookies and immediates */
	unsigned int prio;
	uint32_t imm_base;
	int next_recv, next_send;	/* the next step to post a receive / start a send for */
	void *result;			/* where the result goes when it is complete */
	size_t result_off, result_len;	/* ... from the working buffer */
	int done, rc;
	/*
	 * delivered: every receive is in and the result out, every send handed to the
	 * dataplane from its own memory: the caller has it (done). The operation stays in
	 * flight (linked) until its sends are acknowledged, and is freed then if the caller
	 * has let go of it already (released).
	 */
	int delivered, linked, released;
	struct sdr_coll_stats st;
	struct sdr_coll_req *next;	/* in flight, in issue order */
};

#define op sdr_coll_req

static int
fail(struct sdr_comm *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return code;
}

/*
 * An operation that this rank cannot start once its arguments passed (out of memory, a step
 * over a connection's max_msg): its peers start it, so the ranks are out of step, and the
 * communicator is broken (docs/collectives.md).
 */
static int
fail_start(struct sdr_comm *c, int rc)
{
	c->broken = 1;
	return rc;
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

/* "peer RANK PEER SEND RECV": rank RANK sends to rank PEER on SEND and receives from it on
 * RECV (connections of RANK's instance). */
struct peer_line {
	int rank, peer, lineno;
	char send[NAME_MAX_LEN], recv[NAME_MAX_LEN];
};

struct rankfile {
	struct rank_line *l;
	struct peer_line *p;
	int np;
};

static void
rankfile_free(struct rankfile *rf)
{
	free(rf->l);
	free(rf->p);
	memset(rf, 0, sizeof(*rf));
}

/* Words of a rank-file line, at most 6 (one more than any line has, to tell extras). */
#define RF_WORDS 6

/* Split @p line into whitespace-separated words, in place. @return how many (at most
 * RF_WORDS: a seventh word is not looked for). */
static int
rf_words(char *line, char **w)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && n < RF_WORDS;
	     t = strtok_r(NULL, " \t\r\n", &save))
		w[n++] = t;
	return n;
}

/* A rank number, 0 .. 4095, in decimal and nothing else. @return 0, or -1. */
static int
rf_rank(const char *s, int *r)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > 4095)
		return -1;
	*r = (int)v;
	return 0;
}

/* Copy name @p s into @p dst (NAME_MAX_LEN bytes). @return 0, or -1 if it does not fit. */
static int
rf_name(char *dst, const char *s)
{
	size_t n = strlen(s);

	if (n >= NAME_MAX_LEN)
		return -1;
	memcpy(dst, s, n + 1);
	return 0;
}

/* A "peer" line: parsed and kept; ranks are checked once the count is known. */
static int
peer_line(struct rankfile *rf, char **w, int nw, int lineno, const char *path, char *err,
	  size_t errlen)
{
	struct peer_line *m, p = { .lineno = lineno };

	if (nw != 5 || rf_rank(w[1], &p.rank) != 0 || rf_rank(w[2], &p.peer) != 0 ||
	    p.rank == p.peer || rf_name(p.send, w[3]) != 0 || rf_name(p.recv, w[4]) != 0) {
		snprintf(err, errlen, "rank file %s:%d: expected 'peer RANK PEER-RANK "
			 "SEND-CONNECTION RECEIVE-CONNECTION' (two different ranks 0 to 4095, "
			 "names of at most %d characters)", path, lineno, NAME_MAX_LEN - 1);
		return -1;
	}
	for (int i = 0; i < rf->np; i++)
		if (rf->p[i].rank == p.rank && rf->p[i].peer == p.peer) {
			snprintf(err, errlen, "rank file %s:%d: rank %d's peer %d appears twice "
				 "(line %d)", path, lineno, p.rank, p.peer, rf->p[i].lineno);
			return -1;
		}
	m = realloc(rf->p, (size_t)(rf->np + 1) * sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "rank file %s: out of memory", path);
		return -1;
	}
	rf->p = m;
	rf->p[rf->np++] = p;
	return 0;
}

/* Read the rank file: every rank 0 .. N-1 exactly once, and the peer lines. @return N, or
 * an error code. */
static int
read_rankfile(const char *path, struct rankfile *rf, char *err, size_t errlen)
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
		char *hash = strchr(line, '#'), *w[RF_WORDS];
		struct rank_line x = { .seen = 1 };
		int r, nw;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "rank file %s:%d: line longer than %zu bytes", path,
				 lineno, sizeof(line) - 2);
			goto bad;
		}
		if (hash)
			*hash = '\0';
		nw = rf_words(line, w);
		if (nw == 0)
			continue;	/* blank or a comment */
		if (strcmp(w[0], "peer") == 0) {
			if (peer_line(rf, w, nw, lineno, path, err, errlen) != 0)
				goto bad;
			continue;
		}
		/* (the count is checked below) */
		if (nw != 4 || rf_rank(w[0], &r) != 0 || rf_name(x.instance, w[1]) != 0 ||
		    rf_name(x.send, w[2]) != 0 || rf_name(x.recv, w[3]) != 0) {
			snprintf(err, errlen, "rank file %s:%d: expected 'RANK INSTANCE "
				 "SEND-CONNECTION RECEIVE-CONNECTION' or 'peer RANK PEER-RANK "
				 "SEND-CONNECTION RECEIVE-CONNECTION' (ranks 0 to 4095, names of at "
				 "most %d characters)", path, lineno, NAME_MAX_LEN - 1);
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
		l[r] = x;
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
	for (int i = 0; i < rf->np; i++)
		if (rf->p[i].rank >= n || rf->p[i].peer >= n) {
			snprintf(err, errlen, "rank file %s:%d: peer line of ranks %d and %d; the "
				 "ranks are 0 to %d", path, rf->p[i].lineno, rf->p[i].rank,
				 rf->p[i].peer, n - 1);
			goto bad;
		}
	rf->l = l;
	return n;
bad:
	if (f)
		fclose(f);
	free(l);
	rankfile_free(rf);
	return SDR_COLL_E_RANKFILE;
}

/* Whether rank @p r has a peer line for rank @p q. */
static int
has_peer(const struct rankfile *rf, int r, int q)
{
	for (int i = 0; i < rf->np; i++)
		if (rf->p[i].rank == r && rf->p[i].peer == q)
			return 1;
	return 0;
}

/* Recursive doubling is possible when N is a power of two and every rank has a peer line
 * for each partner r ^ 2^j (every rank reads the same file, so all decide alike). */
static int
doubling_possible(const struct rankfile *rf, int n)
{
	if (n & (n - 1))
		return 0;
	for (int r = 0; r < n; r++)
		for (int b = 1; b < n; b <<= 1)
			if (!has_peer(rf, r, r ^ b))
				return 0;
	return 1;
}

/* Open link @p k: send on @p snd to rank @p to, receive on @p rcv from rank @p from. */
static int
link_open(struct sdr_comm *c, int k, int to, int from, const char *inst, const char *snd,
	  const char *rcv, char *err, size_t errlen)
{
	struct link *lk = &c->links[k];
	struct sdr_qp_info ti, ri;

	lk->to = to;
	lk->from = from;
	if (sdr_qp_open(c->ctx, snd, &lk->tx) != SDR_SUCCESS ||
	    sdr_qp_open(c->ctx, rcv, &lk->rx) != SDR_SUCCESS ||
	    sdr_qp_info_get(lk->tx, &ti) != SDR_SUCCESS ||
	    sdr_qp_info_get(lk->rx, &ri) != SDR_SUCCESS) {
		snprintf(err, errlen, "rank %d (instance %s, connections %s and %s): %s", c->rank,
			 inst, snd, rcv, sdr_last_error(c->ctx));
		return -1;
	}
	lk->tx_chunk = ti.chunk_size;
	lk->rx_chunk = ri.chunk_size;
	lk->tx_max_msg = ti.max_msg_size;
	lk->rx_max_msg = ri.max_msg_size;
	if (ti.max_inflight < c->window)
		c->window = ti.max_inflight;
	if (ri.max_inflight < c->window)
		c->window = ri.max_inflight;
	if (c->window == 0 || lk->tx_chunk == 0 || lk->rx_chunk == 0) {
		snprintf(err, errlen, "rank %d: connections %s / %s report no chunk size or window",
			 c->rank, snd, rcv);
		return -1;
	}
	return 0;
}

int
sdr_comm_create(const char *rankfile, int rank, const struct sdr_comm_cfg *cfg,
		struct sdr_comm **comm, char *err, size_t errlen)
{
	struct rankfile rf = { 0 };
	struct rank_line *l;
	struct sdr_comm *c;
	char e[256], ce[256];
	int n;

	if (err == NULL || errlen == 0) {
		err = e;
		errlen = sizeof(e);
	}
	*comm = NULL;
	n = read_rankfile(rankfile, &rf, err, errlen);
	if (n < 0)
		return n;
	l = rf.l;
	if (rank < 0 || rank >= n) {
		snprintf(err, errlen, "rank %d is not in %s (ranks 0 to %d)", rank, rankfile, n - 1);
		rankfile_free(&rf);
		return SDR_COLL_E_RANKFILE;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->links = calloc((size_t)rf.np + 1, sizeof(*c->links));
	if (c)
		c->peer_link = malloc((size_t)n * sizeof(*c->peer_link));
	if (c == NULL || c->links == NULL || c->peer_link == NULL) {
		rankfile_free(&rf);
		sdr_comm_destroy(c);
		snprintf(err, errlen, "out of memory");
		return SDR_COLL_E_NOMEM;
	}
	for (int q = 0; q < n; q++)
		c->peer_link[q] = -1;
	c->doubling_ok = doubling_possible(&rf, n);
	c->rank = rank;
	c->size = n;
	c->prev = (rank + n - 1) % n;
	c->next = (rank + 1) % n;
	c->timeout_s = cfg && cfg->timeout_s > 0 ? cfg->timeout_s : 10.0;
	c->algo = cfg ? cfg->allreduce_algo : SDR_COLL_ALGO_AUTO;
	c->gather_max = cfg && cfg->gather_max ? cfg->gather_max : SDR_COLL_GATHER_MAX_DEFAULT;
	if ((unsigned int)c->algo > SDR_COLL_ALGO_DOUBLING) {
		snprintf(err, errlen, "unknown Allreduce algorithm %d", (int)c->algo);
		rankfile_free(&rf);
		sdr_comm_destroy(c);
		return SDR_COLL_E_ARG;
	}
	if (c->algo == SDR_COLL_ALGO_DOUBLING && !c->doubling_ok) {
		snprintf(err, errlen, "recursive doubling needs a power-of-two number of ranks "
			 "(here %d) and a peer line in %s for every rank and each of its partners "
			 "(rank r ^ 2^j)", n, rankfile);
		rankfile_free(&rf);
		sdr_comm_destroy(c);
		return SDR_COLL_E_RANKFILE;
	}
	if (sdr_context_create(l[rank].instance, &c->ctx, ce, sizeof(ce)) != SDR_SUCCESS) {
		/* (its own buffer: err may be e, and snprintf may not read what it writes) */
		snprintf(err, errlen, "rank %d: %s", rank, ce);
		goto bad;
	}
	c->window = MAX_STEPS_INFLIGHT;
	/* the ring's connections, then the peers' (a connection named on no line of this rank
	 * is never opened) */
	if (link_open(c, c->nlinks++, c->next, c->prev, l[rank].instance, l[rank].send,
		      l[rank].recv, err, errlen) != 0)
		goto bad;
	for (int i = 0; i < rf.np; i++) {
		if (rf.p[i].rank != rank)
			continue;
		c->peer_link[rf.p[i].peer] = c->nlinks;
		if (link_open(c, c->nlinks++, rf.p[i].peer, rf.p[i].peer, l[rank].instance,
			      rf.p[i].send, rf.p[i].recv, err, errlen) != 0)
			goto bad;
	}
	rankfile_free(&rf);
	*comm = c;
	return SDR_COLL_OK;
bad:
	rankfile_free(&rf);
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
	const char *algo = getenv("SDR_COLL_ALGO"), *gmax = getenv("SDR_COLL_GATHER_MAX");
	struct sdr_comm_cfg ec = { 0 };
	char *end;
	long r;

	*comm = NULL;
	if (cfg)
		ec = *cfg;
	if (algo && ec.allreduce_algo == SDR_COLL_ALGO_AUTO) {
		if (strcmp(algo, "ring") == 0) {
			ec.allreduce_algo = SDR_COLL_ALGO_RING;
		} else if (strcmp(algo, "gather") == 0) {
			ec.allreduce_algo = SDR_COLL_ALGO_GATHER;
		} else if (strcmp(algo, "doubling") == 0) {
			ec.allreduce_algo = SDR_COLL_ALGO_DOUBLING;
		} else if (strcmp(algo, "auto") != 0) {
			if (err)
				snprintf(err, errlen, "SDR_COLL_ALGO='%s' is not auto, ring, gather or "
					 "doubling", algo);
			return SDR_COLL_E_ARG;
		}
	}
	if (gmax && ec.gather_max == 0) {
		unsigned long long g;

		errno = 0;
		g = strtoull(gmax, &end, 10);
		/* digits only: strtoull() takes " -1" (spaces, a sign) as 2^64 - 1 */
		if (errno || end == gmax || *end || g == 0 || !isdigit((unsigned char)gmax[0])) {
			if (err)
				snprintf(err, errlen, "SDR_COLL_GATHER_MAX='%s' is not a number of "
					 "bytes above 0", gmax);
			return SDR_COLL_E_ARG;
		}
		ec.gather_max = (size_t)g;
	}
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
	return sdr_comm_create(file, (int)r, &ec, comm, err, errlen);
}

const char *
sdr_coll_algo_name(enum sdr_coll_algo algo)
{
	static const char *const n[] = { "auto", "ring", "gather", "doubling" };

	return (unsigned int)algo <= SDR_COLL_ALGO_DOUBLING ? n[algo] : "unknown";
}

static void drain(struct sdr_comm *c);

void
sdr_comm_destroy(struct sdr_comm *c)
{
	if (c == NULL)
		return;
	drain(c);
	/* the QPs first: what they still have posted ends there, and a region must not be
	 * in use by a send or receive when it is released (libsdr.h) */
	for (int k = 0; c->links && k < c->nlinks; k++) {
		if (c->links[k].tx)
			sdr_qp_destroy(c->links[k].tx);
		if (c->links[k].rx)
			sdr_qp_destroy(c->links[k].rx);
	}
	for (int m = 0; m < COMM_MEM; m++)
		if (c->mem[m].mr)
			sdr_mr_dereg(c->mem[m].mr);
	if (c->ctx)
		sdr_context_destroy(c->ctx);
	free(c->links);
	free(c->peer_link);
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

/* Give the arena back the regions kept that no operation uses. @return how many. */
static int
release_free_mem(struct sdr_comm *c)
{
	int n = 0;

	for (int m = 0; m < COMM_MEM; m++) {
		struct comm_mem *cm = &c->mem[m];

		if (cm->mr && !cm->busy) {
			sdr_mr_dereg(cm->mr);
			*cm = (struct comm_mem){ 0 };
			n++;
		}
	}
	return n;
}

/* Register @p len bytes for @p o; when the arena is full, give back the regions kept but
 * unused and try once more. */
static int
register_mem(struct sdr_comm *c, struct op *o, size_t len, void **p, struct sdr_mr **mr)
{
	int rc = sdr_mr_reg(c->ctx, len, p, mr);

	if (rc == SDR_RETRY && release_free_mem(c) > 0)
		rc = sdr_mr_reg(c->ctx, len, p, mr);
	if (rc != SDR_SUCCESS)
		return fail(c, SDR_COLL_E_SDK, "registering %zu bytes: %s", len,
			    sdr_last_error(c->ctx));
	o->st.registrations++;
	return SDR_COLL_OK;
}

/*
 * Registered memory for operation @p o: @p len bytes. The smallest free region kept that
 * is large enough; else a new one in an empty place; else the smallest free region,
 * registered again at the new size; with every region in use, the operation registers its
 * own (given back when it retires).
 */
static int
memory(struct sdr_comm *c, struct op *o, size_t len)
{
	struct comm_mem *fit = NULL, *empty = NULL, *small = NULL, *cm;
	void *p;
	int rc;

	for (int m = 0; m < COMM_MEM; m++) {
		cm = &c->mem[m];
		if (cm->mr == NULL) {
			if (empty == NULL)
				empty = cm;
		} else if (!cm->busy) {
			if (cm->len >= len && (fit == NULL || cm->len < fit->len))
				fit = cm;
			if (small == NULL || cm->len < small->len)
				small = cm;
		}
	}
	cm = fit ? fit : empty ? empty : small;
	if (cm == NULL) {
		o->mem_slot = -1;
		rc = register_mem(c, o, len, &p, &o->mr);
		if (rc == SDR_COLL_OK)
			o->work = p;
		return rc;
	}
	if (cm != fit) {
		if (cm->mr) {
			sdr_mr_dereg(cm->mr);
			*cm = (struct comm_mem){ 0 };
		}
		cm->busy = 1;	/* (not given back if the arena is full) */
		rc = register_mem(c, o, len, &p, &cm->mr);
		cm->busy = 0;
		if (rc != SDR_COLL_OK)
			return rc;
		cm->mem = p;
		cm->len = len;
	}
	cm->busy = 1;
	o->work = cm->mem;
	o->mem_slot = (int)(cm - c->mem);
	return SDR_COLL_OK;
}

/* ---- the executor ---- */

/* murmur3's finaliser: every input bit moves about half of the output bits */
static uint32_t
mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * The immediate of a step's message: what the receiver checks it against, so that ranks
 * that call different operations, types, reductions, sizes or algorithms fail instead of
 * mixing their data. A hash, not fields: a message of fewer packets than the immediate has
 * fragments carries only its low bits (sdr_completion::imm_bits, 4 per packet), and every
 * one of them must depend on every field.
 */
static uint32_t
imm_of(const struct op *o, int t)
{
	return mix32(o->imm_base ^ ((uint32_t)t & 0xFF));
}

static uint32_t
imm_mask(uint32_t bits)
{
	return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
}

/* Whether bytes [off, off + len) of the working buffer that step @p t receives are all in
 * (and reduced). */
static int
step_has(const struct op *o, int t, uint64_t off, uint64_t len)
{
	const struct step *s = &o->s[t];
	uint32_t chunk = o->c->links[s->link].rx_chunk;

	if (s->prefix == s->nchunks)
		return 1;
	for (uint64_t k = off / chunk; k <= (off + len - 1) / chunk; k++)
		if (k >= s->nchunks || !s->seen[k])
			return 0;
	return 1;
}

/* Chunks of step @p t's receive that arrived since the last look: reduce or keep them
 * (@p all: the receive completed, every chunk is in). */
static void
take_chunks(struct op *o, struct step *s, int all)
{
	const volatile uint8_t *bm = NULL;
	uint32_t n = 0, chunk = o->c->links[s->link].rx_chunk;

	if (!all) {
		bm = sdr_recv_bitmap_get(s->rh, &n);
		if (bm == NULL || n < s->nchunks)
			return;
	}
	for (uint32_t k = s->prefix; k < s->nchunks; k++) {
		uint64_t off = (uint64_t)k * chunk, len;

		/* a chunk's byte says it is in, its bytes written before: an acquire load of
		 * that byte orders the reads of them after it (arm64 may take them early
		 * otherwise, and reduce the bytes of the operation before; x86 orders them
		 * anyway). A fence before the loop would order nothing read in it. */
		if (s->seen[k] || (!all && !__atomic_load_n(&bm[k], __ATOMIC_ACQUIRE)))
			continue;
		len = s->recv_len - off < chunk ? s->recv_len - off : chunk;
		if (s->combine) {
			/* the same bytes of this step's send must be final: the feeding
			 * step's receive may still miss them. The received bytes stay as
			 * they came until the receive completes: the dataplane may still
			 * rebuild another chunk of their submessage from them. */
			if (s->fed_by >= 0 && !step_has(o, s->fed_by, off, len))
				continue;
			memcpy(o->work + s->recv_off + off, o->work + s->send_off + off, len);
			coll_reduce_ordered(o->work + s->recv_off + off,
					    o->scratch + s->scratch_off + off, len / o->esz, o->type,
					    o->rop, s->src_first);
		} else if (s->reduce) {
			coll_reduce(o->work + s->recv_off + off, o->scratch + s->scratch_off + off,
				    len / o->esz, o->type, o->rop);
		}
		s->seen[k] = 1;
		o->st.chunks++;
		if (!all)
			o->st.chunks_early++;
	}
	while (s->prefix < s->nchunks && s->seen[s->prefix])
		s->prefix++;
}

/* Declare to a fed send what its feeding receive has ready. @return 0 or an error. */
static int
feed(struct op *o, struct step *s)
{
	const struct step *src = &o->s[s->fed_by];
	const struct link *lk = &o->c->links[s->link];
	uint64_t ready = src->prefix == src->nchunks ? s->send_len :
			 (uint64_t)src->prefix * o->c->links[src->link].rx_chunk, add;
	int rc;

	if (ready > s->send_len)
		ready = s->send_len;
	/*
	 * The last piece waits for the feeding receive's completion, whose immediate says
	 * the bytes are this operation's: until then the next rank cannot complete a message
	 * of another operation's bytes (a rank out of step fails, it does not pass them on).
	 */
	if (!src->arrived && ready == s->send_len && ready != 0)
		ready--;
	if (ready < s->send_len)	/* stream pieces are whole chunks but the last */
		ready -= ready % lk->tx_chunk;
	if (!s->started)
		return 0;
	if (ready > s->declared) {
		add = ready - s->declared;
		rc = sdr_send_stream_continue(&s->ss, s->declared, add);
		if (rc == SDR_RETRY)
			return 0;
		if (rc != SDR_SUCCESS)
			return fail(o->c, SDR_COLL_E_SDK, "send to rank %d: %s", lk->to,
				    sdr_last_error(o->c->ctx));
		s->declared = ready;
	}
	if (s->declared == s->send_len && !s->ended) {	/* the stream is whole */
		rc = sdr_send_stream_end(&s->ss);
		if (rc == SDR_RETRY)
			return 0;
		if (rc != SDR_SUCCESS)
			return fail(o->c, SDR_COLL_E_SDK, "send to rank %d: %s", lk->to,
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

/* Post the receives of @p o in step order, a window ahead of the oldest open one. */
static int
post_recvs(struct op *o)
{
	struct sdr_comm *c = o->c;
	int rc;

	while (o->next_recv < o->n) {
		struct step *s = &o->s[o->next_recv];
		struct link *lk = &c->links[s->link];

		if (s->recv_len == 0) {
			s->recv_done = 1;
			o->next_recv++;
			continue;
		}
		if (!in_window(o, o->next_recv, 0))
			break;
		rc = sdr_recv_post(lk->rx, (s->reduce || s->combine ? o->scratch + s->scratch_off :
				    o->work + s->recv_off), s->recv_len,
				   ((uint64_t)o->seq << 8) | (uint64_t)o->next_recv, &s->rh);
		if (rc == SDR_RETRY)
			break;
		if (rc != SDR_SUCCESS)
			return fail(c, SDR_COLL_E_SDK, "receive from rank %d: %s", lk->from,
				    sdr_last_error(c->ctx));
		s->posted = 1;
		o->next_recv++;
	}
	return 0;
}

/* Start the sends of @p o in step order, the same way, at the operation's priority. */
static int
start_sends(struct op *o)
{
	struct sdr_comm *c = o->c;
	int rc;

	while (o->next_send < o->n) {
		struct step *s = &o->s[o->next_send];
		struct link *lk = &c->links[s->link];
		uint64_t cookie = ((uint64_t)o->seq << 8) | (uint64_t)o->next_send;

		if (s->send_len == 0) {
			s->send_done = 1;
			o->next_send++;
			continue;
		}
		if (!in_window(o, o->next_send, 1))
			break;
		if (lk->tx_prio != o->prio) {
			if (sdr_send_priority(lk->tx, o->prio) != SDR_SUCCESS)
				return fail(c, SDR_COLL_E_SDK, "%s", sdr_last_error(c->ctx));
			lk->tx_prio = o->prio;
		}
		if (s->fed_by < 0)
			rc = sdr_send_post(lk->tx, o->work + s->send_off, s->send_len,
					   imm_of(o, o->next_send), cookie);
		else
			rc = sdr_send_stream_start(lk->tx, o->work + s->send_off, s->send_len,
						   imm_of(o, o->next_send), cookie, &s->ss);
		if (rc == SDR_RETRY)
			break;
		if (rc != SDR_SUCCESS)
			return fail(c, SDR_COLL_E_SDK, "send to rank %d: %s", lk->to,
				    sdr_last_error(c->ctx));
		s->started = 1;
		o->st.messages_sent++;
		o->next_send++;
	}
	return 0;
}

/* The operation in flight with number @p seq, or NULL. */
static struct op *
find_op(struct sdr_comm *c, uint64_t seq)
{
	for (struct op *o = c->head; o; o = o->next)
		if (o->seq == seq)
			return o;
	return NULL;
}

static void op_free(struct op *o);

/* The caller has operation @p o: its result to the caller's buffer. */
static void
deliver(struct sdr_comm *c, struct op *o)
{
	o->rc = 0;
	o->done = 1;
	o->delivered = 1;
	if (o->result_len)
		memmove(o->result, o->work + o->result_off, o->result_len);
	/* gather: the N vectors reduced in rank order into the first, in the caller's buffer
	 * (the working one is what this rank's sends may still resend) */
	for (int k = 1; o->gather && k < c->size; k++)
		coll_reduce(o->result, o->work + (size_t)k * o->count * o->esz, o->count, o->type,
			    o->rop);
}

/* Operation @p o leaves the list in flight (freed if the caller let go of it already). */
static void
unlink_op(struct sdr_comm *c, struct op *o)
{
	struct op **pp = &c->head, *prev = NULL;

	while (*pp && *pp != o) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp)
		*pp = o->next;
	if (c->tail == o)
		c->tail = prev;
	o->next = NULL;
	o->linked = 0;
	if (o->released)
		op_free(o);
}

/*
 * Operation @p o fails with @p rc: its receives still open are handed back, and it leaves
 * the list. One delivered already keeps its result (the caller has it): the communicator's
 * failure shows in the next operation.
 */
static void
retire(struct sdr_comm *c, struct op *o, int rc)
{
	if (!o->delivered) {
		o->rc = rc;
		o->done = 1;
		/* (SDR_RETRY: the request queue is full for a moment; give the dataplane time,
		 * up to a second in all, before the memory behind the receives is reused) */
		double end = now_s() + 1;

		for (int t = 0; t < o->n; t++)
			if (o->s[t].posted && !o->s[t].arrived)
				while (sdr_recv_complete(o->s[t].rh) == SDR_RETRY && now_s() < end)
					usleep(10);
	}
	unlink_op(c, o);
}

/* Every receive of @p o is in and every send handed over (started, its stream ended). */
static int
deliverable(const struct op *o)
{
	if (o->next_recv < o->n || o->next_send < o->n)
		return 0;
	for (int t = 0; t < o->n; t++) {
		const struct step *s = &o->s[t];

		if (!s->recv_done ||
		    !(s->send_done || (s->started && (s->fed_by < 0 || s->ended))))
			return 0;
	}
	return 1;
}

static int
sends_done(const struct op *o)
{
	for (int t = 0; t < o->n; t++)
		if (!o->s[t].send_done)
			return 0;
	return 1;
}

/* Every operation in flight fails with @p rc (c->err says why): the ring is out of step. */
static int
fail_all(struct sdr_comm *c, int rc)
{
	c->broken = 1;
	while (c->head)
		retire(c, c->head, rc);
	return rc;
}

/*
 * The completions of link @p k: receives (their chunks taken; a combining step's wait for
 * their feeding step) and sends. @return 1 if any, 0 if none, or an error (every operation
 * failed).
 */
static int
poll_link(struct sdr_comm *c, int k)
{
	struct link *lk = &c->links[k];
	struct sdr_completion cp;
	int moved = 0, rc;

	while ((rc = sdr_recv_poll(lk->rx, &cp)) == SDR_SUCCESS) {
		struct op *o = find_op(c, cp.cookie >> 8);
		int t = (int)(cp.cookie & 0xFF);
		struct step *s;

		if (o == NULL || t >= o->n || o->s[t].link != k || !o->s[t].posted ||
		    o->s[t].arrived)
			return fail_all(c, fail(c, SDR_COLL_E_PEER, "a receive completion no "
						 "operation posted (%" PRIu64 ")", cp.cookie));
		s = &o->s[t];
		moved = 1;
		if (cp.status != 0)
			return fail_all(c, fail(c, SDR_COLL_E_FAILED, "the message from rank %d "
						 "(step %d) failed in the dataplane (status %d)",
						 lk->from, t, cp.status));
		if (cp.imm_ok && ((cp.imm ^ imm_of(o, t)) & imm_mask(cp.imm_bits)))
			return fail_all(c, fail(c, SDR_COLL_E_PEER, "rank %d sent step %d of another "
						 "operation (immediate 0x%08x, expected 0x%08x in the "
						 "low %u bits): do all ranks call the same operations "
						 "with the same type, reduction and size, in the same "
						 "order?", lk->from, t, cp.imm,
						 imm_of(o, t) & imm_mask(cp.imm_bits), cp.imm_bits));
		s->arrived = 1;
		take_chunks(o, s, 1);
		if (s->prefix == s->nchunks)
			s->recv_done = 1;
		o->st.messages_received++;
		o->st.decoded += cp.decoded;
		while ((rc = sdr_recv_complete(cp.recv)) == SDR_RETRY)
			;
		if (rc != SDR_SUCCESS)
			return fail_all(c, fail(c, SDR_COLL_E_SDK, "%s", sdr_last_error(c->ctx)));
	}
	if (rc == SDR_ERROR)
		return fail_all(c, fail(c, SDR_COLL_E_SDK, "receive from rank %d: %s", lk->from,
					 sdr_last_error(c->ctx)));
	while ((rc = sdr_send_poll(lk->tx, &cp)) == SDR_SUCCESS) {
		struct op *o = find_op(c, cp.cookie >> 8);
		int t = (int)(cp.cookie & 0xFF);

		if (o == NULL || t >= o->n || o->s[t].link != k || !o->s[t].started ||
		    o->s[t].send_done)
			return fail_all(c, fail(c, SDR_COLL_E_PEER, "a send completion no operation "
						 "started (%" PRIu64 ")", cp.cookie));
		moved = 1;
		if (cp.status != 0)
			return fail_all(c, fail(c, SDR_COLL_E_FAILED, "the message to rank %d (step "
						 "%d) failed in the dataplane (status %d: %s)", lk->to,
						 t, cp.status, cp.status == 2 ?
						 "it gave the message up: its receive has another "
						 "length (do all ranks call the same operations with the "
						 "same sizes and Allreduce algorithm?) or it restarted" :
						 "no answer from it?"));
		o->s[t].send_done = 1;
		o->st.retransmitted += cp.retransmitted;
	}
	if (rc == SDR_ERROR)
		return fail_all(c, fail(c, SDR_COLL_E_SDK, "send to rank %d: %s", lk->to,
					 sdr_last_error(c->ctx)));
	return moved;
}

/*
 * One round over the operations in flight: post and start what the windows allow (an
 * operation only after those issued before it posted and started all of theirs: the k-th
 * message of a connection must meet the k-th receive at both ends), take the chunks that
 * arrived, feed the streams, take the completions. @return 1 if anything moved, 0 if not,
 * or an error (every operation failed).
 */
static int
progress(struct sdr_comm *c)
{
	int moved = 0, recvs_open = 0, sends_open = 0, rc;

	for (struct op *o = c->head; o; o = o->next) {
		if (!recvs_open && (rc = post_recvs(o)) != 0)
			return fail_all(c, rc);
		if (!sends_open && (rc = start_sends(o)) != 0)
			return fail_all(c, rc);
		recvs_open |= o->next_recv < o->n;
		sends_open |= o->next_send < o->n;
		for (int t = 0; t < o->n; t++) {
			struct step *s = &o->s[t];

			if (s->posted && !s->recv_done) {
				uint64_t had = o->st.chunks;

				take_chunks(o, s, s->arrived);
				moved |= o->st.chunks != had;
				if (s->arrived && s->prefix == s->nchunks) {
					s->recv_done = 1;
					moved = 1;
				}
			}
			if (s->fed_by >= 0 && s->started && !s->ended) {
				uint64_t before = s->declared;

				if ((rc = feed(o, s)) != 0)
					return fail_all(c, rc);
				moved |= s->declared != before || s->ended;
			}
		}
	}
	for (int k = 0; k < c->nlinks; k++) {
		if ((rc = poll_link(c, k)) < 0)
			return rc;
		moved |= rc;
	}
	/*
	 * An operation is the caller's once every receive is in and every send handed over
	 * (its data stays where it is, in the operation's memory, for any resend): waiting for
	 * the last acknowledgements too would add half a round trip to every operation. It
	 * leaves the list once they came.
	 */
	for (struct op *o = c->head, *nx; o; o = nx) {
		nx = o->next;
		if (!o->delivered && deliverable(o)) {
			deliver(c, o);
			moved = 1;
		}
		if (o->delivered && sends_done(o)) {
			unlink_op(c, o);
			moved = 1;
		}
	}
	if (moved) {
		c->last_progress = now_s();
	} else if (c->head && now_s() - c->last_progress > c->timeout_s) {
		const struct link *lk = NULL;
		int waiting_recv = 0;

		/* the first step still waiting for data names the rank; else the first waiting
		 * for its send's acknowledgements */
		for (struct op *o = c->head; o && !waiting_recv; o = o->next)
			for (int t = 0; t < o->n; t++)
				if (!o->s[t].recv_done) {
					waiting_recv = 1;
					lk = &c->links[o->s[t].link];
					break;
				}
		for (struct op *o = c->head; o && !lk; o = o->next)
			for (int t = 0; t < o->n; t++)
				if (!o->s[t].send_done) {
					lk = &c->links[o->s[t].link];
					break;
				}
		if (lk == NULL)
			lk = &c->links[0];
		return fail_all(c, fail(c, SDR_COLL_E_TIMEOUT, "rank %d delivered nothing for "
					 "%.1f s (waiting for its %s)", waiting_recv ? lk->from :
					 lk->to, c->timeout_s, waiting_recv ? "data" :
					 "acknowledgements"));
	}
	return moved;
}

int
sdr_coll_test(struct sdr_coll_req *o, int *done)
{
	if (!o->done) {
		int rc = progress(o->c);

		if (rc < 0 && !o->done)
			return rc;
	}
	*done = o->done;
	return o->done ? o->rc : SDR_COLL_OK;
}

int
sdr_coll_wait(struct sdr_coll_req *o)
{
	struct sdr_comm *c = o->c;
	uint32_t idle = 0;
	int rc;

	while (!o->done) {
		rc = progress(c);
		if (rc > 0) {
			idle = 0;
			continue;
		}
		if (rc < 0)
			break;
		/* idle backoff: the chunks arrive through the dataplane, which needs the CPU */
		if (++idle > 256)
			usleep(idle > 16384 ? 200 : 20);
	}
	rc = o->rc;
	c->st = o->st;
	if (o->linked)
		o->released = 1;	/* its last acknowledgements still to come */
	else
		op_free(o);
	return rc;
}

/*
 * Before the connections close: the delivered operations' sends are acknowledged (or fail,
 * or time out), so that no peer loses a message it still receives.
 */
static void
drain(struct sdr_comm *c)
{
	uint32_t idle = 0;

	for (;;) {
		int pending = 0, rc;

		for (struct op *o = c->head; o; o = o->next)
			pending |= o->delivered;
		if (!pending)
			return;
		rc = progress(c);
		if (rc < 0)
			return;
		if (rc > 0)
			idle = 0;
		else if (++idle > 256)
			usleep(idle > 16384 ? 200 : 20);
	}
}

void
sdr_coll_set_priority(struct sdr_comm *c, unsigned int prio)
{
	c->prio = prio > SDR_PRIO_MAX ? SDR_PRIO_MAX : prio;
}

enum sdr_coll_algo
sdr_coll_set_algo(struct sdr_comm *c, enum sdr_coll_algo algo)
{
	enum sdr_coll_algo was = c->algo;

	c->algo = algo;
	return was;
}

/*
 * What @p o's immediates hash (imm_of()): kind, reduction, type, algorithm (ring 0; gather
 * and doubling 1: they run on different connections), the operation number, the size and
 * a broadcast's root (ranks that disagree on it see each other's messages refused).
 */
static void
op_imm(struct op *o)
{
	uint32_t fields = ((uint32_t)o->kind << 30) | ((uint32_t)o->rop << 28) |
			  ((uint32_t)o->type << 25) |
			  ((uint32_t)(o->gather || o->st.algo == SDR_COLL_ALGO_DOUBLING) << 24) |
			  ((o->seq & 0xFF) << 8) | ((uint32_t)o->root & 0xFF);

	o->imm_base = mix32(fields ^ mix32((uint32_t)o->count ^ mix32((uint32_t)(o->count >> 32))));
}

/*
 * A new operation: @p n steps, @p work_bytes of working and @p scratch_bytes of scratch
 * memory. On failure nothing is left allocated.
 */
static int
op_new(struct op **out, struct sdr_comm *c, int kind, int n, size_t work_bytes,
       size_t scratch_bytes, enum sdr_coll_type type, enum sdr_coll_op rop, size_t count)
{
	struct op *o;
	int rc;

	*out = NULL;
	if (c->broken)
		return fail(c, SDR_COLL_E_BROKEN, "an earlier operation failed: the ranks are out "
			    "of step; create the communicator again");
	if (sdr_coll_type_size(type) == 0 || (unsigned int)rop >= SDR_COLL_NOPS)
		return fail(c, SDR_COLL_E_ARG, "unknown type %d or reduction %d", (int)type,
			    (int)rop);
	o = calloc(1, sizeof(*o));
	if (o == NULL || (n && (o->s = calloc((size_t)n, sizeof(*o->s))) == NULL)) {
		free(o);
		return fail_start(c, fail(c, SDR_COLL_E_NOMEM, "out of memory"));
	}
	o->c = c;
	o->kind = kind;
	o->type = type;
	o->rop = rop;
	o->esz = sdr_coll_type_size(type);
	o->count = count;
	o->n = n;
	o->prio = c->prio;
	rc = memory(c, o, work_bytes + scratch_bytes + 64);
	if (rc) {
		free(o->s);
		free(o);
		return fail_start(c, rc);
	}
	o->scratch = o->work + ((work_bytes + 63) & ~(size_t)63);
	c->op_seq = (c->op_seq + 1) & 0xFFFFFF;
	o->seq = c->op_seq;
	op_imm(o);
	*out = o;
	return 0;
}


static void
op_free(struct op *o)
{
	if (o == NULL)
		return;
	for (int t = 0; t < o->n; t++)
		free(o->s[t].seen);
	if (o->mr)
		sdr_mr_dereg(o->mr);
	else if (o->work && o->mem_slot >= 0)
		o->c->mem[o->mem_slot].busy = 0;
	free(o->s);
	free(o);
}

/* Size the receive of step @p t and check both messages fit the connections. */
static int
step_ready(struct op *o, int t)
{
	struct step *s = &o->s[t];
	struct sdr_comm *c = o->c;
	const struct link *lk = &c->links[s->link];

	if (s->send_len > lk->tx_max_msg)
		return fail(c, SDR_COLL_E_ARG, "a step sends %" PRIu64 " bytes; the connection to "
			    "rank %d takes messages up to %" PRIu64 " (raise its max_msg)",
			    s->send_len, lk->to, lk->tx_max_msg);
	if (s->recv_len > lk->rx_max_msg)
		return fail(c, SDR_COLL_E_ARG, "a step receives %" PRIu64 " bytes; the connection "
			    "from rank %d takes messages up to %" PRIu64 " (raise its max_msg)",
			    s->recv_len, lk->from, lk->rx_max_msg);
	s->nchunks = (uint32_t)((s->recv_len + lk->rx_chunk - 1) / lk->rx_chunk);
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
 *
 * With both (the ring Allreduce) the Allgather works on a second copy of the segments, at
 * @p ag_base: the last Reduce-Scatter step reduces segment r there. An Allgather step places
 * segment r - s - 1 while the Reduce-Scatter send of that segment may still be in flight
 * (its peer has every chunk the Allgather needs, but the sender computes a submessage's
 * parity only when the submessage's last chunk goes out, and resends from the buffer): a
 * send's bytes stay as they were until it completes (steps_safe() checks it).
 */
static void
ring_steps(struct op *o, const uint64_t *off, const uint64_t *len, int rs, int ag,
	   uint64_t ag_base)
{
	int r = o->c->rank, n = o->c->size, t = 0;
	uint64_t scratch = 0;

	for (int s = 0; rs && s < n - 1; s++, t++) {
		int sj = mod(r - s - 1, n), rj = mod(r - s - 2, n);

		o->s[t] = (struct step){ .send_off = off[sj], .send_len = len[sj],
					 .recv_off = off[rj] + (s == n - 2 ? ag_base : 0),
					 .recv_len = len[rj], .scratch_off = scratch, .reduce = 1,
					 .fed_by = t - 1 };
		scratch += (len[rj] + 63) & ~(uint64_t)63;
	}
	for (int s = 0; ag && s < n - 1; s++, t++) {
		int sj = mod(r - s, n), rj = mod(r - s - 1, n);

		o->s[t] = (struct step){ .send_off = off[sj] + ag_base, .send_len = len[sj],
					 .recv_off = off[rj] + ag_base, .recv_len = len[rj],
					 .fed_by = t - 1 };
	}
	/* the first step's send has its bytes already: the rank's own data (Allgather alone:
	 * its own block) */
	o->s[0].fed_by = -1;
}

/*
 * No step writes bytes of the working buffer (places its receive there, or reduces into it)
 * that another step's send reads, but the one that feeds that send, over the same bytes:
 * a send's bytes must not change until it completes (libsdr.h). A schedule that breaks
 * this would deliver wrong results now and then (under loss, with erasure coding), so it
 * is refused every time instead. @return 0 or SDR_COLL_E_INTERNAL.
 */
static int
steps_safe(const struct op *o)
{
	for (int w = 0; w < o->n; w++) {
		const struct step *a = &o->s[w];

		if (a->recv_len == 0)
			continue;
		for (int t = 0; t < o->n; t++) {
			const struct step *b = &o->s[t];

			if (b->send_len == 0 || a->recv_off >= b->send_off + b->send_len ||
			    b->send_off >= a->recv_off + a->recv_len)
				continue;
			if (b->fed_by == w && b->send_off == a->recv_off &&
			    b->send_len == a->recv_len)
				continue;
			return fail(o->c, SDR_COLL_E_INTERNAL, "internal: step %d writes bytes "
				    "[%" PRIu64 ", +%" PRIu64 ") that step %d sends from", w,
				    a->recv_off, a->recv_len, t);
		}
	}
	return 0;
}

/*
 * Check the steps of @p o and put it in flight behind the operations issued before it;
 * take a first round. Errors later surface in sdr_coll_wait() / sdr_coll_test().
 */
static int
launch(struct op *o, struct sdr_coll_req **req)
{
	struct sdr_comm *c = o->c;
	int rc = 0;

	for (int t = 0; t < o->n && rc == 0; t++)
		rc = step_ready(o, t);
	if (rc == 0)
		rc = steps_safe(o);
	if (rc) {
		op_free(o);
		return fail_start(c, rc);
	}
	/* the timeout counts from here: the operations before may have waited for the
	 * caller (delivered, their last acknowledgements due), not for a peer */
	c->last_progress = now_s();
	if (c->tail)
		c->tail->next = o;
	else
		c->head = o;
	c->tail = o;
	o->linked = 1;
	progress(c);
	*req = o;
	return SDR_COLL_OK;
}

/* The N segments of an Allreduce of @p count elements of @p esz bytes (the first count % N
 * get one more element), with the scratch they need. */
static int
segments(struct sdr_comm *c, size_t count, size_t esz, uint64_t **off, uint64_t **len,
	 size_t *scratch)
{
	int n = c->size;

	*off = calloc((size_t)n, sizeof(**off));
	*len = calloc((size_t)n, sizeof(**len));
	if (*off == NULL || *len == NULL) {
		free(*off);
		free(*len);
		return fail_start(c, fail(c, SDR_COLL_E_NOMEM, "out of memory"));
	}
	*scratch = 0;
	for (int j = 0; j < n; j++) {
		size_t e = count / (size_t)n + ((size_t)j < count % (size_t)n);

		(*len)[j] = e * esz;
		(*off)[j] = j ? (*off)[j - 1] + (*len)[j - 1] : 0;
		*scratch += ((*len)[j] + 63) & ~(size_t)63;
	}
	return 0;
}

/* Whether a whole vector of @p bytes fits one message of link @p k both ways. */
static int
link_fits(const struct sdr_comm *c, int k, size_t bytes)
{
	return bytes <= c->links[k].tx_max_msg && bytes <= c->links[k].rx_max_msg;
}

/* The algorithm of an Allreduce of @p bytes (sdr_coll.h: every rank decides alike). */
static enum sdr_coll_algo
allreduce_algo(const struct sdr_comm *c, size_t bytes)
{
	int fits = 1;

	if (c->algo != SDR_COLL_ALGO_AUTO)
		return c->algo;
	if (bytes > c->gather_max)
		return SDR_COLL_ALGO_RING;
	/* a whole vector must fit one message of every connection used (give every
	 * connection of the communicator the same max_msg, or ranks may decide differently) */
	if (c->doubling_ok) {
		for (int b = 1; b < c->size && fits; b <<= 1)
			fits = link_fits(c, c->peer_link[c->rank ^ b], bytes);
		if (fits)
			return SDR_COLL_ALGO_DOUBLING;
	}
	return link_fits(c, 0, bytes) ? SDR_COLL_ALGO_GATHER : SDR_COLL_ALGO_RING;
}

/*
 * Recursive doubling over log2 N steps of the whole vector: at step j rank r exchanges its
 * vector W_j with partner r ^ 2^j (its peer connections) and W_{j+1} = W_j op the partner's,
 * the lower rank's vector always the first operand, so both partners, and in the end every
 * rank, hold the same bits. W_j lies at j x @p bytes of the working buffer: the receive of
 * step j lands in scratch (j x @p bytes; a receive's bytes must stay as they came until it
 * completes, for the dataplane's erasure decoder) and is combined with W_j into W_{j+1}
 * chunk by chunk (each chunk once W_j's same bytes are in); step j + 1 sends W_{j+1} as a
 * stream fed by those chunks; no send's bytes change while it is in flight (steps_safe()).
 */
static void
doubling_steps(struct op *o, uint64_t bytes)
{
	struct sdr_comm *c = o->c;

	for (int j = 0; j < o->n; j++) {
		int partner = c->rank ^ (1 << j);

		o->s[j] = (struct step){ .send_off = (uint64_t)j * bytes, .send_len = bytes,
					 .recv_off = (uint64_t)(j + 1) * bytes, .recv_len = bytes,
					 .scratch_off = (uint64_t)j * bytes,
					 .link = c->peer_link[partner], .fed_by = j - 1,
					 .combine = 1, .src_first = c->rank > partner };
	}
}

/* log2 of a power of two @p n. */
static int
log2i(int n)
{
	int d = 0;

	while ((1 << d) < n)
		d++;
	return d;
}

/* Equal blocks of @p block bytes: (offsets, lengths) of the N segments. */
static int blocks(struct sdr_comm *c, size_t block, uint64_t **off, uint64_t **len);

/*
 * Whether @p count elements of @p esz bytes, N of them side by side and the working copies
 * an operation keeps (at most 2 log2 N + 2 of the vector), fit in size_t: a count beyond it
 * would wrap the sizes the arena is carved by. @return 0, or SDR_COLL_E_ARG (said).
 */
static int
count_fits(struct sdr_comm *c, const char *what, size_t count, size_t esz)
{
	size_t most = SIZE_MAX / 4 / (size_t)(2 * c->size + 2 * log2i(c->size) + 2);

	if (esz != 0 && count > most / esz)
		return fail(c, SDR_COLL_E_ARG, "%s: %zu elements of %zu bytes: too many", what,
			    count, esz);
	return 0;
}

int
sdr_iallreduce(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
	       enum sdr_coll_type type, enum sdr_coll_op op, struct sdr_coll_req **req)
{
	size_t esz = sdr_coll_type_size(type), bytes = count * esz, scratch = 0;
	enum sdr_coll_algo algo = allreduce_algo(c, bytes);
	int gather = algo == SDR_COLL_ALGO_GATHER;
	uint64_t *off, *len;
	struct op *o;
	int rc;

	*req = NULL;
	if ((count && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "allreduce: a NULL buffer or an unknown type");
	if (count == 0)
		sendbuf = recvbuf = no_bytes;
	if ((rc = count_fits(c, "allreduce", count, esz)) != 0)
		return rc;
	if (algo == SDR_COLL_ALGO_DOUBLING && !c->doubling_ok)
		return fail(c, SDR_COLL_E_ARG, "allreduce: recursive doubling needs a power-of-two "
			    "number of ranks (here %d) and a peer line for each partner", c->size);
	if ((unsigned int)algo > SDR_COLL_ALGO_DOUBLING)
		return fail(c, SDR_COLL_E_ARG, "allreduce: unknown algorithm %d", (int)algo);
	if (algo == SDR_COLL_ALGO_DOUBLING) {
		int d = log2i(c->size);

		rc = op_new(&o, c, KIND_ALLREDUCE, d, bytes * (size_t)(d + 1), bytes * (size_t)d,
			    type, op, count);
		if (rc != 0)
			return rc;
		o->st.algo = algo;
		op_imm(o);
		memcpy(o->work, sendbuf, bytes);
		doubling_steps(o, bytes);
		o->result = recvbuf;
		o->result_off = (size_t)d * bytes;
		o->result_len = bytes;
		return launch(o, req);
	}
	/* gather: the N whole vectors side by side, rank k's at k x bytes, placed (no
	 * scratch), reduced when all are in */
	rc = gather ? blocks(c, bytes, &off, &len) : segments(c, count, esz, &off, &len, &scratch);
	if (rc != 0)
		return rc;
	/* ring: the Reduce-Scatter's segments, then the Allgather's (ring_steps()) */
	rc = op_new(&o, c, KIND_ALLREDUCE, gather ? c->size - 1 : 2 * (c->size - 1),
		    bytes * (gather ? (size_t)c->size : 2), scratch, type, op, count);
	if (rc == 0) {
		int r = c->rank;

		o->gather = gather;
		o->st.algo = gather ? SDR_COLL_ALGO_GATHER : SDR_COLL_ALGO_RING;
		op_imm(o);
		if (gather) {
			memcpy(o->work + (size_t)r * bytes, sendbuf, bytes);
		} else {	/* segment r is reduced where the Allgather sends it from */
			memcpy(o->work, sendbuf, off[r]);
			memcpy(o->work + bytes + off[r], (const uint8_t *)sendbuf + off[r], len[r]);
			memcpy(o->work + off[r] + len[r], (const uint8_t *)sendbuf + off[r] + len[r],
			       bytes - off[r] - len[r]);
			o->result_off = bytes;
		}
		if (o->n)
			ring_steps(o, off, len, !gather, 1, gather ? 0 : bytes);
		o->result = recvbuf;
		o->result_len = bytes;
		rc = launch(o, req);
	}
	free(off);
	free(len);
	return rc;
}

static int
blocks(struct sdr_comm *c, size_t block, uint64_t **off, uint64_t **len)
{
	*off = calloc((size_t)c->size, sizeof(**off));
	*len = calloc((size_t)c->size, sizeof(**len));
	if (*off == NULL || *len == NULL) {
		free(*off);
		free(*len);
		return fail_start(c, fail(c, SDR_COLL_E_NOMEM, "out of memory"));
	}
	for (int j = 0; j < c->size; j++) {
		(*off)[j] = (uint64_t)j * block;
		(*len)[j] = block;
	}
	return 0;
}

int
sdr_ireduce_scatter(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t recvcount,
		    enum sdr_coll_type type, enum sdr_coll_op op, struct sdr_coll_req **req)
{
	size_t esz = sdr_coll_type_size(type), block = recvcount * esz;
	uint64_t *off, *len;
	struct op *o;
	int rc;

	*req = NULL;
	if ((recvcount && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "reduce_scatter: a NULL buffer or an unknown type");
	if (recvcount == 0)
		sendbuf = recvbuf = no_bytes;
	if ((rc = count_fits(c, "reduce_scatter", recvcount, esz)) != 0)
		return rc;
	if ((rc = blocks(c, block, &off, &len)) != 0)
		return rc;
	rc = op_new(&o, c, KIND_REDUCE_SCATTER, c->size - 1, block * (size_t)c->size,
		    ((block + 63) & ~(size_t)63) * (size_t)(c->size - 1), type, op, recvcount);
	if (rc == 0) {
		memcpy(o->work, sendbuf, block * (size_t)c->size);
		ring_steps(o, off, len, 1, 0, 0);
		o->result = recvbuf;
		o->result_off = (size_t)c->rank * block;
		o->result_len = block;
		rc = launch(o, req);
	}
	free(off);
	free(len);
	return rc;
}

int
sdr_iallgather(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t sendcount,
	       enum sdr_coll_type type, struct sdr_coll_req **req)
{
	size_t esz = sdr_coll_type_size(type), block = sendcount * esz;
	uint64_t *off, *len;
	struct op *o;
	int rc;

	*req = NULL;
	if ((sendcount && (sendbuf == NULL || recvbuf == NULL)) || esz == 0)
		return fail(c, SDR_COLL_E_ARG, "allgather: a NULL buffer or an unknown type");
	if (sendcount == 0)
		sendbuf = recvbuf = no_bytes;
	if ((rc = count_fits(c, "allgather", sendcount, esz)) != 0)
		return rc;
	if ((rc = blocks(c, block, &off, &len)) != 0)
		return rc;
	rc = op_new(&o, c, KIND_ALLGATHER, c->size - 1, block * (size_t)c->size, 0, type,
		    SDR_COLL_SUM, sendcount);
	if (rc == 0) {
		memcpy(o->work + (size_t)c->rank * block, sendbuf, block);
		ring_steps(o, off, len, 0, 1, 0);
		o->result = recvbuf;
		o->result_len = block * (size_t)c->size;
		rc = launch(o, req);
	}
	free(off);
	free(len);
	return rc;
}

int
sdr_ibroadcast(struct sdr_comm *c, void *buf, size_t count, enum sdr_coll_type type, int root,
	       struct sdr_coll_req **req)
{
	size_t esz = sdr_coll_type_size(type), bytes = count * esz;
	struct op *o;
	int pos, rc;

	*req = NULL;
	if ((count && buf == NULL) || esz == 0 || root < 0 || root >= c->size)
		return fail(c, SDR_COLL_E_ARG, "broadcast: a NULL buffer, an unknown type or root "
			    "%d outside 0 .. %d", root, c->size - 1);
	if (count == 0)
		buf = no_bytes;
	if ((rc = count_fits(c, "broadcast", count, esz)) != 0)
		return rc;
	rc = op_new(&o, c, KIND_BROADCAST, 1, bytes, 0, type, SDR_COLL_SUM, count);
	if (rc)
		return rc;
	o->root = root;
	op_imm(o);
	/* one step: the root sends, the others receive, and forward as the chunks come
	 * (but the rank before the root) */
	pos = mod(c->rank - root, c->size);
	o->s[0] = (struct step){ .send_len = pos == c->size - 1 ? 0 : bytes,
				 .recv_len = pos == 0 ? 0 : bytes, .fed_by = pos ? 0 : -1 };
	if (pos == 0) {
		memcpy(o->work, buf, bytes);
	} else {
		o->result = buf;
		o->result_len = bytes;
	}
	return launch(o, req);
}

/* A blocking call: issue (rc), then wait. */
static int
blocking(int rc, struct sdr_coll_req **req)
{
	return rc == SDR_COLL_OK ? sdr_coll_wait(*req) : rc;
}

int
sdr_allreduce(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
	      enum sdr_coll_type type, enum sdr_coll_op op)
{
	struct sdr_coll_req *r = NULL;

	return blocking(sdr_iallreduce(c, sendbuf, recvbuf, count, type, op, &r), &r);
}

int
sdr_reduce_scatter(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t recvcount,
		   enum sdr_coll_type type, enum sdr_coll_op op)
{
	struct sdr_coll_req *r = NULL;

	return blocking(sdr_ireduce_scatter(c, sendbuf, recvbuf, recvcount, type, op, &r), &r);
}

int
sdr_allgather(struct sdr_comm *c, const void *sendbuf, void *recvbuf, size_t sendcount,
	      enum sdr_coll_type type)
{
	struct sdr_coll_req *r = NULL;

	return blocking(sdr_iallgather(c, sendbuf, recvbuf, sendcount, type, &r), &r);
}

int
sdr_broadcast(struct sdr_comm *c, void *buf, size_t count, enum sdr_coll_type type, int root)
{
	struct sdr_coll_req *r = NULL;

	return blocking(sdr_ibroadcast(c, buf, count, type, root, &r), &r);
}
