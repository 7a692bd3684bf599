/* SPDX-License-Identifier: MIT */
/*
 * errno_start: errno as main finds it (C: 0 at start-up), and in a child of fork made with errno
 * set to 42 (fork returns 0 there and leaves errno alone). Prints "main N" and "child N".
 */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void)
{
	int e = errno;
	printf("main %d\n", e);
	fflush(stdout);
	errno = 42;
	pid_t p = fork();
	if (p == 0) {
		e = errno;
		printf("child %d\n", e);
		fflush(stdout);
		_exit(0);
	}
	CHECK(p > 0 && waitpid(p, NULL, 0) == p);
	return 0;
}
