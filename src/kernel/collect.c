/* SPDX-License-Identifier: MIT */
/*
 * From the session's maps to a log in the common format: one record per `files` entry (layer,
 * pid, device, inode), its path from `paths` (resolved in the kernel), or a pseudo-path naming
 * the device and inode when the kernel never saw the file opened. The log is written by the one
 * final-log writer (src/log/writer.c), events appended from the caller's event file.
 */
#include "kernel/collect.h"
#include "kernel/pinned.h"
#include "kernel/unseen.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "log/writer.h"

struct strtab {
	char *buf;
	size_t used, cap;
};

static uint32_t str_add(struct strtab *t, const char *s)
{
	size_t n = strlen(s) + 1;
	if (t->used + n > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 65536;
		while (cap < t->used + n)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b)
			return 0;
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->used, s, n);
	uint32_t off = (uint32_t)t->used;
	t->used += n;
	return off;
}

void ks_device_name(uint64_t dev, char *out, size_t len)
{
	char p[128], line[256], name[64] = "";
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	FILE *f = fopen(p, "re");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "DEVNAME=%63s", name) == 1)
				break;
		fclose(f);
	}
	if (name[0])
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%u:%u", major(dev), minor(dev));
}

/* The `paths` map read once, for lookups by (dev, ino, gen) — or, for layers that know only
 * (dev, ino), the newest generation the syscall layer met. */
struct path_entry {
	struct ks_path_key key;
	struct ks_path_val val;
};

/* Sorted by (dev, ino): a record's name is a binary search, not a scan (a job may have
 * thousands of files, and the log is written once per job). */
struct path_index {
	struct path_entry *e;
	size_t n;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct ks_path_key *x = &((const struct path_entry *)a)->key, *y = &((const struct path_entry *)b)->key;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Names missing for want of memory leave their records with pseudo-paths, never a failed log. */
static void path_index_load(int fd, struct path_index *ix)
{
	size_t cap = 0;
	struct ks_path_key k, next;
	void *prev = NULL;
	memset(ix, 0, sizeof *ix);
	while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (ix->n == cap) {
			cap = cap ? cap * 2 : 256;
			struct path_entry *ne = realloc(ix->e, cap * sizeof *ne);
			if (!ne)
				break;
			ix->e = ne;
		}
		if (bpf_map_lookup_elem(fd, &next, &ix->e[ix->n].val) == 0) {
			ix->e[ix->n].val.path[KS_PATH_MAX - 1] = 0;
			ix->e[ix->n++].key = next;
		}
		k = next;
		prev = &k;
	}
	if (ix->n)
		qsort(ix->e, ix->n, sizeof *ix->e, cmp_entry);
}

/* The name of (dev, ino, gen); for gen 0 (a layer that knows only the inode) the generation the
 * record's own process met, else the newest one. */
