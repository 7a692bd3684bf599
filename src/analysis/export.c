/* SPDX-License-Identifier: MIT */
/*
 * Exports of the unified timeline (timeline.h): Perfetto / Chrome trace-event JSON, plain or
 * gzip, and CSV. Both read only the model and write one line per model event, in the model's
 * order, through one 1 MiB buffer with their own integer formatting (no stdio call per field):
 * the merge and the JSON export together are meant to keep up with 2 million events a second on
 * one core. Strings (paths, process and track names) are escaped once per string, not per event.
 * gzip goes through zlib's gzwrite at level 1 (speed over size), zlib loaded with dlopen as
 * src/log/zstd.c loads zstd, so that programs linking the analysis objects need no -lz.
 *
 * It does not build, change or analyse the timeline. docs/TIMELINE.md lists every field.
 */
#include "analysis/json.h"
#include "analysis/timeline.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h> /* types and constants only: the functions come through dlsym */

#define OUT_BUF (1u << 20)
#define OUT_EVENT 640 /* room for one event's fields other than its file's name */

/* The JSON's pseudo ids: a thread's track of layer L is its own Chrome "thread", numbered above
 * every real pid (Linux's PID_MAX_LIMIT is 2^22); device and async tracks form the pseudo process
 * "devices". */
#define JSON_TID_BASE 10000000
#define JSON_DEVICES_PID 9999999

/* ---- zlib, loaded on first use ---- */

static struct {
	pthread_once_t once;
	int ok;
	char why[160];
	gzFile (*dopen)(int, const char *);
	int (*buffer)(gzFile, unsigned);
	int (*write)(gzFile, voidpc, unsigned);
	int (*close)(gzFile);
} zl = { .once = PTHREAD_ONCE_INIT };

static void zlib_load(void)
{
	void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(zl.why, sizeof zl.why, "cannot load libz.so.1: %s", dlerror());
		return;
	}
	static const char *const names[] = { "gzdopen", "gzbuffer", "gzwrite", "gzclose" };
	void **slots[] = { (void **)&zl.dopen, (void **)&zl.buffer, (void **)&zl.write, (void **)&zl.close };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(*slots[i] = dlsym(h, names[i]))) {
			snprintf(zl.why, sizeof zl.why, "libz.so.1 lacks %s", names[i]);
			return;
		}
	}
	zl.ok = 1;
}

/* ---- the output buffer ---- */

struct out {
	char *buf;
	size_t len;
	int fd;     /* plain JSON: the file, or -1 */
	gzFile gz;  /* gzip JSON */
	FILE *f;    /* CSV */
	int err;    /* 0, or the first write's -errno */
	uint64_t items; /* JSON array elements written: all but the first follow a comma */
};

static void out_flush(struct out *o)
{
	size_t off = 0;
	while (!o->err && off < o->len) {
		size_t n = o->len - off;
		if (o->gz) {
			int w = zl.write(o->gz, o->buf + off, n > (1u << 30) ? (1u << 30) : (unsigned)n);
			if (w <= 0) {
				o->err = errno ? -errno : -EIO;
				break;
			}
			off += (size_t)w;
		} else if (o->f) {
			if (fwrite(o->buf + off, 1, n, o->f) != n)
				o->err = errno ? -errno : -EIO;
			off += n;
		} else {
			ssize_t w = write(o->fd, o->buf + off, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				o->err = w < 0 ? -errno : -EIO;
				break;
			}
			off += (size_t)w;
		}
	}
	o->len = 0;
}

/* A place for up to n (<= OUT_BUF) bytes; the caller sets o->len past what it wrote. */
static char *out_room(struct out *o, size_t n)
{
	if (o->len + n > OUT_BUF)
		out_flush(o);
	return o->buf + o->len;
}

static void out_put(struct out *o, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		if (o->len == OUT_BUF)
			out_flush(o);
		size_t k = OUT_BUF - o->len < n ? OUT_BUF - o->len : n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

/* ---- numbers ---- */

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			      "8081828384858687888990919293949596979899";

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
	10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull,
};

/* Decimal digits of v: log10 from the bit length (1233 / 4096 ~ log10(2)), then one comparison. */
static inline unsigned ndigits(uint64_t v)
{
	unsigned t = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12;
	return t - (v < pow10[t]) + 1;
}

/* v in decimal at p, written from its last digit back, two at a time; returns the end. */
static inline char *put_u64(char *p, uint64_t v)
{
	unsigned n = v ? ndigits(v) : 1;
	char *q = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		q[0] = digits2[2 * r];
		q[1] = digits2[2 * r + 1];
	}
	if (v >= 10) {
		q[-2] = digits2[2 * v];
		q[-1] = digits2[2 * v + 1];
	} else {
		q[-1] = (char)('0' + v);
	}
	return p + n;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* ns as µs with three decimals: every ns is kept. */
