/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection secrets (sdr_keys) and the handshake (sdr_peer) on their own: AES-CMAC against
 * the RFC 4493 vectors, R_Keys, and the handshake's state machine step by step (tentative and
 * proven tags, a forger's HELLO, a restart, an old epoch's late packets).
 */
#include <setjmp.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sdr_keys.h"
#include "sdr_peer.h"

static void
hex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* RFC 4493, section 4: AES-128 key 2b7e1516..., messages of 0, 16, 40 and 64 bytes. */
static void
test_cmac_rfc4493(void **state)
{
	static const char *msg =
		"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
	static const struct { size_t len; const char *mac; } v[] = {
		{ 0, "bb1d6929e95937287fa37d129b756746" },
		{ 16, "070a16b46b4d4144f79bdd9dd04a287c" },
		{ 40, "dfa66747de9ae63030ca32611497c827" },
		{ 64, "51f0bebf7e3b9d92fc49741779363cfe" },
	};
	uint8_t key[16], m[64], want[16], got[16];
	struct sdr_mac mac;

	(void)state;
	hex("2b7e151628aed2a6abf7158809cf4f3c", key, 16);
	hex(msg, m, 64);
	assert_int_equal(sdr_mac_init(&mac, key), 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex(v[i].mac, want, 16);
		assert_int_equal(sdr_mac_compute(&mac, m, v[i].len, got), 0);
		assert_memory_equal(got, want, 16);
		assert_true(sdr_mac_verify(&mac, m, v[i].len, want));
		want[15] ^= 1;
		assert_false(sdr_mac_verify(&mac, m, v[i].len, want));
	}
	sdr_mac_fini(&mac);
}

/* A secret as the configuration and sdr-verbs-peer take it: 32 hex digits, either case. */
static void
test_key_parse(void **state)
{
	static const uint8_t want[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
					  0x08, 0x09, 0x0a, 0x0b, 0xAC, 0xDE, 0xEF, 0xff };
	static const char *const bad[] = {
		"", "000102030405060708090a0bacdeefff0", "000102030405060708090a0bacdeeff",
		"000102030405060708090a0bacdeefgg", "0x0102030405060708090a0bacdeefff",
		" 00102030405060708090a0bacdeefff",
	};
	uint8_t key[16], keep[16];

	(void)state;
	assert_int_equal(sdr_key_parse("000102030405060708090a0bACdeEFff", key), 0);
	assert_memory_equal(key, want, 16);
	memset(keep, 0x5A, sizeof(keep));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(key, keep, sizeof(key));
		assert_int_equal(sdr_key_parse(bad[i], key), -EINVAL);
		assert_memory_equal(key, keep, 16);	/* untouched */
	}
}

static void
test_rkeys(void **state)
{
	static const uint8_t secret[16] = "a secret of 16 b";
	struct sdr_rkeys a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	uint32_t same = 0;

	(void)state;
	assert_int_equal(sdr_rkeys_get(&a, 5), 0);	/* not keyed */
	assert_int_equal(sdr_rkeys_set(&a, 0x1111, 0x2222, NULL), 0);
	assert_int_equal(sdr_rkeys_set(&b, 0x1111, 0x2222, NULL), 0);
	assert_int_equal(sdr_rkeys_set(&c, 0x1111, 0x2223, NULL), 0);	/* the peer restarted */
	assert_int_equal(sdr_rkeys_set(&d, 0x1111, 0x2222, secret), 0);
	for (uint64_t s = 0; s < 1000; s++) {
		uint32_t k = sdr_rkeys_get(&a, s);

		assert_int_not_equal(k, 0);
		assert_int_equal(k, sdr_rkeys_get(&b, s));		/* both sides agree */
		assert_int_equal(k, sdr_rkeys_get(&a, s + (1ull << 32) * 4)); /* low 32 bits */
		same += k == sdr_rkeys_get(&a, s + 1) || k == sdr_rkeys_get(&c, s) ||
			k == sdr_rkeys_get(&d, s);
	}
	assert_true(same <= 1);		/* 32-bit values: a collision is a 1 in 10^6 event */
	sdr_rkeys_fini(&a);
	sdr_rkeys_fini(&b);
	sdr_rkeys_fini(&c);
	sdr_rkeys_fini(&d);
	assert_true(sdr_tag_random() != 0 && sdr_tag_random() != sdr_tag_random());
}

