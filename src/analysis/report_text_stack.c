/* SPDX-License-Identifier: MIT */
/*
 * The text report's sections below the application: "down the stack" (a job with a kernel log:
 * layers, page cache, calls against system calls, devices, per-file view), the mount point, and
 * the trace (contention score and where the time of the user calls went).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/render.h"
#include "analysis/units.h"

#define U ANA_UNIT_LEN

static void stack_layers(FILE *f, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{9, 1}, {10, 0}, {10, 0}, {11, 0}, {13, 0}, {10, 0}, {10, 0}};
	static const char *const head[] = {"layer", "reads", "writes", "bytes read", "bytes written", "I/O time",
					   "mean"};
	static const unsigned order[] = {LOG_LAYER_HDF5, LOG_LAYER_MPIIO, LOG_LAYER_STDIO, LOG_LAYER_POSIX,
					 LOG_LAYER_SYSCALL, LOG_LAYER_FS, LOG_LAYER_BLOCK};
	char c[6][U];

	ana_text_row(f, cols, 7, head);
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
		ana_text_row(f, cols, 7, cells);
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
			    ana_rep_plural(reads, "call", "calls"));
	else
		ana_appendf(line, sizeof line, &n, "page cache: no buffered read calls");
	uint64_t pages_in = p->layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN];
	ana_appendf(line, sizeof line, &n, "; %s read in (%s %s of %u KiB) for %s asked",
		    ana_fmt_bytes(a, U, st->bytes_read_in), ana_fmt_count(d, U, pages_in), ana_rep_plural(pages_in, "page", "pages"),
		    p->page_size / 1024, ana_fmt_bytes(b, U, st->bytes_requested));
	ana_appendf(line, sizeof line, &n, "; %s %s added by writes, %s dirtied, %s evicted",
		    ana_fmt_count(a, U, st->pages_added_write), ana_rep_plural(st->pages_added_write, "page", "pages"),
		    ana_fmt_count(b, U, st->pages_dirtied), ana_fmt_count(d, U, st->pages_evicted));
	ana_appendf(line, sizeof line, &n, "; %s mmap %s, %s readahead %s", ana_fmt_count(a, U, st->faults),
		    ana_rep_plural(st->faults, "fault", "faults"), ana_fmt_count(b, U, st->readahead_pages),
		    ana_rep_plural(st->readahead_pages, "page", "pages"));
	ana_text_wrap(f, "  ", 4, line);
}

/* How many calls of the program became how many system calls, on the data files. */
static void stack_calls(FILE *f, const struct ana_stack *st)
{
	static const unsigned order[] = {LOG_LAYER_HDF5, LOG_LAYER_MPIIO, LOG_LAYER_STDIO, LOG_LAYER_POSIX};
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
				    log_layer_name(one), ana_rep_plural(st->user_calls[0][d], "call", "calls"));
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
			    ana_rep_plural(st->syscalls[d], "call", "calls"));
	}
	if (n)
		ana_text_wrap(f, "  ", 4, line);
}

static void amp_line(FILE *f, const struct ana_profile *p, const struct ana_stack *st, int w)
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
	if ((st->file_syscall_bytes[w] || st->file_block_bytes[w]) && !(p->kernel_flags & LOG_KF_BLOCK_SAMPLED)) {
		ana_appendf(line, sizeof line, &n, "; data files ");
		if (st->file_syscall_bytes[w])
			ana_appendf(line, sizeof line, &n, "x%.2f",
				    w ? st->file_write_amplification : st->file_read_amplification);
		else
			ana_appendf(line, sizeof line, &n, "-");
		ana_appendf(line, sizeof line, &n, " (%s / %s)", ana_fmt_bytes(a, U, st->file_block_bytes[w]),
			    ana_fmt_bytes(b, U, st->file_syscall_bytes[w]));
	}
	ana_text_wrap(f, "  ", 4, line);
}