static char *put_us(char *p, uint64_t ns)
{
	p = put_u64(p, ns / 1000);
	unsigned r = (unsigned)(ns % 1000);
	p[0] = '.';
	p[1] = (char)('0' + r / 100);
	memcpy(p + 2, digits2 + 2 * (r % 100), 2);
	return p + 4;
}

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)
#define OUT_LIT(o, s) out_put((o), (s), sizeof(s) - 1)

static char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* ---- strings ---- */

/* s as a JSON string, quotes included, in a new allocation (analysis/json.c). NULL when out of
 * memory. */
static char *json_quote(const char *s, size_t *len)
{
	s = s ? s : "";
	char *q = malloc(strlen(s) * 6 + 3);
	if (q)
		*len = ana_json_quote(q, s);
	return q;
}

/* s as a CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote, CR
 * or LF; otherwise as it is. NULL when out of memory. */
static char *csv_quote(const char *s, size_t *len)
{
	s = s ? s : "";
	size_t n = strlen(s);
	char *q = malloc(2 * n + 3), *o = q;
	if (!q)
		return NULL;
	if (!s[strcspn(s, ",\"\r\n")]) {
		memcpy(q, s, n + 1);
		*len = n;
		return q;
	}
	*o++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*o++ = '"';
		*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	*len = (size_t)(o - q);
	return q;
}

struct quoted {
	char *s;
	size_t n;
};

static void quoted_free(struct quoted *q, size_t n)
{
	if (!q)
		return;
	for (size_t i = 0; i < n; i++)
		free(q[i].s);
	free(q);
}

/* Every file's name quoted once, for JSON (json != 0) or CSV. */
static struct quoted *quote_files(const struct timeline *tl, int json)
{
	struct quoted *q = calloc(tl->nfiles ? tl->nfiles : 1, sizeof *q);
	if (!q)
		return NULL;
	for (size_t i = 0; i < tl->nfiles; i++) {
		q[i].s = json ? json_quote(tl->files[i].path, &q[i].n) : csv_quote(tl->files[i].path, &q[i].n);
		if (!q[i].s) {
			quoted_free(q, i);
			return NULL;
		}
	}
	return q;
}

static const char *const op_names[] = {
#define TL_X_OP(name, str) str,
	LOG_OPS(TL_X_OP)
#undef TL_X_OP
};
#define NOP_NAMES (sizeof op_names / sizeof op_names[0])

static const char *op_name(unsigned op)
{
	return op < NOP_NAMES ? op_names[op] : "?";
}

static const char *const kind_names[] = { "thread", "device", "async" };

static const char *kind_name(unsigned kind)
{
	return kind < 3 ? kind_names[kind] : "?";
}

/* ---- Perfetto / Chrome JSON ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

static int json_pid(const struct tl_track *t)
{
	return t->kind == TL_TRACK_THREAD ? t->pid : JSON_DEVICES_PID;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* The name of process pid: its executable's base name, from the first log (by start) that names
 * it; procs[] is sorted by pid within each host, byexe[] holds the named ones sorted by pid. */
static int cmp_proc_pid(const void *a, const void *b)
{
	const struct tl_proc *x = *(const struct tl_proc *const *)a, *y = *(const struct tl_proc *const *)b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x < y ? -1 : x > y; /* the model's order among equal pids */
}

