/* SPDX-License-Identifier: MIT */
/*
 * The unified timeline's merge (timeline.h). Every trace entry of a user log and every event of a
 * kernel log becomes exactly one tl_event. Events are grouped per thread (host, pid, tid); each
 * thread's events (both streams) are sorted once by start (user layers before kernel layers at
 * the same ns, longer first) and walked once with a stack of the user calls still open, so a
 * kernel event lies inside a call exactly when the call is on the stack: the innermost one that
 * holds it is its parent. Work without a thread (pid or tid 0, writeback) is grouped per (host,
 * device, layer) instead. While walking, each (thread, layer) or (device, layer) is split into as
 * few lanes (tracks) as keep its events from overlapping other than by strict nesting, first fit.
 *
 * Three passes over the input and none over a copy of it: groups; compact items (what ordering,
 * nesting and lanes need) sorted and walked per group; then each event written once, straight
 * into its final place (by track, then start, longer first). Linear after the sorts.
 *
 * It does not print or export (export.c) and does not analyse (sci.c). docs/TIMELINE.md defines
 * the model, the nesting rule and the track layout.
 */
#include "analysis/timeline.h"
#include "analysis/pool.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* How many open user calls, from the innermost out, a kernel event is tried against. Calls only
 * overlap without nesting in damaged input; the bound keeps such input from going quadratic. */
#define NEST_SCAN 16

static int is_user_layer(unsigned layer)
{
	return layer == LOG_LAYER_POSIX || layer == LOG_LAYER_STDIO || layer == LOG_LAYER_MPIIO;
}

/* A kernel event that says the page cache did not hold the data of the call it is under. */
static int is_miss_event(const struct log_event *k)
{
	if (k->flags & LOG_E_CACHE_MISS)
		return 1;
	return (k->layer == LOG_LAYER_PAGECACHE && k->op == LOG_OP_PAGE_IN) ||
	       (k->layer == LOG_LAYER_BLOCK && k->op == LOG_OP_BLK_READ);
}

/* ---- an open-addressing map from three 64-bit words to an index ---- */

struct map_slot {
	uint64_t a, b, c;
	uint32_t val;
	uint32_t used;
};

struct map {
	struct map_slot *s;
	size_t cap, n; /* cap: 0 or a power of two */
};

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull;
	h ^= (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (c + 0x2545f4914f6cdd1dull) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

static struct map_slot *map_slot(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	size_t i = (size_t)mix3(a, b, c) & (m->cap - 1);
	while (m->s[i].used && (m->s[i].a != a || m->s[i].b != b || m->s[i].c != c))
		i = (i + 1) & (m->cap - 1);
	return &m->s[i];
}

/* The value stored for (a, b, c), or TL_NONE. */
static uint32_t map_get(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	if (!m->cap)
		return TL_NONE;
	const struct map_slot *s = map_slot(m, a, b, c);
	return s->used ? s->val : TL_NONE;
}

/* Store val for (a, b, c) unless a value is there already. 0 or -ENOMEM. */
static int map_put(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct map old = *m;
		m->s = calloc(cap, sizeof *m->s);
		if (!m->s) {
			*m = old;
			return -ENOMEM;
		}
		m->cap = cap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.s[i].used)
				*map_slot(m, old.s[i].a, old.s[i].b, old.s[i].c) = old.s[i];
		free(old.s);
	}
	struct map_slot *s = map_slot(m, a, b, c);
	if (!s->used) {
		*s = (struct map_slot){ .a = a, .b = b, .c = c, .val = val, .used = 1 };
		m->n++;
	}
	return 0;
}

static void map_free(struct map *m)
{
	free(m->s);
	memset(m, 0, sizeof *m);
}

static uint64_t fnv64(const char *s, size_t *len)
{
	uint64_t h = 1469598103934665603ull;
	const char *p = s;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	*len = (size_t)(p - s);
	return h;
}

/* ---- the builder's state ---- */

struct thread {
	uint32_t host;
	int32_t pid, tid;
};

/* A lane: one track of a (thread, layer) or (device, layer), with the ends of its open events
 * (a stack: each one inside the one below). */
struct lane {
	uint32_t track;
	uint32_t next; /* the next lane of the same set, TL_NONE at the end */
	uint32_t depth, cap;
	uint64_t *ends;
};

struct laneset {
	uint32_t first, last, n;
};

/* What a new track of a lane set is. */
struct track_tpl {
	uint8_t kind, layer;
	uint32_t host, dev;
	int32_t pid, tid;
};

/* An event as the walk sees it: what ordering, nesting and lanes need, and its input index. */
struct item {
	uint64_t start, end;
	uint32_t idx;   /* input order: each log's trace entries, then its kernel events */
	uint32_t dev;   /* work without a thread: the device of its track */
	uint32_t track; /* set by the walk */
	uint8_t layer;
	uint8_t bits;   /* ITEM_KERNEL, ITEM_MISS */
	uint16_t pad;
};
enum { ITEM_KERNEL = 1, ITEM_MISS = 2 };

