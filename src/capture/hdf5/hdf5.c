/* SPDX-License-Identifier: MIT */
/*
 * The HDF5 companion of the preload library (libiostrata-hdf5.so): the `hdf5` layer. It defines
 * the HDF5 calls a program makes on files and datasets (H5Fcreate/open/flush/close,
 * H5Dcreate2/open2/read/write/set_extent/close; H5Oopen of a dataset and H5Idec_ref, with which h5py
 * opens and closes them), passes each to the real one and records, into
 * libiostrata.so's live log (capture/companion.h): a record per file (opens, closes, flushes) and
 * one per dataset, "FILE:/DATASET", with its dimensions, element size, layout, chunk dimensions
 * and filters, its reads and writes (points selected x element size) and, with the parallel
 * build's transfer property list, which ones were collective.
 *
 * HDF5 has no profiling interface: the real functions are found in whichever libhdf5 is loaded
 * (the serial or an MPI build, linked or dlopen'ed by h5py, whose extension modules Python loads
 * with RTLD_LOCAL, out of reach of RTLD_NEXT), once per function, on first use. The library is
 * built without HDF5's headers from the 1.10 ABI below (hid_t 64 bits), so it needs no HDF5 to
 * build and maps none: `iostrata run` preloads it into every image, so that h5py's libhdf5, which
 * Python loads with dlopen long after exec, is seen too.
 *
 * An access's offset within its dataset is the row-major index of the file selection's first
 * corner times the element size. What a selection holds costs HDF5's global lock to ask
 * (H5Sget_select_npoints, H5Sget_select_bounds: ~800 instructions per H5Dwrite), so it is asked
 * once per dataspace and kept in a small cache (spaces[]); the calls that change a dataspace in
 * place are wrapped too: H5Sselect_hyperslab(SET) computes the new selection from its own
 * arguments, every other change forgets the cached one, so a cached answer is always what HDF5
 * would say. The whole extent (H5S_ALL) is kept per dataset until an extent may have changed
 * (H5Dset_extent, H5Dextend, H5Drefresh, H5Orefresh), the transfer mode per property list until
 * a property may have changed. Handles opened before a fork stay tracked in the child
 * (companion_carry.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "capture/companion.h"
#include "capture/companion_carry.h"
#include "capture/core.h"
#include "log/record.h"

/* HDF5 1.10 .. 1.14 ABI */
typedef int64_t hid_t;
typedef int herr_t;
typedef unsigned long long hsize_t;
typedef long long hssize_t;
#define H5P_DEFAULT ((hid_t)0)
#define H5S_ALL ((hid_t)0)
#define H5S_MAX_RANK 32
#define H5S_UNLIMITED ((hsize_t)-1)
#define H5S_SELECT_SET 0
#define H5D_CHUNKED 2
#define H5FD_MPIO_COLLECTIVE 1
#define H5I_DATASET 5

#define H5_DSETS 1024 /* open datasets tracked at once (power of two) */
#define H5_FILES 256
#define H5_SPACES 256 /* dataspaces whose selection is cached (direct-mapped, power of two) */
#define H5_DXPLS 64   /* transfer property lists whose mode is cached (direct-mapped) */

/* The real functions and the queries the wrappers make. */
struct h5_real {
	hid_t (*Fcreate)(const char *, unsigned, hid_t, hid_t);
	hid_t (*Fopen)(const char *, unsigned, hid_t);
	herr_t (*Fflush)(hid_t, int);
	herr_t (*Fclose)(hid_t);
	hid_t (*Dcreate2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t);
	hid_t (*Dopen2)(hid_t, const char *, hid_t);
	herr_t (*Dread)(hid_t, hid_t, hid_t, hid_t, hid_t, void *);
	herr_t (*Dwrite)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);
	herr_t (*Dset_extent)(hid_t, const hsize_t *);
	herr_t (*Dclose)(hid_t);
	int (*Idec_ref)(hid_t);
	hid_t (*Oopen)(hid_t, const char *, hid_t);
	int (*Iget_type)(hid_t);
	ssize_t (*Fget_name)(hid_t, char *, size_t);
	ssize_t (*Iget_name)(hid_t, char *, size_t);
	hid_t (*Dget_space)(hid_t);
	hid_t (*Dget_type)(hid_t);
	hid_t (*Dget_create_plist)(hid_t);
	int (*Sget_simple_extent_dims)(hid_t, hsize_t *, hsize_t *);
	hssize_t (*Sget_select_npoints)(hid_t);
	herr_t (*Sclose)(hid_t);
	size_t (*Tget_size)(hid_t);
	herr_t (*Tclose)(hid_t);
	int (*Pget_layout)(hid_t);
	int (*Pget_chunk)(hid_t, int, hsize_t *);
	int (*Pget_nfilters)(hid_t);
	herr_t (*Pclose)(hid_t);
	herr_t (*Pget_dxpl_mpio)(hid_t, int *); /* parallel builds only */
	herr_t (*Sget_select_bounds)(hid_t, hsize_t *, hsize_t *);
	hssize_t (*Sget_simple_extent_npoints)(hid_t);
	/* wrapped only to keep the caches true */
	herr_t (*Sselect_hyperslab)(hid_t, int, const hsize_t *, const hsize_t *, const hsize_t *, const hsize_t *);
	herr_t (*Sselect_elements)(hid_t, int, size_t, const hsize_t *);
	herr_t (*Sselect_all)(hid_t);
	herr_t (*Sselect_none)(hid_t);
	herr_t (*Soffset_simple)(hid_t, const hssize_t *);
	herr_t (*Sset_extent_simple)(hid_t, int, const hsize_t *, const hsize_t *);
	herr_t (*Sset_extent_none)(hid_t);
	herr_t (*Sextent_copy)(hid_t, hid_t);
	herr_t (*Sselect_copy)(hid_t, hid_t);
	herr_t (*Smodify_select)(hid_t, int, hid_t);
	herr_t (*Sselect_adjust)(hid_t, const hssize_t *);
	herr_t (*Dextend)(hid_t, const hsize_t *);
	herr_t (*Drefresh)(hid_t);
	herr_t (*Orefresh)(hid_t);
	herr_t (*Pset_dxpl_mpio)(hid_t, int);
	herr_t (*Pset)(hid_t, const char *, const void *);
	herr_t (*Pcopy_prop)(hid_t, hid_t, const char *);
	herr_t (*Premove)(hid_t, const char *);
	herr_t (*close)(void);
};

