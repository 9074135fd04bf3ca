/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput once on each file named (a
 * directory: on each file in it), as libFuzzer does when given files, so the committed
 * regression inputs and the seed corpora replay on every build — under qemu-user in the
 * arm64 cross build, where libFuzzer's runtime is not at hand. A target's checks abort on a
 * violation, which fails the run. Prints how many inputs ran.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
/* A target's check over the whole replay (what its inputs reached): 0, or it failed. */
int fuzz_replay_check(unsigned long inputs) __attribute__((weak));

static unsigned long ran;

static int
one(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);	/* exactly n bytes are the input; +1 for n == 0 */
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: %s: cannot read it\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	ran++;
	return 0;
}

static int
walk(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return one(path);
	n = scandir(path, &names, NULL, alphasort);	/* a fixed order: failures repeat */
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			if (walk(sub) != 0)
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...  (run the fuzz target on each input)\n",
			argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		if (walk(argv[i]) != 0)
			rc = 1;
	printf("replay: %lu inputs ran\n", ran);
	if (fuzz_replay_check && fuzz_replay_check(ran) != 0) {
		fprintf(stderr, "replay: the inputs did not reach what the target is for\n");
		rc = 1;
	}
	return rc;
}
