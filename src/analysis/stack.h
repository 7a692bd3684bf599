/* SPDX-License-Identifier: MIT */
/* "Down the stack" figures of a job with a kernel log (stack.c). */
#ifndef IOSTRATA_ANALYSIS_STACK_H
#define IOSTRATA_ANALYSIS_STACK_H

#include "analysis/profile.h"

/* Layers of the per-file view. */
enum { ANA_SL_USER, ANA_SL_SYSCALL, ANA_SL_BLOCK, ANA_SL_N };

struct ana_device {
	const char *path; /* "<device NAME M:m>" */
	uint64_t dev;
	uint64_t c[LOG_NCOUNTERS];
	uint64_t read_hist[LOG_HIST_BUCKETS], write_hist[LOG_HIST_BUCKETS];
	uint64_t read_lat_hist[LOG_HIST_BUCKETS], write_lat_hist[LOG_HIST_BUCKETS]; /* device time */
};

struct ana_stack_file {
	const char *path;
	uint64_t bytes[ANA_SL_N][2]; /* [layer][0 read, 1 written] */
	uint64_t ops[ANA_SL_N];
	uint64_t pages_read_in, pages_dirtied;
};

struct ana_stack {
	int present; /* the job has a kernel log */
	uint64_t hit_reads, miss_reads, bytes_requested, bytes_read_in;
	uint64_t pages_added_write, pages_dirtied, pages_evicted, faults, readahead_pages;
	uint64_t block_bytes_read, block_bytes_written;
	double read_amplification, write_amplification; /* block bytes / syscall bytes; 0: no syscall bytes */
	struct ana_device *devices;
	size_t ndevices;
	struct ana_stack_file *files; /* data files the syscall layer saw, by syscall bytes desc */
	size_t nfiles;
};

int ana_stack_build(const struct ana_profile *p, struct ana_stack *s);
void ana_stack_free(struct ana_stack *s);
/* The bucket holding the q-quantile of a log2 histogram, -1 when it is empty. */
int ana_hist_percentile(const uint64_t *h, double q);

#endif
