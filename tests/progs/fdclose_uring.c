/* SPDX-License-Identifier: MIT */
/*
 * A run's descriptor closed by io_uring (IORING_OP_CLOSE), with no close(2) around the removal:
 * the kernel layer's default depth must not take the next file on that number for the run's
 * (src/kernel/kernel.h, `fdtab`). Usage: fdclose_uring DIR. In DIR: v, 3 writes of 10 B,
 * closed through the ring; w, opened on v's number: 5 writes of 10 B. The thread stays on one CPU,
 * and starts after the default depth's first sampling window (its first 5 ms: a window's calls are
 * timed, and a timed call's run is never continued by the descriptor check). At full depth the
 * io_uring_enter itself walks the ring's descriptor, which the thread's identity check then holds.
 * Prints nothing and exits 0 when every call did what it should.
 */
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int open_in(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	return fd;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	cpu_set_t s, one;
	CHECK(sched_getaffinity(0, sizeof s, &s) == 0);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &s)) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
			break;
		}
	usleep(100000); /* past the first sampling window (KS_LAT_WINDOW_MS) */
	char buf[10];
	memset(buf, 'u', sizeof buf);
	struct io_uring ring;
	CHECK(io_uring_queue_init(4, &ring, 0) == 0);
	int fv = open_in(argv[1], "v");
	for (int i = 0; i < 3; i++)
		CHECK(write(fv, buf, 10) == 10);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	CHECK(sqe != NULL);
	io_uring_prep_close(sqe, fv);
	CHECK(io_uring_submit(&ring) == 1);
	struct io_uring_cqe *cqe;
	CHECK(io_uring_wait_cqe(&ring, &cqe) == 0 && cqe->res == 0);
	io_uring_cqe_seen(&ring, cqe);
	CHECK(open_in(argv[1], "w") == fv);
	for (int i = 0; i < 5; i++)
		CHECK(write(fv, buf, 10) == 10);
	CHECK(close(fv) == 0);
	io_uring_queue_exit(&ring);
	return 0;
}
