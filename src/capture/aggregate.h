/* SPDX-License-Identifier: MIT */
/*
 * Write aggregation of files whose path matches IOSTRATA_AGGREGATE (docs/AGGREGATION.md): what
 * the POSIX wrappers call when a descriptor belongs to an aggregated file (cap_fd.agg != 0).
 * A descriptor of any other file never reaches this code: its wrappers test one field of the
 * fd-table entry they have already loaded.
 */
#ifndef IOSTRATA_CAPTURE_AGGREGATE_H
#define IOSTRATA_CAPTURE_AGGREGATE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct cap_fd;

extern int agg_on; /* IOSTRATA_AGGREGATE is set and valid in this process */

/* What agg_before does before a call passes through on an aggregated descriptor. */
enum {
	AGG_FLUSH = 1,   /* write back every buffered byte of the file (this process's and the ring's) */
	AGG_SYNCPOS = 2, /* move the kernel's file position to the modelled one */
	AGG_PASS = 4,    /* from now on writes through this open file description pass through */
	AGG_DURABLE = 8, /* with AGG_FLUSH, for close/fsync: a packed file's bytes may go to the pack */
	AGG_PACKSYNC = 16, /* with AGG_DURABLE, for fsync: and the pack file is synced */
};

void agg_init(void);
/* After a successful open of abs on fd (cap_note_open). */
void agg_note_open(struct cap_fd *f, int fd, const char *abs, int flags);
/* A write on an aggregated descriptor: 1 when handled (result in *ret, errno set), 0 when the
 * caller must make the plain call (pass-through; what had to be flushed has been). off < 0 with
 * positional = 0: at the file position. */
int agg_write(struct cap_fd *f, int fd, const struct iovec *iov, int cnt, int64_t off, int positional,
	      ssize_t *ret);
/* Returns a deferred write-back error (an errno) to report, or 0. */
int agg_before(struct cap_fd *f, int fd, unsigned what);
/* A path-based call (stat, truncate, rename, unlink ...) on what may be an aggregated file. */
void agg_before_path(int dirfd, const char *path, int atflags, int unlinking);
void agg_after_rename(int dirfd, const char *to);
/* close: flush, and the deferred error to return (0 if none). */
int agg_close(struct cap_fd *f, int fd);
/* cap_fd_close / cap_fd_dup bookkeeping. */
void agg_fd_forget(int fd, uint32_t agg);
void agg_fd_added(uint32_t agg);
void agg_mmap(struct cap_fd *f, int fd, void *addr);
void agg_munmap(void *addr);
void agg_fork_prepare(void);
void agg_fork_parent(void);
void agg_fork_child(void);
/* Everything out: exec and posix_spawn (for_exec = 1: keep attached), exit (detach). */
void agg_flush_all(int for_exec);

#endif
