/* SPDX-License-Identifier: MIT */
/*
 * The workload of the overhead benchmark (bench/run): N small I/O calls on one file, the whole
 * loop timed with clock_gettime(CLOCK_MONOTONIC), and one line on stdout: the nanoseconds per
 * call. It knows nothing about iostrata or EZTrace; bench/run starts it bare, under the capture
 * library and under EZTrace, and compares. Errors go to stderr with exit status 1 or 2.
 *
 *   overhead MODE PATH N
 *
 * MODE:
 *   write64           N write() of 64 bytes at the file position (PATH truncated first)
 *   pread4k           N pread() of 4 KiB, offsets cycling through a 4 MiB file written first so it
 *                     stays in the page cache
 *   write64-mt        write64 in the main thread after a second, idle thread has been created
 *                     (what a multithreaded program pays: tools switch to locked updates)
 *   write64-2threads  two threads, each doing write64 on its own file PATH.0 and PATH.1, started
 *                     together; prints the mean of the two threads' ns per call
 *   pread4k-2threads  the same with pread4k
 *   write64-cpu       write64 in one thread, timed by the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)
 *   write64-8threads  eight threads, each doing write64 on its own file PATH.0 ... PATH.7, started
 *                     together, each timed by its CPU clock; prints the mean ns per call. On a
 *                     machine with fewer CPUs than threads, wall time per thread would count the
 *                     time it waited for a CPU; CPU time is what each call costs.
 *   pwrite64r         N pwrite() of 64 bytes at pseudo-random 4 KiB-aligned offsets of a 4 MiB
 *                     file: no two successive calls continue each other (trace mode's worst case:
 *                     every call closes a run)
 *   pwrite4kr         N pwrite() of 4 KiB at pseudo-random 4 KiB-aligned offsets of a 1 GiB file
 *                     (the trace size benchmark's random case)
 *   write64-paired    what the tool adds, measured inside one process: blocks of 10,000 write()
 *   pread4k-paired    calls alternate between libc's own function (found with dlsym in libc.so.6,
 *                     so no preloaded wrapper sees it) and the interposed one; prints the median
 *                     over blocks of (interposed - direct) ns per call. Run-to-run drift on a shared
 *                     VM is tens of ns; pairing adjacent blocks cancels most of it. Bare, it prints
 *                     about 0 (a check of the method).
 *   read4k-forkpaired  the calls of a fio job (--ioengine=sync --bs=4k, buffered), paired as above,
 *   write4k-forkpaired in a process forked after a helper thread started, as fio forks its jobs
 *                     (glibc keeps a fork child multithreaded: the capture library's ownership
 *                     path): read4k, sequential read() of 4 KiB through a cached 4 MiB file
 *                     (back to its start with libc's own lseek every 1,024 calls, in both kinds
 *                     of block alike); write4k, sequential write() of 4 KiB over the cached
 *                     80 MiB that a pair of blocks writes (back to its start between pairs,
 *                     untimed). The added ns per call of a fio job. read4k-paired and
 *                     write4k-paired: the same in the process itself, single-threaded.
 *
 * PATH may be a file that cannot be truncated or unlinked (/dev/null): the benchmark only writes
 * to it. Files the benchmark creates are unlinked at the end.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PREAD_SIZE 4096
#define PREAD_FILE (4u << 20) /* 1024 blocks of 4 KiB */
#define WRITE_SIZE 64
#define PAIR_BLOCK 10000

enum mode { M_WRITE, M_PREAD, M_PWRITE_R, M_PWRITE4K_R, M_READ4K, M_WRITE4K };

/* The k-th pseudo-random block of a file of nblocks (a power of two) blocks. */
static off_t rand_block(long k, unsigned nblocks)
{
	uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 32;
	return (off_t)(x & (nblocks - 1));
}

