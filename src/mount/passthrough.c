/* SPDX-License-Identifier: MIT */
/*
 * The monitor's FUSE operations: each one is forwarded to the same path under SRC (relative to
 * an O_PATH descriptor of SRC, so nothing leaves SRC by a path of ours), timed, and recorded in
 * the mount layer's log under the path at the mount point and the pid that asked. Nothing is
 * cached or buffered here: a read is one pread of SRC, a write one pwrite (or a splice when
 * libfuse hands us a pipe).
 *
 * What is counted where (docs/MOUNT.md): open/create -> opens; FLUSH (sent by every close(2) of a
 * descriptor) -> closes; READ/WRITE -> reads/writes with their bytes; getattr (also how the
 * high-level API answers LOOKUP) -> stats; lseek -> seeks; fsync -> syncs; rename -> renames of
 * the source; everything else (release, mkdir, unlink, chmod, xattrs, locks ...) -> other
 * metadata. Failures count in the error counter of the op's kind.
 *
 * Who asked: the request's pid. Write-back of mapped pages arrives without one (pid 0, the
 * kernel's flusher): it is charged to the pid that opened the handle the kernel writes through.
 *
 * Credentials: the kernel checks permissions before a request reaches us (default_permissions,
 * against SRC's own modes and owners, which getattr passes on). When the monitor runs as root,
 * operations that create an inode run with the caller's fsuid, fsgid and groups (per thread),
 * so new files belong to the caller as they would on SRC.
 */
#define FUSE_USE_VERSION 314
#include <fuse3/fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "log/record.h"
#include "mount/mount.h"

/* An open file: our descriptor on SRC and its path at the mount point. */
struct handle {
	int kind; /* HANDLE_FILE: a directory handle may come where a file's is expected (fchmod) */
	int fd;
	int flags;
	int32_t opener;  /* pid that opened it: charged with write-back */
	uint64_t cached; /* (pid << 32) | record index + 1 of the last requester, 0 = none */
	char path[];
};

enum { HANDLE_FILE = 0x46494c45, HANDLE_DIR = 0x44495220 };

struct dir_handle {
	int kind; /* HANDLE_DIR */
	DIR *d;
	struct dirent *entry;
	off_t offset;
	char fpath[]; /* its path in the mount ("/" for the root) */
};

/* The file handle of fi, or NULL (none, or a directory's). */
static struct handle *file_of(const struct fuse_file_info *fi)
{
	struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
	return h && h->kind == HANDLE_FILE ? h : NULL;
}

static struct dir_handle *dir_of(const struct fuse_file_info *fi)
{
	struct dir_handle *d = fi ? (struct dir_handle *)(uintptr_t)fi->fh : NULL;
	return d && d->kind == HANDLE_DIR ? d : NULL;
}

/* The descriptor on SRC behind fi (a file's or a directory's), or -1. */
static int fd_of(const struct fuse_file_info *fi)
{
	struct handle *h = file_of(fi);
	struct dir_handle *d = h ? NULL : dir_of(fi);
	return h ? h->fd : d ? dirfd(d->d) : -1;
}

/* The FUSE path of a request: as given, else (nullpath_ok: a request on an open handle) the
 * directory handle's, else the root. */
static const char *path_of(const char *path, const struct fuse_file_info *fi)
{
	struct dir_handle *d = dir_of(fi);
	return path ? path : d ? d->fpath : "/";
}

static struct mnt_fs *fs_of(void)
{
	return fuse_get_context()->private_data;
}

/* SRC-relative form of a FUSE path ("/a/b" -> "a/b", "/" -> "."). */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static void full_path(const struct mnt_fs *fs, const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s%s", fs->mnt, strcmp(path, "/") ? path : "");
}

static struct log_record *rec_of_path(const char *path, int32_t pid)
{
	struct mnt_fs *fs = fs_of();
	char p[MNT_PATH_MAX];
	full_path(fs, path, p, sizeof p);
	return mnt_log_record(fs->log, p, pid);
}

static int32_t requester(const struct handle *h)
{
	struct fuse_context *c = fuse_get_context();
	return c->pid ? (int32_t)c->pid : h ? h->opener : 0;
}

/* The record of (handle's file, requester): cached in the handle for the common case of one
 * process using it, in one word so concurrent requests never pair a pid with another's record. */
