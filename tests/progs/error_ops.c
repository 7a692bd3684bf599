/* SPDX-License-Identifier: MIT */
/*
 * Case "errors": failing calls count as errors and the application sees exactly the errno the
 * call set; successful calls leave errno as it was. MISSING does not exist; RO holds >= 10 B;
 * WO exists. Usage: error_ops MISSING RO WO
 *   MISSING: open (ENOENT), stat (ENOENT), fopen "r" (ENOENT)
 *   RO:      open O_RDONLY, read 10 B, write (EBADF), lseek with a bad whence (EINVAL),
 *            pread at -1 (EINVAL), fstat, close, close again (EBADF: not our descriptor any more);
 *            fopen "r", fputc (EOF, EBADF, no system call), fclose
 *   WO:      open O_WRONLY, read (EBADF), close
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define SENTINEL 7777

static char buf[16] __attribute__((aligned(16)));

int main(int argc, char **argv)
{
	CHECK(argc == 4);
	struct stat st;

	errno = SENTINEL;
	CHECK(open(argv[1], O_RDONLY) == -1 && errno == ENOENT);
	errno = SENTINEL;
	CHECK(stat(argv[1], &st) == -1 && errno == ENOENT);
	errno = SENTINEL;
	CHECK(fopen(argv[1], "r") == NULL && errno == ENOENT);

	errno = SENTINEL;
	int fd = open(argv[2], O_RDONLY);
	CHECK(fd >= 0 && errno == SENTINEL);
	CHECK(read(fd, buf, 10) == 10 && errno == SENTINEL);
	CHECK(write(fd, buf, 10) == -1 && errno == EBADF);
	errno = SENTINEL;
	CHECK(lseek(fd, 0, 12345) == -1 && errno == EINVAL);
	errno = SENTINEL;
	CHECK(pread(fd, buf, 10, -1) == -1 && errno == EINVAL);
	errno = SENTINEL;
	CHECK(fstat(fd, &st) == 0 && errno == SENTINEL);
	CHECK(close(fd) == 0 && errno == SENTINEL);
	CHECK(close(fd) == -1 && errno == EBADF);

	errno = SENTINEL;
	FILE *f = fopen(argv[2], "r");
	CHECK(f && errno == SENTINEL);
	CHECK(fputc('x', f) == EOF && errno == EBADF && ferror(f));
	errno = SENTINEL;
	CHECK(fclose(f) == 0 && errno == SENTINEL);

	errno = SENTINEL;
	int wo = open(argv[3], O_WRONLY);
	CHECK(wo >= 0 && errno == SENTINEL);
	CHECK(read(wo, buf, 10) == -1 && errno == EBADF);
	errno = SENTINEL;
	CHECK(close(wo) == 0 && errno == SENTINEL);
	return 0;
}