#define RTO 1000

static struct sdr_ctrl
hello(uint64_t src, uint64_t dst, int answer)
{
	return (struct sdr_ctrl){ .type = SDR_CTRL_HELLO, .src_tag = src, .dst_tag = dst,
				  .flags = answer ? SDR_CTRL_F_ANSWER : 0 };
}

/* What @p p sends now: 0 nothing, else 1 and the message in @p c. */
static int
out(struct sdr_peer *p, uint64_t now, struct sdr_ctrl *c)
{
	return sdr_peer_next(p, now, c);
}

/* Two sides start together; a HELLO from a stranger, and old tags, later. */
static void
test_handshake_steps(void **state)
{
	struct sdr_peer a, b;
	struct sdr_ctrl c, d, ack = { .type = SDR_CTRL_ACK, .src_tag = 0xB };

	(void)state;
	sdr_peer_init(&a, 0xA, RTO);
	sdr_peer_init(&b, 0xB, RTO);
	assert_int_equal(out(&a, 0, &c), 1);	/* HELLO(A, 0) */
	assert_true(c.src_tag == 0xA && c.dst_tag == 0 && !(c.flags & SDR_CTRL_F_ANSWER));
	assert_int_equal(out(&a, 0, &d), 0);	/* once per RTO */
	assert_int_equal(sdr_peer_next_time(&a, 0), RTO);
	/* B: unproven HELLO, tentative, answered */
	assert_int_equal(sdr_peer_input(&b, &c, 1), SDR_PEER_HELLO);
	assert_true(b.peer == 0xA && !b.proven && !sdr_peer_ready(&b));
	/* a control message other than HELLO without our tag: dropped */
	ack.dst_tag = 0x77;
	assert_int_equal(sdr_peer_input(&a, &ack, 1), SDR_PEER_BAD_TAG);
	assert_int_equal(out(&b, 1, &d), 1);	/* the answer: HELLO+ANSWER(B, A) */
	assert_true(d.src_tag == 0xB && d.dst_tag == 0xA && (d.flags & SDR_CTRL_F_ANSWER));
	/* A: proven; it has not told B yet (its HELLO had dst 0): not done */
	assert_int_equal(sdr_peer_input(&a, &d, 2), SDR_PEER_HELLO);
	assert_true(a.peer == 0xB && a.proven && !sdr_peer_ready(&a));
	assert_int_equal(out(&a, 2, &c), 1);	/* at once: HELLO(A, B) */
	assert_true(c.dst_tag == 0xB && !(c.flags & SDR_CTRL_F_ANSWER));
	assert_int_equal(sdr_peer_input(&b, &c, 3), SDR_PEER_HELLO);
	assert_true(sdr_peer_ready(&b));	/* proven after it told A */
	assert_int_equal(out(&b, 3, &d), 1);	/* answers */
	assert_int_equal(sdr_peer_input(&a, &d, 4), SDR_PEER_HELLO);
	assert_true(sdr_peer_ready(&a));
	assert_int_equal(out(&a, 5 * RTO, &c), 0);	/* no more HELLOs */
	assert_int_equal(sdr_peer_next_time(&a, 5), UINT64_MAX);
	/* established: other messages with the tags are taken */
	ack.dst_tag = 0xA;
	assert_int_equal(sdr_peer_input(&a, &ack, 5), SDR_PEER_ACCEPT);
	/* a stranger's HELLO: answered once per RTO, nothing changes */
	c = hello(0x5EED, 0, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 10), SDR_PEER_HELLO);
	assert_int_equal(out(&a, 10, &d), 1);
	assert_true(d.dst_tag == 0x5EED && (d.flags & SDR_CTRL_F_ANSWER));
	assert_int_equal(sdr_peer_input(&a, &c, 11), SDR_PEER_HELLO);
	assert_int_equal(out(&a, 11, &d), 0);		/* rate-limited */
	assert_true(a.peer == 0xB && sdr_peer_ready(&a));
	/* the stranger, now knowing A's tag, is a restart (proven): the caller resets */
	c = hello(0x5EED, 0xA, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 12), SDR_PEER_RESTART);
	sdr_peer_restart(&a, 0x5EED, 0xA2, 12);
	assert_true(a.peer == 0x5EED && a.local == 0xA2 && !sdr_peer_ready(&a));
	/* the same message again: to our tag before, so it proves nothing now */
	assert_int_equal(sdr_peer_input(&a, &c, 12), SDR_PEER_HELLO);
	assert_int_equal(out(&a, 12, &d), 1);	/* our HELLO, with our new tag */
	assert_true(d.dst_tag == 0x5EED && d.src_tag == 0xA2 && !(d.flags & SDR_CTRL_F_ANSWER));
	/* B's late packets: an old epoch, not another restart */
	ack.src_tag = 0xB;
	assert_int_equal(sdr_peer_input(&a, &ack, 13), SDR_PEER_OLD_EPOCH);
	c = hello(0xB, 0, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 13), SDR_PEER_OLD_EPOCH);
	/* the new peer's, to our tag before it learned the new one: late, dropped */
	ack.src_tag = 0x5EED;
	assert_int_equal(sdr_peer_input(&a, &ack, 13), SDR_PEER_OLD_EPOCH);
	/* a proven message from the new peer after our HELLO told it: the handshake is done */
	ack.dst_tag = 0xA2;
	assert_int_equal(sdr_peer_input(&a, &ack, 14), SDR_PEER_ACCEPT);
	assert_true(sdr_peer_ready(&a));
}