struct build {
	struct timeline *tl;
	size_t files_cap, tracks_cap, procs_cap;
	struct map paths;   /* (hash of the path, its length, salt) -> file */
	struct map inodes;  /* (host, dev, ino) -> file */
	struct map threads; /* (host, pid, tid) -> thread */
	struct map procs;   /* (host, pid, 0) -> proc */
	struct map devices; /* (host, dev, 0) -> devname */
	struct map asets;   /* (host, dev, layer) -> aset (lane sets of work without a thread) */
	char **hosts;
	size_t nhosts, hosts_cap;
	char (*devname)[32];
	size_t ndevname, devname_cap;
	struct thread *thr;
	size_t nthr, thr_cap;
	uint32_t *proc_host;
	uint32_t *track_host, *track_lane; /* per track, for the final order */
	struct lane *lanes;
	size_t nlanes, lanes_cap;
	struct laneset *aset;
	size_t naset, aset_cap;
	/* kernel logs' own process: named for the processes only the kernel saw */
	struct root {
		uint32_t host;
		int32_t pid, ppid;
		const char *exe;
	} *roots;
	size_t nroots, roots_cap;
};

static uint32_t host_id(struct build *b, const char *host)
{
	for (size_t i = 0; i < b->nhosts; i++)
		if (!strcmp(b->hosts[i], host))
			return (uint32_t)i;
	if (ana_grow(&b->hosts, &b->hosts_cap, b->nhosts + 1, sizeof *b->hosts) < 0)
		return TL_NONE;
	if (!(b->hosts[b->nhosts] = strdup(host)))
		return TL_NONE;
	return (uint32_t)b->nhosts++;
}

/* The file named path (one per path across all logs: user and kernel layers join by path); its
 * identity is filled in by the first layer that knows it. */
static int file_for_path(struct build *b, const char *path, uint64_t dev, uint64_t ino, uint32_t *out)
{
	struct timeline *tl = b->tl;
	size_t len;
	uint64_t h = fnv64(path, &len);
	uint32_t salt = 0, f;
	/* a 64-bit hash collision between two paths takes the next salt */
	while ((f = map_get(&b->paths, h, len, salt)) != TL_NONE) {
		if (!strcmp(tl->files[f].path, path)) {
			if (!tl->files[f].ino && ino) {
				tl->files[f].dev = dev;
				tl->files[f].ino = ino;
			}
			*out = f;
			return 0;
		}
		salt++;
	}
	if (ana_grow(&tl->files, &b->files_cap, tl->nfiles + 1, sizeof *tl->files) < 0)
		return -ENOMEM;
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	f = (uint32_t)tl->nfiles;
	if (map_put(&b->paths, h, len, salt, f) < 0) {
		free(copy);
		return -ENOMEM;
	}
	tl->files[f] = (struct tl_file){ .path = copy, .dev = dev, .ino = ino };
	tl->nfiles++;
	*out = f;
	return 0;
}

/* The file of a kernel event: the path a record of the same host gave (dev, ino), else a name
 * made of the identity, so that every event of the inode still shares one file. */
static int file_for_inode(struct build *b, uint32_t host, uint64_t dev, uint64_t ino, uint32_t *out)
{
	uint32_t f = map_get(&b->inodes, host, dev, ino);
	if (f != TL_NONE) {
		*out = f;
		return 0;
	}
	char name[96];
	snprintf(name, sizeof name, "<dev %u:%u ino %llu>", major((dev_t)dev), minor((dev_t)dev),
		 (unsigned long long)ino);
	if (file_for_path(b, name, dev, ino, &f) < 0 || map_put(&b->inodes, host, dev, ino, f) < 0)
		return -ENOMEM;
	*out = f;
	return 0;
}

/* Records that name files by (dev, ino), and block devices by name ("<device vda 254:0>"). */
static int learn_records(struct build *b, const struct log_file *lf, uint32_t host)
{
	for (uint32_t r = 0; r < lf->nrecords; r++) {
		const struct log_record *rec = &lf->records[r];
		const char *path = log_file_string(lf, rec->path);
		if (rec->ino && !(rec->flags & LOG_R_PSEUDO) && path[0]) {
			if (map_get(&b->inodes, host, rec->dev, rec->ino) != TL_NONE)
				continue;
			uint32_t f;
			if (file_for_path(b, path, rec->dev, rec->ino, &f) < 0 ||
			    map_put(&b->inodes, host, rec->dev, rec->ino, f) < 0)
				return -ENOMEM;
		} else if (!rec->ino && rec->layer == LOG_LAYER_BLOCK && (rec->flags & LOG_R_PSEUDO) &&
			   !strncmp(path, "<device ", 8)) {
			if (map_get(&b->devices, host, rec->dev, 0) != TL_NONE)
				continue;
			const char *name = path + 8;
			size_t n = strcspn(name, " >");
			if (!n || n >= sizeof b->devname[0])
				continue;
			if (ana_grow(&b->devname, &b->devname_cap, b->ndevname + 1, sizeof *b->devname) < 0 ||
			    map_put(&b->devices, host, rec->dev, 0, (uint32_t)b->ndevname) < 0)
				return -ENOMEM;
			memcpy(b->devname[b->ndevname], name, n);
			b->devname[b->ndevname][n] = '\0';
			b->ndevname++;
		}
	}
	return 0;
}

static int add_proc(struct build *b, uint32_t host, int32_t pid, int32_t ppid, const char *exe, uint64_t start,
		    uint64_t end)
{
	struct timeline *tl = b->tl;
	size_t cap = b->procs_cap;
	if (ana_grow(&tl->procs, &b->procs_cap, tl->nprocs + 1, sizeof *tl->procs) < 0)
		return -ENOMEM;
	if (b->procs_cap != cap) {
		uint32_t *ph = realloc(b->proc_host, b->procs_cap * sizeof *ph);
		if (!ph)
			return -ENOMEM;
		b->proc_host = ph;
	}
	char *e = NULL;
	if (exe && exe[0] && !(e = strdup(exe)))
		return -ENOMEM;
	if (map_put(&b->procs, host, (uint32_t)pid, 0, (uint32_t)tl->nprocs) < 0) {
		free(e);
		return -ENOMEM;
	}
	b->proc_host[tl->nprocs] = host;
	tl->procs[tl->nprocs++] = (struct tl_proc){ .pid = pid, .ppid = ppid, .exe = e, .start_ns = start,
						   .end_ns = end };
	return 0;
}

