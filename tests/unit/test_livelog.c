/* SPDX-License-Identifier: MIT */
/*
 * The live logs from the outside (src/log/livelog.c): live files built by hand, as the capture
 * library lays them out, in a live directory and linked from a job directory of this test's
 * own temporary directory. A live log whose process is gone, a zombie, or a pid reused by
 * another process is recovered into a final log flagged crashed, with its counters, its end
 * and the signal, and its live file and link removed; one whose process runs (this one) is
 * left alone unless forced. Discovery: IOSTRATA_LIVE_DIR, the live files of a live directory,
 * the links of a job directory with a stale one removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "iostrata/reader.h"
#include "log/live.h"
#include "log/livelog.h"
#include "log/writer.h"
#include "sys/procstat.h"

static char tmp[64], livedir[128], jobdir[128];

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* A live log of process pid (start time start_ticks) at livedir/NAME with one record of 3
 * writes of 4096 bytes that ended at 9,000,000 ns, and its link in jobdir. */
static void make_live(const char *name, int pid, uint64_t start_ticks, char *path, size_t len)
{
	const uint32_t maxr = 16, string_cap = 4096;
	const size_t rec_off = LOG_HEADER_SIZE + string_cap, size = rec_off + maxr * sizeof(struct log_record);
	char link[256];
	snprintf(path, len, "%s/%s", livedir, name);
	snprintf(link, sizeof link, "%s/%s.live", jobdir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror(path);
		exit(2);
	}
	char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	struct log_header *h = (struct log_header *)m;
	char *strings = m + LOG_HEADER_SIZE;
	log_live_header_init(h, maxr, string_cap, rec_off);
	uint32_t used = 1;
#define STR(field, s)                                                                                              \
	do {                                                                                                       \
		h->field = used;                                                                                   \
		memcpy(strings + used, s, strlen(s) + 1);                                                          \
		used += (uint32_t)strlen(s) + 1;                                                                   \
	} while (0)
	STR(host, "node1");
	STR(exe, "/usr/bin/writer");
	STR(outdir, jobdir);
	STR(live_path, path);
	uint32_t file = used;
	memcpy(strings + used, "/data/out.dat", 14);
	used += 14;
#undef STR
	h->string_used = used;
	h->pid = pid;
	h->proc_start_ticks = start_ticks;
	h->rank = h->nprocs = -1;
	h->start_ns = 1000000;
	h->exit_status = -1;
	h->clock_kind = LOG_CLOCK_NS;
	struct log_record *r = (struct log_record *)(m + rec_off);
	r->id = 77;
	r->layer = LOG_LAYER_POSIX;
	r->path = file;
	r->rank = -1;
	r->counters[LOG_C_WRITES] = 3;
	r->counters[LOG_C_BYTES_WRITTEN] = 12288;
	r->counters[LOG_C_WRITE_LAST] = 9000000;
	r->flags = LOG_R_USED;
	h->nrecords = 1;
	memcpy(h->magic, LOG_MAGIC, 8);
	munmap(m, size);
	if (symlink(path, link) < 0) {
		perror(link);
		exit(2);
	}
}

/* A pid that no process has now (a child that exited and was reaped). */
static int dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return (int)p;
}

static uint64_t own_start(void)
{
	struct sys_proc_stat st;
	return sys_proc_stat_read(getpid(), &st) == 0 ? st.starttime : 0;
}

/* The final log of a recovery: crashed, not live, its one record and end; the live file and
 * the link gone. */
static void expect_recovered(const char *what, const char *live, const char *dst, int sig)
{
	char name[200], err[512], want[256], link[256];
	struct log_file lf;
	const char *base = strrchr(live, '/') + 1;
	snprintf(want, sizeof want, "%s/%s", jobdir, base);
	snprintf(name, sizeof name, "%s: final log in the job directory its header names", what);
	check(name, !strcmp(dst, want), "dst %s, want %s", dst, want);
	snprintf(name, sizeof name, "%s: final log readable", what);
	int r = log_file_read(dst, &lf, err, sizeof err);
	check(name, r == 0, "%s", err);
	if (r < 0)
		return;
	snprintf(name, sizeof name, "%s: crashed, not live, signal", what);
	check(name, (lf.hdr.flags & LOG_F_CRASHED) && !(lf.hdr.flags & LOG_F_LIVE) && !lf.live && lf.hdr.term_signal == sig,
	      "flags %#x live %d signal %d", lf.hdr.flags, lf.live, lf.hdr.term_signal);
	snprintf(name, sizeof name, "%s: its record: 3 writes, 12288 bytes", what);
	check(name, lf.nrecords == 1 && lf.records[0].counters[LOG_C_WRITES] == 3 &&
		    lf.records[0].counters[LOG_C_BYTES_WRITTEN] == 12288 &&
		    !strcmp(log_file_string(&lf, lf.records[0].path), "/data/out.dat"), "nrecords %u", lf.nrecords);
	snprintf(name, sizeof name, "%s: its end is the last write's", what);
	eq_u64(name, lf.hdr.end_ns, 9000000);
	log_file_free(&lf);
	snprintf(link, sizeof link, "%s/%s.live", jobdir, base);
	snprintf(name, sizeof name, "%s: live file and link removed", what);
	check(name, !exists(live) && !exists(link), "live %d link %d", exists(live), exists(link));
}

