/* SPDX-License-Identifier: MIT */
/*
 * Shared state of the capture library: the real symbols, the live log mapping, the fd table,
 * open file descriptions, record lookup, the clock and the per-thread guard. The wrappers in
 * posix.c, stdio.c, aio.c and process.c use only what is declared here.
 */
#ifndef IOSTRATA_CAPTURE_CORE_H
#define IOSTRATA_CAPTURE_CORE_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <x86intrin.h>
#include <aio.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/single_threaded.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "iostrata/format.h"
#include "log/record.h"
#include "capture/aggregate.h"
#include "capture/owner.h"
#include "capture/totals.h"

#define CAP_EXPORT __attribute__((visibility("default")))
#define CAP_LIKELY(x) __builtin_expect(!!(x), 1)
#define CAP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CAP_PATH_MAX 4096

/* ofd.flags */
/* AGG_PASS: writes on this description of an aggregated file pass through (O_APPEND, O_DIRECT,
 * O_SYNC, read-only, shared with another process after fork); KSTALE: buffered writes moved the
 * modelled position but not the kernel's (aggregate.c). */
enum { CAP_OFD_APPEND = 1, CAP_OFD_DIRECT = 2, CAP_OFD_AGG_PASS = 4, CAP_OFD_KSTALE = 8, CAP_OFD_AGG_RDONLY = 16 };

/* One open file description: shared by dup'ed descriptors, like the kernel's. */
/* A cache line each: threads writing their own files through neighbouring descriptors would
 * otherwise bounce one line between cores on every call (2-thread cost +121 -> +65 ns measured). */
struct cap_ofd {
	uint64_t pos;  /* our model of the file position */
	uint64_t end;  /* O_APPEND: the file's size when opened or last appended to */
	int32_t refs;  /* descriptors pointing here; 0 = free */
	uint32_t flags;
} __attribute__((aligned(64)));

/* Per-descriptor state, indexed by fd. rec == NULL: not tracked (excluded path, made by a call
 * we do not wrap, unknown). */
struct cap_fd {
	struct log_record *rec;  /* POSIX-layer record */
	struct log_record *srec; /* stdio-layer record of the FILE on this fd, if any */
	uint64_t spos;           /* stdio logical position */
	uint32_t ofd;            /* index into cap.ofds */
	uint32_t agg;            /* aggregated file (aggregate.c): its index + 1; 0 = not aggregated */
};

struct cap_state {
	int nfd;                   /* size of fds[]; 0 while capture is off */
	int fd_top;                /* 1 + the highest descriptor ever given a record: the walks over
				    * fds[] (fork, closefrom, close_range) stop there, not at nfd, which
				    * is RLIMIT_NOFILE's hard limit (up to 2^20: 32 MiB of table) */
	int use_tsc;
	int trace;                 /* trace mode: every recorded call goes to its thread's trace block */
	int finalized;
	struct cap_fd *fds;
	struct cap_ofd *ofds;
	struct log_header *hdr;    /* the live mapping */
	size_t map_size;
	char *strings;
	uint32_t string_cap;
	struct log_record *records;
	uint32_t *index;           /* record lookup: open addressing, record number + 1 */
	uint32_t *own;             /* per record: its owner word (owner.h), private to the process */
	uint32_t index_mask;
	uint64_t file_align, mem_align;
	uint64_t calib_next;       /* tick count after which the clock calibration is refreshed */
	char *trace_base;          /* the TRACE section in the mapping */
	uint64_t trace_nblocks;    /* its capacity in blocks of LOG_TRACE_BLOCK bytes */
	char live_path[CAP_PATH_MAX];
	char link_path[CAP_PATH_MAX];
	char final_path[CAP_PATH_MAX];
	char live_dir[CAP_PATH_MAX];
	char out_dir[CAP_PATH_MAX];
	int out_dir_ok;
	int exec_pending;          /* log finalized for an exec that may still fail; the live file kept */
	int forked;                /* this image began as a fork child (cap_after_fork_child), not at exec */
	int exec_no_log;           /* finalized for exec without a log: a forked child that did no counted call */
	const char *exec_path;     /* the program an exec wrapper is about to run (cap_finalize asks whether
				    * it is static), else NULL */
	int have_status;
	int exit_status;
};

extern struct cap_state cap;

/* Can another thread update a record at the same time (then updates are locked)? glibc clears
 * its flag before it starts a second thread, however it is started (pthread_create, C11
 * thrd_create, SIGEV_THREAD notifications, aio helpers). */
static inline __attribute__((always_inline)) int cap_mt(void)
{
	return !__libc_single_threaded;
}
extern __thread int cap_guard;