static const struct ks_path_val *path_index_find(const struct path_index *ix, uint64_t dev, uint64_t ino, uint32_t gen,
						 uint32_t pid)
{
	struct path_entry want = {.key = {.dev = dev, .ino = ino}};
	size_t lo = 0, hi = ix->n;
	while (lo < hi) { /* the first entry >= (dev, ino) */
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_entry(&ix->e[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct ks_path_val *best = NULL;
	int best_own = 0;
	for (size_t i = lo; i < ix->n && !cmp_entry(&ix->e[i], &want); i++) {
		const struct ks_path_val *v = &ix->e[i].val;
		if (gen && ix->e[i].key.gen == gen)
			return v;
		if (gen)
			continue;
		int own = pid && v->pid == pid;
		if (!best || own > best_own || (own == best_own && v->when_ns > best->when_ns)) {
			best = v;
			best_own = own;
		}
	}
	return best;
}

static void path_index_free(struct path_index *ix)
{
	free(ix->e);
	memset(ix, 0, sizeof *ix);
}

int ks_lookup_path(const struct ks_session *ks, uint64_t dev, uint64_t ino, struct ks_path_val *out)
{
	return ks_lookup_path_fd(ks_map_fd(ks, "paths"), dev, ino, out);
}

int ks_lookup_path_fd(int fd, uint64_t dev, uint64_t ino, struct ks_path_val *out)
{
	struct path_index ix;
	path_index_load(fd, &ix);
	const struct ks_path_val *v = path_index_find(&ix, dev, ino, 0, 0);
	if (v)
		*out = *v;
	path_index_free(&ix);
	return v ? 0 : -1;
}

/* The path a kernel record is filed under, and whether it is a pseudo-path. */
static int record_path(const struct path_index *ix, const struct ks_file_key *k, char *out, size_t len)
{
	const struct ks_path_val *pv;
	if (k->ino == 0) {
		char dn[64];
		ks_device_name(k->dev, dn, sizeof dn);
		snprintf(out, len, "<device %s %u:%u>", dn, major(k->dev), minor(k->dev));
		return 1;
	}
	if ((pv = path_index_find(ix, k->dev, k->ino, k->gen, k->pid)) && pv->path[0] == '/' && !pv->truncated) {
		snprintf(out, len, "%s", pv->path);
		return 0;
	}
	if (pv && pv->path[0] && pv->path[0] != '/') { /* a pseudo file: "[io_uring]" ... */
		snprintf(out, len, "<%s>", pv->path);
		return 1;
	}
	snprintf(out, len, "<dev %u:%u ino %llu>", major(k->dev), minor(k->dev), (unsigned long long)k->ino);
	return 1;
}

static struct ks_rec *rec_find(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_file_key *k)
{
	for (size_t i = 0; i < *n; i++)
		if (!memcmp(&(*recs)[i].key, k, sizeof *k))
			return &(*recs)[i];
	struct ks_rec *r = ks_rec_append(recs, n, cap);
	if (r)
		r->key = *k;
	return r;
}

/* The runs of the CPUs the flush did not reach, added here as flush_run (syscall.bpf.c) adds them
 * in the kernel (the same ks_run_to_* of kernel.h). At the session's end the traced processes are gone and nothing runs on those
 * CPUs' slots but them, so the sums are exact. */
static int runs_merge(int runs_fd, const unsigned char *reached, int ncpu, struct ks_rec **recs, size_t *n,
		      size_t *cap)
{
	struct ks_run *per = calloc((size_t)ncpu, sizeof *per);
	if (!per)
		return -ENOMEM;
	_Static_assert(sizeof(struct ks_run) % 8 == 0, "per-CPU values are 8-byte aligned");
	for (__u32 slot = 0; slot < 2; slot++) {
		if (bpf_map_lookup_elem(runs_fd, &slot, per) < 0)
			continue;
		for (int cpu = 0; cpu < ncpu; cpu++) {
			const struct ks_run *s = &per[cpu];
			if (reached[cpu] || !s->file || !s->calls)
				continue;
			struct ks_file_key k = {.pid = s->tgid, .layer = LOG_LAYER_SYSCALL, .gen = s->gen, .dev = s->dev,
						.ino = s->ino};
			struct ks_rec *r = rec_find(recs, n, cap, &k);
			if (r)
				ks_run_to_record(&r->val, s);
			k.gen = 0; /* the page-cache and filesystem records know the inode only */
			k.layer = LOG_LAYER_PAGECACHE;
			if (r && (s->pages_in || s->pc_added_write || s->pc_dirtied) && (r = rec_find(recs, n, cap, &k)))
				ks_run_to_pagecache(&r->val, s);
			k.layer = LOG_LAYER_FS;
			if (r && s->fs_writes && (r = rec_find(recs, n, cap, &k)))
				ks_run_to_fs(&r->val, s);
			if (!r) {
				free(per);
				return -ENOMEM;
			}
		}
	}
	free(per);
	return 0;
}

/* The same for the block completions' runs (struct ks_blk_run): a file's run that holds its
 * device's figures (KS_BLK_RUN_DEV) to the device's record too. */
static int blk_runs_merge(int fd, const unsigned char *reached, int ncpu, struct ks_rec **recs, size_t *n,
			  size_t *cap)
{
	struct ks_blk_run *per = calloc((size_t)ncpu, sizeof *per);
	if (!per)
		return -ENOMEM;
	_Static_assert(sizeof(struct ks_blk_run) % 8 == 0, "per-CPU values are 8-byte aligned");
	for (__u32 slot = 0; slot < 2 * KS_BLK_SLOTS; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, per) < 0)
			continue;
		for (int cpu = 0; cpu < ncpu; cpu++) {
			if (reached[cpu] || !per[cpu].active)
				continue;
			struct ks_rec *r;
			if (per[cpu].active == KS_BLK_RUN_DEV) { /* a file's run holding its device's figures too */
				struct ks_file_key dk = {.layer = LOG_LAYER_BLOCK, .dev = per[cpu].key.dev};
				if (!(r = rec_find(recs, n, cap, &dk)))
					goto nomem;
				ks_val_fold(&r->val, &per[cpu].v, 0);
			}
			if (!(r = rec_find(recs, n, cap, &per[cpu].key)))
				goto nomem;
			ks_val_move(&r->val, &per[cpu].v);
		}
	}
	free(per);
	return 0;
nomem:
	free(per);
	return -ENOMEM;
}

/* The same for the page faults' runs (struct ks_fault_run): every CPU's, since a flush may have
 * left one it found busy. */
static int fault_runs_merge(int fd, int ncpu, struct ks_rec **recs, size_t *n, size_t *cap)
{
	struct ks_fault_run *per = calloc((size_t)ncpu, sizeof *per);
	if (!per)
		return -ENOMEM;
	_Static_assert(sizeof(struct ks_fault_run) % 8 == 0, "per-CPU values are 8-byte aligned");
	__u32 zero = 0;
	int r = 0;
	if (bpf_map_lookup_elem(fd, &zero, per) == 0) {
		for (int cpu = 0; cpu < ncpu && r == 0; cpu++) {
			if (!per[cpu].faults)
				continue;
			struct ks_file_key k = {.pid = per[cpu].pid, .layer = LOG_LAYER_PAGECACHE, .dev = per[cpu].dev,
						.ino = per[cpu].ino};
			struct ks_rec *rec = rec_find(recs, n, cap, &k);
			if (rec)
				rec->val.c[LOG_C_MMAP_FAULTS] += per[cpu].faults;
			else
				r = -ENOMEM;
		}
	}
	free(per);
	return r;
}

static int records_read(int fd, struct ks_rec **out, size_t *n, size_t *capp);

int ks_records(const struct ks_session *ks, struct ks_rec **out, size_t *n)
{
	int ncpu = libbpf_num_possible_cpus(), runs_fd = ks_map_fd(ks, "runs"), blk_fd = ks_map_fd(ks, "blk_runs"),
	    fault_fd = ks_map_fd(ks, "fault_runs");
	unsigned char *reached = ncpu > 0 ? calloc((size_t)ncpu, 1) : NULL;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	ks_runs_flush(reached);
	int files_fd = ks_map_fd(ks, "files");
	int r = files_fd < 0 ? -ENOENT : records_read(files_fd, out, n, &cap);
	if (r == 0)
		r = records_read(ks_map_fd(ks, "devfiles"), out, n, &cap);
	if (r == 0 && reached && runs_fd >= 0)
		r = runs_merge(runs_fd, reached, ncpu, out, n, &cap);
	if (r == 0 && reached && blk_fd >= 0)
		r = blk_runs_merge(blk_fd, reached, ncpu, out, n, &cap);
	if (r == 0 && ncpu > 0 && fault_fd >= 0)
		r = fault_runs_merge(fault_fd, ncpu, out, n, &cap);
	free(reached);
	for (size_t i = 0; r == 0 && i < *n; i++)
		ks_estimate_times((*out)[i].key.layer, &(*out)[i].val);
	return r;
}

/* c * num / den without overflowing: times in ns over hours times call counts in millions. */
static uint64_t scale(uint64_t c, uint64_t num, uint64_t den)
{
	return (uint64_t)((unsigned __int128)c * num / den);
}

void ks_estimate_times(uint16_t layer, struct ks_file_val *v)
{
	if (layer != LOG_LAYER_SYSCALL)
		return;
	__u64 *c = v->c;
	const uint64_t calls[3] = {
		c[LOG_C_READS], c[LOG_C_WRITES],
		c[LOG_C_OPENS] + c[LOG_C_CLOSES] + c[LOG_C_SEEKS] + c[LOG_C_FSYNCS] + c[LOG_C_MMAPS] + c[LOG_C_META_OTHER]};
	const int time[3] = {LOG_C_TIME_READ, LOG_C_TIME_WRITE, LOG_C_TIME_META};
	for (int i = 0; i < 3; i++)
		if (v->timed[i] && v->timed[i] < calls[i])
			c[time[i]] = scale(c[time[i]], calls[i], v->timed[i]);
}

int ks_records_fd(int files_fd, int devfiles_fd, struct ks_rec **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	ks_runs_flush(NULL);
	int r = files_fd < 0 ? -ENOENT : records_read(files_fd, out, n, &cap);
	if (r == 0)
		r = records_read(devfiles_fd, out, n, &cap);
	for (size_t i = 0; r == 0 && i < *n; i++)
		ks_estimate_times((*out)[i].key.layer, &(*out)[i].val);
	return r;
}

/* Every entry of a `files`-shaped map (`files`, `devfiles`) as stored (no estimate), appended to
 * *out (*n entries of *capp). A map not there (fd < 0: an older session's pins) adds nothing. */
static int records_read(int fd, struct ks_rec **out, size_t *n, size_t *capp)
{
	if (fd < 0)
		return 0;
	struct ks_file_key key, next;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (*n == *capp) {
			size_t cap = *capp ? *capp * 2 : 256;
			struct ks_rec *r = realloc(*out, cap * sizeof **out);
			if (!r)
				return -ENOMEM;
			*out = r;
			*capp = cap;
		}
		struct ks_rec *r = &(*out)[*n];
		r->key = next;
		if (bpf_map_lookup_elem(fd, &next, &r->val) == 0)
			(*n)++;
		key = next;
		prev = &key;
	}
	return 0;
}

