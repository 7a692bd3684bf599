/* SPDX-License-Identifier: MIT */
/*
 * Slurm's `scontrol show job -o` lines and hostlist expressions: the parsers (slurm.h).
 */
#include "sys/slurm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sys/field.h"
#include "sys/text.h"

/* The values kept, by slot. */
enum slot {
	S_NONE = -1,
	S_JOB_ID,
	S_ARRAY_JOB,
	S_ARRAY_TASK,
	S_HET_JOB,
	S_HET_OFFSET,
	S_NAME,
	S_USER,
	S_GROUP,
	S_STATE,
	S_REASON,
	S_SUBMIT,
	S_START,
	S_END,
	S_PARTITION,
	S_NODE_LIST,
	S_NUM_NODES,
	S_NUM_CPUS,
	S_NUM_TASKS,
	S_EXIT,
	S_COMMAND,
	S_WORK_DIR,
	S_STD_OUT,
	S_STD_ERR,
	NSLOTS
};

enum {
	F_FREE = 1, /* free text: a blank then an unknown "Word=" stays in the value */
	F_DUP = 2,  /* may repeat: the per-node lines of `show job -d` */
	F_PRE = 4,  /* printed before JobName, never after it */
};

struct key {
	const char *name;
	signed char slot;
	unsigned char flags;
};

