/* SPDX-License-Identifier: MIT */
/*
 * The live file's per-thread totals (TOTALS section, docs/FORMAT.md "Totals") against its records:
 * per user layer, the slots' sums equal what the records sum to (reads, writes, bytes read and
 * written, metadata calls as ana_meta_ops counts them, both size histograms), exactly. The
 * workload (tests/progs/totals_work, under the capture library, aggregation on for one file) does
 * every kind of counted call, failed ones, a pipe and /proc, on 71 threads (more than the section
 * has slots: the last one shared) and in a fork child; it stops itself mid-way (its child
 * stopped too) and at its end, and every live file is compared then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "check.h"
#include "iostrata/format.h"

struct sums {
	uint64_t v[5]; /* reads, writes, bytes read, bytes written, meta */
	uint64_t rh[LOG_HIST_BUCKETS], wh[LOG_HIST_BUCKETS];
};

static unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	unsigned char *b = malloc((size_t)st.st_size);
	size_t got = 0;
	while (b && got < (size_t)st.st_size) {
		ssize_t k = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	*len = got;
	return b;
}

static const struct log_section *section(const struct log_header *h, uint32_t kind)
{
	for (unsigned i = 0; i < h->nsections && i < LOG_MAX_SECTIONS; i++)
		if (h->sections[i].kind == kind)
			return &h->sections[i];
	return NULL;
}

/* One live file's records and slots compared, layer by layer; the slots claimed in *claimed. */
static void compare(const char *what, const char *path, uint64_t *claimed, uint64_t *calls)
{
	size_t len = 0;
	unsigned char *b = slurp(path, &len);
	char name[512];
	snprintf(name, sizeof name, "%s: the live file read", what);
	check(name, b && len >= LOG_HEADER_SIZE, "%s", path);
	if (!b || len < LOG_HEADER_SIZE)
		return;
	const struct log_header *h = (const void *)b;
	const struct log_section *rs = section(h, LOG_SEC_RECORDS), *ts = section(h, LOG_SEC_TOTALS);
	snprintf(name, sizeof name, "%s: a TOTALS section of %u slots of %zu bytes", what, LOG_TOTALS_SLOTS,
		 sizeof(struct log_totals_slot));
	check(name, rs && ts && ts->count == LOG_TOTALS_SLOTS && h->totals_slot_size == sizeof(struct log_totals_slot) &&
			    ts->offset + ts->size <= len && ts->size == ts->count * sizeof(struct log_totals_slot),
	      "records %p totals %p", (void *)rs, (void *)ts);
	if (!rs || !ts || ts->offset + ts->size > len) {
		free(b);
		return;
	}
	struct sums rec[2], tot[2];
	memset(rec, 0, sizeof rec);
	memset(tot, 0, sizeof tot);
	const struct log_record *r = (const void *)(b + rs->offset);
	for (uint32_t i = 0; i < h->nrecords; i++) {
		if (!(r[i].flags & LOG_R_USED) || (r[i].flags & LOG_R_DEAD))
			continue;
		if (r[i].layer != LOG_LAYER_POSIX && r[i].layer != LOG_LAYER_STDIO)
			continue;
		struct sums *s = &rec[r[i].layer - 1];
		const uint64_t *c = r[i].counters;
		s->v[0] += c[LOG_C_READS];
		s->v[1] += c[LOG_C_WRITES];
		s->v[2] += c[LOG_C_BYTES_READ];
		s->v[3] += c[LOG_C_BYTES_WRITTEN];
		s->v[4] += ana_meta_ops(c);
		for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++) {
			s->rh[k] += r[i].read_hist[k];
			s->wh[k] += r[i].write_hist[k];
		}
	}
	const struct log_totals_slot *sl = (const void *)(b + ts->offset);
	uint64_t n = h->totals_claimed < ts->count ? h->totals_claimed : ts->count;
	for (uint64_t i = 0; i < n; i++)
		for (int l = 0; l < 2; l++) {
			const struct log_totals_layer *t = &sl[i].layer[l];
			struct sums *s = &tot[l];
			s->v[0] += t->reads;
			s->v[1] += t->writes;
			s->v[2] += t->bytes_read;
			s->v[3] += t->bytes_written;
			s->v[4] += t->meta;
			for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++) {
				s->rh[k] += t->read_hist[k];
				s->wh[k] += t->write_hist[k];
			}
		}
	static const char *vn[5] = {"reads", "writes", "bytes read", "bytes written", "metadata calls"};
	for (int l = 0; l < 2; l++) {
		const char *ln = l ? "stdio" : "POSIX";
		for (int k = 0; k < 5; k++) {
			snprintf(name, sizeof name, "%s: %s %s: the slots' sum is the records'", what, ln, vn[k]);
			eq_u64(name, tot[l].v[k], rec[l].v[k]);
		}
		snprintf(name, sizeof name, "%s: %s size histograms: the slots' sums are the records'", what, ln);
		int same = !memcmp(tot[l].rh, rec[l].rh, sizeof tot[l].rh) && !memcmp(tot[l].wh, rec[l].wh, sizeof tot[l].wh);
		check(name, same, "differ");
		*calls += rec[l].v[0] + rec[l].v[1] + rec[l].v[4];
	}
	*claimed = h->totals_claimed;
	free(b);
}