static struct log_record *rec_of_handle(struct handle *h)
{
	struct mnt_fs *fs = fs_of();
	int32_t pid = requester(h);
	uint64_t c = __atomic_load_n(&h->cached, __ATOMIC_RELAXED);
	if (c && (int32_t)(c >> 32) == pid)
		return mnt_log_record_at(fs->log, (uint32_t)c - 1);
	struct log_record *r = mnt_log_record(fs->log, h->path, pid);
	__atomic_store_n(&h->cached, (uint64_t)(uint32_t)pid << 32 | (mnt_log_record_index(fs->log, r) + 1),
			 __ATOMIC_RELAXED);
	return r;
}

static void meta(const char *path, struct handle *h, enum log_counter which, uint64_t t0, int res)
{
	uint64_t t1 = mnt_now();
	struct log_record *r = h ? rec_of_handle(h) : rec_of_path(path, requester(NULL));
	mnt_note_meta(fs_of()->log, r, which, t0, t1, res < 0 ? res : 0);
}

static int neg(int r)
{
	return r < 0 ? -errno : r;
}

/* ---- the caller's credentials for operations that create inodes ---- */

struct creds {
	int active;
	uid_t uid;
	gid_t gid;
};

static void creds_enter(struct creds *s)
{
	s->active = 0;
	if (geteuid() != 0)
		return;
	struct fuse_context *c = fuse_get_context();
	gid_t groups[64];
	int n = fuse_getgroups(64, groups);
	/* per thread: the raw system calls, not glibc's process-wide setgroups */
	if (n >= 0 && n <= 64)
		syscall(SYS_setgroups, n, groups);
	setfsgid(c->gid);
	setfsuid(c->uid);
	s->active = 1;
}

static void creds_leave(struct creds *s)
{
	if (!s->active)
		return;
	setfsuid(0);
	setfsgid(0);
	gid_t root = 0;
	syscall(SYS_setgroups, 1, &root);
}

/* ---- attributes ---- */

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct handle *h = file_of(fi);
	int fd = fd_of(fi);
	int r = fd >= 0 ? fstat(fd, st) : fstatat(fs_of()->src_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
	r = neg(r);
	meta(path_of(path, fi), h, LOG_C_STATS, t0, r);
	return r;
}

