/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Online `auto`: an estimate of a path's packet loss from what the connection sees, and the
 * decision whether another scheme would now be worth a change.
 *
 * The estimate. Each sample is a count of packets and how many of them were lost (the
 * receiver judges every frame on its data QPNs by the PSNs that arrive: psn_loss.h). Two
 * estimators keep
 * discounted counts, a slow one (half-life @ref sdr_auto_cfg.halflife_pkts packets) and a
 * fast one (a sixteenth of it). Each gives the loss rate lost / pkts with a Wilson score
 * interval; when the fast one's interval (at z = 3) no longer overlaps the slow one's, the
 * link has changed and the slow estimator restarts from the fast one's counts, so a step
 * from 1e-5 to 1e-2 is followed within a few thousand packets instead of a half-life.
 *
 * The decision. The model (sdr_model.h) ranks the candidates at the estimate, on the
 * configured chunk and on each smaller chunk the configuration allows (halves of it, down to
 * @ref sdr_auto_cfg.max_chunk_shift; a smaller chunk must be more than 1 % faster, or as
 * fast with less parity). The current
 * scheme is kept — and the reason said — while too few packets were seen, while the last
 * change is recent (@ref sdr_auto_cfg.dwell_ns), when the current scheme is the model's
 * choice, when the choice is less than @ref sdr_auto_cfg.hysteresis faster than the current
 * scheme at the estimate, or when it is not faster at both ends of the estimate's interval.
 * A choice as fast as the current scheme (within 1 %, the model's own tie rule) with less
 * parity is taken without the hysteresis: it costs the link less for the same time.
 * With no loss seen yet the estimate is the interval's upper end (the most loss that
 * seeing none still allows), so a connection that started from a pessimistic hint comes
 * back to SR-NACK as the evidence of a clean link grows.
 *
 * Nothing here reads a clock or allocates; the model's evaluation costs milliseconds at
 * large messages, so callers decide off the packet path.
 */
#ifndef SDR_AUTO_H
#define SDR_AUTO_H

#include <stddef.h>
#include <stdint.h>

#include "path_est.h"
#include "sdr_model.h"

struct sdr_auto_cfg {
	double halflife_pkts;	/**< slow estimator's memory, packets (default 2^20) */
	uint64_t min_pkts;	/**< packets before the first decision (default 20000) */
	double hysteresis;	/**< modelled gain a change needs, as a share (default 0.1) */
	uint64_t dwell_ns;	/**< least time between changes (default 2 s) */
	uint8_t max_chunk_shift; /**< chunks the choice may run on: the model point's chunk
				  *   >> 0 .. this, each a whole number of packets (default 0:
				  *   the chunk never changes) */
};

/** Defaults (see the fields). */
void sdr_auto_cfg_default(struct sdr_auto_cfg *c);

/** Discounted counts of one estimator. */
struct sdr_auto_counts {
	double pkts;
	double lost;
};

/** A loss estimate with its 95 % interval. */
struct sdr_auto_estimate {
	double p;		/**< lost / pkts (0 before any packet) */
	double lo, hi;		/**< Wilson score interval, z = 1.96 */
	double pkts;		/**< packets behind it (discounted) */
	double lost;		/**< losses behind it (discounted) */
	uint64_t total_pkts;	/**< every packet seen, undiscounted */
	uint64_t total_lost;
	uint32_t changes;	/**< times the link was found to have changed */
};

struct sdr_auto {
	struct sdr_auto_cfg cfg;
	struct sdr_auto_counts slow, fast;
	uint64_t total_pkts, total_lost;
	uint32_t link_changes;
	uint64_t last_switch_ns;	/**< when the scheme last changed (0: never) */
	struct sdr_scheme refused;	/**< the last choice the peer (or this end) refused */
	uint64_t refused_until_ns;	/**< ... not asked for again before (0: none) */
	uint32_t refusals;		/**< times in a row that one was refused */
	double msg_bytes;		/**< the messages sent, a running mean (0: none yet) */
};

/** Start with no evidence. */
void sdr_auto_init(struct sdr_auto *a, const struct sdr_auto_cfg *cfg);

/** A message of @p len bytes was sent: the decisions are for the sizes really sent (a
 * running mean, 1/16 weight per message). */
void sdr_auto_message(struct sdr_auto *a, uint64_t len);

/** A sample: @p pkts packets of which @p lost were lost. */
void sdr_auto_observe(struct sdr_auto *a, uint64_t pkts, uint64_t lost);

/** The current estimate. */
void sdr_auto_estimate(const struct sdr_auto *a, struct sdr_auto_estimate *e);

/** Wilson score interval of @p lost in @p pkts at @p z (pkts 0: [0, 1]). */
void sdr_auto_wilson(double lost, double pkts, double z, double *lo, double *hi);