/* Every key slurm_sprint_job_info prints for a job, 22.05 to 25.x (with -d too). */
static const struct key keys[] = {
	{"JobId", S_JOB_ID, 0},
	{"ArrayJobId", S_ARRAY_JOB, F_PRE},
	{"ArrayTaskId", S_ARRAY_TASK, F_PRE},
	{"ArrayTaskThrottle", S_NONE, F_PRE},
	{"HetJobId", S_HET_JOB, F_PRE},
	{"HetJobOffset", S_HET_OFFSET, F_PRE},
	{"JobName", S_NAME, F_FREE},
	{"SLUID", S_NONE, 0},
	{"HetJobIdSet", S_NONE, 0},
	{"UserId", S_USER, 0},
	{"GroupId", S_GROUP, 0},
	{"MCS_label", S_NONE, F_FREE},
	{"Priority", S_NONE, 0},
	{"Nice", S_NONE, 0},
	{"Account", S_NONE, F_FREE},
	{"QOS", S_NONE, 0},
	{"WCKey", S_NONE, F_FREE},
	{"JobState", S_STATE, 0},
	{"Reason", S_REASON, 0},
	{"Dependency", S_NONE, F_FREE},
	{"Requeue", S_NONE, 0},
	{"Restarts", S_NONE, 0},
	{"BatchFlag", S_NONE, 0},
	{"Reboot", S_NONE, 0},
	{"ExitCode", S_EXIT, 0},
	{"DerivedExitCode", S_NONE, 0},
	{"RunTime", S_NONE, 0},
	{"TimeLimit", S_NONE, 0},
	{"TimeMin", S_NONE, 0},
	{"SubmitTime", S_SUBMIT, 0},
	{"EligibleTime", S_NONE, 0},
	{"AccrueTime", S_NONE, 0},
	{"ResizeTime", S_NONE, 0},
	{"StartTime", S_START, 0},
	{"EndTime", S_END, 0},
	{"Deadline", S_NONE, 0},
	{"CronJob", S_NONE, 0},
	{"CrontabSpec", S_NONE, F_FREE},
	{"PreemptEligibleTime", S_NONE, 0},
	{"PreemptTime", S_NONE, 0},
	{"SuspendTime", S_NONE, 0},
	{"SecsPreSuspend", S_NONE, 0},
	{"LastSchedEval", S_NONE, 0},
	{"Scheduler", S_NONE, 0},
	{"Partition", S_PARTITION, 0},
	{"AllocNode:Sid", S_NONE, 0},
	{"ReqNodeList", S_NONE, 0},
	{"ExcNodeList", S_NONE, 0},
	{"NodeList", S_NODE_LIST, 0},
	{"SchedNodeList", S_NONE, 0},
	{"BatchFeatures", S_NONE, F_FREE},
	{"BatchHost", S_NONE, 0},
	{"FedOrigin", S_NONE, 0},
	{"FedViableSiblings", S_NONE, 0},
	{"FedActiveSiblings", S_NONE, 0},
	{"NumNodes", S_NUM_NODES, 0},
	{"NumCPUs", S_NUM_CPUS, 0},
	{"NumTasks", S_NUM_TASKS, 0},
	{"CPUs/Task", S_NONE, 0},
	{"ReqB:S:C:T", S_NONE, 0},
	{"ReqTRES", S_NONE, 0},
	{"AllocTRES", S_NONE, 0},
	{"TRES", S_NONE, 0},
	{"Socks/Node", S_NONE, 0},
	{"NtasksPerN:B:S:C", S_NONE, 0},
	{"CoreSpec", S_NONE, 0},
	{"ThreadSpec", S_NONE, 0},
	{"JOB_GRES", S_NONE, 0},
	{"Nodes", S_NONE, F_DUP},
	{"CPU_IDs", S_NONE, F_DUP},
	{"Mem", S_NONE, F_DUP},
	{"GRES", S_NONE, F_DUP},
	{"MinCPUsNode", S_NONE, 0},
	{"MinMemoryNode", S_NONE, 0},
	{"MinMemoryCPU", S_NONE, 0},
	{"MinMemoryTRES", S_NONE, 0},
	{"MinTmpDiskNode", S_NONE, 0},
	{"Features", S_NONE, F_FREE},
	{"DelayBoot", S_NONE, 0},
	{"ClusterFeatures", S_NONE, F_FREE},
	{"Prefer", S_NONE, F_FREE},
	{"Reservation", S_NONE, 0},
	{"OverSubscribe", S_NONE, 0},
	{"Exclusive", S_NONE, 0},
	{"Contiguous", S_NONE, 0},
	{"Licenses", S_NONE, 0},
	{"LicensesAlloc", S_NONE, 0},
	{"Network", S_NONE, F_FREE},
	{"Command", S_COMMAND, F_FREE},
	{"SubmitLine", S_NONE, F_FREE},
	{"WorkDir", S_WORK_DIR, F_FREE},
	{"AdminComment", S_NONE, F_FREE},
	{"SystemComment", S_NONE, F_FREE},
	{"Comment", S_NONE, F_FREE},
	{"Extra", S_NONE, F_FREE},
	{"StdErr", S_STD_ERR, F_FREE},
	{"StdIn", S_NONE, F_FREE},
	{"StdOut", S_STD_OUT, F_FREE},
	{"SegmentSize", S_NONE, 0},
	{"SpreadSegments", S_NONE, 0},
	{"ConsolidateSegments", S_NONE, 0},
	{"Switches", S_NONE, 0},
	{"BurstBuffer", S_NONE, F_FREE},
	{"BurstBufferState", S_NONE, 0},
	{"CPU_min_freq", S_NONE, 0},
	{"CPU_max_freq", S_NONE, 0},
	{"CPU_governor", S_NONE, 0},
	{"Power", S_NONE, 0},
	{"GresEnforceBind", S_NONE, 0},
	{"KillOInInvalidDependent", S_NONE, 0},
	{"KillOnInvalidDependent", S_NONE, 0},
	{"SpreadJob", S_NONE, 0},
	{"ExpeditedRequeue", S_NONE, 0},
	{"GresAllowTaskSharing", S_NONE, 0},
	{"GresOneTaskPerSharing", S_NONE, 0},
	{"OOMKillStep", S_NONE, 0},
	{"CpusPerTres", S_NONE, 0},
	{"MemPerTres", S_NONE, 0},
	{"TresBind", S_NONE, 0},
	{"TresFreq", S_NONE, 0},
	{"TresPerJob", S_NONE, 0},
	{"TresPerNode", S_NONE, 0},
	{"TresPerSocket", S_NONE, 0},
	{"TresPerTask", S_NONE, 0},
	{"MailUser", S_NONE, F_FREE},
	{"MailType", S_NONE, 0},
	{"NtasksPerTRES", S_NONE, 0},
	{"ResvPorts", S_NONE, 0},
	{"Container", S_NONE, F_FREE},
	{"ContainerID", S_NONE, F_FREE},
	{"SELinuxContext", S_NONE, F_FREE},
	{"FailedNode", S_NONE, 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Every slot a job record must have (22.05 prints them for every job). */
static const enum slot required[] = {S_JOB_ID, S_NAME, S_USER, S_GROUP, S_STATE, S_SUBMIT, S_START,
				     S_END, S_PARTITION, S_NODE_LIST, S_NUM_NODES, S_NUM_CPUS,
				     S_NUM_TASKS, S_EXIT, S_COMMAND, S_WORK_DIR};

static const struct {
	const char *text;
	enum sys_slurm_state state;
} states[] = {
	{"PENDING", SYS_SLURM_PENDING},     {"RUNNING", SYS_SLURM_RUNNING},
	{"COMPLETED", SYS_SLURM_COMPLETED}, {"FAILED", SYS_SLURM_FAILED},
	{"CANCELLED", SYS_SLURM_CANCELLED}, {"TIMEOUT", SYS_SLURM_TIMEOUT},
	{"NODE_FAIL", SYS_SLURM_NODE_FAIL}, {"OUT_OF_MEMORY", SYS_SLURM_OUT_OF_MEMORY},
};

static int is_key_char(char c, int first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
		return 1;
	return !first && ((c >= '0' && c <= '9') || c == '_' || c == ':' || c == '/');
}

/* The length of the key of the "Word=" at s (0 when s holds none). */
static size_t key_len(const char *s)
{
	size_t n = 0;
	while (is_key_char(s[n], n == 0))
		n++;
	return n && s[n] == '=' ? n : 0;
}

/* The index in keys[] of s[0..n), or -1. */
static int key_index(const char *s, size_t n)
{
	if (!n)
		return -1;
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].name[0] == s[0] && !strncmp(keys[i].name, s, n) && keys[i].name[n] == 0)
			return (int)i;
	return -1;
}

