/*
 * The page-cache test's mmap workload: FILE must exist with SIZE bytes (written and synced before);
 * maps it MAP_SHARED, writes one byte into every 4 KiB page, msyncs (MS_SYNC), unmaps; then maps
 * it again read-only and reads one byte of every page (page-ins after the caller drops the cache
 * between runs); "random" reads so after madvise(MADV_RANDOM): no readahead, so each page of an
 * uncached file is one fault that reads that page alone (the filesystem's read_folio).
 * Usage: pc_mmap_write FILE SIZE write|read|random
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 4);
	size_t size = strtoull(argv[2], NULL, 0);
	int wr = !strcmp(argv[3], "write");
	int fd = open(argv[1], wr ? O_RDWR : O_RDONLY);
	CHECK(fd >= 0);
	char *m = mmap(NULL, size, wr ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(close(fd) == 0);
	if (!strcmp(argv[3], "random"))
		CHECK(madvise(m, size, MADV_RANDOM) == 0);
	unsigned long sum = 0;
	for (size_t off = 0; off < size; off += 4096) {
		if (wr)
			m[off] = (char)(off >> 12);
		else
			sum += (unsigned char)m[off];
	}
	if (wr)
		CHECK(msync(m, size, MS_SYNC) == 0);
	CHECK(munmap(m, size) == 0);
	printf("%lu\n", sum);
	return 0;
}
