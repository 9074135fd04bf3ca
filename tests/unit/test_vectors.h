/* SPDX-License-Identifier: BSD-3-Clause */
/* Load tests/data/icrc_vectors.txt: "<ipv4|ipv6> <name> <hex frame>" per line. */
#ifndef SDR_TEST_VECTORS_H
#define SDR_TEST_VECTORS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MAX 64
#define VEC_FRAME_MAX 5000

struct vec {
	int ip_version;
	char name[64];
	uint8_t frame[VEC_FRAME_MAX];
	uint32_t len;
};

static struct vec vectors[VEC_MAX];
static int nvectors;

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int
load_vectors(const char *path)
{
	static char line[2 * VEC_FRAME_MAX + 128];
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "cannot open %s\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL && nvectors < VEC_MAX) {
		char ver[8], name[64], *hex;
		struct vec *v = &vectors[nvectors];

		if (line[0] == '#' || sscanf(line, "%7s %63s", ver, name) != 2)
			continue;
		hex = strrchr(line, ' ') + 1;
		v->ip_version = strcmp(ver, "ipv6") == 0 ? 6 : 4;
		snprintf(v->name, sizeof(v->name), "%s", name);
		v->len = 0;
		while (hexval(hex[0]) >= 0 && hexval(hex[1]) >= 0 && v->len < VEC_FRAME_MAX) {
			v->frame[v->len++] = (uint8_t)(hexval(hex[0]) << 4 | hexval(hex[1]));
			hex += 2;
		}
		nvectors++;
	}
	fclose(f);
	return nvectors > 0 ? 0 : -1;
}

#endif /* SDR_TEST_VECTORS_H */