struct h5_obj {
	hid_t id; /* 0: free; -1: a deleted slot */
	struct log_record *rec;
	uint64_t esize; /* datasets: bytes per element */
	/* datasets: points of the whole extent (H5S_ALL) while all_gen == extent_gen */
	uint64_t all_pts, all_gen;
	uint32_t carry; /* across fork: its record's place in the carry (companion_carry.h) */
};

/* A dataspace's selection as HDF5 would report it, while seq is even and id matches: read and
 * written as a sequence lock (a writer makes seq odd first), so a reader never takes half of two
 * ids' entries for one. */
struct h5_space {
	uint32_t seq;
	int rank;      /* -1: extent not known */
	hid_t id;      /* 0: empty */
	int sel;       /* npts and first hold the selection */
	uint64_t npts; /* points selected */
	uint64_t first; /* row-major index of the selection's first corner in the extent */
	hsize_t dims[H5S_MAX_RANK];
};

/* A transfer property list's mode: collective or not, true while gen == dxpl_gen. */
struct h5_dxpl {
	uint32_t seq;
	int coll;
	hid_t id;
	uint64_t gen;
};

static const struct cap_companion_api *api;
static struct cap_state *st;
static struct h5_real h5;
static void *h5_lib; /* the libhdf5 whose functions h5 holds */
static struct h5_obj dsets[H5_DSETS], files[H5_FILES];
static struct h5_space spaces[H5_SPACES];
static struct h5_dxpl dxpls[H5_DXPLS];
static uint64_t extent_gen = 1, dxpl_gen = 1;
/* H5Soffset_simple moved a selection: from then on, selections are not computed from
 * H5Sselect_hyperslab's arguments (the offset would shift them) but asked */
static int offsets_used;
static __thread int depth __attribute__((tls_model("initial-exec")));

__attribute__((constructor)) static void h5_init(void)
{
	cap_companion_fn fn = (cap_companion_fn)dlsym(RTLD_DEFAULT, CAP_COMPANION_SYMBOL);
	const struct cap_companion_api *a = fn ? fn() : NULL;
	if (!a || a->version != CAP_COMPANION_VERSION || a->size < sizeof *a)
		return;
	api = a;
	st = a->state;
}

static int find_hdf5(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "libhdf5", 7) && strncmp(base, "libhdf5_hl", 10) && !strstr(base, "cpp") &&
	    !strstr(base, "fortran")) {
		*(void **)data = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
		return *(void **)data != NULL;
	}
	return 0;
}

/* The loaded libhdf5's function name (H5 prefix added), or NULL. */
static void *h5_sym(const char *name)
{
	char full[64];
	snprintf(full, sizeof full, "H5%s", name);
	if (!h5_lib)
		dl_iterate_phdr(find_hdf5, &h5_lib);
	void *p = h5_lib ? dlsym(h5_lib, full) : NULL;
	return p ? p : dlsym(RTLD_NEXT, full);
}

