/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi-allreduce-perf: the baseline of sdr-coll-perf, MPI_Allreduce (float32 sum) of the MPI
 * library as installed (Debian's Open MPI: its own choice of algorithm, over TCP where the
 * launcher says so), measured the way sdr-coll-perf measures libsdr-coll: a size sweep, per
 * size the ranks lined up by an MPI_Barrier (not timed) before each operation, rank 0's
 * time of the operation, its mean and nearest-rank percentiles, and #wrong, the elements
 * that differ from the result computed here (the inputs are the small integers
 * sdr-coll-perf uses, so every sum is exact). tools/bench/mpi_coll.py runs it with each
 * rank in its own network namespace, the ranks joined by the dataplane's emulated links.
 *
 * With --behind BYTES each timed operation is issued right behind an MPI_Iallreduce of
 * BYTES (as sdr-coll-perf --behind issues it behind a large libsdr-coll operation): its
 * time is from its own call to its return, the large one is waited for after it, and both
 * results are checked. MPI has no priorities: this is what an application gets from it.
 *
 * usage: mpirun ... mpi-allreduce-perf [-b SIZE] [-e SIZE] [-f N] [-n N] [-w N] [-t TIME]
 *                                      [--behind BYTES] [--json]
 */
#include <getopt.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_report.h"
#include "units.h"

