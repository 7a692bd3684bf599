/* SPDX-License-Identifier: MIT */
/*
 * iostratad's interval (daemon.h). Each interval:
 *   1. every live directory (iostrata-UID under the live roots) is read, each live log in place
 *      (source.c); a log not seen before becomes a process of its job;
 *   2. a process whose live log is gone is taken to its end from its final log;
 *   3. the differences against each log's last reading become node-seconds; every
 *      stats_interval (and at a process's end) the differences against its stored cursor become
 *      interval statistics, and that reading its new cursor (docs/STORE.md, "Two cadences":
 *      the node's cursor, stored every interval, says what the node-seconds counted beyond the
 *      stored cursors, so a restart counts it once);
 *   4. /proc/diskstats is read and its deltas become device samples;
 *   5. a job with no live process for job_grace gets its report from the job pipeline;
 *   6. all of it, with the new cursors and the node's cursor, is one store transaction. Only
 *      when it commits do the cursors in memory move on (the node-seconds' aheads move in place,
 *      and a failure takes back what they moved: cursor.h, struct dmn_undo); when it fails, the
 *      next interval takes the same differences again (a longer interval), so a full disk or a
 *      killed daemon loses and repeats nothing.
 */
#include "daemon/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "analysis/job.h"
#include "analysis/profile.h"
#include "analysis/report.h"
#include "daemon/diagnose_job.h"
#include "log/livelog.h"
#include "sys/sorted.h"
#include "sys/text.h"

/* ---------- messages ---------- */

