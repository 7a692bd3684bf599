/* SPDX-License-Identifier: MIT */
/*
 * The node-wide shared ring of write aggregation: creation and removal of the POSIX shared-memory
 * segment, the file table, reserving and publishing entries, and the drain that writes them back
 * in place. It does not decide what is aggregated (aggregate.c does) and never calls a wrapper:
 * every write goes through the struct agg_io the caller hands in.
 *
 * Robust process-shared mutexes: `lock` is held for a few stores (reserve an entry, add a file or
 * pid, move the tail), one per file (`dlock`) while that file's entries are written back, so
 * processes flushing different files work in parallel, and `drain` by the process that drains the
 * whole ring (the flusher). Robust, so that a holder killed by SIGKILL hands the lock to the next
 * process with EOWNERDEAD instead of hanging the node: entries are marked DONE only after their
 * whole batch is written, so the taker rewrites that batch from its start, which is harmless
 * because entries go back at their own offsets in ring order (the same bytes land in the same
 * places). The tail moves over DONE entries only.
 */
#include "capture/agg_shm.h"
#include "capture/agg_pack.h"
#include "sys/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define AGG_BATCH 1024
#define AGG_IOV 1024

static uint64_t hdr_bytes(void)
{
	return (sizeof(struct agg_shm) + 4095) & ~(uint64_t)4095;
}

static int lock_robust(pthread_mutex_t *m, uint64_t *takeovers)
{
	int r = pthread_mutex_lock(m);
	if (r == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		if (takeovers)
			__atomic_fetch_add(takeovers, 1, __ATOMIC_RELAXED);
		r = 0;
	}
	return r;
}

/* A process that will never finish a copy: gone (ESRCH), or a zombie its parent has not reaped
 * yet (the parent may be the very process waiting on it). /proc is read with raw system calls:
 * this runs inside the capture library, whose open and read are the application's wrappers. */
static int pid_dead(int32_t pid)
{
	if (pid <= 0)
		return 0;
	int e = errno;
	int dead = kill(pid, 0) < 0 && errno == ESRCH;
	if (!dead) {
		char p[40], b[512];
		snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
		long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			long n = syscall(SYS_read, fd, b, sizeof b - 1);
			syscall(SYS_close, fd);
			struct sys_proc_stat st;
			if (n > 0 && sys_proc_stat_parse(b, (size_t)n, &st) == 0)
				dead = sys_proc_state_dead(st.state);
		}
	}
	errno = e;
	return dead;
}

void agg_shm_name(char *out, size_t len, const char *job)
{
	char clean[160];
	size_t k = 0;
	for (const char *p = job ? job : "nojob"; *p && k < sizeof clean - 1; p++)
		clean[k++] = (*p == '/' || *p == ' ') ? '_' : *p;
	clean[k] = 0;
	snprintf(out, len, "/iostrata-agg-%u-%s", (unsigned)getuid(), clean);
}

static int init_mutex(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int r = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return r;
}

static void pid_add(struct agg_shm *s, int32_t pid)
{
	int free_slot = -1;
	for (int i = 0; i < AGG_SHM_PIDS; i++) {
		if (s->pids[i] == pid)
			return;
		if (free_slot < 0 && (s->pids[i] == 0 || pid_dead(s->pids[i])))
			free_slot = i;
	}
	if (free_slot >= 0)
		s->pids[free_slot] = pid;
	/* a full table only means a process more that the last one waits for: no data at stake */
}

/* Start a segment in the pack file (the file header first when it is new). */
static int pack_start(struct agg_shm *s, const char *path, const struct agg_io *io)
{
	int fd = io->open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		io->close(fd);
		return -1;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (size == 0) {
		unsigned char h[AGG_PACK_HDR] = {0};
		uint32_t v = 1, hs = AGG_PACK_HDR;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		memcpy(h, AGG_PACK_MAGIC, 8);
		memcpy(h + 8, &v, 4);
		memcpy(h + 12, &hs, 4);
		memcpy(h + 16, &ns, 8);
		gethostname((char *)h + 24, 31);
		struct iovec v1 = {h, sizeof h};
		if (io->writev(fd, &v1, 1) != (ssize_t)sizeof h) {
			io->close(fd);
			return -1;
		}
		size = sizeof h;
	}
	io->close(fd);
	s->seg_start = size;
	snprintf(s->pack_path, sizeof s->pack_path, "%s", path);
	s->packed = 1;
	return 0;
}

