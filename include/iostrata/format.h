/* SPDX-License-Identifier: MIT */
/*
 * The iostrata log format: one fixed-width, little-endian layout shared by the live file (a
 * MAP_SHARED mapping the capture library updates in place) and the final log written at exit.
 * Every layer (POSIX, stdio, later kernel and mount) writes the same record type. This header
 * is the single source of truth; docs/FORMAT.md describes it byte by byte. It defines no code
 * beyond the counter table's X-macro and small inline helpers.
 */
#ifndef IOSTRATA_FORMAT_H
#define IOSTRATA_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define LOG_MAGIC "IOSTRATA" /* 8 bytes, not NUL-terminated in the file */
#define LOG_VERSION 4
#define LOG_HEADER_SIZE 4096
#define LOG_ENDIAN_MARK 0x01020304u
#define LOG_MAX_SECTIONS 8
#define LOG_HIST_BUCKETS 32 /* 0 B, [1,2), [2,4) ... [512 MiB, 1 GiB), >= 1 GiB */
#define LOG_COMMON_SLOTS 8  /* distinct access sizes / strides tracked exactly per record */

#include "iostrata/counters.h"

enum log_layer {
	LOG_LAYER_NONE = 0,
	LOG_LAYER_POSIX = 1,
	LOG_LAYER_STDIO = 2,
	LOG_LAYER_MPIIO = 3,     /* MPI_File_* calls: the MPI companion library (PMPI) or kernel uprobes */
	LOG_LAYER_SYSCALL = 4,   /* system calls seen by the kernel layer (eBPF) */
	LOG_LAYER_MOUNT = 5,     /* requests at a FUSE mount point (the mount monitor, src/mount) */
	LOG_LAYER_PAGECACHE = 6, /* page cache: read-in, eviction, dirtying, faults, readahead */
	LOG_LAYER_FS = 7,        /* filesystem tracepoints (ext4, xfs) */
	LOG_LAYER_BLOCK = 8,     /* block requests: per file when attributable, per device otherwise */
	LOG_LAYER_HDF5 = 9,      /* HDF5 files and datasets ("FILE:/DATASET"): the HDF5 companion library */
	LOG_LAYER_MAX = 9,
};

enum log_section_kind {
	LOG_SEC_STRINGS = 1,
	LOG_SEC_RECORDS = 2,
	LOG_SEC_EVENTS = 3, /* fixed-size events (struct log_event), e.g. `iostrata kernel --events` */
	LOG_SEC_KERNEL = 4, /* kernel-layer header (struct log_kernel_info) */
	LOG_SEC_MOUNT = 5,  /* reserved: mount-point data */
	LOG_SEC_TRACE = 6,  /* trace mode: per-thread blocks of event runs (struct log_trace_block) */
	LOG_SEC_TOTALS = 7, /* live files only: per-thread totals of the user layers (struct log_totals_slot) */
};

/* log_section.flags */
enum {
	LOG_SEC_F_ZSTD = 1u << 0,   /* the section's bytes are zstd frames; `size` is the compressed size */
	LOG_SEC_F_PACKED = 1u << 1, /* TRACE: blocks back to back, each as long as it is used (final log) */
};

/* header.flags */
enum {
	LOG_F_LIVE = 1u << 0,       /* still a live file: the process had not finished when read */
	LOG_F_FINISHED = 1u << 1,   /* finalized by the process itself at exit or exec */
	LOG_F_OVERFLOW = 1u << 2,   /* a table filled up; see the overflow counters and catch-all records */
	LOG_F_CRASHED = 1u << 3,    /* finalized by `iostrata recover`: the process died without finishing */
	LOG_F_EXEC = 1u << 4,       /* the process image ended in a successful exec */
	LOG_F_DISABLED = 1u << 5,   /* capture disabled itself; see disabled_reason */
	LOG_F_STDIO_SYSCALLS = 1u << 6, /* stdio's own read/write/seek/close reached the POSIX layer */
	LOG_F_FORKED_EXEC = 1u << 7, /* exec'd by a forked child that left no log (it did no counted call):
				      * fork_start_ns says when that child started */
	LOG_F_ARGV_CUT = 1u << 8,   /* argv holds the first argc of the argc_total arguments only */
	LOG_F_LIVE_KEPT = 1u << 9,  /* live file only: its image is in an exec and keeps it until the exec
				     * is known to have succeeded; its final log (flagged exec), if it leaves
				     * one, holds the same counters and stands for it (docs/FORMAT.md, "Live
				     * file and final log") */
	LOG_F_EXEC_KEPT = 1u << 10, /* final log of an exec (with LOG_F_EXEC): its image kept its live file
				     * through the exec, so that file is gone only once the exec succeeded
				     * or the image ended (docs/FORMAT.md, "An exec"); 0 from libraries
				     * before 2026-11-28, which removed it at the exec */
};

