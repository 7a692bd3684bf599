/* SPDX-License-Identifier: MIT */
/*
 * Advice: each insight is one sentence that states the figure that triggered it and a concrete
 * change to make. Every rule reads the finished profile only; thresholds are named below with
 * the reason for their value, so a reader can argue with a number rather than with code. This
 * file does not print: the report renders p->insights in text or JSON.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "analysis/stack.h"
#include "analysis/units.h"

/* Shares computed over fewer ops than this are noise: a program that writes a 3-line config
 * file is not "dominated by small writes". */
#define MIN_OPS 100
/* One page: below it every call costs a full syscall and page-cache work for little data. */
#define SMALL_OP_BYTES 4096
#define SMALL_OP_BUCKETS 13 /* log2 buckets 0..12 hold sizes < 4096 */
/* Small ops matter when they are most of the calls AND a visible part of the time. */
#define SMALL_OP_SHARE 0.5
#define SMALL_OP_TIME_SHARE 0.2
/* More than half of the accesses jumping around defeats read-ahead and write-behind. */
#define RANDOM_SHARE 0.5
/* Files under 1 MiB are dominated by their open/close/metadata cost on a parallel file system;
 * a hundred of them is where that cost becomes seconds on Lustre-class metadata servers. */
#define SMALL_FILE_BYTES (1u << 20)
#define SMALL_FILES_MIN 100
/* Metadata below 10 ms in total is not worth anyone's attention, whatever its share. */
#define META_MIN_NS 10000000ull
/* 1.5x the mean: the job waits for its slowest rank, a third of its I/O time is idling. */
#define IMBALANCE_MAX 1.5
/* Half of the accesses unaligned: read-modify-write of blocks becomes the common case. */
#define UNALIGNED_SHARE 0.5
/* Reading a file's extent more than twice is re-reading, not a second pass by accident ... */
#define REREAD_FACTOR 2
/* ... and below 1 MiB the page cache absorbs it for free. */
#define REREAD_MIN_BYTES (1u << 20)
/* A stdio write under 64 B is a formatted field or a short line: the call (lock, copy, checks)
 * costs more than the data. */
#define TINY_FWRITE_BYTES 64
#define TINY_FWRITE_BUCKETS 7 /* log2 buckets 0..6 hold sizes < 64 */
#define TINY_FWRITE_SHARE 0.5
#define TINY_FWRITE_MIN 1000
/* With a kernel log: half as many write system calls as fwrites means the stream is not buffering
 * (a buffered stream of tiny writes makes one system call per buffer, i.e. per hundreds). */
#define TINY_UNBUFFERED_SHARE 0.5
/* Paths named in a sentence are cut to this many bytes (their tail) to keep it one line-ish. */
#define PATH_SHOWN 60

/* Failed metadata calls worth a word: fewer are the ENOENT of stat-before-create and the like. */
#define ERR_META_MIN 100
/* Kernel layer, re-reads that went to storage again: a file read past its extent whose pages came
 * from storage more than once. Readahead can overshoot a file's extent by a window (128 KiB by
 * default), so only 1 MiB of such re-fetches, and at least half of the re-read bytes, count. */
#define REFETCH_MIN_BYTES (1u << 20)
#define REFETCH_SHARE 0.5
/* Kernel layer: the devices wrote 1.5x what the write calls carried to the same files, and the
 * difference is worth a look (1 MiB). */
#define AMP_FACTOR 1.5
#define AMP_MIN_BYTES (1u << 20)
/* Kernel layer: a device served many small requests. A thousand is where per-request cost (a few
 * to a hundred µs each) adds up to visible time; under 16 KiB is below what disks and SSDs need
 * to stream. */
#define SMALL_REQ_MIN 1000
#define SMALL_REQ_BYTES (16u << 10)

static int add_insight(struct ana_profile *p, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_insight(struct ana_profile *p, const char *id, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	struct ana_insight *v = realloc(p->insights, (p->ninsights + 1) * sizeof *v);

	if (!v)
		return -ENOMEM;
	p->insights = v;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	p->insights[p->ninsights++] = (struct ana_insight){id, s};
	return 0;
}

/* The tail of a path: its file name is what a reader recognizes. Skips UTF-8 continuation
 * bytes so the cut never splits a character. */
static const char *path_tail(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);
	if (n <= PATH_SHOWN)
		return path;
	const char *s = path + n - PATH_SHOWN;
	while ((*s & 0xc0) == 0x80)
		s++;
	snprintf(buf, len, "...%s", s);
	return buf;
}

