/* SPDX-License-Identifier: MIT */
/*
 * Case "stdio append": FILE already holds 1000 bytes. fopen "a", 10 x fwrite 10 B (stream
 * positions 1000 ... 1090), ftell (1100), fclose. Usage: stdio_append FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char buf[16] __attribute__((aligned(16))) = "0123456789";

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	FILE *f = fopen(argv[1], "a");
	CHECK(f);
	for (int i = 0; i < 10; i++)
		CHECK(fwrite(buf, 1, 10, f) == 10);
	CHECK(ftell(f) == 1100);
	CHECK(fclose(f) == 0);
	return 0;
}
