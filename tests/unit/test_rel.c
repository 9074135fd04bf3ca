/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability state machines (rel_tx, rel_rx) over the simulated link with scripted
 * losses: the exact chunks sent, when, and the completion time. Also the control header.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pacer.h"
#include "rel_rx.h"
#include "rel_tx.h"
#include "sdr_ctrl.h"
#include "sdr_sim.h"

#define MAXEV 512
#define RTT 10000000ull			/* 10 ms */
#define D (RTT / 2)
#define CHUNK 65536u
#define BW 8e9				/* T_INJ = 65536 * 8 / 8e9 = 65536 ns exactly */

/* A scripted drop: kind, index, attempt (or the n-th control message of a type). */
struct drop_rule {
	uint8_t kind;
	uint32_t index;
	uint32_t attempt;
	uint8_t ctrl_type;
	uint16_t ctrl_flags;
	uint32_t nth;		/* for control: drop the nth (0-based) message of that type */
};

struct script {
	struct drop_rule rules[8];
	int nrules;
	uint32_t ctrl_seen[8];
	uint64_t delay_index;	/* scripted reordering: extra delay for one data chunk */
	uint64_t delay_ns;
	struct sdr_sim_event ev[MAXEV];
	int nev;
};

static int
hook_drop(void *arg, const struct sdr_sim_event *e)
{
	struct script *s = arg;

	for (int i = 0; i < s->nrules; i++) {
		const struct drop_rule *r = &s->rules[i];

		if (e->kind != r->kind)
			continue;
		if (e->kind == SDR_SIM_EV_CTRL) {
			if (e->ctrl_type == r->ctrl_type && (r->ctrl_flags == 0 ||
			    (e->ctrl_flags & r->ctrl_flags)) && s->ctrl_seen[i]++ == r->nth)
				return 1;
		} else if (e->index == r->index && e->attempt == r->attempt) {
			return 1;
		}
	}
	return 0;
}

static uint64_t
hook_delay(void *arg, const struct sdr_sim_event *e)
{
	struct script *s = arg;

	return e->kind == SDR_SIM_EV_DATA && e->index == s->delay_index && e->attempt == 0 ?
	       s->delay_ns : 0;
}

static void
hook_trace(void *arg, const struct sdr_sim_event *e)
{
	struct script *s = arg;

	if (s->nev < MAXEV)
		s->ev[s->nev++] = *e;
}

static void
cfg_init(struct sdr_sim_cfg *c, enum sdr_scheme_kind kind, uint16_t k, uint16_t m,
	 uint32_t nchunks)
{
	memset(c, 0, sizeof(*c));
	sdr_conn_attr_default(&c->attr);
	c->attr.chunk_size = CHUNK;
	c->attr.split = (struct sdr_imm_split){ 4, 28, 0 };
	c->attr.channels = 1;
	c->attr.generations = 1;
	c->attr.max_msg_size = (uint64_t)nchunks * CHUNK;
	c->attr.max_inflight = 1;
	c->attr.ec_k = k;
	c->attr.ec_m = m;
	sdr_rel_cfg_default(&c->rel, RTT);
	c->rel.scheme = (struct sdr_scheme){ kind, k, m, 0 };
	c->rel.rate_bps = BW;
	c->rel.bucket_bytes = 0;
	c->rel.pkt_overhead = 0;
	c->rel.ack_every_chunks = 1;
	c->rel.ack_every_ns = 0;
	c->rel.nack_allowance_ns = 100000;	/* 100 us */
	c->link.bandwidth_bps = BW;
	c->link.delay_ns = D;
	c->msg_len = (uint64_t)nchunks * CHUNK;
	c->messages = 1;
}

static uint64_t
t_inj(uint32_t n)
{
	return (uint64_t)n * CHUNK;	/* n chunks at 8 Gbit/s, in ns */
}

static struct sdr_sim_result
run(const struct sdr_sim_cfg *c, struct script *s)
{
	struct sdr_sim_hooks h = { hook_drop, hook_delay, hook_trace, s };
	struct sdr_sim_result r;
	double t;

	assert_int_equal(sdr_sim_run(c, 1, &h, &r, &t), 0);
	assert_int_equal(r.messages, 1);
	assert_int_equal(r.ok, 1);
	return r;
}

/* The data/parity sends of the trace as "D0 D1 .. P0 .. D3r" for compact assertions. */
static const char *
sends(const struct script *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->nev && o + 8 < len; i++) {
		const struct sdr_sim_event *e = &s->ev[i];

		if (e->kind != SDR_SIM_EV_DATA && e->kind != SDR_SIM_EV_PARITY)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%c%u%s%s", o ? " " : "",
				      e->kind == SDR_SIM_EV_DATA ? 'D' : 'P', e->index,
				      e->retransmit ? "r" : "", e->lost ? "x" : "");
	}
	return buf;
}

static uint64_t
done_time(const struct script *s)
{
	for (int i = 0; i < s->nev; i++)
		if (s->ev[i].kind == SDR_SIM_EV_TX_DONE)
			return s->ev[i].time_ns;
	fail_msg("no completion");
	return 0;
}

static const struct sdr_sim_event *
find_ev(const struct script *s, uint8_t kind, uint32_t index, int retransmit)
{
	for (int i = 0; i < s->nev; i++)
		if (s->ev[i].kind == kind && s->ev[i].index == index &&
		    s->ev[i].retransmit == retransmit)
			return &s->ev[i];
	return NULL;
}

static int
count_ctrl(const struct script *s, uint8_t type)
{
	int n = 0;

	for (int i = 0; i < s->nev; i++)
		n += s->ev[i].kind == SDR_SIM_EV_CTRL && s->ev[i].ctrl_type == type;
	return n;
}

/* ---- SR ---- */

static void
test_sr_no_loss(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { 0 };
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 D4 D5 D6 D7");
	/* the model's lossless time, exactly: M * T_INJ + RTT */
	assert_int_equal(done_time(&s), t_inj(8) + RTT);
}

static void
test_sr_last_chunk_lost(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 7 } }, .nrules = 1 };
	uint64_t rto = 3 * RTT;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 D4 D5 D6 D7x D7r");
	/* D7 went out at 7 T_INJ; its timer fires RTO later; then one chunk and an RTT */
	assert_int_equal(find_ev(&s, SDR_SIM_EV_DATA, 7, 1)->time_ns, t_inj(7) + rto);
	assert_int_equal(done_time(&s), t_inj(7) + rto + t_inj(1) + RTT);
}

static void
test_sr_final_ack_lost(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_CTRL, .ctrl_type = SDR_CTRL_ACK,
					 .ctrl_flags = SDR_CTRL_F_COMPLETE } }, .nrules = 1 };
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	run(&c, &s);
	/* only the chunk the lost ACK covered goes again; the receiver re-ACKs it complete */
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 D4 D5 D6 D7 D7r");
	assert_int_equal(done_time(&s), t_inj(7) + 3 * RTT + t_inj(1) + RTT);
}

/*
 * SR-NACK over @p c with D3 lost: D3 goes again once, after D7, on one NACK. @return the
 * resend of D3 in @p s.
 */
static const struct sdr_sim_event *
sr_nack_d3_lost(const struct sdr_sim_cfg *c, struct script *s)
{
	char b[512];

	memset(s, 0, sizeof(*s));
	s->rules[0] = (struct drop_rule){ .kind = SDR_SIM_EV_DATA, .index = 3 };
	s->nrules = 1;
	run(c, s);
	assert_string_equal(sends(s, b, sizeof(b)), "D0 D1 D2 D3x D4 D5 D6 D7 D3r");
	assert_int_equal(count_ctrl(s, SDR_CTRL_NACK), 1);
	return find_ev(s, SDR_SIM_EV_DATA, 3, 1);
}

static void
test_sr_nack_middle_loss(void **state)
{
	struct sdr_sim_cfg c;
	const struct sdr_sim_event *r;
	struct script s;

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR_NACK, 0, 0, 8);
	r = sr_nack_d3_lost(&c, &s);
	/* NACKed after a later chunk arrived plus the allowance: well before the RTO */
	assert_true(r->time_ns > t_inj(5) + RTT);
	assert_true(r->time_ns < t_inj(5) + RTT + 3 * 100000);
	assert_true(done_time(&s) < 2 * RTT + t_inj(9) + 3 * 100000);
}

/*
 * nack_allowance = 0: a hole behind a later chunk is sure at once. The receiver's timers are
 * looked at only when something changed or one is due (rel_rx_next_time()); the snapshot
 * that makes the hole sure is due the moment the later chunk came, and must not wait for
 * the next chunk or the tail rule.
 */
static void
test_sr_nack_zero_allowance(void **state)
{
	struct sdr_sim_cfg c;
	const struct sdr_sim_event *r;
	struct script s;

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR_NACK, 0, 0, 8);
	c.rel.nack_allowance_ns = 0;
	c.rel.ack_every_chunks = 8;	/* (no ACK per chunk: nothing else makes the receiver look) */
	r = sr_nack_d3_lost(&c, &s);
	/* NACKed as D4 arrived: D3 goes again an RTT after D4 went out, not a chunk later
	 * (when D5 arrives) */
	assert_true(r->time_ns >= t_inj(5) + RTT);
	assert_true(r->time_ns < t_inj(6) + RTT);
}

static void
test_sr_nack_tail_loss(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 7 } }, .nrules = 1 };
	const struct sdr_sim_event *r;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR_NACK, 0, 0, 8);
	run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 D4 D5 D6 D7x D7r");
	/* no later chunk shows the hole: the tail rule NACKs it once the arrivals stop for the
	 * allowance + RTT/8 */
	r = find_ev(&s, SDR_SIM_EV_DATA, 7, 1);
	assert_int_equal(count_ctrl(&s, SDR_CTRL_NACK), 1);
	assert_true(r->time_ns >= t_inj(7) + RTT + 100000 + RTT / 8);
	assert_true(r->time_ns < t_inj(7) + 3 * RTT);	/* before the RTO */
}

static void
test_sr_nack_reorder_within_allowance(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .delay_index = 3, .delay_ns = 60000 };	/* < 100 us allowance */
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR_NACK, 0, 0, 8);
	run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 D4 D5 D6 D7");
	assert_int_equal(count_ctrl(&s, SDR_CTRL_NACK), 0);
	assert_int_equal(done_time(&s), t_inj(8) + RTT);
}

/* ---- EC (mds 4,2: two submessages of 4 data + 2 parity) ---- */

static void
test_ec_no_loss(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { 0 };
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 8);
	run(&c, &s);
	/* documented order: a submessage's data, then its parity */
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 P0 P1 D4 D5 D6 D7 P2 P3");
	/* complete when D7 (the 10th chunk out) is in; the last parity is not waited for */
	assert_int_equal(done_time(&s), t_inj(10) + RTT);
	assert_int_equal(count_ctrl(&s, SDR_CTRL_ACK), 1);
}

static void
test_ec_one_loss_decoded(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 2 } }, .nrules = 1 };
	struct sdr_sim_result r;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 8);
	r = run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2x D3 P0 P1 D4 D5 D6 D7 P2 P3");
	assert_int_equal(r.decoded, 1);
	assert_int_equal(r.retransmitted, 0);
	assert_int_equal(done_time(&s), t_inj(10) + RTT);
}

/* A short last submessage gets its share of parity, and still repairs a loss with it. */
static void
test_ec_short_last_submessage(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 5 } }, .nrules = 1 };
	struct script x = { 0 };
	struct sdr_sim_result r;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 6);	/* 4 + 2 data: parity 2, then ceil(2*2/4) */
	r = run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)), "D0 D1 D2 D3 P0 P1 D4 D5x P2");
	assert_int_equal(r.decoded, 1);
	assert_int_equal(r.retransmitted, 0);
	cfg_init(&c, SDR_SCHEME_EC_XOR, 4, 2, 5);	/* xor: one parity per group with data */
	run(&c, &x);
	assert_string_equal(sends(&x, b, sizeof(b)), "D0 D1 D2 D3 P0 P1 D4 P2");
}