static uint64_t hist_sum(const uint64_t *h, unsigned from, unsigned to)
{
	uint64_t s = 0;
	for (unsigned b = from; b < to && b < LOG_HIST_BUCKETS; b++)
		s += h[b];
	return s;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

/* Small accesses of one direction at the system-call boundary: the POSIX layer, or for processes
 * only the kernel saw, their system calls (L = p->standin). stdio's small calls are buffered by
 * design and have their own rule (tiny fwrites). */
static int small_ops(struct ana_profile *p, const struct ana_layer *L, int standin, int write)
{
	const unsigned ops_c = write ? LOG_C_WRITES : LOG_C_READS;
	const unsigned time_c = write ? LOG_C_TIME_WRITE : LOG_C_TIME_READ;
	const char *what = standin ? "system-call" : "posix";
	uint64_t ops = L->c[ops_c];
	uint64_t small = hist_sum(write ? L->write_hist : L->read_hist, 0, SMALL_OP_BUCKETS);
	uint64_t io_time = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE] + L->c[LOG_C_TIME_META];

	if (ops < MIN_OPS || share(small, ops) <= SMALL_OP_SHARE || !io_time)
		return 0;
	/* mostly aggregated already: the `aggregated` insight says what became of them */
	if (write && !standin &&
	    share(L->c[LOG_C_AGG_SMALL] + L->c[LOG_C_AGG_MEDIUM] + L->c[LOG_C_AGG_DIRECT], ops) >= 0.5)
		return 0;
	/* Per-op times are not kept: give each file's small ops their share of that file's time. */
	double small_time = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (!f->c[ops_c] || f->layer != (standin ? LOG_LAYER_SYSCALL : LOG_LAYER_POSIX) ||
		    (standin && !f->job_view))
			continue;
		uint64_t s = hist_sum(write ? f->write_hist : f->read_hist, 0, SMALL_OP_BUCKETS);
		small_time += (double)f->c[time_c] * share(s, f->c[ops_c]);
	}
	double tshare = small_time / (double)io_time;
	if (tshare <= SMALL_OP_TIME_SHARE)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(small, ops));
	ana_fmt_count(b, sizeof b, ops);
	ana_fmt_pct(t, sizeof t, tshare);
	if (write)
		return add_insight(p, "small_writes",
				   "%s of %s %s writes are under %d B and take about %s of the I/O time: "
				   "aggregate or buffer them into larger writes.",
				   a, b, what, SMALL_OP_BYTES, t);
	return add_insight(p, "small_reads",
			   "%s of %s %s reads are under %d B and take about %s of the I/O time: read larger "
			   "blocks (or the whole file once) and pick the pieces in memory.",
			   a, b, what, SMALL_OP_BYTES, t);
}

static int random_access(struct ana_profile *p, unsigned layer, int write)
{
	const struct ana_layer *L = &p->layers[layer];
	uint64_t ops = L->c[write ? LOG_C_WRITES : LOG_C_READS];
	uint64_t seq = L->c[write ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];

	if (ops < MIN_OPS || 1 - share(seq, ops) <= RANDOM_SHARE)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, 1 - share(seq, ops));
	ana_fmt_count(b, sizeof b, ops);
	return add_insight(p, write ? "random_writes" : "random_reads",
			   "%s of %s %s %s are random (start before the end of the previous one): sort or "
			   "batch requests by offset, or move larger contiguous blocks and rearrange in memory.",
			   a, b, log_layer_name(layer), write ? "writes" : "reads");
}

static uint64_t extent(const uint64_t *c)
{
	return c[LOG_C_MAX_READ_END] > c[LOG_C_MAX_WRITE_END] ? c[LOG_C_MAX_READ_END] : c[LOG_C_MAX_WRITE_END];
}

static int is_real_path(uint16_t rflags, const char *path)
{
	return !(rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW)) && ana_is_data_path(path);
}

/* paths[] is sorted by (path, layer): a path's layers are adjacent. */
static size_t path_group_end(const struct ana_profile *p, size_t i)
{
	size_t j = i + 1;
	while (j < p->npaths && !strcmp(p->paths[j].path, p->paths[i].path))
		j++;
	return j;
}

