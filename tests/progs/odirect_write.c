/*
 * N writes of 4096 bytes with O_DIRECT (an aligned buffer), then fsync and close: the block
 * layer's test workload. Usage: odirect_write FILE N
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	int n = atoi(argv[2]);
	void *buf;
	CHECK(posix_memalign(&buf, 4096, 4096) == 0);
	memset(buf, 'd', 4096);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < n; i++)
		CHECK(write(fd, buf, 4096) == 4096);
	CHECK(fsync(fd) == 0);
	CHECK(close(fd) == 0);
	return 0;
}
