/* SPDX-License-Identifier: MIT */
/*
 * What the eBPF programs and their user-space loaders share: map keys and values, the event
 * layout, the statistics slots and the filter settings. Included by *.bpf.c (after vmlinux.h)
 * and by user space (after <linux/types.h>); it includes only the counter table.
 *
 * One map holds every per-file aggregate of every kernel layer: `files`, keyed by
 * (pid, layer, dev, ino). The collector turns each entry into one log record of that layer, so
 * the report reads kernel layers exactly as it reads the user layers. Per-device block totals
 * are entries with pid 0 and ino 0.
 */
#ifndef IOSTRATA_KERNEL_KERNEL_H
#define IOSTRATA_KERNEL_KERNEL_H

#include "iostrata/counters.h"

#define KS_HIST 32             /* log2 buckets, as LOG_HIST_BUCKETS */
#define KS_MAX_FILES 16384     /* entries of `files` */
#define KS_MAX_PATHS 16384     /* entries of `paths` */
#define KS_MAX_AGG 4096        /* entries of `fsagg` and `pidagg` */
#define KS_MAX_PIDS 8192       /* entries of `tracked` */
#define KS_TGID_WORDS 65536    /* words of `tracked_bits`: 64 tgids each, up to the largest pid_max
				* (2^22); the loader sizes it to the running kernel's pid_max */
#define KS_MAX_INFLIGHT 8192   /* threads inside a traced syscall at once */
#define KS_PATH_MAX 256
#define KS_FSTYPE_MAX 16
#define KS_RINGBUF_BYTES (8u << 20)
#define KS_MAX_DEVS 256         /* entries of `devdist` ((device, class) pairs) and of `devfiles` */
#define KS_FDTAB_SLOTS 4096     /* entries of `fdtab`: descriptor tables, hashed by address */
#define KS_FDMAP_MAX 65536      /* entries of `fdfiles` (default depth): (table, descriptor) -> file */
#define KS_FDMAP_FDS 1024       /* descriptors below this number are kept in `fdfiles` */

/* Slots of the `kstats` array: what the kernel side lost or refused, never silently. */
enum ks_stat {
	KS_STAT_EVENTS,        /* events written to the ring buffer */
	KS_STAT_EVENT_DROPS,   /* events lost: ring buffer full */
	KS_STAT_FILES_FULL,    /* `files` was full: an aggregate was not recorded */
	KS_STAT_PATHS_FULL,    /* `paths` was full: a file keeps no name */
	KS_STAT_AGG_FULL,      /* `fsagg` or `pidagg` was full */
	KS_STAT_INFLIGHT_FULL, /* a syscall could not be timed: too many threads inside one */
	KS_STAT_PIDS_FULL,     /* a forked child could not be followed: `tracked` full */
	KS_STAT_BLOCK_UNMATCHED, /* block completions without a matching issue */
	KS_STAT_CLOSE_UNNAMED, /* default depth: a close the descriptor map could not name (another
				* thread reused its number before its exit; a table io_uring or seccomp
				* changed): counted on no file */
	KS_STAT_FD_UNFOLLOWED, /* default depth: a descriptor the map could not record (map full, number
				* >= KS_FDMAP_FDS, received over a socket, installed by io_uring or
				* seccomp): its close, if a file's, is counted on no file */
	KS_NSTATS
};

/* `files`: one log record per key. dev is a dev_t as stat(2) reports it (glibc makedev). */
struct ks_file_key {
	__u32 pid;   /* tgid; 0 for device totals and context-free work (writeback, eviction) */
	__u16 layer; /* enum log_layer */
	__u16 pad;
	__u32 gen;   /* the inode's generation when the layer knows it (syscall), else 0: an inode
		      * number reused by a new file during the session is then another record */
	__u32 pad2;
	__u64 dev;
	__u64 ino;   /* 0 for per-device block totals */
};

