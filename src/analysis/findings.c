/* SPDX-License-Identifier: MIT */
/*
 * The rules behind the report's advice (findings.h). Each rule reads the finished profile (and
 * the layer stack of a job with a kernel log), and when it fires records the figures that
 * triggered it, the threshold they crossed, a sentence saying what was found and one saying
 * what to change. Thresholds are named below with the reason for their value, so a reader can
 * argue with a number rather than with code. Rules only speak where they fit the program: MPI
 * advice for MPI jobs, data-file rules for data files (not pipes, system paths or directories).
 * This file reads no files and prints nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
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
/* Reads through stdio: a line read by fgets or getline is a natural unit (sqlite3 reads its script
 * that way, 38 B a line); a loop of getc (xargs, 1 B a call) is what costs. Under 8 B, then. */
#define TINY_FREAD_BYTES 8
#define TINY_FREAD_BUCKETS 4 /* log2 buckets 0..3 hold sizes < 8 */
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

/* Write aggregation (seed 002, docs/AGGREGATION.md): a file written mostly in writes under 64 KiB
 * gains from `--aggregate`. The threshold offered is the smallest power of two from 4 KiB to 1 MiB
 * under which AGG_COVER of the file's writes fall, read off its merged write-size histogram
 * (bucket b holds sizes below 2^b). Files already aggregated (agg_* counters) are left out. A write
 * call costs a microsecond or two: under a thousand of them the gain is a millisecond or so, not
 * worth a change (xz's 341 writes of 8 KiB). */
#define AGG_MIN_WRITES 1000
#define AGG_SMALL_BUCKETS 17 /* sizes < 64 KiB */
#define AGG_SMALL_SHARE 0.5
#define AGG_COVER 0.9
#define AGG_MAX_FILES 3
/* Writes a sync separates are not merged by any buffer (each sync flushes it), and a sync costs a
 * device round trip (0.1-10 ms) where a write call costs about a microsecond: with fewer than 64
 * writes per sync the syncs are the cost, and the syncs rule says so. */
#define AGG_WRITES_PER_SYNC 64
/* A file written from start to end mostly in pieces of 8 KiB or more (tar's 10 KiB records)
 * streams through the page cache, which merges it: at most a call per two pages. A checkpoint
 * of many small fields among a few large arrays is no stream, however large its mean write. */
#define AGG_STREAM_BUCKETS 14 /* sizes < 8 KiB */
#define AGG_STREAM_CONSEC 0.9
/* O_DIRECT requests under 256 KiB on average: each waits for the device, and SSDs and disks need
 * requests of a few hundred KiB (or many in flight) to stream. */
#define DIRECT_SMALL_MEAN (256u << 10)

/* MPI-IO (the mpiio layer; Drishti's best-known advice). On a file the ranks share, a hundred
 * independent calls is where ROMIO's collective buffering would have merged real work, and a
 * mean under 1 MiB (a typical stripe) means each call is a small, separately locked request. */
#define MPI_INDEP_MIN MIN_OPS
#define MPI_SMALL_BYTES (1u << 20)

/* HDF5: a chunk is HDF5's unit of I/O and of its chunk cache (1 MiB by default); under 64 KiB a
 * chunk costs a B-tree lookup and a file system request for little data, and a hundred of them is
 * where that becomes the dataset's I/O pattern. */
#define H5_SMALL_CHUNK_BYTES (64u << 10)
#define H5_SMALL_CHUNKS_MIN 100

/* HDF5 reads that reach the file as many small POSIX reads: chunks missed the chunk cache (or are
 * too small to be worth one read each). A thousand reads is where per-read cost shows; ten per
 * H5Dread and under 16 KiB each is a dataset read chunk by chunk in small pieces. */
#define H5_CACHE_POSIX_MIN 1000
#define H5_CACHE_PER_CALL 10
#define H5_CACHE_SMALL_READ (16u << 10)

/* The rules' shared state: what they read and where they write. */
struct fb {
	const struct ana_profile *p;
	const struct ana_stack *st; /* NULL without a kernel log */
	struct ana_findings *out;
	int mpi; /* some process has an MPI rank: the rank and I/O-mode advice applies */
};

