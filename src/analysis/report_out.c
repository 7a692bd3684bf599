/* SPDX-License-Identifier: MIT */
/*
 * Renders a profile as the text report (people: 100 columns, human units, long paths cut from
 * the left so the file name stays visible) or as one JSON object (programs: exact integers,
 * times in seconds printed from integer ns so no float rounding creeps in). Strings from logs
 * are untrusted: the text form replaces control characters and invalid UTF-8 so a path cannot
 * move the cursor of the reader's terminal, and the JSON form escapes them so the output always
 * parses. Nothing here decides what is worth saying: that is profile.c, iomode.c, insights.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/report_out.h"
#include "analysis/stack.h"
#include "analysis/units.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* ---- UTF-8 and cleaning ---- */

/* Length of the valid UTF-8 sequence at s, 0 when s does not start one (overlongs, surrogates
 * and code points past U+10FFFF are invalid). Never reads past a NUL. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

size_t ana_text_clean(const char *s, char *out, size_t outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, width = 0;

	if (!outlen)
		return 0;
	while (*u) {
		size_t n = utf8_len(u);
		/* C0, DEL and C1 controls (U+0080..U+009F, which some terminals obey) become '?'. */
		int bad = n == 0 || *u < 0x20 || *u == 0x7f || (n == 2 && u[0] == 0xc2 && u[1] < 0xa0);
		size_t k = bad ? 1 : n;
		if (o + k >= outlen)
			break;
		if (bad) {
			out[o++] = '?';
		} else {
			memcpy(out + o, u, n);
			o += n;
		}
		u += k;
		width++;
	}
	out[o] = '\0';
	return width;
}

static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Start of the code point after skipping n code points of a clean string. */
static const char *skip_columns(const char *s, size_t n)
{
	while (*s && n) {
		s++;
		while (((unsigned char)*s & 0xc0) == 0x80)
			s++;
		n--;
	}
	return s;
}

void ana_text_tail(const char *s, size_t width, char *out, size_t outlen)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);

	if (!outlen)
		return;
	out[0] = '\0';
	if (!clean)
		return;
	size_t w = ana_text_clean(s, clean, len);
	if (w <= width)
		snprintf(out, outlen, "%s", clean);
	else if (width > 0)
		snprintf(out, outlen, ELLIPSIS "%s", skip_columns(clean, w - (width - 1)));
	free(clean);
}

/* The head of s in at most width columns: for a command line the program name matters. */
static void text_head(const char *s, size_t width, char *out, size_t outlen)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);

	out[0] = '\0';
	if (!clean)
		return;
	size_t w = ana_text_clean(s, clean, len);
	if (w <= width) {
		snprintf(out, outlen, "%s", clean);
	} else if (width > 0) {
		size_t n = (size_t)(skip_columns(clean, width - 1) - clean);
		snprintf(out, outlen, "%.*s" ELLIPSIS, (int)n, clean);
	}
	free(clean);
}

/* 1 when the space at sp joins a number to its unit ("4.0 KiB", "12 ms"): no line break there. */
static int unit_follows(const char *start, const char *sp)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ns", "\xc2\xb5s",
					    "ms", "s", "min", "h"};
	if (sp == start || sp[-1] < '0' || sp[-1] > '9')
		return 0;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = strlen(units[i]);
		char after = sp[1 + n];
		if (!strncmp(sp + 1, units[i], n) && (after == '\0' || strchr(" ,;:)./", after)))
			return 1;
	}
	return 0;
}

/* Word-wrap s (cleaned) to ANA_TEXT_WIDTH: first line after `first`, the rest indented by
 * `indent` columns. Words longer than a line are cut hard. */
static void wrap(FILE *f, const char *first, size_t indent, const char *s)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);
	size_t avail = ANA_TEXT_WIDTH - indent;

	if (!clean)
		return;
	ana_text_clean(s, clean, len);
	fputs(first, f);
	const char *p = clean;
	int line = 0;
	while (*p) {
		if (line)
			fprintf(f, "\n%*s", (int)indent, "");
		line = 1;
		const char *end = skip_columns(p, avail);
		if (*end && *end != ' ') {
			/* break at the last space that fits, not between a number and its unit */
			const char *sp = NULL;
			for (const char *q = p; q < end; q++)
				if (*q == ' ' && !unit_follows(clean, q))
					sp = q;
			if (sp && sp > p)
				end = sp;
		}
		fwrite(p, 1, (size_t)(end - p), f);
		p = end;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
	free(clean);
}

/* ---- tables ---- */

struct col {
	int width;
	int left; /* 1: left-aligned (text), 0: right-aligned (numbers) */
};

static void put_row(FILE *f, const struct col *cols, size_t n, const char *const *cells)
{
	fputs("  ", f);
	for (size_t i = 0; i < n; i++) {
		size_t w = text_width(cells[i]);
		size_t pad = w < (size_t)cols[i].width ? (size_t)cols[i].width - w : 0;
		if (i)
			fputs("  ", f);
		if (!cols[i].left)
			fprintf(f, "%*s", (int)pad, "");
		fputs(cells[i], f);
		if (cols[i].left && i + 1 < n)
			fprintf(f, "%*s", (int)pad, "");
	}
	fputc('\n', f);
}

/* Columns left for the last cell of a row whose other columns are cols[0..n-1). */
static size_t rest_width(const struct col *cols, size_t n)
{
	size_t used = 2;
	for (size_t i = 0; i < n; i++)
		used += (size_t)cols[i].width + 2;
	return used < ANA_TEXT_WIDTH ? ANA_TEXT_WIDTH - used : 8;
}

#define U ANA_UNIT_LEN

static const char *fmt_rate_n(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.1f", v);
	return buf;
}

/* Layers shown: posix and stdio always, the others when they have records. */
static int layer_shown(const struct ana_profile *p, unsigned l)
{
	return l == LOG_LAYER_POSIX || l == LOG_LAYER_STDIO || (l != LOG_LAYER_NONE && p->layers[l].nrecords);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static void rank_name(const struct ana_rank *k, char *buf, size_t len)
{
	if (k->rank >= 0)
		snprintf(buf, len, "%d", k->rank);
	else
		snprintf(buf, len, "pid %d", k->pid);
}

/* argv joined by spaces; arguments that need it are single-quoted so the line can be pasted. */
static char *command_line(const struct ana_proc *pr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	const char *a;
	uint32_t i;
	for (i = 0; (a = log_file_arg(pr->log, i)); i++) {
		if (i)
			fputc(' ', m);
		if (*a && !a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;~#!")]) {
			fputs(a, m);
			continue;
		}
		fputc('\'', m);
		for (; *a; a++) {
			if (*a == '\'')
				fputs("'\\''", m);
			else
				fputc(*a, m);
		}
		fputc('\'', m);
	}
	if (!i) /* no argv recorded: the program is all we know */
		fputs(pr->exe, m);
	fclose(m);
	return buf;
}

static void wall_date(uint64_t wall_ns, char *buf, size_t len)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;

	if (!wall_ns || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "unknown");
}

static void mode_sentence(const struct ana_profile *p, char *buf, size_t len)
{
	const struct ana_io_mode_info *m = &p->io_mode;
	const char *name = ana_io_mode_name(m->mode);

	switch (m->mode) {
	case ANA_IO_1_1:
		snprintf(buf, len, "%s: one rank did all the data I/O, on %zu data file%s; %zu rank%s in the job",
			 name, m->data_files, m->data_files == 1 ? "" : "s", m->ranks, m->ranks == 1 ? "" : "s");
		break;
	case ANA_IO_N_N:
		snprintf(buf, len, "%s: each of the %zu ranks doing data I/O has its own files (%zu data files); "
			 "%zu ranks in the job", name, m->ranks_with_data, m->data_files, m->ranks);
		break;
	case ANA_IO_N_1:
		snprintf(buf, len, "%s: %zu ranks share one data file; %zu ranks in the job", name,
			 m->ranks_with_data, m->ranks);
		break;
	case ANA_IO_N_M:
		snprintf(buf, len, "%s: %zu ranks share %zu data files (M = %zu); %zu ranks in the job", name,
			 m->ranks_with_data, m->data_files, m->data_files, m->ranks);
		break;
	case ANA_IO_NONE:
	default:
		snprintf(buf, len, "%s: no data file was read or written", name);
		break;
	}
}

/* ---- text sections ---- */

