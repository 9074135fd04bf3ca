/* SPDX-License-Identifier: BSD-3-Clause */
/* Reliability configuration defaults. */
#include <string.h>

#include "sdr_rel.h"

void
sdr_rel_cfg_default(struct sdr_rel_cfg *c, uint64_t rtt_ns)
{
	memset(c, 0, sizeof(*c));
	c->scheme.kind = SDR_SCHEME_SR;
	c->rtt_ns = rtt_ns;
	c->alpha = 2.0;
	c->beta = 1.0;
	c->bucket_bytes = 256 * 1024;
	c->pkt_overhead = 78;	/* Ethernet + IPv4 + UDP + BTH + RETH + ImmDt + ICRC */
	c->ack_every_chunks = 8;
	c->ack_every_ns = 50000;
	c->nack_allowance_ns = rtt_ns / 100 > 20000 ? rtt_ns / 100 : 20000;
	c->timer_slots = 65536;
}
