/* SPDX-License-Identifier: MIT */
/*
 * Logs that belong to users, read by a root daemon: hostile input. Every open is O_NOFOLLOW,
 * relative to a directory already checked, under the owner's filesystem identity (setfsuid), so
 * a planted symlink or hard link reaches nothing its owner could not read; the file must be a
 * regular file of the directory's owner; sizes and offsets of the header are checked against
 * the file and against limits before anything is read, and everything the reader sees is read
 * with pread into private memory (a file truncated under us costs a short read). What is read is
 * handed to the one log reader, which validates it again. Nothing here prints.
 *
 * The per-second path (docs/DAEMON.md, "Reading live files") keeps a live file mapped read-only
 * after a full reading and only sums its records' node-second figures in place: no copy, no
 * parse, no allocation, work bounded by the records mapped. A user who truncates the file under
 * the mapping makes the next access fault (SIGBUS): a handler that acts only on the thread inside
 * that summing, and only for an address in the mapping being summed, unwinds it (siglongjmp) and
 * the caller drops the mapping; any other SIGBUS keeps its default action.
 */
#ifndef IOSTRATA_DAEMON_SOURCE_H
#define IOSTRATA_DAEMON_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "daemon/cursor.h"
#include "iostrata/reader.h"

struct dmn_limits {
	uint32_t max_records;  /* records taken from a live file at most */
	uint64_t max_strings;  /* string bytes taken from a live file at most */
	uint64_t max_final;    /* bytes of a final log at most */
};

/* Work under uid's filesystem identity (root only; a no-op otherwise) and back. */
void dmn_fs_as(uid_t uid, gid_t gid);
void dmn_fs_as_self(void);

/* Opens dir (absolute, O_NOFOLLOW on its last component) and checks it is a directory owned by
 * want_uid (any owner when want_uid is (uid_t)-1): the descriptor, or -errno with err set
 * (-EPERM: another owner, or writable by others). st receives its status. */
int dmn_open_dir(int parent, const char *name, uid_t want_uid, struct stat *st, char *err, size_t errlen);

/* A live file's TRACE area, for trace.h to read a block at a time: the file stays open. */
struct dmn_trace_area {
	int fd;                /* -1: the log has no trace (or it was not asked for) */
	struct log_header h;   /* the header as in the file (its clock, the blocks claimed) */
	uint64_t off, count;   /* the section: where it starts, its blocks (each LOG_TRACE_BLOCK bytes) */
	uint64_t fsize;
};

/*
 * What the last summing of a mapped file saw, so that the next one reads less (docs/DAEMON.md,
 * "Reading live files"): per record its call counts and, per direction, one bucket of its
 * request-size histogram and that bucket's value; per user layer the histograms summed. The
 * capture library counts a request's size in the histogram of its direction with the call
 * (log_note_access), so when a record's calls of a direction grew by exactly what that bucket grew
 * by, no other bucket of it moved: its histogram is not read further (one cache line, not four),
 * and a record whose calls did not move has its histograms read not at all. Anything else (a
 * count that went back or grew unlike the bucket, a record that appeared, died or changed layer,
 * a layer other than POSIX and stdio, whose histograms are filled apart from their counts) sums
 * every record's histograms from the start, as without a memo. Each bucket summed is one the file
 * held at some moment since the last full reading, never more than it holds now: a bucket moved
 * unlike its calls (a call in flight, a file written by hand) is taken late, by the next summing
 * from the start or the next full reading (every stats_interval, and at the process's end), never
 * twice and never lost.
 */
struct dmn_live_rmemo {
	uint64_t calls[2];  /* reads, writes as last summed */
	uint64_t val[2];    /* bucket[d] of that direction's histogram as last summed */
	uint16_t layer;     /* the layer it was summed into (0: not summed) */
	uint8_t bucket[2];
};
struct dmn_live_memo {
	uint32_t n;           /* the records summed */
	int fast;             /* the next summing may go by the memo (0: from the start) */
	struct dmn_hist h[2]; /* POSIX's and stdio's histograms as summed (layer 0: no record of it) */
	struct dmn_live_rmemo r[];
};

