/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program making exactly N pwrite64 calls of 4096 B (at offsets 0, 4096 ...)
 * between one open and one close, and no other traced system call: the kernel layer's sampling
 * test (tests/integration/kernel_sampling.sh) pins it to one CPU, where the default depth then
 * times exactly N / 64 of the writes. Usage: pwrite_static FILE N.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	char buf[4096];
	CHECK(argc == 3);
	long n = atol(argv[2]);
	memset(buf, 'x', sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (long i = 0; i < n; i++)
		CHECK(pwrite(fd, buf, sizeof buf, i * (off_t)sizeof buf) == (ssize_t)sizeof buf);
	CHECK(close(fd) == 0);
	return 0;
}
