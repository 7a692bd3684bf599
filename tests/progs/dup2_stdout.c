/* SPDX-License-Identifier: MIT */
/*
 * dup2_stdout FILE: stdout redirected by the program itself, dup2(open(FILE), 1), then 3 printf
 * and an fflush. The stream on descriptor 1 now writes FILE: its calls are FILE's stdio calls.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(dup2(fd, 1) == 1);
	CHECK(close(fd) == 0);
	for (int i = 0; i < 3; i++)
		printf("line %d\n", i);
	CHECK(fflush(stdout) == 0);
	return 0;
}
