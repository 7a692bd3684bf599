/* SPDX-License-Identifier: MIT */
/*
 * `iostrata kernel maps DIR`: read the maps a running (or finished) `iostrata kernel --pin DIR`
 * left under the BPF filesystem, as an outside sampler would: seed 000's (fs type, mount, op,
 * log2 size) table, the per-pid table, the per-file totals and what the kernel side lost.
 */
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
#include "kernel/pinned.h"
#include "sys/mountinfo.h"

int cmd_kernel_maps(int argc, char **argv);

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

struct fsagg_ctx {
	int json, first;
	struct sys_mounts mounts;
};

static int print_fsagg(const struct ks_agg_key *k, const struct ks_agg_val *v, void *arg)
{
	struct fsagg_ctx *c = arg;
	char mp[256], type[64], what[3 * 1024], lb[32];
	const struct sys_mount *m = sys_mount_by_dev(&c->mounts, k->dev);
	snprintf(type, sizeof type, "%s", m ? m->fstype : "?");
	if (m)
		snprintf(mp, sizeof mp, "%s", m->point);
	else
		snprintf(mp, sizeof mp, "%u:%u", major(k->dev), minor(k->dev));
	if (c->json) {
		/* decoded paths may hold quotes, backslashes, newlines */
		char qtype[6 * sizeof type + 3], qmp[6 * sizeof mp + 3];
		ana_json_quote(qtype, type);
		ana_json_quote(qmp, mp);
		snprintf(what, sizeof what, "%s{\"fstype\":%s,\"dev\":\"%u:%u\",\"mount\":%s,\"op\":\"%s\",\"bucket\":%u",
			 c->first ? "" : ",", qtype, major(k->dev), minor(k->dev), qmp, op_name(k->op), k->bucket);
	} else {
		snprintf(what, sizeof what, "%-8s %-24.24s %-16s %8s", type, mp, op_name(k->op),
			 log_hist_label(k->bucket, lb, sizeof lb));
	}
	print_agg(what, v, c->json);
	c->first = 0;
	return 0;
}

static int print_pidagg(const struct ks_pid_key *k, const struct ks_agg_val *v, void *arg)
{
	struct fsagg_ctx *c = arg;
	char what[256];
	if (c->json)
		snprintf(what, sizeof what, "%s{\"pid\":%u,\"op\":\"%s\",\"files\":false", c->first ? "" : ",", k->pid,
			 op_name(k->op));
	else
		snprintf(what, sizeof what, "%-8u %-16s", k->pid, op_name(k->op));
	print_agg(what, v, c->json);
	c->first = 0;
	return 0;
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
		dir = KERN_PIN_DIR;
	struct kern_pinned pin;
	int r = kern_pinned_open(dir, &pin);
	if (r < 0) {
		fprintf(stderr, "iostrata kernel maps: %s: no pinned iostrata maps (fsagg, pidagg, kstats): %s\n", dir,
			strerror(-r));
		return 1;
	}
	if (json)
		printf("{\"fsagg\":[");
	else
		printf("%-8s %-24s %-16s %8s %10s %14s %10s %6s\n", "FSTYPE", "MOUNT", "OP", "SIZE<", "COUNT", "BYTES",
		       "AVG us", "ERRORS");
	/* the devices are named by this host's mounts: an unreadable table leaves them "?" and M:m */
	struct fsagg_ctx fc = {.json = json, .first = 1};
	sys_mountinfo_load(NULL, &fc.mounts);
	kern_pinned_fsagg(&pin, print_fsagg, &fc);
	sys_mounts_free(&fc.mounts);
	if (json)
		printf("],\"pidagg\":[");
	else
		printf("\n%-8s %-16s %10s %14s %10s %6s\n", "PID", "OP", "COUNT", "BYTES", "AVG us", "ERRORS");
	int first = 1;
	/* Per pid and op: the syscall layer's per-file totals summed by pid ... */
	struct ks_rec *recs = NULL;
	size_t nrecs = 0;
	if (pin.files >= 0)
		ks_records_fd(pin.files, pin.devfiles, &recs, &nrecs);
	struct pid_row {
		uint32_t pid;
		struct ks_agg_val v[2]; /* read, write */
	} *rows = calloc(nrecs ? nrecs : 1, sizeof *rows);
	size_t nrows = 0;
	for (size_t i = 0; rows && i < nrecs; i++) {
		const struct ks_rec *rec = &recs[i];
		if (rec->key.layer != LOG_LAYER_SYSCALL)
			continue;
		size_t j = 0;
		while (j < nrows && rows[j].pid != rec->key.pid)
			j++;
		if (j == nrows)
			rows[nrows++].pid = rec->key.pid;
		for (int rw = 0; rw < 2; rw++) {
			struct ks_agg_val *v = &rows[j].v[rw];
			v->count += rec->val.c[rw ? LOG_C_WRITES : LOG_C_READS];
			v->bytes += rec->val.c[rw ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ];
			v->time_ns += rec->val.c[rw ? LOG_C_TIME_WRITE : LOG_C_TIME_READ];
			v->errors += rec->val.c[rw ? LOG_C_ERR_WRITES : LOG_C_ERR_READS];
			for (int b = 0; b < KS_HIST; b++)
				v->lat_hist[b] += rec->val.lat_hist[rw][b];
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
	/* ... and the calls that named no traced file. */
	fc.first = first;
	kern_pinned_pidagg(&pin, print_pidagg, &fc);
	if (json)
		printf("],\"kstats\":{");
	else
		printf("\n");
	uint64_t ks[KS_NSTATS];
	kern_pinned_kstats(&pin, ks);
	for (unsigned i = 0; i < KS_NSTATS; i++) {
		if (json)
			printf("%s\"%s\":%llu", i ? "," : "", kern_kstat_names[i], (unsigned long long)ks[i]);
		else
			printf("%s%s %llu", i ? ", " : "lost/seen: ", kern_kstat_names[i], (unsigned long long)ks[i]);
	}
	printf(json ? "}}\n" : "\n");
	kern_pinned_close(&pin);
	return 0;
}
