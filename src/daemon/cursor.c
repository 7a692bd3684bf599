/* SPDX-License-Identifier: MIT */
/*
 * Cursors (cursor.h): a sorted array per log, and its varint form for the store.
 */
#include "daemon/cursor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "sys/sorted.h"
#include "sys/text.h"
#include "sys/varint.h"

void dmn_rec_from_log(struct dmn_rec *out, const struct log_record *r)
{
	const uint64_t *c = r->counters;
	memset(out, 0, sizeof *out);
	out->id = r->id;
	out->pid = r->pid;
	out->layer = r->layer;
	out->v[DMN_V(STORE_CAT_READ, DMN_V_BYTES)] = c[LOG_C_BYTES_READ];
	out->v[DMN_V(STORE_CAT_READ, DMN_V_CALLS)] = c[LOG_C_READS];
	out->v[DMN_V(STORE_CAT_READ, DMN_V_TIME)] = c[LOG_C_TIME_READ];
	out->v[DMN_V(STORE_CAT_WRITE, DMN_V_BYTES)] = c[LOG_C_BYTES_WRITTEN];
	out->v[DMN_V(STORE_CAT_WRITE, DMN_V_CALLS)] = c[LOG_C_WRITES];
	out->v[DMN_V(STORE_CAT_WRITE, DMN_V_TIME)] = c[LOG_C_TIME_WRITE];
	out->v[DMN_V(STORE_CAT_META, DMN_V_CALLS)] = ana_meta_ops(c);
	out->v[DMN_V(STORE_CAT_META, DMN_V_TIME)] = c[LOG_C_TIME_META];
}

/* One direction's buckets added to sum; stray (when not NULL: a user layer's direction without
 * calls) gets them too when one is not 0. */
static void hist_add_dir(uint64_t *sum, uint64_t *stray, const uint64_t *bk)
{
	uint64_t any = 0;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		sum[b] += bk[b];
		any |= bk[b];
	}
	if (stray && any)
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			stray[b] += bk[b];
}

void dmn_hist_add_log(struct dmn_hist *h, struct dmn_ahead *a, struct dmn_hist *stray, const struct log_record *r)
{
	const uint64_t *c = r->counters;
	int user = r->layer == LOG_LAYER_POSIX || r->layer == LOG_LAYER_STDIO;
	dmn_ahead_add_counts(a, r);
	if (user && (!c[LOG_C_READS] || !c[LOG_C_WRITES]) && !stray->layer) {
		memset(stray, 0, sizeof *stray);
		stray->layer = r->layer;
	}
	hist_add_dir(h->rh, user && !c[LOG_C_READS] ? stray->rh : NULL, r->read_hist);
	hist_add_dir(h->wh, user && !c[LOG_C_WRITES] ? stray->wh : NULL, r->write_hist);
}

void dmn_ahead_hist_of(struct dmn_ahead *a, const struct dmn_hist *h, const struct dmn_hist *stray)
{
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		a->rh[b] = h->rh[b] - (stray->layer ? stray->rh[b] : 0);
		a->wh[b] = h->wh[b] - (stray->layer ? stray->wh[b] : 0);
	}
}

static size_t hist_pos(const struct dmn_cursor *c, unsigned layer)
{
	size_t i = 0;
	while (i < c->nh && c->h[i].layer < layer)
		i++;
	return i;
}

const struct dmn_hist *dmn_cursor_hist(const struct dmn_cursor *c, unsigned layer)
{
	size_t i = hist_pos(c, layer);
	return i < c->nh && c->h[i].layer == layer ? &c->h[i] : NULL;
}

int dmn_cursor_set_hist(struct dmn_cursor *c, const struct dmn_hist *h)
{
	size_t i = hist_pos(c, h->layer);
	if (i < c->nh && c->h[i].layer == h->layer) {
		c->h[i] = *h;
		return 0;
	}
	struct dmn_hist *nv = sys_text_grow(c->h, &c->caph, c->nh, sizeof *nv, 1);
	if (!nv)
		return -ENOMEM;
	c->h = nv;
	memmove(&c->h[i + 1], &c->h[i], (c->nh - i) * sizeof *c->h);
	c->h[i] = *h;
	c->nh++;
	return 0;
}

static int cmp_key(uint64_t id, int32_t pid, const struct dmn_rec *r)
{
	return dmn_key_cmp(id, pid, r->id, r->pid);
}

static int rec_before(const void *elem, const void *key)
{
	const struct dmn_rec *k = key;
	return cmp_key(k->id, k->pid, elem) > 0;
}

