/* SPDX-License-Identifier: MIT */
/*
 * The profile of a job: every log of the job (one per process, and the kernel log of
 * `run --kernel`, whose records join under the processes they name) merged into per-layer totals,
 * per-file, per-path and per-rank figures and the job's wall time: a merge, nothing more. The job
 * pipeline (job.h) runs the I/O mode, the layer stack and the findings on it afterwards. It does
 * not read files (callers hand it struct log_file values) and does not print; the renderers do.
 *
 * It keeps its own copy of what it needs of each log (strings interned once), so a job's logs can
 * be read, merged and freed one at a time: memory grows with the processes (about 200 bytes each)
 * and with the data files each rank touched, never with the records of the runtime files (shared
 * objects, locales, pipes, /proc), which are merged over ranks as they come. Only the collector
 * logs (kernel and mount monitors: see klogs) are pointed into: keep them alive until
 * ana_profile_free.
 */
#ifndef IOSTRATA_ANALYSIS_PROFILE_H
#define IOSTRATA_ANALYSIS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/pool.h"
#include "iostrata/format.h"
#include "iostrata/reader.h"

#define ANA_COMMON_TOP 4 /* most common access sizes / strides shown per layer */
#define ANA_NLAYERS (LOG_LAYER_MAX + 1)
#define ANA_WARN_PER_KIND 5 /* processes named per kind of warning; the rest are counted */

/* Data file test and I/O mode (iomode.c). */
enum ana_io_mode { ANA_IO_NONE, ANA_IO_1_1, ANA_IO_N_N, ANA_IO_N_1, ANA_IO_N_M };

struct ana_io_mode_info {
	enum ana_io_mode mode;
	size_t ranks_with_data; /* P: ranks that touched at least one data file */
	size_t data_files;      /* F: distinct data file paths (M of N-M) */
	size_t shared_files;    /* of those, touched by more than one rank */
	size_t ranks;           /* N: ranks of the job */
	unsigned layer;         /* the layer whose files decided: LOG_LAYER_MPIIO when the ranks' MPI-IO was
				 * recorded (ROMIO's aggregators make a collective N-1 look 1-1 below
				 * it), else LOG_LAYER_POSIX (the POSIX and stdio layers) */
};

struct ana_common {
	int64_t value;
	uint64_t count;
};

/* One process: one log. Or, with a kernel log, a process image the preload library never saw (a
 * statically linked program, or what a process exec'd into): the kernel log's records of its pid
 * stand for it (kernel_only; log is then the kernel log). */
/* What the report says of a process's log, copied from its header (zero for a process only a
 * collector saw, except the command's argv). */
struct ana_proc_log {
	const char *path;         /* the log's path (a kernel-only process: the kernel log's) */
	const char *const *argv;  /* argc stored arguments */
	uint32_t argc, argc_total; /* argc_total: the program's count, larger when LOG_F_ARGV_CUT */
	uint32_t max_records, disabled_reason;
	uint32_t file_alignment, mem_alignment;
	uint64_t overflow_opens, untracked_ops, mmap_table_full, aio_table_full;
};

struct ana_proc {
	struct ana_proc_log log;
	size_t input;            /* the input it was read from (ana_profile_add_header); SIZE_MAX: a
				  * process only a collector saw */
	int32_t pid, ppid, rank; /* rank as in the header, -1 when unknown */
	int32_t job_rank;        /* rank it counts under: its own, or that of another image of its pid */
	size_t rank_index;       /* into ana_profile.ranks */
	const char *exe, *host, *job; /* exe "" when only the kernel saw it and it is not the command */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC; end_ns estimated when not finished */
	uint64_t start_wall_ns;    /* CLOCK_REALTIME at start_ns */
	int finished;              /* 0 when read from a live file */
	uint32_t flags;            /* LOG_F_* */
	int32_t exit_status, term_signal; /* as in the header; -1 / 0 when unknown */
	int kernel_only;           /* seen by a collector only (kernel or mount log): no user-layer log */
	int mount_only;            /* of those, seen by a mount monitor alone (no kernel log): its mount
				    * requests are its I/O; else its system calls are */
	int exec_lost;             /* its image ended in exec and no later image of its pid is in the job
				    * (a static program, or one run without LD_PRELOAD) */
};

