/* SPDX-License-Identifier: MIT */
/*
 * The Slurm job parser of src/sys against the output of a real scontrol (tests/fixtures/sys/slurm/,
 * see its README: Slurm 22.05.8 of Debian 12, the cluster of tests/integration/lib_slurm.sh):
 * every parsed field of every job exactly; then hostlist expansion, and hostile input (text cut
 * at every byte, '=' missing, numbers that overflow, values past their bounds, NULs, fields a job
 * name or comment pretends to hold, a newline in a job name) refused or cut cleanly, never
 * half-used. The fixtures were captured in UTC: the test sets TZ. Run from the source tree.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "sys/slurm.h"
#include "sys/text.h"

#define FIX "tests/fixtures/sys/slurm/"
#include "fixture.h"

/* What a record must hold, field by field. */
struct want {
	uint64_t id, array_job, array_task;
	const char *array_tasks;
	const char *name, *user;
	uint32_t uid;
	const char *group;
	uint32_t gid;
	const char *state_text;
	enum sys_slurm_state state;
	const char *reason;
	const char *submit, *start, *end;
	int64_t submit_t, start_t, end_t;
	const char *node_list;
	uint32_t nodes, nodes_max, cpus, cpus_max, tasks, exit_code, exit_signal;
	const char *command, *work_dir, *std_out, *std_err;
};

#define T_1215 1795695675
#define T_1217 1795695677
#define T_2250 1795695770
#define T_3251 1795696371
#define T_3306 1795696386
#define T_3307 1795696387
#define T_3310 1795696390
#define T_3322 1795696402
#define T_3323 1795696403
#define T_3326 1795696406
#define T_3444 1795696484
#define T_4326 1795697006
#define T_3250 1795696370
#define T_3414 1795696454
#define T_NEXT_YEAR 1827231771

static const struct want w_completed = {
	1, 0, 0, "", "iost-check", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:21:15", "2026-11-26T12:21:17", "2026-11-26T12:21:17", T_1215, T_1217, T_1217,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-1.out", "/tmp/sj/slurm-1.out"};
static const struct want w_failed = {
	2, 0, 0, "", "fail3", "root", 0, "root", 0, "FAILED", SYS_SLURM_FAILED, "NonZeroExitCode",
	"2026-11-26T12:22:50", "2026-11-26T12:22:50", "2026-11-26T12:22:50", T_2250, T_2250, T_2250,
	"vm", 1, 0, 1, 0, 1, 3, 0, "", "/tmp/sj", "/tmp/sj/slurm-2.out", "/tmp/sj/slurm-2.out"};
static const struct want w_sleeper = {
	3, 0, 0, "", "sleeper", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:22:50", "2026-11-26T12:32:50", T_2250, T_2250, T_3250,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-3.out", "/tmp/sj/slurm-3.out"};
static const struct want w_tocancel = {
	4, 0, 0, "", "tocancel", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:22:51", "2026-11-26T12:32:51", T_2250, T_2250 + 1, T_3251,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-4.out", "/tmp/sj/slurm-4.out"};
static const struct want w_cancelled = {
	5, 0, 0, "", "waiting", "root", 0, "root", 0, "CANCELLED", SYS_SLURM_CANCELLED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:32:51", "2026-11-26T12:33:06", T_2250, T_3251, T_3306,
	"vm", 1, 0, 2, 0, 2, 0, 15, "", "/tmp/sj", "/tmp/sj/slurm-5.out", "/tmp/sj/slurm-5.out"};