/* m + 1 losses in a submessage: FTO, EC-NACK, the sender repeats the holes with SR. */
static void
test_ec_beyond_capacity_falls_back(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 0 },
				       { .kind = SDR_SIM_EV_DATA, .index = 1 },
				       { .kind = SDR_SIM_EV_DATA, .index = 2 } }, .nrules = 3 };
	uint64_t first = t_inj(4) + D;		/* D3 arrives first */
	uint64_t fto = t_inj(8 + 4) + RTT;	/* (M + M/R) T_INJ + beta RTT, beta 1 */
	struct sdr_sim_result r;
	const struct sdr_sim_event *x;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 8);
	r = run(&c, &s);
	assert_string_equal(sends(&s, b, sizeof(b)),
			    "D0x D1x D2x D3 P0 P1 D4 D5 D6 D7 P2 P3 D0r D1r D2r");
	assert_int_equal(count_ctrl(&s, SDR_CTRL_EC_NACK), 1);
	assert_int_equal(r.fallback, 1);
	assert_int_equal(r.retransmitted, 3);
	/* the repeat leaves one one-way delay after the FTO expires */
	x = find_ev(&s, SDR_SIM_EV_DATA, 0, 1);
	assert_true(x->time_ns >= first + fto + D);
	assert_true(x->time_ns <= first + fto + D + 1000);
}

static void
test_ec_nack_lost_is_repeated(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 0 },
				       { .kind = SDR_SIM_EV_DATA, .index = 1 },
				       { .kind = SDR_SIM_EV_DATA, .index = 2 },
				       { .kind = SDR_SIM_EV_CTRL, .ctrl_type = SDR_CTRL_EC_NACK } },
			    .nrules = 4 };
	struct sdr_sim_result r;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 8);
	r = run(&c, &s);
	assert_int_equal(count_ctrl(&s, SDR_CTRL_EC_NACK), 2);
	assert_string_equal(sends(&s, b, sizeof(b)),
			    "D0x D1x D2x D3 P0 P1 D4 D5 D6 D7 P2 P3 D0r D1r D2r");
	assert_int_equal(r.retransmitted, 3);
}

/* A message that loses everything: the sender's silence timeout probes. */
static void
test_ec_total_loss_silence(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .nrules = 6 };
	struct sdr_sim_result r;

	(void)state;
	for (int i = 0; i < 4; i++)
		s.rules[i] = (struct drop_rule){ .kind = SDR_SIM_EV_DATA, .index = (uint32_t)i };
	s.rules[4] = (struct drop_rule){ .kind = SDR_SIM_EV_PARITY, .index = 0 };
	s.rules[5] = (struct drop_rule){ .kind = SDR_SIM_EV_PARITY, .index = 1 };
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 4);
	r = run(&c, &s);
	assert_true(r.retransmitted >= 4);
	assert_int_equal(r.ok, 1);
}

/*
 * The receiver falls back before it can decode (a data chunk is late), and its EC-NACK is
 * lost while its ACK arrives (the sender has heard something); then the late chunk comes,
 * the submessage decodes, the message completes, and the final ACK is lost too. Nothing
 * more comes from a receiver that is done, so only the sender can end it: its silence
 * timer counts from the last word it heard, and a probe of a chunk still unacknowledged
 * draws the receiver's final ACK again. (Before, the probe came only to a message that had
 * heard nothing at all: this one waited for its global timeout.)
 */
static void
test_ec_lost_final_ack_after_feedback(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 0 },
				       { .kind = SDR_SIM_EV_DATA, .index = 1 },
				       { .kind = SDR_SIM_EV_CTRL, .ctrl_type = SDR_CTRL_EC_NACK },
				       { .kind = SDR_SIM_EV_CTRL, .ctrl_type = SDR_CTRL_ACK,
					 .ctrl_flags = SDR_CTRL_F_COMPLETE } },
			    .nrules = 4, .delay_index = 3, .delay_ns = 3 * RTT / 2 };
	struct sdr_sim_result r;

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_MDS, 4, 2, 4);
	c.rel.global_timeout_ns = 10000000000ull;	/* 10 s: the stall it was */
	r = run(&c, &s);
	assert_int_equal(count_ctrl(&s, SDR_CTRL_EC_NACK), 1);
	assert_int_equal(r.decoded, 1);
	assert_true(r.retransmitted >= 1);		/* the probe */
	/* done within a few RTTs of the lost final ACK, not at the 10 s timeout */
	assert_true(r.mean_s < 0.2);
}

/* XOR: two losses in one group are beyond capacity, two in different groups are not. */
static void
test_ec_xor_groups(void **state)
{
	struct sdr_sim_cfg c;
	struct script s1 = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 0 },
					{ .kind = SDR_SIM_EV_DATA, .index = 1 } }, .nrules = 2 };
	struct script s2 = { .rules = { { .kind = SDR_SIM_EV_DATA, .index = 0 },
					{ .kind = SDR_SIM_EV_DATA, .index = 2 } }, .nrules = 2 };
	struct sdr_sim_result r;
	char b[512];

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_XOR, 4, 2, 4);
	r = run(&c, &s1);		/* groups {0,2,P0} {1,3,P1}: one loss each */

	assert_int_equal(r.decoded, 1);
	assert_int_equal(r.retransmitted, 0);
	r = run(&c, &s2);		/* 0 and 2 share group 0 */
	assert_int_equal(r.fallback, 1);
	assert_string_equal(sends(&s2, b, sizeof(b)), "D0x D1 D2x D3 P0 P1 D0r D2r");
}

/* ---- control header ---- */

static void
test_ctrl_round_trip_and_rejects(void **state)
{
	struct sdr_ctrl c = { .type = SDR_CTRL_ACK, .gen = 3, .msg_id = 1023, .flags = 1,
			      .cum = 77, .win_start = 77, .nwords = 2,
			      .dst_tag = 0x0102030405060708ull, .src_tag = 0x1112131415161718ull }, d;
	uint8_t buf[SDR_CTRL_MAX_LEN + 8];
	int n;

	(void)state;
	sdr_ctrl_win_set(&c, 0);
	sdr_ctrl_win_set(&c, 33);
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(n, 48);
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.msg_id, 1023);
	assert_int_equal(d.cum, 77);
	assert_true(d.dst_tag == c.dst_tag && d.src_tag == c.src_tag);
	assert_int_equal(buf[24], 0x01);	/* dst tag, then src tag, big-endian */
	assert_int_equal(buf[39], 0x18);
	assert_true(sdr_ctrl_win_bit(&d, 0) && sdr_ctrl_win_bit(&d, 33) && !sdr_ctrl_win_bit(&d, 1));
	/* every truncation is refused */
	for (int len = 0; len < n; len++)
		assert_true(sdr_ctrl_decode(buf, (size_t)len, &d) < 0);
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n + 1, &d), -SDR_CTRL_E_LENGTH);
	buf[0] = 1;			/* the tagless version 1 */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VERSION);
	buf[0] = 2;			/* version 2: no scheme or window on HELLO */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VERSION);
	buf[0] = SDR_CTRL_VERSION;
	buf[1] = 12;
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_TYPE);
	buf[1] = 0;
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_TYPE);
	buf[1] = SDR_CTRL_NACK;		/* flags only on ACK */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
	buf[1] = SDR_CTRL_ACK;
	buf[7] = 0x80;			/* unknown flag */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
	buf[7] = 1;
	buf[3] = 33;
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_WORDS);
	buf[3] = 2;
	memset(buf + 32, 0, 8);		/* no source tag */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_TAG);
	buf[39] = 1;
	buf[12] = buf[13] = buf[14] = buf[15] = 0xFF;	/* window past 2^32 */
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_RANGE);
	/* CTS carries a value and no window */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_CTS, .value = 65536, .cum = 5, .win_start = 4,
			       .src_tag = 1 };
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.value, 65536);
	/* ACK, NACK and EC-NACK carry the message's sequence number, 32 bits */
	c.type = SDR_CTRL_NACK;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.value, 65536);
	c.value = 1ull << 32;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
	assert_int_equal(sdr_ctrl_encode(&c, buf, 10), -ENOSPC);
	/* SKIP, WITHDRAW, SYNC and HELLO take the ANSWER flag and nothing else; no window but
	 * HELLO's (the messages a connection's previous endpoint delivered) */
	for (uint8_t t = SDR_CTRL_SKIP; t <= SDR_CTRL_HELLO; t++) {
		c = (struct sdr_ctrl){ .type = t, .flags = SDR_CTRL_F_ANSWER, .cum = 9,
				       .win_start = 5, .src_tag = 7 };
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
		assert_int_equal(d.flags, SDR_CTRL_F_ANSWER);
		c.flags = SDR_CTRL_F_COMPLETE;
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
		c.flags = 0;
		c.nwords = 1;
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
		/* HELLO's: a tag (two words), then message bits, numbers modulo 2^32 */
		c.nwords = 3;
		c.win_start = 0xFFFFFFF0u;
		c.win[0] = 0x12345678u;
		c.win[2] = 0x80000001u;
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		if (t == SDR_CTRL_HELLO) {
			assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
			assert_true(d.nwords == 3 && d.win[0] == 0x12345678u &&
				    d.win[2] == 0x80000001u && d.win_start == 0xFFFFFFF0u);
			c.nwords = 2;	/* a tag with no bits */
			n = sdr_ctrl_encode(&c, buf, sizeof(buf));
			assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
		} else {
			assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_RANGE);
		}
		c.win_start = 5;
		/* a value: SYNC's nonce and HELLO's scheme of its sender's data only */
		c.nwords = 0;
		c.value = 1ull << 63 | 2ull << 32 | 4 << 16 | 2;
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		if (t == SDR_CTRL_HELLO || t == SDR_CTRL_SYNC) {
			assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
			assert_true(d.value == c.value);
		} else {
			assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
		}
	}
	/* REPORT carries a value (lost << 32 | packets), no flags, no window */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_REPORT, .value = 3ull << 32 | 4096, .src_tag = 7 };
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
	assert_true(d.value == (3ull << 32 | 4096));
	c.flags = SDR_CTRL_F_ANSWER;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
	c.flags = 0;
	c.nwords = 1;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
	assert_string_equal(sdr_ctrl_type_name(SDR_CTRL_REPORT), "REPORT");
	/* PATHS: two words per data QPN, no value, no flags */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_PATHS, .win_start = 16, .nwords = 4,
			       .win = { SDR_CTRL_PATHS_SEEN | 0xABCDEF, 5u << 16 | 900 },
			       .src_tag = 7 };
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), 0);
	assert_true(d.win[0] == (SDR_CTRL_PATHS_SEEN | 0xABCDEF) && d.win[1] == (5u << 16 | 900) &&
		    d.win_start == 16 && d.nwords == 4);
	for (uint8_t w = 0; w <= 3; w += 3) {	/* an empty or odd window */
		c.nwords = w;
		n = sdr_ctrl_encode(&c, buf, sizeof(buf));
		assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
	}
	c.nwords = 2;
	c.value = 1;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_VALUE);
	c.value = 0;
	c.flags = SDR_CTRL_F_ANSWER;
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
	assert_string_equal(sdr_ctrl_type_name(SDR_CTRL_PATHS), "PATHS");
	/* the hold code: 7 bits, never standing for more than the hold, within 9 % below it */
	assert_int_equal(sdr_ctrl_hold_code(0), 0);
	assert_int_equal(sdr_ctrl_hold_code(999), 0);
	assert_int_equal(sdr_ctrl_hold_code(1000), 1);
	assert_int_equal(sdr_ctrl_hold_code(3600ull * 1000000000), 127);
	assert_int_equal(sdr_ctrl_hold_ns(0), 0);
	for (uint64_t ns = 1000; ns < 50000000; ns = ns * 21 / 20 + 7) {
		uint64_t back = sdr_ctrl_hold_ns(sdr_ctrl_hold_code(ns));

		assert_true(back <= ns && (double)back >= (double)ns / 1.0906);
	}
	c = (struct sdr_ctrl){ .type = SDR_CTRL_ACK, .flags = SDR_CTRL_F_ANSWER, .src_tag = 7 };
	n = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)n, &d), -SDR_CTRL_E_FLAGS);
	assert_string_equal(sdr_ctrl_type_name(SDR_CTRL_WITHDRAW), "WITHDRAW");
	assert_string_equal(sdr_ctrl_type_name(SDR_CTRL_HELLO), "HELLO");
	assert_string_equal(sdr_ctrl_err_name(-SDR_CTRL_E_SHORT), "ctrl_short");
	assert_string_equal(sdr_ctrl_err_name(-SDR_CTRL_E_TAG), "ctrl_bad_tag");
	assert_string_equal(sdr_ctrl_type_name(SDR_CTRL_EC_NACK), "EC-NACK");
}