/* A new finding, zeroed but for id, severity and layer; NULL when out of memory. */
static struct ana_finding *add(struct fb *b, const char *id, enum ana_severity sev, int layer)
{
	struct ana_finding *v = realloc(b->out->v, (b->out->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	b->out->v = v;
	struct ana_finding *f = &v[b->out->n++];
	*f = (struct ana_finding){.id = id, .severity = sev, .layer = layer, .rank = -1};
	return f;
}

static void fig(struct ana_finding *f, const char *name, double value, enum ana_unit unit)
{
	if (f->nfigures < ANA_FIGURES_MAX)
		f->figures[f->nfigures++] = (struct ana_figure){name, value, unit};
}

/* The figure compared with the threshold, and the threshold. */
static void limit(struct ana_finding *f, const char *name, double value)
{
	f->threshold_name = name;
	f->threshold = value;
}

static int vsay(char **dst, const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* The finding's two sentences: what was found, what to change. 0 or -ENOMEM. */
static int text(struct ana_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int text(struct ana_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsay(&f->text, fmt, ap);
	va_end(ap);
	return r;
}

static int advise(struct ana_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int advise(struct ana_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsay(&f->recommendation, fmt, ap);
	va_end(ap);
	return r;
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

/* A file moved in one call, and perhaps the call that found its end (a read returning 0, cp's
 * copy_file_range returning 0): however small that call, no larger one could replace it; how
 * many such files there are is the small-files rule's. */
static int moved_whole(const struct ana_file *f, int write)
{
	return f->c[write ? LOG_C_WRITES : LOG_C_READS] <= 2;
}

/* Small accesses of one direction at the system-call boundary: the POSIX layer, or for processes
 * only the kernel saw, their system calls (L = p->standin). stdio's small calls are buffered by
 * design and have their own rules (tiny fwrites, tiny freads). */
static int small_ops(struct fb *b, const struct ana_layer *L, int standin, int write)
{
	const struct ana_profile *p = b->p;
	const unsigned ops_c = write ? LOG_C_WRITES : LOG_C_READS;
	const unsigned time_c = write ? LOG_C_TIME_WRITE : LOG_C_TIME_READ;
	const char *what = standin ? "system-call" : "posix";
	uint64_t ops = L->c[ops_c];
	uint64_t small = hist_sum(write ? L->write_hist : L->read_hist, 0, SMALL_OP_BUCKETS);
	uint64_t io_time = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE] + L->c[LOG_C_TIME_META];

	if (ops < MIN_OPS || share(small, ops) <= SMALL_OP_SHARE || !io_time)
		return 0;
	/* mostly aggregated already: the `aggregated` finding says what became of them */
	if (write && !standin &&
	    share(L->c[LOG_C_AGG_SMALL] + L->c[LOG_C_AGG_MEDIUM] + L->c[LOG_C_AGG_DIRECT], ops) >= 0.5)
		return 0;
	/* Per-op times are not kept: give each file's small ops their share of that file's time.
	 * Pipes and sockets are the program's plumbing, not its file I/O: a read of a pipe lasts as
	 * long as the process at the other end takes to write (make, gcc and git wait for their
	 * children that way), so their read and write time is left out of the I/O time too. Files
	 * moved whole in one call are left out: their calls are as large as the files. */
	double small_time = 0;
	uint64_t small_data = 0, whole = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (f->layer != (standin ? LOG_LAYER_SYSCALL : LOG_LAYER_POSIX) || (standin && !f->job_view))
			continue;
		if (f->rflags & LOG_R_PSEUDO) {
			uint64_t waited = f->c[LOG_C_TIME_READ] + f->c[LOG_C_TIME_WRITE];
			io_time -= waited < io_time ? waited : io_time;
		}
		if (!f->c[ops_c] || !ana_is_data_file(f))
			continue;
		uint64_t s = hist_sum(write ? f->write_hist : f->read_hist, 0, SMALL_OP_BUCKETS);
		if (moved_whole(f, write)) {
			whole += s;
			continue;
		}
		small_time += (double)f->c[time_c] * share(s, f->c[ops_c]);
		small_data += s;
	}
	double tshare = io_time ? small_time / (double)io_time : 0;
	if (tshare <= SMALL_OP_TIME_SHARE || share(small_data, ops) <= SMALL_OP_SHARE / 2)
		return 0;
	struct ana_finding *f = add(b, write ? "small_writes" : "small_reads", ANA_SEV_WARNING,
				    standin ? LOG_LAYER_SYSCALL : LOG_LAYER_POSIX);
	if (!f)
		return -ENOMEM;
	fig(f, "ops", (double)ops, ANA_U_COUNT);
	fig(f, "small_ops", (double)small, ANA_U_COUNT);
	fig(f, "small_share", share(small, ops), ANA_U_RATIO);
	fig(f, "small_time_share", tshare, ANA_U_RATIO);
	fig(f, "small_below", SMALL_OP_BYTES, ANA_U_BYTES);
	fig(f, "small_data_ops", (double)small_data, ANA_U_COUNT);
	fig(f, "whole_file_ops", (double)whole, ANA_U_COUNT);
	limit(f, "small_share", SMALL_OP_SHARE);
	char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(small, ops));
	ana_fmt_count(n, sizeof n, ops);
	ana_fmt_pct(t, sizeof t, tshare);
	if (text(f, "%s of %s %s %s are under %d B and take about %s of the I/O time (pipes and sockets left out).",
		 a, n, what, write ? "writes" : "reads", SMALL_OP_BYTES, t))
		return -ENOMEM;
	return write ? advise(f, "aggregate or buffer them into larger writes.")
		     : advise(f, "read larger blocks (or the whole file once) and pick the pieces in memory.");
}

static int random_access(struct fb *b, unsigned layer, int write)
{
	const struct ana_layer *L = &b->p->layers[layer];
	uint64_t ops = L->c[write ? LOG_C_WRITES : LOG_C_READS];
	uint64_t rnd = ana_layer_random_ops(L, write);

	if (ops < MIN_OPS || share(rnd, ops) <= RANDOM_SHARE)
		return 0;
	struct ana_finding *f = add(b, write ? "random_writes" : "random_reads", ANA_SEV_WARNING, (int)layer);
	if (!f)
		return -ENOMEM;
	fig(f, "ops", (double)ops, ANA_U_COUNT);
	fig(f, "random_ops", (double)rnd, ANA_U_COUNT);
	fig(f, "random_share", share(rnd, ops), ANA_U_RATIO);
	limit(f, "random_share", RANDOM_SHARE);
	char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(rnd, ops));
	ana_fmt_count(n, sizeof n, ops);
	if (text(f, "%s of %s %s %s are random (start before the end of the previous one).", a, n,
		 log_layer_name(layer), write ? "writes" : "reads"))
		return -ENOMEM;
	return advise(f, "sort or batch requests by offset, or move larger contiguous blocks and rearrange in "
			 "memory.");
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

/* 1 when the group of paths[i] is a directory of the job: another path of the job lies below it.
 * paths[] is sorted, so "DIR/x" comes right after DIR's group, or after other "DIR<c>" names
 * with c < '/' (such as "DIR-old", "DIR.1"): look past those. */
static int is_dir_of_job(const struct ana_profile *p, size_t i)
{
	const char *d = p->paths[i].path;
	size_t n = strlen(d);
	if (!n)
		return 0;
	if (d[n - 1] == '/')
		return 1;
	for (size_t j = path_group_end(p, i); j < p->npaths; j++) {
		const char *x = p->paths[j].path;
		if (strncmp(x, d, n))
			return 0;
		if (x[n] == '/')
			return 1;
		if ((unsigned char)x[n] > '/')
			return 0;
	}
	return 0;
}

/* Many small files, and what the job does with them. A job that reads a tree of small files into
 * a large one (tar c, zip), writes a tree out of a large one (tar x) or copies a tree (cp -r,
 * rsync) pays the per-file cost by its nature: the tree is its input or its output, and packing
 * advice is for whoever keeps the tree. Told apart by counts: small files only read and a large
 * file written (packing), the reverse (unpacking), or as many small files written as read
 * (copying, within 10%). */
static int small_files(struct fb *b)
{
	const struct ana_profile *p = b->p;
	size_t n = 0, n_read = 0, n_written = 0, large_read = 0, large_written = 0;
	uint64_t total = 0;

	for (size_t i = 0; i < p->npaths; i = path_group_end(p, i)) {
		uint64_t ext = 0, rd = 0, wr = 0;
		int real = 1;
		for (size_t j = i; j < path_group_end(p, i); j++) {
			const struct ana_path *x = &p->paths[j];
			if (!x->job_view) /* the kernel layers repeat these files further down */
				continue;
			real &= is_real_path(x->rflags, x->path);
			rd += x->c[LOG_C_BYTES_READ];
			wr += x->c[LOG_C_BYTES_WRITTEN];
			if (extent(x->c) > ext)
				ext = extent(x->c);
		}
		if (!real || !(rd + wr))
			continue;
		if (ext >= SMALL_FILE_BYTES) {
			large_read += rd > 0;
			large_written += wr > 0;
			continue;
		}
		n++;
		total += ext;
		n_written += wr > 0;
		n_read += !wr;
	}
	if (n <= SMALL_FILES_MIN)
		return 0;
	const char *shape = NULL;
	if (n_written * 10 < n && large_written)
		shape = "reads them into larger files (an archiver's work)";
	else if (n_read * 10 < n && large_read)
		shape = "writes them out of larger files (an extractor's work)";
	else if (n_read && n_written && (n_read > n_written ? n_read - n_written : n_written - n_read) * 10 <= n_read)
		shape = "copies them (as many written as read)";
	struct ana_finding *f = add(b, "small_files", shape ? ANA_SEV_INFO : ANA_SEV_WARNING, -1);
	if (!f)
		return -ENOMEM;
	fig(f, "files", (double)n, ANA_U_COUNT);
	fig(f, "bytes", (double)total, ANA_U_BYTES);
	fig(f, "file_below", SMALL_FILE_BYTES, ANA_U_BYTES);
	fig(f, "files_only_read", (double)n_read, ANA_U_COUNT);
	fig(f, "files_written", (double)n_written, ANA_U_COUNT);
	fig(f, "large_files_read", (double)large_read, ANA_U_COUNT);
	fig(f, "large_files_written", (double)large_written, ANA_U_COUNT);
	limit(f, "files", SMALL_FILES_MIN);
	char a[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
	ana_fmt_count(a, sizeof a, n);
	ana_fmt_bytes(t, sizeof t, total);
	if (shape)
		return text(f, "%s data files are under 1 MiB each (%s in all); the job %s.", a, t, shape) ||
			       advise(f, "nothing to change in this program: the per-file cost comes with the file tree. "
					 "Where later jobs read such a tree on a parallel file system, keep it packed "
					 "(tar, HDF5, a squashfs image) and unpack it on node-local storage.")
			   ? -ENOMEM : 0;
	if (text(f, "%s data files are under 1 MiB each (%s in all).", a, t))
		return -ENOMEM;
	return advise(f, "pack them into fewer, larger files (an archive, HDF5, one file per rank); each file "
			 "costs opens, closes and metadata server work.");
}

static const unsigned meta_kinds[] = {LOG_C_OPENS,   LOG_C_CLOSES, LOG_C_SEEKS, LOG_C_STATS, LOG_C_FSYNCS,
				      LOG_C_RENAMES, LOG_C_DUPS,   LOG_C_MMAPS, LOG_C_META_OTHER};
#define NMETA_KINDS (sizeof meta_kinds / sizeof meta_kinds[0])

/* L: a user layer, or the system calls of the processes only the kernel saw (name "system-call"). */
static int metadata_heavy(struct fb *b, const struct ana_layer *L, int layer, const char *name)
{
	uint64_t meta = L->c[LOG_C_TIME_META], data = L->c[LOG_C_TIME_READ] + L->c[LOG_C_TIME_WRITE];

	if (meta < META_MIN_NS || meta <= data)
		return 0;
	/* Name the two commonest metadata calls: that is where the fix is. */
	unsigned k1 = meta_kinds[0], k2;
	for (size_t i = 1; i < NMETA_KINDS; i++)
		if (L->c[meta_kinds[i]] > L->c[k1])
			k1 = meta_kinds[i];
	k2 = k1 == meta_kinds[0] ? meta_kinds[1] : meta_kinds[0];
	for (size_t i = 0; i < NMETA_KINDS; i++)
		if (meta_kinds[i] != k1 && L->c[meta_kinds[i]] > L->c[k2])
			k2 = meta_kinds[i];
	struct ana_finding *f = add(b, "metadata_heavy", ANA_SEV_WARNING, layer);
	if (!f)
		return -ENOMEM;
	fig(f, "meta_ops", (double)L->meta_ops, ANA_U_COUNT);
	fig(f, "time_meta", (double)meta, ANA_U_NS);
	fig(f, "time_data", (double)data, ANA_U_NS);
	fig(f, log_counter_key(k1), (double)L->c[k1], ANA_U_COUNT);
	fig(f, log_counter_key(k2), (double)L->c[k2], ANA_U_COUNT);
	if (L->c[LOG_C_FSYNCS] && k1 != LOG_C_FSYNCS && k2 != LOG_C_FSYNCS)
		fig(f, "fsyncs", (double)L->c[LOG_C_FSYNCS], ANA_U_COUNT);
	limit(f, "time_meta", (double)data);
	char n[ANA_UNIT_LEN], m[ANA_UNIT_LEN], d[ANA_UNIT_LEN], c1[ANA_UNIT_LEN], c2[ANA_UNIT_LEN];
	ana_fmt_count(n, sizeof n, L->meta_ops);
	ana_fmt_ns(m, sizeof m, meta);
	ana_fmt_ns(d, sizeof d, data);
	ana_fmt_count(c1, sizeof c1, L->c[k1]);
	ana_fmt_count(c2, sizeof c2, L->c[k2]);
	if (text(f, "%s %s metadata ops (most: %s %s, %s %s) took %s, more than reads and writes (%s).", n, name,
		 c1, log_counter_key(k1), c2, log_counter_key(k2), m, d))
		return -ENOMEM;
	/* syncs are the costliest metadata call and have their own remedy */
	if (k1 == LOG_C_FSYNCS)
		return advise(f, "sync less often: once per batch of writes or at checkpoints, not after every "
				 "write (fdatasync where file times need not be durable).");
	return advise(f, "open files once and keep them open, cache stat() results, use fewer files.");
}

/* Syncs named on their own: a program that syncs (sqlite's journal, a database, a logger) spends
 * its metadata time there, and the text report must say so, not only the JSON. */
#define SYNC_MIN 100
#define SYNC_MIN_NS 10000000ull
static int syncs(struct fb *b, unsigned layer)
{
	const struct ana_layer *L = &b->p->layers[layer];
	uint64_t n = L->c[LOG_C_FSYNCS];
	if (n < SYNC_MIN)
		return 0;
	/* sync time: the files' meta time in proportion to their syncs among their metadata calls */
	double t = 0;
	const struct ana_path *worst = NULL;
	for (size_t i = 0; i < b->p->npaths; i++) {
		const struct ana_path *x = &b->p->paths[i];
		if (x->layer != layer || !x->c[LOG_C_FSYNCS])
			continue;
		t += (double)x->c[LOG_C_TIME_META] * share(x->c[LOG_C_FSYNCS], ana_meta_ops(x->c));
		if (!worst || x->c[LOG_C_FSYNCS] > worst->c[LOG_C_FSYNCS])
			worst = x;
	}
	if (t < SYNC_MIN_NS)
		return 0;
	struct ana_finding *f = add(b, "many_syncs", ANA_SEV_WARNING, (int)layer);
	if (!f)
		return -ENOMEM;
	f->path = worst ? worst->path : NULL;
	fig(f, "fsyncs", (double)n, ANA_U_COUNT);
	fig(f, "time_sync_estimate", t, ANA_U_NS);
	if (worst)
		fig(f, "fsyncs_of_file", (double)worst->c[LOG_C_FSYNCS], ANA_U_COUNT);
	limit(f, "fsyncs", SYNC_MIN);
	char a[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN], pt[PATH_SHOWN + 8];
	ana_fmt_count(a, sizeof a, n);
	ana_fmt_ns(c, sizeof c, (uint64_t)t);
	ana_fmt_count(d, sizeof d, worst ? worst->c[LOG_C_FSYNCS] : 0);
	if (text(f, "%s %s syncs (fsync, fdatasync, sync_file_range, msync) took about %s; most on %s (%s).", a,
		 log_layer_name(layer), c, worst ? path_tail(worst->path, pt, sizeof pt) : "?", d))
		return -ENOMEM;
	return advise(f, "each sync waits for the device: group writes into transactions and sync once per "
			 "group (sqlite: one transaction per batch, or PRAGMA synchronous=NORMAL with WAL).");
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

/* Ranks are MPI's: a pipeline of different programs (git, make, a shell script) has no reason to
 * balance its processes' I/O, so this is said of MPI jobs only. */
static int imbalance(struct fb *b)
{
	const struct ana_profile *p = b->p;
	if (!b->mpi || p->ranks_with_io < 2 ||
	    (p->imbalance_bytes <= IMBALANCE_MAX && p->imbalance_time <= IMBALANCE_MAX))
		return 0;
	/* The rank moving the most bytes and the one waiting longest are not always the same. */
	const struct ana_rank *kb = heaviest_rank(p, 1), *kt = heaviest_rank(p, 0);
	struct ana_finding *f = add(b, "rank_imbalance", ANA_SEV_WARNING, -1);
	if (!f)
		return -ENOMEM;
	f->rank = kt->rank;
	f->pid = kt->rank < 0 ? kt->pid : 0;
	fig(f, "ranks_with_io", (double)p->ranks_with_io, ANA_U_COUNT);
	fig(f, "imbalance_bytes", p->imbalance_bytes, ANA_U_FACTOR);
	fig(f, "imbalance_time", p->imbalance_time, ANA_U_FACTOR);
	limit(f, p->imbalance_time > IMBALANCE_MAX ? "imbalance_time" : "imbalance_bytes", IMBALANCE_MAX);
	char by_b[32], by_t[32];
	rank_label(kb, by_b, sizeof by_b);
	rank_label(kt, by_t, sizeof by_t);
	if (text(f, "I/O is unbalanced over the %zu ranks that did I/O: %s moved %.2fx the mean bytes and %s "
		    "spent %.2fx the mean I/O time.", p->ranks_with_io, by_b, p->imbalance_bytes, by_t,
		 p->imbalance_time))
		return -ENOMEM;
	return advise(f, "spread the I/O evenly over ranks, or let more ranks share it (e.g. MPI-IO collective "
			 "I/O).");
}

static int unaligned(struct fb *b)
{
	const struct ana_profile *p = b->p;
	/* pipes, sockets and terminals have no blocks to misalign: count data files only */
	uint64_t ops = 0, bad = 0;
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		if (x->layer != LOG_LAYER_POSIX || !is_real_path(x->rflags, x->path))
			continue;
		ops += x->c[LOG_C_READS] + x->c[LOG_C_WRITES];
		bad += x->c[LOG_C_FILE_NOT_ALIGNED];
	}
	if (ops < MIN_OPS || share(bad, ops) <= UNALIGNED_SHARE)
		return 0;
	uint32_t align = p->first ? p->first->log.file_alignment : 0;
	struct ana_finding *f = add(b, "unaligned", ANA_SEV_WARNING, LOG_LAYER_POSIX);
	if (!f)
		return -ENOMEM;
	fig(f, "ops", (double)ops, ANA_U_COUNT);
	fig(f, "unaligned_ops", (double)bad, ANA_U_COUNT);
	fig(f, "unaligned_share", share(bad, ops), ANA_U_RATIO);
	fig(f, "alignment", align ? align : 4096, ANA_U_BYTES);
	limit(f, "unaligned_share", UNALIGNED_SHARE);
	char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(bad, ops));
	ana_fmt_count(n, sizeof n, ops);
	if (text(f, "%s of %s posix reads and writes of data files start at offsets that are not multiples of %u B "
		    "(the file alignment).", a, n, align ? align : 4096))
		return -ENOMEM;
	return advise(f, "align offsets and sizes to it, or the file system reads and rewrites partial blocks.");
}

/* Files opened and never used. A directory opened to list it (LOG_R_DIR: its getdents calls are
 * libc's own), to sync it (after a rename) or as the base of *at() calls is used; so is a file
 * opened to be synced or locked, or opened to be made or emptied (LOG_R_CREAT: touch, a lock file,
 * tar's placeholder for a link it makes at the end). Logs older than LOG_R_DIR tell a directory by a path of the job
 * below it. */
static int unused_opens(struct fb *b)
{
	const struct ana_profile *p = b->p;
	size_t n = 0;
	const char *example = NULL;

	for (size_t i = 0; i < p->npaths; i = path_group_end(p, i)) {
		uint64_t opens = 0, used = 0;
		int real = 1;
		for (size_t j = i; j < path_group_end(p, i); j++) {
			const uint64_t *c = p->paths[j].c;
			if (!p->paths[j].job_view)
				continue;
			real &= is_real_path(p->paths[j].rflags, p->paths[j].path) &&
				!(p->paths[j].rflags & (LOG_R_DIR | LOG_R_CREAT));
			opens += c[LOG_C_OPENS];
			used += c[LOG_C_READS] + c[LOG_C_WRITES] + c[LOG_C_MMAPS] + c[LOG_C_FSYNCS];
		}
		if (real && opens && !used && !is_dir_of_job(p, i)) {
			if (!example)
				example = p->paths[i].path;
			n++;
		}
	}
	if (!n)
		return 0;
	struct ana_finding *f = add(b, "unused_opens", ANA_SEV_WARNING, -1);
	if (!f)
		return -ENOMEM;
	f->path = example;
	fig(f, "files", (double)n, ANA_U_COUNT);
	limit(f, "files", 0);
	char t[PATH_SHOWN + 8];
	if (text(f, "%zu file%s opened but never read, written, mapped or synced (e.g. %s).", n,
		 n == 1 ? " was" : "s were", path_tail(example, t, sizeof t)))
		return -ENOMEM;
	return advise(f, "drop those opens, or use stat()/access() when only metadata is needed.");
}

static int aggregation(struct fb *b)
{
	const struct ana_profile *p = b->p;
	struct {
		const char *path;
		uint64_t writes, small, hist[LOG_HIST_BUCKETS];
	} best[AGG_MAX_FILES] = {{0}};
	for (size_t i = 0; i < p->nfiles;) {
		const struct ana_file *f = &p->files[i];
		uint64_t w = 0, agg = 0, syncs = 0, consec = 0, h[LOG_HIST_BUCKETS] = {0};
		uint16_t rflags = 0;
		size_t j = i;
		for (; j < p->nfiles && p->files[j].layer == f->layer && !strcmp(p->files[j].path, f->path); j++) {
			const uint64_t *c = p->files[j].c;
			w += c[LOG_C_WRITES];
			agg += c[LOG_C_AGG_SMALL] + c[LOG_C_AGG_MEDIUM] + c[LOG_C_AGG_DIRECT];
			/* aggregation already decided it does not pay there (aggregation_bypassed) */
			agg += (p->files[j].agg_states & (1u << LOG_AGG_BYPASS_LOCAL | 1u << LOG_AGG_BYPASS_CHEAP)) != 0;
			syncs += c[LOG_C_FSYNCS];
			consec += c[LOG_C_CONSEC_WRITES];
			rflags |= p->files[j].rflags;
			for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
				h[k] += p->files[j].write_hist[k];
		}
		i = j;
		if (f->layer != LOG_LAYER_POSIX || !is_real_path(f->rflags, f->path) || agg || w < AGG_MIN_WRITES)
			continue;
		/* O_DIRECT (its own rule), syncs between the writes, or a stream the page cache merges */
		if ((rflags & LOG_R_DIRECT) || syncs * AGG_WRITES_PER_SYNC > w ||
		    (share(consec, w) >= AGG_STREAM_CONSEC && share(hist_sum(h, 0, AGG_STREAM_BUCKETS), w) < 0.5))
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
		unsigned bk = 12;
		while (bk < 20 && (double)hist_sum(best[k].hist, 0, bk + 1) < AGG_COVER * (double)best[k].writes)
			bk++;
		uint64_t covered = hist_sum(best[k].hist, 0, bk + 1);
		struct ana_finding *f = add(b, "aggregate_writes", ANA_SEV_WARNING, LOG_LAYER_POSIX);
		if (!f)
			return -ENOMEM;
		f->path = best[k].path;
		fig(f, "writes", (double)best[k].writes, ANA_U_COUNT);
		fig(f, "small_writes", (double)best[k].small, ANA_U_COUNT);
		fig(f, "small_share", share(best[k].small, best[k].writes), ANA_U_RATIO);
		fig(f, "threshold_offered", bk < 20 ? (double)(1u << bk) : (double)(1u << 20), ANA_U_BYTES);
		fig(f, "covered_share", share(covered, best[k].writes), ANA_U_RATIO);
		limit(f, "small_share", AGG_SMALL_SHARE);
		char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN], c[ANA_UNIT_LEN], th[ANA_UNIT_LEN], t[PATH_SHOWN + 8];
		ana_fmt_pct(a, sizeof a, share(best[k].small, best[k].writes));
		ana_fmt_count(n, sizeof n, best[k].writes);
		ana_fmt_pct(c, sizeof c, share(covered, best[k].writes));
		if (bk < 20)
			snprintf(th, sizeof th, "%uK", 1u << (bk - 10));
		else
			snprintf(th, sizeof th, "1M");
		if (text(f, "%s of the %s writes to %s are under 64 KiB; writes under %s are %s of them (by the "
			    "size histogram).", a, n, path_tail(best[k].path, t, sizeof t), th, c) ||
		    advise(f, "aggregate them: iostrata run --aggregate '%s:threshold=%s'.", best[k].path, th))
			return -ENOMEM;
	}
	return 0;
}

/* Small reads and writes that bypass the page cache (O_DIRECT): nothing merges or reads ahead for
 * them, so each is a device request the call waits for. */
static int small_direct(struct fb *b)
{
	const struct ana_profile *p = b->p;
	uint64_t ops = 0, bytes = 0, ns = 0;
	size_t n = 0;
	const struct ana_path *worst = NULL;
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		uint64_t o = x->c[LOG_C_READS] + x->c[LOG_C_WRITES];
		if (x->layer != LOG_LAYER_POSIX || !(x->rflags & LOG_R_DIRECT) || !x->job_view || !o ||
		    !is_real_path(x->rflags, x->path))
			continue;
		ops += o;
		bytes += x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN];
		ns += x->c[LOG_C_TIME_READ] + x->c[LOG_C_TIME_WRITE];
		n++;
		if (!worst || o > worst->c[LOG_C_READS] + worst->c[LOG_C_WRITES])
			worst = x;
	}
	if (ops < MIN_OPS || share(bytes, ops) >= DIRECT_SMALL_MEAN)
		return 0;
	struct ana_finding *f = add(b, "small_direct_io", ANA_SEV_WARNING, LOG_LAYER_POSIX);
	if (!f)
		return -ENOMEM;
	f->path = worst->path;
	fig(f, "ops", (double)ops, ANA_U_COUNT);
	fig(f, "bytes", (double)bytes, ANA_U_BYTES);
	fig(f, "mean_request", share(bytes, ops), ANA_U_BYTES);
	fig(f, "time", (double)ns, ANA_U_NS);
	fig(f, "files", (double)n, ANA_U_COUNT);
	limit(f, "mean_request", DIRECT_SMALL_MEAN);
	char a[ANA_UNIT_LEN], m[ANA_UNIT_LEN], t[ANA_UNIT_LEN], pt[PATH_SHOWN + 8];
	ana_fmt_count(a, sizeof a, ops);
	ana_fmt_bytes(m, sizeof m, bytes / ops);
	ana_fmt_ns(t, sizeof t, ns);
	if (text(f, "%s reads and writes on %zu file%s opened with O_DIRECT (most on %s) bypass the page cache in "
		    "requests of %s on average; each waits for the device, %s in all.", a, n, n == 1 ? "" : "s",
		 path_tail(worst->path, pt, sizeof pt), m, t))
		return -ENOMEM;
	return advise(f, "O_DIRECT pays with large aligned requests (1 MiB or more) or many in flight (io_uring, "
			 "libaio); for small requests use buffered I/O, which the kernel merges and reads ahead.");
}