static void stack_devices(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
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
			    ana_fmt_count(a, U, dv->c[LOG_C_READS]), ana_rep_plural(dv->c[LOG_C_READS], "read", "reads"),
			    ana_fmt_bytes(b, U, dv->c[LOG_C_BYTES_READ]), ana_fmt_count(c, U, dv->c[LOG_C_WRITES]),
			    ana_rep_plural(dv->c[LOG_C_WRITES], "write", "writes"), ana_fmt_bytes(d, U, dv->c[LOG_C_BYTES_WRITTEN]));
		if (dv->c[LOG_C_FSYNCS])
			ana_appendf(line, sizeof line, &n, ", %s %s", ana_fmt_count(a, U, dv->c[LOG_C_FSYNCS]),
				    ana_rep_plural(dv->c[LOG_C_FSYNCS], "flush", "flushes"));
		uint64_t timed = 0;
		for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
			timed += lat[k];
		int sampled = (p->kernel_flags & LOG_KF_BLOCK_SAMPLED) != 0; /* times: the windows' requests */
		if (ops && sampled && !timed) {
			ana_appendf(line, sizeof line, &n, "; no request timed: none began in a sampling window");
		} else if (ops) {
			if (sampled)
				ana_appendf(line, sizeof line, &n, "; per request, %s of %s timed in sampling windows: ",
					    ana_fmt_count(a, U, timed), ana_fmt_count(b, U, ops));
			else
				ana_appendf(line, sizeof line, &n, "; per request: ");
			ana_appendf(line, sizeof line, &n, "queue %s, device %s (p50 %s, p99 %s)",
				    ana_fmt_ns(a, U, dv->c[LOG_C_TIME_QUEUE] / ops),
				    ana_fmt_ns(b, U, dv->c[LOG_C_TIME_DEVICE] / ops),
				    ana_rep_lat_label(p50, U, ana_hist_percentile(lat, 0.5)),
				    ana_rep_lat_label(p99, U, ana_hist_percentile(lat, 0.99)));
		}
		ana_text_wrap(f, "  ", 4, line);
	}
}

#define STACK_FILES 5 /* data files in the per-file view */

/* Per data file, per direction: the calls and bytes at each layer down to the device. */
static void stack_files(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	static const struct ana_col cols[] = {{8, 1}, {12, 0}, {10, 0}, {9, 0}, {10, 0}, {12, 0}, {9, 0}, {11, 0}};
	static const char *const head[] = {"", "user calls", "user bytes", "syscalls", "sys bytes", "in / dirtied",
					   "requests", "block bytes"};
	size_t shown = st->nfiles < STACK_FILES ? st->nfiles : STACK_FILES;
	char path[ANA_TEXT_WIDTH * 4 + 1], c[7][U];
	int sampled = (p->kernel_flags & LOG_KF_BLOCK_SAMPLED) != 0; /* no block figure per file */

	if (!shown)
		return;
	fprintf(f, "  per data file (%zu of %zu, most system-call bytes first; user: the topmost user layer; "
		   "page\n    cache: bytes read in for reads, dirtied for writes)\n", shown, st->nfiles);
	ana_text_row(f, cols, 8, head);
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
				sampled ? "-" : ana_fmt_count(c[5], U, x->ops[ANA_SL_BLOCK][d]),
				sampled ? "-" : ana_fmt_bytes(c[6], U, x->bytes[ANA_SL_BLOCK][d]),
			};
			ana_text_row(f, cols, 8, cells);
		}
	}
}

void ana_text_stack(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	char line[512], a[U], b[U];
	size_t n = 0;

	if (!st->present)
		return;
	fprintf(f, "\nDown the stack (kernel layer, top to bottom; mean: I/O time per read or write)\n");
	stack_layers(f, p);
	stack_pagecache(f, p, st);
	stack_calls(f, st);
	amp_line(f, p, st, 0);
	amp_line(f, p, st, 1);
	stack_devices(f, p, st);
	stack_files(f, p, st);
	if (st->unseen[0]) {
		char a2[U], b2[U], c2[U];
		n = 0;
		ana_appendf(line, sizeof line, &n, "%s block requests (%s read, %s written) were issued but their "
			    "completion was never shown to the block program (docs/KERNEL.md, \"Known gap\"): counted "
			    "apart as unseen, not in the figures above",
			    ana_fmt_count(a2, U, st->unseen[0]), ana_fmt_bytes(b2, U, st->unseen[1]),
			    ana_fmt_bytes(c2, U, st->unseen[2]));
		ana_text_wrap(f, "  ! ", 4, line);
		n = 0;
	}
	if (p->kernel_events_dropped || p->kernel_table_full || p->kernel_prog_misses) {
		char c[U];
		ana_appendf(line, sizeof line, &n, "lost by the kernel layer: %s events, %s aggregates (a table was "
			    "full), %s program runs the kernel skipped (a tracepoint firing inside the same program, "
			    "e.g. an interrupt's completion): figures above are lower bounds",
			    ana_fmt_count(a, U, p->kernel_events_dropped), ana_fmt_count(b, U, p->kernel_table_full),
			    ana_fmt_count(c, U, p->kernel_prog_misses));
		ana_text_wrap(f, "  ! ", 4, line);
		n = 0;
	}
	if (p->kernel_closes_unnamed || p->kernel_fds_unfollowed) {
		ana_appendf(line, sizeof line, &n, "closes counted on no file: %s (another thread reused the "
			    "descriptor before the close returned, or io_uring or seccomp changed the table); "
			    "descriptors not followed: %s (received over a socket, numbered 1024 or above: "
			    "KS_FDMAP_FDS, or the map was full): a close of one of them is counted on no file",
			    ana_fmt_count(a, U, p->kernel_closes_unnamed), ana_fmt_count(b, U, p->kernel_fds_unfollowed));
		ana_text_wrap(f, "  ! ", 4, line);
		n = 0;
	}
}



