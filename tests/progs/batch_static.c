/* SPDX-License-Identifier: MIT */
/* The full depth's batching of page-cache and filesystem work into untimed calls (kernel_batch.sh),
 * statically linked (seen by the kernel layer only). Usage: batch_static DIR N. DIR holds c and g,
 * N pages each, not in the page cache (the script dropped it). Every call is 4 KiB at a page
 * boundary; reads of c and g are made with readahead off (POSIX_FADV_RANDOM), so a read of a page
 * not in the cache adds exactly that page under the call (a miss) and a read of one in it adds
 * none (a hit).
 *  1. one thread on one CPU: N times a pwrite of a new page of a, a write of a new page of b, a
 *     pread of a new page of c (a miss) and the same pread again (a hit): the batches of calls on
 *     three files alternate on one CPU;
 *  2. two processes on one CPU, each writing N new pages of its own file (d by the parent, e by
 *     the child) and N of its half of f, yielding between calls: runs of two processes alternate;
 *  3. a thread reading N new pages of g and writing N new pages of h while another thread moves it
 *     between CPUs without pause: a call may leave its CPU while it waits for the device.
 * Exits 0 when every call moved its 4096 bytes. */
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runs.h"

#define PAGE 4096

static char buf[PAGE];
static int n;
static const char *dir;
static atomic_int done;
static atomic_int mover_target, moving;

static void full(ssize_t r)
{
	CHECK(r == PAGE);
}

static int random_reads(const char *name)
{
	int fd = open_in(dir, name, O_RDONLY);
	CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0);
	return fd;
}

static void alternate_files(void)
{
	pin(0);
	int a = open_in(dir, "a", O_WRONLY | O_CREAT | O_TRUNC);
	int b = open_in(dir, "b", O_WRONLY | O_CREAT | O_TRUNC);
	int c = random_reads("c");
	for (int i = 0; i < n; i++) {
		full(pwrite(a, buf, PAGE, (off_t)i * PAGE));
		full(write(b, buf, PAGE));
		full(pread(c, buf, PAGE, (off_t)i * PAGE));
		full(pread(c, buf, PAGE, (off_t)i * PAGE));
	}
	CHECK(close(a) == 0 && close(b) == 0 && close(c) == 0);
}

static void two_processes(void)
{
	int f = open_in(dir, "f", O_WRONLY | O_CREAT | O_TRUNC);
	pid_t child = fork();
	CHECK(child >= 0);
	pin(0);
	int own = open_in(dir, child ? "d" : "e", O_WRONLY | O_CREAT | O_TRUNC);
	off_t half = child ? 0 : (off_t)n * PAGE;
	for (int i = 0; i < n; i++) {
		full(write(own, buf, PAGE));
		full(pwrite(f, buf, PAGE, half + (off_t)i * PAGE));
		sched_yield();
	}
	CHECK(close(own) == 0);
	if (!child)
		_exit(0);
	int st;
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(close(f) == 0);
}

static void *mover(void *arg)
{
	(void)arg;
	cpu_set_t all;
	CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
	while (!atomic_load(&mover_target))
		sched_yield();
	atomic_store(&moving, 1);
	for (int k = 0; !atomic_load(&done); k++) {
		cpu_set_t one = nth_cpu(&all, k);
		sched_setaffinity(mover_target, sizeof one, &one); /* it may have ended: no check */
	}
	return NULL;
}

static void *moved(void *arg)
{
	(void)arg;
	atomic_store(&mover_target, (int)gettid());
	while (!atomic_load(&moving))
		sched_yield();
	int g = random_reads("g");
	int h = open_in(dir, "h", O_WRONLY | O_CREAT | O_TRUNC);
	for (int i = 0; i < n; i++) {
		full(pread(g, buf, PAGE, (off_t)i * PAGE));
		full(write(h, buf, PAGE));
	}
	CHECK(close(g) == 0 && close(h) == 0);
	atomic_store(&done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	dir = argv[1];
	n = atoi(argv[2]);
	CHECK(n > 0);
	memset(buf, 'x', sizeof buf);
	alternate_files();
	two_processes();
	pthread_t mt, vt;
	CHECK(pthread_create(&mt, NULL, mover, NULL) == 0);
	CHECK(pthread_create(&vt, NULL, moved, NULL) == 0);
	CHECK(pthread_join(vt, NULL) == 0 && pthread_join(mt, NULL) == 0);
	return 0;
}
