/* SPDX-License-Identifier: MIT */
/*
 * The final-log writer (see writer.h). Layout of what it writes: the 4 KiB header, the used
 * records, then the used string bytes, each compressed with zstd when it can be loaded (the
 * section flag LOG_SEC_F_ZSTD says so; readers read both forms). Records are copied before the
 * string count is read: a record is published only after its path is in the string section, so
 * every record copied finds its path inside the strings written after it, even while other
 * threads still run.
 */
#include "log/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log/zstd.h"

int log_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static const struct log_section *find_section(const struct log_header *h, uint32_t kind)
{
	for (uint32_t i = 0; i < h->nsections && i < LOG_MAX_SECTIONS; i++)
		if (h->sections[i].kind == kind)
			return &h->sections[i];
	return NULL;
}


/* Copy n bytes from the start of fd into out. */
static int copy_fd(int out, int fd, uint64_t n)
{
	char buf[65536];
	uint64_t off = 0;
	while (off < n) {
		size_t want = n - off < sizeof buf ? (size_t)(n - off) : sizeof buf;
		ssize_t r = pread(fd, buf, want, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		int w = log_write_all(out, buf, (size_t)r);
		if (w < 0)
			return w;
		off += (uint64_t)r;
	}
	return 0;
}

static void *map_buf(size_t n)
{
	void *m = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/*
 * The TRACE section of a live file, packed: each claimed block's 128-byte header (its `size`
 * set to `used`) and the payload in use, back to back, then compressed with zstd when it can
 * be loaded. Buffers are mapped, not malloc'ed: this runs on the capture library's exit path.
 * *out is left zeroed when the source has no trace. 0 or -errno.
 */
static int write_trace(int fd, const void *map, size_t size, const struct log_header *h, uint64_t at, int zok,
		       struct log_section *out)
{
	const struct log_header *live = map;
	const struct log_section *st = find_section(h, LOG_SEC_TRACE);
	memset(out, 0, sizeof *out);
	if (!st || st->offset > size || st->size > size - st->offset)
		return 0;
	const unsigned char *base = (const unsigned char *)map + st->offset;
	if (st->flags & LOG_SEC_F_PACKED) { /* already final: copied as it is */
		int r = log_write_all(fd, base, st->size);
		if (r == 0)
			*out = (struct log_section){LOG_SEC_TRACE, st->flags, at, st->size, st->count};
		return r;
	}
	uint32_t bs = h->trace_block_size;
	if (bs <= sizeof(struct log_trace_block))
		return 0;
	uint64_t n = __atomic_load_n(&live->trace_blocks, __ATOMIC_ACQUIRE);
	if (n > st->count)
		n = st->count;
	if (n > st->size / bs)
		n = st->size / bs;
	uint64_t total = 0, nb = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct log_trace_block *b = (const void *)(base + i * bs);
		uint32_t used = __atomic_load_n(&b->used, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != LOG_TRACE_MAGIC)
			continue;
		if (used > bs - sizeof *b)
			used = bs - (uint32_t)sizeof *b;
		total += sizeof *b + used;
	}
	unsigned char *buf = map_buf(total);
	if (!buf)
		return -ENOMEM;
	uint64_t pos = 0;
	for (uint64_t i = 0; i < n && pos < total; i++) {
		const struct log_trace_block *b = (const void *)(base + i * bs);
		if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != LOG_TRACE_MAGIC)
			continue;
		struct log_trace_block hb;
		memcpy(&hb, b, sizeof hb);
		hb.used = __atomic_load_n(&b->used, __ATOMIC_ACQUIRE);
		if (hb.used > bs - sizeof hb)
			hb.used = bs - (uint32_t)sizeof hb;
		if (pos + sizeof hb + hb.used > total) /* a block grew while we copied: keep the sizes */
			break;
		hb.size = hb.used;
		memcpy(buf + pos, &hb, sizeof hb);
		memcpy(buf + pos + sizeof hb, b + 1, hb.used);
		pos += sizeof hb + hb.used;
		nb++;
	}
	uint32_t flags = LOG_SEC_F_PACKED;
	const unsigned char *src = buf;
	uint64_t len = pos;
	unsigned char *z = NULL;
	size_t zcap = 0;
	if (pos && zok && (zcap = log_zstd_bound(pos)) && (z = map_buf(zcap))) {
		size_t c = log_zstd_compress(z, zcap, buf, pos);
		if (c) {
			src = z;
			len = c;
			flags |= LOG_SEC_F_ZSTD;
		}
	}
	int r = log_write_all(fd, src, len);
	if (r == 0)
		*out = (struct log_section){LOG_SEC_TRACE, flags, at, len, nb};
	if (z)
		munmap(z, zcap);
	munmap(buf, total ? total : 1);
	return r;
}

/* n bytes at src, as zstd frames when z and compression works, else as they are; *len gets the
 * bytes written and *flags LOG_SEC_F_ZSTD when compressed. */
static int write_section(int fd, const void *src, uint64_t n, int z, uint64_t *len, uint32_t *flags)
{
	*flags = 0;
	*len = n;
	size_t cap = z && n ? log_zstd_bound(n) : 0;
	unsigned char *buf = cap ? map_buf(cap) : NULL;
	size_t c = buf ? log_zstd_compress(buf, cap, src, n) : 0;
	int r;
	if (c) {
		*len = c;
		*flags = LOG_SEC_F_ZSTD;
		r = log_write_all(fd, buf, c);
	} else {
		r = log_write_all(fd, src, n);
	}
	if (buf)
		munmap(buf, cap);
	return r;
}

