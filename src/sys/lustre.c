/* SPDX-License-Identifier: MIT */
/*
 * Lustre statistics: the parsers of stats and rpc_stats text, and the scan of the roots
 * (lustre.h). The parsers cut a private copy of the text; the structures they fill hold copies
 * of every name, so nothing points into the text once a parse returns.
 */
#include "sys/lustre.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/field.h"
#include "sys/text.h"

/* Most fields a line of either format has (a 2-column histogram row: key, 3, '|', 3). */
#define MAX_FIELDS 12
/* Most targets of one kind directory read: far past any file system's count of OSTs. */
#define MAX_TARGETS 65536

/* "1700000000.123456789": seconds, a dot and the nine digits %09lu writes. */
static int parse_time(const char *s, struct sys_lustre_time *t)
{
	const char *dot = strchr(s, '.');
	uint64_t ns;
	if (!dot || strlen(dot + 1) != 9 || sys_field_u64(s, (size_t)(dot - s), &t->sec) < 0 ||
	    sys_field_u64(dot + 1, 9, &ns) < 0)
		return -1;
	t->nsec = (uint32_t)ns;
	return 0;
}

/* A header line, fields already split: 1 when it was one (and is stored), 0 when it is not one,
 * -1 when it is one but malformed. lprocfs_stats_header writes the names of rpc_stats with a
 * colon: after the padding before Lustre 2.15.2 ("snapshot_time            : 1.0"), right after
 * the name since ("snapshot_time:            1.0"); stats files have none. All are taken. */
static int parse_header(char **f, int n, struct sys_lustre_header *h)
{
	static const char *const names[3] = {"snapshot_time", "start_time", "elapsed_time"};
	struct sys_lustre_time *const slot[3] = {&h->snapshot, &h->start, &h->elapsed};
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(names[i]);
		if (strncmp(f[0], names[i], l) || (f[0][l] && strcmp(f[0] + l, ":")))
			continue;
		int v = !f[0][l] && n > 1 && !strcmp(f[1], ":") ? 2 : 1; /* the value's field */
		if ((n != v + 1 && n != v + 2) || (n == v + 2 && strcmp(f[v + 1], "secs.nsecs")) ||
		    (h->has_times & (1u << i)) || parse_time(f[v], slot[i]) < 0)
			return -1;
		h->has_times |= 1u << i;
		return 1;
	}
	return 0;
}

/* stats */

struct stats_parser {
	struct sys_lustre_stats *out;
	size_t cap;
};

/* "name COUNT samples [unit] [min max sum [sumsq]]": 0, or -1 when it is not such a line. */
static int parse_stat(char **f, int n, struct sys_lustre_stat *st)
{
	memset(st, 0, sizeof *st);
	if (n < 3 || strcmp(f[2], "samples") || sys_text_copy_name(st->name, sizeof st->name, f[0], strlen(f[0])) < 0 ||
	    sys_field_u64(f[1], strlen(f[1]), &st->count) < 0)
		return -1;
	int i = 3;
	if (i < n && f[i][0] == '[') {
		size_t l = strlen(f[i]);
		if (l < 2 || f[i][l - 1] != ']' || l - 2 >= sizeof st->unit)
			return -1;
		memcpy(st->unit, f[i] + 1, l - 2);
		st->unit[l - 2] = 0;
		i++;
	}
	if (n - i != 0 && n - i != 3 && n - i != 4)
		return -1;
	if (n - i >= 3) {
		if (sys_field_i64(f[i], strlen(f[i]), &st->min) < 0 || sys_field_i64(f[i + 1], strlen(f[i + 1]), &st->max) < 0 ||
		    sys_field_i64(f[i + 2], strlen(f[i + 2]), &st->sum) < 0)
			return -1;
		st->has_minmax = 1;
	}
	if (n - i == 4) {
		if (sys_field_u64(f[i + 3], strlen(f[i + 3]), &st->sumsq) < 0)
			return -1;
		st->has_sumsq = 1;
	}
	return 0;
}

