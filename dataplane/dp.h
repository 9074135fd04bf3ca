/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runtime state of sdr-dataplane: ports, connections, the pipeline's counters — the
 * context every module of dataplane/ is given (main.c owns the one instance). The poll
 * loops own what they touch; the other threads read under conns_lock or the counter slots.
 */
#ifndef SDR_DP_H
#define SDR_DP_H

#include <stdint.h>

#include <pcap/pcap.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>
#include <rte_ring.h>

#include "config.h"
#include "dma.h"
#include "dp_counters.h"
#include "link_emu.h"
#include "qpn_table.h"
#include "roce_parse.h"
#include "sdr_endpoint.h"
#include "traffic.h"

#define DP_BURST_MAX 256
/* dp_ctx.engine_up: before the engine lcores start a job runs in the caller; once they
 * have stopped, nowhere */
#define DP_ENGINES_NOT_YET	0
#define DP_ENGINES_UP		1
#define DP_ENGINES_DONE		2
/* A frame: up to 4096 B of payload, RoCEv2 headers (IPv6 + VLAN), pad and ICRC. */
#define DP_FRAME_ROOM 4352
#define DP_TX_PENDING 1024	/* frames held per port while its TX rings are full */
/*
 * Counter slots: the lcores that write a port's counters and the stage table each write
 * their own slot (no shared cache line, no atomics), and readers add the slots up.
 * Slot 0 is the poll loop that owns the endpoints (rtc, or the send half of split),
 * 1..rx_lcores the receive workers, the last one the FEC worker.
 */
#define DP_SLOT_MAIN 0
#define DP_SLOT_FEC (DP_MAX_RX_LCORES + 1)
#define DP_NSLOTS (DP_MAX_RX_LCORES + 2)
/*
 * AF_XDP receive buffers: DPDK 22.11's net_af_xdp makes its UMEM of the receive pool, one
 * chunk per mbuf, and the kernel takes chunks of at most a page. 3072 bytes of data room
 * keep an mbuf under 4 KiB and hold a frame with a 2048-byte RoCE payload.
 */
#define DP_XDP_FRAME_ROOM 3072
/* A received frame that came in several mbufs is copied whole into this much. */
#define DP_FRAME_SCRATCH 16384

/* The port counters (DP_PORT_COUNTERS) and their table: dp_counters.h. */

/* One lcore's counters of one port. */
struct dp_port_stats {
	uint64_t counters[DP_PORT_NCOUNTERS];
	uint64_t verdicts[ROCE_V_COUNT];
} __rte_cache_aligned;

/* One TX queue's frames that the device had no room for, sent first next time. */
/*
 * A device that takes none of a queue's frames for this long (a memif peer gone, a link
 * down) has them dropped, and every frame after them until it takes one again: frames do
 * not wait for ever in the queue and the link emulator, holding the pool's mbufs and the
 * application's buffers (a zero-copy send completes only when its frames are freed).
 */
#define DP_TX_STALL_MS 1000

struct dp_txq {
	uint16_t n;
	uint8_t stalled;		/* the device took nothing for DP_TX_STALL_MS */
	uint8_t no_cleanup;		/* rte_eth_tx_done_cleanup() not supported */
	uint64_t since;			/* TSC: when it last took a frame, or n became > 0 */
	uint64_t cleaned;		/* TSC: its last rte_eth_tx_done_cleanup() */
	struct rte_mbuf *pending[DP_TX_PENDING];
} __rte_cache_aligned;	/* (each engine's queue of a port on lines of its own) */

