/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf: perftest-style measurement over SDR connections (ib_write_bw / ib_write_lat).
 * A server and a client attach to two dataplanes (or two connections of one) with libsdr;
 * the server posts receives and checks every byte of every message, the client sends and
 * reports bandwidth, message rate and completion-time percentiles.
 *
 *   sdr-perf -n memif-b --conn ba --server write_bw --size 1MiB --iters 200
 *   sdr-perf -n memif-a --conn ab write_bw --size 1MiB --iters 200
 *
 * Two clocks per message: the dataplane's (the first chunk on the wire to done, what the
 * model predicts) and the application's (the post call to the completion seen, what a
 * transport such as TCP is measured by); with --fresh the application's starts before the
 * connection is rebuilt, so it includes the handshake and the clear-to-send.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsdr.h"
#include "msg_pattern.h"
#include "perf_report.h"
#include "sdr_rel.h"
#include "units.h"

struct opts {
	const char *instance;
	const char *conn;
	const char *scheme;
	const char *chunk;
	int server;
	int lat;
	int json;
	int stream;
	int fresh;
	uint64_t size;
	uint32_t iters;
	uint32_t inflight;
	uint32_t warmup;
	uint64_t seed;
	double timeout_s;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-perf [options] write_bw|write_lat\n"
"Measure SDR message bandwidth and latency between two dataplanes, perftest style.\n"
"Run the same command with --server on the receiving side first.\n"
"\n"
"  -n, --name NAME       dataplane instance (default sdr0)\n"
"  -c, --conn NAME       connection to use (from the file or sdrctl conn add)\n"
"      --server          receive and check every message (default: send)\n"
"  -s, --size SIZE       message size (default 1MiB)\n"
"      --iters N         messages (default 100)\n"
"      --inflight N      messages in flight, write_bw (default 8; write_lat: 1)\n"
"      --warmup N        the first N completions are checked but left out of the\n"
"                        times and rates, whose clock starts with the first message\n"
"                        measured (default 0)\n"
"      --scheme NAME     set the connection's scheme first (sr, sr-nack, ec-xor:K,M,\n"
"                        ec-mds:K,M, auto); both sides must use the same\n"
"      --chunk SIZE      set the connection's chunk size first\n"
"      --stream          client: streamed sends, each message written and declared\n"
"                        ready four chunks at a time (sdr_send_stream_*)\n"
"      --fresh           write_lat, both sides: a fresh connection for every message\n"
"                        (rebuilt with --scheme/--chunk: a new tag and handshake);\n"
"                        the client's post-call clock includes the set-up\n"
"      --seed N          message contents seed (default 1; both sides the same)\n"
"      --timeout TIME    give up after this long (default 120s)\n"
"      --json            one JSON object\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 0 when every message completed (and, on the server, verified), 1 when\n"
"not, 2 on bad options.\n");
}

/*
 * A streamed send: the message is written a piece at a time, each piece declared ready as
 * soon as it is written, so the first chunks are on the wire while the rest is produced.
 */
static int
send_streamed(struct sdr_qp *qp, uint8_t *b, const struct opts *o, uint32_t msg)
{
	struct sdr_send_stream st;
	uint64_t piece, off;
	int rc;

	rc = sdr_send_stream_start(qp, b, o->size, msg, msg, &st);
	if (rc != SDR_SUCCESS)
		return rc;
	piece = (uint64_t)st.chunk * 4;
	for (off = 0; off < o->size; off += piece) {
		uint64_t len = o->size - off < piece ? o->size - off : piece;

		sdr_pattern_fill(b, off, len, o->seed, msg);
		while ((rc = sdr_send_stream_continue(&st, off, len)) == SDR_RETRY)
			;
		if (rc != SDR_SUCCESS)
			return rc;
	}
	while ((rc = sdr_send_stream_end(&st)) == SDR_RETRY)
		;
	return rc;
}

/* The low @p bits of the immediate that a message carried (short ones carry fewer). */
static uint32_t
imm_mask(uint32_t bits)
{
	return bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
}

