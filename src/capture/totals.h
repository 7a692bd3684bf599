/* SPDX-License-Identifier: MIT */
/*
 * Per-thread totals of the user layers (the live file's TOTALS section, docs/FORMAT.md "Totals"):
 * every counted read, write and metadata call of a POSIX or stdio record adds the same to the
 * calling thread's slot, so that the node daemon sums a process from a page or two instead of
 * its records. A thread's slot is its own: plain single-instruction adds (atomic with respect to
 * a signal handler on the same thread), no gate. The slot is claimed at the thread's first
 * counted call; threads beyond the section's capacity share its last slot with locked adds.
 * This file holds the inlined updates; claiming is in totals.c. The record updates themselves
 * stay log/record.h's: cap_note_access and cap_note_meta do both, and every capture wrapper
 * goes through them.
 */
#ifndef IOSTRATA_CAPTURE_TOTALS_H
#define IOSTRATA_CAPTURE_TOTALS_H

#include <stdint.h>

#include "iostrata/format.h"
#include "log/record.h"

/* The calling thread's slot (0 until its first counted call, and in a fork child), its lowest
 * bit set when the slot is the thread's own (slots are 64-byte aligned) and clear on the shared
 * last slot: the common case, a thread's own slot, is one test on the hot path. */
extern __thread uintptr_t cap_tot_slot __attribute__((tls_model("initial-exec")));

/* The calling thread's slot claimed in the live file's section (tagged as cap_tot_slot): 0 when
 * there is none. */
uintptr_t cap_tot_claim(void);
/* cap_tot_access_l when the thread has no slot of its own yet, or shares the last one (cold). */
void cap_tot_access_slow(unsigned l, int kind, uint64_t len, unsigned hb) __attribute__((cold, noinline));
/* The section in the mapping (a new live file: at start-up and in a fork child), slots unclaimed. */
void cap_tot_reset(struct log_totals_slot *base);

/* The counters ana_meta_ops counts as metadata calls (all below 64). */
#define CAP_TOT_META_MASK                                                                                      \
	((1ull << LOG_C_OPENS) | (1ull << LOG_C_CLOSES) | (1ull << LOG_C_SEEKS) | (1ull << LOG_C_STATS) |       \
	 (1ull << LOG_C_FSYNCS) | (1ull << LOG_C_RENAMES) | (1ull << LOG_C_DUPS) | (1ull << LOG_C_MMAPS) |      \
	 (1ull << LOG_C_META_OTHER))

/* The thread's slot, tagged (0: none). */
static inline __attribute__((always_inline)) uintptr_t cap_tot_get(void)
{
	uintptr_t s = cap_tot_slot;
	if (__builtin_expect(!s, 0))
		s = cap_tot_claim();
	return s;
}

static inline __attribute__((always_inline)) void cap_tot_add(struct log_totals_layer *t, int kind, uint64_t len,
								unsigned hb, int mt)
{
	if (kind == LOG_KIND_WRITE) {
		log_inc(&t->writes, mt);
		log_add(&t->bytes_written, len, mt);
		log_inc(&t->write_hist[hb], mt);
	} else {
		log_inc(&t->reads, mt);
		log_add(&t->bytes_read, len, mt);
		log_inc(&t->read_hist[hb], mt);
	}
}

/* What log_note_access adds to the node-second figures of a record of user layer l (0 POSIX, 1
 * stdio) for a read or write of len bytes, whose size bucket is hb, added to the thread's slot. */
static inline __attribute__((always_inline)) void cap_tot_access_l(unsigned l, int kind, uint64_t len, unsigned hb)
{
	uintptr_t s = cap_tot_slot;
	if (__builtin_expect(s & 1, 1)) /* (the untagging folds into the adds' displacement) */
		cap_tot_add(&((struct log_totals_slot *)(s - 1))->layer[l], kind, len, hb, 0);
	else
		cap_tot_access_slow(l, kind, len, hb);
}

/* The same for record r, of any layer (nothing when it is not a user layer's). */
static inline __attribute__((always_inline)) void cap_tot_access(const struct log_record *r, int kind, uint64_t len)
{
	unsigned l = (unsigned)r->layer - LOG_LAYER_POSIX;
	if (__builtin_expect(l <= 1, 1))
		cap_tot_access_l(l, kind, len, log_hist_bucket(len));
}

/* log_note_access and the same in the thread's totals. */
static inline __attribute__((always_inline)) void cap_note_access(struct log_record *r, int kind, uint64_t off,
								  uint64_t len, uintptr_t mem, uint64_t t0,
								  uint64_t t1, uint64_t file_align,
								  uint64_t mem_align, int mt)
{
	log_note_access(r, kind, off, len, mem, t0, t1, file_align, mem_align, mt);
	cap_tot_access(r, kind, len);
}

/* log_note_meta and, for a counter ana_meta_ops counts, one metadata call in the thread's totals. */
static inline void cap_note_meta(struct log_record *r, enum log_counter which, uint64_t t0, uint64_t t1, int mt)
{
	log_note_meta(r, which, t0, t1, mt);
	unsigned l = (unsigned)r->layer - LOG_LAYER_POSIX;
	if ((unsigned)which < 64 && ((CAP_TOT_META_MASK >> which) & 1) && l <= 1) {
		uintptr_t s = cap_tot_get();
		if (s)
			log_inc(&((struct log_totals_slot *)(s & ~(uintptr_t)1))->layer[l].meta, !(s & 1));
	}
}

#endif
