/* SPDX-License-Identifier: MIT */
/*
 * Slurm's job records as `scontrol show job -o` prints them (slurm_sprint_job_info of
 * src/api/job_info.c in 22.05, src/scontrol/info_job.c later): the parser of its lines into jobs,
 * and the expansion of a hostlist expression ("node[01-03,07],gpu5") into node names. Pure
 * functions on a buffer; nothing is run, nothing is printed. Running scontrol is the caller's
 * business, with SLURM_TIME_FORMAT unset or "standard" (times are then "%FT%T").
 *
 * A line is one job: "Key=Value" fields joined by one blank, with a blank at the end. Slurm
 * prints values raw, so a job name, command, work directory, comment, account or output path may
 * hold blanks and "x=1" ("JobName=my job x=1"). After such a free-text field, the next field
 * starts only at a blank followed by a key Slurm prints (a table of the keys of 22.05 to 25.x).
 * Other values (states, numbers, times, node lists) never hold a blank: after them any "Word="
 * starts a field (a key of a later Slurm: skipped), and a word without '=' makes the line no
 * record. Text a user chooses can thus not stand for a field that matters: a line in which a
 * key appears twice, or in which an array or heterogeneous-job id follows JobName, is refused;
 * a known key inside a free-text value ends it, so such a value never holds " Key=" of a known
 * key (a later Slurm's unknown key after a free-text field stays in its value).
 *
 * One hole stays, and the text cannot close it: sbatch accepts a newline in a job name, and a
 * name can then hold whole forged lines. A caller that decides anything on the user or the job
 * id takes them from the kernel (the owner of the job's processes, their SLURM_JOB_ID), and uses
 * this text for what it describes.
 *
 * Hostile text is refused, never half-used: a line without one of the fields 22.05 always
 * prints (JobId first, JobName, UserId, GroupId, JobState, SubmitTime, StartTime, EndTime,
 * Partition, NodeList, NumNodes, NumCPUs, NumTasks, ExitCode, Command, WorkDir), with a number
 * that is no number or overflows, a time that is not "%FT%T", "Unknown" or "None", a kept value
 * past its bound, a NUL, or the cut-short last line of a text is skipped and counted.
 */
#ifndef IOSTRATA_SYS_SLURM_H
#define IOSTRATA_SYS_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A kept value (name, paths, command, user) holds at most this many bytes with its NUL. */
#define SYS_SLURM_VALUE_MAX 4096
/* The node list (a hostlist expression: compressed, but a large job's may be long). */
#define SYS_SLURM_NODELIST_MAX 65536
/* A line longer than this is refused; a whole text past SYS_SLURM_TEXT_MAX too. */
#define SYS_SLURM_LINE_MAX (1u << 20)
#define SYS_SLURM_TEXT_MAX (64u << 20)
/* A node name with its NUL, and the most names a hostlist may expand to, whatever the caller
 * asks for. */
#define SYS_SLURM_HOST_MAX 256
#define SYS_SLURM_HOSTS_MAX (1u << 20)
/* array_task_id of a record that stands for several tasks (a pending array: "1-3,5%2"). */
#define SYS_SLURM_TASK_MANY UINT64_MAX

/* The base states of job_state_string(); a state with a flag ahead of it (COMPLETING,
 * CONFIGURING, REQUEUED, ...) and the rarer ones (SUSPENDED, PREEMPTED, BOOT_FAIL, DEADLINE)
 * are OTHER: state_text says which. */
enum sys_slurm_state {
	SYS_SLURM_OTHER = 0,
	SYS_SLURM_PENDING,
	SYS_SLURM_RUNNING,
	SYS_SLURM_COMPLETED,
	SYS_SLURM_FAILED,
	SYS_SLURM_CANCELLED,
	SYS_SLURM_TIMEOUT,
	SYS_SLURM_NODE_FAIL,
	SYS_SLURM_OUT_OF_MEMORY,
};

/* One job. The strings point into the parsed text; "" where Slurm printed "(null)" or the field
 * was absent. Times: the text as printed, and seconds since the epoch read in the process's
 * time zone (TZ), which must be the one scontrol ran in (the node's); "Unknown" and "None" give
 * 0. A pending job's StartTime is Slurm's estimate (a year ahead when it has none), a running
 * job's EndTime its time limit's end ("Unknown" without one). */