static void vsay(const char *fmt, va_list ap)
{
	fputs("iostratad: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void dmn_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* Room for one more element in the array at *pv (n used of *cap, each size bytes): 0 or -ENOMEM. */
static int grow(void *pv, size_t *cap, size_t n, size_t size)
{
	void *x = sys_text_grow(*(void **)pv, cap, n, size, 16);
	if (!x)
		return -ENOMEM;
	*(void **)pv = x;
	return 0;
}

static int set_has(const struct dmn_set *set, uint64_t key)
{
	key = key ? key : 1;
	for (size_t i = key & (DMN_SET_SLOTS - 1); set->slot && set->slot[i]; i = (i + 1) & (DMN_SET_SLOTS - 1))
		if (set->slot[i] == key)
			return 1;
	return 0;
}

static void set_add(struct dmn_set *set, uint64_t key)
{
	key = key ? key : 1;
	if (!set->slot && !(set->slot = calloc(DMN_SET_SLOTS, sizeof *set->slot)))
		return;
	if (set->n >= DMN_SET_SLOTS / 2) { /* half full: start again */
		memset(set->slot, 0, DMN_SET_SLOTS * sizeof *set->slot);
		set->n = 0;
	}
	size_t i = key & (DMN_SET_SLOTS - 1);
	while (set->slot[i] && set->slot[i] != key)
		i = (i + 1) & (DMN_SET_SLOTS - 1);
	if (!set->slot[i])
		set->n++;
	set->slot[i] = key;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void dmn_say_once(struct dmn *d, uint64_t key, const char *fmt, ...)
{
	if (set_has(&d->reported, key))
		return;
	set_add(&d->reported, key);
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A log's CLOCK_MONOTONIC time as wall clock ms, through its header's anchor. */
static int64_t log_wall_ms(const struct log_header *h, uint64_t mono_ns)
{
	if (!h->start_wall_ns)
		return wall_ms();
	int64_t off = (int64_t)mono_ns - (int64_t)h->start_ns;
	return ((int64_t)h->start_wall_ns + off) / 1000000;
}

/* ---------- rows of the current interval ---------- */

struct row {
	struct dmn_proc *p;
	const char *path; /* its process's (struct dmn_rpath, dmn_fpath): it lives at least until stored */
	unsigned layer, cat;
	int64_t bytes, calls, dur;
};

/* A job's report, made at its end, until it is stored (text and findings NULL, json_fd -1 when
 * none). The JSON stays in the sealed memory file the report child wrote: a job of 1,000
 * processes has tens of MB of it, which the daemon never holds whole (the store reads it from
 * the file; only a sink's batch maps it). */
struct ending {
	struct dmn_job *job;
	char *block; /* the report child's text and findings, which the pointers below point into */
	char *text;
	int json_fd;
	uint64_t json_len;
	char **findings;
	size_t nfindings;
};
#define ENDING_NONE(j) ((struct ending){(j), NULL, NULL, -1, 0, NULL, 0})

static void ending_free(struct ending *e)
{
	free(e->block);
	free(e->findings);
	if (e->json_fd >= 0)
		close(e->json_fd);
	*e = ENDING_NONE(e->job);
}

/* A traced process's run, until it is stored. */
struct runrow {
	struct dmn_proc *p;
	char *path;
	struct store_run r; /* without its keys and t_ms */
};

struct dmn_rowbuf {
	struct row *v;
	size_t n, cap;
	struct runrow *runs;
	size_t nruns, capruns;
	struct store_node_sec node[LOG_LAYER_MAX + 1];
	int node_used[LOG_LAYER_MAX + 1];
	struct store_device_sample *dev;
	size_t ndev, capdev;
	struct sys_diskstats disk_now;
	int have_disk_now;
	struct ending *ending; /* jobs whose report is stored in this interval */
	size_t nending, capending;
};

static void rows_clear(struct dmn_rowbuf *rb)
{
	/* the statistics' rows (a row per file moved: 1.5 MB in bench/daemon) are not kept for the
	 * intervals between them */
	if (rb->cap > 4096) {
		free(rb->v);
		rb->v = NULL;
		rb->cap = 0;
	}
	rb->n = 0;
	for (size_t i = 0; i < rb->nruns; i++)
		free(rb->runs[i].path);
	rb->nruns = 0;
	memset(rb->node, 0, sizeof rb->node);
	memset(rb->node_used, 0, sizeof rb->node_used);
	rb->ndev = 0;
	if (rb->have_disk_now)
		sys_diskstats_free(&rb->disk_now);
	rb->have_disk_now = 0;
	for (size_t i = 0; i < rb->nending; i++)
		ending_free(&rb->ending[i]);
	rb->nending = 0;
}

static int rows_add(struct dmn_rowbuf *rb, struct dmn_proc *p, const char *path, unsigned layer, unsigned cat,
		    int64_t bytes, int64_t calls, int64_t dur)
{
	if (grow(&rb->v, &rb->cap, rb->n, sizeof *rb->v) < 0)
		return -ENOMEM;
	rb->v[rb->n++] = (struct row){p, path, layer, cat, bytes, calls, dur};
	return 0;
}

/* ---------- processes and jobs ---------- */

static int cmp_proc_key(int32_t pid, uint64_t start_ns, const struct dmn_proc *p)
{
	if (pid != p->pid)
		return pid < p->pid ? -1 : 1;
	return start_ns < p->start_ns ? -1 : start_ns > p->start_ns;
}

static size_t proc_pos(const struct dmn *d, int32_t pid, uint64_t start_ns)
{
	size_t lo = 0, hi = d->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_proc_key(pid, start_ns, d->procs[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct dmn_proc *proc_find(const struct dmn *d, int32_t pid, uint64_t start_ns)
{
	size_t i = proc_pos(d, pid, start_ns);
	return i < d->nprocs && !cmp_proc_key(pid, start_ns, d->procs[i]) ? d->procs[i] : NULL;
}

static int proc_insert(struct dmn *d, struct dmn_proc *p)
{
	if (grow(&d->procs, &d->capprocs, d->nprocs, sizeof *d->procs) < 0)
		return -ENOMEM;
	size_t i = proc_pos(d, p->pid, p->start_ns);
	memmove(&d->procs[i + 1], &d->procs[i], (d->nprocs - i) * sizeof *d->procs);
	d->procs[i] = p;
	d->nprocs++;
	return 0;
}

/* A record's path as its process keeps it, with its file's key in the store (0 until looked
 * up, and again after a failed transaction): the statistics' rows name the file by it, with no
 * lookup by name and no copy of the path per row. */
struct dmn_fpath {
	int64_t key;
	char s[];
};
static struct dmn_fpath *fpath_of(const char *path)
{
	return path ? (struct dmn_fpath *)(void *)(path - offsetof(struct dmn_fpath, s)) : NULL;
}

static void proc_free(struct dmn_proc *p)
{
	if (!p)
		return;
	dmn_cursor_free(&p->cur);
	dmn_cursor_free(&p->node);
	dmn_cursor_free(&p->next);
	dmn_aheads_free(&p->counted);
	dmn_aheads_free(&p->owed);
	dmn_aheads_free(&p->sums);
	dmn_undo_free(&p->undo);
	free(p->piece);
	dmn_live_unmap(&p->map);
	for (size_t i = 0; i < p->npaths; i++)
		free(fpath_of(p->paths[i].path));
	free(p->paths);
	dmn_trace_free(p->trace);
	free(p->exe);
	free(p->live_path);
	free(p->final_path);
	free(p);
}

static uint64_t done_key(int32_t pid, uint64_t start_ns)
{
	return ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) ^ start_ns;
}

static struct dmn_job *job_get(struct dmn *d, const char *job, uid_t uid, gid_t gid, const char *jobdir,
			       const char *exe, int64_t start_ms)
{
	for (size_t i = 0; i < d->njobs; i++)
		if (d->jobs[i]->uid == uid && !strcmp(d->jobs[i]->job, job))
			return d->jobs[i];
	if (grow(&d->jobs, &d->capjobs, d->njobs, sizeof *d->jobs) < 0)
		return NULL;
	struct dmn_job *j = calloc(1, sizeof *j);
	if (!j || !(j->job = strdup(job)) || !(j->jobdir = strdup(jobdir)) || !(j->exe = strdup(exe))) {
		if (j) {
			free(j->job);
			free(j->jobdir);
		}
		free(j);
		return NULL;
	}
	j->uid = uid;
	j->gid = gid;
	j->start_ms = start_ms;
	j->last_live_ms = wall_ms();
	d->jobs[d->njobs++] = j;
	return j;
}

static void job_free(struct dmn_job *j)
{
	free(j->job);
	free(j->jobdir);
	free(j->exe);
	free(j);
}

/* ---------- taking a log: the differences against the cursor ---------- */

/* A process's differences of one layer (what its node-seconds did not count yet) join the node's. */
static void node_add(struct dmn_rowbuf *rb, const char *host, const struct dmn_ahead *a)
{
	struct store_node_sec *ns = &rb->node[a->layer];
	rb->node_used[a->layer] = 1;
	ns->host = host;
	ns->layer = a->layer;
	ns->bytes_read += a->v[DMN_A_BYTES_READ];
	ns->bytes_written += a->v[DMN_A_BYTES_WRITTEN];
	ns->reads += a->v[DMN_A_READS];
	ns->writes += a->v[DMN_A_WRITES];
	ns->meta_ops += a->v[DMN_A_META];
	for (unsigned b = 0; b < STORE_HIST && b < LOG_HIST_BUCKETS; b++) {
		ns->read_hist[b] += a->rh[b];
		ns->write_hist[b] += a->wh[b];
	}
}

/*
 * A mount monitor's requests, summed over its records (each cumulative, so the sum is too): once
 * dist_every reads (or writes) were served since its last record, a record of their service-time
 * distribution (the time the monitor took to serve them; the wait before the kernel handed them
 * over is not known there: its histogram stays empty).
 */
static void mount_dists(struct dmn *d, struct dmn_proc *p, const struct log_file *lf)
{
	struct dmn_mdist now = {.has = 1};
	for (uint32_t i = 0; i < lf->nrecords; i++) {
		const struct log_record *r = &lf->records[i];
		if (r->layer != LOG_LAYER_MOUNT)
			continue;
		now.n[0] += r->counters[LOG_C_READS];
		now.n[1] += r->counters[LOG_C_WRITES];
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
			now.hist[0][b] += r->read_lat_hist[b];
			now.hist[1][b] += r->write_lat_hist[b];
		}
	}
	if (!p->mbase.has && p->cur.n) {
		/* taken before this daemon started (a restart): what came before is not known here */
		p->mnext = now;
		return;
	}
	p->mbase.has = 1; /* a new monitor: from its start */
	p->mnext = p->mbase;
	const char *mnt = lf->hdr.argc ? log_file_arg(lf, lf->hdr.argc - 1) : NULL;
	for (int k = 0; k < 2; k++) {
		if (now.n[k] < p->mbase.n[k] || now.n[k] - p->mbase.n[k] < d->cfg.dist_every)
			continue;
		struct dmn_samples *out = &d->samples;
		struct dmn_dist *nd = sys_text_grow(out->dists, &out->capdists, out->ndists, sizeof *nd, 16);
		if (!nd)
			return;
		out->dists = nd;
		struct dmn_dist *x = &out->dists[out->ndists++];
		memset(x, 0, sizeof *x);
		snprintf(x->server, sizeof x->server, "mount %s", mnt ? mnt : "?");
		x->op = k ? "write" : "read";
		x->requests = x->timed = now.n[k] - p->mbase.n[k]; /* every request the monitor served, timed */
		for (unsigned b = 0; b < LOG_HIST_BUCKETS && b < 32; b++)
			x->service[b] = now.hist[k][b] - p->mbase.hist[k][b];
		p->mnext.n[k] = now.n[k];
		memcpy(p->mnext.hist[k], now.hist[k], sizeof now.hist[k]);
	}
}

static int rpath_cmp(uint64_t id, int32_t pid, const struct dmn_rpath *x)
{
	return dmn_key_cmp(id, pid, x->id, x->pid);
}

static int rpath_before(const void *elem, const void *key)
{
	const struct dmn_rpath *k = key;
	return rpath_cmp(k->id, k->pid, elem) > 0;
}

static size_t rpath_pos(const struct dmn_proc *p, uint64_t id, int32_t pid)
{
	struct dmn_rpath k = {.id = id, .pid = pid};
	return sys_lower_bound(p->paths, p->npaths, sizeof *p->paths, &k, rpath_before);
}

static const char *rpath_find(const struct dmn_proc *p, uint64_t id, int32_t pid)
{
	size_t i = rpath_pos(p, id, pid);
	return i < p->npaths && !rpath_cmp(id, pid, &p->paths[i]) ? p->paths[i].path : NULL;
}

/* Notes a record's path (once): 0 or -ENOMEM. */
static int rpath_note(struct dmn_proc *p, uint64_t id, int32_t pid, const char *path)
{
	size_t i = rpath_pos(p, id, pid);
	if (i < p->npaths && !rpath_cmp(id, pid, &p->paths[i]))
		return 0;
	size_t len = strlen(path) + 1;
	struct dmn_fpath *f = malloc(sizeof *f + len);
	if (!f || grow(&p->paths, &p->cappaths, p->npaths, sizeof *p->paths) < 0) {
		free(f);
		return -ENOMEM;
	}
	f->key = 0;
	memcpy(f->s, path, len);
	memmove(&p->paths[i + 1], &p->paths[i], (p->npaths - i) * sizeof *p->paths);
	p->paths[i] = (struct dmn_rpath){id, pid, f->s};
	p->npaths++;
	return 0;
}

/* The rows of one record's statistics: its differences against the stored cursor. */
static int stat_rows(struct dmn_rowbuf *rb, struct dmn_proc *p, const char *path, const struct dmn_rec *cur,
		     const struct dmn_rec *prev)
{
	int r;
	for (unsigned c = 0; c < STORE_NCATS; c++) {
		int64_t db = (int64_t)(cur->v[DMN_V(c, DMN_V_BYTES)] - (prev ? prev->v[DMN_V(c, DMN_V_BYTES)] : 0));
		int64_t dc = (int64_t)(cur->v[DMN_V(c, DMN_V_CALLS)] - (prev ? prev->v[DMN_V(c, DMN_V_CALLS)] : 0));
		int64_t dt = (int64_t)(cur->v[DMN_V(c, DMN_V_TIME)] - (prev ? prev->v[DMN_V(c, DMN_V_TIME)] : 0));
		if ((db || dc || dt) && (r = rows_add(rb, p, path, cur->layer, c, db, dc, dt)) < 0)
			return r;
	}
	return 0;
}

/* (a record's histograms move only with its call counts: the values say whether it moved) */
static int rec_same(const struct dmn_rec *a, const struct dmn_rec *b)
{
	return a && b && !memcmp(a->v, b->v, sizeof a->v);
}

/*
 * A reading's per-layer sums (sums[l].layer != 0: layer l was read) against the last reading's:
 * what they grew by, less what a restart found counted already, joins the node-seconds and what
 * the process's node-seconds counted beyond its stored cursor. Both kinds of reading (the
 * per-second sum of a mapped file, a full reading) come here, so they agree to the call.
 */
static int node_take(struct dmn *d, struct dmn_proc *p, const struct dmn_ahead sums[LOG_LAYER_MAX + 1])
{
	int r;
	for (unsigned l = 1; l <= LOG_LAYER_MAX; l++) {
		if (!sums[l].layer)
			continue;
		struct dmn_ahead grow;
		if ((r = dmn_ahead_take(&p->sums, &p->owed, &p->counted, &sums[l], &grow, &p->undo)) < 0)
			return r;
		if (!r)
			continue; /* nothing moved: no node-second of this layer */
		p->piece_ok = 0;
		node_add(d->rows, d->host, &grow);
	}
	return 0;
}

/*
 * A full reading of a process's log (the per-second sums of a mapped file are take_mapped's).
 * Its per-layer sums' growth since the last reading becomes node-seconds; its records become the
 * node's readings (p->node, staged in p->next); with stats (every stats_interval, and at the
 * process's end) their differences against the stored cursor (p->cur) become the interval
 * statistics too (docs/STORE.md, "Two cadences").
 */
static int take_log(struct dmn *d, struct dmn_proc *p, const struct log_file *lf, int stats)
{
	if (ana_is_mount_log(lf))
		mount_dists(d, p, lf);
	struct dmn_rowbuf *rb = d->rows;
	int r;
	if (!p->has_next_rec) {
		if ((r = dmn_cursor_copy(&p->next, &p->node)) < 0)
			return r;
		p->has_next_rec = 1;
	}
	if (stats)
		p->stats = 1;
	/* this reading's node-second sums per layer (sums[l].layer != 0: the layer was read), and
	 * its histograms summed per layer for the cursor (the same figures, its stored form) */
	struct dmn_ahead sums[LOG_LAYER_MAX + 1];
	struct dmn_hist hist[LOG_LAYER_MAX + 1], stray[LOG_LAYER_MAX + 1];
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		hist[l].layer = sums[l].layer = stray[l].layer = 0;
	for (uint32_t i = 0; i < lf->nrecords; i++) {
		const struct log_record *lr = &lf->records[i];
		if (lr->layer == LOG_LAYER_NONE || lr->layer > LOG_LAYER_MAX)
			continue;
		/* stored once, as the report counts them (a device's requests on the device) */
		if (!ana_record_in_layer_totals(lr))
			continue;
		struct dmn_rec cur;
		dmn_rec_from_log(&cur, lr);
		if (!hist[lr->layer].layer) {
			memset(&hist[lr->layer], 0, sizeof hist[lr->layer]);
			hist[lr->layer].layer = lr->layer;
		}
		if (!sums[lr->layer].layer) {
			memset(sums[lr->layer].v, 0, sizeof sums[lr->layer].v);
			sums[lr->layer].layer = lr->layer;
		}
		/* (one pass over its buckets: the sums' histograms are taken from hist's below) */
		dmn_hist_add_log(&hist[lr->layer], &sums[lr->layer], &stray[lr->layer], lr);
		const struct dmn_rec *prev = dmn_cursor_find(&p->next, cur.id, cur.pid);
		if ((!prev || !p->paths_all) && (r = rpath_note(p, cur.id, cur.pid, ana_record_path(lf, lr))) < 0)
			return r;
		if (!rec_same(prev, &cur) && (r = dmn_cursor_set(&p->next, &cur)) < 0)
			return r;
		if (!stats)
			continue;
		prev = dmn_cursor_find(&p->cur, cur.id, cur.pid);
		if (rec_same(prev, &cur))
			continue;
		p->changed = 1;
		/* (noted above: the process's copy, not the reading's, which goes before the rows) */
		const char *path = rpath_find(p, cur.id, cur.pid);
		if (!path)
			return -ENOMEM;
		if ((r = stat_rows(rb, p, path, &cur, prev)) < 0)
			return r;
	}
	p->paths_all = 1;
	for (unsigned l = 1; l <= LOG_LAYER_MAX; l++)
		if (sums[l].layer)
			dmn_ahead_hist_of(&sums[l], &hist[l], &stray[l]);
	for (unsigned l = 1; l <= LOG_LAYER_MAX; l++) {
		const struct dmn_hist *was = hist[l].layer ? dmn_cursor_hist(&p->next, l) : NULL;
		if (!hist[l].layer ||
		    (was && !memcmp(was->rh, hist[l].rh, sizeof was->rh) && !memcmp(was->wh, hist[l].wh, sizeof was->wh)))
			continue;
		if ((r = dmn_cursor_set_hist(&p->next, &hist[l])) < 0)
			return r;
	}
	return node_take(d, p, sums);
}

/* ---------- runs of traced processes (trace.h) ---------- */

struct run_ctx {
	struct dmn *d;
	struct dmn_proc *p;
};

/* A log's CLOCK_MONOTONIC ns as wall clock ns, through its header's anchor. */
static int64_t log_wall_ns(const struct log_header *h, uint64_t mono_ns)
{
	return (int64_t)h->start_wall_ns + ((int64_t)mono_ns - (int64_t)h->start_ns);
}

static int run_row(void *arg, const struct log_file *lf, const struct log_trace_entry *e, uint64_t idx)
{
	struct run_ctx *x = arg;
	struct dmn_rowbuf *rb = x->d->rows;
	const struct log_record *lr = &lf->records[e->record];
	if (grow(&rb->runs, &rb->capruns, rb->nruns, sizeof *rb->runs) < 0)
		return -ENOMEM;
	char *path = strdup(ana_record_path(lf, lr));
	if (!path)
		return -ENOMEM;
	rb->runs[rb->nruns++] = (struct runrow){
		x->p, path,
		{.tid = e->tid, .idx = idx, .layer = lr->layer, .op = e->op,
		 .offset = e->offset == UINT64_MAX ? -1 : (int64_t)e->offset, .size = e->size, .count = e->count,
		 .start_ns = log_wall_ns(&lf->hdr, e->start_ns), .end_ns = log_wall_ns(&lf->hdr, e->end_ns),
		 .busy_ns = e->busy_ns, .min_ns = e->min_ns, .result = e->result},
	};
	x->p->changed = 1;
	return 0;
}

/* The runs of a live file not taken yet, within this interval's budget (final: the process is
 * gone, all of them). */
static void take_live_runs(struct dmn *d, struct dmn_proc *p, const struct dmn_trace_area *ta,
			   const struct log_file *lf, int final)
{
	char warn[512] = "";
	struct run_ctx x = {d, p};
	if (!d->cfg.runs_max || (!final && !d->runs_budget))
		return;
	int64_t n = dmn_trace_take_live(&p->trace, ta, lf, &p->next, final, final ? 0 : d->runs_budget, run_row, &x,
					warn, sizeof warn);
	if (n < 0)
		dmn_say("out of memory taking the runs of %s", p->live_path);
	else if (!final)
		d->runs_budget -= (uint64_t)n < d->runs_budget ? (uint64_t)n : d->runs_budget;
	if (warn[0])
		dmn_say_once(d, hash_str(0x7ace, p->live_path), "%s: %s", p->live_path, warn);
}

/* The runs of a final log that its live file did not give. */
static void take_final_runs(struct dmn *d, struct dmn_proc *p, const struct log_file *lf)
{
	struct run_ctx x = {d, p};
	if (d->cfg.runs_max && lf->ntrace && dmn_trace_take_final(lf, &p->next, run_row, &x) < 0)
		dmn_say("out of memory taking the runs of %s", p->final_path);
}

/* ---------- discovery ---------- */

static struct dmn_proc *proc_new(struct dmn *d, const struct log_file *lf, uid_t uid, gid_t gid, const char *live_path)
{
	const struct log_header *h = &lf->hdr;
	const char *outdir = log_file_string(lf, h->outdir);
	const char *base = strrchr(live_path, '/') ? strrchr(live_path, '/') + 1 : live_path;
	const char *jobid = log_file_string(lf, h->job);
	char final[4096];
	struct dmn_proc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	snprintf(final, sizeof final, "%s/%s", outdir, base);
	p->pid = h->pid;
	p->rank = h->rank;
	p->start_ns = h->start_ns;
	p->start_ticks = h->proc_start_ticks;
	p->start_wall_ns = h->start_wall_ns;
	p->uid = uid;
	p->gid = gid;
	p->exe = strdup(log_file_string(lf, h->exe));
	p->live_path = strdup(live_path);
	p->final_path = strdup(outdir[0] == '/' ? final : "");
	p->start_ms = (int64_t)(h->start_wall_ns / 1000000);
	p->state = p->next_state = STORE_PROC_LIVE;
	p->job = job_get(d, jobid[0] ? jobid : "(none)", uid, gid, outdir, p->exe ? p->exe : "", p->start_ms);
	if (!p->exe || !p->live_path || !p->final_path || !p->job || proc_insert(d, p) < 0) {
		proc_free(p);
		return NULL;
	}
	if (p->job->ended) { /* a new process of a job that had ended here: open again */
		p->job->ended = 0;
		p->job->end_ms = 0;
	}
	return p;
}

struct scan_ctx {
	struct dmn *d;
	int dfd;
	uid_t uid;
	gid_t gid;
	char dir[4096];
};

/*
 * Liveness. Each live process's pidfd (pidfd_open) sits in one epoll set, which the interval
 * reads once (liveness_poll): a running process costs nothing, one that ended (or is a zombie)
 * is said by its pidfd. The pidfd is opened when the process is first asked about and checked
 * then against its /proc start time (the pid may be another process's by now; once open, the
 * pidfd stays this process's whatever the pid becomes). Without one (an old kernel, descriptors
 * short: max_pidfds leaves room for everything else), its /proc start time every 10th asking
 * and kill(0) between, as before.
 */
static void proc_unwatch(struct dmn *d, struct dmn_proc *p)
{
	if (p->watch != 1)
		return;
	/* out of the set first: a report child forked meanwhile holds a copy of the descriptor,
	 * which would keep the registration (and its pointer to p) alive after the close */
	epoll_ctl(d->pid_ep, EPOLL_CTL_DEL, p->pidfd, NULL);
	close(p->pidfd);
	p->pidfd = -1;
	p->watch = 2;
	d->npidfds--;
}

static void proc_watch(struct dmn *d, struct dmn_proc *p)
{
	p->watch = -1;
	if (d->pid_ep < 0 || p->pid <= 0 || d->npidfds >= d->max_pidfds)
		return;
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)p->pid, 0);
	if (fd < 0 && errno == ESRCH) {
		p->watch = 2;
		p->exited = 1;
		return;
	}
	if (fd < 0)
		return;
	if (!log_live_alive(p->pid, p->start_ticks)) {
		close(fd);
		p->watch = 2;
		p->exited = 1;
		return;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	if (epoll_ctl(d->pid_ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return;
	}
	p->pidfd = fd;
	p->watch = 1;
	d->npidfds++;
}

/* The processes whose pidfd says they ended since the last interval. */
static void liveness_poll(struct dmn *d)
{
	struct epoll_event ev[256];
	int n;
	if (d->pid_ep < 0)
		return;
	do {
		n = epoll_wait(d->pid_ep, ev, 256, 0);
		for (int i = 0; i < n; i++) {
			struct dmn_proc *p = ev[i].data.ptr;
			p->exited = 1;
			proc_unwatch(d, p);
		}
	} while (n == 256);
}

/* Whether the process still runs (pid and start_ticks: what its log's header says). An end once
 * seen is kept (p->exited): a reading made after it is the process's last. */
static int proc_alive(struct dmn *d, struct dmn_proc *p, int32_t pid, uint64_t start_ticks)
{
	if (!p->watch)
		proc_watch(d, p);
	if (p->exited)
		return 0;
	if (p->watch == 1 && pid == p->pid && start_ticks == p->start_ticks)
		return 1;
	int alive = p->alive_checks++ % 10 == 0 ? log_live_alive(pid, start_ticks)
						  : pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
	if (!alive)
		p->exited = 1;
	return alive;
}

/* The pid and start (µs) a live log's name carries (a process's and a mount monitor's are named
 * ...-PID-START_US.iost): 0, or -1 for another name. */
static int live_name_key(const char *name, int32_t *pid, uint64_t *us)
{
	size_t l = strlen(name);
	const char *end = name + l - 5, *us_at = end;
	while (us_at > name && us_at[-1] >= '0' && us_at[-1] <= '9')
		us_at--;
	const char *pid_at = us_at - 1;
	if (us_at == end || pid_at <= name || *pid_at != '-')
		return -1;
	while (pid_at > name && pid_at[-1] >= '0' && pid_at[-1] <= '9')
		pid_at--;
	if (pid_at == us_at - 1 || pid_at == name || pid_at[-1] != '-' || us_at - pid_at > 11)
		return -1;
	*pid = (int32_t)strtol(pid_at, NULL, 10);
	*us = strtoull(us_at, NULL, 10);
	return 0;
}

/* The process whose live file is dir/name, by the pid and start its name carries: NULL when none. */
static struct dmn_proc *proc_of_live(const struct dmn *d, const char *dir, const char *name)
{
	int32_t pid;
	uint64_t us;
	size_t dl = strlen(dir);
	if (live_name_key(name, &pid, &us) < 0)
		return NULL;
	for (size_t i = proc_pos(d, pid, 0); i < d->nprocs && d->procs[i]->pid == pid; i++) {
		const char *lp = d->procs[i]->live_path;
		if (d->procs[i]->start_ns / 1000 == us && !strncmp(lp, dir, dl) && lp[dl] == '/' && !strcmp(lp + dl + 1, name))
			return d->procs[i];
	}
	return NULL;
}

/*
 * The record pages of the mapped files (daemon.h, resident): after its summing a file keeps them
 * mapped while all the files kept hold no more than resident_mb; the others' are dropped (they
 * are the application's pages: the file keeps them) and faulted in again by their next summing
 * (docs/DAEMON.md, "Reading live files"). Every file is summed every interval, moving or idle,
 * so which files are kept does not matter, only how many: the first ones that fit stay (no
 * churn). keep 0: drop them whatever the budget (its end is read in full).
 */
static void proc_keep_pages(struct dmn *d, struct dmn_proc *p, int keep)
{
	size_t pages = dmn_live_pages(&p->map);
	long pg = sysconf(_SC_PAGESIZE);
	size_t max = ((size_t)d->cfg.resident_mb << 20) / (size_t)(pg > 0 ? pg : 4096);
	keep = keep && !d->keep_off;
	if (p->resident && keep && d->resident_pages <= max)
		return; /* (a budget made smaller by SIGHUP: the files kept leave it as they are summed) */
	if (!p->resident && keep && d->resident_pages + pages <= max) {
		p->resident = pages;
		d->resident_pages += pages;
		return;
	}
	d->resident_pages -= p->resident;
	p->resident = 0;
	dmn_live_drop(&p->map);
}

/*
 * The daemon's largest moments are the intervals that read many files in full: the statistics
 * (every stats_interval) and the end of processes (a job's end: all of its processes at once,
 * their last statistics, final logs and the job's report). The pages kept leave for those
 * intervals, so that its RSS at such a moment holds none of them (bench/daemon's peak): at the
 * first end seen all are dropped and none is kept until the next interval; after an end, none
 * for DMN_KEEP_HOLD intervals more (a job's processes end over several intervals: kept again
 * between its ends, the pages added their budget to the end's peak, 68 MiB in bench/daemon
 * against 57 without). At an interval that takes the statistics none is kept either, but the
 * files kept are read from their pages first (dmn_live_read: 2.7x cheaper than by the file),
 * each file's leaving after its reading (keep_off 1), the rest after the scan (keep_none).
 */
#define DMN_KEEP_HOLD 3
static void keep_none(struct dmn *d)
{
	if (d->keep_off == 2)
		return;
	d->keep_off = 2;
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i]->resident)
			proc_keep_pages(d, d->procs[i], 0);
	dmn_live_drop_flush();
}

/* Its mapping goes (resident pages with it). */
static void proc_unmap(struct dmn *d, struct dmn_proc *p)
{
	d->resident_pages -= p->resident;
	p->resident = 0;
	dmn_live_unmap(&p->map);
}

/* A reading of its mapping failed (r < 0): unmapped; cut under the mapping, for good. */
static void map_failed(struct dmn *d, struct dmn_proc *p, int r)
{
	if (r == -EFAULT) {
		dmn_say_once(d, hash_str(0xb05, p->live_path),
			     "%s: cut short under the daemon's mapping (SIGBUS caught): read by pread from now on",
			     p->live_path);
		p->pread_only = 1;
	}
	proc_unmap(d, p);
}

/* The slots' figures of a summing (the user layers', as struct dmn_still keeps them). */
static void still_of(const struct dmn_live_sums *sums, uint64_t v[2][DMN_NA])
{
	for (int l = 0; l < 2; l++)
		for (unsigned k = 0; k < DMN_NA; k++)
			v[l][k] = sums->layer[l ? LOG_LAYER_STDIO : LOG_LAYER_POSIX].v[k];
}

/* 1 when a summing of a file mapped with its slots (both user layers read, the signature made)
 * saw what its last statistics reading's summing saw. */
static int still_same(const struct dmn_proc *p, const struct dmn_live_sums *sums)
{
	uint64_t v[2][DMN_NA];
	if (!p->still.has || !sums->layer[LOG_LAYER_POSIX].layer || !sums->layer[LOG_LAYER_STDIO].layer ||
	    sums->sig != p->still.sig)
		return 0;
	still_of(sums, v);
	return !memcmp(v, p->still.v, sizeof v);
}

/*
 * The per-second path: a live process's mapped file summed in place, its sums' growth its
 * node-seconds. 0 when taken; 1 when the file must be read in full (the process ended or died:
 * its last counters are taken with its statistics; another log was written over it, or it was
 * cut under the mapping: unmapped, the latter for good, said once). At an interval that takes the
 * statistics it is called only for a file mapped with its slots and noted still (struct
 * dmn_still), and is 1 as well when its slots or header moved since.
 */
static int take_mapped(struct dmn *d, struct dmn_proc *p)
{
	struct dmn_live_sums sums;
	/* at the statistics: only a file mapped with its slots whose slots and header did not move
	 * since its last statistics reading (its stored cursor holds all it counted then, and a
	 * call since moved a slot or the header, unless still in flight: taken by the next reading) */
	int still = d->stats_tick;
	sums.want_sig = still;
	int r = dmn_live_sum(&p->map, &sums);
	if (r > 0)
		return 1; /* a record the last full reading did not take: this one takes it */
	if (r < 0) {
		map_failed(d, p, r);
		return 1;
	}
	if (sums.end_ns || !proc_alive(d, p, p->pid, p->start_ticks)) {
		keep_none(d); /* its end is read in full (and more may come: a job's end) */
		return 1;
	}
	if (still && !still_same(p, &sums))
		return 1;
	p->seen = 1;
	if (sums.rank >= 0)
		p->rank = sums.rank;
	if (node_take(d, p, sums.layer) < 0)
		dmn_say("out of memory taking %s", p->live_path);
	proc_keep_pages(d, p, 1);
	return 0;
}

/* The live file sc->dir/name (ino: its inode as listed, 0 when not listed: what the name holds
 * now). 1 when its directory is to be listed again at the next interval (the file could not be
 * taken: its header not made yet, cut short while read, bad), else 0. */
static int take_live_file(struct scan_ctx *sc, const char *name, ino_t ino)
{
	struct dmn *d = sc->d;
	struct log_file lf;
	struct stat st;
	struct dmn_trace_area ta;
	struct dmn_live_map map = {.hdr = NULL};
	char err[1024], path[4096 + 256];
	/* the per-second path needs a second cadence (stats_interval > interval), and a name that
	 * finds the process again next time */
	int32_t npid;
	uint64_t nus;
	int want_map = d->cfg.stats_interval_ms > d->cfg.interval_ms && live_name_key(name, &npid, &nus) == 0;
	struct dmn_proc *known = want_map ? proc_of_live(d, sc->dir, name) : NULL;
	if (known && known->map.hdr && ino && known->map.ino != ino)
		proc_unmap(d, known); /* another file under its name: read in full */
	snprintf(path, sizeof path, "%s/%s", sc->dir, name);
	int r = 1, from_map = 0;
	if (known && known->map.hdr) {
		if ((!d->stats_tick || (known->map.tot && known->still.has)) && known->next_state == STORE_PROC_LIVE &&
		    take_mapped(d, known) == 0)
			return 0;
		want_map = 0;
		/* the statistics of a live process whose pages are kept, read from them: no open, no
		 * pread, no change of filesystem identity (source.h, dmn_live_read). Not a file whose
		 * pages were dropped: faulting them in and dropping them again costs more than the
		 * open and the preads (docs/BENCHMARKS.md, "Statistics from the pages kept") */
		if (d->stats_tick && known->next_state == STORE_PROC_LIVE && known->resident &&
		    (r = dmn_live_read(&known->map, name, d->cfg.runs_max != 0, &lf, err, sizeof err)) < 0) {
			map_failed(d, known, r);
			r = 1;
		}
		from_map = r == 0;
		if (from_map)
			ta.fd = -1;
	}
	if (known && known->pread_only)
		want_map = 0;
	/* a file mapped with its slots: read by the descriptor it keeps (no open, no change of
	 * filesystem identity), unless it was removed or its end is set (read by its name then).
	 * Its summing just before the records are read is what the next statistics compare with */
	struct dmn_live_sums probe;
	probe.want_sig = 1;
	probe.layer[LOG_LAYER_POSIX].layer = 0;
	int kept = 0;
	if (r > 0 && known && known->map.has_fd && known->next_state == STORE_PROC_LIVE) {
		r = dmn_read_live_kept(&known->map, name, &d->lim, &lf, d->cfg.runs_max ? &ta : NULL, &probe, err,
				       sizeof err);
		kept = r == 0;
		if (r < 0) {
			map_failed(d, known, r);
			r = 1;
		}
	}
	if (r > 0) {
		dmn_fs_as(sc->uid, sc->gid);
		r = dmn_read_live(sc->dfd, name, sc->uid, &d->lim, &lf, &st, d->cfg.runs_max ? &ta : NULL,
				  want_map ? &map : NULL, err, sizeof err);
		dmn_fs_as_self();
	}
	if (!want_map || r < 0)
		map.hdr = NULL;
	if (r < 0) {
		/* a process just ending removes its live file, one just starting has not set its
		 * header yet: not worth a word */
		if (r != -ENOENT && r != -ESTALE && r != -EAGAIN)
			dmn_say_once(d, hash_str(0xcbf29ce484222325ull, path), "%s/%s", sc->dir, err);
		return r != -ENOENT;
	}
	int again = 0;
	const struct log_header *h = &lf.hdr;
	struct dmn_proc *p = proc_find(d, h->pid, h->start_ns);
	if (!p) {
		int64_t key;
		enum store_proc_state state;
		if (set_has(&d->done, done_key(h->pid, h->start_ns)))
			goto out;
		/* taken to its end before this daemon started (a killed process's live file that nobody
		 * recovered): never again */
		if (store_proc_find(d->st, d->host, h->pid, h->start_ns, &key, &state) == 0 && state != STORE_PROC_LIVE) {
			set_add(&d->done, done_key(h->pid, h->start_ns));
			goto out;
		}
		if (!(p = proc_new(d, &lf, sc->uid, sc->gid, path))) {
			dmn_say("out of memory taking %s", path);
			again = 1;
			goto out;
		}
	}
	p->seen = 1;
	/* ended: either it finished (its end is set, the final log is on its way) or it died. An end
	 * first seen now (its first look at a pidfd, or kill(0)) may have come after this reading,
	 * with calls between: the reading is taken as a live one, and the next, made with the end
	 * known, is the last (its final log, or its live file when it was killed). An end set in a
	 * process that lives is no end yet: an image ending for an exec that may fail and go on */
	int ended_before = p->exited;
	int alive = proc_alive(d, p, h->pid, h->proc_start_ticks);
	if (!alive && ended_before) {
		keep_none(d);
		d->keep_hold = DMN_KEEP_HOLD;
		p->next_state = h->end_ns ? STORE_PROC_ENDED : STORE_PROC_KILLED;
		p->end_ms = log_wall_ms(h, h->end_ns ? h->end_ns : log_file_last_ns(&lf));
	}
	/* its statistics every stats_interval, and at its end (its last counters are these) */
	int stats = d->stats_tick || p->next_state != STORE_PROC_LIVE;
	if (take_log(d, p, &lf, stats) < 0) {
		dmn_say("out of memory taking %s", path);
		again = 1;
		goto out;
	}
	if (h->rank >= 0)
		p->rank = h->rank;
	/* a process that ended (finished or killed) makes no more calls: its open runs are final
	 * and its last counters are these, so its runs are all taken now; the others' with the
	 * statistics (their cursor holds the runs taken) */
	if (d->cfg.runs_max && ta.fd >= 0 && stats)
		take_live_runs(d, p, &ta, &lf, p->next_state != STORE_PROC_LIVE);
	/* what the next statistics compare with: a live process's file mapped with its slots, read
	 * by its kept descriptor right after a summing of both user layers, with no trace to take
	 * (its runs are taken with the statistics); any other full reading forgets it */
	p->still.has = stats && kept && p == known && p->next_state == STORE_PROC_LIVE &&
		       (!d->cfg.runs_max || ta.fd < 0) && p->map.tot && probe.layer[LOG_LAYER_POSIX].layer &&
		       probe.layer[LOG_LAYER_STDIO].layer;
	if (p->still.has) {
		p->still.sig = probe.sig;
		still_of(&probe, p->still.v);
	}
	/* kept mapped for the next intervals: a live process's own log (found by its name next
	 * time), not a mount monitor's (its distributions need every reading in full), nor one that
	 * cannot be mapped, nor one whose records in use lie far apart (a live file hands them out
	 * in order; summing a sparse one in place would make its holes into memory) */
	if (ana_is_mount_log(&lf) || (want_map && !map.hdr) || (uint64_t)lf.nrecords * 2 + 64 < h->nrecords)
		p->pread_only = 1;
	if (map.hdr && !p->map.hdr && !p->pread_only && p->next_state == STORE_PROC_LIVE && alive && !h->end_ns &&
	    map.pid == p->pid &&
	    map.start_ns == p->start_ns && (!ino || map.ino == ino) && proc_of_live(d, sc->dir, name) == p) {
		p->map = map;
		map.hdr = NULL;
	}
	/* (more records in use than the mapping holds: mapped again by the next full reading) */
	if (p->pread_only || (p->map.hdr && dmn_live_stale(&p->map, h, &lf)))
		proc_unmap(d, p);
	/* the sums go as far as this reading took the records, and the next one sums from the start
	 * (its memo made again: source.h, struct dmn_live_memo) */
	if (p->map.hdr) {
		p->map.rec_seen = h->nrecords < p->map.rec_cap ? h->nrecords : p->map.rec_cap;
		dmn_live_forget(&p->map);
		if (from_map)
			proc_keep_pages(d, p, 1); /* (read from them: kept as the summing keeps them) */
		else if (!p->map.tot)
			dmn_live_keep_strings(&p->map, &lf); /* (a string added: read by the file) */
	}
out:
	if (map.hdr)
		dmn_live_unmap(&map);
	if (d->cfg.runs_max && ta.fd >= 0)
		close(ta.fd);
	log_file_free(&lf);
	return again;
}


/* ---------- listing only what changed (daemon.h, struct dmn_listing) ---------- */

/* The kernel stamps a directory's times with a clock that lags by up to a tick (4 ms at 250
 * Hz, 10 ms at 100): a listing whose directory changed within this long before it began is
 * listed again next time, since a change right after it could get the same time. */
#define LISTING_MARGIN_NS 50000000LL

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* The directory path of uid's as last listed (made when new; NULL when out of memory). */
static struct dmn_listing *listing_get(struct dmn *d, const char *path, uid_t uid)
{
	for (size_t i = 0; i < d->nlists; i++)
		if (d->lists[i].uid == uid && !strcmp(d->lists[i].path, path)) {
			d->lists[i].used = d->intervals;
			return &d->lists[i];
		}
	char *dup = strdup(path);
	if (!dup || grow(&d->lists, &d->caplists, d->nlists, sizeof *d->lists) < 0) {
		free(dup);
		return NULL;
	}
	struct dmn_listing *l = &d->lists[d->nlists++];
	memset(l, 0, sizeof *l);
	l->path = dup;
	l->uid = uid;
	l->used = d->intervals;
	return l;
}

/* Whether the directory (st: its status now) holds what its last listing found. Its change time
 * says so at every interval, the statistics' included: a name made, removed or renamed in it moves
 * it, and nobody can set it back (a listing every stats_interval found nothing more, and read the
 * live files of processes taken to their end again: docs/BENCHMARKS.md, "dmn18"). */
static int listing_fresh(const struct dmn_listing *l, const struct stat *st)
{
	return l && l->stable && l->dev == st->st_dev && l->ino == st->st_ino &&
	       ts_ns(&l->mtime) == ts_ns(&st->st_mtim) && ts_ns(&l->ctime) == ts_ns(&st->st_ctim);
}

/* A listing of the directory whose status was st, begun at before (CLOCK_REALTIME, taken ahead
 * of st), done; again: a file in it is to be tried again. Its change time rather than its
 * modification time decides: a user can set the latter back, nobody the former. */
static void listing_note(struct dmn_listing *l, const struct stat *st, const struct timespec *before, int again)
{
	if (!l)
		return;
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->mtime = st->st_mtim;
	l->ctime = st->st_ctim;
	l->stable = !again && ts_ns(&st->st_ctim) < ts_ns(before) - LISTING_MARGIN_NS &&
		    ts_ns(&st->st_mtim) < ts_ns(before) - LISTING_MARGIN_NS;
}

/* Directories nobody asked about for a while are forgotten (a job's, once it ended). */
static void listings_prune(struct dmn *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->nlists; i++) {
		if (d->lists[i].used + 100 < d->intervals) {
			free(d->lists[i].path);
			free(d->lists[i].uids);
			continue;
		}
		d->lists[k++] = d->lists[i];
	}
	d->nlists = k;
}

/* The interned copy of the directory dir (len bytes): one pointer for one directory; NULL when
 * out of memory. The live directories a daemon meets are few (a root's users). */
static const char *dir_intern(struct dmn *d, const char *dir, size_t len)
{
	for (size_t i = 0; i < d->nidirs; i++)
		if (!strncmp(d->idirs[i], dir, len) && !d->idirs[i][len])
			return d->idirs[i];
	char *c = strndup(dir, len);
	if (!c || grow(&d->idirs, &d->capidirs, d->nidirs, sizeof *d->idirs) < 0) {
		free(c);
		return NULL;
	}
	d->idirs[d->nidirs++] = c;
	return c;
}

/* p's live directory (its live_path up to the last '/'), interned: found once, and again when its
 * live_path is another string (a process followed by another live file) */
static const char *live_dir_of(struct dmn *d, struct dmn_proc *p)
{
	if (p->dir_for != p->live_path || !p->live_dir) {
		const char *slash = p->live_path ? strrchr(p->live_path, '/') : NULL;
		p->live_dir = slash ? dir_intern(d, p->live_path, (size_t)(slash - p->live_path)) : NULL;
		p->dir_for = p->live_path;
	}
	return p->live_dir;
}

/* The lines of p's fields a summing of its mapped file reads (take_mapped: the first ones, to its
 * mapping's end; daemon.h puts them there) asked of the cache ahead: a hint, never a fault. */
static void proc_prefetch(const struct dmn_proc *p)
{
	const char *a = (const char *)p;
	for (size_t o = 0; o < offsetof(struct dmn_proc, map) + sizeof p->map + 63; o += 64)
		__builtin_prefetch(a + o);
}

/* A live directory whose listing would find what the last one found: its processes' live files
 * taken by name. 1 when one of them is to be tried again (as take_live_file). A process is the
 * directory's when its interned live directory is the directory's: a pointer compared, not its
 * path read (1,000 strings, a cache miss each, every interval). */
static int take_known(struct scan_ctx *sc)
{
	struct dmn *d = sc->d;
	size_t dl = strlen(sc->dir), n = 0;
	const char *dir = dir_intern(d, sc->dir, dl);
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dmn_proc *p = d->procs[i];
		if (p->seen || p->next_state != STORE_PROC_LIVE || p->exec_wait)
			continue;
		const char *pd = live_dir_of(d, p), *lp = p->live_path;
		if (pd && dir ? pd != dir : strncmp(lp, sc->dir, dl) || lp[dl] != '/' || strchr(lp + dl + 1, '/'))
			continue;
		if (grow(&d->known, &d->capknown, n, sizeof *d->known) < 0)
			return 1;
		d->known[n++] = p;
	}
	/* (take_live_file may add processes to d->procs: the ones to take are set apart first) */
	int again = 0;
	for (size_t i = 0; i < n; i++) {
		struct dmn_proc *p = d->known[i];
		/* Each summing's first loads missed: the process's fields (a page walk and a line),
		 * then its worker's header and slot, one after the other; asked ahead, they come while
		 * the files before are summed: the fields two processes ahead, the mapping one ahead
		 * (its pointers among the fields asked for the last time) */
		if (i + 2 < n)
			proc_prefetch(d->known[i + 2]);
		if (i + 1 < n && !d->stats_tick)
			dmn_live_prefetch(&d->known[i + 1]->map);
		if (p->map.hdr && !d->stats_tick && take_mapped(d, p) == 0)
			continue; /* (what take_live_file would do first, without finding p again) */
		again |= take_live_file(sc, p->live_path + dl + 1, 0);
	}
	return again;
}

/* A listing of the directory fd stands for (fd stays the caller's), or NULL. */
static DIR *list_dir(int fd)
{
	int lfd = dup(fd);
	DIR *dir = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!dir && lfd >= 0)
		close(lfd);
	return dir;
}

