/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane between an sdr-dataplane and its clients (sdrctl, SDK applications),
 * with the trust boundary where it belongs: a client is another process, possibly another
 * user, and nothing it can write decides where the dataplane reads or writes.
 *
 *   status segment   POSIX shared memory /sdr-<instance>, created by the dataplane, mapped
 *                    read-only by clients: magic, version, pid, epoch, heartbeat, where the
 *                    sockets are, and a stats snapshot republished every 100 ms under a
 *                    sequence counter (readers never block the writer). The dataplane never
 *                    reads it back.
 *   two sockets      UNIX SOCK_SEQPACKET in the control directory: <instance>.admin (mode
 *                    0600: the dataplane's user) for sdrctl, <instance>.sdk (0660 with
 *                    [dataplane] control_group, else 0600) for applications. A client
 *                    connects, says hello, and gets its own segment as a file descriptor
 *                    (SCM_RIGHTS): an unnamed memfd no other process can open. The socket
 *                    stays open: it carries one-byte doorbells both ways, and its closing is
 *                    how the dataplane learns, at once, that the client is gone.
 *   client segment   one per client, laid out by sdr_client_layout() from what the welcome
 *                    says: a header, the request/reply area of synchronous calls (binary;
 *                    admin clients send command lines), and for SDK clients a request queue
 *                    and a completion queue (sdr_spsc.h) per engine — engine e serves pair
 *                    e, for the connections it owns — and the client's buffer arena.
 *
 * The dataplane keeps the layout, bounds, ring geometry and its ring indices in private
 * memory; from a client segment it takes only values that it copies out and then checks.
 */
#ifndef SDR_SHM_H
#define SDR_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_spsc.h"

#define SDR_SHM_MAGIC		0x5344525F53544154ull	/* "SDR_STAT" */
#define SDR_CLIENT_MAGIC	0x5344525F434C4E54ull	/* "SDR_CLNT" */
#define SDR_SHM_VERSION		6
#define SDR_SHM_NAME_MAX	64
#define SDR_SHM_SOCK_MAX	108			/* sun_path */
#define SDR_SHM_SDK_CLIENTS	16	/* applications at once, each with its arena */
#define SDR_SHM_ADMIN_CLIENTS	16	/* sdrctl processes at once */
#define SDR_SHM_MAX_CLIENTS	(SDR_SHM_SDK_CLIENTS + SDR_SHM_ADMIN_CLIENTS)
#define SDR_SHM_QUEUE_DEPTH	1024	/* SDK queue entries, a power of two */
#define SDR_SHM_MAX_QUEUES	8	/* SDK queue pairs of a client: one per engine */
#define SDR_SHM_MAX_PORTS	16
#define SDR_SHM_MAX_CONNS	64
#define SDR_RPC_TEXT_MAX	2048	/* a command line, or a connection's key/value words */
#define SDR_RPC_REPLY_MAX	(128 * 1024)

/* Reply codes, as sdrctl's exit status. */
#define SDR_CTL_OK		0
#define SDR_CTL_FAILED		1
#define SDR_CTL_BAD_INPUT	2

/* Command flags. */
#define SDR_CMD_F_JSON		0x1u

/* ---- the status segment ---- */

/* Counters published for sdrctl stats, read without a round trip. */
struct sdr_shm_port_stats {
	char name[32];
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, drops;
};

struct sdr_shm_conn_stats {
	char name[32];
	char scheme[24];
	uint64_t data_pkts_in, data_pkts_out, ctrl_pkts_in, ctrl_pkts_out;
	uint64_t sends_ok, recvs_ok, failed, retransmitted, decoded, rx_drops;
};

struct sdr_shm_stats {
	volatile uint64_t seq;		/* odd while the dataplane writes */
	uint64_t time_ns;		/* dataplane uptime of this snapshot */
	uint32_t nports;
	uint32_t nconns;
	struct sdr_shm_port_stats ports[SDR_SHM_MAX_PORTS];
	struct sdr_shm_conn_stats conns[SDR_SHM_MAX_CONNS];
};

