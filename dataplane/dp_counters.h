/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's own counter tables (counters.h): a port's counters besides the parser's
 * verdicts, and an SDK client's. No DPDK here, so sdr-docgen can print them.
 */
#ifndef SDR_DP_COUNTERS_H
#define SDR_DP_COUNTERS_H

#include "counters.h"

/* Port counters besides the parser verdicts (roce_verdict_table): symbol, name, kind, meaning. */
#define DP_PORT_COUNTERS(X) \
	X(RX_PKTS, "rx_pkts", OK, \
	  "per frame received from the device on this port") \
	X(RX_BYTES, "rx_bytes", OK, \
	  "bytes of frames received from the device on this port, per byte of frame") \
	X(TX_PKTS, "tx_pkts", OK, \
	  "per frame the device took for sending on this port") \
	X(TX_BYTES, "tx_bytes", OK, \
	  "bytes of frames the device took for sending on this port, per byte of frame") \
	X(TX_FULL, "tx_ring_full_drops", DROP, \
	  "per frame dropped because a TX queue and its 1024-frame backlog, or a split hand-over " \
	  "ring, were full") \
	X(NO_MBUF, "mbuf_alloc_failures", ERROR, \
	  "per failed mbuf allocation: a send burst could not be refilled, or a zero-copy " \
	  "frame's copy failed (lost)") \
	X(NOT_ROCE, "not_roce_dropped", DROP, \
	  "per received frame that is not RoCEv2 (not IP, not UDP 4791, IP fragment) dropped: no " \
	  "exception port") \
	X(EXCEPTION, "not_roce_to_exception_port", INFO, \
	  "per received frame that is not RoCEv2 forwarded to the exception port") \
	X(EXC_CHAIN, "exception_chain_dropped", DROP, \
	  "per frame for this (exception) port dropped: it came in several segments, this " \
	  "port cannot send chains and it does not fit one mbuf") \
	X(UNKNOWN_QPN, "unknown_qpn", DROP, \
	  "per received RoCE packet dropped because its destination QPN is no connection's") \
	X(MULTISEG_IN_PLACE, "rx_multiseg_in_place", INFO, \
	  "per received frame in several mbufs parsed where it lies (headers in the first, " \
	  "payload in one: a zero-copy sender's frame, a NIC's header split), no copy") \
	X(MULTISEG, "rx_multiseg_copied", INFO, \
	  "per received frame in several mbufs copied whole into scratch to be parsed (another " \
	  "layout, or a frame the parser finds fault with)") \
	X(TOO_BIG, "rx_too_big", DROP, \
	  "per received frame in several mbufs dropped because it cannot be parsed where it " \
	  "lies and is larger than the 16 KiB scratch") \
	X(NOT_ALLOWED, "source_not_allowed", DROP, \
	  "per received RoCE packet dropped because its source IP is not in the port's allowlist") \
	X(WRONG_PEER, "wrong_peer_address", DROP, \
	  "per received RoCE packet dropped because its source IP is not the connection's peer") \
	X(WRONG_PKEY, "wrong_pkey", DROP, \
	  "per received RoCE packet dropped because its P_Key is not the connection's") \
	X(WRONG_SPORT, "udp_sport_out_of_range", DROP, \
	  "per received RoCE packet dropped because its UDP source port is outside the " \
	  "connection's range") \
	X(WRONG_ENGINE, "wrong_engine_queue", DROP, \
	  "per received RoCE packet dropped because it came in on the queue of an engine not " \
	  "owning its connection") \
	X(TX_ZERO_COPY, "tx_zero_copy_frames", INFO, \
	  "per data frame built zero-copy: an mbuf chain attached to the application's buffer") \
	X(TX_ZC_COPIED, "tx_zero_copy_fallback_copies", INFO, \
	  "per zero-copy data frame copied instead: no attach mbufs, or its send's hold count " \
	  "full") \
	X(TX_STALLED, "tx_stalled_drops", DROP, \
	  "per frame dropped because the device took none of its TX queue's frames for 1 s " \
	  "(a peer gone, a link down): the frames waiting then, and each frame after them " \
	  "until the device takes one again") \
	X(LINK_RESERVE, "link_data_drops_pool_low", DROP, \
	  "per data frame dropped before the emulated link because the mbuf pool was below its " \
	  "reserve")

enum dp_port_counter {
#define X(sym, name, kind, doc) DP_PORT_##sym,
	DP_PORT_COUNTERS(X)
#undef X
	DP_PORT_NCOUNTERS
};

const char *dp_port_counter_name(enum dp_port_counter c);

/** The port counters as a table. */
extern const struct sdr_counter_table dp_port_counter_table;

/* Counters of one SDK client, in client show: symbol, name, kind, meaning. */
#define SDK_CLIENT_COUNTERS(X) \
	X(REQUESTS, "requests", OK, \
	  "per request taken from the client's submission queue") \
	X(REFUSED, "requests_refused", ERROR, \
	  "per request refused with an error completion (unknown op, conn not open, buffer " \
	  "outside arena, ...)") \
	X(STALE_HANDLES, "stale_handles", DROP, \
	  "per RECV_DONE or stream piece ignored because it names no live operation of this " \
	  "client") \
	X(STREAM_REFUSED, "stream_pieces_refused", DROP, \
	  "per STREAM_ADD whose range is not one of its stream's (an offset that is not a " \
	  "chunk's, past the end, or a piece shorter than a chunk before the end): ignored") \
	X(LOST, "completions_lost", ERROR, \
	  "per completion lost because the client's completion queue was full") \
	X(PROTOCOL, "protocol_errors", ERROR, \
	  "per queue index found broken in the client's queues; the client is dropped")

enum sdk_client_counter {
#define X(sym, name, kind, doc) SDK_C_##sym,
	SDK_CLIENT_COUNTERS(X)
#undef X
	SDK_C_NCOUNTERS
};

/** The SDK client counters as a table. */
extern const struct sdr_counter_table sdk_client_counter_table;

/* Counters of the SDK service as a whole (every engine's shard added): symbol, name, kind,
 * meaning. */
#define SDK_SERVICE_COUNTERS(X) \
	X(STALE_COMPLETIONS, "stale_completions", DROP, \
	  "per completion from a connection whose SDK operation has already ended (released " \
	  "by its application, or its application gone): discarded, no application told")

enum sdk_service_counter {
#define X(sym, name, kind, doc) SDK_S_##sym,
	SDK_SERVICE_COUNTERS(X)
#undef X
	SDK_S_NCOUNTERS
};

/** The SDK service counters as a table. */
extern const struct sdr_counter_table sdk_service_counter_table;

/** The dataplane's tables, NULL-terminated (ports first, for the generated reference). */
extern const struct sdr_counter_table *const dp_counter_tables[];

#endif /* SDR_DP_COUNTERS_H */