static size_t lower_bound(const struct dmn_cursor *c, uint64_t id, int32_t pid)
{
	struct dmn_rec k = {.id = id, .pid = pid};
	return sys_lower_bound(c->r, c->n, sizeof *c->r, &k, rec_before);
}

const struct dmn_rec *dmn_cursor_find(const struct dmn_cursor *c, uint64_t id, int32_t pid)
{
	size_t i = lower_bound(c, id, pid);
	return i < c->n && !cmp_key(id, pid, &c->r[i]) ? &c->r[i] : NULL;
}

int dmn_cursor_set(struct dmn_cursor *c, const struct dmn_rec *r)
{
	size_t i = lower_bound(c, r->id, r->pid);
	if (i < c->n && !cmp_key(r->id, r->pid, &c->r[i])) {
		c->r[i] = *r;
		return 0;
	}
	struct dmn_rec *nv = sys_text_grow(c->r, &c->cap, c->n, sizeof *nv, 16);
	if (!nv)
		return -ENOMEM;
	c->r = nv;
	memmove(&c->r[i + 1], &c->r[i], (c->n - i) * sizeof *c->r);
	c->r[i] = *r;
	c->n++;
	return 0;
}

static int taken_before(const void *elem, const void *key)
{
	return ((const struct dmn_taken *)elem)->tid < *(const int32_t *)key;
}

static size_t taken_pos(const struct dmn_cursor *c, int32_t tid)
{
	return sys_lower_bound(c->t, c->nt, sizeof *c->t, &tid, taken_before);
}

uint64_t dmn_cursor_taken(const struct dmn_cursor *c, int32_t tid)
{
	size_t i = taken_pos(c, tid);
	return i < c->nt && c->t[i].tid == tid ? c->t[i].n : 0;
}

int dmn_cursor_set_taken(struct dmn_cursor *c, int32_t tid, uint64_t n)
{
	size_t i = taken_pos(c, tid);
	if (i < c->nt && c->t[i].tid == tid) {
		c->t[i].n = n;
		return 0;
	}
	struct dmn_taken *nv = sys_text_grow(c->t, &c->capt, c->nt, sizeof *nv, 4);
	if (!nv)
		return -ENOMEM;
	c->t = nv;
	memmove(&c->t[i + 1], &c->t[i], (c->nt - i) * sizeof *c->t);
	c->t[i] = (struct dmn_taken){tid, n};
	c->nt++;
	return 0;
}

int dmn_cursor_copy(struct dmn_cursor *dst, const struct dmn_cursor *src)
{
	memset(dst, 0, sizeof *dst);
	if (src->n && !(dst->r = malloc(src->n * sizeof *dst->r)))
		return -ENOMEM;
	if ((src->nt && !(dst->t = malloc(src->nt * sizeof *dst->t))) ||
	    (src->nh && !(dst->h = malloc(src->nh * sizeof *dst->h)))) {
		dmn_cursor_free(dst);
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof *dst->r);
	if (src->nt)
		memcpy(dst->t, src->t, src->nt * sizeof *dst->t);
	if (src->nh)
		memcpy(dst->h, src->h, src->nh * sizeof *dst->h);
	dst->n = dst->cap = src->n;
	dst->nt = dst->capt = src->nt;
	dst->nh = dst->caph = src->nh;
	return 0;
}

void dmn_cursor_free(struct dmn_cursor *c)
{
	free(c->r);
	free(c->t);
	free(c->h);
	memset(c, 0, sizeof *c);
}

int dmn_cursor_zero(const struct dmn_cursor *c)
{
	for (size_t i = 0; i < c->n; i++)
		for (unsigned k = 0; k < DMN_NV; k++)
			if (c->r[i].v[k])
				return 0;
	return 1;
}

/* ---- histograms' stored form: a count of non-zero buckets, then (bucket, value) pairs,
 * buckets ascending; varints ---- */

/* (one pass: the count, at most 32, is a varint of one byte, written once the pairs are) */
_Static_assert(LOG_HIST_BUCKETS < 128, "a histogram's count of buckets is one varint byte");
static void put_hist(unsigned char **p, const uint64_t h[LOG_HIST_BUCKETS])
{
	unsigned char *count = *p, *q = *p + 1;
	unsigned nz = 0;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		if (h[b]) {
			*q++ = (unsigned char)b;
			q += sys_varint_put(q, h[b]);
			nz++;
		}
	*count = (unsigned char)nz;
	*p = q;
}