static int is_log_name(const char *n)
{
	size_t l = strlen(n);
	return n[0] != '.' && l > 5 && !strcmp(n + l - 5, ".iost");
}

/* A dir-HASH.iostdir link in uid's live directory dfd: its job directory, noted or renewed. */
static void note_dir_link(struct dmn *d, int dfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat st;
	char target[4096];
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode) || st.st_uid != uid)
		return;
	ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
	if (n <= 1 || target[0] != '/')
		return;
	target[n] = 0;
	int64_t ct = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	for (size_t i = 0; i < d->ndirs; i++) {
		struct dmn_dirref *r = &d->dirs[i];
		if (r->uid == uid && !strcmp(r->path, target)) {
			if (r->ctime_ns != ct) {
				r->ctime_ns = ct;
				r->active_ms = wall_ms();
			}
			return;
		}
	}
	if (grow(&d->dirs, &d->capdirs, d->ndirs, sizeof *d->dirs) < 0)
		return;
	char *p = strdup(target);
	if (!p)
		return;
	/* a link older than the daemon announced a directory whose processes it may have missed
	 * while down: scanned once now (what was taken before is in the store: never twice) */
	d->dirs[d->ndirs++] = (struct dmn_dirref){p, uid, gid, ct, wall_ms()};
}

static int is_dir_link_name(const char *n)
{
	size_t l = strlen(n);
	return l > 8 && !strncmp(n, "dir-", 4) && !strcmp(n + l - 8, ".iostdir");
}

