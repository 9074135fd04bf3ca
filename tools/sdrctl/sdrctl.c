/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdrctl: the management process of an sdr-dataplane instance. It attaches to the
 * instance's admin channel (control/sdr_shm.h; no EAL), runs commands in its own segment and
 * prints the replies; `stats` reads the counters from the instance's status segment, without
 * a round trip. One-shot:
 *   sdrctl [-n NAME] [--json] conn show
 * or, with no command, an interactive shell (DPDK cmdline: history, completion) taking the
 * same commands.
 */
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include "sdr_shm.h"
#include "units.h"

static struct sdr_client client;
static const char *instance = "sdr0";
static int json;
static unsigned int timeout_ms = 5000;
static volatile int stop;
static int in_shell;		/* commands come from the interactive shell */

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: sdrctl [-n NAME] [--json] [--timeout MS] [COMMAND...]\n"
"Manage a running sdr-dataplane through its admin channel (the dataplane's user\n"
"only); stats reads its status segment.\n"
"Without a command: an interactive shell (history, Tab completion).\n"
"\n"
"  -n, --name NAME     instance (the dataplane's [dataplane] name or -n; default sdr0)\n"
"      --json          replies of read commands as JSON (also after the command)\n"
"      --timeout MS    how long to wait for a reply (default 5000)\n"
"  -h, --help          this text\n"
"\n"
"Commands:\n"
"  conn show [NAME]                     connections, or one in detail with counters\n"
"  conn add NAME key value ...          add a connection; keys of a [conn] section:\n"
"                                       port peer-ip peer-mac local-qpn remote-qpn mtu\n"
"                                       chunk imm-split channels generations max-msg\n"
"                                       inflight dir scheme rtt rate ...\n"
"  conn set NAME key value ...          change an idle connection\n"
"  conn del NAME                        delete an idle connection\n"
"  port show [NAME]                     ports, counters, parser verdicts\n"
"  link show [PORT]                     link emulators and their counters\n"
"  link set PORT [path N] WORDS         emulator (one path of it): delay T, rate R,\n"
"                                       loss P, burst PGB,PBG[,LG,LB], reorder P[,T],\n"
"                                       dup P, corrupt P, seed N, off\n"
"  path show [CONN]                     paths of connections with [conn] paths: each\n"
"                                       path's QPNs, frames, loss, state; decisions\n"
"  pipeline show                        stages, lcores, cycles per packet\n"
"  client show                          attached sdrctl and SDK clients: pid and uid\n"
"                                       (from the kernel), operations in flight,\n"
"                                       connections, requests refused\n"
"  stats [--watch [SECONDS]]            counters from the status segment (no round trip)\n"
"  help\n"
"\n"
"Exit status: 0 ok, 1 the dataplane failed or did not answer, 2 bad input (nothing\n"
"was changed).\n");
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * The pause between two --watch rounds. In the interactive shell on a terminal, DPDK's
 * cmdline has the terminal in raw mode, so Ctrl-C arrives as a key and not as SIGINT: there
 * any key ends the watch (and is consumed). @return 1 if a key ended it, else 0.
 */
static int
watch_pause(double period)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char keys[64];

	if (!in_shell || !isatty(STDIN_FILENO)) {
		usleep((useconds_t)(period * 1e6));
		return 0;
	}
	if (poll(&pfd, 1, (int)(period * 1000)) <= 0)
		return 0;
	if (read(STDIN_FILENO, keys, sizeof(keys)) < 0)
		return 0;
	return 1;
}

