/* SPDX-License-Identifier: MIT */
/*
 * Case "append": FILE already holds 1000 bytes. Open it O_WRONLY|O_APPEND and write 10 x 100 B
 * (they land at 1000 ... 1900), close; open it O_RDWR|O_APPEND, lseek 0, read 100 B at 0 (the
 * original content), write 100 B (appended at 2000, not at the position 100), close.
 * Usage: append_write FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char buf[100] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	memset(buf, 'n', sizeof buf);
	for (int i = 0; i < 10; i++)
		CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	CHECK(close(fd) == 0);

	fd = open(argv[1], O_RDWR | O_APPEND);
	CHECK(fd >= 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(read(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	for (size_t i = 0; i < sizeof buf; i++)
		CHECK(buf[i] == 'o'); /* the script wrote 1000 x 'o' */
	memset(buf, 'm', sizeof buf);
	CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	CHECK(lseek(fd, 0, SEEK_CUR) == 2100);
	CHECK(close(fd) == 0);
	return 0;
}
