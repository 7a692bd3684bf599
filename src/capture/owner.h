/* SPDX-License-Identifier: MIT */
/*
 * Per-record ownership: which updates of a record may be plain instructions once a process has
 * several threads. A record that only one thread has updated since the process went
 * multithreaded is owned by that thread, which keeps the plain single-threaded updates; the
 * first update by a second thread makes the record shared, for good, and from then on every
 * thread uses locked updates on it. Design and proof of the switch-over: docs/OWNERSHIP.md.
 *
 * This file holds the inlined gate only; the slow path (claiming, sharing, the handshake with
 * the owner through membarrier(2)) is in owner.c. It covers the fields a read or a write
 * updates (log_note_access, the error counters and times of reads and writes, the modelled
 * file position); metadata counters (log_note_meta) touch other fields and keep the
 * process-wide rule (cap_mt), so an open or close never takes a record from its owner.
 * Nothing here knows about the log: the caller gives the record's owner word.
 */
#ifndef IOSTRATA_CAPTURE_OWNER_H
#define IOSTRATA_CAPTURE_OWNER_H

#include <stdint.h>
#include <sys/single_threaded.h>

/* Owner word values: 0 = nobody yet, 1 .. CAP_OWN_SLOTS - 1 = a thread's slot, a slot with
 * CAP_OWN_SHARING = being made shared (its updates are waited for), CAP_OWN_SHARED = shared. */
#define CAP_OWN_SLOTS 4096u
#define CAP_OWN_SHARING 0x80000000u
#define CAP_OWN_SHARED 0xffffffffu
#define CAP_OWN_NOSLOT 0x7fffffffu /* a thread that found every slot taken: never owns */

/* How the gate let an update through (the caller's mt argument is `how == CAP_OWN_LOCKED`). */
enum { CAP_OWN_PLAIN = 0, CAP_OWN_LOCKED = 1, CAP_OWN_OWNED = 2 };

/* A thread's "inside an update" count, read by a thread taking one of its records. One cache
 * line each: it is written twice per call by its own thread only. */
struct cap_own_thread {
	uint32_t busy;
} __attribute__((aligned(64)));

extern struct cap_own_thread cap_own_threads[CAP_OWN_SLOTS];
/* 0 until the thread's first multithreaded update (and for good while ownership is off) */
extern __thread uint32_t cap_own_slot;
extern __thread uint32_t *cap_own_busy; /* &cap_own_threads[cap_own_slot].busy once there is a slot */
extern int cap_own_on;                  /* 0: membarrier missing, every update follows cap_mt() */

/* Slow path (owner.c): the thread's slot, then the record claimed, waited for or shared. */
int cap_own_begin_slow(uint32_t *word);

/*
 * Before the updates of one read or write on the record whose owner word is *word. Returns
 * CAP_OWN_PLAIN (one thread in the process), CAP_OWN_OWNED (this thread owns the record: plain
 * updates, then cap_own_end) or CAP_OWN_LOCKED (shared: locked updates).
 */
static inline __attribute__((always_inline)) int cap_own_begin(uint32_t *word)
{
	if (__builtin_expect(__libc_single_threaded, 1))
		return CAP_OWN_PLAIN;
	uint32_t me = cap_own_slot;
	if (__builtin_expect(me != 0, 1)) {
		/* Announce the update, then look at the owner. No fence: a thread taking the record
		 * over runs membarrier() between publishing CAP_OWN_SHARING and reading busy, which
		 * orders this store before this load as a fence here would (docs/OWNERSHIP.md). A
		 * thread without a slot of its own (CAP_OWN_NOSLOT) counts in a spare one and never
		 * matches an owner word. */
		uint32_t *busy = cap_own_busy;
		uint32_t b = __atomic_load_n(busy, __ATOMIC_RELAXED);
		__atomic_store_n(busy, b + 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (__builtin_expect(__atomic_load_n(word, __ATOMIC_ACQUIRE) == me, 1))
			return CAP_OWN_OWNED;
		__atomic_store_n(busy, b, __ATOMIC_RELEASE);
	}
	return cap_own_begin_slow(word);
}

/* After the updates cap_own_begin let through. */
static inline __attribute__((always_inline)) void cap_own_end(int how)
{
	if (how == CAP_OWN_OWNED) {
		uint32_t *busy = cap_own_busy;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* release: a thread that sees the count drop sees every update before it */
		__atomic_store_n(busy, __atomic_load_n(busy, __ATOMIC_RELAXED) - 1, __ATOMIC_RELEASE);
	}
}

/* Once at start-up: register for membarrier(2); ownership stays off without it. */
void cap_own_init(void);
/* In a fork child (one thread): no thread inside an update, membarrier registered again for the
 * new address space. The caller zeroes the records' owner words (every record unowned). */
void cap_own_after_fork(void);

#endif