enum sdr_auto_verdict {
	SDR_AUTO_CHANGE,	/**< change to the choice */
	SDR_AUTO_KEEP_FEW,	/**< too few packets seen */
	SDR_AUTO_KEEP_DWELL,	/**< the last change is too recent */
	SDR_AUTO_KEEP_BEST,	/**< the current scheme is the model's choice */
	SDR_AUTO_KEEP_MARGIN,	/**< the choice is not faster by the hysteresis */
	SDR_AUTO_KEEP_UNSURE,	/**< the choice is not faster at both ends of the interval */
	SDR_AUTO_KEEP_MODEL,	/**< the model could not rank the schemes here */
	SDR_AUTO_KEEP_REFUSED,	/**< the choice was refused lately (sdr_auto_refused()) */
};

/** A decision and what it rests on. */
struct sdr_auto_decision {
	enum sdr_auto_verdict verdict;
	struct sdr_auto_estimate est;
	double p_used;			/**< the loss rate the model was given */
	struct sdr_scheme current;
	struct sdr_scheme choice;	/**< the model's choice (= current when kept for it) */
	double current_s;		/**< modelled mean of the current scheme at p_used */
	double choice_s;		/**< ... and of the choice */
	char why[200];			/**< one line: the verdict and its numbers */
};

/**
 * The model's best scheme for point @p p on its chunk or a half of it down to
 * chunk >> @p max_chunk_shift (a whole number of packets): the best of each chunk, a
 * smaller chunk taken when more than 1 % faster or as fast with less parity. @p best's
 * scheme carries the chunk shift. @return > 0 when some chunk's candidates were ranked, or
 * the model's negated error on the configured chunk.
 */
int sdr_auto_best(const struct sdr_model_params *p, uint32_t max_chunk_shift,
		  struct sdr_model_choice *best);

/**
 * Decide at @p now whether @p current should change for the messages of the model point
 * @p p (its drop is replaced by the estimate, its message size by the mean of the messages
 * sent when there were some; its candidates are the ones considered).
 * Fills @p d; on SDR_AUTO_CHANGE the caller changes to d->choice and then calls
 * sdr_auto_changed(). @return d->verdict.
 */
enum sdr_auto_verdict sdr_auto_decide(const struct sdr_auto *a, const struct sdr_model_params *p,
				      const struct sdr_scheme *current, uint64_t now,
				      struct sdr_auto_decision *d);

/** The scheme changed at @p now (starts the dwell time). */
void sdr_auto_changed(struct sdr_auto *a, uint64_t now);

/**
 * The change to @p s asked at @p now was refused (by the peer, or this end cannot run it):
 * it is not chosen again for 16 dwell times, twice as long at each refusal of it in a row
 * (up to 256 dwell times). Every change asked costs a drain of the messages in flight.
 */
void sdr_auto_refused(struct sdr_auto *a, const struct sdr_scheme *s, uint64_t now);

/** Samples of the RTT or the delivery rate before they replace the configured value. */
#define SDR_AUTO_PATH_MIN_SAMPLES 16

/** The path the model was given, and where each figure came from. */
struct sdr_auto_path {
	double rtt_s;			/**< the RTT the model used */
	double bandwidth_bps;		/**< the rate the model used */
	uint8_t rtt_measured;		/**< rtt_s is the smallest measured RTT */
	uint8_t rate_measured;		/**< bandwidth_bps is the largest delivery rate measured */
	uint8_t paced;			/**< the connection is paced: its rate is configured */
	uint64_t rtt_samples;
	double srtt_s, rttvar_s;	/**< smoothed RTT and its mean deviation (0: no samples) */
	uint64_t rate_samples;
	double rate_max_bps;		/**< largest delivery rate in the window (0: none) */
	double rtt_min_s;		/**< smallest RTT in the window (0: none) */
	double rto_s;			/**< the sender's retransmission timeout in force */
};

/**
 * Put what the connection measured of its path (@p e, at @p now) into the model point
 * @p p, which holds the configured path: once SDR_AUTO_PATH_MIN_SAMPLES were taken, the RTT
 * becomes the smallest one measured, with alpha and beta rescaled so the modelled timers keep
 * the length the connection's timers really have: the RTO @p rto_ns the sender uses now
 * (rel_tx_rto(); 0: the configured one, rtt (1 + alpha)), and the receiver's EC slack, beta
 * times the configured RTT, or with @p rx_measured (rto = measured at the receiving end too:
 * rel_rx_rto()) beta times the measured one; the rate
 * becomes the largest delivery rate measured when the connection is not paced (@p paced 0:
 * the configured point then has only a guess). A paced connection keeps its pacing rate.
 * Fills @p u with what was used.
 */
void sdr_auto_use_path(struct sdr_model_params *p, const struct path_est *e, int paced,
		       uint64_t rto_ns, int rx_measured, uint64_t now, struct sdr_auto_path *u);

/** One line: "rtt 25.0 ms measured (srtt 25.3 +- 0.2 ms, 812 samples), rate ..., rto 75 ms" */
void sdr_auto_path_format(const struct sdr_auto_path *u, char *buf, size_t len);

/** Short name of a verdict ("change", "keep: few packets", ...). */
const char *sdr_auto_verdict_name(enum sdr_auto_verdict v);

#endif /* SDR_AUTO_H */
