/* SPDX-License-Identifier: MIT */
/*
 * `iostrata kernel`: the kernel layer on its own — system-wide or filtered, a live view of
 * per-interval deltas for every layer, the event stream and the aggregates written as a log,
 * maps pinned for an outside sampler, per-program cost; `iostrata kernel maps DIR` reads pinned
 * maps back.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "analysis/json.h"
#include "analysis/units.h"
#include "iostrata/reader.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "kernel/collect.h"
#include "kernel/mpiio.h"
#include "kernel/session.h"
#include "sys/mountinfo.h"

static volatile sig_atomic_t stop_now;
static void on_stop(int sig)
{
	(void)sig;
	stop_now = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iostrata kernel [--pid P | --cgroup PATH] [--fstype T] [--dev PATH|M:m] [--inode PATH]\n"
		"                       [--interval S] [--count N] [--duration S] [--json] [--stats]\n"
		"                       [--events FILE] [--log FILE] [--pin DIR] [--depth default|full] [--layers L,...]\n"
		"                       [--vfs] [--block-completion] [--quiet]\n"
		"                       [--ready FILE]\n"
		"       iostrata kernel maps [--json] DIR\n"
		"  system-wide (or filtered) kernel-layer view: syscall, page cache, filesystem, block, MPI-IO;\n"
		"  every S seconds (default 1) the deltas of each layer; --events FILE writes the event stream\n"
		"  and the aggregates as an iostrata log, --log FILE the aggregates only; --pin DIR pins the\n"
		"  maps under the BPF filesystem; --stats prints each program's cost (ns per event); --ready FILE\n"
		"  is created once tracing has begun (for scripts). --depth default (the default): system calls\n"
		"  (counts and bytes exact, timed 1/64 of the time), block, MPI-IO; --depth full: page cache and\n"
		"  filesystem too (timed 1/64 of the time; every call with --events); --layers picks layers by\n"
		"  name (syscall is always on). --block-completion (default depth): one block program a request\n"
		"  (page-cache I/O's requests per file, not per process; a completion the kernel skips is lost).\n");
}

/* ---- events to a temporary file, then into the log ---- */
struct ev_sink {
	FILE *f;
	int fd;
	uint64_t n, max, dropped;
};

static int on_event(void *ctx, const struct log_event *e)
{
	struct ev_sink *s = ctx;
	if (s->n >= s->max || fwrite(e, sizeof *e, 1, s->f) != 1) {
		s->dropped++;
		return 0;
	}
	s->n++;
	return 0;
}

/* ---- the live view ---- */
struct row {
	uint16_t layer;
	uint64_t dev;
	uint64_t c[LOG_NCOUNTERS];
};

struct view {
	struct row *rows;
	size_t n, cap;
};

static struct row *row_get(struct view *v, uint16_t layer, uint64_t dev)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->rows[i].layer == layer && v->rows[i].dev == dev)
			return &v->rows[i];
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 32;
		struct row *r = realloc(v->rows, cap * sizeof *r);
		if (!r)
			return NULL;
		v->rows = r;
		v->cap = cap;
	}
	struct row *r = &v->rows[v->n++];
	memset(r, 0, sizeof *r);
	r->layer = layer;
	r->dev = dev;
	return r;
}

/* Sum the `files` and `devfiles` maps per (layer, device); device totals (ino 0) of the block
 * layer only. */
static int snapshot(int files_fd, int devfiles_fd, struct view *v)
{
	struct ks_rec *recs;
	size_t n;
	v->n = 0;
	int r = ks_records_fd(files_fd, devfiles_fd, &recs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const struct ks_rec *k = &recs[i];
		if (k->key.layer == LOG_LAYER_BLOCK && k->key.ino != 0)
			continue; /* per-file block entries are also in the device totals */
		struct row *w = row_get(v, k->key.layer, k->key.dev);
		if (!w)
			break;
		for (int c = 0; c < LOG_NCOUNTERS; c++)
			if (log_counter_kinds[c] == LOG_K_SUM || log_counter_kinds[c] == LOG_K_TIME)
				w->c[c] += k->val.c[c];
	}
	free(recs);
	return 0;
}

