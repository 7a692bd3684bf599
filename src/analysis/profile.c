/* SPDX-License-Identifier: MIT */
/*
 * Merges the logs of one job into a profile: processes, ranks, per-(path, layer, rank) files,
 * per-(path, layer) rows for the top-files tables, per-layer totals, the job's wall time, rank
 * imbalance and the warnings a reader of the report must see (unfinished, crashed, overflowed
 * processes). Counters are merged by their kind from the X-macro table, never by name, so a new
 * counter is merged correctly without touching this file. It only merges: the I/O mode, the layer
 * stack and the findings are computed after it by the job pipeline (job.c); nothing here prints.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/units.h"

void ana_counters_merge(uint64_t dst[LOG_NCOUNTERS], const uint64_t src[LOG_NCOUNTERS])
{
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		switch (log_counter_kinds[c]) {
		case LOG_K_SUM:
		case LOG_K_TIME:
			dst[c] += src[c];
			break;
		case LOG_K_MAX:
		case LOG_K_LAST:
			if (src[c] > dst[c])
				dst[c] = src[c];
			break;
		case LOG_K_TMAX:
			/* The size belongs to the op that took this long: it moves with its time. */
			if (src[c] > dst[c]) {
				dst[c] = src[c];
				if (c + 1 < LOG_NCOUNTERS && log_counter_kinds[c + 1] == LOG_K_SIZE)
					dst[c + 1] = src[c + 1];
			}
			break;
		case LOG_K_FIRST:
			/* 0 means "never happened", not "at time 0". */
			if (src[c] && (!dst[c] || src[c] < dst[c]))
				dst[c] = src[c];
			break;
		case LOG_K_SIZE:
		default:
			break;
		}
	}
}

int ana_record_in_layer_totals(const struct log_record *r)
{
	/* the block layer's per-file records repeat its device totals: the layer adds devices */
	return !(r->layer == LOG_LAYER_BLOCK && r->ino);
}

uint64_t ana_meta_ops(const uint64_t c[LOG_NCOUNTERS])
{
	/* Flushes only move stdio's buffer into write(): they are data, not metadata. */
	return c[LOG_C_OPENS] + c[LOG_C_CLOSES] + c[LOG_C_SEEKS] + c[LOG_C_STATS] + c[LOG_C_FSYNCS] +
	       c[LOG_C_RENAMES] + c[LOG_C_DUPS] + c[LOG_C_MMAPS] + c[LOG_C_META_OTHER];
}

static int cmp_common_value(const void *a, const void *b)
{
	const struct ana_common *x = a, *y = b;
	return (x->value > y->value) - (x->value < y->value);
}

static int cmp_common_count(const void *a, const void *b)
{
	const struct ana_common *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->value > y->value) - (x->value < y->value);
}

static double ratio(double num, double den)
{
	return den > 0 ? num / den : 0;
}

struct ana_rates ana_layer_rates(const struct ana_layer *l, uint64_t wall_ns)
{
	const uint64_t *c = l->c;
	double bytes = (double)c[LOG_C_BYTES_READ] + (double)c[LOG_C_BYTES_WRITTEN];
	double wall = (double)wall_ns / 1e9;
	struct ana_rates r = {
		.bw_io = ratio(bytes, ((double)c[LOG_C_TIME_READ] + (double)c[LOG_C_TIME_WRITE]) / 1e9),
		.bw_read_io = ratio((double)c[LOG_C_BYTES_READ], (double)c[LOG_C_TIME_READ] / 1e9),
		.bw_write_io = ratio((double)c[LOG_C_BYTES_WRITTEN], (double)c[LOG_C_TIME_WRITE] / 1e9),
		.bw_wall = ratio(bytes, wall),
		.bw_job = l->span_end_ns > l->span_start_ns
				  ? ratio((double)l->data_bytes, (double)(l->span_end_ns - l->span_start_ns) / 1e9)
				  : 0,
		.iops = ratio((double)c[LOG_C_READS] + (double)c[LOG_C_WRITES], wall),
		.mdops = ratio((double)l->meta_ops, wall),
	};
	return r;
}

const char *ana_record_path(const struct log_file *lf, const struct log_record *r)
{
	if (r->flags & LOG_R_OVERFLOW)
		return "<overflow>";
	const char *s = log_file_string(lf, r->path);
	return s[0] ? s : "<unnamed>";
}

int ana_profile_add_warning(struct ana_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ana_lines_vaddf(&p->warnings, &p->nwarnings, fmt, ap);
	va_end(ap);
	return r;
}

static void build_free(struct ana_build *b);

void ana_profile_free(struct ana_profile *p)
{
	build_free(p->build);
	free(p->build);
	ana_pool_free(&p->pool);
	free(p->klogs);
	free(p->procs);
	free(p->ranks);
	free(p->files);
	free(p->paths);
	free(p->by_bytes);
	free(p->by_time);
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	memset(p, 0, sizeof *p);
}

/* ---- processes ---- */

static const char *hstr(const struct log_file *lf, uint32_t off)
{
	return log_file_string(lf, off);
}

static int record_is_empty(const struct log_record *r)
{
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
		if (r->counters[c])
			return 0;
	return !r->unseen_requests; /* a file whose every block request went unseen */
}

/* A process that has not finished has no end time: the latest thing it was seen doing is the
 * best lower bound we have. */
static uint64_t process_end(const struct log_file *lf)
{
	if (!lf->live && lf->hdr.end_ns)
		return lf->hdr.end_ns > lf->hdr.start_ns ? lf->hdr.end_ns : lf->hdr.start_ns;
	return log_file_last_ns(lf);
}

