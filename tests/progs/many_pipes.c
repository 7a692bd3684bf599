/* SPDX-License-Identifier: MIT */
/*
 * many_pipes N FILE: N times pipe(), a 1-byte write and read through it, both ends closed (what a
 * shell loop of command substitutions does); then FILE opened, 10 bytes written, closed.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static char data[16] __attribute__((aligned(16))) = "0123456789";

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	int n = atoi(argv[1]);
	char c = 'x';
	for (int i = 0; i < n; i++) {
		int p[2];
		CHECK(pipe(p) == 0);
		CHECK(write(p[1], &c, 1) == 1 && read(p[0], &c, 1) == 1);
		CHECK(close(p[0]) == 0 && close(p[1]) == 0);
	}
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, data, 10) == 10 && close(fd) == 0);
	return 0;
}
