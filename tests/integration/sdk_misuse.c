/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application that uses libsdr wrongly, or outlives its dataplane, against a loopback
 * dataplane (conns SEND and RECV of one process): each misuse gets an error, never a crash,
 * a hang or another receive's completion, and every message that is sent right still
 * arrives right. Run by tests/integration/control.py (case misuse).
 *
 * usage: sdk_misuse INSTANCE SEND_CONN RECV_CONN DATAPLANE_PID
 * Exit 0 when every check held; 1 with one line per failed check.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libsdr.h"

#define MIB (1u << 20)
#define MSG 4096u

static int failed;
static struct sdr_context *ctx;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL line %d: ", __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed++; \
	} \
} while (0)

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
fill(uint8_t *p, uint32_t len, uint32_t n)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + n * 7 + 1);
}

static int
intact(const uint8_t *p, uint32_t len, uint32_t n)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 13 + n * 7 + 1))
			return 0;
	return 1;
}

/* Send message @p n of MSG bytes from @p sbuf; wait for its send completion (status). */
static int
send_one(struct sdr_qp *tx, uint8_t *sbuf, uint32_t n)
{
	struct sdr_completion c;
	double end = now_s() + 10;
	int rc;

	fill(sbuf, MSG, n);
	while ((rc = sdr_send_post(tx, sbuf, MSG, n, n)) == SDR_RETRY && now_s() < end)
		;
	if (rc != SDR_SUCCESS)
		return -1;
	while ((rc = sdr_send_poll(tx, &c)) == SDR_RETRY && now_s() < end)
		;
	return rc == SDR_SUCCESS ? (int)c.status : -1;
}

/* The next receive completion of @p rx, within 10 s. */
static int
recv_one(struct sdr_qp *rx, struct sdr_completion *c)
{
	double end = now_s() + 10;
	int rc;

	while ((rc = sdr_recv_poll(rx, c)) == SDR_RETRY && now_s() < end)
		;
	return rc;
}

/* Regions given back in any order merge again: the whole arena fits after. */
static void
regions(void)
{
	struct sdr_mr *a, *b, *c, *all;
	void *pa, *pb, *pc, *p;

	CHECK(sdr_mr_reg(ctx, SIZE_MAX, &p, &all) == SDR_ERROR, "SIZE_MAX bytes registered");
	CHECK(sdr_mr_reg(ctx, SIZE_MAX - 10, &p, &all) == SDR_ERROR, "a length that wraps");
	CHECK(sdr_mr_reg(ctx, (size_t)1 << 40, &p, &all) == SDR_ERROR,
	      "more than the arena is not SDR_ERROR");
	if (sdr_mr_reg(ctx, 64 * MIB, &p, &all) != SDR_SUCCESS) {
		CHECK(0, "the 64 MiB arena is not free at start: %s", sdr_last_error(ctx));
		return;
	}
	sdr_mr_dereg(all);
	CHECK(sdr_mr_reg(ctx, 16 * MIB, &pa, &a) == SDR_SUCCESS &&
	      sdr_mr_reg(ctx, 16 * MIB, &pb, &b) == SDR_SUCCESS &&
	      sdr_mr_reg(ctx, 32 * MIB, &pc, &c) == SDR_SUCCESS, "three regions");
	CHECK(sdr_mr_reg(ctx, 64, &p, &all) == SDR_RETRY, "a full arena is not SDR_RETRY");
	sdr_mr_dereg(a);
	sdr_mr_dereg(c);
	sdr_mr_dereg(b);
	CHECK(sdr_mr_reg(ctx, 64 * MIB, &p, &all) == SDR_SUCCESS,
	      "after three regions given back the arena is still in pieces: %s",
	      sdr_last_error(ctx));
	sdr_mr_dereg(all);
}

