/*
 * Calls that fail with an answer, calls that fail with a fault, and the opens that say what a file
 * is, each on its own file so the test can read one record flag per path:
 *   DIR/missing      open and stat fail ENOENT                      (an answer)
 *   DIR/exists       open(O_CREAT | O_EXCL) fails EEXIST, then a read  (an answer)
 *   DIR/ro           write on a read-only descriptor fails EBADF    (a fault)
 *   DIR/listed/      opened O_RDONLY and listed through fdopendir   (a directory)
 *   DIR/odir/        opened O_DIRECTORY and only closed             (a directory)
 *   DIR/direct       opened, then set O_DIRECT with fcntl, 2 aligned writes of 4 KiB
 *   a pipe           O_NONBLOCK read with nothing in it fails EAGAIN, lseek fails ESPIPE
 * Every errno is checked, so the program also proves it saw the real one. Usage: probe_errors DIR
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char *at(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	CHECK(p);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	const char *d = argv[1];
	struct stat sb;
	char c;

	CHECK(open(at(d, "missing"), O_RDONLY) == -1 && errno == ENOENT);
	CHECK(stat(at(d, "missing"), &sb) == -1 && errno == ENOENT);

	int fd = open(at(d, "exists"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0);
	CHECK(open(at(d, "exists"), O_RDWR | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST);
	fd = open(at(d, "exists"), O_RDONLY);
	CHECK(fd >= 0 && read(fd, &c, 1) == 1 && close(fd) == 0);

	fd = open(at(d, "ro"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && close(fd) == 0);
	fd = open(at(d, "ro"), O_RDONLY);
	CHECK(fd >= 0 && write(fd, "x", 1) == -1 && errno == EBADF && close(fd) == 0);

	CHECK(mkdir(at(d, "listed"), 0755) == 0 && mkdir(at(d, "odir"), 0755) == 0);
	fd = open(at(d, "listed"), O_RDONLY);
	CHECK(fd >= 0);
	DIR *dir = fdopendir(fd);
	CHECK(dir);
	size_t entries = 0;
	while (readdir(dir))
		entries++;
	CHECK(entries == 2 && closedir(dir) == 0);
	fd = open(at(d, "odir"), O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && close(fd) == 0);

	void *buf;
	CHECK(posix_memalign(&buf, 4096, 4096) == 0);
	memset(buf, 'd', 4096);
	fd = open(at(d, "direct"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && fcntl(fd, F_SETFL, O_DIRECT) == 0);
	CHECK(write(fd, buf, 4096) == 4096 && write(fd, buf, 4096) == 4096 && close(fd) == 0);

	int p[2];
	CHECK(pipe2(p, O_NONBLOCK) == 0);
	CHECK(read(p[0], &c, 1) == -1 && errno == EAGAIN);
	CHECK(lseek(p[0], 0, SEEK_SET) == -1 && errno == ESPIPE);
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
	return 0;
}
