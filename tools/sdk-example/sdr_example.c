/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libsdr example of docs/sdk.md: attach to a dataplane instance, open a sending and a
 * receiving connection, post receives, send messages with an immediate, poll the chunk
 * bitmap while a message arrives, check every byte, and complete every receive.
 *
 *   sdr-example INSTANCE SEND_CONN RECV_CONN [MESSAGES]
 * e.g. with pmd-configs/loopback.ini running: sdr-example loopback ab ba 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsdr.h"

#define MSG_SIZE (1u << 20)

static void
fill(uint8_t *p, uint32_t len, uint32_t n)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + n);
}

int
main(int argc, char **argv)
{
	struct sdr_context *ctx;
	struct sdr_qp *tx, *rx;
	struct sdr_recv *handle[64];
	int done[64] = { 0 };
	uint32_t partial[64] = { 0 }, total[64] = { 0 };
	struct sdr_mr *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	char err[256];
	int messages = argc > 4 ? atoi(argv[4]) : 8, bad = 0;

	if (argc < 4 || messages < 1 || messages > 64) {
		fprintf(stderr, "usage: sdr-example INSTANCE SEND_CONN RECV_CONN [MESSAGES<=64]\n");
		return 2;
	}
	if (sdr_context_create(argv[1], &ctx, err, sizeof(err)) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-example: %s\n", err);
		return 1;
	}
	if (sdr_qp_open(ctx, argv[2], &tx) != SDR_SUCCESS ||
	    sdr_qp_open(ctx, argv[3], &rx) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-example: %s\n", sdr_last_error(ctx));
		sdr_context_destroy(ctx);
		return 1;
	}
	/* registered memory: regions of the shared arena the dataplane reads and writes */
	if (sdr_mr_reg(ctx, (size_t)messages * MSG_SIZE, (void **)&sbuf, &smr) != SDR_SUCCESS ||
	    sdr_mr_reg(ctx, (size_t)messages * MSG_SIZE, (void **)&rbuf, &rmr) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-example: %s\n", sdr_last_error(ctx));
		sdr_context_destroy(ctx);
		return 1;
	}
	/* the k-th message sent lands in the k-th receive posted */
	for (int i = 0; i < messages; i++) {
		if (sdr_recv_post(rx, rbuf + (size_t)i * MSG_SIZE, MSG_SIZE, (uint64_t)i,
				  &handle[i]) != SDR_SUCCESS) {
			fprintf(stderr, "sdr-example: recv post: %s\n", sdr_last_error(ctx));
			return 1;
		}
	}
	for (int i = 0; i < messages; i++) {
		fill(sbuf + (size_t)i * MSG_SIZE, MSG_SIZE, (uint32_t)i);
		while (sdr_send_post(tx, sbuf + (size_t)i * MSG_SIZE, MSG_SIZE, 0xC0DE0000u + (uint32_t)i,
				     (uint64_t)i) == SDR_RETRY)
			;
	}
	for (int sends = 0, recvs = 0; sends < messages || recvs < messages;) {
		struct sdr_completion c;
		uint32_t imm = 0;
		int rc;

		/* partial completion: the bitmap of every receive still open, one byte per
		 * chunk, set by the dataplane as each chunk lands */
		for (int m = 0; m < messages; m++) {
			const volatile uint8_t *bm;
			uint32_t in = 0;

			if (done[m])
				continue;
			bm = sdr_recv_bitmap_get(handle[m], &total[m]);
			for (uint32_t k = 0; k < total[m]; k++)
				in += bm[k];
			if (in > 0 && in < total[m])
				partial[m]++;	/* some chunks in, others still on the way */
		}
		if ((rc = sdr_send_poll(tx, &c)) == SDR_SUCCESS) {
			printf("send %llu done in %.3f ms (%u chunks retransmitted)\n",
			       (unsigned long long)c.cookie, c.time_s * 1e3, c.retransmitted);
			bad += c.status != 0;
			sends++;
		} else if (rc == SDR_ERROR) {
			fprintf(stderr, "sdr-example: %s\n", sdr_last_error(ctx));
			return 1;
		}
		if ((rc = sdr_recv_poll(rx, &c)) == SDR_SUCCESS) {
			uint8_t want[256];
			int ok = c.status == 0;

			for (uint32_t off = 0; ok && off < MSG_SIZE; off += sizeof(want)) {
				for (uint32_t j = 0; j < sizeof(want); j++)
					want[j] = (uint8_t)((off + j) * 7 + (uint32_t)c.cookie);
				ok = memcmp(rbuf + c.cookie * MSG_SIZE + off, want, sizeof(want)) == 0;
			}
			ok = ok && sdr_recv_imm_get(c.recv, &imm) == SDR_SUCCESS &&
			     imm == 0xC0DE0000u + (uint32_t)c.cookie;
			printf("recv %llu: %s, immediate 0x%08x, %u submessages decoded, "
			       "bitmap (%u chunks) partly set at %u polls\n",
			       (unsigned long long)c.cookie, ok ? "every byte right" : "WRONG", imm,
			       c.decoded, total[c.cookie], partial[c.cookie]);
			bad += !ok;
			done[c.cookie] = 1;
			while (sdr_recv_complete(c.recv) == SDR_RETRY)
				;	/* the request queue is full for a moment */
			recvs++;
		} else if (rc == SDR_ERROR) {
			fprintf(stderr, "sdr-example: %s\n", sdr_last_error(ctx));
			return 1;
		}
	}
	sdr_mr_dereg(smr);
	sdr_mr_dereg(rmr);
	sdr_context_destroy(ctx);
	printf("%d messages, %s\n", messages, bad ? "FAILED" : "all verified");
	return bad ? 1 : 0;
}