static int small_files(struct ana_profile *p)
{
	size_t n = 0;
	uint64_t total = 0;

	for (size_t i = 0; i < p->npaths; i = path_group_end(p, i)) {
		uint64_t ext = 0, bytes = 0;
		int real = 1;
		for (size_t j = i; j < path_group_end(p, i); j++) {
			const struct ana_path *x = &p->paths[j];
			if (!x->job_view) /* the kernel layers repeat these files further down */
				continue;
			real &= is_real_path(x->rflags, x->path);
			bytes += x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN];
			if (extent(x->c) > ext)
				ext = extent(x->c);
		}
		if (real && bytes && ext < SMALL_FILE_BYTES) {
			n++;
			total += ext;
		}
	}
	if (n <= SMALL_FILES_MIN)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	ana_fmt_count(a, sizeof a, n);
	ana_fmt_bytes(b, sizeof b, total);
	return add_insight(p, "small_files",
			   "%s data files are under 1 MiB each (%s in all): pack them into fewer, larger files "
			   "(an archive, HDF5, one file per rank); each file costs opens, closes and metadata "
			   "server work.", a, b);
}

/* L: a user layer, or the system calls of the processes only the kernel saw (name "system-call"). */
static int metadata_heavy(struct ana_profile *p, const struct ana_layer *L, const char *name)
{
	uint64_t meta = L->c[LOG_C_TIME_META], data = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE];

	if (meta < META_MIN_NS || meta <= data)
		return 0;
	/* Name the two commonest metadata calls: that is where the fix is. */
	static const unsigned kinds[] = {LOG_C_OPENS,   LOG_C_CLOSES, LOG_C_SEEKS, LOG_C_STATS, LOG_C_FSYNCS,
					 LOG_C_RENAMES, LOG_C_DUPS,   LOG_C_MMAPS, LOG_C_META_OTHER};
	const size_t nkinds = sizeof kinds / sizeof kinds[0];
	unsigned k1 = kinds[0], k2 = kinds[1];
	for (size_t i = 1; i < nkinds; i++)
		if (L->c[kinds[i]] > L->c[k1])
			k1 = kinds[i];
	k2 = k1 == kinds[0] ? kinds[1] : kinds[0];
	for (size_t i = 0; i < nkinds; i++)
		if (kinds[i] != k1 && L->c[kinds[i]] > L->c[k2])
			k2 = kinds[i];
	char n[ANA_UNIT_LEN], m[ANA_UNIT_LEN], d[ANA_UNIT_LEN], c1[ANA_UNIT_LEN], c2[ANA_UNIT_LEN];
	ana_fmt_count(n, sizeof n, L->meta_ops);
	ana_fmt_ns(m, sizeof m, meta);
	ana_fmt_ns(d, sizeof d, data);
	ana_fmt_count(c1, sizeof c1, L->c[k1]);
	ana_fmt_count(c2, sizeof c2, L->c[k2]);
	return add_insight(p, "metadata_heavy",
			   "%s %s metadata ops (most: %s %s, %s %s) took %s, more than reads and writes (%s): "
			   "open files once and keep them open, cache stat() results, use fewer files.",
			   n, name, c1, log_counter_key(k1), c2, log_counter_key(k2), m, d);
}

static void rank_label(const struct ana_rank *k, char *buf, size_t len)
{
	if (k->rank >= 0)
		snprintf(buf, len, "rank %d", k->rank);
	else
		snprintf(buf, len, "pid %d", k->pid);
}

static uint64_t rank_weight(const struct ana_rank *k, int by_bytes)
{
	return by_bytes ? k->bytes_read + k->bytes_written : k->time_read + k->time_write + k->time_meta;
}

static const struct ana_rank *heaviest_rank(const struct ana_profile *p, int by_bytes)
{
	const struct ana_rank *top = &p->ranks[0];
	for (size_t i = 1; i < p->nranks; i++)
		if (rank_weight(&p->ranks[i], by_bytes) > rank_weight(top, by_bytes))
			top = &p->ranks[i];
	return top;
}

static int imbalance(struct ana_profile *p)
{
	if (p->ranks_with_io < 2 || (p->imbalance_bytes <= IMBALANCE_MAX && p->imbalance_time <= IMBALANCE_MAX))
		return 0;
	/* The rank moving the most bytes and the one waiting longest are not always the same. */
	char by_b[32], by_t[32];
	rank_label(heaviest_rank(p, 1), by_b, sizeof by_b);
	rank_label(heaviest_rank(p, 0), by_t, sizeof by_t);
	return add_insight(p, "rank_imbalance",
			   "I/O is unbalanced over the %zu ranks that did I/O: %s moved %.2fx the mean bytes and "
			   "%s spent %.2fx the mean I/O time: spread the I/O evenly over ranks, or let more ranks "
			   "share it (e.g. MPI-IO collective I/O).",
			   p->ranks_with_io, by_b, p->imbalance_bytes, by_t, p->imbalance_time);
}

