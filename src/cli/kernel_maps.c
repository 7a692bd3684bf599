/* SPDX-License-Identifier: MIT */
/*
 * `iostrata kernel maps DIR`: read the maps a running (or finished) `iostrata kernel --pin DIR`
 * left under the BPF filesystem, as an outside sampler would: seed 000's (fs type, mount, op,
 * log2 size) table, the per-pid table, the per-file totals and what the kernel side lost.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "analysis/json.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "iostrata/reader.h"
#include "kernel/collect.h"
#include "kernel/kernel.h"
#include "sys/mountinfo.h"

int cmd_kernel_maps(int argc, char **argv);

static int open_pinned(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return bpf_obj_get(p);
}

static const char *op_name(unsigned op)
{
	static const char *const names[] = {
#define LOG_X_OPN(name, str) str,
		LOG_OPS(LOG_X_OPN)
#undef LOG_X_OPN
	};
	return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static void print_agg(const char *what, const struct ks_agg_val *v, int json)
{
	if (json) {
		printf("%s,\"count\":%llu,\"bytes\":%llu,\"time_ns\":%llu,\"errors\":%llu,\"lat_hist\":[", what,
		       (unsigned long long)v->count, (unsigned long long)v->bytes, (unsigned long long)v->time_ns,
		       (unsigned long long)v->errors);
		for (int b = 0; b < KS_HIST; b++)
			printf("%s%llu", b ? "," : "", (unsigned long long)v->lat_hist[b]);
		printf("]}");
	} else {
		printf("%s %10llu %14llu %10.1f %6llu\n", what, (unsigned long long)v->count,
		       (unsigned long long)v->bytes, v->count ? v->time_ns / 1e3 / v->count : 0.0,
		       (unsigned long long)v->errors);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata kernel maps [--json] [DIR]\n"
		   "  read the maps `iostrata kernel --pin DIR` pinned (default DIR: /sys/fs/bpf/iostrata):\n"
		   "  per (fs type, mount, op, log2 size), per pid, per file, and what the kernel side lost\n"
		   "  --json   one JSON object\n");
}

int cmd_kernel_maps(int argc, char **argv)
{
	int json = 0;
	const char *dir = NULL;
	struct cli_opts o;
	enum cli_arg what;
	char q[256];
	cli_opts_init(&o, "kernel maps", argc, argv);
	while ((what = cli_opts_next(&o)) != CLI_ARG_END) {
		if (what == CLI_ARG_OPERAND && !dir) {
			dir = o.arg;
		} else if (what == CLI_ARG_OPERAND) {
			cli_bad(&o, "one directory only, not also %s", cli_quote(q, sizeof q, o.arg));
		} else if (cli_flag(&o, "--json")) {
			json = 1;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	if (!dir)
		dir = "/sys/fs/bpf/iostrata";
	int fsagg = open_pinned(dir, "fsagg"), pidagg = open_pinned(dir, "pidagg"), kstats = open_pinned(dir, "kstats");
	if (fsagg < 0 || pidagg < 0 || kstats < 0) {
		fprintf(stderr, "iostrata kernel maps: %s: no pinned iostrata maps (fsagg, pidagg, kstats): %s\n", dir,
			strerror(errno));
		return 1;
	}
	if (json)
		printf("{\"fsagg\":[");
	else
		printf("%-8s %-24s %-16s %8s %10s %14s %10s %6s\n", "FSTYPE", "MOUNT", "OP", "SIZE<", "COUNT", "BYTES",
		       "AVG us", "ERRORS");
	struct ks_agg_key k, nk;
	void *prev = NULL;
	int first = 1;
	/* the devices are named by this host's mounts: an unreadable table leaves them "?" and M:m */
	struct sys_mounts mounts;
	sys_mountinfo_load(NULL, &mounts);
	while (bpf_map_get_next_key(fsagg, prev, &nk) == 0) {
		struct ks_agg_val v;
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(fsagg, &k, &v) < 0)
			continue;
		char mp[256], type[64], what[3 * 1024], lb[32];
		const struct sys_mount *m = sys_mount_by_dev(&mounts, k.dev);
		snprintf(type, sizeof type, "%s", m ? m->fstype : "?");
		if (m)
			snprintf(mp, sizeof mp, "%s", m->point);
		else
			snprintf(mp, sizeof mp, "%u:%u", major(k.dev), minor(k.dev));
		if (json) {
			/* decoded paths may hold quotes, backslashes, newlines */
			char qtype[6 * sizeof type + 3], qmp[6 * sizeof mp + 3];
			ana_json_quote(qtype, type);
			ana_json_quote(qmp, mp);
			snprintf(what, sizeof what, "%s{\"fstype\":%s,\"dev\":\"%u:%u\",\"mount\":%s,\"op\":\"%s\",\"bucket\":%u",
				 first ? "" : ",", qtype, major(k.dev), minor(k.dev), qmp, op_name(k.op), k.bucket);
		} else {
			snprintf(what, sizeof what, "%-8s %-24.24s %-16s %8s", type, mp, op_name(k.op),
				 log_hist_label(k.bucket, lb, sizeof lb));
		}
		print_agg(what, &v, json);
		first = 0;
	}
	sys_mounts_free(&mounts);
	if (json)
		printf("],\"pidagg\":[");
	else
		printf("\n%-8s %-16s %10s %14s %10s %6s\n", "PID", "OP", "COUNT", "BYTES", "AVG us", "ERRORS");
	first = 1;
	/* Per pid and op: the syscall layer's per-file totals summed by pid ... */
	int files = open_pinned(dir, "files");
	struct ks_rec *recs = NULL;
	size_t nrecs = 0;
	if (files >= 0)
		ks_records_fd(files, &recs, &nrecs);
	struct pid_row {
		uint32_t pid;
		struct ks_agg_val v[2]; /* read, write */
	} *rows = calloc(nrecs ? nrecs : 1, sizeof *rows);
	size_t nrows = 0;
	for (size_t i = 0; rows && i < nrecs; i++) {
		const struct ks_rec *r = &recs[i];
		if (r->key.layer != LOG_LAYER_SYSCALL)
			continue;
		size_t j = 0;
		while (j < nrows && rows[j].pid != r->key.pid)
			j++;
		if (j == nrows)
			rows[nrows++].pid = r->key.pid;
		for (int rw = 0; rw < 2; rw++) {
			struct ks_agg_val *v = &rows[j].v[rw];
			v->count += r->val.c[rw ? LOG_C_WRITES : LOG_C_READS];
			v->bytes += r->val.c[rw ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ];
			v->time_ns += r->val.c[rw ? LOG_C_TIME_WRITE : LOG_C_TIME_READ];
			v->errors += r->val.c[rw ? LOG_C_ERR_WRITES : LOG_C_ERR_READS];
			for (int b = 0; b < KS_HIST; b++)
				v->lat_hist[b] += r->val.lat_hist[rw][b];
		}
	}
	for (size_t j = 0; j < nrows; j++) {
		for (int rw = 0; rw < 2; rw++) {
			char what[256];
			if (!rows[j].v[rw].count)
				continue;
			if (json)
				snprintf(what, sizeof what, "%s{\"pid\":%u,\"op\":\"%s\",\"files\":true", first ? "" : ",",
					 rows[j].pid, rw ? "write" : "read");
			else
				snprintf(what, sizeof what, "%-8u %-16s", rows[j].pid, rw ? "write" : "read");
			print_agg(what, &rows[j].v[rw], json);
			first = 0;
		}
	}
	free(rows);
	free(recs);
	if (files >= 0)
		close(files);
	/* ... and the calls that named no traced file. */
	struct ks_pid_key pk, pnk;
	prev = NULL;
	while (bpf_map_get_next_key(pidagg, prev, &pnk) == 0) {
		struct ks_agg_val v;
		pk = pnk;
		prev = &pk;
		if (bpf_map_lookup_elem(pidagg, &pk, &v) < 0)
			continue;
		char what[256];
		if (json)
			snprintf(what, sizeof what, "%s{\"pid\":%u,\"op\":\"%s\",\"files\":false", first ? "" : ",", pk.pid,
				 op_name(pk.op));
		else
			snprintf(what, sizeof what, "%-8u %-16s", pk.pid, op_name(pk.op));
		print_agg(what, &v, json);
		first = 0;
	}
	static const char *const stat_names[KS_NSTATS] = {
		"events", "event_drops", "files_full", "paths_full", "agg_full", "inflight_full", "pids_full", "block_unmatched",
	};
	if (json)
		printf("],\"kstats\":{");
	else
		printf("\n");
	for (__u32 i = 0; i < KS_NSTATS; i++) {
		__u64 v = 0;
		bpf_map_lookup_elem(kstats, &i, &v);
		if (json)
			printf("%s\"%s\":%llu", i ? "," : "", stat_names[i], (unsigned long long)v);
		else
			printf("%s%s %llu", i ? ", " : "lost/seen: ", stat_names[i], (unsigned long long)v);
	}
	printf(json ? "}}\n" : "\n");
	close(fsagg);
	close(pidagg);
	close(kstats);
	return 0;
}
