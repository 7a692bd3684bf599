/* SPDX-License-Identifier: MIT */
/*
 * The daemon's samplers of the node's own statistics (seed 000's dynamic metric set, seed 001's
 * server-side sources): NFS client statistics (/proc/self/mountstats), Lustre client and server
 * statistics (stats, rpc_stats, md_stats under the procfs and debugfs roots) and NVMe health (the
 * SMART log page of every controller, through libnvme). Each reading is a list of samples
 * (source, instance, metric, value): a metric met for the first time is simply a new one, so a
 * new mount, target or controller appears without a restart. Counters are given as differences
 * since the last reading that was stored (the first reading only sets the base: no sample);
 * gauges (temperatures, percentages, requests in flight) as read. The parsers are src/sys's;
 * this file only turns their figures into samples and keeps the last values.
 */
#ifndef IOSTRATA_DAEMON_SAMPLERS_H
#define IOSTRATA_DAEMON_SAMPLERS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"

#define DMN_SAMPLE_INSTANCE 192
#define DMN_SAMPLE_METRIC 96

struct dmn_sample {
	const char *source;                  /* "nfs", "lustre", "nvme" */
	char instance[DMN_SAMPLE_INSTANCE];  /* a mount point, "osc/lustre-OST0000-osc-...", "nvme0" */
	char metric[DMN_SAMPLE_METRIC];      /* "bytes.normalreadbytes", "read_bytes.sum", "temperature_k" */
	int64_t value;
	int gauge;                           /* 1: a value as read; 0: a counter's difference */
};

/* One server-side distribution (seed 001): N or more requests of one class at one server (a
 * block device, a mount monitor), and the wait and service times of `timed` of them, log2 buckets
 * of ns (a block device's at the default depth: those begun in a sampling window). */
struct dmn_dist {
	char server[DMN_SAMPLE_INSTANCE]; /* "block sda" */
	const char *op;                   /* "read", "write", "other" */
	uint64_t requests, timed;
	uint64_t wait[32], service[32];
};

struct dmn_samples {
	struct dmn_sample *v;
	size_t n, cap;
	struct dmn_dist *dists;
	size_t ndists, capdists;
};

struct dmn_samplers;

int dmn_samplers_new(struct dmn_samplers **out);
void dmn_samplers_free(struct dmn_samplers *s);
/* One reading of the samplers the configuration turns on, into out (its samples emptied first;
 * its distributions appended to). Problems
 * (a file that cannot be read, a controller that does not answer) are said once each through
 * say(ctx, key, text). */
void dmn_samplers_take(struct dmn_samplers *s, const struct dmn_config *c, struct dmn_samples *out,
		       void (*say)(void *ctx, uint64_t key, const char *text), void *ctx);
/* After the interval's transaction: ok 1 makes this reading the base of the next differences;
 * ok 0 keeps the old base (the next reading's differences cover both intervals). */
void dmn_samplers_done(struct dmn_samplers *s, int ok);
void dmn_samples_free(struct dmn_samples *v);

#endif