static uint32_t thread_id(struct build *b, uint32_t host, int32_t pid, int32_t tid)
{
	uint32_t t = map_get(&b->threads, host, (uint32_t)pid, (uint32_t)tid);
	if (t != TL_NONE)
		return t;
	if (ana_grow(&b->thr, &b->thr_cap, b->nthr + 1, sizeof *b->thr) < 0 ||
	    map_put(&b->threads, host, (uint32_t)pid, (uint32_t)tid, (uint32_t)b->nthr) < 0)
		return TL_NONE;
	b->thr[b->nthr] = (struct thread){ .host = host, .pid = pid, .tid = tid };
	return (uint32_t)b->nthr++;
}

static int add_track(struct build *b, const struct track_tpl *tp, uint32_t lane, uint32_t *out)
{
	struct timeline *tl = b->tl;
	size_t cap = b->tracks_cap;
	if (ana_grow(&tl->tracks, &b->tracks_cap, tl->ntracks + 1, sizeof *tl->tracks) < 0)
		return -ENOMEM;
	if (b->tracks_cap != cap) {
		uint32_t *h = realloc(b->track_host, b->tracks_cap * sizeof *h);
		if (h)
			b->track_host = h;
		uint32_t *l = realloc(b->track_lane, b->tracks_cap * sizeof *l);
		if (l)
			b->track_lane = l;
		if (!h || !l)
			return -ENOMEM;
	}
	struct tl_track *t = &tl->tracks[tl->ntracks];
	memset(t, 0, sizeof *t);
	t->pid = tp->pid;
	t->tid = tp->tid;
	t->layer = tp->layer;
	t->kind = tp->kind;
	t->dev = tp->dev;
	char base[48], suffix[16] = "";
	const char *layer = log_layer_name(tp->layer);
	if (tp->kind == TL_TRACK_THREAD) {
		snprintf(base, sizeof base, "%s", layer);
	} else if (!tp->dev) {
		snprintf(base, sizeof base, "%s async", layer);
	} else {
		uint32_t d = map_get(&b->devices, tp->host, tp->dev, 0);
		if (d != TL_NONE)
			snprintf(base, sizeof base, "%s %s %u:%u", layer, b->devname[d], major(tp->dev), minor(tp->dev));
		else
			snprintf(base, sizeof base, "%s %u:%u", layer, major(tp->dev), minor(tp->dev));
	}
	if (lane)
		snprintf(suffix, sizeof suffix, " #%u", lane + 1);
	snprintf(t->name, sizeof t->name, "%s%s", base, suffix);
	b->track_host[tl->ntracks] = tp->host;
	b->track_lane[tl->ntracks] = lane;
	*out = (uint32_t)tl->ntracks++;
	return 0;
}

/* The track of an event [s, x] in a lane set: the first lane where it starts after everything
 * open has ended or lies inside the innermost open event; a new lane when none. */
static int lane_place(struct build *b, struct laneset *set, uint64_t s, uint64_t x, const struct track_tpl *tp,
		      uint32_t *track)
{
	struct lane *l = NULL;
	for (uint32_t li = set->n ? set->first : TL_NONE; li != TL_NONE; li = b->lanes[li].next) {
		struct lane *c = &b->lanes[li];
		while (c->depth && c->ends[c->depth - 1] <= s && c->ends[c->depth - 1] < x)
			c->depth--;
		if (!c->depth || x <= c->ends[c->depth - 1]) {
			l = c;
			break;
		}
	}
	if (!l) {
		if (b->nlanes == b->lanes_cap) {
			size_t old = b->lanes_cap;
			if (ana_grow(&b->lanes, &b->lanes_cap, b->nlanes + 1, sizeof *b->lanes) < 0)
				return -ENOMEM;
			memset(b->lanes + old, 0, (b->lanes_cap - old) * sizeof *b->lanes);
		}
		uint32_t li = (uint32_t)b->nlanes++;
		l = &b->lanes[li];
		l->depth = 0; /* a reused slot keeps its ends array */
		l->next = TL_NONE;
		if (add_track(b, tp, set->n, &l->track) < 0)
			return -ENOMEM;
		if (set->n++)
			b->lanes[set->last].next = li;
		else
			set->first = li;
		set->last = li;
	}
	if (l->depth == l->cap) {
		size_t cap = l->cap;
		if (ana_grow(&l->ends, &cap, l->depth + 1, sizeof *l->ends) < 0)
			return -ENOMEM;
		l->cap = (uint32_t)cap;
	}
	l->ends[l->depth++] = x;
	*track = l->track;
	return 0;
}

static void lanes_reset(struct build *b)
{
	b->nlanes = 0;
}

/* ---- sorting ---- */

/* Start first; at the same ns user calls before kernel events (a call holds what starts with
 * it), then longer first (a container before what it holds). */
static inline int item_lt(const struct item *x, const struct item *y)
{
	if (x->start != y->start)
		return x->start < y->start;
	if ((x->bits & ITEM_KERNEL) != (y->bits & ITEM_KERNEL))
		return !(x->bits & ITEM_KERNEL);
	return x->end > y->end;
}