static int cmp_proc_start(const void *a, const void *b, void *arg)
{
	const struct ana_proc *x = a, *y = b;
	const int multi_host = *(const int *)arg;
	/* Monotonic clocks of different hosts have different origins; wall clocks are comparable. */
	uint64_t kx = multi_host ? x->start_wall_ns : x->start_ns;
	uint64_t ky = multi_host ? y->start_wall_ns : y->start_ns;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return x->kernel_only - y->kernel_only;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* The log's path and, with argv set, its stored arguments, into the pool. */
static int copy_log_info(struct ana_profile *p, struct ana_proc *pr, const struct log_file *lf, int argv)
{
	const struct log_header *h = &lf->hdr;
	struct ana_proc_log *l = &pr->log;
	if (!(l->path = ana_pool_intern(&p->pool, lf->path ? lf->path : "")))
		return -ENOMEM;
	if (!argv)
		return 0;
	uint32_t n = 0;
	while (log_file_arg(lf, n))
		n++;
	const char **v = ana_pool_alloc(&p->pool, (n ? n : 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (!(v[i] = ana_pool_intern(&p->pool, log_file_arg(lf, i))))
			return -ENOMEM;
	l->argv = v;
	l->argc = n;
	l->argc_total = h->argc_total > n ? h->argc_total : n;
	return 0;
}

static int proc_from_log(struct ana_profile *p, struct ana_proc *pr, const struct log_file *lf, size_t input)
{
	const struct log_header *h = &lf->hdr;
	memset(pr, 0, sizeof *pr);
	pr->input = input;
	if (copy_log_info(p, pr, lf, 1) < 0)
		return -ENOMEM;
	pr->log.max_records = h->max_records;
	pr->log.disabled_reason = h->disabled_reason;
	pr->log.file_alignment = h->file_alignment;
	pr->log.mem_alignment = h->mem_alignment;
	pr->log.overflow_opens = h->overflow_opens;
	pr->log.untracked_ops = h->untracked_ops;
	pr->log.mmap_table_full = h->mmap_table_full;
	pr->log.aio_table_full = h->aio_table_full;
	pr->pid = lf->hdr.pid;
	pr->ppid = lf->hdr.ppid;
	pr->rank = lf->hdr.rank;
	if (!(pr->exe = ana_pool_intern(&p->pool, hstr(lf, lf->hdr.exe))) ||
	    !(pr->host = ana_pool_intern(&p->pool, hstr(lf, lf->hdr.host))) ||
	    !(pr->job = ana_pool_intern(&p->pool, hstr(lf, lf->hdr.job))))
		return -ENOMEM;
	pr->start_ns = lf->hdr.start_ns;
	pr->end_ns = process_end(lf);
	pr->start_wall_ns = lf->hdr.start_wall_ns;
	pr->finished = !lf->live;
	pr->flags = lf->hdr.flags;
	pr->exit_status = lf->hdr.exit_status;
	pr->term_signal = lf->hdr.term_signal;
	return 0;
}

/* ---- processes only the kernel saw ---- */

/* The earliest moment a record shows activity: its earliest FIRST timestamp, else its earliest
 * LAST one; 0 when it has none. */
static uint64_t record_first_ns(const struct log_record *r)
{
	uint64_t first = 0, last = 0;
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		uint64_t v = r->counters[c];
		if (v && log_counter_kinds[c] == LOG_K_FIRST && (!first || v < first))
			first = v;
		if (v && log_counter_kinds[c] == LOG_K_LAST && (!last || v < last))
			last = v;
	}
	return first ? first : last;
}

static uint64_t record_last_ns(const struct log_record *r)
{
	uint64_t last = 0;
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
		if (log_counter_kinds[c] == LOG_K_LAST && r->counters[c] > last)
			last = r->counters[c];
	return last;
}

static int layer_known(unsigned layer)
{
	return layer != LOG_LAYER_NONE && layer <= LOG_LAYER_MAX;
}

/* A record that counts: live, of a known layer, not empty (catch-alls and std streams are created
 * up front; untouched they say nothing). */
static int record_wanted(const struct log_record *r)
{
	return !(r->flags & LOG_R_DEAD) && layer_known(r->layer) && !record_is_empty(r);
}

/* Process images by (host, pid, start): the images of one pid are adjacent, in the order they ran;
 * two logs of one image (a final log and its live link) compare equal. */
static int cmp_image(const struct ana_proc *x, const struct ana_proc *y)
{
	int r = strcmp(x->host, y->host);
	if (r)
		return r;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* procs by image; a user log's image before a kernel-only one of the same start. */
static int cmp_pid_index(const void *a, const void *b, void *arg)
{
	const struct ana_proc *procs = arg;
	const struct ana_proc *x = &procs[*(const size_t *)a], *y = &procs[*(const size_t *)b];
	int r = cmp_image(x, y);
	return r ? r : x->kernel_only - y->kernel_only;
}

/* First index into idx (sorted by cmp_pid_index) of (host, pid); n when there is none. */
static size_t pid_lower(const struct ana_proc *procs, const size_t *idx, size_t n, const char *host, int32_t pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ana_proc *x = &procs[idx[mid]];
		int r = strcmp(x->host, host);
		if (r < 0 || (r == 0 && x->pid < pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && procs[idx[lo]].pid == pid && !strcmp(procs[idx[lo]].host, host))
		return lo;
	return n;
}

/* A process image only the kernel saw, as far as its records tell. */
struct unseen {
	const char *host;
	int32_t pid;
	size_t klog;      /* index into p->klogs */
	uint64_t after;   /* the end of the image that exec'd into it, else 0 */
	uint64_t start, end;
};

static int cmp_unseen(const void *a, const void *b)
{
	const struct unseen *x = a, *y = b;
	int r = strcmp(x->host, y->host);
	if (r)
		return r;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The image a kernel record belongs to, when the user layer has none for it: no user log of its
 * pid (a static program; a child of one), or its pid's last user-layer image exec'd and the
 * record's activity began after that (a launcher's child exec'ing a static rank). */
static int unseen_of(const struct ana_profile *p, const size_t *idx, size_t nuser, const struct log_file *lf,
		     int32_t pid, uint64_t t, struct unseen *u)
{
	const char *host = hstr(lf, lf->hdr.host);
	size_t k = pid_lower(p->procs, idx, nuser, host, pid);
	*u = (struct unseen){.host = host, .pid = pid, .start = t, .end = t};
	if (k == nuser)
		return 1;
	while (k + 1 < nuser && p->procs[idx[k + 1]].pid == pid && !strcmp(p->procs[idx[k + 1]].host, host))
		k++;
	const struct ana_proc *last = &p->procs[idx[k]];
	if (!(last->flags & LOG_F_EXEC) || !t || t < last->end_ns)
		return 0;
	u->after = u->start = last->end_ns;
	return 1;
}

/*
 * Adds a process for every image the kernel log shows doing I/O that no user-layer log covers,
 * and for the traced command itself when it has no user-layer log: their system calls are then
 * their I/O. The command keeps its header (exe, argv, exit status); other images are known by
 * pid only, from the first to the last timestamp of their records.
 */
static int add_kernel_procs(struct ana_profile *p, size_t cap)
{
	size_t nuser = p->nprocs, nu = 0, total = 0;
	size_t *idx = malloc((nuser ? nuser : 1) * sizeof *idx);
	struct unseen *u = NULL;
	int ret = -ENOMEM;

	for (size_t i = 0; i < p->nklogs; i++)
		total += p->klogs[i]->nrecords + 1;
	u = malloc((total ? total : 1) * sizeof *u);
	if (!idx || !u)
		goto err;
	for (size_t i = 0; i < nuser; i++)
		idx[i] = i;
	qsort_r(idx, nuser, sizeof *idx, cmp_pid_index, p->procs);
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		struct unseen x;
		/* the command: present even when it did no I/O of its own, it names the job (a mount
		 * log's header is its monitor's, which is no process of the job) */
		if (!ana_is_mount_log(lf) && unseen_of(p, idx, nuser, lf, lf->hdr.pid, lf->hdr.start_ns, &x) && !x.after) {
			x.klog = i;
			x.start = lf->hdr.start_ns;
			x.end = process_end(lf);
			u[nu++] = x;
		}
		for (uint32_t k = 0; k < lf->nrecords; k++) {
			const struct log_record *r = &lf->records[k];
			/* pid 0: work without a process context (writeback, device totals) */
			if (!r->pid || !record_wanted(r))
				continue;
			if (!unseen_of(p, idx, nuser, lf, r->pid, record_first_ns(r), &x))
				continue;
			x.klog = i;
			uint64_t last = record_last_ns(r);
			x.end = last > x.start ? last : x.start;
			u[nu++] = x;
		}
	}
	qsort(u, nu, sizeof *u, cmp_unseen);
	for (size_t i = 0, j; i < nu; i = j) {
		struct unseen m = u[i];
		for (j = i + 1; j < nu && !cmp_unseen(&u[i], &u[j]); j++) {
			if (!m.after && u[j].start && (!m.start || u[j].start < m.start))
				m.start = u[j].start;
			if (u[j].end > m.end)
				m.end = u[j].end;
		}
		const struct log_file *lf = p->klogs[m.klog];
		int cmd = m.pid == lf->hdr.pid && !ana_is_mount_log(lf);
		if (ana_grow(&p->procs, &cap, p->nprocs + 1, sizeof *p->procs) < 0)
			goto err;
		struct ana_proc *pr = &p->procs[p->nprocs++];
		memset(pr, 0, sizeof *pr);
		pr->input = SIZE_MAX;
		if (copy_log_info(p, pr, lf, cmd && !m.after) < 0)
			goto err;
		pr->kernel_only = 1;
		/* seen by a mount monitor alone (a standalone `iostrata mount`, no kernel log): its
		 * requests at the mount point are the only view of its I/O */
		pr->mount_only = ana_is_mount_log(lf) && !p->nkernel_logs;
		pr->pid = m.pid;
		pr->ppid = cmd && !m.after ? lf->hdr.ppid : 0;
		pr->rank = -1;
		if (!(pr->exe = ana_pool_intern(&p->pool, cmd && !m.after ? hstr(lf, lf->hdr.exe) : "")) ||
		    !(pr->host = ana_pool_intern(&p->pool, m.host)) ||
		    !(pr->job = ana_pool_intern(&p->pool, hstr(lf, lf->hdr.job))))
			goto err;
		pr->start_ns = m.start ? m.start : lf->hdr.start_ns;
		/* the command's last image ends with the kernel log */
		pr->end_ns = cmd ? process_end(lf) : m.end;
		if (pr->end_ns < pr->start_ns)
			pr->end_ns = pr->start_ns;
		pr->start_wall_ns = lf->hdr.start_wall_ns + (pr->start_ns - lf->hdr.start_ns);
		pr->finished = !lf->live;
		pr->flags = lf->live ? LOG_F_LIVE : LOG_F_FINISHED;
		pr->exit_status = cmd ? lf->hdr.exit_status : -1;
		pr->term_signal = cmd ? lf->hdr.term_signal : 0;
		p->nkernel_procs++;
	}
	ret = 0;
err:
	free(idx);
	free(u);
	return ret;
}

/* Duplicates: a directory may briefly hold a process's final log and its live link at once. */
static int cmp_identity(const void *a, const void *b)
{
	const struct ana_proc *x = a, *y = b;
	int r = cmp_image(x, y);
	if (r)
		return r;
	if (x->finished != y->finished)
		return y->finished - x->finished; /* the final log first: it wins */
	return (x->input > y->input) - (x->input < y->input);
}

/* Processes of the user logs, duplicates left out; then those only the collectors saw; in start
 * order. */
static int collect_procs(struct ana_profile *p, size_t cap)
{
	size_t nv = p->nprocs, n = 0;
	if (nv)
		qsort(p->procs, nv, sizeof *p->procs, cmp_identity);
	for (size_t i = 0; i < nv; i++)
		if (!n || cmp_image(&p->procs[n - 1], &p->procs[i]))
			p->procs[n++] = p->procs[i];
	p->nprocs = n;
	p->kernel_only = nv == 0 && p->nkernel_logs > 0;
	if (p->nklogs && add_kernel_procs(p, cap) < 0)
		return -ENOMEM;
	for (size_t i = 1; i < p->nprocs; i++)
		if (strcmp(p->procs[0].host, p->procs[i].host))
			p->multi_host = 1;
	if (p->nprocs)
		qsort_r(p->procs, p->nprocs, sizeof *p->procs, cmp_proc_start, &p->multi_host);
	return 0;
}

/* ---- ranks ---- */

static int cmp_proc_identity(const void *a, const void *b, void *arg)
{
	const struct ana_profile *p = arg;
	size_t ix = *(const size_t *)a, iy = *(const size_t *)b;
	const struct ana_proc *x = &p->procs[ix], *y = &p->procs[iy];
	int r = strcmp(x->host, y->host);
	if (r)
		return r;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (ix > iy) - (ix < iy); /* start order: procs are already in it */
}

static int same_pid(const struct ana_proc *x, const struct ana_proc *y)
{
	return x->pid == y->pid && !strcmp(x->host, y->host);
}

static int cmp_proc_rank(const void *a, const void *b, void *arg)
{
	const struct ana_profile *p = arg;
	size_t ix = *(const size_t *)a, iy = *(const size_t *)b;
	const struct ana_proc *x = &p->procs[ix], *y = &p->procs[iy];
	int ux = x->job_rank < 0, uy = y->job_rank < 0;
	if (ux != uy)
		return ux - uy;
	if (!ux && x->job_rank != y->job_rank)
		return x->job_rank < y->job_rank ? -1 : 1;
	if (ux)
		return cmp_proc_identity(a, b, arg);
	return (ix > iy) - (ix < iy);
}

/* One rank: the same rank, or, without one, the same process: a pid whose program exec'd
 * another leaves one log per image, and they are one process to the user. */
static int same_rank(const struct ana_proc *x, const struct ana_proc *y)
{
	if (x->job_rank >= 0 || y->job_rank >= 0)
		return x->job_rank == y->job_rank;
	return same_pid(x, y);
}

/* A launcher's child gets its rank only in the environment of the program it execs: its first
 * image has none. Give every image of a pid the rank of its first ranked image. The last image of
 * a pid that ended in exec had a successor that left no log, user or kernel (exec_lost: the
 * program it exec'd never loaded the library, a static one); a live image may just not have its
 * successor's log yet, so only finished ones count. */
static void assign_job_ranks(struct ana_profile *p, size_t *idx)
{
	for (size_t i = 0; i < p->nprocs; i++)
		idx[i] = i;
	qsort_r(idx, p->nprocs, sizeof *idx, cmp_proc_identity, p);
	for (size_t i = 0, j; i < p->nprocs; i = j) {
		int32_t rank = -1;
		for (j = i; j < p->nprocs && same_pid(&p->procs[idx[i]], &p->procs[idx[j]]); j++)
			if (rank < 0 && p->procs[idx[j]].rank >= 0)
				rank = p->procs[idx[j]].rank;
		for (size_t k = i; k < j; k++) {
			struct ana_proc *pr = &p->procs[idx[k]];
			pr->job_rank = pr->rank >= 0 ? pr->rank : rank;
		}
		struct ana_proc *last = &p->procs[idx[j - 1]];
		last->exec_lost = (last->flags & LOG_F_EXEC) && !last->kernel_only && last->finished;
	}
}

static int collect_ranks(struct ana_profile *p)
{
	size_t *idx = malloc((p->nprocs ? p->nprocs : 1) * sizeof *idx);
	int ret = -ENOMEM;

	p->ranks = calloc(p->nprocs ? p->nprocs : 1, sizeof *p->ranks);
	if (!idx || !p->ranks)
		goto err;
	assign_job_ranks(p, idx);
	for (size_t i = 0; i < p->nprocs; i++)
		idx[i] = i;
	qsort_r(idx, p->nprocs, sizeof *idx, cmp_proc_rank, p);
	for (size_t k = 0; k < p->nprocs; k++) {
		struct ana_proc *pr = &p->procs[idx[k]];
		if (k && same_rank(&p->procs[idx[k - 1]], pr)) {
			p->ranks[p->nranks - 1].nprocs++;
		} else {
			struct ana_rank *r = &p->ranks[p->nranks++];
			r->rank = pr->job_rank < 0 ? -1 : pr->job_rank;
			r->pid = pr->pid;
			r->nprocs = 1;
		}
		pr->rank_index = p->nranks - 1;
	}
	ret = 0;
err:
	free(idx);
	return ret;
}

/* ---- files, paths, layers ---- */

void ana_hist_add(uint64_t dst[LOG_HIST_BUCKETS], const uint64_t src[LOG_HIST_BUCKETS])
{
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		dst[b] += src[b];
}

/* The (value, count) pairs of a layer's access sizes or strides, merged as records come: appended,
 * and folded (sorted by value, equal values added) whenever they double. */
struct common_acc {
	struct ana_common *v;
	size_t n, cap, folded;
};

static void common_fold(struct common_acc *a)
{
	size_t m = 0;
	if (a->n)
		qsort(a->v, a->n, sizeof *a->v, cmp_common_value);
	for (size_t i = 0; i < a->n; i++) {
		if (m && a->v[m - 1].value == a->v[i].value)
			a->v[m - 1].count += a->v[i].count;
		else
			a->v[m++] = a->v[i];
	}
	a->n = a->folded = m;
}

/* Equal values come from different records, or from two slots of one record that racing threads
 * claimed for the same value: either way they are one access size. */
static int common_add(struct common_acc *a, const struct log_common *slots)
{
	for (unsigned s = 0; s < LOG_COMMON_SLOTS; s++) {
		if (!slots[s].count)
			continue;
		/* full: fold when half of it came since the last fold; grow when folding left it full */
		if (a->n == a->cap && a->folded * 2 < a->n)
			common_fold(a);
		if (ana_grow(&a->v, &a->cap, a->n + 1, sizeof *a->v) < 0)
			return -ENOMEM;
		a->v[a->n++] = (struct ana_common){slots[s].value, slots[s].count};
	}
	return 0;
}

/* The top k by count (desc; ties by value asc) into out: how many. */
static size_t common_top(struct common_acc *a, struct ana_common *out, size_t k)
{
	common_fold(a);
	if (a->n)
		qsort(a->v, a->n, sizeof *a->v, cmp_common_count);
	size_t m = a->n < k ? a->n : k;
	if (m)
		memcpy(out, a->v, m * sizeof *out);
	return m;
}

/* What the steps of a build share (profile.h, "in steps"). */
struct ana_build {
	size_t ninputs;
	size_t cap_procs;
	int indexed;
	size_t *in_proc;        /* input -> index into procs; SIZE_MAX: its records do not count */
	size_t *order;          /* the inputs whose records count, rank by rank */
	size_t norder;
	size_t *slots;          /* files by (path, layer, rank): index + 1 into files; 0 empty */
	size_t nslots, cap_files;
	size_t *first_proc;     /* per file: the earliest process merged into it */
	size_t *last_rank;      /* per file: the rank merged last (nranks of a runtime file) */
	size_t unknown_layer;   /* records of layers this build does not know */
	struct common_acc sizes[ANA_NLAYERS], strides[ANA_NLAYERS];
};

static void build_free(struct ana_build *b)
{
	if (!b)
		return;
	free(b->in_proc);
	free(b->order);
	free(b->slots);
	free(b->first_proc);
	free(b->last_rank);
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		free(b->sizes[l].v);
		free(b->strides[l].v);
	}
	memset(b, 0, sizeof *b);
}

/*
 * Per-rank totals count each byte once, at the layer closest to the system. When stdio's own
 * system calls reach the POSIX layer (LOG_F_STDIO_SYSCALLS, the normal case with glibc) the
 * stdio records repeat bytes, calls and time already in POSIX records, so they are left out;
 * otherwise stdio's calls are the only record of that I/O and are added. Only records in the job
 * view come here (ana_in_job_view).
 */
static void rank_add(struct ana_rank *k, const struct log_record *r, uint32_t proc_flags)
{
	const uint64_t *c = r->counters;

	if (r->layer == LOG_LAYER_STDIO && (proc_flags & LOG_F_STDIO_SYSCALLS))
		return;
	k->reads += c[LOG_C_READS];
	k->writes += c[LOG_C_WRITES];
	k->meta_ops += ana_meta_ops(c);
	k->bytes_read += c[LOG_C_BYTES_READ];
	k->bytes_written += c[LOG_C_BYTES_WRITTEN];
	k->time_read += c[LOG_C_TIME_READ];
	k->time_write += c[LOG_C_TIME_WRITE];
	k->time_meta += c[LOG_C_TIME_META];
}

int ana_in_job_view(const struct ana_proc *pr, unsigned layer)
{
	if (layer == LOG_LAYER_MOUNT) /* the same I/O as the user layer, seen lower down */
		return pr->mount_only;
	if (!ana_layer_is_kernel(layer))
		return 1;
	return layer == LOG_LAYER_SYSCALL && pr->kernel_only;
}

/* The process a kernel record belongs to: among the images of the pid it names (work without a
 * process context: the traced command's) on the kernel log's host, the last one started before
 * the record's first activity; the command when no image has that pid. */
static size_t kernel_record_proc(const struct ana_profile *p, const size_t *idx, const struct log_file *lf,
				 const struct log_record *r)
{
	const char *host = hstr(lf, lf->hdr.host);
	size_t k = pid_lower(p->procs, idx, p->nprocs, host, r->pid ? r->pid : lf->hdr.pid);
	if (k == p->nprocs) {
		k = pid_lower(p->procs, idx, p->nprocs, host, lf->hdr.pid);
		if (k == p->nprocs)
			return 0; /* not reached: the command always has a process (add_kernel_procs) */
	}
	uint64_t t = record_first_ns(r);
	size_t best = idx[k];
	for (size_t j = k + 1; j < p->nprocs; j++) {
		const struct ana_proc *x = &p->procs[idx[j]];
		if (x->pid != p->procs[idx[k]].pid || strcmp(x->host, host))
			break;
		if (t && x->start_ns <= t)
			best = idx[j];
	}
	return best;
}

uint64_t ana_layer_random_ops(const struct ana_layer *l, int write)
{
	uint64_t ops = l->c[write ? LOG_C_WRITES : LOG_C_READS];
	uint64_t seq = l->c[write ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];
	uint64_t first = l->first[write ? 1 : 0];
	return ops > seq + first ? ops - seq - first : 0;
}

static void layer_add(struct ana_layer *L, const struct log_record *r)
{
	L->nrecords++;
	L->first[0] += r->counters[LOG_C_READS] != 0;
	L->first[1] += r->counters[LOG_C_WRITES] != 0;
	ana_counters_merge(L->c, r->counters);
	ana_hist_add(L->read_hist, r->read_hist);
	ana_hist_add(L->write_hist, r->write_hist);
	ana_hist_add(L->read_lat_hist, r->read_lat_hist);
	ana_hist_add(L->write_lat_hist, r->write_lat_hist);
}

/* A file of the user layers that is the program's runtime, not its data: merged over ranks. */
static int runtime_file(unsigned layer, uint16_t rflags, const char *path)
{
	if (ana_layer_is_kernel(layer) || layer == LOG_LAYER_MOUNT)
		return 0;
	return (rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW)) || !ana_is_data_path(path);
}

static size_t file_hash(const char *path, unsigned layer, size_t rank)
{
	uint64_t h = (uint64_t)(uintptr_t)path * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)layer << 56) ^ (uint64_t)rank * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 29));
}

