/* SPDX-License-Identifier: BSD-3-Clause */
/* A parsed frame as one line of text (roce_format.h). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "roce_format.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "units.h"

const char *
roce_format_addr(char *buf, size_t len, const uint8_t *frame, const struct roce_view *v,
		 int dst)
{
	const uint8_t *ip = frame + v->l3_off;

	if (v->ip_version == 4 && inet_ntop(AF_INET, ip + (dst ? 16 : 12), buf,
					    (socklen_t)len) != NULL)
		return buf;
	if (v->ip_version == 6 && inet_ntop(AF_INET6, ip + (dst ? 24 : 8), buf,
					    (socklen_t)len) != NULL)
		return buf;
	snprintf(buf, len, "-");
	return buf;
}

const char *
roce_format_view(char *buf, size_t len, const uint8_t *frame, const struct roce_view *v,
		 enum roce_verdict r, const struct sdr_imm_split *split)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	size_t off = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	roce_format_addr(src, sizeof(src), frame, v, 0);
	roce_format_addr(dst, sizeof(dst), frame, v, 1);
	if (v->op == NULL) {
		/* the addresses and ports only where the parser got that far */
		if (v->l4_off != 0 && v->udp_dport != 0)
			units_appendf(buf, len, &off, "%s.%u > %s.%u ", src, v->udp_sport, dst, v->udp_dport);
		units_appendf(buf, len, &off, "not RoCEv2: %s", roce_verdict_name(r));
		return buf;
	}
	units_appendf(buf, len, &off, "%s.%u > %s.%u %s qpn 0x%06x psn %u", src, v->udp_sport, dst,
	    v->udp_dport, roce_opcode_name(v->opcode), v->dqpn, v->psn);
	if (v->pkey != ROCE_PKEY_DEFAULT)
		units_appendf(buf, len, &off, " pkey 0x%04x", v->pkey);
	if (v->reth_off)
		units_appendf(buf, len, &off, " va 0x%" PRIx64 " rkey 0x%08x len %u", v->va, v->rkey,
		    v->dma_len);
	if (v->immdt_off && split == NULL) {
		units_appendf(buf, len, &off, " imm 0x%08x", v->imm);
	} else if (v->immdt_off) {
		struct sdr_imm_fields f = sdr_imm_unpack(split, v->imm);

		units_appendf(buf, len, &off, " imm 0x%08x [msg %u off %u frag 0x%x]", v->imm, f.msg_id,
		    f.pkt_off, f.frag);
	}
	if (v->deth_off)
		units_appendf(buf, len, &off, " qkey 0x%08x sqpn 0x%06x", v->qkey, v->sqpn);
	if (v->aeth_off)
		units_appendf(buf, len, &off, " syndrome 0x%02x msn %u", v->syndrome, v->msn);
	if (v->payload_off)
		units_appendf(buf, len, &off, " payload %u", v->payload_len);
	if (r == ROCE_V_OK || r == ROCE_V_BAD_ICRC)
		units_appendf(buf, len, &off, " icrc %s", !v->icrc_checked ? "unchecked" :
		    v->icrc_ok ? "ok" : "bad");
	else
		units_appendf(buf, len, &off, " [%s]", roce_verdict_name(r));
	return buf;
}
