/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: create the devices the configuration names (virtual devices, a cross-connected
 * pair of rings, or devices EAL already probed), configure and start them, attach the
 * egress link emulators and the QPN tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "dp.h"
#include "pools.h"
#include "ports.h"
#include "rss.h"

#define RX_DESC 1024
#define RX_DESC_MIN 64
#define TX_DESC 1024

/* "ring:PAIR:SIDE" into @p pair (32 bytes) and @p side. @return 0, or -1 if it is not one. */
static int
ring_spec(const char *device, char *pair, unsigned int *side)
{
	int n = 0;

	if (sscanf(device, "ring:%31[^:]:%u%n", pair, side, &n) != 2 || device[n] != '\0' ||
	    *side > 1)
		return -1;
	return 0;
}

/*
 * The two sides of a ring pair must agree on the queues: frames sent on a TX queue the
 * other side does not receive on would wait in a ring nobody reads.
 */
static int
check_ring_pairs(const struct dp_cfg *cfg, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < cfg->nports; i++) {
		const struct dp_port_cfg *a = &cfg->ports[i];
		char pa[32], pb[32];
		unsigned int sa, sb;

		if (ring_spec(a->device, pa, &sa) != 0)
			continue;
		for (unsigned int j = 0; j < cfg->nports; j++) {
			const struct dp_port_cfg *b = &cfg->ports[j];

			if (ring_spec(b->device, pb, &sb) != 0 || strcmp(pa, pb) != 0 || sa == sb)
				continue;
			if (a->tx_queues != b->rx_queues) {
				snprintf(err, errlen, "port %s: %u tx queues, but its ring peer %s has "
					 "%u rx queues: a ring pair needs the same number each way",
					 a->name, a->tx_queues, b->name, b->rx_queues);
				return -1;
			}
		}
	}
	return 0;
}

/* Ring @p q of direction @p dir of a ring pair, created by whichever side comes first. */
static struct rte_ring *
pair_ring(const char *pair, int dir, unsigned int q)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	snprintf(name, sizeof(name), "sdr_%s_%d_%u", pair, dir, q);
	r = rte_ring_lookup(name);
	if (r == NULL)
		r = rte_ring_create(name, 16384, (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	return r;
}

/*
 * "ring:PAIR:SIDE": two ports joined back to back by rings, in this process, one ring per
 * queue and direction: TX queue q of one side feeds RX queue q of the other, as a NIC whose
 * RSS hashed the frame to queue q would.
 */
static int
create_ring_port(const struct dp_port_cfg *pc, uint16_t *port_id, char *err, size_t errlen)
{
	struct rte_ring *rx[DP_MAX_QUEUES], *tx[DP_MAX_QUEUES];
	unsigned int side;
	char pair[32];
	int id;

	if (ring_spec(pc->device, pair, &side) != 0) {
		snprintf(err, errlen, "device '%s': expected ring:PAIR:0 or ring:PAIR:1", pc->device);
		return -1;
	}
	/* side 0 receives on rings 0 and sends on rings 1; side 1 the other way round */
	for (unsigned int q = 0; q < pc->rx_queues || q < pc->tx_queues; q++) {
		if ((q < pc->rx_queues && (rx[q] = pair_ring(pair, (int)side, q)) == NULL) ||
		    (q < pc->tx_queues && (tx[q] = pair_ring(pair, (int)!side, q)) == NULL)) {
			snprintf(err, errlen, "device '%s': cannot create its rings: %s", pc->device,
				 rte_strerror(rte_errno));
			return -1;
		}
	}
	id = rte_eth_from_rings(pc->name, rx, pc->rx_queues, tx, pc->tx_queues, rte_socket_id());
	if (id < 0) {
		snprintf(err, errlen, "device '%s': rte_eth_from_rings failed: %s", pc->device,
			 rte_strerror(rte_errno));
		return -1;
	}
	*port_id = (uint16_t)id;
	return 0;
}

/* A device by name: already probed (EAL --vdev, PCI), or a vdev spec we create. */
static int
find_or_create(const char *spec, uint16_t *port_id, char *err, size_t errlen)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(spec, ',');
	size_t n = comma ? (size_t)(comma - spec) : strlen(spec);
	int rc;

	if (n >= sizeof(name)) {
		snprintf(err, errlen, "device '%s': name too long", spec);
		return -1;
	}
	memcpy(name, spec, n);
	name[n] = '\0';
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	if (strncmp(name, "net_", 4) != 0) {
		snprintf(err, errlen, "device '%s' not found: no such ethdev (a PCI device must be "
			 "bound and allowed with -a; see docs/deployment.md)", name);
		return -1;
	}
	rc = rte_vdev_init(name, comma ? comma + 1 : "");
	if (rc != 0) {
		snprintf(err, errlen, "device '%s': cannot create the virtual device: %s", spec,
			 rte_strerror(-rc));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, port_id) != 0) {
		snprintf(err, errlen, "device '%s': created but no ethdev appeared", spec);
		return -1;
	}
	return 0;
}