/* What write aggregation did with the writes it handled (counters of the POSIX layer). */
static int aggregated(struct fb *b)
{
	const struct ana_layer *L = &b->p->layers[LOG_LAYER_POSIX];
	uint64_t sm = L->c[LOG_C_AGG_SMALL], md = L->c[LOG_C_AGG_MEDIUM], di = L->c[LOG_C_AGG_DIRECT];
	uint64_t app = sm + md + di, calls = di + L->c[LOG_C_AGG_ISSUED_WRITES];
	if (!app)
		return 0;
	struct ana_finding *f = add(b, "aggregated", ANA_SEV_INFO, LOG_LAYER_POSIX);
	if (!f)
		return -ENOMEM;
	fig(f, "writes", (double)app, ANA_U_COUNT);
	fig(f, "agg_small", (double)sm, ANA_U_COUNT);
	fig(f, "agg_medium", (double)md, ANA_U_COUNT);
	fig(f, "agg_direct", (double)di, ANA_U_COUNT);
	fig(f, "write_calls", (double)calls, ANA_U_COUNT);
	fig(f, "calls_share", share(calls, app), ANA_U_RATIO);
	char a[ANA_UNIT_LEN], s[ANA_UNIT_LEN], m[ANA_UNIT_LEN], d[ANA_UNIT_LEN], e[ANA_UNIT_LEN], q[ANA_UNIT_LEN];
	ana_fmt_count(a, sizeof a, app);
	ana_fmt_count(s, sizeof s, sm);
	ana_fmt_count(m, sizeof m, md);
	ana_fmt_count(d, sizeof d, di);
	ana_fmt_count(e, sizeof e, calls);
	ana_fmt_pct(q, sizeof q, share(calls, app));
	if (text(f, "%s writes went through write aggregation (%s into the process buffer, %s into the shared ring, "
		    "%s direct) and reached the file system as %s write calls (%s of them).", a, s, m, d, e, q))
		return -ENOMEM;
	return advise(f, "nothing to change; close and fsync of those files include writing the buffered bytes "
			 "back.");
}