/* One (path, layer, rank): a file as one rank saw it, merged over that rank's processes. A
 * runtime file of the user layers (not ana_is_data_path: shared objects, locales, /proc; pipes,
 * sockets and std streams; the catch-alls) is merged over every rank that used it instead:
 * rank_index ANA_RANKS_ALL, nranks of them. The rules and the I/O mode look at data files only. */
#define ANA_RANKS_ALL SIZE_MAX
struct ana_file {
	const char *path; /* "<overflow>" for the catch-all records */
	unsigned layer;
	size_t rank_index; /* into ranks, or ANA_RANKS_ALL */
	unsigned nranks;   /* ranks merged here: 1 unless rank_index is ANA_RANKS_ALL */
	int32_t pid;       /* the first process (by start time) whose record is merged here */
	unsigned nprocs;   /* processes whose records are merged here */
	uint16_t rflags;   /* LOG_R_* of the merged records, or'ed */
	int job_view;      /* counts for ranks, the I/O mode and the user-layer insights (ana_in_job_view) */
	uint64_t dev, ino; /* identity the kernel layer gave it (first record that had one), else 0 */
	uint64_t unseen[3]; /* block: requests never seen completing, their bytes read, written */
	/* write aggregation's decisions (record.agg_state) in the merged records: bit 1 << state;
	 * the file system's statfs f_type and the largest probe cost (ns) they carried */
	unsigned agg_states;
	uint64_t agg_fs_magic, agg_probe_ns;
	uint64_t c[LOG_NCOUNTERS];
	uint64_t read_hist[LOG_HIST_BUCKETS], write_hist[LOG_HIST_BUCKETS];
	uint64_t read_lat_hist[LOG_HIST_BUCKETS], write_lat_hist[LOG_HIST_BUCKETS]; /* kernel layers */
};

/* One (path, layer) merged over ranks: the rows of the top-files tables. */
struct ana_path {
	const char *path;
	unsigned layer;
	unsigned nranks; /* ranks that used it (a runtime file's count over every rank) */
	uint16_t rflags;
	int job_view; /* some of its files are in the job view */
	uint64_t unseen[3]; /* block: requests never seen completing, their bytes read, written */
	uint64_t c[LOG_NCOUNTERS];
};

/* A rank: the processes with one header rank, or, without a rank, one process (host and pid:
 * the images of an exec chain are one process, and an image without a rank, such as a launcher's
 * child before it exec'd the rank's program, belongs to the rank of another image of its pid). */
struct ana_rank {
	int32_t rank;  /* >= 0, or -1: the process is its own rank, labelled by pid */
	int32_t pid;   /* the label when rank < 0; else the pid of the rank's first process */
	unsigned nprocs; /* logs merged: processes and exec'd images */
	/* Each byte counted once: stdio records are left out of processes whose stdio system
	 * calls are already in the POSIX layer (LOG_F_STDIO_SYSCALLS). */
	uint64_t reads, writes, meta_ops, bytes_read, bytes_written;
	uint64_t time_read, time_write, time_meta; /* ns */
	/* its MPI-IO calls (the mpiio layer, which the totals above leave out: the same bytes are in
	 * the POSIX layer below): what the rank asked for, whichever rank ROMIO's aggregators moved
	 * it through */
	uint64_t mpiio_ops, mpiio_bytes, mpiio_time;
};

/* Totals of one layer: every record of that layer, counters merged by kind. */
struct ana_layer {
	size_t nrecords; /* records of all processes */
	size_t nfiles;   /* distinct paths */
	uint64_t c[LOG_NCOUNTERS];
	uint64_t meta_ops;
	/* records with reads, with writes ([0], [1]): each one's first access had no previous access
	 * to be sequential or random after (the pattern shares leave them out) */
	uint64_t first[2];
	/* The job's I/O phase at this layer, for the job bandwidth (bytes / span) an I/O benchmark
	 * reports for itself: the data files' bytes, from the first open (or access) to the last
	 * close (or access) across ranks; the MPI-IO layer's open and close when the job has one.
	 * span 0: not measured (no data files, or processes on several hosts, whose clocks differ). */
	uint64_t data_bytes;
	uint64_t span_start_ns, span_end_ns;
	uint64_t read_hist[LOG_HIST_BUCKETS], write_hist[LOG_HIST_BUCKETS];
	uint64_t read_lat_hist[LOG_HIST_BUCKETS], write_lat_hist[LOG_HIST_BUCKETS]; /* kernel layers */
	struct ana_common sizes[ANA_COMMON_TOP], strides[ANA_COMMON_TOP];
	size_t nsizes, nstrides;
	uint64_t sizes_other, strides_other; /* accesses whose value found no slot when captured */
};

