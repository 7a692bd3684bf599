/* SPDX-License-Identifier: MIT */
/*
 * The job-directory scan (jobdir.h): which files of a job's arguments are logs. A scan of 10,000
 * logs costs one getdents pass and one stat per entry; the logs themselves are read later, one at
 * a time if the caller wants.
 */
#include "log/jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && !strcmp(s + n - k, suffix);
}

int log_scan_is_log_name(const char *name)
{
	return name[0] != '.' && (ends_with(name, LOG_FINAL_SUFFIX) || ends_with(name, LOG_LIVE_SUFFIX) ||
				  ends_with(name, LOG_ARCHIVE_SUFFIX));
}

static int push(char ***v, size_t *n, char *s)
{
	if (!s)
		return -ENOMEM;
	char **w = realloc(*v, (*n + 1) * sizeof *w);
	if (!w) {
		free(s);
		return -ENOMEM;
	}
	*v = w;
	w[(*n)++] = s;
	return 0;
}

static int warn(struct log_scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(struct log_scan *s, const char *fmt, ...)
{
	char *t = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&t, fmt, ap);
	va_end(ap);
	return push(&s->warnings, &s->nwarnings, r < 0 ? NULL : t);
}

/* One entry of a directory, or a file named directly (named = 1: any name is taken). */
static int add_file(struct log_scan *s, const char *path, int named)
{
	struct stat st;

	if (stat(path, &st) == 0) {
		if (S_ISREG(st.st_mode))
			return push(&s->paths, &s->npaths, strdup(path));
		if (named)
			return -EINVAL;
		/* a directory or a fifo named like a log is not one */
		return warn(s, "%s: not a regular file; skipped", path);
	}
	int e = errno;
	struct stat lst;
	if (e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
		return warn(s, "%s: dangling link to a live log that no longer exists (its process ended or was "
			       "recovered); skipped", path);
	if (named)
		return -e;
	return warn(s, "%s: %s; skipped", path, strerror(e));
}

static int add_dir(struct log_scan *s, const char *dir, char *err, size_t errlen)
{
	struct dirent **de = NULL;
	int n = scandir(dir, &de, NULL, alphasort);
	int r = 0;

	if (n < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return r;
	}
	size_t dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	for (int i = 0; i < n; i++) {
		if (r == 0 && log_scan_is_log_name(de[i]->d_name)) {
			char *path = NULL;
			if (asprintf(&path, "%.*s/%s", (int)dlen, dir, de[i]->d_name) < 0)
				r = -ENOMEM;
			else
				r = add_file(s, path, 0);
			free(path);
		}
		free(de[i]);
	}
	free(de);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", dir);
	return r;
}

int log_scan_args(const char *const *args, size_t nargs, struct log_scan *out, char *err, size_t errlen)
{
	int r = 0;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < nargs && r == 0; i++) {
		struct stat st;
		const char *a = args[i];
		if (!a[0]) {
			snprintf(err, errlen, "'': an empty path names no job");
			r = -EINVAL;
		} else if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
			r = add_dir(out, a, err, errlen);
		} else if ((r = add_file(out, a, 1)) == -EINVAL) {
			snprintf(err, errlen, "%s: not a job directory or a log file", a);
		} else if (r < 0 && r != -ENOMEM) {
			snprintf(err, errlen, "%s: %s", a, strerror(-r));
		}
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (r < 0)
		log_scan_free(out);
	return r;
}

void log_scan_free(struct log_scan *s)
{
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i]);
	for (size_t i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->paths);
	free(s->warnings);
	memset(s, 0, sizeof *s);
}
