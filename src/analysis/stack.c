/* SPDX-License-Identifier: MIT */
/*
 * "Down the stack": the layers of a job with a kernel log side by side — the calls the program
 * made, the system calls that reached the kernel, the page cache (hits, pages read in, dirtied),
 * the filesystem and the block devices (requests, queue and device time) — and per data file the
 * same bytes at each layer. Computed once here (ana_stack_build) for both renderings and the
 * kernel insights; it reads nothing but the profile (device mount points come from the caller).
 */
#include "analysis/stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

static void name_device(struct ana_device *d, const struct ana_mount *mounts, size_t nmounts)
{
	d->major = major(d->dev);
	d->minor = minor(d->dev);
	unsigned ma, mi;
	char name[sizeof d->name];
	/* the kernel log names a device "<device NAME M:m>"; a name-less one is known by number */
	if (sscanf(d->path, "<device %63s %u:%u>", name, &ma, &mi) == 3)
		snprintf(d->name, sizeof d->name, "%s", name);
	else
		snprintf(d->name, sizeof d->name, "%u:%u", d->major, d->minor);
	for (size_t i = 0; i < nmounts; i++) {
		if (mounts[i].dev == d->dev) {
			d->mount = &mounts[i];
			break;
		}
	}
}

/* The device rows: the block layer's per-device records (inode 0), merged over kernel logs. */
static int collect_devices(const struct ana_profile *p, const struct ana_mount *mounts, size_t nmounts,
			   struct ana_stack *s)
{
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		for (uint32_t k = 0; k < lf->nrecords; k++) {
			const struct log_record *r = &lf->records[k];
			if (r->layer != LOG_LAYER_BLOCK || r->ino || (r->flags & LOG_R_DEAD))
				continue;
			const char *path = ana_record_path(lf, r);
			struct ana_device *d = NULL;
			for (size_t j = 0; j < s->ndevices && !d; j++)
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
				name_device(d, mounts, nmounts);
			}
			ana_counters_merge(d->c, r->counters);
			d->unseen[0] += r->unseen_requests;
			d->unseen[1] += r->unseen_bytes_read;
			d->unseen[2] += r->unseen_bytes_written;
			s->unseen[0] += r->unseen_requests;
			s->unseen[1] += r->unseen_bytes_read;
			s->unseen[2] += r->unseen_bytes_written;
			ana_hist_add(d->read_lat_hist, r->read_lat_hist);
			ana_hist_add(d->write_lat_hist, r->write_lat_hist);
			ana_hist_add(d->read_hist, r->read_hist);
			ana_hist_add(d->write_hist, r->write_hist);
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

/* The program's own calls on a file: HDF5 above MPI-IO above stdio above POSIX (each lower one
 * carries the calls of the one above it, so the topmost is what the program wrote in its source). */
static int user_rank(unsigned layer)
{
	switch (layer) {
	case LOG_LAYER_HDF5:
		return 4;
	case LOG_LAYER_MPIIO:
		return 3;
	case LOG_LAYER_STDIO:
		return 2;
	case LOG_LAYER_POSIX:
		return 1;
	default:
		return 0;
	}
}

static void add_layer(struct ana_stack_file *f, int sl, const uint64_t *c)
{
	f->bytes[sl][0] += c[LOG_C_BYTES_READ];
	f->bytes[sl][1] += c[LOG_C_BYTES_WRITTEN];
	f->ops[sl][0] += c[LOG_C_READS];
	f->ops[sl][1] += c[LOG_C_WRITES];
}

/* The HDF5 calls on the datasets of the file path: the hdf5 records named "PATH:/DATASET", which
 * sort together after PATH + ":" in paths[]; their reads and writes added into c. */
static void hdf5_datasets(const struct ana_profile *p, const char *path, uint64_t *c)
{
	size_t n = strlen(path), lo = 0, hi = p->npaths;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strncmp(p->paths[mid].path, path, n);
		if (r < 0 || (r == 0 && p->paths[mid].path[n] < ':'))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->npaths && !strncmp(p->paths[i].path, path, n) && p->paths[i].path[n] == ':'; i++)
		if (p->paths[i].layer == LOG_LAYER_HDF5 && p->paths[i].path[n + 1] == '/')
			for (int k = 0; k < 4; k++) {
				static const enum log_counter which[] = {LOG_C_READS, LOG_C_WRITES, LOG_C_BYTES_READ,
									 LOG_C_BYTES_WRITTEN};
				c[which[k]] += p->paths[i].c[which[k]];
			}
}