struct ks_file_val {
	__u64 c[LOG_NCOUNTERS];      /* the log record's counters; times in ns */
	__u64 size_hist[2][KS_HIST]; /* [0] reads, [1] writes: log2 of bytes */
	__u64 lat_hist[2][KS_HIST];  /* [0] reads, [1] writes: log2 of ns */
	__u64 unseen[3];             /* block: requests never seen completing; their bytes read, written */
	__u64 discard_bytes;         /* block: bytes discarded (the requests are in META_OTHER) */
	__u64 untimed;               /* block: requests counted at completion whose start was never
				      * seen (issued before the session began): no times, no histogram */
	__u64 timed[3];              /* syscall: calls timed (reads, writes, the rest): every call at full
				      * depth, those begun in a sampling window at the default depth (the collector
				      * scales the time counters by calls / timed) */
};

/* `devdist` (block layer): per device and class as /proc/diskstats groups them (0 read, 1 write:
 * write-zeroes and secure erase too, 2 other: flush, discard ...) the requests timed and the log2
 * histograms (ns) of their wait (submission to issue) and service (issue to completion) times:
 * seed 001's server-side distributions, which a sampler turns into one record every N requests
 * of the device. Every request at full depth; at the default depth (sampling windows) those
 * begun in a window, the device's count of all of them being diskstats' (docs/DAEMON.md). */
struct ks_dist_key {
	__u64 dev;
	__u32 cls;
	__u32 pad;
};
struct ks_dist_val {
	__u64 count;
	__u64 wait_hist[KS_HIST];
	__u64 svc_hist[KS_HIST];
};

/* `rq_slots`, else `rq_inflight` (block layer): a block request from submission to completion, by
 * request pointer. Entries left when the session ends were issued (or, at the default depth,
 * started) and never seen completing. */
struct ks_rq_info {
	__u64 start_ns, issue_ns; /* 0 at the default depth (KS_RQ_STARTED): the request keeps its own */
	__u64 dev, ino; /* the file, when attributed (ino 0: none) */
	__u64 rdev;     /* at issue (at start with KS_RQ_STARTED): the request's device */
	__u32 pid, tid;
	__u32 bytes;    /* at issue: what the device is asked to move (at start: before later merges) */
	__u16 flags;    /* LOG_E_WRITEBACK; KS_RQ_DEV_ONLY, KS_RQ_ACCOUNTED, KS_RQ_STARTED */
	__u16 op;       /* at issue (or start): REQ_OP_* (0 read, 1 write) */
};

/* `rq_slots` (block layer): the requests in flight, each in the slot of its tag (block.bpf.c,
 * rq_slot); a request whose slot is taken goes to `rq_inflight`. rq is the request's address, 0
 * when free. One cache line a slot: a request's three programs touch one line of the array. */
#define KS_RQ_SLOT_BITS 14
struct ks_rq_slot {
	__u64 rq;
	struct ks_rq_info ri;
};
_Static_assert(sizeof(struct ks_rq_slot) == 64, "a request slot is one cache line");

/* A request the filters do not want (another process's, an unknown file's): followed all the same
 * for its device's totals, which are the device's whole traffic, as /proc/diskstats counts it. */
#define KS_RQ_DEV_ONLY 0x100
/* Seen at block_io_start: the block layer accounts the request in /proc/diskstats (a request met
 * first at issue is a flush or passthrough command, accounted apart or not at all). */
#define KS_RQ_ACCOUNTED 0x200
/* Followed from its start with no program at issue (the default depth): rdev, op and bytes were
 * taken at the start, and an entry still here when its request is reused (or when the session
 * ends) is a completion never seen, as an issued one is otherwise. */
#define KS_RQ_STARTED 0x400

/* `paths`: the name of a file, resolved in the kernel when the syscall layer first meets it.
 * Keyed with the inode's generation, so a file created on a freed inode number gets its own
 * name; `inodes` (dev, ino) says only that a traced process met the inode (filters). */
struct ks_path_key {
	__u64 dev;
	__u64 ino;
	__u32 gen;
	__u32 pad;
};

struct ks_inode_key {
	__u64 dev;
	__u64 ino;
};