/* Resolves every function once, on the first call of any wrapper (libhdf5 is loaded by then). */
static void h5_resolve(void)
{
#define H5_GET(f) *(void **)&h5.f = h5_sym(#f)
	H5_GET(Fcreate); H5_GET(Fopen); H5_GET(Fflush); H5_GET(Fclose);
	H5_GET(Dcreate2); H5_GET(Dopen2); H5_GET(Dread); H5_GET(Dwrite); H5_GET(Dset_extent); H5_GET(Dclose);
	H5_GET(Idec_ref); H5_GET(Oopen); H5_GET(Iget_type);
	H5_GET(Fget_name); H5_GET(Iget_name); H5_GET(Dget_space); H5_GET(Dget_type); H5_GET(Dget_create_plist);
	H5_GET(Sget_simple_extent_dims); H5_GET(Sget_select_npoints); H5_GET(Sclose); H5_GET(Tget_size);
	H5_GET(Tclose); H5_GET(Pget_layout); H5_GET(Pget_chunk); H5_GET(Pget_nfilters); H5_GET(Pclose);
	H5_GET(Pget_dxpl_mpio); H5_GET(Sget_select_bounds); H5_GET(Sget_simple_extent_npoints);
	H5_GET(Sselect_hyperslab); H5_GET(Sselect_elements); H5_GET(Sselect_all); H5_GET(Sselect_none);
	H5_GET(Soffset_simple); H5_GET(Sset_extent_simple); H5_GET(Sset_extent_none); H5_GET(Sextent_copy);
	H5_GET(Sselect_copy); H5_GET(Smodify_select); H5_GET(Sselect_adjust); H5_GET(Dextend); H5_GET(Drefresh);
	H5_GET(Orefresh); H5_GET(Pset_dxpl_mpio); H5_GET(Pset); H5_GET(Pcopy_prop); H5_GET(Premove); H5_GET(close);
#undef H5_GET
}

/* The real function f, resolving them all on first use. */
#define H5_REAL(f) (CAP_LIKELY(h5.f != NULL) ? h5.f : (h5_resolve(), h5.f))

static inline int h5_active(void)
{
	return CAP_LIKELY(st != NULL) && st->nfd > 0 && !depth;
}

