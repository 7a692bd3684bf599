/* SPDX-License-Identifier: MIT */
/*
 * Lustre 2.15 client and server statistics: the parsers of its two text formats, and the
 * discovery of the files that hold them under /proc/fs/lustre and /sys/kernel/debug/lustre.
 * Pure functions on a buffer or a stream; nothing is printed, no Lustre library is linked.
 *
 * "stats" files (lustre/obdclass/lprocfs_status.c, lprocfs_stats_seq_show): a header of
 * snapshot_time, start_time and elapsed_time ("1700000000.123456789 secs.nsecs"), then one line
 * per counter that has samples: "name  COUNT samples [unit]", and for a counter that keeps them,
 * " min max sum" and " sumsq". "rpc_stats" files (lustre/osc/lproc_osc.c osc_rpc_stats_seq_show,
 * lustre/mdc/lproc_mdc.c mdc_rpc_stats_seq_show, lustre/obdclass/genops.c
 * obd_mod_rpc_stats_seq_show): the same header with colons, "name: N" lines, then histograms:
 * a line of column names ("read", "write" or "modify"), a title line
 * ("pages per rpc  rpcs % cum % | rpcs % cum %") and rows "1:  0 0 0 | 3 10 10".
 *
 * Where 2.15 puts them (each kind is looked for under both roots, so a release that moves one
 * is still found): llite/NAME/stats in debugfs; osc/NAME/rpc_stats, mdc/NAME/rpc_stats,
 * obdfilter/NAME/stats and mdt/NAME/md_stats in procfs.
 *
 * Hostile text: a line that is none of these, a number that is no number or overflows 64 bits,
 * a name past its bound, or the cut-short last line is skipped and counted (`skipped`). A
 * histogram that the end of the text cuts (its last row is not the one the kernel stops at,
 * where every column's cumulative percentage is 100) is dropped (`dropped`); so is an all-zero
 * histogram at the very end of the text, which cannot be told from a longer one cut after its
 * first row. A file past SYS_LUSTRE_TEXT_MAX bytes is refused. The scan never follows a symbolic link below a root.
 */
#ifndef IOSTRATA_SYS_LUSTRE_H
#define IOSTRATA_SYS_LUSTRE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SYS_LUSTRE_PROC_ROOT "/proc/fs/lustre"
#define SYS_LUSTRE_DEBUG_ROOT "/sys/kernel/debug/lustre"

/* The largest file read: md_stats, the longest, is about 60 lines. */
#define SYS_LUSTRE_TEXT_MAX (1u << 20)
/* A counter, scalar or histogram name with its NUL ("wrong_page_from_grab_cache_page" is 31). */
#define SYS_LUSTRE_NAME_MAX 64
#define SYS_LUSTRE_UNIT_MAX 16
/* A target name with its NUL (Lustre's MAX_OBD_NAME is 128). */
#define SYS_LUSTRE_TARGET_MAX 128
/* Rows of a histogram (the kernel's OBD_HIST_MAX is 32), histograms and scalars of a file. */
#define SYS_LUSTRE_HIST_ROWS 64
#define SYS_LUSTRE_HISTS_MAX 16
#define SYS_LUSTRE_SCALARS_MAX 32

/* A time of the header: seconds and nanoseconds. */
struct sys_lustre_time {
	uint64_t sec;
	uint32_t nsec;
};

/* The three header lines; a member is valid when its bit (1 snapshot, 2 start, 4 elapsed) is in
 * has_times. */
struct sys_lustre_header {
	unsigned has_times;
	struct sys_lustre_time snapshot, start, elapsed;
};

/* One counter of a stats file: "read_bytes  12 samples [bytes] 4096 1048576 8392704 7.0e12". */
struct sys_lustre_stat {
	char name[SYS_LUSTRE_NAME_MAX];
	char unit[SYS_LUSTRE_UNIT_MAX]; /* "reqs", "bytes", "usec(s)"; "" when the line has none */
	uint64_t count;                 /* samples */
	int has_minmax;                 /* min, max and sum are there */
	int has_sumsq;
	int64_t min, max, sum;          /* signed in the kernel (%lld) */
	uint64_t sumsq;                 /* sum of squares */
};

struct sys_lustre_stats {
	struct sys_lustre_header hdr;
	struct sys_lustre_stat *v; /* in the order of the text */
	size_t n;
	size_t skipped;
};

/* "read RPCs in flight:  3", "modify_RPCs_in_flight:  0". */
struct sys_lustre_scalar {
	char name[SYS_LUSTRE_NAME_MAX];
	int64_t value;
};

struct sys_lustre_hist_row {
	uint64_t key;        /* the bucket: pages per RPC, RPCs in flight, offset in pages */
	uint64_t rpcs[2];    /* per column: read and write, or modify alone */
	uint32_t pct[2], cum[2]; /* the percentages as printed */
};

