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
#define LOG_VERSION 1
#define LOG_HEADER_SIZE 4096
#define LOG_ENDIAN_MARK 0x01020304u
#define LOG_MAX_SECTIONS 8
#define LOG_HIST_BUCKETS 32 /* 0 B, [1,2), [2,4) ... [512 MiB, 1 GiB), >= 1 GiB */
#define LOG_COMMON_SLOTS 8  /* distinct access sizes / strides tracked exactly per record */

/*
 * Counter kinds say how a counter is merged and converted:
 *   SUM   added across processes;              MAX   maximum;
 *   TIME  a duration, clock ticks in a live file, ns in a final log, added;
 *   TMAX  a duration, merged by maximum;       FIRST a CLOCK_MONOTONIC timestamp, minimum non-zero;
 *   LAST  a CLOCK_MONOTONIC timestamp, maximum; SIZE  paired with the TMAX before it (its size).
 */
enum log_counter_kind { LOG_K_SUM, LOG_K_MAX, LOG_K_TIME, LOG_K_TMAX, LOG_K_FIRST, LOG_K_LAST, LOG_K_SIZE };

/* X(NAME, kind, "one-line meaning") — the enum, the printed names and docs/FORMAT.md come from here. */
#define LOG_COUNTERS(X)                                                                                 \
	X(OPENS, SUM, "successful opens (open, openat, creat, fopen, fdopen ...)")                              \
	X(CLOSES, SUM, "closes (close, close_range, fclose)")                                                  \
	X(READS, SUM, "read operations (read, pread, readv, preadv, fread, fgetc, fgets, fscanf ...)")         \
	X(WRITES, SUM, "write operations (write, pwrite, writev, pwritev, fwrite, fputc, fprintf ...)")        \
	X(SEEKS, SUM, "seeks (lseek, fseek, fseeko, fsetpos, rewind)")                                         \
	X(STATS, SUM, "stat-family calls (stat, lstat, fstat, fstatat, statx)")                                \
	X(FSYNCS, SUM, "syncs (fsync, fdatasync, sync_file_range, msync)")                                    \
	X(FLUSHES, SUM, "stdio fflush calls")                                                                  \
	X(MMAPS, SUM, "mmap calls on the file")                                                                \
	X(RENAMES, SUM, "renames with the file as source (rename, renameat, renameat2)")                       \
	X(DUPS, SUM, "descriptor duplications (dup, dup2, dup3, fcntl F_DUPFD)")                               \
	X(META_OTHER, SUM, "other metadata ops (access, truncate, fallocate, fadvise, unlink, mkdir, fcntl ...)")\
	X(BYTES_READ, SUM, "bytes returned by reads")                                                          \
	X(BYTES_WRITTEN, SUM, "bytes accepted by writes")                                                      \
	X(MAX_READ_END, MAX, "end offset (offset + bytes) of the furthest read")                               \
	X(MAX_WRITE_END, MAX, "end offset (offset + bytes) of the furthest write")                             \
	X(SEQ_READS, SUM, "reads starting at or after the end of the previous read of the file")               \
	X(SEQ_WRITES, SUM, "writes starting at or after the end of the previous write of the file")            \
	X(CONSEC_READS, SUM, "reads starting exactly at the end of the previous read (subset of SEQ)")         \
	X(CONSEC_WRITES, SUM, "writes starting exactly at the end of the previous write (subset of SEQ)")      \
	X(RW_SWITCHES, SUM, "times the file's access changed between reading and writing")                     \
	X(FILE_NOT_ALIGNED, SUM, "reads/writes whose offset is not a multiple of the file alignment")          \
	X(MEM_NOT_ALIGNED, SUM, "reads/writes whose buffer address is not a multiple of the memory alignment") \
	X(TIME_READ, TIME, "cumulative ns inside read operations")                                             \
	X(TIME_WRITE, TIME, "cumulative ns inside write operations")                                           \
	X(TIME_META, TIME, "cumulative ns inside open, close, seek, stat, sync and other metadata ops")        \
	X(OPEN_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first open started")                                 \
	X(OPEN_LAST, LAST, "CLOCK_MONOTONIC ns when the last open ended")                                      \
	X(READ_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first read started")                                 \
	X(READ_LAST, LAST, "CLOCK_MONOTONIC ns when the last read ended")                                      \
	X(WRITE_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first write started")                               \
	X(WRITE_LAST, LAST, "CLOCK_MONOTONIC ns when the last write ended")                                    \
	X(CLOSE_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first close started")                               \
	X(CLOSE_LAST, LAST, "CLOCK_MONOTONIC ns when the last close ended")                                    \
	X(SLOWEST_READ_TIME, TMAX, "ns taken by the slowest single read")                                      \
	X(SLOWEST_READ_SIZE, SIZE, "bytes of the slowest single read")                                         \
	X(SLOWEST_WRITE_TIME, TMAX, "ns taken by the slowest single write")                                    \
	X(SLOWEST_WRITE_SIZE, SIZE, "bytes of the slowest single write")                                       \
	X(ERR_OPENS, SUM, "failed opens")                                                                      \
	X(ERR_READS, SUM, "failed reads")                                                                      \
	X(ERR_WRITES, SUM, "failed writes")                                                                    \
	X(ERR_SEEKS, SUM, "failed seeks")                                                                      \
	X(ERR_SYNCS, SUM, "failed syncs")                                                                      \
	X(ERR_META, SUM, "failed stat, close and other metadata ops")