static int stats_line(char *line, size_t len, void *ctx)
{
	struct stats_parser *ps = ctx;
	struct sys_lustre_stats *out = ps->out;
	char *f[MAX_FIELDS];
	struct sys_lustre_stat st;
	int n = sys_text_split_blanks(line, f, MAX_FIELDS), h;

	(void)len;
	if (n <= 0) {
		out->skipped++;
		return 0;
	}
	if ((h = parse_header(f, n, &out->hdr)) != 0) {
		if (h < 0)
			out->skipped++;
		return 0;
	}
	if (parse_stat(f, n, &st) < 0) {
		out->skipped++;
		return 0;
	}
	struct sys_lustre_stat *v = sys_text_grow(out->v, &ps->cap, out->n, sizeof *v, 32);
	if (!v)
		return -ENOMEM;
	out->v = v;
	v[out->n++] = st;
	return 0;
}

void sys_lustre_stats_free(struct sys_lustre_stats *s)
{
	free(s->v);
	*s = (struct sys_lustre_stats){0};
}

/* The stats of buf[0..len), or of all f holds when f is not NULL. */
static int parse_stats(FILE *f, const char *buf, size_t len, struct sys_lustre_stats *out)
{
	struct stats_parser ps = {.out = out};
	*out = (struct sys_lustre_stats){0};
	int r = sys_text_lines(f, buf, len, SYS_LUSTRE_TEXT_MAX, NULL, stats_line, &ps, &out->skipped);
	if (r < 0)
		sys_lustre_stats_free(out);
	return r;
}

int sys_lustre_stats_parse(const char *buf, size_t len, struct sys_lustre_stats *out)
{
	return parse_stats(NULL, buf, len, out);
}

/* rpc_stats */

struct rpc_parser {
	struct sys_lustre_rpc_stats *out;
	struct sys_lustre_hist *open; /* the histogram rows go to, NULL when none */
	unsigned pending_ncols;       /* column names waiting for their title line */
	char pending[2][SYS_LUSTRE_UNIT_MAX];
};

/* Where the kernel stops printing rows (read_cum == read_tot && write_cum == write_tot): every
 * column's cumulative percentage is 100, or 0 for a column with no RPC at all. A histogram with
 * no RPC in any column is not taken as complete: its one row "0: 0 0 0" is also what the first
 * row of a longer one looks like, cut after it. */
static int hist_complete(const struct sys_lustre_hist *h)
{
	int any = 0;
	if (h->nrows == 0)
		return 0;
	const struct sys_lustre_hist_row *last = &h->rows[h->nrows - 1];
	for (unsigned c = 0; c < h->ncols; c++) {
		uint64_t tot = 0;
		for (size_t i = 0; i < h->nrows; i++)
			tot |= h->rows[i].rpcs[c];
		if (last->cum[c] != 100 && (tot || last->cum[c]))
			return 0;
		any |= tot != 0;
	}
	return any;
}

/* Ends the open histogram: followed by more text it was complete; at the end of the text only
 * if its rows say so. */
static void close_hist(struct rpc_parser *ps, int at_end)
{
	if (ps->open && at_end && !hist_complete(ps->open)) {
		ps->out->nhists--;
		ps->out->dropped++;
	}
	ps->open = NULL;
}

/* "\t\t\tread\t\t\twrite" or "\t\t\tmodify", fields already split: 0 when they are the
 * column names of the next title (now pending), -1 when not. */
static int parse_columns(char **f, int n, struct rpc_parser *ps)
{
	char cols[2][SYS_LUSTRE_UNIT_MAX] = {"", ""};
	if (n < 1 || n > 2)
		return -1;
	for (int i = 0; i < n; i++) {
		for (const char *p = f[i]; *p; p++)
			if ((*p < 'a' || *p > 'z') && (*p < 'A' || *p > 'Z') && *p != '_')
				return -1;
		if (sys_text_copy_name(cols[i], sizeof cols[i], f[i], strlen(f[i])) < 0)
			return -1;
	}
	memcpy(ps->pending, cols, sizeof cols);
	ps->pending_ncols = (unsigned)n;
	return 0;
}

/* "pages per rpc         rpcs   % cum % |       rpcs   % cum %": 0 (a new histogram is open),
 * -1 when it is not a title line, -ENOMEM. */