/* The device and, when this host mounts it, its mount point. */
static void where(const struct row *r, const struct sys_mounts *mounts, char *out, size_t len)
{
	char dn[64];
	const struct sys_mount *m = sys_mount_by_dev(mounts, r->dev);
	ks_device_name(r->dev, dn, sizeof dn);
	snprintf(out, len, "%s%s%s", dn, m ? " " : "", m ? m->point : "");
}

/* counter c of the (layer, dev) row in this interval: the change since prev, or the value */
static uint64_t row_delta(const struct view *cur, const struct view *prev, unsigned layer, uint64_t dev, unsigned c)
{
	uint64_t now = 0, then = 0;
	for (size_t j = 0; j < cur->n; j++)
		if (cur->rows[j].layer == layer && cur->rows[j].dev == dev)
			now = cur->rows[j].c[c];
	for (size_t j = 0; prev && j < prev->n; j++)
		if (prev->rows[j].layer == layer && prev->rows[j].dev == dev)
			then = prev->rows[j].c[c];
	return now - then;
}

/* blk_sampled: the block rows hold the requests begun in the sampling windows only (the default
 * depth, ks.block_sampled): their counts are samples, said so in each row */
static void print_interval(const struct view *cur, const struct view *prev, double secs, int json, int first,
			   int blk_sampled)
{
	char when[32];
	time_t t = time(NULL);
	struct sys_mounts mounts; /* unreadable: the devices are named without their mount points */
	sys_mountinfo_load(NULL, &mounts);
	strftime(when, sizeof when, "%H:%M:%S", localtime(&t));
	if (json)
		printf("{\"time\":\"%s\",\"interval_s\":%.3f,\"rows\":[", when, secs);
	else
		printf("%s  %-9s %-22s %9s %10s %9s %10s  %s\n", when, "LAYER", "WHERE", "READS", "READ", "WRITES",
		       "WRITTEN", "MORE");
	int printed = 0;
	for (size_t i = 0; i < cur->n; i++) {
		const struct row *r = &cur->rows[i];
		uint64_t d[LOG_NCOUNTERS];
		const struct row *p = NULL;
		for (size_t j = 0; prev && j < prev->n; j++)
			if (prev->rows[j].layer == r->layer && prev->rows[j].dev == r->dev)
				p = &prev->rows[j];
		int any = 0;
		for (int c = 0; c < LOG_NCOUNTERS; c++) {
			/* an estimated time (default depth) may come out below the last interval's */
			d[c] = p && p->c[c] > r->c[c] ? 0 : r->c[c] - (p ? p->c[c] : 0);
			any |= d[c] != 0;
		}
		if (!any && !first)
			continue;
		char w[320], rb[32], wb[32];
		where(r, &mounts, w, sizeof w);
		if (json) {
			char qw[6 * sizeof w + 3]; /* a decoded mount point may hold quotes, backslashes */
			ana_json_quote(qw, w);
			printf("%s{\"layer\":\"%s\",\"device\":\"%u:%u\",\"where\":%s", printed ? "," : "",
			       log_layer_name(r->layer), major(r->dev), minor(r->dev), qw);
			if (r->layer == LOG_LAYER_BLOCK && blk_sampled)
				printf(",\"sampled\":true");
			for (int c = 0; c < LOG_NCOUNTERS; c++)
				if (d[c])
					printf(",\"%s\":%llu", log_counter_key(c), (unsigned long long)d[c]);
			printf("}");
		} else {
			ana_fmt_bytes(rb, sizeof rb, d[LOG_C_BYTES_READ]);
			ana_fmt_bytes(wb, sizeof wb, d[LOG_C_BYTES_WRITTEN]);
			char more[160] = "";
			if (r->layer == LOG_LAYER_PAGECACHE) {
				/* hits and misses are counted per read system call, on the syscall row of the
				 * device: with no read in the interval there is no ratio to show, not "0/0" */
				uint64_t hit = row_delta(cur, prev, LOG_LAYER_SYSCALL, r->dev, LOG_C_CACHE_HIT_READS);
				uint64_t miss = row_delta(cur, prev, LOG_LAYER_SYSCALL, r->dev, LOG_C_CACHE_MISS_READS);
				char hits[64] = "no reads";
				if (hit + miss)
					snprintf(hits, sizeof hits, "hit reads %llu/%llu", (unsigned long long)hit,
						 (unsigned long long)(hit + miss));
				snprintf(more, sizeof more, "read-in %llu pg, dirtied %llu, evicted %llu, faults %llu, %s",
					 (unsigned long long)d[LOG_C_PAGES_READ_IN], (unsigned long long)d[LOG_C_PAGES_DIRTIED],
					 (unsigned long long)d[LOG_C_PAGES_EVICTED], (unsigned long long)d[LOG_C_MMAP_FAULTS],
					 hits);
			} else if (r->layer == LOG_LAYER_BLOCK) {
				uint64_t ops = d[LOG_C_READS] + d[LOG_C_WRITES];
				snprintf(more, sizeof more, "%squeue avg %.1f us, device avg %.1f us",
					 blk_sampled ? "sampled requests only: " : "",
					 ops ? d[LOG_C_TIME_QUEUE] / 1e3 / ops : 0.0, ops ? d[LOG_C_TIME_DEVICE] / 1e3 / ops : 0.0);
			} else {
				uint64_t ops = d[LOG_C_READS] + d[LOG_C_WRITES];
				snprintf(more, sizeof more, "avg %.1f us, opens %llu, syncs %llu",
					 ops ? (d[LOG_C_TIME_READ] + d[LOG_C_TIME_WRITE]) / 1e3 / ops : 0.0,
					 (unsigned long long)d[LOG_C_OPENS], (unsigned long long)d[LOG_C_FSYNCS]);
			}
			printf("          %-9s %-22.22s %9llu %10s %9llu %10s  %s\n", log_layer_name(r->layer), w,
			       (unsigned long long)d[LOG_C_READS], rb, (unsigned long long)d[LOG_C_WRITES], wb, more);
		}
		printed++;
	}
	sys_mounts_free(&mounts);
	if (json)
		printf("]}\n");
	else if (!printed)
		printf("          (no kernel-layer I/O in this interval)\n");
	fflush(stdout);
}

