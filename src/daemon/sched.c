/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's facts of a job (sched.h): scontrol in a child, its output bounded and read
 * within a deadline, parsed by the one Slurm parser.
 */
#include "daemon/sched.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sys/slurm.h"

#define SCONTROL_MS 5000
#define SCONTROL_MAX (1u << 20)

/* Slurm job ids: digits, an array task "123_4" is asked as its own id. */
static int job_id_of(const char *job, uint64_t *id)
{
	char *end;
	if (!*job || strlen(job) > 18 || job[strspn(job, "0123456789")])
		return -1;
	*id = strtoull(job, &end, 10);
	return *id ? 0 : -1;
}

static int run_scontrol(const char *id, char **out, size_t *len)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2); /* its complaint tells "no such job" from "no controller" */
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0)
			dup2(nul, 0);
		unsetenv("SLURM_TIME_FORMAT");
		execlp("scontrol", "scontrol", "show", "job", "-o", id, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	*out = NULL;
	*len = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = buf ? 0 : -ENOMEM;
	while (r == 0) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		int left = SCONTROL_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = {pfd[0], POLLIN, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (n + 1 >= cap) {
			if (cap >= SCONTROL_MAX) {
				r = -EFBIG;
				break;
			}
			char *b = realloc(buf, cap * 2);
			if (!b) {
				r = -ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t k = read(pfd[0], buf + n, cap - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(pfd[0]);
	if (r < 0)
		kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		/* no such job, or no scontrol (127), or no Slurm configured: -ENOENT; a controller that
		 * does not answer (a node cut off, slurmctld restarting): -EAGAIN, asked again later */
		buf[n] = 0;
		int unreachable = WIFEXITED(status) && WEXITSTATUS(status) != 127 &&
				  (strstr(buf, "Unable to contact") || strstr(buf, "Socket timed out") ||
				   strstr(buf, "Connection refused") || strstr(buf, "communication"));
		r = unreachable ? -EAGAIN : -ENOENT;
	}
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int dmn_sched_slurm(const char *job, uid_t uid, struct dmn_sched *out)
{
	uint64_t id;
	char *text = NULL;
	size_t len = 0;
	memset(out, 0, sizeof *out);
	if (job_id_of(job, &id) < 0)
		return -ENOENT;
	int r = run_scontrol(job, &text, &len);
	if (r < 0)
		return r;
	struct sys_slurm_jobs jobs;
	r = sys_slurm_jobs_parse(text, len, &jobs);
	free(text);
	if (r < 0)
		return r;
	const struct sys_slurm_job *j = NULL;
	size_t same = 0;
	for (size_t i = 0; i < jobs.n; i++)
		if (jobs.v[i].job_id == id) {
			j = &jobs.v[i];
			same++;
		}
	r = -ENOENT;
	if (same == 1 && j->uid == (uint32_t)uid) {
		snprintf(out->name, sizeof out->name, "%s", j->name);
		snprintf(out->state, sizeof out->state, "%s", j->state_text);
		snprintf(out->nodes, sizeof out->nodes, "%s", j->node_list);
		out->submit_ms = j->submit_time * 1000;
		out->start_ms = j->start_time * 1000;
		out->end_ms = j->state == SYS_SLURM_RUNNING || j->state == SYS_SLURM_PENDING ? 0 : j->end_time * 1000;
		out->final = j->state != SYS_SLURM_PENDING && j->state != SYS_SLURM_RUNNING && j->state != SYS_SLURM_OTHER;
		r = 0;
	}
	sys_slurm_jobs_free(&jobs);
	return r;
}
