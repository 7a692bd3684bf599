/* SPDX-License-Identifier: MIT */
/*
 * Reading users' logs as root (source.h): the checks before the one reader sees the bytes.
 */
#include "daemon/source.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "iostrata/format.h"

/* 1 when the daemon runs as root (asked once: geteuid is a system call, two a file read) */
static int as_root(void)
{
	static int root = -1;
	if (root < 0)
		root = geteuid() == 0;
	return root;
}

void dmn_fs_as(uid_t uid, gid_t gid)
{
	if (!as_root())
		return;
	setfsgid(gid);
	setfsuid(uid);
}

void dmn_fs_as_self(void)
{
	if (!as_root())
		return;
	setfsuid(0);
	setfsgid(0);
}

int dmn_open_dir(int parent, const char *name, uid_t want_uid, struct stat *st, char *err, size_t errlen)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", name, e == ELOOP || e == ENOTDIR ? "not a directory (a symlink?)" : strerror(e));
		return -e;
	}
	if (fstat(fd, st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", name, strerror(e));
		close(fd);
		return -e;
	}
	if (want_uid != (uid_t)-1 && st->st_uid != want_uid) {
		snprintf(err, errlen, "%s: owned by uid %u, not uid %u: skipped", name, (unsigned)st->st_uid,
			 (unsigned)want_uid);
		close(fd);
		return -EPERM;
	}
	if (want_uid != (uid_t)-1 && (st->st_mode & 022)) {
		snprintf(err, errlen, "%s: writable by others (mode %03o): skipped", name, (unsigned)(st->st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

int dmn_pread(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ESTALE;
		got += (size_t)k;
	}
	return 0;
}

/* The regular file name in dirfd owned by uid, opened without following links. */
static int open_owned(int dirfd, const char *name, uid_t uid, struct stat *st, char *err, size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			snprintf(err, errlen, "%s: a symbolic link, not a log: skipped", name);
		else
			snprintf(err, errlen, "%s: %s", name, strerror(e));
		return -e;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: not a regular file: skipped", name);
		close(fd);
		return -EINVAL;
	}
	if (st->st_uid != uid) {
		snprintf(err, errlen, "%s: owned by uid %u in a directory of uid %u: skipped", name,
			 (unsigned)st->st_uid, (unsigned)uid);
		close(fd);
		return -EPERM;
	}
	return fd;
}

static const struct log_section *find_section(const struct log_header *h, uint32_t kind)
{
	for (unsigned i = 0; i < h->nsections && i < LOG_MAX_SECTIONS; i++)
		if (h->sections[i].kind == kind)
			return &h->sections[i];
	return NULL;
}

/* ---------- mapped live files (the per-second path) ---------- */

/* The thread inside dmn_live_sum: where to unwind to, and the mapping it reads. Thread-local
 * (initial-exec in the executable): safe to read in a signal handler. */
static __thread sigjmp_buf *guard_jmp;
static __thread const struct dmn_live_map *guard_map;
static long page_size; /* set by the first mapping */

static int in_map(const struct dmn_live_map *m, const void *addr)
{
	uintptr_t a = (uintptr_t)addr, h = (uintptr_t)m->hdr, r = (uintptr_t)m->rec_map, t = (uintptr_t)m->tot_map;
	return (a - h < LOG_HEADER_SIZE) || (m->rec_map && a - r < m->rec_map_len) ||
	       (m->tot_map && a - t < m->tot_map_len);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	sigjmp_buf *j = guard_jmp;
	if (j && guard_map && in_map(guard_map, si->si_addr))
		siglongjmp(*j, 1);
	/* not ours: what SIGBUS would have done without this handler */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Once per process. SA_NODEFER: the unwinding skips the sigreturn that would unblock SIGBUS, and
 * sigsetjmp without the mask then costs no system call per file. */
static int guard_install(void)
{
	static int done;
	if (done)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	done = 1;
	return 0;
}

void dmn_live_unmap(struct dmn_live_map *m)
{
	dmn_live_drop_flush();
	if (m->hdr)
		munmap((void *)m->hdr, LOG_HEADER_SIZE);
	if (m->rec_map)
		munmap(m->rec_map, m->rec_map_len);
	if (m->tot_map)
		munmap(m->tot_map, m->tot_map_len);
	dmn_live_close_fd(m);
	free(m->memo);
	free(m->strs);
	memset(m, 0, sizeof *m);
}

static size_t kept_fds, kept_fds_max = 256;

void dmn_live_set_fd_max(size_t max)
{
	kept_fds_max = max;
}

void dmn_live_close_fd(struct dmn_live_map *m)
{
	if (m->has_fd) {
		close(m->fd);
		kept_fds--;
	}
	m->has_fd = 0;
	m->fd = -1;
}

int dmn_log_user_only(const struct log_file *lf)
{
	for (uint32_t i = 0; i < lf->nrecords; i++) {
		const struct log_record *r = &lf->records[i];
		if (r->flags & LOG_R_DEAD)
			continue;
		/* (a record being made, not in use yet, may be of any layer: its records then) */
		if (!(r->flags & LOG_R_USED) || (r->layer != LOG_LAYER_POSIX && r->layer != LOG_LAYER_STDIO))
			return 0;
	}
	return 1;
}

/* The slots a header says are claimed, as far as the section mapped goes. */
static uint64_t slots_claimed(const struct dmn_live_map *m, uint64_t claimed)
{
	return claimed < m->tot_count ? claimed : m->tot_count;
}

int dmn_live_stale(const struct dmn_live_map *m, const struct log_header *h, const struct log_file *lf)
{
	if (h->nrecords > m->rec_cap)
		return 1;
	return m->tot && (slots_claimed(m, h->totals_claimed) > m->tot_n || !dmn_log_user_only(lf));
}

void dmn_live_forget(struct dmn_live_map *m)
{
	if (m->memo)
		m->memo->fast = 0;
}

/* Maps fd's header page and the records h (checked by the caller against the file) places, as
 * many as the header's capacity, the limit and the file's size allow: 0 or -errno. Two mappings,
 * not one across the strings: only the pages read are ever the daemon's. */
/* The TOTALS section's slots claimed (at least one), to the end of their last page, mapped: 0, 1
 * when the file has no section fit for it (its records are mapped then), or -errno. */
static int totals_map(struct dmn_live_map *m, int fd, uint64_t fsize, const struct log_header *h, long pg)
{
	const struct log_section *ts = find_section(h, LOG_SEC_TOTALS);
	const uint64_t ss = sizeof(struct log_totals_slot);
	if (!ts || h->totals_slot_size != ss || ts->count == 0 || ts->count > LOG_TOTALS_SLOTS ||
	    ts->offset < LOG_HEADER_SIZE || ts->offset > fsize || ts->count * ss > fsize - ts->offset ||
	    ts->size < ts->count * ss)
		return 1;
	uint64_t want = h->totals_claimed < ts->count ? h->totals_claimed : ts->count;
	if (want == 0)
		want = 1;
	uint64_t base = ts->offset & ~(uint64_t)(pg - 1), head = ts->offset - base;
	uint64_t len = (head + want * ss + (uint64_t)pg - 1) & ~(uint64_t)(pg - 1);
	if (len > head + ts->count * ss)
		len = head + ts->count * ss;
	void *tm = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)base);
	if (tm == MAP_FAILED)
		return -errno;
	m->tot_map = tm;
	m->tot_map_len = (size_t)len;
	m->tot = (const struct log_totals_slot *)(const void *)((unsigned char *)tm + head);
	m->tot_n = (uint32_t)((len - head) / ss);
	m->tot_count = (uint32_t)ts->count;
	return 0;
}

static int live_map(struct dmn_live_map *m, int fd, const struct stat *st, const struct log_header *h,
		    const struct log_section *rs, const struct dmn_limits *lim, int user_only)
{
	uint64_t fsize = (uint64_t)st->st_size, cap = h->max_records;
	long pg = page_size ? page_size : (page_size = sysconf(_SC_PAGESIZE));
	memset(m, 0, sizeof *m);
	m->fd = -1;
	if (pg <= 0 || guard_install() < 0 || rs->offset > fsize)
		return -EINVAL;
	if (cap > rs->count)
		cap = rs->count;
	if (cap > lim->max_records)
		cap = lim->max_records;
	if (cap > (fsize - rs->offset) / sizeof(struct log_record))
		cap = (fsize - rs->offset) / sizeof(struct log_record);
	/* the records in use, to the end of their last page: a fault maps its neighbours present in
	 * the file too, and only those within the mapping (a file with more records later is mapped
	 * again, after the full reading that takes them) */
	m->rec_lim = (uint32_t)cap;
	int r = user_only ? totals_map(m, fd, fsize, h, pg) : 1;
	if (r < 0)
		return r;
	void *hm = mmap(NULL, LOG_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (hm == MAP_FAILED) {
		int e = -errno;
		dmn_live_unmap(m);
		return e;
	}
	m->hdr = hm;
	/* (r == 0: the slots summed, not the records: as many records as the file may hold) */
	if (r == 1) {
		uint64_t base = rs->offset & ~(uint64_t)(pg - 1), head = rs->offset - base;
		uint64_t used = h->nrecords < cap ? h->nrecords : cap;
		uint64_t upto = (head + used * sizeof(struct log_record) + (uint64_t)pg - 1) & ~(uint64_t)(pg - 1);
		if (cap > (upto - head) / sizeof(struct log_record))
			cap = (upto - head) / sizeof(struct log_record);
		uint64_t len = head + cap * sizeof(struct log_record);
		if (cap) {
			void *rm = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)base);
			if (rm == MAP_FAILED) {
				int e = -errno;
				dmn_live_unmap(m);
				return e;
			}
			m->rec_map = rm;
			m->rec_map_len = (size_t)len;
			m->rec = (const struct log_record *)(const void *)((unsigned char *)rm + head);
		}
	}
	m->rec_cap = (uint32_t)cap;
	m->pid = h->pid;
	m->start_ns = h->start_ns;
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	return 0;
}

