/* SPDX-License-Identifier: MIT */
/*
 * Job archives (see archive.h): the reader, which checks the 64-byte header and the whole index
 * when an archive is opened and a member's checksums when it is read, and the writer `iostrata
 * merge` uses. Members are final logs kept byte for byte (each compressed as a whole: a log's
 * 4 KiB header is mostly zeros), so a member read back is exactly the file that was merged and
 * the one log reader parses it. It does not know about job directories, live logs or removal.
 */
#include "log/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/writer.h"
#include "log/zstd.h"

#define ARC_HDR_SIZE ((uint32_t)sizeof(struct log_archive_header))
#define ARC_ENTRY_SIZE ((uint32_t)sizeof(struct log_archive_entry))
#define ARC_RAW_MAX ((uint64_t)1 << 40) /* a member log larger than 1 TiB is a corrupt entry */

/* ---------- CRC-32C ---------- */

static uint32_t crc_table[256];
static int crc_hw;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
#if defined(__x86_64__)
	crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
/* The SSE4.2 crc32 instruction computes exactly this polynomial, 8 bytes per instruction: a
 * 10,000-member archive's checksums cost milliseconds instead of a tenth of a second. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw_run(uint32_t c, const unsigned char *p, size_t n)
{
	for (; n && ((uintptr_t)p & 7); n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = (uint32_t)__builtin_ia32_crc32di(c, v);
	}
	for (; n; n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t log_crc32c(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
	if (crc_hw)
		return ~crc_hw_run(c, p, n);
#endif
	for (; n; n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

/* ---------- errors ---------- */

