/* SPDX-License-Identifier: MIT */
/*
 * What a companion (capture/mpi/, capture/hdf5/) carries across fork. The child of fork gets a
 * log of its own from core.c, which unmaps the parent's, so the records a companion holds for
 * handles opened before the fork (an MPI_File, an HDF5 file or dataset id) point nowhere in the
 * child. The companion saves each such record's layer, rank and path in its prepare handler,
 * while the parent's log is still mapped, and asks the child's log for the same records in its
 * child handler, registered after core.c's (pthread_atfork runs child handlers in the order of
 * registration, and core registers in its constructor, before any handle exists). Fork is not a
 * hot path: the saved names live in one malloc'ed block, freed after the fork on both sides.
 * It does not decide which handles a child keeps: that is each companion's rule.
 */
#ifndef IOSTRATA_CAPTURE_COMPANION_CARRY_H
#define IOSTRATA_CAPTURE_COMPANION_CARRY_H

#include <stdlib.h>
#include <string.h>

#include "capture/companion.h"
#include "capture/core.h"

struct cap_carry {
	char *buf;
	size_t used, size;
};

/* an entry: layer, rank, then the path and its NUL */
struct cap_carry_head {
	uint16_t layer;
	int32_t rank;
};

/* The bytes record r takes in a carry (the first pass of a prepare handler). */
static inline size_t cap_carry_need(const struct cap_state *st, const struct log_record *r)
{
	return sizeof(struct cap_carry_head) + strlen(st->strings + r->path) + 1;
}

/* Room for need bytes; 0, or -ENOMEM (then nothing is carried). */
static inline int cap_carry_alloc(struct cap_carry *c, size_t need)
{
	c->used = 0;
	c->size = need;
	c->buf = need ? malloc(need) : NULL;
	return need && !c->buf ? -ENOMEM : 0;
}

/* Saves record r; returns its place + 1, or 0 when the carry has no room for it. */
static inline uint32_t cap_carry_put(struct cap_carry *c, const struct cap_state *st, const struct log_record *r)
{
	size_t n = cap_carry_need(st, r);
	if (!c->buf || c->used + n > c->size)
		return 0;
	struct cap_carry_head h = {.layer = r->layer, .rank = r->rank};
	memcpy(c->buf + c->used, &h, sizeof h);
	memcpy(c->buf + c->used + sizeof h, st->strings + r->path, n - sizeof h);
	uint32_t at = (uint32_t)c->used + 1;
	c->used += n;
	return at;
}

/* In the child: the record saved at place at (cap_carry_put's value) in the child's log, or NULL. */
static inline struct log_record *cap_carry_take(const struct cap_carry *c, const struct cap_companion_api *api,
						uint32_t at)
{
	if (!at || !c->buf || at > c->used)
		return NULL;
	struct cap_carry_head h;
	memcpy(&h, c->buf + at - 1, sizeof h);
	struct log_record *r = api->record(h.layer, c->buf + at - 1 + sizeof h, 0);
	if (r && h.rank >= 0)
		r->rank = h.rank;
	return r;
}

static inline void cap_carry_free(struct cap_carry *c)
{
	free(c->buf);
	c->buf = NULL;
	c->used = c->size = 0;
}

#endif