static void text_job(FILE *f, const struct ana_profile *p)
{
	char buf[ANA_TEXT_WIDTH * 4 + 1], t[U], date[64];
	const size_t vw = ANA_TEXT_WIDTH - 14;

	fprintf(f, "Job\n");
	ana_text_tail(p->job_id && p->job_id[0] ? p->job_id : "(none)", vw, buf, sizeof buf);
	fprintf(f, "  id          %s\n", buf);
	char *cmd = p->first ? command_line(p->first) : NULL;
	text_head(cmd ? cmd : "", vw, buf, sizeof buf);
	fprintf(f, "  command     %s\n", buf);
	free(cmd);
	wall_date(p->start_wall_ns, date, sizeof date);
	if (p->first && p->first->host[0] && !p->multi_host) {
		char host[ANA_TEXT_WIDTH * 4 + 1];
		ana_text_tail(p->first->host, 40, host, sizeof host);
		fprintf(f, "  started     %s on %s\n", date, host);
	} else {
		fprintf(f, "  started     %s%s\n", date, p->multi_host ? " (several hosts)" : "");
	}
	fprintf(f, "  wall time   %s%s\n", ana_fmt_ns(t, sizeof t, p->wall_ns),
		p->finished ? "" : " (so far: not every process finished)");

	size_t unfinished = 0, ok = 0, failed = 0, signalled = 0, execd = 0, unknown = 0;
	const struct ana_proc *fail = NULL, *sig = NULL;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ana_proc *pr = &p->procs[i];
		unfinished += !pr->finished;
		if (pr->term_signal > 0) {
			signalled++;
			sig = sig ? sig : pr;
		} else if (pr->flags & LOG_F_EXEC) {
			execd++; /* its image ended in exec: the next log of the pid continues it */
		} else if (!pr->finished || pr->exit_status < 0) {
			unknown++;
		} else if (pr->exit_status == 0) {
			ok++;
		} else {
			failed++;
			fail = fail ? fail : pr;
		}
	}
	size_t n = 0, nlogs = p->nprocs - p->nkernel_procs;
	if (nlogs || !p->nkernel_procs)
		ana_appendf(buf, sizeof buf, &n, "%zu log%s%s", nlogs, nlogs == 1 ? "" : "s",
			    p->nkernel_procs ? " and " : "");
	if (p->nkernel_procs)
		ana_appendf(buf, sizeof buf, &n, "%zu process%s seen only by the %s", p->nkernel_procs,
			    p->nkernel_procs == 1 ? "" : "es",
			    !p->nmount_logs ? "kernel layer" : !p->nkernel_logs ? "mount layer" : "kernel or mount layer");
	ana_appendf(buf, sizeof buf, &n, " in %zu rank%s", p->nranks, p->nranks == 1 ? "" : "s");
	if (unfinished)
		ana_appendf(buf, sizeof buf, &n, ", %zu did not finish", unfinished);
	if (ok == p->nprocs)
		ana_appendf(buf, sizeof buf, &n, ", all exited 0");
	else if (ok)
		ana_appendf(buf, sizeof buf, &n, ", %zu exited 0", ok);
	if (failed)
		ana_appendf(buf, sizeof buf, &n, ", %zu failed (pid %d: status %d)", failed, fail->pid,
			    fail->exit_status);
	if (signalled)
		ana_appendf(buf, sizeof buf, &n, ", %zu killed (pid %d: signal %d)", signalled, sig->pid,
			    sig->term_signal);
	if (execd)
		ana_appendf(buf, sizeof buf, &n, ", %zu exec'd another program", execd);
	if (unknown)
		ana_appendf(buf, sizeof buf, &n, ", %zu exit status unknown", unknown);
	wrap(f, "  processes   ", 14, buf);
	mode_sentence(p, buf, sizeof buf);
	wrap(f, "  I/O mode    ", 14, buf);
	if (p->nmount_logs) {
		/* a mount monitor's log is no process either */
		n = 0;
		for (size_t i = 0; i < p->nklogs; i++)
			if (ana_is_mount_log(p->klogs[i]))
				ana_appendf(buf, sizeof buf, &n, "%s%s", n ? ", " : "", base_name(p->klogs[i]->path));
		wrap(f, "  mount       ", 14, buf);
	}
	if (!p->nkernel_logs)
		return;
	/* The kernel log is no process: say what it is and what it covers. */
	n = 0;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (p->kernel_layers & (1u << l))
			ana_appendf(buf, sizeof buf, &n, "%s%s", n ? " " : "", log_layer_name(l));
	if (!n)
		ana_appendf(buf, sizeof buf, &n, "no layer attached");
	const char *name = "";
	for (size_t i = 0; i < p->nklogs && !name[0]; i++)
		if (!ana_is_mount_log(p->klogs[i]))
			name = base_name(p->klogs[i]->path);
	if (p->nkernel_logs == 1)
		ana_appendf(buf, sizeof buf, &n, " (%s)", name);
	else
		ana_appendf(buf, sizeof buf, &n, " (%zu kernel logs)", p->nkernel_logs);
	if (p->kernel_only)
		ana_appendf(buf, sizeof buf, &n, "; no user-layer log: the system calls stand for the program");
	wrap(f, "  kernel      ", 14, buf);
}

static void text_layers(FILE *f, const struct ana_profile *p)
{
	static const struct col cols[] = {{9, 1}, {7, 0}, {9, 0}, {11, 0}, {11, 0}, {9, 0}, {11, 0}, {13, 0}};
	static const char *const head[] = {"layer", "files", "opens", "reads", "writes", "meta ops", "bytes read",
					   "bytes written"};
	static const struct col tcols[] = {{9, 1}, {10, 0}, {10, 0}, {10, 0}, {12, 0}, {12, 0}, {10, 0}, {10, 0}};
	static const char *const thead[] = {"layer", "read time", "write time", "meta time", "BW in I/O",
					    "BW over wall", "IOPS", "MDOPS"};
	char c[8][U];

	fprintf(f, "\nTotals per layer\n");
	put_row(f, cols, 8, head);
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || l == LOG_LAYER_PAGECACHE) /* pages, not calls: see "Down the stack" */
			continue;
		const struct ana_layer *L = &p->layers[l];
		const char *cells[8] = {
			log_layer_name(l),
			ana_fmt_count(c[1], U, L->nfiles),
			ana_fmt_count(c[2], U, L->c[LOG_C_OPENS]),
			ana_fmt_count(c[3], U, L->c[LOG_C_READS]),
			ana_fmt_count(c[4], U, L->c[LOG_C_WRITES]),
			ana_fmt_count(c[5], U, L->meta_ops),
			ana_fmt_bytes(c[6], U, L->c[LOG_C_BYTES_READ]),
			ana_fmt_bytes(c[7], U, L->c[LOG_C_BYTES_WRITTEN]),
		};
		put_row(f, cols, 8, cells);
	}
	fprintf(f, "\nTime and rates (BW in I/O: bytes / read+write time; over wall: bytes / wall time)\n");
	put_row(f, tcols, 8, thead);
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || l == LOG_LAYER_PAGECACHE)
			continue;
		const struct ana_layer *L = &p->layers[l];
		struct ana_rates r = ana_layer_rates(L, p->wall_ns);
		const char *cells[8] = {
			log_layer_name(l),
			ana_fmt_ns(c[1], U, L->c[LOG_C_TIME_READ]),
			ana_fmt_ns(c[2], U, L->c[LOG_C_TIME_WRITE]),
			ana_fmt_ns(c[3], U, L->c[LOG_C_TIME_META]),
			ana_fmt_rate(c[4], U, r.bw_io),
			ana_fmt_rate(c[5], U, r.bw_wall),
			fmt_rate_n(c[6], U, r.iops),
			fmt_rate_n(c[7], U, r.mdops),
		};
		put_row(f, tcols, 8, cells);
	}
}

/* "~2.0 µs": the lower bound of the log2 latency bucket b (ns) holding a percentile. */
static const char *lat_label(char *buf, size_t len, int b)
{
	char lo[U];
	if (b < 0)
		return snprintf(buf, len, "-"), buf;
	if (b == 0)
		return snprintf(buf, len, "0"), buf;
	ana_fmt_ns(lo, sizeof lo, ana_hist_bucket_low(b));
	snprintf(buf, len, "%s%s", b == LOG_HIST_BUCKETS - 1 ? ">=" : "~", lo);
	return buf;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* One line per layer, top to bottom: what each layer did with the job's I/O. */
static void stack_layers(FILE *f, const struct ana_profile *p)
{
	static const struct col cols[] = {{9, 1}, {10, 0}, {10, 0}, {11, 0}, {13, 0}, {10, 0}, {10, 0}};
	static const char *const head[] = {"layer", "reads", "writes", "bytes read", "bytes written", "I/O time",
					   "mean"};
	static const unsigned order[] = {LOG_LAYER_MPIIO, LOG_LAYER_STDIO, LOG_LAYER_POSIX, LOG_LAYER_SYSCALL,
					 LOG_LAYER_FS, LOG_LAYER_BLOCK};
	char c[6][U];

	put_row(f, cols, 7, head);
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		unsigned l = order[i];
		const struct ana_layer *L = &p->layers[l];
		if (!L->nrecords)
			continue;
		uint64_t ops = L->c[LOG_C_READS] + L->c[LOG_C_WRITES];
		uint64_t t = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE];
		if (!ops) /* a layer that only opened or synced moved nothing down the stack */
			continue;
		const char *cells[7] = {
			log_layer_name(l),
			ana_fmt_count(c[0], U, L->c[LOG_C_READS]),
			ana_fmt_count(c[1], U, L->c[LOG_C_WRITES]),
			ana_fmt_bytes(c[2], U, L->c[LOG_C_BYTES_READ]),
			ana_fmt_bytes(c[3], U, L->c[LOG_C_BYTES_WRITTEN]),
			ana_fmt_ns(c[4], U, t),
			ops && t ? ana_fmt_ns(c[5], U, t / ops) : "-", /* the fs layer does not time calls */
		};
		put_row(f, cols, 7, cells);
	}
}

static void stack_pagecache(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	char line[512], a[U], b[U], d[U];
	size_t n = 0;
	uint64_t reads = st->hit_reads + st->miss_reads;

	if (!(p->kernel_layers & (1u << LOG_LAYER_PAGECACHE)) && !p->layers[LOG_LAYER_PAGECACHE].nrecords)
		return;
	if (reads)
		ana_appendf(line, sizeof line, &n, "page cache: %s of %s read %s served from the cache (hit estimate)",
			    ana_fmt_pct(a, U, (double)st->hit_reads / (double)reads), ana_fmt_count(b, U, reads),
			    plural(reads, "call", "calls"));
	else
		ana_appendf(line, sizeof line, &n, "page cache: no buffered read calls");
	uint64_t pages_in = p->layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN];
	ana_appendf(line, sizeof line, &n, "; %s read in (%s %s of %u KiB) for %s asked",
		    ana_fmt_bytes(a, U, st->bytes_read_in), ana_fmt_count(d, U, pages_in), plural(pages_in, "page", "pages"),
		    p->page_size / 1024, ana_fmt_bytes(b, U, st->bytes_requested));
	ana_appendf(line, sizeof line, &n, "; %s %s added by writes, %s dirtied, %s evicted",
		    ana_fmt_count(a, U, st->pages_added_write), plural(st->pages_added_write, "page", "pages"),
		    ana_fmt_count(b, U, st->pages_dirtied), ana_fmt_count(d, U, st->pages_evicted));
	ana_appendf(line, sizeof line, &n, "; %s mmap %s, %s readahead %s", ana_fmt_count(a, U, st->faults),
		    plural(st->faults, "fault", "faults"), ana_fmt_count(b, U, st->readahead_pages),
		    plural(st->readahead_pages, "page", "pages"));
	wrap(f, "  ", 4, line);
}

