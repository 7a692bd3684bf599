/* SPDX-License-Identifier: MIT */
/* The kernel log: the session's maps written as a log in the common format (collect.c). */
#ifndef IOSTRATA_KERNEL_COLLECT_H
#define IOSTRATA_KERNEL_COLLECT_H

#include "kernel/session.h"

struct ks_log_meta {
	pid_t pid;            /* the traced command's pid (0 system-wide) */
	const char *exe, *job, *outdir;
	int argc;
	char **argv;
	uint64_t start_ns, end_ns, start_wall_ns; /* CLOCK_MONOTONIC, CLOCK_REALTIME */
	int exit_status, term_signal;
	/* paths whose records are left out: the capture library's own files (the job directory,
	 * the live directory, the library itself); NULL-terminated prefixes, NULL for none */
	const char *const *exclude;
};

struct ks_rec {
	struct ks_file_key key;
	struct ks_file_val val;
};

/* A syscall-layer record whose calls were not all timed (default depth): its time counters, the
 * sums over the timed calls, become estimates for all of them (times calls / timed calls, per
 * kind: reads, writes, the rest). Counts, bytes and histograms stay as measured. */
void ks_estimate_times(uint16_t layer, struct ks_file_val *v);
/* Every `files` and `devfiles` entry (malloc'd array in *out), times estimated (ks_estimate_times), after
 * ks_runs_flush (pinned.h). ks_records also adds the runs of CPUs the flush could not reach (outside the
 * caller's cpuset, offline), which makes the session's final counts exact. */
int ks_records(const struct ks_session *ks, struct ks_rec **out, size_t *n);
/* The same from the maps' descriptors (pinned.h); devfiles_fd -1 when not pinned (older sessions). */
int ks_records_fd(int files_fd, int devfiles_fd, struct ks_rec **out, size_t *n);
int ks_lookup_path_fd(int paths_fd, uint64_t dev, uint64_t ino, struct ks_path_val *out);
/* The path the kernel resolved for (dev, ino); -1 if none. */
int ks_lookup_path(const struct ks_session *ks, uint64_t dev, uint64_t ino, struct ks_path_val *out);
/* "vda", "loop3" ... from /sys/dev/block, else "M:m". */
void ks_device_name(uint64_t dev, char *out, size_t len);
/* Write the kernel log to dst (atomically); events from events_fd (-1: none). */
int ks_write_log(const struct ks_session *ks, const char *dst, const struct ks_log_meta *m, int events_fd,
		 uint64_t nevents, uint64_t user_drops, char *err, size_t errlen);

#endif