static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "NAME: message" on one line, whatever bytes NAME holds. */
static void set_err(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	int n = snprintf(err, errlen, "%s: ", name ? name : "<memory>");
	if (n < 0)
		n = 0;
	if ((size_t)n < errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* ---------- reading ---------- */

struct log_archive {
	char *path;
	int fd;                   /* -1: in memory */
	const unsigned char *mem;
	uint64_t size;            /* of the file when opened */
	struct log_archive_header h;
	unsigned char *index;     /* the index: entries, then names */
	const struct log_archive_entry *e;
	const char *names;
	uint64_t count;
};

/* n bytes at off, all of them: 0, or -EIO when the file ends first (it shrank), or -errno. */
static int read_at(const struct log_archive *a, void *dst, size_t n, uint64_t off)
{
	if (a->fd < 0) {
		if (off > a->size || n > a->size - off)
			return -EIO;
		memcpy(dst, a->mem + off, n);
		return 0;
	}
	char *p = dst;
	while (n) {
		ssize_t r = pread(a->fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		p += r;
		off += (uint64_t)r;
		n -= (size_t)r;
	}
	return 0;
}

static int name_ok(const char *s, uint32_t len)
{
	if (len == 0 || len > LOG_ARCHIVE_NAME_MAX || memchr(s, '/', len) || memchr(s, '\0', len))
		return 0;
	return !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

/* Everything open needs to trust: header, index checksum, every entry and name. */
static int check_archive(struct log_archive *a, char *err, size_t errlen)
{
	struct log_archive_header *h = &a->h;
	const char *nm = a->path;
	uint64_t size = a->size;
	int rc;

	if (size < 8 || memcmp(h->magic, LOG_ARCHIVE_MAGIC, 8) != 0) {
		set_err(err, errlen, nm, "not an iostrata job archive (bad magic)");
		return -EINVAL;
	}
	if (size < ARC_HDR_SIZE) {
		set_err(err, errlen, nm, "truncated: file has %llu bytes, less than the %u-byte archive header",
			(unsigned long long)size, ARC_HDR_SIZE);
		return -EINVAL;
	}
	if (log_crc32c(0, h, offsetof(struct log_archive_header, header_crc)) != h->header_crc) {
		set_err(err, errlen, nm, "archive header checksum mismatch (damaged header)");
		return -EINVAL;
	}
	if (h->endian != LOG_ENDIAN_MARK) {
		set_err(err, errlen, nm, "archive written with another byte order (not supported)");
		return -EINVAL;
	}
	if (h->version != LOG_ARCHIVE_VERSION) {
		set_err(err, errlen, nm, "unsupported archive version %u (this reader reads %u)", h->version,
			LOG_ARCHIVE_VERSION);
		return -ENOTSUP;
	}
	if (h->header_size != ARC_HDR_SIZE || h->entry_size != ARC_ENTRY_SIZE) {
		set_err(err, errlen, nm, "archive header size %u / entry size %u, expected %u / %u", h->header_size,
			h->entry_size, ARC_HDR_SIZE, ARC_ENTRY_SIZE);
		return -EINVAL;
	}
	if (h->file_size != size) {
		if (size < h->file_size)
			set_err(err, errlen, nm, "truncated: header says the archive is %llu bytes but file has %llu",
				(unsigned long long)h->file_size, (unsigned long long)size);
		else
			set_err(err, errlen, nm, "%llu bytes after the archive's end (header says %llu bytes)",
				(unsigned long long)(size - h->file_size), (unsigned long long)h->file_size);
		return -EINVAL;
	}
	if (h->index_offset < ARC_HDR_SIZE || h->index_offset > size || h->index_size != size - h->index_offset ||
	    h->count > h->index_size / ARC_ENTRY_SIZE) {
		set_err(err, errlen, nm, "index of %llu members at %llu, %llu bytes, does not fit the %llu-byte file",
			(unsigned long long)h->count, (unsigned long long)h->index_offset,
			(unsigned long long)h->index_size, (unsigned long long)size);
		return -EINVAL;
	}
	if (h->index_size > SIZE_MAX || !(a->index = malloc(h->index_size ? (size_t)h->index_size : 1))) {
		set_err(err, errlen, nm, "out of memory for a %llu-byte index", (unsigned long long)h->index_size);
		return -ENOMEM;
	}
	if ((rc = read_at(a, a->index, (size_t)h->index_size, h->index_offset)) < 0) {
		set_err(err, errlen, nm, "cannot read the index: %s", rc == -EIO ? "file cut short" : strerror(-rc));
		return rc;
	}
	if (log_crc32c(0, a->index, (size_t)h->index_size) != h->index_crc) {
		set_err(err, errlen, nm, "index checksum mismatch (damaged index)");
		return -EINVAL;
	}
	a->count = h->count;
	a->e = (const struct log_archive_entry *)(const void *)a->index;
	a->names = (const char *)a->index + h->count * ARC_ENTRY_SIZE;
	uint64_t names_size = h->index_size - h->count * ARC_ENTRY_SIZE, prev_end = ARC_HDR_SIZE;
	const char *prev_name = NULL;
	for (uint64_t i = 0; i < a->count; i++) {
		const struct log_archive_entry *e = &a->e[i];
		if (e->size == 0 || e->offset < prev_end || e->offset > h->index_offset ||
		    e->size > h->index_offset - e->offset) {
			set_err(err, errlen, nm, "member %llu: %llu bytes at %llu outside the members' area [%llu, %llu) or overlapping",
				(unsigned long long)i, (unsigned long long)e->size, (unsigned long long)e->offset,
				(unsigned long long)prev_end, (unsigned long long)h->index_offset);
			return -EINVAL;
		}
		prev_end = e->offset + e->size;
		if ((e->flags & ~(uint32_t)LOG_AM_ZSTD) || e->reserved0 || e->reserved1 || e->raw_size == 0 ||
		    e->raw_size > ARC_RAW_MAX || e->raw_size > SIZE_MAX ||
		    (!(e->flags & LOG_AM_ZSTD) && e->raw_size != e->size)) {
			set_err(err, errlen, nm, "member %llu: flags 0x%x, %llu bytes stored for %llu: not a valid entry",
				(unsigned long long)i, e->flags, (unsigned long long)e->size,
				(unsigned long long)e->raw_size);
			return -EINVAL;
		}
		if (e->name_off >= names_size || e->name_len >= names_size - e->name_off ||
		    a->names[e->name_off + e->name_len] != '\0' || !name_ok(a->names + e->name_off, e->name_len)) {
			set_err(err, errlen, nm, "member %llu: name at %u (%u bytes) is not a file name inside the name table",
				(unsigned long long)i, e->name_off, e->name_len);
			return -EINVAL;
		}
		const char *name = a->names + e->name_off;
		if (prev_name && strcmp(prev_name, name) >= 0) {
			set_err(err, errlen, nm, "member %llu: names out of order or repeated", (unsigned long long)i);
			return -EINVAL;
		}
		prev_name = name;
	}
	return 0;
}

static int archive_open(int fd, const void *mem, uint64_t size, const char *path, struct log_archive **out,
			char *err, size_t errlen)
{
	struct log_archive *a = calloc(1, sizeof *a);
	int rc = -ENOMEM;

	*out = NULL;
	if (!a || !(a->path = strdup(path))) {
		set_err(err, errlen, path, "out of memory");
		goto fail;
	}
	a->fd = fd;
	a->mem = mem;
	a->size = size;
	size_t hn = size < ARC_HDR_SIZE ? (size_t)size : ARC_HDR_SIZE;
	if ((rc = read_at(a, &a->h, hn, 0)) < 0) {
		set_err(err, errlen, path, "cannot read: %s", strerror(-rc));
		goto fail;
	}
	if ((rc = check_archive(a, err, errlen)) < 0)
		goto fail;
	*out = a;
	return 0;
fail:
	if (a) {
		a->fd = -1; /* the caller closes what it opened */
		log_archive_close(a);
	}
	return rc;
}

int log_archive_open(const char *path, struct log_archive **out, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		set_err(err, errlen, path, "%s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		set_err(err, errlen, path, "%s", S_ISDIR(st.st_mode) ? "is a directory, not a job archive" : "not a regular file");
		close(fd);
		return rc;
	}
	rc = archive_open(fd, NULL, (uint64_t)st.st_size, path, out, err, errlen);
	if (rc < 0)
		close(fd);
	return rc;
}

int log_archive_open_mem(const void *buf, size_t size, const char *name, struct log_archive **out, char *err,
			 size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!out || (!buf && size))
		return -EINVAL;
	return archive_open(-1, buf, size, name ? name : "<memory>", out, err, errlen);
}

int log_archive_is(const char *path)
{
	char m[8];
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -1;
	if (fd < 0)
		return 0;
	struct stat st;
	int is = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, m, 8, 0) == 8 &&
		 !memcmp(m, LOG_ARCHIVE_MAGIC, 8);
	close(fd);
	return is;
}

size_t log_archive_count(const struct log_archive *a)
{
	return a ? (size_t)a->count : 0;
}

const char *log_archive_name(const struct log_archive *a, size_t i)
{
	return a && i < a->count ? a->names + a->e[i].name_off : NULL;
}

const struct log_archive_entry *log_archive_entry(const struct log_archive *a, size_t i)
{
	return a && i < a->count ? &a->e[i] : NULL;
}

int log_archive_member(struct log_archive *a, size_t i, void **buf, size_t *len, char *err, size_t errlen)
{
	char who[4096 + LOG_ARCHIVE_NAME_MAX + 2];
	unsigned char *stored = NULL, *raw = NULL;
	char why[256];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	*buf = NULL;
	*len = 0;
	if (!a || i >= a->count) {
		set_err(err, errlen, a ? a->path : NULL, "no member %zu", i);
		return -EINVAL;
	}
	const struct log_archive_entry *e = &a->e[i];
	snprintf(who, sizeof who, "%s:%s", a->path, a->names + e->name_off);
	if (!(stored = malloc((size_t)e->size))) {
		set_err(err, errlen, who, "out of memory for %llu bytes", (unsigned long long)e->size);
		return -ENOMEM;
	}
	if ((rc = read_at(a, stored, (size_t)e->size, e->offset)) < 0) {
		set_err(err, errlen, who, "cannot read: %s", rc == -EIO ? "archive cut short" : strerror(-rc));
		goto fail;
	}
	rc = -EINVAL;
	if (log_crc32c(0, stored, (size_t)e->size) != e->crc) {
		set_err(err, errlen, who, "checksum mismatch (damaged member)");
		goto fail;
	}
	if (e->flags & LOG_AM_ZSTD) {
		if (!(raw = malloc((size_t)e->raw_size))) {
			set_err(err, errlen, who, "out of memory for %llu bytes", (unsigned long long)e->raw_size);
			rc = -ENOMEM;
			goto fail;
		}
		if (log_zstd_decompress_exact(stored, (size_t)e->size, raw, (size_t)e->raw_size, why, sizeof why) < 0) {
			set_err(err, errlen, who, "%s", why);
			rc = log_zstd_loaded() ? -EINVAL : -ENOTSUP;
			goto fail;
		}
		free(stored);
		stored = NULL;
	} else {
		raw = stored;
		stored = NULL;
	}
	if (log_crc32c(0, raw, (size_t)e->raw_size) != e->raw_crc) {
		set_err(err, errlen, who, "checksum of the decompressed log mismatch (damaged member)");
		goto fail;
	}
	*buf = raw;
	*len = (size_t)e->raw_size;
	return 0;
fail:
	free(stored);
	free(raw);
	return rc;
}

int log_archive_read(struct log_archive *a, size_t i, struct log_file *out, char *err, size_t errlen)
{
	char who[4096 + LOG_ARCHIVE_NAME_MAX + 2];
	void *buf;
	size_t len;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	int rc = log_archive_member(a, i, &buf, &len, err, errlen);
	if (rc < 0)
		return rc;
	snprintf(who, sizeof who, "%s:%s", a->path, a->names + a->e[i].name_off);
	rc = log_file_parse(buf, len, who, out, err, errlen);
	free(buf);
	return rc;
}

void log_archive_close(struct log_archive *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	free(a->index);
	free(a->path);
	free(a);
}

/* ---------- writing ---------- */

struct log_archive_writer {
	char *path;
	int fd;
	uint64_t pos;
	struct log_archive_entry *e;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
};

int log_archive_create(const char *path, struct log_archive_writer **out, char *err, size_t errlen)
{
	static const struct log_archive_header zero;
	struct log_archive_writer *w = calloc(1, sizeof *w);
	int rc;

	*out = NULL;
	if (!w || !(w->path = strdup(path))) {
		free(w);
		set_err(err, errlen, path, "out of memory");
		return -ENOMEM;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		rc = -errno;
		set_err(err, errlen, path, "cannot create: %s", strerror(-rc));
		free(w->path);
		free(w);
		return rc;
	}
	/* the real header is written last: until then the file has no valid magic */
	if ((rc = log_write_all(w->fd, &zero, sizeof zero)) < 0) {
		set_err(err, errlen, path, "cannot write: %s", strerror(-rc));
		log_archive_abort(w);
		return rc;
	}
	w->pos = sizeof zero;
	*out = w;
	return 0;
}

int log_archive_add(struct log_archive_writer *w, const char *name, const void *log, size_t len, uint64_t mtime_ns,
		    char *err, size_t errlen)
{
	size_t nl = name ? strlen(name) : 0;
	unsigned char *z = NULL;
	int rc = -EINVAL;

	if (!name_ok(name ? name : "", (uint32_t)(nl > LOG_ARCHIVE_NAME_MAX ? LOG_ARCHIVE_NAME_MAX + 1 : nl)) ||
	    !len || (uint64_t)len > ARC_RAW_MAX) {
		set_err(err, errlen, w->path, "member '%s': not a file name of 1 to %u bytes, or an empty log",
			name ? name : "", LOG_ARCHIVE_NAME_MAX);
		return -EINVAL;
	}
	if (w->n && strcmp(w->names + w->e[w->n - 1].name_off, name) >= 0) {
		set_err(err, errlen, w->path, "member '%s': names must be added in strcmp order, each once", name);
		return -EINVAL;
	}
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 256;
		struct log_archive_entry *ne = realloc(w->e, nc * sizeof *ne);
		if (!ne)
			goto nomem;
		w->e = ne;
		w->cap = nc;
	}
	if (w->nlen + nl + 1 > w->ncap) {
		size_t nc = w->ncap ? w->ncap * 2 : 16384;
		while (nc < w->nlen + nl + 1)
			nc *= 2;
		char *nn = realloc(w->names, nc);
		if (!nn)
			goto nomem;
		w->names = nn;
		w->ncap = nc;
	}
	if (w->nlen + nl + 1 > UINT32_MAX) {
		set_err(err, errlen, w->path, "member '%s': the name table is full", name);
		return -E2BIG;
	}
	struct log_archive_entry e = {
		.offset = w->pos,
		.raw_size = len,
		.raw_crc = log_crc32c(0, log, len),
		.name_off = (uint32_t)w->nlen,
		.name_len = (uint32_t)nl,
		.mtime_ns = mtime_ns,
	};
	/* A log whose sections are compressed already still has a 4 KiB header of mostly zeros: the
	 * whole file is compressed again. Stored as is when that does not help (or zstd is missing). */
	const void *src = log;
	size_t slen = len, zcap = 0;
	if (log_zstd_load(NULL, 0) == 0 && (zcap = log_zstd_bound(len)) && (z = malloc(zcap))) {
		size_t c = log_zstd_compress(z, zcap, log, len);
		if (c && c < len) {
			src = z;
			slen = c;
			e.flags = LOG_AM_ZSTD;
		}
	}
	e.size = slen;
	e.crc = log_crc32c(0, src, slen);
	if ((rc = log_write_all(w->fd, src, slen)) < 0) {
		set_err(err, errlen, w->path, "cannot write member '%s': %s", name, strerror(-rc));
		free(z);
		return rc;
	}
	free(z);
	w->pos += slen;
	memcpy(w->names + w->nlen, name, nl + 1);
	w->nlen += nl + 1;
	w->e[w->n++] = e;
	return 0;
nomem:
	set_err(err, errlen, w->path, "out of memory");
	return -ENOMEM;
}

int log_archive_finish(struct log_archive_writer *w, char *err, size_t errlen)
{
	size_t esz = w->n * sizeof *w->e;
	uint32_t crc = log_crc32c(0, w->e, esz);
	crc = log_crc32c(crc, w->names, w->nlen);
	struct log_archive_header h = {
		.version = LOG_ARCHIVE_VERSION,
		.header_size = ARC_HDR_SIZE,
		.endian = LOG_ENDIAN_MARK,
		.entry_size = ARC_ENTRY_SIZE,
		.count = w->n,
		.index_offset = w->pos,
		.index_size = esz + w->nlen,
		.file_size = w->pos + esz + w->nlen,
		.index_crc = crc,
	};
	memcpy(h.magic, LOG_ARCHIVE_MAGIC, 8);
	h.header_crc = log_crc32c(0, &h, offsetof(struct log_archive_header, header_crc));
	int rc;
	if ((esz && (rc = log_write_all(w->fd, w->e, esz)) < 0) || (w->nlen && (rc = log_write_all(w->fd, w->names, w->nlen)) < 0))
		goto fail;
	if (pwrite(w->fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
		rc = errno ? -errno : -EIO;
		goto fail;
	}
	/* on disk before anyone renames it into place or removes what it holds */
	if (fsync(w->fd) < 0 || close(w->fd) < 0) {
		rc = -errno;
		w->fd = -1;
		goto fail;
	}
	w->fd = -1;
	free(w->e);
	free(w->names);
	free(w->path);
	free(w);
	return 0;
fail:
	set_err(err, errlen, w->path, "cannot write the index: %s", strerror(-rc));
	log_archive_abort(w);
	return rc;
}

void log_archive_abort(struct log_archive_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	unlink(w->path);
	free(w->e);
	free(w->names);
	free(w->path);
	free(w);
}
