/* SPDX-License-Identifier: MIT */
/*
 * Names and labels of the log format: the counter tables generated from the LOG_COUNTERS X-macro
 * (upper-case names, lower-case keys, one-line meanings, kinds), layer names and histogram bucket
 * labels. Every tool prints counters through these, so a counter is listed in exactly one place,
 * the X-macro in format.h, and the test telling a descriptor's pseudo-name from a path. This file
 * does no I/O and holds no state beyond the key table, which is filled once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "iostrata/reader.h"

const char *const log_counter_names[LOG_NCOUNTERS] = {
#define LOG_X_NAME(name, kind, doc) [LOG_C_##name] = #name,
	LOG_COUNTERS(LOG_X_NAME)
#undef LOG_X_NAME
};

const char *const log_counter_docs[LOG_NCOUNTERS] = {
#define LOG_X_DOC(name, kind, doc) [LOG_C_##name] = doc,
	LOG_COUNTERS(LOG_X_DOC)
#undef LOG_X_DOC
};

const uint8_t log_counter_kinds[LOG_NCOUNTERS] = {
#define LOG_X_KIND(name, kind, doc) [LOG_C_##name] = LOG_K_##kind,
	LOG_COUNTERS(LOG_X_KIND)
#undef LOG_X_KIND
};

/*
 * The preprocessor cannot change case, and a second hand-written list would drift from the
 * X-macro, so the lower-case keys are derived from log_counter_names on first use.
 * pthread_once rather than a constructor: the capture library may need a key from its own
 * constructor, before ours has run.
 */
#define LOG_KEY_MAX 32
static char counter_keys[LOG_NCOUNTERS][LOG_KEY_MAX];
static pthread_once_t counter_keys_once = PTHREAD_ONCE_INIT;

static void build_counter_keys(void)
{
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		const char *s = log_counter_names[c];
		size_t i;

		for (i = 0; s[i] && i < LOG_KEY_MAX - 1; i++)
			counter_keys[c][i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
		counter_keys[c][i] = '\0';
	}
}

/* Compile-time guard that every name fits the key buffer. */
#define LOG_X_LEN(name, kind, doc) _Static_assert(sizeof(#name) <= LOG_KEY_MAX, "counter name too long");
LOG_COUNTERS(LOG_X_LEN)
#undef LOG_X_LEN

const char *log_counter_key(unsigned c)
{
	if (c >= LOG_NCOUNTERS)
		return NULL;
	pthread_once(&counter_keys_once, build_counter_keys);
	return counter_keys[c];
}

int log_counter_from_key(const char *key)
{
	if (!key)
		return -EINVAL;
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
		if (!strcasecmp(key, log_counter_names[c]))
			return (int)c;
	return -ENOENT;
}

static const char *const layer_names[LOG_LAYER_MAX + 1] = {
	[LOG_LAYER_NONE] = "none",     [LOG_LAYER_POSIX] = "posix",   [LOG_LAYER_STDIO] = "stdio",
	[LOG_LAYER_MPIIO] = "mpiio",   [LOG_LAYER_SYSCALL] = "syscall", [LOG_LAYER_MOUNT] = "mount",
	[LOG_LAYER_PAGECACHE] = "pagecache", [LOG_LAYER_FS] = "fs", [LOG_LAYER_BLOCK] = "block",
	[LOG_LAYER_HDF5] = "hdf5",
};

const char *log_layer_name(unsigned layer)
{
	if (layer > LOG_LAYER_MAX)
		return "?";
	return layer_names[layer];
}

int log_layer_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (!strcasecmp(name, layer_names[l]))
			return (int)l;
	return -EINVAL;
}

