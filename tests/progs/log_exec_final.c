/* SPDX-License-Identifier: MIT */
/* log_exec_final LIVE DST LIVE_PATH [old]: the final log an image writes at an exec, made by hand
 * (daemon_exec_hostile.sh) from the live file LIVE of a process that holds still: its header and
 * counters, its live path replaced by the string LIVE_PATH (anything a user may write there),
 * flagged finished, exec and exec_kept (without exec_kept with "old": a library before
 * 2026-11-28), its end now, written to DST by the log writer the capture library uses.
 * Exit 0; 1 with a line on stderr when LIVE cannot be read or has no room for the string; 2 on
 * bad arguments. Links the log objects (Makefile): not a preloaded program. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iostrata/format.h"
#include "log/writer.h"

int main(int argc, char **argv)
{
	struct stat st;
	struct timespec ts;
	char err[512];
	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "old"))) {
		fprintf(stderr, "usage: log_exec_final LIVE DST LIVE_PATH [old]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < LOG_HEADER_SIZE) {
		fprintf(stderr, "%s: cannot be read (%s)\n", argv[1], strerror(errno));
		return 1;
	}
	size_t size = (size_t)st.st_size, got = 0;
	unsigned char *m = calloc(1, size);
	while (m && got < size) {
		ssize_t k = pread(fd, m + got, size - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!m || got < size) {
		fprintf(stderr, "%s: short read\n", argv[1]);
		return 1;
	}
	struct log_header *h = (struct log_header *)m;
	const struct log_section *s = NULL;
	for (uint32_t i = 0; i < h->nsections && i < LOG_MAX_SECTIONS; i++)
		if (h->sections[i].kind == LOG_SEC_STRINGS)
			s = &h->sections[i];
	size_t n = strlen(argv[3]) + 1;
	if (!(h->flags & LOG_F_LIVE) || !s || s->offset > size || s->size > size - s->offset ||
	    h->string_used > s->size || n > s->size - h->string_used) {
		fprintf(stderr, "%s: not a live log with room for %zu more string bytes\n", argv[1], n);
		return 1;
	}
	memcpy(m + s->offset + h->string_used, argv[3], n);
	h->live_path = h->string_used;
	h->string_used += (uint32_t)n;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h->end_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint32_t add = LOG_F_FINISHED | LOG_F_EXEC | (argc == 5 ? 0 : LOG_F_EXEC_KEPT);
	if (log_write_final(m, size, NULL, argv[2], add, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	free(m);
	return 0;
}