static int get_hist(const unsigned char **p, const unsigned char *end, uint64_t h[LOG_HIST_BUCKETS])
{
	uint64_t nz, b, v, last = 0;
	if (sys_varint_get(p, end, &nz) < 0 || nz > LOG_HIST_BUCKETS)
		return -1;
	for (uint64_t i = 0; i < nz; i++) {
		if (sys_varint_get(p, end, &b) < 0 || b >= LOG_HIST_BUCKETS || (i && b <= last) ||
		    sys_varint_get(p, end, &v) < 0)
			return -1;
		h[b] = v;
		last = b;
	}
	return 0;
}

/* ---- stored form: "DC3", a varint count, then per record id (8 bytes), pid (zig-zag), layer and
 * the values, each a varint; a varint count of layers and per layer its number and its two
 * histograms (sparse). "DC4" when threads' runs were taken: the same, then a varint count and
 * per thread its tid (zig-zag) and runs taken. Read too: "DC1"/"DC2", the form before, where each
 * record carried its two histograms (32 varints each) and there was no per-layer part. ---- */

#define REC_VALUES (2 + DMN_NV) /* varints per record, 1 byte or more each */
#define REC_VALUES_DC1 (REC_VALUES + 2 * LOG_HIST_BUCKETS)

void *dmn_cursor_encode(const struct dmn_cursor *c, size_t *len)
{
	size_t cap = 3 + 10 + c->n * (8 + 10 * REC_VALUES) + 10 + c->nh * 10 * (1 + 2 * (1 + 2 * LOG_HIST_BUCKETS)) +
		     10 + c->nt * 20;
	unsigned char *buf = malloc(cap), *p = buf;
	if (!buf)
		return NULL;
	memcpy(p, c->nt ? "DC4" : "DC3", 3);
	p += 3;
	p += sys_varint_put(p, c->n);
	for (size_t i = 0; i < c->n; i++) {
		const struct dmn_rec *r = &c->r[i];
		memcpy(p, &r->id, 8);
		p += 8;
		p += sys_varint_put(p, sys_zigzag(r->pid));
		p += sys_varint_put(p, r->layer);
		for (unsigned k = 0; k < DMN_NV; k++)
			p += sys_varint_put(p, r->v[k]);
	}
	p += sys_varint_put(p, c->nh);
	for (size_t i = 0; i < c->nh; i++) {
		p += sys_varint_put(p, c->h[i].layer);
		put_hist(&p, c->h[i].rh);
		put_hist(&p, c->h[i].wh);
	}
	if (c->nt) {
		p += sys_varint_put(p, c->nt);
		for (size_t i = 0; i < c->nt; i++) {
			p += sys_varint_put(p, sys_zigzag(c->t[i].tid));
			p += sys_varint_put(p, c->t[i].n);
		}
	}
	*len = (size_t)(p - buf);
	return buf;
}

/* A layer's histograms in c, to be added to: NULL when out of memory. */
static struct dmn_hist *hist_get(struct dmn_cursor *c, unsigned layer)
{
	const struct dmn_hist *h = dmn_cursor_hist(c, layer);
	if (!h) {
		struct dmn_hist z;
		memset(&z, 0, sizeof z);
		z.layer = (uint16_t)layer;
		if (dmn_cursor_set_hist(c, &z) < 0)
			return NULL;
		h = dmn_cursor_hist(c, layer);
	}
	return (struct dmn_hist *)h;
}

