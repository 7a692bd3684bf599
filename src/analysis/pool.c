/* SPDX-License-Identifier: MIT */
/*
 * The string pool (pool.h): chunks of 64 KiB or the size of the request, whichever is larger, and
 * a power-of-two table of the interned strings, probed linearly and doubled at 50% load.
 */
#include "analysis/pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64u * 1024u)
#define ALIGN 16u

struct ana_pool_chunk {
	struct ana_pool_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void *ana_pool_alloc(struct ana_pool *p, size_t n)
{
	size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	struct ana_pool_chunk *c = p->chunks;

	if (need < n)
		return NULL;
	if (!c || c->size - c->used < need) {
		size_t size = need > CHUNK_BYTES ? need : CHUNK_BYTES;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		/* a large request gets a chunk of its own, behind the current one */
		if (size > CHUNK_BYTES && p->chunks) {
			c->next = p->chunks->next;
			p->chunks->next = c;
		} else {
			c->next = p->chunks;
			p->chunks = c;
		}
		p->bytes += sizeof *c + size;
	}
	void *r = c->data + c->used;
	c->used += need;
	memset(r, 0, n);
	return r;
}

/* FNV-1a: the strings are paths, short and alike in their heads. */
static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int grow(struct ana_pool *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 1024;
	const char **v = calloc(n, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < p->nslots; i++) {
		if (!p->slots[i])
			continue;
		size_t k = (size_t)hash(p->slots[i]) & (n - 1);
		while (v[k])
			k = (k + 1) & (n - 1);
		v[k] = p->slots[i];
	}
	free(p->slots);
	p->slots = v;
	p->nslots = n;
	return 0;
}

const char *ana_pool_intern(struct ana_pool *p, const char *s)
{
	if ((p->nstrings + 1) * 2 > p->nslots && grow(p) < 0)
		return NULL;
	size_t k = (size_t)hash(s) & (p->nslots - 1);
	for (; p->slots[k]; k = (k + 1) & (p->nslots - 1))
		if (!strcmp(p->slots[k], s))
			return p->slots[k];
	size_t len = strlen(s) + 1;
	char *copy = ana_pool_alloc(p, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	p->slots[k] = copy;
	p->nstrings++;
	return copy;
}

int ana_grow(void *arr, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *p = realloc(*(void **)arr, c * sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap = c;
	return 0;
}

void ana_pool_free(struct ana_pool *p)
{
	while (p->chunks) {
		struct ana_pool_chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
	free(p->slots);
	memset(p, 0, sizeof *p);
}
