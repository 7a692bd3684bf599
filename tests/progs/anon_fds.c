/* SPDX-License-Identifier: MIT */
/*
 * anon_fds: the other calls that make descriptors without a path, each used the way programs use
 * it: an eventfd written (8 B) and read (8 B); a timerfd armed for 1 ns and read (8 B); a memfd
 * written (4096 B), read back with pread (4096 B) and mapped; a signalfd, an epoll instance, an
 * inotify instance and a pidfd only made and closed.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "check.h"

static char page[4096] __attribute__((aligned(4096)));

int main(void)
{
	uint64_t v = 5;
	int e = eventfd(0, EFD_CLOEXEC);
	CHECK(e >= 0 && write(e, &v, 8) == 8 && read(e, &v, 8) == 8 && v == 5);
	int t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = {.it_value = {0, 1}};
	CHECK(t >= 0 && timerfd_settime(t, 0, &its, NULL) == 0 && read(t, &v, 8) == 8 && v >= 1);
	int m = memfd_create("blob", MFD_CLOEXEC);
	memset(page, 'm', sizeof page);
	CHECK(m >= 0 && write(m, page, sizeof page) == (ssize_t)sizeof page);
	CHECK(pread(m, page, sizeof page, 0) == (ssize_t)sizeof page && page[100] == 'm');
	char *map = mmap(NULL, sizeof page, PROT_READ, MAP_SHARED, m, 0);
	CHECK(map != MAP_FAILED && map[7] == 'm' && munmap(map, sizeof page) == 0);
	sigset_t mask;
	sigemptyset(&mask);
	int s = signalfd(-1, &mask, SFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int in = inotify_init1(IN_CLOEXEC);
	int pf = pidfd_open(getpid(), 0);
	CHECK(s >= 0 && ep >= 0 && in >= 0 && pf >= 0);
	CHECK(close(e) == 0 && close(t) == 0 && close(m) == 0 && close(s) == 0 && close(ep) == 0 &&
	      close(in) == 0 && close(pf) == 0);
	return 0;
}
