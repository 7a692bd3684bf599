/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler knows of a job: for Slurm, `scontrol show job -o ID` run with a timeout and
 * parsed by sys/slurm.h. A job id is what a log header says, which its owner chose: the record is
 * taken only when it is the one record of that id and Slurm's uid for it is the job's owner, so
 * no user learns of another user's Slurm job by naming it. Nothing here touches the store.
 */
#ifndef IOSTRATA_DAEMON_SCHED_H
#define IOSTRATA_DAEMON_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dmn_sched {
	char name[256], state[32], nodes[1024];
	int64_t submit_ms, start_ms, end_ms;
	int final; /* the state will not change (COMPLETED, FAILED, CANCELLED, TIMEOUT ...) */
};

/* 0 with out filled; -ENOENT when Slurm has no such job of uid (or no Slurm here); -EAGAIN when the
 * controller does not answer (asked again later); -errno. */
int dmn_sched_slurm(const char *job, uid_t uid, struct dmn_sched *out);

#endif
