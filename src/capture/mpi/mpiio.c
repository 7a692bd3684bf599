/* SPDX-License-Identifier: MIT */
/*
 * The MPI companion of the preload library (libiostrata-mpich.so, and libiostrata-ompi.so from the
 * same source): MPI-IO through the profiling interface. MPICH and Open MPI define MPI_File_* as
 * weak aliases of PMPI_File_*, so a preloaded library that
 * defines MPI_File_* gets the program's calls and passes them on to PMPI_File_*. It records the
 * `mpiio` layer into the live log of libiostrata.so (found through its companion table,
 * capture/companion.h): one record per file, with the rank from MPI_COMM_WORLD; reads and writes
 * of every form, collective ones also counted apart, non-blocking ones when MPI_Wait/MPI_Test
 * complete them; the view (contiguous or not) and the hints in effect after open.
 *
 * It is built once per MPI ABI, against Debian's MPICH and Open MPI (mpi.h fixes the ABI: handles,
 * MPI_Status), and never linked with the MPI library: the PMPI symbols bind to the program's own
 * MPI when the library is loaded, which happens only in images that link that MPI (cap_exec_env,
 * `iostrata run`, by DT_NEEDED: libmpich or libmpi). The large-count (_c) forms of MPI 4 are
 * wrapped where mpi.h declares them (MPICH 4; Open MPI 4.1 has none). A request freed with
 * MPI_Request_free is counted when freed, with the bytes it asked (its status is never seen).
 * A forked child keeps the files opened before the fork (companion_carry.h); requests and split
 * collectives begun before it stay the parent's.
 *
 * The hot path (a read or write on a known handle) takes no lock and makes no system call: a
 * hash lookup of the handle, the clock, PMPI_Type_size and the shared record update of
 * log/record.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "capture/companion.h"
#include "capture/companion_carry.h"
#include "capture/core.h"
#include "log/record.h"

#define MPIIO_FILES 1024 /* open handles tracked at once (power of two) */
#define MPIIO_REQS 4096  /* non-blocking requests awaiting completion (power of two) */

enum { F_COLL = 1, F_AT = 2, F_SHARED = 4 }; /* how a form addresses the file */

/* One open MPI_File. key: the handle's bits; 0 free, 1 a deleted slot. */
struct mpiio_file {
	uintptr_t key;
	struct log_record *rec;
	uint64_t disp;  /* the view's displacement in bytes */
	uint64_t esize; /* the etype's size in bytes (1 for the default view) */
	uint64_t pos;   /* the individual file pointer, in etypes */
	int contig;     /* the file type is contiguous: offsets in the view map to disp + off * esize */
	/* the split collective in progress (one per handle, MPI-3.1 13.4.5) */
	int split_kind;
	unsigned split_how;
	int64_t split_off;
	uint64_t split_len, split_busy;
	uintptr_t split_mem;
	uint32_t carry; /* across fork: its record's place in the carry */
};

/* A non-blocking read or write, counted when it completes. */
struct mpiio_req {
	MPI_Request req;
	uint32_t used; /* 0 free, 1 claimed, 2 filled */
	int kind;
	unsigned how;
	int64_t off;
	uint64_t len;
	uintptr_t mem;
	uint64_t t0, t1; /* the initiating call */
	struct log_record *rec;
};

static const struct cap_companion_api *api;
static struct cap_state *st;
static struct mpiio_file files[MPIIO_FILES];
static struct mpiio_req reqs[MPIIO_REQS];
static uint32_t npending;
static int world_rank = -1;
/* Records of the mpiio layer are touched by MPI calls only: unless MPI was initialised with
 * MPI_THREAD_MULTIPLE, no two of those run at once (MPI-3.1 12.4.3), and plain updates do. A rank
 * of MPICH over UCX has a second thread from the start, so the preload library's own test
 * (cap_mt) would pay a locked instruction per counter: 124 -> 88 ns per MPI_File_write_at. */
static int mpiio_mt = 1;
/* inside one of our wrappers: MPI calls the library makes on its own (ROMIO's two-phase I/O
 * waits on its own requests) are not the program's */
static __thread int depth __attribute__((tls_model("initial-exec")));

/* ---------- start ---------- */

__attribute__((constructor)) static void mpiio_init(void)
{
	cap_companion_fn fn = (cap_companion_fn)dlsym(RTLD_DEFAULT, CAP_COMPANION_SYMBOL);
	const struct cap_companion_api *a = fn ? fn() : NULL;
	if (!a || a->version != CAP_COMPANION_VERSION || a->size < sizeof *a)
		return; /* without libiostrata.so every wrapper passes through */
	api = a;
	st = a->state;
}

/* ---------- fork ---------- */

/* A child's log is a new one (core.c): the files open before the fork get their records in
 * it; the requests and split collectives in progress stay the parent's (it started them, and
 * the library may well complete them there). */
static struct cap_carry carry;

