/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint writer of the aggregation benchmark (bench/aggregate): seed 002's size mix (by count
 * about 40% 64-511 B, 20% 512 B-4 KiB, 30% 4-64 KiB, 9.2% 64-512 KiB, 0.8% 512 KiB-64 MiB, log-uniform
 * in each band), written one after the other into one file.
 *   aggregate FILE SEED NWRITES plain|stdio|large:T app|durable
 * plain: write(2) per record; stdio: fwrite through a 1 MiB setvbuf buffer; large:T (T in bytes, K
 * or M suffix): only the records of T bytes or more, each pwrite(2) at its offset, the others
 * skipped (the file has holes): the floor of any scheme that writes records >= T directly and
 * makes the others free, so no aggregation at threshold T can be faster. app: the writes and
 * close (the time the application waits for its checkpoint); durable: the writes, fsync and close
 * (the time until the data is durable). Prints one line:
 *   ns BYTES_NS syscw WRITE_SYSCALLS maxrss_kb KB bytes BYTES
 * where syscw is the process's write-family system calls from /proc/self/io (ours included).
 */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_mix.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long long syscw(void)
{
	char b[1024];
	int fd = open("/proc/self/io", O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	char *p = strstr(b, "syscw:");
	return p ? strtoull(p + 6, NULL, 10) : 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: aggregate FILE SEED NWRITES plain|stdio|large:T app|durable\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[2], NULL, 10);
	long n = atol(argv[3]);
	int use_stdio = !strcmp(argv[4], "stdio"), durable = !strcmp(argv[5], "durable");
	size_t large = 0;
	if (!strncmp(argv[4], "large:", 6)) {
		char *end;
		large = strtoull(argv[4] + 6, &end, 10);
		large <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
		end += *end == 'K' || *end == 'M';
		if (!large || *end) {
			fprintf(stderr, "aggregate: large:T wants a size (bytes, K or M), not '%s'\n", argv[4] + 6);
			return 2;
		}
	} else if (!use_stdio && strcmp(argv[4], "plain")) {
		fprintf(stderr, "aggregate: the mode is plain, stdio or large:T, not '%s'\n", argv[4]);
		return 2;
	}
	ckpt_rng = seed * 0x9E3779B97F4A7C15ull + 1;
	size_t *len = malloc((size_t)n * sizeof *len);
	char *buf = malloc(CKPT_MAX_WRITE + 4096);
	if (!len || !buf)
		return 1;
	for (long i = 0; i < n; i++)
		len[i] = ckpt_pick();
	for (size_t k = 0; k < CKPT_MAX_WRITE + 4096; k++)
		buf[k] = (char)(k * 131 + seed);
	unsigned long long w0 = syscw();
	uint64_t t0 = now_ns(), bytes = 0;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	FILE *fp = NULL;
	if (use_stdio) {
		fp = fdopen(fd, "w");
		if (!fp || setvbuf(fp, NULL, _IOFBF, 1 << 20))
			return 1;
	}
	for (long i = 0; i < n; i++) {
		const char *p = buf + (i * 4099) % 4096;
		if (large) {
			if (len[i] >= large && pwrite(fd, p, len[i], (off_t)bytes) != (ssize_t)len[i])
				return 1;
		} else if (fp ? fwrite(p, 1, len[i], fp) != len[i] : write(fd, p, len[i]) != (ssize_t)len[i]) {
			return 1;
		}
		bytes += len[i];
	}
	if (fp && fflush(fp))
		return 1;
	if (durable && fsync(fd))
		return 1;
	if (fp ? fclose(fp) : close(fd))
		return 1;
	uint64_t t1 = now_ns();
	unsigned long long w1 = syscw();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("ns %llu syscw %llu maxrss_kb %ld bytes %llu\n", (unsigned long long)(t1 - t0), w1 - w0, ru.ru_maxrss,
	       (unsigned long long)bytes);
	return 0;
}
