/* SPDX-License-Identifier: MIT */
/*
 * Case "basic": creat + close, then open O_RDWR, 10 x write 4096 B, lseek 0, 10 x read 4096 B
 * (each compared with what was written), one read at EOF returning 0, fsync, fstat, close, and a
 * stat() by path. Usage: basic_rw FILE. Exits 1 on any unexpected result.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char wbuf[4096] __attribute__((aligned(4096)));
static char rbuf[4096] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = creat(argv[1], 0644);
	CHECK(fd >= 0);
	CHECK(close(fd) == 0);

	fd = open(argv[1], O_RDWR);
	CHECK(fd >= 0);
	for (int i = 0; i < 10; i++) {
		memset(wbuf, 'a' + i, sizeof wbuf);
		CHECK(write(fd, wbuf, sizeof wbuf) == (ssize_t)sizeof wbuf);
	}
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	for (int i = 0; i < 10; i++) {
		CHECK(read(fd, rbuf, sizeof rbuf) == (ssize_t)sizeof rbuf);
		memset(wbuf, 'a' + i, sizeof wbuf);
		CHECK(memcmp(rbuf, wbuf, sizeof rbuf) == 0);
	}
	CHECK(read(fd, rbuf, sizeof rbuf) == 0);
	CHECK(fsync(fd) == 0);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	CHECK(st.st_size == 40960);
	CHECK(close(fd) == 0);
	CHECK(stat(argv[1], &st) == 0);
	CHECK(st.st_size == 40960);
	return 0;
}
