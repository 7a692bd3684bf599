/* SPDX-License-Identifier: MIT */
/*
 * A file system whose writes fail past a limit, for the deferred-error tests of write aggregation
 * (agg_kill.sh): a libfuse3 pass-through of BACKDIR at MNT in which every file holds at most LIMIT
 * bytes; a write that reaches past LIMIT writes what fits and returns that short count, and a write
 * that starts at or past it fails with ERRNO (EIO: an I/O error the server met, as a network or
 * parallel file system reports one; EDQUOT: a quota). Runs in the foreground, single-threaded,
 * until unmounted (fusermount3 -u MNT).
 *   fuse_errfs BACKDIR MNT LIMIT EIO|EDQUOT
 * This kernel has neither device-mapper (dm-error) nor ext4/XFS/tmpfs quota, so an errno the real
 * file system returns from write(2) is made here, in a real FUSE server.
 *   fuse_errfs BACKDIR MNT LIMIT EIO|EDQUOT DELAY_US
 * also sleeps DELAY_US microseconds in every request it serves, like the round trip of a parallel
 * file system's RPC (bench/aggregate, agg_bypass.sh: where write aggregation pays).
 */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int backdir = -1;
static off_t limit;
static int fail_errno;
static long delay_us;

/* The fixed cost of a request (DELAY_US). */
static void delay(void)
{
	if (delay_us > 0) {
		struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* "/a/b" -> "a/b", "/" -> "." (relative to backdir) */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int e_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	delay();
	int r = fi ? fstat((int)fi->fh, st) : fstatat(backdir, rel(path), st, AT_SYMLINK_NOFOLLOW);
	return r < 0 ? -errno : 0;
}

static int e_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		     enum fuse_readdir_flags flags)
{
	delay();
	(void)off, (void)fi, (void)flags;
	int fd = openat(backdir, rel(path), O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (fill(buf, e->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int e_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	delay();
	int fd = openat(backdir, rel(path), fi->flags | O_CREAT, mode);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int e_open(const char *path, struct fuse_file_info *fi)
{
	delay();
	int fd = openat(backdir, rel(path), fi->flags & ~O_CREAT);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int e_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	delay();
	(void)path;
	ssize_t r = pread((int)fi->fh, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int e_write(const char *path, const char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	delay();
	(void)path;
	if (off >= limit)
		return -fail_errno;
	if ((off_t)n > limit - off)
		n = (size_t)(limit - off);
	ssize_t r = pwrite((int)fi->fh, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int e_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	delay();
	int r;
	if (fi) {
		r = ftruncate((int)fi->fh, size);
	} else {
		int fd = openat(backdir, rel(path), O_WRONLY);
		if (fd < 0)
			return -errno;
		r = ftruncate(fd, size);
		close(fd);
	}
	return r < 0 ? -errno : 0;
}

static int e_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	delay();
	(void)path;
	int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
	return r < 0 ? -errno : 0;
}

static int e_release(const char *path, struct fuse_file_info *fi)
{
	delay();
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int e_unlink(const char *path)
{
	delay();
	return unlinkat(backdir, rel(path), 0) < 0 ? -errno : 0;
}

static int e_mkdir(const char *path, mode_t mode)
{
	delay();
	return mkdirat(backdir, rel(path), mode) < 0 ? -errno : 0;
}

static int e_rmdir(const char *path)
{
	delay();
	return unlinkat(backdir, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

static const struct fuse_operations ops = {
	.mkdir = e_mkdir,
	.rmdir = e_rmdir,
	.getattr = e_getattr,
	.readdir = e_readdir,
	.create = e_create,
	.open = e_open,
	.read = e_read,
	.write = e_write,
	.truncate = e_truncate,
	.fsync = e_fsync,
	.release = e_release,
	.unlink = e_unlink,
};

int main(int argc, char **argv)
{
	if ((argc != 5 && argc != 6) || (strcmp(argv[4], "EIO") && strcmp(argv[4], "EDQUOT"))) {
		fprintf(stderr, "usage: fuse_errfs BACKDIR MNT LIMIT EIO|EDQUOT [DELAY_US]\n");
		return 2;
	}
	backdir = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (backdir < 0) {
		perror(argv[1]);
		return 1;
	}
	limit = (off_t)strtoll(argv[3], NULL, 10);
	fail_errno = strcmp(argv[4], "EIO") ? EDQUOT : EIO;
	delay_us = argc == 6 ? strtol(argv[5], NULL, 10) : 0;
	char *fargv[] = { argv[0], "-f", "-s", "-o", "default_permissions", argv[2], NULL };
	return fuse_main(6, fargv, &ops, NULL);
}
