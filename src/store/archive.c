/* SPDX-License-Identifier: MIT */
/*
 * The retention's archive files (archive.h): written by both backends, read back by
 * store_archive_read for `iostrata node --archive`. It does not choose rows or delete them: the
 * backend does that, in the same transaction as the roll-up.
 */
#include "store/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/writer.h"
#include "log/zstd.h"
#include "store/store.h"

void store_archive_head(FILE *f, const char *table, const char *columns)
{
	fprintf(f, "# iostrata archive 1 %s\n%s\n", table, columns);
}

void store_csv_field(FILE *f, const char *v)
{
	if (!v[strcspn(v, ",\"\r\n")]) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

int store_archive_write(const char *dir, const char *table, int64_t first, int64_t last, const char *csv,
			size_t len, char *err, size_t errlen)
{
	char why[256];
	void *z = NULL;
	size_t zn = 0;
	int fd = -1, r = 0;
	/* made when there is something to keep in it */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-r));
		return r;
	}
	if (log_zstd_load(why, sizeof why) < 0) {
		snprintf(err, errlen, "archive: %s", why);
		return -ENOSYS;
	}
	if (!(z = malloc(log_zstd_bound(len))) || !(zn = log_zstd_compress(z, log_zstd_bound(len), csv, len))) {
		snprintf(err, errlen, "archive: compression failed");
		free(z);
		return -ENOMEM;
	}
	char path[8192], tmp[8300];
	snprintf(path, sizeof path, "%s/%s-%lld-%lld.csv.zst", dir, table, (long long)first, (long long)last);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		r = -errno;
	else if ((r = log_write_all(fd, z, zn)) == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(-r));
		unlink(tmp);
		goto err;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		unlink(tmp);
	}
err:
	if (fd >= 0)
		close(fd);
	free(z);
	return r;
}

int store_archive_read(const char *path, char **csv, size_t *len, char *err, size_t errlen)
{
	char *buf;
	size_t n;
	char why[256];
	*csv = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1ll << 32)) {
		snprintf(err, errlen, "%s: not an archive file", path);
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	n = buf ? (size_t)read(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	if (!buf || n != (size_t)st.st_size) {
		free(buf);
		snprintf(err, errlen, "%s: cannot read it", path);
		return -EIO;
	}
	void *out = NULL;
	size_t outlen = 0;
	int r = log_zstd_decompress(buf, n, &out, &outlen, why, sizeof why);
	free(buf);
	if (r != 0 || outlen < 21 || memcmp(out, "# iostrata archive 1 ", 21)) {
		free(out);
		snprintf(err, errlen, "%s: not an iostrata archive (%s)", path, r ? why : "no archive header");
		return -EINVAL;
	}
	*csv = out;
	*len = outlen;
	return 0;
}
