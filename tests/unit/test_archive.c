/* SPDX-License-Identifier: MIT */
/*
 * Job archives (src/log/archive.c): members read back byte for byte and parsed as the logs they
 * were; the writer's refusals; and the reader against damage, fuzz-style: every truncation, every
 * single-bit flip of a small archive, random garbage behind a valid magic, and hand-made archives
 * whose checksums are right but whose fields are not. Damage must give one line naming the input
 * and never a crash (run it under ASan: make test-san), and no single-bit flip may go unnoticed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "iostrata/reader.h"
#include "log/archive.h"
#include "log/writer.h"

static char tmpdir[64];

/* ---- logs to put in archives ---- */

struct blog {
	struct log_header h;
	char strings[512];
	uint32_t used;
	struct log_record recs[3];
};

static uint32_t bstr(struct blog *b, const char *s)
{
	uint32_t off = b->used;
	memcpy(b->strings + off, s, strlen(s) + 1);
	b->used += (uint32_t)strlen(s) + 1;
	return off;
}

/* The bytes of a plain log of process pid reading `path` n times 4 KiB, laid out as a final log. */
static unsigned char *make_log(int pid, const char *path, uint64_t n, size_t *size)
{
	struct blog b;
	memset(&b, 0, sizeof b);
	b.used = 1;
	memcpy(b.h.magic, LOG_MAGIC, 8);
	b.h.version = LOG_VERSION;
	b.h.header_size = LOG_HEADER_SIZE;
	b.h.endian = LOG_ENDIAN_MARK;
	b.h.flags = LOG_F_FINISHED;
	b.h.record_size = sizeof(struct log_record);
	b.h.ncounters = LOG_NCOUNTERS;
	b.h.pid = pid;
	b.h.ppid = 1;
	b.h.rank = -1;
	b.h.nprocs = -1;
	b.h.host = bstr(&b, "node1");
	b.h.exe = bstr(&b, "/usr/bin/cat");
	b.h.argv = bstr(&b, "cat");
	bstr(&b, path);
	b.h.argc = 2;
	b.h.start_ns = 1000 + (uint64_t)pid;
	b.h.end_ns = 2000000 + (uint64_t)pid;
	b.h.exit_status = 0;
	for (int i = 0; i < 2; i++) {
		struct log_record *r = &b.recs[i];
		r->layer = LOG_LAYER_POSIX;
		r->flags = LOG_R_USED;
		r->rank = -1;
		r->path = bstr(&b, i ? "<STDOUT>" : path);
		r->id = log_record_id(LOG_LAYER_POSIX, b.strings + r->path);
	}
	b.recs[0].counters[LOG_C_OPENS] = 1;
	b.recs[0].counters[LOG_C_READS] = n;
	b.recs[0].counters[LOG_C_BYTES_READ] = 4096 * n;
	b.recs[0].read_hist[log_hist_bucket(4096)] = n;
	b.recs[1].counters[LOG_C_WRITES] = n;
	b.recs[1].counters[LOG_C_BYTES_WRITTEN] = 4096 * n;
	uint64_t soff = LOG_HEADER_SIZE, ssize = (b.used + 7) & ~7u, roff = soff + ssize;
	*size = (size_t)(roff + 2 * sizeof(struct log_record));
	unsigned char *buf = calloc(1, *size);
	b.h.nsections = 2;
	b.h.sections[0] = (struct log_section){LOG_SEC_STRINGS, 0, soff, ssize, b.used};
	b.h.sections[1] = (struct log_section){LOG_SEC_RECORDS, 0, roff, 2 * sizeof(struct log_record), 2};
	b.h.nrecords = b.h.max_records = 2;
	b.h.string_used = b.used;
	memcpy(buf, &b.h, sizeof b.h);
	memcpy(buf + soff, b.strings, b.used);
	memcpy(buf + roff, b.recs, 2 * sizeof(struct log_record));
	return buf;
}

