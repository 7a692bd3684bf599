/* SPDX-License-Identifier: MIT */
/*
 * The job pipeline (job.h). A log that cannot be read, or that was read with damage stepped over,
 * costs the job that log and a warning, never the report: a 1,000-rank job keeps its report when
 * one log is cut. The order of the steps is fixed here and nowhere else.
 */
#include "analysis/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/archive.h"
#include "log/jobdir.h"
#include "sys/mountinfo.h"

static void mounts_free(struct ana_job *j)
{
	for (size_t i = 0; i < j->nmounts; i++) {
		free((char *)j->mounts[i].path);
		free((char *)j->mounts[i].fstype);
	}
	free(j->mounts);
	j->mounts = NULL;
	j->nmounts = 0;
}

/*
 * The mount table of this host, for naming devices: only when a kernel log comes from this host
 * (the devices of another node mean nothing here). One entry per device, as sys_mount_by_dev
 * chooses: the mount of its root (a bind mount of a subdirectory names the device less well),
 * else its first mount. A table that cannot be read leaves the devices known by name and number;
 * that is no error.
 */
static void read_mounts(struct ana_job *j)
{
	char host[256] = "";
	int local = 0;
	struct sys_mounts m;

	if (gethostname(host, sizeof host - 1) < 0)
		return;
	for (size_t i = 0; i < j->nlogs; i++)
		if (j->logs[i].hdr.kernel_layers && !strcmp(log_file_string(&j->logs[i], j->logs[i].hdr.host), host))
			local = 1;
	if (!local || sys_mountinfo_load(NULL, &m) < 0)
		return;
	j->mounts = calloc(m.n ? m.n : 1, sizeof *j->mounts);
	for (size_t i = 0; j->mounts && i < m.n; i++) {
		const struct sys_mount *x = sys_mount_by_dev(&m, m.v[i].dev);
		size_t k = 0;
		while (k < j->nmounts && j->mounts[k].dev != x->dev)
			k++;
		if (k < j->nmounts)
			continue;
		char *pt = strdup(x->point), *ft = strdup(x->fstype);
		if (!pt || !ft) {
			free(pt);
			free(ft);
			break;
		}
		j->mounts[j->nmounts++] = (struct ana_mount){x->dev, pt, ft};
	}
	sys_mounts_free(&m);
}

/* One more slot in j->logs (and in the unreadable messages), for an archive's members. */
static int grow_logs(struct ana_job *j, char ***msgs, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap * 2 > need ? *cap * 2 : need;
	struct log_file *v = realloc(j->logs, n * sizeof *v);
	if (!v)
		return -ENOMEM;
	j->logs = v;
	char **m = realloc(*msgs, n * sizeof *m);
	if (!m)
		return -ENOMEM;
	*msgs = m;
	*cap = n;
	return 0;
}

/* A problem with one input: counted, its message kept (the first also for stderr). */
static int unreadable_log(struct ana_job *j, char ***msgs, const char *e)
{
	if (!((*msgs)[j->nunreadable++] = strdup(e)))
		return -ENOMEM;
	if (!j->first_problem && !(j->first_problem = strdup(e)))
		return -ENOMEM;
	return 0;
}

/* Every member of a job archive (iostrata merge), one at a time; a damaged member costs itself. */
static int read_archive(struct ana_job *j, const char *path, char ***msgs, size_t *cap)
{
	struct log_archive *a;
	char e[1024];
	if (log_archive_open(path, &a, e, sizeof e) < 0)
		return unreadable_log(j, msgs, e);
	int r = 0;
	size_t n = log_archive_count(a);
	for (size_t i = 0; i < n && r == 0; i++) {
		if ((r = grow_logs(j, msgs, cap, j->nlogs + j->nunreadable + 1)) < 0)
			break;
		if (log_archive_read(a, i, &j->logs[j->nlogs], e, sizeof e) < 0) {
			r = unreadable_log(j, msgs, e);
			continue;
		}
		if (j->logs[j->nlogs++].warning) {
			j->ndamaged++;
			if (!j->first_problem && !(j->first_problem = strdup(j->logs[j->nlogs - 1].warning)))
				r = -ENOMEM;
		}
	}
	j->nfound += n ? n - 1 : 0; /* the archive was counted as one input */
	log_archive_close(a);
	return r;
}

