/* SPDX-License-Identifier: MIT */
/*
 * agg_zombie FILE: a writer that dies while copying a ring entry and stays a zombie, because its
 * parent is busy writing the file back. Run under `iostrata run --aggregate` with
 * IOSTRATA_AGG_TEST_STALL_FILL=FILE.stall:2222 (tests/integration/agg_kill.sh):
 *   the parent writes 3000 bytes at 0 (a ring entry) and forks; the child writes 2222 bytes at
 *   3000 and stops inside the copy (the hook writes its pid to FILE.stall); the parent SIGKILLs
 *   it, waits until /proc shows it a zombie, and only then fsyncs and closes the file, which
 *   drains the ring past the child's unfinished entry. Then it reaps the child.
 * Prints "fsync: R", "close: R", "child: signalled S". The child's write never returned, so the
 * file must hold the parent's 3000 bytes and nothing else.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* the state letter of /proc/PID/stat, read with raw system calls (not through the library) */
static char state_of(pid_t pid)
{
	char p[64], b[512];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
	if (fd < 0)
		return '?';
	long n = syscall(SYS_read, fd, b, sizeof b - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return '?';
	b[n] = 0;
	const char *q = strrchr(b, ')');
	return q && q[1] == ' ' ? q[2] : '?';
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	static char a[3000], c[2222];
	memset(a, 'p', sizeof a);
	memset(c, 'c', sizeof c);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, a, sizeof a) == (ssize_t)sizeof a);
	char stall[4096];
	snprintf(stall, sizeof stall, "%s.stall", argv[1]);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		int cf = open(argv[1], O_WRONLY);
		CHECK(cf >= 0);
		CHECK(pwrite(cf, c, sizeof c, sizeof a) == (ssize_t)sizeof c); /* stops inside */
		_exit(3);
	}
	struct timespec tick = {0, 10 * 1000 * 1000};
	for (int i = 0; i < 6000 && access(stall, F_OK) != 0; i++)
		nanosleep(&tick, NULL);
	CHECK(access(stall, F_OK) == 0);
	CHECK(kill(child, SIGKILL) == 0);
	for (int i = 0; i < 6000 && state_of(child) != 'Z'; i++)
		nanosleep(&tick, NULL);
	CHECK(state_of(child) == 'Z');
	int r = fsync(fd);
	printf("fsync: %d\n", r);
	r = close(fd);
	printf("close: %d\n", r);
	int st = 0;
	CHECK(waitpid(child, &st, 0) == child);
	printf("child: signalled %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 0;
}