/* Sort a[lo..hi) by insertion (short ranges). */
static void insertion_sort(struct item *a, size_t lo, size_t hi)
{
	for (size_t j = lo + 1; j < hi; j++) {
		if (!item_lt(&a[j], &a[j - 1]))
			continue;
		struct item v = a[j];
		size_t k = j;
		do {
			a[k] = a[k - 1];
			k--;
		} while (k > lo && item_lt(&v, &a[k - 1]));
		a[k] = v;
	}
}

/* Merge src[lo..mid) and src[mid..hi) into dst[lo..hi), stably. */
static void merge_runs(const struct item *src, struct item *dst, size_t lo, size_t mid, size_t hi)
{
	if (mid >= hi || !item_lt(&src[mid], &src[mid - 1])) {
		memcpy(dst + lo, src + lo, (hi - lo) * sizeof *src);
		return;
	}
	size_t p = lo, q = mid, o = lo;
	while (p < mid && q < hi)
		dst[o++] = item_lt(&src[q], &src[p]) ? src[q++] : src[p++];
	memcpy(dst + o, src + p, (mid - p) * sizeof *src);
	o += mid - p;
	memcpy(dst + o, src + q, (hi - q) * sizeof *src);
}

/*
 * Natural merge sort: the ascending runs already there (at least 32 items, completed by
 * insertion), merged pairwise until one is left: k interleaved sorted streams (several threads'
 * writeback in one device group) take log2(k) passes.
 */
