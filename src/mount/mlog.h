/* SPDX-License-Identifier: MIT */
/*
 * The mount layer's log: a live log in the common format (a MAP_SHARED file in the live
 * directory, like the capture library's, so counters survive a SIGKILL of the monitor and a
 * sampler can read them while it runs), one record per (path at the mount point, requesting
 * pid), updated with the record logic every layer shares (src/log/record.h). At the end it is
 * written as a final log into the output directory. It knows nothing of FUSE.
 */
#ifndef IOSTRATA_MOUNT_MLOG_H
#define IOSTRATA_MOUNT_MLOG_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

#define MNT_PATH_MAX 4096

struct mnt_log_options {
	const char *live_dir; /* NULL: IOSTRATA_LIVE_DIR, else /dev/shm/iostrata-<uid> */
	const char *out_dir;  /* where the final log goes (created if missing) */
	const char *job;      /* job id ("" when none) */
	uint32_t max_records; /* records (files x processes); the last one catches the overflow */
	int out_dir_optional; /* an unwritable out_dir is no error: the counters stay in the live file
			       * (`iostrata run` has already said so, and CMD runs anyway) */
	int trace;            /* keep event runs per monitor thread */
	uint32_t trace_mb;    /* trace area in MiB */
	int argc;
	char **argv;          /* the command line recorded in the header */
};

struct mnt_log;

/* Creates the live log. NULL with a one-line message in err. */
struct mnt_log *mnt_log_create(const struct mnt_log_options *o, char *err, size_t errlen);

/* The live file's path and the final log's path. */
const char *mnt_log_live_path(const struct mnt_log *l);
const char *mnt_log_final_path(const struct mnt_log *l);

/* The record of (path at the mount point, pid), created on first use; the layer's catch-all
 * record when the table is full (counted in the header). Never NULL. Thread-safe. */
struct log_record *mnt_log_record(struct mnt_log *l, const char *path, int32_t pid);

/* A record's slot number and back: a handle caches one word, not a pointer and a pid. */
uint32_t mnt_log_record_index(const struct mnt_log *l, const struct log_record *r);
struct log_record *mnt_log_record_at(struct mnt_log *l, uint32_t index);

/* CLOCK_MONOTONIC ns: the log's clock. */
uint64_t mnt_now(void);

/* One read or write at off that ran from t0 to t1 (ns): res bytes, or -errno when it failed. */
void mnt_note_rw(struct mnt_log *l, struct log_record *r, int kind, uint64_t off, int64_t res, uint64_t t0,
		 uint64_t t1);
/* A metadata operation counted under `which`; res < 0 (-errno): it failed, counted in the error
 * counter of its kind. */
void mnt_note_meta(struct mnt_log *l, struct log_record *r, enum log_counter which, uint64_t t0, uint64_t t1,
		   int res);

/* Writes the final log (exit_status recorded, LOG_F_FINISHED) and removes the live file.
 * 0, or -errno with a message in err (the live file is then kept for `iostrata recover`). */
int mnt_log_finish(struct mnt_log *l, int exit_status, char *err, size_t errlen);
/* Unmaps and frees; the live file stays unless finished. */
void mnt_log_close(struct mnt_log *l);

#endif