/* The layer a record is summed into (those the reader would take: in use, not dead, of a known
 * layer, counted in the layers' totals), 0 when none: the flags first, as the reader takes them
 * (a record being made is skipped). */
static unsigned summed_layer(const struct log_record *r)
{
	uint16_t flags = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
	unsigned layer = r->layer;
	if (!(flags & LOG_R_USED) || (flags & LOG_R_DEAD) || layer < 1 || layer > LOG_LAYER_MAX ||
	    !ana_record_in_layer_totals(r))
		return 0;
	return layer;
}

static int user_layer(unsigned layer)
{
	return layer == LOG_LAYER_POSIX || layer == LOG_LAYER_STDIO;
}

/* Every record summed from the start (as dmn_ahead_add_log sums it), and the memo (when there is
 * one) made again from what was read: per direction the largest bucket is the one watched. */
static void sum_records(const struct log_record *rec, uint32_t n, struct dmn_live_sums *out, struct dmn_live_memo *mm)
{
	int fast = 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct log_record *r = &rec[i];
		unsigned layer = summed_layer(r);
		if (mm)
			mm->r[i].layer = (uint16_t)layer;
		if (!layer)
			continue;
		struct dmn_ahead *a = &out->layer[layer];
		if (!a->layer) {
			memset(a, 0, sizeof *a);
			a->layer = (uint16_t)layer;
		}
		if (!mm) {
			dmn_ahead_add_log(a, r);
			continue;
		}
		fast &= user_layer(layer);
		dmn_ahead_add_counts(a, r);
		struct dmn_live_rmemo *rm = &mm->r[i];
		for (int d = 0; d < 2; d++) {
			/* (the user layers' empty direction is not read: dmn_ahead_add_log) */
			uint64_t c = r->counters[d ? LOG_C_WRITES : LOG_C_READS];
			const uint64_t *hist = d ? r->write_hist : r->read_hist;
			uint64_t *sum = d ? a->wh : a->rh;
			rm->calls[d] = c;
			rm->bucket[d] = 0;
			rm->val[d] = 0;
			if (user_layer(layer) && !c)
				continue;
			for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
				uint64_t v = hist[b];
				sum[b] += v;
				if (v > rm->val[d]) {
					rm->val[d] = v;
					rm->bucket[d] = (uint8_t)b;
				}
			}
		}
	}
	if (!mm)
		return;
	mm->n = n;
	mm->fast = fast;
	for (int i = 0; i < 2; i++) {
		unsigned l = i ? LOG_LAYER_STDIO : LOG_LAYER_POSIX;
		mm->h[i].layer = out->layer[l].layer;
		if (out->layer[l].layer) {
			memcpy(mm->h[i].rh, out->layer[l].rh, sizeof mm->h[i].rh);
			memcpy(mm->h[i].wh, out->layer[l].wh, sizeof mm->h[i].wh);
		}
	}
}

