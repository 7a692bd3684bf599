/* SPDX-License-Identifier: MIT */
/*
 * stdio wrappers (the set Darshan's STDIO module covers, with glibc's fortified and _unlocked
 * forms) and the bridge that lets the POSIX layer see the read(2)/write(2)/lseek(2)/close(2)
 * that stdio itself issues.
 *
 * glibc's stdio calls its internal write, not the exported one, so a preload library never
 * sees those system calls. Every FILE on a file descriptor goes through one jump table,
 * `_IO_file_jumps` (and `_IO_wfile_jumps` for wide streams), whose read/write/seek/close/stat
 * slots are exported functions. At start we check that the slots hold exactly those functions
 * and, if so, point them at our hooks, which time the call and account it to the descriptor's
 * POSIX record. If the check fails (another libc), the bridge stays off and the header says so
 * by lacking LOG_F_STDIO_SYSCALLS. The stdio layer counts the library calls themselves.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/core.h"

/* glibc may define some of these as macros when optimizing; we define the functions. */
#undef fwrite_unlocked
#undef fread_unlocked
#undef putc_unlocked
#undef fputc_unlocked
#undef getc_unlocked
#undef fgetc_unlocked
#undef getchar_unlocked
#undef putchar_unlocked
#undef getc
#undef putc

static __thread uint64_t refill_bytes __attribute__((tls_model("initial-exec")));

/* ---------- the jump-table bridge ---------- */

typedef ssize_t (*io_read_fn)(FILE *, void *, ssize_t);
typedef ssize_t (*io_write_fn)(FILE *, const void *, ssize_t);
typedef off64_t (*io_seek_fn)(FILE *, off64_t, int);
typedef int (*io_close_fn)(FILE *);
typedef int (*io_stat_fn)(FILE *, void *);

static io_read_fn orig_read;
static io_write_fn orig_write;
static io_seek_fn orig_seek;
static io_close_fn orig_close;
static io_stat_fn orig_stat;

static ssize_t hook_read(FILE *fp, void *buf, ssize_t n)
{
	struct cap_fd *f = cap_fd_get(fp->_fileno);
	if (!f)
		return orig_read(fp, buf, n);
	if (CAP_UNLIKELY(f->agg)) /* a stream on an aggregated file sees what write() buffered */
		agg_before(f, fp->_fileno, AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	ssize_t r = orig_read(fp, buf, n);
	uint64_t t1 = cap_now();
	cap_note_rw(f, LOG_KIND_READ, -1, r, (uintptr_t)buf, t0, t1);
	if (r > 0)
		refill_bytes += (uint64_t)r;
	return r;
}

/* glibc's file write loops over short writes and returns what it wrote, never < 0; on a
 * regular file that is one write(2). */
static ssize_t hook_write(FILE *fp, const void *buf, ssize_t n)
{
	struct cap_fd *f = cap_fd_get(fp->_fileno);
	if (!f)
		return orig_write(fp, buf, n);
	if (CAP_UNLIKELY(f->agg)) /* stdio buffers itself: its write goes through, after ours */
		agg_before(f, fp->_fileno, AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	ssize_t r = orig_write(fp, buf, n);
	uint64_t t1 = cap_now();
	cap_note_rw(f, LOG_KIND_WRITE, -1, r == 0 && n > 0 ? -1 : r, (uintptr_t)buf, t0, t1);
	return r;
}

/* fopen(..., "a") seeks to the end inside glibc before the descriptor is known to us: the
 * fopen wrappers arm this, the seek hook records the call here, note_fopen accounts it. */
static __thread struct {
	int armed, fd;
	int64_t r;
	uint64_t t0, t1;
} fopen_seek __attribute__((tls_model("initial-exec")));

static off64_t hook_seek(FILE *fp, off64_t off, int whence)
{
	struct cap_fd *f = cap_fd_get(fp->_fileno);
	if (!f) {
		if (CAP_LIKELY(!fopen_seek.armed))
			return orig_seek(fp, off, whence);
		fopen_seek.t0 = cap_now();
		off64_t r = orig_seek(fp, off, whence);
		fopen_seek.t1 = cap_now();
		fopen_seek.r = r;
		fopen_seek.fd = fp->_fileno;
		return r;
	}
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fp->_fileno, whence == SEEK_SET || whence == SEEK_CUR ? AGG_SYNCPOS : AGG_FLUSH | AGG_SYNCPOS);
	uint64_t t0 = cap_now();
	off64_t r = orig_seek(fp, off, whence);
	uint64_t t1 = cap_now();
	if (r >= 0)
		cap.ofds[f->ofd].pos = (uint64_t)r;
	cap_note_meta_fd(f, LOG_C_SEEKS, r < 0, t0, t1);
	return r;
}

static int hook_close(FILE *fp)
{
	int fd = fp->_fileno;
	struct cap_fd *f = cap_fd_get(fd);
	if (!f) {
		if (cap_active())
			cap_fd_close(fd);
		return orig_close(fp);
	}
	if (CAP_UNLIKELY(f->agg))
		agg_close(f, fd);
	/* forgotten before the real close, as in close(): another thread may get the number as
	 * soon as the kernel releases it */
	struct cap_fd st = *f;
	cap_fd_close(fd);
	uint64_t t0 = cap_now();
	int r = orig_close(fp);
	uint64_t t1 = cap_now();
	int e = errno;
	cap_note_meta_fd(&st, LOG_C_CLOSES, r < 0 && e == EBADF, t0, t1);
	errno = e;
	return r;
}

static int hook_stat(FILE *fp, void *st)
{
	struct cap_fd *f = cap_fd_get(fp->_fileno);
	if (!f)
		return orig_stat(fp, st);
	if (CAP_UNLIKELY(f->agg))
		agg_before(f, fp->_fileno, AGG_FLUSH);
	uint64_t t0 = cap_now();
	int r = orig_stat(fp, st);
	uint64_t t1 = cap_now();
	cap_note_meta_fd(f, LOG_C_STATS, r != 0, t0, t1);
	return r;
}

#define CAP_JUMP_SLOTS 21

static int patch_table(void **tab, void *const want[5], void *const hooks[5])
{
	int at[5];
	for (int k = 0; k < 5; k++) {
		at[k] = -1;
		for (int i = 2; i < CAP_JUMP_SLOTS; i++)
			if (tab[i] == want[k]) {
				at[k] = i;
				break;
			}
		if (at[k] < 0)
			return -1;
	}
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)tab & ~(uintptr_t)(pg - 1);
	uintptr_t hi = ((uintptr_t)(tab + CAP_JUMP_SLOTS) + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) < 0)
		return -1;
	for (int k = 0; k < 5; k++)
		__atomic_store_n(&tab[at[k]], hooks[k], __ATOMIC_RELEASE);
	mprotect((void *)lo, hi - lo, PROT_READ);
	return 0;
}