/* stats: a snapshot read from shared memory, never blocking the dataplane */
static int
stats(int argc, char **argv)
{
	const struct sdr_shm_status *st;
	struct sdr_shm_stats s, prev;
	double period = 0;
	int have_prev = 0, js = json;
	char err[256];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			js = 1;
		} else if (strcmp(argv[i], "--watch") == 0) {
			period = 1;
			if (i + 1 < argc && argv[i + 1][0] != '-') {
				if (units_parse_number(argv[++i], &period) != 0 ||
				    !(period > 0 && period <= 3600)) {
					fprintf(stderr, "sdrctl: stats: bad --watch '%s' (seconds, e.g. 1)\n",
						argv[i]);
					return 2;
				}
			}
		} else {
			fprintf(stderr, "sdrctl: stats: unknown '%s' (expected --watch [SECONDS] or "
				"--json)\n", argv[i]);
			return 2;
		}
	}
	if (in_shell)
		stop = 0;	/* (a Ctrl-C that ended the last watch) */
	/* read from the status segment: no client slot, no round trip */
	st = sdr_shm_status_map(instance, err, sizeof(err));
	if (st == NULL) {
		fprintf(stderr, "sdrctl: %s\n", err);
		return 1;
	}
	do {
		if (sdr_shm_read_stats(st, &s) != 0) {
			fprintf(stderr, "sdrctl: stats: the dataplane keeps rewriting them\n");
			sdr_shm_status_unmap(st);
			return 1;
		}
		if (js) {
			printf("{\"time_s\":%.3f,\"ports\":[", (double)s.time_ns * 1e-9);
			for (uint32_t i = 0; i < s.nports; i++)
				printf("%s{\"name\":\"%s\",\"rx_pkts\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
				       ",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"drops\":%" PRIu64
				       "}", i ? "," : "", s.ports[i].name, s.ports[i].rx_pkts,
				       s.ports[i].rx_bytes, s.ports[i].tx_pkts, s.ports[i].tx_bytes,
				       s.ports[i].drops);
			printf("],\"conns\":[");
			for (uint32_t i = 0; i < s.nconns; i++) {
				const struct sdr_shm_conn_stats *c = &s.conns[i];

				printf("%s{\"name\":\"%s\",\"scheme\":\"%s\",\"data_pkts_in\":%" PRIu64
				       ",\"data_pkts_out\":%" PRIu64 ",\"ctrl_pkts_in\":%" PRIu64
				       ",\"ctrl_pkts_out\":%" PRIu64 ",\"sends_ok\":%" PRIu64
				       ",\"recvs_ok\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"retransmitted\":%"
				       PRIu64 ",\"decoded\":%" PRIu64 ",\"rx_drops\":%" PRIu64 "}",
				       i ? "," : "", c->name, c->scheme, c->data_pkts_in, c->data_pkts_out,
				       c->ctrl_pkts_in, c->ctrl_pkts_out, c->sends_ok, c->recvs_ok,
				       c->failed, c->retransmitted, c->decoded, c->rx_drops);
			}
			printf("]}\n");
		} else {
			double dt = have_prev ? (double)(s.time_ns - prev.time_ns) * 1e-9 : 0;

			printf("%-10s %14s %14s %14s %14s %10s %8s\n", "port", "rx_pkts", "tx_pkts",
			       "rx_Gbit/s", "tx_Gbit/s", "drops", "t=");
			for (uint32_t i = 0; i < s.nports; i++) {
				const struct sdr_shm_port_stats *p = &s.ports[i];
				double rx = dt > 0 ? (double)(p->rx_bytes - prev.ports[i].rx_bytes) * 8e-9 / dt : 0;
				double tx = dt > 0 ? (double)(p->tx_bytes - prev.ports[i].tx_bytes) * 8e-9 / dt : 0;

				printf("%-10s %14" PRIu64 " %14" PRIu64 " %14.3f %14.3f %10" PRIu64 " %7.1fs\n",
				       p->name, p->rx_pkts, p->tx_pkts, rx, tx, p->drops,
				       (double)s.time_ns * 1e-9);
			}
			printf("%-10s %-12s %12s %12s %9s %9s %7s %9s %8s %9s\n", "conn", "scheme",
			       "data_in", "data_out", "sends_ok", "recvs_ok", "failed", "retx", "decoded",
			       "rx_drops");
			for (uint32_t i = 0; i < s.nconns; i++) {
				const struct sdr_shm_conn_stats *c = &s.conns[i];

				printf("%-10s %-12s %12" PRIu64 " %12" PRIu64 " %9" PRIu64 " %9" PRIu64
				       " %7" PRIu64 " %9" PRIu64 " %8" PRIu64 " %9" PRIu64 "\n", c->name,
				       c->scheme, c->data_pkts_in, c->data_pkts_out, c->sends_ok,
				       c->recvs_ok, c->failed, c->retransmitted, c->decoded, c->rx_drops);
			}
		}
		fflush(stdout);
		prev = s;
		have_prev = 1;
		if (period > 0 && !stop && watch_pause(period) != 0)
			break;
	} while (period > 0 && !stop);
	sdr_shm_status_unmap(st);
	return 0;
}

