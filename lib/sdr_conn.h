/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An SDR connection (an "SDR QP"): its attributes, their validation, the geometry derived
 * from them, and the QPN layout.
 *
 * A connection owns channels x generations consecutive data QPNs followed by one control
 * QPN, on each side:
 *
 *   data QPN(channel c, generation g) = base + g * channels + c
 *   control QPN                      = base + channels * generations
 *
 * Packets of a message travel round-robin over the channels of the message's generation;
 * the receiver reads the generation back from the destination QPN.
 *
 * A receive slot's packet offset space (2^off_bits packets of one MTU) holds the message
 * data at offsets [0, max_data_pkts) and, when the connection uses erasure coding, the
 * parity chunks at [parity_pkt_off, parity_pkt_off + max_parity_pkts). The RETH virtual
 * address of a packet is msg_id * slot_span + pkt_off * mtu (a zero-based root key).
 */
#ifndef SDR_CONN_H
#define SDR_CONN_H

#include <stdint.h>

#include "sdr_imm.h"

enum sdr_dir {
	SDR_DIR_SEND = 1,
	SDR_DIR_RECV = 2,
	SDR_DIR_BOTH = 3,
};

/** Attributes of a connection, as configured. */
struct sdr_conn_attr {
	uint32_t mtu;			/**< payload bytes per packet: 256, 512, 1024, 2048, 4096 */
	uint32_t chunk_size;		/**< a multiple of mtu, at most 1024 packets */
	uint8_t max_chunk_shift;	/**< a scheme change may bring chunks of chunk_size >> s
					 *   for s up to this (0: the chunk never changes); each
					 *   must still be a whole number of packets. State is
					 *   sized for the smallest */
	struct sdr_imm_split split;	/**< immediate layout */
	uint16_t channels;		/**< data QPNs per generation, 1..64 */
	uint16_t generations;		/**< 1..64 */
	uint64_t max_msg_size;		/**< bytes, >= 1 */
	uint32_t max_inflight;		/**< messages in flight, 1..2^id_bits */
	uint16_t ec_k;			/**< data chunks per submessage; 0: no parity region */
	uint16_t ec_m;			/**< parity chunks per submessage */
	uint32_t parity_cap_chunks;	/**< with ec_k: 0, or a parity region of at least this
					 *   many chunks for the largest message (room for every
					 *   code a scheme change may bring: sdr_ep_change_scheme()) */
	uint8_t dir;			/**< enum sdr_dir */
	uint32_t local_qpn;		/**< first data QPN on this side */
	uint32_t remote_qpn;		/**< first data QPN on the peer */
	uint32_t remote_ctrl_qpn;	/**< the peer's control QPN; 0: the one after its data
					 *   QPNs (a verbs peer's QPNs are the NIC's choice) */
	uint32_t local_rkey;		/**< R_Key the peer puts in our RETHs */
	uint32_t remote_rkey;		/**< R_Key we put in the peer's RETHs */
};

/** Defaults: 4 KiB MTU, 64 KiB chunks, 10/18/4, 8 channels, 4 generations, 8 MiB, 128. */
void sdr_conn_attr_default(struct sdr_conn_attr *a);

/*
 * Every reason an attribute set is refused: symbol, message. One list, so the enum and
 * the messages cannot drift apart.
 */
#define SDR_CONN_ERRORS(X) \
	X(MTU,		"mtu must be 256, 512, 1024, 2048 or 4096") \
	X(CHUNK,	"chunk size must be a non-zero multiple of the mtu, at most 1024 packets") \
	X(CHUNK_SHIFT,	"smallest chunk (chunk size >> max chunk shift) must be a multiple of the mtu") \
	X(SPLIT,	"immediate split must be three widths summing to 32, message id 1..16 bits") \
	X(CHANNELS,	"channels must be 1..64") \
	X(GENERATIONS,	"generations must be 1..64") \
	X(MAX_MSG,	"max message size must be >= 1 byte and fit the immediate's offset field") \
	X(INFLIGHT,	"max in-flight messages must be 1..2^id_bits") \
	X(EC,		"erasure code k,m must be 1..255 with k+m <= 255") \
	X(PARITY_FIT,	"message plus parity packets do not fit the immediate's offset field") \
	X(DIR,		"direction must be send, recv or both") \
	X(QPN,		"QPN range must lie in 1..0xFFFFFF")

enum sdr_conn_err {
	SDR_CONN_OK = 0,
#define X(sym, msg) SDR_CONN_E_##sym,
	SDR_CONN_ERRORS(X)
#undef X
	SDR_CONN_E_COUNT
};

/** One-line message for a (positive or negated) enum sdr_conn_err. */
const char *sdr_conn_strerror(int err);

