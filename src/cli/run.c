/* SPDX-License-Identifier: MIT */
/*
 * `iostrata run [-o DIR] [--job ID] [options] -- CMD ARGS...`: runs CMD with the capture library
 * preloaded, so CMD, its children, exec'd programs and MPI ranks each write a log into one job
 * directory. Afterwards it finalizes the logs of processes that were killed, prints a short
 * summary on stderr (never on stdout, which belongs to CMD) and exits with CMD's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "analysis/job.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "log/jobdir.h"
#include "iostrata/reader.h"
#include "kernel/collect.h"
#include "kernel/session.h"
#include "capture/agg_shm.h"
#include "sys/elfneeds.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata run [-o DIR] [--job ID] [--max-records N] [--exclude PREFIX]... "
		   "[--include PREFIX]...\n"
		   "                    [--trace [--trace-mb N]] [--kernel[=full] [--kernel-events]] [--mount SRC:MNT]...\n"
		   "                    [--aggregate PATTERN[:threshold=64K,small=512,buffer=32M,when=auto]] [-q] [--] CMD [ARGS...]\n"
		   "  run CMD with the capture library preloaded; every process of it writes a log into DIR\n"
		   "  -o DIR               job directory (default ./iostrata-JOB)\n"
		   "  --job ID             job id (default: the scheduler's, else HOST-DATE-TIME-PID)\n"
		   "  --max-records N      records per process (one per file and layer), 16 to 1048576 (default 4096)\n"
		   "  --exclude PREFIX     do not record paths under PREFIX (repeatable)\n"
		   "  --include PREFIX     record paths under PREFIX even where excluded (repeatable)\n"
		   "  --trace              also record every call (runs of calls), for timeline and the report\n"
		   "  --trace-mb N         trace area per process in MiB, 1 to 65536 (default 256; implies --trace)\n"
		   "  --kernel             also trace the kernel layer (eBPF; root) at its default depth: system calls\n"
		   "                       (timed 1/64 of the time), file identity, block layer, MPI-IO\n"
		   "  --kernel=full        every kernel layer (page cache, filesystem too); timed 1/64 of the time,\n"
		   "                       every call with --kernel-events\n"
		   "  --kernel-events      the kernel layer's event stream too (implied by --trace --kernel)\n"
		   "  --mount SRC:MNT      serve SRC at MNT through the mount-point monitor while CMD runs (root)\n"
		   "  --aggregate SPEC     buffer small writes to files matching PATTERN (docs/AGGREGATION.md)\n"
		   "  -q, --quiet          no summary on stderr\n"
		   "exit status: CMD's (128+N when killed by signal N); 2 for bad options, 126/127 when CMD cannot run\n");
}

static int lib_path(char *buf, size_t len)
{
	const char *e = getenv("IOSTRATA_LIB");
	if (e && *e) {
		snprintf(buf, len, "%s", e);
		return access(buf, R_OK);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	const char *cands[] = {"%s/libiostrata.so", "%s/../lib/iostrata/libiostrata.so", "%s/../lib/libiostrata.so"};
	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
		snprintf(buf, len, cands[i], exe);
		if (access(buf, R_OK) == 0) {
			char *rp = realpath(buf, NULL);
			if (rp) {
				snprintf(buf, len, "%s", rp);
				free(rp);
			}
			return 0;
		}
	}
	return -1;
}

static int mkdir_p(const char *dir)
{
	char tmp[CLI_PATH];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* The TSC rate, measured once here so every captured process converts ticks to ns with the
 * same slope from its first microsecond (see calibrate_start in the library). */
