/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packetizer cost per packet: sdr_tx_build_sg() turning a message into UC RDMA WRITE Only
 * with Immediate frames without copying the payload (headers, the ICRC over the payload
 * where it lies, a tail: what the dataplane sends zero-copy), and sdr_tx_build() (headers,
 * the payload copy, the ICRC in one pass over the frame: a port with zero_copy off),
 * against the floors the scale-out budget names, measured in the same run on the same
 * bytes in the same cache state: ISA-L crc32 over each payload (what a zero-copy sender
 * must still read: budget 1.3), and memcpy of each payload + crc32 over it (what the
 * copying packetizer must do at least).
 *
 * usage: bench-tx [scale]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "bench_util.h"
#include "sdr_tx.h"

#define ROUNDS	7
#define QPN	0x300
#define MSG	(1u << 20)	/* one message, built again and again: hot in the cache */

struct setup {
	struct sdr_tx *tx;
	uint8_t *src;
	uint8_t **frames;
	uint8_t **mem;		/* what frames[] point into */
	uint16_t *lens;
	struct sdr_tx_frag *frags;
	uint32_t npkts, mtu;
};

static void
setup_init(struct setup *s, uint32_t mtu)
{
	struct roce_path path = { .ip_version = 4, .src_ip = { 10, 0, 0, 1 },
				  .dst_ip = { 10, 0, 0, 2 } };
	struct sdr_conn_attr attr;

	sdr_conn_attr_default(&attr);
	attr.mtu = mtu;
	attr.chunk_size = 16 * mtu;
	attr.max_msg_size = MSG;
	attr.local_qpn = attr.remote_qpn = QPN;
	attr.local_rkey = attr.remote_rkey = 0x5d0a;
	s->tx = sdr_tx_create(&attr, &path);
	if (s->tx == NULL)
		abort();
	s->mtu = mtu;
	s->npkts = MSG / mtu;
	s->src = malloc(MSG);
	s->frames = malloc(s->npkts * sizeof(*s->frames));
	s->mem = malloc(s->npkts * sizeof(*s->mem));
	s->lens = malloc(s->npkts * sizeof(*s->lens));
	s->frags = malloc(s->npkts * sizeof(*s->frags));
	if (s->src == NULL || s->frames == NULL || s->mem == NULL || s->lens == NULL ||
	    s->frags == NULL)
		abort();
	for (uint32_t i = 0; i < MSG; i++)
		s->src[i] = (uint8_t)(i * 13 + (i >> 10));
	/* each frame on a cache line, as an mbuf's data */
	for (uint32_t i = 0; i < s->npkts; i++) {
		if (posix_memalign((void **)&s->mem[i], 64, sdr_tx_max_frame(s->tx)) != 0)
			abort();
		s->frames[i] = s->mem[i];
	}
}

static void
setup_release(struct setup *s)
{
	for (uint32_t i = 0; i < s->npkts; i++)
		free(s->mem[i]);
	free(s->frames);
	free(s->mem);
	free(s->lens);
	free(s->frags);
	free(s->src);
	sdr_tx_destroy(s->tx);
}

/* ns per packet: 0 the copying packetizer, 1 crc32 over each payload, 2 memcpy + crc32,
 * 3 the zero-copy packetizer. */
static double
time_one(struct setup *s, int how, long msgs)
{
	uint32_t cap = sdr_tx_max_frame(s->tx);
	double best = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t acc = 0;
		double t0 = bench_now(), t;

		for (long k = 0; k < msgs; k++) {
			if (how == 0 || how == 3) {
				struct sdr_tx_msg msg;
				struct sdr_tx_job job;

				if (sdr_tx_msg_start(s->tx, s->src, MSG, (uint32_t)k, &msg) != 0 ||
				    sdr_tx_job_data(&job, &msg, 0, msg.npkts) != 0)
					abort();
				msg.rkey = 0x5d0a;
				if (how == 0)
					acc += sdr_tx_build(s->tx, &job, s->frames, cap, s->lens,
							    msg.npkts);
				else
					acc += sdr_tx_build_sg(s->tx, &job, s->frames, cap, s->frags,
							       msg.npkts) + s->frags[0].tail[1];
				sdr_tx_msg_retire(s->tx, &msg);
				continue;
			}
			for (uint32_t i = 0; i < s->npkts; i++) {
				const uint8_t *p = s->src + (size_t)i * s->mtu;

				if (how == 2) {
					/* where the packetizer puts it: a full frame is headers,
					 * payload, no pad, ICRC */
					uint8_t *d = s->frames[i] + sdr_tx_max_frame(s->tx) - s->mtu - 4;

					memcpy(d, p, s->mtu);
					p = d;
				}
				acc += crc32_gzip_refl(0, p, s->mtu);
			}
		}
		t = (bench_now() - t0) / ((double)msgs * s->npkts);
		bench_sink(acc + s->frames[0][70]);
		if (t < best)
			best = t;
	}
	return best * 1e9;
}

int
main(int argc, char **argv)
{
	static const uint32_t mtus[] = { 4096, 1024 };
	double scale = argc > 1 ? atof(argv[1]) : 1.0;

	if (scale <= 0)
		scale = 1.0;
	for (unsigned int i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		struct setup s;
		long msgs = (long)(60 * scale) > 2 ? (long)(60 * scale) : 2;
		double ours, crc, copy, zc;
		char name[160];

		setup_init(&s, mtus[i]);
		zc = time_one(&s, 3, msgs);
		ours = time_one(&s, 0, msgs);
		crc = time_one(&s, 1, msgs);
		copy = time_one(&s, 2, msgs);
		snprintf(name, sizeof(name), "packetizer zero-copy (headers + ICRC over the payload "
			 "in place), %u B payload (budget 1.3)", mtus[i]);
		bench_record("tx", name, zc, "ns/pkt", "crc32_gzip_refl over the payload", crc,
			     "lower");
		snprintf(name, sizeof(name), "packetizer copying (zero_copy = no), %u B payload",
			 mtus[i]);
		bench_record("tx", name, ours, "ns/pkt", "crc32_gzip_refl over the payload", crc,
			     "lower");
		snprintf(name, sizeof(name), "packetizer copying, %u B payload, against the copying "
			 "floor", mtus[i]);
		bench_record("tx", name, ours, "ns/pkt", "memcpy of the payload + crc32 over it",
			     copy, "lower");
		setup_release(&s);
	}
	return 0;
}
