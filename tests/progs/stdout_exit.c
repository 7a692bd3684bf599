/* SPDX-License-Identifier: MIT */
/*
 * Case "stdout and exit status": writes a known text to stdout with printf, puts, fputs, fwrite
 * and write(1), writes 4096 B to FILE, then ends as MODE says:
 *   ok: return 0      exit3: exit(3)      term: raise(SIGTERM) (killed, 128 + 15 for a shell)
 * Usage: stdout_exit ok|exit3|term FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char data[4096] __attribute__((aligned(4096)));
static char line5[24] __attribute__((aligned(8))) = "line 5 of write(2)\n";

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	printf("line %d of %s\n", 1, "printf");
	puts("line 2 of puts");
	fputs("line 3 of fputs\n", stdout);
	fwrite("line 4 of fwrite\n", 1, 17, stdout);
	fflush(stdout);
	CHECK(write(1, line5, 19) == 19);
	for (int i = 0; i < 200; i++)
		printf("%03d %s\n", i, "0123456789abcdefghijklmnopqrstuvwxyz");
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	memset(data, 'd', sizeof data);
	CHECK(write(fd, data, sizeof data) == (ssize_t)sizeof data);
	CHECK(close(fd) == 0);
	if (!strcmp(argv[1], "exit3"))
		exit(3);
	if (!strcmp(argv[1], "term")) {
		fflush(stdout);
		raise(SIGTERM);
	}
	return 0;
}
