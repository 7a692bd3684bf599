/* SPDX-License-Identifier: MIT */
/*
 * One program per POSIX rule of write aggregation (docs/AGGREGATION.md), selected by MODE:
 *   agg_rules MODE DIR
 * It works in DIR (relative names only) and prints a transcript of everything the application can
 * observe: return values, errno, positions, sizes, hashes of what reads return and of the bytes
 * on disk as the kernel has them right now (read with raw system calls, which no preload library
 * sees). agg_rules.sh runs every mode without and with aggregation: transcripts, files and
 * counters must be identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

extern char **environ;
extern ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);

static char buf[1 << 20], rbuf[1 << 20];

static const char *fill(size_t n, int tag)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('A' + (tag * 7 + (int)(i % 23)) % 26);
	return buf;
}

static uint64_t fnv(const void *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

/* The file as the kernel has it now, read without any wrapper. */
static void raw(const char *what, const char *path)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	if (fd < 0) {
		printf("%s raw %s: missing\n", what, path);
		return;
	}
	uint64_t h = 1469598103934665603ull, n = 0;
	for (;;) {
		long r = syscall(SYS_read, fd, rbuf, sizeof rbuf);
		if (r <= 0)
			break;
		for (long i = 0; i < r; i++)
			h = (h ^ (unsigned char)rbuf[i]) * 1099511628211ull;
		n += (uint64_t)r;
	}
	syscall(SYS_close, fd);
	printf("%s raw %s: %llu bytes %016llx\n", what, path, (unsigned long long)n, (unsigned long long)h);
}

static void got(const char *what, long r, const void *p)
{
	int e = errno;
	if (r < 0)
		printf("%s: -1 errno %d\n", what, e);
	else if (p)
		printf("%s: %ld %016llx\n", what, r, (unsigned long long)fnv(p, (size_t)r));
	else
		printf("%s: %ld\n", what, r);
	errno = e;
}

static long pos(int fd)
{
	return (long)lseek(fd, 0, SEEK_CUR);
}

