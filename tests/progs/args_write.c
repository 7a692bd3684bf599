/* SPDX-License-Identifier: MIT */
/*
 * args_write OUT ARG...: writes each ARG to OUT with one write(2) of its length, closes OUT, then
 * forks a child that exits at once (its log must carry the same command line as the parent's).
 * For command lines as long as the kernel allows (capture_args.sh).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc >= 2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);
		CHECK(write(fd, argv[i], n) == (ssize_t)n);
	}
	CHECK(close(fd) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0)
		_exit(0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}