static int unaligned(struct ana_profile *p)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_POSIX];
	uint64_t ops = L->c[LOG_C_READS] + L->c[LOG_C_WRITES];
	uint64_t bad = L->c[LOG_C_FILE_NOT_ALIGNED];

	if (ops < MIN_OPS || share(bad, ops) <= UNALIGNED_SHARE)
		return 0;
	uint32_t align = p->first ? p->first->log->hdr.file_alignment : 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(bad, ops));
	ana_fmt_count(b, sizeof b, ops);
	return add_insight(p, "unaligned",
			   "%s of %s posix reads and writes start at offsets that are not multiples of %u B (the "
			   "file alignment): align offsets and sizes to it, or the file system reads and rewrites "
			   "partial blocks.", a, b, align ? align : 4096);
}

static int unused_opens(struct ana_profile *p)
{
	size_t n = 0;
	const char *example = NULL;

	for (size_t i = 0; i < p->npaths; i = path_group_end(p, i)) {
		uint64_t opens = 0, used = 0;
		int real = 1;
		for (size_t j = i; j < path_group_end(p, i); j++) {
			const uint64_t *c = p->paths[j].c;
			if (!p->paths[j].job_view)
				continue;
			real &= is_real_path(p->paths[j].rflags, p->paths[j].path);
			opens += c[LOG_C_OPENS];
			used += c[LOG_C_READS] + c[LOG_C_WRITES] + c[LOG_C_MMAPS];
		}
		if (real && opens && !used) {
			if (!example)
				example = p->paths[i].path;
			n++;
		}
	}
	if (!n)
		return 0;
	char t[PATH_SHOWN + 8];
	return add_insight(p, "unused_opens",
			   "%zu file%s opened but never read, written or mapped (e.g. %s): drop those opens, "
			   "or use stat()/access() when only metadata is needed.",
			   n, n == 1 ? " was" : "s were", path_tail(example, t, sizeof t));
}

/* Write aggregation (seed 002, docs/AGGREGATION.md): a file written mostly in writes under 64 KiB
 * gains from `--aggregate`. The threshold offered is the smallest power of two from 4 KiB to 1 MiB
 * under which AGG_COVER of the file's writes fall, read off its merged write-size histogram
 * (bucket b holds sizes below 2^b). Files already aggregated (agg_* counters) are left out. */
#define AGG_MIN_WRITES 100
#define AGG_SMALL_BUCKETS 17 /* sizes < 64 KiB */
#define AGG_SMALL_SHARE 0.5
#define AGG_COVER 0.9
#define AGG_MAX_FILES 3

static int aggregation(struct ana_profile *p)
{
	struct {
		const char *path;
		uint64_t writes, small, hist[LOG_HIST_BUCKETS];
	} best[AGG_MAX_FILES] = {{0}};
	for (size_t i = 0; i < p->nfiles;) {
		const struct ana_file *f = &p->files[i];
		uint64_t w = 0, agg = 0, h[LOG_HIST_BUCKETS] = {0};
		size_t j = i;
		for (; j < p->nfiles && p->files[j].layer == f->layer && !strcmp(p->files[j].path, f->path); j++) {
			w += p->files[j].c[LOG_C_WRITES];
			agg += p->files[j].c[LOG_C_AGG_SMALL] + p->files[j].c[LOG_C_AGG_MEDIUM] + p->files[j].c[LOG_C_AGG_DIRECT];
			for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
				h[b] += p->files[j].write_hist[b];
		}
		i = j;
		if (f->layer != LOG_LAYER_POSIX || (f->rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW)) || agg || w < AGG_MIN_WRITES)
			continue;
		uint64_t small = hist_sum(h, 0, AGG_SMALL_BUCKETS);
		if (share(small, w) < AGG_SMALL_SHARE)
			continue;
		int k = AGG_MAX_FILES - 1;
		if (best[k].path && best[k].writes >= w)
			continue;
		for (; k > 0 && (!best[k - 1].path || best[k - 1].writes < w); k--)
			best[k] = best[k - 1];
		best[k].path = f->path, best[k].writes = w, best[k].small = small;
		memcpy(best[k].hist, h, sizeof h);
	}
	for (int k = 0; k < AGG_MAX_FILES && best[k].path; k++) {
		unsigned b = 12;
		while (b < 20 && (double)hist_sum(best[k].hist, 0, b + 1) < AGG_COVER * (double)best[k].writes)
			b++;
		uint64_t covered = hist_sum(best[k].hist, 0, b + 1);
		char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN], c[ANA_UNIT_LEN], th[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
		ana_fmt_pct(a, sizeof a, share(best[k].small, best[k].writes));
		ana_fmt_count(n, sizeof n, best[k].writes);
		ana_fmt_pct(c, sizeof c, share(covered, best[k].writes));
		if (b < 20)
			snprintf(th, sizeof th, "%uK", 1u << (b - 10));
		else
			snprintf(th, sizeof th, "1M");
		if (add_insight(p, "aggregate_writes",
				"%s of the %s writes to %s are under 64 KiB: aggregate them (iostrata run --aggregate "
				"'%s:threshold=%s'); writes under %s are %s of them (by the size histogram).",
				a, n, path_tail(best[k].path, t, sizeof t), best[k].path, th, th, c))
			return -1;
	}
	return 0;
}

