/* SPDX-License-Identifier: MIT */
/*
 * sci_delay DIR: the SCI test's workload (seed 004, section 4.3.1). Three threads:
 *   A writes 64 x 4 KiB to DIR/a.dat (never waits on anyone);
 *   B writes 64 x 4 KiB into the FIFO DIR/fifo; the pipe holds 16 of them, so its 17th write
 *     waits until R drains the pipe;
 *   R opens the FIFO, waits until the pipe is full and B is inside its 17th write (its
 *     /proc/self/task/TID/syscall names write), sleeps 200 ms, then reads it to the end.
 * So one of B's writes lasts at least 200 ms inside the call, however the threads are scheduled:
 * B's score is high, A's is not.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static char dir[3000];
static atomic_int b_tid;

static void *writer_a(void *arg)
{
	(void)arg;
	char p[4096], buf[4096];
	memset(buf, 'a', sizeof buf);
	snprintf(p, sizeof p, "%s/a.dat", dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < 64; i++)
		CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	CHECK(close(fd) == 0);
	return NULL;
}

static void *writer_b(void *arg)
{
	(void)arg;
	char p[4096], buf[4096];
	memset(buf, 'b', sizeof buf);
	snprintf(p, sizeof p, "%s/fifo", dir);
	atomic_store(&b_tid, (int)gettid());
	int fd = open(p, O_WRONLY);
	CHECK(fd >= 0);
	for (int i = 0; i < 64; i++)
		CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	CHECK(close(fd) == 0);
	return NULL;
}

/* 1 when the pipe holds 16 writes and thread tid is blocked in write(2). */
static int b_blocked(int fd, int tid)
{
	int queued = 0;
	CHECK(ioctl(fd, FIONREAD, &queued) == 0);
	if (queued < 16 * 4096)
		return 0;
	char p[64], s[64] = "";
	snprintf(p, sizeof p, "/proc/self/task/%d/syscall", tid);
	FILE *f = fopen(p, "r");
	CHECK(f);
	int got = fgets(s, sizeof s, f) != NULL;
	fclose(f);
	long nr = -1;
	return got && sscanf(s, "%ld", &nr) == 1 && nr == SYS_write;
}

static void *reader(void *arg)
{
	(void)arg;
	char p[4096], buf[4096];
	snprintf(p, sizeof p, "%s/fifo", dir);
	int fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	struct timespec tick = {0, 1000 * 1000}, ts = {0, 200 * 1000 * 1000};
	while (!b_blocked(fd, atomic_load(&b_tid)))
		nanosleep(&tick, NULL);
	nanosleep(&ts, NULL);
	long total = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		total += r;
	CHECK(r == 0 && total == 64 * 4096);
	CHECK(close(fd) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	snprintf(dir, sizeof dir, "%s", argv[1]);
	char p[4096];
	snprintf(p, sizeof p, "%s/fifo", dir);
	unlink(p);
	CHECK(mkfifo(p, 0600) == 0);
	pthread_t a, b, r;
	CHECK(pthread_create(&r, NULL, reader, NULL) == 0);
	CHECK(pthread_create(&b, NULL, writer_b, NULL) == 0);
	CHECK(pthread_create(&a, NULL, writer_a, NULL) == 0);
	CHECK(pthread_join(a, NULL) == 0 && pthread_join(b, NULL) == 0 && pthread_join(r, NULL) == 0);
	return 0;
}