/* The same log as the writer writes it (records and strings zstd-compressed). */
static unsigned char *make_final_log(int pid, const char *path, uint64_t n, size_t *size)
{
	size_t rsize;
	unsigned char *raw = make_log(pid, path, n, &rsize);
	char dst[128], err[512];
	snprintf(dst, sizeof dst, "%s/w-%d.iost", tmpdir, pid);
	if (log_write_final(raw, rsize, NULL, dst, 0, err, sizeof err) < 0) {
		printf("not ok - make a final log: %s\n", err);
		exit(1);
	}
	free(raw);
	int fd = open(dst, O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	*size = (size_t)st.st_size;
	unsigned char *buf = malloc(*size);
	if (read(fd, buf, *size) != (ssize_t)*size)
		abort();
	close(fd);
	unlink(dst);
	return buf;
}

static unsigned char *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	*size = (size_t)st.st_size;
	unsigned char *buf = malloc(*size ? *size : 1);
	if (read(fd, buf, *size) != (ssize_t)*size)
		abort();
	close(fd);
	return buf;
}

static void write_file(const char *path, const void *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
		abort();
	close(fd);
}

static int one_line(const char *err, const char *name)
{
	return err[0] && !strchr(err, '\n') && !strncmp(err, name, strlen(name)) && err[strlen(name)] == ':';
}

/* ---- the small archive every damage test starts from ---- */

#define NMEM 3
static const char *const mem_names[NMEM] = {"a-1.iost", "b-2.iost", "c-3.iost"};
static unsigned char *mem_logs[NMEM];
static size_t mem_sizes[NMEM];

static unsigned char *build_small(size_t *size, char *path, size_t pathlen)
{
	struct log_archive_writer *w;
	char err[512];
	snprintf(path, pathlen, "%s/small.arc", tmpdir);
	unlink(path);
	int rc = log_archive_create(path, &w, err, sizeof err);
	if (rc < 0) {
		printf("not ok - create: %s\n", err);
		exit(1);
	}
	for (int i = 0; i < NMEM; i++)
		if (log_archive_add(w, mem_names[i], mem_logs[i], mem_sizes[i], 1000000000ull * (uint64_t)(i + 1), err,
				    sizeof err) < 0) {
			printf("not ok - add: %s\n", err);
			exit(1);
		}
	if (log_archive_finish(w, err, sizeof err) < 0) {
		printf("not ok - finish: %s\n", err);
		exit(1);
	}
	return read_file(path, size);
}

static void test_crc(void)
{
	check("crc32c of \"123456789\" is 0xe3069283", log_crc32c(0, "123456789", 9) == 0xe3069283u, "got %08x",
	      log_crc32c(0, "123456789", 9));
	uint32_t part = log_crc32c(0, "12345", 5);
	check("crc32c continues across calls", log_crc32c(part, "6789", 4) == 0xe3069283u, "got %08x",
	      log_crc32c(part, "6789", 4));
	unsigned char z[32] = {0};
	check("crc32c of 32 zero bytes is 0x8a9136aa", log_crc32c(0, z, 32) == 0x8a9136aau, "got %08x",
	      log_crc32c(0, z, 32));
}

