/* SPDX-License-Identifier: MIT */
/*
 * OTF2 export of the unified timeline (timeline.h), for Vampir, Scalasca and otf2-print. One
 * OTF2 location per track (a thread's events of one layer; a device's or other kernel work's),
 * so that the timestamps of each location stay ordered; a process's locations form its location
 * group, kernel work without a thread forms the group "kernel (no thread)". Every model event
 * becomes an Enter/Leave pair of the region named by its layer and op; a read, write or sync on
 * a known file also becomes an IoOperationBegin/IoOperationComplete pair, inside that region, on
 * the I/O handle of (process, layer, file). A run of count calls stays one event: one region
 * visit and one operation of size x count bytes, the count in the "calls" attribute. So every
 * event is exactly 2 or 4 records, and docs/OTF2.md says which.
 *
 * It does not build or change the timeline. Events are written one location at a time (writer
 * opened, filled, closed), so memory stays at one OTF2 event chunk however many threads the job
 * had; global definitions are written last, when the record count of each location is known.
 */
#include "analysis/timeline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <otf2/otf2.h>

#define OX_NAME "traces" /* the archive: DIR/traces.otf2 (anchor), DIR/traces.def, DIR/traces/ */

static const char *const op_names[] = {
#define OX_X_OP(name, str) str,
	LOG_OPS(OX_X_OP)
#undef OX_X_OP
};
#define NOP_NAMES (sizeof op_names / sizeof op_names[0])

/* The I/O paradigm of a layer's I/O handles. The first three are OTF2's known paradigms, with
 * the attributes its documentation gives them; the kernel layers are iostrata's own. The page
 * cache and mount layers have none: their events are state changes, not operations on a file. */
static const struct {
	uint8_t layer;
	const char *ident, *name;
	OTF2_IoParadigmClass cls;
	OTF2_IoParadigmFlag flags;
} paradigms[] = {
	{ LOG_LAYER_POSIX, "POSIX", "POSIX I/O", OTF2_IO_PARADIGM_CLASS_SERIAL, OTF2_IO_PARADIGM_FLAG_OS },
	{ LOG_LAYER_STDIO, "ISOC", "ISO C I/O", OTF2_IO_PARADIGM_CLASS_SERIAL, OTF2_IO_PARADIGM_FLAG_NONE },
	{ LOG_LAYER_MPIIO, "MPI-IO", "MPI I/O", OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE },
	{ LOG_LAYER_SYSCALL, "iostrata-syscall", "Linux system calls (kernel view)", OTF2_IO_PARADIGM_CLASS_SERIAL,
	  OTF2_IO_PARADIGM_FLAG_NONE },
	{ LOG_LAYER_FS, "iostrata-fs", "Linux filesystem (ext4, xfs)", OTF2_IO_PARADIGM_CLASS_SERIAL,
	  OTF2_IO_PARADIGM_FLAG_NONE },
	{ LOG_LAYER_BLOCK, "iostrata-block", "Linux block layer", OTF2_IO_PARADIGM_CLASS_SERIAL,
	  OTF2_IO_PARADIGM_FLAG_NONE },
};
#define NPARA (sizeof paradigms / sizeof paradigms[0])
#define NO_PARA 0xff

/* Attributes of the Enter record (each only when it says something; see docs/OTF2.md). */
enum { A_EVENT, A_FILE, A_OFFSET, A_SIZE, A_RESULT, A_CALLS, A_BUSY, A_MIN, A_PARENT, A_CACHE, A_FLAGS, NATTR };
static const struct {
	const char *name, *doc;
	OTF2_Type type;
} attrs[NATTR] = {
	[A_EVENT] = { "event", "index of the event in the iostrata timeline (also its I/O operation's matching id)",
		      OTF2_TYPE_UINT64 },
	[A_FILE] = { "file", "path of the file", OTF2_TYPE_STRING },
	[A_OFFSET] = { "offset", "file offset in bytes (a run: its first call's)", OTF2_TYPE_UINT64 },
	[A_SIZE] = { "size", "bytes per call", OTF2_TYPE_UINT64 },
	[A_RESULT] = { "result", "user layers: -errno; kernel layers: bytes done or the return value",
		       OTF2_TYPE_INT64 },
	[A_CALLS] = { "calls", "calls a run of alike calls stands for (only when more than one)", OTF2_TYPE_UINT64 },
	[A_BUSY] = { "busy_ns", "ns inside the run's calls (the region spans first start to last end)",
		     OTF2_TYPE_UINT64 },
	[A_MIN] = { "min_ns", "ns of the run's fastest call", OTF2_TYPE_UINT64 },
	[A_PARENT] = { "parent", "event index of the user call this kernel event happened in", OTF2_TYPE_UINT64 },
	[A_CACHE] = { "page_cache", "a user read: hit (no page read in under it) or miss", OTF2_TYPE_STRING },
	[A_FLAGS] = { "flags", "iostrata TL_F_* and LOG_E_* event flags", OTF2_TYPE_UINT64 },
};

/* The fixed strings' ids (the first ones written): then 2 per attribute (name, description) and
 * 2 per paradigm (identification, name). */