/* What write aggregation did with the writes it handled (counters of the POSIX layer). */
static int aggregated(struct ana_profile *p)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_POSIX];
	uint64_t sm = L->c[LOG_C_AGG_SMALL], md = L->c[LOG_C_AGG_MEDIUM], di = L->c[LOG_C_AGG_DIRECT];
	uint64_t app = sm + md + di, calls = di + L->c[LOG_C_AGG_ISSUED_WRITES];
	if (!app)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN], e[ANA_UNIT_LEN], f[ANA_UNIT_LEN];
	ana_fmt_count(a, sizeof a, app);
	ana_fmt_count(b, sizeof b, sm);
	ana_fmt_count(c, sizeof c, md);
	ana_fmt_count(d, sizeof d, di);
	ana_fmt_count(e, sizeof e, calls);
	ana_fmt_pct(f, sizeof f, share(calls, app));
	return add_insight(p, "aggregated",
			   "%s writes went through write aggregation (%s into the process buffer, %s into the shared "
			   "ring, %s direct) and reached the file system as %s write calls (%s of them); close and "
			   "fsync of those files include writing the buffered bytes back.",
			   a, b, c, d, e, f);
}

static int rereads(struct ana_profile *p)
{
	size_t n = 0;
	const struct ana_file *worst = NULL;

	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		uint64_t rd = f->c[LOG_C_BYTES_READ], ext = f->c[LOG_C_MAX_READ_END];
		if (!f->job_view || !is_real_path(f->rflags, f->path) || rd < REREAD_MIN_BYTES || rd <= REREAD_FACTOR * ext)
			continue;
		n++;
		if (!worst || rd - ext > worst->c[LOG_C_BYTES_READ] - worst->c[LOG_C_MAX_READ_END])
			worst = f;
	}
	if (!worst)
		return 0;
	char who[32], t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	rank_label(&p->ranks[worst->rank_index], who, sizeof who);
	ana_fmt_bytes(a, sizeof a, worst->c[LOG_C_BYTES_READ]);
	ana_fmt_bytes(b, sizeof b, worst->c[LOG_C_MAX_READ_END]);
	/* a log may hold bytes read with no extent (e.g. reads of a pipe): then no ratio */
	double times = share(worst->c[LOG_C_BYTES_READ], worst->c[LOG_C_MAX_READ_END]);
	char fold[32] = "";
	if (times > 0)
		snprintf(fold, sizeof fold, ", %.1fx", times);
	return add_insight(p, "rereads",
			   "%s read %s %s of a %s extent%s (%zu file%s re-read in all): keep the data in memory "
			   "after the first read, or mmap the file.",
			   who, path_tail(worst->path, t, sizeof t), a, b, fold, n, n == 1 ? "" : "s");
}

/* What to look at for each failing kind of call. */
static const char *error_advice(unsigned c)
{
	switch (c) {
	case LOG_C_ERR_OPENS:
		return "check the paths, permissions and the open-file limit (ulimit -n)";
	case LOG_C_ERR_READS:
	case LOG_C_ERR_WRITES:
		return "check return values: a full file system, a quota, a closed or wrong descriptor";
	case LOG_C_ERR_SEEKS:
		return "seeks fail on pipes and terminals: check what the descriptor is";
	case LOG_C_ERR_SYNCS:
		return "a failed sync may mean lost data: check the file system's health and support";
	default:
		return "find the failing calls with strace -f -e trace=%file,%desc";
	}
}