static void bridge_init(void)
{
	static int done;
	if (done)
		return; /* a forked child inherits the patched tables */
	done = 1;
	void **jumps = dlsym(RTLD_DEFAULT, "_IO_file_jumps");
	void **wjumps = dlsym(RTLD_DEFAULT, "_IO_wfile_jumps");
	orig_read = (io_read_fn)dlsym(RTLD_DEFAULT, "_IO_file_read");
	orig_write = (io_write_fn)dlsym(RTLD_DEFAULT, "_IO_file_write");
	orig_seek = (io_seek_fn)dlsym(RTLD_DEFAULT, "_IO_file_seek");
	orig_close = (io_close_fn)dlsym(RTLD_DEFAULT, "_IO_file_close");
	orig_stat = (io_stat_fn)dlsym(RTLD_DEFAULT, "_IO_file_stat");
	if (!jumps || !orig_read || !orig_write || !orig_seek || !orig_close || !orig_stat)
		return;
	void *const want[5] = {(void *)orig_read, (void *)orig_write, (void *)orig_seek, (void *)orig_close,
			       (void *)orig_stat};
	void *const hooks[5] = {(void *)hook_read, (void *)hook_write, (void *)hook_seek, (void *)hook_close,
				(void *)hook_stat};
	if (patch_table(jumps, want, hooks) < 0)
		return;
	if (wjumps)
		patch_table(wjumps, want, hooks);
	__atomic_fetch_or(&cap.hdr->flags, LOG_F_STDIO_SYSCALLS, __ATOMIC_RELAXED);
}

void cap_stdio_init(void)
{
	bridge_init();
	if (orig_read && cap.hdr && (cap.hdr->flags & LOG_F_STDIO_SYSCALLS) == 0) {
		/* tables already patched by the parent before fork */
		__atomic_fetch_or(&cap.hdr->flags, LOG_F_STDIO_SYSCALLS, __ATOMIC_RELAXED);
	}
}

/* ---------- stdio-layer accounting ---------- */

static inline struct cap_fd *sfd(FILE *fp)
{
	if (CAP_UNLIKELY(!fp))
		return NULL;
	int fd = fp->_fileno;
	if (CAP_UNLIKELY((unsigned)fd >= (unsigned)cap.nfd) || CAP_UNLIKELY(cap_guard))
		return NULL;
	struct cap_fd *f = &cap.fds[fd];
	return f->srec ? f : NULL;
}

