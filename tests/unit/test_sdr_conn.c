/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection attributes: every refusal names its reason; geometry; QPN layout; QPN table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "qpn_table.h"
#include "sdr_conn.h"

static void
test_defaults_geometry(void **state)
{
	struct sdr_conn_attr a;
	struct sdr_conn_geom g;

	(void)state;
	sdr_conn_attr_default(&a);
	assert_int_equal(sdr_conn_geometry(&a, &g), 0);
	assert_int_equal(g.mtu_shift, 12);
	assert_int_equal(g.pkts_per_chunk, 16);
	assert_int_equal(g.max_data_pkts, 2048);
	assert_int_equal(g.max_data_chunks, 128);
	assert_int_equal(g.max_parity_chunks, 0);
	assert_int_equal(g.nslots, 1024);
	assert_int_equal(g.ndata_qpns, 32);
	assert_int_equal(g.slot_span, 8u << 20);
	/* with EC 32,8 the parity region follows the largest message */
	a.ec_k = 32;
	a.ec_m = 8;
	assert_int_equal(sdr_conn_geometry(&a, &g), 0);
	assert_int_equal(g.max_parity_chunks, 32);
	assert_int_equal(g.parity_pkt_off, 2048);
	assert_int_equal(g.max_parity_pkts, 512);
	assert_int_equal(g.slot_span, (2048u + 512u) * 4096u);
	/* message and chunk counts */
	assert_int_equal(sdr_conn_msg_pkts(&g, 0), 1);
	assert_int_equal(sdr_conn_msg_pkts(&g, 4097), 2);
	assert_int_equal(sdr_conn_msg_chunks(&g, 65537), 2);
	assert_int_equal(sdr_conn_parity_chunks(33, 32, 8), 16);
	assert_int_equal(sdr_conn_va(&g, 3, 5), 3ull * g.slot_span + 5 * 4096);
	/* chunks of 16 KiB as the smallest a scheme change may bring: state sized for 4 times
	 * the chunks, the parity region unchanged (a smaller chunk never needs more packets) */
	assert_int_equal(g.max_units, 128);
	assert_int_equal(g.max_parity_units, 32);
	a.max_chunk_shift = 2;
	assert_int_equal(sdr_conn_geometry(&a, &g), 0);
	assert_int_equal(g.max_data_chunks, 128);
	assert_int_equal(g.max_units, 512);
	assert_int_equal(g.max_parity_chunks, 32);
	assert_int_equal(g.max_parity_pkts, 512);
	assert_int_equal(g.max_parity_units, 128);
	assert_int_equal(g.slot_span, (2048u + 512u) * 4096u);
	assert_int_equal(sdr_conn_shift_ppc(&g, 2), 4);
	assert_int_equal(sdr_conn_msg_chunks_at(&g, 65537, 2), 5);
	assert_int_equal(sdr_conn_msg_chunks_at(&g, 65537, 0), 2);
}

/* Apply refusal case i to a default attribute set; return the error it must give. */
static int
refusal_case(int i, struct sdr_conn_attr *a, const char **what)
{
	switch (i) {
	case 0: *what = "mtu 1000"; a->mtu = 1000; return SDR_CONN_E_MTU;
	case 1: *what = "mtu 8192"; a->mtu = 8192; return SDR_CONN_E_MTU;
	case 2: *what = "chunk 0"; a->chunk_size = 0; return SDR_CONN_E_CHUNK;
	case 3: *what = "chunk 5000"; a->chunk_size = 5000; return SDR_CONN_E_CHUNK;
	case 4: *what = "chunk 2048 pkts"; a->chunk_size = 4096u * 2048u; return SDR_CONN_E_CHUNK;
	case 5: *what = "split 10,18,5"; a->split.frag_bits = 5; return SDR_CONN_E_SPLIT;
	case 6: *what = "split 20,8,4"; a->split = (struct sdr_imm_split){ 20, 8, 4 };
		return SDR_CONN_E_SPLIT;
	case 7: *what = "channels 0"; a->channels = 0; return SDR_CONN_E_CHANNELS;
	case 8: *what = "channels 65"; a->channels = 65; return SDR_CONN_E_CHANNELS;
	case 9: *what = "generations 0"; a->generations = 0; return SDR_CONN_E_GENERATIONS;
	case 10: *what = "max msg 0"; a->max_msg_size = 0; return SDR_CONN_E_MAX_MSG;
	case 11: *what = "max msg 2GiB"; a->max_msg_size = 2ull << 30; return SDR_CONN_E_MAX_MSG;
	case 12: *what = "inflight 0"; a->max_inflight = 0; return SDR_CONN_E_INFLIGHT;
	case 13: *what = "inflight 1025"; a->max_inflight = 1025; return SDR_CONN_E_INFLIGHT;
	case 14: *what = "ec k only"; a->ec_k = 32; return SDR_CONN_E_EC;
	case 15: *what = "ec 250,10"; a->ec_k = 250; a->ec_m = 10; return SDR_CONN_E_EC;
	case 16: *what = "parity past offset field"; a->max_msg_size = 1ull << 30;
		a->ec_k = 4; a->ec_m = 1; return SDR_CONN_E_PARITY_FIT;
	case 17: *what = "dir 0"; a->dir = 0; return SDR_CONN_E_DIR;
	case 18: *what = "qpn 0"; a->local_qpn = 0; return SDR_CONN_E_QPN;
	case 19: *what = "qpn high"; a->remote_qpn = 0xFFFFF0; return SDR_CONN_E_QPN;
	case 20: *what = "chunk 64KiB >> 5"; a->max_chunk_shift = 5; return SDR_CONN_E_CHUNK_SHIFT;
	default: return -1;
	}
}

