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
 * Python loads with dlopen long after exec, is seen too. Offsets within a dataset are not recorded.
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
#include "capture/core.h"
#include "log/record.h"

/* HDF5 1.10 .. 1.14 ABI */
typedef int64_t hid_t;
typedef int herr_t;
typedef unsigned long long hsize_t;
typedef long long hssize_t;
#define H5P_DEFAULT ((hid_t)0)
#define H5S_ALL ((hid_t)0)
#define H5D_CHUNKED 2
#define H5FD_MPIO_COLLECTIVE 1
#define H5I_DATASET 5

#define H5_DSETS 1024 /* open datasets tracked at once (power of two) */
#define H5_FILES 256

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
};

struct h5_obj {
	hid_t id; /* 0: free; -1: a deleted slot */
	struct log_record *rec;
	uint64_t esize; /* datasets: bytes per element */
};

static const struct cap_companion_api *api;
static struct cap_state *st;
static struct h5_real h5;
static void *h5_lib; /* the libhdf5 whose functions h5 holds */
static struct h5_obj dsets[H5_DSETS], files[H5_FILES];
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
	H5_GET(Pget_dxpl_mpio);
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

static struct h5_obj *obj_find(struct h5_obj *t, uint32_t n, hid_t id)
{
	uint32_t i = (uint32_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 40) & (n - 1);
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
	uint32_t i = (uint32_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 40) & (n - 1);
	for (uint32_t k = 0; k < n; k++, i = (i + 1) & (n - 1)) {
		hid_t v = __atomic_load_n(&t[i].id, __ATOMIC_ACQUIRE);
		if (v > 0)
			continue;
		if (!__atomic_compare_exchange_n(&t[i].id, &v, (hid_t)-2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		t[i].rec = rec;
		t[i].esize = esize;
		__atomic_store_n(&t[i].id, id, __ATOMIC_RELEASE);
		return &t[i];
	}
	return NULL;
}

/* The tracked dataset id, when the call should be recorded. */
static inline struct h5_obj *dset_get(hid_t id)
{
	return h5_active() && id > 0 ? obj_find(dsets, H5_DSETS, id) : NULL;
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

/* What a dataset's creation properties and extent say about it, into its record. */
static uint64_t note_dataset(hid_t d, struct log_record *r)
{
	uint64_t *c = r->counters, esize = 0;
	hsize_t dims[32];
	hid_t s = h5.Dget_space ? h5.Dget_space(d) : -1;
	if (s >= 0) {
		int nd = h5.Sget_simple_extent_dims ? h5.Sget_simple_extent_dims(s, dims, NULL) : -1;
		if (nd >= 0) {
			log_max(&c[LOG_C_H5_NDIMS], (uint64_t)nd, 1);
			for (int i = 0; i < nd && i < 3; i++)
				log_max(&c[LOG_C_H5_DIM0 + i], dims[i], 1);
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
		if (layout == H5D_CHUNKED && (nd = h5.Pget_chunk(p, 32, dims)) > 0)
			for (int i = 0; i < nd && i < 3; i++)
				log_max(&c[LOG_C_H5_CHUNK0 + i], dims[i], 1);
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
 * times the element size, counted as one access without an offset. */
static void dset_rw(struct h5_obj *o, hid_t d, int kind, hid_t file_space, hid_t dxpl, herr_t rc, uint64_t t0)
{
	uint64_t t1 = h5_now();
	int e = errno;
	struct log_record *r = o->rec;
	uint64_t *c = r->counters;
	if (rc < 0) {
		log_inc(&c[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS], 1);
		__atomic_fetch_or(&r->flags, (uint16_t)LOG_R_ERR_FAULT, __ATOMIC_RELAXED);
		errno = e;
		return;
	}
	depth++;
	hssize_t pts = -1;
	if (file_space == H5S_ALL) {
		hid_t s = h5.Dget_space(d);
		if (s >= 0) {
			pts = h5.Sget_select_npoints(s);
			h5.Sclose(s);
		}
	} else {
		pts = h5.Sget_select_npoints(file_space);
	}
	int mode = 0;
	int coll = dxpl != H5P_DEFAULT && h5.Pget_dxpl_mpio && h5.Pget_dxpl_mpio(dxpl, &mode) >= 0 &&
		   mode == H5FD_MPIO_COLLECTIVE;
	depth--;
	uint64_t len = pts > 0 ? (uint64_t)pts * o->esize : 0;
	const int w = kind == LOG_KIND_WRITE;
	log_inc(&c[w ? LOG_C_WRITES : LOG_C_READS], 1);
	log_add(&c[w ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ], len, 1);
	log_inc(w ? &r->write_hist[log_hist_bucket(len)] : &r->read_hist[log_hist_bucket(len)], 1);
	log_common_add(r->sizes, &r->sizes_other, (int64_t)len, 1);
	log_add(&c[w ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], t1 - t0, 1);
	log_first(&c[w ? LOG_C_WRITE_FIRST : LOG_C_READ_FIRST], t0);
	log_max(&c[w ? LOG_C_WRITE_LAST : LOG_C_READ_LAST], t1, 1);
	if (coll)
		log_inc(&c[w ? LOG_C_COLL_WRITES : LOG_C_COLL_READS], 1);
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
	dset_rw(o, d, LOG_KIND_WRITE, file_space, dxpl, rc, t0);
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
	dset_rw(o, d, LOG_KIND_READ, file_space, dxpl, rc, t0);
	return rc;
}

CAP_EXPORT herr_t H5Dset_extent(hid_t d, const hsize_t size[])
{
	struct h5_obj *o = dset_get(d);
	if (!o)
		return H5_REAL(Dset_extent)(d, size);
	uint64_t t0 = h5_now();
	depth++;
	herr_t rc = H5_REAL(Dset_extent)(d, size);
	uint64_t t1 = h5_now();
	int e = errno;
	note_meta(o->rec, LOG_C_META_OTHER, rc < 0, t0, t1);
	if (rc >= 0)
		note_dataset(d, o->rec);
	depth--;
	errno = e;
	return rc;
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
