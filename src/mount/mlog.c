/* SPDX-License-Identifier: MIT */
/*
 * The mount layer's log (see mlog.h). Its layout is the capture library's live layout (header,
 * strings, records, optional trace area) in a file of the live directory named
 * mount-<host>-<pid>-<start µs>.iost, so `iostrata recover`, `top` and a sampler find it like
 * any other live log. Records are found through a private hash of (path, pid) under one mutex:
 * the monitor is a separate process serving requests from several threads, so a short lock
 * here delays no application directly, and a record is looked up once per open file handle and
 * requester (the handle caches it), not once per request.
 */
#include "mount/mlog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/live.h"
#include "log/record.h"
#include "log/trace_writer.h"
#include "log/writer.h"
#include "log/zstd.h"

struct mnt_log {
	struct log_header *hdr;
	size_t map_size;
	char *strings;
	uint32_t string_cap;
	struct log_record *records;
	struct log_trace_area trace; /* nblocks 0: not tracing */
	uint32_t *index; /* open addressing: record slot + 1, 0 = empty */
	uint32_t index_mask;
	pthread_mutex_t lock;
	char live_path[MNT_PATH_MAX];
	char final_path[MNT_PATH_MAX];
	int finished;
};

uint64_t mnt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Called with the lock held, or before any other thread exists. */
static uint32_t string_add(struct mnt_log *l, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = l->hdr->string_used;
	if ((uint64_t)off + n > l->string_cap) {
		__atomic_fetch_or(&l->hdr->flags, LOG_F_OVERFLOW, __ATOMIC_RELAXED);
		return UINT32_MAX;
	}
	memcpy(l->strings + off, s, n);
	__atomic_store_n(&l->hdr->string_used, off + (uint32_t)n, __ATOMIC_RELEASE);
	return off;
}

static struct log_record *record_new(struct mnt_log *l, const char *path, int32_t pid, uint32_t rflags)
{
	uint32_t n = l->hdr->nrecords;
	if (n >= l->hdr->max_records)
		return NULL;
	uint32_t soff = string_add(l, path);
	if (soff == UINT32_MAX)
		return NULL;
	struct log_record *r = &l->records[n];
	r->id = log_record_id(LOG_LAYER_MOUNT, path);
	r->path = soff;
	r->layer = LOG_LAYER_MOUNT;
	r->pid = pid;
	r->rank = -1;
	/* published after its path: the final-log writer copies records before strings */
	__atomic_store_n(&r->flags, (uint16_t)(LOG_R_USED | rflags), __ATOMIC_RELEASE);
	__atomic_store_n(&l->hdr->nrecords, n + 1, __ATOMIC_RELEASE);
	return r;
}

static uint32_t hash_of(const char *path, int32_t pid)
{
	uint64_t h = log_record_id(LOG_LAYER_MOUNT, path) ^ ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull);
	return (uint32_t)(h ^ (h >> 32));
}

struct log_record *mnt_log_record(struct mnt_log *l, const char *path, int32_t pid)
{
	struct log_record *r = NULL;
	pthread_mutex_lock(&l->lock);
	uint32_t i = hash_of(path, pid) & l->index_mask;
	for (uint32_t probes = 0; probes <= l->index_mask; probes++, i = (i + 1) & l->index_mask) {
		uint32_t v = l->index[i];
		if (v == 0) {
			r = record_new(l, path, pid, 0);
			if (r)
				l->index[i] = (uint32_t)(r - l->records) + 1;
			break;
		}
		struct log_record *x = &l->records[v - 1];
		if (x->pid == pid && !strcmp(l->strings + x->path, path)) {
			r = x;
			break;
		}
	}
	if (!r) {
		__atomic_fetch_or(&l->hdr->flags, LOG_F_OVERFLOW, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->hdr->overflow_opens, 1, __ATOMIC_RELAXED);
		r = &l->records[0];
	}
	pthread_mutex_unlock(&l->lock);
	return r;
}

uint32_t mnt_log_record_index(const struct mnt_log *l, const struct log_record *r)
{
	return (uint32_t)(r - l->records);
}

struct log_record *mnt_log_record_at(struct mnt_log *l, uint32_t index)
{
	return &l->records[index];
}

/* With --trace: every request is an entry of its serving thread's block (runs of contiguous
 * same-size requests on one record kept as one entry). The blocks are the monitor's threads';
 * each entry's record names the requesting pid. */
static __thread struct log_trace_writer tw;

