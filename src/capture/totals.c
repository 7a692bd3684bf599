/* SPDX-License-Identifier: MIT */
/*
 * Claiming a thread's slot of the live file's TOTALS section (totals.h): one atomic add on the
 * header's count, as trace blocks are claimed; and the updates of a thread without a slot of its
 * own (its first call, or the shared last slot). A thread's own slot is updated inline (totals.h).
 */
#include "capture/totals.h"

#include <unistd.h>

#include "capture/core.h"

__thread uintptr_t cap_tot_slot __attribute__((tls_model("initial-exec")));
static struct log_totals_slot *tot_base;

void cap_tot_reset(struct log_totals_slot *base)
{
	tot_base = base;
	cap_tot_slot = 0; /* (the one thread there is: start-up, or a fork child) */
}

uintptr_t cap_tot_claim(void)
{
	struct log_header *h = cap.hdr;
	if (!tot_base || !h)
		return 0;
	uint64_t i = __atomic_fetch_add(&h->totals_claimed, 1, __ATOMIC_RELAXED);
	int shared = i >= LOG_TOTALS_SLOTS - 1;
	struct log_totals_slot *s = &tot_base[shared ? LOG_TOTALS_SLOTS - 1 : i];
	if (i <= LOG_TOTALS_SLOTS - 1)
		__atomic_store_n(&s->tid, (int32_t)gettid(), __ATOMIC_RELAXED);
	_Static_assert(_Alignof(struct log_totals_slot) >= 2 && sizeof(struct log_totals_slot) % 8 == 0,
		       "a slot's address has a free lowest bit");
	cap_tot_slot = (uintptr_t)s | (uintptr_t)!shared;
	return cap_tot_slot;
}

void cap_tot_access_slow(unsigned l, int kind, uint64_t len, unsigned hb)
{
	uintptr_t s = cap_tot_get();
	if (s)
		cap_tot_add(&((struct log_totals_slot *)(s & ~(uintptr_t)1))->layer[l], kind, len, hb, !(s & 1));
}