/* Is path one of the prefixes (a directory prefix matches at a '/' boundary)? */
static int excluded(const char *path, const char *const *prefixes)
{
	for (; prefixes && *prefixes; prefixes++) {
		size_t n = strlen(*prefixes);
		if (n && !strncmp(path, *prefixes, n) && (path[n] == 0 || path[n] == '/' || (*prefixes)[n - 1] == '/'))
			return 1;
	}
	return 0;
}

/* Block requests issued and not seen completing by the end (still in flight, or completed where
 * the kernel did not run the completion program): unseen (unseen.c). */
static int add_unseen_inflight(int fd, int slots_fd, struct ks_rec **recs, size_t *n)
{
	uint64_t key, next;
	void *prev = NULL;
	size_t cap = *n;
	for (uint32_t i = 0; slots_fd >= 0 && i < (1u << KS_RQ_SLOT_BITS); i++) {
		struct ks_rq_slot s;
		if (bpf_map_lookup_elem(slots_fd, &i, &s) == 0 && s.rq && ks_add_unseen(recs, n, &cap, &s.ri) < 0)
			return -ENOMEM;
	}
	while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct ks_rq_info ri;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &next, &ri) == 0 && ks_add_unseen(recs, n, &cap, &ri) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* What each request-based device completed since the session attached (ks->ds0, and ds1 read
 * before the records): *nd entries, to free; NULL when out of memory. */