static int
is_peer_tag_retired(const struct sdr_peer *p, uint64_t tag)
{
	for (uint32_t i = 0; i < SDR_PEER_RETIRED; i++)
		if (p->retired[i] == tag)
			return 1;
	return 0;
}

/* Bring @p a to ready with a peer of tag @p peer that knows a's tag (a proven HELLO). */
static void
ready_with(struct sdr_peer *a, uint64_t peer, uint64_t now)
{
	struct sdr_ctrl c, d;

	c = hello(peer, a->local, 0);
	if (sdr_peer_input(a, &c, now) == SDR_PEER_RESTART) {
		sdr_peer_restart(a, peer, a->local + 0x100, now);
		c.dst_tag = a->local;
		assert_int_equal(sdr_peer_input(a, &c, now), SDR_PEER_HELLO);
	}
	while (out(a, now, &d) == 1)
		;
	c = hello(peer, a->local, SDR_CTRL_F_ANSWER);
	assert_int_equal(sdr_peer_input(a, &c, now), SDR_PEER_HELLO);
	assert_true(sdr_peer_ready(a) && a->peer == peer);
}

/*
 * A message recorded in the peer's first epoch and replayed after more restarts than the
 * tags remembered (MAC and all, as a replay is) is not a restart: it would retire the real
 * peer's tag and lock it out. Our tag changed at each restart, so it proves nothing.
 */
static void
test_replay_old_epoch(void **state)
{
	struct sdr_peer a;
	struct sdr_ctrl old = { .type = SDR_CTRL_ACK, .src_tag = 0xB, .dst_tag = 0xA };
	struct sdr_ctrl now = { .type = SDR_CTRL_ACK };
	uint64_t peer = 0xB;

	(void)state;
	sdr_peer_init(&a, 0xA, RTO);
	ready_with(&a, peer, 1);
	assert_int_equal(sdr_peer_input(&a, &old, 2), SDR_PEER_ACCEPT);	/* recorded */
	for (uint32_t i = 0; i <= SDR_PEER_RETIRED; i++)	/* restarts: 0xB1 .. 0xB5 */
		ready_with(&a, ++peer + 0xA5, 10 * (i + 1));
	assert_false(is_peer_tag_retired(&a, 0xB));	/* forgotten */
	assert_int_not_equal(sdr_peer_input(&a, &old, 100), SDR_PEER_RESTART);
	old.type = SDR_CTRL_HELLO;
	assert_int_not_equal(sdr_peer_input(&a, &old, 100), SDR_PEER_RESTART);
	/* the real peer still gets through */
	now.src_tag = a.peer;
	now.dst_tag = a.local;
	assert_int_equal(sdr_peer_input(&a, &now, 101), SDR_PEER_ACCEPT);
	assert_true(sdr_peer_ready(&a));
}