int dmn_cursor_decode(struct dmn_cursor *c, const void *buf, size_t len)
{
	const unsigned char *p = buf, *end = p + len;
	uint64_t n, x;
	memset(c, 0, sizeof *c);
	if (len == 0)
		return 0;
	if (len < 3 || memcmp(p, "DC", 2) || p[2] < '1' || p[2] > '4')
		return -EBADMSG;
	int old = p[2] <= '2', runs = p[2] == '2' || p[2] == '4';
	size_t least = 8 + (old ? REC_VALUES_DC1 : REC_VALUES);
	p += 3;
	/* each record takes at least `least` bytes: a count beyond that is a lie */
	if (sys_varint_get(&p, end, &n) < 0 || n > (uint64_t)(end - p) / least)
		return -EBADMSG;
	for (uint64_t i = 0; i < n; i++) {
		struct dmn_rec r;
		memset(&r, 0, sizeof r);
		if (end - p < 8)
			goto bad;
		memcpy(&r.id, p, 8);
		p += 8;
		if (sys_varint_get(&p, end, &x) < 0)
			goto bad;
		r.pid = (int32_t)sys_unzigzag(x);
		if (sys_varint_get(&p, end, &x) < 0 || x > LOG_LAYER_MAX)
			goto bad;
		r.layer = (uint16_t)x;
		for (unsigned k = 0; k < DMN_NV; k++)
			if (sys_varint_get(&p, end, &r.v[k]) < 0)
				goto bad;
		if (old) { /* the record's histograms, into its layer's sums */
			struct dmn_hist *h = hist_get(c, r.layer);
			if (!h)
				goto nomem;
			for (unsigned b = 0; b < 2 * LOG_HIST_BUCKETS; b++) {
				if (sys_varint_get(&p, end, &x) < 0)
					goto bad;
				if (b < LOG_HIST_BUCKETS)
					h->rh[b] += x;
				else
					h->wh[b - LOG_HIST_BUCKETS] += x;
			}
		}
		size_t k = lower_bound(c, r.id, r.pid);
		if (k < c->n && !cmp_key(r.id, r.pid, &c->r[k])) /* a record twice */
			goto bad;
		if (dmn_cursor_set(c, &r) < 0)
			goto nomem;
	}
	if (!old) {
		/* each layer takes three bytes at least */
		if (sys_varint_get(&p, end, &n) < 0 || n > LOG_LAYER_MAX + 1 || n > (uint64_t)(end - p) / 3)
			goto bad;
		for (uint64_t i = 0; i < n; i++) {
			struct dmn_hist h;
			memset(&h, 0, sizeof h);
			if (sys_varint_get(&p, end, &x) < 0 || x > LOG_LAYER_MAX || dmn_cursor_hist(c, (unsigned)x))
				goto bad;
			h.layer = (uint16_t)x;
			if (get_hist(&p, end, h.rh) < 0 || get_hist(&p, end, h.wh) < 0)
				goto bad;
			if (dmn_cursor_set_hist(c, &h) < 0)
				goto nomem;
		}
	}
	if (runs) {
		/* each thread takes two bytes at least */
		if (sys_varint_get(&p, end, &n) < 0 || n == 0 || n > (uint64_t)(end - p) / 2)
			goto bad;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t runs;
			if (sys_varint_get(&p, end, &x) < 0 || sys_varint_get(&p, end, &runs) < 0)
				goto bad;
			int64_t tid = sys_unzigzag(x);
			if (tid < INT32_MIN || tid > INT32_MAX)
				goto bad;
			size_t k = taken_pos(c, (int32_t)tid);
			if (k < c->nt && c->t[k].tid == (int32_t)tid) /* a thread twice */
				goto bad;
			if (dmn_cursor_set_taken(c, (int32_t)tid, runs) < 0)
				goto nomem;
		}
	}
	if (p != end)
		goto bad;
	return 0;
bad:
	dmn_cursor_free(c);
	return -EBADMSG;
nomem:
	dmn_cursor_free(c);
	return -ENOMEM;
}

/* ---- the node's cursor (cursor.h) ---- */

struct dmn_ahead *dmn_ahead_find(const struct dmn_aheads *x, unsigned layer)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->a[i].layer == layer)
			return &x->a[i];
	return NULL;
}

/* The layer's ahead, made (zero) when missing: NULL when out of memory. */
static struct dmn_ahead *ahead_get(struct dmn_aheads *x, unsigned layer)
{
	struct dmn_ahead *a = dmn_ahead_find(x, layer);
	if (a)
		return a;
	struct dmn_ahead *nv = sys_text_grow(x->a, &x->cap, x->n, sizeof *nv, 2);
	if (!nv)
		return NULL;
	x->a = nv;
	size_t i = x->n;
	while (i && x->a[i - 1].layer > layer)
		i--;
	memmove(&x->a[i + 1], &x->a[i], (x->n - i) * sizeof *x->a);
	memset(&x->a[i], 0, sizeof x->a[i]);
	x->a[i].layer = (uint16_t)layer;
	x->n++;
	return &x->a[i];
}

int dmn_ahead_add(struct dmn_aheads *x, const struct dmn_rec *cur, const struct dmn_rec *prev)
{
	struct dmn_ahead *a = ahead_get(x, cur->layer);
	if (!a)
		return -ENOMEM;
	static const struct dmn_rec zero;
	const struct dmn_rec *p = prev ? prev : &zero;
#define D(cat, what) (cur->v[DMN_V(cat, what)] - p->v[DMN_V(cat, what)])
	a->v[DMN_A_BYTES_READ] += D(STORE_CAT_READ, DMN_V_BYTES);
	a->v[DMN_A_BYTES_WRITTEN] += D(STORE_CAT_WRITE, DMN_V_BYTES);
	a->v[DMN_A_READS] += D(STORE_CAT_READ, DMN_V_CALLS);
	a->v[DMN_A_WRITES] += D(STORE_CAT_WRITE, DMN_V_CALLS);
	a->v[DMN_A_META] += D(STORE_CAT_META, DMN_V_CALLS);
#undef D
	return 0;
}