enum { S_NODE, S_NODE_CLASS, S_KERNEL, S_EMPTY, S_HIT, S_MISS, S_ATTRS };
#define S_PARAS (S_ATTRS + 2 * NATTR)
#define S_FIXED (S_PARAS + 2 * NPARA)

struct ox_handle {
	uint32_t group, file;
	uint8_t para;
};

struct ox {
	const struct timeline *tl;
	const char *dir;
	char *err;
	size_t errlen;
	char msg[200];          /* the first message OTF2 gave through its error callback */
	OTF2_ErrorCode rc;      /* the first failed OTF2 call's code (definitions are checked at the end) */

	uint32_t *order;        /* event indices by track, then start, longer first (parents first) */
	size_t *first;          /* track t's events: order[first[t] .. first[t + 1]) */
	size_t maxdepth;        /* events on the busiest track: bounds the nesting stack */
	int32_t *pids;          /* the pids with thread tracks, sorted */
	size_t npids;
	uint32_t *gid;          /* per pids[i]: its location group (parents before children) */
	int32_t *gpid;          /* per group below npids: its pid */
	uint32_t *gparent;      /* per group below npids: its creator's group, TL_NONE when none */
	uint32_t kgroup;        /* the group of device and async tracks (= npids), TL_NONE when none */
	uint32_t *group;        /* per track */
	uint32_t *region;       /* per (layer << 8 | op): its region, TL_NONE when unused */
	uint16_t *regions;      /* per region: its (layer << 8 | op) */
	size_t nregions;
	uint32_t *handle_of;    /* per event: the I/O handle of its I/O records, TL_NONE when none */
	struct ox_handle *handles;
	size_t nhandles;
	uint64_t *nrec;         /* per location: records written on it */
	size_t nlocs;           /* one per track; one empty location when there is no track */
	uint64_t t0, t1;

	OTF2_Archive *ar;
	OTF2_AttributeList *alist;
	uint32_t *stack;        /* open events of the track being written */

	/* string ids: fixed ones, then one per group, per location, three per region, one per file */
	OTF2_StringRef s_groups, s_locs, s_regions, s_files, nstr;
};