/* "%FT%T" in local time, "Unknown" or "None" (0): 0 or -EINVAL. */
static int parse_time(const char *s, int64_t *out)
{
	unsigned v[6];
	static const unsigned lim[6][2] = {{1970, 9999}, {1, 12}, {1, 31}, {0, 23}, {0, 59}, {0, 59}};
	static const char sep[6] = "--T::";

	if (!strcmp(s, "Unknown") || !strcmp(s, "None")) {
		*out = 0;
		return 0;
	}
	if (strlen(s) != 19)
		return -EINVAL;
	for (unsigned f = 0, i = 0; f < 6; f++) {
		unsigned w = f == 0 ? 4 : 2;
		uint32_t x;
		if (sys_field_u32(s + i, w, &x) < 0 || x < lim[f][0] || x > lim[f][1])
			return -EINVAL;
		v[f] = x;
		i += w;
		if (f < 5 && s[i++] != sep[f])
			return -EINVAL;
	}
	struct tm tm = {.tm_year = (int)v[0] - 1900, .tm_mon = (int)v[1] - 1, .tm_mday = (int)v[2],
			.tm_hour = (int)v[3], .tm_min = (int)v[4], .tm_sec = (int)v[5], .tm_isdst = -1};
	time_t t = mktime(&tm);
	/* mktime moves Feb 30 to March: such a date was no date */
	if (t == (time_t)-1 || tm.tm_mday != (int)v[2] || tm.tm_mon != (int)v[1] - 1)
		return -EINVAL;
	*out = (int64_t)t;
	return 0;
}

