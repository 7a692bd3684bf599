/* SPDX-License-Identifier: MIT */
/* Unseen block requests on their records (unseen.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	if (!ri->issue_ns || !ri->rdev || ri->op > 1)
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
