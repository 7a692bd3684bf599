/* SPDX-License-Identifier: MIT */
/* Unseen block requests on their records (unseen.h): those the session saw issued (or started, at
 * the default depth) and never saw complete, and what /proc/diskstats says a device did beyond
 * them. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kernel/unseen.h"

/* The block record (pid, dev, ino) of recs, appended when missing; NULL when out of memory. */
struct ks_rec *ks_rec_append(struct ks_rec **recs, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct ks_rec *r = realloc(*recs, c * sizeof *r);
		if (!r)
			return NULL;
		*recs = r;
		*cap = c;
	}
	struct ks_rec *r = &(*recs)[(*n)++];
	memset(r, 0, sizeof *r);
	return r;
}

static struct ks_rec *block_rec(struct ks_rec **recs, size_t *n, size_t *cap, uint32_t pid, uint64_t dev,
				uint64_t ino)
{
	for (size_t i = 0; i < *n; i++) {
		const struct ks_file_key *k = &(*recs)[i].key;
		if (k->layer == LOG_LAYER_BLOCK && !k->gen && k->pid == pid && k->dev == dev && k->ino == ino)
			return &(*recs)[i];
	}
	struct ks_rec *r = ks_rec_append(recs, n, cap);
	if (!r)
		return NULL;
	r->key.pid = pid;
	r->key.layer = LOG_LAYER_BLOCK;
	r->key.dev = dev;
	r->key.ino = ino;
	return r;
}

static void count(struct ks_rec *r, const struct ks_rq_info *ri)
{
	r->val.unseen[0]++;
	r->val.unseen[ri->op ? 2 : 1] += ri->bytes;
}

int ks_add_unseen(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_rq_info *ri)
{
	if (!(ri->issue_ns || (ri->flags & KS_RQ_STARTED)) || !ri->rdev || ri->op > 1)
		return 0;
	/* the file's first: appending it may move recs, so the device's is looked up after */
	if (ri->ino && ri->dev == ri->rdev) {
		struct ks_rec *f = block_rec(recs, n, cap, ri->pid, ri->dev, ri->ino);
		if (!f)
			return -ENOMEM;
		count(f, ri);
	}
	struct ks_rec *d = block_rec(recs, n, cap, 0, ri->rdev, 0);
	if (!d)
		return -ENOMEM;
	count(d, ri);
	return 0;
}

/* a - b, or 0 when the record counted more (completions between the session's attach and its first
 * reading of diskstats, or on a busy device between the last reading and the flush) */
static uint64_t over(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void done_sub(struct ks_dev_done *d, const struct ks_dev_done *p)
{
	d->reads = over(d->reads, p->reads);
	d->writes = over(d->writes, p->writes);
	d->discards = over(d->discards, p->discards);
	d->flushes = over(d->flushes, p->flushes);
	d->bytes_read = over(d->bytes_read, p->bytes_read);
	d->bytes_written = over(d->bytes_written, p->bytes_written);
	d->bytes_discarded = over(d->bytes_discarded, p->bytes_discarded);
}

void ks_dev_parents(const struct sys_diskstats *ds, uint64_t *parent)
{
	for (size_t i = 0; i < ds->n; i++) {
		char p[96];
		int part;
		snprintf(p, sizeof p, "/sys/dev/block/%u:%u/partition", ds->v[i].major, ds->v[i].minor);
		part = access(p, F_OK) == 0;
		snprintf(p, sizeof p, "/sys/dev/block/%u:%u/%smq", ds->v[i].major, ds->v[i].minor, part ? "../" : "");
		parent[i] = access(p, F_OK) == 0 ? 0 : KS_DEV_NO_RQ;
		if (!part || parent[i])
			continue;
		snprintf(p, sizeof p, "/sys/dev/block/%u:%u/../dev", ds->v[i].major, ds->v[i].minor);
		FILE *f = fopen(p, "r");
		unsigned ma, mi;
		if (f && fscanf(f, "%u:%u", &ma, &mi) == 2)
			parent[i] = makedev(ma, mi);
		else
			parent[i] = KS_DEV_NO_RQ; /* a partition whose disk cannot be told: not counted */
		if (f)
			fclose(f);
	}
}

size_t ks_dev_done_of(const struct sys_diskstats *a, const struct sys_diskstats *b, const uint64_t *parent,
		      struct ks_dev_done *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n && n < max; i++) {
		if (parent[i] == KS_DEV_NO_RQ)
			continue;
		const struct sys_diskstat *y = &b->v[i], *x = NULL;
		static const struct sys_diskstat zero;
		for (size_t k = 0; k < a->n && !x; k++)
			if (a->v[k].major == y->major && a->v[k].minor == y->minor)
				x = &a->v[k];
		if (!x)
			x = &zero;
		out[n++] = (struct ks_dev_done){
			.dev = makedev(y->major, y->minor), /* as stat() and ks_udev give it */
			.reads = over(y->reads, x->reads),
			.writes = over(y->writes, x->writes),
			.discards = over(y->discards, x->discards),
			.flushes = over(y->flushes, x->flushes),
			.bytes_read = over(y->sectors_read, x->sectors_read) * 512,
			.bytes_written = over(y->sectors_written, x->sectors_written) * 512,
			.bytes_discarded = over(y->sectors_discarded, x->sectors_discarded) * 512,
		};
	}
	/* a whole disk's line counts its partitions' requests too */
	for (size_t i = 0, j = 0; i < b->n && j < n; i++) {
		if (parent[i] == KS_DEV_NO_RQ)
			continue;
		for (size_t k = 0; parent[i] && k < n; k++)
			if (out[k].dev == parent[i])
				done_sub(&out[k], &out[j]);
		j++;
	}
	return n;
}

