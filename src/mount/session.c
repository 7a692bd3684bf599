/* SPDX-License-Identifier: MIT */
/*
 * The monitor's mount: checks on MNT, the libfuse session (high-level API, multi-threaded loop,
 * its signal handlers for SIGTERM/SIGINT/SIGHUP), and the one thing libfuse 3.14 cannot ask the
 * kernel for. The monitor wants every read(2)/write(2) of the application to reach it, so its
 * files are opened with direct I/O (the kernel keeps no data of them); a kernel refuses shared
 * mmap of such files unless the filesystem negotiates FUSE_DIRECT_IO_ALLOW_MMAP at INIT
 * (Linux 6.6+), a flag libfuse added only in 3.16. The session's I/O goes through our own read
 * and writev (fuse_session_custom_io, there since 3.14): they see the kernel's INIT request and
 * add the flag to libfuse's reply when the kernel offers it. A kernel that does not offer it gets
 * page-cache mode instead (mmap works, repeated reads may be served from the cache), said once on
 * stderr. The mount's source field names the monitor's live log, so `iostrata umount` can find
 * and finalize the log of a monitor that was killed.
 */
#define FUSE_USE_VERSION 314
#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mount/mount.h"
#include "sys/mountinfo.h"

#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif

int mnt_check_target(const char *mnt, char *err, size_t errlen)
{
	struct stat st, parent;
	char up[MNT_PATH_MAX];
	if (stat(mnt, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s%s", mnt, strerror(e),
			 e == ENOTCONN ? " (a monitor that died left it mounted: iostrata umount clears it)" : "");
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", mnt);
		return -ENOTDIR;
	}
	snprintf(up, sizeof up, "%s/..", mnt);
	if (stat(up, &parent) == 0 && (parent.st_dev != st.st_dev || parent.st_ino == st.st_ino)) {
		snprintf(err, errlen, "%s: busy: already a mount point", mnt);
		return -EBUSY;
	}
	char src[64];
	if (mnt_find(mnt, src, sizeof src) == 1) {
		snprintf(err, errlen, "%s: busy: an iostrata mount is there", mnt);
		return -EBUSY;
	}
	DIR *d = opendir(mnt);
	if (!d) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", mnt, strerror(e));
		return -e;
	}
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	if (!empty) {
		snprintf(err, errlen, "%s: not empty (the mount would hide its files)", mnt);
		return -ENOTEMPTY;
	}
	return 0;
}

int mnt_find(const char *mnt, char *src, size_t srclen)
{
	struct sys_mounts mounts;
	int r = sys_mountinfo_load(NULL, &mounts);
	if (r < 0)
		return r;
	/* the mount on top at mnt: one under it is hidden and cannot be ours to unmount */
	const struct sys_mount *m = sys_mount_by_point(&mounts, mnt);
	int found = m && !strcmp(m->fstype, "fuse.iostrata");
	if (found)
		snprintf(src, srclen, "%s", m->source);
	sys_mounts_free(&mounts);
	return found;
}

/* ---- the session's I/O: INIT negotiation and the ready signal ---- */

static struct {
	uint64_t init_unique;  /* the kernel's INIT request, 0 before it */
	int allow_mmap;        /* the kernel offered FUSE_DIRECT_IO_ALLOW_MMAP */
	int ready_fd;
	int detach;
	const char *ready_path;
	struct mnt_fs *fs;
	int quiet;
} io_state;

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	ssize_t n = read(fd, buf, len);
	if (n >= (ssize_t)(sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags2) + 4) &&
	    !io_state.init_unique) {
		const struct fuse_in_header *ih = buf;
		if (ih->opcode == FUSE_INIT) {
			const struct fuse_init_in *in = (const void *)(ih + 1);
			io_state.init_unique = ih->unique;
			io_state.allow_mmap = (in->flags & FUSE_INIT_EXT) &&
					      ((uint64_t)in->flags2 << 32 & FUSE_DIRECT_IO_ALLOW_MMAP);
		}
	}
	return n < 0 ? -errno : n;
}

/* A monitor in the background lets go of the caller's terminal or pipe, as daemons do: before
 * it says it is ready, so that once `iostrata mount --background` returns no descriptor of its
 * caller is held (`iostrata mount --background SRC MNT | tail` ends). What it would say later goes
 * nowhere; the log records how it ended. */
static void detach_stdio(void)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		return;
	fflush(NULL);
	for (int fd = 0; fd <= 2; fd++)
		if (fd != nul)
			dup2(nul, fd);
	if (nul > 2)
		close(nul);
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	const struct fuse_out_header *oh = iov[0].iov_base;
	int init = io_state.init_unique && iov[0].iov_len >= sizeof *oh && oh->unique == io_state.init_unique;
	if (init && oh->error == 0 && count >= 2 && iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + 4) {
		struct fuse_init_out *out = iov[1].iov_base;
		io_state.fs->direct_io = io_state.allow_mmap;
		if (io_state.allow_mmap) {
			out->flags |= FUSE_INIT_EXT;
			out->flags2 |= (uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32);
		} else if (!io_state.quiet) {
			fprintf(stderr, "iostrata mount: this kernel cannot map files opened with direct I/O "
					"(no FUSE_DIRECT_IO_ALLOW_MMAP): page-cache mode, repeated reads may not reach "
					"the monitor\n");
		}
	}
	ssize_t n = writev(fd, iov, count);
	int e = errno;
	if (init) {
		io_state.init_unique = UINT64_MAX; /* done: no other reply can match */
		if (io_state.detach)
			detach_stdio();
		if (io_state.ready_fd >= 0) {
			char c = 'r';
			if (write(io_state.ready_fd, &c, 1) < 0) {
				/* the waiter is gone: nothing to tell */
			}
			close(io_state.ready_fd);
			io_state.ready_fd = -1;
		}
		if (io_state.ready_path) {
			int rf = open(io_state.ready_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (rf >= 0)
				close(rf);
		}
	}
	return n < 0 ? -e : n;
}

