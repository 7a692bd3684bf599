/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program making exactly N pwrite64 calls of 4096 B (at offsets 0, 4096 ...)
 * between one open and one close, and no other traced system call (the pause is nanosleep): the
 * kernel layer's sampling test (tests/integration/kernel_sampling.sh) spreads them over several
 * of the default depth's sampling periods. Usage: pwrite_static FILE N [PAUSE_US].
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	char buf[4096];
	CHECK(argc == 3 || argc == 4);
	long n = atol(argv[2]);
	long pause_us = argc == 4 ? atol(argv[3]) : 0;
	struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
	memset(buf, 'x', sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (long i = 0; i < n; i++) {
		CHECK(pwrite(fd, buf, sizeof buf, i * (off_t)sizeof buf) == (ssize_t)sizeof buf);
		if (pause_us)
			nanosleep(&pause, NULL);
	}
	CHECK(close(fd) == 0);
	return 0;
}