#define MOUNT_FILES_SHOWN 20

/* What reached the mount point's monitor next to what the program called, file by file: mmap
 * I/O shows at the mount layer only, page-cache effects as a difference. */
/* Mount-layer paths by bytes moved, most first; then by path. */
static int cmp_path_bytes(const void *a, const void *b, void *arg)
{
	const struct ana_profile *p = arg;
	const struct ana_path *x = &p->paths[*(const size_t *)a], *y = &p->paths[*(const size_t *)b];
	uint64_t bx = x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN];
	uint64_t by = y->c[LOG_C_BYTES_READ] + y->c[LOG_C_BYTES_WRITTEN];
	if (bx != by)
		return bx < by ? 1 : -1;
	return strcmp(x->path, y->path);
}

void ana_text_mount(FILE *f, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{11, 0}, {11, 0}, {12, 0}, {11, 0}, {11, 0}, {12, 0}, {1, 1}};
	static const char *const head[] = {"user reads", "mount reads", "bytes read", "user writes", "mount writes",
					   "bytes writ.", "path (bytes: mount layer)"};
	char c[7][U];
	size_t shown = 0, total = 0;

	if (!p->nmount_logs)
		return;
	fprintf(f, "\nMount point (what reached the FUSE monitor, next to the program's POSIX calls; by bytes)\n");
	ana_text_row(f, cols, 7, head);
	size_t *idx = malloc((p->npaths ? p->npaths : 1) * sizeof *idx);
	if (!idx)
		return;
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].layer == LOG_LAYER_MOUNT && ana_rep_mount_path_shown(&p->paths[k]))
			idx[total++] = k;
	qsort_r(idx, total, sizeof *idx, cmp_path_bytes, (void *)p);
	for (size_t i = 0; i < total && shown < MOUNT_FILES_SHOWN; i++) {
		size_t k = idx[i];
		const struct ana_path *x = &p->paths[k];
		const struct ana_path *u = ana_rep_user_path_of(p, k);
		const char *cells[7] = {
			u ? ana_fmt_count(c[0], U, u->c[LOG_C_READS]) : "-",
			ana_fmt_count(c[1], U, x->c[LOG_C_READS]),
			ana_fmt_bytes(c[2], U, x->c[LOG_C_BYTES_READ]),
			u ? ana_fmt_count(c[3], U, u->c[LOG_C_WRITES]) : "-",
			ana_fmt_count(c[4], U, x->c[LOG_C_WRITES]),
			ana_fmt_bytes(c[5], U, x->c[LOG_C_BYTES_WRITTEN]),
			x->path,
		};
		ana_text_row(f, cols, 7, cells);
		shown++;
	}
	free(idx);
	if (!total)
		fprintf(f, "  no file was opened, read or written through the mount\n");
	else if (total > shown)
		fprintf(f, "  ... %zu more files\n", total - shown);
	fprintf(f, "  user: the program's read/write calls ('-': no user-layer log of the file, e.g. mapped only);\n"
		   "  mount: requests at the mount point, page-ins and write-back of mapped pages included\n");
}

#define SCI_THREADS_SHOWN 5

/* The trace: what it holds, the contention score (SCI) and the threads behind it, and where the
 * time of the user calls went, layer by layer. */
