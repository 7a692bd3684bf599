/* SPDX-License-Identifier: MIT */
/*
 * The job pipeline: one job's inputs (job directories, logs) → one job object, for every front end
 * (report, timeline, run's summary, and later the daemon and the web API). In order:
 *   scan (log/jobdir.h) → read each log (unreadable or damaged ones become warnings) → merge the
 *   profile (profile.h) → I/O mode (iomode.c) → layer stack (stack.h) → timeline, SCI and the
 *   per-call breakdown and time series of a traced job (timeline.h, series.h) → findings (findings.h).
 * Renderers (report_text.c, report_json.c) only render a job. Nothing here prints.
 */
#ifndef IOSTRATA_ANALYSIS_JOB_H
#define IOSTRATA_ANALYSIS_JOB_H

#include <stddef.h>

#include "analysis/findings.h"
#include "analysis/profile.h"
#include "analysis/series.h"
#include "analysis/stack.h"
#include "analysis/timeline.h"
#include "iostrata/reader.h"

enum {
	ANA_JOB_TIMELINE = 1u << 0, /* merge a traced job's trace: timeline, SCI, breakdown */
	ANA_JOB_MOUNTS = 1u << 1,   /* name a local kernel log's devices from this host's mount table */
	ANA_JOB_NO_FINDINGS = 1u << 2, /* skip the rules (run's summary, timeline) */
	ANA_JOB_NO_PROFILE = 1u << 3,  /* logs and timeline only (iostrata timeline) */
};

struct ana_job {
	int owns_logs;         /* loaded by ana_job_load: logs and mounts are freed with the job */
	/* The logs kept in memory: the collectors' (kernel, mount) and live ones, or all of them for a
	 * traced job's timeline (ANA_JOB_TIMELINE) or without a profile; the others were merged and
	 * freed as they were read (job.c, "Reading"). */
	struct log_file *logs;
	size_t nlogs;
	size_t nread;       /* logs read: kept or not */
	size_t nfound;      /* inputs the scan found */
	size_t nunreadable; /* of those, logs that could not be read at all (left out) */
	size_t ndamaged;    /* logs read with damage stepped over (what could be read is in) */
	char *first_problem; /* the first unreadable or damaged log's message, for stderr; NULL if none */
	int have_profile;
	struct ana_profile prof; /* its warnings hold the job's warnings, skipped inputs included */
	struct ana_mount *mounts; /* this host's mounts, when asked for and a kernel log is local */
	size_t nmounts;
	struct ana_stack stack;   /* stack.present when the job has a kernel log */
	struct ana_findings findings;
	int traced;               /* the job had a trace and it merged: tl, sci, bd, series are set */
	struct timeline tl;
	struct tl_sci sci;
	struct tl_breakdown bd;
	struct tl_series series; /* bytes and calls per time bucket, per layer and per process */
};

/*
 * Load a job from nargs arguments (job directories or log files) with ANA_JOB_* flags.
 * 0 when at least one log was read (unreadable or damaged ones are counted and in the warnings:
 * callers decide the exit status); -ENOENT when there was no log to read or none could be read,
 * -errno for a bad argument, -ENOMEM; each with a one-line message in err.
 */
int ana_job_load(struct ana_job *j, const char *const *args, size_t nargs, unsigned flags, char *err,
		 size_t errlen);
/* The same pipeline over logs already in memory (tests, a daemon holding live logs): the job
 * points into logs and mounts (may be NULL), which the caller keeps alive and frees after
 * ana_job_free. 0 or -ENOMEM. */
int ana_job_build(struct ana_job *j, const struct log_file *logs, size_t n, unsigned flags,
		  const struct ana_mount *mounts, size_t nmounts);
void ana_job_free(struct ana_job *j);

#endif