static int files_grow(struct ana_profile *p)
{
	struct ana_build *b = p->build;
	size_t n = b->cap_files ? b->cap_files * 2 : 256;
	struct ana_file *v = realloc(p->files, n * sizeof *v);
	if (!v)
		return -ENOMEM;
	p->files = v;
	size_t *fp = realloc(b->first_proc, n * sizeof *fp), *lr = fp ? realloc(b->last_rank, n * sizeof *lr) : NULL;
	if (fp)
		b->first_proc = fp;
	if (!fp || !lr)
		return -ENOMEM;
	b->last_rank = lr;
	b->cap_files = n;
	size_t ns = n * 2; /* at most half full */
	size_t *slots = calloc(ns, sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		size_t k = file_hash(f->path, f->layer, f->rank_index) & (ns - 1);
		while (slots[k])
			k = (k + 1) & (ns - 1);
		slots[k] = i + 1;
	}
	free(b->slots);
	b->slots = slots;
	b->nslots = ns;
	return 0;
}

/* The file (path, layer, rank), created empty when new; NULL when out of memory. path is interned. */
static struct ana_file *file_get(struct ana_profile *p, const char *path, unsigned layer, size_t rank)
{
	struct ana_build *b = p->build;
	if (p->nfiles == b->cap_files && files_grow(p) < 0)
		return NULL;
	size_t k = file_hash(path, layer, rank) & (b->nslots - 1);
	for (; b->slots[k]; k = (k + 1) & (b->nslots - 1)) {
		struct ana_file *f = &p->files[b->slots[k] - 1];
		if (f->path == path && f->layer == layer && f->rank_index == rank)
			return f;
	}
	size_t i = p->nfiles++;
	b->slots[k] = i + 1;
	b->first_proc[i] = SIZE_MAX;
	b->last_rank[i] = SIZE_MAX;
	struct ana_file *f = &p->files[i];
	memset(f, 0, sizeof *f);
	f->path = path;
	f->layer = layer;
	f->rank_index = rank;
	return f;
}

