/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control segment: POSIX shared memory /sdr-<instance> that the dataplane creates and
 * sdrctl and SDK applications map. No EAL in clients: the rings are rte_rings initialised
 * in place (rte_ring_init works without EAL) and the rest is plain memory.
 *
 *   header       magic, layout version, sizes, dataplane pid, epoch, heartbeat
 *   cmd ring     MP/SC ring of client slot numbers: "slot N has a command for you"
 *   clients      one slot per attached client: lease, command and reply buffers, and the
 *                SDK queues (send/receive requests to the dataplane, completions back)
 *   stats        a snapshot the dataplane republishes every 100 ms under a sequence
 *                counter; readers never block the writer (they retry a torn read)
 *   arena        message buffers: each client slot owns a fixed share
 *
 * A client claims a slot with a compare-and-swap, keeps its lease fresh, and is reclaimed
 * by the dataplane when its lease expires and its process is gone.
 */
#ifndef SDR_SHM_H
#define SDR_SHM_H

#include <stddef.h>
#include <stdint.h>

#include <rte_ring.h>

#define SDR_SHM_MAGIC		0x5344525F4354524Cull	/* "SDR_CTRL" */
#define SDR_SHM_VERSION		3
#define SDR_SHM_NAME_MAX	64
#define SDR_SHM_MAX_CLIENTS	32
#define SDR_SHM_SDK_CLIENTS	16	/* slots 0..15: applications, each with an arena share;
					 * 16..31: sdrctl, no arena */
#define SDR_SHM_CMD_LEN		2048
#define SDR_SHM_REPLY_LEN	(128 * 1024)
#define SDR_SHM_QUEUE_DEPTH	1024		/* SDK queue entries, a power of two */
#define SDR_SHM_LEASE_NS	3000000000ull	/* a client silent this long may be gone */
#define SDR_SHM_MAX_PORTS	8
#define SDR_SHM_MAX_CONNS	64

/* Reply codes, as sdrctl's exit status. */
#define SDR_CTL_OK		0
#define SDR_CTL_FAILED		1
#define SDR_CTL_BAD_INPUT	2

/* Command flags. */
#define SDR_CMD_F_JSON		0x1u
#define SDR_CMD_F_SDK		0x2u	/* from libsdr: the internal 'sdk' commands are allowed */

/* SDK requests (client -> dataplane) and completions (dataplane -> client). */
enum sdr_sdk_op {
	SDR_SDK_SEND = 1,	/* send buf[off, off+len) with imm */
	SDR_SDK_RECV,		/* post a receive into buf[off, off+len), bitmap at bm_off */
	SDR_SDK_RECV_DONE,	/* the application is done with a receive (recv complete) */
	SDR_SDK_STREAM,		/* start a streamed send of buf[off, off+len) with imm */
	SDR_SDK_STREAM_ADD,	/* stream @cookie: message bytes [off, off+len) are ready */
	SDR_SDK_STREAM_END,	/* stream @cookie: the rest is ready */
};

struct sdr_sdk_req {
	uint16_t op;
	uint16_t conn;		/* connection index in the dataplane */
	uint32_t imm;
	uint64_t off;		/* buffer offset in the arena */
	uint64_t len;
	uint64_t bm_off;	/* receive: chunk bitmap bytes (0: none) */
	uint64_t cookie;
	uint32_t handle;	/* RECV_DONE: the cqe's handle, or UINT32_MAX (not completed) */
	uint32_t pad;
};

struct sdr_sdk_cqe {
	uint16_t op;		/* SDR_SDK_SEND or SDR_SDK_RECV */
	uint16_t conn;
	int32_t status;		/* 0 ok, else an SDR_ERR_* / sdr_done_status */
	uint32_t slot;		/* receive: the handle for bitmap, imm and recv complete */
	uint32_t imm;		/* receive: the user immediate when complete */
	uint32_t imm_ok;	/* receive: low bits of imm that are valid (0: not all in) */
	uint32_t decoded;
	uint32_t retransmitted;
	uint32_t handle;	/* receive: hand it back in RECV_DONE */
	uint64_t cookie;
	uint64_t start_ns;
	uint64_t end_ns;
};

/*
 * A client slot's life: FREE -CAS-> CLAIMING (the client fills pid, lease, queues) ->
 * ACTIVE -> CLOSING (the client left, or the dataplane found it dead) -> FREE once the
 * dataplane has released everything the client held. Only the dataplane frees a slot.
 */
enum sdr_client_state {
	SDR_CLIENT_FREE = 0,
	SDR_CLIENT_ACTIVE = 1,
	SDR_CLIENT_CLOSING = 2,
	SDR_CLIENT_CLAIMING = 3,
};

struct sdr_shm_client {
	volatile uint32_t state;	/* enum sdr_client_state */
	int32_t pid;
	uint64_t start_time;		/* the process's start (/proc/PID/stat): a reused pid differs */
	volatile uint64_t lease_ns;	/* CLOCK_MONOTONIC of the last sign of life */
	volatile uint32_t cmd_seq;	/* the client bumps it after writing cmd */
	volatile uint32_t reply_seq;	/* the dataplane sets it to cmd_seq after replying */
	uint32_t cmd_flags;
	int32_t reply_rc;
	uint32_t reply_len;
	uint32_t pad;
	char cmd[SDR_SHM_CMD_LEN];
	char reply[SDR_SHM_REPLY_LEN];
	/* SDK: the client's share of the arena, and its queues (offsets from the segment) */
	uint64_t arena_off;
	uint64_t arena_len;
	uint64_t sq_off;		/* struct rte_ring of sdr_sdk_req, SP/SC */
	uint64_t cq_off;		/* struct rte_ring of sdr_sdk_cqe, SP/SC */
	volatile uint64_t sdk_conns;	/* bitmask of connection indices the client uses */
};