static void trace(struct mnt_log *l, const struct log_record *r, unsigned op, uint64_t off, uint64_t size,
		  int64_t result, uint64_t t0, uint64_t t1)
{
	if (l->trace.nblocks)
		log_trace_write(&l->trace, &tw, (uint32_t)(r - l->records), op, off, size, result, t0, t1);
}

void mnt_note_rw(struct mnt_log *l, struct log_record *r, int kind, uint64_t off, int64_t res, uint64_t t0,
		 uint64_t t1)
{
	trace(l, r, kind == LOG_KIND_WRITE ? LOG_OP_WRITE : LOG_OP_READ, off, res < 0 ? 0 : (uint64_t)res,
	      res < 0 ? res : 0, t0, t1);
	if (res < 0) {
		log_inc(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], 1);
		log_add(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, 1);
		return;
	}
	/* The monitor's buffers are its own: memory alignment says nothing of the application. */
	log_note_access(r, kind, off, (uint64_t)res, 0, t0, t1, l->hdr->file_alignment, 1, 1);
	uint64_t *lat = kind == LOG_KIND_WRITE ? r->write_lat_hist : r->read_lat_hist;
	log_inc(&lat[log_hist_bucket(t1 - t0)], 1);
}

static enum log_counter err_counter(enum log_counter which)
{
	switch (which) {
	case LOG_C_OPENS:
		return LOG_C_ERR_OPENS;
	case LOG_C_SEEKS:
		return LOG_C_ERR_SEEKS;
	case LOG_C_FSYNCS:
		return LOG_C_ERR_SYNCS;
	default:
		return LOG_C_ERR_META;
	}
}

void mnt_note_meta(struct mnt_log *l, struct log_record *r, enum log_counter which, uint64_t t0, uint64_t t1,
		   int res)
{
	trace(l, r, log_meta_op(which), UINT64_MAX, 0, res < 0 ? res : 0, t0, t1);
	if (res < 0) {
		log_inc(&r->counters[err_counter(which)], 1);
		log_add(&r->counters[LOG_C_TIME_META], t1 - t0, 1);
		return;
	}
	log_note_meta(r, which, t0, t1, 1);
}