/* Change the connection before using it (open here, and idle). */
static int
reconfigure(struct sdr_context *ctx, const struct opts *o)
{
	char set[256];

	if (o->scheme == NULL && o->chunk == NULL)
		return SDR_SUCCESS;
	snprintf(set, sizeof(set), "%s%s%s%s", o->scheme ? "scheme " : "", o->scheme ? o->scheme : "",
		 o->chunk ? " chunk " : "", o->chunk ? o->chunk : "");
	return sdr_conn_set(ctx, o->conn, set);
}

static int
run(const struct opts *o)
{
	struct sdr_context *ctx;
	struct sdr_qp *qp;
	struct sdr_mr *mr;
	struct sdr_recv **h;
	uint8_t *buf;
	double *lat, *done_at, *app, *post_at, t0, deadline;
	uint32_t posted = 0, completed = 0, verified = 0, failed = 0, retx = 0, dec = 0;
	uint32_t inflight = o->lat ? 1 : o->inflight, idle = 0;
	int reported = 0;
	uint32_t *slot_of, *free_slot, nfree;
	/* a slot per message in flight, 64 bytes apart: 8 zero bytes after each message that
	 * a receive must leave as they are (a write past its end is caught) */
	size_t stride = (size_t)o->size + 64;
	uint8_t *seen;
	char err[256];
	int rc;

	if (sdr_context_create(o->instance, &ctx, err, sizeof(err)) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-perf: %s\n", err);
		return 1;
	}
	if (sdr_qp_open(ctx, o->conn, &qp) != SDR_SUCCESS || reconfigure(ctx, o) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-perf: %s\n", sdr_last_error(ctx));
		sdr_context_destroy(ctx);
		return 1;
	}
	if (sdr_mr_reg(ctx, stride * inflight, (void **)&buf, &mr) != SDR_SUCCESS) {
		fprintf(stderr, "sdr-perf: %s\n", sdr_last_error(ctx));
		sdr_context_destroy(ctx);
		return 1;
	}
	lat = calloc(o->iters, sizeof(double));
	done_at = calloc(o->iters, sizeof(double));
	app = calloc(o->iters, sizeof(double));
	post_at = calloc(o->iters, sizeof(double));
	h = calloc(inflight, sizeof(*h));
	/* Messages complete out of order under loss: a buffer slot is reused only when the
	 * message that owned it has completed, never by position. */
	slot_of = calloc(o->iters, sizeof(*slot_of));
	seen = calloc(o->iters, 1);	/* completed: a second completion is an error */
	free_slot = calloc(inflight, sizeof(*free_slot));
	for (nfree = 0; nfree < inflight; nfree++)
		free_slot[nfree] = inflight - 1 - nfree;
	t0 = perf_now_s();
	deadline = t0 + o->timeout_s;
	while (completed < o->iters && perf_now_s() < deadline) {
		struct sdr_completion c;

		/* keep the window full */
		while (posted < o->iters && nfree > 0) {
			uint32_t w = free_slot[nfree - 1];
			uint8_t *b = buf + (size_t)w * stride;

			if (o->server) {
				/* a fresh connection for each message: rebuilt before its receive
				 * is posted, so the receive is of the new connection */
				if (o->fresh && reconfigure(ctx, o) != SDR_SUCCESS) {
					fprintf(stderr, "sdr-perf: --fresh: %s\n", sdr_last_error(ctx));
					reported = 1;
					goto out;
				}
				memset(b + o->size, 0, 8);
				rc = sdr_recv_post(qp, b, o->size, posted, &h[w]);
			} else {
				/* the application's clock: the message is ready (a streamed one is
				 * written as it goes), the post begins */
				if (!o->stream)
					sdr_pattern_fill(b, 0, o->size, o->seed, posted);
				post_at[posted] = perf_now_s();
				if (o->fresh && reconfigure(ctx, o) != SDR_SUCCESS) {
					fprintf(stderr, "sdr-perf: --fresh: %s\n", sdr_last_error(ctx));
					reported = 1;
					goto out;
				}
				if (o->stream) {
					rc = send_streamed(qp, b, o, posted);
				} else {
					rc = sdr_send_post(qp, b, o->size, (uint32_t)posted, posted);
				}
			}
			if (rc == SDR_RETRY)
				break;
			if (rc != SDR_SUCCESS) {
				fprintf(stderr, "sdr-perf: %s\n", sdr_last_error(ctx));
				reported = 1;
				goto out;
			}
			slot_of[posted] = w;
			nfree--;
			posted++;
		}
		rc = o->server ? sdr_recv_poll(qp, &c) : sdr_send_poll(qp, &c);
		if (rc == SDR_ERROR) {
			fprintf(stderr, "sdr-perf: %s\n", sdr_last_error(ctx));
			reported = 1;
			goto out;
		}
		if (rc != SDR_SUCCESS) {
			/* idle backoff: completion times are the dataplane's timestamps, so a
			 * short sleep costs no accuracy and leaves the cores to the dataplanes */
			if (++idle > 256)
				usleep(idle > 16384 ? 200 : 20);
			continue;
		}
		idle = 0;
		if (c.cookie >= posted || seen[c.cookie]) {
			fprintf(stderr, "sdr-perf: completion for %s message %" PRIu64 "\n",
				c.cookie >= posted ? "unknown" : "an already completed", c.cookie);
			reported = 1;
			goto out;
		}
		seen[c.cookie] = 1;
		free_slot[nfree++] = slot_of[c.cookie];
		lat[completed] = c.time_s;
		done_at[completed] = perf_now_s() - t0;
		app[completed] = done_at[completed] + t0 - post_at[c.cookie];
		completed++;
		retx += c.retransmitted;
		dec += c.decoded;
		if (c.status != 0) {
			/* which one and why, for the operator (the first 10: the summary counts
			 * them all) */
			if (failed < 10)
				fprintf(stderr, "sdr-perf: message %" PRIu64 " failed: status %d (%s)"
					"\n", c.cookie, c.status, c.status == 1 ? "timed out" :
					c.status == 2 ? "the peer gave it up" : c.status == 3 ?
					"cancelled" : "refused");
			failed++;
		} else if (o->server) {
			uint32_t w = slot_of[c.cookie], imm = 0;
			/* (SDR_RETRY: every packet with a fragment was rebuilt by decoding) */
			int irc = sdr_recv_imm_get(c.recv, &imm);

			if (sdr_pattern_check(buf + (size_t)w * stride, o->size, o->seed, c.cookie) &&
			    !memcmp(buf + (size_t)w * stride + o->size, (const uint8_t[8]){ 0 }, 8) &&
			    (irc == SDR_RETRY ||
			     (irc == SDR_SUCCESS && imm == ((uint32_t)c.cookie & imm_mask(c.imm_bits)))))
				verified++;
			else
				failed++;
		}
		/* the request queue may be full for a moment: a retry, not an error */
		while (o->server && sdr_recv_complete(c.recv) == SDR_RETRY)
			;
	}
out:
	{
		struct perf_result res = {
			.lat = o->lat, .server = o->server, .size = o->size, .iters = o->iters,
			.completed = completed, .verified = verified, .failed = failed,
			.window = inflight, .retransmitted = retx, .decoded = dec, .lat_s = lat,
			.done_s = done_at, .elapsed_s = perf_now_s() - t0,
			.app_s = o->server ? NULL : app, .fresh = o->fresh, .warmup = o->warmup,
		};

		perf_report_print(stdout, &res, o->json);
	}
	rc = completed == o->iters && failed == 0 && (!o->server || verified == completed) ? 0 : 1;
	if (completed < o->iters && !reported)	/* one line says why, not two */
		fprintf(stderr, "sdr-perf: only %u of %u messages completed\n", completed, o->iters);
	else if (failed != 0 && !reported)
		fprintf(stderr, "sdr-perf: %u of %u messages %s\n", failed, completed,
			o->server ? "failed or were not the bytes sent" : "failed");
	sdr_mr_dereg(mr);
	sdr_context_destroy(ctx);
	free(lat);
	free(done_at);
	free(app);
	free(post_at);
	free(h);
	free(slot_of);
	free(free_slot);
	free(seen);
	return rc;
}

