/* SPDX-License-Identifier: MIT */
/*
 * POSIX wrappers: open family, close, read/write family, vectors, positioned I/O, seek, sync,
 * truncate/allocate/advise, mmap, the stat family, path metadata, dup family, fcntl and data
 * moves (copy_file_range, sendfile). Each wrapper is pre-check, real call, post-helper. An
 * untracked descriptor or an excluded path costs one table load and a branch.
 *
 * The file position is modelled per open file description (core.c), so read/write offsets
 * are known without an lseek of our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capture/core.h"

/* ---------- open ---------- */

static mode_t open_mode(int flags, va_list ap)
{
	return __OPEN_NEEDS_MODE(flags) ? (mode_t)va_arg(ap, int) : 0;
}

/* O_TRUNC empties the file: whatever is buffered for it was written before, so it goes first */
#define CAP_OPEN_BODY(call, dirfd, path, flags)                \
	if (CAP_UNLIKELY(agg_on) && ((flags) & O_TRUNC))       \
		agg_before_path(dirfd, path, 0, 0);            \
	uint64_t t0 = cap_now();                               \
	int fd = call;                                         \
	uint64_t t1 = cap_now();                               \
	cap_note_open(dirfd, path, flags, fd, t0, t1);

CAP_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	if (!cap_active())
		return REAL(open)(path, flags, mode);
	CAP_OPEN_BODY(real.open(path, flags, mode), AT_FDCWD, path, flags)
	return fd;
}

CAP_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	if (!cap_active())
		return REAL(open64)(path, flags, mode);
	CAP_OPEN_BODY(real.open64(path, flags, mode), AT_FDCWD, path, flags)
	return fd;
}

CAP_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	if (!cap_active())
		return REAL(openat)(dirfd, path, flags, mode);
	CAP_OPEN_BODY(real.openat(dirfd, path, flags, mode), dirfd, path, flags)
	return fd;
}

CAP_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	if (!cap_active())
		return REAL(openat64)(dirfd, path, flags, mode);
	CAP_OPEN_BODY(real.openat64(dirfd, path, flags, mode), dirfd, path, flags)
	return fd;
}

CAP_EXPORT int creat(const char *path, mode_t mode)
{
	if (!cap_active())
		return REAL(creat)(path, mode);
	CAP_OPEN_BODY(real.creat(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
	return fd;
}

CAP_EXPORT int creat64(const char *path, mode_t mode)
{
	if (!cap_active())
		return REAL(creat64)(path, mode);
	CAP_OPEN_BODY(real.creat64(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
	return fd;
}

/* _FORTIFY_SOURCE forms, used when the compiler cannot see the flags */
CAP_EXPORT int __open_2(const char *path, int flags)
{
	if (!cap_active())
		return REAL(__open_2)(path, flags);
	CAP_OPEN_BODY(real.__open_2(path, flags), AT_FDCWD, path, flags)
	return fd;
}

CAP_EXPORT int __open64_2(const char *path, int flags)
{
	if (!cap_active())
		return REAL(__open64_2)(path, flags);
	CAP_OPEN_BODY(real.__open64_2(path, flags), AT_FDCWD, path, flags)
	return fd;
}

CAP_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if (!cap_active())
		return REAL(__openat_2)(dirfd, path, flags);
	CAP_OPEN_BODY(real.__openat_2(dirfd, path, flags), dirfd, path, flags)
	return fd;
}

CAP_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	if (!cap_active())
		return REAL(__openat64_2)(dirfd, path, flags);
	CAP_OPEN_BODY(real.__openat64_2(dirfd, path, flags), dirfd, path, flags)
	return fd;
}

/* ---------- close ---------- */

CAP_EXPORT int close(int fd)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f) {
		if (cap_active() && (unsigned)fd < (unsigned)cap.nfd)
			cap_fd_close(fd); /* a stdio-only descriptor */
		return REAL(close)(fd);
	}
	/* The descriptor's state is forgotten before the real close: once the kernel has released
	 * the number, another thread's open may get it and install its own state, which a late
	 * cap_fd_close here would wipe (and a read of f->rec would see half-made). Linux releases
	 * the descriptor even when close reports an error (EINTR, EIO); EBADF means it was stale. */
	int derr = CAP_UNLIKELY(f->agg) ? agg_close(f, fd) : 0;
	struct cap_fd st = *f;
	cap_fd_close(fd);
	uint64_t t0 = cap_now();
	int r = real.close(fd);
	uint64_t t1 = cap_now();
	int e = errno;
	cap_note_meta_fd(&st, LOG_C_CLOSES, r < 0 && e == EBADF, t0, t1);
	if (CAP_UNLIKELY(derr) && r == 0) { /* a deferred write-back error (EIO, ENOSPC, EDQUOT) */
		e = derr;
		r = -1;
	}
	errno = e;
	return r;
}