static inline int stream_error(FILE *fp)
{
	return (fp->_flags & 0x20) != 0; /* _IO_ERR_SEEN: ferror() without taking the lock */
}

static void snote(struct cap_fd *f, int kind, uint64_t bytes, int failed, const void *mem, uint64_t t0,
		  uint64_t t1)
{
	struct log_record *r = f->srec;
	/* the stream's position (spos) belongs to its record, like a description's (core.h) */
	int how = cap_own_begin(cap_rec_owner(r)), mt = how == CAP_OWN_LOCKED;
	if (failed) {
		log_inc(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], mt);
		log_add(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, mt);
		cap_own_end(how);
		cap_trace_rw(r, kind, f->spos, -1, t0, t1);
		cap_note_failure(r, errno);
		return;
	}
	uint64_t off;
	unsigned hb = log_hist_bucket(bytes);
	if (mt) {
		off = __atomic_fetch_add(&f->spos, bytes, __ATOMIC_RELAXED);
		log_note_access(r, kind, off, bytes, (uintptr_t)mem, t0, t1, cap.file_align, cap.mem_align, 1);
	} else {
		off = f->spos;
		f->spos = off + bytes;
		log_note_access(r, kind, off, bytes, (uintptr_t)mem, t0, t1, cap.file_align, cap.mem_align, 0);
	}
	cap_own_end(how);
	cap_tot_access_l(1, kind, bytes, hb); /* (a stream's record is always stdio's) */
	cap_trace_rw(r, kind, off, (int64_t)bytes, t0, t1);
}

static void smeta(struct cap_fd *f, enum log_counter which, int failed, uint64_t t0, uint64_t t1)
{
	if (failed)
		cap_note_failure(f->srec, errno);
	cap_trace_meta(f->srec, which, failed, t0, t1);
	cap_note_meta(f->srec, failed ? LOG_C_ERR_META : which, t0, t1, cap_mt());
}

static int mode_flags(const char *mode)
{
	int fl = O_RDONLY;
	if (!mode)
		return fl;
	if (mode[0] == 'w')
		fl = O_WRONLY | O_CREAT | O_TRUNC;
	else if (mode[0] == 'a')
		fl = O_WRONLY | O_CREAT | O_APPEND;
	if (strchr(mode, '+'))
		fl = (fl & ~(O_WRONLY | O_RDONLY)) | O_RDWR;
	return fl;
}

/* After fopen/freopen: the open(2) stdio made (invisible to us) goes to the POSIX layer, the
 * fopen itself to the stdio layer. */
static void note_fopen(const char *path, const char *mode, FILE *fp, uint64_t t0, uint64_t t1)
{
	int saved = errno;
	struct cap_fd *f = cap_note_open(AT_FDCWD, path, fp ? mode_flags(mode) : 0, fp ? fp->_fileno : -1, t0, t1);
	char abs[CAP_PATH_MAX];
	if (f) { /* the stream's file is the descriptor's (a /proc/PID/fd/N link names another) */
		struct log_record *sr = cap_record(LOG_LAYER_STDIO, cap.strings + f->rec->path,
						   f->rec->flags & LOG_R_PSEUDO);
		if (fopen_seek.fd == fp->_fileno) {
			if (fopen_seek.r >= 0)
				cap.ofds[f->ofd].pos = (uint64_t)fopen_seek.r;
			cap_note_meta_fd(f, LOG_C_SEEKS, fopen_seek.r < 0, fopen_seek.t0, fopen_seek.t1);
		}
		f->srec = sr;
		/* glibc starts a write-only append stream ("a") at the end of the file */
		f->spos = mode && mode[0] == 'a' && !strchr(mode, '+') ? cap.ofds[f->ofd].end : 0;
		cap_trace_meta(sr, LOG_C_OPENS, 0, t0, t1);
		cap_note_meta(sr, LOG_C_OPENS, t0, t1, cap_mt());
	} else if (!fp && cap_abspath(AT_FDCWD, path, abs, sizeof abs) == 0 && !cap_path_excluded(abs)) {
		struct log_record *sr = cap_record(LOG_LAYER_STDIO, abs, 0);
		cap_trace_meta(sr, LOG_C_OPENS, 1, t0, t1);
		cap_note_meta(sr, LOG_C_ERR_OPENS, t0, t1, cap_mt());
		cap_note_failure(sr, saved);
	}
	errno = saved;
}

