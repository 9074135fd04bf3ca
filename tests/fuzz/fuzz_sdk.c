/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the SDK side of the control segment's trust boundary — what a hostile
 * application can write and the dataplane reads: its calls (ctl_sdk_call(): open, create,
 * set, close, destroy, immediate, expand), the requests of its queue (send, receive, done,
 * streams: ctl_sdk.c), and every byte of its segment outside the arena (queue indices and
 * entries) rewritten at any moment. On a real dataplane (fuzz_dp.h): the two connections
 * of loopback.ini, its links transparent, its ports sending zero-copy (frames point into
 * the application's arena); between the application's steps the dataplane's loop runs for
 * a while on the fuzzer's thread (rx, tx, the SDK service), so sends complete, receives
 * fill and completions come back. The application is another user's (per-user limits
 * apply to it). Not driven here: the management thread's own steps (run_call()'s copy
 * of the call area, the doorbell socket, deleting the connections the application made
 * once it has left: the harness rebuilds the file's connections instead), queue pairs
 * of engines other than 0 (loopback.ini has one), and threads racing.
 *
 * Input: operations, each a byte (op % 7) and its arguments:
 *   0 OPEN    which               open connection ab (even) or ba (odd)
 *   1 CALL    sizeof(sdr_rpc_req) a call, every field from the input (as the management
 *                                 thread hands it on: name and text terminated, len cut)
 *   2 REQ     sizeof(sdr_sdk_req) a request, every field from the input
 *   3 SHAPED  op conn off16 len16 bm16 h  a request near the valid ones: an opened
 *                                 connection (conn's top 2 bits: the length's last
 *                                 bytes), offsets in pages and lengths in 256 bytes of
 *                                 the arena; h: bit 7 an earlier request's cookie (bits
 *                                 4-5: how far back) or a new one, bits 0-2 a send's
 *                                 priority (0..7: 4..7 wrong) or which receive completion's
 *                                 handle a RECV_DONE gives back (none seen: 0, by cookie)
 *   4 WRITE   where off16 n bytes n (1..16) bytes into the call area, the request queue or
 *                                 the completion queue (where % 3), at off % its size
 *   5 RUN     n                   the dataplane's loop for (1 + n % 32) x 20 us (50 ms
 *                                 an input at most)
 *   6 DRAIN   n                   take up to n completions (handles kept for SHAPED)
 *
 * Checks, whatever the application does: nothing crashes or touches memory outside its
 * segment (guard pages around it) or the dataplane's own (ASan); a call's reply code is
 * ok, failed or bad input, its text terminated; until the application writes into the
 * completion queue itself, the dataplane never puts more into it than it holds; once the
 * application leaves, everything it had ends within 2 s of the loop, and the engine takes
 * the slot again (the next input).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "ctl.h"
#include "fuzz_dp.h"
#include "pipeline.h"
#include "sdr_shm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz_sdk", cond)
#define SLOT 0			/* the application's slot */
#define PAGE 4096

static int verbose;

/* The application: its segment (between two guard pages) and its ends of queue pair 0. */
struct app {
	uint8_t *map;		/* the guard page before the segment */
	size_t map_len;
	uint8_t *seg;
	struct sdr_client_layout L;
	struct sdr_spsc_end sq, cq;
	uint32_t conns[4];	/* connections it opened (their indices) */
	unsigned int nconns;
	uint64_t handles[8];	/* of receive completions seen */
	unsigned int nhandles;
	uint64_t cookie;
	int cq_written;		/* WRITE went into the completion queue */
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* 16 slots of 1 MiB each: the arena of one application */
	fuzz_dp_init("fuzzsdk", 16 << 20, 1, 1);
	/* another user's application: the per-user limits on what it creates apply */
	dp.ctl->slots[SLOT].uid = 65534;
	verbose = getenv("FUZZ_SDK_VERBOSE") != NULL && strcmp(getenv("FUZZ_SDK_VERBOSE"), "1") == 0;
	return 0;
}