static void test_roundtrip(void)
{
	char path[128], err[512];
	size_t size;
	unsigned char *buf = build_small(&size, path, sizeof path);
	struct log_archive *a;
	int rc = log_archive_open(path, &a, err, sizeof err);
	check("open the archive", rc == 0, "rc %d: %s", rc, err);
	if (rc)
		return;
	check("log_archive_is: an archive", log_archive_is(path) == 1, "no");
	check("three members", log_archive_count(a) == NMEM, "%zu", log_archive_count(a));
	int names = 1, bytes = 1, parsed = 1, mtimes = 1, compressed = 1;
	for (size_t i = 0; i < NMEM; i++) {
		names &= !strcmp(log_archive_name(a, i), mem_names[i]);
		mtimes &= log_archive_entry(a, i)->mtime_ns == 1000000000ull * (i + 1);
		compressed &= (log_archive_entry(a, i)->flags & LOG_AM_ZSTD) && log_archive_entry(a, i)->size < mem_sizes[i];
		void *m;
		size_t len;
		if (log_archive_member(a, i, &m, &len, err, sizeof err) < 0) {
			bytes = 0;
			printf("# %s\n", err);
			continue;
		}
		bytes &= len == mem_sizes[i] && !memcmp(m, mem_logs[i], len);
		free(m);
		struct log_file lf, orig;
		char want[256];
		snprintf(want, sizeof want, "%s:%s", path, mem_names[i]);
		if (log_archive_read(a, i, &lf, err, sizeof err) < 0 ||
		    log_file_parse(mem_logs[i], mem_sizes[i], "orig", &orig, err, sizeof err) < 0) {
			parsed = 0;
			continue;
		}
		parsed &= !strcmp(lf.path, want) && lf.nrecords == orig.nrecords &&
			  !memcmp(lf.records, orig.records, orig.nrecords * sizeof *orig.records) &&
			  lf.strings_size == orig.strings_size && !memcmp(lf.strings, orig.strings, orig.strings_size) &&
			  lf.hdr.pid == orig.hdr.pid && lf.records[0].counters[LOG_C_BYTES_READ] == 4096 * (i + 1) * 10;
		log_file_free(&lf);
		log_file_free(&orig);
	}
	check("names in order, as added", names, "differ");
	check("modification times kept", mtimes, "differ");
	check("members compressed, smaller than the logs", compressed, "not");
	check("members read back byte for byte", bytes, "differ");
	check("members parse as the original logs, path ARCHIVE:NAME", parsed, "differ");
	check("member out of range refused", log_archive_read(a, NMEM, &(struct log_file){0}, err, sizeof err) < 0 &&
						 log_archive_name(a, NMEM) == NULL,
	      "accepted");
	log_archive_close(a);

	/* in memory, the same */
	rc = log_archive_open_mem(buf, size, "mem", &a, err, sizeof err);
	check("open in memory", rc == 0 && log_archive_count(a) == NMEM, "rc %d: %s", rc, err);
	if (rc == 0)
		log_archive_close(a);

	char logp[128];
	snprintf(logp, sizeof logp, "%s/plain.iost", tmpdir);
	write_file(logp, mem_logs[0], mem_sizes[0]);
	check("log_archive_is: a log is not", log_archive_is(logp) == 0, "yes");
	write_file(logp, "IOS", 3);
	check("log_archive_is: 3 bytes are not", log_archive_is(logp) == 0, "yes");
	unlink(logp);
	check("log_archive_is: missing file", log_archive_is("/nonexistent/x") == 0, "yes");
	check("log_archive_is: a directory", log_archive_is(tmpdir) == 0, "yes");
	rc = log_archive_open(tmpdir, &a, err, sizeof err);
	check("open a directory: one line", rc == -EISDIR && one_line(err, tmpdir), "rc %d: %s", rc, err);
	rc = log_archive_open("/nonexistent/x", &a, err, sizeof err);
	check("open a missing file: one line", rc == -ENOENT && one_line(err, "/nonexistent/x"), "rc %d: %s", rc, err);
	rc = log_file_read(path, &(struct log_file){0}, err, sizeof err);
	check("the log reader refuses an archive (bad magic)", rc < 0 && strstr(err, "bad magic"), "rc %d: %s", rc, err);
	unlink(path);
	free(buf);
}

