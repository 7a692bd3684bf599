/* SPDX-License-Identifier: MIT */
/* Block requests the session never saw complete, put on their records when the log is written
 * (unseen.c; docs/KERNEL.md, "Known gap"). No libbpf: unit-tested on its own. */
#ifndef IOSTRATA_KERNEL_UNSEEN_H
#define IOSTRATA_KERNEL_UNSEEN_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/collect.h"
#include "sys/diskstats.h"

/* Count request ri (issued, or started at the default depth; never seen completing) as unseen on its device's record and, when it
 * is attributed to a file on that device, on the file's record of its process; a record missing
 * (a file whose every request went unseen) is appended to *recs (*n entries, room for *cap).
 * 0, or -ENOMEM. Requests not issued (nor KS_RQ_STARTED), or neither read nor write, count
 * nowhere. */
int ks_add_unseen(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_rq_info *ri);
/* What one request-based device completed over the session, as /proc/diskstats counts it: its own
 * requests (a whole disk's line less its partitions', which the block layer keys by partition). */
struct ks_dev_done {
	uint64_t dev; /* as stat() gives it */
	uint64_t reads, writes, discards, flushes;
	uint64_t bytes_read, bytes_written, bytes_discarded;
};
/* parent[i] for b's line i: 0 for a whole disk, its whole disk's dev for a partition, or this for
 * a device without requests (bio-based: dm, md), which no block program sees. */
#define KS_DEV_NO_RQ UINT64_MAX
/* parent[i] for each line of ds, from /sys/dev/block: a whole disk (0), a partition (its disk),
 * or a device the block layer gives no requests (no `mq`: dm, md, zram). The collector's and the
 * daemon's (its server-side distributions). */
void ks_dev_parents(const struct sys_diskstats *ds, uint64_t *parent);
/* The devices' figures between two readings a (the session's start) and b (its end), one entry a
 * line of b that is request-based (a device new since a counts from zero), at most max: how many. */
size_t ks_dev_done_of(const struct sys_diskstats *a, const struct sys_diskstats *b, const uint64_t *parent,
		      struct ks_dev_done *out, size_t max);
/* The completion alone (`--block-completion`) leaves no entry for a completion the kernel did not
 * run its program for: what device d completed beyond what its record counted (reads, writes,
 * discards, flushes; read and written bytes) goes on that record as unseen. A device with no record
 * gets one when add (a system-wide session; a filtered one keeps only the devices it used). net
 * (the default depth, whose start-side entries counted unseen requests with their bytes at start):
 * only what d did beyond the record's seen + unseen is added, its requests of every kind together.
 * *bytes (when not NULL): the bytes made unseen here, whose file no entry named (a request's bytes
 * merged after its start, a request begun before the session). The requests made unseen, or
 * -ENOMEM. */
int64_t ks_add_unseen_done(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_dev_done *d, int add, int net,
			   uint64_t *bytes);
/* 1 when a file's block record on dev holds unseen requests: bytes a device did beyond its
 * seen + unseen may then be that file's (merged into its request after the start), where on a
 * device without one they are requests begun before the session or other processes' (none of a
 * file the session keeps). */
int ks_file_unseen_on(const struct ks_rec *recs, size_t n, uint64_t dev);
/* A new record at the end of *recs (*n entries, room for *cap; grown by doubling), zeroed; NULL
 * when out of memory. Also collect.c's. */
struct ks_rec *ks_rec_append(struct ks_rec **recs, size_t *n, size_t *cap);

/* The default depth's block layer in sampling windows (block.bpf.c, blk_sampled): device record r
 * takes its counts and bytes from d (/proc/diskstats over the session); what the windows counted
 * stays as samples: the latency histograms, and the time counters scaled from the samples to every
 * request (an estimate, as the system-call layer's); the size histograms (of the samples only) and
 * the errors (not in diskstats) are cleared, untimed_requests = the requests not sampled. */
void ks_sampled_device(struct ks_rec *r, const struct ks_dev_done *d);

#endif