struct sys_lustre_hist {
	char title[SYS_LUSTRE_NAME_MAX];   /* "pages per rpc", "rpcs in flight", "offset" */
	char cols[2][SYS_LUSTRE_UNIT_MAX]; /* "read" and "write", or "modify" and "" */
	unsigned ncols;                    /* 1 or 2 */
	size_t nrows;
	struct sys_lustre_hist_row rows[SYS_LUSTRE_HIST_ROWS];
};

struct sys_lustre_rpc_stats {
	struct sys_lustre_header hdr;
	struct sys_lustre_scalar scalars[SYS_LUSTRE_SCALARS_MAX];
	size_t nscalars;
	struct sys_lustre_hist *hists; /* in the order of the text */
	size_t nhists;
	size_t skipped;                /* lines not understood */
	size_t dropped;                /* histograms the text cut short */
};

/* Parse the text buf[0..len): 0, -EFBIG (len > SYS_LUSTRE_TEXT_MAX) or -ENOMEM; out is empty
 * on error. Free with the matching _free. */
int sys_lustre_stats_parse(const char *buf, size_t len, struct sys_lustre_stats *out);
int sys_lustre_rpc_stats_parse(const char *buf, size_t len, struct sys_lustre_rpc_stats *out);

/* Read f to its end and parse it: also -errno of the read. */
int sys_lustre_stats_read(FILE *f, struct sys_lustre_stats *out);
int sys_lustre_rpc_stats_read(FILE *f, struct sys_lustre_rpc_stats *out);

/* Read the file at path (a symbolic link there is refused: -ELOOP): also -errno of the open. */
int sys_lustre_stats_load(const char *path, struct sys_lustre_stats *out);
int sys_lustre_rpc_stats_load(const char *path, struct sys_lustre_rpc_stats *out);

void sys_lustre_stats_free(struct sys_lustre_stats *s);
void sys_lustre_rpc_stats_free(struct sys_lustre_rpc_stats *s);

/* Lookups; NULL when absent. A histogram is named by its title and first column, since an mdc
 * file has two "rpcs in flight" tables ("modify", and "read"/"write"). */
const struct sys_lustre_stat *sys_lustre_stat_by_name(const struct sys_lustre_stats *s, const char *name);
const struct sys_lustre_scalar *sys_lustre_scalar_by_name(const struct sys_lustre_rpc_stats *s, const char *name);
const struct sys_lustre_hist *sys_lustre_hist_by_title(const struct sys_lustre_rpc_stats *s, const char *title,
						       const char *col0);

/* Discovery. */
enum sys_lustre_kind {
	SYS_LUSTRE_LLITE,     /* a client mount: llite/FSNAME-SBI/stats */
	SYS_LUSTRE_OSC,       /* a client's OST connection: osc/NAME/rpc_stats */
	SYS_LUSTRE_MDC,       /* a client's MDT connection: mdc/NAME/rpc_stats */
	SYS_LUSTRE_OBDFILTER, /* an OST on this server: obdfilter/NAME/stats */
	SYS_LUSTRE_MDT,       /* an MDT on this server: mdt/NAME/md_stats */
	SYS_LUSTRE_KIND_COUNT
};

enum sys_lustre_format { SYS_LUSTRE_FMT_STATS, SYS_LUSTRE_FMT_RPC_STATS };

/* The two roots; a NULL member is its default above. */
struct sys_lustre_roots {
	const char *proc;
	const char *debug;
};

struct sys_lustre_target {
	enum sys_lustre_kind kind;
	enum sys_lustre_format format;
	const char *kind_name;              /* "llite", "osc", "mdc", "obdfilter", "mdt" */
	const char *file;                   /* "stats", "rpc_stats", "md_stats" */
	const char *root;                   /* the root it is under */
	char name[SYS_LUSTRE_TARGET_MAX];   /* "lustre-OST0000-osc-ffff8b2c4e1f5000" */
	char path[PATH_MAX];                /* root/kind/name/file */
};

/* Called once per target; a negative return stops the scan and is returned. */
typedef int (*sys_lustre_target_fn)(const struct sys_lustre_target *t, void *ctx);

/* Lists the targets under both roots (roots NULL: the defaults), proc root first, kinds in the
 * order above, names sorted. A root that does not exist holds no target (no Lustre); a kind
 * directory, target directory or file that is a symbolic link is not followed, and it counts in
 * *skipped (when skipped is not NULL), as does a name past its bound or a root that exists but
 * cannot be opened (debugfs for a user other than root). Returns the number of targets. */
int sys_lustre_scan(const struct sys_lustre_roots *roots, sys_lustre_target_fn fn, void *ctx, size_t *skipped);

/* Opens a target's file for reading, each component below the root with O_NOFOLLOW (a link
 * put there since the scan is refused): a descriptor, or -errno. */
int sys_lustre_target_open(const struct sys_lustre_target *t);

#endif
