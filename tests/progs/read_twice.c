/*
 * Reads a file twice from start to end with read(2) in 64 KiB chunks, closing and reopening in
 * between: the page-cache test's workload (a cold first pass, a warm second one).
 * Usage: read_twice FILE; prints the bytes of each pass on stdout.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

static char buf[65536];

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	for (int pass = 0; pass < 2; pass++) {
		int fd = open(argv[1], O_RDONLY);
		CHECK(fd >= 0);
		long long total = 0;
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			total += n;
		CHECK(n == 0);
		CHECK(close(fd) == 0);
		printf("%lld\n", total);
	}
	return 0;
}