struct ks_path_val {
	__u64 when_ns;          /* when it was resolved: the newest generation of an inode wins
				 * for layers that know only (dev, ino) */
	char path[KS_PATH_MAX]; /* absolute in the opener's mount namespace; "" if unresolved */
	char fstype[KS_FSTYPE_MAX];
	__u32 mnt_id;           /* as in /proc/PID/mountinfo's first column */
	__u32 truncated;        /* 1 when the walk stopped before the root */
	__u32 pid;              /* the process that met it: layers that know only (dev, ino) prefer
				 * the generation their own process met */
	__u32 pad;
};

/* `fsagg` (seed 000's maps): per (filesystem, op, log2 size) count, bytes, time, latency. The
 * filesystem is named by its device (dev_t as stat(2) gives it): its type and mount point come
 * from /proc/self/mountinfo when the map is read, which keeps a string read off every call. */
struct ks_agg_key {
	__u64 dev;
	__u16 op;     /* enum log_op */
	__u16 bucket; /* log2 of the size, as the histograms */
	__u32 pad;
};

/* `pidagg`: per (pid, op), for the calls that name no traced file (a failed open, a read of a
 * descriptor that is not a regular file); the per-pid totals of files are in `files`. */
struct ks_pid_key {
	__u32 pid;
	__u32 op;
};

struct ks_agg_val {
	__u64 count;
	__u64 bytes;
	__u64 time_ns;
	__u64 errors;
	__u64 lat_hist[KS_HIST];
};

/* An event in the ring buffer: the log's struct log_event, field for field. */
struct ks_event {
	__u64 start_ns;
	__u64 dur_ns;
	__s32 pid, tid;
	__u8 layer;
	__u8 op;
	__u16 flags;
	__u32 dev;
	__u64 ino;
	__u64 offset;
	__u64 size;
	__s64 result;
};

/* The thread's current syscall, kept from sys_enter to sys_exit (`task_call`, task-local). The
 * page-cache program adds the pages it sees read in while a read is in flight. */
struct ks_inflight {
	__u64 start_ns;
	__u64 dev, ino;
	__u64 arg_size;   /* bytes asked for */
	__u64 offset;     /* explicit offset (pread ...) or the file position at entry */
	__u32 nr;         /* syscall number */
	__s32 fd;
	__u32 pages_in;   /* pages added to the cache under this call */
	__u32 tracked_file; /* 1 when dev/ino are known */
	__u32 mnt_id;
	__u32 has_src;    /* copy_file_range/sendfile: dev2/ino2 is the source */
	__u64 dev2, ino2;
	__u32 gen, gen2;  /* inode generations of the file and of the source */
	__u32 active;     /* 1 from a traced enter to its exit (nr 0 is read(2), so nr cannot say it) */
	__u32 counted;    /* default depth: this call is in `lat_inflight` (syscall.bpf.c) */
	__u64 uring_dev, uring_ino; /* inside io_uring_enter: the file of the request submitted last */
	__u64 mpi_dev, mpi_ino;     /* inside MPI_File_open (mpi_open): the last regular file opened */
	__u32 mpi_open, mpi_gen;
	/* Work the page-cache and filesystem programs saw inside this call on its own file, added
	 * to their records once at sys_exit instead of once per page (pages_in above: read in). */
	__u32 pc_added_write, pc_dirtied;
	__u32 fs_writes;
	__u32 batched; /* 1: the fields above are an untimed call's (ks_call_batch), for its sys_exit */
	__u64 fs_bytes, fs_max_end;
	char fstype[KS_FSTYPE_MAX];
	/* The thread's last descriptor sys_enter walked to its file: its identity again, without the
	 * walk, for a call through the same descriptor of the same table while the table's `fdtab`
	 * slot reads id_fdgen (`fdtab`, below); id_file 0: none. */
	__u64 id_file, id_files, id_fdgen, id_dev, id_ino;
	__s32 id_fd;
	__u32 id_slot, id_gen, id_pad;
};