/* Mode "w" empties the file: whatever is buffered for it was written before, so it goes first. */
static void agg_truncating(const char *path, const char *mode)
{
	if (CAP_UNLIKELY(agg_on) && path && mode && mode[0] == 'w')
		agg_before_path(AT_FDCWD, path, 0, 0);
}

CAP_EXPORT FILE *fopen(const char *path, const char *mode)
{
	if (!cap_active())
		return REAL(fopen)(path, mode);
	agg_truncating(path, mode);
	fopen_seek.armed = 1;
	fopen_seek.fd = -1;
	uint64_t t0 = cap_now();
	FILE *fp = real.fopen(path, mode);
	uint64_t t1 = cap_now();
	fopen_seek.armed = 0;
	note_fopen(path, mode, fp, t0, t1);
	return fp;
}

CAP_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	if (!cap_active())
		return REAL(fopen64)(path, mode);
	agg_truncating(path, mode);
	fopen_seek.armed = 1;
	fopen_seek.fd = -1;
	uint64_t t0 = cap_now();
	FILE *fp = real.fopen64(path, mode);
	uint64_t t1 = cap_now();
	fopen_seek.armed = 0;
	note_fopen(path, mode, fp, t0, t1);
	return fp;
}

/* tmpfile's file has no name (O_TMPFILE or unlinked): it is recorded under the name the kernel
 * shows for it, e.g. "/tmp/#1234 (deleted)". */
static FILE *tmpfile_common(FILE *(*fn)(void))
{
	if (!cap_active())
		return fn();
	uint64_t t0 = cap_now();
	FILE *fp = fn();
	uint64_t t1 = cap_now();
	if (fp) {
		int saved = errno;
		char link[64], path[CAP_PATH_MAX];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fp->_fileno);
		ssize_t n = readlink(link, path, sizeof path - 1);
		if (n > 0 && path[0] == '/') {
			path[n] = 0;
			note_fopen(path, "w+", fp, t0, t1);
		}
		errno = saved;
	}
	return fp;
}

CAP_EXPORT FILE *tmpfile(void)
{
	return tmpfile_common(REAL(tmpfile));
}

CAP_EXPORT FILE *tmpfile64(void)
{
	return tmpfile_common(REAL(tmpfile64));
}

CAP_EXPORT FILE *fdopen(int fd, const char *mode)
{
	if (!cap_active())
		return REAL(fdopen)(fd, mode);
	struct cap_fd *f = cap_fd_get(fd);
	uint64_t t0 = cap_now();
	FILE *fp = real.fdopen(fd, mode);
	uint64_t t1 = cap_now();
	if (f && fp) {
		int saved = errno;
		struct log_record *sr = cap_record(LOG_LAYER_STDIO, cap.strings + f->rec->path,
						   f->rec->flags & LOG_R_PSEUDO);
		f->srec = sr;
		f->spos = cap.ofds[f->ofd].pos;
		cap_trace_meta(sr, LOG_C_OPENS, 0, t0, t1);
		cap_note_meta(sr, LOG_C_OPENS, t0, t1, cap_mt());
		errno = saved;
	}
	return fp;
}

static FILE *freopen_common(FILE *(*fn)(const char *, const char *, FILE *), const char *path,
			    const char *mode, FILE *fp)
{
	if (!cap_active())
		return fn(path, mode, fp);
	struct cap_fd *old = sfd(fp);
	char keep[CAP_PATH_MAX] = "";
	if (!path && old && old->rec)
		snprintf(keep, sizeof keep, "%s", cap.strings + old->rec->path);
	uint64_t t0 = cap_now();
	if (old)
		smeta(old, LOG_C_CLOSES, 0, t0, t0);
	agg_truncating(path ? path : keep, mode);
	fopen_seek.armed = 1;
	fopen_seek.fd = -1;
	FILE *r = fn(path, mode, fp);
	uint64_t t1 = cap_now();
	fopen_seek.armed = 0;
	if (path)
		note_fopen(path, mode, r, t0, t1);
	else if (keep[0] && r)
		note_fopen(keep, mode, r, t0, t1);
	return r;
}

CAP_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	return freopen_common(REAL(freopen), path, mode, fp);
}

CAP_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	return freopen_common(REAL(freopen64), path, mode, fp);
}

CAP_EXPORT int fclose(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fclose)(fp);
	struct log_record *sr = f->srec;
	uint64_t t0 = cap_now();
	int r = real.fclose(fp); /* the close(2) inside reaches hook_close */
	uint64_t t1 = cap_now();
	if (r)
		cap_note_failure(sr, errno);
	cap_trace_meta(sr, LOG_C_CLOSES, r != 0, t0, t1);
	cap_note_meta(sr, r ? LOG_C_ERR_META : LOG_C_CLOSES, t0, t1, cap_mt());
	return r;
}

