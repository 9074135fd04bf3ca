/* SPDX-License-Identifier: BSD-3-Clause */
/* libsdr-coll's reduction kernels and half-precision conversions (coll/coll_reduce.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "coll_reduce.h"
#include "sdr_sim.h"

static uint32_t
bits(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	return x;
}

/* Every binary16 value survives the trip through float; NaNs stay NaNs. */
static void
test_f16_round_trip(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = coll_f16_to_float((uint16_t)h);

		if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {
			assert_true(isnan(f));
			assert_true((coll_float_to_f16(f) & 0x7FFF) > 0x7C00);
		} else {
			assert_int_equal(coll_float_to_f16(f), h);
		}
	}
	/* known values: 1, -2, the largest, the smallest normal and subnormal */
	assert_true(coll_f16_to_float(0x3C00) == 1.0f);
	assert_true(coll_f16_to_float(0xC000) == -2.0f);
	assert_true(coll_f16_to_float(0x7BFF) == 65504.0f);
	assert_true(coll_f16_to_float(0x0400) == ldexpf(1, -14));
	assert_true(coll_f16_to_float(0x0001) == ldexpf(1, -24));
}

/* float -> binary16 rounds to nearest, ties to even; overflow is infinity. */
static void
test_f16_rounding(void **state)
{
	(void)state;
	assert_int_equal(coll_float_to_f16(1.0f + ldexpf(1, -11)), 0x3C00);	/* tie: even */
	assert_int_equal(coll_float_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3C02);	/* tie: even */
	assert_int_equal(coll_float_to_f16(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3C01);
	assert_int_equal(coll_float_to_f16(65519.0f), 0x7BFF);
	assert_int_equal(coll_float_to_f16(65520.0f), 0x7C00);		/* rounds up to inf */
	assert_int_equal(coll_float_to_f16(1e10f), 0x7C00);
	assert_int_equal(coll_float_to_f16(-1e10f), 0xFC00);
	assert_int_equal(coll_float_to_f16(ldexpf(1, -25)), 0x0000);	/* tie with 0: even */
	assert_int_equal(coll_float_to_f16(3 * ldexpf(1, -25)), 0x0002);	/* tie: even */
	assert_int_equal(coll_float_to_f16(ldexpf(1, -26)), 0x0000);
	assert_int_equal(coll_float_to_f16(-0.0f), 0x8000);
	/* the largest subnormal rounds up into the smallest normal */
	assert_int_equal(coll_float_to_f16(ldexpf(1, -14) - ldexpf(1, -26)), 0x0400);
}

static void
test_bf16(void **state)
{
	(void)state;
	for (uint32_t b = 0; b < 65536; b++) {
		float f = coll_bf16_to_float((uint16_t)b);

		if ((b & 0x7F80) == 0x7F80 && (b & 0x7F))
			assert_true(isnan(f) && isnan(coll_bf16_to_float(coll_float_to_bf16(f))));
		else
			assert_int_equal(coll_float_to_bf16(f), b);
	}
	assert_int_equal(coll_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3F80);		/* tie: even */
	assert_int_equal(coll_float_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3F82);	/* tie: even */
	assert_int_equal(coll_float_to_bf16(1.0f + ldexpf(1, -8) + ldexpf(1, -20)), 0x3F81);
	assert_int_equal(bits(coll_bf16_to_float(0x3F80)), 0x3F800000);
}

/* Each type and reduction against a scalar loop over random inputs, odd lengths included. */
static void
test_reduce(void **state)
{
	static int32_t a32[1001], b32[1001];
	static int64_t a64[1001], b64[1001];
	static float af[1001], bf[1001];
	static uint16_t ah[1001], bh[1001];
	struct sdr_rng r;

	(void)state;
	sdr_rng_seed(&r, 7);
	for (int op = 0; op < SDR_COLL_NOPS; op++) {
		for (int i = 0; i < 1001; i++) {
			a32[i] = (int32_t)sdr_rng_next(&r);
			b32[i] = (int32_t)sdr_rng_next(&r);
			a64[i] = (int64_t)sdr_rng_next(&r);
			b64[i] = (int64_t)sdr_rng_next(&r);
			af[i] = (float)((int)(sdr_rng_next(&r) % 2001) - 1000) / 8;
			bf[i] = (float)((int)(sdr_rng_next(&r) % 2001) - 1000) / 8;
			ah[i] = coll_float_to_f16(af[i]);
			bh[i] = coll_float_to_f16(bf[i]);
		}
		{
			int32_t w32[1001];
			int64_t w64[1001];
			float wf[1001];
			uint16_t wh[1001];

			for (int i = 0; i < 1001; i++) {
				w32[i] = op == SDR_COLL_SUM ? (int32_t)((uint32_t)a32[i] + (uint32_t)b32[i]) :
					 op == SDR_COLL_MAX ? (a32[i] > b32[i] ? a32[i] : b32[i]) :
					 (a32[i] < b32[i] ? a32[i] : b32[i]);
				w64[i] = op == SDR_COLL_SUM ? (int64_t)((uint64_t)a64[i] + (uint64_t)b64[i]) :
					 op == SDR_COLL_MAX ? (a64[i] > b64[i] ? a64[i] : b64[i]) :
					 (a64[i] < b64[i] ? a64[i] : b64[i]);
				wf[i] = op == SDR_COLL_SUM ? af[i] + bf[i] : op == SDR_COLL_MAX ?
					fmaxf(af[i], bf[i]) : fminf(af[i], bf[i]);
				/* the inputs are exact in binary16 and so is their sum (|x| <= 250,
				 * eighths) */
				wh[i] = coll_float_to_f16(wf[i]);
			}
			assert_int_equal(coll_reduce(a32, b32, 1001, SDR_COLL_I32, (enum sdr_coll_op)op), 0);
			assert_memory_equal(a32, w32, sizeof(w32));
			assert_int_equal(coll_reduce(a64, b64, 1001, SDR_COLL_I64, (enum sdr_coll_op)op), 0);
			assert_memory_equal(a64, w64, sizeof(w64));
			assert_int_equal(coll_reduce(af, bf, 1001, SDR_COLL_F32, (enum sdr_coll_op)op), 0);
			assert_memory_equal(af, wf, sizeof(wf));
			assert_int_equal(coll_reduce(ah, bh, 1001, SDR_COLL_F16, (enum sdr_coll_op)op), 0);
			assert_memory_equal(ah, wh, sizeof(wh));
		}
	}
	/* bfloat16 keeps 8 bits: 1 + 2^-8 is a tie that rounds to 1 */
	{
		uint16_t x = coll_float_to_bf16(1.0f), y = coll_float_to_bf16(ldexpf(1, -8));

		assert_int_equal(coll_reduce(&x, &y, 1, SDR_COLL_BF16, SDR_COLL_SUM), 0);
		assert_int_equal(x, 0x3F80);
	}
	assert_int_equal(coll_reduce(a32, b32, 1, SDR_COLL_NTYPES, SDR_COLL_SUM), -1);
	assert_int_equal(coll_reduce(a32, b32, 1, SDR_COLL_I32, SDR_COLL_NOPS), -1);
	assert_int_equal(coll_reduce(a32, b32, 0, SDR_COLL_F16, SDR_COLL_MAX), 0);
}

/*
 * The operand order: MAX and MIN pick by order between +0 and -0 (and a NaN), so the two
 * partners of a recursive-doubling step put the lower rank's vector first; the result is
 * then the same bits whichever of the two vectors is the destination.
 */
static void
test_reduce_ordered(void **state)
{
	(void)state;
	for (int op = 0; op < SDR_COLL_NOPS; op++) {
		float lo[4] = { 0.0f, -0.0f, 1.5f, -2.0f }, hi[4] = { -0.0f, 0.0f, 2.5f, -3.0f };
		float x[4], y[4];
		uint16_t hlo[4], hhi[4], hx[4], hy[4];

		/* rank lo holds lo and receives hi: dst = lo op hi */
		memcpy(x, lo, sizeof(x));
		assert_int_equal(coll_reduce_ordered(x, hi, 4, SDR_COLL_F32, (enum sdr_coll_op)op,
						     0), 0);
		/* rank hi holds hi and receives lo: dst = src op dst = lo op hi */
		memcpy(y, hi, sizeof(y));
		assert_int_equal(coll_reduce_ordered(y, lo, 4, SDR_COLL_F32, (enum sdr_coll_op)op,
						     1), 0);
		assert_memory_equal(x, y, sizeof(x));
		for (int i = 0; i < 4; i++) {
			hlo[i] = coll_float_to_f16(lo[i]);
			hhi[i] = coll_float_to_f16(hi[i]);
		}
		memcpy(hx, hlo, sizeof(hx));
		memcpy(hy, hhi, sizeof(hy));
		assert_int_equal(coll_reduce_ordered(hx, hhi, 4, SDR_COLL_F16, (enum sdr_coll_op)op,
						     0), 0);
		assert_int_equal(coll_reduce_ordered(hy, hlo, 4, SDR_COLL_F16, (enum sdr_coll_op)op,
						     1), 0);
		assert_memory_equal(hx, hy, sizeof(hx));
	}
	/* and the order is what makes it: the plain form gives the other zero here */
	{
		float a = 0.0f, b = -0.0f, a2 = -0.0f, b2 = 0.0f;

		assert_int_equal(coll_reduce(&a, &b, 1, SDR_COLL_F32, SDR_COLL_MAX), 0);
		assert_int_equal(coll_reduce(&a2, &b2, 1, SDR_COLL_F32, SDR_COLL_MAX), 0);
		assert_true(signbit(a) != signbit(a2));
	}
}

/* A NaN wins a max or a min whichever side it is on (a diverged rank's NaN is never lost,
 * whichever rank or algorithm meets it first): float, f16 and bf16. */
static void
test_nan_wins(void **state)
{
	(void)state;
	for (int op = SDR_COLL_MAX; op <= SDR_COLL_MIN; op++) {
		for (int first = 0; first < 2; first++) {
			float a[2] = { NAN, 1.0f }, b[2] = { 1.0f, NAN };
			uint16_t h[2] = { coll_float_to_f16(NAN), coll_float_to_f16(1.0f) },
				 g[2] = { coll_float_to_f16(1.0f), coll_float_to_f16(NAN) };
			uint16_t bh[2] = { coll_float_to_bf16(NAN), coll_float_to_bf16(1.0f) },
				 bg[2] = { coll_float_to_bf16(1.0f), coll_float_to_bf16(NAN) };

			assert_int_equal(coll_reduce_ordered(a, b, 2, SDR_COLL_F32,
							     (enum sdr_coll_op)op, first), 0);
			assert_true(isnan(a[0]) && isnan(a[1]));
			assert_int_equal(coll_reduce_ordered(h, g, 2, SDR_COLL_F16,
							     (enum sdr_coll_op)op, first), 0);
			assert_true(isnan(coll_f16_to_float(h[0])) && isnan(coll_f16_to_float(h[1])));
			assert_int_equal(coll_reduce_ordered(bh, bg, 2, SDR_COLL_BF16,
							     (enum sdr_coll_op)op, first), 0);
			assert_true(isnan(coll_bf16_to_float(bh[0])) &&
				    isnan(coll_bf16_to_float(bh[1])));
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_round_trip),
		cmocka_unit_test(test_f16_rounding),
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_reduce_ordered),
		cmocka_unit_test(test_nan_wins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
