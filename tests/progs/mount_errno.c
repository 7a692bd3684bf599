/* SPDX-License-Identifier: MIT */
/*
 * The mount tests' errno probe: does one operation and prints what the application saw, so a
 * script can compare the same operation on SRC and through the monitor's mount point.
 * Usage:
 *   mount_errno read FILE          open O_RDONLY and read 1 byte: "ok" or the errno's name
 *   mount_errno fill FILE BYTES    create and write BYTES in 64 KiB writes, then fsync and close:
 *                                  "ok BYTES", or "<errno name> <bytes written before it> <op>"
 *   mount_errno rename FROM TO     rename(2): "ok" or the errno's name
 *   mount_errno create FILE        create (0644) and close: "ok" or the errno's name
 * Exits 0 whatever the outcome (the outcome is the output), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	case EXDEV: return "EXDEV";
	case EEXIST: return "EEXIST";
	case EISDIR: return "EISDIR";
	case ENOTDIR: return "ENOTDIR";
	case EROFS: return "EROFS";
	default: return strerror(e);
	}
}

static char buf[65536];

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *op = argv[1];
	if (!strcmp(op, "read")) {
		int fd = open(argv[2], O_RDONLY);
		if (fd < 0 || read(fd, buf, 1) < 0) {
			printf("%s\n", name(errno));
			return 0;
		}
		close(fd);
		printf("ok\n");
	} else if (!strcmp(op, "fill") && argc == 4) {
		long long want = atoll(argv[3]), done = 0;
		memset(buf, 'x', sizeof buf);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			printf("%s 0 open\n", name(errno));
			return 0;
		}
		while (done < want) {
			size_t n = want - done < (long long)sizeof buf ? (size_t)(want - done) : sizeof buf;
			ssize_t w = write(fd, buf, n);
			if (w < 0) {
				printf("%s %lld write\n", name(errno), done);
				close(fd);
				return 0;
			}
			done += w;
		}
		if (fsync(fd) < 0) {
			printf("%s %lld fsync\n", name(errno), done);
			close(fd);
			return 0;
		}
		if (close(fd) < 0) {
			printf("%s %lld close\n", name(errno), done);
			return 0;
		}
		printf("ok %lld\n", done);
	} else if (!strcmp(op, "rename") && argc == 4) {
		printf("%s\n", rename(argv[2], argv[3]) < 0 ? name(errno) : "ok");
	} else if (!strcmp(op, "create")) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
		printf("%s\n", fd < 0 ? name(errno) : "ok");
		if (fd >= 0)
			close(fd);
	} else {
		return 2;
	}
	return 0;
}
