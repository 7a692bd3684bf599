/* SPDX-License-Identifier: MIT */
/*
 * iostratad's configuration file (config.h): defaults, then "key = value" lines over them. Values
 * are checked here (ranges, paths absolute, booleans); whether a path can be used is the
 * daemon's question when it starts.
 */
#include "daemon/config.h"

#include "store/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the file left to the defaults that depend on other keys: the archive beside the store. */
static void derive(struct dmn_config *c)
{
	char dir[DMN_PATH];
	if (c->archive_dir[0] || c->archive_none || store_url_path(c->store, dir, sizeof dir) < 0)
		return;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	snprintf(c->archive_dir, sizeof c->archive_dir, "%s/archive", slash ? dir : ".");
}

void dmn_config_defaults(struct dmn_config *c)
{
	memset(c, 0, sizeof *c);
	c->interval_ms = 1000;
	c->stats_interval_ms = 10000;
	snprintf(c->store, sizeof c->store, "sqlite:%s", DMN_DEFAULT_STORE);
	snprintf(c->socket, sizeof c->socket, "%s", STORE_DEFAULT_SOCKET);
	c->retention_ms = 14ull * 86400000;
	c->job_grace_ms = 2000;
	c->merge_after_ms = 60000;
	snprintf(c->live_roots[0], DMN_PATH, "/dev/shm");
	snprintf(c->live_roots[1], DMN_PATH, "/tmp");
	c->nlive_roots = 2;
	c->sampler_live = c->sampler_diskstats = c->sampler_nfs = c->sampler_lustre = c->sampler_nvme = 1;
	c->sampler_kernel = 1;
	c->dist_every = 1000;
	snprintf(c->kernel_pins, DMN_PATH, "/sys/fs/bpf/iostrata");
	snprintf(c->diskstats_path, DMN_PATH, "/proc/diskstats");
	snprintf(c->mountstats_path, DMN_PATH, "/proc/self/mountstats");
	snprintf(c->lustre_root, DMN_PATH, "/proc/fs/lustre");
	snprintf(c->lustre_debug_root, DMN_PATH, "/sys/kernel/debug/lustre");
	snprintf(c->nvme_root, DMN_PATH, "/sys/class/nvme");
	c->max_records = 65536;
	c->max_log_mb = 256;
	c->resident_mb = 16;
	c->runs_max = 100000;
	c->spool_max = 256ull << 20;
	c->send_delay_ms = 30000;
	snprintf(c->influxdb_db, sizeof c->influxdb_db, "iostrata");
	snprintf(c->redis_stream, sizeof c->redis_stream, "iostrata:batches");
	c->redis_maxlen = 1000000;
	c->prometheus_max_jobs = 1000;
	derive(c);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Seconds with up to 3 decimals, in [lo_ms, hi_ms]: 0, or -1. */
static int parse_secs(const char *v, uint32_t lo_ms, uint32_t hi_ms, uint32_t *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || d != d || d * 1000.0 < lo_ms || d * 1000.0 > hi_ms)
		return -1;
	*out = (uint32_t)(d * 1000.0 + 0.5);
	return 0;
}

static int parse_u32(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || x < lo || x > hi)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* "14d", "12h", "30m", "90s" (a unit is required), 1 s to 100 years: 0, or -1. */
static int parse_duration(const char *v, uint64_t *ms)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-' || !*end || end[1])
		return -1;
	uint64_t unit = *end == 's' ? 1000 : *end == 'm' ? 60000 : *end == 'h' ? 3600000 : *end == 'd' ? 86400000 : 0;
	if (!unit || x < 1 || x > 36500ull * 86400000 / unit)
		return -1;
	*ms = x * unit;
	return 0;
}

static int parse_path(const char *v, char *dst, int allow_none)
{
	if (allow_none && (!*v || !strcmp(v, "none"))) {
		dst[0] = 0;
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= DMN_PATH)
		return -1;
	snprintf(dst, DMN_PATH, "%s", v);
	return 0;
}

/* "256M", "1G", "65536" (bytes; K, M, G units), at least 4096: 0, or -1. */
static int parse_bytes(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-')
		return -1;
	unsigned shift = !*end ? 0 : *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
	if (shift == 64 || (*end && end[1]) || x > (1ull << 50) >> shift || (x << shift) < 4096)
		return -1;
	*out = x << shift;
	return 0;
}