/* header.kernel_flags (a kernel log) */
enum {
	/* the block layer ran its completion alone (--block-completion): a request of page-cache I/O
	 * (writeback, read-in) is the file's, with no process; direct I/O keeps its submitter */
	LOG_KF_BLOCK_NO_PROC = 1u << 0,
	/* the default depth: on a device where a file's request went unseen (a completion the kernel
	 * did not run the block program for), the device did bytes beyond its seen + unseen (perhaps
	 * merged into that request after its start): on the device as unseen, from /proc/diskstats,
	 * on no file */
	LOG_KF_BLOCK_UNSEEN_NO_FILE = 1u << 1,
	/* the default depth since kern19: the block programs ran in the sampling windows only. A
	 * device's counts and bytes are /proc/diskstats' over the session (the device's, whoever
	 * asked); its latency histograms hold the requests begun in a window (untimed_requests: the
	 * others), its time counters are scaled from them to every request; no per-file block record,
	 * no request errors, no request size histograms */
	LOG_KF_BLOCK_SAMPLED = 1u << 2,
};

/* record.flags */
enum {
	LOG_R_USED = 1u << 0,
	LOG_R_OVERFLOW = 1u << 1, /* the catch-all record of its layer: files that did not fit */
	LOG_R_DEAD = 1u << 2,     /* lost an insertion race; holds nothing; readers skip it */
	LOG_R_PSEUDO = 1u << 3,   /* not a path: <STDIN>, <STDOUT>, <STDERR>, <fd:N> ... */
	LOG_R_DIR = 1u << 4,      /* opened as a directory (O_DIRECTORY, fdopendir): its listing is libc's
				   * getdents, which no counter sees */
	LOG_R_ERR_EXPECTED = 1u << 5, /* some call failed with an answer, not a fault: ENOENT, ENOTDIR,
				       * EEXIST, EAGAIN, EINTR, ESPIPE, ENOTTY (a probe, a non-blocking
				       * descriptor with nothing ready) */
	LOG_R_ERR_FAULT = 1u << 6, /* some call failed with any other errno (EIO, ENOSPC, EACCES, EISDIR ...) */
	LOG_R_DIRECT = 1u << 7,    /* opened or set O_DIRECT: reads and writes bypass the page cache */
	LOG_R_CREAT = 1u << 8,     /* opened with O_CREAT or O_TRUNC: the open itself may make or empty it */
};

enum log_clock_kind { LOG_CLOCK_NS = 0, LOG_CLOCK_TSC = 1 };

struct log_section {
	uint32_t kind;   /* enum log_section_kind; 0 = unused slot */
	uint32_t flags;  /* reserved, 0 */
	uint64_t offset; /* from the start of the file */
	uint64_t size;   /* bytes reserved (live) or used (final) */
	uint64_t count;  /* number of items (records; bytes for strings) */
};

struct log_common {
	int64_t value; /* access size or stride; slot empty while count == 0 */
	uint64_t count;
};

