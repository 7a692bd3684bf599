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
#define KS_MAX_DEVS 256         /* entries of `devdist`: (device, class) pairs */

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

/* `devdist` (block layer): per device and class (0 read, 1 write, 2 other: flush, discard ...)
 * the requests completed and the log2 histograms (ns) of their wait (submission to issue) and
 * service (issue to completion) times: seed 001's server-side distributions, which a sampler
 * turns into one record every N requests. */
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
 * request pointer. Entries left when the session ends were issued and never seen completing. */
struct ks_rq_info {
	__u64 start_ns, issue_ns;
	__u64 dev, ino; /* the file, when attributed (ino 0: none) */
	__u32 pid, tid;
	__u32 flags;    /* LOG_E_WRITEBACK; KS_RQ_DEV_ONLY, KS_RQ_ACCOUNTED */
	__u32 bytes;    /* at issue: what the device is asked to move */
	__u64 rdev;     /* at issue: the request's device */
	__u32 op;       /* at issue: REQ_OP_* (0 read, 1 write) */
	__u32 pad;
};

/* `rq_slots` (block layer): the requests in flight, each in the slot its pointer hashes to; a
 * request whose slot is taken goes to `rq_inflight`. rq is the request's address, 0 when free. */
#define KS_RQ_SLOT_BITS 14
struct ks_rq_slot {
	__u64 rq;
	struct ks_rq_info ri;
};

/* A request the filters do not want (another process's, an unknown file's): followed all the same
 * for its device's totals, which are the device's whole traffic, as /proc/diskstats counts it. */
#define KS_RQ_DEV_ONLY 0x100
/* Seen at block_io_start: the block layer accounts the request in /proc/diskstats (a request met
 * first at issue is a flush or passthrough command, accounted apart or not at all). */
#define KS_RQ_ACCOUNTED 0x200

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
	__u32 fs_writes, fs_pad;
	__u64 fs_bytes, fs_max_end;
	char fstype[KS_FSTYPE_MAX];
};

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