/* "N" or "N-M" (M >= N); max 0 for "N". */
static int parse_range(const char *s, uint32_t *min, uint32_t *max)
{
	const char *dash = strchr(s, '-');
	*max = 0;
	if (!dash)
		return sys_field_u32(s, strlen(s), min) < 0 ? -EINVAL : 0;
	if (sys_field_u32(s, (size_t)(dash - s), min) < 0 ||
	    sys_field_u32(dash + 1, strlen(dash + 1), max) < 0 || *max < *min)
		return -EINVAL;
	return 0;
}

/* "name(id)": the name cut in place at its '(' (a non-empty one), the id. */
static int parse_owner(char *s, const char **name, uint32_t *id)
{
	size_t n = strlen(s);
	char *open = strrchr(s, '(');
	if (n < 4 || s[n - 1] != ')' || !open || open == s)
		return -EINVAL;
	if (sys_field_u32(open + 1, (size_t)(s + n - 1 - (open + 1)), id) < 0)
		return -EINVAL;
	*open = 0;
	*name = s;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	return sys_field_u64(s, strlen(s), v) < 0 ? -EINVAL : 0;
}

int sys_slurm_job_parse_line(char *line, struct sys_slurm_job *j)
{
	char *val[NSLOTS] = {0};
	unsigned char seen[NKEYS] = {0};
	size_t len = strlen(line);
	int name_seen = 0;

	memset(j, 0, sizeof *j);
	if (len > SYS_SLURM_LINE_MAX)
		return -EFBIG;
	if (len && line[len - 1] == ' ')
		line[--len] = 0; /* the blank Slurm ends every record with */
	if (strncmp(line, "JobId=", 6))
		return -EINVAL;

	/* Cut the fields: each value runs to the blank before the next field's key. */
	char *p = line;
	for (;;) {
		size_t kl = key_len(p);
		int k = key_index(p, kl);
		if (k >= 0) {
			if (seen[k] && !(keys[k].flags & F_DUP))
				return -EINVAL;
			if ((keys[k].flags & F_PRE) && name_seen)
				return -EINVAL;
			seen[k] = 1;
			if (keys[k].slot == S_NAME)
				name_seen = 1;
			if (keys[k].slot != S_NONE)
				val[keys[k].slot] = p + kl + 1;
		}
		/* The next blank that starts a field. After a free-text value only a known key does;
		 * after another value any "Word=" does, and a word that is none is refused (a
		 * state, number or node list never holds a blank: the line is not Slurm's); the
		 * value of an unknown key runs to the next "Word=". */
		int free_text = k >= 0 && (keys[k].flags & F_FREE);
		char *q = p + kl + 1;
		for (;;) {
			q = strchr(q, ' ');
			if (!q)
				break;
			size_t nl = key_len(q + 1);
			if (nl && (!free_text || key_index(q + 1, nl) >= 0))
				break;
			if (!nl && k >= 0 && !free_text && q[1] != ' ' && q[1] != 0)
				return -EINVAL;
			q++;
		}
		if (!q)
			break;
		*q = 0;
		p = q + 1;
	}

	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (!val[required[i]])
			return -EINVAL;
	for (int s = 0; s < NSLOTS; s++) {
		if (!val[s])
			val[s] = "";
		else if (!strcmp(val[s], "(null)"))
			val[s] = "";
		else if (strlen(val[s]) >= (s == S_NODE_LIST ? SYS_SLURM_NODELIST_MAX : SYS_SLURM_VALUE_MAX))
			return -ENAMETOOLONG;
	}

	if (parse_u64(val[S_JOB_ID], &j->job_id) < 0)
		return -EINVAL;
	if (*val[S_ARRAY_JOB] || *val[S_ARRAY_TASK]) {
		if (parse_u64(val[S_ARRAY_JOB], &j->array_job_id) < 0 || !*val[S_ARRAY_TASK])
			return -EINVAL;
		if (parse_u64(val[S_ARRAY_TASK], &j->array_task_id) < 0)
			j->array_task_id = SYS_SLURM_TASK_MANY; /* "1-3,5": the pending tasks */
	}
	j->array_tasks = val[S_ARRAY_TASK];
	if (*val[S_HET_JOB] || *val[S_HET_OFFSET])
		if (parse_u64(val[S_HET_JOB], &j->het_job_id) < 0 ||
		    parse_u64(val[S_HET_OFFSET], &j->het_job_offset) < 0)
			return -EINVAL;
	j->name = val[S_NAME];
	if (parse_owner(val[S_USER], &j->user, &j->uid) < 0 ||
	    parse_owner(val[S_GROUP], &j->group, &j->gid) < 0)
		return -EINVAL;
	if (!*val[S_STATE])
		return -EINVAL;
	j->state_text = val[S_STATE];
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
		if (!strcmp(j->state_text, states[i].text))
			j->state = states[i].state;
	j->reason = val[S_REASON];
	j->submit_text = val[S_SUBMIT];
	j->start_text = val[S_START];
	j->end_text = val[S_END];
	if (parse_time(j->submit_text, &j->submit_time) < 0 || parse_time(j->start_text, &j->start_time) < 0 ||
	    parse_time(j->end_text, &j->end_time) < 0)
		return -EINVAL;
	j->partition = val[S_PARTITION];
	j->node_list = val[S_NODE_LIST];
	if (parse_range(val[S_NUM_NODES], &j->num_nodes, &j->num_nodes_max) < 0 ||
	    parse_range(val[S_NUM_CPUS], &j->num_cpus, &j->num_cpus_max) < 0)
		return -EINVAL;
	if (strcmp(val[S_NUM_TASKS], "N/A") &&
	    sys_field_u32(val[S_NUM_TASKS], strlen(val[S_NUM_TASKS]), &j->num_tasks) < 0)
		return -EINVAL;
	char *colon = strchr(val[S_EXIT], ':');
	if (!colon || sys_field_u32(val[S_EXIT], (size_t)(colon - val[S_EXIT]), &j->exit_code) < 0 ||
	    sys_field_u32(colon + 1, strlen(colon + 1), &j->exit_signal) < 0)
		return -EINVAL;
	j->command = val[S_COMMAND];
	j->work_dir = val[S_WORK_DIR];
	j->std_out = val[S_STD_OUT];
	j->std_err = val[S_STD_ERR];
	return 0;
}

