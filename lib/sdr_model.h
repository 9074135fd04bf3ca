/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Analytic model of message completion time for the SDR reliability schemes (the model of
 * the SDR paper, see docs/model.md, with per-packet resends: model v2): selective repeat (SR,
 * and SR-NACK with the receiver's NACK timing), erasure coding (XOR and MDS) with SR
 * fallback, the Ring Allreduce bound,
 * and an advisor that ranks the schemes for one operating point. Pure math: no clock, no
 * allocation, no global state.
 *
 * Notation: M = message size in chunks, T_INJ = chunk bits / bandwidth, N = packets per
 * chunk, P = chunk drop probability, RTO = RTT + alpha * RTT, O = RTO + T_INJ.
 */
#ifndef SDR_SDR_MODEL_H
#define SDR_SDR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_rel.h"

/*
 * Every error: symbol, name, meaning. Functions return 0 or the negated enum value
 * (-SDR_MODEL_E_BAD_BANDWIDTH, ...). The scheme's own errors (sdr_rel.h) come first, with
 * the same values as SDR_SCHEME_E_*.
 */
#define SDR_MODEL_ERRORS(X) \
	X(OK,			"ok",			"no error") \
	SDR_SCHEME_ERRORS(X) \
	X(BAD_SIZE,		"bad_size",		"message size is zero") \
	X(BAD_MTU,		"bad_mtu",		"MTU is zero") \
	X(BAD_CHUNK,		"bad_chunk",		"chunk size is zero") \
	X(CHUNK_NOT_MTU,	"chunk_not_mtu",	"chunk size is not a multiple of the MTU") \
	X(BAD_BANDWIDTH,	"bad_bandwidth",	"bandwidth is not a positive finite number") \
	X(BAD_RTT,		"bad_rtt",		"RTT is negative or not finite") \
	X(BAD_DROP,		"bad_drop",		"drop probability is outside [0, 1)") \
	X(BAD_DROP_UNIT,	"bad_drop_unit",	"drop unit is neither packet nor chunk") \
	X(BAD_ALPHA,		"bad_alpha",		"alpha is negative or not finite") \
	X(BAD_BETA,		"bad_beta",		"beta is negative or infinite") \
	X(BAD_RATES,		"bad_rates",		"encode rates not positive, or MDS points not ascending in m") \
	X(BAD_CANDIDATES,	"bad_candidates",	"candidate list is empty or longer than 64") \
	X(BAD_CHUNKS,		"bad_chunks",		"chunk count is negative or not finite") \
	X(BAD_TIME,		"bad_time",		"time argument is negative or not finite") \
	X(BAD_DC_COUNT,		"bad_dc_count",		"Ring Allreduce needs at least one datacenter") \
	X(TOO_LOSSY,		"too_lossy",		"chunk drop probability too close to 1 for the tail sum") \
	X(TOO_COSTLY,		"too_costly",		"tail sum over its work budget: RTO tiny against the injection time of the message")

enum sdr_model_err {
#define X(sym, name, doc) SDR_MODEL_E_##sym,
	SDR_MODEL_ERRORS(X)
#undef X
	SDR_MODEL_E_COUNT
};

/** Name of an error ("bad_bandwidth"); accepts the error or its negation. */
const char *sdr_model_err_name(int err);

/** One-line description of an error; accepts the error or its negation. */
const char *sdr_model_strerror(int err);

/*
 * Per-core encode rates, in bytes of data per second. XOR costs the same per data byte for
 * every group size; an MDS (Reed-Solomon) encoder touches every data byte once per parity
 * chunk, so its time per byte grows with m: between two points the time per byte is
 * interpolated linearly in m, outside them it is scaled in proportion to m.
 */
#define SDR_MODEL_RATE_POINTS	8

struct sdr_model_rate_point {
	unsigned int m;		/**< parity chunks of the measured code */
	double bytes_per_s;	/**< data bytes encoded per second on one core */
};

struct sdr_model_rates {
	double xor_bytes_per_s;	/**< XOR parity, data bytes per second per core */
	unsigned int n_mds;	/**< points used in @ref mds, 1..SDR_MODEL_RATE_POINTS */
	struct sdr_model_rate_point mds[SDR_MODEL_RATE_POINTS];	/**< ascending in m */
};

/**
 * Default rates (docs/model.md): RS(8,2) 28 GB/s, RS(10,4) 15 GB/s, RS(32,8) 6.5 GB/s,
 * XOR 50 GB/s per core (ISA-L on one AVX-512 core).
 */
void sdr_model_rates_default(struct sdr_model_rates *r);

/**
 * Cores needed to encode @p s at the data rate of a link of @p bandwidth_bps carrying data
 * and parity (data rate = bandwidth / 8 * k / (k + m)). 0 for SR. Fractional: the caller
 * rounds up if it wants whole cores. @p rates NULL means the defaults.
 * @return 0 or a negated error.
 */
int sdr_model_encode_cores(const struct sdr_scheme *s, double bandwidth_bps,
			   const struct sdr_model_rates *rates, double *cores);

/** What the drop probability of @ref sdr_model_params counts. */
enum sdr_model_drop_unit {
	SDR_MODEL_DROP_PACKET,	/**< per MTU packet: P = 1 - (1 - p)^N */
	SDR_MODEL_DROP_CHUNK,	/**< per chunk: P = p */
};

/** Largest candidate list @ref sdr_model_advise ranks. */
#define SDR_MODEL_MAX_CANDIDATES 64

/** One operating point. Initialise with @ref sdr_model_params_init, then set fields. */
struct sdr_model_params {
	uint64_t msg_bytes;		/**< message size; M = ceil(msg_bytes / chunk_bytes) */
	uint32_t chunk_bytes;		/**< chunk size, a multiple of the MTU */
	uint32_t mtu_bytes;		/**< MTU (payload bytes per packet) */
	double bandwidth_bps;		/**< link rate, bit/s */
	double rtt_s;			/**< round-trip time, s */
	double drop;			/**< drop probability in [0, 1) */
	enum sdr_model_drop_unit drop_unit;	/**< what @ref drop counts */
	double alpha;			/**< SR RTO = RTT + alpha * RTT */
	double beta;			/**< EC fallback slack beta * RTT; NAN means alpha / 2 */
	double nack_allowance_s;	/**< sr-nack reordering allowance; NAN: RTT / 100, at
					 *   least 20 us (the dataplane's default) */
	const struct sdr_model_rates *rates;	/**< encode rates; NULL: defaults */
	const struct sdr_scheme *candidates;	/**< schemes to rank; NULL: the default set */
	unsigned int n_candidates;		/**< entries in @ref candidates */
};

/**
 * Defaults: msg_bytes 0 (must be set), 64 KiB chunks, 4096 MTU, 400 Gbit/s, 25 ms RTT,
 * drop 1e-4 per packet, alpha 2, beta NAN (alpha / 2), default rates and candidates.
 */
void sdr_model_params_init(struct sdr_model_params *p);

/** Quantities derived from the parameters. */
struct sdr_model_derived {
	double chunks;		/**< M */
	double pkts_per_chunk;	/**< N (a message shorter than a chunk: its own packets) */
	double t_inj_s;		/**< T_INJ = chunk_bytes * 8 / bandwidth (a message shorter
				 *   than a chunk: msg_bytes * 8 / bandwidth) */
	double p_chunk;		/**< P */
	double rto_s;		/**< RTT + alpha * RTT */
	double penalty_s;	/**< O = RTO + T_INJ */
	double beta;		/**< beta, resolved from NAN to alpha / 2 */
	double p_pkt;		/**< per-packet drop probability; 0 when given per chunk */
	double nack_allowance_s;	/**< resolved from NAN */
	double nack_first_s;	/**< SR-NACK O1: a chunk lost with chunks behind it */
	double nack_last_s;	/**< SR-NACK O1: the message's last chunk */
	double nack_repeat_s;	/**< SR-NACK O2: a resend lost again */
};

/** Check @p p and derive M, N, T_INJ, P, RTO, O. @return 0 or a negated error. */
int sdr_model_derive(const struct sdr_model_params *p, struct sdr_model_derived *d);

/** Chunk drop probability 1 - (1 - p_pkt)^n, accurate for tiny p_pkt. */
double sdr_model_chunk_drop(double p_pkt, double n);

/**
 * E[T_SR] for @p chunks chunks: E[max_i X_i] + RTT with X_i = i T_INJ + O (Y_i - 1), as the
 * discretised tail sum (docs/model.md), each chunk lost whole with @p p_chunk per attempt
 * (sdr_model_sr_mean_ex() with per-chunk loss and one O). A non-integer @p chunks
 * interpolates linearly between floor and ceil; 0 chunks give RTT. Cost grows with the
 * number of RTO rounds the tail needs times the chunks injected per round (chunks *
 * t_inj_s / O), and is bounded by a work budget: about 0.1 s on one core at most.
 * @param rto_s	RTT + alpha * RTT (RTT for SR-NACK); O = rto_s + t_inj_s.
 * @return 0, or a negated error: -SDR_MODEL_E_TOO_LOSSY when p_chunk is so close to 1 that
 *	the sum would need more than a few million steps, -SDR_MODEL_E_TOO_COSTLY when the
 *	sum would go over its work budget (an RTO tiny against the message's injection time).
 */
int sdr_model_sr_mean(double chunks, double t_inj_s, double rtt_s, double rto_s,
		      double p_chunk, double *mean_s);

/**
 * How the chunks of an SR transfer are resent and lost, for sdr_model_sr_mean_ex(). The
 * penalties are from the end of one send of a chunk to the end of its next send.
 */
struct sdr_model_sr {
	double chunks;		/**< chunks sent; a non-integer interpolates */
	double t_inj_s;		/**< T_INJ */
	double rtt_s;		/**< the final acknowledgement's round trip */
	double first_s;		/**< O1: the first resend of a chunk with chunks behind it */
	double last_s;		/**< O1 of the message's last chunk (SR-NACK detects it later) */
	double repeat_s;	/**< O2: every further resend of the same chunk */
	double drop;		/**< per packet when @ref pkts > 0, else per chunk */
	double pkts;		/**< packets per chunk N; 0: @ref drop is per chunk */
	unsigned int lost_before;	/**< 1: every chunk has been lost once already (the
					 *   chunks an EC fallback resends) */
};

/**
 * E[T_SR] with per-packet loss: a resend only needs the packets still missing (the
 * receiver's packet bitmap keeps the others), so a chunk is still missing after y sends
 * with 1 - (1 - p^y)^N, not P^y; and with a first resend timed apart from the later ones
 * (SR-NACK). @return 0 or a negated error, as sdr_model_sr_mean().
 */
int sdr_model_sr_mean_ex(const struct sdr_model_sr *a, double *mean_s);

/** Probability that one EC submessage decodes, and that it does not, each computed directly. */
struct sdr_model_decode {
	double ok;	/**< P_EC */
	double fail;	/**< 1 - P_EC, accurate when tiny */
};

/**
 * P_EC of an EC scheme at chunk drop probability @p p_chunk: MDS survives any m losses of
 * k + m chunks, XOR one loss in each of its m groups of k/m + 1 chunks.
 * @return 0 or a negated error (-SDR_MODEL_E_BAD_SCHEME for SR).
 */
int sdr_model_ec_decode(const struct sdr_scheme *s, double p_chunk, struct sdr_model_decode *out);

/** One scheme evaluated at one point. */
struct sdr_model_choice {
	struct sdr_scheme scheme;
	double mean_s;		/**< expected completion time (a lower bound for EC, see docs) */
	double parity_share;	/**< m / (k + m); 0 for SR */
	double encode_cores;	/**< cores to encode at line rate; 0 for SR */
	double p_fallback;	/**< EC: 1 - P_EC^L; SR: 0 */
	double exp_failures;	/**< EC: L (1 - P_EC) undecodable submessages; SR: 0 */
};

/** Evaluate one scheme at the point @p p. @return 0 or a negated error. */
int sdr_model_eval(const struct sdr_model_params *p, const struct sdr_scheme *s,
		   struct sdr_model_choice *out);

/**
 * Order choices in place: by mean time (ties: lower parity share, then fewer cores), then
 * move to the front the recommendation: among the entries within 1 % of the lowest mean,
 * the one with the lowest parity share, then the fewest cores, then the lowest mean.
 */
void sdr_model_rank(struct sdr_model_choice *c, unsigned int n);

/**
 * Evaluate every candidate of @p p (the default set when p->candidates is NULL: sr,
 * sr-nack, and ec-xor and ec-mds for (8,2), (16,4), (32,4), (32,8), (64,8)) and rank them
 * with @ref sdr_model_rank; out[0] is the recommendation.
 * @return the number of entries written (at most @p max_out), or a negated error.
 */
int sdr_model_advise(const struct sdr_model_params *p, struct sdr_model_choice *out,
		     unsigned int max_out);

/** The default candidate set; @p n receives its length. */
const struct sdr_scheme *sdr_model_default_candidates(unsigned int *n);

/**
 * Ring Allreduce over @p n_dc datacenters: 2 N - 2 dependent steps, each taking the compute
 * / transfer time @p step_s plus the mean reliability delay @p mu_x:
 * E[T] >= (2 N - 2)(C + mu_X).
 * @return 0 or a negated error.
 */
int sdr_model_allreduce(unsigned int n_dc, double step_s, double mu_x, double *mean_s);

#endif /* SDR_SDR_MODEL_H */
