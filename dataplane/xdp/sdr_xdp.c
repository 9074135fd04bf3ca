/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XDP program for the dataplane's AF_XDP ports (net_af_xdp,...,xdp_prog=sdr_xdp.o):
 * RoCEv2 frames (UDP destination port 4791 over IPv4 or IPv6, untagged or with one
 * 802.1Q tag) go to the AF_XDP socket of the queue they arrived on; everything else
 * (ARP, ICMP, TCP, other UDP, IP fragments, IPv6 extension headers) goes on to the
 * kernel, so the host stays reachable on the same interface.
 *
 * DPDK's af_xdp PMD loads the first program of the object, attaches it to the interface
 * and puts the socket of each of its queues into the map named "xsks_map", keyed by the
 * queue index. A frame whose queue has no socket in the map is passed to the kernel too.
 *
 * Built with: clang -target bpf -O2 -g (the map is defined with BTF).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCEV2_UDP_PORT	4791
#define SDR_XDP_QUEUES	64	/* as many AF_XDP sockets as the PMD can have queues */
#define IP_FRAG_MASK	0x3FFF	/* MF flag and fragment offset */

struct vlan_tag {
	__be16 tci;
	__be16 proto;		/* the encapsulated EtherType */
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, SDR_XDP_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* The EtherType after at most one 802.1Q tag; *l3 is set past the tag. 0: too short. */
static __always_inline __u16
eth_skip_vlan(void *data, void *end, void **l3)
{
	struct ethhdr *eth = data;
	struct vlan_tag *tag;
	__u16 proto;

	if ((void *)(eth + 1) > end)
		return 0;
	proto = bpf_ntohs(eth->h_proto);
	*l3 = eth + 1;
	if (proto != ETH_P_8021Q)
		return proto;
	tag = *l3;
	if ((void *)(tag + 1) > end)
		return 0;
	*l3 = tag + 1;
	return bpf_ntohs(tag->proto);
}

/* The UDP header of an unfragmented IPv4 datagram, or NULL. */
static __always_inline struct udphdr *
ipv4_udp(void *l3, void *end)
{
	struct iphdr *ip = l3;
	__u32 hlen;

	if ((void *)(ip + 1) > end || ip->version != 4 || ip->protocol != IPPROTO_UDP)
		return NULL;
	if (bpf_ntohs(ip->frag_off) & IP_FRAG_MASK)
		return NULL;
	hlen = ip->ihl * 4u;
	if (hlen < sizeof(*ip))
		return NULL;
	return (struct udphdr *)((__u8 *)l3 + hlen);
}

/* The UDP header right after an IPv6 header (no extension headers), or NULL. */
static __always_inline struct udphdr *
ipv6_udp(void *l3, void *end)
{
	struct ipv6hdr *ip6 = l3;

	if ((void *)(ip6 + 1) > end || ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
		return NULL;
	return (struct udphdr *)(ip6 + 1);
}

SEC("xdp")
int
sdr_xdp_rocev2(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct udphdr *udp = NULL;
	void *l3 = data;
	__u16 proto = eth_skip_vlan(data, end, &l3);

	if (proto == ETH_P_IP)
		udp = ipv4_udp(l3, end);
	else if (proto == ETH_P_IPV6)
		udp = ipv6_udp(l3, end);
	if (udp == NULL || (void *)(udp + 1) > end || udp->dest != bpf_htons(ROCEV2_UDP_PORT))
		return XDP_PASS;
	/* no socket on this queue: the kernel gets the frame (flags = fallback action) */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* no GPL-only helper is used, so the project licence applies */
char _license[] SEC("license") = "BSD-3-Clause";
