/* SPDX-License-Identifier: MIT */
/*
 * c11_threads FILE N: 4 threads made with C11 thrd_create (glibc starts them without calling the
 * exported pthread_create) each make N write(2)s of 1 byte to FILE through one shared descriptor.
 * The capture library must see that the process has threads: its counters then get locked
 * updates, and writes = bytes = 4 N exactly.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

#include "check.h"

static int fd, n;

static int writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < n; i++)
		CHECK(write(fd, "x", 1) == 1);
	return 0;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	n = atoi(argv[2]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	thrd_t t[4];
	for (int i = 0; i < 4; i++)
		CHECK(thrd_create(&t[i], writer, NULL) == thrd_success);
	for (int i = 0; i < 4; i++)
		CHECK(thrd_join(t[i], NULL) == thrd_success);
	CHECK(close(fd) == 0);
	return 0;
}