/* The admin channel, attached on the first command that needs it. @return 0 or 1. */
static int
attach(void)
{
	char err[256];

	if (client.seg != NULL)
		return 0;
	if (sdr_client_attach(instance, SDR_CLIENT_ADMIN, &client, err, sizeof(err)) != 0) {
		fprintf(stderr, "sdrctl: %s\n", err);
		return 1;
	}
	return 0;
}

/* Words of a command line: more than the dataplane takes (96, with --json), so it is the
 * dataplane that says so for a command, and nothing is cut silently here. */
#define SDRCTL_MAX_WORDS 128

/* Run one command line (one-shot or interactive). @return the exit status. */
static int
run_line(const char *line)
{
	char buf[SDR_RPC_TEXT_MAX], cmd[SDR_RPC_TEXT_MAX], *argv[SDRCTL_MAX_WORDS], *save = NULL;
	struct sdr_rpc_req *q;
	const char *reply;
	int argc = 0, rc, js = json;
	size_t o = 0;

	if (strlen(line) >= sizeof(buf)) {
		fprintf(stderr, "sdrctl: command longer than %zu characters\n", sizeof(buf) - 1);
		return 2;
	}
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok_r(buf, " \t\r\n", &save); w != NULL;
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == SDRCTL_MAX_WORDS) {
			fprintf(stderr, "sdrctl: more than %d words\n", SDRCTL_MAX_WORDS);
			return 2;
		}
		argv[argc++] = w;
	}
	if (argc == 0)
		return 0;
	if (strcmp(argv[0], "stats") == 0)
		return stats(argc, argv);
	/* --json may follow the command too, as ip users expect */
	cmd[0] = '\0';
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			js = 1;
			continue;
		}
		o += (size_t)snprintf(cmd + o, o < sizeof(cmd) ? sizeof(cmd) - o : 0, "%s%s",
				      o ? " " : "", argv[i]);
	}
	if (o >= sizeof(cmd)) {
		fprintf(stderr, "sdrctl: command longer than %zu characters\n", sizeof(cmd) - 1);
		return 2;
	}
	if (attach() != 0)
		return 1;
	q = &client.rpc->req;
	q->op = SDR_RPC_COMMAND;
	q->flags = js ? SDR_CMD_F_JSON : 0;
	q->len = (uint32_t)o;
	memcpy(q->text, cmd, o + 1);
	{
		char err[256];

		rc = sdr_client_call(&client, timeout_ms, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "sdrctl: %s\n", err);
			return 1;
		}
	}
	reply = client.rep->u.text;	/* (our copy, terminated) */
	if (rc == SDR_CTL_OK) {
		fputs(reply, stdout);
		if (reply[0] && reply[strlen(reply) - 1] != '\n')
			fputc('\n', stdout);
		fflush(stdout);
		return 0;
	}
	fprintf(stderr, "sdrctl: %s\n", reply);
	return rc;
}

/* ---- interactive shell on DPDK cmdline ---- */

struct cmd_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
cb_line(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_res *r = parsed;
	char line[sizeof(r->w0) + sizeof(r->w1) + sizeof(r->rest) + 4];
	int n = (int)(uintptr_t)data;

	(void)cl;
	if (n == 1)
		snprintf(line, sizeof(line), "%s", r->w0);
	else if (n == 2)
		snprintf(line, sizeof(line), "%s %s", r->w0, r->w1);
	else
		snprintf(line, sizeof(line), "%s %s %s", r->w0, r->w1, r->rest);
	run_line(line);
}

static void
cb_quit(void *parsed, struct cmdline *cl, void *data)
{
	(void)parsed;
	(void)data;
	cmdline_quit(cl);
}

#define W0(name, words) static cmdline_parse_token_string_t name = \
	TOKEN_STRING_INITIALIZER(struct cmd_res, w0, words)
#define W1(name, words) static cmdline_parse_token_string_t name = \
	TOKEN_STRING_INITIALIZER(struct cmd_res, w1, words)