static int flush_common(int (*fn)(FILE *), FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(fp);
	uint64_t t0 = cap_now();
	int r = fn(fp);
	uint64_t t1 = cap_now();
	smeta(f, LOG_C_FLUSHES, r != 0, t0, t1);
	return r;
}

CAP_EXPORT int fflush(FILE *fp)
{
	return flush_common(REAL(fflush), fp);
}

CAP_EXPORT int fflush_unlocked(FILE *fp)
{
	return flush_common(REAL(fflush_unlocked), fp);
}

/* ---------- writes ---------- */

static size_t fwrite_common(size_t (*fn)(const void *, size_t, size_t, FILE *), const void *p, size_t sz,
			    size_t n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(p, sz, n, fp);
	uint64_t t0 = cap_now();
	size_t r = fn(p, sz, n, fp);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, (uint64_t)r * sz, r < n && r == 0 && sz && n, p, t0, t1);
	return r;
}

CAP_EXPORT size_t fwrite(const void *p, size_t sz, size_t n, FILE *fp)
{
	return fwrite_common(REAL(fwrite), p, sz, n, fp);
}

CAP_EXPORT size_t fwrite_unlocked(const void *p, size_t sz, size_t n, FILE *fp)
{
	return fwrite_common(REAL(fwrite_unlocked), p, sz, n, fp);
}

static int putc_common(int (*fn)(int, FILE *), int c, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(c, fp);
	uint64_t t0 = cap_now();
	int r = fn(c, fp);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, r == EOF ? 0 : 1, r == EOF, NULL, t0, t1);
	return r;
}

CAP_EXPORT int fputc(int c, FILE *fp)
{
	return putc_common(REAL(fputc), c, fp);
}

CAP_EXPORT int fputc_unlocked(int c, FILE *fp)
{
	return putc_common(REAL(fputc_unlocked), c, fp);
}

CAP_EXPORT int putc(int c, FILE *fp)
{
	return putc_common(REAL(putc), c, fp);
}

CAP_EXPORT int putc_unlocked(int c, FILE *fp)
{
	return putc_common(REAL(putc_unlocked), c, fp);
}

/* putchar and putchar_unlocked write stdout: putc on it, with the real function's own locking. */
static int putchar_common(int (*fn)(int), int c)
{
	struct cap_fd *f = sfd(stdout);
	if (!f)
		return fn(c);
	uint64_t t0 = cap_now();
	int r = fn(c);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, r == EOF ? 0 : 1, r == EOF, NULL, t0, t1);
	return r;
}

CAP_EXPORT int putchar(int c)
{
	return putchar_common(REAL(putchar), c);
}

CAP_EXPORT int putchar_unlocked(int c)
{
	return putchar_common(REAL(putchar_unlocked), c);
}

CAP_EXPORT int putw(int w, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(putw)(w, fp);
	uint64_t t0 = cap_now();
	int r = real.putw(w, fp);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, r == 0 ? sizeof(int) : 0, r != 0, NULL, t0, t1);
	return r;
}

static int fputs_common(int (*fn)(const char *, FILE *), const char *s, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(s, fp);
	uint64_t t0 = cap_now();
	int r = fn(s, fp);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, r == EOF ? 0 : strlen(s), r == EOF, s, t0, t1);
	return r;
}

CAP_EXPORT int fputs(const char *s, FILE *fp)
{
	return fputs_common(REAL(fputs), s, fp);
}

CAP_EXPORT int fputs_unlocked(const char *s, FILE *fp)
{
	return fputs_common(REAL(fputs_unlocked), s, fp);
}

CAP_EXPORT int puts(const char *s)
{
	struct cap_fd *f = sfd(stdout);
	if (!f)
		return REAL(puts)(s);
	uint64_t t0 = cap_now();
	int r = real.puts(s);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_WRITE, r == EOF ? 0 : strlen(s) + 1, r == EOF, s, t0, t1);
	return r;
}

static int printf_note(struct cap_fd *f, int r, const char *fmt, uint64_t t0, uint64_t t1)
{
	snote(f, LOG_KIND_WRITE, r < 0 ? 0 : (uint64_t)r, r < 0, fmt, t0, t1);
	return r;
}

CAP_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(vfprintf)(fp, fmt, ap);
	uint64_t t0 = cap_now();
	int r = real.vfprintf(fp, fmt, ap);
	return printf_note(f, r, fmt, t0, cap_now());
}

