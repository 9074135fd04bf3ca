/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Paths: which of several long-haul paths each data QPN of a connection takes, what the
 * sender learns of every path, and the periodic decision where the channels go.
 *
 * The network picks a path per frame from its UDP source port (ECMP); a connection's
 * frames of one data QPN share a source port, so the QPN is what is placed on a path, and
 * the sender places it by choosing its source port (the endpoint does: sdr_ep_set_paths()).
 * All generations of a channel are placed alike, since a message's packets go round-robin
 * over its generation's channels: a path's share of the traffic is its share of channels.
 *
 * What the sender learns. The receiver reports, per data QPN, the highest PSN it saw and
 * its PSN-judged counts (psn_loss.h: packets judged, and lost among them). Each report
 * moves the path's loss estimator (sdr_auto.h's, so a path that changes is followed within
 * a few thousand packets) by the counts' differences, for the path the QPN was on — once the
 * frames it sent before it was last placed are all judged (its highest PSN seen is a
 * window past the placement: frames still in flight on the old path, overtaken on a
 * shorter new one, are not the new path's loss). A QPN
 * whose highest PSN stands still while the sender has sent on it for longer than fail_ns
 * is stalled; a path whose QPNs with traffic are all stalled has failed (nothing it carries
 * arrives), and stays so until one of its QPNs moves again. Before the first report (a
 * peer not set up for paths sends none) no path fails.
 *
 * Each path's round trip, from the same reports: each data QPN keeps, one every RTT/16,
 * the last frame of a burst and when it was built (path_sel_sent(), after every burst); a
 * report's highest PSN was built no earlier than the newest kept frame at or below it, so
 * the time since then, less the time the PSN waited at the receiver for the report (its
 * hold, told in the report, rounded down), is a sample never shorter than the path's round
 * trip, and longer by at most the spacing. The smallest sample of a window (path_est.h) is
 * the path's.
 *
 * The decision (policy optimise). The objective is the expected completion time of the
 * connection's messages (sdr_model_eval() of its scheme) when its channels are spread evenly
 * over a set S of paths — a message completes with its slowest chunk, so at the RTT of the
 * longest path of S (each path's own once it has PATH_SEL_MIN_RTT_SAMPLES, the connection's
 * before; the RTO kept as long as the connection's really is): per-packet loss the mean of the paths' estimates (those that cannot
 * be told from the best path's, their 95 % intervals overlapping, at their pooled rate), rate the
 * connection's, but at most |S| times path_rate when each path carries at most that.
 * Candidates are the k best paths (failed ones never), k = 1 .. npaths — the least lossy
 * first, then those with capacity left for this connection (avail_bps: connections that
 * share the paths see each other's load, so they spread instead of all taking the same
 * best path), then the shorter; among
 * those within 1 % of the best time the one with the most paths is taken (the same time, more
 * capacity and less exposure to one path). The channels move only when the current placement
 * uses a failed path, or is modelled slower than the choice by more than the hysteresis; a
 * move keeps every channel that may stay where it is. A failed path that no channel is on
 * gets one back every probe_ns (taken from the path with the most), for fail_ns: if
 * something arrives there it is no longer failed and the decisions may use it again; if
 * not, the next decision takes the channel away. Connections that share paths may instead
 * decide together (path_sel_decide_joint(): the sum of their modelled times, or the
 * largest). The other
 * policies never move: hash
 * leaves each QPN on the path its default source port hashes to, spray puts channel c on
 * path c mod npaths.
 *
 * Nothing here reads a clock or allocates after path_sel_init(); the model takes
 * milliseconds, so path_sel_decide() runs off the packet path, on a copy.
 */
#ifndef SDR_PATH_SEL_H
#define SDR_PATH_SEL_H

#include <stddef.h>
#include <stdint.h>

#include "path_est.h"
#include "sdr_auto.h"
#include "sdr_model.h"

#define PATH_SEL_MAX_PATHS 8		/**< as the link emulator's (LINK_EMU_MAX_PATHS) */
#define PATH_SEL_MAX_QPS 1024		/**< data QPNs of a connection the selector tracks */

enum path_policy {
	PATH_POLICY_HASH = 0,		/**< each QPN where its default source port hashes */
	PATH_POLICY_SPRAY = 1,		/**< channel c on path c mod npaths, fixed */
	PATH_POLICY_OPTIMISE = 2,	/**< spray first, then the periodic decision */
};

/** What connections that share paths optimise (path_sel_decide_joint()). */
enum path_objective {
	PATH_OBJECTIVE_SUM = 0,		/**< together: the sum of their modelled times */
	PATH_OBJECTIVE_OWN = 1,		/**< each its own, seeing the others' load */
	PATH_OBJECTIVE_MAX = 2,		/**< together: the largest of their modelled times */
};

struct path_sel_cfg {
	unsigned int npaths;		/**< 1 .. PATH_SEL_MAX_PATHS */
	unsigned int channels;		/**< data QPNs per generation */
	unsigned int nqp;		/**< channels x generations, <= PATH_SEL_MAX_QPS */
	enum path_policy policy;
	enum path_objective objective;
	double path_rate_bps;		/**< what one path carries at most; 0: unlimited */
	double hysteresis;		/**< modelled gain a move needs (default 0.1) */
	uint64_t fail_ns;		/**< no arrival for this long after sending: stalled */
	uint64_t rtt_ns;		/**< the connection's RTT, as configured (0: 1 ms) */
	uint64_t probe_ns;		/**< a failed path gets a channel back this often, to see
					 *   whether it was repaired (0: never) */
	/**
	 * Per path, a UDP source port the operator knows takes it (all 0: the network hashes
	 * ports as the link emulator does). Every channel on a path then leaves with it.
	 */
	uint16_t sport[PATH_SEL_MAX_PATHS];
};

/** Frames per data QPN kept with the time they were built, one per rtt/16: two RTTs (a QPN
 * whose path is longer keeps them further apart, doubling up to PATH_SEL_GAP_MAX_NS). */
#define PATH_SEL_SENT_RING 32
#define PATH_SEL_GAP_MAX_NS 100000000ull	/**< 100 ms: rings of 3.2 s */

/** RTT samples of a path before the decision models it at its own RTT. */
#define PATH_SEL_MIN_RTT_SAMPLES 16

/** One path as the sender sees it. */
struct path_sel_path {
	struct sdr_auto est;		/**< loss, from the receiver's PSN counts */
	struct path_est rtt;		/**< round trips of its probes (path_est.h, 10 s windows) */
	uint64_t rtt_min_ns;		/**< the smallest of the last window, as of path_sel_update() */
	uint64_t frames;		/**< frames sent on it (PSNs used by its QPNs) */
	uint64_t reported;		/**< packets the receiver judged on it */
	uint32_t nqp;			/**< data QPNs on it now */
	uint8_t failed;			/**< as of the last path_sel_update() */
	uint64_t failed_since_ns;
	uint64_t probed_ns;		/**< when a channel was last placed on it while failed */
};

/** Per data QPN. */
struct path_sel_qp {
	uint8_t path;
	uint8_t have_hi;		/**< a report came with a highest PSN sent since it was placed */
	uint32_t placed_psn;		/**< our next PSN when it was placed */
	uint8_t settling;		/**< frames sent before it was placed are still judged */
	uint8_t have_base;		/**< peer_pkts/lost are a baseline to count from */
	uint32_t settle_psn;		/**< ... until the receiver's highest PSN passes this */
	uint16_t peer_pkts, peer_lost;	/**< the last report's running counts */
	uint32_t peer_hi;		/**< highest PSN the receiver saw (24 bits) */
	uint32_t psn_at_move;		/**< our PSN when peer_hi last moved (or it was placed) */
	uint32_t psn_seen;		/**< our PSN at the last path_sel_update() */
	uint64_t moved_ns;		/**< when peer_hi last moved (or it was placed) */
	uint64_t sent_ns;		/**< when we were first seen sending past psn_at_move */
	uint32_t psn_sent_seen;	/**< our PSN at the last path_sel_sent() */
	uint8_t sent_head;		/**< next entry of its sent ring to write */
	uint64_t sent_last_ns;		/**< when it last wrote one */
	uint64_t gap_ns;		/**< between kept frames, once the ring proved too short
					 *   for its path (0: rtt/16) */
};

/** A frame of a data QPN and when it was built (path_sel_sent()). */
struct path_sel_sent {
	uint32_t psn;
	uint64_t ns;			/**< 0: none */
};

struct path_sel {
	struct path_sel_cfg cfg;
	struct path_sel_path path[PATH_SEL_MAX_PATHS];
	struct path_sel_qp *qp;		/**< cfg.nqp entries */
	struct path_sel_sent *sent;	/**< cfg.nqp rings of PATH_SEL_SENT_RING (sender only:
					 *   path_sel_update() and _decide() never read them) */
	uint64_t reports, reports_bad;	/**< per-QPN entries taken; ignored (implausible) */
	uint64_t moves;			/**< placements changed by decisions */
	uint64_t now;			/**< the time of the last path_sel_update() */
	/**
	 * Set by the caller of path_sel_decide() (on its copy) when other connections share
	 * the paths: what each path has left for this one — path_rate less the others' load
	 * there (have_avail 1); else every path carries path_rate.
	 */
	uint8_t have_avail;
	double avail_bps[PATH_SEL_MAX_PATHS];
};

/** Defaults: 1 path, policy optimise, unlimited path rate, hysteresis 0.1, fail 100 ms,
 * probe every 10 s. */
void path_sel_cfg_default(struct path_sel_cfg *c);

/** @return 0, -EINVAL (a field out of range: more paths than channels too), -ENOMEM. */
int path_sel_init(struct path_sel *s, const struct path_sel_cfg *cfg);

void path_sel_free(struct path_sel *s);

/** Channel @p ch's path under a fixed policy (spray: ch mod npaths). */
unsigned int path_sel_spray(const struct path_sel_cfg *c, unsigned int ch);

/**
 * Place data QPN @p qp on @p path at @p now (its frames go there from now on; @p psn is its
 * next PSN). Its evidence starts afresh: a report must come before it can be stalled.
 */
void path_sel_place(struct path_sel *s, unsigned int qp, unsigned int path, uint32_t psn,
		    uint64_t now);

/**
 * The receiver's report for data QPN @p qp: highest PSN seen @p hi (24 bits; @p seen 0: none
 * yet) @p hold_ns before it sent the report, judged packets @p pkts and lost @p lost (running counts mod 2^16), at @p now with our
 * next PSN on it @p psn. Counts that go back more than they move forward, or lose more than
 * they judge, only move the baseline (reports_bad).
 */
void path_sel_report(struct path_sel *s, unsigned int qp, int seen, uint32_t hi,
		     uint64_t hold_ns, uint16_t pkts, uint16_t lost, uint32_t psn, uint64_t now);

/**
 * Frames went out at @p now (a burst): every data QPN that sent since the last call keeps
 * its last frame (@p psn[q] - 1) and @p now, if its last kept one is RTT/16 old.
 */
void path_sel_sent(struct path_sel *s, const uint32_t *psn, uint64_t now);

/**
 * The peer restarted: its running counts start again from 0, so no QPN's last report is a
 * baseline to count the next one from (each report after this is one).
 */
void path_sel_peer_restart(struct path_sel *s);

/**
 * Bring frame counts, RTTs and the failed flags up to @p now; @p psn[q] is QPN q's next PSN.
 * Cheap (a pass over the QPNs): call it before reading the paths or deciding.
 */
void path_sel_update(struct path_sel *s, const uint32_t *psn, uint64_t now);

enum path_sel_verdict {
	PATH_SEL_MOVE,		/**< move to d->want */
	PATH_SEL_KEEP_POLICY,	/**< the policy does not move channels */
	PATH_SEL_KEEP_BEST,	/**< the placement is the choice */
	PATH_SEL_KEEP_MARGIN,	/**< the choice is not faster by the hysteresis */
	PATH_SEL_KEEP_MODEL,	/**< the model could not evaluate a placement */
	PATH_SEL_KEEP_NONE,	/**< every path failed: nowhere better to go */
	PATH_SEL_PROBE,		/**< one channel to a failed path, to see whether it works again */
};

/** A decision and what it rests on. */
struct path_sel_decision {
	enum path_sel_verdict verdict;
	uint32_t use_mask;		/**< the chosen set of paths (bit p) */
	uint32_t cur_mask;		/**< paths the channels are on now */
	double cur_s, best_s;		/**< modelled mean time, now and of the choice */
	double loss[PATH_SEL_MAX_PATHS];	/**< the estimates used */
	uint8_t want[PATH_SEL_MAX_QPS];	/**< on PATH_SEL_MOVE: every QPN's path */
	unsigned int moved;		/**< channels that move */
	char why[200];			/**< one line: the verdict and its numbers */
};

/**
 * Decide where the channels go, for messages of the model point @p p (its drop, rate and
 * drop unit are replaced; its scheme is @p scheme). Reads @p s as path_sel_update() left it.
 * @return d->verdict.
 */
enum path_sel_verdict path_sel_decide(const struct path_sel *s, const struct sdr_model_params *p,
				      const struct sdr_scheme *scheme,
				      struct path_sel_decision *d);

/** Connections a joint decision takes at most. */
#define PATH_SEL_JOINT_MAX 8

/** Placements a joint decision evaluates one by one at most; beyond, coordinate descent. */
#define PATH_SEL_JOINT_COMBOS 4096

/** One connection of a joint decision. */
struct path_sel_member {
	const struct path_sel *s;	/**< as path_sel_update() left it (have_avail unused) */
	const struct sdr_model_params *p;
	const struct sdr_scheme *scheme;
	double rate_bps;		/**< what it sends: its paced rate (0: path_rate) */
	struct path_sel_decision d;	/**< out: its decision */
};

/**
 * Decide together for @p n (2 .. PATH_SEL_JOINT_MAX) connections that share the same paths,
 * each carrying at most m[0].s->cfg.path_rate_bps (> 0), all with the same objective: the
 * sets of paths, one per connection, that minimise the sum of their modelled mean times
 * (objective sum) or the largest of them (objective max: the slowest connection as fast
 * as it can be), path_sel_decide()'s model, each connection's capacity on a path what the
 * others' even spreads leave of it.
 * Candidates per connection: every set of its working paths (up to 4 paths; beyond, the k
 * best and each path alone). Every combination is evaluated when there are at most
 * PATH_SEL_JOINT_COMBOS; beyond, coordinate descent from the current placement. Among
 * combinations within 1 % of the best objective (for max: and of those, within 1 % of
 * their lowest sum) the one with the most paths wins, then the one nearest the current. They move when a connection's placement uses a failed path, or
 * the current placement is modelled slower than the choice by more than the hysteresis
 * (m[0]'s), both over the connections that move or whose time the choice changes.
 * A connection whose policy is not optimise, that has a probe due, or that has no working
 * path decides alone (path_sel_decide(), its verdict) and its placement after that decision
 * is load the others see. @p outside_bps (NULL: none): per path, what connections outside
 * the decision send there (taken off path_rate for all). @return how many connections move
 * (MOVE or PROBE), or -EINVAL (also for members with different objectives, or objective
 * own: such connections decide alone).
 */
int path_sel_decide_joint(struct path_sel_member *m, unsigned int n, const double *outside_bps);

/** Name of an objective ("sum", "own", "max"); NULL for none. */
const char *path_objective_name(enum path_objective o);

/** Objective by name. @return 0 or -EINVAL. */
int path_objective_parse(const char *name, enum path_objective *out);

/** Paths of @p mask as the operator numbers them, from 1: "1,2,3" ("none" for 0). */
void path_sel_mask_str(uint32_t mask, char *buf, size_t len);

/** Short name of a verdict ("move", "keep: best", ...). */
const char *path_sel_verdict_name(enum path_sel_verdict v);

/** Name of a policy ("hash", "spray", "optimise"); NULL for none. */
const char *path_policy_name(enum path_policy p);

/** Policy by name. @return 0 or -EINVAL. */
int path_policy_parse(const char *name, enum path_policy *out);

#endif /* SDR_PATH_SEL_H */