/* ---- per-program cost ---- */
static void print_stats(const struct ks_session *ks, int json)
{
	if (json)
		printf("{\"programs\":[");
	else
		printf("%-28s %12s %14s %10s %8s\n", "PROGRAM", "RUNS", "RUN TIME ns", "ns/RUN", "MISSED");
	for (int i = 0; i < ks->nlinks + ks->nwin; i++) {
		struct bpf_prog_info pi;
		if (ks_link_prog_info(ks, i, &pi) < 0)
			continue;
		double per = pi.run_cnt ? (double)pi.run_time_ns / (double)pi.run_cnt : 0;
		if (json)
			printf("%s{\"name\":\"%s\",\"run_cnt\":%llu,\"run_time_ns\":%llu,\"ns_per_run\":%.1f,\"recursion_misses\":%llu}",
			       i ? "," : "", ks_prog_name(ks, i), (unsigned long long)pi.run_cnt,
			       (unsigned long long)pi.run_time_ns, per, (unsigned long long)pi.recursion_misses);
		else
			printf("%-28s %12llu %14llu %10.1f %8llu\n", ks_prog_name(ks, i), (unsigned long long)pi.run_cnt,
			       (unsigned long long)pi.run_time_ns, per, (unsigned long long)pi.recursion_misses);
	}
	if (json)
		printf("]}\n");
	fflush(stdout);
}