static int parse_title(char **f, int n, struct rpc_parser *ps)
{
	static const char *const cols[9] = {"rpcs", "%", "cum", "%", "|", "rpcs", "%", "cum", "%"};
	struct sys_lustre_rpc_stats *out = ps->out;
	int k = ps->pending_ncols == 1 ? 4 : 9, t = n - k; /* the title's words come before */
	if (t <= 0)
		return -1;
	for (int i = 0; i < t; i++)
		if (strpbrk(f[i], "%|"))
			return -1; /* a two-column title after one column name */
	for (int i = 0; i < k; i++)
		if (strcmp(f[t + i], cols[i]))
			return -1;
	if (out->nhists == SYS_LUSTRE_HISTS_MAX)
		return -1;
	if (!out->hists) {
		out->hists = calloc(SYS_LUSTRE_HISTS_MAX, sizeof *out->hists);
		if (!out->hists)
			return -ENOMEM;
	}
	struct sys_lustre_hist *h = &out->hists[out->nhists];
	memset(h, 0, sizeof *h);
	size_t l = 0;
	for (int i = 0; i < t; i++) { /* the title's words, joined by one space */
		size_t w = strlen(f[i]);
		if (l + w + (i > 0) >= sizeof h->title)
			return -1;
		if (i > 0)
			h->title[l++] = ' ';
		memcpy(h->title + l, f[i], w);
		l += w;
	}
	h->title[l] = 0;
	h->ncols = ps->pending_ncols;
	memcpy(h->cols, ps->pending, sizeof h->cols);
	ps->pending_ncols = 0;
	out->nhists++;
	ps->open = h;
	return 0;
}

/* "8:\t\t    57  19  60   |         12   4  22": a row of the open histogram. */
static int parse_row(char **f, int n, struct sys_lustre_hist *h)
{
	struct sys_lustre_hist_row row = {0};
	size_t kl = strlen(f[0]);
	if (n != (h->ncols == 1 ? 4 : 8) || kl < 2 || f[0][kl - 1] != ':' || sys_field_u64(f[0], kl - 1, &row.key) < 0 ||
	    (h->ncols == 2 && strcmp(f[4], "|")) || h->nrows == SYS_LUSTRE_HIST_ROWS)
		return -1;
	for (unsigned c = 0; c < h->ncols; c++) {
		char **v = f + 1 + 4 * c;
		if (sys_field_u64(v[0], strlen(v[0]), &row.rpcs[c]) < 0 ||
		    sys_field_u32(v[1], strlen(v[1]), &row.pct[c]) < 0 || sys_field_u32(v[2], strlen(v[2]), &row.cum[c]) < 0)
			return -1;
	}
	h->rows[h->nrows++] = row;
	return 0;
}

/* "read RPCs in flight:  3": a name up to the colon, one signed number. */
static int parse_scalar(const char *line, struct sys_lustre_rpc_stats *out)
{
	const char *colon = strrchr(line, ':'), *p;
	struct sys_lustre_scalar sc;
	size_t nl;
	if (!colon || out->nscalars == SYS_LUSTRE_SCALARS_MAX)
		return -1;
	for (nl = (size_t)(colon - line); nl > 0 && line[nl - 1] == ' '; nl--)
		;
	const char *tab = strchr(line, '\t');
	if (line[0] == ' ' || (tab && tab < colon) || sys_text_copy_name(sc.name, sizeof sc.name, line, nl) < 0)
		return -1;
	for (p = colon + 1; *p == ' ' || *p == '\t'; p++)
		;
	if (p == colon + 1 || sys_field_i64(p, strlen(p), &sc.value) < 0 || sys_lustre_scalar_by_name(out, sc.name))
		return -1;
	out->scalars[out->nscalars++] = sc;
	return 0;
}

static int rpc_line(char *line, size_t len, void *ctx)
{
	struct rpc_parser *ps = ctx;
	struct sys_lustre_rpc_stats *out = ps->out;
	char *f[MAX_FIELDS], copy[256];
	int n, r;

	if (!line[0]) { /* the empty line before each histogram */
		close_hist(ps, 0);
		ps->pending_ncols = 0;
		return 0;
	}
	/* the scalar parser wants the line whole: keep it before the split cuts it */
	int tab = line[0] == '\t';
	if (len < sizeof copy)
		memcpy(copy, line, len + 1);
	else
		copy[0] = 0;
	if ((n = sys_text_split_blanks(line, f, MAX_FIELDS)) <= 0) {
		out->skipped++;
		return 0;
	}
	if (tab && parse_columns(f, n, ps) == 0) { /* only these lines start with a tab */
		close_hist(ps, 0);
		return 0;
	}
	if ((r = parse_header(f, n, &out->hdr)) != 0) {
		if (r < 0)
			out->skipped++;
		return 0;
	}
	if (ps->open && parse_row(f, n, ps->open) == 0)
		return 0;
	if (ps->pending_ncols && (r = parse_title(f, n, ps)) != -1)
		return r;
	if (copy[0] && parse_scalar(copy, out) == 0)
		return 0;
	out->skipped++;
	return 0;
}

