/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive path cost per packet: parse + ICRC + SDR checks + placement + bitmaps (and the
 * repost of the receive when every packet is its own message), against memcpy of the
 * payload + CRC over the frame bytes, measured in the same run. Frames are prebuilt by
 * the packetizer; the loop posts a receive, delivers its packets (parsed and placed as the
 * dataplane does on the lcore that received them: time_rx()), completes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <inttypes.h>

#include <isa-l/crc.h>

#include "bench_util.h"
#include "crc_copy.h"
#include "roce_parse.h"
#include "sdr_rx.h"
#include "sdr_tx.h"

#define ROUNDS 5
#define QPN 0x300

struct scenario {
	const char *name;
	uint32_t mtu;
	uint32_t chunk;
	uint64_t msg_len;
};

struct prepared {
	struct sdr_conn_attr attr;
	uint8_t **frames[2];	/* frames of the two messages that alternate over slots 0/1 */
	uint16_t *lens[2];
	uint32_t npkts;
	uint8_t *src;
	uint8_t *dst;
};

static void
prepare(struct prepared *p, const struct scenario *s)
{
	struct roce_path path = { .ip_version = 4, .src_ip = { 10, 0, 0, 1 },
				  .dst_ip = { 10, 0, 0, 2 } };
	struct sdr_tx *tx;

	sdr_conn_attr_default(&p->attr);
	p->attr.mtu = s->mtu;
	p->attr.chunk_size = s->chunk;
	p->attr.max_msg_size = s->msg_len;
	/* two slots, one generation: the frames of two messages can be replayed forever */
	p->attr.split = (struct sdr_imm_split){ 1, 27, 4 };
	p->attr.generations = 1;
	p->attr.channels = 1;
	p->attr.max_inflight = 1;
	p->attr.local_qpn = p->attr.remote_qpn = QPN;
	/* a fixed R_Key: the check per packet is the same compare as with per-receive keys
	 * (those cost one AES block per receive posted, in the endpoint, not here) */
	p->attr.local_rkey = p->attr.remote_rkey = 0x5d0a;
	tx = sdr_tx_create(&p->attr, &path);
	p->src = malloc(s->msg_len);
	p->dst = malloc(s->msg_len);
	for (uint64_t i = 0; i < s->msg_len; i++)
		p->src[i] = (uint8_t)(i * 13);
	for (int m = 0; m < 2; m++) {
		struct sdr_tx_msg msg;
		struct sdr_tx_job job;

		sdr_tx_msg_start(tx, p->src, s->msg_len, 0x12345678, &msg);
		p->npkts = msg.npkts;
		p->frames[m] = malloc(msg.npkts * sizeof(uint8_t *));
		p->lens[m] = malloc(msg.npkts * sizeof(uint16_t));
		for (uint32_t i = 0; i < msg.npkts; i++)
			p->frames[m][i] = malloc(sdr_tx_max_frame(tx));
		sdr_tx_job_data(&job, &msg, 0, msg.npkts);
		sdr_tx_build(tx, &job, p->frames[m], sdr_tx_max_frame(tx), p->lens[m], msg.npkts);
		sdr_tx_msg_retire(tx, &msg);
	}
	sdr_tx_destroy(tx);
}

static void
release(struct prepared *p)
{
	for (int m = 0; m < 2; m++) {
		for (uint32_t i = 0; i < p->npkts; i++)
			free(p->frames[m][i]);
		free(p->frames[m]);
		free(p->lens[m]);
	}
	free(p->src);
	free(p->dst);
}

/*
 * The receive path of a frame in one buffer (@p first: the ICRC checked as the parser reads
 * the frame, then the copy, as for a frame in segments or on a receive worker; else as the
 * dataplane places a frame it delivers on the lcore that parsed it: the checks alone
 * (sdr_rx_peek()), the payload copied with its ICRC taken in the same pass
 * (roce_icrc_copy()), then claimed; sdr_ep_input_unchecked() is that plus the endpoint's
 * bookkeeping. A frame under ROCE_ICRC_COPY_MIN_FRAME, or a CPU without the one-pass kernel,
 * takes the first way there too).
 */