/* How many calls of the program became how many system calls, on the data files. */
static void stack_calls(FILE *f, const struct ana_stack *st)
{
	static const unsigned order[] = {LOG_LAYER_MPIIO, LOG_LAYER_STDIO, LOG_LAYER_POSIX};
	char line[512], a[U], b[U];
	size_t n = 0;

	for (int d = 0; d < 2; d++) {
		if (!st->syscalls[d] && !st->user_calls[0][d])
			continue;
		const char *dir = d ? "writes" : "reads";
		ana_appendf(line, sizeof line, &n, "%s%s ", n ? "; " : "calls on data files: ", dir);
		size_t layers = 0;
		unsigned one = 0;
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
			if (st->user_calls[order[i]][d]) {
				layers++;
				one = order[i];
			}
		if (layers == 1) {
			ana_appendf(line, sizeof line, &n, "%s %s %s", ana_fmt_count(a, U, st->user_calls[0][d]),
				    log_layer_name(one), plural(st->user_calls[0][d], "call", "calls"));
		} else if (layers > 1) {
			ana_appendf(line, sizeof line, &n, "%s calls (", ana_fmt_count(a, U, st->user_calls[0][d]));
			int first = 1;
			for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
				if (!st->user_calls[order[i]][d])
					continue;
				ana_appendf(line, sizeof line, &n, "%s%s %s", first ? "" : ", ",
					    ana_fmt_count(b, U, st->user_calls[order[i]][d]), log_layer_name(order[i]));
				first = 0;
			}
			ana_appendf(line, sizeof line, &n, ")");
		} else {
			ana_appendf(line, sizeof line, &n, "none seen by the user layer");
		}
		ana_appendf(line, sizeof line, &n, " -> %s system %s", ana_fmt_count(a, U, st->syscalls[d]),
			    plural(st->syscalls[d], "call", "calls"));
	}
	if (n)
		wrap(f, "  ", 4, line);
}

static void amp_line(FILE *f, const struct ana_stack *st, int w)
{
	char line[512], a[U], b[U];
	size_t n = 0;
	uint64_t dev = w ? st->block_bytes_written : st->block_bytes_read;
	uint64_t sys = w ? st->syscall_bytes_written : st->syscall_bytes_read;

	if (!dev && !sys)
		return;
	ana_appendf(line, sizeof line, &n, "%s amplification ", w ? "write" : "read");
	if (sys)
		ana_appendf(line, sizeof line, &n, "x%.2f", w ? st->write_amplification : st->read_amplification);
	else
		ana_appendf(line, sizeof line, &n, "-");
	ana_appendf(line, sizeof line, &n, " (devices %s / calls %s)", ana_fmt_bytes(a, U, dev),
		    ana_fmt_bytes(b, U, sys));
	if (st->file_syscall_bytes[w] || st->file_block_bytes[w]) {
		ana_appendf(line, sizeof line, &n, "; data files ");
		if (st->file_syscall_bytes[w])
			ana_appendf(line, sizeof line, &n, "x%.2f",
				    w ? st->file_write_amplification : st->file_read_amplification);
		else
			ana_appendf(line, sizeof line, &n, "-");
		ana_appendf(line, sizeof line, &n, " (%s / %s)", ana_fmt_bytes(a, U, st->file_block_bytes[w]),
			    ana_fmt_bytes(b, U, st->file_syscall_bytes[w]));
	}
	wrap(f, "  ", 4, line);
}

static void stack_devices(FILE *f, const struct ana_stack *st)
{
	char line[512], a[U], b[U], c[U], d[U], p50[U], p99[U], mnt[ANA_TEXT_WIDTH * 4 + 1];

	for (size_t i = 0; i < st->ndevices; i++) {
		const struct ana_device *dv = &st->devices[i];
		uint64_t ops = dv->c[LOG_C_READS] + dv->c[LOG_C_WRITES];
		uint64_t lat[LOG_HIST_BUCKETS];
		size_t n = 0;
		for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
			lat[k] = dv->read_lat_hist[k] + dv->write_lat_hist[k];
		ana_appendf(line, sizeof line, &n, "device %s %u:%u", dv->name, dv->major, dv->minor);
		if (dv->mount) {
			ana_text_tail(dv->mount->path, 40, mnt, sizeof mnt);
			ana_appendf(line, sizeof line, &n, " on %s (%s)", mnt, dv->mount->fstype);
		}
		ana_appendf(line, sizeof line, &n, ": %s %s %s, %s %s %s",
			    ana_fmt_count(a, U, dv->c[LOG_C_READS]), plural(dv->c[LOG_C_READS], "read", "reads"),
			    ana_fmt_bytes(b, U, dv->c[LOG_C_BYTES_READ]), ana_fmt_count(c, U, dv->c[LOG_C_WRITES]),
			    plural(dv->c[LOG_C_WRITES], "write", "writes"), ana_fmt_bytes(d, U, dv->c[LOG_C_BYTES_WRITTEN]));
		if (dv->c[LOG_C_FSYNCS])
			ana_appendf(line, sizeof line, &n, ", %s %s", ana_fmt_count(a, U, dv->c[LOG_C_FSYNCS]),
				    plural(dv->c[LOG_C_FSYNCS], "flush", "flushes"));
		if (ops)
			ana_appendf(line, sizeof line, &n, "; per request: queue %s, device %s (p50 %s, p99 %s)",
				    ana_fmt_ns(a, U, dv->c[LOG_C_TIME_QUEUE] / ops),
				    ana_fmt_ns(b, U, dv->c[LOG_C_TIME_DEVICE] / ops),
				    lat_label(p50, U, ana_hist_percentile(lat, 0.5)),
				    lat_label(p99, U, ana_hist_percentile(lat, 0.99)));
		wrap(f, "  ", 4, line);
	}
}

#define STACK_FILES 5 /* data files in the per-file view */

/* Per data file, per direction: the calls and bytes at each layer down to the device. */
static void stack_files(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	static const struct col cols[] = {{8, 1}, {12, 0}, {10, 0}, {9, 0}, {10, 0}, {12, 0}, {9, 0}, {11, 0}};
	static const char *const head[] = {"", "user calls", "user bytes", "syscalls", "sys bytes", "in / dirtied",
					   "requests", "block bytes"};
	size_t shown = st->nfiles < STACK_FILES ? st->nfiles : STACK_FILES;
	char path[ANA_TEXT_WIDTH * 4 + 1], c[7][U];

	if (!shown)
		return;
	fprintf(f, "  per data file (%zu of %zu, most system-call bytes first; user: the topmost user layer; "
		   "page\n    cache: bytes read in for reads, dirtied for writes)\n", shown, st->nfiles);
	put_row(f, cols, 8, head);
	for (size_t i = 0; i < shown; i++) {
		const struct ana_stack_file *x = &st->files[i];
		ana_text_tail(x->path, ANA_TEXT_WIDTH - 4, path, sizeof path);
		fprintf(f, "    %s\n", path);
		for (int d = 0; d < 2; d++) {
			if (!x->ops[ANA_SL_SYSCALL][d] && !x->ops[ANA_SL_USER][d] && !x->ops[ANA_SL_BLOCK][d])
				continue;
			char user[2 * U];
			if (!x->user_layer) /* the user layer never saw it: a static program */
				snprintf(user, sizeof user, "-");
			else if (x->ops[ANA_SL_USER][d])
				snprintf(user, sizeof user, "%s %s", ana_fmt_count(c[0], U, x->ops[ANA_SL_USER][d]),
					 log_layer_name(x->user_layer));
			else
				snprintf(user, sizeof user, "0");
			uint64_t pages = d ? x->pages_dirtied : x->pages_read_in;
			const char *cells[8] = {
				d ? "  writes" : "  reads",
				user,
				x->user_layer ? ana_fmt_bytes(c[1], U, x->bytes[ANA_SL_USER][d]) : "-",
				ana_fmt_count(c[2], U, x->ops[ANA_SL_SYSCALL][d]),
				ana_fmt_bytes(c[3], U, x->bytes[ANA_SL_SYSCALL][d]),
				ana_fmt_bytes(c[4], U, pages * p->page_size),
				ana_fmt_count(c[5], U, x->ops[ANA_SL_BLOCK][d]),
				ana_fmt_bytes(c[6], U, x->bytes[ANA_SL_BLOCK][d]),
			};
			put_row(f, cols, 8, cells);
		}
	}
}

static void text_stack(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	char line[512], a[U], b[U];
	size_t n = 0;

	if (!st->present)
		return;
	fprintf(f, "\nDown the stack (kernel layer, top to bottom; mean: I/O time per read or write)\n");
	stack_layers(f, p);
	stack_pagecache(f, p, st);
	stack_calls(f, st);
	amp_line(f, st, 0);
	amp_line(f, st, 1);
	stack_devices(f, st);
	stack_files(f, p, st);
	if (st->unseen[0]) {
		char a2[U], b2[U], c2[U];
		n = 0;
		ana_appendf(line, sizeof line, &n, "%s block requests (%s read, %s written) were issued but their "
			    "completion was never shown to the block program (docs/KERNEL.md, \"Known gap\"): counted "
			    "apart as unseen, not in the figures above",
			    ana_fmt_count(a2, U, st->unseen[0]), ana_fmt_bytes(b2, U, st->unseen[1]),
			    ana_fmt_bytes(c2, U, st->unseen[2]));
		wrap(f, "  ! ", 4, line);
		n = 0;
	}
	if (p->kernel_events_dropped || p->kernel_table_full || p->kernel_prog_misses) {
		char c[U];
		ana_appendf(line, sizeof line, &n, "lost by the kernel layer: %s events, %s aggregates (a table was "
			    "full), %s program runs the kernel skipped (a tracepoint firing inside the same program, "
			    "e.g. an interrupt's completion): figures above are lower bounds",
			    ana_fmt_count(a, U, p->kernel_events_dropped), ana_fmt_count(b, U, p->kernel_table_full),
			    ana_fmt_count(c, U, p->kernel_prog_misses));
		wrap(f, "  ! ", 4, line);
	}
}

/* The user layer's path entry next to a mount-layer one (paths are sorted by path, then layer). */
static const struct ana_path *user_path_of(const struct ana_profile *p, size_t k)
{
	const char *path = p->paths[k].path;
	for (size_t j = k; j-- > 0 && !strcmp(p->paths[j].path, path);)
		if (p->paths[j].layer == LOG_LAYER_POSIX)
			return &p->paths[j];
	for (size_t j = k + 1; j < p->npaths && !strcmp(p->paths[j].path, path); j++)
		if (p->paths[j].layer == LOG_LAYER_POSIX)
			return &p->paths[j];
	return NULL;
}

