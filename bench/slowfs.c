/* SPDX-License-Identifier: MIT */
/*
 * A slow shared file system for bench/diagnose: the mount monitor's pass-through operations
 * (src/mount/passthrough.c) served by ONE thread that waits a fixed delay before each request,
 * as a file-system server with a fixed cost per request would. Every client of the mount queues
 * at that one server, so a neighbour's requests -- data or metadata -- take time from everyone
 * else's, which a per-cgroup block throttle cannot model (v1 blkio charges no journal writes
 * and keeps reads and writes in separate budgets). SIGUSR1 makes the delay DELAY * 4 (a slow
 * mount point), SIGUSR2 restores it. Not a product: a fault injector for the corpus.
 *
 *   slowfs SRC MNT DELAY_US LOGDIR    (serves until unmounted or SIGTERM; root)
 */
#define FUSE_USE_VERSION 314
#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mount/mount.h"

#define SLOWFS_SLOW_FACTOR 4

static volatile sig_atomic_t slow;
static long delay_us;

static void on_usr(int sig)
{
	slow = sig == SIGUSR1;
}

/* the request is read, then the server "works" for the delay before it is handled */
static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	ssize_t n = read(fd, buf, len);
	if (n < 0)
		return -errno;
	long us = delay_us * (slow ? SLOWFS_SLOW_FACTOR : 1);
	struct timespec ts = {us / 1000000, us % 1000000 * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	ssize_t n = writev(fd, iov, count);
	return n < 0 ? -errno : n;
}

int main(int argc, char **argv)
{
	if (argc != 5 || atol(argv[3]) < 0) {
		fprintf(stderr, "usage: slowfs SRC MNT DELAY_US LOGDIR\n");
		return 2;
	}
	delay_us = atol(argv[3]);
	char err[1024];
	struct mnt_fs fs = {.mnt = argv[2], .mnt_len = strlen(argv[2])};
	fs.src_fd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs.src_fd < 0) {
		fprintf(stderr, "slowfs: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	char live[MNT_PATH_MAX];
	snprintf(live, sizeof live, "%s/live", argv[4]); /* made private (0700) by the log */
	struct mnt_log_options lo = {.live_dir = live, .out_dir = argv[4], .job = "slowfs",
				     .max_records = 4096, .argc = argc, .argv = argv};
	fs.log = mnt_log_create(&lo, err, sizeof err);
	if (!fs.log) {
		fprintf(stderr, "slowfs: %s\n", err);
		return 1;
	}
	char opts[128];
	snprintf(opts, sizeof opts, "fsname=slowfs,default_permissions,allow_other,max_read=%u", MNT_MAX_READ);
	char *fargv[] = {"slowfs", "-o", opts, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	int status = 1;
	struct fuse *f = fuse_new(&args, mnt_operations(), sizeof(struct fuse_operations), &fs);
	if (!f)
		goto out;
	struct fuse_session *se = fuse_get_session(f);
	signal(SIGUSR1, on_usr);
	signal(SIGUSR2, on_usr);
	if (fuse_set_signal_handlers(se) != 0 || fuse_mount(f, argv[2]) != 0)
		goto out_f;
	struct fuse_custom_io io = {.read = io_read, .writev = io_writev};
	if (fuse_session_custom_io(se, &io, fuse_session_fd(se)) == 0)
		status = fuse_loop(f) < 0;
	fuse_unmount(f);
	fuse_remove_signal_handlers(se);
out_f:
	fuse_destroy(f);
out:
	fuse_opt_free_args(&args);
	if (status)
		fprintf(stderr, "slowfs: cannot serve %s\n", argv[2]);
	mnt_log_finish(fs.log, status, err, sizeof err);
	mnt_log_close(fs.log);
	close(fs.src_fd);
	return status;
}