static int errors(struct ana_profile *p)
{
	for (unsigned c = LOG_C_ERR_OPENS; c <= LOG_C_ERR_META; c++) {
		uint64_t total = 0;
		size_t nfiles = 0;
		const struct ana_path *worst = NULL;
		for (size_t i = 0; i < p->npaths; i++) {
			const struct ana_path *x = &p->paths[i];
			if (!x->c[c] || !x->job_view)
				continue;
			/* A failed stat or access of a path that was never opened is a lookup (PATH search,
			 * imports, config probing), not an I/O problem. */
			if (c == LOG_C_ERR_META && !x->c[LOG_C_OPENS] &&
			    !x->c[LOG_C_BYTES_READ] && !x->c[LOG_C_BYTES_WRITTEN])
				continue;
			total += x->c[c];
			nfiles++;
			if (!worst || x->c[c] > worst->c[c])
				worst = x;
		}
		/* a few failed stats or unlinks (ENOENT before a file is created) are normal; a storm of
		 * them costs metadata round trips */
		if (!total || (c == LOG_C_ERR_META && total < ERR_META_MIN))
			continue;
		char t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
		ana_fmt_count(a, sizeof a, total);
		ana_fmt_count(b, sizeof b, worst->c[c]);
		if (add_insight(p, "errors", "%s = %s (%s) on %zu file%s, %s of them on %s (%s): %s.",
				log_counter_key(c), a, log_counter_docs[c], nfiles, nfiles == 1 ? "" : "s", b,
				path_tail(worst->path, t, sizeof t), log_layer_name(worst->layer), error_advice(c)))
			return -ENOMEM;
	}
	return 0;
}

/* The write system calls the kernel saw on the files stdio wrote to (0, 0 without a kernel log):
 * how much stdio's buffer merged. */
static void stdio_syscalls(const struct ana_profile *p, uint64_t *fwrites, uint64_t *syscalls)
{
	*fwrites = *syscalls = 0;
	if (!p->nkernel_logs)
		return;
	for (size_t i = 0; i < p->npaths; i = path_group_end(p, i)) {
		uint64_t fw = 0, sw = 0;
		for (size_t j = i; j < path_group_end(p, i); j++) {
			if (p->paths[j].layer == LOG_LAYER_STDIO)
				fw += p->paths[j].c[LOG_C_WRITES];
			if (p->paths[j].layer == LOG_LAYER_SYSCALL)
				sw += p->paths[j].c[LOG_C_WRITES];
		}
		if (fw && sw) {
			*fwrites += fw;
			*syscalls += sw;
		}
	}
}

static int tiny_fwrites(struct ana_profile *p)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_STDIO];
	uint64_t ops = L->c[LOG_C_WRITES];
	uint64_t tiny = hist_sum(L->write_hist, 0, TINY_FWRITE_BUCKETS);

	if (ops < TINY_FWRITE_MIN || share(tiny, ops) <= TINY_FWRITE_SHARE)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(tiny, ops));
	ana_fmt_count(b, sizeof b, ops);
	uint64_t fw, sw;
	stdio_syscalls(p, &fw, &sw);
	ana_fmt_count(c, sizeof c, fw);
	ana_fmt_count(d, sizeof d, sw);
	/* The kernel layer tells which cost it is: every call reaching the kernel (an unbuffered or
	 * line-buffered stream), or only the calls themselves (the buffer did its job). */
	if (fw && share(sw, fw) >= TINY_UNBUFFERED_SHARE)
		return add_insight(p, "tiny_fwrites",
				   "%s of %s stdio writes are under %d B (mean %.0f B) and the stream does not buffer "
				   "them: their %s calls reached the kernel as %s write system calls; give the stream "
				   "a large buffer with setvbuf() (stderr and terminals are unbuffered or line-buffered), "
				   "or build the output in memory and write it in one call.",
				   a, b, TINY_FWRITE_BYTES, share(L->c[LOG_C_BYTES_WRITTEN], ops), c, d);
	if (fw)
		return add_insight(p, "tiny_fwrites",
				   "%s of %s stdio writes are under %d B (mean %.0f B): stdio's buffer already turned "
				   "%s of them into %s write system calls, so the cost is the calls themselves (a "
				   "lock and a copy each); build the output in a buffer and write it in one call "
				   "(a larger setvbuf() buffer saves system calls, not these).",
				   a, b, TINY_FWRITE_BYTES, share(L->c[LOG_C_BYTES_WRITTEN], ops), c, d);
	return add_insight(p, "tiny_fwrites",
			   "%s of %s stdio writes are under %d B (mean %.0f B): each call locks the stream and "
			   "copies a little; build the output in a buffer and write it in one call, or give the "
			   "stream a large buffer with setvbuf().",
			   a, b, TINY_FWRITE_BYTES, share(L->c[LOG_C_BYTES_WRITTEN], ops));
}