static double
time_rx(struct prepared *p, long msgs, int first)
{
	double best = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
		struct sdr_rx *rx = sdr_rx_create(&p->attr);
		uint64_t acc = 0;
		double t0 = bench_now();

		for (long k = 0; k < msgs; k++) {
			uint8_t **fr = p->frames[k & 1];
			uint16_t *ln = p->lens[k & 1];
			uint32_t slot;

			sdr_rx_post(rx, p->dst, p->attr.max_msg_size, NULL, NULL, &slot);
			for (uint32_t i = 0; i < p->npkts; i++) {
				struct roce_view v;
				struct sdr_rx_event ev;

				struct sdr_rx_claim cl;

				int check_first = first || !roce_icrc_one_pass() ||
						  ln[i] < ROCE_ICRC_COPY_MIN_FRAME;

				if (roce_parse_rw(fr[i], ln[i],
						  check_first ? ROCE_PARSE_VERIFY_ICRC : 0,
						  &v) != ROCE_V_OK)
					abort();
				/* one channel, one generation: the QPN decodes to generation 0 */
				if (check_first) {
					acc += sdr_rx_place(rx, &v, 0, &ev) + ev.flags;
					continue;
				}
				if (sdr_rx_peek(rx, &v, 0, &cl) != SDR_RX_PLACED ||
				    !roce_icrc_copy(&v, cl.dst) ||
				    sdr_rx_claim(rx, &v, 0, &cl) != SDR_RX_PLACED)
					abort();
				sdr_rx_commit(rx, &cl, &ev);
				acc += ev.flags;
			}
			sdr_rx_complete(rx, slot);
		}
		double t = (bench_now() - t0) / ((double)msgs * p->npkts);
		if (sdr_rx_counters(rx)[SDR_RX_PLACED] != (uint64_t)msgs * p->npkts)
			abort();
		bench_sink(acc);
		sdr_rx_destroy(rx);
		if (t < best)
			best = t;
	}
	return best * 1e9;
}

/*
 * The bytes-touching floor: CRC-32 over each frame and memcpy of its payload into the
 * buffer. With @p fused the same bytes in one pass where the payload is (crc_copy(): the
 * CRC of the bytes as they are copied), the frame's CRC then in three calls (the headers,
 * the payload as it is copied, the rest): the floor of a receive path that checks as it
 * copies, as time_rx() does.
 */
static double
time_floor(struct prepared *p, long msgs, int fused)
{
	double best = 1e30;
	uint32_t hdr = p->lens[0][0] - p->attr.mtu - 4;	/* header bytes before the payload */

	if (p->npkts == 1)
		hdr = p->lens[0][0] - (uint32_t)p->attr.max_msg_size -
		      ((4 - p->attr.max_msg_size % 4) % 4) - 4;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t acc = 0;
		double t0 = bench_now();

		for (long k = 0; k < msgs; k++) {
			uint8_t **fr = p->frames[k & 1];
			uint16_t *ln = p->lens[k & 1];

			for (uint32_t i = 0; i < p->npkts; i++) {
				uint32_t plen = ln[i] - hdr - 4, c;
				uint8_t *dst = p->dst + (uint64_t)i * p->attr.mtu;

				if (plen > p->attr.mtu)
					plen = p->attr.mtu;
				if (!fused) {
					acc += crc32_gzip_refl(0, fr[i], ln[i]);
					memcpy(dst, fr[i] + hdr, plen);
					continue;
				}
				c = crc_copy(crc32_gzip_refl(0, fr[i], hdr), dst, fr[i] + hdr, plen);
				acc += crc32_gzip_refl(c, fr[i] + hdr + plen, ln[i] - hdr - plen);
			}
		}
		double t = (bench_now() - t0) / ((double)msgs * p->npkts);
		bench_sink(acc + p->dst[0]);
		if (t < best)
			best = t;
	}
	return best * 1e9;
}

/*
 * The same path with messages at least as large as the last-level cache: the frames of the
 * two alternating messages and the destination buffer are three times that or more, so
 * each packet and each placement comes from and goes to memory (the other rows are hot).
 */
