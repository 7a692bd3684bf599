/* SPDX-License-Identifier: MIT */
/*
 * close_race DIR N: two threads reuse descriptor numbers as fast as they can. Thread A makes N
 * rounds of fopen(DIR/a, "w"), fputc, fclose (its close(2) is inside glibc) and N rounds of
 * opendir(DIR), readdir, closedir; thread B makes 2 N rounds of open(DIR/b), write 1 byte, close.
 * B often gets the number A's close just released: the library must have forgotten A's state
 * before, never after, the real close, or it wipes B's. Counts are then exact for both files.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static char a[4096], b[4096], dir[4000];
static int n;

static void *thread_a(void *arg)
{
	(void)arg;
	for (int i = 0; i < n; i++) {
		FILE *fp = fopen(a, "w");
		CHECK(fp);
		CHECK(fputc('a', fp) == 'a');
		CHECK(fclose(fp) == 0);
	}
	for (int i = 0; i < n; i++) {
		DIR *d = opendir(dir);
		CHECK(d);
		CHECK(readdir(d));
		CHECK(closedir(d) == 0);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2 * n; i++) {
		int fd = open(b, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0);
		CHECK(write(fd, "b", 1) == 1);
		CHECK(close(fd) == 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	snprintf(dir, sizeof dir, "%s", argv[1]);
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	n = atoi(argv[2]);
	pthread_t ta, tb;
	CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
	CHECK(pthread_create(&tb, NULL, thread_b, NULL) == 0);
	CHECK(pthread_join(ta, NULL) == 0 && pthread_join(tb, NULL) == 0);
	return 0;
}