static const struct want w_running_unlimited = {
	5, 0, 0, "", "waiting", "root", 0, "root", 0, "RUNNING", SYS_SLURM_RUNNING, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:32:51", "Unknown", T_2250, T_3251, 0,
	"vm", 1, 0, 2, 0, 2, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-5.out", "/tmp/sj/slurm-5.out"};
static const struct want w_array1 = {
	9, 6, 1, "1", "arr", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:33:06", "2026-11-26T12:33:06", T_2250, T_3306, T_3306,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-6_1.out", "/tmp/sj/slurm-6_1.out"};
static const struct want w_array2 = {
	10, 6, 2, "2", "arr", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:33:06", "2026-11-26T12:33:06", T_2250, T_3306, T_3306,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-6_2.out", "/tmp/sj/slurm-6_2.out"};
static const struct want w_array3 = {
	6, 6, 3, "3", "arr", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:33:07", "2026-11-26T12:33:07", T_2250, T_3307, T_3307,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-6_3.out", "/tmp/sj/slurm-6_3.out"};
static const struct want w_pending_array = {
	6, 6, SYS_SLURM_TASK_MANY, "1-3", "arr", "root", 0, "root", 0, "PENDING", SYS_SLURM_PENDING,
	"Resources", "2026-11-26T12:22:50", "2027-11-26T12:22:51", "Unknown", T_2250, T_NEXT_YEAR, 0,
	"", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-6_4294967294.out",
	"/tmp/sj/slurm-6_4294967294.out"};
static const struct want w_blanks = {
	7, 0, 0, "", "my job x=1", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:33:07", "2026-11-26T12:33:07", T_2250, T_3307, T_3307,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj/dir with space", "/tmp/sj/dir with space/slurm-7.out",
	"/tmp/sj/dir with space/slurm-7.out"};
static const struct want w_srun = {
	8, 0, 0, "", "srunjob", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:22:50", "2026-11-26T12:33:10", "2026-11-26T12:33:10", T_2250, T_3310, T_3310,
	"vm", 1, 0, 2, 0, 2, 0, 0, "hostname", "/tmp/sj", "", ""};
static const struct want w_pending_srun = {
	8, 0, 0, "", "srunjob", "root", 0, "root", 0, "PENDING", SYS_SLURM_PENDING, "Priority",
	"2026-11-26T12:22:50", "2027-11-26T12:22:51", "Unknown", T_2250, T_NEXT_YEAR, 0,
	"", 1, 1, 2, 0, 2, 0, 0, "hostname", "/tmp/sj", "", ""};
static const struct want w_nobody = {
	11, 0, 0, "", "nobodyjob", "nobody", 65534, "nogroup", 65534, "COMPLETED", SYS_SLURM_COMPLETED,
	"None", "2026-11-26T12:33:22", "2026-11-26T12:33:23", "2026-11-26T12:33:23", T_3322, T_3323,
	T_3323, "vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sjn", "/tmp/sjn/slurm-11.out", "/tmp/sjn/slurm-11.out"};
static const struct want w_timeout = {
	12, 0, 0, "", "timesout", "root", 0, "root", 0, "TIMEOUT", SYS_SLURM_TIMEOUT, "TimeLimit",
	"2026-11-26T12:33:22", "2026-11-26T12:33:23", "2026-11-26T12:34:44", T_3322, T_3323, T_3444,
	"vm", 1, 0, 1, 0, 1, 0, 15, "", "/tmp/sj", "/tmp/sj/slurm-12.out", "/tmp/sj/slurm-12.out"};
static const struct want w_running = {
	13, 0, 0, "", "limited", "root", 0, "root", 0, "RUNNING", SYS_SLURM_RUNNING, "None",
	"2026-11-26T12:33:22", "2026-11-26T12:33:26", "2026-11-26T12:43:26", T_3322, T_3326, T_4326,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-13.out", "/tmp/sj/slurm-13.out"};
static const struct want w_tab = {
	15, 0, 0, "", "tab\tx", "root", 0, "root", 0, "COMPLETED", SYS_SLURM_COMPLETED, "None",
	"2026-11-26T12:34:14", "2026-11-26T12:34:44", "2026-11-26T12:34:44", T_3414, T_3444, T_3444,
	"vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-15.out", "/tmp/sj/slurm-15.out"};
/* `scontrol show job -o -d`: the per-node fields "  Nodes=vm CPU_IDs=0 Mem=0 GRES=" inside */
static const struct want w_detail = {
	21, 0, 0, "", "wrap", "root", 0, "root", 0, "RUNNING", SYS_SLURM_RUNNING, "None",
	"2026-11-26T12:42:22", "2026-11-26T12:42:23", "2027-11-26T12:42:23", 1795696942, 1795696943,
	1827232943, "vm", 1, 0, 1, 0, 1, 0, 0, "", "/tmp/sj", "/tmp/sj/slurm-21.out", "/tmp/sj/slurm-21.out"};

/* Every field of one record. */
static void expect_job(const char *what, const struct sys_slurm_job *j, const struct want *w)
{
	char n[160];
#define F(field) (snprintf(n, sizeof n, "%s: %s", what, field), n)
	if (!j) {
		check(what, 0, "no record");
		return;
	}
	eq_u64(F("job_id"), j->job_id, w->id);
	eq_u64(F("array_job_id"), j->array_job_id, w->array_job);
	eq_u64(F("array_task_id"), j->array_task_id, w->array_task);
	eq_str(F("array_tasks"), j->array_tasks, w->array_tasks);
	eq_u64(F("het_job_id, het_job_offset"), j->het_job_id + j->het_job_offset, 0);
	eq_str(F("name"), j->name, w->name);
	eq_str(F("user"), j->user, w->user);
	eq_u64(F("uid"), j->uid, w->uid);
	eq_str(F("group"), j->group, w->group);
	eq_u64(F("gid"), j->gid, w->gid);
	eq_str(F("state_text"), j->state_text, w->state_text);
	eq_u64(F("state"), j->state, w->state);
	eq_str(F("reason"), j->reason, w->reason);
	eq_str(F("submit_text"), j->submit_text, w->submit);
	eq_str(F("start_text"), j->start_text, w->start);
	eq_str(F("end_text"), j->end_text, w->end);
	eq_i64(F("submit_time"), j->submit_time, w->submit_t);
	eq_i64(F("start_time"), j->start_time, w->start_t);
	eq_i64(F("end_time"), j->end_time, w->end_t);
	eq_str(F("partition"), j->partition, "iost");
	eq_str(F("node_list"), j->node_list, w->node_list);
	eq_u64(F("num_nodes"), j->num_nodes, w->nodes);
	eq_u64(F("num_nodes_max"), j->num_nodes_max, w->nodes_max);
	eq_u64(F("num_cpus"), j->num_cpus, w->cpus);
	eq_u64(F("num_cpus_max"), j->num_cpus_max, w->cpus_max);
	eq_u64(F("num_tasks"), j->num_tasks, w->tasks);
	eq_u64(F("exit_code"), j->exit_code, w->exit_code);
	eq_u64(F("exit_signal"), j->exit_signal, w->exit_signal);
	eq_str(F("command"), j->command, w->command);
	eq_str(F("work_dir"), j->work_dir, w->work_dir);
	eq_str(F("std_out"), j->std_out, w->std_out);
	eq_str(F("std_err"), j->std_err, w->std_err);
#undef F
}

/* The fixtures of one or more jobs, with the records they must give in order. */
static const struct {
	const char *file;
	size_t n, skipped;
	const struct want *w[16];
} files[] = {
	{"completed.txt", 1, 0, {&w_completed}},
	{"failed.txt", 1, 0, {&w_failed}},
	{"cancelled.txt", 1, 0, {&w_cancelled}},
	{"timeout.txt", 1, 0, {&w_timeout}},
	{"running.txt", 1, 0, {&w_running}},
	{"running_unlimited.txt", 1, 0, {&w_running_unlimited}},
	{"pending_array.txt", 1, 0, {&w_pending_array}},
	{"pending_srun.txt", 1, 0, {&w_pending_srun}},
	{"array.txt", 3, 0, {&w_array3, &w_array2, &w_array1}},
	{"srun.txt", 1, 0, {&w_srun}},
	{"blanks.txt", 1, 0, {&w_blanks}},
	{"nobody.txt", 1, 0, {&w_nobody}},
	{"detail.txt", 1, 0, {&w_detail}},
	/* a job whose name holds a newline: neither half is a record */
	{"newline.txt", 0, 2, {0}},
	/* a job whose comment holds " UserId=root(0)": UserId twice, refused */
	{"comment_spoof.txt", 0, 1, {0}},
	/* `scontrol show job -o`: 17 lines, 14 jobs; job 13 later in its run than running.txt
	 * (only RunTime differs) */
	{"all.txt", 14, 3, {&w_completed, &w_failed, &w_sleeper, &w_tocancel, &w_cancelled, &w_array1,
			    &w_blanks, &w_srun, &w_array2, &w_array3, &w_nobody, &w_timeout, &w_running,
			    &w_tab}},
};

static void test_fixtures(void)
{
	char what[160];
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len;
		char *buf = fixture(files[f].file, &len);
		if (!buf)
			continue;
		struct sys_slurm_jobs s;
		int r = sys_slurm_jobs_parse(buf, len, &s);
		snprintf(what, sizeof what, "%s: parsed, %zu jobs, %zu lines skipped", files[f].file, files[f].n,
			 files[f].skipped);
		check(what, r == 0 && s.n == files[f].n && s.skipped == files[f].skipped, "r %d, %zu jobs, %zu skipped", r,
		      s.n, s.skipped);
		for (size_t i = 0; i < s.n && i < files[f].n; i++) {
			const struct want *w = files[f].w[i];
			snprintf(what, sizeof what, "%s job %" PRIu64, files[f].file, w->id);
			expect_job(what, &s.v[i], w);
		}
		sys_slurm_jobs_free(&s);
		free(buf);
	}
}

/* A fixture's first line, NUL-terminated, in a buffer of its own (for ASan). */
static char *first_line(const char *file)
{
	size_t len;
	char *buf = fixture(file, &len);
	if (!buf)
		return NULL;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return buf;
}

/* completed.txt's line with the text from `from` replaced by `to` (first occurrence). */
static char *edited(const char *from, const char *to)
{
	char *line = first_line("completed.txt");
	if (!line)
		return NULL;
	char *at = strstr(line, from);
	if (!at) {
		check(from, 0, "not in completed.txt");
		free(line);
		return NULL;
	}
	size_t n = strlen(line) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
	free(line);
	return out;
}

/* The parse of completed.txt edited: the result, and *j filled. */
static int parse_edited(const char *from, const char *to, struct sys_slurm_job *j, char **keep)
{
	char *line = edited(from, to);
	if (!line)
		return -999;
	int r = sys_slurm_job_parse_line(line, j);
	*keep = line;
	return r;
}

static void expect_edit(const char *name, const char *from, const char *to, int want)
{
	struct sys_slurm_job j;
	char *line;
	int r = parse_edited(from, to, &j, &line);
	check(name, r == want, "got %d (%s), want %d", r, strerror(r < 0 ? -r : 0), want);
	if (r != -999)
		free(line);
}

static void test_fields(void)
{
	struct sys_slurm_job j;
	char *line;
	int r;

	/* numbers at and past their bounds */
	r = parse_edited("JobId=1 ", "JobId=18446744073709551615 ", &j, &line);
	check("JobId 2^64-1", r == 0 && j.job_id == UINT64_MAX, "r %d, %" PRIu64, r, j.job_id);
	free(line);
	expect_edit("JobId 2^64: refused", "JobId=1 ", "JobId=18446744073709551616 ", -EINVAL);
	expect_edit("JobId -1: refused", "JobId=1 ", "JobId=-1 ", -EINVAL);
	expect_edit("JobId 0x10: refused", "JobId=1 ", "JobId=0x10 ", -EINVAL);
	expect_edit("JobId empty: refused", "JobId=1 ", "JobId= ", -EINVAL);
	r = parse_edited("UserId=root(0)", "UserId=x(4294967295)", &j, &line);
	check("UserId uid 2^32-1", r == 0 && j.uid == UINT32_MAX && !strcmp(j.user, "x"), "r %d", r);
	free(line);
	expect_edit("UserId uid 2^32: refused", "UserId=root(0)", "UserId=root(4294967296)", -EINVAL);
	expect_edit("UserId without a name: refused", "UserId=root(0)", "UserId=(0)", -EINVAL);
	expect_edit("UserId without its ')': refused", "UserId=root(0)", "UserId=root(0", -EINVAL);
	expect_edit("UserId without an id: refused", "UserId=root(0)", "UserId=root", -EINVAL);
	r = parse_edited("UserId=root(0)", "UserId=a(b(1234)", &j, &line);
	check("UserId: the id is in the last parentheses", r == 0 && j.uid == 1234 && !strcmp(j.user, "a(b"), "r %d", r);
	free(line);
	expect_edit("GroupId gid 2^32: refused", "GroupId=root(0)", "GroupId=root(4294967296)", -EINVAL);
	expect_edit("NumCPUs 2^32: refused", "NumCPUs=1 ", "NumCPUs=4294967296 ", -EINVAL);
	expect_edit("NumNodes 2-1: refused", "NumNodes=1 ", "NumNodes=2-1 ", -EINVAL);
	expect_edit("NumNodes 1-: refused", "NumNodes=1 ", "NumNodes=1- ", -EINVAL);
	r = parse_edited("NumNodes=1 ", "NumNodes=4-4294967295 ", &j, &line);
	check("NumNodes 4-(2^32-1)", r == 0 && j.num_nodes == 4 && j.num_nodes_max == UINT32_MAX, "r %d", r);
	free(line);
	r = parse_edited("NumTasks=1 ", "NumTasks=N/A ", &j, &line);
	check("NumTasks N/A: 0", r == 0 && j.num_tasks == 0, "r %d", r);
	free(line);
	expect_edit("NumTasks x: refused", "NumTasks=1 ", "NumTasks=x ", -EINVAL);
	expect_edit("ExitCode without ':': refused", "ExitCode=0:0", "ExitCode=0", -EINVAL);
	expect_edit("ExitCode signal 2^32: refused", "ExitCode=0:0", "ExitCode=0:4294967296", -EINVAL);
	r = parse_edited("ExitCode=0:0", "ExitCode=255:9", &j, &line);
	check("ExitCode 255:9", r == 0 && j.exit_code == 255 && j.exit_signal == 9, "r %d", r);
	free(line);
	expect_edit("ArrayJobId without ArrayTaskId: refused", "JobName=", "ArrayJobId=3 JobName=", -EINVAL);
	expect_edit("ArrayJobId x: refused", "JobName=", "ArrayJobId=x ArrayTaskId=1 JobName=", -EINVAL);
	r = parse_edited("JobName=", "HetJobId=7 HetJobOffset=1 JobName=", &j, &line);
	check("HetJobId 7 offset 1", r == 0 && j.het_job_id == 7 && j.het_job_offset == 1 && j.array_job_id == 0,
	      "r %d", r);
	free(line);
	expect_edit("HetJobOffset x: refused", "JobName=", "HetJobId=7 HetJobOffset=x JobName=", -EINVAL);
	r = parse_edited("JobState=COMPLETED", "JobState=COMPLETING", &j, &line);
	check("JobState COMPLETING: OTHER, text kept", r == 0 && j.state == SYS_SLURM_OTHER &&
	      !strcmp(j.state_text, "COMPLETING"), "r %d", r);
	free(line);
	const char *st[] = {"NODE_FAIL", "OUT_OF_MEMORY"};
	for (int i = 0; i < 2; i++) {
		char to[64], name[64];
		snprintf(to, sizeof to, "JobState=%s", st[i]);
		snprintf(name, sizeof name, "JobState %s", st[i]);
		r = parse_edited("JobState=COMPLETED", to, &j, &line);
		check(name, r == 0 && j.state == (i ? SYS_SLURM_OUT_OF_MEMORY : SYS_SLURM_NODE_FAIL), "r %d, %d", r,
		      (int)j.state);
		free(line);
	}
	expect_edit("JobState empty: refused", "JobState=COMPLETED", "JobState=", -EINVAL);

	/* times */
	expect_edit("EndTime Feb 30: refused", "EndTime=2026-11-26T12:21:17", "EndTime=2026-02-30T12:21:17", -EINVAL);
	expect_edit("EndTime hour 24: refused", "EndTime=2026-11-26T12:21:17", "EndTime=2026-11-26T24:21:17", -EINVAL);
	expect_edit("EndTime with a blank for T: refused", "EndTime=2026-11-26T12:21:17",
		    "EndTime=2026-11-26 12:21:17", -EINVAL);
	expect_edit("EndTime relative (SLURM_TIME_FORMAT): refused", "EndTime=2026-11-26T12:21:17", "EndTime=12:21",
		    -EINVAL);
	expect_edit("EndTime +2026: refused", "EndTime=2026-11-26T12:21:17", "EndTime=+026-11-26T12:21:17", -EINVAL);
	r = parse_edited("StartTime=2026-11-26T12:21:17", "StartTime=None", &j, &line);
	check("StartTime None: 0", r == 0 && j.start_time == 0 && !strcmp(j.start_text, "None"), "r %d", r);
	free(line);
	r = parse_edited("SubmitTime=2026-11-26T12:21:15", "SubmitTime=2024-02-29T23:59:59", &j, &line);
	check("SubmitTime on a leap day", r == 0 && j.submit_time == 1709251199, "r %d, %" PRId64, r, j.submit_time);
	free(line);
	/* time_t has no leap seconds: strftime never writes :60 */
	expect_edit("EndTime second 60: refused", "EndTime=2026-11-26T12:21:17", "EndTime=2026-11-26T12:21:60", -EINVAL);
	/* the same text in another zone: Central Europe is an hour ahead of UTC in November */
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	r = parse_edited("JobId=1 ", "JobId=1 ", &j, &line);
	check("StartTime read in TZ=CET: an hour earlier", r == 0 && j.start_time == T_1217 - 3600, "r %d, %" PRId64,
	      r, j.start_time);
	free(line);
	setenv("TZ", "UTC", 1);
	tzset();

	/* "(null)" is "", and values past their bounds */
	r = parse_edited("Command=(null)", "Command=/home/a b/run.sh", &j, &line);
	check("Command with a blank", r == 0 && !strcmp(j.command, "/home/a b/run.sh"), "r %d", r);
	free(line);
	char *big = malloc(70000);
	for (int pass = 0; pass < 6; pass++) {
		static const char *const what[] = {"JobName of 4095 bytes", "JobName of 4096 bytes: refused",
						   "WorkDir of 4095 bytes", "WorkDir of 4096 bytes: refused",
						   "NodeList of 65535 bytes", "NodeList of 65536 bytes: refused"};
		static const char *const key[] = {"JobName=", "JobName=", "WorkDir=", "WorkDir=", "NodeList=", "NodeList="};
		static const char *const from[] = {"JobName=iost-check", "JobName=iost-check", "WorkDir=/tmp/sj",
						   "WorkDir=/tmp/sj", "NodeList=vm", "NodeList=vm"};
		static const size_t n[] = {4095, 4096, 4095, 4096, 65535, 65536};
		size_t k = strlen(key[pass]);
		memcpy(big, key[pass], k);
		memset(big + k, 'n', n[pass]);
		big[k + n[pass]] = 0;
		r = parse_edited(from[pass], big, &j, &line);
		check(what[pass], pass % 2 ? r == -ENAMETOOLONG : r == 0, "r %d", r);
		if (r != -999)
			free(line);
	}
	free(big);
	char *huge = malloc(SYS_SLURM_LINE_MAX + 2);
	memset(huge, 'x', SYS_SLURM_LINE_MAX + 1);
	memcpy(huge, "JobId=1 JobName=", 16);
	huge[SYS_SLURM_LINE_MAX + 1] = 0;
	check("a line past SYS_SLURM_LINE_MAX: refused", sys_slurm_job_parse_line(huge, &j) == -EFBIG, "other");
	free(huge);

	/* text that pretends to be fields */
	expect_edit("JobName holding \" UserId=root(0)\": refused", "JobName=iost-check",
		    "JobName=x UserId=nobody(65534)", -EINVAL);
	expect_edit("JobName holding \" ArrayJobId=5 ArrayTaskId=1\": refused", "JobName=iost-check",
		    "JobName=x ArrayJobId=5 ArrayTaskId=1", -EINVAL);
	expect_edit("JobName holding \" JobId=7\": refused", "JobName=iost-check", "JobName=x JobId=7", -EINVAL);
	r = parse_edited("JobName=iost-check", "JobName=x y=1 z", &j, &line);
	check("JobName holding an unknown \"y=1\": kept in the name", r == 0 && !strcmp(j.name, "x y=1 z"), "r %d", r);
	free(line);
	r = parse_edited("JobName=iost-check", "JobName=  two  blanks ", &j, &line);
	check("JobName with blanks around: kept exactly", r == 0 && !strcmp(j.name, "  two  blanks "), "r %d '%s'", r,
	      r == 0 ? j.name : "");
	free(line);
	expect_edit("a word without '=' after a number: refused", "NumCPUs=1 ", "NumCPUs=1 2 ", -EINVAL);
	expect_edit("a blank inside NodeList: refused", "NodeList=vm", "NodeList=vm vm2", -EINVAL);
	r = parse_edited("Power= ", "Power= FutureKey=a b c ", &j, &line);
	check("an unknown key of a later Slurm after a fixed field: skipped", r == 0 && !strcmp(j.std_out,
	      "/tmp/sj/slurm-1.out"), "r %d", r);
	free(line);
	r = parse_edited("WorkDir=/tmp/sj", "WorkDir=/tmp/sj FutureKey=1", &j, &line);
	check("an unknown key after a free-text field: part of its value", r == 0 &&
	      !strcmp(j.work_dir, "/tmp/sj FutureKey=1"), "r %d", r);
	free(line);
	r = parse_edited("CoreSpec=* ", "CoreSpec=*   Nodes=vm CPU_IDs=0 Mem=0 GRES=   Nodes=vm CPU_IDs=1 Mem=0 GRES= ",
			 &j, &line);
	check("the per-node lines of `show job -d` (Nodes= twice)", r == 0 && j.job_id == 1, "r %d", r);
	free(line);
	expect_edit("not starting with JobId: refused", "JobId=1 ", "JobID=1 ", -EINVAL);

	/* every '=' of completed.txt missing in turn: a required key's is refused */
	static const char *const required[] = {"JobId", "JobName", "UserId", "GroupId", "JobState", "SubmitTime",
					       "StartTime", "EndTime", "Partition", "NodeList", "NumNodes", "NumCPUs",
					       "NumTasks", "ExitCode", "Command", "WorkDir"};
	char *base = first_line("completed.txt");
	size_t refused = 0, required_refused = 0, nreq = 0, neq = 0;
	for (size_t i = 0; base && base[i]; i++) {
		if (base[i] != '=')
			continue;
		/* the key ends at this '=' and starts after the blank before it */
		size_t ks = i;
		while (ks > 0 && base[ks - 1] != ' ')
			ks--;
		if (strchr(base + ks, '=') != base + i)
			continue; /* an '=' inside a value (TRES=cpu=1,...) */
		neq++;
		char *copy = strdup(base);
		copy[i] = 'X';
		int req = 0;
		for (size_t q = 0; q < sizeof required / sizeof required[0]; q++)
			if (strlen(required[q]) == i - ks && !strncmp(base + ks, required[q], i - ks))
				req = 1;
		r = sys_slurm_job_parse_line(copy, &j);
		refused += r < 0;
		nreq += req;
		required_refused += req && r == -EINVAL;
		free(copy);
	}
	free(base);
	eq_u64("'=' missing: keys tried (every key of completed.txt)", neq, 60);
	eq_u64("'=' missing: every required key's line refused", required_refused, nreq);
	eq_u64("'=' missing: the 16 required keys found", nreq, 16);
	check("'=' missing: lines refused (the required ones, and those after a fixed field)",
	      refused >= required_refused && refused < neq, "%zu of %zu", refused, neq);
	expect_edit("'=' missing after a fixed field (BatchHost): refused", "BatchHost=vm", "BatchHostXvm", -EINVAL);
	r = parse_edited("StdIn=/dev/null", "StdInX/dev/null", &j, &line);
	check("'=' missing after a free-text field (StdIn): part of StdErr", r == 0 &&
	      !strcmp(j.std_err, "/tmp/sj/slurm-1.out StdInX/dev/null"), "r %d", r);
	free(line);
}

/* Each fixture cut at every byte: the records of the complete lines, never more. */
static void test_truncated(void)
{
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len;
		char *buf = fixture(files[f].file, &len);
		if (!buf)
			continue;
		size_t bad = 0, bad_line = 0;
		/* where each complete line ends, and whether it is a record on its own */
		size_t ends[32], nlines = 0;
		int valid[32];
		for (size_t a = 0; a < len && nlines < 32;) {
			char *nl = memchr(buf + a, '\n', len - a);
			if (!nl)
				break;
			char *one = strndup(buf + a, (size_t)(nl - buf) - a);
			struct sys_slurm_job j;
			valid[nlines] = sys_slurm_job_parse_line(one, &j) == 0;
			free(one);
			ends[nlines++] = (size_t)(nl - buf) + 1;
			a = (size_t)(nl - buf) + 1;
		}
		for (size_t k = 0; k <= len; k++) {
			char *copy = malloc(k ? k : 1); /* exactly k bytes: ASan sees any read past */
			memcpy(copy, buf, k);
			struct sys_slurm_jobs s;
			if (sys_slurm_jobs_parse(copy, k, &s) < 0) {
				bad++;
			} else {
				size_t want = 0;
				for (size_t i = 0; i < nlines && ends[i] <= k; i++)
					want += valid[i];
				bad += s.n != want;
			}
			sys_slurm_jobs_free(&s);
			free(copy);
		}
		/* the first line alone, cut at every byte: a record from the end of "WorkDir=" on */
		const char *nl = memchr(buf, '\n', len);
		size_t l1 = nl ? (size_t)(nl - buf) : len;
		char *wd = memmem(buf, l1, " WorkDir=", 9);
		size_t from = wd ? (size_t)(wd - buf) + 9 : l1 + 1;
		for (size_t k = 0; k <= l1; k++) {
			char *one = strndup(buf, k);
			struct sys_slurm_job j;
			int r = sys_slurm_job_parse_line(one, &j);
			if (files[f].n && files[f].skipped == 0)
				bad_line += (r == 0) != (k >= from);
			free(one);
		}
		char name[160];
		snprintf(name, sizeof name, "%s cut at each of %zu bytes: the records of its complete lines", files[f].file,
			 len + 1);
		eq_u64(name, bad, 0);
		snprintf(name, sizeof name, "%s: its first line cut: a record exactly from the end of \"WorkDir=\"",
			 files[f].file);
		eq_u64(name, bad_line, 0);
		free(buf);
	}
}