static void mpiio_fork_prepare(void)
{
	size_t need = 0;
	if (!st || st->nfd <= 0)
		return;
	for (uint32_t i = 0; i < MPIIO_FILES; i++)
		if (__atomic_load_n(&files[i].key, __ATOMIC_ACQUIRE) > 1)
			need += cap_carry_need(st, files[i].rec);
	if (cap_carry_alloc(&carry, need) < 0)
		return;
	for (uint32_t i = 0; i < MPIIO_FILES; i++)
		files[i].carry = files[i].key > 1 ? cap_carry_put(&carry, st, files[i].rec) : 0;
}

static void mpiio_fork_parent(void)
{
	cap_carry_free(&carry);
}

static void mpiio_fork_child(void)
{
	int e = errno;
	memset(reqs, 0, sizeof reqs);
	npending = 0;
	for (uint32_t i = 0; i < MPIIO_FILES; i++) {
		struct mpiio_file *f = &files[i];
		if (f->key <= 1)
			continue;
		f->split_kind = 0;
		f->rec = st->nfd > 0 ? cap_carry_take(&carry, api, f->carry) : NULL;
		if (!f->rec) /* not carried (no room, or the child has no log): no longer tracked */
			f->key = 1;
	}
	cap_carry_free(&carry);
	errno = e;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Registered at the first tracked file, after core.c's handlers: the child's log exists when
 * mpiio_fork_child runs. */
static void mpiio_fork_register(void)
{
	pthread_atfork(mpiio_fork_prepare, mpiio_fork_parent, mpiio_fork_child);
}

static inline __attribute__((always_inline)) int mpiio_active(void)
{
	return CAP_LIKELY(st != NULL) && st->nfd > 0 && !depth;
}

static inline __attribute__((always_inline)) uint64_t mpiio_now(void)
{
	if (CAP_LIKELY(st->use_tsc))
		return __rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------- handles ---------- */

static inline uint32_t hash_ptr(uintptr_t k, uint32_t mask)
{
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

static inline __attribute__((always_inline)) struct mpiio_file *file_find(MPI_File fh)
{
	uintptr_t k = (uintptr_t)fh;
	uint32_t i = hash_ptr(k, MPIIO_FILES - 1);
	for (uint32_t n = 0; n < MPIIO_FILES; n++, i = (i + 1) & (MPIIO_FILES - 1)) {
		uintptr_t v = __atomic_load_n(&files[i].key, __ATOMIC_ACQUIRE);
		if (v == k)
			return &files[i];
		if (v == 0)
			return NULL;
	}
	return NULL;
}

/* The tracked handle fh when the call should be recorded, else NULL. */
static inline __attribute__((always_inline)) struct mpiio_file *file_get(MPI_File fh)
{
	if (!mpiio_active() || fh == MPI_FILE_NULL)
		return NULL;
	return file_find(fh);
}

static struct mpiio_file *file_add(MPI_File fh, struct log_record *rec)
{
	uintptr_t k = (uintptr_t)fh;
	uint32_t i = hash_ptr(k, MPIIO_FILES - 1);
	for (uint32_t n = 0; n < MPIIO_FILES; n++, i = (i + 1) & (MPIIO_FILES - 1)) {
		uintptr_t v = __atomic_load_n(&files[i].key, __ATOMIC_ACQUIRE);
		if (v > 1)
			continue;
		struct mpiio_file *f = &files[i];
		if (!__atomic_compare_exchange_n(&f->key, &v, (uintptr_t)1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		memset((char *)f + sizeof f->key, 0, sizeof *f - sizeof f->key);
		f->rec = rec;
		f->esize = 1;
		f->contig = 1;
		__atomic_store_n(&f->key, k, __ATOMIC_RELEASE);
		pthread_once(&fork_once, mpiio_fork_register);
		return f;
	}
	return NULL; /* table full: the handle's calls go unrecorded */
}

/* ---------- what a call updates ---------- */

static inline uint64_t type_bytes(MPI_Datatype dt, MPI_Count count)
{
	MPI_Count sz = 0;
	if (count <= 0)
		return 0;
#ifdef MPICH_VERSION
	/* MPICH's predefined types carry their size in the handle (kind bits 30-31 = 1, size in bits
	 * 8-15, MPICH's ABI since 3.1): no call for MPI_BYTE, MPI_INT, MPI_DOUBLE ... */
	if (((unsigned)dt >> 30) == 1 && ((unsigned)dt & 0xff00))
		return (uint64_t)(((unsigned)dt >> 8) & 0xff) * (uint64_t)count;
#endif
	if (PMPI_Type_size_x(dt, &sz) != MPI_SUCCESS || sz <= 0)
		return 0;
	return (uint64_t)sz * (uint64_t)count;
}

/* Bytes a read moved: the status's count when there is one (a read stops at the end of the
 * file), else what was asked. */
static inline uint64_t status_bytes(MPI_Status *status, uint64_t asked)
{
#if MPI_VERSION >= 4
	MPI_Count n; /* a large-count read may move more than INT_MAX bytes */
	if (status == MPI_STATUS_IGNORE || PMPI_Get_count_c(status, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n == MPI_UNDEFINED || n < 0)
		return asked;
#else
	int n;
	if (status == MPI_STATUS_IGNORE || PMPI_Get_count(status, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED ||
	    n < 0)
		return asked;
#endif
	return (uint64_t)n;
}

/* The byte offset of an access of len bytes by a form addressed as how (-1: not known: the shared
 * pointer, or a view with holes); the individual pointer moves past it. */
static inline int64_t access_offset(struct mpiio_file *f, unsigned how, MPI_Offset off, uint64_t len)
{
	if (how & F_SHARED)
		return -1;
	if (!(how & F_AT)) {
		uint64_t et = len / f->esize;
		off = (MPI_Offset)(mpiio_mt ? __atomic_fetch_add(&f->pos, et, __ATOMIC_RELAXED) : f->pos);
		if (!mpiio_mt)
			f->pos += et;
	}
	return f->contig && off >= 0 ? (int64_t)(f->disp + (uint64_t)off * f->esize) : -1;
}

/* A read or write whose offset is not known: everything but the offset-derived counters. */
static void note_access_nooff(struct log_record *r, int kind, uint64_t len, uint64_t t0, uint64_t t1, int mt)
{
	uint64_t *c = r->counters;
	const int w = kind == LOG_KIND_WRITE;
	log_inc(&c[w ? LOG_C_WRITES : LOG_C_READS], mt);
	log_add(&c[w ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ], len, mt);
	log_inc(w ? &r->write_hist[log_hist_bucket(len)] : &r->read_hist[log_hist_bucket(len)], mt);
	uint64_t prev_kind = log_xchg(&r->last_kind, (uint64_t)kind, mt);
	if (prev_kind && prev_kind != (uint64_t)kind)
		log_inc(&c[LOG_C_RW_SWITCHES], mt);
	log_common_add(r->sizes, &r->sizes_other, (int64_t)len, mt);
	log_add(&c[w ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, mt);
	log_first(&c[w ? LOG_C_WRITE_FIRST : LOG_C_READ_FIRST], t0);
	log_max(&c[w ? LOG_C_WRITE_LAST : LOG_C_READ_LAST], t1, mt);
}

static inline void note_rw(struct log_record *r, int kind, unsigned how, int64_t off, uint64_t len, uintptr_t mem,
			   uint64_t t0, uint64_t t1)
{
	int mt = mpiio_mt;
	if (off >= 0)
		log_note_access(r, kind, (uint64_t)off, len, mem, t0, t1, st->file_align, st->mem_align, mt);
	else
		note_access_nooff(r, kind, len, t0, t1, mt);
	if (how & F_COLL)
		log_inc(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_COLL_WRITES : LOG_C_COLL_READS], mt);
}

static __attribute__((cold, noinline)) void note_rw_failed(struct log_record *r, int kind, uint64_t t0, uint64_t t1)
{
	int mt = mpiio_mt;
	log_inc(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], mt);
	log_add(&r->counters[kind == LOG_KIND_WRITE ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, mt);
	__atomic_fetch_or(&r->flags, (uint16_t)LOG_R_ERR_FAULT, __ATOMIC_RELAXED);
}

/* After a blocking read or write (rc its return). */
static inline __attribute__((always_inline)) void rw_done(struct mpiio_file *f, int kind, unsigned how, MPI_Offset off,
							  const void *buf, MPI_Count count, MPI_Datatype dt,
							  MPI_Status *status, int rc, uint64_t t0)
{
	uint64_t t1 = mpiio_now();
	int e = errno;
	if (CAP_UNLIKELY(rc != MPI_SUCCESS)) {
		note_rw_failed(f->rec, kind, t0, t1);
	} else {
		uint64_t len = type_bytes(dt, count);
		if (kind == LOG_KIND_READ)
			len = status_bytes(status, len);
		note_rw(f->rec, kind, how, access_offset(f, how, off, len), len, (uintptr_t)buf, t0, t1);
	}
	errno = e;
}

static void note_meta(struct log_record *r, enum log_counter which, int rc, uint64_t t0, uint64_t t1)
{
	int mt = mpiio_mt;
	if (rc != MPI_SUCCESS) {
		enum log_counter err = which == LOG_C_OPENS ? LOG_C_ERR_OPENS
				       : which == LOG_C_SEEKS ? LOG_C_ERR_SEEKS
				       : which == LOG_C_FSYNCS ? LOG_C_ERR_SYNCS
							       : LOG_C_ERR_META;
		log_inc(&r->counters[err], mt);
		log_add(&r->counters[LOG_C_TIME_META], t1 - t0, mt);
		__atomic_fetch_or(&r->flags, (uint16_t)LOG_R_ERR_FAULT, __ATOMIC_RELAXED);
		return;
	}
	log_note_meta(r, which, t0, t1, mt);
}

/* ---------- non-blocking requests ---------- */

/* A request handle's bits: an int in MPICH, a pointer in Open MPI. */
static inline uint32_t hash_req(MPI_Request q)
{
	uintptr_t k = 0;
	memcpy(&k, &q, sizeof q < sizeof k ? sizeof q : sizeof k);
	return hash_ptr(k + 1, MPIIO_REQS - 1);
}

static struct mpiio_req *req_find(MPI_Request q)
{
	uint32_t i = hash_req(q);
	for (uint32_t n = 0; n < 32; n++, i = (i + 1) & (MPIIO_REQS - 1)) {
		struct mpiio_req *e = &reqs[i];
		if (__atomic_load_n(&e->used, __ATOMIC_ACQUIRE) == 2 && e->req == q)
			return e;
	}
	return NULL;
}

static void req_complete(struct mpiio_req *e, MPI_Status *status)
{
	uint64_t len = e->kind == LOG_KIND_READ ? status_bytes(status, e->len) : e->len;
	note_rw(e->rec, e->kind, e->how, e->off, len, e->mem, e->t0, e->t1);
	log_inc(&e->rec->counters[LOG_C_NB_OPS], mpiio_mt);
	__atomic_store_n(&e->used, 0, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&npending, 1, __ATOMIC_RELAXED);
}

/* After a non-blocking read or write was started: remembered until it completes, or counted now
 * when the table has no room near its slot (then it is counted as asked, and once). */
static void req_started(struct mpiio_file *f, int kind, unsigned how, MPI_Offset off, const void *buf, MPI_Count count,
			MPI_Datatype dt, MPI_Request *rq, int rc, uint64_t t0)
{
	uint64_t t1 = mpiio_now();
	int e = errno;
	if (rc != MPI_SUCCESS) {
		note_rw_failed(f->rec, kind, t0, t1);
		errno = e;
		return;
	}
	uint64_t len = type_bytes(dt, count);
	int64_t o = access_offset(f, how, off, len);
	uint32_t i = hash_req(*rq);
	for (uint32_t n = 0; n < 32; n++, i = (i + 1) & (MPIIO_REQS - 1)) {
		struct mpiio_req *q = &reqs[i];
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&q->used, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		*q = (struct mpiio_req){.req = *rq, .used = 1, .kind = kind, .how = how, .off = o, .len = len,
					.mem = (uintptr_t)buf, .t0 = t0, .t1 = t1, .rec = f->rec};
		__atomic_fetch_add(&npending, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&q->used, 2, __ATOMIC_RELEASE);
		errno = e;
		return;
	}
	note_rw(f->rec, kind, how, o, len, (uintptr_t)buf, t0, t1);
	log_inc(&f->rec->counters[LOG_C_NB_OPS], mpiio_mt);
	errno = e;
}

/* A completion call (MPI_Wait/MPI_Test families) needs to look at its requests only while some
 * file request is pending and the call is the program's own. */
static inline __attribute__((always_inline)) int reqs_pending(void)
{
	return __atomic_load_n(&npending, __ATOMIC_RELAXED) != 0 && mpiio_active();
}

/* The pending file requests among rq[0..n): their indices into idx and entries into ent, which
 * hold room for n; returns how many. */
static int reqs_match(int n, MPI_Request *rq, int *idx, struct mpiio_req **ent)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		struct mpiio_req *e = rq[i] != MPI_REQUEST_NULL ? req_find(rq[i]) : NULL;
		if (e) {
			idx[m] = i;
			ent[m++] = e;
		}
	}
	return m;
}

static int reqs_count(int n, MPI_Request *rq)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		m += rq[i] != MPI_REQUEST_NULL && req_find(rq[i]) != NULL;
	return m;
}

/* ---------- hints and views ---------- */

static int info_is(MPI_Info info, const char *key, const char *want)
{
	char k[64], v[64];
	int flag = 0;
	snprintf(k, sizeof k, "%s", key);
	if (PMPI_Info_get(info, k, (int)sizeof v - 1, v, &flag) != MPI_SUCCESS || !flag)
		return 0;
	return want ? !strcmp(v, want) : atoi(v);
}

static void note_hints(MPI_File fh, struct log_record *r)
{
	MPI_Info info;
	if (PMPI_File_get_info(fh, &info) != MPI_SUCCESS)
		return;
	int mt = mpiio_mt;
	if (info_is(info, "romio_cb_write", "disable") || info_is(info, "romio_cb_read", "disable"))
		log_inc(&r->counters[LOG_C_CB_DISABLED], mt);
	if (info_is(info, "romio_ds_write", "disable") || info_is(info, "romio_ds_read", "disable"))
		log_inc(&r->counters[LOG_C_DS_DISABLED], mt);
	int nodes = info_is(info, "cb_nodes", NULL);
	if (nodes > 0)
		log_max(&r->counters[LOG_C_CB_NODES], (uint64_t)nodes, mt);
	PMPI_Info_free(&info);
}

/* 1 when a type has no holes: its data fill [0, extent) */
static int type_contiguous(MPI_Datatype t)
{
	MPI_Aint lb, extent;
	int size;
	if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_true_extent(t, &lb, &extent) != MPI_SUCCESS)
		return 0;
	return lb == 0 && (MPI_Aint)size == extent;
}

/* The record of an MPI file name, relative names from the working directory; ROMIO's
 * "fs:" prefix (ufs:, nfs:, lustre: ...) is no part of the path. */
static struct log_record *name_record(const char *name)
{
	char abs[CAP_PATH_MAX];
	const char *colon = name ? strchr(name, ':') : NULL;
	if (colon && colon - name >= 2 && colon - name <= 8 && name[0] != '/') {
		int letters = 1;
		for (const char *p = name; p < colon; p++)
			letters &= (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');
		if (letters)
			name = colon + 1;
	}
	if (!name || api->abspath(AT_FDCWD, name, abs, sizeof abs) < 0 || api->excluded(abs))
		return NULL;
	struct log_record *r = api->record(LOG_LAYER_MPIIO, abs, 0);
	if (r && world_rank >= 0)
		r->rank = world_rank;
	return r;
}

/* ---------- metadata ---------- */

CAP_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	if (!mpiio_active())
		return PMPI_File_open(comm, filename, amode, info, fh);
	if (world_rank < 0) {
		int level = MPI_THREAD_MULTIPLE;
		PMPI_Query_thread(&level);
		mpiio_mt = level == MPI_THREAD_MULTIPLE;
		PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	}
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_open(comm, filename, amode, info, fh);
	depth--;
	uint64_t t1 = mpiio_now();
	int e = errno;
	depth++; /* what we ask MPI below is not the program's */
	struct log_record *r = name_record(filename);
	if (r) {
		note_meta(r, LOG_C_OPENS, rc, t0, t1);
		if (rc == MPI_SUCCESS && file_add(*fh, r))
			note_hints(*fh, r);
	}
	depth--;
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_close(MPI_File *fh)
{
	struct mpiio_file *f = fh ? file_get(*fh) : NULL;
	if (!f)
		return PMPI_File_close(fh);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_close(fh);
	depth--;
	int e = errno;
	note_meta(f->rec, LOG_C_CLOSES, rc, t0, mpiio_now());
	if (rc == MPI_SUCCESS)
		__atomic_store_n(&f->key, (uintptr_t)1, __ATOMIC_RELEASE);
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_sync(MPI_File fh)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return PMPI_File_sync(fh);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_sync(fh);
	depth--;
	int e = errno;
	note_meta(f->rec, LOG_C_FSYNCS, rc, t0, mpiio_now());
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return PMPI_File_set_size(fh, size);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_set_size(fh, size);
	depth--;
	int e = errno;
	note_meta(f->rec, LOG_C_META_OTHER, rc, t0, mpiio_now());
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return PMPI_File_preallocate(fh, size);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_preallocate(fh, size);
	depth--;
	int e = errno;
	note_meta(f->rec, LOG_C_META_OTHER, rc, t0, mpiio_now());
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return PMPI_File_get_size(fh, size);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_get_size(fh, size);
	depth--;
	int e = errno;
	note_meta(f->rec, LOG_C_STATS, rc, t0, mpiio_now());
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
				 const char *datarep, MPI_Info info)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	uint64_t t1 = mpiio_now();
	int e = errno;
	note_meta(f->rec, LOG_C_META_OTHER, rc, t0, t1);
	if (rc == MPI_SUCCESS) {
		uint64_t es = type_bytes(etype, 1);
		f->disp = disp > 0 ? (uint64_t)disp : 0;
		f->esize = es ? es : 1;
		f->pos = 0; /* set_view resets the file pointers */
		f->contig = type_contiguous(filetype);
		if (!f->contig)
			log_inc(&f->rec->counters[LOG_C_NONCONTIG_VIEWS], mpiio_mt);
	}
	depth--;
	errno = e;
	return rc;
}

static int seek_common(MPI_File fh, MPI_Offset offset, int whence, int shared)
{
	struct mpiio_file *f = file_get(fh);
	if (!f)
		return shared ? PMPI_File_seek_shared(fh, offset, whence) : PMPI_File_seek(fh, offset, whence);
	uint64_t t0 = mpiio_now();
	depth++;
	int rc = shared ? PMPI_File_seek_shared(fh, offset, whence) : PMPI_File_seek(fh, offset, whence);
	uint64_t t1 = mpiio_now();
	int e = errno;
	note_meta(f->rec, LOG_C_SEEKS, rc, t0, t1);
	MPI_Offset p;
	if (rc == MPI_SUCCESS && !shared && PMPI_File_get_position(fh, &p) == MPI_SUCCESS)
		f->pos = (uint64_t)p;
	depth--;
	errno = e;
	return rc;
}

CAP_EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	return seek_common(fh, offset, whence, 0);
}

CAP_EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	return seek_common(fh, offset, whence, 1);
}

/* ---------- split collectives ---------- */

static void split_begun(struct mpiio_file *f, int kind, unsigned how, MPI_Offset off, const void *buf, MPI_Count count,
			MPI_Datatype dt, int rc, uint64_t t0)
{
	uint64_t t1 = mpiio_now();
	int e = errno;
	if (rc != MPI_SUCCESS) {
		note_rw_failed(f->rec, kind, t0, t1);
	} else {
		f->split_len = type_bytes(dt, count);
		f->split_off = access_offset(f, how, off, f->split_len);
		f->split_kind = kind;
		f->split_how = how;
		f->split_mem = (uintptr_t)buf;
		f->split_busy = t1 - t0;
	}
	errno = e;
}

/* The split collective's _end: one read or write, timed over both halves. */
static void split_ended(struct mpiio_file *f, int kind, MPI_Status *status, int rc, uint64_t t0)
{
	uint64_t t1 = mpiio_now();
	int e = errno;
	if (f->split_kind != kind) {
		/* no _begin of ours (it failed, or ran before the handle was known) */
	} else if (rc != MPI_SUCCESS) {
		note_rw_failed(f->rec, kind, t0, t1);
	} else {
		uint64_t len = kind == LOG_KIND_READ ? status_bytes(status, f->split_len) : f->split_len;
		uint64_t busy = f->split_busy + (t1 - t0);
		note_rw(f->rec, kind, f->split_how, f->split_off, len, f->split_mem, t1 - busy, t1);
	}
	f->split_kind = 0;
	errno = e;
}

/* ---------- completion of non-blocking requests ---------- */

CAP_EXPORT int MPI_Wait(MPI_Request *rq, MPI_Status *status)
{
	struct mpiio_req *e;
	if (CAP_LIKELY(!reqs_pending()) || !(e = req_find(*rq)))
		return PMPI_Wait(rq, status);
	MPI_Status mine;
	MPI_Status *s = status == MPI_STATUS_IGNORE ? &mine : status;
	depth++;
	int rc = PMPI_Wait(rq, s);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS)
		req_complete(e, s);
	errno = err;
	return rc;
}

