/* SPDX-License-Identifier: MIT */
/*
 * Per-record ownership (src/capture/owner.c, docs/OWNERSHIP.md): records updated through the
 * gate exactly as the capture library does, from many threads. Every count must be exact:
 * records each thread has to itself (which must stay owned, i.e. take plain updates), records
 * every thread updates from the start, and records one thread hammers while the others arrive
 * at random moments (the switch-over under load, many times). Also built with
 * -fsanitize=thread by `make test-tsan`.
 */
#include <pthread.h>
#include <stdlib.h>

#include "capture/owner.h"
#include "check.h"
#include "log/record.h"

#define NT 8
#define ITERS 20000
#define LATE_RECORDS 64
#define LATE_ITERS 2000

static struct log_record own_rec[NT], shared_rec, late_rec[LATE_RECORDS];
static uint32_t own_word[NT], shared_word, late_word[LATE_RECORDS];
static uint64_t own_pos[NT], shared_pos, late_pos[LATE_RECORDS]; /* descriptions' positions, under the gate */
static uint32_t own_slot_seen[NT];
static pthread_barrier_t start;

/* What cap_note_rw_inline does for a write at the description's position. */
static void note_write(struct log_record *r, uint32_t *word, uint64_t *pos, uint64_t len)
{
	int how = cap_own_begin(word);
	int mt = how == CAP_OWN_LOCKED;
	uint64_t o;
	if (mt) {
		o = __atomic_fetch_add(pos, len, __ATOMIC_RELAXED);
	} else {
		o = *pos;
		*pos = o + len;
	}
	log_note_access(r, LOG_KIND_WRITE, o, len, 0, 1, 2, 4096, 8, mt);
	cap_own_end(how);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ITERS; i++) {
		note_write(&own_rec[id], &own_word[id], &own_pos[id], 10);
		note_write(&shared_rec, &shared_word, &shared_pos, 10);
	}
	own_slot_seen[id] = cap_own_slot;
	/* late sharing: thread 0 starts on each record; the others join after a random delay */
	unsigned seed = (unsigned)id * 7919u + 1;
	for (int k = 0; k < LATE_RECORDS; k++) {
		pthread_barrier_wait(&start);
		int skip = id == 0 ? 0 : (int)(rand_r(&seed) % LATE_ITERS);
		for (volatile int s = 0; s < skip; s++)
			;
		for (int i = 0; i < LATE_ITERS; i++)
			note_write(&late_rec[k], &late_word[k], &late_pos[k], 3);
	}
	return NULL;
}

int main(void)
{
	cap_own_init();
	check("membarrier registered (ownership on)", cap_own_on, "membarrier(2) refused registration");
	pthread_barrier_init(&start, NULL, NT);
	pthread_t t[NT];
	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);

	char name[96];
	for (int i = 0; i < NT; i++) {
		snprintf(name, sizeof name, "own record %d: writes, bytes, end exact", i);
		check(name,
		      own_rec[i].counters[LOG_C_WRITES] == ITERS &&
			      own_rec[i].counters[LOG_C_BYTES_WRITTEN] == ITERS * 10ull &&
			      own_rec[i].counters[LOG_C_MAX_WRITE_END] == ITERS * 10ull &&
			      own_rec[i].counters[LOG_C_CONSEC_WRITES] == ITERS - 1 && own_pos[i] == ITERS * 10ull,
		      "writes %llu bytes %llu end %llu consec %llu pos %llu",
		      (unsigned long long)own_rec[i].counters[LOG_C_WRITES],
		      (unsigned long long)own_rec[i].counters[LOG_C_BYTES_WRITTEN],
		      (unsigned long long)own_rec[i].counters[LOG_C_MAX_WRITE_END],
		      (unsigned long long)own_rec[i].counters[LOG_C_CONSEC_WRITES], (unsigned long long)own_pos[i]);
		snprintf(name, sizeof name, "own record %d: still owned by its thread (plain updates)", i);
		eq_u64(name, own_word[i], own_slot_seen[i]);
	}
	eq_u64("shared record: shared", shared_word, CAP_OWN_SHARED);
	eq_u64("shared record: writes", shared_rec.counters[LOG_C_WRITES], (uint64_t)NT * ITERS);
	eq_u64("shared record: bytes", shared_rec.counters[LOG_C_BYTES_WRITTEN], (uint64_t)NT * ITERS * 10);
	eq_u64("shared record: size histogram", shared_rec.write_hist[log_hist_bucket(10)], (uint64_t)NT * ITERS);
	uint64_t sz = 0;
	for (int i = 0; i < LOG_COMMON_SLOTS; i++)
		if (shared_rec.sizes[i].value == 10)
			sz += shared_rec.sizes[i].count;
	eq_u64("shared record: common sizes", sz, (uint64_t)NT * ITERS);

	uint64_t late_writes = 0, late_bytes = 0, late_shared = 0, late_ok = 0;
	for (int k = 0; k < LATE_RECORDS; k++) {
		late_writes += late_rec[k].counters[LOG_C_WRITES];
		late_bytes += late_rec[k].counters[LOG_C_BYTES_WRITTEN];
		late_shared += late_word[k] == CAP_OWN_SHARED;
		late_ok += late_rec[k].counters[LOG_C_WRITES] == (uint64_t)NT * LATE_ITERS &&
			   late_rec[k].write_hist[log_hist_bucket(3)] == (uint64_t)NT * LATE_ITERS;
	}
	eq_u64("late sharing: every record shared", late_shared, LATE_RECORDS);
	eq_u64("late sharing: every record's writes and histogram exact", late_ok, LATE_RECORDS);
	eq_u64("late sharing: writes", late_writes, (uint64_t)LATE_RECORDS * NT * LATE_ITERS);
	eq_u64("late sharing: bytes", late_bytes, (uint64_t)LATE_RECORDS * NT * LATE_ITERS * 3);
	eq_u64("positions: shared description", shared_pos, (uint64_t)NT * ITERS * 10);
	uint64_t lp = 0;
	for (int k = 0; k < LATE_RECORDS; k++)
		lp += late_pos[k] == (uint64_t)NT * LATE_ITERS * 3;
	eq_u64("positions: late-shared descriptions", lp, LATE_RECORDS);
	return failures ? 1 : 0;
}