/* The segment as the management thread makes it (segment_create()), and the attach. */
static void
app_start(struct app *a)
{
	struct sdr_client_hdr *h;

	memset(a, 0, sizeof(*a));
	sdr_client_layout(SDR_CLIENT_SDK, dp.ctl->arena_len, dp.ctl->engines, &a->L);
	a->map_len = a->L.size + 2 * PAGE;
	a->map = mmap(NULL, a->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a->map != MAP_FAILED);
	a->seg = a->map + PAGE;
	CHECK(mprotect(a->seg, a->L.size, PROT_READ | PROT_WRITE) == 0);
	h = (struct sdr_client_hdr *)a->seg;
	*h = (struct sdr_client_hdr){ .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION,
				      .kind = SDR_CLIENT_SDK, .slot = SLOT, .size = a->L.size,
				      .arena_len = a->L.arena_len };
	sdr_spsc_bind(&a->sq, a->seg + a->L.sq_off[0], SDR_SHM_QUEUE_DEPTH,
		      sizeof(struct sdr_sdk_req));
	sdr_spsc_bind(&a->cq, a->seg + a->L.cq_off[0], SDR_SHM_QUEUE_DEPTH,
		      sizeof(struct sdr_sdk_cqe));
	CHECK(ctl_sdk_attach(&dp, SLOT, a->seg, &a->L) == 0);
}

/* The dataplane's loop on this thread for @p us microseconds. */
static void
run_for(unsigned int us)
{
	dp_pipeline_run(&dp, DP_WORKER_ALL, rte_get_tsc_cycles() + dp.tsc_hz / 1000000 * us);
}

/* A call, as run_call() hands it on, and what its reply must be. */
static void
call(struct app *a, struct sdr_rpc_req *q)
{
	static struct sdr_rpc_rep r;

	q->name[sizeof(q->name) - 1] = '\0';
	if (q->len >= sizeof(q->text))
		q->len = sizeof(q->text) - 1;
	q->text[q->len] = '\0';
	memset(&r, 0x5A, sizeof(r));
	ctl_sdk_call(&dp, SLOT, q, &r);
	CHECK(r.rc == SDR_CTL_OK || r.rc == SDR_CTL_FAILED || r.rc == SDR_CTL_BAD_INPUT);
	if (r.rc != SDR_CTL_OK)
		CHECK(memchr(r.u.text, '\0', sizeof(r.u.text)) != NULL);
	else if ((q->op == SDR_RPC_OPEN || q->op == SDR_RPC_CREATE) && a->nconns < 4)
		a->conns[a->nconns++] = r.u.info.conn;
}

/* Input bytes from @p *at (zeros past the end). */
static void
take(const uint8_t *data, size_t size, size_t *at, void *out, size_t n)
{
	size_t k = *at < size ? (size - *at < n ? size - *at : n) : 0;

	memcpy(out, data + *at, k);
	memset((uint8_t *)out + k, 0, n - k);
	*at += n;
}

static void
shaped(struct app *a, const uint8_t *b)
{
	uint64_t pages = a->L.arena_len / PAGE;
	struct sdr_sdk_req r = {
		.op = (uint16_t)(b[0] % 6 + 1),
		.conn = (uint16_t)(a->nconns ? a->conns[b[1] % a->nconns] : b[1]),
		.imm = b[1],
		.off = (uint64_t)(b[2] | b[3] << 8) % (pages + 1) * PAGE,
		.len = (uint64_t)(b[4] | b[5] << 8) * 256 + (b[1] >> 6),
		.bm_off = (uint64_t)(b[6] | b[7] << 8) * 64,
		.handle = b[8] & 7,
	};

	/* an earlier request's cookie: a stream's additions and end, a receive given back */
	if ((b[8] & 0x80) && a->cookie > (uint64_t)(b[8] >> 4 & 3))
		r.cookie = a->cookie - (b[8] >> 4 & 3);
	else
		r.cookie = ++a->cookie;
	if (r.op == SDR_SDK_RECV_DONE)
		r.handle = a->nhandles ? a->handles[(b[8] & 7) % a->nhandles] : 0;

	(void)sdr_spsc_push(&a->sq, &r);
}

