/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A software RoCEv2 NIC behind the libibverbs API, for tests on a machine with no RDMA
 * device: sdr-verbs-peer linked against it (sdr-verbs-peer-fakenic) runs unchanged and puts
 * real RoCEv2 frames on a Linux interface (an AF_PACKET socket, a veth end in a network
 * namespace), where a real sdr-dataplane is the other end.
 *
 * What it does is what a ConnectX does for the subset the tool uses: UC queue pairs; SEND
 * and RDMA WRITE with Immediate of one packet (at most the path MTU), built with the
 * project's frame builder (headers, PSN per queue pair, ICRC); on receive, the ICRC, the
 * destination QPN and, for a write, the QP's remote-write access, the R_Key and the bounds
 * of the memory region are checked, the payload is written where the RETH says (or into the
 * next receive WQE's buffer for a SEND), and a completion carries the immediate and the byte
 * count. A frame a UC responder would refuse (bad ICRC, unknown QPN, no receive WQE, bad
 * R_Key, out of bounds, too long) is dropped silently and counted. Sends complete at once
 * (the frame is on the wire when the post returns).
 *
 * Configured from the environment (a NIC's firmware and the kernel's tables would say):
 *   SDR_FAKENIC_IF        the interface to send and receive on (no device without it)
 *   SDR_FAKENIC_IP        the IPv4 address of the port's one GID (RoCEv2)
 *   SDR_FAKENIC_PEER_MAC  the MAC frames go to (the kernel's neighbour entry for the peer)
 *   SDR_FAKENIC_STATS     set: the counters on standard error when the device is closed
 *   SDR_FAKENIC_TX_LOSS   a probability: the wire after the NIC loses this share of the
 *                         frames it sends (a fixed seed; counted), as a lossy path would
 *   SDR_FAKENIC_DEBUG     set: the first frames for an unknown QPN on standard error
 * One device, one port, IPv4 only. Not thread-safe (the tool has one thread).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "roce_build.h"
#include "roce_opcode.h"
#include "roce_parse.h"

#define FK_MAX_MR 16
#define FK_MAX_QP 8
#define FK_FRAME 9216
#define FK_RX_BURST 64

#define FK_COUNTERS(X) \
	X(TX_FRAMES, "tx_frames") \
	X(TX_LOST, "tx_lost_on_the_wire") \
	X(RX_FRAMES, "rx_frames") \
	X(RX_SOCKET_DROPS, "rx_dropped_by_the_socket") \
	X(RX_NOT_ROCE, "rx_not_roce_or_bad_icrc") \
	X(RX_NO_QP, "rx_unknown_qpn") \
	X(RX_NO_WQE, "rx_no_receive_wqe") \
	X(RX_BAD_OPCODE, "rx_bad_opcode") \
	X(RX_BAD_RKEY, "rx_bad_rkey_or_bounds") \
	X(RX_TOO_LONG, "rx_longer_than_wqe") \
	X(CQ_FULL, "cq_overflow")

enum {
#define X(sym, name) FK_##sym,
	FK_COUNTERS(X)
#undef X
	FK_NCOUNTERS
};

struct fk_mr {
	struct ibv_mr mr;
	uint64_t iova;
	int access;
	int used;
};

struct fk_cq {
	struct ibv_cq cq;
	struct ibv_wc *ring;
	uint32_t cap, head, n;
};

struct fk_qp {
	struct ibv_qp qp;
	int used;
	int access;
	uint32_t dest_qpn;
	uint32_t psn;
	uint32_t mtu;
	union ibv_gid dgid;
	/* receive WQEs: wr_id and one scatter entry each */
	struct { uint64_t wr_id; uint64_t addr; uint32_t len; uint32_t lkey; } *rq;
	uint32_t rq_cap, rq_head, rq_n;
};

static struct fk_nic {
	struct ibv_device dev;
	struct ibv_device *list[2];
	struct ibv_context ctx;
	int open;
	int fd;
	int ifindex;
	uint8_t mac[6], peer_mac[6];
	uint8_t ip[4];
	struct fk_mr mr[FK_MAX_MR];
	struct fk_qp qp[FK_MAX_QP];
	uint32_t next_qpn;
	uint32_t next_key;
	double tx_loss;
	uint64_t rng;
	uint64_t counters[FK_NCOUNTERS];
} nic;

static const char *const fk_counter_names[FK_NCOUNTERS] = {
#define X(sym, name) name,
	FK_COUNTERS(X)
#undef X
};

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (s == NULL || sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
				&b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* ---- the device ---- */

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	const char *ifname = getenv("SDR_FAKENIC_IF");
	int n = ifname != NULL && *ifname != '\0';

	memset(&nic.dev, 0, sizeof(nic.dev));
	snprintf(nic.dev.name, sizeof(nic.dev.name), "fakenic0");
	snprintf(nic.dev.dev_name, sizeof(nic.dev.dev_name), "uverbs-fake0");
	nic.dev.node_type = IBV_NODE_RNIC;
	nic.dev.transport_type = IBV_TRANSPORT_IB;
	nic.list[0] = n ? &nic.dev : NULL;
	nic.list[1] = NULL;
	if (num_devices != NULL)
		*num_devices = n;
	return nic.list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	(void)list;
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int fk_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	const char *ifname = getenv("SDR_FAKENIC_IF");
	struct sockaddr_ll sll;
	struct ifreq ifr;
	struct in_addr a;

	if (device != &nic.dev || nic.open || ifname == NULL) {
		errno = ENODEV;
		return NULL;
	}
	if (inet_pton(AF_INET, getenv("SDR_FAKENIC_IP") ? getenv("SDR_FAKENIC_IP") : "",
		      &a) != 1 || parse_mac(getenv("SDR_FAKENIC_PEER_MAC"), nic.peer_mac) != 0) {
		fprintf(stderr, "fakenic: set SDR_FAKENIC_IP (IPv4) and SDR_FAKENIC_PEER_MAC\n");
		errno = EINVAL;
		return NULL;
	}
	memcpy(nic.ip, &a, 4);
	nic.fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_IP));
	if (nic.fd < 0)
		return NULL;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(nic.fd, SIOCGIFINDEX, &ifr) != 0)
		goto fail;
	nic.ifindex = ifr.ifr_ifindex;
	if (ioctl(nic.fd, SIOCGIFHWADDR, &ifr) != 0)
		goto fail;
	memcpy(nic.mac, ifr.ifr_hwaddr.sa_data, 6);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = nic.ifindex;
	if (bind(nic.fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		goto fail;
	{
		/* a NIC's receive ring is deep: so is the socket's buffer (root may exceed
		 * rmem_max); what still overflows is counted (PACKET_STATISTICS) */
		int sz = 64 << 20;

		if (setsockopt(nic.fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
			setsockopt(nic.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	memset(&nic.ctx, 0, sizeof(nic.ctx));
	nic.ctx.device = device;
	nic.ctx.ops.post_send = fk_post_send;
	nic.ctx.ops.post_recv = fk_post_recv;
	nic.ctx.ops.poll_cq = fk_poll_cq;
	nic.ctx.abi_compat = NULL;	/* not extended: the compat entry points below */
	nic.next_qpn = 0x1a3;
	nic.next_key = 0x1fe00;
	nic.tx_loss = getenv("SDR_FAKENIC_TX_LOSS") ? atof(getenv("SDR_FAKENIC_TX_LOSS")) : 0;
	nic.rng = 0x9E3779B97F4A7C15ull;
	memset(nic.counters, 0, sizeof(nic.counters));
	nic.open = 1;
	return &nic.ctx;
fail:
	close(nic.fd);
	return NULL;
}

int
ibv_close_device(struct ibv_context *context)
{
	if (context != &nic.ctx || !nic.open)
		return EINVAL;
	{
		struct tpacket_stats st;
		socklen_t sl = sizeof(st);

		if (getsockopt(nic.fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl) == 0)
			nic.counters[FK_RX_SOCKET_DROPS] += st.tp_drops;
	}
	if (getenv("SDR_FAKENIC_STATS") != NULL) {
		fprintf(stderr, "fakenic:");
		for (int i = 0; i < FK_NCOUNTERS; i++)
			fprintf(stderr, " %s %llu", fk_counter_names[i],
				(unsigned long long)nic.counters[i]);
		fprintf(stderr, "\n");
	}
	close(nic.fd);
	nic.open = 0;
	return 0;
}

int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	(void)context;
	memset(a, 0, sizeof(*a));
	a->max_qp = FK_MAX_QP;
	a->max_qp_wr = 16384;
	a->max_cq = FK_MAX_QP;
	a->max_cqe = 1 << 20;
	a->max_mr = FK_MAX_MR;
	a->max_sge = 1;
	a->phys_port_cnt = 1;
	return 0;
}

/* (the names in parentheses: verbs.h defines macros of the same names over them) */
int
(ibv_query_port)(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr *a = (struct ibv_port_attr *)port_attr;

	(void)context;
	if (port_num != 1)
		return EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = IBV_MTU_4096;
	a->gid_tbl_len = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	(void)context;
	(void)flags;
	if (port_num != 1 || gid_index != 0 || entry_size < sizeof(*entry))
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	entry->gid.raw[10] = 0xff;	/* ::ffff:a.b.c.d */
	entry->gid.raw[11] = 0xff;
	memcpy(&entry->gid.raw[12], nic.ip, 4);
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = (uint32_t)nic.ifindex;
	entry->port_num = 1;
	return 0;
}

const char *
ibv_port_state_str(enum ibv_port_state port_state)
{
	return port_state == IBV_PORT_ACTIVE ? "active" : "not active";
}

const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	return status == IBV_WC_SUCCESS ? "success" : "error";
}

/* ---- protection domains and memory regions ---- */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd != NULL)
		pd->context = context;
	return pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	for (int i = 0; i < FK_MAX_MR; i++) {
		struct fk_mr *m = &nic.mr[i];

		if (m->used)
			continue;
		memset(m, 0, sizeof(*m));
		m->used = 1;
		m->iova = iova;
		m->access = (int)access;
		m->mr.context = pd->context;
		m->mr.pd = pd;
		m->mr.addr = addr;
		m->mr.length = length;
		m->mr.handle = (uint32_t)i;
		m->mr.lkey = m->mr.rkey = nic.next_key++ << 8 | (uint32_t)i;
		return &m->mr;
	}
	errno = ENOMEM;
	return NULL;
}

struct ibv_mr *
(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *
(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	((struct fk_mr *)mr)->used = 0;
	return 0;
}

/* The memory region of key @p key that holds [addr, addr + len) of its iova space (a
 * remote access) or of the address space (a local one). @return its host address, or NULL. */
static uint8_t *
mr_lookup(uint32_t key, uint64_t addr, uint64_t len, int remote, int need)
{
	for (int i = 0; i < FK_MAX_MR; i++) {
		const struct fk_mr *m = &nic.mr[i];
		uint64_t base = remote ? m->iova : (uintptr_t)m->mr.addr;

		if (!m->used || (remote ? m->mr.rkey : m->mr.lkey) != key)
			continue;
		if ((m->access & need) != need || addr < base || len > m->mr.length ||
		    addr - base > m->mr.length - len)
			return NULL;
		return (uint8_t *)m->mr.addr + (addr - base);
	}
	return NULL;
}

/* ---- completion queues and queue pairs ---- */

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct fk_cq *c = calloc(1, sizeof(*c));

	(void)cq_context;
	(void)channel;
	(void)comp_vector;
	if (c == NULL || cqe <= 0)
		goto fail;
	c->cap = (uint32_t)cqe;
	c->ring = calloc(c->cap, sizeof(*c->ring));
	if (c->ring == NULL)
		goto fail;
	c->cq.context = context;
	c->cq.cqe = cqe;
	return &c->cq;
fail:
	free(c);
	errno = ENOMEM;
	return NULL;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fk_cq *c = (struct fk_cq *)cq;

	free(c->ring);
	free(c);
	return 0;
}

static void
cq_push(struct ibv_cq *cq, const struct ibv_wc *wc)
{
	struct fk_cq *c = (struct fk_cq *)cq;

	if (c->n == c->cap) {
		nic.counters[FK_CQ_FULL]++;
		return;
	}
	c->ring[(c->head + c->n++) % c->cap] = *wc;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	if (ia->qp_type != IBV_QPT_UC || ia->cap.max_send_sge > 1 || ia->cap.max_recv_sge > 1) {
		errno = EINVAL;
		return NULL;
	}
	for (int i = 0; i < FK_MAX_QP; i++) {
		struct fk_qp *q = &nic.qp[i];

		if (q->used)
			continue;
		memset(q, 0, sizeof(*q));
		q->rq_cap = ia->cap.max_recv_wr ? ia->cap.max_recv_wr : 1;
		q->rq = calloc(q->rq_cap, sizeof(*q->rq));
		if (q->rq == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		q->used = 1;
		q->qp.context = pd->context;
		q->qp.pd = pd;
		q->qp.send_cq = ia->send_cq;
		q->qp.recv_cq = ia->recv_cq;
		q->qp.qp_num = nic.next_qpn++;
		q->qp.qp_type = IBV_QPT_UC;
		q->qp.state = IBV_QPS_RESET;
		q->qp.handle = (uint32_t)i;
		q->mtu = 4096;
		return &q->qp;
	}
	errno = ENOMEM;
	return NULL;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fk_qp *q = (struct fk_qp *)qp;

	free(q->rq);
	q->used = 0;
	return 0;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct fk_qp *q = (struct fk_qp *)qp;

	if (attr_mask & IBV_QP_ACCESS_FLAGS)
		q->access = (int)attr->qp_access_flags;
	if (attr_mask & IBV_QP_PATH_MTU)
		q->mtu = 128u << attr->path_mtu;
	if (attr_mask & IBV_QP_DEST_QPN)
		q->dest_qpn = attr->dest_qp_num;
	if (attr_mask & IBV_QP_AV)
		q->dgid = attr->ah_attr.grh.dgid;
	if (attr_mask & IBV_QP_SQ_PSN)
		q->psn = attr->sq_psn;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

/* ---- the data path ---- */

static int
fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fk_qp *q = (struct fk_qp *)qp;

	for (; wr != NULL; wr = wr->next) {
		uint32_t i;

		if (q->rq_n == q->rq_cap || wr->num_sge > 1) {
			*bad = wr;
			return ENOMEM;
		}
		i = (q->rq_head + q->rq_n++) % q->rq_cap;
		q->rq[i].wr_id = wr->wr_id;
		q->rq[i].addr = wr->num_sge ? wr->sg_list[0].addr : 0;
		q->rq[i].len = wr->num_sge ? wr->sg_list[0].length : 0;
		q->rq[i].lkey = wr->num_sge ? wr->sg_list[0].lkey : 0;
	}
	return 0;
}

static int
fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fk_qp *q = (struct fk_qp *)qp;
	struct roce_path path;
	uint8_t frame[FK_FRAME];

	if (qp->state != IBV_QPS_RTS) {
		*bad = wr;
		return EINVAL;
	}
	memset(&path, 0, sizeof(path));
	path.ip_version = 4;
	memcpy(path.src_mac, nic.mac, 6);
	memcpy(path.dst_mac, nic.peer_mac, 6);
	memcpy(path.src_ip, nic.ip, 4);
	memcpy(path.dst_ip, &q->dgid.raw[12], 4);
	for (; wr != NULL; wr = wr->next) {
		uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
		const uint8_t *src = NULL;
		struct roce_pkt pkt;
		struct ibv_wc wc;
		int l;

		memset(&pkt, 0, sizeof(pkt));
		if (wr->num_sge > 1 || len > q->mtu ||
		    (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)) {
			*bad = wr;
			return EINVAL;
		}
		if (len > 0) {
			src = mr_lookup(wr->sg_list[0].lkey, wr->sg_list[0].addr, len, 0, 0);
			if (src == NULL) {
				*bad = wr;	/* (a NIC completes it with a protection error) */
				return EFAULT;
			}
		}
		pkt.dqpn = q->dest_qpn;
		pkt.psn = q->psn++ & 0xFFFFFF;
		if (wr->opcode == IBV_WR_SEND) {
			pkt.opcode = ROCE_OP_UC_SEND_ONLY;
		} else {
			pkt.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_IMM;
			pkt.va = wr->wr.rdma.remote_addr;
			pkt.rkey = wr->wr.rdma.rkey;
			pkt.dma_len = len;
			pkt.imm = be32toh(wr->imm_data);
		}
		l = roce_build(frame, sizeof(frame), &path, &pkt, src, len);
		if (l < 0) {
			*bad = wr;
			return EINVAL;
		}
		/* the lossy path after the NIC (xorshift64*, fixed seed) */
		nic.rng ^= nic.rng >> 12;
		nic.rng ^= nic.rng << 25;
		nic.rng ^= nic.rng >> 27;
		if ((double)((nic.rng * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53 < nic.tx_loss) {
			nic.counters[FK_TX_LOST]++;
			l = 0;
		}
		/* the wire takes it: a NIC's queue waits for room, so do we */
		while (l > 0 && send(nic.fd, frame, (size_t)l, 0) < 0) {
			struct timespec ts = { 0, 20000 };

			if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
				*bad = wr;
				return errno;
			}
			nanosleep(&ts, NULL);
		}
		nic.counters[FK_TX_FRAMES]++;
		if (!(wr->send_flags & IBV_SEND_SIGNALED))
			continue;
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = wr->wr_id;
		wc.status = IBV_WC_SUCCESS;
		wc.opcode = wr->opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
		wc.qp_num = qp->qp_num;
		cq_push(qp->send_cq, &wc);
	}
	return 0;
}

/* One frame from the wire, as the UC responder of its destination QP takes it. */
static void
receive(const uint8_t *b, uint32_t len)
{
	struct roce_view v;
	struct fk_qp *q = NULL;
	struct ibv_wc wc;
	uint32_t i;

	if (roce_parse(b, len, ROCE_PARSE_VERIFY_ICRC, &v) != ROCE_V_OK) {
		nic.counters[FK_RX_NOT_ROCE]++;
		return;
	}
	for (int k = 0; k < FK_MAX_QP; k++)
		if (nic.qp[k].used && nic.qp[k].qp.qp_num == v.dqpn &&
		    nic.qp[k].qp.state >= IBV_QPS_RTR && nic.qp[k].qp.state <= IBV_QPS_SQD)
			q = &nic.qp[k];
	if (q == NULL) {
		if (getenv("SDR_FAKENIC_DEBUG") != NULL && nic.counters[FK_RX_NO_QP] < 5)
			fprintf(stderr, "fakenic: a frame for QPN 0x%x opcode 0x%x\n", v.dqpn,
				v.opcode);
		nic.counters[FK_RX_NO_QP]++;
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.qp_num = q->qp.qp_num;
	wc.byte_len = v.payload_len;
	if (v.opcode == ROCE_OP_UC_RDMA_WRITE_ONLY_IMM) {
		uint8_t *dst = NULL;

		if (v.payload_len > 0 || v.dma_len > 0) {
			if (!(q->access & IBV_ACCESS_REMOTE_WRITE) || v.dma_len != v.payload_len)
				dst = NULL;
			else
				dst = mr_lookup(v.rkey, v.va, v.payload_len, 1,
						IBV_ACCESS_REMOTE_WRITE);
			if (dst == NULL) {
				nic.counters[FK_RX_BAD_RKEY]++;
				return;
			}
		}
		if (q->rq_n == 0) {
			nic.counters[FK_RX_NO_WQE]++;
			return;
		}
		if (v.payload_len)
			memcpy(dst, v.payload, v.payload_len);
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htobe32(v.imm);
	} else if (v.opcode == ROCE_OP_UC_SEND_ONLY || v.opcode == ROCE_OP_UC_SEND_ONLY_IMM) {
		uint8_t *dst;

		if (q->rq_n == 0) {
			nic.counters[FK_RX_NO_WQE]++;
			return;
		}
		i = q->rq_head;
		if (v.payload_len > q->rq[i].len) {
			nic.counters[FK_RX_TOO_LONG]++;	/* (a NIC: a length error) */
			return;
		}
		dst = v.payload_len ? mr_lookup(q->rq[i].lkey, q->rq[i].addr, v.payload_len, 0,
						IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (v.payload_len && dst == NULL) {
			nic.counters[FK_RX_BAD_RKEY]++;
			return;
		}
		if (v.payload_len)
			memcpy(dst, v.payload, v.payload_len);
		wc.opcode = IBV_WC_RECV;
		if (v.opcode == ROCE_OP_UC_SEND_ONLY_IMM) {
			wc.wc_flags = IBV_WC_WITH_IMM;
			wc.imm_data = htobe32(v.imm);
		}
	} else {
		nic.counters[FK_RX_BAD_OPCODE]++;
		return;
	}
	i = q->rq_head;
	wc.wr_id = q->rq[i].wr_id;
	q->rq_head = (q->rq_head + 1) % q->rq_cap;
	q->rq_n--;
	nic.counters[FK_RX_FRAMES]++;
	cq_push(q->qp.recv_cq, &wc);
}

static int
fk_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct fk_cq *c = (struct fk_cq *)cq;
	static uint8_t frame[FK_FRAME];
	int n = 0;

	/* the wire first: what arrived becomes completions */
	for (int k = 0; k < FK_RX_BURST; k++) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t l = recvfrom(nic.fd, frame, sizeof(frame), 0, (struct sockaddr *)&from,
				     &fl);

		if (l <= 0)
			break;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		receive(frame, (uint32_t)l);
	}
	while (n < num_entries && c->n > 0) {
		wc[n++] = c->ring[c->head];
		c->head = (c->head + 1) % c->cap;
		c->n--;
	}
	return n;
}
