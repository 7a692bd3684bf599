/* SPDX-License-Identifier: MIT */
/*
 * Case "mmap": open, ftruncate to 8192, mmap MAP_SHARED, close the descriptor (the mapping
 * stays), fill the mapping with 'm', msync, munmap. An anonymous mapping is made and unmapped
 * too (it belongs to no file). Usage: mmap_sync FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 8192) == 0);
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(close(fd) == 0);
	char *anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	memset(p, 'm', 8192);
	CHECK(msync(p, 8192, MS_SYNC) == 0);
	CHECK(munmap(anon, 8192) == 0);
	CHECK(munmap(p, 8192) == 0);
	return 0;
}