/* Read every input the scan found; the unreadable ones are left out, counted, and their messages
 * kept in msgs (the first also in first_problem, for stderr). */
static int read_logs(struct ana_job *j, const struct log_scan *s, char ***msgs)
{
	size_t cap = s->npaths ? s->npaths : 1;
	j->logs = calloc(cap, sizeof *j->logs);
	*msgs = calloc(cap, sizeof **msgs);
	if (!j->logs || !*msgs)
		return -ENOMEM;
	for (size_t i = 0; i < s->npaths; i++) {
		char e[1024];
		int r;
		if (log_archive_is(s->paths[i])) {
			if ((r = read_archive(j, s->paths[i], msgs, &cap)) < 0)
				return r;
			continue;
		}
		if ((r = grow_logs(j, msgs, &cap, j->nlogs + j->nunreadable + 1)) < 0)
			return r;
		if (log_file_read(s->paths[i], &j->logs[j->nlogs], e, sizeof e) < 0) {
			if ((r = unreadable_log(j, msgs, e)) < 0)
				return r;
		} else if (j->logs[j->nlogs++].warning) {
			j->ndamaged++;
			if (!j->first_problem && !(j->first_problem = strdup(j->logs[j->nlogs - 1].warning)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* What the reader and the scan stepped over, in the report's warnings. */
static int input_warnings(struct ana_job *j, const struct log_scan *s, char **unreadable, size_t nunreadable)
{
	struct ana_profile *p = &j->prof;
	for (size_t i = 0; s && i < s->nwarnings; i++)
		if (ana_profile_add_warning(p, "%s", s->warnings[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < nunreadable; i++)
		if (ana_profile_add_warning(p, "%s (log left out)", unreadable[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < j->nlogs; i++) {
		const struct log_file *lf = &j->logs[i];
		if (lf->warning && ana_profile_add_warning(p, "%s%s", lf->warning,
							    lf->nwarnings > 1 ? " (and more damage after it)" : "") < 0)
			return -ENOMEM;
		if (lf->trace_dropped &&
		    ana_profile_add_warning(p, "pid %d: %llu calls not traced (the trace area was full, or a signal "
					       "handler's call came inside the trace code): run --trace-mb more",
					    lf->hdr.pid, (unsigned long long)lf->trace_dropped) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A traced job: its timeline, the contention score and the per-call breakdown. A trace that does
 * not merge costs the job those sections and says why. */
static int build_timeline(struct ana_job *j, unsigned flags, char *err, size_t errlen)
{
	/* the report's sections need user traces; the timeline command also merges kernel events alone */
	int traced = 0;
	for (size_t k = 0; k < j->nlogs && !traced; k++)
		traced = j->logs[k].ntrace_threads || ((flags & ANA_JOB_NO_PROFILE) && j->logs[k].nevents);
	if (!traced)
		return 0;
	char terr[512];
	int r = tl_build_from(j->logs, j->nlogs, &j->tl, terr, sizeof terr);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		if (j->have_profile)
			return ana_profile_add_warning(&j->prof, "the trace could not be merged: %s", terr);
		snprintf(err, errlen, "%s", terr);
		return r;
	}
	j->traced = 1;
	if (tl_sci(&j->tl, &j->sci) < 0 || tl_breakdown(&j->tl, &j->bd) < 0)
		return -ENOMEM;
	return 0;
}

/* The steps after reading, in order. unreadable: messages of the logs the scan found and the reader
 * refused (for the warnings), s: the scan's own warnings (NULL when the logs came from memory). */
static int pipeline(struct ana_job *j, unsigned flags, const struct log_scan *s, char **unreadable,
		    char *err, size_t errlen)
{
	int r;
	if (!(flags & ANA_JOB_NO_PROFILE)) {
		if ((r = ana_profile_build(j->logs, j->nlogs, &j->prof)) < 0)
			return r;
		j->have_profile = 1;
		if ((r = input_warnings(j, s, unreadable, j->nunreadable)) < 0 ||
		    (r = ana_classify_io_mode(&j->prof, &j->prof.io_mode)) < 0)
			return r;
		if ((flags & ANA_JOB_MOUNTS) && !j->nmounts)
			read_mounts(j);
		if ((r = ana_stack_build(&j->prof, j->mounts, j->nmounts, &j->stack)) < 0)
			return r;
	}
	if ((flags & ANA_JOB_TIMELINE) && (r = build_timeline(j, flags, err, errlen)) < 0)
		return r;
	if (j->have_profile && !(flags & ANA_JOB_NO_FINDINGS) &&
	    (r = ana_findings_build(&j->prof, &j->stack, &j->findings)) < 0)
		return r;
	return 0;
}

int ana_job_load(struct ana_job *j, const char *const *args, size_t nargs, unsigned flags, char *err,
		 size_t errlen)
{
	struct log_scan s;
	char **unreadable = NULL;
	int r;

	memset(j, 0, sizeof *j);
	j->owns_logs = 1;
	if (errlen)
		err[0] = '\0';
	if ((r = log_scan_args(args, nargs, &s, err, errlen)) < 0)
		return r;
	j->nfound = s.npaths;
	if (!s.npaths) {
		snprintf(err, errlen, "no logs (*%s or *%s) found in %s%s", LOG_FINAL_SUFFIX, LOG_LIVE_SUFFIX,
			 nargs ? args[0] : "(nothing)", nargs > 1 ? " and the other arguments" : "");
		r = -ENOENT;
		goto out;
	}
	if ((r = read_logs(j, &s, &unreadable)) < 0)
		goto out;
	if (!j->nlogs) {
		snprintf(err, errlen, "%s%s", j->first_problem ? j->first_problem : "no readable log",
			 j->nunreadable > 1 ? " (and no other log could be read either)" : "");
		r = -ENOENT;
		goto out;
	}
	r = pipeline(j, flags, &s, unreadable, err, errlen);
out:
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	for (size_t i = 0; unreadable && i < j->nunreadable; i++)
		free(unreadable[i]);
	free(unreadable);
	log_scan_free(&s);
	if (r < 0)
		ana_job_free(j);
	return r;
}

int ana_job_build(struct ana_job *j, const struct log_file *logs, size_t n, unsigned flags,
		  const struct ana_mount *mounts, size_t nmounts)
{
	char err[512];
	memset(j, 0, sizeof *j);
	j->logs = (struct log_file *)logs; /* not owned: never freed or changed here */
	j->nlogs = j->nfound = n;
	j->mounts = (struct ana_mount *)mounts;
	j->nmounts = nmounts;
	for (size_t i = 0; i < n; i++)
		j->ndamaged += logs[i].warning != NULL;
	int r = pipeline(j, flags & ~(unsigned)ANA_JOB_MOUNTS, NULL, NULL, err, sizeof err);
	if (r < 0)
		ana_job_free(j);
	return r;
}

void ana_job_free(struct ana_job *j)
{
	if (j->traced) {
		tl_sci_free(&j->sci);
		tl_breakdown_free(&j->bd);
	}
	tl_free(&j->tl);
	ana_findings_free(&j->findings);
	ana_stack_free(&j->stack);
	if (j->have_profile)
		ana_profile_free(&j->prof);
	if (j->owns_logs) {
		mounts_free(j);
		for (size_t i = 0; i < j->nlogs; i++)
			log_file_free(&j->logs[i]);
		free(j->logs);
	}
	free(j->first_problem);
	memset(j, 0, sizeof *j);
}