static const char *proc_name(const struct tl_proc *const *byexe, size_t n, int pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (byexe[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || byexe[lo]->pid != pid)
		return "(no user log)";
	const char *exe = byexe[lo]->exe, *slash = strrchr(exe, '/');
	return slash && slash[1] ? slash + 1 : exe;
}

/* One metadata event naming a process or a track. */
static int put_meta(struct out *o, const char *what, int pid, long tid, const char *name)
{
	size_t n;
	char *q = json_quote(name, &n);
	if (!q)
		return -ENOMEM;
	char *p = out_room(o, 160);
	p = o->items++ ? PUT_LIT(p, ",\n{\"ph\":\"M\",\"name\":\"") : PUT_LIT(p, "\n{\"ph\":\"M\",\"name\":\"");
	p = put_str(p, what, strlen(what));
	p = PUT_LIT(p, "\",\"pid\":");
	p = put_i64(p, pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = put_i64(p, tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	o->len = (size_t)(p - o->buf);
	out_put(o, q, n);
	OUT_LIT(o, "}}");
	free(q);
	return 0;
}

/* The JSON document: an object with "traceEvents" (metadata events first, then one "X" event
 * per model event in model order) and "otherData" (the counts, so a reader can check them). */
static int write_json(struct out *o, const struct timeline *tl, const struct quoted *files)
{
	int *pids = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *pids);
	size_t npids = 0, ndevtracks = 0;
	if (!pids)
		return -ENOMEM;
	for (size_t t = 0; t < tl->ntracks; t++) {
		if (tl->tracks[t].kind == TL_TRACK_THREAD)
			pids[npids++] = tl->tracks[t].pid;
		else
			ndevtracks++;
	}
	qsort(pids, npids, sizeof *pids, cmp_int);
	size_t nuniq = 0;
	for (size_t i = 0; i < npids; i++)
		if (!nuniq || pids[nuniq - 1] != pids[i])
			pids[nuniq++] = pids[i];
	uint64_t nmeta = nuniq + (ndevtracks ? 1 : 0) + tl->ntracks;

	char *p = out_room(o, OUT_EVENT);
	p = PUT_LIT(p, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iostrata timeline\",\"t0_ns\":");
	p = put_u64(p, tl->t0_ns);
	p = PUT_LIT(p, ",\"t1_ns\":");
	p = put_u64(p, tl->t1_ns);
	p = PUT_LIT(p, ",\"events\":");
	p = put_u64(p, tl->nev);
	p = PUT_LIT(p, ",\"metadata_events\":");
	p = put_u64(p, nmeta);
	p = PUT_LIT(p, ",\"tracks\":");
	p = put_u64(p, tl->ntracks);
	p = PUT_LIT(p, ",\"user_events\":");
	p = put_u64(p, tl->user_events);
	p = PUT_LIT(p, ",\"user_calls\":");
	p = put_u64(p, tl->user_calls);
	p = PUT_LIT(p, ",\"kernel_events\":");
	p = put_u64(p, tl->kernel_events);
	p = PUT_LIT(p, ",\"dropped\":");
	p = put_u64(p, tl->dropped);
	p = PUT_LIT(p, ",\"warnings\":");
	p = put_u64(p, tl->nwarnings);
	o->len = (size_t)(p - o->buf);
	if (tl->warning) {
		size_t n;
		char *q = json_quote(tl->warning, &n);
		if (!q) {
			free(pids);
			return -ENOMEM;
		}
		OUT_LIT(o, ",\"warning\":");
		out_put(o, q, n);
		free(q);
	}
	OUT_LIT(o, "},\"traceEvents\":[");
	const struct tl_proc **byexe = malloc((tl->nprocs ? tl->nprocs : 1) * sizeof *byexe);
	size_t nbyexe = 0;
	if (!byexe) {
		free(pids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].exe)
			byexe[nbyexe++] = &tl->procs[i];
	qsort(byexe, nbyexe, sizeof *byexe, cmp_proc_pid);
	int rc = 0;
	for (size_t i = 0; i < nuniq && !rc; i++)
		rc = put_meta(o, "process_name", pids[i], 0, proc_name(byexe, nbyexe, pids[i]));
	free(byexe);
	if (ndevtracks && !rc)
		rc = put_meta(o, "process_name", JSON_DEVICES_PID, 0, "devices");
	for (size_t t = 0; t < tl->ntracks && !rc; t++) {
		const struct tl_track *tr = &tl->tracks[t];
		char name[96];
		if (tr->kind == TL_TRACK_THREAD)
			snprintf(name, sizeof name, "%d %s", tr->tid, tr->name);
		else
			snprintf(name, sizeof name, "%s", tr->name);
		rc = put_meta(o, "thread_name", json_pid(tr), JSON_TID_BASE + (long)t, name);
	}
	free(pids);
	if (rc)
		return rc;

	/* names of ops and layers with their lengths, once */
	struct name {
		const char *s;
		size_t n;
	} ops[256], layers[256];
	for (unsigned i = 0; i < 256; i++) {
		ops[i].s = op_name(i);
		ops[i].n = strlen(ops[i].s);
		layers[i].s = log_layer_name(i);
		layers[i].n = strlen(layers[i].s);
	}
	for (size_t k = 0; k < tl->nev && !o->err; k++) {
		const struct tl_event *e = &tl->ev[k];
		const struct tl_track *tr = e->track < tl->ntracks ? &tl->tracks[e->track] : NULL;
		size_t fn = e->file < tl->nfiles ? files[e->file].n : 0;
		p = out_room(o, OUT_EVENT + (fn < OUT_BUF - OUT_EVENT ? fn : 0));
		p = o->items++ ? PUT_LIT(p, ",\n{\"ph\":\"X\",\"name\":\"") : PUT_LIT(p, "\n{\"ph\":\"X\",\"name\":\"");
		p = put_str(p, ops[e->op].s, ops[e->op].n);
		p = PUT_LIT(p, "\",\"cat\":\"");
		p = put_str(p, layers[e->layer].s, layers[e->layer].n);
		p = PUT_LIT(p, "\",\"pid\":");
		p = put_i64(p, tr ? json_pid(tr) : JSON_DEVICES_PID);
		p = PUT_LIT(p, ",\"tid\":");
		p = put_u64(p, JSON_TID_BASE + (uint64_t)e->track);
		p = PUT_LIT(p, ",\"ts\":");
		p = put_us(p, e->start_ns);
		p = PUT_LIT(p, ",\"dur\":");
		p = put_us(p, e->end_ns - e->start_ns);
		p = PUT_LIT(p, ",\"args\":{\"id\":");
		p = put_u64(p, k);
		if (e->parent != TL_NONE) {
			p = PUT_LIT(p, ",\"parent\":");
			p = put_u64(p, e->parent);
		}
		if (e->file < tl->nfiles) {
			p = PUT_LIT(p, ",\"file\":");
			if (fn < OUT_BUF - OUT_EVENT) {
				p = put_str(p, files[e->file].s, fn); /* out_room made room for it */
			} else {
				o->len = (size_t)(p - o->buf);
				out_put(o, files[e->file].s, fn);
				p = out_room(o, OUT_EVENT);
			}
		}
		if (e->offset != UINT64_MAX) {
			p = PUT_LIT(p, ",\"offset\":");
			p = put_u64(p, e->offset);
		}
		p = PUT_LIT(p, ",\"size\":");
		p = put_u64(p, e->size);
		if (e->count > 1) {
			p = PUT_LIT(p, ",\"count\":");
			p = put_u64(p, e->count);
			p = PUT_LIT(p, ",\"busy_ns\":");
			p = put_u64(p, e->busy_ns);
			p = PUT_LIT(p, ",\"min_ns\":");
			p = put_u64(p, e->min_ns);
		}
		p = PUT_LIT(p, ",\"result\":");
		p = put_i64(p, e->result);
		if (e->flags & TL_F_HIT)
			p = PUT_LIT(p, ",\"cache\":\"hit\"");
		else if (e->flags & TL_F_MISS)
			p = PUT_LIT(p, ",\"cache\":\"miss\"");
		if (e->flags) {
			p = PUT_LIT(p, ",\"flags\":");
			p = put_u64(p, e->flags);
		}
		p = PUT_LIT(p, "}}");
		o->len = (size_t)(p - o->buf);
	}
	OUT_LIT(o, "\n]}\n");
	return 0;
}

static void set_err(char *err, size_t errlen, const char *path, const char *what, int e)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s%s%s", path, what, what[0] && e ? ": " : "", e ? strerror(e) : "");
}

int tl_export_perfetto(const struct timeline *tl, const char *path, char *err, size_t errlen)
{
	struct out o = { .fd = -1 };
	struct quoted *files = NULL;
	int rc = -ENOMEM, to_stdout;

	if (!tl || !path || !path[0]) {
		set_err(err, errlen, path ? path : "(null)", "no output file", 0);
		return -EINVAL;
	}
	int gz = ends_with(path, ".gz");
	to_stdout = !strcmp(path, "-");
	if (gz) {
		pthread_once(&zl.once, zlib_load);
		if (!zl.ok) {
			set_err(err, errlen, path, zl.why, 0);
			return -ENOSYS;
		}
	}
	o.buf = malloc(OUT_BUF);
	files = quote_files(tl, 1);
	if (!o.buf || !files) {
		set_err(err, errlen, path, "out of memory", 0);
		goto out;
	}
	o.fd = to_stdout ? STDOUT_FILENO : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (o.fd < 0) {
		rc = -errno;
		set_err(err, errlen, path, "cannot create", errno);
		goto out;
	}
	if (gz) {
		/* gzdopen owns the descriptor from here, also when it fails */
		int fd = to_stdout ? dup(o.fd) : o.fd;
		o.fd = -1;
		if (fd < 0 || !(o.gz = zl.dopen(fd, "wb1"))) {
			if (fd >= 0)
				close(fd);
			set_err(err, errlen, path, "cannot start gzip output", 0);
			goto out;
		}
		zl.buffer(o.gz, 1u << 20);
	}
	rc = write_json(&o, tl, files);
	if (rc) {
		set_err(err, errlen, path, "out of memory", 0);
		goto out;
	}
	out_flush(&o);
	rc = o.err;
	if (rc)
		set_err(err, errlen, path, "cannot write", -rc);
out:
	if (o.gz) {
		errno = 0;
		int z = zl.close(o.gz);
		if (z != Z_OK && !rc) {
			rc = errno ? -errno : -EIO;
			set_err(err, errlen, path, "cannot write", -rc);
		}
	} else if (o.fd >= 0 && !to_stdout) {
		if (close(o.fd) < 0 && !rc) {
			rc = -errno;
			set_err(err, errlen, path, "cannot write", errno);
		}
	}
	free(o.buf);
	quoted_free(files, tl->nfiles);
	return rc;
}

/* ---- CSV ---- */

#define CSV_HEADER                                                                                      \
	"id,parent,track,track_kind,track_name,pid,tid,layer,op,start_ns,end_ns,dur_ns,busy_ns,min_ns,count," \
	"offset,size,result,flags,cache,dev,ino,file\n"

int tl_export_csv(const struct timeline *tl, FILE *f)
{
	struct out o = { .fd = -1, .f = f };
	struct quoted *files = NULL, *tracks = NULL;
	int rc = -ENOMEM;

	if (!tl || !f)
		return -EINVAL;
	o.buf = malloc(OUT_BUF);
	files = quote_files(tl, 0);
	tracks = calloc(tl->ntracks ? tl->ntracks : 1, sizeof *tracks);
	if (!o.buf || !files || !tracks)
		goto out;
	for (size_t t = 0; t < tl->ntracks; t++)
		if (!(tracks[t].s = csv_quote(tl->tracks[t].name, &tracks[t].n)))
			goto out;
	OUT_LIT(&o, CSV_HEADER);
	for (size_t k = 0; k < tl->nev && !o.err; k++) {
		const struct tl_event *e = &tl->ev[k];
		const struct tl_track *tr = e->track < tl->ntracks ? &tl->tracks[e->track] : NULL;
		const char *s;
		char *p = out_room(&o, OUT_EVENT);
		p = put_u64(p, k);
		*p++ = ',';
		p = e->parent == TL_NONE ? PUT_LIT(p, "-1") : put_u64(p, e->parent);
		*p++ = ',';
		p = put_u64(p, e->track);
		*p++ = ',';
		s = tr ? kind_name(tr->kind) : "?";
		p = put_str(p, s, strlen(s));
		*p++ = ',';
		if (tr)
			p = put_str(p, tracks[e->track].s, tracks[e->track].n);
		*p++ = ',';
		p = put_i64(p, e->pid);
		*p++ = ',';
		p = put_i64(p, e->tid);
		*p++ = ',';
		s = log_layer_name(e->layer);
		p = put_str(p, s, strlen(s));
		*p++ = ',';
		s = op_name(e->op);
		p = put_str(p, s, strlen(s));
		*p++ = ',';
		p = put_u64(p, e->start_ns);
		*p++ = ',';
		p = put_u64(p, e->end_ns);
		*p++ = ',';
		p = put_u64(p, e->end_ns - e->start_ns);
		*p++ = ',';
		p = put_u64(p, e->busy_ns);
		*p++ = ',';
		p = put_u64(p, e->min_ns);
		*p++ = ',';
		p = put_u64(p, e->count);
		*p++ = ',';
		p = e->offset == UINT64_MAX ? PUT_LIT(p, "-1") : put_u64(p, e->offset);
		*p++ = ',';
		p = put_u64(p, e->size);
		*p++ = ',';
		p = put_i64(p, e->result);
		*p++ = ',';
		p = put_u64(p, e->flags);
		*p++ = ',';
		if (e->flags & TL_F_HIT)
			p = PUT_LIT(p, "hit");
		else if (e->flags & TL_F_MISS)
			p = PUT_LIT(p, "miss");
		*p++ = ',';
		p = put_u64(p, e->dev);
		*p++ = ',';
		p = put_u64(p, e->ino);
		*p++ = ',';
		o.len = (size_t)(p - o.buf);
		if (e->file < tl->nfiles)
			out_put(&o, files[e->file].s, files[e->file].n);
		out_put(&o, "\n", 1);
	}
	out_flush(&o);
	rc = o.err;
	if (!rc && (fflush(f) != 0 || ferror(f)))
		rc = errno ? -errno : -EIO;
out:
	free(o.buf);
	quoted_free(files, tl->nfiles);
	quoted_free(tracks, tl->ntracks);
	return rc;
}