/* Per data file (paths[] is sorted by path, then layer): bytes and calls at each layer. */
static int collect_files(const struct ana_profile *p, struct ana_stack *s)
{
	for (size_t i = 0; i < p->npaths;) {
		size_t j = i;
		struct ana_stack_file f;
		memset(&f, 0, sizeof f);
		f.path = p->paths[i].path;
		int real = 1, syscall = 0;
		for (; j < p->npaths && !strcmp(p->paths[j].path, f.path); j++) {
			const struct ana_path *x = &p->paths[j];
			const uint64_t *c = x->c;
			uint64_t h5[LOG_NCOUNTERS];
			if (x->layer == LOG_LAYER_HDF5) { /* the file's record: its datasets' calls are the file's */
				memset(h5, 0, sizeof h5);
				hdf5_datasets(p, f.path, h5);
				c = h5;
			}
			if (x->rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW))
				real = 0;
			if (user_rank(x->layer) > user_rank(f.user_layer) && c[LOG_C_READS] + c[LOG_C_WRITES]) {
				f.user_layer = x->layer;
				memset(f.bytes[ANA_SL_USER], 0, sizeof f.bytes[ANA_SL_USER]);
				memset(f.ops[ANA_SL_USER], 0, sizeof f.ops[ANA_SL_USER]);
				add_layer(&f, ANA_SL_USER, c);
			}
			switch (x->layer) {
			case LOG_LAYER_SYSCALL:
				syscall = 1;
				add_layer(&f, ANA_SL_SYSCALL, c);
				f.max_read_end = c[LOG_C_MAX_READ_END];
				break;
			case LOG_LAYER_BLOCK:
				add_layer(&f, ANA_SL_BLOCK, c);
				for (int u = 0; u < 3; u++)
					f.unseen[u] += x->unseen[u];
				break;
			case LOG_LAYER_PAGECACHE:
				f.pages_read_in += c[LOG_C_PAGES_READ_IN];
				f.pages_added_write += c[LOG_C_PAGES_ADDED_WRITE];
				f.pages_dirtied += c[LOG_C_PAGES_DIRTIED];
				break;
			default:
				break;
			}
		}
		i = j;
		if (!real || !syscall || !ana_is_data_path(f.path) ||
		    !(f.bytes[ANA_SL_SYSCALL][0] + f.bytes[ANA_SL_SYSCALL][1]))
			continue;
		struct ana_stack_file *v = realloc(s->files, (s->nfiles + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->files = v;
		s->files[s->nfiles++] = f;
		for (int d = 0; d < 2; d++) {
			s->user_calls[f.user_layer][d] += f.ops[ANA_SL_USER][d];
			s->user_calls[0][d] += f.ops[ANA_SL_USER][d];
			s->syscalls[d] += f.ops[ANA_SL_SYSCALL][d];
			s->file_syscall_bytes[d] += f.bytes[ANA_SL_SYSCALL][d];
			s->file_block_bytes[d] += f.bytes[ANA_SL_BLOCK][d] + f.unseen[1 + d];
		}
	}
	if (s->nfiles) /* files is NULL when there are none, which qsort may not be given */
		qsort(s->files, s->nfiles, sizeof *s->files, cmp_file_bytes);
	return 0;
}

static double ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0;
}

int ana_stack_build(const struct ana_profile *p, const struct ana_mount *mounts, size_t nmounts,
		    struct ana_stack *s)
{
	memset(s, 0, sizeof *s);
	if (!p->nkernel_logs)
		return 0;
	s->present = 1;
	const uint64_t *sc = p->layers[LOG_LAYER_SYSCALL].c, *pc = p->layers[LOG_LAYER_PAGECACHE].c;
	s->hit_reads = sc[LOG_C_CACHE_HIT_READS];
	s->miss_reads = sc[LOG_C_CACHE_MISS_READS];
	s->bytes_requested = sc[LOG_C_BYTES_READ];
	s->bytes_read_in = pc[LOG_C_PAGES_READ_IN] * p->page_size;
	s->pages_added_write = pc[LOG_C_PAGES_ADDED_WRITE];
	s->pages_dirtied = pc[LOG_C_PAGES_DIRTIED];
	s->pages_evicted = pc[LOG_C_PAGES_EVICTED];
	s->faults = pc[LOG_C_MMAP_FAULTS];
	s->readahead_pages = pc[LOG_C_READAHEAD_PAGES];
	int r = collect_devices(p, mounts, nmounts, s);
	if (r == 0)
		r = collect_files(p, s);
	if (r < 0) {
		ana_stack_free(s);
		return r;
	}
	for (size_t i = 0; i < s->ndevices; i++) {
		s->block_bytes_read += s->devices[i].c[LOG_C_BYTES_READ] + s->devices[i].unseen[1];
		s->block_bytes_written += s->devices[i].c[LOG_C_BYTES_WRITTEN] + s->devices[i].unseen[2];
	}
	s->syscall_bytes_read = sc[LOG_C_BYTES_READ];
	s->syscall_bytes_written = sc[LOG_C_BYTES_WRITTEN];
	s->read_amplification = ratio(s->block_bytes_read, s->syscall_bytes_read);
	s->write_amplification = ratio(s->block_bytes_written, s->syscall_bytes_written);
	s->file_read_amplification = ratio(s->file_block_bytes[0], s->file_syscall_bytes[0]);
	s->file_write_amplification = ratio(s->file_block_bytes[1], s->file_syscall_bytes[1]);
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

uint64_t ana_hist_bucket_low(int b)
{
	return b <= 0 ? 0 : 1ull << (b - 1);
}

void ana_block_timed(const struct ana_stack *s, uint64_t *requests, uint64_t *timed)
{
	*requests = *timed = 0;
	for (size_t i = 0; i < s->ndevices; i++) {
		const struct ana_device *d = &s->devices[i];
		*requests += d->c[LOG_C_READS] + d->c[LOG_C_WRITES];
		for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
			*timed += d->read_lat_hist[k] + d->write_lat_hist[k];
	}
}