static int mount_path_shown(const struct ana_path *x)
{
	const uint64_t *c = x->c;
	return !(x->rflags & LOG_R_OVERFLOW) && (c[LOG_C_READS] || c[LOG_C_WRITES] || c[LOG_C_OPENS]);
}

#define MOUNT_FILES_SHOWN 20

/* What reached the mount point's monitor next to what the program called, file by file: mmap
 * I/O shows at the mount layer only, page-cache effects as a difference. */
static void text_mount(FILE *f, const struct ana_profile *p)
{
	static const struct col cols[] = {{11, 0}, {11, 0}, {12, 0}, {11, 0}, {11, 0}, {12, 0}, {1, 1}};
	static const char *const head[] = {"user reads", "mount reads", "bytes read", "user writes", "mount writes",
					   "bytes writ.", "path (bytes: mount layer)"};
	char c[7][U];
	size_t shown = 0, total = 0;

	if (!p->nmount_logs)
		return;
	fprintf(f, "\nMount point (what reached the FUSE monitor, next to the program's POSIX calls)\n");
	put_row(f, cols, 7, head);
	for (size_t k = 0; k < p->npaths; k++) {
		const struct ana_path *x = &p->paths[k];
		if (x->layer != LOG_LAYER_MOUNT || !mount_path_shown(x))
			continue;
		if (++total > MOUNT_FILES_SHOWN)
			continue;
		const struct ana_path *u = user_path_of(p, k);
		const char *cells[7] = {
			u ? ana_fmt_count(c[0], U, u->c[LOG_C_READS]) : "-",
			ana_fmt_count(c[1], U, x->c[LOG_C_READS]),
			ana_fmt_bytes(c[2], U, x->c[LOG_C_BYTES_READ]),
			u ? ana_fmt_count(c[3], U, u->c[LOG_C_WRITES]) : "-",
			ana_fmt_count(c[4], U, x->c[LOG_C_WRITES]),
			ana_fmt_bytes(c[5], U, x->c[LOG_C_BYTES_WRITTEN]),
			x->path,
		};
		put_row(f, cols, 7, cells);
		shown++;
	}
	if (!total)
		fprintf(f, "  no file was opened, read or written through the mount\n");
	else if (total > shown)
		fprintf(f, "  ... %zu more files\n", total - shown);
	fprintf(f, "  user: the program's read/write calls ('-': no user-layer log of the file, e.g. mapped only);\n"
		   "  mount: requests at the mount point, page-ins and write-back of mapped pages included\n");
}

#define SCI_THREADS_SHOWN 5

/* The op class of a breakdown row, as the text and JSON reports name it. */
static const char *bd_op_name(unsigned op)
{
	return op == LOG_OP_READ ? "read" : op == LOG_OP_WRITE ? "write" : "meta";
}

/* The trace: what it holds, the contention score (SCI) and the threads behind it, and where the
 * time of the user calls went, layer by layer. */
static void text_trace(FILE *f, const struct ana_report_opts *o)
{
	const struct timeline *tl = o ? o->timeline : NULL;
	char a[U], b[U], c[U], d[U], e[U], line[512];
	size_t n = 0;

	if (!tl)
		return;
	fprintf(f, "\nTrace (every call in order, per thread; contiguous calls of one file count as one run)\n");
	ana_appendf(line, sizeof line, &n, "%s user events standing for %s calls, %s kernel events",
		    ana_fmt_count(a, U, tl->user_events), ana_fmt_count(b, U, tl->user_calls),
		    ana_fmt_count(c, U, tl->kernel_events));
	if (tl->dropped)
		ana_appendf(line, sizeof line, &n, "; %s not recorded (see the warnings)", ana_fmt_count(d, U, tl->dropped));
	wrap(f, "  ", 4, line);
	const struct tl_sci *sci = o->sci;
	if (sci && sci->n) {
		const struct tl_sci_thread *t = &sci->threads[0];
		n = 0;
		ana_appendf(line, sizeof line, &n,
			    "contention (SCI, seed 004): top score %.3f, thread %d of pid %d lost %s of its %s to "
			    "calls slower than the fastest similar call",
			    sci->top, t->tid, t->pid, ana_fmt_ns(a, U, t->slowdown_ns), ana_fmt_ns(b, U, t->lifetime_ns));
		wrap(f, "  ", 4, line);
		static const struct col cols[] = {{8, 0}, {8, 0}, {7, 0}, {10, 0}, {10, 0}, {12, 0}};
		static const char *const head[] = {"PID", "TID", "SCORE", "LOST", "LIFETIME", "I/O CALLS"};
		put_row(f, cols, 6, head);
		for (size_t i = 0; i < sci->n && i < SCI_THREADS_SHOWN; i++) {
			char pid[16], tid[16], score[16];
			t = &sci->threads[i];
			snprintf(pid, sizeof pid, "%d", t->pid);
			snprintf(tid, sizeof tid, "%d", t->tid);
			snprintf(score, sizeof score, "%.3f", t->score);
			const char *cells[] = {pid, tid, score, ana_fmt_ns(a, U, t->slowdown_ns), ana_fmt_ns(b, U, t->lifetime_ns),
					       ana_fmt_count(c, U, t->ios)};
			put_row(f, cols, 6, cells);
		}
		if (sci->n > SCI_THREADS_SHOWN)
			fprintf(f, "  ... %zu more threads (report --json has them all)\n", sci->n - SCI_THREADS_SHOWN);
	}
	const struct tl_breakdown *bd = o->breakdown;
	if (bd && bd->n) {
		fprintf(f, "  Where the time of the user calls went (per call: user call, system calls and block device under it)\n");
		static const struct col cols[] = {{6, 1}, {10, 1}, {11, 0}, {9, 0}, {9, 0}, {9, 0}, {17, 0}};
		static const char *const head[] = {"OP", "SIZE", "CALLS", "USER", "SYSCALL", "BLOCK", "CACHE HIT/MISS"};
		put_row(f, cols, 7, head);
		for (size_t i = 0; i < bd->n; i++) {
			const struct tl_breakdown_row *r = &bd->rows[i];
			char size[32], hm[48];
			uint64_t k = r->calls ? r->calls : 1;
			log_hist_label(r->size_bucket, size, sizeof size);
			if (r->op == LOG_OP_READ)
				snprintf(hm, sizeof hm, "%s/%s", ana_fmt_count(d, U, r->hits), ana_fmt_count(e, U, r->misses));
			else
				snprintf(hm, sizeof hm, "-");
			const char *cells[] = {bd_op_name(r->op),
					       size, ana_fmt_count(a, U, r->calls), ana_fmt_ns(b, U, r->user_ns / k),
					       ana_fmt_ns(c, U, r->syscall_ns / k), ana_fmt_ns(e, U, r->block_ns / k), hm};
			put_row(f, cols, 7, cells);
		}
		/* bytes in vs bytes out, layer by layer: read-ahead and write amplification per call class */
		int any_kernel = 0;
		for (size_t i = 0; i < bd->n; i++)
			any_kernel |= bd->rows[i].bytes_syscall || bd->rows[i].bytes_pagecache || bd->rows[i].bytes_block;
		if (any_kernel) {
			fprintf(f, "  Bytes moved under those calls, layer by layer\n");
			static const struct col bcols[] = {{6, 1}, {10, 1}, {12, 0}, {12, 0}, {12, 0}, {12, 0}};
			static const char *const bhead[] = {"OP", "SIZE", "USER", "SYSCALL", "PAGE CACHE", "BLOCK"};
			put_row(f, bcols, 6, bhead);
			for (size_t i = 0; i < bd->n; i++) {
				const struct tl_breakdown_row *r = &bd->rows[i];
				char size[32];
				if (r->op != LOG_OP_READ && r->op != LOG_OP_WRITE)
					continue;
				log_hist_label(r->size_bucket, size, sizeof size);
				const char *cells[] = {bd_op_name(r->op), size,
						       ana_fmt_bytes(a, U, r->bytes_user), ana_fmt_bytes(b, U, r->bytes_syscall),
						       ana_fmt_bytes(c, U, r->bytes_pagecache), ana_fmt_bytes(d, U, r->bytes_block)};
				put_row(f, bcols, 6, cells);
			}
		}
	}
}

/* One table of the size histograms of two layers: reads and writes of each. */
static int sizes_table(FILE *f, unsigned l1, unsigned l2, const struct ana_profile *p)
{
	static const struct col cols[] = {{10, 1}, {14, 0}, {14, 0}, {14, 0}, {14, 0}};
	const struct ana_layer *A = &p->layers[l1], *B = &p->layers[l2];
	char head[4][32];
	const char *heads[5] = {"size (B)", head[0], head[1], head[2], head[3]};
	int any = 0;

	snprintf(head[0], sizeof head[0], "%s reads", log_layer_name(l1));
	snprintf(head[1], sizeof head[1], "%s writes", log_layer_name(l1));
	snprintf(head[2], sizeof head[2], "%s reads", log_layer_name(l2));
	snprintf(head[3], sizeof head[3], "%s writes", log_layer_name(l2));
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		if (!A->read_hist[b] && !A->write_hist[b] && !B->read_hist[b] && !B->write_hist[b])
			continue;
		if (!any++)
			put_row(f, cols, 5, heads);
		char lab[U], c[4][U];
		const char *cells[5] = {
			log_hist_label(b, lab, sizeof lab),  ana_fmt_count(c[0], U, A->read_hist[b]),
			ana_fmt_count(c[1], U, A->write_hist[b]), ana_fmt_count(c[2], U, B->read_hist[b]),
			ana_fmt_count(c[3], U, B->write_hist[b]),
		};
		put_row(f, cols, 5, cells);
	}
	return any;
}

static void text_sizes(FILE *f, const struct ana_profile *p)
{
	fprintf(f, "\nAccess sizes (operations per log2 size bucket; empty buckets left out)\n");
	int any = sizes_table(f, LOG_LAYER_POSIX, LOG_LAYER_STDIO, p);
	if (!any)
		fprintf(f, "  %s\n", p->nkernel_logs ? "no reads or writes in the user layers" : "no reads or writes");
	/* what reached the kernel, and the requests the devices got for it */
	if (p->nkernel_logs) {
		fputc('\n', f);
		if (!sizes_table(f, LOG_LAYER_SYSCALL, LOG_LAYER_BLOCK, p))
			fprintf(f, "  no reads or writes in the kernel layers\n");
	}
}

