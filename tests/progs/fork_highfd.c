/* SPDX-License-Identifier: MIT */
/*
 * Case "fork-highfd": a descriptor far above every one the process opened, in a fork child and
 * through closefrom/close_range. The parent opens H, dup2s it to 900 and closes the original,
 * then forks: the child writes 33 B through 900, closes everything with close_range(3, ~0U, 0)
 * and _exits; the parent, once the child is reaped, writes 11 B through 900, dup2s 900 to 901,
 * closes them both with closefrom(3) and prints the child's pid. Usage: fork_highfd H
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	static char buf[64];
	memset(buf, 'h', sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && fd < 900);
	CHECK(dup2(fd, 900) == 900);
	CHECK(close(fd) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK(write(900, buf, 33) == 33);
		CHECK(close_range(3, ~0U, 0) == 0);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(write(900, buf, 11) == 11);
	CHECK(dup2(900, 901) == 901);
	closefrom(3);
	CHECK(fcntl(900, F_GETFD) < 0 && fcntl(901, F_GETFD) < 0);
	printf("%d\n", (int)pid);
	return 0;
}