static int io_mode(struct ana_profile *p)
{
	const struct ana_io_mode_info *m = &p->io_mode;

	if (m->mode == ANA_IO_1_1 && m->ranks > 1)
		return add_insight(p, "io_mode_1_1",
				   "one of %zu ranks did all the data I/O (mode 1-1): funnelling data through one "
				   "process caps bandwidth at what one node gets; let ranks write their own parts "
				   "(N-N), or a shared file with MPI-IO collective I/O.", m->ranks);
	if (m->mode != ANA_IO_N_1)
		return 0;
	/* Shared reads are benign; shared writes contend on the file's locks and blocks. */
	size_t writers = 0;
	unsigned char *seen = calloc(p->nranks ? p->nranks : 1, 1);
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (ana_is_data_file(f) && f->job_view && f->c[LOG_C_BYTES_WRITTEN] && !seen[f->rank_index]) {
			seen[f->rank_index] = 1;
			writers++;
		}
	}
	free(seen);
	if (writers < 2)
		return 0;
	return add_insight(p, "io_mode_n_1",
			   "%zu ranks write one shared file (mode N-1): align each rank's region to the file "
			   "system's block or stripe size and prefer collective I/O, or the ranks serialize on "
			   "the file's locks.", writers);
}

/* Bytes the device moved for a data file ([0] read, [1] written): the requests seen completing
 * and those never seen (docs/KERNEL.md, "Known gap"), which the device served all the same. */
static uint64_t device_bytes(const struct ana_stack_file *f, int d)
{
	return f->bytes[ANA_SL_BLOCK][d] + f->unseen[1 + d];
}

/* Bytes a data file's reads fetched from storage: pages read into the cache, or, for reads that
 * bypass it (O_DIRECT), the block requests charged to the file; whichever saw more. */
static uint64_t fetched(const struct ana_profile *p, const struct ana_stack_file *f)
{
	uint64_t cache = f->pages_read_in * p->page_size, dev = device_bytes(f, 0);
	return cache > dev ? cache : dev;
}

/* Kernel layer: data read more than once came from storage more than once. The user-layer rule
 * (rereads) says the program reads the same bytes again; this one says it cost storage reads,
 * because the page cache did not keep the data (too little memory, other I/O evicting it) or was
 * bypassed. */
static int cache_misses(struct ana_profile *p, const struct ana_stack *st)
{
	uint64_t reread = 0, refetched = 0, worst_refetch = 0;
	size_t n = 0;
	const struct ana_stack_file *worst = NULL;

	for (size_t i = 0; i < st->nfiles; i++) {
		const struct ana_stack_file *f = &st->files[i];
		uint64_t rd = f->bytes[ANA_SL_SYSCALL][0], ext = f->max_read_end, in = fetched(p, f);
		if (rd <= ext || in <= ext)
			continue;
		uint64_t again = in - ext, more = rd - ext;
		reread += more;
		refetched += again < more ? again : more;
		n++;
		if (again > worst_refetch) {
			worst_refetch = again;
			worst = f;
		}
	}
	if (!worst || refetched < REFETCH_MIN_BYTES || share(refetched, reread) < REFETCH_SHARE)
		return 0;
	char t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN];
	int bypass = !worst->pages_read_in;
	ana_fmt_bytes(a, sizeof a, worst->bytes[ANA_SL_SYSCALL][0]);
	ana_fmt_bytes(b, sizeof b, worst->max_read_end);
	ana_fmt_bytes(c, sizeof c, fetched(p, worst));
	ana_fmt_bytes(d, sizeof d, refetched);
	return add_insight(p, "cache_misses",
			   "re-reads went to storage again: %s was read for %s over a %s extent and %s of it came "
			   "from the device (%s fetched again over %zu file%s): %s",
			   path_tail(worst->path, t, sizeof t), a, b, c, d, n, n == 1 ? "" : "s",
			   bypass ? "O_DIRECT reads bypass the page cache, so keep what is read again in memory "
				    "(or read it buffered)."
				  : "the page cache did not keep the data between passes (too little free memory, "
				    "or other I/O evicted it): keep it in memory after the first read, or read it once.");
}

/* Kernel layer: the devices wrote much more for the program's data files than its write calls
 * carried: partial blocks rewritten at every sync, read-modify-write. */
