/* SPDX-License-Identifier: MIT */
/*
 * The fixed part of a live log's header, shared by every writer of live logs (the capture
 * library, the mount monitor): version, sizes and the STRINGS and RECORDS sections of the layout
 * header | strings | records. The caller fills in who it is (pid, host, times ...) and sets the
 * magic last. No allocation, no system call: the capture library calls it at start-up.
 * Also their start-up helpers: the live directory's checks and the process's start time (from
 * the text of /proc/PID/stat the caller read, through sys/procstat.h's header-only parser).
 * These make system calls only through the functions they are given (the capture library passes
 * its unwrapped ones, so its own wrappers never see them). Finding, checking and recovering other
 * processes' live logs is livelog.h's.
 */
#ifndef IOSTRATA_LOG_LIVE_H
#define IOSTRATA_LOG_LIVE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iostrata/format.h"
#include "sys/procstat.h"

static inline void log_live_header_init(struct log_header *h, uint32_t max_records, uint32_t string_cap,
					size_t rec_off)
{
	h->version = LOG_VERSION;
	h->header_size = LOG_HEADER_SIZE;
	h->endian = LOG_ENDIAN_MARK;
	h->flags = LOG_F_LIVE;
	h->record_size = sizeof(struct log_record);
	h->ncounters = LOG_NCOUNTERS;
	h->nsections = 2;
	h->max_records = max_records;
	h->string_used = 1; /* offset 0 is "" */
	h->sections[0] = (struct log_section){LOG_SEC_STRINGS, 0, LOG_HEADER_SIZE, string_cap, string_cap};
	h->sections[1] = (struct log_section){LOG_SEC_RECORDS, 0, rec_off,
					      (uint64_t)max_records * sizeof(struct log_record), max_records};
}

/* mkdir -p DIR with the caller's mkdir: 0, or -errno. */
static inline int log_mkdir_p(const char *dir, mode_t mode, int (*mk)(const char *, mode_t))
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mk(tmp, mode) < 0 && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	return mk(tmp, mode) < 0 && errno != EEXIST ? -errno : 0;
}

/* The live directory, made if missing, must be the user's own and private: /dev/shm is shared by
 * every user. 0, or -errno (-ENOTDIR; -EPERM: someone else's, or open to others). */
static inline int log_live_dir_check(const char *dir, int (*mk)(const char *, mode_t),
				     int (*lst)(const char *, struct stat *))
{
	struct stat st;
	int r = log_mkdir_p(dir, 0700, mk);
	if (r < 0)
		return r;
	if (lst(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != getuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* The process's start time in clock ticks (field 22 of /proc/PID/stat) from that file's text,
 * for the header's proc_start_ticks; 0 when the text does not hold it. */
static inline uint64_t log_proc_starttime(const char *stat)
{
	struct sys_proc_stat st;
	if (sys_proc_stat_parse(stat, strlen(stat), &st) < 0 || st.nfields < SYS_PROC_F_STARTTIME)
		return 0;
	return st.starttime;
}

#endif