/* One record of process pi into its file, its rank, its layer. */
static int merge_record(struct ana_profile *p, size_t pi, const struct log_file *lf, const struct log_record *r)
{
	struct ana_build *b = p->build;
	const struct ana_proc *pr = &p->procs[pi];
	const char *path = ana_pool_intern(&p->pool, ana_record_path(lf, r));
	if (!path)
		return -ENOMEM;
	size_t rk = pr->rank_index;
	struct ana_file *f = file_get(p, path, r->layer, runtime_file(r->layer, r->flags, path) ? ANA_RANKS_ALL : rk);
	if (!f)
		return -ENOMEM;
	size_t fi = (size_t)(f - p->files);
	/* the pid of its earliest process; a kernel record names its own */
	if (pi < b->first_proc[fi]) {
		b->first_proc[fi] = pi;
		f->pid = r->pid ? r->pid : pr->pid;
	}
	if (b->last_rank[fi] != rk) { /* a rank's records come together (ana_profile_order) */
		b->last_rank[fi] = rk;
		f->nranks++;
	}
	if (!f->dev && !f->ino && (r->dev || r->ino)) {
		f->dev = r->dev;
		f->ino = r->ino;
	}
	f->nprocs++;
	f->rflags |= r->flags;
	ana_counters_merge(f->c, r->counters);
	f->unseen[0] += r->unseen_requests;
	f->unseen[1] += r->unseen_bytes_read;
	f->unseen[2] += r->unseen_bytes_written;
	if (r->agg_state && r->agg_state < 32) {
		f->agg_states |= 1u << r->agg_state;
		if (r->agg_fs_magic)
			f->agg_fs_magic = r->agg_fs_magic;
		if (r->agg_probe_ns > f->agg_probe_ns)
			f->agg_probe_ns = r->agg_probe_ns;
	}
	ana_hist_add(f->read_hist, r->read_hist);
	ana_hist_add(f->write_hist, r->write_hist);
	ana_hist_add(f->read_lat_hist, r->read_lat_hist);
	ana_hist_add(f->write_lat_hist, r->write_lat_hist);

	if (r->layer == LOG_LAYER_MPIIO) {
		struct ana_rank *k = &p->ranks[rk];
		k->mpiio_ops += r->counters[LOG_C_READS] + r->counters[LOG_C_WRITES];
		k->mpiio_bytes += r->counters[LOG_C_BYTES_READ] + r->counters[LOG_C_BYTES_WRITTEN];
		k->mpiio_time += r->counters[LOG_C_TIME_READ] + r->counters[LOG_C_TIME_WRITE] + r->counters[LOG_C_TIME_META];
	}
	if (ana_in_job_view(pr, r->layer)) {
		f->job_view = 1;
		rank_add(&p->ranks[rk], r, pr->flags);
		if (ana_layer_is_kernel(r->layer))
			layer_add(&p->standin, r);
	}
	struct ana_layer *L = &p->layers[r->layer];
	L->sizes_other += r->sizes_other;
	L->strides_other += r->strides_other;
	if (common_add(&b->sizes[r->layer], r->sizes) < 0 || common_add(&b->strides[r->layer], r->strides) < 0)
		return -ENOMEM;
	if (!ana_record_in_layer_totals(r))
		L->nrecords++;
	else
		layer_add(L, r);
	return 0;
}