/* A receiver that never posts: the sender waits for CTS, then the global timeout fires. */
static void
test_no_cts_global_timeout(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx *tx;
	struct rel_tx_unit u;
	struct sdr_rel_done d;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.global_timeout_ns = 5 * RTT;
	tx = rel_tx_create(&cfg, &a);
	assert_true(rel_tx_submit(tx, 1000, 42, 0) >= 0);
	assert_int_equal(rel_tx_next(tx, RTT, &u), 0);	/* no credit: nothing goes out */
	assert_int_equal(rel_tx_next_time(tx, RTT), 5 * RTT);
	assert_int_equal(rel_tx_next(tx, 5 * RTT, &u), 0);
	assert_int_equal(rel_tx_poll_done(tx, &d), 1);
	assert_int_equal(d.status, SDR_DONE_TIMEOUT);
	assert_int_equal(d.cookie, 42);
	assert_int_equal(rel_tx_inflight(tx), 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_TIMEOUTS], 1);
	/* the receiver is told with SKIP, repeated every RTO until its CTS count past it */
	{
		struct sdr_ctrl c;

		assert_int_equal(rel_tx_next_ctrl(tx, 5 * RTT, &c), 1);
		assert_int_equal(c.type, SDR_CTRL_SKIP);
		assert_int_equal(c.win_start, 0);
		assert_int_equal(c.cum, 1);
		assert_int_equal(rel_tx_next_ctrl(tx, 5 * RTT, &c), 0);
	}

	/* three queued behind a receive that never comes: the first times out, the two behind
	 * it end with it (they could only land in later receives) */
	assert_true(rel_tx_submit(tx, 1000, 1, 6 * RTT) >= 0);
	assert_true(rel_tx_submit(tx, 1000, 2, 7 * RTT) >= 0);
	assert_true(rel_tx_submit(tx, 1000, 3, 8 * RTT) >= 0);
	assert_int_equal(rel_tx_next_seq(tx), 4);
	assert_int_equal(rel_tx_next(tx, 11 * RTT, &u), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rel_tx_poll_done(tx, &d), 1);
		assert_int_equal(d.status, SDR_DONE_TIMEOUT);
	}
	assert_int_equal(rel_tx_inflight(tx), 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_NO_RECEIVE], 2);
	{
		struct sdr_ctrl c = { .type = SDR_CTRL_CTS };

		/* one SKIP covers both rounds: [0, 4) */
		assert_int_equal(rel_tx_next_ctrl(tx, 11 * RTT, &c), 1);
		assert_int_equal(c.win_start, 0);
		assert_int_equal(c.cum, 4);
		/* the receiver posts past them: no more SKIP */
		memset(&c, 0, sizeof(c));
		c.type = SDR_CTRL_CTS;
		c.cum = 5;
		c.win_start = 4;
		c.value = 1000;
		rel_tx_on_ctrl(tx, &c, 12 * RTT);
		assert_int_equal(rel_tx_next_ctrl(tx, 20 * RTT, &c), 0);
	}
	rel_tx_destroy(tx);
}

/*
 * The application goes away (rel_tx_cancel): every message in flight ends CANCELLED, credit
 * or not, and SKIP repeats (backing off) until the receiver answers it, even though its CTS
 * already counted past them. A WITHDRAW fails the messages for the withdrawn receives, moves
 * the numbering past them, and is answered once.
 */
static void
test_cancel_and_withdraw(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx *tx;
	struct sdr_rel_done d;
	struct sdr_ctrl c = { .type = SDR_CTRL_CTS, .cum = 8, .win_start = 0, .value = 1000 };
	uint64_t t;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	tx = rel_tx_create(&cfg, &a);
	rel_tx_on_ctrl(tx, &c, 0);		/* eight receives posted */
	for (int i = 0; i < 3; i++)
		assert_true(rel_tx_submit(tx, 1000, (uint64_t)i, 0) >= 0);
	assert_int_equal(rel_tx_cancel(tx, RTT), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rel_tx_poll_done(tx, &d), 1);
		assert_int_equal(d.status, SDR_DONE_CANCELLED);
	}
	assert_int_equal(rel_tx_inflight(tx), 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CANCELLED], 3);
	assert_int_equal(rel_tx_next_ctrl(tx, RTT, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_SKIP);
	assert_int_equal(c.flags, 0);
	assert_int_equal(c.win_start, 0);
	assert_int_equal(c.cum, 3);
	/* not answered: again after one RTO, then two */
	t = rel_tx_next_time(tx, RTT);
	assert_true(t > RTT && t < UINT64_MAX);
	assert_int_equal(rel_tx_next_ctrl(tx, t - 1, &c), 0);
	assert_int_equal(rel_tx_next_ctrl(tx, t, &c), 1);
	assert_true(rel_tx_next_time(tx, t) - t > t - RTT);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_SKIP, .flags = SDR_CTRL_F_ANSWER, .cum = 3 };
	rel_tx_on_ctrl(tx, &c, t);
	assert_int_equal(rel_tx_next_ctrl(tx, 100 * RTT, &c), 0);
	assert_int_equal(rel_tx_next_time(tx, 100 * RTT), UINT64_MAX);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_SKIPS_ANSWERED], 1);

	/* two more messages (seq 3, 4); the receiver withdraws [4, 6) */
	assert_true(rel_tx_submit(tx, 1000, 10, t) >= 0);
	assert_true(rel_tx_submit(tx, 1000, 11, t) >= 0);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_WITHDRAW, .cum = 6, .win_start = 4 };
	rel_tx_on_ctrl(tx, &c, t);
	assert_int_equal(rel_tx_poll_done(tx, &d), 1);
	assert_int_equal(d.status, SDR_DONE_FAILED);
	assert_int_equal(d.cookie, 11);
	assert_int_equal(rel_tx_poll_done(tx, &d), 0);
	assert_int_equal(rel_tx_inflight(tx), 1);	/* seq 3 was not withdrawn */
	assert_int_equal(rel_tx_next_seq(tx), 6);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_WITHDRAWN], 1);
	assert_int_equal(rel_tx_next_ctrl(tx, t, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_WITHDRAW);
	assert_int_equal(c.flags, SDR_CTRL_F_ANSWER);
	assert_int_equal(c.win_start, 4);
	assert_int_equal(c.cum, 6);
	assert_int_equal(rel_tx_next_ctrl(tx, t, &c), 0);	/* once */
	rel_tx_destroy(tx);
}

/*
 * SKIP and WITHDRAW carry the era of their points (their block of 2^32 messages since the
 * epoch began) in the value: after 2^32 messages, one recorded in era 0 and replayed names,
 * by its low 32 bits taken near the count, current messages of era 1, and is implausible.
 * With the right era it is taken; the answer says its era and decodes with it.
 */
static void
test_reset_era(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct rel_tx *tx;
	struct sdr_ctrl c, back;
	uint8_t buf[SDR_CTRL_MAX_LEN];
	uint64_t next = 0, cur = (1ull << 32) + 10;
	int len;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	tx = rel_tx_create(&cfg, &a);
	assert_non_null(rx);
	assert_non_null(tx);
	/* the sender gives up 2^24 messages at a time (the most one SKIP may): 2^32 + 10 */
	while (next < cur) {
		uint64_t hi = next + SDR_SEQ_WINDOW < cur ? next + SDR_SEQ_WINDOW : cur;

		next = rel_rx_on_skip(rx, next, hi, sdr_seq_era(hi, 0), 0);
		assert_int_equal(next, hi);
		while (rel_rx_next_ctrl(rx, 0, &c))
			;	/* (the answers) */
	}
	assert_int_equal(rel_rx_counters(rx)[REL_RX_SKIP_IMPLAUSIBLE], 0);
	/* a SKIP of era 0 for [5, 20) of its era, replayed: near the count its points are
	 * 2^32 + 5 .. 2^32 + 20, of era 1 */
	assert_int_equal(rel_rx_on_skip(rx, cur - 5, cur + 10, 0, 1), cur);
	assert_int_equal(rel_rx_counters(rx)[REL_RX_SKIP_IMPLAUSIBLE], 1);
	assert_int_equal(rel_rx_on_skip(rx, cur - 5, cur + 10, 1, 1), cur + 10);
	assert_int_equal(rel_rx_counters(rx)[REL_RX_SKIP_IMPLAUSIBLE], 1);
	/* its answer says era 1, and the message decodes with it */
	assert_int_equal(rel_rx_next_ctrl(rx, 1, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_SKIP);
	assert_int_equal(c.value, 1);
	assert_int_equal(c.cum, 20);
	c.src_tag = 1;
	len = sdr_ctrl_encode(&c, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(sdr_ctrl_decode(buf, (size_t)len, &back), 0);
	assert_int_equal(back.value, 1);

	/* the sender side (its count at 0, era 0): a WITHDRAW of era 1 is implausible */
	memset(&c, 0, sizeof(c));
	c.type = SDR_CTRL_WITHDRAW;
	c.cum = 20;
	c.win_start = 5;
	c.value = 1;
	rel_tx_on_ctrl(tx, &c, 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_WITHDRAW_IMPLAUSIBLE], 1);
	assert_int_equal(rel_tx_next_seq(tx), 0);
	c.value = 0;
	rel_tx_on_ctrl(tx, &c, 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_WITHDRAW_IMPLAUSIBLE], 1);
	assert_int_equal(rel_tx_next_seq(tx), 20);
	rel_tx_destroy(tx);
	rel_rx_destroy(rx);
}

/* An ec-mds:4,2 receiver (connection @p a) with an 8-chunk receive posted in slot 0 at 0 and
 * its CTS taken. */
static struct rel_rx *
ec42_rx_posted(struct sdr_conn_attr *a)
{
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_ctrl c;

	sdr_conn_attr_default(a);
	a->ec_k = 4;
	a->ec_m = 2;
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.scheme = (struct sdr_scheme){ SDR_SCHEME_EC_MDS, 4, 2, 0 };
	rx = rel_rx_create(&cfg, a);
	assert_non_null(rx);
	assert_true(rel_rx_post(rx, 0, 0, 8 * a->chunk_size, 7, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 0, &c))
		;
	return rx;
}

/*
 * A submessage that becomes decodable (3 data chunks and a parity chunk in) and then gets
 * its last data chunk before the decode runs is done by arrivals: no decode is asked for
 * any more, and the receive completes with nothing counted as decoded. A decode that
 * fails (rel_rx_decode_dropped()) leaves the submessage to the EC-NACKs.
 */