int dmn_ahead_add_hist(struct dmn_aheads *x, const struct dmn_hist *now, const struct dmn_hist *prev)
{
	struct dmn_ahead *a = ahead_get(x, now->layer);
	if (!a)
		return -ENOMEM;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		a->rh[b] += now->rh[b] - (prev ? prev->rh[b] : 0);
		a->wh[b] += now->wh[b] - (prev ? prev->wh[b] : 0);
	}
	return 0;
}

void dmn_ahead_add_counts(struct dmn_ahead *a, const struct log_record *r)
{
	const uint64_t *c = r->counters;
	a->v[DMN_A_BYTES_READ] += c[LOG_C_BYTES_READ];
	a->v[DMN_A_BYTES_WRITTEN] += c[LOG_C_BYTES_WRITTEN];
	a->v[DMN_A_READS] += c[LOG_C_READS];
	a->v[DMN_A_WRITES] += c[LOG_C_WRITES];
	a->v[DMN_A_META] += ana_meta_ops(c);
}

void dmn_ahead_add_log(struct dmn_ahead *a, const struct log_record *r)
{
	const uint64_t *c = r->counters;
	dmn_ahead_add_counts(a, r);
	/* The user-call layers count a request's size with the call (log_note_access): a direction
	 * with no call has an empty histogram, whose 4 cache lines are then not read (the
	 * per-second sums are memory-bound: a file only written costs 8 lines a record, not 12).
	 * Other layers' histograms are filled apart from their counts (the kernel collector's). */
	int user = r->layer == LOG_LAYER_POSIX || r->layer == LOG_LAYER_STDIO;
	if (!user || c[LOG_C_READS])
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			a->rh[b] += r->read_hist[b];
	if (!user || c[LOG_C_WRITES])
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			a->wh[b] += r->write_hist[b];
}

int dmn_cursor_sums(const struct dmn_cursor *c, struct dmn_aheads *out)
{
	out->n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (dmn_ahead_add(out, &c->r[i], NULL) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < c->nh; i++)
		if (dmn_ahead_add_hist(out, &c->h[i], NULL) < 0)
			return -ENOMEM;
	return 0;
}

/* what now holds beyond *last (0 when nothing), *last moved up to it */
static uint64_t advance(uint64_t now, uint64_t *last, uint64_t *grow)
{
	uint64_t g = now > *last ? now - *last : 0;
	*grow = g;
	if (now > *last)
		*last = now;
	return g;
}

/* The figures of an ahead, v, rh and wh: one run of words (a layer that did not move is found
 * so by one comparison, not figure by figure) */
#define AHEAD_FIGS(a) ((const unsigned char *)(a)->v)
#define AHEAD_FIGS_LEN (sizeof(struct dmn_ahead) - offsetof(struct dmn_ahead, v))
_Static_assert(offsetof(struct dmn_ahead, rh) == offsetof(struct dmn_ahead, v) + sizeof(uint64_t) * DMN_NA &&
		       offsetof(struct dmn_ahead, wh) == offsetof(struct dmn_ahead, rh) + sizeof(uint64_t) * LOG_HIST_BUCKETS &&
		       sizeof(struct dmn_ahead) == offsetof(struct dmn_ahead, wh) + sizeof(uint64_t) * LOG_HIST_BUCKETS,
	       "an ahead's figures are one run of words");

int dmn_ahead_grow(struct dmn_aheads *last, const struct dmn_ahead *now, struct dmn_ahead *grow)
{
	struct dmn_ahead *l = ahead_get(last, now->layer);
	if (!l)
		return -ENOMEM;
	grow->layer = now->layer;
	if (!memcmp(AHEAD_FIGS(now), AHEAD_FIGS(l), AHEAD_FIGS_LEN)) {
		memset(grow->v, 0, AHEAD_FIGS_LEN);
		return 0;
	}
	uint64_t any = 0;
	for (unsigned k = 0; k < DMN_NA; k++)
		any |= advance(now->v[k], &l->v[k], &grow->v[k]);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		any |= advance(now->rh[b], &l->rh[b], &grow->rh[b]);
		any |= advance(now->wh[b], &l->wh[b], &grow->wh[b]);
	}
	return any != 0;
}