/* The records summed by the memo (struct dmn_live_memo): 0, or 1 when it cannot say (sum from
 * the start; out and the memo are then made again whole). */
static int sum_by_memo(const struct log_record *rec, uint32_t n, struct dmn_live_sums *out, struct dmn_live_memo *mm)
{
	if (!mm->fast || mm->n != n)
		return 1;
	for (int i = 0; i < 2; i++)
		if (mm->h[i].layer) {
			struct dmn_ahead *a = &out->layer[mm->h[i].layer];
			memset(a->v, 0, sizeof a->v);
			a->layer = mm->h[i].layer;
			memcpy(a->rh, mm->h[i].rh, sizeof a->rh);
			memcpy(a->wh, mm->h[i].wh, sizeof a->wh);
		}
	for (uint32_t i = 0; i < n; i++) {
		const struct log_record *r = &rec[i];
		struct dmn_live_rmemo *rm = &mm->r[i];
		unsigned layer = summed_layer(r);
		if (layer != rm->layer)
			return 1; /* (a record made, dead or of another layer since) */
		if (!layer)
			continue;
		struct dmn_ahead *a = &out->layer[layer];
		dmn_ahead_add_counts(a, r);
		for (int d = 0; d < 2; d++) {
			uint64_t c = r->counters[d ? LOG_C_WRITES : LOG_C_READS];
			if (c == rm->calls[d])
				continue; /* no call: its histogram did not move */
			if (c < rm->calls[d] || !rm->calls[d])
				return 1; /* went back, or no bucket watched yet */
			uint64_t v = (d ? r->write_hist : r->read_hist)[rm->bucket[d]];
			if (v < rm->val[d] || v - rm->val[d] != c - rm->calls[d])
				return 1; /* another bucket moved too */
			(d ? a->wh : a->rh)[rm->bucket[d]] += v - rm->val[d];
			rm->calls[d] = c;
			rm->val[d] = v;
		}
	}
	for (int i = 0; i < 2; i++)
		if (mm->h[i].layer) {
			const struct dmn_ahead *a = &out->layer[mm->h[i].layer];
			memcpy(mm->h[i].rh, a->rh, sizeof a->rh);
			memcpy(mm->h[i].wh, a->wh, sizeof a->wh);
		}
	return 0;
}