static void scan_user_dir(struct dmn *d, int rootfd, const char *root, const char *name, uid_t uid)
{
	struct stat st;
	struct timespec before;
	char err[1024];
	struct scan_ctx sc = {.d = d, .uid = uid};
	snprintf(sc.dir, sizeof sc.dir, "%s/%s", root, name);
	clock_gettime(CLOCK_REALTIME, &before);
	int dfd = dmn_open_dir(rootfd, name, uid, &st, err, sizeof err);
	if (dfd < 0) {
		dmn_say_once(d, hash_str(0x100000001b3ull, sc.dir), "%s/%s", root, err);
		return;
	}
	sc.dfd = dfd;
	sc.gid = st.st_gid;
	struct dmn_listing *l = listing_get(d, sc.dir, uid);
	if (listing_fresh(l, &st)) {
		if (take_known(&sc))
			l->stable = 0;
		close(dfd);
		return;
	}
	DIR *dir = list_dir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	struct dirent *de;
	int again = 0;
	while ((de = readdir(dir))) {
		if (is_log_name(de->d_name))
			again |= take_live_file(&sc, de->d_name, de->d_ino);
		else if (is_dir_link_name(de->d_name))
			note_dir_link(d, dfd, de->d_name, uid, sc.gid);
	}
	closedir(dir);
	close(dfd);
	listing_note(l, &st, &before, again);
}

/* The name of uid's live directory under a live root (the capture library's, src/capture/core.c):
 * LIVE_DIR_PREFIX and the uid in decimal. */
#define LIVE_DIR_PREFIX "iostrata-"
static void live_dir_name(char *name, size_t len, uid_t uid)
{
	snprintf(name, len, LIVE_DIR_PREFIX "%u", (unsigned)uid);
}

