/* SPDX-License-Identifier: MIT */
/*
 * What `iostrata report` costs on a job of many process logs (issue 12: 10,000 logs in bounded
 * memory). Three ways through the same job directory, each in a fresh child process so its peak
 * resident memory (getrusage's ru_maxrss) is its own:
 *   read    every log read and freed, nothing merged: the floor any report pays
 *   held    every log read into memory, then one merge over all of them (ana_job_build): how the
 *           report worked before it streamed
 *   stream  ana_job_load, as `iostrata report` runs: each log read, merged and freed
 * Each runs REPS times; the medians are printed with the ratios stream / held.
 *
 *   report DIR [REPS]        (REPS default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/job.h"
#include "log/jobdir.h"

enum mode { READ, HELD, STREAM, NMODES };
static const char *const mode_names[NMODES] = {"read", "held", "stream"};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The child: one way through the job; exit 0, or 1 with a message. */
static int run_mode(enum mode m, const char *dir, size_t *nlogs)
{
	char err[1024];
	struct ana_job j;
	if (m == STREAM) {
		int r = ana_job_load(&j, &dir, 1, ANA_JOB_TIMELINE | ANA_JOB_MOUNTS, err, sizeof err);
		if (r < 0) {
			fprintf(stderr, "bench/report: %s\n", err);
			return 1;
		}
		*nlogs = j.nread;
		ana_job_free(&j);
		return 0;
	}
	struct log_scan s;
	if (log_scan_args(&dir, 1, &s, err, sizeof err) < 0) {
		fprintf(stderr, "bench/report: %s\n", err);
		return 1;
	}
	struct log_file *logs = calloc(s.npaths ? s.npaths : 1, sizeof *logs);
	size_t n = 0;
	if (!logs)
		return 1;
	for (size_t i = 0; i < s.npaths; i++) {
		if (log_file_read(s.paths[i], &logs[n], err, sizeof err) < 0)
			continue;
		if (m == READ)
			log_file_free(&logs[n]);
		else
			n++;
	}
	*nlogs = m == READ ? s.npaths : n;
	if (m == HELD) {
		if (ana_job_build(&j, logs, n, ANA_JOB_TIMELINE, NULL, 0) < 0)
			return 1;
		ana_job_free(&j);
		for (size_t i = 0; i < n; i++)
			log_file_free(&logs[i]);
	}
	free(logs);
	log_scan_free(&s);
	return 0;
}

/* One run in a child: seconds and peak KiB. */
static int measure(enum mode m, const char *dir, double *secs, long *kib, size_t *nlogs)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		size_t n = 0;
		int rc = run_mode(m, dir, &n);
		if (write(fd[1], &n, sizeof n) != sizeof n)
			rc = 1;
		_exit(rc);
	}
	close(fd[1]);
	int st;
	struct rusage ru;
	if (read(fd[0], nlogs, sizeof *nlogs) != sizeof *nlogs)
		*nlogs = 0;
	close(fd[0]);
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*secs = now_s() - t0;
	*kib = ru.ru_maxrss;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: report DIR [REPS]\n");
		return 2;
	}
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (reps < 1 || reps > 99) {
		fprintf(stderr, "bench/report: REPS must be 1..99\n");
		return 2;
	}
	double secs[NMODES][99], kib[NMODES][99], med_s[NMODES], med_kib[NMODES];
	size_t nlogs = 0;
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < NMODES; i++) {
			/* the order rotates from round to round: a drifting machine hits every mode alike */
			int m = (i + r) % NMODES;
			long k;
			if (measure((enum mode)m, argv[1], &secs[m][r], &k, &nlogs) < 0) {
				fprintf(stderr, "bench/report: the %s run failed\n", mode_names[m]);
				return 1;
			}
			kib[m][r] = (double)k;
		}
	for (int m = 0; m < NMODES; m++) {
		qsort(secs[m], (size_t)reps, sizeof secs[m][0], cmp_double);
		qsort(kib[m], (size_t)reps, sizeof kib[m][0], cmp_double);
		med_s[m] = secs[m][reps / 2];
		med_kib[m] = kib[m][reps / 2];
	}
	printf("job: %s, %zu logs; medians of %d runs, each in a fresh process\n", argv[1], nlogs, reps);
	printf("%-8s %10s %12s %14s\n", "mode", "seconds", "peak MiB", "KiB per log");
	for (int m = 0; m < NMODES; m++)
		printf("%-8s %10.3f %12.1f %14.2f\n", mode_names[m], med_s[m], med_kib[m] / 1024,
		       nlogs ? med_kib[m] / (double)nlogs : 0);
	printf("ratio stream/held: time %.2fx, peak memory %.3fx\n", med_s[STREAM] / med_s[HELD],
	       med_kib[STREAM] / med_kib[HELD]);
	return 0;
}
