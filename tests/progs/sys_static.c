/*
 * A statically linked program (the Makefile links *_static.c with -static) doing a known mix of
 * file system calls, one raw syscall() among them: no preload library can see any of it, the
 * kernel layer sees all of it. Usage: sys_static DIR. Files DIR/a (main) and DIR/b (copy target).
 *
 * On DIR/a, as the system calls reach the kernel:
 *   opens 1, closes 1
 *   writes 19: write x10 of 1000 B, pwrite x5 of 100 B, writev x3 of 500 B, syscall(SYS_write) x1 of 77 B,
 *   bytes_written 10000 + 500 + 1500 + 77 = 12077
 *   reads 7 + 3 + 2 + 1 + 1 = 14: read x7 of 512 B, pread x3 of 64 B, readv x2 of 100 B,
 *              copy_file_range x1 of 4096 B (source), sendfile x1 of 1000 B (source)
 *   bytes_read 3584 + 192 + 200 + 4096 + 1000 = 9072
 *   seeks 4, fsyncs 4 (fsync, fdatasync, sync_file_range, msync), mmaps 1
 * On DIR/b: opens 1, closes 1, writes 2 (copy_file_range 4096 B, sendfile 1000 B), bytes_written 5096.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	char a[4096], b[4096], buf[4096];
	CHECK(argc == 2);
	snprintf(a, sizeof a, "%s/a", argv[1]);
	snprintf(b, sizeof b, "%s/b", argv[1]);
	memset(buf, 'x', sizeof buf);

	int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < 10; i++)
		CHECK(write(fd, buf, 1000) == 1000);
	for (int i = 0; i < 5; i++)
		CHECK(pwrite(fd, buf, 100, 20000 + i * 100) == 100);
	struct iovec iov[2] = {{buf, 200}, {buf, 300}};
	for (int i = 0; i < 3; i++)
		CHECK(writev(fd, iov, 2) == 500);
	CHECK(syscall(SYS_write, fd, buf, 77) == 77);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	for (int i = 0; i < 7; i++)
		CHECK(read(fd, buf, 512) == 512);
	for (int i = 0; i < 3; i++)
		CHECK(pread(fd, buf, 64, i * 64) == 64);
	struct iovec riov[2] = {{buf, 40}, {buf + 40, 60}};
	for (int i = 0; i < 2; i++)
		CHECK(readv(fd, riov, 2) == 100);
	CHECK(lseek(fd, 0, SEEK_END) > 0);
	CHECK(fsync(fd) == 0);
	CHECK(fdatasync(fd) == 0);
	CHECK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0);
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	m[0] = 'y';
	CHECK(msync(m, 4096, MS_SYNC) == 0);
	CHECK(munmap(m, 4096) == 0);

	int fb = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fb >= 0);
	loff_t in = 0;
	CHECK(copy_file_range(fd, &in, fb, NULL, 4096, 0) == 4096);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	off_t soff = 0;
	CHECK(sendfile(fb, fd, &soff, 1000) == 1000);
	CHECK(lseek(fd, 0, SEEK_CUR) == 0);
	CHECK(close(fb) == 0);
	CHECK(close(fd) == 0);
	return 0;
}
