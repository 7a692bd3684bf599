/* SPDX-License-Identifier: MIT */
/*
 * Closes whose file the kernel layer's default depth must take from its descriptor map
 * (`fdfiles`, src/kernel/syscall.bpf.c: no program runs at a close's entry there, and close(2)
 * has dropped the file by its exit), each with known counts. Statically linked, so only the
 * kernel layer sees it. Usage: fdmap_static DIR MODE [ARGS]. In DIR:
 *   pre FIFO  opens "pre", then reads FIFO (the test starts a session meanwhile), closes it: the
 *             close of a descriptor opened before the session, with no read or write on it
 *   files     a, b opened; dup2(a's fd, b's fd) drops b with no close(2); a closed through both
 *             numbers (a: 1 open, 2 closes; b: 1 open, 0 closes);
 *             c1, c2, c3 opened, dropped by close_range() (no close(2)); d opened on c1's number
 *             and closed (c*: 1 open, 0 closes each; d: 1 open, 1 close);
 *             e opened; a forked child closes its copy; the parent closes its own (e: the
 *             parent's 1 open and 1 close, the child's 1 close);
 *             f opened close-on-exec, g not; the program execs itself ("exec2"), which closes g,
 *             opens h (on f's old number) and closes it (f: 1 open, 0 closes; g: 1 open, 1 close;
 *             h: 1 open, 1 close)
 *   race N    two threads, each N times: open its own file (r1, r2) and close it: their
 *             descriptor numbers are reused by the other thread all the time (r1, r2: N opens
 *             each; closes named or counted on no file, never on the other's file)
 * It prints nothing and exits 0 when every call did what it should.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static const char *dir;

static int open_in(const char *name, int flags)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, flags | O_CREAT, 0644);
	CHECK(fd >= 0);
	return fd;
}

static void pre(const char *fifo)
{
	int fd = open_in("pre", O_RDONLY);
	int g = open(fifo, O_RDONLY);
	CHECK(g >= 0);
	char c;
	CHECK(read(g, &c, 1) == 1);
	CHECK(close(g) == 0);
	CHECK(close(fd) == 0);
}

static void files(const char *self)
{
	int a = open_in("a", O_WRONLY), b = open_in("b", O_WRONLY);
	CHECK(dup2(a, b) == b);
	CHECK(close(b) == 0);
	CHECK(close(a) == 0);

	int c1 = open_in("c1", O_RDONLY), c2 = open_in("c2", O_RDONLY), c3 = open_in("c3", O_RDONLY);
	CHECK(c2 == c1 + 1 && c3 == c1 + 2);
	CHECK(syscall(SYS_close_range, c1, c3, 0) == 0);
	int d = open_in("d", O_RDONLY);
	CHECK(d == c1);
	CHECK(close(d) == 0);

	int e = open_in("e", O_RDONLY);
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		CHECK(close(e) == 0);
		_exit(0);
	}
	int st;
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(close(e) == 0);

	int f = open_in("f", O_RDONLY | O_CLOEXEC), g = open_in("g", O_RDONLY);
	char fs[16], gs[16];
	snprintf(fs, sizeof fs, "%d", f);
	snprintf(gs, sizeof gs, "%d", g);
	execl(self, self, dir, "exec2", fs, gs, (char *)NULL);
	CHECK(0);
}

static void exec2(int f, int g)
{
	CHECK(fcntl(f, F_GETFD) < 0); /* closed on exec */
	CHECK(close(g) == 0);
	int h = open_in("h", O_RDONLY);
	CHECK(h == f);
	CHECK(close(h) == 0);
}

static int rounds;

static void *race_one(void *name)
{
	for (int i = 0; i < rounds; i++) {
		int fd = open_in(name, O_RDONLY);
		CHECK(close(fd) == 0);
	}
	return NULL;
}

static void race(void)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, race_one, "r2") == 0);
	race_one("r1");
	CHECK(pthread_join(t, NULL) == 0);
}

int main(int argc, char **argv)
{
	CHECK(argc >= 3);
	dir = argv[1];
	if (!strcmp(argv[2], "pre") && argc == 4)
		pre(argv[3]);
	else if (!strcmp(argv[2], "files"))
		files(argv[0][0] == '/' ? argv[0] : "/proc/self/exe");
	else if (!strcmp(argv[2], "exec2") && argc == 5)
		exec2(atoi(argv[3]), atoi(argv[4]));
	else if (!strcmp(argv[2], "race") && argc == 4 && (rounds = atoi(argv[3])) > 0)
		race();
	else
		CHECK(0);
	return 0;
}