static inline uint64_t h5_now(void)
{
	if (CAP_LIKELY(st->use_tsc))
		return __rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------- handles ---------- */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void h5_fork_register(void);

/* An id's home slot in a table of n (a power of two). */
static inline uint32_t slot_of(hid_t id, uint32_t n)
{
	return (uint32_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 40) & (n - 1);
}

static struct h5_obj *obj_find(struct h5_obj *t, uint32_t n, hid_t id)
{
	uint32_t i = slot_of(id, n);
	for (uint32_t k = 0; k < n; k++, i = (i + 1) & (n - 1)) {
		hid_t v = __atomic_load_n(&t[i].id, __ATOMIC_ACQUIRE);
		if (v == id)
			return &t[i];
		if (v == 0)
			return NULL;
	}
	return NULL;
}

static struct h5_obj *obj_add(struct h5_obj *t, uint32_t n, hid_t id, struct log_record *rec, uint64_t esize)
{
	uint32_t i = slot_of(id, n);
	for (uint32_t k = 0; k < n; k++, i = (i + 1) & (n - 1)) {
		hid_t v = __atomic_load_n(&t[i].id, __ATOMIC_ACQUIRE);
		if (v > 0)
			continue;
		if (!__atomic_compare_exchange_n(&t[i].id, &v, (hid_t)-2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		t[i].rec = rec;
		t[i].esize = esize;
		t[i].all_gen = 0;
		__atomic_store_n(&t[i].id, id, __ATOMIC_RELEASE);
		pthread_once(&fork_once, h5_fork_register);
		return &t[i];
	}
	return NULL;
}

/* The tracked dataset id, when the call should be recorded. */
static inline struct h5_obj *dset_get(hid_t id)
{
	return h5_active() && id > 0 ? obj_find(dsets, H5_DSETS, id) : NULL;
}

/* ---------- what HDF5 would say, cached ---------- */

/* Takes an entry for writing (seq made odd), or returns 0 when another thread holds it. */
static inline int seq_begin(uint32_t *seq)
{
	uint32_t q = __atomic_load_n(seq, __ATOMIC_RELAXED);
	if (q & 1)
		return 0;
	if (cap_mt()) {
		if (!__atomic_compare_exchange_n(seq, &q, q + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 0;
	} else {
		__atomic_store_n(seq, q + 1, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 1;
}

static inline void seq_end(uint32_t *seq)
{
	__atomic_store_n(seq, __atomic_load_n(seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* The selection of dataspace id, when the cache holds it: 1 and *npts, *first; else 0. */
static inline int space_cached(hid_t id, uint64_t *npts, uint64_t *first)
{
	struct h5_space *e = &spaces[slot_of(id, H5_SPACES)];
	uint32_t q = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	int ok = !(q & 1) && __atomic_load_n(&e->id, __ATOMIC_RELAXED) == id && __atomic_load_n(&e->sel, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&e->npts, __ATOMIC_RELAXED), f = __atomic_load_n(&e->first, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!ok || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != q)
		return 0;
	*npts = n;
	*first = f;
	return 1;
}

/* The row-major index of the point at start[] in an extent of rank dims. */
static uint64_t space_index(int rank, const hsize_t *dims, const hsize_t *start)
{
	uint64_t at = 0;
	for (int i = 0; i < rank; i++)
		at = at * dims[i] + start[i];
	return at;
}

/* Asks HDF5 what dataspace id selects (the cache missed) and keeps the answer. */
static int space_ask(hid_t id, uint64_t *npts, uint64_t *first)
{
	hsize_t dims[H5S_MAX_RANK], lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
	hssize_t n = h5.Sget_select_npoints ? h5.Sget_select_npoints(id) : -1;
	int rank = h5.Sget_simple_extent_dims ? h5.Sget_simple_extent_dims(id, dims, NULL) : -1;
	if (n < 0)
		return 0;
	*npts = (uint64_t)n;
	*first = 0;
	if (n > 0 && rank > 0 && rank <= H5S_MAX_RANK && h5.Sget_select_bounds && h5.Sget_select_bounds(id, lo, hi) >= 0)
		*first = space_index(rank, dims, lo);
	struct h5_space *e = &spaces[slot_of(id, H5_SPACES)];
	if (rank >= 0 && rank <= H5S_MAX_RANK && seq_begin(&e->seq)) {
		__atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
		e->rank = rank;
		memcpy(e->dims, dims, (size_t)rank * sizeof *dims);
		__atomic_store_n(&e->npts, *npts, __ATOMIC_RELAXED);
		__atomic_store_n(&e->first, *first, __ATOMIC_RELAXED);
		__atomic_store_n(&e->sel, 1, __ATOMIC_RELAXED);
		seq_end(&e->seq);
	}
	return 1;
}

/* After a call changed dataspace id in place: the entry forgets its selection (and its extent
 * when extent), or, for a hyperslab set with start/count/block (block NULL: 1), holds it. */
static void space_changed(hid_t id, int extent, const hsize_t *start, const hsize_t *count, const hsize_t *block)
{
	struct h5_space *e = &spaces[slot_of(id, H5_SPACES)];
	if (__atomic_load_n(&e->id, __ATOMIC_RELAXED) != id || !seq_begin(&e->seq))
		return;
	if (e->id != id) {
		/* taken by another id meanwhile: nothing of ours to change */
	} else if (extent) {
		e->rank = -1;
		__atomic_store_n(&e->sel, 0, __ATOMIC_RELAXED);
	} else if (start && e->rank >= 0 && !__atomic_load_n(&offsets_used, __ATOMIC_RELAXED)) {
		uint64_t n = 1;
		int ok = 1;
		for (int i = 0; i < e->rank; i++) {
			hsize_t b = block ? block[i] : 1;
			ok &= count[i] != H5S_UNLIMITED && b != H5S_UNLIMITED;
			n *= count[i] * b;
		}
		__atomic_store_n(&e->npts, n, __ATOMIC_RELAXED);
		__atomic_store_n(&e->first, n ? space_index(e->rank, e->dims, start) : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->sel, ok, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&e->sel, 0, __ATOMIC_RELAXED);
	}
	seq_end(&e->seq);
}

static void space_forget(hid_t id)
{
	space_changed(id, 1, NULL, NULL, NULL);
}

/* The points a write or read of dataset o selects in the file and the first one's index. */
static int dset_selection(struct h5_obj *o, hid_t d, hid_t file_space, uint64_t *npts, uint64_t *first)
{
	if (file_space != H5S_ALL)
		return space_cached(file_space, npts, first) || space_ask(file_space, npts, first);
	*first = 0;
	uint64_t g = __atomic_load_n(&extent_gen, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&o->all_gen, __ATOMIC_ACQUIRE) == g) {
		*npts = __atomic_load_n(&o->all_pts, __ATOMIC_RELAXED);
		return 1;
	}
	hid_t s = h5.Dget_space(d);
	if (s < 0)
		return 0;
	hssize_t n = h5.Sget_simple_extent_npoints(s);
	h5.Sclose(s);
	if (n < 0)
		return 0;
	*npts = (uint64_t)n;
	/* two threads may both ask; each stores the same answer */
	__atomic_store_n(&o->all_pts, (uint64_t)n, __ATOMIC_RELAXED);
	__atomic_store_n(&o->all_gen, g, __ATOMIC_RELEASE);
	return 1;
}

/* Is the transfer through property list dxpl collective (parallel HDF5)? */
static int dxpl_collective(hid_t dxpl)
{
	if (dxpl == H5P_DEFAULT || !h5.Pget_dxpl_mpio)
		return 0;
	struct h5_dxpl *e = &dxpls[slot_of(dxpl, H5_DXPLS)];
	uint64_t g = __atomic_load_n(&dxpl_gen, __ATOMIC_ACQUIRE);
	uint32_t q = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	int hit = !(q & 1) && __atomic_load_n(&e->id, __ATOMIC_RELAXED) == dxpl && __atomic_load_n(&e->gen, __ATOMIC_RELAXED) == g;
	int coll = __atomic_load_n(&e->coll, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (hit && __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == q)
		return coll;
	int mode = 0;
	coll = h5.Pget_dxpl_mpio(dxpl, &mode) >= 0 && mode == H5FD_MPIO_COLLECTIVE;
	if (seq_begin(&e->seq)) {
		__atomic_store_n(&e->id, dxpl, __ATOMIC_RELAXED);
		__atomic_store_n(&e->gen, g, __ATOMIC_RELAXED);
		__atomic_store_n(&e->coll, coll, __ATOMIC_RELAXED);
		seq_end(&e->seq);
	}
	return coll;
}

/* ---------- fork ---------- */

/* The child keeps the files and datasets open before the fork (it holds the same ids): each
 * gets its record in the child's log. */
static struct cap_carry carry;

static void h5_fork_prepare(void)
{
	size_t need = 0;
	struct h5_obj *t[2] = {files, dsets};
	uint32_t n[2] = {H5_FILES, H5_DSETS};
	if (!st || st->nfd <= 0)
		return;
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < n[k]; i++)
			if (__atomic_load_n(&t[k][i].id, __ATOMIC_ACQUIRE) > 0)
				need += cap_carry_need(st, t[k][i].rec);
	if (cap_carry_alloc(&carry, need) < 0)
		return;
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < n[k]; i++)
			t[k][i].carry = t[k][i].id > 0 ? cap_carry_put(&carry, st, t[k][i].rec) : 0;
}

static void h5_fork_parent(void)
{
	cap_carry_free(&carry);
}

static void h5_fork_child(void)
{
	int e = errno;
	struct h5_obj *t[2] = {files, dsets};
	uint32_t n[2] = {H5_FILES, H5_DSETS};
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < n[k]; i++) {
			struct h5_obj *o = &t[k][i];
			if (o->id <= 0)
				continue;
			o->rec = st->nfd > 0 ? cap_carry_take(&carry, api, o->carry) : NULL;
			if (!o->rec) /* not carried (no room, or the child has no log): no longer tracked */
				o->id = -1;
		}
	cap_carry_free(&carry);
	errno = e;
}

static void h5_fork_register(void)
{
	pthread_atfork(h5_fork_prepare, h5_fork_parent, h5_fork_child);
}

/* ---------- records ---------- */

/* The record of the object id's file, or of its dataset when dset is set ("FILE:/DATASET"). */
static struct log_record *obj_record(hid_t id, int dset)
{
	char name[CAP_PATH_MAX], abs[CAP_PATH_MAX];
	if (!h5.Fget_name || h5.Fget_name(id, name, sizeof name) <= 0 ||
	    api->abspath(AT_FDCWD, name, abs, sizeof abs) < 0 || api->excluded(abs))
		return NULL;
	if (dset) {
		size_t n = strlen(abs);
		abs[n++] = ':';
		if (!h5.Iget_name || h5.Iget_name(id, abs + n, sizeof abs - n) <= 0)
			snprintf(abs + n, sizeof abs - n, "<anonymous>");
	}
	return api->record(LOG_LAYER_HDF5, abs, 0);
}

/* dims[0..nd) into the three counters from c3: a rank over 3 has its third and later
 * dimensions multiplied into the third, so that the three multiply to the whole. */
static void note_dims(uint64_t *c3, int nd, const hsize_t *dims)
{
	uint64_t last = nd > 2 ? 1 : 0;
	for (int i = 0; i < nd && i < 2; i++)
		log_max(&c3[i], dims[i], 1);
	for (int i = 2; i < nd; i++)
		last *= dims[i];
	if (nd > 2)
		log_max(&c3[2], last, 1);
}

/* What a dataset's creation properties and extent say about it, into its record. */
static uint64_t note_dataset(hid_t d, struct log_record *r)
{
	uint64_t *c = r->counters, esize = 0;
	hsize_t dims[H5S_MAX_RANK];
	hid_t s = h5.Dget_space ? h5.Dget_space(d) : -1;
	if (s >= 0) {
		int nd = h5.Sget_simple_extent_dims ? h5.Sget_simple_extent_dims(s, dims, NULL) : -1;
		if (nd >= 0) {
			log_max(&c[LOG_C_H5_NDIMS], (uint64_t)nd, 1);
			note_dims(&c[LOG_C_H5_DIM0], nd, dims);
		}
		h5.Sclose(s);
	}
	hid_t t = h5.Dget_type ? h5.Dget_type(d) : -1;
	if (t >= 0) {
		esize = h5.Tget_size(t);
		log_max(&c[LOG_C_H5_ELEM_SIZE], esize, 1);
		h5.Tclose(t);
	}
	hid_t p = h5.Dget_create_plist ? h5.Dget_create_plist(d) : -1;
	if (p >= 0) {
		int layout = h5.Pget_layout(p);
		if (layout >= 0)
			log_max(&c[LOG_C_H5_LAYOUT], (uint64_t)layout + 1, 1);
		int nd;
		if (layout == H5D_CHUNKED && (nd = h5.Pget_chunk(p, H5S_MAX_RANK, dims)) > 0)
			note_dims(&c[LOG_C_H5_CHUNK0], nd, dims);
		int nf = h5.Pget_nfilters(p);
		if (nf > 0)
			log_max(&c[LOG_C_H5_FILTERS], (uint64_t)nf, 1);
		h5.Pclose(p);
	}
	return esize;
}

static void note_meta(struct log_record *r, enum log_counter which, int failed, uint64_t t0, uint64_t t1)
{
	if (failed) {
		log_inc(&r->counters[which == LOG_C_OPENS ? LOG_C_ERR_OPENS : LOG_C_ERR_META], 1);
		__atomic_fetch_or(&r->flags, (uint16_t)LOG_R_ERR_FAULT, __ATOMIC_RELAXED);
		return;
	}
	log_note_meta(r, which, t0, t1, 1);
}

/* ---------- files ---------- */

static hid_t file_opened(hid_t f, const char *name, uint64_t t0)
{
	uint64_t t1 = h5_now();
	int e = errno;
	depth++;
	char abs[CAP_PATH_MAX];
	struct log_record *r = NULL;
	if (f >= 0)
		r = obj_record(f, 0);
	else if (api->abspath(AT_FDCWD, name, abs, sizeof abs) == 0 && !api->excluded(abs))
		r = api->record(LOG_LAYER_HDF5, abs, 0);
	if (r) {
		note_meta(r, LOG_C_OPENS, f < 0, t0, t1);
		if (f >= 0)
			obj_add(files, H5_FILES, f, r, 0);
	}
	depth--;
	errno = e;
	return f;
}

CAP_EXPORT hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
	if (!h5_active())
		return H5_REAL(Fcreate)(name, flags, fcpl, fapl);
	uint64_t t0 = h5_now();
	depth++;
	hid_t f = H5_REAL(Fcreate)(name, flags, fcpl, fapl);
	depth--;
	return file_opened(f, name, t0);
}

CAP_EXPORT hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl)
{
	if (!h5_active())
		return H5_REAL(Fopen)(name, flags, fapl);
	uint64_t t0 = h5_now();
	depth++;
	hid_t f = H5_REAL(Fopen)(name, flags, fapl);
	depth--;
	return file_opened(f, name, t0);
}

CAP_EXPORT herr_t H5Fflush(hid_t obj, int scope)
{
	struct h5_obj *o = h5_active() ? obj_find(files, H5_FILES, obj) : NULL;
	if (!o)
		return H5_REAL(Fflush)(obj, scope);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Fflush)(obj, scope);
	depth--;
	int e = errno;
	note_meta(o->rec, LOG_C_FSYNCS, rc < 0, t0, h5_now());
	errno = e;
	return rc;
}

CAP_EXPORT herr_t H5Fclose(hid_t f)
{
	struct h5_obj *o = h5_active() ? obj_find(files, H5_FILES, f) : NULL;
	if (!o)
		return H5_REAL(Fclose)(f);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Fclose)(f);
	depth--;
	int e = errno;
	note_meta(o->rec, LOG_C_CLOSES, rc < 0, t0, h5_now());
	if (rc >= 0)
		__atomic_store_n(&o->id, (hid_t)-1, __ATOMIC_RELEASE);
	errno = e;
	return rc;
}

/* ---------- datasets ---------- */

static hid_t dset_opened(hid_t d, uint64_t t0)
{
	uint64_t t1 = h5_now();
	int e = errno;
	if (d >= 0) {
		depth++;
		struct log_record *r = obj_record(d, 1);
		if (r) {
			note_meta(r, LOG_C_OPENS, 0, t0, t1);
			obj_add(dsets, H5_DSETS, d, r, note_dataset(d, r));
		}
		depth--;
	}
	errno = e;
	return d;
}

CAP_EXPORT hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl)
{
	if (!h5_active())
		return H5_REAL(Dcreate2)(loc, name, type, space, lcpl, dcpl, dapl);
	uint64_t t0 = h5_now();
	depth++;
	hid_t d = H5_REAL(Dcreate2)(loc, name, type, space, lcpl, dcpl, dapl);
	depth--;
	return dset_opened(d, t0);
}

CAP_EXPORT hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl)
{
	if (!h5_active())
		return H5_REAL(Dopen2)(loc, name, dapl);
	uint64_t t0 = h5_now();
	depth++;
	hid_t d = H5_REAL(Dopen2)(loc, name, dapl);
	depth--;
	return dset_opened(d, t0);
}

/* h5py opens an existing dataset as an object (f["name"]): a dataset is recorded as by H5Dopen2. */
CAP_EXPORT hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl)
{
	if (!h5_active())
		return H5_REAL(Oopen)(loc, name, lapl);
	uint64_t t0 = h5_now();
	depth++;
	hid_t o = H5_REAL(Oopen)(loc, name, lapl);
	int dset = o >= 0 && h5.Iget_type && h5.Iget_type(o) == H5I_DATASET;
	depth--;
	return dset ? dset_opened(o, t0) : o;
}