/* Wait up to @p ms for the port's link to come up (not past a signal to quit). @return 1 if
 * it is up. */
static int
link_up(uint16_t port_id, unsigned int ms, const volatile int *quit)
{
	struct rte_eth_link link;

	for (unsigned int t = 0; t <= ms && !*quit; t += 50) {
		if (rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status)
			return 1;
		rte_delay_us_sleep(50000);
	}
	return 0;
}

/*
 * Zero-copy unless the file says otherwise, on the virtual devices whose transmit copies
 * the frame in software (dp_config_copying_device()). Not by default:
 * - a ring: port, whose peer in the same process receives the very mbufs: chains there
 *   only move the copy from the sender to the receiver, which reads a frame in one piece;
 * - a device that DMAs from memory (a PCI NIC), which reads the application's buffers only
 *   once they are mapped for it (dma.h: done with zero_copy = yes, not yet run on a NIC);
 * - bonding or failsafe over NICs: the buffers would be mapped for that vdev, not for the
 *   NICs under it;
 * - memif with its own zero-copy=yes, which sends buffers of its mempool region only.
 */
static int
want_zero_copy(const struct dp_port_cfg *pc)
{
	if (pc->zero_copy != DP_ZC_DEFAULT)
		return pc->zero_copy == DP_ZC_YES;
	return dp_config_copying_device(pc->device);
}

/* A device on a hardware bus (PCI, auxiliary: a NIC or its representor), not a vdev. */
static int
is_bus_device(const struct rte_eth_dev_info *info)
{
	const struct rte_bus *bus = info->device != NULL ? rte_dev_bus(info->device) : NULL;

	return bus != NULL && strcmp(rte_bus_name(bus), "vdev") != 0;
}

/*
 * A NIC's MTU, asked for before its queues are made (ethdev's rxmode.mtu, within the
 * device's limits): what fits a receive buffer of @p room bytes, or more where the device
 * can scatter a frame over several (the parser takes chains). @return the MTU to ask.
 */
static uint32_t
bus_device_mtu(const struct dp_port *p, const struct rte_eth_dev_info *info, uint32_t room,
	       struct rte_eth_conf *conf)
{
	uint32_t mtu = p->cfg->mtu < info->max_mtu ? p->cfg->mtu : info->max_mtu;
	uint32_t fits = room - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN;
	uint32_t over = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;	/* ethdev's MTU rule */

	if (info->max_rx_pktlen > over && info->max_rx_pktlen - over < mtu)
		mtu = info->max_rx_pktlen - over;

	if (mtu > fits) {
		if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
			conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
		else
			mtu = fits;
	}
	conf->rxmode.mtu = mtu;
	return mtu;
}

/*
 * steering = rss: entry i of the redirection table -> RX queue i mod engines, so the queue
 * of a packet is its hash mod engines whatever the table's size (a power of two), and a
 * sender that knows our key picks source ports for it (rss.h).
 */