/* Files --aggregate matched but left alone (record.agg_state, docs/AGGREGATION.md "When it pays"):
 * on a local file system (by its type), or measured: their first small writes cost less than a
 * request worth saving. Per state: files, their writes, and an example with its file system. */
static int aggregation_bypassed(struct fb *b)
{
	const struct ana_profile *p = b->p;
	size_t nfiles[2] = {0, 0};
	uint64_t writes[2] = {0, 0}, probe_ns = 0;
	const struct ana_file *ex[2] = {NULL, NULL};
	const char *last = NULL;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (f->layer != LOG_LAYER_POSIX)
			continue;
		int k = f->agg_states & (1u << LOG_AGG_BYPASS_LOCAL) ? 0 : f->agg_states & (1u << LOG_AGG_BYPASS_CHEAP) ? 1 : -1;
		if (k < 0)
			continue;
		if (!last || strcmp(last, f->path)) /* a path's ranks count once */
			nfiles[k]++;
		last = f->path;
		writes[k] += f->c[LOG_C_WRITES];
		if (!ex[k] || f->c[LOG_C_WRITES] > ex[k]->c[LOG_C_WRITES])
			ex[k] = f;
		if (k == 1 && f->agg_probe_ns > probe_ns)
			probe_ns = f->agg_probe_ns;
	}
	if (!nfiles[0] && !nfiles[1])
		return 0;
	struct ana_finding *f = add(b, "aggregation_bypassed", ANA_SEV_INFO, LOG_LAYER_POSIX);
	if (!f)
		return -ENOMEM;
	f->path = (ex[0] ? ex[0] : ex[1])->path;
	fig(f, "files_local_fs", (double)nfiles[0], ANA_U_COUNT);
	fig(f, "writes_local_fs", (double)writes[0], ANA_U_COUNT);
	fig(f, "files_measured_cheap", (double)nfiles[1], ANA_U_COUNT);
	fig(f, "writes_measured_cheap", (double)writes[1], ANA_U_COUNT);
	fig(f, "probe_cost", (double)probe_ns, ANA_U_NS);
	fig(f, "pays_from", 5000.0, ANA_U_NS);
	char pt[PATH_SHOWN + 8], pn[ANA_UNIT_LEN], a[160] = "", c[240] = "";
	if (ex[0]) {
		const char *fs = log_fs_name(ex[0]->agg_fs_magic);
		snprintf(a, sizeof a, "%zu file%s on a local file system (%s, e.g. %s): a small write there costs its "
			 "bytes, not a request", nfiles[0], nfiles[0] == 1 ? "" : "s", fs ? fs : "local",
			 path_tail(ex[0]->path, pt, sizeof pt));
	}
	if (ex[1]) {
		const char *fs = log_fs_name(ex[1]->agg_fs_magic);
		ana_fmt_ns(pn, sizeof pn, probe_ns);
		snprintf(c, sizeof c, "%s%zu file%s on %s whose first small writes cost at most %s a request, under the "
			 "5 µs that makes a request worth saving", ex[0] ? "; " : "", nfiles[1], nfiles[1] == 1 ? "" : "s",
			 fs ? fs : "an unlisted file system", pn);
	}
	if (text(f, "Write aggregation was bypassed for %s%s; their writes went to the file system as the program "
		    "made them.", a, c))
		return -ENOMEM;
	return advise(f, "nothing to change; where requests are costly (network, parallel or FUSE file systems) the "
			 "same --aggregate pattern aggregates, and when=always forces it.");
}

