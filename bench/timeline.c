/* SPDX-License-Identifier: MIT */
/*
 * Merge + Perfetto export throughput (issue 4's target: >= 2M events/s on one core). Builds, in
 * memory, the logs of a traced job the size of a real one: THREADS threads of one process, each
 * making CALLS single 4 KiB writes at random offsets (no runs: the merge's worst case), and a
 * kernel log holding, for every call, the syscall event inside it and a page-cache event inside
 * that. Then times tl_build_from (the merge and nesting) and tl_export_perfetto (the JSON writer)
 * on them, best of REPS, and prints one line per phase and a last line with the events per
 * second of the two together.
 *
 *   timeline DIR [THREADS CALLS REPS]      (defaults 4 250000 3; DIR receives the JSON)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/timeline.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t add_str(struct log_file *lf, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;
	if (lf->strings_size + n > *cap) {
		*cap = (*cap + n) * 2;
		lf->strings = realloc(lf->strings, *cap);
		if (!lf->strings)
			exit(1);
	}
	memcpy(lf->strings + lf->strings_size, s, n);
	lf->strings_size += (uint32_t)n;
	return lf->strings_size - (uint32_t)n;
}

static void header(struct log_file *lf, size_t *cap, int32_t pid)
{
	memset(lf, 0, sizeof *lf);
	*cap = 0;
	lf->strings_size = 1;
	lf->strings = calloc(1, 1);
	lf->hdr.pid = pid;
	lf->hdr.ppid = 1;
	lf->hdr.rank = -1;
	lf->hdr.host = add_str(lf, cap, "node01");
	lf->hdr.exe = add_str(lf, cap, "/usr/bin/bench-writer");
	lf->hdr.start_ns = 1000000000ull;
	lf->path = strdup("bench.iost");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: timeline DIR [THREADS CALLS REPS]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 4;
	long calls = argc > 3 ? atol(argv[3]) : 250000;
	int reps = argc > 4 ? atoi(argv[4]) : 3;
	const int32_t pid = 4242;
	const uint64_t dev = (8u << 8) | 1;
	size_t ucap, kcap;
	struct log_file logs[2];

	/* the user log: one record per thread's file, one trace entry per call */
	struct log_file *u = &logs[0], *k = &logs[1];
	header(u, &ucap, pid);
	header(k, &kcap, pid);
	k->hdr.kernel_layers = (1u << LOG_LAYER_SYSCALL) | (1u << LOG_LAYER_PAGECACHE);
	u->records = calloc((size_t)threads, sizeof *u->records);
	k->records = calloc((size_t)threads, sizeof *k->records);
	u->trace = calloc((size_t)threads * (size_t)calls, sizeof *u->trace);
	u->trace_threads = calloc((size_t)threads, sizeof *u->trace_threads);
	k->events = calloc((size_t)threads * (size_t)calls * 2, sizeof *k->events);
	if (!u->records || !k->records || !u->trace || !u->trace_threads || !k->events)
		return 1;
	uint64_t x = 88172645463325252ull;
	for (int t = 0; t < threads; t++) {
		char path[64];
		snprintf(path, sizeof path, "/scratch/out.%d", t);
		u->records[t] = (struct log_record){.layer = LOG_LAYER_POSIX, .flags = LOG_R_USED, .path = add_str(u, &ucap, path)};
		k->records[t] = (struct log_record){.layer = LOG_LAYER_SYSCALL, .flags = LOG_R_USED, .pid = pid, .dev = dev,
						    .ino = 1000 + (uint64_t)t, .path = add_str(k, &kcap, path)};
		u->trace_threads[t] = (struct log_trace_thread){.pid = pid, .tid = pid + t, .first = (uint64_t)t * calls,
								 .n = (uint64_t)calls, .calls = (uint64_t)calls, .blocks = 1};
		uint64_t tm = 1000001000ull + (uint64_t)t * 37;
		for (long i = 0; i < calls; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t off = (x % 262144) * 4096, dur = 2000 + x % 3000;
			u->trace[u->ntrace++] = (struct log_trace_entry){
				.start_ns = tm, .end_ns = tm + dur, .busy_ns = dur, .min_ns = dur, .offset = off, .size = 4096,
				.count = 1, .pid = pid, .tid = pid + t, .record = (uint32_t)t, .layer = LOG_LAYER_POSIX,
				.op = LOG_OP_WRITE};
			k->events[k->nevents++] = (struct log_event){
				.start_ns = tm + 150, .dur_ns = dur - 300, .pid = pid, .tid = pid + t, .layer = LOG_LAYER_SYSCALL,
				.op = LOG_OP_WRITE, .dev = (uint32_t)dev, .ino = 1000 + (uint64_t)t, .offset = off, .size = 4096,
				.result = 4096};
			k->events[k->nevents++] = (struct log_event){
				.start_ns = tm + 400, .pid = pid, .tid = pid + t, .layer = LOG_LAYER_PAGECACHE,
				.op = LOG_OP_PAGE_ADD_WRITE, .dev = (uint32_t)dev, .ino = 1000 + (uint64_t)t, .offset = off,
				.size = 4096, .result = 1};
			tm += dur + 500 + x % 200;
		}
		if (tm > u->hdr.end_ns)
			u->hdr.end_ns = k->hdr.end_ns = tm;
	}
	u->nrecords = k->nrecords = (uint32_t)threads;
	u->ntrace_threads = (uint32_t)threads;
	u->hdr.nrecords = k->hdr.nrecords = (uint32_t)threads;

	uint64_t nev = u->ntrace + k->nevents, best_b = UINT64_MAX, best_e = UINT64_MAX, best_t = UINT64_MAX;
	char out[4096], err[512];
	snprintf(out, sizeof out, "%s/bench-timeline.json", argv[1]);
	for (int r = 0; r < reps; r++) {
		struct timeline tl;
		uint64_t t0 = now_ns();
		if (tl_build_from(logs, 2, &tl, err, sizeof err) < 0) {
			fprintf(stderr, "timeline: %s\n", err);
			return 1;
		}
		uint64_t t1 = now_ns();
		if (tl_export_perfetto(&tl, out, err, sizeof err) < 0) {
			fprintf(stderr, "timeline: %s\n", err);
			return 1;
		}
		uint64_t t2 = now_ns();
		if (tl.nev != nev) {
			fprintf(stderr, "timeline: %zu events in the model, %" PRIu64 " in the logs\n", tl.nev, nev);
			return 1;
		}
		tl_free(&tl);
		best_b = t1 - t0 < best_b ? t1 - t0 : best_b;
		best_e = t2 - t1 < best_e ? t2 - t1 : best_e;
		best_t = t2 - t0 < best_t ? t2 - t0 : best_t;
	}
	printf("events: %" PRIu64 " (%d threads x %ld calls: user call, syscall and page-cache event each)\n", nev,
	       threads, calls);
	printf("merge (tl_build_from): %.1f ms, %.2f M events/s\n", best_b / 1e6, nev / (best_b / 1e9) / 1e6);
	printf("Perfetto export: %.1f ms, %.2f M events/s\n", best_e / 1e6, nev / (best_e / 1e9) / 1e6);
	printf("merge + export: %.2f M events/s (best of %d)\n", nev / (best_t / 1e9) / 1e6, reps);
	remove(out);
	return 0;
}
