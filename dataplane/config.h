/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's configuration file (INI, read with DPDK's rte_cfgfile): the instance,
 * its ports, link emulator profiles, the pipeline and static connections. Loading needs no
 * EAL, so the loader is unit-tested and fuzzed on its own. Every problem is reported as
 * one line naming the file, the section and the key.
 */
#ifndef SDR_DP_CONFIG_H
#define SDR_DP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "link_emu.h"
#include "sdr_endpoint.h"

#define DP_NAME_LEN	32
#define DP_MAX_PORTS	16
#define DP_MAX_LINKS	16
#define DP_MAX_CONNS	64
#define DP_MAX_QUEUES	64	/* rx_queues, tx_queues of a port */
#define DP_MAX_RX_LCORES 8	/* receive workers of a split pipeline */
#define DP_MAX_ENGINES	8	/* engine lcores of [pipeline] mode = engines */
/* The fewest mbufs a pool has: [dataplane] mbufs at least, per engine; what a pool is cut
 * down to when EAL has too little memory (ports.c) */
#define DP_MIN_MBUFS	1024
#define DP_MAX_FEC_JOBS	64	/* per connection: the FEC rings hold every job of every one */
#define DP_DEVICE_LEN	256
#define DP_MAX_ALLOW	16
#define DP_CONTROL_DIR_LEN 64	/* a socket path is at most 107 bytes */

/** An address prefix of a port's allowlist. */
struct dp_prefix {
	uint8_t version;		/**< 4 or 6 */
	uint8_t len;			/**< prefix length in bits */
	uint8_t ip[16];
};

struct dp_link_cfg {
	char name[DP_NAME_LEN];
	struct link_emu_config emu;
	unsigned int npaths;		/**< parallel paths (paths = N), 1 .. LINK_EMU_MAX_PATHS */
	/** pathK = WORDS as written (empty: none), applied over emu when the file is read */
	char path_words[LINK_EMU_MAX_PATHS][LINK_EMU_FMT_MAX];
	/** path K - 1 as it runs: emu, then pathK's words */
	struct link_emu_config path[LINK_EMU_MAX_PATHS];
};

/** [port] steering: how each packet reaches the engine that owns its connection. */
enum dp_steering {
	DP_STEER_QUEUE,		/**< TX queue e of one side is RX queue e of the other (ring, memif) */
	DP_STEER_RSS,		/**< the receiver's RSS (our key, entry i -> queue i mod engines);
				 *   senders pick source ports for it (rss.h) */
};

/** [port] zero_copy: data frames point into the message instead of carrying a copy. */
enum dp_zero_copy {
	DP_ZC_DEFAULT,		/**< yes on virtual devices (their TX reads host memory), else no */
	DP_ZC_YES,
	DP_ZC_NO,
};

/** [port] dma_map: which devices get the application's buffers mapped for their DMA. */
enum dp_dma_map {
	DP_DMA_AUTO,		/**< a device on a hardware bus (a NIC) that sends zero-copy */
	DP_DMA_YES,		/**< any device that sends zero-copy (a vdev maps nothing) */
};

struct dp_port_cfg {
	char name[DP_NAME_LEN];
	char device[DP_DEVICE_LEN];	/**< a vdev spec, ring:PAIR:SIDE, or an ethdev name */
	uint8_t mac[6];
	uint8_t has_mac;
	uint8_t has_ipv4;
	uint8_t has_ipv6;
	uint8_t ipv4[4];
	uint8_t ipv6[16];
	uint32_t mtu;			/**< largest frame payload (L3) the port carries */
	uint16_t rx_queues;
	uint16_t tx_queues;
	char link[DP_NAME_LEN];		/**< [link NAME] on this port's egress, or empty */
	char exception[DP_NAME_LEN];	/**< port that gets non-RoCE traffic, or empty (drop) */
	char capture[256];		/**< pcap file of every frame in and out, or empty */
	struct dp_prefix allow[DP_MAX_ALLOW];	/**< RoCE only from these sources (none: any) */
	uint8_t nallow;
	uint8_t zero_copy;		/**< enum dp_zero_copy */
	uint8_t dma_map;		/**< enum dp_dma_map */
	uint8_t steering;		/**< enum dp_steering */
};

struct dp_conn_cfg {
	char name[DP_NAME_LEN];
	char port[DP_NAME_LEN];
	uint8_t peer_mac[6];
	uint8_t peer_ip_version;
	uint8_t peer_ip[16];
	uint8_t scheme_auto;		/**< scheme = auto: the model picks at start */
	uint32_t auto_min_chunk;	/**< the smallest chunk auto may change to (0: default) */
	uint8_t peer_check;		/**< drop packets not from peer_ip or with another P_Key */
	uint8_t nack_allowance_set;	/**< nack_allowance given; else RTT/100 */
	uint8_t path_fail_set;		/**< path_fail given; else from the RTT */
	double expected_drop;		/**< expected_drop (NaN: none given) */
	uint16_t sport_lo, sport_hi;	/**< accepted UDP source ports of the peer's packets */
	int16_t engine;			/**< mode = engines: its engine (-1: from its QPNs) */
	/*
	 * stripes = N: the connection's messages go round-robin over N stripes, each a
	 * connection entry of its own (endpoint, QPN range, engine): stripe 0 is [conn NAME],
	 * stripe s is "NAME/s", with QPNs s * (channels * generations + 1) further on both
	 * sides, on the engine after stripe s - 1's, paced at rate / N.
	 */
	uint8_t stripes;		/**< 1..DP_MAX_ENGINES */
	uint8_t stripe;			/**< which one this entry is: 0..stripes - 1 */
	uint64_t path_period_ns;	/**< paths: the management thread decides this often */
	struct sdr_ep_cfg ep;		/**< path addresses filled in from the port at start */
};