static int rereads(struct fb *b)
{
	const struct ana_profile *p = b->p;
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
	const struct ana_rank *k = &p->ranks[worst->rank_index];
	struct ana_finding *f = add(b, "rereads", ANA_SEV_WARNING, (int)worst->layer);
	if (!f)
		return -ENOMEM;
	f->path = worst->path;
	f->rank = k->rank;
	f->pid = k->rank < 0 ? k->pid : 0;
	double times = share(worst->c[LOG_C_BYTES_READ], worst->c[LOG_C_MAX_READ_END]);
	fig(f, "bytes_read", (double)worst->c[LOG_C_BYTES_READ], ANA_U_BYTES);
	fig(f, "extent", (double)worst->c[LOG_C_MAX_READ_END], ANA_U_BYTES);
	fig(f, "reread_factor", times, ANA_U_FACTOR);
	fig(f, "files", (double)n, ANA_U_COUNT);
	limit(f, "reread_factor", REREAD_FACTOR);
	char who[32], t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], e[ANA_UNIT_LEN];
	rank_label(k, who, sizeof who);
	ana_fmt_bytes(a, sizeof a, worst->c[LOG_C_BYTES_READ]);
	ana_fmt_bytes(e, sizeof e, worst->c[LOG_C_MAX_READ_END]);
	/* a log may hold bytes read with no extent (e.g. reads of a pipe): then no ratio */
	char fold[32] = "";
	if (times > 0)
		snprintf(fold, sizeof fold, ", %.1fx", times);
	if (text(f, "%s read %s %s of a %s extent%s (%zu file%s re-read in all).", who,
		 path_tail(worst->path, t, sizeof t), a, e, fold, n, n == 1 ? "" : "s"))
		return -ENOMEM;
	return advise(f, "keep the data in memory after the first read, or mmap the file.");
}

/* What to look at for each failing kind of call. */
static const char *error_advice(unsigned c)
{
	switch (c) {
	case LOG_C_ERR_OPENS:
		return "check the paths and permissions; if the same files sometimes open, the open-file limit "
		       "(ulimit -n)";
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

/* A path that failed to open or stat and was never opened nor moved a byte: a lookup (a compiler's
 * include path, PATH search, imports, config probing), not an I/O problem. */
static int is_lookup(const uint64_t *c)
{
	return !c[LOG_C_OPENS] && !c[LOG_C_BYTES_READ] && !c[LOG_C_BYTES_WRITTEN];
}

/* Every failure on the path was an answer, not a fault (LOG_R_ERR_EXPECTED without
 * LOG_R_ERR_FAULT): ENOENT of a probe, EAGAIN of a non-blocking pipe, ESPIPE of a seek on one. */
static int failed_as_expected(const struct ana_path *x)
{
	return (x->rflags & (LOG_R_ERR_EXPECTED | LOG_R_ERR_FAULT)) == LOG_R_ERR_EXPECTED;
}

static int errors(struct fb *b)
{
	const struct ana_profile *p = b->p;
	for (unsigned c = LOG_C_ERR_OPENS; c <= LOG_C_ERR_META; c++) {
		uint64_t total = 0;
		size_t nfiles = 0;
		const struct ana_path *worst = NULL;
		for (size_t i = 0; i < p->npaths; i++) {
			const struct ana_path *x = &p->paths[i];
			if (!x->c[c] || !x->job_view || failed_as_expected(x))
				continue;
			/* logs without the LOG_R_ERR_* flags: a path never opened is a lookup */
			if ((c == LOG_C_ERR_META || c == LOG_C_ERR_OPENS) && is_lookup(x->c) &&
			    !(x->rflags & LOG_R_ERR_FAULT))
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
		int data = c == LOG_C_ERR_READS || c == LOG_C_ERR_WRITES || c == LOG_C_ERR_SYNCS;
		struct ana_finding *f = add(b, "errors", data ? ANA_SEV_ERROR : ANA_SEV_WARNING, (int)worst->layer);
		if (!f)
			return -ENOMEM;
		f->path = worst->path;
		fig(f, log_counter_key(c), (double)total, ANA_U_COUNT);
		fig(f, "files", (double)nfiles, ANA_U_COUNT);
		fig(f, "on_worst_file", (double)worst->c[c], ANA_U_COUNT);
		limit(f, log_counter_key(c), c == LOG_C_ERR_META ? ERR_META_MIN : 0);
		char t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], n[ANA_UNIT_LEN];
		ana_fmt_count(a, sizeof a, total);
		ana_fmt_count(n, sizeof n, worst->c[c]);
		if (text(f, "%s = %s (%s) on %zu file%s, %s of them on %s (%s).", log_counter_key(c), a,
			 log_counter_docs[c], nfiles, nfiles == 1 ? "" : "s", n, path_tail(worst->path, t, sizeof t),
			 log_layer_name(worst->layer)) ||
		    advise(f, "%s.", error_advice(c)))
			return -ENOMEM;
	}
	return 0;
}

/* Opens and metadata calls that failed with an answer (no such file): a program probing for
 * optional files, a compiler searching its include path, Python importing. Harmless on a local
 * disk; on a parallel file system each is a metadata server round trip, and import storms of
 * thousands of them per rank are a known way to slow a whole machine's metadata service. */
#define PROBES_MIN 1000
static int probes(struct fb *b)
{
	const struct ana_profile *p = b->p;
	uint64_t total = 0;
	size_t nfiles = 0;
	const struct ana_path *worst = NULL;
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		uint64_t n = x->c[LOG_C_ERR_OPENS] + x->c[LOG_C_ERR_META];
		if (!n || !x->job_view || !failed_as_expected(x))
			continue;
		total += n;
		nfiles++;
		if (!worst || n > worst->c[LOG_C_ERR_OPENS] + worst->c[LOG_C_ERR_META])
			worst = x;
	}
	if (total < PROBES_MIN)
		return 0;
	struct ana_finding *f = add(b, "failed_lookups", ANA_SEV_INFO, (int)worst->layer);
	if (!f)
		return -ENOMEM;
	f->path = worst->path;
	uint64_t on_worst = worst->c[LOG_C_ERR_OPENS] + worst->c[LOG_C_ERR_META];
	fig(f, "failed_lookups", (double)total, ANA_U_COUNT);
	fig(f, "files", (double)nfiles, ANA_U_COUNT);
	fig(f, "on_worst_file", (double)on_worst, ANA_U_COUNT);
	limit(f, "failed_lookups", PROBES_MIN);
	char t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], n[ANA_UNIT_LEN];
	ana_fmt_count(a, sizeof a, total);
	ana_fmt_count(n, sizeof n, on_worst);
	if (text(f, "%s opens and metadata calls on %zu path%s failed with an answer, not a fault (no such file, "
		    "already exists), %s of them on %s: the program looks for files that may not be there.",
		 a, nfiles, nfiles == 1 ? "" : "s", n, path_tail(worst->path, t, sizeof t)))
		return -ENOMEM;
	return advise(f, "nothing is wrong; on a parallel file system each lookup is a metadata server round trip, so "
			 "look up once and remember the answer, or shorten search paths (include paths, PYTHONPATH).");
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

struct tiny_calls {
	uint64_t ops, tiny; /* stdio calls of the direction, and those under 64 B */
	double mean;        /* bytes per call */
};

/* The stdio calls of one direction under 64 B (reads: 8 B), as both tiny-call rules see them: a finding with
 * their four figures when they are at least 1,000 and more than half of the calls, else NULL
 * (*err -ENOMEM when it could not be made). */
static struct ana_finding *tiny_stdio(struct fb *b, int write, struct tiny_calls *t, int *err)
{
	const struct ana_layer *L = &b->p->layers[LOG_LAYER_STDIO];
	uint64_t ops = L->c[write ? LOG_C_WRITES : LOG_C_READS];
	uint64_t tiny = hist_sum(write ? L->write_hist : L->read_hist, 0, write ? TINY_FWRITE_BUCKETS : TINY_FREAD_BUCKETS);

	*err = 0;
	if (ops < TINY_FWRITE_MIN || share(tiny, ops) <= TINY_FWRITE_SHARE)
		return NULL;
	struct ana_finding *f = add(b, write ? "tiny_fwrites" : "tiny_freads", ANA_SEV_WARNING, LOG_LAYER_STDIO);
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	*t = (struct tiny_calls){ops, tiny, share(L->c[write ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ], ops)};
	fig(f, write ? "writes" : "reads", (double)ops, ANA_U_COUNT);
	fig(f, write ? "tiny_writes" : "tiny_reads", (double)tiny, ANA_U_COUNT);
	fig(f, "tiny_share", share(tiny, ops), ANA_U_RATIO);
	fig(f, write ? "mean_write" : "mean_read", t->mean, ANA_U_BYTES);
	limit(f, "tiny_share", TINY_FWRITE_SHARE);
	return f;
}

/* stdio reads under 8 B: fgetc/getc loops (xargs reads its input a byte per call). Same cost as
 * tiny writes: a lock and a copy per call, buffered or not. */
static int tiny_freads(struct fb *b)
{
	struct tiny_calls tc;
	int err;
	struct ana_finding *f = tiny_stdio(b, 0, &tc, &err);
	if (!f)
		return err;
	uint64_t ops = tc.ops, tiny = tc.tiny;
	double mean = tc.mean;
	const struct ana_path *worst = NULL;
	for (size_t i = 0; i < b->p->npaths; i++) {
		const struct ana_path *x = &b->p->paths[i];
		if (x->layer == LOG_LAYER_STDIO && x->c[LOG_C_READS] && (!worst || x->c[LOG_C_READS] > worst->c[LOG_C_READS]))
			worst = x;
	}
	f->path = worst ? worst->path : NULL;
	if (worst)
		fig(f, "reads_of_file", (double)worst->c[LOG_C_READS], ANA_U_COUNT);
	char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN], c[ANA_UNIT_LEN], t[PATH_SHOWN + 8];
	ana_fmt_pct(a, sizeof a, share(tiny, ops));
	ana_fmt_count(n, sizeof n, ops);
	ana_fmt_count(c, sizeof c, worst ? worst->c[LOG_C_READS] : 0);
	if (text(f, "%s of %s stdio reads are under %d B (mean %.0f B), %s of them on %s: each call locks the stream "
		    "and copies a little.", a, n, TINY_FREAD_BYTES, mean, c, worst ? path_tail(worst->path, t, sizeof t) : "?"))
		return -ENOMEM;
	return advise(f, "read larger pieces (fread into a buffer, getline) and split them in memory, or use the "
			 "unlocked forms (getc_unlocked) in a loop that holds the stream.");
}