static struct ks_dev_done *devs_done(const struct ks_session *ks, const struct sys_diskstats *ds1, size_t *nd)
{
	uint64_t *parent = calloc(ds1->n ? ds1->n : 1, sizeof *parent);
	struct ks_dev_done *dd = calloc(ds1->n ? ds1->n : 1, sizeof *dd);
	if (!parent || !dd) {
		free(parent);
		free(dd);
		return NULL;
	}
	ks_dev_parents(ds1, parent);
	*nd = ks_dev_done_of(&ks->ds0, ds1, parent, dd, ds1->n);
	free(parent);
	return dd;
}

/* The completion alone (ks->block_one): what each device completed since the session attached
 * (ks->ds0, and ds1 read before the records) beyond its record's counts is unseen on it. The
 * default depth (ks->block_no_issue): beyond its seen + unseen; *no_file gets the bytes made
 * unseen so on a device where a file's request went unseen (they may be that file's, merged into
 * its request after its start). */
static int add_unseen_done(const struct ks_session *ks, struct sys_diskstats *ds1, struct ks_rec **recs, size_t *n,
			   uint64_t *no_file)
{
	int r = 0;
	size_t nd, cap = *n;
	struct ks_dev_done *dd = devs_done(ks, ds1, &nd);
	if (!dd)
		return -ENOMEM;
	/* a filtered session keeps the devices its processes used, which have records */
	int add = !ks->opt.filter.by_pid && !ks->opt.filter.cgroup_id;
	for (size_t i = 0; i < nd && r == 0; i++) {
		uint64_t b = 0;
		if (ks_add_unseen_done(recs, n, &cap, &dd[i], add, ks->block_no_issue, &b) < 0)
			r = -ENOMEM;
		else if (b && ks_file_unseen_on(*recs, *n, dd[i].dev))
			*no_file += b;
	}
	free(dd);
	return r;
}