/* closefrom (glibc 2.34) closes inside glibc, with its own close_range or close by close, and
 * cannot fail (glibc aborts if it could not close one): every descriptor from max(lowfd, 0) on is
 * counted closed and forgotten first, as close() does, so a number reused later by a pipe or a
 * socket is not taken for the file. The closes are counted with no time of their own. */
CAP_EXPORT void closefrom(int lowfd)
{
	if (!cap_active()) {
		REAL(closefrom)(lowfd);
		return;
	}
	int e = errno;
	uint64_t t0 = cap_now();
	for (int fd = lowfd > 0 ? lowfd : 0; fd < cap.fd_top && fd < cap.nfd; fd++) {
		struct cap_fd *f = &cap.fds[fd];
		if (!f->rec && !f->srec)
			continue;
		if (CAP_UNLIKELY(f->agg) && f->rec)
			agg_close(f, fd);
		struct cap_fd st = *f;
		cap_fd_close(fd);
		if (st.rec)
			cap_note_meta_fd(&st, LOG_C_CLOSES, 0, t0, t0);
	}
	errno = e;
	REAL(closefrom)(lowfd);
}

CAP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!cap_active())
		return REAL(close_range)(first, last, flags);
	if (CAP_UNLIKELY(agg_on) && !(flags & CLOSE_RANGE_CLOEXEC))
		for (unsigned fd = first; fd <= last && fd < (unsigned)cap.fd_top && fd < (unsigned)cap.nfd; fd++)
			if (cap.fds[fd].agg && cap.fds[fd].rec)
				agg_close(&cap.fds[fd], (int)fd);
	uint64_t t0 = cap_now();
	int r = real.close_range(first, last, flags);
	uint64_t t1 = cap_now();
	int e = errno;
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) {
		unsigned end = last >= (unsigned)cap.nfd ? (unsigned)cap.nfd - 1 : last;
		for (unsigned fd = first; fd <= end && fd < (unsigned)cap.fd_top; fd++) {
			struct cap_fd *f = &cap.fds[fd];
			if (f->rec)
				cap_note_meta_fd(f, LOG_C_CLOSES, 0, t0, t1);
			cap_fd_close((int)fd);
		}
	}
	errno = e;
	return r;
}

/* ---------- read and write ---------- */

static inline uintptr_t iov_base0(const struct iovec *iov, int n)
{
	return n > 0 && iov ? (uintptr_t)iov[0].iov_base : 0;
}

#define CAP_RW_BODY(call, kind, off, mem)                      \
	uint64_t t0 = cap_now();                               \
	ssize_t r = call;                                      \
	uint64_t t1 = cap_now();                               \
	cap_note_rw_inline(f, kind, off, r, mem, t0, t1);

