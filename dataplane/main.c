/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dataplane: the SDR reliability dataplane.
 *   sdr-dataplane <EAL args> -- -f pmd-configs/<file>.ini [options]
 * main.c parses arguments, loads the configuration, brings up ports and connections and
 * launches the poll loops; the work is in the other files of this directory.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pdump.h>
#include <rte_ring.h>

#include "conns.h"
#include "control.h"
#include "dp.h"
#include "eal_exit.h"
#include "holds.h"
#include "lcores.h"
#include "pipeline.h"
#include "ports.h"
#include "stats.h"
#include "telemetry.h"
#include "units.h"

static struct dp_ctx dp;	/* the one instance: every module is given it */

struct app_opts {
	const char *config;
	const char *name;
	const char *traffic;
	const char *scheme;
	const char *links[DP_MAX_LINKS];
	int nlinks;
	int exit_when_done;
	int json;
	int quiet;
	int busy;
	int check;
	uint32_t log_drops;
	double duration_s;
	double stats_period_s;
	int stats_period_set;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdr-dataplane [EAL options] -- -f FILE [options]\n"
"The SDR dataplane: RoCEv2 messages with software-defined reliability (selective\n"
"repeat, erasure coding with SR fallback) over DPDK ports.\n"
"\n"
"  -f, --config FILE      configuration file (INI); see pmd-configs/ and\n"
"                         docs/configuration.md\n"
"  -n, --name NAME        instance name (overrides [dataplane] name)\n"
"      --traffic SPEC     built-in message source and sink on the static\n"
"                         connections: size=SIZE,count=N,inflight=N,scheme=S,\n"
"                         role=send|recv|both|auto,seed=N,conn=NAME,\n"
"                         log=FILE,verify=yes|no,start=T\n"
"      --scheme NAME      use this scheme on every connection (sr, sr-nack,\n"
"                         ec-xor:K,M, ec-mds:K,M)\n"
"      --link NAME=WORDS  change [link NAME] of the file (every path of it), e.g.\n"
"                         --link 'wan=delay 12.5ms loss 1e-3' (repeatable)\n"
"      --exit-when-done   exit once the traffic run is complete; status 0 only\n"
"                         if every message completed and verified (with\n"
"                         verify=no: completed)\n"
"      --duration TIME    stop this long after it is up (ports, connections and\n"
"                         sdrctl's socket ready), e.g. 30s\n"
"      --json             print the summary as one JSON object\n"
"      --stats-period TIME  print a stats line this often (default from the\n"
"                         file, 0: off)\n"
"  -q, --quiet            no stats line and no banner\n"
"      --busy-poll        never sleep when idle (for benchmarks)\n"
"      --log-drops N      print the first N frames the ports drop, one line\n"
"                         each with the reason, on standard error (debugging)\n"
"      --check            check the configuration file and the options, and exit\n"
"                         (no EAL)\n"
"  -h, --help             this text\n"
"\n"
"EAL options come first, as in every DPDK application, e.g.\n"
"  sdr-dataplane -l 0-1 --no-huge -- -f pmd-configs/loopback.ini\n"
"The dataplane creates the virtual devices its file names; an extra --vdev\n"
"(a pcap port, say) is honoured and can be named as a device in the file.\n"
"\n"
"Exit status: 0 on success, 1 when a device or the run fails, 2 on bad options\n"
"or a bad configuration file.\n");
}

static void
on_signal(int sig)
{
	(void)sig;
	dp.quit = 1;
}