void sys_slurm_jobs_free(struct sys_slurm_jobs *s)
{
	free(s->v);
	free(s->text);
	*s = (struct sys_slurm_jobs){0};
}

struct jobs_walk {
	struct sys_slurm_jobs *out;
	size_t cap;
};

static int job_line(char *line, size_t len, void *ctx)
{
	struct jobs_walk *w = ctx;
	struct sys_slurm_job j;
	(void)len;
	if (sys_slurm_job_parse_line(line, &j) < 0) {
		w->out->skipped++;
		return 0;
	}
	struct sys_slurm_job *v = sys_text_grow(w->out->v, &w->cap, w->out->n, sizeof *v, 16);
	if (!v)
		return -ENOMEM;
	w->out->v = v;
	v[w->out->n++] = j;
	return 0;
}

/* The records of buf[0..len), or of all f holds when f is not NULL. */
static int parse(FILE *f, const char *buf, size_t len, struct sys_slurm_jobs *out)
{
	struct jobs_walk w = {.out = out};
	*out = (struct sys_slurm_jobs){0};
	int r = sys_text_lines(f, buf, len, SYS_SLURM_TEXT_MAX, &out->text, job_line, &w, &out->skipped);
	if (r < 0)
		sys_slurm_jobs_free(out);
	return r;
}

int sys_slurm_jobs_parse(const char *buf, size_t len, struct sys_slurm_jobs *out)
{
	return parse(NULL, buf, len, out);
}

int sys_slurm_jobs_read(FILE *f, struct sys_slurm_jobs *out)
{
	return parse(f, NULL, 0, out);
}