CAP_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(read)(fd, buf, n);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH | AGG_SYNCPOS);
	CAP_RW_BODY(real.read(fd, buf, n), LOG_KIND_READ, -1, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(write)(fd, buf, n);
	if (CAP_UNLIKELY(f->agg)) {
		struct iovec v = {(void *)buf, n};
		ssize_t ar;
		if (agg_write(f, fd, &v, 1, -1, 0, &ar))
			return ar;
	}
	CAP_RW_BODY(real.write(fd, buf, n), LOG_KIND_WRITE, -1, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__read_chk)(fd, buf, n, buflen);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH | AGG_SYNCPOS);
	CAP_RW_BODY(real.__read_chk(fd, buf, n, buflen), LOG_KIND_READ, -1, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pread)(fd, buf, n, off);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.pread(fd, buf, n, off), LOG_KIND_READ, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pread64)(fd, buf, n, off);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.pread64(fd, buf, n, off), LOG_KIND_READ, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__pread_chk)(fd, buf, n, off, buflen);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.__pread_chk(fd, buf, n, off, buflen), LOG_KIND_READ, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__pread64_chk)(fd, buf, n, off, buflen);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.__pread64_chk(fd, buf, n, off, buflen), LOG_KIND_READ, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwrite)(fd, buf, n, off);
	if (CAP_UNLIKELY(f->agg)) {
		struct iovec v = {(void *)buf, n};
		ssize_t ar;
		if (agg_write(f, fd, &v, 1, off, 1, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwrite(fd, buf, n, off), LOG_KIND_WRITE, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwrite64)(fd, buf, n, off);
	if (CAP_UNLIKELY(f->agg)) {
		struct iovec v = {(void *)buf, n};
		ssize_t ar;
		if (agg_write(f, fd, &v, 1, off, 1, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwrite64(fd, buf, n, off), LOG_KIND_WRITE, off, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(readv)(fd, iov, cnt);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH | AGG_SYNCPOS);
	CAP_RW_BODY(real.readv(fd, iov, cnt), LOG_KIND_READ, -1, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(writev)(fd, iov, cnt);
	if (CAP_UNLIKELY(f->agg)) {
		ssize_t ar;
		if (agg_write(f, fd, iov, cnt, -1, 0, &ar))
			return ar;
	}
	CAP_RW_BODY(real.writev(fd, iov, cnt), LOG_KIND_WRITE, -1, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(preadv)(fd, iov, cnt, off);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.preadv(fd, iov, cnt, off), LOG_KIND_READ, off, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(preadv64)(fd, iov, cnt, off);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_RW_BODY(real.preadv64(fd, iov, cnt, off), LOG_KIND_READ, off, iov_base0(iov, cnt))
	return r;
}

/* preadv2/pwritev2 with offset -1 use and move the file position, like readv/writev. */
CAP_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(preadv2)(fd, iov, cnt, off, flags);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, off < 0 ? AGG_FLUSH | AGG_SYNCPOS : AGG_FLUSH);
	CAP_RW_BODY(real.preadv2(fd, iov, cnt, off, flags), LOG_KIND_READ, off < 0 ? -1 : off, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(preadv64v2)(fd, iov, cnt, off, flags);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, off < 0 ? AGG_FLUSH | AGG_SYNCPOS : AGG_FLUSH);
	CAP_RW_BODY(real.preadv64v2(fd, iov, cnt, off, flags), LOG_KIND_READ, off < 0 ? -1 : off,
		    iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwritev)(fd, iov, cnt, off);
	if (CAP_UNLIKELY(f->agg)) {
		ssize_t ar;
		if (agg_write(f, fd, iov, cnt, off, 1, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwritev(fd, iov, cnt, off), LOG_KIND_WRITE, off, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwritev64)(fd, iov, cnt, off);
	if (CAP_UNLIKELY(f->agg)) {
		ssize_t ar;
		if (agg_write(f, fd, iov, cnt, off, 1, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwritev64(fd, iov, cnt, off), LOG_KIND_WRITE, off, iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwritev2)(fd, iov, cnt, off, flags);
	if (CAP_UNLIKELY(f->agg)) {
		ssize_t ar;
		if (flags) /* RWF_SYNC, RWF_APPEND ...: the kernel's call, after the buffered bytes */
			agg_before(f, fd, AGG_FLUSH | AGG_SYNCPOS);
		else if (agg_write(f, fd, iov, cnt, off < 0 ? -1 : off, off >= 0, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwritev2(fd, iov, cnt, off, flags), LOG_KIND_WRITE, off < 0 ? -1 : off,
		    iov_base0(iov, cnt))
	return r;
}

CAP_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(pwritev64v2)(fd, iov, cnt, off, flags);
	if (CAP_UNLIKELY(f->agg)) {
		ssize_t ar;
		if (flags) /* RWF_SYNC, RWF_APPEND ...: the kernel's call, after the buffered bytes */
			agg_before(f, fd, AGG_FLUSH | AGG_SYNCPOS);
		else if (agg_write(f, fd, iov, cnt, off < 0 ? -1 : off, off >= 0, &ar))
			return ar;
	}
	CAP_RW_BODY(real.pwritev64v2(fd, iov, cnt, off, flags), LOG_KIND_WRITE, off < 0 ? -1 : off,
		    iov_base0(iov, cnt))
	return r;
}

/* ---------- seek, sync, size ---------- */

CAP_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(lseek)(fd, off, whence);
	if (CAP_UNLIKELY(f->agg)) /* the end, data and holes include buffered bytes */
		agg_before(f, fd, whence == SEEK_SET || whence == SEEK_CUR ? AGG_SYNCPOS : AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	off_t r = real.lseek(fd, off, whence);
	uint64_t t1 = cap_now();
	if (r >= 0)
		cap.ofds[f->ofd].pos = (uint64_t)r;
	cap_note_meta_fd(f, LOG_C_SEEKS, r < 0, t0, t1);
	return r;
}

CAP_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(lseek64)(fd, off, whence);
	if (CAP_UNLIKELY(f->agg)) /* the end, data and holes include buffered bytes */
		agg_before(f, fd, whence == SEEK_SET || whence == SEEK_CUR ? AGG_SYNCPOS : AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	off64_t r = real.lseek64(fd, off, whence);
	uint64_t t1 = cap_now();
	if (r >= 0)
		cap.ofds[f->ofd].pos = (uint64_t)r;
	cap_note_meta_fd(f, LOG_C_SEEKS, r < 0, t0, t1);
	return r;
}

#define CAP_FD_META(call, which)                               \
	uint64_t t0 = cap_now();                               \
	int r = call;                                          \
	uint64_t t1 = cap_now();                               \
	cap_note_meta_fd(f, which, r != 0, t0, t1);

CAP_EXPORT int fsync(int fd)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fsync)(fd);
	int derr = CAP_UNLIKELY(f->agg) ? agg_before(f, fd, AGG_FLUSH | AGG_DURABLE | AGG_PACKSYNC) : 0;
	CAP_FD_META(real.fsync(fd), LOG_C_FSYNCS)
	if (CAP_UNLIKELY(derr) && r == 0) {
		/* a write-back failed after the write had returned: reported here, as the kernel would */
		errno = derr;
		r = -1;
	}
	return r;
}

CAP_EXPORT int fdatasync(int fd)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fdatasync)(fd);
	int derr = CAP_UNLIKELY(f->agg) ? agg_before(f, fd, AGG_FLUSH | AGG_DURABLE | AGG_PACKSYNC) : 0;
	CAP_FD_META(real.fdatasync(fd), LOG_C_FSYNCS)
	if (CAP_UNLIKELY(derr) && r == 0) {
		/* a write-back failed after the write had returned: reported here, as the kernel would */
		errno = derr;
		r = -1;
	}
	return r;
}

CAP_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(sync_file_range)(fd, off, n, flags);
	int derr = CAP_UNLIKELY(f->agg) ? agg_before(f, fd, AGG_FLUSH | AGG_DURABLE | AGG_PACKSYNC) : 0;
	CAP_FD_META(real.sync_file_range(fd, off, n, flags), LOG_C_FSYNCS)
	if (CAP_UNLIKELY(derr) && r == 0) {
		/* a write-back failed after the write had returned: reported here, as the kernel would */
		errno = derr;
		r = -1;
	}
	return r;
}

/* syncfs and sync: everything buffered is written back first, so they cover it. */
CAP_EXPORT int syncfs(int fd)
{
	if (CAP_UNLIKELY(agg_on) && cap_active())
		agg_flush_all(1);
	return REAL(syncfs)(fd);
}

CAP_EXPORT void sync(void)
{
	if (CAP_UNLIKELY(agg_on) && cap_active())
		agg_flush_all(1);
	REAL(sync)();
}

CAP_EXPORT int ftruncate(int fd, off_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(ftruncate)(fd, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.ftruncate(fd, len), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int ftruncate64(int fd, off64_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(ftruncate64)(fd, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.ftruncate64(fd, len), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fallocate)(fd, mode, off, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.fallocate(fd, mode, off, len), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fallocate64)(fd, mode, off, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.fallocate64(fd, mode, off, len), LOG_C_META_OTHER)
	return r;
}

/* posix_fadvise and posix_fallocate return an error number instead of setting errno. */
CAP_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int adv)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(posix_fadvise)(fd, off, len, adv);
	CAP_FD_META(real.posix_fadvise(fd, off, len, adv), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int adv)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(posix_fadvise64)(fd, off, len, adv);
	CAP_FD_META(real.posix_fadvise64(fd, off, len, adv), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(posix_fallocate)(fd, off, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.posix_fallocate(fd, off, len), LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(posix_fallocate64)(fd, off, len);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.posix_fallocate64(fd, off, len), LOG_C_META_OTHER)
	return r;
}

/* ---------- mmap: a small table ties munmap/msync back to the file ---------- */

#define CAP_MAPS 1024
static struct {
	uintptr_t addr;
	size_t len;
	struct log_record *rec;
} maps[CAP_MAPS];

/* whether map_remember ever filled a slot (a fork child need not fault the table in to zero it) */
static int maps_used;

void cap_maps_reset(void)
{
	if (__atomic_load_n(&maps_used, __ATOMIC_RELAXED))
		memset(maps, 0, sizeof maps);
}

static void map_remember(void *addr, size_t len, struct log_record *rec)
{
	for (int i = 0; i < CAP_MAPS; i++) {
		uintptr_t zero = 0;
		if (__atomic_load_n(&maps[i].addr, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&maps[i].addr, &zero, (uintptr_t)addr, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			if (!__atomic_load_n(&maps_used, __ATOMIC_RELAXED))
				__atomic_store_n(&maps_used, 1, __ATOMIC_RELAXED);
			maps[i].len = len;
			__atomic_store_n(&maps[i].rec, rec, __ATOMIC_RELEASE);
			return;
		}
	}
	__atomic_fetch_add(&cap.hdr->mmap_table_full, 1, __ATOMIC_RELAXED);
}

static struct log_record *map_find(uintptr_t a, int forget)
{
	for (int i = 0; i < CAP_MAPS; i++) {
		uintptr_t b = __atomic_load_n(&maps[i].addr, __ATOMIC_ACQUIRE);
		if (b && a >= b && a < b + maps[i].len) {
			struct log_record *r = __atomic_load_n(&maps[i].rec, __ATOMIC_ACQUIRE);
			if (forget && a == b) {
				maps[i].rec = NULL;
				__atomic_store_n(&maps[i].addr, 0, __ATOMIC_RELEASE);
			}
			return r;
		}
	}
	return NULL;
}

static void *mmap_common(void *r, int fd, size_t len, uint64_t t0, uint64_t t1)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return r;
	cap_note_meta_fd(f, LOG_C_MMAPS, r == MAP_FAILED, t0, t1);
	if (r != MAP_FAILED)
		map_remember(r, len, f->rec);
	if (CAP_UNLIKELY(f->agg) && r != MAP_FAILED)
		agg_mmap(f, fd, r);
	return r;
}

CAP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd < 0 || (flags & MAP_ANONYMOUS) || !cap_fd_get(fd))
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	if (CAP_UNLIKELY(cap.fds[fd].agg)) /* the mapping shows the file: buffered bytes go first */
		agg_before(&cap.fds[fd], fd, AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	void *r = real.mmap(addr, len, prot, flags, fd, off);
	uint64_t t1 = cap_now();
	int e = errno;
	mmap_common(r, fd, len, t0, t1);
	errno = e;
	return r;
}

CAP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (fd < 0 || (flags & MAP_ANONYMOUS) || !cap_fd_get(fd))
		return REAL(mmap64)(addr, len, prot, flags, fd, off);
	if (CAP_UNLIKELY(cap.fds[fd].agg)) /* the mapping shows the file: buffered bytes go first */
		agg_before(&cap.fds[fd], fd, AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	void *r = real.mmap64(addr, len, prot, flags, fd, off);
	uint64_t t1 = cap_now();
	int e = errno;
	mmap_common(r, fd, len, t0, t1);
	errno = e;
	return r;
}

CAP_EXPORT int munmap(void *addr, size_t len)
{
	struct log_record *rec = cap_active() ? map_find((uintptr_t)addr, 1) : NULL;
	if (CAP_UNLIKELY(agg_on) && rec)
		agg_munmap(addr);
	if (!rec)
		return REAL(munmap)(addr, len);
	uint64_t t0 = cap_now();
	int r = real.munmap(addr, len);
	uint64_t t1 = cap_now();
	if (r)
		cap_note_failure(rec, errno);
	cap_note_meta(rec, r ? LOG_C_ERR_META : LOG_C_META_OTHER, t0, t1, cap_mt());
	return r;
}

CAP_EXPORT int msync(void *addr, size_t len, int flags)
{
	struct log_record *rec = cap_active() ? map_find((uintptr_t)addr, 0) : NULL;
	if (!rec)
		return REAL(msync)(addr, len, flags);
	uint64_t t0 = cap_now();
	int r = real.msync(addr, len, flags);
	uint64_t t1 = cap_now();
	if (r)
		cap_note_failure(rec, errno);
	cap_note_meta(rec, r ? LOG_C_ERR_SYNCS : LOG_C_FSYNCS, t0, t1, cap_mt());
	return r;
}

/* ---------- stat family ---------- */

#define CAP_PATH_META(call, dirfd, path, which)                \
	uint64_t t0 = cap_now();                               \
	int r = call;                                          \
	uint64_t t1 = cap_now();                               \
	cap_note_meta_path(dirfd, path, which, r != 0, t0, t1);

CAP_EXPORT int stat(const char *path, struct stat *st)
{
	if (!cap_active())
		return REAL(stat)(path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.stat(path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int lstat(const char *path, struct stat *st)
{
	if (!cap_active())
		return REAL(lstat)(path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0);
	CAP_PATH_META(real.lstat(path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int stat64(const char *path, struct stat64 *st)
{
	if (!cap_active())
		return REAL(stat64)(path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.stat64(path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	if (!cap_active())
		return REAL(lstat64)(path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0);
	CAP_PATH_META(real.lstat64(path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	if (!cap_active())
		return REAL(__xstat)(ver, path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.__xstat(ver, path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	if (!cap_active())
		return REAL(__lxstat)(ver, path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0);
	CAP_PATH_META(real.__lxstat(ver, path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	if (!cap_active())
		return REAL(__xstat64)(ver, path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.__xstat64(ver, path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	if (!cap_active())
		return REAL(__lxstat64)(ver, path, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0);
	CAP_PATH_META(real.__lxstat64(ver, path, st), AT_FDCWD, path, LOG_C_STATS)
	return r;
}

CAP_EXPORT int fstat(int fd, struct stat *st)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fstat)(fd, st);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.fstat(fd, st), LOG_C_STATS)
	return r;
}

CAP_EXPORT int fstat64(int fd, struct stat64 *st)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(fstat64)(fd, st);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.fstat64(fd, st), LOG_C_STATS)
	return r;
}

CAP_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__fxstat)(ver, fd, st);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.__fxstat(ver, fd, st), LOG_C_STATS)
	return r;
}

CAP_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__fxstat64)(ver, fd, st);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fd, AGG_FLUSH);
	CAP_FD_META(real.__fxstat64(ver, fd, st), LOG_C_STATS)
	return r;
}

/* fstatat-style calls with AT_EMPTY_PATH and "" act on dirfd itself. */
static void note_at_stat(int dirfd, const char *path, int flags, int failed, uint64_t t0, uint64_t t1)
{
	if ((flags & AT_EMPTY_PATH) && path && !path[0]) {
		struct cap_fd *f = cap_fd_get(dirfd);
		if (f)
			cap_note_meta_fd(f, LOG_C_STATS, failed, t0, t1);
		return;
	}
	cap_note_meta_path(dirfd, path, LOG_C_STATS, failed, t0, t1);
}

#define CAP_AT_STAT(call, dirfd, path, flags)                  \
	uint64_t t0 = cap_now();                               \
	int r = call;                                          \
	uint64_t t1 = cap_now();                               \
	int e = errno;                                         \
	note_at_stat(dirfd, path, flags, r != 0, t0, t1);      \
	errno = e;

CAP_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (!cap_active())
		return REAL(fstatat)(dirfd, path, st, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, flags, 0);
	CAP_AT_STAT(real.fstatat(dirfd, path, st, flags), dirfd, path, flags)
	return r;
}

CAP_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	if (!cap_active())
		return REAL(fstatat64)(dirfd, path, st, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, flags, 0);
	CAP_AT_STAT(real.fstatat64(dirfd, path, st, flags), dirfd, path, flags)
	return r;
}

CAP_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	if (!cap_active())
		return REAL(__fxstatat)(ver, dirfd, path, st, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, flags, 0);
	CAP_AT_STAT(real.__fxstatat(ver, dirfd, path, st, flags), dirfd, path, flags)
	return r;
}

CAP_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	if (!cap_active())
		return REAL(__fxstatat64)(ver, dirfd, path, st, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, flags, 0);
	CAP_AT_STAT(real.__fxstatat64(ver, dirfd, path, st, flags), dirfd, path, flags)
	return r;
}

CAP_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *st)
{
	if (!cap_active())
		return REAL(statx)(dirfd, path, flags, mask, st);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, flags, 0);
	CAP_AT_STAT(real.statx(dirfd, path, flags, mask, st), dirfd, path, flags)
	return r;
}

/* ---------- path metadata ---------- */

CAP_EXPORT int access(const char *path, int mode)
{
	if (!cap_active())
		return REAL(access)(path, mode);
	CAP_PATH_META(real.access(path, mode), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	if (!cap_active())
		return REAL(faccessat)(dirfd, path, mode, flags);
	CAP_PATH_META(real.faccessat(dirfd, path, mode, flags), dirfd, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int unlink(const char *path)
{
	if (!cap_active())
		return REAL(unlink)(path);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 1);
	CAP_PATH_META(real.unlink(path), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	if (!cap_active())
		return REAL(unlinkat)(dirfd, path, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(dirfd, path, AT_SYMLINK_NOFOLLOW, 1);
	CAP_PATH_META(real.unlinkat(dirfd, path, flags), dirfd, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int rmdir(const char *path)
{
	if (!cap_active())
		return REAL(rmdir)(path);
	CAP_PATH_META(real.rmdir(path), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int mkdir(const char *path, mode_t mode)
{
	if (!cap_active())
		return REAL(mkdir)(path, mode);
	CAP_PATH_META(real.mkdir(path, mode), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	if (!cap_active())
		return REAL(mkdirat)(dirfd, path, mode);
	CAP_PATH_META(real.mkdirat(dirfd, path, mode), dirfd, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int truncate(const char *path, off_t len)
{
	if (!cap_active())
		return REAL(truncate)(path, len);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.truncate(path, len), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int truncate64(const char *path, off64_t len)
{
	if (!cap_active())
		return REAL(truncate64)(path, len);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, 0, 0);
	CAP_PATH_META(real.truncate64(path, len), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}

CAP_EXPORT int rename(const char *from, const char *to)
{
	if (!cap_active())
		return REAL(rename)(from, to);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, from, AT_SYMLINK_NOFOLLOW, 0);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, to, AT_SYMLINK_NOFOLLOW, 0); /* a file replaced by the rename */
	CAP_PATH_META(real.rename(from, to), AT_FDCWD, from, LOG_C_RENAMES)
	if (CAP_UNLIKELY(agg_on) && r == 0)
		agg_after_rename(AT_FDCWD, to);
	return r;
}

CAP_EXPORT int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	if (!cap_active())
		return REAL(renameat)(fromfd, from, tofd, to);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(fromfd, from, AT_SYMLINK_NOFOLLOW, 0);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(tofd, to, AT_SYMLINK_NOFOLLOW, 0); /* a file replaced by the rename */
	CAP_PATH_META(real.renameat(fromfd, from, tofd, to), fromfd, from, LOG_C_RENAMES)
	if (CAP_UNLIKELY(agg_on) && r == 0)
		agg_after_rename(tofd, to);
	return r;
}

CAP_EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
{
	if (!cap_active())
		return REAL(renameat2)(fromfd, from, tofd, to, flags);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(fromfd, from, AT_SYMLINK_NOFOLLOW, 0);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(tofd, to, AT_SYMLINK_NOFOLLOW, 0); /* a file replaced by the rename */
	CAP_PATH_META(real.renameat2(fromfd, from, tofd, to, flags), fromfd, from, LOG_C_RENAMES)
	if (CAP_UNLIKELY(agg_on) && r == 0)
		agg_after_rename(tofd, to);
	return r;
}

/* ---------- descriptors ---------- */

CAP_EXPORT int dup(int fd)
{
	if (!cap_active())
		return REAL(dup)(fd);
	uint64_t t0 = cap_now();
	int r = real.dup(fd);
	uint64_t t1 = cap_now();
	if (r >= 0)
		cap_fd_dup(fd, r, t0, t1);
	return r;
}

CAP_EXPORT int dup2(int fd, int fd2)
{
	if (!cap_active())
		return REAL(dup2)(fd, fd2);
	if (CAP_UNLIKELY(agg_on) && fd != fd2 && cap_fd_get(fd2) && cap.fds[fd2].agg)
		agg_close(&cap.fds[fd2], fd2); /* the implicit close of fd2 */
	uint64_t t0 = cap_now();
	int r = real.dup2(fd, fd2);
	uint64_t t1 = cap_now();
	if (r >= 0 && fd != fd2)
		cap_fd_dup(fd, r, t0, t1);
	return r;
}

CAP_EXPORT int dup3(int fd, int fd2, int flags)
{
	if (!cap_active())
		return REAL(dup3)(fd, fd2, flags);
	if (CAP_UNLIKELY(agg_on) && fd != fd2 && cap_fd_get(fd2) && cap.fds[fd2].agg)
		agg_close(&cap.fds[fd2], fd2); /* the implicit close of fd2 */
	uint64_t t0 = cap_now();
	int r = real.dup3(fd, fd2, flags);
	uint64_t t1 = cap_now();
	if (r >= 0)
		cap_fd_dup(fd, r, t0, t1);
	return r;
}

/* fcntl's third argument is an int or a pointer; on x86-64 both travel in the same register,
 * so it is taken as a pointer-sized value and passed on unchanged. */
static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, void *arg)
{
	if (!cap_active())
		return fn(fd, cmd, arg);
	struct cap_fd *f = cap_fd_get(fd);
	if (CAP_UNLIKELY(f && f->agg) && cmd == F_SETFL &&
	    ((intptr_t)arg & (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)))
		agg_before(f, fd, AGG_FLUSH | AGG_PASS);
	uint64_t t0 = cap_now();
	int r = fn(fd, cmd, arg);
	uint64_t t1 = cap_now();
	int e = errno;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
		if (r >= 0)
			cap_fd_dup(fd, r, t0, t1);
	} else if (f) {
		if (cmd == F_SETFL && r == 0)
			cap_fd_setfl(fd, (int)(intptr_t)arg);
		cap_note_meta_fd(f, LOG_C_META_OTHER, r < 0, t0, t1);
	}
	errno = e;
	return r;
}

CAP_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl), fd, cmd, arg);
}

CAP_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}

/* ---------- data moves without read/write: the time counts on the writing side ---------- */

static void note_move(int in, int64_t in_off, int out, int64_t out_off, ssize_t r, uint64_t t0, uint64_t t1)
{
	struct cap_fd *fi = cap_fd_get(in), *fo = cap_fd_get(out);
	if (fi)
		cap_note_rw(fi, LOG_KIND_READ, in_off, r, 0, t0, fo ? t0 : t1);
	if (fo)
		cap_note_rw(fo, LOG_KIND_WRITE, out_off, r, 0, t0, t1);
}

/* Both ends written back and at their modelled positions: the kernel moves the data itself. */
static void agg_before_move(int in, int out)
{
	struct cap_fd *fi = cap_fd_get(in), *fo = cap_fd_get(out);
	if (CAP_UNLIKELY(fi && fi->agg))
		agg_before(fi, in, AGG_FLUSH | AGG_SYNCPOS);
	if (CAP_UNLIKELY(fo && fo->agg))
		agg_before(fo, out, AGG_FLUSH | AGG_SYNCPOS);
}

typedef ssize_t (*cap_move_fn)(int, off64_t *, int, off64_t *, size_t, unsigned int);

/* copy_file_range and splice have one signature and one meaning here: a read of the input file
 * and a write of the output file, each at its explicit offset or at the moving position. */
static ssize_t move_common(cap_move_fn fn, int in, off64_t *in_off, int out, off64_t *out_off, size_t len,
			   unsigned int flags)
{
	if (!cap_fd_get(in) && !cap_fd_get(out))
		return fn(in, in_off, out, out_off, len, flags);
	agg_before_move(in, out);
	int64_t io = in_off ? *in_off : -1, oo = out_off ? *out_off : -1;
	uint64_t t0 = cap_now();
	ssize_t r = fn(in, in_off, out, out_off, len, flags);
	uint64_t t1 = cap_now();
	note_move(in, io, out, oo, r, t0, t1);
	return r;
}

CAP_EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t len,
				   unsigned int flags)
{
	return move_common(REAL(copy_file_range), in, in_off, out, out_off, len, flags);
}

CAP_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	if (!cap_fd_get(in) && !cap_fd_get(out))
		return REAL(sendfile)(out, in, off, n);
	agg_before_move(in, out);
	int64_t io = off ? *off : -1;
	uint64_t t0 = cap_now();
	ssize_t r = real.sendfile(out, in, off, n);
	uint64_t t1 = cap_now();
	note_move(in, io, out, -1, r, t0, t1);
	return r;
}

CAP_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	if (!cap_fd_get(in) && !cap_fd_get(out))
		return REAL(sendfile64)(out, in, off, n);
	agg_before_move(in, out);
	int64_t io = off ? *off : -1;
	uint64_t t0 = cap_now();
	ssize_t r = real.sendfile64(out, in, off, n);
	uint64_t t1 = cap_now();
	note_move(in, io, out, -1, r, t0, t1);
	return r;
}

/* splice moves data between a file and a pipe: the file side is a read or a write. */
CAP_EXPORT ssize_t splice(int in, off64_t *in_off, int out, off64_t *out_off, size_t len, unsigned int flags)
{
	return move_common(REAL(splice), in, in_off, out, out_off, len, flags);
}

/* ---------- temporary files: opened inside libc, so the open(2) is accounted here ---------- */

#define CAP_MKSTEMP(call, tmpl, flags)                         \
	uint64_t t0 = cap_now();                               \
	int fd = call;                                         \
	uint64_t t1 = cap_now();                               \
	cap_note_open(AT_FDCWD, tmpl, O_RDWR | O_CREAT | O_EXCL | (flags), fd, t0, t1);

CAP_EXPORT int mkstemp(char *tmpl)
{
	if (!cap_active())
		return REAL(mkstemp)(tmpl);
	CAP_MKSTEMP(real.mkstemp(tmpl), tmpl, 0)
	return fd;
}

CAP_EXPORT int mkstemp64(char *tmpl)
{
	if (!cap_active())
		return REAL(mkstemp64)(tmpl);
	CAP_MKSTEMP(real.mkstemp64(tmpl), tmpl, 0)
	return fd;
}

CAP_EXPORT int mkostemp(char *tmpl, int flags)
{
	if (!cap_active())
		return REAL(mkostemp)(tmpl, flags);
	CAP_MKSTEMP(real.mkostemp(tmpl, flags), tmpl, flags)
	return fd;
}

CAP_EXPORT int mkostemp64(char *tmpl, int flags)
{
	if (!cap_active())
		return REAL(mkostemp64)(tmpl, flags);
	CAP_MKSTEMP(real.mkostemp64(tmpl, flags), tmpl, flags)
	return fd;
}

CAP_EXPORT int mkstemps(char *tmpl, int suffixlen)
{
	if (!cap_active())
		return REAL(mkstemps)(tmpl, suffixlen);
	CAP_MKSTEMP(real.mkstemps(tmpl, suffixlen), tmpl, 0)
	return fd;
}

CAP_EXPORT int mkstemps64(char *tmpl, int suffixlen)
{
	if (!cap_active())
		return REAL(mkstemps64)(tmpl, suffixlen);
	CAP_MKSTEMP(real.mkstemps64(tmpl, suffixlen), tmpl, 0)
	return fd;
}

CAP_EXPORT int mkostemps(char *tmpl, int suffixlen, int flags)
{
	if (!cap_active())
		return REAL(mkostemps)(tmpl, suffixlen, flags);
	CAP_MKSTEMP(real.mkostemps(tmpl, suffixlen, flags), tmpl, flags)
	return fd;
}

CAP_EXPORT int mkostemps64(char *tmpl, int suffixlen, int flags)
{
	if (!cap_active())
		return REAL(mkostemps64)(tmpl, suffixlen, flags);
	CAP_MKSTEMP(real.mkostemps64(tmpl, suffixlen, flags), tmpl, flags)
	return fd;
}

/* ---------- POSIX shared memory: glibc opens and unlinks /dev/shm/NAME itself ---------- */

/* The file shm_open(name) names, as glibc's __shm_get_name builds it: the name without its
 * leading slashes, under /dev/shm. -1 for a name glibc refuses (empty, with a slash inside, too
 * long): such a call fails without opening anything and is passed through uncounted. */
static int shm_path(const char *name, char *out, size_t len)
{
	if (!name)
		return -1;
	while (*name == '/')
		name++;
	size_t n = strlen(name);
	if (n == 0 || n >= NAME_MAX || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -1;
	if (sizeof "/dev/shm/" + n > len)
		return -1;
	memcpy(out, "/dev/shm/", sizeof "/dev/shm/" - 1);
	memcpy(out + sizeof "/dev/shm/" - 1, name, n + 1);
	return 0;
}

CAP_EXPORT int shm_open(const char *name, int flags, mode_t mode)
{
	char path[CAP_PATH_MAX];
	if (!cap_active() || shm_path(name, path, sizeof path) < 0)
		return REAL(shm_open)(name, flags, mode);
	CAP_OPEN_BODY(real.shm_open(name, flags, mode), AT_FDCWD, path, flags)
	return fd;
}

CAP_EXPORT int shm_unlink(const char *name)
{
	char path[CAP_PATH_MAX];
	if (!cap_active() || shm_path(name, path, sizeof path) < 0)
		return REAL(shm_unlink)(name);
	if (CAP_UNLIKELY(agg_on))
		agg_before_path(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 1);
	CAP_PATH_META(real.shm_unlink(name), AT_FDCWD, path, LOG_C_META_OTHER)
	return r;
}