CAP_EXPORT int MPI_Test(MPI_Request *rq, int *flag, MPI_Status *status)
{
	struct mpiio_req *e;
	if (CAP_LIKELY(!reqs_pending()) || !(e = req_find(*rq)))
		return PMPI_Test(rq, flag, status);
	MPI_Status mine;
	MPI_Status *s = status == MPI_STATUS_IGNORE ? &mine : status;
	depth++;
	int rc = PMPI_Test(rq, flag, s);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS && *flag)
		req_complete(e, s);
	errno = err;
	return rc;
}

/* The status of the i-th request of an array call, or MPI_STATUS_IGNORE. */
static inline MPI_Status *nth_status(MPI_Status *statuses, int i)
{
	return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

CAP_EXPORT int MPI_Waitall(int n, MPI_Request rq[], MPI_Status statuses[])
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Waitall(n, rq, statuses);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	depth++;
	int rc = PMPI_Waitall(n, rq, statuses);
	depth--;
	int err = errno;
	for (int j = 0; j < m; j++)
		if (rc == MPI_SUCCESS || rq[idx[j]] == MPI_REQUEST_NULL)
			req_complete(ent[j], nth_status(statuses, idx[j]));
	errno = err;
	return rc;
}

CAP_EXPORT int MPI_Testall(int n, MPI_Request rq[], int *flag, MPI_Status statuses[])
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Testall(n, rq, flag, statuses);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	depth++;
	int rc = PMPI_Testall(n, rq, flag, statuses);
	depth--;
	int err = errno;
	for (int j = 0; j < m; j++)
		if (rc == MPI_SUCCESS && *flag)
			req_complete(ent[j], nth_status(statuses, idx[j]));
	errno = err;
	return rc;
}

