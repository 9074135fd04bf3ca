/* SPDX-License-Identifier: BSD-3-Clause */
/* SDR immediate split validation and parsing. */
#include <errno.h>
#include <stdio.h>

#include "sdr_imm.h"

int
sdr_imm_split_check(const struct sdr_imm_split *s)
{
	if (s->id_bits < 1 || s->id_bits > 30 || s->off_bits < 1 || s->off_bits > 30 ||
	    s->frag_bits > 30)
		return -EINVAL;
	if (s->id_bits + s->off_bits + s->frag_bits != 32)
		return -EINVAL;
	return 0;
}

int
sdr_imm_split_parse(const char *str, struct sdr_imm_split *out)
{
	unsigned int a, b, c;
	struct sdr_imm_split s;
	int n = 0;

	if (sscanf(str, "%u,%u,%u%n", &a, &b, &c, &n) != 3 || str[n] != '\0')
		return -EINVAL;
	if (a > 255 || b > 255 || c > 255)
		return -EINVAL;
	s = (struct sdr_imm_split){ (uint8_t)a, (uint8_t)b, (uint8_t)c };
	if (sdr_imm_split_check(&s) != 0)
		return -EINVAL;
	*out = s;
	return 0;
}
