/* SPDX-License-Identifier: MIT */
/*
 * Case "stdio fwrite": fopen "w", N x fwrite of 10 B, fclose; then fopen "r", fread it back in
 * 10 B pieces (compared with what was written) up to EOF, fclose.
 *   stdio_fwrite buf FILE     N = 1000 with stdio's default buffer
 *   stdio_fwrite nobuf FILE   N = 100 after setvbuf(_IONBF) on both streams
 * Usage: stdio_fwrite buf|nobuf FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char buf[16] __attribute__((aligned(16)));

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	int nobuf = !strcmp(argv[1], "nobuf");
	int n = nobuf ? 100 : 1000;
	FILE *f = fopen(argv[2], "w");
	CHECK(f);
	if (nobuf)
		CHECK(setvbuf(f, NULL, _IONBF, 0) == 0);
	for (int i = 0; i < n; i++) {
		memset(buf, 'a' + i % 26, 10);
		CHECK(fwrite(buf, 1, 10, f) == 10);
	}
	CHECK(fclose(f) == 0);

	f = fopen(argv[2], "r");
	CHECK(f);
	if (nobuf)
		CHECK(setvbuf(f, NULL, _IONBF, 0) == 0);
	for (int i = 0; i < n; i++) {
		CHECK(fread(buf, 1, 10, f) == 10);
		for (int k = 0; k < 10; k++)
			CHECK(buf[k] == 'a' + i % 26);
	}
	CHECK(fread(buf, 1, 10, f) == 0 && feof(f));
	CHECK(fclose(f) == 0);
	return 0;
}