/* Waitany/Testany: the one request that completed, at *index. */
static void any_done(int m, const int *idx, struct mpiio_req **ent, int index, MPI_Status *status)
{
	for (int j = 0; j < m; j++)
		if (idx[j] == index)
			req_complete(ent[j], status);
}

CAP_EXPORT int MPI_Waitany(int n, MPI_Request rq[], int *index, MPI_Status *status)
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Waitany(n, rq, index, status);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	MPI_Status mine;
	MPI_Status *s = status == MPI_STATUS_IGNORE ? &mine : status;
	depth++;
	int rc = PMPI_Waitany(n, rq, index, s);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
		any_done(m, idx, ent, *index, s);
	errno = err;
	return rc;
}

CAP_EXPORT int MPI_Testany(int n, MPI_Request rq[], int *index, int *flag, MPI_Status *status)
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Testany(n, rq, index, flag, status);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	MPI_Status mine;
	MPI_Status *s = status == MPI_STATUS_IGNORE ? &mine : status;
	depth++;
	int rc = PMPI_Testany(n, rq, index, flag, s);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		any_done(m, idx, ent, *index, s);
	errno = err;
	return rc;
}

/* Waitsome/Testsome: the out requests at indices[0..out). */
static void some_done(int m, const int *idx, struct mpiio_req **ent, int out, const int *indices,
		      MPI_Status *statuses)
{
	if (out == MPI_UNDEFINED)
		return;
	for (int k = 0; k < out; k++)
		for (int j = 0; j < m; j++)
			if (idx[j] == indices[k])
				req_complete(ent[j], nth_status(statuses, k));
}