static void test_text(void)
{
	size_t len;
	char *buf = fixture("all.txt", &len);
	if (!buf)
		return;
	struct sys_slurm_jobs s;
	/* a NUL in the second line: that line alone is skipped */
	char *nul = malloc(len);
	memcpy(nul, buf, len);
	nul[strchr(buf, '\n') - buf + 20] = 0;
	int r = sys_slurm_jobs_parse(nul, len, &s);
	check("a NUL in job 2's line: 13 jobs, 4 lines skipped, job 2 absent",
	      r == 0 && s.n == 13 && s.skipped == 4 && !sys_slurm_job_by_id(&s, 2) && sys_slurm_job_by_id(&s, 3), "r %d, %zu, %zu",
	      r, s.n, s.skipped);
	sys_slurm_jobs_free(&s);
	nul[0] = 0;
	r = sys_slurm_jobs_parse(nul, len, &s);
	check("a NUL first: 12 jobs, 5 lines skipped", r == 0 && s.n == 12 && s.skipped == 5, "r %d, %zu, %zu", r, s.n,
	      s.skipped);
	sys_slurm_jobs_free(&s);
	free(nul);

	/* through a stream, and the lookup */
	FILE *f = fmemopen(buf, len, "r");
	r = sys_slurm_jobs_read(f, &s);
	fclose(f);
	check("read from a stream: 14 jobs, 3 skipped", r == 0 && s.n == 14 && s.skipped == 3, "r %d", r);
	const struct sys_slurm_job *j = sys_slurm_job_by_id(&s, 10);
	check("by id: job 10 is array 6's task 2", j && j->array_job_id == 6 && j->array_task_id == 2, "other");
	check("by id: job 14 (its name holds a newline) is absent, 99 too", !sys_slurm_job_by_id(&s, 14) &&
	      !sys_slurm_job_by_id(&s, 99), "found");
	sys_slurm_jobs_free(&s);
	free(buf);

	r = sys_slurm_jobs_parse("No jobs in the system\n", 22, &s);
	check("\"No jobs in the system\": no jobs, one line skipped", r == 0 && s.n == 0 && s.skipped == 1, "r %d", r);
	sys_slurm_jobs_free(&s);
	r = sys_slurm_jobs_parse("", 0, &s);
	check("empty text: no jobs, nothing skipped", r == 0 && s.n == 0 && s.skipped == 0, "r %d", r);
	sys_slurm_jobs_free(&s);
	r = sys_slurm_jobs_parse("x", (size_t)SYS_SLURM_TEXT_MAX + 1, &s);
	check("text past SYS_SLURM_TEXT_MAX: -EFBIG, nothing read", r == -EFBIG && s.n == 0 && !s.text, "r %d", r);
}