static void
test_every_refusal(void **state)
{
	(void)state;
	for (int i = 0;; i++) {
		struct sdr_conn_attr a;
		struct sdr_conn_geom g;
		const char *what = "";
		int want, got;

		memset(&g, 0x5A, sizeof(g));
		sdr_conn_attr_default(&a);
		want = refusal_case(i, &a, &what);
		if (want < 0)
			break;
		got = sdr_conn_geometry(&a, &g);
		if (got != -want)
			fail_msg("%s: got %d (%s), want %d", what, got, sdr_conn_strerror(got), -want);
		assert_int_equal(g.mtu_shift, 0x5A5A5A5A);	/* untouched */
		assert_string_not_equal(sdr_conn_strerror(-want), "ok");
	}
	assert_string_equal(sdr_conn_strerror(SDR_CONN_E_COUNT + 3), "unknown connection error");
}

static void
test_qpn_layout(void **state)
{
	struct sdr_conn_attr a;
	uint32_t ch = 99, gen = 99;

	(void)state;
	sdr_conn_attr_default(&a);
	a.channels = 3;
	a.generations = 2;
	assert_int_equal(sdr_conn_data_qpn(0x500, &a, 2, 1), 0x500 + 5);
	assert_int_equal(sdr_conn_ctrl_qpn(0x500, &a), 0x506);
	for (uint32_t g = 0; g < 2; g++) {
		for (uint32_t c = 0; c < 3; c++) {
			assert_int_equal(sdr_conn_qpn_decode(0x500, &a, sdr_conn_data_qpn(0x500, &a, c, g),
							     &ch, &gen), SDR_QPN_DATA);
			assert_int_equal(ch, c);
			assert_int_equal(gen, g);
		}
	}
	assert_int_equal(sdr_conn_qpn_decode(0x500, &a, 0x506, &ch, &gen), SDR_QPN_CTRL);
	assert_int_equal(sdr_conn_qpn_decode(0x500, &a, 0x507, &ch, &gen), SDR_QPN_FOREIGN);
	assert_int_equal(sdr_conn_qpn_decode(0x500, &a, 0x4FF, &ch, &gen), SDR_QPN_FOREIGN);
	/* sequence numbers to slot and generation, with wrap-around */
	a.split = (struct sdr_imm_split){ 4, 24, 4 };
	assert_int_equal(sdr_conn_seq_slot(&a, 17), 1);
	assert_int_equal(sdr_conn_seq_gen(&a, 17), 1);
	assert_int_equal(sdr_conn_seq_gen(&a, 33), 0);
}

static void
test_qpn_table(void **state)
{
	struct qpn_table *t = qpn_table_create(3);
	uint32_t conn, base;

	(void)state;
	assert_non_null(t);
	assert_int_equal(qpn_table_add(t, 0x200, 33, 7), 0);
	assert_int_equal(qpn_table_add(t, 0x100, 33, 5), 0);
	assert_int_equal(qpn_table_add(t, 0x120, 2, 6), -EEXIST);	/* overlaps 0x100.. */
	assert_int_equal(qpn_table_add(t, 0x1F0, 0x11, 6), -EEXIST);	/* runs into 0x200 */
	assert_int_equal(qpn_table_add(t, 0, 1, 6), -EINVAL);
	assert_int_equal(qpn_table_add(t, 0xFFFFFF, 2, 6), -EINVAL);
	assert_int_equal(qpn_table_add(t, 0x121, 0xDF, 6), 0);		/* exactly between */
	assert_int_equal(qpn_table_add(t, 0x900, 1, 8), -ENOSPC);
	assert_int_equal(qpn_table_lookup(t, 0x100, &conn, &base), 0);
	assert_int_equal(conn, 5);
	assert_int_equal(qpn_table_lookup(t, 0x120, &conn, &base), 0);
	assert_int_equal(conn, 5);
	assert_int_equal(base, 0x100);
	assert_int_equal(qpn_table_lookup(t, 0x121, &conn, &base), 0);
	assert_int_equal(conn, 6);
	assert_int_equal(qpn_table_lookup(t, 0x220, &conn, &base), 0);
	assert_int_equal(conn, 7);
	assert_int_equal(qpn_table_lookup(t, 0x221, &conn, &base), -ENOENT);
	assert_int_equal(qpn_table_lookup(t, 0xFF, &conn, &base), -ENOENT);
	assert_int_equal(qpn_table_del(t, 5), 0);
	assert_int_equal(qpn_table_del(t, 5), -ENOENT);
	assert_int_equal(qpn_table_lookup(t, 0x100, &conn, &base), -ENOENT);
	assert_int_equal(qpn_table_count(t), 2);
	qpn_table_destroy(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_geometry),
		cmocka_unit_test(test_every_refusal),
		cmocka_unit_test(test_qpn_layout),
		cmocka_unit_test(test_qpn_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