/* `fdtab` (syscall layer): per descriptor table (a task's files_struct, shared by its threads and
 * by processes cloned with CLONE_FILES; slot = a hash of its address), one __u64: in the low half
 * how many calls that may replace a descriptor are inside the table now (busy: close, close_range,
 * dup2, dup3), in the high half how many have ended (gen: those, and a new table at that address:
 * fork, exec, unshare). A descriptor still holds the file found behind it while the slot reads
 * what it read before that walk with busy 0 (the runs' check, sys_enter's identity).
 * KS_FDTAB_STICKY in busy: a change no tracepoint brackets (io_uring's IORING_OP_CLOSE, seccomp's
 * addfd) was asked for: the table's calls walk to their file from then on. 64-bit atomic adds
 * only: busy is never decremented below what was added, so nothing borrows from gen. */
#define KS_FDTAB_BUSY 1ULL
#define KS_FDTAB_GEN (1ULL << 32)
#define KS_FDTAB_STICKY (1ULL << 31)
#define KS_FD_NONE (~0ULL) /* ks_run.fd of a run no descriptor check may continue */

/* `runs` (syscall layer): per CPU and direction ([0] reads, [1] writes), the run of calls of one
 * process on one file being counted. A call on another file, of another process, or (with seed
 * 000's aggregates) of another log2 size on that CPU adds the run to its records (`files`, and
 * `fsagg`) and starts its own; so does a reader (ks_runs_flush) before it reads them. One update
 * of the records per run instead of one per call. An untimed call (the default depth outside its
 * sampling windows) is the run's when it is made through the run's descriptor number in the same
 * descriptor table and that table's `fdtab` slot has not moved since the run's file was last
 * found behind the descriptor (no close, dup2, dup3, close_range, exec, fork or unshare in between:
 * no walk to the struct file); otherwise the descriptor is walked to its struct file and inode
 * (pointer, number, generation), and a descriptor closed, reused, or replaced by dup2 ends the
 * run. It reads the clock once per timer tick of the run. A timed call (full depth; a window's)
 * is the run's by the identity sys_enter found (process, device, inode, generation), and brings
 * its time and what the page-cache and filesystem programs batched into it; one that failed goes
 * to its record directly. */
struct ks_run {
	/* What the descriptor check and an untimed call of the run touch come first, 128 bytes
	 * together: after a call that slept (O_DIRECT) each cache line of the run is a miss. */
	__u64 file, inode; /* kernel addresses; file 0: no run */
	__u64 files, fd;   /* the descriptor table and number the run's untimed calls were last checked
			    * through (KS_FD_NONE: none), and its `fdtab` slot's value then */
	__u64 fdgen;
	__u32 fdslot, tgid;
	__u64 calls, bytes;
	__u64 max_end;     /* the furthest byte a call reached (offset + result) */
	__u64 last_size, last_bucket; /* the last call's size and its log2 bucket */
	__u64 last_same;   /* successful calls of last_size not yet in hist (ks_run_hist) */
	__u64 last_jiffies; /* the tick of last_ns */
	__u64 errors;
	__u64 dev, ino;
	__u32 gen;
	/* The write whose page-cache and filesystem work the descriptor check (ks_call_batch) last
	 * sent to this run: its thread (task address, tid) and that thread's write calls ended then
	 * (ioac.syscw, which the kernel moves at the end of each write): while they are the same, it
	 * is that call, and the rest of its pages on this file take the check's answer. */
	__u32 chk_tid;
	__u64 chk_task, chk_syscw;
	__u32 rw, bucket;  /* 0 read, 1 write; the log2 size of every call (with aggregates) */
	__u64 first_ns;    /* the first call's start (its exit when untimed) */
	__u64 last_ns;     /* the last call's exit; for an untimed call, that of the run's first call in
			    * the last timer tick (the clock is read once per tick: at most a tick early) */
	__u64 hist[KS_HIST]; /* log2 sizes of the successful calls, but last_same's */
	/* Successful calls that sys_enter timed (every call at full depth, a sampling window's at the
	 * default depth; a timed call that fails goes to its record directly) */
	__u64 time, timed;           /* their summed duration, their number */
	__u64 slowest, slowest_size; /* the slowest of them, and its result */
	__u64 hits, misses;          /* reads served from the cache, or not (page-cache layer loaded) */
	__u64 lat[KS_HIST];          /* log2 ns */
	/* and what the page-cache and filesystem programs batched into them (struct ks_inflight) */
	__u64 pages_in, pc_added_write, pc_dirtied;
	__u64 fs_writes, fs_bytes, fs_max_end, fs_first, fs_last;
	__u64 fs_hist[KS_HIST];      /* the filesystem layer's write sizes: each call's mean per page */
};

