/* SPDX-License-Identifier: MIT */
/*
 * exit_blocked_reader OUT: a thread blocks in fgets on stdin (a pipe nobody writes) and so holds
 * stdin's lock, while the main thread fprintf's 3 lines to OUT (buffered) and returns from main.
 * glibc's exit flushes without taking stream locks, so the program exits at once; the capture
 * library's flush at exit must not wait for that lock either. Prints "ready" to stderr once the
 * reader is inside fgets (its /proc/self/task/TID/syscall names read).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static atomic_int reader_tid;

static void *reader(void *arg)
{
	(void)arg;
	char line[128];
	atomic_store(&reader_tid, (int)gettid());
	if (fgets(line, sizeof line, stdin))
		return NULL;
	return NULL;
}

/* 1 when thread tid is blocked in read(2) */
static int in_read(int tid)
{
	char p[64], s[64] = "";
	snprintf(p, sizeof p, "/proc/self/task/%d/syscall", tid);
	long fd = syscall(SYS_open, p, 0);
	if (fd < 0)
		return 0;
	long n = syscall(SYS_read, fd, s, sizeof s - 1);
	syscall(SYS_close, fd);
	long nr = -1;
	return n > 0 && sscanf(s, "%ld", &nr) == 1 && nr == SYS_read;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	FILE *out = fopen(argv[1], "w");
	CHECK(out);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
	struct timespec tick = {0, 1000 * 1000};
	while (!atomic_load(&reader_tid) || !in_read(atomic_load(&reader_tid)))
		nanosleep(&tick, NULL);
	fprintf(stderr, "ready\n");
	for (int i = 0; i < 3; i++)
		fprintf(out, "line %d\n", i);
	return 0; /* out is flushed by exit; the reader is still blocked */
}
