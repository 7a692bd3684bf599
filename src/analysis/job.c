/* SPDX-License-Identifier: MIT */
/*
 * The job pipeline (job.h). A log that cannot be read, or that was read with damage stepped over,
 * costs the job that log and a warning, never the report: a 1,000-rank job keeps its report when
 * one log is cut. The order of the steps is fixed here and nowhere else.
 */
#include "analysis/job.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pool.h"
#include "analysis/units.h"
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

/*
 * Reading. A report reads each log once to learn its process (ana_profile_add_header) and, after
 * the processes are ranked, once more to merge its records (ana_profile_add_records), rank by
 * rank; between the two it holds nothing of the log. So a job of 10,000 processes takes memory for
 * its processes and the data files of its ranks, not for 10,000 logs' records. A log stays in
 * memory when it must: the collectors' logs (their records join at the end), live logs (they may
 * change or vanish before a second read), and every log of a traced job whose timeline is wanted.
 */
struct source {
	const char *path;      /* the scan's path (a log, or an archive) */
	struct log_archive *a; /* the open archive, or NULL */
	size_t member;
};

struct loader {
	struct ana_job *j;
	unsigned flags;
	int stream;            /* the profile is built while reading: logs need not stay */
	int keep_all;          /* a traced job whose timeline is wanted: every log stays */
	struct source *src;    /* every input the scan and the archives hold */
	size_t cap;
	size_t *slot;          /* per input: its slot in j->logs while it stays, else SIZE_MAX */
	char **unreadable;     /* messages of the inputs that could not be read */
	char **notes;          /* the damage and trace losses of the logs read, in read order */
	size_t nnotes;
	struct log_archive **arcs;
	size_t narcs;
};

static void loader_free(struct loader *L)
{
	for (size_t i = 0; L->unreadable && i < L->j->nunreadable; i++)
		free(L->unreadable[i]);
	free(L->unreadable);
	for (size_t i = 0; i < L->nnotes; i++)
		free(L->notes[i]);
	free(L->notes);
	for (size_t i = 0; i < L->narcs; i++)
		if (L->arcs[i])
			log_archive_close(L->arcs[i]);
	free(L->arcs);
	free(L->src);
	free(L->slot);
}

/* A problem with one input: counted, its message kept (the first also for stderr). */
static int unreadable_log(struct ana_job *j, char **msgs, const char *e)
{
	if (!(msgs[j->nunreadable++] = strdup(e)))
		return -ENOMEM;
	if (!j->first_problem && !(j->first_problem = strdup(e)))
		return -ENOMEM;
	return 0;
}

static int note(struct loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct loader *L, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ana_lines_vaddf(&L->notes, &L->nnotes, fmt, ap);
	va_end(ap);
	return r;
}

static int read_source(const struct source *s, struct log_file *out, char *e, size_t elen)
{
	return s->a ? log_archive_read(s->a, s->member, out, e, elen) : log_file_read(s->path, out, e, elen);
}

/* Slots for every input: the scan's paths, an archive counting as its members (kept open). */
static int plan_inputs(struct loader *L, const struct log_scan *s)
{
	struct ana_job *j = L->j;
	size_t cap = 0;
	L->narcs = s->npaths; /* arcs[i]: path i's archive, or NULL */
	if (!(L->arcs = calloc(s->npaths ? s->npaths : 1, sizeof *L->arcs)))
		return -ENOMEM;
	for (size_t i = 0; i < s->npaths; i++) {
		char e[1024];
		size_t add = 1;
		struct log_archive *a = NULL;
		if (log_archive_is(s->paths[i])) {
			if (log_archive_open(s->paths[i], &a, e, sizeof e) < 0) {
				char **u = realloc(L->unreadable, (j->nunreadable + 1) * sizeof *u);
				if (!u)
					return -ENOMEM;
				L->unreadable = u;
				if (unreadable_log(j, L->unreadable, e) < 0)
					return -ENOMEM;
				continue;
			}
			L->arcs[i] = a;
			add = log_archive_count(a);
			j->nfound += add - 1; /* the archive was counted as one input */
		}
		if (ana_grow(&L->src, &cap, L->cap + add, sizeof *L->src) < 0)
			return -ENOMEM;
		for (size_t m = 0; m < add; m++)
			L->src[L->cap++] = (struct source){s->paths[i], a, m};
	}
	/* one message per input at most */
	char **u = realloc(L->unreadable, (L->cap + j->nunreadable + 1) * sizeof *u);
	if (!u)
		return -ENOMEM;
	L->unreadable = u;
	/* room for every input, touched only by the logs that stay */
	if (!(j->logs = calloc(L->cap ? L->cap : 1, sizeof *j->logs)) ||
	    !(L->slot = malloc((L->cap ? L->cap : 1) * sizeof *L->slot)))
		return -ENOMEM;
	return 0;
}

