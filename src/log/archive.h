/* SPDX-License-Identifier: MIT */
/*
 * Job archives: a job's final logs in one file (`iostrata merge`), so that a 10,000-rank job can end
 * as one file. The on-disk layout is struct log_archive_header/_entry in iostrata/format.h,
 * described byte by byte in docs/FORMAT.md ("Job archive"). Reading validates every offset, size,
 * name and checksum against the file before using it and never crashes on bad input: each failure
 * is one line "<path>: what is wrong". Members are read with pread, not mapped, so a file cut short
 * underneath gives an error, not SIGBUS. Writing appends members and then the index; the caller
 * makes it atomic (temporary name, rename). This file does not scan job directories or decide
 * what belongs in an archive: that is src/cli/merge.c.
 */
#ifndef IOSTRATA_LOG_ARCHIVE_H
#define IOSTRATA_LOG_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"
#include "iostrata/reader.h"

struct log_archive; /* opaque */

/* 1 when path starts with the archive magic, 0 otherwise (also on error). */
int log_archive_is(const char *path);
/* 0 or -errno with a one-line "<path>: what is wrong". The header and the whole index are
 * checked here; a member's bytes are checked when it is read. */
int log_archive_open(const char *path, struct log_archive **out, char *err, size_t errlen);
/* The same for an archive in memory (tests, fuzzing); buf must outlive the archive. name is used
 * in messages and member paths. */
int log_archive_open_mem(const void *buf, size_t size, const char *name, struct log_archive **out, char *err,
			 size_t errlen);
size_t log_archive_count(const struct log_archive *a);
/* The member's original file name (NULL when i is out of range). */
const char *log_archive_name(const struct log_archive *a, size_t i);
/* Its index entry, as validated (NULL when i is out of range). */
const struct log_archive_entry *log_archive_entry(const struct log_archive *a, size_t i);
/* Like log_file_read; the log_file's path is "ARCHIVE:NAME". A damaged member fails alone: the
 * others stay readable. */
int log_archive_read(struct log_archive *a, size_t i, struct log_file *out, char *err, size_t errlen);
/* The member's log bytes, exactly as the writer wrote the log, checked against both checksums:
 * 0 with a malloc'ed *buf of *len bytes, or -errno with a one-line "ARCHIVE:NAME: ..." in err. */
int log_archive_member(struct log_archive *a, size_t i, void **buf, size_t *len, char *err, size_t errlen);
void log_archive_close(struct log_archive *a);

/* Writing: create path (it must not exist), add the members in strcmp order of their names, then
 * finish (index, header, fsync; it frees w) or abort (removes path; it frees w). -errno with a
 * one-line message naming path or the member. */
struct log_archive_writer;
int log_archive_create(const char *path, struct log_archive_writer **out, char *err, size_t errlen);
/* log: the bytes of one final log (len > 0); name: a file name (no '/'), at most
 * LOG_ARCHIVE_NAME_MAX bytes, after the previous one in strcmp order. */
int log_archive_add(struct log_archive_writer *w, const char *name, const void *log, size_t len, uint64_t mtime_ns,
		    char *err, size_t errlen);
int log_archive_finish(struct log_archive_writer *w, char *err, size_t errlen);
void log_archive_abort(struct log_archive_writer *w);

/* CRC-32C (Castagnoli, reflected, initial and final XOR 0xffffffff) of n bytes, continuing from
 * crc (0 to start): the archive's checksum. */
uint32_t log_crc32c(uint32_t crc, const void *buf, size_t n);

#endif
