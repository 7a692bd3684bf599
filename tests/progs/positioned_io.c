/* SPDX-License-Identifier: MIT */
/*
 * Case "positioned": pwrite/pread do not move the file position; readv/writev and
 * preadv2/pwritev2 with offset -1 use and move it; pwritev/preadv and the v2 calls with an
 * offset do not. Some offsets are not multiples of 4096 and two buffers are misaligned.
 * Every read is compared with an in-memory model of the file. The sequence (offsets in the
 * comments) is what tests/integration/capture_positioned.sh computes its expectations from.
 * Usage: positioned_io FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

#define FILE_END 20300
static char model[FILE_END + 4096]; /* what the file must hold */
static char wb[4096] __attribute__((aligned(4096)));
static char v0[100] __attribute__((aligned(64)));
static char v1[200] __attribute__((aligned(64)));
static char rb[4096 + 64] __attribute__((aligned(4096)));
static char r0[100] __attribute__((aligned(64)));
static char r1[200] __attribute__((aligned(64)));

static void fill(char *p, size_t n, char c, long off)
{
	memset(p, c, n);
	memcpy(model + off, p, n);
}

/* A two-element vector of 100 + 200 bytes written at off, remembered in the model. */
static struct iovec *wvec(char a, char b, long off)
{
	static struct iovec iov[2];
	fill(v0, sizeof v0, a, off);
	fill(v1, sizeof v1, b, off + (long)sizeof v0);
	iov[0] = (struct iovec){v0, sizeof v0};
	iov[1] = (struct iovec){v1, sizeof v1};
	return iov;
}

static struct iovec *rvec(void)
{
	static struct iovec iov[2];
	memset(r0, 0, sizeof r0);
	memset(r1, 0, sizeof r1);
	iov[0] = (struct iovec){r0, sizeof r0};
	iov[1] = (struct iovec){r1, sizeof r1};
	return iov;
}

static void check_rvec(long off)
{
	CHECK(memcmp(r0, model + off, sizeof r0) == 0);
	CHECK(memcmp(r1, model + off + sizeof r0, sizeof r1) == 0);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);

	/* W1 [8192, 12288) */
	fill(wb, 4096, 'P', 8192);
	CHECK(pwrite(fd, wb, 4096, 8192) == 4096);
	/* W2 [0, 4096): the position is still 0 */
	fill(wb, 4096, 'Q', 0);
	CHECK(write(fd, wb, 4096) == 4096);
	CHECK(lseek(fd, 0, SEEK_CUR) == 4096);
	/* W3 [4096, 8192) */
	fill(wb, 4096, 'R', 4096);
	CHECK(write(fd, wb, 4096) == 4096);
	/* W4 [12288, 12588) */
	CHECK(pwritev(fd, wvec('S', 'T', 12288), 2, 12288) == 300);
	/* W5 [8192, 8492): writev at the position */
	CHECK(writev(fd, wvec('U', 'V', 8192), 2) == 300);
	/* W6 [8492, 8792): pwritev2 with offset -1 is writev */
	CHECK(pwritev2(fd, wvec('W', 'X', 8492), 2, -1, 0) == 300);
	/* W7 [20000, 20300): pwritev2 with an offset leaves the position alone */
	CHECK(pwritev2(fd, wvec('Y', 'y', 20000), 2, 20000, 0) == 300);
	/* W8 [8792, 8892) from a misaligned buffer */
	fill(rb + 1, 100, 'Z', 8792);
	CHECK(write(fd, rb + 1, 100) == 100);
	CHECK(lseek(fd, 0, SEEK_CUR) == 8892);

	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	/* R1 [8192, 12288) */
	CHECK(pread(fd, rb, 4096, 8192) == 4096);
	CHECK(memcmp(rb, model + 8192, 4096) == 0);
	/* R2 [0, 4096): the position is still 0 */
	CHECK(read(fd, rb, 4096) == 4096);
	CHECK(memcmp(rb, model, 4096) == 0);
	/* R3 [4096, 4396) */
	CHECK(readv(fd, rvec(), 2) == 300);
	check_rvec(4096);
	/* R4 [12288, 12588) */
	CHECK(preadv(fd, rvec(), 2, 12288) == 300);
	check_rvec(12288);
	/* R5 [4396, 4696): preadv2 with offset -1 is readv */
	CHECK(preadv2(fd, rvec(), 2, -1, 0) == 300);
	check_rvec(4396);
	/* R6 [20000, 20300) */
	CHECK(preadv2(fd, rvec(), 2, 20000, 0) == 300);
	check_rvec(20000);
	/* R7 [4696, 4796) into a misaligned buffer */
	CHECK(read(fd, rb + 1, 100) == 100);
	CHECK(memcmp(rb + 1, model + 4696, 100) == 0);
	/* R8 at the end of the file: 0 bytes */
	CHECK(pread(fd, rb, 100, FILE_END) == 0);
	CHECK(lseek(fd, 0, SEEK_CUR) == 4796);
	CHECK(close(fd) == 0);
	return 0;
}