/* Every live file in dir compared; how many there were. */
static int compare_all(const char *what, const char *dir, uint64_t *max_claimed, uint64_t *calls)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	*max_claimed = 0;
	*calls = 0;
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 5, ".iost"))
			continue;
		char p[PATH_MAX], w[600];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		snprintf(w, sizeof w, "%s, file %d", what, n + 1);
		uint64_t c = 0;
		compare(w, p, &c, calls);
		if (c > *max_claimed)
			*max_claimed = c;
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static int wait_stopped(pid_t pid)
{
	int st;
	return waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st);
}

int main(void)
{
	const char *b = getenv("IOSTRATA_BUILD");
	char build[PATH_MAX], lib[2 * PATH_MAX + 32], prog[PATH_MAX + 32];
	if (!realpath(b && *b ? b : "build", build)) {
		check("the build directory", 0, "%s", strerror(errno));
		return 1;
	}
	/* a sanitizer build's library needs its runtime loaded first (tests/lib.sh does the same) */
	const char *san = getenv("IOSTRATA_SAN_RUNTIME");
	snprintf(lib, sizeof lib, "%s%s%s/libiostrata.so", san && *san ? san : "", san && *san ? ":" : "", build);
	snprintf(prog, sizeof prog, "%s/tests/progs/totals_work", build);
	char tmp[] = "/tmp/iostrata-totals.XXXXXX";
	if (!mkdtemp(tmp)) {
		check("a temporary directory", 0, "%s", strerror(errno));
		return 1;
	}
	char live[PATH_MAX], out[PATH_MAX], work[PATH_MAX], agg[PATH_MAX + 64];
	snprintf(live, sizeof live, "%s/live", tmp);
	snprintf(out, sizeof out, "%s/out", tmp);
	snprintf(work, sizeof work, "%s/work", tmp);
	snprintf(agg, sizeof agg, "%s/*.out:when=always", work);
	mkdir(live, 0700);
	mkdir(out, 0700);
	mkdir(work, 0700);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("IOSTRATA_LIVE_DIR", live, 1);
		setenv("IOSTRATA_OUT", out, 1);
		setenv("IOSTRATA_QUIET", "1", 1);
		setenv("IOSTRATA_AGGREGATE", agg, 1);
		setenv("LD_PRELOAD", lib, 1);
		execl(prog, prog, work, (char *)NULL);
		_exit(127);
	}
	uint64_t claimed, calls;
	check("the workload stops mid-way", wait_stopped(pid), "not stopped");
	int n = compare_all("mid-way", live, &claimed, &calls);
	eq_u64("mid-way: two live files (the process and its fork child)", (uint64_t)n, 2);
	check("mid-way: calls were counted", calls > 100, "%llu", (unsigned long long)calls);
	kill(pid, SIGCONT);
	check("the workload stops at its end", wait_stopped(pid), "not stopped");
	n = compare_all("at the end", live, &claimed, &calls);
	eq_u64("at the end: one live file (the fork child's finished)", (uint64_t)n, 1);
	check("at the end: more threads claimed slots than there are (the last one shared)",
	      claimed > LOG_TOTALS_SLOTS, "%llu claimed", (unsigned long long)claimed);
	kill(pid, SIGCONT);
	int st;
	check("the workload ends well", waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "status %d", st);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return failures ? 1 : 0;
}