CAP_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(fp, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return vfprintf(stdout, fmt, ap);
}

CAP_EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(stdout, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__vfprintf_chk)(fp, flag, fmt, ap);
	uint64_t t0 = cap_now();
	int r = real.__vfprintf_chk(fp, flag, fmt, ap);
	return printf_note(f, r, fmt, t0, cap_now());
}

CAP_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vfprintf_chk(fp, flag, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return __vfprintf_chk(stdout, flag, fmt, ap);
}

CAP_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vfprintf_chk(stdout, flag, fmt, ap);
	va_end(ap);
	return r;
}

/* ---------- reads ---------- */

static size_t fread_note(struct cap_fd *f, FILE *fp, void *p, size_t sz, size_t n, size_t r, uint64_t t0)
{
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_READ, (uint64_t)r * sz, r == 0 && sz && n && stream_error(fp), p, t0, t1);
	return r;
}

CAP_EXPORT size_t fread(void *p, size_t sz, size_t n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fread)(p, sz, n, fp);
	uint64_t t0 = cap_now();
	return fread_note(f, fp, p, sz, n, real.fread(p, sz, n, fp), t0);
}

CAP_EXPORT size_t fread_unlocked(void *p, size_t sz, size_t n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fread_unlocked)(p, sz, n, fp);
	uint64_t t0 = cap_now();
	return fread_note(f, fp, p, sz, n, real.fread_unlocked(p, sz, n, fp), t0);
}

CAP_EXPORT size_t __fread_chk(void *p, size_t buflen, size_t sz, size_t n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__fread_chk)(p, buflen, sz, n, fp);
	uint64_t t0 = cap_now();
	return fread_note(f, fp, p, sz, n, real.__fread_chk(p, buflen, sz, n, fp), t0);
}

CAP_EXPORT size_t __fread_unlocked_chk(void *p, size_t buflen, size_t sz, size_t n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__fread_unlocked_chk)(p, buflen, sz, n, fp);
	uint64_t t0 = cap_now();
	return fread_note(f, fp, p, sz, n, real.__fread_unlocked_chk(p, buflen, sz, n, fp), t0);
}

static int getc_common(int (*fn)(FILE *), FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(fp);
	uint64_t t0 = cap_now();
	int r = fn(fp);
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_READ, r == EOF ? 0 : 1, r == EOF && stream_error(fp), NULL, t0, t1);
	return r;
}

CAP_EXPORT int fgetc(FILE *fp)
{
	return getc_common(REAL(fgetc), fp);
}

CAP_EXPORT int getc(FILE *fp)
{
	return getc_common(REAL(getc), fp);
}

CAP_EXPORT int fgetc_unlocked(FILE *fp)
{
	return getc_common(REAL(fgetc_unlocked), fp);
}

CAP_EXPORT int getc_unlocked(FILE *fp)
{
	return getc_common(REAL(getc_unlocked), fp);
}

/* getchar and getchar_unlocked read stdin: getc on it, with the real function's own locking. */
static int getchar_common(int (*fn)(void))
{
	struct cap_fd *f = sfd(stdin);
	if (!f)
		return fn();
	uint64_t t0 = cap_now();
	int r = fn();
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_READ, r == EOF ? 0 : 1, r == EOF && stream_error(stdin), NULL, t0, t1);
	return r;
}

CAP_EXPORT int getchar(void)
{
	return getchar_common(REAL(getchar));
}

CAP_EXPORT int getchar_unlocked(void)
{
	return getchar_common(REAL(getchar_unlocked));
}

CAP_EXPORT int getw(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(getw)(fp);
	uint64_t t0 = cap_now();
	int r = real.getw(fp);
	uint64_t t1 = cap_now();
	int eof = r == EOF && (fp->_flags & 0x30); /* EOF or error flag: no word read */
	snote(f, LOG_KIND_READ, eof ? 0 : sizeof(int), eof && stream_error(fp), NULL, t0, t1);
	return r;
}

static char *fgets_note(struct cap_fd *f, FILE *fp, char *s, char *r, uint64_t t0)
{
	uint64_t t1 = cap_now();
	snote(f, LOG_KIND_READ, r ? strlen(r) : 0, !r && stream_error(fp), s, t0, t1);
	return r;
}

CAP_EXPORT char *fgets(char *s, int n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fgets)(s, n, fp);
	uint64_t t0 = cap_now();
	return fgets_note(f, fp, s, real.fgets(s, n, fp), t0);
}

