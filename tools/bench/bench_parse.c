/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parse + ICRC cost per packet, against raw ISA-L crc32_gzip_refl over the same bytes in
 * the same run. Frames are SDR data packets (UC RDMA WRITE Only with Immediate, IPv4).
 * The dataplane parses the frames it owns with roce_parse_rw() (the ICRC in one pass over
 * the frame); roce_parse() of a read-only frame takes two (masked headers, then the rest).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "bench_util.h"
#include "icrc.h"
#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"

#define NFRAMES 64
#define ROUNDS 7

static uint8_t frames[NFRAMES][4096 + 128];
static int lens[NFRAMES];

static void
build_frames(uint32_t payload_len)
{
	static uint8_t payload[4096];
	struct roce_path path = { .ip_version = 4, .src_ip = { 10, 0, 0, 1 },
				  .dst_ip = { 10, 0, 0, 2 } };

	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	for (int i = 0; i < NFRAMES; i++) {
		struct roce_pkt pkt = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM, .dqpn = 0x100,
					.psn = (uint32_t)i, .va = (uint64_t)i * payload_len,
					.dma_len = payload_len, .imm = (uint32_t)i << 4 };

		lens[i] = roce_build(frames[i], sizeof(frames[i]), &path, &pkt, payload,
				     payload_len);
		if (lens[i] < 0)
			abort();
	}
}

/* What is timed: 0 roce_parse(), 1 roce_parse_rw(), 2 the ICRC alone, in place. */
static double
time_parse(unsigned int flags, int how, long iters)
{
	double best = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t acc = 0;
		double t0 = bench_now();

		for (long it = 0; it < iters; it++) {
			for (int i = 0; i < NFRAMES; i++) {
				struct roce_view v;

				if (how == 2) {
					/* IPv4 at 14, 20 bytes; ICRC over BTH .. pad (not itself) */
					acc += icrc_compute_inplace(frames[i] + 14, 4, 20,
								    (size_t)lens[i] - 14 - 20 - 8 - 4);
					continue;
				}
				acc += (how ? roce_parse_rw(frames[i], (uint32_t)lens[i], flags, &v) :
					      roce_parse(frames[i], (uint32_t)lens[i], flags, &v)) + v.psn;
			}
		}
		double t = (bench_now() - t0) / ((double)iters * NFRAMES);
		bench_sink(acc);
		if (t < best)
			best = t;
	}
	return best * 1e9;
}

static double
time_crc(long iters)
{
	double best = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t acc = 0;
		double t0 = bench_now();

		for (long it = 0; it < iters; it++)
			for (int i = 0; i < NFRAMES; i++)
				acc += crc32_gzip_refl(0, frames[i], (uint64_t)lens[i]);
		double t = (bench_now() - t0) / ((double)iters * NFRAMES);
		bench_sink(acc);
		if (t < best)
			best = t;
	}
	return best * 1e9;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 64, 4096 };
	double scale = argc > 1 ? atof(argv[1]) : 1.0;

	for (unsigned int s = 0; s < 2; s++) {
		long iters = (long)((sizes[s] > 1024 ? 3000 : 30000) * (scale > 0 ? scale : 1.0));
		char name[96];
		double crc, full, ro, hdr, icrc;

		build_frames(sizes[s]);
		crc = time_crc(iters);
		full = time_parse(ROCE_PARSE_VERIFY_ICRC, 1, iters);
		ro = time_parse(ROCE_PARSE_VERIFY_ICRC, 0, iters);
		hdr = time_parse(0, 0, iters);
		icrc = time_parse(0, 2, iters);
		snprintf(name, sizeof(name), "parse + ICRC verify, %u B payload", sizes[s]);
		bench_record("wire", name, full, "ns/pkt", "crc32_gzip_refl over the frame", crc,
			     "lower");
		snprintf(name, sizeof(name), "ICRC verify alone (budget 1.1), %u B payload",
			 sizes[s]);
		bench_record("wire", name, icrc, "ns/pkt", "crc32_gzip_refl over the frame", crc,
			     "lower");
		snprintf(name, sizeof(name), "parse + ICRC verify, read-only frame (two CRC calls), "
			 "%u B payload", sizes[s]);
		bench_record("wire", name, ro, "ns/pkt", "crc32_gzip_refl over the frame", crc,
			     "lower");
		snprintf(name, sizeof(name), "parse only (no ICRC), %u B payload", sizes[s]);
		bench_record("wire", name, hdr, "ns/pkt", "crc32_gzip_refl over the frame", crc,
			     "lower");
		snprintf(name, sizeof(name), "parse + ICRC rate, %u B payload", sizes[s]);
		bench_record_kind("wire", name, 1e3 / full, "Mpps/core",
				  "crc32_gzip_refl over the frame (1 / its ns)", 1e3 / crc, "higher",
				  "derived");
	}
	return 0;
}
