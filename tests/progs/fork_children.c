/* SPDX-License-Identifier: MIT */
/*
 * Case "fork": the parent opens S and writes 10 B to it, then forks twice.
 *   child 1: opens B, writes 3 x 100 B to it, writes 2 x 50 B to the inherited S (at 10 and 60:
 *            it inherited the file position), closes both; fopen D "w", 3 x fwrite 5 B, fclose;
 *            exit(0).
 *   child 2: opens C, writes 7 B, _exit(0) without closing anything.
 * After both children the parent opens A, writes 4 x 1000 B, closes A and S, and prints
 * "PARENT CHILD1 CHILD2" (the pids) on stdout. Usage: fork_children S A B C D
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char buf[1000] __attribute__((aligned(64)));

static void writes(int fd, int n, size_t len, char c)
{
	memset(buf, c, len);
	for (int i = 0; i < n; i++)
		CHECK(write(fd, buf, len) == (ssize_t)len);
}

static void reap(pid_t pid)
{
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	CHECK(argc == 6);
	int s = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(s >= 0);
	writes(s, 1, 10, 'p');

	pid_t c1 = fork();
	CHECK(c1 >= 0);
	if (c1 == 0) {
		int b = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(b >= 0);
		writes(b, 3, 100, 'b');
		writes(s, 2, 50, 's');
		CHECK(close(b) == 0 && close(s) == 0);
		FILE *d = fopen(argv[5], "w");
		CHECK(d);
		memset(buf, 'd', 5);
		for (int i = 0; i < 3; i++)
			CHECK(fwrite(buf, 1, 5, d) == 5);
		CHECK(fclose(d) == 0);
		exit(0);
	}
	reap(c1);

	pid_t c2 = fork();
	CHECK(c2 >= 0);
	if (c2 == 0) {
		int c = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(c >= 0);
		writes(c, 1, 7, 'c');
		_exit(0);
	}
	reap(c2);

	int a = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(a >= 0);
	writes(a, 4, 1000, 'a');
	CHECK(close(a) == 0 && close(s) == 0);
	printf("%d %d %d\n", (int)getpid(), (int)c1, (int)c2);
	return 0;
}
