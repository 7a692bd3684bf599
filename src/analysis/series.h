/* SPDX-License-Identifier: MIT */
/*
 * Time series of a traced job (job.h): the timeline's events (timeline.h) cut into equal time
 * buckets, per layer (bytes read, bytes written, read and write calls) and per process (bytes at
 * the lowest user layer that has events), for the HTML report's charts and the web UI. Built once
 * by the job pipeline; renderers only draw it. Untraced jobs have no series (their figures are
 * totals: nothing says when the bytes moved).
 */
#ifndef IOSTRATA_ANALYSIS_SERIES_H
#define IOSTRATA_ANALYSIS_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/timeline.h"

#define TL_SERIES_BUCKETS 100 /* at most; fewer when the trace spans less than 100 µs */

struct tl_series_layer {
	uint8_t layer;        /* enum log_layer */
	uint64_t *bytes_read; /* [nbuckets] each */
	uint64_t *bytes_written;
	uint64_t *reads;      /* calls (a run of n calls counts n) */
	uint64_t *writes;
};

struct tl_series_proc {
	int32_t pid;
	uint64_t *bytes; /* [nbuckets]: read + written at the heatmap's layer */
};

struct tl_series {
	uint64_t t0_ns;     /* the timeline's first event (CLOCK_MONOTONIC) */
	uint64_t bucket_ns; /* width of one bucket */
	size_t nbuckets;    /* 0 when the timeline has no data event */
	struct tl_series_layer *layers; /* layers with read or write events, by layer number */
	size_t nlayers;
	uint8_t proc_layer; /* the heatmap's layer: the lowest user layer with events */
	struct tl_series_proc *procs;   /* sorted by pid */
	size_t nprocs;
};

/* An event's bytes and calls are spread over the buckets its interval covers, in proportion to the
 * overlap, in integers that add up exactly to its own. 0 or -ENOMEM. */
int tl_series_build(const struct timeline *tl, struct tl_series *out);
void tl_series_free(struct tl_series *s);

#endif