/* A run's calls added to its syscall record v, as sys_exit adds a call: in the kernel with atomic
 * adds (other CPUs add to the same record), in user space (ks_records, the runs of a CPU its flush
 * could not reach) with plain ones. The timestamps' races lose as ks_first/ks_max's do. */
#ifdef __bpf__
#define KS_RUN_ADD(p, n) __sync_fetch_and_add((p), (n))
#else
#define KS_RUN_ADD(p, n) (*(p) += (n))
#endif
/* The run's calls in log2 size bucket b: hist, and the calls of the last size while they go on
 * (a call of the run's size adds to last_same, in the run's first cache lines; sys_exit moves
 * them to hist when the size changes or the run ends). */
static inline __u64 ks_run_hist(const struct ks_run *s, int b)
{
	return s->hist[b] + (b == (int)(s->last_bucket & (KS_HIST - 1)) ? s->last_same : 0);
}

static inline void ks_run_to_record(struct ks_file_val *v, const struct ks_run *s)
{
	int w = s->rw & 1;
	__u64 *c = v->c, last = s->last_ns > s->first_ns ? s->last_ns : s->first_ns;
	__u64 *first = &c[w ? LOG_C_WRITE_FIRST : LOG_C_READ_FIRST], *lastc = &c[w ? LOG_C_WRITE_LAST : LOG_C_READ_LAST];
	__u64 *end = &c[w ? LOG_C_MAX_WRITE_END : LOG_C_MAX_READ_END];
	KS_RUN_ADD(&c[w ? LOG_C_WRITES : LOG_C_READS], s->calls);
	KS_RUN_ADD(&c[w ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ], s->bytes);
	if (s->errors)
		KS_RUN_ADD(&c[w ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], s->errors);
	if (!*first || *first > s->first_ns)
		*first = s->first_ns;
	if (*lastc < last)
		*lastc = last;
	if (*end < s->max_end)
		*end = s->max_end;
	for (int b = 0; b < KS_HIST; b++) {
		__u64 n = ks_run_hist(s, b);
		if (n)
			KS_RUN_ADD(&v->size_hist[w][b], n);
	}
	if (s->timed) {
		KS_RUN_ADD(&c[w ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], s->time);
		KS_RUN_ADD(&v->timed[w], s->timed);
		__u64 *slow = &c[w ? LOG_C_SLOWEST_WRITE_TIME : LOG_C_SLOWEST_READ_TIME];
		if (s->slowest > *slow) {
			*slow = s->slowest;
			c[w ? LOG_C_SLOWEST_WRITE_SIZE : LOG_C_SLOWEST_READ_SIZE] = s->slowest_size;
		}
		for (int b = 0; b < KS_HIST; b++)
			if (s->lat[b])
				KS_RUN_ADD(&v->lat_hist[w][b], s->lat[b]);
	}
	if (s->hits)
		KS_RUN_ADD(&c[LOG_C_CACHE_HIT_READS], s->hits);
	if (s->misses)
		KS_RUN_ADD(&c[LOG_C_CACHE_MISS_READS], s->misses);
}

/* What the page-cache programs batched into a run's calls, to the file's page-cache record. */
static inline void ks_run_to_pagecache(struct ks_file_val *v, const struct ks_run *s)
{
	if (s->pages_in)
		KS_RUN_ADD(&v->c[LOG_C_PAGES_READ_IN], s->pages_in);
	if (s->pc_added_write)
		KS_RUN_ADD(&v->c[LOG_C_PAGES_ADDED_WRITE], s->pc_added_write);
	if (s->pc_dirtied)
		KS_RUN_ADD(&v->c[LOG_C_PAGES_DIRTIED], s->pc_dirtied);
}

