/* SPDX-License-Identifier: MIT */
/*
 * Case "overflow": creates N files DIR/f00000 ... in order, each with open, one 1-byte write
 * and close. Usage: many_files DIR N
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static char one[8] __attribute__((aligned(8))) = "x";

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	int n = atoi(argv[2]);
	char path[4096];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/f%05d", argv[1], i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0);
		CHECK(write(fd, one, 1) == 1);
		CHECK(close(fd) == 0);
	}
	return 0;
}
