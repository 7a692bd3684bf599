/* SPDX-License-Identifier: MIT */
/*
 * `iostrata report [--json] [--top N] DIR|FILE...`: finds a job's logs (final *.iost and live
 * *.iost.live links in each directory, or files named directly), reads them all, and prints the
 * merged report. It only parses arguments and finds files: merging is src/analysis/profile.c,
 * rendering src/analysis/report_out.c. Any unreadable log stops it before anything is printed,
 * so a report never silently leaves a process out. For a kernel log written on this host it also
 * reads the mount table, to name the block devices the log knows by number only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/report_out.h"
#include "cli/cli.h"
#include "iostrata/reader.h"

#define FINAL_SUFFIX ".iost"
#define LIVE_SUFFIX ".iost.live"

struct inputs {
	char **paths;
	size_t n, cap;
	char **skipped; /* dangling live links, reported again in the report's warnings */
	size_t nskipped;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata report [--json] [--top N] DIR|FILE...\n"
		   "  DIR      a job directory: every *.iost and *.iost.live in it\n"
		   "  FILE     a log file\n"
		   "  --json   one JSON object instead of the text report\n"
		   "  --top N  rows of the top-files tables (default %d)\n",
		ANA_TOP_DEFAULT);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && !strcmp(s + n - k, suffix);
}