/* What a log read brings besides its records: its damage, its trace losses. */
static int log_notes(struct loader *L, const struct log_file *lf)
{
	struct ana_job *j = L->j;
	if (lf->warning) {
		j->ndamaged++;
		if (!j->first_problem && !(j->first_problem = strdup(lf->warning)))
			return -ENOMEM;
		if (note(L, "%s%s", lf->warning, lf->nwarnings > 1 ? " (and more damage after it)" : "") < 0)
			return -ENOMEM;
	}
	if (lf->trace_dropped &&
	    note(L, "pid %d: %llu calls not traced (the trace area was full, or a signal handler's call came "
		    "inside the trace code): run --trace-mb more", lf->hdr.pid, (unsigned long long)lf->trace_dropped) < 0)
		return -ENOMEM;
	return 0;
}

#define UNREAD (SIZE_MAX - 1) /* slot of an input that could not be read */

static int must_stay(const struct loader *L, const struct log_file *lf)
{
	return !L->stream || L->keep_all || lf->hdr.kernel_layers || lf->live;
}

/* Pass 1: every input read once; its process to the profile; it stays (in the next slot of
 * j->logs, which never moves: the profile points at collector logs) or is freed. */
static int read_pass(struct loader *L)
{
	struct ana_job *j = L->j;
	int r;
	for (size_t i = 0; i < L->cap; i++) {
		char e[1024];
		struct log_file tmp, *lf = &tmp;
		L->slot[i] = SIZE_MAX;
		if (read_source(&L->src[i], &tmp, e, sizeof e) < 0) {
			L->slot[i] = UNREAD;
			if ((r = unreadable_log(j, L->unreadable, e)) < 0)
				return r;
			continue;
		}
		j->nread++;
		/* a traced job's timeline needs every log, records and all */
		if (L->stream && (L->flags & ANA_JOB_TIMELINE) && !tmp.hdr.kernel_layers && tmp.ntrace_threads)
			L->keep_all = 1;
		if (must_stay(L, &tmp)) {
			L->slot[i] = j->nlogs;
			lf = &j->logs[j->nlogs++];
			*lf = tmp;
		}
		if ((r = log_notes(L, lf)) < 0 || (L->stream && (r = ana_profile_add_header(&j->prof, lf, i)) < 0)) {
			if (lf == &tmp)
				log_file_free(&tmp);
			return r;
		}
		if (lf == &tmp)
			log_file_free(&tmp);
	}
	return 0;
}

/* A log whose second read failed: its process stays, its records are lost. Counted with the
 * logs read in part (the report's exit status is 1), said in the warnings and on stderr. */
static int lost_records(struct loader *L, const char *what)
{
	struct ana_job *j = L->j;
	char msg[1280];
	snprintf(msg, sizeof msg, "%s: its records are left out", what);
	j->ndamaged++;
	if (!j->first_problem && !(j->first_problem = strdup(msg)))
		return -ENOMEM;
	return ana_profile_add_warning(&j->prof, "%s", msg) < 0 ? -ENOMEM : 1;
}

/* A log read the second time: the process the first read saw (0), or lost (1). */
static int reread(struct loader *L, size_t input, struct log_file *out)
{
	char e[1024], what[1100];
	const struct ana_proc *pr = ana_profile_input_proc(&L->j->prof, input);
	if (read_source(&L->src[input], out, e, sizeof e) < 0) {
		snprintf(what, sizeof what, "%s (read once, then no more)", e);
		return lost_records(L, what);
	}
	if (pr && (out->hdr.pid != pr->pid || out->hdr.start_ns != pr->start_ns)) {
		log_file_free(out);
		snprintf(what, sizeof what, "%s: replaced by another process's log while being read", L->src[input].path);
		return lost_records(L, what);
	}
	return 0;
}

/* An input that left memory, read again: into the next slot when it must stay now, else tmp. */
static int bring_back(struct loader *L, size_t input, struct log_file *tmp, struct log_file **lf)
{
	struct ana_job *j = L->j;
	*lf = L->keep_all ? &j->logs[j->nlogs] : tmp;
	int r = reread(L, input, *lf);
	if (r != 0) {
		memset(*lf, 0, sizeof **lf);
		return r;
	}
	if (*lf != tmp)
		L->slot[input] = j->nlogs++;
	return 0;
}