/* may_load: zstd may be loaded here (dlopen: not async-signal-safe); else it is used only when
 * some earlier call loaded it. */
static int write_final(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
		       uint32_t add_flags, int events_fd, uint64_t nevents, int may_load, char *err, size_t errlen)
{
	const struct log_header *live = map;
	struct log_header h;
	char tmp[4200];
	int fd = -1, r = -EIO;

	if (size < LOG_HEADER_SIZE) {
		snprintf(err, errlen, "%s: source log is truncated", dst);
		return -EINVAL;
	}
	memcpy(&h, hdr_patch ? hdr_patch : live, sizeof h);
	const struct log_section *srec = find_section(&h, LOG_SEC_RECORDS);
	const struct log_section *sstr = find_section(&h, LOG_SEC_STRINGS);
	if (!srec || !sstr || srec->offset > size || sstr->offset > size || srec->size > size - srec->offset ||
	    sstr->size > size - sstr->offset) {
		snprintf(err, errlen, "%s: source log has no valid record or string section", dst);
		return -EINVAL;
	}
	uint64_t rec_off = srec->offset, str_off = sstr->offset, str_cap = sstr->size;
	uint32_t n = __atomic_load_n(&live->nrecords, __ATOMIC_ACQUIRE);
	if (n > h.max_records)
		n = h.max_records;
	if ((uint64_t)n * sizeof(struct log_record) > srec->size)
		n = (uint32_t)(srec->size / sizeof(struct log_record));

	if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", dst, (int)getpid()) >= (int)sizeof tmp) {
		snprintf(err, errlen, "%s: path too long", dst);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(-r));
		return r;
	}
	/* Records are mostly zeros (a 1920-byte record of a file read once holds a dozen non-zero
	 * words): compressed, a process's log shrinks from ~20 KiB to ~5 KiB, most of it the
	 * header, which stays plain so that every reader finds the section table at once. */
	int z = may_load ? log_zstd_load(NULL, 0) == 0 : log_zstd_loaded();
	uint64_t recs_bytes = (uint64_t)n * sizeof(struct log_record), recs_len, str_len;
	uint32_t recs_flags = 0, str_flags = 0;
	if (lseek(fd, LOG_HEADER_SIZE, SEEK_SET) < 0 ||
	    (r = write_section(fd, (const char *)map + rec_off, recs_bytes, z, &recs_len, &recs_flags)) < 0)
		goto err;
	/* Sections stay 8-byte aligned (the events are read as 8-byte words): a compressed one is
	 * followed by zeros up to the next multiple of 8. */
	static const char zeros[8];
	uint32_t recs_pad = (8 - recs_len % 8) % 8;
	if (recs_pad && (r = log_write_all(fd, zeros, recs_pad)) < 0)
		goto err;
	uint32_t used = __atomic_load_n(&live->string_used, __ATOMIC_ACQUIRE);
	if (used > str_cap)
		used = (uint32_t)str_cap;
	if ((r = write_section(fd, (const char *)map + str_off, used, z, &str_len, &str_flags)) < 0)
		goto err;
	uint32_t pad = (8 - str_len % 8) % 8;
	if (pad && (r = log_write_all(fd, zeros, pad)) < 0)
		goto err;

	h.flags = (h.flags | add_flags) & ~(uint32_t)LOG_F_LIVE;
	h.nrecords = n;
	h.max_records = n;
	h.string_used = used;
	memset(h.sections, 0, sizeof h.sections);
	h.sections[0] = (struct log_section){LOG_SEC_RECORDS, recs_flags, LOG_HEADER_SIZE, recs_len, n};
	h.sections[1] = (struct log_section){LOG_SEC_STRINGS, str_flags, LOG_HEADER_SIZE + recs_len + recs_pad,
					     str_flags ? str_len : used + pad, used};
	h.nsections = 2;
	h.totals_slot_size = 0; /* the TOTALS section is the live file's only (totals_claimed stays) */
	uint64_t end = LOG_HEADER_SIZE + recs_len + recs_pad + str_len + pad;
	if (events_fd >= 0) {
		uint64_t ev_bytes = nevents * sizeof(struct log_event);
		if ((r = copy_fd(fd, events_fd, ev_bytes)) < 0)
			goto err;
		h.sections[2] = (struct log_section){LOG_SEC_EVENTS, 0, end, ev_bytes, nevents};
		h.nsections = 3;
	}
	uint64_t at = end + h.sections[2].size;
	struct log_section trace;
	if ((r = write_trace(fd, map, size, hdr_patch ? hdr_patch : live, at, z, &trace)) < 0)
		goto err;
	if (trace.kind) {
		h.sections[h.nsections++] = trace;
		h.trace_blocks = trace.count;
	}
	if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
		r = errno ? -errno : -EIO;
		goto err;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto err;
	}
	fd = -1;
	if (rename(tmp, dst) < 0) {
		r = -errno;
		goto err;
	}
	return 0;
err:
	snprintf(err, errlen, "%s: cannot write: %s", dst, strerror(-r));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

int log_write_final(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
		    uint32_t add_flags, char *err, size_t errlen)
{
	return write_final(map, size, hdr_patch, dst, add_flags, -1, 0, 1, err, errlen);
}

int log_write_final_events(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
			   uint32_t add_flags, int events_fd, uint64_t nevents, char *err, size_t errlen)
{
	return write_final(map, size, hdr_patch, dst, add_flags, events_fd, nevents, 1, err, errlen);
}

int log_write_final_signal_safe(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
				uint32_t add_flags, char *err, size_t errlen)
{
	return write_final(map, size, hdr_patch, dst, add_flags, -1, 0, 0, err, errlen);
}