/* Counters published for sdrctl stats, read without a command round trip. */
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

struct sdr_shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint64_t total_size;
	char name[SDR_SHM_NAME_MAX];
	int32_t dp_pid;
	volatile uint32_t alive;	/* 1 while the dataplane serves the segment */
	uint64_t epoch;			/* CLOCK_REALTIME ns of creation: a restart changes it */
	volatile uint64_t heartbeat_ns;	/* CLOCK_MONOTONIC, refreshed every 100 ms */
	uint64_t cmd_ring_off;
	uint64_t clients_off;
	uint64_t stats_off;
	uint64_t arena_off;
	uint64_t arena_size;
};

/** CLOCK_MONOTONIC in nanoseconds (the clock of leases and heartbeats). */
uint64_t sdr_shm_mono_ns(void);

/**
 * How long ago a lease or heartbeat stamp was set. The stamp is read before the clock, so
 * a stamp refreshed concurrently reads as 0, never as a huge age.
 */
uint64_t sdr_shm_age_ns(const volatile uint64_t *stamp);

/** "/sdr-<instance>". @return 0 or -1 when the name does not fit or has a '/'. */
int sdr_shm_path(const char *instance, char *path, size_t len);

/**
 * Create the segment of an instance (the dataplane). An existing segment of the same name
 * is replaced (its dataplane is gone or about to be).
 * @param arena_size bytes of message buffers shared by all clients.
 * @return the mapped header, or NULL with a message in @p err.
 */
struct sdr_shm_hdr *sdr_shm_create(const char *instance, uint64_t arena_size, char *err,
				   size_t errlen);

/** Unmap and unlink (the dataplane, at exit). */
void sdr_shm_destroy(struct sdr_shm_hdr *h);

/**
 * Map an existing segment (clients) and check its magic and version.
 * @return the header, or NULL with a one-line reason in @p err.
 */
struct sdr_shm_hdr *sdr_shm_attach(const char *instance, char *err, size_t errlen);

/** Unmap (clients). */
void sdr_shm_detach(struct sdr_shm_hdr *h);

static inline void *
sdr_shm_at(const struct sdr_shm_hdr *h, uint64_t off)
{
	return (uint8_t *)(uintptr_t)h + off;
}

static inline struct sdr_shm_client *
sdr_shm_client(const struct sdr_shm_hdr *h, unsigned int i)
{
	return (struct sdr_shm_client *)sdr_shm_at(h, h->clients_off) + i;
}

static inline struct rte_ring *
sdr_shm_cmd_ring(const struct sdr_shm_hdr *h)
{
	return sdr_shm_at(h, h->cmd_ring_off);
}

static inline struct sdr_shm_stats *
sdr_shm_stats(const struct sdr_shm_hdr *h)
{
	return sdr_shm_at(h, h->stats_off);
}

/** Is the dataplane behind this segment alive (flag set, heartbeat within 2 s)? */
int sdr_shm_dp_alive(const struct sdr_shm_hdr *h);

/**
 * Claim a client slot (CAS FREE -> CLAIMING), set its lease, reset its queues, then make it
 * ACTIVE: an application's (@p sdk: one with a share of the arena) or sdrctl's.
 * @return slot index, or -1 when every slot is taken.
 */
int sdr_shm_claim(struct sdr_shm_hdr *h, int sdk);

/**
 * Leave: mark the slot CLOSING and tell the dataplane, which releases what the client held
 * (receives, connections; sends still in flight finish unseen) and then frees the slot.
 */
void sdr_shm_release(struct sdr_shm_hdr *h, int slot);

/** The dataplane's side: free a CLOSING slot once nothing of its client is left. */
void sdr_shm_free_slot(struct sdr_shm_hdr *h, unsigned int slot);

/** The process that claimed the slot is still there (same pid, same start time). */
int sdr_shm_client_alive(const struct sdr_shm_client *c);

/** Start time of process @p pid in clock ticks since boot, or 0 if unknown. */
uint64_t sdr_shm_proc_start(int pid);

/**
 * Run one command on the dataplane: write it, signal the dataplane, wait for the reply.
 * @param timeout_ms how long to wait for the reply.
 * @return the reply code (SDR_CTL_*), or -1 with a reason in the reply buffer when the
 *   dataplane did not answer.
 */
int sdr_shm_command(struct sdr_shm_hdr *h, int slot, const char *cmd, uint32_t flags,
		    unsigned int timeout_ms, const char **reply);

/** Copy a consistent stats snapshot (retrying torn reads). @return 0 or -1 (gave up). */
int sdr_shm_read_stats(const struct sdr_shm_hdr *h, struct sdr_shm_stats *out);

#endif /* SDR_SHM_H */
