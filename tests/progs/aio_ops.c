/* SPDX-License-Identifier: MIT */
/*
 * Case "aio": collected with aio_return, in this order:
 *   W1 aio_write 4096 B at 0 (aio_suspend until done), R1 aio_read 4096 B at 0,
 *   lio_listio(LIO_WAIT) of W2 4096 B at 4096, W3 4096 B at 8192, R2 1000 B at 1000,
 *   R3 2000 B at 2000 (the reads do not overlap the writes of the same batch),
 *   then an aio_write on a read-only descriptor of the same file, which fails with EBADF.
 * Usage: aio_ops FILE
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char wa[4096] __attribute__((aligned(4096)));
static char wb[4096] __attribute__((aligned(4096)));
static char wc[4096] __attribute__((aligned(4096)));
static char ra[4096] __attribute__((aligned(4096)));
static char rb[1000] __attribute__((aligned(64)));
static char rc[2000] __attribute__((aligned(64)));

static void setup(struct aiocb *cb, int fd, void *buf, size_t len, off_t off, int op)
{
	memset(cb, 0, sizeof *cb);
	cb->aio_fildes = fd;
	cb->aio_buf = buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
	cb->aio_lio_opcode = op;
}

static ssize_t finish(struct aiocb *cb)
{
	const struct aiocb *list[1] = {cb};
	while (aio_error(cb) == EINPROGRESS)
		CHECK(aio_suspend(list, 1, NULL) == 0 || errno == EINTR);
	return aio_return(cb);
}

static int all(const char *p, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct aiocb w1, r1, w2, w3, r2, r3, bad;

	memset(wa, 'a', sizeof wa);
	setup(&w1, fd, wa, 4096, 0, LIO_NOP);
	CHECK(aio_write(&w1) == 0);
	CHECK(finish(&w1) == 4096);

	setup(&r1, fd, ra, 4096, 0, LIO_NOP);
	CHECK(aio_read(&r1) == 0);
	CHECK(finish(&r1) == 4096);
	CHECK(all(ra, 4096, 'a'));

	memset(wb, 'b', sizeof wb);
	memset(wc, 'c', sizeof wc);
	setup(&w2, fd, wb, 4096, 4096, LIO_WRITE);
	setup(&w3, fd, wc, 4096, 8192, LIO_WRITE);
	setup(&r2, fd, rb, 1000, 1000, LIO_READ);
	setup(&r3, fd, rc, 2000, 2000, LIO_READ);
	struct aiocb *list[4] = {&w2, &w3, &r2, &r3};
	CHECK(lio_listio(LIO_WAIT, list, 4, NULL) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(aio_error(list[i]) == 0);
	CHECK(aio_return(&w2) == 4096);
	CHECK(aio_return(&w3) == 4096);
	CHECK(aio_return(&r2) == 1000);
	CHECK(aio_return(&r3) == 2000);
	CHECK(all(rb, 1000, 'a') && all(rc, 2000, 'a'));

	int ro = open(argv[1], O_RDONLY);
	CHECK(ro >= 0);
	setup(&bad, ro, wa, 4096, 0, LIO_NOP);
	if (aio_write(&bad) == 0) {
		const struct aiocb *l[1] = {&bad};
		while (aio_error(&bad) == EINPROGRESS)
			aio_suspend(l, 1, NULL);
		CHECK(aio_error(&bad) == EBADF);
		CHECK(aio_return(&bad) == -1);
	} else {
		CHECK(errno == EBADF);
	}
	CHECK(close(ro) == 0);
	CHECK(close(fd) == 0);
	return 0;
}