/* After H5Dread/H5Dwrite: the points the file selection holds (the whole extent for H5S_ALL)
 * times the element size, at the offset of its first corner in the dataset. */
static void dset_rw(struct h5_obj *o, hid_t d, int kind, hid_t file_space, hid_t dxpl, const void *buf, herr_t rc,
		    uint64_t t0)
{
	uint64_t t1 = h5_now();
	int e = errno;
	struct log_record *r = o->rec;
	uint64_t *c = r->counters;
	int mt = cap_mt();
	if (rc < 0) {
		log_inc(&c[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], mt);
		__atomic_fetch_or(&r->flags, (uint16_t)LOG_R_ERR_FAULT, __ATOMIC_RELAXED);
		errno = e;
		return;
	}
	depth++;
	uint64_t npts = 0, first = 0;
	if (!dset_selection(o, d, file_space, &npts, &first))
		npts = first = 0;
	int coll = dxpl_collective(dxpl);
	depth--;
	/* offsets within a dataset: no alignment is counted (1, 1) */
	log_note_access(r, kind, first * o->esize, npts * o->esize, (uintptr_t)buf, t0, t1, 1, 1, mt);
	if (coll)
		log_inc(&c[kind == LOG_KIND_WRITE ? LOG_C_COLL_WRITES : LOG_C_COLL_READS], mt);
	errno = e;
}