static void
test_rx_done_before_decode(void **state)
{
	struct sdr_conn_attr a;
	struct rel_rx_decode dd;
	struct rel_rx *rx = ec42_rx_posted(&a);
	struct sdr_rel_done d;
	struct sdr_ctrl c;

	(void)state;
	for (uint32_t k = 1; k < 4; k++)
		assert_int_equal(rel_rx_on_chunk(rx, 0, k, 10), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 8, 10), 1);	/* parity 0 of submessage 0 */
	assert_int_equal(rel_rx_on_chunk(rx, 0, 0, 11), 1);	/* the late data chunk */
	assert_int_equal(rel_rx_next_decode(rx, &dd), 0);
	for (uint32_t k = 4; k < 8; k++)
		assert_int_equal(rel_rx_on_chunk(rx, 0, k, 12), 1);
	assert_int_equal(rel_rx_poll_done(rx, &d), 1);
	assert_int_equal(d.status, SDR_DONE_OK);
	assert_int_equal(d.decoded, 0);
	assert_int_equal(rel_rx_counters(rx)[REL_RX_DECODES], 0);
	rel_rx_release(rx, 0);

	/* a decode asked for that fails: the submessage is listed by the next EC-NACK */
	assert_true(rel_rx_post(rx, 1, 0, 8 * a.chunk_size, 8, 100) >= 0);
	while (rel_rx_next_ctrl(rx, 100, &c))
		;
	for (uint32_t k = 1; k < 8; k++)
		assert_int_equal(rel_rx_on_chunk(rx, 0, k, 110), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 8, 110), 1);
	assert_int_equal(rel_rx_next_decode(rx, &dd), 1);
	assert_int_equal(dd.sub, 0);
	rel_rx_decode_dropped(rx, dd.ctx, dd.seq, dd.sub);
	{
		uint64_t t = 110;
		int listed = 0;

		while (!listed && t < 1000000000) {	/* (at the fallback timeout) */
			t = rel_rx_next_time(rx, t);
			while (rel_rx_next_ctrl(rx, t, &c))
				listed |= c.type == SDR_CTRL_EC_NACK && c.win_start == 0 &&
					  c.nwords > 0 && sdr_ctrl_win_bit(&c, 0);
		}
		assert_true(listed);
	}
	rel_rx_destroy(rx);
}

/*
 * A decode dropped after the fallback timeout, when every submessage not in was waiting
 * for its decode (so the EC-NACKs had stopped: nothing to list): the EC-NACKs start again,
 * listing the submessage, at once and every RTO, rather than never.
 */
static void
test_rx_decode_dropped_after_fto(void **state)
{
	struct sdr_conn_attr a;
	struct rel_rx_decode dd;
	struct rel_rx *rx = ec42_rx_posted(&a);
	struct sdr_ctrl c;
	uint64_t t = 10, rto = rel_rx_rto(rx, NULL);
	unsigned int ecnacks = 0;

	(void)state;
	for (uint32_t k = 1; k < 8; k++)		/* all but chunk 0 */
		assert_int_equal(rel_rx_on_chunk(rx, 0, k, t), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 8, t), 1);	/* parity 0 of submessage 0 */
	assert_int_equal(rel_rx_next_decode(rx, &dd), 1);	/* (held, not run) */
	assert_int_equal(dd.sub, 0);
	while (rel_rx_counters(rx)[REL_RX_FTO_FIRED] == 0) {
		t = rel_rx_next_time(rx, t);
		assert_true(t < 10 * RTT);
		while (rel_rx_next_ctrl(rx, t, &c))
			assert_int_not_equal(c.type, SDR_CTRL_EC_NACK);	/* nothing to list */
	}
	rel_rx_decode_dropped(rx, dd.ctx, dd.seq, dd.sub);
	for (uint64_t end = t + 2 * rto; t <= end; t = rel_rx_next_time(rx, t)) {
		while (rel_rx_next_ctrl(rx, t, &c)) {
			if (c.type != SDR_CTRL_EC_NACK)
				continue;
			assert_int_equal(c.win_start, 0);
			assert_true(sdr_ctrl_win_bit(&c, 0));
			ecnacks++;
		}
	}
	assert_int_equal(ecnacks, 3);	/* at once, an RTO and two RTOs on */
	rel_rx_destroy(rx);
}

/*
 * A slot posted again before the sender heard the final ACK of its last receive. Released
 * before the final ACK went out and posted again at once (what an application that reposts
 * on completion does between two outputs), the ACK still goes out, for the old message; and
 * once it has, a late packet of the old message (its sender did not hear that ACK) makes
 * the receiver say it again, though the slot holds the next receive now; owed ACKs of two
 * receives of one slot both go out, each with its own message.
 */
static void
test_rx_final_ack_after_repost(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_rel_done d;
	struct sdr_ctrl c;
	uint64_t seq2 = 1ull << SDR_IMM_SPLIT_DEFAULT.id_bits;	/* slot 0 again */
	uint32_t gen0, gen2;
	int acks = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	assert_non_null(rx);
	gen0 = sdr_conn_seq_gen(&a, 0);
	gen2 = sdr_conn_seq_gen(&a, seq2);
	assert_int_not_equal(gen0, gen2);
	assert_true(rel_rx_post(rx, 0, 0, 2 * a.chunk_size, 1, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 0, &c))
		;					/* the CTS */
	assert_int_equal(rel_rx_on_chunk(rx, 0, 0, 10), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 1, 10), 1);
	assert_int_equal(rel_rx_poll_done(rx, &d), 1);
	assert_int_equal(d.status, SDR_DONE_OK);
	rel_rx_release(rx, 0);
	assert_true(rel_rx_post(rx, seq2, 0, 2 * a.chunk_size, 2, 20) >= 0);
	while (rel_rx_next_ctrl(rx, 20, &c)) {
		if (c.type != SDR_CTRL_ACK)
			continue;
		acks++;
		assert_int_equal(c.msg_id, 0);
		assert_int_equal(c.gen, gen0);
		assert_int_equal(c.value, 0);
		assert_int_equal(c.flags, SDR_CTRL_F_COMPLETE);
	}
	assert_int_equal(acks, 1);
	/* a late packet of the old message, after a quarter RTT: ACKed again; then the slot's
	 * next receive completes and is released before either ACK goes out: both go, each
	 * saying its own message */
	rel_rx_on_late_previous(rx, 0, gen0, 20 + RTT);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 0, 20 + RTT), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 1, 20 + RTT), 1);
	assert_int_equal(rel_rx_poll_done(rx, &d), 1);
	rel_rx_release(rx, 0);
	acks = 0;
	while (rel_rx_next_ctrl(rx, 20 + RTT, &c)) {
		if (c.type != SDR_CTRL_ACK)
			continue;
		assert_int_equal(c.gen, acks == 0 ? gen0 : gen2);
		assert_int_equal(c.value, acks == 0 ? 0 : (uint32_t)seq2);
		assert_int_equal(c.flags, SDR_CTRL_F_COMPLETE);
		acks++;
	}
	assert_int_equal(acks, 2);
	/* the slot remembers its last receive only: the one before it is not answered now */
	rel_rx_on_late(rx, 0, gen0, 30 + 2 * RTT);
	while (rel_rx_next_ctrl(rx, 30 + 2 * RTT, &c))
		assert_int_not_equal(c.type, SDR_CTRL_ACK);
	/* and the last one's late packet, a quarter RTT after its ACK, is */
	rel_rx_on_late(rx, 0, gen2, 30 + 2 * RTT);
	assert_int_equal(rel_rx_next_ctrl(rx, 30 + 2 * RTT, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_ACK);
	assert_int_equal(c.gen, gen2);
	assert_int_equal(c.value, (uint32_t)seq2);
	/* not at once again: one re-ACK per quarter RTT */
	rel_rx_on_late(rx, 0, gen2, 31 + 2 * RTT);
	while (rel_rx_next_ctrl(rx, 31 + 2 * RTT, &c))
		assert_int_not_equal(c.type, SDR_CTRL_ACK);
	assert_int_equal(rel_rx_counters(rx)[REL_RX_REACKS], 4);
	rel_rx_destroy(rx);
}


/*
 * The receiver side: a SKIP fails the receives in its range even with data in, numbers past
 * it and is answered; rel_rx_withdraw() lists every receive posted and repeats WITHDRAW for
 * the ones not complete until answered.
 */