static void merge_sort(struct item *a, struct item *tmp, size_t n)
{
	const size_t minrun = 32;
	size_t *runs = malloc((n / minrun + 2) * sizeof *runs), nruns = 0;
	if (!runs) { /* fixed blocks when there is no memory for the run list */
		for (size_t lo = 0; lo < n; lo += minrun)
			insertion_sort(a, lo, lo + minrun < n ? lo + minrun : n);
	}
	for (size_t lo = 0; runs && lo < n;) {
		size_t hi = lo + 1;
		while (hi < n && !item_lt(&a[hi], &a[hi - 1]))
			hi++;
		if (hi - lo < minrun) {
			hi = lo + minrun < n ? lo + minrun : n;
			insertion_sort(a, lo, hi);
		}
		runs[nruns++] = lo;
		lo = hi;
	}
	struct item *src = a, *dst = tmp;
	if (runs) {
		runs[nruns] = n;
		while (nruns > 1) {
			size_t r = 0, out = 0;
			for (; r + 1 < nruns; r += 2) {
				merge_runs(src, dst, runs[r], runs[r + 1], runs[r + 2]);
				runs[out++] = runs[r];
			}
			if (r < nruns) {
				memcpy(dst + runs[r], src + runs[r], (n - runs[r]) * sizeof *src);
				runs[out++] = runs[r];
			}
			runs[out] = n;
			nruns = out;
			struct item *t = src;
			src = dst;
			dst = t;
		}
		free(runs);
	} else {
		for (size_t w = minrun; w < n; w *= 2) {
			for (size_t lo = 0; lo < n; lo += 2 * w)
				merge_runs(src, dst, lo, lo + w < n ? lo + w : n, lo + 2 * w < n ? lo + 2 * w : n);
			struct item *t = src;
			src = dst;
			dst = t;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

/*
 * Stable sort of a[0..n) (tmp: room for n). A thread's trace is in call order and its kernel
 * events arrive each at its end, so the input is nearly sorted: insertion sort costs n plus the
 * displacements, and is used while those stay under 8 moves per item; past that (an unusual or
 * hostile order), merge sort.
 */
static void sort_items(struct item *a, struct item *tmp, size_t n)
{
	size_t budget = 8 * n + 4096, moves = 0;
	for (size_t i = 1; i < n; i++) {
		if (!item_lt(&a[i], &a[i - 1]))
			continue;
		struct item v = a[i];
		size_t k = i;
		do {
			a[k] = a[k - 1];
			k--;
			moves++;
		} while (k > 0 && item_lt(&v, &a[k - 1]));
		a[k] = v;
		if (moves > budget) {
			merge_sort(a, tmp, n);
			return;
		}
	}
}

/* ---- the events ---- */

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, arg);
}

/* Work without a thread is grouped per host: its group is ASYNC(host) until the threads are
 * counted. */
#define ASYNC(host) (TL_NONE - 1 - (host))

static uint64_t kernel_end(const struct log_event *ke)
{
	uint64_t end = ke->start_ns + ke->dur_ns;
	return end < ke->start_ns ? UINT64_MAX : end;
}

static int kernel_async(const struct log_event *ke)
{
	return ke->pid <= 0 || ke->tid <= 0 || (ke->flags & LOG_E_WRITEBACK);
}

/* Pass 1: the group of every input event (its thread, or ASYNC(host)), in input order. */
static int group_events(struct build *b, const struct log_file *logs, size_t n, const uint32_t *hostof, uint32_t *grp)
{
	size_t k = 0;
	for (size_t li = 0; li < n; li++) {
		const struct log_file *lf = &logs[li];
		uint32_t host = hostof[li], last = TL_NONE;
		int32_t lpid = 0, ltid = 0;
		for (uint64_t i = 0; i < lf->ntrace; i++, k++) {
			const struct log_trace_entry *te = &lf->trace[i];
			if (te->pid <= 0 || te->tid <= 0) {
				grp[k] = ASYNC(host);
				continue;
			}
			if (last == TL_NONE || te->pid != lpid || te->tid != ltid) {
				if ((last = thread_id(b, host, te->pid, te->tid)) == TL_NONE)
					return -ENOMEM;
				lpid = te->pid;
				ltid = te->tid;
			}
			grp[k] = last;
		}
		last = TL_NONE;
		for (uint64_t i = 0; i < lf->nevents; i++, k++) {
			const struct log_event *ke = &lf->events[i];
			if (kernel_async(ke)) {
				grp[k] = ASYNC(host);
				continue;
			}
			if (last == TL_NONE || ke->pid != lpid || ke->tid != ltid) {
				if ((last = thread_id(b, host, ke->pid, ke->tid)) == TL_NONE)
					return -ENOMEM;
				lpid = ke->pid;
				ltid = ke->tid;
			}
			grp[k] = last;
		}
	}
	return 0;
}

/* Pass 2: every input event's item, at its group's cursor (groups stay in input order). */
static void fill_items(const struct log_file *logs, size_t n, const uint32_t *grp, uint32_t *cursor, struct item *items)
{
	uint32_t k = 0;
	for (size_t li = 0; li < n; li++) {
		const struct log_file *lf = &logs[li];
		for (uint64_t i = 0; i < lf->ntrace; i++, k++) {
			const struct log_trace_entry *te = &lf->trace[i];
			items[cursor[grp[k]]++] = (struct item){
				.start = te->start_ns,
				.end = te->end_ns < te->start_ns ? te->start_ns : te->end_ns,
				.idx = k,
				.layer = te->layer,
				.bits = is_user_layer(te->layer) ? 0 : ITEM_KERNEL,
			};
		}
		for (uint64_t i = 0; i < lf->nevents; i++, k++) {
			const struct log_event *ke = &lf->events[i];
			items[cursor[grp[k]]++] = (struct item){
				.start = ke->start_ns,
				.end = kernel_end(ke),
				.idx = k,
				.dev = ke->dev,
				.layer = ke->layer,
				.bits = (uint8_t)((is_user_layer(ke->layer) ? 0 : ITEM_KERNEL) | (is_miss_event(ke) ? ITEM_MISS : 0)),
			};
		}
	}
}

/* ---- the walk ---- */

struct open_call {
	uint32_t idx;
	uint64_t end;
};

struct walk {
	struct open_call *stk; /* the thread's user calls still open, innermost last */
	size_t cap;
	struct laneset tsets[256]; /* the thread's lane sets, by layer */
	uint8_t touched[256];
	unsigned ntouched;
	struct item *itmp;
	uint32_t *par;  /* per input event: the input index of its parent, TL_NONE */
	uint8_t *nest;  /* per input event: 1 when a kernel event nests under it, 2 when one is a miss */
};

/* Walk one group's items in time order. A thread's group (thr != TL_NONE): each kernel event
 * gets as parent the innermost open user call that holds it; every event gets a lane of its
 * (thread, layer). Work without a thread: a lane of its (host, device, layer). */
static int walk_group(struct build *b, struct walk *w, struct item *it, size_t m, uint32_t thr, uint32_t host)
{
	sort_items(it, w->itmp, m);
	lanes_reset(b);

	struct track_tpl tp = { .kind = TL_TRACK_THREAD, .host = host };
	if (thr != TL_NONE) {
		tp.pid = b->thr[thr].pid;
		tp.tid = b->thr[thr].tid;
	}
	size_t ud = 0;
	int rc = 0;
	for (size_t k = 0; k < m && !rc; k++) {
		struct item *e = &it[k];
		uint64_t s = e->start, x = e->end;
		struct laneset *set;
		tp.layer = e->layer;
		if (thr != TL_NONE) {
			/* calls that ended by s and do not hold [s, x] are over */
			while (ud && w->stk[ud - 1].end <= s && w->stk[ud - 1].end < x)
				ud--;
			if (!(e->bits & ITEM_KERNEL)) {
				if (ud == w->cap && ana_grow(&w->stk, &w->cap, ud + 1, sizeof *w->stk) < 0)
					return -ENOMEM;
				w->stk[ud++] = (struct open_call){ .idx = e->idx, .end = x };
			} else {
				/* every open call started at or before s: it holds [s, x] when it ends at or after x */
				for (size_t j = ud, tried = 0; j-- > 0 && tried < NEST_SCAN; tried++) {
					if (w->stk[j].end >= x) {
						uint32_t p = w->stk[j].idx;
						w->par[e->idx] = p;
						w->nest[p] |= (uint8_t)(1 | (e->bits & ITEM_MISS));
						break;
					}
				}
			}
			set = &w->tsets[e->layer];
			if (!set->n)
				w->touched[w->ntouched++] = e->layer;
		} else {
			uint32_t a = map_get(&b->asets, host, e->dev, e->layer);
			if (a == TL_NONE) {
				a = (uint32_t)b->naset;
				if (ana_grow(&b->aset, &b->aset_cap, b->naset + 1, sizeof *b->aset) < 0 ||
				    map_put(&b->asets, host, e->dev, e->layer, a) < 0)
					return -ENOMEM;
				b->aset[b->naset++] = (struct laneset){ .first = TL_NONE, .last = TL_NONE };
			}
			set = &b->aset[a];
			tp.kind = e->layer == LOG_LAYER_BLOCK ? TL_TRACK_DEVICE : TL_TRACK_ASYNC;
			tp.dev = e->dev;
		}
		rc = lane_place(b, set, s, x, &tp, &e->track);
	}
	for (unsigned t = 0; t < w->ntouched; t++)
		w->tsets[w->touched[t]] = (struct laneset){ 0 };
	w->ntouched = 0;
	return rc;
}

/* Pass 3: every input event into its place in tl->ev (pos), with its file, track (trk), parent
 * and hit/miss flag. */
static int fill_events(struct build *b, const struct log_file *logs, size_t n, const uint32_t *hostof,
		       const uint32_t *pos, const uint32_t *trk, const struct walk *w)
{
	struct timeline *tl = b->tl;
	uint32_t *rec2file = NULL;
	size_t rec_cap = 0, k = 0;
	int rc = -ENOMEM;

	for (size_t li = 0; li < n; li++) {
		const struct log_file *lf = &logs[li];
		if (lf->ntrace) {
			if (ana_grow(&rec2file, &rec_cap, lf->nrecords + 1, sizeof *rec2file) < 0)
				goto err;
			for (uint32_t r = 0; r < lf->nrecords; r++)
				rec2file[r] = TL_NONE;
		}
		for (uint64_t i = 0; i < lf->ntrace; i++, k++) {
			const struct log_trace_entry *te = &lf->trace[i];
			uint32_t f = TL_NONE;
			if (te->record < lf->nrecords) {
				f = rec2file[te->record];
				if (f == TL_NONE) {
					const struct log_record *rec = &lf->records[te->record];
					const char *path = log_file_string(lf, rec->path);
					if (path[0] && file_for_path(b, path, rec->dev, rec->ino, &f) < 0)
						goto err;
					rec2file[te->record] = f;
				}
			}
			uint16_t flags = (uint16_t)((te->count > 1 ? TL_F_RUN : 0) | (te->flags & LOG_TE_OPEN ? TL_F_OPEN : 0));
			/* seed 004's rule, for successful reads the kernel saw something under */
			if (w->nest[k] && te->result >= 0 && (te->op == LOG_OP_READ || te->op == LOG_OP_MPI_READ) &&
			    is_user_layer(te->layer))
				flags |= (w->nest[k] & ITEM_MISS) ? TL_F_MISS : TL_F_HIT;
			uint32_t par = w->par[k];
			tl->ev[pos[k]] = (struct tl_event){
				.start_ns = te->start_ns,
				.end_ns = te->end_ns < te->start_ns ? te->start_ns : te->end_ns,
				.busy_ns = te->busy_ns,
				.min_ns = te->min_ns,
				.count = te->count ? te->count : 1,
				.offset = te->offset,
				.size = te->size,
				.result = te->result,
				.dev = f != TL_NONE ? tl->files[f].dev : 0,
				.ino = f != TL_NONE ? tl->files[f].ino : 0,
				.pid = te->pid,
				.tid = te->tid,
				.layer = te->layer,
				.op = te->op,
				.flags = flags,
				.file = f,
				.track = trk[k],
				.parent = par == TL_NONE ? TL_NONE : pos[par],
			};
			tl->user_calls += te->count ? te->count : 1;
		}
		tl->user_events += lf->ntrace;

		uint64_t last_dev = UINT64_MAX, last_ino = 0;
		uint32_t last_file = TL_NONE;
		for (uint64_t i = 0; i < lf->nevents; i++, k++) {
			const struct log_event *ke = &lf->events[i];
			uint32_t f = TL_NONE;
			if (ke->ino) {
				if (ke->dev == last_dev && ke->ino == last_ino) {
					f = last_file;
				} else {
					if (file_for_inode(b, hostof[li], ke->dev, ke->ino, &f) < 0)
						goto err;
					last_dev = ke->dev;
					last_ino = ke->ino;
					last_file = f;
				}
			}
			uint64_t end = kernel_end(ke);
			uint16_t flags = (uint16_t)(ke->flags & 0xff);
			if (w->nest[k] && ke->result >= 0 && (ke->op == LOG_OP_READ || ke->op == LOG_OP_MPI_READ) &&
			    is_user_layer(ke->layer))
				flags |= (w->nest[k] & ITEM_MISS) ? TL_F_MISS : TL_F_HIT;
			uint32_t par = w->par[k];
			tl->ev[pos[k]] = (struct tl_event){
				.start_ns = ke->start_ns,
				.end_ns = end,
				.busy_ns = end - ke->start_ns,
				.min_ns = end - ke->start_ns,
				.count = 1,
				.offset = ke->offset,
				.size = ke->size,
				.result = ke->result,
				.dev = ke->dev,
				.ino = ke->ino,
				.pid = ke->pid,
				.tid = ke->tid,
				.layer = ke->layer,
				.op = ke->op,
				.flags = flags,
				.file = f,
				.track = trk[k],
				.parent = par == TL_NONE ? TL_NONE : pos[par],
			};
		}
		tl->kernel_events += lf->nevents;
	}
	rc = 0;
err:
	free(rec2file);
	return rc;
}

/* ---- final order ---- */

static int cmp_i32(int32_t x, int32_t y)
{
	return x < y ? -1 : x > y;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return x < y ? -1 : x > y;
}

/* Threads (by host, pid, tid, layer), then devices, then other work without a thread (by host,
 * device, layer); lanes in their order. */
static int cmp_track(const void *pa, const void *pb, void *ctx)
{
	const struct build *b = ctx;
	uint32_t i = *(const uint32_t *)pa, j = *(const uint32_t *)pb;
	const struct tl_track *x = &b->tl->tracks[i], *y = &b->tl->tracks[j];
	int c;
	if ((c = cmp_u32(x->kind, y->kind)) || (c = cmp_u32(b->track_host[i], b->track_host[j])) ||
	    (c = cmp_i32(x->pid, y->pid)) || (c = cmp_i32(x->tid, y->tid)) || (c = cmp_u32(x->dev, y->dev)) ||
	    (c = cmp_u32(x->layer, y->layer)) || (c = cmp_u32(b->track_lane[i], b->track_lane[j])))
		return c;
	return cmp_u32(i, j);
}

static int cmp_proc(const void *pa, const void *pb, void *ctx)
{
	const struct build *b = ctx;
	uint32_t i = *(const uint32_t *)pa, j = *(const uint32_t *)pb;
	const struct tl_proc *x = &b->tl->procs[i], *y = &b->tl->procs[j];
	int c;
	if ((c = cmp_u32(b->proc_host[i], b->proc_host[j])) || (c = cmp_i32(x->pid, y->pid)))
		return c;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return cmp_u32(i, j);
}

/* Put the tracks in their final order; newtrack[old] = new. */
static int order_tracks(struct build *b, uint32_t *newtrack)
{
	struct timeline *tl = b->tl;
	uint32_t *perm = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *perm);
	struct tl_track *sorted = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *sorted);
	if (!perm || !sorted) {
		free(perm);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t t = 0; t < tl->ntracks; t++)
		perm[t] = (uint32_t)t;
	qsort_r(perm, tl->ntracks, sizeof *perm, cmp_track, b);
	for (size_t r = 0; r < tl->ntracks; r++) {
		newtrack[perm[r]] = (uint32_t)r;
		sorted[r] = tl->tracks[perm[r]];
	}
	free(tl->tracks);
	tl->tracks = sorted;
	b->tracks_cap = tl->ntracks ? tl->ntracks : 1;
	free(perm);
	return 0;
}

