/* SPDX-License-Identifier: MIT */
/*
 * The workload of the process benchmark (bench/procs): what a process costs its parent when it
 * starts and ends, the way shell scripts, make and Python's subprocess start thousands of them.
 *
 *   procs MODE N [PROGRAM ARGS...]
 *
 * MODE:
 *   fork   N times: fork a child that _exits at once, and wait for it
 *   spawn  N times: fork a child that execs PROGRAM ARGS (stdout to /dev/null), and wait for it
 *
 * One line on stdout: wall ns per child (fork to reaped, CLOCK_MONOTONIC), the children's CPU ns
 * per child (user + system, RUSAGE_CHILDREN) and their minor page faults per child. It knows
 * nothing about iostrata; bench/procs runs it bare and under `iostrata run` and compares.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "fork") && strcmp(argv[1], "spawn")) ||
	    (!strcmp(argv[1], "spawn") && argc < 4)) {
		fprintf(stderr, "usage: procs fork N | procs spawn N PROGRAM [ARGS...]\n");
		return 2;
	}
	int spawn = !strcmp(argv[1], "spawn");
	long n = strtol(argv[2], NULL, 10);
	if (n <= 0) {
		fprintf(stderr, "procs: N must be positive\n");
		return 2;
	}
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("procs: fork");
			return 1;
		}
		if (pid == 0) {
			if (!spawn)
				_exit(0);
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 1);
			execvp(argv[3], argv + 3);
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "procs: a child failed\n");
			return 1;
		}
	}
	double wall = (now_ns() - t0) / (double)n;
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double cpu = ((double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) / (double)n;
	printf("%.0f %.0f %.1f\n", wall, cpu, (double)ru.ru_minflt / (double)n);
	return 0;
}