static int
parse_args(int argc, char **argv, struct app_opts *o)
{
	enum { O_TRAFFIC = 256, O_EXIT, O_DURATION, O_JSON, O_STATS, O_BUSY, O_SCHEME, O_CHECK,
	       O_LINK, O_LOG_DROPS };
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "traffic", required_argument, NULL, O_TRAFFIC },
		{ "scheme", required_argument, NULL, O_SCHEME },
		{ "exit-when-done", no_argument, NULL, O_EXIT },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "json", no_argument, NULL, O_JSON },
		{ "stats-period", required_argument, NULL, O_STATS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "busy-poll", no_argument, NULL, O_BUSY },
		{ "log-drops", required_argument, NULL, O_LOG_DROPS },
		{ "check", no_argument, NULL, O_CHECK },
		{ "link", required_argument, NULL, O_LINK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/* (what getopt names itself by: argv[0] may be EAL's "--") */
	argv[0] = (char *)(uintptr_t)"sdr-dataplane";
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:n:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'f': o->config = optarg; break;
		case 'n': o->name = optarg; break;
		case O_TRAFFIC: o->traffic = optarg; break;
		case O_SCHEME: o->scheme = optarg; break;
		case O_EXIT: o->exit_when_done = 1; break;
		case O_JSON: o->json = 1; break;
		case 'q': o->quiet = 1; break;
		case O_BUSY: o->busy = 1; break;
		case O_CHECK: o->check = 1; break;
		case O_LINK:
			if (o->nlinks == DP_MAX_LINKS) {
				fprintf(stderr, "sdr-dataplane: more than %d --link options\n",
					DP_MAX_LINKS);
				return 2;
			}
			o->links[o->nlinks++] = optarg;
			break;
		case O_DURATION:
			if (units_parse_time(optarg, &o->duration_s) != 0 || o->duration_s <= 0) {
				fprintf(stderr, "sdr-dataplane: bad --duration '%s' (a time such as 30s)\n",
					optarg);
				return 2;
			}
			break;
		case O_LOG_DROPS: {
			uint64_t n;

			if (units_parse_u64(optarg, 1000000, &n) != 0) {
				fprintf(stderr, "sdr-dataplane: bad --log-drops '%s' (an integer "
					"0..1000000)\n", optarg);
				return 2;
			}
			o->log_drops = (uint32_t)n;
			break;
		}
		case O_STATS:
			if (units_parse_time(optarg, &o->stats_period_s) != 0) {
				fprintf(stderr, "sdr-dataplane: bad --stats-period '%s' (a time such as "
					"1s, or 0)\n", optarg);
				return 2;
			}
			o->stats_period_set = 1;
			break;
		case 'h': usage(stdout); exit(0);
		default:
			fprintf(stderr, "Try 'sdr-dataplane -- --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sdr-dataplane: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o->config == NULL) {
		fprintf(stderr, "sdr-dataplane: missing -f FILE (the configuration; see "
			"pmd-configs/)\n");
		return 2;
	}
	return 0;
}

/* Apply --scheme and the traffic spec's scheme to every connection, and check them again. */
static int
apply_scheme(struct dp_cfg *cfg, const struct sdr_scheme *s)
{
	for (unsigned int i = 0; i < cfg->nconns; i++) {
		struct dp_conn_cfg *c = &cfg->conns[i];
		struct sdr_conn_geom g;
		char name[SDR_SCHEME_NAME_MAX];
		int rc;

		c->ep.rel.scheme = *s;
		c->scheme_auto = 0;
		/* a fixed scheme: no loss reports, no changes, no room kept for other codes */
		c->ep.auto_report = 0;
		c->ep.rel.scheme_may_change = 0;
		c->ep.attr.parity_cap_chunks = 0;
		c->ep.attr.max_chunk_shift = 0;
		c->ep.switch_max_m = 0;
		c->ep.attr.ec_k = sdr_scheme_is_ec(s) ? s->k : 0;
		c->ep.attr.ec_m = sdr_scheme_is_ec(s) ? s->m : 0;
		rc = sdr_conn_geometry(&c->ep.attr, &g);
		if (rc != 0) {
			fprintf(stderr, "sdr-dataplane: scheme %s on [conn %s]: %s\n",
				sdr_scheme_format(s, name, sizeof(name)), c->name, sdr_conn_strerror(rc));
			return 2;
		}
	}
	return 0;
}

/* --link NAME=WORDS: apply the emulator's words to a [link NAME] of the file. */
static int
apply_link(struct dp_cfg *cfg, const char *arg)
{
	char buf[512], name[DP_NAME_LEN], *words[64], *save = NULL;
	const char *eq = strchr(arg, '=');
	int n = 0, bad = -1, rc, li;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof(name) || strlen(eq + 1) >= sizeof(buf)) {
		fprintf(stderr, "sdr-dataplane: bad --link '%s' (expected NAME=WORDS, e.g. "
			"'wan=loss 1e-3')\n", arg);
		return 2;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	li = dp_config_link(cfg, name);
	if (li < 0) {
		fprintf(stderr, "sdr-dataplane: --link %s: no [link %s] in %s\n", name, name, cfg->file);
		return 2;
	}
	strcpy(buf, eq + 1);
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == 64) {
			fprintf(stderr, "sdr-dataplane: --link %s: more than 64 words\n", name);
			return 2;
		}
		words[n++] = w;
	}
	if (n == 0) {
		fprintf(stderr, "sdr-dataplane: --link %s: no words (e.g. '%s=loss 1e-3', or "
			"'%s=off')\n", name, name, name);
		return 2;
	}
	rc = link_emu_parse(&cfg->links[li].emu, n, (const char *const *)words, &bad);
	/* and on every path of it, over what its pathK words made of it */
	for (unsigned int k = 0; rc == 0 && k < cfg->links[li].npaths; k++)
		rc = link_emu_parse(&cfg->links[li].path[k], n, (const char *const *)words, &bad);
	if (rc != 0) {
		fprintf(stderr, "sdr-dataplane: --link %s: '%s': %s\n", name,
			bad >= 0 && bad < n ? words[bad] : eq + 1, link_emu_strerror(rc));
		return 2;
	}
	return 0;
}

