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
/* Paths named in a sentence are cut to this many bytes (their tail) to keep it one line-ish. */
#define PATH_SHOWN 60

/* Failed metadata calls worth a word: fewer are the ENOENT of stat-before-create and the like. */
#define ERR_META_MIN 100
/* Kernel layer: more than half of at least 100 reads missed the page cache. */
#define CACHE_MIN_READS 100
#define CACHE_MISS_SHARE 0.5
/* Kernel layer: the devices wrote at least 1.5x the bytes of at least 1 MiB of write calls. */
#define AMP_FACTOR 1.5
#define AMP_MIN_BYTES (1u << 20)

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

/* Small accesses of one direction on the POSIX layer: the syscalls themselves. stdio's small
 * calls are buffered by design and have their own rule (tiny fwrites). */
static int small_ops(struct ana_profile *p, int write)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_POSIX];
	const unsigned ops_c = write ? LOG_C_WRITES : LOG_C_READS;
	const unsigned time_c = write ? LOG_C_TIME_WRITE : LOG_C_TIME_READ;
	uint64_t ops = L->c[ops_c];
	uint64_t small = hist_sum(write ? L->write_hist : L->read_hist, 0, SMALL_OP_BUCKETS);
	uint64_t io_time = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE] + L->c[LOG_C_TIME_META];

	if (ops < MIN_OPS || share(small, ops) <= SMALL_OP_SHARE || !io_time)
		return 0;
	/* Per-op times are not kept: give each file's small ops their share of that file's time. */
	double small_time = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (f->layer != LOG_LAYER_POSIX || !f->c[ops_c])
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
				   "%s of %s posix writes are under %d B and take about %s of the I/O time: "
				   "aggregate or buffer them into larger writes.",
				   a, b, SMALL_OP_BYTES, t);
	return add_insight(p, "small_reads",
			   "%s of %s posix reads are under %d B and take about %s of the I/O time: read larger "
			   "blocks (or the whole file once) and pick the pieces in memory.",
			   a, b, SMALL_OP_BYTES, t);
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

/* Rules made for the user layers look at the user layers: the kernel layers repeat the same
 * bytes and calls further down (and have their own rules below). A program the preload library
 * cannot see is judged on its system calls. */
static int user_view(const struct ana_profile *p, unsigned layer)
{
	return !ana_layer_is_kernel(layer) || (p->kernel_only && layer == LOG_LAYER_SYSCALL);
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
			if (!user_view(p, x->layer))
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

static int metadata_heavy(struct ana_profile *p, unsigned layer)
{
	const struct ana_layer *L = &p->layers[layer];
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
			   n, log_layer_name(layer), c1, log_counter_key(k1), c2, log_counter_key(k2), m, d);
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
			if (!user_view(p, p->paths[j].layer))
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

static int rereads(struct ana_profile *p)
{
	size_t n = 0;
	const struct ana_file *worst = NULL;

	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		uint64_t rd = f->c[LOG_C_BYTES_READ], ext = f->c[LOG_C_MAX_READ_END];
		if (!user_view(p, f->layer) || !is_real_path(f->rflags, f->path) || rd < REREAD_MIN_BYTES || rd <= REREAD_FACTOR * ext)
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
			if (!x->c[c] || !user_view(p, x->layer))
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

static int tiny_fwrites(struct ana_profile *p)
{
	const struct ana_layer *L = &p->layers[LOG_LAYER_STDIO];
	uint64_t ops = L->c[LOG_C_WRITES];
	uint64_t tiny = hist_sum(L->write_hist, 0, TINY_FWRITE_BUCKETS);

	if (ops < TINY_FWRITE_MIN || share(tiny, ops) <= TINY_FWRITE_SHARE)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(tiny, ops));
	ana_fmt_count(b, sizeof b, ops);
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
		if (ana_is_data_file(f) && (p->kernel_only || !ana_layer_is_kernel(f->layer)) && f->c[LOG_C_BYTES_WRITTEN] &&
		    !seen[f->rank_index]) {
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

/* Kernel layer: reads that went to storage. A re-read of data just read or written misses only
 * when the page cache is too small for it (or another job evicted it). */
static int cache_misses(struct ana_profile *p)
{
	const uint64_t *c = p->layers[LOG_LAYER_SYSCALL].c;
	uint64_t hit = c[LOG_C_CACHE_HIT_READS], miss = c[LOG_C_CACHE_MISS_READS];
	uint64_t in = p->layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN] * ANA_PAGE_SIZE;
	uint64_t asked = c[LOG_C_BYTES_READ];
	if (hit + miss < CACHE_MIN_READS || share(miss, hit + miss) <= CACHE_MISS_SHARE)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN], d[ANA_UNIT_LEN], e[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(miss, hit + miss));
	ana_fmt_count(b, sizeof b, hit + miss);
	ana_fmt_bytes(d, sizeof d, in);
	ana_fmt_bytes(e, sizeof e, asked);
	return add_insight(p, "cache_misses",
			   "%s of %s reads waited for storage (page-cache misses; %s read in for %s asked): "
			   "read in larger sequential blocks so readahead works, or keep hot data in memory.",
			   a, b, d, e);
}

/* Kernel layer: the block device wrote much more than the program asked for. */
static int write_amplification(struct ana_profile *p)
{
	uint64_t asked = p->layers[LOG_LAYER_SYSCALL].c[LOG_C_BYTES_WRITTEN], dev = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (f->layer == LOG_LAYER_BLOCK && !(f->rflags & LOG_R_PSEUDO)) /* per-file records of real paths */
			dev += f->c[LOG_C_BYTES_WRITTEN];
	}
	if (asked < AMP_MIN_BYTES || share(dev, asked) < AMP_FACTOR)
		return 0;
	char a[ANA_UNIT_LEN], b[ANA_UNIT_LEN];
	ana_fmt_bytes(a, sizeof a, dev);
	ana_fmt_bytes(b, sizeof b, asked);
	return add_insight(p, "write_amplification",
			   "the block devices wrote %s for the program's files where its write calls carried %s "
			   "(%.1fx): partial-block or unaligned writes and rewrites of the same blocks cost "
			   "read-modify-write; write whole, aligned blocks once.",
			   a, b, share(dev, asked));
}

int ana_insights_build(struct ana_profile *p)
{
	if (small_ops(p, 1) || small_ops(p, 0) || tiny_fwrites(p))
		return -ENOMEM;
	for (unsigned l = LOG_LAYER_POSIX; l <= LOG_LAYER_STDIO; l++)
		if (random_access(p, l, 0) || random_access(p, l, 1))
			return -ENOMEM;
	for (unsigned l = 1; l < ANA_NLAYERS; l++)
		if (!ana_layer_is_kernel(l) && metadata_heavy(p, l))
			return -ENOMEM;
	if (small_files(p) || imbalance(p) || unaligned(p) || unused_opens(p) || rereads(p) || errors(p) ||
	    io_mode(p) || cache_misses(p) || write_amplification(p))
		return -ENOMEM;
	return 0;
}
