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

#define LOG_ARGC_MAX 4096     /* more arguments than this means a corrupt header, not a program */
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

uint64_t log_ticks_to_ns(const struct log_header *h, uint64_t ticks, int is_timestamp)
{
	long double slope, v;

	if (h->clock_kind != LOG_CLOCK_TSC)
		return ticks;
	if (h->calib_tsc <= h->tsc_ref || h->calib_ns <= h->ns_ref)
		return ticks; /* unusable calibration; log_file_parse refuses such files */
	if (is_timestamp && ticks == 0)
		return 0; /* "never" */
	/* long double holds any uint64_t exactly on x86-64, so differences stay exact. */
	slope = (long double)(h->calib_ns - h->ns_ref) / (long double)(h->calib_tsc - h->tsc_ref);
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

static void convert_record_times(const struct log_header *h, struct log_record *r)
{
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		switch (log_counter_kinds[c]) {
		case LOG_K_TIME:
		case LOG_K_TMAX:
			r->counters[c] = log_ticks_to_ns(h, r->counters[c], 0);
			break;
		case LOG_K_FIRST:
		case LOG_K_LAST:
			r->counters[c] = log_ticks_to_ns(h, r->counters[c], 1);
			break;
		default:
			break;
		}
	}
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
		if (s->kind > LOG_SEC_MOUNT) {
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
		if (s->offset + s->size > fsize) {
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
	if (h->argc > LOG_ARGC_MAX) {
		set_err(err, errlen, name, "argc %u is implausible (more than %u)", h->argc, LOG_ARGC_MAX);
		return -EINVAL;
	}
	return 0;
}

/* Header string offsets and argv, checked against the private string copy. */
static int check_header_strings(const struct log_header *h, const char *strings, uint32_t used,
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

	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (fields[i].off >= used) {
			set_err(err, errlen, name, "header field %s: string offset %u beyond the %u string bytes in use",
				fields[i].field, fields[i].off, used);
			return -EINVAL;
		}
	}
	/* Each argument must end with its own NUL inside the used bytes; the NUL the reader adds
	 * after them does not count, so log_file_arg never walks past the section. */
	pos = h->argv;
	for (uint32_t i = 0; i < h->argc; i++) {
		const char *nul = pos < used ? memchr(strings + pos, '\0', used - pos) : NULL;

		if (!nul) {
			set_err(err, errlen, name, "argv[%u] runs off the end of the string section", i);
			return -EINVAL;
		}
		pos = (uint32_t)(nul - strings) + 1;
	}
	return 0;
}

int log_file_parse(const void *buf, size_t size, const char *name, struct log_file *out, char *err,
		   size_t errlen)
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

	copy_shared(&h, p, sizeof h);
	/* The copy is what gets checked; the fields checked above are re-checked on it because the
	 * buffer may have changed since. */
	if (memcmp(h.magic, LOG_MAGIC, 8) != 0 || h.endian != LOG_ENDIAN_MARK || h.version != LOG_VERSION) {
		set_err(err, errlen, name, "header changed while being read");
		return -EAGAIN;
	}
	rc = check_header(&h, size, name, &strs, &recs, err, errlen);
	if (rc)
		return rc;
	if (h.clock_kind == LOG_CLOCK_TSC) {
		read_calibration(p, &h);
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
	if (h.nrecords) {
		out->records = malloc((size_t)h.nrecords * sizeof *out->records);
		slots = malloc((size_t)h.nrecords * sizeof *slots);
		if (!out->records || !slots)
			goto nomem;
	}
	for (uint32_t i = 0; i < h.nrecords; i++) {
		const unsigned char *src = p + recs->offset + (uint64_t)i * h.record_size;

		/* Flags first and then the body, so a record being inserted is either skipped or
		 * seen with the fields its writer filled before setting LOG_R_USED. */
		flags = load_u16(src + offsetof(struct log_record, flags));
		if (!(flags & LOG_R_USED) || (flags & LOG_R_DEAD))
			continue;
		copy_shared(&r, src, sizeof r);
		r.flags = (uint16_t)flags;
		slots[out->nrecords] = i;
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

	rc = check_header_strings(&h, out->strings, used, name, err, errlen);
	if (rc)
		goto fail;
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
			convert_record_times(&h, k);
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
		if (ev->count > ev->size / sizeof(struct log_event)) {
			set_err(err, errlen, name, "events section holds %llu events of %zu bytes but is %llu bytes",
				(unsigned long long)ev->count, sizeof(struct log_event),
				(unsigned long long)ev->size);
			rc = -EINVAL;
			goto fail;
		}
		out->events = malloc((size_t)ev->count * sizeof(struct log_event));
		if (!out->events)
			goto nomem;
		copy_shared(out->events, p + ev->offset, (size_t)ev->count * sizeof(struct log_event));
		out->nevents = ev->count;
		for (uint64_t j = 0; j < out->nevents; j++) {
			const struct log_event *e = &out->events[j];
			if (e->layer < 1 || e->layer > LOG_LAYER_MAX || e->op >= LOG_NOPS) {
				set_err(err, errlen, name, "event %llu: layer %u or op %u out of range",
					(unsigned long long)j, e->layer, e->op);
				rc = -EINVAL;
				goto fail;
			}
		}
	}
	out->live = (h.flags & LOG_F_LIVE) && !(h.flags & LOG_F_FINISHED);
	h.clock_kind = LOG_CLOCK_NS;
	out->hdr = h;
	free(slots);
	return 0;

nomem:
	set_err(err, errlen, name, "out of memory");
	rc = -ENOMEM;
fail:
	free(slots);
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

void log_file_free(struct log_file *lf)
{
	if (!lf)
		return;
	free(lf->path);
	free(lf->strings);
	free(lf->records);
	free(lf->events);
	memset(lf, 0, sizeof *lf);
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
