/* SPDX-License-Identifier: MIT */
/*
 * The capture library's core: start-up (real symbols, configuration, the live log mapping),
 * the descriptor table and open file descriptions, record lookup, path handling, and the end
 * of a process image (final log at exit or exec). Wrappers live in posix.c, stdio.c, aio.c and
 * process.c; this file has no wrapper of an application call.
 *
 * Everything the hot path touches is allocated here, once, with mmap: the live file (a
 * MAP_SHARED mapping, so counters survive SIGKILL), the fd table, the open-file-description
 * pool and the record index. Nothing here takes a lock: records are claimed with atomic
 * counters and published into the index with compare-and-swap.
 */
#include "capture/core.h"
#include "log/zstd.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "capture/companion.h"
#include "log/live.h"
#include "log/writer.h"
#include "sys/elfneeds.h"

struct cap_state cap;
struct cap_real real;
__thread int cap_guard __attribute__((tls_model("initial-exec")));

#define CAP_DEFAULT_RECORDS 16384 /* cp -r of 6,000 files needs ~12,000: sparse until used */
#define CAP_MAX_RECORDS (1u << 20)
#define CAP_CALIB_PERIOD_NS 1000000000ull

static char cwd_buf[2][CAP_PATH_MAX];
static int cwd_cur; /* index of the current cwd buffer */
static char saved_env[16][CAP_PATH_MAX + 32]; /* IOSTRATA_* and LD_PRELOAD for exec */
static int nsaved_env;
static uint64_t ticks_per_sec_guess;
static char **prefix_excl;
static char **prefix_incl;
static uint64_t forked_start_ns; /* IOSTRATA_FORKED of this image: its forked predecessor's start */
static char forked_env[64];      /* IOSTRATA_FORKED=PID:START_NS for the image exec'd next */
/* IOSTRATA_EXECED=PID:LEN:LIVE_PATHLINK_PATH for the image exec'd next: the live file and link this
 * image kept through its exec, for that image to remove (LEN: the live path's length) */
static char execed_env[2 * CAP_PATH_MAX + 48];
/* IOSTRATA_MPI_LIB: the MPI companion (capture/mpi/), preloaded only into images that link MPI;
 * empty under `run --kernel`, whose MPI-IO uprobes record that layer already */
static char mpi_lib[CAP_PATH_MAX];
/* IOSTRATA_OMPI_LIB: the same for Open MPI (libmpi.so), built from the same source */
static char ompi_lib[CAP_PATH_MAX];

static char preload_env[4 * CAP_PATH_MAX + 16]; /* LD_PRELOAD=... for the image exec'd next */

/* ---------- messages ---------- */

void cap_say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int saved = errno;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	if (real.write) {
		cap_guard++;
		ssize_t r = real.write(2, buf, (size_t)n);
		(void)r;
		cap_guard--;
	}
	errno = saved;
}

/* ---------- clock ---------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = real.open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = real.read(fd, buf, len - 1);
	real.close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

/* TSC only where CLOCK_MONOTONIC itself is driven by an invariant TSC: then a tick count maps
 * onto it linearly and rdtsc (~10 ns here) replaces a vDSO clock_gettime (~24 ns). */
static int tsc_usable(void)
{
	char buf[64];
	if (getenv("IOSTRATA_NO_TSC"))
		return 0;
	if (read_small_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
			    sizeof buf) <= 0)
		return 0;
	return strncmp(buf, "tsc", 3) == 0;
}

void cap_calibrate(uint64_t now_ticks)
{
	struct log_header *h = cap.hdr;
	if (!h || !cap.use_tsc)
		return;
	uint64_t seq = __atomic_load_n(&h->calib_seq, __ATOMIC_RELAXED);
	if (seq & 1)
		return; /* another thread is at it */
	if (!__atomic_compare_exchange_n(&h->calib_seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	uint64_t t = __rdtsc();
	uint64_t ns = mono_ns();
	uint64_t t2 = __rdtsc();
	h->calib_tsc = t + (t2 - t) / 2;
	h->calib_ns = ns;
	__atomic_store_n(&h->calib_seq, seq + 2, __ATOMIC_RELEASE);
	uint64_t el = h->calib_ns - h->ns_ref, tk = h->calib_tsc - h->tsc_ref;
	if (el > 1000000)
		ticks_per_sec_guess = (uint64_t)((double)tk * 1e9 / (double)el);
	cap.calib_next = now_ticks + ticks_per_sec_guess;
}

/* The first slope: `iostrata run` measures the TSC rate once and passes it in IOSTRATA_TSC_HZ,
 * written here as a virtual pair one second after the reference; without it, a real pair taken
 * now (tens of microseconds after the reference) does until the next refresh. */
static void calibrate_start(void)
{
	struct log_header *h = cap.hdr;
	if (!cap.use_tsc)
		return;
	const char *e = getenv("IOSTRATA_TSC_HZ");
	uint64_t hz = e ? strtoull(e, NULL, 10) : 0;
	if (hz > 1000000) {
		h->calib_tsc = h->tsc_ref + hz;
		h->calib_ns = h->ns_ref + 1000000000ull;
		ticks_per_sec_guess = hz;
	} else {
		ticks_per_sec_guess = 1000000000ull;
		cap_calibrate(__rdtsc());
		uint64_t el = h->calib_ns - h->ns_ref, tk = h->calib_tsc - h->tsc_ref;
		if (el)
			ticks_per_sec_guess = (uint64_t)((double)tk * 1e9 / (double)el);
	}
	cap.calib_next = __rdtsc() + ticks_per_sec_guess;
}

/* ---------- companions ---------- */

static const struct cap_companion_api companion_api = {
	.version = CAP_COMPANION_VERSION,
	.size = sizeof(struct cap_companion_api),
	.state = &cap,
	.record = cap_record,
	.abspath = cap_abspath,
	.excluded = cap_path_excluded,
	.say = cap_say,
	.note_failure = cap_note_failure,
};

CAP_EXPORT const struct cap_companion_api *iostrata_companion_api(void)
{
	return &companion_api;
}

/* ---------- strings and records ---------- */

static uint32_t string_add(const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = __atomic_fetch_add(&cap.hdr->string_used, (uint32_t)n, __ATOMIC_RELAXED);
	if ((uint64_t)off + n > cap.string_cap) {
		__atomic_fetch_or(&cap.hdr->flags, LOG_F_OVERFLOW, __ATOMIC_RELAXED);
		return UINT32_MAX;
	}
	memcpy(cap.strings + off, s, n);
	return off;
}

static struct log_record *record_new(unsigned layer, const char *path, uint64_t id, uint32_t rflags)
{
	uint32_t n = __atomic_fetch_add(&cap.hdr->nrecords, 1, __ATOMIC_RELAXED);
	if (n >= cap.hdr->max_records) {
		__atomic_store_n(&cap.hdr->nrecords, cap.hdr->max_records, __ATOMIC_RELAXED);
		return NULL;
	}
	uint32_t soff = string_add(path);
	if (soff == UINT32_MAX)
		return NULL; /* the slot stays unused: no USED flag, readers skip it */
	struct log_record *r = &cap.records[n];
	r->id = id;
	r->path = soff;
	r->layer = (uint16_t)layer;
	r->rank = cap.hdr->rank;
	__atomic_store_n(&r->flags, (uint16_t)(LOG_R_USED | rflags), __ATOMIC_RELEASE);
	return r;
}

static struct log_record *catch_all(unsigned layer)
{
	__atomic_fetch_or(&cap.hdr->flags, LOG_F_OVERFLOW, __ATOMIC_RELAXED);
	return &cap.records[layer == LOG_LAYER_STDIO ? 1 : 0];
}

struct log_record *cap_record(unsigned layer, const char *path, uint32_t rflags)
{
	uint64_t id = log_record_id(layer, path);
	uint32_t i = (uint32_t)id & cap.index_mask;
	struct log_record *mine = NULL;
	for (uint32_t probes = 0; probes <= cap.index_mask; probes++, i = (i + 1) & cap.index_mask) {
		uint32_t v = __atomic_load_n(&cap.index[i], __ATOMIC_ACQUIRE);
		if (v == 0) {
			if (!mine) {
				mine = record_new(layer, path, id, rflags);
				if (!mine)
					return catch_all(layer);
			}
			uint32_t want = (uint32_t)(mine - cap.records) + 1, zero = 0;
			if (__atomic_compare_exchange_n(&cap.index[i], &zero, want, 0, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE))
				return mine;
			v = zero; /* someone else published here first: compare with theirs */
		}
		struct log_record *r = &cap.records[v - 1];
		if (r->id == id && r->layer == layer && strcmp(cap.strings + r->path, path) == 0) {
			if (mine) /* lost a race for the same path */
				__atomic_fetch_or(&mine->flags, (uint16_t)LOG_R_DEAD, __ATOMIC_RELAXED);
			return r;
		}
	}
	return catch_all(layer);
}

/* The record of a descriptor without a file, named name ("pipe:[INODE]" ...). Pipes and sockets
 * are numbered by inode, and a shell loop or a server makes thousands: once half the record table
 * is used, new ones share a record per kind, "pipe:[other]", "socket:[other]" (their calls and
 * bytes still counted exactly), so that files keep their room. */
static struct log_record *pseudo_record(unsigned layer, const char *name)
{
	char other[64];
	const char *b = strstr(name, ":[");
	size_t n = strlen(name);
	if (b && b - name < 32 && n > (size_t)(b - name) + 3 && name[n - 1] == ']' &&
	    strspn(b + 2, "0123456789") == n - (size_t)(b - name) - 3 &&
	    __atomic_load_n(&cap.hdr->nrecords, __ATOMIC_RELAXED) >= cap.hdr->max_records / 2) {
		snprintf(other, sizeof other, "%.*s:[other]", (int)(b - name), name);
		name = other;
	}
	return cap_record(layer, name, LOG_R_PSEUDO);
}

/* ---------- paths ---------- */

/* Lexical normalization of an absolute path: "//", "/./" and "/../" removed (symlinks kept). */
static void normalize(char *p)
{
	char *out = p, *in = p;
	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		char *seg = in;
		while (*in && *in != '/')
			in++;
		size_t n = (size_t)(in - seg);
		if (n == 1 && seg[0] == '.')
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, seg, n);
		out += n;
	}
	if (out == p)
		*out++ = '/';
	*out = 0;
}