static int
program_reta(struct dp_port *p, const struct rte_eth_dev_info *info, unsigned int engines,
	     char *err, size_t errlen)
{
	struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	int rc;

	/* (a table smaller than a group of 64 is one part of a group: a device may size its
	 * table by its queues) */
	if (info->reta_size < engines || info->reta_size > RTE_ETH_RSS_RETA_SIZE_512 ||
	    (info->reta_size & (info->reta_size - 1)) != 0) {
		snprintf(err, errlen, "port %s: steering = rss: the device's redirection table "
			 "(%u entries) cannot be set", p->cfg->name, info->reta_size);
		return -1;
	}
	memset(reta, 0, sizeof(reta));
	for (unsigned int i = 0; i < info->reta_size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			(uint16_t)(i % engines);
	}
	rc = rte_eth_dev_rss_reta_update(p->port_id, reta, info->reta_size);
	if (rc != 0) {
		snprintf(err, errlen, "port %s: steering = rss: setting the redirection table "
			 "failed: %s", p->cfg->name, rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * steering = rss, once started: the device kept our key and table, as far as it can tell
 * (one that cannot read them back is taken at its word). A sender picks its source ports
 * for them: any other would put each channel on an engine by chance (wrong_engine_queue).
 */
static int
check_rss(struct dp_port *p, const struct rte_eth_dev_info *info, unsigned int engines,
	  char *err, size_t errlen)
{
	struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	uint8_t key[RSS_KEY_LEN];
	struct rte_eth_rss_conf conf = { .rss_key = key, .rss_key_len = RSS_KEY_LEN };

	if (rte_eth_dev_rss_hash_conf_get(p->port_id, &conf) == 0 &&
	    memcmp(key, rss_default_key, RSS_KEY_LEN) != 0) {
		snprintf(err, errlen, "port %s: steering = rss: the device did not keep the "
			 "dataplane's RSS key", p->cfg->name);
		return -1;
	}
	memset(reta, 0, sizeof(reta));
	for (unsigned int i = 0; i < info->reta_size; i++)
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
	if (rte_eth_dev_rss_reta_query(p->port_id, reta, info->reta_size) != 0)
		return 0;
	for (unsigned int i = 0; i < info->reta_size; i++) {
		if (reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] !=
		    i % engines) {
			snprintf(err, errlen, "port %s: steering = rss: the device did not keep the "
				 "redirection table (entry %u)", p->cfg->name, i);
			return -1;
		}
	}
	return 0;
}

/*
 * A memif port whose buffers (devargs bsize, 2048 unless set) are smaller than its frames
 * carries each frame in several, which the receiving PMD joins into one mbuf. Under load
 * DPDK 22.11's memif then hands over some frames damaged: in runs here several per cent
 * of them failed their ICRC or were no IP frame at all (with bsize=8192, none). Say so at
 * start, with what carries a frame whole.
 */
static void
memif_bsize_hint(const struct dp_port *p)
{
	const char *args = strchr(p->cfg->device, ',');
	struct rte_kvargs *kv;
	const char *v;
	unsigned long bsize = 2048;	/* the memif PMD's default */
	uint32_t frame = p->l3_mtu + RTE_ETHER_HDR_LEN;

	if (strncmp(p->cfg->device, "net_memif", 9) != 0)
		return;
	kv = args ? rte_kvargs_parse(args + 1, NULL) : NULL;
	v = kv ? rte_kvargs_get(kv, "bsize") : NULL;
	if (v != NULL)
		bsize = strtoul(v, NULL, 0);
	rte_kvargs_free(kv);
	if (bsize == 0 || bsize >= frame)
		return;
	fprintf(stderr, "sdr-dataplane: port %s: memif bsize %lu is below its %u-byte frames: each "
		"takes %lu buffers, and DPDK's memif damages some frames so carried under load "
		"(bad_icrc, not_ip; sent again); bsize=8192 carries it whole\n", p->cfg->name,
		bsize, frame, (frame + bsize - 1) / bsize);
}

/* An AF_XDP port: its receive buffers are a pool of its own (its socket's UMEM). */
static int
is_af_xdp(const struct dp_port_cfg *pc)
{
	return strncmp(pc->device, "net_af_xdp", 10) == 0;
}

/*
 * Receive descriptors per RX queue. A NIC fills its rings from the pool when it starts, so
 * the rings of the queues one pool feeds take at most half of it (the rest: the frames an
 * engine sends, its link's reserve): RX_DESC where the pool allows, else a power of two
 * that fits, at least RX_DESC_MIN.
 */
static uint16_t
rx_desc_count(const struct dp_cfg *cfg, uint32_t pool_mbufs, unsigned int npools)
{
	unsigned int queues = 0;
	uint16_t d = RX_DESC;

	for (unsigned int i = 0; i < cfg->nports; i++)
		if (!is_af_xdp(&cfg->ports[i]))
			queues += cfg->ports[i].rx_queues;
	queues = (queues + npools - 1) / npools;
	while (d > RX_DESC_MIN && (uint64_t)d * queues > pool_mbufs / 2)
		d /= 2;
	return d;
}

/*
 * Start port @p p; RX queue q takes its mbufs from pools[q % npools] (engine q's pool),
 * @p rx_desc of them at most (the device may round it to its limits).
 */
static int
start_port(struct dp_port *p, struct rte_mempool *const *pools, unsigned int npools,
	   uint16_t rx_desc, unsigned int engines, const volatile int *quit, char *err,
	   size_t errlen)
{
	int rss, bus;
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t rxq = p->cfg->rx_queues, txq = p->cfg->tx_queues, txd = TX_DESC;
	uint32_t bus_mtu = 0;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0) {
		snprintf(err, errlen, "port %s: cannot read device info: %s", p->cfg->name,
			 rte_strerror(-rc));
		return -1;
	}
	if (rxq > info.max_rx_queues || txq > info.max_tx_queues) {
		snprintf(err, errlen, "port %s: %u rx / %u tx queues asked, the device has %u / %u",
			 p->cfg->name, rxq, txq, info.max_rx_queues, info.max_tx_queues);
		return -1;
	}
	/* zero-copy send chains three mbufs per data frame (holds.h) */
	p->multi_seg = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	p->zero_copy = p->multi_seg && want_zero_copy(p->cfg);
	if (!p->multi_seg && want_zero_copy(p->cfg))
		fprintf(stderr, "sdr-dataplane: port %s: the device cannot send multi-segment frames; "
			"its data frames carry a copy of the payload\n", p->cfg->name);
	if (p->multi_seg)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	bus = is_bus_device(&info);
	/* a NIC reads an attached payload by DMA: the buffers are mapped for it (dma.h) */
	p->dma = p->zero_copy && (bus || p->cfg->dma_map == DP_DMA_YES);
	if (p->dma && bus && rte_eal_iova_mode() != RTE_IOVA_VA &&
	    (info.driver_name == NULL || strstr(info.driver_name, "mlx5") == NULL)) {
		/*
		 * The attached segments carry no IOVA unless it is the virtual address, and a
		 * driver other than mlx5 (which finds its memory region by address) writes the
		 * IOVA into its descriptors: vfio without an IOMMU would even map "successfully".
		 */
		fprintf(stderr, "sdr-dataplane: port %s: zero-copy on %s needs EAL's IOVA mode VA "
			"(--iova-mode=va); its data frames carry a copy of the payload\n",
			p->cfg->name, info.driver_name ? info.driver_name : "this device");
		p->copy_why = "zero-copy on this device needs EAL's IOVA mode VA";
		p->zero_copy = 0;
		p->dma = 0;
	}
	if (bus)
		bus_mtu = bus_device_mtu(p, &info, rte_pktmbuf_data_room_size(pools[0]) -
					 RTE_PKTMBUF_HEADROOM, &conf);
	if (rxq > 1) {
		/* channels spread over queues by the UDP source port, which encodes the QPN */
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_UDP & info.flow_type_rss_offloads;
	}
	/* steering = rss: our key (the peer picks source ports with it) and our table */
	rss = p->cfg->steering == DP_STEER_RSS && rxq > 1 &&
	      conf.rx_adv_conf.rss_conf.rss_hf != 0;
	if (p->cfg->steering == DP_STEER_RSS && rxq > 1 && !rss)
		fprintf(stderr, "sdr-dataplane: port %s: steering = rss, but the device has no UDP "
			"RSS: its queues are the peer's TX queues one for one (the source ports "
			"are still picked for the peer's RSS)\n", p->cfg->name);
	if (rss) {
		if (info.hash_key_size != RSS_KEY_LEN) {
			snprintf(err, errlen, "port %s: steering = rss: the device takes a %u-byte "
				 "RSS key, not %u", p->cfg->name, info.hash_key_size, RSS_KEY_LEN);
			return -1;
		}
		conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)rss_default_key;
		conf.rx_adv_conf.rss_conf.rss_key_len = RSS_KEY_LEN;
	}
	rc = rte_eth_dev_configure(p->port_id, rxq, txq, &conf);
	if (rc != 0) {
		snprintf(err, errlen, "port %s: configure failed: %s", p->cfg->name, rte_strerror(-rc));
		return -1;
	}
	/* (a device may size its tables by its queues: what it says once configured) */
	if (rss && (rc = rte_eth_dev_info_get(p->port_id, &info)) != 0) {
		snprintf(err, errlen, "port %s: cannot read device info: %s", p->cfg->name,
			 rte_strerror(-rc));
		return -1;
	}
	/* (within the device's limits: its least, its most, its step) */
	(void)rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &rx_desc, &txd);
	for (uint16_t q = 0; q < rxq; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, rx_desc,
					    (unsigned int)rte_eth_dev_socket_id(p->port_id), NULL,
					    pools[q % npools]);
		if (rc != 0) {
			snprintf(err, errlen, "port %s: rx queue %u: %s", p->cfg->name, q,
				 rte_strerror(-rc));
			return -1;
		}
	}
	for (uint16_t q = 0; q < txq; q++) {
		rc = rte_eth_tx_queue_setup(p->port_id, q, txd,
					    (unsigned int)rte_eth_dev_socket_id(p->port_id), NULL);
		if (rc != 0) {
			snprintf(err, errlen, "port %s: tx queue %u: %s", p->cfg->name, q,
				 rte_strerror(-rc));
			return -1;
		}
	}
	/* not every device takes the MTU asked for: then what it takes is the port's limit,
	 * and a connection whose packets would not fit is refused when it starts */
	p->l3_mtu = p->cfg->mtu;
	if (bus) {
		/* a NIC drops what its MTU does not take, silently: not set is not started */
		rc = rte_eth_dev_set_mtu(p->port_id, (uint16_t)bus_mtu);
		/* (-ENOTSUP: a driver that takes the MTU at configure only, rxmode.mtu) */
		if (rc != 0 && rc != -ENOTSUP) {
			snprintf(err, errlen, "port %s: setting the MTU to %u failed: %s (mlx5 sets "
				 "its netdev's: that needs CAP_NET_ADMIN)", p->cfg->name, bus_mtu,
				 rte_strerror(-rc));
			return -1;
		}
		if (bus_mtu < p->cfg->mtu) {
			p->l3_mtu = bus_mtu;
			fprintf(stderr, "sdr-dataplane: port %s: the device carries at most %u-byte "
				"IP packets (mtu = %u asked)\n", p->cfg->name, bus_mtu,
				p->cfg->mtu);
		}
	/*
	 * Of the virtual devices only net_tap is known to enforce what it reports (in DPDK
	 * 22.11 it takes 1504-byte packets and refuses longer ones on transmit); memif, ring
	 * and af_packet report 1500 yet carry 4 KiB frames, so their reports are not a limit.
	 */
	} else if (rte_eth_dev_set_mtu(p->port_id, (uint16_t)p->cfg->mtu) != 0 &&
		   strncmp(p->cfg->device, "net_tap", 7) == 0) {
		/* ethdev's own rule: a frame is the MTU plus the Ethernet header and FCS */
		uint32_t max = info.max_mtu;

		if (info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN &&
		    info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN < max)
			max = info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN;
		if (max < p->cfg->mtu) {
			p->l3_mtu = max;
			fprintf(stderr, "sdr-dataplane: port %s: the device carries at most %u-byte "
				"IP packets (mtu = %u asked)\n", p->cfg->name, max, p->cfg->mtu);
		}
	}
	memif_bsize_hint(p);
	/* the table before the start, where the device takes it then (mlx5 would restart
	 * itself to change it later; others, bnxt among them, take it only once started:
	 * checked and set again below) */
	if (rss)
		(void)program_reta(p, &info, engines, err, errlen);
	rc = rte_eth_dev_start(p->port_id);
	/* a memif client cannot start before its server has made the socket: wait for it */
	for (int tries = 0; rc != 0 && strncmp(p->cfg->device, "net_memif", 9) == 0 &&
	     tries < 100; tries++) {
		if (tries == 0)
			fprintf(stderr, "sdr-dataplane: port %s: waiting for the memif server\n",
				p->cfg->name);
		rte_delay_us_sleep(100000);
		rc = rte_eth_dev_start(p->port_id);
	}
	if (rc != 0) {
		snprintf(err, errlen, "port %s: start failed: %s", p->cfg->name, rte_strerror(-rc));
		return -1;
	}
	/* kept? a device may size its table again when it starts (mlx5 by its queues): then
	 * it is set again, on the started port, and checked once more */
	if (rss && (rte_eth_dev_info_get(p->port_id, &info) != 0 ||
		    check_rss(p, &info, engines, err, errlen) != 0) &&
	    (program_reta(p, &info, engines, err, errlen) != 0 ||
	     check_rss(p, &info, engines, err, errlen) != 0))
		return -1;
	/*
	 * A memif client whose connection attempt raced the server's start can be left with
	 * the socket connected and the handshake never finished (seen about once in ten starts
	 * under load): the link then stays down for good. Give it 2 s, then connect again.
	 */
	if (strncmp(p->cfg->device, "net_memif", 9) == 0 && strstr(p->cfg->device, "role=client")) {
		int tries;

		for (tries = 0; !link_up(p->port_id, 2000, quit) && !*quit; tries++) {
			if (tries == 5) {
				fprintf(stderr, "sdr-dataplane: port %s: the memif link is still "
					"down; going on (what the port cannot send for 1 s is "
					"dropped, tx_stalled_drops)\n", p->cfg->name);
				break;
			}
			fprintf(stderr, "sdr-dataplane: port %s: the memif link did not come up; "
				"connecting again\n", p->cfg->name);
			rte_eth_dev_stop(p->port_id);
			rc = rte_eth_dev_start(p->port_id);
			for (int t = 0; rc != 0 && t < 50 && !*quit; t++) {
				rte_delay_us_sleep(100000);
				rc = rte_eth_dev_start(p->port_id);
			}
			if (rc != 0) {
				snprintf(err, errlen, "port %s: start failed after reconnecting: %s",
					 p->cfg->name, rte_strerror(-rc));
				return -1;
			}
		}
	}
	rte_eth_promiscuous_enable(p->port_id);
	if (p->cfg->has_mac)
		memcpy(p->mac.addr_bytes, p->cfg->mac, 6);
	else
		rte_eth_macaddr_get(p->port_id, &p->mac);
	return 0;
}

