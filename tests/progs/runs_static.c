/* SPDX-License-Identifier: MIT */
/*
 * The cases that end a run of calls on one file (the kernel layer's default depth counts untimed
 * reads and writes per CPU in runs, src/kernel/kernel.h struct ks_run), each with known counts;
 * statically linked, so only the kernel layer sees it. Usage: runs_static DIR. In DIR:
 *   a  3 writes of 10 B, closed; then 2 writes through a read-only descriptor of it (EBADF)
 *   b  opened on a's descriptor number once a is closed: 9 writes of 20 B
 *   c  dup2'd onto b's descriptor in the middle of b's run: 6 writes of 40 B through it
 *   d  7 + 13 writes of 1 B by this process, 11 by a forked child on the same descriptor
 *   e  2 threads, each on a CPU of its own when there are two, 1000 writes of 8 B each on one
 *      shared descriptor
 *   f  150 writes of 100 B, the thread moved to another CPU after 50 and back after 100; then 30
 *      preads of 100 B at 0, 100 ... and 20 more at 3000 ... alternating with 20 writes of 100 B
 *      to g
 *   h  3 writes of 5 B, then the program execs itself, which writes 4 more through the same
 *      descriptor (one process, one record)
 *   i  13 writes of 1, 2, 4 ... 4096 B: one in each size bucket 1 to 13
 *   j  5 writes of 100 B, 3 of 10 B, 4 of 100 B, 2 of 0 B: a run whose size changes and comes
 *      back (the run counts the calls of its last size apart until the size changes)
 * It prints nothing and exits 0 when every call did what it should.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "runs.h"

static char buf[4096];
static int fd_e;

static int ncpu(void)
{
	cpu_set_t s;
	CHECK(sched_getaffinity(0, sizeof s, &s) == 0);
	return CPU_COUNT(&s);
}

static void writes(int fd, int n, size_t size)
{
	for (int i = 0; i < n; i++)
		CHECK(write(fd, buf, size) == (ssize_t)size);
}

static void *worker(void *arg)
{
	pin((int)(long)arg);
	writes(fd_e, 1000, 8);
	return NULL;
}

int main(int argc, char **argv)
{
	memset(buf, 'r', sizeof buf);
	if (argc == 3 && !strcmp(argv[1], "exec-tail")) { /* h, after the exec */
		writes(atoi(argv[2]), 4, 5);
		return 0;
	}
	CHECK(argc == 2);
	const char *dir = argv[1];
	int w = O_WRONLY | O_CREAT | O_TRUNC;

	int fa = open_in(dir, "a", w);
	writes(fa, 3, 10);
	CHECK(close(fa) == 0);
	int fb = open_in(dir, "b", w);
	CHECK(fb == fa); /* the same descriptor number, another file */
	writes(fb, 5, 20);
	int ra = open_in(dir, "a", O_RDONLY);
	for (int i = 0; i < 2; i++)
		CHECK(write(ra, buf, 10) < 0 && errno == EBADF);
	CHECK(close(ra) == 0);
	writes(fb, 4, 20);
	int fc = open_in(dir, "c", w);
	CHECK(dup2(fc, fb) == fb); /* b closed by dup2: fb is c now */
	writes(fb, 6, 40);
	CHECK(close(fc) == 0 && close(fb) == 0);

	int fd = open_in(dir, "d", w);
	writes(fd, 7, 1);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		writes(fd, 11, 1);
		_exit(0);
	}
	int st;
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	writes(fd, 13, 1);
	CHECK(close(fd) == 0);

	fd_e = open_in(dir, "e", w);
	pthread_t th[2];
	for (long t = 0; t < 2; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0);
	for (int t = 0; t < 2; t++)
		CHECK(pthread_join(th[t], NULL) == 0);
	CHECK(close(fd_e) == 0);

	int ff = open_in(dir, "f", O_RDWR | O_CREAT | O_TRUNC);
	pin(0);
	writes(ff, 50, 100);
	pin(ncpu() > 1 ? 1 : 0);
	writes(ff, 50, 100);
	pin(0);
	writes(ff, 50, 100);
	for (int i = 0; i < 30; i++)
		CHECK(pread(ff, buf, 100, (off_t)i * 100) == 100);
	int fg = open_in(dir, "g", w);
	for (int i = 0; i < 20; i++) {
		CHECK(pread(ff, buf, 100, (off_t)(30 + i) * 100) == 100);
		CHECK(write(fg, buf, 100) == 100);
	}
	CHECK(close(ff) == 0 && close(fg) == 0);

	int fi = open_in(dir, "i", w);
	for (int b = 0; b <= 12; b++)
		writes(fi, 1, (size_t)1 << b);
	CHECK(close(fi) == 0);

	int fj = open_in(dir, "j", w);
	writes(fj, 5, 100);
	writes(fj, 3, 10);
	writes(fj, 4, 100);
	writes(fj, 2, 0);
	CHECK(close(fj) == 0);

	int fh = open_in(dir, "h", w);
	writes(fh, 3, 5);
	char num[16];
	snprintf(num, sizeof num, "%d", fh);
	execl("/proc/self/exe", argv[0], "exec-tail", num, (char *)NULL);
	CHECK(!"exec");
	return 1;
}