/* The error line (one line, whatever a path or OTF2's message holds). */
static void fail(struct ox *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
	for (char *p = x->err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* The one line for a failed OTF2 call: what we were doing, OTF2's code and its own words. */
static int fail_otf2(struct ox *x, const char *what, OTF2_ErrorCode rc)
{
	fail(x, "OTF2 archive %s: %s failed: %s%s%s", x->dir, what, OTF2_Error_GetDescription(rc),
	     x->msg[0] ? ": " : "", x->msg);
	return -EIO;
}

/* OTF2 reports errors through this callback (by default it prints them on stderr). Keep the
 * first message for the error line and say nothing else. The callback is process-wide: an export
 * must not run alongside other OTF2 use in the same process (the CLI has none). */
static OTF2_ErrorCode on_otf2_error(void *data, const char *file, uint64_t line, const char *function,
				    OTF2_ErrorCode code, const char *fmt, va_list va)
{
	struct ox *x = data;
	(void)file, (void)line, (void)function;
	if (!x->msg[0])
		vsnprintf(x->msg, sizeof x->msg, fmt, va);
	return code;
}

/* Flush full event chunks to the file. No post-flush callback: OTF2 then writes no BufferFlush
 * records, which would add uncounted records to the locations. */
static OTF2_FlushType pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef loc, void *caller, bool final)
{
	(void)data, (void)type, (void)loc, (void)caller, (void)final;
	return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = NULL };

static uint8_t layer_para(unsigned layer)
{
	for (unsigned p = 0; p < NPARA; p++)
		if (paradigms[p].layer == layer)
			return (uint8_t)p;
	return NO_PARA;
}

/* The OTF2 I/O operation mode of an op, or -1 for ops written as a region visit only. */
static int op_io_mode(unsigned op)
{
	switch (op) {
	case LOG_OP_READ: case LOG_OP_MPI_READ: case LOG_OP_FS_READ: case LOG_OP_BLK_READ:
		return OTF2_IO_OPERATION_MODE_READ;
	case LOG_OP_WRITE: case LOG_OP_MPI_WRITE: case LOG_OP_FS_WRITE: case LOG_OP_BLK_WRITE:
		return OTF2_IO_OPERATION_MODE_WRITE;
	case LOG_OP_SYNC: case LOG_OP_MSYNC: case LOG_OP_MPI_SYNC: case LOG_OP_FS_SYNC: case LOG_OP_BLK_FLUSH:
		return OTF2_IO_OPERATION_MODE_FLUSH;
	default:
		return -1;
	}
}

/* Bytes asked for and bytes done by an event's I/O operation. The user trace layers record the
 * bytes each call moved (size) and 0 or -errno; the kernel log (MPI-IO hooks included) records
 * the bytes asked for (size) and the bytes done or -errno (result). */
static uint64_t io_request(const struct tl_event *e)
{
	return e->size * (e->count ? e->count : 1);
}

static uint64_t io_result(const struct tl_event *e)
{
	if (e->result < 0)
		return 0;
	if (e->layer == LOG_LAYER_POSIX || e->layer == LOG_LAYER_STDIO)
		return io_request(e);
	return (uint64_t)e->result;
}

/* ---- preparation: order, groups, regions, handles ---- */

static int cmp_in_track(const void *a, const void *b, void *ev)
{
	const struct tl_event *x = (const struct tl_event *)ev + *(const uint32_t *)a;
	const struct tl_event *y = (const struct tl_event *)ev + *(const uint32_t *)b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int in_track_order(const struct tl_event *ev, const uint32_t *o, size_t n)
{
	for (size_t k = 1; k < n; k++) {
		const struct tl_event *a = &ev[o[k - 1]], *b = &ev[o[k]];
		if (a->start_ns > b->start_ns || (a->start_ns == b->start_ns && a->end_ns < b->end_ns))
			return 0;
	}
	return 1;
}

/* Events grouped by track (stable, so the model's order is kept), each track's sorted by start,
 * longer first, when the model's order is not that already. */
static int order_events(struct ox *x)
{
	const struct timeline *tl = x->tl;
	x->order = malloc((tl->nev ? tl->nev : 1) * sizeof *x->order);
	x->first = calloc(tl->ntracks + 2, sizeof *x->first);
	if (!x->order || !x->first)
		return -ENOMEM;
	uint64_t lo = tl->t0_ns, hi = tl->t1_ns;
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (e->track >= tl->ntracks) {
			fail(x, "OTF2 export: event %zu is on track %u of %zu", i, e->track, tl->ntracks);
			return -EINVAL;
		}
		if (e->end_ns < e->start_ns) {
			fail(x, "OTF2 export: event %zu ends (%llu ns) before it starts (%llu ns)", i,
			     (unsigned long long)e->end_ns, (unsigned long long)e->start_ns);
			return -EINVAL;
		}
		x->first[e->track + 1]++;
		if (e->start_ns < lo)
			lo = e->start_ns;
		if (e->end_ns > hi)
			hi = e->end_ns;
	}
	x->t0 = lo;
	x->t1 = hi > lo ? hi : lo;
	for (size_t t = 0; t < tl->ntracks; t++) {
		size_t n = x->first[t + 1];
		if (n > x->maxdepth)
			x->maxdepth = n;
		x->first[t + 1] += x->first[t];
	}
	size_t *pos = malloc((tl->ntracks + 1) * sizeof *pos);
	if (!pos)
		return -ENOMEM;
	memcpy(pos, x->first, (tl->ntracks + 1) * sizeof *pos);
	for (size_t i = 0; i < tl->nev; i++)
		x->order[pos[tl->ev[i].track]++] = (uint32_t)i;
	free(pos);
	for (size_t t = 0; t < tl->ntracks; t++) {
		uint32_t *o = x->order + x->first[t];
		size_t n = x->first[t + 1] - x->first[t];
		if (!in_track_order(tl->ev, o, n))
			qsort_r(o, n, sizeof *o, cmp_in_track, (void *)tl->ev);
	}
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static uint32_t pid_index(const struct ox *x, int32_t pid)
{
	const int32_t *p = bsearch(&pid, x->pids, x->npids, sizeof *x->pids, cmp_i32);
	return p ? (uint32_t)(p - x->pids) : TL_NONE;
}

struct ox_rank {
	uint32_t depth, i;
	int32_t pid;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct ox_rank *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Group ids ordered by depth in the process tree, then pid: a group's creator (its parent
 * process, when that has a group too) is defined before it, as readers resolve references to
 * definitions they have already read. */
static int rank_groups(struct ox *x)
{
	const struct timeline *tl = x->tl;
	size_t n = x->npids ? x->npids : 1;
	uint32_t *up = malloc(n * sizeof *up);
	struct ox_rank *r = malloc(n * sizeof *r);
	x->gid = malloc(n * sizeof *x->gid);
	x->gpid = malloc(n * sizeof *x->gpid);
	x->gparent = malloc(n * sizeof *x->gparent);
	if (!up || !r || !x->gid || !x->gpid || !x->gparent) {
		free(up);
		free(r);
		return -ENOMEM;
	}
	memset(up, 0xff, n * sizeof *up);
	for (size_t k = 0; k < tl->nprocs; k++) {
		uint32_t i = pid_index(x, tl->procs[k].pid), p = pid_index(x, tl->procs[k].ppid);
		if (i != TL_NONE && up[i] == TL_NONE && p != i)
			up[i] = p;
	}
	for (size_t i = 0; i < x->npids; i++) {
		uint32_t d = 0;
		for (uint32_t a = up[i]; a != TL_NONE && d <= x->npids; a = up[a])
			d++;
		if (d > x->npids) /* a cycle of pids (reuse): no creator then */
			up[i] = TL_NONE, d = 0;
		r[i] = (struct ox_rank){ .depth = d, .i = (uint32_t)i, .pid = x->pids[i] };
	}
	qsort(r, x->npids, sizeof *r, cmp_rank);
	for (size_t g = 0; g < x->npids; g++) {
		x->gid[r[g].i] = (uint32_t)g;
		x->gpid[g] = r[g].pid;
	}
	for (size_t g = 0; g < x->npids; g++) {
		uint32_t p = up[r[g].i];
		x->gparent[g] = p == TL_NONE ? TL_NONE : x->gid[p];
	}
	free(up);
	free(r);
	return 0;
}

/* One location group per process with a thread track, sorted by pid, then "kernel (no thread)"
 * when there are device or async tracks. */
static int assign_groups(struct ox *x)
{
	const struct timeline *tl = x->tl;
	x->pids = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *x->pids);
	x->group = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *x->group);
	if (!x->pids || !x->group)
		return -ENOMEM;
	int kernel = 0;
	for (size_t t = 0; t < tl->ntracks; t++) {
		if (tl->tracks[t].kind == TL_TRACK_THREAD)
			x->pids[x->npids++] = tl->tracks[t].pid;
		else
			kernel = 1;
	}
	qsort(x->pids, x->npids, sizeof *x->pids, cmp_i32);
	size_t n = 0;
	for (size_t i = 0; i < x->npids; i++)
		if (!n || x->pids[n - 1] != x->pids[i])
			x->pids[n++] = x->pids[i];
	x->npids = n;
	x->kgroup = kernel ? (uint32_t)n : TL_NONE;
	if (rank_groups(x) < 0)
		return -ENOMEM;
	for (size_t t = 0; t < tl->ntracks; t++) {
		const struct tl_track *k = &tl->tracks[t];
		x->group[t] = k->kind == TL_TRACK_THREAD ? x->gid[pid_index(x, k->pid)] : x->kgroup;
	}
	return 0;
}