static void scan_live(struct dmn *d)
{
	for (int k = 0; k < d->cfg.nlive_roots; k++) {
		const char *root = d->cfg.live_roots[k];
		int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			continue;
		if (!d->root) {
			char name[64];
			live_dir_name(name, sizeof name, getuid());
			struct stat st;
			if (fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				scan_user_dir(d, rootfd, root, name, getuid());
			close(rootfd);
			continue;
		}
		/* a root (/dev/shm holds other programs' files too) is listed again only when it
		 * changed: the iostrata-UID directories its last listing found are scanned by name */
		struct timespec before;
		struct stat st;
		clock_gettime(CLOCK_REALTIME, &before);
		struct dmn_listing *l = fstat(rootfd, &st) == 0 ? listing_get(d, root, (uid_t)-1) : NULL;
		/* (scan_user_dir adds listings, which may move l: the uids are taken out of it first) */
		uid_t *uids = NULL;
		size_t nuids = 0, capuids = 0;
		if (listing_fresh(l, &st)) {
			uids = l->uids, nuids = l->nuids, capuids = l->capuids;
			l->uids = NULL, l->nuids = l->capuids = 0;
			char name[64];
			for (size_t i = 0; i < nuids; i++) {
				live_dir_name(name, sizeof name, uids[i]);
				scan_user_dir(d, rootfd, root, name, uids[i]);
			}
		} else {
			DIR *dir = list_dir(rootfd);
			struct dirent *de;
			int again = !dir;
			while (dir && (de = readdir(dir))) {
				const size_t pl = sizeof LIVE_DIR_PREFIX - 1;
				const char *u = de->d_name + pl;
				char *end;
				if (strncmp(de->d_name, LIVE_DIR_PREFIX, pl) || !*u || u[strspn(u, "0123456789")])
					continue;
				unsigned long uid = strtoul(u, &end, 10);
				if (*end || uid >= UINT32_MAX)
					continue;
				if (grow(&uids, &capuids, nuids, sizeof *uids) == 0)
					uids[nuids++] = (uid_t)uid;
				else
					again = 1; /* (not remembered: listed again) */
				scan_user_dir(d, rootfd, root, de->d_name, (uid_t)uid);
			}
			if (dir)
				closedir(dir);
			if ((l = listing_get(d, root, (uid_t)-1)))
				listing_note(l, &st, &before, again);
		}
		close(rootfd);
		if ((l = listing_get(d, root, (uid_t)-1))) {
			free(l->uids);
			l->uids = uids, l->nuids = nuids, l->capuids = capuids;
		} else {
			free(uids);
		}
	}
}

/*
 * A process shorter than an interval may come and go between two scans of the live directories:
 * its final log is in its job's directory. Each interval the directories of the jobs open here
 * are listed (as their owner), and a final log of this host that no process stands for is taken
 * whole. Its name says whose it is (HOST-PID-START_US.iost), so only new ones are read.
 */
static int known_log(const struct dmn *d, int32_t pid, uint64_t start_us)
{
	for (size_t i = proc_pos(d, pid, 0); i < d->nprocs && d->procs[i]->pid == pid; i++)
		if (d->procs[i]->start_ns / 1000 == start_us)
			return 1;
	return set_has(&d->seen_final, done_key(pid, start_us));
}

/* A user's string for a line of the daemon's log: at most 160 bytes of it, anything but printable
 * ASCII as '?', "..." when cut. */
static const char *said_path(const char *s, char *buf, size_t len)
{
	size_t n = 0, max = len < 165 ? len - 4 : 160;
	for (; s[n] && n < max; n++)
		buf[n] = s[n] >= ' ' && s[n] < 0x7f ? s[n] : '?';
	snprintf(buf + n, len - n, "%s", s[n] ? "..." : "");
	return buf;
}

/*
 * The live file a log of pid's image begun at start_ns names (path: the user's string), looked up
 * the way every live read is. The path must be NAME in uid's live directory under one of the live
 * roots (the directory part that very string: no "..", no doubled '/'), and NAME that image's own
 * live name (HOST-PID-START_US.iost), at most NAME_MAX bytes; else it names no live file and
 * nothing is looked at. The directory is opened as the scan opens it (O_NOFOLLOW, uid's, not
 * writable by others) and NAME looked at relative to it without following a link: only uid's
 * regular file is the live file. Nothing is opened under the name, nothing followed.
 * LIVE_THERE: it is there; LIVE_GONE: nothing is under the name; LIVE_FOREIGN: the path names no
 * live file of uid's, or what is under the name is not uid's regular file (a link, a FIFO,
 * another's). who: the log that names it, said once for a foreign one (NULL: say nothing).
 */
enum live_at { LIVE_GONE, LIVE_THERE, LIVE_FOREIGN };
static enum live_at live_lookup(struct dmn *d, uid_t uid, int32_t pid, uint64_t start_ns, const char *path,
				const char *who)
{
	char dir[DMN_PATH + 32], own[32], err[256], b1[168], b2[168];
	const char *name = NULL;
	live_dir_name(own, sizeof own, uid);
	for (int k = 0; k < d->cfg.nlive_roots && !name && (d->root || uid == getuid()); k++) {
		const char *root = d->cfg.live_roots[k];
		size_t rl = strlen(root);
		while (rl > 1 && root[rl - 1] == '/')
			rl--;
		int n = snprintf(dir, sizeof dir, "%.*s/%s", (int)rl, root, own);
		if (n > 0 && (size_t)n < sizeof dir && !strncmp(path, dir, (size_t)n) && path[n] == '/')
			name = path + n + 1;
	}
	int32_t npid;
	uint64_t nus;
	if (!name || strlen(name) > NAME_MAX || strchr(name, '/') || !is_log_name(name) ||
	    live_name_key(name, &npid, &nus) < 0 || npid != pid || nus != start_ns / 1000) {
		if (who)
			dmn_say_once(d, hash_str(0x11fe, who),
				     "%s: names %s as its live file, not its own in its owner's live directory: not followed",
				     said_path(who, b1, sizeof b1), said_path(path, b2, sizeof b2));
		return LIVE_FOREIGN;
	}
	struct stat st;
	int dfd = dmn_open_dir(AT_FDCWD, dir, uid, &st, err, sizeof err);
	if (dfd < 0)
		return dfd == -ENOENT ? LIVE_GONE : LIVE_FOREIGN; /* (the scan says why, once) */
	int r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	close(dfd);
	if (r == -ENOENT)
		return LIVE_GONE;
	if (r == 0 && S_ISREG(st.st_mode) && st.st_uid == uid)
		return LIVE_THERE;
	/* the scan meets it too (a log's name in the live directory): one line, whoever says it */
	if (who)
		dmn_say_once(d, hash_str(0xcbf29ce484222325ull, path), "%s: not its owner's regular file (%s): not followed",
			     said_path(path, b1, sizeof b1),
			     r < 0 ? strerror(-r) : S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
			     : S_ISREG(st.st_mode) ? "another user's" : "not a regular file");
	return LIVE_FOREIGN;
}

static void take_final_file(struct dmn *d, uid_t uid, gid_t gid, const char *path)
{
	struct log_file lf;
	char err[1024];
	int r = dmn_read_final(path, uid, gid, &d->lim, &lf, err, sizeof err);
	if (r < 0) {
		if (r != -ENOENT)
			dmn_say_once(d, hash_str(0x51, path), "%s", err);
		return;
	}
	const struct log_header *h = &lf.hdr;
	int64_t key;
	enum store_proc_state state;
	if (!(h->flags & LOG_F_LIVE) && !proc_find(d, h->pid, h->start_ns) &&
	    !set_has(&d->done, done_key(h->pid, h->start_ns)) &&
	    store_proc_find(d->st, d->host, h->pid, h->start_ns, &key, &state) == -ENOENT) {
		struct dmn_proc *p = proc_new(d, &lf, uid, gid, path);
		/* An image that ended for an exec: the exec may have failed and the image go on (read
		 * before the look at its life, this reading is a live one). The library keeps the live
		 * file until the exec is known to have succeeded (docs/FORMAT.md, "An exec"):
		 * while it is there, the image is followed by it, by its name, as any live
		 * process. Gone (or none the daemon may follow: live_lookup), take_ended looks again
		 * before it reads the log again: a log that says the file was kept through the exec
		 * (LOG_F_EXEC_KEPT) is then the image's last word; one of a library before 2026-11-28,
		 * which removed it at the exec, waits for the process's end (exec_wait). */
		int exec = (h->flags & LOG_F_EXEC) != 0;
		const char *lp = log_file_string(&lf, h->live_path);
		char *follow = exec && live_lookup(d, uid, h->pid, h->start_ns, lp, path) == LIVE_THERE ? strdup(lp) : NULL;
		if (p) {
			free(p->final_path);
			p->final_path = strdup(path);
			p->seen = 1;
			p->exec_wait = exec && !(h->flags & LOG_F_EXEC_KEPT) && !follow;
			if (follow) {
				free(p->live_path);
				p->live_path = follow;
				follow = NULL;
			}
			if (!p->final_path || take_log(d, p, &lf, 1) < 0)
				dmn_say("out of memory taking %s", path);
			else if (!exec)
				take_final_runs(d, p, &lf);
			if (!exec) {
				p->next_state = h->flags & LOG_F_CRASHED ? STORE_PROC_KILLED : STORE_PROC_ENDED;
				p->end_ms = log_wall_ms(h, h->end_ns ? h->end_ns : log_file_last_ns(&lf));
			}
		}
		free(follow);
	}
	log_file_free(&lf);
}

/* Final logs of this host in dir (uid's) that no process stands for, of whichever job: a log is
 * read once, so one passed over for another job's would never be taken (two jobs may share a
 * directory, and the one whose process the daemon never saw live is then found only here). */
static void scan_final_dir(struct dmn *d, const char *jobdir, uid_t uid, gid_t gid)
{
	if (jobdir[0] != '/')
		return;
	struct timespec before;
	struct stat st;
	memset(&st, 0, sizeof st);
	clock_gettime(CLOCK_REALTIME, &before);
	dmn_fs_as(uid, gid);
	int fd = open(jobdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dmn_fs_as_self();
	/* (a final log that could not be read is not read again: every listing is complete) */
	struct dmn_listing *l = fd >= 0 && fstat(fd, &st) == 0 ? listing_get(d, jobdir, uid) : NULL;
	if (listing_fresh(l, &st)) {
		close(fd);
		return;
	}
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t hl = strlen(d->host);
	struct dirent *de;
	while ((de = readdir(dir))) {
		const char *n = de->d_name;
		int pid;
		unsigned long long us;
		char tail[8];
		/* a process's final log, HOST-PID-START_US.iost, or the kernel layer's of `run --kernel`,
		 * kernel-HOST-PID.iost (written at the job's end: its records join the job then) */
		if (!is_log_name(n))
			continue;
		if (!strncmp(n, "kernel-", 7) && !strncmp(n + 7, d->host, hl) && n[7 + hl] == '-' &&
		    sscanf(n + 8 + hl, "%d%7s", &pid, tail) == 2 && !strcmp(tail, ".iost"))
			us = UINT64_MAX - (unsigned)pid; /* a key of its own: no process starts then */
		else if (strncmp(n, d->host, hl) || n[hl] != '-' ||
			 sscanf(n + hl + 1, "%d-%llu%7s", &pid, &us, tail) != 3 || strcmp(tail, ".iost"))
			continue;
		if (known_log(d, pid, us))
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", jobdir, n);
		take_final_file(d, uid, gid, path);
		/* read once, taken or not (one taken before, or not a final log) */
		set_add(&d->seen_final, done_key(pid, us));
	}
	closedir(dir);
	listing_note(l, &st, &before, 0);
}

/* The announced directories whose link changed lately; the others are forgotten (their link
 * renews them when a process starts there again). */
static void scan_dir_refs(struct dmn *d, int64_t now)
{
	int64_t window = (int64_t)d->cfg.job_grace_ms + 2 * (int64_t)d->cfg.interval_ms;
	size_t k = 0;
	for (size_t i = 0; i < d->ndirs; i++) {
		struct dmn_dirref *r = &d->dirs[i];
		if (now - r->active_ms > window) {
			free(r->path);
			continue;
		}
		scan_final_dir(d, r->path, r->uid, r->gid);
		d->dirs[k++] = *r;
	}
	d->ndirs = k;
}

/* The path of what a lost process's node-seconds counted beyond its last full reading (not an
 * absolute path: no file of a log is named so), noted under a key no record has (pid -1). */
#define LOST_REST_PATH "(counted per second, its files not read)"
#define LOST_REST_PID (-1)

/*
 * A process lost (its live log gone, its final log unreadable) whose node-seconds counted more
 * than its last full reading holds: the per-second sums' growth since that reading, and what a
 * restart found counted ahead of its stored cursor and no reading took again (owed). Stored as
 * rows of its own under LOST_REST_PATH (bytes and calls; no time: the sums do not say which
 * call took how long), so that the node-seconds still add up to the intervals. 1 when there
 * was any, else 0.
 */
static int lost_rest(struct dmn *d, struct dmn_proc *p, const struct dmn_cursor *last)
{
	struct dmn_aheads read = {0};
	int any = 0;
	const char *path = NULL;
	if (dmn_cursor_sums(last, &read) < 0) {
		dmn_say("out of memory taking pid %d's statistics", (int)p->pid);
		dmn_aheads_free(&read);
		return 0;
	}
	for (size_t i = 0; i < p->sums.n; i++) {
		const struct dmn_ahead *s = &p->sums.a[i];
		const struct dmn_ahead *f = dmn_ahead_find(&read, s->layer), *o = dmn_ahead_find(&p->owed, s->layer);
		uint64_t v[DMN_NA];
		for (unsigned k = 0; k < DMN_NA; k++) {
			uint64_t got = f ? f->v[k] : 0;
			v[k] = (s->v[k] > got ? s->v[k] - got : 0) + (o ? o->v[k] : 0);
		}
		const struct {
			unsigned cat;
			uint64_t bytes, calls;
		} rows[] = {{STORE_CAT_READ, v[DMN_A_BYTES_READ], v[DMN_A_READS]},
			    {STORE_CAT_WRITE, v[DMN_A_BYTES_WRITTEN], v[DMN_A_WRITES]},
			    {STORE_CAT_META, 0, v[DMN_A_META]}};
		for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
			if (!rows[k].bytes && !rows[k].calls)
				continue;
			any = p->stats = p->changed = 1;
			if (!path && (rpath_note(p, 0, LOST_REST_PID, LOST_REST_PATH) < 0 ||
				      !(path = rpath_find(p, 0, LOST_REST_PID))))
				break;
			if (rows_add(d->rows, p, path, s->layer, rows[k].cat, (int64_t)rows[k].bytes,
				     (int64_t)rows[k].calls, 0) < 0)
				dmn_say("out of memory taking pid %d's statistics", (int)p->pid);
		}
	}
	dmn_aheads_free(&read);
	return any;
}

/*
 * A live process whose live file is gone: its final log holds its last counters. Unless its
 * image ended for an exec (its final log says so, or a forked child that counted nothing left
 * none) and the process lives. The library keeps the live file until the exec is known to have
 * succeeded, and its log of the exec says so (LOG_F_EXEC_KEPT): the file gone, the exec
 * succeeded or the image ended since (its final log written again first), so the log read after
 * the file was found gone is the image's last word. A library before 2026-11-28 removed the
 * file at the exec, when the exec could still fail and the image go on counting, to write its
 * final log at its end; its log lacks the flag, and a forked child that counted nothing leaves no
 * log to say which library it ran. For those, what the log holds is taken as a live reading, and
 * the last reading waits for the process's end (exec_wait: its pidfd, nothing read meanwhile):
 * the stored figures are the same either way (the image's end is its log's). Its life and its
 * live file are looked at before the log is read, so that a reading taken as the last is one
 * made after the end.
 */
static void take_ended(struct dmn *d, struct dmn_proc *p)
{
	int alive = proc_alive(d, p, p->pid, p->start_ticks);
	if (p->exec_wait && alive)
		return;
	keep_none(d);
	d->keep_hold = DMN_KEEP_HOLD;
	/* (a live file there but unreadable is not a vanished one; a path that is no live file of
	 * the owner's, or a name that holds no regular file of theirs, holds none to follow) */
	enum live_at at = alive ? live_lookup(d, p->uid, p->pid, p->start_ns, p->live_path, NULL) : LIVE_GONE;
	struct log_file lf;
	char err[1024];
	int r = p->final_path[0] ? dmn_read_final(p->final_path, p->uid, p->gid, &d->lim, &lf, err, sizeof err) : -ENOENT;
	if (r == -ENOENT && alive && at != LIVE_THERE) {
		p->exec_wait = 1;
		return;
	}
	if (r == 0) {
		if (lf.hdr.pid == p->pid && lf.hdr.start_ns == p->start_ns) {
			/* a log of an exec that kept the live file, there still: a live reading, the image
			 * followed by that file again (its reading failed this time) */
			int kept = (lf.hdr.flags & LOG_F_EXEC_KEPT) != 0;
			int wait = alive && (lf.hdr.flags & LOG_F_EXEC) && (!kept || at == LIVE_THERE);
			if (take_log(d, p, &lf, 1) < 0)
				dmn_say("out of memory taking %s", p->final_path);
			else if (!wait)
				take_final_runs(d, p, &lf);
			if (wait) {
				p->exec_wait = !kept;
				log_file_free(&lf);
				return;
			}
			/* recovered by `iostrata recover` (or run) after it was killed */
			p->next_state = lf.hdr.flags & LOG_F_CRASHED ? STORE_PROC_KILLED : STORE_PROC_ENDED;
			p->end_ms = log_wall_ms(&lf.hdr, lf.hdr.end_ns ? lf.hdr.end_ns : log_file_last_ns(&lf));
		} else {
			r = -EINVAL;
			snprintf(err, sizeof err, "%s: the log of another process", p->final_path);
		}
		log_file_free(&lf);
	}
	if (r == 0)
		return;
	/* lost: its statistics are its counters as last read in full, and what its node-seconds
	 * counted beyond them (lost_rest) */
	const struct dmn_cursor *last = p->has_next_rec ? &p->next : &p->node;
	for (size_t i = 0; i < last->n; i++) {
		const struct dmn_rec *cur = &last->r[i], *prev = dmn_cursor_find(&p->cur, cur->id, cur->pid);
		const char *path = rpath_find(p, cur->id, cur->pid);
		if (rec_same(prev, cur) || !path)
			continue;
		p->stats = p->changed = 1;
		if (stat_rows(d->rows, p, path, cur, prev) < 0)
			dmn_say("out of memory taking pid %d's statistics", (int)p->pid);
	}
	int rest = lost_rest(d, p, last);
	/* a forked child that exec'd before any counted call leaves no log by design */
	p->next_state = dmn_cursor_zero(last) && !rest ? STORE_PROC_ENDED : STORE_PROC_LOST;
	p->end_ms = wall_ms();
	if (p->next_state == STORE_PROC_LOST)
		dmn_say_once(d, done_key(p->pid, p->start_ns),
			     "pid %d (job %s): its live log is gone and its final log cannot be read (%s): its counters as last "
			     "taken stand",
			     (int)p->pid, p->job->job, err);
}

/* ---------- devices ---------- */

static void sample_disks(struct dmn *d, int64_t now)
{
	struct dmn_rowbuf *rb = d->rows;
	if (sys_diskstats_load(d->cfg.diskstats_path, &rb->disk_now) < 0) {
		dmn_say_once(d, 0xd15c, "%s: cannot be read: the device sampler is off until it can", d->cfg.diskstats_path);
		return;
	}
	rb->have_disk_now = 1;
	if (!d->have_disk_prev)
		return;
	for (size_t i = 0; i < rb->disk_now.n; i++) {
		const struct sys_diskstat *c = &rb->disk_now.v[i];
		const struct sys_diskstat *o = sys_diskstat_by_dev(&d->disk_prev, c->major, c->minor);
		if (!o || strcmp(o->name, c->name))
			o = NULL; /* a new device: its counters from 0 would be its whole history */
		if (!o || (c->reads == o->reads && c->writes == o->writes && c->discards == o->discards &&
			   c->flushes == o->flushes && c->ms_io == o->ms_io && c->in_flight == o->in_flight))
			continue; /* an idle device: no row (docs/STORE.md) */
		if (grow(&rb->dev, &rb->capdev, rb->ndev, sizeof *rb->dev) < 0)
			return;
		/* the kernel keeps the ms counters in 32 bits on some kernels: unsigned differences of
		 * 32-bit values wrap right */
#define DELTA(f) (c->f - o->f)
#define DELTA32(f) (c->f >= o->f ? c->f - o->f : (uint64_t)(uint32_t)(c->f - o->f))
		rb->dev[rb->ndev++] = (struct store_device_sample){
			.t_ms = now, .dt_ms = now - d->last_ms, .host = d->host, .device = c->name,
			.major = c->major, .minor = c->minor,
			.reads = DELTA(reads), .reads_merged = DELTA(reads_merged), .sectors_read = DELTA(sectors_read),
			.ms_reading = DELTA32(ms_reading), .writes = DELTA(writes), .writes_merged = DELTA(writes_merged),
			.sectors_written = DELTA(sectors_written), .ms_writing = DELTA32(ms_writing),
			.in_flight = c->in_flight, .ms_io = DELTA32(ms_io), .ms_weighted = DELTA32(ms_weighted),
			.discards = DELTA(discards), .sectors_discarded = DELTA(sectors_discarded), .flushes = DELTA(flushes),
		};
#undef DELTA
#undef DELTA32
	}
}

/* ---------- the end of a job: its report, by the job pipeline ---------- */

/* Reads all of fd into a malloc'd string within timeout_ms: 0, or -1. */
static int read_all_fd(int fd, char **out, size_t *len, int timeout_ms)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -1;
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		if (poll(&pfd, 1, timeout_ms) <= 0)
			break;
		if (n + 1 >= cap) {
			char *b = realloc(buf, cap * 2);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			buf[n] = 0;
			*out = buf;
			*len = n;
			return k == 0 ? 0 : -1;
		}
		n += (size_t)k;
	}
	free(buf);
	return -1;
}

/*
 * The report of a job directory, computed in a child that runs as the job's owner (the
 * directory is theirs: what they put in it is read with their rights alone, and a hostile log
 * that could hang or crash the reader costs the child, not the daemon). The child writes the
 * text report, a 0 byte, then each finding's JSON with a 0 byte after it into a pipe, and the
 * JSON report into a memory file, which is sealed once the child is gone. 0 with e filled, or
 * -1 with a message said.
 */