static unsigned long long tsc_hz(void)
{
	struct timespec a, b, d = {0, 20 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t t0 = __rdtsc();
	nanosleep(&d, NULL);
	uint64_t t1 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	return ns > 0 ? (unsigned long long)((double)(t1 - t0) * 1e9 / ns) : 0;
}

static const char *scheduler_job(void)
{
	static const char *const vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID", NULL};
	for (int i = 0; vars[i]; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return getenv(vars[i]);
	return NULL;
}

static void human(char *buf, size_t len, double v)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* 1 when the ELF file at path has no program interpreter (PT_INTERP): a statically linked program,
 * which never loads the preload library. 0 for a dynamic program, a script or anything unreadable. */
static int is_static_elf(const char *path)
{
	unsigned char h[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), st = 0;
	if (fd < 0)
		return 0;
	if (pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && !memcmp(h, "\177ELF", 4) && h[4] == 2 /* 64-bit */ &&
	    h[5] == 1 /* little-endian */) {
		uint64_t phoff;
		uint16_t phentsize, phnum, type;
		memcpy(&type, h + 16, 2);
		memcpy(&phoff, h + 32, 8);
		memcpy(&phentsize, h + 54, 2);
		memcpy(&phnum, h + 56, 2);
		st = type == 2 /* ET_EXEC */ || type == 3 /* ET_DYN: static-pie too */;
		for (uint16_t k = 0; st && k < phnum && phentsize >= 4 && k < 256; k++) {
			uint32_t pt;
			if (pread(fd, &pt, 4, (off_t)(phoff + (uint64_t)k * phentsize)) != 4)
				st = 0;
			else if (pt == 3 /* PT_INTERP */)
				st = 0;
		}
	}
	close(fd);
	return st;
}

/* CMD as execvp finds it: a path with a '/' as given, else the first executable on PATH. */
static int find_command(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/'))
		return snprintf(out, len, "%s", cmd) < (int)len ? 0 : -1;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *e = strchrnul(p, ':');
		snprintf(out, len, "%.*s/%s", (int)(e - p), e == p ? "." : p, cmd);
		if (e == p)
			snprintf(out, len, "./%s", cmd);
		if (access(out, X_OK) == 0)
			return 0;
		p = *e ? e + 1 : e;
	}
	return -1;
}

/* A companion library (libiostrata-mpich.so, -ompi.so, -hdf5.so) beside the preload library
 * lib: 0, or -1 when it was not built. */
static int companion_path(const char *lib, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(lib, '/');
	if (!slash || snprintf(out, len, "%.*s/%s", (int)(slash - lib), lib, name) >= (int)len)
		return -1;
	return access(out, R_OK);
}

static long plain_pread(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}

/* The SYS_NEEDS_* bits of the program at path (its DT_NEEDED), as cap_exec_env decides for every
 * exec below. */
static unsigned command_needs(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned needs = sys_elf_needs(fd, plain_pread);
	close(fd);
	return needs;
}

/* The summary on stderr: the job through the same pipeline as `iostrata report` (its layer
 * totals, so a figure here is the report's), a line per layer that did something. */
static void print_summary(const char *dir, const char *job, const char *cmd, int quiet)
{
	struct ana_job j;
	char err[1024], exe[CLI_PATH];
	if (quiet)
		return;
	int loaded = ana_job_load(&j, &dir, 1, ANA_JOB_NO_FINDINGS, err, sizeof err) == 0;
	size_t nprocs = loaded ? j.prof.nprocs - j.prof.nkernel_procs : 0, live = 0;
	/* a static program never loads the library: say so rather than nothing */
	if (!nprocs && find_command(cmd, exe, sizeof exe) == 0 && is_static_elf(exe))
		fprintf(stderr, "iostrata: %s is statically linked: the preload library cannot see its calls, so it "
				"wrote no log%s\n", exe,
			loaded && j.prof.kernel_only ? "; the kernel layer saw its system calls"
						     : "; run it with --kernel (root) to capture its system calls");
	if (!loaded)
		return;
	const struct ana_profile *p = &j.prof;
	for (size_t k = 0; k < p->nprocs; k++)
		live += !p->procs[k].kernel_only && !p->procs[k].finished;
	if (!nprocs && !p->kernel_only) {
		ana_job_free(&j);
		return;
	}
	fprintf(stderr, "iostrata: job %s: %zu process%s", job, nprocs, nprocs == 1 ? "" : "es");
	if (live)
		fprintf(stderr, " (%zu still running)", live);
	if (p->nkernel_procs)
		fprintf(stderr, ", %zu seen by the kernel layer only", p->nkernel_procs);
	fprintf(stderr, "\n");
	for (unsigned l = LOG_LAYER_POSIX; l <= LOG_LAYER_MAX; l++) {
		const struct ana_layer *L = &p->layers[l];
		const uint64_t *c = L->c;
		if (l > LOG_LAYER_STDIO && !L->nrecords)
			continue;
		if (l == LOG_LAYER_PAGECACHE) {
			const uint64_t *sc = p->layers[LOG_LAYER_SYSCALL].c;
			fprintf(stderr, "iostrata:   %-9s %llu pages read in, %llu dirtied, %llu evicted; reads %llu hit / %llu missed\n",
				"pagecache", (unsigned long long)c[LOG_C_PAGES_READ_IN],
				(unsigned long long)c[LOG_C_PAGES_DIRTIED], (unsigned long long)c[LOG_C_PAGES_EVICTED],
				(unsigned long long)sc[LOG_C_CACHE_HIT_READS], (unsigned long long)sc[LOG_C_CACHE_MISS_READS]);
			continue;
		}
		char br[32], bw[32];
		human(br, sizeof br, (double)c[LOG_C_BYTES_READ]);
		human(bw, sizeof bw, (double)c[LOG_C_BYTES_WRITTEN]);
		fprintf(stderr, "iostrata:   %-9s %llu reads (%s), %llu writes (%s), %llu metadata ops, %.3f s in I/O\n",
			log_layer_name(l), (unsigned long long)c[LOG_C_READS], br, (unsigned long long)c[LOG_C_WRITES], bw,
			(unsigned long long)L->meta_ops,
			(double)(c[LOG_C_TIME_READ] + c[LOG_C_TIME_WRITE] + c[LOG_C_TIME_META]) / 1e9);
	}
	if (j.nunreadable + j.ndamaged)
		fprintf(stderr, "iostrata: %s%s\n", j.first_problem,
			j.nunreadable + j.ndamaged > 1 ? " (and other logs: see the report's warnings)" : "");
	fprintf(stderr, "iostrata: logs in %s — see: iostrata report %s\n", dir, dir);
	ana_job_free(&j);
}

/* Logs left live by processes of the job that are gone now: killed before they could finish. */
static void finish_killed(const char *dir, pid_t child, int child_sig)
{
	DIR *d = opendir(dir);
	char host[256] = "";
	if (!d)
		return;
	gethostname(host, sizeof host - 1);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 10 || strcmp(de->d_name + l - 10, ".iost.live"))
			continue;
		char link[CLI_PATH], target[CLI_PATH], dst[CLI_PATH], err[1024];
		snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		struct log_file lf;
		if (log_file_read(target, &lf, err, sizeof err) < 0)
			continue;
		int sig = lf.hdr.pid == child ? child_sig : 0;
		/* a job directory that ranks on several nodes share holds their links too: another
		 * node's live logs are not this node's to finish */
		int here = !strcmp(log_file_string(&lf, lf.hdr.host), host);
		log_file_free(&lf);
		if (!here)
			continue;
		int r = log_live_recover(target, NULL, sig, 0, dst, sizeof dst, err, sizeof err);
		if (r == 0)
			fprintf(stderr, "iostrata: a process of the job did not finish; its counters are in %s\n", dst);
		else if (r < 0 && r != -ENOENT) /* -ENOENT: its process finished it meanwhile (another run's) */
			fprintf(stderr, "iostrata: %s\n", err);
	}
	closedir(d);
}