static int fd_path(int fd, char *out, size_t len)
{
	if ((unsigned)fd < (unsigned)cap.nfd && cap.fds[fd].rec &&
	    !(cap.fds[fd].rec->flags & (LOG_R_PSEUDO | LOG_R_OVERFLOW))) {
		snprintf(out, len, "%s", cap.strings + cap.fds[fd].rec->path);
		return 0;
	}
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, len - 1);
	if (n <= 0 || out[0] != '/')
		return -1;
	out[n] = 0;
	return 0;
}

int cap_abspath(int dirfd, const char *path, char *out, size_t len)
{
	if (!path)
		return -1;
	size_t pl = strlen(path);
	if (path[0] == '/') {
		if (pl >= len)
			return -1;
		memcpy(out, path, pl + 1);
	} else {
		char base[CAP_PATH_MAX];
		if (dirfd == AT_FDCWD) {
			const char *c = cwd_buf[__atomic_load_n(&cwd_cur, __ATOMIC_ACQUIRE)];
			if (!c[0])
				return -1;
			snprintf(base, sizeof base, "%s", c);
		} else if (fd_path(dirfd, base, sizeof base) < 0) {
			return -1;
		}
		size_t bl = strlen(base);
		if (bl + 1 + pl >= len)
			return -1;
		memcpy(out, base, bl);
		out[bl] = '/';
		memcpy(out + bl + 1, path, pl + 1);
	}
	normalize(out);
	return 0;
}

static int has_prefix_dir(const char *p, const char *pre)
{
	size_t n = strlen(pre);
	while (n > 1 && pre[n - 1] == '/')
		n--;
	return strncmp(p, pre, n) == 0 && (p[n] == 0 || p[n] == '/');
}

int cap_path_excluded(const char *p)
{
	for (char **q = prefix_incl; q && *q; q++)
		if (has_prefix_dir(p, *q))
			return 0;
	if (has_prefix_dir(p, "/proc") || has_prefix_dir(p, "/sys"))
		return 1;
	if (has_prefix_dir(p, "/dev") && !has_prefix_dir(p, "/dev/shm"))
		return 1;
	if (cap.live_dir[0] && has_prefix_dir(p, cap.live_dir))
		return 1;
	for (char **q = prefix_excl; q && *q; q++)
		if (has_prefix_dir(p, *q))
			return 1;
	return 0;
}

/* After chdir/fchdir: refresh the cached cwd (one getcwd, off the I/O path). */
void cap_cwd_refresh(void)
{
	int next = !__atomic_load_n(&cwd_cur, __ATOMIC_RELAXED);
	if (getcwd(cwd_buf[next], CAP_PATH_MAX))
		__atomic_store_n(&cwd_cur, next, __ATOMIC_RELEASE);
}

/* ---------- descriptors ---------- */

/* O_APPEND writes land at the end of the file, which may hold data from before the open: one
 * fstat when the descriptor starts appending (open, F_SETFL), never on the read/write path. */
static uint64_t file_size(int fd)
{
	struct stat st;
	int saved = errno;
	uint64_t n = real.fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	errno = saved;
	return n;
}

static uint32_t ofd_alloc(int fd, uint32_t flags, uint64_t pos)
{
	uint32_t n = (uint32_t)cap.nfd;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = ((uint32_t)fd + k) % n;
		int32_t zero = 0;
		if (__atomic_load_n(&cap.ofds[i].refs, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&cap.ofds[i].refs, &zero, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			cap.ofds[i].pos = pos;
			cap.ofds[i].end = flags & CAP_OFD_APPEND ? file_size(fd) : 0;
			cap.ofds[i].flags = flags;
			return i;
		}
	}
	return 0; /* cannot happen: there are as many descriptions as descriptors */
}

static void ofd_put(uint32_t i)
{
	__atomic_fetch_sub(&cap.ofds[i].refs, 1, __ATOMIC_RELEASE);
}

/* Record flags that say how a file was used (LOG_R_DIR, LOG_R_DIRECT, LOG_R_CREAT, LOG_R_ERR_*): set once, read
 * first so that a file's later calls do not write its record's cache line again. The catch-all
 * record holds many files and gets none. */
static void rec_flag(struct log_record *r, uint16_t bits)
{
	if (r && r != &cap.records[0] && (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & bits) != bits)
		__atomic_fetch_or(&r->flags, bits, __ATOMIC_RELAXED);
}

/* Failures that are a program's normal questions rather than faults: a lookup of a name that is
 * not there, a create-if-absent that found it, a non-blocking descriptor with nothing ready, a
 * signal, a seek or terminal query on a pipe. The report does not treat them as errors. */
void cap_note_failure(struct log_record *r, int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
	case EEXIST:
	case EAGAIN:
	case EINTR:
	case ESPIPE:
	case ENOTTY:
		rec_flag(r, LOG_R_ERR_EXPECTED);
		break;
	default:
		rec_flag(r, LOG_R_ERR_FAULT);
		break;
	}
}

static uint32_t ofd_flags_of(int oflags)
{
	uint32_t f = 0;
	if (oflags & O_APPEND)
		f |= CAP_OFD_APPEND;
	if (oflags & O_DIRECT)
		f |= CAP_OFD_DIRECT;
	return f;
}

/* fd is about to get a record: cap.fd_top covers it (open and dup paths only, not the calls). */
static void fd_top_cover(int fd)
{
	int top = __atomic_load_n(&cap.fd_top, __ATOMIC_RELAXED);
	while (fd >= top && !__atomic_compare_exchange_n(&cap.fd_top, &top, fd + 1, 1, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED))
		;
}

static void fd_install(int fd, struct log_record *rec, struct log_record *srec, int oflags)
{
	struct cap_fd *f = &cap.fds[fd];
	fd_top_cover(fd);
	if (f->rec || f->srec) /* a descriptor we never saw closed: forget the old state */
		cap_fd_close(fd);
	f->ofd = ofd_alloc(fd, ofd_flags_of(oflags), 0);
	f->agg = 0;
	f->spos = 0;
	f->srec = srec;
	__atomic_store_n(&f->rec, rec, __ATOMIC_RELEASE);
}

void cap_fd_close(int fd)
{
	if ((unsigned)fd >= (unsigned)cap.nfd)
		return;
	struct cap_fd *f = &cap.fds[fd];
	if (!f->rec && !f->srec)
		return;
	__atomic_store_n(&f->rec, NULL, __ATOMIC_RELEASE);
	f->srec = NULL;
	if (CAP_UNLIKELY(f->agg)) {
		uint32_t a = f->agg;
		f->agg = 0;
		agg_fd_forget(fd, a);
	}
	ofd_put(f->ofd);
}

