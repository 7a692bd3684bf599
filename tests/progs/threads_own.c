/* SPDX-License-Identifier: MIT */
/*
 * Case "per-record ownership" (docs/OWNERSHIP.md): 8 threads, each on a file of its own
 * (DIR/own-T: N write() of 64 B, then N/2 pread() of 64 B from offset 0 up), and then one file
 * DIR/late on a shared descriptor that thread 0 writes alone at first while the others join
 * at staggered moments during its run (thread t once thread 0 has done t * N / 8 writes):
 * pwrite() of 64 B at offsets (t * N + i) * 64, so the record changes hands under load.
 * Usage: threads_own DIR N
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define NTHREADS 8
#define SIZE 64

static const char *dir;
static long n;
static int late_fd;
static long progress; /* thread 0's writes to DIR/late so far */
static pthread_barrier_t phase;

static void *worker(void *arg)
{
	long t = (long)arg;
	char buf[SIZE], path[4096];
	memset(buf, 'a' + (int)t, sizeof buf);
	snprintf(path, sizeof path, "%s/own-%ld", dir, t);
	pthread_barrier_wait(&phase);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (long i = 0; i < n; i++)
		CHECK(write(fd, buf, SIZE) == SIZE);
	for (long i = 0; i < n / 2; i++)
		CHECK(pread(fd, buf, SIZE, i * SIZE) == SIZE);
	CHECK(close(fd) == 0);

	pthread_barrier_wait(&phase);
	while (t && __atomic_load_n(&progress, __ATOMIC_ACQUIRE) < t * n / NTHREADS)
		;
	for (long i = 0; i < n; i++) {
		CHECK(pwrite(late_fd, buf, SIZE, (t * n + i) * SIZE) == SIZE);
		if (!t)
			__atomic_store_n(&progress, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	dir = argv[1];
	n = atol(argv[2]);
	CHECK(n >= 2);
	char path[4096];
	snprintf(path, sizeof path, "%s/late", dir);
	late_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(late_fd >= 0);
	CHECK(pthread_barrier_init(&phase, NULL, NTHREADS) == 0);
	pthread_t th[NTHREADS];
	for (long t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0);
	for (int t = 0; t < NTHREADS; t++)
		CHECK(pthread_join(th[t], NULL) == 0);
	CHECK(close(late_fd) == 0);
	return 0;
}