struct agg_shm *agg_shm_attach(const char *name, uint64_t data_size, int (*ftrunc)(int, off_t),
			       const char *pack_path, const struct agg_io *io)
{
	data_size &= ~(uint64_t)7;
	for (int tries = 0; tries < 10000; tries++) {
		int created = 0;
		int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			created = 1;
			/* allocated now, once per node, rather than page by page inside the writes */
			if (ftrunc(fd, (off_t)(hdr_bytes() + data_size)) < 0 ||
			    fallocate(fd, 0, 0, (off_t)(hdr_bytes() + data_size)) < 0) {
				int e = errno;
				close(fd);
				shm_unlink(name);
				errno = e;
				return NULL;
			}
		} else if (errno == EEXIST) {
			fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
			if (fd < 0) {
				sched_yield();
				continue; /* removed meanwhile: create it */
			}
		} else {
			return NULL;
		}
		struct stat st;
		int spins = 0;
		while (fstat(fd, &st) == 0 && (uint64_t)st.st_size < hdr_bytes() + 8 && spins++ < 100000)
			sched_yield(); /* the creator has not sized it yet */
		if ((uint64_t)st.st_size < hdr_bytes() + 8) {
			close(fd);
			errno = EPROTO;
			return NULL;
		}
		struct agg_shm *s = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		int e = errno;
		close(fd);
		if (s == MAP_FAILED) {
			errno = e;
			return NULL;
		}
		if (created) {
			memcpy(s->magic, AGG_SHM_MAGIC, 8);
			s->version = 1;
			s->data_size = data_size;
			s->data_off = hdr_bytes();
			init_mutex(&s->lock);
			init_mutex(&s->drain);
			if (pack_path && pack_start(s, pack_path, io) < 0) {
				int pe = errno;
				munmap(s, (size_t)st.st_size);
				shm_unlink(name);
				errno = pe;
				return NULL;
			}
			__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
		} else {
			spins = 0;
			while (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) && spins++ < 100000)
				sched_yield();
			if (!s->ready || memcmp(s->magic, AGG_SHM_MAGIC, 8) ||
			    s->data_off + s->data_size > (uint64_t)st.st_size) {
				munmap(s, (size_t)st.st_size);
				errno = EPROTO;
				return NULL;
			}
		}
		lock_robust(&s->lock, &s->takeovers);
		if (s->removed) { /* the last process is draining it away: make a new one */
			pthread_mutex_unlock(&s->lock);
			munmap(s, (size_t)st.st_size);
			sched_yield();
			continue;
		}
		pid_add(s, (int32_t)getpid());
		pthread_mutex_unlock(&s->lock);
		return s;
	}
	errno = EAGAIN;
	return NULL;
}

/* After fork the child is one more process the ring must wait for. */
void agg_shm_add_self(struct agg_shm *s)
{
	lock_robust(&s->lock, &s->takeovers);
	pid_add(s, (int32_t)getpid());
	pthread_mutex_unlock(&s->lock);
}

static size_t map_bytes(const struct agg_shm *s)
{
	return (size_t)(s->data_off + s->data_size);
}

/* 1 when no process but the caller (pid me, 0 for none) is attached; dead ones are forgotten. */
static int last_one(struct agg_shm *s, int32_t me)
{
	int alive = 0;
	for (int i = 0; i < AGG_SHM_PIDS; i++) {
		if (s->pids[i] == me)
			s->pids[i] = 0;
		else if (s->pids[i] && pid_dead(s->pids[i]))
			s->pids[i] = 0;
		else if (s->pids[i])
			alive = 1;
	}
	return !alive;
}

static void pack_commit(struct agg_shm *s, const struct agg_io *io);

void agg_shm_detach(struct agg_shm *s, const char *name, const struct agg_io *io)
{
	lock_robust(&s->lock, &s->takeovers);
	int last = last_one(s, (int32_t)getpid());
	if (last)
		s->removed = 1;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		agg_shm_drain_lock(s, 0);
		agg_shm_drain(s, io);
		pack_commit(s, io);
		agg_shm_drain_unlock(s);
		shm_unlink(name);
	}
	munmap(s, map_bytes(s));
}