/* A forged HELLO before the handshake is replaced by the genuine peer's next one. */
static void
test_tentative_forgery(void **state)
{
	struct sdr_peer a;
	struct sdr_ctrl c, d;

	(void)state;
	sdr_peer_init(&a, 0xA, RTO);
	c = hello(0xEE, 0, 0);			/* a forger first */
	assert_int_equal(sdr_peer_input(&a, &c, 0), SDR_PEER_HELLO);
	assert_true(a.peer == 0xEE);
	assert_int_equal(out(&a, 0, &d), 1);	/* the answer goes to the configured peer */
	c = hello(0xB, 0, 0);			/* the genuine peer's HELLO */
	assert_int_equal(sdr_peer_input(&a, &c, 1), SDR_PEER_HELLO);
	assert_true(a.peer == 0xB && !a.proven);
	while (out(&a, 1, &d))
		;
	c = hello(0xB, 0xA, 1);			/* its answer, proven */
	assert_int_equal(sdr_peer_input(&a, &c, 2), SDR_PEER_HELLO);
	assert_true(sdr_peer_ready(&a) && a.peer == 0xB);
	/* the forger, again: nothing moves */
	c = hello(0xEE, 0, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 3), SDR_PEER_HELLO);
	assert_true(sdr_peer_ready(&a) && a.peer == 0xB);
	/* a proven message other than a HELLO before we told the peer our knowledge of it:
	 * dropped (not ready), but it proves the peer */
	sdr_peer_init(&a, 0xA, RTO);
	c = (struct sdr_ctrl){ .type = SDR_CTRL_CTS, .src_tag = 0xB, .dst_tag = 0xA };
	assert_int_equal(sdr_peer_input(&a, &c, 0), SDR_PEER_NOT_READY);
	assert_true(a.peer == 0xB && a.proven && !sdr_peer_ready(&a));
	assert_int_equal(out(&a, 0, &d), 1);	/* tells it */
	assert_true(d.dst_tag == 0xB);
	assert_int_equal(sdr_peer_input(&a, &c, 1), SDR_PEER_ACCEPT);
	/* HELLOs back off: RTO, 2, 4, ... 64 RTO */
	sdr_peer_init(&a, 0xA, RTO);
	for (uint64_t t = 0, gap = RTO, i = 0; i < 9; i++) {
		assert_int_equal(out(&a, t, &d), 1);
		assert_int_equal(sdr_peer_next_time(&a, t), t + gap);
		t += gap;
		gap = gap < 64 * RTO ? 2 * gap : gap;
	}
}

/*
 * One of our own messages sent back to us (an on-path attacker, or a looped link): its MAC
 * is good, as the key is the same both ways. Our HELLO sent back was answered, and that
 * answer, addressed to our own tag, sent back too, was taken for a restart of a "peer" of
 * our tag: the real peer's tag retired, every message of it then dropped as old.
 */