/* The slots claimed summed per user layer (both layers read: the capture library makes a record
 * of each first, its catch-alls, so a full reading has both too). 1 when a slot lies beyond the
 * mapping (a thread started since: the next full reading maps it again). */
static int sum_slots(const struct dmn_live_map *m, const struct log_header *h, struct dmn_live_sums *out)
{
	uint64_t k = slots_claimed(m, __atomic_load_n(&h->totals_claimed, __ATOMIC_RELAXED));
	if (k > m->tot_n)
		return 1;
	for (int l = 0; l < 2; l++) {
		struct dmn_ahead *a = &out->layer[l ? LOG_LAYER_STDIO : LOG_LAYER_POSIX];
		memset(a, 0, sizeof *a);
		a->layer = l ? LOG_LAYER_STDIO : LOG_LAYER_POSIX;
		for (uint64_t i = 0; i < k; i++) {
			const struct log_totals_layer *t = &m->tot[i].layer[l];
			uint64_t reads = t->reads, writes = t->writes;
			a->v[DMN_A_READS] += reads;
			a->v[DMN_A_WRITES] += writes;
			a->v[DMN_A_BYTES_READ] += t->bytes_read;
			a->v[DMN_A_BYTES_WRITTEN] += t->bytes_written;
			a->v[DMN_A_META] += t->meta;
			/* (a direction without a call has an empty histogram: its lines are not read) */
			if (reads)
				for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
					a->rh[b] += t->read_hist[b];
			if (writes)
				for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
					a->wh[b] += t->write_hist[b];
		}
	}
	return 0;
}

/* A signature of the header's fields in use, read word by word from the mapping (inside the
 * guard): two readings with the same one saw the same counts, sections, clock pairs and end
 * (the statistics of a file whose slots and header did not move: docs/DAEMON.md). */
static uint64_t header_sig(const struct log_header *h)
{
	const uint64_t *w = (const uint64_t *)(const void *)h;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < offsetof(struct log_header, reserved) / 8; i++) {
		s ^= __atomic_load_n(&w[i], __ATOMIC_RELAXED) + i;
		s *= 0xff51afd7ed558ccdull;
		s ^= s >> 32;
	}
	return s;
}

/* The summing itself: every access to the mapping is here, inside the guard. Not inlined, so
 * that nothing it computes lives in registers the unwinding would lose. */
__attribute__((noinline)) static int live_sum(struct dmn_live_map *m, struct dmn_live_sums *out)
{
	const struct log_header *h = (const struct log_header *)(const void *)m->hdr;
	if (memcmp(h->magic, LOG_MAGIC, 8) || h->record_size != sizeof(struct log_record) ||
	    __atomic_load_n(&h->pid, __ATOMIC_RELAXED) != m->pid ||
	    __atomic_load_n(&h->start_ns, __ATOMIC_RELAXED) != m->start_ns)
		return -ESTALE;
	out->end_ns = __atomic_load_n(&h->end_ns, __ATOMIC_RELAXED);
	out->rank = __atomic_load_n(&h->rank, __ATOMIC_RELAXED);
	uint32_t n = __atomic_load_n(&h->nrecords, __ATOMIC_ACQUIRE);
	if (n > m->rec_lim)
		n = m->rec_lim;
	if (n > m->rec_seen) /* (rec_seen <= rec_cap <= rec_lim) */
		return 1;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		out->layer[l].layer = 0;
	if (out->want_sig)
		out->sig = header_sig(h);
	if (m->tot)
		return sum_slots(m, h, out);
	if (m->memo && sum_by_memo(m->rec, n, out, m->memo) == 0)
		return 0;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		out->layer[l].layer = 0;
	sum_records(m->rec, n, out, m->memo);
	return 0;
}

/* fn(m, arg) run inside the SIGBUS guard of m's mapping: its result, or -EFAULT when the file was
 * cut under it (fn is not inlined, so that nothing it computes lives in registers the unwinding
 * would lose). */
static int guarded(struct dmn_live_map *m, int (*fn)(struct dmn_live_map *m, void *arg), void *arg)
{
	sigjmp_buf jb;
	if (sigsetjmp(jb, 0)) {
		guard_jmp = NULL;
		guard_map = NULL;
		return -EFAULT;
	}
	guard_map = m;
	guard_jmp = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int r = fn(m, arg);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	guard_jmp = NULL;
	guard_map = NULL;
	return r;
}

static int live_sum_fn(struct dmn_live_map *m, void *out)
{
	return live_sum(m, out);
}

int dmn_live_sum(struct dmn_live_map *m, struct dmn_live_sums *out)
{
	if (!m->hdr)
		return -ESTALE;
	/* (out of memory: every summing from the start) */
	if (!m->tot && !m->memo && (m->memo = malloc(sizeof *m->memo + (size_t)m->rec_cap * sizeof m->memo->r[0])))
		m->memo->fast = 0;
	return guarded(m, live_sum_fn, out);
}