static void
test_rx_skip_and_withdraw(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_rel_done d;
	struct sdr_ctrl c;
	uint32_t slots[128];
	uint64_t t;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	for (uint32_t i = 0; i < 4; i++)
		assert_true(rel_rx_post(rx, i, i, 4 * a.chunk_size, i, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 0, &c))
		;					/* the CTS */
	assert_int_equal(rel_rx_on_chunk(rx, 1, 0, 10), 1);	/* seq 1 has data */
	assert_int_equal(rel_rx_on_skip(rx, 0, 2, 0, 20), 4);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rel_rx_poll_done(rx, &d), 1);
		assert_int_equal(d.status, SDR_DONE_FAILED);
	}
	assert_int_equal(rel_rx_counters(rx)[REL_RX_SKIPPED], 2);
	assert_int_equal(rel_rx_next_ctrl(rx, 20, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_SKIP);
	assert_int_equal(c.flags, SDR_CTRL_F_ANSWER);
	assert_int_equal(c.cum, 2);
	rel_rx_release(rx, 0);
	rel_rx_release(rx, 1);
	/* seq 2 completes; seq 3 half in: the application goes */
	for (uint32_t k = 0; k < 4; k++)
		rel_rx_on_chunk(rx, 2, k, 30);
	rel_rx_on_chunk(rx, 3, 0, 30);
	assert_int_equal(rel_rx_withdraw(rx, 40, slots), 2);
	assert_true((slots[0] == 2 && slots[1] == 3) || (slots[0] == 3 && slots[1] == 2));
	assert_int_equal(rel_rx_counters(rx)[REL_RX_WITHDRAWN], 1);
	rel_rx_release(rx, 2);
	rel_rx_release(rx, 3);
	{
		int withdraws = 0;

		while (rel_rx_next_ctrl(rx, 40, &c)) {	/* and the final ACK of seq 2 */
			if (c.type != SDR_CTRL_WITHDRAW)
				continue;
			withdraws++;
			assert_int_equal(c.flags, 0);
			assert_int_equal(c.win_start, 3);
			assert_int_equal(c.cum, 4);
		}
		assert_int_equal(withdraws, 1);
	}
	t = rel_rx_next_time(rx, 40);
	assert_true(t > 40 && t < UINT64_MAX);
	assert_int_equal(rel_rx_next_ctrl(rx, t, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_WITHDRAW);
	rel_rx_on_withdraw_answer(rx, 4, 0);
	assert_int_equal(rel_rx_next_time(rx, t), UINT64_MAX);
	assert_int_equal(rel_rx_next_ctrl(rx, 1000 * RTT, &c), 0);
	rel_rx_destroy(rx);
}

/*
 * Receives the application gave up one by one (released while open, as sdr_recv_complete()
 * of an incomplete receive does), then it went away with none posted: the sender never
 * started their messages (it went away too), so the WITHDRAW still covers them, from the
 * first message it had not started; else its next messages would meet receives that are
 * gone and each later message the receive one place off. One the sender had started is not
 * in the range.
 */
static void
test_rx_withdraw_given_up(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_rel_done d;
	struct sdr_ctrl c;
	uint32_t slots[128];
	int withdraws = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	for (uint32_t i = 0; i < 5; i++)
		assert_true(rel_rx_post(rx, i, i, 4 * a.chunk_size, i, 0) >= 0);
	for (uint32_t k = 0; k < 4; k++)
		rel_rx_on_chunk(rx, 0, k, 10);		/* seq 0 complete */
	assert_int_equal(rel_rx_poll_done(rx, &d), 1);
	assert_int_equal(d.status, SDR_DONE_OK);
	rel_rx_release(rx, 0);
	rel_rx_on_chunk(rx, 1, 0, 20);			/* seq 1 started, then given up */
	for (uint32_t i = 1; i < 5; i++)
		rel_rx_release(rx, i);			/* 2, 3, 4 never started */
	while (rel_rx_next_ctrl(rx, 30, &c))
		;
	assert_int_equal(rel_rx_withdraw(rx, 40, slots), 0);	/* none open */
	assert_int_equal(rel_rx_counters(rx)[REL_RX_WITHDRAWN], 0);
	while (rel_rx_next_ctrl(rx, 40, &c)) {
		if (c.type != SDR_CTRL_WITHDRAW)
			continue;
		withdraws++;
		assert_int_equal(c.flags, 0);
		assert_int_equal(c.win_start, 2);
		assert_int_equal(c.cum, 5);
	}
	assert_int_equal(withdraws, 1);
	rel_rx_on_withdraw_answer(rx, 5, 0);
	assert_int_equal(rel_rx_next_ctrl(rx, 1000 * RTT, &c), 0);
	/* a second departure with nothing given up since: nothing to say */
	assert_int_equal(rel_rx_withdraw(rx, 2000 * RTT, slots), 0);
	assert_int_equal(rel_rx_next_ctrl(rx, 2000 * RTT, &c), 0);
	rel_rx_destroy(rx);
}

/*
 * The pacer: a greedy sender of 4 KiB frames at 10 Gbit/s with a 16 KiB bucket. After a
 * long idle spell it bursts at most bucket + one frame; over any span it sends the rate
 * times the span, give or take the bucket and one frame; ready_at() is the exact moment
 * the credit is back to zero; unpaced it is always ready.
 */
static void
test_pacer(void **state)
{
	const double rate = 10e9, bpns = rate / 8e9;
	const uint32_t frame = 4096, bucket = 16384;
	struct pacer p;
	uint64_t now = 5000000, sent = 0, t0;
	uint32_t burst = 0;

	(void)state;
	pacer_init(&p, rate, bucket, 0);
	/* idle for 5 ms: the credit is capped at the bucket */
	while (pacer_ready(&p, now)) {
		pacer_consume(&p, frame);
		burst += frame;
	}
	assert_true(burst <= bucket + frame);
	assert_true(burst >= bucket);
	/* then greedy for 10 ms, moving the clock only to ready_at() */
	t0 = now;
	while (now < t0 + 10000000) {
		uint64_t at = pacer_ready_at(&p, now);

		assert_true(at >= now);
		if (at > now) {
			assert_false(pacer_ready(&p, at - 1));
			now = at;
		}
		assert_true(pacer_ready(&p, now));
		pacer_consume(&p, frame);
		sent += frame;
	}
	/* the rate, to within a frame (and no burst: the bucket was spent at t0) */
	assert_true((double)sent <= bpns * (double)(now - t0) + frame);
	assert_true((double)sent >= bpns * (double)(now - t0) - frame);
	/* unpaced */
	pacer_init(&p, 0, 0, 0);
	for (int i = 0; i < 1000; i++) {
		assert_true(pacer_ready(&p, 0));
		pacer_consume(&p, frame);
	}
	assert_int_equal(pacer_ready_at(&p, 7), 7);
}

/*
 * What the sender learns of the path from its acknowledgements (path_est.h), on the exact
 * virtual clock: every ACK comes one RTT plus the chunk's serialization after its send.
 */
/* the RTT of the path plus one chunk's serialization; 1 ns less for a chunk sent at time 0
 * (a send time of 0 means "never sent", so that one is kept as 1) */
static void
assert_rtt(uint64_t got)
{
	assert_in_range(got, RTT + t_inj(1) - 1, RTT + t_inj(1));
}

static void
test_path_rtt_and_rate(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { 0 };
	struct sdr_sim_result r;

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	r = run(&c, &s);
	assert_int_equal(r.rtt_samples, 8);		/* one ACK per chunk, then COMPLETE */
	assert_rtt(r.rtt_min_ns);
	/* one message in flight: the connection, not the path, limits the rate — the
	 * sample is the message over its life, a lower bound of the path's rate */
	assert_int_equal(r.rate_samples, 1);
	{
		double want = 8.0 * 8 * CHUNK * 1e9 / (double)(t_inj(8) + RTT);

		assert_true(fabs(r.rate_max_bps / want - 1) < 1e-6);	/* the 1 ns above */
	}

	/* enough in flight to fill the path (16 x 16 chunks against a BDP of 153): the
	 * largest sample comes within 5 % of its rate */
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 16);
	c.attr.max_inflight = 16;
	c.messages = 128;
	assert_int_equal(sdr_sim_run(&c, 1, NULL, &r, NULL), 0);
	assert_int_equal(r.ok, 128);
	assert_int_equal(r.rate_samples, 128);
	/* (above it by at most one chunk over the sample's interval: an ACK delivers a whole
	 * chunk at once, about 0.6 % of a 10 ms interval here) */
	assert_true(r.rate_max_bps > 0.95 * BW && r.rate_max_bps <= BW * 1.01);
	assert_rtt(r.rtt_min_ns);
}

/*
 * Karn's rule: an acknowledgement of a message with a resent chunk says nothing of the RTT.
 * Chunk 3's first copy is held 27 ms, past the RTO (30 ms from its send); it arrives after
 * the resend left and completes the message 7 ms after the resend: a sample taken from the
 * resend would be shorter than the path's RTT.
 */
static void
test_path_karn(void **state)
{
	struct sdr_sim_cfg c;
	struct script s = { .delay_index = 3, .delay_ns = 27000000 };
	struct sdr_sim_result r;

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	r = run(&c, &s);
	assert_int_equal(r.retransmitted, 1);
	assert_true(done_time(&s) < 30000000 + RTT);	/* the first copy completed it */
	assert_rtt(r.rtt_min_ns);
	assert_int_equal(r.rtt_samples, 7);		/* the ACKs before the resend only */
}

/*
 * rto_measured: the configured RTT far off the path's (10 ms), both ways, 64 messages of 8
 * chunks, 4 in flight, no loss. Told 1 ms, the fixed RTO (3 ms) expires on every chunk
 * before its acknowledgement can come back; the measured one backs off until a message
 * goes through once, then follows the path: 3 x its smallest RTT, and no chunk is resent
 * after that. Told 100 ms with 2 % loss, the fixed RTO (300 ms) makes every loss cost
 * 300 ms; the measured one brings it to 3 x 10 ms and the mean completion time down.
 */
static void
test_rto_measured(void **state)
{
	struct sdr_sim_cfg c;
	struct sdr_sim_result fixed, meas;
	uint64_t rtt_meas;

	(void)state;
	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	c.attr.max_inflight = 4;
	c.messages = 64;
	c.rel.rtt_ns = RTT / 10;
	c.rel.timer_slots = 4096;
	assert_int_equal(sdr_sim_run(&c, 1, NULL, &fixed, NULL), 0);
	assert_int_equal(fixed.ok, 64);
	assert_true(fixed.retransmitted > 64 * 8 / 2);		/* most chunks, spuriously */
	assert_int_equal(fixed.rto_ns, 3 * RTT / 10);
	assert_int_equal(fixed.rto_backoffs, 0);
	c.rel.rto_measured = 1;
	assert_int_equal(sdr_sim_run(&c, 1, NULL, &meas, NULL), 0);
	assert_int_equal(meas.ok, 64);
	assert_true(meas.rtt_samples >= SDR_REL_RTO_MIN_SAMPLES);
	rtt_meas = meas.rtt_min_ns;
	assert_rtt(rtt_meas);
	assert_int_equal(meas.rto_ns, 3 * rtt_meas);
	/* 3 ms -> 6 -> 12 ms, the first above the path's RTT (10.07 ms) */
	assert_int_equal(meas.rto_backoffs, 2);
	assert_true(meas.retransmitted < fixed.retransmitted / 4);
	print_message("told 1 ms on a 10 ms path: %" PRIu64 " chunks resent with the fixed RTO, "
		      "%" PRIu64 " with the measured one (%" PRIu64 " doublings, RTO %.1f ms at "
		      "the end)\n", fixed.retransmitted, meas.retransmitted, meas.rto_backoffs,
		      (double)meas.rto_ns * 1e-6);

	cfg_init(&c, SDR_SCHEME_SR, 0, 0, 8);
	c.attr.max_inflight = 4;
	c.messages = 400;
	c.rel.rtt_ns = 10 * RTT;
	c.link.p_loss = 0.02;
	assert_int_equal(sdr_sim_run(&c, 7, NULL, &fixed, NULL), 0);
	c.rel.rto_measured = 1;
	assert_int_equal(sdr_sim_run(&c, 7, NULL, &meas, NULL), 0);
	assert_int_equal(fixed.ok, 400);
	assert_int_equal(meas.ok, 400);
	assert_int_equal(fixed.rto_ns, 30 * RTT);
	assert_true(meas.rto_ns >= 3 * meas.rtt_min_ns && meas.rto_ns < 4 * RTT);
	assert_true(meas.mean_s < 0.5 * fixed.mean_s);
	print_message("told 100 ms on a 10 ms path, 2 %% loss: mean %.1f ms with the fixed RTO, "
		      "%.1f ms with the measured one\n", fixed.mean_s * 1e3, meas.mean_s * 1e3);
}

/*
 * rto_measured on the receiving side: told 100 ms on a 10 ms path with 2 % loss. The
 * receiver's samples (a receive's first CTS to its first chunk) find the path's RTT as the
 * sender's do, and its timers follow: an sr-nack hole is NACKed again after 10 ms + margin,
 * not 100, and the EC fallback timeout's slack is beta x 10 ms. Configured timers at both
 * ends against measured ones at both: the mean falls below half. (With only the sender's
 * measured, as before the receiver's were: sr-nack 26.7 ms against 21.2, ec-xor:4,1 86.1 ms
 * against 26.6 — the EC fallback is the receiver's timer.)
 */
static void
test_rto_measured_receiver(void **state)
{
	static const struct { enum sdr_scheme_kind kind; uint16_t k, m; } schemes[] = {
		{ SDR_SCHEME_SR_NACK, 0, 0 }, { SDR_SCHEME_EC_XOR, 4, 1 },
	};
	struct sdr_sim_cfg c;
	struct sdr_sim_result fixed, meas;
	char name[32];

	(void)state;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		cfg_init(&c, schemes[i].kind, schemes[i].k, schemes[i].m, 8);
		c.attr.max_inflight = 4;
		c.messages = 400;
		c.rel.rtt_ns = 10 * RTT;
		c.link.p_loss = 0.02;
		assert_int_equal(sdr_sim_run(&c, 7, NULL, &fixed, NULL), 0);
		assert_int_equal(fixed.ok, 400);
		/* not measured: the configured RTT, though the samples were taken */
		assert_int_equal(fixed.rx_timer_rtt_ns, 10 * RTT);
		assert_int_equal(fixed.rx_rto_ns, 30 * RTT);
		assert_true(fixed.rx_rtt_samples >= SDR_REL_RTO_MIN_SAMPLES);
		c.rel.rto_measured = 1;
		assert_int_equal(sdr_sim_run(&c, 7, NULL, &meas, NULL), 0);
		assert_int_equal(meas.ok, 400);
		assert_true(meas.rx_rtt_samples >= SDR_REL_RTO_MIN_SAMPLES);
		/* a sample is never below the path's RTT; the smallest is one chunk above it */
		assert_rtt(meas.rx_rtt_min_ns);
		assert_int_equal(meas.rx_timer_rtt_ns, meas.rx_rtt_min_ns);
		assert_int_equal(meas.rx_rto_ns, 3 * meas.rx_rtt_min_ns);
		assert_true(meas.mean_s < 0.5 * fixed.mean_s);
		print_message("%s told 100 ms on a 10 ms path, 2 %% loss: mean %.1f ms with the "
			      "configured timers, %.1f ms with both ends' measured (receiver's RTT "
			      "%.2f ms from %" PRIu64 " samples)\n",
			      sdr_scheme_format(&c.rel.scheme, name, sizeof(name)), fixed.mean_s * 1e3,
			      meas.mean_s * 1e3, (double)meas.rx_rtt_min_ns * 1e-6,
			      meas.rx_rtt_samples);
	}
}

