/* SPDX-License-Identifier: MIT */
/*
 * Case "two descriptors": one file opened twice has two independent file positions but one
 * record. fd1 writes 3 x 4096 B at 0, 4096, 8192; fd2 writes 4096 B at 0, then reads 4096 B
 * at 4096 (fd1's second block); fd1 reads at its position 12288, the end of the file (0 B).
 * Usage: two_fds FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char wb[4096] __attribute__((aligned(4096)));
static char rb[4096] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd1 = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd1 >= 0);
	int fd2 = open(argv[1], O_RDWR);
	CHECK(fd2 >= 0);
	for (int i = 0; i < 3; i++) {
		memset(wb, '1' + i, sizeof wb);
		CHECK(write(fd1, wb, sizeof wb) == 4096);
	}
	memset(wb, 'x', sizeof wb);
	CHECK(write(fd2, wb, sizeof wb) == 4096);
	CHECK(read(fd2, rb, sizeof rb) == 4096);
	memset(wb, '2', sizeof wb);
	CHECK(memcmp(rb, wb, sizeof rb) == 0);
	CHECK(read(fd1, rb, sizeof rb) == 0);
	CHECK(close(fd1) == 0);
	CHECK(close(fd2) == 0);
	return 0;
}