/* A live file's header page and records, mapped read-only (hdr NULL: none). The descriptor is
 * closed once mapped (a mapping keeps its file: 1,000 live files cost no descriptors). */
struct dmn_live_map {
	const unsigned char *hdr;  /* LOG_HEADER_SIZE bytes */
	unsigned char *rec_map;    /* the records' mapping (page aligned) and its length */
	size_t rec_map_len;
	const struct log_record *rec; /* the first record in it */
	uint32_t rec_lim;          /* records the file may have: the header's capacity, the limit, its size */
	uint32_t rec_cap;          /* records it holds: those in use when mapped, to the end of their
				    * last page (at most rec_lim) */
	uint32_t rec_seen;         /* records the last full reading took (the caller sets it): the sums
				    * go no further (a new record is read in full first) */
	int32_t pid;               /* what the header said when mapped: a header that says otherwise */
	uint64_t start_ns;         /* later is another log (rewritten): read in full again */
	dev_t dev;
	ino_t ino;
	struct dmn_live_memo *memo; /* the last summing's (NULL until the first; rec_cap records) */
	/* the strings in use at its last full reading from the file (NULL: none kept), and where
	 * its sections lay when mapped: the statistics' readings from the mapping copy the records
	 * from it and take the strings from here (dmn_live_read) */
	char *strs;
	uint32_t nstrs;
	uint64_t ss_off, rs_off;
	/* A file whose records are all of the user layers and that has a TOTALS section is mapped
	 * with its slots instead of its records (docs/DAEMON.md, "Summed from the threads' totals"):
	 * rec_map stays NULL, the sums read the slots claimed, and its descriptor stays open for the
	 * full readings (has_fd), which then need no open. */
	unsigned char *tot_map;    /* the slots' mapping (page aligned) and its length */
	size_t tot_map_len;
	const struct log_totals_slot *tot; /* the first slot in it (NULL: records mapped) */
	uint32_t tot_n;            /* slots wholly in the mapping */
	uint32_t tot_count;        /* slots of the section (at most LOG_TOTALS_SLOTS) */
	int has_fd, fd;
};

/* A summing of a mapped live file: its header's changing fields and, per layer, its records'
 * node-second figures and request-size histograms (cursor.h's dmn_ahead; layer[l].layer == 0:
 * no record of layer l). */
struct dmn_live_sums {
	int32_t rank;
	uint64_t end_ns;
	/* want_sig (set by the caller): sig is made, a signature of every header field in use
	 * (the bytes before its reserved ones: counts, sections, clock pairs, end, slots claimed) */
	int want_sig;
	uint64_t sig;
	struct dmn_ahead layer[LOG_LAYER_MAX + 1];
};

/* 1 when the records a reading holds are all of the user layers (POSIX, stdio) or dead: a file
 * whose node-seconds its TOTALS section sums alone. */
int dmn_log_user_only(const struct log_file *lf);
/* 0 when the mapping still serves a live file whose header (read in full) is h and whose records
 * lf holds; 1 when it must be made again (more records than mapped, slots claimed beyond the
 * mapping, a record of another layer in a file mapped with its slots). */
int dmn_live_stale(const struct dmn_live_map *m, const struct log_header *h, const struct log_file *lf);
/* The descriptor kept with a mapping closed; and how many mappings may keep one at once (256
 * until set: the daemon sets it from its limit of descriptors). */
void dmn_live_close_fd(struct dmn_live_map *m);
void dmn_live_set_fd_max(size_t max);
/* A full reading (as dmn_read_live's) from the descriptor a mapping kept: no open, no change of
 * filesystem identity, no mapping made. It sums the mapping first (inside the guard, before a
 * record is read), into probe (its want_sig as the caller set it) when probe is not NULL and the
 * summing served (probe->layer[] left with no layer read otherwise). 0; 1 when it must be read by its name (the file was
 * removed, or its end is set: the process's end is taken as without a kept descriptor); or
 * -errno with err set (the caller unmaps it). */