/* The halves of a connection the traffic runs, from the role and the direction. */
static void
traffic_halves(const struct traffic_cfg *t, const struct dp_conn_cfg *c, int *send, int *recv)
{
	switch (t->role) {
	case TRAFFIC_ROLE_SEND: *send = 1; *recv = 0; return;
	case TRAFFIC_ROLE_RECV: *send = 0; *recv = 1; return;
	case TRAFFIC_ROLE_BOTH: *send = 1; *recv = 1; return;
	default:
		*send = (c->ep.attr.dir & SDR_DIR_SEND) != 0;
		*recv = (c->ep.attr.dir & SDR_DIR_RECV) != 0;
	}
}

static double
elapsed_s(void)
{
	return (double)(rte_get_tsc_cycles() - dp.start_tsc) / (double)dp.tsc_hz;
}

/*
 * After the run is done the dataplane keeps polling a little: what is still on the emulated
 * link (a final ACK, say) goes out, and late retransmissions from the peer get answered.
 */
static double
linger_s(void)
{
	double d = 0;

	for (unsigned int i = 0; i < dp.cfg.nlinks; i++)
		for (unsigned int k = 0; k < dp.cfg.links[i].npaths; k++) {
			const struct link_emu_config *e = &dp.cfg.links[i].path[k];
			double s = (double)(e->delay_ns + e->reorder_ns) * 1e-9;

			if (s > d)
				d = s;
		}
	d = 2 * d + 0.05;
	return d > 2 ? 2 : d;
}

/* When the dataplane was up (elapsed_s()): --duration counts from there, so a slow start
 * (mempools, traffic buffers, a loaded machine) does not eat into the run sdrctl can see. */
static double up_s;

/* Once per ~100 ms on the main lcore: stats line, end of run. */
static void
tick(const struct app_opts *o, double *next_stats)
{
	static double done_at = -1;
	double t = elapsed_s();

	dp_control_tick(&dp);
	if (dp.cfg.stats_period_s > 0 && !o->quiet && !o->json && t >= *next_stats) {
		dp_stats_line(&dp, t);
		*next_stats = t + dp.cfg.stats_period_s;
	}
	if (o->exit_when_done && dp_traffic_done(&dp)) {
		if (done_at < 0)
			done_at = t;
		if (t >= done_at + linger_s())
			dp.quit = 1;
	}
	if (o->duration_s > 0 && t >= up_s + o->duration_s)
		dp.quit = 1;
}

/*
 * net_tap asks the kernel for a real-time signal per received frame (for interrupt mode,
 * which the poll loops do not use). Under load thousands queue up and the polling thread
 * spends its time taking them. With the real-time signals ignored before EAL starts, the
 * PMD finds none free, says so once, and is simply polled.
 */
static void
ignore_tap_signals(const struct dp_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->nports; i++)
		if (strncmp(cfg->ports[i].device, "net_tap", 7) == 0) {
			for (int sig = SIGRTMIN + 1; sig <= SIGRTMAX; sig++)
				signal(sig, SIG_IGN);
			return;
		}
}

/*
 * An emulated link holds its bandwidth-delay product in mbufs. If that is most of the pool,
 * the packetizer and the control messages starve while the link is full: say so at start.
 * With engines each has its own copy of the link and its own pool, mbufs / engines.
 */