int dmn_aheads_add(struct dmn_aheads *x, const struct dmn_ahead *a)
{
	struct dmn_ahead *t = ahead_get(x, a->layer);
	if (!t)
		return -ENOMEM;
	for (unsigned k = 0; k < DMN_NA; k++)
		t->v[k] += a->v[k];
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		t->rh[b] += a->rh[b];
		t->wh[b] += a->wh[b];
	}
	return 0;
}

static void pay(uint64_t *x, uint64_t *owed)
{
	uint64_t use = *x < *owed ? *x : *owed;
	*x -= use;
	*owed -= use;
}

void dmn_ahead_pay(struct dmn_ahead *a, struct dmn_ahead *owed)
{
	for (unsigned k = 0; k < DMN_NA; k++)
		pay(&a->v[k], &owed->v[k]);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		pay(&a->rh[b], &owed->rh[b]);
		pay(&a->wh[b], &owed->wh[b]);
	}
}

int dmn_aheads_copy(struct dmn_aheads *dst, const struct dmn_aheads *src)
{
	if (src->n > dst->cap) {
		struct dmn_ahead *nv = realloc(dst->a, src->n * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		dst->a = nv;
		dst->cap = src->n;
	}
	if (src->n)
		memcpy(dst->a, src->a, src->n * sizeof *dst->a);
	dst->n = src->n;
	return 0;
}

/* ---- a reading taken in place, and taken back (cursor.h, struct dmn_undo) ---- */

#define AHEAD_NFIGS (DMN_NA + 2 * LOG_HIST_BUCKETS)
_Static_assert(AHEAD_NFIGS < DMN_UNDO_NEW_SUMS, "a figure's number is one byte, apart from the marks");

/* an ahead's figures as one array (AHEAD_FIGS: they are one run of words) */
static uint64_t *figs(struct dmn_ahead *a)
{
	return (uint64_t *)(void *)((unsigned char *)a + offsetof(struct dmn_ahead, v));
}

static int undo_room(struct dmn_undo *u, size_t more)
{
	if (u->n + more <= u->cap)
		return 0;
	size_t cap = u->cap ? u->cap : 16;
	while (cap < u->n + more)
		cap *= 2;
	struct dmn_undo_ent *nv = realloc(u->e, cap * sizeof *nv);
	if (!nv)
		return -ENOMEM;
	u->e = nv;
	u->cap = cap;
	return 0;
}

static void undo_log(struct dmn_undo *u, unsigned layer, unsigned fig, uint64_t raw, uint64_t paid)
{
	u->e[u->n++] = (struct dmn_undo_ent){.layer = (uint16_t)layer, .fig = (uint8_t)fig, .raw = raw, .paid = paid};
}

/* the layer's ahead (made by the reading being taken back: all 0 again) out of x */
static void ahead_drop(struct dmn_aheads *x, unsigned layer)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->a[i].layer == layer) {
			memmove(&x->a[i], &x->a[i + 1], (x->n - i - 1) * sizeof *x->a);
			x->n--;
			return;
		}
}

int dmn_ahead_take(struct dmn_aheads *sums, struct dmn_aheads *owed, struct dmn_aheads *counted,
		   const struct dmn_ahead *now, struct dmn_ahead *grow, struct dmn_undo *u)
{
	if (undo_room(u, 1) < 0)
		return -ENOMEM;
	struct dmn_ahead *s = dmn_ahead_find(sums, now->layer);
	if (!s) {
		if (!(s = ahead_get(sums, now->layer)))
			return -ENOMEM;
		undo_log(u, now->layer, DMN_UNDO_NEW_SUMS, 0, 0);
	}
	grow->layer = now->layer;
	uint64_t *g = figs(grow), *sf = figs(s);
	if (!memcmp(AHEAD_FIGS(now), sf, AHEAD_FIGS_LEN)) {
		memset(g, 0, AHEAD_FIGS_LEN);
		return 0;
	}
	/* dmn_ahead_grow's advance, noting the figures that grew (a few of the 69 a second, for a
	 * process that writes steadily), which alone are paid, counted and logged */
	const uint64_t *nf = (const uint64_t *)(const void *)AHEAD_FIGS(now);
	unsigned char moved[AHEAD_NFIGS];
	unsigned nm = 0;
	for (unsigned f = 0; f < AHEAD_NFIGS; f++) {
		g[f] = 0;
		if (nf[f] > sf[f]) {
			g[f] = nf[f] - sf[f];
			sf[f] = nf[f];
			moved[nm++] = (unsigned char)f;
		}
	}
	if (!nm)
		return 0;
	/* room for what is logged below: the figures that grew, not a layer's worst case */
	struct dmn_ahead *c = dmn_ahead_find(counted, now->layer);
	int made = !c;
	if (undo_room(u, 1 + nm) < 0 || (made && !(c = ahead_get(counted, now->layer)))) {
		for (unsigned i = 0; i < nm; i++) /* (the sums back where they were) */
			sf[moved[i]] -= g[moved[i]];
		return -ENOMEM;
	}
	if (made)
		undo_log(u, now->layer, DMN_UNDO_NEW_COUNTED, 0, 0);
	struct dmn_ahead *o = dmn_ahead_find(owed, now->layer);
	uint64_t *cf = figs(c), *of = o ? figs(o) : NULL;
	for (unsigned i = 0; i < nm; i++) {
		unsigned f = moved[i];
		uint64_t raw = g[f];
		if (of)
			pay(&g[f], &of[f]);
		cf[f] += g[f];
		undo_log(u, now->layer, f, raw, g[f]);
	}
	return 1;
}