/*
 * A receive's CTS repeats until its first chunk arrives, its spacing doubling from one RTO
 * to at most 8 (a sender with nothing to send is not sent one per RTO per receive while
 * it stays idle): the first goes at the post, the repeats 1, 3, 7, 15, 23, ... RTOs after.
 * A chunk ends them.
 */
static void
test_rx_cts_backoff(void **state)
{
	static const unsigned int want[] = { 0, 1, 3, 7, 15, 23, 31, 39 };
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_ctrl c;
	uint64_t rto, t = 0;
	unsigned int n = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	rto = rel_rx_rto(rx, NULL);
	assert_true(rel_rx_post(rx, 0, 0, 4 * a.chunk_size, 0, 0) >= 0);
	while (t < 40 * rto) {
		while (rel_rx_next_ctrl(rx, t, &c)) {
			assert_int_equal(c.type, SDR_CTRL_CTS);
			assert_true(n < sizeof(want) / sizeof(want[0]));
			assert_int_equal(t, want[n] * rto);
			n++;
		}
		t = rel_rx_next_time(rx, t);
		assert_true(t < UINT64_MAX);
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(rel_rx_counters(rx)[REL_RX_CTS], n);
	/* the first chunk: no more CTS */
	assert_int_equal(rel_rx_on_chunk(rx, 0, 0, t), 1);
	for (int i = 0; i < 100 && rel_rx_next_ctrl(rx, t + 100 * rto, &c); i++)
		assert_int_not_equal(c.type, SDR_CTRL_CTS);
	rel_rx_destroy(rx);
}

/* Shuffle @p v (n entries) with the LCG state @p x. */
static void
shuffle(uint64_t *v, uint32_t n, uint64_t *x)
{
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j;
		uint64_t tmp;

		*x = *x * 6364136223846793005ull + 1442695040888963407ull;
		j = (uint32_t)((*x >> 33) % (i + 1));
		tmp = v[i];
		v[i] = v[j];
		v[j] = tmp;
	}
}

/*
 * Many receives, each on its own timers: 1024 two-chunk receives posted 997 ns apart, their
 * first chunks in a shuffled order at random times over 40 RTOs (fixed seed). Every receive
 * repeats its CTS at post + 1, 3, 7, 15, 23, ... RTOs until its first chunk, and each of
 * them comes at exactly that time (rel_rx_next_time() names it, none is late), none after
 * the chunk. Then every second chunk: each receive completes with its final ACK at once.
 * All are released, in a shuffled order, and 1024 more posted in their slots; half of
 * those are released at once, their CTS timers with them (none repeats), the rest go on
 * as before.
 */
static void
test_rx_many_receives(void **state)
{
	enum { N = 1024 };
	static const unsigned int rep[] = { 0, 1, 3, 7, 15, 23, 31, 39 };
	static uint64_t post[N], first[N], order[N];
	static unsigned int seen[N], want[N];
	static uint8_t gone[N];
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_rel_done d;
	struct sdr_ctrl c;
	uint64_t rto, t = 0, x = 12345;

	(void)state;
	sdr_conn_attr_default(&a);
	a.max_inflight = N;
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	assert_non_null(rx);
	rto = rel_rx_rto(rx, NULL);
	for (uint32_t round = 0; round < 2; round++) {
		uint64_t t0 = t, done = 0, finals = 0, live = round ? N / 2 : N;

		memset(seen, 0, sizeof(seen));
		memset(want, 0, sizeof(want));
		memset(gone, 0, sizeof(gone));
		for (uint32_t i = 0; i < N; i++) {
			post[i] = t0 + 997ull * i;
			assert_true(rel_rx_post(rx, round * N + i, i, 2 * a.chunk_size, i, post[i]) >= 0);
			while (rel_rx_next_ctrl(rx, post[i], &c)) {	/* its first CTS, at the post */
				assert_int_equal(c.type, SDR_CTRL_CTS);
				assert_int_equal(c.msg_id, i);
				seen[i]++;
			}
			order[i] = i;
		}
		shuffle(order, N, &x);
		for (uint32_t k = 0; k < N; k++) {	/* nondecreasing times, shuffled order */
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			first[order[k]] = (k ? first[order[k - 1]] : post[N - 1]) +
					  (x >> 33) % (40 * rto / N);
		}
		for (uint32_t i = 0; i < N; i++) {
			/* (a chunk at a CTS's own time would race it: one ns later) */
			for (unsigned int r = 0; r < sizeof(rep) / sizeof(rep[0]); r++)
				if (post[i] + rep[r] * rto == first[i])
					first[i]++;
			for (unsigned int r = 0; r < sizeof(rep) / sizeof(rep[0]) &&
			     post[i] + rep[r] * rto < first[i]; r++)
				want[i]++;
		}
		t = post[N - 1];
		for (uint32_t k = 1; round && k < N; k += 2) {	/* given up before any chunk */
			gone[order[k]] = 1;
			want[order[k]] = 1;
			rel_rx_release(rx, (uint32_t)order[k]);
		}
		for (uint32_t k = 0; k < N;) {
			uint32_t i = (uint32_t)order[k];
			uint64_t w = rel_rx_next_time(rx, t);

			assert_true(w >= t);
			if (gone[i]) {
				k++;
				continue;
			}
			if (w < first[i]) {
				t = w;
			} else {
				t = first[i];
				assert_int_equal(rel_rx_on_chunk(rx, i, 0, t), 1);
				k++;
			}
			while (rel_rx_next_ctrl(rx, t, &c)) {
				if (c.type != SDR_CTRL_CTS)
					continue;
				assert_true(c.msg_id < N);
				assert_true(seen[c.msg_id] < want[c.msg_id]);
				assert_int_equal(t, post[c.msg_id] + rep[seen[c.msg_id]] * rto);
				seen[c.msg_id]++;
			}
		}
		for (uint32_t i = 0; i < N; i++)
			assert_int_equal(seen[i], want[i]);
		for (uint32_t k = 0; k < N; k++) {
			uint32_t i = (uint32_t)order[N - 1 - k];

			if (gone[i])
				continue;
			assert_int_equal(rel_rx_on_chunk(rx, i, 1, t), 1);
			while (rel_rx_next_ctrl(rx, t, &c)) {
				assert_int_not_equal(c.type, SDR_CTRL_CTS);
				if (c.type == SDR_CTRL_ACK && (c.flags & SDR_CTRL_F_COMPLETE)) {
					assert_int_equal(c.msg_id, i);
					finals++;
				}
			}
			while (rel_rx_poll_done(rx, &d)) {
				assert_int_equal(d.slot, i);
				assert_int_equal(d.status, SDR_DONE_OK);
				done++;
			}
			t += 1000;
		}
		assert_int_equal(finals, live);
		assert_int_equal(done, live);
		shuffle(order, N, &x);
		for (uint32_t k = 0; k < N; k++)
			if (!gone[order[k]])
				rel_rx_release(rx, (uint32_t)order[k]);
		t += rto;
	}
	rel_rx_destroy(rx);
}

/*
 * Receives owe their control messages in the order they were touched: four one-chunk
 * receives whose chunks come in the order 2, 0, 3, 1 at one moment are answered (final
 * ACKs) in that order, so a receive touched early is not passed over by those touched
 * after it when the caller's burst has room for only some.
 */
static void
test_rx_touch_order(void **state)
{
	static const uint32_t arrive[] = { 2, 0, 3, 1 };
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_ctrl c;
	unsigned int k = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	rx = rel_rx_create(&cfg, &a);
	assert_non_null(rx);
	for (uint32_t i = 0; i < 4; i++)
		assert_true(rel_rx_post(rx, i, i, a.chunk_size, i, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 0, &c))
		assert_int_equal(c.type, SDR_CTRL_CTS);
	for (unsigned int j = 0; j < 4; j++)
		assert_int_equal(rel_rx_on_chunk(rx, arrive[j], 0, 1000), 1);
	/* one at a time, as a caller whose burst is full after each */
	while (rel_rx_next_ctrl(rx, 1000, &c)) {
		if (c.type != SDR_CTRL_ACK || !(c.flags & SDR_CTRL_F_COMPLETE))
			continue;
		assert_true(k < 4);
		assert_int_equal(c.msg_id, arrive[k]);
		k++;
	}
	assert_int_equal(k, 4);
	rel_rx_destroy(rx);
}

/*
 * SR-NACK, a receive owing two NACK windows at once (a 2048-chunk message with only its
 * first and last chunks in), its ACK timer off: the caller takes one NACK and comes back two
 * round lengths later (its burst was full). The receive's timers run again then: a new round
 * NACKs both windows, and the next round comes one round length later, rather than never.
 */
static void
test_rx_nack_partial_drain(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_rx *rx;
	struct sdr_ctrl c;
	uint64_t t = 0, round = RTT + RTT / 8, end;
	unsigned int rounds = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	a.chunk_size = 4096;
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.scheme.kind = SDR_SCHEME_SR_NACK;
	cfg.ack_every_ns = 0;
	rx = rel_rx_create(&cfg, &a);
	assert_non_null(rx);
	assert_true(rel_rx_post(rx, 0, 0, 2048 * 4096ull, 0, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 0, &c))
		;
	assert_int_equal(rel_rx_on_chunk(rx, 0, 0, 1000), 1);
	assert_int_equal(rel_rx_on_chunk(rx, 0, 2047, 1000), 1);
	while (rel_rx_next_ctrl(rx, 1000, &c))
		;
	t = 1000;
	for (;;) {	/* to the first NACK: one call only */
		t = rel_rx_next_time(rx, t);
		assert_true(t < 1000 + RTT);
		if (rel_rx_next_ctrl(rx, t, &c) && c.type == SDR_CTRL_NACK)
			break;
	}
	assert_int_equal(c.win_start, 1);
	t += 2 * round;		/* a new round, both windows */
	assert_int_equal(rel_rx_next_ctrl(rx, t, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_NACK);
	assert_int_equal(c.win_start, 1);
	assert_int_equal(rel_rx_next_ctrl(rx, t, &c), 1);
	assert_int_equal(c.type, SDR_CTRL_NACK);
	assert_int_equal(c.win_start, 1 + SDR_CTRL_MAX_BITS);
	for (end = t + round; t <= end; t = rel_rx_next_time(rx, t)) {
		while (rel_rx_next_ctrl(rx, t, &c))
			rounds += c.type == SDR_CTRL_NACK && c.win_start == 1;
		assert_true(t < UINT64_MAX);
	}
	assert_int_equal(rounds, 1);	/* the next round, one round length on */
	rel_rx_destroy(rx);
}

/* A sender with the default attributes, unpaced. */
static struct rel_tx *
tx_unpaced(void)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx *tx;

	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.rate_bps = 0;
	tx = rel_tx_create(&cfg, &a);
	assert_non_null(tx);
	return tx;
}

/*
 * A CTS names the message its receive is for (slot and sequence number) and the length
 * posted: a length other than the message's fails the message; a CTS for another sequence
 * number in the same slot (an old receive's) or for a slot with no message leaves it be.
 */
