/* SPDX-License-Identifier: MIT */
/*
 * Write aggregation (seed 002, docs/AGGREGATION.md) for files whose absolute path matches
 * IOSTRATA_AGGREGATE=PATTERN[:threshold=64K,small=512,buffer=32M]. Three tiers: writes under
 * `small` bytes are copied into this process's small-write buffer, writes under `threshold` into
 * an entry of the node's shared ring (agg_shm.c), larger ones go straight to the file once the
 * buffered bytes they overlap are out. Everything is written back in place, so the files are
 * ordinary files once closed.
 *
 * POSIX semantics are kept by flushing before anything that could observe buffered bytes (reads,
 * stat, seeks to the end, syncs, truncation, mappings, data moves, exec, spawn, exit, SIGTERM and
 * SIGINT) and by modelling the file position per open file description (core.c) so buffered writes
 * need no system call. Not here: the shared ring itself, and the wrappers (posix.c).
 *
 * Locking: one process-private mutex (agg_mu) around every aggregation step, taken only by code
 * outside signal handlers or by our own SIGTERM/SIGINT handler when the interrupted thread is not
 * inside aggregation code (agg_depth, thread-local): a signal arriving inside is deferred until the
 * thread leaves. Order: agg_mu, then the ring's drain lock, then the ring's lock.
 */
#include "capture/aggregate.h"
#include "capture/agg_shm.h"
#include "capture/agg_pack.h"
#include "capture/core.h"

#include <fnmatch.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#define AGG_FILES 256
#define AGG_SMALL_SLOTS AGG_SHM_SMALL_SLOTS
#define AGG_MAPS 64

struct agg_file {
	uint64_t dev, ino;
	int shm;    /* index in the ring's file table; -1: the ring cannot write this file back */
	int fd;     /* one of the application's descriptors of the file, for write-back; -1 none */
	int nfds;
	int mapped; /* live mappings: writes pass through */
	int err;    /* deferred error of a write-back from the small-write buffer */
	int used;
	int probe;  /* only opened for reading so far: the ring's entry (another process's) is looked up */
	uint64_t lmin, lmax; /* bytes of the file in the small-write buffer */
	uint64_t rmin, rmax; /* bytes this process put into the ring since it last drained it */
	struct log_record *rec;
	int decide;          /* enum log_agg_state: LOG_AGG_PROBING until AGG_PROBES writes were timed */
	int nprobe;
	uint64_t probe_ns[8]; /* AGG_PROBES */
};

/* Whether aggregation pays (when=auto, docs/AGGREGATION.md "When it pays"). On local file
 * systems (log_fs_is_local) a buffered write costs its bytes (a copy into the page cache), not a
 * request: the checkpoint mix ran 0.95-1.17x plain on ext4 under aggregation. Their files are not
 * aggregated at all, so nothing of aggregation runs on their writes. */
/* Elsewhere the first AGG_PROBES writes under the threshold pass through, timed; the file is
 * aggregated when the least of their costs, less AGG_NS_PER_KB per KiB (what a buffered copy of
 * the bytes into new page-cache pages costs here, which aggregation pays too), is at least
 * AGG_PAYS_NS: a request worth saving (the least FUSE round trip of `iostrata mount` here: 11-12 us,
 * 20-90 us typical; the least of 8 small writes to a new ext4 file: 0-0.6 us after the bytes). */
#define AGG_PROBES 8
#define AGG_PAYS_NS 5000u
#define AGG_NS_PER_KB 500u

struct agg_lent {
	uint32_t file, len;
	uint64_t off, data;
};

int agg_on;
static struct agg_spec cfg;
static char shm_name[256];
static struct agg_file *files;
static int nfiles;
static struct agg_lent lents[AGG_SMALL_SLOTS];
static int nlent;
static char *ldata;
static uint64_t lused, lcap;
static struct agg_shm *ring;
static int ring_failed;
/* A writer that has put this many bytes into the ring since it last wrote its own back, or that
 * finds the ring more than half full, writes its own entries back: in large writes (AGG_DRAIN_AT,
 * or half a smaller ring), early enough that the ring mostly reuses its first pages, which every
 * process has mapped and the cache holds, instead of faulting in and cycling through the whole
 * buffer per checkpoint. */
#define AGG_DRAIN_AT (2u << 20)
static uint64_t drain_at, own_bytes;
static pthread_mutex_t agg_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int agg_depth __attribute__((tls_model("initial-exec")));
static __thread int agg_pending_sig __attribute__((tls_model("initial-exec")));
static int maxfd_seen;
/* The process is ending (exit, _exit, SIGTERM/SIGINT): everything was flushed and the ring left;
 * writes of other threads from then on pass through, so nothing is buffered that no one flushes. */