static void
drain(struct app *a, unsigned int n)
{
	struct sdr_sdk_cqe e;
	int rc;

	while (n-- > 0 && (rc = sdr_spsc_pop(&a->cq, &e)) == 0) {
		if (verbose)	/* FUZZ_SDK_VERBOSE=1: what an input's completions were */
			fprintf(stderr, "fuzz_sdk: completion op %u conn %u status %d cookie %llu\n",
				e.op, e.conn, e.status, (unsigned long long)e.cookie);
		if (e.op == SDR_SDK_RECV) {
			a->handles[a->nhandles % 8] = e.handle;
			a->nhandles += a->nhandles < 8;
		}
	}
	/* the dataplane's index says more than the ring holds: only if we wrote it */
	CHECK(rc != -EPROTO || a->cq_written);
}

/* WRITE: @p n bytes from @p v into region @p where % 3 of the segment, at @p off. */
static void
scribble(struct app *a, unsigned int where, unsigned int off, const uint8_t *v, unsigned int n)
{
	static const uint64_t esize[3] = { 0, sizeof(struct sdr_sdk_req),
					   sizeof(struct sdr_sdk_cqe) };
	uint64_t at = where % 3 == 0 ? a->L.rpc_off : where % 3 == 1 ? a->L.sq_off[0] :
		      a->L.cq_off[0];
	uint64_t len = where % 3 == 0 ? sizeof(struct sdr_rpc) :
		       SDR_SPSC_BYTES(SDR_SHM_QUEUE_DEPTH, esize[where % 3]);

	off %= (unsigned int)len;
	if (off + n > len)
		n = (unsigned int)(len - off);
	memcpy(a->seg + at + off, v, n);
	a->cq_written |= where % 3 == 2;
}

/* The application leaves: everything it had ends, and the slot is free again. */
static void
app_leave(struct app *a)
{
	unsigned int ms = 0;

	ctl_sdk_detach(&dp, SLOT);
	while (!ctl_sdk_gone(&dp, SLOT) && ms++ < 2000)
		run_for(1000);
	CHECK(ctl_sdk_gone(&dp, SLOT));
	munmap(a->map, a->map_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct app a;
	unsigned int us = 0;	/* of the loop run so far: 50 ms at most an input */
	size_t at = 0;

	if (size > 16 * 1024)
		return 0;
	app_start(&a);
	while (at < size) {
		uint8_t op = data[at++], b[16], v[16];
		struct sdr_rpc_req q;
		struct sdr_sdk_req r;
		uint16_t off;

		switch (op % 7) {
		case 0:
			take(data, size, &at, b, 1);
			memset(&q, 0, sizeof(q));
			q.op = SDR_RPC_OPEN;
			strcpy(q.name, b[0] & 1 ? "ba" : "ab");
			call(&a, &q);
			break;
		case 1:
			take(data, size, &at, &q, sizeof(q));
			call(&a, &q);
			break;
		case 2:
			take(data, size, &at, &r, sizeof(r));
			(void)sdr_spsc_push(&a.sq, &r);
			break;
		case 3:
			take(data, size, &at, b, 9);
			shaped(&a, b);
			break;
		case 4:
			take(data, size, &at, b, 4);
			off = (uint16_t)(b[1] | b[2] << 8);
			b[3] = (uint8_t)(b[3] % 16 + 1);
			take(data, size, &at, v, b[3]);
			scribble(&a, b[0], off, v, b[3]);
			break;
		case 5:
			take(data, size, &at, b, 1);
			if (us < 50000) {
				us += 20u * (1 + b[0] % 32);
				run_for(20u * (1 + b[0] % 32));
			}
			break;
		case 6:
			take(data, size, &at, b, 1);
			drain(&a, b[0]);
			break;
		}
	}
	run_for(200);
	app_leave(&a);
	fuzz_dp_reset("fuzz_sdk");
	return 0;
}