static int job_report(struct dmn_job *j, struct ending *e)
{
	int pfd[2];
	*e = ENDING_NONE(j);
	int jfd = memfd_create("iostrata-report", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (jfd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		dmn_say("job %s: no report: %s", j->job, strerror(errno));
		if (jfd >= 0)
			close(jfd);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		close(jfd);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGPIPE, SIG_DFL);
		alarm(300);
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(j->gid) < 0 || setuid(j->uid) < 0))
			_exit(3);
		FILE *f = fdopen(pfd[1], "w"), *jf = fdopen(jfd, "w");
		struct ana_job job;
		char err[1024];
		const char *arg = j->jobdir;
		struct ana_report_opts o = {.top_n = ANA_TOP_DEFAULT};
		if (!f || !jf || ana_job_load(&job, &arg, 1, ANA_JOB_TIMELINE | ANA_JOB_MOUNTS, err, sizeof err) < 0) {
			if (f)
				fprintf(f, "%c%s", 1, jf ? err : "out of memory");
			_exit(1);
		}
		ana_report_text(f, &job, &o);
		fputc(0, f);
		ana_report_json(jf, &job, &o);
		for (size_t i = 0; i < job.findings.n; i++) {
			ana_finding_json(f, &job.findings.v[i]);
			fputc(0, f);
		}
		_exit(fflush(f) == 0 && fflush(jf) == 0 ? 0 : 1);
	}
	close(pfd[1]);
	char *buf = NULL;
	size_t len = 0;
	int r = read_all_fd(pfd[0], &buf, &len, 300000);
	close(pfd[0]);
	int status = 0;
	if (r < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	struct stat st;
	const char *why = buf && buf[0] == 1 ? buf + 1 : r < 0 ? "it took too long" : "the report failed";
	if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		/* nobody writes it from now on (a process the child left behind included), so its
		 * size holds while the store reads it */
		why = "its JSON file cannot be sealed (the report child left it open?)";
		if (fcntl(jfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0 &&
		    fstat(jfd, &st) == 0)
			why = NULL;
	}
	if (why) {
		dmn_say("job %s: no report from %s: %s", j->job, j->jobdir, why);
		free(buf);
		close(jfd);
		return -1;
	}
	e->block = buf;
	e->json_fd = jfd;
	e->json_len = (uint64_t)st.st_size;
	/* split at the 0 bytes, in place: the text, then the findings */
	char *p = buf, *end = buf + len;
	size_t k = 0;
	for (char *q = p; q < end; q += strlen(q) + 1, k++) {
		if (k == 0)
			e->text = q;
		else {
			char **v = realloc(e->findings, (e->nfindings + 1) * sizeof *v);
			if (!v)
				break;
			e->findings = v;
			e->findings[e->nfindings++] = q;
		}
	}
	if (e->text && e->json_len)
		return 0;
	ending_free(e);
	return -1;
}

static void end_job(struct dmn *d, struct dmn_job *j)
{
	struct dmn_rowbuf *rb = d->rows;
	struct ending e;
	job_report(j, &e); /* none: the job still ends (its intervals are stored) */
	if (grow(&rb->ending, &rb->capending, rb->nending, sizeof *rb->ending) < 0) {
		ending_free(&e);
		return;
	}
	rb->ending[rb->nending++] = e;
}

/* ---------- the scheduler's facts ---------- */

#define SCHED_RUNNING_MS 60000 /* asked again this often while the job runs here */
#define SCHED_ENDED_MS 2000    /* and this often once it ended here, until Slurm's state is final */
#define SCHED_WAIT_MS 600000   /* for at most this long after its end */

static void ask_scheduler(struct dmn *d, int64_t now)
{
	for (size_t i = 0; i < d->njobs; i++) {
		struct dmn_job *j = d->jobs[i];
		/* a job asked while it ran waits a minute for its next ask; once it ended here, 2 s */
		if (j->nlive == 0 && j->sched_next_ms > now + SCHED_ENDED_MS)
			j->sched_next_ms = now + SCHED_ENDED_MS;
		if (j->sched_done || now < j->sched_next_ms)
			continue;
		struct dmn_sched s;
		int r = dmn_sched_slurm(j->job, j->uid, &s);
		if (r == -ENOENT && !j->sched.state[0]) {
			j->sched_done = 1; /* no scheduler knows it (as this user's) */
			continue;
		}
		if (r == 0 && memcmp(&s, &j->sched, sizeof s)) {
			j->sched = s;
			j->sched_dirty = 1;
		}
		int ended_here = j->nlive == 0;
		if ((r == 0 && s.final) || (ended_here && j->end_ms && now - j->end_ms > SCHED_WAIT_MS))
			j->sched_done = 1;
		j->sched_next_ms = now + (ended_here ? SCHED_ENDED_MS : SCHED_RUNNING_MS);
	}
}

/* ---------- storing the interval ---------- */

/* The job's owner's name: asked of the user database until it gives one, then kept. */
static const char *job_user(struct dmn_job *j, char *buf, size_t len)
{
	if (j->user[0])
		return j->user;
	struct passwd pw, *res = NULL;
	char tmp[4096];
	if (getpwuid_r(j->uid, &pw, tmp, sizeof tmp, &res) == 0 && res && res->pw_name[0] &&
	    strlen(res->pw_name) < sizeof j->user) {
		memcpy(j->user, res->pw_name, strlen(res->pw_name) + 1);
		return j->user;
	}
	snprintf(buf, len, "%u", (unsigned)j->uid);
	return buf;
}

static int put_job(struct dmn *d, struct dmn_job *j, int64_t now)
{
	char user[256];
	int ending = 0;
	for (size_t i = 0; i < d->rows->nending; i++)
		ending |= d->rows->ending[i].job == j;
	/* its end, once set, in every later interval too (a job stays in memory after its end while
	 * the scheduler's last word or its merge is due: that must not clear it) */
	if (ending && !j->end_ms)
		j->end_ms = now;
	struct store_job sj = {
		.key = j->key, .job = j->job, .host = d->host, .uid = j->uid,
		.user = job_user(j, user, sizeof user), .exe = j->exe, .jobdir = j->jobdir,
		.start_ms = j->start_ms, .end_ms = ending || j->ended ? j->end_ms : 0,
		.running = !ending && !j->ended,
	};
	int r = store_job_put(d->st, &sj);
	if (r == 0)
		j->key = sj.key;
	if (r == 0 && d->batch) {
		int changed = !j->batched || j->batched_running != sj.running || j->batched_end_ms != sj.end_ms;
		r = changed ? store_batch_job(d->batch, &sj) : store_batch_job_lazy(d->batch, &sj);
		j->batched = 1;
		j->batched_running = sj.running;
		j->batched_end_ms = sj.end_ms;
	}
	return r;
}

static int put_proc(struct dmn *d, struct dmn_proc *p)
{
	size_t len = 0;
	void *blob = NULL;
	/* the statistics' cursor: this interval's readings when they are stored with it */
	if (!(blob = dmn_cursor_encode(!p->stats ? &p->cur : p->has_next_rec ? &p->next : &p->node, &len)))
		return -ENOMEM;
	struct store_proc sp = {
		.key = p->key, .job_key = p->job->key, .host = d->host, .pid = p->pid, .rank = p->rank,
		.start_ns = p->start_ns, .start_ticks = p->start_ticks, .uid = p->uid, .exe = p->exe,
		.live_path = p->live_path, .final_path = p->final_path, .start_ms = p->start_ms,
		.end_ms = p->next_state == STORE_PROC_LIVE ? 0 : p->end_ms, .state = p->next_state,
		.cursor = blob, .cursor_len = len,
	};
	int r = store_proc_put(d->st, &sp);
	if (r == 0)
		p->key = sp.key;
	if (r == 0 && d->batch)
		r = store_batch_proc(d->batch, &sp);
	free(blob);
	return r;
}

/* Stored once per (file path) within a transaction: a small cache of keys that a failed
 * transaction clears. */
struct fkey {
	char *path;
	int64_t key;
};
static struct fkey *fcache;
static size_t fcache_cap;

static uint64_t fnv(const char *s)
{
	return hash_str(1469598103934665603ull, s);
}

static void fcache_clear(void)
{
	if (!fcache)
		return;
	for (size_t i = 0; i < fcache_cap; i++)
		free(fcache[i].path);
	memset(fcache, 0, fcache_cap * sizeof *fcache);
}

static int file_key(struct dmn *d, const char *path, int64_t *key)
{
	if (!fcache) {
		fcache_cap = 1u << 16;
		if (!(fcache = calloc(fcache_cap, sizeof *fcache)))
			return -ENOMEM;
	}
	size_t i = (size_t)fnv(path) & (fcache_cap - 1);
	for (size_t probe = 0; probe < 64; probe++, i = (i + 1) & (fcache_cap - 1)) {
		if (!fcache[i].path)
			break;
		if (!strcmp(fcache[i].path, path)) {
			*key = fcache[i].key;
			return 0;
		}
	}
	int r = store_file_key(d->st, path, key);
	if (r < 0)
		return r;
	i = (size_t)fnv(path) & (fcache_cap - 1);
	for (size_t probe = 0; probe < 64; probe++, i = (i + 1) & (fcache_cap - 1))
		if (!fcache[i].path) {
			fcache[i].path = strdup(path);
			fcache[i].key = *key;
			break;
		}
	return 0;
}

/* A sink's batch carries the report whole: the JSON read from its sealed file for that. */
static int batch_report(struct store_batch *b, const struct ending *e)
{
	size_t len = (size_t)e->json_len;
	char *json = malloc(len + 1);
	if (!json || pread(e->json_fd, json, len, 0) != (ssize_t)len) {
		free(json);
		return json ? -EIO : -ENOMEM;
	}
	json[len] = 0;
	int r = store_batch_report(b, e->job->key, e->text, json);
	free(json);
	return r;
}

/* *buf (of *cap bytes) made at least need bytes: 0 or -ENOMEM */
static int buf_room(unsigned char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	unsigned char *nb = realloc(*buf, need);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = need;
	return 0;
}

/* p's entry of the node's cursor encoded again: 0 or -ENOMEM */
static int put_piece(struct dmn *d, struct dmn_proc *p)
{
	const struct dmn_aheads *a = p->stats ? &p->owed : &p->counted;
	if (buf_room(&d->piece, &d->piece_cap, dmn_node_piece_max(a)) < 0)
		return -ENOMEM;
	size_t len = dmn_node_piece(d->piece, p->pid, p->start_ns, a);
	if (buf_room(&p->piece, &p->piece_cap, len) < 0)
		return -ENOMEM;
	if (len)
		memcpy(p->piece, d->piece, len);
	p->piece_len = len;
	p->piece_stats = p->stats;
	p->piece_ok = 1;
	return 0;
}

/* What the node-seconds of this interval leave counted beyond the live processes' stored
 * cursors (cursor.h), in the interval's transaction; an empty one is not written again. */
static int put_node_cursor(struct dmn *d, int64_t now)
{
	int r = 0;
	for (size_t i = 0; i < d->nprocs && r >= 0; i++) {
		struct dmn_proc *p = d->procs[i];
		if (p->next_state != STORE_PROC_LIVE)
			continue; /* its end is stored with its last statistics: nothing ahead */
		/* once its statistics are stored, what is ahead of them is what it still owes; an entry
		 * whose aheads did not move is as encoded the last time */
		if (!p->piece_ok || p->piece_stats != p->stats)
			r = put_piece(d, p);
		if (r >= 0 && p->piece_len)
			r = dmn_node_enc_add_piece(&d->node_enc, p->piece, p->piece_len);
	}
	size_t len = 0;
	const void *blob = dmn_node_enc_finish(&d->node_enc, &len);
	d->node_put = NULL;
	if (r < 0)
		return r;
	d->node_cursor_next_empty = !len;
	if (!len && d->node_cursor_empty)
		return 0;
	/* nothing moved since it was stored (idle processes ahead of their cursors): as stored */
	if (d->node_last_has && len == d->node_last_len && (!len || !memcmp(blob, d->node_last, len)))
		return 0;
	if ((r = store_node_cursor_put(d->st, d->host, now, blob, len)) < 0)
		return r;
	d->node_put = blob;
	d->node_put_len = len;
	return 0;
}

/* After the commit: the node's cursor it wrote is the one stored. */
static void node_cursor_stored(struct dmn *d)
{
	if (!d->node_put)
		return;
	if (d->node_put_len > d->node_last_cap) {
		unsigned char *nb = realloc(d->node_last, d->node_put_len);
		if (!nb) {
			d->node_last_has = 0; /* (written again next time) */
			d->node_put = NULL;
			return;
		}
		d->node_last = nb;
		d->node_last_cap = d->node_put_len;
	}
	if (d->node_put_len)
		memcpy(d->node_last, d->node_put, d->node_put_len);
	d->node_last_len = d->node_put_len;
	d->node_last_has = 1;
	d->node_put = NULL;
}

/* interval rows handed to the store at once: a multiple of SQLite's 64 to a statement */
#define ROW_GROUP 64