/* record_wanted, counting the live records of layers this build does not know. */
static int record_counts(struct ana_build *b, const struct log_record *r)
{
	b->unknown_layer += !(r->flags & LOG_R_DEAD) && !layer_known(r->layer);
	return record_wanted(r);
}

/* The collectors' records, each under the process it names. */
static int merge_collector_records(struct ana_profile *p)
{
	size_t *idx = malloc((p->nprocs ? p->nprocs : 1) * sizeof *idx);
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < p->nprocs; i++)
		idx[i] = i;
	qsort_r(idx, p->nprocs, sizeof *idx, cmp_pid_index, p->procs);
	int r = 0;
	for (size_t i = 0; i < p->nklogs && !r; i++) {
		const struct log_file *lf = p->klogs[i];
		for (uint32_t k = 0; k < lf->nrecords && !r; k++)
			if (record_counts(p->build, &lf->records[k]))
				r = merge_record(p, kernel_record_proc(p, idx, lf, &lf->records[k]), lf, &lf->records[k]);
	}
	free(idx);
	return r;
}

static int cmp_file(const void *a, const void *b)
{
	const struct ana_file *x = a, *y = b;
	int r = x->path == y->path ? 0 : strcmp(x->path, y->path);
	if (r)
		return r;
	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	return (x->rank_index > y->rank_index) - (x->rank_index < y->rank_index);
}