/* Expands expr with max; the names joined by blanks, or "error N". */
static void expect_hosts(const char *expr, size_t max, const char *want)
{
	struct sys_slurm_hosts h;
	char got[4096] = "", name[300];
	int r = sys_slurm_hostlist_expand(expr, strlen(expr), max, &h);
	if (r < 0) {
		snprintf(got, sizeof got, "error %d", r);
		if (h.n || h.v || h.text)
			snprintf(got, sizeof got, "error %d, but out not empty", r);
	} else {
		for (size_t i = 0; i < h.n; i++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", h.v[i]);
	}
	sys_slurm_hosts_free(&h);
	snprintf(name, sizeof name, "hostlist \"%.200s\" (max %zu)", expr, max);
	eq_str(name, got, want);
}

static void test_hostlist(void)
{
	char e[64];
	expect_hosts("node[01-03,07],gpu5", 100, "node01 node02 node03 node07 gpu5");
	expect_hosts("vm", 1, "vm");
	expect_hosts("", 0, "");
	expect_hosts(" , ,", 5, "");
	expect_hosts("a,b c\td", 4, "a b c d");
	expect_hosts("n[8-11]", 10, "n8 n9 n10 n11");
	expect_hosts("n[09-11]", 10, "n09 n10 n11");
	expect_hosts("n[001-003,5]", 10, "n001 n002 n003 n5");
	expect_hosts("n[0]", 10, "n0");
	expect_hosts("r[1-2]n[1-2]", 4, "r1n1 r1n2 r2n1 r2n2");
	expect_hosts("n[1-3]-ib.cluster_x", 3, "n1-ib.cluster_x n2-ib.cluster_x n3-ib.cluster_x");
	expect_hosts("[1-2]", 2, "1 2");
	expect_hosts("a,a", 2, "a a");
	expect_hosts("n[1-4]", 3, "error -7");
	expect_hosts("n[1-3]", 3, "n1 n2 n3");
	expect_hosts("a,b,c,d", 3, "error -7");
	expect_hosts("a", 0, "error -7");
	/* hostile: counted before anything is allocated */
	expect_hosts("n[0-999999999]", SIZE_MAX, "error -7");
	expect_hosts("a[1-1000]b[1-1000]c[1-1000]", SIZE_MAX, "error -7");
	expect_hosts("n[1-1048577]", SIZE_MAX, "error -7");
	expect_hosts("n[0-184467440737095516]", SIZE_MAX, "error -7");
	expect_hosts("n[0-9999999999999999999]", SIZE_MAX, "error -22");
	expect_hosts("n[1-2", 10, "error -22");
	expect_hosts("n1-2]", 10, "error -22");
	expect_hosts("n[[1]]", 10, "error -22");
	expect_hosts("n[3-1]", 10, "error -22");
	expect_hosts("n[]", 10, "error -22");
	expect_hosts("n[1,]", 10, "error -22");
	expect_hosts("n[,1]", 10, "error -22");
	expect_hosts("n[1--2]", 10, "error -22");
	expect_hosts("n[a]", 10, "error -22");
	expect_hosts("n[1 ,2]", 10, "error -22");
	expect_hosts("(null)", 10, "error -22");
	expect_hosts("n/../x", 10, "error -22");
	expect_hosts("a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]", 10, "a1b1c1d1e1f1g1h1");
	expect_hosts("a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]", 10, "error -22");
	char long_name[300];
	memset(long_name, 'x', 255);
	long_name[255] = 0;
	expect_hosts(long_name, 1, long_name);
	long_name[255] = 'x';
	long_name[256] = 0;
	expect_hosts(long_name, 1, "error -36");
	memset(long_name, 'x', 254);
	memcpy(long_name + 254, "[9-10]", 7);
	expect_hosts(long_name, 2, "error -36"); /* "x..x10": 256 bytes */
	memcpy(long_name + 253, "[9-10]", 7);
	{
		char want[600];
		snprintf(want, sizeof want, "%.253s9 %.253s10", long_name, long_name);
		expect_hosts(long_name, 2, want);
	}
	/* a NUL, an expression past its bound, and every cut */
	struct sys_slurm_hosts h;
	check("hostlist with a NUL: -EINVAL", sys_slurm_hostlist_expand("a\0b", 3, 10, &h) == -EINVAL && !h.v, "other");
	char *big = malloc(SYS_SLURM_NODELIST_MAX);
	memset(big, 'a', SYS_SLURM_NODELIST_MAX);
	for (size_t i = 1; i < SYS_SLURM_NODELIST_MAX; i += 2)
		big[i] = ',';
	check("hostlist of SYS_SLURM_NODELIST_MAX bytes: -ENAMETOOLONG",
	      sys_slurm_hostlist_expand(big, SYS_SLURM_NODELIST_MAX, SIZE_MAX, &h) == -ENAMETOOLONG, "other");
	int r = sys_slurm_hostlist_expand(big, SYS_SLURM_NODELIST_MAX - 1, SIZE_MAX, &h);
	check("hostlist of 32768 one-letter names", r == 0 && h.n == 32768 && !strcmp(h.v[32767], "a"), "r %d, %zu", r,
	      h.n);
	sys_slurm_hosts_free(&h);
	free(big);
	r = sys_slurm_hostlist_expand("n[1-100000]", 11, SIZE_MAX, &h);
	check("n[1-100000]: 100000 names, n100000 last", r == 0 && h.n == 100000 && !strcmp(h.v[99999], "n100000") &&
	      !strcmp(h.v[0], "n1"), "r %d", r);
	sys_slurm_hosts_free(&h);
	const char *expr = "node[01-03,07],gpu5 r[1-2]n[1-2]";
	size_t bad = 0, len = strlen(expr);
	for (size_t k = 0; k <= len; k++) {
		char *copy = malloc(k ? k : 1);
		memcpy(copy, expr, k);
		r = sys_slurm_hostlist_expand(copy, k, 100, &h);
		bad += !(r == 0 || r == -EINVAL) || (r < 0 && (h.v || h.n));
		sys_slurm_hosts_free(&h);
		free(copy);
	}
	snprintf(e, sizeof e, "hostlist cut at each of %zu bytes: names or -EINVAL", len + 1);
	eq_u64(e, bad, 0);
}

int main(void)
{
	setenv("TZ", "UTC", 1); /* the zone the fixtures were captured in */
	tzset();
	test_fixtures();
	test_fields();
	test_truncated();
	test_text();
	test_hostlist();
	return failures ? 1 : 0;
}