void dmn_live_prefetch(const struct dmn_live_map *m)
{
	/* the header's lines live_sum reads (magic, sizes and counts; pid; start, end and rank;
	 * slots claimed), and the first slot's POSIX counts, write histogram and stdio counts: on
	 * bench/daemon's load a third of the summing waited on the header's first line, a quarter
	 * on the slot's (docs/BENCHMARKS.md, "dmn18"). A write-only thread reads no read histogram */
	static const size_t hdr_at[] = {0, offsetof(struct log_header, pid), offsetof(struct log_header, start_ns),
					offsetof(struct log_header, totals_claimed)};
	if (!m->hdr)
		return;
	for (size_t i = 0; i < sizeof hdr_at / sizeof hdr_at[0]; i++)
		__builtin_prefetch(m->hdr + hdr_at[i]);
	if (!m->tot || !m->tot_n)
		return;
	const struct log_totals_slot *s = m->tot;
	__builtin_prefetch(&s->layer[0].reads);
	for (size_t b = 0; b < LOG_HIST_BUCKETS; b += 8)
		__builtin_prefetch(&s->layer[0].write_hist[b]);
	__builtin_prefetch(&s->layer[1].reads);
}

size_t dmn_live_pages(const struct dmn_live_map *m)
{
	long pg = page_size > 0 ? page_size : 4096;
	return m->rec_map ? (m->rec_map_len + (size_t)pg - 1) / (size_t)pg : 0;
}

/*
 * Drops go by DROP_BATCH at a time in one process_madvise of the daemon itself (Linux 6.13 and
 * later take every advice for the caller's own pidfd, and flush the TLB once for the lot), not
 * one madvise a file: 700 system calls and TLB flushes a second in bench/daemon. Where the kernel
 * refuses it, one madvise a file as before. A mapping waiting in the batch is dropped before it is
 * unmapped (its address could be another mapping's by the time the batch went: MADV_DONTNEED on
 * private memory would empty it); the batch bounds what waits to DROP_BATCH files' pages.
 */
#define DROP_BATCH 16
static struct iovec drops[DROP_BATCH];
static size_t ndrops;
static int drop_pidfd = -2; /* -2: not opened yet; -1: no batching (one madvise a file) */

void dmn_live_drop_flush(void)
{
	if (!ndrops)
		return;
	size_t total = 0;
	for (size_t i = 0; i < ndrops; i++)
		total += drops[i].iov_len;
	if (drop_pidfd >= 0 &&
	    syscall(SYS_process_madvise, drop_pidfd, drops, ndrops, MADV_DONTNEED, 0) != (long)total) {
		/* refused (or cut short): one madvise a file from now on, these too (dropping a
		 * page twice is harmless) */
		close(drop_pidfd);
		drop_pidfd = -1;
	}
	if (drop_pidfd < 0)
		for (size_t i = 0; i < ndrops; i++)
			madvise(drops[i].iov_base, drops[i].iov_len, MADV_DONTNEED);
	ndrops = 0;
}

void dmn_live_drop(const struct dmn_live_map *m)
{
	/* (the whole mapping: a fault maps its neighbours too) */
	if (!m->rec_map)
		return;
	if (drop_pidfd == -2) {
		drop_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		if (drop_pidfd < 0)
			drop_pidfd = -1;
	}
	if (drop_pidfd < 0) {
		madvise(m->rec_map, m->rec_map_len, MADV_DONTNEED);
		return;
	}
	drops[ndrops].iov_base = m->rec_map;
	drops[ndrops].iov_len = m->rec_map_len;
	if (++ndrops == DROP_BATCH)
		dmn_live_drop_flush();
}

/* What both full readings hand to the log reader: a buffer of the header and the strings in use
 * (padded to 64 bytes: *roff bytes in all), and the records in use apart, in an array of their
 * own that the log_file keeps (log_file_parse_own_records): read straight into it, never copied
 * again (docs/BENCHMARKS.md, "dmn16"). */
static void used_layout(uint64_t sused, uint64_t *soff, uint64_t *roff)
{
	*soff = LOG_HEADER_SIZE;
	*roff = *soff + ((sused + 63) & ~63ull);
}

/* The two buffers for sused string bytes and nrec records: every byte is written by the reading
 * (the header by parse_used, the strings and records by the copies) but the strings' padding,
 * zeroed here. Not calloc: zeroing the 47 KB a file of 23 records takes before it is overwritten
 * was a memset of every file's records at each statistics (docs/BENCHMARKS.md, "Daemon"). */
static int used_alloc(uint64_t sused, uint64_t nrec, unsigned char **buf, struct log_record **recs)
{
	uint64_t soff, roff;
	used_layout(sused, &soff, &roff);
	*buf = malloc(roff);
	*recs = malloc(nrec ? nrec * sizeof(struct log_record) : 1);
	if (!*buf || !*recs) {
		free(*buf);
		free(*recs);
		*buf = NULL;
		*recs = NULL;
		return -ENOMEM;
	}
	memset(*buf + soff + sused, 0, roff - soff - sused);
	return 0;
}