static int store_interval(struct dmn *d, int64_t now)
{
	struct dmn_rowbuf *rb = d->rows;
	struct store_batch *b = d->batch;
	uint64_t seq = 0;
	int r = store_begin(d->st);
	if (r < 0)
		return r;
	if (b) {
		if ((r = store_batch_seq_next(d->st, &seq)) < 0) {
			store_rollback(d->st);
			return r;
		}
		store_batch_start(b, d->host, seq, now, now - d->last_ms);
	}
	for (size_t i = 0; i < d->njobs; i++) {
		memset(d->jobs[i]->add_bytes, 0, sizeof d->jobs[i]->add_bytes);
		memset(d->jobs[i]->add_calls, 0, sizeof d->jobs[i]->add_calls);
	}
	for (size_t i = 0; i < d->njobs && r >= 0; i++)
		r = put_job(d, d->jobs[i], now);
	for (size_t i = 0; i < d->njobs && r >= 0; i++) {
		struct dmn_job *j = d->jobs[i];
		if (!j->sched_dirty)
			continue;
		struct store_job sj = {.key = j->key, .sched = "slurm", .sched_name = j->sched.name,
				       .sched_state = j->sched.state, .sched_nodes = j->sched.nodes,
				       .submit_ms = j->sched.submit_ms, .sched_start_ms = j->sched.start_ms,
				       .sched_end_ms = j->sched.end_ms};
		r = store_job_sched_put(d->st, &sj);
		if (r >= 0 && b)
			r = store_batch_sched(b, &sj);
	}
	for (size_t i = 0; i < d->nprocs && r >= 0; i++) {
		struct dmn_proc *p = d->procs[i];
		/* an image that counted nothing (a forked child before its exec) is not stored, unless
		 * runs of its trace were taken (calls its records do not count, on inherited
		 * descriptors) or it is lost with node-seconds beyond its readings (lost_rest) */
		const struct dmn_cursor *c = p->has_next_rec ? &p->next : &p->node;
		if (!p->key && dmn_cursor_zero(c) && !c->nt && p->next_state != STORE_PROC_LOST)
			continue;
		if ((p->stats && p->changed) || p->next_state != p->state || !p->key)
			r = put_proc(d, p);
	}
	/* the rows go to the store a group at a time (SQLite writes 64 to a statement) */
	struct store_interval grp[ROW_GROUP];
	for (size_t i0 = 0; i0 < rb->n && r >= 0; i0 += ROW_GROUP) {
		size_t n = rb->n - i0 < ROW_GROUP ? rb->n - i0 : ROW_GROUP;
		for (size_t k = 0; k < n && r >= 0; k++) {
			const struct row *w = &rb->v[i0 + k];
			int64_t *key = &fpath_of(w->path)->key;
			if (!*key)
				r = store_file_key(d->st, w->path, key);
			grp[k] = (struct store_interval){.t_ms = now, .dt_ms = now - d->last_stats_ms, .proc_key = w->p->key,
							 .file_key = *key, .layer = w->layer, .cat = w->cat, .bytes = w->bytes,
							 .calls = w->calls, .dur_ns = w->dur};
		}
		if (r >= 0)
			r = store_intervals_add(d->st, grp, n);
		for (size_t k = 0; k < n && r >= 0; k++) {
			const struct row *w = &rb->v[i0 + k];
			if (b && (r = store_batch_interval(b, &grp[k], w->path)) < 0)
				break;
			/* the job's running totals: the user layers only (the kernel layers repeat their bytes) */
			if (w->layer == LOG_LAYER_POSIX || w->layer == LOG_LAYER_STDIO) {
				w->p->job->add_bytes[w->cat] += w->bytes;
				w->p->job->add_calls[w->cat] += w->calls;
			}
			d->values_stored += 3;
			d->rows_stored++;
		}
	}
	for (size_t i = 0; i < rb->nruns && r >= 0; i++) {
		struct runrow *w = &rb->runs[i];
		struct store_run x = w->r;
		x.t_ms = now;
		x.proc_key = w->p->key;
		if ((r = file_key(d, w->path, &x.file_key)) >= 0)
			r = store_run_add(d->st, &x);
		if (r >= 0 && b)
			r = store_batch_run(b, &x, w->path);
		if (r >= 0)
			d->runs_stored++;
	}
	for (size_t i = 0; i < d->njobs && r >= 0; i++) {
		struct dmn_job *j = d->jobs[i];
		int any = 0;
		for (unsigned c = 0; c < STORE_NCATS; c++)
			any |= j->add_bytes[c] || j->add_calls[c];
		if (any)
			r = store_job_totals_add(d->st, j->key, j->add_bytes, j->add_calls);
		if (any && r >= 0 && b)
			r = store_batch_totals(b, j->key, j->add_bytes, j->add_calls);
	}
	for (unsigned l = 0; l <= LOG_LAYER_MAX && r >= 0; l++)
		if (rb->node_used[l]) {
			rb->node[l].t_ms = now;
			rb->node[l].dt_ms = now - d->last_ms;
			r = store_node_sec_add(d->st, &rb->node[l]);
			if (r >= 0 && b)
				r = store_batch_node_sec(b, &rb->node[l]);
		}
	if (r >= 0)
		r = put_node_cursor(d, now);
	for (size_t i = 0; i < rb->ndev && r >= 0; i++) {
		r = store_device_add(d->st, &rb->dev[i]);
		if (r >= 0 && b)
			r = store_batch_device(b, &rb->dev[i]);
	}
	for (size_t i = 0; i < d->samples.n && r >= 0; i++) {
		const struct dmn_sample *x = &d->samples.v[i];
		struct store_sample ss = {now, now - d->last_ms, d->host, x->source, x->instance, x->metric, x->value,
					  x->gauge};
		r = store_sample_add(d->st, &ss);
		if (r >= 0 && b)
			r = store_batch_sample(b, &ss);
	}
	for (size_t i = 0; i < d->samples.ndists && r >= 0; i++) {
		const struct dmn_dist *x = &d->samples.dists[i];
		struct store_dist sd = {.t_ms = now, .host = d->host, .server = x->server, .op = x->op,
					.requests = x->requests, .timed = x->timed};
		memcpy(sd.wait, x->wait, sizeof sd.wait);
		memcpy(sd.service, x->service, sizeof sd.service);
		r = store_dist_add(d->st, &sd);
		if (r >= 0 && b)
			r = store_batch_dist(b, &sd);
	}
	for (size_t i = 0; i < rb->nending && r >= 0; i++) {
		const struct ending *e = &rb->ending[i];
		if (e->text)
			r = store_job_report_put_fd(d->st, e->job->key, e->text, e->json_fd, e->json_len);
		if (r >= 0 && e->text)
			r = store_job_findings_put(d->st, e->job->key, (const char *const *)e->findings,
						   e->nfindings);
		if (r >= 0 && e->text && b)
			r = batch_report(b, e);
		if (r >= 0 && e->text && b)
			r = store_batch_findings(b, e->job->key, (const char *const *)e->findings, e->nfindings);
	}
	const void *data = NULL;
	size_t len = 0;
	if (r >= 0 && b && !(data = store_batch_finish(b, &len)))
		r = -EFBIG;
	/* nothing happened: nothing to send (an in-memory sink still sees the interval) */
	int send = data && store_batch_records(b);
	for (int i = 0; i < d->nsinks && r >= 0 && send; i++)
		if (d->sinks[i]->spool)
			r = store_outbox_put(d->st, d->sinks[i]->spool, seq, now, data, len, d->cfg.spool_max);
	if (r >= 0)
		r = store_commit(d->st);
	if (r < 0) {
		store_rollback(d->st);
		return r;
	}
	for (int i = 0; i < d->nsinks && data; i++)
		if (!d->sinks[i]->spool && d->sinks[i]->committed)
			d->sinks[i]->committed(d->sinks[i], data, len);
	return r;
}

/*
 * A job's final logs on this node become one archive in its job directory, merge_logs after its
 * end, by `iostrata merge --remove` (the one merge: it reads and checks every log, writes the
 * archive under a temporary name, reads it back, and only then removes the logs), run as the
 * job's owner, in the owner's directory. The report reads the archive as it read the logs.
 */
struct merge_args {
	char **v;
	size_t n, cap;
};

static int add_log_path(const char *path, void *arg)
{
	struct merge_args *a = arg;
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* merged already, or never written (a killed process not recovered) */
	if (grow(&a->v, &a->cap, a->n + 1, sizeof *a->v) < 0)
		return 1;
	a->v[a->n] = strdup(path);
	if (a->v[a->n])
		a->n++;
	return 0;
}

static void merge_job(struct dmn *d, struct dmn_job *j)
{
	struct merge_args a = {0};
	j->merged = 1;
	if (!d->merge_exe[0] || !j->key || store_job_logs(d->st, j->key, d->host, add_log_path, &a) < 0 || a.n < 2)
		goto out; /* one log is already one file */
	char out[DMN_PATH + 128];
	snprintf(out, sizeof out, "%s/%s-%lld.iostar", j->jobdir, d->host, (long long)j->end_ms);
	char **argv = calloc(a.n + 6, sizeof *argv);
	if (!argv)
		goto out;
	argv[0] = "iostrata", argv[1] = "merge", argv[2] = "--remove", argv[3] = "-o", argv[4] = out;
	for (size_t i = 0; i < a.n; i++)
		argv[5 + i] = a.v[i];
	int pfd[2];
	pid_t pid = pipe2(pfd, O_CLOEXEC) == 0 ? fork() : -1;
	if (pid == 0) {
		dup2(pfd[1], 2);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0)
			dup2(nul, 0), dup2(nul, 1);
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(j->gid) < 0 || setuid(j->uid) < 0))
			_exit(3);
		execv(d->merge_exe, argv);
		_exit(127);
	}
	if (pid > 0) {
		close(pfd[1]);
		char *msg = NULL;
		size_t len = 0;
		int r = read_all_fd(pfd[0], &msg, &len, 60000);
		close(pfd[0]);
		if (r < 0)
			kill(pid, SIGKILL);
		int status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (msg && len && msg[len - 1] == '\n')
				msg[len - 1] = 0;
			dmn_say("job %s: its logs were not merged: %s", j->job, msg && *msg ? msg : "iostrata merge failed");
		}
		free(msg);
	} else if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	free(argv);
out:
	for (size_t i = 0; i < a.n; i++)
		free(a.v[i]);
	free(a.v);
}

static void merge_due(struct dmn *d, int64_t now)
{
	if (!d->cfg.merge_after_ms)
		return;
	for (size_t i = 0; i < d->njobs; i++) {
		struct dmn_job *j = d->jobs[i];
		if (j->ended && !j->merged && j->nlive == 0 && now - j->end_ms >= (int64_t)d->cfg.merge_after_ms)
			merge_job(d, j);
	}
}

/* Raw rows older than the retention leave the store (archived first, rolled up to minutes), a
 * bounded number per interval, as often as the retention allows (at most hourly). */
#define RETAIN_ROWS 1000000
static void retain(struct dmn *d, int64_t now)
{
	int64_t every = d->cfg.retention_ms < 3600000 ? (int64_t)d->cfg.retention_ms : 3600000;
	if (now - d->last_retain_ms < every)
		return;
	uint64_t moved = 0;
	int r = store_retain(d->st, now - (int64_t)d->cfg.retention_ms, d->cfg.archive_none ? NULL : d->cfg.archive_dir,
			     RETAIN_ROWS, &moved);
	if (r < 0) {
		dmn_say_once(d, 0x7e7a1, "retention: %s (tried again in %lld s)", store_error(d->st), (long long)every / 1000);
		d->last_retain_ms = now;
		return;
	}
	/* a full batch: more are due, next interval */
	if (moved < RETAIN_ROWS)
		d->last_retain_ms = now;
}

static void say_sampler(void *ctx, uint64_t key, const char *text)
{
	dmn_say_once(ctx, key, "%s", text);
}

/* ---------- the interval ---------- */

int dmn_interval(struct dmn *d)
{
	struct dmn_rowbuf *rb = d->rows;
	int64_t now = wall_ms();
	rows_clear(rb);
	d->runs_budget = d->cfg.runs_max;
	d->samples.ndists = 0;
	/* by the clock, not by counting intervals: the first statistics come stats_interval after the
	 * start, and a late timer or a failed transaction shifts nothing (half an interval of slack
	 * for the timer's jitter) */
	d->stats_tick = d->stats_now || d->cfg.stats_interval_ms <= d->cfg.interval_ms ||
			now - d->last_stats_ms >= (int64_t)d->cfg.stats_interval_ms - (int64_t)d->cfg.interval_ms / 2;
	for (size_t i = 0; i < d->nprocs; i++)
		d->procs[i]->seen = d->procs[i]->changed = d->procs[i]->stats = 0;
	liveness_poll(d);
	d->keep_off = 0;
	if (d->stats_tick)
		listings_prune(d);
	if (d->keep_hold > 0) {
		d->keep_hold--;
		keep_none(d);
	} else if (d->stats_tick) {
		d->keep_off = 1; /* (keep_none above: the files kept are read from their pages first) */
	}
	if (d->cfg.sampler_live)
		scan_live(d);
	if (d->stats_tick)
		keep_none(d); /* (kept files not read this time) */
	dmn_live_drop_flush(); /* (the per-second sums' pages not kept) */
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dmn_proc *p = d->procs[i];
		if (!p->seen && p->next_state == STORE_PROC_LIVE)
			take_ended(d, p);
	}
	if (d->cfg.sampler_live)
		for (size_t i = 0; i < d->njobs; i++)
			if (!d->jobs[i]->ended)
				scan_final_dir(d, d->jobs[i]->jobdir, d->jobs[i]->uid, d->jobs[i]->gid);
	if (d->cfg.sampler_live)
		scan_dir_refs(d, now);
	if (d->cfg.sampler_diskstats)
		sample_disks(d, now);
	dmn_samplers_take(d->samplers, &d->cfg, &d->samples, say_sampler, d);
	/* jobs: open while a process lives; ended job_grace after the last one */
	for (size_t i = 0; i < d->njobs; i++)
		d->jobs[i]->nlive = 0;
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dmn_proc *p = d->procs[i];
		if (p->next_state == STORE_PROC_LIVE)
			p->job->nlive++;
		else if (p->end_ms > p->job->end_ms)
			p->job->end_ms = p->end_ms;
	}
	for (size_t i = 0; i < d->njobs; i++) {
		struct dmn_job *j = d->jobs[i];
		if (j->nlive)
			j->last_live_ms = now;
		else if (!j->ended && now - j->last_live_ms >= (int64_t)d->cfg.job_grace_ms)
			end_job(d, j);
	}

	ask_scheduler(d, now);
	int r = store_interval(d, now);
	if (r < 0) {
		if (!d->store_failing)
			dmn_say("%s: the store cannot be written (%s); the differences are taken again at the next "
				"interval, nothing is lost",
				d->cfg.store, store_error(d->st));
		d->store_failing = 1;
		fcache_clear();
		for (size_t i = 0; i < d->nprocs; i++) {
			struct dmn_proc *p = d->procs[i];
			for (size_t k = 0; k < p->npaths; k++)
				fpath_of(p->paths[k].path)->key = 0; /* (files made in it are gone with it) */
			dmn_cursor_free(&p->next);
			p->has_next_rec = 0;
			if (p->undo.n) {
				dmn_undo_back(&p->undo, &p->sums, &p->owed, &p->counted);
				p->piece_ok = 0;
			}
			p->stats = 0;
			p->still.has = 0; /* (its statistics' reading was not stored: the next one is full) */
			p->mnext.has = 0;
			/* its runs decoded this time were not stored: decoded again from the start, the
			 * stored ones (the cursor's) skipped */
			dmn_trace_free(p->trace);
			p->trace = NULL;
			p->next_state = p->state;
			p->key = 0;
		}
		for (size_t i = 0; i < d->njobs; i++)
			d->jobs[i]->key = d->jobs[i]->batched = 0;
		dmn_samplers_done(d->samplers, 0);
		return r;
	}
	if (d->store_failing)
		dmn_say("%s: written again", d->cfg.store);
	retain(d, now);
	merge_due(d, now);
	dmn_sinks_send(d, now);
	d->store_failing = 0;
	dmn_samplers_done(d->samplers, 1);
	d->intervals++;
	d->last_ms = now;
	d->node_cursor_empty = d->node_cursor_next_empty;
	node_cursor_stored(d);
	if (d->stats_tick) {
		d->last_stats_ms = now;
		d->stats_now = 0;
	}
	if (rb->have_disk_now) {
		if (d->have_disk_prev)
			sys_diskstats_free(&d->disk_prev);
		d->disk_prev = rb->disk_now;
		d->have_disk_prev = 1;
		rb->have_disk_now = 0;
	}
	for (size_t i = 0; i < rb->nending; i++)
		rb->ending[i].job->ended = 1;
	/* the diagnosis of the jobs that ended (and that a restart left undiagnosed): after the commit */
	dmn_diagnose_ended(d->st, now);
	for (size_t i = 0; i < d->njobs; i++)
		d->jobs[i]->sched_dirty = 0;
	/* the cursors move on; logs taken to their end leave memory */
	size_t k = 0;
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dmn_proc *p = d->procs[i];
		if (p->mnext.has)
			p->mbase = p->mnext;
		p->mnext.has = 0;
		if (p->has_next_rec) {
			dmn_cursor_free(&p->node);
			p->node = p->next;
			memset(&p->next, 0, sizeof p->next);
			p->has_next_rec = 0;
		}
		p->undo.n = 0; /* (its readings' moves stand) */
		/* its statistics stored: their cursor is the node's readings, and nothing but what it
		 * still owes is counted ahead of them */
		if (p->stats && (p->changed || p->cur.n != p->node.n)) {
			struct dmn_cursor c;
			if (dmn_cursor_copy(&c, &p->node) == 0) {
				dmn_cursor_free(&p->cur);
				p->cur = c;
			} else {
				dmn_say("out of memory keeping the cursor of pid %d", (int)p->pid);
			}
		}
		if (p->stats && dmn_aheads_copy(&p->counted, &p->owed) < 0)
			dmn_say("out of memory keeping the cursor of pid %d", (int)p->pid);
		if (p->stats)
			p->piece_ok = 0;
		p->state = p->next_state;
		if (p->state != STORE_PROC_LIVE) {
			set_add(&d->done, done_key(p->pid, p->start_ns));
			proc_unwatch(d, p);
			proc_unmap(d, p);
			/* this interval's rows name p and its paths (struct row): they are stored, and
			 * rows_clear drops them at the next interval without a look at either */
			proc_free(p);
			continue;
		}
		d->procs[k++] = p;
	}
	/* the statistics' and a job's end's rows, readings and transaction leave free memory in
	 * the heap's middle, which glibc keeps (only its top is trimmed): returned here, once per
	 * statistics or end, not every interval (docs/DAEMON.md, "Memory") */
	if (d->stats_tick || k != d->nprocs || rb->nending)
		malloc_trim(0);
	d->nprocs = k;
	/* ended jobs with no process left in memory leave it too (the store keeps them) */
	k = 0;
	for (size_t i = 0; i < d->njobs; i++) {
		struct dmn_job *j = d->jobs[i];
		int used = 0;
		for (size_t q = 0; q < d->nprocs && !used; q++)
			used = d->procs[q]->job == j;
		/* the scheduler's final word may come after the job's last process here */
		if (j->ended && !used && (j->sched_done || now - j->end_ms > SCHED_WAIT_MS) &&
		    (j->merged || !d->cfg.merge_after_ms)) {
			job_free(j);
			continue;
		}
		d->jobs[k++] = j;
	}
	d->njobs = k;
	return 0;
}