struct job {
	enum mode mode;
	char path[4096];
	long n;
	int paired;
	pthread_barrier_t *start; /* NULL with one thread */
	int cpu_clock;            /* time with the thread's CPU clock instead of CLOCK_MONOTONIC */
	double ns_per_call;
	int err;
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int is_regular_or_missing(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? errno == ENOENT : S_ISREG(st.st_mode);
}

/* Writes the 4 MiB file the pread loop reads, so every page is in the page cache. */
static int pread_file_prepare(const char *path)
{
	static char block[1 << 16];
	memset(block, 'x', sizeof block);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	for (unsigned done = 0; done < PREAD_FILE; done += sizeof block)
		if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
			close(fd);
			return -1;
		}
	return close(fd);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* libc's own lseek, so that rewinding a read4k file costs the same in both kinds of block */
static off_t (*libc_lseek)(int, off_t, int);

/* One block of calls through f (write, read or pread); *next is the running offset index. */
static int block_run(const struct job *j, int fd, char *buf, void *f, long *next)
{
	if (j->mode == M_READ4K) {
		ssize_t (*rd)(int, void *, size_t) = f;
		for (int i = 0; i < PAIR_BLOCK; i++, (*next)++) {
			if ((*next & (PREAD_FILE / PREAD_SIZE - 1)) == 0 && libc_lseek(fd, 0, SEEK_SET) != 0)
				return -1;
			if (rd(fd, buf, PREAD_SIZE) != PREAD_SIZE)
				return -1;
		}
	} else if (j->mode == M_WRITE4K) {
		ssize_t (*wr)(int, const void *, size_t) = f;
		for (int i = 0; i < PAIR_BLOCK; i++)
			if (wr(fd, buf, PREAD_SIZE) != PREAD_SIZE)
				return -1;
	} else if (j->mode == M_PREAD) {
		ssize_t (*pr)(int, void *, size_t, off_t) = f;
		for (int i = 0; i < PAIR_BLOCK; i++, (*next)++)
			if (pr(fd, buf, PREAD_SIZE, (off_t)(*next & (PREAD_FILE / PREAD_SIZE - 1)) * PREAD_SIZE) != PREAD_SIZE)
				return -1;
	} else if (j->mode == M_PWRITE_R) {
		ssize_t (*pw)(int, const void *, size_t, off_t) = f;
		for (int i = 0; i < PAIR_BLOCK; i++, (*next)++)
			if (pw(fd, buf, WRITE_SIZE, rand_block(*next, 1024) * 4096) != WRITE_SIZE)
				return -1;
	} else {
		ssize_t (*wr)(int, const void *, size_t) = f;
		for (int i = 0; i < PAIR_BLOCK; i++)
			if (wr(fd, buf, WRITE_SIZE) != WRITE_SIZE)
				return -1;
	}
	return 0;
}

/* Alternating blocks, direct libc then interposed; ns_per_call = median added ns per call. */
static int paired_run(struct job *j, int fd, char *buf)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	const char *name = j->mode == M_PREAD ? "pread" : j->mode == M_PWRITE_R ? "pwrite" : j->mode == M_READ4K ? "read" : "write";
	void *direct = libc ? dlsym(libc, name) : NULL;
	void *interposed = j->mode == M_PREAD ? (void *)pread : j->mode == M_PWRITE_R ? (void *)pwrite
		: j->mode == M_READ4K ? (void *)read : (void *)write;
	libc_lseek = libc ? (off_t(*)(int, off_t, int))dlsym(libc, "lseek") : NULL;
	long blocks = j->n / PAIR_BLOCK < 1 ? 1 : j->n / PAIR_BLOCK, next = 0;
	double *added = calloc((size_t)blocks, sizeof *added);
	if (!direct || !libc_lseek || !added) {
		errno = ENOENT;
		free(added);
		return -1;
	}
	for (long b = 0; b < blocks; b++) {
		uint64_t t0 = now_ns();
		if (block_run(j, fd, buf, direct, &next) < 0)
			goto err;
		uint64_t t1 = now_ns();
		if (block_run(j, fd, buf, interposed, &next) < 0)
			goto err;
		uint64_t t2 = now_ns();
		added[b] = ((double)(t2 - t1) - (double)(t1 - t0)) / PAIR_BLOCK;
		/* keep a written file small: every 20 blocks, start over (outside the timed blocks) */
		if (j->mode == M_WRITE && b % 20 == 19 && lseek(fd, 0, SEEK_SET) == 0 && ftruncate(fd, 0) < 0)
			errno = 0;
		if (j->mode == M_WRITE4K && libc_lseek(fd, 0, SEEK_SET) != 0)
			goto err;
	}
	qsort(added, (size_t)blocks, sizeof *added, cmp_double);
	j->ns_per_call = blocks % 2 ? added[blocks / 2] : (added[blocks / 2 - 1] + added[blocks / 2]) / 2;
	free(added);
	return 0;
err:
	free(added);
	return -1;
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	static _Thread_local char buf[PREAD_SIZE] __attribute__((aligned(4096)));
	int regular = is_regular_or_missing(j->path);
	int fd;

	if (j->mode == M_PREAD || j->mode == M_READ4K) {
		if (pread_file_prepare(j->path) < 0 || (fd = open(j->path, O_RDONLY)) < 0)
			goto err;
	} else {
		fd = open(j->path, O_WRONLY | O_CREAT | (regular ? O_TRUNC : 0), 0644);
		if (fd < 0)
			goto err;
	}
	memset(buf, 'y', sizeof buf);
	if (j->start)
		pthread_barrier_wait(j->start);

	if (j->paired) {
		if (paired_run(j, fd, buf) < 0)
			goto err_fd;
		goto done;
	}

