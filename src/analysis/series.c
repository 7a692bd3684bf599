/* SPDX-License-Identifier: MIT */
/*
 * Time series of a traced job (series.h): bytes and calls per time bucket, per layer and per
 * process, from the timeline's events. Nothing here is a new figure: every event's bytes and calls
 * land in the buckets exactly once, so a layer's buckets add up to what its events hold.
 */
#include "analysis/series.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iostrata/format.h"

#define SERIES_MIN_BUCKET_NS 1000u /* a bucket narrower than 1 µs says nothing a trace can back */

static int is_data_event(const struct tl_event *e)
{
	/* page-cache events count pages, not calls of a size */
	return (e->op == LOG_OP_READ || e->op == LOG_OP_WRITE) && e->layer != LOG_LAYER_PAGECACHE &&
	       e->layer <= LOG_LAYER_MAX;
}

static int is_user_layer(unsigned l)
{
	return l == LOG_LAYER_POSIX || l == LOG_LAYER_STDIO || l == LOG_LAYER_MPIIO;
}

/* Add v over [s, e) to h: each bucket gets its share of the overlap, rounded so that the shares
 * add up to v (cumulative rounding). An instant event goes whole into the bucket of its start. */
static void spread(const struct tl_series *sr, uint64_t *h, uint64_t s, uint64_t e, uint64_t v)
{
	if (!v)
		return;
	uint64_t t0 = sr->t0_ns, w = sr->bucket_ns;
	size_t last = sr->nbuckets - 1;
	size_t bs = s > t0 ? (size_t)((s - t0) / w) : 0;
	if (bs > last)
		bs = last;
	if (e <= s) {
		h[bs] += v;
		return;
	}
	uint64_t dur = e - s, done = 0, given = 0;
	for (size_t b = bs; b <= last && given < v; b++) {
		uint64_t b1 = b == last ? UINT64_MAX : t0 + (uint64_t)(b + 1) * w;
		uint64_t to = e < b1 ? e : b1;
		done = to - s;
		uint64_t upto = (uint64_t)((unsigned __int128)v * done / dur);
		h[b] += upto - given;
		given = upto;
		if (to == e)
			break;
	}
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static struct tl_series_layer *layer_of(struct tl_series *s, unsigned l)
{
	for (size_t i = 0; i < s->nlayers; i++)
		if (s->layers[i].layer == l)
			return &s->layers[i];
	return NULL;
}

int tl_series_build(const struct timeline *tl, struct tl_series *out)
{
	struct tl_series s = {0};
	int32_t *pids = NULL;
	size_t npids = 0;
	unsigned have = 0; /* layers with data events, as bits */

	for (size_t i = 0; i < tl->nev; i++)
		if (is_data_event(&tl->ev[i]))
			have |= 1u << tl->ev[i].layer;
	if (!have) {
		*out = s;
		return 0;
	}
	s.t0_ns = tl->t0_ns;
	uint64_t span = tl->t1_ns > tl->t0_ns ? tl->t1_ns - tl->t0_ns : 0;
	s.bucket_ns = (span + TL_SERIES_BUCKETS - 1) / TL_SERIES_BUCKETS;
	if (s.bucket_ns < SERIES_MIN_BUCKET_NS)
		s.bucket_ns = SERIES_MIN_BUCKET_NS;
	s.nbuckets = span ? (size_t)((span + s.bucket_ns - 1) / s.bucket_ns) : 1;
	size_t nb = s.nbuckets;

	s.layers = calloc(LOG_LAYER_MAX + 1, sizeof *s.layers);
	if (!s.layers)
		goto err;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++) {
		if (!(have & (1u << l)))
			continue;
		struct tl_series_layer *L = &s.layers[s.nlayers++];
		L->layer = (uint8_t)l;
		uint64_t *all = calloc(4 * nb, sizeof *all);
		if (!all)
			goto err;
		L->bytes_read = all;
		L->bytes_written = all + nb;
		L->reads = all + 2 * nb;
		L->writes = all + 3 * nb;
	}
	for (unsigned l = 1; l <= LOG_LAYER_MAX; l++)
		if (is_user_layer(l) && (have & (1u << l))) {
			s.proc_layer = (uint8_t)l;
			break;
		}

	if (s.proc_layer) {
		pids = malloc((tl->nev ? tl->nev : 1) * sizeof *pids);
		if (!pids)
			goto err;
		for (size_t i = 0; i < tl->nev; i++)
			if (is_data_event(&tl->ev[i]) && tl->ev[i].layer == s.proc_layer)
				pids[npids++] = tl->ev[i].pid;
		qsort(pids, npids, sizeof *pids, cmp_i32);
		size_t u = 0;
		for (size_t i = 0; i < npids; i++)
			if (!u || pids[u - 1] != pids[i])
				pids[u++] = pids[i];
		npids = u;
		s.procs = calloc(npids ? npids : 1, sizeof *s.procs);
		if (!s.procs)
			goto err;
		for (size_t i = 0; i < npids; i++) {
			s.procs[i].pid = pids[i];
			s.procs[i].bytes = calloc(nb, sizeof(uint64_t));
			s.nprocs++;
			if (!s.procs[i].bytes)
				goto err;
		}
	}

	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (!is_data_event(e))
			continue;
		struct tl_series_layer *L = layer_of(&s, e->layer);
		int wr = e->op == LOG_OP_WRITE;
		/* a failed call moved nothing */
		uint64_t bytes = e->result < 0 && is_user_layer(e->layer) ? 0 : e->count * e->size;
		spread(&s, wr ? L->bytes_written : L->bytes_read, e->start_ns, e->end_ns, bytes);
		spread(&s, wr ? L->writes : L->reads, e->start_ns, e->end_ns, e->count);
		if (e->layer == s.proc_layer) {
			struct tl_series_proc *p = bsearch(&e->pid, s.procs, s.nprocs, sizeof *s.procs, cmp_i32);
			if (p)
				spread(&s, p->bytes, e->start_ns, e->end_ns, bytes);
		}
	}
	free(pids);
	*out = s;
	return 0;
err:
	free(pids);
	tl_series_free(&s);
	return -ENOMEM;
}

void tl_series_free(struct tl_series *s)
{
	for (size_t i = 0; i < s->nlayers; i++)
		free(s->layers[i].bytes_read);
	free(s->layers);
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].bytes);
	free(s->procs);
	memset(s, 0, sizeof *s);
}
