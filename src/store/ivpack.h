/* SPDX-License-Identifier: MIT */
/*
 * A process's interval statistics in one column (SQLite's schema 15, docs/STORE.md "One row a
 * process"): its rows of one interval, one per (file, layer, category), as a JSON array of arrays
 * `[[file,layer,cat,bytes,calls,dur_ns],...]` in key order, that a plain sqlite3 user unpacks with
 * the built-in json_each (the views interval_rows and interval_stats do). An entry whose interval
 * length is not its row's carries it as a seventh number. Pure functions: no SQLite here.
 */
#ifndef IOSTRATA_STORE_IVPACK_H
#define IOSTRATA_STORE_IVPACK_H

#include <stddef.h>
#include <stdint.h>

struct ivp_ent {
	int64_t file, bytes, calls, dur, dt;
	int32_t layer, cat;
};

/* Bytes an encoding of n entries may take, with its NUL. */
#define IVP_ENT_MAX (7 * 21 + 3)
static inline size_t ivp_text_max(size_t n)
{
	return n * IVP_ENT_MAX + 3;
}

/* Key order (file, layer, category). */
static inline int ivp_key_cmp(const struct ivp_ent *a, const struct ivp_ent *b)
{
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	return a->cat < b->cat ? -1 : a->cat > b->cat;
}

/* Writes the n entries (in the order given) into buf (ivp_text_max(n) bytes): the length. An
 * entry's dt is written only when it is not row_dt. */
size_t ivp_encode(char *buf, const struct ivp_ent *v, size_t n, int64_t row_dt);

/* Appends the entries of a text to *v (capacity *cap, count *n; grown with realloc), each dt
 * row_dt unless the entry has its own: 0, -EINVAL for a text not of this form, -ENOMEM. */
int ivp_parse(const char *text, size_t len, int64_t row_dt, struct ivp_ent **v, size_t *n, size_t *cap);

/* Sorts v[0..*n) by key, entries of one key summed into the first given (its dt kept: the
 * first wins, as the rows' upsert kept the first dt_ms), *n the new count: 0 or -ENOMEM. */
int ivp_sort_sum(struct ivp_ent *v, size_t *n);

#endif
