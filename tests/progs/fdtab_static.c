/* SPDX-License-Identifier: MIT */
/*
 * The ways a descriptor of a run (the kernel layer's default depth, src/kernel/kernel.h struct
 * ks_run) can come to hold another file without the run's thread closing it in plain sight, each
 * with known counts: the run's untimed calls are checked by descriptor number and their table's
 * generation (`fdtab`), so every one of these must end the run. Statically linked, so only the
 * kernel layer sees it. Usage: fdtab_static DIR. In DIR:
 *   j  5 writes of 10 B; close_range() closes its descriptor; k opened on the same number: 6 writes
 *   l  4 writes of 10 B; dup3() puts m's file on l's descriptor: 7 writes through it to m
 *   n  8 writes of 10 B by the main thread; another thread closes the descriptor and opens o on
 *      its number; the main thread then writes 9 times through it, to o
 *   p  3 writes of 10 B; a process sharing the descriptor table (clone(CLONE_FILES), another
 *      process) closes it and opens q on its number; the parent writes 5 times through it, to q
 *   r  3 writes of 10 B; the descriptor is sent to a child over a unix socket (SCM_RIGHTS) and
 *      closed; s opened on its number: 4 writes; the child writes 2 times to r through what it got
 *   t  opened close-on-exec: 3 writes of 10 B; the program execs itself, which opens u on t's old
 *      number and writes 4 times
 * The writes through one descriptor follow each other on one CPU (the main thread pinned), so
 * each case's run is the CPU's run when its descriptor changes. It prints nothing and exits 0
 * when every call did what it should.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "runs.h"

static char buf[64];
static const char *dir;
static int fd_n;

static void writes(int fd, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(write(fd, buf, 10) == 10);
}

static void *reopener(void *arg)
{
	(void)arg;
	pin(1);
	CHECK(close(fd_n) == 0);
	CHECK(open_in(dir, "o", O_WRONLY | O_CREAT | O_TRUNC) == fd_n);
	return NULL;
}

static void send_fd(int sock, int fd)
{
	char c = 'f';
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	CHECK(sendmsg(sock, &m, 0) == 1);
}

static int recv_fd(int sock)
{
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	CHECK(recvmsg(sock, &m, 0) == 1);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	CHECK(cm && cm->cmsg_type == SCM_RIGHTS);
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	return fd;
}

static void wait_ok(pid_t pid)
{
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	memset(buf, 'd', sizeof buf);
	CHECK(argc == 3 || argc == 2);
	dir = argv[1];
	if (argc == 3) { /* u, after the exec: t's number is free again */
		int fu = open_in(dir, "u", O_WRONLY | O_CREAT | O_TRUNC);
		CHECK(fu == atoi(argv[2]));
		writes(fu, 4);
		return 0;
	}
	int w = O_WRONLY | O_CREAT | O_TRUNC;
	pin(0);

	int fj = open_in(dir, "j", w);
	writes(fj, 5);
	CHECK(syscall(SYS_close_range, fj, fj, 0) == 0);
	CHECK(open_in(dir, "k", w) == fj);
	writes(fj, 6);
	CHECK(close(fj) == 0);

	int fl = open_in(dir, "l", w), fm = open_in(dir, "m", w);
	writes(fl, 4);
	CHECK(dup3(fm, fl, 0) == fl);
	writes(fl, 7);
	CHECK(close(fl) == 0 && close(fm) == 0);

	fd_n = open_in(dir, "n", w);
	writes(fd_n, 8);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, reopener, NULL) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	writes(fd_n, 9);
	CHECK(close(fd_n) == 0);

	int fp = open_in(dir, "p", w);
	writes(fp, 3);
	long child = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	CHECK(child >= 0);
	if (child == 0) { /* another process, the same table: raw system calls only */
		if (syscall(SYS_close, fp) != 0)
			syscall(SYS_exit_group, 1);
		char p[4096];
		snprintf(p, sizeof p, "%s/q", dir);
		syscall(SYS_exit_group, syscall(SYS_openat, AT_FDCWD, p, w, 0644) == fp ? 0 : 1);
	}
	wait_ok((pid_t)child);
	writes(fp, 5);
	CHECK(close(fp) == 0);

	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pid_t rc = fork();
	CHECK(rc >= 0);
	if (rc == 0) {
		int got = recv_fd(sv[1]);
		writes(got, 2);
		_exit(0);
	}
	int fr = open_in(dir, "r", w);
	writes(fr, 3);
	send_fd(sv[0], fr);
	CHECK(close(fr) == 0);
	CHECK(open_in(dir, "s", w) == fr);
	writes(fr, 4);
	CHECK(close(fr) == 0);
	wait_ok(rc);
	CHECK(close(sv[0]) == 0 && close(sv[1]) == 0);

	int ft = open_in(dir, "t", w | O_CLOEXEC);
	writes(ft, 3);
	char num[16];
	snprintf(num, sizeof num, "%d", ft);
	execl("/proc/self/exe", argv[0], dir, num, (char *)NULL);
	CHECK(!"exec");
	return 1;
}
