/* SPDX-License-Identifier: MIT */
/*
 * The one reader of iostrata logs. log_file_parse turns a buffer that may
 * be a live MAP_SHARED file still being updated into private, validated copies: the header is
 * copied before anything is checked, every offset and size is checked on that copy, records are
 * copied one by one and checked, and clock ticks are converted to ns. What it checks is what
 * it uses (its own copy, never the buffer read again), and it never crashes on bad input; each
 * failure is one line "NAME: what is wrong".
 * Final logs are written by src/log/writer.c. This file does not write, merge, analyse or print
 * logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iostrata/reader.h"
#include "log/trace.h"
#include "log/zstd.h"

#define LOG_CALIB_RETRIES 100 /* re-reads of a calibration pair caught mid-update */

static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "NAME: message", kept on one line even when NAME holds control characters. */
static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || errlen == 0)
		return;
	n = snprintf(err, errlen, "%s: ", name ? name : "<memory>");
	if (n < 0)
		n = 0;
	if ((size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static const char *errno_text(int e, char *buf, size_t len)
{
	/* GNU strerror_r: thread-safe, which plain strerror is not for unknown codes. */
	return strerror_r(e, buf, len);
}

static const char *section_name(uint32_t kind)
{
	switch (kind) {
	case LOG_SEC_STRINGS:
		return "strings";
	case LOG_SEC_RECORDS:
		return "records";
	case LOG_SEC_EVENTS:
		return "events";
	case LOG_SEC_KERNEL:
		return "kernel data";
	case LOG_SEC_MOUNT:
		return "mount data";
	case LOG_SEC_TOTALS:
		return "totals";
	default:
		return "unknown";
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * Reads of a buffer another thread or process may be writing. Aligned words are read with
 * atomic loads: each is then a value its writer stored, never torn, and a reader inside the
 * writing process (the capture library finalizing its own log) has no data race under the C11
 * model, which ThreadSanitizer checks in the unit test. Acquire loads pair with the writer's
 * release stores of string_used and of a record's flags (see docs/FORMAT.md). Misaligned
 * fields only occur in hand-made buffers (fuzz inputs); they are read with memcpy behind a
 * compiler barrier, which at least forces a fresh read.
 */
static uint64_t load_u64(const unsigned char *p)
{
	uint64_t v;

	if (((uintptr_t)p & 7) == 0)
		return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(&v, p, sizeof v);
	return v;
}

static uint32_t load_u32(const unsigned char *p)
{
	uint32_t v;

	if (((uintptr_t)p & 3) == 0)
		return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(&v, p, sizeof v);
	return v;
}

static uint16_t load_u16(const unsigned char *p)
{
	uint16_t v;

	if (((uintptr_t)p & 1) == 0)
		return __atomic_load_n((const uint16_t *)(const void *)p, __ATOMIC_ACQUIRE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(&v, p, sizeof v);
	return v;
}

/* A copy of n bytes (a multiple of 8) of a structure other threads may update word by word:
 * the header or a record whose counters are being bumped. */
static void copy_shared(void *dst, const unsigned char *src, size_t n)
{
	uint64_t *d = dst;

	if (((uintptr_t)src & 7) == 0) {
		for (size_t i = 0; i < n / 8; i++)
			d[i] = __atomic_load_n((const uint64_t *)(const void *)src + i, __ATOMIC_RELAXED);
		return;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(dst, src, n);
}

/*
 * The writer of a live file bumps calib_seq to odd, updates calib_tsc and calib_ns, then bumps
 * it to even. The header copy may hold a torn pair, so read the pair again from the buffer under
 * that protocol. After LOG_CALIB_RETRIES failures the last pair read is used (the caller still
 * refuses one that does not lie after the reference pair): a writer stuck mid-update, killed
 * there, must not make its log unreadable.
 */
static void read_calibration(const unsigned char *buf, struct log_header *h)
{
	const unsigned char *seq_p = buf + offsetof(struct log_header, calib_seq);
	const unsigned char *tsc_p = buf + offsetof(struct log_header, calib_tsc);
	const unsigned char *ns_p = buf + offsetof(struct log_header, calib_ns);

	for (int i = 0; i < LOG_CALIB_RETRIES; i++) {
		uint64_t s1 = load_u64(seq_p);
		uint64_t tsc = load_u64(tsc_p);
		uint64_t ns = load_u64(ns_p);
		uint64_t s2 = load_u64(seq_p);

		h->calib_seq = s2;
		h->calib_tsc = tsc;
		h->calib_ns = ns;
		if (s1 == s2 && !(s1 & 1))
			return;
		/* The writer's update takes nanoseconds: spin, but now and then give the CPU away
		 * in case the writer was preempted mid-update on this one. */
		if (i % 10 == 9)
			sched_yield();
		else
			cpu_relax();
	}
}

/* A TSC log's slope, ns per tick (its calibration pair against its reference pair). */
static long double tick_slope(const struct log_header *h)
{
	return (long double)(h->calib_ns - h->ns_ref) / (long double)(h->calib_tsc - h->tsc_ref);
}

/* ticks as ns through slope (tick_slope(h)): the one conversion, whoever made the slope. */
static uint64_t ticks_by_slope(const struct log_header *h, long double slope, uint64_t ticks, int is_timestamp)
{
	long double v;

	if (is_timestamp && ticks == 0)
		return 0; /* "never" */
	/* long double holds any uint64_t exactly on x86-64, so differences stay exact. */
	if (is_timestamp)
		v = (long double)h->ns_ref + ((long double)ticks - (long double)h->tsc_ref) * slope;
	else
		v = (long double)ticks * slope;
	if (v >= 18446744073709551615.0L)
		return UINT64_MAX;
	if (v < 0.5L)
		return is_timestamp ? 1 : 0; /* a timestamp that happened must not turn into "never" */
	return (uint64_t)(v + 0.5L);
}

uint64_t log_ticks_to_ns(const struct log_header *h, uint64_t ticks, int is_timestamp)
{
	if (h->clock_kind != LOG_CLOCK_TSC)
		return ticks;
	if (h->calib_tsc <= h->tsc_ref || h->calib_ns <= h->ns_ref)
		return ticks; /* unusable calibration; log_file_parse refuses such files */
	return ticks_by_slope(h, tick_slope(h), ticks, is_timestamp);
}

/* The counters a TSC log keeps in ticks (durations, then timestamps), found once per log. */
struct tick_counters {
	uint8_t dur[LOG_NCOUNTERS], ts[LOG_NCOUNTERS];
	unsigned ndur, nts;
};

static void tick_counters_find(struct tick_counters *t)
{
	t->ndur = t->nts = 0;
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		switch (log_counter_kinds[c]) {
		case LOG_K_TIME:
		case LOG_K_TMAX:
			t->dur[t->ndur++] = (uint8_t)c;
			break;
		case LOG_K_FIRST:
		case LOG_K_LAST:
			t->ts[t->nts++] = (uint8_t)c;
			break;
		default:
			break;
		}
	}
}

/* A record's tick counters as ns, as log_ticks_to_ns converts each (the slope made once per log,
 * not once per counter: a daemon's statistics convert 16 counters of 16,000 records each time). */
static void convert_record_times(const struct log_header *h, long double slope, const struct tick_counters *t,
				 struct log_record *r)
{
	/* (0 stays 0 either way: a duration of 0 ticks is 0 ns, a timestamp of 0 is "never"; most
	 * of a record's tick counters are 0 — a file only written has no read times — and the long
	 * double conversion was 41 % of a daemon's full reading: docs/BENCHMARKS.md, "dmn16") */
	for (unsigned i = 0; i < t->ndur; i++)
		if (r->counters[t->dur[i]])
			r->counters[t->dur[i]] = ticks_by_slope(h, slope, r->counters[t->dur[i]], 0);
	for (unsigned i = 0; i < t->nts; i++)
		if (r->counters[t->ts[i]])
			r->counters[t->ts[i]] = ticks_by_slope(h, slope, r->counters[t->ts[i]], 1);
}

/* Checks on the header copy that need no string or record bytes. Fills *strs and *recs with
 * the two required sections. */
static int check_header(const struct log_header *h, size_t size, const char *name,
			const struct log_section **strs, const struct log_section **recs, char *err,
			size_t errlen)
{
	const struct log_section *s;
	uint64_t fsize = size;

	*strs = *recs = NULL;
	if (h->header_size != LOG_HEADER_SIZE) {
		set_err(err, errlen, name, "header size %u, expected %u", h->header_size, LOG_HEADER_SIZE);
		return -EINVAL;
	}
	if (h->record_size != sizeof(struct log_record)) {
		set_err(err, errlen, name, "record size %u, expected %zu", h->record_size,
			sizeof(struct log_record));
		return -EINVAL;
	}
	if (h->ncounters != LOG_NCOUNTERS) {
		set_err(err, errlen, name, "%u counters per record, expected %u", h->ncounters,
			(unsigned)LOG_NCOUNTERS);
		return -EINVAL;
	}
	if (h->nsections > LOG_MAX_SECTIONS) {
		set_err(err, errlen, name, "%u sections, at most %u allowed", h->nsections, LOG_MAX_SECTIONS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < h->nsections; i++) {
		s = &h->sections[i];
		if (s->kind == 0)
			continue;
		if (s->kind > LOG_SEC_TOTALS) {
			set_err(err, errlen, name, "section %u: unknown kind %u", i, s->kind);
			return -EINVAL;
		}
		if (s->offset < h->header_size) {
			set_err(err, errlen, name, "section %u (%s): offset %llu lies inside the header", i,
				section_name(s->kind), (unsigned long long)s->offset);
			return -EINVAL;
		}
		if (s->size > UINT64_MAX - s->offset) {
			set_err(err, errlen, name, "section %u (%s): offset %llu + size %llu overflows", i,
				section_name(s->kind), (unsigned long long)s->offset,
				(unsigned long long)s->size);
			return -EINVAL;
		}
		/* A cut-short events or trace section costs its tail only (the parser keeps the rest
		 * and says so); the sections everything depends on must be whole. */
		if (s->offset + s->size > fsize && s->kind != LOG_SEC_EVENTS && s->kind != LOG_SEC_TRACE) {
			set_err(err, errlen, name, "truncated: header says %s %s at %llu but file has %zu bytes",
				section_name(s->kind), s->kind <= LOG_SEC_EVENTS ? "end" : "ends",
				(unsigned long long)(s->offset + s->size), size);
			return -EINVAL;
		}
		for (uint32_t j = 0; j < i; j++) {
			const struct log_section *o = &h->sections[j];

			if (o->kind == 0 || o->size == 0 || s->size == 0)
				continue;
			if (s->offset < o->offset + o->size && o->offset < s->offset + s->size) {
				set_err(err, errlen, name, "sections %u (%s) and %u (%s) overlap", j,
					section_name(o->kind), i, section_name(s->kind));
				return -EINVAL;
			}
		}
		if (s->kind == LOG_SEC_STRINGS || s->kind == LOG_SEC_RECORDS) {
			const struct log_section **slot = s->kind == LOG_SEC_STRINGS ? strs : recs;

			if (*slot) {
				set_err(err, errlen, name, "more than one %s section", section_name(s->kind));
				return -EINVAL;
			}
			*slot = s;
		}
	}
	if (!*strs || !*recs) {
		set_err(err, errlen, name, "no %s section", !*strs ? "strings" : "records");
		return -EINVAL;
	}
	s = *recs;
	if (s->count > s->size / h->record_size) {
		set_err(err, errlen, name, "records section holds %llu records of %u bytes but is %llu bytes",
			(unsigned long long)s->count, h->record_size, (unsigned long long)s->size);
		return -EINVAL;
	}
	if (h->nrecords > h->max_records) {
		set_err(err, errlen, name, "%u records in use but capacity is %u", h->nrecords,
			h->max_records);
		return -EINVAL;
	}
	if (h->nrecords > s->count) {
		set_err(err, errlen, name, "%u records in use but the records section holds %llu",
			h->nrecords, (unsigned long long)s->count);
		return -EINVAL;
	}
	if (h->string_used < 1 || h->string_used > (*strs)->size) {
		set_err(err, errlen, name, "%u string bytes in use but the strings section is %llu bytes",
			h->string_used, (unsigned long long)(*strs)->size);
		return -EINVAL;
	}
	if (h->clock_kind != LOG_CLOCK_NS && h->clock_kind != LOG_CLOCK_TSC) {
		set_err(err, errlen, name, "unknown clock kind %u", h->clock_kind);
		return -EINVAL;
	}
	return 0;
}

/* Header string offsets and argv, checked against the private string copy. The arguments'
 * offsets go to *args (argc of them) so that log_file_arg finds any of them at once: a process
 * may have hundreds of thousands. argc_total, the program's own count, is set to argc when the
 * writer left it 0 (older logs, writers that store every argument). */
static int check_header_strings(struct log_header *h, const char *strings, uint32_t used, uint32_t **args,
				const char *name, char *err, size_t errlen)
{
	const struct {
		const char *field;
		uint32_t off;
	} fields[] = {
		{"host", h->host}, {"exe", h->exe}, {"argv", h->argv}, {"job", h->job},
		{"cwd", h->cwd},   {"outdir", h->outdir}, {"live_path", h->live_path},
	};
	uint32_t pos;

	*args = NULL;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (fields[i].off >= used) {
			set_err(err, errlen, name, "header field %s: string offset %u beyond the %u string bytes in use",
				fields[i].field, fields[i].off, used);
			return -EINVAL;
		}
	}
	/* Every argument takes at least its NUL: argc is never trusted beyond the bytes there are. */
	if (h->argc > used - h->argv) {
		set_err(err, errlen, name, "argc %u: more arguments than the %u string bytes after argv can hold",
			h->argc, used - h->argv);
		return -EINVAL;
	}
	if (h->argc_total == 0)
		h->argc_total = h->argc;
	if (h->argc_total < h->argc) {
		set_err(err, errlen, name, "argc_total %u is less than the %u arguments stored", h->argc_total,
			h->argc);
		return -EINVAL;
	}
	if (h->argc_total > h->argc)
		h->flags |= LOG_F_ARGV_CUT;
	else
		h->flags &= ~(uint32_t)LOG_F_ARGV_CUT;
	*args = malloc(((size_t)h->argc + 1) * sizeof **args);
	if (!*args) {
		set_err(err, errlen, name, "out of memory");
		return -ENOMEM;
	}
	/* Each argument must end with its own NUL inside the used bytes; the NUL the reader adds
	 * after them does not count, so log_file_arg never walks past the section. */
	pos = h->argv;
	for (uint32_t i = 0; i < h->argc; i++) {
		const char *nul = pos < used ? memchr(strings + pos, '\0', used - pos) : NULL;

		if (!nul) {
			set_err(err, errlen, name, "argv[%u] runs off the end of the string section", i);
			free(*args);
			*args = NULL;
			return -EINVAL;
		}
		(*args)[i] = pos;
		pos = (uint32_t)(nul - strings) + 1;
	}
	return 0;
}

static void add_warning(struct log_file *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Damage stepped over: the first message is kept ("NAME: what"), the others only counted. */
static void add_warning(struct log_file *out, const char *fmt, ...)
{
	if (out->nwarnings++ || !(out->warning = malloc(512)))
		return;
	int n = snprintf(out->warning, 512, "%s: ", out->path ? out->path : "<memory>");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->warning + n, 512 - (size_t)n, fmt, ap);
	va_end(ap);
	for (char *c = out->warning; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

struct trace_blk {
	const unsigned char *hdr; /* 128 bytes */
	const unsigned char *pay;
	uint32_t avail;            /* payload bytes present */
	int32_t pid, tid;
	uint32_t seq;
	uint32_t thread;
};

/* Blocks by thread (pid, tid), then in the order the thread claimed them. */
static int cmp_blk(const void *a, const void *b)
{
	const struct trace_blk *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

void log_trace_entry_of(const struct log_header *h, const struct log_trace_run *r, int32_t pid, int32_t tid,
			struct log_trace_entry *e)
{
	int tsc = h->clock_kind == LOG_CLOCK_TSC;
	*e = (struct log_trace_entry){
		.start_ns = tsc ? log_ticks_to_ns(h, r->start, 1) : r->start,
		.end_ns = tsc ? log_ticks_to_ns(h, r->end, 1) : r->end,
		.busy_ns = tsc ? log_ticks_to_ns(h, r->busy, 0) : r->busy,
		.min_ns = tsc ? log_ticks_to_ns(h, r->min, 0) : r->min,
		.offset = r->offset,
		.size = r->size,
		.count = r->count,
		.result = r->result,
		.pid = pid,
		.tid = tid,
		.record = UINT32_MAX,
		.op = r->op,
	};
	if (e->end_ns < e->start_ns) /* a run no writer makes: never a negative span */
		e->end_ns = e->start_ns;
	/* one call: its duration is its span, with no second rounding of a separate conversion */
	if (r->count == 1)
		e->busy_ns = e->min_ns = e->end_ns - e->start_ns;
}

static void entry_from_run(const struct log_header *h, const struct log_trace_run *r, const struct trace_blk *b,
			   const uint32_t *index, uint32_t nslots, const struct log_file *out,
			   struct log_trace_entry *e)
{
	log_trace_entry_of(h, r, b->pid, b->tid, e);
	e->record = r->record < nslots ? index[r->record] : UINT32_MAX;
	if (e->record != UINT32_MAX)
		e->layer = (uint8_t)out->records[e->record].layer;
}

/*
 * The TRACE section: blocks at a fixed stride (live file) or packed back to back (final log,
 * perhaps zstd-compressed), grouped by thread and decoded in each thread's block order. The
 * open run of a thread's latest block is its last entry. Damage (a section cut short, bytes that
 * do not decode, a zstd frame that fails) ends the block or the section where it is and is
 * reported as a warning: everything before it is kept. -1 only when out of memory.
 */
static int read_trace(const unsigned char *p, size_t size, const struct log_header *h,
		      const struct log_section *ts, const uint32_t *slots, struct log_file *out)
{
	unsigned char *raw = NULL;
	size_t len = 0;
	uint64_t have = ts->offset < size ? size - ts->offset : 0;
	struct trace_blk *blks = NULL;
	uint32_t *index = NULL;
	size_t nblk = 0, cap = 0;
	int rc = -1;

	if (have > ts->size)
		have = ts->size;
	if (have < ts->size)
		add_warning(out, "trace section cut short: %llu of %llu bytes present", (unsigned long long)have,
			    (unsigned long long)ts->size);
	out->trace_bytes = ts->size;
	out->trace_dropped = h->trace_dropped;
	const unsigned char *sec = have ? p + ts->offset : p; /* never an address past the buffer */
	if (ts->flags & LOG_SEC_F_ZSTD) {
		char why[256];
		void *buf;
		int z = log_zstd_decompress(sec, have, &buf, &len, why, sizeof why);
		if (z < 0) {
			add_warning(out, "trace section is zstd-compressed and cannot be read: %s", why);
			return 0;
		}
		if (z > 0)
			add_warning(out, "trace section: %s; %zu bytes before it kept", why, len);
		raw = buf;
	} else {
		if (!(raw = malloc(have ? have : 1)))
			return -1;
		copy_shared(raw, sec, have & ~(uint64_t)7);
		memcpy(raw + (have & ~(uint64_t)7), sec + (have & ~(uint64_t)7), have & 7);
		len = have;
	}
	index = malloc(((size_t)h->nrecords + 1) * sizeof *index);
	if (!index)
		goto out;
	for (uint32_t i = 0; i < h->nrecords; i++)
		index[i] = UINT32_MAX;
	for (uint32_t i = 0; i < out->nrecords; i++)
		index[slots[i]] = i;

	/* the blocks */
	int packed = (ts->flags & LOG_SEC_F_PACKED) != 0;
	uint64_t stride = h->trace_block_size, nmax = ts->count;
	if (!packed) {
		uint64_t claimed = h->trace_blocks;
		if (stride <= sizeof(struct log_trace_block)) {
			add_warning(out, "trace block size %llu is too small", (unsigned long long)stride);
			rc = 0;
			goto out;
		}
		if (claimed < nmax)
			nmax = claimed;
	}
	size_t pos = 0;
	for (uint64_t i = 0; i < nmax; i++) {
		if (!packed)
			pos = (size_t)(i * stride);
		if (pos + sizeof(struct log_trace_block) > len) {
			if (packed || pos < len)
				add_warning(out, "trace block %llu: cut short", (unsigned long long)i);
			break;
		}
		struct log_trace_block bh;
		memcpy(&bh, raw + pos, sizeof bh);
		if (bh.magic != LOG_TRACE_MAGIC) {
			if (packed) {
				add_warning(out, "trace block %llu: bad magic 0x%08x; the blocks after it are lost",
					    (unsigned long long)i, bh.magic);
				break;
			}
			continue; /* claimed by a thread killed before it could fill the header */
		}
		uint32_t cap_bytes = packed ? bh.size : (uint32_t)(stride - sizeof bh);
		uint32_t used = bh.used;
		if (used > cap_bytes || (packed && used != bh.size)) {
			add_warning(out, "trace block %llu (pid %d tid %d): %u bytes used of %u", (unsigned long long)i,
				    bh.pid, bh.tid, used, cap_bytes);
			if (packed)
				break;
			used = cap_bytes;
		}
		size_t avail = len - pos - sizeof bh;
		if (avail > used)
			avail = used;
		if (nblk == cap) {
			cap = cap ? cap * 2 : 64;
			struct trace_blk *nb = realloc(blks, cap * sizeof *nb);
			if (!nb)
				goto out;
			blks = nb;
		}
		blks[nblk++] = (struct trace_blk){raw + pos, raw + pos + sizeof bh, (uint32_t)avail, bh.pid, bh.tid, bh.seq, 0};
		if (avail < used) {
			add_warning(out, "trace block %llu (pid %d tid %d): cut short", (unsigned long long)i, bh.pid, bh.tid);
			break;
		}
		pos += sizeof bh + (packed ? used : 0);
	}

	/* blocks sorted by (pid, tid, seq): each thread is a run of them, in (pid, tid) order */
	if (nblk)
		qsort(blks, nblk, sizeof *blks, cmp_blk);
	uint32_t nth = 0;
	for (size_t i = 0; i < nblk; i++) {
		if (i == 0 || blks[i].pid != blks[i - 1].pid || blks[i].tid != blks[i - 1].tid)
			nth++;
		blks[i].thread = nth - 1;
	}
	struct log_trace_thread *th = calloc(nth ? nth : 1, sizeof *th);
	if (!th)
		goto out;
	for (size_t i = 0; i < nblk; i++)
		th[blks[i].thread].pid = blks[i].pid, th[blks[i].thread].tid = blks[i].tid;
	out->trace_threads = th;
	out->ntrace_threads = nth;

	size_t ecap = 0;
	for (size_t i = 0; i < nblk; i++) {
		struct log_trace_thread *t = &th[blks[i].thread];
		struct log_trace_block bh;
		memcpy(&bh, blks[i].hdr, sizeof bh);
		if (t->blocks == 0)
			t->first = out->ntrace;
		t->blocks++;
		t->dropped = bh.dropped; /* the latest block holds the thread's total */
		struct log_trace_ctx ctx;
		log_trace_ctx_reset(&ctx);
		size_t at = 0;
		int last = i + 1 == nblk || blks[i + 1].thread != blks[i].thread;
		for (;;) {
			struct log_trace_run r;
			int have_open = last && bh.open.count && bh.open_at == bh.used && at == blks[i].avail &&
					blks[i].avail == bh.used;
			size_t k = 0;
			if (at < blks[i].avail) {
				k = log_trace_decode(&ctx, blks[i].pay + at, blks[i].avail - at, &r);
				if (!k) {
					add_warning(out, "trace of pid %d tid %d, block %u: byte %zu does not decode; %llu entries before it kept",
						    bh.pid, bh.tid, bh.seq, at, (unsigned long long)(out->ntrace - t->first));
					t->damaged++;
					break;
				}
			} else if (have_open) {
				r = bh.open;
				if (r.op == 0 || r.op >= LOG_NOPS)
					break;
			} else {
				break;
			}
			if (out->ntrace == ecap) {
				ecap = ecap ? ecap * 2 : 1024;
				struct log_trace_entry *ne = realloc(out->trace, ecap * sizeof *ne);
				if (!ne)
					goto out;
				out->trace = ne;
			}
			struct log_trace_entry *e = &out->trace[out->ntrace++];
			entry_from_run(h, &r, &blks[i], index, h->nrecords, out, e);
			t->n++;
			t->calls += r.count;
			if (!k) {
				e->flags |= LOG_TE_OPEN;
				break;
			}
			at += k;
		}
	}
	for (uint32_t t = 0; t < nth; t++)
		out->trace_dropped += th[t].dropped;
	rc = 0;
out:
	free(raw);
	free(blks);
	free(index);
	return rc;
}

/*
 * A final log whose records or strings are zstd-compressed (a traced process's log) is first
 * inflated into a plain image, sections in their file order, and that image is parsed. The
 * other sections are copied as they are (a compressed trace is decoded later, frame by frame),
 * a cut-short last section included, so the damage checks see what the file holds.
 * 1 when *img was built, 0 when nothing is compressed, <0 with err set.
 */
static int inflate_log(const unsigned char *p, size_t size, const char *name, unsigned char **img, size_t *imgsize,
		       char *err, size_t errlen)
{
	/* (the section table alone: the header's 4 KiB copied word by word was 14 % of a daemon's
	 * full reading) */
	struct log_header h;
	h.nsections = load_u32(p + offsetof(struct log_header, nsections));
	copy_shared(h.sections, p + offsetof(struct log_header, sections), sizeof h.sections);
	uint32_t ns = h.nsections < LOG_MAX_SECTIONS ? h.nsections : LOG_MAX_SECTIONS;
	int any = 0;
	for (uint32_t i = 0; i < ns; i++)
		if ((h.sections[i].flags & LOG_SEC_F_ZSTD) &&
		    (h.sections[i].kind == LOG_SEC_RECORDS || h.sections[i].kind == LOG_SEC_STRINGS))
			any = 1;
	if (!any)
		return 0;
	copy_shared(&h, p, sizeof h); /* (a compressed log: its whole header, once, for the image) */
	ns = h.nsections < LOG_MAX_SECTIONS ? h.nsections : LOG_MAX_SECTIONS;
	uint32_t order[LOG_MAX_SECTIONS], no = 0;
	for (uint32_t i = 0; i < ns; i++)
		if (h.sections[i].kind)
			order[no++] = i;
	for (uint32_t a = 1; a < no; a++) /* by file offset */
		for (uint32_t b = a; b > 0 && h.sections[order[b - 1]].offset > h.sections[order[b]].offset; b--) {
			uint32_t t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	void *part[LOG_MAX_SECTIONS] = {0};
	size_t plen[LOG_MAX_SECTIONS] = {0};
	size_t total = LOG_HEADER_SIZE;
	int rc = -EINVAL;
	for (uint32_t k = 0; k < no; k++) {
		struct log_section *s = &h.sections[order[k]];
		if (s->offset < LOG_HEADER_SIZE || s->offset > size) {
			set_err(err, errlen, name, "section %u (%s): offset %llu outside the file", order[k],
				section_name(s->kind), (unsigned long long)s->offset);
			goto out;
		}
		uint64_t have = size - s->offset < s->size ? size - s->offset : s->size;
		if ((s->flags & LOG_SEC_F_ZSTD) && (s->kind == LOG_SEC_RECORDS || s->kind == LOG_SEC_STRINGS)) {
			uint64_t want = s->kind == LOG_SEC_RECORDS ? s->count * (uint64_t)h.record_size : s->count;
			char why[256];
			if (have < s->size || h.record_size == 0 || want > ((uint64_t)1 << 36)) {
				set_err(err, errlen, name, "truncated: the compressed %s section is cut short", section_name(s->kind));
				goto out;
			}
			int z = log_zstd_decompress(p + s->offset, have, &part[k], &plen[k], why, sizeof why);
			if (z != 0 || plen[k] != want) {
				set_err(err, errlen, name, "%s section: %s", section_name(s->kind),
					z ? why : "decompressed size differs from the header's");
				rc = z < 0 ? -ENOTSUP : -EINVAL;
				goto out;
			}
			s->flags &= ~(uint32_t)LOG_SEC_F_ZSTD;
			s->size = want;
		} else {
			if (!(part[k] = malloc(have ? have : 1)))
				goto nomem;
			memcpy(part[k], p + s->offset, have);
			plen[k] = have;
			if (have < s->size && k + 1 < no) {
				set_err(err, errlen, name, "truncated: %s section cut short", section_name(s->kind));
				goto out;
			}
		}
		s->offset = total;
		total += plen[k] + ((8 - plen[k] % 8) % 8);
	}
	if (!(*img = calloc(1, total)))
		goto nomem;
	memcpy(*img, &h, sizeof h);
	for (uint32_t k = 0; k < no; k++)
		memcpy(*img + h.sections[order[k]].offset, part[k], plen[k]);
	/* a cut-short last section stays cut short */
	*imgsize = no ? h.sections[order[no - 1]].offset + plen[no - 1] : total;
	rc = 1;
	goto out;
nomem:
	set_err(err, errlen, name, "out of memory");
	rc = -ENOMEM;
out:
	for (uint32_t k = 0; k < no; k++)
		free(part[k]);
	return rc;
}

/* own: buf is the caller's alone (a private copy nobody writes while it is read), so the header
 * and the records are copied with memcpy, each once, not word by word and then again. recs_own:
 * the records section is not in buf but follows it, at offset size, its nrecs_own records held
 * there (the caller's, taken as out->records on success: log_file_parse_own_records). */
static int parse(const void *buf, size_t size, const char *name, struct log_file *out, char *err, size_t errlen,
		 int own, struct log_record *recs_own, size_t nrecs_own)
{
	const unsigned char *p = buf;
	const struct log_section *strs, *recs;
	struct log_header h;
	struct log_record r;
	uint32_t *slots = NULL; /* slot of each kept record, for error messages */
	uint32_t used, now_used, flags;
	int rc;

	if (!name)
		name = "<memory>";
	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (size == 0 || !buf) {
		set_err(err, errlen, name, "empty file");
		return -EINVAL;
	}
	if (memcmp(p, LOG_MAGIC, size < 8 ? size : 8) != 0) {
		set_err(err, errlen, name, "not an iostrata log (bad magic)");
		return -EINVAL;
	}
	/* Byte order, then version, before the size check: a log of another version may have a
	 * different header size and deserves the clearer message. */
	if (size >= offsetof(struct log_header, endian) + 4) {
		uint32_t e = load_u32(p + offsetof(struct log_header, endian));

		if (e != LOG_ENDIAN_MARK) {
			if (e == __builtin_bswap32(LOG_ENDIAN_MARK))
				set_err(err, errlen, name, "written with the other byte order (not supported)");
			else
				set_err(err, errlen, name, "bad byte-order mark 0x%08x", e);
			return -EINVAL;
		}
	}
	if (size >= offsetof(struct log_header, version) + 4) {
		uint32_t v = load_u32(p + offsetof(struct log_header, version));

		if (v != LOG_VERSION) {
			set_err(err, errlen, name, "unsupported format version %u (this reader reads %u)", v,
				LOG_VERSION);
			return -ENOTSUP;
		}
	}
	if (size < LOG_HEADER_SIZE) {
		set_err(err, errlen, name, "truncated: file has %zu bytes, less than the %u-byte header", size,
			LOG_HEADER_SIZE);
		return -EINVAL;
	}

	unsigned char *img = NULL;
	size_t imgsize = 0;
	rc = inflate_log(p, size, name, &img, &imgsize, err, errlen);
	if (rc < 0)
		return rc;
	if (rc > 0 && recs_own) {
		free(img);
		set_err(err, errlen, name, "compressed sections in a reading with its records apart");
		return -EINVAL;
	}
	if (rc > 0) {
		rc = parse(img, imgsize, name, out, err, errlen, 1, NULL, 0);
		free(img);
		if (rc == 0) { /* tools show the file's own section table, not the image's */
			struct log_header fh;
			copy_shared(&fh, p, sizeof fh);
			memcpy(out->hdr.sections, fh.sections, sizeof out->hdr.sections);
		}
		return rc;
	}
	if (own)
		memcpy(&h, p, sizeof h);
	else
		copy_shared(&h, p, sizeof h);
	/* The copy is what gets checked; the fields checked above are re-checked on it because the
	 * buffer may have changed since. */
	if (memcmp(h.magic, LOG_MAGIC, 8) != 0 || h.endian != LOG_ENDIAN_MARK || h.version != LOG_VERSION) {
		set_err(err, errlen, name, "header changed while being read");
		return -EAGAIN;
	}
	/* records apart: the header is checked against the whole they make with buf, and the records
	 * section must be just them (nothing else may lie past buf) */
	size_t whole = size;
	if (recs_own) {
		if (nrecs_own > (SIZE_MAX - size) / sizeof(struct log_record)) {
			set_err(err, errlen, name, "%zu records apart: too many", nrecs_own);
			return -EINVAL;
		}
		whole = size + nrecs_own * sizeof(struct log_record);
	}
	rc = check_header(&h, whole, name, &strs, &recs, err, errlen);
	if (rc)
		return rc;
	if (recs_own && (recs->offset != size || recs->size != nrecs_own * sizeof(struct log_record) ||
			 strs->offset + strs->size > size || h.nsections > 2)) {
		set_err(err, errlen, name, "records apart but the header does not place them after the buffer");
		return -EINVAL;
	}
	if (h.clock_kind == LOG_CLOCK_TSC) {
		read_calibration(p, &h);
		if (!h.calib_tsc && !h.calib_ns && !h.end_ns) {
			/* a live file whose writer set its magic and has not calibrated yet (it does
			 * right after): read it again later */
			set_err(err, errlen, name, "clock calibration not made yet");
			return -EAGAIN;
		}
		if (h.calib_tsc <= h.tsc_ref || h.calib_ns <= h.ns_ref) {
			set_err(err, errlen, name,
				"clock calibration invalid (tsc %llu..%llu, ns %llu..%llu)",
				(unsigned long long)h.tsc_ref, (unsigned long long)h.calib_tsc,
				(unsigned long long)h.ns_ref, (unsigned long long)h.calib_ns);
			return -EINVAL;
		}
	}

	out->path = strdup(name);
	if (!out->path)
		goto nomem;

	/*
	 * Records before strings: a writer appends a path's bytes and bumps string_used before it
	 * marks the record using it LOG_R_USED. Reading string_used again after the records are
	 * copied covers every path those records can reference, so a live file is never refused
	 * for a path added after the header was copied.
	 */
	/* (records apart: kept in place, those in use moved down over the others) */
	if (recs_own)
		out->records = recs_own;
	if (h.nrecords) {
		if (!recs_own)
			out->records = malloc((size_t)h.nrecords * sizeof *out->records);
		slots = malloc((size_t)h.nrecords * sizeof *slots);
		if (!out->records || !slots)
			goto nomem;
	}
	for (uint32_t i = 0; i < h.nrecords; i++) {
		const unsigned char *src = recs_own ? (const unsigned char *)&recs_own[i]
						    : p + recs->offset + (uint64_t)i * h.record_size;

		/* Flags first and then the body, so a record being inserted is either skipped or
		 * seen with the fields its writer filled before setting LOG_R_USED. */
		flags = load_u16(src + offsetof(struct log_record, flags));
		if (!(flags & LOG_R_USED) || (flags & LOG_R_DEAD))
			continue;
		slots[out->nrecords] = i;
		if (recs_own) {
			if (out->nrecords != i)
				memcpy(&out->records[out->nrecords], src, sizeof r);
			out->nrecords++;
			continue;
		}
		if (own) {
			memcpy(&out->records[out->nrecords++], src, sizeof r);
			continue;
		}
		copy_shared(&r, src, sizeof r);
		r.flags = (uint16_t)flags;
		out->records[out->nrecords++] = r;
	}

	/* The acquire load also orders the string bytes below string_used before the copy:
	 * bytes once published are never written again, so a plain copy of them is race-free. */
	used = h.string_used;
	now_used = load_u32(p + offsetof(struct log_header, string_used));
	if (now_used > used && now_used <= strs->size)
		used = now_used;
	h.string_used = used;
	out->strings = malloc((size_t)used + 1);
	if (!out->strings)
		goto nomem;
	memcpy(out->strings, p + strs->offset, used);
	out->strings[0] = '\0'; /* offset 0 is "" whatever the byte holds */
	out->strings[used] = '\0';
	out->strings_size = used;

	rc = check_header_strings(&h, out->strings, used, &out->args, name, err, errlen);
	if (rc)
		goto fail;
	struct tick_counters tk;
	long double slope = 0;
	if (h.clock_kind == LOG_CLOCK_TSC) { /* (the calibration was checked above) */
		tick_counters_find(&tk);
		slope = tick_slope(&h);
	}
	for (uint32_t i = 0; i < out->nrecords; i++) {
		struct log_record *k = &out->records[i];

		if (k->layer < 1 || k->layer > LOG_LAYER_MAX) {
			set_err(err, errlen, name, "record %u (id %016llx): layer %u out of range (1..%u)",
				slots[i], (unsigned long long)k->id, k->layer, (unsigned)LOG_LAYER_MAX);
			rc = -EINVAL;
			goto fail;
		}
		if (k->path >= used) {
			set_err(err, errlen, name,
				"record %u (id %016llx): path offset %u beyond the %u string bytes in use",
				slots[i], (unsigned long long)k->id, k->path, used);
			rc = -EINVAL;
			goto fail;
		}
		if (h.clock_kind == LOG_CLOCK_TSC)
			convert_record_times(&h, slope, &tk, k);
	}
	for (uint32_t i = 0; i < h.nsections; i++) {
		const struct log_section *ev = &h.sections[i];
		if (ev->kind != LOG_SEC_EVENTS || ev->count == 0)
			continue;
		if (out->events) {
			set_err(err, errlen, name, "more than one events section");
			rc = -EINVAL;
			goto fail;
		}
		uint64_t have = ev->offset < size ? size - ev->offset : 0, n = ev->count;
		if (have > ev->size)
			have = ev->size;
		if (n > have / sizeof(struct log_event)) {
			n = have / sizeof(struct log_event);
			add_warning(out, "events section cut short: %llu of %llu events present",
				    (unsigned long long)n, (unsigned long long)ev->count);
		}
		out->events = malloc((size_t)(n ? n : 1) * sizeof(struct log_event));
		if (!out->events)
			goto nomem;
		if (n)
			copy_shared(out->events, p + ev->offset, (size_t)n * sizeof(struct log_event));
		for (uint64_t j = 0; j < n; j++) {
			const struct log_event *e = &out->events[j];
			if (e->layer < 1 || e->layer > LOG_LAYER_MAX || e->op >= LOG_NOPS) {
				add_warning(out, "event %llu: layer %u or op %u out of range; %llu events kept",
					    (unsigned long long)j, e->layer, e->op, (unsigned long long)j);
				n = j;
				break;
			}
		}
		out->nevents = n;
	}
	for (uint32_t i = 0; i < h.nsections; i++) {
		const struct log_section *ts = &h.sections[i];
		if (ts->kind != LOG_SEC_TRACE)
			continue;
		if (out->trace_threads || out->trace_bytes) {
			set_err(err, errlen, name, "more than one trace section");
			rc = -EINVAL;
			goto fail;
		}
		if (read_trace(p, size, &h, ts, slots, out) < 0)
			goto nomem;
	}
	out->live = (h.flags & LOG_F_LIVE) && !(h.flags & LOG_F_FINISHED);
	h.clock_kind = LOG_CLOCK_NS;
	out->hdr = h;
	out->record_slots = slots;
	return 0;

nomem:
	set_err(err, errlen, name, "out of memory");
	rc = -ENOMEM;
fail:
	free(slots);
	if (recs_own)
		out->records = NULL; /* (the caller's again) */
	log_file_free(out);
	return rc;
}

int log_file_read(const char *path, struct log_file *out, char *err, size_t errlen)
{
	void *map = MAP_FAILED;
	struct stat st;
	char ebuf[128];
	size_t size = 0;
	int fd = -1, rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out || !path)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	/* O_NONBLOCK so a FIFO given by mistake is refused by the check below instead of hanging
	 * the open; it changes nothing for regular files. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		set_err(err, errlen, path, "%s", errno_text(-rc, ebuf, sizeof ebuf));
		goto err;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		set_err(err, errlen, path, "cannot stat: %s", errno_text(-rc, ebuf, sizeof ebuf));
		goto err;
	}
	if (S_ISDIR(st.st_mode)) {
		set_err(err, errlen, path, "is a directory, not a log file");
		rc = -EISDIR;
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, path, "not a regular file");
		rc = -EINVAL;
		goto err;
	}
	if (st.st_size == 0) {
		set_err(err, errlen, path, "empty file");
		rc = -EINVAL;
		goto err;
	}
	if ((unsigned long long)st.st_size > SIZE_MAX) {
		set_err(err, errlen, path, "too large to map (%lld bytes)", (long long)st.st_size);
		rc = -EFBIG;
		goto err;
	}
	size = (size_t)st.st_size;
	/* MAP_SHARED: a live file is read as its writer has it now, not as a private snapshot. */
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		set_err(err, errlen, path, "cannot map: %s", errno_text(-rc, ebuf, sizeof ebuf));
		goto err;
	}
	rc = log_file_parse(map, size, path, out, err, errlen);
err:
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	return rc;
}

int log_file_parse(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		   size_t errlen)
{
	return parse(buf, size, name, out, err, errlen, 0, NULL, 0);
}

int log_file_parse_own(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		       size_t errlen)
{
	return parse(buf, size, name, out, err, errlen, 1, NULL, 0);
}

int log_file_parse_own_records(const void *buf, size_t size, struct log_record *recs, size_t nrecs, const char *name,
			       struct log_file *out, char *err, size_t errlen)
{
	if (!recs)
		return parse(buf, size, name, out, err, errlen, 1, NULL, 0);
	return parse(buf, size, name, out, err, errlen, 1, recs, nrecs);
}

void log_file_free(struct log_file *lf)
{
	if (!lf)
		return;
	free(lf->path);
	free(lf->strings);
	free(lf->args);
	free(lf->records);
	free(lf->record_slots);
	free(lf->events);
	free(lf->trace);
	free(lf->trace_threads);
	free(lf->warning);
	memset(lf, 0, sizeof *lf);
}

uint64_t log_file_last_ns(const struct log_file *lf)
{
	uint64_t t = lf->hdr.start_ns;
	for (uint32_t i = 0; i < lf->nrecords; i++)
		for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
			if (log_counter_kinds[c] == LOG_K_LAST && lf->records[i].counters[c] > t)
				t = lf->records[i].counters[c];
	return t;
}

const char *log_file_string(const struct log_file *lf, uint32_t off)
{
	if (!lf || !lf->strings || off == 0 || off >= lf->strings_size)
		return "";
	return lf->strings + off;
}

const char *log_file_arg(const struct log_file *lf, uint32_t i)
{
	uint64_t pos; /* 64 bits: stepping past a string at the very end must not wrap */

	if (!lf || !lf->strings || i >= lf->hdr.argc)
		return NULL;
	if (lf->args)
		return lf->args[i] < lf->strings_size ? lf->strings + lf->args[i] : NULL;
	/* a log_file made by hand (tests, tools), not by the parser: walk the strings */
	pos = lf->hdr.argv;
	for (uint32_t k = 0; k < i; k++) {
		if (pos >= lf->strings_size)
			return NULL;
		pos += strlen(lf->strings + pos) + 1;
	}
	if (pos >= lf->strings_size)
		return NULL;
	return lf->strings + pos;
}