	clockid_t clk = j->cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
	uint64_t t0 = clock_ns(clk);
	if (j->mode == M_PREAD) {
		for (long i = 0; i < j->n; i++) {
			off_t off = (off_t)(i & (PREAD_FILE / PREAD_SIZE - 1)) * PREAD_SIZE;
			if (pread(fd, buf, PREAD_SIZE, off) != PREAD_SIZE)
				goto err_fd;
		}
	} else if (j->mode == M_PWRITE_R) {
		for (long i = 0; i < j->n; i++)
			if (pwrite(fd, buf, WRITE_SIZE, rand_block(i, 1024) * 4096) != WRITE_SIZE)
				goto err_fd;
	} else if (j->mode == M_PWRITE4K_R) {
		for (long i = 0; i < j->n; i++)
			if (pwrite(fd, buf, PREAD_SIZE, rand_block(i, 1u << 18) * 4096) != PREAD_SIZE)
				goto err_fd;
	} else {
		for (long i = 0; i < j->n; i++)
			if (write(fd, buf, WRITE_SIZE) != WRITE_SIZE)
				goto err_fd;
	}
	uint64_t t1 = clock_ns(clk);

	j->ns_per_call = (double)(t1 - t0) / (double)j->n;
done:
	close(fd);
	if (regular)
		unlink(j->path);
	return NULL;
err_fd:
	close(fd);
err:
	j->err = errno ? errno : EIO;
	fprintf(stderr, "overhead: %s: %s\n", j->path, strerror(j->err));
	return NULL;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	return NULL;
}

/* fio's helper threads: alive in the parent while its job processes run */
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;

static void *helper_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&helper_lock);
	pthread_mutex_unlock(&helper_lock);
	return NULL;
}

/* The job in a child forked while a helper thread runs; returns the child's exit status. */
static int forked_job(struct job *j)
{
	pthread_t t;
	pthread_mutex_lock(&helper_lock);
	if (pthread_create(&t, NULL, helper_thread, NULL) != 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		job_run(j);
		if (j->err)
			_exit(1);
		printf("%.2f\n", j->ns_per_call);
		fflush(stdout);
		_exit(0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 1 << 8;
	pthread_mutex_unlock(&helper_lock);
	pthread_join(t, NULL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: overhead write64|pread4k|pwrite64r[-mt|-2threads|-8threads|-cpu|-paired]|pwrite4kr|"
				"{read,write}4k-paired|{read,write}4k-forkpaired PATH N\n");
		return 2;
	}
	const char *m = argv[1];
	long n = strtol(argv[3], NULL, 10);
	int threads = strstr(m, "-2threads") ? 2 : strstr(m, "-8threads") ? 8 : 1;
	const char *dash = strchr(m, '-');
	size_t base = dash ? (size_t)(dash - m) : strlen(m);
	const char *suffix = m + base;
	enum mode mode;
	if (base == 7 && !strncmp(m, "write64", 7))
		mode = M_WRITE;
	else if (base == 7 && !strncmp(m, "pread4k", 7))
		mode = M_PREAD;
	else if (base == 9 && !strncmp(m, "pwrite64r", 9))
		mode = M_PWRITE_R;
	else if (base == 9 && !strncmp(m, "pwrite4kr", 9) && !*suffix)
		mode = M_PWRITE4K_R;
	else if (base == 6 && !strncmp(m, "read4k", 6) && (!strcmp(suffix, "-forkpaired") || !strcmp(suffix, "-paired")))
		mode = M_READ4K;
	else if (base == 7 && !strncmp(m, "write4k", 7) && (!strcmp(suffix, "-forkpaired") || !strcmp(suffix, "-paired")))
		mode = M_WRITE4K;
	else
		mode = (enum mode)-1;
	if ((int)mode < 0 || n <= 0 ||
	    (strcmp(suffix, "") && strcmp(suffix, "-mt") && strcmp(suffix, "-2threads") && strcmp(suffix, "-8threads") &&
	     strcmp(suffix, "-cpu") && strcmp(suffix, "-paired") && strcmp(suffix, "-forkpaired"))) {
		fprintf(stderr, "overhead: bad mode or count: %s %s\n", m, argv[3]);
		return 2;
	}

	static struct job jobs[8];
	if (threads == 1) {
		jobs[0] = (struct job){.mode = mode,
				       .n = n,
				       .paired = !strcmp(suffix, "-paired") || !strcmp(suffix, "-forkpaired"),
				       .cpu_clock = !strcmp(suffix, "-cpu")};
		snprintf(jobs[0].path, sizeof jobs[0].path, "%s", argv[2]);
		if (!strcmp(suffix, "-forkpaired"))
			return forked_job(&jobs[0]);
		if (!strcmp(suffix, "-mt")) {
			pthread_t t;
			if (pthread_create(&t, NULL, idle_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
				return 1;
		}
		job_run(&jobs[0]);
		if (jobs[0].err)
			return 1;
		printf("%.2f\n", jobs[0].ns_per_call);
		return 0;
	}

	pthread_barrier_t start;
	pthread_t t[8];
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){.mode = mode, .n = n, .start = &start, .cpu_clock = threads == 8};
		snprintf(jobs[i].path, sizeof jobs[i].path, "%s.%d", argv[2], i);
		if (pthread_create(&t[i], NULL, job_run, &jobs[i]) != 0)
			return 1;
	}
	double sum = 0;
	int bad = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		bad |= jobs[i].err != 0;
		sum += jobs[i].ns_per_call;
	}
	if (bad)
		return 1;
	printf("%.2f\n", sum / threads);
	return 0;
}