static void
warn_link_bdp(const struct dp_cfg *cfg)
{
	uint32_t pool = cfg->mbufs / (cfg->mode == DP_PIPE_ENGINES ? cfg->engines : 1);

	for (unsigned int i = 0; i < cfg->nlinks; i++) {
		double frames = 0;

		for (unsigned int k = 0; k < cfg->links[i].npaths; k++) {
			const struct link_emu_config *e = &cfg->links[i].path[k];

			frames += (double)e->rate_bps * (double)e->delay_ns * 1e-9 / (8.0 * 4200);
		}

		if (frames > pool / 2.0)
			fprintf(stderr, "sdr-dataplane: warning: [link %s] keeps about %.0f frames in "
				"flight (rate x delay); with %u mbufs%s the rest of the dataplane "
				"starves while it is full: raise [dataplane] mbufs to %.0f or more\n",
				cfg->links[i].name, frames, pool,
				pool < cfg->mbufs ? " an engine" : "", (2 * frames + 4096) *
				(cfg->mbufs / pool));
	}
}

/*
 * The command line's options over the file's settings (--name, --link, --scheme,
 * --traffic, ...): a bad one is said in one line. @return 0, or the exit status (2).
 */
static int
apply_options(const struct app_opts *o, struct dp_cfg *cfg, struct traffic_cfg *tc)
{
	struct sdr_scheme s;
	char err[1024];
	int rc;

	if (o->name && dp_config_set_name(cfg, o->name) != 0) {
		fprintf(stderr, "sdr-dataplane: bad --name '%s' (letters, digits, - _ ., up to "
			"%d)\n", o->name, DP_NAME_LEN - 1);
		return 2;
	}
	if (o->stats_period_set)
		cfg->stats_period_s = o->stats_period_s;
	for (int i = 0; i < o->nlinks; i++)
		if ((rc = apply_link(cfg, o->links[i])) != 0)
			return rc;
	if (o->busy)
		cfg->idle_sleep_us = 0;
	cfg->log_drops = o->log_drops;
	if (o->traffic && traffic_parse(o->traffic, tc, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdr-dataplane: %s\n", err);
		return 2;
	}
	if (o->scheme) {
		rc = sdr_scheme_parse(o->scheme, &s);
		if (rc != 0) {
			fprintf(stderr, "sdr-dataplane: bad --scheme '%s' (%s)\n", o->scheme,
				sdr_scheme_strerror(rc));
			return 2;
		}
		if ((rc = apply_scheme(cfg, &s)) != 0)
			return rc;
	}
	if (o->traffic && tc->has_scheme && (rc = apply_scheme(cfg, &tc->scheme)) != 0)
		return rc;
	if (o->traffic && tc->conn[0] && dp_config_conn(cfg, tc->conn) < 0) {
		fprintf(stderr, "sdr-dataplane: --traffic conn=%s: no such [conn] in %s\n",
			tc->conn, o->config);
		return 2;
	}
	/* a message larger than a connection takes: every post would fail, and the run never
	 * end */
	for (unsigned int i = 0; o->traffic && i < cfg->nconns; i++) {
		const struct dp_conn_cfg *cc = &cfg->conns[i];
		char a[32], b[32];

		if ((tc->conn[0] && !dp_config_conn_is(cc, tc->conn)) ||
		    tc->size <= cc->ep.attr.max_msg_size)
			continue;
		fprintf(stderr, "sdr-dataplane: --traffic: size %s is more than [conn %s] max_msg "
			"%s\n", units_fmt_size(tc->size, a, sizeof(a)), cc->name,
			units_fmt_size(cc->ep.attr.max_msg_size, b, sizeof(b)));
		return 2;
	}
	return 0;
}

static int
check_only(const struct app_opts *o)
{
	char err[1024];
	static struct dp_cfg cfg;
	struct traffic_cfg tc;
	unsigned int nconns = 0;
	int rc;

	if (dp_config_load(o->config, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdr-dataplane: %s\n", err);
		return 2;
	}
	/* what the command line changes is checked as well, and shown (the schemes) */
	if ((rc = apply_options(o, &cfg, &tc)) != 0)
		return rc;
	for (unsigned int i = 0; i < cfg.nconns; i++)
		nconns += cfg.conns[i].stripe == 0;
	printf("%s: ok: %u ports, %u links, %u connections", o->config, cfg.nports, cfg.nlinks,
	       nconns);
	if (cfg.nconns > nconns)
		printf(" (%u stripes)", cfg.nconns);
	printf("\n");
	for (unsigned int i = 0; i < cfg.nconns; i++) {
		char name[SDR_SCHEME_CHUNK_NAME_MAX];

		if (cfg.conns[i].stripe != 0)
			continue;	/* told with its connection */
		printf("  conn %s: port %s, scheme %s%s", cfg.conns[i].name, cfg.conns[i].port,
		       sdr_scheme_format_chunk(&cfg.conns[i].ep.rel.scheme,
					       cfg.conns[i].ep.attr.chunk_size, name, sizeof(name)),
		       cfg.conns[i].scheme_auto ? " (auto)" : "");
		if (cfg.conns[i].stripes > 1)
			printf(", %u stripes", cfg.conns[i].stripes);
		if (cfg.conns[i].ep.paths.npaths > 1)
			printf(", %u paths (%s)", cfg.conns[i].ep.paths.npaths,
			       path_policy_name(cfg.conns[i].ep.paths.policy));
		printf("\n");
	}
	return 0;
}

/* Arguments after "--" (all of them when there is none). */
static int
app_args_start(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return 0;
}

static int
launch(const struct app_opts *o)
{
	char err[256];
	double next_stats = dp.cfg.stats_period_s;
	struct dp_lcores l;
	int failed = 0;

	if (dp_lcores_setup(&dp, &l) != 0)
		return 2;
	/* from now on the engine's lcore owns the endpoints: changes go to it as jobs */
	dp.engine_up = DP_ENGINES_UP;
	if (dp_control_start(&dp, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdr-dataplane: control: %s\n", err);
		dp.quit = 1;
	}
	if (dp_lcores_launch(&dp, &l) != 0) {
		dp.quit = 1;	/* (the lcores that started stop) */
		failed = 1;
	}
	if (l.main_works) {
		/* the main lcore polls too, and ticks every 100 ms */
		while (!dp.quit) {
			dp_pipeline_run(&dp, l.main_role, rte_get_tsc_cycles() + dp.tsc_hz / 10);
			tick(o, &next_stats);
		}
		dp_pipeline_release();
	} else {
		while (!dp.quit) {
			if (l.fec == RTE_MAX_LCORE)	/* the FEC worker, between ticks */
				dp_fec_run(&dp, rte_get_tsc_cycles() + dp.tsc_hz / 10);
			else
				usleep(100000);
			tick(o, &next_stats);
		}
	}
	rte_eal_mp_wait_lcore();
	/* (after every engine's last store: a job they ran is seen done, ctl_engine_call()) */
	__atomic_store_n(&dp.engine_up, DP_ENGINES_DONE, __ATOMIC_RELEASE);
	return failed;
}

int
main(int argc, char **argv)
{
	struct app_opts o = { 0 };
	int sep = app_args_start(argc, argv), eal_argc, rc;
	char err[1024];

	sdr_crash_report_init();
	/* help and --check need no EAL */
	for (int i = sep ? sep + 1 : 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
	}
	if (sep == 0 && argc > 1 && (strcmp(argv[1], "-f") == 0 || strcmp(argv[1], "--config") == 0)) {
		fprintf(stderr, "sdr-dataplane: EAL options come first, then '--', then -f FILE "
			"(e.g. sdr-dataplane -l 0-1 --no-huge -- -f pmd-configs/loopback.ini)\n");
		return 2;
	}
	rc = parse_args(sep ? argc - sep : 1, sep ? argv + sep : argv, &o);
	if (rc != 0)
		return rc;
	if (o.check)
		return check_only(&o);
	if (dp_config_load(o.config, &dp.cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdr-dataplane: %s\n", err);
		return 2;
	}
	{
		struct traffic_cfg tc;

		if ((rc = apply_options(&o, &dp.cfg, &tc)) != 0)
			return rc;
		if (o.traffic)
			snprintf(dp.traffic_log, sizeof(dp.traffic_log), "%s", tc.log);

		ignore_tap_signals(&dp.cfg);
		/*
		 * Asked to stop (SIGINT, SIGTERM, the terminal gone: SIGHUP), it stops the way it
		 * always does, removing what it made; set before EAL so that a signal during the
		 * start does too (the starts' waits look at quit). A closed standard output (a
		 * pipe to head) is not worth dying for, without that cleanup: writes just fail.
		 */
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		signal(SIGPIPE, SIG_IGN);
		warn_link_bdp(&dp.cfg);
		eal_argc = sep ? sep : argc;
		rc = rte_eal_init(eal_argc, argv);
		if (rc < 0) {
			fprintf(stderr, "sdr-dataplane: EAL initialisation failed: %s\n",
				rte_strerror(rte_errno));
			return 1;
		}
		dp.tsc_hz = rte_get_tsc_hz();
		dp.start_tsc = rte_get_tsc_cycles();
		{
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			dp.start_mono_ns = (uint64_t)ts.tv_sec * 1000000000ull +
					   (uint64_t)ts.tv_nsec;
		}
		if (dp_ports_init(&dp, err, sizeof(err)) != 0 ||
		    dp_conns_init(&dp, err, sizeof(err)) != 0) {
			fprintf(stderr, "sdr-dataplane: %s\n", err);
			rc = 1;
			goto out;
		}
		for (unsigned int i = 0; o.traffic && i < dp.nconns; i++) {
			size_t area_len;
			int snd, rcv;
			void *area;

			const struct dp_conn_cfg *cc = dp.conns[i].cfg;

			/* conn=NAME: the connection, with its stripes */
			if (tc.conn[0] && !dp_config_conn_is(cc, tc.conn))
				continue;
			traffic_halves(&tc, cc, &snd, &rcv);
			/* start=T on this process's clock (a time already past: at once) */
			if (tc.start_mono_s * 1e9 > (double)dp.start_mono_ns)
				tc.start_ns = (uint64_t)(tc.start_mono_s * 1e9) - dp.start_mono_ns;
			/* a striped connection: message n goes on stripe n % stripes */
			tc.stripe = cc->stripe;
			tc.stripes = cc->stripes;
			dp.conns[i].traffic = traffic_create(&tc, dp.conns[i].ep, snd, rcv);
			if (dp.conns[i].traffic == NULL) {
				fprintf(stderr, "sdr-dataplane: [conn %s]: no memory for %u x %llu-byte "
					"traffic buffers\n", dp.conns[i].cfg->name, tc.inflight,
					(unsigned long long)tc.size);
				rc = 1;
				goto out;
			}
			if (traffic_send_area(dp.conns[i].traffic, &area, &area_len) == 0 &&
			    dp_dma_add(&dp, area, area_len, err, sizeof(err)) != 0) {
				fprintf(stderr, "sdr-dataplane: [conn %s]: traffic: %s\n",
					dp.conns[i].cfg->name, err);
				rc = 1;
				goto out;
			}
		}
	}
	if (dp_control_init(&dp, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdr-dataplane: control: %s\n", err);
		rc = 1;
		goto out;
	}
	dp_telemetry_init(&dp);
	if (rte_eal_has_hugepages())
		rte_pdump_init();
	if (!o.quiet && !o.json) {
		printf("sdr-dataplane %s: %u ports, %u connections, ", dp.cfg.name, dp.nports,
		       dp.nconns);
		if (dp.cfg.mode == DP_PIPE_SPLIT)
			printf("split pipeline (%u receive worker%s, payload copies on %s)",
			       dp.cfg.rx_lcores, dp.cfg.rx_lcores > 1 ? "s" : "",
			       dp.cfg.place_workers ? "the workers" : "the main lcore");
		else if (dp.cfg.mode == DP_PIPE_ENGINES)
			printf("%u engine%s", dp.cfg.engines, dp.cfg.engines > 1 ? "s" : "");
		else
			printf("rtc pipeline");
		printf(", idle sleep %u us\n", dp.cfg.idle_sleep_us);
		fflush(stdout);
	}
	up_s = elapsed_s();
	rc = launch(&o);
	if (rc == 0 && (o.traffic || o.json))
		dp_summary(&dp, o.json, elapsed_s());
	/* failed messages fail the run; so does a counted run cut short */
	if (rc == 0 && o.traffic && !dp_traffic_ok(&dp))
		rc = 1;
out:
	dp.quit = 1;
	rte_eal_mp_wait_lcore();
	if (rte_eal_has_hugepages())
		rte_pdump_uninit();
	dp_control_stop(&dp);
	sdr_eal_park_interrupts();
	/* frames still queued (a TX ring, the link emulator) may point into the buffers of
	 * clients and of --traffic (zero-copy), and a NIC reads them by DMA: the devices stop
	 * and those frames go before the buffers are unmapped (dma.h) */
	dp_ports_stop(&dp);
	dp_conns_free(&dp);
	dp_lcores_free(&dp);
	dp_dma_del_all(&dp);	/* (the clients' buffers: unmapped while the devices exist) */
	dp_ports_close(&dp);
	dp_holds_reap(1);
	dp_control_fini(&dp);
	sdr_eal_exit();
	return rc;
}