int log_path_is_pseudo(const char *path)
{
	if (!path)
		return 0;
	if (!strcmp(path, "<STDIN>") || !strcmp(path, "<STDOUT>") || !strcmp(path, "<STDERR>"))
		return 1;
	if (!strncmp(path, "/memfd:", 7))
		return 1;
	/* /proc/PID/fd shows an object without a path as TYPE:[ID] or anon_inode:NAME */
	const char *p = path;
	while ((*p >= 'a' && *p <= 'z') || *p == '_')
		p++;
	return p > path && *p == ':';
}

/* "1K", "512M": a power of two of at least 1 KiB with a binary unit. */
static void format_pow2(unsigned exp, char *buf, size_t len)
{
	static const char units[] = "KMG";
	unsigned u = exp / 10; /* 1 = K, 2 = M, 3 = G */

	if (u == 0)
		snprintf(buf, len, "%llu", 1ull << exp);
	else
		snprintf(buf, len, "%llu%c", 1ull << (exp - 10 * u), units[u - 1]);
}

const char *log_hist_label(unsigned bucket, char *buf, size_t len)
{
	char lo[16], hi[16];

	if (!buf || len == 0)
		return "";
	if (bucket >= LOG_HIST_BUCKETS) {
		snprintf(buf, len, "?");
	} else if (bucket == 0) {
		snprintf(buf, len, "0");
	} else if (bucket == 1) {
		snprintf(buf, len, "1");
	} else if (bucket == LOG_HIST_BUCKETS - 1) {
		format_pow2(bucket - 1, lo, sizeof lo);
		snprintf(buf, len, ">=%s", lo);
	} else if (bucket <= 10) {
		/* Below 1 KiB the exact inclusive range is short enough to print. */
		snprintf(buf, len, "%llu-%llu", 1ull << (bucket - 1), (1ull << bucket) - 1);
	} else {
		/* From 1 KiB up, "1K-2K" is the half-open [1 KiB, 2 KiB): exact upper bounds like
		 * 2047 would be unreadable in a report column. */
		format_pow2(bucket - 1, lo, sizeof lo);
		format_pow2(bucket, hi, sizeof hi);
		snprintf(buf, len, "%s-%s", lo, hi);
	}
	return buf;
}

const char *log_agg_state_name(uint64_t state)
{
	static const char *const names[] = {"none", "on", "bypass_local", "bypass_cheap", "probing"};
	return state < sizeof names / sizeof names[0] ? names[state] : "unknown";
}

/* File systems by statfs f_type. local = 1: an in-kernel file system on local storage or memory,
 * where a small buffered write costs a copy of its bytes into the page cache, not a request
 * (write aggregation leaves their files alone, docs/AGGREGATION.md "When it pays"). */
static const struct {
	uint64_t magic;
	const char *name;
	int local;
} fs_types[] = {
	{0xEF53, "ext4", 1},       {0x58465342, "xfs", 1},       {0x9123683E, "btrfs", 1},
	{0x01021994, "tmpfs", 1},  {0x858458F6, "ramfs", 1},     {0xF2F52010, "f2fs", 1},
	{0xCA451A4E, "bcachefs", 1}, {0x2FC12FC1, "zfs", 1},     {0x3153464A, "jfs", 1},
	{0x52654973, "reiserfs", 1}, {0x65735546, "fuse", 0},    {0x6969, "nfs", 0},
	{0x0BD00BD0, "lustre", 0}, {0x47504653, "gpfs", 0},      {0x00C36400, "ceph", 0},
	{0x19830326, "beegfs", 0}, {0xFF534D42, "cifs", 0},      {0xFE534D42, "smb2", 0},
	{0x01021997, "9p", 0},
};

const char *log_fs_name(uint64_t magic)
{
	for (size_t i = 0; i < sizeof fs_types / sizeof fs_types[0]; i++)
		if (fs_types[i].magic == magic)
			return fs_types[i].name;
	return NULL;
}

int log_fs_is_local(uint64_t magic)
{
	for (size_t i = 0; i < sizeof fs_types / sizeof fs_types[0]; i++)
		if (fs_types[i].magic == magic)
			return fs_types[i].local;
	return 0;
}