/* The default depth's block layer in windows (ks->block_sampled): per-file block records are not
 * kept; each device covered gets its counts and bytes from /proc/diskstats over the session, its
 * latency from the windows' samples (ks_sampled_device). Covered: every request-based device that
 * did something (a system-wide session), or under a filter the devices holding a file of the
 * session's system-call or MPI-IO records (their work, and everyone else's there: the device's).
 * A record not kept gets layer 0, which the writer skips. */
static int sampled_devices(const struct ks_session *ks, struct sys_diskstats *ds1, struct ks_rec **recs, size_t *n)
{
	int r = 0;
	size_t nd, nkept = 0, cap = *n;
	struct ks_dev_done *dd = devs_done(ks, ds1, &nd);
	uint64_t *kept = dd ? calloc(nd ? nd : 1, sizeof *kept) : NULL; /* the covered devices */
	if (!kept) {
		r = -ENOMEM;
		goto out;
	}
	int filtered = ks->opt.filter.by_pid || ks->opt.filter.cgroup_id;
	for (size_t i = 0; i < nd; i++) {
		const struct ks_dev_done *d = &dd[i];
		int want = !filtered && (d->reads || d->writes || d->discards || d->flushes);
		struct ks_rec *dr = NULL;
		for (size_t k = 0; k < *n; k++) {
			const struct ks_file_key *fk = &(*recs)[k].key;
			if (fk->dev != d->dev)
				continue;
			if (fk->layer == LOG_LAYER_SYSCALL || fk->layer == LOG_LAYER_MPIIO)
				want = 1;
			else if (fk->layer == LOG_LAYER_BLOCK && !fk->ino && !fk->pid && !dr)
				dr = &(*recs)[k];
		}
		if (!want)
			continue;
		if (!dr) {
			if (!(dr = ks_rec_append(recs, n, &cap))) {
				r = -ENOMEM;
				goto out;
			}
			dr->key.layer = LOG_LAYER_BLOCK;
			dr->key.dev = d->dev;
		}
		ks_sampled_device(dr, d);
		kept[nkept++] = d->dev;
	}
	/* the block layer keeps the covered devices' records only: no file's, no other device's */
	for (size_t k = 0; k < *n; k++) {
		struct ks_file_key *fk = &(*recs)[k].key;
		if (fk->layer != LOG_LAYER_BLOCK)
			continue;
		int keep = 0;
		for (size_t i = 0; i < nkept && !fk->ino && !fk->pid && !keep; i++)
			keep = kept[i] == fk->dev;
		if (!keep)
			fk->layer = 0;
	}
out:
	free(kept);
	free(dd);
	return r;
}

/* Whether recs hold a file's block record on dev: a wanted request went to the device, whatever
 * `devs` says (the start skips its look-up when its slot's last entry names the device, which a
 * start claiming the slot on another CPU at that moment could tear; block.bpf.c, want). */
static int dev_has_file(const struct ks_rec *recs, size_t n, uint64_t dev)
{
	for (size_t i = 0; i < n; i++)
		if (recs[i].key.layer == LOG_LAYER_BLOCK && recs[i].key.ino && recs[i].key.dev == dev)
			return 1;
	return 0;
}