void dmn_undo_back(struct dmn_undo *u, struct dmn_aheads *sums, struct dmn_aheads *owed, struct dmn_aheads *counted)
{
	while (u->n) {
		const struct dmn_undo_ent *e = &u->e[--u->n];
		if (e->fig == DMN_UNDO_NEW_SUMS) {
			ahead_drop(sums, e->layer);
			continue;
		}
		if (e->fig == DMN_UNDO_NEW_COUNTED) {
			ahead_drop(counted, e->layer);
			continue;
		}
		/* (each layer a figure names is there: made before the figure was logged, dropped after) */
		struct dmn_ahead *s = dmn_ahead_find(sums, e->layer), *c = dmn_ahead_find(counted, e->layer);
		struct dmn_ahead *o = e->raw != e->paid ? dmn_ahead_find(owed, e->layer) : NULL;
		if (s)
			figs(s)[e->fig] -= e->raw;
		if (c)
			figs(c)[e->fig] -= e->paid;
		if (o)
			figs(o)[e->fig] += e->raw - e->paid;
	}
}

void dmn_undo_free(struct dmn_undo *u)
{
	free(u->e);
	memset(u, 0, sizeof *u);
}

void dmn_aheads_free(struct dmn_aheads *x)
{
	free(x->a);
	memset(x, 0, sizeof *x);
}

int dmn_aheads_zero(const struct dmn_aheads *x)
{
	for (size_t i = 0; i < x->n; i++) {
		const struct dmn_ahead *a = &x->a[i];
		for (unsigned k = 0; k < DMN_NA; k++)
			if (a->v[k])
				return 0;
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			if (a->rh[b] || a->wh[b])
				return 0;
	}
	return 1;
}

/* ---- its stored form: "DN1", a varint count, then per process its pid (zig-zag), start_ns, its
 * layers' count and per layer: the layer, the DMN_NA figures, and each histogram as a count of
 * non-zero buckets followed by (bucket, value) pairs. Varints throughout. ---- */

size_t dmn_node_piece_max(const struct dmn_aheads *a)
{
	/* at most: 3 varints of the process, then per layer 2 + DMN_NA + 2 * (1 + 2 * 32) varints */
	return 30 + a->n * 10 * (2 + DMN_NA + 2 * (1 + 2 * LOG_HIST_BUCKETS));
}

/* one entry's bytes at p: its length */
static size_t node_put(unsigned char *buf, int32_t pid, uint64_t start_ns, const struct dmn_aheads *a)
{
	unsigned char *p = buf;
	p += sys_varint_put(p, sys_zigzag(pid));
	p += sys_varint_put(p, start_ns);
	p += sys_varint_put(p, a->n);
	for (size_t i = 0; i < a->n; i++) {
		p += sys_varint_put(p, a->a[i].layer);
		for (unsigned k = 0; k < DMN_NA; k++)
			p += sys_varint_put(p, a->a[i].v[k]);
		put_hist(&p, a->a[i].rh);
		put_hist(&p, a->a[i].wh);
	}
	return (size_t)(p - buf);
}

size_t dmn_node_piece(unsigned char *buf, int32_t pid, uint64_t start_ns, const struct dmn_aheads *a)
{
	return dmn_aheads_zero(a) ? 0 : node_put(buf, pid, start_ns, a);
}