struct log_record {
	uint64_t id;        /* 64-bit FNV-1a of (layer, path) */
	uint32_t path;      /* offset of the path in the string section */
	uint16_t layer;     /* enum log_layer */
	uint16_t flags;     /* LOG_R_* */
	int32_t pid;        /* requesting pid when it differs from the header's (mount layer); else 0 */
	int32_t rank;       /* -1 unless known */
	uint64_t dev, ino;  /* file identity when the layer knows it, else 0 */
	uint64_t counters[LOG_NCOUNTERS];
	uint64_t read_hist[LOG_HIST_BUCKETS];
	uint64_t write_hist[LOG_HIST_BUCKETS];
	struct log_common sizes[LOG_COMMON_SLOTS];   /* access sizes, reads and writes together */
	struct log_common strides[LOG_COMMON_SLOTS]; /* start-offset distance between successive same-kind ops */
	uint64_t sizes_other, strides_other;         /* accesses whose value found no free slot */
	/* Scratch the capture layer uses for pattern detection; meaningless to readers. */
	uint64_t last_read_end, last_write_end;
	uint64_t last_read_off, last_write_off;
	uint64_t last_kind; /* 0 none, 1 read, 2 write */
	/* log2 latency histograms in ns ([2^(b-1), 2^b) ns, as the size histograms); kernel layers */
	uint64_t read_lat_hist[LOG_HIST_BUCKETS];
	uint64_t write_lat_hist[LOG_HIST_BUCKETS];
	/* Block layer: requests issued whose completion the kernel never showed the block program
	 * (docs/KERNEL.md, "Known gap"), and their bytes by direction; 0 in other layers. Seen +
	 * unseen = what the device did. */
	uint64_t unseen_requests, unseen_bytes_read, unseen_bytes_written;
	/* Block layer: bytes discarded (the discard requests are in META_OTHER), and requests counted
	 * at completion whose start the session never saw (issued before it began: no times, no
	 * latency bucket); 0 in other layers and in logs written before these fields (reserved, 0). */
	uint64_t discard_bytes, untimed_requests;
	/* Write aggregation's decision for this file in this process (enum log_agg_state; 0 when the
	 * file was not a candidate), the file system's statfs f_type (every magic number is 32 bits),
	 * and the median cost of the probe writes the decision was measured on (ns, after the bytes'
	 * share; 0 when taken from the table). Once reserved bytes, so older readers ignore them
	 * (docs/FORMAT.md). The record has no reserved bytes left. */
	uint32_t agg_state, agg_fs_magic;
	uint64_t agg_probe_ns;
};

/* record.agg_state */
enum log_agg_state {
	LOG_AGG_NONE = 0,
	LOG_AGG_ON = 1,            /* aggregated: requests measured costly, or when=always */
	LOG_AGG_BYPASS_LOCAL = 2,  /* passed through: a local file system (table), where a small write
				    * costs its bytes, not a request */
	LOG_AGG_BYPASS_CHEAP = 3,  /* passed through: the probe writes cost less than the threshold */
	LOG_AGG_PROBING = 4,       /* still measuring when the log was written */
};

/* One event of an EVENTS section: 64 bytes, times CLOCK_MONOTONIC ns (also in a live file). */
struct log_event {
	uint64_t start_ns;
	uint64_t dur_ns;   /* 0 for instantaneous events (page added, page dirtied ...) */
	int32_t pid, tid;  /* the process and thread in whose context it happened (0 = interrupt/unknown) */
	uint8_t layer;     /* enum log_layer */
	uint8_t op;        /* enum log_op */
	uint16_t flags;    /* LOG_E_* */
	uint32_t dev;      /* device (dev_t as stat() gives it, 32 bits), 0 if unknown */
	uint64_t ino;      /* inode, 0 if unknown; the path is in the record with the same dev/ino */
	uint64_t offset;   /* file offset in bytes (block layer: sector * 512); UINT64_MAX if unknown */
	uint64_t size;     /* bytes asked for (pages * page size for page-cache events) */
	int64_t result;    /* bytes done or the return value, -errno on failure */
};
_Static_assert(sizeof(struct log_event) == 64, "events are 64 bytes");