/* libfuse offers its splice paths to a custom I/O only when it brings its own splice calls:
 * without them every read's reply would be copied through a fresh buffer. */
static ssize_t io_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned int flags,
			 void *userdata)
{
	(void)userdata;
	ssize_t n = splice(fdin, offin, fdout, offout, len, flags);
	return n < 0 ? -errno : n;
}

int mnt_serve(const struct mnt_options *o)
{
	char err[1024];
	int status = 1;
	struct mnt_fs fs = {.mnt = o->mnt, .mnt_len = strlen(o->mnt), .direct_io = 0};
	struct fuse *f = NULL;
	struct fuse_loop_config *cfg = NULL;

	fs.src_fd = open(o->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs.src_fd < 0) {
		fprintf(stderr, "iostrata mount: %s: %s\n", o->src, strerror(errno));
		return 2;
	}
	if (mnt_check_target(o->mnt, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata mount: %s\n", err);
		close(fs.src_fd);
		return 2;
	}
	fs.log = mnt_log_create(&o->log, err, sizeof err);
	if (!fs.log) {
		fprintf(stderr, "iostrata mount: %s\n", err);
		close(fs.src_fd);
		return 1;
	}
	/* The source field names the live log: `iostrata umount` finds it there. Commas would end
	 * the option, so a live path with one is not named. */
	char opts[MNT_PATH_MAX + 256];
	const char *live = mnt_log_live_path(fs.log);
	snprintf(opts, sizeof opts, "fsname=%s,subtype=iostrata,default_permissions,max_read=%u%s",
		 strchr(live, ',') ? "iostrata" : live, MNT_MAX_READ, geteuid() == 0 ? ",allow_other" : "");
	char *argv[] = {"iostrata-mount", "-o", opts, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	io_state.fs = &fs;
	io_state.ready_fd = o->ready_fd;
	io_state.detach = o->detach;
	io_state.ready_path = o->ready_path;
	io_state.quiet = o->quiet;
	f = fuse_new(&args, mnt_operations(), sizeof(struct fuse_operations), &fs);
	if (!f) {
		fprintf(stderr, "iostrata mount: cannot start a FUSE session\n");
		goto err;
	}
	struct fuse_session *se = fuse_get_session(f);
	/* libfuse leaves an ignored signal ignored, and a shell starts background jobs with SIGINT
	 * ignored: the monitor ends on these whatever it inherited */
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (!o->keep_sigint)
		signal(SIGINT, SIG_DFL);
	if (fuse_set_signal_handlers(se) != 0) {
		fprintf(stderr, "iostrata mount: cannot set signal handlers\n");
		goto err;
	}
	if (fuse_mount(f, o->mnt) != 0) {
		fprintf(stderr, "iostrata mount: cannot mount %s%s\n", o->mnt,
			geteuid() ? " (as a user this needs fusermount3 and /dev/fuse; run as root for allow_other)" : "");
		fuse_remove_signal_handlers(se);
		goto err;
	}
	struct fuse_custom_io io = {.read = io_read, .writev = io_writev, .splice_receive = io_splice, .splice_send = io_splice};
	if (fuse_session_custom_io(se, &io, fuse_session_fd(se)) != 0) {
		fprintf(stderr, "iostrata mount: cannot take over the session's I/O\n");
		fuse_unmount(f);
		fuse_remove_signal_handlers(se);
		goto err;
	}
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_idle_threads(cfg, (unsigned)(o->threads > 0 ? o->threads : 10));
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	int r = fuse_loop_mt(f, cfg);
	/* unmounted from outside (umount, iostrata umount): the kernel ends the connection */
	if (r == -ENODEV)
		r = 0;
	fuse_unmount(f);
	fuse_remove_signal_handlers(se);
	status = r < 0 ? 1 : 0;
	if (r < 0)
		fprintf(stderr, "iostrata mount: serving %s failed: %s\n", o->mnt, strerror(-r));
err:
	if (cfg)
		fuse_loop_cfg_destroy(cfg);
	if (f)
		fuse_destroy(f);
	fuse_opt_free_args(&args);
	if (io_state.ready_fd >= 0)
		close(io_state.ready_fd);
	if (mnt_log_finish(fs.log, status, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata mount: %s (the counters stay in %s: iostrata recover)\n", err,
			mnt_log_live_path(fs.log));
		status = 1;
	} else if (!o->quiet) {
		fprintf(stderr, "iostrata mount: log in %s\n", mnt_log_final_path(fs.log));
	}
	mnt_log_close(fs.log);
	close(fs.src_fd);
	return status;
}
