/* SPDX-License-Identifier: MIT */
/*
 * Case "dup": descriptors made by dup, dup2, fcntl(F_DUPFD) and dup3 share the file position
 * of the original, so writes through them continue where the previous one ended; closing the
 * original leaves the duplicates working; F_SETFL O_APPEND set through one duplicate applies
 * to all (the shared open file description). Usage: dup_offset FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char buf[1000] __attribute__((aligned(64)));

static void put(int fd, char c)
{
	memset(buf, c, sizeof buf);
	CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	put(fd, 'a'); /* [0, 1000) */
	int d1 = dup(fd);
	CHECK(d1 >= 0);
	put(d1, 'b'); /* [1000, 2000) */
	int d2 = dup2(fd, 50);
	CHECK(d2 == 50);
	put(d2, 'c'); /* [2000, 3000) */
	int d3 = fcntl(fd, F_DUPFD, 60);
	CHECK(d3 >= 60);
	put(d3, 'd'); /* [3000, 4000) */
	int d4 = dup3(fd, 70, O_CLOEXEC);
	CHECK(d4 == 70);
	put(d4, 'e'); /* [4000, 5000) */
	CHECK(close(fd) == 0);
	put(d1, 'f'); /* [5000, 6000): the duplicate outlives the original */
	CHECK(fcntl(d1, F_SETFL, O_APPEND) == 0);
	CHECK(lseek(d1, 0, SEEK_SET) == 0);
	put(d2, 'g'); /* appended: [6000, 7000) */
	CHECK(lseek(d3, 0, SEEK_CUR) == 7000);
	CHECK(fcntl(d4, F_GETFL) & O_APPEND);
	CHECK(close(d1) == 0 && close(d2) == 0 && close(d3) == 0 && close(d4) == 0);
	return 0;
}