int agg_shm_cleanup(const char *name, const struct agg_io *io)
{
	int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < hdr_bytes() + 8) {
		close(fd);
		return -EPROTO;
	}
	struct agg_shm *s = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED)
		return -errno;
	if (memcmp(s->magic, AGG_SHM_MAGIC, 8) || s->data_off + s->data_size > (uint64_t)st.st_size) {
		munmap(s, (size_t)st.st_size);
		return -EPROTO;
	}
	lock_robust(&s->lock, &s->takeovers);
	int last = last_one(s, 0);
	if (last)
		s->removed = 1;
	pthread_mutex_unlock(&s->lock);
	int left = 0;
	if (last) {
		agg_shm_drain_lock(s, 0);
		left = (int)(__atomic_load_n(&s->head, __ATOMIC_ACQUIRE) != s->tail);
		agg_shm_drain(s, io);
		pack_commit(s, io);
		agg_shm_drain_unlock(s);
		shm_unlink(name);
	}
	munmap(s, (size_t)st.st_size);
	return left;
}

int agg_shm_file(struct agg_shm *s, uint64_t dev, uint64_t ino, const char *path)
{
	lock_robust(&s->lock, &s->takeovers);
	int found = -1;
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (s->files[i].used && s->files[i].dev == dev && s->files[i].ino == ino) {
			found = (int)i;
			break;
		}
	if (found < 0 && s->nfiles < AGG_SHM_FILES) {
		found = (int)s->nfiles;
		struct agg_shm_file *f = &s->files[found];
		f->dev = dev;
		f->ino = ino;
		f->err = 0;
		f->pending = 0;
		init_mutex(&f->dlock);
		f->used = 1;
		__atomic_store_n(&s->nfiles, s->nfiles + 1, __ATOMIC_RELEASE);
	}
	if (found >= 0 && path) /* a rename moves the name: the latest wins */
		snprintf(s->files[found].path, AGG_SHM_PATH, "%s", path);
	pthread_mutex_unlock(&s->lock);
	return found;
}

static uint64_t ent_bytes(uint32_t len)
{
	return sizeof(struct agg_ent) + (((uint64_t)len + 7) & ~(uint64_t)7);
}

static struct agg_ent *ent_at(struct agg_shm *s, uint64_t pos)
{
	return (struct agg_ent *)((char *)s + s->data_off + pos % s->data_size);
}

/* Whether the bytes read at pos may belong to a newer entry. Space is reused only once the tail has
 * passed it, and a walk outside the ring's lock (a file's drain) may fall behind the tail that
 * another drain moves: so a header is trusted only if the tail, read after it, is still at or
 * before pos (x86 and the fence keep the two reads in that order). */
static int passed(struct agg_shm *s, uint64_t pos)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&s->tail, __ATOMIC_RELAXED) > pos;
}

/* The entry at *pos or after it, before end, with a copy of its header in *h taken while the tail
 * had not passed it: the ring's wrap gap (too short for an entry) and padding entries are stepped
 * over; a walk the tail has overtaken goes on from the tail (all before it is written back). NULL
 * when end is reached. */
static struct agg_ent *ring_next(struct agg_shm *s, uint64_t *pos, uint64_t end, struct agg_ent *h)
{
	while (*pos < end) {
		uint64_t rem = s->data_size - *pos % s->data_size;
		if (rem >= sizeof(struct agg_ent)) {
			struct agg_ent *e = ent_at(s, *pos);
			h->state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
			h->len = e->len, h->file = e->file, h->pid = e->pid;
			if (passed(s, *pos)) {
				*pos = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
				continue;
			}
			if (h->state != AGG_ENT_PAD)
				return e;
		}
		*pos += rem;
	}
	return NULL;
}

uint64_t agg_shm_used(const struct agg_shm *s)
{
	uint64_t t = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE), h = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	return h > t ? h - t : 0; /* a restart stores the tail first: empty in between */
}

