/* SPDX-License-Identifier: MIT */
/*
 * `iostrata merge [--force] [--remove] -o FILE DIR|LOG|ARCHIVE...`: a job's final logs combined
 * into one job archive (src/log/archive.c), which `dump` reads and the job loader of `report` and
 * `timeline` reads like the directory. Every log is parsed before it goes in; live logs (running
 * processes, or dead ones not recovered) are refused, because their counters may still change or
 * be finalized by `iostrata recover`. FILE is written as FILE.tmp.PID, read back and checked member
 * by member against what was read, and only then renamed into place; --remove deletes the merged
 * logs after that. It does not interpret logs beyond asking the reader whether they are live.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/pool.h"
#include "cli/cli.h"
#include "iostrata/reader.h"
#include "log/archive.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata merge [--force] [--remove] -o FILE DIR|LOG|ARCHIVE...\n"
		   "  combine a job's final logs (*.iost of DIR, logs, members of other archives) into one\n"
		   "  compressed job archive FILE, which dump, report and timeline read like the directory\n"
		   "  -o FILE     the archive to write (as FILE.tmp.PID, renamed once complete and verified)\n"
		   "  --force     replace FILE when it exists\n"
		   "  --remove    delete the merged logs and archives once FILE is complete and verified\n"
		   "  -h, --help  this text\n"
		   "  Live logs (a process still running, or killed and not recovered) are refused:\n"
		   "  wait for running processes and run 'iostrata recover DIR' for dead ones first.\n");
}

/* One member to be: a log file, or a member of an archive given as input. */
struct src {
	char *name;   /* member name: the file's base name, or the member's name */
	char *path;   /* the file (a log or an archive) it comes from */
	size_t arc;   /* archive input: index into arcs[]; SIZE_MAX for a log file */
	size_t idx;   /* member index in that archive */
	uint64_t mtime_ns;
	uint64_t raw_size;
	uint32_t raw_crc;
};

struct merge {
	struct src *s;
	size_t n, cap;
	struct log_archive **arcs;
	char **arc_paths;
	size_t narcs;
	dev_t out_dev;
	ino_t out_ino;
	int out_exists;
	size_t live, running, bad;
	char first_live[CLI_PATH];
};