/* A region per (layer, op) that occurs, numbered in order of first occurrence. */
static int assign_regions(struct ox *x)
{
	const struct timeline *tl = x->tl;
	x->region = malloc(65536 * sizeof *x->region);
	x->regions = malloc(65536 * sizeof *x->regions);
	if (!x->region || !x->regions)
		return -ENOMEM;
	memset(x->region, 0xff, 65536 * sizeof *x->region);
	for (size_t i = 0; i < tl->nev; i++) {
		unsigned key = (unsigned)tl->ev[i].layer << 8 | tl->ev[i].op;
		if (x->region[key] == TL_NONE) {
			x->region[key] = (uint32_t)x->nregions;
			x->regions[x->nregions++] = (uint16_t)key;
		}
	}
	return 0;
}

static int cmp_track_para(const void *a, const void *b, void *ox)
{
	const struct ox *x = ox;
	uint32_t ta = *(const uint32_t *)a, tb = *(const uint32_t *)b;
	uint64_t ka = (uint64_t)x->group[ta] << 8 | layer_para(x->tl->tracks[ta].layer);
	uint64_t kb = (uint64_t)x->group[tb] << 8 | layer_para(x->tl->tracks[tb].layer);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return ta < tb ? -1 : 1;
}

/* An I/O handle per (location group, paradigm, file) that has I/O records: the tracks of one
 * group and paradigm are visited together, with one file -> handle table reset between them. */
static int assign_handles(struct ox *x)
{
	const struct timeline *tl = x->tl;
	int rc = -ENOMEM;
	uint32_t *tracks = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *tracks);
	uint32_t *fh = malloc((tl->nfiles ? tl->nfiles : 1) * sizeof *fh);
	uint32_t *touched = malloc((tl->nfiles ? tl->nfiles : 1) * sizeof *touched);
	size_t ntouched = 0, cap = 0;
	x->handle_of = malloc((tl->nev ? tl->nev : 1) * sizeof *x->handle_of);
	if (!tracks || !fh || !touched || !x->handle_of)
		goto err;
	memset(fh, 0xff, (tl->nfiles ? tl->nfiles : 1) * sizeof *fh);
	memset(x->handle_of, 0xff, (tl->nev ? tl->nev : 1) * sizeof *x->handle_of);
	for (size_t t = 0; t < tl->ntracks; t++)
		tracks[t] = (uint32_t)t;
	qsort_r(tracks, tl->ntracks, sizeof *tracks, cmp_track_para, x);
	for (size_t k = 0; k < tl->ntracks; k++) {
		uint32_t t = tracks[k], prev = k ? tracks[k - 1] : t;
		uint8_t para = layer_para(tl->tracks[t].layer);
		if (x->group[prev] != x->group[t] || layer_para(tl->tracks[prev].layer) != para) {
			for (size_t j = 0; j < ntouched; j++)
				fh[touched[j]] = TL_NONE;
			ntouched = 0;
		}
		for (size_t o = x->first[t]; o < x->first[t + 1]; o++) {
			uint32_t i = x->order[o];
			const struct tl_event *e = &tl->ev[i];
			if (op_io_mode(e->op) < 0 || e->file >= tl->nfiles || layer_para(e->layer) == NO_PARA)
				continue;
			if (fh[e->file] == TL_NONE) {
				if (x->nhandles == cap) {
					cap = cap ? 2 * cap : 64;
					struct ox_handle *h = realloc(x->handles, cap * sizeof *h);
					if (!h)
						goto err;
					x->handles = h;
				}
				x->handles[x->nhandles] = (struct ox_handle){ .group = x->group[t], .file = e->file,
									     .para = layer_para(e->layer) };
				fh[e->file] = (uint32_t)x->nhandles++;
				touched[ntouched++] = e->file;
			}
			x->handle_of[i] = fh[e->file];
		}
	}
	rc = 0;
err:
	free(tracks);
	free(fh);
	free(touched);
	return rc;
}

/* ---- events ---- */