/* room for need more bytes of entries in e: 0 or -ENOMEM */
static int enc_room(struct dmn_node_enc *e, size_t need)
{
	if (!e->buf || e->len + need > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		while (cap < e->len + need + 16)
			cap *= 2;
		unsigned char *nb = realloc(e->buf, cap);
		if (!nb)
			return -ENOMEM;
		e->buf = nb;
		e->cap = cap;
	}
	if (!e->len) /* room for the magic and the count, filled in by finish */
		e->len = 3 + 10;
	return 0;
}

int dmn_node_enc_add(struct dmn_node_enc *e, int32_t pid, uint64_t start_ns, const struct dmn_aheads *a)
{
	if (enc_room(e, dmn_node_piece_max(a)) < 0)
		return -ENOMEM;
	e->len += node_put(e->buf + e->len, pid, start_ns, a);
	e->count++;
	return 0;
}

int dmn_node_enc_add_piece(struct dmn_node_enc *e, const void *piece, size_t len)
{
	if (enc_room(e, len) < 0)
		return -ENOMEM;
	memcpy(e->buf + e->len, piece, len);
	e->len += len;
	e->count++;
	return 0;
}

const void *dmn_node_enc_finish(struct dmn_node_enc *e, size_t *len)
{
	if (!e->count) {
		*len = 0;
		return e->buf ? e->buf : (const void *)"";
	}
	/* the count's varint goes right after the magic: the entries move up to meet it */
	unsigned char head[13];
	memcpy(head, "DN1", 3);
	size_t hl = 3 + sys_varint_put(head + 3, e->count);
	memmove(e->buf + hl, e->buf + 13, e->len - 13);
	memcpy(e->buf, head, hl);
	*len = e->len - 13 + hl;
	e->len = 0;
	e->count = 0;
	return e->buf;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct dmn_node_ent *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

int dmn_node_decode(const void *buf, size_t len, struct dmn_node_ent **out, size_t *n)
{
	const unsigned char *p = buf, *end = p + len;
	uint64_t count, x;
	*out = NULL;
	*n = 0;
	if (len == 0)
		return 0;
	/* each process takes 3 bytes at least */
	if (len < 3 || memcmp(p, "DN1", 3))
		return -EBADMSG;
	p += 3;
	if (sys_varint_get(&p, end, &count) < 0 || count > (uint64_t)(end - p) / 3)
		return -EBADMSG;
	struct dmn_node_ent *v = calloc(count ? count : 1, sizeof *v);
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (; k < count; k++) {
		struct dmn_node_ent *e = &v[k];
		uint64_t nl, start;
		if (sys_varint_get(&p, end, &x) < 0 || sys_varint_get(&p, end, &start) < 0 ||
		    sys_varint_get(&p, end, &nl) < 0 || nl > LOG_LAYER_MAX + 1)
			goto bad;
		int64_t pid = sys_unzigzag(x);
		if (pid < INT32_MIN || pid > INT32_MAX)
			goto bad;
		e->pid = (int32_t)pid;
		e->start_ns = start;
		for (uint64_t l = 0; l < nl; l++) {
			uint64_t layer;
			if (sys_varint_get(&p, end, &layer) < 0 || layer > LOG_LAYER_MAX || dmn_ahead_find(&e->a, (unsigned)layer))
				goto bad;
			struct dmn_ahead *a = ahead_get(&e->a, (unsigned)layer);
			if (!a) {
				dmn_node_ents_free(v, k + 1);
				return -ENOMEM;
			}
			for (unsigned q = 0; q < DMN_NA; q++)
				if (sys_varint_get(&p, end, &a->v[q]) < 0)
					goto bad;
			if (get_hist(&p, end, a->rh) < 0 || get_hist(&p, end, a->wh) < 0)
				goto bad;
		}
	}
	if (p != end)
		goto bad;
	qsort(v, count, sizeof *v, ent_cmp);
	for (size_t i = 1; i < count; i++)
		if (!ent_cmp(&v[i - 1], &v[i])) { /* a process twice */
			k = count - 1;
			goto bad;
		}
	*out = v;
	*n = count;
	return 0;
bad:
	dmn_node_ents_free(v, k + 1 < count ? k + 1 : count);
	return -EBADMSG;
}

void dmn_node_ents_free(struct dmn_node_ent *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		dmn_aheads_free(&v[i].a);
	free(v);
}

struct dmn_node_ent *dmn_node_find(struct dmn_node_ent *v, size_t n, int32_t pid, uint64_t start_ns)
{
	struct dmn_node_ent key = {.pid = pid, .start_ns = start_ns};
	return v && n ? bsearch(&key, v, n, sizeof *v, ent_cmp) : NULL;
}