enum dp_pipeline_mode {
	DP_PIPE_RTC,		/**< every stage on one lcore (run to completion) */
	DP_PIPE_SPLIT,		/**< receive stages on one lcore, send stages on another */
	DP_PIPE_ENGINES,	/**< engine lcores, each owning its connections end to end */
};

struct dp_cfg {
	char file[256];
	char name[DP_NAME_LEN];		/**< instance name: shared memory /sdr-<name> */
	uint32_t mbufs;
	uint32_t zc_mbufs;		/**< 0: twice mbufs */
	uint32_t burst;
	uint32_t idle_sleep_us;		/**< pause of an idle poll loop; 0: busy poll */
	uint32_t log_drops;		/**< --log-drops: frames the ports drop to show */
	double stats_period_s;		/**< 0: no periodic line */
	uint64_t arena_bytes;		/**< buffers of SDK applications, split among them */
	uint64_t conn_memory;		/**< most buffers one connection's endpoint takes */
	uint64_t user_memory;		/**< most buffers one user's applications' connections
					 *   take together */
	uint32_t sdk_slots_per_user;	/**< application slots one UID holds at once */
	char control_dir[DP_CONTROL_DIR_LEN];	/**< where the control sockets go */
	char control_group[DP_NAME_LEN];	/**< may use the SDK socket ("": owner only) */
	enum dp_pipeline_mode mode;
	uint8_t fec_lcore;		/**< erasure coding on its own lcore (else inline) */
	uint32_t fec_jobs;		/**< with fec_lcore: jobs out per connection at most */
	uint32_t rx_lcores;		/**< split: receive workers (RX queue q: worker q % n) */
	uint32_t engines;		/**< mode = engines: engine lcores (RX, TX queue e: engine e) */
	uint8_t place_workers;		/**< split: payload copies on the receive workers */
	uint8_t placement_set;		/**< placement given in the file */
	struct dp_port_cfg ports[DP_MAX_PORTS];
	unsigned int nports;
	struct dp_link_cfg links[DP_MAX_LINKS];
	unsigned int nlinks;
	struct dp_conn_cfg conns[DP_MAX_CONNS];
	unsigned int nconns;
};

/**
 * Load and check a configuration file.
 * @param err receives one line ("file: [section] key: reason") on failure.
 * @return 0 or -1.
 */
int dp_config_load(const char *file, struct dp_cfg *cfg, char *err, size_t errlen);

/**
 * Build or change a connection from key/value words, with the keys of a [conn NAME]
 * section (dashes or underscores): "port p0 peer-ip 10.0.0.2 local-qpn 0x100 ...".
 * @param fresh  start from the defaults (conn add) or from @p c (conn set).
 * @return 0, or -1 with one line in @p err naming the section and key.
 */
/**
 * The key a command-line word names, as the file spells it (dashes become underscores), into
 * @p key of @p len bytes: what dp_config_conn_words() looks up.
 */
void dp_config_key_name(char *key, size_t len, const char *word);

int dp_config_conn_words(const struct dp_cfg *cfg, struct dp_conn_cfg *c, const char *name,
			 int argc, char *const argv[], int fresh, char *err, size_t errlen);

/** Entry @p c is connection @p name or one of its stripes ("NAME/s"). */
int dp_config_conn_is(const struct dp_conn_cfg *c, const char *name);

/** scheme = auto changing its scheme with the link: an end that sends (dir = send or
 * both) of a connection that config.c gave room for every candidate code. */
static inline int
dp_conn_auto_changes(const struct dp_conn_cfg *c)
{
	return c->scheme_auto && c->ep.rel.scheme_may_change && (c->ep.attr.dir & SDR_DIR_SEND);
}

/** The model's point for connection @p c's path and largest message (drop left at its
 * default: the caller sets it), as scheme = auto ranks the schemes. */
void dp_conn_model_params(const struct dp_conn_cfg *c, struct sdr_model_params *p);

/**
 * The device @p device sends a zero-copy chain (an mbuf attached to an application's
 * buffer) correctly: one whose transmit copies the frame in software, from any memory
 * (memif without its own zero-copy=yes, AF_PACKET, AF_XDP, pcap, TAP, null). Not a PCI NIC,
 * nor a device over one (bonding, failsafe), whose DMA reads only registered memory; not
 * memif with zero-copy=yes, which sends only buffers in its own mempool region.
 */
int dp_config_copying_device(const char *device);

/**
 * Whether @p device names a NIC on a hardware bus (a PCI address, an mlx5 representor or
 * sub-function): its RX queue is its RSS's choice, and it reads frames by DMA.
 */
int dp_config_nic_device(const char *device);

/** Why a verbs peer's connection cannot go with several engines. */
#define DP_VERBS_PEER_ENGINES "a verbs peer's NIC picks its own UDP source ports, so its " \
	"frames would reach an engine by chance (wrong_engine_queue): use one engine"


/** Find a port / link / connection by name. @return index or -1. */
int dp_config_port(const struct dp_cfg *cfg, const char *name);
int dp_config_link(const struct dp_cfg *cfg, const char *name);
int dp_config_conn(const struct dp_cfg *cfg, const char *name);

/**
 * The instance name (--name): 1 to 31 letters, digits, '-', '_' or '.', as the file's
 * [dataplane] name. @return 0, or -1 (nothing changed) for another string.
 */
int dp_config_set_name(struct dp_cfg *cfg, const char *name);

/** Parse "aa:bb:cc:dd:ee:ff". @return 0 or -1. */
int dp_parse_mac(const char *s, uint8_t mac[6]);

#endif /* SDR_DP_CONFIG_H */
