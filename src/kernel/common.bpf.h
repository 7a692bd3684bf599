/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What every iostrata eBPF program shares: the maps (each object declares them; the loader
 * makes all objects use the first one's, see session.c) and small helpers for filtering, file
 * identity, aggregation and events. Included after vmlinux.h and the libbpf headers.
 */
#ifndef IOSTRATA_COMMON_BPF_H
#define IOSTRATA_COMMON_BPF_H

#include "kernel/kernel.h"
#include "kernel/syscall.h"

#ifndef LOG_LAYER_SYSCALL /* the enum lives in format.h, which BPF cannot include */
#define LOG_LAYER_MPIIO 3
#define LOG_LAYER_SYSCALL 4
#define LOG_LAYER_PAGECACHE 6
#define LOG_LAYER_FS 7
#define LOG_LAYER_BLOCK 8
#endif
#define LOG_E_WRITEBACK 1
#define LOG_E_CACHE_MISS 2

const volatile struct ks_filter cfg = {};

/* tgid -> 1: the process tree being traced (when cfg.by_pid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

/* The same set as bits, tgid / 64 -> word (sized from pid_max at load, syscall.c): an array
 * lookup the verifier inlines, where `tracked` costs a hash of the key on every event. A set bit
 * is always a tracked tgid; a clear one is asked of `tracked` (user space sets the bits with a
 * read-modify-write that may race a fork setting another bit of the same word: only the fast path
 * is then lost, never the process). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_TGID_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tracked_bits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_FILES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_file_key);
	__type(value, struct ks_file_val);
} files SEC(".maps");

/* The block layer's device totals (pid 0, LOG_LAYER_BLOCK, dev, ino 0) apart from `files`: a
 * system-wide session on a busy node fills `files` with other processes' files, and a device's
 * totals must still equal /proc/diskstats. Same key and value as `files`; readers take both. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_DEVS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_file_key);
	__type(value, struct ks_file_val);
} devfiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_PATHS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_path_key);
	__type(value, struct ks_path_val);
} paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_PATHS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_inode_key);
	__type(value, __u8);
} inodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct ks_inflight);
} inflight SEC(".maps");

/* The thread's traced syscall in flight (syscall.bpf.c fills it; active == 0 when none): other
 * layers use it to attribute work done inside a call to its file and to count pages read in. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ks_inflight);
} task_call SEC(".maps");

/* dev_t -> 1: devices a request the filters want went to (a traced process's, or one for a file
 * a traced process met: its writeback, its read-in). Every device's totals are counted from the session's start; under a process or
 * cgroup filter the log keeps these devices' (collect.c), whose totals equal /proc/diskstats. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_DEVS);
	__type(key, __u64);
	__type(value, __u8);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} kstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, KS_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} notify SEC(".maps");

/* Per CPU: the block completions' runs (struct ks_blk_run, kernel.h). Declared by every object:
 * sys_exit flushes them for a reader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * KS_BLK_SLOTS);
	__type(key, __u32);
	__type(value, struct ks_blk_run);
} blk_runs SEC(".maps");

/* The block devices' wait and service distributions, per device (as stat(2) names it: the
 * partition, else the disk) and class (kernel.h), for a
 * pinned session's sampler (cfg.aggregates). Declared by every object: a reader's flush in
 * sys_exit moves the devices' runs (ks_blk_flush) into it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_DEVS);
	__type(key, struct ks_dist_key);
	__type(value, struct ks_dist_val);
} devdist SEC(".maps");

/* Per CPU: the page faults' run (struct ks_fault_run, kernel.h). Declared by every object:
 * sys_exit flushes it for a reader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_fault_run);
} fault_runs SEC(".maps");

/* Per CPU, [0] reads and [1] writes: the run of untimed calls on one file being counted (struct
 * ks_run, default depth). sys_exit and its flush, and the page-cache and filesystem programs adding a write's pages
 * (ks_call_batch), touch it: programs that do not nest on a CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct ks_run);
} runs SEC(".maps");

/* Descriptor tables' busy and generation counts (kernel.h, KS_FDTAB_*): what a call's check reads
 * instead of walking its descriptor to its struct file. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_FDTAB_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} fdtab SEC(".maps");

static __always_inline __u32 fdtab_slot(__u64 files)
{
	return (__u32)((files >> 6) ^ (files >> 18)) & (KS_FDTAB_SLOTS - 1);
}

/* Zero values to insert from (map values are too large for the 512-byte stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_file_val);
} zero_file SEC(".maps");

struct path_scratch {
	char buf[2 * KS_PATH_MAX];
	struct ks_path_val pv;
	__u64 names[16]; /* d_name.name of each component, leaf first */
	__u64 d, m;      /* walk position: dentry, mount */
	__u32 n, pos;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} scratch_path SEC(".maps");