/* What the filesystem programs batched into a run's calls, to the file's filesystem record. */
static inline void ks_run_to_fs(struct ks_file_val *v, const struct ks_run *s)
{
	__u64 *c = v->c;
	KS_RUN_ADD(&c[LOG_C_WRITES], s->fs_writes);
	KS_RUN_ADD(&c[LOG_C_BYTES_WRITTEN], s->fs_bytes);
	if (c[LOG_C_MAX_WRITE_END] < s->fs_max_end)
		c[LOG_C_MAX_WRITE_END] = s->fs_max_end;
	if (!c[LOG_C_WRITE_FIRST] || c[LOG_C_WRITE_FIRST] > s->fs_first)
		c[LOG_C_WRITE_FIRST] = s->fs_first;
	if (c[LOG_C_WRITE_LAST] < s->fs_last)
		c[LOG_C_WRITE_LAST] = s->fs_last;
	for (int b = 0; b < KS_HIST; b++)
		if (s->fs_hist[b])
			KS_RUN_ADD(&v->size_hist[1][b], s->fs_hist[b]);
}

/* `blk_runs` (block layer): per CPU, slots [0, KS_BLK_SLOTS) for devices' totals and
 * [KS_BLK_SLOTS, 2 KS_BLK_SLOTS) for files' block records, a record's slot chosen by a hash of
 * its key: the completions on this CPU for one record in a row, added to it (ks_val_move) when a
 * completion for another record takes the slot or a reader flushes (ks_runs_flush). A file's run
 * (`active` KS_BLK_RUN_DEV) holds its device's figures too: a completion charged to a file is
 * counted once, in its file's run, and the flush adds the run to the device's totals (pid 0, the
 * file's device, ino 0) as well as to the file's record. Completions run in interrupt context and
 * may interrupt that flush in sys_exit: `busy` is set around it, and a completion that finds it
 * set goes to the records directly. */
#define KS_BLK_SLOTS 4
#define KS_BLK_RUN_DEV 2
struct ks_blk_run {
	__u32 busy, active; /* active: 0 free, 1 a record's run, KS_BLK_RUN_DEV its device's too */
	struct ks_file_key key;
	struct ks_file_val v;
	/* a device's run, in a pinned session (cfg.aggregates): its completions' `devdist` by class
	 * (0 read, 1 write, 2 other), added to `devdist` when the run's slot is flushed */
	struct ks_dist_val dist[3];
};

/* `fault_runs` (page-cache layer): per CPU, the faults on one mapped file by one process in a row
 * (mm_filemap_fault), added to the file's page-cache record (MMAP_FAULTS) when another's fault
 * takes the slot or a reader flushes: no `files` lookup per fault. `busy` is set around each
 * side's update; the other side, finding it set (a preemptible kernel preempting one program
 * with the other on the CPU), counts on the record itself (a fault) or leaves the slot for the
 * next flush (a reader: the session's end reads what is left, collect.c). */
struct ks_fault_run {
	__u32 busy, pid;
	__u64 dev, ino, faults;
};