static int tiny_fwrites(struct fb *b)
{
	struct tiny_calls tc;
	int err;
	struct ana_finding *f = tiny_stdio(b, 1, &tc, &err);
	if (!f)
		return err;
	uint64_t ops = tc.ops, tiny = tc.tiny;
	double mean = tc.mean;
	uint64_t fw, sw;
	stdio_syscalls(b->p, &fw, &sw);
	if (fw) {
		fig(f, "fwrites_on_synced_files", (double)fw, ANA_U_COUNT);
		fig(f, "write_syscalls", (double)sw, ANA_U_COUNT);
	}
	char a[ANA_UNIT_LEN], n[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN];
	ana_fmt_pct(a, sizeof a, share(tiny, ops));
	ana_fmt_count(n, sizeof n, ops);
	ana_fmt_count(c, sizeof c, fw);
	ana_fmt_count(d, sizeof d, sw);
	/* The kernel layer tells which cost it is: every call reaching the kernel (an unbuffered or
	 * line-buffered stream), or only the calls themselves (the buffer did its job). */
	if (fw && share(sw, fw) >= TINY_UNBUFFERED_SHARE)
		return text(f, "%s of %s stdio writes are under %d B (mean %.0f B) and the stream does not buffer them: "
			       "their %s calls reached the kernel as %s write system calls.", a, n, TINY_FWRITE_BYTES,
			    mean, c, d) ||
			       advise(f, "give the stream a large buffer with setvbuf() (stderr and terminals are "
					 "unbuffered or line-buffered), or build the output in memory and write it in one "
					 "call.")
			   ? -ENOMEM : 0;
	if (fw)
		return text(f, "%s of %s stdio writes are under %d B (mean %.0f B); stdio's buffer already turned %s "
			       "of them into %s write system calls, so the cost is the calls themselves (a lock and a "
			       "copy each).", a, n, TINY_FWRITE_BYTES, mean, c, d) ||
			       advise(f, "build the output in a buffer and write it in one call (a larger setvbuf() "
					 "buffer saves system calls, not these).")
			   ? -ENOMEM : 0;
	return text(f, "%s of %s stdio writes are under %d B (mean %.0f B): each call locks the stream and copies a "
		       "little.", a, n, TINY_FWRITE_BYTES, mean) ||
		       advise(f, "build the output in a buffer and write it in one call, or give the stream a large "
				 "buffer with setvbuf().")
		   ? -ENOMEM : 0;
}

/* I/O-mode advice is MPI advice: a shell pipeline's one writer is not "funnelling". */
static int io_mode(struct fb *b)
{
	const struct ana_profile *p = b->p;
	const struct ana_io_mode_info *m = &p->io_mode;

	if (!b->mpi)
		return 0;
	if (m->mode == ANA_IO_1_1 && m->ranks > 1) {
		struct ana_finding *f = add(b, "io_mode_1_1", ANA_SEV_WARNING, -1);
		if (!f)
			return -ENOMEM;
		fig(f, "ranks", (double)m->ranks, ANA_U_COUNT);
		fig(f, "ranks_with_data", (double)m->ranks_with_data, ANA_U_COUNT);
		limit(f, "ranks_with_data", 1);
		if (text(f, "one of %zu ranks did all the data I/O (mode 1-1).", m->ranks))
			return -ENOMEM;
		return advise(f, "funnelling data through one process caps bandwidth at what one node gets; let ranks "
				 "write their own parts (N-N), or a shared file with MPI-IO collective I/O.");
	}
	if (m->mode != ANA_IO_N_1)
		return 0;
	/* Shared reads are benign; shared writes contend on the file's locks and blocks. */
	size_t writers = 0;
	const char *path = NULL;
	unsigned char *seen = calloc(p->nranks ? p->nranks : 1, 1);
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *x = &p->files[i];
		if (ana_is_data_file(x) && x->job_view && x->c[LOG_C_BYTES_WRITTEN] && !seen[x->rank_index]) {
			seen[x->rank_index] = 1;
			writers++;
			path = x->path;
		}
	}
	free(seen);
	if (writers < 2)
		return 0;
	struct ana_finding *f = add(b, "io_mode_n_1", ANA_SEV_WARNING, -1);
	if (!f)
		return -ENOMEM;
	f->path = path;
	fig(f, "writing_ranks", (double)writers, ANA_U_COUNT);
	limit(f, "writing_ranks", 1);
	if (m->data_files == 1 ? text(f, "%zu ranks write one shared file (mode N-1).", writers)
			       : text(f, "%zu ranks write to files every rank shares (mode N-1, %zu shared files).", writers,
				      m->data_files))
		return -ENOMEM;
	return advise(f, "align each rank's region to the file system's block or stripe size and prefer collective "
			 "I/O, or the ranks serialize on the file's locks.");
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
static int cache_misses(struct fb *b)
{
	const struct ana_profile *p = b->p;
	const struct ana_stack *st = b->st;
	uint64_t reread = 0, refetched = 0, worst_refetch = 0;
	size_t n = 0;
	const struct ana_stack_file *worst = NULL;

	for (size_t i = 0; i < st->nfiles; i++) {
		const struct ana_stack_file *x = &st->files[i];
		uint64_t rd = x->bytes[ANA_SL_SYSCALL][0], ext = x->max_read_end, in = fetched(p, x);
		if (rd <= ext || in <= ext)
			continue;
		uint64_t again = in - ext, more = rd - ext;
		reread += more;
		refetched += again < more ? again : more;
		n++;
		if (again > worst_refetch) {
			worst_refetch = again;
			worst = x;
		}
	}
	if (!worst || refetched < REFETCH_MIN_BYTES || share(refetched, reread) < REFETCH_SHARE)
		return 0;
	struct ana_finding *f = add(b, "cache_misses", ANA_SEV_WARNING, LOG_LAYER_PAGECACHE);
	if (!f)
		return -ENOMEM;
	f->path = worst->path;
	int bypass = !worst->pages_read_in;
	fig(f, "bytes_read", (double)worst->bytes[ANA_SL_SYSCALL][0], ANA_U_BYTES);
	fig(f, "extent", (double)worst->max_read_end, ANA_U_BYTES);
	fig(f, "bytes_fetched", (double)fetched(p, worst), ANA_U_BYTES);
	fig(f, "refetched", (double)refetched, ANA_U_BYTES);
	fig(f, "refetched_share", share(refetched, reread), ANA_U_RATIO);
	fig(f, "files", (double)n, ANA_U_COUNT);
	limit(f, "refetched", REFETCH_MIN_BYTES);
	char t[PATH_SHOWN + 8], a[ANA_UNIT_LEN], e[ANA_UNIT_LEN], c[ANA_UNIT_LEN], d[ANA_UNIT_LEN];
	ana_fmt_bytes(a, sizeof a, worst->bytes[ANA_SL_SYSCALL][0]);
	ana_fmt_bytes(e, sizeof e, worst->max_read_end);
	ana_fmt_bytes(c, sizeof c, fetched(p, worst));
	ana_fmt_bytes(d, sizeof d, refetched);
	if (text(f, "re-reads went to storage again: %s was read for %s over a %s extent and %s of it came from the "
		    "device (%s fetched again over %zu file%s).", path_tail(worst->path, t, sizeof t), a, e, c, d, n,
		 n == 1 ? "" : "s"))
		return -ENOMEM;
	return bypass ? advise(f, "O_DIRECT reads bypass the page cache, so keep what is read again in memory (or "
				  "read it buffered).")
		      : advise(f, "the page cache did not keep the data between passes (too little free memory, or "
				  "other I/O evicted it): keep it in memory after the first read, or read it once.");
}

/* Kernel layer: the devices wrote much more for the program's data files than its write calls
 * carried: partial blocks rewritten at every sync, read-modify-write. */