CAP_EXPORT herr_t H5Dwrite(hid_t d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void *buf)
{
	struct h5_obj *o = dset_get(d);
	if (!o)
		return H5_REAL(Dwrite)(d, mem_type, mem_space, file_space, dxpl, buf);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Dwrite)(d, mem_type, mem_space, file_space, dxpl, buf);
	depth--;
	dset_rw(o, d, LOG_KIND_WRITE, file_space, dxpl, buf, rc, t0);
	return rc;
}

CAP_EXPORT herr_t H5Dread(hid_t d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void *buf)
{
	struct h5_obj *o = dset_get(d);
	if (!o)
		return H5_REAL(Dread)(d, mem_type, mem_space, file_space, dxpl, buf);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Dread)(d, mem_type, mem_space, file_space, dxpl, buf);
	depth--;
	dset_rw(o, d, LOG_KIND_READ, file_space, dxpl, buf, rc, t0);
	return rc;
}

/* An extent may have changed (any dataset's: two ids may name one): whole-extent sizes are
 * asked again. */
static inline void extents_changed(void)
{
	__atomic_fetch_add(&extent_gen, 1, __ATOMIC_RELEASE);
}

/* H5Dset_extent, or its deprecated form H5Dextend (which only grows), through fn. */
static herr_t dset_resized(herr_t (*fn)(hid_t, const hsize_t *), hid_t d, const hsize_t *size)
{
	struct h5_obj *o = dset_get(d);
	if (!o) {
		herr_t rc = fn(d, size);
		extents_changed();
		return rc;
	}
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = fn(d, size);
	extents_changed();
	uint64_t t1 = h5_now();
	int e = errno;
	note_meta(o->rec, LOG_C_META_OTHER, rc < 0, t0, t1);
	if (rc >= 0)
		note_dataset(d, o->rec);
	depth--;
	errno = e;
	return rc;
}