void sys_lustre_rpc_stats_free(struct sys_lustre_rpc_stats *s)
{
	free(s->hists);
	*s = (struct sys_lustre_rpc_stats){0};
}

/* The rpc_stats of buf[0..len), or of all f holds when f is not NULL. */
static int parse_rpc_stats(FILE *f, const char *buf, size_t len, struct sys_lustre_rpc_stats *out)
{
	struct rpc_parser ps = {.out = out};
	*out = (struct sys_lustre_rpc_stats){0};
	int r = sys_text_lines(f, buf, len, SYS_LUSTRE_TEXT_MAX, NULL, rpc_line, &ps, &out->skipped);
	if (r < 0) {
		sys_lustre_rpc_stats_free(out);
		return r;
	}
	close_hist(&ps, 1);
	return 0;
}

int sys_lustre_rpc_stats_parse(const char *buf, size_t len, struct sys_lustre_rpc_stats *out)
{
	return parse_rpc_stats(NULL, buf, len, out);
}

/* Reading */

int sys_lustre_stats_read(FILE *f, struct sys_lustre_stats *out)
{
	return parse_stats(f, NULL, 0, out);
}

int sys_lustre_rpc_stats_read(FILE *f, struct sys_lustre_rpc_stats *out)
{
	return parse_rpc_stats(f, NULL, 0, out);
}