void cap_fd_dup(int oldfd, int newfd, uint64_t t0, uint64_t t1)
{
	if ((unsigned)newfd >= (unsigned)cap.nfd)
		return;
	/* a stream on newfd (stdout after dup2(fd, 1)) stays open on the new file: its stdio calls
	 * go on being counted, on that file's stdio record */
	int stream = cap.fds[newfd].srec != NULL;
	cap_fd_close(newfd);
	if ((unsigned)oldfd >= (unsigned)cap.nfd || !cap.fds[oldfd].rec)
		return;
	struct cap_fd *o = &cap.fds[oldfd], *n = &cap.fds[newfd];
	fd_top_cover(newfd);
	__atomic_fetch_add(&cap.ofds[o->ofd].refs, 1, __ATOMIC_RELAXED);
	n->ofd = o->ofd;
	n->agg = o->agg;
	if (n->agg)
		agg_fd_added(n->agg);
	n->srec = stream ? cap_record(LOG_LAYER_STDIO, cap.strings + o->rec->path, o->rec->flags & LOG_R_PSEUDO) : NULL;
	n->spos = stream ? cap.ofds[n->ofd].pos : 0;
	__atomic_store_n(&n->rec, o->rec, __ATOMIC_RELEASE);
	cap_trace_meta(o->rec, LOG_C_DUPS, 0, t0, t1);
	cap_note_meta(o->rec, LOG_C_DUPS, t0, t1, cap_mt());
}

void cap_fd_setfl(int fd, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return;
	struct cap_ofd *d = &cap.ofds[f->ofd];
	if ((flags & O_APPEND) && !(d->flags & CAP_OFD_APPEND))
		d->end = file_size(fd);
	if (flags & O_DIRECT)
		rec_flag(__atomic_load_n(&f->rec, __ATOMIC_ACQUIRE), LOG_R_DIRECT);
	d->flags = ofd_flags_of(flags) | (d->flags & (CAP_OFD_AGG_PASS | CAP_OFD_KSTALE | CAP_OFD_AGG_RDONLY));
}

void cap_fd_mark_dir(int fd)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (f)
		rec_flag(__atomic_load_n(&f->rec, __ATOMIC_ACQUIRE), LOG_R_DIR);
}

void cap_fd_set_pos(int fd, uint64_t pos)
{
	if ((unsigned)fd < (unsigned)cap.nfd && cap.fds[fd].rec)
		cap.ofds[cap.fds[fd].ofd].pos = pos;
}

static int kernel_name(char *s, size_t n);

/* An open of /proc/PID/fd/N (or /proc/self/fd/N) opens again the file behind another
 * descriptor, of this process or another (UCX shares its /dev/shm segments so): what the new
 * descriptor shows is that file, a path or a pipe, socket, memfd ... One readlink, at this open
 * only. 1 when abs was such a link and is now the file's name (*rflags LOG_R_PSEUDO for a
 * descriptor without a path); an unlinked file's " (deleted)" is cut, so it joins its record. */
static int proc_fd_reopen(char *abs, size_t len, int fd, uint32_t *rflags)
{
	static const char digits[] = "0123456789";
	size_t i = 6, k;
	if (fd < 0 || strncmp(abs, "/proc/", 6))
		return 0;
	if (!strncmp(abs + i, "self/", 5))
		i += 5;
	else if (!strncmp(abs + i, "thread-self/", 12))
		i += 12;
	else if ((k = strspn(abs + i, digits)) > 0 && abs[i + k] == '/')
		i += k + 1;
	else
		return 0;
	if (!strncmp(abs + i, "task/", 5) && (k = strspn(abs + i + 5, digits)) > 0 && abs[i + 5 + k] == '/')
		i += 5 + k + 1;
	if (strncmp(abs + i, "fd/", 3) || !abs[i + 3] || abs[i + 3 + strspn(abs + i + 3, digits)])
		return 0;
	char link[64], target[CAP_PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof target - 1);
	if (n <= 0 || (size_t)n >= len)
		return 0;
	target[n] = 0;
	if (kernel_name(target, (size_t)n)) {
		*rflags = LOG_R_PSEUDO;
	} else if (target[0] == '/') {
		if (n > 10 && !strcmp(target + n - 10, " (deleted)"))
			target[n - 10] = 0;
		*rflags = 0;
	} else {
		return 0;
	}
	memcpy(abs, target, strlen(target) + 1);
	return 1;
}

void cap_note_rw_failed(struct cap_fd *f, struct log_record *r, int kind, int64_t off, uint64_t t0, uint64_t t1)
{
	int e = errno;
	int how = cap_own_begin(cap_rec_owner(r)), mt = how == CAP_OWN_LOCKED;
	log_inc(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], mt);
	log_add(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, mt);
	cap_own_end(how);
	cap_trace_rw(r, kind, off >= 0 ? (uint64_t)off : cap.ofds[f->ofd].pos, -1, t0, t1);
	cap_note_failure(r, e);
	errno = e;
}

struct cap_fd *cap_note_open(int dirfd, const char *path, int flags, int fd, uint64_t t0, uint64_t t1)
{
	char abs[CAP_PATH_MAX];
	int saved = errno;
	struct cap_fd *ret = NULL;
	uint32_t rflags = 0;
	if (cap_abspath(dirfd, path, abs, sizeof abs) < 0 ||
	    ((!proc_fd_reopen(abs, sizeof abs, fd, &rflags) || !rflags) && cap_path_excluded(abs))) {
		if (fd >= 0 && fd < cap.nfd)
			cap_fd_close(fd);
		goto out;
	}
	struct log_record *r = rflags ? pseudo_record(LOG_LAYER_POSIX, abs) : cap_record(LOG_LAYER_POSIX, abs, 0);
	if (fd < 0) {
		cap_trace_meta(r, LOG_C_OPENS, 1, t0, t1);
		cap_note_meta(r, LOG_C_ERR_OPENS, t0, t1, cap_mt());
		cap_note_failure(r, saved);
		goto out;
	}
	if (fd >= cap.nfd) {
		__atomic_fetch_add(&cap.hdr->untracked_ops, 1, __ATOMIC_RELAXED);
		goto out;
	}
	if (r == &cap.records[0])
		__atomic_fetch_add(&cap.hdr->overflow_opens, 1, __ATOMIC_RELAXED);
	fd_install(fd, r, NULL, flags);
	if (flags & (O_DIRECTORY | O_DIRECT | O_CREAT | O_TRUNC))
		rec_flag(r, (flags & O_DIRECTORY ? LOG_R_DIR : 0) | (flags & O_DIRECT ? LOG_R_DIRECT : 0) |
				    (flags & (O_CREAT | O_TRUNC) ? LOG_R_CREAT : 0));
	if (CAP_UNLIKELY(agg_on))
		agg_note_open(&cap.fds[fd], fd, abs, flags);
	cap_trace_meta(r, LOG_C_OPENS, 0, t0, t1);
	cap_note_meta(r, LOG_C_OPENS, t0, t1, cap_mt());
	ret = &cap.fds[fd];
	if (cap.use_tsc && t1 > cap.calib_next)
		cap_calibrate(t1);
out:
	errno = saved;
	return ret;
}