static int op_access(const char *path, int mask)
{
	uint64_t t0 = mnt_now();
	int r = neg(faccessat(fs_of()->src_fd, rel(path), mask, AT_SYMLINK_NOFOLLOW));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_readlink(const char *path, char *buf, size_t size)
{
	uint64_t t0 = mnt_now();
	ssize_t n = readlinkat(fs_of()->src_fd, rel(path), buf, size - 1);
	int r = n < 0 ? -errno : 0;
	if (n >= 0)
		buf[n] = 0;
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct handle *h = file_of(fi);
	int fd = fd_of(fi);
	int r = neg(fd >= 0 ? fchmod(fd, mode) : fchmodat(fs_of()->src_fd, rel(path), mode, 0));
	meta(path_of(path, fi), h, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct handle *h = file_of(fi);
	int fd = fd_of(fi);
	int r = neg(fd >= 0 ? fchown(fd, uid, gid) : fchownat(fs_of()->src_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
	meta(path_of(path, fi), h, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct handle *h = file_of(fi);
	int r;
	if (h) {
		r = neg(ftruncate(h->fd, size));
	} else {
		int fd = openat(fs_of()->src_fd, rel(path), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		r = fd < 0 ? -errno : neg(ftruncate(fd, size));
		if (fd >= 0)
			close(fd);
	}
	meta(path_of(path, fi), h, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct handle *h = file_of(fi);
	int fd = fd_of(fi);
	int r = neg(fd >= 0 ? futimens(fd, tv) : utimensat(fs_of()->src_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW));
	meta(path_of(path, fi), h, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_statfs(const char *path, struct statvfs *st)
{
	uint64_t t0 = mnt_now();
	int r = neg(fstatvfs(fs_of()->src_fd, st));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

/* ---- the namespace ---- */

static int op_mknod(const char *path, mode_t mode, dev_t rdev)
{
	uint64_t t0 = mnt_now();
	struct creds c;
	creds_enter(&c);
	int r = neg(mknodat(fs_of()->src_fd, rel(path), mode, rdev));
	creds_leave(&c);
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_mkdir(const char *path, mode_t mode)
{
	uint64_t t0 = mnt_now();
	struct creds c;
	creds_enter(&c);
	int r = neg(mkdirat(fs_of()->src_fd, rel(path), mode));
	creds_leave(&c);
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_symlink(const char *target, const char *path)
{
	uint64_t t0 = mnt_now();
	struct creds c;
	creds_enter(&c);
	int r = neg(symlinkat(target, fs_of()->src_fd, rel(path)));
	creds_leave(&c);
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_link(const char *from, const char *to)
{
	uint64_t t0 = mnt_now();
	struct creds c;
	creds_enter(&c);
	int r = neg(linkat(fs_of()->src_fd, rel(from), fs_of()->src_fd, rel(to), 0));
	creds_leave(&c);
	meta(to, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_unlink(const char *path)
{
	uint64_t t0 = mnt_now();
	int r = neg(unlinkat(fs_of()->src_fd, rel(path), 0));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_rmdir(const char *path)
{
	uint64_t t0 = mnt_now();
	int r = neg(unlinkat(fs_of()->src_fd, rel(path), AT_REMOVEDIR));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
	uint64_t t0 = mnt_now();
	int r = neg(renameat2(fs_of()->src_fd, rel(from), fs_of()->src_fd, rel(to), flags));
	meta(from, NULL, LOG_C_RENAMES, t0, r);
	return r;
}

/* ---- extended attributes: by SRC's path through our descriptor (there are no *xattrat calls) ---- */

static void xpath(const char *path, char *out, size_t len)
{
	snprintf(out, len, "/proc/self/fd/%d/%s", fs_of()->src_fd, rel(path));
}

static int op_setxattr(const char *path, const char *name, const char *value, size_t size, int flags)
{
	uint64_t t0 = mnt_now();
	char p[MNT_PATH_MAX];
	xpath(path, p, sizeof p);
	int r = neg(lsetxattr(p, name, value, size, flags));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_getxattr(const char *path, const char *name, char *value, size_t size)
{
	uint64_t t0 = mnt_now();
	char p[MNT_PATH_MAX];
	xpath(path, p, sizeof p);
	ssize_t n = lgetxattr(p, name, value, size);
	int r = n < 0 ? -errno : (int)n;
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_listxattr(const char *path, char *list, size_t size)
{
	uint64_t t0 = mnt_now();
	char p[MNT_PATH_MAX];
	xpath(path, p, sizeof p);
	ssize_t n = llistxattr(p, list, size);
	int r = n < 0 ? -errno : (int)n;
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_removexattr(const char *path, const char *name)
{
	uint64_t t0 = mnt_now();
	char p[MNT_PATH_MAX];
	xpath(path, p, sizeof p);
	int r = neg(lremovexattr(p, name));
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

/* ---- directories ---- */

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	int r = 0;
	struct dir_handle *d = calloc(1, sizeof *d + strlen(path) + 1);
	int fd = d ? openat(fs_of()->src_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (!d) {
		r = -ENOMEM;
	} else if (fd < 0 || !(d->d = fdopendir(fd))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		free(d);
	} else {
		d->kind = HANDLE_DIR;
		strcpy(d->fpath, path);
		fi->fh = (uintptr_t)d;
	}
	meta(path, NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)flags;
	uint64_t t0 = mnt_now();
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	if (offset != d->offset) {
		seekdir(d->d, offset);
		d->entry = NULL;
		d->offset = offset;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->d);
			if (!d->entry)
				break;
		}
		struct stat st = {.st_ino = d->entry->d_ino, .st_mode = (mode_t)d->entry->d_type << 12};
		off_t next = telldir(d->d);
		if (filler(buf, d->entry->d_name, &st, next, 0))
			break;
		d->entry = NULL;
		d->offset = next;
	}
	int r = errno && !d->entry ? -errno : 0;
	meta(path_of(path, fi), NULL, LOG_C_META_OTHER, t0, r);
	return r;
}

static int op_releasedir(const char *path, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	meta(path_of(path, fi), NULL, LOG_C_META_OTHER, t0, 0);
	closedir(d->d);
	free(d);
	return 0;
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	uint64_t t0 = mnt_now();
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	int fd = dirfd(d->d);
	int r = neg(datasync ? fdatasync(fd) : fsync(fd));
	meta(path_of(path, fi), NULL, LOG_C_FSYNCS, t0, r);
	return r;
}

/* ---- files ---- */

/* The kernel resolved every component on its side (a symlink in the mount is followed there,
 * never sent here), so a symlink met below SRC now was put there by someone working on SRC
 * directly after the lookup: refused, so an open never leaves SRC. */
static int open_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	/* openat2 takes permission bits only; FUSE passes the file type too */
	struct open_how how = {.flags = (uint64_t)(unsigned)flags, .mode = mode & 07777,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS) /* before Linux 5.6 */
		return openat(dirfd, path, flags | O_NOFOLLOW, mode);
	return (int)fd;
}

static int open_common(const char *path, struct fuse_file_info *fi, int create, mode_t mode)
{
	struct mnt_fs *fs = fs_of();
	uint64_t t0 = mnt_now();
	char p[MNT_PATH_MAX];
	full_path(fs, path, p, sizeof p);
	size_t n = strlen(p) + 1;
	struct handle *h = malloc(sizeof *h + n);
	int r = 0;
	if (!h) {
		r = -ENOMEM;
	} else {
		struct creds c;
		if (create)
			creds_enter(&c);
		int flags = (fi->flags & ~O_NOCTTY) | O_CLOEXEC | (create ? O_CREAT : 0);
		h->fd = open_beneath(fs->src_fd, rel(path), flags, create ? mode : 0);
		if (create)
			creds_leave(&c);
		if (h->fd < 0) {
			r = -errno;
			free(h);
			h = NULL;
		} else {
			h->kind = HANDLE_FILE;
			h->flags = fi->flags;
			h->opener = (int32_t)fuse_get_context()->pid;
			h->cached = 0;
			memcpy(h->path, p, n);
			fi->fh = (uintptr_t)h;
			/* the kernel keeps no data of ours: every read and write comes here */
			fi->direct_io = fs->direct_io;
			fi->keep_cache = 0;
		}
	}
	uint64_t t1 = mnt_now();
	struct log_record *rec = h ? rec_of_handle(h) : mnt_log_record(fs->log, p, requester(NULL));
	mnt_note_meta(fs->log, rec, LOG_C_OPENS, t0, t1, r);
	return r;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	return open_common(path, fi, 0, 0);
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return open_common(path, fi, 1, mode);
}

/* Reads go from SRC's page cache into a pipe of the serving thread and from there to /dev/fuse,
 * both by splice: the data is never copied through the monitor's memory, and the splice into
 * our pipe gives the exact byte count the log needs. A pipe that still holds bytes (libfuse
 * gave up on a reply) is replaced, so no reply carries another's data. */
static __thread int read_pipe[2] = {-1, -1};
static __thread void *direct_buf; /* write_direct's aligned copy */
static __thread size_t direct_cap;

/* Serving threads come and go (libfuse keeps a few idle ones): what a thread holds goes with it. */
static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;

static void thread_gone(void *unused)
{
	(void)unused;
	if (read_pipe[0] >= 0) {
		close(read_pipe[0]);
		close(read_pipe[1]);
		read_pipe[0] = read_pipe[1] = -1;
	}
	free(direct_buf);
	direct_buf = NULL;
	direct_cap = 0;
}

static void thread_key_make(void)
{
	pthread_key_create(&thread_key, thread_gone);
}

static void thread_holds(void)
{
	pthread_once(&thread_once, thread_key_make);
	pthread_setspecific(thread_key, (void *)1);
}

static int pipe_ready(size_t size)
{
	int avail = 0;
	if (read_pipe[0] >= 0 && ioctl(read_pipe[0], FIONREAD, &avail) == 0 && avail == 0)
		return 0;
	if (read_pipe[0] >= 0) {
		close(read_pipe[0]);
		close(read_pipe[1]);
		read_pipe[0] = read_pipe[1] = -1;
	}
	if (pipe2(read_pipe, O_CLOEXEC) < 0) {
		read_pipe[0] = read_pipe[1] = -1;
		return -errno;
	}
	thread_holds();
	/* room for the largest read at any offset (1 MiB spans 257 pages when unaligned): 2 MiB
	 * where allowed (root), else the kernel's pipe-max-size (1 MiB by default) */
	if (fcntl(read_pipe[1], F_SETPIPE_SZ, 2 << 20) < 0)
		fcntl(read_pipe[1], F_SETPIPE_SZ, 1 << 20);
	(void)size;
	return 0;
}

/* The splice path; -1 (errno) when it cannot be taken, and the caller reads into memory. */
static ssize_t read_spliced(int fd, size_t size, off_t off, struct fuse_bufvec *bv)
{
	if (pipe_ready(size) < 0)
		return -1;
	loff_t pos = off;
	size_t done = 0;
	while (done < size) {
		ssize_t n = splice(fd, &pos, read_pipe[1], NULL, size - done, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !done)
			return -1;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	/* Short of the end of the file: the pipe was full. The application must get a whole read,
	 * so this one goes through memory (the pipe's bytes are dropped with the pipe). */
	struct stat st;
	if (done < size && (fstat(fd, &st) < 0 || off + (off_t)done < st.st_size)) {
		close(read_pipe[0]);
		close(read_pipe[1]);
		read_pipe[0] = read_pipe[1] = -1;
		return -1;
	}
	*bv = FUSE_BUFVEC_INIT(done);
	bv->buf[0].flags = FUSE_BUF_IS_FD;
	bv->buf[0].fd = read_pipe[0];
	return (ssize_t)done;
}

static int op_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	struct fuse_bufvec *bv = malloc(sizeof *bv);
	if (!bv)
		return -ENOMEM;
	void *mem = NULL;
	ssize_t n = -1;
	int e = 0;
	/* O_DIRECT too: the kernel splices such a file by reading it directly into the pipe's
	 * pages (no page cache), so the read still goes to the device */
	n = read_spliced(h->fd, size, off, bv);
	if (n < 0) {
		/* page-aligned, so an O_DIRECT descriptor on SRC accepts it */
		if (posix_memalign(&mem, 4096, size ? size : 1)) {
			free(bv);
			return -ENOMEM;
		}
		n = pread(h->fd, mem, size, off);
		e = errno;
		if (n >= 0) {
			*bv = FUSE_BUFVEC_INIT((size_t)n);
			bv->buf[0].mem = mem;
		}
	}
	uint64_t t1 = mnt_now();
	mnt_note_rw(fs_of()->log, rec_of_handle(h), LOG_KIND_READ, (uint64_t)off, n < 0 ? -e : n, t0, t1);
	if (n < 0) {
		free(mem);
		free(bv);
		return -e;
	}
	*bufp = bv;
	return 0;
}

/* Writes from an aligned copy when SRC's descriptor is O_DIRECT (the request's data follows
 * its header in libfuse's buffer, at no useful alignment). The copy buffer is the serving
 * thread's own, kept between requests: a fresh megabyte per request costs its page faults. */
static ssize_t write_direct(int fd, const struct fuse_bufvec *in, size_t size, off_t off)
{
	if (size > direct_cap) {
		void *mem;
		if (posix_memalign(&mem, 4096, size))
			return -ENOMEM;
		free(direct_buf);
		direct_buf = mem;
		direct_cap = size;
		thread_holds();
	}
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
	dst.buf[0].mem = direct_buf;
	struct fuse_bufvec src = *in;
	ssize_t n = fuse_buf_copy(&dst, &src, 0);
	if (n >= 0) {
		n = pwrite(fd, direct_buf, (size_t)n, off);
		if (n < 0)
			n = -errno;
	}
	return n;
}

static int op_write_buf(const char *path, struct fuse_bufvec *buf, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	size_t size = fuse_buf_size(buf);
	ssize_t n;
	if (h->flags & O_DIRECT) {
		n = write_direct(h->fd, buf, size, off);
	} else if (buf->count == 1 && !(buf->buf[0].flags & FUSE_BUF_IS_FD)) {
		n = pwrite(h->fd, buf->buf[0].mem, size, off);
		if (n < 0)
			n = -errno;
	} else {
		struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
		dst.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		dst.buf[0].fd = h->fd;
		dst.buf[0].pos = off;
		n = fuse_buf_copy(&dst, buf, FUSE_BUF_SPLICE_NONBLOCK);
	}
	uint64_t t1 = mnt_now();
	/* write-back of mapped pages is charged to the handle's opener (requester() does that) */
	mnt_note_rw(fs_of()->log, rec_of_handle(h), LOG_KIND_WRITE, (uint64_t)off, n, t0, t1);
	return (int)n; /* bytes written, or -errno */
}

static int op_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	/* what close(2) of a descriptor on SRC would report: a dup closed at once */
	int fd = dup(h->fd);
	int r = fd < 0 ? -errno : neg(close(fd));
	meta(NULL, h, LOG_C_CLOSES, t0, r);
	return r;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	int r = neg(close(h->fd));
	uint64_t t1 = mnt_now();
	/* the last reference went away: charged to the opener */
	struct log_record *rec = mnt_log_record(fs_of()->log, h->path, h->opener);
	mnt_note_meta(fs_of()->log, rec, LOG_C_META_OTHER, t0, t1, r);
	free(h);
	return 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	int r = neg(datasync ? fdatasync(h->fd) : fsync(h->fd));
	meta(NULL, h, LOG_C_FSYNCS, t0, r);
	return r;
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	int r = neg(fallocate(h->fd, mode, off, len));
	meta(NULL, h, LOG_C_META_OTHER, t0, r);
	return r;
}

static ssize_t op_copy_file_range(const char *path_in, struct fuse_file_info *fi_in, off_t off_in,
				  const char *path_out, struct fuse_file_info *fi_out, off_t off_out, size_t len,
				  int flags)
{
	(void)path_in;
	(void)path_out;
	struct handle *in = (struct handle *)(uintptr_t)fi_in->fh, *out = (struct handle *)(uintptr_t)fi_out->fh;
	uint64_t t0 = mnt_now();
	loff_t oi = off_in, oo = off_out;
	ssize_t n = copy_file_range(in->fd, &oi, out->fd, &oo, len, (unsigned)flags);
	int e = errno;
	uint64_t t1 = mnt_now();
	struct mnt_log *l = fs_of()->log;
	/* the bytes leave one file and enter the other: a read and a write */
	mnt_note_rw(l, rec_of_handle(in), LOG_KIND_READ, (uint64_t)off_in, n < 0 ? -e : n, t0, t1);
	mnt_note_rw(l, rec_of_handle(out), LOG_KIND_WRITE, (uint64_t)off_out, n < 0 ? -e : n, t0, t1);
	return n < 0 ? -e : n;
}

static off_t op_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	off_t r = lseek(h->fd, off, whence);
	if (r < 0)
		r = -errno;
	meta(NULL, h, LOG_C_SEEKS, t0, r < 0 ? (int)r : 0);
	return r;
}

/* flock(2) locks belong to the open file: our descriptor per handle is exactly that. */
static int op_flock(const char *path, struct fuse_file_info *fi, int op)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	int r = neg(flock(h->fd, op));
	meta(NULL, h, LOG_C_META_OTHER, t0, r);
	return r;
}

/* POSIX record locks are forwarded as open-file-description locks on SRC: other users of SRC see
 * them, and they conflict between handles; the owner is the handle, not the process
 * (docs/MOUNT.md). */
static int op_lock(const char *path, struct fuse_file_info *fi, int cmd, struct flock *lk)
{
	(void)path;
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	uint64_t t0 = mnt_now();
	int ofd = cmd == F_GETLK ? F_OFD_GETLK : cmd == F_SETLKW ? F_OFD_SETLKW : F_OFD_SETLK;
	lk->l_pid = 0;
	int r = neg(fcntl(h->fd, ofd, lk));
	meta(NULL, h, LOG_C_META_OTHER, t0, r);
	return r;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* every request reaches us with its path, also for files unlinked while open */
	cfg->nullpath_ok = 1;
	cfg->hard_remove = 1;
	cfg->use_ino = 1;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 0; /* decided per open (struct mnt_fs.direct_io) */
	cfg->kernel_cache = 0;
	cfg->auto_cache = 0;
	/* one request per application write up to 1 MiB */
	conn->max_write = 1u << 20;
	conn->max_read = MNT_MAX_READ;
	conn->max_readahead = 1u << 20;
	conn->want |= conn->capable & (FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_MOVE);
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	return fuse_get_context()->private_data;
}

static const struct fuse_operations ops = {
	.init = op_init,
	.getattr = op_getattr,
	.access = op_access,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.symlink = op_symlink,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.rename = op_rename,
	.link = op_link,
	.chmod = op_chmod,
	.chown = op_chown,
	.truncate = op_truncate,
	.utimens = op_utimens,
	.open = op_open,
	.create = op_create,
	.read_buf = op_read_buf,
	.write_buf = op_write_buf,
	.statfs = op_statfs,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.fallocate = op_fallocate,
	.copy_file_range = op_copy_file_range,
	.lseek = op_lseek,
	.flock = op_flock,
	.lock = op_lock,
};

const struct fuse_operations *mnt_operations(void)
{
	return &ops;
}
