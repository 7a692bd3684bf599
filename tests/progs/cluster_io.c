/* SPDX-License-Identifier: MIT */
/*
 * The known workload of tests/integration/cluster.sh: one task of a Slurm job step (its rank and
 * the step's size from SLURM_PROCID and SLURM_NTASKS), on one node of scripts/cluster, writing
 * into a directory every node shares. Ranks meet through files there, not through MPI, so that
 * the test needs no PMI between Slurm and MPICH:
 *   1. it creates DIR/ready.R, then (GATE 1) waits for DIR/go: the test cuts a link meanwhile;
 *   2. N-N: rank r write()s (r+1) x 4 blocks of 4096 B to its own DIR/rank<r>.dat and pread()s
 *      block 0 back;
 *   3. N-1: it pwrite()s 8 blocks at offsets (8r ... 8r+7) x 4096 of the shared DIR/shared.dat;
 *   4. it creates DIR/done.R and waits until every rank's done file is there: all ranks exit
 *      within moments of each other, so no node's daemon reports the job directory before
 *      every final log is in it;
 *   5. (GATE 1) it waits for DIR/exit: the test brings the link back first, so that the tasks'
 *      exits reach srun and Slurm (a stepd whose message to srun timed out while the link was
 *      down never tells it again: the step would hang).
 * Every block holds 'a' + r. Usage: cluster_io DIR GATE (0 or 1)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define BLK 4096

static void touch(const char *dir, const char *name, int rank)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.%d", dir, name, rank);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && close(fd) == 0);
}

/* waits (at most 120 s) until DIR/NAME exists, or DIR/NAME.0 .. NAME.(n-1) do (n > 0) */
static void wait_for(const char *dir, const char *name, int n)
{
	char path[4096];
	for (int tries = 0; tries < 12000; tries++) {
		int have = 0;
		if (n == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, name);
			have = access(path, F_OK) == 0;
		} else {
			int i;
			for (i = 0; i < n; i++) {
				snprintf(path, sizeof path, "%s/%s.%d", dir, name, i);
				if (access(path, F_OK) != 0)
					break;
			}
			have = i == n;
		}
		if (have)
			return;
		usleep(10000);
	}
	fprintf(stderr, "cluster_io: no %s/%s after 120 s\n", dir, name);
	exit(1);
}

int main(int argc, char **argv)
{
	static char buf[BLK];
	char path[4096];
	const char *r_env = getenv("SLURM_PROCID"), *n_env = getenv("SLURM_NTASKS");
	if (argc != 3 || !r_env || !n_env) {
		fprintf(stderr, "usage: cluster_io DIR GATE (in a Slurm step: SLURM_PROCID, SLURM_NTASKS)\n");
		return 2;
	}
	const char *dir = argv[1];
	int rank = atoi(r_env), ntasks = atoi(n_env);
	CHECK(rank >= 0 && rank < ntasks);
	touch(dir, "ready", rank);
	if (atoi(argv[2]))
		wait_for(dir, "go", 0);
	memset(buf, 'a' + rank % 26, sizeof buf);

	snprintf(path, sizeof path, "%s/rank%d.dat", dir, rank);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < (rank + 1) * 4; i++)
		CHECK(write(fd, buf, BLK) == BLK);
	CHECK(pread(fd, buf, BLK, 0) == BLK && close(fd) == 0);

	snprintf(path, sizeof path, "%s/shared.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < 8; i++)
		CHECK(pwrite(fd, buf, BLK, ((off_t)rank * 8 + i) * BLK) == BLK);
	CHECK(close(fd) == 0);

	touch(dir, "done", rank);
	wait_for(dir, "done", ntasks);
	if (atoi(argv[2]))
		wait_for(dir, "exit", 0);
	return 0;
}
