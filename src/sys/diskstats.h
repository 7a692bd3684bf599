/* SPDX-License-Identifier: MIT */
/*
 * /proc/diskstats (Documentation/admin-guide/iostats.rst): the parser of its lines into
 * per-device counters. Pure functions on a buffer or a stream; nothing is printed.
 *
 * The kernel has written three line lengths: 14 fields (major, minor, name and 11 counters)
 * before Linux 4.18, 18 with the discard counters (4.18), 20 with the flush counters (5.5).
 * A line of any other length, with a name past SYS_DISK_NAME_MAX or a counter that is no number
 * (or overflows 64 bits) is skipped and counted, as is a last line cut short (no newline). The
 * kernel keeps some counters in 32 bits (the milliseconds, in_flight): they wrap, and a caller
 * taking deltas must allow for it.
 */
#ifndef IOSTRATA_SYS_DISKSTATS_H
#define IOSTRATA_SYS_DISKSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A device name with its NUL (the kernel's DISK_NAME_LEN is 32; partitions add a suffix). */
#define SYS_DISK_NAME_MAX 64
/* The largest table read (a line is under 256 bytes: tens of thousands of devices). */
#define SYS_DISKSTATS_MAX (16u << 20)

struct sys_diskstat {
	uint32_t major, minor;
	char name[SYS_DISK_NAME_MAX]; /* "vda", "nvme0n1p1", "dm-0" */
	unsigned nfields;              /* 14, 18 or 20: which counters below the kernel gave */
	/* 14 fields and more */
	uint64_t reads, reads_merged, sectors_read, ms_reading;      /* sectors of 512 bytes */
	uint64_t writes, writes_merged, sectors_written, ms_writing;
	uint64_t in_flight, ms_io, ms_weighted;                     /* ms_io: time busy */
	/* 18 fields and more, 0 before */
	uint64_t discards, discards_merged, sectors_discarded, ms_discarding;
	/* 20 fields, 0 before */
	uint64_t flushes, ms_flushing;
};

struct sys_diskstats {
	struct sys_diskstat *v; /* in the order of the text */
	size_t n;
	size_t skipped;         /* lines that were not complete diskstats lines */
};

/* Parses one line line[0..len) (no newline; blanks before and between the fields, as the
 * kernel aligns them): 0 or -EINVAL. */
int sys_diskstats_parse_line(const char *line, size_t len, struct sys_diskstat *d);

/* Parses the text buf[0..len): 0, -EFBIG (len > SYS_DISKSTATS_MAX) or -ENOMEM; out is empty on
 * error. Free with sys_diskstats_free. */
int sys_diskstats_parse(const char *buf, size_t len, struct sys_diskstats *out);

/* Reads f to its end and parses it: also -errno of the read. */
int sys_diskstats_read(FILE *f, struct sys_diskstats *out);

/* Reads the file at path, NULL for /proc/diskstats: also -errno of the open. */
int sys_diskstats_load(const char *path, struct sys_diskstats *out);

void sys_diskstats_free(struct sys_diskstats *s);

/* The device's line, by number or by name; NULL when absent. */
const struct sys_diskstat *sys_diskstat_by_dev(const struct sys_diskstats *s, uint32_t major, uint32_t minor);
const struct sys_diskstat *sys_diskstat_by_name(const struct sys_diskstats *s, const char *name);

#endif