static void test_writer_refusals(void)
{
	char path[128], err[512];
	struct log_archive_writer *w;
	snprintf(path, sizeof path, "%s/w.arc", tmpdir);
	unlink(path);
	int created = log_archive_create(path, &w, err, sizeof err) == 0;
	check("writer: create", created, "%s", err);
	if (!created)
		return;
	check("writer: add b", log_archive_add(w, "b", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == 0, "%s", err);
	check("writer: a after b refused", log_archive_add(w, "a", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL &&
						  one_line(err, path),
	      "%s", err);
	check("writer: b again refused", log_archive_add(w, "b", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL,
	      "%s", err);
	check("writer: name with / refused", log_archive_add(w, "c/d", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL,
	      "%s", err);
	check("writer: empty name refused", log_archive_add(w, "", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL,
	      "%s", err);
	check("writer: .. refused", log_archive_add(w, "..", mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL,
	      "%s", err);
	char longname[300];
	memset(longname, 'x', 256);
	longname[256] = 0;
	check("writer: 256-byte name refused", log_archive_add(w, longname, mem_logs[0], mem_sizes[0], 0, err, sizeof err) == -EINVAL,
	      "%s", err);
	longname[255] = 0;
	check("writer: 255-byte name accepted", log_archive_add(w, longname, mem_logs[0], mem_sizes[0], 0, err, sizeof err) == 0,
	      "%s", err);
	check("writer: empty log refused", log_archive_add(w, "y", mem_logs[0], 0, 0, err, sizeof err) == -EINVAL, "%s", err);
	check("writer: finish", log_archive_finish(w, err, sizeof err) == 0, "%s", err);
	struct log_archive *a;
	int rc = log_archive_open(path, &a, err, sizeof err);
	check("writer: what was accepted reads back", rc == 0 && log_archive_count(a) == 2 &&
							   !strcmp(log_archive_name(a, 1), longname),
	      "rc %d %s", rc, err);
	if (rc == 0)
		log_archive_close(a);
	rc = log_archive_create(path, &w, err, sizeof err);
	check("writer: an existing file is never overwritten", rc == -EEXIST && one_line(err, path), "rc %d: %s", rc, err);
	unlink(path);
	check("writer: abort removes the file", log_archive_create(path, &w, err, sizeof err) == 0 &&
							(log_archive_abort(w), access(path, F_OK) < 0),
	      "still there");
	/* an archive of no members is valid */
	if (log_archive_create(path, &w, err, sizeof err) == 0 && log_archive_finish(w, err, sizeof err) == 0) {
		rc = log_archive_open(path, &a, err, sizeof err);
		check("writer: an empty archive opens with 0 members", rc == 0 && log_archive_count(a) == 0, "%s", err);
		if (rc == 0)
			log_archive_close(a);
	}
	unlink(path);
}

/* Open a damaged copy: 1 when refused with one line, 0 when it opened (and *out is set). */
static int refused(const unsigned char *buf, size_t size, struct log_archive **out, char *err, size_t errlen)
{
	int rc = log_archive_open_mem(buf, size, "dmg", out, err, errlen);
	if (rc < 0) {
		if (!one_line(err, "dmg"))
			printf("# not one line: %s\n", err);
		return one_line(err, "dmg") ? 1 : -1;
	}
	return 0;
}

static void test_truncation(void)
{
	char path[128], err[512];
	size_t size;
	unsigned char *buf = build_small(&size, path, sizeof path);
	size_t bad = 0;
	for (size_t len = 0; len < size; len++) {
		unsigned char *c = malloc(len ? len : 1);
		memcpy(c, buf, len);
		struct log_archive *a;
		if (refused(c, len, &a, err, sizeof err) != 1) {
			if (!bad++)
				printf("# truncated to %zu: %s\n", len, err);
			if (a)
				log_archive_close(a);
		}
		free(c);
	}
	check("every truncation refused with one line", bad == 0, "%zu of %zu lengths", bad, size);
	unsigned char *c = malloc(size + 1);
	memcpy(c, buf, size);
	c[size] = 0;
	struct log_archive *a;
	check("a byte appended: refused", refused(c, size + 1, &a, err, sizeof err) == 1 && strstr(err, "after the archive's end"),
	      "%s", err);
	free(c);
	/* the file cut short after it was opened: the member read fails, no crash (pread, not mmap) */
	int rc = log_archive_open(path, &a, err, sizeof err);
	if (rc == 0) {
		if (truncate(path, (off_t)(size / 2)) < 0)
			abort();
		size_t fails = 0;
		for (size_t i = 0; i < NMEM; i++) {
			struct log_file lf;
			if (log_archive_read(a, i, &lf, err, sizeof err) < 0)
				fails += !!strstr(err, "cut short") || !!strstr(err, "checksum");
			else
				log_file_free(&lf);
		}
		check("cut short while open: the members past the cut fail", fails >= 1, "%zu", fails);
		log_archive_close(a);
	}
	unlink(path);
	free(buf);
}

/* Every single-bit flip of the small archive: refused when opened, or opened with exactly the
 * member holding the flipped byte failing its read and the others read back intact. */
static void test_bit_flips(void)
{
	char path[128], err[512];
	size_t size;
	unsigned char *buf = build_small(&size, path, sizeof path);
	unlink(path);
	struct log_archive *clean;
	if (log_archive_open_mem(buf, size, "clean", &clean, err, sizeof err) < 0)
		return;
	size_t flips = 0, at_open = 0, in_member = 0, undetected = 0, bad_msg = 0;
	unsigned char *c = malloc(size);
	for (size_t pos = 0; pos < size; pos++) {
		/* which member's stored bytes hold pos, if any */
		size_t holder = SIZE_MAX;
		for (size_t i = 0; i < NMEM; i++) {
			const struct log_archive_entry *e = log_archive_entry(clean, i);
			if (pos >= e->offset && pos < e->offset + e->size)
				holder = i;
		}
		for (int bit = 0; bit < 8; bit++) {
			memcpy(c, buf, size);
			c[pos] ^= (unsigned char)(1u << bit);
			flips++;
			struct log_archive *a;
			int r = refused(c, size, &a, err, sizeof err);
			if (r == 1) {
				at_open++;
				continue;
			}
			if (r < 0) {
				bad_msg++;
				continue;
			}
			int ok = holder != SIZE_MAX;
			for (size_t i = 0; i < NMEM; i++) {
				void *m;
				size_t len;
				int rc = log_archive_member(a, i, &m, &len, err, sizeof err);
				if (i == holder)
					ok &= rc < 0 && one_line(err, "dmg");
				else
					ok &= rc == 0 && len == mem_sizes[i] && !memcmp(m, mem_logs[i], len);
				if (rc == 0)
					free(m);
			}
			in_member += ok;
			undetected += !ok;
			log_archive_close(a);
		}
	}
	free(c);
	log_archive_close(clean);
	printf("# %zu flips: %zu refused at open, %zu failed the member holding them\n", flips, at_open, in_member);
	check("every bit flip refused at open or by its member's read, the others intact", undetected == 0 && bad_msg == 0,
	      "%zu undetected, %zu messages not one line, of %zu", undetected, bad_msg, flips);
	check("bit flips: both kinds seen", at_open > 0 && in_member > 0, "%zu / %zu", at_open, in_member);
	free(buf);
}

/* xorshift: reproducible garbage */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_garbage(void)
{
	char err[512];
	size_t accepted = 0, bad_msg = 0;
	unsigned char *buf = malloc(8192);
	for (int k = 0; k < 20000; k++) {
		size_t len = (size_t)(next_rand() % 8192);
		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)next_rand();
		if (len >= 8)
			memcpy(buf, LOG_ARCHIVE_MAGIC, 8);
		struct log_archive *a;
		int r = refused(buf, len, &a, err, sizeof err);
		accepted += r == 0;
		bad_msg += r < 0;
		if (r == 0)
			log_archive_close(a);
	}
	check("20,000 random buffers behind the magic: all refused with one line", accepted == 0 && bad_msg == 0,
	      "%zu accepted, %zu bad messages", accepted, bad_msg);
	free(buf);
}

/* Hand-made damage with every checksum made right again: the field checks must catch it. */
static void reseal(unsigned char *buf)
{
	struct log_archive_header h;
	memcpy(&h, buf, sizeof h);
	if (h.index_offset + h.index_size <= h.file_size && h.index_offset >= 64)
		h.index_crc = log_crc32c(0, buf + h.index_offset, (size_t)h.index_size);
	h.header_crc = log_crc32c(0, &h, offsetof(struct log_archive_header, header_crc));
	memcpy(buf, &h, sizeof h);
}

static void test_crafted(void)
{
	char path[128], err[512];
	size_t size;
	unsigned char *buf = build_small(&size, path, sizeof path);
	unlink(path);
	unsigned char *c = malloc(size);
	struct log_archive_header h0;
	memcpy(&h0, buf, sizeof h0);
	/* edits go through aligned copies: the index need not be 8-byte aligned in the file */
	struct log_archive_header hh;
	struct log_archive_entry ee[NMEM], *e;
#define ENTRY(i) (&ee[i])
#define HDR (&hh)
	struct {
		const char *name, *want;
		int member; /* 1: open succeeds, reading member 1 must fail with want */
	} cases[] = {
		{"version 2", "unsupported archive version 2", 0},
		{"entry size 32", "entry size 32", 0},
		{"other byte order", "another byte order", 0},
		{"index offset inside the header", "does not fit", 0},
		{"count larger than the index holds", "does not fit", 0},
		{"file size smaller than the file", "after the archive's end", 0},
		{"members overlap", "overlapping", 0},
		{"member inside the header", "outside the members' area", 0},
		{"member runs into the index", "outside the members' area", 0},
		{"member of size 0", "outside the members' area", 0},
		{"unknown member flag", "not a valid entry", 0},
		{"reserved field set", "not a valid entry", 0},
		{"stored as is, raw size differs", "not a valid entry", 0},
		{"raw size 0", "not a valid entry", 0},
		{"name beyond the name table", "not a file name", 0},
		{"name without its NUL", "not a file name", 0},
		{"name with a slash", "not a file name", 0},
		{"names out of order", "out of order", 0},
		{"raw size one more than the frames give", "zstd", 1},
		{"member bytes changed, checksum made right", "zstd", 1},
		{"raw checksum wrong", "checksum of the decompressed log", 1},
	};
	size_t n = sizeof cases / sizeof cases[0];
	for (size_t k = 0; k < n; k++) {
		memcpy(c, buf, size);
		memcpy(&hh, c, sizeof hh);
		memcpy(ee, c + h0.index_offset, sizeof ee);
		e = ENTRY(1);
		switch (k) {
		case 0: HDR->version = 2; break;
		case 1: HDR->entry_size = 32; break;
		case 2: HDR->endian = __builtin_bswap32(LOG_ENDIAN_MARK); break;
		case 3: HDR->index_offset = 8; break;
		case 4: HDR->count = h0.index_size / 64 + 1; break;
		case 5: HDR->file_size = size - 1; HDR->index_size--; break;
		case 6: e->offset = ENTRY(0)->offset + 1; break;
		case 7: ENTRY(0)->offset = 10; break;
		case 8: ENTRY(2)->size += 1; break;
		case 9: e->size = 0; break;
		case 10: e->flags |= 4; break;
		case 11: e->reserved1 = 1; break;
		case 12: e->flags = 0; break;
		case 13: e->raw_size = 0; break;
		case 14: e->name_off = 1u << 20; break;
		case 15: c[h0.index_offset + NMEM * 64 + e->name_off + e->name_len] = 'x'; break;
		case 16: c[h0.index_offset + NMEM * 64 + e->name_off] = '/'; break;
		case 17: c[h0.index_offset + NMEM * 64 + e->name_off] = 'z'; break;
		case 18: e->raw_size += 1; break;
		case 19:
			c[e->offset + e->size / 2] ^= 0x55;
			e->crc = log_crc32c(0, c + e->offset, (size_t)e->size);
			break;
		case 20: e->raw_crc ^= 1; break;
		}
		memcpy(c + h0.index_offset, ee, sizeof ee);
		memcpy(c, &hh, sizeof hh);
		reseal(c);
		struct log_archive *a;
		int r = refused(c, size, &a, err, sizeof err);
		if (!cases[k].member) {
			char name[160];
			snprintf(name, sizeof name, "crafted: %s: refused at open", cases[k].name);
			check(name, r == 1 && strstr(err, cases[k].want), "r %d: %s", r, err);
			if (r == 0)
				log_archive_close(a);
			continue;
		}
		char name[160];
		snprintf(name, sizeof name, "crafted: %s: that member fails, the others read", cases[k].name);
		if (r != 0) {
			check(name, 0, "open failed: %s", err);
			continue;
		}
		struct log_file lf;
		int bad = log_archive_read(a, 1, &lf, err, sizeof err);
		int good = 1;
		for (size_t i = 0; i < NMEM; i += 2) {
			struct log_file g;
			char e2[512];
			if (log_archive_read(a, i, &g, e2, sizeof e2) < 0)
				good = 0;
			else
				log_file_free(&g);
		}
		check(name, bad < 0 && strstr(err, cases[k].want) && one_line(err, "dmg:b-2.iost") && good, "rc %d: %s",
		      bad, err);
		if (bad == 0)
			log_file_free(&lf);
		log_archive_close(a);
	}
	/* a member whose bytes are a valid zstd frame of something that is not a log: the log
	 * reader's one line, with the member's name */
	{
		struct log_archive_writer *w;
		snprintf(path, sizeof path, "%s/notlog.arc", tmpdir);
		unlink(path);
		static const char junk[5000] = "not a log at all";
		if (log_archive_create(path, &w, err, sizeof err) == 0 &&
		    log_archive_add(w, "junk.iost", junk, sizeof junk, 0, err, sizeof err) == 0 &&
		    log_archive_finish(w, err, sizeof err) == 0) {
			struct log_archive *a;
			struct log_file lf;
			int rc = log_archive_open(path, &a, err, sizeof err);
			if (rc == 0) {
				char who[256];
				snprintf(who, sizeof who, "%s:junk.iost", path);
				rc = log_archive_read(a, 0, &lf, err, sizeof err);
				check("a member that is not a log: the reader's line, named ARCHIVE:NAME",
				      rc < 0 && one_line(err, who) && strstr(err, "bad magic"), "rc %d: %s", rc, err);
				log_archive_close(a);
			}
		}
		unlink(path);
	}
#undef ENTRY
#undef HDR
	free(c);
	free(buf);
}

/* 10,000 members, as a 10,000-rank job leaves: written, opened, every member readable. */
static void test_many(void)
{
	char path[128], err[512], name[32];
	struct log_archive_writer *w;
	snprintf(path, sizeof path, "%s/many.arc", tmpdir);
	unlink(path);
	if (log_archive_create(path, &w, err, sizeof err) < 0)
		return;
	int ok = 1;
	for (int i = 0; i < 10000 && ok; i++) {
		snprintf(name, sizeof name, "rank-%05d.iost", i);
		ok = log_archive_add(w, name, mem_logs[i % NMEM], mem_sizes[i % NMEM], 0, err, sizeof err) == 0;
	}
	check("10,000 members added", ok && log_archive_finish(w, err, sizeof err) == 0, "%s", err);
	struct log_archive *a;
	int rc = log_archive_open(path, &a, err, sizeof err);
	check("10,000 members: opens", rc == 0 && log_archive_count(a) == 10000, "rc %d: %s", rc, err);
	if (rc)
		return;
	size_t good = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < 10000; i++) {
		struct log_file lf;
		snprintf(name, sizeof name, "rank-%05zu.iost", i);
		if (strcmp(log_archive_name(a, i), name) || log_archive_read(a, i, &lf, err, sizeof err) < 0)
			continue;
		good++;
		bytes += lf.records[0].counters[LOG_C_BYTES_READ];
		log_file_free(&lf);
	}
	/* members i % 3 == 0, 1, 2 read 10, 20, 30 x 4 KiB: 3334 x 10 + 3333 x 20 + 3333 x 30 */
	check("10,000 members: every one read, exact bytes", good == 10000 && bytes == 4096ull * (33340 + 66660 + 99990),
	      "%zu read, %" PRIu64 " bytes", good, bytes);
	struct stat st;
	stat(path, &st);
	printf("# 10,000 members of %zu..%zu bytes: archive %lld bytes\n", mem_sizes[0], mem_sizes[2],
	       (long long)st.st_size);
	log_archive_close(a);
	unlink(path);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/test_archive.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < NMEM; i++)
		mem_logs[i] = make_final_log(100 + i, "/data/in.dat", 10 * (uint64_t)(i + 1), &mem_sizes[i]);
	test_crc();
	test_roundtrip();
	test_writer_refusals();
	test_truncation();
	test_bit_flips();
	test_garbage();
	test_crafted();
	test_many();
	for (int i = 0; i < NMEM; i++)
		free(mem_logs[i]);
	rmdir(tmpdir);
	return failures ? 1 : 0;
}