/* buf and recs (from used_alloc) parsed with a header h that says just what they hold; recs is
 * the log_file's on success, freed here on failure. */
static int parse_used(const struct log_header *h, unsigned char *buf, struct log_record *recs, uint64_t sused,
		      uint64_t nrec, const char *name, struct log_file *out, char *err, size_t errlen)
{
	uint64_t soff, roff;
	used_layout(sused, &soff, &roff);
	/* (the copy in buf changed in place: h is the caller's, unchanged) */
	struct log_header *bh = memcpy(buf, h, sizeof *h);
	bh->nsections = 2;
	memset(bh->sections, 0, sizeof bh->sections);
	bh->sections[0] = (struct log_section){LOG_SEC_STRINGS, 0, soff, sused, sused};
	bh->sections[1] = (struct log_section){LOG_SEC_RECORDS, 0, roff, nrec * sizeof(struct log_record), nrec};
	bh->nrecords = (uint32_t)nrec;
	bh->string_used = (uint32_t)sused;
	int r = log_file_parse_own_records(buf, roff, recs, nrec, name, out, err, errlen);
	if (r < 0)
		free(recs);
	return r;
}

/* The header and records copied from the mapping, inside the guard as live_sum reads (not
 * inlined for the same reason). 0, 1 (read it from the file) or -ESTALE; *n the records copied. */
__attribute__((noinline)) static int live_copy(const struct dmn_live_map *m, int want_trace, struct log_header *h,
					       unsigned char *recs, uint32_t *n)
{
	memcpy(h, m->hdr, sizeof *h);
	if (memcmp(h->magic, LOG_MAGIC, 8) || h->version != LOG_VERSION || h->header_size != LOG_HEADER_SIZE ||
	    h->record_size != sizeof(struct log_record) || h->endian != LOG_ENDIAN_MARK ||
	    h->nsections > LOG_MAX_SECTIONS || h->pid != m->pid || h->start_ns != m->start_ns)
		return -ESTALE;
	const struct log_section *ss = find_section(h, LOG_SEC_STRINGS), *rs = find_section(h, LOG_SEC_RECORDS);
	if (!ss || !rs || ss->offset != m->ss_off || rs->offset != m->rs_off)
		return -ESTALE;
	if (h->end_ns || h->string_used != m->nstrs || (want_trace && h->trace_blocks))
		return 1;
	uint32_t k = h->nrecords;
	if (k > m->rec_lim)
		k = m->rec_lim;
	if (k > m->rec_seen)
		return 1;
	/* (acquire: a record handed out before nrecords moved is whole) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(recs, m->rec, (size_t)k * sizeof(struct log_record));
	*n = k;
	return 0;
}

int dmn_live_keep_strings(struct dmn_live_map *m, const struct log_file *lf)
{
	if (m->strs && m->nstrs == lf->strings_size)
		return 0; /* (strings are only ever added) */
	free(m->strs);
	m->nstrs = 0;
	if (!(m->strs = malloc(lf->strings_size ? lf->strings_size : 1)))
		return -ENOMEM;
	memcpy(m->strs, lf->strings, lf->strings_size);
	m->nstrs = (uint32_t)lf->strings_size;
	return 0;
}