struct dp_port {
	const struct dp_port_cfg *cfg;
	uint16_t port_id;
	struct rte_ether_addr mac;
	struct link_emu *link;		/* egress emulator (engine 0's, path 0), or NULL */
	/* engine e's own copy of each of the link's paths (elink[0][0] is link); a frame takes
	 * path link_emu_path_of(its UDP source port, npaths) */
	struct link_emu *elink[DP_MAX_ENGINES][LINK_EMU_MAX_PATHS];
	unsigned int npaths;		/* 1 .. LINK_EMU_MAX_PATHS (with a link) */
	struct qpn_table *qpns;		/* local QPN -> connection index (engine 0's) */
	/* mode = engines: engine e's table (eqpns[0] is qpns): each engine looks up, and its
	 * jobs change, its own only; another engine reads it under its sequence count, only to tell
	 * a packet steered to the wrong queue from one nobody owns (wrong_engine_queue) */
	struct qpn_table *eqpns[DP_MAX_ENGINES];
	uint32_t eqpns_seq[DP_MAX_ENGINES];	/* seqcount.h */
	struct rte_mempool *rx_pool;	/* AF_XDP ports: their own receive pool, else NULL */
	uint32_t l3_mtu;		/* largest IP packet the device takes */
	/* data frames go out zero-copy: headers, the application's bytes, tail (holds.h);
	 * 0 when zero_copy = no or the device cannot send multi-segment frames */
	uint8_t zero_copy;
	uint8_t multi_seg;		/* the device can send multi-segment frames */
	uint8_t dma;			/* zero-copy buffers are mapped for its device (dma.h) */
	/* why it copies where zero_copy was wanted (pipeline show), or NULL */
	const char *copy_why;
	uint8_t stopped;		/* dp_ports_stop(): the device reads no buffer any more */
	/* per TX queue, frames the device had no room for, sent first next time
	 * (backpressure: the packetizer stops while they are nearly DP_TX_PENDING in all;
	 * only overflow is dropped) */
	struct dp_txq *txq;		/* cfg->tx_queues of them (engine e: queue e alone) */
	int exception;			/* port index for non-RoCE traffic, or -1 */
	pcap_t *pcap;			/* capture = FILE: every frame in and out */
	pcap_dumper_t *capture;
	rte_spinlock_t capture_lock;	/* engines write the capture one frame at a time */
	struct dp_port_stats stats[DP_NSLOTS];	/* read with dp_port_counter/dp_port_verdict */
};

/*
 * [pipeline] placement = workers: the payload copy of one claimed data packet, made by the
 * receive worker that received it. The main lcore fills it and takes it back.
 */
#define DP_COPY_JOBS 4096	/* per receive worker */
struct dp_copy {
	struct sdr_rx_claim cl;
	struct rte_mbuf *m;		/* the packet, freed by the worker after the copy */
	struct sdr_ep *ep;
	uint32_t idx;			/* in its worker's array */
};

struct dp_copies {
	struct rte_ring *todo;		/* main -> worker: copies to make */
	struct rte_ring *done;		/* worker -> main: copies made, to commit */
	struct dp_copy *jobs;		/* DP_COPY_JOBS */
	uint32_t *free;			/* indices of free jobs (main lcore only) */
	uint32_t nfree;
};

/* Online auto of one connection: decided on the management thread (ctl_auto.c). */
#define DP_AUTO_HIST 16
struct dp_auto_rec {
	uint64_t t_ns;			/* since the dataplane started */
	struct sdr_scheme from, to;
	char why[200];
};
struct dp_auto {
	rte_spinlock_t lock;		/* the management thread writes, telemetry reads */
	uint32_t epoch;			/* the endpoint this is about: its dp_conn epoch (a new or
					 * rebuilt one starts over, even at the same address) */
	uint64_t next_ns;		/* the next decision */
	struct sdr_auto_decision last;	/* the latest one */
	struct sdr_auto_path path;	/* the path it was made for */
	uint32_t asked;			/* changes asked of the endpoint */
	struct dp_auto_rec hist[DP_AUTO_HIST];	/* the last changes asked, a ring */
};

/* Several paths ([conn] paths): what the management thread last saw and decided. */
#define DP_PATHS_HIST 16
struct dp_paths_rec {
	uint64_t t_ns;			/* since the dataplane started */
	uint32_t from_mask, to_mask;	/* paths the channels were on, and go to */
	char why[200];
};
struct dp_paths {
	rte_spinlock_t lock;		/* the management thread writes, sdrctl reads */
	uint32_t epoch;			/* the endpoint this is about: its dp_conn epoch (a new or
					 * rebuilt one starts over, even at the same address) */
	uint64_t next_ns;		/* the next decision */
	uint64_t decisions;
	struct path_sel_path path[PATH_SEL_MAX_PATHS];	/* as of the last decision */
	double fps[PATH_SEL_MAX_PATHS];	/* frames per second sent on each, the last period */
	uint64_t prev_ns;		/* the engine clock at the last decision */
	struct path_sel_decision last;
	uint32_t moves;			/* moves asked of the endpoint */
	struct dp_paths_rec hist[DP_PATHS_HIST];	/* the last moves, a ring */
};

struct dp_conn {
	struct dp_auto autod;
	struct dp_paths pathd;
	struct dp_conn_cfg *cfg;
	unsigned int port;
	struct sdr_ep *ep;		/* NULL: no connection in this entry (deleted) */
	struct traffic *traffic;
	unsigned int engine;		/* mode = engines: the engine that owns it, else 0 */
	int owner;			/* the SDK client that has it open, or -1 */
	int creator;			/* the SDK client that made it (sdr_qp_create), or -1 */
	uint32_t epoch;			/* endpoints installed in this entry so far: tells the
					 * endpoint in place from one before it */
};