/* All of s added to d, each counter as its kind merges (counters.h); s zeroed when `clear`. */
static inline void ks_val_fold(struct ks_file_val *d, struct ks_file_val *s, int clear)
{
#define KS_KIND_(name, kind, doc) LOG_K_##kind,
	static const unsigned char kinds[LOG_NCOUNTERS] = {LOG_COUNTERS(KS_KIND_)};
#undef KS_KIND_
	for (int i = 0; i < LOG_NCOUNTERS; i++) {
		__u64 x = s->c[i];
		unsigned char k = kinds[i];
		if (!x || k == LOG_K_SIZE) /* a SIZE goes with the TMAX before it */
			continue;
		if (clear)
			s->c[i] = 0;
		if (k == LOG_K_SUM || k == LOG_K_TIME) {
			KS_RUN_ADD(&d->c[i], x);
		} else if (k == LOG_K_FIRST) {
			if (!d->c[i] || d->c[i] > x)
				d->c[i] = x;
		} else if (k == LOG_K_TMAX && i + 1 < LOG_NCOUNTERS) {
			if (d->c[i] < x) {
				d->c[i] = x;
				d->c[i + 1] = s->c[i + 1];
			}
			if (clear)
				s->c[i + 1] = 0;
		} else if (d->c[i] < x) { /* MAX, LAST */
			d->c[i] = x;
		}
	}
	for (int b = 0; b < KS_HIST; b++) {
		for (int w = 0; w < 2; w++) {
			if (s->size_hist[w][b])
				KS_RUN_ADD(&d->size_hist[w][b], s->size_hist[w][b]);
			if (s->lat_hist[w][b])
				KS_RUN_ADD(&d->lat_hist[w][b], s->lat_hist[w][b]);
			if (clear)
				s->size_hist[w][b] = s->lat_hist[w][b] = 0;
		}
	}
	for (int i = 0; i < 3; i++) {
		if (s->unseen[i])
			KS_RUN_ADD(&d->unseen[i], s->unseen[i]);
		if (s->timed[i])
			KS_RUN_ADD(&d->timed[i], s->timed[i]);
		if (clear)
			s->unseen[i] = s->timed[i] = 0;
	}
	if (s->discard_bytes)
		KS_RUN_ADD(&d->discard_bytes, s->discard_bytes);
	if (s->untimed)
		KS_RUN_ADD(&d->untimed, s->untimed);
	if (clear)
		s->discard_bytes = s->untimed = 0;
}

/* All of s added to d, each counter as its kind merges, then s zeroed. */
static inline void ks_val_move(struct ks_file_val *d, struct ks_file_val *s)
{
	ks_val_fold(d, s, 1);
}

/* pread64(-1, NULL, 0, KS_RUN_FLUSH_MAGIC) ("iostrata"): its sys_exit adds the calling CPU's runs to
 * their records (ks_runs_flush runs it on every CPU). It fails with EBADF, as any such call would. */
#define KS_RUN_FLUSH_MAGIC 0x696f737472617461ULL

/* `notify` ring buffer: things the collector must act on while the job runs. */
enum { KS_NOTE_MPI_LIBRARY = 1 }; /* a traced process opened libmpi*: set the MPI-IO uprobes on it */

struct ks_note {
	__u32 kind;
	__u32 pid;
	__u64 dev, ino;
	__u32 gen, pad;
};

/* Kernel-side filters, set once by the loader (read-only data of every program). */
struct ks_filter {
	__u32 by_pid;      /* only processes in `tracked` (and their children, followed at fork) */
	__u32 self_tgid;   /* never trace the collector itself */
	__u64 cgroup_id;   /* 0, or only tasks in this cgroup (v2) */
	__u64 dev;         /* 0, or only files on this device (dev_t) */
	__u64 ino;         /* 0, or only this inode (a file, or a directory: files below it) */
	char fstype[KS_FSTYPE_MAX]; /* "", or only this filesystem type */
	__u32 events;      /* 1: write events to the ring buffer */
	__u32 aggregates;  /* 1: keep seed 000's `fsagg`/`pidagg` too (for --pin: an outside sampler) */
	__u32 watch_mpi;   /* 1: report opens of MPI libraries on `notify` */
	__u32 lat_every;   /* 0 or 1: every system call timed (sys_enter runs in full for each);
			    * N > 1: calls are timed in sampling windows open 1/N of the time (sys_enter is
			    * attached only then), the others are counted at sys_exit alone (opens, closes
			    * and io_uring_enter are always timed: rare, and other programs need their call
			    * in flight) */
	__u32 layers;      /* bits (1 << LOG_LAYER_x) loaded: a figure of a layer not loaded is not
			    * claimed (cache hit/miss reads need the page-cache layer) */
	__u32 pad;
};

#endif