/* ---------- start and end ---------- */

struct load_ctx {
	struct dmn *d;
	int bad;
};

static int job_row(const struct store_job *sj, void *arg)
{
	struct dmn_job **out = arg;
	struct dmn_job *j = calloc(1, sizeof *j);
	if (!j)
		return 1;
	j->job = strdup(sj->job);
	j->jobdir = strdup(sj->jobdir);
	j->exe = strdup(sj->exe);
	j->uid = sj->uid;
	j->key = sj->key;
	j->start_ms = sj->start_ms;
	*out = j;
	return 1;
}

/* A process the store says was live when the daemon stopped: its cursor is where to go on. */
static int load_proc(const struct store_proc *sp, void *arg)
{
	struct load_ctx *lc = arg;
	struct dmn *d = lc->d;
	struct dmn_proc *p = calloc(1, sizeof *p);
	if (!p)
		return 1;
	p->pid = sp->pid;
	p->rank = sp->rank;
	p->start_ns = sp->start_ns;
	p->start_ticks = sp->start_ticks;
	p->uid = sp->uid;
	p->key = sp->key;
	p->start_ms = sp->start_ms;
	p->state = p->next_state = STORE_PROC_LIVE;
	p->exe = strdup(sp->exe);
	p->live_path = strdup(sp->live_path);
	p->final_path = strdup(sp->final_path);
	struct passwd pw, *res = NULL;
	char tmp[4096];
	p->gid = getpwuid_r(sp->uid, &pw, tmp, sizeof tmp, &res) == 0 && res ? res->pw_gid : sp->uid;
	if (dmn_cursor_decode(&p->cur, sp->cursor, sp->cursor_len) < 0) {
		dmn_say("%s: process %lld has a cursor that does not decode: the store is damaged", d->cfg.store,
			(long long)sp->key);
		lc->bad = 1;
		proc_free(p);
		return 1;
	}
	for (size_t i = 0; i < d->njobs; i++)
		if (d->jobs[i]->key == sp->job_key)
			p->job = d->jobs[i];
	if (!p->job) {
		struct dmn_job *j = NULL;
		struct store_job_filter f = {.uid = STORE_ANY_UID, .key = sp->job_key};
		store_jobs(d->st, &f, job_row, &j);
		if (j && j->job && j->jobdir && j->exe && d->njobs < d->capjobs) {
			j->gid = p->gid;
			j->last_live_ms = wall_ms();
			d->jobs[d->njobs++] = j;
			p->job = j;
		} else if (j) {
			job_free(j);
		}
	}
	if (!p->exe || !p->live_path || !p->final_path || !p->job || proc_insert(d, p) < 0) {
		lc->bad = 1;
		proc_free(p);
		return 1;
	}
	return 0;
}

/*
 * The node's cursor: what the node-seconds stored counted beyond each live process's stored
 * cursor. The processes go on from their cursors (their statistics lose and repeat nothing);
 * their node-seconds go on from the same readings, so what was counted already is owed: taken
 * out of their next differences before these become node-seconds. A process the store no longer
 * calls live has nothing ahead (its end was stored with its last statistics). 0, or -errno with
 * err set (a cursor that does not decode: the store is damaged).
 */
static int load_node_cursor(struct dmn *d, char *err, size_t errlen)
{
	void *blob = NULL;
	size_t len = 0, n = 0;
	struct dmn_node_ent *v = NULL;
	int r = store_node_cursor_get(d->st, d->host, &blob, &len);
	if (r < 0) {
		snprintf(err, errlen, "%s", store_error(d->st));
		return r;
	}
	r = dmn_node_decode(blob, len, &v, &n);
	free(blob);
	if (r < 0) {
		snprintf(err, errlen, "%s: the node's cursor of %s does not decode: the store is damaged", d->cfg.store,
			 d->host);
		return r;
	}
	d->node_cursor_empty = !n;
	for (size_t i = 0; i < d->nprocs && r >= 0; i++) {
		struct dmn_proc *p = d->procs[i];
		struct dmn_node_ent *e = dmn_node_find(v, n, p->pid, p->start_ns);
		/* the node-seconds go on from the sums of the stored cursor's readings */
		if ((r = dmn_cursor_copy(&p->node, &p->cur)) < 0 || (r = dmn_cursor_sums(&p->cur, &p->sums)) < 0)
			break;
		if (e && ((r = dmn_aheads_copy(&p->counted, &e->a)) < 0 || (r = dmn_aheads_copy(&p->owed, &e->a)) < 0))
			break;
	}
	dmn_node_ents_free(v, n);
	if (r < 0)
		snprintf(err, errlen, "out of memory loading the processes' cursors");
	return r;
}

/* ---------- sinks (sink.h) ---------- */

int dmn_sink_add(struct dmn *d, struct dmn_sink *s)
{
	if (d->nsinks == DMN_MAX_SINKS) {
		s->free(s);
		return -ENOSPC;
	}
	if (!d->batch && !(d->batch = store_batch_new())) {
		s->free(s);
		return -ENOMEM;
	}
	d->sinks[d->nsinks++] = s;
	return 0;
}

/* The spooled batches of one send, copied out of the store's rows. */
struct sendlist {
	struct dmn_sink_batch *v;
	size_t n, cap;
};

static int send_row(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx)
{
	struct sendlist *l = ctx;
	void *copy = malloc(len ? len : 1);
	if (!copy || grow(&l->v, &l->cap, l->n, sizeof *l->v) < 0) {
		free(copy);
		return -1;
	}
	memcpy(copy, data, len);
	l->v[l->n++] = (struct dmn_sink_batch){seq, t_ms, copy, len};
	return 0;
}

/* A random time in (0, max] ms: seed 001's send delay, which spreads the nodes' messages. */
static int64_t random_delay(uint32_t max)
{
	uint64_t r;
	if (!max)
		return 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
		r = (uint64_t)wall_ms() * 6364136223846793005ull;
	return 1 + (int64_t)(r % max);
}

static void sink_send(struct dmn *d, struct dmn_sink *s, int64_t now)
{
	struct sendlist l = {0};
	char err[512] = "";
	int r = store_outbox_list(d->st, s->spool, s->send_max_bytes, send_row, &l);
	if (r < 0)
		snprintf(err, sizeof err, "%s", store_error(d->st));
	else if (l.n)
		r = s->send(s, l.v, l.n, err, sizeof err);
	if (r > 0) {
		int rr = store_outbox_del(d->st, s->spool, l.v[r - 1].seq);
		if (rr < 0)
			dmn_say_once(d, hash_str(0x5e2d, s->name), "%s: delivered batches not removed from the spool "
				     "(%s): they are sent again, and counted once", s->name, store_error(d->st));
		s->sent_batches += (uint64_t)r;
		s->sent_msgs++;
	}
	if (r < 0) {
		s->send_failures++;
		if (!s->failing)
			dmn_say("%s: %s; its batches wait in the spool and are sent when it answers", s->name, err);
		s->failing = 1;
		s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : d->cfg.interval_ms;
		if (s->backoff_ms > 30000)
			s->backoff_ms = 30000;
		s->next_ms = now + s->backoff_ms;
	} else {
		if (s->failing)
			dmn_say("%s: delivering again", s->name);
		s->failing = 0;
		s->backoff_ms = 0;
		/* more waiting than one send takes: go on at the next interval */
		uint64_t left = 0, bytes, dropped;
		store_outbox_state(d->st, s->spool, &left, &bytes, &dropped);
		s->next_ms = left ? now : now + random_delay(s->delay_max_ms);
	}
	for (size_t i = 0; i < l.n; i++)
		free((void *)l.v[i].data);
	free(l.v);
}

/* The sinks the configuration names: 0, or -errno with one line in err (a sink that cannot
 * start stops the daemon: running without it would look like running with it). */
static int sinks_open(struct dmn *d, char *err, size_t errlen)
{
	struct dmn_sink *s;
	if (d->cfg.influxdb[0]) {
		if (!(s = dmn_sink_influx_new(&d->cfg, d->host, err, errlen)))
			return -EINVAL;
		if (dmn_sink_add(d, s) < 0)
			return -ENOMEM;
	}
	if (d->cfg.redis[0]) {
		if (!(s = dmn_sink_redis_new(&d->cfg, d->host, err, errlen)))
			return -EINVAL;
		if (dmn_sink_add(d, s) < 0)
			return -ENOMEM;
	}
	if (d->cfg.prometheus[0]) {
		if (!(s = dmn_sink_prom_new(&d->cfg, d->host, err, errlen)))
			return -EINVAL;
		if (dmn_sink_add(d, s) < 0)
			return -ENOMEM;
	}
	return 0;
}

void dmn_sinks_send(struct dmn *d, int64_t now)
{
	for (int i = 0; i < d->nsinks; i++) {
		struct dmn_sink *s = d->sinks[i];
		if (!s->spool || now < s->next_ms)
			continue;
		sink_send(d, s, now);
	}
}

int dmn_init(struct dmn *d, const struct dmn_config *cfg, char *err, size_t errlen)
{
	memset(d, 0, sizeof *d);
	d->pid_ep = -1;
	d->cfg = *cfg;
	d->lim = (struct dmn_limits){cfg->max_records, 64u << 20, (uint64_t)cfg->max_log_mb << 20};
	d->root = geteuid() == 0;
	if (gethostname(d->host, sizeof d->host) < 0)
		snprintf(d->host, sizeof d->host, "unknown");
	if (!(d->rows = calloc(1, sizeof *d->rows)) || dmn_samplers_new(&d->samplers) < 0)
		return -ENOMEM;
	/* room for every job of the processes the store says are live */
	d->capjobs = 4096;
	if (!(d->jobs = calloc(d->capjobs, sizeof *d->jobs)))
		return -ENOMEM;
	int r = store_open(cfg->store, STORE_CREATE, &d->st, err, errlen);
	if (r < 0)
		return r;
	struct load_ctx lc = {.d = d};
	r = store_procs_open(d->st, d->host, load_proc, &lc);
	if (r < 0) {
		snprintf(err, errlen, "%s", store_error(d->st));
		return r;
	}
	if ((r = load_node_cursor(d, err, errlen)) < 0)
		return r;
	d->last_ms = d->last_stats_ms = wall_ms();
	/* a pidfd per live process (liveness, above): as many descriptors as the hard limit allows,
	 * and 512 of them (or half) left for everything else */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
			struct rlimit nl = {want > rl.rlim_cur ? want : rl.rlim_cur, rl.rlim_max};
			if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
				rl.rlim_cur = nl.rlim_cur;
		}
		d->max_pidfds = rl.rlim_cur > 1024 ? (size_t)rl.rlim_cur - 512 : (size_t)rl.rlim_cur / 2;
		/* and as many again for the live files mapped with their slots, which keep their
		 * descriptor: half of those each */
		d->max_pidfds /= 2;
		dmn_live_set_fd_max(d->max_pidfds);
		d->pid_ep = epoll_create1(EPOLL_CLOEXEC);
	}
	if ((r = sinks_open(d, err, errlen)) < 0)
		return r;
	/* iostrata beside iostratad (bin/ of an installation, build/ of a checkout) */
	char self[DMN_PATH];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + 10 < sizeof d->merge_exe) {
			snprintf(d->merge_exe, sizeof d->merge_exe, "%.*s/iostrata", (int)(slash - self), self);
			if (access(d->merge_exe, X_OK) < 0)
				d->merge_exe[0] = 0;
		}
	}
	if (!d->merge_exe[0] && cfg->merge_after_ms)
		dmn_say("no iostrata command beside iostratad: jobs' logs are not merged");
	return 0;
}

void dmn_fini(struct dmn *d)
{
	for (size_t i = 0; i < d->nprocs; i++) {
		proc_unwatch(d, d->procs[i]);
		proc_free(d->procs[i]);
	}
	if (d->pid_ep >= 0)
		close(d->pid_ep);
	for (size_t i = 0; i < d->nlists; i++) {
		free(d->lists[i].path);
		free(d->lists[i].uids);
	}
	free(d->lists);
	free(d->known);
	for (size_t i = 0; i < d->nidirs; i++)
		free(d->idirs[i]);
	free(d->idirs);
	for (size_t i = 0; i < d->njobs; i++)
		job_free(d->jobs[i]);
	free(d->procs);
	free(d->jobs);
	free(d->done.slot);
	free(d->seen_final.slot);
	for (size_t i = 0; i < d->ndirs; i++)
		free(d->dirs[i].path);
	free(d->dirs);
	free(d->reported.slot);
	if (d->rows) {
		rows_clear(d->rows);
		free(d->rows->v);
		free(d->rows->runs);
		free(d->rows->dev);
		free(d->rows->ending);
		free(d->rows);
	}
	if (d->have_disk_prev)
		sys_diskstats_free(&d->disk_prev);
	free(d->node_enc.buf);
	free(d->node_last);
	free(d->piece);
	fcache_clear();
	free(fcache);
	fcache = NULL;
	fcache_cap = 0;
	dmn_samplers_free(d->samplers);
	dmn_samples_free(&d->samples);
	for (int i = 0; i < d->nsinks; i++)
		d->sinks[i]->free(d->sinks[i]);
	store_batch_free(d->batch);
	store_close(d->st);
	memset(d, 0, sizeof *d);
}