int dmn_live_read(struct dmn_live_map *m, const char *name, int want_trace, struct log_file *out, char *err,
		  size_t errlen)
{
	sigjmp_buf jb;
	memset(out, 0, sizeof *out);
	if (!m->hdr || !m->strs || !m->rec_map)
		return 1;
	uint64_t soff, roff;
	used_layout(m->nstrs, &soff, &roff);
	unsigned char *buf;
	struct log_record *recs;
	if (used_alloc(m->nstrs, m->rec_seen, &buf, &recs) < 0) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	struct log_header h;
	uint32_t n = 0;
	if (sigsetjmp(jb, 0)) {
		guard_jmp = NULL;
		guard_map = NULL;
		free(buf);
		free(recs);
		return -EFAULT;
	}
	guard_map = m;
	guard_jmp = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int r = live_copy(m, want_trace, &h, (unsigned char *)recs, &n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	guard_jmp = NULL;
	guard_map = NULL;
	if (r == 0) {
		memcpy(buf + soff, m->strs, m->nstrs);
		r = parse_used(&h, buf, recs, m->nstrs, n, name, out, err, errlen);
	} else {
		free(recs);
	}
	free(buf);
	return r;
}

/* The header copied from a mapping, inside the guard as live_sum reads: 0, or -EFAULT when the
 * file was cut under it. */
__attribute__((noinline)) static int header_copy_fn(struct dmn_live_map *m, void *h)
{
	memcpy(h, m->hdr, sizeof(struct log_header));
	return 0;
}

/* The reading itself of a live file open at fd (st: its status), as dmn_read_live describes it;
 * *traced set when ta was filled (the caller gives it a descriptor). */
static int read_live_fd(int fd, const char *name, const struct stat *st, const struct dmn_limits *lim,
			struct log_file *out, struct dmn_trace_area *ta, int *traced, struct dmn_live_map *map,
			struct dmn_live_map *kept, char *err, size_t errlen)
{
	struct log_header h;
	unsigned char *buf = NULL;
	struct log_record *recs = NULL;
	int r;
	*traced = 0;
	if ((uint64_t)st->st_size < LOG_HEADER_SIZE) {
		snprintf(err, errlen, "%s: %lld bytes, shorter than a log header", name, (long long)st->st_size);
		r = -EINVAL;
		goto out;
	}
	/* a file kept mapped: its header page is in the mapping (the same page of the same file) */
	if (kept ? (r = guarded(kept, header_copy_fn, &h)) < 0 : (r = dmn_pread(fd, &h, sizeof h, 0)) < 0) {
		snprintf(err, errlen, "%s: reading the header: %s", name,
			 r == -ESTALE || r == -EFAULT ? "cut short" : strerror(-r));
		goto out;
	}
	static const char unset[8];
	if (!memcmp(h.magic, unset, 8)) {
		/* the capture library sets the magic last: a header being made (or a file that never
		 * will be one, which costs nothing to skip quietly) */
		snprintf(err, errlen, "%s: its header is not made yet", name);
		r = -EAGAIN;
		goto out;
	}
	if (memcmp(h.magic, LOG_MAGIC, 8) || h.version != LOG_VERSION || h.header_size != LOG_HEADER_SIZE ||
	    h.record_size != sizeof(struct log_record) || h.endian != LOG_ENDIAN_MARK || h.nsections > LOG_MAX_SECTIONS) {
		snprintf(err, errlen, "%s: not an iostrata log of version %d", name, LOG_VERSION);
		r = -EINVAL;
		goto out;
	}
	const struct log_section *ss = find_section(&h, LOG_SEC_STRINGS), *rs = find_section(&h, LOG_SEC_RECORDS);
	uint64_t nrec = h.nrecords, sused = h.string_used, fsize = (uint64_t)st->st_size;
	if (!ss || !rs) {
		snprintf(err, errlen, "%s: no %s section", name, ss ? "records" : "strings");
		r = -EINVAL;
		goto out;
	}
	if (nrec > h.max_records)
		nrec = h.max_records;
	if (nrec > rs->count)
		nrec = rs->count;
	if (nrec > lim->max_records || sused > lim->max_strings || sused > ss->size || sused < 1) {
		snprintf(err, errlen, "%s: %llu records and %llu string bytes in use, beyond the limits (%u, %llu)", name,
			 (unsigned long long)nrec, (unsigned long long)sused, lim->max_records,
			 (unsigned long long)lim->max_strings);
		r = -EFBIG;
		goto out;
	}
	uint64_t rbytes = nrec * sizeof(struct log_record);
	if (ss->offset > fsize || sused > fsize - ss->offset || rs->offset > fsize || rbytes > fsize - rs->offset) {
		snprintf(err, errlen, "%s: its sections lie past its end (%llu bytes)", name, (unsigned long long)fsize);
		r = -EINVAL;
		goto out;
	}
	/* (h stays the file's own, for a mapping: parse_used changes its copy in buf) */
	struct log_section frs = *rs;
	/* header | strings in use | records in use, and a header that says just that */
	uint64_t soff, roff;
	used_layout(sused, &soff, &roff);
	if ((r = used_alloc(sused, nrec, &buf, &recs)) < 0) {
		snprintf(err, errlen, "%s: out of memory", name);
		goto out;
	}
	/* the strings as the last full reading kept them when none was added since (strings are
	 * only ever added: the same count is the same bytes) */
	int strs_kept = kept && kept->strs && kept->nstrs == sused && kept->ss_off == ss->offset;
	if (strs_kept)
		memcpy(buf + soff, kept->strs, sused);
	if ((!strs_kept && (r = dmn_pread(fd, buf + soff, sused, ss->offset)) < 0) ||
	    (r = dmn_pread(fd, recs, rbytes, rs->offset)) < 0) {
		snprintf(err, errlen, "%s: %s", name, r == -ESTALE ? "cut short while read" : strerror(-r));
		goto out;
	}
	/* a traced log's trace area, as the file's header says (its clock, its blocks) */
	const struct log_section *ts = find_section(&h, LOG_SEC_TRACE);
	*traced = ta && ts && h.trace_blocks && h.trace_block_size == LOG_TRACE_BLOCK && ts->offset < fsize;
	if (*traced) {
		ta->h = h;
		ta->off = ts->offset;
		ta->count = ts->count;
		ta->fsize = fsize;
	}
	r = parse_used(&h, buf, recs, sused, nrec, name, out, err, errlen);
	recs = NULL; /* (the log_file's now, or freed) */
	/* a mapping that cannot be made costs nothing but the per-second path; its strings are kept
	 * for the statistics' readings from it (a mapping of the slots: kept by dmn_read_live once
	 * it keeps the descriptor, for the readings by it) */
	if (r == 0 && map && live_map(map, fd, st, &h, &frs, lim, dmn_log_user_only(out)) < 0) {
		memset(map, 0, sizeof *map);
		map->fd = -1;
	}
	if (r == 0 && map && map->hdr) {
		map->ss_off = ss->offset;
		map->rs_off = frs.offset;
		if (!map->tot)
			dmn_live_keep_strings(map, out);
	}
out:
	if (r < 0)
		*traced = 0;
	free(buf);
	free(recs);
	return r;
}

int dmn_read_live(int dirfd, const char *name, uid_t uid, const struct dmn_limits *lim, struct log_file *out,
		  struct stat *st, struct dmn_trace_area *ta, struct dmn_live_map *map, char *err, size_t errlen)
{
	int traced, fd = open_owned(dirfd, name, uid, st, err, errlen);
	memset(out, 0, sizeof *out);
	if (ta)
		ta->fd = -1;
	if (map) {
		memset(map, 0, sizeof *map);
		map->fd = -1;
	}
	if (fd < 0)
		return fd;
	int r = read_live_fd(fd, name, st, lim, out, ta, &traced, map, NULL, err, errlen);
	if (r == 0 && traced) {
		ta->fd = fd;
		fd = -1;
	}
	/* a file mapped with its slots keeps its descriptor for its full readings */
	if (r == 0 && map && map->tot && kept_fds < kept_fds_max) {
		if (fd >= 0) {
			map->fd = fd;
			fd = -1;
		} else {
			map->fd = dup(ta->fd);
		}
		map->has_fd = map->fd >= 0;
		kept_fds += map->has_fd;
		/* its next full readings take the strings from here while none is added (and the
		 * header from the mapping) */
		if (map->has_fd)
			dmn_live_keep_strings(map, out);
	}
	if (fd >= 0)
		close(fd);
	return r;
}

int dmn_read_live_kept(struct dmn_live_map *m, const char *name, const struct dmn_limits *lim, struct log_file *out,
		       struct dmn_trace_area *ta, struct dmn_live_sums *probe, char *err, size_t errlen)
{
	struct stat st;
	struct dmn_live_sums own;
	int traced;
	memset(out, 0, sizeof *out);
	if (ta)
		ta->fd = -1;
	if (!probe) {
		probe = &own;
		probe->want_sig = 0;
	}
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		probe->layer[l].layer = 0;
	if (!m->has_fd || !m->hdr)
		return 1;
	/* a summing first, inside its guard: a file cut under the mapping (or another log written
	 * over it) is said as such, not only found short by the preads */
	int r = dmn_live_sum(m, probe);
	if (r < 0)
		return r;
	if (r > 0)
		for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
			probe->layer[l].layer = 0;
	if (fstat(m->fd, &st) < 0)
		return -errno;
	if (st.st_nlink == 0)
		return 1; /* removed: the process ended (its final log), or another file is under its name */
	r = read_live_fd(m->fd, name, &st, lim, out, ta, &traced, NULL, m, err, errlen);
	if (r == 0)
		dmn_live_keep_strings(m, out); /* (a string added: kept anew) */
	if (r == 0 && out->hdr.end_ns) {
		log_file_free(out);
		memset(out, 0, sizeof *out);
		return 1;
	}
	if (r == 0 && traced && (ta->fd = dup(m->fd)) < 0) {
		log_file_free(out);
		memset(out, 0, sizeof *out);
		return 1;
	}
	return r;
}

int dmn_read_final(const char *path, uid_t uid, gid_t gid, const struct dmn_limits *lim, struct log_file *out,
		   char *err, size_t errlen)
{
	struct stat st;
	unsigned char *buf = NULL;
	int r;
	memset(out, 0, sizeof *out);
	const char *slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || !slash[1]) {
		snprintf(err, errlen, "%s: not an absolute file path", path);
		return -EINVAL;
	}
	char dir[4096];
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
	dmn_fs_as(uid, gid);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -errno : open_owned(dfd, slash + 1, uid, &st, err, errlen);
	dmn_fs_as_self();
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		if (fd == -ENOENT || dfd < 0)
			snprintf(err, errlen, "%s: %s", path, strerror(-fd));
		return fd;
	}
	if ((uint64_t)st.st_size > lim->max_final) {
		snprintf(err, errlen, "%s: %lld bytes, more than the %llu a final log may have here", path,
			 (long long)st.st_size, (unsigned long long)lim->max_final);
		r = -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if ((r = dmn_pread(fd, buf, (size_t)st.st_size, 0)) < 0) {
		snprintf(err, errlen, "%s: %s", path, r == -ESTALE ? "cut short while read" : strerror(-r));
		goto out;
	}
	r = log_file_parse_own(buf, (size_t)st.st_size, path, out, err, errlen);
out:
	free(buf);
	close(fd);
	return r;
}