/*
 * Trace mode (`iostrata run --trace`). Each thread appends to its own block of the TRACE section,
 * so the hot path takes no lock; a block is claimed with one atomic add on header.trace_blocks.
 * A call that continues the thread's open run (same record, same op, same size, the next
 * offset) only updates the run; any other call closes the run, which is then encoded into the
 * block's payload (see docs/FORMAT.md, "Trace"), and opens a new one. The open run lives in the
 * block header, in the live file's shared mapping: it survives SIGKILL like everything else.
 */
#define LOG_TRACE_MAGIC 0x42525449u /* "ITRB" in the file's bytes */
#define LOG_TRACE_BLOCK 32768u      /* bytes per block in a live file, header included */
#define LOG_TRACE_OP_ESC 31u        /* tag op field value meaning "the op follows as a varint" */

/* A run of calls: one call when count == 1. Times in the header's clock (ticks or ns). */
struct log_trace_run {
	uint64_t start;   /* first call's start */
	uint64_t end;     /* last call's end */
	uint64_t busy;    /* the calls' durations added */
	uint64_t min;     /* the fastest call's duration */
	uint64_t offset;  /* first call's file offset; UINT64_MAX when the op has none */
	uint64_t size;    /* bytes each call moved (0 for ops without data) */
	int64_t result;   /* 0, or -errno of a failed call (a failed call is never part of a run) */
	uint64_t count;   /* calls in the run; 0: no open run */
	uint32_t record;  /* record slot of the file (index in the RECORDS section) */
	uint8_t op;       /* enum log_op */
	uint8_t pad0;
	uint16_t flags;   /* reserved, 0 */
};

/* The header of a trace block; its payload (encoded runs) follows. 128 bytes. */
struct log_trace_block {
	uint32_t magic;       /*   0: LOG_TRACE_MAGIC */
	uint32_t used;        /*   4: payload bytes holding complete entries (release-stored) */
	int32_t pid, tid;     /*   8 */
	uint32_t seq;         /*  16: 0, 1, 2 ... per thread, in the order the thread claimed them */
	uint32_t size;        /*  20: payload capacity (live); = used in a final log */
	uint64_t dropped;     /*  24: calls this thread could not trace up to now (latest block: total) */
	uint32_t open_at;     /*  32: the open run is valid when open.count > 0 and open_at == used */
	uint32_t flags;       /*  36: reserved, 0 */
	struct log_trace_run open; /* 40: the run being extended */
	uint8_t reserved[128 - 40 - sizeof(struct log_trace_run)];
};
_Static_assert(sizeof(struct log_trace_run) == 72, "runs are 72 bytes");
_Static_assert(sizeof(struct log_trace_block) == 128, "trace block headers are 128 bytes");

/* Tag byte of an encoded entry. */
enum {
	LOG_T_OP_MASK = 0x1f,  /* op, or LOG_TRACE_OP_ESC */
	LOG_T_SAME_FILE = 0x20, /* same record as the previous entry of the block */
	LOG_T_SAME_SIZE = 0x40, /* same size as the previous data entry of the block */
	LOG_T_MORE = 0x80,     /* a varint of LOG_M_* flags follows */
};
enum {
	LOG_M_COUNT = 1u << 0,  /* a run: count, busy and min follow */
	LOG_M_RESULT = 1u << 1, /* a non-zero result (-errno) follows */
	LOG_M_ABSOFF = 1u << 2, /* the offset is written as itself, not as a distance */
};

/*
 * Per-thread totals (a live file's TOTALS section, docs/FORMAT.md "Totals"): for the user layers
 * POSIX and stdio, what their records' node-second figures sum to (calls and bytes per direction,
 * metadata calls as ana_meta_ops counts them, the request-size histograms), kept once more per
 * thread so that a reader sums a process without reading its records. A thread claims a slot at
 * its first counted call with one atomic add on header.totals_claimed and alone writes it after,
 * with plain stores; threads beyond the capacity share the last slot with atomic adds. Exact: every
 * update of these figures in a POSIX or stdio record adds the same to the calling thread's slot
 * (a reader may see one ahead of the other for the duration of a call). Final logs drop it.
 */
