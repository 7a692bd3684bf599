/* SPDX-License-Identifier: MIT */
/* totals_steps DIR THREADS SECONDS READY: a live process for daemon_totals.sh. Each of THREADS
 * threads makes its files DIR/tN.dat (POSIX) and DIR/tN.txt (stdio) and, every 100 ms for SECONDS
 * seconds, writes 64 + N bytes and reads 32 back with pwrite/pread, writes a line with fprintf and
 * fflush, and stats its file; READY is created once every thread has opened its files (no
 * record is made after it). Then it ends normally (its final log). Exit 1 on a failed call. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *dir;
static int seconds;
static pthread_barrier_t opened;

static void *run(void *arg)
{
	int n = (int)(long)arg;
	char p[4096], b[256] = {0};
	snprintf(p, sizeof p, "%s/t%d.dat", dir, n);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	snprintf(p, sizeof p, "%s/t%d.txt", dir, n);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	pthread_barrier_wait(&opened);
	pthread_barrier_wait(&opened);
	struct timespec d = {0, 100 * 1000 * 1000};
	struct stat st;
	for (int i = 0; i < seconds * 10; i++) {
		CHECK(pwrite(fd, b, 64 + (size_t)n, 0) == 64 + n);
		CHECK(pread(fd, b, 32, 0) == 32);
		CHECK(fprintf(f, "step %d of thread %d\n", i, n) > 0);
		CHECK(fflush(f) == 0);
		CHECK(fstat(fd, &st) == 0);
		nanosleep(&d, NULL);
	}
	CHECK(fclose(f) == 0);
	CHECK(close(fd) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 5);
	dir = argv[1];
	int nt = atoi(argv[2]);
	seconds = atoi(argv[3]);
	CHECK(nt > 0 && nt <= 64 && seconds > 0);
	pthread_t t[64];
	CHECK(pthread_barrier_init(&opened, NULL, (unsigned)nt + 1) == 0);
	for (long i = 0; i < nt; i++)
		CHECK(pthread_create(&t[i], NULL, run, (void *)i) == 0);
	pthread_barrier_wait(&opened);
	int r = open(argv[4], O_WRONLY | O_CREAT, 0600);
	CHECK(r >= 0);
	CHECK(close(r) == 0);
	pthread_barrier_wait(&opened);
	for (int i = 0; i < nt; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	return 0;
}