CAP_EXPORT int MPI_Waitsome(int n, MPI_Request rq[], int *out, int indices[], MPI_Status statuses[])
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Waitsome(n, rq, out, indices, statuses);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	depth++;
	int rc = PMPI_Waitsome(n, rq, out, indices, statuses);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS)
		some_done(m, idx, ent, *out, indices, statuses);
	errno = err;
	return rc;
}

CAP_EXPORT int MPI_Testsome(int n, MPI_Request rq[], int *out, int indices[], MPI_Status statuses[])
{
	int m;
	if (CAP_LIKELY(!reqs_pending()) || n <= 0 || !(m = reqs_count(n, rq)))
		return PMPI_Testsome(n, rq, out, indices, statuses);
	int *idx = alloca((size_t)m * sizeof *idx);
	struct mpiio_req **ent = alloca((size_t)m * sizeof *ent);
	m = reqs_match(n, rq, idx, ent);
	depth++;
	int rc = PMPI_Testsome(n, rq, out, indices, statuses);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS)
		some_done(m, idx, ent, *out, indices, statuses);
	errno = err;
	return rc;
}

/* A file request freed before completion: MPI will complete it, but the program never learns
 * when nor how much (a read's status is lost), so it is counted here, as asked. */
CAP_EXPORT int MPI_Request_free(MPI_Request *rq)
{
	struct mpiio_req *e;
	if (CAP_LIKELY(!reqs_pending()) || !rq || !(e = req_find(*rq)))
		return PMPI_Request_free(rq);
	depth++;
	int rc = PMPI_Request_free(rq);
	depth--;
	int err = errno;
	if (rc == MPI_SUCCESS)
		req_complete(e, MPI_STATUS_IGNORE);
	errno = err;
	return rc;
}