static void text_patterns(FILE *f, const struct ana_profile *p)
{
	static const struct col cols[] = {{6, 1}, {6, 1}, {11, 0}, {11, 0}, {11, 0}, {9, 0}};
	static const char *const head[] = {"layer", "ops", "count", "sequential", "consecutive", "random"};
	int any = 0;

	fprintf(f, "\nAccess patterns (sequential: at or after the previous end; consecutive: exactly at it)\n");
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || !ana_layer_has_patterns(l)) /* kernel layers do not compute them */
			continue;
		const uint64_t *c = p->layers[l].c;
		for (int w = 0; w < 2; w++) {
			uint64_t ops = c[w ? LOG_C_WRITES : LOG_C_READS];
			uint64_t seq = c[w ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];
			uint64_t con = c[w ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS];
			if (!ops)
				continue;
			if (!any++)
				put_row(f, cols, 6, head);
			char b[4][U];
			const char *cells[6] = {
				log_layer_name(l),
				w ? "writes" : "reads",
				ana_fmt_count(b[0], U, ops),
				ana_fmt_pct(b[1], U, (double)seq / (double)ops),
				ana_fmt_pct(b[2], U, (double)con / (double)ops),
				ana_fmt_pct(b[3], U, 1 - (double)seq / (double)ops),
			};
			put_row(f, cols, 6, cells);
		}
	}
	if (!any) {
		fprintf(f, "  no reads or writes%s\n", p->nkernel_logs ? " in the user layers; the kernel layers do not "
			"compute patterns" : "");
		return;
	}
	uint32_t fa = p->first ? p->first->log->hdr.file_alignment : 0;
	uint32_t ma = p->first ? p->first->log->hdr.mem_alignment : 0;
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const uint64_t *c = p->layers[l].c;
		uint64_t ops = c[LOG_C_READS] + c[LOG_C_WRITES];
		if (!layer_shown(p, l) || !ana_layer_has_patterns(l) || !ops)
			continue;
		char line[256], a[U], b[U], s[U];
		snprintf(line, sizeof line, "%s: unaligned %s in file (%u B), %s in memory (%u B); %s read/write switches",
			 log_layer_name(l), ana_fmt_pct(a, U, (double)c[LOG_C_FILE_NOT_ALIGNED] / (double)ops), fa,
			 ana_fmt_pct(b, U, (double)c[LOG_C_MEM_NOT_ALIGNED] / (double)ops), ma,
			 ana_fmt_count(s, U, c[LOG_C_RW_SWITCHES]));
		wrap(f, "  ", 4, line);
	}
	if (p->nkernel_logs)
		fprintf(f, "  syscall, fs, block: n/a (the kernel layers do not compute patterns)\n");
}

static void common_line(FILE *f, const char *first, const struct ana_common *v, size_t n, uint64_t other)
{
	char line[512];
	size_t o = 0;
	char cnt[U];

	line[0] = '\0';
	for (size_t i = 0; i < n; i++)
		ana_appendf(line, sizeof line, &o, "%s%" PRId64 " B: %s", i ? ", " : "", v[i].value,
			    ana_fmt_count(cnt, U, v[i].count));
	if (other)
		ana_appendf(line, sizeof line, &o, "%s%s not tracked", n ? "; " : "", ana_fmt_count(cnt, U, other));
	if (!n && !other)
		ana_appendf(line, sizeof line, &o, "none");
	wrap(f, first, 17, line);
}

static void text_common(FILE *f, const struct ana_profile *p)
{
	int any = 0;

	fprintf(f, "\nMost common access sizes and strides (value: count; merged over files and processes)\n");
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const struct ana_layer *L = &p->layers[l];
		if (!layer_shown(p, l) || !ana_layer_has_patterns(l) || !(L->c[LOG_C_READS] + L->c[LOG_C_WRITES]))
			continue;
		any = 1;
		char first[32];
		snprintf(first, sizeof first, "  %-5s  sizes    ", log_layer_name(l));
		common_line(f, first, L->sizes, L->nsizes, L->sizes_other);
		common_line(f, "         strides  ", L->strides, L->nstrides, L->strides_other);
	}
	if (!any)
		fprintf(f, "  no reads or writes%s\n", p->nkernel_logs ? " in the user layers (the kernel layers keep no "
			"common sizes or strides)" : "");
}

static size_t top_n(const struct ana_report_opts *o)
{
	return o && o->top_n ? o->top_n : ANA_TOP_DEFAULT;
}

static void text_top(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o)
{
	static const struct col bcols[] = {{11, 0}, {13, 0}, {5, 0}, {9, 1}, {0, 1}};
	static const char *const bhead[] = {"bytes read", "bytes written", "ranks", "layer", "path"};
	static const struct col tcols[] = {{10, 0}, {10, 0}, {10, 0}, {5, 0}, {9, 1}, {0, 1}};
	static const char *const thead[] = {"read time", "write time", "meta time", "ranks", "layer", "path"};
	size_t n = top_n(o), pw;
	char path[ANA_TEXT_WIDTH * 4 + 1], c[4][U];

	fprintf(f, "\nTop files by bytes read + written (%zu of %zu with data)\n",
		n < p->nby_bytes ? n : p->nby_bytes, p->nby_bytes);
	if (p->nby_bytes)
		put_row(f, bcols, 5, bhead);
	pw = rest_width(bcols, 4);
	for (size_t i = 0; i < n && i < p->nby_bytes; i++) {
		const struct ana_path *x = &p->paths[p->by_bytes[i]];
		ana_text_tail(x->path, pw, path, sizeof path);
		const char *cells[5] = {ana_fmt_bytes(c[0], U, x->c[LOG_C_BYTES_READ]),
					ana_fmt_bytes(c[1], U, x->c[LOG_C_BYTES_WRITTEN]),
					ana_fmt_count(c[2], U, x->nranks), log_layer_name(x->layer), path};
		put_row(f, bcols, 5, cells);
	}
	fprintf(f, "\nTop files by time in I/O calls (%zu of %zu with time)\n",
		n < p->nby_time ? n : p->nby_time, p->nby_time);
	if (p->nby_time)
		put_row(f, tcols, 6, thead);
	pw = rest_width(tcols, 5);
	for (size_t i = 0; i < n && i < p->nby_time; i++) {
		const struct ana_path *x = &p->paths[p->by_time[i]];
		ana_text_tail(x->path, pw, path, sizeof path);
		const char *cells[6] = {ana_fmt_ns(c[0], U, x->c[LOG_C_TIME_READ]),
					ana_fmt_ns(c[1], U, x->c[LOG_C_TIME_WRITE]),
					ana_fmt_ns(c[2], U, x->c[LOG_C_TIME_META]),
					ana_fmt_count(c[3], U, x->nranks), log_layer_name(x->layer), path};
		put_row(f, tcols, 6, cells);
	}
}

static uint64_t rank_bytes(const struct ana_rank *k)
{
	return k->bytes_read + k->bytes_written;
}

static uint64_t rank_time(const struct ana_rank *k)
{
	return k->time_read + k->time_write + k->time_meta;
}