void cap_note_pseudo_open(int fd, int fd2, const char *name, uint64_t t0, uint64_t t1)
{
	int saved = errno;
	struct log_record *r = pseudo_record(LOG_LAYER_POSIX, name);
	int fds[2] = {fd, fd2};
	for (int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (fds[i] >= cap.nfd) {
			__atomic_fetch_add(&cap.hdr->untracked_ops, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (r == &cap.records[0])
			__atomic_fetch_add(&cap.hdr->overflow_opens, 1, __ATOMIC_RELAXED);
		fd_install(fds[i], r, NULL, O_RDWR);
		cap_trace_meta(r, LOG_C_OPENS, 0, t0, t1);
		cap_note_meta(r, LOG_C_OPENS, t0, t1, cap_mt());
	}
	if (cap.use_tsc && t1 > cap.calib_next)
		cap_calibrate(t1);
	errno = saved;
}

/* The out-of-line form, for the callers off the common path (stdio bridge, aio, data moves). */
void cap_note_rw(struct cap_fd *f, int kind, int64_t off, ssize_t ret, uintptr_t mem, uint64_t t0, uint64_t t1)
{
	cap_note_rw_inline(f, kind, off, ret, mem, t0, t1);
}

void cap_note_meta_fd(struct cap_fd *f, enum log_counter which, int failed, uint64_t t0, uint64_t t1)
{
	/* read once: another thread may close the descriptor during the call */
	struct log_record *rec = __atomic_load_n(&f->rec, __ATOMIC_ACQUIRE);
	if (!rec)
		return;
	if (failed)
		cap_note_failure(rec, errno); /* the call's: nothing ran since */
	cap_trace_meta(rec, which, failed, t0, t1);
	if (!failed) {
		cap_note_meta(rec, which, t0, t1, cap_mt());
		return;
	}
	enum log_counter e = which == LOG_C_SEEKS ? LOG_C_ERR_SEEKS : which == LOG_C_FSYNCS ? LOG_C_ERR_SYNCS
											      : LOG_C_ERR_META;
	cap_note_meta(rec, e, t0, t1, cap_mt());
}

void cap_note_meta_path(int dirfd, const char *path, enum log_counter which, int failed, uint64_t t0,
			uint64_t t1)
{
	char abs[CAP_PATH_MAX];
	int saved = errno;
	if (cap_abspath(dirfd, path, abs, sizeof abs) == 0 && !cap_path_excluded(abs)) {
		struct log_record *r = cap_record(LOG_LAYER_POSIX, abs, 0);
		cap_trace_meta(r, which, failed, t0, t1);
		cap_note_meta(r, failed ? LOG_C_ERR_META : which, t0, t1, cap_mt());
		if (failed)
			cap_note_failure(r, saved);
	}
	errno = saved;
}

/* ---------- configuration ---------- */

static char **split_prefixes(const char *s)
{
	if (!s || !*s)
		return NULL;
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += *p == ':';
	char **v = mmap(NULL, n * sizeof(char *) + strlen(s) + 1, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		return NULL;
	char *buf = (char *)(v + n);
	strcpy(buf, s);
	size_t k = 0;
	for (char *tok = strtok(buf, ":"); tok; tok = strtok(NULL, ":"))
		if (tok[0] == '/')
			v[k++] = tok;
	v[k] = NULL;
	return v;
}

static void env_rank(int32_t *rank, int32_t *nprocs)
{
	static const char *const ranks[] = {"IOSTRATA_RANK", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
					    "PALS_RANKID", "FLUX_TASK_RANK", "SLURM_PROCID", NULL};
	static const char *const sizes[] = {"IOSTRATA_NPROCS", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
					    "FLUX_JOB_SIZE", NULL};
	*rank = -1;
	*nprocs = -1;
	for (int i = 0; ranks[i]; i++) {
		const char *v = getenv(ranks[i]);
		if (v && *v) {
			*rank = atoi(v);
			break;
		}
	}
	for (int i = 0; sizes[i]; i++) {
		const char *v = getenv(sizes[i]);
		if (v && *v) {
			*nprocs = atoi(v);
			break;
		}
	}
}

static const char *env_job(void)
{
	static const char *const jobs[] = {"IOSTRATA_JOB", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID",
					   "COBALT_JOBID", NULL};
	for (int i = 0; jobs[i]; i++) {
		const char *v = getenv(jobs[i]);
		if (v && *v)
			return v;
	}
	return "";
}

static uint64_t proc_start_ticks(void)
{
	char buf[1024];
	return read_small_file("/proc/self/stat", buf, sizeof buf) > 0 ? log_proc_starttime(buf) : 0;
}

static int mkdir_p(const char *dir, mode_t mode)
{
	int r = log_mkdir_p(dir, mode, real.mkdir);
	if (r < 0)
		errno = -r;
	return r < 0 ? -1 : 0;
}

/* The per-user live directory must be ours and private: -1 with errno when it is not. */
static int live_dir_ok(const char *dir)
{
	int r = log_live_dir_check(dir, real.mkdir, real.lstat);
	if (r < 0)
		errno = -r;
	return r < 0 ? -1 : 0;
}

static void choose_live_dir(void)
{
	const char *e = getenv("IOSTRATA_LIVE_DIR");
	if (e && *e) {
		snprintf(cap.live_dir, sizeof cap.live_dir, "%s", e);
		return;
	}
	snprintf(cap.live_dir, sizeof cap.live_dir, "/dev/shm/iostrata-%u", (unsigned)getuid());
	if (live_dir_ok(cap.live_dir) == 0)
		return;
	const char *t = getenv("TMPDIR");
	snprintf(cap.live_dir, sizeof cap.live_dir, "%s/iostrata-%u", t && *t ? t : "/tmp", (unsigned)getuid());
}

static void save_env(const char *name)
{
	const char *v = getenv(name);
	if (v && nsaved_env < 16)
		snprintf(saved_env[nsaved_env++], sizeof saved_env[0], "%s=%s", name, v);
}

/* ---------- start ---------- */

static void *map_anon(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Zeroes a table of map_anon's. In a fork child memset would copy every page the parent touched
 * and fault in every other one (48 pages of index and owner words at the default table size);
 * dropping the pages makes them read as zeros until written. */
static void zero_anon(void *p, size_t n)
{
	if (p && madvise(p, n, MADV_DONTNEED) != 0)
		memset(p, 0, n);
}

static int resolve_symbols(void)
{
	int missing = 0;
#define CAP_REAL(ret, name, args)                                   \
	real.name = (ret(*) args)dlsym(RTLD_NEXT, #name);           \
	if (!real.name && (!strcmp(#name, "read") || !strcmp(#name, "write") || !strcmp(#name, "open") || \
			   !strcmp(#name, "close")))                \
		missing++;
#include "capture/real.def"
#undef CAP_REAL
	return missing ? -1 : 0;
}

void cap_resolve_early(void)
{
	if (!real.read)
		resolve_symbols();
}

/* 1 when s, a /proc/self/fd link of n bytes, names a descriptor without a path; a memfd's
 * " (deleted)", which it always has, is cut off. */
static int kernel_name(char *s, size_t n)
{
	if (s[0] == '<' || !log_path_is_pseudo(s))
		return 0;
	if (!strncmp(s, "/memfd:", 7) && n > 10 && !strcmp(s + n - 10, " (deleted)"))
		s[n - 10] = 0;
	return 1;
}

/* The name the kernel shows for a descriptor without a path ("pipe:[INODE]", "socket:[INODE]",
 * "anon_inode:[eventfd]", "/memfd:NAME" ...): one readlink, at creation or start-up
 * only. Without /proc, pipes and sockets are named from fstat as the kernel would name them.
 * 0, or -1 when fd has a path or no name can be had. */
int cap_fd_kernel_name(int fd, char *out, size_t len)
{
	char link[64];
	int saved = errno, r = -1;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, len - 1);
	if (n > 0) {
		out[n] = 0;
		r = kernel_name(out, (size_t)n) ? 0 : -1;
	} else {
		struct stat st;
		if (real.fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
			snprintf(out, len, "%s:[%llu]", S_ISFIFO(st.st_mode) ? "pipe" : "socket",
				 (unsigned long long)st.st_ino);
			r = 0;
		}
	}
	errno = saved;
	return r;
}

/* Take over a descriptor the process inherited: fds 0-2 always, others when they are regular
 * files not excluded or descriptors without a path (pipes, sockets ...). A path is recorded under
 * its name, a pipe, socket or other object without one under the kernel's name, anything else on
 * 0-2 (a terminal, /dev/null) under std ("<STDIN>" ...); std is NULL above fd 2. */
static void adopt_fd(int fd, const char *std)
{
	char link[64], target[CAP_PATH_MAX];
	if (std && fcntl(fd, F_GETFD) < 0)
		return;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof target - 1);
	struct log_record *r, *sr = NULL;
	if (n > 0)
		target[n] = 0;
	if (n > 0 && kernel_name(target, (size_t)n)) {
		r = pseudo_record(LOG_LAYER_POSIX, target);
		if (std)
			sr = pseudo_record(LOG_LAYER_STDIO, target);
	} else if (n > 0 && target[0] == '/' && !cap_path_excluded(target)) {
		r = cap_record(LOG_LAYER_POSIX, target, 0);
		if (std)
			sr = cap_record(LOG_LAYER_STDIO, target, 0);
	} else if (std) {
		r = cap_record(LOG_LAYER_POSIX, std, LOG_R_PSEUDO);
		sr = cap_record(LOG_LAYER_STDIO, std, LOG_R_PSEUDO);
	} else {
		return;
	}
	/* An inherited stream need not start at 0 (`>>`, or the second program writing to the
	 * shell's stdout): take its real flags and position, once, here. */
	int fl = real.fcntl(fd, F_GETFL);
	off_t pos = real.lseek(fd, 0, SEEK_CUR);
	fd_install(fd, r, sr, fl >= 0 ? fl : O_RDWR);
	struct cap_ofd *d = &cap.ofds[cap.fds[fd].ofd];
	if (pos > 0)
		d->pos = (uint64_t)pos;
	cap.fds[fd].spos = d->flags & CAP_OFD_APPEND && d->end > d->pos ? d->end : d->pos;
	/* `2>&1`: one open file description behind two streams, so one position (kcmp is exact;
	 * where it is not available the streams keep positions of their own) */
	pid_t me = getpid();
	for (int e = 0; e < fd; e++) {
		if (cap.fds[e].rec != r || syscall(SYS_kcmp, me, me, KCMP_FILE, e, fd) != 0)
			continue;
		ofd_put(cap.fds[fd].ofd);
		cap.fds[fd].ofd = cap.fds[e].ofd;
		__atomic_fetch_add(&cap.ofds[cap.fds[e].ofd].refs, 1, __ATOMIC_RELAXED);
		break;
	}
}

/* Descriptors inherited above fd 2 (`exec 3>f` in a shell, a launcher's open files, a pipe from
 * the parent): found once at start in /proc/self/fd, so their reads and writes are not lost.
 * Directories and devices are left alone; anonymous inodes have no file type. */
static void adopt_inherited(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		struct stat st;
		if (*end || fd < 3 || fd == self || fd >= cap.nfd || cap.fds[fd].rec)
			continue;
		if (real.fstat((int)fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ||
						     S_ISSOCK(st.st_mode) || (st.st_mode & S_IFMT) == 0))
			adopt_fd((int)fd, NULL);
	}
	closedir(d);
}

static int path_join(char *dst, size_t len, const char *dir, const char *name, const char *suffix)
{
	size_t a = strlen(dir), b = strlen(name), c = strlen(suffix);
	if (a + 1 + b + c + 1 > len)
		return -1;
	memcpy(dst, dir, a);
	dst[a] = '/';
	memcpy(dst + a + 1, name, b);
	memcpy(dst + a + 1 + b, suffix, c + 1);
	return 0;
}

static int name_files(const char *host, uint64_t start_ns)
{
	char name[128];
	snprintf(name, sizeof name, "%.64s-%d-%llu.iost", host, (int)getpid(), (unsigned long long)(start_ns / 1000));
	if (path_join(cap.live_path, sizeof cap.live_path, cap.live_dir, name, "") < 0 ||
	    path_join(cap.final_path, sizeof cap.final_path, cap.out_dir, name, "") < 0 ||
	    path_join(cap.link_path, sizeof cap.link_path, cap.out_dir, name, ".live") < 0)
		return -ENAMETOOLONG;
	return 0;
}

static int out_dir_err; /* why the output directory is unusable, for the warning */

static void out_dir_setup(void)
{
	const char *o = getenv("IOSTRATA_OUT");
	char abs[CAP_PATH_MAX];
	if (!o || !*o)
		o = "iostrata-logs";
	if (cap_abspath(AT_FDCWD, o, abs, sizeof abs) < 0)
		snprintf(abs, sizeof abs, "%s", o);
	snprintf(cap.out_dir, sizeof cap.out_dir, "%s", abs);
	cap.out_dir_ok = mkdir_p(cap.out_dir, 0755) == 0 && real.access(cap.out_dir, W_OK | X_OK) == 0;
	out_dir_err = cap.out_dir_ok ? 0 : errno;
}

/* The command line for a new header: the program's vector at start-up, or, in a forked child,
 * the arguments the parent's header holds (packed, NUL-separated) and the parent's count. */
struct cap_args {
	uint32_t total;      /* the program's argc */
	char **argv;         /* its vector, or NULL: */
	const char *packed;  /* n arguments back to back */
	uint32_t npacked;
};

/* Arguments take at most a quarter of the string table, and 64 KiB: a command line of 6,000 file
 * names (`xargs rm`) or of 2 MiB (ARG_MAX) must leave room for the paths of the files, and a
 * reader wants the command, not every name. Whole arguments are stored, in order, until the next
 * would not fit; argc_total keeps the real count and LOG_F_ARGV_CUT says the list was cut. */
#define CAP_ARGV_BYTES 65536u

static void header_args(struct log_header *h, const struct cap_args *a)
{
	uint32_t budget = cap.string_cap / 4 < CAP_ARGV_BYTES ? cap.string_cap / 4 : CAP_ARGV_BYTES;
	uint32_t n = a->argv ? a->total : a->npacked, stored = 0, bytes = 0;
	const char *p = a->packed;

	h->argc_total = a->total;
	for (uint32_t i = 0; i < n; i++) {
		const char *s = a->argv ? a->argv[i] : p;
		if (!s)
			break; /* a vector shorter than its argc: what is there is the command */
		size_t len = strlen(s) + 1;
		p += a->argv ? 0 : len;
		if (len > budget - bytes)
			break;
		uint32_t off = string_add(s);
		if (off == UINT32_MAX)
			break;
		if (stored++ == 0)
			h->argv = off;
		bytes += (uint32_t)len;
	}
	h->argc = stored;
	if (stored < a->total)
		h->flags |= LOG_F_ARGV_CUT;
}

/* Create the live file and fill its header; 0 or -errno. */
static int live_create(uint32_t max_records, const struct cap_args *args)
{
	char host[256] = "unknown";
	gethostname(host, sizeof host - 1);
	uint32_t string_cap = max_records * 128u + 65536u;
	size_t rec_off = LOG_HEADER_SIZE + ((string_cap + 4095u) & ~4095u);
	size_t size = rec_off + (size_t)max_records * sizeof(struct log_record);
	/* the per-thread totals on pages of their own: a reader maps the header and these alone */
	size_t tot_off = (size + 4095u) & ~(size_t)4095u;
	size_t tot_size = LOG_TOTALS_SLOTS * sizeof(struct log_totals_slot);
	size = tot_off + tot_size;
	size_t trace_off = (size + 4095u) & ~(size_t)4095u;
	if (cap.trace)
		size = trace_off + cap.trace_nblocks * LOG_TRACE_BLOCK; /* sparse until used */
	/* The reference pair: the tick count halfway through the clock read, and not the first clock
	 * read of the process (it faults the vDSO's data in and lasts microseconds): a trace's user
	 * times must line up with the kernel's to the microsecond. */
	(void)mono_ns();
	uint64_t ta = __rdtsc();
	uint64_t start_ns = mono_ns();
	uint64_t t_start = ta + (__rdtsc() - ta) / 2;

	if (name_files(host, start_ns) < 0)
		return -ENAMETOOLONG;
	int fd = real.open(cap.live_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (real.ftruncate(fd, (off_t)size) < 0) {
		int e = errno;
		real.close(fd);
		real.unlink(cap.live_path);
		return -e;
	}
	void *m = real.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	real.close(fd);
	if (m == MAP_FAILED) {
		int e = errno;
		real.unlink(cap.live_path);
		return -e;
	}
	struct log_header *h = m;
	cap.hdr = h;
	cap.map_size = size;
	cap.strings = (char *)m + LOG_HEADER_SIZE;
	cap.string_cap = string_cap;
	cap.records = (struct log_record *)((char *)m + rec_off);
	cap.trace_base = cap.trace ? (char *)m + trace_off : NULL;

	log_live_header_init(h, max_records, string_cap, rec_off);
	h->sections[h->nsections++] = (struct log_section){LOG_SEC_TOTALS, 0, tot_off, tot_size, LOG_TOTALS_SLOTS};
	h->totals_slot_size = sizeof(struct log_totals_slot);
	cap_tot_reset((struct log_totals_slot *)(void *)((char *)m + tot_off));
	if (cap.trace) {
		h->sections[h->nsections++] = (struct log_section){LOG_SEC_TRACE, 0, trace_off,
								   cap.trace_nblocks * LOG_TRACE_BLOCK, cap.trace_nblocks};
		h->trace_block_size = LOG_TRACE_BLOCK;
	}
	h->pid = getpid();
	h->ppid = getppid();
	h->uid = getuid();
	h->gid = getgid();
	env_rank(&h->rank, &h->nprocs);
	h->start_ns = start_ns;
	struct timespec wt;
	clock_gettime(CLOCK_REALTIME, &wt);
	h->start_wall_ns = (uint64_t)wt.tv_sec * 1000000000ull + (uint64_t)wt.tv_nsec;
	h->exit_status = -1;
	h->clock_kind = cap.use_tsc ? LOG_CLOCK_TSC : LOG_CLOCK_NS;
	h->tsc_ref = cap.use_tsc ? t_start : 0;
	h->ns_ref = cap.use_tsc ? start_ns : 0;
	h->file_alignment = (uint32_t)cap.file_align;
	h->mem_alignment = (uint32_t)cap.mem_align;
	h->proc_start_ticks = proc_start_ticks();
	if (forked_start_ns) {
		h->fork_start_ns = forked_start_ns;
		h->flags |= LOG_F_FORKED_EXEC;
	}

	h->host = string_add(host);
	char exe[CAP_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	h->exe = string_add(exe);
	header_args(h, args);
	h->job = string_add(env_job());
	h->cwd = string_add(cwd_buf[cwd_cur]);
	h->outdir = string_add(cap.out_dir);
	h->live_path = string_add(cap.live_path);
	memcpy(h->magic, LOG_MAGIC, 8); /* last: a reader never sees a half-made header as valid */

	/* The catch-all records come first: record 0 is POSIX's, record 1 stdio's. */
	record_new(LOG_LAYER_POSIX, "<overflow>", log_record_id(LOG_LAYER_POSIX, "<overflow>"),
		   LOG_R_OVERFLOW | LOG_R_PSEUDO);
	record_new(LOG_LAYER_STDIO, "<overflow>", log_record_id(LOG_LAYER_STDIO, "<overflow>"),
		   LOG_R_OVERFLOW | LOG_R_PSEUDO);
	return 0;
}

/*
 * The job directory, announced in the live directory for a node daemon (docs/DAEMON.md, "New
 * processes"): a link dir-HASH.iostdir -> out_dir, made again by every process image (a new link
 * renamed over the old one, so its change time and a watcher both tell). A process that ends
 * before the daemon reads its live file still leads it to its final log. Two system calls at
 * start-up; nothing on the hot path.
 */
static void announce_out_dir(void)
{
	char name[CAP_PATH_MAX + 64], tmp[CAP_PATH_MAX + 96];
	int n = snprintf(name, sizeof name, "%s/dir-%016llx.iostdir", cap.live_dir,
			 (unsigned long long)log_record_id(0, cap.out_dir));
	if (n < 0 || (size_t)n >= sizeof name)
		return;
	snprintf(tmp, sizeof tmp, "%s.%d", name, (int)getpid());
	if (symlink(cap.out_dir, tmp) == 0 && real.rename(tmp, name) < 0)
		real.unlink(tmp);
}

static void link_live(void)
{
	if (!cap.out_dir_ok)
		return;
	if (symlink(cap.live_path, cap.link_path) < 0)
		cap.link_path[0] = 0;
	announce_out_dir();
}

static void disable(const char *what, int err)
{
	cap.nfd = 0;
	if (!getenv("IOSTRATA_QUIET"))
		cap_say("iostrata: capture disabled in pid %d: %s: %s", (int)getpid(), what, strerror(err));
}

/* Everything is set up here; any failure leaves capture off and the program untouched. */
static int cap_start(int argc, char **argv)
{
	const char *e;

	if (!getcwd(cwd_buf[0], CAP_PATH_MAX))
		cwd_buf[0][0] = 0;
	cap.use_tsc = tsc_usable();
	cap.file_align = 4096;
	cap.mem_align = 8;
	uint32_t maxr = CAP_DEFAULT_RECORDS;
	if ((e = getenv("IOSTRATA_MAX_RECORDS")) && *e) {
		unsigned long v = strtoul(e, NULL, 10);
		maxr = v < 16 ? 16 : v > CAP_MAX_RECORDS ? CAP_MAX_RECORDS : (uint32_t)v;
	}
	if ((e = getenv("IOSTRATA_TRACE")) && *e && *e != '0') {
		/* the trace area is reserved sparse: IOSTRATA_TRACE_MB (256) of address space, pages
		 * used only as threads fill their blocks */
		unsigned long mb = 256;
		const char *m = getenv("IOSTRATA_TRACE_MB");
		if (m && *m) {
			char *end;
			unsigned long v = strtoul(m, &end, 10);
			if (*end || v < 1 || v > 65536)
				cap_say("iostrata: IOSTRATA_TRACE_MB=%s is not a size in MiB from 1 to 65536; tracing "
					"into %lu MiB", m, mb);
			else
				mb = v;
		}
		cap.trace_nblocks = (uint64_t)mb * (1u << 20) / LOG_TRACE_BLOCK;
		cap.trace = 1;
		char why[200];
		if (log_zstd_load(why, sizeof why) < 0 && !getenv("IOSTRATA_QUIET"))
			cap_say("iostrata: the trace of pid %d will be stored uncompressed: %s", (int)getpid(), why);
	}
	prefix_excl = split_prefixes(getenv("IOSTRATA_EXCLUDE"));
	prefix_incl = split_prefixes(getenv("IOSTRATA_INCLUDE"));
	nsaved_env = 0;
	save_env("LD_PRELOAD");
	save_env("IOSTRATA_OUT");
	save_env("IOSTRATA_JOB");
	save_env("IOSTRATA_LIVE_DIR");
	save_env("IOSTRATA_MAX_RECORDS");
	save_env("IOSTRATA_EXCLUDE");
	save_env("IOSTRATA_INCLUDE");
	save_env("IOSTRATA_TSC_HZ");
	save_env("IOSTRATA_TRACE");
	save_env("IOSTRATA_TRACE_MB");
	save_env("IOSTRATA_AGGREGATE");
	save_env("IOSTRATA_MPI_LIB");
	e = getenv("IOSTRATA_MPI_LIB");
	snprintf(mpi_lib, sizeof mpi_lib, "%s", e && !strchr(e, ':') && !getenv("IOSTRATA_KERNEL") ? e : "");
	save_env("IOSTRATA_OMPI_LIB");
	e = getenv("IOSTRATA_OMPI_LIB");
	snprintf(ompi_lib, sizeof ompi_lib, "%s", e && !strchr(e, ':') && !getenv("IOSTRATA_KERNEL") ? e : "");
	choose_live_dir();
	out_dir_setup();

	struct rlimit rl;
	int nfd = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		nfd = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20) ? (1 << 20) : (int)rl.rlim_max;
	if (nfd < 1024)
		nfd = 1024;
	uint32_t isize = 1;
	while (isize < 2 * maxr)
		isize <<= 1;
	cap.fds = map_anon((size_t)nfd * sizeof(struct cap_fd));
	cap.ofds = map_anon((size_t)nfd * sizeof(struct cap_ofd));
	cap.index = map_anon((size_t)isize * sizeof(uint32_t));
	cap.own = map_anon((size_t)maxr * sizeof(uint32_t));
	cap_own_init();
	if (!cap.fds || !cap.ofds || !cap.index || !cap.own) {
		disable("cannot allocate tables", errno);
		return -1;
	}
	cap.index_mask = isize - 1;
	if (live_dir_ok(cap.live_dir) < 0) {
		disable(cap.live_dir, errno);
		return -1;
	}
	struct cap_args args = {.total = argc > 0 && argv ? (uint32_t)argc : 0, .argv = argv};
	int r = live_create(maxr, &args);
	if (r < 0) {
		disable(cap.live_path, -r);
		return -1;
	}
	if (!cap.out_dir_ok && !getenv("IOSTRATA_QUIET") && !getenv("IOSTRATA_OUT_WARNED"))
		cap_say("iostrata: cannot write logs to %s: %s; capture goes on in %s (iostrata recover -o DIR %s)",
			cap.out_dir, strerror(out_dir_err ? out_dir_err : EACCES), cap.live_path, cap.live_path);
	link_live();
	cap.nfd = nfd;
	adopt_fd(0, "<STDIN>");
	adopt_fd(1, "<STDOUT>");
	adopt_fd(2, "<STDERR>");
	adopt_inherited();
	cap_stdio_init();
	calibrate_start();
	agg_init();
	return 0;
}

/* IOSTRATA_FORKED=PID:START_NS, put by cap_exec_env into the environment of the program a
 * forked child execs when that child left no log: this image's header says so. It is for this
 * image only: removed before the program sees its environment (it never saw it set either). */
static void take_forked_env(void)
{
	const char *e = getenv("IOSTRATA_FORKED");
	if (!e)
		return;
	char *end;
	long pid = strtol(e, &end, 10);
	if (*end == ':' && pid == (long)getpid())
		forked_start_ns = strtoull(end + 1, NULL, 10);
	unsetenv("IOSTRATA_FORKED");
}

/* 1 when path's last component ends in suffix and names pid (HOST-PID-START_US.iost[.live]): what
 * IOSTRATA_EXECED may name. The variable is the user's own, but a stray one must not remove
 * anything else. */
static int own_log_name(const char *path, const char *suffix, long pid)
{
	const char *base = strrchr(path, '/');
	char mid[32];
	size_t n = strlen(path), k = strlen(suffix);
	snprintf(mid, sizeof mid, "-%ld-", pid);
	return base && n > k && !strcmp(path + n - k, suffix) && strstr(base, mid);
}

/* IOSTRATA_EXECED, put by cap_exec_env into the environment of the program an image execs when it
 * kept its live file through the exec (cap_finalize): the exec succeeded, so that image is over
 * and its final log stands for it; its live file and link go. Removed from the environment before
 * the program sees it, and ignored unless PID is this process (a stale one in a child). */
static void take_execed_env(void)
{
	const char *e = getenv("IOSTRATA_EXECED");
	if (!e)
		return;
	char *end, live[CAP_PATH_MAX], link[CAP_PATH_MAX];
	long pid = strtol(e, &end, 10);
	if (*end == ':' && pid == (long)getpid()) {
		unsigned long n = strtoul(end + 1, &end, 10);
		const char *p = end + 1;
		if (*end == ':' && n < sizeof live && strnlen(p, n) == n && strlen(p + n) < sizeof link) {
			memcpy(live, p, n);
			live[n] = 0;
			snprintf(link, sizeof link, "%s", p + n);
			if (link[0] && own_log_name(link, ".iost.live", pid))
				real.unlink(link);
			if (own_log_name(live, ".iost", pid))
				real.unlink(live);
		}
	}
	unsetenv("IOSTRATA_EXECED");
}

static void cap_atfork_child(void)
{
	int saved = errno; /* fork returns 0 in the child with errno as it was */
	cap_after_fork_child();
	errno = saved;
}

__attribute__((constructor)) static void cap_init(int argc, char **argv, char **envp)
{
	(void)envp;
	int saved = errno; /* main must find errno as the program left it (0 at start-up) */
	cap_guard++;
	if (resolve_symbols() < 0) {
		cap_guard--;
		errno = saved;
		return; /* without the real functions nothing can be done, not even a message */
	}
	take_forked_env();
	take_execed_env();
	const char *d = getenv("IOSTRATA_DISABLE");
	if (!(d && *d && *d != '0') && cap_start(argc, argv) == 0) {
		pthread_atfork(NULL, NULL, cap_atfork_child);
		if (agg_on) /* registered after: its child handler runs after core's */
			pthread_atfork(agg_fork_prepare, agg_fork_parent, agg_fork_child);
	}
	cap_guard--;
	errno = saved;
}

/* ---------- the end of a process image ---------- */

void cap_set_exit_status(int status)
{
	cap.have_status = 1;
	cap.exit_status = status;
}

static void remove_live(void)
{
	if (cap.link_path[0])
		real.unlink(cap.link_path);
	real.unlink(cap.live_path);
}

/* Did this image make a call we count? (log_image_counted, on the mapping) */
static int image_counted_something(const struct log_header *h)
{
	uint32_t n = __atomic_load_n(&h->nrecords, __ATOMIC_ACQUIRE);
	return log_image_counted(h, cap.records, n > h->max_records ? h->max_records : n);
}

/*
 * _exit may run in a signal handler, where loading zstd (dlopen, malloc) could deadlock on a lock
 * the interrupted code holds; but shells and most forked children end in _exit from their main
 * line. A handler runs with its signal blocked (unless SA_NODEFER), so an empty signal mask says
 * we are not in one: then the log is compressed like any other (a shell's log: 39 KiB -> 5 KiB).
 */
static int outside_signal_handler(void)
{
	sigset_t cur;
	return sigprocmask(SIG_BLOCK, NULL, &cur) == 0 && sigisemptyset(&cur);
}

/*
 * An image about to exec keeps its live file until the exec is known to have succeeded: if it
 * fails, the image goes on counting there, where a SIGKILL cannot take its counts (a mapping of
 * a removed file would be lost with the process). Its final log, written just before (or none:
 * a forked child that counted nothing), holds the same counters, and readers take the log, not
 * this file (docs/FORMAT.md, "An exec"). The next image removes the file at its
 * start (IOSTRATA_EXECED); after a program without the library, `iostrata recover` does.
 */
static void keep_live_for_exec(void)
{
	__atomic_fetch_or(&cap.hdr->flags, LOG_F_LIVE_KEPT, __ATOMIC_RELEASE);
	snprintf(execed_env, sizeof execed_env, "IOSTRATA_EXECED=%d:%zu:%s%s", (int)cap.hdr->pid, strlen(cap.live_path),
		 cap.live_path, cap.link_path);
}

void cap_finalize(enum cap_end how)
{
	int for_exec = how == CAP_END_EXEC;
	if (!cap.hdr || (cap.finalized && !cap.exec_pending))
		return;
	agg_flush_all(for_exec);
	cap_guard++;
	int saved = errno;
	struct log_header *h = cap.hdr;
	/* A forked child that execs without a counted call of its own (a shell's child between its
	 * fork and the command's exec) would leave a log of zeros repeating its parent's header:
	 * it leaves none, and the exec'd image records that it was forked and when. Counts cannot
	 * be lost: the log is left out only when every counter is 0. Unless the exec'd program is
	 * static: it writes no log to say where it came from, so this one stays. */
	cap.exec_no_log = for_exec && cap.forked && cap.out_dir_ok && !image_counted_something(h) &&
			  !cap_exec_target_static(cap.exec_path);
	int may_load = how != CAP_END_UNSAFE_CONTEXT || outside_signal_handler();
	/* zstd is loaded before the end time is taken: ld.so's open and reads of libzstd belong to
	 * this image, and the kernel layer, which tells an image from the one it execs by time, must
	 * not charge them to the next program. */
	if (!cap.exec_no_log && cap.out_dir_ok && may_load)
		log_zstd_load(NULL, 0);
	if (cap.use_tsc) {
		__atomic_store_n(&h->calib_seq, h->calib_seq & ~1ull, __ATOMIC_RELAXED);
		cap_calibrate(__rdtsc());
	}
	h->end_ns = mono_ns();
	if (cap.have_status)
		h->exit_status = cap.exit_status;
	char err[512];
	/* an exec's log says the live file is kept through it (keep_live_for_exec, just below): a
	 * reader that finds that file gone knows the exec succeeded or the image ended since */
	uint32_t add = LOG_F_FINISHED | (for_exec ? LOG_F_EXEC | LOG_F_EXEC_KEPT : 0);
	int r = -EACCES;
	if (cap.exec_no_log) {
		snprintf(forked_env, sizeof forked_env, "IOSTRATA_FORKED=%d:%llu", (int)h->pid,
			 (unsigned long long)h->start_ns);
		r = 0;
	} else if (cap.out_dir_ok) {
		/* loaded above when it may be, or used because it was loaded before (a traced image) */
		r = log_write_final_signal_safe(h, cap.map_size, NULL, cap.final_path, add, err, sizeof err);
	}
	if (r == 0 && for_exec) {
		keep_live_for_exec();
	} else if (r == 0) {
		remove_live();
	} else if (cap.out_dir_ok && !getenv("IOSTRATA_QUIET")) {
		/* an output directory unusable from the start was reported then, once */
		cap_say("iostrata: could not write %s (%s); counters kept in %s: run 'iostrata recover -o DIR %s'",
			cap.final_path, err, cap.live_path, cap.live_path);
	}
	cap.finalized = 1;
	cap.exec_pending = for_exec && r == 0;
	if (!for_exec)
		cap.nfd = 0; /* what runs after us (late destructors, stdio cleanup) passes through */
	errno = saved;
	cap_guard--;
}

/* glibc's list of open streams: exported (GLIBC_2.2.5), not declared by its headers */
extern FILE *_IO_list_all;

/* stdio buffers are flushed after every destructor; flush them now so their write(2)s are
 * counted: the data would have gone out a moment later anyway. Like glibc's own flush at exit,
 * without waiting for a stream's lock: another thread may hold it for good (fgets blocked on a
 * pipe). Such a stream is left to glibc, which flushes it after us, uncounted. */
static void flush_streams(void)
{
	if (!real.fflush_unlocked)
		return;
	for (FILE *fp = _IO_list_all; fp; fp = fp->_chain)
		if (ftrylockfile(fp) == 0) {
			real.fflush_unlocked(fp);
			funlockfile(fp);
		}
}

__attribute__((destructor)) static void cap_fini(void)
{
	if (!cap.hdr || cap.finalized)
		return;
	flush_streams();
	cap_finalize(CAP_END_EXIT);
}

/* A failed exec: the image goes on in its live file, live again (no end, not kept) before its
 * final log of the exec goes, so that a reader meets that log or a live file, never a kept file
 * without its log. The next end writes the final log again from the mapping. */
void cap_exec_failed(void)
{
	if (!cap.exec_pending)
		return;
	__atomic_store_n(&cap.hdr->end_ns, 0, __ATOMIC_RELAXED);
	__atomic_fetch_and(&cap.hdr->flags, ~(uint32_t)LOG_F_LIVE_KEPT, __ATOMIC_RELEASE);
	if (!cap.exec_no_log)
		real.unlink(cap.final_path);
	execed_env[0] = 0;
	cap.finalized = 0;
	cap.exec_pending = 0;
	cap.exec_no_log = 0;
	cap.exec_path = NULL;
}

/* The variables for one exec'd image only: a stale one in envp is left out. */
static int is_once_var(const char *e)
{
	return !strncmp(e, "IOSTRATA_FORKED=", 16) || !strncmp(e, "IOSTRATA_EXECED=", 16);
}

static char *const *exec_env_base(char *const envp[], char **buf, size_t nbuf, int forked);

static long raw_pread(int fd, void *b, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, b, n, off);
}

/* The SYS_NEEDS_* bits of the program path (a PATH search when it has no '/'). Raw system calls:
 * no wrapper counts them (only the MPI companions need it: under --kernel, which sees these
 * calls, there are none). */
static unsigned exec_needs(const char *path)
{
	char full[CAP_PATH_MAX];
	const char *dirs = strchr(path, '/') ? "" : getenv("PATH");
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		const char *end = strchrnul(dirs, ':');
		if (*path && strchr(path, '/'))
			snprintf(full, sizeof full, "%s", path);
		else
			snprintf(full, sizeof full, "%.*s/%s", (int)(end - dirs), dirs, path);
		long fd = syscall(SYS_openat, AT_FDCWD, full, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			unsigned needs = sys_elf_needs((int)fd, raw_pread);
			syscall(SYS_close, fd);
			return needs;
		}
		if (!*end || strchr(path, '/'))
			return 0;
		dirs = end + 1;
	}
}

/* LD_PRELOAD's value cur with each companion lib[i] (empty: none) added when want[i] or taken
 * out, into out; 1 when it differs from cur. */
static int preload_with(const char *cur, const char *const lib[2], const int want[2], char *out, size_t len)
{
	size_t k = 0;
	out[0] = 0;
	for (const char *p = cur; *p;) {
		size_t w = strcspn(p, ": ");
		int ours = 0;
		for (int i = 0; i < 2; i++)
			ours |= lib[i][0] && w == strlen(lib[i]) && !strncmp(p, lib[i], w);
		if (w && !ours)
			k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%s%.*s", k ? ":" : "", (int)w, p);
		p += w;
		p += *p != 0;
	}
	for (int i = 0; i < 2; i++)
		if (want[i] && lib[i][0])
			k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%s%s", k ? ":" : "", lib[i]);
	return k < len && strcmp(out, cur) != 0;
}

char *const *cap_exec_env(char *const envp[], char **buf, size_t nbuf, int forked, const char *path)
{
	char *const *env = exec_env_base(envp, buf, nbuf, forked);
	if (!env || (!mpi_lib[0] && !ompi_lib[0]) || !path)
		return env;
	size_t n = 0, pre = SIZE_MAX;
	for (; env[n]; n++)
		if (!strncmp(env[n], "LD_PRELOAD=", 11))
			pre = n;
	if (pre == SIZE_MAX || n + 1 > nbuf)
		return env;
	unsigned needs = exec_needs(path);
	const char *const libs[2] = {mpi_lib, ompi_lib};
	const int want[2] = {(needs & SYS_NEEDS_MPICH) != 0, (needs & SYS_NEEDS_OMPI) != 0};
	memcpy(preload_env, "LD_PRELOAD=", 11);
	if (!preload_with(env[pre] + 11, libs, want, preload_env + 11, sizeof preload_env - 11))
		return env;
	if (env != buf)
		memcpy(buf, env, (n + 1) * sizeof *buf);
	buf[pre] = preload_env;
	return buf;
}

static char *const *exec_env_base(char *const envp[], char **buf, size_t nbuf, int forked)
{
	size_t n = 0;
	int have[16] = {0}, stale = 0;
	if (!envp)
		return envp;
	for (; envp[n]; n++) {
		stale += is_once_var(envp[n]);
		for (int i = 0; i < nsaved_env; i++) {
			size_t k = strchr(saved_env[i], '=') - saved_env[i] + 1;
			if (!strncmp(envp[n], saved_env[i], k))
				have[i] = 1;
		}
	}
	/* (cap_finalize set it for this exec: posix_spawn's child is another process) */
	int execed = cap.exec_pending && execed_env[0];
	int missing = (forked ? 1 : 0) + execed;
	for (int i = 0; i < nsaved_env; i++)
		missing += !have[i];
	if ((!missing && !stale) || n + (size_t)missing + 1 > nbuf)
		return envp;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_once_var(envp[i]))
			buf[k++] = envp[i];
	for (int i = 0; i < nsaved_env; i++)
		if (!have[i])
			buf[k++] = saved_env[i];
	if (forked)
		buf[k++] = forked_env;
	if (execed)
		buf[k++] = execed_env;
	buf[k] = NULL;
	return buf;
}

/* The child of fork starts its own log; what it inherited points at the parent's records. */
void cap_after_fork_child(void)
{
	if (!cap.hdr || cap.finalized)
		return;
	cap_guard++;
	struct log_header *old = cap.hdr;
	size_t old_size = cap.map_size;
	char *old_strings = cap.strings;
	struct log_record *old_records = cap.records;
	int nfd = cap.nfd;
	cap.nfd = 0;
	cap.hdr = NULL;
	zero_anon(cap.index, ((size_t)cap.index_mask + 1) * sizeof(uint32_t));
	zero_anon(cap.own, (size_t)old->max_records * sizeof(uint32_t));
	cap_own_after_fork();
	cap_trace_after_fork();
	cap_maps_reset();
	cap_aio_reset();

	/* the parent's command line, all of it that its header holds (the same budget applies) */
	struct cap_args args = {.total = old->argc_total, .packed = old_strings + old->argv, .npacked = old->argc};
	forked_start_ns = 0; /* that was the parent image's own story */
	int r = live_create(old->max_records, &args);
	if (r < 0) {
		munmap(old, old_size);
		disable(cap.live_path, -r);
		cap_guard--;
		return;
	}
	link_live();
	cap.forked = 1;
	cap_stdio_init(); /* the stdio bridge is inherited: say so in the child's header too */
	for (int fd = 0; fd < cap.fd_top && fd < nfd; fd++) {
		struct cap_fd *f = &cap.fds[fd];
		if (f->rec) {
			struct log_record *o = f->rec;
			f->rec = cap_record(o->layer, old_strings + o->path, o->flags & LOG_R_PSEUDO);
		}
		if (f->srec) {
			struct log_record *o = f->srec;
			f->srec = cap_record(o->layer, old_strings + o->path, o->flags & LOG_R_PSEUDO);
		}
	}
	(void)old_records;
	munmap(old, old_size);
	calibrate_start();
	cap.nfd = nfd;
	cap_guard--;
}