#define LOG_TOTALS_SLOTS 64 /* slots of a live file's TOTALS section, the shared last one included */
struct log_totals_layer {
	uint64_t reads, writes, bytes_read, bytes_written;
	uint64_t meta;          /* opens, closes, seeks, stats, syncs, renames, dups, mmaps, other */
	uint64_t reserved[3];
	uint64_t read_hist[LOG_HIST_BUCKETS];
	uint64_t write_hist[LOG_HIST_BUCKETS];
};
struct log_totals_slot {
	int32_t tid;            /* the thread that claimed it (the last slot: the first to share it) */
	uint32_t flags;         /* reserved (0) */
	uint64_t reserved[7];
	struct log_totals_layer layer[2]; /* [0] POSIX, [1] stdio */
};
_Static_assert(sizeof(struct log_totals_layer) == 576, "totals layers are 576 bytes");
_Static_assert(sizeof(struct log_totals_slot) == 1216, "totals slots are 1216 bytes");

/* log_event.flags */
enum {
	LOG_E_WRITEBACK = 1u << 0, /* block I/O issued by writeback, attributed by inode */
	LOG_E_CACHE_MISS = 1u << 1, /* a read during which pages were read in */
};

struct log_header {
	char magic[8];          /*   0 */
	uint32_t version;       /*   8 */
	uint32_t header_size;   /*  12 */
	uint32_t endian;        /*  16 */
	uint32_t flags;         /*  20: LOG_F_* */
	uint32_t record_size;   /*  24 */
	uint32_t ncounters;     /*  28 */
	uint32_t nsections;     /*  32 */
	uint32_t max_records;   /*  36 */
	uint32_t nrecords;      /*  40: records handed out, including the catch-alls and dead ones */
	uint32_t string_used;   /*  44: bytes of the string section in use */
	struct log_section sections[LOG_MAX_SECTIONS]; /* 48 .. 304 */
	int32_t pid, ppid;      /* 304 */
	uint32_t uid, gid;      /* 312 */
	int32_t rank, nprocs;   /* 320: -1 when unknown */
	uint32_t host, exe, argv, argc; /* 328: string offsets; argv is argc NUL-separated strings (see argc_total) */
	uint32_t job, cwd, outdir, live_path; /* 344 */
	uint64_t start_ns;      /* 360: CLOCK_MONOTONIC at start */
	uint64_t end_ns;        /* 368: CLOCK_MONOTONIC at the end; 0 while live */
	uint64_t start_wall_ns; /* 376: CLOCK_REALTIME taken together with start_ns */
	int32_t exit_status;    /* 384: -1 when unknown */
	int32_t term_signal;    /* 388: 0 when none or unknown */
	uint32_t clock_kind;    /* 392: enum log_clock_kind of TIME/TMAX/FIRST/LAST counters */
	uint32_t disabled_reason; /* 396: 0, or an errno-like code why capture disabled itself */
	uint64_t tsc_ref, ns_ref;           /* 400: a (ticks, CLOCK_MONOTONIC ns) pair taken at start */
	uint64_t calib_seq;                 /* 416: even when calib_* is stable */
	uint64_t calib_tsc, calib_ns;       /* 424: a later pair; ticks->ns slope = (calib_ns-ns_ref)/(calib_tsc-tsc_ref) */
	uint64_t proc_start_ticks;          /* 440: /proc/PID/stat starttime, to tell a reused pid */
	uint64_t overflow_opens;            /* 448: opens attributed to a catch-all record */
	uint64_t untracked_ops;             /* 456: ops on fds beyond the fd table */
	uint64_t mmap_table_full;           /* 464: mappings not remembered (munmap/msync unattributed) */
	uint64_t aio_table_full;            /* 472: aio requests whose completion could not be matched */
	uint32_t file_alignment;            /* 480 */
	uint32_t mem_alignment;             /* 484 */
	uint64_t intercepted_calls;         /* 488: reserved (0) */
	uint64_t events_dropped;            /* 496: events lost (ring buffer full, event file full) */
	uint64_t kernel_table_full;         /* 504: kernel-layer map insertions that found the map full */
	uint32_t kernel_layers;             /* 512: bit (1 << layer) for each kernel layer that was attached */
	uint32_t kernel_lat_every;          /* 516: syscall layer: 1 call in N timed (default depth); 0 or 1: every call */
	uint64_t trace_blocks;              /* 520: trace blocks handed out (live: may exceed the capacity) */
	uint64_t trace_dropped;             /* 528: calls not traced (no free block, re-entry), all threads */
	uint32_t trace_block_size;          /* 536: bytes per block in a live file (header included) */
	uint32_t trace_flags;               /* 540: reserved (0) */
	uint64_t kernel_prog_misses;        /* 544: kernel-layer program runs the kernel skipped (recursion) */
	uint64_t fork_start_ns;             /* 552: with LOG_F_FORKED_EXEC: CLOCK_MONOTONIC start of the
					     * forked image before this one's exec, which wrote no log; else 0 */
	uint32_t argc_total;                /* 560: the program's argc (argc: how many are stored); 0 = argc */
	uint32_t kernel_flags;              /* 564: LOG_KF_* (a kernel log); else 0 */
	uint64_t totals_claimed;            /* 568: TOTALS slots handed out (live: may exceed the capacity;
					     * those beyond it share the last slot) */
	uint32_t totals_slot_size;          /* 576: bytes per TOTALS slot (0: no TOTALS section) */
	uint32_t totals_flags;              /* 580: reserved (0) */
	uint64_t kernel_closes_unnamed;     /* 584: kernel default depth: closes counted on no file (the
					     * descriptor map could not name their file) */
	uint64_t kernel_fds_unfollowed;     /* 592: kernel default depth: descriptors the map could not
					     * follow (their closes, if of a file, are counted on none) */
	uint8_t reserved[LOG_HEADER_SIZE - 600];
};