/* The owner word of record r (owner.h): reads and writes on r go through cap_own_begin/end. */
static inline __attribute__((always_inline)) uint32_t *cap_rec_owner(const struct log_record *r)
{
	return &cap.own[r - cap.records];
}

/* Real functions, resolved once in the constructor. */
struct cap_real {
#define CAP_REAL(ret, name, args) ret(*name) args;
#include "capture/real.def"
#undef CAP_REAL
};
extern struct cap_real real;

static inline __attribute__((always_inline)) uint64_t cap_now(void)
{
	if (CAP_LIKELY(cap.use_tsc))
		return __rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The descriptor's state when the call should be recorded, else NULL (fast path out). */
static inline __attribute__((always_inline)) struct cap_fd *cap_fd_get(int fd)
{
	if (CAP_UNLIKELY((unsigned)fd >= (unsigned)cap.nfd) || CAP_UNLIKELY(cap_guard))
		return NULL;
	struct cap_fd *f = &cap.fds[fd];
	return f->rec ? f : NULL;
}

static inline int cap_active(void)
{
	return cap.nfd > 0 && !cap_guard;
}

/* Trace mode (trace.c). off is UINT64_MAX and size 0 for ops without data; result 0 or -errno. */
void cap_trace_note(const struct log_record *rec, unsigned op, uint64_t off, uint64_t size, int64_t result,
		    uint64_t t0, uint64_t t1);
void cap_trace_meta_slow(const struct log_record *rec, enum log_counter which, int failed, uint64_t t0,
			 uint64_t t1);
void cap_trace_after_fork(void);

/* A metadata call on rec (which: the counter it counts in, as if it had succeeded). */
static inline void cap_trace_meta(const struct log_record *rec, enum log_counter which, int failed, uint64_t t0,
				  uint64_t t1)
{
	if (CAP_UNLIKELY(cap.trace))
		cap_trace_meta_slow(rec, which, failed, t0, t1);
}

/* A call on r failed with errno e: flags r LOG_R_ERR_EXPECTED or LOG_R_ERR_FAULT (cold path). */
void cap_note_failure(struct log_record *r, int e);
/* A read or write on f (record r) failed: its error count, time, trace entry and flag. Out of line,
 * so the successful call's inlined path carries none of it. */
void cap_note_rw_failed(struct cap_fd *f, struct log_record *r, int kind, int64_t off, uint64_t t0, uint64_t t1)
	__attribute__((cold, noinline));

/* A read or write of len bytes at off on rec (len < 0: it failed, errno says why). */
static inline void cap_trace_rw(const struct log_record *rec, int kind, uint64_t off, int64_t len, uint64_t t0,
				uint64_t t1)
{
	if (CAP_UNLIKELY(cap.trace))
		cap_trace_note(rec, kind == LOG_KIND_WRITE ? LOG_OP_WRITE : LOG_OP_READ, off, len < 0 ? 0 : (uint64_t)len,
			       len < 0 ? -(int64_t)(errno ? errno : EIO) : 0, t0, t1);
}

/* What a read or write on a tracked descriptor updates. Inlined into the read/write wrappers:
 * a call with seven arguments and a second test of the clock mode cost ~50 instructions per
 * call (callgrind, docs/BENCHMARKS.md). */
static inline __attribute__((always_inline)) void cap_note_rw_inline(struct cap_fd *f, int kind, int64_t off,
								     ssize_t ret, uintptr_t mem, uint64_t t0,
								     uint64_t t1)
{
	struct log_record *r = __atomic_load_n(&f->rec, __ATOMIC_ACQUIRE);
	if (CAP_UNLIKELY(!r)) /* another thread closed the descriptor during the call */
		return;
	if (CAP_UNLIKELY(ret < 0)) {
		cap_note_rw_failed(f, r, kind, off, t0, t1);
		return;
	}
	/* plain updates while one thread has this record (the position of a description belongs
	 * to its record: every description of a record is updated under the record's gate) */
	int how = cap_own_begin(cap_rec_owner(r));
	int mt = how == CAP_OWN_LOCKED;
	uint64_t o;
	if (off >= 0) {
		o = (uint64_t)off;
	} else {
		struct cap_ofd *d = &cap.ofds[f->ofd];
		if (kind == LOG_KIND_WRITE && (d->flags & CAP_OFD_APPEND)) {
			/* The kernel appends at the file's end, which we do not know without a syscall:
			 * take the furthest end this process has seen, or the size at the open. */
			o = d->pos > r->counters[LOG_C_MAX_WRITE_END] ? d->pos : r->counters[LOG_C_MAX_WRITE_END];
			if (d->end > o)
				o = d->end;
			d->pos = d->end = o + (uint64_t)ret;
		} else if (mt) {
			o = __atomic_fetch_add(&d->pos, (uint64_t)ret, __ATOMIC_RELAXED);
		} else {
			o = d->pos;
			d->pos = o + (uint64_t)ret;
		}
	}
	unsigned hb = log_hist_bucket((uint64_t)ret); /* (once: log_note_access's is the same) */
	if (mt)
		log_note_access(r, kind, o, (uint64_t)ret, mem, t0, t1, cap.file_align, cap.mem_align, 1);
	else
		log_note_access(r, kind, o, (uint64_t)ret, mem, t0, t1, cap.file_align, cap.mem_align, 0);
	cap_own_end(how);
	/* (a descriptor's record is always POSIX's; the thread's own slot: outside the gate) */
	cap_tot_access_l(0, kind, (uint64_t)ret, hb);
	cap_trace_rw(r, kind, o, ret, t0, t1);
}

/* Access on fd f: off < 0 means "at the current position", which then moves by len. */
void cap_note_rw(struct cap_fd *f, int kind, int64_t off, ssize_t ret, uintptr_t mem, uint64_t t0, uint64_t t1);
void cap_note_meta_fd(struct cap_fd *f, enum log_counter which, int failed, uint64_t t0, uint64_t t1);
/* Path-based metadata op (stat, unlink, rename ...). */
void cap_note_meta_path(int dirfd, const char *path, enum log_counter which, int failed, uint64_t t0,
			uint64_t t1);
/* After open/openat/creat: fd >= 0 on success. Returns the new fd state or NULL. */
struct cap_fd *cap_note_open(int dirfd, const char *path, int flags, int fd, uint64_t t0, uint64_t t1);
/* After a call that made descriptors without a path (pipe, socket, accept, eventfd, memfd ...):
 * fd (and fd2 unless it is -1: a pipe's other end) get the record of name, the kernel's name
 * (cap_fd_kernel_name), flagged LOG_R_PSEUDO, and each counts an open. */
void cap_note_pseudo_open(int fd, int fd2, const char *name, uint64_t t0, uint64_t t1);
/* The kernel's name of a descriptor without a path ("pipe:[INODE]" ...) into out: 0, or -1. */
int cap_fd_kernel_name(int fd, char *out, size_t len);
void cap_fd_close(int fd);
void cap_fd_dup(int oldfd, int newfd, uint64_t t0, uint64_t t1);
void cap_fd_setfl(int fd, int flags);
/* fd is a directory being listed (fdopendir): flags its record LOG_R_DIR. */
void cap_fd_mark_dir(int fd);
void cap_fd_set_pos(int fd, uint64_t pos);

/* Record of (layer, absolute path), created when missing; the layer's catch-all when full. */
struct log_record *cap_record(unsigned layer, const char *abspath, uint32_t rflags);
/* Absolute, lexically normalized form of path relative to dirfd; 0 or -1. */
int cap_abspath(int dirfd, const char *path, char *out, size_t len);
int cap_path_excluded(const char *abspath);

/* Process lifecycle (process.c / core.c). */
/* How a process image ends: exit (destructors run), exec, or _exit (maybe from a signal handler,
 * so nothing that is not async-signal-safe, such as loading zstd, may happen). */
enum cap_end { CAP_END_EXIT, CAP_END_EXEC, CAP_END_UNSAFE_CONTEXT };
void cap_finalize(enum cap_end how);
void cap_after_fork_child(void);
void cap_set_exit_status(int status);
void cap_calibrate(uint64_t now_ticks);
/* One message on stderr, written with the real write(); never on stdout. */
void cap_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* stdio.c */
void cap_stdio_init(void);
/* mmap table (posix.c) */
void cap_maps_reset(void);
/* aio.c */
void cap_aio_reset(void);

/* Build envp for exec that keeps capture on in the new image. Returns envp or a new array in buf.
 * forked: when cap.exec_no_log, IOSTRATA_FORKED is added for the exec'd image (docs/FORMAT.md,
 * "Forked children that exec"); IOSTRATA_EXECED is added while this image's exec is pending with
 * its live file kept (the new image removes that file); stale ones in envp are always left out. path: the program about to
 * run, whose LD_PRELOAD gets the MPI companion when it links MPI and loses it otherwise. */
char *const *cap_exec_env(char *const envp[], char **buf, size_t nbuf, int forked, const char *path);

/* The real function, resolving every symbol first if a wrapper runs before our constructor
 * (another library's constructor may do I/O before ours has run). */
void cap_resolve_early(void);
#define REAL(name) (CAP_LIKELY(real.name != NULL) ? real.name : (cap_resolve_early(), real.name))

void cap_cwd_refresh(void);
void cap_exec_failed(void);
/* 1 when path names a statically linked program (process.c): an image exec'ing it keeps its log. */
int cap_exec_target_static(const char *path);

#endif
