/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program (the Makefile links *_static.c with -static) for the report's
 * kernel-only tests: no preload library can see it, so `iostrata report` must build its figures
 * from the kernel log's system calls. Usage: kr_static DIR.
 *
 * Exactly, as the system calls reach the kernel:
 *   DIR/out (this process): 37 write(2) of 100 B (3,700 B), one fsync, then 5 pread(2) of 740 B
 *     (3,700 B); one open, one close.
 *   DIR/child (a forked child, waited for): 11 write(2) of 10 B (110 B); one open, one close.
 * Nothing else is read or written through a file descriptor (no stdio).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define OUT_WRITES 37
#define OUT_SIZE 100
#define OUT_READS 5
#define CHILD_WRITES 11
#define CHILD_SIZE 10

int main(int argc, char **argv)
{
	char out[4096], child[4096], buf[OUT_WRITES * OUT_SIZE];
	CHECK(argc == 2);
	snprintf(out, sizeof out, "%s/out", argv[1]);
	snprintf(child, sizeof child, "%s/child", argv[1]);
	memset(buf, 'k', sizeof buf);

	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < OUT_WRITES; i++)
		CHECK(write(fd, buf, OUT_SIZE) == OUT_SIZE);
	CHECK(fsync(fd) == 0);
	const int chunk = OUT_WRITES * OUT_SIZE / OUT_READS;
	for (int i = 0; i < OUT_READS; i++)
		CHECK(pread(fd, buf, chunk, (off_t)i * chunk) == chunk);
	CHECK(close(fd) == 0);

	/* a child of a program the user layer cannot see: its own process in the report */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int cfd = open(child, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(cfd >= 0);
		for (int i = 0; i < CHILD_WRITES; i++)
			CHECK(write(cfd, buf, CHILD_SIZE) == CHILD_SIZE);
		CHECK(close(cfd) == 0);
		_exit(0);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return 0;
}