static __always_inline void ks_stat(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&kstats, &slot);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/* log2 bucket as log_hist_bucket(): 0 for 0, b for [2^(b-1), 2^b), capped at KS_HIST-1.
 * A global function: the verifier checks it once and sees an unknown result at each call,
 * instead of following its branches into everything after every call. */
__noinline int ks_log2(__u64 v)
{
	if (!v)
		return 0;
	/* BPF has no count-leading-zeros instruction: a binary search for the top bit */
	int b = 1;
	if (v >= (1ULL << 32))
		v >>= 32, b += 32;
	if (v >= (1ULL << 16))
		v >>= 16, b += 16;
	if (v >= (1ULL << 8))
		v >>= 8, b += 8;
	if (v >= (1ULL << 4))
		v >>= 4, b += 4;
	if (v >= (1ULL << 2))
		v >>= 2, b += 2;
	if (v >= 2)
		b += 1;
	return b > KS_HIST - 1 ? KS_HIST - 1 : b;
}

static __always_inline __u32 ks_bucket(__u64 v)
{
	return (__u32)ks_log2(v) & (KS_HIST - 1);
}

/* ks_bucket(4096): [2^12, 2^13). A whole page's, which the per-page programs meet on every page. */
#define KS_BUCKET_PAGE 13

/* The kernel's dev_t (major << 20 | minor) as glibc's makedev() encodes it for stat(2). */
static __always_inline __u64 ks_udev(__u32 kdev)
{
	__u64 ma = kdev >> 20, mi = kdev & 0xfffff;
	return ((ma & 0xfff) << 8) | ((ma & ~0xfffULL) << 32) | (mi & 0xff) | ((mi & ~0xffULL) << 12);
}

static __always_inline void ks_tgid_mark(__u32 tgid)
{
	__u32 w = tgid / 64;
	__u64 *v = bpf_map_lookup_elem(&tracked_bits, &w);
	if (v)
		__sync_fetch_and_or(v, 1ULL << (tgid % 64));
}