static int parse_layers(const char *s, uint32_t *out)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	*out = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int l = log_layer_from_name(t);
		if (l != LOG_LAYER_SYSCALL && l != LOG_LAYER_PAGECACHE && l != LOG_LAYER_FS && l != LOG_LAYER_BLOCK &&
		    l != LOG_LAYER_MPIIO)
			return -1;
		*out |= 1u << l;
	}
	return 0;
}

/* --dev takes a path (its device) or MAJOR:MINOR (12 and 20 bits, the kernel's dev_t). */
static int parse_dev(const char *s, __u64 *dev)
{
	char ma_s[16];
	const char *colon = strchr(s, ':');
	uint64_t ma, mi;
	if (colon && (size_t)(colon - s) < sizeof ma_s) {
		snprintf(ma_s, sizeof ma_s, "%.*s", (int)(colon - s), s);
		if (cli_parse_uint(ma_s, 0, 4095, &ma) == 0 && cli_parse_uint(colon + 1, 0, 1048575, &mi) == 0) {
			*dev = makedev((unsigned)ma, (unsigned)mi);
			return 0;
		}
	}
	struct stat st;
	if (stat(s, &st) < 0)
		return -errno;
	*dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	return 0;
}

int cmd_kernel_maps(int argc, char **argv);

/* Every process's mapped MPI libraries (system-wide tracing). */
static void scan_all_mpi(struct ks_session *ks)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			ks_mpiio_scan_pid(ks, atoi(de->d_name));
	closedir(d);
}

