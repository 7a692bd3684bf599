/* SPDX-License-Identifier: MIT */
/* A workload of every kind the user layers count, for test_totals (the live file's per-thread
 * totals against its records): POSIX reads and writes of every form, stdio, metadata calls,
 * failed calls, a pipe (a pseudo file), /proc (an excluded path), a file aggregated when the
 * caller sets IOSTRATA_AGGREGATE, NTHREADS threads at once (more than the TOTALS section has
 * slots) and a fork child. It stops itself (SIGSTOP) twice: mid-way, with its fork child stopped
 * too, and at its end, before exit; the test reads the live files then. Usage: totals_work DIR */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define NTHREADS 70

static const char *dir;

static void posix_io(int k)
{
	char p[4096], q[4200], buf[8192];
	snprintf(p, sizeof p, "%s/p%d.dat", dir, k);
	snprintf(q, sizeof q, "%s.moved", p);
	memset(buf, 'x', sizeof buf);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	for (int i = 0; i < 5 + k % 7; i++)
		CHECK(write(fd, buf, 64 + (size_t)i * 100) > 0);
	CHECK(pwrite(fd, buf, 4096, 8192) == 4096);
	struct iovec iov[2] = {{buf, 10}, {buf + 10, 3000}};
	CHECK(writev(fd, iov, 2) == 3010);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(read(fd, buf, 100) == 100);
	CHECK(pread(fd, buf, 1000, 50) == 1000);
	CHECK(readv(fd, iov, 2) == 3010);
	CHECK(read(fd, buf, 0) == 0);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	CHECK(fsync(fd) == 0);
	CHECK(ftruncate(fd, 5000) == 0);
	int d = dup(fd);
	CHECK(d >= 0);
	CHECK(close(d) == 0);
	CHECK(close(fd) == 0);
	CHECK(stat(p, &st) == 0);
	CHECK(rename(p, q) == 0);
	CHECK(unlink(q) == 0);
	/* failed calls: a missing file, a read on a write-only descriptor, a stat of nothing */
	CHECK(open(q, O_RDONLY) < 0);
	CHECK(stat(q, &st) < 0);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, 10) < 0);
	CHECK(write(fd, buf, 7) == 7);
	CHECK(close(fd) == 0);
	CHECK(unlink(p) == 0);
	/* a pipe (a pseudo file) and /proc (not counted) */
	int pp[2];
	CHECK(pipe(pp) == 0);
	CHECK(write(pp[1], buf, 33) == 33);
	CHECK(read(pp[0], buf, 33) == 33);
	close(pp[0]);
	close(pp[1]);
	fd = open("/proc/self/stat", O_RDONLY);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, sizeof buf) > 0);
	close(fd);
}

static void stdio_io(int k)
{
	char p[4096], line[256];
	snprintf(p, sizeof p, "%s/s%d.txt", dir, k);
	FILE *f = fopen(p, "w+");
	CHECK(f != NULL);
	for (int i = 0; i < 20 + k; i++)
		CHECK(fprintf(f, "line %d of thread %d\n", i, k) > 0);
	CHECK(fwrite("0123456789", 1, 10, f) == 10);
	CHECK(fputc('\n', f) == '\n');
	CHECK(fflush(f) == 0);
	CHECK(fseek(f, 0, SEEK_SET) == 0);
	int n = 0;
	while (fgets(line, sizeof line, f))
		n++;
	CHECK(n == 21 + k);
	rewind(f);
	char b[64];
	CHECK(fread(b, 1, sizeof b, f) == sizeof b);
	CHECK(fclose(f) == 0);
	CHECK(fopen("/nonexistent/x", "r") == NULL);
	CHECK(unlink(p) == 0);
}

/* the aggregated file (IOSTRATA_AGGREGATE names it): many small writes */
static void agg_io(void)
{
	char p[4096], buf[100];
	snprintf(p, sizeof p, "%s/agg.out", dir);
	memset(buf, 'a', sizeof buf);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	for (int i = 0; i < 300; i++)
		CHECK(write(fd, buf, 1 + i % 100) > 0);
	CHECK(close(fd) == 0);
}

static pthread_barrier_t bar;

static void *thread_main(void *arg)
{
	int k = (int)(long)arg;
	pthread_barrier_wait(&bar);
	posix_io(k);
	stdio_io(k);
	return NULL;
}

static void stop_self(void)
{
	CHECK(raise(SIGSTOP) == 0);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	dir = argv[1];
	posix_io(1000);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		posix_io(2000);
		stdio_io(2000);
		stop_self();
		_exit(0);
	}
	int st;
	CHECK(waitpid(c, &st, WUNTRACED) == c && WIFSTOPPED(st));
	agg_io();
	stdio_io(1000);
	stop_self(); /* mid-way: this process and its fork child stopped */
	CHECK(kill(c, SIGCONT) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pthread_t t[NTHREADS];
	CHECK(pthread_barrier_init(&bar, NULL, NTHREADS) == 0);
	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, thread_main, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	agg_io();
	stop_self(); /* the end, before exit: its live file is read then */
	return 0;
}