/** What follows from the attributes. */
struct sdr_conn_geom {
	uint32_t mtu_shift;		/**< log2(mtu) */
	uint32_t pkts_per_chunk;
	uint32_t max_data_pkts;		/**< ceil(max_msg_size / mtu) */
	uint32_t max_data_chunks;
	uint32_t max_parity_chunks;	/**< ceil(max_data_chunks / k) * m, 0 without EC */
	uint32_t max_parity_pkts;
	uint32_t max_chunk_shift;	/**< attr.max_chunk_shift */
	uint32_t max_units;		/**< data chunks of the largest message at the smallest
					 *   chunk (= max_data_chunks when the chunk never changes) */
	uint32_t max_parity_units;	/**< parity chunks of the parity region at the smallest
					 *   chunk (a smaller chunk never needs more parity packets) */
	uint32_t parity_pkt_off;	/**< first packet offset of the parity region */
	uint32_t nslots;		/**< 2^id_bits */
	uint32_t ndata_qpns;		/**< channels * generations */
	uint64_t slot_span;		/**< bytes of VA per slot */
};

/**
 * Check attributes and derive the geometry.
 *
 * @return 0, or -enum sdr_conn_err naming the first bad attribute; @p g is then untouched.
 */
int sdr_conn_geometry(const struct sdr_conn_attr *a, struct sdr_conn_geom *g);

/** Data QPN of (channel, generation) for a connection starting at @p base. */
static inline uint32_t
sdr_conn_data_qpn(uint32_t base, const struct sdr_conn_attr *a, uint32_t ch, uint32_t gen)
{
	return base + gen * a->channels + ch;
}

/** Control QPN of a connection starting at @p base. */
static inline uint32_t
sdr_conn_ctrl_qpn(uint32_t base, const struct sdr_conn_attr *a)
{
	return base + (uint32_t)a->channels * a->generations;
}

/** The peer's control QPN: set explicitly, or the one after its data QPNs. */
static inline uint32_t
sdr_conn_remote_ctrl_qpn(const struct sdr_conn_attr *a)
{
	return a->remote_ctrl_qpn ? a->remote_ctrl_qpn : sdr_conn_ctrl_qpn(a->remote_qpn, a);
}

enum sdr_qpn_kind {
	SDR_QPN_FOREIGN,	/**< not one of this connection's QPNs */
	SDR_QPN_DATA,
	SDR_QPN_CTRL,
};

/** Map one of our QPNs (relative to @p base) to its role, channel and generation. */
enum sdr_qpn_kind sdr_conn_qpn_decode(uint32_t base, const struct sdr_conn_attr *a,
				      uint32_t qpn, uint32_t *ch, uint32_t *gen);

/** Generation of the message with send/receive sequence number @p seq. */
static inline uint32_t
sdr_conn_seq_gen(const struct sdr_conn_attr *a, uint64_t seq)
{
	return (uint32_t)((seq >> a->split.id_bits) % a->generations);
}

/** Message id (slot) of sequence number @p seq. */
static inline uint32_t
sdr_conn_seq_slot(const struct sdr_conn_attr *a, uint64_t seq)
{
	return (uint32_t)(seq & ((1ull << a->split.id_bits) - 1));
}

/** RETH virtual address of packet @p pkt_off of slot @p msg_id. */
static inline uint64_t
sdr_conn_va(const struct sdr_conn_geom *g, uint32_t msg_id, uint32_t pkt_off)
{
	return (uint64_t)msg_id * g->slot_span + ((uint64_t)pkt_off << g->mtu_shift);
}

/** Number of packets (>= 1) and chunks (>= 1) of a message of @p len bytes. */
static inline uint32_t
sdr_conn_msg_pkts(const struct sdr_conn_geom *g, uint64_t len)
{
	return len == 0 ? 1 : (uint32_t)((len + (1ull << g->mtu_shift) - 1) >> g->mtu_shift);
}

static inline uint32_t
sdr_conn_msg_chunks(const struct sdr_conn_geom *g, uint64_t len)
{
	return (sdr_conn_msg_pkts(g, len) + g->pkts_per_chunk - 1) / g->pkts_per_chunk;
}

/** Packets per chunk at chunk shift @p shift (chunk_size >> shift). */
static inline uint32_t
sdr_conn_shift_ppc(const struct sdr_conn_geom *g, uint32_t shift)
{
	return g->pkts_per_chunk >> shift;
}

/** Chunks of a message of @p len bytes at chunk shift @p shift. */
static inline uint32_t
sdr_conn_msg_chunks_at(const struct sdr_conn_geom *g, uint64_t len, uint32_t shift)
{
	uint32_t ppc = sdr_conn_shift_ppc(g, shift);

	return (sdr_conn_msg_pkts(g, len) + ppc - 1) / ppc;
}

/** Parity chunks of a message of @p nchunks data chunks under code (k, m). */
static inline uint32_t
sdr_conn_parity_chunks(uint32_t nchunks, uint32_t k, uint32_t m)
{
	return k == 0 ? 0 : (nchunks + k - 1) / k * m;
}

#endif /* SDR_CONN_H */