struct agg_ent *agg_shm_reserve(struct agg_shm *s, uint32_t file, uint64_t off, uint32_t len)
{
	uint64_t need = ent_bytes(len);
	if (need > s->data_size / 4)
		return NULL;
	lock_robust(&s->lock, &s->takeovers);
	uint64_t head = s->head;
	if (s->tail > head) {
		/* a holder died between a restart's two stores (tail, then head): the ring is empty */
		head = s->tail;
		__atomic_store_n(&s->head, head, __ATOMIC_RELEASE);
	}
	if (head == s->tail && head % s->data_size) {
		/* empty: start again at the beginning, on pages this process has most likely mapped
		 * and the cache still holds, rather than going round the whole buffer */
		head += s->data_size - head % s->data_size;
		__atomic_store_n(&s->tail, head, __ATOMIC_RELEASE);
	}
	uint64_t rem = s->data_size - head % s->data_size;
	uint64_t pad = rem < need ? rem : 0;
	if (head + pad + need - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) > s->data_size) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	if (pad && pad >= sizeof(struct agg_ent)) {
		struct agg_ent *p = ent_at(s, head);
		p->len = (uint32_t)(pad - sizeof(struct agg_ent));
		p->pid = 0;
		__atomic_store_n(&p->state, AGG_ENT_PAD, __ATOMIC_RELEASE);
	}
	head += pad;
	struct agg_ent *e = ent_at(s, head);
	e->len = len;
	e->file = file;
	e->pid = (int32_t)getpid();
	e->off = off;
	e->marker = 0;
	e->mlen = 0;
	e->seq = ++s->seq;
	__atomic_store_n(&e->state, AGG_ENT_FILLING, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->files[file].pending, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->head, head + need, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	return e;
}

void agg_shm_publish(struct agg_shm *s, struct agg_ent *e)
{
	(void)s;
	__atomic_store_n(&e->state, AGG_ENT_READY, __ATOMIC_RELEASE);
}

