/* SPDX-License-Identifier: MIT */
/*
 * The one scan of a job's inputs, for every command that reads a job (report, timeline, run's
 * summary, merge, the daemon): the arguments are job directories or log files, and this finds
 * the logs among them with one policy:
 *  - in a directory, names ending in ".iost" (final logs), ".iostar" (job archives of
 *    `iostrata merge`) and ".iost.live" (links to live logs); dotfiles (a writer's temporary files) are left out, and so
 *    are directories and other non-regular files named like logs;
 *  - a live link whose target is gone (its process finished, or was recovered meanwhile) is not an
 *    input: it becomes a warning, and the final log, if any, is read instead;
 *  - an entry that cannot be looked at (permissions) becomes a warning too; the scan carries on;
 *  - a file named directly is taken whatever its name.
 * Errors are only for arguments: one that does not exist or cannot be listed. It does not read
 * the logs (ana_job_load does) and prints nothing.
 */
#ifndef IOSTRATA_LOG_JOBDIR_H
#define IOSTRATA_LOG_JOBDIR_H

#include <stddef.h>

#define LOG_FINAL_SUFFIX ".iost"
#define LOG_LIVE_SUFFIX ".iost.live"
#define LOG_ARCHIVE_SUFFIX ".iostar" /* a job archive (iostrata merge); any name works when named directly */

struct log_scan {
	char **paths; /* inputs to read, in argument order; each directory's sorted by name */
	size_t npaths;
	char **warnings; /* one line each: "<path>: what was skipped and why" */
	size_t nwarnings;
};

/* Scan nargs arguments. 0, or -errno with "<arg>: what is wrong" in err (the scan so far is
 * freed). A directory without logs is no error: npaths tells. */
int log_scan_args(const char *const *args, size_t nargs, struct log_scan *out, char *err, size_t errlen);
void log_scan_free(struct log_scan *s);
/* 1 when name (no directory) is one the scan takes from a directory. */
int log_scan_is_log_name(const char *name);

#endif