static int path_join(char *dst, size_t len, const char *dir, const char *name)
{
	return snprintf(dst, len, "%s/%s", dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

struct mnt_log *mnt_log_create(const struct mnt_log_options *o, char *err, size_t errlen)
{
	char live_dir[MNT_PATH_MAX], host[256] = "unknown";
	const char *e = getenv("IOSTRATA_LIVE_DIR");
	if (o->live_dir)
		snprintf(live_dir, sizeof live_dir, "%s", o->live_dir);
	else if (e && *e)
		snprintf(live_dir, sizeof live_dir, "%s", e);
	else
		snprintf(live_dir, sizeof live_dir, "/dev/shm/iostrata-%u", (unsigned)getuid());
	int r = log_live_dir_check(live_dir, mkdir, lstat);
	if (r < 0) {
		snprintf(err, errlen, "%s: not a usable live directory: %s", live_dir, strerror(-r));
		return NULL;
	}
	if (((r = log_mkdir_p(o->out_dir, 0755, mkdir)) < 0 || access(o->out_dir, W_OK | X_OK) < 0) && !o->out_dir_optional) {
		snprintf(err, errlen, "%s: cannot write logs there: %s", o->out_dir, strerror(r < 0 ? -r : errno));
		return NULL;
	}
	struct mnt_log *l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	gethostname(host, sizeof host - 1);
	uint64_t start_ns = mnt_now();
	char name[160];
	snprintf(name, sizeof name, "mount-%.64s-%d-%llu.iost", host, (int)getpid(),
		 (unsigned long long)(start_ns / 1000));
	if (path_join(l->live_path, sizeof l->live_path, live_dir, name) < 0 ||
	    path_join(l->final_path, sizeof l->final_path, o->out_dir, name) < 0) {
		snprintf(err, errlen, "%s: path too long", o->out_dir);
		free(l);
		return NULL;
	}

	uint32_t maxr = o->max_records < 16 ? 16 : o->max_records;
	uint32_t string_cap = maxr * 128u + 65536u;
	size_t rec_off = LOG_HEADER_SIZE + ((string_cap + 4095u) & ~4095u);
	size_t size = rec_off + (size_t)maxr * sizeof(struct log_record);
	size_t trace_off = (size + 4095u) & ~(size_t)4095u;
	uint64_t nblocks = o->trace ? (uint64_t)(o->trace_mb ? o->trace_mb : 256) * (1u << 20) / LOG_TRACE_BLOCK : 0;
	if (nblocks)
		size = trace_off + nblocks * LOG_TRACE_BLOCK; /* sparse until used */
	uint32_t isize = 1;
	while (isize < 2 * maxr)
		isize <<= 1;
	l->index = calloc(isize, sizeof *l->index);
	l->index_mask = isize - 1;
	int fd = open(l->live_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (!l->index || fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		snprintf(err, errlen, "%s: cannot create: %s", l->live_path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(l->live_path);
		}
		free(l->index);
		free(l);
		return NULL;
	}
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "%s: cannot map: %s", l->live_path, strerror(errno));
		unlink(l->live_path);
		free(l->index);
		free(l);
		return NULL;
	}
	l->hdr = m;
	l->map_size = size;
	l->strings = (char *)m + LOG_HEADER_SIZE;
	l->string_cap = string_cap;
	l->records = (struct log_record *)((char *)m + rec_off);

	struct log_header *h = l->hdr;
	log_live_header_init(h, maxr, string_cap, rec_off);
	if (nblocks) {
		h->sections[2] = (struct log_section){LOG_SEC_TRACE, 0, trace_off, nblocks * LOG_TRACE_BLOCK, nblocks};
		h->nsections = 3;
		h->trace_block_size = LOG_TRACE_BLOCK;
		l->trace = (struct log_trace_area){h, (char *)m + trace_off, nblocks};
		char why[200];
		if (log_zstd_load(why, sizeof why) < 0)
			fprintf(stderr, "iostrata mount: the trace will be stored uncompressed: %s\n", why);
	}
	h->pid = getpid();
	h->ppid = getppid();
	h->uid = getuid();
	h->gid = getgid();
	h->rank = h->nprocs = -1;
	h->start_ns = start_ns;
	struct timespec wt;
	clock_gettime(CLOCK_REALTIME, &wt);
	h->start_wall_ns = (uint64_t)wt.tv_sec * 1000000000ull + (uint64_t)wt.tv_nsec;
	h->exit_status = -1;
	h->clock_kind = LOG_CLOCK_NS;
	h->file_alignment = 4096;
	h->mem_alignment = 1;
	/* The collector's layer: a log whose records name their processes (as the kernel log's do). */
	h->kernel_layers = 1u << LOG_LAYER_MOUNT;
	char stat_path[64], buf[1024] = "";
	snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", (int)getpid());
	FILE *sf = fopen(stat_path, "re");
	if (sf) {
		if (fgets(buf, sizeof buf, sf))
			h->proc_start_ticks = log_proc_starttime(buf);
		fclose(sf);
	}
	h->host = string_add(l, host);
	char exe[MNT_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	h->exe = string_add(l, exe);
	if (o->argc > 0 && o->argv) {
		h->argv = string_add(l, o->argv[0]);
		h->argc = 1;
		for (int i = 1; i < o->argc && o->argv[i]; i++)
			if (string_add(l, o->argv[i]) != UINT32_MAX)
				h->argc = (uint32_t)i + 1;
	}
	h->job = string_add(l, o->job ? o->job : "");
	char cwd[MNT_PATH_MAX];
	h->cwd = string_add(l, getcwd(cwd, sizeof cwd) ? cwd : "");
	h->outdir = string_add(l, o->out_dir);
	h->live_path = string_add(l, l->live_path);
	memcpy(h->magic, LOG_MAGIC, 8); /* last: a reader never sees a half-made header as valid */
	/* Record 0 catches what does not fit. */
	record_new(l, "<overflow>", 0, LOG_R_OVERFLOW | LOG_R_PSEUDO);
	return l;
}

const char *mnt_log_live_path(const struct mnt_log *l)
{
	return l->live_path;
}

const char *mnt_log_final_path(const struct mnt_log *l)
{
	return l->final_path;
}

int mnt_log_finish(struct mnt_log *l, int exit_status, char *err, size_t errlen)
{
	l->hdr->end_ns = mnt_now();
	l->hdr->exit_status = exit_status;
	int r = log_write_final(l->hdr, l->map_size, NULL, l->final_path, LOG_F_FINISHED, err, errlen);
	if (r == 0) {
		unlink(l->live_path);
		l->finished = 1;
	}
	return r;
}

void mnt_log_close(struct mnt_log *l)
{
	if (!l)
		return;
	munmap(l->hdr, l->map_size);
	free(l->index);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
