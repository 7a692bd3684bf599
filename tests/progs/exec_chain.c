/* SPDX-License-Identifier: MIT */
/*
 * Case "exec": every process image appends one 2-byte write ("N\n") to FILE, then:
 *   exec_chain N FILE       (N > 0) execs itself as "exec_chain N-1 FILE": N + 1 images, 1 pid;
 *   exec_chain vfork FILE   vforks a child that execs "exec_chain 0 FILE"; writes after it ends;
 *   exec_chain spawn FILE   the same with posix_spawn.
 * Usage: exec_chain N|vfork|spawn FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

extern char **environ;

static void append_line(const char *path, char c)
{
	char line[8] __attribute__((aligned(8))) = {c, '\n'};
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, line, 2) == 2);
	CHECK(close(fd) == 0);
}

static void reap(pid_t pid)
{
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	char *child[] = {argv[0], "0", argv[2], NULL};
	if (!strcmp(argv[1], "vfork")) {
		append_line(argv[2], 'v');
		pid_t pid = vfork();
		CHECK(pid >= 0);
		if (pid == 0) {
			execv(argv[0], child);
			_exit(127);
		}
		reap(pid);
		append_line(argv[2], 'w');
		return 0;
	}
	if (!strcmp(argv[1], "spawn")) {
		append_line(argv[2], 's');
		pid_t pid;
		CHECK(posix_spawn(&pid, argv[0], NULL, NULL, child, environ) == 0);
		reap(pid);
		append_line(argv[2], 't');
		return 0;
	}
	int n = atoi(argv[1]);
	append_line(argv[2], (char)('0' + n));
	if (n > 0) {
		char next[16];
		snprintf(next, sizeof next, "%d", n - 1);
		char *args[] = {argv[0], next, argv[2], NULL};
		execv(argv[0], args);
		CHECK(!"execv failed");
	}
	return 0;
}