static void
test_reflection(void **state)
{
	struct sdr_peer a;
	struct sdr_ctrl c, d, ack = { .type = SDR_CTRL_ACK, .src_tag = 0xB, .dst_tag = 0xA };

	(void)state;
	sdr_peer_init(&a, 0xA, RTO);
	ready_with(&a, 0xB, 1);
	c = hello(0xA, 0xB, 0);			/* our HELLO, back */
	assert_int_equal(sdr_peer_input(&a, &c, 2 * RTO), SDR_PEER_REFLECTED);
	assert_int_equal(out(&a, 2 * RTO, &d), 0);	/* not answered */
	c = hello(0xA, 0xA, 1);			/* the answer it would have had, back */
	assert_int_equal(sdr_peer_input(&a, &c, 2 * RTO), SDR_PEER_REFLECTED);
	ack.src_tag = 0xA;			/* any other message of ours */
	assert_int_equal(sdr_peer_input(&a, &ack, 2 * RTO), SDR_PEER_REFLECTED);
	assert_true(sdr_peer_ready(&a) && a.peer == 0xB && !is_peer_tag_retired(&a, 0xB));
	ack.src_tag = 0xB;			/* the peer still gets through */
	assert_int_equal(sdr_peer_input(&a, &ack, 2 * RTO), SDR_PEER_ACCEPT);
	/* after a restart (ours is 0xA2 now), messages of our tag before are ours too */
	c = hello(0xC, 0xA, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 3 * RTO), SDR_PEER_RESTART);
	sdr_peer_restart(&a, 0xC, 0xA2, 3 * RTO);
	c = hello(0xA, 0xC, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 4 * RTO), SDR_PEER_REFLECTED);
	c = hello(0xA2, 0xA2, 1);
	assert_int_equal(sdr_peer_input(&a, &c, 4 * RTO), SDR_PEER_REFLECTED);
	assert_true(a.peer == 0xC && a.local == 0xA2);
	/* before the handshake too: no tentative peer of our own tag */
	sdr_peer_init(&a, 0xA, RTO);
	c = hello(0xA, 0, 0);
	assert_int_equal(sdr_peer_input(&a, &c, 0), SDR_PEER_REFLECTED);
	assert_true(a.peer == 0);
}

/*
 * Before the handshake, HELLOs from ever new tags (forged: a blind sender spoofing the
 * peer's address) get one answer each, to the configured peer, and our own HELLOs keep
 * their backoff: one frame out per frame in, never two.
 */
static void
test_tentative_one_for_one(void **state)
{
	struct sdr_peer a;
	struct sdr_ctrl c, d;
	uint64_t t = 0;
	unsigned int sent = 0, hellos = 0;

	(void)state;
	sdr_peer_init(&a, 0xA, RTO);
	assert_int_equal(out(&a, 0, &d), 1);	/* our first HELLO; the next one at RTO */
	for (uint64_t i = 0; i < 100; i++, t += RTO / 100) {
		c = hello(0x1000 + i, 0, 0);
		assert_int_equal(sdr_peer_input(&a, &c, t), SDR_PEER_HELLO);
		while (out(&a, t, &d) == 1) {
			sent++;
			hellos += !(d.flags & SDR_CTRL_F_ANSWER);
		}
	}
	assert_int_equal(sent, 100);		/* the answers: none of our HELLOs was due */
	assert_int_equal(hellos, 0);
	assert_int_equal(out(&a, RTO, &d), 1);	/* the next one at its time, to the latest */
	assert_true(d.dst_tag == 0x1000 + 99 && !(d.flags & SDR_CTRL_F_ANSWER));
	/* our HELLOs backed off to 64 RTO (nobody there for long); a new tentative peer
	 * hears our next one within an RTO, in case the answer to its HELLO was lost */
	sdr_peer_init(&a, 0xA, RTO);
	for (t = 0; t < 200 * RTO; t = sdr_peer_next_time(&a, t))
		assert_int_equal(out(&a, t, &d), 1);
	assert_int_equal(out(&a, t, &d), 1);
	assert_int_equal(sdr_peer_next_time(&a, t) - t, 64 * RTO);
	c = hello(0xB, 0, 0);
	assert_int_equal(sdr_peer_input(&a, &c, t), SDR_PEER_HELLO);
	assert_int_equal(out(&a, t, &d), 1);	/* its answer */
	assert_true(d.dst_tag == 0xB && (d.flags & SDR_CTRL_F_ANSWER));
	assert_int_equal(out(&a, t, &d), 0);
	assert_int_equal(sdr_peer_next_time(&a, t), t + RTO);
	assert_int_equal(out(&a, t + RTO, &d), 1);
	assert_true(d.dst_tag == 0xB && !(d.flags & SDR_CTRL_F_ANSWER));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmac_rfc4493),
		cmocka_unit_test(test_key_parse),
		cmocka_unit_test(test_rkeys),
		cmocka_unit_test(test_handshake_steps),
		cmocka_unit_test(test_tentative_forgery),
		cmocka_unit_test(test_replay_old_epoch),
		cmocka_unit_test(test_reflection),
		cmocka_unit_test(test_tentative_one_for_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
