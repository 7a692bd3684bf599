/* SPDX-License-Identifier: MIT */
/*
 * A string pool: every distinct string once, and small allocations that live as long as the
 * pool. A job of 10,000 processes names the same libraries, hosts and data files 10,000 times;
 * the profile keeps one copy of each, and frees them all at once with the profile. And the one
 * growing array the analysis uses (ana_grow).
 */
#ifndef IOSTRATA_ANALYSIS_POOL_H
#define IOSTRATA_ANALYSIS_POOL_H

#include <stddef.h>

struct ana_pool_chunk;

struct ana_pool {
	struct ana_pool_chunk *chunks; /* newest first: allocations come from its free tail */
	const char **slots;            /* open addressing over the interned strings; NULL: empty */
	size_t nslots, nstrings;
	size_t bytes;                  /* held in chunks, for the memory figures */
};

/* s's interned copy (equal strings give the same pointer), or NULL when out of memory. */
const char *ana_pool_intern(struct ana_pool *p, const char *s);
/* n bytes aligned for any type, zeroed, freed with the pool; NULL when out of memory. */
void *ana_pool_alloc(struct ana_pool *p, size_t n);
void ana_pool_free(struct ana_pool *p);

/* Grow the array *arr (elements of sz bytes, *cap of them) to hold at least need, doubling from
 * 16: arr is the address of the array pointer. 0 or -ENOMEM (the array is left as it was). */
int ana_grow(void *arr, size_t *cap, size_t need, size_t sz);

#endif
