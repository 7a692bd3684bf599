/* SPDX-License-Identifier: MIT */
/*
 * sock_pingpong N: a socketpair between a parent and its forked child, N rounds of ping-pong, each
 * round with another pair of calls: the parent sends 64 bytes with write, send, sendto, sendmsg
 * (in turn) and the child answers each with 32 bytes through the same kind of call, received with
 * read, recv, recvfrom, recvmsg. Then the parent shuts its end down, the child reads the end of
 * the stream (0 bytes) and both close.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char buf[64] __attribute__((aligned(64)));

static ssize_t put(int fd, int how, size_t n)
{
	struct iovec v = {buf, n};
	struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
	switch (how) {
	case 0:
		return write(fd, buf, n);
	case 1:
		return send(fd, buf, n, 0);
	case 2:
		return sendto(fd, buf, n, 0, NULL, 0);
	default:
		return sendmsg(fd, &m, 0);
	}
}

/* the whole message of n bytes (a stream socket may return less: then read again, the same way) */
static void get(int fd, int how, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct iovec v = {buf + got, n - got};
		struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
		ssize_t r;
		switch (how) {
		case 0:
			r = read(fd, buf + got, n - got);
			break;
		case 1:
			r = recv(fd, buf + got, n - got, 0);
			break;
		case 2:
			r = recvfrom(fd, buf + got, n - got, 0, NULL, NULL);
			break;
		default:
			r = recvmsg(fd, &m, 0);
			break;
		}
		CHECK(r > 0);
		got += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	int n = atoi(argv[1]), sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		CHECK(close(sv[0]) == 0);
		for (int i = 0; i < n; i++) {
			get(sv[1], i % 4, 64);
			CHECK(put(sv[1], i % 4, 32) == 32);
		}
		CHECK(read(sv[1], buf, sizeof buf) == 0);
		CHECK(close(sv[1]) == 0);
		_exit(0);
	}
	CHECK(close(sv[1]) == 0);
	for (int i = 0; i < n; i++) {
		memset(buf, 'a' + i % 26, sizeof buf);
		CHECK(put(sv[0], i % 4, 64) == 64);
		get(sv[0], i % 4, 32);
	}
	CHECK(shutdown(sv[0], SHUT_WR) == 0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(close(sv[0]) == 0);
	return 0;
}
