/* SPDX-License-Identifier: MIT */
/* What the kernel layer's run tests share (runs_static.c, fdtab_static.c): pinning a thread to
 * one CPU (per-CPU runs are tested by moving threads between CPUs) and opening a file of a
 * directory. Needs _GNU_SOURCE before the first include. */
#ifndef IOSTRATA_TEST_RUNS_H
#define IOSTRATA_TEST_RUNS_H

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

/* The set holding only the n-th CPU of s (modulo their number). */
static inline cpu_set_t nth_cpu(const cpu_set_t *s, int n)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	int k = n % CPU_COUNT(s);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, s) && !k--) {
			CPU_SET(cpu, &one);
			break;
		}
	return one;
}

/* Pin the calling thread to the n-th CPU it may run on (modulo their number). */
static inline void pin(int n)
{
	cpu_set_t s;
	CHECK(sched_getaffinity(0, sizeof s, &s) == 0);
	cpu_set_t one = nth_cpu(&s, n);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
}

/* dir/name opened with flags (mode 0644 when made). */
static inline int open_in(const char *dir, const char *name, int flags)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, flags, 0644);
	CHECK(fd >= 0);
	return fd;
}

#endif