static int write_amplification(struct ana_profile *p, const struct ana_stack *st)
{
	uint64_t asked = st->file_syscall_bytes[1], dev = st->file_block_bytes[1];
	if (dev < asked + AMP_MIN_BYTES || share(dev, asked) < AMP_FACTOR)
		return 0;
	const struct ana_stack_file *worst = NULL;
	for (size_t i = 0; i < st->nfiles; i++) {
		const struct ana_stack_file *f = &st->files[i];
		uint64_t over = device_bytes(f, 1) > f->bytes[ANA_SL_SYSCALL][1]
					? device_bytes(f, 1) - f->bytes[ANA_SL_SYSCALL][1] : 0;
		if (over && (!worst || over > device_bytes(worst, 1) - worst->bytes[ANA_SL_SYSCALL][1]))
			worst = f;
	}
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], t[PATH_SHOWN + 8], c[ANA_UNIT_LEN], syncs[ANA_UNIT_LEN + 16] = "";
	uint64_t nsync = p->layers[LOG_LAYER_SYSCALL].c[LOG_C_FSYNCS];
	ana_fmt_bytes(a, sizeof a, dev);
	ana_fmt_bytes(b, sizeof b, asked);
	if (nsync)
		snprintf(syncs, sizeof syncs, "; %s syncs", ana_fmt_count(c, sizeof c, nsync));
	return add_insight(p, "write_amplification",
			   "the block devices wrote %s for the program's data files where its write calls carried "
			   "%s (%.1fx; most on %s%s): small or unaligned writes synced one by one (fsync, O_SYNC) "
			   "rewrite whole blocks each time; batch writes between syncs and write whole, aligned blocks.",
			   a, b, share(dev, asked), worst ? path_tail(worst->path, t, sizeof t) : "?", syncs);
}

/* Kernel layer: a device served many small requests, each a round trip with its own cost. */
static int small_requests(struct ana_profile *p, const struct ana_stack *st)
{
	for (size_t i = 0; i < st->ndevices; i++) {
		const struct ana_device *d = &st->devices[i];
		/* with the requests never seen completing, which the device served all the same */
		uint64_t ops = d->c[LOG_C_READS] + d->c[LOG_C_WRITES] + d->unseen[0];
		uint64_t bytes = d->c[LOG_C_BYTES_READ] + d->c[LOG_C_BYTES_WRITTEN] + d->unseen[1] + d->unseen[2];
		if (ops < SMALL_REQ_MIN || share(bytes, ops) >= SMALL_REQ_BYTES)
			continue;
		char n[ANA_UNIT_LEN], m[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
		ana_fmt_count(n, sizeof n, ops);
		ana_fmt_bytes(m, sizeof m, bytes / ops);
		ana_fmt_ns(t, sizeof t, d->c[LOG_C_TIME_DEVICE]);
		if (add_insight(p, "small_block_requests",
				"device %s served %s requests of %s on average, %s on the device in all: each small "
				"request is a round trip; move data in larger calls (MiB-sized for streaming), and "
				"leave small O_DIRECT calls to buffered I/O, which the kernel merges.",
				d->name, n, m, t))
			return -ENOMEM;
	}
	return 0;
}

static int kernel_insights(struct ana_profile *p)
{
	struct ana_stack st;
	if (!p->nkernel_logs)
		return 0;
	if (ana_stack_build(p, NULL, 0, &st) < 0)
		return -ENOMEM;
	int r = cache_misses(p, &st);
	if (r == 0)
		r = write_amplification(p, &st);
	if (r == 0)
		r = small_requests(p, &st);
	ana_stack_free(&st);
	return r;
}

int ana_insights_build(struct ana_profile *p)
{
	const struct ana_layer *S = &p->standin;
	if (small_ops(p, &p->layers[LOG_LAYER_POSIX], 0, 1) || small_ops(p, &p->layers[LOG_LAYER_POSIX], 0, 0) ||
	    small_ops(p, S, 1, 1) || small_ops(p, S, 1, 0) || tiny_fwrites(p))
		return -ENOMEM;
	for (unsigned l = LOG_LAYER_POSIX; l <= LOG_LAYER_STDIO; l++)
		if (random_access(p, l, 0) || random_access(p, l, 1))
			return -ENOMEM;
	for (unsigned l = 1; l < ANA_NLAYERS; l++)
		if (!ana_layer_is_kernel(l) && l != LOG_LAYER_MOUNT && metadata_heavy(p, &p->layers[l], log_layer_name(l)))
			return -ENOMEM;
	if (metadata_heavy(p, S, "system-call"))
		return -ENOMEM;
	if (small_files(p) || imbalance(p) || unaligned(p) || unused_opens(p) || rereads(p) || errors(p) ||
	    io_mode(p) || kernel_insights(p) || aggregation(p) || aggregated(p))
		return -ENOMEM;
	return 0;
}
