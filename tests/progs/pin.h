/* SPDX-License-Identifier: MIT */
/* Pinning a test program's thread to one CPU (the kernel layer's per-CPU runs are tested by
 * moving threads between CPUs). Needs _GNU_SOURCE before the first include. */
#ifndef IOSTRATA_TEST_PIN_H
#define IOSTRATA_TEST_PIN_H

#include <pthread.h>
#include <sched.h>

#include "check.h"

/* Pin the calling thread to the n-th CPU it may run on (modulo their number). */
static inline void pin(int n)
{
	cpu_set_t s, one;
	CHECK(sched_getaffinity(0, sizeof s, &s) == 0);
	int k = n % CPU_COUNT(&s);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &s) || k--)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
		return;
	}
}

#endif