/* Pass 2: the records, rank by rank; the logs that left memory are read again. */
static int merge_pass(struct loader *L)
{
	struct ana_job *j = L->j;
	const size_t *order;
	size_t n = ana_profile_order(&j->prof, &order);
	int r;
	for (size_t i = 0; i < n; i++) {
		size_t input = order[i];
		struct log_file tmp, *lf;
		if (L->slot[input] != SIZE_MAX)
			lf = &j->logs[L->slot[input]];
		else if ((r = bring_back(L, input, &tmp, &lf)) != 0) {
			if (r < 0)
				return r;
			continue;
		}
		r = ana_profile_add_records(&j->prof, lf, input);
		if (lf == &tmp)
			log_file_free(&tmp);
		if (r < 0)
			return r;
	}
	/* a traced job decided late: the logs not merged (duplicates) that left memory come back too */
	for (size_t input = 0; L->keep_all && input < L->cap; input++) {
		struct log_file *lf;
		if (L->slot[input] == SIZE_MAX && (r = bring_back(L, input, NULL, &lf)) < 0)
			return r;
	}
	return 0;
}

/* What the reader and the scan stepped over, in the report's warnings. */
static int input_warnings(struct ana_job *j, const struct log_scan *s, char **unreadable, size_t nunreadable,
			  char **notes, size_t nnotes)
{
	struct ana_profile *p = &j->prof;
	for (size_t i = 0; s && i < s->nwarnings; i++)
		if (ana_profile_add_warning(p, "%s", s->warnings[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < nunreadable; i++)
		if (ana_profile_add_warning(p, "%s (log left out)", unreadable[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < nnotes; i++)
		if (ana_profile_add_warning(p, "%s", notes[i]) < 0)
			return -ENOMEM;
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
	if (tl_sci(&j->tl, &j->sci) < 0 || tl_breakdown(&j->tl, &j->bd) < 0 || tl_series_build(&j->tl, &j->series) < 0)
		return -ENOMEM;
	return 0;
}

/* The steps after the profile, in order. */
static int pipeline(struct ana_job *j, unsigned flags, char *err, size_t errlen)
{
	int r;
	if (j->have_profile) {
		if ((r = ana_classify_io_mode(&j->prof, &j->prof.io_mode)) < 0)
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
	struct loader L = {.j = j, .flags = flags, .stream = !(flags & ANA_JOB_NO_PROFILE)};
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
	if ((r = plan_inputs(&L, &s)) < 0)
		goto out;
	if (L.stream) {
		if ((r = ana_profile_begin(&j->prof, L.cap)) < 0)
			goto out;
		j->have_profile = 1;
	}
	if ((r = read_pass(&L)) < 0)
		goto out;
	if (!j->nread) {
		snprintf(err, errlen, "%s%s", j->first_problem ? j->first_problem : "no readable log",
			 j->nunreadable > 1 ? " (and no other log could be read either)" : "");
		r = -ENOENT;
		goto out;
	}
	if (L.stream && ((r = ana_profile_index(&j->prof)) < 0 || (r = merge_pass(&L)) < 0 ||
			 (r = ana_profile_finish(&j->prof)) < 0 ||
			 (r = input_warnings(j, &s, L.unreadable, j->nunreadable, L.notes, L.nnotes)) < 0))
		goto out;
	r = pipeline(j, flags, err, errlen);
out:
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	loader_free(&L);
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
	j->nlogs = j->nread = j->nfound = n;
	j->mounts = (struct ana_mount *)mounts;
	j->nmounts = nmounts;
	struct loader L = {.j = j};
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = log_notes(&L, &logs[i]);
	if (r == 0 && !(flags & ANA_JOB_NO_PROFILE)) {
		if ((r = ana_profile_build(logs, n, &j->prof)) == 0) {
			j->have_profile = 1;
			r = input_warnings(j, NULL, NULL, 0, L.notes, L.nnotes);
		}
	}
	if (r == 0)
		r = pipeline(j, flags & ~(unsigned)ANA_JOB_MOUNTS, err, sizeof err);
	loader_free(&L);
	if (r < 0)
		ana_job_free(j);
	return r;
}

void ana_job_free(struct ana_job *j)
{
	if (j->traced) {
		tl_sci_free(&j->sci);
		tl_breakdown_free(&j->bd);
		tl_series_free(&j->series);
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