/* ---- the kernel layer of a run (--kernel) ---- */
struct kernel_run {
	int on, quiet;
	struct ks_session ks;
	struct {
		FILE *f;
		int fd;
		uint64_t n, dropped;
		char path[CLI_PATH];
	} sink;
	uint64_t start_ns, start_wall_ns;
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int kernel_event(void *ctx, const struct log_event *e)
{
	struct kernel_run *kr = ctx;
	if (fwrite(e, sizeof *e, 1, kr->sink.f) != 1)
		kr->sink.dropped++;
	else
		kr->sink.n++;
	return 0;
}

static void kernel_start(struct kernel_run *kr, enum ks_depth depth, int events, int quiet)
{
	struct ks_options o = {0};
	o.depth = depth;
	char err[1024];
	o.filter.by_pid = 1;
	o.filter.self_tgid = (uint32_t)getpid();
	o.filter.events = (uint32_t)events;
	kr->quiet = quiet;
	if (ks_open(&kr->ks, &o, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata run: kernel layer off: %s; the user layer carries on\n", err);
		return;
	}
	if (kr->ks.missing[0]) /* said even with -q: a layer missing changes what the report can show */
		fprintf(stderr, "iostrata run: kernel layer: not attached: %s\n", kr->ks.missing);
	if (events) {
		snprintf(kr->sink.path, sizeof kr->sink.path, "/tmp/iostrata-events.XXXXXX");
		kr->sink.fd = mkostemp(kr->sink.path, O_CLOEXEC);
		if (kr->sink.fd >= 0) {
			unlink(kr->sink.path);
			kr->sink.f = fdopen(kr->sink.fd, "w+");
		}
		if (!kr->sink.f || ks_events_open(&kr->ks, kernel_event, kr, err, sizeof err) < 0) {
			fprintf(stderr, "iostrata run: kernel events off: %s\n", kr->sink.f ? err : strerror(errno));
			if (kr->sink.f)
				fclose(kr->sink.f);
			kr->sink.f = NULL;
		}
	}
	kr->start_ns = clock_ns(CLOCK_MONOTONIC);
	kr->start_wall_ns = clock_ns(CLOCK_REALTIME);
	kr->on = 1;
}

static void kernel_finish(struct kernel_run *kr, const char *dir, const char *host, const char *job, int argc,
			  char **argv, pid_t pid, int st, const char *lib)
{
	char dst[CLI_PATH], err[1024], live[CLI_PATH];
	/* The capture library's own I/O is not the program's: its logs, live files and its own load. */
	const char *live_env = getenv("IOSTRATA_LIVE_DIR");
	if (live_env && *live_env)
		snprintf(live, sizeof live, "%s", live_env);
	else
		snprintf(live, sizeof live, "/dev/shm/iostrata-%u", (unsigned)getuid());
	const char *exclude[] = {dir, live, lib, NULL};
	if (kr->sink.f) {
		while (ks_events_poll(&kr->ks, 0) > 0)
			;
		fflush(kr->sink.f);
	}
	snprintf(dst, sizeof dst, "%s/kernel-%s-%d.iost", dir, host, (int)pid);
	struct ks_log_meta m = {.pid = pid, .exe = argv[0], .job = job, .outdir = dir, .argc = argc, .argv = argv,
				.start_ns = kr->start_ns, .end_ns = clock_ns(CLOCK_MONOTONIC),
				.start_wall_ns = kr->start_wall_ns,
				.exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				.term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0, .exclude = exclude};
	if (ks_write_log(&kr->ks, dst, &m, kr->sink.f ? kr->sink.fd : -1, kr->sink.n, kr->sink.dropped, err,
			 sizeof err) < 0)
		fprintf(stderr, "iostrata run: kernel layer: %s\n", err);
	else if (!kr->quiet) {
		uint64_t stats[KS_NSTATS];
		ks_read_stats(&kr->ks, stats);
		uint64_t lost = stats[KS_STAT_EVENT_DROPS] + kr->sink.dropped;
		if (lost || stats[KS_STAT_FILES_FULL] || stats[KS_STAT_PATHS_FULL])
			fprintf(stderr, "iostrata run: kernel layer lost %llu events, %llu file aggregates, %llu paths "
					"(tables or ring buffer full)\n",
				(unsigned long long)lost, (unsigned long long)stats[KS_STAT_FILES_FULL],
				(unsigned long long)stats[KS_STAT_PATHS_FULL]);
	}
	if (kr->sink.f)
		fclose(kr->sink.f);
	ks_close(&kr->ks);
	kr->on = 0;
}

/* ---------- what killed processes left in the shared ring ---------- */

static int cli_fd_for(struct agg_shm *s, uint32_t i, int *own)
{
	*own = 0;
	int fd = open(s->files[i].path, O_WRONLY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != s->files[i].dev ||
			(uint64_t)st.st_ino != s->files[i].ino)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

static ssize_t cli_pwritev(struct agg_shm *s, uint32_t i, int fd, const struct iovec *v, int n, off_t off)
{
	(void)s, (void)i;
	return pwritev(fd, v, n, off);
}

/* The job's ring is created and allocated here, before CMD starts (the seed's I/O process set up
 * before the application), and this process stays attached while CMD runs: the ring lives as
 * long as the job, whatever processes come and go, and no process of the job pays for creating it.
 * At the end this process leaves it last: what killed processes left is written back, the pack
 * file committed and the ring removed. */
static struct agg_shm *agg_ring;
static char agg_name[256];
static struct agg_io agg_cli_io = {.fd_for = cli_fd_for, .open = open, .close = close, .writev = writev,
				   .pread = pread, .fsync = fsync, .pwritev = cli_pwritev, .stall = NULL};

static void agg_start(const char *spec, const char *job, const char *outdir)
{
	struct agg_spec sp;
	char why[200], pack[CLI_PATH + 256], host[128] = "host";
	if (agg_spec_parse(spec, &sp, why, sizeof why) < 0)
		return;
	agg_shm_name(agg_name, sizeof agg_name, job);
	gethostname(host, sizeof host - 1);
	snprintf(pack, sizeof pack, "%s/agg-%s.pack", sp.packdir[0] ? sp.packdir : outdir, host);
	agg_ring = agg_shm_attach(agg_name, sp.buffer, ftruncate, sp.packed ? pack : NULL, &agg_cli_io);
	if (!agg_ring) /* the processes of the job create it themselves */
		fprintf(stderr, "iostrata run: shared aggregation buffer %s: %s\n", agg_name, strerror(errno));
}

static void agg_leftovers(const char *job, int quiet)
{
	if (!agg_ring) { /* not ours: a process of the job made it; clean up after killed ones */
		int r;
		agg_shm_name(agg_name, sizeof agg_name, job);
		r = agg_shm_cleanup(agg_name, &agg_cli_io);
		if (r > 0 && !quiet)
			fprintf(stderr, "iostrata: wrote back the shared aggregation buffer of killed processes (%s)\n", agg_name);
		else if (r < 0)
			fprintf(stderr, "iostrata: shared aggregation buffer %s: %s\n", agg_name, strerror(-r));
		return;
	}
	int left = agg_shm_used(agg_ring) != 0;
	agg_shm_detach(agg_ring, agg_name, &agg_cli_io);
	agg_ring = NULL;
	if (left && !quiet)
		fprintf(stderr, "iostrata: wrote back the shared aggregation buffer of killed processes (%s)\n", agg_name);
}

#define MAX_MOUNTS 8

/* 1, with one line said, when dir already holds logs of another job than job: two jobs in one
 * directory would be reported as one. Logs of the same job (a scheduler's job steps, or --job given
 * again) join it. */
static int other_job(const char *dir, const char *job)
{
	struct log_scan s;
	char err[512];
	int other = 0;
	if (log_scan_args(&dir, 1, &s, err, sizeof err) < 0)
		return 0;
	for (size_t k = 0; k < s.npaths && !other; k++) {
		struct log_file lf;
		if (log_file_read(s.paths[k], &lf, err, sizeof err) < 0)
			continue;
		const char *id = log_file_string(&lf, lf.hdr.job);
		if (strcmp(id, job)) {
			fprintf(stderr, "iostrata run: %s already holds the logs of job '%s' (%zu log%s): give another -o "
					"DIR, remove them, or add to that job with --job '%s'\n",
				dir, id, s.npaths, s.npaths == 1 ? "" : "s", id);
			other = 1;
		}
		log_file_free(&lf);
		break; /* one log says whose directory it is */
	}
	log_scan_free(&s);
	return other;
}

int cmd_run(int argc, char **argv)
{
	static char msrc[MAX_MOUNTS][CLI_PATH], mmnt[MAX_MOUNTS][CLI_PATH];
	pid_t mpid[MAX_MOUNTS];
	int nmounts = 0;
	const char *out = NULL, *job = NULL;
	char excl[CLI_PATH] = "", incl[CLI_PATH] = "", maxrec[24] = "", trace_mb[24] = "";
	const char *aggregate = NULL;
	int quiet = 0, kernel = 0, kernel_events = 0, trace = 0, i;
	enum ks_depth kernel_depth = KS_DEPTH_DEFAULT;
	struct cli_opts o;
	enum cli_arg k;
	cli_opts_init(&o, "run", argc, argv);
	while ((k = cli_opts_next(&o)) == CLI_ARG_OPTION) {
		const char *v = NULL;
		uint64_t n;
		if (cli_str(&o, "-o", &out) || cli_job(&o, "--job", &job)) {
		} else if (cli_uint(&o, "--max-records", "a number", 16, 1u << 20, &n)) {
			snprintf(maxrec, sizeof maxrec, "%llu", (unsigned long long)n);
		} else if (cli_str(&o, "--exclude", &v) || cli_str(&o, "--include", &v)) {
			char *dst = o.arg[2] == 'e' ? excl : incl;
			size_t l = strlen(dst);
			if (v)
				snprintf(dst + l, CLI_PATH - l, "%s%s", l ? ":" : "", v);
		} else if (cli_flag(&o, "-q") || cli_flag(&o, "--quiet")) {
			quiet = 1;
		} else if (cli_flag(&o, "--kernel")) {
			kernel = 1;
		} else if (!strncmp(o.arg, "--kernel=", 9)) {
			int d = ks_depth_from_name(o.arg + 9);
			char q[256];
			if (d < 0)
				cli_bad(&o, "--kernel: depth %s is not default or full", cli_quote(q, sizeof q, o.arg + 9));
			else
				kernel = 1, kernel_depth = (enum ks_depth)d;
		} else if (cli_flag(&o, "--kernel-events")) {
			kernel = kernel_events = 1;
		} else if (cli_str(&o, "--mount", &v)) {
			const char *colon = v ? strchr(v, ':') : NULL;
			char q[256];
			if (!v)
				continue;
			if (!colon || colon == v || !colon[1] || nmounts == MAX_MOUNTS) {
				cli_bad(&o, "--mount wants SRC:MNT (at most %d), not %s", MAX_MOUNTS, cli_quote(q, sizeof q, v));
				continue;
			}
			snprintf(msrc[nmounts], sizeof msrc[nmounts], "%.*s", (int)(colon - v), v);
			snprintf(mmnt[nmounts], sizeof mmnt[nmounts], "%s", colon + 1);
			nmounts++;
		} else if (cli_str(&o, "--aggregate", &aggregate)) {
			struct agg_spec sp;
			char why[200], q[256];
			if (aggregate && agg_spec_parse(aggregate, &sp, why, sizeof why) < 0)
				cli_bad(&o, "--aggregate %s: %s", cli_quote(q, sizeof q, aggregate), why);
		} else if (cli_flag(&o, "--trace")) {
			trace = 1;
		} else if (cli_uint(&o, "--trace-mb", "a size in MiB", 1, 65536, &n)) {
			snprintf(trace_mb, sizeof trace_mb, "%llu", (unsigned long long)n);
			trace = 1;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	if (k != CLI_ARG_OPERAND) {
		usage(stderr);
		return 2;
	}
	i = o.i;
	char lib[CLI_PATH];
	if (lib_path(lib, sizeof lib) < 0) {
		fprintf(stderr, "iostrata run: cannot find libiostrata.so next to the iostrata binary (set IOSTRATA_LIB)\n");
		return 2;
	}
	char jobbuf[256], host[128] = "host";
	gethostname(host, sizeof host - 1);
	if (!job)
		job = scheduler_job();
	if (!job) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		snprintf(jobbuf, sizeof jobbuf, "%s-%04d%02d%02d-%02d%02d%02d-%d", host, tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
		job = jobbuf;
	}
	char outbuf[CLI_PATH], absout[CLI_PATH];
	if (!out) {
		snprintf(outbuf, sizeof outbuf, "iostrata-%s", job);
		out = outbuf;
	}
	if (out[0] != '/') {
		char cwd[CLI_PATH];
		if (!getcwd(cwd, sizeof cwd))
			snprintf(cwd, sizeof cwd, ".");
		snprintf(absout, sizeof absout, "%.2000s/%.2000s", cwd, out);
	} else {
		snprintf(absout, sizeof absout, "%s", out);
	}
	struct stat before;
	int existed = stat(absout, &before) == 0;
	if (existed && other_job(absout, job))
		return 2;
	int outdir_ok = mkdir_p(absout) == 0 && access(absout, W_OK | X_OK) == 0;
	if (!outdir_ok) {
		setenv("IOSTRATA_OUT_WARNED", "1", 1); /* one warning, not one per process */
		fprintf(stderr, "iostrata run: warning: cannot write to %s (%s); the program runs anyway and its "
				"counters stay in the live directory (iostrata recover -o DIR)\n",
			absout, strerror(errno));
	}

	char preload[5 * CLI_PATH];
	const char *old = getenv("LD_PRELOAD");
	/* a sanitizer build of the library needs its runtime loaded first (make test-san) */
	const char *san = getenv("IOSTRATA_SAN_RUNTIME");
	char mpilib[CLI_PATH], ompilib[CLI_PATH], h5lib[CLI_PATH], cmdpath[CLI_PATH];
	int mpi = !kernel && companion_path(lib, "libiostrata-mpich.so", mpilib, sizeof mpilib) == 0;
	int ompi = !kernel && companion_path(lib, "libiostrata-ompi.so", ompilib, sizeof ompilib) == 0;
	int h5 = companion_path(lib, "libiostrata-hdf5.so", h5lib, sizeof h5lib) == 0;
	unsigned needs = find_command(argv[i], cmdpath, sizeof cmdpath) == 0 ? command_needs(cmdpath) : 0;
	/* the HDF5 companion maps no HDF5 and needs none (its symbols are found when called): every
	 * image gets it, so h5py's dlopen'ed libhdf5 is seen and no exec needs to look */
	int cmd_mpi = mpi && (needs & SYS_NEEDS_MPICH), cmd_h5 = h5;
	int cmd_ompi = ompi && (needs & SYS_NEEDS_OMPI);
	snprintf(preload, sizeof preload, "%s%s%s%s%s%s%s%s%s%s%s", san && *san ? san : "", san && *san ? ":" : "", lib,
		 cmd_mpi ? ":" : "", cmd_mpi ? mpilib : "", cmd_ompi ? ":" : "", cmd_ompi ? ompilib : "",
		 cmd_h5 ? ":" : "", cmd_h5 ? h5lib : "", old && *old ? ":" : "", old && *old ? old : "");
	/* every exec below adds a companion for a program that links its library and drops it
	 * otherwise (cap_exec_env); under --kernel the MPI-IO uprobes record that layer instead */
	if (mpi)
		setenv("IOSTRATA_MPI_LIB", mpilib, 1);
	else
		unsetenv("IOSTRATA_MPI_LIB");
	if (ompi)
		setenv("IOSTRATA_OMPI_LIB", ompilib, 1);
	else
		unsetenv("IOSTRATA_OMPI_LIB");
	char hz[32];
	snprintf(hz, sizeof hz, "%llu", tsc_hz());
	setenv("LD_PRELOAD", preload, 1);
	setenv("IOSTRATA_OUT", absout, 1);
	setenv("IOSTRATA_JOB", job, 1);
	setenv("IOSTRATA_TSC_HZ", hz, 1);
	/* the kernel layer sees every image's system calls: the library need not look for static ones */
	if (kernel)
		setenv("IOSTRATA_KERNEL", "1", 1);
	if (maxrec[0])
		setenv("IOSTRATA_MAX_RECORDS", maxrec, 1);
	if (excl[0])
		setenv("IOSTRATA_EXCLUDE", excl, 1);
	if (incl[0])
		setenv("IOSTRATA_INCLUDE", incl, 1);
	if (aggregate) {
		setenv("IOSTRATA_AGGREGATE", aggregate, 1);
		agg_start(aggregate, job, absout);
	}
	if (trace) {
		setenv("IOSTRATA_TRACE", "1", 1);
		if (trace_mb[0])
			setenv("IOSTRATA_TRACE_MB", trace_mb, 1);
		/* the kernel layer of a traced job records its events too (same clock, same tids) */
		if (kernel)
			kernel_events = 1;
	}

	/* The mount-point monitors serve before CMD starts; a mount that cannot be made stops the
	 * run: CMD would work in an empty directory instead of SRC. */
	for (int m = 0; m < nmounts; m++) {
		mpid[m] = cli_mount_start(msrc[m], mmnt[m], absout, job, trace, argc - i, argv + i);
		if (mpid[m] < 0) {
			fprintf(stderr, "iostrata run: --mount %s:%s failed (above); %s not started\n", msrc[m], mmnt[m],
				argv[i]);
			while (m-- > 0)
				cli_mount_finish(mpid[m]);
			return 1;
		}
	}

	/* The kernel layer is loaded before CMD starts; CMD waits at a gate until its pid is in the
	 * traced set, so not one of its system calls is missed. Without privileges: one line, and the
	 * user layer carries on. */
	struct kernel_run kr = {0};
	if (kernel)
		kernel_start(&kr, kernel_depth, kernel_events, quiet);
	int gate[2] = {-1, -1};
	if (kr.on && pipe2(gate, O_CLOEXEC) < 0) {
		fprintf(stderr, "iostrata run: pipe: %s\n", strerror(errno));
		return 1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "iostrata run: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (gate[0] >= 0) {
			char c;
			close(gate[1]);
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			close(gate[0]);
		}
		execvp(argv[i], argv + i);
		int e = errno;
		fprintf(stderr, "iostrata: %s: %s\n", argv[i], e == ENOENT ? "command not found" : strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	/* like a shell waiting for a foreground job: the terminal's signals are for the program */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (gate[1] >= 0) {
		close(gate[0]);
		if (ks_track_pid(&kr.ks, pid) < 0)
			fprintf(stderr, "iostrata run: kernel layer: cannot trace pid %d\n", (int)pid);
		if (write(gate[1], "g", 1) < 0)
			fprintf(stderr, "iostrata run: cannot start %s: %s\n", argv[i], strerror(errno));
		close(gate[1]);
	}
	int st = 0;
	if (kr.on && kr.ks.rb) {
		/* serve the ring buffers while CMD runs: events, and MPI libraries to probe */
		for (;;) {
			pid_t w = waitpid(pid, &st, WNOHANG);
			if (w == pid || (w < 0 && errno != EINTR))
				break;
			ks_events_poll(&kr.ks, 100);
		}
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (kr.on)
		kernel_finish(&kr, absout, host, job, argc - i, argv + i, pid, st, lib);
	for (int m = 0; m < nmounts; m++)
		/* with DIR unwritable the monitor said where its counters stay (its status is 1 then) */
		if (cli_mount_finish(mpid[m]) != 0 && outdir_ok)
			fprintf(stderr, "iostrata run: the monitor of %s did not end cleanly\n", mmnt[m]);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	if (getenv("IOSTRATA_AGGREGATE"))
		agg_leftovers(job, quiet);
	finish_killed(absout, pid, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (!existed && WIFEXITED(st) && (code == 127 || code == 126))
		rmdir(absout); /* CMD never started: leave no empty job directory behind (fails if not empty) */
	print_summary(absout, job, argv[i], quiet);
	if (aggregate && !quiet) {
		struct agg_spec sp;
		char why[200];
		/* packed placement leaves the aggregated files short until unpack: never silently */
		if (agg_spec_parse(aggregate, &sp, why, sizeof why) == 0 && sp.packed)
			fprintf(stderr, "iostrata: placement=packed: what went through the shared buffer is in the pack "
					"file%s of %s, not yet in the files; rebuild them with: iostrata unpack %s\n",
				"s", sp.packdir[0] ? sp.packdir : absout, sp.packdir[0] ? sp.packdir : absout);
	}
	return code;
}