/* Handles used after sdr_recv_complete, or completed before they were polled. */
static void
handles(struct sdr_qp *tx, struct sdr_qp *rx, uint8_t *sbuf, uint8_t *rbuf)
{
	struct sdr_recv *r1, *r2, *r3;
	struct sdr_completion c;
	uint32_t imm, n;
	uint64_t bits[16];
	double end;

	/* a complete receive completed twice, then read */
	CHECK(sdr_recv_post(rx, rbuf, MSG, 1, &r1) == SDR_SUCCESS, "post r1");
	CHECK(send_one(tx, sbuf, 1) == 0, "message 1 not sent");
	CHECK(recv_one(rx, &c) == SDR_SUCCESS && c.recv == r1 && c.status == 0 &&
	      intact(rbuf, MSG, 1), "message 1 not received intact");
	CHECK(sdr_recv_complete(r1) == SDR_SUCCESS, "complete r1");
	CHECK(sdr_recv_complete(r1) == SDR_ERROR, "r1 completed twice");
	CHECK(sdr_recv_bitmap_get(r1, &n) == NULL, "bitmap of a completed receive");
	CHECK(sdr_recv_imm_get(r1, &imm) == SDR_ERROR, "immediate of a completed receive");
	CHECK(sdr_recv_bitmap_chunk_expand(r1, 0, bits) == SDR_ERROR, "expand, completed");
	CHECK(sdr_recv_imm_bits(r1) == 0, "imm bits of a completed receive");

	/* a stale complete must not cancel the next receive */
	CHECK(sdr_recv_post(rx, rbuf + MSG, MSG, 2, &r2) == SDR_SUCCESS, "post r2");
	CHECK(r2 != r1, "the slot of the receive just completed is reused at once");
	CHECK(sdr_recv_complete(r1) == SDR_ERROR, "a stale complete after the next post");
	CHECK(send_one(tx, sbuf, 2) == 0, "message 2 failed: the stale complete cancelled r2");
	CHECK(recv_one(rx, &c) == SDR_SUCCESS && c.recv == r2 && c.status == 0 &&
	      intact(rbuf + MSG, MSG, 2), "message 2 not received intact in r2");
	CHECK(sdr_recv_complete(r2) == SDR_SUCCESS, "complete r2");

	/* completed before it was polled: its queued completion is not handed out */
	CHECK(sdr_recv_post(rx, rbuf, MSG, 3, &r3) == SDR_SUCCESS, "post r3");
	CHECK(send_one(tx, sbuf, 3) == 0, "message 3 not sent");
	/* (the send completed, so the receive did; a send poll queues its completion) */
	end = now_s() + 0.2;
	while (now_s() < end)
		sdr_send_poll(tx, &c);
	CHECK(sdr_recv_complete(r3) == SDR_SUCCESS, "complete r3 before polling it");
	CHECK(sdr_recv_poll(rx, &c) == SDR_RETRY, "the completion of a receive completed "
	      "before it was polled was handed out (recv %p, r3 %p)", (void *)c.recv, (void *)r3);
}

/* A send completion polled: ok, and its send's first. @return 1. */
static int
took(const struct sdr_completion *c, uint8_t *seen, int total)
{
	CHECK(c->status == 0 && c->cookie < (uint64_t)total && !seen[c->cookie],
	      "send %llu: status %u%s", (unsigned long long)c->cookie, c->status,
	      c->cookie < (uint64_t)total && seen[c->cookie] ? ", completed twice" : "");
	if (c->cookie < (uint64_t)total)
		seen[c->cookie] = 1;
	return 1;
}

/* More send completions than a QP queues, never polled while posting. */
static void
unpolled_sends(struct sdr_qp *tx, struct sdr_qp *rx, uint8_t *sbuf, uint8_t *rbuf)
{
	const int total = 3000;
	int posted = 0, polled = 0, drained = 0, have_recv = 0, rc;
	double end = now_s() + 20, stuck = 0;
	static uint8_t seen[3000];
	struct sdr_completion c;
	struct sdr_recv *h;

	fill(sbuf, 64, 0);
	while ((posted < total || polled < posted) && now_s() < end) {
		/* one receive posted ahead of each send, so that every send completes */
		if (posted < total && !have_recv)
			have_recv = sdr_recv_post(rx, rbuf, 64, 0, &h) == SDR_SUCCESS;
		if (posted < total && have_recv) {
			rc = sdr_send_post(tx, sbuf, 64, 0, (uint64_t)posted);
			if (rc == SDR_SUCCESS) {
				posted++;
				have_recv = 0;
				stuck = 0;
			} else if (rc == SDR_ERROR) {
				CHECK(0, "send post: %s", sdr_last_error(ctx));
				return;
			} else if (stuck == 0) {
				stuck = now_s();
			} else if (now_s() - stuck > 1) {
				/* no room until the completions are polled: poll them all now */
				drained++;
				while (polled < posted && now_s() < end)
					if (sdr_send_poll(tx, &c) == SDR_SUCCESS) {
						polled += took(&c, seen, total);
					}
				stuck = 0;
			}
		}
		while (sdr_recv_poll(rx, &c) == SDR_SUCCESS) {
			CHECK(c.status == 0, "a 64-byte receive failed: %u", c.status);
			sdr_recv_complete(c.recv);
		}
		if (posted == total)
			while (polled < posted && sdr_send_poll(tx, &c) == SDR_SUCCESS)
				polled += took(&c, seen, total);
	}
	CHECK(posted == total && polled == total, "%d sends posted, %d completions polled",
	      posted, polled);
	CHECK(drained > 0, "3000 sends never polled were all taken: completions must be lost");
}

