/* SPDX-License-Identifier: MIT */
/*
 * Sorted arrays: where a key is, or would be inserted, by binary search. Header-only (the daemon's
 * cursors and trace readers, the store's batch key maps).
 */
#ifndef IOSTRATA_SYS_SORTED_H
#define IOSTRATA_SYS_SORTED_H

#include <stddef.h>

/* The index of the first of the n sorted elements at base (size bytes each) that does not sort
 * before key (before(elem, key) is 0): where key is, or where it would be inserted; n when every
 * element sorts before it. */
static inline size_t sys_lower_bound(const void *base, size_t n, size_t size, const void *key,
				     int (*before)(const void *elem, const void *key))
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (before((const char *)base + mid * size, key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