static void
test_cts_length(void **state)
{
	struct rel_tx *tx;
	struct rel_tx_unit u;
	struct sdr_rel_done d;
	uint64_t len = 3 * 65536;
	struct sdr_ctrl c = { .type = SDR_CTRL_CTS, .cum = 2, .win_start = 1, .msg_id = 1 };

	(void)state;
	tx = tx_unpaced();
	assert_int_equal(rel_tx_submit(tx, len, 10, 0), 0);
	assert_int_equal(rel_tx_submit(tx, len, 11, 0), 1);
	c.value = len + 1;
	c.win_start = 1 + 1024;				/* slot 1, a later receive */
	c.cum = c.win_start + 1;
	rel_tx_on_ctrl(tx, &c, 1);
	c.msg_id = 5;					/* no message in slot 5 */
	c.win_start = 5;
	c.cum = 6;
	rel_tx_on_ctrl(tx, &c, 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS], 2);	/* (both plausible) */
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 0);
	assert_int_equal(rel_tx_poll_done(tx, &d), 0);
	c.msg_id = 1;					/* message 1's receive, 1 byte too long */
	c.win_start = 1;
	c.cum = 2;
	rel_tx_on_ctrl(tx, &c, 2);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 1);
	assert_int_equal(rel_tx_poll_done(tx, &d), 1);
	assert_int_equal(d.cookie, 11);
	assert_int_equal(d.status, SDR_DONE_FAILED);
	rel_tx_on_ctrl(tx, &c, 2);			/* again: message 1 is gone */
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 1);
	assert_int_equal(rel_tx_poll_done(tx, &d), 0);
	c.msg_id = 0;					/* message 0's, the right length */
	c.win_start = 0;
	c.value = len;
	rel_tx_on_ctrl(tx, &c, 3);
	assert_int_equal(rel_tx_next(tx, 4, &u), 1);
	assert_int_equal(u.seq, 0);
	assert_int_equal(rel_tx_poll_done(tx, &d), 0);
	rel_tx_destroy(tx);
}

/*
 * The receiver usually posts first: a CTS that comes before its message is submitted keeps
 * its length, and the message, submitted with another length, fails at once and is SKIPped
 * (delivered cut short it would complete OK on both sides); one of the right length goes out.
 */
static void
test_cts_length_before_submit(void **state)
{
	struct rel_tx *tx;
	struct rel_tx_unit u;
	struct sdr_rel_done d;
	struct sdr_ctrl k;
	uint64_t len = 3 * 65536;
	struct sdr_ctrl c = { .type = SDR_CTRL_CTS, .cum = 1, .win_start = 0, .msg_id = 0,
			      .value = len - 4096 };

	(void)state;
	tx = tx_unpaced();
	rel_tx_on_ctrl(tx, &c, 1);			/* receive 0: 4 KiB shorter */
	c.msg_id = 1;					/* receive 1: the right length */
	c.win_start = 1;
	c.cum = 2;
	c.value = len;
	rel_tx_on_ctrl(tx, &c, 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS], 2);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 0);
	assert_true(rel_tx_submit(tx, len, 10, 2) >= 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 1);
	assert_int_equal(rel_tx_poll_done(tx, &d), 1);
	assert_int_equal(d.cookie, 10);
	assert_int_equal(d.status, SDR_DONE_FAILED);
	assert_int_equal(rel_tx_next_ctrl(tx, 2, &k), 1);	/* SKIP of message 0 alone */
	assert_int_equal(k.type, SDR_CTRL_SKIP);
	assert_int_equal(k.win_start, 0);
	assert_int_equal(k.cum, 1);
	assert_true(rel_tx_submit(tx, len, 11, 3) >= 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 1);
	assert_int_equal(rel_tx_poll_done(tx, &d), 0);
	assert_int_equal(rel_tx_next(tx, 4, &u), 1);
	assert_int_equal(u.seq, 1);
	/* message 2 too long for its receive while the SKIP of 0 waits for its answer: it
	 * fails, but the SKIP does not grow over message 1, which is good */
	c.msg_id = 2;
	c.win_start = 2;
	c.cum = 3;
	c.value = len - 1;
	rel_tx_on_ctrl(tx, &c, 5);
	assert_true(rel_tx_submit(tx, len, 12, 5) >= 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 2);
	assert_int_equal(rel_tx_poll_done(tx, &d), 1);
	assert_int_equal(d.cookie, 12);
	assert_int_equal(rel_tx_next_ctrl(tx, 5, &k), 1);	/* a SKIP of its own: [2, 3) */
	assert_int_equal(k.type, SDR_CTRL_SKIP);
	assert_int_equal(k.win_start, 2);
	assert_int_equal(k.cum, 3);
	assert_int_equal(rel_tx_next_ctrl(tx, 10 * RTT, &k), 1);	/* the SKIP of 0 again */
	assert_int_equal(k.type, SDR_CTRL_SKIP);
	assert_int_equal(k.win_start, 0);
	assert_int_equal(k.cum, 1);
	rel_tx_destroy(tx);
}

/* The receiver's side of @p k, a SKIP, and its answer back to @p tx. */
static void
skip_there_and_back(struct rel_tx *tx, struct rel_rx *rx, const struct sdr_ctrl *k,
		    uint64_t now)
{
	struct sdr_ctrl c;

	assert_int_equal(k->type, SDR_CTRL_SKIP);
	rel_rx_on_skip(rx, k->win_start, k->cum, k->value, now);
	while (rel_rx_next_ctrl(rx, now, &c))
		if (c.type == SDR_CTRL_SKIP)
			rel_tx_on_ctrl(tx, &c, now);
}

/*
 * Messages given up at different times keep SKIPs of their own: a message whose receive
 * turns out to have another length (its CTS comes while it is in flight) fails while those
 * around it go on, and its SKIP names it alone, so the receiver fails that receive at once
 * and no other; a SKIP of one range over two such messages would fail the good one between
 * them. Past 8 runs owed at once a run joins the nearest, counted.
 */
static void
test_skip_runs_apart(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx *tx;
	struct rel_rx *rx;
	struct sdr_rel_done d;
	struct sdr_ctrl c, k;
	const uint64_t len = 65536;
	uint32_t failed = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.rate_bps = 0;
	tx = rel_tx_create(&cfg, &a);
	rx = rel_rx_create(&cfg, &a);
	assert_non_null(tx);
	assert_non_null(rx);
	/* four messages submitted, then the receives: 1 and 3 are 4 KiB short */
	for (uint64_t i = 0; i < 4; i++)
		assert_true(rel_tx_submit(tx, len, i, 0) >= 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_true(rel_rx_post(rx, i, i, i % 2 ? len - 4096 : len, 100 + i, 0) >= 0);
	while (rel_rx_next_ctrl(rx, 1, &c))
		if (c.type == SDR_CTRL_CTS)
			rel_tx_on_ctrl(tx, &c, 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rel_tx_poll_done(tx, &d), 1);
		assert_int_equal(d.status, SDR_DONE_FAILED);
		assert_int_equal(d.cookie, (uint64_t)(2 * i + 1));
	}
	assert_int_equal(rel_tx_inflight(tx), 2);		/* 0 and 2 go on */
	/* one SKIP each, [1, 2) and [3, 4); the receiver fails receives 1 and 3 alone */
	assert_int_equal(rel_tx_next_ctrl(tx, 2, &k), 1);
	assert_int_equal(k.win_start, 1);
	assert_int_equal(k.cum, 2);
	skip_there_and_back(tx, rx, &k, 2);
	assert_int_equal(rel_tx_next_ctrl(tx, 2, &k), 1);
	assert_int_equal(k.win_start, 3);
	assert_int_equal(k.cum, 4);
	skip_there_and_back(tx, rx, &k, 2);
	while (rel_rx_poll_done(rx, &d)) {
		assert_int_equal(d.status, SDR_DONE_FAILED);
		assert_true(d.cookie == 101 || d.cookie == 103);
		failed++;
	}
	assert_int_equal(failed, 2);
	assert_int_equal(rel_rx_counters(rx)[REL_RX_SKIPPED], 2);
	assert_true(rel_rx_slot_open(rx, 0) && rel_rx_slot_open(rx, 2));
	/* both answered: nothing more owed */
	assert_int_equal(rel_tx_counters(tx)[REL_TX_SKIPS_ANSWERED], 2);
	assert_int_equal(rel_tx_next_ctrl(tx, 100 * RTT, &k), 0);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_SKIP_RANGES_MERGED], 0);

	/* nine more runs owed at once (messages 5, 7, ... 21 of 4 .. 21, the others good):
	 * the ninth joins its nearest, over the good message between them */
	for (uint64_t i = 4; i < 22; i++)
		assert_true(rel_tx_submit(tx, len, i, 200 * RTT) >= 0);
	for (uint64_t i = 5; i < 22; i += 2) {
		c = (struct sdr_ctrl){ .type = SDR_CTRL_CTS, .msg_id = (uint16_t)i,
				       .win_start = (uint32_t)i, .cum = 22, .value = len - 1 };
		rel_tx_on_ctrl(tx, &c, 200 * RTT);
	}
	assert_int_equal(rel_tx_counters(tx)[REL_TX_CTS_LEN_MISMATCH], 11);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_SKIP_RANGES_MERGED], 1);
	for (uint64_t want = 5; want < 19; want += 2) {
		assert_int_equal(rel_tx_next_ctrl(tx, 200 * RTT, &k), 1);
		assert_int_equal(k.win_start, want);
		assert_int_equal(k.cum, want + 1);
	}
	assert_int_equal(rel_tx_next_ctrl(tx, 200 * RTT, &k), 1);
	assert_int_equal(k.win_start, 19);
	assert_int_equal(k.cum, 22);
	assert_int_equal(rel_tx_next_ctrl(tx, 200 * RTT, &k), 0);
	rel_rx_destroy(rx);
	rel_tx_destroy(tx);
}

/*
 * An EC-NACK that lists submessages none of whose chunks went out yet: they are not lost,
 * and go out with their parity, not under SR (wire-format.md: "chunks or submessages not
 * sent yet are ignored"); a submessage that has begun is taken.
 */
static void
test_ec_nack_unsent(void **state)
{
	struct sdr_sim_cfg c;
	struct rel_tx *tx;
	struct rel_tx_unit u;
	struct sdr_ctrl cts = { .type = SDR_CTRL_CTS, .cum = 1, .win_start = 0 };
	struct sdr_ctrl nack = { .type = SDR_CTRL_EC_NACK, .nwords = 1 };
	uint32_t data = 0;

	(void)state;
	cfg_init(&c, SDR_SCHEME_EC_XOR, 4, 1, 16);	/* 4 submessages of 4 chunks */
	c.rel.rate_bps = 0;
	tx = rel_tx_create(&c.rel, &c.attr);
	assert_non_null(tx);
	assert_int_equal(rel_tx_submit(tx, c.msg_len, 7, 0), 0);
	cts.value = c.msg_len;
	rel_tx_on_ctrl(tx, &cts, 1);
	while (data < 5 && rel_tx_next(tx, 2, &u) == 1)	/* submessage 0 and 1 chunk of 1 */
		data += u.kind == REL_UNIT_DATA;
	assert_int_equal(data, 5);
	sdr_ctrl_win_set(&nack, 1);
	sdr_ctrl_win_set(&nack, 2);
	sdr_ctrl_win_set(&nack, 3);
	rel_tx_on_ctrl(tx, &nack, 3);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_EC_NACKS], 1);
	assert_int_equal(rel_tx_counters(tx)[REL_TX_FALLBACK_SUBS], 1);	/* 1, not 2 or 3 */
	rel_tx_destroy(tx);
}

/*
 * The sender's timers are sized from the connection: 8 messages of 64 MiB on 4 KiB chunks
 * in flight at once (131072 chunks, twice what a fixed 65536 entries held) all go out,
 * every chunk with its timer; an explicit timer_slots still holds.
 */