/* ---------- reads and writes ---------- */

/*
 * Every data access has one shape: a handle not tracked goes straight to PMPI; a tracked one is
 * timed around its PMPI call (depth marks the POSIX calls MPI makes meanwhile as under it), and
 * NOTE counts it. The families below differ only in their parameters and their note: Q is CONST
 * for a write's buffer, VAR for a read's; CT the count's type (int, or MPI 4's MPI_Count).
 */
#define Q_CONST const
#define Q_VAR
#define WRAP(NAME, PARAMS, ARGS, NOTE)                     \
	CAP_EXPORT int NAME PARAMS                         \
	{                                                  \
		struct mpiio_file *f = file_get(fh);       \
		if (!f)                                    \
			return P##NAME ARGS;               \
		uint64_t t0 = mpiio_now();                 \
		depth++;                                   \
		int rc = P##NAME ARGS;                     \
		depth--;                                   \
		NOTE;                                      \
		return rc;                                 \
	}
/* blocking, at the individual or shared file pointer / at an explicit offset */
#define RW(NAME, Q, CT, KIND, FLAGS)                                                          \
	WRAP(NAME, (MPI_File fh, Q_##Q void *buf, CT count, MPI_Datatype dt, MPI_Status *status), \
	     (fh, buf, count, dt, status), rw_done(f, KIND, FLAGS, 0, buf, count, dt, status, rc, t0))
#define RW_AT(NAME, Q, CT, KIND, FLAGS)                                                                  \
	WRAP(NAME, (MPI_File fh, MPI_Offset off, Q_##Q void *buf, CT count, MPI_Datatype dt, MPI_Status *status), \
	     (fh, off, buf, count, dt, status), rw_done(f, KIND, FLAGS, off, buf, count, dt, status, rc, t0))
/* split collectives: counted at _end, with the bytes of _begin (or the status's) */
#define SPLIT_BEGIN(NAME, Q, CT, KIND, FLAGS)                                   \
	WRAP(NAME, (MPI_File fh, Q_##Q void *buf, CT count, MPI_Datatype dt), \
	     (fh, buf, count, dt), split_begun(f, KIND, FLAGS, 0, buf, count, dt, rc, t0))
#define SPLIT_BEGIN_AT(NAME, Q, CT, KIND, FLAGS)                                               \
	WRAP(NAME, (MPI_File fh, MPI_Offset off, Q_##Q void *buf, CT count, MPI_Datatype dt), \
	     (fh, off, buf, count, dt), split_begun(f, KIND, FLAGS, off, buf, count, dt, rc, t0))
#define SPLIT_END(NAME, Q, KIND) \
	WRAP(NAME, (MPI_File fh, Q_##Q void *buf, MPI_Status *status), (fh, buf, status), \
	     split_ended(f, KIND, status, rc, t0))
/* non-blocking: counted when MPI_Wait, MPI_Test or MPI_Request_free completes them */
#define IRW(NAME, Q, CT, KIND, FLAGS)                                                          \
	WRAP(NAME, (MPI_File fh, Q_##Q void *buf, CT count, MPI_Datatype dt, MPI_Request *rq), \
	     (fh, buf, count, dt, rq), req_started(f, KIND, FLAGS, 0, buf, count, dt, rq, rc, t0))
#define IRW_AT(NAME, Q, CT, KIND, FLAGS)                                                                 \
	WRAP(NAME, (MPI_File fh, MPI_Offset off, Q_##Q void *buf, CT count, MPI_Datatype dt, MPI_Request *rq), \
	     (fh, off, buf, count, dt, rq), req_started(f, KIND, FLAGS, off, buf, count, dt, rq, rc, t0))

/* the data accesses with a count of type CT, their names ending in SFX */
#define DATA_ACCESS(CT, SFX) \
	RW(MPI_File_read##SFX, VAR, CT, LOG_KIND_READ, 0) \
	RW_AT(MPI_File_read_at##SFX, VAR, CT, LOG_KIND_READ, F_AT) \
	RW(MPI_File_read_all##SFX, VAR, CT, LOG_KIND_READ, F_COLL) \
	RW_AT(MPI_File_read_at_all##SFX, VAR, CT, LOG_KIND_READ, F_COLL | F_AT) \
	RW(MPI_File_read_shared##SFX, VAR, CT, LOG_KIND_READ, F_SHARED) \
	RW(MPI_File_read_ordered##SFX, VAR, CT, LOG_KIND_READ, F_COLL | F_SHARED) \
	RW(MPI_File_write##SFX, CONST, CT, LOG_KIND_WRITE, 0) \
	RW_AT(MPI_File_write_at##SFX, CONST, CT, LOG_KIND_WRITE, F_AT) \
	RW(MPI_File_write_all##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL) \
	RW_AT(MPI_File_write_at_all##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL | F_AT) \
	RW(MPI_File_write_shared##SFX, CONST, CT, LOG_KIND_WRITE, F_SHARED) \
	RW(MPI_File_write_ordered##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL | F_SHARED) \
	SPLIT_BEGIN(MPI_File_read_all_begin##SFX, VAR, CT, LOG_KIND_READ, F_COLL) \
	SPLIT_BEGIN_AT(MPI_File_read_at_all_begin##SFX, VAR, CT, LOG_KIND_READ, F_COLL | F_AT) \
	SPLIT_BEGIN(MPI_File_read_ordered_begin##SFX, VAR, CT, LOG_KIND_READ, F_COLL | F_SHARED) \
	SPLIT_BEGIN(MPI_File_write_all_begin##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL) \
	SPLIT_BEGIN_AT(MPI_File_write_at_all_begin##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL | F_AT) \
	SPLIT_BEGIN(MPI_File_write_ordered_begin##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL | F_SHARED) \
	IRW(MPI_File_iread##SFX, VAR, CT, LOG_KIND_READ, 0) \
	IRW_AT(MPI_File_iread_at##SFX, VAR, CT, LOG_KIND_READ, F_AT) \
	IRW(MPI_File_iread_shared##SFX, VAR, CT, LOG_KIND_READ, F_SHARED) \
	IRW(MPI_File_iread_all##SFX, VAR, CT, LOG_KIND_READ, F_COLL) \
	IRW_AT(MPI_File_iread_at_all##SFX, VAR, CT, LOG_KIND_READ, F_COLL | F_AT) \
	IRW(MPI_File_iwrite##SFX, CONST, CT, LOG_KIND_WRITE, 0) \
	IRW_AT(MPI_File_iwrite_at##SFX, CONST, CT, LOG_KIND_WRITE, F_AT) \
	IRW(MPI_File_iwrite_shared##SFX, CONST, CT, LOG_KIND_WRITE, F_SHARED) \
	IRW(MPI_File_iwrite_all##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL) \
	IRW_AT(MPI_File_iwrite_at_all##SFX, CONST, CT, LOG_KIND_WRITE, F_COLL | F_AT)

DATA_ACCESS(int, )
/* the ends of split collectives (no count) */
SPLIT_END(MPI_File_read_all_end, VAR, LOG_KIND_READ)
SPLIT_END(MPI_File_read_at_all_end, VAR, LOG_KIND_READ)
SPLIT_END(MPI_File_read_ordered_end, VAR, LOG_KIND_READ)
SPLIT_END(MPI_File_write_all_end, CONST, LOG_KIND_WRITE)
SPLIT_END(MPI_File_write_at_all_end, CONST, LOG_KIND_WRITE)
SPLIT_END(MPI_File_write_ordered_end, CONST, LOG_KIND_WRITE)

/* MPI 4's large-count forms */
#if MPI_VERSION >= 4
DATA_ACCESS(MPI_Count, _c)
#endif