int dmn_read_live_kept(struct dmn_live_map *m, const char *name, const struct dmn_limits *lim, struct log_file *out,
		       struct dmn_trace_area *ta, struct dmn_live_sums *probe, char *err, size_t errlen);

/* Sums the mapped file's records in place (the records the reader would take: in use, not dead,
 * of a known layer, counted in the layers' totals). 0; 1 when the header counts more records
 * than the last full reading took (read it in full: the mapping stays); -ESTALE when the header
 * is no longer the one mapped (another log was written over it); -EFAULT when the file was cut
 * under the mapping (the fault was caught): the caller unmaps it in both cases. */
int dmn_live_sum(struct dmn_live_map *m, struct dmn_live_sums *out);
/* The cache lines a summing of m reads first (its header's fields, its first slot's counts and
 * write histogram) asked for ahead of it, so that their misses overlap the summing of the file
 * before: a hint to the processor, which never faults (an address whose page is gone included). */
void dmn_live_prefetch(const struct dmn_live_map *m);
/* A full reading of the mapped file without opening it (the statistics, every stats_interval):
 * its header and records copied from the mapping, its strings from the copy kept at its last
 * full reading from the file, the same bytes dmn_read_live would have read, handed to the one log reader the same
 * way. No open, no pread, no change of filesystem identity: worth it while the record pages are
 * resident (faulting them in costs more than a pread). 0; 1 when it must be read from the
 * file (a record or a string added since, an end set, a trace to take (want_trace),
 * no strings kept); -ESTALE when the header is no longer the one mapped; -EFAULT when the file
 * was cut under the mapping (the fault was caught); -ENOMEM or -EINVAL (err says it) when the
 * bytes are not a log. The caller unmaps it on any error. */
int dmn_live_read(struct dmn_live_map *m, const char *name, int want_trace, struct log_file *out, char *err,
		  size_t errlen);
/* The strings a full reading of the file took (lf's), kept for dmn_live_read: 0 or -ENOMEM
 * (none kept then: the statistics read the file). */
int dmn_live_keep_strings(struct dmn_live_map *m, const struct log_file *lf);
/* The next summing sums from the start (after a full reading of the file). */
void dmn_live_forget(struct dmn_live_map *m);
/* The pages of the records' mapping (what it adds to the daemon's RSS once summed), and dropping
 * them from the daemon's resident set (the file keeps them: they are the application's; the
 * next summing faults them in again): at the latest by the next dmn_live_drop_flush, or when
 * DROP_BATCH (16) files' wait, or before any mapping goes. */
size_t dmn_live_pages(const struct dmn_live_map *m);
void dmn_live_drop(const struct dmn_live_map *m);
/* The drops still waiting (dmn_live_drop batches them: source.c) done now. */
void dmn_live_drop_flush(void);
void dmn_live_unmap(struct dmn_live_map *m);

/* Reads the live file dirfd/name, owned by uid, into out: the header, the used strings and the
 * used records only (a live file reserves far more than it uses, and its trace area is not
 * needed for counters). st receives the file's status (its identity). With ta, a traced log's
 * descriptor stays open there for its trace (the caller closes ta->fd when not -1). 0, or -errno
 * with one line in err (-ESTALE: it changed size while read; -EAGAIN: its header is not made
 * yet (all zero magic): try again next time). With map, a file read without error is also mapped
 * there (map->hdr stays NULL when it cannot be: it is then read by pread only). */
int dmn_read_live(int dirfd, const char *name, uid_t uid, const struct dmn_limits *lim, struct log_file *out,
		  struct stat *st, struct dmn_trace_area *ta, struct dmn_live_map *map, char *err, size_t errlen);
/* pread of exactly n bytes at off: 0, -ESTALE when the file is shorter, or -errno. */
int dmn_pread(int fd, void *buf, size_t n, uint64_t off);

/* Reads the final log at path (absolute), which must be uid's regular file, whole, under uid's
 * filesystem identity. 0, -ENOENT when it is not there, or -errno with one line in err. */
int dmn_read_final(const char *path, uid_t uid, gid_t gid, const struct dmn_limits *lim, struct log_file *out,
		   char *err, size_t errlen);

#endif
