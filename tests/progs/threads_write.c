/* SPDX-License-Identifier: MIT */
/*
 * Case "threads": 4 threads x 1000 writes of 100 B each, to three files at once:
 *   FILE1 with pwrite at distinct offsets (thread t, write i at (t * 1000 + i) * 100);
 *   FILE2 with write() on one shared descriptor (the kernel serializes them);
 *   FILE3 with fwrite on one shared FILE (stdio's lock serializes them);
 * and then each thread opens FILE4 "r+" as a FILE of its own and fputc's 10000 bytes into it:
 * stdio calls that touch only memory, so the updates of the one record of FILE4 collide often.
 * Usage: threads_write FILE1 FILE2 FILE3 FILE4
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define NTHREADS 4
#define NWRITES 1000
#define SIZE 100

static int fd1, fd2;
static FILE *fp3;
static const char *path4;
static char bufs[NTHREADS][128] __attribute__((aligned(64)));

static void *worker(void *arg)
{
	long t = (long)arg;
	char *b = bufs[t];
	memset(b, 'A' + (int)t, SIZE);
	for (int i = 0; i < NWRITES; i++) {
		CHECK(pwrite(fd1, b, SIZE, ((off_t)t * NWRITES + i) * SIZE) == SIZE);
		CHECK(write(fd2, b, SIZE) == SIZE);
		CHECK(fwrite(b, 1, SIZE, fp3) == SIZE);
	}
	return NULL;
}

static void *putter(void *arg)
{
	FILE *f = fopen(path4, "r+");
	CHECK(f);
	for (int i = 0; i < 10000; i++)
		CHECK(fputc('a' + (int)(long)arg, f) == 'a' + (int)(long)arg);
	CHECK(fclose(f) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 5);
	fd1 = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fd2 = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fp3 = fopen(argv[3], "w");
	CHECK(fd1 >= 0 && fd2 >= 0 && fp3);
	pthread_t th[NTHREADS];
	for (long t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0);
	for (int t = 0; t < NTHREADS; t++)
		CHECK(pthread_join(th[t], NULL) == 0);
	CHECK(close(fd1) == 0 && close(fd2) == 0 && fclose(fp3) == 0);

	path4 = argv[4];
	int fd4 = open(path4, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd4 >= 0 && close(fd4) == 0);
	for (long t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&th[t], NULL, putter, (void *)t) == 0);
	for (int t = 0; t < NTHREADS; t++)
		CHECK(pthread_join(th[t], NULL) == 0);
	return 0;
}