/* sdr-coll-perf's input: rank @p r, element @p i */
static int
value(int r, size_t i, int seed)
{
	return (int)(((size_t)(r + 1) * 7 + i * 13 + (size_t)seed * 5) % 9) - 4;
}

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: mpirun [mpirun options] mpi-allreduce-perf [options]\n"
"MPI_Allreduce (float32 sum) measured like sdr-coll-perf: rank 0 prints the table.\n"
"\n"
"  -b, --minbytes SIZE    smallest size (default 8)\n"
"  -e, --maxbytes SIZE    largest size (default 32M)\n"
"  -f, --stepfactor N     multiply the size by N each row (default 2)\n"
"  -n, --iters N          timed operations per size (default 20)\n"
"  -w, --warmup_iters N   untimed operations first (default 2)\n"
"  -t, --budget TIME      stop a size's timed operations once they took this long\n"
"                         (at least 3; default: no limit)\n"
"      --behind BYTES     issue each operation right behind an MPI_Iallreduce of BYTES\n"
"                         (waited for after it, not timed)\n"
"      --json             one JSON object instead of the table\n"
"  -h, --help             this text\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "budget", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "behind", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t min_b = 8, max_b = 32u << 20, behind = 0, v;
	unsigned int factor = 2, iters = 20, warmup = 2;
	int json = 0, ch, rank, n, first = 1, bad = 0;
	double budget = 0;
	int64_t wrong_all = 0;
	double *times, *scratch;
	float *big_in, *big_out;
	size_t big_count;
	MPI_Request big_req = MPI_REQUEST_NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	while ((ch = getopt_long(argc, argv, "b:e:f:n:w:t:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'b':
		case 'e':
			if (units_parse_size(optarg, ch == 'b' ? &min_b : &max_b) != 0)
				bad = 1;
			break;
		case 'f':
		case 'n':
		case 'w':
			if (units_parse_u64(optarg, 1000000, &v) != 0 || (ch != 'w' && v == 0))
				bad = 1;
			else if (ch == 'f')
				factor = (unsigned int)v;
			else if (ch == 'n')
				iters = (unsigned int)v;
			else
				warmup = (unsigned int)v;
			break;
		case 't':
			if (units_parse_time(optarg, &budget) != 0 || !(budget > 0))
				bad = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'B':
			if (units_parse_size(optarg, &behind) != 0 || behind < sizeof(float) ||
			    behind / sizeof(float) > INT32_MAX)
				bad = 1;
			break;
		case 'h':
			if (rank == 0)
				usage(stdout);
			MPI_Finalize();
			return 0;
		default:
			bad = 1;
		}
	}
	if (bad || optind < argc || min_b < sizeof(float) || max_b < min_b || factor < 2) {
		if (rank == 0) {
			fprintf(stderr, "mpi-allreduce-perf: bad options (sizes 4 <= -b <= -e, -f >= 2)\n");
			usage(stderr);
		}
		MPI_Finalize();
		return 2;
	}
	times = calloc(iters, sizeof(double));
	scratch = calloc(iters, sizeof(double));
	big_count = behind / sizeof(float);
	big_in = behind ? malloc(big_count * sizeof(float)) : NULL;
	big_out = behind ? malloc(big_count * sizeof(float)) : NULL;
	if (times == NULL || scratch == NULL || (behind && (big_in == NULL || big_out == NULL)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t i = 0; i < big_count; i++)
		big_in[i] = (float)value(rank, i, 0);
	if (rank == 0 && !json) {
		printf("# mpi-allreduce-perf: MPI_Allreduce, %d ranks, float, sum, %u iterations "
		       "(+%u warm-up), ranks lined up by MPI_Barrier before each", n, iters, warmup);
		if (behind)
			printf(", each right behind an MPI_Iallreduce of %" PRIu64 " bytes", behind);
		printf("\n");
		printf("#%11s %12s %9s %6s %10s %8s %8s %7s %10s %10s %10s\n", "size", "count", "type",
		       "redop", "time", "algbw", "busbw", "#wrong", "p50", "p99", "p99.9");
		printf("#%11s %12s %9s %6s %10s %8s %8s %7s %10s %10s %10s\n", "(B)", "(elements)", "",
		       "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)");
	} else if (rank == 0) {
		printf("{\"coll\":\"allreduce\",\"impl\":\"mpi\",\"ranks\":%d,\"type\":\"float32\","
		       "\"redop\":\"sum\",\"iters\":%u,\"warmup\":%u,\"behind\":%" PRIu64
		       ",\"results\":[", n, iters, warmup, behind);
	}
	for (uint64_t size = min_b - min_b % sizeof(float); size <= max_b; size *= factor) {
		size_t count = size / sizeof(float);
		float *in = malloc(size), *out = malloc(size);
		int64_t wrong = 0, total = 0;
		unsigned int done = 0;
		double t_timed = 0;
		struct perf_summary sm;

		if (in == NULL || out == NULL)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (unsigned int it = 0; it < warmup + iters; it++) {
			int seed = (int)it;
			double t0;

			for (size_t i = 0; i < count; i++)
				in[i] = (float)value(rank, i, seed);
			MPI_Barrier(MPI_COMM_WORLD);
			if (behind)
				MPI_Iallreduce(big_in, big_out, (int)big_count, MPI_FLOAT, MPI_SUM,
					       MPI_COMM_WORLD, &big_req);
			t0 = MPI_Wtime();
			MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			if (it >= warmup) {
				times[done] = MPI_Wtime() - t0;
				t_timed += times[done++];
			}
			if (behind) {
				MPI_Wait(&big_req, MPI_STATUS_IGNORE);
				for (size_t i = 0; i < big_count; i++) {
					int want = 0;

					for (int r = 0; r < n; r++)
						want += value(r, i, 0);
					wrong += big_out[i] != (float)want;
				}
			}
			for (size_t i = 0; i < count; i++) {
				int want = 0;

				for (int r = 0; r < n; r++)
					want += value(r, i, seed);
				wrong += out[i] != (float)want;
			}
			if (budget > 0 && done >= 3) {	/* rank 0's clock decides for all */
				int stop = rank == 0 && t_timed >= budget;

				MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
				if (stop)
					break;
			}
		}
		/* every rank's wrong elements (the values are checked on every rank) */
		MPI_Reduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
		perf_summarize(times, done, scratch, &sm);
		if (rank == 0) {
			double algbw = (double)size / sm.mean * 1e-9;

			wrong_all += total;
			if (json)
				printf("%s{\"size\":%" PRIu64 ",\"count\":%zu,\"time_us\":%.2f,"
				       "\"algbw_gbs\":%.4f,\"busbw_gbs\":%.4f,\"wrong\":%" PRId64
				       ",\"p50_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"iters\":%u}",
				       first ? "" : ",", size, count, sm.mean * 1e6, algbw,
				       algbw * 2 * (n - 1) / n, total, sm.p50 * 1e6, sm.p99 * 1e6,
				       sm.p999 * 1e6, done);
			else
				printf(" %11" PRIu64 " %12zu %9s %6s %10.1f %8.3f %8.3f %7" PRId64
				       " %10.1f %10.1f %10.1f\n", size, count, "float", "sum",
				       sm.mean * 1e6, algbw, algbw * 2 * (n - 1) / n, total,
				       sm.p50 * 1e6, sm.p99 * 1e6, sm.p999 * 1e6);
			fflush(stdout);
		}
		first = 0;
		free(in);
		free(out);
		if (size > UINT64_MAX / factor)
			break;
	}
	if (rank == 0) {
		if (json)
			printf("],\"wrong\":%" PRId64 ",\"ok\":%s}\n", wrong_all,
			       wrong_all == 0 ? "true" : "false");
		else
			printf("# out of bounds values: %" PRId64 " %s\n", wrong_all,
			       wrong_all == 0 ? "OK" : "FAILED");
	}
	MPI_Bcast(&wrong_all, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	free(times);
	free(scratch);
	free(big_in);
	free(big_out);
	MPI_Finalize();
	return wrong_all == 0 ? 0 : 1;
}
