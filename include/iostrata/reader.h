/* SPDX-License-Identifier: MIT */
/*
 * The one reader of iostrata logs, used by every tool (CLI, daemon, tests) and by the capture
 * library itself when it finalizes. It reads a live file or a final log into private copies,
 * validates every offset and size, and converts clock ticks to CLOCK_MONOTONIC ns, so callers
 * never see a torn or foreign layout. It never crashes on bad input: it returns an error text
 * naming the file and what is wrong.
 */
#ifndef IOSTRATA_READER_H
#define IOSTRATA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

/* One entry of a trace: a run of `count` calls (1 for a single call), times ns. */
struct log_trace_entry {
	uint64_t start_ns, end_ns; /* first call's start, last call's end */
	uint64_t busy_ns, min_ns;  /* the calls' durations added; the fastest call's */
	uint64_t offset, size;     /* first call's offset (UINT64_MAX: the op has none), bytes per call */
	uint64_t count;
	int64_t result;            /* 0, or -errno of a failed call */
	int32_t pid, tid;
	uint32_t record;           /* index in log_file.records; UINT32_MAX when its record is missing */
	uint8_t layer, op;         /* the record's layer; enum log_op */
	uint16_t flags;            /* LOG_TE_* */
};
enum { LOG_TE_OPEN = 1 }; /* the run was still open: a live file, or a process that was killed */

/* A thread of a trace: its entries are trace[first .. first + n), in the order it made them. */
struct log_trace_thread {
	int32_t pid, tid;
	uint64_t first, n;
	uint64_t calls;   /* the entries' counts added */
	uint64_t dropped; /* calls it could not trace (its area was full, or a signal handler's call) */
	uint32_t blocks;
	uint32_t damaged; /* blocks cut short by corrupt or missing bytes */
};

struct log_file {
	char *path;                  /* as given to log_file_read, or the name given to log_file_parse */
	struct log_header hdr;       /* a copy; times in ns; flags as found */
	char *strings;               /* a copy of the used string bytes, always NUL-terminated */
	uint32_t strings_size;
	uint32_t *args;              /* string offset of argv[i], i < hdr.argc (see log_file_arg) */
	struct log_record *records;  /* copies of the used, non-dead records; times converted to ns */
	uint32_t nrecords;
	uint32_t *record_slots;      /* records[i]'s slot in the RECORDS section (ascending): what a trace run names */
	int live;                    /* 1 when read from a live file whose process had not finished */
	struct log_event *events;    /* the EVENTS section, when the log has one */
	uint64_t nevents;
	struct log_trace_entry *trace; /* the TRACE section decoded, grouped by thread */
	uint64_t ntrace;
	struct log_trace_thread *trace_threads;
	uint32_t ntrace_threads;
	uint64_t trace_dropped;      /* calls not traced, all threads (header and blocks added) */
	uint64_t trace_bytes;        /* the TRACE section's size in the file */
	/* Damage the reader stepped over (a truncated or corrupt events or trace section): the
	 * first problem in one line, and how many there were; the readable part is kept. */
	char *warning;
	uint32_t nwarnings;
};

/* 0 on success; otherwise -errno-like and a one-line message "<path>: <what is wrong>" in err. */
int log_file_read(const char *path, struct log_file *out, char *err, size_t errlen);
/* The same for a log already in memory (a mapping, a fuzz input). buf may change underneath. */
int log_file_parse(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		   size_t errlen);
/* The same for a buffer that is the caller's alone (a private copy of a file: nothing writes it
 * while it is read): the same checks and result, its header and records copied once each by
 * memcpy, not word by word and then again (the daemon's full readings). */
int log_file_parse_own(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		       size_t errlen);
/* The same for a private copy whose records lie apart: buf holds the header and the strings, and
 * its header's records section is at offset size, nrecs records, held in recs (malloc'd). On
 * success recs becomes out->records (the records in use moved down in place: no copy of them);
 * on failure it stays the caller's. Only a header of strings and records (at most 2 sections,
 * uncompressed). The daemon's full readings pread the records straight into recs. */
int log_file_parse_own_records(const void *buf, size_t size, struct log_record *recs, size_t nrecs, const char *name,
			       struct log_file *out, char *err, size_t errlen);
void log_file_free(struct log_file *lf);

/* The latest timestamp the log holds: its start, or the last "when it ended" counter (LOG_K_LAST:
 * the last open, read, write, close ...) of any record when that is later. For a process that did
 * not finish, the best estimate of when it stopped. */
uint64_t log_file_last_ns(const struct log_file *lf);

/* A string of the string section: "" for offset 0 or anything out of range. */
const char *log_file_string(const struct log_file *lf, uint32_t off);
/* argv[i] of the header, or NULL past argc (the arguments stored; hdr.argc_total is the program's
 * count, larger when LOG_F_ARGV_CUT says the list was cut). */
const char *log_file_arg(const struct log_file *lf, uint32_t i);

/* Convert a tick count of a header's clock to ns: a timestamp when is_timestamp, else a duration.
 * (Final logs are written by src/log/writer.c, the one writer.) */
uint64_t log_ticks_to_ns(const struct log_header *h, uint64_t ticks, int is_timestamp);
/* A trace run (as a live file or a block header holds it) as an entry of thread (pid, tid): its
 * times from h's clock to ns, a single call's busy and fastest time its span; record UINT32_MAX
 * and layer 0 (the run names a record slot: the caller maps it). */
struct log_trace_run;
void log_trace_entry_of(const struct log_header *h, const struct log_trace_run *r, int32_t pid, int32_t tid,
			struct log_trace_entry *e);

/* Lower-case key of counter c ("bytes_read"), as printed by dump and report and used in
 * docs/FORMAT.md; NULL when c >= LOG_NCOUNTERS. */
const char *log_counter_key(unsigned c);
/* The counter whose key or name is key (any case), or -ENOENT. */
int log_counter_from_key(const char *key);
/* Label of histogram bucket b into buf: "0", "1", "2-3" ... "512-1023", "1K-2K" (half-open from
 * 1 KiB up) ... "512M-1G", ">=1G"; "?" for b >= LOG_HIST_BUCKETS. Returns buf. */
const char *log_hist_label(unsigned bucket, char *buf, size_t len);

#endif