static __always_inline bool ks_tgid_tracked(__u32 tgid)
{
	__u32 w = tgid / 64;
	__u64 *v = bpf_map_lookup_elem(&tracked_bits, &w);
	if (v && (*v & (1ULL << (tgid % 64))))
		return true;
	return bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/* Is the current task, of process tgid, one we trace? (The collector itself never is.) */
static __always_inline bool ks_tgid_wanted(__u32 tgid)
{
	if (tgid == cfg.self_tgid)
		return false;
	if (cfg.cgroup_id && bpf_get_current_cgroup_id() != cfg.cgroup_id)
		return false;
	if (cfg.by_pid && !ks_tgid_tracked(tgid))
		return false;
	return true;
}

static __always_inline bool ks_task_wanted(void)
{
	return ks_tgid_wanted(bpf_get_current_pid_tgid() >> 32);
}

static __always_inline bool ks_filtered(void)
{
	return cfg.by_pid || cfg.cgroup_id;
}

/* Per CPU: the device ks_dev_used last found in `devs` (which only grows), so that a run of
 * requests to one device asks the hash once. An interrupt writing it in between leaves another
 * device that is in `devs` too. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dev_seen SEC(".maps");

/* A device a traced process used (see `devs`). */
static __always_inline void ks_dev_used(__u64 dev)
{
	if (!ks_filtered())
		return;
	__u32 zero = 0;
	__u64 *seen = bpf_map_lookup_elem(&dev_seen, &zero);
	if (seen && dev && *seen == dev)
		return;
	if (!bpf_map_lookup_elem(&devs, &dev)) {
		__u8 one = 1;
		if (bpf_map_update_elem(&devs, &dev, &one, BPF_NOEXIST) && !bpf_map_lookup_elem(&devs, &dev)) {
			ks_stat(KS_STAT_AGG_FULL);
			return;
		}
	}
	if (seen)
		*seen = dev;
}

/* Work without a process context (writeback, eviction, completions): wanted when no process
 * filter is set, or when the file is one a traced process touched (its name is in `paths`). */
static __always_inline bool ks_inode_wanted(__u64 dev, __u64 ino)
{
	if (!cfg.by_pid && !cfg.cgroup_id)
		return true;
	struct ks_inode_key k = {.dev = dev, .ino = ino};
	return bpf_map_lookup_elem(&inodes, &k) != NULL;
}

#define PF_KTHREAD 0x00200000

/* A kernel pointer of unknown type as a typed one: its fields are then plain guarded loads, not a
 * bpf_probe_read_kernel call each (the verifier turns this into a move). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define KS_TYPED(type, p) ((type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)))

/* The file filters (--dev, --fstype, --inode) for layers that know only (dev, ino): the device is
 * compared here; the others hold for exactly the files the syscall layer met and let through
 * (`inodes`), which saves a path walk. */
static __always_inline bool ks_file_wanted(__u64 dev, __u64 ino)
{
	if (cfg.dev && dev != cfg.dev)
		return false;
	if (cfg.ino || cfg.fstype[0]) {
		struct ks_inode_key k = {.dev = dev, .ino = ino};
		return bpf_map_lookup_elem(&inodes, &k) != NULL;
	}
	return true;
}

/* Whose work on (dev, ino) this is, for the page-cache and filesystem layers: a traced process's
 * own goes to its pid; a kernel thread's (writeback, kswapd), or (ctxfree) work any process may do
 * on a file's behalf (eviction, allocation at writeback), to pid 0 when the file is one a traced
 * process met. What an untraced process does for itself is not ours: false. */
static __always_inline bool ks_owner(__u64 dev, __u64 ino, bool ctxfree, __u32 *pid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	bool kthread = t->flags & PF_KTHREAD;
	if (!ks_file_wanted(dev, ino))
		return false;
	if (!kthread && ks_task_wanted()) {
		*pid = bpf_get_current_pid_tgid() >> 32;
		return true;
	}
	if ((!kthread && !ctxfree) || !ks_inode_wanted(dev, ino))
		return false;
	*pid = 0;
	return true;
}

/* The aggregate of key in map (`files` or `devfiles`), created on first use; NULL (and counted)
 * when full. Inlined: each caller's map is a constant the verifier knows. */
static __always_inline struct ks_file_val *ks_file_in(void *map, const struct ks_file_key *k)
{
	struct ks_file_val *v = bpf_map_lookup_elem(map, k);
	if (v)
		return v;
	__u32 zero = 0;
	struct ks_file_val *z = bpf_map_lookup_elem(&zero_file, &zero);
	if (!z)
		return NULL;
	if (bpf_map_update_elem(map, k, z, BPF_NOEXIST) && !bpf_map_lookup_elem(map, k)) {
		ks_stat(KS_STAT_FILES_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(map, k);
}

/* The aggregate of (pid, layer, dev, ino): a device's totals in `devfiles`, the rest in `files`. */
static __always_inline struct ks_file_val *ks_file_gen(__u32 pid, __u16 layer, __u64 dev, __u64 ino, __u32 gen)
{
	struct ks_file_key k = {.pid = pid, .layer = layer, .gen = gen, .dev = dev, .ino = ino};
	if (layer == LOG_LAYER_BLOCK && !pid && !ino)
		return ks_file_in(&devfiles, &k);
	return ks_file_in(&files, &k);
}

/* The address of the struct file behind a descriptor of the current task, 0 when none. Typed
 * (BTF) pointers all the way, so the field reads are plain guarded loads, not helper calls: this
 * runs on every traced call. */
static __always_inline __u64 ks_fd_file_addr(struct task_struct *t, int fd)
{
	struct files_struct *files = t->files;
	if (!files || fd < 0)
		return 0;
	struct fdtable *fdt = files->fdt;
	if (!fdt || (unsigned)fd >= fdt->max_fds)
		return 0;
	struct file **arr = fdt->fd;
	__u64 f = 0;
	bpf_probe_read_kernel(&f, sizeof f, &arr[fd]);
	return f;
}

/* 1 for a read(2) of the family, 2 for a write, 0 for any other system call number. */
static __always_inline int ks_rw_of(long nr)
{
	switch (nr) {
	case KS_NR_read:
	case KS_NR_pread64:
	case KS_NR_readv:
	case KS_NR_preadv:
	case KS_NR_preadv2:
		return 1;
	case KS_NR_write:
	case KS_NR_pwrite64:
	case KS_NR_writev:
	case KS_NR_pwritev:
	case KS_NR_pwritev2:
		return 2;
	}
	return 0;
}

#define PF_IO_WORKER 0x00000010


static __always_inline struct ks_file_val *ks_file(__u32 pid, __u16 layer, __u64 dev, __u64 ino)
{
	return ks_file_gen(pid, layer, dev, ino, 0);
}

#define KS_ADD(v, counter, n) __sync_fetch_and_add(&(v)->c[LOG_C_##counter], (n))

/* ks_val_move as a global function: the verifier checks its loop over the counters once, not at
 * every call in every caller. */
__noinline int ks_val_move_global(struct ks_file_val *d, struct ks_file_val *s)
{
	if (!d || !s)
		return 0;
	ks_val_move(d, s);
	return 1;
}

/* The same, s left as it is: a file's block run (KS_BLK_RUN_DEV) added to its device first. */
__noinline int ks_val_add_global(struct ks_file_val *d, struct ks_file_val *s)
{
	if (!d || !s)
		return 0;
	ks_val_fold(d, s, 0);
	return 1;
}

/* The `devdist` entry of (dev, cls), created on first use; NULL (counted) when the map is full. */
static __always_inline struct ks_dist_val *ks_dist_of(__u64 dev, __u32 cls)
{
	struct ks_dist_key k = {.dev = dev, .cls = cls};
	struct ks_dist_val *v = bpf_map_lookup_elem(&devdist, &k);
	if (v)
		return v;
	static const struct ks_dist_val zero;
	if (bpf_map_update_elem(&devdist, &k, &zero, BPF_NOEXIST) < 0 && !bpf_map_lookup_elem(&devdist, &k)) {
		ks_stat(KS_STAT_AGG_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&devdist, &k);
}

/* A device run's distributions to `devdist` (what one could not take stays in the run). */
static __noinline void ks_dist_flush(struct ks_blk_run *r)
{
	if (!r)
		return;
	for (__u32 c = 0; c < 3; c++) {
		struct ks_dist_val *s = &r->dist[c];
		if (!s->count)
			continue;
		struct ks_dist_val *v = ks_dist_of(r->key.dev, c);
		if (!v)
			continue;
		__sync_fetch_and_add(&v->count, s->count);
		s->count = 0;
		for (int b = 0; b < KS_HIST; b++) {
			if (s->wait_hist[b]) {
				__sync_fetch_and_add(&v->wait_hist[b], s->wait_hist[b]);
				s->wait_hist[b] = 0;
			}
			if (s->svc_hist[b]) {
				__sync_fetch_and_add(&v->svc_hist[b], s->svc_hist[b]);
				s->svc_hist[b] = 0;
			}
		}
	}
}

/* A block run to its record (created if need be); the slot is then free. False when the table
 * has no room for the record (counted as files_full): the run stays in its slot. A run holding
 * its device's figures too (KS_BLK_RUN_DEV) goes to the device's totals first, and there alone
 * when its file's record cannot be had (the device's totals are never what a full `files`
 * drops). A device's run in a pinned session takes its distributions to `devdist` too. */
static __noinline bool ks_blk_flush(struct ks_blk_run *r)
{
	if (!r->active)
		return true;
	bool dev = r->active == KS_BLK_RUN_DEV;
	if (cfg.aggregates && (!r->key.ino || dev))
		ks_dist_flush(r);
	struct ks_file_val *d = NULL;
	if (dev && !(d = ks_file(0, LOG_LAYER_BLOCK, r->key.dev, 0)))
		return false;
	struct ks_file_val *v = ks_file(r->key.pid, LOG_LAYER_BLOCK, r->key.dev, r->key.ino);
	if (!v) {
		if (!dev)
			return false;
		v = d; /* the file's figures lost, counted in files_full; its device's kept */
	} else if (dev) {
		ks_val_add_global(d, &r->v);
	}
	r->active = 0;
	ks_val_move_global(v, &r->v);
	return true;
}

/* Every block run of this CPU to its record, for a reader (sys_exit of its flush call). A
 * completion interrupting this finds `busy` and counts on the record itself. */
static __noinline void ks_blk_flush_cpu(void)
{
	for (int i = 0; i < 2 * KS_BLK_SLOTS; i++) {
		__u32 key = i; /* i stays in a register the verifier follows */
		struct ks_blk_run *r = bpf_map_lookup_elem(&blk_runs, &key);
		if (!r || !r->active)
			continue;
		*(volatile __u32 *)&r->busy = 1;
		asm volatile("" ::: "memory");
		ks_blk_flush(r);
		asm volatile("" ::: "memory");
		*(volatile __u32 *)&r->busy = 0;
	}
}

/* A fault run to its record; false when the table has no room for it (counted as files_full:
 * the run stays in its slot). */
static __noinline bool ks_fault_flush(struct ks_fault_run *r)
{
	if (!r || !r->faults)
		return true;
	struct ks_file_val *v = ks_file(r->pid, LOG_LAYER_PAGECACHE, r->dev, r->ino);
	if (!v)
		return false;
	KS_ADD(v, MMAP_FAULTS, r->faults);
	r->faults = 0;
	return true;
}

/* This CPU's fault run to its record, for a reader (sys_exit of its flush call). */
static __always_inline void ks_fault_flush_cpu(void)
{
	__u32 zero = 0;
	struct ks_fault_run *r = bpf_map_lookup_elem(&fault_runs, &zero);
	if (!r || r->busy || !r->faults)
		return;
	*(volatile __u32 *)&r->busy = 1;
	asm volatile("" ::: "memory");
	ks_fault_flush(r);
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&r->busy = 0;
}

static __always_inline void ks_max(__u64 *slot, __u64 val)
{
	if (*slot < val) /* a lost race keeps a value within one op of the maximum */
		*slot = val;
}

static __always_inline void ks_first(__u64 *slot, __u64 t)
{
	if (!*slot || *slot > t)
		*slot = t;
}

/* How many threads' slots hold a batch (`batched`, ks_call_batch) that no exit has taken yet,
 * machine-wide: while it is 0, which it is while writes go to their runs, sys_exit knows there is
 * none to take without looking up the thread's slot. A batch whose exit is never seen keeps it
 * above 0: exits then look, as they would without it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} batch_pending SEC(".maps");

static __always_inline void ks_batch_pending(__s64 d)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&batch_pending, &zero);
	if (n)
		__sync_fetch_and_add(n, d);
}

/* What the page-cache and filesystem programs batched into this call (ks_call_batch): one update of
 * their records per call instead of one per page. */
static __noinline void ks_batch_flush(__u32 pid, struct ks_inflight *c, __u64 start, __u64 end)
{
	if (!c)
		return;
	if (c->pages_in || c->pc_added_write || c->pc_dirtied) {
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, c->dev, c->ino);
		if (v) {
			if (c->pages_in)
				KS_ADD(v, PAGES_READ_IN, c->pages_in);
			if (c->pc_added_write)
				KS_ADD(v, PAGES_ADDED_WRITE, c->pc_added_write);
			if (c->pc_dirtied)
				KS_ADD(v, PAGES_DIRTIED, c->pc_dirtied);
		}
	}
	if (c->fs_writes) {
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_FS, c->dev, c->ino);
		if (v) {
			KS_ADD(v, WRITES, c->fs_writes);
			KS_ADD(v, BYTES_WRITTEN, c->fs_bytes);
			ks_max(&v->c[LOG_C_MAX_WRITE_END], c->fs_max_end);
			ks_first(&v->c[LOG_C_WRITE_FIRST], start);
			ks_max(&v->c[LOG_C_WRITE_LAST], end);
			/* per page of one call: their mean size (all whole pages, usually) */
			__sync_fetch_and_add(&v->size_hist[1][ks_bucket(c->fs_bytes / c->fs_writes)], c->fs_writes);
		}
	}
}

/* Where page-cache or filesystem work under a system call on its own file goes (ks_call_batch). */
struct ks_batch {
	struct ks_inflight *c; /* the thread's slot: a timed call's, or an untimed call's batch */
	struct ks_run *s;      /* or this CPU's run of writes, which the untimed write is part of */
	int rw;                /* 1 a read (ks_rw_of), 2 a write, 0 a timed call of another kind */
};

/* (dev, ino) of an inode; false for none. The per-page programs read them only when the work is
 * not batched into the call (or events are asked for): the batch is told the inode itself. */
static __always_inline bool ks_inode_id(struct inode *in, __u64 *dev, __u64 *ino)
{
	struct super_block *sb = in ? in->i_sb : NULL;
	if (!sb)
		return false;
	*dev = ks_udev(sb->s_dev);
	*ino = in->i_ino;
	return true;
}

/* Where a task's saved user registers lie from its stack's base: a constant of the kernel's build
 * (THREAD_SIZE less the registers' size and the stack's top padding), asked of bpf_task_pt_regs
 * once per loaded object and kept here. A page of a write asks the registers for the system call:
 * with the helper's call the page-cache program of a 4 KiB write took about 40 ns a run more
 * under bpf_stats (kern17) than with two loads and an add. */
static __u64 ks_regs_off;

static __always_inline struct pt_regs *ks_task_regs(struct task_struct *t)
{
	__u64 off = ks_regs_off, stack = (__u64)t->stack;
	if (!off) {
		off = (__u64)bpf_task_pt_regs(t) - stack;
		ks_regs_off = off;
	}
	return bpf_rdonly_cast((void *)(stack + off), bpf_core_type_id_kernel(struct pt_regs));
}

/* Is t inside the write whose page last passed ks_call_batch's check into run s: the same thread
 * (task address, tid) and no write of it ended since (ioac.syscw, which the kernel moves at the end
 * of every write)? A kernel without task I/O accounting says no: every page is then checked. */
static __always_inline bool ks_run_chk(const struct ks_run *s, struct task_struct *t)
{
	if (!bpf_core_field_exists(t->ioac))
		return false;
	return s->chk_task == (__u64)t && s->chk_syscw == t->ioac.syscw && s->chk_tid == (__u32)t->pid && s->file;
}

/* Is this CPU's run of writes s the file of host, by the identity its records are keyed by (device,
 * inode number and generation, with the inode's address first)? Then a page of host that the run's
 * process dirties or writes into belongs on the run's records whatever call it comes in: the
 * records are per file and process, not per call. The super block's line read here cost dirty
 * and write_end 10-15 ns a run when read first (kern17): ks_run_chk is asked before. */
static __always_inline bool ks_run_is(const struct ks_run *s, struct inode *host, struct task_struct *t)
{
	struct super_block *sb = host->i_sb;
	return s->inode == (__u64)host && s->tgid == t->tgid && s->file && sb && s->ino == host->i_ino &&
	       s->gen == host->i_generation && s->dev == ks_udev(sb->s_dev) &&
	       (!cfg.cgroup_id || bpf_get_current_cgroup_id() == cfg.cgroup_id);
}

/* Does the current task hold host's i_rwsem for writing? A buffered write holds it from before its
 * first page to after its last (ext4, xfs's IOLOCK, the generic write path); a read of ext4 takes
 * none, one of xfs takes it shared (the reader bit set in `owner`). A kernel built without the
 * owner field (PREEMPT_RT's rwsem) says no, and the caller checks the descriptor instead. */
static __always_inline bool ks_writing(struct inode *host, struct task_struct *t)
{
	if (!bpf_core_field_exists(host->i_rwsem.owner))
		return false;
	return (__u64)host->i_rwsem.owner.counter == (__u64)t;
}

/* The task writing into host's cache, found without asking which task is running
 * (bpf_get_current_task_btf, a helper call): the holder of host's i_rwsem for writing. Every
 * buffered write of a regular file's cache (write(2) and its family, splice, copy_file_range, a
 * kernel writer) holds it from before its first folio to after its last, and a filesystem's copy
 * into the cache (ext4's write_end, xfs's buffered write) runs inside it, so the holder is the task
 * copying. NULL (ks_call_batch then asks for the current task): no holder, readers', a kernel
 * without the owner field, or the default depth, which has no run to find by it. Only for those
 * programs: pages added or dirtied come in other tasks' faults and reads too. */
static __always_inline struct task_struct *ks_writer(struct inode *host)
{
	if (cfg.lat_every <= 1 || !bpf_core_field_exists(host->i_rwsem.owner))
		return NULL;
	__u64 o = host->i_rwsem.owner.counter;
	if (!o || (o & 7)) /* none, or readers' */
		return NULL;
	return KS_TYPED(struct task_struct, (void *)o);
}

/* The call the current thread is inside, when it is on host, the inode of the page-cache or
 * filesystem work being seen: that work is batched into the call and counted at its exit
 * (syscall.bpf.c), instead of once per page. False: count it now.
 *  - (cfg.lat_every > 1: full depth samples its timing as the default depth does) work on the file
 *    of this CPU's run of writes by the run's process (ks_run_is) goes straight to the run, which
 *    adds it to the same records at its end as counting it now would: `any` (pages dirtied, bytes
 *    a filesystem copies into the cache) takes that alone, in whatever call or fault it comes; a
 *    page added (not `any`) is one of a write only inside a write(2) of the family while the thread
 *    holds host's i_rwsem for writing (ks_writing: a write to another file whose buffer faults
 *    host's page in does not), else a page read in. The first page that passes leaves in the run
 *    its thread (task address, tid) and the thread's count of write calls ended (`ioac.syscw`,
 *    which the kernel moves at the end of every write): the call's later pages take that answer
 *    without the registers' helper. The system call is the number in the task's saved user
 *    registers (orig_ax: an exception or interrupt stores -1 there, so a page fault is never taken
 *    for a call). Without i_rwsem's owner, a write through the descriptor of the run, checked as
 *    sys_exit checks it (same process, table and number, the table's `fdtab` slot unmoved), is.
 *  - A call sys_enter timed (`active` in the thread's slot): its file is the one sys_enter found.
 *  - Otherwise a read or write sys_enter did not see: the descriptor is walked to its file,
 *    compared by inode with the page's, and the work goes to the thread's slot, marked `batched`,
 *    which sys_exit adds to the call's run: a read's pages say whether it missed, which only the
 *    call itself can say when its thread moves to another CPU while it waits for the device.
 *    io_uring's workers carry no call.
 * w: the task doing the work where the caller knows it without the current-task helper (ks_writer,
 * the writer holding host's i_rwsem), else NULL (the current task): the run is matched with it,
 * and the rest (the thread's slot, registers and descriptor) asks for the current task.
 * Under a process filter alone a process not traced has no call of ours to batch into (no slot
 * sys_enter made, no run): it leaves before the registers and the thread's slot are read.
 * A descriptor another thread replaces (dup2) while the call is inside the kernel leaves the
 * call's file behind the old number: its pages are then counted now, as work outside a call. */
static __always_inline bool ks_call_batch(struct inode *host, struct task_struct *w, struct ks_batch *b, bool any)
{
	struct task_struct *t = w ? w : bpf_get_current_task_btf();
	if (t->flags & (PF_KTHREAD | PF_IO_WORKER))
		return false;
	struct pt_regs *regs = NULL;
	int k = 0;
	__u32 fd = 0, one = 1;
	__u64 dev, ino;
	if (cfg.lat_every > 1) {
		struct ks_run *s = bpf_map_lookup_elem(&runs, &one);
		if (s && s->inode == (__u64)host && s->tgid == t->tgid) {
			/* a write whose earlier page passed the check below, still in that call (the
			 * other two programs of a 4 KiB append), takes its answer without reading
			 * the identity again; `any` work on the run's file whatever the call */
			if (ks_run_chk(s, t) || (any && ks_run_is(s, host, t))) {
				b->s = s;
				b->rw = 2;
				return true;
			}
			bool lock = bpf_core_field_exists(host->i_rwsem.owner);
			if (!any && (lock ? ks_writing(host, t) : s->files == (__u64)t->files)) {
				regs = ks_task_regs(t);
				k = ks_rw_of(regs->orig_ax);
				fd = (__u32)regs->di;
				__u32 slot = s->fdslot & (KS_FDTAB_SLOTS - 1);
				__u64 *g;
				if (k == 2 &&
				    (lock ? ks_run_is(s, host, t)
					  : (s->fd == fd && (g = bpf_map_lookup_elem(&fdtab, &slot)) && *g == s->fdgen &&
					     (!cfg.cgroup_id || bpf_get_current_cgroup_id() == cfg.cgroup_id)))) {
					if (bpf_core_field_exists(t->ioac)) { /* the rest of this call's pages */
						s->chk_task = (__u64)t;
						s->chk_syscw = t->ioac.syscw;
						s->chk_tid = (__u32)t->pid;
					}
					b->s = s;
					b->rw = 2;
					return true;
				}
			}
		}
	}
	if (w) { /* the rest is the current thread's own: its slot, registers and descriptor */
		t = bpf_get_current_task_btf();
		if (t->flags & (PF_KTHREAD | PF_IO_WORKER))
			return false;
	}
	if (cfg.by_pid && !cfg.cgroup_id && !ks_tgid_tracked(t->tgid))
		return false;
	struct ks_inflight *c = bpf_task_storage_get(&task_call, t, 0, 0);
	if (c && c->active) {
		if (!c->tracked_file || !ks_inode_id(host, &dev, &ino) || c->dev != dev || c->ino != ino)
			return false;
		b->c = c;
		b->rw = ks_rw_of(c->nr);
		return true;
	}
	if (cfg.lat_every > 1 && !regs) {
		regs = ks_task_regs(t);
		k = ks_rw_of(regs->orig_ax);
		fd = (__u32)regs->di;
	}
	if (!k)
		return false;
	__u64 fa = ks_fd_file_addr(t, (int)fd);
	if (!fa)
		return false;
	struct file *f = bpf_rdonly_cast((void *)fa, bpf_core_type_id_kernel(struct file));
	if (f->f_inode != host || !ks_inode_id(host, &dev, &ino) || !ks_task_wanted() || !ks_file_wanted(dev, ino))
		return false;
	if (!c) {
		c = bpf_task_storage_get(&task_call, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!c)
			return false;
	}
	if (!c->batched) {
		c->pages_in = c->pc_added_write = c->pc_dirtied = c->fs_writes = 0;
		c->fs_bytes = c->fs_max_end = 0;
		c->dev = dev;
		c->ino = ino;
		c->batched = 1;
		ks_batch_pending(1);
	} else if (c->dev != dev || c->ino != ino) {
		/* a batch an exit did not take (its descriptor closed by another thread during the
		 * call, the session attached mid-call): to its own file now, and this call's begins */
		__u64 now = bpf_ktime_get_ns();
		ks_batch_flush(t->tgid, c, now, now);
		c->pages_in = c->pc_added_write = c->pc_dirtied = c->fs_writes = 0;
		c->fs_bytes = c->fs_max_end = 0;
		c->dev = dev;
		c->ino = ino;
	}
	b->c = c;
	b->rw = k;
	return true;
}


/* size and latency histograms; rw 0 = read, 1 = write */
static __always_inline void ks_hist_size(struct ks_file_val *v, int rw, __u64 size)
{
	__u32 b = ks_bucket(size);
	if (b < KS_HIST)
		__sync_fetch_and_add(&v->size_hist[rw ? 1 : 0][b], 1);
}

static __always_inline void ks_hist_lat(struct ks_file_val *v, int rw, __u64 ns)
{
	__u32 l = ks_bucket(ns);
	if (l < KS_HIST)
		__sync_fetch_and_add(&v->lat_hist[rw ? 1 : 0][l], 1);
}


/* An event on behalf of pid/tid (block completions run in another context than the submitter). */
static __always_inline void ks_emit_as(__u32 pid, __u32 tid, __u8 layer, __u8 op, __u16 flags, __u64 start, __u64 dur,
				       __u64 dev, __u64 ino, __u64 off, __u64 size, __s64 result)
{
	if (!cfg.events)
		return;
	struct ks_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		ks_stat(KS_STAT_EVENT_DROPS);
		return;
	}
	e->start_ns = start;
	e->dur_ns = dur;
	e->pid = pid;
	e->tid = tid;
	e->layer = layer;
	e->op = op;
	e->flags = flags;
	e->dev = (__u32)dev;
	e->ino = ino;
	e->offset = off;
	e->size = size;
	e->result = result;
	bpf_ringbuf_submit(e, 0);
	ks_stat(KS_STAT_EVENTS);
}

static __always_inline void ks_emit(__u8 layer, __u8 op, __u16 flags, __u64 start, __u64 dur, __u64 dev,
				    __u64 ino, __u64 off, __u64 size, __s64 result)
{
	if (!cfg.events)
		return;
	__u64 id = bpf_get_current_pid_tgid();
	ks_emit_as(id >> 32, (__u32)id, layer, op, flags, start, dur, dev, ino, off, size, result);
}

/* An event stamped now, of no duration: the clock is read only when events are asked for (the
 * per-page programs run for every page, and their records want no time of it). */
static __always_inline void ks_emit_now(__u8 layer, __u8 op, __u16 flags, __u64 dev, __u64 ino, __u64 off, __u64 size,
					__s64 result)
{
	if (cfg.events)
		ks_emit(layer, op, flags, bpf_ktime_get_ns(), 0, dev, ino, off, size, result);
}

#endif