struct sdr_shm_status {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint64_t total_size;
	char name[SDR_SHM_NAME_MAX];
	int32_t dp_pid;
	volatile uint32_t alive;	/* 1 while the dataplane serves the instance */
	uint64_t epoch;			/* CLOCK_REALTIME ns of creation: a restart changes it */
	volatile uint64_t heartbeat_ns;	/* CLOCK_MONOTONIC, refreshed every 100 ms */
	char admin_sock[SDR_SHM_SOCK_MAX];
	char sdk_sock[SDR_SHM_SOCK_MAX];
	struct sdr_shm_stats stats;
};

/* ---- attaching: the first message each way on a socket ---- */

struct sdr_hello {
	uint64_t magic;			/* SDR_CLIENT_MAGIC */
	uint32_t version;		/* SDR_SHM_VERSION */
	uint32_t pad;
};

struct sdr_welcome {
	uint64_t magic;
	uint32_t version;
	int32_t rc;			/* 0: the segment's fd comes with it; else an errno */
	uint32_t slot;
	uint32_t kind;			/* enum sdr_client_kind */
	uint64_t epoch;
	uint64_t size;			/* of the client segment */
	uint64_t arena_len;
	uint32_t queues;		/* SDK: request/completion queue pairs (one per engine) */
	uint32_t pad;
	char msg[200];			/* why not, when rc != 0 */
};

enum sdr_client_kind {
	SDR_CLIENT_ADMIN = 1,
	SDR_CLIENT_SDK = 2,
};

/* ---- synchronous calls: one request, one reply, in the client segment ---- */

enum sdr_rpc_op {
	SDR_RPC_COMMAND = 1,	/* admin: a command line in text; reply: text */
	SDR_RPC_OPEN,		/* sdk: open connection @name; reply: info */
	SDR_RPC_CLOSE,		/* sdk: close connection @conn (what is in flight ends) */
	SDR_RPC_CREATE,		/* sdk: add connection @name with the words in text, open it */
	SDR_RPC_SET,		/* sdk: change open, idle connection @conn with the words in text */
	SDR_RPC_DESTROY,	/* sdk: close @conn, and delete it if this client created it */
	SDR_RPC_IMM,		/* sdk: the user immediate of receive @cookie on @conn */
	SDR_RPC_EXPAND,		/* sdk: per-packet bits of chunk @chunk of receive @cookie */
};

struct sdr_rpc_req {
	uint32_t seq;			/* the client's count; the reply echoes it */
	uint32_t op;			/* enum sdr_rpc_op */
	uint32_t flags;			/* SDR_CMD_F_* */
	uint32_t conn;			/* connection index, from SDR_RPC_OPEN / CREATE */
	uint64_t cookie;		/* IMM, EXPAND: the receive's cookie */
	uint32_t chunk;			/* EXPAND */
	uint32_t len;			/* bytes of text */
	char name[32];			/* OPEN, CREATE: connection name */
	char text[SDR_RPC_TEXT_MAX];
};

/** A connection as an application sees it. */
struct sdr_rpc_info {
	uint32_t conn;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t mtu;
	uint32_t chunk_size;
	uint32_t max_inflight;
	uint64_t max_msg_size;
	uint32_t channels;
	uint32_t generations;
	uint32_t id_bits, off_bits, frag_bits;
	uint32_t queue;			/* the SDK queue pair of its requests (its engine) */
	uint32_t stripes;		/* a striped connection: its stripes ("NAME/s", s >= 1) */
	uint32_t stripe;		/* which one this is */
	char scheme[24];
};

struct sdr_rpc_rep {
	uint32_t seq;
	int32_t rc;			/* SDR_CTL_*; on failure the reason is in text */
	uint32_t len;			/* bytes of text */
	uint32_t pad;
	union {
		struct sdr_rpc_info info;			/* OPEN, CREATE, SET */
		struct { uint32_t imm, ok; } imm;		/* IMM: ok = 0 while not all in */
		struct { uint32_t n; uint32_t pad; uint64_t bits[16]; } expand;
		char text[SDR_RPC_REPLY_MAX];			/* COMMAND; every failure */
	} u;
};