/* After the last record: layer totals that derive from the merged counters, files in order. */
static int close_files(struct ana_profile *p)
{
	struct ana_build *b = p->build;
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		struct ana_layer *L = &p->layers[l];
		L->meta_ops = ana_meta_ops(L->c);
		L->nsizes = common_top(&b->sizes[l], L->sizes, ANA_COMMON_TOP);
		L->nstrides = common_top(&b->strides[l], L->strides, ANA_COMMON_TOP);
	}
	p->standin.meta_ops = ana_meta_ops(p->standin.c);
	/* a runtime file only one rank used keeps that rank (at most one entry of its path and layer) */
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].rank_index == ANA_RANKS_ALL && p->files[i].nranks == 1)
			p->files[i].rank_index = b->last_rank[i];
	if (p->nfiles)
		qsort(p->files, p->nfiles, sizeof *p->files, cmp_file);
	return 0;
}

static uint64_t path_bytes(const struct ana_path *x)
{
	return x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN];
}

static uint64_t path_time(const struct ana_path *x)
{
	return x->c[LOG_C_TIME_READ] + x->c[LOG_C_TIME_WRITE] + x->c[LOG_C_TIME_META];
}

static int cmp_path_name(const struct ana_path *x, const struct ana_path *y)
{
	int r = strcmp(x->path, y->path);
	if (r)
		return r;
	return (x->layer > y->layer) - (x->layer < y->layer);
}

static int cmp_by_bytes(const void *a, const void *b, void *arg)
{
	const struct ana_path *paths = arg;
	const struct ana_path *x = &paths[*(const size_t *)a], *y = &paths[*(const size_t *)b];
	if (path_bytes(x) != path_bytes(y))
		return path_bytes(x) < path_bytes(y) ? 1 : -1;
	return cmp_path_name(x, y);
}

static int cmp_by_time(const void *a, const void *b, void *arg)
{
	const struct ana_path *paths = arg;
	const struct ana_path *x = &paths[*(const size_t *)a], *y = &paths[*(const size_t *)b];
	if (path_time(x) != path_time(y))
		return path_time(x) < path_time(y) ? 1 : -1;
	return cmp_path_name(x, y);
}

static int collect_paths(struct ana_profile *p)
{
	size_t m = p->nfiles ? p->nfiles : 1;

	p->paths = calloc(m, sizeof *p->paths);
	p->by_bytes = malloc(m * sizeof *p->by_bytes);
	p->by_time = malloc(m * sizeof *p->by_time);
	if (!p->paths || !p->by_bytes || !p->by_time)
		return -ENOMEM;
	/* files are sorted by (path, layer, rank): a path's ranks are adjacent */
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		struct ana_path *x = p->npaths ? &p->paths[p->npaths - 1] : NULL;
		if (!x || strcmp(x->path, f->path) || x->layer != f->layer) {
			x = &p->paths[p->npaths++];
			x->path = f->path;
			x->layer = f->layer;
			p->layers[f->layer].nfiles++;
		}
		x->nranks += f->nranks;
		x->rflags |= f->rflags;
		x->job_view |= f->job_view;
		ana_counters_merge(x->c, f->c);
		for (int u = 0; u < 3; u++)
			x->unseen[u] += f->unseen[u];
	}
	for (size_t i = 0; i < p->npaths; i++) {
		if (path_bytes(&p->paths[i]))
			p->by_bytes[p->nby_bytes++] = i;
		if (path_time(&p->paths[i]))
			p->by_time[p->nby_time++] = i;
	}
	qsort_r(p->by_bytes, p->nby_bytes, sizeof *p->by_bytes, cmp_by_bytes, p->paths);
	qsort_r(p->by_time, p->nby_time, sizeof *p->by_time, cmp_by_time, p->paths);
	return 0;
}

static void rank_imbalance(struct ana_profile *p)
{
	/* Ranks that did no reads or writes (a launcher, a rank that only opens) would pull the mean
	 * down and make an even job look imbalanced. With MPI-IO recorded, its calls are what each
	 * rank asked for: collective buffering has a few aggregators make the POSIX calls of all. */
	double max_b = 0, max_t = 0, sum_b = 0, sum_t = 0;
	int mpiio = 0;
	for (size_t i = 0; i < p->nranks; i++)
		mpiio |= p->ranks[i].mpiio_ops != 0;
	for (size_t i = 0; i < p->nranks; i++) {
		const struct ana_rank *k = &p->ranks[i];
		if (mpiio ? !k->mpiio_ops : !k->reads && !k->writes)
			continue;
		if (p->mpi && k->rank < 0) /* a launcher */
			continue;
		double b = mpiio ? (double)k->mpiio_bytes : (double)k->bytes_read + (double)k->bytes_written;
		double t = mpiio ? (double)k->mpiio_time
				 : (double)k->time_read + (double)k->time_write + (double)k->time_meta;
		p->ranks_with_io++;
		sum_b += b;
		sum_t += t;
		if (b > max_b)
			max_b = b;
		if (t > max_t)
			max_t = t;
	}
	if (p->ranks_with_io) {
		p->imbalance_bytes = ratio(max_b, sum_b / (double)p->ranks_with_io);
		p->imbalance_time = ratio(max_t, sum_t / (double)p->ranks_with_io);
	}
}

/* The I/O phase of each layer (ana_layer.data_bytes, span_*): what a benchmark times itself. */
static void io_spans(struct ana_profile *p)
{
	if (p->multi_host) /* CLOCK_MONOTONIC of different hosts: no common axis */
		return;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (!ana_is_data_file(f) || (p->mpi && p->ranks[f->rank_index].rank < 0))
			continue;
		struct ana_layer *L = &p->layers[f->layer];
		const uint64_t *c = f->c;
		uint64_t t0 = 0, t1 = 0;
		const unsigned firsts[] = {LOG_C_OPEN_FIRST, LOG_C_READ_FIRST, LOG_C_WRITE_FIRST};
		const unsigned lasts[] = {LOG_C_CLOSE_LAST, LOG_C_READ_LAST, LOG_C_WRITE_LAST};
		for (int k = 0; k < 3; k++) {
			if (c[firsts[k]] && (!t0 || c[firsts[k]] < t0))
				t0 = c[firsts[k]];
			if (c[lasts[k]] > t1)
				t1 = c[lasts[k]];
		}
		L->data_bytes += c[LOG_C_BYTES_READ] + c[LOG_C_BYTES_WRITTEN];
		if (t0 && (!L->span_start_ns || t0 < L->span_start_ns))
			L->span_start_ns = t0;
		if (t1 > L->span_end_ns)
			L->span_end_ns = t1;
	}
	/* MPI-IO's open and close bound the phase the application timed: the layers below it moved
	 * the same bytes inside it */
	const struct ana_layer *M = &p->layers[LOG_LAYER_MPIIO];
	if (M->span_end_ns > M->span_start_ns)
		for (unsigned l = 0; l < ANA_NLAYERS; l++)
			if (l != LOG_LAYER_MPIIO && p->layers[l].data_bytes) {
				p->layers[l].span_start_ns = M->span_start_ns;
				p->layers[l].span_end_ns = M->span_end_ns;
			}
}

