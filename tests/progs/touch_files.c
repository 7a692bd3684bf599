/* SPDX-License-Identifier: MIT */
/*
 * For each PATH: open it O_RDWR|O_CREAT and write 10 B, or for /proc files open it O_RDONLY and
 * read once; stat it; close it.
 * Usage: touch_files PATH...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char buf[4096] __attribute__((aligned(4096))) = "0123456789";

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int fd;
		if (strncmp(argv[i], "/proc/", 6) != 0) {
			fd = open(argv[i], O_RDWR | O_CREAT, 0644);
			CHECK(fd >= 0);
			CHECK(write(fd, buf, 10) == 10);
		} else {
			fd = open(argv[i], O_RDONLY);
			CHECK(fd >= 0);
			CHECK(read(fd, buf, sizeof buf) > 0);
		}
		CHECK(stat(argv[i], &st) == 0);
		CHECK(close(fd) == 0);
	}
	return 0;
}