static OTF2_ErrorCode put_attrs(struct ox *x, uint32_t i)
{
	const struct tl_event *e = &x->tl->ev[i];
	OTF2_AttributeList *l = x->alist;
	OTF2_ErrorCode rc = OTF2_AttributeList_AddUint64(l, A_EVENT, i);
	if (rc == OTF2_SUCCESS && e->file < x->tl->nfiles)
		rc = OTF2_AttributeList_AddStringRef(l, A_FILE, x->s_files + e->file);
	if (rc == OTF2_SUCCESS && e->offset != UINT64_MAX)
		rc = OTF2_AttributeList_AddUint64(l, A_OFFSET, e->offset);
	if (rc == OTF2_SUCCESS && e->size)
		rc = OTF2_AttributeList_AddUint64(l, A_SIZE, e->size);
	if (rc == OTF2_SUCCESS && e->result)
		rc = OTF2_AttributeList_AddInt64(l, A_RESULT, e->result);
	if (rc == OTF2_SUCCESS && e->count > 1)
		rc = OTF2_AttributeList_AddUint64(l, A_CALLS, e->count);
	if (rc == OTF2_SUCCESS && e->count > 1)
		rc = OTF2_AttributeList_AddUint64(l, A_BUSY, e->busy_ns);
	if (rc == OTF2_SUCCESS && e->count > 1)
		rc = OTF2_AttributeList_AddUint64(l, A_MIN, e->min_ns);
	if (rc == OTF2_SUCCESS && e->parent != TL_NONE)
		rc = OTF2_AttributeList_AddUint64(l, A_PARENT, e->parent);
	if (rc == OTF2_SUCCESS && (e->flags & (TL_F_HIT | TL_F_MISS)))
		rc = OTF2_AttributeList_AddStringRef(l, A_CACHE, e->flags & TL_F_MISS ? S_MISS : S_HIT);
	if (rc == OTF2_SUCCESS && e->flags)
		rc = OTF2_AttributeList_AddUint64(l, A_FLAGS, e->flags);
	return rc;
}

static OTF2_ErrorCode put_enter(struct ox *x, OTF2_EvtWriter *w, uint32_t i, uint64_t ts)
{
	const struct tl_event *e = &x->tl->ev[i];
	OTF2_ErrorCode rc = put_attrs(x, i);
	if (rc == OTF2_SUCCESS)
		rc = OTF2_EvtWriter_Enter(w, x->alist, ts, x->region[(unsigned)e->layer << 8 | e->op]);
	if (rc == OTF2_SUCCESS && x->handle_of[i] != TL_NONE)
		rc = OTF2_EvtWriter_IoOperationBegin(w, NULL, ts, x->handle_of[i],
						     (OTF2_IoOperationMode)op_io_mode(e->op),
						     OTF2_IO_OPERATION_FLAG_NONE, io_request(e), i);
	return rc;
}

static OTF2_ErrorCode put_leave(struct ox *x, OTF2_EvtWriter *w, uint32_t i, uint64_t ts)
{
	const struct tl_event *e = &x->tl->ev[i];
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	if (x->handle_of[i] != TL_NONE)
		rc = OTF2_EvtWriter_IoOperationComplete(w, NULL, ts, x->handle_of[i], io_result(e), i);
	if (rc == OTF2_SUCCESS)
		rc = OTF2_EvtWriter_Leave(w, NULL, ts, x->region[(unsigned)e->layer << 8 | e->op]);
	return rc;
}

/* One location's records. Events nest (a parent before its children, each left before the next
 * sibling enters); a stack of open events emits each Leave when the next event starts at or
 * after its end. No timestamp goes below the location's previous one, even on a track whose
 * events overlap without nesting (the model promises they do not). */
static int write_track(struct ox *x, size_t t)
{
	const struct timeline *tl = x->tl;
	OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(x->ar, t);
	if (!w)
		return fail_otf2(x, "opening a location's event writer", OTF2_ERROR_MEM_ALLOC_FAILED);
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	size_t depth = 0;
	uint64_t last = x->t0;
	for (size_t o = x->first[t]; o < x->first[t + 1] && rc == OTF2_SUCCESS; o++) {
		uint32_t i = x->order[o];
		const struct tl_event *e = &tl->ev[i];
		while (rc == OTF2_SUCCESS && depth && tl->ev[x->stack[depth - 1]].end_ns <= e->start_ns) {
			uint32_t j = x->stack[--depth];
			if (tl->ev[j].end_ns > last)
				last = tl->ev[j].end_ns;
			rc = put_leave(x, w, j, last);
		}
		if (e->start_ns > last)
			last = e->start_ns;
		if (rc == OTF2_SUCCESS)
			rc = put_enter(x, w, i, last);
		x->stack[depth++] = i;
	}
	while (rc == OTF2_SUCCESS && depth) {
		uint32_t j = x->stack[--depth];
		if (tl->ev[j].end_ns > last)
			last = tl->ev[j].end_ns;
		rc = put_leave(x, w, j, last);
	}
	if (rc == OTF2_SUCCESS)
		rc = OTF2_EvtWriter_GetNumberOfEvents(w, &x->nrec[t]);
	OTF2_ErrorCode crc = OTF2_Archive_CloseEvtWriter(x->ar, w);
	if (rc != OTF2_SUCCESS)
		return fail_otf2(x, "writing events", rc);
	if (crc != OTF2_SUCCESS)
		return fail_otf2(x, "closing an event file", crc);
	return 0;
}