static int cmp_rank_heavy(const void *a, const void *b, void *arg)
{
	const struct ana_rank *r = arg;
	const struct ana_rank *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
	if (rank_bytes(x) != rank_bytes(y))
		return rank_bytes(x) < rank_bytes(y) ? 1 : -1;
	if (rank_time(x) != rank_time(y))
		return rank_time(x) < rank_time(y) ? 1 : -1;
	return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static void rank_row(FILE *f, const struct col *cols, const char *name, const struct ana_rank *k)
{
	char c[7][U];
	const char *cells[8] = {name,
				ana_fmt_count(c[0], U, k->nprocs),
				ana_fmt_count(c[1], U, k->reads),
				ana_fmt_count(c[2], U, k->writes),
				ana_fmt_count(c[3], U, k->meta_ops),
				ana_fmt_bytes(c[4], U, k->bytes_read),
				ana_fmt_bytes(c[5], U, k->bytes_written),
				ana_fmt_ns(c[6], U, rank_time(k))};
	put_row(f, cols, 8, cells);
}

static int text_ranks(FILE *f, const struct ana_profile *p)
{
	static const struct col cols[] = {{10, 1}, {5, 0}, {10, 0}, {10, 0}, {9, 0}, {10, 0}, {13, 0}, {10, 0}};
	static const char *const head[] = {"rank", "logs", "reads", "writes", "meta ops", "bytes read",
					   "bytes written", "I/O time"};
	size_t *idx = malloc((p->nranks ? p->nranks : 1) * sizeof *idx);
	size_t shown = p->nranks < ANA_RANKS_SHOWN ? p->nranks : ANA_RANKS_SHOWN;

	if (!idx)
		return -ENOMEM;
	fprintf(f, "\nRanks (%zu; a process without a rank is its own, labelled by pid)\n", p->nranks);
	if (p->ranks_with_io)
		fprintf(f, "  imbalance (max / mean over the %zu that read or wrote): bytes %.2fx, I/O time %.2fx\n",
			p->ranks_with_io, p->imbalance_bytes, p->imbalance_time);
	put_row(f, cols, 8, head);
	for (size_t i = 0; i < p->nranks; i++)
		idx[i] = i;
	/* Too many to list: keep the heaviest, still printed in rank order. */
	if (shown < p->nranks)
		qsort_r(idx, p->nranks, sizeof *idx, cmp_rank_heavy, p->ranks);
	qsort(idx, shown, sizeof *idx, cmp_size);
	for (size_t i = 0; i < shown; i++) {
		char name[32];
		rank_name(&p->ranks[idx[i]], name, sizeof name);
		rank_row(f, cols, name, &p->ranks[idx[i]]);
	}
	if (shown < p->nranks) {
		struct ana_rank rest = {.rank = -1};
		for (size_t i = shown; i < p->nranks; i++) {
			const struct ana_rank *k = &p->ranks[idx[i]];
			rest.nprocs += k->nprocs;
			rest.reads += k->reads;
			rest.writes += k->writes;
			rest.meta_ops += k->meta_ops;
			rest.bytes_read += k->bytes_read;
			rest.bytes_written += k->bytes_written;
			rest.time_read += k->time_read;
			rest.time_write += k->time_write;
			rest.time_meta += k->time_meta;
		}
		char name[32];
		snprintf(name, sizeof name, "%zu others", p->nranks - shown);
		rank_row(f, cols, name, &rest);
		fprintf(f, "  (the %zu heaviest ranks by bytes are listed; \"others\" sums the rest)\n", shown);
	}
	free(idx);
	return 0;
}

static void text_list(FILE *f, const char *title, const char *empty, const char *mark, char *const *texts,
		      size_t n)
{
	fprintf(f, "\n%s\n", title);
	if (!n && empty)
		fprintf(f, "  %s\n", empty);
	for (size_t i = 0; i < n; i++)
		wrap(f, mark, 4, texts[i]);
}

int ana_report_text(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o)
{
	char buf[ANA_TEXT_WIDTH * 4 + 1], t[U];

	ana_text_tail(p->job_id && p->job_id[0] ? p->job_id : "(no id)", 40, buf, sizeof buf);
	size_t nlogs = p->nprocs - p->nkernel_procs;
	char logs[64];
	if (p->kernel_only)
		snprintf(logs, sizeof logs, "kernel log only");
	else
		snprintf(logs, sizeof logs, "%zu log%s%s%s%s%s", nlogs, nlogs == 1 ? "" : "s",
			 p->nkernel_logs ? " + kernel log" : "", p->nkernel_logs > 1 ? "s" : "",
			 p->nmount_logs ? " + mount log" : "", p->nmount_logs > 1 ? "s" : "");
	fprintf(f, "iostrata report: job %s, %zu rank%s, %s, %s\n\n", buf, p->nranks, p->nranks == 1 ? "" : "s",
		logs, ana_fmt_ns(t, sizeof t, p->wall_ns));
	text_job(f, p);
	text_layers(f, p);
	struct ana_stack st;
	if (ana_stack_build(p, o ? o->mounts : NULL, o ? o->nmounts : 0, &st) < 0)
		return -ENOMEM;
	text_stack(f, p, &st);
	ana_stack_free(&st);
	text_mount(f, p);
	text_sizes(f, p);
	text_patterns(f, p);
	text_common(f, p);
	text_top(f, p, o);
	text_trace(f, o);
	if (text_ranks(f, p))
		return -ENOMEM;
	fprintf(f, "\nI/O mode (data files only: no system paths, std streams or catch-alls)\n");
	mode_sentence(p, buf, sizeof buf);
	wrap(f, "  ", 4, buf);

	char **texts = malloc((p->ninsights ? p->ninsights : 1) * sizeof *texts);
	if (!texts)
		return -ENOMEM;
	for (size_t i = 0; i < p->ninsights; i++)
		texts[i] = p->insights[i].text;
	text_list(f, "Insights", "nothing stood out", "  - ", texts, p->ninsights);
	free(texts);
	if (p->nwarnings)
		text_list(f, "Warnings", NULL, "  ! ", p->warnings, p->nwarnings);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

void ana_json_string(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', f);
	while (*u) {
		size_t n = utf8_len(u);
		if (n == 0) {
			fputs("\\ufffd", f);
			u++;
			continue;
		}
		if (n > 1) {
			fwrite(u, 1, n, f);
			u += n;
			continue;
		}
		switch (*u) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*u < 0x20 || *u == 0x7f)
				fprintf(f, "\\u%04x", *u);
			else
				fputc(*u, f);
		}
		u++;
	}
	fputc('"', f);
}

#define JW_DEPTH 16
#define JW_PRETTY 3 /* members this deep or shallower start a new line */

struct jw {
	FILE *f;
	int depth;
	unsigned n[JW_DEPTH]; /* members written so far at each depth */
};

