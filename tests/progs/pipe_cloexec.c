/* SPDX-License-Identifier: MIT */
/*
 * pipe_cloexec: pipe2(O_CLOEXEC) makes p, pipe() makes q; 100 bytes go into each. A forked child
 * execs this program again ("child P0 Q0"), where p's read end is gone (closed by the exec) and
 * q's read end, inherited, gives the 100 bytes. The parent reads p's 100 bytes itself, waits for
 * the child and closes what is left.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char buf[100];

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child")) {
		int p0 = atoi(argv[2]), q0 = atoi(argv[3]);
		CHECK(fcntl(p0, F_GETFD) == -1 && errno == EBADF);
		CHECK(read(q0, buf, sizeof buf) == (ssize_t)sizeof buf && buf[0] == 'q');
		CHECK(close(q0) == 0);
		return 0;
	}
	CHECK(argc == 1);
	int p[2], q[2];
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	CHECK(pipe(q) == 0);
	memset(buf, 'p', sizeof buf);
	CHECK(write(p[1], buf, sizeof buf) == (ssize_t)sizeof buf);
	memset(buf, 'q', sizeof buf);
	CHECK(write(q[1], buf, sizeof buf) == (ssize_t)sizeof buf);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		char a[16], b[16];
		snprintf(a, sizeof a, "%d", p[0]);
		snprintf(b, sizeof b, "%d", q[0]);
		CHECK(close(q[1]) == 0);
		execl("/proc/self/exe", "pipe_cloexec", "child", a, b, (char *)NULL);
		_exit(127);
	}
	CHECK(close(q[0]) == 0 && close(q[1]) == 0);
	CHECK(read(p[0], buf, sizeof buf) == (ssize_t)sizeof buf && buf[0] == 'p');
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
	return 0;
}