static int push(char ***v, size_t *n, const char *s)
{
	char **w = realloc(*v, (*n + 1) * sizeof *w);
	if (!w)
		return -ENOMEM;
	*v = w;
	if (!(w[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static void inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	for (size_t i = 0; i < in->nskipped; i++)
		free(in->skipped[i]);
	free(in->paths);
	free(in->skipped);
}

static int is_log_name(const struct dirent *de)
{
	return ends_with(de->d_name, FINAL_SUFFIX) || ends_with(de->d_name, LIVE_SUFFIX);
}

/* A live link whose target is gone: its process finished or was recovered meanwhile (then its
 * final log is in the directory too) or its node-local file was cleaned up. Not fatal. */
static int skip_dangling(struct inputs *in, const char *path)
{
	fprintf(stderr, "iostrata report: %s: dangling link to a live log that no longer exists; skipped\n", path);
	return push(&in->skipped, &in->nskipped, path);
}

static int add_dir(struct inputs *in, const char *dir)
{
	struct dirent **de = NULL;
	int n = scandir(dir, &de, is_log_name, alphasort);
	int ret = 0;

	if (n < 0) {
		fprintf(stderr, "iostrata report: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		char path[CLI_PATH];
		struct stat st;
		if (ret == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, de[i]->d_name);
			int found = stat(path, &st) == 0;
			if (!found && errno == ENOENT && ends_with(path, LIVE_SUFFIX))
				ret = skip_dangling(in, path);
			else if (!found || !S_ISDIR(st.st_mode)) /* a directory named like a log is not one */
				ret = push(&in->paths, &in->n, path);
		}
		free(de[i]);
	}
	free(de);
	return ret;
}

static int add_arg(struct inputs *in, const char *arg)
{
	struct stat st;

	if (stat(arg, &st) == 0)
		return S_ISDIR(st.st_mode) ? add_dir(in, arg) : push(&in->paths, &in->n, arg);
	int e = errno;
	if (e == ENOENT && ends_with(arg, LIVE_SUFFIX) && lstat(arg, &st) == 0 && S_ISLNK(st.st_mode))
		return skip_dangling(in, arg);
	fprintf(stderr, "iostrata report: %s: %s\n", arg, strerror(e));
	return -e;
}

struct mounts {
	struct ana_mount *v;
	unsigned char *whole; /* v[i] mounts its filesystem's root, not a subdirectory */
	size_t n;
};

static void mounts_free(struct mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free((char *)m->v[i].path);
		free((char *)m->v[i].fstype);
	}
	free(m->v);
	free(m->whole);
}

/* mountinfo escapes space, tab, newline and backslash in paths as \ooo. */
static void unescape_octal(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * The mount table of this host, for naming devices: only when a kernel log comes from this host
 * (the devices of another node mean nothing here). One entry per device: the mount of its root
 * (a bind mount of a subdirectory names the device less well), else its first mount. A table that
 * cannot be read leaves the devices known by name and number; that is no error.
 */
static void read_mounts(const struct log_file *logs, size_t n, struct mounts *m)
{
	char host[256] = "";
	int local = 0;

	if (gethostname(host, sizeof host - 1) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (logs[i].hdr.kernel_layers && !strcmp(log_file_string(&logs[i], logs[i].hdr.host), host))
			local = 1;
	FILE *f = local ? fopen("/proc/self/mountinfo", "r") : NULL;
	if (!f)
		return;
	char *line = NULL;
	size_t len = 0;
	while (getline(&line, &len, f) > 0) {
		unsigned ma, mi;
		char root[4096], path[4096], fstype[256];
		/* id parent M:m root mount-point options [optional fields...] - fstype source ... */
		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &ma, &mi, root, path) != 4)
			continue;
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%255s", fstype) != 1)
			continue;
		unescape_octal(path);
		uint64_t dev = makedev(ma, mi);
		int whole = !strcmp(root, "/");
		size_t k = 0;
		while (k < m->n && m->v[k].dev != dev)
			k++;
		if (k < m->n && (m->whole[k] || !whole))
			continue;
		char *p = strdup(path), *t = strdup(fstype);
		if (!p || !t) {
			free(p);
			free(t);
			break;
		}
		if (k == m->n) {
			struct ana_mount *v = realloc(m->v, (m->n + 1) * sizeof *v);
			if (v)
				m->v = v;
			unsigned char *w = v ? realloc(m->whole, m->n + 1) : NULL;
			if (w)
				m->whole = w;
			if (!v || !w) {
				free(p);
				free(t);
				break;
			}
			m->v[m->n++] = (struct ana_mount){dev, NULL, NULL};
		}
		free((char *)m->v[k].path);
		free((char *)m->v[k].fstype);
		m->v[k] = (struct ana_mount){dev, p, t};
		m->whole[k] = (unsigned char)whole;
	}
	free(line);
	fclose(f);
}

static int parse_top(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0 || s[0] == '-' || v > 1000000)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct inputs in = {0};
	struct mounts mounts = {0};
	struct log_file *logs = NULL;
	size_t nlogs = 0;
	struct ana_profile prof;
	int have_prof = 0, have_tl = 0, json = 0, ret = 2, i, nargs = 0;
	struct timeline tl = {0};
	struct tl_sci sci = {0};
	struct tl_breakdown bd = {0};
	struct ana_report_opts opts = {.top_n = ANA_TOP_DEFAULT};
	char err[1024];

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--top") || !strncmp(a, "--top=", 6)) {
			const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_top(v, &opts.top_n) < 0) {
				fprintf(stderr, "iostrata report: --top needs a positive count\n");
				return 2;
			}
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "iostrata report: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	for (; i < argc; i++, nargs++)
		if (add_arg(&in, argv[i]) < 0)
			goto err;
	if (!nargs) {
		usage(stderr);
		goto err;
	}
	if (!in.n) {
		fprintf(stderr, "iostrata report: no logs (*" FINAL_SUFFIX " or *" LIVE_SUFFIX ") found in %s%s\n",
			argv[argc - nargs], nargs > 1 ? " and the other arguments" : "");
		goto err;
	}
	logs = calloc(in.n, sizeof *logs);
	if (!logs) {
		fprintf(stderr, "iostrata report: out of memory\n");
		ret = 1;
		goto err;
	}
	for (size_t k = 0; k < in.n; k++, nlogs++) {
		if (log_file_read(in.paths[k], &logs[k], err, sizeof err) < 0) {
			fprintf(stderr, "iostrata report: %s\n", err);
			goto err;
		}
	}
	ret = 1;
	if (ana_profile_build(logs, nlogs, &prof) < 0) {
		fprintf(stderr, "iostrata report: out of memory\n");
		goto err;
	}
	have_prof = 1;
	for (size_t k = 0; k < in.nskipped; k++)
		if (ana_profile_add_warning(&prof, "%s: dangling live link skipped", in.skipped[k]) < 0)
			goto err;
	/* damage the reader stepped over: in the report's warnings, and once on stderr with a
	 * non-zero exit, while the report shows what could be read */
	int damaged = 0;
	for (size_t k = 0; k < nlogs; k++) {
		if (!logs[k].warning)
			continue;
		if (ana_profile_add_warning(&prof, "%s%s", logs[k].warning,
					    logs[k].nwarnings > 1 ? " (and more damage after it)" : "") < 0)
			goto err;
		if (!damaged++)
			fprintf(stderr, "iostrata report: %s%s\n", logs[k].warning,
				nlogs > 1 ? " (the report shows what could be read)" : "");
	}
	read_mounts(logs, nlogs, &mounts);
	opts.mounts = mounts.v;
	opts.nmounts = mounts.n;
	for (size_t k = 0; k < nlogs; k++)
		if (logs[k].trace_dropped &&
		    ana_profile_add_warning(&prof, "pid %d: %llu calls not traced (the trace area was full, or a signal "
						   "handler's call came inside the trace code): run --trace-mb more",
					    logs[k].hdr.pid, (unsigned long long)logs[k].trace_dropped) < 0)
			goto err;
	/* a traced job: its timeline, the contention score and the per-call breakdown */
	for (size_t k = 0; k < nlogs && !have_tl; k++) {
		if (!logs[k].ntrace_threads)
			continue;
		char terr[512];
		if (tl_build_from(logs, nlogs, &tl, terr, sizeof terr) < 0) {
			if (ana_profile_add_warning(&prof, "the trace could not be merged: %s", terr) < 0)
				goto err;
			break;
		}
		have_tl = 1;
		if (tl_sci(&tl, &sci) < 0 || tl_breakdown(&tl, &bd) < 0) {
			fprintf(stderr, "iostrata report: out of memory\n");
			goto err;
		}
		opts.timeline = &tl;
		opts.sci = &sci;
		opts.breakdown = &bd;
	}
	int r = json ? ana_report_json(stdout, &prof, &opts) : ana_report_text(stdout, &prof, &opts);
	if (r < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "iostrata report: writing the report: %s\n", strerror(r == -ENOMEM ? ENOMEM : EIO));
		goto err;
	}
	ret = damaged ? 1 : 0;
err:
	if (have_tl) {
		tl_sci_free(&sci);
		tl_breakdown_free(&bd);
		tl_free(&tl);
	}
	if (have_prof)
		ana_profile_free(&prof);
	for (size_t k = 0; k < nlogs; k++)
		log_file_free(&logs[k]);
	free(logs);
	inputs_free(&in);
	mounts_free(&mounts);
	return ret;
}