_Static_assert(sizeof(struct log_header) == LOG_HEADER_SIZE, "header is 4096 bytes");
_Static_assert(offsetof(struct log_header, sections) == 48, "sections at 48");
_Static_assert(offsetof(struct log_header, pid) == 304, "pid at 304");
_Static_assert(offsetof(struct log_header, start_ns) == 360, "start_ns at 360");
_Static_assert(offsetof(struct log_header, tsc_ref) == 400, "tsc_ref at 400");
_Static_assert(offsetof(struct log_header, file_alignment) == 480, "alignment at 480");
_Static_assert(offsetof(struct log_header, trace_blocks) == 520, "trace fields at 520");
_Static_assert(offsetof(struct log_header, fork_start_ns) == 552, "fork_start_ns at 552");
_Static_assert(offsetof(struct log_header, argc_total) == 560, "argc_total at 560");
_Static_assert(offsetof(struct log_header, totals_claimed) == 568, "totals fields at 568");
_Static_assert(offsetof(struct log_header, kernel_closes_unnamed) == 584, "descriptor map counts at 584");
_Static_assert(sizeof(struct log_record) % 64 == 0, "records are whole cache lines");

/*
 * A job archive (`iostrata merge`): a job's final logs in one file. A 64-byte header, the members
 * back to back (each the bytes of one final log as the writer wrote it, zstd-compressed as a
 * whole), then the index: one 64-byte entry per member, in strcmp order of the names, then the
 * names. CRC-32C (Castagnoli) guards the header, the index and every member's stored bytes.
 * src/log/archive.c reads and writes it; docs/FORMAT.md, "Job archive", describes it.
 */
#define LOG_ARCHIVE_MAGIC "IOSTRJOB" /* 8 bytes; a log reader refuses it: it is not "IOSTRATA" */
#define LOG_ARCHIVE_VERSION 1
#define LOG_ARCHIVE_NAME_MAX 255     /* a member's name: a file name, no '/', no NUL */

