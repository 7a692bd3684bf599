/* SPDX-License-Identifier: MIT */
/*
 * trace_pattern FILE MODE N [THREADS] [READY]: N writes of 4 KiB to FILE in a known pattern, for
 * the trace tests.
 *   seq     write() N times: one run
 *   gap     pwrite at 0, 4K ... skipping one 4 KiB block after every 10th write: N/10 runs
 *   random  pwrite at (xorshift % 1000) * 4 KiB; every offset is printed to stdout, one per line
 *   mixed   per step: write 4 KiB, then read 100 B back with pread: 2N entries, no runs
 *   threads THREADS threads, each seq-writing N blocks to FILE.<t>: one run per thread
 *   hold    seq writes, then READY gets our pid and we wait for a SIGKILL (the run stays open)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char buf[4096];
static int n;
static const char *file;

static void *thread_main(void *arg)
{
	char path[4096];
	snprintf(path, sizeof path, "%s.%d", file, (int)(intptr_t)arg);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < n; i++)
		CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	CHECK(close(fd) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc >= 4);
	file = argv[1];
	const char *mode = argv[2];
	n = atoi(argv[3]);
	memset(buf, 't', sizeof buf);
	if (!strcmp(mode, "threads")) {
		int k = argc > 4 ? atoi(argv[4]) : 2;
		pthread_t th[64];
		CHECK(k > 0 && k <= 64);
		for (int t = 0; t < k; t++)
			CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0);
		for (int t = 0; t < k; t++)
			CHECK(pthread_join(th[t], NULL) == 0);
		return 0;
	}
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	uint32_t x = 2463534242u;
	off_t off = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(mode, "seq") || !strcmp(mode, "hold")) {
			CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
		} else if (!strcmp(mode, "gap")) {
			CHECK(pwrite(fd, buf, sizeof buf, off) == (ssize_t)sizeof buf);
			off += 4096;
			if (i % 10 == 9)
				off += 4096;
		} else if (!strcmp(mode, "random")) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			off = (off_t)(x % 1000) * 4096;
			CHECK(pwrite(fd, buf, sizeof buf, off) == (ssize_t)sizeof buf);
			printf("%lld\n", (long long)off);
		} else if (!strcmp(mode, "mixed")) {
			CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
			CHECK(pread(fd, buf, 100, off) == 100);
			off += 4096;
		} else {
			fprintf(stderr, "unknown mode %s\n", mode);
			return 2;
		}
	}
	if (!strcmp(mode, "hold")) {
		CHECK(argc > 5);
		char pid[32];
		int k = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
		int r = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(r >= 0 && write(r, pid, (size_t)k) == k && close(r) == 0);
		for (;;)
			pause();
	}
	CHECK(close(fd) == 0);
	return 0;
}
