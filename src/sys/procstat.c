/* SPDX-License-Identifier: MIT */
/*
 * The reader of a live /proc/PID/stat for code outside the capture library (the library reads
 * the file with raw system calls and uses the header's parser alone).
 */
#include "sys/procstat.h"

#include <stdio.h>

int sys_proc_stat_read(int pid, struct sys_proc_stat *st)
{
	char path[32], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	/* one line of about 52 numbers: at most about 1,100 bytes; the fields wanted come first */
	size_t n = fread(buf, 1, sizeof buf, f);
	int r = ferror(f) ? -(errno ? errno : EIO) : sys_proc_stat_parse(buf, n, st);
	fclose(f);
	return r;
}
