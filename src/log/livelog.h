/* SPDX-License-Identifier: MIT */
/*
 * The live logs of this node, from the outside: where they are (the live directories and the
 * links of job directories), whether the process that writes one still runs, and the recovery
 * of a dead process's live log into a final log flagged crashed. The commands (run, top,
 * recover, umount) and a node daemon call these; they print nothing. The writers' side of a live
 * log (its header, its directory's checks) is live.h. Not in the capture library.
 */
#ifndef IOSTRATA_LOG_LIVELOG_H
#define IOSTRATA_LOG_LIVELOG_H

#include <stddef.h>
#include <stdint.h>

/* Room for a path in the functions below, NUL included. */
#define LOG_LIVE_PATH 4096

/* The live directories to look in: $IOSTRATA_LIVE_DIR alone when it is set; otherwise the
 * caller's own iostrata-UID under /dev/shm and under $TMPDIR (or /tmp) when they exist, or for
 * root every iostrata-* there (every user's). Fills up to max paths into dirs; returns how many. */
int log_live_dirs(char dirs[][LOG_LIVE_PATH], int max);

/* Where log_live_scan looks. */
enum log_live_where {
	LOG_LIVE_IN_LIVEDIR, /* a live directory: its *.iost files */
	LOG_LIVE_IN_JOBDIR,  /* a job directory: the live files its *.iost.live links point to; a
			      * link whose live file is gone is stale, and removed */
};

/* Calls fn(path, ctx) for each live log in dir, in directory order; fn returning non-zero stops
 * the scan. Returns how many logs were passed to fn, or -errno when dir cannot be read. */
int log_live_scan(const char *dir, enum log_live_where where, int (*fn)(const char *path, void *ctx),
		  void *ctx);

/* 1 when the process that writes a live log still runs: pid exists, is not a zombie, and has
 * the start time (clock ticks after boot, /proc/PID/stat's field 22) the log's header recorded,
 * so a reused pid is no match; start_ticks 0 (unknown) matches any. 0 otherwise. */
int log_live_alive(int pid, uint64_t start_ticks);

struct log_file;
/* 1 when lf, a live log its image kept through an exec (LOG_F_LIVE_KEPT), has beside it the final
 * log that image wrote at the exec (same pid and start, flagged exec; its path in fin): that log
 * stands for the image, and the live file holds nothing more (docs/FORMAT.md, "Live file and
 * final log"). 0 otherwise, the log unreadable included. */
int log_live_superseded(const struct log_file *lf, char *fin, size_t finlen);

/* Finalizes the live log at path into outdir (NULL or "": the job directory its header names)
 * as a crashed process's log (LOG_F_CRASHED), its end the latest time in its counters;
 * term_signal is recorded when > 0. Removes the live file, its job directory's link and the
 * live path its header names. Returns 0 with the final log's path in dst; 1 when the process
 * still runs and force is 0 (nothing done); 2 when the file was kept through an exec
 * (LOG_F_LIVE_KEPT) and its process is gone: the final log written at the exec (its path in dst,
 * "" when the image counted nothing and left none) stands for it, and the file and its link are
 * removed, nothing written; -errno with a one-line message in err (-EINVAL: not a live log; the
 * reader's errors for a file that is no log or is corrupt). */
int log_live_recover(const char *path, const char *outdir, int term_signal, int force, char *dst, size_t dstlen,
		     char *err, size_t errlen);

#endif