static int write_amplification(struct fb *b)
{
	const struct ana_profile *p = b->p;
	const struct ana_stack *st = b->st;
	uint64_t asked = st->file_syscall_bytes[1], dev = st->file_block_bytes[1];
	if (dev < asked + AMP_MIN_BYTES || share(dev, asked) < AMP_FACTOR)
		return 0;
	const struct ana_stack_file *worst = NULL;
	for (size_t i = 0; i < st->nfiles; i++) {
		const struct ana_stack_file *x = &st->files[i];
		uint64_t over = device_bytes(x, 1) > x->bytes[ANA_SL_SYSCALL][1]
					? device_bytes(x, 1) - x->bytes[ANA_SL_SYSCALL][1] : 0;
		if (over && (!worst || over > device_bytes(worst, 1) - worst->bytes[ANA_SL_SYSCALL][1]))
			worst = x;
	}
	struct ana_finding *f = add(b, "write_amplification", ANA_SEV_WARNING, LOG_LAYER_BLOCK);
	if (!f)
		return -ENOMEM;
	f->path = worst ? worst->path : NULL;
	uint64_t nsync = p->layers[LOG_LAYER_SYSCALL].c[LOG_C_FSYNCS];
	fig(f, "device_bytes_written", (double)dev, ANA_U_BYTES);
	fig(f, "syscall_bytes_written", (double)asked, ANA_U_BYTES);
	fig(f, "amplification", share(dev, asked), ANA_U_FACTOR);
	fig(f, "syncs", (double)nsync, ANA_U_COUNT);
	limit(f, "amplification", AMP_FACTOR);
	char a[ANA_UNIT_LEN], c[ANA_UNIT_LEN], t[PATH_SHOWN + 8], n[ANA_UNIT_LEN], syncs_s[ANA_UNIT_LEN + 16] = "";
	ana_fmt_bytes(a, sizeof a, dev);
	ana_fmt_bytes(c, sizeof c, asked);
	if (nsync)
		snprintf(syncs_s, sizeof syncs_s, "; %s syncs", ana_fmt_count(n, sizeof n, nsync));
	if (text(f, "the block devices wrote %s for the program's data files where its write calls carried %s (%.1fx; "
		    "most on %s%s).", a, c, share(dev, asked), worst ? path_tail(worst->path, t, sizeof t) : "?",
		 syncs_s))
		return -ENOMEM;
	return advise(f, "small or unaligned writes synced one by one (fsync, O_SYNC) rewrite whole blocks each "
			 "time; batch writes between syncs and write whole, aligned blocks.");
}

/* Kernel layer: a device served many small requests, each a round trip with its own cost. */
static int small_requests(struct fb *b)
{
	const struct ana_stack *st = b->st;
	for (size_t i = 0; i < st->ndevices; i++) {
		const struct ana_device *d = &st->devices[i];
		/* with the requests never seen completing, which the device served all the same */
		uint64_t ops = d->c[LOG_C_READS] + d->c[LOG_C_WRITES] + d->unseen[0];
		uint64_t bytes = d->c[LOG_C_BYTES_READ] + d->c[LOG_C_BYTES_WRITTEN] + d->unseen[1] + d->unseen[2];
		if (ops < SMALL_REQ_MIN || share(bytes, ops) >= SMALL_REQ_BYTES)
			continue;
		struct ana_finding *f = add(b, "small_block_requests", ANA_SEV_WARNING, LOG_LAYER_BLOCK);
		if (!f)
			return -ENOMEM;
		f->path = d->path;
		fig(f, "requests", (double)ops, ANA_U_COUNT);
		fig(f, "mean_request", (double)(bytes / ops), ANA_U_BYTES);
		fig(f, "time_device", (double)d->c[LOG_C_TIME_DEVICE], ANA_U_NS);
		limit(f, "mean_request", SMALL_REQ_BYTES);
		char n[ANA_UNIT_LEN], m[ANA_UNIT_LEN], t[ANA_UNIT_LEN];
		ana_fmt_count(n, sizeof n, ops);
		ana_fmt_bytes(m, sizeof m, bytes / ops);
		ana_fmt_ns(t, sizeof t, d->c[LOG_C_TIME_DEVICE]);
		if (text(f, "device %s served %s requests of %s on average, %s on the device in all.", d->name, n, m, t) ||
		    advise(f, "each small request is a round trip: move data in larger calls (MiB-sized for streaming), "
			      "and leave small O_DIRECT calls to buffered I/O, which the kernel merges."))
			return -ENOMEM;
	}
	return 0;
}

/*
 * MPI-IO advice, per file the ranks opened through MPI-IO (the mpiio layer, which only MPI
 * programs have): a shared file accessed without any collective call, small independent calls on
 * a shared file, collective calls whose collective buffering a hint disabled.
 */
static int mpi_advice(struct fb *b)
{
	const struct ana_profile *p = b->p;
	char pt[PATH_SHOWN + 8], m[ANA_UNIT_LEN];
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		if (x->layer != LOG_LAYER_MPIIO || !is_real_path(x->rflags, x->path))
			continue;
		const uint64_t *c = x->c;
		uint64_t ops = c[LOG_C_READS] + c[LOG_C_WRITES], coll = c[LOG_C_COLL_READS] + c[LOG_C_COLL_WRITES];
		uint64_t indep = ops - coll, bytes = c[LOG_C_BYTES_READ] + c[LOG_C_BYTES_WRITTEN];
		const char *name = path_tail(x->path, pt, sizeof pt);
		if (x->nranks > 1 && !coll && indep >= MPI_INDEP_MIN) {
			struct ana_finding *f = add(b, "mpi_no_collective", ANA_SEV_WARNING, LOG_LAYER_MPIIO);
			if (!f)
				return -ENOMEM;
			f->path = x->path;
			fig(f, "ranks", x->nranks, ANA_U_COUNT);
			fig(f, "independent_ops", (double)indep, ANA_U_COUNT);
			fig(f, "collective_ops", 0, ANA_U_COUNT);
			limit(f, "collective_ops", 0);
			if (text(f, "%u ranks share %s through MPI-IO in %llu independent calls and no collective one.",
				 x->nranks, name, (unsigned long long)indep) ||
			    advise(f, "use the collective forms (MPI_File_write_all, MPI_File_write_at_all and their reads; "
				      "H5FD_MPIO_COLLECTIVE in HDF5) so that ROMIO merges the ranks' pieces into large "
				      "contiguous requests made by a few aggregators."))
				return -ENOMEM;
		}
		if (x->nranks > 1 && indep >= MPI_INDEP_MIN && bytes / ops < MPI_SMALL_BYTES) {
			struct ana_finding *f = add(b, "mpi_small_independent", ANA_SEV_WARNING, LOG_LAYER_MPIIO);
			if (!f)
				return -ENOMEM;
			f->path = x->path;
			fig(f, "independent_ops", (double)indep, ANA_U_COUNT);
			fig(f, "mean_request", (double)(bytes / ops), ANA_U_BYTES);
			limit(f, "mean_request", MPI_SMALL_BYTES);
			ana_fmt_bytes(m, sizeof m, bytes / ops);
			if (text(f, "%s, shared by %u ranks, took %llu independent MPI-IO calls of %s on average.", name,
				 x->nranks, (unsigned long long)indep, m) ||
			    advise(f, "gather each rank's pieces into fewer, larger calls, or make them collective so that "
				      "collective buffering turns them into stripe-sized requests."))
				return -ENOMEM;
		}
		if (c[LOG_C_CB_DISABLED] && coll) {
			struct ana_finding *f = add(b, "mpi_cb_disabled", ANA_SEV_WARNING, LOG_LAYER_MPIIO);
			if (!f)
				return -ENOMEM;
			f->path = x->path;
			fig(f, "collective_ops", (double)coll, ANA_U_COUNT);
			fig(f, "cb_disabled_opens", (double)c[LOG_C_CB_DISABLED], ANA_U_COUNT);
			limit(f, "cb_disabled_opens", 0);
			if (text(f, "%s was opened with collective buffering disabled (romio_cb_read/romio_cb_write) and "
				    "then used in %llu collective calls.", name, (unsigned long long)coll) ||
			    advise(f, "drop the romio_cb_write=disable / romio_cb_read=disable hints (or set them to "
				      "enable): without collective buffering each rank issues its own pieces and the "
				      "collective call only adds synchronisation."))
				return -ENOMEM;
		}
	}
	return 0;
}

/* HDF5 datasets stored in many small chunks (the hdf5 layer's shape counters; the first three
 * dimensions are recorded, which is what such datasets have). */
static int hdf5_chunks(struct fb *b)
{
	const struct ana_profile *p = b->p;
	char pt[PATH_SHOWN + 8], m[ANA_UNIT_LEN];
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		const uint64_t *c = x->c;
		if (x->layer != LOG_LAYER_HDF5 || c[LOG_C_H5_LAYOUT] != 3 || !c[LOG_C_H5_CHUNK0] || !c[LOG_C_H5_ELEM_SIZE])
			continue;
		uint64_t chunk = c[LOG_C_H5_ELEM_SIZE], nchunks = 1;
		for (unsigned d = 0; d < 3 && d < c[LOG_C_H5_NDIMS]; d++) {
			uint64_t cd = c[LOG_C_H5_CHUNK0 + d], dd = c[LOG_C_H5_DIM0 + d];
			if (!cd)
				break;
			chunk *= cd;
			nchunks *= (dd + cd - 1) / cd;
		}
		if (chunk >= H5_SMALL_CHUNK_BYTES || nchunks < H5_SMALL_CHUNKS_MIN)
			continue;
		struct ana_finding *f = add(b, "hdf5_small_chunks", ANA_SEV_WARNING, LOG_LAYER_HDF5);
		if (!f)
			return -ENOMEM;
		f->path = x->path;
		fig(f, "chunks", (double)nchunks, ANA_U_COUNT);
		fig(f, "chunk_bytes", (double)chunk, ANA_U_BYTES);
		limit(f, "chunk_bytes", H5_SMALL_CHUNK_BYTES);
		ana_fmt_bytes(m, sizeof m, chunk);
		if (text(f, "HDF5 dataset %s is stored in %llu chunks of %s.", path_tail(x->path, pt, sizeof pt),
			 (unsigned long long)nchunks, m) ||
		    advise(f, "choose chunks of 64 KiB to 1 MiB (H5Pset_chunk, h5py's chunks=) shaped like the reads "
			      "and writes, and a chunk cache that holds the chunks a read spans (H5Pset_chunk_cache)."))
			return -ENOMEM;
	}
	return 0;
}