/*
 * @p np pools of *@p n mbufs of @p room bytes each, named @p name (+ the engine's number
 * after the first), prefaulted. Where memory is short, *@p n halves, down to @p floor.
 * @return 0, or -1 with rte_errno set (none made).
 */
static int
pools_create(struct rte_mempool **pools, unsigned int np, const char *name, uint32_t *n,
	     uint32_t floor, uint16_t room)
{
	for (;;) {
		unsigned int made = 0;

		for (; made < np; made++) {
			char pn[RTE_MEMPOOL_NAMESIZE];

			snprintf(pn, sizeof(pn), made ? "%s%u" : "%s", name, made);
			pools[made] = sdr_pool_create(pn, *n, 256, room, (int)rte_socket_id());
			if (pools[made] == NULL)
				break;
		}
		if (made == np) {
			while (made > 0)
				sdr_pool_prefault(pools[--made]);
			return 0;
		}
		while (made > 0) {
			rte_mempool_free(pools[--made]);
			pools[made] = NULL;
		}
		if (rte_errno != ENOMEM || *n / 2 < floor)
			return -1;
		*n /= 2;
	}
}

uint64_t
dp_port_link_salt(const struct dp_port_cfg *pc, unsigned int engine, unsigned int path)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a over the port's name and addresses */
	const uint8_t *parts[3] = { (const uint8_t *)pc->name, pc->ipv4, pc->ipv6 };
	const size_t lens[3] = { strlen(pc->name), pc->has_ipv4 ? 4 : 0, pc->has_ipv6 ? 16 : 0 };

	for (int i = 0; i < 3; i++)
		for (size_t j = 0; j < lens[i]; j++)
			h = (h ^ parts[i][j]) * 0x100000001b3ull;
	h ^= (uint64_t)engine << 32 | path;
	h *= 0x9e3779b97f4a7c15ull;
	return h ? h : 1;
}