/* 1: positions per open file description (dup, dup2, F_DUPFD, fork), one file seen by two opens */
static void m_dup(void)
{
	int fd = open("d.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	got("write 100", write(fd, fill(100, 1), 100), NULL);
	int d = dup(fd);
	got("write dup 1000", write(d, fill(1000, 2), 1000), NULL);
	int d2 = dup2(fd, 50);
	got("write dup2 10", write(d2, fill(10, 3), 10), NULL);
	int d3 = fcntl(fd, F_DUPFD, 60);
	got("write F_DUPFD 70000", write(d3, fill(70000, 4), 70000), NULL);
	got("pos", pos(fd), NULL);
	int fd2 = open("d.dat", O_RDWR);
	got("second open reads 2000", read(fd2, rbuf, 2000), rbuf);
	got("second open writes 50", write(fd2, fill(50, 5), 50), NULL);
	got("pread via first", pread(fd, rbuf, 100, 1990), rbuf);
	got("write 200", write(fd, fill(200, 6), 200), NULL);
	pid_t p = fork();
	if (p == 0) {
		CHECK(write(fd, fill(30, 7), 30) == 30);
		_exit(0);
	}
	int st;
	waitpid(p, &st, 0);
	got("write after child 20", write(fd, fill(20, 8), 20), NULL);
	got("pos after fork", pos(fd), NULL);
	got("pos dup", pos(d), NULL);
	close(d);
	close(d2);
	close(d3);
	close(fd2);
	got("close", close(fd), NULL);
	raw("end", "d.dat");
}

/* 2: reads, stat and seeks see buffered bytes */
static void m_read(void)
{
	int fd = open("r.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(300, 1), 300);
	write(fd, fill(5000, 2), 5000);
	write(fd, fill(100000, 3), 100000);
	write(fd, fill(200, 4), 200);
	struct stat st;
	fstat(fd, &st);
	printf("fstat size %lld\n", (long long)st.st_size);
	stat("r.dat", &st);
	printf("stat size %lld\n", (long long)st.st_size);
	write(fd, fill(100, 5), 100);
	lstat("r.dat", &st);
	printf("lstat size %lld\n", (long long)st.st_size);
	write(fd, fill(100, 6), 100);
	struct statx sx;
	statx(AT_FDCWD, "r.dat", 0, STATX_SIZE, &sx);
	printf("statx size %lld\n", (long long)sx.stx_size);
	write(fd, fill(100, 7), 100);
	fstatat(AT_FDCWD, "r.dat", &st, 0);
	printf("fstatat size %lld\n", (long long)st.st_size);
	write(fd, fill(100, 8), 100);
	got("SEEK_END", lseek(fd, 0, SEEK_END), NULL);
	write(fd, fill(100, 9), 100);
	got("SEEK_SET", lseek(fd, 0, SEEK_SET), NULL);
	got("read 400", read(fd, rbuf, 400), rbuf);
	struct iovec v[2] = {{rbuf, 100}, {rbuf + 100, 5000}};
	got("readv", readv(fd, v, 2), rbuf);
	pwrite(fd, fill(100, 10), 100, 50);
	got("pread", pread(fd, rbuf, 1000, 0), rbuf);
	pwrite(fd, fill(3000, 11), 3000, 400);
	got("preadv", preadv(fd, v, 2, 300), rbuf);
	pwrite(fd, fill(30, 12), 30, 5500);
	got("__read_chk", __read_chk(fd, rbuf, 500, sizeof rbuf), rbuf);
	got("pos", pos(fd), NULL);
	pwrite(fd, fill(100, 13), 100, 1048576 + 100);
	got("SEEK_DATA", lseek(fd, 200000, SEEK_DATA), NULL);
	pwrite(fd, fill(100, 14), 100, 2 * 1048576);
	got("SEEK_HOLE", lseek(fd, 0, SEEK_HOLE), NULL);
	close(fd);
	raw("end", "r.dat");
}

/* 2 (streams): a stdio stream on an aggregated file sees, and orders after, what write() buffered */
static void m_stdio(void)
{
	int fd = open("st.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	write(fd, fill(3000, 2), 3000);
	FILE *r = fopen("st.dat", "r");
	got("fread sees buffered bytes", (long)fread(rbuf, 1, 5000, r), rbuf);
	fclose(r);
	FILE *w = fopen("st.dat", "r+");
	fseek(w, 50, SEEK_SET);
	fwrite(fill(200, 3), 1, 200, w);
	fflush(w);
	write(fd, fill(100, 4), 100);
	fseek(w, 0, SEEK_END);
	got("ftell at the end", ftell(w), NULL);
	fwrite(fill(10, 5), 1, 10, w);
	got("fclose", fclose(w), NULL);
	close(fd);
	raw("end", "st.dat");
}

/* 3: a later write wins, across tiers and with direct writes over buffered bytes */
static void m_order(void)
{
	int fd = open("o.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	pwrite(fd, fill(100, 1), 100, 0);
	pwrite(fd, fill(5000, 2), 5000, 50);
	pwrite(fd, fill(10, 3), 10, 10);
	pwrite(fd, fill(3000, 4), 3000, 5);
	pwrite(fd, fill(100, 5), 100, 7);
	pwrite(fd, fill(100000, 6), 100000, 2);
	pwrite(fd, fill(300, 7), 300, 99990);
	pwrite(fd, fill(8000, 8), 8000, 99000);
	pwrite(fd, fill(200, 9), 200, 99100);
	pwrite(fd, fill(70000, 10), 70000, 98000);
	for (int i = 0; i < 300; i++)
		pwrite(fd, fill((size_t)(37 * i % 900 + 1), i), (size_t)(37 * i % 900 + 1), (off_t)(i * 211 % 20000));
	for (int i = 0; i < 100; i++)
		pwrite(fd, fill((size_t)(1000 + 97 * i), i), (size_t)(1000 + 97 * i), (off_t)(i * 1777 % 50000));
	close(fd);
	raw("end", "o.dat");
}

/* 4: O_APPEND, O_SYNC, O_DIRECT, F_SETFL and a FIFO pass through after a flush */
static void m_flags(void)
{
	int fd = open("f.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	write(fd, fill(2000, 2), 2000);
	int fa = open("f.dat", O_WRONLY | O_APPEND);
	got("append", write(fa, fill(10, 3), 10), NULL);
	raw("after append", "f.dat");
	write(fd, fill(100, 4), 100);
	int fs = open("f.dat", O_WRONLY | O_SYNC);
	got("O_SYNC pwrite", pwrite(fs, fill(20, 5), 20, 5), NULL);
	raw("after O_SYNC", "f.dat");
	write(fd, fill(100, 6), 100);
	got("F_SETFL O_APPEND", fcntl(fd, F_SETFL, O_APPEND), NULL);
	got("write appending", write(fd, fill(10, 7), 10), NULL);
	raw("after F_SETFL", "f.dat");
	close(fa);
	close(fs);
	close(fd);
	int g = open("g.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(g, fill(300, 8), 300);
	pwrite(g, fill(300, 9), 300, 8192);
	int gd = open("g.dat", O_WRONLY | O_DIRECT);
	void *al;
	CHECK(posix_memalign(&al, 4096, 4096) == 0);
	memcpy(al, fill(4096, 10), 4096);
	got("O_DIRECT pwrite", pwrite(gd, al, 4096, 4096), NULL);
	raw("after O_DIRECT", "g.dat");
	free(al);
	close(gd);
	close(g);
	mkfifo("p.fifo", 0600);
	int pf = open("p.fifo", O_RDWR);
	got("fifo write", write(pf, fill(10, 11), 10), NULL);
	got("fifo read", read(pf, rbuf, 10), rbuf);
	close(pf);
	raw("end", "f.dat");
}

/* 4b: buffered bytes are written back at their offsets, never through a descriptor that appends
 * or bypasses the cache: one opened O_APPEND or O_DIRECT before the one that writes, and one
 * turned O_APPEND by F_SETFL while another descriptor has bytes buffered */
static void m_wbfd(void)
{
	int fa = open("a.dat", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	got("append", write(fa, fill(8192, 1), 8192), NULL);
	int fd = open("a.dat", O_WRONLY);
	got("small pwrite", pwrite(fd, fill(100, 2), 100, 10), NULL);
	got("medium pwrite", pwrite(fd, fill(2000, 3), 2000, 1000), NULL);
	got("fsync", fsync(fd), NULL);
	raw("after fsync", "a.dat");
	got("small pwrite", pwrite(fd, fill(100, 4), 100, 300), NULL);
	got("medium write", write(fd, fill(3000, 5), 3000), NULL);
	got("close", close(fd), NULL);
	raw("after close", "a.dat");
	close(fa);

	int gd = open("d.dat", O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	int g = open("d.dat", O_WRONLY);
	got("small pwrite", pwrite(g, fill(100, 6), 100, 0), NULL);
	got("medium pwrite", pwrite(g, fill(2000, 7), 2000, 5000), NULL);
	got("close", close(g), NULL);
	raw("after close", "d.dat");
	close(gd);

	int f1 = open("s.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int f2 = open("s.dat", O_WRONLY);
	got("write", write(f1, fill(6000, 8), 6000), NULL);
	got("F_SETFL O_APPEND", fcntl(f1, F_SETFL, O_APPEND), NULL);
	got("small pwrite", pwrite(f2, fill(100, 9), 100, 50), NULL);
	got("medium pwrite", pwrite(f2, fill(2000, 10), 2000, 2000), NULL);
	got("close", close(f2), NULL);
	raw("after close", "s.dat");
	got("append", write(f1, fill(10, 11), 10), NULL);
	close(f1);
	raw("end", "s.dat");

	/* pwritev2 with flags is the kernel's call, after the buffered bytes */
	int h = open("v.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	got("small write", write(h, fill(100, 12), 100), NULL);
	struct iovec v = {(void *)fill(50, 13), 50};
	got("pwritev2 RWF_APPEND", pwritev2(h, &v, 1, 0, RWF_APPEND), NULL);
	raw("after RWF_APPEND", "v.dat");
	got("pwritev2 RWF_DSYNC", pwritev2(h, &v, 1, 10, RWF_DSYNC), NULL);
	got("pwritev2 unknown flag", pwritev2(h, &v, 1, 0, 0x40000000), NULL);
	got("small write", write(h, fill(10, 14), 10), NULL);
	got("close", close(h), NULL);
	raw("end", "v.dat");
}

/* 6b: opening with O_TRUNC (open, openat, creat, fopen "w", freopen "w") empties the file after
 * the bytes buffered for it: they were written before */
static void m_trunc(void)
{
	static const char *const how[] = {"open", "openat", "creat", "fopen", "freopen"};
	for (int i = 0; i < 5; i++) {
		int fd = open("t.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		got("small write", write(fd, fill(100, 2 * i), 100), NULL);
		got("medium write", write(fd, fill(3000, 2 * i + 1), 3000), NULL);
		int t = -1;
		FILE *fp = NULL;
		switch (i) {
		case 0:
			t = open("t.dat", O_WRONLY | O_TRUNC);
			break;
		case 1:
			t = openat(AT_FDCWD, "t.dat", O_RDWR | O_TRUNC);
			break;
		case 2:
			t = creat("t.dat", 0644);
			break;
		case 3:
			fp = fopen("t.dat", "w");
			break;
		default:
			fp = freopen("t.dat", "w", fopen("t.dat", "r"));
			break;
		}
		printf("%s O_TRUNC: %s\n", how[i], t >= 0 || fp ? "opened" : "failed");
		raw("after the truncating open", "t.dat");
		if (t >= 0) {
			got("write", write(t, "x", 1), NULL);
			close(t);
		} else if (fp) {
			fputc('y', fp);
			fclose(fp);
		}
		got("close", close(fd), NULL);
		raw("end", "t.dat");
	}
}

/* 5: syncs and close write everything back */
static void m_sync(void)
{
	int fd = open("s.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	write(fd, fill(3000, 2), 3000);
	got("fsync", fsync(fd), NULL);
	raw("after fsync", "s.dat");
	write(fd, fill(100, 3), 100);
	write(fd, fill(3000, 4), 3000);
	got("fdatasync", fdatasync(fd), NULL);
	raw("after fdatasync", "s.dat");
	write(fd, fill(100, 5), 100);
	got("sync_file_range", sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE), NULL);
	raw("after sync_file_range", "s.dat");
	write(fd, fill(3000, 6), 3000);
	got("syncfs", syncfs(fd), NULL);
	raw("after syncfs", "s.dat");
	write(fd, fill(100, 7), 100);
	sync();
	raw("after sync", "s.dat");
	write(fd, fill(5000, 8), 5000);
	got("close", close(fd), NULL);
	raw("after close", "s.dat");
}

/* 6: rename, truncate, fallocate, copy_file_range, sendfile flush first; unlink keeps reads right */
static void m_meta(void)
{
	int fd = open("m1.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	write(fd, fill(3000, 2), 3000);
	got("rename", rename("m1.dat", "m2.dat"), NULL);
	raw("after rename", "m2.dat");
	write(fd, fill(3000, 3), 3000);
	got("truncate", truncate("m2.dat", 1000), NULL);
	raw("after truncate", "m2.dat");
	write(fd, fill(200, 4), 200);
	got("ftruncate", ftruncate(fd, 500), NULL);
	raw("after ftruncate", "m2.dat");
	write(fd, fill(200, 5), 200);
	got("fallocate", fallocate(fd, 0, 0, 20000), NULL);
	raw("after fallocate", "m2.dat");
	pwrite(fd, fill(300, 6), 300, 0);
	int out = open("m3.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(out, fill(100, 7), 100);
	off64_t in_off = 0;
	got("copy_file_range", copy_file_range(fd, &in_off, out, NULL, 7000, 0), NULL);
	raw("after copy_file_range", "m3.dat");
	write(out, fill(100, 8), 100);
	pwrite(fd, fill(100, 9), 100, 50);
	off_t so = 0;
	got("sendfile", sendfile(out, fd, &so, 4000), NULL);
	raw("after sendfile", "m3.dat");
	close(out);
	int u = open("m4.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(u, fill(100, 10), 100);
	write(u, fill(2000, 11), 2000);
	got("unlink", unlink("m4.dat"), NULL);
	write(u, fill(100, 12), 100);
	got("read after unlink", pread(u, rbuf, 3000, 0), rbuf);
	close(u);
	close(fd);
	raw("end", "m2.dat");
}

/* 7: a mapping of the file sees buffered bytes; writes pass through while it exists */
static void m_mmap(void)
{
	int fd = open("p.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	write(fd, fill(8000, 2), 8000);
	char *p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	printf("map %016llx\n", (unsigned long long)fnv(p, 8100));
	pwrite(fd, fill(50, 3), 50, 20);
	pwrite(fd, fill(5000, 4), 5000, 1000);
	printf("map after writes %016llx\n", (unsigned long long)fnv(p, 8100));
	munmap(p, 8192);
	write(fd, fill(100, 5), 100);
	close(fd);
	raw("end", "p.dat");
}

/* 8: fork, exec, posix_spawn, SIGTERM */
static void m_proc(void)
{
	int fd = open("k1.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, fill(100, 1), 100);
	int pp[2];
	CHECK(pipe(pp) == 0);
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(pp[1]);
		while (read(pp[0], &x, 1) < 0 && errno == EINTR)
			;
		exit(0); /* its copy of the parent's buffer must not be written */
	}
	close(pp[0]);
	pwrite(fd, fill(100, 2), 100, 0);
	got("fsync", fsync(fd), NULL);
	CHECK(write(pp[1], "g", 1) == 1);
	close(pp[1]);
	int st;
	waitpid(c, &st, 0);
	raw("after child exit", "k1.dat");
	close(fd);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		int f2 = open("k2.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		write(f2, fill(100, 3), 100);
		write(f2, fill(1000, 4), 1000);
		execlp("wc", "wc", "-c", "k2.dat", (char *)NULL);
		_exit(127);
	}
	waitpid(c, &st, 0);
	int f3 = open("k3.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(f3, fill(300, 5), 300);
	fflush(stdout);
	char *av[] = {"wc", "-c", "k3.dat", NULL};
	pid_t sp;
	/* wc prints to the same stdout: its line comes first, whatever the scheduler does (under a
	 * load of 20 the parent's line once came before it in one run and after it in the other) */
	int sr = posix_spawnp(&sp, "wc", NULL, NULL, av, environ);
	if (sr == 0)
		waitpid(sp, &st, 0);
	got("posix_spawnp", sr, NULL);
	close(f3);
	c = fork();
	if (c == 0) {
		int f4 = open("k4.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		for (int i = 0; i < 20; i++)
			write(f4, fill(100, i), 100);
		write(f4, fill(3000, 6), 3000);
		raise(SIGTERM);
		_exit(3);
	}
	waitpid(c, &st, 0);
	printf("SIGTERM child: signalled %d sig %d\n", WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	raw("after SIGTERM", "k4.dat");
	c = fork();
	if (c == 0) {
		int f5 = open("k5.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		for (int i = 0; i < 30; i++)
			write(f5, fill(200, i), 200);
		raise(SIGINT);
		_exit(3);
	}
	waitpid(c, &st, 0);
	printf("SIGINT child: signalled %d sig %d\n", WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	raw("after SIGINT", "k5.dat");
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	printf("SIGTERM disposition default: %d\n", sa.sa_handler == SIG_DFL);
}

/* 9: threads writing their own files and disjoint parts of one file */
static void *t_own(void *arg)
{
	int k = (int)(intptr_t)arg;
	char name[32], *b = malloc(200000);
	snprintf(name, sizeof name, "t%d.dat", k);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 2000; i++) {
		size_t n = (size_t)((i * 7919 + k * 31) % (i % 50 == 0 ? 150000 : i % 3 == 0 ? 20000 : 500) + 1);
		for (size_t j = 0; j < n; j++)
			b[j] = (char)(i + j + k);
		CHECK(write(fd, b, n) == (ssize_t)n);
	}
	close(fd);
	free(b);
	return NULL;
}

static int shared_fd;
static void *t_shared(void *arg)
{
	int k = (int)(intptr_t)arg;
	char *b = malloc(100000);
	off_t base = (off_t)k * 4000000;
	for (int i = 0; i < 1000; i++) {
		size_t n = (size_t)((i * 104729 + k) % (i % 40 == 0 ? 90000 : i % 2 ? 10000 : 400) + 1);
		for (size_t j = 0; j < n; j++)
			b[j] = (char)(i * 3 + j + k);
		CHECK(pwrite(shared_fd, b, n, base) == (ssize_t)n);
		base += (off_t)n;
	}
	free(b);
	return NULL;
}

static void m_threads(void)
{
	pthread_t t[8];
	shared_fd = open("tshared.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, t_own, (void *)(intptr_t)k);
	for (int k = 0; k < 4; k++)
		pthread_create(&t[4 + k], NULL, t_shared, (void *)(intptr_t)k);
	for (int k = 0; k < 8; k++)
		pthread_join(t[k], NULL);
	got("close shared", close(shared_fd), NULL);
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof name, "t%d.dat", k);
		raw("end", name);
	}
	raw("end", "tshared.dat");
}

/* 10: errno is the application's */
static void m_errno(void)
{
	int fd = open("e.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	errno = 77;
	write(fd, fill(100, 1), 100);
	printf("errno after buffered write %d\n", errno);
	write(fd, fill(3000, 2), 3000);
	printf("errno after ring write %d\n", errno);
	fsync(fd);
	printf("errno after fsync %d\n", errno);
	got("pwrite at -5", pwrite(fd, fill(10, 3), 10, -5), NULL);
	int ro = open("e.dat", O_RDONLY);
	got("write on read-only", write(ro, fill(10, 4), 10), NULL);
	errno = 78;
	read(ro, rbuf, 10);
	printf("errno after read %d\n", errno);
	close(ro);
	errno = 79;
	close(fd);
	printf("errno after close %d\n", errno);
	raw("end", "e.dat");
}

/* 2 MB of medium writes into a file system that takes 1 MiB of the file (ENOSPC on a small tmpfs,
 * EIO or EDQUOT from tests/progs/fuse_errfs): the error is deferred to fsync or close. With
 * probe, a seek to the end, an fstat and a read write the buffered bytes back first: they must
 * not use up the error, which belongs to the next fsync. */
static void m_deferred(int with_fsync, int probe)
{
	int fd = open("x.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int failed = 0, first = 0;
	for (int i = 0; i < 1000; i++)
		if (write(fd, fill(2000, i), 2000) != 2000 && !failed++)
			first = errno;
	printf("writes 1000 failed %d%s\n", failed, failed ? (first == ENOSPC ? " ENOSPC" : " other") : "");
	if (probe) {
		struct stat st;
		char b[16];
		got("lseek end", lseek(fd, 0, SEEK_END), NULL);
		got("fstat", fstat(fd, &st) < 0 ? -1 : st.st_size, NULL);
		int rd = open("x.dat", O_RDONLY);
		got("read", read(rd, b, sizeof b), NULL);
		close(rd);
	}
	if (with_fsync)
		got("fsync", fsync(fd), NULL);
	got("close", close(fd), NULL);
}

static void m_deferred_fsync(void)
{
	m_deferred(1, 0);
}

static void m_deferred_close(void)
{
	m_deferred(0, 0);
}

static void m_deferred_probe(void)
{
	m_deferred(1, 1);
}

static const struct {
	const char *name;
	void (*run)(void);
} modes[] = {
	{"dup", m_dup},
	{"read", m_read},
	{"stdio", m_stdio},
	{"order", m_order},
	{"flags", m_flags},
	{"wbfd", m_wbfd},
	{"trunc", m_trunc},
	{"sync", m_sync},
	{"meta", m_meta},
	{"mmap", m_mmap},
	{"proc", m_proc},
	{"threads", m_threads},
	{"errno", m_errno},
	{"deferred_fsync", m_deferred_fsync},
	{"deferred_close", m_deferred_close},
	{"deferred_probe", m_deferred_probe},
};

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	CHECK(chdir(argv[2]) == 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(argv[1], modes[i].name)) {
			modes[i].run();
			return 0;
		}
	return 2;
}
