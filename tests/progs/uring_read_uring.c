/*
 * Reads FILE with io_uring (liburing), O_DIRECT, 64 KiB requests, QD requests per submission,
 * and checks every completion: the kernel layer's io_uring test (the preload library cannot see
 * any of it). Prints the io_uring_enter-driving submissions and the bytes read.
 * Usage: uring_read_uring FILE QD
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define BS 65536

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	unsigned qd = (unsigned)atoi(argv[2]);
	int fd = open(argv[1], O_RDONLY | O_DIRECT);
	CHECK(fd >= 0);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	struct io_uring ring;
	CHECK(io_uring_queue_init(qd, &ring, 0) == 0);
	char *buf;
	CHECK(posix_memalign((void **)&buf, 4096, (size_t)BS * qd) == 0);
	long long done = 0, off = 0, submits = 0;
	while (off < st.st_size) {
		unsigned n = 0;
		for (; n < qd && off < st.st_size; n++, off += BS) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			CHECK(sqe);
			io_uring_prep_read(sqe, fd, buf + (size_t)n * BS, BS, (unsigned long long)off);
		}
		CHECK(io_uring_submit_and_wait(&ring, n) == (int)n);
		submits++;
		for (unsigned i = 0; i < n; i++) {
			struct io_uring_cqe *cqe;
			CHECK(io_uring_wait_cqe(&ring, &cqe) == 0);
			CHECK(cqe->res > 0);
			done += cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	printf("%lld %lld\n", submits, done);
	return 0;
}