int agg_shm_drain_lock(struct agg_shm *s, int try)
{
	int r = try ? pthread_mutex_trylock(&s->drain) : pthread_mutex_lock(&s->drain);
	if (r == EOWNERDEAD) {
		/* the previous flusher died mid-batch: the tail did not move, its batch is redone */
		pthread_mutex_consistent(&s->drain);
		__atomic_fetch_add(&s->takeovers, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return r == 0;
}

void agg_shm_drain_unlock(struct agg_shm *s)
{
	pthread_mutex_unlock(&s->drain);
}

/* Used by one thread per process at a time (the library's agg_mu; the CLI has one thread). */
static struct agg_ent *batch[AGG_BATCH];
static struct agg_ent *byfile[AGG_BATCH];
static struct iovec iov[AGG_IOV];

static void note_err(struct agg_shm *s, uint32_t f, int err)
{
	int32_t zero = 0;
	__atomic_compare_exchange_n(&s->files[f].err, &zero, err ? err : EIO, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void write_run(struct agg_shm *s, const struct agg_io *io, int fd, uint32_t f, struct agg_ent **v, int n)
{
	uint64_t off = v[0]->off, total = 0;
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = agg_ent_data(v[i]);
		iov[i].iov_len = v[i]->len;
		total += v[i]->len;
	}
	int k = 0;
	while (k < n) {
		ssize_t w = io->pwritev(s, f, fd, iov + k, n - k, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			note_err(s, f, errno);
			return;
		}
		__atomic_fetch_add(&s->drain_writes, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->drain_bytes, (uint64_t)w, __ATOMIC_RELAXED);
		off += (uint64_t)w;
		total -= (uint64_t)w;
		if (!total)
			return;
		if (w == 0) {
			note_err(s, f, ENOSPC);
			return;
		}
		while (k < n && (uint64_t)w >= iov[k].iov_len)
			w -= (ssize_t)iov[k++].iov_len;
		if (k < n) {
			iov[k].iov_base = (char *)iov[k].iov_base + w;
			iov[k].iov_len -= (size_t)w;
		}
	}
}

static int by_off(const void *a, const void *b)
{
	const struct agg_ent *x = *(struct agg_ent *const *)a, *y = *(struct agg_ent *const *)b;
	return x->off < y->off ? -1 : x->off > y->off ? 1 : x->seq < y->seq ? -1 : 1;
}

/* Entries of one file in ring order; when none overlaps another, sorted by offset so runs that
 * were interleaved with other tiers' writes become one pwritev. Overlapping ones keep ring order:
 * the later write must land last. */
static int nbatch;

static int pack_append(struct agg_shm *s, const struct agg_io *io, uint32_t f, struct agg_ent **v, int n,
		       int inplace);

static void write_file(struct agg_shm *s, const struct agg_io *io, uint32_t f, int n, int inplace)
{
	if (s->packed) {
		pack_append(s, io, f, batch, n, inplace);
		if (!inplace)
			return;
		/* written back in place too (a read needs the bytes there): markers recorded above */
		int k = 0;
		for (int i = 0; i < n; i++)
			if (!batch[i]->marker)
				byfile[k++] = batch[i];
		n = k;
		if (!n)
			return;
	}
	int own = 0;
	int fd = io->fd_for(s, f, &own);
	if (fd < 0) {
		note_err(s, f, errno);
		return;
	}
	qsort(byfile, (size_t)n, sizeof byfile[0], by_off);
	int overlap = 0;
	for (int i = 1; i < n && !overlap; i++)
		overlap = byfile[i]->off < byfile[i - 1]->off + byfile[i - 1]->len;
	if (overlap) { /* back to ring order */
		int k = 0;
		for (int i = 0; i < nbatch && k < n; i++)
			if (!batch[i]->marker)
				byfile[k++] = batch[i];
	}
	int start = 0;
	for (int i = 1; i <= n; i++) {
		if (i < n && i - start < AGG_IOV && byfile[i]->off == byfile[i - 1]->off + byfile[i - 1]->len)
			continue;
		write_run(s, io, fd, f, byfile + start, i - start);
		start = i;
	}
	if (!own)
		io->close(fd);
}

/* Entries at the tail that are written back (or padding) free their space. */
static void advance_tail(struct agg_shm *s)
{
	lock_robust(&s->lock, &s->takeovers);
	uint64_t pos = s->tail, head = s->head;
	struct agg_ent h;
	while (ring_next(s, &pos, head, &h) && h.state == AGG_ENT_DONE)
		pos += ent_bytes(h.len);
	__atomic_store_n(&s->tail, pos, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
}

static void finish_batch(struct agg_shm *s, const struct agg_io *io, uint32_t f, int n, int inplace)
{
	if (!n)
		return;
	nbatch = n;
	for (int i = 0; i < n; i++)
		byfile[i] = batch[i];
	write_file(s, io, f, n, inplace);
	/* DONE only once the whole batch is written: a flusher killed in between leaves every entry
	 * READY, and the next one rewrites the batch in ring order */
	for (int i = 0; i < n; i++)
		__atomic_store_n(&batch[i]->state, AGG_ENT_DONE, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&s->files[f].pending, n, __ATOMIC_RELEASE);
	if (io->stall)
		io->stall();
}

void agg_shm_drain_file(struct agg_shm *s, const struct agg_io *io, uint32_t f, int inplace)
{
	if (f >= AGG_SHM_FILES || !s->files[f].used)
		return;
	lock_robust(&s->files[f].dlock, &s->takeovers);
	uint64_t target = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	uint64_t pos = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	int n = 0;
	struct agg_ent *e, h;
	while ((e = ring_next(s, &pos, target, &h))) {
		if (h.file == f && h.state == AGG_ENT_FILLING) {
			uint32_t filling = AGG_ENT_FILLING;
			if (pid_dead(h.pid)) {
				/* its write() never returned: nothing the application was told is lost. Only
				 * if it is still FILLING: the writer may have published it just before it died,
				 * and the next look then takes it as READY. */
				if (__atomic_compare_exchange_n(&e->state, &filling, AGG_ENT_DONE, 0, __ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE)) {
					__atomic_fetch_add(&s->abandoned, 1, __ATOMIC_RELAXED);
					__atomic_fetch_sub(&s->files[f].pending, 1, __ATOMIC_RELEASE);
				}
				continue; /* pos unchanged: the entry is looked at again */
			} else {
				finish_batch(s, io, f, n, inplace); /* what is ready before it, then wait for the copy */
				n = 0;
				sched_yield();
				continue;
			}
		} else if (h.file == f && h.state == AGG_ENT_READY) {
			batch[n++] = e;
			if (n == AGG_BATCH) {
				finish_batch(s, io, f, n, inplace);
				n = 0;
			}
		}
		pos += ent_bytes(h.len);
	}
	finish_batch(s, io, f, n, inplace);
	pthread_mutex_unlock(&s->files[f].dlock);
	advance_tail(s);
}

void agg_shm_drain(struct agg_shm *s, const struct agg_io *io)
{
	__atomic_fetch_add(&s->drains, 1, __ATOMIC_RELAXED);
	uint32_t nf = __atomic_load_n(&s->nfiles, __ATOMIC_ACQUIRE);
	for (uint32_t f = 0; f < nf; f++)
		if (__atomic_load_n(&s->files[f].pending, __ATOMIC_ACQUIRE) > 0)
			agg_shm_drain_file(s, io, f, 0);
	advance_tail(s);
}

/* ---------- the packed placement ---------- */

static struct agg_pack_rec hdrs[AGG_BATCH + 1];
static const uint64_t zeros;

static int pack_write(struct agg_shm *s, const struct agg_io *io, int fd, struct iovec *v, int n)
{
	ssize_t want = 0;
	for (int i = 0; i < n; i++)
		want += (ssize_t)v[i].iov_len;
	ssize_t w = io->writev(fd, v, n);
	if (w == want) {
		__atomic_fetch_add(&s->drain_writes, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->drain_bytes, (uint64_t)w, __ATOMIC_RELAXED);
		return 0;
	}
	if (w >= 0)
		errno = ENOSPC;
	return -1;
}

/* One record per entry, appended with O_APPEND by whoever drains (one writev is one append, so
 * processes draining different files do not interleave inside a record). */
static int pack_append(struct agg_shm *s, const struct agg_io *io, uint32_t f, struct agg_ent **v, int n,
		       int inplace)
{
	int fd = io->open(s->pack_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		note_err(s, f, errno);
		return -1;
	}
	int k = 0, r = 0;
	if (!s->named[f]) {
		struct agg_pack_rec *h = &hdrs[AGG_BATCH];
		const char *p = s->files[f].path;
		*h = (struct agg_pack_rec){.kind = AGG_PACK_NAME, .file = f, .payload = (uint32_t)strlen(p),
					   .offset = s->files[f].dev, .length = s->files[f].ino};
		agg_pack_seal(h, p);
		struct iovec nv[3] = {{h, sizeof *h}, {(void *)p, h->payload},
				      {(void *)&zeros, agg_pack_pad(h->payload) - h->payload}};
		if (pack_write(s, io, fd, nv, 3) < 0) {
			note_err(s, f, errno);
			io->close(fd);
			return -1;
		}
		s->named[f] = 1;
	}
	for (int i = 0; i < n && r == 0; i++) {
		struct agg_ent *e = v[i];
		struct agg_pack_rec *h = &hdrs[i];
		int chunk = !e->marker && !inplace;
		*h = (struct agg_pack_rec){.kind = e->marker ? AGG_PACK_DIRECT : inplace ? AGG_PACK_INPLACE : AGG_PACK_CHUNK,
					   .file = f, .payload = chunk ? e->len : 0, .offset = e->off,
					   .length = e->marker ? e->mlen : e->len, .seq = e->seq};
		agg_pack_seal(h, agg_ent_data(e));
		iov[k].iov_base = h;
		iov[k++].iov_len = sizeof *h;
		if (chunk) {
			iov[k].iov_base = agg_ent_data(e);
			iov[k++].iov_len = e->len;
			if (agg_pack_pad(e->len) != e->len) {
				iov[k].iov_base = (void *)&zeros;
				iov[k++].iov_len = agg_pack_pad(e->len) - e->len;
			}
		}
		if (k > AGG_IOV - 3 || i == n - 1) {
			r = pack_write(s, io, fd, iov, k);
			k = 0;
		}
	}
	if (r < 0)
		note_err(s, f, errno);
	io->close(fd);
	return r;
}

int agg_shm_mark_direct(struct agg_shm *s, uint32_t i, uint64_t off, uint64_t len)
{
	struct agg_ent *e = agg_shm_reserve(s, i, off, 0);
	if (!e)
		return -1;
	e->marker = AGG_PACK_DIRECT;
	e->mlen = len;
	agg_shm_publish(s, e);
	return 0;
}

int agg_shm_pack_sync(struct agg_shm *s, const struct agg_io *io)
{
	int fd = io->open(s->pack_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = io->fsync(fd);
	io->close(fd);
	return r;
}

void agg_shm_pack_name(struct agg_shm *s, const struct agg_io *io, uint32_t i)
{
	if (!s->packed || i >= AGG_SHM_FILES)
		return;
	lock_robust(&s->files[i].dlock, &s->takeovers);
	s->named[i] = 0;
	pack_append(s, io, i, NULL, 0, 0);
	pthread_mutex_unlock(&s->files[i].dlock);
}

/* The end of the ring's segment: an index of every record since seg_start, then the commit
 * marker; a pack without it was torn (its writers died before the job ended). */
static void pack_commit(struct agg_shm *s, const struct agg_io *io)
{
	if (!s->packed)
		return;
	int fd = io->open(s->pack_path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	uint64_t pos = s->seg_start, n = 0, cap = 0;
	uint64_t *list = NULL;
	struct agg_pack_rec h;
	while (io->pread(fd, &h, sizeof h, (off_t)pos) == (ssize_t)sizeof h && h.magic == AGG_PACK_REC_MAGIC) {
		if (n == cap) {
			uint64_t ncap = cap ? 2 * cap : 4096;
			uint64_t *nl = mmap(NULL, ncap * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (nl == MAP_FAILED)
				break;
			if (list) {
				memcpy(nl, list, n * 8);
				munmap(list, cap * 8);
			}
			list = nl, cap = ncap;
		}
		list[n++] = pos;
		pos += sizeof h + agg_pack_pad(h.payload);
	}
	struct agg_pack_rec ix = {.kind = AGG_PACK_INDEX, .payload = (uint32_t)(n * 8), .offset = n};
	agg_pack_seal(&ix, list);
	struct agg_pack_rec cm = {.kind = AGG_PACK_COMMIT, .offset = pos};
	agg_pack_seal(&cm, NULL);
	struct iovec v[3] = {{&ix, sizeof ix}, {list, n * 8}, {&cm, sizeof cm}};
	if (io->writev(fd, v, 3) >= 0)
		io->fsync(fd);
	io->close(fd);
	if (list)
		munmap(list, cap * 8);
	s->packed = 2; /* committed */
}

/* ---------- the specification ---------- */

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	uint64_t m = 1;
	if (*end == 'K' || *end == 'k')
		m = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		m = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		m = 1024ull * 1024 * 1024, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v * m;
	return 0;
}

int agg_spec_parse(const char *spec, struct agg_spec *out, char *why, size_t wlen)
{
	memset(out, 0, sizeof *out);
	out->small = 512;
	out->threshold = 64 * 1024;
	out->buffer = 32 * 1024 * 1024;
	const char *colon = strchr(spec, ':');
	size_t plen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (!plen || plen >= sizeof out->pattern) {
		snprintf(why, wlen, "no pattern");
		return -1;
	}
	memcpy(out->pattern, spec, plen);
	out->pattern[plen] = 0;
	char opts[2048];
	snprintf(opts, sizeof opts, "%s", colon ? colon + 1 : "");
	char *save = NULL;
	for (char *tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;
		if (eq && !strncmp(tok, "placement=", 10) && (!strcmp(eq + 1, "packed") || !strcmp(eq + 1, "inplace"))) {
			out->packed = !strcmp(eq + 1, "packed");
			continue;
		}
		if (eq && !strncmp(tok, "when=", 5) &&
		    (!strcmp(eq + 1, "auto") || !strcmp(eq + 1, "measure") || !strcmp(eq + 1, "always"))) {
			out->when = !strcmp(eq + 1, "auto") ? AGG_WHEN_AUTO
				    : !strcmp(eq + 1, "measure") ? AGG_WHEN_MEASURE : AGG_WHEN_ALWAYS;
			continue;
		}
		if (eq && !strncmp(tok, "packdir=", 8) && eq[1] == '/') {
			snprintf(out->packdir, sizeof out->packdir, "%s", eq + 1);
			continue;
		}
		if (!eq || parse_size(eq + 1, &v) < 0) {
			snprintf(why, wlen, "'%s' is not KEY=SIZE (or placement=packed|inplace, packdir=/DIR, when=auto|measure|always)", tok);
			return -1;
		}
		*eq = 0;
		if (!strcmp(tok, "threshold"))
			out->threshold = v;
		else if (!strcmp(tok, "small"))
			out->small = v;
		else if (!strcmp(tok, "buffer"))
			out->buffer = v;
		else {
			snprintf(why, wlen, "unknown option '%s' (threshold, small, buffer)", tok);
			return -1;
		}
	}
	if (out->small > out->threshold || out->threshold > (64u << 20) || out->small > (1u << 20)) {
		snprintf(why, wlen, "want small <= threshold <= 64M and small <= 1M");
		return -1;
	}
	if (out->buffer < 4 * (out->threshold > out->small * AGG_SHM_SMALL_SLOTS ? out->threshold : out->small * AGG_SHM_SMALL_SLOTS) + 4096 ||
	    out->buffer > (16ull << 30)) {
		snprintf(why, wlen, "buffer must hold 4 entries of the threshold (and of the small buffer), up to 16G");
		return -1;
	}
	return 0;
}