int
dp_ports_init(struct dp_ctx *ctx, char *err, size_t errlen)
{
	const struct dp_cfg *cfg = &ctx->cfg;
	/* mode = engines: a pool per engine, the mbufs split evenly (config.c: each has at
	 * least DP_MIN_MBUFS) */
	unsigned int np = cfg->mode == DP_PIPE_ENGINES ? cfg->engines : 1;
	uint32_t n = cfg->mbufs / np;
	uint16_t rx_desc;

	/*
	 * EAL without hugepages has 64 MiB unless told more (-m): the default 65536 mbufs do not
	 * fit. Take as many as fit, down to DP_MIN_MBUFS a pool, and say so: the commands a
	 * newcomer copies run, and a benchmark sees the line.
	 */
	if (pools_create(ctx->pool, np, "sdr_mbufs", &n, DP_MIN_MBUFS,
			 RTE_PKTMBUF_HEADROOM + DP_FRAME_ROOM) != 0) {
		snprintf(err, errlen, "cannot create %u mbufs of %u bytes: %s (give EAL more memory "
			 "with -m, or lower [dataplane] mbufs)", n * np, DP_FRAME_ROOM,
			 rte_strerror(rte_errno));
		return -1;
	}
	ctx->npools = np;
	if (n < cfg->mbufs / np)
		fprintf(stderr, "sdr-dataplane: %u mbufs of %u bytes do not fit in EAL's memory; "
			"using %u (give EAL more with -m, e.g. -m 1024, for all of them)\n",
			cfg->mbufs, DP_FRAME_ROOM, n * np);
	ctx->cfg.mbufs = n * np;	/* what the stats go by */
	ctx->pool_mbufs = n;		/* and an engine's link emulators */
	/* what an emulated link leaves free of its engine's pool: an eighth, at least two
	 * stashes' worth (each lcore keeps up to DP_BURST_MAX), at most half */
	ctx->link_reserve = n / 8 > 2 * DP_BURST_MAX ? n / 8 : 2 * DP_BURST_MAX;
	if (ctx->link_reserve > n / 2)
		ctx->link_reserve = n / 2;
	if (check_ring_pairs(cfg, err, errlen) != 0)
		return -1;
	rx_desc = rx_desc_count(cfg, n, np);
	ctx->rx_desc = rx_desc;
	for (unsigned int i = 0; i < cfg->nports; i++) {
		struct dp_port *p = &ctx->ports[i];
		int rc;

		p->cfg = &cfg->ports[i];
		p->exception = p->cfg->exception[0] ? dp_config_port(cfg, p->cfg->exception) : -1;
		if (strncmp(p->cfg->device, "ring:", 5) == 0)
			rc = create_ring_port(p->cfg, &p->port_id, err, errlen);
		else
			rc = find_or_create(p->cfg->device, &p->port_id, err, errlen);
		if (rc != 0)
			return -1;
		ctx->nports = i + 1;
		if (is_af_xdp(p->cfg)) {
			char name[RTE_MEMPOOL_NAMESIZE];

			snprintf(name, sizeof(name), "sdr_xsk%u", i);
			/* (the default handler: this pool is the socket's UMEM, which the
			 * AF_XDP device sets up from it, and no send path writes into it) */
			p->rx_pool = rte_pktmbuf_pool_create(name, 4096, 256, 0, RTE_PKTMBUF_HEADROOM +
							     DP_XDP_FRAME_ROOM,
							     (int)rte_socket_id());
			if (p->rx_pool == NULL) {
				snprintf(err, errlen, "port %s: cannot create its 4096 AF_XDP receive "
					 "buffers: %s", p->cfg->name, rte_strerror(rte_errno));
				return -1;
			}
			sdr_pool_prefault(p->rx_pool);
		}
		if (start_port(p, p->rx_pool ? &p->rx_pool : ctx->pool, p->rx_pool ? 1 : np,
			       p->rx_pool ? RX_DESC : rx_desc, ctx->cfg.engines, &ctx->quit, err,
			       errlen) != 0)
			return -1;
		/* on cache lines of their own (sizeof is a multiple of one) */
		p->txq = aligned_alloc(RTE_CACHE_LINE_SIZE, p->cfg->tx_queues * sizeof(*p->txq));
		if (p->txq == NULL) {
			snprintf(err, errlen, "port %s: out of memory", p->cfg->name);
			return -1;
		}
		memset(p->txq, 0, p->cfg->tx_queues * sizeof(*p->txq));
		for (unsigned int e = 0; e < cfg->engines; e++)
			if ((p->eqpns[e] = qpn_table_create(DP_MAX_CONNS)) == NULL)
				break;
		p->qpns = p->eqpns[0];
		if (p->qpns == NULL || p->eqpns[cfg->engines - 1] == NULL) {
			snprintf(err, errlen, "port %s: out of memory", p->cfg->name);
			return -1;
		}
		if (p->cfg->capture[0]) {
			p->pcap = pcap_open_dead(DLT_EN10MB, 65535);
			rte_spinlock_init(&p->capture_lock);
			p->capture = p->pcap ? pcap_dump_open(p->pcap, p->cfg->capture) : NULL;
			if (p->capture == NULL) {
				snprintf(err, errlen, "port %s: cannot write capture %s: %s", p->cfg->name,
					 p->cfg->capture, p->pcap ? pcap_geterr(p->pcap) : "no memory");
				return -1;
			}
		}
		if (p->cfg->link[0]) {
			const struct dp_link_cfg *l = &cfg->links[dp_config_link(cfg, p->cfg->link)];

			/* each engine its own copy of each path, its streams its own */
			p->npaths = l->npaths;
			for (unsigned int e = 0; e < cfg->engines; e++)
				for (unsigned int k = 0; k < l->npaths; k++) {
					struct link_emu_config c = l->path[k];

					c.salt = dp_port_link_salt(p->cfg, e, k);
					p->elink[e][k] = link_emu_create(&c, ctx->pool_mbufs);
					if (p->elink[e][k] == NULL) {
						snprintf(err, errlen, "port %s: cannot create link "
							 "emulator %s (path %u)", p->cfg->name, l->name,
							 k + 1);
						return -1;
					}
				}
			p->link = p->elink[0][0];
		}
	}
	/*
	 * Zero-copy send: two small mbufs per data frame besides its header mbuf (one attached
	 * to the message, one with the pad and the ICRC), a pool per engine as the frames'
	 * ([dataplane] zc_mbufs, by default twice theirs). Made once the ports have what they
	 * need, from what memory is left; when they run out a frame carries a copy instead
	 * (counted), so fewer only costs speed.
	 */
	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct dp_port *p = &ctx->ports[i];
		uint32_t want = cfg->zc_mbufs != 0 ? cfg->zc_mbufs / np : 2 * n, z = want;

		if (p->zero_copy && ctx->zc_pool[0] == NULL &&
		    pools_create(ctx->zc_pool, np, "sdr_zc", &z, DP_MIN_MBUFS,
				 RTE_PKTMBUF_HEADROOM + RTE_CACHE_LINE_SIZE) == 0 && z < want)
			fprintf(stderr, "sdr-dataplane: %u zero-copy attach mbufs do not fit in EAL's "
				"memory; using %u (give EAL more with -m for all of them)\n",
				want * np, z * np);
		if (p->zero_copy && ctx->zc_pool[0] == NULL) {
			fprintf(stderr, "sdr-dataplane: port %s: no memory left for zero-copy send; its "
				"data frames carry a copy of the payload (give EAL more with -m)\n",
				p->cfg->name);
			p->copy_why = "no memory for the zero-copy attach mbufs";
			p->zero_copy = 0;
			p->dma = 0;
		}
	}
	ctx->iova_va = rte_eal_iova_mode() == RTE_IOVA_VA;
	return 0;
}

