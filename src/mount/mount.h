/* SPDX-License-Identifier: MIT */
/*
 * The mount-point monitor (seed 003's IOFS, with the requester named): a pass-through FUSE
 * filesystem that mounts SRC at MNT and forwards every operation to SRC, recording each one in
 * the mount layer's log (mlog.h) under the file and the pid that asked. passthrough.c holds the
 * operations, session.c the mount itself (checks, /dev/fuse, the INIT negotiation libfuse 3.14
 * cannot ask for, serving, unmounting, stale mounts).
 */
#ifndef IOSTRATA_MOUNT_MOUNT_H
#define IOSTRATA_MOUNT_MOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "mount/mlog.h"

/* Replies to reads are spliced from a pipe only when the whole reply fits one; a pipe holds at
 * most fs.pipe-max-size (1 MiB by default) and libfuse wants a few pages of room besides: reads
 * are asked in pieces of 512 KiB, each spliced, rather than 1 MiB copied (the mount option and
 * the INIT reply must agree). */
#define MNT_MAX_READ (512u << 10)

struct mnt_options {
	const char *src, *mnt; /* absolute paths */
	struct mnt_log_options log;
	int threads;           /* most idle serving threads kept (libfuse's max_idle_threads) */
	int quiet;
	int keep_sigint;       /* leave SIGINT as it is (run --mount: the terminal's Ctrl-C is the command's) */
	int ready_fd;          /* >= 0: one byte written there once the mount serves (then closed) */
	int detach;            /* once the mount serves, stdin/stdout/stderr to /dev/null (mount --background) */
	const char *ready_path; /* when not NULL: created once the mount serves */
};

/* What the operations share: the source directory and the log. */
struct mnt_fs {
	int src_fd;            /* O_PATH descriptor of SRC: every operation is relative to it */
	const char *mnt;       /* the mount point, prefix of every record's path */
	size_t mnt_len;
	struct mnt_log *log;
	int direct_io;         /* handles are opened with direct I/O (the kernel caches no data) */
};

/* The operations table for libfuse's high-level API (passthrough.c). */
struct fuse_operations;
const struct fuse_operations *mnt_operations(void);

/* Mounts, serves until unmounted or SIGTERM/SIGINT/SIGHUP, unmounts, writes the final log.
 * Returns an exit status: 0, 1 (failure; a message on stderr), 2 (bad MNT or SRC). */
int mnt_serve(const struct mnt_options *o);

/* Checks MNT is an empty directory that is not already a mount point: 0, or -errno with a
 * one-line message in err. */
int mnt_check_target(const char *mnt, char *err, size_t errlen);

/* The iostrata mount at mnt, as /proc/self/mountinfo lists it: 1 found (its source, which names
 * the monitor's live log, copied into src), 0 not an iostrata mount, -errno. */
int mnt_find(const char *mnt, char *src, size_t srclen);

#endif