int ks_write_log(const struct ks_session *ks, const char *dst, const struct ks_log_meta *m, int events_fd,
		 uint64_t nevents, uint64_t user_drops, char *err, size_t errlen)
{
	struct ks_rec *recs = NULL;
	size_t n = 0;
	/* read before the records: a completion after it is in the records and not in the delta,
	 * which can hide a loss on a busy device but never invent one */
	struct sys_diskstats ds1 = {0};
	int done = (ks->block_one || ks->block_no_issue || ks->block_sampled) && ks->ds0_ok &&
		   sys_diskstats_load(NULL, &ds1) == 0;
	int r = ks_records(ks, &recs, &n);
	uint64_t no_file = 0;
	if (r == 0 && !ks->block_sampled)
		r = add_unseen_inflight(ks_map_fd(ks, "rq_inflight"), ks_map_fd(ks, "rq_slots"), &recs, &n);
	if (r == 0 && done && ks->block_sampled)
		r = sampled_devices(ks, &ds1, &recs, &n);
	else if (r == 0 && done)
		r = add_unseen_done(ks, &ds1, &recs, &n, &no_file);
	sys_diskstats_free(&ds1);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read the kernel maps: %s", dst, strerror(-r));
		return r;
	}
	struct strtab st = {0};
	str_add(&st, ""); /* offset 0 is "" */
	size_t size = LOG_HEADER_SIZE + (n ? n : 1) * sizeof(struct log_record);
	char *buf = calloc(1, size);
	if (!buf) {
		free(recs);
		free(st.buf);
		snprintf(err, errlen, "%s: out of memory", dst);
		return -ENOMEM;
	}
	struct log_header *h = (struct log_header *)buf;
	struct log_record *out = (struct log_record *)(buf + LOG_HEADER_SIZE);
	struct path_index ix;
	path_index_load(ks_map_fd(ks, "paths"), &ix);
	uint32_t nrec = 0;
	int devs_fd = ks_map_fd(ks, "devs");
	int filtered = ks->opt.filter.by_pid || ks->opt.filter.cgroup_id;
	for (size_t i = 0; i < n; i++) {
		const struct ks_rec *kr = &recs[i];
		if (kr->key.layer < 1 || kr->key.layer > LOG_LAYER_MAX)
			continue;
		uint8_t used;
		/* a filtered session's device totals: of the devices its processes used (block.bpf.c) */
		if (filtered && !ks->block_sampled && kr->key.layer == LOG_LAYER_BLOCK && !kr->key.ino &&
		    (devs_fd < 0 || bpf_map_lookup_elem(devs_fd, &kr->key.dev, &used) < 0) &&
		    !dev_has_file(recs, n, kr->key.dev))
			continue;
		char path[KS_PATH_MAX + 64];
		int pseudo = record_path(&ix, &kr->key, path, sizeof path);
		if (!pseudo && excluded(path, m->exclude))
			continue;
		struct log_record *o = &out[nrec++];
		o->path = str_add(&st, path);
		o->id = log_record_id(kr->key.layer, path);
		o->layer = kr->key.layer;
		o->flags = LOG_R_USED | (pseudo ? LOG_R_PSEUDO : 0);
		o->pid = (int32_t)kr->key.pid;
		o->rank = -1;
		o->dev = kr->key.dev;
		o->ino = kr->key.ino;
		memcpy(o->counters, kr->val.c, sizeof o->counters);
		memcpy(o->read_hist, kr->val.size_hist[0], sizeof o->read_hist);
		memcpy(o->write_hist, kr->val.size_hist[1], sizeof o->write_hist);
		memcpy(o->read_lat_hist, kr->val.lat_hist[0], sizeof o->read_lat_hist);
		memcpy(o->write_lat_hist, kr->val.lat_hist[1], sizeof o->write_lat_hist);
		o->unseen_requests = kr->val.unseen[0];
		o->unseen_bytes_read = kr->val.unseen[1];
		o->unseen_bytes_written = kr->val.unseen[2];
		o->discard_bytes = kr->val.discard_bytes;
		o->untimed_requests = kr->val.untimed;
	}
	free(recs);
	path_index_free(&ix);

	memcpy(h->magic, LOG_MAGIC, 8);
	h->version = LOG_VERSION;
	h->header_size = LOG_HEADER_SIZE;
	h->endian = LOG_ENDIAN_MARK;
	h->flags = LOG_F_FINISHED;
	h->record_size = sizeof(struct log_record);
	h->ncounters = LOG_NCOUNTERS;
	h->max_records = h->nrecords = nrec;
	h->pid = m->pid;
	h->ppid = getpid();
	h->uid = getuid();
	h->gid = getgid();
	h->rank = -1;
	h->nprocs = -1;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	h->host = str_add(&st, host);
	h->exe = str_add(&st, m->exe ? m->exe : "");
	if (m->argc > 0) {
		h->argv = str_add(&st, m->argv[0]);
		for (int i = 1; i < m->argc; i++)
			str_add(&st, m->argv[i]);
		h->argc = (uint32_t)m->argc;
	}
	h->job = str_add(&st, m->job ? m->job : "");
	char cwd[4096] = "";
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = 0;
	h->cwd = str_add(&st, cwd);
	h->outdir = str_add(&st, m->outdir ? m->outdir : "");
	h->start_ns = m->start_ns;
	h->end_ns = m->end_ns;
	h->start_wall_ns = m->start_wall_ns;
	h->exit_status = m->exit_status;
	h->term_signal = m->term_signal;
	h->clock_kind = LOG_CLOCK_NS;
	uint64_t ks_stats[KS_NSTATS];
	ks_read_stats(ks, ks_stats);
	h->events_dropped = ks_stats[KS_STAT_EVENT_DROPS] + user_drops;
	h->kernel_table_full = ks_stats[KS_STAT_FILES_FULL] + ks_stats[KS_STAT_PATHS_FULL] +
			       ks_stats[KS_STAT_AGG_FULL] + ks_stats[KS_STAT_PIDS_FULL];
	h->kernel_layers = ks->layers;
	h->kernel_lat_every = ks->opt.filter.lat_every > 1 ? ks->opt.filter.lat_every : 0;
	h->kernel_flags = (ks->block_one ? LOG_KF_BLOCK_NO_PROC : 0) |
			  (ks->block_no_issue && no_file ? LOG_KF_BLOCK_UNSEEN_NO_FILE : 0) |
			  (ks->block_sampled ? LOG_KF_BLOCK_SAMPLED : 0);
	h->kernel_prog_misses = ks_prog_misses(ks);
	h->kernel_closes_unnamed = ks_stats[KS_STAT_CLOSE_UNNAMED];
	h->kernel_fds_unfollowed = ks_stats[KS_STAT_FD_UNFOLLOWED];
	if (h->kernel_table_full)
		h->flags |= LOG_F_OVERFLOW;
	if (!st.buf) {
		free(buf);
		snprintf(err, errlen, "%s: out of memory", dst);
		return -ENOMEM;
	}
	/* the writer takes a live-style layout: records then strings in one buffer */
	size_t rec_bytes = (size_t)nrec * sizeof(struct log_record);
	char *all = realloc(buf, LOG_HEADER_SIZE + rec_bytes + st.used);
	if (!all) {
		free(buf);
		free(st.buf);
		snprintf(err, errlen, "%s: out of memory", dst);
		return -ENOMEM;
	}
	buf = all;
	h = (struct log_header *)buf;
	memcpy(buf + LOG_HEADER_SIZE + rec_bytes, st.buf, st.used);
	h->string_used = (uint32_t)st.used;
	h->nsections = 2;
	h->sections[0] = (struct log_section){LOG_SEC_RECORDS, 0, LOG_HEADER_SIZE, rec_bytes, nrec};
	h->sections[1] = (struct log_section){LOG_SEC_STRINGS, 0, LOG_HEADER_SIZE + rec_bytes, st.used, st.used};
	free(st.buf);
	r = log_write_final_events(buf, LOG_HEADER_SIZE + rec_bytes + h->string_used, NULL, dst, 0, events_fd,
				   nevents, err, errlen);
	free(buf);
	return r;
}