/* The live file at path kept through an exec (LOG_F_LIVE_KEPT), its end set, its record's counts
 * zeroed when zero (a forked child that counted nothing); with fin, the final log of its exec
 * written beside it first (flagged exec), as the capture library does. */
static void keep_for_exec(const char *path, int zero, int fin)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	char *m = fd >= 0 && fstat(fd, &st) == 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
						  : MAP_FAILED;
	if (m == MAP_FAILED) {
		perror(path);
		exit(2);
	}
	close(fd);
	struct log_header *h = (struct log_header *)m;
	struct log_record *r = (struct log_record *)(m + h->sections[1].offset);
	if (zero)
		memset(r->counters, 0, sizeof r->counters);
	h->end_ns = 9500000;
	char dst[512], err[512];
	snprintf(dst, sizeof dst, "%s/%s", jobdir, strrchr(path, '/') + 1);
	if (fin && log_write_final(m, (size_t)st.st_size, NULL, dst, LOG_F_FINISHED | LOG_F_EXEC, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(2);
	}
	h->flags |= LOG_F_LIVE_KEPT;
	munmap(m, (size_t)st.st_size);
}

static int count_path(const char *path, void *arg)
{
	(void)path;
	(*(int *)arg)++;
	return 0;
}

int main(void)
{
	char dst[512], fin[512], err[512];
	snprintf(tmp, sizeof tmp, "/tmp/iostrata-livelog.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(livedir, sizeof livedir, "%s/live", tmp);
	snprintf(jobdir, sizeof jobdir, "%s/job", tmp);
	mkdir(livedir, 0700);
	mkdir(jobdir, 0755);
	uint64_t me = own_start();
	check("this process's start time", me > 0, "0");

	/* liveness */
	eq_u64("alive: this process, its start time", (uint64_t)log_live_alive(getpid(), me), 1);
	eq_u64("alive: this process, start time unknown", (uint64_t)log_live_alive(getpid(), 0), 1);
	eq_u64("dead: this pid with another start time (a reused pid)", (uint64_t)log_live_alive(getpid(), me + 1), 0);
	eq_u64("dead: a reaped child", (uint64_t)log_live_alive(dead_pid(), 0), 0);
	eq_u64("dead: pid 0 and -1", (uint64_t)(log_live_alive(0, 0) + log_live_alive(-1, 0)), 0);
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	struct sys_proc_stat zs;
	while (sys_proc_stat_read(z, &zs) == 0 && zs.state != 'Z')
		usleep(1000); /* until it has exited; it stays a zombie until waited for */
	eq_u64("dead: a zombie", (uint64_t)log_live_alive(z, zs.starttime), 0);

	/* discovery */
	char dirs[4][LOG_LIVE_PATH];
	setenv("IOSTRATA_LIVE_DIR", livedir, 1);
	int nd = log_live_dirs(dirs, 4);
	check("IOSTRATA_LIVE_DIR is the one live directory", nd == 1 && !strcmp(dirs[0], livedir), "%d", nd);
	char a[256], b[256], c[256];
	make_live("node1-100-1.iost", dead_pid(), 0, a, sizeof a);
	make_live("node1-101-1.iost", getpid(), me, b, sizeof b);
	make_live("node1-102-1.iost", z, zs.starttime, c, sizeof c);
	int fd = open(strcat(strcpy(dst, livedir), "/notalog.txt"), O_CREAT | O_WRONLY, 0600);
	close(fd);
	int n = 0;
	eq_u64("live directory: its 3 .iost files", (uint64_t)log_live_scan(livedir, LOG_LIVE_IN_LIVEDIR, count_path, &n), 3);
	eq_u64("live directory: fn called 3 times", (uint64_t)n, 3);
	char stale[256];
	snprintf(stale, sizeof stale, "%s/gone.iost.live", jobdir);
	if (symlink("/nonexistent/gone.iost", stale) < 0)
		perror(stale);
	n = 0;
	eq_u64("job directory: 3 live links, the stale one not counted",
	       (uint64_t)log_live_scan(jobdir, LOG_LIVE_IN_JOBDIR, count_path, &n), 3);
	check("job directory: the stale link removed", !exists(stale), "still there");
	eq_u64("a missing directory: -ENOENT", (uint64_t)-log_live_scan("/nonexistent", LOG_LIVE_IN_LIVEDIR, count_path, &n),
	       ENOENT);

	/* recovery */
	int r = log_live_recover(b, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("a running process's live log is skipped", r == 1 && exists(b), "r %d", r);
	r = log_live_recover(a, NULL, 9, 0, dst, sizeof dst, err, sizeof err);
	check("a dead process's live log is recovered", r == 0, "r %d: %s", r, err);
	expect_recovered("dead", a, dst, 9);
	r = log_live_recover(c, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("a zombie's live log is recovered", r == 0, "r %d: %s", r, err);
	expect_recovered("zombie", c, dst, 0);
	waitpid(z, NULL, 0);
	snprintf(fin, sizeof fin, "%s", dst);
	r = log_live_recover(fin, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("a final log: -EINVAL, one line", r == -EINVAL && strstr(err, "not a live log") && !strchr(err, '\n'), "r %d: %s",
	      r, err);
	r = log_live_recover(b, NULL, 0, 1, dst, sizeof dst, err, sizeof err);
	check("--force recovers a running process's live log", r == 0, "r %d: %s", r, err);
	expect_recovered("forced", b, dst, 0);
	r = log_live_recover(a, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("a live file that is gone: an error naming it", r < 0 && strstr(err, a), "r %d: %s", r, err);

	/* kept through an exec (docs/FORMAT.md, "An exec"): its process gone, the final log of the
	 * exec beside it stands for it, or none when it counted nothing: removed, nothing written;
	 * without that log and with counts: recovered, the flag cleared. Its process alive: left. */
	char k1[256], k2[256], k3[256], k4[256], want[512], link[512];
	make_live("node1-110-1.iost", dead_pid(), 0, k1, sizeof k1);
	keep_for_exec(k1, 0, 1);
	snprintf(want, sizeof want, "%s/node1-110-1.iost", jobdir);
	struct stat fst;
	int had = stat(want, &fst) == 0;
	r = log_live_recover(k1, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	snprintf(link, sizeof link, "%s.live", want);
	check("kept, its exec's final log beside: removed, the log named, kept as it was",
	      had && r == 2 && !strcmp(dst, want) && !exists(k1) && !exists(link) && exists(want), "r %d dst %s: %s", r, dst, err);
	struct log_file kf;
	check("kept: the final log of the exec untouched (exec, not crashed)",
	      log_file_read(want, &kf, err, sizeof err) == 0 && (kf.hdr.flags & LOG_F_EXEC) && !(kf.hdr.flags & LOG_F_CRASHED),
	      "%s", err);
	log_file_free(&kf);
	make_live("node1-111-1.iost", dead_pid(), 0, k2, sizeof k2);
	keep_for_exec(k2, 1, 0);
	r = log_live_recover(k2, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	snprintf(want, sizeof want, "%s/node1-111-1.iost", jobdir);
	check("kept, no log, nothing counted: removed, nothing written", r == 2 && !dst[0] && !exists(k2) && !exists(want),
	      "r %d dst %s: %s", r, dst, err);
	make_live("node1-112-1.iost", dead_pid(), 0, k3, sizeof k3);
	keep_for_exec(k3, 0, 0);
	r = log_live_recover(k3, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("kept, no log, counts: recovered", r == 0, "r %d: %s", r, err);
	expect_recovered("kept without its log", k3, dst, 0);
	check("kept without its log: the flag cleared in the crashed log",
	      log_file_read(dst, &kf, err, sizeof err) == 0 && !(kf.hdr.flags & LOG_F_LIVE_KEPT), "%s", err);
	log_file_free(&kf);
	make_live("node1-113-1.iost", getpid(), me, k4, sizeof k4);
	keep_for_exec(k4, 0, 1);
	r = log_live_recover(k4, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	check("kept, its process alive: left alone", r == 1 && exists(k4), "r %d", r);
	struct log_file lk;
	check("kept, superseded: the final log of its exec found",
	      log_file_read(k4, &lk, err, sizeof err) == 0 && log_live_superseded(&lk, fin, sizeof fin) == 1 &&
		      strstr(fin, "/job/node1-113-1.iost"), "%s", err);
	log_file_free(&lk);
	r = log_live_recover(k4, NULL, 0, 1, dst, sizeof dst, err, sizeof err);
	check("kept, its process alive, --force: recovered as a snapshot", r == 0, "r %d: %s", r, err);
	n = 0;
	eq_u64("after recovery, no live log left in the directories",
	       (uint64_t)(log_live_scan(livedir, LOG_LIVE_IN_LIVEDIR, count_path, &n) +
			  log_live_scan(jobdir, LOG_LIVE_IN_JOBDIR, count_path, &n)), 0);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return failures ? 1 : 0;
}