int cmd_kernel(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "maps"))
		return cmd_kernel_maps(argc - 1, argv + 1);
	struct ks_options o = {0};
	double interval = 1, duration = 0;
	long count = 0;
	int json = 0, stats = 0, quiet = 0;
	const char *events = NULL, *logf = NULL, *pin = NULL, *ready = NULL;
	pid_t pid = 0;
	o.filter.self_tgid = (uint32_t)getpid();
	struct cli_opts c;
	enum cli_arg k;
	uint64_t n;
	const char *v;
	char q[256];
	cli_opts_init(&c, "kernel", argc, argv);
	while ((k = cli_opts_next(&c)) != CLI_ARG_END) {
		if (k == CLI_ARG_OPERAND) {
			cli_bad(&c, "unexpected argument %s (kernel takes options only; or: kernel maps DIR)",
				cli_quote(q, sizeof q, c.arg));
		} else if (cli_help(&c)) {
			usage(stdout);
			return 0;
		} else if (cli_flag(&c, "--json")) {
			json = 1;
		} else if (cli_flag(&c, "--stats")) {
			stats = 1;
		} else if (cli_flag(&c, "--quiet")) {
			quiet = 1;
		} else if (cli_flag(&c, "--vfs")) {
			o.optional_vfs = 1;
		} else if (cli_flag(&c, "--block-completion")) {
			o.block_completion = 1;
		} else if (cli_uint(&c, "--pid", "a process id", 1, 4194304, &n)) {
			/* 4194304: the kernel's PID_MAX_LIMIT */
			if (c.status)
				continue;
			pid = (pid_t)n;
			if (kill(pid, 0) < 0 && errno == ESRCH)
				cli_bad(&c, "--pid %d: no such process", (int)pid);
			o.filter.by_pid = 1;
		} else if (cli_str(&c, "--cgroup", &v)) {
			struct stat st;
			if (c.status)
				continue;
			if (stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
				cli_bad(&c, "--cgroup %s: not a cgroup directory", v);
			else
				o.filter.cgroup_id = st.st_ino; /* cgroup v2: the directory's inode is the cgroup id */
		} else if (cli_str(&c, "--fstype", &v)) {
			if (!c.status)
				snprintf(o.filter.fstype, sizeof o.filter.fstype, "%s", v);
		} else if (cli_str(&c, "--dev", &v)) {
			if (!c.status && parse_dev(v, &o.filter.dev) < 0)
				cli_bad(&c, "--dev %s: not a path or MAJOR:MINOR", v);
		} else if (cli_str(&c, "--inode", &v)) {
			struct stat st;
			if (c.status)
				continue;
			if (stat(v, &st) < 0) {
				cli_bad(&c, "--inode %s: %s", v, strerror(errno));
				continue;
			}
			o.filter.ino = st.st_ino;
			o.filter.dev = st.st_dev;
		} else if (cli_seconds(&c, "--interval", 0.001, 86400, &interval)) {
		} else if (cli_seconds(&c, "--duration", 0.001, 31536000, &duration)) {
		} else if (cli_uint(&c, "--count", "a count", 1, 1000000000, &n)) {
			count = (long)n;
		} else if (cli_str(&c, "--events", &events) || cli_str(&c, "--log", &logf) || cli_str(&c, "--pin", &pin) ||
			   cli_str(&c, "--ready", &ready)) {
		} else if (cli_str(&c, "--depth", &v)) {
			int d = c.status ? 0 : ks_depth_from_name(v);
			if (d < 0)
				cli_bad(&c, "--depth %s: expected default or full", cli_quote(q, sizeof q, v));
			else
				o.depth = (enum ks_depth)d;
		} else if (cli_str(&c, "--layers", &v)) {
			if (!c.status && parse_layers(v, &o.layers) < 0)
				cli_bad(&c, "--layers %s: expected syscall,pagecache,fs,block,mpiio", v);
		} else {
			return cli_unknown(&c);
		}
	}
	if (c.status)
		return c.status;
	o.filter.events = events != NULL;
	o.filter.aggregates = pin != NULL; /* only an outside sampler reads them */

	struct ks_session ks;
	char err[1024];
	int stats_fd = -1;
	if (stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0)
			fprintf(stderr, "iostrata kernel: --stats: cannot enable kernel.bpf_stats_enabled: %s\n",
				strerror(errno));
	}
	if (ks_open(&ks, &o, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata kernel: %s\n", err);
		if (stats_fd >= 0)
			close(stats_fd);
		return 1;
	}
	if (ks.missing[0]) /* said even with --quiet: it changes what the output can show */
		fprintf(stderr, "iostrata kernel: not attached: %s\n", ks.missing);
	if (pid && ks_track_pid(&ks, pid) < 0) {
		fprintf(stderr, "iostrata kernel: cannot track pid %d\n", (int)pid);
		ks_close(&ks);
		return 1;
	}
	/* MPI libraries already mapped get their uprobes now; later ones when they are opened */
	if (ks.opt.filter.watch_mpi) {
		if (pid)
			ks_mpiio_scan_pid(&ks, pid);
		else
			scan_all_mpi(&ks);
	}
	if (pin && ks_pin(&ks, pin, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata kernel: --pin: %s\n", err);
		ks_close(&ks);
		return 1;
	}
	struct ev_sink sink = {.fd = -1, .max = 64ull << 20};
	char evtmp[4200] = "";
	if (events) {
		snprintf(evtmp, sizeof evtmp, "%s.events.%d", events, (int)getpid());
		sink.fd = open(evtmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (sink.fd < 0 || !(sink.f = fdopen(sink.fd, "w+"))) {
			fprintf(stderr, "iostrata kernel: --events %s: cannot create %s: %s\n", events, evtmp,
				strerror(errno));
			ks_close(&ks);
			return 1;
		}
		if (ks_events_open(&ks, on_event, &sink, err, sizeof err) < 0) {
			fprintf(stderr, "iostrata kernel: %s\n", err);
			ks_close(&ks);
			return 1;
		}
	}
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ready) { /* for scripts: everything is attached and the filters are set */
		int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (rfd < 0) {
			fprintf(stderr, "iostrata kernel: --ready %s: %s\n", ready, strerror(errno));
			ks_close(&ks);
			return 1;
		}
		close(rfd);
	}
	if (!quiet)
		fprintf(stderr, "iostrata kernel: tracing %s; Ctrl-C to stop\n",
			pid ? "the process tree" : o.filter.cgroup_id ? "the cgroup" : "the whole system");
	if (!quiet && ks.block_sampled && interval > 0)
		fprintf(stderr, "iostrata kernel: the block rows count the requests begun in the sampling windows "
				"only (their latency); the log's device totals are /proc/diskstats' (--depth full "
				"counts every request)\n");
	if (!quiet && ks.block_one)
		fprintf(stderr, "iostrata kernel: block requests of page-cache I/O (writeback, read-in) are kept per "
				"file, not per process (--depth full records the process)\n");

	int files_fd = ks_map_fd(&ks, "files"), devfiles_fd = ks_map_fd(&ks, "devfiles");
	struct view cur = {0}, prev = {0};
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), wall0 = now_ns(CLOCK_REALTIME), last = t0;
	long intervals = 0;
	int first = 1;
	while (!stop_now) {
		uint64_t next = last + (uint64_t)(interval * 1e9);
		uint64_t end = duration > 0 ? t0 + (uint64_t)(duration * 1e9) : UINT64_MAX;
		for (;;) {
			uint64_t now = now_ns(CLOCK_MONOTONIC);
			if (stop_now || now >= next || now >= end)
				break;
			uint64_t wait = (next < end ? next : end) - now;
			int ms = (int)(wait / 1000000) + 1;
			if (ms > 100)
				ms = 100;
			if (ks.rb)
				ks_events_poll(&ks, ms); /* events, and MPI libraries to probe */
			else
				usleep((useconds_t)ms * 1000);
			if (pid && kill(pid, 0) < 0 && errno == ESRCH) {
				stop_now = 1;
				break;
			}
		}
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (!quiet) {
			snapshot(files_fd, devfiles_fd, &cur);
			print_interval(&cur, first ? NULL : &prev, (double)(now - last) / 1e9, json, 0, ks.block_sampled);
			if (stats)
				print_stats(&ks, json);
			struct view t = prev;
			prev = cur;
			cur = t;
			first = 0;
		}
		last = now;
		intervals++;
		if ((count && intervals >= count) || (duration > 0 && now >= t0 + (uint64_t)(duration * 1e9)))
			break;
	}
	if (sink.f)
		while (ks_events_poll(&ks, 0) > 0)
			;
	free(cur.rows);
	free(prev.rows);
	if (stats && quiet)
		print_stats(&ks, json);

	int rc = 0;
	struct ks_log_meta m = {.pid = pid, .exe = "", .job = "", .start_ns = t0, .end_ns = now_ns(CLOCK_MONOTONIC),
				.start_wall_ns = wall0, .exit_status = -1, .argc = argc, .argv = argv};
	const char *outs[2] = {logf, events};
	for (int k = 0; k < 2; k++) {
		if (!outs[k])
			continue;
		if (k == 1)
			fflush(sink.f);
		if (ks_write_log(&ks, outs[k], &m, k == 1 ? sink.fd : -1, k == 1 ? sink.n : 0, sink.dropped, err,
				 sizeof err) < 0) {
			fprintf(stderr, "iostrata kernel: %s\n", err);
			rc = 1;
		}
	}
	uint64_t st[KS_NSTATS];
	ks_read_stats(&ks, st);
	if (events && !quiet)
		fprintf(stderr, "iostrata kernel: %llu events written, %llu dropped\n", (unsigned long long)sink.n,
			(unsigned long long)(st[KS_STAT_EVENT_DROPS] + sink.dropped));
	if (sink.f) {
		fclose(sink.f);
		unlink(evtmp);
	}
	ks_close(&ks);
	if (stats_fd >= 0)
		close(stats_fd);
	return rc;
}