const struct sys_slurm_job *sys_slurm_job_by_id(const struct sys_slurm_jobs *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].job_id == id)
			return &s->v[i];
	return NULL;
}

/* ---------- hostlists ---------- */

#define MAX_BRACKETS 8
#define MAX_DIGITS 18

static int is_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_';
}

static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

/* One range of a bracket: "07" or "01-03". */
struct range {
	uint64_t lo, hi;
	unsigned width; /* digits of lo: the names keep its zeros */
};

/* Reads the range at s[*i..end) (advancing *i past it): 0 or -EINVAL. */
static int next_range(const char *s, size_t *i, size_t end, struct range *r)
{
	size_t a = *i, b = a;
	while (b < end && s[b] >= '0' && s[b] <= '9')
		b++;
	if (b == a || b - a > MAX_DIGITS || sys_field_u64(s + a, b - a, &r->lo) < 0)
		return -EINVAL;
	r->width = (unsigned)(b - a);
	r->hi = r->lo;
	if (b < end && s[b] == '-') {
		size_t c = ++b;
		while (b < end && s[b] >= '0' && s[b] <= '9')
			b++;
		if (b == c || b - c > MAX_DIGITS || sys_field_u64(s + c, b - c, &r->hi) < 0 || r->hi < r->lo)
			return -EINVAL;
	}
	if (b < end && s[b] != ',')
		return -EINVAL;
	*i = b < end ? b + 1 : b;
	return 0;
}

/* A name of the expression: texts and brackets; brackets hold s[open[k]+1 .. close[k]). */
struct item {
	const char *s;
	size_t start, end;
	size_t open[MAX_BRACKETS], close[MAX_BRACKETS];
	unsigned nb;
};

/* Splits the item at s[start..end) into its brackets and counts its names (at most limit,
 * else -E2BIG): 0 or -errno. */
static int scan_item(const char *s, size_t start, size_t end, uint64_t limit, struct item *it, uint64_t *count)
{
	uint64_t n = 1;
	size_t textlen = 0;
	it->s = s;
	it->start = start;
	it->end = end;
	it->nb = 0;
	for (size_t i = start; i < end; i++) {
		if (s[i] == '[') {
			if (it->nb == MAX_BRACKETS)
				return -EINVAL;
			size_t c = i + 1;
			while (c < end && s[c] != ']' && s[c] != '[')
				c++;
			if (c == end || s[c] != ']' || c == i + 1)
				return -EINVAL;
			uint64_t in = 0;
			unsigned widest = 0;
			for (size_t k = i + 1; k < c;) {
				struct range r;
				if (next_range(s, &k, c, &r) < 0)
					return -EINVAL;
				if (s[k - 1] == ',' && k == c)
					return -EINVAL; /* "[1,]" */
				uint64_t span = r.hi - r.lo + 1;
				if (span > limit || in > limit - span)
					return -E2BIG;
				in += span;
				unsigned digits = 1;
				for (uint64_t x = r.hi; x >= 10; x /= 10)
					digits++;
				digits = digits > r.width ? digits : r.width;
				widest = digits > widest ? digits : widest;
			}
			if (n > limit / in)
				return -E2BIG;
			n *= in;
			textlen += widest;
			it->open[it->nb] = i;
			it->close[it->nb++] = c;
			i = c;
		} else if (is_host_char(s[i])) {
			textlen++;
		} else {
			return -EINVAL; /* ']', or a character no host name has */
		}
		if (textlen >= SYS_SLURM_HOST_MAX)
			return -ENAMETOOLONG;
	}
	if (n > limit)
		return -E2BIG;
	*count = n;
	return 0;
}

struct out {
	struct sys_slurm_hosts *h;
	size_t *offs; /* offsets of the names in h->text while it may move */
	size_t used, cap;
};