/* Rates derived from a layer's totals and the job's wall time (0 when a divisor is 0). */
struct ana_rates {
	double bw_io;       /* bytes read + written / (time_read + time_write), bytes/s */
	double bw_read_io;  /* bytes read / time_read */
	double bw_write_io; /* bytes written / time_write */
	double bw_wall;     /* bytes read + written / wall seconds */
	double bw_job;      /* data_bytes / (span_end_ns - span_start_ns); 0: not measured */
	double iops;        /* (reads + writes) / wall seconds */
	double mdops;       /* meta_ops / wall seconds */
};

struct ana_profile {
	struct ana_proc *procs; /* sorted by start time, then pid */
	size_t nprocs;
	struct ana_rank *ranks; /* ranks >= 0 ascending, then the unranked processes by host, pid */
	size_t nranks;
	struct ana_file *files; /* sorted by path, layer, rank */
	size_t nfiles;
	struct ana_path *paths; /* sorted by path, layer */
	size_t npaths;
	size_t *by_bytes, *by_time; /* indexes into paths: bytes desc / time desc, zero rows left out */
	size_t nby_bytes, nby_time;
	struct ana_layer layers[ANA_NLAYERS]; /* indexed by enum log_layer */

	const char *job_id;
	const struct ana_proc *first; /* the first process started: its exe/argv is the command */
	uint64_t start_wall_ns;       /* wall clock when the first process started */
	uint64_t wall_ns;             /* job wall time */
	int finished;                 /* every process finished */
	int multi_host;               /* processes ran on more than one host */
	/* An MPI job: some process has an MPI rank. Its processes without one (mpiexec, hydra's
	 * proxies, a wrapper shell) are launchers: not ranks, and their files (the launcher's
	 * stdout in a batch job) are not the job's data. */
	int mpi;
	size_t nlaunchers;

	double imbalance_bytes, imbalance_time; /* max/mean over ranks that did I/O; 0 if none did */
	size_t ranks_with_io;

	/* Collector logs (header kernel_layers != 0): the kernel log and the mount monitors' logs
	 * (kernel_layers == 1 << LOG_LAYER_MOUNT). Not processes of the job; their records join the
	 * layers and files, each under the process it names (record.pid; see ana_proc.kernel_only). */
	const struct log_file **klogs;
	size_t nklogs;
	size_t nkernel_logs, nmount_logs; /* of those: kernel logs, mount monitors' logs */
	int kernel_only;          /* no user-layer log at all (a static program): the kernel log stands in */
	size_t nkernel_procs;     /* processes seen by the kernel layer only */
	uint32_t kernel_layers;   /* bits 1 << layer, over the kernel logs (the mount layer is not one) */
	uint32_t kernel_lat_every; /* system calls timed 1 in N (a default-depth kernel log); 0: every one */
	uint32_t kernel_flags;     /* LOG_KF_* of any kernel log (the block layer's completion alone) */
	uint64_t kernel_events_dropped, kernel_table_full, kernel_prog_misses;
	uint64_t kernel_closes_unnamed, kernel_fds_unfollowed; /* the default depth's descriptor map */
	/* The system calls of the kernel-only processes: what their user layer would have shown,
	 * for the rules made for the POSIX layer. */
	struct ana_layer standin;
	unsigned page_size;       /* bytes of a page-cache page: this machine's (4 KiB on x86_64) */

	struct ana_io_mode_info io_mode; /* set by the job pipeline after the merge (ana_classify_io_mode) */
	char **warnings;
	size_t nwarnings;

	struct ana_pool pool;        /* the strings and argv above point into it */
	struct ana_build *build;     /* between ana_profile_begin and ana_profile_finish */
};

/* The kernel layers a kernel log can record that this job's did not (a default-depth session
 * leaves out the page cache and the filesystem): bits 1 << layer; 0 without a kernel log. */
uint32_t ana_kernel_layers_missing(const struct ana_profile *p);
/* System-call reads and writes that succeeded, and how many of them were timed (the latency
 * histograms hold exactly those): equal unless latency was sampled (kernel_lat_every > 1). */
void ana_kernel_timed(const struct ana_profile *p, uint64_t *calls, uint64_t *timed);


/* Build p from n logs. Duplicate logs of one process (a final log and its live file) count once,
 * the final one winning. 0 or -ENOMEM/-EINVAL. */