static int add_src(struct merge *m, const char *name, const char *path, size_t arc, size_t idx, uint64_t mtime)
{
	if (ana_grow(&m->s, &m->cap, m->n + 1, sizeof *m->s) < 0)
		return -ENOMEM;
	struct src *s = &m->s[m->n];
	*s = (struct src){.name = strdup(name), .path = strdup(path), .arc = arc, .idx = idx, .mtime_ns = mtime};
	if (!s->name || !s->path) {
		free(s->name);
		free(s->path);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* A live link whose file its image kept through an exec, its final log beside it: that log stands
 * for the image (log_live_superseded), so the link is no live log to refuse. */
static int superseded(const char *link)
{
	struct log_file lf;
	char err[512], fin[CLI_PATH];
	if (log_file_read(link, &lf, err, sizeof err) < 0)
		return 0;
	int r = log_live_superseded(&lf, fin, sizeof fin);
	log_file_free(&lf);
	return r;
}

/* A live log found: counted, the first one named in the message. */
static void note_live(struct merge *m, const char *path)
{
	char err[512];
	struct log_file lf;
	if (!m->live++)
		snprintf(m->first_live, sizeof m->first_live, "%s", path);
	if (log_file_read(path, &lf, err, sizeof err) == 0) {
		m->running += log_live_alive(lf.hdr.pid, lf.hdr.proc_start_ticks);
		log_file_free(&lf);
	}
}

static int add_archive(struct merge *m, const char *path)
{
	char err[1024];
	struct log_archive *a;
	if (log_archive_open(path, &a, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata merge: %s\n", err);
		m->bad++;
		return 0;
	}
	struct log_archive **na = realloc(m->arcs, (m->narcs + 1) * sizeof *na);
	char **np = na ? realloc(m->arc_paths, (m->narcs + 1) * sizeof *np) : NULL;
	if (na)
		m->arcs = na;
	if (!na || !np || !(np[m->narcs] = strdup(path))) {
		if (np)
			m->arc_paths = np;
		log_archive_close(a);
		return -ENOMEM;
	}
	m->arc_paths = np;
	m->arcs[m->narcs] = a;
	for (size_t i = 0; i < log_archive_count(a); i++)
		if (add_src(m, log_archive_name(a, i), path, m->narcs, i, log_archive_entry(a, i)->mtime_ns) < 0) {
			m->narcs++;
			return -ENOMEM;
		}
	m->narcs++;
	return 0;
}

/* One input file: a final log, a live log (refused later), an archive, or FILE itself (skipped). */
static int add_file(struct merge *m, const char *path, const struct stat *st)
{
	if (m->out_exists && st->st_dev == m->out_dev && st->st_ino == m->out_ino)
		return 0; /* the archive being replaced is no input of itself */
	if (log_archive_is(path))
		return add_archive(m, path);
	return add_src(m, base_name(path), path, SIZE_MAX, 0,
		       (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && !strcmp(s + a - b, suffix);
}

static int add_dir(struct merge *m, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "iostrata merge: %s: %s\n", dir, strerror(errno));
		m->bad++;
		return 0;
	}
	struct dirent *de;
	int rc = 0;
	size_t before = m->n + m->narcs;
	while (rc == 0 && (de = readdir(d))) {
		char p[CLI_PATH];
		struct stat st;
		if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
			continue;
		if (ends_with(de->d_name, ".iost.live")) {
			/* a link to a live file; a stale one (its process finished meanwhile) is no log */
			if (stat(p, &st) == 0 && !superseded(p))
				note_live(m, p);
			continue;
		}
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (ends_with(de->d_name, ".iost") || log_archive_is(p))
			rc = add_file(m, p, &st);
	}
	closedir(d);
	if (rc == 0 && m->n + m->narcs == before && !m->live) {
		fprintf(stderr, "iostrata merge: %s: no iostrata logs (*.iost) in this directory\n", dir);
		m->bad++;
	}
	return rc;
}

static int cmp_src(const void *a, const void *b)
{
	return strcmp(((const struct src *)a)->name, ((const struct src *)b)->name);
}

/* The bytes of source s, checked by the reader: 0 with *buf (malloc'ed), or -1 with a message
 * printed (a corrupt log: bad input) or -2 (a live one). */
static int load_src(struct merge *m, struct src *s, void **buf, size_t *len)
{
	char err[1024];
	*buf = NULL;
	if (s->arc != SIZE_MAX) {
		if (log_archive_member(m->arcs[s->arc], s->idx, buf, len, err, sizeof err) < 0) {
			fprintf(stderr, "iostrata merge: %s\n", err);
			return -1;
		}
	} else {
		int fd = open(s->path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			fprintf(stderr, "iostrata merge: %s: %s\n", s->path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		*len = (size_t)st.st_size;
		char *p = *buf = malloc(*len ? *len : 1);
		size_t got = 0;
		while (p && got < *len) {
			ssize_t r = read(fd, p + got, *len - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(fd);
		if (!p || got != *len) {
			fprintf(stderr, "iostrata merge: %s: %s\n", s->path, p ? "changed while being read" : "out of memory");
			free(*buf);
			*buf = NULL;
			return -1;
		}
	}
	struct log_file lf;
	char who[CLI_PATH + 300];
	if (s->arc != SIZE_MAX)
		snprintf(who, sizeof who, "%s:%s", s->path, s->name);
	else
		snprintf(who, sizeof who, "%s", s->path);
	if (log_file_parse(*buf, *len, who, &lf, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata merge: %s\n", err);
		free(*buf);
		*buf = NULL;
		return -1;
	}
	int live = lf.live;
	log_file_free(&lf);
	if (live) {
		note_live(m, s->path);
		free(*buf);
		*buf = NULL;
		return -2;
	}
	return 0;
}

/* Read the archive at tmp back: the same members, each decompressing to the bytes merged. */
static int verify(struct merge *m, const char *tmp, char *err, size_t errlen)
{
	struct log_archive *a;
	int rc = log_archive_open(tmp, &a, err, errlen);
	if (rc < 0)
		return rc;
	if (log_archive_count(a) != m->n) {
		snprintf(err, errlen, "%s: %zu members read back, %zu written", tmp, log_archive_count(a), m->n);
		log_archive_close(a);
		return -EIO;
	}
	for (size_t i = 0; i < m->n && rc == 0; i++) {
		const struct log_archive_entry *e = log_archive_entry(a, i);
		void *buf;
		size_t len;
		if (strcmp(log_archive_name(a, i), m->s[i].name) || e->raw_size != m->s[i].raw_size ||
		    e->raw_crc != m->s[i].raw_crc) {
			snprintf(err, errlen, "%s: member %zu (%s) differs from what was merged", tmp, i, m->s[i].name);
			rc = -EIO;
		} else if ((rc = log_archive_member(a, i, &buf, &len, err, errlen)) == 0) {
			free(buf); /* its checksums were checked against the bytes merged */
		}
	}
	log_archive_close(a);
	return rc;
}

static void fsync_dir_of(const char *path)
{
	char dir[CLI_PATH];
	snprintf(dir, sizeof dir, "%s", path);
	char *s = strrchr(dir, '/');
	if (s == dir)
		s[1] = '\0';
	else if (s)
		*s = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static void free_merge(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->s[i].name);
		free(m->s[i].path);
	}
	free(m->s);
	for (size_t i = 0; i < m->narcs; i++) {
		log_archive_close(m->arcs[i]);
		free(m->arc_paths[i]);
	}
	free(m->arcs);
	free(m->arc_paths);
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	int force = 0, remove_after = 0, i, status = 2;
	struct merge m = {0};
	struct log_archive_writer *w = NULL;
	char tmp[CLI_PATH], err[1024];
	uint64_t in_bytes = 0;

	/* options may come before or after the inputs (`merge DIR -o FILE`), up to "--" */
	char **inputs = calloc((size_t)argc, sizeof *inputs);
	int ninputs = 0, opts_done = 0;
	if (!inputs) {
		fprintf(stderr, "iostrata merge: out of memory\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (opts_done || argv[i][0] != '-' || !argv[i][1]) {
			inputs[ninputs++] = argv[i];
		} else if (!strcmp(argv[i], "--")) {
			opts_done = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			free(inputs);
			return 0;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			force = 1;
		} else if (!strcmp(argv[i], "--remove")) {
			remove_after = 1;
		} else {
			fprintf(stderr, "iostrata merge: %s option '%s'\n", !strcmp(argv[i], "-o") ? "missing FILE after" : "unknown",
				argv[i]);
			usage(stderr);
			free(inputs);
			return 2;
		}
	}
	if (!out || !*out || !ninputs) {
		fprintf(stderr, "iostrata merge: %s\n", !out || !*out ? "-o FILE is required" : "no DIR or log to merge");
		usage(stderr);
		free(inputs);
		return 2;
	}
	struct stat ost;
	if (stat(out, &ost) == 0) {
		if (!S_ISREG(ost.st_mode) || !force) {
			fprintf(stderr, "iostrata merge: %s: %s\n", out,
				S_ISREG(ost.st_mode) ? "exists (use --force to replace it)" : "exists and is not a regular file");
			free(inputs);
			return 2;
		}
		m.out_exists = 1;
		m.out_dev = ost.st_dev;
		m.out_ino = ost.st_ino;
	}
	for (i = 0; i < ninputs; i++) {
		struct stat st;
		int rc = 0;
		if (stat(inputs[i], &st) < 0) {
			fprintf(stderr, "iostrata merge: %s: %s\n", inputs[i], strerror(errno));
			m.bad++;
		} else if (S_ISDIR(st.st_mode)) {
			rc = add_dir(&m, inputs[i]);
		} else if (ends_with(inputs[i], ".iost.live")) {
			if (!superseded(inputs[i]))
				note_live(&m, inputs[i]);
		} else {
			rc = add_file(&m, inputs[i], &st);
		}
		if (rc < 0) {
			fprintf(stderr, "iostrata merge: out of memory\n");
			goto done;
		}
	}
	if (m.bad)
		goto done;
	qsort(m.s, m.n, sizeof *m.s, cmp_src);
	for (size_t k = 1; k < m.n; k++)
		if (!strcmp(m.s[k - 1].name, m.s[k].name)) {
			fprintf(stderr, "iostrata merge: two logs named %s (%s and %s): member names must be unique\n",
				m.s[k].name, m.s[k - 1].path, m.s[k].path);
			goto done;
		}
	if (m.n == 0 && !m.live) {
		fprintf(stderr, "iostrata merge: no logs to merge\n");
		goto done;
	}
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", out, (int)getpid()) >= (int)sizeof tmp) {
		fprintf(stderr, "iostrata merge: %s: path too long\n", out);
		goto done;
	}
	if (!m.live && log_archive_create(tmp, &w, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata merge: %s\n", err);
		status = 1;
		goto done;
	}
	for (size_t k = 0; k < m.n; k++) {
		void *buf;
		size_t len;
		int r = load_src(&m, &m.s[k], &buf, &len);
		if (r == -1) {
			m.bad++;
			break;
		}
		if (r == -2 || m.live)
			continue; /* the rest is still checked, so the message counts every live log */
		m.s[k].raw_size = len;
		m.s[k].raw_crc = log_crc32c(0, buf, len);
		in_bytes += len;
		r = log_archive_add(w, m.s[k].name, buf, len, m.s[k].mtime_ns, err, sizeof err);
		free(buf);
		if (r < 0) {
			fprintf(stderr, "iostrata merge: %s\n", err);
			status = 1;
			goto done;
		}
	}
	if (m.bad)
		goto done;
	if (m.live) {
		fprintf(stderr,
			"iostrata merge: %s: %zu live log%s (%zu of a running process, %zu of a dead one not recovered): "
			"wait for running processes and run 'iostrata recover' on the job directory first\n",
			m.first_live, m.live, m.live == 1 ? "" : "s", m.running, m.live - m.running);
		status = 1;
		goto done;
	}
	int r = log_archive_finish(w, err, sizeof err);
	w = NULL;
	if (r < 0 || verify(&m, tmp, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata merge: %s\n", err);
		unlink(tmp);
		status = 1;
		goto done;
	}
	/* without --force, FILE must still not exist: never replace one made meanwhile */
	r = force ? rename(tmp, out) : renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE);
	if (r < 0 && !force && errno == EINVAL) /* a filesystem without RENAME_NOREPLACE */
		r = link(tmp, out) == 0 ? unlink(tmp) : -1;
	if (r < 0) {
		fprintf(stderr, "iostrata merge: %s: %s\n", out, errno == EEXIST ? "exists (use --force to replace it)" : strerror(errno));
		unlink(tmp);
		status = errno == EEXIST ? 2 : 1;
		goto done;
	}
	fsync_dir_of(out);
	struct stat fst;
	uint64_t out_bytes = stat(out, &fst) == 0 ? (uint64_t)fst.st_size : 0;
	size_t removed = 0, failed = 0;
	if (remove_after) {
		for (size_t k = 0; k < m.n; k++)
			if (m.s[k].arc == SIZE_MAX) {
				if (unlink(m.s[k].path) == 0)
					removed++;
				else if (errno != ENOENT && !failed++)
					fprintf(stderr, "iostrata merge: cannot remove %s: %s\n", m.s[k].path, strerror(errno));
			}
		for (size_t k = 0; k < m.narcs; k++) {
			if (unlink(m.arc_paths[k]) == 0)
				removed++;
			else if (errno != ENOENT && !failed++)
				fprintf(stderr, "iostrata merge: cannot remove %s: %s\n", m.arc_paths[k], strerror(errno));
		}
	}
	printf("merged %zu log%s (%llu bytes) into %s (%llu bytes)", m.n, m.n == 1 ? "" : "s",
	       (unsigned long long)in_bytes, out, (unsigned long long)out_bytes);
	if (remove_after)
		printf("; removed %zu file%s", removed, removed == 1 ? "" : "s");
	printf("\n");
	status = failed ? 1 : 0;
done:
	if (w)
		log_archive_abort(w);
	free_merge(&m);
	free(inputs);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "iostrata merge: cannot write output: %s\n", strerror(errno));
		status = status ? status : 1;
	}
	return status;
}
