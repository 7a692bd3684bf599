/* SPDX-License-Identifier: MIT */
/*
 * Case "signal": handlers for SIGUSR1 and SIGALRM each write() 1 byte to H. The main loop writes
 * 10000 x 100 B to M, raise()s SIGUSR1 after every 100th write, while a 100 us interval timer
 * delivers SIGALRM at arbitrary points (also in the middle of our write wrapper). Prints the
 * number of handler writes, "USR1 ALRM", on stdout. Usage: signal_write H M
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"

static int hfd;
static volatile sig_atomic_t n_usr1, n_alrm, bad;
static char one[8] __attribute__((aligned(8))) = "h";
static char buf[128] __attribute__((aligned(64)));

static void handler(int sig)
{
	int saved = errno;
	if (write(hfd, one, 1) != 1)
		bad = 1;
	if (sig == SIGUSR1)
		n_usr1++;
	else
		n_alrm++;
	errno = saved;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	hfd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int mfd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(hfd >= 0 && mfd >= 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	/* One handler at a time: a SIGALRM inside the SIGUSR1 handler's write to H would interleave
	 * two writes' pattern bookkeeping on one file (docs/DESIGN.md, known limits). The main loop's
	 * writes to M are still interrupted anywhere, also inside the wrapper. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaddset(&sa.sa_mask, SIGALRM);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0 && sigaction(SIGALRM, &sa, NULL) == 0);
	struct itimerval it = {{0, 100}, {0, 100}};
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	memset(buf, 'm', sizeof buf);
	for (int i = 0; i < 10000; i++) {
		CHECK(write(mfd, buf, 100) == 100);
		if (i % 100 == 99)
			CHECK(raise(SIGUSR1) == 0);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	/* a SIGALRM still pending must not run the handler after H is closed */
	sigset_t both;
	sigemptyset(&both);
	sigaddset(&both, SIGALRM);
	sigaddset(&both, SIGUSR1);
	CHECK(sigprocmask(SIG_BLOCK, &both, NULL) == 0);
	CHECK(!bad);
	CHECK(close(mfd) == 0 && close(hfd) == 0);
	printf("%d %d\n", (int)n_usr1, (int)n_alrm);
	return 0;
}