int
main(int argc, char **argv)
{
	enum { O_SERVER = 256, O_ITERS, O_INFLIGHT, O_SCHEME, O_CHUNK, O_SEED, O_TIMEOUT, O_JSON,
	       O_STREAM, O_FRESH, O_WARMUP };
	static const struct option lopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "conn", required_argument, NULL, 'c' },
		{ "server", no_argument, NULL, O_SERVER },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, O_ITERS },
		{ "inflight", required_argument, NULL, O_INFLIGHT },
		{ "scheme", required_argument, NULL, O_SCHEME },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "stream", no_argument, NULL, O_STREAM },
		{ "fresh", no_argument, NULL, O_FRESH },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .instance = "sdr0", .size = 1 << 20, .iters = 100, .inflight = 8,
			  .seed = 1, .timeout_s = 120 };
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "n:c:s:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.instance = optarg; break;
		case 'c': o.conn = optarg; break;
		case O_SERVER: o.server = 1; break;
		case 's':
			if (units_parse_size(optarg, &o.size) != 0 || o.size > (1ull << 32)) {
				fprintf(stderr, "sdr-perf: bad --size '%s'\n", optarg);
				return 2;
			}
			break;
		case O_ITERS:
		case O_INFLIGHT:
			if (units_parse_u64(optarg, 10000000, &v) != 0 || v == 0) {
				fprintf(stderr, "sdr-perf: bad --%s '%s'\n", c == O_ITERS ? "iters" :
					"inflight", optarg);
				return 2;
			}
			*(c == O_ITERS ? &o.iters : &o.inflight) = (uint32_t)v;
			break;
		case O_SCHEME: {
			struct sdr_scheme sc;

			/* checked here (exit 2): the text goes into a command to the dataplane */
			if (strcmp(optarg, "auto") != 0 && sdr_scheme_parse(optarg, &sc) != 0) {
				fprintf(stderr, "sdr-perf: bad --scheme '%s'\n", optarg);
				return 2;
			}
			o.scheme = optarg;
			break;
		}
		case O_CHUNK:
			if (units_parse_size(optarg, &v) != 0 || strpbrk(optarg, " \t") != NULL ||
			    v < 256 || v > (64ull << 20)) {
				fprintf(stderr, "sdr-perf: bad --chunk '%s'\n", optarg);
				return 2;
			}
			o.chunk = optarg;
			break;
		case O_SEED:
			if (units_parse_u64(optarg, UINT64_MAX, &o.seed) != 0) {
				fprintf(stderr, "sdr-perf: bad --seed '%s'\n", optarg);
				return 2;
			}
			break;
		case O_TIMEOUT:
			if (units_parse_time(optarg, &o.timeout_s) != 0 || o.timeout_s <= 0) {
				fprintf(stderr, "sdr-perf: bad --timeout '%s'\n", optarg);
				return 2;
			}
			break;
		case O_JSON: o.json = 1; break;
		case O_STREAM: o.stream = 1; break;
		case O_FRESH: o.fresh = 1; break;
		case O_WARMUP:
			if (units_parse_u64(optarg, 10000000, &v) != 0) {
				fprintf(stderr, "sdr-perf: bad --warmup '%s'\n", optarg);
				return 2;
			}
			o.warmup = (uint32_t)v;
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sdr-perf --help'.\n");
			return 2;
		}
	}
	if (optind + 1 != argc || (strcmp(argv[optind], "write_bw") != 0 &&
				   strcmp(argv[optind], "write_lat") != 0)) {
		fprintf(stderr, "sdr-perf: expected one test: write_bw or write_lat\n");
		return 2;
	}
	if (o.conn == NULL) {
		fprintf(stderr, "sdr-perf: missing --conn NAME\n");
		return 2;
	}
	o.lat = strcmp(argv[optind], "write_lat") == 0;
	if (o.warmup >= o.iters) {
		fprintf(stderr, "sdr-perf: --warmup %u leaves none of the %u --iters to measure\n",
			o.warmup, o.iters);
		return 2;
	}
	if (o.fresh && (!o.lat || (o.scheme == NULL && o.chunk == NULL))) {
		fprintf(stderr, "sdr-perf: --fresh is for write_lat, on both sides, with --scheme "
			"or --chunk (what the connection is rebuilt with)\n");
		return 2;
	}
	return run(&o);
}