/* The paths[] index of (path, layer), or SIZE_MAX. */
static size_t path_find(const struct ana_profile *p, const char *path, unsigned layer)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (p->paths[i].layer == layer && !strcmp(p->paths[i].path, path))
			return i;
	return SIZE_MAX;
}

/* Per HDF5 file: its datasets' H5Dread calls against the POSIX reads of the file below them. */
static int hdf5_cache_misses(struct fb *b)
{
	const struct ana_profile *p = b->p;
	char pt[PATH_SHOWN + 8], m[ANA_UNIT_LEN];
	for (size_t i = 0; i < p->npaths; i++) {
		const struct ana_path *x = &p->paths[i];
		if (x->layer != LOG_LAYER_HDF5 || strstr(x->path, ":/"))
			continue;
		size_t n = strlen(x->path), k = path_find(p, x->path, LOG_LAYER_POSIX);
		if (k == SIZE_MAX)
			continue;
		uint64_t h5reads = 0;
		for (size_t j = 0; j < p->npaths; j++)
			if (p->paths[j].layer == LOG_LAYER_HDF5 && !strncmp(p->paths[j].path, x->path, n) &&
			    p->paths[j].path[n] == ':' && p->paths[j].path[n + 1] == '/')
				h5reads += p->paths[j].c[LOG_C_READS];
		const uint64_t *c = p->paths[k].c;
		uint64_t reads = c[LOG_C_READS], bytes = c[LOG_C_BYTES_READ];
		if (!h5reads || reads < H5_CACHE_POSIX_MIN || reads < H5_CACHE_PER_CALL * h5reads ||
		    bytes / reads >= H5_CACHE_SMALL_READ)
			continue;
		struct ana_finding *f = add(b, "hdf5_chunk_cache_misses", ANA_SEV_WARNING, LOG_LAYER_HDF5);
		if (!f)
			return -ENOMEM;
		f->path = x->path;
		fig(f, "hdf5_reads", (double)h5reads, ANA_U_COUNT);
		fig(f, "posix_reads", (double)reads, ANA_U_COUNT);
		fig(f, "posix_reads_per_hdf5_read", (double)reads / (double)h5reads, ANA_U_FACTOR);
		fig(f, "mean_posix_read", (double)(bytes / reads), ANA_U_BYTES);
		limit(f, "posix_reads_per_hdf5_read", H5_CACHE_PER_CALL);
		ana_fmt_bytes(m, sizeof m, bytes / reads);
		if (text(f, "%llu HDF5 reads of %s became %llu POSIX reads of %s on average: the chunks were read one "
			    "by one (chunk cache misses).", (unsigned long long)h5reads, path_tail(x->path, pt, sizeof pt),
			 (unsigned long long)reads, m) ||
		    advise(f, "give the dataset a chunk cache that holds the chunks one read spans (H5Pset_chunk_cache, "
			      "h5py's rdcc_nbytes and rdcc_nslots), and chunks of 64 KiB or more."))
			return -ENOMEM;
	}
	return 0;
}

/* An MPI job without a kernel log: its MPI-IO calls are seen by the kernel layer's probes on the
 * MPI library only, so the report shows them as the POSIX calls they became (if any were made).
 * Not when the MPI companion recorded the mpiio layer. */
static int mpiio_not_captured(struct fb *b)
{
	if (!b->mpi || b->p->nkernel_logs || b->p->layers[LOG_LAYER_MPIIO].nrecords)
		return 0;
	struct ana_finding *f = add(b, "mpiio_not_captured", ANA_SEV_INFO, LOG_LAYER_MPIIO);
	if (!f)
		return -ENOMEM;
	fig(f, "ranks", (double)b->p->io_mode.ranks, ANA_U_COUNT);
	if (text(f, "this is an MPI job recorded without --kernel: MPI-IO calls (MPI_File_*), if it made any, appear "
		    "only as the POSIX calls the MPI library turned them into, with no mpiio layer."))
		return -ENOMEM;
	return advise(f, "run it again with iostrata run --kernel (as root) to see each MPI_File call, its size and "
			 "whether it was collective.");
}

/* The rank index a finding is about (its rank, or with none the process labelling a rank), or
 * SIZE_MAX. */
static size_t finding_rank_index(const struct ana_profile *p, const struct ana_finding *f)
{
	for (size_t k = 0; k < p->nranks; k++) {
		const struct ana_rank *r = &p->ranks[k];
		if (f->rank >= 0 ? r->rank == f->rank : f->pid > 0 && r->rank < 0 && r->pid == f->pid)
			return k;
	}
	return SIZE_MAX;
}

/* A finding's time (findings.h): the span of its subject's files' timestamps. */
static void finding_time(const struct ana_profile *p, struct ana_finding *f)
{
	static const unsigned firsts[] = {LOG_C_OPEN_FIRST, LOG_C_READ_FIRST, LOG_C_WRITE_FIRST, LOG_C_CLOSE_FIRST};
	static const unsigned lasts[] = {LOG_C_OPEN_LAST, LOG_C_READ_LAST, LOG_C_WRITE_LAST, LOG_C_CLOSE_LAST};
	int by_rank = f->rank >= 0 || f->pid > 0;
	size_t k = by_rank ? finding_rank_index(p, f) : SIZE_MAX;
	uint64_t lo = UINT64_MAX, hi = 0;
	f->has_time = 0;
	if (p->multi_host || !p->first || (!f->path && !by_rank && f->layer < 0) || (by_rank && k == SIZE_MAX))
		return;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *x = &p->files[i];
		if ((f->layer >= 0 && x->layer != (unsigned)f->layer) || (f->path && strcmp(x->path, f->path)) ||
		    (by_rank && x->rank_index != k))
			continue;
		for (unsigned c = 0; c < 4; c++) {
			if (x->c[firsts[c]] && x->c[firsts[c]] < lo)
				lo = x->c[firsts[c]];
			if (x->c[lasts[c]] > hi)
				hi = x->c[lasts[c]];
		}
	}
	/* a timestamp before the job's first process started would be another clock's */
	if (lo == UINT64_MAX || hi < lo || lo < p->first->start_ns)
		return;
	f->has_time = 1;
	f->start_ns = lo - p->first->start_ns;
	f->end_ns = hi - p->first->start_ns;
}

int ana_findings_build(const struct ana_profile *p, const struct ana_stack *st, struct ana_findings *out)
{
	struct fb b = {p, st && st->present ? st : NULL, out, p->mpi};
	const struct ana_layer *S = &p->standin;
	int r = 0;

	memset(out, 0, sizeof *out);
	if (small_ops(&b, &p->layers[LOG_LAYER_POSIX], 0, 1) || small_ops(&b, &p->layers[LOG_LAYER_POSIX], 0, 0) ||
	    small_ops(&b, S, 1, 1) || small_ops(&b, S, 1, 0) || tiny_fwrites(&b) || tiny_freads(&b))
		goto err;
	for (unsigned l = LOG_LAYER_POSIX; l <= LOG_LAYER_STDIO; l++)
		if (random_access(&b, l, 0) || random_access(&b, l, 1))
			goto err;
	for (unsigned l = 1; l < ANA_NLAYERS; l++)
		if (!ana_layer_is_kernel(l) && l != LOG_LAYER_MOUNT &&
		    metadata_heavy(&b, &p->layers[l], (int)l, log_layer_name(l)))
			goto err;
	if (metadata_heavy(&b, S, LOG_LAYER_SYSCALL, "system-call") || syncs(&b, LOG_LAYER_POSIX))
		goto err;
	if (small_files(&b) || imbalance(&b) || unaligned(&b) || unused_opens(&b) || rereads(&b) || errors(&b) ||
	    probes(&b) || io_mode(&b))
		goto err;
	if (b.st && (cache_misses(&b) || write_amplification(&b) || small_requests(&b)))
		goto err;
	if (small_direct(&b) || aggregation(&b) || aggregated(&b) || aggregation_bypassed(&b) || mpi_advice(&b) || hdf5_chunks(&b) || hdf5_cache_misses(&b) ||
	    mpiio_not_captured(&b))
		goto err;
	for (size_t i = 0; i < out->n; i++)
		finding_time(p, &out->v[i]);
	return 0;
err:
	r = -ENOMEM;
	ana_findings_free(out);
	return r;
}

void ana_findings_free(struct ana_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].text);
		free(f->v[i].recommendation);
	}
	free(f->v);
	memset(f, 0, sizeof *f);
}

const char *ana_severity_name(enum ana_severity s)
{
	static const char *const names[] = {"info", "warning", "error"};
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

const char *ana_unit_name(enum ana_unit u)
{
	static const char *const names[] = {"count", "bytes", "ns", "ratio", "factor"};
	return (unsigned)u < sizeof names / sizeof names[0] ? names[u] : "?";
}