/* The file at path, its last component not a symbolic link, as a stream. */
static FILE *open_nofollow(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

int sys_lustre_stats_load(const char *path, struct sys_lustre_stats *out)
{
	*out = (struct sys_lustre_stats){0};
	FILE *f = open_nofollow(path);
	if (!f)
		return -errno;
	int r = sys_lustre_stats_read(f, out);
	fclose(f);
	return r;
}

int sys_lustre_rpc_stats_load(const char *path, struct sys_lustre_rpc_stats *out)
{
	*out = (struct sys_lustre_rpc_stats){0};
	FILE *f = open_nofollow(path);
	if (!f)
		return -errno;
	int r = sys_lustre_rpc_stats_read(f, out);
	fclose(f);
	return r;
}

/* Lookups */

const struct sys_lustre_stat *sys_lustre_stat_by_name(const struct sys_lustre_stats *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

const struct sys_lustre_scalar *sys_lustre_scalar_by_name(const struct sys_lustre_rpc_stats *s, const char *name)
{
	for (size_t i = 0; i < s->nscalars; i++)
		if (!strcmp(s->scalars[i].name, name))
			return &s->scalars[i];
	return NULL;
}

const struct sys_lustre_hist *sys_lustre_hist_by_title(const struct sys_lustre_rpc_stats *s, const char *title,
						       const char *col0)
{
	for (size_t i = 0; i < s->nhists; i++)
		if (!strcmp(s->hists[i].title, title) && !strcmp(s->hists[i].cols[0], col0))
			return &s->hists[i];
	return NULL;
}

/* Discovery */

static const struct {
	enum sys_lustre_kind kind;
	const char *dir, *file;
	enum sys_lustre_format format;
} kinds[SYS_LUSTRE_KIND_COUNT] = {
	{SYS_LUSTRE_LLITE, "llite", "stats", SYS_LUSTRE_FMT_STATS},
	{SYS_LUSTRE_OSC, "osc", "rpc_stats", SYS_LUSTRE_FMT_RPC_STATS},
	{SYS_LUSTRE_MDC, "mdc", "rpc_stats", SYS_LUSTRE_FMT_RPC_STATS},
	{SYS_LUSTRE_OBDFILTER, "obdfilter", "stats", SYS_LUSTRE_FMT_STATS},
	{SYS_LUSTRE_MDT, "mdt", "md_stats", SYS_LUSTRE_FMT_STATS},
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the entries of the directory dfd (closed here): the count, or -ENOMEM.
 * Names too long to be a target count in *skipped. */
static int list_dir(int dfd, char ***names, size_t *skipped)
{
	DIR *d = fdopendir(dfd);
	char **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	if (!d) {
		close(dfd);
		(*skipped)++;
		*names = NULL;
		return 0;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strlen(e->d_name) >= SYS_LUSTRE_TARGET_MAX || n == MAX_TARGETS) {
			(*skipped)++;
			continue;
		}
		char **nv = sys_text_grow(v, &cap, n, sizeof *nv, 16);
		if (!nv)
			goto nomem;
		v = nv;
		if (!(v[n] = strdup(e->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_name);
	*names = v;
	return (int)n;
nomem:
	r = -ENOMEM;
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	*names = NULL;
	return r;
}

/* The targets of one kind directory under one root: their count, or the callback's negative
 * return, or -ENOMEM. */
static int scan_kind(int rootfd, const char *root, int k, sys_lustre_target_fn fn, void *ctx, size_t *skipped)
{
	struct stat st;
	char **names;
	int found = 0, r = 0;

	if (fstatat(rootfd, kinds[k].dir, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* this kind is not here */
	if (!S_ISDIR(st.st_mode)) {
		(*skipped)++; /* a link (or a file) where the kind directory should be */
		return 0;
	}
	int kfd = openat(rootfd, kinds[k].dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (kfd < 0) {
		(*skipped)++;
		return 0;
	}
	int n = list_dir(dup(kfd), &names, skipped);
	if (n < 0) {
		close(kfd);
		return n;
	}
	for (int i = 0; i < n; i++) {
		struct sys_lustre_target t = {.kind = kinds[k].kind, .format = kinds[k].format,
					      .kind_name = kinds[k].dir, .file = kinds[k].file, .root = root};
		if (r < 0)
			goto next;
		if (fstatat(kfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto next; /* gone since the listing */
		if (S_ISLNK(st.st_mode)) {
			(*skipped)++;
			goto next;
		}
		if (!S_ISDIR(st.st_mode))
			goto next; /* a file of the kind directory, not a target */
		int tfd = openat(kfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd < 0) {
			(*skipped)++;
			goto next;
		}
		int have = fstatat(tfd, kinds[k].file, &st, AT_SYMLINK_NOFOLLOW);
		close(tfd);
		if (have < 0)
			goto next; /* a target without this file */
		if (!S_ISREG(st.st_mode)) {
			(*skipped)++;
			goto next;
		}
		memcpy(t.name, names[i], strlen(names[i]) + 1);
		int pl = snprintf(t.path, sizeof t.path, "%s/%s/%s/%s", root, kinds[k].dir, names[i], kinds[k].file);
		if (pl < 0 || (size_t)pl >= sizeof t.path) {
			(*skipped)++;
			goto next;
		}
		found++;
		if (fn && (r = fn(&t, ctx)) > 0)
			r = 0;
	next:
		free(names[i]);
	}
	free(names);
	close(kfd);
	return r < 0 ? r : found;
}

int sys_lustre_scan(const struct sys_lustre_roots *roots, sys_lustre_target_fn fn, void *ctx, size_t *skipped)
{
	const char *dirs[2] = {roots && roots->proc ? roots->proc : SYS_LUSTRE_PROC_ROOT,
			       roots && roots->debug ? roots->debug : SYS_LUSTRE_DEBUG_ROOT};
	size_t skip = 0;
	int total = 0, r = 0;

	for (int i = 0; i < 2 && r >= 0; i++) {
		/* the root itself is the caller's: a link there is followed */
		int rootfd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			if (errno != ENOENT)
				skip++;
			continue; /* no root: no Lustre here */
		}
		for (int k = 0; k < SYS_LUSTRE_KIND_COUNT && r >= 0; k++) {
			int n = scan_kind(rootfd, dirs[i], k, fn, ctx, &skip);
			if (n < 0)
				r = n;
			else
				total += n;
		}
		close(rootfd);
	}
	if (skipped)
		*skipped = skip;
	return r < 0 ? r : total;
}

int sys_lustre_target_open(const struct sys_lustre_target *t)
{
	int fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *parts[3] = {t->kind_name, t->name, t->file};
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 3; i++) {
		int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (i < 2 ? O_DIRECTORY : 0);
		int next = openat(fd, parts[i], flags);
		int e = errno;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
	}
	return fd;
}
