/* SPDX-License-Identifier: MIT */
/*
 * Reading users' logs as root (source.h): the checks before the one reader sees the bytes.
 */
#include "daemon/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "iostrata/format.h"

void dmn_fs_as(uid_t uid, gid_t gid)
{
	if (geteuid() != 0)
		return;
	setfsgid(gid);
	setfsuid(uid);
}

void dmn_fs_as_self(void)
{
	if (geteuid() != 0)
		return;
	setfsuid(0);
	setfsgid(0);
}

int dmn_open_dir(int parent, const char *name, uid_t want_uid, struct stat *st, char *err, size_t errlen)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", name, e == ELOOP || e == ENOTDIR ? "not a directory (a symlink?)" : strerror(e));
		return -e;
	}
	if (fstat(fd, st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", name, strerror(e));
		close(fd);
		return -e;
	}
	if (want_uid != (uid_t)-1 && st->st_uid != want_uid) {
		snprintf(err, errlen, "%s: owned by uid %u, not uid %u: skipped", name, (unsigned)st->st_uid,
			 (unsigned)want_uid);
		close(fd);
		return -EPERM;
	}
	if (want_uid != (uid_t)-1 && (st->st_mode & 022)) {
		snprintf(err, errlen, "%s: writable by others (mode %03o): skipped", name, (unsigned)(st->st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

int dmn_pread(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ESTALE;
		got += (size_t)k;
	}
	return 0;
}

/* The regular file name in dirfd owned by uid, opened without following links. */
static int open_owned(int dirfd, const char *name, uid_t uid, struct stat *st, char *err, size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			snprintf(err, errlen, "%s: a symbolic link, not a log: skipped", name);
		else
			snprintf(err, errlen, "%s: %s", name, strerror(e));
		return -e;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: not a regular file: skipped", name);
		close(fd);
		return -EINVAL;
	}
	if (st->st_uid != uid) {
		snprintf(err, errlen, "%s: owned by uid %u in a directory of uid %u: skipped", name,
			 (unsigned)st->st_uid, (unsigned)uid);
		close(fd);
		return -EPERM;
	}
	return fd;
}

static const struct log_section *find_section(const struct log_header *h, uint32_t kind)
{
	for (unsigned i = 0; i < h->nsections && i < LOG_MAX_SECTIONS; i++)
		if (h->sections[i].kind == kind)
			return &h->sections[i];
	return NULL;
}

int dmn_read_live(int dirfd, const char *name, uid_t uid, const struct dmn_limits *lim, struct log_file *out,
		  struct stat *st, struct dmn_trace_area *ta, char *err, size_t errlen)
{
	struct log_header h;
	unsigned char *buf = NULL;
	int r, fd = open_owned(dirfd, name, uid, st, err, errlen);
	memset(out, 0, sizeof *out);
	if (ta)
		ta->fd = -1;
	if (fd < 0)
		return fd;
	if ((uint64_t)st->st_size < LOG_HEADER_SIZE) {
		snprintf(err, errlen, "%s: %lld bytes, shorter than a log header", name, (long long)st->st_size);
		r = -EINVAL;
		goto out;
	}
	if ((r = dmn_pread(fd, &h, sizeof h, 0)) < 0) {
		snprintf(err, errlen, "%s: reading the header: %s", name, r == -ESTALE ? "cut short" : strerror(-r));
		goto out;
	}
	static const char unset[8];
	if (!memcmp(h.magic, unset, 8)) {
		/* the capture library sets the magic last: a header being made (or a file that never
		 * will be one, which costs nothing to skip quietly) */
		snprintf(err, errlen, "%s: its header is not made yet", name);
		r = -EAGAIN;
		goto out;
	}
	if (memcmp(h.magic, LOG_MAGIC, 8) || h.version != LOG_VERSION || h.header_size != LOG_HEADER_SIZE ||
	    h.record_size != sizeof(struct log_record) || h.endian != LOG_ENDIAN_MARK || h.nsections > LOG_MAX_SECTIONS) {
		snprintf(err, errlen, "%s: not an iostrata log of version %d", name, LOG_VERSION);
		r = -EINVAL;
		goto out;
	}
	const struct log_section *ss = find_section(&h, LOG_SEC_STRINGS), *rs = find_section(&h, LOG_SEC_RECORDS);
	uint64_t nrec = h.nrecords, sused = h.string_used, fsize = (uint64_t)st->st_size;
	if (!ss || !rs) {
		snprintf(err, errlen, "%s: no %s section", name, ss ? "records" : "strings");
		r = -EINVAL;
		goto out;
	}
	if (nrec > h.max_records)
		nrec = h.max_records;
	if (nrec > rs->count)
		nrec = rs->count;
	if (nrec > lim->max_records || sused > lim->max_strings || sused > ss->size || sused < 1) {
		snprintf(err, errlen, "%s: %llu records and %llu string bytes in use, beyond the limits (%u, %llu)", name,
			 (unsigned long long)nrec, (unsigned long long)sused, lim->max_records,
			 (unsigned long long)lim->max_strings);
		r = -EFBIG;
		goto out;
	}
	uint64_t rbytes = nrec * sizeof(struct log_record);
	if (ss->offset > fsize || sused > fsize - ss->offset || rs->offset > fsize || rbytes > fsize - rs->offset) {
		snprintf(err, errlen, "%s: its sections lie past its end (%llu bytes)", name, (unsigned long long)fsize);
		r = -EINVAL;
		goto out;
	}
	/* header | strings in use | records in use, and a header that says just that */
	uint64_t soff = LOG_HEADER_SIZE, roff = soff + ((sused + 63) & ~63ull), len = roff + rbytes;
	buf = calloc(1, len);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", name);
		r = -ENOMEM;
		goto out;
	}
	if ((r = dmn_pread(fd, buf + soff, sused, ss->offset)) < 0 ||
	    (r = dmn_pread(fd, buf + roff, rbytes, rs->offset)) < 0) {
		snprintf(err, errlen, "%s: %s", name, r == -ESTALE ? "cut short while read" : strerror(-r));
		goto out;
	}
	/* a traced log's trace area, as the file's header says (its clock, its blocks) */
	const struct log_section *ts = find_section(&h, LOG_SEC_TRACE);
	int traced = ta && ts && h.trace_blocks && h.trace_block_size == LOG_TRACE_BLOCK && ts->offset < fsize;
	if (traced) {
		ta->h = h;
		ta->off = ts->offset;
		ta->count = ts->count;
		ta->fsize = fsize;
	}
	h.nsections = 2;
	memset(h.sections, 0, sizeof h.sections);
	h.sections[0] = (struct log_section){LOG_SEC_STRINGS, 0, soff, sused, sused};
	h.sections[1] = (struct log_section){LOG_SEC_RECORDS, 0, roff, rbytes, nrec};
	h.nrecords = (uint32_t)nrec;
	h.string_used = (uint32_t)sused;
	memcpy(buf, &h, sizeof h);
	r = log_file_parse(buf, len, name, out, err, errlen);
	if (r == 0 && traced) {
		ta->fd = fd;
		fd = -1;
	}
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

int dmn_read_final(const char *path, uid_t uid, gid_t gid, const struct dmn_limits *lim, struct log_file *out,
		   char *err, size_t errlen)
{
	struct stat st;
	unsigned char *buf = NULL;
	int r;
	memset(out, 0, sizeof *out);
	const char *slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || !slash[1]) {
		snprintf(err, errlen, "%s: not an absolute file path", path);
		return -EINVAL;
	}
	char dir[4096];
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
	dmn_fs_as(uid, gid);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -errno : open_owned(dfd, slash + 1, uid, &st, err, errlen);
	dmn_fs_as_self();
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		if (fd == -ENOENT || dfd < 0)
			snprintf(err, errlen, "%s: %s", path, strerror(-fd));
		return fd;
	}
	if ((uint64_t)st.st_size > lim->max_final) {
		snprintf(err, errlen, "%s: %lld bytes, more than the %llu a final log may have here", path,
			 (long long)st.st_size, (unsigned long long)lim->max_final);
		r = -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if ((r = dmn_pread(fd, buf, (size_t)st.st_size, 0)) < 0) {
		snprintf(err, errlen, "%s: %s", path, r == -ESTALE ? "cut short while read" : strerror(-r));
		goto out;
	}
	r = log_file_parse(buf, (size_t)st.st_size, path, out, err, errlen);
out:
	free(buf);
	close(fd);
	return r;
}