/* Pipeline stages, for the per-stage cost table (like VPP's "show run"). */
#define DP_STAGES(X) \
	X(RX,		"rx") \
	X(PARSE,	"parse_icrc") \
	X(DELIVER,	"receive_backend") \
	X(COPY,		"payload_copy") \
	X(APP,		"traffic") \
	X(OUTPUT,	"reliability_packetizer") \
	X(ICRC,		"payload_icrc") \
	X(LINK,		"link_emulator") \
	X(TX,		"tx") \
	X(FEC,		"fec_worker")

enum dp_stage {
#define X(sym, name) DP_STAGE_##sym,
	DP_STAGES(X)
#undef X
	DP_NSTAGES
};

struct dp_stage_stats {
	uint64_t calls;
	uint64_t pkts;
	uint64_t cycles;	/* every call, empty polls included */
	uint64_t busy_cycles;	/* calls that handled at least one packet: the cost per packet */
};

/* One lcore's row of the stage table, on cache lines of its own (lcores never share one). */
struct dp_slot_stages {
	struct dp_stage_stats s[DP_NSTAGES];
} __rte_cache_aligned;

struct dp_ctx {
	struct dp_cfg cfg;
	/* the frames' mbufs: with mode = engines one pool per engine (shared nothing: an
	 * engine's RX queues, frames and emulated links take from its own), else pool[0] */
	struct rte_mempool *pool[DP_MAX_ENGINES];
	unsigned int npools;
	uint32_t pool_mbufs;		/* mbufs in each */
	uint16_t rx_desc;		/* receive descriptors an RX queue asks of its pool */
	/* zero-copy send: the mbufs that point into a message and carry pad + ICRC (holds.h),
	 * one pool per engine as pool[] (NULL: no port sends zero-copy) */
	struct rte_mempool *zc_pool[DP_MAX_ENGINES];
	int iova_va;			/* EAL's IOVA is the virtual address */
	struct dp_dma dma;		/* buffers mapped for the ports' DMA (dma.h) */
	/* an emulated link takes no data frame while fewer mbufs than this are free in its
	 * engine's pool, so control frames (ACKs) always find some (pipeline.c, egress()) */
	unsigned int link_reserve;
	struct dp_port ports[DP_MAX_PORTS];
	unsigned int nports;
	char traffic_log[256];		/* --traffic log=FILE, written with the summary */
	struct dp_conn conns[DP_MAX_CONNS];
	unsigned int nconns;
	/* split pipeline: parsed mbufs, one SP/SC ring per receive worker to the send lcore */
	struct rte_ring *split_rings[DP_MAX_RX_LCORES];
	unsigned int rx_lcore_id[DP_MAX_RX_LCORES];	/* the lcore of each receive worker */
	unsigned int engine_lcore[DP_MAX_ENGINES];	/* mode = engines: the lcore of each */
	struct dp_copies copies[DP_MAX_RX_LCORES];	/* placement = workers */
	uint64_t copies_out;		/* claimed, not committed (main lcore's count) */
	/* [pipeline] fec = lcore: erasure-coding jobs to the FEC lcore and back */
	struct rte_ring *fec_in, *fec_out;
	uint64_t fec_out_jobs;		/* jobs in the rings or running (poll loop's count) */
	struct dp_slot_stages stages[DP_NSLOTS];	/* read with dp_stage_sum */
	/* read on every loop by every lcore: apart from what the lcores write */
	uint64_t tsc_hz __rte_cache_aligned;
	uint64_t start_tsc;
	uint64_t start_mono_ns;	/* CLOCK_MONOTONIC at start_tsc: times other processes compare */
	volatile int quit;
	uint32_t drops_logged;		/* --log-drops: lines printed (atomic add) */
	uint64_t loops __rte_cache_aligned;	/* of the main poll loop (slot 0) */
	uint64_t idle_sleeps __rte_cache_aligned;	/* of every poll loop (atomic add) */
	int stats_lcore __rte_cache_aligned;
	struct dp_ctl *ctl;		/* the control service (control.h) */
	volatile int engine_up;		/* DP_ENGINES_*: whether the lcores that own the
					 * endpoints poll (jobs go to them), will, or did */
	/*
	 * Held by the poll loop while it adds, rebuilds or deletes a connection, and by the
	 * other threads (main: stats snapshot and line; telemetry) while they read connections.
	 * Never taken on the packet path.
	 */
	rte_spinlock_t conns_lock;
};

const char *dp_stage_name(enum dp_stage s);

/** Nanoseconds since the dataplane started, from the TSC. */
uint64_t dp_now_ns(const struct dp_ctx *ctx);

#endif /* SDR_DP_H */
