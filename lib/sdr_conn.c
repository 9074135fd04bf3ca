/* SPDX-License-Identifier: BSD-3-Clause */
/* SDR connection attributes: defaults, validation, geometry, QPN layout. */
#include <stddef.h>

#include "roce_hdr.h"
#include "sdr_conn.h"

static const char *const conn_errors[SDR_CONN_E_COUNT] = {
	[SDR_CONN_OK] = "ok",
#define X(sym, msg) [SDR_CONN_E_##sym] = msg,
	SDR_CONN_ERRORS(X)
#undef X
};

const char *
sdr_conn_strerror(int err)
{
	if (err < 0)
		err = -err;
	return err < SDR_CONN_E_COUNT ? conn_errors[err] : "unknown connection error";
}

void
sdr_conn_attr_default(struct sdr_conn_attr *a)
{
	*a = (struct sdr_conn_attr){
		.mtu = 4096,
		.chunk_size = 65536,
		.split = SDR_IMM_SPLIT_DEFAULT,
		.channels = 8,
		.generations = 4,
		.max_msg_size = 8u << 20,
		.max_inflight = 128,
		.dir = SDR_DIR_BOTH,
		.local_qpn = 0x100,
		.remote_qpn = 0x100,
	};
}

int
sdr_conn_geometry(const struct sdr_conn_attr *a, struct sdr_conn_geom *out)
{
	struct sdr_conn_geom g = { 0 };
	uint64_t pkts, span;

	if (a->mtu < 256 || a->mtu > 4096 || (a->mtu & (a->mtu - 1)) != 0)
		return -SDR_CONN_E_MTU;
	g.mtu_shift = (uint32_t)__builtin_ctz(a->mtu);
	if (a->chunk_size == 0 || a->chunk_size % a->mtu != 0 || a->chunk_size / a->mtu > 1024)
		return -SDR_CONN_E_CHUNK;
	g.pkts_per_chunk = a->chunk_size / a->mtu;
	/* at most 2^16 slots: the message table is allocated whole */
	if (sdr_imm_split_check(&a->split) != 0 || a->split.id_bits > 16)
		return -SDR_CONN_E_SPLIT;
	if (a->channels < 1 || a->channels > 64)
		return -SDR_CONN_E_CHANNELS;
	if (a->generations < 1 || a->generations > 64)
		return -SDR_CONN_E_GENERATIONS;
	pkts = (a->max_msg_size + a->mtu - 1) / a->mtu;
	if (a->max_msg_size == 0 || pkts > sdr_imm_max_pkts(&a->split))
		return -SDR_CONN_E_MAX_MSG;
	g.nslots = sdr_imm_max_msgs(&a->split);
	if (a->max_inflight < 1 || a->max_inflight > g.nslots)
		return -SDR_CONN_E_INFLIGHT;
	g.max_data_pkts = (uint32_t)pkts;
	g.max_data_chunks = (g.max_data_pkts + g.pkts_per_chunk - 1) / g.pkts_per_chunk;
	if (a->max_chunk_shift > 10 ||
	    (g.pkts_per_chunk >> a->max_chunk_shift) << a->max_chunk_shift != g.pkts_per_chunk)
		return -SDR_CONN_E_CHUNK_SHIFT;
	g.max_chunk_shift = a->max_chunk_shift;
	g.max_units = sdr_conn_msg_chunks_at(&g, a->max_msg_size, g.max_chunk_shift);
	if (a->ec_k != 0 || a->ec_m != 0) {
		if (a->ec_k < 1 || a->ec_m < 1 || a->ec_k + a->ec_m > 255)
			return -SDR_CONN_E_EC;
		g.max_parity_chunks = sdr_conn_parity_chunks(g.max_data_chunks, a->ec_k, a->ec_m);
		if (a->parity_cap_chunks > g.max_parity_chunks)
			g.max_parity_chunks = a->parity_cap_chunks;
		g.max_parity_pkts = g.max_parity_chunks * g.pkts_per_chunk;
		g.max_parity_units = g.max_parity_chunks << g.max_chunk_shift;
		/* parity starts at the first chunk boundary after the largest message */
		g.parity_pkt_off = g.max_data_chunks * g.pkts_per_chunk;
		if ((uint64_t)g.parity_pkt_off + g.max_parity_pkts > sdr_imm_max_pkts(&a->split))
			return -SDR_CONN_E_PARITY_FIT;
	}
	if (a->dir < SDR_DIR_SEND || a->dir > SDR_DIR_BOTH)
		return -SDR_CONN_E_DIR;
	g.ndata_qpns = (uint32_t)a->channels * a->generations;
	if (a->local_qpn == 0 || a->remote_qpn == 0 ||
	    (uint64_t)a->local_qpn + g.ndata_qpns > ROCE_QPN_MASK ||
	    (uint64_t)a->remote_qpn + g.ndata_qpns > ROCE_QPN_MASK)
		return -SDR_CONN_E_QPN;
	span = (uint64_t)(g.parity_pkt_off ? g.parity_pkt_off + g.max_parity_pkts :
			  g.max_data_pkts) << g.mtu_shift;
	g.slot_span = span;
	*out = g;
	return 0;
}

enum sdr_qpn_kind
sdr_conn_qpn_decode(uint32_t base, const struct sdr_conn_attr *a, uint32_t qpn,
		    uint32_t *ch, uint32_t *gen)
{
	uint32_t n = (uint32_t)a->channels * a->generations, idx;

	if (qpn < base || qpn > base + n)
		return SDR_QPN_FOREIGN;
	idx = qpn - base;
	if (idx == n)
		return SDR_QPN_CTRL;
	*ch = idx % a->channels;
	*gen = idx / a->channels;
	return SDR_QPN_DATA;
}