void
dp_capture(struct dp_port *p, const struct rte_mbuf *m, uint64_t now_ns)
{
	uint8_t buf[DP_FRAME_SCRATCH];
	struct pcap_pkthdr h;
	const void *data;

	if (m->pkt_len > sizeof(buf))
		return;
	data = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(now_ns / 1000000000);
	h.ts.tv_usec = (suseconds_t)(now_ns % 1000000000 / 1000);
	h.caplen = h.len = m->pkt_len;
	/* engines share the file: one frame at a time (a debugging path, not the fast one) */
	rte_spinlock_lock(&p->capture_lock);
	pcap_dump((u_char *)p->capture, &h, data);
	rte_spinlock_unlock(&p->capture_lock);
}

void
dp_ports_stop(struct dp_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct dp_port *p = &ctx->ports[i];

		for (unsigned int e = 0; e < DP_MAX_ENGINES; e++)
			for (unsigned int k = 0; k < LINK_EMU_MAX_PATHS; k++) {
				void *pkts[64];
				unsigned int n;

				if (p->elink[e][k] == NULL)
					continue;
				while ((n = link_emu_drain(p->elink[e][k], pkts, 64)) > 0)
					rte_pktmbuf_free_bulk((struct rte_mbuf **)pkts, n);
				link_emu_destroy(p->elink[e][k]);
				p->elink[e][k] = NULL;
			}
		p->link = NULL;
		for (unsigned int q = 0; p->txq && q < p->cfg->tx_queues; q++)
			rte_pktmbuf_free_bulk(p->txq[q].pending, p->txq[q].n);
		free(p->txq);
		p->txq = NULL;
		if (!p->stopped)
			rte_eth_dev_stop(p->port_id);
		p->stopped = 1;
	}
}

void
dp_ports_close(struct dp_ctx *ctx)
{
	dp_ports_stop(ctx);
	for (unsigned int i = 0; i < ctx->nports; i++) {
		struct dp_port *p = &ctx->ports[i];

		for (unsigned int e = 0; e < DP_MAX_ENGINES; e++) {
			qpn_table_destroy(p->eqpns[e]);
			p->eqpns[e] = NULL;
		}
		p->qpns = NULL;
		if (p->capture) {
			pcap_dump_close(p->capture);
			pcap_close(p->pcap);
		}
		rte_eth_dev_close(p->port_id);
	}
	ctx->nports = 0;
}