static int out_name(struct out *o, const char *name, size_t n)
{
	if (o->used + n + 1 > o->cap) {
		size_t ncap = o->cap ? o->cap : 4096;
		while (ncap < o->used + n + 1)
			ncap *= 2;
		char *t = realloc(o->h->text, ncap);
		if (!t)
			return -ENOMEM;
		o->h->text = t;
		o->cap = ncap;
	}
	memcpy(o->h->text + o->used, name, n);
	o->h->text[o->used + n] = 0;
	o->offs[o->h->n++] = o->used;
	o->used += n + 1;
	return 0;
}

/* The names of bracket k onwards, after the first len bytes of buf. */
static int emit(struct out *o, const struct item *it, unsigned k, char *buf, size_t len)
{
	size_t from = k == 0 ? it->start : it->close[k - 1] + 1;
	size_t to = k < it->nb ? it->open[k] : it->end;
	memcpy(buf + len, it->s + from, to - from);
	len += to - from;
	if (k == it->nb)
		return out_name(o, buf, len);
	for (size_t i = it->open[k] + 1; i < it->close[k];) {
		struct range r;
		next_range(it->s, &i, it->close[k], &r); /* checked by scan_item */
		for (uint64_t v = r.lo;; v++) {
			int w = snprintf(buf + len, SYS_SLURM_HOST_MAX - len, "%0*llu", (int)r.width,
					 (unsigned long long)v);
			int e = emit(o, it, k + 1, buf, len + (size_t)w);
			if (e < 0)
				return e;
			if (v == r.hi)
				break;
		}
	}
	return 0;
}

void sys_slurm_hosts_free(struct sys_slurm_hosts *h)
{
	free(h->v);
	free(h->text);
	*h = (struct sys_slurm_hosts){0};
}

/* The next name expression of expr from *i, in [*start, *end): 1, or 0 at the end. Blanks and
 * commas separate them, except inside a bracket. */
static int next_item(const char *expr, size_t len, size_t *i, size_t *start, size_t *end)
{
	while (*i < len && is_sep(expr[*i]))
		(*i)++;
	if (*i == len)
		return 0;
	*start = *i;
	int depth = 0;
	while (*i < len && (depth || !is_sep(expr[*i]))) {
		if (expr[*i] == '[')
			depth = 1;
		else if (expr[*i] == ']')
			depth = 0;
		(*i)++;
	}
	*end = *i;
	return 1;
}

int sys_slurm_hostlist_expand(const char *expr, size_t len, size_t max, struct sys_slurm_hosts *out)
{
	struct item it;
	uint64_t total = 0, limit = max < SYS_SLURM_HOSTS_MAX ? max : SYS_SLURM_HOSTS_MAX;
	size_t i, start, end;
	int r;

	*out = (struct sys_slurm_hosts){0};
	if (len >= SYS_SLURM_NODELIST_MAX)
		return -ENAMETOOLONG;
	if (memchr(expr, 0, len))
		return -EINVAL;
	/* First count, so that nothing is allocated for an expression that names too many. */
	for (i = 0; next_item(expr, len, &i, &start, &end);) {
		uint64_t n;
		if ((r = scan_item(expr, start, end, limit - total, &it, &n)) < 0)
			return r;
		total += n;
	}
	if (!total)
		return 0;
	struct out o = {.h = out};
	out->v = malloc(total * sizeof *out->v);
	o.offs = malloc(total * sizeof *o.offs);
	if (!out->v || !o.offs) {
		r = -ENOMEM;
		goto err;
	}
	char buf[SYS_SLURM_HOST_MAX];
	for (i = 0; next_item(expr, len, &i, &start, &end);) {
		uint64_t n;
		scan_item(expr, start, end, UINT64_MAX, &it, &n);
		if ((r = emit(&o, &it, 0, buf, 0)) < 0)
			goto err;
	}
	for (size_t k = 0; k < out->n; k++)
		out->v[k] = out->text + o.offs[k];
	free(o.offs);
	return 0;
err:
	free(o.offs);
	sys_slurm_hosts_free(out);
	return r;
}
