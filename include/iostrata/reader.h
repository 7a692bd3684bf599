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

struct log_file {
	char *path;                  /* as given to log_file_read, or the name given to log_file_parse */
	struct log_header hdr;       /* a copy; times in ns; flags as found */
	char *strings;               /* a copy of the used string bytes, always NUL-terminated */
	uint32_t strings_size;
	struct log_record *records;  /* copies of the used, non-dead records; times converted to ns */
	uint32_t nrecords;
	int live;                    /* 1 when read from a live file whose process had not finished */
	struct log_event *events;    /* the EVENTS section, when the log has one */
	uint64_t nevents;
};

/* 0 on success; otherwise -errno-like and a one-line message "<path>: <what is wrong>" in err. */
int log_file_read(const char *path, struct log_file *out, char *err, size_t errlen);
/* The same for a log already in memory (a mapping, a fuzz input). buf may change underneath. */
int log_file_parse(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		   size_t errlen);
void log_file_free(struct log_file *lf);

/* A string of the string section: "" for offset 0 or anything out of range. */
const char *log_file_string(const struct log_file *lf, uint32_t off);
/* argv[i] of the header, or NULL past argc. */
const char *log_file_arg(const struct log_file *lf, uint32_t i);

/* Convert a tick count of a header's clock to ns: a timestamp when is_timestamp, else a duration.
 * (Final logs are written by src/log/writer.c, the one writer.) */
uint64_t log_ticks_to_ns(const struct log_header *h, uint64_t ticks, int is_timestamp);

/* Lower-case key of counter c ("bytes_read"), as printed by dump and report and used in
 * docs/FORMAT.md; NULL when c >= LOG_NCOUNTERS. */
const char *log_counter_key(unsigned c);
/* The counter whose key or name is key (any case), or -ENOENT. */
int log_counter_from_key(const char *key);
/* Label of histogram bucket b into buf: "0", "1", "2-3" ... "512-1023", "1K-2K" (half-open from
 * 1 KiB up) ... "512M-1G", ">=1G"; "?" for b >= LOG_HIST_BUCKETS. Returns buf. */
const char *log_hist_label(unsigned bucket, char *buf, size_t len);

#endif
