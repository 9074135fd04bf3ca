/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Discrete-event simulation of one SDR connection: the real sender and receiver state
 * machines (rel_tx, rel_rx) joined by a modelled long-haul link, on a virtual clock.
 * Payload-free: chunks and control messages are events, so a 128 MiB message costs a few
 * thousand events. Used by tools/sdr-sim and by the reliability unit tests, which script
 * the losses and check the exact sends and completion times.
 *
 * Link model, per direction: serialization at the link bandwidth, then a one-way delay;
 * per-packet loss, i.i.d. or Gilbert-Elliott bursts; optional reordering (a chunk is held
 * back by a random extra delay). The receiver keeps a packet bitmap per chunk, as the
 * dataplane's does: a chunk is in once each of its packets has arrived in some
 * transmission, so a resent chunk only needs the packets still missing to get through.
 */
#ifndef SDR_SIM_H
#define SDR_SIM_H

#include <stdint.h>

#include "rng.h"
#include "sdr_conn.h"
#include "sdr_rel.h"

struct sdr_sim_link {
	double bandwidth_bps;	/**< serialization rate of the data direction */
	uint64_t delay_ns;	/**< one-way propagation delay (RTT = 2 x delay) */
	double p_loss;		/**< i.i.d. per-packet loss (data and control) */
	double ctrl_loss;	/**< control-packet loss; < 0: same as p_loss */
	int gilbert;		/**< use the Gilbert-Elliott model for data instead of p_loss */
	double ge_p_gb;		/**< per packet: good -> bad */
	double ge_p_bg;		/**< per packet: bad -> good */
	double ge_loss_good;
	double ge_loss_bad;
	double reorder_p;	/**< probability a chunk is delayed extra */
	uint64_t reorder_ns;	/**< extra delay is uniform in [0, reorder_ns] */
};

/** What happened, for tests and traces. */
enum sdr_sim_ev_kind {
	SDR_SIM_EV_DATA,	/**< sender put a data chunk on the wire */
	SDR_SIM_EV_PARITY,
	SDR_SIM_EV_CTRL,	/**< receiver sent a control message */
	SDR_SIM_EV_TX_DONE,	/**< sender completion */
	SDR_SIM_EV_RX_DONE,	/**< receiver completion */
	SDR_SIM_EV_DECODE,	/**< receiver decoded a submessage */
};

struct sdr_sim_event {
	uint8_t kind;		/**< enum sdr_sim_ev_kind */
	uint8_t lost;		/**< the link dropped it */
	uint8_t retransmit;
	uint8_t ctrl_type;	/**< for CTRL: enum sdr_ctrl_type */
	uint16_t ctrl_flags;
	uint64_t time_ns;
	uint64_t seq;
	uint32_t index;		/**< chunk / parity index / submessage */
	uint32_t attempt;	/**< how many times this chunk went out before */
	uint32_t pkts;		/**< DATA, PARITY: packets of the transmission */
	uint32_t pkts_lost;	/**< ... of which the link dropped (lost: at least one) */
};

/**
 * Optional hooks: @c drop decides the fate of one transmission instead of the loss model
 * (return 1 to drop every packet of it, 0 to deliver them all, -1 to use the model); @c delay adds to a data chunk's
 * delay (scripted reordering); @c trace sees every event.
 */
struct sdr_sim_hooks {
	int (*drop)(void *arg, const struct sdr_sim_event *ev);
	uint64_t (*delay)(void *arg, const struct sdr_sim_event *ev);	/**< extra delay */
	void (*trace)(void *arg, const struct sdr_sim_event *ev);
	void *arg;
};

struct sdr_sim_cfg {
	struct sdr_conn_attr attr;	/**< max_inflight, chunk, mtu, ec_k/m; QPNs unused */
	struct sdr_rel_cfg rel;		/**< scheme, RTT, alpha, beta, rate, ACK policy, ... */
	struct sdr_sim_link link;
	uint64_t msg_len;
	uint32_t messages;		/**< messages per trial, sent back to back */
	uint32_t pkt_overhead;		/**< wire bytes per packet besides payload */
	uint64_t max_time_ns;		/**< give up after this much virtual time (0: 1000 s) */
};

struct sdr_sim_result {
	uint32_t messages;
	uint32_t ok;
	double mean_s;			/**< mean sender completion time (submit -> final ACK) */
	double max_s;
	double rx_mean_s;		/**< mean receiver completion (first sent -> all in) */
	uint64_t data_sent;
	uint64_t parity_sent;
	uint64_t retransmitted;
	uint64_t ctrl_sent;
	uint64_t decoded;
	uint64_t fallback;
	uint64_t pkts_sent;		/**< data and parity packets put on the wire */
	uint64_t pkts_lost;		/**< ... of which the link dropped */
	uint64_t end_ns;		/**< virtual time at the end */
	uint64_t rtt_min_ns;		/**< the sender's path estimates at the end (path_est.h) */
	double srtt_ns;
	uint64_t rtt_samples;
	double rate_max_bps;
	uint64_t rate_samples;
	uint64_t rto_ns;		/**< the sender's RTO at the end (rel_tx_rto()) */
	uint64_t rto_backoffs;		/**< ... and how often it doubled on the way */
	uint64_t rx_rtt_min_ns;		/**< the receiver's RTT samples (rel_rx_path()) */
	uint64_t rx_rtt_samples;
	uint64_t rx_rto_ns;		/**< the receiver's timers at the end (rel_rx_rto()) */
	uint64_t rx_timer_rtt_ns;
	double *times_s;		/**< per message, if the caller gave an array */
};

/**
 * Run one trial.
 * @param times  optional array of cfg->messages doubles for per-message completion times.
 * @return 0, -EINVAL (bad configuration), -ETIMEDOUT (virtual time limit), -ENOMEM,
 *   -EDEADLK (the state machines stopped making progress: a bug).
 */
int sdr_sim_run(const struct sdr_sim_cfg *cfg, uint64_t seed, const struct sdr_sim_hooks *hooks,
		struct sdr_sim_result *res, double *times);

#endif /* SDR_SIM_H */