static int write_events(struct ox *x)
{
	OTF2_ErrorCode rc = OTF2_Archive_OpenEvtFiles(x->ar);
	if (rc != OTF2_SUCCESS)
		return fail_otf2(x, "opening the event files", rc);
	for (size_t t = 0; t < x->nlocs; t++) {
		int r = write_track(x, t);
		if (r < 0)
			return r;
	}
	if ((rc = OTF2_Archive_CloseEvtFiles(x->ar)) != OTF2_SUCCESS)
		return fail_otf2(x, "closing the event files", rc);
	/* An empty local definition file per location, as OTF2 readers expect one. */
	if ((rc = OTF2_Archive_OpenDefFiles(x->ar)) != OTF2_SUCCESS)
		return fail_otf2(x, "opening the local definition files", rc);
	for (size_t t = 0; t < x->nlocs; t++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(x->ar, t);
		if (!dw)
			return fail_otf2(x, "opening a local definition writer", OTF2_ERROR_MEM_ALLOC_FAILED);
		if ((rc = OTF2_Archive_CloseDefWriter(x->ar, dw)) != OTF2_SUCCESS)
			return fail_otf2(x, "closing a local definition file", rc);
	}
	if ((rc = OTF2_Archive_CloseDefFiles(x->ar)) != OTF2_SUCCESS)
		return fail_otf2(x, "closing the local definition files", rc);
	return 0;
}

/* ---- global definitions ---- */

/* Calls that keep the first failure in x->rc and do nothing after one. */
static OTF2_StringRef def_str(struct ox *x, OTF2_GlobalDefWriter *w, const char *s)
{
	OTF2_StringRef id = x->nstr++;
	if (x->rc == OTF2_SUCCESS)
		x->rc = OTF2_GlobalDefWriter_WriteString(w, id, s);
	return id;
}

static void keep(struct ox *x, OTF2_ErrorCode rc)
{
	if (x->rc == OTF2_SUCCESS)
		x->rc = rc;
}

static const char *exe_name(const struct timeline *tl, int32_t pid)
{
	for (size_t i = 0; i < tl->nprocs; i++) {
		if (tl->procs[i].pid != pid || !tl->procs[i].exe)
			continue;
		const char *slash = strrchr(tl->procs[i].exe, '/');
		return slash && slash[1] ? slash + 1 : tl->procs[i].exe;
	}
	return NULL;
}

static const char *op_name(unsigned op)
{
	return op < NOP_NAMES ? op_names[op] : "?";
}

/* The ids of the strings def_strings writes, known before the events (which refer to paths) are
 * written: the fixed ones, then one per group, per location, three per region (name, canonical
 * name, description) and one per file. */
static void layout_strings(struct ox *x)
{
	x->s_groups = S_FIXED;
	x->s_locs = x->s_groups + (OTF2_StringRef)x->npids;
	x->s_regions = x->s_locs + (OTF2_StringRef)x->tl->ntracks;
	x->s_files = x->s_regions + 3 * (OTF2_StringRef)x->nregions;
}

/* Every string, first, in layout_strings's order. 0, or -EPROTO when the two disagree. */
static int def_strings(struct ox *x, OTF2_GlobalDefWriter *w)
{
	const struct timeline *tl = x->tl;
	char buf[160];
	def_str(x, w, "host");
	def_str(x, w, "node");
	def_str(x, w, "kernel (no thread)");
	def_str(x, w, "(no events)");
	def_str(x, w, "hit");
	def_str(x, w, "miss");
	for (unsigned a = 0; a < NATTR; a++) {
		def_str(x, w, attrs[a].name);
		def_str(x, w, attrs[a].doc);
	}
	for (unsigned p = 0; p < NPARA; p++) {
		def_str(x, w, paradigms[p].ident);
		def_str(x, w, paradigms[p].name);
	}
	if (x->nstr != x->s_groups)
		return -EPROTO;
	for (size_t g = 0; g < x->npids; g++) {
		const char *exe = exe_name(tl, x->gpid[g]);
		if (exe)
			snprintf(buf, sizeof buf, "%s (pid %d)", exe, x->gpid[g]);
		else
			snprintf(buf, sizeof buf, "pid %d", x->gpid[g]);
		def_str(x, w, buf);
	}
	if (x->nstr != x->s_locs)
		return -EPROTO;
	for (size_t t = 0; t < tl->ntracks; t++) {
		const struct tl_track *k = &tl->tracks[t];
		const char *name = k->name[0] ? k->name : log_layer_name(k->layer);
		if (k->kind == TL_TRACK_THREAD)
			snprintf(buf, sizeof buf, "tid %d %.64s", k->tid, name);
		else
			snprintf(buf, sizeof buf, "%.64s", name);
		def_str(x, w, buf);
	}
	if (x->nstr != x->s_regions)
		return -EPROTO;
	for (size_t r = 0; r < x->nregions; r++) {
		unsigned layer = x->regions[r] >> 8, op = x->regions[r] & 0xff;
		snprintf(buf, sizeof buf, "%s:%s", log_layer_name(layer), op_name(op));
		def_str(x, w, buf);
		def_str(x, w, op_name(op));
		snprintf(buf, sizeof buf, "%s in iostrata's %s layer", op_name(op), log_layer_name(layer));
		def_str(x, w, buf);
	}
	if (x->nstr != x->s_files)
		return -EPROTO;
	for (size_t f = 0; f < tl->nfiles; f++) {
		const struct tl_file *file = &tl->files[f];
		if (file->path) {
			def_str(x, w, file->path);
		} else {
			dev_t dev = (dev_t)file->dev;
			snprintf(buf, sizeof buf, "<dev %u:%u ino %llu>", major(dev), minor(dev),
				 (unsigned long long)file->ino);
			def_str(x, w, buf);
		}
	}
	return 0;
}

