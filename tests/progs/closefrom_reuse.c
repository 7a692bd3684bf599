/* SPDX-License-Identifier: MIT */
/*
 * closefrom_reuse DIR: opens DIR/f1, DIR/f2 and DIR/f3 (descriptors 3, 4, 5), writes a byte to
 * each, then closefrom(4), which closes f2 and f3 inside glibc. A pipe then gets 4 and 5: 10
 * bytes through it must not be counted on f2 or f3. Then close(3).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	char p[3][4096];
	int fd[3];
	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof p[i], "%s/f%d", argv[1], i + 1);
		fd[i] = open(p[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd[i] == 3 + i);
		CHECK(write(fd[i], "x", 1) == 1);
	}
	closefrom(4);
	int pp[2];
	CHECK(pipe(pp) == 0 && pp[0] == 4 && pp[1] == 5);
	char b[10] = "0123456789";
	CHECK(write(pp[1], b, 10) == 10);
	CHECK(read(pp[0], b, 10) == 10);
	CHECK(close(3) == 0);
	return 0;
}
