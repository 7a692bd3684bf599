/* SPDX-License-Identifier: MIT */
/*
 * The unified timeline of a job (issue 4, seed 004): the user layer's traced calls (event runs
 * from each process's log) and the kernel layer's events (the job's kernel log) merged into one
 * model, per thread and layer, with every kernel event that happened on a thread inside one of
 * its user calls nested under that call. Kernel work done outside any traced thread (writeback,
 * block completions from interrupts or workers) goes on per-device tracks and is linked to its
 * file by (dev, ino). Times are CLOCK_MONOTONIC ns on both sides: no conversion.
 *
 * Exporters (Perfetto/Chrome JSON, OTF2, CSV) and analyses (SCI, per-call layer breakdown) read
 * only this model.
 */
#ifndef IOSTRATA_ANALYSIS_TIMELINE_H
#define IOSTRATA_ANALYSIS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iostrata/reader.h"

#define TL_NONE UINT32_MAX

enum tl_track_kind {
	TL_TRACK_THREAD = 0, /* one thread's events of one layer */
	TL_TRACK_DEVICE = 1, /* a device's asynchronous work (block requests not inside a traced call) */
	TL_TRACK_ASYNC = 2,  /* other kernel work without a traced thread (writeback, page eviction) */
};

/* A track holds events of one layer that never overlap except by strict nesting. */
struct tl_track {
	int32_t pid, tid;  /* thread tracks; 0 for device and async tracks */
	uint8_t layer;     /* enum log_layer of every event on it */
	uint8_t kind;      /* enum tl_track_kind */
	uint16_t pad;
	uint32_t dev;      /* device tracks: the device (dev_t as stat(2) gives it, 32 bits) */
	char name[64];     /* e.g. "posix", "syscall", "block vda 254:0" */
};

/* event flags: the low 8 bits are the kernel event's LOG_E_* flags */
enum {
	TL_F_RUN = 1u << 8,   /* a user-layer run of count > 1 calls */
	TL_F_OPEN = 1u << 9,  /* the run was still open when the log was read (killed process) */
	TL_F_HIT = 1u << 10,  /* a user read with no page read-in and no block read under it */
	TL_F_MISS = 1u << 11, /* a user read with page read-ins or block reads under it */
};

struct tl_event {
	uint64_t start_ns, end_ns; /* a run: first call's start, last call's end */
	uint64_t busy_ns;          /* the calls' durations added (= end - start for one call) */
	uint64_t min_ns;           /* the fastest call's duration (= busy for one call) */
	uint64_t count;            /* calls: 1 unless a user-layer run */
	uint64_t offset;           /* UINT64_MAX when the op has none */
	uint64_t size;             /* bytes per call */
	int64_t result;            /* user: 0 or -errno; kernel: the event's result */
	uint64_t dev, ino;         /* file identity when known, else 0 */
	int32_t pid, tid;          /* 0 for work without a thread */
	uint8_t layer, op;         /* enum log_layer, enum log_op */
	uint16_t flags;            /* TL_F_*, and LOG_E_* in the low byte */
	uint32_t file;             /* index into files[], TL_NONE when unknown */
	uint32_t track;            /* index into tracks[] */
	uint32_t parent;           /* the user-layer event it nests under (same tid, inside its
				    * interval), TL_NONE when none; user events: TL_NONE */
};

struct tl_file {
	char *path;
	uint64_t dev, ino; /* 0 when no layer knew them */
};

struct tl_proc {
	int32_t pid, ppid;
	char *exe;
	uint64_t start_ns, end_ns; /* from the user log's header; 0 when only the kernel saw it */
};

struct timeline {
	struct tl_event *ev; /* sorted by track, then start_ns, then longer first (parents first) */
	size_t nev;
	struct tl_track *tracks;
	size_t ntracks;
	struct tl_file *files;
	size_t nfiles;
	struct tl_proc *procs;
	size_t nprocs;
	uint64_t t0_ns, t1_ns;       /* earliest start and latest end of any event */
	uint64_t user_events;        /* events from user-layer traces (runs count once) */
	uint64_t user_calls;         /* calls they stand for (runs count `count`) */
	uint64_t kernel_events;      /* events from the kernel log */
	uint64_t dropped;            /* calls and events the logs say were not recorded */
	char *warning;               /* first damage a log reported, NULL when none */
	uint32_t nwarnings;
};

/* Build from the logs of a job, already read (the job pipeline, job.h, finds and reads them): user
 * logs with traces, kernel logs with events. 0, or -errno-like with a one-line message; damage
 * inside a log is a warning. */
int tl_build_from(const struct log_file *logs, size_t n, struct timeline *tl, char *err, size_t errlen);
void tl_free(struct timeline *tl);

/* Exports. 0 or -errno-like with a one-line message in err. */
int tl_export_perfetto(const struct timeline *tl, const char *path, char *err, size_t errlen); /* .gz: gzip */
int tl_export_csv(const struct timeline *tl, FILE *f);
int tl_export_otf2(const struct timeline *tl, const char *dir, char *err, size_t errlen);

/* SCI (seed 004, section 4.3.1): per thread, the time its I/O sequences lost against the fastest
 * similar sequence (same op, same size bucket, same layer path), over its lifetime. */
struct tl_sci_thread {
	int32_t pid, tid;
	uint64_t ios;          /* calls counted */
	uint64_t slowdown_ns;  /* sum over its calls of (D - D_min of the call's group) */
	uint64_t lifetime_ns;
	double score;          /* slowdown / lifetime */
};
struct tl_sci {
	struct tl_sci_thread *threads; /* sorted by score, highest first */
	size_t n;
	double top;                    /* the highest score, 0 when no thread */
};
int tl_sci(const struct timeline *tl, struct tl_sci *out);
void tl_sci_free(struct tl_sci *s);

/* Per-call layer breakdown: per op class and size bucket of user calls, where the time went. */
struct tl_breakdown_row {
	uint8_t op;             /* LOG_OP_READ or LOG_OP_WRITE (other ops: LOG_OP_META) */
	uint8_t size_bucket;    /* log_hist_bucket of the call's size */
	uint64_t calls;
	uint64_t user_ns;       /* time in the user calls (busy) */
	uint64_t syscall_ns;    /* time in system calls nested under them */
	uint64_t block_ns;      /* block-device time of requests nested under them */
	uint64_t hits, misses;  /* reads: page-cache hits and misses (seed 004's rule) */
	uint64_t bytes_user, bytes_syscall, bytes_pagecache, bytes_block;
};
struct tl_breakdown {
	struct tl_breakdown_row *rows;
	size_t n;
};
int tl_breakdown(const struct timeline *tl, struct tl_breakdown *out);
void tl_breakdown_free(struct tl_breakdown *b);

#endif