struct sys_slurm_job {
	uint64_t job_id;
	uint64_t array_job_id;       /* 0 when the job is no array task */
	uint64_t array_task_id;      /* when array_job_id: the task, or SYS_SLURM_TASK_MANY */
	const char *array_tasks;     /* ArrayTaskId as printed: "3", "1-3"; "" for no array */
	uint64_t het_job_id;         /* 0 when the job is no heterogeneous-job component */
	uint64_t het_job_offset;
	const char *name;            /* JobName: may hold blanks */
	const char *user;            /* UserId=root(0): "root", uid 0 (a uid with no name: "1234") */
	uint32_t uid;
	const char *group;           /* GroupId=root(0) */
	uint32_t gid;
	const char *state_text;      /* "COMPLETED", "COMPLETING", ... */
	enum sys_slurm_state state;
	const char *reason;          /* "None", "NonZeroExitCode", "Resources" (blanks made '_') */
	const char *submit_text, *start_text, *end_text;
	int64_t submit_time, start_time, end_time;
	const char *partition;
	const char *node_list;       /* a hostlist expression, "" while pending */
	uint32_t num_nodes, num_nodes_max; /* "1-2" of a pending job: 1 and 2; max 0 for "1" */
	uint32_t num_cpus, num_cpus_max;
	uint32_t num_tasks;          /* 0 for "N/A" */
	uint32_t exit_code;          /* ExitCode=3:0: the job script's exit status, */
	uint32_t exit_signal;        /* and the signal that ended it (ExitCode=0:15: cancelled) */
	const char *command;         /* the batch script or srun's program; "" for sbatch --wrap */
	const char *work_dir;
	const char *std_out, *std_err; /* batch jobs only: "" for srun/salloc */
};

struct sys_slurm_jobs {
	struct sys_slurm_job *v; /* in the order of the text */
	size_t n;
	size_t skipped;          /* lines that were not complete job records */
	char *text;              /* storage of every string of v */
};

/* Parses one NUL-terminated line (no newline) in place: values are cut inside line, which j
 * then points into. 0, -EINVAL (not a job record: a field missing, malformed, repeated or out
 * of place), -ENAMETOOLONG (a kept value past its bound) or -EFBIG (longer than
 * SYS_SLURM_LINE_MAX); j is then undefined. */
int sys_slurm_job_parse_line(char *line, struct sys_slurm_job *j);

/* Parses the text buf[0..len) (a copy: buf is not kept). Each line ends with '\n'; a last line
 * without one was cut short and is skipped ("No jobs in the system" is skipped too). 0, -EFBIG
 * (len > SYS_SLURM_TEXT_MAX) or -ENOMEM; out is empty on error. Free with sys_slurm_jobs_free. */
int sys_slurm_jobs_parse(const char *buf, size_t len, struct sys_slurm_jobs *out);

/* Reads f (a pipe from scontrol) to its end and parses it: also -errno of the read. */
int sys_slurm_jobs_read(FILE *f, struct sys_slurm_jobs *out);

void sys_slurm_jobs_free(struct sys_slurm_jobs *s);

/* The record of job id (for an array task, its own JobId); NULL when absent. */
const struct sys_slurm_job *sys_slurm_job_by_id(const struct sys_slurm_jobs *s, uint64_t id);

/* A hostlist expanded: names in the order of the expression, duplicates kept. */
struct sys_slurm_hosts {
	char **v;
	size_t n;
	char *text; /* storage of the names */
};

/* Expands expr[0..len): names separated by ',' or blanks, each text with bracketed ranges
 * ("node[01-03,07]" gives node01 node02 node03 node07: the width of a range's first number is
 * kept; "r[1-2]n[1-2]" gives r1n1 r1n2 r2n1 r2n2). Name characters: letters, digits, '-', '.',
 * '_'. The names are counted before anything is made: more than max (or SYS_SLURM_HOSTS_MAX)
 * is -E2BIG with nothing allocated. 0, -EINVAL (malformed: an unclosed or nested bracket, a
 * range running backwards, a number of more than 18 digits, more than 8 brackets in a name),
 * -ENAMETOOLONG (a name of SYS_SLURM_HOST_MAX bytes or more; an expression past
 * SYS_SLURM_NODELIST_MAX), -E2BIG or -ENOMEM; out is empty on error. "" gives no names. */
int sys_slurm_hostlist_expand(const char *expr, size_t len, size_t max, struct sys_slurm_hosts *out);

void sys_slurm_hosts_free(struct sys_slurm_hosts *h);

#endif