static void
bench_cold(double scale)
{
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	uint64_t len = 1u << 20;
	struct scenario sc = { NULL, 4096, 65536, 0 };
	struct prepared p;
	double ours, base;
	long msgs;
	char name[200];

	while (len < (uint64_t)(llc > (32l << 20) ? llc : (32l << 20)))
		len <<= 1;
	sc.msg_len = len;
	prepare(&p, &sc);
	msgs = (long)(8 * scale);
	if (msgs < 4)
		msgs = 4;
	base = time_floor(&p, msgs, 0);
	ours = time_rx(&p, msgs, 0);
	if (llc > 0)
		snprintf(name, sizeof(name), "receive path, 4 KiB payload, 16-packet chunks, %"
			 PRIu64 " MiB messages (frames and buffer %.0f x the last-level cache: "
			 "cold)", len >> 20, 3.0 * (double)len / (double)llc);
	else	/* (the size unknown here: the messages are of the size assumed) */
		snprintf(name, sizeof(name), "receive path, 4 KiB payload, 16-packet chunks, %"
			 PRIu64 " MiB messages (the last-level cache's size unknown: taken as "
			 "32 MiB)", len >> 20);
	bench_record("rx", name, ours, "ns/pkt", "memcpy payload + crc32 over the same cold frames",
		     base, "lower");
	release(&p);
}

int
main(int argc, char **argv)
{
	static const struct scenario sc[] = {
		{ "64 B writes (1 packet = 1 chunk = 1 message, repost included)", 256, 256, 64 },
		{ "4 KiB payload, 1-packet chunks", 4096, 4096, 1 << 20 },
		{ "4 KiB payload, 16-packet chunks", 4096, 65536, 1 << 20 },
		{ "1 KiB payload, 16-packet chunks", 1024, 16384, 1 << 20 },
	};
	double scale = argc > 1 ? atof(argv[1]) : 1.0;

	if (scale <= 0)
		scale = 1.0;
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		struct prepared p;
		long msgs;
		double ours, base;
		char name[160];

		prepare(&p, &sc[i]);
		msgs = (long)(2e6 * scale / p.npkts / (sc[i].mtu >= 4096 ? 8 : 1));
		if (msgs < 4)
			msgs = 4;
		base = time_floor(&p, msgs, 0);
		ours = time_rx(&p, msgs, 0);
		/* the scale-out budget: 1.2 x (memcpy + crc32 of the same bytes) per 4 KiB packet */
		snprintf(name, sizeof(name), "receive path%s, %s",
			 sc[i].mtu == 4096 ? " (budget 1.2)" : "", sc[i].name);
		bench_record("rx", name, ours, "ns/pkt", "memcpy payload + crc32 over the frame", base,
			     "lower");
		snprintf(name, sizeof(name), "receive rate, %s", sc[i].name);
		bench_record_kind("rx", name, 1e3 / ours, "Mpps/core",
				  "memcpy payload + crc32 over the frame (1 / its ns)", 1e3 / base,
				  "higher", "derived");
		/* (the library's path alone, in the cache: the fwd group's row counts the
		 * dataplane's whole receive path, device and mbufs included) */
		snprintf(name, sizeof(name), "DPA threads one core equals, library path in the "
			 "cache (no device, no mbufs), %s", sc[i].name);
		bench_record_kind("rx", name, 1e3 / ours, "threads",
				  "BlueField-3 DPA thread, about 1 Mpps", 1.0, "higher", "published");
		if (sc[i].mtu == 4096) {
			snprintf(name, sizeof(name), "receive path, ICRC checked before the copy (a "
				 "frame in segments, or on a receive worker), %s", sc[i].name);
			bench_record("rx", name, time_rx(&p, msgs, 1), "ns/pkt",
				     "memcpy payload + crc32 over the frame", base, "lower");
		}
		if (sc[i].mtu == 4096 && sc[i].chunk > sc[i].mtu) {
			snprintf(name, sizeof(name), "CRC-32 of the frame with the payload copied in "
				 "the same pass (crc_copy, %s), %s",
				 crc_copy_fused() ? "one pass on this CPU" :
						    "two passes: no vector carry-less multiply",
				 sc[i].name);
			bench_record("rx", name, time_floor(&p, msgs, 1), "ns/pkt",
				     "memcpy payload + crc32 over the frame", base, "lower");
		}
		release(&p);
	}
	bench_cold(scale);
	return 0;
}
