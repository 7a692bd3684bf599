/* SPDX-License-Identifier: MIT */
/*
 * Reading the pinned maps (pinned.h) with the bpf syscall.
 */
#include "kernel/pinned.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const kern_kstat_names[KS_NSTATS] = {
	"events", "event_drops", "files_full", "paths_full", "agg_full", "inflight_full", "pids_full", "block_unmatched",
	"closes_unnamed", "fds_unfollowed",
};

int ks_runs_flush(unsigned char *reached)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu;
	size_t sz = CPU_ALLOC_SIZE(ncpu);
	cpu_set_t *old = CPU_ALLOC(ncpu), *one = CPU_ALLOC(ncpu);
	if (old && one && sched_getaffinity(0, sz, old) == 0) {
		for (int cpu = 0; cpu < ncpu; cpu++) {
			CPU_ZERO_S(sz, one);
			CPU_SET_S(cpu, sz, one);
			if (sched_setaffinity(0, sz, one) < 0)
				continue; /* outside the cpuset, or offline */
			syscall(SYS_pread64, -1, NULL, 0, (off_t)KS_RUN_FLUSH_MAGIC);
			if (reached)
				reached[cpu] = 1;
		}
		sched_setaffinity(0, sz, old);
	}
	CPU_FREE(old);
	CPU_FREE(one);
	return ncpu;
}

static int open_one(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = bpf_obj_get(p);
	return fd < 0 ? -errno : fd;
}

int kern_pinned_open(const char *dir, struct kern_pinned *p)
{
	p->fsagg = open_one(dir, "fsagg");
	p->pidagg = open_one(dir, "pidagg");
	p->kstats = open_one(dir, "kstats");
	p->files = open_one(dir, "files");
	p->devfiles = open_one(dir, "devfiles");
	p->devdist = open_one(dir, "devdist");
	if (p->fsagg < 0 || p->pidagg < 0 || p->kstats < 0) {
		int r = p->fsagg < 0 ? p->fsagg : p->pidagg < 0 ? p->pidagg : p->kstats;
		kern_pinned_close(p);
		return r;
	}
	return 0;
}

void kern_pinned_close(struct kern_pinned *p)
{
	int *fds[] = {&p->fsagg, &p->pidagg, &p->kstats, &p->files, &p->devfiles, &p->devdist};
	for (unsigned i = 0; i < sizeof fds / sizeof *fds; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int kern_pinned_fsagg(const struct kern_pinned *p,
		      int (*fn)(const struct ks_agg_key *k, const struct ks_agg_val *v, void *ctx), void *ctx)
{
	struct ks_agg_key k, nk;
	void *prev = NULL;
	ks_runs_flush(NULL);
	while (bpf_map_get_next_key(p->fsagg, prev, &nk) == 0) {
		struct ks_agg_val v;
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(p->fsagg, &k, &v) < 0)
			continue;
		if (fn(&k, &v, ctx))
			break;
	}
	return 0;
}

int kern_pinned_pidagg(const struct kern_pinned *p,
		       int (*fn)(const struct ks_pid_key *k, const struct ks_agg_val *v, void *ctx), void *ctx)
{
	struct ks_pid_key k, nk;
	void *prev = NULL;
	while (bpf_map_get_next_key(p->pidagg, prev, &nk) == 0) {
		struct ks_agg_val v;
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(p->pidagg, &k, &v) < 0)
			continue;
		if (fn(&k, &v, ctx))
			break;
	}
	return 0;
}

int kern_pinned_devdist(const struct kern_pinned *p,
			int (*fn)(const struct ks_dist_key *k, const struct ks_dist_val *v, void *ctx), void *ctx)
{
	struct ks_dist_key k, nk;
	void *prev = NULL;
	if (p->devdist < 0)
		return 0;
	ks_runs_flush(NULL); /* the devices' runs hold their latest completions' distributions */
	while (bpf_map_get_next_key(p->devdist, prev, &nk) == 0) {
		struct ks_dist_val v;
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(p->devdist, &k, &v) < 0)
			continue;
		if (fn(&k, &v, ctx))
			break;
	}
	return 0;
}

void kern_pinned_kstats(const struct kern_pinned *p, uint64_t v[KS_NSTATS])
{
	for (__u32 i = 0; i < KS_NSTATS; i++) {
		__u64 x = 0;
		bpf_map_lookup_elem(p->kstats, &i, &x);
		v[i] = x;
	}
}