enum log_counter {
#define LOG_X_ENUM(name, kind, doc) LOG_C_##name,
	LOG_COUNTERS(LOG_X_ENUM)
#undef LOG_X_ENUM
	LOG_NCOUNTERS
};

enum log_layer {
	LOG_LAYER_NONE = 0,
	LOG_LAYER_POSIX = 1,
	LOG_LAYER_STDIO = 2,
	LOG_LAYER_MPIIO = 3,  /* reserved */
	LOG_LAYER_KERNEL = 4, /* reserved */
	LOG_LAYER_MOUNT = 5,  /* reserved */
	LOG_LAYER_MAX = 5,
};

enum log_section_kind {
	LOG_SEC_STRINGS = 1,
	LOG_SEC_RECORDS = 2,
	LOG_SEC_EVENTS = 3, /* reserved: event runs (trace mode) */
	LOG_SEC_KERNEL = 4, /* reserved: kernel-layer data */
	LOG_SEC_MOUNT = 5,  /* reserved: mount-point data */
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
};

/* record.flags */
enum {
	LOG_R_USED = 1u << 0,
	LOG_R_OVERFLOW = 1u << 1, /* the catch-all record of its layer: files that did not fit */
	LOG_R_DEAD = 1u << 2,     /* lost an insertion race; holds nothing; readers skip it */
	LOG_R_PSEUDO = 1u << 3,   /* not a path: <STDIN>, <STDOUT>, <STDERR>, <fd:N> ... */
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
	uint64_t reserved[8];
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
	uint32_t host, exe, argv, argc; /* 328: string offsets; argv is argc NUL-separated strings */
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
	uint8_t reserved[LOG_HEADER_SIZE - 496];
};

_Static_assert(sizeof(struct log_header) == LOG_HEADER_SIZE, "header is 4096 bytes");
_Static_assert(offsetof(struct log_header, sections) == 48, "sections at 48");
_Static_assert(offsetof(struct log_header, pid) == 304, "pid at 304");
_Static_assert(offsetof(struct log_header, start_ns) == 360, "start_ns at 360");
_Static_assert(offsetof(struct log_header, tsc_ref) == 400, "tsc_ref at 400");
_Static_assert(offsetof(struct log_header, file_alignment) == 480, "alignment at 480");
_Static_assert(sizeof(struct log_record) % 64 == 0, "records are whole cache lines");

/* Bucket of a size in the log2 histograms: 0 for 0 B, b for [2^(b-1), 2^b), 31 for >= 1 GiB. */
static inline unsigned log_hist_bucket(uint64_t size)
{
	if (size == 0)
		return 0;
	unsigned b = 64 - (unsigned)__builtin_clzll(size);
	return b > LOG_HIST_BUCKETS - 1 ? LOG_HIST_BUCKETS - 1 : b;
}

/* Per-counter metadata generated from the table. */
extern const char *const log_counter_names[LOG_NCOUNTERS];
extern const char *const log_counter_docs[LOG_NCOUNTERS];
extern const uint8_t log_counter_kinds[LOG_NCOUNTERS];
const char *log_layer_name(unsigned layer);
int log_layer_from_name(const char *name);

#endif