/* The global definitions, in the order readers expect (clock, strings, then what refers to them). */
static int write_defs(struct ox *x)
{
	const struct timeline *tl = x->tl;
	OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(x->ar);
	if (!w)
		return fail_otf2(x, "opening the global definition writer", OTF2_ERROR_MEM_ALLOC_FAILED);
	x->rc = OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000, x->t0, x->t1 - x->t0,
							  OTF2_UNDEFINED_TIMESTAMP);
	if (def_strings(x, w) < 0) {
		fail(x, "OTF2 archive %s: string ids out of step (a bug in src/analysis/otf2.c)", x->dir);
		OTF2_Archive_CloseGlobalDefWriter(x->ar, w);
		return -EPROTO;
	}
	for (unsigned a = 0; a < NATTR; a++)
		keep(x, OTF2_GlobalDefWriter_WriteAttribute(w, a, S_ATTRS + 2 * a, S_ATTRS + 2 * a + 1, attrs[a].type));
	keep(x, OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, S_NODE, S_NODE_CLASS, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	const OTF2_LocationGroupType proc = OTF2_LOCATION_GROUP_TYPE_PROCESS;
	for (size_t g = 0; g < x->npids; g++) {
		uint32_t parent = x->gparent[g] == TL_NONE ? OTF2_UNDEFINED_LOCATION_GROUP : x->gparent[g];
		keep(x, OTF2_GlobalDefWriter_WriteLocationGroup(w, (uint32_t)g, x->s_groups + (uint32_t)g, proc, 0,
								 parent));
	}
	if (x->kgroup != TL_NONE)
		keep(x, OTF2_GlobalDefWriter_WriteLocationGroup(w, x->kgroup, S_KERNEL, proc, 0,
								 OTF2_UNDEFINED_LOCATION_GROUP));
	for (size_t t = 0; t < tl->ntracks; t++)
		keep(x, OTF2_GlobalDefWriter_WriteLocation(w, t, x->s_locs + (uint32_t)t,
							   OTF2_LOCATION_TYPE_CPU_THREAD, x->nrec[t], x->group[t]));
	/* Readers refuse an archive without locations: an empty timeline gets one, without records. */
	if (!tl->ntracks) {
		keep(x, OTF2_GlobalDefWriter_WriteLocationGroup(w, 0, S_EMPTY, proc, 0, OTF2_UNDEFINED_LOCATION_GROUP));
		keep(x, OTF2_GlobalDefWriter_WriteLocation(w, 0, S_EMPTY, OTF2_LOCATION_TYPE_CPU_THREAD, 0, 0));
	}
	for (size_t r = 0; r < x->nregions; r++) {
		OTF2_StringRef s = x->s_regions + 3 * (uint32_t)r;
		keep(x, OTF2_GlobalDefWriter_WriteRegion(w, (uint32_t)r, s, s + 1, s + 2, OTF2_REGION_ROLE_FILE_IO,
							 OTF2_PARADIGM_UNKNOWN, OTF2_REGION_FLAG_NONE,
							 OTF2_UNDEFINED_STRING, 0, 0));
	}
	/* Readers want definitions numbered 0, 1, 2 ... in order: the paradigms in use get refs so. */
	OTF2_IoParadigmRef pref[NPARA], npref = 0;
	memset(pref, 0xff, sizeof pref);
	for (size_t h = 0; h < x->nhandles; h++)
		pref[x->handles[h].para] = 0;
	for (unsigned p = 0; p < NPARA; p++) {
		if (pref[p] != 0)
			continue;
		pref[p] = npref++;
		keep(x, OTF2_GlobalDefWriter_WriteIoParadigm(w, pref[p], S_PARAS + 2 * p, S_PARAS + 2 * p + 1,
							     paradigms[p].cls, paradigms[p].flags, 0, NULL, NULL,
							     NULL));
	}
	for (size_t f = 0; f < tl->nfiles; f++)
		keep(x, OTF2_GlobalDefWriter_WriteIoRegularFile(w, (uint32_t)f, x->s_files + (uint32_t)f, 0));
	/* Pre-created handles: always active, so no IoCreateHandle/IoDestroyHandle (see docs/OTF2.md). */
	for (size_t h = 0; h < x->nhandles; h++) {
		const struct ox_handle *hd = &x->handles[h];
		keep(x, OTF2_GlobalDefWriter_WriteIoHandle(w, (uint32_t)h, x->s_files + hd->file, hd->file,
							   pref[hd->para], OTF2_IO_HANDLE_FLAG_PRE_CREATED,
							   OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE));
	}
	for (size_t h = 0; h < x->nhandles; h++)
		keep(x, OTF2_GlobalDefWriter_WriteIoPreCreatedHandleState(w, (uint32_t)h,
									  OTF2_IO_ACCESS_MODE_READ_WRITE,
									  OTF2_IO_STATUS_FLAG_NONE));
	OTF2_ErrorCode crc = OTF2_Archive_CloseGlobalDefWriter(x->ar, w);
	if (x->rc != OTF2_SUCCESS)
		return fail_otf2(x, "writing the global definitions", x->rc);
	if (crc != OTF2_SUCCESS)
		return fail_otf2(x, "closing the global definitions", crc);
	return 0;
}