static int order_procs(struct build *b)
{
	struct timeline *tl = b->tl;
	if (tl->nprocs < 2)
		return 0;
	uint32_t *perm = malloc(tl->nprocs * sizeof *perm);
	struct tl_proc *sorted = malloc(tl->nprocs * sizeof *sorted);
	if (!perm || !sorted) {
		free(perm);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t p = 0; p < tl->nprocs; p++)
		perm[p] = (uint32_t)p;
	qsort_r(perm, tl->nprocs, sizeof *perm, cmp_proc, b);
	for (size_t r = 0; r < tl->nprocs; r++)
		sorted[r] = tl->procs[perm[r]];
	free(tl->procs);
	tl->procs = sorted;
	b->procs_cap = tl->nprocs;
	free(perm);
	return 0;
}

static int is_kernel_log(const struct log_file *lf)
{
	return lf->nevents > 0 || lf->hdr.kernel_layers != 0;
}

/* Processes: one per user log (an exec'd image has its own); then one for every pid only the
 * kernel saw, named after the kernel log's own process when it is that one. */
static int add_procs(struct build *b, const struct log_file *logs, size_t n, const uint32_t *hostof)
{
	for (size_t li = 0; li < n; li++) {
		const struct log_file *lf = &logs[li];
		const char *exe = log_file_string(lf, lf->hdr.exe);
		if (is_kernel_log(lf)) {
			if (lf->hdr.pid <= 0)
				continue;
			if (ana_grow(&b->roots, &b->roots_cap, b->nroots + 1, sizeof *b->roots) < 0)
				return -ENOMEM;
			b->roots[b->nroots++] = (struct root){ .host = hostof[li], .pid = lf->hdr.pid,
							       .ppid = lf->hdr.ppid, .exe = exe };
			continue;
		}
		if (add_proc(b, hostof[li], lf->hdr.pid, lf->hdr.ppid, exe, lf->hdr.start_ns, lf->hdr.end_ns) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_kernel_only_procs(struct build *b)
{
	for (size_t t = 0; t < b->nthr; t++) {
		const struct thread *th = &b->thr[t];
		if (map_get(&b->procs, th->host, (uint32_t)th->pid, 0) != TL_NONE)
			continue;
		const struct root *r = NULL;
		for (size_t k = 0; k < b->nroots && !r; k++)
			if (b->roots[k].host == th->host && b->roots[k].pid == th->pid)
				r = &b->roots[k];
		if (add_proc(b, th->host, th->pid, r ? r->ppid : 0, r ? r->exe : NULL, 0, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void build_free(struct build *b, struct walk *w)
{
	map_free(&b->paths);
	map_free(&b->inodes);
	map_free(&b->threads);
	map_free(&b->procs);
	map_free(&b->devices);
	map_free(&b->asets);
	for (size_t i = 0; i < b->nhosts; i++)
		free(b->hosts[i]);
	free(b->hosts);
	free(b->devname);
	free(b->thr);
	free(b->proc_host);
	free(b->track_host);
	free(b->track_lane);
	for (size_t i = 0; i < b->lanes_cap; i++)
		free(b->lanes[i].ends);
	free(b->lanes);
	free(b->aset);
	free(b->roots);
	free(w->stk);
	free(w->itmp);
	free(w->par);
	free(w->nest);
}

int tl_build_from(const struct log_file *logs, size_t n, struct timeline *tl, char *err, size_t errlen)
{
	struct build b = { .tl = tl };
	struct walk w = { 0 };
	struct item *items = NULL;
	uint32_t *hostof = NULL, *grp = NULL, *gstart = NULL, *cursor = NULL, *newtrack = NULL, *tcount = NULL,
		 *pos = NULL;
	int rc = -ENOMEM;

	if (!tl)
		return -EINVAL;
	memset(tl, 0, sizeof *tl);
	if (n && !logs) {
		set_err(err, errlen, "%s", "timeline: no logs given");
		return -EINVAL;
	}
	uint64_t total = 0;
	for (size_t li = 0; li < n; li++) {
		const struct log_file *lf = &logs[li];
		total += lf->ntrace + lf->nevents;
		tl->dropped += lf->trace_dropped + lf->hdr.events_dropped;
		tl->nwarnings += lf->warning ? (lf->nwarnings ? lf->nwarnings : 1) : 0;
		if (lf->warning && !tl->warning && !(tl->warning = strdup(lf->warning)))
			goto err;
	}
	if (total >= TL_NONE - 1 - 65536) {
		set_err(err, errlen, "%s", "timeline: more events than one timeline holds (2^32)");
		rc = -E2BIG;
		goto err;
	}

	hostof = malloc((n ? n : 1) * sizeof *hostof);
	if (!hostof)
		goto err;
	for (size_t li = 0; li < n; li++)
		if ((hostof[li] = host_id(&b, log_file_string(&logs[li], logs[li].hdr.host))) == TL_NONE)
			goto err;
	for (size_t li = 0; li < n; li++)
		if (learn_records(&b, &logs[li], hostof[li]) < 0)
			goto err;
	if (add_procs(&b, logs, n, hostof) < 0)
		goto err;

	/* pass 1: groups (the threads, then one per host for work without a thread) */
	size_t N = (size_t)total, N1 = N ? N : 1;
	grp = malloc(N1 * sizeof *grp);
	if (!grp || group_events(&b, logs, n, hostof, grp) < 0)
		goto err;
	if (add_kernel_only_procs(&b) < 0)
		goto err;
	size_t ngroups = b.nthr + b.nhosts;
	gstart = calloc(ngroups + 1, sizeof *gstart);
	cursor = malloc((ngroups ? ngroups : 1) * sizeof *cursor);
	if (!gstart || !cursor)
		goto err;
	for (size_t k = 0; k < N; k++) {
		uint32_t g = grp[k] < b.nthr ? grp[k] : (uint32_t)(b.nthr + (TL_NONE - 1 - grp[k]));
		grp[k] = g;
		gstart[g + 1]++;
	}
	size_t biggest = 0;
	for (size_t g = 0; g < ngroups; g++) {
		if (gstart[g + 1] > biggest)
			biggest = gstart[g + 1];
		gstart[g + 1] += gstart[g];
		cursor[g] = gstart[g];
	}

	/* pass 2: items by group; then each group sorted and walked */
	items = malloc(N1 * sizeof *items);
	w.itmp = malloc((biggest ? biggest : 1) * sizeof *w.itmp);
	w.par = malloc(N1 * sizeof *w.par);
	w.nest = calloc(N1, 1);
	if (!items || !w.itmp || !w.par || !w.nest)
		goto err;
	fill_items(logs, n, grp, cursor, items);
	memset(w.par, 0xff, N1 * sizeof *w.par);
	for (size_t g = 0; g < ngroups; g++) {
		uint32_t thr = g < b.nthr ? (uint32_t)g : TL_NONE;
		uint32_t host = g < b.nthr ? b.thr[g].host : (uint32_t)(g - b.nthr);
		if (walk_group(&b, &w, items + gstart[g], gstart[g + 1] - gstart[g], thr, host) < 0)
			goto err;
	}
	free(w.itmp);
	w.itmp = NULL;

	/* final places: by track, and within a track in walk order (start, longer first) */
	newtrack = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *newtrack);
	tcount = calloc(tl->ntracks + 1, sizeof *tcount);
	pos = malloc(N1 * sizeof *pos);
	if (!newtrack || !tcount || !pos || order_tracks(&b, newtrack) < 0)
		goto err;
	uint32_t *trk = grp; /* the groups are done with: it holds each event's final track now */
	for (size_t k = 0; k < N; k++)
		tcount[newtrack[items[k].track] + 1]++;
	for (size_t t = 0; t < tl->ntracks; t++)
		tcount[t + 1] += tcount[t];
	for (size_t k = 0; k < N; k++) {
		uint32_t t = newtrack[items[k].track];
		pos[items[k].idx] = tcount[t]++;
		trk[items[k].idx] = t;
	}
	free(items);
	items = NULL;

	/* pass 3: the events themselves */
	tl->ev = malloc(N1 * sizeof *tl->ev);
	if (!tl->ev || fill_events(&b, logs, n, hostof, pos, trk, &w) < 0)
		goto err;
	tl->nev = N;
	tl->t0_ns = N ? UINT64_MAX : 0;
	for (size_t k = 0; k < N; k++) {
		if (tl->ev[k].start_ns < tl->t0_ns)
			tl->t0_ns = tl->ev[k].start_ns;
		if (tl->ev[k].end_ns > tl->t1_ns)
			tl->t1_ns = tl->ev[k].end_ns;
	}
	if (order_procs(&b) < 0)
		goto err;
	rc = 0;
err:
	if (rc == -ENOMEM)
		set_err(err, errlen, "%s", "timeline: out of memory");
	if (rc)
		tl_free(tl);
	build_free(&b, &w);
	free(items);
	free(hostof);
	free(grp);
	free(gstart);
	free(cursor);
	free(newtrack);
	free(tcount);
	free(pos);
	return rc;
}

void tl_free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->ev);
	free(tl->tracks);
	for (size_t i = 0; i < tl->nfiles; i++)
		free(tl->files[i].path);
	free(tl->files);
	for (size_t i = 0; i < tl->nprocs; i++)
		free(tl->procs[i].exe);
	free(tl->procs);
	free(tl->warning);
	memset(tl, 0, sizeof *tl);
}

/* ---- a job directory ---- */