/* ---- job ---- */

static int job_figures(struct ana_profile *p)
{
	if (!p->nprocs)
		return 0;
	p->first = &p->procs[0];
	p->job_id = p->first->job;
	p->start_wall_ns = p->first->start_wall_ns;
	p->finished = 1;

	uint64_t lo = UINT64_MAX, hi = 0;
	size_t other_jobs = 0;
	const char *other_job = NULL;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ana_proc *pr = &p->procs[i];
		uint64_t s = pr->start_ns, e = pr->end_ns;
		if (p->multi_host) {
			/* Move each process onto the wall clock through its own anchor pair. */
			s = pr->start_wall_ns;
			e = s + (pr->end_ns - pr->start_ns);
		}
		if (s < lo)
			lo = s;
		if (e > hi)
			hi = e;
		if (!pr->finished)
			p->finished = 0;
		if (strcmp(pr->job, p->job_id)) {
			other_jobs++;
			if (!other_job)
				other_job = pr->job;
		}
	}
	p->wall_ns = hi > lo ? hi - lo : 0;
	if (other_jobs &&
	    ana_profile_add_warning(p, "%zu of %zu logs belong to another job than '%s' (e.g. '%s'): "
				       "the report mixes jobs", other_jobs, p->nprocs, p->job_id, other_job))
		return -ENOMEM;
	if (p->multi_host &&
	    ana_profile_add_warning(p, "processes ran on several hosts: wall time is taken from each host's "
				       "wall clock and is off by their clock skew"))
		return -ENOMEM;
	return 0;
}

enum proc_warning { W_UNFINISHED, W_CRASHED, W_OVERFLOW, W_DISABLED, W_EXEC_LOST, W_NKINDS };

/* Said for the processes past ANA_WARN_PER_KIND: "... and 12 more processes <this>". */
static const char *const warning_rest[W_NKINDS] = {
	[W_UNFINISHED] = "did not finish",
	[W_CRASHED] = "were recovered after they died",
	[W_OVERFLOW] = "overflowed a table",
	[W_DISABLED] = "disabled capture",
	[W_EXEC_LOST] = "exec'd a program that left no log",
};

static int warning_applies(const struct ana_proc *pr, enum proc_warning w)
{
	switch (w) {
	case W_UNFINISHED:
		return !pr->finished;
	case W_CRASHED:
		return (pr->flags & LOG_F_CRASHED) != 0;
	case W_OVERFLOW:
		return (pr->flags & LOG_F_OVERFLOW) != 0;
	case W_DISABLED:
		return (pr->flags & LOG_F_DISABLED) != 0;
	case W_EXEC_LOST:
		return pr->exec_lost;
	default:
		return 0;
	}
}

static int warn_process(struct ana_profile *p, const struct ana_proc *pr, enum proc_warning w)
{
	const struct ana_proc_log *h = &pr->log;
	const char *exe = pr->exe[0] ? base_name(pr->exe) : "seen by the kernel layer only";

	if (w == W_UNFINISHED)
		return ana_profile_add_warning(p, "pid %d (%s) did not finish: counters as they stood when read",
					       pr->pid, exe);
	if (w == W_CRASHED) {
		char sig[48] = "";
		if (pr->term_signal > 0)
			snprintf(sig, sizeof sig, " (signal %d)", pr->term_signal);
		return ana_profile_add_warning(p, "pid %d (%s): log recovered after the process died%s; its last "
					       "operations may be missing", pr->pid, exe, sig);
	}
	if (w == W_DISABLED)
		return ana_profile_add_warning(p, "pid %d (%s): capture disabled itself (%s): later I/O is missing",
					       pr->pid, exe, strerror((int)h->disabled_reason));
	if (w == W_EXEC_LOST)
		return ana_profile_add_warning(p, "pid %d (%s) exec'd a program that left no log: a statically linked "
					       "program (the preload library cannot load into it) or one started without "
					       "LD_PRELOAD; its I/O is missing: run with --kernel (root) to see its system "
					       "calls", pr->pid, exe);
	char what[256];
	size_t n = 0;
	what[0] = '\0';
	if (h->overflow_opens)
		ana_appendf(what, sizeof what, &n, ", %llu opens beyond the file table",
			    (unsigned long long)h->overflow_opens);
	if (h->untracked_ops)
		ana_appendf(what, sizeof what, &n, ", %llu ops on fds beyond the fd table",
			    (unsigned long long)h->untracked_ops);
	if (h->mmap_table_full)
		ana_appendf(what, sizeof what, &n, ", %llu mappings not remembered",
			    (unsigned long long)h->mmap_table_full);
	if (h->aio_table_full)
		ana_appendf(what, sizeof what, &n, ", %llu aio requests not matched",
			    (unsigned long long)h->aio_table_full);
	return ana_profile_add_warning(p, "pid %d (%s): tables overflowed (%s); files that did not fit are "
				       "counted in the catch-all records \"<overflow>\": run again with --max-records %u "
				       "or more (it had %u)",
				       pr->pid, exe, n ? what + 2 : "no overflow counter set",
				       h->max_records ? (h->max_records > (1u << 18) ? 1u << 20 : h->max_records * 4) : 16384,
				       h->max_records);
}

/* A job of thousands of killed processes needs one line saying so, not thousands. */
static int proc_warnings(struct ana_profile *p, size_t unknown_layer)
{
	for (int w = 0; w < W_NKINDS; w++) {
		size_t n = 0;
		for (size_t i = 0; i < p->nprocs; i++) {
			if (!warning_applies(&p->procs[i], (enum proc_warning)w))
				continue;
			if (n++ < ANA_WARN_PER_KIND && warn_process(p, &p->procs[i], (enum proc_warning)w))
				return -ENOMEM;
		}
		if (n > ANA_WARN_PER_KIND &&
		    ana_profile_add_warning(p, "... and %zu more processes %s (per process: processes[] in --json)",
					    n - ANA_WARN_PER_KIND, warning_rest[w]))
			return -ENOMEM;
	}
	if (unknown_layer &&
	    ana_profile_add_warning(p, "%zu records of unknown layers ignored", unknown_layer))
		return -ENOMEM;
	return 0;
}

int ana_is_mount_log(const struct log_file *lf)
{
	return lf->hdr.kernel_layers == 1u << LOG_LAYER_MOUNT;
}

int ana_layer_is_kernel(unsigned layer)
{
	/* mpiio and hdf5 sit above the POSIX layer, which holds the same bytes again: like the
	 * kernel layers they are further views of the I/O, kept out of the ranks' totals */
	return layer == LOG_LAYER_SYSCALL || layer == LOG_LAYER_PAGECACHE || layer == LOG_LAYER_FS ||
	       layer == LOG_LAYER_BLOCK || layer == LOG_LAYER_MPIIO || layer == LOG_LAYER_HDF5;
}