/* ---- the directory ---- */

/* mkdir -p: 0 or -errno. */
static int make_dirs(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof path)
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			break;
	}
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int prepare_dir(struct ox *x)
{
	int rc = make_dirs(x->dir);
	if (rc < 0) {
		fail(x, "OTF2 archive %s: cannot create the directory: %s", x->dir, strerror(-rc));
		return rc;
	}
	static const char *const names[] = { OX_NAME ".otf2", OX_NAME ".def", OX_NAME };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[4200];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", x->dir, names[i]);
		if (lstat(path, &st) == 0) {
			fail(x, "OTF2 archive %s: already holds an archive (%s); remove it or choose another directory",
			     x->dir, names[i]);
			return -EEXIST;
		}
	}
	if (access(x->dir, W_OK | X_OK) < 0) {
		rc = -errno;
		fail(x, "OTF2 archive %s: cannot write there: %s", x->dir, strerror(errno));
		return rc;
	}
	return 0;
}

int tl_export_otf2(const struct timeline *tl, const char *dir, char *err, size_t errlen)
{
	static char scratch[8];
	int own = err && errlen;
	struct ox x = { .tl = tl, .dir = dir, .err = own ? err : scratch, .errlen = own ? errlen : sizeof scratch };
	int rc;
	x.err[0] = 0;
	if (!tl || !dir || !*dir) {
		fail(&x, "OTF2 export: no timeline or no directory");
		return -EINVAL;
	}
	if (tl->nev >= UINT32_MAX || tl->ntracks >= UINT32_MAX || tl->nfiles >= UINT32_MAX / 2) {
		fail(&x, "OTF2 export: the timeline is too large for 32-bit ids");
		return -E2BIG;
	}
	OTF2_ErrorCallback prev = OTF2_Error_RegisterCallback(on_otf2_error, &x);
	/* the model is checked before anything is created on disk */
	if ((rc = order_events(&x)) < 0 || (rc = assign_groups(&x)) < 0 || (rc = assign_regions(&x)) < 0 ||
	    (rc = assign_handles(&x)) < 0 || (rc = prepare_dir(&x)) < 0)
		goto err;
	layout_strings(&x);
	x.nlocs = tl->ntracks ? tl->ntracks : 1;
	x.nrec = calloc(x.nlocs, sizeof *x.nrec);
	x.stack = malloc((x.maxdepth ? x.maxdepth : 1) * sizeof *x.stack);
	x.alist = OTF2_AttributeList_New();
	if (!x.nrec || !x.stack || !x.alist)
		rc = -ENOMEM;
	if (rc < 0)
		goto err;
	x.ar = OTF2_Archive_Open(dir, OX_NAME, OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
				 OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!x.ar) {
		rc = fail_otf2(&x, "creating the archive", OTF2_ERROR_FILE_CAN_NOT_OPEN);
		goto err;
	}
	OTF2_ErrorCode orc = OTF2_Archive_SetFlushCallbacks(x.ar, &flush_callbacks, NULL);
	if (orc == OTF2_SUCCESS)
		orc = OTF2_Archive_SetSerialCollectiveCallbacks(x.ar);
	if (orc == OTF2_SUCCESS)
		orc = OTF2_Archive_SetCreator(x.ar, "iostrata");
	if (orc == OTF2_SUCCESS)
		orc = OTF2_Archive_SetDescription(x.ar, "iostrata unified timeline: user and kernel I/O layers");
	if (orc != OTF2_SUCCESS) {
		rc = fail_otf2(&x, "setting up the archive", orc);
		goto err;
	}
	if ((rc = write_events(&x)) < 0 || (rc = write_defs(&x)) < 0)
		goto err;
	orc = OTF2_Archive_Close(x.ar);
	x.ar = NULL;
	if (orc != OTF2_SUCCESS) {
		rc = fail_otf2(&x, "closing the archive", orc);
		goto err;
	}
	rc = 0;
err:
	if (rc == -ENOMEM && !x.err[0])
		fail(&x, "OTF2 archive %s: out of memory", dir);
	if (x.ar)
		OTF2_Archive_Close(x.ar);
	if (x.alist)
		OTF2_AttributeList_Delete(x.alist);
	OTF2_Error_RegisterCallback(prev, NULL);
	free(x.order);
	free(x.first);
	free(x.pids);
	free(x.gid);
	free(x.gpid);
	free(x.gparent);
	free(x.group);
	free(x.region);
	free(x.regions);
	free(x.handle_of);
	free(x.handles);
	free(x.nrec);
	free(x.stack);
	return rc;
}