static void
test_timer_room(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx_unit u;
	struct rel_tx *tx;
	struct sdr_ctrl c = { .type = SDR_CTRL_CTS, .cum = 8, .win_start = 0,
			      .value = 64ull << 20 };
	uint64_t units = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	a.chunk_size = 4096;
	a.max_msg_size = 64ull << 20;
	a.max_inflight = 8;
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.rate_bps = 0;
	assert_int_equal(cfg.timer_slots, 0);
	for (int fixed = 0; fixed < 2; fixed++) {
		cfg.timer_slots = fixed ? 65536 : 0;
		tx = rel_tx_create(&cfg, &a);
		assert_non_null(tx);
		rel_tx_on_ctrl(tx, &c, 0);
		for (int i = 0; i < 8; i++)
			assert_true(rel_tx_submit(tx, 64ull << 20, (uint64_t)i, 0) >= 0);
		for (units = 0; rel_tx_next(tx, 1, &u) == 1; units++)
			;
		assert_int_equal(units, 8 * 16384);
		if (fixed)
			assert_int_equal(rel_tx_counters(tx)[REL_TX_TIMER_FULL], 8 * 16384 - 65536);
		else
			assert_int_equal(rel_tx_counters(tx)[REL_TX_TIMER_FULL], 0);
		rel_tx_destroy(tx);
	}
}

/*
 * Priorities: a large message at priority 0 is going out when a small one at priority 2
 * is submitted behind it; the small one's chunks go next, then the large one's
 * retransmission (first within its priority), then its new chunks. A retransmission of
 * the small one queued after one of the large one's goes first too. Unpaced, units in the
 * order rel_tx_next() gives.
 */
static void
test_priority(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_rel_cfg cfg;
	struct rel_tx_unit u;
	struct rel_tx *tx;
	struct sdr_ctrl c = { .type = SDR_CTRL_CTS, .cum = 8, .win_start = 0 };
	char order[256] = "";
	int big, small, n = 0;

	(void)state;
	sdr_conn_attr_default(&a);
	a.chunk_size = 4096;
	a.max_msg_size = 64 * 4096;
	sdr_rel_cfg_default(&cfg, RTT);
	cfg.rate_bps = 0;
	tx = rel_tx_create(&cfg, &a);
	c.value = 64 * 4096;
	rel_tx_on_ctrl(tx, &c, 0);		/* eight receives posted */
	big = rel_tx_submit(tx, 64 * 4096, 1, 0);
	assert_true(big >= 0);
	for (int i = 0; i < 4; i++) {		/* 4 of its 64 chunks go out */
		assert_int_equal(rel_tx_next(tx, 1, &u), 1);
		assert_int_equal(u.ctx, big);
	}
	small = rel_tx_submit(tx, 3 * 4096, 2, 1);
	assert_true(small >= 0);
	assert_int_equal(rel_tx_set_prio(tx, (uint32_t)small, 2), 0);
	assert_int_equal(rel_tx_set_prio(tx, (uint32_t)small, REL_TX_PRIO_MAX + 1), -EINVAL);
	assert_int_equal(rel_tx_set_prio(tx, 7, 1), -EINVAL);	/* no message there */
	assert_int_equal(rel_tx_set_prio(tx, (uint32_t)big, 1), -EBUSY);	/* started */
	/* a NACK of the large message's chunk 1: its resend waits for the small one's chunks
	 * (a low priority's retransmission must not hold up a high priority's data) */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_NACK, .msg_id = 0, .win_start = 1, .nwords = 1 };
	c.win[0] = 1u << 31;
	rel_tx_on_ctrl(tx, &c, RTT + 2);
	while (n < 12 && rel_tx_next(tx, RTT + 2, &u) == 1) {
		char b[16];

		snprintf(b, sizeof(b), "%s%c%u%s", n ? " " : "", u.ctx == (uint32_t)big ? 'L' : 'S',
			 u.index, u.retransmit ? "r" : "");
		strncat(order, b, sizeof(order) - strlen(order) - 1);
		n++;
	}
	assert_string_equal(order, "S0 S1 S2 L1r L4 L5 L6 L7 L8 L9 L10 L11");
	/* NACKs of the large one's chunk 2, then of the small one's chunk 1: the small one's
	 * resend goes first, then the large one's, then its new data (a round trip later:
	 * a chunk is resent at most once per RTT; no timer has expired yet) */
	c = (struct sdr_ctrl){ .type = SDR_CTRL_NACK, .msg_id = 0, .win_start = 2, .nwords = 1 };
	c.win[0] = 1u << 31;
	rel_tx_on_ctrl(tx, &c, 2 * RTT + 3);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_NACK, .msg_id = 1, .value = 1, .win_start = 1,
			       .nwords = 1 };
	c.win[0] = 1u << 31;
	rel_tx_on_ctrl(tx, &c, 2 * RTT + 3);
	order[0] = '\0';
	for (n = 0; n < 3 && rel_tx_next(tx, 2 * RTT + 3, &u) == 1; n++) {
		char b[16];

		snprintf(b, sizeof(b), "%s%c%u%s", n ? " " : "", u.ctx == (uint32_t)big ? 'L' : 'S',
			 u.index, u.retransmit ? "r" : "");
		strncat(order, b, sizeof(order) - strlen(order) - 1);
	}
	assert_string_equal(order, "S1r L2r L12");
	/* without the priority the small message waits for all 64 of the large one's */
	rel_tx_destroy(tx);
	tx = rel_tx_create(&cfg, &a);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_CTS, .cum = 8, .win_start = 0, .value = 64 * 4096 };
	rel_tx_on_ctrl(tx, &c, 0);
	big = rel_tx_submit(tx, 64 * 4096, 1, 0);
	small = rel_tx_submit(tx, 3 * 4096, 2, 0);
	for (n = 0; n < 64; n++) {
		assert_int_equal(rel_tx_next(tx, 1, &u), 1);
		assert_int_equal(u.ctx, big);
	}
	assert_int_equal(rel_tx_next(tx, 1, &u), 1);
	assert_int_equal(u.ctx, small);
	rel_tx_destroy(tx);
}

/*
 * Where each control message goes once the handshake took it: the one table every adapter
 * routes by (the endpoint, sdr-verbs-peer). A SKIP is for the receive side and its answer
 * for the send side; a WITHDRAW the other way round; every type is routed, and decoded
 * messages of every type and answer flag land where the table says.
 */
static void
test_ctrl_route(void **state)
{
	static const struct {
		uint8_t type;
		uint16_t flags;
		enum sdr_ctrl_route route;
	} want[] = {
		{ SDR_CTRL_ACK, 0, SDR_ROUTE_SEND },
		{ SDR_CTRL_ACK, SDR_CTRL_F_COMPLETE, SDR_ROUTE_SEND },
		{ SDR_CTRL_NACK, 0, SDR_ROUTE_SEND },
		{ SDR_CTRL_EC_NACK, 0, SDR_ROUTE_SEND },
		{ SDR_CTRL_CTS, 0, SDR_ROUTE_SEND },
		{ SDR_CTRL_SKIP, 0, SDR_ROUTE_SKIP },
		{ SDR_CTRL_SKIP, SDR_CTRL_F_ANSWER, SDR_ROUTE_SEND },
		{ SDR_CTRL_WITHDRAW, 0, SDR_ROUTE_SEND },
		{ SDR_CTRL_WITHDRAW, SDR_CTRL_F_ANSWER, SDR_ROUTE_WITHDRAWN },
		{ SDR_CTRL_SYNC, 0, SDR_ROUTE_SYNC },
		{ SDR_CTRL_SYNC, SDR_CTRL_F_ANSWER, SDR_ROUTE_SYNC_ANSWER },
		{ SDR_CTRL_HELLO, 0, SDR_ROUTE_HELLO },
		{ SDR_CTRL_HELLO, SDR_CTRL_F_ANSWER, SDR_ROUTE_HELLO },
		{ SDR_CTRL_REPORT, 0, SDR_ROUTE_REPORT },
		{ SDR_CTRL_SCHEME, 0, SDR_ROUTE_SCHEME },
		{ SDR_CTRL_SCHEME, SDR_CTRL_F_ANSWER | SDR_CTRL_F_REFUSED, SDR_ROUTE_SCHEME },
		{ SDR_CTRL_PATHS, 0, SDR_ROUTE_PATHS },
	};
	unsigned int seen[SDR_ROUTE_COUNT] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct sdr_ctrl c;

		memset(&c, 0, sizeof(c));
		c.type = want[i].type;
		c.flags = want[i].flags;
		if (sdr_ctrl_route(&c) != want[i].route)
			fail_msg("%s flags 0x%x: routed to %s, not %s", sdr_ctrl_type_name(c.type),
				 c.flags, sdr_ctrl_route_name(sdr_ctrl_route(&c)),
				 sdr_ctrl_route_name(want[i].route));
		seen[want[i].route]++;
	}
	/* every route is somewhere's, and every type (1 ... PATHS) is in the table above */
	for (unsigned int r = 0; r < SDR_ROUTE_COUNT; r++)
		assert_true(seen[r] > 0);
	for (uint8_t t = SDR_CTRL_ACK; t <= SDR_CTRL_PATHS; t++) {
		int found = 0;

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			found |= want[i].type == t;
		assert_true(found);
	}
	assert_string_equal(sdr_ctrl_route_name(SDR_ROUTE_COUNT), "invalid");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pacer),
		cmocka_unit_test(test_sr_no_loss),
		cmocka_unit_test(test_sr_last_chunk_lost),
		cmocka_unit_test(test_sr_final_ack_lost),
		cmocka_unit_test(test_sr_nack_middle_loss),
		cmocka_unit_test(test_sr_nack_zero_allowance),
		cmocka_unit_test(test_sr_nack_tail_loss),
		cmocka_unit_test(test_sr_nack_reorder_within_allowance),
		cmocka_unit_test(test_ec_no_loss),
		cmocka_unit_test(test_ec_one_loss_decoded),
		cmocka_unit_test(test_ec_short_last_submessage),
		cmocka_unit_test(test_ec_beyond_capacity_falls_back),
		cmocka_unit_test(test_ec_nack_lost_is_repeated),
		cmocka_unit_test(test_ec_total_loss_silence),
		cmocka_unit_test(test_ec_lost_final_ack_after_feedback),
		cmocka_unit_test(test_ec_xor_groups),
		cmocka_unit_test(test_ctrl_round_trip_and_rejects),
		cmocka_unit_test(test_no_cts_global_timeout),
		cmocka_unit_test(test_cancel_and_withdraw),
		cmocka_unit_test(test_rx_final_ack_after_repost),
		cmocka_unit_test(test_rx_skip_and_withdraw),
		cmocka_unit_test(test_skip_runs_apart),
		cmocka_unit_test(test_rx_done_before_decode),
		cmocka_unit_test(test_reset_era),
		cmocka_unit_test(test_rx_withdraw_given_up),
		cmocka_unit_test(test_path_rtt_and_rate),
		cmocka_unit_test(test_path_karn),
		cmocka_unit_test(test_rto_measured),
		cmocka_unit_test(test_rto_measured_receiver),
		cmocka_unit_test(test_rx_cts_backoff),
		cmocka_unit_test(test_rx_many_receives),
		cmocka_unit_test(test_cts_length),
		cmocka_unit_test(test_cts_length_before_submit),
		cmocka_unit_test(test_ec_nack_unsent),
		cmocka_unit_test(test_rx_nack_partial_drain),
		cmocka_unit_test(test_rx_touch_order),
		cmocka_unit_test(test_rx_decode_dropped_after_fto),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_timer_room),
		cmocka_unit_test(test_ctrl_route),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
