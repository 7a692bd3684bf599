/*
 * COUNT writes of SIZE bytes with O_DSYNC (each one reaches the device before it returns): the
 * report test's small synced writer. dd does the same, but its aligned_alloc of an odd size trips
 * ASan when the sanitizer build preloads the runtime (make test-san). Usage: dsync_write FILE SIZE COUNT
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char buf[65536];

int main(int argc, char **argv)
{
	CHECK(argc == 4);
	size_t size = strtoul(argv[2], NULL, 0);
	long count = atol(argv[3]);
	CHECK(size <= sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC, 0644);
	CHECK(fd >= 0);
	for (long i = 0; i < count; i++)
		CHECK(write(fd, buf, size) == (ssize_t)size);
	CHECK(close(fd) == 0);
	return 0;
}
