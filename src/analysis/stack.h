/* SPDX-License-Identifier: MIT */
/* "Down the stack" figures of a job with a kernel log (stack.c). */
#ifndef IOSTRATA_ANALYSIS_STACK_H
#define IOSTRATA_ANALYSIS_STACK_H

#include "analysis/profile.h"

/* Layers of the per-file view: the topmost user layer that saw the file, its system calls, the
 * block requests charged to it. */
enum { ANA_SL_USER, ANA_SL_SYSCALL, ANA_SL_BLOCK, ANA_SL_N };

/* A mounted filesystem, for naming devices: the caller's knowledge (the report reads
 * /proc/self/mountinfo when the logs come from this host); the logs only hold device numbers. */
struct ana_mount {
	uint64_t dev; /* as stat(2) gives it */
	const char *path, *fstype;
};

struct ana_device {
	const char *path;  /* "<device NAME M:m>" as the kernel log names it */
	char name[64];     /* NAME, or "M:m" when the path does not say */
	uint64_t dev;      /* as stat(2) gives it */
	unsigned major, minor;
	const struct ana_mount *mount; /* NULL when unknown */
	uint64_t c[LOG_NCOUNTERS];
	uint64_t read_hist[LOG_HIST_BUCKETS], write_hist[LOG_HIST_BUCKETS];
	uint64_t read_lat_hist[LOG_HIST_BUCKETS], write_lat_hist[LOG_HIST_BUCKETS]; /* device time */
	uint64_t unseen[3]; /* requests never seen completing, their bytes read, written (record.unseen_*) */
};

struct ana_stack_file {
	const char *path;
	unsigned user_layer;         /* mpiio, stdio or posix: the topmost with calls; 0 if none saw it */
	uint64_t bytes[ANA_SL_N][2]; /* [layer][0 read, 1 written] */
	uint64_t ops[ANA_SL_N][2];   /* [layer][0 reads, 1 writes] */
	uint64_t unseen[3];          /* block requests never seen completing, their bytes read, written */
	uint64_t pages_read_in, pages_added_write, pages_dirtied;
	uint64_t max_read_end;       /* the system calls' furthest read */
};

struct ana_stack {
	int present; /* the job has a kernel log */
	uint64_t hit_reads, miss_reads, bytes_requested, bytes_read_in;
	uint64_t pages_added_write, pages_dirtied, pages_evicted, faults, readahead_pages;
	/* devices against system calls, all of the job's: below 1 when the cache absorbed reads or
	 * writes are still dirty; above when requests are larger than the calls (read-ahead, whole
	 * blocks, program loading). 0 when there are no syscall bytes. */
	uint64_t block_bytes_read, block_bytes_written, syscall_bytes_read, syscall_bytes_written;
	double read_amplification, write_amplification;
	/* the same over the data files (ana_stack_file), with block bytes the kernel charged to them.
	 * Block bytes here are seen + unseen: what the devices moved. */
	uint64_t file_syscall_bytes[2], file_block_bytes[2];
	double file_read_amplification, file_write_amplification;
	/* calls on the data files per direction ([0 reads, 1 writes]): the program's calls, each file
	 * counted at its topmost user layer (user_calls[layer]: the files whose topmost it is, the sum
	 * in user_calls[0]), against the system calls: what buffering or MPI-IO aggregation did */
	uint64_t user_calls[ANA_NLAYERS][2], syscalls[2];
	uint64_t unseen[3];         /* over the devices: block requests never seen completing, bytes r/w */
	struct ana_device *devices; /* by path */
	size_t ndevices;
	struct ana_stack_file *files; /* data files the syscall layer saw, by syscall bytes desc */
	size_t nfiles;
};

/* 0 or -ENOMEM. mounts (may be NULL) name the devices' mount points. */
int ana_stack_build(const struct ana_profile *p, const struct ana_mount *mounts, size_t nmounts,
		    struct ana_stack *s);
void ana_stack_free(struct ana_stack *s);
/* The devices' reads and writes (*requests) and how many of them were timed (*timed: their
 * latency histograms; fewer when the block layer sampled, LOG_KF_BLOCK_SAMPLED). */
void ana_block_timed(const struct ana_stack *s, uint64_t *requests, uint64_t *timed);
/* The bucket holding the q-quantile of a log2 histogram, -1 when it is empty. */
int ana_hist_percentile(const uint64_t *h, double q);
/* The smallest value of log2 bucket b (0 for bucket 0, 2^(b-1) after). */
uint64_t ana_hist_bucket_low(int b);

#endif