CAP_EXPORT char *fgets_unlocked(char *s, int n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fgets_unlocked)(s, n, fp);
	uint64_t t0 = cap_now();
	return fgets_note(f, fp, s, real.fgets_unlocked(s, n, fp), t0);
}

CAP_EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__fgets_chk)(s, size, n, fp);
	uint64_t t0 = cap_now();
	return fgets_note(f, fp, s, real.__fgets_chk(s, size, n, fp), t0);
}

CAP_EXPORT char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__fgets_unlocked_chk)(s, size, n, fp);
	uint64_t t0 = cap_now();
	return fgets_note(f, fp, s, real.__fgets_unlocked_chk(s, size, n, fp), t0);
}

/* getline and getdelim return the bytes read, delimiter included, or -1 at the end of the file
 * (a read of 0 bytes, as fgets returning NULL there) and on an error. getline is __getdelim
 * inside glibc, so a call is counted once whichever name the program used. */
static ssize_t getdelim_note(struct cap_fd *f, FILE *fp, char **line, ssize_t r, uint64_t t0)
{
	uint64_t t1 = cap_now();
	int e = errno;
	snote(f, LOG_KIND_READ, r > 0 ? (uint64_t)r : 0, r < 0 && stream_error(fp), line ? *line : NULL, t0, t1);
	errno = e;
	return r;
}

CAP_EXPORT ssize_t getline(char **line, size_t *n, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(getline)(line, n, fp);
	uint64_t t0 = cap_now();
	return getdelim_note(f, fp, line, real.getline(line, n, fp), t0);
}

CAP_EXPORT ssize_t getdelim(char **line, size_t *n, int delim, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(getdelim)(line, n, delim, fp);
	uint64_t t0 = cap_now();
	return getdelim_note(f, fp, line, real.getdelim(line, n, delim, fp), t0);
}

CAP_EXPORT ssize_t __getdelim(char **line, size_t *n, int delim, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(__getdelim)(line, n, delim, fp);
	uint64_t t0 = cap_now();
	return getdelim_note(f, fp, line, real.__getdelim(line, n, delim, fp), t0);
}

/* scanf returns items, not bytes: bytes consumed = what was buffered before + what the
 * refills during the call brought in - what is still buffered after. */
static int scanf_common(int (*fn)(FILE *, const char *, va_list), FILE *fp, const char *fmt, va_list ap)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return fn(fp, fmt, ap);
	int64_t before = fp->_IO_read_end - fp->_IO_read_ptr;
	uint64_t refill0 = refill_bytes;
	uint64_t t0 = cap_now();
	int r = fn(fp, fmt, ap);
	uint64_t t1 = cap_now();
	int64_t after = fp->_IO_read_end - fp->_IO_read_ptr;
	int64_t used = before + (int64_t)(refill_bytes - refill0) - after;
	snote(f, LOG_KIND_READ, used > 0 ? (uint64_t)used : 0, r == EOF && stream_error(fp), NULL, t0, t1);
	return r;
}

/* glibc's headers rename fscanf/vfscanf to their __isoc99_ forms: name the symbols by hand. */
CAP_EXPORT int cap_vfscanf(FILE *fp, const char *fmt, va_list ap) __asm__("vfscanf");
CAP_EXPORT int cap_fscanf(FILE *fp, const char *fmt, ...) __asm__("fscanf");
CAP_EXPORT int cap_isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap) __asm__("__isoc99_vfscanf");
CAP_EXPORT int cap_isoc99_fscanf(FILE *fp, const char *fmt, ...) __asm__("__isoc99_fscanf");

CAP_EXPORT int cap_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
	return scanf_common(REAL(vfscanf), fp, fmt, ap);
}

CAP_EXPORT int cap_isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
	return scanf_common(REAL(__isoc99_vfscanf), fp, fmt, ap);
}

CAP_EXPORT int cap_fscanf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = scanf_common(REAL(vfscanf), fp, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int cap_isoc99_fscanf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = scanf_common(REAL(__isoc99_vfscanf), fp, fmt, ap);
	va_end(ap);
	return r;
}

/* scanf and vscanf read stdin: fscanf on it. */
CAP_EXPORT int cap_vscanf(const char *fmt, va_list ap) __asm__("vscanf");
CAP_EXPORT int cap_scanf(const char *fmt, ...) __asm__("scanf");
CAP_EXPORT int cap_isoc99_vscanf(const char *fmt, va_list ap) __asm__("__isoc99_vscanf");
CAP_EXPORT int cap_isoc99_scanf(const char *fmt, ...) __asm__("__isoc99_scanf");