int ana_layer_has_patterns(unsigned layer)
{
	return layer == LOG_LAYER_POSIX || layer == LOG_LAYER_STDIO;
}

int ana_profile_begin(struct ana_profile *p, size_t ninputs)
{
	memset(p, 0, sizeof *p);
	/* Page-cache counts are pages; the logs do not say of what size, and a report is read on the
	 * machine (or the kind of machine) that ran the job. */
	long ps = sysconf(_SC_PAGESIZE);
	p->page_size = ps > 0 ? (unsigned)ps : 4096;
	if (!(p->build = calloc(1, sizeof *p->build)))
		return -ENOMEM;
	p->build->ninputs = ninputs;
	if (!(p->build->in_proc = malloc((ninputs ? ninputs : 1) * sizeof *p->build->in_proc)))
		return -ENOMEM;
	for (size_t i = 0; i < ninputs; i++)
		p->build->in_proc[i] = SIZE_MAX;
	return 0;
}

uint32_t ana_kernel_layers_missing(const struct ana_profile *p)
{
	const uint32_t all = (1u << LOG_LAYER_SYSCALL) | (1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS) |
			     (1u << LOG_LAYER_BLOCK);
	return p->nkernel_logs ? all & ~p->kernel_layers : 0;
}

void ana_kernel_timed(const struct ana_profile *p, uint64_t *calls, uint64_t *timed)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_SYSCALL];
	*calls = L->c[LOG_C_READS] - L->c[LOG_C_ERR_READS] + L->c[LOG_C_WRITES] - L->c[LOG_C_ERR_WRITES];
	*timed = 0;
	for (int b = 0; b < LOG_HIST_BUCKETS; b++)
		*timed += L->read_lat_hist[b] + L->write_lat_hist[b];
}

int ana_profile_add_header(struct ana_profile *p, const struct log_file *lf, size_t input)
{
	struct ana_build *b = p->build;
	if (!b || b->indexed || input >= b->ninputs || !lf)
		return -EINVAL;
	if (lf->hdr.kernel_layers) {
		/* its records join at the end, under the processes they name; it is no process */
		const struct log_file **v = realloc(p->klogs, (p->nklogs + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		p->klogs = v;
		p->klogs[p->nklogs++] = lf;
		if (ana_is_mount_log(lf)) {
			p->nmount_logs++;
			return 0;
		}
		p->nkernel_logs++;
		p->kernel_layers |= lf->hdr.kernel_layers;
		if (lf->hdr.kernel_lat_every > p->kernel_lat_every)
			p->kernel_lat_every = lf->hdr.kernel_lat_every;
		p->kernel_flags |= lf->hdr.kernel_flags;
		p->kernel_events_dropped += lf->hdr.events_dropped;
		p->kernel_table_full += lf->hdr.kernel_table_full;
		p->kernel_prog_misses += lf->hdr.kernel_prog_misses;
		p->kernel_closes_unnamed += lf->hdr.kernel_closes_unnamed;
		p->kernel_fds_unfollowed += lf->hdr.kernel_fds_unfollowed;
		return 0;
	}
	if (ana_grow(&p->procs, &b->cap_procs, p->nprocs + 1, sizeof *p->procs) < 0)
		return -ENOMEM;
	if (proc_from_log(p, &p->procs[p->nprocs], lf, input) < 0)
		return -ENOMEM;
	p->nprocs++;
	return 0;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct ana_profile *p = arg;
	size_t x = p->build->in_proc[*(const size_t *)a], y = p->build->in_proc[*(const size_t *)b];
	size_t rx = p->procs[x].rank_index, ry = p->procs[y].rank_index;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return (x > y) - (x < y);
}

int ana_profile_index(struct ana_profile *p)
{
	struct ana_build *b = p->build;
	int r;
	if (!b || b->indexed)
		return -EINVAL;
	if ((r = collect_procs(p, b->cap_procs)) < 0 || (r = collect_ranks(p)) < 0)
		return r;
	for (size_t i = 0; i < p->nranks; i++)
		p->mpi |= p->ranks[i].rank >= 0;
	for (size_t i = 0; p->mpi && i < p->nranks; i++)
		p->nlaunchers += p->ranks[i].rank < 0;
	if (!(b->order = malloc((p->nprocs ? p->nprocs : 1) * sizeof *b->order)))
		return -ENOMEM;
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].input != SIZE_MAX) {
			b->in_proc[p->procs[i].input] = i;
			b->order[b->norder++] = p->procs[i].input;
		}
	qsort_r(b->order, b->norder, sizeof *b->order, cmp_order, p);
	b->indexed = 1;
	return files_grow(p);
}

size_t ana_profile_order(const struct ana_profile *p, const size_t **order)
{
	*order = p->build ? p->build->order : NULL;
	return p->build ? p->build->norder : 0;
}

const struct ana_proc *ana_profile_input_proc(const struct ana_profile *p, size_t input)
{
	const struct ana_build *b = p->build;
	if (!b || !b->indexed || input >= b->ninputs || b->in_proc[input] == SIZE_MAX)
		return NULL;
	return &p->procs[b->in_proc[input]];
}

int ana_profile_add_records(struct ana_profile *p, const struct log_file *lf, size_t input)
{
	struct ana_build *b = p->build;
	if (!b || !b->indexed || input >= b->ninputs || !lf)
		return -EINVAL;
	size_t pi = b->in_proc[input];
	if (pi == SIZE_MAX) /* a duplicate, or a collector's log */
		return 0;
	for (uint32_t k = 0; k < lf->nrecords; k++) {
		int r;
		if (record_counts(b, &lf->records[k]) && (r = merge_record(p, pi, lf, &lf->records[k])) < 0)
			return r;
	}
	return 0;
}

int ana_profile_finish(struct ana_profile *p)
{
	struct ana_build *b = p->build;
	int r;
	if (!b || !b->indexed)
		return -EINVAL;
	if ((r = merge_collector_records(p)) < 0 || (r = close_files(p)) < 0 || (r = collect_paths(p)) < 0)
		return r;
	rank_imbalance(p);
	io_spans(p);
	if ((r = job_figures(p)) < 0 || (r = proc_warnings(p, b->unknown_layer)) < 0)
		return r;
	build_free(b);
	free(b);
	p->build = NULL;
	return 0;
}

int ana_profile_build(const struct log_file *logs, size_t n, struct ana_profile *p)
{
	const size_t *order;
	int r;

	if (n && !logs) {
		memset(p, 0, sizeof *p);
		return -EINVAL;
	}
	if ((r = ana_profile_begin(p, n)) < 0)
		goto err;
	for (size_t i = 0; i < n; i++)
		if ((r = ana_profile_add_header(p, &logs[i], i)) < 0)
			goto err;
	if ((r = ana_profile_index(p)) < 0)
		goto err;
	size_t m = ana_profile_order(p, &order);
	for (size_t i = 0; i < m; i++)
		if ((r = ana_profile_add_records(p, &logs[order[i]], order[i])) < 0)
			goto err;
	if ((r = ana_profile_finish(p)) < 0)
		goto err;
	return 0;
err:
	ana_profile_free(p);
	return r;
}
