/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the control service (control.h is its face to the rest of the dataplane). Two
 * threads, each with its own state:
 *
 *   the management thread (ctl_mgmt.c)  the sockets, attaching and detaching clients, their
 *       segments, the calls they make: admin command lines (ctl_cli.c) and the SDK's
 *       synchronous calls. Whatever allocates (a connection's endpoint, an emulator) is made
 *       here, off the packet path.
 *   the engine, the lcore that owns the endpoints (ctl_sdk.c)  the SDK clients' queues and
 *       operations, completions, and the small jobs the management thread hands it to change
 *       what the engine owns (install a connection, open one for a client, a client gone).
 *
 * A job is a function and its arguments, run by the engine between bursts
 * (ctl_engine_call()); it never allocates and never waits on a client. The one lock it may
 * take is conns_lock (dp.h), to add, rebuild or delete a connection, which the other
 * threads hold only while they copy counters into memory (never over I/O). While no engine
 * runs (before launch, in the fuzzer) the caller runs it itself.
 */
#ifndef SDR_DP_CTL_H
#define SDR_DP_CTL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "conns.h"
#include "dp.h"
#include "sdr_shm.h"
#include "stats.h"

/* ---- the engine's side of the SDK ---- */

#define CTL_OPS_PER_CLIENT	SDR_SHM_QUEUE_DEPTH	/* operations of a client at once */
#define CTL_CREATES_PER_CLIENT	16	/* connections one application may have created */
/* ... the applications of one user (but the dataplane's own), and all of them: the last 16
 * of the table stay the configuration file's and sdrctl's */
#define CTL_CREATES_PER_USER	16
#define CTL_CREATES_APPS	(DP_MAX_CONNS - 16)

/* An SDK operation in flight; handle = generation << 32 | client * ops + index. */
struct sdk_op {
	uint32_t gen;
	uint8_t used;
	uint8_t op;		/* SDR_SDK_SEND or SDR_SDK_RECV */
	uint8_t done;		/* receive completed, waiting for RECV_DONE */
	uint8_t orphan;		/* no completion to the client (it closed or went away) */
	uint8_t stream;		/* a streamed send: st is its endpoint handle */
	uint8_t released;	/* receive released: freed once no copy writes its buffer */
	uint8_t cancel_cqe;	/* released before it completed: say so once it is quiet */
	uint16_t conn;
	uint32_t slot;		/* receive: the endpoint's slot */
	uint64_t cookie;	/* the client's */
	struct sdr_ep_stream st;
};

/*
 * Requests a connection had no room for yet (its in-flight limit), in order: posts keep
 * their order (the k-th message lands in the k-th receive), but RECV_DONE overtakes them,
 * since it is what makes room.
 */
struct sdk_deferred {
	struct sdr_sdk_req r[SDR_SHM_QUEUE_DEPTH];
	uint32_t head;
	uint32_t n;
};

/* The SDK client counters (SDK_CLIENT_COUNTERS) and their table: dp_counters.h. */

enum sdk_client_state {
	SDK_FREE,
	SDK_ACTIVE,
	SDK_LEAVING,		/* gone: waiting for its operations to end */
	SDK_GONE,		/* nothing of it left: the management thread frees the slot */
};

/* One SDK client as one engine sees it (its queue pair of the client); everything private. */
struct sdk_client {
	volatile uint8_t state;		/* enum sdk_client_state */
	volatile uint8_t kick;		/* it broke the protocol: the management thread drops it */
	uint8_t *arena;			/* its buffers, in the dataplane's mapping */
	uint64_t arena_len;
	struct sdr_spsc_end sq;		/* we consume */
	struct sdr_spsc_end cq;		/* we produce */
	uint64_t conns;			/* connections it has open (bit i: conn i) */
	uint32_t nops;			/* operations in flight */
	uint32_t releasing;		/* receives released, waiting for their copies: */
	uint32_t *rel_ops;		/* ... these ops (CTL_OPS_PER_CLIENT) */
	uint32_t nfree;
	uint32_t *free_ops;		/* CTL_OPS_PER_CLIENT */
	struct sdk_op *ops;		/* CTL_OPS_PER_CLIENT */
	struct sdk_deferred *deferred;
	uint32_t work;			/* this poll's work for it, in requests (REQ_BUDGET) */
	uint64_t counters[SDK_C_NCOUNTERS];
};

struct sdk_service {
	unsigned int engine;			/* the engine whose shard this is */
	struct sdk_client clients[SDR_SHM_SDK_CLIENTS];
	uint32_t conn_ops[DP_MAX_CONNS];	/* operations in flight per connection */
	uint32_t releasing;			/* over every client */
	uint64_t counters[SDK_S_NCOUNTERS];	/* sdk_service_counter_table */
};

/* ---- the management thread's side ---- */

enum ctl_slot_state {
	CTL_FREE,
	CTL_HELLO,		/* connected, no hello yet */
	CTL_ACTIVE,
	CTL_LEAVING,		/* SDK: gone, the engine winds its operations down */
};

/* A client slot: 0 .. SDR_SHM_SDK_CLIENTS-1 applications, then sdrctl processes. */
struct ctl_slot {
	uint8_t state;
	uint8_t kind;			/* enum sdr_client_kind */
	int fd;
	uint8_t *seg;			/* the client segment, mapped here */
	struct sdr_client_layout L;
	uint32_t last_seq;		/* of the last call run */
	pid_t pid;			/* from the kernel (SO_PEERCRED), not the client */
	uid_t uid;
	uint64_t since_ns;
};

/* A job for the engine. The fields are the arguments and results of fn. */
struct ctl_job {
	int (*fn)(struct dp_ctx *ctx, struct ctl_job *j);
	volatile int done;
	int rc;
	unsigned int engine;		/* mode = engines: the engine that runs it (0: default) */
	unsigned int slot;
	unsigned int conn;
	int owner;
	int creator;
	uint64_t u64;
	uint32_t u32;
	void *p;
	void *q;
	struct ec_codec *code, *code2;	/* made for the engine (ctl_auto.c) */
	struct dp_conn_cfg *cfg;
	struct sdr_rpc_rep *rep;
	char *err;
	size_t errlen;
};

struct dp_ctl {
	struct sdr_shm_status *st;	/* written here only, never read back */
	uint64_t start_ns;		/* when the control service started (its clock) */
	char st_path[SDR_SHM_NAME_MAX + 8];
	char sock_path[2][SDR_SHM_SOCK_MAX];	/* admin, sdk */
	int lfd[2];
	uint64_t arena_len;		/* of each SDK client */
	gid_t gid;			/* control_group, or -1 */
	unsigned int per_user;		/* application slots one UID holds at once */
	struct ctl_slot slots[SDR_SHM_MAX_CLIENTS];
	pthread_t thread;
	int thread_started;
	volatile int stop;
	struct rte_ring *jobs;		/* management thread -> engine (0) */
	struct rte_ring *ejobs[DP_MAX_ENGINES];	/* mode = engines: to engine e >= 1 */
	struct sdr_rpc_req req;		/* the call being run: a private copy */
	struct sdr_rpc_rep rep;		/* its reply, copied out when done */
	/* connections refused (no slot free, or their user's sdk_slots_per_user held): told
	 * so, closed once their hello is read (closing a socket with unread data resets the
	 * peer before it reads the refusal) */
	struct { int fd; uint64_t since_ns; } refused[8];
	unsigned int nrefused;
	/* the SDK service, a shard per engine: engine e serves every client's queue pair e,
	 * for the connections it owns (nothing of it is shared between engines) */
	struct sdk_service sdk[DP_MAX_ENGINES];
	unsigned int engines;		/* shards (and every client's queue pairs) */
};

_Static_assert(DP_MAX_ENGINES <= SDR_SHM_MAX_QUEUES, "a queue pair per engine");

/** Run @p j on the engine and wait for it (or run it here when no engine runs).
 * @return j->rc, or -ESHUTDOWN when the dataplane is stopping. */
int ctl_engine_call(struct dp_ctx *ctx, struct ctl_job *j);

/* ctl_auto.c */

/** Online auto: decide for every connection that sends with scheme = auto whose half
 * second is up, and hand the changes advised to their engines. Management thread. */
void ctl_auto_sweep(struct dp_ctx *ctx, uint64_t now);

/** The changes asked for connection @p c, oldest first (up to @p max), its latest decision
 * and the path it was made for (zeroed when none yet; either may be NULL). @return how many.
 * Any thread. */
unsigned int ctl_auto_history(struct dp_conn *c, struct dp_auto_rec *out, unsigned int max,
			      struct sdr_auto_decision *last, struct sdr_auto_path *path);

/** The model point of connection @p c: its configuration with the path it measured put in
 * (@p u says what was used). Any thread. */
void ctl_auto_params(const struct dp_ctx *ctx, const struct dp_conn *c,
		     struct sdr_model_params *p, struct sdr_auto_path *u);

/* ctl_paths.c */

/** Several paths: for every connection with [conn] paths whose period is up, bring its
 * estimates up to date, decide where its channels go and hand a move to its engine.
 * Management thread. */
void ctl_paths_sweep(struct dp_ctx *ctx, uint64_t now);

/** Connection @p c's paths as of the last decision (@p paths, PATH_SEL_MAX_PATHS entries),
 * the frames per second sent on each over the period before it (@p fps, as many), that
 * decision, and the moves asked, oldest first (up to @p max). @return how many moves;
 * -1 when the connection has one path. Any thread. */
int ctl_paths_state(struct dp_conn *c, struct path_sel_path *paths, double *fps,
		    struct path_sel_decision *last, uint64_t *decisions,
		    struct dp_paths_rec *out, unsigned int max);

/* ctl_cli.c */

/**
 * Split @p buf (a private copy) into words, in place. Commands are printable ASCII: a reply
 * that echoes a word must not carry a newline or a terminal escape to whoever reads it.
 * @return the number of words, or -1 with one line in @p err.
 */
int ctl_cli_words(char *buf, char **argv, int max, char *err, size_t errlen);

/** The connection named @p name. @return its index, or -1. */
int ctl_find_conn(const struct dp_ctx *ctx, const char *name);

/** Run one admin command line; the reply text goes to @p out. @return SDR_CTL_*. */
int ctl_cli_exec(struct dp_ctx *ctx, const char *line, int json, char *out, size_t outlen);

/** Delete connection @p i on the management thread (engine job, then free). @return 0,
 * -EBUSY (in use) or -ESHUTDOWN (the dataplane is stopping). */
int ctl_conn_delete(struct dp_ctx *ctx, unsigned int i, char *err, size_t errlen);

/**
 * Add (@p i == -1: a free index) or rebuild connection @p i from @p tmp: the endpoint is
 * made here, installed by the engine (for a rebuild, only while the connection is idle and
 * still owned by @p owner), the old one freed here. On install the connection gets @p owner
 * (-1: none) and @p creator.
 * @return the index, or with a reason in @p err: -ENOMEM (no endpoint could be made),
 *   -ENOSPC (DP_MAX_CONNS already), -ESHUTDOWN (the dataplane is stopping), or -1 (the
 *   settings or the connection's state refused).
 */
int ctl_conn_install(struct dp_ctx *ctx, int i, const struct dp_conn_cfg *tmp, int owner,
		     int creator, char *err, size_t errlen);

/* ctl_sdk.c: jobs and helpers of the SDK service */

/** Set up the engine's side of SDK client @p slot, its segment mapped at @p seg. */
int ctl_sdk_attach(struct dp_ctx *ctx, unsigned int slot, uint8_t *seg,
		   const struct sdr_client_layout *L);

/** SDK client @p slot is gone: end what it had in flight, let go of its connections. */
void ctl_sdk_detach(struct dp_ctx *ctx, unsigned int slot);

/** Nothing of SDK client @p slot is left: its segment may be unmapped. */
int ctl_sdk_gone(struct dp_ctx *ctx, unsigned int slot);

/** SDK client @p slot broke the protocol (an impossible ring index): drop it. */
int ctl_sdk_kicked(struct dp_ctx *ctx, unsigned int slot);

/** Run an SDK call of client @p slot (@p req a private copy) into @p rep. */
void ctl_sdk_call(struct dp_ctx *ctx, unsigned int slot, const struct sdr_rpc_req *req,
		  struct sdr_rpc_rep *rep);

/** Engine 0's per-loop work: jobs, and its SDK shard's queues and completions.
 * @return work done. */
unsigned int ctl_sdk_poll(struct dp_ctx *ctx, uint64_t now);

/** mode = engines: engine @p e's SDK shard — its queue pair of every client, the
 * completions of its connections. @return work done. */
unsigned int ctl_sdk_shard_poll(struct dp_ctx *ctx, unsigned int e, uint64_t now);

/** Engine @p e, before it runs a call of SDK client @p ci: the requests @p ci queued there
 * before the call are handled first (one client's calls and requests keep their order). */
void ctl_sdk_client_flush(struct dp_ctx *ctx, unsigned int e, unsigned int ci, uint64_t now);

/** Operations client @p slot has in flight, and requests it has waiting (client show). */
void ctl_sdk_client_stats(const struct dp_ctx *ctx, unsigned int slot, uint32_t *ops,
			  uint32_t *waiting, uint64_t counters[SDK_C_NCOUNTERS]);

const char *ctl_sdk_counter_name(int c);

/** Counter @p c of the SDK service, every engine's shard added (0 with no control). */
uint64_t ctl_sdk_service_counter(const struct dp_ctx *ctx, enum sdk_service_counter c);

#endif /* SDR_DP_CTL_H */
