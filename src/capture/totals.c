/* SPDX-License-Identifier: MIT */
/*
 * Claiming a thread's slot of the live file's TOTALS section (totals.h): one atomic add on the
 * header's count, as trace blocks are claimed. Not the updates: those are inlined in totals.h.
 */
#include "capture/totals.h"

#include <unistd.h>

#include "capture/core.h"

__thread struct log_totals_slot *cap_tot_slot __attribute__((tls_model("initial-exec")));
struct log_totals_slot *cap_tot_shared;
static struct log_totals_slot *tot_base;

void cap_tot_reset(struct log_totals_slot *base)
{
	tot_base = base;
	cap_tot_shared = base ? &base[LOG_TOTALS_SLOTS - 1] : NULL;
	cap_tot_slot = NULL; /* (the one thread there is: start-up, or a fork child) */
}

struct log_totals_slot *cap_tot_claim(void)
{
	struct log_header *h = cap.hdr;
	if (!tot_base || !h)
		return NULL;
	uint64_t i = __atomic_fetch_add(&h->totals_claimed, 1, __ATOMIC_RELAXED);
	struct log_totals_slot *s = i < LOG_TOTALS_SLOTS - 1 ? &tot_base[i] : cap_tot_shared;
	if (s != cap_tot_shared || i == LOG_TOTALS_SLOTS - 1)
		__atomic_store_n(&s->tid, (int32_t)gettid(), __ATOMIC_RELAXED);
	cap_tot_slot = s;
	return s;
}
