/* SPDX-License-Identifier: MIT */
/*
 * shm_ops NAME: POSIX shared memory as MPI libraries use it for intra-node transport. A failed
 * shm_open of NAME-missing (ENOENT), shm_open(NAME, O_CREAT|O_EXCL|O_RDWR), ftruncate to 64 KiB,
 * 4 writes of 4 KiB, lseek to 0, 4 reads of 4 KiB, a pread of 4 KiB at 8 KiB, the segment opened
 * again through /proc/self/fd/N (as UCX opens another rank's) and a pread of 4 KiB at 0 there,
 * mmap of the 64 KiB, a check through the mapping, munmap, close, shm_unlink(NAME). glibc opens
 * and unlinks /dev/shm/NAME itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

static char buf[4096] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	char name[256], missing[300];
	snprintf(name, sizeof name, "/%s", argv[1]);
	snprintf(missing, sizeof missing, "/%s-missing", argv[1]);
	CHECK(shm_open(missing, O_RDWR, 0) == -1 && errno == ENOENT);
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 65536) == 0);
	for (int i = 0; i < 4; i++) {
		memset(buf, 'a' + i, sizeof buf);
		CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
	}
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(read(fd, buf, sizeof buf) == (ssize_t)sizeof buf && buf[0] == 'a' + i);
	CHECK(pread(fd, buf, sizeof buf, 8192) == (ssize_t)sizeof buf && buf[0] == 'c');
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	int fd2 = open(self, O_RDONLY);
	CHECK(fd2 >= 0 && pread(fd2, buf, sizeof buf, 0) == (ssize_t)sizeof buf && buf[0] == 'a' && close(fd2) == 0);
	char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(m[4096] == 'b' && m[20000] == 0);
	CHECK(munmap(m, 65536) == 0);
	CHECK(close(fd) == 0);
	CHECK(shm_unlink(name) == 0);
	return 0;
}
