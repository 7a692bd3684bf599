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
#include <unistd.h>

#include "cli/cli.h"
#include "iostrata/reader.h"
#include "kernel/collect.h"
#include "kernel/kernel.h"

int cmd_kernel_maps(int argc, char **argv);

static int open_pinned(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return bpf_obj_get(p);
}

/* Mount point of a mount id, from /proc/self/mountinfo. */
static void mount_path(uint32_t id, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	snprintf(out, len, "mnt:%u", id);
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned mid;
		char mp[2048];
		if (sscanf(line, "%u %*u %*u:%*u %*s %2047s", &mid, mp) == 2 && mid == id) {
			snprintf(out, len, "%s", mp);
			break;
		}
	}
	fclose(f);
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

int cmd_kernel_maps(int argc, char **argv)
{
	int json = 0;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			fprintf(stderr, "usage: iostrata kernel maps [--json] DIR\n");
			return 2;
		}
	}
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
	while (bpf_map_get_next_key(fsagg, prev, &nk) == 0) {
		struct ks_agg_val v;
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(fsagg, &k, &v) < 0)
			continue;
		char mp[256], what[512], lb[32];
		mount_path(k.mnt_id, mp, sizeof mp);
		k.fstype[KS_FSTYPE_MAX - 1] = 0;
		if (json)
			snprintf(what, sizeof what, "%s{\"fstype\":\"%s\",\"mnt_id\":%u,\"mount\":\"%s\",\"op\":\"%s\",\"bucket\":%u",
				 first ? "" : ",", k.fstype, k.mnt_id, mp, op_name(k.op), k.bucket);
		else
			snprintf(what, sizeof what, "%-8s %-24.24s %-16s %8s", k.fstype, mp, op_name(k.op),
				 log_hist_label(k.bucket, lb, sizeof lb));
		print_agg(what, &v, json);
		first = 0;
	}
	if (json)
		printf("],\"pidagg\":[");
	else
		printf("\n%-8s %-16s %10s %14s %10s %6s\n", "PID", "OP", "COUNT", "BYTES", "AVG us", "ERRORS");
	struct ks_pid_key pk, pnk;
	prev = NULL;
	first = 1;
	while (bpf_map_get_next_key(pidagg, prev, &pnk) == 0) {
		struct ks_agg_val v;
		pk = pnk;
		prev = &pk;
		if (bpf_map_lookup_elem(pidagg, &pk, &v) < 0)
			continue;
		char what[256];
		if (json)
			snprintf(what, sizeof what, "%s{\"pid\":%u,\"op\":\"%s\"", first ? "" : ",", pk.pid, op_name(pk.op));
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
