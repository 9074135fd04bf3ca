/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * libsdr-coll: collective operations across datacenters on the SDR dataplane, built on the
 * public libsdr API only.
 *
 * A communicator is N ranks in a ring; each rank is an SDK client of a dataplane (one per
 * datacenter, or several ranks on one) and holds two of its connections: one that sends to
 * the next rank and one that receives from the previous one. Which connections, on which
 * dataplane instance, comes from a rank file, one line per rank:
 *
 *     # rank  instance  send-connection  receive-connection
 *     0       dc0       r0-r1            r2-r0
 *     1       dc1       r1-r2            r0-r1
 *     2       dc2       r2-r0            r1-r2
 *
 * and, for recursive doubling (SDR_COLL_ALGO_DOUBLING), "peer" lines: a rank's connections
 * to and from one other rank (on the rank's own instance):
 *
 *     # peer  rank  peer-rank  send-connection  receive-connection
 *     peer    0     2          r0-r2            r2-r0
 *     peer    2     0          r2-r0            r0-r2
 *
 * and a rank's own number from the environment as MPI and NCCL users set it:
 * SDR_COLL_RANKFILE names the file; SDR_COLL_RANK, else OMPI_COMM_WORLD_RANK, else PMI_RANK
 * gives the rank (sdr_comm_from_env()).
 *
 * Operations are ring algorithms (Allreduce = Reduce-Scatter + Allgather, or for small
 * vectors gather or recursive doubling; Broadcast a pipeline from the root) run with
 * partial completion: a step forwards and reduces each chunk
 * as the receive's bitmap shows it arrived, and the next step's send goes out as a stream
 * fed chunk by chunk, so the 2(N - 1) dependent steps of a ring overlap instead of each
 * waiting for the whole message. Blocking calls, and non-blocking ones that run concurrently
 * with priorities; one thread per communicator (libsdr's rule for a context).
 *
 * Return convention: SDR_COLL_OK, or a negative SDR_COLL_E_* code; sdr_comm_error() says
 * what happened in one line (for a peer that stopped answering: which rank).
 */
#ifndef SDR_COLL_H
#define SDR_COLL_H

#include <stddef.h>
#include <stdint.h>

/** Element types. */
enum sdr_coll_type {
	SDR_COLL_F32,
	SDR_COLL_F16,		/**< IEEE binary16, converted through float, rounded to nearest even */
	SDR_COLL_BF16,		/**< bfloat16, the same way */
	SDR_COLL_I32,
	SDR_COLL_I64,
	SDR_COLL_NTYPES
};

/** Reductions. */
enum sdr_coll_op {
	SDR_COLL_SUM,
	SDR_COLL_MAX,
	SDR_COLL_MIN,
	SDR_COLL_NOPS
};

#define SDR_COLL_OK		0
#define SDR_COLL_E_ARG		(-1)	/**< a bad argument (type, op, root, NULL buffer) */
#define SDR_COLL_E_SDK		(-2)	/**< the dataplane refused something (libsdr's reason) */
#define SDR_COLL_E_TIMEOUT	(-3)	/**< a peer did not deliver in time: it names the rank */
#define SDR_COLL_E_PEER		(-4)	/**< a peer sent something else than this operation */
#define SDR_COLL_E_FAILED	(-5)	/**< a send or receive failed in the dataplane */
#define SDR_COLL_E_NOMEM	(-6)
#define SDR_COLL_E_RANKFILE	(-7)	/**< the rank file or the environment is wrong */
#define SDR_COLL_E_INTERNAL	(-8)	/**< the library built an unsafe schedule (a bug) */
#define SDR_COLL_E_BROKEN	(-9)	/**< an earlier operation failed: the ranks are out of
					 *   step; create the communicator again */

struct sdr_comm;

/** Most ranks in a communicator (an Allreduce's 2(N - 1) steps are numbered in 8 bits). */
#define SDR_COLL_MAX_RANKS 128

/**
 * Allreduce algorithms. Ring and gather use only the ring's connections (each rank sends to
 * the next and receives from the previous one: one long-haul link per neighbouring pair);
 * doubling uses the peer connections of the rank file.
 * - ring: Reduce-Scatter + Allgather, 2(N - 1) steps of 1/N of the vector each; every link
 *   carries 2(N - 1)/N of the vector, the least there is: for large vectors.
 * - gather: an Allgather of the whole vectors (N - 1 steps of the whole vector), then every
 *   rank reduces the N vectors itself, in rank order (so every rank gets the same bits):
 *   half the steps, N/2 times the bytes per link. Over a link of one-way latency l and
 *   rate b it is the faster one below about l b N / (N - 2) bytes (any size for N = 2):
 *   at 25 ms RTT and 2 Gbit/s, 6 MB for 4 ranks; at 10 us and 100 Gbit/s, 250 KB.
 * - doubling: recursive doubling, log2 N steps of the whole vector, each an exchange with
 *   partner r ^ 2^j and a reduction chunk by chunk (the lower rank's vector first, so every
 *   rank gets the same bits); the fewest dependent steps there are: 2 for 4 ranks against
 *   gather's 3 and ring's 6, 3 for 8 against 7 and 14. Needs N a power of two and a peer
 *   line in the rank file for every rank and each of its partners (its own connections
 *   both ways to that rank).
 * - auto: up to gather_max bytes doubling where the rank file allows it, else gather (while
 *   a vector fits one message of the connections used: give every connection the same
 *   max_msg); ring above (every rank must decide alike, so the threshold is a setting, not a
 *   measurement).
 */
enum sdr_coll_algo {
	SDR_COLL_ALGO_AUTO,
	SDR_COLL_ALGO_RING,
	SDR_COLL_ALGO_GATHER,
	SDR_COLL_ALGO_DOUBLING,
};

/** Default of sdr_comm_cfg.gather_max. */
#define SDR_COLL_GATHER_MAX_DEFAULT (256u << 10)

/** Communicator settings; zero fields take the defaults. */
struct sdr_comm_cfg {
	double timeout_s;	/**< an operation fails if a peer delivers nothing this long
				 *   (default 10 s) */
	enum sdr_coll_algo allreduce_algo;	/**< (default auto; sdr_comm_from_env(): the
						 *   environment's SDR_COLL_ALGO) */
	size_t gather_max;	/**< auto: largest Allreduce (bytes) done by doubling or gather (default
				 *   SDR_COLL_GATHER_MAX_DEFAULT; sdr_comm_from_env():
				 *   SDR_COLL_GATHER_MAX) */
};

/** "auto", "ring", "gather", "doubling". */
const char *sdr_coll_algo_name(enum sdr_coll_algo algo);

/**
 * Join the communicator described by @p rankfile as rank @p rank: attach to the rank's
 * dataplane instance and open its two ring connections and those of its peer lines. @p err (if not NULL) gets the reason of
 * a failure. @return SDR_COLL_OK or an error code.
 */
int sdr_comm_create(const char *rankfile, int rank, const struct sdr_comm_cfg *cfg,
		    struct sdr_comm **comm, char *err, size_t errlen);

/**
 * sdr_comm_create() with the rank file and the rank from the environment (see above); a
 * field of @p cfg left at its default is taken from SDR_COLL_ALGO (auto, ring, gather, doubling) and
 * SDR_COLL_GATHER_MAX (bytes) where they are set; a bad value is an error.
 */
int sdr_comm_from_env(const struct sdr_comm_cfg *cfg, struct sdr_comm **comm, char *err,
		      size_t errlen);

/**
 * Leave: wait until the sends of the operations already complete are acknowledged (an
 * operation completes when this rank has its result, before its last messages are
 * acknowledged: a peer may still be receiving them; at most the communicator's timeout),
 * then close the connections and detach. NULL is allowed. Every request of the
 * non-blocking calls must have been completed (sdr_coll_wait()) first: a request outlives
 * nothing. A process that exits without it may fail its peers' last operation.
 */
void sdr_comm_destroy(struct sdr_comm *comm);

int sdr_comm_rank(const struct sdr_comm *comm);
int sdr_comm_size(const struct sdr_comm *comm);

/** The last error of @p comm, one line. */
const char *sdr_comm_error(const struct sdr_comm *comm);

/** Bytes of one element of @p type (0 for an unknown type). */
size_t sdr_coll_type_size(enum sdr_coll_type type);

/** "float32", "float16", "bfloat16", "int32", "int64"; "sum", "max", "min". */
const char *sdr_coll_type_name(enum sdr_coll_type type);
const char *sdr_coll_op_name(enum sdr_coll_op op);

/**
 * Every rank contributes @p count elements of @p sendbuf; every rank gets their reduction
 * in @p recvbuf (which may be @p sendbuf: in place). Ring (a Reduce-Scatter, then an
 * Allgather, 2(N - 1) steps of count / N elements each), gather (N - 1 steps of the whole
 * vector, then a local reduction) or recursive doubling (log2 N steps of the whole vector,
 * N a power of two), as the communicator's allreduce_algo says.
 */
int sdr_allreduce(struct sdr_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
		  enum sdr_coll_type type, enum sdr_coll_op op);

/**
 * Every rank contributes N x @p recvcount elements; rank r gets the reduction of block r
 * (elements [r x recvcount, (r + 1) x recvcount)) in @p recvbuf.
 */
int sdr_reduce_scatter(struct sdr_comm *comm, const void *sendbuf, void *recvbuf,
		       size_t recvcount, enum sdr_coll_type type, enum sdr_coll_op op);

/** Every rank contributes @p sendcount elements; every rank gets all N blocks in rank order. */
int sdr_allgather(struct sdr_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
		  enum sdr_coll_type type);

/** @p root's @p count elements of @p buf reach every rank's @p buf (a pipeline around the ring). */
int sdr_broadcast(struct sdr_comm *comm, void *buf, size_t count, enum sdr_coll_type type,
		  int root);

/**
 * Non-blocking forms: the operation is issued (its input copied: the send buffer may be
 * reused at once) and runs while the caller goes on; @p req completes it with
 * sdr_coll_wait() (which also frees it) or is polled with sdr_coll_test(). The result
 * buffer must stay valid until then. Operations issued one after another run concurrently,
 * their messages in issue order on each connection; every rank must issue the same
 * operations in the same order.
 */
struct sdr_coll_req;

int sdr_iallreduce(struct sdr_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
		   enum sdr_coll_type type, enum sdr_coll_op op, struct sdr_coll_req **req);
int sdr_ireduce_scatter(struct sdr_comm *comm, const void *sendbuf, void *recvbuf,
			size_t recvcount, enum sdr_coll_type type, enum sdr_coll_op op,
			struct sdr_coll_req **req);
int sdr_iallgather(struct sdr_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
		   enum sdr_coll_type type, struct sdr_coll_req **req);
int sdr_ibroadcast(struct sdr_comm *comm, void *buf, size_t count, enum sdr_coll_type type,
		   int root, struct sdr_coll_req **req);

/**
 * Run @p req until this rank has its result, and free it. The operation's last sends may
 * still wait for their acknowledgements (half a round trip): they go on in the
 * background, from the operation's own memory, and a failure among them fails the next
 * operation. @return its result (SDR_COLL_OK or an error).
 */
int sdr_coll_wait(struct sdr_coll_req *req);

/**
 * Make progress on every operation in flight once; @p done says whether @p req is over
 * (then sdr_coll_wait() returns at once). @return SDR_COLL_OK, or its error once over.
 */
int sdr_coll_test(struct sdr_coll_req *req, int *done);

/**
 * The priority (0 .. 3) of the operations issued from now on: the dataplane sends the
 * chunks of a higher-priority operation's messages before those of lower-priority ones
 * still waiting on the same connection (libsdr's sdr_send_priority()), so a small urgent
 * operation issued behind a large one finishes close to its time alone.
 */
void sdr_coll_set_priority(struct sdr_comm *comm, unsigned int prio);

/**
 * The Allreduce algorithm of the operations issued from now on (what sdr_comm_cfg's
 * allreduce_algo set at creation); every rank must make the same calls. @return the one
 * it replaces.
 */
enum sdr_coll_algo sdr_coll_set_algo(struct sdr_comm *comm, enum sdr_coll_algo algo);

/** What the last operation did: its steps' messages, chunks forwarded before their
 * message completed, retransmitted and decoded chunks, the algorithm of an Allreduce. */
struct sdr_coll_stats {
	enum sdr_coll_algo algo;	/**< Allreduce: ring, gather or doubling (the
					 *   algorithm auto picked); other operations: auto */
	uint32_t messages_sent;
	uint32_t messages_received;
	uint64_t chunks_early;		/**< chunks reduced or forwarded before their receive completed */
	uint64_t chunks;		/**< chunks received */
	uint32_t retransmitted;
	uint32_t decoded;
	uint32_t registrations;		/**< memory it registered (sdr_mr_reg()): 0 when a region
					 *   the communicator kept fits */
};

void sdr_coll_last_stats(const struct sdr_comm *comm, struct sdr_coll_stats *s);

#endif /* SDR_COLL_H */
