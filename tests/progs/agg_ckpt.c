/* SPDX-License-Identifier: MIT */
/*
 * A checkpoint writer with seed 002's size mix: by count about 40% 64-511 B, 20% 512 B-4 KiB, 30%
 * 4-64 KiB, 9.2% 64-512 KiB, 0.8% 512 KiB-64 MiB (log-uniform in each band), written one after the
 * other with write(2) into one file, then fsync and close. The data is a function of (seed, offset),
 * so a file can be checked byte by byte without keeping a copy.
 *   agg_ckpt FILE SEED NWRITES [MODE]
 * MODE plain (default) | stdio (fwrite through a 1 MiB setvbuf buffer) | hold (after the last write
 * returns, write the pid to FILE.ready and wait to be killed, without fsync or close; the size of
 * every write that returned is appended to FILE.sizes as it returns).
 * Prints "writes N bytes B" on stdout.
 */
#include <fcntl.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "../../bench/ckpt_mix.h"

#include "check.h"

/* MODE term: two threads write FILE.0 and FILE.1 without end (the same data function); NWRITES
 * ms after both have written once, the main thread sends SIGTERM to the first writer thread,
 * which is then most likely inside the library's aggregation code: the signal must be deferred,
 * not deadlock. */
static const char *term_path;
static uint64_t term_seed;
static atomic_int term_started;
static void *term_writer(void *arg)
{
	char p[4096];
	snprintf(p, sizeof p, "%s.%d", term_path, (int)(intptr_t)arg);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	char *b = malloc(4194304);
	uint64_t off = 0, r = term_seed + (uint64_t)(intptr_t)arg;
	for (;;) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		size_t len = (size_t)(r >> 33) % ((r >> 20) % 10 == 0 ? 100000 : 3000) + 1;
		for (size_t k = 0; k < len; k++)
			b[k] = (char)(((off + k) * 131 + term_seed) >> 3);
		CHECK(write(fd, b, len) == (ssize_t)len);
		if (!off)
			atomic_fetch_add(&term_started, 1);
		off += len;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc >= 4);
	if (argc > 4 && !strcmp(argv[4], "term")) {
		term_path = argv[1];
		term_seed = strtoull(argv[2], NULL, 10);
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, term_writer, (void *)(intptr_t)i);
		while (atomic_load(&term_started) < 2)
			usleep(1000);
		usleep((useconds_t)atol(argv[3]) * 1000);
		pthread_kill(t[0], SIGTERM);
		pause();
		return 3; /* not reached: SIGTERM's default action */
	}
	const char *path = argv[1];
	uint64_t seed = strtoull(argv[2], NULL, 10);
	long n = atol(argv[3]);
	const char *mode = argc > 4 ? argv[4] : "plain";
	ckpt_rng = seed * 0x9E3779B97F4A7C15ull + 1;
	char *buf = malloc(CKPT_MAX_WRITE);
	CHECK(buf);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	FILE *fp = NULL;
	if (!strcmp(mode, "stdio")) {
		fp = fdopen(fd, "w");
		CHECK(fp && setvbuf(fp, NULL, _IOFBF, 1 << 20) == 0);
	}
	FILE *sizes = NULL;
	if (!strcmp(mode, "hold")) {
		char sp[4096];
		snprintf(sp, sizeof sp, "%s.sizes", path);
		sizes = fopen(sp, "w");
		CHECK(sizes && setvbuf(sizes, NULL, _IONBF, 0) == 0);
	}
	uint64_t off = 0;
	for (long i = 0; i < n; i++) {
		size_t len = ckpt_pick();
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)(((off + k) * 131 + seed) >> 3);
		if (fp) {
			CHECK(fwrite(buf, 1, len, fp) == len);
		} else {
			CHECK(write(fd, buf, len) == (ssize_t)len);
		}
		if (sizes)
			fprintf(sizes, "%zu\n", len);
		off += len;
	}
	if (!strcmp(mode, "hold")) {
		char rp[4096];
		snprintf(rp, sizeof rp, "%s.ready", path);
		FILE *r = fopen(rp, "w");
		CHECK(r);
		fprintf(r, "%d\n", (int)getpid());
		fclose(r);
		for (;;)
			pause();
	}
	if (fp) {
		CHECK(fflush(fp) == 0);
		CHECK(fsync(fd) == 0);
		CHECK(fclose(fp) == 0);
	} else {
		CHECK(fsync(fd) == 0);
		CHECK(close(fd) == 0);
	}
	printf("writes %ld bytes %llu\n", n, (unsigned long long)off);
	return 0;
}
