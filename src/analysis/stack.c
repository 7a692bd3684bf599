/* SPDX-License-Identifier: MIT */
/*
 * "Down the stack": the layers of a job with a kernel log side by side — the calls the program
 * made, the system calls that reached the kernel, the page cache (hits, pages read in, dirtied),
 * the filesystem and the block devices (requests, queue and device time) — and per file the same
 * bytes at each layer. Computed once here (ana_stack_build) for both renderings.
 */
#include "analysis/stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void hist_add(uint64_t *dst, const uint64_t *src)
{
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		dst[b] += src[b];
}

/* The device rows: the block layer's per-device records, merged over kernel logs by path. */
static int collect_devices(const struct ana_profile *p, struct ana_stack *s)
{
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		for (uint32_t k = 0; k < lf->nrecords; k++) {
			const struct log_record *r = &lf->records[k];
			if (r->layer != LOG_LAYER_BLOCK || r->ino) /* per device: inode 0 */
				continue;
			const char *path = ana_record_path(lf, r);
			struct ana_device *d = NULL;
			for (size_t j = 0; j < s->ndevices; j++)
				if (!strcmp(s->devices[j].path, path))
					d = &s->devices[j];
			if (!d) {
				struct ana_device *v = realloc(s->devices, (s->ndevices + 1) * sizeof *v);
				if (!v)
					return -ENOMEM;
				s->devices = v;
				d = &s->devices[s->ndevices++];
				memset(d, 0, sizeof *d);
				d->path = path;
				d->dev = r->dev;
			}
			ana_counters_merge(d->c, r->counters);
			hist_add(d->read_lat_hist, r->read_lat_hist);
			hist_add(d->write_lat_hist, r->write_lat_hist);
			hist_add(d->read_hist, r->read_hist);
			hist_add(d->write_hist, r->write_hist);
		}
	}
	return 0;
}

static int cmp_file_bytes(const void *a, const void *b)
{
	const struct ana_stack_file *x = a, *y = b;
	uint64_t bx = x->bytes[ANA_SL_SYSCALL][0] + x->bytes[ANA_SL_SYSCALL][1];
	uint64_t by = y->bytes[ANA_SL_SYSCALL][0] + y->bytes[ANA_SL_SYSCALL][1];
	if (bx != by)
		return bx < by ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* Per path: bytes at each layer (paths[] is sorted by path, then layer). */
static int collect_files(const struct ana_profile *p, struct ana_stack *s)
{
	for (size_t i = 0; i < p->npaths;) {
		size_t j = i;
		struct ana_stack_file f;
		memset(&f, 0, sizeof f);
		f.path = p->paths[i].path;
		int real = 1, kernel = 0;
		for (; j < p->npaths && !strcmp(p->paths[j].path, f.path); j++) {
			const struct ana_path *x = &p->paths[j];
			if (x->rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW))
				real = 0;
			int sl = -1;
			switch (x->layer) {
			case LOG_LAYER_POSIX:
				sl = ANA_SL_USER;
				break;
			case LOG_LAYER_SYSCALL:
				sl = ANA_SL_SYSCALL;
				kernel = 1;
				break;
			case LOG_LAYER_BLOCK:
				sl = ANA_SL_BLOCK;
				break;
			case LOG_LAYER_PAGECACHE:
				f.pages_read_in += x->c[LOG_C_PAGES_READ_IN];
				f.pages_dirtied += x->c[LOG_C_PAGES_DIRTIED];
				break;
			case LOG_LAYER_STDIO:
				if (!p->layers[LOG_LAYER_POSIX].nrecords)
					sl = ANA_SL_USER;
				break;
			}
			if (sl >= 0) {
				f.bytes[sl][0] += x->c[LOG_C_BYTES_READ];
				f.bytes[sl][1] += x->c[LOG_C_BYTES_WRITTEN];
				f.ops[sl] += x->c[LOG_C_READS] + x->c[LOG_C_WRITES];
			}
		}
		i = j;
		if (!real || !kernel || !ana_is_data_path(f.path) ||
		    !(f.bytes[ANA_SL_SYSCALL][0] + f.bytes[ANA_SL_SYSCALL][1]))
			continue;
		struct ana_stack_file *v = realloc(s->files, (s->nfiles + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->files = v;
		s->files[s->nfiles++] = f;
	}
	qsort(s->files, s->nfiles, sizeof *s->files, cmp_file_bytes);
	return 0;
}

int ana_stack_build(const struct ana_profile *p, struct ana_stack *s)
{
	memset(s, 0, sizeof *s);
	if (!p->nklogs)
		return 0;
	s->present = 1;
	const uint64_t *sc = p->layers[LOG_LAYER_SYSCALL].c, *pc = p->layers[LOG_LAYER_PAGECACHE].c;
	s->hit_reads = sc[LOG_C_CACHE_HIT_READS];
	s->miss_reads = sc[LOG_C_CACHE_MISS_READS];
	s->bytes_requested = sc[LOG_C_BYTES_READ];
	s->bytes_read_in = pc[LOG_C_PAGES_READ_IN] * ANA_PAGE_SIZE;
	s->pages_added_write = pc[LOG_C_PAGES_ADDED_WRITE];
	s->pages_dirtied = pc[LOG_C_PAGES_DIRTIED];
	s->pages_evicted = pc[LOG_C_PAGES_EVICTED];
	s->faults = pc[LOG_C_MMAP_FAULTS];
	s->readahead_pages = pc[LOG_C_READAHEAD_PAGES];
	int r = collect_devices(p, s);
	if (r == 0)
		r = collect_files(p, s);
	if (r < 0) {
		ana_stack_free(s);
		return r;
	}
	uint64_t br = 0, bw = 0;
	for (size_t i = 0; i < s->ndevices; i++) {
		br += s->devices[i].c[LOG_C_BYTES_READ];
		bw += s->devices[i].c[LOG_C_BYTES_WRITTEN];
	}
	s->block_bytes_read = br;
	s->block_bytes_written = bw;
	s->read_amplification = sc[LOG_C_BYTES_READ] ? (double)br / (double)sc[LOG_C_BYTES_READ] : 0;
	s->write_amplification = sc[LOG_C_BYTES_WRITTEN] ? (double)bw / (double)sc[LOG_C_BYTES_WRITTEN] : 0;
	return 0;
}

void ana_stack_free(struct ana_stack *s)
{
	free(s->devices);
	free(s->files);
	memset(s, 0, sizeof *s);
}

int ana_hist_percentile(const uint64_t *h, double q)
{
	uint64_t total = 0, run = 0;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		total += h[b];
	if (!total)
		return -1;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		run += h[b];
		if ((double)run >= q * (double)total)
			return (int)b;
	}
	return LOG_HIST_BUCKETS - 1;
}
