/* SPDX-License-Identifier: MIT */
/*
 * Per-record ownership, the slow path (owner.h has the inlined gate; docs/OWNERSHIP.md the
 * design): a thread's slot, claiming a record nobody owns, and making a record shared when a
 * second thread touches it. The switch-over is the one place that waits: the thread taking the
 * record publishes CAP_OWN_SHARING, runs membarrier(2) so that the owner either sees that or
 * has its "inside an update" count visible, and waits for the count to drop before anyone uses
 * locked updates on the record. It happens once per shared record.
 */
#include "capture/owner.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cap_own_thread cap_own_threads[CAP_OWN_SLOTS];
__thread uint32_t cap_own_slot;
__thread uint32_t *cap_own_busy;
int cap_own_on;
static uint32_t next_slot = 1;
/* the count of the threads without a slot: raised and lowered like any, read by no one */
static struct cap_own_thread noslot_busy;

static int membarrier_call(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

void cap_own_init(void)
{
	cap_own_on = membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void cap_own_after_fork(void)
{
	/* only the slots ever claimed can be busy: the whole table is 256 KiB, which a fork child
	 * would otherwise fault in page by page */
	uint32_t n = __atomic_load_n(&next_slot, __ATOMIC_RELAXED);
	memset(cap_own_threads, 0, (n < CAP_OWN_SLOTS ? n : CAP_OWN_SLOTS) * sizeof cap_own_threads[0]);
	if (cap_own_on)
		cap_own_on = membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

static uint32_t claim_slot(void)
{
	uint32_t s = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
	if (s >= CAP_OWN_SLOTS) {
		__atomic_store_n(&next_slot, CAP_OWN_SLOTS, __ATOMIC_RELAXED); /* no wrap-around */
		s = CAP_OWN_NOSLOT;
	}
	cap_own_busy = s == CAP_OWN_NOSLOT ? &noslot_busy.busy : &cap_own_threads[s].busy;
	cap_own_slot = s;
	return s;
}

/* A few pauses, then give the CPU away: the thread waited for may be descheduled. */
static void backoff(unsigned *spins)
{
	if (++*spins < 64)
		__builtin_ia32_pause();
	else
		sched_yield();
}

int cap_own_begin_slow(uint32_t *word)
{
	if (!cap_own_on)
		return CAP_OWN_LOCKED;
	uint32_t me = cap_own_slot ? cap_own_slot : claim_slot();
	unsigned spins = 0;
	for (;;) {
		uint32_t o = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if (o == CAP_OWN_SHARED)
			return CAP_OWN_LOCKED;
		if (o == 0) {
			__atomic_compare_exchange_n(word, &o, me == CAP_OWN_NOSLOT ? CAP_OWN_SHARED : me, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			continue;
		}
		if (o == me) { /* just claimed: announce the update as the inlined gate does */
			uint32_t b = __atomic_load_n(cap_own_busy, __ATOMIC_RELAXED);
			__atomic_store_n(cap_own_busy, b + 1, __ATOMIC_RELAXED);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == me)
				return CAP_OWN_OWNED;
			__atomic_store_n(cap_own_busy, b, __ATOMIC_RELEASE);
			continue;
		}
		if (o & CAP_OWN_SHARING) {
			/* Being taken from its owner. If the owner is this thread, the only plain updates
			 * that can still run on the record are this thread's own (an update this call
			 * interrupts from a signal handler), which a locked update cannot race with. Any
			 * other owner may be inside a plain update: wait until the taker has seen it end. */
			if ((o & ~CAP_OWN_SHARING) == me)
				return CAP_OWN_LOCKED;
			backoff(&spins);
			continue;
		}
		/* owned by another thread: take it */
		if (!__atomic_compare_exchange_n(word, &o, o | CAP_OWN_SHARING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		/* After this, the owner's next look at the word sees CAP_OWN_SHARING, or its busy
		 * store that came before that look is visible to the loads below. */
		if (membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
			membarrier_call(MEMBARRIER_CMD_GLOBAL); /* slower, needs no registration */
		while (__atomic_load_n(&cap_own_threads[o].busy, __ATOMIC_ACQUIRE) != 0)
			backoff(&spins);
		__atomic_store_n(word, CAP_OWN_SHARED, __ATOMIC_RELEASE);
		return CAP_OWN_LOCKED;
	}
}