static void jw_sep(struct jw *w, const char *key)
{
	if (w->n[w->depth]++)
		fputc(',', w->f);
	if (w->depth && w->depth <= JW_PRETTY)
		fprintf(w->f, "\n%*s", w->depth, "");
	if (key) {
		ana_json_string(w->f, key);
		fputc(':', w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_sep(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < JW_DEPTH)
		w->depth++;
	w->n[w->depth] = 0;
}

static void jw_close(struct jw *w, char c)
{
	int had = w->n[w->depth] != 0;
	w->depth--;
	if (had && w->depth + 1 <= JW_PRETTY)
		fprintf(w->f, "\n%*s", w->depth, "");
	fputc(c, w->f);
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRId64, v);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_sep(w, key);
	ana_json_string(w->f, s ? s : "");
}

static void jw_bool(struct jw *w, const char *key, int v)
{
	jw_sep(w, key);
	fputs(v ? "true" : "false", w->f);
}

/* Seconds from integer ns, exactly: 123456 ns is 0.000123456. */
static void jw_secs(struct jw *w, const char *key, uint64_t ns)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

static void jw_double(struct jw *w, const char *key, double v)
{
	jw_sep(w, key);
	/* JSON has no NaN or infinity; a ratio with nothing under it is 0. */
	fprintf(w->f, "%.15g", isfinite(v) ? v : 0.0);
}

/* The keys every layer and file carries, from a merged counter array. */
static void json_core(struct jw *w, const uint64_t *c)
{
	jw_u64(w, "opens", c[LOG_C_OPENS]);
	jw_u64(w, "reads", c[LOG_C_READS]);
	jw_u64(w, "writes", c[LOG_C_WRITES]);
	jw_u64(w, "bytes_read", c[LOG_C_BYTES_READ]);
	jw_u64(w, "bytes_written", c[LOG_C_BYTES_WRITTEN]);
	jw_u64(w, "meta_ops", ana_meta_ops(c));
	jw_secs(w, "time_read", c[LOG_C_TIME_READ]);
	jw_secs(w, "time_write", c[LOG_C_TIME_WRITE]);
	jw_secs(w, "time_meta", c[LOG_C_TIME_META]);
}

static void json_counters(struct jw *w, const uint64_t *c)
{
	jw_open(w, "counters", '{');
	for (unsigned k = 0; k < LOG_NCOUNTERS; k++)
		jw_u64(w, log_counter_key(k), c[k]);
	jw_close(w, '}');
}

static void json_hist(struct jw *w, const char *key, const uint64_t *h)
{
	jw_open(w, key, '[');
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		jw_u64(w, NULL, h[b]);
	jw_close(w, ']');
}

static void json_common(struct jw *w, const char *key, const struct ana_common *v, size_t n)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++) {
		jw_open(w, NULL, '{');
		jw_i64(w, "value", v[i].value);
		jw_u64(w, "count", v[i].count);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void json_job(struct jw *w, const struct ana_profile *p)
{
	char date[64] = "";

	jw_open(w, "job", '{');
	jw_str(w, "id", p->job_id);
	jw_str(w, "io_mode", ana_io_mode_name(p->io_mode.mode));
	jw_open(w, "io_mode_detail", '{');
	jw_u64(w, "ranks_with_data", p->io_mode.ranks_with_data);
	jw_u64(w, "data_files", p->io_mode.data_files);
	jw_u64(w, "ranks", p->io_mode.ranks);
	jw_close(w, '}');
	jw_u64(w, "nprocs", p->nprocs);
	jw_u64(w, "nranks", p->nranks);
	jw_secs(w, "wall_seconds", p->wall_ns);
	jw_u64(w, "wall_ns", p->wall_ns);
	jw_u64(w, "start_wall_ns", p->start_wall_ns);
	if (p->start_wall_ns) {
		time_t t = (time_t)(p->start_wall_ns / 1000000000u);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	jw_str(w, "start_time", date);
	char *cmd = p->first ? command_line(p->first) : NULL;
	jw_str(w, "command", cmd);
	free(cmd);
	jw_str(w, "exe", p->first ? p->first->exe : "");
	jw_open(w, "argv", '[');
	const char *a;
	for (uint32_t i = 0; p->first && (a = log_file_arg(p->first->log, i)); i++)
		jw_str(w, NULL, a);
	jw_close(w, ']');
	jw_bool(w, "finished", p->finished);
	jw_bool(w, "multi_host", p->multi_host);
	jw_close(w, '}');
}

static void json_layers(struct jw *w, const struct ana_profile *p)
{
	jw_open(w, "layers", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l))
			continue;
		const struct ana_layer *L = &p->layers[l];
		struct ana_rates r = ana_layer_rates(L, p->wall_ns);
		jw_open(w, log_layer_name(l), '{');
		jw_u64(w, "files", L->nfiles);
		jw_u64(w, "records", L->nrecords);
		json_core(w, L->c);
		jw_double(w, "bandwidth_io", r.bw_io);
		jw_double(w, "bandwidth_read_io", r.bw_read_io);
		jw_double(w, "bandwidth_write_io", r.bw_write_io);
		jw_double(w, "bandwidth_wall", r.bw_wall);
		jw_double(w, "iops", r.iops);
		jw_double(w, "mdops", r.mdops);
		json_counters(w, L->c);
		if (ana_layer_is_kernel(l) || l == LOG_LAYER_MOUNT) {
			json_hist(w, "read_lat_hist", L->read_lat_hist);
			json_hist(w, "write_lat_hist", L->write_lat_hist);
		}
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static const char *const proc_flag_names[] = {"live", "finished", "overflow", "crashed", "exec", "disabled",
					      "stdio_syscalls"};

static void json_processes(struct jw *w, const struct ana_profile *p)
{
	jw_open(w, "processes", '[');
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ana_proc *pr = &p->procs[i];
		/* a process only the kernel saw has no header of its own, nor overflow counters */
		const struct log_header *h = &pr->log->hdr;
		struct log_header none = {0};
		if (pr->kernel_only)
			h = &none;
		jw_open(w, NULL, '{');
		jw_i64(w, "pid", pr->pid);
		jw_i64(w, "ppid", pr->ppid);
		jw_i64(w, "rank", pr->rank);
		jw_i64(w, "job_rank", pr->job_rank);
		jw_str(w, "host", pr->host);
		jw_str(w, "exe", pr->exe);
		jw_str(w, "log", pr->log->path);
		jw_u64(w, "start_ns", pr->start_ns);
		jw_u64(w, "end_ns", pr->end_ns);
		jw_u64(w, "start_wall_ns", pr->start_wall_ns);
		jw_secs(w, "seconds", pr->end_ns - pr->start_ns);
		jw_i64(w, "exit_status", pr->exit_status);
		jw_i64(w, "term_signal", pr->term_signal);
		jw_bool(w, "finished", pr->finished);
		jw_bool(w, "kernel_only", pr->kernel_only);
		jw_u64(w, "flags", pr->flags);
		jw_open(w, "flag_names", '[');
		for (unsigned b = 0; b < sizeof proc_flag_names / sizeof proc_flag_names[0]; b++)
			if (pr->flags & (1u << b))
				jw_str(w, NULL, proc_flag_names[b]);
		jw_close(w, ']');
		jw_open(w, "overflow", '{');
		jw_u64(w, "overflow_opens", h->overflow_opens);
		jw_u64(w, "untracked_ops", h->untracked_ops);
		jw_u64(w, "mmap_table_full", h->mmap_table_full);
		jw_u64(w, "aio_table_full", h->aio_table_full);
		jw_close(w, '}');
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void json_ranks(struct jw *w, const struct ana_profile *p)
{
	jw_open(w, "ranks", '[');
	for (size_t i = 0; i < p->nranks; i++) {
		const struct ana_rank *k = &p->ranks[i];
		char name[32];
		rank_name(k, name, sizeof name);
		jw_open(w, NULL, '{');
		jw_i64(w, "rank", k->rank);
		jw_str(w, "label", name);
		jw_i64(w, "pid", k->pid);
		jw_u64(w, "nprocs", k->nprocs);
		jw_u64(w, "reads", k->reads);
		jw_u64(w, "writes", k->writes);
		jw_u64(w, "meta_ops", k->meta_ops);
		jw_u64(w, "bytes_read", k->bytes_read);
		jw_u64(w, "bytes_written", k->bytes_written);
		jw_secs(w, "time_read", k->time_read);
		jw_secs(w, "time_write", k->time_write);
		jw_secs(w, "time_meta", k->time_meta);
		jw_secs(w, "time_io", rank_time(k));
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "imbalance", '{');
	jw_double(w, "bytes", p->imbalance_bytes);
	jw_double(w, "time", p->imbalance_time);
	jw_u64(w, "ranks_with_io", p->ranks_with_io);
	jw_close(w, '}');
}

static void json_files(struct jw *w, const struct ana_profile *p)
{
	jw_open(w, "files", '[');
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *x = &p->files[i];
		jw_open(w, NULL, '{');
		jw_str(w, "path", x->path);
		jw_str(w, "layer", log_layer_name(x->layer));
		jw_i64(w, "rank", p->ranks[x->rank_index].rank);
		jw_i64(w, "pid", x->pid);
		jw_u64(w, "nprocs", x->nprocs);
		jw_bool(w, "pseudo", (x->rflags & LOG_R_PSEUDO) != 0);
		jw_bool(w, "overflow", (x->rflags & LOG_R_OVERFLOW) != 0);
		jw_bool(w, "data_file", ana_is_data_file(x));
		jw_bool(w, "job_view", x->job_view);
		json_core(w, x->c);
		json_counters(w, x->c);
		if (x->layer == LOG_LAYER_MOUNT) {
			jw_i64(w, "requesting_pid", x->pid);
			json_hist(w, "read_lat_hist", x->read_lat_hist);
			json_hist(w, "write_lat_hist", x->write_lat_hist);
		}
		if (x->layer == LOG_LAYER_BLOCK) {
			jw_u64(w, "unseen_requests", x->unseen[0]);
			jw_u64(w, "unseen_bytes_read", x->unseen[1]);
			jw_u64(w, "unseen_bytes_written", x->unseen[2]);
		}
		if (ana_layer_is_kernel(x->layer)) {
			jw_u64(w, "dev", x->dev);
			jw_u64(w, "ino", x->ino);
			json_hist(w, "read_lat_hist", x->read_lat_hist);
			json_hist(w, "write_lat_hist", x->write_lat_hist);
		}
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void json_top(struct jw *w, const char *key, const struct ana_profile *p, const size_t *idx, size_t n,
		     size_t limit)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct ana_path *x = &p->paths[idx[i]];
		jw_open(w, NULL, '{');
		jw_str(w, "path", x->path);
		jw_str(w, "layer", log_layer_name(x->layer));
		jw_u64(w, "nranks", x->nranks);
		jw_u64(w, "bytes", x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN]);
		jw_secs(w, "time", x->c[LOG_C_TIME_READ] + x->c[LOG_C_TIME_WRITE] + x->c[LOG_C_TIME_META]);
		json_core(w, x->c);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void json_sizes_patterns(struct jw *w, const struct ana_profile *p)
{
	char lab[U];

	jw_open(w, "sizes", '{');
	jw_open(w, "buckets", '[');
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		jw_str(w, NULL, log_hist_label(b, lab, sizeof lab));
	jw_close(w, ']');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || l == LOG_LAYER_PAGECACHE) /* pages, not calls of a size */
			continue;
		jw_open(w, log_layer_name(l), '{');
		json_hist(w, "read", p->layers[l].read_hist);
		json_hist(w, "write", p->layers[l].write_hist);
		jw_close(w, '}');
	}
	jw_close(w, '}');

	/* the kernel layers compute no patterns, common sizes or strides: absent, not zeros */
	jw_open(w, "patterns", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || !ana_layer_has_patterns(l))
			continue;
		const uint64_t *c = p->layers[l].c;
		jw_open(w, log_layer_name(l), '{');
		for (int wr = 0; wr < 2; wr++) {
			uint64_t ops = c[wr ? LOG_C_WRITES : LOG_C_READS];
			uint64_t seq = c[wr ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];
			uint64_t con = c[wr ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS];
			jw_open(w, wr ? "write" : "read", '{');
			jw_u64(w, "ops", ops);
			jw_u64(w, "sequential_ops", seq);
			jw_u64(w, "consecutive_ops", con);
			jw_double(w, "sequential", ops ? (double)seq / (double)ops : 0);
			jw_double(w, "consecutive", ops ? (double)con / (double)ops : 0);
			jw_double(w, "random", ops ? 1 - (double)seq / (double)ops : 0);
			jw_close(w, '}');
		}
		jw_u64(w, "rw_switches", c[LOG_C_RW_SWITCHES]);
		jw_u64(w, "file_not_aligned", c[LOG_C_FILE_NOT_ALIGNED]);
		jw_u64(w, "mem_not_aligned", c[LOG_C_MEM_NOT_ALIGNED]);
		jw_close(w, '}');
	}
	jw_close(w, '}');

	for (int s = 0; s < 2; s++) {
		jw_open(w, s ? "common_strides" : "common_sizes", '{');
		for (unsigned l = 0; l < ANA_NLAYERS; l++) {
			if (!layer_shown(p, l) || !ana_layer_has_patterns(l))
				continue;
			const struct ana_layer *L = &p->layers[l];
			json_common(w, log_layer_name(l), s ? L->strides : L->sizes, s ? L->nstrides : L->nsizes);
		}
		jw_close(w, '}');
	}
	jw_open(w, "common_untracked", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!layer_shown(p, l) || !ana_layer_has_patterns(l))
			continue;
		jw_open(w, log_layer_name(l), '{');
		jw_u64(w, "sizes", p->layers[l].sizes_other);
		jw_u64(w, "strides", p->layers[l].strides_other);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void json_amp(struct jw *w, uint64_t sys_r, uint64_t sys_w, uint64_t blk_r, uint64_t blk_w, double r,
		     double wr)
{
	jw_u64(w, "syscall_bytes_read", sys_r);
	jw_u64(w, "syscall_bytes_written", sys_w);
	jw_u64(w, "block_bytes_read", blk_r);
	jw_u64(w, "block_bytes_written", blk_w);
	jw_double(w, "read", r);
	jw_double(w, "write", wr);
}

static void json_device(struct jw *w, const struct ana_device *d)
{
	uint64_t ops = d->c[LOG_C_READS] + d->c[LOG_C_WRITES], lat[LOG_HIST_BUCKETS];
	for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
		lat[k] = d->read_lat_hist[k] + d->write_lat_hist[k];
	jw_open(w, NULL, '{');
	jw_str(w, "path", d->path);
	jw_str(w, "name", d->name);
	jw_u64(w, "dev", d->dev);
	jw_u64(w, "major", d->major);
	jw_u64(w, "minor", d->minor);
	jw_str(w, "mount_point", d->mount ? d->mount->path : "");
	jw_str(w, "fstype", d->mount ? d->mount->fstype : "");
	jw_u64(w, "unseen_requests", d->unseen[0]);
	jw_u64(w, "unseen_bytes_read", d->unseen[1]);
	jw_u64(w, "unseen_bytes_written", d->unseen[2]);
	jw_u64(w, "reads", d->c[LOG_C_READS]);
	jw_u64(w, "writes", d->c[LOG_C_WRITES]);
	jw_u64(w, "ops", ops);
	jw_u64(w, "bytes_read", d->c[LOG_C_BYTES_READ]);
	jw_u64(w, "bytes_written", d->c[LOG_C_BYTES_WRITTEN]);
	jw_u64(w, "bytes", d->c[LOG_C_BYTES_READ] + d->c[LOG_C_BYTES_WRITTEN]);
	jw_u64(w, "flushes", d->c[LOG_C_FSYNCS]);
	jw_secs(w, "time_queue", d->c[LOG_C_TIME_QUEUE]);
	jw_secs(w, "time_device", d->c[LOG_C_TIME_DEVICE]);
	jw_u64(w, "mean_queue_ns", ops ? d->c[LOG_C_TIME_QUEUE] / ops : 0);
	jw_u64(w, "mean_device_ns", ops ? d->c[LOG_C_TIME_DEVICE] / ops : 0);
	/* the lower bound of the log2 bucket holding the percentile */
	jw_u64(w, "device_p50_ns", ana_hist_bucket_low(ana_hist_percentile(lat, 0.5)));
	jw_u64(w, "device_p99_ns", ana_hist_bucket_low(ana_hist_percentile(lat, 0.99)));
	json_counters(w, d->c);
	json_hist(w, "read_hist", d->read_hist);
	json_hist(w, "write_hist", d->write_hist);
	json_hist(w, "read_lat_hist", d->read_lat_hist);
	json_hist(w, "write_lat_hist", d->write_lat_hist);
	jw_close(w, '}');
}

static void json_stack_file(struct jw *w, const struct ana_profile *p, const struct ana_stack_file *x)
{
	static const char *const names[ANA_SL_N] = {"user", "syscall", "block"};
	jw_open(w, NULL, '{');
	jw_str(w, "path", x->path);
	jw_str(w, "user_layer", x->user_layer ? log_layer_name(x->user_layer) : "");
	for (int l = 0; l < ANA_SL_N; l++) {
		jw_open(w, names[l], '{');
		jw_u64(w, "ops", x->ops[l][0] + x->ops[l][1]);
		jw_u64(w, "reads", x->ops[l][0]);
		jw_u64(w, "writes", x->ops[l][1]);
		jw_u64(w, "bytes_read", x->bytes[l][0]);
		jw_u64(w, "bytes_written", x->bytes[l][1]);
		if (l == ANA_SL_BLOCK) {
			jw_u64(w, "unseen_requests", x->unseen[0]);
			jw_u64(w, "unseen_bytes_read", x->unseen[1]);
			jw_u64(w, "unseen_bytes_written", x->unseen[2]);
		}
		jw_close(w, '}');
	}
	jw_u64(w, "pages_read_in", x->pages_read_in);
	jw_u64(w, "bytes_read_in", x->pages_read_in * p->page_size);
	jw_u64(w, "pages_added_write", x->pages_added_write);
	jw_u64(w, "pages_dirtied", x->pages_dirtied);
	jw_close(w, '}');
}

static void json_mount(struct jw *w, const struct ana_profile *p)
{
	if (!p->nmount_logs)
		return;
	jw_open(w, "mount", '{');
	jw_open(w, "logs", '[');
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		if (!ana_is_mount_log(lf))
			continue;
		jw_open(w, NULL, '{');
		jw_str(w, "log", lf->path);
		jw_str(w, "host", log_file_string(lf, lf->hdr.host));
		jw_i64(w, "pid", lf->hdr.pid);
		jw_bool(w, "finished", !lf->live);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "files", '[');
	for (size_t k = 0; k < p->npaths; k++) {
		const struct ana_path *x = &p->paths[k];
		if (x->layer != LOG_LAYER_MOUNT || !mount_path_shown(x))
			continue;
		const struct ana_path *u = user_path_of(p, k);
		jw_open(w, NULL, '{');
		jw_str(w, "path", x->path);
		jw_u64(w, "reads", x->c[LOG_C_READS]);
		jw_u64(w, "writes", x->c[LOG_C_WRITES]);
		jw_u64(w, "bytes_read", x->c[LOG_C_BYTES_READ]);
		jw_u64(w, "bytes_written", x->c[LOG_C_BYTES_WRITTEN]);
		jw_u64(w, "user_reads", u ? u->c[LOG_C_READS] : 0);
		jw_u64(w, "user_writes", u ? u->c[LOG_C_WRITES] : 0);
		jw_u64(w, "user_bytes_read", u ? u->c[LOG_C_BYTES_READ] : 0);
		jw_u64(w, "user_bytes_written", u ? u->c[LOG_C_BYTES_WRITTEN] : 0);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static int json_kernel(struct jw *w, const struct ana_profile *p, const struct ana_report_opts *o)
{
	struct ana_stack st;
	if (ana_stack_build(p, o ? o->mounts : NULL, o ? o->nmounts : 0, &st) < 0)
		return -ENOMEM;
	if (!st.present)
		return 0;
	jw_open(w, "kernel", '{');
	jw_open(w, "logs", '[');
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		if (ana_is_mount_log(lf))
			continue;
		jw_open(w, NULL, '{');
		jw_str(w, "log", lf->path);
		jw_str(w, "host", log_file_string(lf, lf->hdr.host));
		jw_i64(w, "pid", lf->hdr.pid);
		jw_u64(w, "kernel_layers", lf->hdr.kernel_layers);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "layers_attached", '[');
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (p->kernel_layers & (1u << l))
			jw_str(w, NULL, log_layer_name(l));
	jw_close(w, ']');
	jw_u64(w, "events_dropped", p->kernel_events_dropped);
	jw_u64(w, "kernel_table_full", p->kernel_table_full);
	jw_u64(w, "kernel_prog_misses", p->kernel_prog_misses);
	jw_bool(w, "kernel_only", p->kernel_only);
	jw_u64(w, "kernel_only_processes", p->nkernel_procs);
	jw_u64(w, "page_size", p->page_size);
	jw_open(w, "pagecache", '{');
	jw_u64(w, "hit_reads", st.hit_reads);
	jw_u64(w, "miss_reads", st.miss_reads);
	jw_double(w, "hit_ratio", st.hit_reads + st.miss_reads ? (double)st.hit_reads / (double)(st.hit_reads + st.miss_reads) : 0);
	jw_u64(w, "bytes_requested", st.bytes_requested);
	jw_u64(w, "bytes_read_in", st.bytes_read_in);
	jw_u64(w, "pages_read_in", p->layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN]);
	jw_u64(w, "pages_added_write", st.pages_added_write);
	jw_u64(w, "pages_dirtied", st.pages_dirtied);
	jw_u64(w, "pages_evicted", st.pages_evicted);
	jw_u64(w, "mmap_faults", st.faults);
	jw_u64(w, "readahead_pages", st.readahead_pages);
	jw_close(w, '}');
	jw_open(w, "amplification", '{');
	json_amp(w, st.syscall_bytes_read, st.syscall_bytes_written, st.block_bytes_read, st.block_bytes_written,
		 st.read_amplification, st.write_amplification);
	jw_open(w, "data_files", '{');
	json_amp(w, st.file_syscall_bytes[0], st.file_syscall_bytes[1], st.file_block_bytes[0], st.file_block_bytes[1],
		 st.file_read_amplification, st.file_write_amplification);
	jw_close(w, '}');
	jw_close(w, '}');
	jw_open(w, "calls", '{');
	for (int d = 0; d < 2; d++) {
		static const unsigned layers[] = {LOG_LAYER_POSIX, LOG_LAYER_STDIO, LOG_LAYER_MPIIO};
		jw_open(w, d ? "writes" : "reads", '{');
		jw_u64(w, "user", st.user_calls[0][d]);
		for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
			jw_u64(w, log_layer_name(layers[i]), st.user_calls[layers[i]][d]);
		jw_u64(w, "syscall", st.syscalls[d]);
		jw_close(w, '}');
	}
	jw_close(w, '}');
	jw_open(w, "devices", '[');
	for (size_t i = 0; i < st.ndevices; i++)
		json_device(w, &st.devices[i]);
	jw_close(w, ']');
	jw_open(w, "files", '[');
	for (size_t i = 0; i < st.nfiles; i++)
		json_stack_file(w, p, &st.files[i]);
	jw_close(w, ']');
	jw_close(w, '}');
	ana_stack_free(&st);
	return 0;
}