struct sdr_rpc {
	struct sdr_rpc_req req;
	struct sdr_rpc_rep rep;
};

/* ---- the SDK's data path: queues of fixed-size entries ---- */

enum sdr_sdk_op {
	SDR_SDK_SEND = 1,	/* send arena[off, off+len) with imm */
	SDR_SDK_RECV,		/* post a receive into arena[off, off+len), bitmap at bm_off */
	SDR_SDK_RECV_DONE,	/* the application is done with receive @handle / @cookie */
	SDR_SDK_STREAM,		/* start a streamed send of arena[off, off+len) with imm */
	SDR_SDK_STREAM_ADD,	/* stream @cookie: message bytes [off, off+len) are ready */
	SDR_SDK_STREAM_END,	/* stream @cookie: the rest is ready */
};

struct sdr_sdk_req {
	uint16_t op;
	uint16_t conn;		/* connection index */
	uint32_t imm;
	uint64_t off;		/* from the start of the client's arena */
	uint64_t len;
	uint64_t bm_off;	/* RECV: the chunk bitmap's bytes, from the arena start */
	uint64_t cookie;	/* the client's name for the request, returned in its completion */
	uint64_t handle;	/* RECV_DONE: the completion's handle, or 0 (not completed);
				 * SEND, STREAM: the message's priority (0 .. 3) */
};

struct sdr_sdk_cqe {
	uint16_t op;		/* SDR_SDK_SEND or SDR_SDK_RECV */
	uint16_t conn;
	int32_t status;		/* 0 ok; else a negative errno or an sdr_done_status */
	uint32_t imm;		/* receive: the user immediate */
	uint32_t imm_ok;	/* receive: low bits of imm that are valid (0: not all in) */
	uint32_t decoded;
	uint32_t retransmitted;
	uint64_t handle;	/* receive: the dataplane's, for RECV_DONE */
	uint64_t cookie;
	uint64_t start_ns;
	uint64_t end_ns;
};

/* ---- the client segment ---- */

struct sdr_client_hdr {
	uint64_t magic;			/* SDR_CLIENT_MAGIC */
	uint32_t version;
	uint32_t kind;
	uint32_t slot;
	uint32_t pad;
	uint64_t epoch;
	uint64_t size;
	uint64_t arena_len;
};

/** Where everything of a client segment lies (offsets from its start). */
struct sdr_client_layout {
	uint64_t rpc_off;
	uint32_t queues;		/* SDK: queue pairs, 1 .. SDR_SHM_MAX_QUEUES */
	uint64_t sq_off[SDR_SHM_MAX_QUEUES];	/* SDK: requests, client -> dataplane */
	uint64_t cq_off[SDR_SHM_MAX_QUEUES];	/* SDK: completions, dataplane -> client */
	uint64_t arena_off;		/* SDK: page aligned */
	uint64_t arena_len;
	uint64_t size;
};

/** The largest arena a client segment may have (the dataplane's [dataplane] arena is at
 * most 64 GiB): a welcome that says more is not believed. */
#define SDR_SHM_ARENA_MAX	(64ull << 30)

/**
 * The layout of a client segment of @p kind with an arena of @p arena_len bytes (at most
 * SDR_SHM_ARENA_MAX: above it, SDR_SHM_ARENA_MAX, so no sum wraps) and, for
 * an SDK client, @p queues queue pairs (1 .. SDR_SHM_MAX_QUEUES: queue pair e carries the
 * requests and completions of the connections of engine e).
 */
void sdr_client_layout(uint32_t kind, uint64_t arena_len, uint32_t queues,
		       struct sdr_client_layout *L);

/* ---- helpers of both sides ---- */

/** CLOCK_MONOTONIC in nanoseconds (the clock of heartbeats). */
uint64_t sdr_shm_mono_ns(void);