int64_t ks_add_unseen_done(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_dev_done *d, int add, int net,
			   uint64_t *bytes)
{
	struct ks_rec *r = NULL;
	for (size_t i = 0; i < *n && !r; i++) {
		const struct ks_file_key *k = &(*recs)[i].key;
		if (k->layer == LOG_LAYER_BLOCK && !k->gen && !k->pid && k->dev == d->dev && !k->ino)
			r = &(*recs)[i];
	}
	static const struct ks_rec none;
	const struct ks_file_val *v = r ? &r->val : &none.val;
	/* net: the unseen the record holds already (start-side entries) are part of what it counted */
	uint64_t u0 = net ? v->unseen[0] : 0, u1 = net ? v->unseen[1] : 0, u2 = net ? v->unseen[2] : 0;
	uint64_t seen = v->c[LOG_C_READS] + v->c[LOG_C_WRITES] + v->c[LOG_C_META_OTHER] + v->c[LOG_C_FSYNCS];
	uint64_t req = over(d->reads, v->c[LOG_C_READS]) + over(d->writes, v->c[LOG_C_WRITES]) +
		       over(d->discards, v->c[LOG_C_META_OTHER]) + over(d->flushes, v->c[LOG_C_FSYNCS]);
	if (net)
		req = over(d->reads + d->writes + d->discards + d->flushes, seen + u0);
	uint64_t rd = over(d->bytes_read, v->c[LOG_C_BYTES_READ] + u1);
	uint64_t wr = over(d->bytes_written, v->c[LOG_C_BYTES_WRITTEN] + u2);
	if (bytes)
		*bytes = 0;
	if (!req && !rd && !wr)
		return 0;
	if (!r) {
		if (!add)
			return 0;
		if (!(r = block_rec(recs, n, cap, 0, d->dev, 0)))
			return -ENOMEM;
	}
	r->val.unseen[0] += req;
	r->val.unseen[1] += rd;
	r->val.unseen[2] += wr;
	if (bytes)
		*bytes = rd + wr;
	return (int64_t)req;
}

int ks_file_unseen_on(const struct ks_rec *recs, size_t n, uint64_t dev)
{
	for (size_t i = 0; i < n; i++) {
		const struct ks_file_key *k = &recs[i].key;
		if (k->layer == LOG_LAYER_BLOCK && k->ino && k->dev == dev && recs[i].val.unseen[0])
			return 1;
	}
	return 0;
}

void ks_sampled_device(struct ks_rec *r, const struct ks_dev_done *d)
{
	struct ks_file_val *v = &r->val;
	__u64 *c = v->c;
	/* the samples: the requests begun in a window whose completion was seen with times */
	uint64_t samples = over(c[LOG_C_READS] + c[LOG_C_WRITES] + c[LOG_C_META_OTHER] + c[LOG_C_FSYNCS], v->untimed);
	uint64_t all = d->reads + d->writes + d->discards;
	static const int times[] = {LOG_C_TIME_QUEUE, LOG_C_TIME_DEVICE, LOG_C_TIME_READ, LOG_C_TIME_WRITE,
				    LOG_C_TIME_META};
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		c[times[i]] = samples ? (uint64_t)((unsigned __int128)c[times[i]] * all / samples) : 0;
	c[LOG_C_READS] = d->reads;
	c[LOG_C_WRITES] = d->writes;
	c[LOG_C_META_OTHER] = d->discards;
	c[LOG_C_FSYNCS] = d->flushes;
	c[LOG_C_BYTES_READ] = d->bytes_read;
	c[LOG_C_BYTES_WRITTEN] = d->bytes_written;
	c[LOG_C_ERR_READS] = c[LOG_C_ERR_WRITES] = c[LOG_C_ERR_SYNCS] = c[LOG_C_ERR_META] = 0;
	v->discard_bytes = d->bytes_discarded;
	memset(v->size_hist, 0, sizeof v->size_hist);
	memset(v->unseen, 0, sizeof v->unseen);
	v->untimed = over(d->reads + d->writes + d->discards + d->flushes, samples);
}