CAP_EXPORT herr_t H5Dset_extent(hid_t d, const hsize_t size[])
{
	return dset_resized(H5_REAL(Dset_extent), d, size);
}

CAP_EXPORT herr_t H5Dextend(hid_t d, const hsize_t size[])
{
	return dset_resized(H5_REAL(Dextend), d, size);
}

CAP_EXPORT herr_t H5Dclose(hid_t d)
{
	struct h5_obj *o = dset_get(d);
	if (!o)
		return H5_REAL(Dclose)(d);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Dclose)(d);
	depth--;
	int e = errno;
	note_meta(o->rec, LOG_C_CLOSES, rc < 0, t0, h5_now());
	if (rc >= 0)
		__atomic_store_n(&o->id, (hid_t)-1, __ATOMIC_RELEASE);
	errno = e;
	return rc;
}

/* h5py closes files and datasets by dropping their last reference, not with H5Fclose/H5Dclose. */
CAP_EXPORT int H5Idec_ref(hid_t id)
{
	struct h5_obj *o = NULL;
	space_forget(id); /* a dataspace's last reference frees it */
	if (h5_active() && id > 0 && !(o = obj_find(dsets, H5_DSETS, id)))
		o = obj_find(files, H5_FILES, id);
	if (!o)
		return H5_REAL(Idec_ref)(id);
	uint64_t t0 = h5_now();
	depth++;
	int left = H5_REAL(Idec_ref)(id);
	depth--;
	int e = errno;
	if (left == 0) {
		note_meta(o->rec, LOG_C_CLOSES, 0, t0, h5_now());
		__atomic_store_n(&o->id, (hid_t)-1, __ATOMIC_RELEASE);
	}
	errno = e;
	return left;
}

