/* SPDX-License-Identifier: MIT */
/*
 * The maps `iostrata kernel --pin DIR` pins under the BPF filesystem, read from outside (seed
 * 000's sampler): the (device, op, log2 size) aggregates, the per-(pid, op) aggregates of calls
 * that named no traced file, and the kernel side's loss counters. `iostrata kernel maps` prints
 * them; the node daemon samples them. Nothing here prints.
 */
#ifndef IOSTRATA_KERNEL_PINNED_H
#define IOSTRATA_KERNEL_PINNED_H

#include <linux/types.h>
#include <stdint.h>

#include "kernel/kernel.h"

#define KERN_PIN_DIR "/sys/fs/bpf/iostrata"

struct kern_pinned {
	int fsagg, pidagg, kstats, files; /* files: -1 when not pinned */
	int devfiles;                     /* the block layer's device totals; -1 when not pinned */
	int devdist;                      /* -1 without the block layer */
};

/* The default depth's runs of calls (struct ks_run) added to their `files` records and to
 * `fsagg`, on every CPU the calling thread may run on (it moves the thread to each in turn and
 * back; the flush is a failing pread64 the syscall layer's sys_exit program recognizes,
 * KS_RUN_FLUSH_MAGIC): what a reader does before it reads either map, so that they hold every
 * call made before. reached (libbpf_num_possible_cpus() entries, or NULL) gets 1 for each CPU
 * flushed; a CPU outside the thread's cpuset, or offline, keeps its runs. Returns that count of
 * CPUs. */
int ks_runs_flush(unsigned char *reached);
/* Opens the pinned maps under dir: 0, or -errno (-ENOENT: none pinned there). */
int kern_pinned_open(const char *dir, struct kern_pinned *p);
void kern_pinned_close(struct kern_pinned *p);
/* Calls fn for each entry; fn returning non-zero stops. 0, or -errno. */
int kern_pinned_fsagg(const struct kern_pinned *p,
		      int (*fn)(const struct ks_agg_key *k, const struct ks_agg_val *v, void *ctx), void *ctx);
int kern_pinned_pidagg(const struct kern_pinned *p,
		       int (*fn)(const struct ks_pid_key *k, const struct ks_agg_val *v, void *ctx), void *ctx);
/* The block devices' wait and service distributions (devdist; nothing without the block layer). */
int kern_pinned_devdist(const struct kern_pinned *p,
			int (*fn)(const struct ks_dist_key *k, const struct ks_dist_val *v, void *ctx), void *ctx);
/* The loss and event counters (KS_NSTATS of them) and their names. */
void kern_pinned_kstats(const struct kern_pinned *p, uint64_t v[KS_NSTATS]);
extern const char *const kern_kstat_names[KS_NSTATS];

#endif