static int agg_closed;
static struct {
	uintptr_t addr;
	int file;
} maps[AGG_MAPS];
/* SIGTERM, SIGINT: whether our flushing handler is installed, and what the application set */
static int sig_ours[2];
static struct sigaction sig_app[2];
static const char *stall_file;
static const char *stall_fill_file; /* tests: IOSTRATA_AGG_TEST_STALL_FILL=FILE:LEN */
static uint64_t stall_fill_len;

/* ---------- configuration ---------- */

static void agg_on_signal(int sig);
static void ring_attach(void);

static void install_sig(int sig, int i)
{
	struct sigaction cur;
	if (real.sigaction(sig, NULL, &cur) < 0 || cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO))
		return; /* the application (or its parent: SIG_IGN) decided: keep it */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = agg_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (real.sigaction(sig, &sa, NULL) == 0) {
		sig_ours[i] = 1;
		sig_app[i] = cur;
	}
}

void agg_init(void)
{
	const char *spec = getenv("IOSTRATA_AGGREGATE");
	if (!spec || !*spec)
		return;
	char why[200];
	if (agg_spec_parse(spec, &cfg, why, sizeof why) < 0) {
		if (!getenv("IOSTRATA_QUIET"))
			cap_say("iostrata: IOSTRATA_AGGREGATE=%s: %s; aggregation off", spec, why);
		return;
	}
	files = mmap(NULL, AGG_FILES * sizeof *files, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	lcap = cfg.small * AGG_SMALL_SLOTS;
	ldata = mmap(NULL, lcap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (files == MAP_FAILED || ldata == MAP_FAILED)
		return;
	const char *job = getenv("IOSTRATA_JOB");
	char sid[32];
	if (!job || !*job) {
		snprintf(sid, sizeof sid, "sid%d", (int)getsid(0));
		job = sid;
	}
	agg_shm_name(shm_name, sizeof shm_name, job);
	stall_file = getenv("IOSTRATA_AGG_TEST_STALL");
	const char *sf = getenv("IOSTRATA_AGG_TEST_STALL_FILL");
	const char *colon = sf ? strrchr(sf, ':') : NULL;
	if (colon && colon[1]) {
		static char path[CAP_PATH_MAX];
		snprintf(path, sizeof path, "%.*s", (int)(colon - sf), sf);
		stall_fill_file = path;
		stall_fill_len = strtoull(colon + 1, NULL, 10);
	}
	install_sig(SIGTERM, 0);
	install_sig(SIGINT, 1);
	agg_on = 1;
	/* The ring is attached at the first open of an aggregated file: processes of the job that
	 * never open one (shells, helpers) pay nothing. `iostrata run` creates and allocates it before
	 * the job starts, so no process of the job pays for that either. */
}

/* ---------- entering and leaving ---------- */

static void agg_terminate(int sig);

static void enter(void)
{
	agg_depth++;
	cap_guard++;
	pthread_mutex_lock(&agg_mu);
}

static void leave(void)
{
	pthread_mutex_unlock(&agg_mu);
	cap_guard--;
	if (--agg_depth == 0 && CAP_UNLIKELY(agg_pending_sig)) {
		int s = agg_pending_sig;
		agg_pending_sig = 0;
		agg_terminate(s);
	}
}

/* ---------- the ring's view of this process ---------- */

/* Descriptor k can write file a's buffered bytes back at their offsets: open for writing, neither
 * appending (pwrite would append) nor O_DIRECT (unaligned buffers fail with EINVAL). */
static int wb_usable(int k, uint32_t a)
{
	return k >= 0 && k <= maxfd_seen && k < cap.nfd && cap.fds[k].agg == a &&
	       !(cap.ofds[cap.fds[k].ofd].flags & (CAP_OFD_AGG_RDONLY | CAP_OFD_APPEND | CAP_OFD_DIRECT));
}

/* The descriptor x's write-backs go through, or -1: x->fd while it stays usable (F_SETFL may have
 * made it append), else another of the file's descriptors. */
static int wb_fd(struct agg_file *x)
{
	uint32_t a = (uint32_t)(x - files) + 1;
	if (wb_usable(x->fd, a))
		return x->fd;
	x->fd = -1;
	for (int k = 0; k <= maxfd_seen && k < cap.nfd && x->fd < 0; k++)
		if (wb_usable(k, a))
			x->fd = k;
	return x->fd;
}

static int io_fd_for(struct agg_shm *s, uint32_t i, int *own)
{
	for (int k = 0; k < nfiles; k++)
		if (files[k].used && files[k].shm == (int)i && wb_fd(&files[k]) >= 0) {
			*own = 1;
			return files[k].fd;
		}
	*own = 0;
	struct agg_shm_file *sf = &s->files[i];
	int fd = real.open(sf->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (real.fstat(fd, &st) < 0 || (uint64_t)st.st_dev != sf->dev || (uint64_t)st.st_ino != sf->ino) {
		real.close(fd);
		errno = ESTALE; /* renamed away by a process outside the job: do not write another file */
		return -1;
	}
	return fd;
}

/* Write-backs are counted by the process that issues them, in its record of the file (made
 * from the ring's path when it has none: it drained another process's entries). */
static ssize_t io_pwritev(struct agg_shm *s, uint32_t i, int fd, const struct iovec *v, int n, off_t off)
{
	ssize_t w = real.pwritev(fd, v, n, off);
	if (w > 0 && cap.hdr) {
		struct log_record *rec = NULL;
		for (int k = 0; k < nfiles && !rec; k++)
			if (files[k].used && files[k].shm == (int)i)
				rec = files[k].rec;
		if (!rec && s->files[i].path[0])
			rec = cap_record(LOG_LAYER_POSIX, s->files[i].path, 0);
		if (rec) {
			log_inc(&rec->counters[LOG_C_AGG_ISSUED_WRITES], 1);
			log_add(&rec->counters[LOG_C_AGG_ISSUED_BYTES], (uint64_t)w, 1);
		}
	}
	return w;
}

/* Tests only: write line to file, then stop for good, holding whatever locks the caller holds; the
 * test then SIGKILLs the process. */
static void stall_forever(const char *file, const char *line)
{
	int fd = real.open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w = real.write(fd, line, strlen(line));
		(void)w;
		real.close(fd);
	}
	for (;;)
		pause();
}

/* Tests only (IOSTRATA_AGG_TEST_STALL=FILE): a flusher that stops in the middle of a drain, after
 * writing "PID N" to FILE, N the writes in its small-write buffer (what SIGKILL will lose). */
static void io_stall(void)
{
	char b[32];
	snprintf(b, sizeof b, "%d %d\n", (int)getpid(), nlent);
	stall_forever(stall_file, b);
}

/* Tests only (IOSTRATA_AGG_TEST_STALL_FILL=FILE:LEN): a writer that stops while copying a ring
 * entry of LEN bytes (its state FILLING), after writing "PID" to FILE; the test kills it and
 * leaves it a zombie while its parent writes the file back. */
static void fill_stall(uint64_t len)
{
	char b[32];
	if (len != stall_fill_len)
		return;
	snprintf(b, sizeof b, "%d\n", (int)getpid());
	stall_forever(stall_fill_file, b);
}

static struct agg_io io;

static void io_setup(int stall)
{
	io.fd_for = io_fd_for;
	io.open = real.open;
	io.close = real.close;
	io.writev = real.writev;
	io.pread = real.pread;
	io.fsync = real.fsync;
	io.pwritev = io_pwritev;
	io.stall = stall && stall_file ? io_stall : NULL;
}

static void ring_drain(int try)
{
	if (!ring)
		return;
	io_setup(1);
	if (!agg_shm_drain_lock(ring, try))
		return;
	agg_shm_drain(ring, &io);
	agg_shm_drain_unlock(ring);
	for (int k = 0; k < nfiles; k++)
		files[k].rmin = files[k].rmax = 0;
	own_bytes = 0;
}

/* inplace = 0: a packed ring may put the bytes into the pack (close, fsync, a full ring);
 * 1: they must be in the file itself (a read, stat, mapping ... needs them there). */
static void ring_drain_file(struct agg_file *x, int inplace)
{
	io_setup(1);
	agg_shm_drain_file(ring, &io, (uint32_t)x->shm, inplace);
	x->rmin = x->rmax = 0;
}

static void ring_attach(void)
{
	if (ring || ring_failed)
		return;
	char pack[CAP_PATH_MAX + 64];
	const char *pdir = cfg.packdir[0] ? cfg.packdir : getenv("IOSTRATA_OUT");
	if (cfg.packed && !(pdir && *pdir)) {
		cfg.packed = 0;
		if (!getenv("IOSTRATA_QUIET"))
			cap_say("iostrata: placement=packed needs packdir=DIR or IOSTRATA_OUT; writing back in place");
	}
	if (cfg.packed) {
		char host[64] = "host";
		gethostname(host, sizeof host - 1);
		snprintf(pack, sizeof pack, "%s/agg-%s.pack", pdir, host);
	}
	io_setup(0);
	ring = agg_shm_attach(shm_name, cfg.buffer, real.ftruncate, cfg.packed ? pack : NULL, &io);
	if (ring)
		drain_at = ring->data_size / 2 < AGG_DRAIN_AT ? ring->data_size / 2 : AGG_DRAIN_AT;
	if (!ring) {
		ring_failed = 1; /* medium writes go straight to their files */
		if (!getenv("IOSTRATA_QUIET"))
			cap_say("iostrata: aggregation in pid %d without the shared buffer %s: %s", (int)getpid(),
				shm_name, strerror(errno));
	}
}

/* ---------- files and descriptors ---------- */

static uint32_t file_of(uint64_t dev, uint64_t ino)
{
	for (int k = 0; k < nfiles; k++)
		if (files[k].used && files[k].dev == dev && files[k].ino == ino)
			return (uint32_t)k + 1;
	return 0;
}

static void note_decision(struct log_record *r, int state, uint64_t magic, uint64_t probe_ns)
{
	if (!r)
		return;
	__atomic_store_n(&r->agg_fs_magic, (uint32_t)magic, __ATOMIC_RELAXED); /* magic numbers are 32 bits */
	__atomic_store_n(&r->agg_probe_ns, probe_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&r->agg_state, (uint32_t)state, __ATOMIC_RELAXED);
}

/* A probe write of len bytes took ns: after AGG_PROBES of them, the file's decision. */
static void probe_add(struct agg_file *x, uint64_t ns, uint64_t len, uint64_t magic)
{
	uint64_t bytes_ns = len * AGG_NS_PER_KB / 1024;
	x->probe_ns[x->nprobe++] = ns > bytes_ns ? ns - bytes_ns : 0;
	if (x->nprobe < AGG_PROBES)
		return;
	/* the smallest: preemption and a loaded machine only ever add to a write's time */
	uint64_t least = x->probe_ns[0];
	for (int i = 1; i < AGG_PROBES; i++)
		least = x->probe_ns[i] < least ? x->probe_ns[i] : least;
	x->decide = least >= AGG_PAYS_NS ? LOG_AGG_ON : LOG_AGG_BYPASS_CHEAP;
	note_decision(x->rec, x->decide, magic, least ? least : 1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void agg_note_open(struct cap_fd *f, int fd, const char *abs, int flags)
{
	if (fnmatch(cfg.pattern, abs, 0) != 0)
		return;
	struct stat st;
	if (real.fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return; /* pipes, devices, directories: never buffered */
	struct statfs sfs;
	uint64_t magic = fstatfs(fd, &sfs) == 0 ? (uint64_t)sfs.f_type : 0;
	if (cfg.when == AGG_WHEN_AUTO && log_fs_is_local(magic)) {
		/* every process of the job decides the same for this file: none buffers it */
		note_decision(f->rec, LOG_AGG_BYPASS_LOCAL, magic, 0);
		return;
	}
	enter();
	uint32_t a = file_of((uint64_t)st.st_dev, (uint64_t)st.st_ino);
	int acc = flags & O_ACCMODE;
	if (!a && nfiles < AGG_FILES) {
		struct agg_file *x = &files[nfiles];
		memset(x, 0, sizeof *x);
		x->dev = (uint64_t)st.st_dev;
		x->ino = (uint64_t)st.st_ino;
		x->fd = -1;
		x->shm = -1;
		x->used = 1;
		x->probe = 1;
		x->decide = cfg.when == AGG_WHEN_ALWAYS ? LOG_AGG_ON : LOG_AGG_PROBING;
		ring_attach();
		a = (uint32_t)++nfiles;
	}
	if (a) {
		struct agg_file *x = &files[a - 1];
		/* The ring writes back from whichever process drains it, by path: only for files any
		 * process of the job can open for writing, tried when the application opens it for
		 * writing (a file it only reads is never opened for writing by us: no inotify event,
		 * no broken lease). */
		if (x->probe && acc != O_RDONLY) {
			x->probe = 0;
			int t = real.open(abs, O_WRONLY | O_CLOEXEC);
			if (t >= 0) {
				real.close(t);
				if (ring)
					x->shm = agg_shm_file(ring, x->dev, x->ino, abs);
			}
		}
		x->rec = f->rec;
		note_decision(f->rec, x->decide, magic, x->nprobe >= AGG_PROBES ? f->rec->agg_probe_ns : 0);
		x->nfds++;
		if (acc != O_RDONLY && x->fd < 0 && !(flags & (O_APPEND | O_DIRECT)))
			x->fd = fd;
		if (acc == O_RDONLY || (flags & (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)))
			cap.ofds[f->ofd].flags |= CAP_OFD_AGG_PASS;
		if (acc == O_RDONLY)
			cap.ofds[f->ofd].flags |= CAP_OFD_AGG_RDONLY;
		if (fd > maxfd_seen)
			maxfd_seen = fd;
		f->agg = a;
	}
	leave();
}

void agg_fd_added(uint32_t a)
{
	if (agg_depth)
		return;
	enter();
	files[a - 1].nfds++;
	leave();
}

/* Called with the descriptor's state already forgotten (cap_fd_close). */
void agg_fd_forget(int fd, uint32_t a)
{
	if (agg_depth)
		return;
	enter();
	struct agg_file *x = &files[a - 1];
	x->nfds--;
	if (x->fd == fd) /* fd is no longer the file's (cap.fds[fd].agg is 0): another one */
		wb_fd(x);
	leave();
}

/* ---------- write-back ---------- */

static void direct_write(struct agg_file *x, const char *p, uint64_t len, uint64_t off)
{
	while (len) {
		if (wb_fd(x) < 0) {
			x->err = x->err ? x->err : EBADF;
			return;
		}
		ssize_t w = real.pwrite(x->fd, p, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!x->err)
				x->err = w < 0 ? errno : ENOSPC;
			return;
		}
		if (x->rec) {
			log_inc(&x->rec->counters[LOG_C_AGG_ISSUED_WRITES], 1);
			log_add(&x->rec->counters[LOG_C_AGG_ISSUED_BYTES], (uint64_t)w, 1);
		}
		p += w, len -= (uint64_t)w, off += (uint64_t)w;
	}
}

/* Put len bytes of file x at off into the ring; 0, or -1 when it has no room even after a drain. */
static int ring_put(struct agg_file *x, const struct iovec *v, int cnt, uint64_t len, uint64_t off)
{
	if (!ring || x->shm < 0)
		return -1;
	struct agg_ent *e = agg_shm_reserve(ring, (uint32_t)x->shm, off, (uint32_t)len);
	if (!e) {
		ring_drain(0); /* full: wait for the flusher, or be it */
		e = agg_shm_reserve(ring, (uint32_t)x->shm, off, (uint32_t)len);
		if (!e)
			return -1;
	}
	char *d = agg_ent_data(e);
	if (CAP_UNLIKELY(stall_fill_file))
		fill_stall(len);
	for (int i = 0; i < cnt; i++) {
		memcpy(d, v[i].iov_base, v[i].iov_len);
		d += v[i].iov_len;
	}
	agg_shm_publish(ring, e);
	own_bytes += len;
	if (x->rmin == x->rmax)
		x->rmin = off, x->rmax = off + len;
	else {
		x->rmin = off < x->rmin ? off : x->rmin;
		x->rmax = off + len > x->rmax ? off + len : x->rmax;
	}
	return 0;
}

/* The small-write buffer goes out as one ring entry per run of contiguous writes of one file. */
static void push_local(void)
{
	int i = 0;
	while (i < nlent) {
		int j = i + 1;
		uint64_t len = lents[i].len;
		while (j < nlent && lents[j].file == lents[i].file && lents[j].off == lents[i].off + len &&
		       lents[j].data == lents[i].data + len) {
			len += lents[j].len;
			j++;
		}
		struct agg_file *x = &files[lents[i].file];
		struct iovec v = {ldata + lents[i].data, len};
		if (ring_put(x, &v, 1, len, lents[i].off) < 0)
			direct_write(x, ldata + lents[i].data, len, lents[i].off);
		i = j;
	}
	nlent = 0;
	lused = 0;
	for (int k = 0; k < nfiles; k++)
		files[k].lmin = files[k].lmax = 0;
}

/* This process's own entries, file by file (each under its file's dlock): processes sharing the
 * node write their own bytes back in parallel, through their own descriptors, instead of one of
 * them writing everybody's while the others wait for it at close. The small-write buffer goes
 * along, so the runs its writes fill between medium ones go out whole rather than in pieces. */
static void ring_drain_own(void)
{
	push_local();
	for (int k = 0; k < nfiles; k++)
		if (files[k].used && files[k].shm >= 0 && files[k].rmax > files[k].rmin)
			ring_drain_file(&files[k], 0);
	own_bytes = 0;
}

static int overlaps(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return b0 != b1 && a0 < b1 && b0 < a1;
}

static int take_err(struct agg_file *x)
{
	int e = x->err;
	x->err = 0;
	if (!e && ring && x->shm >= 0)
		e = __atomic_exchange_n(&ring->files[x->shm].err, 0, __ATOMIC_RELAXED);
	return e;
}

/* A file this process only reads: the ring slot another process may have made for it. */
static void probe_ring(struct agg_file *x)
{
	uint32_t n = __atomic_load_n(&ring->nfiles, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (ring->files[i].used && ring->files[i].dev == x->dev && ring->files[i].ino == x->ino) {
			x->shm = (int)i;
			return;
		}
}

static void flush_file(struct agg_file *x, int inplace)
{
	if (x->probe && x->shm < 0 && ring)
		probe_ring(x);
	if (x->lmin != x->lmax)
		push_local();
	if (ring && x->shm >= 0 && __atomic_load_n(&ring->files[x->shm].pending, __ATOMIC_ACQUIRE) > 0)
		ring_drain_file(x, inplace);
}

static void sync_pos(int fd, struct cap_ofd *d)
{
	if (d->flags & CAP_OFD_KSTALE) {
		real.lseek(fd, (off_t)d->pos, SEEK_SET);
		d->flags &= ~(uint32_t)CAP_OFD_KSTALE;
	}
}

int agg_write(struct cap_fd *f, int fd, const struct iovec *iov, int cnt, int64_t off, int positional,
	      ssize_t *ret)
{
	if (agg_depth || (positional && off < 0) || cnt <= 0 || cnt > IOV_MAX)
		return 0; /* a signal handler inside our code, or an error the kernel should report */
	uint64_t n = 0;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - n)
			return 0;
		n += iov[i].iov_len;
	}
	if (!n)
		return 0;
	int e = errno;
	uint64_t t0 = cap_now();
	enter();
	struct agg_file *x = &files[f->agg - 1];
	struct cap_ofd *d = &cap.ofds[f->ofd];
	if (CAP_UNLIKELY(agg_closed)) {
		leave();
		errno = e;
		return 0;
	}
	if ((d->flags & (CAP_OFD_APPEND | CAP_OFD_DIRECT | CAP_OFD_AGG_PASS)) || x->mapped) {
		flush_file(x, 1);
		if (!positional)
			sync_pos(fd, d);
		log_inc(&f->rec->counters[LOG_C_AGG_DIRECT], 1);
		leave();
		errno = e;
		return 0;
	}
	uint64_t o = positional ? (uint64_t)off : d->pos;
	ssize_t r = (ssize_t)n;
	if (CAP_UNLIKELY(x->decide != LOG_AGG_ON) && (x->decide == LOG_AGG_BYPASS_CHEAP || n < cfg.threshold)) {
		/* Bypassed, or measuring: the write goes to the file as the application made it, after
		 * whatever another process (that decided otherwise) buffered of the file. */
		flush_file(x, 1);
		if (!positional)
			sync_pos(fd, d);
		if (x->decide == LOG_AGG_BYPASS_CHEAP) {
			leave();
			errno = e;
			return 0;
		}
		uint64_t a = mono_ns();
		errno = e;
		r = positional ? real.pwritev(fd, iov, cnt, (off_t)o) : real.writev(fd, iov, cnt);
		e = errno;
		uint64_t z = mono_ns();
		if (r > 0) {
			probe_add(x, z - a, (uint64_t)r, __atomic_load_n(&x->rec->agg_fs_magic, __ATOMIC_RELAXED));
			if (!positional)
				d->pos = o + (uint64_t)r; /* the kernel's position moved too */
		}
		uint64_t t1 = cap_now();
		errno = e;
		cap_note_rw(f, LOG_KIND_WRITE, (int64_t)o, r, (uintptr_t)iov[0].iov_base, t0, t1);
		leave();
		*ret = r;
		errno = e;
		return 1;
	}
	enum log_counter tier;
	if (n < cfg.small) {
		if (nlent == AGG_SMALL_SLOTS || lused + n > lcap)
			push_local();
		char *dst = ldata + lused;
		for (int i = 0; i < cnt; i++) {
			memcpy(dst, iov[i].iov_base, iov[i].iov_len);
			dst += iov[i].iov_len;
		}
		lents[nlent++] = (struct agg_lent){(uint32_t)(x - files), (uint32_t)n, o, lused};
		lused += n;
		if (x->lmin == x->lmax)
			x->lmin = o, x->lmax = o + n;
		else {
			x->lmin = o < x->lmin ? o : x->lmin;
			x->lmax = o + n > x->lmax ? o + n : x->lmax;
		}
		tier = LOG_C_AGG_SMALL;
	} else {
		/* a later write must win: older small-buffer bytes under it go first */
		if (overlaps(o, o + n, x->lmin, x->lmax))
			push_local();
		if (n < cfg.threshold && ring_put(x, iov, cnt, n, o) == 0) {
			tier = LOG_C_AGG_MEDIUM;
			if (own_bytes >= drain_at || (own_bytes && agg_shm_used(ring) > ring->data_size / 2))
				ring_drain_own();
		} else {
			/* the ring bytes of ours it overlaps (the small buffer's included, pushed above)
			 * go first; other processes' overlapping writes have no order to keep */
			if (overlaps(o, o + n, x->rmin, x->rmax))
				ring_drain_file(x, 0);
			errno = e;
			r = real.pwritev(fd, iov, cnt, (off_t)o);
			e = errno;
			/* packed: the pack must know these bytes are newer than its older chunks */
			if (r > 0 && ring && ring->packed && x->shm >= 0 &&
			    agg_shm_mark_direct(ring, (uint32_t)x->shm, o, (uint64_t)r) < 0) {
				ring_drain(0);
				agg_shm_mark_direct(ring, (uint32_t)x->shm, o, (uint64_t)r);
			}
			tier = LOG_C_AGG_DIRECT;
		}
	}
	if (r > 0 && !positional) {
		d->pos = o + (uint64_t)r;
		d->flags |= CAP_OFD_KSTALE;
	}
	uint64_t t1 = cap_now();
	if (r >= 0)
		log_inc(&f->rec->counters[tier], 1);
	errno = e;
	cap_note_rw(f, LOG_KIND_WRITE, (int64_t)o, r, (uintptr_t)iov[0].iov_base, t0, t1);
	leave();
	*ret = r;
	errno = e;
	return 1;
}

int agg_before(struct cap_fd *f, int fd, unsigned what)
{
	if (agg_depth)
		return 0;
	int e = errno, err = 0;
	enter();
	struct agg_file *x = &files[f->agg - 1];
	struct cap_ofd *d = &cap.ofds[f->ofd];
	if (what & AGG_FLUSH) {
		flush_file(x, !(what & AGG_DURABLE));
		if ((what & AGG_PACKSYNC) && ring && ring->packed && x->shm >= 0 && agg_shm_pack_sync(ring, &io) < 0)
			err = errno;
		/* a write-back error belongs to the next fsync or close of a descriptor that writes,
		 * not to a read or seek that happened to write the bytes back first, nor to a reader */
		if ((what & AGG_DURABLE) && !(d->flags & CAP_OFD_AGG_RDONLY)) {
			int e2 = take_err(x);
			err = e2 ? e2 : err;
		}
	}
	if (what & (AGG_SYNCPOS | AGG_PASS))
		sync_pos(fd, d);
	if (what & AGG_PASS)
		d->flags |= CAP_OFD_AGG_PASS;
	leave();
	errno = e;
	return err;
}

int agg_close(struct cap_fd *f, int fd)
{
	return agg_before(f, fd, AGG_FLUSH | AGG_DURABLE);
}

/* A path names an aggregated file when its (dev, ino) is one: this process's files, or the
 * ring's (another process's buffered bytes). */
void agg_before_path(int dirfd, const char *path, int atflags, int unlinking)
{
	if (agg_depth || !path || (!nfiles && !ring))
		return;
	int e = errno;
	struct stat st;
	cap_guard++;
	int r = real.fstatat(dirfd, path, &st, atflags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH));
	cap_guard--;
	if (r < 0 || !S_ISREG(st.st_mode)) {
		errno = e;
		return;
	}
	enter();
	uint32_t a = file_of((uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (a) {
		struct agg_file *x = &files[a - 1];
		flush_file(x, 1); /* in place: it stays readable through its descriptors */
		if (unlinking && x->shm >= 0) { /* the name goes: nobody else could write it back by path */
			if (ring->packed) { /* and unpack must not bring the file back */
				ring->files[x->shm].path[0] = 0;
				io_setup(0);
				agg_shm_pack_name(ring, &io, (uint32_t)x->shm);
			}
			x->shm = -1;
			x->probe = 0;
		}
	} else if (ring) {
		for (uint32_t i = 0; i < ring->nfiles; i++)
			if (ring->files[i].dev == (uint64_t)st.st_dev && ring->files[i].ino == (uint64_t)st.st_ino &&
			    __atomic_load_n(&ring->files[i].pending, __ATOMIC_ACQUIRE) > 0) {
				io_setup(0);
				agg_shm_drain_file(ring, &io, i, 1);
			}
	}
	leave();
	errno = e;
}

void agg_after_rename(int dirfd, const char *to)
{
	if (agg_depth || !ring)
		return;
	int e = errno;
	char abs[CAP_PATH_MAX];
	struct stat st;
	cap_guard++;
	int r = real.fstatat(dirfd, to, &st, AT_SYMLINK_NOFOLLOW);
	cap_guard--;
	if (r == 0 && S_ISREG(st.st_mode) && cap_abspath(dirfd, to, abs, sizeof abs) == 0) {
		enter();
		for (uint32_t i = 0; i < ring->nfiles; i++)
			if (ring->files[i].dev == (uint64_t)st.st_dev && ring->files[i].ino == (uint64_t)st.st_ino) {
				agg_shm_file(ring, (uint64_t)st.st_dev, (uint64_t)st.st_ino, abs);
				io_setup(0);
				agg_shm_pack_name(ring, &io, i); /* packed: unpack writes to the new name */
			}
		leave();
	}
	errno = e;
}

void agg_mmap(struct cap_fd *f, int fd, void *addr)
{
	agg_before(f, fd, AGG_FLUSH);
	if (agg_depth)
		return;
	enter();
	files[f->agg - 1].mapped++;
	for (int i = 0; i < AGG_MAPS; i++)
		if (!maps[i].addr) {
			maps[i].addr = (uintptr_t)addr;
			maps[i].file = (int)f->agg - 1;
			break;
		}
	leave();
}

void agg_munmap(void *addr)
{
	if (agg_depth)
		return;
	enter();
	for (int i = 0; i < AGG_MAPS; i++)
		if (maps[i].addr == (uintptr_t)addr) {
			files[maps[i].file].mapped--;
			maps[i].addr = 0;
		}
	leave();
}

void agg_flush_all(int for_exec)
{
	if (!agg_on || agg_depth)
		return; /* _exit from a handler that interrupted our code: see AGGREGATION.md */
	int e = errno;
	enter();
	push_local();
	if (ring && agg_shm_used(ring)) {
		if (for_exec || !ring->packed) {
			/* the next image (or a spawned child) may read the files: in place */
			for (int k = 0; k < nfiles; k++)
				if (files[k].used && files[k].shm >= 0 &&
				    __atomic_load_n(&ring->files[files[k].shm].pending, __ATOMIC_ACQUIRE) > 0)
					ring_drain_file(&files[k], 1);
		}
		ring_drain(0);
	}
	for (int fd = 0; fd <= maxfd_seen && fd < cap.nfd; fd++)
		if (cap.fds[fd].agg && cap.fds[fd].rec)
			sync_pos(fd, &cap.ofds[cap.fds[fd].ofd]);
	if (!for_exec && ring) {
		io_setup(0);
		agg_shm_detach(ring, shm_name, &io);
		ring = NULL;
		ring_failed = 1;
	}
	if (!for_exec)
		agg_closed = 1;
	leave();
	errno = e;
}

/* ---------- fork ---------- */

void agg_fork_prepare(void)
{
	if (!agg_on)
		return;
	enter();
	/* Parent and child share these open file descriptions from now on, and with them the kernel's
	 * position: both pass through on them, with the kernel's position made right first. */
	for (int fd = 0; fd <= maxfd_seen && fd < cap.nfd; fd++)
		if (cap.fds[fd].agg && cap.fds[fd].rec) {
			struct cap_ofd *d = &cap.ofds[cap.fds[fd].ofd];
			if (!(d->flags & CAP_OFD_AGG_PASS)) {
				flush_file(&files[cap.fds[fd].agg - 1], 1);
				sync_pos(fd, d);
				d->flags |= CAP_OFD_AGG_PASS;
			}
		}
}

void agg_fork_parent(void)
{
	if (agg_on)
		leave();
}

void agg_fork_child(void)
{
	if (!agg_on)
		return;
	/* The child starts with an empty small-write buffer: the parent writes its own bytes. */
	nlent = 0;
	lused = 0;
	for (int k = 0; k < nfiles; k++) {
		files[k].lmin = files[k].lmax = files[k].rmin = files[k].rmax = 0;
		files[k].err = 0;
	}
	/* core.c's child handler (run before this one) gave the child its own records */
	for (int k = 0; k < nfiles; k++)
		files[k].rec = NULL;
	for (int fd = 0; fd <= maxfd_seen && fd < cap.nfd; fd++)
		if (cap.fds[fd].agg && cap.fds[fd].rec)
			files[cap.fds[fd].agg - 1].rec = cap.fds[fd].rec;
	if (ring)
		agg_shm_add_self(ring);
	leave();
}

/* ---------- SIGTERM and SIGINT: flush, then the default action ---------- */

static void agg_terminate(int sig)
{
	agg_flush_all(0);
	struct sigaction d;
	memset(&d, 0, sizeof d);
	d.sa_handler = SIG_DFL;
	real.sigaction(sig, &d, NULL);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, sig);
	pthread_sigmask(SIG_UNBLOCK, &m, NULL);
	raise(sig);
}

static void agg_on_signal(int sig)
{
	if (agg_depth) { /* this thread holds our locks: act when it leaves */
		agg_pending_sig = sig;
		return;
	}
	agg_terminate(sig);
}

/* The application sees its own dispositions: ours stands in for SIG_DFL only. */
static int sig_index(int sig)
{
	return sig == SIGTERM ? 0 : sig == SIGINT ? 1 : -1;
}

CAP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = sig_index(sig);
	if (!agg_on || i < 0 || !sig_ours[i])
		return REAL(sigaction)(sig, act, old);
	struct sigaction prev = sig_app[i];
	if (act && (act->sa_handler != SIG_DFL || (act->sa_flags & SA_SIGINFO))) {
		int r = real.sigaction(sig, act, NULL);
		if (r < 0)
			return r;
		sig_ours[i] = 0;
	} else if (act) {
		sig_app[i] = *act;
	}
	if (old)
		*old = prev;
	return 0;
}

CAP_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	int i = sig_index(sig);
	if (!agg_on || i < 0 || !sig_ours[i])
		return REAL(signal)(sig, h);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