W0(t_conn, "conn");
W1(t_conn_sub, "show#add#set#del");
W0(t_port, "port");
W1(t_show, "show");
W0(t_link, "link");
W1(t_link_sub, "show#set");
W0(t_path, "path");
W0(t_pipe, "pipeline");
W0(t_client, "client");
W0(t_stats, "stats");
W1(t_stats_opt, "--watch#--json");
W0(t_help, "help");
W0(t_quit, "quit#exit");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct cmd_res, rest, TOKEN_STRING_MULTI);

#define INST(name, n, help, ...) static cmdline_parse_inst_t name = { \
	.f = cb_line, .data = (void *)(uintptr_t)(n), .help_str = help, \
	.tokens = { __VA_ARGS__, NULL } }

INST(i_conn_rest, 3, "conn show|add|set|del NAME [key value]...", (void *)&t_conn,
     (void *)&t_conn_sub, (void *)&t_rest);
INST(i_conn, 2, "conn show", (void *)&t_conn, (void *)&t_conn_sub);
INST(i_port_rest, 3, "port show NAME", (void *)&t_port, (void *)&t_show, (void *)&t_rest);
INST(i_port, 2, "port show", (void *)&t_port, (void *)&t_show);
INST(i_link_rest, 3, "link show|set PORT [words]", (void *)&t_link, (void *)&t_link_sub,
     (void *)&t_rest);
INST(i_link, 2, "link show", (void *)&t_link, (void *)&t_link_sub);
INST(i_path_rest, 3, "path show CONN", (void *)&t_path, (void *)&t_show, (void *)&t_rest);
INST(i_path, 2, "path show", (void *)&t_path, (void *)&t_show);
INST(i_pipe, 2, "pipeline show", (void *)&t_pipe, (void *)&t_show);
INST(i_client, 2, "client show", (void *)&t_client, (void *)&t_show);
INST(i_stats_rest, 3, "stats --watch SECONDS", (void *)&t_stats, (void *)&t_stats_opt,
     (void *)&t_rest);
INST(i_stats_opt, 2, "stats --watch|--json", (void *)&t_stats, (void *)&t_stats_opt);
INST(i_stats, 1, "stats", (void *)&t_stats);
INST(i_help, 1, "help", (void *)&t_help);
static cmdline_parse_inst_t i_quit = { .f = cb_quit, .help_str = "quit",
				       .tokens = { (void *)&t_quit, NULL } };

static cmdline_parse_ctx_t ctx[] = {
	&i_conn_rest, &i_conn, &i_port_rest, &i_port, &i_link_rest, &i_link, &i_path_rest,
	&i_path, &i_pipe, &i_client,
	&i_stats_rest, &i_stats_opt, &i_stats, &i_help, &i_quit, NULL,
};

static int
interactive(const char *name)
{
	char prompt[80];
	struct cmdline *cl;

	in_shell = 1;
	snprintf(prompt, sizeof(prompt), "sdr[%s]> ", name);
	cl = cmdline_stdin_new(ctx, prompt);
	if (cl == NULL) {
		fprintf(stderr, "sdrctl: cannot start the interactive shell\n");
		return 1;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = "sdr0";
	char line[SDR_RPC_TEXT_MAX];
	uint64_t v;
	int c, rc;
	size_t o = 0;

	/* options come first; the command's own words (e.g. --watch) follow */
	while ((c = getopt_long(argc, argv, "+n:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'j': json = 1; break;
		case 't':
			if (units_parse_u64(optarg, 3600000, &v) != 0 || v == 0) {
				fprintf(stderr, "sdrctl: bad --timeout '%s' (milliseconds)\n", optarg);
				return 2;
			}
			timeout_ms = (unsigned int)v;
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sdrctl --help'.\n");
			return 2;
		}
	}
	instance = name;
	/* attach before the shell starts: an instance that is not there is said at once */
	if (optind == argc && attach() != 0)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (optind == argc) {
		rc = interactive(name);
	} else {
		line[0] = '\0';
		for (int i = optind; i < argc && o < sizeof(line); i++)
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i > optind ? " " : "",
					      argv[i]);
		if (o >= sizeof(line)) {
			fprintf(stderr, "sdrctl: command longer than %zu characters\n", sizeof(line) - 1);
			rc = 2;
		} else {
			rc = run_line(line);
		}
	}
	if (client.seg != NULL)
		sdr_client_detach(&client);
	return rc;
}