/* The dataplane killed under 512 posted receives: the posts say so, they do not spin. */
static void
dead_dataplane(struct sdr_qp *tx, struct sdr_qp *rx, uint8_t *sbuf, uint8_t *rbuf, int pid)
{
	struct sdr_recv *h;
	double end;
	int rc, n = 0;

	while (n < 512 && sdr_recv_post(rx, rbuf, 64, 0, &h) == SDR_SUCCESS)
		n++;
	CHECK(n == 512, "%d receives posted, not 512", n);
	kill(pid, SIGKILL);
	end = now_s() + 10;
	while ((rc = sdr_send_post(tx, sbuf, 64, 0, 0)) == SDR_RETRY && now_s() < end)
		usleep(1000);
	CHECK(rc == SDR_ERROR, "a post on a context whose dataplane was killed: %d", rc);
	CHECK(sdr_recv_post(rx, rbuf, 64, 0, &h) == SDR_ERROR, "a receive post after the kill");
}

int
main(int argc, char **argv)
{
	struct sdr_qp *tx, *rx, *rx2;
	struct sdr_mr *smr, *rmr;
	struct sdr_recv *h;
	uint8_t *sbuf, *rbuf;
	char err[256];

	if (argc != 5) {
		fprintf(stderr, "usage: sdk_misuse INSTANCE SEND_CONN RECV_CONN DATAPLANE_PID\n");
		return 2;
	}
	if (sdr_context_create(argv[1], &ctx, err, sizeof(err)) != SDR_SUCCESS) {
		printf("FAIL: %s\n", err);
		return 1;
	}
	regions();
	if (sdr_qp_open(ctx, argv[2], &tx) != SDR_SUCCESS ||
	    sdr_qp_open(ctx, argv[3], &rx) != SDR_SUCCESS ||
	    sdr_mr_reg(ctx, MIB, (void **)&sbuf, &smr) != SDR_SUCCESS ||
	    sdr_mr_reg(ctx, MIB, (void **)&rbuf, &rmr) != SDR_SUCCESS) {
		printf("FAIL: %s\n", sdr_last_error(ctx));
		return 1;
	}
	handles(tx, rx, sbuf, rbuf);
	unpolled_sends(tx, rx, sbuf, rbuf);

	/* a receive whose QP was destroyed: its handle is refused, never read through */
	CHECK(sdr_recv_post(rx, rbuf, MSG, 9, &h) == SDR_SUCCESS, "post before destroy");
	CHECK(sdr_qp_destroy(rx) == SDR_SUCCESS, "destroy rx: %s", sdr_last_error(ctx));
	CHECK(sdr_recv_complete(h) == SDR_ERROR, "complete after its QP was destroyed");
	CHECK(sdr_recv_bitmap_get(h, NULL) == NULL, "bitmap after its QP was destroyed");
	if (sdr_qp_open(ctx, argv[3], &rx2) != SDR_SUCCESS) {
		printf("FAIL: reopen %s: %s\n", argv[3], sdr_last_error(ctx));
		return 1;
	}
	dead_dataplane(tx, rx2, sbuf, rbuf, atoi(argv[4]));
	sdr_mr_dereg(smr);
	sdr_mr_dereg(rmr);
	sdr_context_destroy(ctx);
	if (failed == 0)
		printf("ok: every misuse refused, every message intact\n");
	return failed ? 1 : 0;
}