/* ---------- calls that change what the caches hold ---------- */

CAP_EXPORT herr_t H5Drefresh(hid_t d)
{
	herr_t rc = H5_REAL(Drefresh)(d);
	extents_changed();
	return rc;
}

CAP_EXPORT herr_t H5Orefresh(hid_t o)
{
	herr_t rc = H5_REAL(Orefresh)(o);
	extents_changed();
	return rc;
}

CAP_EXPORT herr_t H5Sselect_hyperslab(hid_t s, int op, const hsize_t start[], const hsize_t stride[],
				      const hsize_t count[], const hsize_t block[])
{
	herr_t rc = H5_REAL(Sselect_hyperslab)(s, op, start, stride, count, block);
	/* a set replaces the selection: HDF5 refuses overlapping blocks, so it holds count x block
	 * points per dimension; an operation on the old one is asked at the next read or write
	 * (space_changed leaves errno alone) */
	int set = rc >= 0 && op == H5S_SELECT_SET && start && count;
	space_changed(s, 0, set ? start : NULL, count, block);
	return rc;
}

CAP_EXPORT herr_t H5Sselect_elements(hid_t s, int op, size_t n, const hsize_t *coord)
{
	herr_t rc = H5_REAL(Sselect_elements)(s, op, n, coord);
	space_changed(s, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Sselect_all(hid_t s)
{
	herr_t rc = H5_REAL(Sselect_all)(s);
	space_changed(s, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Sselect_none(hid_t s)
{
	herr_t rc = H5_REAL(Sselect_none)(s);
	space_changed(s, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Sselect_copy(hid_t dst, hid_t src)
{
	herr_t rc = H5_REAL(Sselect_copy)(dst, src);
	space_changed(dst, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Smodify_select(hid_t s1, int op, hid_t s2)
{
	herr_t rc = H5_REAL(Smodify_select)(s1, op, s2);
	space_changed(s1, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Sselect_adjust(hid_t s, const hssize_t *offset)
{
	herr_t rc = H5_REAL(Sselect_adjust)(s, offset);
	space_changed(s, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Soffset_simple(hid_t s, const hssize_t *offset)
{
	__atomic_store_n(&offsets_used, 1, __ATOMIC_RELAXED); /* before: a set racing it must not compute */
	herr_t rc = H5_REAL(Soffset_simple)(s, offset);
	space_changed(s, 0, NULL, NULL, NULL);
	return rc;
}

CAP_EXPORT herr_t H5Sset_extent_simple(hid_t s, int rank, const hsize_t dims[], const hsize_t max[])
{
	herr_t rc = H5_REAL(Sset_extent_simple)(s, rank, dims, max);
	space_forget(s);
	return rc;
}

CAP_EXPORT herr_t H5Sset_extent_none(hid_t s)
{
	herr_t rc = H5_REAL(Sset_extent_none)(s);
	space_forget(s);
	return rc;
}

CAP_EXPORT herr_t H5Sextent_copy(hid_t dst, hid_t src)
{
	herr_t rc = H5_REAL(Sextent_copy)(dst, src);
	space_forget(dst);
	return rc;
}

CAP_EXPORT herr_t H5Sclose(hid_t s)
{
	space_forget(s);
	return H5_REAL(Sclose)(s);
}

/* A transfer property list's mode may have changed: every cached mode is asked again. */
static inline void dxpls_changed(void)
{
	__atomic_fetch_add(&dxpl_gen, 1, __ATOMIC_RELEASE);
}

CAP_EXPORT herr_t H5Pset_dxpl_mpio(hid_t p, int mode)
{
	herr_t rc = H5_REAL(Pset_dxpl_mpio)(p, mode);
	dxpls_changed();
	return rc;
}

CAP_EXPORT herr_t H5Pset(hid_t p, const char *name, const void *value)
{
	herr_t rc = H5_REAL(Pset)(p, name, value);
	dxpls_changed();
	return rc;
}

CAP_EXPORT herr_t H5Pcopy_prop(hid_t dst, hid_t src, const char *name)
{
	herr_t rc = H5_REAL(Pcopy_prop)(dst, src, name);
	dxpls_changed();
	return rc;
}

CAP_EXPORT herr_t H5Premove(hid_t p, const char *name)
{
	herr_t rc = H5_REAL(Premove)(p, name);
	dxpls_changed();
	return rc;
}

/* H5close closes every id without H5Dclose or H5Sclose, and a library opened again numbers its
 * ids from the start: nothing tracked or cached survives it (the program may not call HDF5 from
 * another thread meanwhile). */
CAP_EXPORT herr_t H5close(void)
{
	herr_t rc = H5_REAL(close)();
	memset(dsets, 0, sizeof dsets);
	memset(files, 0, sizeof files);
	memset(spaces, 0, sizeof spaces);
	memset(dxpls, 0, sizeof dxpls);
	extents_changed();
	dxpls_changed();
	return rc;
}