/* A string value into dst (cap bytes): 0, or -1 when too long or holding a blank. */
static int parse_word(const char *v, char *dst, size_t cap)
{
	if (strlen(v) >= cap || strpbrk(v, " \t"))
		return -1;
	snprintf(dst, cap, "%s", v);
	return 0;
}

/* "samplers = live diskstats nfs lustre nvme" (any subset; "none" for none). */
static int parse_samplers(struct dmn_config *c, char *v, char *bad, size_t badlen)
{
	c->sampler_live = c->sampler_diskstats = c->sampler_nfs = c->sampler_lustre = c->sampler_nvme = 0;
	c->sampler_kernel = 0;
	for (char *save, *w = strtok_r(v, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (!strcmp(w, "live"))
			c->sampler_live = 1;
		else if (!strcmp(w, "diskstats"))
			c->sampler_diskstats = 1;
		else if (!strcmp(w, "nfs"))
			c->sampler_nfs = 1;
		else if (!strcmp(w, "lustre"))
			c->sampler_lustre = 1;
		else if (!strcmp(w, "nvme"))
			c->sampler_nvme = 1;
		else if (!strcmp(w, "kernel"))
			c->sampler_kernel = 1;
		else if (strcmp(w, "none")) {
			snprintf(bad, badlen, "unknown sampler '%s' (live, diskstats, nfs, lustre, nvme, kernel, none)", w);
			return -1;
		}
	}
	return 0;
}

static int parse_roots(struct dmn_config *c, char *v, char *bad, size_t badlen)
{
	c->nlive_roots = 0;
	for (char *save, *w = strtok_r(v, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (c->nlive_roots == DMN_MAX_ROOTS) {
			snprintf(bad, badlen, "more than %d live roots", DMN_MAX_ROOTS);
			return -1;
		}
		if (parse_path(w, c->live_roots[c->nlive_roots], 0) < 0) {
			snprintf(bad, badlen, "'%s' is not an absolute path", w);
			return -1;
		}
		c->nlive_roots++;
	}
	return 0;
}

/* One "key = value": 0, or -1 with what is wrong in bad. */
static int set_key(struct dmn_config *c, const char *k, char *v, char *bad, size_t badlen)
{
	int r = 0;
	if (!strcmp(k, "interval"))
		r = parse_secs(v, 100, 3600000, &c->interval_ms);
	else if (!strcmp(k, "stats_interval")) {
		r = parse_secs(v, 100, 86400000, &c->stats_interval_ms);
		c->stats_interval_set = 1;
	}
	else if (!strcmp(k, "store")) {
		if (!*v || strlen(v) >= sizeof c->store)
			r = -1;
		else
			snprintf(c->store, sizeof c->store, "%s", v);
	} else if (!strcmp(k, "socket"))
		r = parse_path(v, c->socket, 0);
	else if (!strcmp(k, "archive")) {
		c->archive_none = !strcmp(v, "none");
		r = c->archive_none ? 0 : parse_path(v, c->archive_dir, 0);
	}
	else if (!strcmp(k, "merge_logs")) {
		if (!strcmp(v, "none"))
			c->merge_after_ms = 0;
		else
			r = parse_duration(v, &c->merge_after_ms);
	} else if (!strcmp(k, "retention"))
		r = parse_duration(v, &c->retention_ms);
	else if (!strcmp(k, "job_grace"))
		r = parse_secs(v, 0, 86400000, &c->job_grace_ms);
	else if (!strcmp(k, "admin_group")) {
		if (strlen(v) >= sizeof c->admin_group)
			r = -1;
		else
			snprintf(c->admin_group, sizeof c->admin_group, "%s", v);
	} else if (!strcmp(k, "live_roots"))
		return parse_roots(c, v, bad, badlen);
	else if (!strcmp(k, "samplers"))
		return parse_samplers(c, v, bad, badlen);
	else if (!strcmp(k, "diskstats"))
		r = parse_path(v, c->diskstats_path, 0);
	else if (!strcmp(k, "mountstats"))
		r = parse_path(v, c->mountstats_path, 0);
	else if (!strcmp(k, "lustre_root"))
		r = parse_path(v, c->lustre_root, 0);
	else if (!strcmp(k, "lustre_debug_root"))
		r = parse_path(v, c->lustre_debug_root, 0);
	else if (!strcmp(k, "nvme_root"))
		r = parse_path(v, c->nvme_root, 0);
	else if (!strcmp(k, "dist_every"))
		r = parse_u32(v, 1, 1000000000, &c->dist_every);
	else if (!strcmp(k, "kernel_pins"))
		r = parse_path(v, c->kernel_pins, 0);
	else if (!strcmp(k, "nvme_smart"))
		r = parse_path(v, c->nvme_smart, 1);
	else if (!strcmp(k, "max_records"))
		r = parse_u32(v, 1, 1u << 24, &c->max_records);
	else if (!strcmp(k, "max_log_mb"))
		r = parse_u32(v, 1, 65536, &c->max_log_mb);
	else if (!strcmp(k, "resident_mb"))
		r = parse_u32(v, 0, 1u << 20, &c->resident_mb);
	else if (!strcmp(k, "runs_max"))
		r = parse_u32(v, 0, 100000000, &c->runs_max);
	else if (!strcmp(k, "spool_max"))
		r = parse_bytes(v, &c->spool_max);
	else if (!strcmp(k, "send_delay"))
		r = parse_secs(v, 0, 3600000, &c->send_delay_ms);
	else if (!strcmp(k, "influxdb"))
		r = !strcmp(v, "none") ? (c->influxdb[0] = 0) : parse_word(v, c->influxdb, sizeof c->influxdb);
	else if (!strcmp(k, "influxdb_db"))
		r = *v ? parse_word(v, c->influxdb_db, sizeof c->influxdb_db) : -1;
	else if (!strcmp(k, "influxdb_user"))
		r = parse_word(v, c->influxdb_user, sizeof c->influxdb_user);
	else if (!strcmp(k, "influxdb_password_file"))
		r = parse_path(v, c->influxdb_password_file, 1);
	else if (!strcmp(k, "redis"))
		r = !strcmp(v, "none") ? (c->redis[0] = 0) : parse_word(v, c->redis, sizeof c->redis);
	else if (!strcmp(k, "redis_user"))
		r = parse_word(v, c->redis_user, sizeof c->redis_user);
	else if (!strcmp(k, "redis_password_file"))
		r = parse_path(v, c->redis_password_file, 1);
	else if (!strcmp(k, "redis_stream"))
		r = *v ? parse_word(v, c->redis_stream, sizeof c->redis_stream) : -1;
	else if (!strcmp(k, "redis_maxlen"))
		r = parse_u32(v, 1000, 1000000000, &c->redis_maxlen);
	else if (!strcmp(k, "prometheus"))
		r = !strcmp(v, "none") ? (c->prometheus[0] = 0) : parse_word(v, c->prometheus, sizeof c->prometheus);
	else if (!strcmp(k, "prometheus_max_jobs"))
		r = parse_u32(v, 0, 1000000, &c->prometheus_max_jobs);
	else {
		snprintf(bad, badlen, "unknown key '%s'", k);
		return -1;
	}
	if (r < 0)
		snprintf(bad, badlen, "bad value '%s' for %s", v, k);
	return r;
}

int dmn_config_load(struct dmn_config *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot read the configuration: %s", path, strerror(e));
		return -e;
	}
	char line[8192], bad[256];
	int n = 0, r = 0;
	while (fgets(line, sizeof line, f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%d: line longer than %zu bytes", path, n, sizeof line - 1);
			r = -EINVAL;
			break;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'", path, n);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		char *k = trim(s), *v = trim(eq + 1);
		if (set_key(c, k, v, bad, sizeof bad) < 0) {
			snprintf(err, errlen, "%s:%d: %s", path, n, bad);
			r = -EINVAL;
			break;
		}
	}
	if (!r && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		r = -EIO;
	}
	fclose(f);
	if (!r && c->stats_interval_set && c->stats_interval_ms % c->interval_ms) {
		snprintf(err, errlen, "%s: stats_interval (%.3g s) is not a whole multiple of interval (%.3g s)", path,
			 c->stats_interval_ms / 1000.0, c->interval_ms / 1000.0);
		r = -EINVAL;
	}
	if (!r && !c->stats_interval_set) /* 10 s, rounded up to a whole number of intervals */
		c->stats_interval_ms = (10000 + c->interval_ms - 1) / c->interval_ms * c->interval_ms;
	if (!r) {
		snprintf(c->path, sizeof c->path, "%s", path);
		derive(c);
	}
	return r;
}
