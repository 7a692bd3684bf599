/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/stat (proc(5)): the parser of its text, header-only so that the capture library,
 * which links no sys object, reads a process's state and start time with it too. It parses a
 * buffer the caller has read (the library reads with raw system calls); it opens nothing and
 * allocates nothing. sys_proc_stat_read (procstat.c) is the convenience reader of the live file
 * for code outside the library.
 *
 * The comm field is the hard part: the kernel prints it raw between parentheses, and a process
 * names itself (prctl PR_SET_NAME), so it may hold spaces, parentheses, even a newline. Fields
 * after it never hold ')', so the comm ends at the last ')' of the text. Text cut short (a read
 * into a small buffer, a process gone mid-read) yields the fields that were complete: a field
 * counts only once the blank or newline after it is there, since "123" may be the start of
 * "12345".
 */
#ifndef IOSTRATA_SYS_PROCSTAT_H
#define IOSTRATA_SYS_PROCSTAT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sys/field.h"

/* Room for the comm field: 15 bytes for a process (TASK_COMM_LEN), up to 63 for a kernel
 * worker ("kworker/u8:0-events_unbound"); longer text is cut to 63 bytes. */
#define SYS_PROC_COMM_MAX 64

/* Field numbers as proc(5) counts them; nfields >= one of them means that field is valid. */
enum {
	SYS_PROC_F_PID = 1,
	SYS_PROC_F_COMM = 2,
	SYS_PROC_F_STATE = 3,
	SYS_PROC_F_PPID = 4,
	SYS_PROC_F_UTIME = 14,
	SYS_PROC_F_STIME = 15,
	SYS_PROC_F_STARTTIME = 22,
};

struct sys_proc_stat {
	int32_t pid;                   /* 1 */
	char comm[SYS_PROC_COMM_MAX];  /* 2, without its parentheses, NUL-terminated */
	char state;                    /* 3: R S D Z T t X I ... */
	int32_t ppid;                  /* 4 */
	uint64_t utime, stime;         /* 14, 15: clock ticks (sysconf(_SC_CLK_TCK)) */
	uint64_t starttime;            /* 22: clock ticks after boot; with pid, a process's identity */
	unsigned nfields;              /* leading fields that were complete and well-formed */
};

/* 1 for the states of a process that will do no more I/O: zombie (Z: exited, not reaped yet) and
 * dead (X: being reaped). */
static inline int sys_proc_state_dead(char state)
{
	return state == 'Z' || state == 'X';
}

/* Parses the text of /proc/PID/stat, buf[0..len) (a NUL ends it early). Returns 0 when pid,
 * comm and state were there (nfields >= 3), -EINVAL otherwise. The later fields are valid up to
 * st->nfields and zero beyond; a malformed field ends the parse there. */
static inline int sys_proc_stat_parse(const char *buf, size_t len, struct sys_proc_stat *st)
{
	memset(st, 0, sizeof *st);
	const char *nul = memchr(buf, 0, len);
	if (nul)
		len = (size_t)(nul - buf);
	const char *end = buf + len, *open = memchr(buf, '(', len), *close = NULL;
	for (const char *q = end; q > buf; q--)
		if (q[-1] == ')') {
			close = q - 1;
			break;
		}
	if (!open || !close || close < open || open == buf || open[-1] != ' ')
		return -EINVAL;
	uint64_t pid;
	if (sys_field_u64(buf, (size_t)(open - 1 - buf), &pid) < 0 || pid > INT32_MAX)
		return -EINVAL;
	/* ") S " or ") S\n": the state letter, complete only with what follows it */
	if (end - close < 4 || close[1] != ' ' || !((close[2] | 0x20) >= 'a' && (close[2] | 0x20) <= 'z') ||
	    (close[3] != ' ' && close[3] != '\n'))
		return -EINVAL;
	size_t n = (size_t)(close - open - 1);
	if (n > SYS_PROC_COMM_MAX - 1)
		n = SYS_PROC_COMM_MAX - 1;
	memcpy(st->comm, open + 1, n);
	st->pid = (int32_t)pid;
	st->state = close[2];
	st->nfields = SYS_PROC_F_STATE;
	for (const char *p = close + 4; close[3] == ' ' && p < end;) {
		const char *q = p;
		while (q < end && *q != ' ' && *q != '\n')
			q++;
		/* every field is a number: unsigned (up to 2^64-1, as rsslim is), or signed (nice) */
		size_t tl = (size_t)(q - p);
		uint64_t u = 0;
		int64_t v;
		int is_u = q < end && sys_field_u64(p, tl, &u) == 0;
		if (q == end || (!is_u && sys_field_i64(p, tl, &v) < 0))
			break; /* cut short, or not a number: the fields so far stand */
		unsigned f = st->nfields + 1;
		if (f == SYS_PROC_F_PPID && (!is_u || u > INT32_MAX))
			break;
		if ((f == SYS_PROC_F_UTIME || f == SYS_PROC_F_STIME || f == SYS_PROC_F_STARTTIME) && !is_u)
			break;
		switch (f) {
		case SYS_PROC_F_PPID: st->ppid = (int32_t)u; break;
		case SYS_PROC_F_UTIME: st->utime = u; break;
		case SYS_PROC_F_STIME: st->stime = u; break;
		case SYS_PROC_F_STARTTIME: st->starttime = u; break;
		}
		st->nfields = f;
		if (*q == '\n')
			break;
		p = q + 1;
	}
	return 0;
}

/* Reads /proc/PID/stat (procstat.c, not in the capture library): 0, -errno when it cannot be
 * read (-ENOENT: no such process), or -EINVAL when its text is not a stat line. */
int sys_proc_stat_read(int pid, struct sys_proc_stat *st);

#endif