/**
 * How long ago a heartbeat stamp was set. The stamp is read before the clock, so a stamp
 * refreshed concurrently reads as 0, never as a huge age.
 */
uint64_t sdr_shm_age_ns(const volatile uint64_t *stamp);

/** "/sdr-<instance>". @return 0 or -1 when the name does not fit or has a '/'. */
int sdr_shm_path(const char *instance, char *path, size_t len);

/** Is the dataplane behind this status alive (flag set, heartbeat within 2 s, pid there)? */
int sdr_shm_dp_alive(const struct sdr_shm_status *st);

/**
 * Map the status segment of an instance read-only and check its owner, magic and version.
 * Only a segment of root's, of the caller's user or of the user the environment variable
 * SDR_DATAPLANE_USER names (a name or a uid) is believed: anyone can create one under a
 * name no dataplane uses. sdr_client_attach() also checks that the socket's server is the
 * process the segment names, of that user (SO_PEERCRED).
 * @return it, or NULL with a one-line reason in @p err.
 */
const struct sdr_shm_status *sdr_shm_status_map(const char *instance, char *err, size_t errlen);

/** Unmap it. */
void sdr_shm_status_unmap(const struct sdr_shm_status *st);

/**
 * Copy a consistent stats snapshot (retrying torn reads) with its counts clamped to the
 * arrays. @return 0 or -1 (gave up).
 */
int sdr_shm_read_stats(const struct sdr_shm_status *st, struct sdr_shm_stats *out);

/* ---- the client's side ---- */

/** An attached client (private to its process). */
struct sdr_client {
	int fd;				/* the socket; -1 once the dataplane is gone */
	const struct sdr_shm_status *st;
	uint8_t *seg;
	uint64_t seg_len;
	struct sdr_client_layout L;
	uint32_t kind;
	uint32_t slot;
	uint64_t epoch;
	uint32_t seq;
	struct sdr_rpc *rpc;
	/** the last reply, copied out of the segment once (sdr_client_call()): its rc, len
	 * and union are what the client reads, never the segment's, which the other side may
	 * rewrite meanwhile; a text (an admin reply, a refusal) is NUL-terminated at len */
	struct sdr_rpc_rep *rep;
	struct sdr_spsc_end sq[SDR_SHM_MAX_QUEUES];	/* SDK: we produce */
	struct sdr_spsc_end cq[SDR_SHM_MAX_QUEUES];	/* SDK: we consume */
	uint8_t *arena;
	char instance[SDR_SHM_NAME_MAX];
};

/**
 * Attach to an instance as a client of @p kind: map its status, connect to its socket, say
 * hello and map the segment that comes back.
 * @return 0, or -1 with a one-line reason in @p err (no such instance, not running, another
 *   control version, permission denied, all slots taken).
 */
int sdr_client_attach(const char *instance, uint32_t kind, struct sdr_client *c, char *err,
		      size_t errlen);

/** Detach: close the socket (the dataplane then releases everything the client held). */
void sdr_client_detach(struct sdr_client *c);

/**
 * Run the call in c->rpc->req (op and arguments filled in; seq is set here) and wait for
 * the reply, which is copied once into c->rep (len below SDR_RPC_REPLY_MAX; the text of
 * an admin reply or of a refusal NUL-terminated there).
 * @return the reply code (SDR_CTL_*, from the copy), or -1 with a reason in @p err when the
 *   dataplane did not answer in time or is gone.
 */
int sdr_client_call(struct sdr_client *c, unsigned int timeout_ms, char *err, size_t errlen);

/** The dataplane still serves this client: socket open, same epoch, heartbeat fresh. */
int sdr_client_alive(struct sdr_client *c);

/**
 * Why the dataplane no longer serves the client, as one line ("dataplane 'x' (pid N)
 * stopped", "restarted (pid N, now pid M)", ...).
 */
void sdr_client_gone_reason(struct sdr_client *c, char *buf, size_t len);

#endif /* SDR_SHM_H */
