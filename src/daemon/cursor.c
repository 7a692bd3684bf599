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
	memcpy(out->rh, r->read_hist, sizeof out->rh);
	memcpy(out->wh, r->write_hist, sizeof out->wh);
}

static int cmp_key(uint64_t id, int32_t pid, const struct dmn_rec *r)
{
	if (id != r->id)
		return id < r->id ? -1 : 1;
	return pid < r->pid ? -1 : pid > r->pid;
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
	if (src->nt && !(dst->t = malloc(src->nt * sizeof *dst->t))) {
		dmn_cursor_free(dst);
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof *dst->r);
	if (src->nt)
		memcpy(dst->t, src->t, src->nt * sizeof *dst->t);
	dst->n = dst->cap = src->n;
	dst->nt = dst->capt = src->nt;
	return 0;
}

void dmn_cursor_free(struct dmn_cursor *c)
{
	free(c->r);
	free(c->t);
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

/* ---- stored form: "DC1", a varint count, then per record id (8 bytes), pid, layer, the values,
 * the two histograms: each a varint (pid zig-zag). "DC2" when threads' runs were taken: the same,
 * then a varint count and per thread its tid (zig-zag) and runs taken. ---- */

#define REC_VALUES (2 + DMN_NV + 2 * LOG_HIST_BUCKETS) /* varints per record, 1 byte or more each */

void *dmn_cursor_encode(const struct dmn_cursor *c, size_t *len)
{
	unsigned char *buf = malloc(3 + 10 + c->n * (8 + 10 * REC_VALUES) + 10 + c->nt * 20), *p = buf;
	if (!buf)
		return NULL;
	memcpy(p, c->nt ? "DC2" : "DC1", 3);
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
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			p += sys_varint_put(p, r->rh[b]);
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			p += sys_varint_put(p, r->wh[b]);
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

int dmn_cursor_decode(struct dmn_cursor *c, const void *buf, size_t len)
{
	const unsigned char *p = buf, *end = p + len;
	uint64_t n, x;
	memset(c, 0, sizeof *c);
	if (len == 0)
		return 0;
	if (len < 3 || (memcmp(p, "DC1", 3) && memcmp(p, "DC2", 3)))
		return -EBADMSG;
	int runs = p[2] == '2';
	p += 3;
	/* each record takes at least 8 + REC_VALUES bytes: a count beyond that is a lie */
	if (sys_varint_get(&p, end, &n) < 0 || n > (uint64_t)(end - p) / (8 + REC_VALUES))
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
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			if (sys_varint_get(&p, end, &r.rh[b]) < 0)
				goto bad;
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			if (sys_varint_get(&p, end, &r.wh[b]) < 0)
				goto bad;
		if (dmn_cursor_set(c, &r) < 0) {
			dmn_cursor_free(c);
			return -ENOMEM;
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
			if (dmn_cursor_set_taken(c, (int32_t)tid, runs) < 0) {
				dmn_cursor_free(c);
				return -ENOMEM;
			}
		}
	}
	if (p != end)
		goto bad;
	return 0;
bad:
	dmn_cursor_free(c);
	return -EBADMSG;
}