struct log_archive_header {
	char magic[8];         /*  0: LOG_ARCHIVE_MAGIC */
	uint32_t version;      /*  8: LOG_ARCHIVE_VERSION */
	uint32_t header_size;  /* 12: 64 */
	uint32_t endian;       /* 16: LOG_ENDIAN_MARK */
	uint32_t entry_size;   /* 20: 64, sizeof(struct log_archive_entry) */
	uint64_t count;        /* 24: members */
	uint64_t index_offset; /* 32: where the index starts; the members lie in [64, index_offset) */
	uint64_t index_size;   /* 40: count * 64 + the name bytes */
	uint64_t file_size;    /* 48: the archive's size: index_offset + index_size */
	uint32_t index_crc;    /* 56: CRC-32C of the index_size bytes at index_offset */
	uint32_t header_crc;   /* 60: CRC-32C of bytes 0..59 */
};

enum { LOG_AM_ZSTD = 1u << 0 }; /* log_archive_entry.flags: stored as zstd frames, else as is */

struct log_archive_entry {
	uint64_t offset;   /*  0: the member's stored bytes, from the start of the archive */
	uint64_t size;     /*  8: stored bytes */
	uint64_t raw_size; /* 16: bytes of the log itself (= size when stored as is) */
	uint32_t crc;      /* 24: CRC-32C of the stored bytes */
	uint32_t raw_crc;  /* 28: CRC-32C of the log's bytes */
	uint32_t flags;    /* 32: LOG_AM_* */
	uint32_t name_off; /* 36: offset of the name in the name table, which follows the entries */
	uint32_t name_len; /* 40: bytes of the name; a NUL follows them */
	uint32_t reserved0; /* 44: 0 */
	uint64_t mtime_ns; /* 48: the log file's modification time, CLOCK_REALTIME ns (0: unknown) */
	uint64_t reserved1; /* 56: 0 */
};
_Static_assert(sizeof(struct log_archive_header) == 64, "archive header is 64 bytes");
_Static_assert(sizeof(struct log_archive_entry) == 64, "archive entries are 64 bytes");

/* Bucket of a size in the log2 histograms: 0 for 0 B, b for [2^(b-1), 2^b), 31 for >= 1 GiB. */
static inline unsigned log_hist_bucket(uint64_t size)
{
	if (size == 0)
		return 0;
	unsigned b = 64 - (unsigned)__builtin_clzll(size);
	return b > LOG_HIST_BUCKETS - 1 ? LOG_HIST_BUCKETS - 1 : b;
}

/* record.id: the 64-bit FNV-1a hash of the layer number and then the path's bytes. */
static inline uint64_t log_record_id(unsigned layer, const char *path)
{
	uint64_t h = 1469598103934665603ull;
	h = (h ^ layer) * 1099511628211ull;
	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ull;
	return h;
}

/* Per-counter metadata generated from the table. */
extern const char *const log_counter_names[LOG_NCOUNTERS];
extern const char *const log_counter_docs[LOG_NCOUNTERS];
extern const uint8_t log_counter_kinds[LOG_NCOUNTERS];
const char *log_layer_name(unsigned layer);
/* "none", "on", "bypass_local", "bypass_cheap", "probing" (enum log_agg_state); "unknown" else */
const char *log_agg_state_name(uint64_t state);
/* A file system's name by statfs f_type ("ext4", "fuse" ...), or NULL when not in the table; and
 * whether it is local (in-kernel, local storage or memory: a small write costs its bytes). */
const char *log_fs_name(uint64_t magic);
int log_fs_is_local(uint64_t magic);
int log_layer_from_name(const char *name);
/* 1 when a record's path names a descriptor that has no file behind it: the kernel's name of a
 * pipe, socket or anonymous inode ("pipe:[INODE]", "socket:[INODE]", "anon_inode:[eventfd]",
 * "anon_inode:inotify", any "TYPE:..." without a leading slash), a memfd ("/memfd:NAME")
 * or a standard stream not on a file ("<STDIN>", "<STDOUT>", "<STDERR>"). docs/FORMAT.md. */
int log_path_is_pseudo(const char *path);

#endif