void ana_text_trace(FILE *f, const struct ana_job *j)
{
	const struct timeline *tl = j->traced ? &j->tl : NULL;
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
	ana_text_wrap(f, "  ", 4, line);
	const struct tl_sci *sci = &j->sci;
	if (sci && sci->n) {
		const struct tl_sci_thread *t = &sci->threads[0];
		n = 0;
		ana_appendf(line, sizeof line, &n,
			    "contention (SCI): top score %.3f, thread %d of pid %d lost %s of its %s to "
			    "calls slower than the fastest similar call",
			    sci->top, t->tid, t->pid, ana_fmt_ns(a, U, t->slowdown_ns), ana_fmt_ns(b, U, t->lifetime_ns));
		ana_text_wrap(f, "  ", 4, line);
		static const struct ana_col cols[] = {{8, 0}, {8, 0}, {7, 0}, {10, 0}, {10, 0}, {12, 0}};
		static const char *const head[] = {"PID", "TID", "SCORE", "LOST", "LIFETIME", "I/O CALLS"};
		ana_text_row(f, cols, 6, head);
		for (size_t i = 0; i < sci->n && i < SCI_THREADS_SHOWN; i++) {
			char pid[16], tid[16], score[16];
			t = &sci->threads[i];
			snprintf(pid, sizeof pid, "%d", t->pid);
			snprintf(tid, sizeof tid, "%d", t->tid);
			snprintf(score, sizeof score, "%.3f", t->score);
			const char *cells[] = {pid, tid, score, ana_fmt_ns(a, U, t->slowdown_ns), ana_fmt_ns(b, U, t->lifetime_ns),
					       ana_fmt_count(c, U, t->ios)};
			ana_text_row(f, cols, 6, cells);
		}
		if (sci->n > SCI_THREADS_SHOWN)
			fprintf(f, "  ... %zu more threads (report --json has them all)\n", sci->n - SCI_THREADS_SHOWN);
	}
	const struct tl_breakdown *bd = &j->bd;
	if (bd && bd->n) {
		/* without kernel events only the user call was timed: no column of zeros for the rest */
		int kernel = tl->kernel_events != 0;
		ana_text_wrap(f, "  ", 4,
			      kernel ? "Where the time of the user calls went (per call: user call, system calls and block "
				       "device under it)"
				     : "Where the time of the user calls went (per call: the user call; system calls and block "
				       "device not measured: record with --trace --kernel)");
		static const struct ana_col cols[] = {{6, 1}, {10, 1}, {11, 0}, {9, 0}, {9, 0}, {9, 0}, {17, 0}};
		static const char *const head[] = {"OP", "SIZE", "CALLS", "USER", "SYSCALL", "BLOCK", "CACHE HIT/MISS"};
		ana_text_row(f, cols, kernel ? 7 : 4, head);
		for (size_t i = 0; i < bd->n; i++) {
			const struct tl_breakdown_row *r = &bd->rows[i];
			char size[32], hm[48];
			uint64_t k = r->calls ? r->calls : 1;
			log_hist_label(r->size_bucket, size, sizeof size);
			if (r->op == LOG_OP_READ)
				snprintf(hm, sizeof hm, "%s/%s", ana_fmt_count(d, U, r->hits), ana_fmt_count(e, U, r->misses));
			else
				snprintf(hm, sizeof hm, "-");
			const char *cells[] = {ana_rep_op_name(r->op),
					       size, ana_fmt_count(a, U, r->calls), ana_fmt_ns(b, U, r->user_ns / k),
					       ana_fmt_ns(c, U, r->syscall_ns / k), ana_fmt_ns(e, U, r->block_ns / k), hm};
			ana_text_row(f, cols, kernel ? 7 : 4, cells);
		}
		/* bytes in vs bytes out, layer by layer: read-ahead and write amplification per call class */
		int any_kernel = 0;
		for (size_t i = 0; i < bd->n; i++)
			any_kernel |= bd->rows[i].bytes_syscall || bd->rows[i].bytes_pagecache || bd->rows[i].bytes_block;
		if (any_kernel) {
			fprintf(f, "  Bytes moved under those calls, layer by layer\n");
			static const struct ana_col bcols[] = {{6, 1}, {10, 1}, {12, 0}, {12, 0}, {12, 0}, {12, 0}};
			static const char *const bhead[] = {"OP", "SIZE", "USER", "SYSCALL", "PAGE CACHE", "BLOCK"};
			ana_text_row(f, bcols, 6, bhead);
			for (size_t i = 0; i < bd->n; i++) {
				const struct tl_breakdown_row *r = &bd->rows[i];
				char size[32];
				if (r->op != LOG_OP_READ && r->op != LOG_OP_WRITE)
					continue;
				log_hist_label(r->size_bucket, size, sizeof size);
				const char *cells[] = {ana_rep_op_name(r->op), size,
						       ana_fmt_bytes(a, U, r->bytes_user), ana_fmt_bytes(b, U, r->bytes_syscall),
						       ana_fmt_bytes(c, U, r->bytes_pagecache), ana_fmt_bytes(d, U, r->bytes_block)};
				ana_text_row(f, bcols, 6, cells);
			}
		}
	}
}