static void json_trace(struct jw *w, const struct ana_report_opts *o)
{
	const struct timeline *tl = o ? o->timeline : NULL;
	if (!tl)
		return;
	jw_open(w, "trace", '{');
	jw_u64(w, "user_events", tl->user_events);
	jw_u64(w, "user_calls", tl->user_calls);
	jw_u64(w, "kernel_events", tl->kernel_events);
	jw_u64(w, "dropped", tl->dropped);
	if (o->sci) {
		jw_open(w, "sci", '{');
		jw_double(w, "top", o->sci->top);
		jw_open(w, "threads", '[');
		for (size_t i = 0; i < o->sci->n; i++) {
			const struct tl_sci_thread *t = &o->sci->threads[i];
			jw_open(w, NULL, '{');
			jw_i64(w, "pid", t->pid);
			jw_i64(w, "tid", t->tid);
			jw_double(w, "score", t->score);
			jw_secs(w, "slowdown_s", t->slowdown_ns);
			jw_secs(w, "lifetime_s", t->lifetime_ns);
			jw_u64(w, "ios", t->ios);
			jw_close(w, '}');
		}
		jw_close(w, ']');
		jw_close(w, '}');
	}
	if (o->breakdown) {
		jw_open(w, "breakdown", '[');
		for (size_t i = 0; i < o->breakdown->n; i++) {
			const struct tl_breakdown_row *r = &o->breakdown->rows[i];
			char size[32];
			jw_open(w, NULL, '{');
			jw_str(w, "op", bd_op_name(r->op));
			jw_u64(w, "size_bucket", r->size_bucket);
			jw_str(w, "size", log_hist_label(r->size_bucket, size, sizeof size));
			jw_u64(w, "calls", r->calls);
			jw_secs(w, "user_s", r->user_ns);
			jw_secs(w, "syscall_s", r->syscall_ns);
			jw_secs(w, "block_s", r->block_ns);
			jw_u64(w, "cache_hits", r->hits);
			jw_u64(w, "cache_misses", r->misses);
			jw_u64(w, "bytes_user", r->bytes_user);
			jw_u64(w, "bytes_syscall", r->bytes_syscall);
			jw_u64(w, "bytes_pagecache", r->bytes_pagecache);
			jw_u64(w, "bytes_block", r->bytes_block);
			jw_close(w, '}');
		}
		jw_close(w, ']');
	}
	jw_close(w, '}');
}

int ana_report_json(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o)
{
	struct jw w = {.f = f};
	size_t n = top_n(o);

	jw_open(&w, NULL, '{');
	jw_u64(&w, "report_version", 1);
	json_job(&w, p);
	json_layers(&w, p);
	if (json_kernel(&w, p, o) < 0)
		return -ENOMEM;
	json_mount(&w, p);
	json_sizes_patterns(&w, p);
	json_top(&w, "top_files_by_bytes", p, p->by_bytes, p->nby_bytes, n);
	json_top(&w, "top_files_by_time", p, p->by_time, p->nby_time, n);
	json_trace(&w, o);
	json_ranks(&w, p);
	json_processes(&w, p);
	json_files(&w, p);
	jw_open(&w, "insights", '[');
	for (size_t i = 0; i < p->ninsights; i++) {
		jw_open(&w, NULL, '{');
		jw_str(&w, "id", p->insights[i].id);
		jw_str(&w, "text", p->insights[i].text);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_open(&w, "warnings", '[');
	for (size_t i = 0; i < p->nwarnings; i++)
		jw_str(&w, NULL, p->warnings[i]);
	jw_close(&w, ']');
	jw_close(&w, '}');
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
