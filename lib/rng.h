/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The seedable random numbers of the simulator and the link emulator (xoshiro256**, seeded
 * through splitmix64), and the one Gilbert-Elliott step both take, so a burst phase means
 * the same in sdr-sim as on an emulated link.
 */
#ifndef SDR_RNG_H
#define SDR_RNG_H

#include <stdint.h>

/** A small, fast, seedable generator (xoshiro256**), exposed for tools and tests. */
struct sdr_rng {
	uint64_t s[4];
};

void sdr_rng_seed(struct sdr_rng *r, uint64_t seed);
uint64_t sdr_rng_next(struct sdr_rng *r);

/** Uniform double in [0, 1). */
static inline double
sdr_rng_unit(struct sdr_rng *r)
{
	return (double)(sdr_rng_next(r) >> 11) * 0x1.0p-53;
}

/** A Gilbert-Elliott loss model: per packet, good -> bad, bad -> good, and each state's loss. */
struct sdr_ge {
	double p_gb;
	double p_bg;
	double loss_good;
	double loss_bad;
};

/**
 * One packet through the chain: a step of the state in @p bad (0 good, 1 bad), then
 * whether the packet is lost in the state it is in. Two draws from @p r, always.
 * @return 1 lost, 0 delivered; 2 | the verdict when the step entered the bad state.
 */
static inline int
sdr_ge_step(struct sdr_rng *r, const struct sdr_ge *ge, int *bad)
{
	double u = sdr_rng_unit(r);
	int entered = 0;

	if (*bad) {
		if (u < ge->p_bg)
			*bad = 0;
	} else if (u < ge->p_gb) {
		*bad = 1;
		entered = 2;
	}
	return entered | (sdr_rng_unit(r) < (*bad ? ge->loss_bad : ge->loss_good));
}

#endif /* SDR_RNG_H */