CAP_EXPORT int cap_vscanf(const char *fmt, va_list ap)
{
	return scanf_common(REAL(vfscanf), stdin, fmt, ap);
}

CAP_EXPORT int cap_isoc99_vscanf(const char *fmt, va_list ap)
{
	return scanf_common(REAL(__isoc99_vfscanf), stdin, fmt, ap);
}

CAP_EXPORT int cap_scanf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = scanf_common(REAL(vfscanf), stdin, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int cap_isoc99_scanf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = scanf_common(REAL(__isoc99_vfscanf), stdin, fmt, ap);
	va_end(ap);
	return r;
}

CAP_EXPORT int ungetc(int c, FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(ungetc)(c, fp);
	uint64_t t0 = cap_now();
	int r = real.ungetc(c, fp);
	uint64_t t1 = cap_now();
	if (r != EOF && f->spos)
		f->spos--;
	smeta(f, LOG_C_META_OTHER, r == EOF, t0, t1);
	return r;
}

/* ---------- position ---------- */

static void seek_note(struct cap_fd *f, FILE *fp, int ok, uint64_t t0)
{
	uint64_t t1 = cap_now();
	if (ok) {
		/* after a successful seek glibc knows the position without a system call */
		off64_t p = real.ftello64(fp);
		if (p >= 0)
			f->spos = (uint64_t)p;
	}
	smeta(f, LOG_C_SEEKS, !ok, t0, t1);
}

CAP_EXPORT int fseek(FILE *fp, long off, int whence)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fseek)(fp, off, whence);
	uint64_t t0 = cap_now();
	int r = real.fseek(fp, off, whence);
	int e = errno;
	seek_note(f, fp, r == 0, t0);
	errno = e;
	return r;
}

CAP_EXPORT int fseeko(FILE *fp, off_t off, int whence)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fseeko)(fp, off, whence);
	uint64_t t0 = cap_now();
	int r = real.fseeko(fp, off, whence);
	int e = errno;
	seek_note(f, fp, r == 0, t0);
	errno = e;
	return r;
}

CAP_EXPORT int fseeko64(FILE *fp, off64_t off, int whence)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fseeko64)(fp, off, whence);
	uint64_t t0 = cap_now();
	int r = real.fseeko64(fp, off, whence);
	int e = errno;
	seek_note(f, fp, r == 0, t0);
	errno = e;
	return r;
}

CAP_EXPORT int fsetpos(FILE *fp, const fpos_t *pos)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fsetpos)(fp, pos);
	uint64_t t0 = cap_now();
	int r = real.fsetpos(fp, pos);
	int e = errno;
	seek_note(f, fp, r == 0, t0);
	errno = e;
	return r;
}

CAP_EXPORT int fsetpos64(FILE *fp, const fpos64_t *pos)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fsetpos64)(fp, pos);
	uint64_t t0 = cap_now();
	int r = real.fsetpos64(fp, pos);
	int e = errno;
	seek_note(f, fp, r == 0, t0);
	errno = e;
	return r;
}

CAP_EXPORT void rewind(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f) {
		REAL(rewind)(fp);
		return;
	}
	uint64_t t0 = cap_now();
	real.rewind(fp);
	uint64_t t1 = cap_now();
	f->spos = 0;
	smeta(f, LOG_C_SEEKS, 0, t0, t1);
}

/* Position queries: counted as other metadata; glibc may issue an lseek(2) for them, which
 * the bridge then counts at the POSIX layer. */
#define CAP_TELL(call, type)                                   \
	uint64_t t0 = cap_now();                               \
	type r = call;                                         \
	uint64_t t1 = cap_now();                               \
	smeta(f, LOG_C_META_OTHER, r < 0, t0, t1);

CAP_EXPORT long ftell(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(ftell)(fp);
	CAP_TELL(real.ftell(fp), long)
	return r;
}

CAP_EXPORT off_t ftello(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(ftello)(fp);
	CAP_TELL(real.ftello(fp), off_t)
	return r;
}

CAP_EXPORT off64_t ftello64(FILE *fp)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(ftello64)(fp);
	CAP_TELL(real.ftello64(fp), off64_t)
	return r;
}

CAP_EXPORT int fgetpos(FILE *fp, fpos_t *pos)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fgetpos)(fp, pos);
	CAP_TELL(real.fgetpos(fp, pos), int)
	return r;
}

CAP_EXPORT int fgetpos64(FILE *fp, fpos64_t *pos)
{
	struct cap_fd *f = sfd(fp);
	if (!f)
		return REAL(fgetpos64)(fp, pos);
	CAP_TELL(real.fgetpos64(fp, pos), int)
	return r;
}