int ana_profile_build(const struct log_file *logs, size_t n, struct ana_profile *p);

/*
 * The same in steps, for a job whose logs are read one at a time (job.c):
 *   begin; add_header for every input (a number the caller chooses, below ninputs); index;
 *   add_records for each input of ana_profile_order, in that order (a log read again is fine);
 *   finish.
 * Collector logs given to add_header are kept by pointer (their records join in finish); the
 * others may be freed after each call. Each returns 0 or -ENOMEM/-EINVAL; after an error only
 * ana_profile_free.
 */
int ana_profile_begin(struct ana_profile *p, size_t ninputs);
int ana_profile_add_header(struct ana_profile *p, const struct log_file *lf, size_t input);
int ana_profile_index(struct ana_profile *p);
/* The inputs whose records count, in the order add_records wants them (rank by rank: the images of
 * a rank come together), and how many; duplicates and collector logs are not in it. */
size_t ana_profile_order(const struct ana_profile *p, const size_t **order);
/* The process an input was read as (after index), or NULL (a duplicate, a collector). */
const struct ana_proc *ana_profile_input_proc(const struct ana_profile *p, size_t input);
int ana_profile_add_records(struct ana_profile *p, const struct log_file *lf, size_t input);
int ana_profile_finish(struct ana_profile *p);
void ana_profile_free(struct ana_profile *p);
/* Append a printf-formatted warning (e.g. a skipped input): 0 or -ENOMEM. */
int ana_profile_add_warning(struct ana_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Merge src into dst by counter kind: SUM/TIME add, MAX max, TMAX max carrying the SIZE after
 * it, FIRST minimum non-zero, LAST maximum. */
void ana_counters_merge(uint64_t dst[LOG_NCOUNTERS], const uint64_t src[LOG_NCOUNTERS]);
/* 0 for a record whose figures its layer already counts elsewhere: the block layer's per-file
 * records repeat its device totals. Layer totals (the profile's, the daemon's) leave it out. */
int ana_record_in_layer_totals(const struct log_record *r);
/* opens + closes + seeks + stats + fsyncs + renames + dups + mmaps + meta_other. */
uint64_t ana_meta_ops(const uint64_t c[LOG_NCOUNTERS]);
/* dst += src, bucket by bucket (size and latency histograms alike). */
void ana_hist_add(uint64_t dst[LOG_HIST_BUCKETS], const uint64_t src[LOG_HIST_BUCKETS]);
/* Accesses of one direction (write 0/1) of a layer that started before the end of the previous one:
 * not sequential, and not the first access of their record (which has nothing before it). */
uint64_t ana_layer_random_ops(const struct ana_layer *l, int write);
struct ana_rates ana_layer_rates(const struct ana_layer *l, uint64_t wall_ns);
/* "<overflow>" for a catch-all record, else the record's path. */
const char *ana_record_path(const struct log_file *lf, const struct log_record *r);

/* iomode.c */
/* 1 when path names application data: not /proc, /sys, /dev (except /dev/shm and MPI runtimes'
 * segments there), not a pseudo-file, not what a program's runtime reads for itself (shared
 * objects, the loader's cache, locales, time zones, terminfo, name-service files, Python's
 * library: iomode.c lists them). */
int ana_is_data_path(const char *path);
/* 1 when a file entry holds application data: bytes moved, a real path, not a catch-all. (The I/O
 * mode also needs it in the job view: f->job_view.) */
int ana_is_data_file(const struct ana_file *f);
/* Layers whose records come from the kernel layer (eBPF). */
int ana_layer_is_kernel(unsigned layer);
/* A mount monitor's log (its header names the mount layer only). */
int ana_is_mount_log(const struct log_file *lf);
/* 1 when a record of this layer, of process pr, counts for the job's ranks, I/O mode and the rules
 * made for the user layers: the user layers, and for a process only the kernel saw, its system
 * calls. The other kernel records repeat the user layers' bytes further down. */
int ana_in_job_view(const struct ana_proc *pr, unsigned layer);
/* Layers that compute access patterns (sequential, strides, common sizes): the preload layers. */
int ana_layer_has_patterns(unsigned layer);
/* 0 or -ENOMEM. */
int ana_classify_io_mode(const struct ana_profile *p, struct ana_io_mode_info *out);
const char *ana_io_mode_name(enum ana_io_mode mode);

#endif
